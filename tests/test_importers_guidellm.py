"""Tests for specviz.results.importers.guidellm: every schema GuideLLM wrote, its load rules, per-request
rows, refusals and odd values.

The real 0.2-0.3 and 0.5 files are read from ``../shared/samples``; the 0.4 and 0.7 files are this
project's own fixtures (``tests/fixtures/guidellm_0.4_benchmarks.json``,
``guidellm_0.7_benchmarks.json``), written in the shapes of GuideLLM's source.
"""

import copy
import functools
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from specviz.errors import Notice
from specviz.results import importers
from specviz.results.importers import guidellm, source
from specviz.results.schema import REQUEST_COLUMNS, RUN_COLUMNS
from specviz.results.store import Store

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT.parent / "shared" / "samples"
FIXTURES = ROOT / "tests" / "fixtures"
FILES = {"0.3": SAMPLES / "guidellm_benchmarks.json", "0.4": FIXTURES / "guidellm_0.4_benchmarks.json",
         "0.5": SAMPLES / "guidellm_0.5_benchmarks.json", "0.7": FIXTURES / "guidellm_0.7_benchmarks.json"}
# GuideLLM's sampled requests carry their times and tokens, no acceptance of their own (schema 4's columns).
# GuideLLM writes no gaps between streamed chunks: no ITL (its inter_token_latency_ms is vLLM's TPOT).
REQUEST_FRAME = {"run_index", *REQUEST_COLUMNS} - {"run_id", "extra", "itl_ms", "drafts", "draft_tokens",
                                                   "accepted_tokens", "acceptance_rate", "acceptance_length"}


def data(version: str) -> bytes:
    return FILES[version].read_bytes()


def doc(version: str) -> dict[str, Any]:
    return json.loads(data(version))


def parse(report: dict[str, Any] | bytes, name: str = "benchmarks.json") -> importers.Parsed:
    return importers.parse(name, report if isinstance(report, bytes) else json.dumps(report).encode())


@functools.cache
def parsed_file(version: str) -> importers.Parsed:
    """One version's file parsed once for the tests that only read it."""
    return parse(data(version))


def extra(run: dict[str, Any]) -> dict[str, Any]:
    return json.loads(run["extra"])


class TestSniff:
    @pytest.mark.parametrize("version", sorted(FILES))
    def test_every_schema_is_claimed(self, version):
        assert guidellm.sniff(source.Source("b.json", data(version))) > 0
        assert importers.detect_format("b.json", data(version)) == "guidellm"

    def test_an_empty_report_of_a_version_with_metadata_is_claimed(self):
        report = {"metadata": {"version": 2, "guidellm_version": "0.7.3"}, "config": {}, "benchmarks": []}
        assert guidellm.sniff(source.Source("b.json", json.dumps(report).encode())) > 0

    @pytest.mark.parametrize("report", [
        # pytest-benchmark writes a "benchmarks" array too
        {"machine_info": {"node": "ci"}, "benchmarks": [{"group": None, "name": "test_x", "stats": {"mean": 1.0}}]},
        {"benchmarks": []}, {"benchmarks": {"metrics": {}}}, [{"benchmarks": []}], {"request_throughput": 1.0},
    ])
    def test_other_json_is_not(self, report):
        assert guidellm.sniff(source.Source("b.json", json.dumps(report).encode())) == 0

    @pytest.mark.parametrize("name", ["vllm_bench_nerdalert.jsonl", "llmperf_Yi-1-5-34B_550_150_summary.json",
                                      "aiperf_profile_export_aiperf.json", "sglang_bench_serving_c8.jsonl",
                                      "profile_export_genai_perf.csv", "README.md"])
    def test_other_tools_files_are_not(self, name):
        assert guidellm.sniff(source.Source(name, (SAMPLES / name).read_bytes())) == 0


