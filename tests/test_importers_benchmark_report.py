"""Tests for specviz.results.importers.benchmark_report (llm-d's benchmark report v0.1, v0.2, v0.2.1)
and specviz.results.benchmark_report (runs written back as v0.2.1), with the ``export`` command.

The figures are checked by hand against the files: each expected value is the file's, times 1,000
where the file gives seconds."""

import json
import math
import shutil
import time
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings, strategies as st

from conftest import parses_or_refuses
from specviz import cli, i18n
from test_app import explorer_app
from specviz.errors import Notice, SpecvizError
from specviz.results import benchmark_report, extra, importers
from specviz.results.importers import Source, benchmark_report as standard
from specviz.results.store import Store

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT.parent / "shared" / "samples" / "2026"
FIXTURES = ROOT / "tests" / "fixtures"
STAGES = SAMPLES / "inference_perf_0.5_two_stage"
STAGE_0 = STAGES / "inference-perf.partial.stage_0.yaml"
EXAMPLE_021 = SAMPLES / "llm_d_benchmark_report" / "br_v0_2_1_example.yaml"
EXAMPLE_02 = FIXTURES / "benchmark_report_v0_2_example.yaml"
EXAMPLE_01 = FIXTURES / "benchmark_report_v0_1_example.yaml"


def only(name: str, data: bytes, warned: tuple[str, ...] = ()) -> dict:
    """The one run of a benchmark report, parsed with the warnings ``warned`` (their keys) alone."""
    parsed = importers.parse(name, data)
    assert parsed.format == "benchmark-report" and len(parsed.runs) == 1
    assert [w.key for w in parsed.warnings] == list(warned)
    return parsed.runs[0]


# llm-d's examples say 2,262.45 requests/s over 50 s for 500 requests, and a mean request latency equal
# to the mean TTFT, 36.9 ms, with a TPOT of 36.9 ms: said, and stored as given.
DISAGREES = ("warn.throughput_disagrees", "warn.latency_disagrees")


def refused(name: str, data: bytes | str) -> importers.IngestError:
    with pytest.raises(importers.IngestError) as caught:
        importers.parse(name, data.encode() if isinstance(data, str) else data)
    assert caught.value.file == name
    return caught.value


def example_021() -> dict:
    return yaml.safe_load(EXAMPLE_021.read_text())


def as_yaml(doc: dict) -> bytes:
    return yaml.safe_dump(doc, sort_keys=False).encode()


