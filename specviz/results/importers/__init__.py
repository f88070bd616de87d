"""Benchmark result files into canonical runs: one module per format, picked by content.

Each format module has a ``FORMAT`` (:class:`~specviz.results.importers.base.Format`): ``sniff(source)``
says how sure it is (0 to 1) that a file is of its format, ``parse(source)`` reads it. The registry
below asks every format and takes the surest; a file no format claims is refused up front,
naming the formats that were tried. A file is read and decoded once (:class:`Source`). Adding a
format is one module here, one line in :data:`REGISTRY` and its tests.

Formats: ``vllm-bench`` (vLLM's serving benchmark and sweep folders), ``guidellm``, ``genai-perf``,
``aiperf``, ``llmperf``, ``sglang-bench``, ``specforge-bench`` (SpecForge's grid of batch × draft steps over
SGLang), ``inference-perf`` (its lifecycle reports, a run per stage) and ``csv`` (a user's own table, read by the store with
DuckDB through :mod:`specviz.results.importers.user_csv`).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from . import aiperf, genai_perf, guidellm, inference_perf, llmperf, sglang, specforge, user_csv, vllm
from .base import (CopiedSource, Format, IngestError, Parsed, Source, UnrecognisedColumnsError, as_ingest_error,
                   normalise_name)
from .user_csv import CSV_SYNONYMS

__all__ = ["REGISTRY", "FORMATS", "IngestError", "UnrecognisedColumnsError", "as_ingest_error", "Parsed",
           "Source", "CopiedSource", "Format", "CSV_SYNONYMS", "detect", "detect_format", "parse", "result_files",
           "walk_results", "normalise_name"]

REGISTRY: tuple[Format, ...] = (vllm.FORMAT, guidellm.FORMAT, genai_perf.FORMAT, aiperf.FORMAT, llmperf.FORMAT,
                                sglang.FORMAT, specforge.FORMAT, inference_perf.FORMAT, user_csv.FORMAT)
FORMATS: tuple[str, ...] = tuple(f.name for f in REGISTRY)


def _claimant(source: Source) -> Format | None:
    """The format that claims a source from its head alone (:attr:`Format.claims`), if one does."""
    return next((f for f in REGISTRY if f.claims is not None and f.claims(source)), None)


def detect(source: Source) -> Format:
    """The format a source most surely is.

    Raises
    ------
    IngestError
        If the file fails the checks every file passes (empty, binary, not UTF-8, malformed JSON,
        too dense for ``SPECVIZ_IMPORT_MEMORY_BYTES``), or no format claims it
        (``ingest.unknown_format``, naming the formats tried).
    """
    claimed = _claimant(source)
    if claimed is not None:
        return claimed
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
        The runs; for a user's own CSV (format ``csv``) none: its rows are read by the store's
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
    return parsed


_SWEEP_RUN = re.compile(r"run=\d+\.json")


def walk_results(folder: Path) -> tuple[list[Path], dict[Path, Path]]:
    """The result files under a folder, read recursively in name order (``.json``, ``.jsonl`` and
    ``.csv`` files), and the files left out of them because another file or folder holds their
    runs, each with that holder: so that each run is imported once, and every file is accounted for.

    A ``vllm bench sweep`` folder's ``summary.json`` holds every run of its ``run=N.json`` files (it
    is written once they all finished): where it is there, the run files are left out; where a
    sweep was cut short before writing it, the run files are read. AIPerf's files are left out by
    :func:`specviz.results.importers.aiperf.left_out` (a cell of a sweep one run). Symbolic links to
    folders are not followed (no loop can hold the walk)."""
    found: list[Path] = []
    left: dict[Path, Path] = {}
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        names = sorted(f for f in files if f.lower().endswith((".json", ".jsonl", ".csv")))
        if "summary.json" in names:
            left.update({Path(root) / f: Path(root) / "summary.json" for f in names if _SWEEP_RUN.fullmatch(f)})
        found += [Path(root) / f for f in names if Path(root) / f not in left]
    left.update(aiperf.left_out(found))
    return [f for f in found if f not in left], left


def result_files(folder: Path) -> list[Path]:
    """The result files under a folder that :func:`walk_results` reads."""
    return walk_results(folder)[0]
