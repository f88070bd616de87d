"""The store's commands: ``ingest`` imports result files (or folders of them) into the store, ``runs``
lists the imported runs, ``query`` runs one read-only SQL statement in the sandbox, ``export`` writes
stored runs as llm-d's benchmark report, ``remove`` removes one imported file's runs."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

from specviz import settings
from specviz.errors import Notice, SpecvizError
from specviz.results import benchmark_report, export, importers
from specviz.results.schema import STATED_METHODS

from .common import (DB, FORMAT, UsageError, file_name, format_rows, frame_rows, in_range, json_text, open_store,
                     words)

def _expand(paths: list[Path], report: dict[str, list[Any]], lang: str) -> list[Path]:
    """Files as given; a folder (not a symbolic link to one) as the result files under it, the files
    it passes over each a skipped entry of the report with why (:class:`specviz.results.importers.LeftOut`),
    and a folder that holds none is the report's error (it was passed over without a word); the
    report's words in ``lang``."""
    files = []
    for path in paths:
        if not (path.is_dir() and not path.is_symlink()):
            files.append(path)
            continue
        found = importers.folder_files(path)
        files += found.files
        # Why, in the words the Explorer's upload uses (:class:`specviz.results.importers.LeftOut`).
        report["skipped"] += [{"file": file_name(file), "message": words(Notice(f"exp.left_out.{why.reason}",
                                                                                 file=file_name(file.name),
                                                                                 holder=file_name(why.holder or ""),
                                                                           suffixes=", ".join(importers.RESULT_SUFFIXES)), lang)}
                              for file, why in sorted(found.left_out.items())]
        if not found.files:
            none = Notice("cli.ingest.no_files", path=file_name(path), suffixes=", ".join(importers.RESULT_SUFFIXES[:-1]),
                          last=importers.RESULT_SUFFIXES[-1])
            report["errors"].append({"file": file_name(path), "message": words(none, lang)})
    return files


def _ingest(args: argparse.Namespace) -> tuple[str, int]:
    report: dict[str, list[Any]] = {"imported": [], "skipped": [], "errors": []}
    if args.spec_method and args.spec_method != "none" and args.num_speculative_tokens is None:
        raise UsageError("cli.ingest.gamma_needed", method=args.spec_method)
    if args.num_speculative_tokens is not None and not args.spec_method:
        raise UsageError("cli.ingest.method_needed")
    store = open_store(args.db, create=True)
    try:
        for path in _expand(args.files, report, args.lang):
            try:
                result = store.import_path(path, settings.get("SPECVIZ_MAX_UPLOAD_BYTES"))
            except Exception as exc:  # whatever failed is this file's report; the other files go in
                error = exc if isinstance(exc, SpecvizError) else importers.as_ingest_error(file_name(path), exc)
                report["errors"].append({"file": file_name(path), "message": words(error, args.lang)})
                continue
            if args.synthetic and result.content_hash:
                store.flag_synthetic(result.content_hash)
            warnings = [words(warning, args.lang) for warning in result.warnings]
            # What the user stated these files ran, where a file says nothing of it (checked before any was read).
            stated = ({"stated_runs": store.state_speculation(result.content_hash, args.spec_method,
                                                              args.num_speculative_tokens)}
                      if args.spec_method and result.content_hash else {})
            if args.spec_method and result.runs_from:  # its runs are another file's import: state that one
                stated = {"stated_runs": 0}
                warnings.append(words(Notice("cli.ingest.stated_elsewhere", files=", ".join(result.runs_from)),
                                      args.lang))
            entry = {"file": file_name(path), "format": result.format, "runs": result.runs,
                     "requests": result.requests, "warnings": warnings, **stated}
            # A skipped file says why: from which file its runs came, or under which name it is stored.
            report[result.status].append(entry if result.status == "imported" else {
                "file": file_name(path), "message": words(result.reason, args.lang), "warnings": warnings, **stated})
    finally:
        store.close()
    if report["errors"]:  # exit 2 with one line on stderr, as every error (the files' reasons are in errors)
        failed = Notice("cli.ingest.failed", files=len(report["errors"]), imported=len(report["imported"]))
        print(f"specviz: {words(failed, args.lang)}", file=sys.stderr)
    return json_text(report), 2 if report["errors"] else 0


