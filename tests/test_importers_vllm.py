"""Tests for vLLM's result files: ``vllm bench serve`` 0.25's spec-decode keys on a real file,
``vllm bench sweep serve`` folders, and OpenAI responses with per-request acceptance
(specviz.results.importers.vllm_responses)."""

import json
import warnings
import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from conftest import parses_or_refuses

from specviz import cli
from specviz.i18n import t
from specviz.results import importers
from specviz.results.store import Store

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT.parent / "shared" / "samples"
RESPONSES = ROOT / "tests" / "fixtures" / "vllm_responses_spec_decode.jsonl"


class TestBenchServe0251:
    """/work/shared/samples/2026/vllm_0.25.1/bench_serve_speculative_v0.25.1.json: ``vllm bench serve``
    0.25.1 against an MTP server (a real file)."""

    FILE = SAMPLES / "2026" / "vllm_0.25.1" / "bench_serve_speculative_v0.25.1.json"

    def test_acceptance_and_every_field_kept(self):
        parsed = importers.parse(self.FILE.name, self.FILE.read_bytes())
        (run,) = parsed.runs
        assert parsed.format == "vllm-bench" and not parsed.warnings
        # spec_decode_acceptance_rate 72.037… is a percent: 2723 accepted / 3780 drafted = 0.720370
        assert run["acceptance_rate"] == pytest.approx(2723 / 3780) == pytest.approx(0.7203703703703704)
        # 1 + 2723 accepted / 1260 drafts = 3.161111
        assert run["acceptance_length"] == pytest.approx(1 + 2723 / 1260)
        # fractions of the 1260 drafts: 1071, 903 and 749 accepted at positions 1-3 (1071 + 903 + 749 = 2723)
        assert run["per_position_acceptance"] == pytest.approx([1071 / 1260, 903 / 1260, 749 / 1260])
        assert run["num_speculative_tokens"] == 3 and run["target_model"] == "Qwen/Qwen3.8-27B-FP8"
        assert (run["concurrency"], run["num_requests"], run["failed_requests"]) == (2, 8, 0)
        extra = json.loads(run["extra"])
        assert (extra["spec_decode_num_drafts"], extra["spec_decode_draft_tokens"],
                extra["spec_decode_accepted_tokens"]) == (1260, 3780, 2723)
        source = json.loads(self.FILE.read_bytes())
        # every key of the file is a column or in extra (the stds, counts and other keys of 0.25.1)
        mapped = {"completed", "duration", "failed", "max_concurrency", "model_id", "output_throughput",
                  "request_rate", "request_throughput", "total_token_throughput", "spec_decode_acceptance_length",
                  "spec_decode_acceptance_rate", "spec_decode_per_position_acceptance_rates"}
        latencies = {key for key in source if key.endswith("_ms") and not key.startswith("std_")}
        assert set(source) - mapped - latencies == set(extra)
        assert all(extra[key] == source[key] for key in extra)