class TestVersionsOnRealFiles:
    def test_inference_perf_stage_report_v0_2_1(self):
        run = only(f"{STAGES.name}/{STAGE_0.name}", STAGE_0.read_bytes())
        # time_to_first_token, units s: mean 0.12751322751322752, p50 0.1111111111111111,
        # p90 0.1593650793650794, p99 0.17022222222222227 → ms.
        assert run["mean_ttft_ms"] == pytest.approx(127.51322751322752)
        assert run["p50_ttft_ms"] == pytest.approx(111.11111111111111)
        assert run["p90_ttft_ms"] == pytest.approx(159.3650793650794)
        assert run["p99_ttft_ms"] == pytest.approx(170.22222222222227)
        # time_per_output_token and inter_token_latency, units s/token.
        assert run["mean_tpot_ms"] == pytest.approx(127.5132275132275)
        assert run["mean_itl_ms"] == pytest.approx(118.90959282263629)
        assert run["p99_itl_ms"] == pytest.approx(171.42857142857165)
        # request_latency, units s: mean 1.1666666666666667, p50 1.2000000000000002, p90 1.28, p99 1.298.
        assert (run["mean_e2el_ms"], run["p50_e2el_ms"], run["p90_e2el_ms"], run["p99_e2el_ms"]) == \
            pytest.approx((1166.6666666666667, 1200.0000000000002, 1280.0, 1298.0))
        # throughput: tokens/s and queries/s, as they are.
        assert run["output_throughput"] == pytest.approx(11.818181818181817)
        assert run["total_token_throughput"] == pytest.approx(152.72727272727272)
        assert run["request_throughput"] == pytest.approx(1.3636363636363635)
        # requests: total 4, failures 1 → 3 completed; run.time.duration PT2.200S → 2.2 s.
        assert (run["num_requests"], run["failed_requests"], run["duration_s"]) == (3, 1, 2.2)
        assert run["label"] == STAGES.name  # no description: the folder, as the stage's JSON file gets
        extra = json.loads(run["extra"])
        aggregate = "results.request_performance.aggregate"
        # What no column takes stays, in the file's units: NTPOT whole, the rest of each figure.
        assert extra[f"{aggregate}.latency"]["normalized_time_per_output_token"]["mean"] == 0.14444444444444446
        assert extra[f"{aggregate}.latency"]["time_to_first_token"] == {
            "units": "s", "stddev": 0.03843542989135243, "min": 0.09999999999999998, "p0p1": 0.1000222222222222,
            "p1": 0.1002222222222222, "p5": 0.1011111111111111, "p10": 0.1022222222222222,
            "p25": 0.10555555555555554, "p75": 0.1412698412698413, "p95": 0.16539682539682543,
            "p99p9": 0.17130793650793658, "max": 0.17142857142857149}
        assert extra[f"{aggregate}.requests"]["input_length"]["mean"] == 103.33333333333333
        assert extra[f"{aggregate}.throughput"]["input_token_rate"] == {"units": "tokens/s", "mean": 140.9090909090909}
        assert (extra["run.uid"], extra["run.time.start"], extra["version"]) == ("test-uid-0", "1970-01-01T00:00:00Z",
                                                                                 "0.2.1")

    def test_the_stage_report_agrees_with_the_stage_json_beside_it(self):
        report = only(f"{STAGES.name}/{STAGE_0.name}", STAGE_0.read_bytes())
        lifecycle = importers.parse(f"{STAGES.name}/stage_0_lifecycle_metrics.json",
                                    (STAGES / "stage_0_lifecycle_metrics.json").read_bytes()).runs[0]
        shared = [c for c in lifecycle if c.endswith("_ms") or c in ("num_requests", "failed_requests", "duration_s",
                                                                    "output_throughput", "label")]
        assert len(shared) > 15
        assert {c: report[c] for c in shared} == pytest.approx({c: lifecycle[c] for c in shared})

    def test_llm_d_example_v0_2_1(self):
        run = only("br_v0_2_1_example.yaml", EXAMPLE_021.read_bytes(), DISAGREES)
        # time_to_first_token, units s: mean 0.0368578234128654, p50 0.03622930939309299,
        # p90 0.04262634576298297, p99 0.05029489721637218.
        assert (run["mean_ttft_ms"], run["p50_ttft_ms"], run["p90_ttft_ms"], run["p99_ttft_ms"]) == \
            pytest.approx((36.8578234128654, 36.22930939309299, 42.62634576298297, 50.29489721637218))
        for metric in ("tpot", "itl", "e2el"):  # a mean only, 0.0368578234128654 s (per token for two)
            assert run[f"mean_{metric}_ms"] == pytest.approx(36.8578234128654)
            assert f"p50_{metric}_ms" not in run
        assert (run["output_throughput"], run["total_token_throughput"], run["request_throughput"]) == \
            (2262.448, 2262.448, 2262.448)
        assert (run["num_requests"], run["failed_requests"]) == (500, 0)
        assert run["duration_s"] == 49.97206788184121  # PT49.97206788184121S
        assert run["request_rate"] == 10.0 and "concurrency" not in run  # rate_qps 10.0, concurrency .inf
        assert (run["engine"], run["engine_version"], run["target_model"], run["gpu"]) == \
            ("llm-d", "ghcr.io/llm-d/llm-d-cuda:0.3.1", "Qwen/Qwen3-0.6B", "NVIDIA-H100-80GB-HBM3")
        assert run["label"] == "Baseline latency test for Qwen3-0.6B on inference-scheduling stack"
        extra = json.loads(run["extra"])
        assert extra["scenario.load.standardized.concurrency"] == "Infinity"
        assert extra["results.session_performance.sessions.total"] == 112
        assert extra["results.profiling.anything_goes"] == 5
        assert extra["scenario.stack"][1]["standardized"]["tool"] == "llm-d-inference-scheduler"

    def test_llm_d_example_v0_2_with_unquoted_timestamps(self):
        run = only("br_v0_2_example.yaml", EXAMPLE_02.read_bytes(), DISAGREES)
        assert run["mean_ttft_ms"] == pytest.approx(36.8578234128654)  # 0.0368578234128654 s
        assert run["p99_ttft_ms"] == pytest.approx(50.29489721637218)  # 0.05029489721637218 s
        assert (run["num_requests"], run["request_rate"], run["duration_s"]) == (500, 10.0, 49.97206788184121)
        extra = json.loads(run["extra"])
        # start: 2025-11-05T18:00:42Z unquoted stays text (the schema's date-time string), not a datetime.
        assert (extra["run.time.start"], extra["version"]) == ("2025-11-05T18:00:42Z", "0.2")

    def test_llm_d_example_v0_1(self):
        run = only("br_v0_1_example.yaml", EXAMPLE_01.read_bytes())
        # units ms: time_to_first_token mean 0.800974442732916, p50 0.203539535985328, p90 2.26959549135063.
        assert (run["mean_ttft_ms"], run["p50_ttft_ms"], run["p90_ttft_ms"]) == \
            (0.800974442732916, 0.203539535985328, 2.26959549135063)
        assert "p99_ttft_ms" not in run  # v0.1's example has no p99
        assert run["mean_e2el_ms"] == 3.31325431142327 and run["mean_tpot_ms"] == 0.0836929455635872
        # throughput as plain numbers: output_tokens_per_sec, total_tokens_per_sec, requests_per_sec.
        assert (run["output_throughput"], run["total_token_throughput"], run["request_throughput"]) == \
            (32.544923821416, 676.121568007739, 1.0238155253639)
        # total 32, failures 0, incomplete 1 → 31 completed; metrics.time.duration 16.531641244888306 s.
        assert (run["num_requests"], run["failed_requests"], run["duration_s"]) == (31, 0, 16.531641244888306)
        assert (run["target_model"], run["engine"], run["engine_version"], run["gpu"], run["workload"]) == \
            ("deepseek-ai/DeepSeek-R1-0528", "vllm", "0.9.0.1", "H100", "long-input")
        extra = json.loads(run["extra"])
        assert extra["metrics.service.batch_size"]["mean"] == 234.23049
        assert extra["metrics.requests.incomplete"] == 1

    @pytest.mark.parametrize("args, read", [
        ({"--speculative-config": {"method": "EAGLE3", "model": "RedHatAI/Qwen3-0.6B-eagle3", "num_speculative_tokens": 3}},
         {"spec_method": "eagle3", "draft_model": "RedHatAI/Qwen3-0.6B-eagle3", "num_speculative_tokens": 3}),
        # As a shell hands it over (a JSON text), and with vLLM's other spelling of a name.
        ({"--speculative_config": '{"method": "mtp", "num_speculative_tokens": 2}'},
         {"spec_method": "mtp", "num_speculative_tokens": 2}),
        # Before vLLM 0.8.2: "[ngram]" was prompt lookup, not a model.
        ({"--speculative-model": "[ngram]", "--num-speculative-tokens": "4"},
         {"spec_method": "ngram", "num_speculative_tokens": 4}),
        ({"--speculative-algorithm": "NEXTN", "--speculative-num-steps": 2}, {"spec_method": "nextn", "num_speculative_tokens": 2}),
        ({"--speculative-config": "not json"}, {}), ({"--tensor-parallel-size": 8}, {}),
        # Nested past the JSON parser's depth (an attack pass: a RecursionError had left parse).
        ({"--speculative-config": "[" * 1000 + "]" * 1000}, {})])
    def test_an_engine_s_speculative_arguments_are_read(self, args, read):
        """llm-d-benchmark records each component's command line in native.args: the speculative decoding
        it ran is there, and only there."""
        doc = example_021()
        doc["scenario"]["stack"][0]["native"]["args"] = args
        run = only("spec.yaml", as_yaml(doc), DISAGREES)
        assert {c: run.get(c) for c in ("spec_method", "draft_model", "num_speculative_tokens")} == {
            "spec_method": None, "draft_model": None, "num_speculative_tokens": None, **read}
        assert json.loads(run["extra"])["scenario.stack"][0]["native"]["args"] == args  # kept whole

    def test_two_engines_that_speculate_differently_are_said(self):
        doc = example_021()
        engine = doc["scenario"]["stack"][0]
        other = {**engine, "native": {"args": {"--speculative-algorithm": "EAGLE", "--speculative-num-steps": 3}}}
        engine["native"]["args"] = {"--speculative-config": {"method": "mtp", "num_speculative_tokens": 1}}
        doc["scenario"]["stack"].insert(1, other)
        parsed = importers.parse("pools.yaml", as_yaml(doc))
        assert (parsed.runs[0]["spec_method"], parsed.runs[0]["num_speculative_tokens"]) == ("mtp", 1)
        assert Notice("warn.report_speculations", components=2) in parsed.warnings
        other["native"]["args"] = {"--speculative-config": {"method": "mtp", "num_speculative_tokens": 1}}
        assert "warn.report_speculations" not in [w.key for w in importers.parse("same.yaml", as_yaml(doc)).warnings]

    def test_a_speculative_argument_of_the_wrong_kind_is_said_not_stored(self):
        doc = example_021()
        doc["scenario"]["stack"][0]["native"]["args"] = {"--speculative-config": {"method": ["eagle3"],
                                                                                   "num_speculative_tokens": -3}}
        parsed = importers.parse("odd.yaml", as_yaml(doc))
        assert parsed.runs[0].get("spec_method") is None and parsed.runs[0].get("num_speculative_tokens") is None
        assert {w.key for w in parsed.warnings} == {"warn.rejected.text", "warn.rejected.negative", *DISAGREES}
        run = {**parsed.runs[0], "run_id": "odd", "source_format": "benchmark-report"}
        exported = benchmark_report.to_report(run).doc  # the arguments written back as they were
        assert exported["scenario"]["stack"][0]["native"]["args"] == doc["scenario"]["stack"][0]["native"]["args"]

    def test_json_reports_one_or_an_array(self):
        doc = example_021()
        assert only("report.json", json.dumps(doc).encode(), DISAGREES)["mean_ttft_ms"] == pytest.approx(36.8578234128654)
        second = {**doc, "run": {**doc["run"], "uid": "other"}}
        parsed = importers.parse("reports.json", json.dumps([doc, second]).encode())
        assert [json.loads(r["extra"])["run.uid"] for r in parsed.runs] == ["38b1f169ca178b756f7483523b17de61", "other"]

    def test_a_yaml_stream_is_a_run_per_report(self):
        text = STAGE_0.read_text() + "---\n" + (STAGES / "inference-perf.partial.stage_1.yaml").read_text()
        parsed = importers.parse("stages.yaml", text.encode())
        assert [run["num_requests"] for run in parsed.runs] == [3, 2]  # stage 1: total 2, no failures

    def test_detected_by_content_not_by_name(self):
        assert importers.detect_format("x.txt", STAGE_0.read_bytes()) == "benchmark-report"
        assert importers.detect_format("x", json.dumps(example_021()).encode()) == "benchmark-report"
        refused("config.yaml", (STAGES / "config.yaml").read_bytes())  # inference-perf's config: no format's

    @pytest.mark.parametrize("text, seconds", [("PT2.200S", 2.2), ("PT1M30S", 90.0), ("P1DT2H", 93600.0),
                                               ("PT0S", 0.0), ("P1Y", None), ("PT", None), ("P1DT", None), (3, None)])
    def test_iso_durations(self, text, seconds):
        assert standard.iso_duration(text) == seconds


