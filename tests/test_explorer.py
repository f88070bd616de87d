"""Tests for specviz.results.explorer: pairing, crossovers, predictions and calibration on known data."""

import json
import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from conftest import PRESETS, SAMPLES, make_scenario
from specviz import calculator, scenario, settings
from specviz.model import calibration, dtypes, spec, step
from specviz.results import explorer, prediction
from specviz.results.schema import RUN_COLUMNS
from specviz.results.store import Store

DATA = settings.get("SPECVIZ_DATA_DIR")
GPUS, MODELS = PRESETS.gpus, PRESETS.models
SCENARIO = make_scenario(target="Llama-3.1-8B")


def raw_frame(rows: list[dict]) -> pd.DataFrame:
    """Canonical runs as the store returns them (γ a nullable integer), from a few fields per row."""
    base = {c: None for c in RUN_COLUMNS}
    frame = pd.DataFrame([{**base, "run_id": str(i), "source_file": "results/f.csv", **r} for i, r in enumerate(rows)])
    return frame.astype({c: "Int32" if c == "num_speculative_tokens" else "float64" for c, k in RUN_COLUMNS.items()
                         if k in ("DOUBLE", "BIGINT", "INTEGER")})


def runs_frame(rows: list[dict]) -> pd.DataFrame:
    """:func:`raw_frame` with the explorer's shared columns."""
    return explorer.with_load(raw_frame(rows))


SWEEP = runs_frame(
    [{"workload": "chat", "concurrency": c, "output_throughput": base} for c, base in ((1, 100), (8, 600), (64, 2000))]
    + [{"workload": "chat", "concurrency": c, "output_throughput": sd, "spec_method": "eagle",
        "num_speculative_tokens": 4, "acceptance_length": 3.0, "label": "eagle"}
       for c, sd in ((1, 250), (8, 900), (64, 1800))])


@pytest.fixture(scope="module")
def example_runs():
    s = Store(":memory:")
    s.seed_examples(sorted((DATA / "examples").glob("*.csv")))
    runs = explorer.with_load(s.runs())
    s.close()
    return runs


class TestExampleHashes:
    def test_only_the_imports_of_origin_example(self):
        s = Store(":memory:")
        s.seed_examples(sorted((DATA / "examples").glob("*.csv")))
        s.import_file("examples/mine.csv", b"concurrency,output_throughput\n1,100\n")  # a user's, whatever its name
        hashes = explorer.example_hashes(s.imports())
        runs = s.runs()
        s.close()
        assert hashes == set(runs.loc[runs.source_file == "examples/example_sweep.csv", "content_hash"])
        assert len(hashes) == 1


class TestWithLoad:
    def test_request_rate_stands_in_for_missing_concurrency(self):
        frame = runs_frame([{"request_rate": 10.0}, {"concurrency": 4.0}])
        assert list(frame.load) == [10.0, 4.0] and list(frame.load_kind) == ["request_rate", "concurrency"]

    def test_an_infinite_rate_is_all_at_once_not_a_load(self):
        frame = runs_frame([{"request_rate": math.inf}, {"request_rate": math.inf, "concurrency": 8.0}])
        assert math.isnan(frame.load[0]) and frame.load_kind[0] == "all_at_once"
        assert frame.load[1] == 8.0 and frame.load_kind[1] == "concurrency"

    def test_origin_from_the_example_hashes_else_the_file_name(self):
        raw = raw_frame([{"content_hash": "a", "source_file": "examples/x.csv"},
                         {"content_hash": "b", "source_file": "examples/y.csv"}, {"content_hash": "c"}])
        assert list(explorer.with_load(raw, {"b"}).origin) == ["user", "example", "user"]
        assert list(explorer.with_load(raw).origin) == ["example", "example", "user"]

    def test_series_names_label_then_setting_and_file(self):
        frame = runs_frame([{"label": "A", "workload": "code"}, {"spec_method": "ngram", "num_speculative_tokens": 4},
                            {}])
        assert list(frame.series) == ["A · code", "ngram γ=4 · f.csv", "plain · f.csv"]

    def test_no_runs_no_names(self):
        assert explorer.with_load(raw_frame([{}]).iloc[:0])["series"].empty  # the store holds none: its columns, no rows

    def test_a_label_per_point_does_not_split_a_sweep(self):
        # GuideLLM names each benchmark of a sweep by its strategy: one line, not three points.
        per_point = runs_frame([{"label": f"concurrent {c}", "concurrency": c, "content_hash": "g"} for c in (1, 4, 8)]
                               + [{"label": "eagle3-head", "concurrency": c, "num_speculative_tokens": 3,
                                   "content_hash": "v"} for c in (1, 4)])
        assert list(per_point.series) == ["plain · f.csv"] * 3 + ["eagle3-head"] * 2

    def test_files_of_one_name_are_one_sweep_of_one_model(self):
        # AIPerf writes profile_export_aiperf.json in each run's folder: one model's folders are one line.
        sweep = runs_frame([{"content_hash": f"c{c}", "target_model": "m", "concurrency": c} for c in (1, 16)])
        assert list(sweep.series) == ["plain · f.csv"] * 2

    def test_runs_of_other_models_gpus_or_engines_are_never_one_series(self):
        """The real AIPerf files: qwen3.6-nvfp4 at concurrency 16 and Qwen3-0.6B at 1, both named
        profile_export_aiperf.json, were one line from 50 to 1,172 tokens/s. A name shared by runs of
        another model, GPU or engine says which, and only what differs."""
        frame = runs_frame([
            {"content_hash": "a", "target_model": "qwen3.6-nvfp4", "gpu": "RTX 5090", "concurrency": 16},
            {"content_hash": "b", "target_model": "Qwen/Qwen3-0.6B", "gpu": "RTX 5090", "concurrency": 1},
            {"content_hash": "c", "label": "mine", "engine": "vllm", "workload": "chat"},
            {"content_hash": "d", "label": "mine", "engine": "sglang", "workload": "chat"},
            {"content_hash": "e", "label": "mine", "workload": "chat"}])
        assert list(frame.series) == ["plain · f.csv · qwen3.6-nvfp4", "plain · f.csv · Qwen/Qwen3-0.6B",
                                      "mine · vllm · chat", "mine · sglang · chat", "mine · chat"]
        assert frame.group.nunique() == 5  # what tells the lines apart


