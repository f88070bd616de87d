"""A strict client of Prometheus's HTTP API: durations, instant and range queries, and the checks
of every answer. It knows nothing of speculative decoding; :mod:`specviz.live.prometheus` asks it
for the spec-decode figures.

Every request goes through :func:`specviz.live.scrape.fetch_body`, with the scrape limits (scheme,
credentials, redirects, time, size). Answers are read strictly: JSON with ``status`` ``success``
or ``error``, the ``resultType`` asked for, ``[time, "value"]`` pairs whose values are numbers,
``NaN`` or ``±Inf`` (the last two left out, and counted). Every failure is a
:class:`specviz.errors.SpecvizError` with its own ``prometheus.*`` key (the transport's are
``scrape.*``); ``prometheus.not_api`` says what the answer lacks in its ``detail``, a
``prometheus.detail.*`` message.

References
----------
Prometheus HTTP API: https://prometheus.io/docs/prometheus/latest/querying/api/.
"""

from __future__ import annotations

import json
import math
import re
import urllib.parse
from dataclasses import dataclass, replace
from typing import Any, Sequence

from specviz import settings
from specviz.errors import Notice, SpecvizError
from specviz.i18n import whole_characters

from . import exposition
from .scrape import Limits, check_url, fetch_body, shown

__all__ = ["Series", "Runner", "parse_duration", "check_points", "api_base", "api_get", "timestamp",
           "instant_query", "range_query", "MIN_STEP_S"]

_ACCEPT = "application/json"


_API = "/api/v1/"


