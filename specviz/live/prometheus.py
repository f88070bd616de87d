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
   gauges (a value only where the replicas agree), and ``resets()`` of every counter.
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
interval. A counter that went down inside the window (a restart) is counted as ``increase()`` counts
it and the point is marked ``counter_reset``.

Every request goes through :func:`specviz.live.scrape.fetch_body`, with the scrape limits (scheme,
credentials, redirects, time, size). Answers are read strictly: JSON with ``status`` ``success``
or ``error``, the ``resultType`` asked for, ``[time, "value"]`` pairs whose values are numbers,
``NaN`` or ``±Inf`` (the last two left out, with a notice). Every failure is a
:class:`specviz.errors.SpecvizError` with its own ``prometheus.*`` key (the transport's are
``scrape.*``); ``prometheus.not_api`` says what the answer lacks in its ``detail``, a
``prometheus.detail.*`` message.

References
----------
Prometheus HTTP API: https://prometheus.io/docs/prometheus/latest/querying/api/.
``increase()``, ``resets()``: https://prometheus.io/docs/prometheus/latest/querying/functions/.
Metric names: https://prometheus.io/docs/concepts/data_model/#metric-names-and-labels.
"""

from __future__ import annotations

import json
import math
import re
import time as _time
import urllib.parse
from dataclasses import dataclass, replace
from typing import Any, Iterable, Mapping, Sequence

import pandas as pd

from specviz import settings
from specviz.i18n import whole_characters
from specviz.errors import Notice, SpecvizError

from . import exposition
from .roles import COUNTERS, MEANING_LABELS, RATIO_GAUGES, ROLES, SPEC_ROLES, role_of, without_groups
from .states import SpecDecodeState, spec_decode_states
from .scrape import Limits, check_url, fetch_body, shown

__all__ = ["Series", "parse_duration", "check_points", "metric_names", "instant_query", "range_query",
           "query_figures", "query_window", "label_column", "per_position", "FIGURE_COLUMNS"]

_ACCEPT = "application/json"
_API = "/api/v1/"
_NAME = re.compile(r"[A-Za-z_:][A-Za-z0-9_:]*")
_LABEL = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# A sample value as Prometheus (Go's FormatFloat) and VictoriaMetrics write it.
_VALUE = re.compile(r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?|NaN|[-+]?Inf")
_DURATION = re.compile(r"(?:(\d+)y)?(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m(?!s))?(?:(\d+)s)?(?:(\d+)ms)?")
_UNITS = (365 * 86400.0, 7 * 86400.0, 86400.0, 3600.0, 60.0, 1.0, 0.001)
_SECONDS = re.compile(r"[0-9]+(?:\.[0-9]+)?")
_MIN_STEP_S = 0.001  # Prometheus's resolution
_NAMES_LOOKBACK_S = 300.0  # Prometheus's default lookback delta
# Every Prometheus answer spends more than 8 bytes on each list or object it holds (a point is
# ``[1.7e9,"0"],``); one denser than that is refused before it is decoded, so a body of nested empty
# lists cannot cost many times its size in Python objects.
_BYTES_PER_CONTAINER = 8

# The label of a per-position counter's position, by engine prefix (TensorRT-LLM's is token_position).
_POSITION_LABEL = {"trtllm": "token_position"}
# Roles by how they are queried; the rest of roles.ROLES (the inter-token latency histograms, the
# process's start time) are not.
_SUMMED_GAUGES = ("running", "waiting")
_MAX_GAUGES = ("kv_cache_usage",)
_QUERIED = COUNTERS + _SUMMED_GAUGES + _MAX_GAUGES + RATIO_GAUGES
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


@dataclass(frozen=True)
class Series:
    """One series of a query's answer.

    Attributes
    ----------
    labels : dict
        Its labels (``__name__`` is absent after ``sum``, ``increase()`` and the like).
    points : list of (float, float)
        (Unix time in seconds, value); NaN and ±Inf values are left out.
    dropped : int
        Values left out for not being finite.
    """

    labels: dict[str, str]
    points: list[tuple[float, float]]
    dropped: int = 0


def parse_duration(text: str | float | int, name: str = "duration") -> float:
    """Seconds in a duration: a number of seconds (``90``, ``2.5``) or Prometheus's notation
    (``30s``, ``5m``, ``1h30m``, ``2d``, ``1w``, ``500ms``, units from largest to smallest).

    Raises
    ------
    SpecvizError
        ``prometheus.bad_duration`` for anything else, zero, or a value that is not finite.
    """
    if isinstance(text, bool):
        raise SpecvizError("prometheus.bad_duration", name=name, text=shown(str(text)))
    if isinstance(text, (int, float)):
        seconds = float(text)
    else:
        raw = text.strip()
        seconds = math.nan
        if _SECONDS.fullmatch(raw):
            seconds = float(raw)
        elif raw and (match := _DURATION.fullmatch(raw)):
            seconds = sum(int(v) * unit for v, unit in zip(match.groups(), _UNITS) if v is not None)
    if not math.isfinite(seconds) or seconds < _MIN_STEP_S:
        raise SpecvizError("prometheus.bad_duration", name=name, text=shown(str(text)))
    return seconds


def check_points(range_s: float, step_s: float) -> int:
    """Points per series of a range query over ``range_s`` every ``step_s``, if within
    ``SPECVIZ_PROMETHEUS_MAX_POINTS``.

    Raises
    ------
    SpecvizError
        ``prometheus.too_many_points``.
    """
    points = int(math.floor(range_s / step_s + 1e-9)) + 1
    limit = settings.get("SPECVIZ_PROMETHEUS_MAX_POINTS")
    if points > limit:
        raise SpecvizError("prometheus.too_many_points", range=f"{range_s:g}", step=f"{step_s:g}",
                           points=points, limit=limit)
    return points


def _base(base_url: str) -> tuple[str, str]:
    """The checked base URL without a trailing slash, and its form for messages."""
    url = check_url(base_url)
    parts = urllib.parse.urlsplit(url)
    if parts.query or parts.fragment:
        raise SpecvizError("prometheus.bad_base_url", source=shown(url))
    url = url.rstrip("/")
    # A URL of the API itself (.../api/v1/query) is taken back to its base.
    if _API.rstrip("/") in parts.path:
        url = url[:url.index(_API.rstrip("/"))].rstrip("/")
    return url, shown(url)


def _get(base: tuple[str, str], endpoint: str, params: Sequence[tuple[str, str]], limits: Limits | None
         ) -> tuple[Any, list[str]]:
    """The ``data`` and ``warnings`` of a successful API answer, or the error it names."""
    url, source = base
    query = urllib.parse.urlencode(params)
    status, body = fetch_body(f"{url}{_API}{endpoint}?{query}", limits, accept=_ACCEPT, any_status=True,
                              source=source)
    document = _decode(body, status, source)
    if document["status"] == "error":
        raise SpecvizError("prometheus.api_error", source=source,
                           error_type=shown(str(document.get("errorType", "")))[:40] or "?",
                           error=shown(str(document.get("error", "")))[:200] or "?")
    if not 200 <= status < 300:
        raise SpecvizError("prometheus.http_status", source=source, status=status)
    if "data" not in document:
        raise SpecvizError("prometheus.not_api", source=source, detail=Notice("prometheus.detail.no_data"))
    return document["data"], [shown(str(w)) for w in document.get("warnings") or [] if isinstance(w, str)]


def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def _decode(body: bytes, status: int, source: str) -> dict[str, Any]:
    """The API's JSON envelope, strictly: an object whose ``status`` is success or error."""
    head = body.lstrip()[:1]
    if head == b"<":
        raise SpecvizError("prometheus.html", source=source)
    if not head:
        if not 200 <= status < 300:
            raise SpecvizError("prometheus.http_status", source=source, status=status)
        raise SpecvizError("prometheus.not_api", source=source, detail=Notice("prometheus.detail.empty"))
    if body.count(b"[") + body.count(b"{") > len(body) // _BYTES_PER_CONTAINER + 16:
        raise SpecvizError("prometheus.too_dense", source=source)
    try:
        document = json.loads(body.decode("utf-8"), parse_constant=_refuse_constant)
    except (UnicodeDecodeError, ValueError, RecursionError):
        if not 200 <= status < 300:
            raise SpecvizError("prometheus.http_status", source=source, status=status) from None
        raise SpecvizError("prometheus.not_api", source=source, detail=Notice("prometheus.detail.not_json")) from None
    if not isinstance(document, dict) or document.get("status") not in ("success", "error"):
        if not 200 <= status < 300:
            raise SpecvizError("prometheus.http_status", source=source, status=status)
        raise SpecvizError("prometheus.not_api", source=source, detail=Notice("prometheus.detail.no_status"))
    return _whole(document) if _HALF_ESCAPE.search(body) else document