class TestVersion03Sample:
    """GuideLLM 0.2-0.3 ``{benchmarks}``: one synchronous benchmark (values as in the file; this
    early file has no p50 among its percentiles, only the median)."""

    @pytest.fixture
    def parsed(self):
        return parsed_file("0.3")

    def test_load_model_and_endpoint(self, parsed):
        run, = parsed.runs
        assert run["label"] == "synchronous" and run["concurrency"] == 1 and "request_rate" not in run
        assert run["target_model"] == "example_model" and run["endpoint"] == "openai_http" and "engine" not in run

    def test_latencies_in_ms(self, parsed):
        run, = parsed.runs
        assert run["mean_ttft_ms"] == 16.792535781860348 and run["p50_ttft_ms"] == 16.38054847717285
        assert run["p90_ttft_ms"] == 18.505334854125977 and run["p99_ttft_ms"] == 21.281957626342773
        # GuideLLM's inter_token_latency_ms, (last − first token) / (tokens − 1), is vLLM's TPOT (an analyst's
        # pass); its own time_per_output_token_ms, over every token, stays in extra
        assert run["mean_tpot_ms"] == 4.941609043733832 and "mean_itl_ms" not in run
        assert extra(run)["time_per_output_token_ms"]["mean"] != run["mean_tpot_ms"]
        assert run["mean_e2el_ms"] == pytest.approx(644.4743664368339)  # request_latency 0.644… s
        assert run["p99_e2el_ms"] == pytest.approx(689.1846656799316)

    def test_counts_throughput_and_extra(self, parsed):
        run, = parsed.runs
        assert (run["num_requests"], run["failed_requests"]) == (46, 0)
        assert run["duration_s"] == 29.997201442718506 and run["request_throughput"] == 1.5481806532737452
        assert run["output_throughput"] == 198.13346751788123
        kept = extra(run)
        assert kept["incomplete_requests"] == 1 and kept["target"] == "example_target"
        assert kept["run_id"] == "93e36b31-b454-471d-ba62-6b2671585485" and kept["strategy"] == {"type_": "synchronous"}
        assert parsed.warnings == []

    def test_the_one_sampled_request(self, parsed):
        row, = parsed.requests.to_dict("records")
        assert row["run_index"] == 0 and row["ttft_ms"] == 21.281957626342773 and row["tpot_ms"] == 5.258346167136365
        assert "itl_ms" not in row and row["e2el_ms"] == pytest.approx(689.1846656799316)
        assert (row["input_tokens"], row["output_tokens"]) == (257, 128)


class TestVersion05Sample:
    """GuideLLM 0.5.0.dev0 ``{metadata: {version: 1}, args, benchmarks}``: one concurrent benchmark
    of 4 streams, its 4 requests listed."""

    @pytest.fixture
    def parsed(self):
        return parsed_file("0.5")

    def test_load_model_and_endpoint(self, parsed):
        run, = parsed.runs
        assert run["label"] == "concurrent 4" and run["concurrency"] == 4 and "request_rate" not in run
        assert run["target_model"] == "Qwen/Qwen3-4B-Thinking-2507"
        assert run["endpoint"] == "openai_http" and "engine" not in run  # args.backend

    def test_latencies_in_ms(self, parsed):
        run, = parsed.runs
        assert run["mean_ttft_ms"] == 171.7655062675476 and run["p50_ttft_ms"] == 171.52166366577148
        assert run["p90_ttft_ms"] == 172.63293266296387 and run["mean_tpot_ms"] == 24.17877651496134
        assert run["mean_e2el_ms"] == pytest.approx(24908.65981578827)  # request_latency 24.9 s
        assert run["p50_e2el_ms"] == pytest.approx(24908.42366218567)

    def test_counts_and_extra(self, parsed):
        run, = parsed.runs
        assert (run["num_requests"], run["failed_requests"]) == (4, 0) and run["duration_s"] == 24.909644603729248
        assert run["request_throughput"] == 0.12043527909470322
        kept = extra(run)
        assert kept["guidellm_version"] == "0.5.0.dev0" and kept["run_index"] == 0
        assert kept["benchmark_id"] == "97124a98-358f-4b0c-9fc1-aa90b6eb6a2f"
        assert kept["strategy"]["streams"] == 4 and kept["measured_concurrency"] == 3.9998399194047565
        # The streamed chunks 0.5 summarises (an analyst's pass: dropped), one token each here.
        assert (kept["mean_streamed_chunks"], kept["mean_output_tokens_per_chunk"],
                kept["mean_output_tokens_per_later_chunk"]) == (
            2052.0, 1.001222195062332, 1.0012233912405186)

    def test_requests(self, parsed):
        frame = parsed.requests
        assert set(frame.columns) == REQUEST_FRAME and (frame.run_index == 0).all()
        assert frame.ttft_ms.tolist() == [171.52166366577148, 171.6465950012207, 172.63293266296387,
                                          171.26083374023438]
        assert frame.input_tokens.tolist() == [81, 106, 133, 76] and (frame.output_tokens == 1024).all()
        assert frame.e2el_ms[0] == pytest.approx(24907.86051750183)