# A sample value as Prometheus (Go's FormatFloat) and VictoriaMetrics write it.
_VALUE = re.compile(r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?|NaN|[-+]?Inf")


_DURATION = re.compile(r"(?:(\d+)y)?(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m(?!s))?(?:(\d+)s)?(?:(\d+)ms)?")


_UNITS = (365 * 86400.0, 7 * 86400.0, 86400.0, 3600.0, 60.0, 1.0, 0.001)


_SECONDS = re.compile(r"[0-9]+(?:\.[0-9]+)?")


MIN_STEP_S = 0.001  # Prometheus's resolution


# Every Prometheus answer spends more than 8 bytes on each list or object it holds (a point is
# ``[1.7e9,"0"],``); one denser than that is refused before it is decoded, so a body of nested empty
# lists cannot cost many times its size in Python objects.
_BYTES_PER_CONTAINER = 8


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
    if not math.isfinite(seconds) or seconds < MIN_STEP_S:
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
        # Seconds in digits (30 days had read "2.592e+06 s": an SRE's pass).
        seconds = lambda value: format(value, ",.3f").rstrip("0").rstrip(".")
        raise SpecvizError("prometheus.too_many_points", range=seconds(range_s), step=seconds(step_s),
                           points=points, limit=limit)
    return points


def api_base(base_url: str) -> tuple[str, str]:
    """The checked base URL without a trailing slash, and its form for messages; refused where it has a
    query or fragment, or whose path is ``/metrics`` (one server's page, a vLLM's or Prometheus's
    own: its API is under the base, and a vLLM answered the API's paths with 404; a Prometheus behind
    a path prefix, even ``/x/metrics``, is taken)."""
    url = check_url(base_url)
    parts = urllib.parse.urlsplit(url)
    if parts.query or parts.fragment:
        raise SpecvizError("prometheus.bad_base_url", source=shown(url))
    url = url.rstrip("/")
    if parts.path.rstrip("/") == "/metrics":  # one server's exposition: Prometheus answers under its base
        raise SpecvizError("prometheus.metrics_path", source=shown(url), one_server=Notice("live.source.url"))
    # A URL of the API itself (.../api/v1/query) is taken back to its base.
    if _API.rstrip("/") in parts.path:
        url = url[:url.index(_API.rstrip("/"))].rstrip("/")
    return url, shown(url)


def api_get(base: tuple[str, str], endpoint: str, params: Sequence[tuple[str, str]], limits: Limits | None
         ) -> tuple[Any, list[str]]:
    """The ``data`` and ``warnings`` of a successful API answer, or the error it names."""
    url, source = base
    query = urllib.parse.urlencode(params)
    answer = fetch_body(f"{url}{_API}{endpoint}?{query}", limits, accept=_ACCEPT, any_status=True, source=source)
    document = _decode(answer.body, answer.status, source)
    if document["status"] == "error":
        raise SpecvizError("prometheus.api_error", source=source,
                           error_type=shown(str(document.get("errorType", "")))[:40] or "?",
                           error=shown(str(document.get("error", "")))[:200] or "?")
    if not 200 <= answer.status < 300:
        raise SpecvizError("prometheus.http_status", source=source, status=answer.status)
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


# Unix seconds a sample's time may be: from 1970 to 2262, where pandas' nanosecond times end (a time
# of 1e308 or -1e15 had ended in a pandas error instead of this module's).
_LATEST_S = 9.2e9


def _time_of(value: Any, source: str) -> float:
    """A sample's time: a finite number of seconds from 1970 to :data:`_LATEST_S` (a whole number past
    a float's range is none)."""
    try:
        seconds = math.nan if isinstance(value, bool) or not isinstance(value, (int, float)) else float(value)
    except OverflowError:
        seconds = math.inf
    if not math.isfinite(seconds):
        raise SpecvizError("prometheus.not_api", source=source, detail=Notice("prometheus.detail.time_not_number"))
    if not 0 <= seconds <= _LATEST_S:
        raise SpecvizError("prometheus.not_api", source=source, detail=Notice("prometheus.detail.time_out_of_range"))
    return seconds


def _pair(pair: Any, source: str) -> tuple[float, float]:
    if not isinstance(pair, list) or len(pair) != 2:
        raise SpecvizError("prometheus.not_api", source=source, detail=Notice("prometheus.detail.not_a_point"))
    return _time_of(pair[0], source), _number(pair[1], source)


def _series(data: Any, expected: str, source: str, asked: int = 1) -> list[Series]:
    """The series of a query's ``data``: ``{"resultType": expected, "result": [...]}``, each of at most
    the points the query ``asked`` for (a range's :func:`check_points`), refused before they are read:
    a server that answered 30,000 points a series to a query of 61 held each refresh of the Live
    page for 26 s, 650,000 the CLI for minutes and 2.5 GB (an attack pass)."""
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
            if len(raw) > asked:
                raise SpecvizError("prometheus.not_api", source=source, detail=Notice(
                    "prometheus.detail.more_points", count=len(raw), asked=asked))
            pairs = [_pair(p, source) for p in raw]
        else:
            pairs = [_pair(raw, source)]
        points = [(t, v) for t, v in pairs if math.isfinite(v)]
        out.append(Series(labels=dict(labels), points=points, dropped=len(pairs) - len(points)))
    exposition.check_labels(series.labels for series in out)
    return out


def timestamp(seconds: float) -> str:
    """Unix seconds as the API takes a time: to the millisecond, its resolution."""
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
    series, _ = _instant(api_base(base_url), promql, at, limits)
    return series


def _instant(base: tuple[str, str], promql: str, at: float | None, limits: Limits | None
             ) -> tuple[list[Series], list[str]]:
    params = [("query", promql)] + ([] if at is None else [("time", timestamp(at))])
    data, warnings = api_get(base, "query", params, limits)
    return _series(data, "vector", base[1]), warnings


def range_query(base_url: str, promql: str, start: float, end: float, step_s: float, *,
                limits: Limits | None = None) -> list[Series]:
    """``/api/v1/query_range``: the matrix of ``promql`` from ``start`` to ``end`` every ``step_s``.

    Raises
    ------
    SpecvizError
        As :func:`instant_query`, and ``prometheus.too_many_points`` before asking.
    """
    series, _ = _range(api_base(base_url), promql, start, end, step_s, limits)
    return series


def _range(base: tuple[str, str], promql: str, start: float, end: float, step_s: float,
           limits: Limits | None) -> tuple[list[Series], list[str]]:
    asked = check_points(end - start, step_s)
    data, warnings = api_get(base, "query_range", [("query", promql), ("start", timestamp(start)), ("end", timestamp(end)),
                                                ("step", f"{step_s:g}")], limits)
    return _series(data, "matrix", base[1], asked), warnings


@dataclass
class Runner:
    """The queries of one answer, all over the same range (``start``, ``end`` and ``step_s``) or at
    one instant (``at``; now where None): ``runner(promql)`` is the series and warnings of one query."""

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

    def within(self, seconds: float) -> Runner:
        """The same queries, each ending within ``seconds`` at most (besides its limits' own deadline)."""
        limits = self.limits or Limits.from_settings()
        return replace(self, limits=replace(limits, deadline_s=min(limits.deadline_s, seconds)))

    def __call__(self, promql: str) -> tuple[list[Series], list[str]]:
        if self.step_s is None:
            return _instant(self.base, promql, self.at, self.limits)
        return _range(self.base, promql, self.start, self.end, self.step_s, self.limits)
