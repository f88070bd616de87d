"""The results explorer's analysis: runs by load, speculative runs beside their baselines and their
measured speedup, acceptance by workload and draft setting (the model's predictions of them and its
calibration are :mod:`specviz.results.prediction`'s).

Everything here takes and returns DataFrames of canonical runs (:func:`specviz.results.store.Store.runs`),
after :func:`with_view_columns` has added the columns that the views share.
"""

from __future__ import annotations

import math
import numbers
import re
from collections import Counter
from collections.abc import Collection
from pathlib import Path, PurePath
from typing import Any

import numpy as np
import pandas as pd

from specviz.results import extra

__all__ = [
    "FILTER_COLUMNS",
    "LOAD_AXES",
    "GROUP_COLUMNS",
    "EXTRA_PREFIX",
    "ACCEPTANCE_FIGURES",
    "PLAIN_METHODS",
    "position_acceptance",
    "example_hashes",
    "own_imports",
    "one_origin",
    "measured_acceptance",
    "says_nothing_of_speculation",
    "method_unsaid",
    "speculation_unstated",
    "with_view_columns",
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
    "tpot_at_load",
    "unpaired_speculative",
    "crossover_concurrency",
    "sweep_peaks",
    "workload_acceptance",
    "draft_settings",
    "load_published",
    "speedup_rows",
    "EXAMPLE_QUERIES",
]