def _run_store_command(args: argparse.Namespace) -> str:
    store = open_store(args.db)
    try:
        if args.command == "runs":
            # Each run's import's origin, as the console's runs have it: the shipped examples are told
            # from the user's runs (an analyst's pass: 80 runs here beside the page's 32, said nowhere).
            frame = store.runs()
            origins = store.imports().set_index("content_hash")["origin"]
            frame = frame.assign(origin=frame["content_hash"].map(origins))
        else:
            result = store.query(args.sql)
            frame = result.frame
            if result.truncated:  # the rows are printed; that they are not all of them is said beside
                cut = Notice(f"cli.query.cut.{result.truncated}", rows=len(frame))
                print(f"specviz: {words(cut, args.lang)}", file=sys.stderr)
    finally:
        store.close()
    if args.format == "csv":
        return export.csv_text(export.visible_frame(frame)).rstrip("\n")
    if args.format == "md":
        # An infinite figure (a request rate of ∞: everything sent at once) as the CSV writes it, not as
        # the empty cell of no figure, which JSON's null had made it (an analyst's pass).
        rows = frame_rows(frame)
        for column in frame.select_dtypes("number").columns:
            for row, value in zip(rows, frame[column]):
                if isinstance(value, float) and math.isinf(value):
                    row[str(column)] = value
        return format_rows(rows, "md", [str(c) for c in frame.columns])
    return json_text(frame_rows(frame))



def _is_store_or_beside_it(output: Path, database: Path) -> bool:
    """Whether ``output`` is the store's file or one DuckDB keeps beside it (its write-ahead log
    ``.wal``, its ``.tmp`` folder), by name or as the same file: a report written over the log loses
    the writes it holds that are not yet in the store (an attack pass)."""
    own = [database, *(database.with_name(database.name + suffix) for suffix in (".wal", ".tmp"))]
    if output.resolve() in {path.resolve() for path in own}:
        return True
    return output.exists() and any(path.exists() and output.samefile(path) for path in own)


def _export(args: argparse.Namespace) -> tuple[str, int]:
    """The runs' benchmark reports, on stdout or in ``--output`` (then a JSON summary on stdout);
    each run's fields that the standard has no place for are named on stderr."""
    # "-", the usual word for standard output, not a file named "-" (an attack pass); "./-" names one.
    args.output = None if args.output in (None, "-") else Path(args.output)
    syntax = args.syntax or ("json" if args.output and args.output.suffix.lower() == ".json" else "yaml")
    database = Path(args.db or settings.get("SPECVIZ_DB"))
    if args.output is not None and _is_store_or_beside_it(args.output, database):
        raise UsageError("cli.export.output_is_store", output=str(args.output))
    store = open_store(args.db)
    try:
        made = benchmark_report.stored_reports(store, args.run_ids)
    finally:
        store.close()
    text = benchmark_report.dump(made, syntax)
    left_out = {report.run_id: report.left_out for report in made if report.left_out}
    for run_id, fields in left_out.items():
        left = Notice("cli.export.left_out", run=run_id, fields=", ".join(fields))
        print(f"specviz: {words(left, args.lang)}", file=sys.stderr)
    if args.output is None:
        return text.rstrip("\n"), 0
    try:
        args.output.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
    except OSError as exc:  # a folder, a missing folder, no right to write: said, not as [Errno 21]
        raise UsageError("cli.export.cannot_write", output=str(args.output), detail=exc.strerror or type(exc).__name__) from None
    return json_text({"file": str(args.output), "runs": [r.run_id for r in made], "left_out": left_out}), 0


def _remove(args: argparse.Namespace) -> tuple[str, int]:
    """Remove the one import ``args.name`` names (:meth:`specviz.results.store.Store.find_import`),
    with its runs and their requests; a name that names none or several removes nothing."""
    store = open_store(args.db)
    try:
        # A name of bytes that are no UTF-8 is looked for as ingest stored it (a CLI pass: DuckDB had
        # refused the surrogates argv gives them as, and it could be removed by id only).
        found = store.find_import(file_name(args.name))
        shared = store.sharing_imports(found["content_hash"])  # said before it is gone
        runs = store.remove_import(found["content_hash"])
    finally:
        store.close()
    for notice in shared:
        print(f"specviz: {words(notice, args.lang)}", file=sys.stderr)
    return json_text({"removed": {"file": found["source_file"], "id": found["content_hash"],
                                   "format": found["source_format"], "runs": runs,
                                   "requests": found["requests"]}}), 0


_INGEST_DOC = """\
Files as given, folders read recursively (a `vllm bench sweep` folder's runs once each: its
summary.json first, then each run=N.json skipped as already stored from it, or an error where its
figures differ; an inference-perf folder's stages once each, and its summary stored once, as the
run of its per-request report, a run of one stage once, with the stage's rate, and its
validation.json left out; an AIPerf sweep's cells once each).
JSON: the files `imported` (format, runs, requests, warnings), `skipped` (already stored, or a
folder's file that holds no run of its own or whose runs another file beside it holds, each with
why) and `errors`, each with its reason; exit 2 if any file failed, the others still imported.
A file whose runs say nothing of speculation (AIPerf's, genai-perf's, GuideLLM's: the client does not
know what the server ran) counts as plain decoding, a baseline; `--spec-method` and
`--num-speculative-tokens` say what its runs ran (the Explorer's "What they ran" does the same for a
stored file), and `stated_runs` counts the runs that took it: runs with no method, no γ and no
acceptance figure take both; runs that give a γ or an acceptance but no method (vLLM 0.25.1's MTP
run) take the method alone, their γ kept; runs stated before take it again; never what a file says.
"""

