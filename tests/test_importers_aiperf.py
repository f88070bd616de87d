"""Tests for specviz.results.importers.aiperf: AIPerf's summary JSON, its CSV and its per-request JSON lines."""

import csv
import io
import json
from pathlib import Path, PurePosixPath

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from conftest import aiperf_run_pair, parses_or_refuses

from specviz import cli, i18n
from specviz.results import importers
from specviz.results.importers import Source, aiperf, genai_perf, sglang, source, vllm
from specviz.results.store import Store

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT.parent / "shared" / "samples"
FIXTURES = ROOT / "tests" / "fixtures"
REAL = "aiperf_profile_export_aiperf.json"
SPEC = "aiperf_spec_decode_profile_export_aiperf.json"
CSV = "aiperf_profile_export_aiperf.csv"
JSONL = "aiperf_profile_export.jsonl"
SPEC_JSONL = "aiperf_spec_decode_profile_export.jsonl"  # built from AIPerf's own test payloads: see fixtures/README.md
# Built from AIPerf's docs/api/sweep-aggregates.md example and its aggregate exporter: see fixtures/README.md
SWEEP, SWEEP_CSV = "aiperf_profile_export_aiperf_sweep.json", "aiperf_profile_export_aiperf_sweep.csv"
AGGREGATE = "aiperf_profile_export_aiperf_aggregate.json"
REAL_2026 = "2026/aiperf_0.10/profile_export_aiperf.json"
# Built in the shapes of AIPerf's server-metrics exporters, the real 0.10 file's input_config: fixtures/README.md
SERVER, SERVER_CSV = "aiperf_server_metrics_export.json", "aiperf_server_metrics_export.csv"


def sample(name: str) -> bytes:
    return (SAMPLES / name).read_bytes()


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def dumps(doc) -> bytes:
    return json.dumps(doc).encode()


def only(parsed: importers.Parsed) -> dict:
    assert parsed.format == "aiperf" and len(parsed.runs) == 1
    return parsed.runs[0]


class TestSummaryJson:
    def test_the_real_file_is_aiperf_not_genai_perf(self):
        assert importers.detect_format(REAL, sample(REAL)) == "aiperf"
        assert genai_perf.sniff(Source(REAL, sample(REAL))) < 0.9

    def test_the_real_file(self):
        parsed = importers.parse(REAL, sample(REAL))
        run = only(parsed)
        assert run["concurrency"] == 16 and "request_rate" not in run
        assert run["target_model"] == "qwen3.6-nvfp4" and run["endpoint"] == "chat"
        assert json.loads(run["extra"])["tokenizer_id"] == "nvidia/Qwen3.6-35B-A3B-NVFP4"  # the checkpoint's id
        assert "engine" not in run and "engine_version" not in run  # AIPerf names no serving engine
        assert run["mean_ttft_ms"] == 230.13715230208334
        assert run["p50_ttft_ms"] == 177.785533 and run["p99_ttft_ms"] == 687.6198782499999
        assert run["p90_ttft_ms"] == 396.7312765
        # AIPerf's inter_token_latency (one value a request) is vLLM's TPOT; its inter_chunk_latency
        # (52,023 gaps between streamed chunks) vLLM's ITL: an analyst's pass found the first stored as
        # ITL, p99 13.3 ms beside vLLM's and SGLang's p99 ITL, where the gaps' p99 is 118.0 ms.
        assert run["p50_tpot_ms"] == 12.245986588621273 and run["p99_tpot_ms"] == 13.272469915788289
        assert run["p50_itl_ms"] == 9.08178129458742 and run["p99_itl_ms"] == 117.98615575276864
        assert run["p50_e2el_ms"] == 6478.6263245 and run["p99_e2el_ms"] == 18625.4480323
        assert run["output_throughput"] == 1172.145991694937
        assert run["request_throughput"] == 2.156207775934887
        assert run["total_token_throughput"] == 9282.317251916027
        assert run["num_requests"] == 96 and run["duration_s"] == 44.52261098
        assert "acceptance_length" not in run and "zero_accept_rate" not in run
        assert parsed.warnings == [] and parsed.requests.empty
        extra = json.loads(run["extra"])
        assert extra["aiperf_version"] == "0.10.0" and extra["schema_version"] == "1.3"
        assert extra["time_to_first_token"]["p95"] == 672.0477902499999  # every block whole
        assert extra["input_config"]["phases"][0]["name"] == "warmup"

    def test_the_gpu_its_telemetry_read(self):
        """AIPerf 0.3's GPU telemetry names the GPUs it read (its sample: an RTX 6000 Ada at each of two
        endpoints): the run's GPU, where it had none (an analyst's pass). GPUs of several names, or
        names of no text, give none."""
        name = "2026/aiperf_0.3_concurrency1/profile_export_aiperf.json"
        assert only(importers.parse(name, sample(name)))["gpu"] == "NVIDIA RTX 6000 Ada Generation"
        doc = json.loads(sample(name))
        gpus = doc["telemetry_data"]["endpoints"]["localhost:9402"]["gpus"]
        for odd in ("NVIDIA H100 80GB HBM3", ["a list"], None):
            gpus["gpu_0"]["gpu_name"] = odd
            run = only(importers.parse(name, dumps(doc)))
            assert run.get("gpu") == (None if odd == "NVIDIA H100 80GB HBM3" else "NVIDIA RTX 6000 Ada Generation")
        doc["telemetry_data"]["endpoints"] = ["not", "a", "map"]
        assert only(importers.parse(name, dumps(doc))).get("gpu") is None

    def test_a_genai_perf_json_stays_genai_perf(self):
        assert importers.detect_format("g.json", fixture("genai_perf_profile_export.json")) == "genai-perf"

    def test_the_configuration_before_phases_and_models(self):
        doc = {"request_throughput": {"unit": "requests/sec", "avg": 5.0},
               "time_to_first_token": {"unit": "ms", "avg": 40.0, "p50": 38.0, "p99": 90.0},
               "input_config": {"endpoint": {"model_names": ["Qwen/Qwen3-8B"], "type": "completions",
                                             "streaming": True},
                                "loadgen": {"concurrency": None, "request_rate": 12.5, "request_count": 100}},
               "was_cancelled": False}
        run = only(importers.parse("old.json", dumps(doc)))
        assert run["request_rate"] == 12.5 and "concurrency" not in run
        assert run["target_model"] == "Qwen/Qwen3-8B" and run["endpoint"] == "completions"
        assert run["p50_ttft_ms"] == 38.0 and run["request_throughput"] == 5.0

    def test_a_list_of_models_and_phases_that_disagree(self):
        doc = json.loads(sample(REAL))
        doc["input_config"]["models"] = ["model-a", {"name": "model-b"}]
        doc["input_config"]["phases"].append({"name": "profiling_2", "kind": "profiling", "type": "concurrency",
                                              "requests": 96, "concurrency": 32})
        run = only(importers.parse("two.json", dumps(doc)))
        assert run["target_model"] == "model-a, model-b"
        assert "concurrency" not in run  # two measured phases at two loads: no one load for the run

    def test_units_are_read_not_assumed(self):
        doc = json.loads(sample(REAL))
        doc["request_latency"] = {"unit": "sec", "avg": 6.5, "p50": 6.0, "p90": 9.0, "p99": 12.0}
        doc["benchmark_duration"] = {"unit": "ms", "avg": 44522.6}
        doc["time_to_first_token"]["unit"] = "furlongs"
        parsed = importers.parse("units.json", dumps(doc))
        run = only(parsed)
        assert run["mean_e2el_ms"] == 6500.0 and run["p99_e2el_ms"] == 12000.0
        assert run["duration_s"] == pytest.approx(44.5226)
        assert "mean_ttft_ms" not in run
        assert [n.key for n in parsed.warnings] == ["warn.aiperf_unit"]
        assert parsed.warnings[0].params == {"source": "time_to_first_token", "unit": "furlongs"}

    def test_two_documents_are_refused(self):
        with pytest.raises(importers.IngestError) as info:
            importers.parse("two.jsonl", sample(REAL).replace(b"\n", b"") + b"\n" + sample(REAL).replace(b"\n", b""))
        assert info.value.key == "ingest.one_document" and info.value.params["format"] == "aiperf"


