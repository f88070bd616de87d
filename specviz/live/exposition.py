"""Prometheus exposition text → a snapshot of the series specviz reads, by role.

:func:`parse` reads one scrape of ``/metrics`` (text format 0.0.4, as vLLM, SGLang, llama.cpp and
TensorRT-LLM serve it) into a :class:`Snapshot`: the values of the series of the families
:data:`specviz.live.roles.ROLES` recognises, each under its role. :mod:`specviz.live.states` turns
one snapshot or two into figures. Pure functions: no network, no Streamlit.

Counters carry ``_total`` on the wire and come with ``_created`` series (the time the series was
created); ``_created`` is never read as a value. A scrape is refused, by name, where it is cut short,
malformed, or past the limits of ``SPECVIZ_METRICS_*``; a value that is negative or not finite is left
out with a notice.

References
----------
Prometheus text exposition format: https://prometheus.io/docs/instrumenting/exposition_formats/.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Iterable, Mapping

from prometheus_client.parser import text_string_to_metric_families

from specviz import settings
from specviz.errors import SpecvizError, Notice

from .roles import ROLES, role_of, without_groups

__all__ = ["Snapshot", "parse", "check_labels"]

# Only the lines of the families above (and their HELP and TYPE lines) reach the parser: a scrape is
# mostly histograms specviz does not read, and prometheus_client's pure-Python parser costs ~0.6 ms a
# KB. Selecting lines is not parsing them; what is selected is parsed by prometheus_client alone.
_FAMILY = "|".join(f"(?:{without_groups(role)})" for role in ROLES)
_FAMILY = _FAMILY.replace("_bucket", "(?:_bucket)?")  # the TYPE line names the family without it
_WANTED_LINE = re.compile(rf"^[ \t]*(?:#[ \t]+(?:HELP|TYPE)[ \t]+)?(?:{_FAMILY})(?=[{{ \t]|$).*$", re.MULTILINE)


@dataclass(frozen=True)
class Snapshot:
    """One scrape: the values of the recognised series, by role.

    Attributes
    ----------
    series : dict
        Role (a key of :data:`specviz.live.roles.ROLES`) → {(prefix, labels): value}, labels a sorted tuple of
        (name, value) pairs. ``_created`` series are not here.
    time : float or None
        When the scrape was taken (seconds, any epoch shared by the snapshots compared); rates per
        second need it.
    notices : list of Notice
        Values left out (negative or not finite: no role can be either).
    dropped : frozenset
        The (role, prefix, labels) of each series left out, so that a figure it was needed for says
        why it is absent rather than that the server does not export it.
    """

    series: dict[str, dict[tuple[str, tuple[tuple[str, str], ...]], float]]
    time: float | None = None
    notices: list[Notice] = field(default_factory=list)
    dropped: frozenset[tuple[str, str, tuple[tuple[str, str], ...]]] = frozenset()


def _value_not_a_number(lines: list[str]) -> tuple[str, str] | None:
    """Where the first sample line prometheus_client refuses has a value that is no number (Python's
    ``float`` reads the format's spellings, ``NaN``, ``+Inf``, ``-Inf``; an underscore is the format's
    nowhere), (that value, the line cut to 120 characters); None where that line is broken otherwise
    (an attack pass: ``0x10`` and ``1_000`` had been said in prometheus_client's words). Each line is
    parsed alone, on the way to a message only."""
    for line in lines:
        try:
            list(text_string_to_metric_families(line + "\n"))
            continue
        except (ValueError, IndexError, KeyError, TypeError):
            pass
        text = line.strip()
        if text.startswith("#"):  # a broken TYPE or HELP line: no value to name
            return None
        rest = text[text.rindex("}") + 1:] if "}" in text else "".join(text.split(None, 1)[1:])
        value = (rest.split() or [""])[0]
        try:
            float(value)
        except ValueError:
            return value[:40], line if len(line) <= 120 else line[:120] + "…"
        return (value[:40], line if len(line) <= 120 else line[:120] + "…") if "_" in value else None
    return None


def parse(text: str, time: float | None = None) -> Snapshot:
    """Read one scrape of Prometheus exposition text.

    Parameters
    ----------
    text : str
        The body of ``/metrics`` (text format 0.0.4).
    time : float, optional
        When it was scraped, in seconds; needed for rates per second over a window.

    Returns
    -------
    Snapshot
        The recognised series by role. Lines of other families are not read (and so not checked).

    Raises
    ------
    SpecvizError
        ``prom.malformed`` if a line of a recognised family is not exposition text;
        ``prom.duplicate_series`` if one series appears twice (Prometheus refuses such a scrape);
        ``prom.cut_short`` if its last line has no line feed, which the format puts after every
        line: cut short, its last value perhaps mid-number.
    """
    # The format ends every line with a line feed (OpenMetrics' "# EOF" aside): a last line without one
    # was cut short (a body or file that stopped mid-number: "…accepted_tokens_total 20" of 2000 read as 20).
    # Any line: a cut _created or HELP line may be all that shows of a body whose counters came before.
    tail = text[text.rfind("\n") + 1:].strip()
    if tail and tail != "# EOF":
        raise SpecvizError("prom.cut_short", line=tail if len(tail) <= 120 else tail[:120] + "…")
    lines = _WANTED_LINE.findall(text)
    _check_size(lines)  # before prometheus_client, whose label parsing is quadratic in a line's length
    wanted = "\n".join(lines)
    series: dict[str, dict] = {role: {} for role in ROLES}
    dropped: dict[str, int] = {}
    dropped_series: set[tuple[str, str, tuple[tuple[str, str], ...]]] = set()
    try:
        families = list(text_string_to_metric_families(wanted))
    # prometheus_client signals a broken line with ValueError, and some with IndexError or
    # KeyError from its tokeniser; every one is the same thing to a user: not exposition text.
    except (ValueError, IndexError, KeyError, TypeError) as exc:
        if (bad := _value_not_a_number(lines)) is not None:
            raise SpecvizError("prom.bad_value", value=bad[0], line=bad[1]) from None
        raise SpecvizError("prom.malformed", detail=str(exc)[:200] or type(exc).__name__) from None
    for family in families:
        for sample in family.samples:
            found = role_of(sample.name)
            if found is None:
                continue
            role, prefix = found
            try:
                value = float(sample.value)
            except OverflowError:  # prometheus_client keeps a whole number's digits, past a float's range
                value = math.inf
            # Every role is a count, a ratio or a length: a negative one is as wrong as NaN.
            key = (prefix, tuple(sorted(sample.labels.items())))
            if not math.isfinite(value) or value < 0:
                dropped[sample.name] = dropped.get(sample.name, 0) + 1
                dropped_series.add((role, *key))
                continue
            if key in series[role]:
                raise SpecvizError("prom.duplicate_series", series=_describe(sample.name, sample.labels))
            series[role][key] = value
    check_labels(dict(labels) for role in series.values() for _, labels in role)
    notices = [Notice("prom.notice.dropped_value", metric=name, count=count) for name, count in dropped.items()]
    return Snapshot(series=series, time=time, notices=notices, dropped=frozenset(dropped_series))


def _check_size(lines: list[str]) -> None:
    """Refuse a scrape whose recognised lines are too many, too long or carry too many labels
    (``SPECVIZ_METRICS_MAX_SERIES``, ``..._MAX_LINE_CHARS``, ``..._MAX_LABELS``): one series of 160,000
    labels (1.8 MB) cost prometheus_client 36 s of CPU. A label is counted by its ``="``."""
    samples = [line for line in lines if not line.lstrip().startswith("#")]
    most = settings.get("SPECVIZ_METRICS_MAX_SERIES")
    if len(samples) > most:
        raise SpecvizError("prom.too_many_series", count=len(samples), limit=most)
    longest, most_chars = max(map(len, samples), default=0), settings.get("SPECVIZ_METRICS_MAX_LINE_CHARS")
    if longest > most_chars:
        raise SpecvizError("prom.line_too_long", length=longest, limit=most_chars)
    labels, most_labels = max((line.count('="') for line in samples), default=0), settings.get("SPECVIZ_METRICS_MAX_LABELS")
    if labels > most_labels:
        raise SpecvizError("prom.too_many_labels", count=labels, limit=most_labels)


def check_labels(label_sets: Iterable[Mapping[str, str]]) -> None:
    """Refuse a scrape or an answer of more models than ``SPECVIZ_METRICS_MAX_MODELS`` (each one is
    kept, charted and stored on every poll: 20,000 models added 6 MB to the store per poll), or
    with a label value longer than ``SPECVIZ_STORED_TEXT_CHARS`` (a model's name and a replica's
    label are stored with every snapshot and window, and a saved run's model name is one: the line
    limit alone let a name of 16,000 characters in)."""
    label_sets = list(label_sets)
    # A series of no model (process_start_time_seconds) is none: 100 models had been counted as 101.
    count = len({labels["model_name"] for labels in label_sets if labels.get("model_name")})
    most = settings.get("SPECVIZ_METRICS_MAX_MODELS")
    if count > most:
        raise SpecvizError("prom.too_many_models", count=count, limit=most)
    most_chars = settings.get("SPECVIZ_STORED_TEXT_CHARS")
    longest = max(((len(value), name) for labels in label_sets for name, value in labels.items()), default=(0, ""))
    if longest[0] > most_chars:
        raise SpecvizError("prom.label_too_long", label=repr(longest[1][:60]), length=longest[0], limit=most_chars)


def _describe(name: str, labels: dict[str, str]) -> str:
    return name + "{" + ",".join(f'{k}="{v}"' for k, v in sorted(labels.items())) + "}"