class TestReportFolder:
    def test_the_report_s_json_schema_beside_its_example_is_passed_over_and_said(self, capsys, tmp_path):
        """An analyst's pass: llm-d's folder, uploaded, holds the report's JSON Schema (the very file
        specviz ships to check reports), which was said in red to be no result of a known format."""
        folder = SAMPLES / "llm_d_benchmark_report"
        chosen = importers.folder_files(folder)
        schema = folder / "br_v0_2_1_json_schema.json"
        assert schema.read_bytes() == (ROOT / "data/benchmark_report/br_v0_2_1_json_schema.json").read_bytes()
        assert chosen.files == [EXAMPLE_021] and chosen.left_out[schema].reason == "report_schema"
        db = str(tmp_path / "s.duckdb")
        assert cli.main(["ingest", str(folder), "--db", db, "--format", "json"]) == 0
        report = json.loads(capsys.readouterr().out)
        assert [s["message"] for s in report["skipped"]] == [
            f"{schema.name}: not read: the llm-d benchmark report's JSON Schema (how a report is written, no result)."]
        # Chosen alone, or under another name, it is said to be a schema, not refused as no known format.
        for name in (schema.name, "schema.json"):
            error = refused(name, schema.read_bytes())
            assert error.key == "ingest.json_schema" and str(error).startswith(f"{name}: this is a JSON Schema")


class TestRefused:
    def test_schema_refuses_a_report_naming_the_field(self):
        doc = example_021()
        doc["results"]["request_performance"]["aggregate"]["requests"]["total"] = "many"
        error = refused("bad.yaml", as_yaml(doc))
        assert error.key == "ingest.report_invalid"
        assert error.params["field"] == "results.request_performance.aggregate.requests.total"
        assert "'many' is not of type 'integer'" in str(error)
        del doc["run"]["uid"]
        error = refused("bad.yaml", as_yaml(doc))
        assert (error.params["field"], error.params["detail"]) == ("run", "'uid' is a required property")

    def test_the_published_v0_2_schema_refuses_session_performance(self):
        """llm-d-benchmark's own v0.2 example since c3231c17 has it; its v0.2 JSON schema does not."""
        error = refused("session.yaml", (FIXTURES / "benchmark_report_v0_2_example_session.yaml").read_bytes())
        assert (error.key, error.params["field"]) == ("ingest.report_invalid", "results")
        assert "'session_performance' was unexpected" in str(error)

    @pytest.mark.parametrize("field, unit", [("time_to_first_token", "furlongs"), ("request_latency", "tokens/s"),
                                             ("time_per_output_token", "s"), ("inter_token_latency", None)])
    def test_a_latency_in_a_unit_it_may_not_have(self, field, unit):
        doc = example_021()
        doc["results"]["request_performance"]["aggregate"]["latency"][field]["units"] = unit
        error = refused("units.yaml", as_yaml(doc))
        assert error.key == "ingest.report_unit"
        assert error.params["field"] == f"results.request_performance.aggregate.latency.{field}.units"
        assert str(error).startswith(f"units.yaml: results.request_performance.aggregate.latency.{field}.units is")

    def test_a_throughput_in_a_latency_unit(self):
        doc = example_021()
        doc["results"]["request_performance"]["aggregate"]["throughput"]["request_rate"]["units"] = "ms"
        error = refused("units.yaml", as_yaml(doc))
        assert (error.key, error.params["allowed"]) == ("ingest.report_unit", "queries/s")

    def test_a_v0_1_latency_in_furlongs(self):
        doc = yaml.safe_load(EXAMPLE_01.read_text())
        doc["metrics"]["latency"]["request_latency"]["units"] = "furlongs"
        assert refused("old.yaml", as_yaml(doc)).params["field"] == "metrics.latency.request_latency.units"

    def test_a_negative_latency(self):
        doc = example_021()
        doc["results"]["request_performance"]["aggregate"]["latency"]["request_latency"]["mean"] = -0.5
        error = refused("negative.yaml", as_yaml(doc))
        assert error.key == "ingest.report_negative" and error.params["value"] == "-0.5"
        assert error.params["field"] == "results.request_performance.aggregate.latency.request_latency.mean"

    @pytest.mark.parametrize("value", [math.inf, math.nan, 10**400])
    def test_a_throughput_past_every_float(self, value):
        doc = example_021()
        doc["results"]["request_performance"]["aggregate"]["throughput"]["output_token_rate"]["max"] = value
        assert refused("inf.yaml", as_yaml(doc)).key == "ingest.report_negative"

    def test_a_p50_above_the_p99(self):
        doc = example_021()
        doc["results"]["request_performance"]["aggregate"]["latency"]["time_to_first_token"]["p50"] = 0.06
        error = refused("order.yaml", as_yaml(doc))
        assert error.key == "ingest.report_unordered"
        assert (error.params["low"], error.params["high"]) == ("p50", "p75")  # 0.06 s above p75's 0.0399 s
        assert "its p50 (0.06) is above its p75" in str(error)

    def test_a_mean_outside_min_and_max(self):
        doc = example_021()
        doc["results"]["request_performance"]["aggregate"]["latency"]["time_to_first_token"]["mean"] = 1.0
        assert refused("mean.yaml", as_yaml(doc)).params["high"] == "max"

    def test_more_failures_than_requests(self):
        doc = example_021()
        doc["results"]["request_performance"]["aggregate"]["requests"]["failures"] = 501
        error = refused("requests.yaml", as_yaml(doc))
        assert error.key == "ingest.report_requests" and "501 failed and 0 incomplete of 500 requests" in str(error)

    def test_a_version_not_known(self):
        assert refused("v9.yaml", as_yaml({**example_021(), "version": "0.9"})).key == "ingest.report_version"



class TestCutShort:
    """A YAML file cut at a line's end is YAML still: what it lost is said, not read as a whole report."""

    def test_a_sorted_report_cut_before_its_run(self):
        # llm-d's example is written with sorted keys: results first, then run, scenario, version.
        text = EXAMPLE_021.read_bytes()
        cut = text[:text.index(b"\nrun:") + 1]
        error = refused("cut.yaml", cut)
        assert error.key == "ingest.report_cut_short"
        assert error.params["present"] == "results" and error.params["missing"] == "run"

    def test_a_stream_whose_last_v0_1_report_has_its_scenario_alone(self):
        doc = yaml.safe_load(EXAMPLE_01.read_text())
        stream = yaml.safe_dump_all([doc, {"version": "0.1", "scenario": doc["scenario"]}], sort_keys=False)
        error = refused("cut.yaml", stream)
        assert (error.key, error.params["missing"]) == ("ingest.report_cut_short", "metrics")

    def test_a_document_of_no_report_keys_is_not_a_report(self):
        assert refused("other.yaml", "run: {uid: x}\nresults: {}\n---\nname: other\n").key == "ingest.report_shape"

    def test_a_report_cut_inside_its_results_says_what_it_lacks(self):
        text = STAGE_0.read_bytes()
        cut = text[:text.index(b"      throughput:") + 1]
        parsed = importers.parse(STAGE_0.name, cut)
        (run,) = parsed.runs
        assert "output_throughput" not in run and run["mean_ttft_ms"] == pytest.approx(127.51322751322752)
        (warning,) = parsed.warnings
        assert warning.key == "warn.report_sections_missing"
        assert warning.params["sections"] == "results.request_performance.aggregate.throughput"
        assert "cut short" in i18n.message(warning, "en") and "cắt ngắn" in i18n.message(warning, "vi")