class TestVersion04Fixture:
    """GuideLLM 0.4 ``{args, benchmarks}``: synchronous, throughput (cap 512, 2 errors) and constant
    3.25 req/s (cap 512, requests with an image)."""

    @pytest.fixture
    def runs(self):
        return parsed_file("0.4").runs

    def test_load_of_each_strategy(self, runs):
        sync, throughput, constant = runs
        assert (sync["label"], sync["concurrency"]) == ("synchronous", 1) and "request_rate" not in sync
        assert throughput["label"] == "throughput" and "concurrency" not in throughput
        assert "request_rate" not in throughput and extra(throughput)["strategy"]["max_concurrency"] == 512
        assert (constant["label"], constant["request_rate"]) == ("constant 3.25 req/s", 3.25)
        assert "concurrency" not in constant and extra(constant)["strategy"]["max_concurrency"] == 512

    def test_model_from_the_config_and_endpoint_from_the_args(self, runs):
        assert {(r["target_model"], r["endpoint"]) for r in runs} == {("meta-llama/Llama-3.1-8B-Instruct",
                                                                        "openai_http")}
        assert not any("engine" in r for r in runs)

    def test_values(self, runs):
        sync, throughput, constant = runs
        assert (throughput["num_requests"], throughput["failed_requests"]) == (570, 2)
        assert throughput["request_throughput"] == 19.0 and throughput["output_throughput"] == 2365.5
        assert constant["mean_ttft_ms"] == 52.3006 and constant["p50_ttft_ms"] == 50.699
        assert constant["p99_ttft_ms"] == 53.833 and extra(constant)["time_per_output_token_ms"]["mean"] == 9.4466
        assert sync["mean_e2el_ms"] == pytest.approx(1073.2) and sync["p90_e2el_ms"] == pytest.approx(1099.3)
        assert extra(sync)["target"] == "http://vllm-0.bench.internal:8000" and "guidellm_version" not in extra(sync)

    def test_input_tokens_count_the_image_tokens(self):
        frame = parsed_file("0.4").requests
        assert frame.groupby("run_index").size().tolist() == [4, 3, 3]
        assert frame[frame.run_index == 2].input_tokens.tolist() == [834, 254, 840]  # prompt_tokens: 258, 254, 264


