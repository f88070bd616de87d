"""``fit``: calibrate the step model (:func:`specviz.model.calibration.calibrate`) on each series of a
CSV of measured speedups, and predict the rows of a second CSV with a band (:func:`fit_tables`).

Rows of both CSVs are counted from 1 after the header (blank lines not counted), in messages and in
the ``row`` of each prediction.
"""

from __future__ import annotations

import argparse
import csv
import io
import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from specviz import i18n, scenario, settings
from specviz.errors import InputError, Notice
from specviz.model import architecture, calibration, dtypes, fidelity, hf_config, roofline, step

from .common import FORMAT, UsageError, cause, config_model, format_rows, json_text, plain, read_limited, words

FIT_COLUMNS = ("series", "gpu", "target", "draft", "gamma", "batch", "context", "acceptance_length")
FIT_OPTIONAL_COLUMNS = ("tp", "dp", "ep", "weight_dtype", "kv_dtype", "engine", "tree_tokens", "draft_kv_budget")
# How a cell says expert parallelism is on or off.
_EP_WORDS = {"": False, **fidelity.EP_WORDS}
_DRAFT_KINDS = (*scenario.DRAFT_KINDS, "self")
# Drafts that name their model after the kind: "block:<model>", "eagle3:<head config>".
_NAMED_KINDS = ("block", "eagle", "eagle3", "peagle")
# What a series shares on every row, and the columns that give it (for messages).
_SETTING_COLUMNS = {"gpu": "gpu", "target": "target", "draft": "draft/draft_kv_budget", "tp": "tp", "dp": "dp", "ep": "ep",
                    "precision": "weight_dtype/kv_dtype", "engine": "engine", "tree_tokens": "tree_tokens"}


@dataclass
class _FitRow:
    number: int
    series: str
    setting: dict[str, Any]  # key -> resolved value, for the keys a cell gave (P.csv: may be partial)
    texts: dict[str, Any]  # key -> the cells' text quoted (or a message where none), for messages
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
    data = read_limited(path, Notice("cli.file.csv"), "SPECVIZ_MAX_UPLOAD_BYTES")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise UsageError("cli.fit.not_utf8", path=str(path)) from None
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        records = [r for r in reader if any(cell.strip() for cell in r)]
    except csv.Error as exc:
        raise UsageError("cli.fit.unreadable", path=str(path), line=reader.line_num, detail=str(exc)) from None
    if not records:
        raise UsageError("cli.fit.empty", path=str(path), columns=", ".join(FIT_COLUMNS))
    header = [name.strip().lower() for name in records[0]]
    repeated = sorted({name for name in header if name and header.count(name) > 1})
    if repeated:
        raise UsageError("cli.fit.repeated_column", path=str(path), column=repr(repeated[0]))
    rows = []
    for number, record in enumerate(records[1:], start=1):
        if len(record) > len(header):
            raise UsageError("cli.fit.extra_cells", path=str(path), row=number, cells=len(record), columns=len(header))
        rows.append((number, {name: cell.strip() for name, cell in zip(header, record) if name}))
    if not rows:
        raise UsageError("cli.fit.no_rows", path=str(path))
    return header, rows


