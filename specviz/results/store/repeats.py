"""Runs that another file already holds: how an import finds them, and what it does instead of storing
them again.

A vLLM sweep's ``summary.json`` repeats its ``run=N.json`` files; an AIPerf run can be exported
twice, and its summary and per-request records are of one run; and a run exported as a benchmark report can be imported again; vLLM, SGLang and SpecForge append each new run to the file that holds the earlier ones; and
inference-perf writes a summary, stage reports, a per-request report and each stage's benchmark
report of the same requests.
:data:`REPEATS` gives, per format, the finders of a parsed file's runs that a stored file holds
(not stored again, a notice naming the file), :data:`REPLACES` those whose stored runs the new
file's run holds and more of (the stored import is replaced). Used by
:meth:`specviz.results.store.imports.RunsAndImports.import_file` inside its transaction.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from typing import Any

import duckdb
import pandas as pd

from specviz import settings
from specviz.errors import Notice
from specviz.results import importers
from specviz.results.importers.base import IngestError, extra_json, not_stored, preview
from specviz.results.schema import RUN_COLUMNS

from .connection import quote_identifier

__all__ = ["REPEATS", "REPLACES", "repeat_notices", "run_named"]


def run_named(label: Any) -> str | Notice:
    """A run as a notice names it: its label, or where it has none (a stage report imported on its
    own, outside its run's folder) words that say so, not an empty name (which read "file: : …")."""
    return label if isinstance(label, str) and label else Notice("warn.run_unlabelled")


# What a sweep's copy of a run must repeat: every canonical column the file sets (not the store's
# own, nor the synthetic flag, which is judged of the runs, not read from the file, nor the user's
# word on speculation).
_FIGURES = tuple(c for c in RUN_COLUMNS if c not in ("run_id", "source_file", "source_format", "imported_at",
                                                     "content_hash", "extra", "synthetic_acceptance",
                                                     "speculation_by_user"))


def _as_its_file_gave(stored: dict[str, Any]) -> dict[str, Any]:
    """A stored run as its file gave it, to be compared with a copy from another file: the method and
    γ a user stated (``speculation_by_user``: the method alone, or the method and γ) are not its file's (an analyst's pass: a stated AIPerf run
    had been stored again from its copy, and paired with it at 1.00x; a sweep's run=0.json refused)."""
    stated = stored.get("speculation_by_user")
    if stated == "method_gamma":
        return {**stored, "spec_method": None, "num_speculative_tokens": None}
    return {**stored, "spec_method": None} if stated == "method" else stored


def _figures_agree(stored: dict[str, Any], run: dict[str, Any], rounding: bool = False) -> bool:
    """Whether a stored run and a parsed one have the same figures: the same value in every run
    column (:data:`_FIGURES`), the same record twice; or, with ``rounding``, every number that both
    set equal to within rounding (the relative 1e-9 of a sum taken in another order), two reports
    computed from the same requests, where the label (the folder a file was uploaded from) and
    what only one report gives (the per-request report's p99) may differ."""
    if not rounding:
        return all(stored.get(column) == run.get(column) for column in _FIGURES)
    shared = [column for column in _FIGURES if isinstance(stored.get(column), (int, float))
              and isinstance(run.get(column), (int, float))]
    return all(math.isclose(stored[column], run[column], rel_tol=1e-9) for column in shared)


def _first_difference(stored: dict[str, Any], run: dict[str, Any]) -> tuple[str, Any, Any] | None:
    """The first field in which two copies of a sweep run differ, with its stored and its new value:
    a canonical column, else a key of ``extra`` (but the swept settings of the folder name, which
    a file uploaded on its own lacks); None if they are the same."""
    for column in _FIGURES:
        if stored.get(column) != run.get(column):
            return column, stored.get(column), run.get(column)
    old, new = (json.loads(extra) for extra in (stored["extra"], run["extra"]))
    for key in [*old, *(k for k in new if k not in old)]:
        if key != "sweep" and old.get(key) != new.get(key):
            return key, old.get(key), new.get(key)
    return None


def _sweep_repeats(cur: duckdb.DuckDBPyConnection, name: str,
                   parsed: importers.Parsed) -> dict[int, tuple[str, str]]:
    """The runs of a parsed file that a ``vllm bench sweep`` already stored from another of its
    files: index → (that file's name, the run's ``run_number``). A sweep writes each run twice, as
    ``run=N.json`` and inside ``summary.json`` (the same object, copied once the sweep's runs have
    all finished), and the page, which takes files and not folders, may be given both.

    Two runs are one when both are sweep runs (``run_number`` in ``extra``, which only the sweep
    writes) with the same ``run_number`` and start ``date`` (``vllm bench serve`` writes it to the
    second), of the same swept settings where both files were named inside their sweep folder (a
    file uploaded on its own has none). Such a run is stored once. Its copies must then agree in
    every field: ones that differ are a file edited or a run written again into the folder, and the
    file is refused, naming the field (what is stored stays). Runs without a ``date`` are one only
    where they agree in every field; otherwise each is stored.

    Raises
    ------
    IngestError
        ``ingest.sweep_run_differs``, naming the other file, the run and the first field in which
        the two differ.
    """
    if not any('"run_number"' in run["extra"] for run in parsed.runs):
        return {}
    matches = _stored_matches(cur, name, parsed, """
        r.source_format = 'vllm-bench' AND (r.extra->>'run_number') = (i.extra->>'run_number')
        AND (r.extra->>'date') IS NOT DISTINCT FROM (i.extra->>'date')
        AND ((r.extra->'sweep') IS NULL OR (i.extra->'sweep') IS NULL OR (r.extra->'sweep') = (i.extra->'sweep'))""")
    repeated: dict[int, tuple[str, str]] = {}
    for stored in matches:
        index = stored["run_index"]
        run = parsed.runs[index]
        run_number = str(json.loads(run["extra"])["run_number"])
        difference = _first_difference(stored, run)
        if difference is None:
            repeated.setdefault(index, (stored["source_file"], run_number))
        elif json.loads(run["extra"]).get("date") is not None:
            field, old, new = difference
            raise IngestError("ingest.sweep_run_differs", name, other=stored["source_file"], run=run_number,
                              field=field, stored=preview(old), value=preview(new))
    return repeated


def _stored_matches(cur: duckdb.DuckDBPyConnection, name: str, parsed: importers.Parsed,
                    on: str) -> list[dict[str, Any]]:
    """The stored runs ``r`` that match a run ``i`` of ``parsed`` by the SQL condition ``on`` (``i.extra``
    the parsed run's ``extra`` as JSON), each as a dict of its columns with the parsed run's
    ``run_index``, by run and then by file name.

    Identical runs are compared once, the file's and the store's (a file of 1,000 copies of one run,
    imported again under another hash, had joined 1,000 × 1,000 whole rows: 34 s and 5.1 GB; 20,000,
    which each shared a list of 100,000 rates with a stored run, 20 GB), and at most one pair past
    the limit is read.

    Raises
    ------
    IngestError
        ``ingest.too_many_repeats`` past ``SPECVIZ_IMPORT_MAX_REPEAT_PAIRS`` pairs.
    """
    copies: dict[str, list[int]] = {}
    for index, run in enumerate(parsed.runs):
        copies.setdefault(json.dumps(run, sort_keys=True, default=str), []).append(index)
    firsts = {indices[0]: indices for indices in copies.values()}
    incoming = pd.DataFrame({"run_index": list(firsts), "extra": [parsed.runs[i]["extra"] for i in firsts]})
    compared = ", ".join(f"r.{quote_identifier(c)}" for c in ("source_file", "source_format", "extra", *_FIGURES))
    # Of the stored runs a run matches, one of each file and figures (the first by id): only the runs
    # the condition picks are sorted, not the whole store.
    pairs = f"""
        WITH i AS (SELECT run_index, CAST(extra AS JSON) AS extra FROM incoming_runs),
             m AS (SELECT DISTINCT ON (i.run_index, {compared}) i.run_index, r.* FROM i JOIN runs r ON {on}
                   ORDER BY i.run_index, {compared}, r.run_id)
        SELECT {{}} FROM m"""
    cur.register("incoming_runs", incoming)
    try:
        # One join: the pairs' keys (narrow: no pair's whole row is carried through its sort) with their
        # count, at most one past the limit; then those pairs' rows by id. Counting, then reading the
        # whole rows, had been a third of a folder's import (docs/performance.md); reading the whole
        # rows with the limit had refused a hostile file of 1,000 runs in 23 s and 2.5 GB, where
        # counting first took 7 s and 1.4 GB (an attack pass).
        most = int(settings.get("SPECVIZ_IMPORT_MAX_REPEAT_PAIRS"))
        keys = cur.execute(pairs.format("run_index, run_id, count(*) OVER () AS pairs") + f" LIMIT {most + 1}").fetchall()
        if keys and (count := keys[0][2]) > most:
            raise IngestError("ingest.too_many_repeats", name, runs=len(parsed.runs), pairs=count, most=most)
        found = cur.execute("SELECT * FROM runs WHERE run_id IN (SELECT unnest(?))",
                            [sorted({run_id for _, run_id, _ in keys})])
        names = [column[0] for column in found.description]
        rows = {row["run_id"]: _as_its_file_gave(row) for row in (dict(zip(names, values)) for values in found.fetchall())}
        matches = sorted(({**rows[run_id], "run_index": index} for index, run_id, _ in keys),
                         key=lambda match: (match["run_index"], match["source_file"]))
    finally:
        cur.unregister("incoming_runs")
    return [{**match, "run_index": index} for match in matches for index in firsts[match["run_index"]]]


def _aiperf_repeats(cur: duckdb.DuckDBPyConnection, name: str,
                    parsed: importers.Parsed) -> dict[int, tuple[str, str]]:
    """The runs of a parsed AIPerf file already stored from another file: index → (that file's name,
    the run's ``benchmark_id``). AIPerf gives each run it makes a ``benchmark_id``; one run's export
    copied to another folder, or with the artifact directory in its configuration rewritten, is
    another content of the same run, which was stored twice under two series names.

    Two runs are one when both are AIPerf runs of the same ``benchmark_id`` that agree in every run
    column (figures, load, models; ``extra`` aside, which holds the paths). The server's metrics
    exported for the same benchmark are a run of other figures, stored beside it.
    """
    if not any('"benchmark_id"' in run["extra"] for run in parsed.runs):
        return {}
    matches = _stored_matches(cur, name, parsed, """
        r.source_format = 'aiperf' AND (r.extra->>'benchmark_id') = (i.extra->>'benchmark_id')""")
    return _agreeing(matches, parsed, lambda index: json.loads(parsed.runs[index]["extra"])["benchmark_id"])


def _appended_repeats(cur: duckdb.DuckDBPyConnection, name: str,
                      parsed: importers.Parsed) -> dict[int, tuple[str, str]]:
    """The runs of a parsed file of several runs already stored from another file (or an earlier
    content of the same one): index → (that file's name, the run's place in the file, from 1).
    ``vllm bench serve --save-result --append-result`` (vLLM ``benchmarks/serve.py``: ``"\\n"`` and
    the new object at the end of the file), SGLang's ``bench_serving --output-file`` (one line
    appended per run, ``bench_serving.py``) and SpecForge's benchmark (a line per setting) add
    each run to the same file: imported again after more runs were appended, its earlier lines
    were stored twice, a baseline and its speculative runs counted twice.

    Two runs are one when they are of the same format and agree in every run column (figures,
    load, models, label) and in ``extra`` (vLLM's ``date`` to the second, SGLang's ``server_info``,
    SpecForge's tree and completion tokens): the same record. A file of one run is never compared,
    as a plain result file is not (:func:`_sweep_repeats`): two files of one run each are the
    user's to keep.
    """
    if len(parsed.runs) < 2:
        return {}
    # The format is one of REPEATS' keys (an importer's constant), never a user's text.
    matches = _stored_matches(cur, name, parsed, f"""
        r.source_format = '{parsed.format}' AND r.extra = CAST(i.extra AS VARCHAR)""")
    return _agreeing(matches, parsed, lambda index: str(index + 1))


def _exported_repeats(cur: duckdb.DuckDBPyConnection, name: str,
                      parsed: importers.Parsed) -> dict[int, tuple[str, str]]:
    """The runs of a parsed benchmark report that are a stored run written out again: index → (the
    stored run's file name, the report's ``run.uid``). ``specviz export`` writes a run as a report
    whose ``run.uid`` is the run's id (or the ``run.uid`` of the report it was imported from,
    :func:`specviz.results.benchmark_report.to_report`); imported again, it had been stored as a
    new run beside its own, with less (the standard has no place for the acceptance).

    A report's run is a stored one when its ``run.uid`` is the stored run's id, or the ``run.uid``
    of a stored report's run, and every figure both give agrees to within rounding (the report
    holds the latencies in seconds, the store in milliseconds)."""
    if not any('"run.uid"' in run["extra"] for run in parsed.runs):
        return {}
    matches = _stored_matches(cur, name, parsed, """
        r.run_id = (i.extra->>'run.uid')
        OR (r.source_format = 'benchmark-report' AND (r.extra->>'run.uid') = (i.extra->>'run.uid'))""")
    return _agreeing(matches, parsed, lambda index: json.loads(parsed.runs[index]["extra"])["run.uid"], rounding=True)


def _agreeing(matches: list[dict[str, Any]], parsed: importers.Parsed, named: Callable[[int], str],
              rounding: bool = False) -> dict[int, tuple[str, str]]:
    """Of the stored runs :func:`_stored_matches` paired with a parsed file's runs, those whose
    figures agree (:func:`_figures_agree`): the parsed run's index → (the stored run's file name,
    what names the run to the user, ``named(index)``), the first such stored run for each."""
    repeated: dict[int, tuple[str, str]] = {}
    for stored in matches:
        index = stored["run_index"]
        if _figures_agree(stored, parsed.runs[index], rounding=rounding):
            repeated.setdefault(index, (stored["source_file"], named(index)))
    return repeated


# What inference-perf's summarize_requests writes of every run's requests, which a report of the
# same requests must give too: the successes, the failures and the span from first start to last end.
_REQUEST_FIGURES = ("num_requests", "failed_requests", "duration_s")
# inference-perf's lifecycle reports, by what their run holds beyond the figures of its requests: the
# summary nothing, a stage report its stage's load, the per-request report each request. Of two
# reports of the same requests, the run of the later one here is the one stored.
_REPORTS = ("summary", "stage", "per_request")
# A stage's load, which the per-request report's run of the same requests takes from the stage's:
# these columns (the label too, the run folder's, which puts the run on its stages' line) and keys
# of extra.
_LOAD_COLUMNS = ("request_rate", "concurrency", "label")
_LOAD_EXTRA = ("stage", "achieved_rate")
# What a stage's run took from its benchmark report (_with_report), which the per-request report's run
# of the same requests takes with the load: it had been lost where the per-request report came last.
_REPORT_EXTRA = ("benchmark_report", "figures_from")


def _report_sql(extra: str) -> str:
    """SQL of the lifecycle report (one of :data:`_REPORTS`) an inference-perf run is of, from the
    ``stage`` and ``report`` its importer keeps in ``extra``; NULL for the server's Prometheus
    report, which is of other figures."""
    return (f"CASE WHEN ({extra}->>'report') = 'per_request' THEN 'per_request' WHEN ({extra}->>'report') IS NOT NULL "
            f"THEN NULL WHEN ({extra}->>'stage') = 'all' THEN 'summary' ELSE 'stage' END")


def _same_requests(cur: duckdb.DuckDBPyConnection, name: str, parsed: importers.Parsed, ours: str,
                   theirs: str) -> list[dict[str, Any]]:
    """The stored runs of inference-perf's report ``theirs`` that are of the same requests as a run of
    a parsed file of its report ``ours`` (two of :data:`_REPORTS`), as :func:`_stored_matches` gives them.

    inference-perf writes its reports from one list, every request of the run's stages
    (``ReportGenerator.generate_reports`` in ``inference_perf/reportgen/base.py``, 0.5.0 and 7de5ef2e of 2026):
    the summary is ``summarize_requests`` of it, the per-request report its records, one each, and
    the report of each stage ``summarize_requests`` of the stage's requests with the stage's rate
    (and concurrency). A run of one stage gives its stage the whole list: the stage report is of
    the same requests as the other two. No request carries an id of its run, nor does a report, so
    two are one run where they agree in what ``summarize_requests`` writes of the list and the
    importer computes again from the records (:data:`_REQUEST_FIGURES`, the throughputs, the mean,
    median and p90 of each latency), to within rounding; a stage of a run of several is of fewer
    requests than the others. The server's Prometheus report is of other figures, and stays a run
    of its own. Each file of these reports is one run, so the run is its whole import.
    """
    # ours and theirs are of _REPORTS, this module's constants: never a user's text.
    return _of_same_requests(parsed, _stored_matches(cur, name, parsed, f"""
        r.source_format = 'inference-perf' AND {_report_sql('i.extra')} = '{ours}'
        AND {_report_sql('r.extra')} = '{theirs}'"""))


def _of_same_requests(parsed: importers.Parsed, matches: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Of the stored runs :func:`_stored_matches` gave, those that are of the same requests as their
    parsed run: both give what ``summarize_requests`` writes of every run (:data:`_REQUEST_FIGURES`),
    and every figure both give agrees to within rounding."""
    return [stored for stored in matches
            if all(stored.get(column) is not None and parsed.runs[stored["run_index"]].get(column) is not None
                   for column in _REQUEST_FIGURES)
            and _figures_agree(stored, parsed.runs[stored["run_index"]], rounding=True)]


def _with_load(run: Mapping[str, Any], stage: Mapping[str, Any], stage_file: str) -> dict[str, Any]:
    """The columns of a per-request report's run, stored or parsed, that take the load of a stage's
    run of the same requests: :data:`_LOAD_COLUMNS`, and ``extra`` with :data:`_LOAD_EXTRA`, what the
    stage took from its benchmark report (:data:`_REPORT_EXTRA`) and the stage report's name
    (``load_from``), since the run's own file has no load."""
    extra, stage_extra = json.loads(run["extra"]), json.loads(stage["extra"])
    extra.update({key: stage_extra[key] for key in (*_LOAD_EXTRA, *_REPORT_EXTRA) if key in stage_extra},
                 load_from=stage_file)
    return {**{column: stage.get(column) for column in _LOAD_COLUMNS}, "extra": _report_within_bytes(extra)}


def _give_load(cur: duckdb.DuckDBPyConnection, stored: Mapping[str, Any], stage: Mapping[str, Any],
               stage_file: str) -> dict[str, Any]:
    """Give a stored per-request report's run the load of a parsed stage report's run of the same
    requests (:func:`_with_load`), and its import the notice it has where the stage came first
    (``warn.stage_load_taken``): the run and its import are then the same whichever file came
    first, and the tables' version changes (:data:`specviz.results.store.imports._IMPORTS_VERSION`). Returns the columns given."""
    load = _with_load(stored, stage, stage_file)
    _update_stored(cur, stored, load, Notice("warn.stage_load_taken", other=stage_file, runs=run_named(load["label"])))
    return load


def _update_stored(cur: duckdb.DuckDBPyConnection, stored: Mapping[str, Any], columns: Mapping[str, Any],
                   notice: Notice) -> None:
    """Set ``columns`` of a stored run, and add ``notice`` (what it took, from which file) to its
    import's warnings, once: the import then says what it holds whichever file came first, and the
    tables' version changes (:data:`specviz.results.store.imports._IMPORTS_VERSION`)."""
    cur.execute(f"UPDATE runs SET {', '.join(f'{quote_identifier(column)} = ?' for column in columns)} "
                "WHERE run_id = ?", [*columns.values(), stored["run_id"]])
    said = notice.to_json()
    (warnings,) = cur.execute("SELECT warnings FROM imports WHERE content_hash = ?", [stored["content_hash"]]).fetchone()
    warnings = json.loads(warnings or "[]")
    if said not in warnings:  # the same file again, as another content
        cur.execute("UPDATE imports SET warnings = ? WHERE content_hash = ?",
                    [json.dumps([*warnings, said]), stored["content_hash"]])


def _stored_from_later(ours: str, theirs: str) -> Callable[..., dict[int, tuple[str, str]]]:
    """A finder of :data:`REPEATS`: the run of a parsed inference-perf report ``ours`` already stored
    from its report ``theirs``, later in :data:`_REPORTS`, of the same requests
    (:func:`_same_requests`): index → (that file's name, the run's label). That run has the
    parsed run's figures, and more; the file is not stored again, but a stage's load, which the
    per-request report's run takes (:func:`_give_load`)."""
    def find(cur: duckdb.DuckDBPyConnection, name: str, parsed: importers.Parsed) -> dict[int, tuple[str, str]]:
        repeated: dict[int, tuple[str, str]] = {}
        for stored in _same_requests(cur, name, parsed, ours, theirs):
            kept = _give_load(cur, stored, parsed.runs[stored["run_index"]], name) if ours == "stage" else stored
            repeated.setdefault(stored["run_index"], (stored["source_file"], kept["label"]))
        return repeated
    return find


def _replacing_earlier(ours: str, theirs: str) -> Callable[..., dict[str, tuple[str, str]]]:
    """A finder of :data:`REPLACES`: the stored runs of inference-perf's report ``theirs``, earlier in
    :data:`_REPORTS`, of the same requests as a parsed file's run of its report ``ours``
    (:func:`_same_requests`): their content hash → (file name, the label of the run kept). The
    parsed run has their figures and more; it takes their place, and a per-request report's run
    takes a stage's load (:func:`_with_load`), so that the run is the same whichever file came
    first."""
    def find(cur: duckdb.DuckDBPyConnection, name: str, parsed: importers.Parsed) -> dict[str, tuple[str, str]]:
        replaced: dict[str, tuple[str, str]] = {}
        for stored in _same_requests(cur, name, parsed, ours, theirs):
            run = parsed.runs[stored["run_index"]]
            if theirs == "stage":
                run.update(_with_load(run, stored, stored["source_file"]))
            replaced[stored["content_hash"]] = (stored["source_file"], run["label"])
        return replaced
    return find


# inference-perf's lifecycle reports, but the server's Prometheus report (of other figures), in SQL.
_LIFECYCLE_SQL = "r.source_format = 'inference-perf' AND " + _report_sql("r.extra") + " IS NOT NULL"


def _with_report(run: Mapping[str, Any], report: Mapping[str, Any], report_file: str) -> dict[str, Any]:
    """The columns of an inference-perf run, stored or parsed, that a benchmark report of the same
    requests gives and it lacks (the p99 of each latency, which the stage reports do not write),
    and ``extra`` with the report's own (the rest of each distribution: p95, p99.9, the spread) under
    ``benchmark_report``, and the report's name (``figures_from``)."""
    given = {column: report[column] for column in _FIGURES if run.get(column) is None and report.get(column) is not None}
    extra = json.loads(run["extra"])
    extra.update(benchmark_report=json.loads(report["extra"]), figures_from=report_file)
    return {**given, "extra": _report_within_bytes(extra)}


def _within_extra_bytes(merged: dict[str, Any], left_out: Any, smaller: Callable[[str], dict[str, Any]]) -> str:
    """The ``extra`` of a run that took another file's, as its importer would write it (:func:`extra_json`):
    ``merged``, or where that passes ``SPECVIZ_STORED_EXTRA_BYTES``, ``smaller`` given the note of the
    other file's part ``left_out`` (:func:`not_stored`): two files each within the bound had been merged
    to 2.3 times it."""
    text = extra_json(merged)
    if len(text.encode()) <= settings.get("SPECVIZ_STORED_EXTRA_BYTES"):
        return text
    return extra_json(smaller(not_stored(len(extra_json(left_out).encode()))))


def _report_within_bytes(extra: dict[str, Any]) -> str:
    """``extra`` of a run that took a benchmark report's (:func:`_within_extra_bytes`): the report's part,
    the largest, said to be left out where the whole passes the bound."""
    if "benchmark_report" not in extra:
        return extra_json(extra)
    return _within_extra_bytes(extra, extra["benchmark_report"], lambda note: {**extra, "benchmark_report": note})


def _given_to_lifecycle(taken_before: bool) -> Callable[..., dict[int, tuple[str, str]]]:
    """A finder of :data:`REPEATS`: the runs of a parsed benchmark report already stored from one of
    inference-perf's lifecycle reports of the same requests (:func:`_of_same_requests`): index →
    (that file's name, the run's label). inference-perf writes a stage's benchmark report
    (``*.partial.stage_N.yaml``, llm-d's standard) beside its ``stage_N_lifecycle_metrics.json``, from
    the same requests; the report gives the p99s the stage report lacks. ``taken_before`` False: the
    stored runs that took no report's figures yet take these (:func:`_with_report`); True: those that
    did (the same report again, under another name), which change nothing. Either way the report is
    not stored again."""
    def find(cur: duckdb.DuckDBPyConnection, name: str, parsed: importers.Parsed) -> dict[int, tuple[str, str]]:
        repeated: dict[int, tuple[str, str]] = {}
        for stored in _of_same_requests(parsed, _stored_matches(cur, name, parsed, _LIFECYCLE_SQL)):
            if ("figures_from" in json.loads(stored["extra"])) != taken_before:
                continue
            if not taken_before:
                given = _with_report(stored, parsed.runs[stored["run_index"]], name)
                _update_stored(cur, stored, given, Notice("warn.report_figures_taken", other=name, runs=run_named(stored["label"])))
            repeated.setdefault(stored["run_index"], (stored["source_file"], stored["label"]))
        return repeated
    return find


def _taking_report(cur: duckdb.DuckDBPyConnection, name: str, parsed: importers.Parsed) -> dict[str, tuple[str, str]]:
    """A finder of :data:`REPLACES`: the stored benchmark reports of the same requests as a parsed
    inference-perf lifecycle report's run (:func:`_of_same_requests`), each its file's only run:
    their content hash → (file name, the label of the run kept). The parsed run takes what the
    report gives and it lacks (:func:`_with_report`) and its place, so that the run is the same
    whichever file came first (:func:`_given_to_lifecycle`)."""
    matches = _stored_matches(cur, name, parsed, f"""
        r.source_format = 'benchmark-report' AND {_report_sql('i.extra')} IS NOT NULL
        AND (SELECT count(*) FROM runs o WHERE o.content_hash = r.content_hash) = 1""")
    replaced: dict[str, tuple[str, str]] = {}
    taken: set[int] = set()
    for stored in _of_same_requests(parsed, matches):
        if stored["run_index"] in taken:  # one report's figures a run: another of the same requests stays its own
            continue
        taken.add(stored["run_index"])
        run = parsed.runs[stored["run_index"]]
        run.update(_with_report(run, stored, stored["source_file"]))
        replaced[stored["content_hash"]] = (stored["source_file"], run["label"])
    return replaced


# AIPerf writes a run's summary (profile_export_aiperf.json, its figures over every record, with the
# model and load) and its per-request records (profile_export.jsonl, each request, its own acceptance):
# one run, stored from the records with the summary's figures, whichever file came first. The two are
# of the same requests where the summary's first request (min_request_timestamp, ns: AIPerf before
# 0.10 exports it, 0.10 and later do not) is the records' to within a microsecond (both are doubles
# here, 256 ns apart at 10¹⁸), and both count the same requests over the same span to a millisecond
# (AIPerf's benchmark_duration is from that start to the last response). A records run is told from a
# summary by the count of records its importer keeps (``records``).
_AIPERF_START_NS = 1_000
_AIPERF_SPAN_S = 1e-3
_AIPERF_RECORDS = "(({run}.extra->>'records') IS {not_} NULL)"
# What a summary's extra gives its records' run where the two together pass SPECVIZ_STORED_EXTRA_BYTES:
# the keys that other code reads (the tokenizer a served alias is matched by, the run's id, its cell).
_SUMMARY_KEPT = ("tokenizer_id", "benchmark_id", "sweep")


def _aiperf_same_requests(cur: duckdb.DuckDBPyConnection, name: str, parsed: importers.Parsed,
                          records_parsed: bool) -> list[dict[str, Any]]:
    """The stored AIPerf runs of the same requests as a run of a parsed AIPerf file: its summary's of
    its records, ``records_parsed``, else its records' of its summary (as :func:`_stored_matches` gives
    them)."""
    summary, records = ("r", "i") if records_parsed else ("i", "r")
    matches = _stored_matches(cur, name, parsed, f"""
        r.source_format = 'aiperf' AND {_AIPERF_RECORDS.format(run=records, not_="NOT")}
        AND {_AIPERF_RECORDS.format(run=summary, not_="")}
        AND ({summary}.extra->'min_request_timestamp'->>'unit') = 'ns'
        AND abs(TRY_CAST({records}.extra->>'first_request_start_ns' AS DOUBLE)
                - TRY_CAST({summary}.extra->'min_request_timestamp'->>'avg' AS DOUBLE)) < {_AIPERF_START_NS}""")
    same, apart = [], []
    for stored in matches:
        run = parsed.runs[stored["run_index"]]
        spans = (stored.get("duration_s"), run.get("duration_s"))
        if (stored.get("num_requests") == run.get("num_requests") and None not in spans
                and abs(spans[0] - spans[1]) < _AIPERF_SPAN_S):
            same.append(stored)
        else:
            apart.append(stored)
    if apart:
        # The same first request but other counts: a records file cut short (the 0.3 sample keeps 10
        # of its summary's 64), or a summary of a longer run. Two runs, said to be, not in silence; once
        # an import, the first such file named and the others counted (an attack pass: 30 copies of a
        # summary had given 30 paragraphs).
        stored = apart[0]
        run = parsed.runs[stored["run_index"]]
        ours, theirs = (run, stored) if records_parsed else (stored, run)
        parsed.warnings.append(Notice(
            "warn.aiperf_not_same_requests", other=stored["source_file"], runs=run_named(run.get("label")),
            records_file=name if records_parsed else stored["source_file"],
            more=Notice("warn.aiperf_more_files", files=len(apart) - 1) if len(apart) > 1 else "",
            records=ours.get("num_requests"), records_s=_seconds(ours.get("duration_s")),
            summary=theirs.get("num_requests"), summary_s=_seconds(theirs.get("duration_s"))))
    return same


def _seconds(value: float | None) -> str:
    """A run's span as a notice gives it: seconds to a tenth, or "?" where the file gives none."""
    return "?" if value is None else f"{value:,.1f}"


def _with_summary(records: Mapping[str, Any], summary: Mapping[str, Any], summary_file: str) -> dict[str, Any]:
    """The columns of an AIPerf run's records, stored or parsed, that take its summary's: every run column
    the summary sets (AIPerf's figures over every record, its p99 ITL, the model, the load), and
    ``extra`` with the summary's and the summary's name (``figures_from``); within
    ``SPECVIZ_STORED_EXTRA_BYTES``, the summary's keys other code reads alone (:data:`_SUMMARY_KEPT`),
    said to be so, where the two together pass it."""
    given = {column: summary[column] for column in _FIGURES if summary.get(column) is not None}
    theirs, ours = json.loads(summary["extra"]), json.loads(records["extra"])
    kept = {key: theirs[key] for key in _SUMMARY_KEPT if key in theirs}
    return {**given, "extra": _within_extra_bytes(
        {**theirs, **ours, "figures_from": summary_file}, theirs,
        lambda note: {**kept, **ours, "figures_from": summary_file, "summary_extra": note})}


def _aiperf_summary_given(cur: duckdb.DuckDBPyConnection, name: str,
                          parsed: importers.Parsed) -> dict[int, tuple[str, str]]:
    """A finder of :data:`REPEATS`: the runs of a parsed AIPerf summary stored from the records of the
    same requests (:func:`_aiperf_same_requests`): index → (that file's name, the run's label). A
    stored run that took no summary yet takes this one's figures, model and load
    (:func:`_with_summary`); one that did is this summary's run where every figure the two give
    agrees (the same summary, another file), and another summary's otherwise: this one is then a run
    of its own, not mixed into it (an attack pass: a second summary had overwritten some of the first's
    figures and left the rest). The summary is not stored again where its run is found."""
    repeated: dict[int, tuple[str, str]] = {}
    for stored in _aiperf_same_requests(cur, name, parsed, records_parsed=False):
        if stored["run_index"] in repeated:  # one run takes a summary: another of the same requests stays
            continue
        run = parsed.runs[stored["run_index"]]
        if "figures_from" in json.loads(stored["extra"]):
            if _figures_agree(stored, run, rounding=True):
                repeated[stored["run_index"]] = (stored["source_file"], stored.get("label"))
            continue
        given = _with_summary(stored, run, name)
        label = given.get("label", stored.get("label"))
        _update_stored(cur, stored, given, Notice("warn.aiperf_summary_taken", other=name, runs=run_named(label)))
        repeated[stored["run_index"]] = (stored["source_file"], label)
    return repeated


def _aiperf_taking_summary(cur: duckdb.DuckDBPyConnection, name: str,
                           parsed: importers.Parsed) -> dict[str, tuple[str, str]]:
    """A finder of :data:`REPLACES`: the stored AIPerf summary of the same requests as a parsed file's
    records (:func:`_aiperf_same_requests`; one: a second summary of them stays its own run): its
    content hash → (file name, the label of the run kept). The parsed run takes the summary's figures,
    model and load (:func:`_with_summary`) and its place, so that the run is the same whichever file
    came first."""
    replaced: dict[str, tuple[str, str]] = {}
    taken: set[int] = set()
    for stored in _aiperf_same_requests(cur, name, parsed, records_parsed=True):
        if stored["run_index"] in taken:
            continue
        taken.add(stored["run_index"])
        run = parsed.runs[stored["run_index"]]
        run.update(_with_summary(run, stored, stored["source_file"]))
        replaced[stored["content_hash"]] = (stored["source_file"], run.get("label"))
    return replaced


# The formats one of whose runs another file may hold too: how the repeats are found, and the notice
# that names them, in the order they are asked (a run found by one is not asked of the next).
REPEATS = {"vllm-bench": ((_sweep_repeats, "warn.sweep_run_repeated"), (_appended_repeats, "warn.run_appended")),
            "aiperf": ((_aiperf_repeats, "warn.aiperf_run_repeated"), (_aiperf_summary_given, "warn.aiperf_summary_given")),
            "benchmark-report": ((_exported_repeats, "warn.exported_run_repeated"),
                                 (_given_to_lifecycle(False), "warn.report_figures_given"),
                                 (_given_to_lifecycle(True), "warn.report_repeated")),
            "sglang-bench": ((_appended_repeats, "warn.run_appended"),),
            "specforge-bench": ((_appended_repeats, "warn.run_appended"),),
            "inference-perf": ((_stored_from_later("summary", "per_request"), "warn.summary_repeated"),
                               (_stored_from_later("summary", "stage"), "warn.summary_of_stage"),
                               (_stored_from_later("stage", "per_request"), "warn.stage_load_given"))}
# The formats whose file may hold another stored file's run and more of it: how the stored files are
# found, whose imports the new file's run replaces, and the notice that names them.
REPLACES = {"aiperf": ((_aiperf_taking_summary, "warn.aiperf_summary_taken"),),
            "inference-perf": ((_replacing_earlier("per_request", "stage"), "warn.stage_load_taken"),
                                (_replacing_earlier("per_request", "summary"), "warn.summary_replaced"),
                                (_replacing_earlier("stage", "summary"), "warn.stage_replaced_summary"),
                                (_taking_report, "warn.report_figures_taken"))}


def repeat_notices(repeated: dict[int, tuple[str, str]], key: str) -> list[Notice]:
    """One notice ``key`` for each file that already holds some of the runs, naming the runs."""
    by_file: dict[str, list[str]] = {}
    for index in sorted(repeated):
        other, run_name = repeated[index]
        by_file.setdefault(other, []).append(run_name)
    return [Notice(key, other=other, runs=run_named(", ".join(filter(None, names)))) for other, names in by_file.items()]