class TestSpecDecode:
    def test_run_level_figures_percent_to_fraction(self):
        parsed = importers.parse(SPEC, fixture(SPEC))
        run = only(parsed)
        # the token-weighted run-level figures, not the means of per-request ones (2.91, 63.5 %)
        assert run["acceptance_length"] == 2.78
        assert run["acceptance_rate"] == pytest.approx(0.595)
        assert run["zero_accept_rate"] == 0.25  # 1,000 of 4,000 verify steps accepted no draft
        # position i: the steps that accepted more than i drafts, (800 + 900 + 1,300), (900 + 1,300), 1,300 of 4,000
        assert run["per_position_acceptance"] == pytest.approx([0.75, 0.55, 0.325])
        assert run["request_rate"] == 4.0 and "concurrency" not in run  # a Poisson phase: 32 is its cap, not the load
        assert run["target_model"] == "meta-llama/Llama-3.1-8B-Instruct" and run["endpoint"] == "completions"
        assert run["p50_ttft_ms"] == 75.3  # the profiling metrics, not warmup_metrics
        assert parsed.warnings == []
        extra = json.loads(run["extra"])
        assert extra["spec_decode_zero_step_requests"]["avg"] == 3.0  # a count of requests: extra only

    def test_per_request_means_where_the_run_level_figures_are_missing(self):
        doc = json.loads(fixture(SPEC))
        for tag in ("spec_decode_token_weighted_acceptance_length", "spec_decode_overall_draft_acceptance_rate",
                    "pooled_spec_decode_acceptance_histogram"):
            del doc[tag]
        run = only(importers.parse("s.json", dumps(doc)))
        assert run["acceptance_length"] == 2.91 and run["acceptance_rate"] == pytest.approx(0.635)
        assert "zero_accept_rate" not in run

    def test_a_rate_over_100_percent_is_kept_in_extra(self):
        doc = json.loads(fixture(SPEC))
        doc["spec_decode_overall_draft_acceptance_rate"]["avg"] = 140.0
        parsed = importers.parse("s.json", dumps(doc))
        assert "acceptance_rate" not in only(parsed)
        # In the file's unit: 140 is no percentage (an analyst's pass: "not a fraction between 0 and 1").
        assert [n.key for n in parsed.warnings] == ["warn.rejected.percentage"]
        assert "is not a percentage between 0 and 100" in str(parsed.warnings[0])

    @pytest.mark.parametrize("histogram", [{}, {"0": 0}, {"0": -1, "1": 5}, {"0": "many"}, [3, 4],
                                           {"1": 1e308, "2": 1e308}])
    def test_a_histogram_that_gives_no_share(self, histogram):
        doc = json.loads(fixture(SPEC))
        doc["pooled_spec_decode_acceptance_histogram"] = histogram
        assert "zero_accept_rate" not in only(importers.parse("s.json", dumps(doc)))


class TestCsv:
    def test_detected_over_genai_perf(self):
        source = Source(CSV, fixture(CSV))
        assert importers.detect_format(CSV, fixture(CSV)) == "aiperf"
        assert genai_perf.sniff(source) == 0.8

    def test_the_blocks(self):
        parsed = importers.parse(CSV, fixture(CSV))
        run = only(parsed)
        assert run["mean_ttft_ms"] == 95.4 and run["p50_ttft_ms"] == 80.1 and run["p99_ttft_ms"] == 300.2
        assert run["p90_tpot_ms"] == 10.4 and run["p50_e2el_ms"] == 4980.3  # its Inter Token Latency row
        assert run["request_throughput"] == 3.93 and run["output_throughput"] == 2439.34
        assert run["total_token_throughput"] == 6468.2 and run["num_requests"] == 120
        assert run["duration_s"] == 30.5
        assert run["acceptance_length"] == 2.75 and run["acceptance_rate"] == pytest.approx(0.584)
        assert parsed.warnings == []  # the GPU telemetry block is skipped, not warned about
        extra = json.loads(run["extra"])
        assert extra["time_to_first_token"] == {
            "unit": "ms", "avg": 95.4, "min": 41.2, "max": 310.75, "sum": 11448.0, "p1": 42.0, "p5": 48.5,
            "p10": 52.25, "p25": 61.0, "p50": 80.1, "p75": 110.3, "p90": 160.4, "p95": 210.0, "p99": 300.2, "std": 45.6}
        assert extra["zero_step_requests"] == {"unit": None, "avg": 2.0}
        assert "gpu_power_usage" not in extra

    def test_the_genai_perf_csv_stays_genai_perf(self):
        data = sample("profile_export_genai_perf.csv")
        assert importers.detect_format("g.csv", data) == "genai-perf"
        newer = (b"Metric,avg,min,max,p99,p95,p90,p75,p50,p25,p10,p5,p1\n"
                 b"Time To First Token (ms),1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0\n")
        assert importers.detect_format("g.csv", newer) == "genai-perf"

    def test_the_first_versions_header_without_sum(self):
        data = (b"Metric,avg,min,max,p1,p5,p10,p25,p50,p75,p90,p95,p99,std\n"
                b"Time to First Token (ms),20.00,10.00,40.00,10.00,11.00,12.00,15.00,19.00,24.00,30.00,35.00,39.00,"
                b"6.00\n"
                b"\nMetric,Value\nRequest Throughput (requests/sec),7.25\nRequest Count,50\n")
        run = only(importers.parse("old.csv", data))
        assert run["p50_ttft_ms"] == 19.0 and run["request_throughput"] == 7.25 and run["num_requests"] == 50

    def test_a_file_of_single_values_only(self):
        data = b"Metric,Value\r\nBenchmark Duration (sec),12.00\r\nRequest Throughput (requests/sec),4.00\r\n"
        assert importers.detect_format("v.csv", data) == "aiperf"
        assert only(importers.parse("v.csv", data))["duration_s"] == 12.0

    def test_a_header_without_rows_is_refused(self):
        with pytest.raises(importers.IngestError) as info:
            importers.parse("h.csv", b"Metric,avg,min,max,p1,p50,p99,std\n")
        assert info.value.key == "ingest.aiperf_no_table"

    def test_a_malformed_csv_is_refused(self):
        data = b"Metric,avg,min,max,p1,p50,p99,std\n" + b'"' + b"x" * 200_000 + b'",1\n'
        with pytest.raises(importers.IngestError) as info:
            importers.parse("m.csv", data)
        assert info.value.key == "ingest.aiperf_csv_malformed"


