"""Benchmark result files into canonical runs: one module per format, picked by content.

Each format module has a ``FORMAT`` (:class:`~specviz.results.importers.base.Format`): ``sniff(source)``
says how sure it is (0 to 1) that a file is of its format, ``parse(source)`` reads it. The registry
below asks every format and takes the surest; a file no format claims is refused up front,
naming the formats that were tried. A file is read and decoded once (:class:`Source`). Adding a
format is one module here, one line in :data:`REGISTRY` and its tests.

Formats: ``vllm-bench`` (vLLM's serving benchmark and sweep folders), ``guidellm``, ``genai-perf``,
``aiperf``, ``llmperf``, ``sglang-bench``, ``specforge-bench`` (SpecForge's grid of batch × draft steps over
SGLang), ``inference-perf`` (its lifecycle reports, a run per stage; its per-request and Prometheus
reports), ``vllm-responses`` (vLLM's OpenAI responses with per-request speculative-decoding acceptance),
``benchmark-report`` (llm-d-benchmark's benchmark report v0.1, v0.2 and v0.2.1, YAML or JSON, a run per
report) and ``csv`` (a user's own table, read by the store with
DuckDB through :mod:`specviz.results.importers.user_csv`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Iterable, NamedTuple

from specviz.errors import Notice
from specviz.results.schema import RUN_COLUMNS
from specviz.results.synthetic import mark_synthetic

from . import (aiperf, benchmark_report, genai_perf, guidellm, inference_perf, llmperf, sglang, specforge, user_csv,
               vllm, vllm_responses)
from .base import Format, IngestError, Parsed, UnrecognisedColumnsError, as_ingest_error, normalise_name
from .source import OpenedSource, Source
from .user_csv import CSV_SYNONYMS

__all__ = ["REGISTRY", "FORMATS", "IngestError", "UnrecognisedColumnsError", "as_ingest_error", "Parsed",
           "Source", "OpenedSource", "Format", "CSV_SYNONYMS", "detect", "detect_format", "parse", "result_files",
           "normalise_name", "folder_files", "select_files", "read_order", "FolderFiles", "LeftOut", "RESULT_SUFFIXES",
           "UNREAD", "unread_notices"]

REGISTRY: tuple[Format, ...] = (vllm.FORMAT, guidellm.FORMAT, genai_perf.FORMAT, aiperf.FORMAT, llmperf.FORMAT,
                                sglang.FORMAT, specforge.FORMAT, inference_perf.FORMAT, vllm_responses.FORMAT,
                                benchmark_report.FORMAT,
                                user_csv.FORMAT)
FORMATS: tuple[str, ...] = tuple(f.name for f in REGISTRY)


def _claimant(source: Source) -> Format | None:
    """The format that claims a source from its head alone (:attr:`Format.claims`), if one does."""
    return next((f for f in REGISTRY if f.claims is not None and f.claims(source)), None)


def _is_model_config(source: Source) -> bool:
    """Whether a file is a Hugging Face model's ``config.json``: one object naming its
    ``model_type`` or ``architectures``."""
    docs = source.documents if source.is_json else []
    return len(docs) == 1 and isinstance(docs[0], dict) and bool({"model_type", "architectures"} & docs[0].keys())


def _is_json_schema(source: Source) -> bool:
    """Whether a source is a JSON Schema (the llm-d benchmark report's, shipped beside its example
    reports): one object of ``properties`` with ``$schema``, ``$defs`` or ``definitions`` beside them."""
    docs = source.documents if source.is_json else []
    return (len(docs) == 1 and isinstance(docs[0], dict) and isinstance(docs[0].get("properties"), dict)
            and bool({"$schema", "$defs", "definitions"} & docs[0].keys()))


def detect(source: Source) -> Format:
    """The format a source most surely is.

    Raises
    ------
    IngestError
        If the file fails the checks every file passes (empty, binary, not UTF-8, malformed JSON,
        too dense for ``SPECVIZ_IMPORT_MEMORY_BYTES``), or no format claims it
        (``ingest.unknown_format``, naming the formats tried; ``ingest.csv_delimiter`` for a table
        whose fields are separated by semicolons, tabs or pipes, not commas; ``ingest.metrics_text``
        for a server's Prometheus metrics, which the Live page and ``specviz metrics`` read;
        ``ingest.inference_perf_validation`` for inference-perf's ``validation.json``, its findings
        on its own reports; ``ingest.model_config`` for a model's ``config.json``, which the sidebar
        and ``specviz calc --target-config`` read; ``ingest.json_schema`` for a JSON Schema, such as
        the llm-d benchmark report's); for a table of comma-separated fields that is not one a column
        with no name, one too long, a row of other fields than the header's or a quote never closed
        (:func:`specviz.results.importers.user_csv.table_problem`).
    """
    claimed = _claimant(source)
    if claimed is not None:
        return claimed
    score, best = max(((f.sniff(source), f) for f in REGISTRY), key=lambda pair: pair[0])
    if score <= 0:
        if (delimiter := user_csv.other_delimiter(source)) is not None:
            raise IngestError("ingest.csv_delimiter", source.name, delimiter=Notice(f"ingest.delimiter.{delimiter}"))
        if not source.is_json and _EXPOSITION.search(source.head):
            raise IngestError("ingest.metrics_text", source.name)
        if inference_perf.is_validation(source):
            raise IngestError("ingest.inference_perf_validation", source.name)
        if _is_model_config(source):
            raise IngestError("ingest.model_config", source.name)
        if _is_json_schema(source):
            raise IngestError("ingest.json_schema", source.name)
        if (problem := user_csv.table_problem(source)) is not None:
            raise problem
        raise IngestError("ingest.unknown_format", source.name, formats=", ".join(FORMATS))
    return best


# A server's /metrics as Prometheus text: a "# TYPE name kind" line (every exporter writes one per
# metric family), which no benchmark result has. Read by specviz.live, not imported as runs.
_EXPOSITION = re.compile(r"^# TYPE [A-Za-z_:][\w:]* (?:counter|gauge|histogram|summary|untyped)\s*$", re.MULTILINE)


def detect_format(name: str, data: bytes) -> str:
    """The name of the format of a file's content (see :data:`FORMATS`)."""
    return detect(Source(name, data)).name


# What a run measured: a run with none of them and no request rows (a file whose figures were null,
# text or past a float's range) is stored with its settings and extra, and drawn in no chart; the
# import says so.
MEASURED = tuple(column for column in RUN_COLUMNS
                 if column.endswith(("_ms", "_throughput")) or column in (
                     "duration_s", "acceptance_rate", "acceptance_length", "per_position_acceptance", "zero_accept_rate"))


def parse(name: str, data: bytes | Source) -> Parsed:
    """Detect the format of a file and parse it; JSON is decoded once.

    Parameters
    ----------
    name : str
        The file's name as the user gave it.
    data : bytes or Source
        Its content, or a source already made of it (the store makes one to hash and copy a file).

    Returns
    -------
    Parsed
        The runs, those whose acceptance the benchmark set flagged (:mod:`specviz.results.synthetic`); for a user's own CSV (format ``csv``) none: its rows are read by the store's
        DuckDB path (:meth:`specviz.results.store.Store.import_file`).

    Raises
    ------
    IngestError
        If the file is not one of the formats, of the right format but the wrong shape, or would
        take more memory than ``SPECVIZ_IMPORT_MEMORY_BYTES`` to read.
    """
    source = data if isinstance(data, Source) else Source(name, data)
    claimed = _claimant(source)  # a file one format claims from its head is not decoded whole here
    if claimed is None:
        source.documents  # decoded here, where the call stack is shallow: nesting near Python's limit still reads
    parsed = (claimed or detect(source)).parse(source)
    source.check_extras(parsed.runs)
    parsed.warnings += mark_synthetic(parsed.runs, source.name)
    # A run whose requests the file gives has their figures, if not its own.
    with_requests = set(parsed.requests["run_index"]) if "run_index" in parsed.requests else set()
    if empty := sum(index not in with_requests and not any(run.get(column) is not None for column in MEASURED)
                    for index, run in enumerate(parsed.runs)):
        parsed.warnings.append(Notice("warn.runs_without_figures", runs=empty, of=len(parsed.runs)))
    return parsed



# What a ``vllm bench sweep serve`` folder holds beside its runs (vLLM 0.33.0,
# ``vllm/benchmarks/sweep/serve.py``): the failure records of runs and servers, and a warmup.
_SWEEP_FAILURE = re.compile(r".*[.-]failure\.json")
_SWEEP_FOLDER = ("SERVE-", "BENCH-")
_STAGE_REPORT = re.compile(r"stage_\d+_lifecycle_metrics\.json")
# inference-perf's benchmark report of stage N (llm-d's standard), read after the lifecycle reports.
_PARTIAL_STAGE = re.compile(r".*\.partial\.stage_\d+\.ya?ml", re.IGNORECASE)
# inference-perf's lifecycle reports, beside which its validation.json is its check of them.
_LIFECYCLE_REPORT = re.compile(r"(?:stage_\d+|summary|per_request)_lifecycle_metrics\.json")
# The llm-d benchmark report's JSON Schema, which its repository ships beside the example reports
# (specviz's own copy is data/benchmark_report/): a schema, no result.
_REPORT_SCHEMA = re.compile(r"br_v\d+(?:_\d+)*_json_schema\.json")
RESULT_SUFFIXES = (".json", ".jsonl", ".csv", ".yaml", ".yml")
"""What a folder's result files end in."""
_TEXT_SUFFIXES = (".txt", ".prom")  # what a /metrics scrape saved beside results ends in


class LeftOut(NamedTuple):
    """Why a folder's file is passed over: ``sweep_table`` (a vLLM sweep's ``summary.csv``, the table
    of every run of the sweep folders beside it, which are read from their own files),
    ``sweep_warmup`` (its ``warmup.json``, which vLLM leaves out of the sweep's summary too),
    ``sweep_failure`` (a ``*failure.json``: a failed run's or server's error, no result),
    ``not_a_result`` or ``text_file`` (a file whose name ends in none of :data:`RESULT_SUFFIXES`; the
    second a ``.txt`` or ``.prom``, which may be a /metrics scrape),
    ``run_config`` (the ``config.yaml`` of an
    inference-perf run folder: its load and server settings, no result), ``validation`` (the
    ``validation.json`` beside inference-perf's lifecycle reports: its findings on them, no result;
    :func:`specviz.results.importers.inference_perf.is_validation`), ``report_schema`` (the llm-d
    benchmark report's JSON Schema, ``br_v0_2_1_json_schema.json``), or AIPerf's
    (:func:`specviz.results.importers.aiperf.left_out`): ``aiperf_copy`` (a run's CSV or per-request
    lines beside its ``profile_export_aiperf.json``, another export's CSV beside its JSON),
    ``aiperf_trial`` (a repetition of a sweep cell whose run is the aggregate over its repetitions)
    or ``aiperf_sweep`` (a sweep's summary, whose cells are read from their own files under
    ``holder``); ``holder`` is the file that holds its runs, if any."""

    reason: str
    holder: PurePath | None = None


@dataclass(frozen=True)
class FolderFiles:
    """The result files of a folder in the order to import them, and the files passed over."""

    files: list[PurePath]
    left_out: dict[PurePath, LeftOut]


def select_files(paths: Iterable[PurePath]) -> FolderFiles:
    """Which of a folder's result files to import, and in which order; every other one accounted
    for in ``left_out``. Pure: the paths are only read as names (a folder on disk,
    :func:`folder_files`, or the relative paths of a folder uploaded in a browser).

    The files are taken folder by folder, each folder's files before its subfolders', in name order.
    A ``vllm bench sweep serve`` folder (``SERVE--…-BENCH--…``) holds ``summary.json`` and the
    ``run=N.json`` files whose objects it repeats (it is written once they all finished): the
    summary comes first, so that each run is stored from it once and each run file is then
    reported as already stored from it (:meth:`specviz.results.store.Store.import_file`), or
    refused where its figures differ; where a sweep was cut short before writing it, the run
    files are read. A sweep's ``summary.csv`` (above the sweep folders), ``warmup.json`` and
    failure records, inference-perf's ``config.yaml`` and its ``validation.json``, the benchmark
    report's JSON Schema, and AIPerf's files
    that repeat another's runs (a sweep cell is one run), are passed over (:class:`LeftOut`), as is
    every file whose name does not end in :data:`RESULT_SUFFIXES` (``not_a_result``, a README;
    ``text_file``, a ``.txt`` or ``.prom`` that may be a /metrics scrape), but those of hidden files
    and folders (``.git``, ``.DS_Store``), which are passed over unsaid.
    inference-perf's benchmark report of a stage (``*.partial.stage_N.yaml``) is read after the
    folder's other files: the stored stage's run takes the p99s it gives, and it is not stored again
    (:func:`specviz.results.store.repeats._given_to_lifecycle`)."""
    by_folder: dict[PurePath, list[str]] = {}
    subfolders: dict[PurePath, set[str]] = {}
    files: list[PurePath] = []
    left_out: dict[PurePath, LeftOut] = {}
    for path in paths:
        if path.name.lower().endswith(RESULT_SUFFIXES):
            by_folder.setdefault(path.parent, []).append(path.name)
        elif not any(part.startswith(".") and part not in (".", "..") for part in path.parts):
            # Said, a hidden file or folder's aside (.git's objects, .DS_Store); a scrape saved as text
            # gets a word on what reads it.
            left_out[path] = LeftOut("text_file" if path.suffix.lower() in _TEXT_SUFFIXES else "not_a_result")
        for child in (path, *path.parents[:-1]):
            subfolders.setdefault(child.parent, set()).add(child.name)
    for here in sorted(by_folder, key=lambda folder: folder.parts):  # a folder before its subfolders
        found = sorted(by_folder[here])
        sweeps_below = any(d.startswith(_SWEEP_FOLDER) for d in subfolders.get(here, ()))
        # Stable: the rest in name order.
        for name in sorted(found, key=read_order):
            if name == "summary.csv" and sweeps_below:
                left_out[here / name] = LeftOut("sweep_table")
            elif name == "warmup.json" and here.name.startswith(_SWEEP_FOLDER):
                left_out[here / name] = LeftOut("sweep_warmup")
            elif _SWEEP_FAILURE.fullmatch(name) and (here.name.startswith(_SWEEP_FOLDER) or sweeps_below):
                left_out[here / name] = LeftOut("sweep_failure")
            elif name == "config.yaml" and any(_STAGE_REPORT.fullmatch(f) for f in found):
                left_out[here / name] = LeftOut("run_config")
            elif name == "validation.json" and any(_LIFECYCLE_REPORT.fullmatch(f) for f in found):
                left_out[here / name] = LeftOut("validation")
            elif _REPORT_SCHEMA.fullmatch(name):
                left_out[here / name] = LeftOut("report_schema")
            else:
                files.append(here / name)
    left_out.update((path, LeftOut(*why)) for path, why in aiperf.left_out(files).items())
    return FolderFiles([f for f in files if f not in left_out], left_out)


def read_order(name: str) -> tuple[bool, bool]:
    """A sort key of file names in the order :func:`select_files` reads a folder's files: a sweep's
    ``summary.json`` first, inference-perf's ``*.partial.stage_N.yaml`` last, the rest as they were
    (the sort is stable). The Explorer reads files chosen one by one in it too: ``run=0.json`` before
    its ``summary.json`` had split one sweep into two lines, and a stage's report before its
    ``stage_N_lifecycle_metrics.json`` was reported imported, then taken by it."""
    return name != "summary.json", bool(_PARTIAL_STAGE.fullmatch(name))


UNREAD = ("not_a_result", "text_file")
"""The :class:`LeftOut` reasons of a folder's files that are no results at all."""


def unread_notices(left_out: dict[PurePath, LeftOut], most: int) -> list[Notice]:
    """The files of ``left_out`` that are no results (:data:`UNREAD`) in one line, by path, at most
    ``most`` named (``exp.left_out.not_results``, or ``..._more`` with how many more), and those
    that may be a /metrics scrape saved as text in a line that says what reads them
    (``exp.left_out.text_files``), as a file chosen alone is told (an analyst's pass); none where
    there are none."""
    unread = sorted(str(path) for path, why in left_out.items() if why.reason in UNREAD)
    if not unread:
        return []
    key = "exp.left_out.not_results_more" if len(unread) > most else "exp.left_out.not_results"
    said = [Notice(key, files=", ".join(unread[:most]), more=len(unread) - most, suffixes=", ".join(RESULT_SUFFIXES))]
    if scrapes := sorted(str(path) for path, why in left_out.items() if why.reason == "text_file"):
        key = "exp.left_out.text_files_more" if len(scrapes) > most else "exp.left_out.text_files"
        said.append(Notice(key, files=", ".join(scrapes[:most]), more=len(scrapes) - most))
    return said


def folder_files(folder: Path) -> FolderFiles:
    """:func:`select_files` of the files under a folder on disk, read recursively. Symbolic links
    to folders are not followed (no loop can hold the walk)."""
    return select_files(Path(root) / name for root, _, names in os.walk(folder) for name in names)


def result_files(folder: Path) -> list[Path]:
    """The result files under a folder to import, in order (:func:`folder_files`)."""
    return [Path(file) for file in folder_files(folder).files]
