"""Tests for specviz.results.explorer: pairing, crossovers, load axes and acceptance on known data."""

import json
import math
import numpy as np
import pandas as pd
import pytest

from conftest import PRESETS, SAMPLES, SWEEP, make_scenario, raw_frame, runs_frame
from specviz import names, settings
from specviz.model import calibration, dtypes, step
from specviz.results import explorer, extra
from specviz.results.store import Store

DATA = settings.get("SPECVIZ_DATA_DIR")
GPUS, MODELS = PRESETS.gpus, PRESETS.models
SCENARIO = make_scenario(target="Llama-3.1-8B")


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


class TestExampleQueries:
    def test_the_shipped_examples_are_never_counted_or_averaged_with_a_users_runs(self, tmp_path):
        """The console's tables hold the examples' runs beside the user's: its example queries counted a
        user's CSV run with the 48 example runs (csv: 49) and averaged a user's chat runs at γ 4 with the
        examples' (2.40 and 3.90 made 2.43)."""
        s = Store(tmp_path / "specviz.duckdb")
        s.seed_examples(sorted((DATA / "examples").glob("*.csv")))
        s.import_file("mine.csv", b"workload,num_speculative_tokens,spec_method,acceptance_length,concurrency\n"
                                  b"chat,4,eagle,3.9,1\n")
        try:
            formats = s.query(explorer.EXAMPLE_QUERIES["runs_by_format"]).frame
            acceptance = s.query(explorer.EXAMPLE_QUERIES["acceptance"]).frame
            imports = s.query(explorer.EXAMPLE_QUERIES["imports"]).frame
            throughput = s.query(explorer.EXAMPLE_QUERIES["throughput_by_concurrency"]).frame
            # The console's runs carry their origin (an analyst's pass: `SELECT origin FROM runs` failed).
            origins = s.query("SELECT origin, count(*) AS runs FROM runs GROUP BY 1 ORDER BY 1").frame
        finally:
            s.close()
        assert list(zip(origins.origin, origins.runs)) == [("example", 48), ("user", 1)]
        assert list(throughput.origin[:1]) == ["user"] and set(throughput.origin) == {"user", "example"}
        assert sorted(zip(formats.origin, formats.source_format, formats.runs)) == [("example", "csv", 48),
                                                                                   ("user", "csv", 1)]
        chat = acceptance[(acceptance.workload == "chat") & (acceptance.gamma == 4)].set_index("origin")
        assert chat.at["user", "tokens_per_step"] == pytest.approx(3.9)
        assert chat.at["example", "tokens_per_step"] == pytest.approx(2.400625)
        assert imports.set_index("source_file").origin.to_dict() == {"examples/example_sweep.csv": "example",
                                                                     "mine.csv": "user"}


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
        assert list(explorer.with_view_columns(raw, {"b"}).origin) == ["user", "example", "user"]
        assert list(explorer.with_view_columns(raw).origin) == ["example", "example", "user"]

    def test_series_names_label_then_setting_and_file(self):
        frame = runs_frame([{"label": "A", "workload": "code"}, {"spec_method": "ngram", "num_speculative_tokens": 4},
                            {}])
        assert list(frame.series) == ["A · code", "ngram γ=4 · f.csv", "plain · f.csv"]

    def test_no_runs_no_names(self):
        assert explorer.with_view_columns(raw_frame([{}]).iloc[:0])["series"].empty  # the store holds none: its columns, no rows

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

    def test_runs_at_one_load_that_a_field_of_their_file_sets_apart_are_other_lines(self):
        """The real vllm_bench_nerdalert.jsonl: three deployments at three rates, one file without a
        label, were one line with three points at each rate. The field that sets them apart at every
        rate names the lines; a date (one value a run) and a count that repeats at a rate do not."""
        rows = [{"content_hash": "n", "request_rate": rate, "extra": json.dumps(
                    {"deployment": deployment, "date": f"{i}", "num_prompts": 300 if rate == 10 else 900})}
                for i, (deployment, rate) in enumerate((d, r) for d in ("no-features", "base", "kvcache")
                                                       for r in (10.0, 30.0, math.inf))]
        frame = runs_frame(rows)
        assert list(frame.series) == [f"plain · f.csv · deployment={d}" for d in ("no-features", "base", "kvcache")
                                      for _ in range(3)]
        # Two repeats of one setting at one concurrency (the vLLM sweep's run 0 and 1): one line still.
        repeats = runs_frame([{"content_hash": "s", "concurrency": 2.0, "extra": json.dumps({"date": f"{i}"})}
                              for i in range(2)])
        assert list(repeats.series) == ["plain · f.csv"] * 2

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
        frame = explorer.with_view_columns(raw, {"b", "c"})
        users, origin = explorer.one_origin(frame)
        assert origin == "user" and list(users.content_hash) == ["a"]
        examples, origin = explorer.one_origin(frame, examples_wanted=True)
        assert origin == "example" and list(examples.content_hash) == ["b", "c"]
        only_examples, origin = explorer.one_origin(explorer.with_view_columns(raw, {"a", "b", "c"}))
        assert origin == "example" and len(only_examples) == 3