class TestOneOrigin:
    def test_the_users_runs_else_the_examples_never_both(self):
        raw = raw_frame([{"content_hash": "a"}, {"content_hash": "b"}, {"content_hash": "c"}])
        frame = explorer.with_load(raw, {"b", "c"})
        users, origin = explorer.one_origin(frame)
        assert origin == "user" and list(users.content_hash) == ["a"]
        examples, origin = explorer.one_origin(frame, examples_wanted=True)
        assert origin == "example" and list(examples.content_hash) == ["b", "c"]
        only_examples, origin = explorer.one_origin(explorer.with_load(raw, {"a", "b", "c"}))
        assert origin == "example" and len(only_examples) == 3


class TestModelPreset:
    def test_a_served_name_to_its_preset(self):
        models = PRESETS.models
        assert scenario.model_preset("Qwen/Qwen3-32B", models) == "Qwen3-32B"
        assert scenario.model_preset("replay:Qwen/Qwen3-235B-A22B", models) == "Qwen3-235B-A22B"
        assert scenario.model_preset("meta-llama/Llama-3.1-8B-Instruct", models) == "Llama-3.1-8B"
        assert scenario.model_preset("swiss-ai/Apertus-v1.5-70B", models) is None
        assert scenario.model_preset("", models) is None


class TestNewestFirst:
    def test_newest_import_first_in_file_order(self):
        old, new = pd.Timestamp("2026-01-01"), pd.Timestamp("2026-02-01")
        frame = runs_frame([{"imported_at": old}, {"imported_at": old}, {"imported_at": new}, {"imported_at": new}])
        assert list(explorer.newest_first(frame).run_id) == ["2", "3", "0", "1"]


MIXED_LOADS = runs_frame([{"concurrency": 4.0, "output_throughput": 400}, {"request_rate": 10.0, "output_throughput": 900},
                          {"concurrency": 8.0, "request_rate": 5.0, "output_throughput": 700},
                          {"concurrency": 16.0, "request_rate": math.inf, "output_throughput": 1500},
                          {"request_rate": math.inf, "output_throughput": 2000}, {"concurrency": 0.0}])


class TestOnLoadAxis:
    def test_concurrency_and_request_rate_are_separate_axes(self):
        by_concurrency = explorer.on_load_axis(MIXED_LOADS, "concurrency")
        by_rate = explorer.on_load_axis(MIXED_LOADS, "request_rate")
        assert list(by_concurrency.run_id) == ["0", "2", "3"] and list(by_concurrency.load) == [4, 8, 16]
        assert list(by_rate.run_id) == ["1", "2"] and list(by_rate.load) == [10, 5]  # never ∞
        assert set(by_rate.load_kind) == {"request_rate"}


class TestInfiniteRateRuns:
    def test_listed_where_the_axis_has_no_place_for_them(self):
        assert list(explorer.infinite_rate_runs(MIXED_LOADS, "concurrency").run_id) == ["4"]
        assert list(explorer.infinite_rate_runs(MIXED_LOADS, "request_rate").run_id) == ["3", "4"]


class TestOtherAxisRuns:
    def test_the_runs_only_the_other_axis_places(self):
        assert list(explorer.other_axis_runs(MIXED_LOADS, "concurrency").run_id) == ["1"]
        # Run 3 (concurrency, rate ∞) is listed by infinite_rate_runs on the rate axis, not here too.
        assert list(explorer.other_axis_runs(MIXED_LOADS, "request_rate").run_id) == ["0"]


class TestRunsWithoutLoad:
    def test_neither_a_concurrency_nor_a_rate(self):
        frame = runs_frame([{"concurrency": 2.0}, {"request_rate": 1.0}, {"request_rate": math.inf}, {},
                            {"concurrency": 0.0}])
        assert list(explorer.runs_without_load(frame).run_id) == ["3", "4"]


class TestGroupsWithout:
    def test_groups_with_no_point_of_the_metric(self):
        frame = explorer.with_group(runs_frame([{"label": "a", "concurrency": 1.0, "p50_itl_ms": 5.0},
                                                {"label": "b", "concurrency": 1.0}, {"concurrency": 2.0},
                                                {"label": "a", "concurrency": 2.0}]), "label")
        assert explorer.groups_without(frame, "p50_itl_ms") == 2  # b and the run without a label
        assert explorer.groups_without(frame.assign(p50_itl_ms=1.0), "p50_itl_ms") == 0


class TestRateText:
    @pytest.mark.parametrize("rate, text", [(math.inf, "∞"), (2.5, "2.5"), (10.0, "10"), (math.nan, None)])
    def test_infinity_as_a_sign_and_missing_as_nothing(self, rate, text):
        assert explorer.rate_text(rate) == text


def sweep_extra(max_num_seqs: int, run: int) -> str:
    """``extra`` as the vLLM importer keeps it for a run of ``vllm bench sweep``."""
    return json.dumps({"max_num_seqs": max_num_seqs, "std_ttft_ms": 300.0 + run, "backend": "openai",
                       "sweep": {"serve": {"max_num_seqs": float(max_num_seqs)}}, "ttfts": [1.0, 2.0]})


SWEEP_EXTRA = runs_frame([{"concurrency": c, "output_throughput": 100.0 * c * seqs, "extra": sweep_extra(seqs, i)}
                          for i, (seqs, c) in enumerate((s, c) for s in (4, 16) for c in (1.0, 2.0, 4.0))]
                         + [{"concurrency": 1.0, "output_throughput": 50.0}])