class _FitReader:
    """Turns the cells of fit CSVs into settings and numbers, with messages that name the file,
    the row and the column; presets and config.json files are read once."""

    def __init__(self) -> None:
        data_dir = settings.get("SPECVIZ_DATA_DIR")
        self.gpus = roofline.load_gpus(data_dir)
        self.models = hf_config.load_models(data_dir)
        self.heads = hf_config.load_draft_heads(data_dir)
        self.engines = calibration.load_engines(data_dir)
        self.configs: dict[Path, architecture.Model] = {}

    @staticmethod
    def where(path: Path, number: int, column: str) -> Notice:
        """A cell, as messages name it: the file, the row and the column."""
        return Notice("cli.fit.where", path=str(path), row=number, column=column)

    def number(self, path: Path, number: int, column: str, text: str, *, low: float, low_open: bool = False,
               whole: bool = False, high: float | None = None) -> float:
        """A cell's number, at least ``low`` (above it: ``low_open``) and at most ``high`` where given."""
        where = self.where(path, number, column)
        if not text:
            raise UsageError("cli.fit.no_number", where=where)
        try:
            value = float(text)
        except ValueError:
            raise UsageError("cli.fit.not_a_number", where=where, text=repr(text)) from None
        too_low = value <= low if low_open else value < low
        if not math.isfinite(value) or too_low or (whole and not value.is_integer()) or (high is not None and value > high):
            bound = (Notice("cli.fit.bound.above" if low_open else "cli.fit.bound.from", low=low) if high is None
                     else Notice("cli.fit.bound.above_to" if low_open else "cli.fit.bound.from_to", low=low, high=high))
            raise UsageError("cli.fit.out_of_range", where=where, text=repr(text),
                             kind=Notice("cli.fit.kind.whole" if whole else "cli.fit.kind.finite"), bound=bound)
        return value

    def model(self, path: Path, number: int, column: str, text: str) -> architecture.Model:
        if text in self.models:
            return self.models[text]
        where = self.where(path, number, column)
        if not text or not (text.lower().endswith(".json") or "/" in text or "\\" in text):
            if column == "draft":
                raise UsageError("cli.fit.unknown_draft", where=where, text=repr(text), models=", ".join(self.models),
                                 kinds=", ".join([*_DRAFT_KINDS, *self.heads]))
            raise UsageError("cli.fit.unknown_model", where=where, text=repr(text), models=", ".join(self.models))
        candidate = Path(text).expanduser()
        if not candidate.is_absolute() and not candidate.exists():
            candidate = path.parent / candidate  # relative to the CSV's folder when not to the working one
        key = candidate.resolve()
        if key not in self.configs:
            try:
                self.configs[key] = config_model(candidate)
            except (ValueError, OSError) as exc:  # a UsageError is a ValueError
                raise UsageError("cli.fit.cell", where=where, error=cause(exc)) from None
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
                raise UsageError("cli.fit.unknown_gpu", where=self.where(path, number, "gpu"), text=repr(text),
                                 gpus=", ".join(self.gpus))
            setting["gpu"], texts["gpu"] = self.gpus[text], repr(text)
        if given("target") or not partial:
            text = cells.get("target", "")
            setting["target"], texts["target"] = self.model(path, number, "target", text), repr(text)
        if given("draft") or given("draft_kv_budget") or not partial:
            text = cells.get("draft", "")
            kind, _, named = text.partition(":")
            if text in _DRAFT_KINDS:
                draft = step.Draft(text)
            elif text in self.heads:
                draft = step.Draft("eagle3", self.heads[text][1])
            elif kind in _NAMED_KINDS and named:
                draft = step.Draft(kind, self.model(path, number, "draft", named))
            else:
                draft = step.Draft("model", self.model(path, number, "draft", text))
            budget = cells.get("draft_kv_budget", "")
            if budget:
                draft = replace(draft, kv_budget=self.number(path, number, "draft_kv_budget", budget, low=1, whole=True))
            target = setting.get("target")
            if draft.kind == "mtp" and target is not None and target.mtp is None:
                raise UsageError("cli.fit.no_mtp", where=self.where(path, number, "draft"), target=target.name)
            setting["draft"], texts["draft"] = draft, repr(f"{text}/{budget}" if budget else text)
        if given("tp") or not partial:
            text = cells.get("tp", "")
            setting["tp"] = int(self.number(path, number, "tp", text, low=1, whole=True)) if text else 1
            texts["tp"] = repr(text or "1")
        if given("dp") or not partial:
            text = cells.get("dp", "")
            setting["dp"] = int(self.number(path, number, "dp", text, low=1, whole=True)) if text else 1
            texts["dp"] = repr(text or "1")
        if given("ep") or not partial:
            text = cells.get("ep", "").lower()
            if text not in _EP_WORDS:
                raise UsageError("cli.fit.ep", where=self.where(path, number, "ep"), text=repr(text))
            setting["ep"], texts["ep"] = _EP_WORDS[text], repr("on" if _EP_WORDS[text] else "off")
        if given("weight_dtype") or given("kv_dtype") or not partial:
            # Empty: as the checkpoint ships (FP8 blocks for DeepSeek-V3, MXFP4 experts for gpt-oss), as
            # calc and the calculator take a model (a CLI pass: an empty cell had priced DeepSeek-V3 in BF16).
            weights = cells.get("weight_dtype", "").lower() or "checkpoint"
            kv = cells.get("kv_dtype", "").lower() or "bf16"
            try:
                setting["precision"] = dtypes.precision_of(weights, kv)
            except InputError as exc:
                column = "kv_dtype" if exc.key == "dtypes.kv" else "weight_dtype"
                raise UsageError("cli.fit.precision", where=self.where(path, number, column), error=exc) from None
            texts["precision"] = repr(f"{weights}/{kv}")
        if given("engine") or not partial:
            text = cells.get("engine", "") or "any"
            if text not in self.engines:
                raise UsageError("cli.fit.unknown_engine", where=self.where(path, number, "engine"), text=repr(text),
                                 engines=", ".join(self.engines))
            setting["engine"], texts["engine"] = self.engines[text], repr(text)
        if given("tree_tokens") or not partial:
            text = cells.get("tree_tokens", "")
            setting["tree_tokens"] = self.number(path, number, "tree_tokens", text, low=1, whole=True) if text else None
            texts["tree_tokens"] = repr(text) if text else Notice("cli.fit.chain")
        return setting, texts

    def rows(self, path: Path, *, measured: bool) -> list[_FitRow]:
        header, records = _read_csv(path)
        required = FIT_COLUMNS + (("measured_speedup",) if measured else ())
        missing = [c for c in required if c not in header]
        if missing:
            raise UsageError("cli.fit.missing_column", path=str(path), column=repr(missing[0]), required=", ".join(required),
                             optional=", ".join(FIT_OPTIONAL_COLUMNS))
        gamma_max = settings.get("SPECVIZ_GAMMA_MAX")
        rows = []
        for number, cells in records:
            if not cells["series"]:
                raise UsageError("cli.fit.no_series", where=self.where(path, number, "series"))
            setting, texts = self.setting(path, number, cells, partial=not measured)
            gamma = self.number(path, number, "gamma", cells["gamma"], low=1, whole=True)
            if gamma > gamma_max:
                raise UsageError("cli.fit.gamma_max", where=self.where(path, number, "gamma"), most=gamma_max,
                                 text=repr(cells["gamma"]))
            row = _FitRow(number, cells["series"], setting, texts, gamma,
                          # Within what calc and the calculator take (a CLI pass: batch 100,000 and a context
                          # of 10⁷ tokens had been fitted without a word); a mean batch may be fractional.
                          self.number(path, number, "batch", cells["batch"], low=0, low_open=True,
                                      high=settings.get("SPECVIZ_BATCH_MAX")),
                          self.number(path, number, "context", cells["context"], low=0,
                                      high=settings.get("SPECVIZ_CONTEXT_MAX")), None)
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
        scored = f"γ + 1 = {nodes:g}" if tree_tokens is None else f"tree_tokens = {nodes:g}"  # a formula, no words
        raise UsageError("cli.fit.length_over", where=_FitReader.where(path, row.number, "acceptance_length"),
                         length=row.acceptance_length, scored=scored)


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
                    raise UsageError("cli.fit.series_differs", where=_FitReader.where(path, row.number, column),
                                     series=repr(series.name), here=row.texts[key], there=first.texts[key],
                                     row=first.number)
        if len(series.rows) < 2:
            raise UsageError("cli.fit.one_row", path=str(path), series=repr(series.name), row=first.number)
        target, tp = first.setting["target"], first.setting["tp"]
        if target.num_heads % tp:  # no measured run can have had it: vLLM's config check refuses to start
            raise UsageError("cli.fit.tp_heads", where=_FitReader.where(path, first.number, "tp"), tp=tp,
                             target=target.name, heads=target.num_heads)
        known = [row.acceptance_length is not None for row in series.rows]
        if any(known) and not all(known):
            row = series.rows[known.index(not known[0])]
            raise UsageError("cli.fit.lengths_mixed", where=_FitReader.where(path, row.number, "acceptance_length"),
                             series=repr(series.name))
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
                                        tree_tokens=setting["tree_tokens"], tp=setting["tp"], dp=setting["dp"], ep=setting["ep"],
                                        precision=setting["precision"])
            own = fit.predict(column("batch"), column("gamma"), column("context"), lengths)["speedup"]
    except ValueError as exc:
        numbers = [str(row.number) for row in series.rows]
        rows = (", ".join(numbers) if len(numbers) <= 10
                else Notice("cli.fit.more_rows", first=", ".join(numbers[:10]), count=len(numbers)))
        raise UsageError("cli.fit.not_fitted", path=str(path), series=repr(series.name), rows=rows,
                         error=cause(exc)) from None
    return fit, float(np.sqrt(np.mean((own - column("measured")) ** 2)))


