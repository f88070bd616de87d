"""Recording a metrics source into the store: poll every N seconds, fetch → parse → store.

A poll fetches the source (:func:`specviz.live.scrape.fetch_source`: a ``/metrics`` URL or a file), parses
it (:func:`specviz.live.exposition.parse`) and stores it (:meth:`specviz.results.store.Store.record_scrape`: the
series in ``snapshots`` and, per model, the window since the source's previous scrape in
``windows``). A poll that fails (the server is down or restarting, the scrape is refused, the
store stayed locked) is a :class:`Poll` with ``ok=False`` and the message, never an exception: the
recording goes on, and the next poll that succeeds stores its window against the last scrape that
was stored. If the server restarted meanwhile, its counters went down and that window counts from
zero (``counter_reset``), as Prometheus's ``increase()`` does; never a negative rate.

:func:`record` polls in the calling thread until a count or a stop flag (the command line);
:class:`Recorder` runs it in a background thread with ``stop()`` and the latest polls (a page).
"""

from __future__ import annotations

import collections
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from specviz.errors import InputError, Notice, SpecvizError
from specviz.live import exposition, scrape
from specviz.live.states import SpecDecodeState

from .store import Store, StoreError

__all__ = ["Poll", "RecordSummary", "poll_once", "record", "Recorder"]


@dataclass(frozen=True)
class Poll:
    """One poll of a source.

    Attributes
    ----------
    number : int
        1 for the first poll of a recording.
    time : float
        When the scrape was taken (seconds since the epoch).
    ok : bool
        Whether the scrape was fetched, parsed and stored.
    window : bool
        The states are a window against the source's previous stored scrape (False for its first
        scrape: totals since the server started).
    states : list of SpecDecodeState
        Per model, what was stored (empty for a failed poll).
    failure : Notice or None
        Why it failed, as a message in any language (``scrape.*``, ``prom.*``, ``store.*``, or
        ``recorder.unexpected`` with the error's kind and text); None for a poll that succeeded.
    after_failure : bool
        The poll succeeded and the one before it failed: the source came back.
    seconds : float
        How long the poll took.
    too_soon_s : float or None
        The scrape came this many seconds after the source's last stored one, under
        ``SPECVIZ_LIVE_MIN_WINDOW_S``, and was not stored (:meth:`Store.record_scrape`).
    anew : Notice or None
        Why the scrape was stored as the source's new start, not a window (another server than the
        previous scrape's: :attr:`specviz.results.store.live.RecordedScrape.anew`); None otherwise.
    read_from : str or None
        The URL a redirect moved the scrape to (:attr:`specviz.live.scrape.Scraped.redirected`); None
        where it was read from the source itself.
    """

    number: int
    time: float
    ok: bool
    window: bool = False
    states: list[SpecDecodeState] = field(default_factory=list)
    failure: Notice | None = None
    after_failure: bool = False
    seconds: float = 0.0
    too_soon_s: float | None = None
    anew: Notice | None = None
    read_from: str | None = None

    @property
    def counter_reset(self) -> bool:
        """Some model's counters went down since the previous stored scrape (a restart)."""
        return any(state.counter_reset for state in self.states)


@dataclass
class RecordSummary:
    """A recording's counts: polls made, polls stored, polls failed, polls not stored for coming too
    soon after the source's last stored scrape, windows stored, polls stored as the source's new start
    (another server than the previous scrape's), and why the last failed poll failed."""

    polls: int = 0
    recorded: int = 0
    failed: int = 0
    too_soon: int = 0
    windows: int = 0
    anew: int = 0
    last_failure: Notice | None = None

    def add(self, poll: Poll) -> None:
        self.polls += 1
        if poll.ok and poll.too_soon_s is not None:
            self.too_soon += 1
        elif poll.ok:
            self.recorded += 1
            self.windows += len(poll.states) if poll.window else 0
            self.anew += poll.anew is not None
        else:
            self.failed += 1
            self.last_failure = poll.failure