class TestExtraKeys:
    def test_settings_that_vary_and_repeat(self):
        # std_ttft_ms differs on every run (a measurement), backend never (no use), ttfts is a list.
        assert explorer.extra_keys(SWEEP_EXTRA) == ["extra.max_num_seqs", "extra.sweep.serve.max_num_seqs"]

    def test_none_without_extra(self):
        assert explorer.extra_keys(SWEEP) == []

    @pytest.mark.parametrize("depth", [900, 5_000])  # an import decodes 900; 5,000 is past any stack
    def test_nesting_as_deep_as_a_file_holds(self, depth):
        deep = '{"a": ' * depth + "1" + "}" * depth
        runs = SWEEP_EXTRA.assign(extra=[deep] * len(SWEEP_EXTRA))
        assert explorer.extra_keys(runs) == []
        groups = explorer.with_group(runs, "extra." + ".".join(["a"] * depth))["group"].tolist()
        assert groups == (["1"] if depth < 1_000 else [None]) * len(runs)


class TestWithGroup:
    def test_grouping_by_an_extra_key(self):
        nested = explorer.with_group(SWEEP_EXTRA, "extra.sweep.serve.max_num_seqs")
        top = explorer.with_group(SWEEP_EXTRA, "extra.max_num_seqs")
        assert list(nested.group[:6]) == list(top.group[:6]) == ["4"] * 3 + ["16"] * 3  # 4.0 and 4 are one setting
        assert pd.isna(nested.group.iloc[6]) and pd.isna(top.group.iloc[6])
        peaks = explorer.sweep_peaks(top)
        assert sorted(peaks.output_throughput) == [50, 1600, 6400]  # a peak per max_num_seqs line, and the unset one

    def test_grouping_by_a_column(self):
        frame = runs_frame([{"target_model": "m"}, {}])
        group = explorer.with_group(frame, "target_model").group
        assert group[0] == "m" and pd.isna(group[1])


class TestIsSpeculative:
    @pytest.mark.parametrize("run", [{}, {"num_speculative_tokens": 0}, {"spec_method": "eagle", "num_speculative_tokens": 0},
                                     {"spec_method": "None"}, {"spec_method": "OFF"}, {"spec_method": " no "},
                                     {"spec_method": "Disabled"}, {"spec_method": ""}])
    def test_plain_runs(self, run):
        assert not explorer.is_speculative(runs_frame([run])).iloc[0]

    @pytest.mark.parametrize("run", [{"spec_method": "eagle"}, {"num_speculative_tokens": 4},
                                     {"acceptance_length": 2.5}, {"acceptance_rate": 0.6}])
    def test_speculative_runs(self, run):
        assert explorer.is_speculative(runs_frame([run])).iloc[0]


class TestPairWithBaselines:
    def test_plain_runs_marked_gamma_zero_or_none_are_baselines(self):
        # A user's own sweep: plain runs with γ = 0 (or method "none") beside γ = 4 runs.
        frame = runs_frame([{"concurrency": 1, "output_throughput": 100, "spec_method": "eagle", "num_speculative_tokens": 0},
                            {"concurrency": 8, "output_throughput": 600, "spec_method": "none"},
                            {"concurrency": 1, "output_throughput": 250, "spec_method": "eagle", "num_speculative_tokens": 4},
                            {"concurrency": 8, "output_throughput": 900, "spec_method": "eagle", "num_speculative_tokens": 4}])
        paired = explorer.pair_with_baselines(frame)
        assert list(paired.baseline_run_id) == ["0", "1"]
        np.testing.assert_allclose(paired.measured_speedup, [2.5, 1.5])

    def test_endpoint_is_no_key_and_a_missing_engine_matches(self):
        frame = runs_frame([{"concurrency": 1, "output_throughput": 100, "endpoint": "openai-chat"},
                            {"concurrency": 1, "output_throughput": 200, "num_speculative_tokens": 4,
                             "engine": "vllm", "endpoint": "vllm"}])
        assert explorer.pair_with_baselines(frame).measured_speedup.tolist() == [2.0]

    def test_the_same_engine_wins_and_another_engine_never_pairs(self):
        frame = runs_frame([{"concurrency": 1, "output_throughput": 100, "engine": "vllm"},
                            {"concurrency": 1, "output_throughput": 50},
                            {"concurrency": 1, "output_throughput": 200, "engine": "sglang"},
                            {"concurrency": 1, "output_throughput": 300, "num_speculative_tokens": 4, "engine": "vllm"},
                            {"concurrency": 1, "output_throughput": 300, "num_speculative_tokens": 4, "engine": "tgi"}])
        paired = explorer.pair_with_baselines(frame).set_index("engine")
        assert paired.loc["vllm", "baseline_run_id"] == "0"
        assert paired.loc["tgi", "baseline_run_id"] == "1"  # the one that names no engine

    def test_request_rates_match_and_infinity_counts_as_none(self):
        frame = runs_frame([{"request_rate": 10.0, "output_throughput": 100}, {"request_rate": 30.0, "output_throughput": 300},
                            {"request_rate": 10.0, "output_throughput": 150, "spec_method": "eagle"},
                            {"concurrency": 8, "output_throughput": 400},
                            {"concurrency": 8, "request_rate": math.inf, "output_throughput": 600, "spec_method": "eagle"}])
        paired = explorer.pair_with_baselines(frame)
        assert dict(zip(paired.run_id, paired.baseline_run_id)) == {"2": "0", "4": "3"}

    def test_examples_never_pair_with_user_runs(self):
        frame = explorer.with_load(raw_frame([{"concurrency": 1, "output_throughput": 100, "content_hash": "ex"},
                                              {"concurrency": 1, "output_throughput": 200, "spec_method": "eagle"}]),
                                   {"ex"})
        assert explorer.pair_with_baselines(frame).empty

    def test_throughput_ratio_at_equal_concurrency(self):
        paired = explorer.pair_with_baselines(SWEEP)
        assert list(paired.concurrency) == [1, 8, 64]
        np.testing.assert_allclose(paired.measured_speedup, [2.5, 1.5, 0.9])

    def test_tpot_ratio_where_throughput_is_missing(self):
        frame = runs_frame([{"concurrency": 1, "mean_tpot_ms": 10.0},
                            {"concurrency": 1, "mean_tpot_ms": 4.0, "spec_method": "eagle"}])
        assert explorer.pair_with_baselines(frame).measured_speedup[0] == 2.5

    def test_no_baseline_no_pair(self):
        assert explorer.pair_with_baselines(SWEEP[SWEEP.spec_method.notna()]).empty


