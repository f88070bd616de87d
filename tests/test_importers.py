"""Tests for specviz.results.importers: the real sample files, other versions, refusals and fuzzed input."""

import hashlib
import json
import math
import os
import sys
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from conftest import parses_or_refuses
from specviz import i18n
from specviz.errors import Notice
from specviz.i18n import message
from specviz.results import importers
from specviz.results.importers import base, user_csv, source

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT.parent / "shared" / "samples"
FIXTURES = ROOT / "tests" / "fixtures"


def sample(name: str) -> bytes:
    return (SAMPLES / name).read_bytes()


class TestDetectFormat:
    @pytest.mark.parametrize("name, fmt", [
        ("vllm_bench_nerdalert.jsonl", "vllm-bench"), ("guidellm_benchmarks.json", "guidellm"),
        ("profile_export_genai_perf.csv", "genai-perf"), ("llmperf_Yi-1-5-34B_550_150_summary.json", "llmperf"),
        ("sglang_bench_serving_c8.jsonl", "sglang-bench"), ("vllm_0.25_bench_serve_specdecode.json", "vllm-bench"),
    ])
    def test_real_samples(self, name, fmt):
        assert importers.detect_format(name, sample(name)) == fmt

    def test_by_content_not_by_name(self):
        assert importers.detect_format("results.csv", sample("llmperf_Yi-1-5-34B_550_150_summary.json")) == "llmperf"
        assert importers.detect_format("x.json", b"concurrency,output_throughput\n1,2\n") == "csv"

    @pytest.mark.parametrize("data, message", [
        (b"", "empty"), (b"   \n", "empty"), (b"\x89PNG\r\n\x1a\n\x00\x00", "binary"),
        (b"\xff\xfe\xfa not utf8", "UTF-8"), (b'{"request_throughput": 1.0', "ends mid-record at line 1"),
        (b'{"hello": "world"}', "not a benchmark result file of a known format"),
        (b"[1, 2, 3]", "not a benchmark result file of a known format"),
    ])
    def test_refusals_name_the_file(self, data, message):
        with pytest.raises(importers.IngestError, match=message) as info:
            importers.detect_format("upload.bin", data)
        assert str(info.value).startswith("upload.bin:")


class TestRegistry:
    def test_the_format_names_of_the_cli(self):
        assert set(importers.FORMATS) >= {"vllm-bench", "guidellm", "genai-perf", "llmperf", "sglang-bench", "csv"}
        assert len(set(importers.FORMATS)) == len(importers.FORMATS)

    @pytest.mark.parametrize("name", ["README.md", "guidellm_benchmarks_stripped_console_output.txt"])
    def test_files_that_hold_no_results_are_refused_naming_the_formats_tried(self, name):
        with pytest.raises(importers.IngestError) as info:
            importers.parse(name, sample(name))
        assert info.value.key == "ingest.unknown_format"
        assert info.value.params["formats"] == ", ".join(importers.FORMATS)

    def test_a_servers_metrics_are_sent_where_they_are_read(self):
        """The analyst review: a /metrics scrape got the generic refusal; it is named as one, with the
        command and the page that read it. A table whose comment says TYPE is not one."""
        with pytest.raises(importers.IngestError) as info:
            importers.parse("metrics.txt", sample("vllm_metrics_specdecode_excerpt.prom"))
        assert info.value.key == "ingest.metrics_text" and "specviz metrics" in str(info.value)
        with pytest.raises(importers.IngestError) as info:
            importers.parse("notes.txt", b"# TYPE of run: chat\nsome words, no table\n")
        assert info.value.key == "ingest.unknown_format"

    @pytest.mark.parametrize("data", [
        b"<!DOCTYPE html>\n<html><head><title>x</title></head><body>a, b</body></html>\n",
        b"# My benchmark\n\nWe ran vllm, sglang and tgi at 8, 16, 32 users.\nResults below.\n",
        b"INFO 05-01 12:00:01 engine.py:1] Avg prompt throughput: 1.0 tokens/s, Running: 8 reqs\n"
        b"INFO 05-01 12:00:11 engine.py:1] Avg generation throughput: 512.3 tokens/s\n",
    ], ids=["html", "markdown", "console log"])
    def test_text_that_is_no_table_is_refused_before_any_mapping_step(self, data):
        with pytest.raises(importers.IngestError) as info:
            importers.parse("upload.txt", data)
        assert info.value.key == "ingest.unknown_format"
        assert not isinstance(info.value, importers.UnrecognisedColumnsError)

    @pytest.mark.parametrize("data, key, params", [
        (b"label,ttft_ms,\nA,10,\nB,11,\n", "ingest.csv_unnamed_column", {"column": 3}),
        (b"label," + b"x" * 300 + b"\nA,1\n", "ingest.csv_long_name", {"column": 2, "length": 300, "most": 200}),
        (b"label,mean_ttft_ms\nA,1\nB,11,12\nC,1\n", "ingest.csv_ragged", {"line": 3, "fields": 3, "columns": 2}),
    ], ids=["a trailing comma", "a name too long", "a row of more fields"])
    def test_a_table_that_is_not_one_says_why(self, data, key, params):
        """An attack pass: each had been "not a benchmark result file of a known format"."""
        with pytest.raises(importers.IngestError) as info:
            importers.parse("table.csv", data)
        assert info.value.key == key and info.value.params == {"file": "table.csv", **params}

    @pytest.mark.parametrize("delimiter, words", [(";", "semicolons (;)"), ("\t", "tabs"), ("|", "vertical bars (|)")])
    def test_a_table_separated_by_other_than_commas_is_said_to_be(self, delimiter, words):
        """A spreadsheet where the decimal mark is a comma (Vietnamese, German) saves its CSV with
        semicolons: it was "not a benchmark result file of a known format"."""
        data = "\n".join(delimiter.join(row) for row in
                         (["concurrency", "output_throughput", "mean_tpot_ms"], ["1", "139,8", "7,2"],
                          ["4", "548,4", "7,3"])).encode()
        with pytest.raises(importers.IngestError) as info:
            importers.parse("sweep.csv", data)
        assert info.value.key == "ingest.csv_delimiter"
        assert str(info.value) == (f"sweep.csv: its fields are separated by {words}, not commas: save it as a "
                                   "comma-separated CSV (in a spreadsheet, CSV UTF-8 (comma delimited)) and import it again")

    def test_a_table_of_unknown_columns_gets_the_mapping_step(self):
        assert importers.detect_format("mine.csv", b"conc,tput,who\n2,150,me\n4,280,me\n") == "csv"

    def test_a_json_document_is_decoded_once(self, monkeypatch):
        calls = []
        decode = source._json_documents
        monkeypatch.setattr(source, "_json_documents", lambda *args: calls.append(1) or decode(*args))
        importers.parse("s.jsonl", sample("sglang_bench_serving_c8.jsonl"))
        assert calls == [1]