def poll_once(store: Store, source: str, number: int = 1, *, after_failure: bool = False,
              limits: scrape.Limits | None = None, clock: Callable[[], float] = time.time) -> Poll:
    """Fetch, parse and store one scrape of ``source``; a failure is returned as a :class:`Poll`
    with ``ok=False``, not raised (KeyboardInterrupt and SystemExit go on).

    Parameters
    ----------
    store : Store
        Where the scrape goes.
    source : str
        An http(s) URL or the path of a file of exposition text.
    number : int
        The poll's number in its recording.
    after_failure : bool
        The previous poll failed (reported back in :attr:`Poll.after_failure`).
    limits : specviz.live.scrape.Limits, optional
        Bounds of the scrape; the settings' when omitted.
    clock : callable
        Seconds since the epoch (tests give their own).
    """
    started = time.monotonic()
    taken = clock()
    try:
        scraped = scrape.fetch_source(source, limits)
        taken = clock()  # the scrape's time is when its answer came
        recorded = store.record_scrape(scrape.stored_source(source), exposition.parse(scraped.text, taken))
    except SpecvizError as exc:  # scrape.*, exposition.*, store.*: each a message of its own
        return Poll(number, taken, False, failure=Notice(exc.key, **exc.params), seconds=time.monotonic() - started)
    except Exception as exc:  # a recording outlives one odd scrape; the message says what it was
        return Poll(number, taken, False, failure=Notice("recorder.unexpected", kind=type(exc).__name__,
                                                          detail=" ".join(str(exc).split())),
                    seconds=time.monotonic() - started)
    return Poll(number, taken, True, recorded.window, recorded.states, after_failure=after_failure,
                seconds=time.monotonic() - started, too_soon_s=recorded.too_soon_s, anew=recorded.anew,
                read_from=scraped.url if scraped.redirected else None)


def record(store: Store, source: str, every_s: float, count: int | None = None, *,
           stop: threading.Event | None = None, on_poll: Callable[[Poll], None] | None = None,
           limits: scrape.Limits | None = None, clock: Callable[[], float] = time.time) -> RecordSummary:
    """Poll ``source`` every ``every_s`` seconds into ``store`` until ``count`` polls are made or
    ``stop`` is set.

    Polls start on a fixed schedule (0, every_s, 2·every_s, ... after the first); a poll that
    takes longer than ``every_s`` pushes the next to the next free slot rather than bunching them.
    Setting ``stop`` ends the wait at once (a poll under way finishes first).

    Parameters
    ----------
    store : Store
        A writable store (``store.read_only`` is refused before the first poll).
    source : str
        An http(s) URL or a file of exposition text.
    every_s : float
        Seconds between polls, above 0.
    count : int, optional
        Polls to make (failed ones included); without it, until ``stop``.
    stop : threading.Event, optional
        Set it to end the recording.
    on_poll : callable, optional
        Called with each :class:`Poll` as it ends (progress lines, a page's state).
    limits, clock
        As :func:`poll_once`.

    Returns
    -------
    RecordSummary

    Raises
    ------
    ValueError
        If ``every_s`` is not above 0 or ``count`` is below 1.
    specviz.results.store.StoreError
        ``store.read_only`` if the store cannot be written.
    """
    if not every_s > 0:
        raise InputError("recorder.interval", every_s=every_s)
    if count is not None and count < 1:
        raise InputError("recorder.count", count=count)
    if store.read_only:
        raise StoreError("store.read_only", path=store.path)
    stop = stop or threading.Event()
    summary = RecordSummary()
    start = time.monotonic()
    failed_before = False
    number = 0
    while not stop.is_set() and (count is None or number < count):
        number += 1
        poll = poll_once(store, source, number, after_failure=failed_before, limits=limits, clock=clock)
        failed_before = not poll.ok
        summary.add(poll)
        if on_poll is not None:
            on_poll(poll)
        if count is not None and number >= count:
            break
        slots = int((time.monotonic() - start) / every_s) + 1  # the next slot not yet begun
        stop.wait(max(0.0, start + slots * every_s - time.monotonic()))
    return summary


class Recorder:
    """:func:`record` in a background thread.

    Parameters
    ----------
    store, source, every_s, count, limits
        As :func:`record`.
    keep : int
        How many of the latest polls :attr:`polls` keeps.

    Attributes
    ----------
    summary : RecordSummary or None
        The counts, once the recording has ended.
    error : BaseException or None
        What ended the recording if it did not end by itself (a read-only store).
    """

    def __init__(self, store: Store, source: str, every_s: float, count: int | None = None, *,
                 limits: scrape.Limits | None = None, keep: int = 100) -> None:
        self.source = source
        self.summary: RecordSummary | None = None
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._polls: collections.deque[Poll] = collections.deque(maxlen=keep)
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, args=(store, source, every_s, count, limits),
                                        name="specviz-recorder", daemon=True)

    def _run(self, store: Store, source: str, every_s: float, count: int | None,
             limits: scrape.Limits | None) -> None:
        try:
            self.summary = record(store, source, every_s, count, stop=self._stop, on_poll=self._keep, limits=limits)
        except BaseException as exc:  # kept for the caller; a thread's exception would go nowhere
            self.error = exc

    def _keep(self, poll: Poll) -> None:
        with self._lock:
            self._polls.append(poll)

    def start(self) -> Recorder:
        """Start polling; returns self."""
        self._thread.start()
        return self

    def stop(self, timeout: float | None = None) -> None:
        """Ask the recording to end and wait for it (a poll under way finishes first, within the
        scrape's own deadline)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    @property
    def polls(self) -> list[Poll]:
        """The latest polls, oldest first."""
        with self._lock:
            return list(self._polls)

    def __enter__(self) -> Recorder:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