class TestUnpairedSpeculative:
    def test_speculative_runs_without_a_baseline(self):
        eagle = {"concurrency": 1, "spec_method": "eagle", "num_speculative_tokens": 4}
        frame = runs_frame([{"workload": "chat", "concurrency": 1, "output_throughput": 100},
                            {**eagle, "workload": "chat", "output_throughput": 250},
                            {**eagle, "workload": "code", "output_throughput": 300}])
        unpaired = explorer.unpaired_speculative(frame, explorer.pair_with_baselines(frame))
        assert list(unpaired.run_id) == ["2"] and list(unpaired.series) == ["eagle γ=4 · f.csv · code"]

    def test_none_when_every_one_pairs(self):
        assert explorer.unpaired_speculative(SWEEP, explorer.pair_with_baselines(SWEEP)).empty


class TestCrossoverConcurrency:
    def test_first_losing_concurrency(self):
        crossover = explorer.crossover_concurrency(explorer.pair_with_baselines(SWEEP))
        assert crossover.crossover_concurrency.tolist() == [64]


class TestSweepPeaks:
    def test_peak_per_series(self):
        peaks = explorer.sweep_peaks(SWEEP).set_index("series")
        assert peaks.loc["eagle · chat", "load"] == 64 and peaks.loc["eagle · chat", "output_throughput"] == 1800

    def test_example_sweep_peaks_at_the_top_concurrency(self, example_runs):
        assert set(explorer.sweep_peaks(example_runs).load) == {128}


class TestWorkloadAcceptance:
    def test_examples_follow_seed_002s_order(self, example_runs):
        summary = explorer.workload_acceptance(example_runs).set_index("workload")
        assert set(summary.origin) == {"example"}
        assert summary.loc["json", "acceptance_length"] > summary.loc["code", "acceptance_length"] > summary.loc["chat", "acceptance_length"]
        assert summary.loc["chat", "zero_accept_rate"] == pytest.approx(0.27)

    def test_examples_are_never_averaged_with_user_runs(self, example_runs):
        mine = runs_frame([{"workload": "chat", "acceptance_length": 1.5, "spec_method": "eagle"}])
        summary = explorer.workload_acceptance(pd.concat([example_runs, mine], ignore_index=True))
        chat = summary[summary.workload == "chat"].set_index("origin")
        assert chat.loc["user", "acceptance_length"] == 1.5 and chat.loc["user", "runs"] == 1
        assert chat.loc["example", "acceptance_length"] == pytest.approx(2.4, rel=0.02) and chat.loc["example", "runs"] == 8

    def test_a_missing_figure_stays_missing(self):
        summary = explorer.workload_acceptance(runs_frame([{"workload": "chat", "acceptance_length": 2.0}]))
        assert summary.acceptance_length.tolist() == [2.0] and summary.zero_accept_rate.isna().all()

    def test_a_plain_run_is_no_acceptance(self):
        """SpecForge's baseline (steps 0) reports an acceptance length of 1: no draft, nothing
        accepted. The workload's mean is the speculative run's 2.6, not (1 + 2.6) / 2 = 1.8."""
        summary = explorer.workload_acceptance(runs_frame([
            {"workload": "mtbench", "num_speculative_tokens": 0, "acceptance_length": 1.0},
            {"workload": "mtbench", "num_speculative_tokens": 3, "spec_method": "EAGLE3", "acceptance_length": 2.6}]))
        assert summary.acceptance_length.tolist() == [2.6] and summary.runs.tolist() == [1]


    def test_two_pairs_of_one_setting_are_averaged_apart(self):
        """One method and γ on two targets accept otherwise: each pair is its own row, named."""
        summary = explorer.workload_acceptance(runs_frame([
            {"workload": "chat", "spec_method": "eagle3", "num_speculative_tokens": 3, "acceptance_length": 3.2,
             "target_model": "Llama-3.1-8B", "draft_model": "EAGLE3-LLaMA3.1-8B"},
            {"workload": "chat", "spec_method": "eagle3", "num_speculative_tokens": 3, "acceptance_length": 2.4,
             "target_model": "Qwen3-32B"}])).set_index("draft_setting")
        assert summary["acceptance_length"].to_dict() == {"eagle3 γ=3 · Llama-3.1-8B + EAGLE3-LLaMA3.1-8B": 3.2,
                                                          "eagle3 γ=3 · Qwen3-32B": 2.4}

    def test_each_draft_setting_is_averaged_apart(self):
        """The real SpecForge file: mtbench at γ 7 with a top-k 10 tree (about 4.4 tokens a step) and
        at γ 3 in a chain (about 2.6) averaged to one 3.49. Each setting is its own row, named as the
        series name their method and γ, with the tree where the file gives it."""
        s = Store(":memory:")
        s.import_file("dev_result.jsonl", (SAMPLES / "2026" / "specforge" / "dev_result.jsonl").read_bytes())
        summary = explorer.workload_acceptance(explorer.with_load(s.runs())).set_index("draft_setting")
        s.close()
        assert list(summary.workload) == ["mtbench"] * 2 and list(summary.runs) == [3, 3]
        assert summary.loc["EAGLE3 γ=3, top-k 1, 4 draft tokens", "acceptance_length"] == pytest.approx(7.67 / 3)
        assert summary.loc["EAGLE3 γ=7, top-k 10, 60 draft tokens", "acceptance_length"] == pytest.approx(13.25 / 3)

    def test_a_tree_as_sglang_names_it_and_a_chain_without_one(self):
        tree = lambda k: json.dumps({"server_info": {"speculative_eagle_topk": k, "speculative_num_draft_tokens": 8}})
        summary = explorer.workload_acceptance(runs_frame([
            {"workload": "chat", "spec_method": "EAGLE", "num_speculative_tokens": 3, "acceptance_length": 2.0,
             "extra": tree(1)},
            {"workload": "chat", "spec_method": "EAGLE", "num_speculative_tokens": 3, "acceptance_length": 3.0,
             "extra": tree(4)},
            {"workload": "chat", "spec_method": "eagle", "num_speculative_tokens": 4, "acceptance_length": 2.5}]))
        assert dict(zip(summary.draft_setting, summary.acceptance_length)) == {
            "EAGLE γ=3, top-k 1, 8 draft tokens": 2.0, "EAGLE γ=3, top-k 4, 8 draft tokens": 3.0, "eagle γ=4": 2.5}


