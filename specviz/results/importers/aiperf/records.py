"""AIPerf's per-request records, read by DuckDB: one run and a row per request.

``profile_export.jsonl``
    One record per request: ``{"metadata": {session_num, x_request_id, conversation_id, turn_index,
    request_start_ns, request_ack_ns, request_end_ns, worker_id, record_processor_id,
    benchmark_phase ("warmup" or "profiling"), was_cancelled, …}, "metrics": {tag: {"value", "unit"}},
    "error": null or {code, type, message}}``; a failed request has an ``error`` and few metrics.
    With per-request speculative-decoding stats from the server (vLLM's
    ``--per-request-spec-decode-metrics``), ``metrics`` holds ``spec_decode_acceptance_length``,
    ``spec_decode_draft_acceptance_rate`` (percent), ``spec_decode_steps``,
    ``spec_decode_accepted_draft_tokens`` and ``spec_decode_draft_tokens``, and at ``--export-level
    records`` the line carries the engine-neutral record itself, ``"spec_decode_acceptance": {engine,
    mean_acceptance_length, draft_acceptance_rate (a fraction), acceptance_histogram ({"j": verify
    steps that accepted j draft tokens}, may be null), num_accepted_draft_tokens, num_draft_tokens,
    num_spec_steps, num_spec_tokens (γ, may be null), completion_tokens, per_step_accepted,
    per_step_drafted}`` (null where the request ran no verify step). Each request's row takes its
    own acceptance from the record, else from the metrics; its histogram and γ go in the row's
    ``extra`` (the per-step arrays, which grow with the output, are not kept). A request whose rate
    is outside [0, 1] or whose length is outside [1, γ + 1] makes the file an error naming the
    line and the field. The file is claimed from its first line and read by DuckDB's
    ``read_json_objects`` (a file of 1M requests is 1.6 GB of JSON, which Python's ``json`` would
    hold as about 15 GB of objects); a text that is no number is NaN, numeric text is read. The
    run's figures are pooled over its requests (1 + Σ accepted / Σ steps, Σ accepted / Σ drafted),
    and per position from their pooled histogram: position i is accepted by the steps that
    accepted more than i tokens.


Sources: as in :mod:`specviz.results.importers.aiperf`.
"""

from __future__ import annotations

import math
import tempfile
from dataclasses import dataclass

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa

from specviz import settings
from specviz.errors import Notice

from ..base import IngestError, Parsed, RunBuilder, duckdb_read_error
from ..source import Source
from .runs import MOST_POSITIONS, MS, RATE, apply_cell, cell_settings, histogram_figures

# Per request (charged a line of the file before DuckDB reads it): the columns taken out of DuckDB
# as Arrow (33 of 8 B), the numpy columns built from them and the DataFrame (about 200 B), the
# store's copy (about 100 B); DuckDB's own reading is bounded by its memory limit. Measured at 1M
# lines of 1.6 KB: peak RSS 0.82-0.92 GB in all (0.17 GB before the import).
_REQUEST_BYTES = 512
# Each request's acceptance column: the field of its ``spec_decode_acceptance`` record, and the
# per-request metric of the same figure with the units it may be in (AIPerf's rate is in percent).
_REQUEST_ACCEPTANCE = {
    "drafts": ("num_spec_steps", "spec_decode_steps", None),
    "draft_tokens": ("num_draft_tokens", "spec_decode_draft_tokens", None),
    "accepted_tokens": ("num_accepted_draft_tokens", "spec_decode_accepted_draft_tokens", None),
    "acceptance_rate": ("draft_acceptance_rate", "spec_decode_draft_acceptance_rate", RATE),
    "acceptance_length": ("mean_acceptance_length", "spec_decode_acceptance_length", None)}
