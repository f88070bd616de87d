"""Speculative decoding over time from a Prometheus server's HTTP API, across every server it scrapes.

When one vLLM becomes a fleet, Prometheus (or anything that speaks its HTTP API: Thanos, Mimir,
VictoriaMetrics) already collects every replica's ``/metrics``. This module asks it for the same
spec-decode counters :mod:`specviz.live.exposition` reads from one scrape and derives the same figures, per
model and per point in time:

1. Which metric names exist: ``/api/v1/label/__name__/values`` over the time range, each name
   matched against :data:`specviz.live.roles.ROLES` (so the engines and ``_total`` spellings a scrape's
   reader recognises are recognised here; ``_created`` series never match). Prometheus stores a name as the
   exposition text spells it, ``vllm:spec_decode_num_drafts_total`` with its colon and ``_total``,
   and PromQL names it so.
2. One query per recognised name: ``sum by (model_name[, position][, by...]) (increase(NAME[W]))``
   for a counter (TensorRT-LLM's per-position counters by ``token_position``; a histogram's ``_sum``
   and ``_count`` series, vLLM's finished requests' tokens, are counters too), ``sum by`` (running
   and waiting requests, with a ``count`` of the servers, ``instance``, that report the running
   ones) or ``max by`` (KV-cache usage) of a gauge, ``max`` and ``min`` of an engine's own ratio
   gauges (a value only where the replicas agree), ``resets()`` of every counter, and ``changes()``
   of ``process_start_time_seconds`` (a server that restarted and counted past its old values
   before its next scrape shows only there).
   ``/api/v1/query_range`` for a series of points, ``/api/v1/query`` for one.
3. At each point, the increases become a :class:`specviz.live.exposition.Snapshot` of a window ``W`` long and
   go through :func:`specviz.live.states.spec_decode_states`: acceptance rate, acceptance length, γ, α
   (:func:`specviz.model.spec.alpha_from_acceptance_length`), per-position and zero-accept shares,
   throughput and the load are computed by the very code that computes them from two scrapes, and
   a figure an engine does not export is absent for the same stated reason.

``increase()`` extrapolates from the first and last samples inside the window to the window's
edges, so a count is an estimate (the ratios of two counters scraped together are not affected: the
mean prompt of finished requests is Δ``_sum`` / Δ``_count`` as from two scrapes);
a window needs at least two samples of a series, so ``W`` should be at least twice the scrape
interval. A counter that went down inside the window, or a server whose start time changed in it (a
restart), is counted as ``increase()`` counts it and the point is marked ``counter_reset``.

The requests and the checks of every answer are :mod:`specviz.live.prometheus_api`'s (values that
are ``NaN`` or ``±Inf`` are left out, with a notice here).

References
----------
``increase()``, ``resets()``, ``changes()``: https://prometheus.io/docs/prometheus/latest/querying/functions/.
Metric names: https://prometheus.io/docs/concepts/data_model/#metric-names-and-labels.
"""

from __future__ import annotations

import bisect
import math
import re
import time as _time
from dataclasses import replace
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from specviz import settings
from specviz.errors import Notice, SpecvizError

from . import exposition
from .roles import COUNTERS, MEANING_LABELS, RATIO_GAUGES, ROLES, SPEC_ROLES, role_of, without_groups
from .processes import utc_clock
from .states import SpecDecodeState, spec_decode_states
from .prometheus_api import MIN_STEP_S, Runner, api_base, api_get, check_points, parse_duration, timestamp
from .scrape import Limits, shown

__all__ = ["metric_names", "label_names", "query_figures", "query_window", "label_column", "per_position", "FIGURE_COLUMNS"]

_NAME = re.compile(r"[A-Za-z_:][A-Za-z0-9_:]*")
_LABEL = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# label_names' own bounds, tighter than a query's: the labels it gives at most, their longest name,
# and the seconds and bytes its answer may take (the page looks them up before it draws its figures).
_MOST_LABELS = 200
_MOST_LABEL_CHARS = 100
_LABELS_DEADLINE_S = 5.0
_LABELS_MAX_BYTES = 1_000_000
_NAMES_LOOKBACK_S = 300.0  # Prometheus's default lookback delta

# The label of a per-position counter's position, by engine prefix (TensorRT-LLM's is token_position).
_POSITION_LABEL = {"trtllm": "token_position"}
# Roles by how they are queried; the rest of roles.ROLES (the inter-token latency histograms) are not.
_SUMMED_GAUGES = ("running", "waiting")
_MAX_GAUGES = ("kv_cache_usage",)
_QUERIED = COUNTERS + _SUMMED_GAUGES + _MAX_GAUGES + RATIO_GAUGES + ("process_start",)
# The names of every queried role, for the match[] of the name lookup (RE2, anchored).
_NAMES_MATCH = "|".join(without_groups(role) for role in _QUERIED)

