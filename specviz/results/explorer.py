"""The results explorer's analysis: runs by load, speculative runs beside their baselines, measured
speedup beside the model's prediction, and calibration of the step model to measured points.

Everything here takes and returns DataFrames of canonical runs (:func:`specviz.results.store.Store.runs`),
after :func:`with_load` has added the columns that the views share.
"""

from __future__ import annotations

import math
import numbers
import re
import time
from collections import Counter
from collections.abc import Collection, Mapping
from dataclasses import dataclass, replace
from pathlib import PurePath
from typing import Any

import numpy as np
import pandas as pd

from specviz import calculator
from specviz.errors import InputError, Notice
from specviz.model import architecture, calibration, roofline, spec
from specviz.results import extra
from specviz.scenario import (FIELDS, Presets, Scenario, default_draft, default_parallel, draft_choices, gpu_preset,
                              model_key, models_by_key, preset_costs, resolve_draft, steady_load)

__all__ = [
    "FILTER_COLUMNS",
    "LOAD_AXES",
    "GROUP_COLUMNS",
    "EXTRA_PREFIX",
    "ACCEPTANCE_FIGURES",
    "example_hashes",
    "own_imports",
    "one_origin",
    "measured_acceptance",
    "with_load",
    "newest_first",
    "on_load_axis",
    "infinite_rate_runs",
    "other_axis_runs",
    "runs_without_load",
    "groups_without",
    "rate_text",
    "extra_keys",
    "with_group",
    "is_speculative",
    "pair_with_baselines",
    "unpaired_speculative",
    "ratio_warnings",
    "run_presets",
    "run_settings",
    "run_tokens",
    "setting_scenario",
    "SettingFit",
    "SettingRefused",
    "calibrate_settings",
    "crossover_concurrency",
    "sweep_peaks",
    "workload_acceptance",
    "draft_settings",
    "predict",
    "calibrate_ratios",
    "ratios_scenario",
    "calibration_in_use",
    "load_published",
    "EXAMPLE_QUERIES",
]

EXAMPLE_QUERIES = {
    "runs_by_format": "SELECT source_format, count(*) AS runs FROM runs GROUP BY 1 ORDER BY 2 DESC",
    "throughput_by_concurrency": "SELECT label, workload, concurrency, output_throughput, p99_itl_ms\n"
                                 "FROM runs WHERE concurrency IS NOT NULL ORDER BY label, workload, concurrency",
    "acceptance": "SELECT workload, num_speculative_tokens AS gamma, avg(acceptance_length) AS tokens_per_step,\n"
                  "       avg(acceptance_rate) AS vllm_rate FROM runs WHERE acceptance_length IS NOT NULL\n"
                  "GROUP BY ALL ORDER BY 1, 2",
    "request_percentiles": "SELECT run_id, count(*) AS requests, quantile_cont(ttft_ms, 0.99) AS p99_ttft_ms\n"
                           "FROM requests GROUP BY 1 ORDER BY 1",
    "imports": "SELECT source_file, source_format, imported_at, runs, requests FROM imports ORDER BY imported_at",
    "live_windows": "SELECT source, model, round(running_requests) AS running, count(*) AS windows,\n"
                    "       sum(accepted_tokens) / sum(draft_tokens) AS acceptance_rate,\n"
                    "       1 + sum(accepted_tokens) / sum(drafts) AS acceptance_length,\n"
                    "       avg(generation_throughput) AS tokens_per_s\n"
                    "FROM windows WHERE drafts > 0 GROUP BY ALL ORDER BY 1, 2, 3",
}

FILTER_COLUMNS = ("workload", "spec_method", "num_speculative_tokens", "concurrency", "target_model", "gpu", "engine",
                  "label")
LOAD_AXES = ("concurrency", "request_rate")
"""What a load sweep can be charted against: a closed loop of N concurrent clients, or an open loop
of requests per second. The two are not one axis (8 clients is not 8 req/s)."""
GROUP_COLUMNS = ("series", "label", "source_file", "target_model", "engine")
"""Columns that :func:`with_group` can tell lines apart by; keys of ``extra`` come from :func:`extra_keys`."""
EXTRA_PREFIX = "extra."
"""A group key that names a field of ``extra`` (dotted for nested objects: ``extra.sweep.serve.max_num_seqs``)."""
ACCEPTANCE_FIGURES = ("acceptance_length", "zero_accept_rate")

# Method names that say a run did not speculate (compared lower-cased).
_PLAIN_METHODS = frozenset({"none", "off", "no", "disabled"})
# A run's identity apart from speculation: a baseline must match these (NULLs match NULLs), see
# pair_with_baselines for engine and endpoint.
_MATCH = ("workload", "target_model", "gpu", "concurrency", "origin")


def example_hashes(imports: pd.DataFrame) -> frozenset[str]:
    """Content hashes of the imported files that are shipped examples (``imports.origin = 'example'``),
    from :func:`specviz.results.store.Store.imports`."""
    return frozenset(imports.loc[imports["origin"] == "example", "content_hash"])


def own_imports(imports: pd.DataFrame) -> pd.DataFrame:
    """The user's imported files (``imports.origin = 'user'``, live runs saved among them), newest
    first, from :func:`specviz.results.store.Store.imports`: what a user may remove one by one (the
    shipped examples go together, by :meth:`~specviz.results.store.Store.remove_examples`)."""
    return imports[imports["origin"] == "user"].sort_values("imported_at", ascending=False, kind="stable")