class TestRecordsJsonl:
    def test_not_claimed_by_vllm_or_sglang(self):
        source = Source(JSONL, fixture(JSONL))
        assert vllm.sniff(source) == 0 and sglang.sniff(source) == 0 and genai_perf.sniff(source) == 0
        assert importers.detect_format(JSONL, fixture(JSONL)) == "aiperf"

    def test_one_run_of_the_profiling_records(self):
        parsed = importers.parse(JSONL, fixture(JSONL))
        run = only(parsed)
        ttft = [100.0, 200.0, 150.0, 300.0]  # the warmup record's 999 ms is left out
        assert run["mean_ttft_ms"] == 187.5 and run["p50_ttft_ms"] == 175.0
        assert run["p90_ttft_ms"] == pytest.approx(np.percentile(ttft, 90)) == pytest.approx(270.0)
        assert run["p99_ttft_ms"] == pytest.approx(297.0)
        # inter_token_latency, one a request, is vLLM's TPOT; these records have no chunk gaps, so no ITL
        assert run["mean_tpot_ms"] == 10.5 and run["p50_e2el_ms"] == 2250.0 and run["p99_e2el_ms"] == 2985.0
        assert "mean_itl_ms" not in run
        assert run["num_requests"] == 4 and run["failed_requests"] == 1
        # from the first request's start to the last response: 4.5 s
        assert run["duration_s"] == 4.5 and run["request_throughput"] == pytest.approx(4 / 4.5)
        assert run["output_throughput"] == pytest.approx((191 + 150 + 120 + 300) / 4.5)
        # pooled over the requests that ran verify steps: 1 + 260 accepted / 150 steps, 260 / 450 drafts
        assert run["acceptance_length"] == pytest.approx(1 + 260 / 150)
        assert run["acceptance_rate"] == pytest.approx(260 / 450)
        assert json.loads(run["extra"]) == {"records": 6, "warmup_records": 1, "first_request_start_ns": 1760000000000000000}
        requests = parsed.requests
        assert list(requests.columns) == ["run_index", "ttft_ms", "tpot_ms", "e2el_ms", "input_tokens", "output_tokens",
                                          "itl_ms", "drafts", "draft_tokens", "accepted_tokens", "acceptance_rate",
                                          "acceptance_length"]
        assert (requests.run_index == 0).all()
        assert requests.ttft_ms.tolist() == ttft and requests.output_tokens.tolist() == [191, 150, 120, 300]
        # each request's own spec_decode_* metrics, the rate from percent (72.222222 % of 180 drafted = 130)
        assert requests.drafts.tolist()[:3] == [60, 50, 40] and np.isnan(requests.drafts[3])
        assert requests.accepted_tokens.tolist()[:3] == [130, 90, 40]
        assert requests.acceptance_rate.tolist()[:3] == pytest.approx([0.72222222, 0.6, 0.33333333])
        assert requests.acceptance_length.tolist()[:3] == [3.166667, 2.8, 2.0]
        assert parsed.warnings == []

    def test_the_real_records_give_tpot_and_the_gaps_between_chunks(self):
        """AIPerf 0.3's records (10 of the sample's 64): a request's inter_token_latency is its
        (latency − TTFT) / (output tokens − 1), vLLM's TPOT; its inter_chunk_latency list the gaps
        between streamed chunks, whose mean over all requests is vLLM's mean ITL, and whose
        percentiles, over every gap pooled, are AIPerf's summary's (its metric collects "all ICL
        values from all requests … into a single list", numpy's linear percentiles)."""
        name = "2026/aiperf_0.3_concurrency1/profile_export.jsonl"
        records = [json.loads(line) for line in sample(name).splitlines()]
        parsed = importers.parse("profile_export.jsonl", sample(name))
        run, requests = only(parsed), parsed.requests
        metric = lambda r, tag: r["metrics"][tag]["value"]
        for record, tpot in zip(records, requests.tpot_ms):
            assert tpot == pytest.approx((metric(record, "request_latency") - metric(record, "time_to_first_token"))
                                         / (metric(record, "output_sequence_length") - 1))
        gaps = [metric(r, "inter_chunk_latency") for r in records]
        assert requests.itl_ms.tolist() == pytest.approx([sum(g) / len(g) for g in gaps])
        assert run["mean_itl_ms"] == pytest.approx(sum(map(sum, gaps)) / sum(map(len, gaps)))
        assert run["mean_tpot_ms"] == pytest.approx(np.mean([metric(r, "inter_token_latency") for r in records]))
        pooled = [gap for g in gaps for gap in g]
        assert len(pooled) == 1990 and [run[f"p{p}_itl_ms"] for p in (50, 90, 99)] == pytest.approx(
            np.percentile(pooled, [50, 90, 99]), rel=1e-12)
        assert run["p99_itl_ms"] == pytest.approx(20.35359358)  # by hand from the file: 18.08 ms the mean

    def test_a_list_of_gaps_with_an_element_that_is_no_gap_gives_none(self):
        """An attack pass: nulls and text were skipped by the sum and counted by the length (10, null,
        null gave 3.33 ms), and a negative gap was summed in."""
        lines = [json.loads(line) for line in fixture(JSONL).splitlines()]
        measured = [i for i, line in enumerate(lines) if "metrics" in line and line.get("error") is None
                    and line["metadata"].get("benchmark_phase") != "warmup"]
        for i, gaps in zip(measured, ([10, None, None], [10, "abc", 30], [-1000, 1010, 20], [20, 30, 40])):
            lines[i]["metrics"]["inter_chunk_latency"] = {"value": gaps, "unit": "ms"}
        parsed = importers.parse("p.jsonl", b"\n".join(json.dumps(line).encode() for line in lines))
        assert parsed.requests.itl_ms.tolist()[:3] == [pytest.approx(float("nan"), nan_ok=True)] * 3
        assert parsed.requests.itl_ms.tolist()[3] == 30.0 and only(parsed)["mean_itl_ms"] == 30.0
        # the percentiles are of the one list of gaps alone: 20, 30, 40
        assert [only(parsed)[f"p{p}_itl_ms"] for p in (50, 90, 99)] == pytest.approx([30.0, 38.0, 39.8])

    def test_the_gaps_percentiles_pool_every_unit_in_milliseconds(self):
        """Each request's list in its own unit (ns, µs, s), all converted before they are pooled; a
        list in a unit that is no time is left out of the percentiles as of the mean."""
        lines = [json.loads(line) for line in fixture(JSONL).splitlines()]
        measured = [i for i, line in enumerate(lines) if "metrics" in line and line.get("error") is None
                    and line["metadata"].get("benchmark_phase") != "warmup"]
        for i, (gaps, unit) in zip(measured, (([1e7, 2e7], "ns"), ([30_000], "us"), ([0.04, 0.05], "sec"),
                                              ([999], "tokens"))):
            lines[i]["metrics"]["inter_chunk_latency"] = {"value": gaps, "unit": unit}
        run = only(importers.parse("p.jsonl", b"\n".join(json.dumps(line).encode() for line in lines)))
        assert run["mean_itl_ms"] == pytest.approx(30.0)  # 10, 20, 30, 40, 50 ms
        assert [run[f"p{p}_itl_ms"] for p in (50, 90, 99)] == pytest.approx([30.0, 46.0, 49.6])

    def test_a_line_longer_than_duckdb_s_own_buffer_is_read(self, monkeypatch):
        """An attack pass: a line of 3.5M chunk gaps (21 MB) had been called malformed JSON, past
        DuckDB's default 16 MiB object. It is read; where DuckDB's share of the memory is too small
        for it, the message says so and which setting to raise, not that the machine has none free."""
        lines = [json.loads(line) for line in fixture(JSONL).splitlines()]
        measured = next(i for i, line in enumerate(lines) if "metrics" in line and line.get("error") is None
                        and line["metadata"].get("benchmark_phase") != "warmup")
        lines[measured]["metrics"]["inter_chunk_latency"] = {"value": [7.25] * 3_500_000, "unit": "ms"}
        long = b"\n".join(json.dumps(line).encode() for line in lines)
        assert len(long) > 20_000_000
        assert only(importers.parse("long.jsonl", long))["mean_itl_ms"] == 7.25
        monkeypatch.setenv("SPECVIZ_IMPORT_MEMORY_BYTES", str(300_000_000))  # DuckDB's 256 MiB, its least
        with pytest.raises(importers.IngestError) as info:
            importers.parse("long.jsonl", long)
        assert info.value.key == "ingest.duckdb_memory"
        assert "268 MB it may use" in str(info.value) and "SPECVIZ_IMPORT_MEMORY_BYTES" in str(info.value)

    def test_times_in_other_units_and_values_no_request_has(self):
        lines = [json.loads(line) for line in fixture(JSONL).splitlines()]
        lines[1]["metrics"]["time_to_first_token"] = {"value": 0.1, "unit": "sec"}
        lines[2]["metrics"]["time_to_first_token"] = {"value": 200_000_000, "unit": "ns"}
        lines[3]["metrics"]["time_to_first_token"] = {"value": -5, "unit": "ms"}
        lines[4]["metrics"]["time_to_first_token"] = {"value": 300, "unit": "parsecs"}
        parsed = importers.parse("r.jsonl", b"\n".join(dumps(line) for line in lines))
        assert parsed.requests.ttft_ms.tolist()[:2] == [100.0, 200.0]
        assert parsed.requests.ttft_ms.isna().tolist() == [False, False, True, True]
        assert only(parsed)["mean_ttft_ms"] == 150.0

    def test_failed_requests_only(self):
        line = fixture(JSONL).splitlines()[-1]
        run = only(importers.parse("f.jsonl", line))
        assert run["failed_requests"] == 1 and run["num_requests"] == 0 and "mean_ttft_ms" not in run

    def test_warmup_records_only_are_refused(self):
        with pytest.raises(importers.IngestError) as info:
            importers.parse("w.jsonl", fixture(JSONL).splitlines()[0])
        assert info.value.key == "ingest.aiperf_warmup_only"

    def test_a_line_that_is_no_record_is_refused(self):
        with pytest.raises(importers.IngestError, match="line 3 is not an AIPerf per-request record") as info:
            importers.parse("x.jsonl", b"\n".join(fixture(JSONL).splitlines()[:2] + [b'{"metrics": {}}']))
        assert info.value.key == "ingest.aiperf_record"

    def test_the_memory_of_the_rows_is_charged_before_they_are_taken_out(self, monkeypatch):
        """DuckDB, within its own memory limit, counts the records; their memory in Python is
        charged before any is taken out of it."""
        records = b"\n".join([fixture(JSONL).splitlines()[1]] * 2000)
        needed = source._RUN_BYTES + aiperf.records._REQUEST_BYTES * 2000  # a request a record
        monkeypatch.setattr(aiperf.records.duckdb.DuckDBPyRelation, "to_arrow_table", pytest.fail)
        monkeypatch.setenv("SPECVIZ_IMPORT_MEMORY_BYTES", str(needed - 1))
        with pytest.raises(importers.IngestError, match="SPECVIZ_IMPORT_MEMORY_BYTES"):
            importers.parse("big.jsonl", records)
        monkeypatch.undo()
        monkeypatch.setenv("SPECVIZ_IMPORT_MEMORY_BYTES", str(needed + 10_000))  # and the run's extra stored
        assert len(importers.parse("big.jsonl", records).requests) == 2000

    def test_claimed_by_its_first_line_and_never_decoded_by_python(self, monkeypatch):
        monkeypatch.setattr(source.Source, "documents", property(lambda source: pytest.fail("decoded whole")))
        assert importers.detect_format(SPEC_JSONL, fixture(SPEC_JSONL)) == "aiperf"
        assert only(importers.parse(SPEC_JSONL, fixture(SPEC_JSONL)))["num_requests"] == 4

    @pytest.mark.parametrize("edit", [lambda d: b"\xef\xbb\xbf" + d, lambda d: d.replace(b"\n", b"\r\n"),
                                      lambda d: d.replace(b"\n", b"\n\n"), bytes.rstrip])
    def test_a_byte_order_mark_and_other_line_ends(self, edit):
        run = only(importers.parse("e.jsonl", edit(fixture(SPEC_JSONL))))
        assert run["num_requests"] == 4 and run["acceptance_rate"] == pytest.approx(14 / 201)

    def test_records_over_several_lines_are_read_too(self):
        lines = [json.loads(line) for line in fixture(SPEC_JSONL).splitlines()]
        pretty = b"\n".join(json.dumps(line, indent=2).encode() for line in lines)
        assert not aiperf.claims(Source("p.jsonl", pretty))
        run = only(importers.parse("p.jsonl", pretty))
        assert run["num_requests"] == 4 and run["acceptance_rate"] == pytest.approx(14 / 201)