# The runs table holds the shipped examples' runs beside the user's, each with its import's origin
# ('user' or 'example'): a query that counts, averages or lists runs groups or marks them by it, so that
# the examples are never counted with the user's runs, and says which rows are which.
EXAMPLE_QUERIES = {
    "runs_by_format": "SELECT origin, source_format, count(*) AS runs\n"
                      "FROM runs GROUP BY 1, 2 ORDER BY 1 DESC, 3 DESC",
    "throughput_by_concurrency": "SELECT origin, label, workload, concurrency, output_throughput, p99_itl_ms\n"
                                 "FROM runs WHERE concurrency IS NOT NULL ORDER BY origin DESC, label, workload, concurrency",
    "acceptance": "SELECT origin, workload, num_speculative_tokens AS gamma, avg(acceptance_length) AS tokens_per_step,\n"
                  "       avg(acceptance_rate) AS vllm_rate FROM runs\n"
                  "WHERE acceptance_length IS NOT NULL GROUP BY ALL ORDER BY 1 DESC, 2, 3",
    "request_percentiles": "SELECT run_id, count(*) AS requests, quantile_cont(ttft_ms, 0.99) AS p99_ttft_ms\n"
                           "FROM requests GROUP BY 1 ORDER BY 1",
    "imports": "SELECT source_file, source_format, origin, imported_at, runs, requests FROM imports ORDER BY imported_at",
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

PLAIN_METHODS = frozenset({"none", "off", "no", "disabled"})
"""Method names that say a run did not speculate (compared lower-cased)."""
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


def with_view_columns(runs: pd.DataFrame, examples: Collection[str] | None = None) -> pd.DataFrame:
    """The runs with the columns every view reads: the load, the series, the group and the origin.

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
    return _derived_acceptance(out)


def _derived_acceptance(runs: pd.DataFrame) -> pd.DataFrame:
    """The acceptance figures a run's own imply where its file leaves them out (an analyst's pass: the
    Live page derived a zero-accept share that the Explorer, given the same counters, did not): a step
    with nothing accepted is one whose first drafted position was rejected, so the zero-accept share
    is 1 − the first position's rate; and vLLM's accepted / drafted of a chain is (E − 1) / γ (its
    drafts are γ a step), which a tree's is not (:func:`specviz.results.extra.tree_width`). The
    stored table keeps what the file said (the SQL console reads it)."""
    first = runs["per_position_acceptance"].map(
        lambda rates: float(rates[0]) if isinstance(rates, (list, tuple, np.ndarray)) and len(rates) else np.nan)
    gamma = runs["num_speculative_tokens"].astype(float)
    chain = runs["extra"].map(lambda text: extra.tree_width(text) is None).astype(bool)
    from_length = ((runs["acceptance_length"].astype(float) - 1.0) / gamma).where(chain & (gamma > 0))
    return runs.assign(zero_accept_rate=runs["zero_accept_rate"].astype(float).fillna(1.0 - first),
                       acceptance_rate=runs["acceptance_rate"].astype(float).fillna(from_length))


def series_names(runs: pd.DataFrame) -> pd.Series:
    """The name of the line each run is a point of, by one rule for every format.

    A run's setting is ``plain`` for a plain run (:func:`is_speculative`), else its method and γ
    (``eagle γ=4``). Within one file, the runs of one setting and workload are one series: named by
    their label where they all share one (``vllm bench --label``, a sweep's own name), else by the
    setting and the file's name. Labels name lines where one is shared by several runs, or where it
    is the only one; where each run has a label of its own, they name points (GuideLLM's
    ``concurrent 4``, ``concurrent 8``), and the sweep stays one line under its setting and file.
    Runs of one name that name another target model, GPU or engine are never one line: the name
    then says which, after the label or file (:func:`_what_differs`); nor are runs of one name at the
    same load, where a field of their file tells them apart (:func:`_what_splits`: a file of three
    deployments at three rates is three lines, not one with three points at each rate). The workload, where there is
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
    base = base + _what_differs(runs, base + tail)
    return base + _what_splits(runs, base + tail) + tail


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


def _what_splits(runs: pd.DataFrame, names: pd.Series) -> pd.Series:
    """Per run, `` · field=value`` where runs of its name in ``names`` share a load (concurrency and
    request rate) and a field of their files' ``extra`` sets them apart: of the fields that take
    fewer values than the name has runs (a setting, not a date or a measurement) and differ
    within every such load, the one of fewest values, then first by path. Empty elsewhere, and where
    no field does (repeated runs of one setting stay points of one line)."""
    said = pd.Series("", index=runs.index, dtype=object)
    if "extra" not in runs or runs.empty:
        return said
    loads = [runs[c].astype(float).fillna(-1.0) for c in ("concurrency", "request_rate")]
    repeated = names.groupby([names, *loads]).transform("size") > 1
    for name in names[repeated].unique():
        members = runs.index[names == name]
        fields = pd.DataFrame([extra.scalar_fields(runs.at[i, "extra"]) for i in members], index=members)
        at_load = pd.Series(list(zip(*(load[members] for load in loads))), index=members)
        shared = at_load.map(at_load.value_counts()) > 1
        candidates = []
        for path in sorted(fields.columns):
            values = fields[path].map(_as_text)
            if values.isna().any() or not 1 < values.nunique() < len(members):
                continue
            if values[shared].groupby(at_load[shared]).nunique().eq(at_load[shared].value_counts()).all():
                candidates.append((values.nunique(), path, values))
        if candidates:
            _, path, values = min(candidates, key=lambda found: found[:2])
            said[members] = " · " + path + "=" + values
    return said


def _settings(runs: pd.DataFrame) -> pd.Series:
    """A run's setting as its series name gives it: ``plain`` for a plain run (:func:`is_speculative`),
    else its method and γ (``eagle γ=4``)."""
    # Text even when there are no runs: an empty map keeps the column's integer type.
    gamma = runs["num_speculative_tokens"].map(lambda g: "" if pd.isna(g) else f" γ={int(g)}").astype(str)
    method = (runs["spec_method"].fillna("").astype(str) + gamma).str.strip()
    return pd.Series(np.where(is_speculative(runs), method.where(method != "", "speculative"), "plain"),
                     index=runs.index)


def draft_settings(runs: pd.DataFrame) -> pd.Series:
    """A run's draft setting: its setting as its series name says it (method and γ, or ``plain``), and
    the tree it drafted, where its file gives one (``eagle3 γ=7, top-k 10, 60 draft tokens``). Runs of
    one method and γ accept differently with another tree: a top-k 10 tree of 60 tokens accepts about
    4.4 tokens a step where a chain of 3 accepts 2.6 (SpecForge's real results)."""
    text = _settings(runs)
    if "extra" not in runs:  # a table of runs without their files' fields: no tree to tell
        return text
    return text + runs["extra"].map(lambda found: extra.tree_text(extra.tree_shape(found)))  # JSON read one at a time


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
    """The runs a view works on, of one origin (:func:`with_view_columns`'s ``origin``), never the shipped
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
    return sorted(EXTRA_PREFIX + path for path, seen in values.items()
                  if 1 < len(seen) < present[path] and not _MEASUREMENT.search(path))


# Fields a result file measures, by their names' last part: a statistic of a time or a rate
# (std_itl_ms, max_output_tokens_per_s), its tokens in all, a throughput. Two runs may share one by
# chance (an analyst's pass: By load offered them as lines, a line a run). Settings stay: max_num_seqs,
# llmperf's mean_input_tokens, SGLang's max_total_num_tokens, a timeout_ms (an attack pass).
_MEASUREMENT = re.compile(r"(^|\.)((std|mean|median|min|max|p\d+)_\w*(_ms|_per_s)|total_(input|output)_tokens|\w*throughput)$")


def _as_text(value: Any) -> str | None:
    """A group value as legend text: whole numbers without ``.0`` (4.0 and 4 are one setting)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return f"{value:.12g}"
    return str(value)


def with_group(runs: pd.DataFrame, key: str) -> pd.DataFrame:
    """Set ``group`` to the text of ``key`` per run: one of :data:`GROUP_COLUMNS`, or a field of
    ``extra`` from :func:`extra_keys`. A run without the key has no group (missing); a file's name
    that two contents share is followed by each one's hash (its first 12 characters)."""
    if key.startswith(EXTRA_PREFIX):
        path = key.removeprefix(EXTRA_PREFIX)
        values = pd.Series([extra.scalar_fields(text).get(path) for text in runs["extra"]], index=runs.index,
                           dtype=object)
    elif key == "source_file" and "content_hash" in runs:
        # Two files of one name (AIPerf 0.3's and 0.10's profile_export_aiperf.json) are two lines: each
        # such name with its content's hash, as the Remove list shows it (an analyst's pass: one line).
        hashes = runs["content_hash"].astype("string")
        shared = runs.groupby("source_file")["content_hash"].transform("nunique").gt(1)
        values = runs["source_file"].where(~shared | hashes.isna(), runs["source_file"] + " · " + hashes.str[:12])
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
    # γ is a nullable integer from the store: a missing γ is not 0.
    switched_off = method.isin(PLAIN_METHODS) | runs["num_speculative_tokens"].eq(0).fillna(False).astype(bool)
    return ~(switched_off | says_nothing_of_speculation(runs))


def says_nothing_of_speculation(runs: pd.DataFrame) -> pd.Series:
    """Whether each run's file says nothing of speculation: no method, no γ, no acceptance figure
    (AIPerf's, genai-perf's, GuideLLM's: the client does not know what the server ran). Such a run
    counts as plain (:func:`is_speculative`) until the user says what it ran
    (:meth:`specviz.results.store.Store.state_speculation`, which changes only such runs, those that
    speculated with no method said, :func:`method_unsaid`, or those it changed before:
    ``speculation_by_user``)."""
    method = runs["spec_method"].fillna("").astype(str).str.strip()
    nothing = ((method == "") & runs["num_speculative_tokens"].isna() & runs["acceptance_length"].isna()
               & runs["acceptance_rate"].isna())
    return nothing.astype(bool)


def method_unsaid(runs: pd.DataFrame) -> pd.Series:
    """Whether each run's file gives a γ of 1 or more, or an acceptance figure, but no method (vLLM
    0.25.1's MTP run: γ 3, no method): it speculated, and the user may say with what
    (:meth:`specviz.results.store.Store.state_speculation`, its γ kept)."""
    method = runs["spec_method"].fillna("").astype(str).str.strip()
    gamma = runs["num_speculative_tokens"]
    speculated = gamma.ge(1).fillna(False).astype(bool) | (gamma.isna() & ~says_nothing_of_speculation(runs))
    return ((method == "") & speculated).astype(bool)


def speculation_unstated(runs: pd.DataFrame) -> pd.DataFrame:
    """Per imported file (``content_hash``) with runs whose speculation the user may state: its
    ``source_file``, how many of its runs say nothing of it (``unstated``), how many speculated with no
    method said (``no_method``: :func:`method_unsaid`) and how many the user stated (``stated``), with
    the ``method`` and ``gamma`` stated (None where none was)."""
    by_user = (runs["speculation_by_user"].notna() if "speculation_by_user" in runs
               else pd.Series(False, index=runs.index))
    nothing, no_method = says_nothing_of_speculation(runs), method_unsaid(runs)
    open_to = runs.assign(unstated=nothing, no_method=no_method, stated=by_user)[nothing | no_method | by_user]
    grouped = open_to.groupby("content_hash", sort=False)
    files = pd.DataFrame({"source_file": grouped["source_file"].first(), "unstated": grouped["unstated"].sum(),
                          "no_method": grouped["no_method"].sum(), "stated": grouped["stated"].sum()})
    said = open_to[open_to["stated"]].groupby("content_hash")[["spec_method", "num_speculative_tokens"]].first()
    return files.join(said.set_axis(["method", "gamma"], axis=1))


def pair_with_baselines(runs: pd.DataFrame) -> pd.DataFrame:
    """Each speculative run beside the plain run of the same workload, model, GPU, engine and load,
    with the measured speedup.

    The load matches when the concurrency is the same and so is the request rate, an infinite or
    missing rate counting as none (a concurrency-bound run); runs that name neither their model nor
    their load pair with none. Examples pair only with examples.
    ``engine`` matches when equal or missing on either side: schema 2 leaves it empty where a file
    named only an endpoint type (``--backend openai-chat``), so the same server benchmarked through
    two clients must still pair; a baseline of the same engine wins over one that names none, then
    the newest. ``endpoint`` (openai-chat, completions, openai_http) is no key at all: it is how the
    client called the server, not what the server ran, and one tool records it where another does not.

    Measured speedup = SD output throughput / baseline output throughput (same load), or, where
    throughput is missing, baseline mean TPOT / SD mean TPOT; ``measured_by`` says which
    (``throughput``, ``tpot``). ITL is not used: with speculation ``vllm bench serve`` reports it per
    streamed chunk, which holds several tokens; a ratio that is not finite and positive (a side of 0)
    is none, and the run unpaired. Where several plain runs match (a sweep's repeats), the baseline is
    their mean, those of the same engine where any is (as the By load view draws a load's runs by
    their mean): ``baseline_source_file`` names their files, ``baseline_run_id`` the newest,
    ``baselines`` counts the plain runs that matched, and ``speedup_vs_fastest`` and
    ``speedup_vs_slowest`` are the speedup against the fastest and the slowest of those taken, said
    beside it (an analyst's pass:
    repeats at 93.7 and 199.4 tokens/s had made one run's 122.3 a 0.61× and a crossover against the
    newest, where the other gives 1.30×).
    """
    spec_mask = is_speculative(runs)
    keys = [*_MATCH, "rate"]
    measured = ["run_id", "source_file", "engine", "output_throughput", "mean_tpot_ms"]
    keyed = runs.assign(rate=runs["request_rate"].where(np.isfinite(runs["request_rate"])),
                        order=np.arange(len(runs)))
    base = keyed.loc[~spec_mask, keys + measured + ["order"]].rename(
        columns={c: f"baseline_{c}" for c in [*measured, "order"]})
    # pandas matches missing keys with missing keys, so runs that set no GPU pair with each other; but
    # runs that name neither their model nor their load say nothing that makes them one setting (an
    # analyst's pass: genai-perf's and inference-perf's runs, unrelated, had paired at 71x).
    candidates = keyed[spec_mask].merge(base, on=keys)
    candidates = candidates[candidates[["target_model", "concurrency", "rate"]].notna().any(axis=1)]
    same_engine = candidates["engine"] == candidates["baseline_engine"]
    compatible = same_engine | candidates["engine"].isna() | candidates["baseline_engine"].isna()
    eligible = candidates[compatible]
    eligible = eligible.assign(same_engine=same_engine[compatible],
                               baselines=eligible.groupby("order")["order"].transform("size"))
    # Those of the same engine where any is, else the others that may be it.
    taken = eligible[eligible["same_engine"] == eligible.groupby("order")["same_engine"].transform("max")]
    by_run = taken.groupby("order")
    spread = by_run.agg(tps=("baseline_output_throughput", "mean"), tps_low=("baseline_output_throughput", "min"),
                        tps_high=("baseline_output_throughput", "max"), tpot=("baseline_mean_tpot_ms", "mean"),
                        tpot_low=("baseline_mean_tpot_ms", "min"), tpot_high=("baseline_mean_tpot_ms", "max"))
    # Each file once, in the order met (a join per run in Python had doubled the pairing's time).
    named = taken[["order", "baseline_source_file"]].astype({"baseline_source_file": str}).drop_duplicates()
    spread["files"] = named.groupby("order")["baseline_source_file"].agg(", ".join)
    paired = (taken.sort_values("baseline_order", kind="stable").drop_duplicates("order", keep="last")
              .set_index("order").join(spread).reset_index().sort_values("order"))
    paired = paired.assign(baseline_output_throughput=paired["tps"], baseline_mean_tpot_ms=paired["tpot"],
                           baseline_source_file=paired["files"])
    ratio = lambda tps, tpot: (paired["output_throughput"] / tps).where(
        paired["output_throughput"].notna() & tps.notna(), tpot / paired["mean_tpot_ms"])
    throughput = paired["output_throughput"] / paired["baseline_output_throughput"]
    paired["measured_speedup"] = ratio(paired["tps"], paired["tpot"])
    paired["measured_by"] = np.where(throughput.notna(), "throughput", "tpot")
    # Against the fastest baseline the least speedup, against the slowest the most.
    paired["speedup_vs_fastest"], paired["speedup_vs_slowest"] = ratio(paired["tps_high"], paired["tpot_low"]), ratio(
        paired["tps_low"], paired["tpot_high"])
    paired = paired.drop(columns=["tps", "tps_low", "tps_high", "tpot", "tpot_low", "tpot_high", "files"])
    # A side of 0 tokens/s (or 0 ms) gives no ratio: unpaired, as a side without the figure is (an attack
    # pass: a baseline of 0 tokens/s had paired at an infinite speedup).
    ratio = paired["measured_speedup"]
    paired = paired[np.isfinite(ratio) & (ratio > 0)].drop(
        columns=["rate", "order", "baseline_order", "baseline_engine", "same_engine"])
    return paired.sort_values(["series", "concurrency"], kind="stable").reset_index(drop=True)


def tpot_at_load(predicted: pd.DataFrame) -> pd.Series:
    """The runs compared by their TPOT (``measured_by``, :func:`pair_with_baselines`) that are predicted
    at a load whose steps also prefill (``prompt_tokens``, :func:`specviz.results.prediction.predict`).
    The step model prices such a load's throughput and a request's whole time, not how the scheduler
    splits that time between the first token and the rest, which a benchmark's TPOT also holds: such
    runs are shown but not fitted (:attr:`specviz.model.fidelity.Setting.predicted` leaves the
    published series of that kind unscored)."""
    return (predicted["measured_by"] == "tpot") & predicted["prompt_tokens"].notna()


def unpaired_speculative(runs: pd.DataFrame, paired: pd.DataFrame) -> pd.DataFrame:
    """The speculative runs of ``runs`` that :func:`pair_with_baselines` left out of ``paired``: no
    plain run matches them, or neither side has a throughput or TPOT to compare."""
    spec_runs = runs[is_speculative(runs)]
    return spec_runs[~spec_runs["run_id"].isin(paired["run_id"])]


def crossover_concurrency(paired: pd.DataFrame) -> pd.DataFrame:
    """Per workload, model and series: the smallest concurrency at which the measured speedup, the
    mean of the runs there as :func:`specviz.charts.measured_speedup` draws it (a sweep's repeats), is
    below 1 (``crossover_concurrency``, NaN where none loses), and how many concurrencies were
    measured (``concurrencies``: one says nothing of the others)."""
    rows = []
    for key, group in paired.dropna(subset=["concurrency"]).groupby(
            ["workload", "target_model", "series"], dropna=False, sort=False):
        means = group.groupby("concurrency")["measured_speedup"].mean()
        losing = means.index[means < 1]
        rows.append(dict(zip(("workload", "target_model", "series"), key),
                         crossover_concurrency=losing.min() if len(losing) else math.nan,
                         concurrencies=group["concurrency"].nunique()))
    return pd.DataFrame(rows, columns=["workload", "target_model", "series", "crossover_concurrency", "concurrencies"])


def sweep_peaks(runs: pd.DataFrame) -> pd.DataFrame:
    """The load with the highest mean output throughput on each line (``group`` and ``series``): the
    peak of a load sweep, as :func:`specviz.charts.metric_vs_load` draws its line through the mean of
    a load's runs (a sweep's repeats of one setting); ``runs`` how many there, ``source_file`` their
    files (", "-joined, once each)."""
    valid = runs.dropna(subset=["output_throughput", "load"])
    if valid.empty:
        return valid.assign(runs=pd.Series(dtype="int64"))
    at_load = valid.groupby(["group", "series", "load"], dropna=False, sort=False).agg(
        output_throughput=("output_throughput", "mean"), runs=("output_throughput", "size"),
        source_file=("source_file", lambda files: ", ".join(dict.fromkeys(files.dropna().astype(str)))))
    at_load = at_load.reset_index()
    return at_load.loc[at_load.groupby(["group", "series"], dropna=False)["output_throughput"].idxmax()]


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


def position_acceptance(runs: pd.DataFrame) -> pd.DataFrame:
    """The runs that measured their acceptance at each draft position (vLLM's per-position counters,
    a live run's windows), one row each: ``series``, ``num_speculative_tokens`` and
    ``position_<i>``, the share of its drafts whose position i (from 1) was accepted, as vLLM's
    ``spec_decode_num_accepted_tokens_per_pos`` over its drafts counts it (runs at synthetic
    acceptance left out, :func:`measured_acceptance`); no rows where none did."""
    runs = measured_acceptance(runs)[0]
    lists = runs["per_position_acceptance"].map(lambda v: list(v) if isinstance(v, (list, tuple, np.ndarray)) else [])
    measured = runs[lists.map(len) > 0]
    if measured.empty:
        return pd.DataFrame(columns=["series", "num_speculative_tokens"])
    width = int(lists[measured.index].map(len).max())  # runs of shorter drafts have no later positions
    shares = pd.DataFrame([v + [np.nan] * (width - len(v)) for v in lists[measured.index]], index=measured.index)
    shares.columns = [f"position_{i + 1}" for i in shares.columns]
    return pd.concat([measured[["series", "num_speculative_tokens"]], shares], axis=1).reset_index(drop=True)


def load_published(data_dir: Path) -> pd.DataFrame:
    """Published speculative-decoding results (``data/published_results.csv``), a source per row."""
    return pd.read_csv(data_dir / "published_results.csv")


def speedup_rows(published: pd.DataFrame) -> pd.DataFrame:
    """The published results (:func:`load_published`) that are speedups (``throughput_speedup``,
    ``walltime_speedup``, ``tpot_speedup`` …), not latencies, ratios of other things or acceptance
    lengths."""
    return published[published["metric"].str.endswith("speedup")]