class TestParseSglangBench:
    def test_the_real_sample(self):
        parsed = importers.parse("s.jsonl", sample("sglang_bench_serving_c8.jsonl"))
        run = parsed.runs[0]
        assert parsed.format == "sglang-bench" and len(parsed.runs) == 1 and not parsed.warnings
        assert (run["engine"], run["endpoint"], run["engine_version"]) == ("sglang", "sglang", "0.5.5.post3")
        assert run["target_model"] == "Qwen/Qwen2.5-3B-Instruct" and run["workload"] == "random"
        assert run["concurrency"] == 8 and math.isinf(run["request_rate"]) and run["num_requests"] == 50
        assert run["p50_ttft_ms"] == pytest.approx(33.528951462358236)
        assert run["p99_e2el_ms"] == pytest.approx(973.2989947218446)
        assert run["mean_itl_ms"] == pytest.approx(7.067802402786029)
        assert run["total_token_throughput"] == pytest.approx(2242.381460729479)
        # No speculation: the server says so (speculative_algorithm null), stored as plain, not as nothing said.
        assert "acceptance_length" not in run and run["spec_method"] == "none"
        extra = json.loads(run["extra"])
        assert extra["measured_concurrency"] == pytest.approx(7.784201163950447)  # in flight, not the load
        assert extra["server_info"]["tp_size"] == 1 and extra["p95_itl_ms"] == pytest.approx(21.319825435057282)

    def test_speculative_runs_map_the_acceptance_length_and_the_draft(self):
        doc = json.loads(sample("sglang_bench_serving_c8.jsonl"))
        doc["accept_length"] = 3.2
        doc["server_info"] |= {"speculative_algorithm": "EAGLE3", "speculative_num_steps": 3,
                               "speculative_eagle_topk": 1, "speculative_num_draft_tokens": 4,
                               "speculative_draft_model_path": "lmsys/sglang-EAGLE3-Qwen2.5-3B"}
        second = dict(doc, max_concurrency=16, accept_length=2.9)
        data = (json.dumps(doc) + "\n" + json.dumps(second) + "\n").encode()
        runs = importers.parse("eagle.jsonl", data).runs
        assert [r["acceptance_length"] for r in runs] == [3.2, 2.9] and [r["concurrency"] for r in runs] == [8, 16]
        assert (runs[0]["spec_method"], runs[0]["num_speculative_tokens"]) == ("eagle3", 3)  # vLLM's case
        assert runs[0]["draft_model"] == "lmsys/sglang-EAGLE3-Qwen2.5-3B"

    def test_a_bare_infinity_is_kept_as_json_in_extra(self):
        doc = sample("sglang_bench_serving_c8.jsonl").replace(b'"random_range_ratio": 0.0',
                                                             b'"random_range_ratio": Infinity')
        run = importers.parse("s.jsonl", doc).runs[0]
        assert json.loads(run["extra"])["random_range_ratio"] == "Infinity"

    @pytest.mark.parametrize("backend, info, engine", [
        ("sglang-oai", None, "sglang"), ("vllm", None, "vllm"), ("trt", None, "trt-llm"),
        ("truss", None, None), ("vllm", {"version": "0.5"}, "sglang"),
    ])
    def test_the_engine_is_the_server_not_the_client(self, backend, info, engine):
        from specviz.results.importers import sglang
        assert sglang.engine_of(backend, info) == engine


class TestParseVllmBench:
    def test_per_request_arrays_of_different_lengths_are_said(self):
        """ttfts of 3 requests beside itls of 2 and output_lens of 4: the rows follow ttfts, as before,
        and a warning now says which arrays differ (they were cut or padded without a word)."""
        record = {"completed": 3, "ttfts": [0.1, 0.2, 0.3], "itls": [[0.01], [0.02]], "output_lens": [1, 2, 3, 4],
                  "input_lens": [5, 6, 7]}
        parsed = importers.parse("detail.json", json.dumps(record).encode())
        assert len(parsed.requests) == 3 and parsed.requests.output_tokens.tolist() == [1, 2, 3]
        assert [str(w) for w in parsed.warnings] == [
            "the per-request arrays differ in length: ttfts has 3 requests and itls (2), output_lens (4); values "
            "past the requests were not read, and requests past an array's end have none of its values"]
        record["itls"].append([0.03])
        record["output_lens"].pop()
        assert importers.parse("even.json", json.dumps(record).encode()).warnings == []

    @pytest.mark.parametrize("throughput, said", [(9.8, False), (5.2, False), (20.0, False), (4.9, True), (40.5, True)])
    def test_a_request_rate_its_own_count_and_span_contradict_is_said(self, throughput, said):
        """100 requests over 10 s: a rate from half to twice 10 req/s is a tool's own way of counting;
        outside it one figure is off (llm-d's example says 2,262 req/s for 500 requests in 50 s). The
        figures are stored as given either way."""
        record = {"completed": 100, "failed": 0, "duration": 10.0, "request_throughput": throughput}
        parsed = importers.parse("run.json", json.dumps(record).encode())
        assert parsed.runs[0]["request_throughput"] == throughput
        notices = [str(w) for w in parsed.warnings if w.key == "warn.throughput_disagrees"]
        assert notices == ([f"A run's request rate disagrees with its own count: {throughput:,.2f} requests/s over "
                            f"10.00 s would be {throughput * 10:,.0f} requests, but it counts 100, which over that span "
                            "is 10.00 requests/s. One of the three figures is off (said for the file's first such run; "
                            "others may be too). They are stored as the file gives them: check the run's request rate "
                            "before you use it."] if said else [])

    @pytest.mark.parametrize("e2el, tpot, said", [(36.9, 36.9, True), (30.0, 5.0, True), (36.9, 0.0, False),
                                                  (36.9, None, False), (36.91, 36.9, False)])
    def test_a_request_latency_no_longer_than_its_first_token_is_said(self, e2el, tpot, said):
        """A request's latency is its TTFT plus the gaps after it: with tokens after the first (a TPOT
        above 0) the mean latency is longer than the mean TTFT. llm-d's example gives 36.9 ms for both."""
        builder = base.RunBuilder([])
        for column, value in (("mean_e2el_ms", e2el), ("mean_ttft_ms", 36.9), ("mean_tpot_ms", tpot)):
            builder.set(column, value)
        run = builder.build()
        assert (run["mean_e2el_ms"], run["mean_ttft_ms"]) == (e2el, 36.9)  # stored as given
        notices = [str(w) for w in builder.warnings if w.key == "warn.latency_disagrees"]
        assert notices == ([f"A run's mean request latency, {e2el:.2f} ms, is no longer than its mean time to the "
                            f"first token, 36.90 ms, though tokens followed the first ({tpot:.2f} ms apart on average): "
                            "a request's latency is its time to the first token plus the gaps after it, so one of the "
                            "figures is off (said for the file's first such run; others may be too). They are stored "
                            "as the file gives them: check the run's latencies before you use them."] if said else [])

    def test_a_run_of_no_span_or_a_huge_rate_is_read(self):
        """A duration of 0 had divided by zero and refused its file; a rate of 1e300 had written 301 digits
        (an attack pass). A draft length past a 32-bit column is said, not a DuckDB error for the file."""
        none = importers.parse("zero.json", json.dumps({"completed": 5, "duration": 0, "request_throughput": 10}).encode())
        assert none.runs[0]["duration_s"] == 0 and not [w for w in none.warnings if w.key == "warn.throughput_disagrees"]
        huge = importers.parse("huge.json", json.dumps({"completed": 5, "duration": 1.0, "request_throughput": 1e300}).encode())
        (said,) = [str(w) for w in huge.warnings if w.key == "warn.throughput_disagrees"]
        assert "1e+300 requests/s over 1.00 s would be 1e+300 requests" in said and len(said) < 400
        builder = base.RunBuilder([])
        builder.set("num_speculative_tokens", 2**40)
        assert "num_speculative_tokens" not in builder.row and builder.warnings[0].key == "warn.rejected.whole"
        builder.set("num_speculative_tokens", 2**31 - 1)
        assert builder.row["num_speculative_tokens"] == 2**31 - 1

    def test_nerdalert_jsonl(self):
        parsed = importers.parse("r.jsonl", sample("vllm_bench_nerdalert.jsonl"))
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
        parsed = importers.parse("sd.json", (FIXTURES / "vllm_bench_spec_decode.json").read_bytes())
        run = parsed.runs[0]
        assert run["acceptance_rate"] == pytest.approx(0.615)  # a percentage in the file
        assert run["acceptance_length"] == 3.46
        assert run["per_position_acceptance"] == [0.82, 0.64, 0.55, 0.45]
        assert run["num_speculative_tokens"] == 4
        assert run["p90_itl_ms"] == 21.0 and run["mean_e2el_ms"] == 1620.0
        assert run["failed_requests"] == 2 and run["concurrency"] == 16
        assert json.loads(run["extra"])["spec_decode_num_drafts"] == 14650

    def test_detailed_arrays_become_requests(self):
        parsed = importers.parse("sd.json", (FIXTURES / "vllm_bench_spec_decode.json").read_bytes())
        requests = parsed.requests
        assert len(requests) == 3 and set(requests.run_index) == {0}
        assert requests.ttft_ms[0] == pytest.approx(51.0) and requests.itl_ms[0] == pytest.approx(17.5)
        assert requests.itl_ms[1] == pytest.approx(16.0) and requests.output_tokens[1] == 256
        assert math.isnan(requests.ttft_ms[2]) and math.isnan(requests.itl_ms[2]) and parsed.warnings

    def test_wrong_types_are_kept_in_extra_with_a_warning(self):
        data = json.dumps({"request_throughput": "fast", "mean_ttft_ms": -4, "completed": 2.5,
                           "spec_decode_acceptance_rate": 250, "output_throughput": [1]}).encode()
        parsed = importers.parse("odd.json", data)
        run = parsed.runs[0]
        assert not {"request_throughput", "mean_ttft_ms", "num_requests", "acceptance_rate",
                    "output_throughput"} & run.keys()
        assert json.loads(run["extra"])["request_throughput"] == "fast"
        assert len(parsed.warnings) == 6 and parsed.warnings[-1].key == "warn.runs_without_figures"

    def test_a_jsonl_record_of_another_shape_is_refused(self):
        data = b'{"request_throughput": 1}\n{"something": "else"}\n'
        with pytest.raises(importers.IngestError) as info:
            importers.parse("mixed.jsonl", data)
        assert info.value.key == "ingest.record_shape" and info.value.params["record"] == 2