class TestSweepFolder:
    """A ``vllm bench sweep serve`` folder as vLLM 0.33.0's ``vllm/benchmarks/sweep/serve.py`` writes
    it, made from the real 0.25 sweep sample (``summary.json`` of runs 0 and 1, ``run=0.json``):
    ``run=1.json`` is summary's second object, and beside them the experiment's ``summary.csv``, a
    ``warmup.json`` (run_number -1) and a ``run=2.failure.json``, in their writer's shapes."""

    NAME = "SERVE--max_num_seqs=4-BENCH--max_concurrency=2-num_prompts=8"

    @pytest.fixture
    def sweep(self, tmp_path) -> Path:
        experiment = tmp_path / "exp"
        shutil.copytree(SAMPLES / "vllm_0.25_sweep", experiment)
        folder = experiment / self.NAME
        runs = json.loads((folder / "summary.json").read_text())
        (folder / "run=1.json").write_text(json.dumps(runs[1], indent=4))
        (folder / "warmup.json").write_text(json.dumps({**runs[0], "run_number": -1}, indent=4))
        (folder / "run=2.failure.json").write_text(json.dumps({
            "run_number": 2, "error_type": "RuntimeError", "error": "server died", "serve_overrides": {"max_num_seqs": 4},
            "bench_overrides": {"max_concurrency": 2, "num_prompts": 8}}, indent=2) + "\n")
        (experiment / "summary.csv").write_text(",date,run_number\n0,x,0\n1,y,1\n")
        return experiment

    def test_every_file_accounted_for(self, sweep):
        found = importers.folder_files(sweep)
        folder = sweep / self.NAME
        assert found.files == [folder / "summary.json", folder / "run=0.json", folder / "run=1.json"]
        assert {file: why.reason for file, why in found.left_out.items()} == {
            sweep / "summary.csv": "sweep_table", folder / "run=2.failure.json": "sweep_failure",
            folder / "warmup.json": "sweep_warmup"}

    def test_ingest_stores_each_run_once_and_reports_each_file(self, sweep, tmp_path, capsys):
        db = tmp_path / "s.duckdb"
        code = cli.main(["ingest", str(sweep), "--db", str(db)])
        report = json.loads(capsys.readouterr().out)
        folder = sweep / self.NAME
        assert code == 0 and report["errors"] == []
        assert [(e["file"], e["runs"]) for e in report["imported"]] == [(str(folder / "summary.json"), 2)]
        skipped = {Path(e["file"]).name: e["message"] for e in report["skipped"]}
        assert set(skipped) == {"summary.csv", "warmup.json", "run=2.failure.json", "run=0.json", "run=1.json"}
        assert skipped["run=0.json"] == skipped["run=1.json"] == f"already imported from {folder / 'summary.json'}"
        store = Store(db)
        assert sorted(json.loads(e)["run_number"] for e in store.runs().extra) == [0, 1]
        store.close()

    def test_a_run_file_that_contradicts_the_summary_is_an_error_of_its_own(self, sweep, tmp_path, capsys):
        run = sweep / self.NAME / "run=1.json"
        run.write_text(json.dumps({**json.loads(run.read_text()), "completed": 7}))
        db = tmp_path / "s.duckdb"
        code = cli.main(["ingest", str(sweep), "--db", str(db)])
        report = json.loads(capsys.readouterr().out)
        assert code == 2 and [e["file"] for e in report["errors"]] == [str(run)]
        # summary.json's run 1 completed 8 requests; run=1.json says 7
        assert ("with num_requests = 8, and this file has 7" in report["errors"][0]["message"]
                and str(run) in report["errors"][0]["message"])
        assert [Path(e["file"]).name for e in report["imported"]] == ["summary.json"]
        store = Store(db)
        assert len(store.runs()) == 2  # summary.json's two runs stay
        store.close()


class TestResponses:
    """tests/fixtures/vllm_responses_spec_decode.jsonl: four responses in the shape of vLLM 0.33.0's
    ``SpeculativeDecodingMetrics``; the first is the documentation's example."""

    def parse(self) -> importers.Parsed:
        return importers.parse(RESPONSES.name, RESPONSES.read_bytes())

    def test_detected_by_content(self):
        assert importers.detect_format("x.json", RESPONSES.read_bytes()) == "vllm-responses"
        array = json.dumps([json.loads(line) for line in RESPONSES.read_text().splitlines()]).encode()
        assert importers.detect_format("x.json", array) == "vllm-responses"
        plain = {"id": "x", "choices": [], "metrics": {"time_to_first_token_ms": 1.0}}
        assert importers.vllm_responses.sniff(importers.Source("x.json", json.dumps(plain).encode())) == 0

    def test_each_response_is_a_request(self):
        requests = self.parse().requests
        assert len(requests) == 4
        first = requests.iloc[0]
        # histogram [39, 1, 0, 3]: 43 steps, 1×1 + 3×3 = 10 accepted of 43 × 3 = 129 drafted
        assert (first.drafts, first.draft_tokens, first.accepted_tokens) == (43, 129, 10)
        assert first.acceptance_rate == pytest.approx(10 / 129) and first.acceptance_length == pytest.approx(1 + 10 / 43)
        assert (first.input_tokens, first.output_tokens, first.tpot_ms) == (21, 53, 8.0)
        extra = json.loads(first.extra)
        assert extra["acceptance_histogram"] == [39, 1, 0, 3] and extra["queue_time_ms"] == 0.4
        assert json.loads(requests.extra[1])["per_step_accepted"] == [3, 0, 1, 2, 3, 0]  # the detailed level
        assert np.isnan(requests.acceptance_rate[3]) and requests.output_tokens[3] == 32  # n = 2: no acceptance

    def test_the_run_is_token_weighted(self):
        """Accepted 10 + 9 + 19 = 38 of 129 + 18 + 24 = 171 drafted: 38 / 171 = 0.2222 (the mean of the
        three requests' rates, (0.0775 + 0.5 + 0.7917) / 3 = 0.456, is not vLLM's); 1 + 38 / (43 + 6 + 8)
        = 1.6667 tokens a step. Histograms summed: [42, 2, 3, 10] over 57 steps, so position 1 is
        accepted in 2 + 3 + 10 = 15 of them, position 2 in 13, position 3 in 10 (15 + 13 + 10 = 38)."""
        parsed = self.parse()
        (run,) = parsed.runs
        assert run["acceptance_rate"] == pytest.approx(38 / 171) and run["acceptance_length"] == pytest.approx(1 + 38 / 57)
        assert run["per_position_acceptance"] == pytest.approx([15 / 57, 13 / 57, 10 / 57])
        assert run["zero_accept_rate"] == pytest.approx(42 / 57)
        assert (run["target_model"], run["engine"], run["num_requests"], run["num_speculative_tokens"]) == (
            "Qwen/Qwen3-8B", "vllm", 4, 3)
        assert [(w.key, w.params) for w in parsed.warnings] == [
            ("warn.responses_without_acceptance", {"count": 1, "requests": 4})]

    def test_stored_with_the_request_columns(self, tmp_path):
        store = Store(tmp_path / "s.duckdb")
        result = store.import_file(RESPONSES.name, RESPONSES.read_bytes())
        assert (result.format, result.runs, result.requests) == ("vllm-responses", 1, 4)
        totals = store.query("SELECT sum(accepted_tokens) AS a, sum(draft_tokens) AS d, sum(drafts) AS s, "
                             "max(CAST(extra->>'$.num_spec_tokens' AS INT)) AS g FROM requests").frame.iloc[0]
        assert (totals.a, totals.d, totals.s, totals.g) == (38, 171, 57, 3)
        store.close()


