"""Which process answered two scrapes of one address: the same one, one that restarted between them,
or another server, of which no window between the two exists.

A window between two scrapes counts from zero where a counter went down, as Prometheus's
``increase()`` does, and so where ``process_start_time_seconds`` changed between them: a server that
restarts and serves enough before the next scrape has counters above their old values, which a drop alone
misses (the window would be the new count less the old, without a word). prometheus_client's
process collector reads the kernel's boot time once and the process's start from
``/proc/self/stat``, so the value is fixed for a process's life: any change is a new process. A
start time covers the counter series that carry all of its labels: the usual unlabelled one (vLLM's
API server, whose stat loggers hold the counters of every data-parallel engine) covers every series
of the scrape; one per ``instance`` of an aggregated scrape covers that instance's. A start-time
series in one scrape only (another process, such as a new ``pid``) says nothing; prometheus_client's
multiprocess mode (vLLM with several API servers) exports no start time and keeps a dead process's
counts, so there the counters' drops are the only sign.

A changed start time before the previous scrape (beyond :data:`CLOCK_SKEW_S`) is no restart: that
process was running when the previous scrape was answered by another, and its counters hold what
it served before the window began. The address is answered by more than one process (a load
balancer over replicas, a redirect, a ``--since`` scrape of another server), and no window between
the two scrapes exists: :func:`refuse_other_server` refuses it (``prom.other_process``). So it does
where the two scrapes hold speculative-decoding series of no model in common and no start time
changed (``prom.other_models``: a ``--since`` scrape of a server of another model, whose counters
would otherwise count from zero as series created since). A scrape before with none (llama.cpp
creates them at its first speculative request) is no other server.

:func:`specviz.live.states.spec_decode_states` counts a restarted process's series from zero
(:func:`restarted_processes`) and refuses two servers (:func:`refuse_other_server`); a recorder keeps
the later scrape of another server as the source's new start (:class:`OtherServer`).
"""

from __future__ import annotations

import time

from specviz.errors import SpecvizError

from .exposition import Snapshot
from .roles import SPEC_ROLES

__all__ = ["OtherServer", "CLOCK_SKEW_S", "restarted_processes", "refuse_other_server", "utc_clock"]


class OtherServer(SpecvizError):
    """Two scrapes of one source that are not of one server's counters (``prom.other_process``,
    ``prom.other_models``): no window between them exists. A recorder keeps the later one as the
    source's new start, so that the next scrape of the same server gives a window again (a rolling
    update's new pod, started before the old one's last scrape, had kept every later scrape refused)."""


CLOCK_SKEW_S = 5.0
"""How far a server's clock (its processes' start times) may trail the scraper's (the snapshots'
times) before a new start time before the previous scrape is read as another process's, not a
restart's."""


def _changed_starts(current: Snapshot, previous: Snapshot) -> list[tuple[tuple[tuple[str, str], ...], float]]:
    """The labels and new value of each ``process_start_time_seconds`` series that both scrapes hold
    with another value."""
    before = previous.series.get("process_start", {})
    return [(labels, started) for (prefix, labels), started in current.series.get("process_start", {}).items()
            if before.get((prefix, labels), started) != started]


def restarted_processes(current: Snapshot, previous: Snapshot) -> list[dict[str, str]]:
    """The labels of each ``process_start_time_seconds`` series that both scrapes hold with another
    value: a process that started anew between them (the module's docstring says why any change)."""
    return [dict(labels) for labels, _ in _changed_starts(current, previous)]


def refuse_other_server(current: Snapshot, previous: Snapshot) -> None:
    """Raise :class:`OtherServer`: ``prom.other_process`` where a process start time that changed between the scrapes lies
    before the previous scrape, by more than :data:`CLOCK_SKEW_S`, and ``prom.other_models`` where
    both scrapes hold speculative-decoding series but of no model in common, and no process restarted
    between them (the module's docstring says why)."""
    changed = _changed_starts(current, previous)
    if previous.time is not None:
        for _, started in changed:
            if started < previous.time - CLOCK_SKEW_S:
                raise OtherServer("prom.other_process", started=utc_clock(started), previous=utc_clock(previous.time))
    before, now = _spec_models(previous), _spec_models(current)
    if before and now and not before & now and not changed:
        raise OtherServer("prom.other_models", models=", ".join(sorted(now)), previous=", ".join(sorted(before)))


def _spec_models(snapshot: Snapshot) -> set[str]:
    """The model names (``""`` where a series has none) of a scrape's speculative-decoding series."""
    return {dict(labels).get("model_name", "") for role in SPEC_ROLES for _, labels in snapshot.series.get(role, {})}


def utc_clock(seconds: float) -> str:
    """A moment (seconds since the epoch) as the notices give one: its time of day in UTC to the
    second, "21:27:56 UTC"."""
    return time.strftime("%H:%M:%S UTC", time.gmtime(seconds))
