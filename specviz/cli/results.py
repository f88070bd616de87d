"""The store's commands: ``ingest`` imports result files (or folders of them) into the store, ``runs``
lists the imported runs, ``query`` runs one read-only SQL statement in the sandbox."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from specviz import settings
from specviz.errors import SpecvizError
from specviz.results import export, importers

from .common import DB, frame_rows, open_store

def _expand(paths: list[Path]) -> list[Path]:
    """Files as given; a folder (not a symbolic link to one) as the result files under it."""
    return [f for p in paths for f in (importers.result_files(p) if p.is_dir() and not p.is_symlink() else [p])]


def _ingest(args: argparse.Namespace) -> tuple[str, int]:
    report: dict[str, list[Any]] = {"imported": [], "skipped": [], "errors": []}
    store = open_store(args.db)
    try:
        for path in _expand(args.files):
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


def _run_store_command(args: argparse.Namespace) -> str:
    store = open_store(args.db)
    try:
        if args.command == "runs":
            frame = store.runs()
        else:
            frame = store.query(args.sql).frame
    finally:
        store.close()
    if args.format == "csv":
        return export.csv_text(frame).rstrip("\n")
    return json.dumps(frame_rows(frame), indent=2)



def add_parsers(sub: argparse._SubParsersAction) -> None:
    """The store's subcommands."""
    p = sub.add_parser("ingest", help="import benchmark result files (or folders of them, such as a vllm bench "
                                      "sweep's output) into the store")
    p.add_argument("files", type=Path, nargs="+", help="result files, or folders read recursively")
    p.add_argument("--db", **DB)
    p.add_argument("--format", choices=("json",), default="json")
    p.set_defaults(run=_ingest)

    p = sub.add_parser("runs", help="the imported runs with their canonical columns")
    p.add_argument("--db", **DB)
    p.add_argument("--format", choices=("json", "csv"), default="json")
    p.set_defaults(run=lambda args: (_run_store_command(args), 0))

    p = sub.add_parser("query", help="one read-only SQL statement over runs, requests, imports, snapshots and "
                                     "windows")
    p.add_argument("sql")
    p.add_argument("--db", **DB)
    p.add_argument("--format", choices=("json", "csv"), default="json")
    p.set_defaults(run=lambda args: (_run_store_command(args), 0))