class TestVersion07Fixture:
    """GuideLLM 0.7 ``{metadata: {version: 2}, config, benchmarks}``: poisson 7.5 req/s and
    constant 12 req/s (cap 10240; the constant one not streamed) and concurrent 8."""

    @pytest.fixture
    def parsed(self):
        return parsed_file("0.7")

    def test_load_of_each_strategy(self, parsed):
        poisson, concurrent, constant = parsed.runs
        assert (poisson["label"], poisson["request_rate"]) == ("poisson 7.5 req/s", 7.5)
        assert (constant["label"], constant["request_rate"]) == ("constant 12.0 req/s", 12.0)
        for rate_run in (poisson, constant):  # 10240 is a cap on requests in flight, not the load
            assert "concurrency" not in rate_run and extra(rate_run)["strategy"]["max_concurrency"] == 10240
        assert (concurrent["label"], concurrent["concurrency"]) == ("concurrent 8", 8)
        assert "request_rate" not in concurrent

    def test_model_endpoint_and_labels(self, parsed):
        assert {(r["target_model"], r["endpoint"]) for r in parsed.runs} == {("Qwen/Qwen3-8B", "openai_http")}
        assert not any("engine" in r for r in parsed.runs)
        kept = extra(parsed.runs[0])
        assert kept["guidellm_version"] == "0.7.3" and kept["run_index"] == 0
        assert kept["labels"] == {"experiment": "eagle3-vs-baseline", "arm": "baseline"}

    def test_values(self, parsed):
        poisson, concurrent, constant = parsed.runs
        assert poisson["mean_ttft_ms"] == 62.2491 and poisson["p50_ttft_ms"] == 63.222
        assert poisson["p90_ttft_ms"] == 64.637 and poisson["mean_tpot_ms"] == 10.8823
        assert poisson["mean_e2el_ms"] == pytest.approx(1477.9)  # request_latency 1.4779 s
        assert (concurrent["num_requests"], concurrent["request_throughput"]) == (282, 4.7)
        assert concurrent["total_token_throughput"] == 1833.0 and concurrent["duration_s"] == 60.0

    def test_requests_not_streamed_have_no_first_token_time(self, parsed):
        constant = parsed.runs[2]
        assert not {"mean_ttft_ms", "p50_ttft_ms", "mean_tpot_ms"} & constant.keys()  # summaries of no request
        assert extra(constant)["time_per_output_token_ms"]["mean"] == 13.6353
        assert constant["mean_e2el_ms"] == pytest.approx(1758.1)
        frame = parsed.requests
        assert frame[frame.run_index == 2].ttft_ms.isna().all() and frame[frame.run_index < 2].ttft_ms.notna().all()
        assert Notice("warn.ttft_missing") in parsed.warnings

    def test_requests(self, parsed):
        frame = parsed.requests
        assert set(frame.columns) == REQUEST_FRAME and frame.groupby("run_index").size().tolist() == [4, 4, 2]
        first = frame.iloc[0]
        assert (first.ttft_ms, first.tpot_ms, first.input_tokens, first.output_tokens) == (63.222, 10.081, 244, 128)
        assert first.e2el_ms == pytest.approx(1343.509)

    def test_main_after_0_7_writes_the_same_schema(self):
        report = doc("0.7")
        report["metadata"]["guidellm_version"] = "0.8.0.dev12"
        runs = parse(report).runs
        assert [r["label"] for r in runs] == ["poisson 7.5 req/s", "concurrent 8", "constant 12.0 req/s"]
        assert extra(runs[0])["guidellm_version"] == "0.8.0.dev12"

    def test_model_and_endpoint_from_the_scenario_where_a_benchmark_lacks_them(self):
        report = doc("0.7")
        for bench in report["benchmarks"]:
            del bench["config"]["backend"]
        run = parse(report).runs[0]
        assert (run["target_model"], run["endpoint"]) == ("Qwen/Qwen3-8B", "openai_http")


class TestVersion06Args:
    def test_model_from_the_backend_kwargs(self):
        """0.6 moved ``args.model`` into ``args.backend_kwargs``; the 0.5 sample rewritten so."""
        report = doc("0.5")
        report["metadata"]["guidellm_version"] = "0.6.0"
        args = report["args"]
        args["backend_kwargs"] = {"target": args.pop("target"), "model": args.pop("model")}
        del report["benchmarks"][0]["config"]["backend"]["model"]
        run, = parse(report).runs
        assert (run["target_model"], run["endpoint"]) == ("Qwen/Qwen3-4B-Thinking-2507", "openai_http")