def _not_held(series: _Series) -> list[Notice]:
    """``cli.fit.not_held`` for the rows of ``series`` whose batch the memory does not hold with the
    draft at their context and γ (:func:`specviz.scenario.largest_batch`, the engine's rule): a run
    measured there had another setting (more GPUs, another precision), which the fit does not know (a
    CLI pass: a context of 10⁷ tokens had been fitted with an RMS error of 0 and no word)."""
    setting = series.rows[0].setting
    column = lambda name: np.array([getattr(row, name) for row in series.rows], dtype=float)
    held = np.broadcast_to(scenario.largest_batch(setting["gpu"], setting["target"], setting["draft"], setting["precision"],
                                                  tp=setting["tp"], dp=setting["dp"], context=column("context"),
                                                  gamma=column("gamma"), rule=setting["engine"].memory),
                           (len(series.rows),))
    over = [(row, int(most)) for row, most in zip(series.rows, held) if row.batch > most]
    if not over:
        return []
    row, most = over[0]
    return [Notice("cli.fit.not_held", rows=", ".join(str(r.number) for r, _ in over[:10]), batch=row.batch,
                   context=row.context, most=most, gpus=setting["tp"] * setting["dp"])]


def _check_predict_rows(path: Path, measured_path: Path, rows: list[_FitRow], series: dict[str, _Series]) -> None:
    """Each row of P.csv names a series of M.csv, in that series' setting (a cell that names
    another setting is refused; an empty one takes the series'), with a possible acceptance length."""
    for row in rows:
        if row.series not in series:
            raise UsageError("cli.fit.not_a_series", where=_FitReader.where(path, row.number, "series"),
                             series=repr(row.series), measured=str(measured_path), names=", ".join(series))
        first = series[row.series].rows[0]
        for key, value in row.setting.items():
            if value != first.setting[key]:
                raise UsageError("cli.fit.other_setting", where=_FitReader.where(path, row.number, _SETTING_COLUMNS[key]),
                                 here=row.texts[key], series=repr(row.series), there=first.texts[key],
                                 measured=str(measured_path), row=first.number)
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
                raise UsageError("cli.fit.fitted_over", where=_FitReader.where(path, row.number, "acceptance_length"),
                                 series=repr(row.series), most=float(fitted_e.max()), nodes=nodes)
        groups.setdefault((row.series, row.acceptance_length is not None), []).append(row)
    out: dict[int, dict[str, Any]] = {}
    for (name, known), group in groups.items():
        column = lambda attr: np.array([getattr(row, attr) for row in group], dtype=float)
        try:
            with np.errstate(all="ignore"):
                result = fits[name].predict(column("batch"), column("gamma"), column("context"),
                                            column("acceptance_length") if known else None)
        except ValueError as exc:
            raise UsageError("cli.fit.not_predicted", path=str(path), row=group[0].number, error=cause(exc)) from None
        for i, row in enumerate(group):
            out[row.number] = {"row": row.number, "series": name, **{k: plain(float(result[k][i]))
                                                                     for k in ("speedup", "low", "high")}}
    return [out[row.number] for row in rows]


