"""Command line: ``python -m specviz speedup|roofline|calc|claim|simulate|vllm-config|serve|model-from-config|
presets|fit|ingest|runs|query|metrics|record|prometheus``.

``claim`` checks a claimed speedup on the scenario of a calculator link (:func:`claim_row`, the Claims
page's check) or against costs given as ratios (:func:`claim_at_costs_row`); ``simulate`` is the
Latency view's simulation (:func:`simulate_row`); ``vllm-config`` writes ``vllm serve`` for a version,
target and draft (:func:`vllm_config_row`); ``serve`` writes the vLLM or SGLang command for a link's
scenario (:func:`serve_row`, the Deploy view's).

Every subcommand prints rows as JSON, CSV or a Markdown table. Errors exit 2 with one line on
stderr, never a traceback.

``metrics`` reads a ``/metrics`` URL or a file of exposition text (and, with ``--since``, an earlier
one) and prints the speculative-decoding figures per model (:func:`metrics_rows`). ``record`` polls a
source into the store (:func:`specviz.results.recorder.record`): one progress line per poll on stderr, and a
JSON summary on stdout when it ends (after ``--count`` polls, or Ctrl-C).

``fit`` calibrates the step model (:func:`specviz.model.calibration.calibrate`) on each series of a CSV of
measured speedups and predicts the rows of a second CSV with a band (:func:`fit_tables`). Rows of
both CSVs are counted from 1 after the header (blank lines not counted), in messages and in the
``row`` of each prediction.
"""

from __future__ import annotations

import argparse
import csv
import io
import itertools
import json
import math
import re
import stat
import sys
import time
import urllib.parse
from datetime import datetime, timezone
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Sequence

import duckdb
import numpy as np
import pandas as pd

from . import calculator, i18n, scenario, settings
from .results import export, importers, recorder
from .advice import claims, commands
from .live import exposition, prometheus, scrape
from .model import calibration, roofline, simulate, spec, step
from .errors import SpecvizError
from .results.store import Store

__all__ = ["main", "speedup_rows", "roofline_rows", "format_rows", "fit_tables", "metrics_rows", "state_row",
           "poll_line", "prometheus_rows", "calc_row", "FIT_COLUMNS", "FIT_OPTIONAL_COLUMNS", "METRICS_KEYS"]


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
                 draft_cost: float = spec.SEED_DRAFT_COST, gamma_max: int = 16) -> list[dict[str, Any]]:
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
    """Flatten an :func:`specviz.model.roofline.evaluate` result into rows with :data:`ROOFLINE_KEYS`."""
    flat = {k: np.ravel(result[k]) for k in ROOFLINE_KEYS}
    return [{k: _plain(flat[k][i]) for k in ROOFLINE_KEYS} for i in range(flat["batch"].size)]


def _resolve_model(name: str, models: dict[str, roofline.Model]) -> roofline.Model:
    if name in models:
        return models[name]
    path = Path(name)
    if path.suffix == ".json" and path.exists():
        return _config_model(path)
    raise UsageError(f"unknown model {name!r}: use a preset id ({', '.join(models)}) or a config.json path")


def _read_limited(path: Path, kind: str, setting: str) -> bytes:
    """The bytes of a regular file of at most ``setting`` bytes (``kind`` names such a file in the
    messages), read no further than the limit even if the file grows meanwhile."""
    try:
        info = path.stat()
    except OSError:
        raise UsageError(f"{path}: no such file") from None
    if not stat.S_ISREG(info.st_mode):
        raise UsageError(f"{path}: not a regular file; give the path of {kind}")
    limit = settings.get(setting)
    if info.st_size > limit:
        raise UsageError(f"{path} is {info.st_size:,} bytes; {kind} is at most {limit:,} ({setting})")
    try:
        with open(path, "rb") as f:
            data = f.read(limit + 1)
    except OSError as exc:
        raise UsageError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if len(data) > limit:
        raise UsageError(f"{path} is over {limit:,} bytes, the most {kind} may have ({setting})")
    return data


def _config_model(path: Path) -> roofline.Model:
    """A model from a config.json on disk: a regular file within the size limit uploads have."""
    data = _read_limited(path, "a config.json", "SPECVIZ_MAX_CONFIG_BYTES")
    return roofline.model_from_config_bytes(data, path.name, settings.get("SPECVIZ_MAX_CONFIG_BYTES"))


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


# --- fit: calibrate the step model on measured series, predict other rows ---------------------

FIT_COLUMNS = ("series", "gpu", "target", "draft", "gamma", "batch", "context", "acceptance_length")
FIT_OPTIONAL_COLUMNS = ("tp", "weight_dtype", "kv_dtype", "engine", "tree_tokens")
_DRAFT_KINDS = ("eagle", "eagle3", "ngram", "self")
# (weights, KV cache) -> step.PRECISIONS: the combinations the step model has.
_PRECISION_OF = {("bf16", "bf16"): "bf16", ("fp8", "fp8"): "fp8", ("fp8", "bf16"): "fp8-weights",
                 ("int4", "bf16"): "int4-weights"}
# What a series shares on every row, and the columns that give it (for messages).
_SETTING_COLUMNS = {"gpu": "gpu", "target": "target", "draft": "draft", "tp": "tp",
                    "precision": "weight_dtype/kv_dtype", "engine": "engine", "tree_tokens": "tree_tokens"}


@dataclass
class _FitRow:
    number: int
    series: str
    setting: dict[str, Any]  # key -> resolved value, for the keys a cell gave (P.csv: may be partial)
    texts: dict[str, str]  # key -> the cells' text, for messages
    gamma: float
    batch: float
    context: float
    acceptance_length: float | None
    measured: float | None = None


@dataclass
class _Series:
    name: str
    rows: list[_FitRow] = field(default_factory=list)


def _read_csv(path: Path) -> tuple[list[str], list[tuple[int, dict[str, str]]]]:
    """A CSV as its lower-cased header and its non-blank rows (numbered from 1), read like every
    file the command line reads: a regular file, within ``SPECVIZ_MAX_UPLOAD_BYTES``, UTF-8."""
    data = _read_limited(path, "a CSV", "SPECVIZ_MAX_UPLOAD_BYTES")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not UTF-8 text; save the CSV as UTF-8") from None
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        records = [r for r in reader if any(cell.strip() for cell in r)]
    except csv.Error as exc:
        raise UsageError(f"{path}, line {reader.line_num}: not a readable CSV ({exc})") from None
    if not records:
        raise UsageError(f"{path}: empty; the first line names the columns ({', '.join(FIT_COLUMNS)})")
    header = [name.strip().lower() for name in records[0]]
    repeated = sorted({name for name in header if name and header.count(name) > 1})
    if repeated:
        raise UsageError(f"{path}: column {repeated[0]!r} appears more than once in the header")
    rows = []
    for number, record in enumerate(records[1:], start=1):
        if len(record) > len(header):
            raise UsageError(f"{path}, row {number}: {len(record)} cells, but the header names {len(header)} columns")
        rows.append((number, {name: cell.strip() for name, cell in zip(header, record) if name}))
    if not rows:
        raise UsageError(f"{path}: no rows below the header")
    return header, rows