class TestVllmSweep:
    FOLDER = "SERVE--max_num_seqs=4-BENCH--max_concurrency=2-num_prompts=8"

    def test_a_folder_gives_its_summary_first(self):
        files = importers.result_files(SAMPLES / "vllm_0.25_sweep")
        # it holds run 0 and run 1; run=0.json, which repeats one, is then skipped by the store, naming it
        assert [f.name for f in files] == ["summary.json", "run=0.json"]

    def test_a_sweep_cut_short_is_read_from_its_run_files(self, tmp_path):
        folder = tmp_path / "sweep" / self.FOLDER
        folder.mkdir(parents=True)
        for name in ("run=0.json", "run=1.json", "notes.txt"):
            (folder / name).write_text("{}")
        assert [f.name for f in importers.result_files(tmp_path)] == ["run=0.json", "run=1.json"]

    def test_the_swept_settings_are_kept(self):
        name = f"sweep/{self.FOLDER}/summary.json"
        parsed = importers.parse(name, (SAMPLES / "vllm_0.25_sweep" / self.FOLDER / "summary.json").read_bytes())
        assert parsed.format == "vllm-bench" and len(parsed.runs) == 2
        first, second = parsed.runs
        assert first["concurrency"] == 2 and math.isinf(first["request_rate"]) and first["num_requests"] == 8
        assert first["duration_s"] == pytest.approx(1.3653671270003542)
        assert second["duration_s"] == pytest.approx(0.6420253609976498)
        assert (first["endpoint"], "engine" in first) == ("openai", False)  # an endpoint type, no engine named
        extra = json.loads(first["extra"])
        assert extra["max_num_seqs"] == 4 and extra["run_number"] == 0
        assert extra["sweep"] == {"serve": {"max_num_seqs": 4}, "bench": {"max_concurrency": 2, "num_prompts": 8}}

    @pytest.mark.parametrize("folder, settings", [
        ("SERVE--max_num_seqs=4-max_num_batched_tokens=1024", {"serve": {"max_num_seqs": 4,
                                                                        "max_num_batched_tokens": 1024}}),
        ("BENCH--request_rate=inf", {"bench": {"request_rate": math.inf}}),
        ("SERVE--kv_cache_dtype=fp8-e4m3-BENCH--max_concurrency=8",
         {"serve": {"kv_cache_dtype": "fp8-e4m3"}, "bench": {"max_concurrency": 8}}),
        ("results", {}), ("", {}),
    ])
    def test_folder_names(self, folder, settings):
        from specviz.results.importers import vllm
        assert vllm.sweep_settings(f"{folder}/run=0.json" if folder else "run=0.json") == settings

    def test_the_spec_decode_keys_of_0_25(self):
        run = importers.parse("sd.json", sample("vllm_0.25_bench_serve_specdecode.json")).runs[0]
        assert run["acceptance_rate"] == pytest.approx(0.7203703703703704)  # 72.04 % as a fraction
        assert run["acceptance_length"] == pytest.approx(3.161111111111111)
        assert run["num_speculative_tokens"] == 3 and len(run["per_position_acceptance"]) == 3
        assert (run["engine"], run["endpoint"]) == ("vllm", "vllm")
        assert json.loads(run["extra"])["spec_decode_num_drafts"] == 1260


class TestParseGuidellm:
    def test_matches_the_console_output(self):
        run = importers.parse("g.json", sample("guidellm_benchmarks.json")).runs[0]
        # guidellm_benchmarks_stripped_console_output.txt: TTFT mean 16.8, median 16.4, p99 21.3;
        # ITL mean 4.9; request latency 0.64 s; 198.1 output tok/s; 1.55 req/s; concurrency 1.00
        assert round(run["mean_ttft_ms"], 1) == 16.8 and round(run["p50_ttft_ms"], 1) == 16.4
        # its ITL (4.9) is (last − first token) / (tokens − 1), stored as TPOT
        assert round(run["p99_ttft_ms"], 1) == 21.3 and round(run["mean_tpot_ms"], 1) == 4.9
        assert round(run["mean_e2el_ms"] / 1000, 2) == 0.64
        assert round(run["output_throughput"], 1) == 198.1 and round(run["request_throughput"], 2) == 1.55
        assert run["concurrency"] == 1 and run["label"] == "synchronous"
        assert run["num_requests"] == 46 and run["failed_requests"] == 0

    def test_newer_schema_is_refused_clearly(self):
        doc = {"benchmarks": [{"metrics": {"request_latency": {"mean": 1.0}}}]}
        with pytest.raises(importers.IngestError) as info:
            importers.parse("new.json", json.dumps(doc).encode())
        assert info.value.key == "ingest.guidellm_schema"


class TestParseGenaiPerf:
    def test_csv_with_thousands_separators(self):
        run = importers.parse("p.csv", sample("profile_export_genai_perf.csv")).runs[0]
        assert run["mean_ttft_ms"] == 1146.31 and run["p99_ttft_ms"] == 3457.97
        # genai-perf's Inter Token Latency is each request's (latency − TTFT) / (tokens − 1), vLLM's TPOT:
        # (6,406.20 − 1,146.31) / (174.45 − 1) = 30.3 from the means beside it
        assert run["p50_e2el_ms"] == 5690.23 and run["mean_tpot_ms"] == 30.35 and "mean_itl_ms" not in run
        assert (6406.20 - 1146.31) / (174.45 - 1) == pytest.approx(30.35, abs=0.1)
        assert run["output_throughput"] == 261.25 and run["request_throughput"] == 1.5
        assert run["num_requests"] == 40

    def test_newer_csv_with_more_percentile_columns(self):
        data = (b"Metric,avg,min,max,p99,p95,p90,p75,p50,p25,p10,p5,p1\n"
                b"Time To First Token (ms),\"1,000.00\",1.0,2.0,3.0,4.0,5.0,6.0,7.0,8.0,9.0,10.0,11.0\n"
                b"\nMetric,Value\nRequest Throughput (per sec),\"1,234.5\"\n")
        run = importers.parse("new.csv", data).runs[0]
        assert run["mean_ttft_ms"] == 1000.0 and run["p50_ttft_ms"] == 7.0
        assert run["request_throughput"] == 1234.5

    def test_json_export(self):
        run = importers.parse("p.json", (FIXTURES / "genai_perf_profile_export.json").read_bytes()).runs[0]
        assert run["p99_ttft_ms"] == 320.7 and run["p50_tpot_ms"] == 16.1 and run["mean_e2el_ms"] == 4410.5
        assert run["output_throughput"] == 576.0 and run["request_throughput"] == 2.25
        assert run["concurrency"] == 8 and run["target_model"] == "Qwen/Qwen3-32B"