class TestPerRequestAcceptance:
    """``spec_decode_acceptance`` on each line (AIPerf at ``--export-level records``), in the fixture
    built from AIPerf's vLLM adapter test payloads (SUMMARY, DETAILED and the fully rejected one)."""

    def test_each_request_s_own_acceptance(self):
        parsed = importers.parse(SPEC_JSONL, fixture(SPEC_JSONL))
        requests = parsed.requests
        assert len(requests) == 4  # the warmup line and the failed one are not requests of the run
        # lines 2-4: the records verbatim; line 5 has none (no verify step): NaN
        assert requests.drafts.tolist()[:3] == [43, 4, 20] and np.isnan(requests.drafts[3])
        assert requests.draft_tokens.tolist()[:3] == [129, 12, 60]
        assert requests.accepted_tokens.tolist()[:3] == [10, 4, 0]
        # a fraction (the record's), not the metric's percent: 10 / 129, 4 / 12, 0 / 60
        assert requests.acceptance_rate.tolist()[:3] == [10 / 129, 4 / 12, 0.0]
        # 1 + accepted / steps: 1 + 10/43 = 1.2326, 1 + 4/4 = 2, 1 + 0/20 = 1
        assert requests.acceptance_length.tolist()[:3] == [1.2325581395348837, 2.0, 1.0]
        assert requests.extra.isna().tolist() == [False, False, False, True]
        assert json.loads(requests.extra[0]) == {"acceptance_histogram": {"0": 39, "1": 1, "3": 3},
                                                 "num_spec_tokens": 3}
        assert json.loads(requests.extra[2]) == {"acceptance_histogram": {"0": 20}, "num_spec_tokens": 3}

    def test_the_run_pooled_over_the_requests(self):
        run = only(importers.parse(SPEC_JSONL, fixture(SPEC_JSONL)))
        # steps 43 + 4 + 20 = 67, accepted 10 + 4 + 0 = 14, drafted 129 + 12 + 60 = 201
        assert run["acceptance_length"] == pytest.approx(1 + 14 / 67)
        assert run["acceptance_rate"] == pytest.approx(14 / 201)
        # pooled histogram {0: 39+2+20 = 61, 1: 1+1 = 2, 3: 3+1 = 4} over 67 steps: position i is
        # accepted by the steps that accepted more than i tokens: 6, 4 and 4 steps
        assert run["zero_accept_rate"] == pytest.approx(61 / 67)
        assert run["per_position_acceptance"] == pytest.approx([6 / 67, 4 / 67, 4 / 67])
        assert sum(run["per_position_acceptance"]) == pytest.approx(14 / 67)  # = accepted per step
        assert run["num_speculative_tokens"] == 3
        assert run["num_requests"] == 4 and run["failed_requests"] == 1
        assert run["duration_s"] == 4.0  # first start (T0) to last end (T0 + 4 s)
        assert json.loads(run["extra"])["pooled_spec_decode_acceptance_histogram"] == {"0": 61, "1": 2, "3": 4}

    def test_the_metrics_where_a_line_has_no_record(self):
        lines = [json.loads(line) for line in fixture(SPEC_JSONL).splitlines()]
        for line in lines:
            line["spec_decode_acceptance"] = None
        parsed = importers.parse("m.jsonl", b"\n".join(dumps(line) for line in lines))
        # the metrics' 7.751937984496124 % of line 2 read as a fraction
        assert parsed.requests.acceptance_rate[0] == pytest.approx(10 / 129)
        assert parsed.requests.drafts.tolist()[:3] == [43, 4, 20] and "extra" not in parsed.requests
        run = only(parsed)
        assert run["acceptance_rate"] == pytest.approx(14 / 201) and "per_position_acceptance" not in run

    @pytest.mark.parametrize("path, value, field, key, bounds", [
        # γ = 3: at most 3 drafts and the bonus token a step
        (("spec_decode_acceptance", "mean_acceptance_length"), 4.5, "spec_decode_acceptance.mean_acceptance_length",
         "ingest.request_acceptance_length", {"gamma": "3", "most": "4"}),
        (("spec_decode_acceptance", "mean_acceptance_length"), 0.5, "spec_decode_acceptance.mean_acceptance_length",
         "ingest.request_out_of_range", {"low": "1", "high": "γ + 1"}),
        (("spec_decode_acceptance", "draft_acceptance_rate"), 1.2, "spec_decode_acceptance.draft_acceptance_rate",
         "ingest.request_out_of_range", {"low": "0", "high": "1"}),
        (("spec_decode_acceptance", "draft_acceptance_rate"), -0.1, "spec_decode_acceptance.draft_acceptance_rate",
         "ingest.request_out_of_range", {"low": "0", "high": "1"}),
        (("metrics", "spec_decode_draft_acceptance_rate", "value"), 130.0,
         "metrics.spec_decode_draft_acceptance_rate.value", "ingest.request_out_of_range", {"low": "0", "high": "1"}),
    ])
    def test_an_impossible_acceptance_is_the_file_s_error(self, path, value, field, key, bounds):
        lines = [json.loads(line) for line in fixture(SPEC_JSONL).splitlines()]
        if path[0] == "metrics":
            lines[4]["spec_decode_acceptance"] = None  # line 5: a record without one, its metric read
            lines[4]["metrics"]["spec_decode_draft_acceptance_rate"] = {"value": value, "unit": "%"}
        else:
            mutate(lines[2], path, value)  # line 3
        with pytest.raises(importers.IngestError) as info:
            importers.parse("hostile.jsonl", b"\n".join(dumps(line) for line in lines))
        error = info.value
        assert error.key == key and error.file == "hostile.jsonl"
        assert error.params["field"] == field and error.params["record"] == (5 if path[0] == "metrics" else 3)
        assert {name: error.params[name] for name in bounds} == bounds
        for lang in ("en", "vi"):
            text = i18n.t(error.key, lang, **error.params)
            assert "hostile.jsonl" in text and field in text

    def test_without_gamma_only_a_length_below_one_is_impossible(self):
        lines = [json.loads(line) for line in fixture(SPEC_JSONL).splitlines()]
        del lines[1]["spec_decode_acceptance"]["num_spec_tokens"]
        lines[1]["spec_decode_acceptance"]["mean_acceptance_length"] = 9.0
        parsed = importers.parse("k.jsonl", b"\n".join(dumps(line) for line in lines))
        assert parsed.requests.acceptance_length[0] == 9.0

    def test_a_refused_file_loses_nothing_stored(self, tmp_path):
        lines = [json.loads(line) for line in fixture(SPEC_JSONL).splitlines()]
        lines[3]["spec_decode_acceptance"]["draft_acceptance_rate"] = 7.0
        store = Store(tmp_path / "s.duckdb")
        try:
            assert store.import_file(SPEC_JSONL, fixture(SPEC_JSONL)).requests == 4
            before = store.runs()
            with pytest.raises(importers.IngestError, match="draft_acceptance_rate"):
                store.import_file("hostile.jsonl", b"\n".join(dumps(line) for line in lines))
            after = store.runs()
            assert after.run_id.tolist() == before.run_id.tolist()
            stored = store.query("SELECT drafts, acceptance_rate, acceptance_length, extra FROM requests "
                                 "ORDER BY drafts").frame
            assert stored.drafts.tolist()[:3] == [4, 20, 43]
            assert stored.acceptance_rate.tolist()[:3] == pytest.approx([4 / 12, 0.0, 10 / 129])
            assert json.loads(stored.extra[2])["acceptance_histogram"] == {"0": 39, "1": 1, "3": 3}
        finally:
            store.close()