def with_strategy(strategy: dict[str, Any]) -> dict[str, Any]:
    """The 0.7 fixture's first benchmark alone, under another strategy."""
    report = doc("0.7")
    report["benchmarks"] = report["benchmarks"][:1]
    report["benchmarks"][0]["config"]["strategy"] = strategy
    return report


class TestLoadRules:
    @pytest.mark.parametrize("strategy, label, concurrency, rate", [
        ({"type_": "synchronous", "worker_count": 1, "max_concurrency": 1}, "synchronous", 1, None),
        ({"type_": "concurrent", "max_concurrency": 16, "streams": 16}, "concurrent 16", 16, None),
        ({"type_": "concurrent", "max_concurrency": 12}, "concurrent 12", 12, None),
        ({"type_": "constant", "max_concurrency": 10240, "rate": 5}, "constant 5.0 req/s", None, 5.0),
        ({"type_": "poisson", "max_concurrency": 64, "rate": 1.23456}, "poisson 1.235 req/s", None, 1.23456),
        ({"type_": "throughput", "max_concurrency": 10240}, "throughput", None, None),
        ({"type_": "trace", "max_concurrency": 10240, "time_scale": 2.0}, "trace", None, None),
    ])
    def test_concurrency_only_for_concurrent_and_synchronous_runs(self, strategy, label, concurrency, rate):
        run, = parse(with_strategy(strategy)).runs
        assert run["label"] == label
        assert run.get("concurrency") == concurrency and run.get("request_rate") == rate
        assert extra(run)["strategy"] == strategy

    def test_an_unlimited_rate_is_kept(self):
        run, = parse(with_strategy({"type_": "constant", "rate": "inf"})).runs
        assert run["request_rate"] == math.inf and run["label"] == "constant inf req/s"


class TestRequestRows:
    def test_values_that_are_not_numbers_are_left_empty(self):
        report = with_strategy({"type_": "synchronous"})
        rows = report["benchmarks"][0]["requests"]["successful"]
        rows[0]["time_to_first_token_ms"] = "fast"
        rows[1]["request_latency"] = -1.0
        rows[2]["output_tokens"] = True
        rows.append("not a request")
        frame = parse(report).requests
        assert len(frame) == 5 and frame.dtypes.drop("run_index").eq(np.float64).all()
        assert math.isnan(frame.ttft_ms[0]) and math.isnan(frame.e2el_ms[1]) and math.isnan(frame.output_tokens[2])
        assert frame.iloc[4].drop("run_index").isna().all()

    def test_no_rows_without_the_array(self):
        report = with_strategy({"type_": "synchronous"})
        del report["benchmarks"][0]["requests"]
        parsed = parse(report)
        assert len(parsed.runs) == 1 and parsed.requests.empty

    def test_the_rows_are_charged_before_they_are_built(self, monkeypatch):
        report = with_strategy({"type_": "synchronous"})
        report["benchmarks"][0]["requests"]["successful"] = [{"time_to_first_token_ms": 1.5}] * 10_000
        payload = json.dumps(report).encode()
        probe = source.Source("many.json", payload)
        probe.documents
        decoded = probe.estimate  # what decoding alone is charged
        monkeypatch.setenv("SPECVIZ_IMPORT_MEMORY_BYTES", str(decoded + 100 * 10_000))
        with pytest.raises(importers.IngestError) as info:
            parse(payload, "many.json")
        assert info.value.key == "ingest.memory"
        monkeypatch.setenv("SPECVIZ_IMPORT_MEMORY_BYTES", str(decoded + 400 * 10_000))
        assert len(parse(payload, "many.json").requests) == 10_000