def _origin(runs: pd.DataFrame, examples: Collection[str] | None) -> pd.Series:
    """``"example"`` or ``"user"`` per run: the frame's own ``origin`` where it has one, else whether
    the run's file is one of ``examples`` (content hashes), else whether its name starts with
    ``examples/`` (what the store calls the examples it seeds)."""
    if "origin" in runs:
        return runs["origin"]
    if examples is not None:
        is_example = runs["content_hash"].isin(examples)
    else:
        is_example = runs["source_file"].fillna("").str.startswith("examples/")
    return pd.Series(np.where(is_example, "example", "user"), index=runs.index)


def with_load(runs: pd.DataFrame, examples: Collection[str] | None = None) -> pd.DataFrame:
    """Add the columns the views share.

    ``load`` is the concurrency, or the request rate where a run set none; ``load_kind`` says which,
    or ``all_at_once`` for a run that sent every request at once (request rate ∞, no concurrency),
    whose load is not a number. ``series`` tells the lines of one chart apart, by one rule
    (:func:`series_names`); ``group`` (what colours the lines) is the series until :func:`with_group`
    picks another key. ``origin`` is ``example`` or ``user``: from ``examples``, the content hashes of
    the example files (:func:`example_hashes`), when given.
    """
    out = runs.copy(deep=False)  # copy-on-write (pandas 3): the columns added are this frame's alone
    rate = out["request_rate"]
    finite_rate = rate.where(np.isfinite(rate))
    out["load"] = out["concurrency"].where(out["concurrency"].notna(), finite_rate)
    out["load_kind"] = np.where(out["concurrency"].notna(), "concurrency",
                                np.where(finite_rate.notna(), "request_rate",
                                         np.where(rate == np.inf, "all_at_once", None)))
    out["series"] = series_names(out)
    out["group"] = out["series"]
    out["origin"] = _origin(runs, examples)
    return out


def series_names(runs: pd.DataFrame) -> pd.Series:
    """The name of the line each run is a point of, by one rule for every format.

    A run's setting is ``plain`` for a plain run (:func:`is_speculative`), else its method and γ
    (``eagle γ=4``). Within one file, the runs of one setting and workload are one series: named by
    their label where they all share one (``vllm bench --label``, a sweep's own name), else by the
    setting and the file's name. Labels name lines where one is shared by several runs, or where it
    is the only one; where each run has a label of its own, they name points (GuideLLM's
    ``concurrent 4``, ``concurrent 8``), and the sweep stays one line under its setting and file.
    Runs of one name that name another target model, GPU or engine are never one line: the name
    then says which, after the label or file (:func:`_what_differs`). The workload, where there is
    one, ends the name, and a run at synthetic acceptance (:mod:`specviz.results.synthetic`) says so
    last: every table and chart shows it apart.
    """
    setting = _settings(runs)
    file_name = runs["source_file"].map(lambda f: PurePath(f).name if isinstance(f, str) else "")
    label = runs["label"].where(runs["label"] != "")
    keys = [runs["content_hash"].fillna(""), setting, runs["workload"].fillna("")]
    runs_per_label = label.groupby([*keys, label]).transform("size")
    point_labels = (label.groupby(keys).transform("nunique") > 1) & (runs_per_label.groupby(keys).transform("max") == 1)
    base = label.where(label.notna() & ~point_labels, setting + " · " + file_name)
    synthetic = synthetic_acceptance(runs)
    workload = (" · " + runs["workload"].fillna("")).where(runs["workload"].notna(), "")
    tail = workload + pd.Series(np.where(synthetic, " · " + SYNTHETIC_MARK, ""), index=runs.index)
    return base + _what_differs(runs, base + tail) + tail


_APART = ("target_model", "gpu", "engine")
"""What a series never spans: the runs of one name (files of one name, as AIPerf writes one per run's
folder, or one label) that name another target model, GPU or engine are other lines."""


def _what_differs(runs: pd.DataFrame, names: pd.Series) -> pd.Series:
    """Per run, `` · value`` for each column of :data:`_APART` whose values differ among the runs of its
    name in ``names`` (a missing value is one of them, and adds nothing): the text that tells apart the
    series that share a name, empty where nothing differs."""
    said = pd.Series("", index=runs.index, dtype=object)
    for column in _APART:
        values = runs[column].where(runs[column].notna(), "").astype(str)
        differs = values.groupby(names).transform("nunique") > 1
        said += np.where(differs & (values != ""), " · " + values, "")
    return said


def _settings(runs: pd.DataFrame) -> pd.Series:
    """A run's setting as its series name gives it: ``plain`` for a plain run (:func:`is_speculative`),
    else its method and γ (``eagle γ=4``)."""
    # Text even when there are no runs: an empty map keeps the column's integer type.
    gamma = runs["num_speculative_tokens"].map(lambda g: "" if pd.isna(g) else f" γ={int(g)}").astype(str)
    method = (runs["spec_method"].fillna("").astype(str) + gamma).str.strip()
    return pd.Series(np.where(is_speculative(runs), method.where(method != "", "speculative"), "plain"),
                     index=runs.index)


# The fields of ``extra`` that give a tree's shape (SpecForge's own, SGLang's server_info), and the text
# of each, as SpecForge's labels write it.
_TREE = ((("topk", "server_info.speculative_eagle_topk"), "top-k {}"),
         (("num_draft_tokens", "server_info.speculative_num_draft_tokens"), "{} draft tokens"))