class TestSweeps:
    # The sweep's example of AIPerf's docs, by concurrency: (request_throughput_avg mean, time_to_first_token_p99 mean)
    CELLS = {10: (100.5, 120.5), 20: (180.3, 135.2), 30: (270.8, 155.8), 40: (285.5, 180.3)}

    @pytest.mark.parametrize("name", [SWEEP, SWEEP_CSV])
    def test_a_run_per_cell(self, name):
        parsed = importers.parse(name, fixture(name))
        assert parsed.format == "aiperf" and parsed.warnings == []
        assert [(r["concurrency"], r["request_throughput"], r["p99_ttft_ms"]) for r in parsed.runs] == [
            (c, tp, ttft) for c, (tp, ttft) in self.CELLS.items()]
        extra = json.loads(parsed.runs[0]["extra"])
        assert extra["sweep"] == {"concurrency": 10}
        # the spread over the trials kept: the JSON's std 5.2 and CI, the CSV's std and cv
        assert extra["metrics"]["request_throughput_avg"]["std"] == 5.2
        assert "mean_ttft_ms" not in parsed.runs[0]  # only the p99 was aggregated

    def test_a_grid_cell_by_dotted_parameters_and_single_trial_blocks(self):
        doc = {"aggregation_type": "sweep", "num_profile_runs": 1, "per_combination_metrics": [
            {"parameters": {"phases.profiling.concurrency": 8, "datasets.main.prompts.isl": 512},
             # one trial: a block per tag with the run's own statistics (AIPerf's single-trial projection)
             "metrics": {"time_to_first_token": {"mean": 40.0, "avg": 40.0, "p50": 38.0, "p99": 90.0, "std": 0,
                                                 "unit": "ms"},
                         "request_throughput_avg": {"mean": 5.0, "std": 0.0, "unit": "requests/sec"}}}]}
        run = only(importers.parse("grid.json", dumps(doc)))
        assert run["concurrency"] == 8 and run["request_throughput"] == 5.0
        assert run["mean_ttft_ms"] == 40.0 and run["p50_ttft_ms"] == 38.0 and run["p99_ttft_ms"] == 90.0
        assert json.loads(run["extra"])["sweep"] == {"concurrency": 8, "isl": 512}

    def test_a_combination_that_is_none_is_refused(self):
        doc = json.loads(fixture(SWEEP))
        doc["per_combination_metrics"][2] = {"parameters": {"concurrency": 30}}
        with pytest.raises(importers.IngestError) as info:
            importers.parse("s.json", dumps(doc))
        assert info.value.key == "ingest.aiperf_sweep_entry" and info.value.params["entry"] == 3

    def test_the_aggregate_of_a_cell_takes_its_load_from_the_folder(self):
        run = only(importers.parse(f"bench/aggregate/concurrency_10__isl_512/{AGGREGATE}", fixture(AGGREGATE)))
        assert run["concurrency"] == 10 and run["request_throughput"] == 100.5 and run["p99_ttft_ms"] == 120.5
        extra = json.loads(run["extra"])
        assert extra["sweep"] == {"concurrency": 10, "isl": 512} and extra["metadata"]["num_profile_runs"] == 3
        assert "concurrency" not in only(importers.parse(AGGREGATE, fixture(AGGREGATE)))  # no cell, no load

    def test_a_cell_fills_only_a_load_the_file_does_not_give(self):
        run = only(importers.parse(f"bench/concurrency_32__isl_128/{REAL}", sample(REAL_2026)))
        assert run["concurrency"] == 16  # the file's own phases (the real run's), not the folder's 32
        assert json.loads(run["extra"])["sweep"] == {"concurrency": 32, "isl": 128}
        records = only(importers.parse(f"bench/request_rate_2.5/{JSONL}", fixture(JSONL)))
        assert records["request_rate"] == 2.5 and "concurrency" not in records

    def test_a_folder_spelled_as_aiperf_never_writes_a_value_is_no_cell(self):
        """`specviz ingest .../aiperf_0.10/profile_export_aiperf.json` stored a sweep of "aiperf" at 0.1
        (an analyst's pass): AIPerf writes a cell's value as Python writes the number."""
        for folder in ("aiperf_0.10", "concurrency_010"):
            run = only(importers.parse(f"samples/{folder}/{REAL}", sample(REAL_2026)))
            assert "sweep" not in json.loads(run["extra"]), folder

    @staticmethod
    def tree(root: Path, files: dict[str, bytes]) -> Path:
        for name, data in files.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_bytes(data)
        return root

    def test_a_single_trial_sweep_folder_reads_each_cell_once(self, tmp_path):
        cell = "bench/concurrency_10__isl_512"
        base = self.tree(tmp_path, {f"{cell}/profile_export_aiperf.json": sample(REAL_2026),
                                    f"{cell}/profile_export_aiperf.csv": fixture(CSV),
                                    f"{cell}/profile_export.jsonl": fixture(JSONL),
                                    "bench/concurrency_20__isl_512/profile_export_aiperf.json": sample(REAL_2026),
                                    f"bench/sweep_aggregate/{aiperf._SWEEP}": fixture(SWEEP),
                                    "bench/sweep_aggregate/profile_export_aiperf_sweep.csv": fixture(SWEEP_CSV)})
        found = importers.folder_files(base)
        assert [str(f.relative_to(base)) for f in found.files] == [
            f"{cell}/profile_export_aiperf.json", "bench/concurrency_20__isl_512/profile_export_aiperf.json"]
        assert {str(f.relative_to(base)): (why.reason, str(why.holder.relative_to(base)))
                for f, why in found.left_out.items()} == {
            f"{cell}/profile_export_aiperf.csv": ("aiperf_copy", f"{cell}/profile_export_aiperf.json"),
            f"{cell}/profile_export.jsonl": ("aiperf_copy", f"{cell}/profile_export_aiperf.json"),
            "bench/sweep_aggregate/profile_export_aiperf_sweep.json": ("aiperf_sweep", "bench"),
            "bench/sweep_aggregate/profile_export_aiperf_sweep.csv": ("aiperf_copy", "bench")}

    @pytest.mark.parametrize("layout", ["repeated", "independent"])
    def test_the_aggregate_is_a_repeated_cell_s_one_run(self, tmp_path, layout):
        trials = [f"profile_runs/trial_000{i}/concurrency_10" if layout == "repeated" else
                  f"concurrency_10/profile_runs/trial_000{i}" for i in (1, 2)]
        aggregate = "aggregate/concurrency_10" if layout == "repeated" else "concurrency_10/aggregate"
        sweep = "aggregate/sweep_aggregate" if layout == "repeated" else "sweep_aggregate"
        base = self.tree(tmp_path, {**{f"{t}/profile_export_aiperf.json": sample(REAL_2026) for t in trials},
                                    **{f"{t}/profile_export.jsonl": fixture(JSONL) for t in trials},
                                    f"{aggregate}/{AGGREGATE.removeprefix('aiperf_')}": fixture(AGGREGATE),
                                    f"{sweep}/profile_export_aiperf_sweep.json": fixture(SWEEP)})
        found = importers.folder_files(base)
        assert [str(f.relative_to(base)) for f in found.files] == [f"{aggregate}/profile_export_aiperf_aggregate.json"]
        assert sorted((why.reason, str(why.holder.relative_to(base))) for why in found.left_out.values()) == [
            ("aiperf_sweep", "."), *[("aiperf_trial", f"{aggregate}/profile_export_aiperf_aggregate.json")] * 4]

    def test_a_sweep_summary_alone_is_read(self, tmp_path):
        base = self.tree(tmp_path, {f"sweep_aggregate/{aiperf._SWEEP}": fixture(SWEEP),
                                    "sweep_aggregate/profile_export_aiperf_sweep.csv": fixture(SWEEP_CSV)})
        found = importers.folder_files(base)
        assert [f.name for f in found.files] == [aiperf._SWEEP]
        assert list(found.left_out.values()) == [importers.LeftOut("aiperf_copy", found.files[0])]

    def test_uploaded_names_are_chosen_as_a_folder_is(self):
        names = [PurePosixPath(name) for name in (
            "run/profile_runs/trial_0001/concurrency_4/profile_export_aiperf.json",
            "run/profile_runs/trial_0001/concurrency_4/profile_export.jsonl",
            "run/aggregate/concurrency_4/profile_export_aiperf_aggregate.json",
            "run/aggregate/concurrency_4/profile_export_aiperf_aggregate.csv",
            "run/aggregate/sweep_aggregate/profile_export_aiperf_sweep.json")]
        chosen = importers.select_files(names)
        assert chosen.files == [names[2]]
        assert {str(name): (why.reason, str(why.holder)) for name, why in chosen.left_out.items()} == {
            str(names[0]): ("aiperf_trial", str(names[2])), str(names[1]): ("aiperf_trial", str(names[2])),
            str(names[3]): ("aiperf_copy", str(names[2])), str(names[4]): ("aiperf_sweep", "run")}

    @pytest.mark.parametrize("reason", ["aiperf_copy", "aiperf_trial", "aiperf_sweep"])
    def test_each_reason_is_said_with_the_file_that_holds_its_runs(self, reason):
        """In the words the page and the command line share (``exp.left_out.*``)."""
        for lang in ("en", "vi"):
            said = i18n.t(f"exp.left_out.{reason}", lang, file="bench/x.csv", holder="bench/holder.json")
            assert "bench/x.csv" in said and "bench/holder.json" in said

    def test_the_command_line_accounts_for_every_file(self, tmp_path, capsys):
        cell = "bench/concurrency_10"
        base = self.tree(tmp_path / "in", {f"{cell}/profile_export_aiperf.json": sample(REAL_2026),
                                           f"{cell}/profile_export_aiperf.csv": fixture(CSV),
                                           f"{cell}/profile_export.jsonl": fixture(JSONL),
                                           f"{cell}/inputs.json": b'{"data": []}',
                                           f"bench/sweep_aggregate/{aiperf._SWEEP}": fixture(SWEEP)})
        code = cli.main(["ingest", str(base), "--db", str(tmp_path / "c.duckdb")])
        report = json.loads(capsys.readouterr().out)
        assert code == 2  # inputs.json, AIPerf's dataset, is no result file: an error of its own
        files = sorted(e["file"] for entries in report.values() for e in entries)
        assert files == sorted(str(p) for p in base.rglob("*") if p.is_file())
        assert [(e["file"].endswith(".json"), e["runs"]) for e in report["imported"]] == [(True, 1)]
        assert sorted(e["message"].split(": ", 1)[1].split(",")[0] for e in report["skipped"]) == [
            "not read: an AIPerf sweep's summary", *["not read: its name makes it the same AIPerf run as " + str(base / cell /
                                                                                             "profile_export_aiperf.json")] * 2]