class TestModelPreset:
    def test_a_served_name_to_its_preset(self):
        models = PRESETS.models
        assert names.model_preset("Qwen/Qwen3-32B", models) == "Qwen3-32B"
        assert names.model_preset("replay:Qwen/Qwen3-235B-A22B", models) == "Qwen3-235B-A22B"
        assert names.model_preset("meta-llama/Llama-3.1-8B-Instruct", models) == "Llama-3.1-8B"
        assert names.model_preset("swiss-ai/Apertus-v1.5-70B", models) is None
        assert names.model_preset("", models) is None

    @pytest.mark.parametrize("served, preset", [
        # The preset's own Hugging Face id, where its name leaves words out.
        ("meta-llama/Llama-4-Scout-17B-16E-Instruct", "Llama-4-Scout"),
        ("nvidia/Llama-4-Scout-17B-16E-Instruct-FP8", "Llama-4-Scout"),
        # Release dates, formats, context lengths and versions below 2 after the name; "Meta" before it.
        ("moonshotai/Kimi-K2-Instruct-0905", "Kimi-K2"), ("Qwen/Qwen3-235B-A22B-Instruct-2507-FP8", "Qwen3-235B-A22B"),
        ("nvidia/DeepSeek-R1-0528-NVFP4", "DeepSeek-V3"), ("deepseek-ai/DeepSeek-V3-0324", "DeepSeek-V3"),
        ("deepseek-ai/DeepSeek-V3.1-Terminus", "DeepSeek-V3"), ("deepseek-ai/DeepSeek-V3.2-Exp", "DeepSeek-V3.2"),
        ("amd/Kimi-K2.5-MXFP4", "Kimi-K2.5"), ("RedHatAI/Llama-3.1-8B-Instruct-FP8-dynamic", "Llama-3.1-8B"),
        ("neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8", "Llama-3.1-8B"), ("togethercomputer/LLaMA-2-7B-32K", "Llama-2-7B"),
        ("microsoft/Phi-3-mini-4k-instruct", "Phi-3-mini"), ("mistralai/Mixtral-8x7B-Instruct-v0.1", "Mixtral-8x7B"),
        ("TinyLlama/TinyLlama-1.1B-Chat-v1.0", "TinyLlama-1.1B"),
        ("mistralai/Mistral-Small-3.1-24B-Instruct-2503", "Mistral-Small-3.1-24B"),
        ("meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8", "Llama-4-Maverick"), ("Qwen/Qwen3-8B", "Qwen3-8B"),
        ("Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8", "Qwen3-Coder-480B-A35B"),
        ("meta-llama/Llama-3.1-405B-Instruct-FP8", "Llama-3.1-405B"),
        # Checkpoints of another's architecture.
        ("meta-llama/Llama-3.3-70B-Instruct", "Llama-3.1-70B"), ("Qwen/Qwen3-Coder-30B-A3B-Instruct", "Qwen3-30B-A3B"),
        # Another architecture keeps its own words: a version's number, a head, a distilled model.
        ("deepseek-ai/DeepSeek-V3.2", "DeepSeek-V3.2"), ("yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", None),
        ("RedHatAI/Qwen3-32B-speculator.eagle3", None), ("deepseek-ai/DeepSeek-R1-Distill-Qwen-32B", None),
        ("meta", None), ("Instruct", None),
        # Qwen3-Next, released in one size (a browser pass: it had been read as no model); a family of
        # several sizes, or one whose other sizes specviz has no preset of, is no preset (an attack pass:
        # "TinyLlama 7B" had been read as TinyLlama 1.1B).
        ("Qwen3-Next", "Qwen3-Next-80B-A3B"), ("Qwen/Qwen3-Next-80B-A3B-Thinking", "Qwen3-Next-80B-A3B"),
        ("gpt-oss", None), ("Qwen3", None), ("Qwen3-Coder", None), ("Llama 3.1", None), ("TinyLlama", None),
        ("Mistral Small", None), ("Mixtral 8x", None)])
    def test_a_checkpoint_s_name_as_servers_and_benchmarks_give_it(self, served, preset):
        """Names as vLLM's /metrics and benchmark files carry them matched none of these presets."""
        assert names.model_preset(served, PRESETS.models) == preset