BILLION_LAUGHS = "\n".join(["run: {uid: x}", "results: {}", 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
                            *(f"{b}: &{b} [{', '.join([f'*{a}'] * 9)}]" for a, b in zip("abcdefgh", "bcdefghi"))])


class TestHostileYaml:
    def test_billion_laughs_is_refused_quickly_without_expanding(self):
        started = time.monotonic()
        error = refused("lol.yaml", BILLION_LAUGHS)
        assert time.monotonic() - started < 10  # a hang (10⁹ nodes expanded), not a speed: it takes milliseconds
        assert error.key == "ingest.yaml_expansion" and error.params["nodes"] < 10 ** 7
        assert "refused without expanding them" in str(error)

    def test_aliases_within_the_memory_bound_are_read(self):
        doc = example_021()
        latency = doc["results"]["request_performance"]["aggregate"]["latency"]
        latency["inter_token_latency"] = latency["time_per_output_token"] = {"units": "s/token", "mean": 0.02}
        text = as_yaml(doc)
        assert b"&id001" in text and b"*id001" in text  # one object twice: an anchor and its alias
        run = only("aliases.yaml", text, DISAGREES)
        assert run["mean_tpot_ms"] == run["mean_itl_ms"] == pytest.approx(20.0)  # 0.02 s/token each

    def test_the_bound_is_the_import_memory_setting(self, monkeypatch):
        monkeypatch.setenv("SPECVIZ_IMPORT_MEMORY_BYTES", "1000000")  # 1 MB: under the example's 2,032 nodes
        error = refused("big.yaml", EXAMPLE_021.read_bytes())
        assert error.key == "ingest.yaml_expansion" and error.params["most"] == 1217  # (1 MB - its text) / 800 B

    def test_an_alias_inside_its_own_anchor(self):
        error = refused("loop.yaml", "run: {uid: x}\nresults: &r {profiling: *r}\n")
        assert (error.key, error.params["anchor"]) == ("ingest.yaml_recursive", "r")

    def test_an_alias_of_no_anchor_is_said_in_the_reader_s_language(self):
        error = refused("unknown.yaml", "run: {uid: x}\nresults: {profiling: *nowhere}\n")
        assert error.key == "ingest.yaml_malformed"
        assert "*nowhere names no anchor" in str(error)
        assert "*nowhere không trỏ tới anchor" in i18n.message(error, "vi")

    @pytest.mark.parametrize("tagged", ['!!python/object/apply:os.system ["touch /tmp/pwned"]',
                                        "!!python/name:os.system", "!!binary aGVsbG8=", "!!timestamp 2025-01-01",
                                        "!local thing", "!!set {a: null}"])
    def test_no_tag_but_json_types(self, tagged):
        error = refused("tags.yaml", f"run: {{uid: x}}\nresults:\n  profiling: {tagged}\n")
        assert error.key == "ingest.yaml_tag"

    def test_malformed_yaml_names_the_line(self):
        error = refused("broken.yaml", "run: {uid: x}\nresults:\n  profiling: [unclosed\n")
        assert error.key == "ingest.yaml_malformed" and error.params["where"].key == "ingest.yaml_where"
        assert str(error).endswith(f"at line {error.params['where'].params['line']}, "
                                   f"column {error.params['where'].params['column']})")
        assert "ở dòng" in i18n.message(error, "vi")  # the place in the reader's language

    def test_deep_nesting(self):
        assert refused("deep.yaml", "run: {uid: x}\nresults: " + "[" * 2000 + "]" * 2000 + "\n").key in (
            "ingest.too_deep", "ingest.yaml_malformed")

    def test_the_store_keeps_what_it_had(self, tmp_path):
        store = Store(tmp_path / "s.duckdb")
        try:
            assert store.import_path(STAGE_0).status == "imported"
            for name, text in (("lol.yaml", BILLION_LAUGHS), ("tags.yaml", "run: {uid: x}\nresults: !!binary aGk=\n")):
                with pytest.raises(importers.IngestError):
                    store.import_file(name, text.encode())
            assert len(store.runs()) == 1 and len(store.imports()) == 1
            assert store.runs()["mean_ttft_ms"].iloc[0] == pytest.approx(127.51322751322752)
        finally:
            store.close()


class TestFolders:
    def test_a_stage_report_is_read_after_the_reports_beside_it(self, tmp_path):
        folder = tmp_path / "run"
        shutil.copytree(STAGES, folder)
        found = importers.folder_files(folder)
        assert [f.name for f in found.files] == ["per_request_lifecycle_metrics.json",
                                                 "stage_0_lifecycle_metrics.json", "stage_1_lifecycle_metrics.json",
                                                 "summary_lifecycle_metrics.json", "inference-perf.partial.stage_0.yaml",
                                                 "inference-perf.partial.stage_1.yaml"]
        assert [(f.name, why.reason) for f, why in found.left_out.items()] == [
            ("config.yaml", "run_config"),
            ("validation.json", "validation")]  # its checks of the reports beside it, no result

    def test_a_stage_report_alone_is_read(self, tmp_path):
        shutil.copy(STAGE_0, tmp_path / STAGE_0.name)
        shutil.copy(STAGES / "stage_1_lifecycle_metrics.json", tmp_path)
        assert [f.name for f in importers.result_files(tmp_path)] == ["stage_1_lifecycle_metrics.json", STAGE_0.name]

    def test_the_ingest_report_accounts_for_every_file(self, capsys, tmp_path):
        folder = tmp_path / "run"
        shutil.copytree(STAGES, folder)
        code = cli.main(["ingest", str(folder), "--db", str(tmp_path / "c.duckdb")])
        report = json.loads(capsys.readouterr().out)
        listed = [Path(e["file"]).name for kind in ("imported", "skipped", "errors") for e in report[kind]]
        assert sorted(listed) == sorted(p.name for p in folder.iterdir())
        # each stage once, and the per-request file: the summary is of the same requests
        assert [e["runs"] for e in report["imported"]] == [1, 1, 1]
        skipped = {Path(e["file"]).name: e["message"] for e in report["skipped"]}
        per_request = folder / "per_request_lifecycle_metrics.json"
        assert skipped["summary_lifecycle_metrics.json"].endswith(f"already imported from {per_request}")
        for stage in (0, 1):  # each stage's benchmark report gives its p99s to the stage's run
            assert skipped[f"inference-perf.partial.stage_{stage}.yaml"].endswith(
                f"already imported from {folder / f'stage_{stage}_lifecycle_metrics.json'}")
        assert "validation.json" in skipped and code == 0 and not report["errors"]
        runs = Store(tmp_path / "c.duckdb").runs().set_index("source_file")
        stage_0 = runs.loc[str(folder / "stage_0_lifecycle_metrics.json")]
        # From the stage's JSON: its rate, its p90; from its report: the p99 (0.17022222222222227 s).
        assert (stage_0["request_rate"], stage_0["p90_ttft_ms"]) == (1.0, pytest.approx(159.3650793650794))
        assert stage_0["p99_ttft_ms"] == pytest.approx(170.22222222222227)


