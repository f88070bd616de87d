"""The live tables: a recorder's scrapes in ``snapshots`` and, per model, the window since the
source's previous scrape in ``windows`` (:meth:`LiveTables.record_scrape`, one transaction); a time
range of windows saved as runs of format ``live`` (:meth:`LiveTables.save_live_run`) so that the
explorer sets them beside benchmark runs."""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import Any

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa

from specviz import settings
from specviz.errors import Notice, SpecvizError
from specviz.live import exposition
from specviz.live.processes import OtherServer
from specviz.live.states import SpecDecodeState, accepted_past_gamma, spec_decode_states
from specviz.live.roles import ROLES
from specviz.model import spec
from specviz.results import importers
from specviz.results.schema import LIVE_FORMAT, SNAPSHOT_COLUMNS, WINDOW_COLUMNS

from .connection import StoreError
from .imports import ImportResult, RunsAndImports, delete_import

__all__ = ["LiveTables", "RecordedScrape"]

# An engine as SpecDecodeState names it → the namespace of its metrics, and back (for a series that
# belongs to no spec-decode group, such as a companion of a model that does not speculate).
_PREFIX_OF_ENGINE = {"vllm-v1": "vllm", "vllm-v0": "vllm", "llama.cpp": "llamacpp", "trt-llm": "trtllm"}
_ENGINE_OF_PREFIX = {"llamacpp": "llama.cpp", "trtllm": "trt-llm"}
# runs.engine of a live run: the engine's name as benchmark files give it (pairing compares them).
_RUN_ENGINE = {"vllm-v1": "vllm", "vllm-v0": "vllm"}
_SNAPSHOT_SCHEMA = pa.schema([("time", pa.timestamp("us")), ("source", pa.string()), ("engine", pa.string()),
                              ("model", pa.string()), ("metric", pa.string()), ("labels", pa.string()),
                              ("value", pa.float64())])
_WINDOW_SCHEMA = pa.schema([(name, {"TIMESTAMP": pa.timestamp("us"), "VARCHAR": pa.string(), "DOUBLE": pa.float64(),
                                    "DOUBLE[]": pa.list_(pa.float64()), "BOOLEAN": pa.bool_()}[kind])
                            for name, kind in WINDOW_COLUMNS.items()])
assert _SNAPSHOT_SCHEMA.names == list(SNAPSHOT_COLUMNS)


def _keep_latest_snapshots(cur: duckdb.DuckDBPyConnection, source: str, most: int) -> None:
    """Delete ``source``'s oldest scrapes whole until at most ``most`` of its ``snapshots`` rows remain,
    its latest scrape always kept (the next window is taken against it). A loopback source of 100
    models and 6,300 series polled every 2 s had grown the file by 60 MB in three minutes, with no
    end; its windows, a row per model, stay."""
    ((rows,),) = cur.execute("SELECT count(*) FROM snapshots WHERE source = ?", [source]).fetchall()
    if rows <= most:
        return
    cur.execute("""
        DELETE FROM snapshots WHERE source = ? AND time < (
            SELECT coalesce(min(time) FILTER (WHERE kept <= ?), max(time)) FROM (
                SELECT time, sum(n) OVER (ORDER BY time DESC) AS kept
                FROM (SELECT time, count(*) AS n FROM snapshots WHERE source = ? GROUP BY time)))""",
                [source, most, source]).fetchall()  # read whole: DuckDB takes no register() beside an unread result


def _utc(moment: datetime | float) -> datetime:
    """A time as the store keeps it: naive UTC to the microsecond. Seconds since the epoch, an aware
    datetime, or a naive one (taken to be UTC already)."""
    if not isinstance(moment, datetime):
        moment = datetime.fromtimestamp(moment, timezone.utc)
    if moment.tzinfo is not None:
        moment = moment.astimezone(timezone.utc).replace(tzinfo=None)
    return moment


def _epoch(moment: datetime) -> float:
    return moment.replace(tzinfo=timezone.utc).timestamp()