class TestRunTokens:
    def test_tokens_per_request_from_the_throughputs(self):
        """2 requests/s, 200 output tokens/s and 4,200 tokens/s in all: 100 out and 2,000 in a request."""
        runs = raw_frame([{"request_throughput": 2.0, "output_throughput": 200.0, "total_token_throughput": 4200.0},
                          {"request_throughput": 2.0, "output_throughput": 200.0},  # no total: unknown
                          {"request_throughput": 0.0, "output_throughput": 200.0, "total_token_throughput": 4200.0},
                          {"request_throughput": 400.0, "output_throughput": 200.0, "total_token_throughput": 4200.0}])
        tokens = prediction.run_tokens(runs)
        assert tokens.iloc[0].tolist() == [2000.0, 100.0]

        assert tokens.iloc[1:].isna().all(axis=None)  # no total; no requests; half a token out a request


@pytest.mark.samples
def test_a_file_s_own_tokens_per_request_come_first():
    """GuideLLM's tokens per second are means of rate series: their ratio gave 513 tokens in a
    request where its requests held 257.1 (its prompt_token_count mean) and 128 out."""
    store = Store(":memory:")
    store.import_file("guidellm_benchmarks.json", (SAMPLES / "guidellm_benchmarks.json").read_bytes())
    tokens = prediction.run_tokens(store.shown_runs({}).frame)
    assert tokens.iloc[0].tolist() == [257.0, 128.0]


def loaded_runs(chosen, costs: step.Costs, batch: list[float], prompt: int, output: int) -> pd.DataFrame:
    """Paired runs of a steady load of requests of ``prompt`` tokens in and ``output`` out, measured on
    the step model at ``costs`` (each step carrying the arriving prompts, at the requests' mean context),
    with the throughputs a benchmark tool reports for them."""
    b = np.asarray(batch, dtype=float)
    truth = step.step(chosen.gpu, chosen.target, chosen.draft, batch=b, gamma=4, context=prompt + output / 2,
                      acceptance_length=3.2, tp=chosen.tp, costs=costs, prompt_tokens=prompt,
                      output_tokens=output)["speedup"]
    served = lambda rate: {"output_throughput": rate, "request_throughput": rate / output,
                           "total_token_throughput": rate * (prompt + output) / output}
    return explorer.pair_with_baselines(runs_frame(
        [{"concurrency": c, **served(100.0 * c)} for c in batch]
        + [{"concurrency": c, **served(100.0 * c * s), "spec_method": "eagle", "num_speculative_tokens": 4,
            "acceptance_length": 3.2, "label": "eagle"} for c, s in zip(batch, truth)]))


class TestLoads:
    EAGLE = replace(SCENARIO, draft=step.Draft("eagle"), draft_id="eagle")
    TRUE = step.Costs(mfu=0.6, mbu=0.8, overlap=0.0, step_ms=2.0, token_us=12.0)

    def test_a_run_of_known_tokens_is_predicted_at_its_load(self):
        paired = loaded_runs(self.EAGLE, self.TRUE, [1, 16, 64], 2000, 100)
        predicted = prediction.predict(paired, self.EAGLE, PRESETS, 1024, loads=True)
        loaded = scenario.steady_load(self.EAGLE, 2000, 100)
        alpha = predicted.alpha.to_numpy()
        expected = calculator.evaluate_scenario(loaded, alpha, 4, [1, 16, 64], 2050)["speedup"]
        np.testing.assert_allclose(predicted.predicted_speedup, expected, rtol=1e-12)
        assert (predicted.prompt_tokens == 2000).all() and (predicted.output_tokens == 100).all()
        assert predicted.setting[0] == "Llama-3.1-8B · H100-SXM · eagle · vllm-v1 · ISL 2000 · OSL 100"
        decoding = prediction.predict(paired, self.EAGLE, PRESETS, 1024)  # the default: decoding only
        assert decoding.prompt_tokens.isna().all() and (decoding.predicted_speedup > predicted.predicted_speedup).all()
        unknown = prediction.predict(explorer.pair_with_baselines(SWEEP), SCENARIO, PRESETS, 0, loads=True)
        pd.testing.assert_series_equal(unknown.predicted_speedup,
                                       prediction.predict(explorer.pair_with_baselines(SWEEP), SCENARIO, PRESETS).predicted_speedup)

    def test_a_sweep_s_runs_of_a_few_tokens_apart_share_their_median_load(self):
        """vLLM's random dataset draws each request's lengths: one file's runs came out 264–275 tokens
        out of 999 in. Within 20 % of their median they are one load (and one calibration); a run of
        another load stays apart."""
        paired = loaded_runs(self.EAGLE, self.TRUE, [1, 8, 32], 999, 270)
        paired["output_throughput"] *= [264 / 270, 1.0, 275 / 270]  # their tokens out: 264, 270 and 275
        paired["total_token_throughput"] = paired["output_throughput"] + 999 * paired["request_throughput"]
        far = loaded_runs(self.EAGLE, self.TRUE, [64], 4000, 100)
        predicted = prediction.predict(pd.concat([paired, far], ignore_index=True), self.EAGLE, PRESETS, 1024,
                                     loads=True)
        assert predicted.output_tokens.tolist() == [270, 270, 270, 100]
        assert predicted.prompt_tokens.tolist() == [999, 999, 999, 4000]
        assert predicted.setting.nunique() == 2

    def test_a_calibration_at_the_runs_load_finds_the_costs_that_made_them(self):
        """Runs of 2,000 tokens in and 100 out: fitted at their load, the fit meets every point and its
        band holds the speedup the costs that made them give at a batch between; fitted decoding only,
        no costs meet them as closely."""
        paired = loaded_runs(self.EAGLE, self.TRUE, [1, 8, 32, 64, 128], 2000, 100)
        predicted = prediction.predict(paired, self.EAGLE, PRESETS, 1024, loads=True)
        (fit,) = prediction.calibrate_settings(predicted, self.EAGLE, PRESETS, 1024, loads=True)
        assert fit.setting.endswith("ISL 2000 · OSL 100") and fit.scenario.prefill and fit.scenario.context == 2050
        assert fit.rms_error < 0.01 and not fit.warnings
        band = fit.fit.predict(16, 4, 2050, 3.2)
        true_16 = step.step(self.EAGLE.gpu, self.EAGLE.target, self.EAGLE.draft, batch=16, gamma=4, context=2050,
                            acceptance_length=3.2, costs=self.TRUE, prompt_tokens=2000, output_tokens=100)["speedup"]
        assert band["low"][0] <= float(true_16) <= band["high"][0]
        (decoding,) = prediction.calibrate_settings(prediction.predict(paired, self.EAGLE, PRESETS, 1024), self.EAGLE,
                                                  PRESETS, 1024)
        assert decoding.rms_error > 30 * fit.rms_error and "fit.no_solution" in decoding.warnings  # 0.31 and 0.006
        # The calibration in use predicts its runs as the calculator opened at its scenario would.
        again = prediction.predict(paired, self.EAGLE, PRESETS, 1024, prediction.calibration_in_use("step", [fit], self.EAGLE),
                                 loads=True)
        assert (again.costs == "calibrated").all()
        np.testing.assert_allclose(again.predicted_speedup, calculator.evaluate_scenario(
            fit.scenario, again.alpha.to_numpy(), 4, again.concurrency.to_numpy(), 2050)["speedup"], rtol=1e-12)


