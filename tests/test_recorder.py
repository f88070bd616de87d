"""Tests for specviz.results.recorder: polling the real replay exporter on 127.0.0.1 into a real store, the
source going away and coming back restarted (counters from zero), failures as statuses, the stop
flag and the background recorder."""

from __future__ import annotations

import re
import socket
import threading
import time

import numpy as np
import pytest

from conftest import sample_text
from specviz import settings
from specviz.live import exposition as prom, replay, scrape
from specviz.results import recorder
from specviz.results.store import Store, StoreError

REPLAY_RECORDING = settings.get("SPECVIZ_DATA_DIR") / "replay" / "vllm_specdecode.prom"
# The spec-decode counters of the recording (their sample lines end in _total).
COUNTER = re.compile(r"^(vllm:spec_decode_\w+_total\{[^}]*\}) \S+$", re.MULTILINE)
NUMBERS = ["drafts", "draft_tokens", "accepted_tokens", "acceptance_rate", "acceptance_length",
           "num_speculative_tokens", "alpha_iid", "zero_accept_rate", "running_requests", "waiting_requests",
           "generation_throughput", "kv_cache_usage"]


@pytest.fixture
def db(tmp_path):
    s = Store(tmp_path / "live.duckdb")
    yield s
    s.close()


def free_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as s:
        return s.getsockname()[1]


def zeroed_data_dir(tmp_path, monkeypatch):
    """A data folder whose replay recording has every spec-decode counter at 0: a replay started from
    it is the server just after a restart."""
    folder = tmp_path / "restarted"
    (folder / "replay").mkdir(parents=True)
    zeroed, changed = COUNTER.subn(r"\1 0.0", REPLAY_RECORDING.read_text())
    assert changed == 6  # drafts, draft tokens, accepted tokens, three positions
    (folder / "replay" / "vllm_specdecode.prom").write_text(zeroed)
    monkeypatch.setenv("SPECVIZ_DATA_DIR", str(folder))


def assert_sane(frame):
    """No negative figure, rates within [0, 1], lengths within [1, γ + 1]."""
    values = frame[NUMBERS].astype(float)
    assert not (values < 0).any().any(), values
    known = frame.dropna(subset=["acceptance_length"])
    assert ((known.acceptance_rate >= 0) & (known.acceptance_rate <= 1)).all()
    assert ((known.acceptance_length >= 1) & (known.acceptance_length <= known.num_speculative_tokens + 1)).all()
    for lists in frame.per_position_acceptance.dropna():
        assert all(0 <= p <= 1 for p in lists) and list(lists) == sorted(lists, reverse=True)


