"""``inference-perf``: kubernetes-sigs/inference-perf's reports (0.5).

``stage_N_lifecycle_metrics.json`` and ``summary_lifecycle_metrics.json``
    A run writes one for each stage of its load (each stage a request rate held for a duration)
    and one over all of them, each an object: ``benchmark_time_seconds``; ``load_summary``
    (``count``, ``requested_rate`` and ``achieved_rate`` in requests/s, ``send_duration``; the
    summary has no rate; a concurrent load's stage has ``concurrency``, and its ``requested_rate``
    is its request count, not a rate: ``main.py``); ``successes`` with ``count``, ``latency.{request_latency,
    time_to_first_token, time_per_output_token, inter_token_latency,
    normalized_time_per_output_token}`` each ``{mean, min, max, median, p90, …}`` **in seconds**,
    and ``throughput.{output_tokens_per_sec, total_tokens_per_sec, requests_per_sec, …}``; and
    ``failures`` with ``count``. Each stage file is a run at its requested rate (or concurrency); the files of one run
    folder share its name as their label, so the explorer draws the stages as one line over rate.
    The summary is a run of its own, labelled as all stages, with no load.
``per_request_lifecycle_metrics.json``
    A JSON array, a request each: ``start_time`` and ``end_time`` (seconds on the client's clock),
    ``request`` and ``response`` (the bodies as text), ``info`` (``input_tokens``, or where it is
    missing or null ``request_metrics.text.input_tokens``; the response's
    ``output_tokens`` and ``output_token_times`` under ``response_metrics``, ``response_info``
    before it; ``lora_adapter``, ``labels``) and ``error`` (``{error_type, error_msg}`` or null).
    Each request is a row: TTFT is the first token's time less the start, TPOT the first to the
    last token over ``output_tokens - 1``, ITL the mean gap between token times, E2E latency the
    end less the start, all in ms, as inference-perf's ``summarize_requests`` computes them (TTFT,
    TPOT and ITL only for a streamed request of more than one token time); a failed request keeps
    its error in the row's ``extra``. The file is **one run of its own**, labelled as the folder's
    summary is (all stages), its figures computed from its successful requests as inference-perf
    computes the summary's (numpy's linear percentiles; ITL over every gap, not over each
    request's mean). It is not split into the stages' runs: no request records its stage (the
    writer drops ``stage_id``), the stage reports record no times to match the requests' against,
    and a file is read on its own, without the stage files beside it. In the store, it and the
    summary, which inference-perf computes from the same requests, are one run: the summary after
    it is not stored, and it replaces a summary stored before it
    (:func:`specviz.results.store.repeats._same_requests`). So is the report of a run's only stage,
    of the same requests too: the run is the per-request report's, with the stage's rate (and
    concurrency) and label, whichever file came first; without the per-request report, the stage's.

    The file is read by DuckDB (:attr:`~Source.reader_path`), never decoded by Python's json
    (a run of 1M requests writes about 1.2 GB): a file whose head shows the array and the first
    record's ``start_time``, ``end_time`` and ``request`` keys, in the order inference-perf writes
    them, is claimed from its head alone (:func:`claims`); another array of request records is
    decoded by the registry to tell its format, then read the same way. A field that holds a JSON
    value of another kind than inference-perf writes there (an object for a time, a string for
    ``info``, a number for the token times) is the file's error, naming the record and the field;
    so is a request's error, adapter or labels longer than ``SPECVIZ_STORED_EXTRA_BYTES``, which
    would be stored in its row. Numbers written as text are read as DuckDB casts them.
``summary_prometheus_metrics.json`` and ``stage_N_prometheus_metrics.json``
    The model server's own view of the run, from Prometheus (``summarize_prometheus_metrics``):
    the lifecycle report's shape with ``benchmark_time_seconds`` 0, ``load_summary`` and
    ``failures`` empty, and ``successes`` of ``count``, ``rate`` (requests/s), ``prompt_len`` and
    ``output_len`` (``mean`` tokens, ``rate`` tokens/s), ``request_latency``,
    ``time_to_first_token``, ``time_per_output_token`` and ``inter_token_latency`` as ``{mean,
    median, p90, p99}`` in seconds, and the server's other figures (``kv_cache_usage_percentage``,
    ``request_queue_time``, ``num_preemptions_total``, ``prefix_cache_hit_percent``, …), which are
    kept in ``extra``. Each is a run of its own, labelled as the server's (``folder · Prometheus``),
    so that the server's figures are never drawn as the client's.

Sources: kubernetes-sigs/inference-perf v0.5.0 (e250731c): ``inference_perf/reportgen/base.py``
(``summarize_requests``, ``summarize_prometheus_metrics``, ``generate_prometheus_metrics_report``,
the per-request report), ``inference_perf/apis/base.py``; the per-request shape of 2026
(``info.request_metrics``, ``info.response_metrics``) at 7de5ef2e; the report-validation corpus of
0.5.0 (``tests/reportgen/validation/corpus/full-runs/``). The benchmark report inference-perf writes
of each stage (``*.partial.stage_N.yaml``, llm-d's standard) is :mod:`~specviz.results.importers.benchmark_report`'s
to read; where its stage's lifecycle report is stored too, that run takes the p99s only the
benchmark report gives (:func:`specviz.results.store.repeats._given_to_lifecycle`).
"""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import PurePath
from typing import Any