class TestServerMetrics:
    @pytest.mark.parametrize("name", [SERVER, SERVER_CSV])
    def test_the_run_s_acceptance_from_the_counters_increase(self, name):
        parsed = importers.parse(f"bench/concurrency_16/{name}", fixture(name))
        run = only(parsed)
        # two replicas' increase over the profiling period, summed: drafts 60 + 40 = 100, draft
        # tokens 180 + 120 = 300, accepted 130 + 105 = 235, per position 50+38, 45+36, 35+31
        assert run["acceptance_rate"] == pytest.approx(235 / 300)
        assert run["acceptance_length"] == pytest.approx(1 + 235 / 100)
        assert run["per_position_acceptance"] == pytest.approx([0.88, 0.81, 0.66])
        assert run["zero_accept_rate"] == pytest.approx(0.12) and run["num_speculative_tokens"] == 3
        assert run["engine"] == "vllm" and run["target_model"] == "qwen3.6-nvfp4" and run["concurrency"] == 16
        assert [n.key for n in parsed.warnings] == ["prom.notice.summed"]  # over the two endpoints
        counts = json.loads(run["extra"])["server_metrics"]
        assert (counts["drafts"], counts["draft_tokens"], counts["accepted_tokens"]) == (100, 300, 235)

    def test_the_json_s_period_and_configuration(self):
        run = only(importers.parse(SERVER, fixture(SERVER)))
        assert run["duration_s"] == 90.5  # 10:00:00 to 10:01:30.5
        assert run["endpoint"] == "chat"  # the real 0.10 file's input_config
        assert json.loads(run["extra"])["benchmark_id"] == "3f6c2a9e-5b1d-4c8e-9a7f-1d2e3c4b5a69"

    def test_labels_are_escaped_and_what_is_no_name_or_number_left_out(self):
        doc = json.loads(fixture(SERVER))
        drafts = doc["metrics"]["vllm:spec_decode_num_drafts_total"]["series"]
        drafts[0]["labels"].update({"note": 'a "quoted" \\ value\non two lines', "not a name": "x"})
        drafts[1]["labels"]["note"] = 'a "quoted" \\ value\non two lines'
        doc["metrics"]["vllm:num_requests_running"]["series"][0]["stats"]["avg"] = "many"
        doc["metrics"]["bad metric name"] = {"type": "counter", "series": [{"stats": {"total": 1}}]}
        run = only(importers.parse(SERVER, dumps(doc)))
        assert run["acceptance_length"] == pytest.approx(3.35) and run["acceptance_rate"] == pytest.approx(235 / 300)

    def test_a_server_without_speculative_decoding_gives_no_run(self):
        doc = json.loads(fixture(SERVER))
        doc["metrics"] = {k: v for k, v in doc["metrics"].items() if "spec_decode" not in k}
        with pytest.raises(importers.IngestError) as info:
            importers.parse("plain/server_metrics_export.json", dumps(doc))
        error = info.value
        assert error.key == "ingest.aiperf_server_metrics" and error.params["reason"].key == "prom.no_spec_decode"
        assert "plain/server_metrics_export.json" in i18n.t(error.key, "vi", **error.params)

    def test_stored_and_the_csv_beside_left_out(self, tmp_path):
        store = Store(tmp_path / "s.duckdb")
        try:
            result = store.import_file(SERVER, fixture(SERVER))
            assert (result.status, result.runs) == ("imported", 1)
            stored = store.runs()
            assert stored.per_position_acceptance[0].tolist() == pytest.approx([0.88, 0.81, 0.66])
        finally:
            store.close()
        folder = TestSweeps.tree(tmp_path / "run", {"server_metrics_export.json": fixture(SERVER),
                                                     "server_metrics_export.csv": fixture(SERVER_CSV)})
        assert [f.name for f in importers.folder_files(folder).files] == ["server_metrics_export.json"]