# The figures of a row, in order; per-position columns follow as per_position_acceptance_<i> and
# per_position_conditional_<i>.
FIGURE_COLUMNS: tuple[str, ...] = (
    "drafts", "draft_tokens", "accepted_tokens", "emitted_tokens", "acceptance_rate", "acceptance_length",
    "num_speculative_tokens", "alpha_iid", "zero_accept_rate", "reported_acceptance_rate",
    "reported_acceptance_length", "system_efficiency", "draft_overhead", "running_requests", "waiting_requests",
    "kv_cache_usage", "generation_tokens", "generation_throughput", "mean_prompt_tokens", "mean_output_tokens",
    "mean_context", "counter_reset")


def metric_names(base_url: str, start: float, end: float, *, limits: Limits | None = None
                 ) -> dict[str, list[tuple[str, str]]]:
    """The metric names Prometheus holds between ``start`` and ``end`` that :mod:`specviz.live.roles`
    recognises: role → [(name, engine prefix)].

    Raises
    ------
    SpecvizError
        The failures of the API (``prometheus.*``, ``scrape.*``).
    """
    return _roles(_names(base_url, "label/__name__/values", start, end, limits))


def _names(base_url: str, endpoint: str, start: float, end: float, limits: Limits | None) -> list[str]:
    """The names ``endpoint`` gives (metric names, label names) of the series every queried role
    matches between ``start`` and ``end``; an answer that is no list of names is refused."""
    data, _ = api_get(api_base(base_url), endpoint, [("match[]", '{__name__=~"' + _promql_string(_NAMES_MATCH) + '"}'),
                                                     ("start", timestamp(start)), ("end", timestamp(end))], limits)
    if not isinstance(data, list) or not all(isinstance(n, str) for n in data):
        raise SpecvizError("prometheus.not_api", source=api_base(base_url)[1],
                           detail=Notice("prometheus.detail.names_not_text"))
    return data


def label_names(base_url: str, start: float, end: float, *, limits: Limits | None = None) -> list[str]:
    """The labels the series :func:`query_figures` reads carry between ``start`` and ``end`` that a
    ``by`` may keep apart (``/api/v1/labels``, matched as :func:`metric_names` is): the scrape's own (``instance``,
    ``job``, vLLM's ``engine``) and those Prometheus's configuration adds to a target (a
    ``workload`` or ``team`` label on the servers of one traffic), sorted; not ``__name__`` nor a
    label that names what a series measures (:data:`specviz.live.roles.MEANING_LABELS`).

    At most the first 200 of at most 100 characters each, read within 5 s and 1 MB (whatever
    ``limits`` allow): each is an option the page sends the browser on every rerun, and it looks
    them up before it draws its figures (an attack pass: 750,000 names made a rerun 35 MB and 48 s,
    an answer that never ended held the page blank for the whole 30 s of a query's deadline).

    Raises
    ------
    SpecvizError
        The failures of the API (``prometheus.*``, ``scrape.*``).
    """
    limits = limits or Limits.from_settings()
    bounded = replace(limits, deadline_s=min(limits.deadline_s, _LABELS_DEADLINE_S),
                      max_bytes=min(limits.max_bytes, _LABELS_MAX_BYTES))
    try:
        found = set(_names(base_url, "labels", start, end, bounded))
    except SpecvizError as exc:
        # Past the lookup's own bound, tighter than the setting's: said so (a scrape's message names the
        # setting, which had read as the way to raise it).
        ours = {"scrape.too_large": limits.max_bytes > _LABELS_MAX_BYTES,
                "scrape.deadline": limits.deadline_s > _LABELS_DEADLINE_S}
        if ours.get(exc.key):
            raise SpecvizError("prometheus.labels_bounded", source=api_base(base_url)[1], limit=bounded.max_bytes,
                               seconds=bounded.deadline_s) from None
        raise
    return sorted(n for n in found if len(n) <= _MOST_LABEL_CHARS and _LABEL.fullmatch(n)
                  and not n.startswith("__") and n not in MEANING_LABELS)[:_MOST_LABELS]


def _roles(names: Iterable[str]) -> dict[str, list[tuple[str, str]]]:
    found: dict[str, list[tuple[str, str]]] = {}
    for name in sorted(set(names)):
        if not _NAME.fullmatch(name):  # it goes into PromQL: never anything but a plain name
            continue
        role = role_of(name)
        if role is not None and role[0] in _QUERIED:
            found.setdefault(role[0], []).append((name, role[1]))
    return found


