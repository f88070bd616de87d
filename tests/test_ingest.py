"""Tests for specviz.ingest: the real sample files, other versions, refusals and fuzzed input."""

import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from specviz import ingest

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT.parent / "shared" / "samples"
FIXTURES = ROOT / "tests" / "fixtures"


def sample(name: str) -> bytes:
    return (SAMPLES / name).read_bytes()


class TestDetectFormat:
    @pytest.mark.parametrize("name, fmt", [
        ("vllm_bench_nerdalert.jsonl", "vllm-bench"), ("guidellm_benchmarks.json", "guidellm"),
        ("profile_export_genai_perf.csv", "genai-perf"), ("llmperf_Yi-1-5-34B_550_150_summary.json", "llmperf"),
    ])
    def test_real_samples(self, name, fmt):
        assert ingest.detect_format(name, sample(name)) == fmt

    def test_by_content_not_by_name(self):
        assert ingest.detect_format("results.csv", sample("llmperf_Yi-1-5-34B_550_150_summary.json")) == "llmperf"
        assert ingest.detect_format("x.json", b"concurrency,output_throughput\n1,2\n") == "csv"

    @pytest.mark.parametrize("data, message", [
        (b"", "empty"), (b"   \n", "empty"), (b"\x89PNG\r\n\x1a\n\x00\x00", "binary"),
        (b"\xff\xfe\xfa not utf8", "UTF-8"), (b'{"request_throughput": 1.0', "malformed or truncated"),
        (b'{"hello": "world"}', "unknown shape"), (b"[1, 2, 3]", "unknown shape"),
    ])
    def test_refusals_name_the_file(self, data, message):
        with pytest.raises(ingest.IngestError, match=message) as info:
            ingest.detect_format("upload.bin", data)
        assert str(info.value).startswith("upload.bin:")


class TestParseVllmBench:
    def test_nerdalert_jsonl(self):
        parsed = ingest.parse("r.jsonl", sample("vllm_bench_nerdalert.jsonl"))
        assert parsed.format == "vllm-bench" and len(parsed.runs) == 9
        first = parsed.runs[0]
        assert first["p50_itl_ms"] == pytest.approx(13.098381999952835)
        assert first["p99_ttft_ms"] == pytest.approx(98.69780922984769)
        assert first["request_rate"] == 10.0 and first["num_requests"] == 300
        assert first["gpu"] == "4xNVIDIA_L40S"  # a --metadata key with a column
        extra = json.loads(first["extra"])
        assert extra["deployment"] == "no-features"  # other --metadata keys kept
        assert "request_goodput:" in extra  # the old key with the colon, kept verbatim
        assert math.isinf(parsed.runs[2]["request_rate"])  # "inf"

    def test_spec_decode_keys_and_percentiles(self):
        parsed = ingest.parse("sd.json", (FIXTURES / "vllm_bench_spec_decode.json").read_bytes())
        run = parsed.runs[0]
        assert run["acceptance_rate"] == pytest.approx(0.615)  # a percentage in the file
        assert run["acceptance_length"] == 3.46
        assert run["per_position_acceptance"] == [0.82, 0.64, 0.55, 0.45]
        assert run["num_speculative_tokens"] == 4
        assert run["p90_itl_ms"] == 21.0 and run["mean_e2el_ms"] == 1620.0
        assert run["failed_requests"] == 2 and run["concurrency"] == 16
        assert json.loads(run["extra"])["spec_decode_num_drafts"] == 14650

    def test_detailed_arrays_become_requests(self):
        parsed = ingest.parse("sd.json", (FIXTURES / "vllm_bench_spec_decode.json").read_bytes())
        requests = parsed.requests
        assert len(requests) == 3 and set(requests.run_index) == {0}
        assert requests.ttft_ms[0] == pytest.approx(51.0) and requests.itl_ms[0] == pytest.approx(17.5)
        assert requests.itl_ms[1] == pytest.approx(16.0) and requests.output_tokens[1] == 256
        assert math.isnan(requests.ttft_ms[2]) and math.isnan(requests.itl_ms[2]) and parsed.warnings

    def test_wrong_types_are_kept_in_extra_with_a_warning(self):
        data = json.dumps({"request_throughput": "fast", "mean_ttft_ms": -4, "completed": 2.5,
                           "spec_decode_acceptance_rate": 250, "output_throughput": [1]}).encode()
        parsed = ingest.parse("odd.json", data)
        run = parsed.runs[0]
        assert not {"request_throughput", "mean_ttft_ms", "num_requests", "acceptance_rate",
                    "output_throughput"} & run.keys()
        assert json.loads(run["extra"])["request_throughput"] == "fast"
        assert len(parsed.warnings) == 5

    def test_a_jsonl_record_of_another_shape_is_refused(self):
        data = b'{"request_throughput": 1}\n{"something": "else"}\n'
        with pytest.raises(ingest.IngestError, match="unknown shape"):
            ingest.parse("mixed.jsonl", data)


