"""Tests for specviz.results.schedule: the best γ at each batch, measured from a grid of runs."""

import json

import pandas as pd

from conftest import PRESETS, make_scenario

from specviz.results import explorer, schedule
from specviz.results.store import Store

# A SpecForge-shaped grid (its 2026 object): batches 1, 8, 32, 64; γ 1 and 3 against the plain run
# of each batch; two repetitions of each speculative setting.
GAINS = {1: (1.4, 2.0), 8: (1.35, 1.7), 32: (1.15, 1.1), 64: (0.95, 0.8)}
BASE = {1: 100.0, 8: 700.0, 32: 2000.0, 64: 3200.0}


def grid() -> bytes:
    metrics = lambda throughput: {"latency": 10.0, "output_throughput": throughput, "accept_length": 2.0}
    settings = []
    for batch, (gain_1, gain_3) in GAINS.items():
        settings.append({"batch_size": batch, "steps": 0, "topk": 0, "num_draft_tokens": 0,
                         "metrics": [metrics(BASE[batch])]})
        for gamma, gain in ((1, gain_1), (3, gain_3)):
            settings.append({"batch_size": batch, "steps": gamma, "topk": 1, "num_draft_tokens": gamma + 1,
                             "metrics": [metrics(BASE[batch] * gain), metrics(BASE[batch] * gain * 0.98)]})
    return json.dumps({"model": "org/eagle", "mtbench": settings}).encode()


def stored_runs(tmp_path, data: bytes) -> pd.DataFrame:
    store = Store(tmp_path / "s.duckdb")
    store.import_file("grid.json", data)
    return explorer.with_view_columns(store.runs())


class TestMeasuredDraftLengths:
    def test_the_best_gamma_at_each_batch(self, tmp_path):
        table = schedule.measured_draft_lengths(stored_runs(tmp_path, grid()))
        # By hand: the mean of gain and 0.98·gain; at 32, γ 1's 1.1385 beats γ 3's 1.089; at 64 none gains.
        assert list(table["batch"]) == [1, 8, 32, 64] and list(table["gamma"]) == [3, 3, 1, 0]
        assert list(table["measured_speedup"].round(4)) == [1.98, 1.683, 1.1385, 1.0]
        assert list(table["gammas"]) == [2] * 4 and list(table["runs"]) == [4] * 4
        assert set(table["draft_model"]) == {"org/eagle"} and set(table["workload"]) == {"mtbench"}

    def test_ranges_start_at_batch_1_and_merge_equal_lengths(self):
        table = pd.DataFrame({"batch": [8, 16, 32, 64], "gamma": [4, 4, 2, 0]})
        ranges = schedule.as_ranges(table)
        assert ranges.values.tolist() == [[1, 31, 4], [32, 63, 2], [64, 64, 0]]

    def test_no_table_without_plain_runs(self, tmp_path):
        only_speculative = json.loads(grid())
        only_speculative["mtbench"] = [s for s in only_speculative["mtbench"] if s["steps"] > 0]
        runs = stored_runs(tmp_path, json.dumps(only_speculative).encode())
        assert schedule.measured_draft_lengths(runs).empty


class TestBesideModel:
    def test_the_models_choice_among_the_measured_lengths(self, tmp_path):
        """The grid names no target or GPU: the scenario's (Qwen3-32B on an H100) stands in, at the
        median α of the grid's runs, choosing between the γ 1 and 3 that were measured. A batch no
        server of the setting holds gets no choice of the model."""
        data = json.loads(grid())
        data["mtbench"] += [{"batch_size": 100_000, "steps": gamma, "topk": 1, "num_draft_tokens": gamma + 1,
                             "metrics": [{"latency": 10.0, "output_throughput": 3000.0 * gain, "accept_length": 2.0}]}
                            for gamma, gain in ((0, 1.0), (1, 0.9), (3, 0.8))]
        table = schedule.beside_model(stored_runs(tmp_path, json.dumps(data).encode()), make_scenario(), PRESETS)
        assert list(table["batch"]) == [1, 8, 32, 64, 100_000]
        assert set(table["model_gamma"].dropna()) <= {0, 1, 3}
        assert table["fits"].tolist() == [True, True, True, True, False]
        assert table["model_gamma"].isna().tolist() == [False, False, False, False, True]
        assert (table["agree"] == (table["model_gamma"] == table["gamma"])).all()
        # The model's speedup at its best γ falls as the batch grows.
        assert table["model_speedup"].iloc[:4].is_monotonic_decreasing

    def test_a_tree_is_no_draft_length_of_the_model_s(self, tmp_path):
        """SpecForge's γ 7 at top-k 10 (60 draft tokens) had been set against the model's chain of 7
        (an analyst's pass): runs that drafted a tree are left out of the table."""
        data = json.loads(grid())
        data["mtbench"] += [{"batch_size": batch, "steps": 7, "topk": 10, "num_draft_tokens": 60,
                             "metrics": [{"latency": 10.0, "output_throughput": BASE[batch] * 3.0, "accept_length": 4.0}]}
                            for batch in BASE]
        table = schedule.beside_model(stored_runs(tmp_path, json.dumps(data).encode()), make_scenario(), PRESETS)
        assert list(table["gamma"]) == [3, 3, 1, 0] and set(table["model_gamma"].dropna()) <= {0, 1, 3}

    def test_no_runs_no_rows(self, tmp_path):
        only_speculative = json.loads(grid())
        only_speculative["mtbench"] = [s for s in only_speculative["mtbench"] if s["steps"] > 0]
        table = schedule.beside_model(stored_runs(tmp_path, json.dumps(only_speculative).encode()), make_scenario(),
                                      PRESETS)
        assert table.empty and {"model_gamma", "model_speedup", "fits", "agree"} <= set(table.columns)