def _promql_string(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _check_by(by: Sequence[str]) -> tuple[str, ...]:
    by = tuple(by)
    for label in by:
        if (not _LABEL.fullmatch(label) or label.startswith("__")
                or label in MEANING_LABELS):
            raise SpecvizError("prometheus.bad_label", label=shown(label)[:60])
    return by


def _queries(names: dict[str, list[tuple[str, str]]], window_s: float, by: tuple[str, ...]
             ) -> list[tuple[str, str, str, str]]:
    """(role, prefix, kind, PromQL) of every query a figure needs; kind is ``value``, ``max``,
    ``min``, ``resets``, ``started`` (how often each server's start time changed) or ``servers``
    (how many servers, Prometheus's ``instance``, report the running requests: each decodes its own
    batch)."""
    window = f"{round(window_s * 1000)}ms"  # PromQL durations are whole units
    group = ", ".join(("model_name", *by))
    out = []
    for role in _QUERIED:
        for name, prefix in names.get(role, []):
            if role == "process_start":  # a server's, of no model: joined to its models by instance
                out.append(("", "", "started", f"sum by (instance) (changes({name}[{window}]))"))
                out.append(("", "", "start_time", f"max by (instance) ({name})"))  # when it last started
            elif role in COUNTERS:
                position = _POSITION_LABEL.get(prefix, "position")
                labels = group + (f", {position}" if role in ("accepted_per_pos", "drafted_per_pos") else "")
                out.append((role, prefix, "value", f"sum by ({labels}) (increase({name}[{window}]))"))
                if role == "generation_tokens":  # the samples each server's series holds in each window
                    servers = group if "instance" in by else f"{group}, instance"
                    out.append((role, prefix, "samples", f"min by ({servers}) (count_over_time({name}[{window}]))"))
            elif role in _SUMMED_GAUGES:
                out.append((role, prefix, "value", f"sum by ({group}) ({name})"))
                if role == "running":
                    servers = group if "instance" in by else f"{group}, instance"
                    out.append((role, prefix, "servers", f"count by ({servers}) ({name})"))
            elif role in _MAX_GAUGES:
                out.append((role, prefix, "value", f"max by ({group}) ({name})"))
            else:
                out.append((role, prefix, "max", f"max by ({group}) ({name})"))
                out.append((role, prefix, "min", f"min by ({group}) ({name})"))
    # resets() drops the name, so one query a name (a regex over names would clash); by server, to
    # say which restarted.
    servers = group if "instance" in by else f"{group}, instance"
    for name in sorted(name for role in COUNTERS for name, _ in names.get(role, [])):
        out.append(("", "", "resets", f"sum by ({servers}) (resets({name}[{window}]))"))
    return out


def _restart_moment(end: float, window_s: float, started: float | None) -> str:
    """When a server restarted in the window ending at ``end``, as the restart notice lists it: the
    moment its ``process_start_time_seconds`` gives where that falls in the window (the notice had
    given only the window's end, a step of the range, up to 24 minutes late at a day's range), else
    that end marked ``≤`` (a server that exports no start time, or whose clock disagrees)."""
    if started is not None and end - window_s < started <= end:
        return utc_clock(started)
    return "≤ " + utc_clock(end)


def _model_key(labels: dict[str, str], by: tuple[str, ...]) -> tuple[str, ...]:
    return (labels.get("model_name", ""), *(labels.get(b, "") for b in by))


def _check_rows(groups: int, points: int, source: str) -> None:
    """Refuse an answer of more rows (models and ``by`` values, × points) than
    ``SPECVIZ_PROMETHEUS_MAX_ROWS``, before its points are read: each row is about 0.4 ms of one
    core, and a fleet split by its 10,000 instances at 61 points would be 610,000 of them."""
    most = settings.get("SPECVIZ_PROMETHEUS_MAX_ROWS")
    if groups * points > most:
        raise SpecvizError("prometheus.too_many_rows", source=source, groups=groups, points=points,
                           rows=groups * points, limit=most)


def _figures(base: tuple[str, str], window_s: float, by: Sequence[str], start: float, end: float,
             run: Any) -> pd.DataFrame:
    """The figures at every point ``run(promql)`` answers in [start, end], from the metric names seen
    from ``_NAMES_LOOKBACK_S`` before ``start`` to ``end``."""
    by = _check_by(by)
    source = base[1]
    window_s = round(window_s * 1000) / 1000  # as the queries write it
    # Names are looked up over a few more minutes than the points need, so that series with too few
    # samples in a short window are told apart from no series at all.
    allowed = settings.get("SPECVIZ_PROMETHEUS_DEADLINE_S")
    ends_at = _time.monotonic() + allowed  # the read's whole time, its names and every query's deadline within it
    names = metric_names(base[0], start - _NAMES_LOOKBACK_S, end, limits=run.within(allowed).limits)
    if not any(role in names for role in SPEC_ROLES):
        raise SpecvizError("prometheus.no_spec_decode", source=source)
    queries = _queries(names, window_s, by)
    if len(queries) > (most := settings.get("SPECVIZ_PROMETHEUS_MAX_QUERIES")):
        # Each recognised name asks for queries of its own: a server that named 3,000 made 6,004 (an
        # attack pass).
        raise SpecvizError("prometheus.too_many_queries", source=source, queries=len(queries), most=most,
                           names=sum(len(found) for found in names.values()))
    # time → role → {(prefix, labels): value}; ratio gauges keep their max and min apart.
    points: dict[float, dict[str, dict[tuple, float]]] = {}
    extremes: dict[float, dict[tuple, dict[str, float]]] = {}
    resets: dict[float, dict[tuple[str, ...], set[str]]] = {}  # the servers (instances) that restarted
    started: dict[float, set[str]] = {}  # the servers whose start time changed
    start_time: dict[float, dict[str, float]] = {}  # each server's start time, where it exports one
    keys_of: dict[str, set[tuple[str, ...]]] = {}  # a server's rows, from its counters' resets() series
    servers: dict[float, dict[tuple[str, ...], set[str]]] = {}  # the servers (instances) that report
    samples: dict[float, dict[tuple[str, ...], dict[str, float]]] = {}  # each server's samples of generated tokens in a window
    dropped: dict[str, int] = {}
    warnings: list[str] = []
    groups: set[tuple[str, ...]] = set()
    own = (run.limits or Limits.from_settings()).deadline_s  # each request's own deadline
    for done, (role, prefix, kind, promql) in enumerate(queries):
        left = ends_at - _time.monotonic()
        if left > 0:
            try:
                series, said = run.within(left)(promql)
            except SpecvizError as error:
                if error.key != "scrape.deadline" or left >= own:  # the request's own deadline, said so
                    raise
                left = 0.0  # the read's whole time ran out during the query
        if left <= 0:
            raise SpecvizError("prometheus.deadline", source=source, seconds=allowed, done=done, queries=len(queries))
        warnings += said
        if kind == "started":
            for item in series:
                for t, value in item.points:
                    if value > 0:
                        started.setdefault(t, set()).add(item.labels.get("instance", ""))
            continue
        if kind == "start_time":
            for item in series:
                for t, value in item.points:
                    start_time.setdefault(t, {})[item.labels.get("instance", "")] = value
            continue
        groups |= {_model_key(item.labels, by) for item in series}
        _check_rows(len(groups), run.points, source)
        for item in series:
            if item.dropped:
                dropped[role or "resets"] = dropped.get(role or "resets", 0) + item.dropped
            labels = tuple(sorted((k, v) for k, v in item.labels.items() if k != "__name__"))
            if kind == "resets":
                keys_of.setdefault(item.labels.get("instance", ""), set()).add(_model_key(item.labels, by))
            for t, value in item.points:
                if kind == "resets":
                    if value > 0:
                        resets.setdefault(t, {}).setdefault(_model_key(item.labels, by), set()).add(
                            item.labels.get("instance", ""))
                    continue
                if kind == "samples":  # a name with and without _total: the fewer
                    at = samples.setdefault(t, {}).setdefault(_model_key(item.labels, by), {})
                    instance = item.labels.get("instance", "")
                    at[instance] = min(value, at.get(instance, value))
                    continue
                if kind == "servers":  # a series per server, of any name of the running gauge
                    servers.setdefault(t, {}).setdefault(_model_key(item.labels, by), set()).add(
                        item.labels.get("instance", ""))
                    continue
                if value < 0:  # no role is ever negative: as exposition.parse, left out and counted
                    dropped[role] = dropped.get(role, 0) + 1
                    continue
                if kind == "value":
                    at = points.setdefault(t, {}).setdefault(role, {})
                    at[(prefix, labels)] = at.get((prefix, labels), 0.0) + value  # a name with and without _total
                else:
                    extremes.setdefault(t, {}).setdefault((role, prefix, labels), {})[kind] = value
    for t, instances in started.items():
        for instance in instances:
            for key in keys_of.get(instance, ()):
                resets.setdefault(t, {}).setdefault(key, set()).add(instance)
    for t, by_key in extremes.items():
        for (role, prefix, labels), values in by_key.items():
            # Replicas that disagree give two values, which states.py reports as disagreeing.
            entries = {values.get("max"), values.get("min")} - {None}
            at = points.setdefault(t, {}).setdefault(role, {})
            for i, value in enumerate(sorted(entries)):
                at[(prefix, labels + ((("specviz_extreme", str(i)),) if len(entries) > 1 else ()))] = value

    notices = [Notice("prom.notice.dropped_value", metric=role, count=count) for role, count in dropped.items()]
    notices += [Notice("prometheus.notice.warning", warning=w[:200]) for w in dict.fromkeys(warnings)]
    rows = []
    restarts: list[tuple[float, tuple[str, ...], str]] = []  # (time, row's key, server)
    absent: dict[tuple[str, ...], dict[str, Notice]] = {}
    for t in sorted(points):
        _whole_gamma(points[t])
        current = exposition.Snapshot(series={role: points[t].get(role, {}) for role in ROLES}, time=t)
        previous = exposition.Snapshot(series={role: {} for role in ROLES}, time=t - window_s)
        try:
            states = spec_decode_states(current, previous, split_by=by)
        except SpecvizError as exc:
            if exc.key == "prom.no_spec_decode":  # only companions at this point
                continue
            raise
        for state in states:
            key = (state.model_name, *(state.labels.get(b, "") for b in by))
            restarted = resets.get(t, {}).get(key, set())
            reporting = servers.get(t, {}).get(key)
            running = None if reporting is None else len(reporting)
            if restarted:
                restarts += [(t, key, instance) for instance in sorted(restarted)]
            # Every server of the row restarted (or how many there are is not known): as a window
            # between two scrapes says it. Where others kept running, their sum stands, said to read low.
            if restarted and (running is None or running <= len(restarted)) and state.generation_throughput is not None:
                state = replace(state, generation_throughput=None,
                                absent={**state.absent, "generation_throughput": Notice("prom.absent.restarted")})
            rows.append({**_row(t, state, by, window_s, bool(restarted)), "servers": running})
            # Words of a scrape, said of what Prometheus holds.
            absent[(state.engine, *key)] = {
                figure: Notice("prometheus.absent.not_exported", **why.params) if why.key == "prom.absent.not_exported"
                else why for figure, why in state.absent.items()}
            # Prometheus did the summing, and resets come from resets(): those two are said below.
            notices += [n for n in state.notices if n.key not in _OWN_NOTICES and n not in notices]
    if not rows:
        raise SpecvizError("prometheus.no_points", source=source, window=window_s)
    # A model the answers name only in figures beside speculation's (its tokens, its running requests):
    # served without speculative decoding, said rather than left out without a word.
    named = {dict(labels).get("model_name", "") for at in points.values() for series in at.values() for _, labels in series}
    if plain := sorted(named - {row["model_name"] for row in rows} - {""}):
        notices.append(Notice("prometheus.notice.no_spec", count=len(plain), models=_listed(plain)))
    # A series that first answers after the range's first point was born inside the range: at its
    # first point, increase() extrapolates back to its first sample, not to the window's start, so a
    # rate per second over the whole window understates it (96 tokens/s for a server making 310).
    # Ratios (acceptance, γ) divide counts of the same part and stand.
    by_series: dict[tuple, list[dict]] = {}
    for row in rows:  # in time order, as the points were read
        by_series.setdefault((row["engine"], row["model_name"], *(row[label_column(b)] for b in by)), []).append(row)
    born = [key for key, series in by_series.items() if series[0]["time"] > start + window_s + MIN_STEP_S]
    for key in born:
        by_series[key][0]["generation_throughput"] = None
        if len(by_series[key]) == 1:  # the headline is that first point: its tokens per second are said to be absent
            absent.setdefault(key, {})["generation_throughput"] = Notice("prometheus.absent.born_inside")
    if born:
        notices.append(Notice("prometheus.notice.born_inside", series=len(born),
                              names=_listed(["/".join(key[1:]) for key in born])))
    _sparse_windows(by_series, _whole_window_samples(samples, servers, window_s, notices), absent, notices)
    frame = pd.DataFrame(rows)
    positions = sorted({c for c in frame.columns if c.startswith("per_position_")},
                       key=lambda c: (int(c.rsplit("_", 1)[1]), c))
    kept = [label_column(b) for b in by]
    columns = ["time", "engine", "model_name", *kept, "window_s", *FIGURE_COLUMNS, "servers", *positions]
    frame = frame.reindex(columns=columns)
    numbers = [c for c in ("window_s", *FIGURE_COLUMNS, "servers", *positions) if c != "counter_reset"]
    frame[numbers] = frame[numbers].astype(float)  # None (absent) becomes NaN
    frame["counter_reset"] = frame["counter_reset"].astype(bool)
    # Prometheus's times are whole milliseconds; float seconds would carry a few nanoseconds of error.
    frame["time"] = pd.to_datetime((frame["time"] * 1000).round().astype("int64"), unit="ms", utc=True)
    frame = frame.set_index(["time", "model_name", *kept]).sort_index()
    notices.append(Notice("prometheus.notice.summed", labels=", ".join(("model_name", *by))))
    # A label no series carries keeps nothing apart: said, as a misspelt one would otherwise read as a
    # split into one (an SRE's pass: --by nosuchlabel gave an empty column, "kept apart by" it).
    notices += [Notice("prometheus.notice.label_absent", label=b) for b in by
                if not frame.index.get_level_values(label_column(b)).astype(str).str.len().any()]
    if restarts:
        # One server may restart more than once, and serve more than one model: its restarts counted once
        # a step, the servers (instances) once (an SRE's pass: 5 restarts "of 3 servers" named two).
        notices.append(Notice("prometheus.notice.counter_reset", restarts=len({(t, instance) for t, _, instance in restarts}),
                              count=len({instance for *_, instance in restarts}), where=_listed([
            f"{instance or '?'} ({'/'.join(part for part in key if part)}, "
            f"{_restart_moment(t, window_s, start_time.get(t, {}).get(instance))})"
            for t, key, instance in restarts])))
    frame.attrs["notices"] = notices
    frame.attrs["absent"] = {"/".join(k): v for k, v in absent.items()}
    frame.attrs["stopped"] = _stopped(servers)
    frame.attrs["queries"] = [promql for *_, promql in queries]
    frame.attrs["source"] = source
    frame.attrs["end"] = end
    return frame


# A window holding fewer than this share of a series' usual samples of generated tokens has a gap in it.
_SPARSE_SHARE = 0.5


def _whole_window_samples(samples: dict[float, dict[tuple[str, ...], dict[str, float]]],
                          servers: dict[float, dict[tuple[str, ...], set[str]]], window_s: float,
                          notices: list[Notice]) -> dict[float, dict[tuple[str, ...], float]]:
    """By point and row, the fewest samples of generated tokens of the servers that reported through
    the whole window: at the point its start falls on (the latest at or before it) and at its end
    (``servers``, from the running-requests gauge). A server that joined inside the window (a rolling
    update's new pod, a target added) or left it holds part of it by right, which is no gap in
    Prometheus's scrapes (an SRE's pass: a second server joining had been said to be one); joins are
    said in ``prometheus.notice.joined``. Where a window's start is before the range's first point,
    or the gauge is not exported, every server counts, as before."""
    times = sorted(servers)
    fewest: dict[float, dict[tuple[str, ...], float]] = {}
    joined: dict[str, float] = {}
    for t, by_key in samples.items():
        starts = bisect.bisect_right(times, t - window_s + 1e-9)  # the points at or before the window's start
        for key, counts in by_key.items():
            now = servers.get(t, {}).get(key)
            then = servers.get(times[starts - 1], {}).get(key) if starts else None
            whole = [n for instance, n in counts.items()
                     if (now is None or instance in now) and (then is None or instance in then)]
            if now is not None and then is not None:
                for instance in now - then:
                    joined[instance] = min(t, joined.get(instance, t))
            if whole:
                fewest.setdefault(t, {})[key] = min(whole)
    if joined:
        notices.append(Notice("prometheus.notice.joined", count=len(joined), where=_listed(
            [f"{instance or '?'} ({utc_clock(t)})" for instance, t in sorted(joined.items(), key=lambda item: item[1])])))
    return fewest


def _sparse_windows(by_series: dict[tuple, list[dict]], samples: dict[float, dict[tuple[str, ...], float]],
                    absent: dict[tuple, dict[str, Notice]], notices: list[Notice]) -> None:
    """Leave out the tokens per second of each point whose window holds fewer than :data:`_SPARSE_SHARE`
    of its series' median count of samples of the generated-tokens counter (``count_over_time``, the
    fewest of any server's): Prometheus missed scrapes there (it was paused, or the servers did not
    answer), and ``increase()`` over the part of the window its samples cover reads the rate low (an
    SRE's pass: 215 tokens/s for a fleet making 950, after Prometheus stopped for 40 s). Said in a
    notice with the first such point, and as the figure's absence where it is the latest point.
    Acceptance, ratios of counts of the same samples, stands. Series with fewer than three points
    counted have no usual count to tell a gap by."""
    sparse: list[tuple[float, tuple]] = []
    for key, series in by_series.items():
        counts = [samples.get(row["time"], {}).get(key[1:]) for row in series]
        known = [count for count in counts if count is not None]
        if len(known) < 3:
            continue
        usual = float(np.median(known))
        for row, count in zip(series, counts):
            if count is not None and count < _SPARSE_SHARE * usual and row["generation_throughput"] is not None:
                row["generation_throughput"] = None
                sparse.append((row["time"], key))
        if sparse and sparse[-1] == (series[-1]["time"], key):
            absent.setdefault(key, {})["generation_throughput"] = Notice("prometheus.absent.sparse")
    if sparse:
        notices.append(Notice("prometheus.notice.sparse", points=len(sparse), first=utc_clock(min(t for t, _ in sparse)),
                              names=_listed(list(dict.fromkeys("/".join(key[1:]) for _, key in sparse)))))


def _stopped(servers: dict[float, dict[tuple[str, ...], set[str]]]) -> dict[str, list[str]]:
    """By row ("/"-joined key), the servers that reported at the last point with the most of them
    and not at the latest point (:func:`specviz.live.windows.servers_dropped` says so); rows that lost
    none are left out."""
    by_key: dict[tuple[str, ...], list[tuple[float, set[str]]]] = {}
    for t in sorted(servers):
        for key, names in servers[t].items():
            by_key.setdefault(key, []).append((t, names))
    stopped = {}
    for key, points in by_key.items():
        most = max(len(names) for _, names in points)
        at_most = [names for _, names in points if len(names) == most][-1]
        if gone := at_most - points[-1][1]:
            stopped["/".join(key)] = sorted(gone)
    return stopped


def _listed(names: Sequence[str], most: int = 5) -> str:
    """The first ``most`` of ``names`` for a notice, an ellipsis after them where there are more."""
    return ", ".join(names[:most]) + (", …" if len(names) > most else "")


_OWN_NOTICES = ("prom.notice.summed", "prom.notice.counter_reset")


def _whole_gamma(at: dict[str, dict[tuple, float]]) -> None:
    """Undo the rounding error ``increase()``'s extrapolation leaves in γ = draft_tokens / drafts.

    Both counters of a group are scraped together, so their increases are extrapolated by the same
    factor and their ratio is the counted one, up to floating-point rounding (3 × f / f can come back
    as 2.9999999999999996, which states.py would take for drafts of varying length). A ratio within
    1e-9 of a whole number γ is made exactly γ: the drafts are moved by a few units in the last
    place, to a count d for which (γ·d)/d is γ in floating point, and the draft tokens set to γ·d.
    """
    drafts, tokens = at.get("drafts", {}), at.get("draft_tokens", {})
    for key, count in list(drafts.items()):
        if key not in tokens or not count > 0:
            continue
        ratio = tokens[key] / count
        gamma = round(ratio)
        if gamma < 1 or abs(ratio - gamma) > 1e-9 * ratio:
            continue
        for _ in range(64):
            if (gamma * count) / count == gamma:
                drafts[key], tokens[key] = count, gamma * count
                break
            count = math.nextafter(count, math.inf)
    # TensorRT-LLM's drafts are its drafted counts per position (drafts = position 0's, draft tokens
    # their sum): at a fixed γ the γ counts are one count, made one value whose sum divides back to γ.
    drafted = at.get("drafted_per_pos", {})
    groups: dict[tuple, list[tuple]] = {}
    for prefix, labels in drafted:
        groups.setdefault((prefix, tuple(label for label in labels if label[0] != "token_position")), []).append(
            (prefix, labels))
    for keys in groups.values():
        count = drafted[keys[0]]
        if not count > 0 or any(abs(drafted[key] - count) > 1e-9 * count for key in keys):
            continue
        for _ in range(64):
            if sum([count] * len(keys)) / count == len(keys):
                drafted.update(dict.fromkeys(keys, count))
                break
            count = math.nextafter(count, math.inf)


def label_column(label: str) -> str:
    """The column (and index level) of a ``by`` label in :func:`query_figures`' frame: the label's
    name, or ``<name>_label`` where a column of the frame has that name (vLLM's data-parallel
    ``engine`` label beside the ``engine`` column, which names the serving engine)."""
    clashes = label in ("time", "engine", "window_s", *FIGURE_COLUMNS) or label.startswith("per_position_")
    return f"{label}_label" if clashes else label


def _row(t: float, state: SpecDecodeState, by: tuple[str, ...], window_s: float, reset: bool) -> dict:
    row: dict[str, Any] = {"time": t, "engine": state.engine, "model_name": state.model_name,
                           **{label_column(b): state.labels.get(b, "") for b in by}, "window_s": window_s}
    for name in FIGURE_COLUMNS:
        row[name] = getattr(state, name)
    row["counter_reset"] = bool(reset)
    for i, value in enumerate(state.per_position_acceptance or []):
        row[f"per_position_acceptance_{i}"] = value
    for i, value in enumerate(state.per_position_conditional or []):
        row[f"per_position_conditional_{i}"] = value
    return row


def per_position(row: Mapping[str, Any]) -> tuple[list[float | None], list[float | None]]:
    """A row of :func:`query_figures` (as a dict) read back into its per-position figures, the
    acceptance and the conditional acceptance at each draft position in order (the lists a
    :class:`specviz.live.states.SpecDecodeState` holds), None where a position's figure is absent;
    the positions past the model's own (other models' columns) left out."""
    positions = sorted(int(column.rsplit("_", 1)[1]) for column in row
                       if column.startswith("per_position_acceptance_"))
    figure = lambda value: None if value is None or value != value else float(value)  # NaN: absent
    acceptance = [figure(row.get(f"per_position_acceptance_{i}")) for i in positions]
    conditional = [figure(row.get(f"per_position_conditional_{i}")) for i in positions]
    # The frame's columns are every model's positions: a model of fewer has none past its own (a model
    # drafting 3 beside one drafting 4 had a fourth, absent, and lost the link its rates give).
    while acceptance and acceptance[-1] is None and conditional[-1] is None:
        acceptance.pop()
        conditional.pop()
    return acceptance, conditional


def query_figures(base_url: str, range_s: str | float = "1h", step_s: str | float = "30s", *,
                  window_s: str | float | None = None, end: float | None = None, by: Sequence[str] = (),
                  limits: Limits | None = None) -> pd.DataFrame:
    """Spec-decode figures over time from a Prometheus server, per model (and per ``by`` label).

    Parameters
    ----------
    base_url : str
        The server's base URL, such as ``http://localhost:9090`` (a path prefix is kept:
        ``http://host/prometheus``).
    range_s, step_s : str or float
        How far back from ``end``, and how often: seconds or Prometheus durations (``1h``, ``30s``).
        At most ``SPECVIZ_PROMETHEUS_MAX_POINTS`` points per series.
    window_s : str or float, optional
        The window each point's ``increase()`` spans; the step when omitted (the windows then tile
        the range). It must hold two samples of a series: at least twice the scrape interval.
    end : float, optional
        Unix seconds of the last point; now, rounded down to the step, when omitted.
    by : sequence of str
        Labels to keep apart instead of summing over, e.g. ``("instance",)`` or ``("engine",)``.
    limits : Limits, optional
        Bounds of each request (:meth:`specviz.live.scrape.Limits.from_settings` when omitted).

    Returns
    -------
    pandas.DataFrame
        Indexed by ``time`` (UTC), ``model_name`` and the ``by`` labels (:func:`label_column`:
        ``engine`` becomes ``engine_label``); columns ``engine``,
        ``window_s``, :data:`FIGURE_COLUMNS`, ``servers`` (how many servers, ``instance``, report
        the model's running requests: the verdict's batch is their mean,
        :func:`specviz.live.windows.server_batch`) and ``per_position_acceptance_<i>``,
        ``per_position_conditional_<i>``; NaN where a figure is absent. ``attrs`` holds
        ``notices`` (Notices), ``absent`` ("engine/model[/by...]" → {figure: Notice}, at the last
        point), ``queries`` (the PromQL), ``source``, ``end`` (Unix seconds of the range's last
        point: a model whose latest point is far behind it has stopped reporting,
        :func:`specviz.live.windows.late_point`) and ``stopped`` (by row, "/"-joined as ``absent``: the
        servers that reported at the point with the most of them and not at the latest, :func:`_stopped`).

    Raises
    ------
    SpecvizError
        ``prometheus.bad_duration``, ``prometheus.too_many_points``, ``prometheus.bad_label``,
        ``prometheus.bad_base_url``, ``prometheus.no_spec_decode`` (no spec-decode series in the
        range), ``prometheus.no_points`` (series, but no window holds two samples),
        ``prometheus.too_many_queries`` (past ``SPECVIZ_PROMETHEUS_MAX_QUERIES``), ``prometheus.deadline``
        (past ``SPECVIZ_PROMETHEUS_DEADLINE_S`` in all), and the failures of :func:`range_query`.
    """
    range_s = parse_duration(range_s, "range")
    step_s = parse_duration(step_s, "step")
    window = step_s if window_s is None else parse_duration(window_s, "window")
    check_points(range_s, step_s)
    base = api_base(base_url)
    if end is None:
        end = math.floor(_time.time() / step_s) * step_s
    start = end - range_s
    runner = Runner(base, limits, start=start, end=end, step_s=step_s)
    return _figures(base, window, by, start - window, end, runner)


def query_window(base_url: str, window_s: str | float = "5m", *, at: float | None = None,
                 by: Sequence[str] = (), limits: Limits | None = None) -> pd.DataFrame:
    """Spec-decode figures over one window ending at ``at`` (now if omitted), per model: the instant
    form of :func:`query_figures` (``/api/v1/query``), the same columns, one row per model."""
    window = parse_duration(window_s, "window")
    base = api_base(base_url)
    at = _time.time() if at is None else at
    runner = Runner(base, limits, at=at)
    return _figures(base, window, by, at - window, at, runner)