# A JSON escape of half a character (\ud800-\udfff; a whole one's two halves are joined by json.loads).
_HALF_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def _whole(document: Any) -> Any:
    """``document`` with every half character in its texts, names and labels replaced by U+FFFD
    (:func:`specviz.i18n.whole_characters`): a label value of "m\\ud800" reached the page's tables,
    which cannot draw it. Walked with a stack: the answer may nest as deep as json.loads decoded."""
    fix = lambda value: whole_characters(value) if isinstance(value, str) else value  # noqa: E731
    root = [fix(document)]
    stack: list[Any] = [root]
    while stack:
        node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, value in list(items):
            if isinstance(node, dict) and isinstance(key, str) and whole_characters(key) != key:
                del node[key]
                key = whole_characters(key)
            node[key] = fix(value)
            if isinstance(value, (dict, list)):
                stack.append(value)
    return root[0]


def _number(value: Any, source: str) -> float:
    """A sample's value: a string as Prometheus writes one."""
    if not isinstance(value, str) or not _VALUE.fullmatch(value):
        raise SpecvizError("prometheus.not_api", source=source, detail=Notice("prometheus.detail.value_not_number"))
    return float(value)


def _time_of(value: Any, source: str) -> float:
    """A sample's time: a finite number of seconds (a whole number past a float's range is none)."""
    try:
        seconds = math.nan if isinstance(value, bool) or not isinstance(value, (int, float)) else float(value)
    except OverflowError:
        seconds = math.inf
    if not math.isfinite(seconds):
        raise SpecvizError("prometheus.not_api", source=source, detail=Notice("prometheus.detail.time_not_number"))
    return seconds


