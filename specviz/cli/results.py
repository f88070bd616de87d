"""The store's commands: ``ingest`` imports result files (or folders of them) into the store, ``runs``
lists the imported runs, ``query`` runs one read-only SQL statement in the sandbox."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from specviz import settings
from specviz.errors import SpecvizError
from specviz.results import export, importers

from .common import DB, FORMAT, format_rows, frame_rows, open_store

def _expand(paths: list[Path], report: dict[str, list[Any]]) -> list[Path]:
    """Files as given; a folder (not a symbolic link to one) as the result files under it, each file
    left out of them (another holds its runs) skipped in the report with its holder, and a folder
    that holds none is the report's error (it was passed over without a word)."""
    files = []
    for path in paths:
        if not (path.is_dir() and not path.is_symlink()):
            files.append(path)
            continue
        found, left = importers.walk_results(path)
        report["skipped"] += [{"file": str(file), "message": f"{file}: left out, its runs are read from {holder}"}
                              for file, holder in sorted(left.items())]
        if found:
            files += found
        else:
            report["errors"].append({"file": str(path), "message": f"{path}: no result files (.json, .jsonl or "
                                                                   f".csv) in this folder or the folders under it"})
    return files


def _ingest(args: argparse.Namespace) -> tuple[str, int]:
    report: dict[str, list[Any]] = {"imported": [], "skipped": [], "errors": []}
    store = open_store(args.db)
    try:
        for path in _expand(args.files, report):
            try:
                result = store.import_path(path, settings.get("SPECVIZ_MAX_UPLOAD_BYTES"))
            except Exception as exc:  # whatever failed is this file's report; the other files go in
                error = exc if isinstance(exc, SpecvizError) else importers.as_ingest_error(str(path), exc)
                report["errors"].append({"file": str(path), "message": str(error)})
                continue
            entry = {"file": str(path), "format": result.format, "runs": result.runs,
                     "requests": result.requests, "warnings": [str(w) for w in result.warnings]}
            report[result.status].append(entry if result.status == "imported"
                                         else {"file": str(path), "message": result.message})
    finally:
        store.close()
    return json.dumps(report, indent=2), 2 if report["errors"] else 0


# Why a console result was cut, on the command line (the page says it in the reader's language).
_CUT_BY = {"rows": "(SPECVIZ_SQL_MAX_ROWS)", "bytes": "(the result reached SPECVIZ_SQL_MAX_BYTES)"}


def _run_store_command(args: argparse.Namespace) -> str:
    store = open_store(args.db)
    try:
        if args.command == "runs":
            frame = store.runs()
        else:
            result = store.query(args.sql)
            frame = result.frame
            if result.truncated:  # the rows are printed; that they are not all of them is said beside
                print(f"specviz: the result is cut at its first {len(frame):,} rows {_CUT_BY[result.truncated]}",
                      file=sys.stderr)
    finally:
        store.close()
    if args.format == "csv":
        return export.csv_text(frame).rstrip("\n")
    if args.format == "md":
        return format_rows(frame_rows(frame), "md", [str(c) for c in frame.columns])
    return json.dumps(frame_rows(frame), indent=2)



_INGEST_DOC = """\
Files as given, folders read recursively (a `vllm bench sweep` folder's runs once each, an AIPerf
sweep's cells once each). JSON: the files `imported` (format, runs, requests, warnings), `skipped`
(already stored, or left out of a folder because another file holds their runs) and `errors`, each
with its reason; exit 2 if any file failed, the others still imported.
"""

def add_parsers(sub: argparse._SubParsersAction) -> None:
    """The store's subcommands."""
    p = sub.add_parser("ingest", description=_INGEST_DOC, help="import benchmark result files (or folders of them, such as a vllm bench "
                                      "sweep's output) into the store")
    p.add_argument("files", type=Path, nargs="+", help="result files, or folders read recursively")
    p.add_argument("--db", **DB)
    p.add_argument("--format", choices=("json",), default="json", help="output format")
    p.set_defaults(run=_ingest)

    p = sub.add_parser("runs", help="the imported runs with their canonical columns")
    p.add_argument("--db", **DB)
    p.add_argument("--format", **FORMAT)
    p.set_defaults(run=lambda args: (_run_store_command(args), 0))

    p = sub.add_parser("query", help="one read-only SQL statement over runs, requests, imports, snapshots and "
                                     "windows")
    p.add_argument("sql", help="one SELECT (or WITH … SELECT) statement")
    p.add_argument("--db", **DB)
    p.add_argument("--format", **FORMAT)
    p.set_defaults(run=lambda args: (_run_store_command(args), 0))
