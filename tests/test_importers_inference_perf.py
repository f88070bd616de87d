"""Tests for specviz.results.importers.inference_perf: inference-perf's lifecycle reports, a run per stage."""

import json
from pathlib import Path

from hypothesis import given, settings, strategies as st

from conftest import parses_or_refuses

from specviz.results import explorer, importers
from specviz.results.store import Store

ROOT = Path(__file__).resolve().parent.parent
RUN = ROOT.parent / "shared" / "samples" / "2026" / "inference_perf_0.5_two_stage"


def parsed(name: str) -> dict:
    result = importers.parse(f"{RUN.name}/{name}", (RUN / name).read_bytes())
    assert result.format == "inference-perf" and len(result.runs) == 1 and not result.warnings
    return result.runs[0]


class TestLifecycleReports:
    def test_a_stage_is_a_run_at_its_rate_in_milliseconds(self):
        run = parsed("stage_0_lifecycle_metrics.json")
        assert (run["request_rate"], run["num_requests"], run["failed_requests"], run["duration_s"]) == (1.0, 3, 1, 2.2)
        # Seconds in the file, milliseconds stored: TTFT mean 0.12751 s, request latency p90 1.28 s.
        assert round(run["mean_ttft_ms"], 2) == 127.51 and round(run["p90_e2el_ms"], 6) == 1280.0
        assert round(run["p50_itl_ms"], 3) == 111.111 and round(run["output_throughput"], 3) == 11.818
        assert run["label"] == RUN.name and json.loads(run["extra"])["stage"] == 0
        assert json.loads(run["extra"])["achieved_rate"] == 2.6666666666666665

    def test_the_summary_is_all_stages_with_no_rate(self):
        run = parsed("summary_lifecycle_metrics.json")
        assert "request_rate" not in run and run["num_requests"] == 5 and run["label"] == f"{RUN.name} · all stages"

    def test_a_folders_stages_are_one_line(self, tmp_path):
        store = Store(tmp_path / "s.duckdb")
        for name in ("stage_0_lifecycle_metrics.json", "stage_1_lifecycle_metrics.json"):
            store.import_file(f"{RUN.name}/{name}", (RUN / name).read_bytes())
        assert set(explorer.with_load(store.runs())["series"]) == {RUN.name}

    def test_only_an_object_with_a_load_summary_and_successes(self):
        sniff = importers.inference_perf.sniff
        assert sniff(importers.Source("x.json", json.dumps({"successes": {}}).encode())) == 0
        assert sniff(importers.Source("x.json", json.dumps([{"load_summary": {}, "successes": {}}] * 2).encode())) == 0
        assert sniff(importers.Source("x.json", json.dumps({"load_summary": {}, "successes": {}}).encode())) == 0.95


class TestFuzzed:
    @settings(max_examples=60, deadline=None)
    @given(st.dictionaries(st.sampled_from(["count", "requested_rate", "achieved_rate"]),
                           st.none() | st.floats(allow_nan=False) | st.text(max_size=4)),
           st.dictionaries(st.sampled_from(["mean", "median", "p90", "p99", "x"]),
                           st.none() | st.floats(allow_nan=False) | st.integers() | st.lists(st.floats(), max_size=2)))
    def test_never_crashes(self, load, statistics):
        doc = {"load_summary": load, "successes": {"count": 1, "latency": {"time_to_first_token": statistics}},
               "failures": {"count": statistics.get("mean")}}
        parses_or_refuses("stage_0_lifecycle_metrics.json", json.dumps(doc).encode())