import duckdb
import numpy as np
import pandas as pd

from specviz import settings
from specviz.errors import Notice

from .base import (STATISTIC_PREFIXES, TOKENS_PER_SEC_COLUMNS, Format, IngestError, Parsed, RunBuilder, dig,
                   duckdb_read_error, number, request_extra)
from .source import Source

__all__ = ["FORMAT"]

_LATENCIES = {"request_latency": "e2el", "time_to_first_token": "ttft", "time_per_output_token": "tpot",
              "inter_token_latency": "itl"}
_STAGE = re.compile(r"stage_(\d+)_(?:lifecycle|prometheus)_metrics\.json")
# The keys every request record has; a record without ``error`` (which inference-perf always writes,
# null when the request succeeded) succeeded, as DuckDB's typed read cannot tell a missing key from a null.
_REQUEST_KEYS = frozenset({"start_time", "end_time", "info"})
# Per request: the float columns, the DataFrame and the store's copy (as aiperf's records, measured there).
_REQUEST_BYTES = 256
# Per byte of a request's error, adapter and labels as JSON text: the text, its decoded objects and
# the row's extra written from them.
_EXTRA_BYTES_PER_BYTE = 4
_DUCKDB_BYTES = 256 << 20  # the least memory DuckDB is given to read a per-request file
# inference-perf's per-request report as it writes it (``json.dumps(contents, indent=2)``, or without
# the indent): an array whose first record starts with these keys, in this order.
_PER_REQUEST_HEAD = re.compile(r'\s*\[\s*\{\s*"start_time"\s*:\s*[-+.\w]+\s*,\s*"end_time"\s*:\s*[-+.\w]+\s*,'
                               r'\s*"request"\s*:')


def _is_report(doc: Any) -> bool:
    return isinstance(doc, dict) and {"load_summary", "successes"} <= doc.keys()


def _is_requests(doc: Any) -> bool:
    return isinstance(doc, list) and bool(doc) and isinstance(doc[0], dict) and {*_REQUEST_KEYS, "error"} <= doc[0].keys()


def is_validation(source: Source) -> bool:
    """Whether a file is inference-perf's ``validation.json``, its findings on its own reports, which
    hold no result: ``{"global": {"warnings", "errors"}, "reports": {file name: {"warnings",
    "errors"}}}`` (``ValidationReport`` and ``validate_reports`` in
    ``inference_perf/reportgen/validation.py``, written beside the reports by ``generate_reports``;
    kubernetes-sigs/inference-perf pull request 705, 679cec6f, 2026-08)."""
    docs = source.documents
    return (len(docs) == 1 and isinstance(docs[0], dict) and docs[0].keys() == {"global", "reports"}
            and isinstance(docs[0]["global"], dict) and {"warnings", "errors"} <= docs[0]["global"].keys())


def claims(source: Source) -> bool:
    """Whether the head alone shows inference-perf's per-request report (:data:`_PER_REQUEST_HEAD`):
    the registry then takes the file for inference-perf's without decoding it whole, and
    :func:`_read_requests` reads it with DuckDB."""
    return _PER_REQUEST_HEAD.match(source.head) is not None