def draft_settings(runs: pd.DataFrame) -> pd.Series:
    """A run's draft setting: its setting as its series name says it (method and γ, or ``plain``), and
    the tree it drafted, where its file gives one (``EAGLE3 γ=7, top-k 10, 60 draft tokens``). Runs of
    one method and γ accept differently with another tree: a top-k 10 tree of 60 tokens accepts about
    4.4 tokens a step where a chain of 3 accepts 2.6 (SpecForge's real results)."""
    text = _settings(runs)
    if "extra" not in runs:  # a table of runs without their files' fields: no tree to tell
        return text
    fields = runs["extra"].map(extra.scalar_fields)  # a text per run: JSON is read one at a time
    for paths, shown in _TREE:
        value = fields.map(lambda found: next((found[p] for p in paths if found.get(p) is not None), None))
        text += np.where(value.notna(), ", " + value.map(lambda v: shown.format(_as_text(v))), "")
    return text


SYNTHETIC_MARK = "synthetic acceptance"
"""What ends the series name of a run at synthetic acceptance, in every language (a series name is data)."""


def synthetic_acceptance(runs: pd.DataFrame) -> pd.Series:
    """True per run whose acceptance the benchmark set (``synthetic_acceptance``; unknown is false)."""
    if "synthetic_acceptance" not in runs:
        return pd.Series(False, index=runs.index)
    return runs["synthetic_acceptance"].astype("boolean").fillna(False).astype(bool)


def measured_acceptance(runs: pd.DataFrame, synthetic_wanted: bool = False) -> tuple[pd.DataFrame, int]:
    """The runs whose acceptance was measured, for a fit, a calibration, a schedule or a claim: a run
    at synthetic acceptance says what the engine does at a rate the benchmark chose, not how often
    real drafts are accepted.

    Returns
    -------
    (DataFrame, int)
        The runs (all of them where ``synthetic_wanted``), and how many were left out.
    """
    synthetic = synthetic_acceptance(runs)
    if synthetic_wanted:
        return runs, 0
    return runs[~synthetic], int(synthetic.sum())


def one_origin(runs: pd.DataFrame, examples_wanted: bool = False) -> tuple[pd.DataFrame, str]:
    """The runs a view works on, of one origin (:func:`with_load`'s ``origin``), never the shipped
    examples mixed with the user's: the user's runs where there are any, the examples where there
    are none or where ``examples_wanted``. Fits, calibrations, counts and claims then stand on one
    kind of figure, and a page labels the examples as what they are.

    Returns
    -------
    (DataFrame, str)
        The runs, and their origin: ``"user"`` or ``"example"``.
    """
    users = runs[runs["origin"] == "user"]
    if users.empty or examples_wanted:
        return runs[runs["origin"] == "example"], "example"
    return users, "user"


def newest_first(runs: pd.DataFrame) -> pd.DataFrame:
    """The runs of the newest import first; within one import, the file's own order."""
    return runs.sort_values("imported_at", ascending=False, kind="stable", na_position="last")


def _on_axis(runs: pd.DataFrame, axis: str) -> pd.Series:
    """Whether each run has a place on a log axis of ``axis``: a finite value above zero."""
    values = runs[axis].astype(float)
    return np.isfinite(values) & (values > 0)


def on_load_axis(runs: pd.DataFrame, axis: str) -> pd.DataFrame:
    """The runs that have a place on the ``axis`` (one of :data:`LOAD_AXES`), with ``load`` and
    ``load_kind`` set to it. A run with both (vLLM's ``--max-concurrency`` with a request rate) is
    on both axes; a run at an infinite rate is on neither rate axis (:func:`infinite_rate_runs`)."""
    placed = runs[_on_axis(runs, axis)]
    return placed.assign(load=placed[axis], load_kind=axis)


def infinite_rate_runs(runs: pd.DataFrame, axis: str) -> pd.DataFrame:
    """Runs that sent every request at once (request rate ∞, ``vllm bench serve``'s default) and
    have no place on the ``axis``: all of them on the request-rate axis, those without a
    concurrency on the concurrency axis. Listed beside a chart, never plotted at infinity."""
    return runs[(runs["request_rate"] == np.inf) & ~_on_axis(runs, axis)]


def other_axis_runs(runs: pd.DataFrame, axis: str) -> pd.DataFrame:
    """Runs with no place on the ``axis`` but one on the other load axis, so that the page can say
    where they are. Runs at an infinite rate are left to :func:`infinite_rate_runs`, which lists them."""
    other = next(a for a in LOAD_AXES if a != axis)
    return runs[~_on_axis(runs, axis) & _on_axis(runs, other) & (runs["request_rate"] != np.inf)]


def runs_without_load(runs: pd.DataFrame) -> pd.DataFrame:
    """Runs on no load axis: no concurrency and no request rate above zero (a rate of ∞ is a load:
    :func:`infinite_rate_runs`)."""
    placed = pd.Series(False, index=runs.index)
    for axis in LOAD_AXES:
        placed |= _on_axis(runs, axis)
    return runs[~placed & (runs["request_rate"] != np.inf)]


def groups_without(runs: pd.DataFrame, metric: str) -> int:
    """How many groups (``group``, a missing one counted as one group) have no run with both ``metric``
    and ``load``: entries of a chart's legend, which lists every group, with no line in that chart."""
    drawn = runs.dropna(subset=[metric, "load"])["group"]
    return runs["group"].nunique(dropna=False) - drawn.nunique(dropna=False)


def rate_text(rate: float) -> str | None:
    """A request rate as the runs table shows it: ``∞`` for every request at once, none when missing."""
    if pd.isna(rate):
        return None
    return "∞" if rate == np.inf else f"{rate:g}"