class TestRecordAgainstTheReplay:
    def test_polls_store_snapshots_and_windows(self, db):
        polls = []
        with replay.start(speed=30) as server:
            summary = recorder.record(db, server.url, 0.2, 3, on_poll=polls.append)
        assert (summary.polls, summary.recorded, summary.failed, summary.windows) == (3, 3, 0, 2)
        assert [p.ok for p in polls] == [True] * 3 and [p.window for p in polls] == [False, True, True]
        assert polls[0].states[0].model_name.startswith(replay.MODEL_PREFIX)
        snapshots = db.snapshots(server.url)
        assert snapshots.time.nunique() == 3 and len(snapshots) == 3 * 10  # 4 counters + 2 positions more, 4 companions
        assert set(snapshots.metric) == {"drafts", "draft_tokens", "accepted_tokens", "accepted_per_pos", "running",
                                         "waiting", "kv_cache_usage", "generation_tokens"}
        windows = db.windows(server.url)
        assert len(windows) == 2 and not windows.counter_reset.any()
        assert_sane(windows)
        assert (windows.num_speculative_tokens == 3).all() and (windows.drafts > 0).all()
        # Each window is the difference of its two scrapes' counters (hand-checked through the rows).
        drafts = snapshots[snapshots.metric == "drafts"].sort_values("time").value.to_numpy()
        assert windows.drafts.tolist() == np.diff(drafts).tolist()
        assert (windows.time_start.tolist()[1:] == windows.time_end.tolist()[:-1])
        # The figures given to on_poll are those stored.
        assert [s.acceptance_length for p in polls[1:] for s in p.states] == windows.acceptance_length.tolist()

    def test_a_source_s_token_is_not_stored(self, db):
        """An attack pass: a source's ?token=… was stored with its scrapes, where the SQL console reads it.
        Its query is kept as a digest (the page keys it so too), so that two queries stay two sources."""
        with replay.start(speed=30) as server:
            summary = recorder.record(db, server.url + "?token=SECRET123", 0.2, 2)
            key = scrape.stored_source(server.url + "?token=SECRET123")
            assert key.startswith(server.url + "?sha256=") and "SECRET" not in key
            assert key != scrape.stored_source(server.url + "?token=OTHER") and scrape.stored_source(server.url) == server.url
        assert summary.recorded == 2 and len(db.snapshots(key)) == 2 * 10 and len(db.windows(key)) == 1
        stored = db.query("SELECT DISTINCT source FROM snapshots UNION SELECT DISTINCT source FROM windows").frame
        assert stored.source.tolist() == [key]

    def test_the_source_goes_away_and_comes_back_restarted(self, db, tmp_path, monkeypatch):
        port = free_port()
        servers = [replay.start(port, speed=30)]
        url = servers[0].url
        polls: list[recorder.Poll] = []

        def on_poll(poll):
            polls.append(poll)
            if poll.number == 2:
                servers[0].stop()  # the server goes away
            elif poll.number == 3:
                zeroed_data_dir(tmp_path, monkeypatch)
                servers.append(replay.start(port, speed=30))  # and comes back, restarted: counters from zero

        try:
            summary = recorder.record(db, url, 0.2, 5, on_poll=on_poll)
        finally:
            for server in servers:
                server.stop()
        assert [p.ok for p in polls] == [True, True, False, True, True]
        assert polls[2].failure.key == "scrape.refused" and "connection was refused" in str(polls[2].failure)
        assert [p.after_failure for p in polls] == [False, False, False, True, False]
        assert [p.counter_reset for p in polls] == [False, False, False, True, False]
        assert (summary.recorded, summary.failed, summary.windows, summary.last_failure) == (4, 1, 3, polls[2].failure)

        windows = db.windows(url)
        assert windows.counter_reset.tolist() == [False, True, False]
        assert_sane(windows)
        # The failed poll stored nothing; the window after it spans the outage and counts from zero:
        # its drafts are the restarted server's whole count, not a difference with the old one.
        snapshots = db.snapshots(url)
        times = sorted(snapshots.time.unique())
        assert len(times) == 4
        drafts = snapshots[snapshots.metric == "drafts"].set_index("time").value
        restarted = windows.iloc[1]
        assert restarted.time_start == times[1] and restarted.time_end == times[2]
        assert restarted.drafts == drafts[times[2]] < drafts[times[1]]
        assert windows.iloc[2].drafts == drafts[times[3]] - drafts[times[2]]
        # The restarted replay accepts almost nothing (its recording's counters were zero), yet no
        # figure goes below its floor.
        assert 1 <= restarted.acceptance_length < windows.iloc[0].acceptance_length

    def test_the_background_recorder_stops_on_request(self, db):
        with replay.start(speed=30) as server:
            with recorder.Recorder(db, server.url, 0.1) as running:
                deadline = time.monotonic() + 30
                while len(running.polls) < 3 and time.monotonic() < deadline:
                    time.sleep(0.05)
                assert running.running
            assert not running.running and running.error is None
        assert running.summary.polls >= 3 and running.summary.failed == 0
        assert len(db.windows(server.url)) == running.summary.windows == running.summary.polls - 1

    def test_a_stop_flag_ends_the_wait_at_once(self, db):
        stop = threading.Event()
        with replay.start() as server:
            started = time.monotonic()
            summary = recorder.record(db, server.url, 60, on_poll=lambda poll: stop.set(), stop=stop)
        assert summary.polls == 1 and time.monotonic() - started < 30