_EXPORT_DOC = """\
Each run as one report of llm-d-benchmark's benchmark report v0.2.1, checked against its published
schema: several runs are a YAML stream (`---` between reports) or a JSON array, and `specviz ingest`
reads either back, a run per report (into the store it came from, a report is recognised by its
`run.uid`, the run's id, and not stored twice). A run imported from a report is written back whole (its
`extra` holds the fields no column took). The method, draft and draft length go in the engine's
arguments (`native.args`: vLLM's `--speculative-config`, SGLang's `--speculative-algorithm`…), which
the import reads back. The acceptance figures and the workload have no place in the standard, nor has
the load of a run of another format without stored requests (the load requires their input length):
stderr names what each run left out.
"""

_REMOVE_DOC = """\
One imported file's runs and their per-request rows, named by the file's name as it was imported
(the `source_file` of `runs`) or by the import's id (its `content_hash` in `imports`, or that
hash's first 12 characters, which begin its runs' ids), in one transaction. JSON: the file, id,
format, runs and requests removed; on standard error, each other file that left runs to it as
already stored from it (they go with it: remove that file too and import it again to keep them),
and each file that was not stored at all as its runs were this one's (import it again to keep them).
A name or id that matches no import (the stored files are
named), or a name that matches several imports of other contents (their ids are named), exits 2
and removes nothing.
"""

def add_parsers(sub: argparse._SubParsersAction) -> None:
    """The store's subcommands."""
    p = sub.add_parser("ingest", description=_INGEST_DOC, help="import benchmark result files (or folders of them, such as a vllm bench "
                                      "sweep's output) into the store")
    p.add_argument("files", type=Path, nargs="+", help="result files, or folders read recursively")
    p.add_argument("--db", **DB)
    p.add_argument("--synthetic", action="store_true",
                   help="the acceptance in these files was set by the benchmark, not measured: their runs are "
                        "labelled so and left out of fits and claims (files that say so themselves are marked anyway)")
    p.add_argument("--spec-method", choices=STATED_METHODS,
                   help="what these files' runs ran where a file says nothing of speculation (AIPerf's, "
                        "genai-perf's): none for plain decoding, else the method, with --num-speculative-tokens; "
                        "what a file says is never changed")
    p.add_argument("--num-speculative-tokens", type=in_range("gamma"), metavar="GAMMA",
                   help="the draft length γ the server ran, with --spec-method")
    p.add_argument("--format", choices=("json",), default="json", help="output format")
    p.set_defaults(run=_ingest)

    p = sub.add_parser("runs", help="the imported runs with their canonical columns and their import's origin (user, or example for the shipped examples)")
    p.add_argument("--db", **DB)
    p.add_argument("--format", **FORMAT)
    p.set_defaults(run=lambda args: (_run_store_command(args), 0))

    p = sub.add_parser("query", help="one read-only SQL statement over runs, requests, imports, snapshots and "
                                     "windows",
                       description="One read-only SQL statement over the store's tables (runs, requests, imports, "
                                   "snapshots, windows), run in the SQL console's sandbox: at most SPECVIZ_SQL_MAX_ROWS "
                                   "rows and SPECVIZ_SQL_MAX_BYTES bytes (the rows within them are printed, exit 0, and "
                                   "that they are cut is said on stderr), SPECVIZ_SQL_TIMEOUT_S seconds. Whole numbers "
                                   "stay whole beside a NULL; JSON has no NaN or infinity, so both are null there, where "
                                   "CSV writes an infinity as inf and NaN as an empty cell.")
    p.add_argument("sql", help="one SELECT (or WITH … SELECT) statement")
    p.add_argument("--db", **DB)
    p.add_argument("--format", **FORMAT)
    p.set_defaults(run=lambda args: (_run_store_command(args), 0))

    p = sub.add_parser("export", description=_EXPORT_DOC, help="write stored runs as llm-d's benchmark report "
                                                               "v0.2.1 (YAML or JSON)")
    p.add_argument("run_ids", nargs="+", metavar="RUN_ID", help="ids of stored runs (the run_id column of runs)")
    p.add_argument("--format", choices=("benchmark-report",), required=True, help="the standard to write")
    p.add_argument("--as", dest="syntax", choices=benchmark_report.FORMATS, default=None,
                   help="YAML or JSON (default: JSON for an --output ending in .json, else YAML)")
    p.add_argument("--output", default=None, help="file to write (default, or -: standard output)")
    p.add_argument("--db", **DB)
    p.set_defaults(run=_export)

    p = sub.add_parser("remove", description=_REMOVE_DOC, help="remove one imported file's runs (and their "
                                                              "per-request rows) from the store")
    p.add_argument("name", metavar="IMPORT", help="the file's name as imported, or the import's id")
    p.add_argument("--db", **DB)
    p.set_defaults(run=_remove)