class _FitReader:
    """Turns the cells of fit CSVs into settings and numbers, with messages that name the file,
    the row and the column; presets and config.json files are read once."""

    def __init__(self) -> None:
        data_dir = settings.get("SPECVIZ_DATA_DIR")
        self.gpus = roofline.load_gpus(data_dir)
        self.models = roofline.load_models(data_dir)
        self.engines = calibration.load_engines(data_dir)
        self.configs: dict[Path, roofline.Model] = {}

    @staticmethod
    def where(path: Path, number: int, column: str) -> str:
        return f"{path}, row {number}, column {column}"

    def number(self, path: Path, number: int, column: str, text: str, *, low: float, low_open: bool = False,
               whole: bool = False) -> float:
        where = self.where(path, number, column)
        if not text:
            raise UsageError(f"{where}: empty; give a number")
        try:
            value = float(text)
        except ValueError:
            raise UsageError(f"{where}: {text!r} is not a number") from None
        too_low = value <= low if low_open else value < low
        if not math.isfinite(value) or too_low or (whole and not value.is_integer()):
            kind = "a whole number" if whole else "a finite number"
            bound = f"above {low:g}" if low_open else f"of {low:g} or more"
            raise UsageError(f"{where}: must be {kind} {bound}, got {text!r}")
        return value

    def model(self, path: Path, number: int, column: str, text: str) -> roofline.Model:
        if text in self.models:
            return self.models[text]
        where = self.where(path, number, column)
        if not text or not (text.lower().endswith(".json") or "/" in text or "\\" in text):
            raise UsageError(f"{where}: unknown model {text!r}: use a preset id ({', '.join(self.models)})"
                             f"{', eagle, eagle3, ngram, self' if column == 'draft' else ''} or a config.json path")
        candidate = Path(text).expanduser()
        if not candidate.is_absolute() and not candidate.exists():
            candidate = path.parent / candidate  # relative to the CSV's folder when not to the working one
        key = candidate.resolve()
        if key not in self.configs:
            try:
                self.configs[key] = _config_model(candidate)
            except (UsageError, ValueError, OSError) as exc:
                raise UsageError(f"{where}: {_one_line(exc)}") from None
        return self.configs[key]

    def setting(self, path: Path, number: int, cells: dict[str, str], *, partial: bool) -> tuple[dict, dict]:
        """The setting keys the row's cells give: every key (defaults for the optional columns),
        or with ``partial`` only those whose cells are not empty."""
        setting: dict[str, Any] = {}
        texts: dict[str, str] = {}
        given = lambda column: bool(cells.get(column, ""))
        if given("gpu") or not partial:
            text = cells.get("gpu", "")
            if text not in self.gpus:
                raise UsageError(f"{self.where(path, number, 'gpu')}: unknown GPU {text!r}: use one of {', '.join(self.gpus)}")
            setting["gpu"], texts["gpu"] = self.gpus[text], text
        if given("target") or not partial:
            text = cells.get("target", "")
            setting["target"], texts["target"] = self.model(path, number, "target", text), text
        if given("draft") or not partial:
            text = cells.get("draft", "")
            draft = (step.Draft(text) if text in _DRAFT_KINDS
                     else step.Draft("model", self.model(path, number, "draft", text)))
            setting["draft"], texts["draft"] = draft, text
        if given("tp") or not partial:
            text = cells.get("tp", "")
            setting["tp"] = int(self.number(path, number, "tp", text, low=1, whole=True)) if text else 1
            texts["tp"] = text or "1"
        if given("weight_dtype") or given("kv_dtype") or not partial:
            weights = cells.get("weight_dtype", "").lower() or "bf16"
            kv = cells.get("kv_dtype", "").lower() or "bf16"
            if (weights, kv) not in _PRECISION_OF:
                column = "weight_dtype" if weights not in {w for w, _ in _PRECISION_OF} else "kv_dtype"
                known = "; ".join(f"{w} weights with a {k} KV cache" for w, k in _PRECISION_OF)
                raise UsageError(f"{self.where(path, number, column)}: {weights} weights with a {kv} KV cache are not "
                                 f"modelled; use one of: {known} (empty cells: bf16)")
            setting["precision"] = step.PRECISIONS[_PRECISION_OF[weights, kv]]
            texts["precision"] = f"{weights}/{kv}"
        if given("engine") or not partial:
            text = cells.get("engine", "") or "any"
            if text not in self.engines:
                raise UsageError(f"{self.where(path, number, 'engine')}: unknown engine {text!r}: use one of "
                                 f"{', '.join(self.engines)}")
            setting["engine"], texts["engine"] = self.engines[text], text
        if given("tree_tokens") or not partial:
            text = cells.get("tree_tokens", "")
            setting["tree_tokens"] = self.number(path, number, "tree_tokens", text, low=1, whole=True) if text else None
            texts["tree_tokens"] = text or "(none: a chain)"
        return setting, texts

    def rows(self, path: Path, *, measured: bool) -> list[_FitRow]:
        header, records = _read_csv(path)
        required = FIT_COLUMNS + (("measured_speedup",) if measured else ())
        missing = [c for c in required if c not in header]
        if missing:
            raise UsageError(f"{path}: missing column {missing[0]!r}; the columns needed are {', '.join(required)} "
                             f"(optional: {', '.join(FIT_OPTIONAL_COLUMNS)})")
        gamma_max = settings.get("SPECVIZ_GAMMA_MAX")
        rows = []
        for number, cells in records:
            if not cells["series"]:
                raise UsageError(f"{self.where(path, number, 'series')}: empty; name the series the row belongs to")
            setting, texts = self.setting(path, number, cells, partial=not measured)
            gamma = self.number(path, number, "gamma", cells["gamma"], low=1, whole=True)
            if gamma > gamma_max:
                raise UsageError(f"{self.where(path, number, 'gamma')}: at most {gamma_max} (SPECVIZ_GAMMA_MAX), "
                                 f"got {cells['gamma']!r}")
            row = _FitRow(number, cells["series"], setting, texts, gamma,
                          self.number(path, number, "batch", cells["batch"], low=0, low_open=True),
                          self.number(path, number, "context", cells["context"], low=0), None)
            if cells["acceptance_length"]:
                row.acceptance_length = self.number(path, number, "acceptance_length", cells["acceptance_length"],
                                                    low=1)
            if measured:
                row.measured = self.number(path, number, "measured_speedup", cells["measured_speedup"], low=0,
                                           low_open=True)
            rows.append(row)
        return rows