@dataclass(frozen=True)
class RecordedScrape:
    """What :meth:`Store.record_scrape` stored.

    Attributes
    ----------
    time : datetime
        The scrape's time (naive UTC), as stored.
    series : int
        Rows added to ``snapshots``.
    window : bool
        Whether ``states`` are windows against the source's previous scrape (and were stored in
        ``windows``); False for a source's first scrape, whose ``states`` are totals since the
        server started (nothing goes into ``windows``).
    states : list of specviz.live.states.SpecDecodeState
        One per model (none where the scrape came too soon).
    too_soon_s : float or None
        Seconds since the source's previous stored scrape, where this one came sooner than
        ``SPECVIZ_LIVE_MIN_WINDOW_S`` after it and nothing was stored; None otherwise.
    anew : Notice or None
        Why the scrape is no window against the source's previous one though there was one
        (:class:`specviz.live.processes.OtherServer`'s message): it was stored as the source's new start,
        with its totals since the server started, as a first scrape is; None otherwise.
    """

    time: datetime
    series: int
    window: bool
    states: list[SpecDecodeState]
    too_soon_s: float | None = None
    anew: Notice | None = None


def _snapshot_table(source: str, moment: datetime, snapshot: exposition.Snapshot,
                    states: list[SpecDecodeState]) -> pa.Table:
    """The rows of ``snapshots`` for one scrape: every recognised series, with its engine (as the
    model's state names it) and model."""
    engines = {(_PREFIX_OF_ENGINE.get(s.engine, s.engine), s.model_name): s.engine for s in states}
    columns: dict[str, list] = {name: [] for name in _SNAPSHOT_SCHEMA.names}
    for role, series in snapshot.series.items():
        for (prefix, labels), value in series.items():
            named = dict(labels)
            model = named.get("model_name", "")
            columns["engine"].append(engines.get((prefix, model), _ENGINE_OF_PREFIX.get(prefix, prefix)))
            columns["model"].append(model)
            columns["metric"].append(role)
            columns["labels"].append(json.dumps(named, sort_keys=True, ensure_ascii=False))
            columns["value"].append(value)
    rows = len(columns["value"])
    columns.update(time=[moment] * rows, source=[source] * rows)
    return pa.table(columns, schema=_SNAPSHOT_SCHEMA)


def _window_table(source: str, start: datetime, end: datetime, states: list[SpecDecodeState]) -> pa.Table:
    """The rows of ``windows``: one per model's window state."""
    ms = lambda seconds: None if seconds is None else seconds * 1000.0
    rows = [{"time_start": start, "time_end": end, "source": source, "engine": s.engine, "model": s.model_name,
             **{name: getattr(s, name) for name in WINDOW_COLUMNS if hasattr(s, name) and name not in
                ("source", "engine")},
             "itl_p50_ms": ms(s.itl_p50), "itl_p99_ms": ms(s.itl_p99)} for s in states]
    return pa.Table.from_pylist(rows, schema=_WINDOW_SCHEMA)


def _stored_snapshot(cur: duckdb.DuckDBPyConnection, source: str, at: datetime | None = None
                     ) -> exposition.Snapshot | None:
    """The stored scrape of ``source`` at ``at`` (its latest where None) as a
    :class:`specviz.live.exposition.Snapshot`, or None where none is kept."""
    rows = cur.execute("SELECT time, engine, metric, CAST(labels AS VARCHAR), value FROM snapshots "
                       "WHERE source = ? AND time = coalesce(?, (SELECT max(time) FROM snapshots WHERE source = ?))",
                       [source, at, source]).fetchall()
    if not rows:
        return None
    series: dict[str, dict] = {role: {} for role in ROLES}
    for _, engine, metric, labels, value in rows:
        if metric in series:  # a role only a newer specviz reads is left out
            prefix = _PREFIX_OF_ENGINE.get(engine, engine)
            series[metric][prefix, tuple(sorted(json.loads(labels).items()))] = value
    return exposition.Snapshot(series=series, time=_epoch(rows[0][0]))