def _response(**spec) -> dict:
    base = {"mean_acceptance_length": 2.0, "draft_acceptance_rate": 0.5, "acceptance_histogram": [1, 0, 1],
            "num_spec_steps": 2, "num_accepted_draft_tokens": 2, "num_draft_tokens": 4, "num_spec_tokens": 2}
    return {"id": "r", "object": "chat.completion", "model": "m", "choices": [], "metrics": {"speculative_decoding": {**base, **spec}}}


class TestHostileResponses:
    @pytest.mark.parametrize("spec, key, field, value", [
        # γ = 2: at most 3 tokens a step
        ({"mean_acceptance_length": 3.5}, "ingest.request_acceptance_length", "mean_acceptance_length", "3.5"),
        ({"mean_acceptance_length": 0.5}, "ingest.request_out_of_range", "mean_acceptance_length", "0.5"),
        ({"draft_acceptance_rate": 1.25}, "ingest.request_out_of_range", "draft_acceptance_rate", "1.25"),
        ({"draft_acceptance_rate": -0.1}, "ingest.request_out_of_range", "draft_acceptance_rate", "-0.1"),
        ({"num_accepted_draft_tokens": 5}, "ingest.request_out_of_range", "num_accepted_draft_tokens", "5"),
        ({"num_spec_steps": -1}, "ingest.request_count", "num_spec_steps", "-1"),
        ({"num_draft_tokens": 2.5}, "ingest.request_count", "num_draft_tokens", "2.5"),
    ])
    def test_refused_naming_the_file_and_the_field(self, spec, key, field, value):
        data = (json.dumps(_response()) + "\n" + json.dumps(_response(**spec)) + "\n").encode()
        with pytest.raises(importers.IngestError) as info:
            importers.parse("bad.jsonl", data)
        error = info.value
        assert (error.key, error.file, error.params["record"], error.params["value"]) == (key, "bad.jsonl", 2, value)
        assert error.params["field"] == f"metrics.speculative_decoding.{field}"
        for lang in ("en", "vi"):
            said = t(error.key, lang, **error.params)
            assert "bad.jsonl" in said and field in said and value in said

    def test_the_bound_is_gamma_plus_one(self):
        data = json.dumps(_response(mean_acceptance_length=3.0, num_accepted_draft_tokens=4,
                                    draft_acceptance_rate=1.0, acceptance_histogram=[0, 0, 2])).encode()
        assert importers.parse("ok.json", data).runs[0]["acceptance_length"] == 3.0  # 1 + 4 / 2: every draft accepted
        with pytest.raises(importers.IngestError) as info:
            importers.parse("bad.json", json.dumps(_response(mean_acceptance_length=3.01)).encode())
        assert (info.value.params["gamma"], info.value.params["most"]) == ("2", "3")

    def test_nothing_stored_is_lost(self, tmp_path):
        store = Store(tmp_path / "s.duckdb")
        store.import_file(RESPONSES.name, RESPONSES.read_bytes())
        before = (store.runs(), store.query("SELECT * FROM requests").frame, store.imports())
        with pytest.raises(importers.IngestError) as info:
            store.import_file("bad.jsonl", json.dumps(_response(draft_acceptance_rate=7)).encode())
        assert info.value.file == "bad.jsonl"
        after = (store.runs(), store.query("SELECT * FROM requests").frame, store.imports())
        for old, new in zip(before, after):
            assert old.equals(new)
        store.close()

    def test_a_histogram_summing_past_a_float_s_range_is_said_as_such(self):
        """An attack pass: counts of 1e308 summed to infinity, and the warning named 'np.float64(nan)',
        a figure of specviz's arithmetic the file never held; nothing wrong is stored either way."""
        # One request whose counts overflow, and two whose sums across requests do (a review).
        for records in ([_response(acceptance_histogram=[1e308, 1e308, 3])],
                        [_response(acceptance_histogram=[1e308, 0, 2])] * 2):
            data = "\n".join(json.dumps(r) for r in records).encode()
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # no overflow warning from numpy either
                parsed = importers.parse("big.jsonl", data)
            (run,) = parsed.runs
            assert "per_position_acceptance" not in run and "zero_accept_rate" not in run
            said = [w for w in parsed.warnings if w.key == "warn.histogram_overflow"]
            assert [w.params for w in said] == [{"field": "acceptance_histogram"}]
            assert "nan" not in t(said[0].key, "en", **said[0].params)

    def test_an_error_response_is_a_failed_request(self):
        error = {"error": {"message": "too long", "type": "BadRequestError", "param": None, "code": 400}}
        data = RESPONSES.read_bytes() + (json.dumps(error) + "\n" + json.dumps({"object": "error"}) + "\n").encode()
        parsed = importers.parse("r.jsonl", data)
        assert (parsed.runs[0]["num_requests"], parsed.runs[0]["failed_requests"], len(parsed.requests)) == (4, 2, 4)

    def test_a_line_that_is_not_a_response(self):
        with pytest.raises(importers.IngestError) as info:
            importers.parse("x.jsonl", (json.dumps(_response()) + "\n[1]\n").encode())
        assert (info.value.key, info.value.params["record"]) == ("ingest.request_record", 2)

    @settings(max_examples=80, deadline=None)
    @given(st.lists(st.dictionaries(
        st.sampled_from(["mean_acceptance_length", "draft_acceptance_rate", "acceptance_histogram", "num_spec_steps",
                         "num_accepted_draft_tokens", "num_draft_tokens", "num_spec_tokens"]),
        st.none() | st.integers(-3, 10) | st.floats(allow_nan=False) | st.text(max_size=3)
        | st.lists(st.integers(-1, 5) | st.floats(), max_size=4)), min_size=1, max_size=3))
    def test_never_crashes(self, specs):
        data = "".join(json.dumps({"model": "m", "metrics": {"speculative_decoding": s}}) + "\n" for s in specs)
        parses_or_refuses("r.jsonl", data.encode())


