"""Tests for specviz.live.prometheus: a real Prometheus server (Debian's ``prometheus``, SPECVIZ_PROMETHEUS)
scraping two replay exporters on loopback every second, its figures checked against what prom.py
computes from direct scrapes of the same exporters; durations, strict JSON and failing servers.

The classes that start Prometheus are marked ``prometheus`` (``-m prometheus`` selects them); a
missing binary is an error, never a skip: ``make test`` installs it.
"""

from __future__ import annotations

import json
import math
import socket
import subprocess
import time
import urllib.parse
from contextlib import AbstractContextManager, contextmanager
from http.server import BaseHTTPRequestHandler
from typing import Any, Callable, Iterator

import pandas as pd
import pytest
import requests

from conftest import APP, ARTIFACTS, PAGES, finished_requests, serving
from specviz import cli, i18n, settings
from specviz.errors import Notice, SpecvizError
from specviz.live import exposition as prom, prometheus, prometheus_api, replay, scrape, windows
from specviz.live.states import spec_decode_states
from specviz.live.roles import ROLES
from specviz.model import spec

SCRAPE_INTERVAL_S = 1


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def refused(call, key: str) -> SpecvizError:
    with pytest.raises(SpecvizError) as info:
        call()
    assert info.value.key == key, (info.value.key, str(info.value))
    str(info.value)  # the message renders
    return info.value