class TestStageReportBesideItsJson:
    """inference-perf writes each stage twice: ``stage_N_lifecycle_metrics.json`` (its rate, its
    latencies to the p90) and the benchmark report ``inference-perf.partial.stage_N.yaml`` (no rate,
    the latencies to the p99.9). One run, whichever file comes first."""

    JSON = STAGES / "stage_0_lifecycle_metrics.json"

    def imported(self, tmp_path: Path, *files: tuple[str, bytes]) -> Store:
        store = Store(tmp_path / "s.duckdb")
        for name, data in files:
            store.import_file(name, data)
        return store

    def test_one_run_whichever_file_comes_first(self, tmp_path):
        json_file = ("run/stage_0_lifecycle_metrics.json", self.JSON.read_bytes())
        yaml_file = ("run/inference-perf.partial.stage_0.yaml", STAGE_0.read_bytes())
        rows = []
        for order, files in (("yaml_first", (yaml_file, json_file)), ("json_first", (json_file, yaml_file))):
            store = self.imported(tmp_path / order, *files)
            runs = store.runs()
            assert len(runs) == 1 and len(store.imports()) == 1, order
            (row,) = store.run_rows(list(runs["run_id"]))
            assert (row["source_file"], row["source_format"]) == json_file[0:1] + ("inference-perf",)
            # The stage's rate (1 request/s), its p90 TTFT 0.1593650793650794 s, and the report's p99s:
            # TTFT 0.17022222222222227 s, request latency 1.298 s.
            assert (row["request_rate"], row["p90_ttft_ms"]) == (1.0, pytest.approx(159.3650793650794))
            assert (row["p99_ttft_ms"], row["p99_e2el_ms"]) == pytest.approx((170.22222222222227, 1298.0))
            extra = json.loads(row["extra"])
            assert extra["figures_from"] == yaml_file[0] and extra["stage"] == 0
            assert extra["benchmark_report"]["run.uid"] == "test-uid-0"
            # (and, where the report came second and was not stored, that it holds its run: store.held_for)
            said = [w["key"] for w in json.loads(store.imports()["warnings"].iloc[0]) if w["key"] != "store.held_for"]
            assert said == ["warn.report_figures_taken"], order
            rows.append(row)
        same_run(rows[0], rows[1])

    def test_a_run_without_a_label_is_said_to_have_none(self, tmp_path):
        """The two files chosen on their own, outside their run's folder: the run has no label, and
        the notice had read "stage_0_lifecycle_metrics.json: : inference-perf.partial.stage_0.yaml…"
        (an analyst's pass on the Explorer)."""
        json_file = ("stage_0_lifecycle_metrics.json", self.JSON.read_bytes())
        yaml_file = ("inference-perf.partial.stage_0.yaml", STAGE_0.read_bytes())
        for order, files in (("yaml_first", (yaml_file, json_file)), ("json_first", (json_file, yaml_file))):
            store = self.imported(tmp_path / order, *files)
            (said,) = [w for w in json.loads(store.imports()["warnings"].iloc[0]) if w["key"] != "store.held_for"]
            assert said["key"] == "warn.report_figures_taken" and said["params"]["runs"] == {
                "key": "warn.run_unlabelled", "params": {}}, order
            assert str(Notice.from_json(said)).startswith(f"its run (no label): {yaml_file[0]}, a benchmark report"), order
            store.close()

    def test_the_report_again_adds_nothing(self, tmp_path):
        yaml_file = ("run/inference-perf.partial.stage_0.yaml", STAGE_0.read_bytes())
        store = self.imported(tmp_path, ("run/stage_0_lifecycle_metrics.json", self.JSON.read_bytes()), yaml_file)
        before = store.run_rows(list(store.runs()["run_id"]))
        result = store.import_file("copy/" + yaml_file[0], yaml_file[1] + b"\n")  # another content
        assert result.status == "skipped" and [w.key for w in result.warnings] == ["warn.report_repeated"]
        assert store.run_rows(list(store.runs()["run_id"])) == before
        said = json.loads(store.imports()["warnings"].iloc[0])
        assert [w["key"] for w in said if w["key"] != "store.held_for"] == ["warn.report_figures_taken"]
        # The report and its copy, neither stored, are named where their run goes.
        assert {w["params"]["file"] for w in said if w["key"] == "store.held_for"} == {yaml_file[0], "copy/" + yaml_file[0]}

    def test_a_report_of_other_figures_is_a_run_of_its_own(self, tmp_path):
        other = STAGE_0.read_text().replace("p50: 0.1111111111111111", "p50: 0.1211111111111111", 1)
        assert other != STAGE_0.read_text()
        store = self.imported(tmp_path, ("run/stage_0_lifecycle_metrics.json", self.JSON.read_bytes()),
                              ("run/inference-perf.partial.stage_0.yaml", other.encode()))
        assert sorted(store.runs()["source_format"]) == ["benchmark-report", "inference-perf"]
        assert store.runs().set_index("source_format").loc["inference-perf", "p99_ttft_ms"] is None or math.isnan(
            store.runs().set_index("source_format").loc["inference-perf", "p99_ttft_ms"])

    def test_one_report_a_run(self, tmp_path):
        """Two reports of the same requests stored before the stage: the stage's run takes the first's
        figures, and the second stays a run of its own (both had been replaced, their figures mixed)."""
        other = STAGE_0.read_text().replace("p99: 1.298", "p99: 1.299", 1)
        assert other != STAGE_0.read_text()
        store = self.imported(tmp_path, ("a/inference-perf.partial.stage_0.yaml", STAGE_0.read_bytes()),
                              ("b/inference-perf.partial.stage_0.yaml", other.encode()),
                              ("run/stage_0_lifecycle_metrics.json", self.JSON.read_bytes()))
        runs = store.runs().set_index("source_format")
        assert sorted(runs.index) == ["benchmark-report", "inference-perf"]
        (row,) = store.run_rows([runs.loc["inference-perf", "run_id"]])
        assert json.loads(row["extra"])["figures_from"] == "a/inference-perf.partial.stage_0.yaml"
        assert row["p99_e2el_ms"] == pytest.approx(1298.0)

    def test_the_report_s_figures_stay_when_the_per_request_report_comes_last(self, tmp_path):
        """A run of stage 0 alone (its four requests, the first of the sample's per-request report): the
        report, the stage and then the per-request report, whose run takes the stage's load and what
        the stage took from the report (both had been lost in this order: an attack pass)."""
        requests = json.loads((STAGES / "per_request_lifecycle_metrics.json").read_text())[:4]
        store = self.imported(tmp_path, ("one/inference-perf.partial.stage_0.yaml", STAGE_0.read_bytes()),
                              ("one/stage_0_lifecycle_metrics.json", self.JSON.read_bytes()),
                              ("one/per_request_lifecycle_metrics.json", json.dumps(requests).encode()))
        (row,) = store.run_rows(list(store.runs()["run_id"]))
        extra = json.loads(row["extra"])
        assert (extra["report"], row["request_rate"], row["num_requests"]) == ("per_request", 1.0, 3)
        assert extra["figures_from"] == "one/inference-perf.partial.stage_0.yaml"
        assert extra["benchmark_report"]["run.uid"] == "test-uid-0"

    def test_a_merged_extra_stays_within_its_bound(self, tmp_path, monkeypatch):
        """The stage's extra (312 bytes) and the report's (2,508) each within 2,600, together past it:
        they had been stored together, 2.3 times the bound (an attack pass)."""
        monkeypatch.setenv("SPECVIZ_STORED_EXTRA_BYTES", "2600")
        store = self.imported(tmp_path, ("run/stage_0_lifecycle_metrics.json", self.JSON.read_bytes()),
                              ("run/inference-perf.partial.stage_0.yaml", STAGE_0.read_bytes()))
        (row,) = store.run_rows(list(store.runs()["run_id"]))
        assert len(row["extra"].encode()) <= 2600
        assert json.loads(row["extra"])["benchmark_report"].startswith("(not stored: ")
        assert row["p99_ttft_ms"] == pytest.approx(170.22222222222227)  # the columns are taken still

    def test_a_file_of_several_reports_is_never_replaced(self, tmp_path):
        text = STAGE_0.read_text()
        two = text + "---\n" + text.replace("uid: test-uid-0", "uid: test-uid-1")
        store = self.imported(tmp_path, ("run/two.yaml", two.encode()),
                              ("run/stage_0_lifecycle_metrics.json", self.JSON.read_bytes()))
        assert sorted(store.runs()["source_format"]) == ["benchmark-report", "benchmark-report", "inference-perf"]


