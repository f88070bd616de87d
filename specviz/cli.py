"""Command line: ``python -m specviz speedup|roofline|model-from-config|presets|ingest|runs|query``.

Every subcommand prints rows as JSON, CSV or a Markdown table. Errors exit 2 with one line on
stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import stat
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any, Sequence

import duckdb
import numpy as np
import pandas as pd

from . import export, importers, roofline, settings, spec
from .errors import SpecvizError
from .store import Store

__all__ = ["main", "speedup_rows", "roofline_rows", "format_rows"]


class UsageError(Exception):
    """A bad argument: reported on one line, exit 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse would print the usage block too
        raise UsageError(message)


def _plain(value: Any) -> Any:
    """numpy scalars to Python ones; NaN to None so that JSON stays valid."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def format_rows(rows: list[dict[str, Any]], fmt: str) -> str:
    """Render rows (dicts with the same keys) as ``json``, ``csv`` or ``md``."""
    rows = [{k: _plain(v) for k, v in row.items()} for row in rows]
    if fmt == "json":
        return json.dumps(rows, indent=2, ensure_ascii=False)
    keys = list(rows[0]) if rows else []
    if fmt == "csv":
        return export.csv_text(pd.DataFrame(rows, columns=keys)).rstrip("\n")
    cell = lambda v: "" if v is None else (f"{v:.4g}" if isinstance(v, float) else str(v))
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    lines += ["| " + " | ".join(cell(r[k]) for k in keys) + " |" for r in rows]
    return "\n".join(lines)


def speedup_rows(alphas: Sequence[float], gammas: Sequence[int] | None, *,
                 verify_costs: Sequence[float] | None = None, regime: str | None = None,
                 draft_cost: float = 0.05, gamma_max: int = 16) -> list[dict[str, Any]]:
    """Rows of the ``speedup`` subcommand: one per (α, γ, verify_cost); ``gammas=None`` picks the best γ.

    ``regime="compute"`` sets verify_cost = γ + 1 and ``"memory"`` sets it to 1.
    """
    rows = []
    costs: Sequence[float | None] = [None] if regime else (verify_costs or [1.0])
    for alpha, cost in itertools.product(alphas, costs):
        if regime:
            verify = (lambda g: g + 1.0) if regime == "compute" else 1.0
        else:
            verify = cost
        if gammas is None:
            best, _ = spec.optimal_gamma(alpha, draft_cost, verify, gamma_max)
            candidates = [best]
        else:
            candidates = gammas
        for gamma in candidates:
            v = verify(gamma) if callable(verify) else verify
            rows.append({
                "alpha": alpha, "gamma": gamma, "verify_cost": v, "draft_cost": draft_cost,
                "expected_tokens": spec.expected_tokens(alpha, gamma),
                "acceptance_rate_vllm": spec.acceptance_rate_from_alpha(alpha, gamma),
                "speedup": spec.speedup(alpha, gamma, v, draft_cost),
            })
    return rows


ROOFLINE_KEYS = ("batch", "context", "tokens_per_verify", "regime", "ridge_flop_per_byte",
                 "baseline_step_ms", "verify_step_ms", "draft_step_ms", "verify_cost", "draft_cost",
                 "speedup", "baseline_tokens_per_s", "spec_tokens_per_s")


def roofline_rows(result: dict[str, np.ndarray]) -> list[dict[str, Any]]:
    """Flatten an :func:`specviz.roofline.evaluate` result into rows with :data:`ROOFLINE_KEYS`."""
    flat = {k: np.ravel(result[k]) for k in ROOFLINE_KEYS}
    return [{k: _plain(flat[k][i]) for k in ROOFLINE_KEYS} for i in range(flat["batch"].size)]


def _resolve_model(name: str, models: dict[str, roofline.Model]) -> roofline.Model:
    if name in models:
        return models[name]
    path = Path(name)
    if path.suffix == ".json" and path.exists():
        return _config_model(path)
    raise UsageError(f"unknown model {name!r}: use a preset id ({', '.join(models)}) or a config.json path")


def _config_model(path: Path) -> roofline.Model:
    """A model from a config.json on disk: a regular file within the size limit uploads have."""
    try:
        info = path.stat()
    except OSError:
        raise UsageError(f"{path}: no such file") from None
    if not stat.S_ISREG(info.st_mode):
        raise UsageError(f"{path}: not a regular file; give the path of a config.json")
    limit = settings.get("SPECVIZ_MAX_CONFIG_BYTES")
    if info.st_size > limit:
        raise UsageError(f"{path} is {info.st_size:,} bytes; a config.json is at most {limit:,} (SPECVIZ_MAX_CONFIG_BYTES)")
    with open(path, "rb") as f:  # no more than the limit, even if the file grows meanwhile
        return roofline.model_from_config_bytes(f.read(limit + 1), path.name, limit)


def _resolve_gpu(args: argparse.Namespace, gpus: dict[str, roofline.GPU]) -> roofline.GPU:
    if args.gpu not in gpus:
        raise UsageError(f"unknown GPU {args.gpu!r}: use one of {', '.join(gpus)}")
    gpu = gpus[args.gpu]
    overrides = {k: v for k, v in (("tflops", args.tflops), ("bandwidth_tb_s", args.bandwidth))
                 if v is not None}
    return roofline.GPU(**{**asdict(gpu), **overrides})


def _gamma_arg(text: str) -> int | str:
    if text == "auto":
        return text
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"gamma must be a whole number or 'auto', got {text!r}") from None


def _build_parser() -> _Parser:
    parser = _Parser(prog="python -m specviz", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    fmt = dict(choices=("json", "csv", "md"), default="json", help="output format")

    p = sub.add_parser("speedup", help="speedup from α, γ and cost ratios")
    p.add_argument("--alpha", type=float, nargs="+", required=True)
    p.add_argument("--gamma", type=_gamma_arg, nargs="+", required=True)
    group = p.add_mutually_exclusive_group()
    group.add_argument("--verify-cost", type=float, nargs="+")
    group.add_argument("--regime", choices=("memory", "compute"))
    p.add_argument("--draft-cost", type=float, default=0.05)
    p.add_argument("--gamma-max", type=int, default=settings.get("SPECVIZ_GAMMA_MAX"))
    p.add_argument("--format", **fmt)

    p = sub.add_parser("roofline", help="step times and speedup on a GPU preset")
    p.add_argument("--gpu", required=True)
    p.add_argument("--target", required=True, help="preset id or config.json path")
    p.add_argument("--draft", help="preset id or config.json path; without it --draft-cost applies")
    p.add_argument("--batch", type=int, nargs="+", required=True)
    p.add_argument("--alpha", type=float, required=True)
    p.add_argument("--gamma", type=int, required=True)
    p.add_argument("--context", type=int, nargs="+", default=[0])
    p.add_argument("--realistic", action="store_true", help="start from the realistic knob preset")
    p.add_argument("--mfu", type=float)
    p.add_argument("--mbu", type=float)
    p.add_argument("--overlap", type=float)
    p.add_argument("--overhead-ms", type=float)
    p.add_argument("--draft-cost", type=float, default=0.05)
    p.add_argument("--tflops", type=float, help="override the preset's dense BF16 TFLOPS")
    p.add_argument("--bandwidth", type=float, help="override the preset's bandwidth, TB/s")
    p.add_argument("--format", **fmt)

    p = sub.add_parser("model-from-config", help="exact parameter counts from a config.json")
    p.add_argument("file", type=Path)
    p.add_argument("--kv-bytes", type=float, default=2.0, help="bytes per KV element (2 for BF16)")
    p.add_argument("--format", **fmt)

    p = sub.add_parser("presets", help="the shipped GPU and model presets with their sources")
    p.add_argument("--format", **fmt)

    db = dict(type=Path, default=None, help="DuckDB file (default: the SPECVIZ_DB setting)")
    p = sub.add_parser("ingest", help="import benchmark result files (or folders of them, such as a vllm bench "
                                      "sweep's output) into the store")
    p.add_argument("files", type=Path, nargs="+", help="result files, or folders read recursively")
    p.add_argument("--db", **db)
    p.add_argument("--format", choices=("json",), default="json")

    p = sub.add_parser("runs", help="the imported runs with their canonical columns")
    p.add_argument("--db", **db)
    p.add_argument("--format", choices=("json", "csv"), default="json")

    p = sub.add_parser("query", help="one read-only SQL statement over runs, requests and imports")
    p.add_argument("sql")
    p.add_argument("--db", **db)
    p.add_argument("--format", choices=("json", "csv"), default="json")
    return parser


def _open_store(path: Path | None) -> Store:
    return Store(path or settings.get("SPECVIZ_DB"), settings.get("SPECVIZ_DB_LOCK_TIMEOUT_S"))


def _frame_rows(frame: Any) -> list[dict[str, Any]]:
    """DataFrame rows as JSON-safe dicts (timestamps as ISO text, lists as lists)."""
    return json.loads(frame.to_json(orient="records", date_format="iso"))


def _expand(paths: list[Path]) -> list[Path]:
    """Files as given; a folder (not a symbolic link to one) as the result files under it."""
    return [f for p in paths for f in (importers.result_files(p) if p.is_dir() and not p.is_symlink() else [p])]


def _ingest(args: argparse.Namespace) -> tuple[str, int]:
    report: dict[str, list[Any]] = {"imported": [], "skipped": [], "errors": []}
    store = _open_store(args.db)
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
    store = _open_store(args.db)
    try:
        if args.command == "runs":
            frame = store.runs()
        else:
            frame = store.query(args.sql).frame
    finally:
        store.close()
    if args.format == "csv":
        return export.csv_text(frame).rstrip("\n")
    return json.dumps(_frame_rows(frame), indent=2)


def _run(args: argparse.Namespace) -> str:
    if args.command in ("runs", "query"):
        return _run_store_command(args)
    data_dir = settings.get("SPECVIZ_DATA_DIR")
    if args.command == "speedup":
        autos = [g for g in args.gamma if g == "auto"]
        if autos and len(args.gamma) > 1:
            raise UsageError("--gamma auto cannot be mixed with explicit values")
        gammas = None if autos else args.gamma
        rows = speedup_rows(args.alpha, gammas, verify_costs=args.verify_cost, regime=args.regime,
                            draft_cost=args.draft_cost, gamma_max=args.gamma_max)
        return format_rows(rows, args.format)
    if args.command == "roofline":
        models = roofline.load_models(data_dir)
        gpu = _resolve_gpu(args, roofline.load_gpus(data_dir))
        knobs = dict(roofline.REALISTIC) if args.realistic else {}
        knobs |= {k: v for k, v in (("mfu", args.mfu), ("mbu", args.mbu), ("overlap", args.overlap),
                                     ("overhead_ms", args.overhead_ms)) if v is not None}
        result = roofline.evaluate(
            gpu, _resolve_model(args.target, models),
            _resolve_model(args.draft, models) if args.draft else None,
            alpha=args.alpha, gamma=args.gamma, batch=np.array(args.batch)[:, None],
            context=np.array(args.context)[None, :], draft_cost=args.draft_cost, **knobs)
        return format_rows(roofline_rows(result), args.format)
    if args.command == "model-from-config":
        model = _config_model(args.file)
        row = {"params_total": model.params_total, "params_active": model.params_active,
               "kv_bytes_per_token": model.kv_bytes_per_token(args.kv_bytes)}
        row |= {k: v for k, v in asdict(model).items() if k not in row and k != "source"}
        return json.dumps(row, indent=2) if args.format == "json" else format_rows([row], args.format)
    gpus = [asdict(g) | {"ridge_flop_per_byte": g.ridge} for g in roofline.load_gpus(data_dir).values()]
    models = [{"id": k, **asdict(m)} for k, m in roofline.load_models(data_dir).items()]
    if args.format == "json":
        return json.dumps({"gpus": [{k: _plain(v) for k, v in g.items()} for g in gpus],
                           "models": models}, indent=2)
    return format_rows(gpus, args.format) + "\n\n" + format_rows(models, args.format)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (0, or 2 on any error)."""
    try:
        args = _build_parser().parse_args(argv)
        if args.command == "ingest":
            output, code = _ingest(args)
            print(output)
            return code
        print(_run(args))
    except (UsageError, SpecvizError, ValueError, OSError, duckdb.Error) as exc:
        print(f"specviz: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except Exception as exc:  # the last layer: a result or value nothing above foresaw
        print(f"specviz: error: unexpected {type(exc).__name__}: {_one_line(exc)}", file=sys.stderr)
        return 2
    return 0


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__