@contextmanager
def prometheus_server(targets: list[str], tmp_path, workloads: list[str] | None = None) -> Iterator[str]:
    """Debian's Prometheus on a free loopback port, scraping ``targets`` (host:port) every second,
    each with a ``workload`` label of ``workloads`` where given (as a fleet's configuration labels
    the servers of one traffic); yields its base URL once it is ready."""
    binary = settings.get("SPECVIZ_PROMETHEUS")
    if not binary.exists():
        raise RuntimeError(f"{binary} not found: install Debian's prometheus (apt-get install prometheus) "
                           "or set SPECVIZ_PROMETHEUS")
    config = tmp_path / "prometheus.yml"
    config.write_text(
        "global:\n"
        f"  scrape_interval: {SCRAPE_INTERVAL_S}s\n"
        f"  evaluation_interval: {SCRAPE_INTERVAL_S}s\n"
        "scrape_configs:\n"
        "  - job_name: replay\n"
        f"    scrape_interval: {SCRAPE_INTERVAL_S}s\n"
        f"    scrape_timeout: {SCRAPE_INTERVAL_S}s\n"
        "    static_configs:\n" + (
            "".join(f"      - targets: [{t!r}]\n        labels: {{workload: {w!r}}}\n" for t, w in zip(targets, workloads))
            if workloads else f"      - targets: [{', '.join(repr(t) for t in targets)}]\n"))
    ARTIFACTS.mkdir(exist_ok=True)
    for attempt in range(3):  # the free port may be taken between the probe and the bind
        port = _free_port()
        log = open(ARTIFACTS / f"prometheus-{port}.log", "w")
        process = subprocess.Popen(
            [str(binary), f"--config.file={config}", f"--storage.tsdb.path={tmp_path / f'tsdb-{attempt}'}",
             f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        ready = False
        while process.poll() is None and time.monotonic() < deadline:
            try:
                if requests.get(f"{base}/-/ready", timeout=1).ok:
                    ready = True
                    break
            except requests.ConnectionError:
                pass
            time.sleep(0.1)
        if ready:
            break
        process.terminate()
        process.wait(timeout=10)
        log.close()
    else:
        raise RuntimeError(f"prometheus did not start; see {log.name}")
    try:
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def wait_for_samples(base: str, servers: int, samples: int, timeout_s: float = 60) -> None:
    """Until Prometheus holds ``samples`` scrapes of each of ``servers`` exporters (bounded)."""
    deadline = time.monotonic() + timeout_s
    query = "count_over_time(vllm:spec_decode_num_drafts_total[5m])"
    while True:
        counts = [s.points[0][1] for s in prometheus_api.instant_query(base, query)]
        if len(counts) == servers and min(counts) >= samples:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"Prometheus scraped {counts} times in {timeout_s} s")
        time.sleep(0.25)


def merged(snapshots: list[prom.Snapshot], time_: float) -> prom.Snapshot:
    """The snapshots of several servers as one scrape would hold them, told apart by ``instance``."""
    series: dict[str, dict] = {role: {} for role in ROLES}
    for i, snapshot in enumerate(snapshots):
        for role, values in snapshot.series.items():
            for (prefix, labels), value in values.items():
                series[role][(prefix, tuple(sorted(labels + (("instance", str(i)),))))] = value
    return prom.Snapshot(series=series, time=time_)


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    """Two replay exporters (different seeds, the same model) behind one Prometheus, which labels one
    server's traffic ``workload="chat"`` and the other's ``workload="code"``."""
    exporters = [replay.start(0, seed=seed) for seed in (1, 2)]
    try:
        targets = [e.url.split("//", 1)[1].split("/", 1)[0] for e in exporters]
        with prometheus_server(targets, tmp_path_factory.mktemp("prometheus"), ["chat", "code"]) as base:
            wait_for_samples(base, servers=2, samples=3)
            yield base, exporters
    finally:
        for exporter in exporters:
            exporter.stop()


@pytest.fixture(scope="module")
def measured(fleet):
    """A window measured both ways: direct scrapes of both exporters at its start and end (prom.py),
    and Prometheus's figures over the same window (``query_window`` at its end)."""
    base, exporters = fleet
    start = time.time()
    before = merged([prom.parse(scrape.fetch_url(e.url)) for e in exporters], start)
    time.sleep(10)
    end = time.time()
    after = merged([prom.parse(scrape.fetch_url(e.url)) for e in exporters], end)
    time.sleep(2 * SCRAPE_INTERVAL_S)  # Prometheus's scrapes up to ``end`` are in
    [direct] = spec_decode_states(after, before)
    frame = prometheus.query_window(base, end - start, at=end)
    return direct, frame, start, end


@pytest.mark.prometheus
class TestAgainstDirectScrapes:
    def test_one_row_for_the_model_summed_over_both_servers(self, measured):
        direct, frame, _, end = measured
        assert len(frame) == 1
        (when, model), row = next(iter(frame.iterrows()))
        assert model == direct.model_name and model.startswith(replay.MODEL_PREFIX)
        assert row["engine"] == direct.engine == "vllm-v1"
        assert abs(when.timestamp() - end) < 0.01
        assert any(n.key == "prometheus.notice.summed" for n in frame.attrs["notices"])

    def test_ratios_match_within_the_edges_of_the_window(self, measured):
        direct, frame, _, _ = measured
        row = frame.iloc[0]
        # γ is a ratio of two counters scraped together: extrapolation cancels exactly.
        assert row["num_speculative_tokens"] == pytest.approx(3.0, abs=1e-9) == direct.num_speculative_tokens
        # Prometheus's window starts at its first scrape after the direct one and ends at its last
        # before: up to a second of 10 at each edge is traffic one side counts and the other does not.
        # (Measured: differences up to 0.005 in the rate, 0.013 in the length.)
        assert row["acceptance_rate"] == pytest.approx(direct.acceptance_rate, abs=0.02)
        assert row["acceptance_length"] == pytest.approx(direct.acceptance_length, abs=0.06)
        assert row["alpha_iid"] == pytest.approx(direct.alpha_iid, abs=0.03)
        assert row["zero_accept_rate"] == pytest.approx(direct.zero_accept_rate, abs=0.02)
        for i, (u, c) in enumerate(zip(direct.per_position_acceptance, direct.per_position_conditional)):
            assert row[f"per_position_acceptance_{i}"] == pytest.approx(u, abs=0.02)
            assert row[f"per_position_conditional_{i}"] == pytest.approx(c, abs=0.03)

    def test_figures_are_consistent_as_prom_derives_them(self, measured):
        _, frame, _, _ = measured
        row = frame.iloc[0]
        assert row["acceptance_length"] == pytest.approx(1 + row["acceptance_rate"] * row["num_speculative_tokens"])
        assert row["alpha_iid"] == pytest.approx(float(spec.alpha_from_acceptance_length(
            row["acceptance_length"], row["num_speculative_tokens"])))
        assert row["zero_accept_rate"] == pytest.approx(1 - row["per_position_acceptance_0"])
        assert not row["counter_reset"]
        for absent in ("emitted_tokens", "reported_acceptance_rate", "system_efficiency"):
            assert math.isnan(row[absent])
        [reasons] = frame.attrs["absent"].values()
        # Said of what Prometheus holds, not of a scrape (an SRE's pass: "This scrape of vllm-v1 holds no …").
        assert reasons["emitted_tokens"].key == "prometheus.absent.not_exported"
        assert str(reasons["emitted_tokens"]).startswith("Prometheus holds no ")

    def test_counts_and_throughput_match_within_extrapolation(self, measured):
        direct, frame, start, end = measured
        row = frame.iloc[0]
        # increase() extrapolates its first and last samples to the window's edges (measured: within
        # 2 % of the direct counts); a tenth allows for scrapes that a loaded machine delays.
        for name in ("drafts", "draft_tokens", "accepted_tokens", "generation_tokens"):
            assert row[name] == pytest.approx(getattr(direct, name), rel=0.1), name
        assert row["generation_throughput"] == pytest.approx(direct.generation_throughput, rel=0.1)
        assert row["window_s"] == pytest.approx(end - start, abs=0.001)

    def test_load_is_summed_over_the_servers(self, measured):
        direct, frame, _, _ = measured
        row = frame.iloc[0]
        # Two servers of 1 to 16 running requests each; Prometheus's last scrape is up to 1 s older.
        assert 2 <= row["running_requests"] <= 32
        assert row["running_requests"] == pytest.approx(direct.running_requests, abs=4)
        assert row["servers"] == 2  # two batches, not one of their sum
        assert row["kv_cache_usage"] == pytest.approx(direct.kv_cache_usage, abs=0.2)


@pytest.mark.prometheus
class TestRange:
    def test_points_over_time(self, fleet, measured):
        base, _ = fleet
        direct, _, start, end = measured
        frame = prometheus.query_figures(base, "8s", "2s", window_s="3s", end=end)
        times = frame.index.get_level_values("time")
        assert len(frame) == 5 and times.is_monotonic_increasing
        assert (times[1:] - times[:-1] == pd.Timedelta(seconds=2)).all()
        assert (frame["num_speculative_tokens"] == 3.0).all()
        assert frame["acceptance_rate"].between(0, 1).all() and frame["alpha_iid"].between(0, 1).all()
        assert (frame["acceptance_length"] - (1 + 3 * frame["acceptance_rate"])).abs().max() < 1e-9
        assert (frame["generation_throughput"] > 0).all()
        # Short windows scatter around the long one; their mean cannot be far from it.
        assert frame["acceptance_rate"].mean() == pytest.approx(direct.acceptance_rate, abs=0.06)
        assert all(q.startswith(("sum by (model_name", "max by (model_name", "min by (model_name", "count by (model_name"))
                   for q in frame.attrs["queries"])
        assert not [n for n in frame.attrs["notices"] if n.key == "prometheus.notice.sparse"]  # every window sampled

    def test_by_instance_keeps_the_servers_apart(self, fleet, measured):
        base, exporters = fleet
        _, _, _, end = measured
        frame = prometheus.query_figures(base, "4s", "2s", window_s="3s", end=end, by=("instance",))
        instances = set(frame.index.get_level_values("instance"))
        assert instances == {e.url.split("//", 1)[1].split("/", 1)[0] for e in exporters}
        assert frame.index.names == ["time", "model_name", "instance"]
        summed = prometheus.query_figures(base, "4s", "2s", window_s="3s", end=end)
        by_time = frame.groupby(level="time")["drafts"].sum()
        assert by_time.to_numpy() == pytest.approx(summed["drafts"].to_numpy())

    def test_by_vllm_engine_label_beside_the_engine_column(self, fleet, measured):
        base, _ = fleet
        frame = prometheus.query_figures(base, "4s", "2s", window_s="3s", end=measured[3], by=("instance", "engine"))
        assert frame.index.names == ["time", "model_name", "instance", "engine_label"]
        assert set(frame.index.get_level_values("engine_label")) == {"0"} and set(frame["engine"]) == {"vllm-v1"}

    def test_a_workload_label_of_the_configuration_is_found_and_keeps_its_traffic_apart(self, fleet, measured):
        """Per workload: a fleet whose Prometheus labels each server's traffic (here one server a
        workload) offers the label, and by it each workload's figures are its server's."""
        base, exporters = fleet
        _, _, start, end = measured
        assert prometheus.label_names(base, start, end) == ["engine", "instance", "job", "workload"]
        by_workload = prometheus.query_figures(base, "4s", "2s", window_s="3s", end=end, by=("workload",))
        by_instance = prometheus.query_figures(base, "4s", "2s", window_s="3s", end=end, by=("instance",))
        assert set(by_workload.index.get_level_values("workload")) == {"chat", "code"}
        server_of = {e.url.split("//", 1)[1].split("/", 1)[0]: w for e, w in zip(exporters, ("chat", "code"))}
        relabelled = by_instance.rename(index=server_of, level="instance").rename_axis(index={"instance": "workload"})
        assert by_workload["drafts"].sort_index().to_numpy() == pytest.approx(relabelled["drafts"].sort_index().to_numpy())

    def test_the_csv_of_a_frame(self, fleet, measured):
        base, _ = fleet
        frame = prometheus.query_figures(base, "4s", "2s", window_s="3s", end=measured[3])
        text = frame.to_csv()
        assert text.splitlines()[0].startswith("time,model_name,engine,window_s,drafts")


@pytest.mark.prometheus
class TestCommandLine:
    def test_points_as_json_and_csv(self, fleet, measured, capsys):
        base, _ = fleet
        assert cli.main(["prometheus", base, "--range", "6s", "--step", "2s", "--window", "3s"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["source"] and all(q.startswith(("sum by", "max by", "min by", "count by")) for q in out["queries"])
        assert len(out["points"]) >= 3 and all(p["num_speculative_tokens"] == 3.0 for p in out["points"])
        assert cli.main(["prometheus", base, "--range", "4s", "--step", "2s", "--window", "3s", "--format", "csv"]) == 0
        assert capsys.readouterr().out.splitlines()[0].startswith('"time","model_name","engine","window_s"')

    def test_a_failure_is_one_line_and_exit_2(self, capsys):
        assert cli.main(["prometheus", "ftp://127.0.0.1:9090", "--range", "1m"]) == 2
        err = capsys.readouterr().err
        assert err.startswith("specviz: error: ") and err.count("\n") == 1


@pytest.mark.prometheus
class TestFailuresOfARealPrometheus:
    def test_api_error_of_a_bad_query(self, fleet):
        base, _ = fleet
        error = refused(lambda: prometheus_api.instant_query(base, "sum("), "prometheus.api_error")
        assert error.params["error_type"] == "bad_data"

    def test_api_error_past_prometheus_own_resolution_limit(self, fleet, monkeypatch):
        base, _ = fleet
        monkeypatch.setenv("SPECVIZ_PROMETHEUS_MAX_POINTS", "20000")
        refused(lambda: prometheus_api.range_query(base, "up", time.time() - 15000, time.time(), 1),
                "prometheus.api_error")

    def test_no_spec_decode_series_in_the_range(self, fleet):
        base, _ = fleet
        error = refused(lambda: prometheus.query_figures(base, "1h", "1m", end=time.time() - 86400),
                        "prometheus.no_spec_decode")
        assert "is speculation enabled" in str(error)

    def test_a_window_shorter_than_the_scrape_interval(self, fleet):
        base, _ = fleet
        refused(lambda: prometheus.query_window(base, "300ms"), "prometheus.no_points")

    def test_an_exporter_is_not_a_prometheus(self, fleet):
        _, exporters = fleet
        base = exporters[0].url.removesuffix("/metrics")
        refused(lambda: prometheus.query_window(base, "5m"), "prometheus.http_status")



@pytest.mark.prometheus
def test_a_restart_that_counted_past_its_old_values_is_seen_by_its_start_time(tmp_path):
    """A server that restarted and counted past its old values before Prometheus scraped it again
    leaves no reset in its counters: resets() is 0, and it had read as a window without a restart (an
    SRE's pass). Its start time changed, and changes() of it marks the point, naming the server and
    the moment it started again (the notice had given the end of the window it restarted in)."""
    state = {"start": 1000, "drafts": 100}

    def exporter(path: str) -> tuple[int, str, bytes]:
        drafts = state["drafts"]
        text = (f'vllm:spec_decode_num_drafts_total{{model_name="m"}} {drafts}\n'
                f'vllm:spec_decode_num_draft_tokens_total{{model_name="m"}} {4 * drafts}\n'
                f'vllm:spec_decode_num_accepted_tokens_total{{model_name="m"}} {2 * drafts}\n'
                f'process_start_time_seconds {state["start"]}\n')
        return 200, "text/plain; version=0.0.4", text.encode()

    with fake(200, exporter) as url:
        target = url.split("//", 1)[1]
        with prometheus_server([target], tmp_path) as base:
            wait_for_samples(base, servers=1, samples=2)
            restarted = int(time.time())
            state.update(start=restarted, drafts=150)  # restarted, and past 100 before the next scrape
            wait_for_samples(base, servers=1, samples=4)
            frame = prometheus.query_window(base, "1m", at=time.time())
    row = frame.xs("m", level="model_name").iloc[0]
    assert bool(row["counter_reset"])
    restart = next(n for n in frame.attrs["notices"] if n.key == "prometheus.notice.counter_reset")
    moment = time.strftime("%H:%M:%S", time.gmtime(restarted))
    assert restart.params["restarts"] == 1 and restart.params["where"] == f"{target} (m, {moment} UTC)"

def test_nothing_listening():
    refused(lambda: prometheus.query_window(f"http://127.0.0.1:{_free_port()}", "5m"), "scrape.refused")


class _Fake(BaseHTTPRequestHandler):
    """Answers every request with the server's (status, content type, body), or with what the
    server's ``answer`` returns for the request's path when it is a function."""

    def do_GET(self) -> None:
        answer = self.server.answer
        status, kind, body = answer(self.path) if callable(answer) else answer
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def fake(status: int, body: bytes | str | Callable[[str], tuple[int, str, bytes]],
         kind: str = "application/json") -> Iterator[str]:
    answer = body if callable(body) else (status, kind, body.encode() if isinstance(body, str) else body)
    with serving(_Fake, answer=answer) as url:
        yield url


def vector(*values: str, result_type: str = "vector") -> str:
    return json.dumps({"status": "success", "data": {"resultType": result_type, "result": [
        {"metric": {"model_name": "m"}, "value": [1700000000.5, v]} for v in values]}})


def says_in_vietnamese(error: SpecvizError, english: str) -> None:
    """``prometheus.not_api`` in Vietnamese says what the answer lacks in Vietnamese: its detail's
    English words (``english``) are gone, its Vietnamese ones are there."""
    detail = error.params["detail"]
    text = i18n.t(error.key, "vi", **error.params)
    assert english not in text and i18n.t(detail.key, "vi", **detail.params) in text


class TestFakeServers:
    def test_an_answer_of_too_many_series_or_models_is_refused(self, monkeypatch):
        """6,000 models × 60 points took 434 s and 2.35 GB from the command line: an answer holds at
        most SPECVIZ_METRICS_MAX_SERIES series (refused before they are read) and
        SPECVIZ_METRICS_MAX_MODELS models."""
        models = json.dumps({"status": "success", "data": {"resultType": "vector", "result": [
            {"metric": {"model_name": f"m{i}"}, "value": [1700000000.5, "1"]} for i in range(101)]}})
        with fake(200, models) as url:
            assert refused(lambda: prometheus_api.instant_query(url, "up"), "prom.too_many_models").params == {
                "count": 101, "limit": 100}
            monkeypatch.setenv("SPECVIZ_METRICS_MAX_SERIES", "100")
            assert refused(lambda: prometheus_api.instant_query(url, "up"), "prom.too_many_series").params == {
                "count": 101, "limit": 100}
        long_name = json.dumps({"status": "success", "data": {"resultType": "vector", "result": [
            {"metric": {"model_name": "m", "instance": "i" * 501}, "value": [1700000000.5, "1"]}]}})
        with fake(200, long_name) as url:
            assert refused(lambda: prometheus_api.instant_query(url, "up"), "prom.label_too_long").params == {
                "label": "'instance'", "length": 501, "limit": 500}

    def test_a_fleet_split_into_more_rows_than_the_limit_is_refused_before_its_points_are_read(self):
        """A fleet split by instance took 136 s: models and labels × points are counted as each answer
        comes, and refused past SPECVIZ_PROMETHEUS_MAX_ROWS (11,000)."""
        def fleet(instances: int) -> Callable[[str], tuple[int, str, bytes]]:
            def answer(path: str) -> tuple[int, str, bytes]:
                if "label/__name__/values" in path:
                    data: Any = ["vllm:spec_decode_num_drafts_total", "vllm:spec_decode_num_draft_tokens_total",
                                 "vllm:spec_decode_num_accepted_tokens_total"]
                else:
                    query = urllib.parse.parse_qs(urllib.parse.urlsplit(path).query)
                    start, step = float(query["start"][0]), float(query["step"][0])
                    data = {"resultType": "matrix", "result": [
                        {"metric": {"model_name": "m", "instance": f"host-{i}"},
                         "values": [[start + k * step, str(10 * k)] for k in range(61)]} for i in range(instances)]}
                return 200, "application/json", json.dumps({"status": "success", "data": data}).encode()
            return answer

        end = 1_700_000_000.0
        with fake(200, fleet(181)) as url:  # 181 × 61 = 11,041 rows
            error = refused(lambda: prometheus.query_figures(url, "1h", "60s", end=end, by=("instance",)),
                            "prometheus.too_many_rows")
        assert {k: error.params[k] for k in ("groups", "points", "rows", "limit")} == {
            "groups": 181, "points": 61, "rows": 11_041, "limit": 11_000}
        with fake(200, fleet(20)) as url:
            frame = prometheus.query_figures(url, "1h", "60s", end=end, by=("instance",))
        assert frame.index.get_level_values("instance").nunique() == 20

    def test_one_read_makes_a_bounded_number_of_queries_in_a_bounded_time(self, monkeypatch):
        """An attack pass: a fake Prometheus that named 3,000 spec-decode counters (``e0:``, ``e1:`` …)
        was asked 6,004 queries in 31.5 s, and one that trickled each of 5 answers over 25 s took 353 s.
        The queries are counted before any is asked, and the read ends within its whole time."""
        asked: list[str] = []

        def names(count: int, delay_s: float = 0.0) -> Callable[[str], tuple[int, str, bytes]]:
            def answer(path: str) -> tuple[int, str, bytes]:
                asked.append(path)
                if "label/__name__/values" in path:
                    data: Any = [f"e{i}:spec_decode_num_drafts_total" for i in range(count)]
                else:
                    time.sleep(delay_s)
                    data = {"resultType": "vector", "result": []}
                return 200, "application/json", json.dumps({"status": "success", "data": data}).encode()
            return answer

        with fake(200, names(3_000)) as url:
            error = refused(lambda: prometheus.query_window(url, "5m", at=1_700_000_000.0), "prometheus.too_many_queries")
        assert error.params["names"] == 3_000 and error.params["queries"] > 300 and error.params["most"] == 300
        assert len(asked) == 1  # the names alone
        asked.clear()
        monkeypatch.setenv("SPECVIZ_PROMETHEUS_DEADLINE_S", "1")
        with fake(200, names(2, delay_s=0.6)) as url:  # 4 queries of 0.6 s
            started = time.monotonic()
            error = refused(lambda: prometheus.query_window(url, "5m", at=1_700_000_000.0), "prometheus.deadline")
        assert time.monotonic() - started < 5 and error.params["seconds"] == 1 and 1 <= error.params["done"] < 4
        assert str(error).startswith("Prometheus at ")

    def test_half_characters_in_an_answer_become_replacement_characters(self):
        """A label value of "m\\ud800" reached the page's tables, which cannot draw half a character
        (imports keep such text the same way: tests/test_importers.py)."""
        body = ('{"status": "success", "data": {"resultType": "vector", "result": [{"metric": {"model_name": '
                '"m\\ud800", "x\\udc00": "\\ud83d\\ude00"}, "value": [1700000000.5, "1"]}]}}')
        with fake(200, body) as url:
            (series,) = prometheus_api.instant_query(url, "up")
        assert series.labels == {"model_name": "m\ufffd", "x\ufffd": "\U0001f600"}
        "".join(series.labels).encode()  # all of it is Unicode

    def test_html_page(self):
        with fake(200, "<!doctype html><html><body>Grafana</body></html>", "text/html") as url:
            refused(lambda: prometheus.query_window(url, "5m"), "prometheus.html")

    def test_error_status_in_the_body(self):
        body = json.dumps({"status": "error", "errorType": "bad_data", "error": "parse error at char 4"})
        with fake(400, body) as url:
            error = refused(lambda: prometheus_api.instant_query(url, "up"), "prometheus.api_error")
        assert "parse error at char 4" in str(error)

    def test_not_found_without_json(self):
        with fake(404, "404 page not found\n", "text/plain") as url:
            refused(lambda: prometheus_api.instant_query(url, "up"), "prometheus.http_status")

    @pytest.mark.parametrize("body, detail", [
        ('{"data": []}', "no status"),
        ("[1, 2]", "no status"),
        ("up 1\n", "not JSON"),
        ('{"status": "success", "data": {"resultType": "vector", "result": [{"metric": {}, "value": [NaN, "1"]}]}}',
         "not JSON"),
        ('{"status": "success"}', "no data"),
        (vector("1", result_type="matrix"), "result type matrix, not vector"),
        (vector("1_000"), "a value is not a number"),
        (vector("0x10"), "a value is not a number"),
        ('{"status": "success", "data": {"resultType": "vector", "result": [{"metric": {"a": 1}, "value": [1, "1"]}]}}',
         "a label is not text"),
        ('{"status": "success", "data": {"resultType": "vector", "result": [{"metric": {}, "value": [true, "1"]}]}}',
         "a time is not a number"),
        # A whole number past a float's range: math.isfinite raised OverflowError ("unexpected").
        ('{"status": "success", "data": {"resultType": "vector", "result": [{"metric": {}, "value": [1' + "0" * 400
         + ', "1"]}]}}', "a time is not a number"),
        ('{"status": "success", "data": {"resultType": "vector", "result": [{"metric": {}, "value": [1]}]}}',
         "a point is not [time, value]"),
        # Times pandas cannot hold had ended in its IntCastingNaNError or OutOfBoundsDatetime (an attack pass).
        ('{"status": "success", "data": {"resultType": "vector", "result": [{"metric": {}, "value": [1e308, "1"]}]}}',
         "a time is not between 1970 and 2262"),
        ('{"status": "success", "data": {"resultType": "vector", "result": [{"metric": {}, "value": [-1e15, "1"]}]}}',
         "a time is not between 1970 and 2262"),
        ("", "empty answer"),
        ('{"status": "success", "data": {}}', "no result"),
        ('{"status": "success", "data": {"resultType": "vector", "result": [{"value": [1, "1"]}]}}',
         "a series has no labels"),
        ('{"status": "success", "data": {"resultType": "vector", "result": [{"metric": {}}]}}',
         "a series has no value"),
    ])
    def test_answers_that_are_not_the_api(self, body, detail):
        with fake(200, body) as url:
            error = refused(lambda: prometheus_api.instant_query(url, "up"), "prometheus.not_api")
        assert str(error.params["detail"]) == detail
        says_in_vietnamese(error, detail)

    @pytest.mark.parametrize("body, call, detail", [
        ('{"status": "success", "data": {"resultType": "matrix", "result": [{"metric": {}, "values": 1}]}}',
         lambda url: prometheus_api.range_query(url, "up", 0, 60, 15), "values is not a list"),
        ('{"status": "success", "data": ["up", 1]}', lambda url: prometheus.metric_names(url, 0, 1),
         "names are not a list of text"),
        # More points than the range asks for (0 to 60 every 15 s: 5), refused before they are read: 30,000
        # a series had held each refresh of the Live page for 26 s (an attack pass).
        (json.dumps({"status": "success", "data": {"resultType": "matrix", "result": [
            {"metric": {}, "values": [[t / 1000, "1"] for t in range(6)]}]}}),
         lambda url: prometheus_api.range_query(url, "up", 0, 60, 15), "a series has 6 points where 5 were asked for"),
    ])
    def test_range_and_name_answers_that_are_not_the_api(self, body, call, detail):
        with fake(200, body) as url:
            error = refused(lambda: call(url), "prometheus.not_api")
        assert str(error.params["detail"]) == detail
        says_in_vietnamese(error, detail)

    def test_nan_and_infinite_values_are_left_out_and_counted(self):
        with fake(200, vector("NaN", "+Inf", "-Inf", "1e+03", "0.5")) as url:
            series = prometheus_api.instant_query(url, "up")
        assert [s.points[0][1] for s in series if s.points] == [1000.0, 0.5]
        assert sum(s.dropped for s in series) == 3

    def test_a_dense_body_is_refused_before_decoding(self):
        with fake(200, "[" + "[]," * 100_000 + "[]]") as url:
            refused(lambda: prometheus_api.instant_query(url, "up"), "prometheus.too_dense")

    def test_names_without_spec_decode(self):
        body = json.dumps({"status": "success", "data": ["up", "vllm:num_requests_running",
                                                         "vllm:spec_decode_num_drafts_created"]})
        with fake(200, body) as url:
            assert "drafts" not in prometheus.metric_names(url, 0, 1)
            refused(lambda: prometheus.query_window(url, "5m"), "prometheus.no_spec_decode")

    def test_names_are_recognised_by_prom_patterns(self):
        body = json.dumps({"status": "success", "data": [
            "vllm:spec_decode_num_drafts_total", "llamacpp:spec_decode_num_drafts", "sglang:spec_accept_rate",
            "vllm:spec_decode_num_drafts_created", 'evil"){} or up', "vllm:generation_tokens_total"]})
        with fake(200, body) as url:
            names = prometheus.metric_names(url, 0, 1)
        assert names["drafts"] == [("llamacpp:spec_decode_num_drafts", "llamacpp"),
                                   ("vllm:spec_decode_num_drafts_total", "vllm")]
        assert names["reported_acceptance_rate"] == [("sglang:spec_accept_rate", "sglang")]
        assert names["generation_tokens"] == [("vllm:generation_tokens_total", "vllm")]
        assert not any("evil" in n for found in names.values() for n, _ in found)


class TestArguments:
    @pytest.mark.parametrize("text, seconds", [
        ("30s", 30), ("5m", 300), ("1h", 3600), ("1h30m", 5400), ("2d", 172800), ("1w", 604800),
        ("500ms", 0.5), ("90", 90), ("2.5", 2.5), (60, 60), (0.25, 0.25), (" 1m ", 60)])
    def test_durations(self, text, seconds):
        assert prometheus_api.parse_duration(text) == seconds

    @pytest.mark.parametrize("text", ["", "0s", "-5s", "1x", "m", "30m1h", "1.5h", "nan", "inf", True,
                                      float("nan"), float("inf"), 0, "1e3"])
    def test_not_durations(self, text):
        refused(lambda: prometheus_api.parse_duration(text), "prometheus.bad_duration")

    def test_points_limit(self, monkeypatch):
        assert prometheus_api.check_points(3600, 30) == 121
        # Prometheus steps from start to end in whole milliseconds: 0, 100, 200 and 300 ms. The rows
        # counted before an answer is read are those points (0.3 // 0.1 is 2.0 in floating point).
        assert prometheus_api.check_points(0.3, 0.1) == 4
        assert prometheus_api.Runner(("http://h:9090", "h"), None, start=100.0, end=100.3, step_s=0.1).points == 4
        monkeypatch.setenv("SPECVIZ_PROMETHEUS_MAX_POINTS", "100")
        refused(lambda: prometheus.query_figures("http://127.0.0.1:9", "1h", "30s"), "prometheus.too_many_points")
        # In digits: 30 days had read "A range of 2.592e+06 s" (an SRE's pass).
        said = str(refused(lambda: prometheus_api.check_points(30 * 86400, 0.5), "prometheus.too_many_points"))
        assert said.startswith("A range of 2,592,000 s every 0.5 s asks for 5,184,001 points")

    def test_bad_labels(self):
        for label in ("model_name", "__name__", "a-b", "position"):
            refused(lambda: prometheus.query_window("http://127.0.0.1:9", "5m", by=(label,)), "prometheus.bad_label")

    def test_urls(self):
        refused(lambda: prometheus.query_window("file:///etc/passwd", "5m"), "scrape.scheme")
        refused(lambda: prometheus.query_window("http://u:p@host:9090", "5m"), "scrape.credentials")
        refused(lambda: prometheus.query_window("http://host:9090/?x=1", "5m"), "prometheus.bad_base_url")
        # One server's page pasted as the fleet's source: said to be one, with the source that reads it.
        for page in ("http://host:8000/metrics", "http://host:9090/metrics/"):
            error = refused(lambda: prometheus.query_window(page, "5m"), "prometheus.metrics_path")
        # Said for the page and the command line alike (an SRE's pass: the command line was told to
        # choose a source "above").
        assert "(the Live page's source “A server's /metrics”, or specviz metrics)" in str(error)
        assert prometheus_api.api_base("http://h/team/metrics")[0] == "http://h/team/metrics"  # a path prefix
        assert prometheus_api.api_base("http://h:9090/prometheus/api/v1/query")[0] == "http://h:9090/prometheus"
        assert prometheus_api.api_base("http://h:9090/")[0] == "http://h:9090"


class TestLabelColumn:
    def test_a_label_named_like_a_column_is_kept_apart_from_it(self):
        assert prometheus.label_column("instance") == "instance"
        assert prometheus.label_column("engine") == "engine_label"  # vLLM's data-parallel engine
        assert prometheus.label_column("drafts") == "drafts_label"
        assert prometheus.label_column("per_position_acceptance_0") == "per_position_acceptance_0_label"


def test_a_restart_s_moment_is_its_start_time_within_its_window():
    """The restart notice gives the start time a server exports where it falls in the window
    (end − window, end], else the window's end marked ≤ (none exported, or a clock that disagrees)."""
    end = 1_700_000_000.0  # 22:13:20 UTC
    assert prometheus._restart_moment(end, 60.0, end - 12.4) == "22:13:07 UTC"
    assert prometheus._restart_moment(end, 60.0, end) == "22:13:20 UTC"
    for started in (None, end - 60.0, end + 1.0, 2000.0):
        assert prometheus._restart_moment(end, 60.0, started) == "≤ 22:13:20 UTC"


class TestWholeGamma:
    def test_extrapolation_rounding_does_not_make_gamma_fractional(self):
        # 3 × f / f in floating point: what increase() gave for one window of the replay.
        at = {"drafts": {("vllm", ()): 289.27500000000003}, "draft_tokens": {("vllm", ()): 867.8249999999999}}
        prometheus._whole_gamma(at)
        assert at["draft_tokens"][("vllm", ())] / at["drafts"][("vllm", ())] == 3.0
        assert at["drafts"][("vllm", ())] == pytest.approx(289.275, rel=1e-15)

    def test_drafts_of_varying_length_stay_so(self):
        at = {"drafts": {("vllm", ()): 100.0}, "draft_tokens": {("vllm", ()): 250.0}}
        prometheus._whole_gamma(at)
        assert at["draft_tokens"][("vllm", ())] == 250.0


    def test_trtllm_drafted_counts_per_position_stay_whole(self):
        """TensorRT-LLM's draft tokens are the sum of its drafted counts per position: 3 × 877.068…
        summed and divided by one of them gives 2.9999999999999996 before the counts are made one."""
        count = 877.0681666666667
        assert sum([count] * 3) / count != 3
        at = {"drafted_per_pos": {("trtllm", (("model_name", "m"), ("token_position", str(i)))): count * (1 + 1e-13 * i)
                                  for i in range(3)}}
        prometheus._whole_gamma(at)
        values = list(at["drafted_per_pos"].values())
        assert len(set(values)) == 1 and sum(values) / values[0] == 3.0
        assert values[0] == pytest.approx(count, rel=1e-12)


class _Routed(BaseHTTPRequestHandler):
    """Answers the API by the server's function of (endpoint, query)."""

    def do_GET(self) -> None:
        from urllib.parse import parse_qs, urlsplit
        parts = urlsplit(self.path)
        body = json.dumps(self.server.route(parts.path, parse_qs(parts.query).get("query", [""])[0])).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def answering(route: Callable[[str, str], dict]) -> AbstractContextManager[str]:
    """The base URL of an API on 127.0.0.1 that answers each request by ``route(path, query)``."""
    return serving(_Routed, route=route)


class TestFiguresFromAnswers:
    """What query_window makes of a server's answers, whatever server it is (Thanos, Mimir...)."""

    AT = 1700000000.0

    def route(self, path: str, query: str) -> dict:
        ok = lambda data: {"status": "success", "data": data}
        if path.endswith("/label/__name__/values"):
            return ok(["vllm:spec_decode_num_drafts_total", "vllm:spec_decode_num_draft_tokens_total",
                       "vllm:spec_decode_num_accepted_tokens_total", "sglang:spec_accept_rate",
                       "sglang:spec_accept_length", "sglang:num_running_reqs", "vllm:generation_tokens_total"])
        values = {  # (query start, model) → value
            ("sum by (model_name) (increase(vllm:spec_decode_num_drafts_total", "a"): "100",
            ("sum by (model_name) (increase(vllm:spec_decode_num_draft_tokens_total", "a"): "400",
            ("sum by (model_name) (increase(vllm:spec_decode_num_accepted_tokens_total", "a"): "200",
            ("sum by (model_name, instance) (resets(vllm:spec_decode_num_drafts_total", "a"): "1",
            ("max by (model_name) (sglang:spec_accept_rate)", "b"): "0.7",
            ("min by (model_name) (sglang:spec_accept_rate)", "b"): "0.6",
            ("max by (model_name) (sglang:spec_accept_length)", "b"): "2.5",
            ("min by (model_name) (sglang:spec_accept_length)", "b"): "2.5",
            ("sum by (model_name) (sglang:num_running_reqs)", "b"): "12",
            ("sum by (model_name) (increase(vllm:generation_tokens_total", "c"): "600",  # speculation off
        }
        result = [{"metric": {"model_name": model}, "value": [self.AT, value]}
                  for (start, model), value in values.items() if query.startswith(start)]
        return ok({"resultType": "vector", "result": result})

    def window(self, route, by: tuple[str, ...] = ()) -> pd.DataFrame:
        """query_window's frame of a server answering by ``route``, kept apart ``by`` those labels."""
        with answering(route) as url:
            return prometheus.query_window(url, "1m", at=self.AT, by=by)

    def test_resets_and_gauges(self):
        frame = self.window(self.route)
        a = frame.xs("a", level="model_name").iloc[0]
        assert a["engine"] == "vllm-v1" and bool(a["counter_reset"])
        assert (a["acceptance_rate"], a["acceptance_length"], a["num_speculative_tokens"]) == (0.5, 3.0, 4.0)
        assert a["alpha_iid"] == pytest.approx(float(spec.alpha_from_acceptance_length(3.0, 4)))
        assert math.isnan(a["zero_accept_rate"]) and math.isnan(a["generation_throughput"])
        b = frame.xs("b", level="model_name").iloc[0]
        assert b["engine"] == "sglang" and not b["counter_reset"]
        # The replicas' acceptance rates disagree: no value, said so; their lengths agree.
        assert math.isnan(b["acceptance_rate"]) and b["acceptance_length"] == 2.5
        assert b["running_requests"] == 12
        assert frame.attrs["absent"]["sglang/b"]["acceptance_rate"].key == "prom.absent.gauges_disagree"
        keys = [n.key for n in frame.attrs["notices"]]
        assert "prometheus.notice.counter_reset" in keys and "prom.notice.gauge_source" in keys
        restart = next(n for n in frame.attrs["notices"] if n.key == "prometheus.notice.counter_reset")
        # No instance label in the answer, nor a start time: the end of the window it restarted in.
        assert restart.params == {"restarts": 1, "count": 1, "where": "? (a, ≤ 22:13:20 UTC)"}
        # An SRE's pass: one server restarted three times had read as "3 servers restarted"
        assert str(Notice("prometheus.notice.counter_reset", restarts=3, count=1, where="x")).startswith(
            "3 restarts of 1 server inside the range")
        assert "prom.notice.summed" not in keys and "prometheus.notice.summed" in keys
        # An SRE's pass: a model served without speculation had disappeared without a word
        assert "c" not in frame.index.get_level_values("model_name")
        plain = next(n for n in frame.attrs["notices"] if n.key == "prometheus.notice.no_spec")
        assert plain.params == {"count": 1, "models": "c"}


    @pytest.mark.parametrize("answer, found", [
        (["__name__", "instance", "job", "model_name", "position", "le", "workload", "bad-label"],
         ["instance", "job", "workload"]),
        ({"instance": 1}, "prometheus.not_api"), (["instance", 7], "prometheus.not_api"),
        # 1.1 MB: over the lookup's own 1 MB, said as its own (not as SPECVIZ_SCRAPE_MAX_BYTES's, 20 MB by default)
        ([f"l{i:07d}" for i in range(100_000)], "prometheus.labels_bounded"),
        # Each one found is an option the page sends on every rerun (an attack pass: 750,000 names made a
        # rerun 35 MB and 48 s): the first 200, none longer than 100 characters.
        ([f"l{i:06d}" for i in range(300)] + ["x" * 101], [f"l{i:06d}" for i in range(200)])])
    def test_the_labels_a_fleet_can_be_kept_apart_by(self, answer, found):
        """Labels are looked up on the series the figures are read from; what names what a series
        measures, or could not go into a PromQL ``by``, is not offered; an answer that is no list of
        names is said to be none of Prometheus's, and one over 1 MB is refused whatever a query's
        limit (the page looks the labels up before it draws anything)."""
        asked = []
        with answering(lambda path, query: asked.append(path) or {"status": "success", "data": answer}) as base:
            if isinstance(found, str):
                refused(lambda: prometheus.label_names(base, self.AT - 60, self.AT), found)
            else:
                assert prometheus.label_names(base, self.AT - 60, self.AT) == found
        assert asked == ["/api/v1/labels"]

    def test_a_label_list_past_a_tighter_setting_names_the_setting(self, monkeypatch):
        """Where SPECVIZ_SCRAPE_MAX_BYTES is below the lookup's own 1 MB, the setting is what cut the
        answer, and the message names it."""
        monkeypatch.setenv("SPECVIZ_SCRAPE_MAX_BYTES", "100000")
        with answering(lambda path, query: {"status": "success", "data": [f"l{i:07d}" for i in range(20_000)]}) as base:
            said = refused(lambda: prometheus.label_names(base, self.AT - 60, self.AT), "scrape.too_large")
            assert "SPECVIZ_SCRAPE_MAX_BYTES" in str(said)

    def born_route(self, path: str, query: str) -> dict:
        """A range of three one-minute points: model "a" at each, model "b" from the second on, its
        series born inside the range (an engineer's pass: "96 tokens/s" where the server made 310)."""
        ok = lambda data: {"status": "success", "data": data}
        if path.endswith("/label/__name__/values"):
            return ok(["vllm:spec_decode_num_drafts_total", "vllm:spec_decode_num_draft_tokens_total",
                       "vllm:spec_decode_num_accepted_tokens_total", "vllm:generation_tokens_total"])
        counts = {"vllm:spec_decode_num_drafts_total": 100, "vllm:spec_decode_num_draft_tokens_total": 300,
                  "vllm:spec_decode_num_accepted_tokens_total": 200, "vllm:generation_tokens_total": 6000}
        name = next((n for n in counts if f"increase({n}[" in query and query.startswith("sum by")), None)
        times = {"a": (self.AT - 120, self.AT - 60, self.AT), "b": self.b_points}
        result = [] if name is None else [
            {"metric": {"model_name": model}, "values": [[t, str(counts[name])] for t in at]}
            for model, at in times.items()]
        return ok({"resultType": "matrix", "result": result})

    def born_frame(self, *b_points: float) -> pd.DataFrame:
        """query_figures over the three points of :meth:`born_route`, model "b" at ``b_points``."""
        self.b_points = b_points
        with answering(self.born_route) as url:
            return prometheus.query_figures(url, 120, 60, end=self.AT)

    def test_a_series_born_inside_the_range_has_no_rate_per_second_at_its_first_point(self):
        frame = self.born_frame(self.AT - 60, self.AT)
        throughput = frame["generation_throughput"].unstack("model_name")
        assert list(throughput["a"]) == [100.0, 100.0, 100.0]  # 6,000 tokens a minute
        assert math.isnan(throughput["b"].iloc[1]) and throughput["b"].iloc[2] == 100.0
        assert frame["acceptance_rate"].xs("b", level="model_name").iloc[0] == pytest.approx(2 / 3)  # a ratio stands
        said = [n for n in frame.attrs["notices"] if n.key == "prometheus.notice.born_inside"]
        assert said and said[0].params == {"series": 1, "names": "b"}
        assert str(said[0]).startswith("1 series begins inside the range (b):")
        assert "generation_throughput" not in frame.attrs["absent"]["vllm-v1/b"]  # its latest point has one
        # Its only point so far is its first: the headline's tokens per second are absent, and why.
        only = self.born_frame(self.AT)
        assert frame.attrs["absent"] and only.attrs["absent"]["vllm-v1/b"]["generation_throughput"].key == \
            "prometheus.absent.born_inside"

    # Each counter's increase over a one-minute window of model "a" (1,500 tokens: 25 a second).
    MINUTE_COUNTS = {"vllm:spec_decode_num_drafts_total": 100, "vllm:spec_decode_num_draft_tokens_total": 300,
                     "vllm:spec_decode_num_accepted_tokens_total": 200, "vllm:generation_tokens_total": 1500}

    def five_minutes(self) -> list[float]:
        """Five one-minute points ending at :attr:`AT`."""
        return [self.AT - 240 + 60 * i for i in range(5)]

    def test_a_window_with_few_samples_has_no_rate_per_second(self):
        """An SRE's pass: Prometheus paused for 40 s, and the fleet's next points read 215 tokens/s for
        950, increase() over the few samples left in their windows. Five one-minute points, the counter
        sampled 8 times a window but 2 in the third (and in the fifth, the latest, in a second run):
        those points have no tokens per second, said with the first; acceptance stands."""
        counts, times = self.MINUTE_COUNTS, self.five_minutes()

        def frame(samples: list[int]) -> pd.DataFrame:
            def route(path: str, query: str) -> dict:
                ok = lambda data: {"status": "success", "data": data}
                if path.endswith("/label/__name__/values"):
                    return ok(list(counts))
                if query.startswith("min by (model_name, instance) (count_over_time(vllm:generation_tokens_total["):
                    values = [[t, str(n)] for t, n in zip(times, samples)]
                else:
                    name = next((n for n in counts if f"increase({n}[" in query and query.startswith("sum by")), None)
                    values = None if name is None else [[t, str(counts[name])] for t in times]
                result = [] if values is None else [{"metric": {"model_name": "a"}, "values": values}]
                return ok({"resultType": "matrix", "result": result})

            with answering(route) as url:
                return prometheus.query_figures(url, 240, 60, end=self.AT)

        gap = frame([8, 8, 2, 8, 8])
        throughput = gap["generation_throughput"].tolist()
        assert throughput[:2] == throughput[3:] == [25.0, 25.0] and math.isnan(throughput[2])  # 1,500 a minute
        assert gap["acceptance_rate"].tolist() == pytest.approx([2 / 3] * 5)
        [said] = [n for n in gap.attrs["notices"] if n.key == "prometheus.notice.sparse"]
        assert said.params["points"] == 1 and said.params["names"] == "a"
        assert str(said).startswith("1 point of a (the first ending ") and "has no tokens per second" in str(said)
        assert "generation_throughput" not in gap.attrs["absent"].get("vllm-v1/a", {})
        latest = frame([8, 8, 8, 7, 3])
        assert math.isnan(latest["generation_throughput"].iloc[-1])
        assert latest.attrs["absent"]["vllm-v1/a"]["generation_throughput"].key == "prometheus.absent.sparse"
        assert not [n for n in frame([8, 7, 8, 8, 6]).attrs["notices"] if n.key == "prometheus.notice.sparse"]

    def test_a_server_joining_inside_the_range_is_no_gap(self):
        """An SRE's pass: a second server of the model joined a running Prometheus, and its first
        windows, which hold a few of its samples by right, were said to be "a gap in its scrapes" and
        left without tokens per second. Server x reports at every point, y from the third; a window is
        one step (60 s), y's first holds 2 samples. Only the servers through the whole window count:
        no gap, y's joining said; a window of 2 samples of both servers is still one."""
        counts, times = self.MINUTE_COUNTS, self.five_minutes()

        def frame(samples_of_x: list[int]) -> pd.DataFrame:
            def route(path: str, query: str) -> dict:
                ok = lambda data: {"status": "success", "data": data}
                if path.endswith("/label/__name__/values"):
                    return ok([*counts, "vllm:num_requests_running"])
                series = lambda instance, values: {"metric": {"model_name": "a", "instance": instance},
                                                   "values": [[t, str(v)] for t, v in values]}
                result = []
                if query.startswith("min by (model_name, instance) (count_over_time(vllm:generation_tokens_total["):
                    result = [series("x", zip(times, samples_of_x)), series("y", zip(times[2:], [2, 8, 8]))]
                elif query == "count by (model_name, instance) (vllm:num_requests_running)":
                    result = [series("x", ((t, 1) for t in times)), series("y", ((t, 1) for t in times[2:]))]
                elif query == "sum by (model_name) (vllm:num_requests_running)":
                    result = [{"metric": {"model_name": "a"}, "values": [[t, "8"] for t in times]}]
                elif name := next((n for n in counts if f"increase({n}[" in query and query.startswith("sum by")), None):
                    result = [{"metric": {"model_name": "a"}, "values": [[t, str(counts[name])] for t in times]}]
                return ok({"resultType": "matrix", "result": result})

            with answering(route) as url:
                return prometheus.query_figures(url, 240, 60, end=self.AT)

        joined = frame([8] * 5)
        assert joined["generation_throughput"].tolist() == [25.0] * 5
        said = {n.key: n for n in joined.attrs["notices"]}
        assert "prometheus.notice.sparse" not in said
        assert said["prometheus.notice.joined"].params["count"] == 1
        assert said["prometheus.notice.joined"].params["where"].startswith("y (")
        assert str(said["prometheus.notice.joined"]).startswith("1 server joined inside the range (y (")
        # Where the server that reports throughout holds few samples too, the gap is Prometheus's.
        gap = frame([8, 8, 8, 2, 8])
        assert math.isnan(gap["generation_throughput"].iloc[3])
        assert [n.params["points"] for n in gap.attrs["notices"] if n.key == "prometheus.notice.sparse"] == [1]

    def fleet_route(self, path: str, query: str) -> dict:
        """Two vLLM servers (instances) of model "a", 40 running requests between them."""
        ok = lambda data: {"status": "success", "data": data}
        if path.endswith("/label/__name__/values"):
            return ok(["vllm:spec_decode_num_drafts_total", "vllm:spec_decode_num_draft_tokens_total",
                       "vllm:spec_decode_num_accepted_tokens_total", "vllm:num_requests_running"])
        values = {"sum by (model_name) (increase(vllm:spec_decode_num_drafts_total[60000ms]))": "100",
                  "sum by (model_name) (increase(vllm:spec_decode_num_draft_tokens_total[60000ms]))": "300",
                  "sum by (model_name) (increase(vllm:spec_decode_num_accepted_tokens_total[60000ms]))": "200",
                  "sum by (model_name) (vllm:num_requests_running)": "40"}
        result = [{"metric": {"model_name": "a"}, "value": [self.AT, values[query]]}] if query in values else []
        if query == "count by (model_name, instance) (vllm:num_requests_running)":  # a series a server
            result = [{"metric": {"model_name": "a", "instance": f"10.0.0.{i}:8000"}, "value": [self.AT, "1"]}
                      for i in range(self.fleet_servers)]
        return ok({"resultType": "vector", "result": result})

    fleet_servers = 2

    def test_a_label_no_series_carries_is_said_and_one_server_s_restarts_count_it_once(self):
        """An SRE's pass: --by nosuchlabel gave an empty column, said to be "kept apart by" it, and
        the restart notice read "(a/, …)"; one server that restarted serving two models was counted
        as two restarts of two servers."""
        counts = {"drafts": "100", "draft_tokens": "400", "accepted_tokens": "200"}

        def route(path: str, query: str) -> dict:
            ok = lambda data: {"status": "success", "data": data}
            if path.endswith("/label/__name__/values"):
                return ok([f"vllm:spec_decode_num_{name}_total" for name in counts])
            result = []
            for name, value in counts.items():
                if f"(increase(vllm:spec_decode_num_{name}_total" in query:
                    result = [{"metric": {"model_name": model}, "value": [self.AT, value]} for model in ("a", "b")]
            if "(resets(vllm:spec_decode_num_drafts_total" in query:
                result = [{"metric": {"model_name": model, "instance": "10.0.0.7:8000"}, "value": [self.AT, "1"]}
                          for model in ("a", "b")]
            return ok({"resultType": "vector", "result": result})

        frame = self.window(route, by=("nosuchlabel",))
        said = {n.key: n for n in frame.attrs["notices"]}
        assert said["prometheus.notice.label_absent"].params == {"label": "nosuchlabel"}
        assert str(said["prometheus.notice.label_absent"]).startswith("No series carries the label nosuchlabel")
        restart = said["prometheus.notice.counter_reset"]
        assert (restart.params["restarts"], restart.params["count"]) == (1, 1)  # one restart, listed per model
        assert restart.params["where"].startswith("10.0.0.7:8000 (a, ≤ ") and "(a/," not in restart.params["where"]
        assert "prometheus.notice.label_absent" not in [n.key for n in self.window(route).attrs["notices"]]

    def test_a_fleet_counts_its_servers_and_its_verdict_is_at_each_one_s_batch(self):
        frame = self.window(self.fleet_route)
        a = frame.xs("a", level="model_name").iloc[0]
        assert (a["running_requests"], a["servers"]) == (40, 2)  # the fleet's sum, over 2 servers
        from conftest import make_scenario
        from specviz.live import windows
        verdict = windows.paying_now(make_scenario(), a.to_dict(), 1024)
        assert (verdict.batch, verdict.servers) == (20, 2)

    def test_one_restarted_server_of_a_fleet_leaves_the_fleet_s_tokens_per_second(self):
        """Two servers of model "a", one of which restarted in the window: its whole tokens per second
        had been left out, and a fleet's chart was empty wherever any replica restarted (an SRE's
        pass). The sum stands, said to read low, and the notice names the server; where the one
        server of a model restarted, the figure is left out as before."""
        def route(path: str, query: str) -> dict:
            answer = self.fleet_route(path, query)
            if path.endswith("/label/__name__/values"):
                answer["data"].append("vllm:generation_tokens_total")
            elif query.startswith("sum by (model_name) (increase(vllm:generation_tokens_total"):
                answer["data"]["result"] = [{"metric": {"model_name": "a"}, "value": [self.AT, "6000"]}]
            elif query.startswith("sum by (model_name, instance) (resets(vllm:spec_decode_num_drafts_total"):
                answer["data"]["result"] = [{"metric": {"model_name": "a", "instance": "10.0.0.7:8000"},
                                             "value": [self.AT, "1"]}]
            return answer

        a = self.window(route)
        row = a.xs("a", level="model_name").iloc[0]
        assert bool(row["counter_reset"]) and row["generation_throughput"] == 100.0  # 6,000 tokens a minute
        restart = next(n for n in a.attrs["notices"] if n.key == "prometheus.notice.counter_reset")
        assert restart.params["where"].startswith("10.0.0.7:8000 (a, ") and "reads low" in str(restart)
        self.fleet_servers = 1
        alone = self.window(route).xs("a", level="model_name").iloc[0]
        assert math.isnan(alone["generation_throughput"])

    def trtllm_route(self, path: str, query: str) -> dict:
        """A fleet of TensorRT-LLM: per-position counts by token_position, increase()'s γ rounding in them."""
        ok = lambda data: {"status": "success", "data": data}
        if path.endswith("/label/__name__/values"):
            return ok(["trtllm_spec_decode_drafted_tokens_total", "trtllm_spec_decode_accepted_tokens_total",
                       "trtllm_spec_decode_acceptance_length", "trtllm_spec_decode_draft_overhead",
                       "trtllm_num_requests_running"])
        counts = {"drafted": (877.0681666666667,) * 3, "accepted": (701.6545333333334, 438.53408333333334, 228.0)}
        result = []
        for kind, values in counts.items():
            if query.startswith(f"sum by (model_name, token_position) (increase(trtllm_spec_decode_{kind}_tokens_total"):
                result = [{"metric": {"model_name": "m", "token_position": str(i)}, "value": [self.AT, repr(v)]}
                          for i, v in enumerate(values)]
        if query.startswith(("max by (model_name) (trtllm_spec_decode_acceptance_length)",
                             "min by (model_name) (trtllm_spec_decode_acceptance_length)")):
            result = [{"metric": {"model_name": "m"}, "value": [self.AT, "2.5"]}]
        if query.startswith("max by (model_name) (trtllm_spec_decode_draft_overhead)"):  # two processes
            result = [{"metric": {"model_name": "m"}, "value": [self.AT, "0.21"]}]
        if query.startswith("min by (model_name) (trtllm_spec_decode_draft_overhead)"):
            result = [{"metric": {"model_name": "m"}, "value": [self.AT, "0.19"]}]
        if query.startswith("sum by (model_name) (trtllm_num_requests_running)"):
            result = [{"metric": {"model_name": "m"}, "value": [self.AT, "30"]}]
        return ok({"resultType": "vector", "result": result})

    def test_trtllm_per_position_counters(self):
        frame = self.window(self.trtllm_route)
        m = frame.xs("m", level="model_name").iloc[0]
        # drafts 877.07, draft tokens 3 × 877.07, accepted 701.65 + 438.53 + 228 = 1368.19
        assert m["engine"] == "trt-llm" and m["num_speculative_tokens"] == 3.0
        assert m["acceptance_length"] == pytest.approx(1 + 1368.1886166666667 / 877.0681666666667)
        assert m["acceptance_rate"] == pytest.approx(1368.1886166666667 / (3 * 877.0681666666667))
        assert m["alpha_iid"] == pytest.approx(float(spec.alpha_from_acceptance_length(m["acceptance_length"], 3)))
        assert m["per_position_acceptance_0"] == pytest.approx(0.8) and m["reported_acceptance_length"] == 2.5
        assert m["running_requests"] == 30
        assert "prom.notice.trtllm_per_request" in [n.key for n in frame.attrs["notices"]]
        # Its processes' draft overheads differ (max 0.21, min 0.19): none shown, as a scrape of both would say.
        assert math.isnan(m["draft_overhead"])
        assert frame.attrs["absent"]["trt-llm/m"]["draft_overhead"].key == "prom.absent.gauges_disagree"

    def stopped_route(self, path: str, query: str) -> dict:
        """Two models over ten 60 s steps to AT: "a" at every step, "b" until its server stopped,
        five steps before the end."""
        ok = lambda data: {"status": "success", "data": data}
        if path.endswith("/label/__name__/values"):
            return ok(["vllm:spec_decode_num_drafts_total", "vllm:spec_decode_num_draft_tokens_total",
                       "vllm:spec_decode_num_accepted_tokens_total"])
        counts = {"drafts": "100", "draft_tokens": "300", "accepted_tokens": "200"}
        name = next((n for n in counts if f"vllm:spec_decode_num_{n}_total[" in query), None)
        if name is None or not query.startswith("sum by (model_name) (increase("):
            return ok({"resultType": "matrix", "result": []})
        times = {"a": range(0, 11), "b": range(0, 6)}  # steps before the end, counted back from 10
        return ok({"resultType": "matrix", "result": [
            {"metric": {"model_name": model}, "values": [[self.AT - 600 + 60 * i, counts[name]] for i in steps]}
            for model, steps in times.items()]})

    def test_a_model_whose_server_stopped_is_said_to_be_late(self):
        """The range's end travels with the frame: "b"'s latest point is 300 s (five steps) before it,
        "a"'s at it; only "b"'s figures are said to be old."""
        with answering(self.stopped_route) as url:
            frame = prometheus.query_figures(url, "10m", "60s", end=self.AT)
        from specviz.live import windows
        assert frame.attrs["end"] == self.AT
        latest = frame.reset_index().groupby("model_name")["time"].max()
        assert windows.late_point(latest["a"].timestamp(), frame.attrs["end"], 60.0) is None
        late = windows.late_point(latest["b"].timestamp(), frame.attrs["end"], 60.0)
        assert late is not None and late.params["seconds"] == 300


    def shrinking_route(self, path: str, query: str) -> dict:
        """One model over the page's last three 15 s steps to now: two servers, then one."""
        ok = lambda data: {"status": "success", "data": data}
        if path.endswith("/label/__name__/values"):
            return ok(["vllm:spec_decode_num_drafts_total", "vllm:spec_decode_num_draft_tokens_total",
                       "vllm:spec_decode_num_accepted_tokens_total", "vllm:num_requests_running"])
        end = math.floor(time.time() / 15) * 15
        values = {"increase(vllm:spec_decode_num_drafts_total": ("100", "100", "50"),
                  "increase(vllm:spec_decode_num_draft_tokens_total": ("300", "300", "150"),
                  "increase(vllm:spec_decode_num_accepted_tokens_total": ("200", "200", "100"),
                  "sum by (model_name) (vllm:num_requests_running)": ("40", "40", "20")}
        found = next((v for k, v in values.items() if k in query), None)
        result = [] if found is None else [{"metric": {"model_name": "a"},
                                            "values": [[end - 30 + 15 * i, v] for i, v in enumerate(found)]}]
        if query == "count by (model_name, instance) (vllm:num_requests_running)":  # 10.0.0.2 stops
            result = [{"metric": {"model_name": "a", "instance": f"10.0.0.{n}:8000"},
                       "values": [[end - 30 + 15 * i, "1"] for i in range(points)]} for n, points in ((1, 3), (2, 2))]
        return ok({"resultType": "matrix", "result": result})

    def fleet_page(self):
        """The Live page's fleet view of a Prometheus that answers as :meth:`shrinking_route`, which
        stops when the page has been drawn once."""
        from streamlit.testing.v1 import AppTest
        with answering(self.shrinking_route) as url:
            at = AppTest.from_file(APP, default_timeout=60)
            at.session_state["live_source"] = "prometheus"
            at.session_state["live_prometheus"] = url
            at.session_state["live_range"] = "15m"
            at.run()
            at.switch_page(f"{PAGES}/live-metrics.py")
            return at.run()

    def test_the_fleet_page_says_a_server_stopped_reporting(self):
        """The running requests halve with the servers: the page says so above the model's figures."""
        at = self.fleet_page()
        assert not at.exception and not at.error, [e.value for e in at.error]
        said = [w.value for w in at.warning if w.value.startswith("1 of the 2 servers that reported this model at ")]
        assert said and "(10.0.0.2:8000 no longer)" in said[0].replace("\\", "")  # which (an SRE's pass)

    def test_the_fleet_page_says_why_it_offers_no_other_labels(self):
        """A Prometheus whose label lookup fails (here it answers /api/v1/labels with a query's
        matrix) while its queries answer: the figures come, and the page says why only instance and
        engine are offered to keep apart by (the options had shrunk without a word)."""
        at = self.fleet_page()
        assert not at.exception and not at.error and at.selectbox(key="live_apart_by").options[1:] == ["instance", "engine"]
        [said] = [c.value for c in at.caption if c.value.startswith('"Apart by" offers instance, engine only')]
        assert "names are not a list of text" in said

    def test_the_fleet_page_keeps_its_last_figures_when_prometheus_stops_answering(self):
        """An SRE's pass: with Prometheus stopped mid-poll the fleet view had kept only the error, its
        headline, verdict and charts gone, where a server's view keeps its last window as not current."""
        at = self.fleet_page()
        figures, drawn = [(m.label, m.value) for m in at.metric], len(at.get("vega_lite_chart"))
        assert figures and drawn and not at.error
        at.run()  # the next poll finds no Prometheus
        assert not at.exception and len(at.error) == 1 and "the connection was refused" in at.error[0].value
        assert any(w.value.startswith("Figures of the window ending ") for w in at.warning)
        assert [(m.label, m.value) for m in at.metric] == figures and len(at.get("vega_lite_chart")) == drawn


@pytest.mark.prometheus
class TestLivePage:
    def test_the_fleet_view_of_a_real_prometheus(self, fleet, measured):
        """The Live page's Prometheus source: the latest point per model, and the figures over time."""
        from streamlit.testing.v1 import AppTest
        base, _ = fleet
        at = AppTest.from_file(APP, default_timeout=60)
        at.session_state["live_source"] = "prometheus"
        at.session_state["live_prometheus"] = base
        at.session_state["live_range"] = "15m"
        at.run()
        at.switch_page(f"{PAGES}/live-metrics.py")
        at.run()
        assert not at.exception and not at.error, [e.value for e in at.error]
        rate = float(next(m.value for m in at.metric if m.label == "Acceptance rate (accepted/drafted)"))
        assert 0 < rate < 1 and any(c.value.startswith("From Prometheus:") for c in at.caption)
        # The verdict is at each server's batch, and says so (the sidebar's Qwen3-32B is confirmed
        # for the replay's model, which matches no preset).
        at.checkbox(key=next(c.key for c in at.checkbox if c.key.startswith("live_same_model:"))).check().run()
        running = float(next(m.value for m in at.metric if m.label == "Running requests"))
        [said] = [c.value for c in at.caption if c.value.startswith("Prometheus sums")]
        assert "over the 2 servers" in said and f"at {max(1, round(running / 2))} running" in said
        # Per position; acceptance and batch over time; and tokens per second over time where a point past
        # the servers' first has them (the first, whose window began before the series, has none).
        throughput = next(m.value for m in at.metric if m.label == "Generated tokens/s")
        assert len(at.get("vega_lite_chart")) == 1 + 2 + (throughput != "—")
        at.selectbox(key="live_apart_by").set_value("instance").run()
        assert not at.exception and not at.error, [e.value for e in at.error]
        (replicas,) = [e for e in at.expander if e.label.startswith("Apart, a row each")]
        table = replicas.dataframe[0].value
        assert len(table) == 2 and all(r.startswith("instance=127.0.0.1:") for r in table["Apart by (label=value)"])
        assert "Model" not in table.columns  # the section is the model's: the column had pushed α off the page
        # The labels the fleet's configuration adds are offered too: its traffic per workload.
        assert at.selectbox(key="live_apart_by").options[1:] == ["instance", "engine", "job", "workload"]
        assert not [c for c in at.caption if c.value.startswith('"Apart by" offers')]
        summed = float(next(m.value for m in at.metric if m.label == "Running requests"))
        assert table["Running requests (the live batch)"].sum() == pytest.approx(summed, abs=1)  # shown rounded
        # The headline stays summed by model: the caption says where the replicas are apart (an SRE's pass).
        assert any(c.value.startswith("Summed by Prometheus") and c.value.endswith(
            "The tables under each model keep them apart by instance.") for c in at.caption)
        at.selectbox(key="live_apart_by").set_value("workload").run()
        (apart,) = [e for e in at.expander if e.label.startswith("Apart, a row each")]
        assert sorted(apart.dataframe[0].value["Apart by (label=value)"]) == ["workload=chat", "workload=code"]


@pytest.mark.prometheus
def test_the_mean_context_of_finished_requests_through_a_real_prometheus(tmp_path):
    """An exporter at which, every second, 100 drafts of 3 tokens are made and 3 requests of 20
    tokens in and 64 out finish (vLLM's histograms, as its scrape writes them): Prometheus's
    increase() of their _sum over their _count gives P 60/3 = 20, O 192/3 = 64 and the context
    20 + 64/2 = 52, as two direct scrapes do (increase() stretches both by the same factor)."""
    started = time.monotonic()

    def metrics(path: str) -> tuple[int, str, bytes]:
        k = int(time.monotonic() - started) + 1
        labels = 'engine="0",model_name="m"'
        counters = "".join(f"# TYPE vllm:spec_decode_num_{name}_total counter\n"
                           f"vllm:spec_decode_num_{name}_total{{{labels}}} {value * k}\n"
                           for name, value in (("drafts", 100), ("draft_tokens", 300), ("accepted_tokens", 150)))
        return 200, "text/plain; version=0.0.4", (counters + finished_requests(3 * k, 60 * k, 192 * k)).encode()

    with fake(200, metrics) as url, prometheus_server([url.split("//", 1)[1]], tmp_path) as base:
        before = prom.parse(scrape.fetch_url(url + "/metrics"), time.time())
        wait_for_samples(base, servers=1, samples=4)
        [direct] = spec_decode_states(prom.parse(scrape.fetch_url(url + "/metrics"), time.time()), before)
        frame = prometheus.query_window(base, "3s")
    row = frame.iloc[0]
    assert (direct.mean_prompt_tokens, direct.mean_output_tokens, direct.mean_context) == (20, 64, 52)
    assert row["mean_prompt_tokens"] == pytest.approx(20, rel=1e-9)
    assert row["mean_output_tokens"] == pytest.approx(64, rel=1e-9)
    assert row["mean_context"] == pytest.approx(52, rel=1e-9)
    assert any("increase(vllm:request_prompt_tokens_sum[" in q for q in frame.attrs["queries"])
    assert any("increase(vllm:request_prompt_tokens_count[" in q for q in frame.attrs["queries"])


@pytest.mark.prometheus
def test_a_server_that_stops_leaves_the_fleet_s_count_and_is_said_to(tmp_path):
    """Two replay exporters of one model behind a real Prometheus; one stops. Prometheus marks its
    series stale at its next failed scrape, so the points after count one server where those before
    counted two, and the model's latest point says its sums fell with the server, not the traffic."""
    exporters = [replay.start(0, seed=seed) for seed in (1, 2)]
    try:
        targets = [e.url.split("//", 1)[1].split("/", 1)[0] for e in exporters]
        with prometheus_server(targets, tmp_path) as base:
            wait_for_samples(base, servers=2, samples=6)  # points of two servers before the stop
            stopped = time.time()
            exporters[1].stop()
            time.sleep(4 * SCRAPE_INTERVAL_S)  # a failed scrape, and a whole step after it
            frame = prometheus.query_figures(base, "20s", f"{2 * SCRAPE_INTERVAL_S}s")
    finally:
        for exporter in exporters:
            exporter.stop()
    rows = frame.reset_index()
    before = rows[rows["time"].map(lambda t: t.timestamp()) <= stopped]
    assert len(before) >= 2 and set(before["servers"]) == {2} and rows["servers"].iloc[-1] == 1
    said = windows.servers_dropped(rows["servers"], rows["time"], frame.attrs["stopped"][rows["model_name"].iloc[0]])
    assert said is not None and (said.params["now"], said.params["most"], said.params["gone"]) == (1, 2, targets[1])
    assert str(said).startswith("1 of the 2 servers that reported this model at ")


def test_a_row_s_per_position_figures_read_back_in_order():
    row = {"model_name": "m", "per_position_acceptance_10": 0.1, "per_position_acceptance_0": 0.8,
           "per_position_acceptance_1": float("nan"), "per_position_conditional_0": 0.8,
           "per_position_conditional_1": 0.5, "per_position_conditional_10": 0.2}
    # Positions in their order as numbers (0, 1, 10), not as text; NaN is a figure absent.
    assert prometheus.per_position(row) == ([0.8, None, 0.1], [0.8, 0.5, 0.2])
    assert prometheus.per_position({"model_name": "m"}) == ([], [])
    # A model drafting 3 beside one drafting 4: its fourth column is the other's, not an absent figure
    # of its own (a re-check: it had lost the link to the tail its rates give)
    three = {"per_position_acceptance_0": 0.8, "per_position_acceptance_1": 0.6, "per_position_acceptance_2": 0.4,
             "per_position_acceptance_3": float("nan"), "per_position_conditional_0": 0.8,
             "per_position_conditional_1": 0.75, "per_position_conditional_2": 2 / 3, "per_position_conditional_3": float("nan")}
    assert prometheus.per_position(three) == ([0.8, 0.6, 0.4], [0.8, 0.75, 2 / 3])