class TestGpuPreset:
    @pytest.mark.parametrize("text, preset", [
        # As nvidia-smi, rocm-smi and benchmark files name them.
        ("NVIDIA GB200", "GB200"), ("NVIDIA GB300", "GB300"), ("NVIDIA B300 SXM6 AC", "B300"),
        ("AMD Instinct MI355X", "MI355X"), ("AMD Instinct MI325X", "MI325X"), ("NVIDIA H20", "H20"),
        ("NVIDIA H800", "H800"), ("NVIDIA L4", "L4"), ("NVIDIA A40", "A40"), ("NVIDIA GeForce RTX 5090", "RTX-5090"),
        ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "RTX-PRO-6000"), ("Intel Gaudi 3", "Gaudi-3"),
        ("NVIDIA H100 80GB HBM3", "H100-SXM"), ("NVIDIA H100 PCIe", "H100-PCIe"), ("NVIDIA A100-SXM4-80GB", "A100-80GB"),
        ("TPU v6e", "TPU-v6e"),
        # As sentences write them: a count before, a plural after.
        ("8xH100s", "H100-SXM"), ("8×B200", "B200"), ("4x MI355X", "MI355X"), ("2x GB300", "GB300"),
        # Another device, one this does not say which preset it is, or a number alone: none.
        ("NVIDIA GH200 480GB", None), ("NVIDIA H100 NVL", None), ("NVIDIA L40", None),
        ("5090", None), ("Llama 4", None), ("AMD Radeon Graphics", None)])
    def test_a_device_s_name_to_its_preset(self, text, preset):
        """The first twelve were matched to no preset before, and GH200 (a Grace Hopper's H100) to the H200."""
        assert names.gpu_preset(text, PRESETS.gpus) == preset

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

    def test_a_measurement_two_runs_share_is_no_setting(self):
        """An analyst's pass: By load offered std_tpot_ms, total_input_tokens and max_output_tokens_per_s."""
        figures = {"std_tpot_ms": 1.5, "total_input_tokens": 100, "max_output_tokens_per_s": 9.0,
                   "result.p99_ttft": 3.0, "output_throughput": 7.0}
        runs = runs_frame([{"extra": json.dumps({**figures, "max_num_seqs": seqs, **({} if i else {"std_tpot_ms": 2.0,
                            "total_input_tokens": 5, "max_output_tokens_per_s": 1.0, "output_throughput": 1.0})})}
                           for i, seqs in enumerate((4, 4, 16))])
        assert explorer.extra_keys(runs) == ["extra.max_num_seqs"]
        # Settings named like figures stay: llmperf's mean_input_tokens, SGLang's max_total_num_tokens, a timeout.
        settings = runs_frame([{"extra": json.dumps({"mean_input_tokens": n, "server_info": {"max_total_num_tokens": n},
                                                     "timeout_ms": n})} for n in (550, 550, 1100)])
        assert explorer.extra_keys(settings) == ["extra.mean_input_tokens", "extra.server_info.max_total_num_tokens",
                                                 "extra.timeout_ms"]

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

    def test_two_files_of_one_name_are_two_lines(self):
        """AIPerf 0.3's and 0.10's profile_export_aiperf.json had been one line of one colour (an analyst's pass)."""
        frame = runs_frame([{"source_file": "a/p.json", "content_hash": "0b0c9470370c" + "0" * 52},
                            {"source_file": "b/p.json", "content_hash": "f4d9fd7e8075" + "0" * 52},
                            {"source_file": "p.json", "content_hash": "0b0c9470370c" + "0" * 52},
                            {"source_file": "p.json", "content_hash": "f4d9fd7e8075" + "0" * 52},
                            {"source_file": "p.json", "content_hash": "f4d9fd7e8075" + "0" * 52}])
        assert list(explorer.with_group(frame, "source_file").group) == [
            "a/p.json", "b/p.json", "p.json · 0b0c9470370c", "p.json · f4d9fd7e8075", "p.json · f4d9fd7e8075"]
        # A run without a hash keeps its name, and hashes of no text do not fail (an attack pass).
        odd = pd.DataFrame({"source_file": ["a.json"] * 3, "content_hash": ["h1" * 8, "h2" * 8, np.nan], "extra": ["{}"] * 3})
        assert list(explorer.with_group(odd, "source_file").group) == ["a.json · h1h1h1h1h1h1", "a.json · h2h2h2h2h2h2",
                                                                      "a.json"]
        assert list(explorer.with_group(odd.assign(content_hash=np.nan), "source_file").group) == ["a.json"] * 3


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