def sniff(source: Source) -> float:
    """0.95 for one object with ``load_summary`` and ``successes``, or an array of request records."""
    docs = source.documents
    return 0.95 if len(docs) == 1 and (_is_report(docs[0]) or _is_requests(docs[0])) else 0.0


def _label(path: PurePath, stage: re.Match | None, server: bool) -> str:
    """The folder's name (the run's), ``· Prometheus`` for the server's figures, ``· all stages``
    for a file over all of them."""
    parts = [path.parent.name] if path.parent.name else []
    parts += ["Prometheus"] if server else []
    parts += [] if stage else ["all stages"]
    return " · ".join(parts)


def _lifecycle(doc: dict[str, Any], run: RunBuilder, stage: re.Match | None) -> None:
    load = dig(doc, "load_summary")
    successes = dig(doc, "successes")
    if load.get("concurrency") is not None:
        # A concurrent load's stage: its requested_rate is the stage's request count, all sent in
        # one second to fill the workers (inference_perf/main.py), not a rate.
        run.set("concurrency", load["concurrency"], source="load_summary.concurrency")
        run.keep("requested_rate", load.get("requested_rate"))
    else:
        run.set("request_rate", load.get("requested_rate"), source="load_summary.requested_rate")
    run.set("duration_s", doc.get("benchmark_time_seconds"), source="benchmark_time_seconds")
    run.set("num_requests", successes.get("count"), source="successes.count")
    run.set("failed_requests", dig(doc, "failures").get("count"), source="failures.count")
    for name, short in _LATENCIES.items():
        for statistic, value in dig(successes, "latency", name).items():
            if statistic in STATISTIC_PREFIXES:
                run.set(f"{STATISTIC_PREFIXES[statistic]}_{short}_ms", value, scale=1000.0,
                        source=f"successes.latency.{name}.{statistic}")
    for name, column in TOKENS_PER_SEC_COLUMNS.items():
        run.set(column, dig(successes, "throughput").get(name), source=f"successes.throughput.{name}")
    run.keep("stage", int(stage[1]) if stage else "all")
    run.keep("achieved_rate", load.get("achieved_rate"))
    for key in ("prompt_tokens", "output_tokens", "token_count_mismatches"):
        if key in successes:
            run.keep(key, successes[key])


def _prometheus(doc: dict[str, Any], run: RunBuilder, stage: re.Match | None) -> None:
    """The server's figures: its latencies in ms, its counts and rates; the rest kept as they are
    (``benchmark_time_seconds`` is always 0 here, not a duration)."""
    successes = dig(doc, "successes")
    run.set("num_requests", successes.get("count"), source="successes.count")
    run.set("request_throughput", successes.get("rate"), source="successes.rate")
    run.set("output_throughput", dig(successes, "output_len").get("rate"), source="successes.output_len.rate")
    rates = [number(dig(successes, key).get("rate")) for key in ("prompt_len", "output_len")]
    if None not in rates:
        run.set("total_token_throughput", sum(rates), source="successes.prompt_len.rate + output_len.rate")
    for key, value in successes.items():
        if key in _LATENCIES and isinstance(value, dict):
            for statistic, seconds in value.items():
                if statistic in STATISTIC_PREFIXES:
                    run.set(f"{STATISTIC_PREFIXES[statistic]}_{_LATENCIES[key]}_ms", seconds, scale=1000.0,
                            source=f"successes.{key}.{statistic}")
        elif key not in ("count", "rate"):
            run.keep(key, value)
    run.keep("stage", int(stage[1]) if stage else "all")
    run.keep("report", "prometheus")


# Each record's JSON values at these paths, read at once (one parse a record): as JSON text, SQL
# NULL where the path is missing and 'null' where its value is.
_PATHS = ["$.start_time", "$.end_time", "$.error", "$.info.input_tokens",
          "$.info.request_metrics.text.input_tokens",
          "$.info.response_metrics.output_tokens", "$.info.response_info.output_tokens",
          "$.info.response_metrics.output_token_times", "$.info.response_info.output_token_times",
          "$.info.lora_adapter", "$.info.labels"]