def _check_length(path: Path, row: _FitRow, tree_tokens: float | None) -> None:
    """An acceptance length lies in [1, the tokens the verify pass scores]."""
    nodes = row.gamma + 1 if tree_tokens is None else tree_tokens
    if row.acceptance_length is not None and row.acceptance_length > nodes:
        scored = f"γ + 1 = {nodes:g}" if tree_tokens is None else f"tree_tokens = {nodes:g}"
        raise UsageError(f"{_FitReader.where(path, row.number, 'acceptance_length')}: {row.acceptance_length:g} tokens "
                         f"per step is more than the verify pass scores ({scored})")


def _series(path: Path, rows: list[_FitRow]) -> dict[str, _Series]:
    """The measured rows by series, each checked: one setting, two rows or more, an acceptance
    length in every row or in none."""
    found: dict[str, _Series] = {}
    for row in rows:
        found.setdefault(row.series, _Series(row.series)).rows.append(row)
    for series in found.values():
        first = series.rows[0]
        for row in series.rows[1:]:
            for key, column in _SETTING_COLUMNS.items():
                if row.setting[key] != first.setting[key]:
                    raise UsageError(f"{_FitReader.where(path, row.number, column)}: series {series.name!r} has "
                                     f"{row.texts[key]!r} here and {first.texts[key]!r} in row {first.number}; "
                                     "the rows of a series share gpu, target, draft, tp, weight_dtype, kv_dtype, "
                                     "engine and tree_tokens")
        if len(series.rows) < 2:
            raise UsageError(f"{path}: series {series.name!r} has 1 row (row {first.number}); "
                             "a fit needs 2 rows or more")
        known = [row.acceptance_length is not None for row in series.rows]
        if any(known) and not all(known):
            row = series.rows[known.index(not known[0])]
            raise UsageError(f"{_FitReader.where(path, row.number, 'acceptance_length')}: series {series.name!r} gives "
                             "an acceptance length in some rows and not in others; give it in every row of the "
                             "series (measured) or in none (fitted)")
        for row in series.rows:
            _check_length(path, row, first.setting["tree_tokens"])
    return found


def _calibrate(path: Path, series: _Series) -> tuple[calibration.Fit, float]:
    """The series' fit and the RMS error of its predictions at its own rows."""
    setting = series.rows[0].setting
    column = lambda name: np.array([getattr(row, name) for row in series.rows], dtype=float)
    lengths = column("acceptance_length") if series.rows[0].acceptance_length is not None else None
    try:
        with np.errstate(all="ignore"):
            fit = calibration.calibrate(setting["gpu"], setting["target"], setting["draft"], setting["engine"],
                                        batch=column("batch"), gamma=column("gamma"), context=column("context"),
                                        measured_speedup=column("measured"), acceptance_length=lengths,
                                        tree_tokens=setting["tree_tokens"], tp=setting["tp"],
                                        precision=setting["precision"])
            own = fit.predict(column("batch"), column("gamma"), column("context"), lengths)["speedup"]
    except ValueError as exc:
        rows = ", ".join(str(row.number) for row in series.rows)
        raise UsageError(f"{path}: series {series.name!r} (rows {rows}) cannot be fitted: {_one_line(exc)}") from None
    return fit, float(np.sqrt(np.mean((own - column("measured")) ** 2)))


def _warning_text(key: str) -> str:
    """A fit's warning key as English text (the key itself if the catalogue lacks it)."""
    try:
        return i18n.t(key)
    except KeyError:
        return key


def _check_predict_rows(path: Path, measured_path: Path, rows: list[_FitRow], series: dict[str, _Series]) -> None:
    """Each row of P.csv names a series of M.csv, in that series' setting (a cell that names
    another setting is refused; an empty one takes the series'), with a possible acceptance length."""
    for row in rows:
        if row.series not in series:
            raise UsageError(f"{_FitReader.where(path, row.number, 'series')}: {row.series!r} is not a series of "
                             f"{measured_path} (its series: {', '.join(series)})")
        first = series[row.series].rows[0]
        for key, value in row.setting.items():
            if value != first.setting[key]:
                raise UsageError(f"{_FitReader.where(path, row.number, _SETTING_COLUMNS[key])}: {row.texts[key]!r}, "
                                 f"but series {row.series!r} was measured with {first.texts[key]!r} "
                                 f"({measured_path}, row {first.number}); a prediction is made in its series' "
                                 "setting (leave the cell empty to take it)")
        _check_length(path, row, first.setting["tree_tokens"])


def _predictions(path: Path, rows: list[_FitRow], series: dict[str, _Series],
                 fits: dict[str, calibration.Fit]) -> list[dict[str, Any]]:
    """One prediction per row of P.csv, in order, with the row's own acceptance length or else the
    series' (measured, or fitted: then it must fit in the row's verify pass)."""
    groups: dict[tuple[str, bool], list[_FitRow]] = {}
    for row in rows:
        if row.acceptance_length is None:
            tree = series[row.series].rows[0].setting["tree_tokens"]
            fit = fits[row.series]
            fitted_e = fit.draws["expected_tokens"][fit.weights > 0]
            nodes = row.gamma + 1 if tree is None else tree
            if fitted_e.size and fitted_e.max() > nodes + 1e-9:
                raise UsageError(f"{_FitReader.where(path, row.number, 'acceptance_length')}: empty, and series "
                                 f"{row.series!r} has up to {fitted_e.max():.3g} tokens per step, more than this "
                                 f"row's verify pass scores ({nodes:g}); give this row's acceptance length")
        groups.setdefault((row.series, row.acceptance_length is not None), []).append(row)
    out: dict[int, dict[str, Any]] = {}
    for (name, known), group in groups.items():
        column = lambda attr: np.array([getattr(row, attr) for row in group], dtype=float)
        try:
            with np.errstate(all="ignore"):
                result = fits[name].predict(column("batch"), column("gamma"), column("context"),
                                            column("acceptance_length") if known else None)
        except ValueError as exc:
            raise UsageError(f"{path}, row {group[0].number}: cannot be predicted: {_one_line(exc)}") from None
        for i, row in enumerate(group):
            out[row.number] = {"row": row.number, "series": name, **{k: _plain(float(result[k][i]))
                                                                     for k in ("speedup", "low", "high")}}
    return [out[row.number] for row in rows]