class TestRefusals:
    @pytest.mark.parametrize("metadata", [{"version": 3, "guidellm_version": "0.9.0"}, {"version": True},
                                          {"version": "2"}, {"guidellm_version": "0.7.3"}, "v2"])
    def test_an_unknown_report_version(self, metadata):
        report = doc("0.7")
        report["metadata"] = metadata
        with pytest.raises(importers.IngestError) as info:
            parse(report, "new.json")
        assert info.value.key == "ingest.guidellm_schema" and str(info.value).startswith("new.json:")

    def test_guidellm_0_1_a_report_of_reports(self):
        report = {"benchmarks": [{"benchmarks": [{"mode": "synchronous", "rate": None, "results": []}],
                                  "args": {"rate_type": "sweep"}}]}
        with pytest.raises(importers.IngestError) as info:
            parse(report)
        assert info.value.key == "ingest.guidellm_schema"

    @pytest.mark.parametrize("metrics", [
        {"request_latency": {"mean": 1.0}},  # a summary not split by status
        {"time_to_first_token_ms": {"successful": {"mean": 1.0}}, "request_latency": {"mean": 1.0}},
        {"text": {"tokens": None}}, {}, [1, 2],
    ])
    def test_metrics_of_another_shape(self, metrics):
        report = doc("0.7")
        report["benchmarks"][1]["metrics"] = metrics
        with pytest.raises(importers.IngestError) as info:
            parse(report)
        assert info.value.key == "ingest.guidellm_schema"

    def test_a_benchmark_that_is_not_an_object(self):
        report = doc("0.4")
        report["benchmarks"].append("more")
        with pytest.raises(importers.IngestError) as info:
            parse(report)
        assert info.value.key == "ingest.guidellm_schema"


class TestOddValues:
    """Values GuideLLM never writes: kept in extra with a notice, the rest of the run read."""

    def test_a_summary_that_is_not_an_object(self):
        report = with_strategy({"type_": "concurrent", "streams": 8})
        report["benchmarks"][0]["metrics"]["time_to_first_token_ms"]["successful"] = "n/a"
        parsed = parse(report)
        run, = parsed.runs
        assert "mean_ttft_ms" not in run and run["mean_tpot_ms"] == 10.8823 and run["concurrency"] == 8
        assert extra(run)["metrics.time_to_first_token_ms.successful"] == "n/a"
        assert Notice("warn.guidellm_not_object", source="metrics.time_to_first_token_ms.successful") in parsed.warnings

    def test_a_rate_and_a_model_of_the_wrong_type(self):
        report = with_strategy({"type_": "poisson", "rate": "fast"})
        report["benchmarks"][0]["config"]["backend"]["model"] = {"name": "x"}
        parsed = parse(report)
        run, = parsed.runs
        assert "request_rate" not in run and run["label"] == "poisson" and "target_model" not in run
        assert extra(run)["strategy.rate"] == "fast" and extra(run)["model"] == {"name": "x"}
        assert {n.key for n in parsed.warnings} >= {"warn.rejected.finite", "warn.rejected.text"}

    def test_a_strategy_that_is_not_an_object(self):
        report = with_strategy(["constant", 5])
        parsed = parse(report)
        run, = parsed.runs
        assert "label" not in run and "request_rate" not in run and extra(run)["config.strategy"] == ["constant", 5]


# JSON values of every kind a file could hold where a number or object belongs.
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-2**70, max_value=2**70) | st.floats(allow_nan=True)
    | st.sampled_from([10**400, -10**400, 1e308, "inf", "12", ""]) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6)


def one_benchmark(version: str) -> dict[str, Any]:
    """A version's report with its first benchmark only, two of its requests listed."""
    report = doc(version)
    report["benchmarks"] = report["benchmarks"][:1]
    requests = report["benchmarks"][0]["requests"]
    requests["successful"] = requests["successful"][:2]
    return report


BASES = {version: one_benchmark(version) for version in FILES}