def extra_keys(runs: pd.DataFrame) -> list[str]:
    """Fields of ``extra`` that can tell sweeps apart, as group keys (:data:`EXTRA_PREFIX` + path).

    A field qualifies when it takes at least two values across the runs and repeats (fewer values
    than runs that have it): a setting such as ``max_num_seqs``, not a per-run measurement such as
    ``std_ttft_ms`` or a date, which differ on every run.
    """
    values: dict[str, set[Any]] = {}
    present: Counter[str] = Counter()
    for flat in map(extra.scalar_fields, runs["extra"]):
        for path, value in flat.items():
            if value is not None and not (isinstance(value, float) and math.isnan(value)):
                values.setdefault(path, set()).add(value)
                present[path] += 1
    return sorted(EXTRA_PREFIX + path for path, seen in values.items() if 1 < len(seen) < present[path])


def _as_text(value: Any) -> str | None:
    """A group value as legend text: whole numbers without ``.0`` (4.0 and 4 are one setting)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return f"{value:.12g}"
    return str(value)


def with_group(runs: pd.DataFrame, key: str) -> pd.DataFrame:
    """Set ``group`` to the text of ``key`` per run: one of :data:`GROUP_COLUMNS`, or a field of
    ``extra`` from :func:`extra_keys`. A run without the key has no group (missing)."""
    if key.startswith(EXTRA_PREFIX):
        path = key.removeprefix(EXTRA_PREFIX)
        values = pd.Series([extra.scalar_fields(text).get(path) for text in runs["extra"]], index=runs.index,
                           dtype=object)
    else:
        values = runs[key]
    return runs.assign(group=values.map(_as_text))


def is_speculative(runs: pd.DataFrame) -> pd.Series:
    """Whether each run speculated; the others are plain runs, the baselines.

    A run is plain when γ (``num_speculative_tokens``) is 0, or its method is ``none``, ``off``,
    ``no`` or ``disabled`` (any case), or it shows no sign of speculation at all: no method, no γ,
    no acceptance figure. Any other run speculated (a method, a γ ≥ 1 or an acceptance figure).
    """
    method = runs["spec_method"].fillna("").astype(str).str.strip().str.lower()
    gamma = runs["num_speculative_tokens"]
    # γ is a nullable integer from the store: a missing γ is not 0.
    switched_off = method.isin(_PLAIN_METHODS) | gamma.eq(0).fillna(False).astype(bool)
    no_sign = ((method == "") & gamma.isna() & runs["acceptance_length"].isna()
               & runs["acceptance_rate"].isna())
    return ~(switched_off | no_sign.astype(bool))


def pair_with_baselines(runs: pd.DataFrame) -> pd.DataFrame:
    """Each speculative run beside the plain run of the same workload, model, GPU, engine and load,
    with the measured speedup.

    The load matches when the concurrency is the same and so is the request rate, an infinite or
    missing rate counting as none (a concurrency-bound run). Examples pair only with examples.
    ``engine`` matches when equal or missing on either side: schema 2 leaves it empty where a file
    named only an endpoint type (``--backend openai-chat``), so the same server benchmarked through
    two clients must still pair; a baseline of the same engine wins over one that names none, then
    the newest. ``endpoint`` (openai-chat, completions, openai_http) is no key at all: it is how the
    client called the server, not what the server ran, and one tool records it where another does not.

    Measured speedup = SD output throughput / baseline output throughput (same load), or, where
    throughput is missing, baseline mean TPOT / SD mean TPOT. ITL is not used: with speculation
    ``vllm bench serve`` reports it per streamed chunk, which holds several tokens.
    """
    spec_mask = is_speculative(runs)
    keys = [*_MATCH, "rate"]
    measured = ["run_id", "engine", "output_throughput", "mean_tpot_ms"]
    keyed = runs.assign(rate=runs["request_rate"].where(np.isfinite(runs["request_rate"])),
                        order=np.arange(len(runs)))
    base = keyed.loc[~spec_mask, keys + measured + ["order"]].rename(
        columns={c: f"baseline_{c}" for c in [*measured, "order"]})
    # pandas matches missing keys with missing keys, so runs that set no GPU pair with each other.
    candidates = keyed[spec_mask].merge(base, on=keys)
    same_engine = candidates["engine"] == candidates["baseline_engine"]
    compatible = same_engine | candidates["engine"].isna() | candidates["baseline_engine"].isna()
    paired = (candidates[compatible].assign(same_engine=same_engine[compatible])
              .sort_values(["same_engine", "baseline_order"], kind="stable")
              .drop_duplicates("order", keep="last").sort_values("order"))
    throughput = paired["output_throughput"] / paired["baseline_output_throughput"]
    tpot = paired["baseline_mean_tpot_ms"] / paired["mean_tpot_ms"]
    paired["measured_speedup"] = throughput.where(throughput.notna(), tpot)
    paired = paired.dropna(subset=["measured_speedup"]).drop(
        columns=["rate", "order", "baseline_order", "baseline_engine", "same_engine"])
    return paired.sort_values(["series", "concurrency"], kind="stable").reset_index(drop=True)


def unpaired_speculative(runs: pd.DataFrame, paired: pd.DataFrame) -> pd.DataFrame:
    """The speculative runs of ``runs`` that :func:`pair_with_baselines` left out of ``paired``: no
    plain run matches them, or neither side has a throughput or TPOT to compare."""
    spec_runs = runs[is_speculative(runs)]
    return spec_runs[~spec_runs["run_id"].isin(paired["run_id"])]


def crossover_concurrency(paired: pd.DataFrame) -> pd.DataFrame:
    """Per workload, model and series: the smallest concurrency at which measured speedup < 1."""
    rows = []
    for key, group in paired.dropna(subset=["concurrency"]).groupby(
            ["workload", "target_model", "series"], dropna=False, sort=False):
        losing = group[group["measured_speedup"] < 1].sort_values("concurrency")
        rows.append(dict(zip(("workload", "target_model", "series"), key),
                         crossover_concurrency=losing["concurrency"].iloc[0] if len(losing) else math.nan))
    return pd.DataFrame(rows, columns=["workload", "target_model", "series", "crossover_concurrency"])


def sweep_peaks(runs: pd.DataFrame) -> pd.DataFrame:
    """The run with the highest output throughput on each line (``group`` and ``series``): the
    peak of a load sweep."""
    valid = runs.dropna(subset=["output_throughput", "load"])
    if valid.empty:
        return valid
    return valid.loc[valid.groupby(["group", "series"], dropna=False)["output_throughput"].idxmax()]


def workload_acceptance(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean acceptance length and zero-accept share per workload (seed 002's view by task) and draft
    setting (``draft_setting``, :func:`draft_settings`: another γ or tree accepts another number of
    tokens a step, never averaged together; where the runs hold several target and draft models, the
    pair is named in it too), the examples and the user's runs apart (``origin``):
    synthetic figures never enter a user's mean, nor do runs at synthetic acceptance
    (:func:`measured_acceptance`), nor plain runs (SpecForge's baselines report an acceptance length
    of 1: no draft, nothing to accept). Runs that name no workload are one row with a missing
    ``workload``."""
    runs = measured_acceptance(runs)[0]
    spec_runs = runs[is_speculative(runs) & (runs["acceptance_length"].notna() | runs["zero_accept_rate"].notna())]
    setting = draft_settings(spec_runs)
    # Another target or draft accepts otherwise too: where the runs hold several pairs, each is named
    # in its setting (and so never averaged with another).
    pair = pd.Series("", index=spec_runs.index)
    for column, joint in (("target_model", ""), ("draft_model", " + ")):
        if column in spec_runs:
            named = spec_runs[column].fillna("").astype(str)
            pair += np.where((named != "") & (pair != ""), joint, "") + named
    if pair.nunique() > 1:
        setting = setting + np.where(pair != "", " · " + pair, "")
    spec_runs = spec_runs.assign(draft_setting=setting)
    return (spec_runs.groupby(["origin", "workload", "draft_setting"], as_index=False, dropna=False)
            .agg(acceptance_length=("acceptance_length", "mean"), zero_accept_rate=("zero_accept_rate", "mean"),
                 runs=("run_id", "count")))