class TestParseGuidellm:
    def test_matches_the_console_output(self):
        run = ingest.parse("g.json", sample("guidellm_benchmarks.json")).runs[0]
        # guidellm_benchmarks_stripped_console_output.txt: TTFT mean 16.8, median 16.4, p99 21.3;
        # ITL mean 4.9; request latency 0.64 s; 198.1 output tok/s; 1.55 req/s; concurrency 1.00
        assert round(run["mean_ttft_ms"], 1) == 16.8 and round(run["p50_ttft_ms"], 1) == 16.4
        assert round(run["p99_ttft_ms"], 1) == 21.3 and round(run["mean_itl_ms"], 1) == 4.9
        assert round(run["mean_e2el_ms"] / 1000, 2) == 0.64
        assert round(run["output_throughput"], 1) == 198.1 and round(run["request_throughput"], 2) == 1.55
        assert run["concurrency"] == 1 and run["label"] == "synchronous"
        assert run["num_requests"] == 46 and run["failed_requests"] == 0

    def test_newer_schema_is_refused_clearly(self):
        doc = {"benchmarks": [{"metrics": {"request_latency": {"mean": 1.0}}}]}
        with pytest.raises(ingest.IngestError, match="schema other than 0.2-0.3"):
            ingest.parse("new.json", json.dumps(doc).encode())


class TestParseGenaiPerf:
    def test_csv_with_thousands_separators(self):
        run = ingest.parse("p.csv", sample("profile_export_genai_perf.csv")).runs[0]
        assert run["mean_ttft_ms"] == 1146.31 and run["p99_ttft_ms"] == 3457.97
        assert run["p50_e2el_ms"] == 5690.23 and run["mean_itl_ms"] == 30.35
        assert run["output_throughput"] == 261.25 and run["request_throughput"] == 1.5
        assert run["num_requests"] == 40

    def test_newer_csv_with_more_percentile_columns(self):
        data = (b"Metric,avg,min,max,p99,p95,p90,p75,p50,p25,p10,p5,p1\n"
                b"Time To First Token (ms),\"1,000.00\",1.0,2.0,3.0,4.0,5.0,6.0,7.0,8.0,9.0,10.0,11.0\n"
                b"\nMetric,Value\nRequest Throughput (per sec),\"1,234.5\"\n")
        run = ingest.parse("new.csv", data).runs[0]
        assert run["mean_ttft_ms"] == 1000.0 and run["p50_ttft_ms"] == 7.0
        assert run["request_throughput"] == 1234.5

    def test_json_export(self):
        run = ingest.parse("p.json", (FIXTURES / "genai_perf_profile_export.json").read_bytes()).runs[0]
        assert run["p99_ttft_ms"] == 320.7 and run["p50_itl_ms"] == 16.1 and run["mean_e2el_ms"] == 4410.5
        assert run["output_throughput"] == 576.0 and run["request_throughput"] == 2.25
        assert run["concurrency"] == 8 and run["target_model"] == "Qwen/Qwen3-32B"


class TestParseLlmperf:
    def test_seconds_become_milliseconds(self):
        run = ingest.parse("s.json", sample("llmperf_Yi-1-5-34B_550_150_summary.json")).runs[0]
        assert run["mean_ttft_ms"] == pytest.approx(6056.374991535766)
        assert run["p50_itl_ms"] == pytest.approx(111.29316081666768)
        assert run["p99_e2el_ms"] == pytest.approx(18536.139904240063)
        assert run["concurrency"] == 16 and run["num_requests"] == 112
        assert run["target_model"] == "01-ai/Yi-1.5-34B-Chat"


class TestCsvSynonyms:
    @pytest.mark.parametrize("name, canonical, factor", [
        ("Concurrency", "concurrency", 1.0), ("p99 ITL (ms)", "p99_itl_ms", 1.0),
        ("median_ttft_s", "p50_ttft_ms", 1e3), ("acceptance rate %", "acceptance_rate", 1.0),
        ("acceptance_rate_pct", "acceptance_rate", 0.01), ("TTFT (s)", "request:ttft_ms", 1e3),
        ("output tok/s", "output_throughput", 1.0),
    ])
    def test_names_and_units(self, name, canonical, factor):
        assert ingest.CSV_SYNONYMS[ingest.normalise_name(name)] == (canonical, factor)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-2**70, max_value=2**70) | st.floats(allow_nan=True)
    | st.text(max_size=8), lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8)
vllm_keys = st.sampled_from(["request_throughput", "mean_ttft_ms", "p99_itl_ms", "completed", "max_concurrency",
                             "spec_decode_acceptance_rate", "spec_decode_per_position_acceptance_rates",
                             "request_rate", "duration", "ttfts", "itls", "label", "model_id"])


class TestFuzzedFiles:
    @settings(max_examples=150, deadline=None)
    @given(st.dictionaries(vllm_keys, json_values, min_size=1))
    def test_vllm_shaped_json_never_crashes(self, doc):
        doc.setdefault("request_throughput", 1.0)
        data = json.dumps(doc).encode()
        try:
            parsed = ingest.parse("fuzz.json", data)
        except ingest.IngestError:
            return
        for run in parsed.runs:
            json.loads(run["extra"], parse_constant=pytest.fail)  # strict JSON: no NaN or Infinity
            for key, value in run.items():
                if ingest.RUN_COLUMNS.get(key) == "DOUBLE" and value is not None and key != "request_rate":
                    assert math.isfinite(value) and value >= 0

    @settings(max_examples=100, deadline=None)
    @given(st.binary(max_size=200))
    def test_random_bytes_never_crash(self, data):
        try:
            if ingest.detect_format("fuzz.bin", data) != "csv":
                ingest.parse("fuzz.bin", data)
        except ingest.IngestError:
            pass

    @settings(max_examples=60, deadline=None)
    @given(st.lists(st.dictionaries(st.sampled_from(["benchmarks", "metrics", "successful", "mean", "args"]),
                                    json_values, max_size=4), max_size=3))
    def test_guidellm_shaped_json_never_crashes(self, benchmarks):
        try:
            ingest.parse("g.json", json.dumps({"benchmarks": benchmarks}).encode())
        except ingest.IngestError:
            pass
