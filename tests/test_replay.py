"""Tests for specviz.live.replay: the simulated counters (seeded, consistent, varying) and the exporter as a
real HTTP server on 127.0.0.1, started in process and as ``python -m specviz.live.replay``."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

from conftest import SAMPLES
from specviz.live import replay, scrape

ROOT = Path(__file__).resolve().parent.parent
DRAFTS = "vllm:spec_decode_num_drafts_total"
DRAFT_TOKENS = "vllm:spec_decode_num_draft_tokens_total"
ACCEPTED = "vllm:spec_decode_num_accepted_tokens_total"
PER_POS = "vllm:spec_decode_num_accepted_tokens_per_pos_total"


def values(text: str) -> dict[str, float]:
    """Every sample of ``text``, parsed by prometheus_client, keyed by name and position."""
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[sample.name + sample.labels.get("position", "")] = sample.value
    return found


def free_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as s:
        return s.getsockname()[1]


class TestRecording:
    def test_is_the_shared_sample_with_a_provenance_line(self):
        first, rest = replay.recording().split("\n", 1)
        assert first.startswith("# Provenance: a real vLLM /metrics scrape") and "6f9fc00a" in first
        # Unchanged but for the model_name label: the run's name (a person's in it) shortened to the model's id.
        original = (SAMPLES / "vllm_metrics_specdecode_excerpt.prom").read_text()
        run_name = re.search(r'model_name="([^"]+)"', original)[1]
        assert rest == original.replace(run_name, "swiss-ai/Apertus-v1.5-70B") and "shortened" in first

    def test_follows_the_data_dir_setting(self, tmp_path, monkeypatch):
        (tmp_path / "replay").mkdir()
        (tmp_path / "replay" / "vllm_specdecode.prom").write_text("# mine\n")
        monkeypatch.setenv("SPECVIZ_DATA_DIR", str(tmp_path))
        assert replay.recording() == "# mine\n"


class TestReplay:
    def test_starts_at_the_recording_labelled_as_a_replay(self):
        text = replay.Replay(seed=0).text()
        assert text.startswith(replay.HEADER + "\n")
        recorded = values(replay.recording())
        served = values(text)
        assert all(served[name] == value for name, value in recorded.items())
        models = {s.labels["model_name"] for f in text_string_to_metric_families(text) for s in f.samples}
        assert len(models) == 1 and models.pop().startswith(replay.MODEL_PREFIX)

    def test_passes_the_scrape_checks(self):
        assert scrape.exposition_text(replay.Replay().text().encode(), "replay")

    def test_counters_grow_consistently(self):
        simulated = replay.Replay(seed=3)
        before = values(simulated.text())
        for _ in range(50):
            simulated.advance(2.0)
            after = values(simulated.text())
            assert all(after[k] >= before[k] for k in before if "_total" in k)  # counters, per position too
            drafts = after[DRAFTS] - before[DRAFTS]
            accepted = after[ACCEPTED] - before[ACCEPTED]
            per_pos = [after[PER_POS + str(i)] - before[PER_POS + str(i)] for i in range(3)]
            assert after[DRAFT_TOKENS] - before[DRAFT_TOKENS] == 3 * drafts
            assert sum(per_pos) == accepted and per_pos[0] >= per_pos[1] >= per_pos[2] and per_pos[0] <= drafts
            generated = after["vllm:generation_tokens_total"] - before["vllm:generation_tokens_total"]
            assert generated == drafts + accepted
            assert 5 <= drafts <= 600  # 2 s of 1 to 16 requests at 12 steps a second, with Poisson noise
            before = after

    def test_acceptance_and_load_vary(self):
        simulated = replay.Replay(seed=5)
        rates, running, kv = [], set(), []
        before = values(simulated.text())
        for _ in range(120):
            simulated.advance(10.0)
            after = values(simulated.text())
            rates.append((after[ACCEPTED] - before[ACCEPTED]) / (after[DRAFT_TOKENS] - before[DRAFT_TOKENS]))
            running.add(after["vllm:num_requests_running"])
            kv.append(after["vllm:kv_cache_usage_perc"])
            before = after
        assert 0.3 < min(rates) and max(rates) < 0.98 and np.std(rates) > 0.02
        recorded = 31680 / 44706
        assert abs(np.mean(rates) - recorded) < 0.1  # it wanders around the recording's rate
        assert len(running) >= 5 and running <= set(map(float, range(1, 17)))
        assert all(0 <= k <= 1 for k in kv)

    def test_is_seeded(self):
        def run(seed: int) -> str:
            simulated = replay.Replay(seed=seed)
            for _ in range(5):
                simulated.advance(1.0)
            return simulated.text()
        assert run(7) == run(7)
        assert run(7) != run(8)

    def test_no_time_no_change(self):
        simulated = replay.Replay()
        first = simulated.text()
        simulated.advance(0.0)
        simulated.advance(-3.0)
        assert simulated.text() == first

    def test_acceptance_starts_at_the_recorded_conditional_rates(self):
        assert replay.Replay().acceptance == pytest.approx([12371 / 14902, 10390 / 12371, 8919 / 10390])

    def test_refuses_a_text_without_the_counters(self):
        with pytest.raises(ValueError, match="not a single-model"):
            replay.Replay("# nothing\nfoo_total 1\n")


class TestStart:
    def test_serves_metrics_on_loopback(self):
        before = time.time()
        with replay.start() as server:
            assert before <= server.started <= time.time()
            assert server.url.startswith("http://127.0.0.1:") and server.url.endswith("/metrics")
            response = requests.get(server.url, timeout=5)
        assert response.status_code == 200
        assert response.headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
        assert response.headers["Server"].startswith("specviz-replay")
        assert response.text.startswith(replay.HEADER)

    def test_counters_advance_with_time(self):
        with replay.start(speed=50) as server:  # 50 simulated seconds a second
            first = values(scrape.fetch_url(server.url))
            time.sleep(0.2)
            second = values(scrape.fetch_url(server.url))
        assert second[DRAFTS] > first[DRAFTS] and second[ACCEPTED] > first[ACCEPTED]

    def test_the_port_asked_for(self):
        port = free_port()
        with replay.start(port) as server:
            assert server.url == f"http://127.0.0.1:{port}/metrics"

    def test_a_taken_port(self):
        with replay.start() as server:
            port = int(server.url.split(":")[2].split("/")[0])
            with pytest.raises(OSError):
                replay.start(port)

    def test_other_paths_are_not_found(self):
        with replay.start() as server:
            response = requests.get(server.url.replace("/metrics", "/"), timeout=5)
        assert response.status_code == 404 and "/metrics" in response.text

    def test_concurrent_scrapes(self):
        results: list[str] = []
        with replay.start(speed=20) as server:
            threads = [threading.Thread(target=lambda: results.append(scrape.fetch_url(server.url)))
                       for _ in range(8)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(10)
        assert len(results) == 8 and all(text.startswith(replay.HEADER) for text in results)


class TestReplayServer:
    def test_stop_frees_the_port_and_is_idempotent(self):
        server = replay.start()
        url = server.url
        server.stop()
        server.stop()
        with pytest.raises(scrape.ScrapeError) as caught:
            scrape.fetch_url(url)
        assert caught.value.key == "scrape.refused"

    def test_context_manager_stops_on_error(self):
        with pytest.raises(RuntimeError):
            with replay.start() as server:
                url = server.url
                raise RuntimeError("boom")
        with pytest.raises(requests.ConnectionError):
            requests.get(url, timeout=2)


class TestMain:
    def test_runs_standalone_until_interrupted(self):
        """Started as a script's background job is (SIGINT ignored, which a child inherits: Python then
        raises no KeyboardInterrupt), Ctrl-C still stops it; it had run on past the test's wait where the
        suite ran in the background."""
        port = free_port()
        child = subprocess.Popen([sys.executable, "-m", "specviz.live.replay", "--port", str(port), "--seed", "2"],
                                 cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 env={**os.environ, "PYTHONUNBUFFERED": "1"},
                                 preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
        try:
            line = child.stdout.readline()
            url = f"http://127.0.0.1:{port}/metrics"
            assert url in line and "replay" in line
            assert scrape.fetch_url(url).startswith(replay.HEADER)
            child.send_signal(signal.SIGINT)
            assert child.wait(timeout=60) == 0  # generous: a loaded 2-core runner is slow to exit, not wrong
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
            child.stdout.close()
            child.stderr.close()

    def test_main_puts_back_the_caller_s_interrupt_handler_and_runs_off_the_main_thread(self):
        """main() sets Python's own SIGINT handler for its run only, and only on the main thread, where
        signal.signal may be called (an attack pass: off it, main() had raised ValueError)."""
        with replay.start() as server:
            taken = server.url.split(":")[2].split("/")[0]
            before = signal.signal(signal.SIGINT, signal.SIG_IGN)
            try:
                assert replay.main(["--port", taken]) == 2
                assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN
            finally:
                signal.signal(signal.SIGINT, before)
            codes = []
            worker = threading.Thread(target=lambda: codes.append(replay.main(["--port", taken])))
            worker.start()
            worker.join(30)
            assert codes == [2]

    def test_a_taken_port_is_one_line_and_exit_2(self, capsys):
        with replay.start() as server:
            port = server.url.split(":")[2].split("/")[0]
            assert replay.main(["--port", port]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and port in err