class TestParseLlmperf:
    def test_seconds_become_milliseconds(self):
        run = importers.parse("s.json", sample("llmperf_Yi-1-5-34B_550_150_summary.json")).runs[0]
        assert run["mean_ttft_ms"] == pytest.approx(6056.374991535766)
        assert run["p99_e2el_ms"] == pytest.approx(18536.139904240063)
        assert run["concurrency"] == 16 and run["num_requests"] == 112
        assert run["target_model"] == "01-ai/Yi-1.5-34B-Chat"

    def test_its_inter_token_latency_is_no_gap_between_tokens(self):
        """llmperf's 111.3 ms is each request's end-to-end time over its tokens, the first token's wait
        in it (17,632.8 ms / 158.79 tokens ≈ 111.0): the mean time per token after the first is
        (17,632.8 − 6,056.4) / 157.79 ms, a TPOT (the gaps between chunks, vLLM's ITL, are not in it)."""
        parsed = importers.parse("s.json", sample("llmperf_Yi-1-5-34B_550_150_summary.json"))
        run = parsed.runs[0]
        assert run["mean_tpot_ms"] == pytest.approx((17.63281706541962 - 6.056374991535766) / (158.78571428571428 - 1) * 1e3)
        assert run["mean_tpot_ms"] == pytest.approx(73.37, abs=0.01)
        assert not [key for key in run if "_itl_ms" in key] and "p50_tpot_ms" not in run
        assert json.loads(run["extra"])["results_inter_token_latency_s_quantiles_p50"] == pytest.approx(0.11129316081666768)
        [said] = [w for w in parsed.warnings if w.key == "warn.llmperf_itl"]
        assert str(said).startswith("llmperf's inter_token_latency is each request's end-to-end time over its output tokens")
        assert "is 73.4 ms" in str(said)

    @pytest.mark.parametrize("changed", [{"results_end_to_end_latency_s_mean": -1.0, "results_ttft_s_mean": -2.0},
                                         {"results_number_output_tokens_mean": 1.0000001},
                                         {"results_number_output_tokens_mean": "abc"},
                                         {"results_end_to_end_latency_s_mean": 1.0}])
    def test_no_mean_gap_from_means_it_refused_or_that_leave_no_gap(self, changed):
        """Refused means (below 0) had still given 6.3 ms, and 1.0000001 tokens a request 3.7 years
        (an attack pass); an end-to-end time below the TTFT leaves no gap either."""
        doc = {**json.loads(sample("llmperf_Yi-1-5-34B_550_150_summary.json")), **changed}
        parsed = importers.parse("s.json", json.dumps(doc).encode())
        assert "mean_tpot_ms" not in parsed.runs[0]
        assert "is — ms" in str(next(w for w in parsed.warnings if w.key == "warn.llmperf_itl"))


class TestCsvSynonyms:
    @pytest.mark.parametrize("name, canonical, factor", [
        ("Concurrency", "concurrency", 1.0), ("p99 ITL (ms)", "p99_itl_ms", 1.0),
        ("median_ttft_s", "p50_ttft_ms", 1e3), ("acceptance rate %", "acceptance_rate", 1.0),
        ("acceptance_rate_pct", "acceptance_rate", 0.01), ("TTFT (s)", "request:ttft_ms", 1e3),
        ("output tok/s", "output_throughput", 1.0),
    ])
    def test_names_and_units(self, name, canonical, factor):
        assert importers.CSV_SYNONYMS[importers.normalise_name(name)] == (canonical, factor)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-2**70, max_value=2**70) | st.floats(allow_nan=True)
    | st.sampled_from([10**400, -10**400, 1e308]) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8)
vllm_keys = st.sampled_from(["request_throughput", "mean_ttft_ms", "p99_itl_ms", "completed", "max_concurrency",
                             "spec_decode_acceptance_rate", "spec_decode_per_position_acceptance_rates",
                             "request_rate", "duration", "ttfts", "itls", "label", "model_id"])


class TestMappableColumns:
    def test_the_columns_the_store_fills_cannot_be_mapped(self):
        from specviz.results.schema import RUN_COLUMNS
        filled = {"run_id", "source_file", "source_format", "imported_at", "content_hash", "extra", "speculation_by_user"}
        assert set(user_csv.MAPPABLE_COLUMNS) == RUN_COLUMNS.keys() - filled
        assert list(user_csv.MAPPABLE_COLUMNS) == [c for c in RUN_COLUMNS if c not in filled]  # the schema's order
        assert "MAPPABLE_COLUMNS" in user_csv.__all__

    def test_a_mapping_to_one_of_them_is_refused(self):
        with pytest.raises(importers.IngestError) as info:
            user_csv.check_mapping("x.csv", {"tput": "output_throughput", "when": "imported_at"})
        assert (info.value.key, info.value.params) == ("ingest.csv_mapping_reserved",
                                                       {"file": "x.csv", "column": "when", "field": "imported_at"})
        user_csv.check_mapping("x.csv", {f"column {i}": c for i, c in enumerate(user_csv.MAPPABLE_COLUMNS)})


class TestFuzzedFiles:
    @settings(max_examples=150, deadline=None)
    @given(st.dictionaries(vllm_keys, json_values, min_size=1))
    def test_vllm_shaped_json_never_crashes(self, doc):
        doc.setdefault("request_throughput", 1.0)
        parses_or_refuses("fuzz.json", json.dumps(doc).encode())

    @settings(max_examples=100, deadline=None)
    @given(st.binary(max_size=200))
    def test_random_bytes_never_crash(self, data):
        try:
            if importers.detect_format("fuzz.bin", data) != "csv":
                importers.parse("fuzz.bin", data)
        except importers.IngestError:
            pass

    @settings(max_examples=60, deadline=None)
    @given(st.lists(st.dictionaries(st.sampled_from(["benchmarks", "metrics", "successful", "mean", "args"]),
                                    json_values, max_size=4), max_size=3))
    def test_guidellm_shaped_json_never_crashes(self, benchmarks):
        try:
            importers.parse("g.json", json.dumps({"benchmarks": benchmarks}).encode())
        except importers.IngestError:
            pass

    @settings(max_examples=150, deadline=None)
    @given(st.dictionaries(st.sampled_from(["tag", "backend", "dataset_name", "request_rate", "max_concurrency",
                                            "concurrency", "completed", "duration", "accept_length",
                                            "median_ttft_ms", "p99_e2e_latency_ms", "total_throughput"]),
                           json_values),
           st.dictionaries(st.sampled_from(["model_path", "version", "speculative_algorithm", "tp_size",
                                            "speculative_num_steps", "speculative_draft_model_path"]),
                           json_values) | json_values)
    def test_sglang_shaped_json_never_crashes(self, doc, server_info):
        doc |= {"backend": doc.get("backend", "sglang"), "completed": doc.get("completed", 1),
                "server_info": server_info}
        try:
            parsed = importers.parse("s.jsonl", json.dumps(doc).encode())
        except importers.IngestError:
            return
        assert parsed.format == "sglang-bench"
        run = parsed.runs[0]
        json.loads(run["extra"], parse_constant=pytest.fail)
        assert run.get("acceptance_length") is None or math.isfinite(run["acceptance_length"])

    @settings(max_examples=60, deadline=None)
    @given(st.lists(st.dictionaries(vllm_keys, json_values, min_size=1), min_size=1, max_size=4),
           st.text(max_size=40))
    def test_sweep_summaries_and_folder_names_never_crash(self, runs, folder):
        for run in runs:
            run.setdefault("completed", 1)
        try:
            parsed = importers.parse(f"{folder}/summary.json", json.dumps(runs).encode())
        except importers.IngestError:
            return
        assert len(parsed.runs) == len(runs)