# Variants of AIPerf's files: at some of these places a value is removed or replaced by one no tool writes.
DELETE = object()
SUMMARY_PATHS = [
    ("time_to_first_token",), ("time_to_first_token", "p50"), ("time_to_first_token", "unit"),
    ("inter_token_latency", "avg"), ("request_latency",), ("request_latency", "p99"), ("request_count", "avg"),
    ("request_throughput",), ("benchmark_duration", "unit"), ("benchmark_duration", "avg"), ("aiperf_version",),
    ("input_config",), ("input_config", "phases"), ("input_config", "phases", 1),
    ("input_config", "phases", 1, "concurrency"), ("input_config", "phases", 1, "rate"),
    ("input_config", "phases", 0, "exclude_from_results"), ("input_config", "models"),
    ("input_config", "models", "items"), ("input_config", "models", "items", 0, "name"),
    ("input_config", "endpoint"), ("input_config", "endpoint", "type"),
    ("spec_decode_acceptance_length",), ("spec_decode_token_weighted_acceptance_length", "avg"),
    ("spec_decode_overall_draft_acceptance_rate", "avg"), ("spec_decode_overall_draft_acceptance_rate", "unit"),
    ("spec_decode_draft_acceptance_rate",), ("pooled_spec_decode_acceptance_histogram",),
    ("pooled_spec_decode_acceptance_histogram", "0"),
]
RECORD_PATHS = [(i, *path) for i in range(6) for path in [
    (), ("metadata",), ("metadata", "benchmark_phase"), ("metadata", "request_start_ns"),
    ("metadata", "request_end_ns"),
    ("metrics",), ("metrics", "time_to_first_token"), ("metrics", "time_to_first_token", "value"),
    ("metrics", "inter_token_latency", "unit"), ("metrics", "request_latency", "value"),
    ("metrics", "output_sequence_length", "value"), ("metrics", "spec_decode_steps", "value"),
    ("metrics", "spec_decode_draft_tokens", "value"), ("error",)]]
ACCEPTANCE_PATHS = [(i, "spec_decode_acceptance", *path) for i in range(1, 5) for path in [
    (), ("mean_acceptance_length",), ("draft_acceptance_rate",), ("acceptance_histogram",),
    ("acceptance_histogram", "0"), ("acceptance_histogram", "3"), ("num_accepted_draft_tokens",),
    ("num_draft_tokens",), ("num_spec_steps",), ("num_spec_tokens",)]]
SWEEP_PATHS = [("aggregation_type",), ("per_combination_metrics",), ("pareto_optimal",), *[
    ("per_combination_metrics", i, *path) for i in (0, 3) for path in [
        (), ("parameters",), ("parameters", "concurrency"), ("metrics",), ("metrics", "request_throughput_avg"),
        ("metrics", "request_throughput_avg", "mean"), ("metrics", "time_to_first_token_p99", "unit"),
        ("metrics", "time_to_first_token_p99", "mean")]]]
AGGREGATE_PATHS = [("metadata",), ("metadata", "aggregation_type"), ("metrics",), ("metrics", "request_throughput_avg"),
                   ("metrics", "request_throughput_avg", "mean"), ("metrics", "time_to_first_token_p99", "unit")]
SERVER_PATHS = [("metrics",), ("summary",), ("summary", "start_time"), ("summary", "end_time"), ("input_config",), *[
    ("metrics", metric, *path)
    for metric in ("vllm:spec_decode_num_drafts_total", "vllm:spec_decode_num_accepted_tokens_per_pos_total",
                   "vllm:num_requests_running")
    for path in [(), ("type",), ("series",), ("series", 1), ("series", 1, "labels"),
                 ("series", 1, "labels", "position"),
                 ("series", 1, "labels", "model_name"), ("series", 1, "stats"), ("series", 1, "stats", "total"),
                 ("series", 1, "stats", "avg"), ("series", 1, "endpoint_url")]]]
DOCUMENTS = [(SPEC, SUMMARY_PATHS), (SWEEP, SWEEP_PATHS), (AGGREGATE, AGGREGATE_PATHS), (SERVER, SERVER_PATHS)]
hostile = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-2**70, max_value=2**70) | st.floats(allow_nan=True)
    | st.sampled_from([10**400, -10**400, 1e308, -1.0, 0, "16", "ms", "sec", "%", "inf", "NaN", "", "warmup"])
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6)


def mutate(doc, path, value):
    """``doc`` with the value at ``path`` replaced or removed, where the path leads somewhere."""
    *steps, last = path
    node = doc
    for step in steps:
        if (isinstance(node, dict) and step in node
                or isinstance(node, list) and isinstance(step, int) and step < len(node)):
            node = node[step]
        else:
            return
    if isinstance(node, dict) and isinstance(last, str):
        if value is DELETE:
            node.pop(last, None)
        else:
            node[last] = value
    elif isinstance(node, list) and isinstance(last, int) and last < len(node):
        if value is DELETE:
            del node[last]
        else:
            node[last] = value


class TestFuzzedVariants:
    @settings(max_examples=400)
    @given(st.sampled_from(DOCUMENTS).flatmap(
        lambda case: st.tuples(st.just(case[0]), st.lists(st.tuples(st.sampled_from(case[1]),
                                                                    st.just(DELETE) | hostile), max_size=4))))
    def test_json_documents(self, case):
        name, edits = case
        doc = json.loads(fixture(name))
        if name == SPEC:
            doc["input_config"]["models"] = json.loads(sample(REAL))["input_config"]["models"]
        for path, value in edits:
            mutate(doc, path, value)
        parses_or_refuses(f"bench/concurrency_8__isl_64/{name}", dumps(doc))

    @settings(max_examples=60)  # DuckDB reads each: about 60 ms an example, 110 ms under the suite's load
    @given(st.sampled_from([(JSONL, RECORD_PATHS), (SPEC_JSONL, ACCEPTANCE_PATHS)]).flatmap(
        lambda case: st.tuples(st.just(case[0]), st.lists(st.tuples(st.sampled_from(case[1]),
                                                                    st.just(DELETE) | hostile), max_size=4))))
    def test_records_jsonl(self, case):
        name, edits = case
        records = [json.loads(line) for line in fixture(name).splitlines()]
        for path, value in edits:
            mutate(records, path, value)
        parses_or_refuses("r.jsonl", b"\n".join(dumps(r) for r in records) or b"{}")

    @settings(max_examples=200)
    @given(st.sampled_from([CSV, SWEEP_CSV, SERVER_CSV]),
           st.lists(st.tuples(st.integers(0, 22), st.integers(0, 18), st.text(max_size=10)
                              | st.sampled_from(["1e308", "-3", "inf", "nan", "1,234.5", "(ms)", "Metric", "counter",
                                                 "gauge", "vllm:spec_decode_num_drafts_total", "0"])),
                    max_size=5))
    def test_csv(self, name, edits):
        rows = list(csv.reader(io.StringIO(fixture(name).decode(), newline="")))
        for row, column, text in edits:
            if row < len(rows) and column < len(rows[row]):
                rows[row][column] = text
        out = io.StringIO()
        csv.writer(out).writerows(rows)
        parses_or_refuses("c.csv", out.getvalue().encode("utf-8", "surrogatepass"))