def _acceptance_length(paired: pd.DataFrame) -> pd.Series:
    """Measured tokens per step: the acceptance length, else 1 + vLLM's rate·γ."""
    from_rate = 1 + paired["acceptance_rate"] * paired["num_speculative_tokens"]
    return paired["acceptance_length"].where(paired["acceptance_length"].notna(), from_rate)


def run_presets(runs: pd.DataFrame, models: dict[str, architecture.Model],
                gpus: dict[str, roofline.GPU]) -> pd.DataFrame:
    """The presets each run's own ``target_model`` and ``gpu`` name (``target`` and ``gpu`` ids,
    missing where no preset matches: :func:`specviz.scenario.model_preset`, :func:`specviz.scenario.gpu_preset`),
    so that a prediction can say when it uses the sidebar's instead."""
    by_key = models_by_key(models)
    return pd.DataFrame({"target": [by_key.get(model_key(t)) if isinstance(t, str) else None
                                    for t in runs["target_model"]],
                         "gpu": [gpu_preset(g, gpus) if isinstance(g, str) else None for g in runs["gpu"]]},
                        index=runs.index)


# Methods as benchmark tools and engines name them → the step model's draft. An MTP (NextN) module is
# one decoder layer on the target's features sharing its LM head, as an EAGLE head is (DeepSeek-V3
# report, arXiv:2412.19437, §2.2); suffix decoding, like prompt lookup, drafts on the host.
_METHOD_DRAFTS = {"eagle": "eagle", "eagle3": "eagle3", "ngram": "ngram", "suffix": "suffix", "mtp": "mtp",
                  "nextn": "mtp", "deepseek_mtp": "mtp", "medusa": "medusa"}


def _engine_of(engine: Any, version: Any, engines: Collection[str]) -> str | None:
    """The engine preset a run's engine text names; None where it names none. vLLM runs the V1
    engine by default from 0.8.0 (vLLM 0.8.0 release notes), so earlier versions name V0."""
    text = engine.lower() if isinstance(engine, str) else ""
    if "sglang" in text:
        found = "sglang"
    elif "tensorrt" in text or "trt" in text:
        found = "trt-llm"
    elif "vllm" in text:
        release = re.match(r"v?(\d+)\.(\d+)", version) if isinstance(version, str) else None
        found = "vllm-v0" if release and (int(release[1]), int(release[2])) < (0, 8) else "vllm-v1"
    else:
        return None
    return found if found in engines else None