def keys(node: dict[str, Any] | list[Any]) -> list[Any]:
    return sorted(node) if isinstance(node, dict) else list(range(len(node)))


@st.composite
def variants(draw: st.DrawFn) -> dict[str, Any]:
    """A report of one version with one to four places deleted or replaced by any JSON value. Each
    place is found by walking down from the report, through its first benchmark three times in
    four, to a field of it and then one level further four times in five."""
    report = copy.deepcopy(BASES[draw(st.sampled_from(sorted(BASES)))])
    for _ in range(draw(st.integers(1, 4))):
        through = ["benchmarks", 0] if draw(st.integers(0, 3)) else []
        parent, key, node, descend = None, None, report, True
        while isinstance(node, (dict, list)) and node:
            if through and through[0] in keys(node):
                child = through.pop(0)
            elif descend or draw(st.integers(0, 4)):
                through, child, descend = [], draw(st.sampled_from(keys(node))), False
            else:
                break
            parent, key, node = node, child, node[child]
        if parent is None:  # the report has nothing left to change
            continue
        if isinstance(parent, dict) and draw(st.booleans()):
            del parent[key]
        else:
            parent[key] = draw(json_values)
    return report


class TestFuzzedBenchmarks:
    @settings(max_examples=200)
    @given(variants())
    def test_runs_or_a_refusal_and_nothing_else(self, report):
        try:
            parsed = parse(json.dumps(report).encode())
        except importers.IngestError:
            return
        assert len(parsed.runs) == 1
        for run in parsed.runs:
            json.loads(run["extra"], parse_constant=pytest.fail)  # strict JSON: no NaN or Infinity
            for key, value in run.items():
                assert key in RUN_COLUMNS
                if RUN_COLUMNS[key] == "DOUBLE" and key != "request_rate":
                    assert math.isfinite(value) and value >= 0
        if not parsed.requests.empty:
            assert set(parsed.requests.columns) == REQUEST_FRAME
            values = parsed.requests.drop(columns="run_index").to_numpy()
            assert (np.isnan(values) | (np.isfinite(values) & (values >= 0))).all()


class TestStoreImport:
    def test_runs_and_requests_are_stored_with_their_columns(self, tmp_path):
        store = Store(tmp_path / "s.duckdb")
        try:
            result = store.import_file("guidellm_0.7_benchmarks.json", data("0.7"))
            assert (result.status, result.format, result.runs, result.requests) == ("imported", "guidellm", 3, 10)
            runs = store.runs().set_index("label")
            assert runs.loc["poisson 7.5 req/s", "request_rate"] == 7.5
            assert math.isnan(runs.loc["poisson 7.5 req/s", "concurrency"])
            assert runs.loc["concurrent 8", "concurrency"] == 8 and runs.loc["concurrent 8", "num_requests"] == 282
            assert set(runs.endpoint) == {"openai_http"} and runs.engine.isna().all()
            assert set(runs.target_model) == {"Qwen/Qwen3-8B"} and set(runs.source_format) == {"guidellm"}
            assert runs.loc["poisson 7.5 req/s", "mean_e2el_ms"] == pytest.approx(1477.9)
            assert json.loads(runs.loc["constant 12.0 req/s", "extra"])["strategy"]["max_concurrency"] == 10240
            stored = store.query("SELECT r.ttft_ms, r.e2el_ms, r.input_tokens, runs.label FROM requests r "
                                 "JOIN runs USING (run_id) ORDER BY runs.label, r.e2el_ms").frame
            assert len(stored) == 10 and stored.label.value_counts().to_dict() == {
                "concurrent 8": 4, "poisson 7.5 req/s": 4, "constant 12.0 req/s": 2}
            poisson = stored[stored.label == "poisson 7.5 req/s"]
            assert poisson.e2el_ms.iloc[0] == pytest.approx(1343.509) and poisson.ttft_ms.iloc[0] == 63.222
        finally:
            store.close()