def _pair(pair: Any, source: str) -> tuple[float, float]:
    if not isinstance(pair, list) or len(pair) != 2:
        raise SpecvizError("prometheus.not_api", source=source, detail=Notice("prometheus.detail.not_a_point"))
    return _time_of(pair[0], source), _number(pair[1], source)


def _series(data: Any, expected: str, source: str) -> list[Series]:
    """The series of a query's ``data``: ``{"resultType": expected, "result": [...]}``."""
    if not isinstance(data, dict) or not isinstance(data.get("result"), list):
        raise SpecvizError("prometheus.not_api", source=source, detail=Notice("prometheus.detail.no_result"))
    if data.get("resultType") != expected:
        raise SpecvizError("prometheus.not_api", source=source,
                           detail=Notice("prometheus.detail.result_type", found=shown(str(data.get("resultType")))[:20],
                                         expected=expected))
    most = settings.get("SPECVIZ_METRICS_MAX_SERIES")
    if len(data["result"]) > most:  # before any is read: 6,000 models × 60 points took 434 s and 2.35 GB
        raise SpecvizError("prom.too_many_series", count=len(data["result"]), limit=most)
    out = []
    for item in data["result"]:
        if not isinstance(item, dict) or not isinstance(item.get("metric"), dict):
            raise SpecvizError("prometheus.not_api", source=source, detail=Notice("prometheus.detail.no_labels"))
        labels = item["metric"]
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in labels.items()):
            raise SpecvizError("prometheus.not_api", source=source, detail=Notice("prometheus.detail.label_not_text"))
        key = "values" if expected == "matrix" else "value"
        if key not in item:
            if "histograms" in item or "histogram" in item:
                continue  # a native histogram: no query here asks for one
            raise SpecvizError("prometheus.not_api", source=source,
                               detail=Notice("prometheus.detail.no_field", field=key))
        raw = item[key]
        if expected == "matrix":
            if not isinstance(raw, list):
                raise SpecvizError("prometheus.not_api", source=source,
                                   detail=Notice("prometheus.detail.values_not_list"))
            pairs = [_pair(p, source) for p in raw]
        else:
            pairs = [_pair(raw, source)]
        points = [(t, v) for t, v in pairs if math.isfinite(v)]
        out.append(Series(labels=dict(labels), points=points, dropped=len(pairs) - len(points)))
    exposition.check_labels(series.labels for series in out)
    return out