def stored(tmp_path: Path, *files: Path) -> tuple[Store, list[dict]]:
    store = Store(tmp_path / "s.duckdb")
    for file in files:
        assert store.import_path(file).status == "imported"
    return store, store.run_rows(list(store.runs()["run_id"]))


def same_run(first: dict, again: dict, changed: frozenset = frozenset()) -> None:
    """Every column and every extra field of ``first`` in ``again``, field by field."""
    own = {"run_id", "source_file", "source_format", "imported_at", "content_hash", "extra"}
    for column, value in first.items():
        if column not in own and value is not None:
            assert again.get(column) == (pytest.approx(value, rel=1e-12) if isinstance(value, float) else value), column
    before, after = json.loads(first["extra"]), json.loads(again["extra"])
    assert set(before) == set(after)
    for key in set(before) - changed:
        assert after[key] == before[key], key


class TestRoundTrip:
    @pytest.mark.parametrize("file, changed", [(STAGE_0, frozenset()), (EXAMPLE_021, frozenset()),
                                               (EXAMPLE_02, frozenset({"version"}))])
    @pytest.mark.parametrize("fmt", benchmark_report.FORMATS)
    def test_export_then_import_loses_no_field(self, tmp_path, file, changed, fmt):
        store, (run,) = stored(tmp_path, file)
        store.close()
        report = benchmark_report.to_report(run)
        assert report.left_out == [] and report.doc["version"] == "0.2.1"
        again = only(str(Path(run["source_file"]).with_suffix(f".again.{fmt}")),
                     benchmark_report.dump([report], fmt).encode(), () if file == STAGE_0 else DISAGREES)
        infinite = "scenario.load.standardized.concurrency"  # the examples' .inf: JSON has no Infinity, so null
        if fmt == "json" and json.loads(run["extra"]).get(infinite) == "Infinity":
            assert json.loads(again["extra"])[infinite] is None
            changed = changed | {infinite}
        same_run(run, again, changed)

    def test_the_figures_go_back_in_the_files_units(self, tmp_path):
        store, (run,) = stored(tmp_path, EXAMPLE_021)
        store.close()
        doc = benchmark_report.to_report(run).doc
        ttft = doc["results"]["request_performance"]["aggregate"]["latency"]["time_to_first_token"]
        assert ttft["units"] == "s" and ttft["mean"] == pytest.approx(0.0368578234128654)
        assert ttft["p99p9"] == 0.057014757215045425  # from extra, as the file had it
        assert doc["run"]["time"]["duration"] == "PT49.97206788184121S"
        assert doc["scenario"]["load"]["standardized"]["concurrency"] == math.inf  # .inf again
        requests = doc["results"]["request_performance"]["aggregate"]["requests"]
        assert (requests["total"], requests["failures"], requests["input_length"]["p99p9"]) == (500, 0, 2326.503)

    def test_a_v0_1_run_keeps_its_columns(self, tmp_path):
        store, (run,) = stored(tmp_path, EXAMPLE_01)
        store.close()
        report = benchmark_report.to_report(run)
        assert "metrics.service.batch_size" in report.left_out and "workload" in report.left_out
        again = only("again.yaml", benchmark_report.dump([report]).encode())
        for column in ("mean_ttft_ms", "p90_ttft_ms", "mean_e2el_ms", "output_throughput", "request_throughput",
                       "num_requests", "failed_requests", "duration_s", "target_model", "engine", "gpu"):
            assert again[column] == (pytest.approx(run[column]) if isinstance(run[column], float) else run[column])
        requests = report.doc["results"]["request_performance"]["aggregate"]["requests"]
        assert (requests["total"], requests["incomplete"]) == (32, 1)  # 31 completed + 0 failed + 1 incomplete

    def test_a_run_of_another_format(self, tmp_path):
        store, (run,) = stored(tmp_path, SAMPLES / "vllm_0.25.1" / "bench_serve_speculative_v0.25.1.json")
        store.close()
        report = benchmark_report.to_report(run)
        assert {"acceptance_rate", "acceptance_length", "extra"} <= set(report.left_out)
        assert report.doc["scenario"]["stack"][0]["standardized"]["kind"] == "generic"
        again = only("again.yaml", benchmark_report.dump([report]).encode())
        for column in ("mean_ttft_ms", "p99_itl_ms", "output_throughput", "num_requests", "target_model", "duration_s"):
            if run[column] is not None:
                assert again[column] == (pytest.approx(run[column]) if isinstance(run[column], float) else run[column])

    @pytest.mark.parametrize("engine, args", [
        ("vllm", {"--speculative-config": {"method": "eagle3", "model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B",
                                           "num_speculative_tokens": 3}}),
        ("sglang", {"--speculative-algorithm": "EAGLE3", "--speculative-draft-model-path": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B",
                    "--speculative-num-steps": 3})])
    def test_the_speculative_decoding_goes_in_the_engine_s_arguments_and_back(self, tmp_path, engine, args):
        """The standard has no field of its own for it: a component's command line (native.args) holds it
        as the engine takes it, the import reads it back, and the baseline is another cfg_id."""
        # "EAGLE3" as a CSV may write it: the engine's own case goes in, and it is not "left out" (an attack pass).
        text = (b"engine,target_model,concurrency,spec_method,draft_model,num_speculative_tokens,output_throughput\n"
                + f"{engine},meta-llama/Llama-3.1-8B-Instruct,8,EAGLE3,yuhuili/EAGLE3-LLaMA3.1-Instruct-8B,3,150\n"
                  f"{engine},meta-llama/Llama-3.1-8B-Instruct,8,,,,100\n".encode())
        store = Store(tmp_path / "s.duckdb")
        try:
            store.import_file("runs.csv", text)
            spec, plain = sorted(store.run_rows(list(store.runs()["run_id"])), key=lambda r: r["spec_method"] is None)
        finally:
            store.close()
        reports = [benchmark_report.to_report(run) for run in (spec, plain)]
        (component,), (plain_component,) = (r.doc["scenario"]["stack"] for r in reports)
        assert component["native"] == {"args": args} and plain_component["native"] == {}
        assert component["metadata"]["cfg_id"] != plain_component["metadata"]["cfg_id"]
        assert not {"spec_method", "draft_model", "num_speculative_tokens"} & set(reports[0].left_out)
        again = importers.parse("again.yaml", benchmark_report.dump(reports).encode()).runs
        assert [(r.get("spec_method"), r.get("draft_model"), r.get("num_speculative_tokens")) for r in again] == [
            ("eagle3", "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", 3), (None, None, None)]

    @pytest.mark.parametrize("method, gamma", [("none", 0), ("OFF", None), (None, 0)])
    def test_a_plain_run_s_method_is_no_engine_argument(self, method, gamma):
        """An analyst's pass: a run stated plain was exported as `--speculative-config {method: none,
        num_speculative_tokens: 0}`, which vLLM does not take."""
        run = {"engine": "vllm", "spec_method": method, "num_speculative_tokens": gamma}
        assert benchmark_report._speculative_args(run) == {}

    def test_a_tree_goes_in_sglang_s_arguments_and_comes_back_a_tree(self, tmp_path):
        """SpecForge's γ 7, top-k 10, 60 draft tokens: the export had written a chain of 7, and its
        component (no model named) had come back as a plain run (an analyst's pass)."""
        store, runs = stored(tmp_path, SAMPLES / "specforge" / "dev_result.jsonl")
        store.close()
        tree = next(run for run in runs if extra.tree_width(run["extra"]) == 10)
        report = benchmark_report.to_report(tree)
        assert report.doc["scenario"]["stack"][0]["native"]["args"] == {
            "--speculative-algorithm": "EAGLE3", "--speculative-num-steps": 7, "--speculative-eagle-topk": 10,
            "--speculative-num-draft-tokens": 60}
        # SpecForge measures no latency: the report's latency section is absent, and said to be.
        again = only("again.yaml", benchmark_report.dump([report]).encode(), ("warn.report_sections_missing",))
        said = i18n.message(importers.parse("again.yaml", benchmark_report.dump([report]).encode()).warnings[0], "en")
        # Not blamed on a cut file alone: the export of a run that measured none of them reads so too.
        assert "A run whose tool measured none of them" in said.replace("\\", "")
        assert (again["engine"], again["spec_method"], again["num_speculative_tokens"]) == ("sglang", "eagle3", 7)
        assert extra.tree_shape(again["extra"]) == {"topk": 10, "num_draft_tokens": 60}
        # Written back as the arguments it came from, not as fields the report has no place for.
        assert benchmark_report.to_report({**again, "run_id": "again", "source_format": "benchmark-report",
                                           "extra": again["extra"]}).left_out == []

    def test_a_router_with_arguments_of_its_own_is_no_engine(self):
        """Only a generic component that names a model or runs speculative decoding stands for the
        engine: any native.args had made the router a second one (an attack pass)."""
        doc = example_021()
        stack = doc["scenario"]["stack"]
        stack[0]["standardized"]["kind"] = "generic"
        stack[1]["native"]["args"] = {"--pool-name": "x"}
        run = importers.parse("router.yaml", as_yaml(doc)).runs[0]
        assert (run["engine"], run["engine_version"]) == ("llm-d", "ghcr.io/llm-d/llm-d-cuda:0.3.1")

    def test_a_tree_written_into_the_arguments_is_not_said_left_out(self, tmp_path):
        """A SpecForge run whose extra is its tree alone: "extra" had been listed as left out though
        the arguments held all of it; a top-k the arguments cannot hold (text) still is."""
        line = {"batch_size": 8, "steps": 3, "topk": 4, "num_draft_tokens": 8, "acc_length": 2.0, "duration": 41.0,
                "throughput": 1321.8, "benchmark": "mtbench"}
        for topk, left_out in ((4, False), ("4", True)):
            store = Store(tmp_path / f"{topk!r}.duckdb")
            try:
                store.import_file("sf.jsonl", (json.dumps({**line, "topk": topk}) + "\n").encode())
                (report,) = benchmark_report.stored_reports(store, list(store.runs()["run_id"]))
            finally:
                store.close()
            assert ("extra" in report.left_out) is left_out, topk

    def test_a_run_with_requests_keeps_its_load(self, tmp_path):
        """The fixture's input_lens are [512, 512, 512], max_concurrency 16, request_rate "inf"."""
        store, (run,) = stored(tmp_path, FIXTURES / "vllm_bench_spec_decode.json")
        try:
            (report,) = benchmark_report.stored_reports(store, [run["run_id"]])
        finally:
            store.close()
        load = report.doc["scenario"]["load"]["standardized"]
        assert load["input_seq_len"] == {"distribution": "other", "value": 512.0}
        assert (load["concurrency"], load["rate_qps"], load["tool"]) == (16.0, math.inf, "vllm-bench")
        assert "concurrency" not in report.left_out and "acceptance_rate" in report.left_out
        again = only("again.yaml", benchmark_report.dump([report], "yaml").encode())
        assert (again["concurrency"], again["request_rate"]) == (16.0, math.inf)
        # JSON has no Infinity: null, as the standard's Pydantic models write it (JSON.parse refused the text).
        text = benchmark_report.dump([report], "json")
        assert json.loads(text, parse_constant=pytest.fail)["scenario"]["load"]["standardized"]["rate_qps"] is None
        again = only("again.json", text.encode())
        assert (again["concurrency"], again.get("request_rate")) == (16.0, None)

    def test_a_run_without_requests_keeps_the_load_its_totals_give(self, tmp_path):
        """SGLang's bench_serving line has no per-request rows, but its totals give the mean input length
        (3,019 tokens over 50 requests, 60 a request; input tokens per second over requests per second): the
        report keeps its concurrency, which 15 of the 18 sample runs had lost (an analyst's pass)."""
        store, (run,) = stored(tmp_path, SAMPLES.parent / "sglang_bench_serving_c8.jsonl")
        try:
            (report,) = benchmark_report.stored_reports(store, [run["run_id"]])
        finally:
            store.close()
        load = report.doc["scenario"]["load"]["standardized"]
        assert load["input_seq_len"] == {"distribution": "other", "value": 60.0} and load["concurrency"] == 8
        assert "concurrency" not in report.left_out
        assert only("again.yaml", benchmark_report.dump([report]).encode())["concurrency"] == 8

    @pytest.mark.parametrize("name, mean", [("llmperf_Yi-1-5-34B_550_150_summary.json", 550.0),
                                            ("2026/aiperf_0.3_concurrency1/profile_export_aiperf.json", 100.0)])
    def test_a_run_whose_file_states_its_mean_input_keeps_its_load(self, tmp_path, name, mean):
        """llmperf's results_number_input_tokens_mean and AIPerf's input_sequence_length.avg (an attack pass:
        their concurrency had been left out)."""
        store, (run,) = stored(tmp_path, SAMPLES.parent / name)
        try:
            (report,) = benchmark_report.stored_reports(store, [run["run_id"]])
        finally:
            store.close()
        assert report.doc["scenario"]["load"]["standardized"]["input_seq_len"]["value"] == mean
        assert "concurrency" not in report.left_out

    @pytest.mark.parametrize("file", [FIXTURES / "vllm_bench_spec_decode.json", EXAMPLE_021])
    def test_a_run_exported_and_imported_again_is_not_stored_twice(self, tmp_path, file):
        """A vLLM run's report names it by its id; a report's run keeps its report's uid."""
        store, (run,) = stored(tmp_path, file)
        try:
            text = benchmark_report.stored_text(store, [run["run_id"]]).encode()
            result = store.import_file("exported.yaml", text)
            assert result.status == "skipped" and list(store.runs()["run_id"]) == [run["run_id"]]
            (notice,) = result.warnings
            assert notice.key == "warn.exported_run_repeated" and notice.params["other"] == run["source_file"]
            # Into another store (the run is not there), the report is a run of its own.
            elsewhere = Store(tmp_path / "elsewhere.duckdb")
            try:
                assert elsewhere.import_file("exported.yaml", text).status == "imported"
            finally:
                elsewhere.close()
        finally:
            store.close()

    def test_a_value_nested_past_the_bound_is_not_stored_and_exports_go_on(self, tmp_path, monkeypatch):
        """A list 400 deep under results.observability had stopped every later export of reports with
        a RecursionError (PyYAML's writer recurses): an attack pass."""
        doc = example_021()
        deep: list = []
        for _ in range(400):
            deep = [deep]
        doc["results"]["observability"] = {"deep": deep}
        store = Store(tmp_path / "s.duckdb")
        try:
            result = store.import_file("deep.json", json.dumps(doc).encode())  # PyYAML cannot write it
            (cut,) = [w for w in result.warnings if w.key == "warn.cut_extra_depth"]
            assert cut.params["depth"] > 400 and cut.params["limit"] == 32
            (run,) = store.run_rows(list(store.runs()["run_id"]))
            assert f"nested {cut.params['depth']} deep" in run["extra"]
            assert "Baseline latency test" in benchmark_report.stored_text(store, [run["run_id"]])
            # Stored before imports bounded it: the export leaves the value out, and says so.
            monkeypatch.setenv("SPECVIZ_STORED_EXTRA_DEPTH", "1000")
            kept = store.import_file("deep-again.json", json.dumps({**doc, "run": {**doc["run"], "uid": "other"}}).encode())
            assert kept.status == "imported"
            monkeypatch.delenv("SPECVIZ_STORED_EXTRA_DEPTH")
            (again,) = [r for r in store.run_rows(list(store.runs()["run_id"])) if r["source_file"] == "deep-again.json"]
            (report,) = benchmark_report.stored_reports(store, [again["run_id"]])
            assert report.left_out == ["results.observability.deep"]
            assert "deep" not in benchmark_report.dump([report])
        finally:
            store.close()

    def test_a_report_whose_figures_differ_from_its_run_s_is_stored(self, tmp_path):
        store, (run,) = stored(tmp_path, FIXTURES / "vllm_bench_spec_decode.json")
        try:
            doc = yaml.safe_load(benchmark_report.stored_text(store, [run["run_id"]]))
            doc["results"]["request_performance"]["aggregate"]["requests"]["total"] += 1  # a run measured again
            assert store.import_file("edited.yaml", as_yaml(doc)).status == "imported"
            assert len(store.runs()) == 2
        finally:
            store.close()

    def test_several_runs_are_a_stream_or_an_array(self, tmp_path):
        store, runs = stored(tmp_path, STAGE_0, EXAMPLE_021)
        try:
            ids = [run["run_id"] for run in runs]
            for fmt in benchmark_report.FORMATS:
                parsed = importers.parse(f"both.{fmt}", benchmark_report.stored_text(store, ids, fmt).encode())
                assert [r["num_requests"] for r in parsed.runs] == [r["num_requests"] for r in runs]
            with pytest.raises(SpecvizError, match="no stored run has the id nope"):
                benchmark_report.stored_text(store, [ids[0], "nope"])
        finally:
            store.close()

    def test_a_report_the_schema_refuses_is_not_written(self):
        run = {"run_id": "r-0", "source_format": "benchmark-report", "extra": json.dumps({"run.uid": 7})}
        with pytest.raises(SpecvizError) as caught:
            benchmark_report.to_report(run)
        assert caught.value.key == "export.invalid" and caught.value.params["field"] == "run.uid"