def run_settings(runs: pd.DataFrame, scenario: Scenario, presets: Presets) -> pd.DataFrame:
    """The setting each run's prediction uses: ``target``, ``gpu``, ``draft`` and ``engine`` ids,
    each the run's own where it names a preset (its target model and GPU, :func:`run_presets`; its
    method or draft model; its engine and version) and the scenario's otherwise, and ``own``, True
    where both the target and the GPU are the run's. A run's draft model that matches no preset, on
    the scenario's target, is the scenario's draft; on another target, that target's default draft."""
    named = run_presets(runs, presets.models, presets.gpus)
    keys = {model_key(model_id): model_id for model_id in presets.models}
    rows = []
    for (index, run), target, gpu in zip(runs.iterrows(), named["target"], named["gpu"]):
        own = isinstance(target, str) and isinstance(gpu, str)
        target = target if isinstance(target, str) else scenario.target_id
        method = run.get("spec_method")
        draft = _METHOD_DRAFTS.get(method.lower()) if isinstance(method, str) else None
        if draft is None and isinstance(run.get("draft_model"), str):
            draft = keys.get(model_key(run["draft_model"]))
        if draft == "mtp" and "mtp" not in draft_choices(presets, target):
            draft = "eagle"  # an MTP layer of a model without a preset drafts as a one-layer head does
        if draft is None:
            draft = scenario.draft_id if target == scenario.target_id else default_draft(target, presets)
        rows.append({"target": target, "gpu": gpu if isinstance(gpu, str) else scenario.gpu.id, "draft": draft,
                     "engine": _engine_of(run.get("engine"), run.get("engine_version"), presets.engines)
                     or scenario.engine.id, "own": own})
    return pd.DataFrame(rows, index=runs.index, columns=["target", "gpu", "draft", "engine", "own"])


def setting_scenario(scenario: Scenario, target: str, gpu: str, draft: str, engine: str, presets: Presets) -> Scenario:
    """``scenario`` with the target, GPU, draft and engine of one setting (:func:`run_settings`), at
    the engine's preset costs and on the fewest GPUs that hold the pair (a run does not say how many
    it used; :func:`specviz.scenario.default_parallel`); ``scenario`` itself, custom models, typed GPU
    figures and GPU count included, where the setting is its own."""
    if (target, gpu, draft, engine) == (scenario.target_id, scenario.gpu.id, scenario.draft_id, scenario.engine.id):
        return scenario
    chosen = presets.engines[engine]
    device = scenario.gpu if gpu == scenario.gpu.id else presets.gpus[gpu]
    model, drafter = presets.models[target], resolve_draft(draft, presets)
    return replace(scenario, gpu=device, gpu_figures=scenario.gpu_figures if gpu == scenario.gpu.id else {},
                   target=model, target_id=target, draft=drafter, draft_id=draft, engine=chosen,
                   costs=preset_costs(chosen),
                   **dict(zip(("tp", "dp", "ep"), default_parallel(device, model, drafter, scenario.precision,
                                                                   chosen.memory))))


def _setting_label(target: str, gpu: str, draft: str, engine: str, tokens: tuple[int, int] | None = None) -> str:
    """A setting's name; with ``tokens``, its runs' load (tokens in and out per request) too."""
    load = f" · ISL {tokens[0]} · OSL {tokens[1]}" if tokens is not None else ""
    return f"{target} · {gpu} · {draft} · {engine}{load}"


def run_tokens(runs: pd.DataFrame) -> pd.DataFrame:
    """Each run's mean tokens in and out per request, ``prompt_tokens`` and ``output_tokens``: its
    output tokens per second over its requests per second, and the rest of its total tokens per
    second over the same (each tool's totals over the run's duration: vLLM's
    ``total_token_throughput`` counts prompt and output tokens), rounded to whole tokens; a file's
    own means per request where it states them (GuideLLM's ``prompt_token_count`` and
    ``output_token_count``: its tokens per second are means of rate series, whose ratio is no
    request's count, 513 in where its requests held 257). NaN where a
    throughput is missing or the figures are not a steady load's (:func:`specviz.scenario.steady_load`:
    under one token in, past the longest context a scenario takes, or requests that end within one
    speculative step of the run's γ)."""
    rate = runs["request_throughput"].where(runs["request_throughput"] > 0)
    output = runs["output_throughput"] / rate
    prompt = (runs["total_token_throughput"] - runs["output_throughput"]) / rate
    if "extra" in runs:  # a file's own means per request, where it states them (GuideLLM's), first
        stated = runs["extra"].map(extra.scalar_fields)
        for derived, key in ((prompt, "mean_prompt_tokens"), (output, "mean_output_tokens")):
            means = pd.to_numeric(stated.map(lambda fields: fields.get(key)), errors="coerce")
            derived.update(means[means > 0])
    output, prompt = output.round(), prompt.round()
    gamma = runs["num_speculative_tokens"].fillna(0) if "num_speculative_tokens" in runs else 0
    known = (prompt >= 1) & (output - 1 >= gamma + 1) & (prompt + output <= FIELDS["input_tokens"].upper)
    return pd.DataFrame({"prompt_tokens": prompt.where(known), "output_tokens": output.where(known)}, index=runs.index)


# Runs of one setting whose tokens in and out lie within this share of their median share the median
# load: a sweep's runs differ by a few tokens (vLLM's random dataset draws each request's lengths:
# 264–275 out of 999 in over one file), and a calibration fits one load.
LOAD_SPREAD = 0.2


def _groups(runs: pd.DataFrame, settings: pd.DataFrame, loads: bool) -> list[tuple[str, tuple, tuple[int, int] | None, pd.Index]]:
    """The runs of each setting (:func:`run_settings`), and with ``loads`` of each load too (tokens
    in and out per request, :func:`run_tokens`; runs without them apart; a setting's runs within
    :data:`LOAD_SPREAD` of its median at their own median, rounded): (name, setting, tokens or None,
    the runs' index)."""
    keys = settings[["target", "gpu", "draft", "engine"]]
    if loads:
        tokens = run_tokens(runs)
        by_setting = [keys[c] for c in keys.columns]
        median = tokens.groupby(by_setting, dropna=False).transform("median")
        near = ((tokens - median).abs() <= LOAD_SPREAD * median).all(axis=1)
        # The load they share: the median of those near it, not of every run of the setting.
        shared = tokens.where(near).groupby(by_setting, dropna=False).transform("median").round()
        keys = keys.join(tokens.where(~near, shared))
    groups = []
    for key, index in keys.groupby(list(keys.columns), dropna=False).groups.items():
        load = key[4:]
        tokens = (int(load[0]), int(load[1])) if load and not any(pd.isna(v) for v in load) else None
        groups.append((_setting_label(*key[:4], tokens=tokens), key[:4], tokens, index))
    return groups