class TestPairWithBaselinesNeedsASetting:
    def test_runs_that_name_neither_model_nor_load_pair_with_none(self):
        """An analyst's pass: genai-perf's and inference-perf's runs, unrelated and naming neither a model
        nor a load, had paired at 71x once one was stated speculative."""
        runs = runs_frame([{"output_throughput": 3.67}, {"output_throughput": 261.25, "spec_method": "eagle3",
                                                         "num_speculative_tokens": 3}])
        assert explorer.pair_with_baselines(runs).empty
        named = runs_frame([{"output_throughput": 100.0, "target_model": "m"},
                            {"output_throughput": 150.0, "target_model": "m", "spec_method": "eagle3"}])
        assert explorer.pair_with_baselines(named)["measured_speedup"].tolist() == [1.5]


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

    def test_repeated_baselines_are_taken_by_their_mean_with_its_range(self):
        """An analyst's pass: a sweep's plain repeats at 93.7 and 199.4 tokens/s, and a speculative run of
        122.3: 0.61× against the newest alone (a crossover), 1.30× against the other; against their mean
        (146.55) 0.834×, from 0.613× to 1.305×. The same engine's only, where any is."""
        frame = runs_frame([{"concurrency": 2, "output_throughput": 93.7, "engine": "vllm", "source_file": "run=0.json"},
                            {"concurrency": 2, "output_throughput": 199.4, "engine": "vllm", "source_file": "run=1.json"},
                            {"concurrency": 2, "output_throughput": 10.0, "source_file": "other.json"},
                            {"concurrency": 2, "output_throughput": 122.3, "num_speculative_tokens": 3, "engine": "vllm"}])
        [row] = explorer.pair_with_baselines(frame).to_dict("records")
        assert row["measured_speedup"] == pytest.approx(122.3 / 146.55) and row["baselines"] == 3
        assert (row["speedup_vs_fastest"], row["speedup_vs_slowest"]) == pytest.approx((122.3 / 199.4, 122.3 / 93.7))
        assert row["baseline_output_throughput"] == pytest.approx(146.55)
        assert row["baseline_source_file"] == "run=0.json, run=1.json" and row["baseline_run_id"] == "1"
        tpot = runs_frame([{"concurrency": 1, "mean_tpot_ms": 10.0}, {"concurrency": 1, "mean_tpot_ms": 14.0},
                           {"concurrency": 1, "mean_tpot_ms": 4.0, "spec_method": "eagle"}])
        [row] = explorer.pair_with_baselines(tpot).to_dict("records")
        assert (row["measured_speedup"], row["speedup_vs_fastest"], row["speedup_vs_slowest"]) == pytest.approx((3.0, 2.5, 3.5))

    def test_request_rates_match_and_infinity_counts_as_none(self):
        frame = runs_frame([{"request_rate": 10.0, "output_throughput": 100}, {"request_rate": 30.0, "output_throughput": 300},
                            {"request_rate": 10.0, "output_throughput": 150, "spec_method": "eagle"},
                            {"concurrency": 8, "output_throughput": 400},
                            {"concurrency": 8, "request_rate": math.inf, "output_throughput": 600, "spec_method": "eagle"}])
        paired = explorer.pair_with_baselines(frame)
        assert dict(zip(paired.run_id, paired.baseline_run_id)) == {"2": "0", "4": "3"}

    def test_examples_never_pair_with_user_runs(self):
        frame = explorer.with_view_columns(raw_frame([{"concurrency": 1, "output_throughput": 100, "content_hash": "ex"},
                                              {"concurrency": 1, "output_throughput": 200, "spec_method": "eagle"}]),
                                   {"ex"})
        assert explorer.pair_with_baselines(frame).empty

    def test_throughput_ratio_at_equal_concurrency(self):
        paired = explorer.pair_with_baselines(SWEEP)
        assert list(paired.concurrency) == [1, 8, 64]
        np.testing.assert_allclose(paired.measured_speedup, [2.5, 1.5, 0.9])
        assert set(paired.measured_by) == {"throughput"}

    def test_tpot_ratio_where_throughput_is_missing(self):
        frame = runs_frame([{"concurrency": 1, "mean_tpot_ms": 10.0},
                            {"concurrency": 1, "mean_tpot_ms": 4.0, "spec_method": "eagle"}])
        paired = explorer.pair_with_baselines(frame)
        assert paired.measured_speedup[0] == 2.5 and paired.measured_by[0] == "tpot"

    def test_no_baseline_no_pair(self):
        assert explorer.pair_with_baselines(SWEEP[SWEEP.spec_method.notna()]).empty

    @pytest.mark.parametrize("plain, spec", [({"output_throughput": 0.0}, {"output_throughput": 150.0}),
                                             ({"output_throughput": 1e-320}, {"output_throughput": 150.0}),
                                             ({"mean_tpot_ms": 10.0}, {"mean_tpot_ms": 0.0})])
    def test_a_side_of_zero_gives_no_ratio(self, plain, spec):
        """A baseline of 0 tokens/s had paired at an infinite speedup (an attack pass): unpaired, and said so."""
        frame = runs_frame([{"concurrency": 8, **plain}, {"concurrency": 8, "spec_method": "eagle", **spec}])
        paired = explorer.pair_with_baselines(frame)
        assert paired.empty and list(explorer.unpaired_speculative(frame, paired).run_id) == ["1"]