def _weighted(values: pd.Series, weights: pd.Series) -> float | None:
    """Σ value·weight / Σ weight over the rows where both are known and the weights sum above 0."""
    known = values.notna() & weights.notna()
    total = float(weights[known].sum())
    return float((values[known] * weights[known]).sum() / total) if total > 0 else None


def _reading_mean(readings: pd.Series) -> float | None:
    """The mean of a gauge's known readings, None where none is known."""
    return float(readings.mean()) if readings.notna().any() else None


def _live_run(frame: pd.DataFrame) -> tuple[dict[str, Any], dict[str, Any]]:
    """The canonical columns and the ``extra`` of one model's windows as one run.

    Counts are summed (acceptance from the sums, not a mean of ratios); per-position acceptance is
    weighted by each window's drafts, which gives the summed per-position counts over the summed
    drafts; throughput, a rate over each window, is weighted by each window's length (the tokens
    over the time). Running and waiting requests and the draft overhead are gauges read once, at a
    window's end: their mean is the mean of the readings, for weighted by the window's length the one
    reading at the end of a long window (a gap in polling) had stood for all of it (a saved run's
    concurrency 2.99 where the server ran 6.6). The engines' own acceptance gauges (SGLang reports
    acceptance only so) are averaged over time where no counts exist, and ``extra`` says so;
    TensorRT-LLM's draft overhead, where it has one, is in ``extra.mean_draft_overhead``.

    A window in which the server was idle (nothing running at its end and no token generated in it)
    is left out of the run's concurrency, throughput, duration and waiting requests, and counted in
    ``extra.idle_windows``: a benchmark's figures are those of its load, and three windows of which
    one ran 12 requests at 999 tokens/s had been saved as concurrency 4.0 and 370 tokens/s (an
    analyst's pass). Its counts are none, so the acceptance is the same either way."""
    seconds_of = lambda windows: (windows.time_end - windows.time_start).dt.total_seconds()
    idle = (frame.generation_throughput.fillna(1.0) == 0) & (frame.running_requests.fillna(1.0) == 0)
    busy = frame[~idle] if not idle.all() else frame
    seconds = seconds_of(frame)
    drafts, draft_tokens, accepted = (float(frame[c].sum()) if frame[c].notna().any() else None
                                      for c in ("drafts", "draft_tokens", "accepted_tokens"))
    extra: dict[str, Any] = {"windows": len(frame), "counter_resets": int(frame.counter_reset.fillna(False).sum()),
                             "engine_detail": frame.engine.iloc[0], "drafts": drafts, "draft_tokens": draft_tokens,
                             "accepted_tokens": accepted}
    rate = accepted / draft_tokens if accepted is not None and draft_tokens else None
    length = 1.0 + accepted / drafts if accepted is not None and drafts else None
    gamma = draft_tokens / drafts if draft_tokens is not None and drafts else None
    if drafts is None:  # no counts: the engine's gauges, averaged over time
        rate, length = _weighted(frame.acceptance_rate, seconds), _weighted(frame.acceptance_length, seconds)
        extra["acceptance_from"] = "engine gauges averaged over time"
    per_position = zero = None
    with_drafts = frame[frame.drafts.fillna(0) > 0]
    lists = with_drafts.per_position_acceptance
    if len(with_drafts) and lists.notna().all() and len({len(v) for v in lists}) == 1:
        counts = np.sum([np.asarray(v) * d for v, d in zip(lists, with_drafts.drafts)], axis=0)
        per_position = (counts / with_drafts.drafts.sum()).tolist()
        zero = 1.0 - per_position[0]
    whole = gamma is not None and abs(gamma - round(gamma)) < 1e-9
    # Drafts of several lengths, as the Live page tells them: α of one γ is then a figure of no draft.
    if whole and per_position is not None and accepted_past_gamma(gamma, per_position):
        whole = False
        extra["mixed_lengths"] = True
    if whole and length is not None and 1 <= length <= gamma + 1:
        extra["alpha_iid"] = float(spec.alpha_from_acceptance_length(length, round(gamma)))
    if gamma is not None and not whole:
        extra["num_speculative_tokens_mean"] = gamma
    if idle.any() and not idle.all():
        extra["idle_windows"] = int(idle.sum())
    extra["mean_waiting_requests"] = _reading_mean(busy.waiting_requests)
    extra["max_kv_cache_usage"] = None if frame.kv_cache_usage.isna().all() else float(frame.kv_cache_usage.max())
    if frame.draft_overhead.notna().any():  # TensorRT-LLM's gauge: one iteration's value a window
        extra["mean_draft_overhead"] = _reading_mean(frame.draft_overhead)
    run = {"engine": _RUN_ENGINE.get(frame.engine.iloc[0], frame.engine.iloc[0]),
           "target_model": frame.model.iloc[0] or None, "workload": "live",
           "num_speculative_tokens": round(gamma) if whole else None,
           "concurrency": _reading_mean(busy.running_requests),
           "output_throughput": _weighted(busy.generation_throughput, seconds_of(busy)),
           "duration_s": float(seconds_of(busy)[~busy.counter_reset.fillna(False).astype(bool)].sum()),
           "acceptance_rate": rate, "acceptance_length": length,
           "per_position_acceptance": per_position, "zero_accept_rate": zero}
    return run, extra


