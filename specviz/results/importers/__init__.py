"""Benchmark result files into canonical runs: one module per format, picked by content.

Each format module has a ``FORMAT`` (:class:`~specviz.results.importers.base.Format`): ``sniff(source)``
says how sure it is (0 to 1) that a file is of its format, ``parse(source)`` reads it. The registry
below asks every format and takes the surest; a file no format claims is refused up front,
naming the formats that were tried. A file is read and decoded once (:class:`Source`). Adding a
format is one module here, one line in :data:`REGISTRY` and its tests.

Formats: ``vllm-bench`` (vLLM's serving benchmark and sweep folders), ``guidellm``, ``genai-perf``,
``aiperf``, ``llmperf``, ``sglang-bench``, ``specforge-bench`` (SpecForge's grid of batch × draft steps over
SGLang), ``inference-perf`` (its lifecycle reports, a run per stage), ``benchmark-report`` (llm-d-benchmark's
benchmark report v0.1, v0.2 and v0.2.1, YAML or JSON, a run per report) and ``csv`` (a user's own table, read by the store with
DuckDB through :mod:`specviz.results.importers.user_csv`).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import NamedTuple

from specviz.results.synthetic import mark_synthetic

from . import aiperf, benchmark_report, genai_perf, guidellm, inference_perf, llmperf, sglang, specforge, user_csv, vllm
from .base import (CopiedSource, Format, IngestError, Parsed, Source, UnrecognisedColumnsError, as_ingest_error,
                   normalise_name)
from .user_csv import CSV_SYNONYMS

__all__ = ["REGISTRY", "FORMATS", "IngestError", "UnrecognisedColumnsError", "as_ingest_error", "Parsed",
           "Source", "CopiedSource", "Format", "CSV_SYNONYMS", "detect", "detect_format", "parse", "result_files",
           "walk_results", "FolderFiles", "RESULT_SUFFIXES", "normalise_name"]

REGISTRY: tuple[Format, ...] = (vllm.FORMAT, guidellm.FORMAT, genai_perf.FORMAT, aiperf.FORMAT, llmperf.FORMAT,
                                sglang.FORMAT, specforge.FORMAT, inference_perf.FORMAT, benchmark_report.FORMAT,
                                user_csv.FORMAT)
FORMATS: tuple[str, ...] = tuple(f.name for f in REGISTRY)


def detect(source: Source) -> Format:
    """The format a source most surely is.

    Raises
    ------
    IngestError
        If the file fails the checks every file passes (empty, binary, not UTF-8, malformed JSON,
        too dense for ``SPECVIZ_IMPORT_MEMORY_BYTES``), or no format claims it
        (``ingest.unknown_format``, naming the formats tried).
    """
    score, best = max(((f.sniff(source), f) for f in REGISTRY), key=lambda pair: pair[0])
    if score <= 0:
        raise IngestError("ingest.unknown_format", source.name, formats=", ".join(FORMATS))
    return best


def detect_format(name: str, data: bytes) -> str:
    """The name of the format of a file's content (see :data:`FORMATS`)."""
    return detect(Source(name, data)).name


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
    source.documents  # decoded here, where the call stack is shallow: nesting near Python's limit still reads
    parsed = detect(source).parse(source)
    source.check_extras(parsed.runs)
    parsed.warnings += mark_synthetic(parsed.runs, source.name)
    return parsed


_SWEEP_RUN = re.compile(r"run=\d+\.json")
_PARTIAL_STAGE = re.compile(r".*\.partial\.stage_(\d+)\.ya?ml", re.I)
RESULT_SUFFIXES = (".json", ".jsonl", ".csv", ".yaml", ".yml")


class FolderFiles(NamedTuple):
    """The result files of a folder (:func:`walk_results`): those to read, in name order, and those
    left out, each with the file beside it that holds its runs."""

    files: list[Path]
    left_out: list[tuple[Path, Path]]


def walk_results(folder: Path) -> FolderFiles:
    """The result files under a folder, read recursively in name order: ``.json``, ``.jsonl``,
    ``.csv``, ``.yaml`` and ``.yml`` files, but two kinds that repeat runs of another file beside
    them, so that each run is imported once:

    - a ``vllm bench sweep`` folder's ``run=N.json``, where its ``summary.json`` is there (it holds
      every run, written once they all finished; a sweep cut short before it has the run files read);
    - inference-perf's ``*.partial.stage_N.yaml`` (the benchmark report of stage N), where
      ``stage_N_lifecycle_metrics.json``, the same stage's figures, is there.

    Symbolic links to folders are not followed (no loop can hold the walk)."""
    found: list[Path] = []
    left_out: list[tuple[Path, Path]] = []
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        names = sorted(f for f in files if f.lower().endswith(RESULT_SUFFIXES))
        held_by = {f: "summary.json" for f in names if "summary.json" in names and _SWEEP_RUN.fullmatch(f)}
        for name in names:
            if (stage := _PARTIAL_STAGE.fullmatch(name)) and f"stage_{stage[1]}_lifecycle_metrics.json" in names:
                held_by[name] = f"stage_{stage[1]}_lifecycle_metrics.json"
        found += [Path(root) / f for f in names if f not in held_by]
        left_out += [(Path(root) / f, Path(root) / held_by[f]) for f in names if f in held_by]
    return FolderFiles(found, left_out)


def result_files(folder: Path) -> list[Path]:
    """The result files under a folder that :func:`walk_results` reads."""
    return walk_results(folder).files