_DUCKDB_BYTES = 256 << 20  # the least memory DuckDB is given to read a per-request file
# A request's histogram that is one of counts: each key a draft position up to MOST_POSITIONS (as
# text: DuckDB writes the object back compact), each count a number ≥ 0; at least one.
_COUNT = r'"(?:[0-9]|[1-5][0-9]|6[0-4])":[0-9][0-9.eE+]*'
_COUNTS = f"coalesce(regexp_full_match(histogram, '\\{{{_COUNT}(?:,{_COUNT})*\\}}'), false)"

_PATHS: list[str] = []  # each JSON path a record's values are read from, all at once (one parse a record)


def _at(path: str) -> str:
    """SQL of the text at a JSON path of a record, from the list read at once (:data:`_PATHS`)."""
    if path not in _PATHS:
        _PATHS.append(path)
    return f"v[{_PATHS.index(path) + 1}]"


def _number(path: str, scales: dict[str, float] | None = None, unit: str = "") -> str:
    """SQL of the number at a JSON path of a record (numeric text too), NaN where it is missing or
    no number; with ``scales``, times the scale of the unit at the path ``unit`` (NaN for another)."""
    value = f"coalesce(TRY_CAST({_at(path)} AS DOUBLE), 'NaN')"
    if scales is None:
        return value
    cases = " ".join(f"WHEN '{name}' THEN {value} * {scale!r}" for name, scale in scales.items())
    return f"CASE {_at(unit)} {cases} ELSE 'NaN'::DOUBLE END"


def _metric(tag: str, scales: dict[str, float] | None = None) -> str:
    """SQL of a record's ``metrics[tag].value`` (a time converted by its own unit)."""
    return _number(f"$.metrics.{tag}.value", scales, f"$.metrics.{tag}.unit")


_GAP_QUANTILES = {50: 0.5, 90: 0.9, 99: 0.99}
_GAP_LIST = f"TRY_CAST({_at('$.metrics.inter_chunk_latency.value')} AS DOUBLE[])"
# Milliseconds per unit of the list; NULL for a unit that is no time, which makes the sum NaN.
_GAP_SCALE = (f"CASE {_at('$.metrics.inter_chunk_latency.unit')} "
              + " ".join(f"WHEN '{name}' THEN {scale!r}" for name, scale in MS.items()) + " ELSE 'NaN'::DOUBLE END")


def _gaps(aggregate: str) -> str:
    """SQL of ``aggregate`` (``list_sum``, ``len``) over a record's ``inter_chunk_latency`` list, the
    gaps in ms (a sum converted by the list's unit); NaN where the record has no list of numbers, or
    one with an element that is no gap (text, null, not finite, below 0: ``list_sum`` had skipped the
    nulls that ``len`` counted, and summed a negative gap in)."""
    no_gap = f"len(list_filter({_GAP_LIST}, lambda x: x IS NULL OR NOT isfinite(x) OR x < 0)) = 0"
    value = f"coalesce(CASE WHEN {no_gap} THEN {aggregate}({_GAP_LIST})::DOUBLE END, 'NaN')"
    if aggregate == "len":
        return value
    return f"{value} * {_GAP_SCALE}"


# Each record's values: its times (its inter_token_latency is (latency − TTFT) / (output tokens − 1),
# vLLM's TPOT; the sum and count of its inter_chunk_latency, the gaps between streamed chunks, give
# vLLM's ITL), its tokens, its own acceptance (the record's, then the metrics'), its γ, start and end.
_RECORD_COLUMNS = {
    "ttft_ms": _metric("time_to_first_token", MS), "tpot_ms": _metric("inter_token_latency", MS),
    "gap_sum_ms": _gaps("list_sum"), "gaps": _gaps("len"),
    "e2el_ms": _metric("request_latency", MS), "input_tokens": _metric("input_sequence_length"),
    "output_tokens": _metric("output_sequence_length"),
    **{f"own_{column}": _number(f"$.spec_decode_acceptance.{field_name}")
       for column, (field_name, _, _) in _REQUEST_ACCEPTANCE.items()},
    **{f"reported_{column}": _metric(tag, units) for column, (_, tag, units) in _REQUEST_ACCEPTANCE.items()},
    "gamma": _number("$.spec_decode_acceptance.num_spec_tokens"),
    "start_ns": _number("$.metadata.request_start_ns"), "end_ns": _number("$.metadata.request_end_ns")}