class TestExportCommand:
    def test_export_writes_a_file_and_names_what_it_left_out(self, capsys, tmp_path):
        db = str(tmp_path / "c.duckdb")
        assert cli.main(["ingest", str(EXAMPLE_021), str(ROOT / "data/examples/example_sweep.csv"), "--db", db]) == 0
        capsys.readouterr()
        store = Store(db)
        ids = list(store.runs()["run_id"])
        store.close()
        output = tmp_path / "out.json"
        code = cli.main(["export", ids[0], ids[-1], "--format", "benchmark-report", "--output", str(output), "--db", db])
        out, err = capsys.readouterr()
        assert code == 0 and json.loads(out)["runs"] == [ids[0], ids[-1]]
        assert f"specviz: run {ids[-1]}: left out" in err and f"run {ids[0]}:" not in err
        docs = json.loads(output.read_text())
        assert [d["version"] for d in docs] == ["0.2.1", "0.2.1"]
        assert all(standard.schema_errors(d, "0.2.1") is None for d in docs)
        assert cli.main(["ingest", str(output), "--db", str(tmp_path / "again.duckdb")]) == 0
        # "-" is standard output, not a file of that name (an attack pass), as without --output.
        capsys.readouterr()
        here = tmp_path / "here"
        here.mkdir()
        with pytest.MonkeyPatch.context() as patch:
            patch.chdir(here)
            assert cli.main(["export", ids[0], "--format", "benchmark-report", "--output", "-", "--db", db]) == 0
        assert capsys.readouterr().out.startswith("version: 0.2.1") and not list(here.iterdir())

    def test_an_output_that_is_the_store_is_refused_and_the_store_kept(self, capsys, tmp_path):
        """--output naming the store's own file wrote the report over it: every stored run was lost."""
        db = tmp_path / "c.duckdb"
        assert cli.main(["ingest", str(STAGE_0), "--db", str(db)]) == 0
        capsys.readouterr()
        store = Store(str(db))
        run_id = store.runs()["run_id"].iloc[0]
        store.close()
        before = db.read_bytes()
        assert cli.main(["export", run_id, "--format", "benchmark-report", "--db", str(db),
                         "--output", str(tmp_path / "." / "c.duckdb")]) == 2
        assert "is the store itself" in capsys.readouterr().err and db.read_bytes() == before
        # Nor the files DuckDB keeps beside it, its write-ahead log above all (an attack pass).
        for beside in ("c.duckdb.wal", "c.duckdb.tmp"):
            assert cli.main(["export", run_id, "--format", "benchmark-report", "--db", str(db),
                             "--output", str(tmp_path / beside)]) == 2
            assert "is the store itself or a file it keeps beside it" in capsys.readouterr().err
            assert not (tmp_path / beside).exists()
        # A folder, or a file in a folder that is not there: said as such, not as "[Errno 21] Is a
        # directory" (a CLI pass).
        for output, detail in ((tmp_path, "Is a directory"), (tmp_path / "no" / "r.yaml", "No such file or directory")):
            assert cli.main(["export", run_id, "--format", "benchmark-report", "--db", str(db), "--output", str(output)]) == 2
            assert capsys.readouterr().err == (f"specviz: error: cannot write {output}: {detail}; --output names a file, "
                                               "in a folder that exists\n")

    def test_export_to_stdout_as_yaml_and_unknown_ids(self, capsys, tmp_path):
        db = str(tmp_path / "c.duckdb")
        assert cli.main(["ingest", str(STAGE_0), "--db", db]) == 0
        capsys.readouterr()
        store = Store(db)
        run_id = store.runs()["run_id"].iloc[0]
        store.close()
        assert cli.main(["export", run_id, "--format", "benchmark-report", "--db", db]) == 0
        doc = yaml.safe_load(capsys.readouterr().out)
        assert doc["results"]["request_performance"]["aggregate"]["requests"]["total"] == 4
        assert cli.main(["export", "missing-0", "--format", "benchmark-report", "--db", db]) == 2
        assert capsys.readouterr().err == "specviz: error: no stored run has the id missing-0\n"