# The objects of a record whose kind alone is read (DuckDB's json_type, NULL where missing): their
# values, written out again as text by json_extract, took 45 % of the read's CPU time.
_KIND_PATHS = ["$.info", "$.info.response_metrics", "$.info.response_info"]
# json_type's names of the kinds :func:`_kind` tells from the first character.
_TYPE_KINDS = {"OBJECT": "object", "ARRAY": "array", "VARCHAR": "string", "BOOLEAN": "boolean", "NULL": "null"}
# The kinds of JSON value a field may hold, as inference-perf writes it (numeric text is read too).
_NUMBER, _OBJECT, _ARRAY = ("number", "string", "null"), ("object", "null"), ("array", "null")


def _at(path: str) -> str:
    """SQL of a record's JSON value at ``path`` (one of :data:`_PATHS`)."""
    return f"w[{_PATHS.index(path) + 1}]"


def _kind_at(path: str) -> str:
    """SQL of the JSON kind of a record's value at ``path`` (as :func:`_kind` names it; NULL where
    it is missing)."""
    if path not in _KIND_PATHS:
        return _kind(_at(path))
    kind = f"k[{_KIND_PATHS.index(path) + 1}]"
    cases = " ".join(f"WHEN '{name}' THEN '{value}'" for name, value in _TYPE_KINDS.items())
    return f"CASE WHEN {kind} IS NOT NULL THEN CASE {kind} {cases} ELSE 'number' END END"


def _kind(value: str) -> str:
    """SQL of the JSON kind of a JSON value's text, by its first character (NULL where it is missing)."""
    return (f"CASE WHEN {value} IS NOT NULL THEN CASE left({value}::VARCHAR, 1) WHEN '{{' THEN 'object' "
            f"WHEN '[' THEN 'array' WHEN '\"' THEN 'string' WHEN 't' THEN 'boolean' WHEN 'f' THEN 'boolean' "
            f"WHEN 'n' THEN 'null' ELSE 'number' END END")


def _number(value: str) -> str:
    """SQL of a JSON value read as :func:`~specviz.results.importers.base.number` reads it (numeric
    text too, its thousands separators dropped), NaN for anything else."""
    text = (f"CASE WHEN left({value}::VARCHAR, 1) = '\"' THEN json_extract_string({value}, '$') "
            f"ELSE {value}::VARCHAR END")
    return f"coalesce(TRY_CAST(replace({text}, ',', '') AS DOUBLE), 'NaN')"


def _valid_sql(value: str) -> str:
    """SQL of a time that counts: finite and ≥ 0, else NaN (as :func:`~specviz.results.importers.base.floats`)."""
    return f"CASE WHEN isfinite({value}) AND {value} >= 0 THEN {value} ELSE 'NaN'::DOUBLE END"


def _truthy(value: str) -> str:
    """SQL of whether a JSON value is one Python counts as set (not missing, null, false, zero or empty)."""
    empty = " ".join(f"WHEN '{text}' THEN false" for text in ("null", "false", '""', "[]", "{}"))
    return (f"CASE WHEN {value} IS NULL THEN false ELSE CASE {value}::VARCHAR {empty} "  # not IN: DuckDB would
            f"ELSE coalesce(TRY_CAST({value}::VARCHAR AS DOUBLE) <> 0, true) END END")  # join a list for it


# The response a record's figures are read from: ``response_metrics`` where it is an object with
# keys, else ``response_info`` (0.5.0's name). Whether an object has keys is asked only where it
# matters (a CASE evaluates a branch only for its rows): an object without either key read from it.
_OLDER = (f"CASE WHEN {_kind_at('$.info.response_metrics')} IS DISTINCT FROM 'object' THEN true "
          f"WHEN {_at('$.info.response_metrics.output_tokens')} IS NOT NULL "
          f"OR {_at('$.info.response_metrics.output_token_times')} IS NOT NULL THEN false "
          f"ELSE json_extract(json, '$.info.response_metrics')::VARCHAR = '{{}}' END")
# What each field of a record may hold, in the order they are checked, and the SQL of its JSON kind.
_FIELDS = {"start_time": (_NUMBER, _kind_at("$.start_time")), "end_time": (_NUMBER, _kind_at("$.end_time")),
           "info": (_OBJECT, _kind_at("$.info")), "info.input_tokens": (_NUMBER, _kind_at("$.info.input_tokens")),
           "info.request_metrics.text.input_tokens": (_NUMBER, _kind_at("$.info.request_metrics.text.input_tokens")),
           "info.response_metrics": (_OBJECT, _kind_at("$.info.response_metrics")),
           "info.response_info": (_OBJECT, _kind_at("$.info.response_info")),
           "output_tokens": (_NUMBER, _kind("output_tokens")), "output_token_times": (_ARRAY, _kind("times"))}