_HISTOGRAM = _at("$.spec_decode_acceptance.acceptance_histogram")  # its JSON text
# The counts of a histogram's first keys, read with the record's other values (no second pass over
# the histograms where no γ reaches past them).
_READ_KEYS = 16
_HISTOGRAM_KEYS = ", ".join(f'TRY_CAST({_at(f"$.spec_decode_acceptance.acceptance_histogram.{j}")} AS DOUBLE) AS h{j}'
                            for j in range(_READ_KEYS))
# What a record is (as :func:`specviz.results.importers.aiperf._is_record` says it): the types of the record, its metadata, error and
# metrics, and of three metadata keys (NULL where a key is missing).
_RECORD_KINDS = f"""
    coalesce(t[1] = 'OBJECT' AND t[2] = 'OBJECT' AND t[4] IS NOT NULL
             AND (t[5] IS NOT NULL OR t[6] IS NOT NULL OR t[7] IS NOT NULL), false) AS record,
    coalesce({_at("$.metadata.benchmark_phase")} = 'warmup', false) AS warmup,
    coalesce(t[3] <> 'NULL', false) OR coalesce(t[4] <> 'OBJECT', true) AS failed"""
_RECORD_READ = """json_extract_string(json, ?) AS v,
    json_type(json, ['$', '$.metadata', '$.error', '$.metrics', '$.metadata.benchmark_phase',
                     '$.metadata.request_start_ns', '$.metadata.session_num']) AS t"""


@dataclass
class _Records:
    """What :func:`_read_records` read of a per-request file."""

    lines: int  # documents read
    warmup: int
    failed: int  # measured requests that failed
    first_stray: int | None  # the line of the first document that is no record
    kept: dict[str, np.ndarray]  # the measured requests that succeeded, by column, in the file's order
    extra: pa.ChunkedArray | None  # their histograms and γ as JSON text (null where none), if any has one
    pooled: dict[str, float]  # those histograms summed
    gap_percentiles: dict[int, float]  # p50, p90 and p99 of every gap of theirs in ms (none without gaps)