class TestFailures:
    def test_a_file_polled_twice_gives_a_window_of_nothing(self, db, tmp_path):
        path = tmp_path / "metrics.prom"
        path.write_text(REPLAY_RECORDING.read_text())
        polls = []
        recorder.record(db, str(path), 0.01, 2, on_poll=polls.append)
        assert [p.ok for p in polls] == [True, True]
        window = db.windows(str(path)).iloc[0]
        assert window.drafts == 0 and np.isnan(window.acceptance_length) and not window.counter_reset
        assert str(polls[1].states[0].absent["acceptance_length"]) == "No drafts were counted over this period: nothing to divide by."

    def test_another_server_s_scrape_becomes_the_new_start(self, db, tmp_path):
        """An SRE's pass: a rolling update's new pod, started before the old one's last scrape, answered
        from then on, and every later poll was refused against the old pod's stored scrape ("Another
        process answered…", recorded 0, failed 3) for good. Its first scrape is now stored as the
        source's new start (totals since it started, the reason said) and the next gives a window."""
        first = sample_text("2026/vllm_0.25.1/metrics_vllm_0_25_1_speculative.txt")
        assert "process_start_time_seconds 1.78749598534e+09" in first
        newer = first.replace("process_start_time_seconds 1.78749598534e+09", "process_start_time_seconds 1.78749597e+09")
        path, scraped = tmp_path / "metrics.prom", 1787496000.0
        polls = []
        for text, at in ((first, scraped), (first, scraped + 10), (newer, scraped + 20), (newer, scraped + 30)):
            path.write_text(text)
            polls.append(recorder.poll_once(db, str(path), clock=lambda: at))
        assert [p.ok for p in polls] == [True] * 4 and [p.window for p in polls] == [False, True, False, True]
        assert polls[2].anew.key == "prom.other_process" and polls[2].states[0].drafts == 48  # its totals
        assert [p.anew for p in (polls[0], polls[1], polls[3])] == [None] * 3
        assert len(db.windows(str(path))) == 2 and db.snapshots(str(path)).time.nunique() == 4
        summary = recorder.RecordSummary()
        for poll in polls:
            summary.add(poll)
        assert (summary.recorded, summary.failed, summary.windows, summary.anew) == (4, 0, 2, 1)

    @pytest.mark.parametrize("text, key", [
        ("<html><body>login</body></html>\n", "scrape.html"),
        ("vllm:num_requests_running 3\n", "scrape.no_spec_decode"),
        ("# TYPE x counter\nvllm:spec_decode_num_drafts_total{a=\"1\"} 1\nvllm:spec_decode_num_drafts_total{a=\"1\"} 2\n",
         "prom.duplicate_series"),
    ])
    def test_what_cannot_be_read_is_a_status_and_writes_nothing(self, db, tmp_path, text, key):
        path = tmp_path / "bad.prom"
        path.write_text(text)
        poll = recorder.poll_once(db, str(path))
        assert not poll.ok and poll.failure.key == key and poll.states == []
        assert db.snapshots().empty and db.windows().empty

    def test_an_unexpected_failure_is_a_status_too(self, db, monkeypatch):
        def broken(text, time=None):
            raise RuntimeError("a parser's bug\nover two lines")
        monkeypatch.setattr(prom, "parse", broken)
        poll = recorder.poll_once(db, str(REPLAY_RECORDING))
        assert not poll.ok and poll.failure.key == "recorder.unexpected"
        assert str(poll.failure) == "unexpected RuntimeError: a parser's bug over two lines"

    def test_a_read_only_store_is_refused_before_polling(self, db, monkeypatch):
        monkeypatch.setattr(db, "read_only", True)  # as a store on a read-only mount opens (tests/test_store.py)
        polls = []
        with pytest.raises(StoreError, match="read-only"):
            recorder.record(db, str(REPLAY_RECORDING), 1, 1, on_poll=polls.append)
        assert polls == []

    @pytest.mark.parametrize("every, count", [(0, 1), (-1, 1), (float("nan"), 1), (1, 0)])
    def test_bad_intervals_and_counts(self, db, every, count):
        with pytest.raises(ValueError):
            recorder.record(db, str(REPLAY_RECORDING), every, count)