def _kind_column(field: str) -> str:
    """The column of a field's JSON kind (:data:`_FIELDS`), computed once a record: a kind's SQL
    written into each check instead took DuckDB 0.2 s to plan (a ``CASE x WHEN …`` repeats ``x``
    in each branch)."""
    return f'"{field} kind"'


def _wrong_kind(field: str) -> str:
    """SQL of the JSON kind of a record's ``field`` where it is none of those the field may hold, else NULL."""
    return (f"CASE WHEN list_contains({list(_FIELDS[field][0])}, {_kind_column(field)}) THEN NULL "
            f"ELSE {_kind_column(field)} END")


_EXTRAS = {"error": _at("$.error"), "lora_adapter": _at("$.info.lora_adapter"), "labels": _at("$.info.labels")}
# Each record: whether it has the four keys, the first field holding a kind it may not and that
# kind, the first of its extras longer than $most bytes (NULL where none is), then its values.
_READ = f"""
    SELECT record, {" AND ".join(f"{_kind_column(key)} IS NOT NULL" for key in sorted(_REQUEST_KEYS))} AS whole,
           older IS NULL AS unsure,
           CASE {" ".join(f"WHEN {_wrong_kind(name)} IS NOT NULL THEN '{name}'" for name in _FIELDS)} END AS wrong_field,
           coalesce({", ".join(_wrong_kind(name) for name in _FIELDS)}) AS wrong_kind,
           CASE {" ".join(f"WHEN strlen({sql}::VARCHAR) > $most THEN '{name}'" for name, sql in _EXTRAS.items())}
           END AS too_large,
           {_number(_at("$.start_time"))} AS "start", {_number(_at("$.end_time"))} AS "end",
           CASE WHEN coalesce({_kind_column("info.input_tokens")}, 'null') <> 'null'
                THEN {_number(_at("$.info.input_tokens"))}
                ELSE {_number(_at("$.info.request_metrics.text.input_tokens"))} END AS input,
           {_number("output_tokens")} AS "output",
           coalesce({_kind(_at("$.error"))} <> 'null', false) AS failed,
           times,
           {", ".join(f"CASE WHEN {_truthy(sql)} THEN {sql}::VARCHAR END AS {name}" for name, sql in _EXTRAS.items())}
    FROM (SELECT *, {", ".join(f"{kind} AS {_kind_column(name)}" for name, (_, kind) in _FIELDS.items())}
          FROM (SELECT *, CASE WHEN older THEN {_at("$.info.response_info.output_tokens")}
                               ELSE {_at("$.info.response_metrics.output_tokens")} END AS output_tokens,
                          CASE WHEN older THEN {_at("$.info.response_info.output_token_times")}
                               ELSE {_at("$.info.response_metrics.output_token_times")} END AS times
                FROM (SELECT *, {_OLDER} AS older
                      FROM ({{records}}))))"""
# Each record's number, its text (for :data:`_OLDER`), its values at :data:`_PATHS` and their kinds at
# :data:`_KIND_PATHS`, from the objects DuckDB splits the array into: each parsed twice more.
_ANY_RECORDS = """SELECT row_number() OVER () AS record, json, json_extract(json, $paths) AS w,
                         json_type(json, $kind_paths) AS k
                  FROM read_json_objects('{path}', format = 'array', maximum_object_size = {object_bytes})"""
# The same from DuckDB's typed read, each record parsed once: the objects read as structs (DuckDB
# refuses the file where one holds another kind of value), every value at :data:`_PATHS` as JSON
# text. A struct cannot tell a missing key from a null, nor an empty response from one with other
# keys: its records' text is NULL, so that :data:`_OLDER` is NULL where it would be asked.
_RESPONSE = "STRUCT(output_tokens JSON, output_token_times JSON)"
_COLUMNS = {"start_time": "JSON", "end_time": "JSON", "error": "JSON",
            "info": f"STRUCT(input_tokens JSON, request_metrics STRUCT(text STRUCT(input_tokens JSON)), "
                    f"response_metrics {_RESPONSE}, response_info {_RESPONSE}, lora_adapter JSON, labels JSON)"}