def _read_records(source: Source) -> _Records:
    """Every record of a per-request file, read by DuckDB from the source's :attr:`~Source.reader_path` (never
    decoded by Python, nor held whole; each record parsed twice, for its values at every path of
    :data:`_PATHS` at once and for the types of its parts), kept in a table of DuckDB's until the
    successful measured requests' columns (:data:`_RECORD_COLUMNS`) are taken out as Arrow (their
    ``extra`` never becomes a Python string each), once their memory is charged for the records
    DuckDB counted. DuckDB may take three quarters of
    ``SPECVIZ_IMPORT_MEMORY_BYTES`` (at least :data:`_DUCKDB_BYTES`, its working memory) and spills
    past it to the temporary folder: at 1M lines its table of the records is some 600 MB, and with
    half of the default 1 GB it spilled (the read took 8.5 s instead of 4.0 s).

    Raises
    ------
    IngestError
        ``ingest.json_malformed`` where DuckDB cannot read the JSON, ``ingest.duckdb_memory`` where
        it runs out of its memory, ``ingest.record_too_large`` for a line longer than DuckDB's
        buffer, an eighth of its memory (some 94 MB at the default limit; DuckDB's own, 16 MiB, had
        called a line of 3.5M chunk gaps, 21 MB, malformed).
    """
    memory = max(settings.get("SPECVIZ_IMPORT_MEMORY_BYTES") * 3 // 4, _DUCKDB_BYTES)
    file = f"read_json_objects('{source.reader_path}', format = 'auto', maximum_object_size = {memory // 8})"
    with duckdb.connect(config={"memory_limit": f"{memory}B", "temp_directory": tempfile.gettempdir()}) as con:
        try:
            con.execute("SET enable_progress_bar = false")
            con.execute(f"""
                CREATE TEMP TABLE read AS
                SELECT {_RECORD_KINDS}, {", ".join(f"{sql} AS {name}" for name, sql in _RECORD_COLUMNS.items())},
                       {_HISTOGRAM} AS histogram, {_HISTOGRAM_KEYS}, {_GAP_LIST} AS gap_list, {_GAP_SCALE} AS gap_scale
                FROM (SELECT {_RECORD_READ} FROM {file})""", [_PATHS])
            # Read in parallel and stored in the file's order (DuckDB keeps insertion order): a
            # document's line is its row's place.
            con.execute("CREATE TEMP VIEW records AS SELECT rowid + 1 AS line, * FROM read")
            lines, warmup, failed, first_stray = con.execute("""
                SELECT count(*), count(*) FILTER (warmup), count(*) FILTER (failed AND NOT warmup),
                       min(line) FILTER (NOT record)
                FROM records""").fetchall()[0]
            source.charge(_REQUEST_BYTES * lines)  # before any is taken out of DuckDB
            # The keys a histogram may have: up to the largest γ where every one has its γ (a key past
            # its γ is no count of accepted drafts), else up to the most positions.
            counted = f"FROM records WHERE record AND NOT warmup AND NOT failed AND {_COUNTS}"
            gamma = con.execute(f"SELECT max(gamma) FILTER (isfinite(gamma)), bool_and(isfinite(gamma)) {counted}"
                                ).fetchall()[0]
            most = int(min(gamma[0], MOST_POSITIONS)) if gamma[1] else MOST_POSITIONS
            if most < _READ_KEYS:
                sums = con.execute(f"SELECT {', '.join(f'sum(h{j})' for j in range(most + 1))} {counted}").fetchall()[0]
            else:
                keys = ", ".join(f"sum(TRY_CAST(h[{j + 1}] AS DOUBLE))" for j in range(most + 1))
                sums = con.execute(f"SELECT {keys} FROM (SELECT json_extract_string(histogram, ?) AS h {counted})",
                                   [[f'$."{j}"' for j in range(most + 1)]]).fetchall()[0]
            pooled = {str(j): total for j, total in enumerate(sums) if total is not None}
            # Every gap of the requests whose mean gap is counted, pooled, as AIPerf's summary takes
            # them (linear percentiles, numpy's and DuckDB's quantile_cont alike); DuckDB holds them,
            # spilling past its memory, not Python.
            gap_percentiles = con.execute(f"""
                SELECT quantile_cont(gap * gap_scale, {list(_GAP_QUANTILES.values())})
                FROM (SELECT unnest(gap_list) AS gap, gap_scale FROM records
                      WHERE record AND NOT warmup AND NOT failed AND isfinite(gap_sum_ms) AND gaps > 0)""").fetchall()[0][0]
            kept = con.sql(f"""
                SELECT line, {", ".join(_RECORD_COLUMNS)}, CASE WHEN {_COUNTS} THEN
                    CASE WHEN gamma >= 0 AND isfinite(gamma) AND gamma = round(gamma)
                         THEN json_object('acceptance_histogram', json(histogram), 'num_spec_tokens', gamma)
                         ELSE json_object('acceptance_histogram', json(histogram)) END::VARCHAR END AS extra
                FROM records WHERE record AND NOT warmup AND NOT failed""").to_arrow_table()  # in insertion order
        except duckdb.Error as exc:
            raise duckdb_read_error(source.name, exc, memory) from None
    columns = {name: kept.column(name).to_numpy() for name in ("line", *_RECORD_COLUMNS)}
    extra = kept.column("extra")
    return _Records(lines, warmup, failed, first_stray, columns, extra if extra.null_count < len(extra) else None,
                    pooled, dict(zip(_GAP_QUANTILES, gap_percentiles or ())))


def _acceptance(source: Source, read: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Each kept request's own acceptance: its ``spec_decode_acceptance`` record's where it has one,
    else its ``spec_decode_*`` metrics' (the rate from percent).

    Raises
    ------
    IngestError
        ``ingest.request_out_of_range`` naming the first request (its line) whose acceptance rate
        is outside [0, 1] or whose acceptance length is below 1, ``ingest.request_acceptance_length``
        the first whose length is above γ + 1.
    """
    columns = {column: np.where(np.isnan(read[f"own_{column}"]), read[f"reported_{column}"], read[f"own_{column}"])
               for column in _REQUEST_ACCEPTANCE}
    gamma = read["gamma"].copy()
    with np.errstate(over="ignore", invalid="ignore"):
        gamma[~(np.isfinite(gamma) & (gamma >= 0) & (gamma == np.round(gamma)))] = np.nan  # a draft length: whole
        rate, length = columns["acceptance_rate"], columns["acceptance_length"]
        checks = [("acceptance_rate", ~np.isnan(rate) & ~((rate >= 0) & (rate <= 1)), "ingest.request_out_of_range",
                   {"low": "0", "high": "1"}),
                  ("acceptance_length", ~np.isnan(length) & ~((length >= 1) & np.isfinite(length)),
                   "ingest.request_out_of_range",
                   {"low": "1", "high": "γ + 1"}),
                  ("acceptance_length", length > gamma + 1, "ingest.request_acceptance_length", None)]
    for column, bad, key, bounds in checks:
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            field_name, tag, _ = _REQUEST_ACCEPTANCE[column]
            own = not np.isnan(read[f"own_{column}"][i])
            raise IngestError(key, source.name, record=int(read["line"][i]),
                              field=f"spec_decode_acceptance.{field_name}" if own else f"metrics.{tag}.value",
                              value=f"{columns[column][i]:g}",
                              **(bounds or {"gamma": f"{gamma[i]:g}", "most": f"{gamma[i] + 1:g}"}))
    for column in ("drafts", "draft_tokens", "accepted_tokens"):
        columns[column][~(np.isfinite(columns[column]) & (columns[column] >= 0))] = np.nan
    columns["gamma"] = gamma
    return columns


def _pooled(numerator: np.ndarray, denominator: np.ndarray) -> float | None:
    """Σ numerator / Σ denominator over the requests that have both, or None without a denominator."""
    both = ~(np.isnan(numerator) | np.isnan(denominator))
    total = denominator[both].sum()
    return float(numerator[both].sum() / total) if total > 0 else None


def parse_records(source: Source) -> Parsed:
    """One run of the profiling records: latency statistics computed as AIPerf computes them
    (numpy's linear percentiles), throughputs over the span from the first request's start to the
    last response (AIPerf's ``benchmark_duration``), acceptance pooled over requests (per position
    from their pooled histograms); the successful requests as rows, with their own acceptance. The
    file is read by DuckDB (:func:`_read_records`)."""
    source.charge_runs(1)
    read = _read_records(source)
    if read.first_stray is not None:
        raise IngestError("ingest.aiperf_record", source.name, record=read.first_stray)
    kept, failed = read.kept, read.failed
    n = len(kept["line"])
    if not n and not failed:
        raise IngestError("ingest.aiperf_warmup_only", source.name)
    with np.errstate(invalid="ignore", divide="ignore"):
        columns = {name: np.where(kept[name] >= 0, kept[name], np.nan)
                   for name in ("ttft_ms", "tpot_ms", "e2el_ms", "input_tokens", "output_tokens")}
        gap_sum, gaps = (np.where(kept[name] >= 0, kept[name], np.nan) for name in ("gap_sum_ms", "gaps"))
        gap_sum[~np.isfinite(gap_sum) | ~(gaps > 0)] = np.nan
        columns["itl_ms"] = gap_sum / gaps  # the mean of the request's own gaps
    for column in columns.values():
        column[~np.isfinite(column)] = np.nan
    acceptance = _acceptance(source, kept)
    gammas = acceptance.pop("gamma")
    warnings: list[Notice] = []
    run = RunBuilder(warnings)
    # Sums past the largest float are inf (and inf / inf NaN): the builder refuses both.
    with np.errstate(over="ignore", invalid="ignore"):
        for name, short in (("ttft_ms", "ttft"), ("tpot_ms", "tpot"), ("e2el_ms", "e2el")):
            values = columns[name][~np.isnan(columns[name])]
            if values.size:
                run.set(f"mean_{short}_ms", float(values.mean()))
                for p, value in zip((50, 90, 99), np.percentile(values, [50, 90, 99])):
                    run.set(f"p{p}_{short}_ms", float(value))
        # The mean gap over every request's gaps, as vLLM's mean ITL, and their percentiles.
        counted = ~np.isnan(gap_sum)
        if counted.any():
            run.set("mean_itl_ms", float(gap_sum[counted].sum() / gaps[counted].sum()),
                    source="inter_chunk_latency: Σ gaps / their count")
        for p, value in read.gap_percentiles.items():
            run.set(f"p{p}_itl_ms", value, source="inter_chunk_latency: every gap")
        run.set("num_requests", n)
        run.set("failed_requests", failed)
        starts, ends = kept["start_ns"], kept["end_ns"]
        first = starts[np.isfinite(starts)].min(initial=math.inf)
        span = ends[np.isfinite(ends)].max(initial=-math.inf) - first
        if 0 < span < math.inf:
            # The run's first request (to 256 ns: a double), which the summary of the same run gives too
            # (min_request_timestamp, before AIPerf 0.10): how the two files are one run in the store.
            run.keep("first_request_start_ns", int(first))
            seconds = span / 1e9
            run.set("duration_s", seconds)
            run.set("request_throughput", n / seconds)
            if not np.isnan(columns["output_tokens"]).all():
                run.set("output_throughput", float(np.nansum(columns["output_tokens"])) / seconds)
        accepted = acceptance["accepted_tokens"]
        mean_accepted = _pooled(accepted, acceptance["drafts"])  # accepted drafts per verify step; +1 for the bonus
        run.set("acceptance_length", None if mean_accepted is None else 1 + mean_accepted,
                source="accepted draft tokens / verify steps")
        run.set("acceptance_rate", _pooled(accepted, acceptance["draft_tokens"]),
                source="accepted draft tokens / draft tokens")
    present = gammas[~np.isnan(gammas)]  # _agreed's answer, without a Python loop over 1M requests
    gamma = float(present[0]) if present.size and (present == present[0]).all() else None
    positions, zero = histogram_figures(read.pooled, gamma)
    run.set("zero_accept_rate", zero, source="spec_decode_acceptance.acceptance_histogram")
    run.set("per_position_acceptance", positions, source="spec_decode_acceptance.acceptance_histogram")
    run.set("num_speculative_tokens", gamma, source="spec_decode_acceptance.num_spec_tokens")
    run.keep("records", read.lines)
    run.keep("warmup_records", read.warmup)
    if read.pooled:
        run.keep("pooled_spec_decode_acceptance_histogram", read.pooled)
    apply_cell(run, cell_settings(source.name))
    measured = {name: column for name, column in acceptance.items() if not np.isnan(column).all()}
    requests = pd.DataFrame({"run_index": np.zeros(n, dtype=np.int64), **columns, **measured,
                             **({} if read.extra is None else {"extra": pd.arrays.ArrowExtensionArray(read.extra)})})
    return Parsed("aiperf", [run.build()], requests, warnings)