class TestPerRequestArraysAreChecked:
    """An attack pass: ``ttfts: "abc"`` gave no per-request rows, ``input_lens`` of {"a": 1} none of its
    values, negative lengths were emptied and an output of 1e308 tokens stored, each without a word."""

    FIXTURE = ROOT / "tests" / "fixtures" / "vllm_bench_spec_decode.json"

    def parsed(self, **arrays: object) -> importers.Parsed:
        doc = {**json.loads(self.FIXTURE.read_bytes()), **arrays}
        return importers.parse("detailed.json", json.dumps(doc).encode())

    def test_the_fixture_s_arrays_are_read_without_a_word(self):
        parsed = self.parsed()
        assert len(parsed.requests) == 3 and not [w for w in parsed.warnings if w.key.startswith("warn.request_")]

    def test_an_array_that_is_no_list_is_said(self):
        parsed = self.parsed(ttfts="abc", input_lens={"a": 1})
        assert parsed.requests.empty
        assert [str(w) for w in parsed.warnings if w.key == "warn.request_not_list"] == [
            "ttfts is not a list of per-request values ('abc'): none of its values were read (for ttfts, no per-request row)",
            "input_lens is not a list of per-request values (\"{'a': 1}\"): none of its values were read (for ttfts, no "
            "per-request row)"]

    def test_values_no_request_has_are_left_empty_and_said(self):
        parsed = self.parsed(input_lens=[-5, 100, "x"], output_lens=[1e308, 20, 30])
        assert parsed.requests["input_tokens"].isna().tolist() == [True, False, True]
        assert parsed.requests["output_tokens"].isna().tolist() == [True, False, False]
        assert [str(w) for w in parsed.warnings if w.key == "warn.request_values_dropped"] == [
            "input_lens: 2 per-request values that are no finite number from 0 (or past 100,000,000 tokens) were left empty",
            "output_lens: 1 per-request value that is no finite number from 0 (or past 100,000,000 tokens) was left empty"]