class TestHostileValues:
    """Values no tool writes: each is refused in plain words or kept in extra with a warning."""

    @pytest.mark.parametrize("value", [None, "fast", 1e999])
    def test_a_run_with_no_figure_is_said_to_have_none(self, value):
        """An attack pass: a vLLM result whose every figure is null, text or past a float's range was
        stored as a run with the words "1 run imported" alone (19 "kept in extra only" at best)."""
        run = json.loads(sample("vllm_0.25_bench_serve_specdecode.json"))
        run = {k: value if isinstance(v, (int, float, list)) and not isinstance(v, bool) else v for k, v in run.items()}
        parsed = importers.parse("empty.json", json.dumps(run).encode())
        (said,) = [w for w in parsed.warnings if w.key == "warn.runs_without_figures"]
        assert said.params == {"runs": 1, "of": 1}
        assert message(said).startswith("1 of the file's 1 run holds no figure")
        assert all(w.key != "warn.runs_without_figures"
                   for w in importers.parse("ok.json", sample("vllm_0.25_bench_serve_specdecode.json")).warnings)

    def test_what_is_stored_is_bounded_and_each_cut_is_said(self):
        """A model name of 50 MB and an extra value of 100 MB were imported whole: text fields are cut at
        SPECVIZ_STORED_TEXT_CHARS, texts in extra at SPECVIZ_STORED_VALUE_CHARS, and a run's extra past
        SPECVIZ_STORED_EXTRA_BYTES loses its largest values; one warning for each, naming the field."""
        run = json.loads((FIXTURES / "vllm_bench_spec_decode.json").read_text())
        run |= {"model_id": "m" * 1_000_000, "blob": "y" * 1_000_000, **{f"k{i}": [i] * 300 for i in range(100)}}
        parsed = importers.parse("big.json", json.dumps(run).encode())
        [stored] = parsed.runs
        extra = json.loads(stored["extra"])
        assert stored["target_model"] == "m" * 500 and len(stored["extra"].encode()) <= 65_536
        assert extra["blob"].startswith("(not stored: 4,1") and extra["k0"] == [0] * 300  # the largest went first
        said = [str(w) for w in parsed.warnings]
        assert "model_id: a text longer than 500 characters, cut there (SPECVIZ_STORED_TEXT_CHARS)." in said
        assert "blob: a text longer than 4,096 characters, kept cut there (SPECVIZ_STORED_VALUE_CHARS)." in said
        [dropped] = [w for w in said if "not stored" in w]
        assert dropped.startswith("blob, k99, k98, k97, k96 (+") and "values not stored, a run keeping 65,536" in dropped

    def test_nesting_past_what_python_reads_is_refused(self):
        with pytest.raises(importers.IngestError, match="nested too deeply") as info:
            importers.parse("deep.json", b'{"completed": 1, "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")
        assert str(info.value).startswith("deep.json:")

    def test_the_nested_key_search_is_iterative(self):
        config: dict = {"concurrency": 8}
        for _ in range(100_000):  # far past the recursion limit
            config = {"level": config, "model": None}
        assert base.find_key({"other": {}, "config": config}, "concurrency") == 8
        assert base.find_key(config, "missing") is None

    @pytest.mark.parametrize("digits", [310, 4_000])
    def test_integers_too_large_for_a_float_are_kept_in_extra(self, digits):
        data = b'{"completed": 1, "mean_ttft_ms": ' + b"9" * digits + b"}"
        parsed = importers.parse("big.json", data)
        assert "mean_ttft_ms" not in parsed.runs[0] and len(str(parsed.warnings[0])) < 160
        assert json.loads(parsed.runs[0]["extra"])["mean_ttft_ms"] == int("9" * digits)

    def test_an_integer_past_pythons_digit_limit_is_refused(self):
        with pytest.raises(importers.IngestError, match="more than 4,300 digits"):
            importers.parse("big.json", b'{"completed": ' + b"9" * 5_000 + b"}")

    def test_numbers_that_overflow_once_scaled_are_refused(self):
        doc = {"name": "x", "num_concurrent_requests": 1, "results_ttft_s_mean": 1e308,
               "results_num_completed_requests_per_min": 10**400}
        run = importers.parse("s.json", json.dumps(doc).encode()).runs[0]
        assert "mean_ttft_ms" not in run and "request_throughput" not in run

    def test_lists_and_objects_are_not_text(self):
        data = json.dumps({"completed": 1, "label": ["a"] * 10_000, "model_id": {"a": {"b": 1}}}).encode()
        parsed = importers.parse("t.json", data)
        assert not {"label", "target_model"} & parsed.runs[0].keys()
        rejected = [w for w in parsed.warnings if w.key != "warn.runs_without_figures"]  # it has no figure either
        assert len(rejected) == 2 and all(len(str(w)) < 160 for w in rejected)  # a preview, not the value

    def test_non_finite_floats_in_extra_become_strings(self):
        data = (b'{"completed": 1, "request_rate": Infinity, "burstiness": NaN, '
                b'"nested": {"low": -Infinity, "list": [1.5, Infinity]}, "note": "NaN, Infinity \\"NaN\\""}')
        run = importers.parse("s.jsonl", data).runs[0]
        assert math.isinf(run["request_rate"])
        assert json.loads(run["extra"], parse_constant=pytest.fail) == {
            "burstiness": "NaN", "nested": {"low": "-Infinity", "list": [1.5, "Infinity"]},
            "note": 'NaN, Infinity "NaN"'}

    def test_half_characters_become_replacement_characters(self):
        data = (b'{"completed": 1, "label": "a\\ud800", "\\udc00": ["\\ud83d\\ude00", "\\ud83d"], '
                b'"x": {"y": [1, "\\ud800"]}}')
        run = importers.parse("s.json", data).runs[0]
        assert run["label"] == "a\ufffd"
        assert json.loads(run["extra"]) == {"\ufffd": ["\U0001f600", "\ufffd"], "x": {"y": [1, "\ufffd"]}}
        run["extra"].encode()  # all of it is Unicode now

    def test_markup_and_formulas_are_data(self):
        label, model = "![x](http://127.0.0.1:9/x.png)", '=HYPERLINK("http://127.0.0.1:9","y")'
        doc = {"completed": 1, "label": label, "model_id": model, "<img src=x onerror=alert(1)>": "**b**"}
        run = importers.parse("m.json", json.dumps(doc).encode()).runs[0]
        assert (run["label"], run["target_model"]) == (label, model)  # escaping is the page's job
        assert json.loads(run["extra"]) == {"<img src=x onerror=alert(1)>": "**b**"}

    def test_per_request_arrays_of_the_wrong_types(self):
        doc = {"completed": 1, "ttfts": [0.1, "0.2", None, True, 10**400, -1, 1e308, {"a": 1}],
               "itls": [[0.01, "x", 0.03], {}, [], [10**400, 0.002], [1e308, 1e308], [-1, 0.004], "x"],
               "input_lens": [1, 2], "output_lens": "many"}
        requests = importers.parse("r.json", json.dumps(doc).encode()).requests
        assert len(requests) == 8 and set(requests.run_index) == {0}
        assert requests.ttft_ms.tolist()[:2] == pytest.approx([100.0, 200.0])
        assert requests.ttft_ms[2:].isna().all()  # no value, a boolean, huge, negative, overflowing, an object
        assert requests.itl_ms.tolist()[0] == pytest.approx(20.0) and requests.itl_ms.tolist()[3] == pytest.approx(2.0)
        assert requests.itl_ms.tolist()[5] == pytest.approx(4.0)
        assert requests.itl_ms[[1, 2, 4, 6, 7]].isna().all()
        assert requests.input_tokens.tolist()[:2] == [1, 2] and requests.output_tokens.isna().all()

    def test_jsonl_with_a_record_of_another_shape_is_refused(self):
        with pytest.raises(importers.IngestError) as info:
            importers.parse("r.jsonl", b'{"completed": 1}\n[1, 2]\n')
        assert info.value.key == "ingest.record_shape"
        with pytest.raises(importers.IngestError) as info:
            importers.parse("r.jsonl", b'{"completed": 1}\n[1, 2]\n' + b"{" * 50_000)
        assert info.value.key == "ingest.json_malformed_at"
        with pytest.raises(importers.IngestError, match="the file is empty"):
            importers.parse("blank.json", b"\xef\xbb\xbf   ")

    def test_a_json_lines_file_cut_off_mid_write_says_where(self):
        """vLLM's bench cut after 9,000 bytes, mid-way through its 8th line: the refusal said only
        "malformed or truncated", with no line and no way to mend it; then that it "breaks at line 8,
        column 28 (a comma was expected here)", where the file ends (an analyst's pass): it is said
        to be cut short. A break before the end is said where it is."""
        cut = (SAMPLES / "vllm_bench_nerdalert.jsonl").read_bytes()[:9000]
        assert cut.count(b"\n") == 7
        with pytest.raises(importers.IngestError) as info:
            importers.parse("cut.jsonl", cut)
        assert info.value.key == "ingest.json_cut_short"
        assert {k: info.value.params[k] for k in ("line", "records")} == {"line": 8, "records": 7}
        said = message(info.value, "en")
        assert "ends mid-record at line 8, after 7 whole records" in said and "looks cut short" in said
        with pytest.raises(importers.IngestError) as info:
            importers.parse("mended.jsonl", cut + b"}}\n" + b'{"completed": 1}\n')
        assert info.value.key == "ingest.json_malformed_at" and info.value.params["line"] == 8

    @pytest.mark.parametrize("text, reason", [
        (b'{"a": 1 "b": 2}', "comma"), (b'{"a" 1}', "colon"), (b'{"a": }', "value"), (b'{1: 2}', "name"),
        (b'{"a": "b', "string"), (b'{"a": "\x01"}', "control"), (b'{"a": "\\q"}', "escape")])
    def test_where_json_breaks_is_said_in_the_reader_s_language(self, text, reason):
        """Python's own reason ("Expecting ':' delimiter") had reached the Vietnamese page in English."""
        with pytest.raises(importers.IngestError) as info:
            importers.parse("r.json", text)
        assert info.value.params["detail"] == Notice(f"ingest.json_reason.{reason}")
        said = message(info.value, "vi")
        assert i18n.t(f"ingest.json_reason.{reason}", "vi") in said and "Expecting" not in said

    @pytest.mark.parametrize("data, message", [
        ('{"completed": 1}'.encode("utf-16"), "UTF-16"), ('{"completed": 1}'.encode("utf-32"), "UTF-32"),
        ('{"completed": 1}'.encode("utf-16-le"), "binary"),
        ("model,concurrency\ncafé,1\n".encode("latin-1"), "not UTF-8"),
        (b'{"completed": 1, "x": "' + b"a" * 70_000 + b'\xe9"}', "not UTF-8"),  # past the first 64 KiB
    ])
    def test_other_encodings_are_refused(self, data, message):
        with pytest.raises(importers.IngestError, match=message):
            importers.parse("enc.json", data)

    def test_a_bom_and_a_character_across_the_64_kib_cut_are_fine(self):
        assert importers.parse("bom.json", b'\xef\xbb\xbf{"completed": 1}').runs[0]["num_requests"] == 1
        prefix = b"model,concurrency\n"
        data = prefix + b"a" * (65_531 - len(prefix)) + "€".encode() + b",1\n"  # € is bytes 65,531-65,533
        assert importers.detect_format("cut.csv", data) == "csv"
        assert user_csv.csv_header(source.Source("cut.csv", data)) == ["model", "concurrency"]

    @pytest.mark.parametrize("blanks", [b"", b"\xef\xbb\xbf"])
    def test_a_file_opening_with_more_blanks_than_the_head_is_recognised(self, blanks, tmp_path):
        """70 KB of whitespace before a vLLM result's object left a head of blanks: "not a format
        specviz reads" (the attack pass). The head now starts where the content does, in memory
        and on disk."""
        data = blanks + b" \n\t\r" * 17_500 + sample("vllm_0.25_bench_serve_specdecode.json")
        assert importers.detect_format("spaced.json", data) == importers.detect_format(
            "plain.json", sample("vllm_0.25_bench_serve_specdecode.json"))
        path = tmp_path / "spaced.json"
        path.write_bytes(data)
        with source.OpenedSource("spaced.json", os.open(path, os.O_RDONLY)) as opened:
            assert opened.head.startswith("{") and opened.head_is_whole
        with pytest.raises(importers.IngestError, match="empty"):
            importers.parse("blank.json", blanks + b" \n" * 700_000)

    def test_csv_header_reads_only_the_head(self):
        data = b"concurrency,ttft_ms\r" + b"1,2\r" * 1_000_000 + b"\xff"  # old Mac line ends; not UTF-8 at the end
        assert user_csv.csv_header(source.Source("big.csv", data)) == ["concurrency", "ttft_ms"]

    def test_a_genai_perf_table_cut_mid_row_is_refused(self):
        """An analyst's Chromium pass: the export cut at 400 bytes, mid-row at "35." of 35.23, imported
        as a whole run with a p99 ITL of 35.0 and no throughput, without a word."""
        whole = sample("profile_export_genai_perf.csv")
        with pytest.raises(importers.IngestError) as info:
            importers.parse("cut.csv", whole[:400])
        assert info.value.key == "ingest.csv_cut_short"
        assert (info.value.params["cells"], info.value.params["columns"]) == (5, 10)
        assert str(info.value).startswith("cut.csv: its last row (Inter Token Latency (ms),30.35,27.59…)")
        # A whole row without its line end is no cut; nor is a short row followed by others.
        assert importers.parse("no_end.csv", whole.rstrip(b"\n")).runs[0]["request_throughput"] == 1.5
        short_inside = whole.replace(b"Inter Token Latency (ms),30.35,27.59,", b"Inter Token Latency (ms),30.35,", 1)
        assert importers.parse("short_row.csv", short_inside).runs

    def test_a_genai_perf_table_without_a_number_is_refused_and_a_word_among_numbers_said(self):
        """An analyst's Chromium pass: 'Time To First Token (ms),abc' imported as a run with no figure,
        no warning; a word among numbers vanished."""
        with pytest.raises(importers.IngestError) as info:
            importers.parse("genai_bad.csv", b"Metric,avg\nTime To First Token (ms),abc\n")
        assert info.value.key == "ingest.genai_no_figures_refused"
        assert info.value.params["source"] == "time_to_first_token.avg" and info.value.params["value"] == "'abc'"
        parsed = importers.parse("g.csv", b"Metric,avg,p99\nTime To First Token (ms),12.5,fast\n")
        assert parsed.runs[0]["mean_ttft_ms"] == 12.5 and "p99_ttft_ms" not in parsed.runs[0]
        assert [w.key for w in parsed.warnings] == ["warn.rejected.finite"]

    def test_a_malformed_genai_perf_csv_is_refused(self):
        with pytest.raises(importers.IngestError, match="genai-perf CSV is malformed"):
            importers.parse("g.csv", b"Metric,avg\nx," + b"a" * 200_000 + b"\n")


class TestOpenedSource:
    """A file on disk is read where it lies, through the descriptor opened once, a piece at a time:
    it reads as its bytes do, and a write to it while it is imported is refused."""

    @pytest.mark.parametrize("data", [
        b"concurrency,ttft_ms\r\n" + b"1,2\r\n" * 500_000,  # 3.5 MB: pieces hashed beside the reading
        ",".join(f"c{i}".ljust(180, "x") for i in range(10_000)).encode() + b"\r1\r",  # a header over two pieces
        b'{"completed": 1}',
    ], ids=["rows", "long header", "json"])
    def test_it_reads_as_its_bytes(self, tmp_path, data):
        path = tmp_path / "f"
        path.write_bytes(data)
        with source.OpenedSource("f", os.open(path, os.O_RDONLY)) as opened:
            whole = source.Source("f", data)
            assert opened.size == len(data) and b"".join(opened.pieces()) == data and opened.data == data
            assert opened.content_hash == hashlib.sha256(data).hexdigest() == whole.content_hash
            assert opened.line_ends == whole.line_ends and opened.head == whole.head
            if not opened.is_json:
                assert user_csv.csv_header(opened) == user_csv.csv_header(whole)
            path.unlink()  # read through the descriptor, never the path again
            assert Path(opened.reader_path).read_bytes() == data
            assert opened.read_at(len(data) - 3, 10) == whole.read_at(len(data) - 3, 10) == data[-3:]
            opened.check_unchanged()

    def test_a_file_written_while_it_was_read_is_refused(self, tmp_path):
        path = tmp_path / "f.csv"
        path.write_bytes(b"concurrency,ttft_ms\n1,2\n")
        with source.OpenedSource("f.csv", os.open(path, os.O_RDONLY)) as opened:
            with open(path, "ab") as file:
                file.write(b"3,4\n")
            with pytest.raises(importers.IngestError, match="it changed while it was read") as caught:
                opened.check_unchanged()
            assert caught.value.key == "ingest.changed"
            with pytest.raises(importers.IngestError, match="it changed while it was read"):
                opened.data

    def test_closed_before_its_scan_ends_it_closes_the_file(self, tmp_path):
        path = tmp_path / "big.csv"
        path.write_bytes(b"a,b\n" + b"1,2\n" * 4_000_000)  # 16 MB: many pieces
        descriptor = os.open(path, os.O_RDONLY)
        opened = source.OpenedSource("big.csv", descriptor)
        opened.close()  # the scan stops at its next piece, then the file is closed
        opened.close()  # twice: nothing left to close
        with pytest.raises(OSError):
            os.fstat(descriptor)

    def test_lines_cut_anywhere_into_pieces_are_whole(self):
        data = "a,b\r\nc\rd\n\r\n\ré,f".encode()
        lines = ["a,b\r\n", "c\r", "d\n", "\r\n", "\r", "é,f"]
        for cut in range(len(data) + 1):
            assert list(source.byte_lines([data[:cut], data[cut:]])) == lines, cut
        assert list(source.byte_lines(data[i:i + 1] for i in range(len(data)))) == lines
        assert [source.header_line_bytes([data[:cut], data[cut:]]) for cut in range(len(data))] == [3] * len(data)


# One unit of each shape, repeated: what costs json.loads the most memory per byte of text.
MEMORY_SHAPES = ["[],", "{},", "[0],", '{"":0},', '{"":[]},', '{"":{}},', "257,", "0e0,", '"ab",', '"ĉ",',
                 '"😀",', '"\\u0109",', '"\\ud83d\\ude00",', "true,", "\n  1.5,"]


class TestMemoryBound:
    @pytest.mark.parametrize("text", [
        *('{"completed": 1, "x": [' + unit * 50_000 + "0]}" for unit in MEMORY_SHAPES),
        '{"completed": 1, "x": {' + ",".join(f'"{i:x}": 0' for i in range(50_000)) + "}}",  # distinct keys
        '{"completed": 1, "x": "' + "a" * 500_000 + '\\ud83d\\ude00"}',  # one escape widens it all
        '{"completed": 1, "x": "' + "a" * 500_000 + '\\n"}',
    ], ids=[*MEMORY_SHAPES, "keys", "widening escape", "escape"])
    def test_the_estimate_covers_what_json_loads_takes(self, text):
        data = text.encode()
        decoded = data.decode()
        tracemalloc.start()
        try:
            json.loads(decoded)
            taken = tracemalloc.get_traced_memory()[1] + sys.getsizeof(decoded)
        finally:
            tracemalloc.stop()
        assert taken <= source._json_memory(data, source.byte_histogram(data))

    def test_dense_json_is_refused_before_it_is_decoded(self, monkeypatch):
        monkeypatch.setenv("SPECVIZ_IMPORT_MEMORY_BYTES", "50000000")
        data = b'{"completed": 1, "x": [' + b"[]," * 500_000 + b"[]]}"  # 1.5 MB that would take ~32 MB
        with pytest.raises(importers.IngestError, match=r"about 55 MB of memory, over the 50 MB limit "
                                                     r"\(SPECVIZ_IMPORT_MEMORY_BYTES\)"):
            importers.parse("dense.json", data)

    def test_many_small_runs_are_charged_per_run(self, monkeypatch):
        monkeypatch.setenv("SPECVIZ_IMPORT_MEMORY_BYTES", "100000000")
        data = b'{"completed": 1}\n' * 50_000  # 0.8 MB, 50,000 runs
        with pytest.raises(importers.IngestError, match="SPECVIZ_IMPORT_MEMORY_BYTES"):
            importers.parse("runs.jsonl", data)

    def test_a_csv_is_charged_per_row_and_cell(self, monkeypatch):
        """DuckDB's buffers (360 MB from 310,000 rows), then 24 B a row and 5 B a cell past its first."""
        monkeypatch.setenv("SPECVIZ_IMPORT_MEMORY_BYTES", "410000000")
        assert importers.parse("rows.csv", b"ttft_ms\n" + b"1\n" * 2_000_000).format == "csv"
        with pytest.raises(importers.IngestError, match="SPECVIZ_IMPORT_MEMORY_BYTES"):
            importers.parse("rows.csv", b"ttft_ms\n" + b"1\n" * 2_100_000)
        assert importers.parse("cells.csv", b"ttft_ms,itl_ms\n" + b"1,1\n" * 1_700_000).format == "csv"
        with pytest.raises(importers.IngestError, match="SPECVIZ_IMPORT_MEMORY_BYTES"):
            importers.parse("cells.csv", b"ttft_ms,itl_ms\n" + b"1,1\n" * 1_750_000)

    def test_a_small_csv_is_charged_small_buffers(self, monkeypatch):
        """Below 310,000 rows DuckDB's buffers are charged 50 MB and 1,000 B a row (measured: 10
        rows took 7-17 MB, 100,000 rows 40-114 MB): a low limit still takes a small file."""
        monkeypatch.setenv("SPECVIZ_IMPORT_MEMORY_BYTES", "64000000")
        assert importers.parse("small.csv", b"ttft_ms,itl_ms\n" + b"1,1\n" * 10_000).format == "csv"
        with pytest.raises(importers.IngestError, match="SPECVIZ_IMPORT_MEMORY_BYTES"):
            importers.parse("larger.csv", b"ttft_ms,itl_ms\n" + b"1,1\n" * 20_000)

    def test_a_csv_with_too_many_columns_is_refused(self, monkeypatch):
        monkeypatch.setenv("SPECVIZ_IMPORT_MAX_COLUMNS", "10")
        header = ",".join(f"c{i}" for i in range(11)).encode()
        with pytest.raises(importers.IngestError, match="more than 10 columns"):
            importers.parse("wide.csv", header + b"\n" + b"1," * 10 + b"1\n")

    def test_the_whole_header_line_is_counted_for_the_column_limit(self):
        """10,000 columns of 180-character names: 1.8 MB of header, of which 64 KiB held 363."""
        header = ",".join(f"c{i}".ljust(180, "x") for i in range(10_000)).encode()
        assert len(user_csv.csv_header(source.Source("wide.csv", header + b"\n1\n"))) == 10_000
        with pytest.raises(importers.IngestError, match="more than 1,000 columns"):
            importers.parse("wide.csv", header + b"\n" + b"1," * 9_999 + b"1\n")

    def test_a_header_line_past_the_first_64_kib_is_read_whole_and_no_further(self):
        names = [f"name_{i}".ljust(100, "y") for i in range(900)]  # 91 KB
        data = ",".join(names).encode() + b"\r" + b"1\r" * 1_000 + b"\xff"  # not UTF-8 after the header
        assert user_csv.csv_header(source.Source("wide.csv", data)) == names
        with pytest.raises(importers.IngestError, match="CSV header is malformed"):
            user_csv.csv_header(source.Source("q.csv", b'"' + b"a" * 200_000 + b"\n1\n"))  # a quote never closed

    def test_a_csv_is_charged_for_the_extra_its_unknown_columns_repeat_in_every_row(self, monkeypatch):
        """to_json(struct_pack(...)) of unknown columns repeats their names in every row: 3,000
        rows of 999 columns of 60 characters, a 3 MB file, took 1.1-1.4 GB to store."""
        monkeypatch.setenv("SPECVIZ_IMPORT_MEMORY_BYTES", "1000000000")
        header = "ttft_ms," + ",".join(f"c{i}_".ljust(60, "x") for i in range(999))
        with pytest.raises(importers.IngestError, match=r"about [\d,]+ MB of memory, over the 1,000 MB limit"):
            importers.parse("wide.csv", (header + "\n" + ("1" + "," * 999 + "\n") * 3_000).encode())
        known = "ttft_ms,itl_ms,concurrency\n" + "1,2,3\n" * 3_000  # no extra: far below
        assert importers.parse("narrow.csv", known.encode()).format == "csv"

    def test_a_genai_perf_header_repeated_in_every_row_is_charged(self, monkeypatch):
        """Each metric row is kept in extra under its block's header names: 300 rows under 1,000
        names of 1,000 characters (1.3 MB) took 1.7 GB."""
        monkeypatch.setenv("SPECVIZ_IMPORT_MEMORY_BYTES", "100000000")
        header = "Metric," + ",".join(f"h{i}".ljust(1_000, "x") for i in range(100))
        data = (header + "\n" + "".join(f"m{i}" + "," * 100 + "\n" for i in range(200))).encode()
        with pytest.raises(importers.IngestError, match=r"over the 100 MB limit \(SPECVIZ_IMPORT_MEMORY_BYTES\)"):
            importers.parse("g.csv", data)
        with pytest.raises(importers.IngestError) as info:  # read as genai-perf, within the limit: no figure in it
            importers.parse("g.csv", (header + "\nm0" + "," * 100 + "\n").encode())
        assert info.value.key == "ingest.genai_no_figures"

    @pytest.mark.parametrize("name", ["vllm_bench_nerdalert.jsonl", "guidellm_benchmarks.json",
                                      "guidellm_0.5_benchmarks.json", "sglang_bench_serving_c8.jsonl",
                                      "llmperf_Yi-1-5-34B_550_150_summary.json", "profile_export_genai_perf.csv",
                                      "aiperf_profile_export_aiperf.json", "vllm_0.25_bench_serve_specdecode.json"])
    def test_real_files_are_far_below_the_limit(self, monkeypatch, name):
        monkeypatch.setenv("SPECVIZ_IMPORT_MEMORY_BYTES", "20000000")  # 20 MB: each sample is under 100 KB
        try:
            importers.parse(name, sample(name))
        except importers.IngestError as exc:
            assert "SPECVIZ_IMPORT_MEMORY_BYTES" not in str(exc)


class TestModelConfig:
    @pytest.mark.parametrize("name", ["DeepSeek-V3.config.json", "gpt-oss-120b.config.json"])
    def test_a_model_config_is_said_to_be_one(self, name):
        """An analyst's pass: a folder's model configs had each been "not a benchmark result file"
        without a word of where they go."""
        with pytest.raises(importers.IngestError) as info:
            importers.parse(name, (SAMPLES / "configs" / name).read_bytes())
        assert info.value.key == "ingest.model_config"
        assert "`specviz calc --target-config FILE`" in str(info.value)


class TestSelectFiles:
    def test_a_folder_uploaded_in_a_browser_is_chosen_as_one_on_disk(self, tmp_path):
        """The relative paths a browser sends for a folder give the same files, order and passed-over
        files as the walk of the same folder on disk."""
        from pathlib import PurePosixPath
        root = SAMPLES / "2026" / "inference_perf_0.5_two_stage"
        on_disk = importers.folder_files(root)
        relative = [PurePosixPath(root.name) / p.relative_to(root) for p in sorted(root.rglob("*")) if p.is_file()]
        uploaded = importers.select_files(relative)
        assert [PurePosixPath(root.name) / p.relative_to(root) for p in on_disk.files] == uploaded.files
        assert {PurePosixPath(root.name) / p.relative_to(root): why.reason for p, why in on_disk.left_out.items()} == {
            p: why.reason for p, why in uploaded.left_out.items()}
        assert uploaded.files[:2] == [PurePosixPath("inference_perf_0.5_two_stage/per_request_lifecycle_metrics.json"),
                                      PurePosixPath("inference_perf_0.5_two_stage/stage_0_lifecycle_metrics.json")]

    def test_text_files_past_the_listed_are_counted(self):
        """Thirty .txt files: ten named, and how many more (an attack pass: the rest had gone unsaid)."""
        from pathlib import PurePosixPath as P
        chosen = importers.select_files([P(f"f/m{i:02d}.txt") for i in range(30)])
        unread, text = importers.unread_notices(chosen.left_out, 10)
        assert unread.key == "exp.left_out.not_results_more" and unread.params["more"] == 20
        assert text.key == "exp.left_out.text_files_more" and text.params["more"] == 20
        assert text.params["files"].split(", ") == [f"f/m{i:02d}.txt" for i in range(10)]
        assert str(text).startswith("f/m00.txt") and "and 20 more: a text file may be" in str(text)

    def test_folders_go_in_order_and_a_sweeps_summary_first(self):
        from pathlib import PurePosixPath as P
        chosen = importers.select_files([P("s/b/x.json"), P("s/SERVE--a-BENCH--b/run=0.json"),
                                         P("s/SERVE--a-BENCH--b/summary.json"), P("s/summary.csv"), P("s/a.json"),
                                         P("s/SERVE--a-BENCH--b/warmup.json"), P("s/notes.txt"), P("s/README.md"),
                                         P("s/.DS_Store"), P("s/.git/objects/ab/cdef"), P("../s/c.md")])
        assert chosen.files == [P("s/a.json"), P("s/SERVE--a-BENCH--b/summary.json"), P("s/SERVE--a-BENCH--b/run=0.json"),
                                P("s/b/x.json")]
        # notes.txt is said too (an analyst's pass: a folder's README and scrapes saved as text had gone
        # unsaid, neither imported, skipped nor refused)
        assert {p: w.reason for p, w in chosen.left_out.items()} == {
            P("s/summary.csv"): "sweep_table", P("s/SERVE--a-BENCH--b/warmup.json"): "sweep_warmup",
            P("s/notes.txt"): "text_file", P("s/README.md"): "not_a_result", P("../s/c.md"): "not_a_result"}