def metric_names(base_url: str, start: float, end: float, *, limits: Limits | None = None
                 ) -> dict[str, list[tuple[str, str]]]:
    """The metric names Prometheus holds between ``start`` and ``end`` that :mod:`specviz.live.roles`
    recognises: role → [(name, engine prefix)].

    Raises
    ------
    SpecvizError
        The failures of the API (``prometheus.*``, ``scrape.*``).
    """
    data, _ = _get(_base(base_url), "label/__name__/values",
                   [("match[]", '{__name__=~"' + _promql_string(_NAMES_MATCH) + '"}'),
                    ("start", _ts(start)), ("end", _ts(end))], limits)
    if not isinstance(data, list) or not all(isinstance(n, str) for n in data):
        raise SpecvizError("prometheus.not_api", source=_base(base_url)[1],
                           detail=Notice("prometheus.detail.names_not_text"))
    return _roles(data)


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


def _ts(seconds: float) -> str:
    return f"{seconds:.3f}"


def instant_query(base_url: str, promql: str, *, at: float | None = None, limits: Limits | None = None
                  ) -> list[Series]:
    """``/api/v1/query``: the instant vector of ``promql`` at ``at`` (Unix seconds; now if omitted).

    Raises
    ------
    SpecvizError
        ``prometheus.api_error`` (Prometheus refused the query), ``prometheus.not_api``,
        ``prometheus.html``, ``prometheus.http_status``, ``prometheus.too_dense``, ``scrape.*``.
    """
    series, _ = _instant(_base(base_url), promql, at, limits)
    return series


def _instant(base: tuple[str, str], promql: str, at: float | None, limits: Limits | None
             ) -> tuple[list[Series], list[str]]:
    params = [("query", promql)] + ([] if at is None else [("time", _ts(at))])
    data, warnings = _get(base, "query", params, limits)
    return _series(data, "vector", base[1]), warnings


def range_query(base_url: str, promql: str, start: float, end: float, step_s: float, *,
                limits: Limits | None = None) -> list[Series]:
    """``/api/v1/query_range``: the matrix of ``promql`` from ``start`` to ``end`` every ``step_s``.

    Raises
    ------
    SpecvizError
        As :func:`instant_query`, and ``prometheus.too_many_points`` before asking.
    """
    series, _ = _range(_base(base_url), promql, start, end, step_s, limits)
    return series