def fit_tables(measured: Path, predict: Path | None = None) -> dict[str, Any]:
    """The ``fit`` subcommand's result: ``{"series": {name: {"fitted", "rms_error", "warnings"}},
    "predictions": [{"row", "series", "speedup", "low", "high"}, ...]}``.

    Each series of ``measured`` (rows sharing a ``series`` name, gpu, target, draft, tp,
    precision, engine and tree_tokens) is calibrated on its own rows; ``fitted`` holds the weighted
    medians of :attr:`specviz.model.calibration.Fit.fitted`, ``rms_error`` the RMS of predicted minus
    measured speedup over those rows, ``warnings`` the fit's warnings as English text. Each row
    of ``predict`` names a series of ``measured`` and is predicted in its setting.

    Raises
    ------
    UsageError
        With one line that names the file, and the row and column where there is one.
    """
    reader = _FitReader()
    series = _series(measured, reader.rows(measured, measured=True))
    wanted = reader.rows(predict, measured=False) if predict is not None else []
    _check_predict_rows(predict, measured, wanted, series)
    fits, report = {}, {}
    for name, one in series.items():
        fit, rms = _calibrate(measured, one)
        fits[name] = fit
        report[name] = {"fitted": {k: _plain(float(v)) for k, v in fit.fitted.items()}, "rms_error": _plain(rms),
                        "warnings": [_warning_text(key) for key in fit.warnings]}
    return {"series": report, "predictions": _predictions(predict, wanted, series, fits) if wanted else []}


def _fit_output(result: dict[str, Any], fmt: str) -> str:
    if fmt == "json":
        return json.dumps(result, indent=2, ensure_ascii=False)
    series = [{"series": name, **entry["fitted"], "rms_error": entry["rms_error"],
               "warnings": "; ".join(entry["warnings"])} for name, entry in result["series"].items()]
    predictions = result["predictions"] or []
    text = format_rows(series, fmt)
    return text + ("\n\n" + format_rows(predictions, fmt) if predictions else "")


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
    p.add_argument("--draft-cost", type=float, default=spec.SEED_DRAFT_COST)
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
    p.add_argument("--draft-cost", type=float, default=spec.SEED_DRAFT_COST)
    p.add_argument("--tflops", type=float, help="override the preset's dense BF16 TFLOPS")
    p.add_argument("--bandwidth", type=float, help="override the preset's bandwidth, TB/s")
    p.add_argument("--format", **fmt)

    p = sub.add_parser("calc", help="what the calculator shows for a scenario given as its link (or the "
                                    "link's query), the band included")
    p.add_argument("link", nargs="?", default="", help="e.g. 'alpha=0.7&batch=16&engine=sglang' or a whole "
                                                       "calculator URL; empty: the default scenario")
    p.add_argument("--format", **fmt)

    p = sub.add_parser("claim", help="check a claimed speedup (\"up to 3x\", \"2.5x at batch 64\") on a scenario, "
                                     "as the Claims page does, or against costs given as ratios")
    p.add_argument("text", nargs="?", help="the claim as it was written; with --speedup, the link")
    p.add_argument("link", nargs="?", default="", help="the scenario, as for calc; empty: the default scenario")
    p.add_argument("--speedup", type=float, help="the claimed speedup as a number, in place of its words")
    p.add_argument("--batch", type=_count, help="the batch it was claimed at (default: the one its words name, "
                                                 "else any)")
    p.add_argument("--gamma", type=_count, help="the draft length it was claimed at (default: the best)")
    p.add_argument("--verify-cost", type=float, help="check against a verify pass of this cost (× a plain step) "
                                                      "and --draft-cost, not against the step model")
    p.add_argument("--draft-cost", type=float, help=f"a draft pass's cost (× a plain step; default "
                                                     f"{spec.SEED_DRAFT_COST} with --verify-cost)")
    _scenario_options(p)
    p.add_argument("--measure", choices=claims.MEASURES, help="how --value gives the acceptance on your traffic")
    p.add_argument("--value", type=float, help="the acceptance measured on your traffic")
    p.add_argument("--measured-gamma", type=_count, default=4, help="the γ it was measured at (default 4)")
    p.add_argument("--format", choices=("json",), default="json", help="output format")

    p = sub.add_parser("simulate", help="tokens per step, inter-token and request latency with and without "
                                        "speculation, simulated from α or per-position rates")
    p.add_argument("link", nargs="?", default="", help="the scenario whose step times are used, as for calc")
    acceptance = p.add_mutually_exclusive_group(required=True)
    acceptance.add_argument("--alpha", type=float, help="per-position acceptance α (i.i.d.)")
    acceptance.add_argument("--rates", type=float, nargs="+", help="measured acceptance at each draft position, "
                                                                  "given the positions before (γ = their count)")
    p.add_argument("--gamma", type=_count, help="draft length (with --alpha; default: the link's)")
    p.add_argument("--batch", type=_count, help="the batch whose step times are used (default: the link's)")
    p.add_argument("--steps", type=_count, default=1_000_000, help="steps simulated (default 1,000,000)")
    p.add_argument("--requests", type=_count, default=10_000, help="requests simulated (default 10,000)")
    p.add_argument("--output-tokens", type=_count, default=500, help="tokens decoded per request (default 500)")
    p.add_argument("--seed", type=int, default=0)
    _scenario_options(p)
    p.add_argument("--format", choices=("json",), default="json", help="output format")

    p = sub.add_parser("vllm-config", help="the vllm serve command for a version, target and draft or method "
                                           "(with --by-batch, the draft length per batch size)")
    p.add_argument("--version", required=True, help="the vLLM release, e.g. 0.10.0")
    p.add_argument("--target", required=True, help="a model preset id or its Hugging Face id")
    drafting = p.add_mutually_exclusive_group(required=True)
    drafting.add_argument("--draft", help="a draft model: a preset id or its Hugging Face id")
    drafting.add_argument("--method", choices=_CONFIG_METHODS, help="a method instead of a draft model "
                                                                    "(--head names an EAGLE, Medusa or MLP checkpoint)")
    p.add_argument("--head", help="the Hugging Face id of the EAGLE, EAGLE-3, Medusa or MLP-speculator checkpoint")
    p.add_argument("--gamma", type=_count, required=True, help="num_speculative_tokens")
    p.add_argument("--tp", type=int, choices=scenario.TENSOR_PARALLEL, help="tensor parallelism (default: the "
                                                                           "GPUs the pair needs)")
    p.add_argument("--disable-by-batch-size", type=_count, help="stop speculating from this batch (where the "
                                                                "version can)")
    p.add_argument("--prompt-lookup-max", type=_count, default=4, help="n-gram window (default 4)")
    p.add_argument("--by-batch", action="store_true", help="the best draft length for each batch size from the step "
                                                           "model (needs --gpu and --alpha)")
    p.add_argument("--gpu", help="GPU preset id (for --by-batch)")
    p.add_argument("--alpha", type=float, help="per-position acceptance α (for --by-batch)")
    p.add_argument("--context", type=int, help="context length in tokens (for --by-batch; default 1,024)")
    p.add_argument("--format", choices=("json",), default="json", help="output format")

    p = sub.add_parser("serve", help="the vLLM or SGLang command for the scenario of a calculator link, as the "
                                     "Deploy view writes it")
    p.add_argument("link", nargs="?", default="", help="the scenario, as for calc; empty: the default scenario")
    p.add_argument("--engine", choices=("vllm", "sglang"), default="vllm")
    p.add_argument("--version", choices=commands.VLLM_VERSIONS, help="the vLLM release (default: the newest "
                                                                        "checked)")
    p.add_argument("--method", choices=commands.METHODS, default="draft",
                   help="how to draft (default: the scenario's draft)")
    p.add_argument("--draft", help="the draft's Hugging Face id or path, where specviz has none")
    p.add_argument("--one-length", action="store_true", help="one draft length (the link's γ), not one per batch size")

    p = sub.add_parser("model-from-config", help="exact parameter counts from a config.json")
    p.add_argument("file", type=Path)
    p.add_argument("--kv-bytes", type=float, default=2.0, help="bytes per KV element (2 for BF16)")
    p.add_argument("--format", **fmt)

    p = sub.add_parser("presets", help="the shipped GPU and model presets with their sources")
    p.add_argument("--format", **fmt)

    p = sub.add_parser("fit", help="calibrate the step model on measured speedups, series by series, and "
                                   "predict other points with a band")
    p.add_argument("--measured", type=Path, required=True,
                   help="CSV: " + ", ".join(FIT_COLUMNS) + ", measured_speedup (optional: "
                        + ", ".join(FIT_OPTIONAL_COLUMNS) + ")")
    p.add_argument("--predict", type=Path, help="CSV of points to predict, each naming a series of --measured")
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

    p = sub.add_parser("query", help="one read-only SQL statement over runs, requests, imports, snapshots and "
                                     "windows")
    p.add_argument("sql")
    p.add_argument("--db", **db)
    p.add_argument("--format", choices=("json", "csv"), default="json")

    p = sub.add_parser("metrics", help="speculative-decoding figures per model from a /metrics URL or a file of "
                                       "exposition text, since the server started or since an earlier scrape")
    p.add_argument("source", help="an http(s) URL such as http://localhost:8000/metrics, or a file")
    p.add_argument("--since", metavar="PREVIOUS", help="an earlier scrape of the same server (URL or file): "
                                                       "the figures are then the window between the two")
    p.add_argument("--split-by", nargs="+", default=[], metavar="LABEL",
                   help="labels to keep apart instead of summing over, e.g. engine (data-parallel engines)")
    p.add_argument("--format", choices=("json",), default="json")

    p = sub.add_parser("record", help="poll a /metrics URL (or a file) every N seconds into the store's "
                                      "snapshots and windows tables; a progress line per poll on stderr")
    p.add_argument("source", help="an http(s) URL such as http://localhost:8000/metrics, or a file")
    p.add_argument("--db", **db)
    p.add_argument("--every", type=_positive_seconds, required=True, metavar="SECONDS", help="seconds between polls")
    p.add_argument("--count", type=_count, metavar="N", help="polls to make (default: until Ctrl-C)")
    p.add_argument("--format", choices=("json",), default="json")

    p = sub.add_parser("prometheus", help="speculative-decoding figures over time from a Prometheus server's HTTP "
                                          "API (or Thanos, Mimir, VictoriaMetrics), summed over the servers it scrapes")
    p.add_argument("base_url", help="e.g. http://localhost:9090")
    p.add_argument("--range", default="1h", dest="range_", help="how far back, e.g. 1h (default)")
    p.add_argument("--step", default="30s", help="one point per step, e.g. 30s (default)")
    p.add_argument("--window", help="the increase() window of each point (default: the step)")
    p.add_argument("--by", nargs="+", default=[], metavar="LABEL", help="labels kept apart, e.g. instance")
    p.add_argument("--format", choices=("json", "csv"), default="json")
    return parser