class TestTpotAtLoad:
    def test_only_tpot_ratios_predicted_at_a_load(self):
        """A TPOT ratio at a load whose steps also prefill holds the scheduler's split of a request's
        time, which the model does not predict; decoding only (no prompt tokens) it is the model's."""
        predicted = pd.DataFrame({"measured_by": ["tpot", "tpot", "throughput"], "prompt_tokens": [2048, np.nan, 2048]})
        assert explorer.tpot_at_load(predicted).tolist() == [True, False, False]


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
        assert crossover.crossover_concurrency.tolist() == [64] and crossover.concurrencies.tolist() == [3]


    def test_repeats_at_a_concurrency_cross_by_their_mean(self):
        """Two speculative runs at 8 (0.9× and 1.3× over one baseline) are 1.1× there: no crossover at 8."""
        repeats = runs_frame(
            [{"workload": "chat", "concurrency": c, "output_throughput": 100.0} for c in (8, 64)]
            + [{"workload": "chat", "concurrency": c, "output_throughput": v, "spec_method": "eagle",
                "num_speculative_tokens": 4, "label": "eagle"} for c, v in ((8, 90.0), (8, 130.0), (64, 80.0))])
        crossover = explorer.crossover_concurrency(explorer.pair_with_baselines(repeats))
        assert crossover.crossover_concurrency.tolist() == [64] and crossover.concurrencies.tolist() == [2]