class TestStore:
    @pytest.mark.parametrize("first", ["summary", "records"])
    def test_a_runs_summary_and_its_records_are_one_run_whichever_comes_first(self, tmp_path, first):
        """AIPerf's profile_export_aiperf.json and profile_export.jsonl of one run, chosen one by one, had been
        two runs: one run now, of the records, with the summary's figures, model and concurrency."""
        summary, records = aiperf_run_pair()
        files = {"profile_export_aiperf.json": summary, "profile_export.jsonl": records}
        order = list(files) if first == "summary" else list(reversed(files))
        store = Store(tmp_path / "s.duckdb")
        try:
            results = [store.import_file(name, files[name]) for name in order]
            runs = store.runs()
            assert len(runs) == 1 and runs["source_file"].tolist() == ["profile_export.jsonl"]
            run = runs.iloc[0]
            parsed = only(aiperf.FORMAT.parse(Source("profile_export_aiperf.json", summary)))
            assert (run["concurrency"], run["target_model"], run["num_requests"]) == (1.0, "Qwen/Qwen3-0.6B", 10)
            assert run["p99_itl_ms"] == parsed["p99_itl_ms"] and run["mean_ttft_ms"] == parsed["mean_ttft_ms"]
            assert store.request_summary().requests.tolist() == [10]
            taken = store.imports().set_index("source_file").loc["profile_export.jsonl", "warnings"]
            assert "warn.aiperf_summary_taken" in str(taken)
            if first == "records":
                assert results[1].status == "skipped"
                assert [w.key for w in results[1].warnings] == ["warn.aiperf_summary_given"]
            else:
                assert [w.key for w in results[1].warnings] == ["warn.aiperf_summary_taken"]
            # The summary again changes nothing; the records removed, the run goes, and the summary is
            # its own run again.
            assert store.import_file("copy/profile_export_aiperf.json", summary).status == "skipped"
            assert len(store.runs()) == 1
            store.remove_import(store.imports().set_index("source_file").loc["profile_export.jsonl", "content_hash"])
            assert store.runs().empty
            assert store.import_file("profile_export_aiperf.json", summary).status == "imported"
        finally:
            store.close()

    def test_another_summary_or_another_copy_of_the_records_is_not_mixed_in(self, tmp_path):
        """An attack pass: a second summary of the same requests with other figures had overwritten some
        of the first's and left the rest; a second copy of the records, other bytes, had taken the merged
        run for a summary and replaced it. Each is a run of its own now."""
        summary, records = aiperf_run_pair()
        other = json.loads(summary)
        other["time_to_first_token"]["p99"] = 999.0
        store = Store(tmp_path / "s.duckdb")
        try:
            store.import_file("run/profile_export.jsonl", records)
            store.import_file("run/profile_export_aiperf.json", summary)
            assert store.import_file("other/profile_export_aiperf.json", dumps(other)).status == "imported"
            runs = store.runs().set_index("source_file")
            assert runs.loc["run/profile_export.jsonl", "p99_ttft_ms"] != 999.0
            assert runs.loc["other/profile_export_aiperf.json", "p99_ttft_ms"] == 999.0
        finally:
            store.close()
        store = Store(tmp_path / "copy.duckdb")
        try:
            store.import_file("run/profile_export.jsonl", records)
            store.import_file("run/profile_export_aiperf.json", summary)
            assert store.import_file("copy/profile_export.jsonl", records + b"\n").status == "imported"
            runs = store.runs().set_index("source_file")
            assert sorted(runs.index) == ["copy/profile_export.jsonl", "run/profile_export.jsonl"]
            assert runs.loc["run/profile_export.jsonl", "target_model"] == "Qwen/Qwen3-0.6B"
            assert store.request_summary().requests.tolist() == [10, 10]
        finally:
            store.close()

    def test_a_summary_too_large_to_keep_beside_the_records_keeps_what_is_read(self, tmp_path, monkeypatch):
        """The records' run with the summary's extra had passed SPECVIZ_STORED_EXTRA_BYTES (an attack pass)."""
        summary, records = aiperf_run_pair()
        store = Store(tmp_path / "s.duckdb")
        try:
            store.import_file("profile_export_aiperf.json", summary)  # its extra, 12,896 bytes, within 64 KiB
            monkeypatch.setenv("SPECVIZ_STORED_EXTRA_BYTES", "12900")
            store.import_file("profile_export.jsonl", records)
            extra = json.loads(store.runs()["extra"].iloc[0])
            assert len(store.runs()["extra"].iloc[0].encode()) <= 12900
            assert extra["summary_extra"].startswith("(not stored: ") and extra["records"] == 10
            assert extra["figures_from"] == "profile_export_aiperf.json"
        finally:
            store.close()

    def test_a_summary_of_other_requests_stays_a_run_of_its_own(self, tmp_path):
        """The fixture's own summary counts 64 requests over 256 s; its JSONL keeps 10 of them: two runs."""
        store = Store(tmp_path / "s.duckdb")
        try:
            store.import_file("profile_export.jsonl", sample("2026/aiperf_0.3_concurrency1/profile_export.jsonl"))
            given = store.import_file("profile_export_aiperf.json", sample("2026/aiperf_0.3_concurrency1/profile_export_aiperf.json"))
            assert sorted(store.runs()["num_requests"]) == [10, 64]
            # Said, not in silence: the same first request, other counts (an analyst's pass).
            said = [str(w) for w in given.warnings if w.key == "warn.aiperf_not_same_requests"]
            assert len(said) == 1 and "profile_export.jsonl starts at this run's first request" in said[0]
            assert "(profile_export.jsonl) 10 requests over 39.4 s, the summary 64 over 255.6 s." in said[0]
            assert "may be cut short (only the run's first requests)" in said[0]  # not "not of the same requests"
            # Once an import, however many files share the first request (an attack pass: 30 summaries
            # had given 30 paragraphs); the records file by its own name.
            summary = sample("2026/aiperf_0.3_concurrency1/profile_export_aiperf.json")
            store.import_file("copy/profile_export_aiperf.json", summary + b"\n")
            records = sample("2026/aiperf_0.3_concurrency1/profile_export.jsonl")
            given = store.import_file("cut.jsonl", records + b"\n")
            (said,) = [str(w) for w in given.warnings if w.key == "warn.aiperf_not_same_requests"]
            assert "the records (cut.jsonl) 10 requests over 39.4 s" in said and " 1 other file does the same." in said
        finally:
            store.close()

    def test_import_end_to_end(self, tmp_path):
        store = Store(tmp_path / "s.duckdb")
        try:
            result = store.import_file(JSONL, fixture(JSONL))
            assert (result.status, result.format, result.runs, result.requests) == ("imported", "aiperf", 1, 4)
            result = store.import_file(REAL, sample(REAL))
            assert (result.status, result.format, result.runs) == ("imported", "aiperf", 1)
            runs = store.runs().set_index("source_file")
            assert runs.loc[REAL, "concurrency"] == 16 and runs.loc[REAL, "endpoint"] == "chat"
            assert runs.loc[REAL, "p99_tpot_ms"] == 13.272469915788289 and runs.loc[REAL, "p99_itl_ms"] == 117.98615575276864
            assert runs.loc[JSONL, "p50_ttft_ms"] == 175.0 and runs.loc[JSONL, "failed_requests"] == 1
            summary = store.request_summary()
            assert summary.requests.tolist() == [4]
        finally:
            store.close()