def prometheus_rows(args: argparse.Namespace) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The ``prometheus`` command's points (one per time, model and ``--by`` label; NaN figures as
    null) and what they rest on: the source, the PromQL run and the notices, in English."""
    frame = prometheus.query_figures(args.base_url, args.range_, args.step, window_s=args.window, by=tuple(args.by))
    flat = frame.reset_index()
    flat["time"] = flat["time"].map(lambda moment: moment.isoformat())
    about = {"source": frame.attrs["source"], "queries": frame.attrs["queries"],
             "notices": [str(notice) for notice in frame.attrs["notices"]]}
    return json.loads(flat.to_json(orient="records")), about


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, got {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds above 0, got {text!r}")
    return value


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {text!r}")
    return value


# --- metrics and record: live figures -----------------------------------------------------------

METRICS_KEYS = ("engine", "model_name", "labels", "window", "seconds", "drafts", "draft_tokens", "accepted_tokens",
                "acceptance_rate", "acceptance_length", "alpha_iid", "num_speculative_tokens",
                "per_position_acceptance", "per_position_conditional", "zero_accept_rate", "counter_reset",
                "emitted_tokens", "reported_acceptance_rate", "reported_acceptance_length", "system_efficiency",
                "running_requests", "waiting_requests", "generation_tokens", "generation_throughput",
                "kv_cache_usage", "itl_p50_ms", "itl_p99_ms", "summed_labels", "absent", "notices")
"""The keys of each row of ``metrics``: :class:`specviz.live.exposition.SpecDecodeState`'s fields, the
inter-token latency in milliseconds, ``absent`` (figure → why it is absent, in English) and
``notices`` (English)."""
_IN_MS = {"itl_p50": "itl_p50_ms", "itl_p99": "itl_p99_ms"}


def state_row(state: exposition.SpecDecodeState) -> dict[str, Any]:
    """One model's figures as a JSON-safe dict with :data:`METRICS_KEYS`: an absent figure is
    ``null`` and its reason is in ``absent``."""
    row: dict[str, Any] = {}
    for key in METRICS_KEYS:
        field_name = next((name for name, shown in _IN_MS.items() if shown == key), key)
        value = getattr(state, field_name)
        if key in _IN_MS.values() and value is not None:
            value *= 1000.0
        row[key] = value
    row["summed_labels"] = list(state.summed_labels)
    row["absent"] = {_IN_MS.get(name, name): str(notice) for name, notice in state.absent.items()}
    row["notices"] = [str(notice) for notice in state.notices]
    return row


def _scraped(source: str) -> exposition.Snapshot:
    """A source fetched and parsed; a URL's scrape carries the time its answer came (a file's has
    none: rates per second need two URL scrapes)."""
    is_url = scrape._scheme(source.strip()) is not None  # as fetch_text tells a URL from a path
    text = scrape.fetch_text(source)
    return exposition.parse(text, time.time() if is_url else None)


def metrics_rows(source: str, since: str | None = None, split_by: Sequence[str] = ()) -> list[dict[str, Any]]:
    """The ``metrics`` subcommand's rows: :func:`state_row` of each model of ``source`` (totals since
    the server started), or of the window since the scrape ``since`` (read first).

    Raises
    ------
    specviz.live.scrape.ScrapeError, SpecvizError
        For a source that cannot be read, is not exposition text or holds no speculative decoding.
    """
    previous = _scraped(since) if since is not None else None
    current = _scraped(source)
    return [state_row(state) for state in exposition.spec_decode_states(current, previous, tuple(split_by))]


def _figure(value: float | None, digits: str = ".3g") -> str:
    return "n/a" if value is None else format(value, digits)


def poll_line(poll: recorder.Poll, count: int | None = None) -> str:
    """One progress line of ``record``: the poll's number, time (UTC) and outcome; per model the
    acceptance length and rate, γ, running requests and tokens/s."""
    when = datetime.fromtimestamp(poll.time, timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
    head = f"poll {poll.number}{'' if count is None else f'/{count}'} {when} UTC"
    if not poll.ok:
        return f"{head} failed: {poll.error}"
    kind = "window" if poll.window else "first scrape, totals since start"
    if poll.after_failure:
        kind += ", the source is back"
    models = []
    for state in poll.states:
        text = (f"{state.model_name or '(no model name)'}: acceptance length {_figure(state.acceptance_length)}, "
                f"rate {_figure(state.acceptance_rate)}, γ {_figure(state.num_speculative_tokens)}, "
                f"running {_figure(state.running_requests, 'g')}")
        if poll.window:
            text += f", {_figure(state.generation_throughput, '.4g')} tokens/s"
        if state.counter_reset:
            text += " (counters reset: the server restarted)"
        models.append(text)
    return f"{head} recorded ({kind}): " + "; ".join(models)


def _record(args: argparse.Namespace) -> tuple[str, int]:
    store = _open_store(args.db)

    def progress(poll: recorder.Poll) -> None:
        print(poll_line(poll, args.count), file=sys.stderr, flush=True)

    interrupted = False
    summary = recorder.RecordSummary()
    try:
        recorder.record(store, args.source, args.every, args.count,
                        on_poll=lambda poll: (summary.add(poll), progress(poll)))
    except KeyboardInterrupt:  # Ctrl-C ends a recording; what was stored stays
        interrupted = True
    finally:
        store.close()
    if not summary.recorded:
        raise UsageError(f"no poll of {scrape.shown(args.source)} succeeded ({summary.failed} failed)"
                         + (f"; the last: {summary.last_error}" if summary.last_error else ""))
    report = {"source": scrape.shown(args.source), "db": str(args.db or settings.get("SPECVIZ_DB")),
              "polls": summary.polls, "recorded": summary.recorded, "failed": summary.failed,
              "windows": summary.windows, "interrupted": interrupted}
    return json.dumps(report, indent=2), 0


# vllm-config's --method: vLLM's names for what drafts, other than a draft model.
_CONFIG_METHODS = ("ngram", "eagle", "eagle3", *(m for m in commands.METHODS if m != "draft"))


def _scenario_options(p: argparse.ArgumentParser) -> None:
    """Options that set a scenario's hardware, models and context over its link's."""
    p.add_argument("--gpu", help="GPU preset id")
    p.add_argument("--target", help="target: a model preset id or its Hugging Face id")
    p.add_argument("--draft", help="draft: a model preset id or its Hugging Face id, or eagle, eagle3, ngram")
    p.add_argument("--engine", help="engine preset id")
    p.add_argument("--context", type=int, help="context length in tokens")


def _preset_id(text: str, models: dict[str, roofline.Model], what: str, heads: Sequence[str] = ()) -> str:
    """A model preset's id from its id or its Hugging Face id (case aside); a head's name as given."""
    if text in models or text in heads:
        return text
    by_hub = {(commands.hugging_face_id(m.source) or "").lower(): k for k, m in models.items()}
    if text.lower() in by_hub:
        return by_hub[text.lower()]
    known = ", ".join([*heads, *models])
    raise UsageError(f"unknown {what} {text!r}: use a preset id or its Hugging Face id ({known})")


def _scenario_params(args: argparse.Namespace, models: dict[str, roofline.Model], **numbers: Any) -> dict[str, str]:
    """The link parameters that :func:`_scenario_options` set, and ``numbers`` (a command's own
    batch, γ, α or tp) that are not None."""
    params = {name: str(value) for name in ("gpu", "engine", "context") if (value := getattr(args, name, None)) is not None}
    params |= {name: str(value) for name, value in numbers.items() if value is not None}
    if getattr(args, "target", None):
        params["target"] = _preset_id(args.target, models, "target")
    if getattr(args, "draft", None):
        params["draft"] = _preset_id(args.draft, models, "draft", scenario.HEAD_DRAFTS)
    return params


def _linked_scenario(link: str, presets: scenario.Presets, overrides: dict[str, str] | None = None) -> scenario.Scenario:
    """The scenario a calculator link (or its query) describes, with ``overrides`` set over it; a
    value the page would refuse is an error here, not a silent default."""
    query = urllib.parse.urlsplit(link).query if "?" in link else link
    params = dict(urllib.parse.parse_qsl(query, keep_blank_values=True)) | (overrides or {})
    chosen, refused = scenario.from_query_params(params, presets)
    if refused:
        raise UsageError("the link sets " + ", ".join(f"{name}={text!r}" for name, text in refused)
                         + ", which the calculator does not take (unknown id, or a value out of range)")
    return chosen


def calc_row(link: str, presets: scenario.Presets) -> dict[str, Any]:
    """The calculator's figures for the scenario a link describes (:func:`specviz.scenario.from_query_params`),
    as the page shows them."""
    chosen = _linked_scenario(link, presets)
    point = (chosen.alpha, chosen.gamma, chosen.batch, chosen.context)
    here = {key: _plain(float(value)) if value.dtype.kind == "f" else str(value)
            for key, value in calculator.evaluate_scenario(chosen, *point).items()}
    row: dict[str, Any] = {"gpu": chosen.gpu.id, "target": chosen.target_id, "draft": chosen.draft_id,
                           "engine": chosen.engine.id, "precision": chosen.precision.name, "tp": chosen.tp,
                           "mode": chosen.mode, **here}
    if chosen.mode == "step":
        low, high = calculator.speedup_band(chosen, *point)
        row |= {"low": float(low), "high": float(high),
                "ideal_speedup": float(calculator.evaluate_scenario(chosen.ideal(), *point)["speedup"]),
                "knobs_off_preset": {name: value for name, (value, _) in scenario.knobs_off_preset(chosen).items()}}
    return row


def _words(notice: Any) -> str:
    """A notice in plain English for a terminal: the page's Markdown (bold, escapes) taken out."""
    return re.sub(r"\\(.)", r"\1", i18n.message(notice)).replace("**", "")