class TestPredict:
    def test_alpha_comes_from_the_acceptance_length(self):
        predicted = prediction.predict(explorer.pair_with_baselines(SWEEP), SCENARIO, PRESETS)
        assert predicted.alpha[0] == pytest.approx(spec.alpha_from_acceptance_length(3.0, 4))
        # The runs name no model or GPU: the scenario's, with the EAGLE head their method names.
        eagle = replace(SCENARIO, draft=step.Draft("eagle"), draft_id="eagle")
        direct = calculator.evaluate_scenario(eagle, predicted.alpha[0], 4, 1, 0)["speedup"]
        assert predicted.predicted_speedup[0] == pytest.approx(float(direct))
        assert predicted.error[0] == pytest.approx(2.5 - float(direct))
        low, high = calculator.speedup_band(eagle, predicted.alpha[0], 4, 1, 0)
        assert (predicted.predicted_low[0], predicted.predicted_high[0]) == pytest.approx((float(low), float(high)))
        assert predicted.setting[0] == "Llama-3.1-8B · H100-SXM · eagle · vllm-v1" and not predicted.own_setting[0]

    def test_each_run_in_its_own_setting(self, example_runs):
        """The examples name Llama-3.1-8B on an H100: predicted so, whatever the sidebar says."""
        paired = explorer.pair_with_baselines(example_runs)
        qwen = make_scenario()
        theirs = prediction.predict(paired, qwen, PRESETS, 1024)
        mine = prediction.predict(paired, SCENARIO, PRESETS, 1024)
        assert theirs.own_setting.all() and set(theirs.setting.str.split(" · ").str[0]) == {"Llama-3.1-8B"}
        pd.testing.assert_series_equal(theirs.predicted_speedup, mine.predicted_speedup)

    def test_a_calibration_in_use_predicts_its_setting_s_runs(self):
        """The settings fitted without warnings are predicted at their fitted costs, as the calculator
        opened there predicts them; a ratios fit predicts every run, without a band; a suspect fit none."""
        paired = explorer.pair_with_baselines(SWEEP)
        preset = prediction.predict(paired, SCENARIO, PRESETS)
        label = preset.setting[0]
        fitted = replace(SCENARIO, draft=step.Draft("eagle"), draft_id="eagle",
                         costs=replace(SCENARIO.costs, step_ms=2.0, token_us=20.0))
        one = prediction.SettingFit(label, fitted, None, 2, 0.0, [])
        use = prediction.calibration_in_use("step", [one], SCENARIO)
        assert use == {label: fitted}
        calibrated = prediction.predict(paired, SCENARIO, PRESETS, calibrated=use)
        alpha = calibrated.alpha[0]
        low, high = calculator.speedup_band(fitted, alpha, 4, 1, 0)
        expected = (float(calculator.evaluate_scenario(fitted, alpha, 4, 1, 0)["speedup"]), float(low), float(high))
        assert tuple(calibrated.loc[0, ["predicted_speedup", "predicted_low", "predicted_high"]]) == pytest.approx(expected)
        assert calibrated.costs[0] == "calibrated" and preset.costs[0] == "preset"
        assert calibrated.predicted_speedup[0] != pytest.approx(preset.predicted_speedup[0])
        assert prediction.calibration_in_use("step", [replace(one, warnings=["fit.edge"])], SCENARIO) == {}
        ratios = {"verify_cost": 1.2, "draft_cost": 0.05, "rms_error": 0.0, "points": 2}
        given = prediction.calibration_in_use("ratios", ratios, SCENARIO)
        by_ratios = prediction.predict(paired, SCENARIO, PRESETS, calibrated=given)
        assert by_ratios.predicted_speedup[0] == pytest.approx(float(spec.speedup(alpha, 4, 1.2, 0.05)))
        assert by_ratios.predicted_low[0] == by_ratios.predicted_high[0] == by_ratios.predicted_speedup[0]
        assert prediction.calibration_in_use("ratios", {**ratios, "verify_cost": 0.9}, SCENARIO) is None
        assert prediction.calibration_in_use("step", None, SCENARIO) is None

    def test_vllm_rate_converts_through_gamma(self):
        frame = runs_frame([{"concurrency": 1, "output_throughput": 100},
                            {"concurrency": 1, "output_throughput": 200, "num_speculative_tokens": 4,
                             "acceptance_rate": 0.5904}])
        predicted = prediction.predict(explorer.pair_with_baselines(frame), SCENARIO, PRESETS)
        assert predicted.alpha[0] == pytest.approx(0.8, abs=1e-6)  # not 0.5904

    def test_rows_without_gamma_get_no_prediction(self):
        frame = runs_frame([{"concurrency": 1, "output_throughput": 100},
                            {"concurrency": 1, "output_throughput": 200, "spec_method": "eagle"}])
        predicted = prediction.predict(explorer.pair_with_baselines(frame), SCENARIO, PRESETS)
        assert math.isnan(predicted.predicted_speedup[0]) and math.isnan(predicted.predicted_low[0])