def predict(paired: pd.DataFrame, scenario: Scenario, presets: Presets, context: int = 0,
            calibrated: Scenario | Mapping[str, Scenario] | None = None, loads: bool = False) -> pd.DataFrame:
    """The step model's speedup for each paired run, at its own α, γ and concurrency, in its own
    setting (:func:`run_settings`), at its engine's preset costs or at a calibration's, with the band
    of :func:`specviz.calculator.speedup_band`.

    α comes from the measured acceptance length through the inverse of E(α, γ) (never from vLLM's
    accepted/drafted directly). Rows without γ, acceptance or concurrency get no prediction.
    Adds ``alpha``, ``predicted_speedup``, ``predicted_low``, ``predicted_high``, ``error``
    (measured − predicted), ``setting`` (target · GPU · draft · engine ids), ``own_setting``
    (False where the run named no target or GPU preset and the scenario's stood in) and ``costs``
    (``"preset"``, or ``"calibrated"`` where ``calibrated`` predicted the run), and ``prompt_tokens``
    and ``output_tokens``, the load a run was predicted at (NaN: decoding only at ``context``).

    Parameters
    ----------
    loads : bool
        Predict each run whose tokens per request are known (:func:`run_tokens`) as a steady load of
        its requests (:func:`specviz.scenario.steady_load`: each step also takes arriving prompts, at
        the requests' mean context), its setting named with its load; the others decode only at
        ``context``.
    calibrated : Scenario or mapping of str to Scenario, optional
        A calibration to predict with in place of the preset costs (:func:`calibration_in_use`):
        scenarios at fitted costs by the label of the setting they were fitted on, or one scenario
        for every run (a ratios fit). A run is then predicted as the calculator opened at that
        scenario would predict it, band included.
    """
    out = paired.copy()
    length = _acceptance_length(out)
    gamma = out["num_speculative_tokens"]
    usable = length.notna() & gamma.notna() & out["concurrency"].notna() & (gamma >= 1)
    usable &= (length >= 1) & (length <= gamma + 1)
    settings = run_settings(out, scenario, presets)
    out["setting"] = [_setting_label(*row) for row in settings[["target", "gpu", "draft", "engine"]].itertuples(index=False)]
    out["own_setting"] = settings["own"]
    for name in ("alpha", "predicted_speedup", "predicted_low", "predicted_high", "prompt_tokens", "output_tokens"):
        out[name] = np.nan
    out["costs"] = "preset"
    for label, key, tokens, rows in _groups(out[usable], settings[usable], loads):
        fitted = calibrated if isinstance(calibrated, Scenario) else (calibrated or {}).get(label)
        chosen = setting_scenario(scenario, *key, presets) if fitted is None else fitted
        if fitted is not None:
            out.loc[rows, "costs"] = "calibrated"
        if tokens is not None:
            if not chosen.prefill and chosen.mode == "step":  # at the runs' longest draft (run_tokens held it)
                chosen = steady_load(replace(chosen, gamma=int(gamma[rows].max())), *tokens)
            out.loc[rows, "setting"] = label
            out.loc[rows, "prompt_tokens"], out.loc[rows, "output_tokens"] = tokens
        at = chosen.context if chosen.prefill else context
        g = gamma[rows].to_numpy(dtype=float)
        alpha = np.asarray(spec.alpha_from_acceptance_length(length[rows].to_numpy(dtype=float), g))
        batch = out.loc[rows, "concurrency"].to_numpy(dtype=float)
        out.loc[rows, "alpha"] = alpha
        out.loc[rows, "predicted_speedup"] = calculator.evaluate_scenario(chosen, alpha, g, batch, at)["speedup"]
        low, high = calculator.speedup_band(chosen, alpha, g, batch, at)
        out.loc[rows, "predicted_low"], out.loc[rows, "predicted_high"] = low, high
    out["error"] = out["measured_speedup"] - out["predicted_speedup"]
    return out


def calibrate_ratios(predicted: pd.DataFrame) -> dict[str, float] | None:
    """Verify and draft cost that fit the measured points by least squares.

    speedup = E / (v + γc) is linear in (v, c) after rearranging: E / S = v + γ·c. Solved with
    ``numpy.linalg.lstsq`` over the rows with α; None with fewer than two such rows, or when the
    fit would need a negative cost or a free verify pass.
    """
    rows = predicted.dropna(subset=["alpha", "measured_speedup"])
    if len(rows) < 2:
        return None
    g = rows["num_speculative_tokens"].to_numpy(dtype=float)
    e = np.asarray(spec.expected_tokens(rows["alpha"].to_numpy(dtype=float), g))
    design = np.column_stack([np.ones_like(g), g])
    (v, c), *_ = np.linalg.lstsq(design, e / rows["measured_speedup"].to_numpy(dtype=float), rcond=None)
    if not (np.isfinite(v) and np.isfinite(c)) or v <= 0 or c < 0:  # a free verify pass is impossible
        return None
    fitted = spec.speedup(rows["alpha"].to_numpy(dtype=float), g, v, c)
    rms = float(np.sqrt(np.mean((fitted - rows["measured_speedup"].to_numpy(dtype=float)) ** 2)))
    return {"verify_cost": float(v), "draft_cost": float(c), "rms_error": rms, "points": len(rows)}