def _required(frame: pd.DataFrame, gamma: int | None) -> dict[str, Any]:
    """The α, acceptance length and vLLM rate a claim needs: at its γ, else at the γ that needs the
    least α (None where no γ reaches it)."""
    reachable = frame[frame["alpha_needed"].notna()]
    if gamma is None and len(reachable):
        row = reachable.loc[reachable["alpha_needed"].idxmin()]
    elif gamma is not None and len(reachable):
        row = reachable.iloc[0]
    else:
        return {"required_gamma": gamma, "required_alpha": None, "required_acceptance_length": None,
                "required_acceptance_rate_vllm": None}
    return {"required_gamma": int(row["gamma"]), "required_alpha": float(row["alpha_needed"]),
            "required_acceptance_length": float(row["acceptance_length"]),
            "required_acceptance_rate_vllm": float(row["acceptance_rate"])}


def claim_row(text: str, link: str, presets: scenario.Presets, *, batch: int | None = None,
              gamma: int | None = None, alpha: float | None = None,
              overrides: dict[str, str] | None = None) -> dict[str, Any]:
    """The Claims page's check of ``text`` ("up to 3x", "2.5x at batch 64", or a number) on the
    scenario of a calculator link (with ``overrides`` over it): the verdict, its headline, reasons
    and conditions in words, what it requires at the easiest γ (or the claimed one), the best
    setting, the batches where it can hold, and the α each γ needs (``alpha``: the acceptance
    measured on the user's traffic)."""
    speedup = claims.parse_claim(text)
    batch = batch if batch is not None else claims.claimed_batch(text)
    chosen = _linked_scenario(link, presets, overrides)
    check = claims.check_claim(chosen, claims.Claim(speedup, batch=batch, gamma=gamma, alpha=alpha),
                               settings.get("SPECVIZ_GAMMA_MAX"), settings.get("SPECVIZ_BATCH_MAX"))
    batches = lambda low, high: None if math.isnan(high) else [int(low), int(high)]
    return {"claim": speedup, "batch": batch, "alpha": alpha, "gpu": chosen.gpu.id, "target": chosen.target_id,
            "draft": chosen.draft_id, "engine": chosen.engine.id, "verdict": check.verdict,
            "headline": _words(check.headline), "reasons": [_words(n) for n in check.reasons],
            "conditions": [_words(n) for n in check.conditions], **_required(check.required, gamma),
            "max_speedup": check.best["speedup"], "best": {k: _plain(v) for k, v in check.best.items()},
            "holds_at_batches": batches(check.holds_from, check.holds_up_to),
            "holds_at_your_acceptance": batches(check.yours_from, check.yours_up_to),
            "required": _frame_rows(check.required)}