_TYPED_RECORDS = f"""SELECT row_number() OVER () AS record, NULL::JSON AS json,
                           [{", ".join(path.removeprefix("$.") for path in _PATHS)}] AS w,
                           [{", ".join(f"CASE WHEN {path.removeprefix('$.')} IS NOT NULL THEN 'OBJECT' END"
                                       for path in _KIND_PATHS)}] AS k
                    FROM read_json('{{path}}', format = 'array', maximum_object_size = {{object_bytes}}, columns = $columns)"""
# Each record's token times as floats: cast at once where the array holds no string, boolean or
# Infinity (no quote, t or f: the cast would read true as 1 and no text as Python does), else each
# entry as :func:`_number` reads it.
_CAST_TIMES = ("CASE WHEN NOT (contains(times, '\"') OR contains(times, 't') OR contains(times, 'f')) "
               "THEN TRY_CAST(times AS DOUBLE[]) ELSE list_transform(json_extract_string(times, '$[*]'), "
               "lambda t: TRY_CAST(replace(t, ',', '') AS DOUBLE)) END")
# Then NaN where one is no finite number ≥ 0; the first, the last, their count and every gap
# between consecutive ones that is a finite number ≥ 0.
_TIMES = f"""
    SELECT * EXCLUDE (times, values), coalesce(values[1], 'NaN') AS first,
           coalesce(values[len(values)], 'NaN') AS last, len(values) AS count,
           list_filter([values[i + 1] - values[i] FOR i IN range(1, len(values))],
                       lambda gap: isfinite(gap) AND gap >= 0) AS gaps
    FROM (SELECT *, coalesce(list_transform({_CAST_TIMES}, lambda t: {_valid_sql("t")}), []) AS values
          FROM ({_READ}))"""


def _ends_the_array(source: Source) -> bool:
    """Whether the file's last character but blanks closes its array (DuckDB reads an array cut off
    after a comma, ``[{…},``, as the records before the comma)."""
    tail = source.read_at(max(source.size - 4096, 0), 4096)
    return tail.rstrip(b" \t\n\r").endswith(b"]")