def _range(base: tuple[str, str], promql: str, start: float, end: float, step_s: float,
           limits: Limits | None) -> tuple[list[Series], list[str]]:
    check_points(end - start, step_s)
    data, warnings = _get(base, "query_range", [("query", promql), ("start", _ts(start)), ("end", _ts(end)),
                                                ("step", f"{step_s:g}")], limits)
    return _series(data, "matrix", base[1]), warnings


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
    ``min``, ``resets`` or ``servers`` (how many servers, Prometheus's ``instance``, report the
    running requests: each decodes its own batch)."""
    window = f"{round(window_s * 1000)}ms"  # PromQL durations are whole units
    group = ", ".join(("model_name", *by))
    out = []
    for role in _QUERIED:
        for name, prefix in names.get(role, []):
            if role in COUNTERS:
                position = _POSITION_LABEL.get(prefix, "position")
                labels = group + (f", {position}" if role in ("accepted_per_pos", "drafted_per_pos") else "")
                out.append((role, prefix, "value", f"sum by ({labels}) (increase({name}[{window}]))"))
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
    names = metric_names(base[0], start - _NAMES_LOOKBACK_S, end, limits=run.limits)
    if not any(role in names for role in SPEC_ROLES):
        raise SpecvizError("prometheus.no_spec_decode", source=source)
    queries = _queries(names, window_s, by)
    # time → role → {(prefix, labels): value}; ratio gauges keep their max and min apart.
    points: dict[float, dict[str, dict[tuple, float]]] = {}
    extremes: dict[float, dict[tuple, dict[str, float]]] = {}
    resets: dict[float, dict[tuple[str, ...], set[str]]] = {}  # the servers (instances) that restarted
    servers: dict[float, dict[tuple[str, ...], set[str]]] = {}  # the servers (instances) that report
    dropped: dict[str, int] = {}
    warnings: list[str] = []
    groups: set[tuple[str, ...]] = set()
    for role, prefix, kind, promql in queries:
        series, said = run(promql)
        warnings += said
        groups |= {_model_key(item.labels, by) for item in series}
        _check_rows(len(groups), run.points, source)
        for item in series:
            if item.dropped:
                dropped[role or "resets"] = dropped.get(role or "resets", 0) + item.dropped
            labels = tuple(sorted((k, v) for k, v in item.labels.items() if k != "__name__"))
            for t, value in item.points:
                if kind == "resets":
                    if value > 0:
                        resets.setdefault(t, {}).setdefault(_model_key(item.labels, by), set()).add(
                            item.labels.get("instance", ""))
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
    # A series that first answers after the range's first point was born inside the range: at its
    # first point, increase() extrapolates back to its first sample, not to the window's start, so a
    # rate per second over the whole window understates it (96 tokens/s for a server making 310).
    # Ratios (acceptance, γ) divide counts of the same part and stand.
    by_series: dict[tuple, list[dict]] = {}
    for row in rows:  # in time order, as the points were read
        by_series.setdefault((row["engine"], row["model_name"], *(row[label_column(b)] for b in by)), []).append(row)
    born = [key for key, series in by_series.items() if series[0]["time"] > start + window_s + _MIN_STEP_S]
    for key in born:
        by_series[key][0]["generation_throughput"] = None
        if len(by_series[key]) == 1:  # the headline is that first point: its tokens per second are said to be absent
            absent.setdefault(key, {})["generation_throughput"] = Notice("prometheus.absent.born_inside")
    if born:
        notices.append(Notice("prometheus.notice.born_inside", series=len(born),
                              names=_listed(["/".join(key[1:]) for key in born])))
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
    if restarts:
        notices.append(Notice("prometheus.notice.counter_reset", count=len(restarts), where=_listed([
            f"{instance or '?'} ({'/'.join(key)}, {_time.strftime('%H:%M:%S', _time.gmtime(t))} UTC)"
            for t, key, instance in restarts])))
    frame.attrs["notices"] = notices
    frame.attrs["absent"] = {"/".join(k): v for k, v in absent.items()}
    frame.attrs["stopped"] = _stopped(servers)
    frame.attrs["queries"] = [promql for *_, promql in queries]
    frame.attrs["source"] = source
    frame.attrs["end"] = end
    return frame


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
    :class:`specviz.live.states.SpecDecodeState` holds), None where a position's figure is absent."""
    positions = sorted(int(column.rsplit("_", 1)[1]) for column in row
                       if column.startswith("per_position_acceptance_"))
    figure = lambda value: None if value is None or value != value else float(value)  # NaN: absent
    return ([figure(row.get(f"per_position_acceptance_{i}")) for i in positions],
            [figure(row.get(f"per_position_conditional_{i}")) for i in positions])


@dataclass
class _Runner:
    base: tuple[str, str]
    limits: Limits | None
    start: float | None = None
    end: float | None = None
    step_s: float | None = None
    at: float | None = None

    @property
    def points(self) -> int:
        """Points each series answers at most: one for an instant query."""
        if self.step_s is None:
            return 1
        return check_points(self.end - self.start, self.step_s)

    def __call__(self, promql: str) -> tuple[list[Series], list[str]]:
        if self.step_s is None:
            return _instant(self.base, promql, self.at, self.limits)
        return _range(self.base, promql, self.start, self.end, self.step_s, self.limits)


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
        range), ``prometheus.no_points`` (series, but no window holds two samples), and the
        failures of :func:`range_query`.
    """
    range_s = parse_duration(range_s, "range")
    step_s = parse_duration(step_s, "step")
    window = step_s if window_s is None else parse_duration(window_s, "window")
    check_points(range_s, step_s)
    base = _base(base_url)
    if end is None:
        end = math.floor(_time.time() / step_s) * step_s
    start = end - range_s
    runner = _Runner(base, limits, start=start, end=end, step_s=step_s)
    return _figures(base, window, by, start - window, end, runner)


def query_window(base_url: str, window_s: str | float = "5m", *, at: float | None = None,
                 by: Sequence[str] = (), limits: Limits | None = None) -> pd.DataFrame:
    """Spec-decode figures over one window ending at ``at`` (now if omitted), per model: the instant
    form of :func:`query_figures` (``/api/v1/query``), the same columns, one row per model."""
    window = parse_duration(window_s, "window")
    base = _base(base_url)
    at = _time.time() if at is None else at
    runner = _Runner(base, limits, at=at)
    return _figures(base, window, by, at - window, at, runner)