def claim_at_costs_row(speedup: float, verify_cost: float, draft_cost: float, *, gamma: int | None = None,
                       alpha: float | None = None) -> dict[str, Any]:
    """A claim against costs given as ratios of a plain step (:func:`specviz.advice.claims.check_at_costs`)."""
    verdict, reasons, required = claims.check_at_costs(claims.Claim(speedup, gamma=gamma, alpha=alpha), verify_cost,
                                                       draft_cost, settings.get("SPECVIZ_GAMMA_MAX"))
    return {"claim": speedup, "verify_cost": verify_cost, "draft_cost": draft_cost, "alpha": alpha,
            "verdict": verdict, "reasons": [_words(n) for n in reasons], **_required(required, gamma),
            "max_speedup": float(required["max_speedup"].max()), "required": _frame_rows(required)}


def simulate_row(args: argparse.Namespace, presets: scenario.Presets) -> dict[str, Any]:
    """The Latency view's simulation from the command line: step times from the step model at the
    scenario's batch and context, acceptance from --alpha (with --gamma) or --rates."""
    if args.rates and args.gamma is not None and args.gamma != len(args.rates):
        raise UsageError(f"--gamma {args.gamma} but {len(args.rates)} rates: the rates give γ")
    chosen = _linked_scenario(args.link, presets, _scenario_params(
        args, presets.models, batch=args.batch, gamma=len(args.rates) if args.rates else args.gamma))
    gamma = len(args.rates) if args.rates else chosen.gamma
    alpha = float(spec.alpha_from_rates(args.rates)) if args.rates else args.alpha
    times = simulate.StepTimes.from_step(step.step(
        chosen.gpu, chosen.target, chosen.draft, batch=chosen.batch, gamma=gamma, context=chosen.context, alpha=alpha,
        tp=chosen.tp, precision=chosen.precision, costs=chosen.costs))
    acceptance = {"rates": args.rates} if args.rates else {"alpha": args.alpha, "gamma": gamma}
    summary = simulate.latency(**acceptance, times=times, output_tokens=args.output_tokens, requests=args.requests,
                               steps=args.steps, seed=args.seed)
    table = summary.table(per_step=True)
    return {"alpha": alpha, "gamma": gamma, "rates": args.rates, "gpu": chosen.gpu.id, "target": chosen.target_id,
            "draft": chosen.draft_id, "engine": chosen.engine.id, "batch": chosen.batch, "context": chosen.context,
            "plain_step_ms": times.plain_s * 1e3, "spec_step_ms": times.spec_s * 1e3, "steps": summary.steps,
            "seed": args.seed, "tokens_per_step_mean": summary.mean_tokens, "tokens_per_step_se": summary.mean_tokens_se,
            "expected_tokens": _plain(summary.expected_tokens), "zero_accept_share": summary.zero_accept_share,
            "tokens_per_step_counts": [int(c) for c in summary.counts], "output_tokens": summary.output_tokens,
            "requests": summary.requests,
            "latency_ms": {row: {"plain": r.plain_s * 1e3, "spec": r.spec_s * 1e3, "ratio": r.ratio}
                           for row, r in table.iterrows()}}