class TestSweepPeaks:
    def test_peak_per_series(self):
        peaks = explorer.sweep_peaks(SWEEP).set_index("series")
        assert peaks.loc["eagle · chat", "load"] == 64 and peaks.loc["eagle · chat", "output_throughput"] == 1800

    def test_a_sweep_s_repeats_are_one_point_their_mean(self):
        """Two runs at concurrency 8 (100 and 140 tokens/s) and one at 16 (130): the peak is 16, where
        the best single run (140) would have put it at 8."""
        repeats = explorer.with_group(explorer.on_load_axis(runs_frame([
            {"label": "sweep", "concurrency": c, "output_throughput": v, "source_file": f}
            for c, v, f in ((8, 100.0, "run=0.json"), (8, 140.0, "run=1.json"), (16, 130.0, "run=0.json"))]),
            "concurrency"), "label")
        [peak] = explorer.sweep_peaks(repeats).to_dict("records")
        assert (peak["load"], peak["output_throughput"], peak["runs"]) == (16, 130.0, 1)
        at_eight = explorer.sweep_peaks(repeats[repeats["load"] == 8]).iloc[0]
        assert (at_eight["output_throughput"], at_eight["runs"], at_eight["source_file"]) == (120.0, 2, "run=0.json, run=1.json")

    def test_example_sweep_peaks_at_the_top_concurrency(self, example_runs):
        assert set(explorer.sweep_peaks(example_runs).load) == {128}


class TestDerivedAcceptance:
    def test_figures_a_run_s_own_imply_are_filled_in(self, tmp_path):
        """An analyst's pass: vLLM 0.25.1's bench file gives per-position rates 0.85, 0.717, 0.594 and no
        zero-accept share (the Live page derives 15 % from the same counters); SpecForge's chains give
        a length and no vLLM rate, (E − 1) / γ. A tree's rate is not a chain's, and stays unsaid."""
        db = Store(tmp_path / "d.duckdb")
        db.import_file("bench.json", (SAMPLES / "2026/vllm_0.25.1/bench_serve_speculative_v0.25.1.json").read_bytes())
        db.import_file("dev_result.jsonl", (SAMPLES / "2026/specforge/dev_result.jsonl").read_bytes())
        stored = db.runs()
        shown = explorer.with_view_columns(stored)
        vllm = shown[shown["source_file"] == "bench.json"].iloc[0]
        assert vllm["zero_accept_rate"] == pytest.approx(0.15) and vllm["acceptance_rate"] == pytest.approx(0.7204, abs=1e-4)
        assert stored["zero_accept_rate"].isna().all()  # the store keeps what the file said
        forge = shown[shown["source_file"] == "dev_result.jsonl"]
        chains = forge[[extra.tree_width(e) is None for e in forge["extra"]]]
        trees = forge[[extra.tree_width(e) is not None for e in forge["extra"]]]
        assert len(chains) and len(trees)
        assert chains["acceptance_rate"].to_numpy() == pytest.approx(
            ((chains["acceptance_length"] - 1) / chains["num_speculative_tokens"].astype(float)).to_numpy())
        assert trees["acceptance_rate"].isna().all()


class TestPositionAcceptance:
    def test_one_column_a_position_for_the_runs_that_measured_them(self):
        runs = runs_frame([{"spec_method": "mtp", "num_speculative_tokens": 2, "per_position_acceptance": [0.8, 0.5]},
                           {"spec_method": "eagle", "num_speculative_tokens": 3, "per_position_acceptance": [0.9, 0.7, 0.4]},
                           {"spec_method": "eagle", "num_speculative_tokens": 3}])
        table = explorer.position_acceptance(runs)
        assert list(table.columns) == ["series", "num_speculative_tokens", "position_1", "position_2", "position_3"]
        assert table["position_1"].tolist() == [0.8, 0.9] and pd.isna(table["position_3"].iloc[0])
        assert explorer.position_acceptance(runs.iloc[2:]).empty


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
        summary = explorer.workload_acceptance(explorer.with_view_columns(s.runs())).set_index("draft_setting")
        s.close()
        assert list(summary.workload) == ["mtbench"] * 2 and list(summary.runs) == [3, 3]
        assert summary.loc["eagle3 γ=3, top-k 1, 4 draft tokens", "acceptance_length"] == pytest.approx(7.67 / 3)
        assert summary.loc["eagle3 γ=7, top-k 10, 60 draft tokens", "acceptance_length"] == pytest.approx(13.25 / 3)

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
