"""Tests for specviz.results.importers.specforge: SpecForge's benchmark of EAGLE-3 settings over SGLang."""

import json
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from conftest import parses_or_refuses

from specviz.results import explorer, importers
from specviz.results.store import Store

ROOT = Path(__file__).resolve().parent.parent
LINES = ROOT.parent / "shared" / "samples" / "2026" / "specforge" / "dev_result.jsonl"


def nested(settings: list[dict]) -> bytes:
    """The 2026 shape of bench_eagle3.py: the draft's path and, per benchmark, its settings."""
    return json.dumps({"model": "lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B", "mtbench": settings}).encode()


def metrics(latency: float, throughput: float, accept: float) -> dict:
    return {"latency": latency, "output_throughput": throughput, "accept_length": accept, "accuracy": None,
            "num_questions": 80,
            "per_request_accept_length": [accept, accept] if accept == 1.0 else [accept - 0.5, accept + 0.5]}


class TestLines:
    def test_the_real_file_is_six_runs_of_two_settings(self):
        parsed = importers.parse(LINES.name, LINES.read_bytes())
        assert parsed.format == "specforge-bench" and len(parsed.runs) == 6 and not parsed.warnings
        first, second = parsed.runs[:2]
        assert (first["concurrency"], first["num_speculative_tokens"], first["acceptance_length"]) == (8, 7, 4.14)
        assert (first["output_throughput"], first["duration_s"], first["workload"]) == (1321.79, 40.99, "mtbench")
        assert first["label"] == "eagle3 γ=7, top-k 10, 60 draft tokens" and first["spec_method"] == "eagle3"  # vLLM's case
        assert json.loads(first["extra"]) == {"completion_tokens": 54181, "topk": 10, "num_draft_tokens": 60}
        assert second["label"] == "eagle3 γ=3, top-k 1, 4 draft tokens"

    def test_repetitions_of_a_setting_are_one_series(self, tmp_path):
        store = Store(tmp_path / "s.duckdb")
        store.import_file(LINES.name, LINES.read_bytes())
        series = explorer.with_view_columns(store.runs())["series"]
        assert sorted(series.value_counts().items()) == [("eagle3 γ=3, top-k 1, 4 draft tokens · mtbench", 3),
                                                         ("eagle3 γ=7, top-k 10, 60 draft tokens · mtbench", 3)]
        # One name for one setting: the series' and the acceptance's (the analyst review: "EAGLE3 γ=3 …"
        # beside "eagle3 γ=3 …").
        runs = explorer.with_view_columns(store.runs())
        assert set(explorer.draft_settings(runs) + " · " + runs["workload"]) == set(series)


    @pytest.mark.parametrize("topk, said", [(10.0, ", top-k 10"), (None, ""), ({"a": 1}, ""), ("10", "")])
    def test_the_label_says_the_tree_as_the_draft_setting_does(self, tmp_path, topk, said):
        """The label had said "top-k 10.0", "top-k None" and "top-k {'a': 1}" where the explorer's draft
        setting said "top-k 10" and nothing (an attack pass)."""
        line = {"batch_size": 8, "steps": 7, "topk": topk, "num_draft_tokens": 60, "acc_length": 4.1, "duration": 41.0,
                "throughput": 1321.8, "benchmark": "mtbench"}
        store = Store(tmp_path / "s.duckdb")
        store.import_file("dev.jsonl", (json.dumps(line) + "\n").encode())
        runs = explorer.with_view_columns(store.runs())
        assert runs["label"].tolist() == [f"eagle3 γ=7{said}, 60 draft tokens"]
        assert runs["label"].tolist() == explorer.draft_settings(runs).tolist()