class LiveTables(RunsAndImports):
    """The live tables of a store (see :class:`specviz.results.store.Store`)."""

    def record_scrape(self, source: str, snapshot: exposition.Snapshot) -> RecordedScrape:
        """Store one scrape of ``source``: its recognised series in ``snapshots`` and, per model, the
        window since the source's previous stored scrape in ``windows`` (none for its first), in one
        transaction; nothing where it came less than ``SPECVIZ_LIVE_MIN_WINDOW_S`` after that scrape.

        Parameters
        ----------
        source : str
            The URL or file the scrape came from, as the recorder was given it: a source's scrapes
            are compared with each other only.
        snapshot : specviz.live.exposition.Snapshot
            The parsed scrape; its ``time`` (seconds since the epoch) is when it was taken (now, if
            it has none).

        Returns
        -------
        RecordedScrape
            The states stored as windows, or, for a first scrape or one of another server than the
            previous (``anew``), the totals since start.

        Raises
        ------
        SpecvizError
            ``prom.no_spec_decode`` if the scrape holds no speculative-decoding series, or
            ``prom.no_spec_decode_values`` if each of their values was left out (nothing is written);
            ``store.read_only`` and the store's other errors.
        """
        moment = _utc(time.time() if snapshot.time is None else snapshot.time)
        snapshot = replace(snapshot, time=_epoch(moment))  # as stored: to the microsecond
        totals = spec_decode_states(snapshot)  # refused before the file is taken
        with self._transaction() as cur:
            previous = _stored_snapshot(cur, source)
            # Two recorders of one source (the page and specviz record) interleave: a window of a
            # fraction of a second is mostly the error of when each scrape was timed.
            if previous is not None and (age := snapshot.time - previous.time) < settings.get("SPECVIZ_LIVE_MIN_WINDOW_S"):
                return RecordedScrape(moment, 0, False, [], too_soon_s=age)
            anew = None
            try:
                states = totals if previous is None else spec_decode_states(snapshot, previous)
            except OtherServer as exc:
                # Kept as the source's new start (a rolling update's new pod answering now): compared
                # with the old start for good, every later scrape of it had been refused.
                states, previous, anew = totals, None, Notice(exc.key, **exc.params)
            rows = _snapshot_table(source, moment, snapshot, states)
            cur.register("incoming_snapshot", rows)
            cur.execute("INSERT INTO snapshots BY NAME SELECT * REPLACE (CAST(labels AS JSON) AS labels) "
                        "FROM incoming_snapshot")
            cur.unregister("incoming_snapshot")
            _keep_latest_snapshots(cur, source, settings.get("SPECVIZ_LIVE_KEEP_SNAPSHOT_ROWS"))
            if previous is not None:
                cur.register("incoming_windows", _window_table(source, _utc(previous.time), moment, states))
                cur.execute("INSERT INTO windows BY NAME SELECT * FROM incoming_windows")
                cur.unregister("incoming_windows")
        return RecordedScrape(moment, rows.num_rows, previous is not None, states, anew=anew)

    def _live_read(self, table: str, order: str, time_column: str, source: str | None,
                   since: datetime | float | None, until: datetime | float | None = None) -> pd.DataFrame:
        where, params = [], []
        if source is not None:
            where.append("source = ?")
            params.append(source)
        if since is not None:
            where.append(f"{time_column} >= ?")
            params.append(_utc(since))
        if until is not None:
            where.append(f"{time_column} <= ?")
            params.append(_utc(until))
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        with self._connection() as con:
            return con.execute(f"SELECT * FROM {table}{clause} ORDER BY {order}", params).df()

    def snapshots(self, source: str | None = None, since: datetime | float | None = None) -> pd.DataFrame:
        """Rows of ``snapshots`` (every source, or one), taken at ``since`` or later (a datetime,
        naive meaning UTC, or seconds since the epoch), oldest first."""
        return self._live_read("snapshots", "time, source, metric, model, CAST(labels AS VARCHAR)", "time",
                               source, since)

    def windows(self, source: str | None = None, since: datetime | float | None = None,
                until: datetime | float | None = None) -> pd.DataFrame:
        """Rows of ``windows`` (every source, or one) that end at ``since`` or later and at
        ``until`` or earlier, oldest first."""
        return self._live_read("windows", "time_end, source, engine, model", "time_end", source, since, until)

    def live_sources(self) -> pd.DataFrame:
        """One row per recorded source: ``source``, ``first`` and ``last`` scrape, ``scrapes``."""
        with self._connection() as con:
            return con.execute("SELECT source, min(time) AS first, max(time) AS last, count(DISTINCT time) AS scrapes "
                               "FROM snapshots GROUP BY source ORDER BY last DESC").df()

    def _range_itl(self, source: str, windows: pd.DataFrame, engine: str, model: str,
                   extra: dict[str, Any]) -> dict[str, float]:
        """The inter-token latency's p50 and p99 (ms) over one model's saved windows, from the
        histogram's increase between the scrapes at their two ends (quantiles of the windows'
        quantiles would be none of the whole range's); none, and ``extra.itl_not_saved`` saying why,
        where a counter reset lies between them, the windows do not follow on, or either scrape is
        no longer kept (``SPECVIZ_LIVE_KEEP_SNAPSHOT_ROWS``)."""
        if windows.counter_reset.fillna(False).astype(bool).any():
            extra["itl_not_saved"] = "a counter reset in the range"
            return {}
        ordered = windows.sort_values("time_start")
        if (ordered.time_start.iloc[1:].to_numpy() != ordered.time_end.iloc[:-1].to_numpy()).any():
            # Windows that do not follow on (the model gone from the source between them, then back):
            # the two ends' difference would span what it did not serve.
            extra["itl_not_saved"] = "the windows do not follow on"
            return {}
        with self._connection() as con:
            first, last = (_stored_snapshot(con, source, at) for at in (windows.time_start.min(), windows.time_end.max()))
        if first is None or last is None:
            extra["itl_not_saved"] = "the scrapes at the range's ends are no longer kept"
            return {}
        try:
            states = spec_decode_states(last, first)
        except SpecvizError:  # no speculative-decoding series between the two: none to take the ITL of
            return {}
        state = next((s for s in states if (s.engine, s.model_name) == (engine, model)), None)
        if state is None or state.itl_p50 is None or state.counter_reset:
            return {}
        return {"p50_itl_ms": state.itl_p50 * 1e3, "p99_itl_ms": state.itl_p99 * 1e3}

    def save_live_run(self, source: str, start: datetime | float, end: datetime | float,
                      model: str | None = None, label: str | None = None) -> ImportResult:
        """Save the windows of ``source`` that lie wholly between ``start`` and ``end`` as runs of
        format ``live`` (one per engine and model, or only ``model``'s), so the explorer sets them
        beside benchmark runs; one transaction, with an ``imports`` row (``source_file`` is the
        source) that :meth:`remove_import` removes as any file's.

        Each run: acceptance rate, acceptance length and γ from the summed counts, per-position and
        zero-accept shares weighted by drafts, ``output_throughput`` the generated tokens per
        second and ``concurrency`` the mean running requests (both over time), ``duration_s`` the
        windows' time (a window across a restart left out: it spans the server's time down),
        ``workload`` "live", ``engine`` as benchmark files name it (vLLM V1 and V0:
        "vllm", the detail in ``extra.engine_detail``); ``extra`` also holds the source, the
        range, the window and counter-reset counts, α (i.i.d.), mean waiting requests and the
        highest KV-cache usage. The inter-token latency's p50 and p99 are over the whole range
        (:meth:`_range_itl`).

        Returns
        -------
        ImportResult
            ``status="skipped"`` if this range of this source (and model) was saved before;
            ``"replaced"`` where it replaced earlier saves of this source (and model) whose windows
            all lie in this range, in the same transaction.

        Raises
        ------
        StoreError
            ``store.live_no_windows`` if no window lies in the range; ``store.read_only``.
        """
        self._require_writable()
        start, end = _utc(start), _utc(end)
        frame = self.windows(source, since=start, until=end)
        frame = frame[frame.time_start >= start]
        if model is not None:
            frame = frame[frame.model == model]
        if frame.empty:
            raise StoreError("store.live_no_windows", source=source, start=start.isoformat(sep=" "),
                             end=end.isoformat(sep=" "),
                             model=model if model is not None else Notice("store.any_model"))
        content_hash = hashlib.sha256("\0".join([LIVE_FORMAT, source, start.isoformat(), end.isoformat(),
                                                 model if model is not None else "\0"]).encode()).hexdigest()
        if self._stored_as(content_hash) is not None:
            return ImportResult(source, "skipped", LIVE_FORMAT)
        now = datetime.now(timezone.utc).replace(tzinfo=None)
        runs = []
        for (engine, name), group in frame.groupby(["engine", "model"], sort=True):
            run, extra = _live_run(group)
            run.update(self._range_itl(source, group, engine, name, extra))
            extra = {"source": source, "time_start": group.time_start.min().isoformat(),
                     "time_end": group.time_end.max().isoformat(), **extra}
            runs.append({**run, "label": label, "extra": json.dumps(extra, allow_nan=False)})
        parsed = importers.Parsed(format=LIVE_FORMAT, runs=runs, requests=pd.DataFrame(), warnings=[])
        try:
            with self._transaction() as cur:
                # A save of this source whose windows this one holds again (a second click as the
                # windows grow) is replaced, not kept beside it as a second, overlapping run.
                earlier = [h for (h,) in cur.execute(
                    "SELECT content_hash FROM runs WHERE source_format = ? AND source_file = ? GROUP BY content_hash "
                    "HAVING min(CAST(json_extract_string(extra, '$.time_start') AS TIMESTAMP)) >= ? "
                    "AND max(CAST(json_extract_string(extra, '$.time_end') AS TIMESTAMP)) <= ? "
                    "AND bool_and(? IS NULL OR target_model = ?)",
                    [LIVE_FORMAT, source, start, end, model, model]).fetchall()]
                for stale in earlier:
                    delete_import(cur, stale)
                count, _, warnings = self._insert_parsed(cur, source, parsed, content_hash, now)
                cur.execute("INSERT INTO imports (content_hash, source_file, source_format, imported_at, runs, "
                            "requests, warnings, origin) VALUES (?, ?, ?, ?, ?, 0, '[]', 'user')",
                            [content_hash, source, LIVE_FORMAT, now, count])
        except (duckdb.ConstraintException, duckdb.TransactionException):
            return self._await_concurrent_import(source, LIVE_FORMAT, content_hash)
        return ImportResult(source, "replaced" if earlier else "imported", LIVE_FORMAT, count, 0, warnings)