class TestCalibrateRatios:
    def test_recovers_exact_costs(self):
        g = np.array([2, 4, 6, 8, 3])
        alpha = np.array([0.6, 0.7, 0.8, 0.75, 0.9])
        measured = spec.speedup(alpha, g, 1.3, 0.07)
        frame = pd.DataFrame({"alpha": alpha, "num_speculative_tokens": g, "measured_speedup": measured})
        fit = prediction.calibrate_ratios(frame)
        assert fit["verify_cost"] == pytest.approx(1.3) and fit["draft_cost"] == pytest.approx(0.07)
        assert fit["rms_error"] < 1e-12

    def test_too_few_points(self):
        assert prediction.calibrate_ratios(pd.DataFrame({"alpha": [0.5], "num_speculative_tokens": [4],
                                                        "measured_speedup": [1.5]})) is None


class TestRunPresets:
    def test_names_as_benchmark_tools_write_them(self):
        runs = pd.DataFrame({"target_model": ["meta-llama/Llama-3.1-8B-Instruct", "Llama-3.1-8B", "Qwen/Qwen3-32B-FP8",
                                              "lmsys/vicuna-7b-v1.3", None],
                             "gpu": ["NVIDIA H100 80GB HBM3", "H100-SXM", "NVIDIA A100-SXM4-80GB", "A100", "H100 PCIe"]})
        found = prediction.run_presets(runs, MODELS, GPUS)
        assert found.target.tolist()[:3] == ["Llama-3.1-8B", "Llama-3.1-8B", "Qwen3-32B"]
        assert found.target[3:].isna().all()
        # An A100 without its memory, and an H100 PCIe, name no preset.
        assert found.gpu.tolist()[:3] == ["H100-SXM", "H100-SXM", "A100-80GB"] and found.gpu[3:].isna().all()


class TestRunSettings:
    def test_what_the_runs_name_and_the_scenarios_otherwise(self):
        runs = pd.DataFrame({
            "target_model": ["meta-llama/Llama-3.1-70B-Instruct", "Qwen/Qwen3-32B", "my-own-model", None],
            "gpu": ["NVIDIA H100 80GB HBM3", "H200", "H100", None],
            "spec_method": ["eagle3", "draft_model", "MTP", None],
            "draft_model": [None, "Qwen/Qwen3-0.6B", None, "a draft of my own"],
            "engine": ["vllm", "sglang", "vllm", "tgi"], "engine_version": ["0.7.3", None, "0.11.0", None]})
        found = prediction.run_settings(runs, SCENARIO, PRESETS)
        assert found.to_dict("records") == [
            {"target": "Llama-3.1-70B", "gpu": "H100-SXM", "draft": "eagle3", "engine": "vllm-v0", "own": True},
            {"target": "Qwen3-32B", "gpu": "H200", "draft": "Qwen3-0.6B", "engine": "sglang", "own": True},
            # An MTP module drafts as an EAGLE head does; the model is the scenario's.
            {"target": "Llama-3.1-8B", "gpu": "H100-SXM", "draft": "eagle", "engine": "vllm-v1", "own": False},
            {"target": "Llama-3.1-8B", "gpu": "H100-SXM", "draft": SCENARIO.draft_id, "engine": "vllm-v1", "own": False}]

    def test_a_draft_model_on_another_target_is_that_targets_default(self):
        runs = pd.DataFrame({"target_model": ["Llama-3.1-70B"], "gpu": ["H100-SXM"], "spec_method": [None],
                             "draft_model": [None], "engine": [None], "engine_version": [None]})
        assert prediction.run_settings(runs, SCENARIO, PRESETS).draft[0] == "Llama-3.2-1B"


class TestSettingScenario:
    def test_the_scenario_itself_for_its_own_setting(self):
        own = (SCENARIO.target_id, SCENARIO.gpu.id, SCENARIO.draft_id, SCENARIO.engine.id)
        assert prediction.setting_scenario(SCENARIO, *own, PRESETS) is SCENARIO

    def test_another_setting_at_its_engines_preset(self):
        other = prediction.setting_scenario(SCENARIO, "Qwen3-32B", "H200", "eagle3", "sglang", PRESETS)
        assert (other.target.name, other.gpu.id, other.draft, other.engine.id) == (
            "Qwen3-32B", "H200", step.Draft("eagle3"), "sglang")
        assert other.costs == scenario.preset_costs(PRESETS.engines["sglang"])


class TestRatioWarnings:
    def test_a_verify_pass_cheaper_than_a_plain_one(self):
        notices = prediction.ratio_warnings({"verify_cost": 0.085, "draft_cost": 0.342})
        assert [n.key for n in notices] == ["fit.verify_below_one"] and notices[0].params["verify_cost"] == 0.085
        assert prediction.ratio_warnings({"verify_cost": 1.3, "draft_cost": 0.07}) == []