FIGURES = [("latency", field, statistic) for field in standard.LATENCIES for statistic in ("mean", "p50", "p99", "max")] + \
    [("throughput", field, "mean") for field in standard.THROUGHPUTS] + [("requests", "total", None)]
ODD_VALUES = (st.floats(allow_nan=True, allow_infinity=True) | st.integers(-10**400, 10**400) | st.booleans()
              | st.none() | st.text(max_size=6) | st.lists(st.integers(), max_size=2))


class TestFuzzed:
    @settings(max_examples=60, deadline=None)
    @given(st.dictionaries(st.sampled_from(FIGURES), ODD_VALUES, min_size=1, max_size=4), st.sampled_from(["yaml", "json"]))
    def test_odd_figures_are_read_or_refused(self, changes, syntax):
        doc = yaml.safe_load(STAGE_0.read_text())
        aggregate = doc["results"]["request_performance"]["aggregate"]
        for (group, field, statistic), value in changes.items():
            if statistic is None:
                aggregate[group][field] = value
            else:
                aggregate[group][field][statistic] = value
        data = json.dumps(doc).encode() if syntax == "json" else yaml.safe_dump(doc).encode()
        parses_or_refuses(f"fuzz.{syntax}", data)

    @settings(max_examples=60, deadline=None)
    @given(st.text(alphabet="&*[]{}:,-!| \nab", max_size=80))
    def test_odd_yaml_is_read_or_refused(self, tail):
        parses_or_refuses("odd.yaml", ("run: {uid: x}\nresults:\n  profiling: " + tail).encode())


def test_sources_are_plain_yaml_once_charged():
    source = Source("x.yaml", STAGE_0.read_bytes())
    docs = standard.plain_yaml(source)
    assert len(docs) == 1 and source.estimate > 0


class TestExplorerDownload:
    def test_the_runs_table_offers_a_benchmark_report(self):
        at = explorer_app()
        buttons = [b for b in at.get("download_button") if b.proto.label.startswith("Download as benchmark report")]
        assert len(buttons) == 1