def vllm_config_row(args: argparse.Namespace, presets: scenario.Presets) -> dict[str, Any]:
    """``vllm serve`` for a version, a target and a draft model or method: the command, its warnings
    in words (notices and problems) and, with --by-batch, the best draft length per batch size from
    the step model on --gpu at --alpha, written into the command where the version takes it."""
    if args.by_batch and (args.gpu is None or args.alpha is None):
        raise UsageError("--by-batch needs --gpu and --alpha")
    params = _scenario_params(args, presets.models, tp=args.tp, alpha=args.alpha, gamma=args.gamma)
    if args.method in scenario.HEAD_DRAFTS:
        params["draft"] = args.method
    chosen = _linked_scenario("", presets, params)
    method = args.method if args.method in commands.METHODS else "draft"
    schedule = (commands.gamma_schedule(chosen, chosen.alpha, chosen.context, settings.get("SPECVIZ_BATCH_MAX"),
                                           settings.get("SPECVIZ_GAMMA_MAX")) if args.by_batch else None)
    command = commands.vllm_command(chosen, args.version, args.gamma, schedule=schedule,
                                       off_from=args.disable_by_batch_size, draft_repo=args.head,
                                       prompt_lookup_max=args.prompt_lookup_max, method=method)
    row: dict[str, Any] = {"command": command.line,
                           "warnings": [_words(n) for n in (*command.problems, *command.notices)]}
    if schedule is not None:
        row["by_batch"] = [[int(r.first), int(r.last), int(r.gamma)] for r in schedule.itertuples()]
    return row


def serve_row(link: str, presets: scenario.Presets, *, engine: str = "vllm", version: str | None = None,
              method: str = "draft", draft: str | None = None, by_load: bool = True) -> dict[str, Any]:
    """The Deploy view's command for the scenario of a calculator link: by load, the best γ for every
    batch size written where the engine takes it (else the best γ at the link's batch), and the
    batch from which to stop; otherwise the link's γ. Its notices and problems in words."""
    chosen = _linked_scenario(link, presets)
    batch_max, gamma_max = settings.get("SPECVIZ_BATCH_MAX"), settings.get("SPECVIZ_GAMMA_MAX")
    schedule = commands.gamma_schedule(chosen, chosen.alpha, chosen.context, batch_max, gamma_max)
    command = commands.serve_command(chosen, schedule, chosen.gamma, chosen.batch, engine=engine, version=version,
                                        method=method, draft_repo=draft, by_load=by_load)
    return {"engine": engine, "version": version if engine == "vllm" else None, "command": command.line,
            "files": command.files, "problems": [_words(n) for n in command.problems],
            "notices": [_words(n) for n in command.notices],
            "advice": [_words(n) for n in commands.advise(chosen, chosen.alpha, chosen.gamma, chosen.batch,
                                                            schedule)]}


def _claim(args: argparse.Namespace, presets: scenario.Presets) -> dict[str, Any]:
    """``claim``: its words or --speedup, against --verify-cost and --draft-cost or a scenario."""
    if (args.measure is None) != (args.value is None):
        raise UsageError("--measure and --value go together")
    if args.speedup is None and args.text is None:
        raise UsageError("give the claim's words or --speedup")
    if args.speedup is not None and args.link:
        raise UsageError("with --speedup, give the claim's words no more: the one argument left is the link")
    text, link = (str(args.speedup), args.text or "") if args.speedup is not None else (args.text, args.link)
    alpha = None if args.measure is None else claims.alpha_from_measurement(args.measure, args.value,
                                                                           args.measured_gamma)
    if args.verify_cost is not None:
        if link or any(getattr(args, name) is not None for name in ("gpu", "target", "draft", "engine", "context")):
            raise UsageError("--verify-cost gives the costs: no link, --gpu, --target, --draft, --engine or --context")
        draft_cost = spec.SEED_DRAFT_COST if args.draft_cost is None else args.draft_cost
        return claim_at_costs_row(claims.parse_claim(text), args.verify_cost, draft_cost, gamma=args.gamma, alpha=alpha)
    if args.draft_cost is not None:
        raise UsageError("--draft-cost goes with --verify-cost")
    overrides = _scenario_params(args, presets.models)
    return claim_row(text, link, presets, batch=args.batch, gamma=args.gamma, alpha=alpha, overrides=overrides)


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
    if args.command == "fit":
        return _fit_output(fit_tables(args.measured, args.predict), args.format)
    if args.command == "metrics":
        return json.dumps(metrics_rows(args.source, args.since, args.split_by), indent=2, ensure_ascii=False)
    if args.command == "prometheus":
        rows, about = prometheus_rows(args)
        if args.format == "csv":
            return format_rows(rows, "csv")
        return json.dumps({**about, "points": rows}, indent=2, ensure_ascii=False)
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
    if args.command == "calc":
        row = calc_row(args.link, scenario.load_presets(data_dir))
        if args.format == "json":
            return json.dumps(row, indent=2)
        return format_rows([{k: json.dumps(v) if isinstance(v, dict) else v for k, v in row.items()}], args.format)
    if args.command == "claim":
        return json.dumps(_claim(args, scenario.load_presets(data_dir)), indent=2, ensure_ascii=False)
    if args.command == "simulate":
        return json.dumps(simulate_row(args, scenario.load_presets(data_dir)), indent=2, ensure_ascii=False)
    if args.command == "vllm-config":
        return json.dumps(vllm_config_row(args, scenario.load_presets(data_dir)), indent=2, ensure_ascii=False)
    if args.command == "serve":
        return json.dumps(serve_row(args.link, scenario.load_presets(data_dir), engine=args.engine,
                                    version=args.version, method=args.method, draft=args.draft,
                                    by_load=not args.one_length), indent=2, ensure_ascii=False)
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
        if args.command in ("ingest", "record"):
            output, code = (_ingest if args.command == "ingest" else _record)(args)
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