def fit_tables(measured: Path, predict: Path | None = None, lang: str = "en") -> dict[str, Any]:
    """The ``fit`` subcommand's result: ``{"series": {name: {"fitted", "rms_error", "warnings"}},
    "predictions": [{"row", "series", "speedup", "low", "high"}, ...]}``.

    Each series of ``measured`` (rows sharing a ``series`` name, gpu, target, draft, tp,
    precision, engine and tree_tokens) is calibrated on its own rows; ``fitted`` holds the weighted
    medians of :attr:`specviz.model.calibration.Fit.fitted`, ``rms_error`` the RMS of predicted minus
    measured speedup over those rows, ``warnings`` the fit's warnings as text in ``lang``. Each row
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
        report[name] = {"fitted": {k: plain(float(v)) for k, v in fit.fitted.items()}, "rms_error": plain(rms),
                        "warnings": [i18n.t(key, lang) for key in fit.warnings]
                        + [words(notice, lang) for notice in _not_held(one)]}
    return {"series": report, "predictions": _predictions(predict, wanted, series, fits) if wanted else []}


def _fit_output(result: dict[str, Any], fmt: str) -> str:
    if fmt == "json":
        return json_text(result)
    series = [{"series": name, **entry["fitted"], "rms_error": entry["rms_error"],
               "warnings": "; ".join(entry["warnings"])} for name, entry in result["series"].items()]
    predictions = result["predictions"] or []
    text = format_rows(series, fmt)
    return text + ("\n\n" + format_rows(predictions, fmt) if predictions else "")



_FIT_DOC = """\
Calibrates the step model (`specviz/model/calibration.py`) on each series of the --measured CSV on
its own and predicts every row of the --predict CSV with a band. Both CSVs have the columns
`series, gpu, target, draft, gamma, batch, context, acceptance_length`, the measured one also
`measured_speedup`; optional: `tp` (1), `dp` (data-parallel attention groups, 1), `ep` (expert
parallelism over all tp·dp GPUs, on or off), `weight_dtype` (bf16, fp8, int4, fp4 or nvfp4, mxfp4
(W4A8), mxfp4-w4a4 (AMD Quark's), or checkpoint for the formats its config.json ships; empty cells:
checkpoint, as `calc` takes a model) and `kv_dtype` (bf16 or fp8; empty cells: bf16), `engine` (an id of `data/engines.csv`, default `any`), `tree_tokens` (the verify pass's node count; empty:
a chain of γ + 1) and `draft_kv_budget` (the cached positions a self or StreamingLLM draft reads;
empty: the whole context); other columns are ignored. `gpu` is a preset id; `target` a preset id or
a config.json path (read as `model-from-config` reads it; a relative path that is not found from the
working folder is looked for beside the CSV); `draft` the same, a draft-head preset of
`data/draft_heads.csv`, a kind (`mtp`, `eagle`, `eagle3`, `peagle`, `medusa`, `ngram`, `suffix`,
`self`), or a kind and its model: `block:<model>` for a drafter of a block of γ tokens in one pass,
`eagle3:<config.json>` for an EAGLE-3 head of its own config.

The rows of a series share the setting (gpu, target, draft, tp, dtypes, engine, tree_tokens),
number two or more, and give `acceptance_length` in every row (measured) or in none (then E is
fitted too), a batch above 0 and at most `SPECVIZ_BATCH_MAX` (a mean may be fractional) and a
context of at most `SPECVIZ_CONTEXT_MAX`, as `calc` takes them. A row of the --predict CSV names a series of the measured one and is predicted in that
series' setting: its setting cells may be left empty, and one that names another setting is an
error; without an acceptance length it takes the series' (measured mean, or fitted).

Output (--format csv|md: the series table, a blank line, the predictions table): per series,
`fitted` holds the weighted medians over the draws that fit (`step_ms`: the fixed cost per step;
`token_us`: per token in a pass; `draft_pass_us` and `speculation_ms`: per draft pass and per
speculative step, drawn from the engine's range), `rms_error` the RMS of predicted minus measured speedup over the
series' own rows (about 0 with two rows, which the fit meets exactly), `warnings` the fit's warnings
in words (no non-negative costs fit; E at γ + 1; rows whose batch the memory does not hold with the
draft in the setting fitted, whose runs had another); per prediction, the band is the draws' 10th to
90th percentile widened by the model's error. For example:

    {"series": {"eagle3-head": {"fitted": {"mfu": 0.57, "mbu": 0.76, "overlap": 0.26, "layer_us": 2.4,
       "allreduce_us": 8.1, "draft_pass_us": 380.0, "speculation_ms": 1.1, "step_ms": 0.96, "token_us": 9.5,
       "expected_tokens": 2.9},
       "rms_error": 0.0, "warnings": []}},
     "predictions": [{"row": 1, "series": "eagle3-head", "speedup": 1.75, "low": 1.50, "high": 1.96}]}

Rows are counted from 1 below the header, blank lines not counted, in `row` and in messages. A
missing column, an unknown preset, a cell that is not a number where one belongs, a series of one
row, a --predict row of an unknown series or an unreadable file exits 2 with one line that names the
file, the row and the column.
"""

def add_parsers(sub: argparse._SubParsersAction) -> None:
    """The ``fit`` subcommand."""
    p = sub.add_parser("fit", description=_FIT_DOC, help="calibrate the step model on measured speedups, series by series, and "
                                   "predict other points with a band")
    p.add_argument("--measured", type=Path, required=True,
                   help="CSV: " + ", ".join(FIT_COLUMNS) + ", measured_speedup (optional: "
                        + ", ".join(FIT_OPTIONAL_COLUMNS) + ")")
    p.add_argument("--predict", type=Path, help="CSV of points to predict, each naming a series of --measured")
    p.add_argument("--format", **FORMAT)
    p.set_defaults(run=lambda args: (_fit_output(fit_tables(args.measured, args.predict, args.lang), args.format), 0))