def ratios_scenario(fit: dict[str, float], scenario: Scenario) -> Scenario:
    """``scenario`` in ratios mode at a ratios fit's verify and draft cost (:func:`calibrate_ratios`),
    to three decimals as a link carries them."""
    return replace(scenario, mode="ratios", verify_cost=round(fit["verify_cost"], 3),
                   draft_cost=round(fit["draft_cost"], 3))


def ratio_warnings(fit: dict[str, float]) -> list[Notice]:
    """What makes a ratios fit (:func:`calibrate_ratios`) suspect, so that it is not shown as a
    success: a verify pass cheaper than a plain one (``fit.verify_below_one``), which no cost model
    allows: it scores more tokens than a plain pass."""
    return [Notice("fit.verify_below_one", verify_cost=fit["verify_cost"])] if fit["verify_cost"] < 1 else []


@dataclass
class SettingFit:
    """The step model calibrated on the runs of one setting: the setting's scenario at the fitted
    costs (the weighted medians), the fit itself (its band), the points it used, the RMS error of
    its speedups at them and its warnings (message keys of :mod:`specviz.model.calibration`)."""

    setting: str
    scenario: Scenario
    fit: calibration.Fit
    points: int
    rms_error: float
    warnings: list[str]


@dataclass
class SettingRefused:
    """A setting whose runs could not be fitted, and why (a fit past
    :data:`specviz.model.calibration.MAX_FIT_CELLS`)."""

    setting: str
    points: int
    reason: Notice


def calibrate_settings(predicted: pd.DataFrame, scenario: Scenario, presets: Presets, context: int = 0,
                       time_limit_s: float | None = None, loads: bool = False) -> list[SettingFit | SettingRefused]:
    """Calibrate the step model on each setting's runs (:func:`specviz.model.calibration.calibrate`), with
    the engine's priors, at each run's measured acceptance length; settings with fewer than two
    usable runs are left out, and a setting of too many runs is refused, not fitted. Past
    ``time_limit_s`` (counted from the call, checked between settings) the settings not yet fitted
    are refused with ``fit.time_limit``. With ``loads``, as :func:`predict` takes it: the runs of
    each setting and load are fitted as a steady load of their requests, each step carrying their
    prompts (the fit's scenario is that load's, :func:`specviz.scenario.steady_load`)."""
    started = time.monotonic()
    rows = predicted.dropna(subset=["alpha", "measured_speedup", "concurrency"])
    settings = run_settings(rows, scenario, presets)
    fits = []
    for label, key, tokens, index in _groups(rows, settings, loads):
        if len(index) < 2:
            continue
        if time_limit_s is not None and time.monotonic() - started > time_limit_s:
            fits.append(SettingRefused(label, len(index), Notice("fit.time_limit", seconds=time_limit_s)))
            continue
        chosen = setting_scenario(scenario, *key, presets)
        column = lambda name: rows.loc[index, name].to_numpy(dtype=float)
        if tokens is not None:  # held to the runs' longest draft (run_tokens did), opened at the sidebar's
            chosen = replace(steady_load(replace(chosen, gamma=int(column("num_speculative_tokens").max())), *tokens),
                             gamma=chosen.gamma)
        at = chosen.context if chosen.prefill else context
        lengths = _acceptance_length(rows.loc[index]).to_numpy(dtype=float)
        batch, gamma, measured = column("concurrency"), column("num_speculative_tokens"), column("measured_speedup")
        with np.errstate(all="ignore"):
            try:
                fit = calibration.calibrate(chosen.gpu, chosen.target, chosen.draft, chosen.engine, batch=batch,
                                            gamma=gamma, context=np.full_like(batch, at),
                                            measured_speedup=measured, acceptance_length=lengths, **chosen.parallel,
                                            precision=chosen.precision, routing_overlap=chosen.routing_overlap,
                                            **chosen.load)
            except InputError as refused:  # only its size: every other input was checked above
                fits.append(SettingRefused(label, len(index), Notice(refused.key, **refused.params)))
                continue
            own = fit.predict(batch, gamma, at, lengths)["speedup"]
        costs = calibration.fitted_costs(fit, chosen.costs.link_gb_s)
        fits.append(SettingFit(label, replace(chosen, costs=costs), fit, len(index),
                               float(np.sqrt(np.mean((own - measured) ** 2))), list(fit.warnings)))
    return fits


def calibration_in_use(kind: str, fit: list[SettingFit | SettingRefused] | dict[str, float] | None,
                       scenario: Scenario) -> Scenario | dict[str, Scenario] | None:
    """What :func:`predict` predicts with after a calibration (its ``calibrated``): each setting fitted
    without warnings at its fitted costs (``kind`` ``"step"``, :func:`calibrate_settings`), or, for a
    ratios fit without warnings (``"ratios"``, :func:`calibrate_ratios`), ``scenario`` in ratios mode
    at its costs for every run. These are the fits a page hands to the calculator: a suspect one, like
    a failed one, leaves the preset's predictions (None, or no setting)."""
    if not fit:
        return None
    if kind == "ratios":
        return None if ratio_warnings(fit) else ratios_scenario(fit, scenario)
    return {one.setting: one.scenario for one in fit if isinstance(one, SettingFit) and not one.warnings}


def load_published(data_dir) -> pd.DataFrame:
    """Published speculative-decoding results (``data/published_results.csv``), a source per row."""
    return pd.read_csv(data_dir / "published_results.csv")