def _read_requests(source: Source) -> dict[str, np.ndarray]:
    """Every record of a per-request file, read by DuckDB from the source's :attr:`~Source.reader_path` (never
    decoded by Python's json, nor held whole; typed where :func:`_typed_read` settles every record,
    else from each record's text): the columns ``start``, ``end``, ``input``, ``output``, ``failed``,
    ``first``, ``last`` and ``count`` of the token times, ``extra`` (each request's error, adapter
    and labels as :func:`~specviz.results.importers.base.request_extra` writes them), in the file's
    order, and ``gaps``, the successful requests' gaps between consecutive token times in seconds,
    one request after another. The memory of the requests and of the extras' text is charged once
    DuckDB has counted them, before they are fetched. DuckDB may take half of
    ``SPECVIZ_IMPORT_MEMORY_BYTES`` (at least :data:`_DUCKDB_BYTES`, its working memory).

    Raises
    ------
    IngestError
        ``ingest.json_malformed`` where DuckDB cannot read the JSON or the array is cut off,
        ``ingest.record_too_large`` for a record longer than DuckDB's buffer (about 125 MB at
        the default limit), ``ingest.duckdb_memory`` where DuckDB runs out of its memory,
        ``ingest.request_record`` naming the first record that is no object with
        :data:`_REQUEST_KEYS`, ``ingest.request_field_type`` naming the first field that holds
        another kind of JSON value than inference-perf writes, ``ingest.request_value_too_large``
        naming the first error, adapter or labels over ``SPECVIZ_STORED_EXTRA_BYTES``.
    """
    if not _ends_the_array(source):
        raise IngestError("ingest.json_malformed", source.name)
    memory = max(settings.get("SPECVIZ_IMPORT_MEMORY_BYTES") // 2, _DUCKDB_BYTES)
    # What spills goes to a folder of its own (an in-memory DuckDB would make .tmp in the working folder).
    with tempfile.TemporaryDirectory(prefix="specviz-inference-perf-") as spill, \
            duckdb.connect(config={"memory_limit": f"{memory}B", "temp_directory": spill}) as con:
        try:
            con.execute("SET enable_progress_bar = false")
            if not _typed_read(con, source, memory):
                _create_requests(con, source, _ANY_RECORDS, memory, {"paths": _PATHS, "kind_paths": _KIND_PATHS})
            _check_records(source, con)
            count, extra_bytes = con.execute(f"""
                SELECT count(*), coalesce(sum({" + ".join(f"coalesce(strlen({name}), 0)" for name in _EXTRAS)}), 0)
                FROM requests""").fetchone()
            source.charge(_REQUEST_BYTES * count + _EXTRA_BYTES_PER_BYTE * int(extra_bytes))
            columns = con.execute('SELECT "start", "end", input, "output", failed, first, last, count '
                                  "FROM requests").fetchnumpy()
            extras = con.execute(f"SELECT record, {', '.join(_EXTRAS)} FROM requests "
                                 f"WHERE {' OR '.join(f'{name} IS NOT NULL' for name in _EXTRAS)}").fetchall()
            gaps = con.execute("SELECT unnest(gaps) AS gap FROM requests WHERE NOT failed").fetchnumpy()["gap"]
        except duckdb.Error as exc:
            raise duckdb_read_error(source.name, exc, memory) from None
    read = {name: np.asarray(column) for name, column in columns.items()}
    extra = np.full(count, None, dtype=object)
    for record, *values in extras:
        extra[record - 1] = request_extra({name: None if value is None else json.loads(value)
                                           for name, value in zip(_EXTRAS, values)})
    return {**read, "extra": extra, "gaps": np.asarray(gaps, np.float64)}


def _create_requests(con: duckdb.DuckDBPyConnection, source: Source, records: str, memory: int,
                     parameters: dict[str, Any]) -> None:
    """The table ``requests`` of :data:`_TIMES` over the records of ``records`` (:data:`_ANY_RECORDS`
    or :data:`_TYPED_RECORDS`, with their ``parameters``), read from the source's reader path. A
    record is read whole into a buffer of twice ``memory / 8`` (at least 16 MiB), one in each of
    DuckDB's threads: DuckDB's default, 16 MiB, would refuse a 40 MB request with images in its body."""
    con.execute("DROP TABLE IF EXISTS requests")
    records = records.format(path=source.reader_path, object_bytes=memory // 8)
    con.execute(f"CREATE TEMP TABLE requests AS {_TIMES.replace('{records}', records)}",
                {**parameters, "most": settings.get("SPECVIZ_STORED_EXTRA_BYTES")})


def _typed_read(con: duckdb.DuckDBPyConnection, source: Source, memory: int) -> bool:
    """Whether DuckDB's typed read (:data:`_TYPED_RECORDS`) read every record as :data:`_ANY_RECORDS`
    would (into ``requests``): not where it refused the file (an object of another kind, a record too
    long, malformed JSON), nor where a record lacks a time or ``info`` or holds a response with
    neither figure, which only the records' text can tell apart. Then the file is read again from
    its text, which names the record at fault where there is one. inference-perf's own files take
    the typed read: its 1M-request import took 1.25-1.31x DuckDB's ``read_json`` of the file, against
    1.45-1.63x read from the text alone (``bench/bench_ingest.py``)."""
    try:
        _create_requests(con, source, _TYPED_RECORDS, memory, {"columns": _COLUMNS})
    except duckdb.Error:
        return False
    return con.execute("SELECT count(*) FROM requests WHERE NOT whole OR unsure").fetchone()[0] == 0


def _check_records(source: Source, con: duckdb.DuckDBPyConnection) -> None:
    """Refuse the file at its first record that is no request, holds a field of another kind, or
    an error, adapter or labels too long to store (:func:`_read_requests`)."""
    found = con.execute("SELECT record, whole, wrong_field, wrong_kind, too_large FROM requests "
                        "WHERE NOT whole OR wrong_field IS NOT NULL OR too_large IS NOT NULL "
                        "ORDER BY record LIMIT 1").fetchone()
    if found is None:
        return
    record, whole, field, kind, too_large = found
    if not whole:
        raise IngestError("ingest.request_record", source.name, record=record, format="inference-perf",
                          keys=", ".join(sorted(_REQUEST_KEYS)))
    if field is not None:
        raise IngestError("ingest.request_field_type", source.name, record=record, field=field, kind=kind,
                          expected=" | ".join(_FIELDS[field][0]))
    size = con.execute(f"SELECT strlen({too_large}) FROM requests WHERE record = ?", [record]).fetchone()[0]
    raise IngestError("ingest.request_value_too_large", source.name, record=record, field=too_large, size=size,
                      limit=settings.get("SPECVIZ_STORED_EXTRA_BYTES"))


def _valid(values: np.ndarray) -> np.ndarray:
    """NaN where a value is not finite and ≥ 0 (a token before its request's start)."""
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(values) & (values >= 0), values, np.nan)


def _statistics(run: RunBuilder, short: str, values: np.ndarray) -> None:
    """Mean, p50, p90 and p99 (numpy's linear percentiles, as inference-perf's ``summarize``) of
    the values that are not NaN."""
    values = values[~np.isnan(values)]
    if values.size:
        run.set(f"mean_{short}_ms", float(values.mean()))
        for p, value in zip((50, 90, 99), np.percentile(values, [50, 90, 99])):
            run.set(f"p{p}_{short}_ms", float(value))


def _per_request(source: Source) -> Parsed:
    source.charge_runs(1)
    read = _read_requests(source)
    start, end, output, first, last, counts = (read[key] for key in ("start", "end", "output", "first", "last",
                                                                      "count"))
    n = len(start)
    streamed = counts > 1
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        columns = {
            "ttft_ms": _valid(np.where(streamed, (first - start) * 1e3, np.nan)),
            "itl_ms": _valid(np.where(streamed, (last - first) / (counts - 1) * 1e3, np.nan)),
            "tpot_ms": _valid(np.where(streamed & (output > 1), (last - first) / (output - 1) * 1e3, np.nan)),
            "e2el_ms": _valid((end - start) * 1e3),
        }
    failed = read["failed"]
    input_tokens = _valid(read["input"])
    output = _valid(output)
    warnings: list[Notice] = []
    run = RunBuilder(warnings)
    run.set("label", _label(PurePath(source.name), None, server=False))
    run.set("num_requests", int((~failed).sum()))
    run.set("failed_requests", int(failed.sum()))
    starts, ends = start[np.isfinite(start)], end[np.isfinite(end)]
    span = float(ends.max() - starts.min()) if starts.size and ends.size else None
    run.set("duration_s", span, source="end_time - start_time")
    # Throughputs of the successful requests over the whole span, as the summary's; one past the largest
    # float (a span of 1e-310 s) is refused by the builder, said, not warned by numpy.
    if span and span > 0:
        with np.errstate(over="ignore"):
            run.set("request_throughput", (~failed).sum() / span)
            run.set("output_throughput", np.nansum(output[~failed]) / span)
            run.set("total_token_throughput", (np.nansum(output[~failed]) + np.nansum(input_tokens[~failed])) / span)
    for name, short in (("ttft_ms", "ttft"), ("tpot_ms", "tpot"), ("e2el_ms", "e2el")):
        _statistics(run, short, columns[name][~failed])
    with np.errstate(over="ignore"):  # a gap past a float's range in ms (hypothesis found one): left out, as above
        _statistics(run, "itl", _valid(read["gaps"] * 1e3))
    run.keep("stage", "all")
    run.keep("report", "per_request")
    requests = pd.DataFrame({"run_index": np.zeros(n, np.int64), **columns, "input_tokens": input_tokens,
                             "output_tokens": output, "extra": read["extra"]})
    return Parsed("inference-perf", [run.build()], requests, warnings)


def parse(source: Source) -> Parsed:
    if claims(source):
        return _per_request(source)
    doc = source.documents[0]
    if isinstance(doc, list):
        return _per_request(source)
    source.charge_runs(1)
    warnings: list[Notice] = []
    run = RunBuilder(warnings)
    path = PurePath(source.name)
    stage = _STAGE.fullmatch(path.name)
    server = "latency" not in dig(doc, "successes") and "request_latency" in dig(doc, "successes")
    run.set("label", _label(path, stage, server))
    (_prometheus if server else _lifecycle)(doc, run, stage)
    return Parsed("inference-perf", [run.build()], warnings=warnings)


FORMAT = Format("inference-perf", sniff, parse, claims)