class TestNested:
    def test_each_repetition_a_run_and_steps_0_the_baseline(self, tmp_path):
        data = nested([{"batch_size": 8, "steps": 0, "topk": 0, "num_draft_tokens": 0, "num_samples": 80,
                        "metrics": [metrics(30.0, 1000.0, 1.0)]},
                       {"batch_size": 8, "steps": 3, "topk": 1, "num_draft_tokens": 4, "num_samples": 80,
                        "metrics": [metrics(20.0, 1500.0, 2.6), metrics(21.0, 1450.0, 2.5)]}])
        parsed = importers.parse("results_20260101_000000.jsonl", data)
        assert parsed.format == "specforge-bench" and len(parsed.runs) == 3
        plain, first, second = parsed.runs
        assert plain["num_speculative_tokens"] == 0 and "spec_method" not in plain and "label" not in plain
        assert first["draft_model"] == "lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B" and first["num_requests"] == 80
        assert json.loads(second["extra"])["repetition"] == 1
        # Each request's length is a request row of its run, not a list in extra: 2.5 ± 0.5, 2.6 ± 0.5.
        assert "per_request_accept_length" not in json.loads(second["extra"])
        assert parsed.requests.values.tolist() == [[0, 1.0], [0, 1.0], [1, 2.1], [1, 3.1], [2, 2.0], [2, 3.0]]
        store = Store(tmp_path / "s.duckdb")
        assert store.import_file("results.jsonl", data).requests == 6
        paired = explorer.pair_with_baselines(explorer.with_view_columns(store.runs()))
        # By hand: 1,500 / 1,000 and 1,450 / 1,000 output tokens/s, each against the plain run of batch 8.
        assert sorted(paired["measured_speedup"].round(3)) == [1.45, 1.5]

    def test_a_request_length_the_setting_cannot_give_is_refused_and_nothing_is_lost(self, tmp_path):
        """γ = 3 drafts and the target's own token: at most 4 tokens a step, at least 1."""
        store = Store(tmp_path / "s.duckdb")
        store.import_file(LINES.name, LINES.read_bytes())
        for impossible in (4.5, 0.5):
            data = nested([{"batch_size": 8, "steps": 3, "topk": 1, "num_draft_tokens": 4,
                            "metrics": [{**metrics(20.0, 1500.0, 2.6), "per_request_accept_length": [2.0, impossible]}]}])
            with pytest.raises(importers.IngestError) as refused:
                store.import_file("r.json", data)
            assert (refused.value.key, refused.value.params) == ("ingest.request_length_range", {
                "file": "r.json", "field": "per_request_accept_length", "record": 1, "value": impossible, "most": 4.0})
        assert len(store.runs()) == 6 and len(store.imports()) == 1

    def test_a_setting_whose_metrics_are_not_objects_is_refused(self):
        data = nested([{"batch_size": 8, "steps": 3, "topk": 1, "num_draft_tokens": 4, "metrics": [1, 2]}])
        with pytest.raises(importers.IngestError) as refused:
            importers.parse("r.jsonl", data)
        assert refused.value.key == "ingest.record_shape" and refused.value.params["format"] == "specforge-bench"

    def test_sglang_s_own_benchmark_is_not_claimed(self):
        line = {"backend": "sglang", "completed": 10, "accept_length": 2.0, "server_info": {}}
        assert importers.detect_format("s.jsonl", json.dumps(line).encode()) == "sglang-bench"


values = st.none() | st.booleans() | st.integers(-10, 10**6) | st.floats(allow_nan=False) | st.text(max_size=8) \
    | st.lists(st.floats(allow_nan=False), max_size=3)


class TestFuzzed:
    @settings(max_examples=60, deadline=None)
    @given(st.lists(st.dictionaries(st.sampled_from(["batch_size", "steps", "topk", "num_draft_tokens", "acc_length",
                                                     "duration", "throughput", "benchmark", "x"]), values),
                    min_size=1, max_size=3))
    def test_lines_never_crash(self, lines):
        lines = [{"batch_size": 1, "steps": 1, "acc_length": 1.0, **line} for line in lines]
        parses_or_refuses("r.jsonl", "\n".join(json.dumps(line) for line in lines).encode())

    @settings(max_examples=60, deadline=None)
    @given(st.dictionaries(st.sampled_from(["batch_size", "steps", "topk", "num_samples"]), values),
           st.lists(st.dictionaries(st.sampled_from(["latency", "output_throughput", "accept_length",
                                                     "num_questions", "y"]), values), min_size=1, max_size=2))
    def test_nested_never_crashes(self, setting, repetitions):
        parses_or_refuses("r.json", nested([{"steps": 1, **setting, "metrics": repetitions}]))