def measured_points(chosen, costs: step.Costs, batch: list[float], noise: float = 0.0, seed: int = 0) -> pd.DataFrame:
    """Paired runs measured on the step model at ``costs`` (with relative noise), as predict returns them."""
    rng = np.random.default_rng(seed)
    b = np.asarray(batch, dtype=float)
    truth = step.step(chosen.gpu, chosen.target, chosen.draft, batch=b, gamma=4, context=1024, acceptance_length=3.2,
                      tp=chosen.tp, costs=costs)["speedup"] * rng.normal(1, noise, b.size)
    runs = runs_frame([{"concurrency": c, "output_throughput": 100.0 * c} for c in batch]
                      + [{"concurrency": c, "output_throughput": 100.0 * c * s, "spec_method": "eagle",
                          "num_speculative_tokens": 4, "acceptance_length": 3.2, "label": "eagle"}
                         for c, s in zip(batch, truth)])
    return prediction.predict(explorer.pair_with_baselines(runs), chosen, PRESETS, 1024)


class TestCalibrateSettings:
    EAGLE = replace(SCENARIO, draft=step.Draft("eagle"), draft_id="eagle")
    TRUE = step.Costs(mfu=0.6, mbu=0.8, overlap=0.0, step_ms=2.0, token_us=12.0)

    def test_recovers_the_costs_that_made_the_runs(self):
        predicted = measured_points(self.EAGLE, self.TRUE, [1, 8, 32, 64, 128])
        (fit,) = prediction.calibrate_settings(predicted, self.EAGLE, PRESETS, 1024)
        assert fit.setting == "Llama-3.1-8B · H100-SXM · eagle · vllm-v1" and fit.points == 5 and not fit.warnings
        assert fit.rms_error < 0.01
        # The draws that fit put the true costs inside their band, and the medians near them.
        assert abs(fit.scenario.costs.step_ms - 2.0) < 0.5 and abs(fit.scenario.costs.token_us - 12.0) < 4
        band = fit.fit.predict(16, 4, 1024, 3.2)
        true_16 = step.step(self.EAGLE.gpu, self.EAGLE.target, self.EAGLE.draft, batch=16, gamma=4, context=1024,
                            acceptance_length=3.2, costs=self.TRUE)["speedup"]
        assert band["low"][0] <= float(true_16) <= band["high"][0]

    def test_a_setting_needs_two_runs(self):
        assert prediction.calibrate_settings(measured_points(self.EAGLE, self.TRUE, [8]), self.EAGLE, PRESETS) == []

    def test_runs_that_cannot_be_fitted_say_so(self):
        """Speedups that rise with the batch: no non-negative costs make them."""
        predicted = measured_points(self.EAGLE, self.TRUE, [1, 64])
        predicted["measured_speedup"] = [1.1, 2.5]
        (fit,) = prediction.calibrate_settings(predicted, self.EAGLE, PRESETS, 1024)
        assert "fit.no_solution" in fit.warnings


    def test_a_setting_of_more_runs_than_a_fit_takes_is_refused_with_its_size(self, monkeypatch):
        monkeypatch.setattr(calibration, "MAX_FIT_CELLS", 4 * 400)  # 4 points with measured acceptance
        predicted = measured_points(self.EAGLE, self.TRUE, [1, 8, 32, 64, 128])
        (refused,) = prediction.calibrate_settings(predicted, self.EAGLE, PRESETS, 1024)
        assert isinstance(refused, prediction.SettingRefused) and refused.points == 5
        assert refused.reason.key == "calibration.too_large" and refused.reason.params["most"] == 4
        (fit,) = prediction.calibrate_settings(predicted.iloc[:4], self.EAGLE, PRESETS, 1024)
        assert isinstance(fit, prediction.SettingFit)


    def test_past_the_time_limit_the_settings_left_are_said_not_fitted(self, monkeypatch):
        clock = iter(range(0, 600, 6))  # each look at the clock 6 s after the last
        monkeypatch.setattr(prediction.time, "monotonic", lambda: next(clock))
        predicted = measured_points(self.EAGLE, self.TRUE, [1, 8, 32, 64, 128])
        (fit,) = prediction.calibrate_settings(predicted, self.EAGLE, PRESETS, 1024, time_limit_s=10)  # at 6 s
        assert isinstance(fit, prediction.SettingFit)
        (refused,) = prediction.calibrate_settings(predicted, self.EAGLE, PRESETS, 1024, time_limit_s=5)
        assert isinstance(refused, prediction.SettingRefused) and refused.points == 5
        assert (refused.reason.key, refused.reason.params) == ("fit.time_limit", {"seconds": 5})


class TestLoadPublished:
    def test_every_row_has_a_source(self):
        published = explorer.load_published(DATA)
        assert published.source.notna().all() and len(published) >= 10
        eagle = published[published.series == "EAGLE-3 paper, SGLang, H100, Llama-3.1-8B, EAGLE-3 head"].set_index("batch")
        assert eagle.loc[2, "value"] == 1.81 and eagle.loc[64, "value"] == 1.38

    def test_every_series_names_its_presets(self):
        """A series of the fidelity benchmark names the GPU, the target and the draft of the study,
        as presets (or a draft kind), and one value per batch and context."""
        published = explorer.load_published(DATA)
        series = published.dropna(subset=["series"])
        gpus, models = PRESETS.gpus, PRESETS.models
        assert series.gpu.isin(gpus.keys()).all() and series.target.isin(models.keys()).all()
        assert series.draft.isin([*models, *step.HOST_DRAFTS, *step.PARALLEL_DRAFTS, "eagle", "eagle3", "mtp", "self"]).all()
        precisions = series[["weight_dtype", "kv_dtype"]].fillna("bf16")
        assert all(dtypes.precision_of(w, kv) for w, kv in precisions.itertuples(index=False))
        assert set(series.generation) == {"2023-2024", "2025-2026"}
        assert series.engine.isin(calibration.load_engines(DATA).keys()).all()
        assert (series.gamma >= 1).all() and (series.tp >= 1).all()
        assert not series.duplicated(["series", "batch", "context"]).any()
        assert series.groupby("series").size().max() >= 8 and series.series.nunique() >= 14
