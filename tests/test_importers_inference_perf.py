"""Tests for specviz.results.importers.inference_perf: inference-perf's lifecycle reports (a run per
stage), its per-request report and its Prometheus reports."""

import itertools
import json
import warnings
from pathlib import Path
from unittest import mock

import duckdb

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from conftest import parses_or_refuses

from specviz import i18n
from specviz.results import explorer, importers
from specviz.results.importers import inference_perf, source
from specviz.results.store import Store

ROOT = Path(__file__).resolve().parent.parent
RUN = ROOT.parent / "shared" / "samples" / "2026" / "inference_perf_0.5_two_stage"


def parsed(name: str) -> dict:
    result = importers.parse(f"{RUN.name}/{name}", (RUN / name).read_bytes())
    assert result.format == "inference-perf" and len(result.runs) == 1 and not result.warnings
    return result.runs[0]


class TestLifecycleReports:
    def test_a_stage_is_a_run_at_its_rate_in_milliseconds(self):
        run = parsed("stage_0_lifecycle_metrics.json")
        assert (run["request_rate"], run["num_requests"], run["failed_requests"], run["duration_s"]) == (1.0, 3, 1, 2.2)
        # Seconds in the file, milliseconds stored: TTFT mean 0.12751 s, request latency p90 1.28 s.
        assert round(run["mean_ttft_ms"], 2) == 127.51 and round(run["p90_e2el_ms"], 6) == 1280.0
        assert round(run["p50_itl_ms"], 3) == 111.111 and round(run["output_throughput"], 3) == 11.818
        assert run["label"] == RUN.name and json.loads(run["extra"])["stage"] == 0
        assert json.loads(run["extra"])["achieved_rate"] == 2.6666666666666665

    def test_a_concurrent_stage_is_at_its_concurrency(self):
        """inference-perf's main.py sets a concurrent stage's rate to its request count (all sent in
        one second); its report says the concurrency (summarize_requests' stage_concurrency)."""
        doc = json.loads((RUN / "stage_0_lifecycle_metrics.json").read_text())
        doc["load_summary"].update(requested_rate=40.0, concurrency=8)
        (run,) = importers.parse("c/stage_0_lifecycle_metrics.json", json.dumps(doc).encode()).runs
        assert (run["concurrency"], "request_rate" in run, json.loads(run["extra"])["requested_rate"]) == (8, False, 40.0)

    def test_the_summary_is_all_stages_with_no_rate(self):
        run = parsed("summary_lifecycle_metrics.json")
        assert "request_rate" not in run and run["num_requests"] == 5 and run["label"] == f"{RUN.name} · all stages"

    def test_a_folders_stages_are_one_line(self, tmp_path):
        store = Store(tmp_path / "s.duckdb")
        for name in ("stage_0_lifecycle_metrics.json", "stage_1_lifecycle_metrics.json"):
            store.import_file(f"{RUN.name}/{name}", (RUN / name).read_bytes())
        assert set(explorer.with_view_columns(store.runs())["series"]) == {RUN.name}

    def test_only_an_object_with_a_load_summary_and_successes(self):
        sniff = importers.inference_perf.sniff
        assert sniff(importers.Source("x.json", json.dumps({"successes": {}}).encode())) == 0
        assert sniff(importers.Source("x.json", json.dumps([{"load_summary": {}, "successes": {}}] * 2).encode())) == 0
        assert sniff(importers.Source("x.json", json.dumps({"load_summary": {}, "successes": {}}).encode())) == 0.95
        request = {"start_time": 0, "end_time": 1, "info": {}, "error": None}
        assert sniff(importers.Source("x.json", json.dumps([request]).encode())) == 0.95
        assert sniff(importers.Source("x.json", json.dumps([{"start_time": 0, "end_time": 1}]).encode())) == 0


class TestFuzzed:
    @settings(max_examples=60, deadline=None)
    @given(st.dictionaries(st.sampled_from(["count", "requested_rate", "achieved_rate"]),
                           st.none() | st.floats(allow_nan=False) | st.text(max_size=4)),
           st.dictionaries(st.sampled_from(["mean", "median", "p90", "p99", "x"]),
                           st.none() | st.floats(allow_nan=False) | st.integers() | st.lists(st.floats(), max_size=2)))
    def test_never_crashes(self, load, statistics):
        doc = {"load_summary": load, "successes": {"count": 1, "latency": {"time_to_first_token": statistics}},
               "failures": {"count": statistics.get("mean")}}
        parses_or_refuses("stage_0_lifecycle_metrics.json", json.dumps(doc).encode())


class TestPerRequestReport:
    NAME = "per_request_lifecycle_metrics.json"

    def parse(self) -> importers.Parsed:
        return importers.parse(f"{RUN.name}/{self.NAME}", (RUN / self.NAME).read_bytes())

    def test_each_request_is_a_row_in_milliseconds(self):
        requests = self.parse().requests
        assert len(requests) == 6 and set(requests.run_index) == {0}
        first, second, _, failed = (requests.iloc[i] for i in range(4))
        # start 0.0, end 1.0, token times 0.111… to 0.888… (8 tokens): TTFT 0.111 s, ITL and TPOT
        # (0.8889 - 0.1111) / 7 = 0.1111 s, E2E 1.0 s
        assert round(first.ttft_ms, 3) == 111.111 and round(first.itl_ms, 3) == round(first.tpot_ms, 3) == 111.111
        assert first.e2el_ms == 1000.0 and (first.input_tokens, first.output_tokens) == (100, 8)
        # start 0.5, first token 0.6, last 1.7 (12 tokens): TTFT 100 ms, TPOT (1.7 - 0.6) / 11 = 100 ms, E2E 1.3 s
        assert round(second.ttft_ms, 6) == 100.0 and round(second.tpot_ms, 6) == 100.0 and round(second.e2el_ms, 6) == 1300.0
        # the HTTP 500: no token, E2E 2.0 - 1.5 s, its error kept
        assert np.isnan(failed.ttft_ms) and failed.e2el_ms == 500.0 and np.isnan(failed.output_tokens)
        assert json.loads(failed.extra) == {"error": {"error_type": "HTTP Error 500", "error_msg": "boom"}}

    def test_one_run_whose_figures_are_the_summarys(self):
        """The file's run, computed from its five successful requests, has the figures inference-perf
        wrote in summary_lifecycle_metrics.json from the same requests: E2E mean (1.0 + 1.3 + 1.2 +
        1.0 + 1.5) / 5 = 1.2 s, p90 at 0.9 × 4 = 3.6 between 1.3 and 1.5: 1.42 s; duration 12.0 - 0.0
        s; output (8 + 12 + 6 + 8 + 10) / 12 = 3.667 tok/s; tokens (520 + 44) / 12 = 47 tok/s."""
        result = self.parse()
        (run,) = result.runs
        assert result.format == "inference-perf" and not result.warnings
        assert run["label"] == f"{RUN.name} · all stages" and json.loads(run["extra"])["report"] == "per_request"
        assert (run["num_requests"], run["failed_requests"], run["duration_s"]) == (5, 1, 12.0)
        assert round(run["mean_e2el_ms"], 6) == 1200.0 and round(run["p90_e2el_ms"], 6) == 1420.0
        assert round(run["output_throughput"], 3) == 3.667 and round(run["total_token_throughput"], 6) == 47.0
        summary = parsed("summary_lifecycle_metrics.json")
        shared = (summary.keys() & run.keys()) - {"extra"}
        assert len(shared) == 19  # label, two counts, duration, three throughputs, mean, p50 and p90 of four latencies
        assert {key: pytest.approx(summary[key]) for key in shared} == {key: run[key] for key in shared}

    def test_stored_with_each_rows_extra(self, tmp_path):
        store = Store(tmp_path / "s.duckdb")
        result = store.import_file(f"{RUN.name}/{self.NAME}", (RUN / self.NAME).read_bytes())
        assert (result.runs, result.requests) == (1, 6)
        errors = store.query("SELECT extra->>'$.error.error_msg' AS e FROM requests WHERE extra IS NOT NULL").frame
        assert errors.e.tolist() == ["boom"]
        store.close()

    def test_the_older_response_info(self):
        """inference-perf 0.5.0's tag wrote the response under ``info.response_info``."""
        record = {"start_time": 3.0, "end_time": 4.0, "request": "{}", "response": "ok", "error": None,
                  "info": {"input_tokens": 7, "response_info": {"output_tokens": 3, "output_token_times": [3.2, 3.4, 3.6]}}}
        row = importers.parse("per_request_lifecycle_metrics.json", json.dumps([record]).encode()).requests.iloc[0]
        # TTFT 3.2 - 3.0 s, TPOT (3.6 - 3.2) / 2 s
        assert (round(row.ttft_ms, 6), round(row.tpot_ms, 6), row.input_tokens) == (200.0, 200.0, 7)

    def test_a_gap_past_a_float_s_range_in_milliseconds_is_left_out(self):
        """Hypothesis found it: token times 1e306 s apart overflow to infinity in milliseconds; that gap
        is left out of the run's inter-token figures, as a time that does not count is elsewhere."""
        record = {"start_time": 0.0, "end_time": 2e306, "request": "{}", "response": "ok", "error": None,
                  "info": {"input_tokens": 7, "response_metrics": {"output_tokens": 4,
                                                                     "output_token_times": [0.1, 0.2, 0.3, 1e306]}}}
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            (run,) = importers.parse(self.NAME, json.dumps([record]).encode()).runs
        assert run["mean_itl_ms"] == pytest.approx(100.0) and run["p99_itl_ms"] == pytest.approx(100.0)

    @settings(max_examples=40, deadline=None)
    @given(st.lists(st.fixed_dictionaries({
        "start_time": st.none() | st.floats(allow_nan=False) | st.text(max_size=3),
        "end_time": st.none() | st.floats(allow_nan=False),
        "info": st.none() | st.fixed_dictionaries({"input_tokens": st.none() | st.integers(-5, 10**20), "response_metrics": st.none() | st.fixed_dictionaries({
            "output_tokens": st.none() | st.integers(-2, 5) | st.floats(),
            "output_token_times": st.lists(st.none() | st.floats() | st.text(max_size=2), max_size=4)})}),
        "error": st.none() | st.dictionaries(st.text(max_size=3), st.text(max_size=3))}), min_size=1, max_size=4))
    def test_never_crashes(self, records):
        parses_or_refuses(self.NAME, json.dumps(records).encode())


class TestReadByDuckDB:
    """The per-request report is claimed from its head and read by DuckDB, never decoded by Python."""

    NAME = TestPerRequestReport.NAME

    @staticmethod
    def records(n: int) -> bytes:
        record = json.loads((RUN / TestPerRequestReport.NAME).read_bytes())[0]
        return json.dumps([record] * n, indent=2).encode()

    def test_claimed_by_its_head_and_never_decoded_by_python(self, monkeypatch):
        monkeypatch.setattr(source.Source, "documents", property(lambda source: pytest.fail("decoded whole")))
        data = (RUN / self.NAME).read_bytes()
        assert importers.detect_format(self.NAME, data) == "inference-perf"
        assert len(importers.parse(self.NAME, data).requests) == 6
        compact = json.dumps(json.loads(data)).encode()  # as inference-perf writes it to S3 or GCS
        assert importers.detect_format(self.NAME, compact) == "inference-perf"

    def test_other_key_orders_are_decoded_to_tell_the_format_then_read_the_same(self):
        record = {"info": {}, "error": None, "end_time": 1.0, "start_time": 0.0}
        assert not inference_perf.claims(importers.Source(self.NAME, json.dumps([record]).encode()))
        (row,) = importers.parse(self.NAME, json.dumps([record]).encode()).requests.itertuples()
        assert row.e2el_ms == 1000.0

    def test_the_memory_of_the_rows_is_charged_before_they_are_taken_out(self, monkeypatch):
        """DuckDB, within its own memory limit, counts the requests; their memory in Python is
        charged before any is taken out of it."""
        data = self.records(2000)
        needed = source._RUN_BYTES + inference_perf._REQUEST_BYTES * 2000
        monkeypatch.setattr(inference_perf.duckdb.DuckDBPyConnection, "fetchnumpy", pytest.fail)
        monkeypatch.setenv("SPECVIZ_IMPORT_MEMORY_BYTES", str(needed - 1))
        with pytest.raises(importers.IngestError, match="SPECVIZ_IMPORT_MEMORY_BYTES"):
            importers.parse(self.NAME, data)
        monkeypatch.undo()
        monkeypatch.setenv("SPECVIZ_IMPORT_MEMORY_BYTES", str(needed + 10_000))  # and the run's extra stored
        assert len(importers.parse(self.NAME, data).requests) == 2000


    def test_inference_perfs_own_files_take_the_typed_read(self, monkeypatch):
        monkeypatch.setattr(inference_perf, "_ANY_RECORDS", "not SQL")  # the reading from text would fail
        assert len(importers.parse(self.NAME, (RUN / self.NAME).read_bytes()).requests) == 6

    @pytest.mark.parametrize("change", [
        lambda record: record.update(start_time=None),  # null and missing: one NULL in a struct
        lambda record: record["info"].update(response_metrics={}, response_info={"output_tokens": 3}),
        lambda record: record["info"].update(response_metrics={"server_usage": {}}),
        lambda record: record.update(info="text")])  # a struct refuses it; the text names it
    def test_what_the_typed_read_cannot_tell_is_read_from_the_text(self, change):
        records = json.loads((RUN / self.NAME).read_bytes())
        change(records[2])
        with duckdb.connect() as con, source.Source(self.NAME, json.dumps(records).encode()) as opened:
            assert not inference_perf._typed_read(con, opened, 256 << 20)

    def test_a_record_without_an_error_succeeded(self):
        records = json.loads((RUN / self.NAME).read_bytes())
        del records[0]["error"]
        requests = importers.parse(self.NAME, json.dumps(records).encode()).requests
        assert len(requests) == 6 and requests.extra.isna().sum() == 5

    NUMBER = (st.none() | st.booleans() | st.floats() | st.integers(-5, 10**20)
              | st.sampled_from(["1.5", "1,000", "x", ""]))
    RESPONSE = st.none() | st.fixed_dictionaries({}, optional={
        "output_tokens": NUMBER, "output_token_times": st.lists(NUMBER, max_size=4) | NUMBER, "server_usage": st.just({})})
    INFO = st.fixed_dictionaries({}, optional={
        "input_tokens": NUMBER, "request_metrics": st.fixed_dictionaries({}, optional={
            "text": st.fixed_dictionaries({}, optional={"input_tokens": NUMBER})}),
        "response_metrics": RESPONSE, "response_info": RESPONSE, "lora_adapter": st.none() | st.text(max_size=3),
        "labels": st.dictionaries(st.text(max_size=2), st.text(max_size=2), max_size=2)})
    # Records of inference-perf's shape with values of every kind (which the typed read settles), and
    # records it leaves to the text (a null time, no info, an empty response).
    SHAPED = st.fixed_dictionaries({"start_time": NUMBER.filter(lambda value: value is not None),
                                    "end_time": NUMBER.filter(lambda value: value is not None), "info": INFO}, optional={
        "error": st.none() | st.dictionaries(st.text(max_size=3), st.text(max_size=3), max_size=2)})
    ANY = SHAPED | st.dictionaries(st.sampled_from(["start_time", "end_time", "error", "info"]), NUMBER | INFO)

    def test_a_null_older_key_gives_way_to_the_newer_one_in_both_reads(self):
        """Found by the property below: with ``info.input_tokens`` null and the newer key 0, DuckDB's
        typed read (a struct: a null is a missing key) took 0 and the text read NaN."""
        data = json.dumps([{"start_time": 0.0, "end_time": 0.0,
                            "info": {"input_tokens": None, "request_metrics": {"text": {"input_tokens": 0.0}}}}]).encode()
        for typed in (True, False):
            with mock.patch.object(inference_perf, "_typed_read", inference_perf._typed_read if typed
                                   else lambda *args: False):
                assert list(inference_perf._read_requests(source.Source(self.NAME, data))["input"]) == [0.0], typed

    @settings(max_examples=40, deadline=None)
    @given(st.lists(SHAPED, min_size=1, max_size=4) | st.lists(ANY, min_size=1, max_size=4))
    def test_the_typed_read_reads_as_the_text_does(self, records):
        """Whatever the records, the typed read gives what the reading from text gives, or leaves
        them to it."""
        data = json.dumps(records).encode()

        def read(typed: bool) -> dict | str:
            with mock.patch.object(inference_perf, "_typed_read", inference_perf._typed_read if typed
                                   else lambda *args: False):
                try:
                    return inference_perf._read_requests(source.Source(self.NAME, data))
                except importers.IngestError as error:
                    return error.key
        typed, text = read(True), read(False)
        if isinstance(text, str):
            assert typed == text
        else:
            assert typed.keys() == text.keys()
            for key in text:
                np.testing.assert_array_equal(typed[key], text[key], err_msg=key)


class TestHostile:
    """Hostile per-request files: each the file's error, naming it, and nothing stored lost."""

    NAME = TestPerRequestReport.NAME

    @staticmethod
    def refused(tmp_path, data: bytes) -> importers.IngestError:
        store = Store(tmp_path / "s.duckdb")
        store.import_file(f"{RUN.name}/{TestHostile.NAME}", (RUN / TestHostile.NAME).read_bytes())
        before = int(store.request_summary().requests.sum())  # the store's own read: a query would start a process
        with pytest.raises(importers.IngestError) as info:
            store.import_file("hostile/per_request_lifecycle_metrics.json", data)
        assert info.value.file == "hostile/per_request_lifecycle_metrics.json"
        assert int(store.request_summary().requests.sum()) == before == 6
        assert len(store.runs()) == 1
        store.close()
        return info.value

    @staticmethod
    def sample(change=None) -> list:
        records = json.loads((RUN / TestHostile.NAME).read_bytes())
        if change:
            change(records[2])
        return records

    @pytest.mark.parametrize(("field", "value", "kind"), [
        ("start_time", {"s": 1}, "object"), ("end_time", [1.0], "array"), ("info", "text", "string"),
        ("info.response_metrics.output_tokens", True, "boolean"),
        ("info.response_metrics.output_token_times", 0.5, "number"), ("info.response_metrics", [], "array")])
    def test_a_field_of_the_wrong_kind_is_named(self, tmp_path, field, value, kind):
        def change(record):
            *path, last = field.split(".")
            for key in path:
                record = record[key]
            record[last] = value
        error = self.refused(tmp_path, json.dumps(self.sample(change), indent=2).encode())
        named = field.removeprefix("info.response_metrics.") if "output" in field else field
        assert (error.key, error.params["record"], error.params["field"], error.params["kind"]) == (
            "ingest.request_field_type", 3, named, kind)

    @pytest.mark.parametrize("cut", [",", ",\n  ", "", "{", '{"start_time": 1'])
    def test_a_file_cut_off_mid_array(self, tmp_path, cut):
        text = json.dumps(self.sample(), indent=2)
        data = (text[:text.index("},\n  {", 1000) + 1] + cut).encode()  # after the first records
        assert self.refused(tmp_path, data).key == "ingest.json_malformed"

    def test_a_huge_stored_string_is_named(self, tmp_path):
        def change(record):
            record["error"] = {"error_type": "HTTP Error 500", "error_msg": "x" * 200_000}
        error = self.refused(tmp_path, json.dumps(self.sample(change)).encode())
        assert (error.key, error.params["record"], error.params["field"]) == ("ingest.request_value_too_large", 3,
                                                                             "error")

    def test_a_huge_body_is_read_without_python(self, tmp_path, monkeypatch):
        """The request and response bodies are not read: a 50 MB response is DuckDB's to skip."""
        monkeypatch.setattr(source.Source, "documents", property(lambda source: pytest.fail("decoded whole")))
        records = self.sample(lambda record: record.update(response="y" * 50_000_000))
        store = Store(tmp_path / "s.duckdb")
        result = store.import_file(self.NAME, json.dumps(records, indent=2).encode())
        assert (result.status, result.requests) == ("imported", 6)
        store.close()

    def test_a_record_over_what_duckdb_may_read_is_refused(self, tmp_path, monkeypatch):
        monkeypatch.setattr(inference_perf, "_DUCKDB_BYTES", 100_000_000)  # a buffer of 2 × 16 MiB
        monkeypatch.setenv("SPECVIZ_IMPORT_MEMORY_BYTES", "200000000")
        records = self.sample(lambda record: record.update(request="z" * 40_000_000))
        error = self.refused(tmp_path, json.dumps(records, indent=2).encode())
        assert error.key == "ingest.record_too_large" and 30_000_000 < error.params["limit"] < 40_000_000


class TestTheSummaryAndThePerRequestReportAreOneRun:
    """inference-perf writes summary_lifecycle_metrics.json and per_request_lifecycle_metrics.json
    from the same requests: stored once, as the per-request report's run with each request, in
    either order (each was a run of its own: 2 runs for 1, 4 for the folder's 3)."""

    SUMMARY, PER_REQUEST = "summary_lifecycle_metrics.json", "per_request_lifecycle_metrics.json"

    def imported(self, store: Store, *names: str, folder: str = f"{RUN.name}/") -> list:
        return [store.import_file(f"{folder}{name}", (RUN / name).read_bytes()) for name in names]

    def test_a_folder_is_a_run_per_stage_and_one_of_all_stages_with_its_requests(self, tmp_path):
        """As ``specviz ingest`` and the Explorer's folder upload read it: the per-request report
        first (name order), then the stages, then the summary, which is not stored again, and last
        the stages' benchmark reports, whose p99s the stages' runs take."""
        store = Store(tmp_path / "s.duckdb")
        results = [store.import_path(path) for path in importers.folder_files(RUN).files]
        assert [r.status for r in results] == ["imported", "imported", "imported", "skipped", "skipped", "skipped"]
        (notice,) = results[3].warnings
        assert notice.key == "warn.summary_repeated" and notice.params["other"] == str(RUN / self.PER_REQUEST)
        assert [(n.key, n.params["other"]) for r in results[4:] for n in r.warnings] == [
            ("warn.report_figures_given", str(RUN / f"stage_{stage}_lifecycle_metrics.json")) for stage in (0, 1)]
        runs = store.runs()
        assert sorted((json.loads(extra)["stage"] for extra in runs.extra), key=str) == [0, 1, "all"]
        summary = store.query("SELECT count(*) AS n FROM requests JOIN runs USING (run_id) "
                              "WHERE runs.extra->>'stage' = 'all'").frame
        assert summary.n.tolist() == [6]
        store.close()

    @pytest.mark.parametrize("first, second, key", [(PER_REQUEST, SUMMARY, "warn.summary_repeated"),
                                                    (SUMMARY, PER_REQUEST, "warn.summary_replaced")])
    def test_either_order_stores_the_per_request_reports_run_once(self, tmp_path, first, second, key):
        store = Store(tmp_path / "s.duckdb")
        _, later = self.imported(store, first, second)
        assert [(n.key, n.params["other"], n.params["runs"]) for n in later.warnings] == [
            (key, f"{RUN.name}/{first}", f"{RUN.name} · all stages")]
        (run,) = store.run_rows(store.runs().run_id)
        assert run["source_file"] == f"{RUN.name}/{self.PER_REQUEST}" and json.loads(run["extra"])["report"] == "per_request"
        assert store.imports().source_file.tolist() == [f"{RUN.name}/{self.PER_REQUEST}"]
        assert store.query("SELECT count(*) AS n FROM requests").frame.n.tolist() == [6]
        # Hand-checked against summary_lifecycle_metrics.json: successes.count 5, failures.count 1,
        # benchmark_time_seconds 12.0, request_latency.mean 1.2 s, time_to_first_token.p90 0.15740 s.
        assert (run["num_requests"], run["failed_requests"], run["duration_s"]) == (5, 1, 12.0)
        assert round(run["mean_e2el_ms"], 9) == 1200.0 and round(run["p90_ttft_ms"], 4) == 157.4026
        store.close()

    def test_without_the_folder_in_one_name_still_one_run(self, tmp_path):
        """The label is the folder the file came from, not the run: uploaded on its own, a file has none."""
        store = Store(tmp_path / "s.duckdb")
        self.imported(store, self.SUMMARY)
        (later,) = self.imported(store, self.PER_REQUEST, folder="")
        assert [n.key for n in later.warnings] == ["warn.summary_replaced"] and len(store.runs()) == 1
        store.close()

    @pytest.mark.parametrize("name, requests", [(SUMMARY, 0), (PER_REQUEST, 6)])
    def test_a_file_alone_is_its_run(self, tmp_path, name, requests):
        store = Store(tmp_path / "s.duckdb")
        (result,) = self.imported(store, name)
        assert (result.status, result.runs, result.requests, result.warnings) == ("imported", 1, requests, [])
        store.close()

    def test_once_the_per_request_report_is_removed_the_summary_is_stored_again(self, tmp_path):
        store = Store(tmp_path / "s.duckdb")
        _, per_request = self.imported(store, self.SUMMARY, self.PER_REQUEST)
        assert store.remove_import(per_request.content_hash) == 1 and store.runs().empty
        (summary,) = self.imported(store, self.SUMMARY)
        assert (summary.status, summary.runs, summary.warnings) == ("imported", 1, [])
        store.close()

    def test_a_summary_of_other_requests_stays_a_run_of_its_own(self, tmp_path):
        """One request fewer: the count and the span differ from the per-request report's."""
        doc = json.loads((RUN / self.SUMMARY).read_text())
        doc["successes"]["count"] = 4
        store = Store(tmp_path / "s.duckdb")
        self.imported(store, self.PER_REQUEST)
        result = store.import_file(f"{RUN.name}/{self.SUMMARY}", json.dumps(doc).encode())
        assert (result.status, result.warnings) == ("imported", []) and len(store.runs()) == 2
        store.close()


def one_stage(folder: Path) -> dict[str, Path]:
    """A run of one stage, trimmed from the two-stage run as inference-perf would have written it:
    stage 0's report as it is; its four requests, the first four records (stage 0's count, 3
    successes and 1 failure); and the summary, ``summarize_requests`` of the same list without the
    stage's rate, which is the stage's report without ``send_duration``, ``requested_rate`` and
    ``achieved_rate`` (``generate_reports`` in ``inference_perf/reportgen/base.py``)."""
    folder.mkdir(parents=True)
    stage = json.loads((RUN / "stage_0_lifecycle_metrics.json").read_text())
    summary = json.loads(json.dumps(stage))
    for key in ("send_duration", "requested_rate", "achieved_rate"):
        del summary["load_summary"][key]
    records = json.loads((RUN / "per_request_lifecycle_metrics.json").read_text())[:4]
    files = {"stage": folder / "stage_0_lifecycle_metrics.json", "summary": folder / "summary_lifecycle_metrics.json",
             "per_request": folder / "per_request_lifecycle_metrics.json"}
    for (_, path), doc in zip(files.items(), (stage, summary, records)):
        path.write_text(json.dumps(doc, indent=2))
    return files


# Every order of the stage report and one or both of the others.
ORDERS = [order for n in (2, 3) for order in itertools.permutations(("stage", "summary", "per_request"), n)
          if "stage" in order]


class TestARunOfOneStage:
    """A run of one stage: inference-perf writes its stage report, its summary and its per-request
    report from the same requests. Stored once, as the per-request report's run with the stage's
    rate, in any order (each file was a run of its own: 2 runs for the stage and either other, 2 for
    all three)."""

    @staticmethod
    def imported(tmp_path, order) -> tuple[Store, list, dict[str, Path]]:
        files = one_stage(tmp_path / "one")
        store = Store(tmp_path / "s.duckdb")
        return store, [store.import_file(f"one/{files[report].name}", files[report].read_bytes()) for report in order], {
            report: f"one/{path.name}" for report, path in files.items()}

    @pytest.mark.parametrize("order", ORDERS, ids="-".join)
    def test_one_run_with_the_stages_load_and_the_requests(self, tmp_path, order):
        store, _, files = self.imported(tmp_path, order)
        (run,) = store.run_rows(store.runs().run_id)
        kept = "per_request" if "per_request" in order else "stage"
        assert run["source_file"] == files[kept] and store.imports().source_file.tolist() == [files[kept]]
        assert int(store.request_summary().requests.sum()) == (4 if kept == "per_request" else 0)
        extra = json.loads(run["extra"])
        assert (run["label"], run["request_rate"], extra["stage"]) == ("one", 1.0, 0)
        # Hand-checked against stage_0_lifecycle_metrics.json: successes.count 3, failures.count 1,
        # benchmark_time_seconds 2.2, request_latency.mean 1.1667 s.
        assert (run["num_requests"], run["failed_requests"], round(run["duration_s"], 9)) == (3, 1, 2.2)
        assert round(run["mean_e2el_ms"], 6) == 1166.666667
        if kept == "per_request":
            assert extra["load_from"] == files["stage"] and extra["report"] == "per_request"
            assert extra["achieved_rate"] == 2.6666666666666665
        store.close()

    @pytest.mark.parametrize("order", [order for order in ORDERS if len(order) == 3], ids="-".join)
    def test_the_same_run_and_import_whichever_came_first(self, tmp_path, order):
        store, _, _ = self.imported(tmp_path, order)
        (run,) = store.run_rows(store.runs().run_id)
        stored = (run["run_id"], run["label"], run["request_rate"], json.loads(run["extra"]))
        (warnings,) = store.imports().warnings
        first, _, _ = self.imported(tmp_path / "again", ("per_request", "stage", "summary"))
        (again,) = first.run_rows(first.runs().run_id)
        assert stored == (again["run_id"], again["label"], again["request_rate"], json.loads(again["extra"]))
        # The import tells where its run's load is from (and, where it replaced the summary, that too),
        # and which files were not stored for its run (store.held_for: named where it is removed).
        taken = {"key": "warn.stage_load_taken", "params": {"other": "one/stage_0_lifecycle_metrics.json", "runs": "one"}}
        held = lambda said: [w for w in json.loads(said) if w["key"] == "store.held_for"]
        assert taken in json.loads(warnings) and json.loads(first.imports().warnings[0]) == [taken, *held(
            first.imports().warnings[0])]
        assert {w["params"]["file"] for w in held(first.imports().warnings[0])} == {
            "one/stage_0_lifecycle_metrics.json", "one/summary_lifecycle_metrics.json"}
        store.close()
        first.close()

    @pytest.mark.parametrize("first, second, key, status", [
        ("stage", "summary", "warn.summary_of_stage", "skipped"),
        ("summary", "stage", "warn.stage_replaced_summary", "imported"),
        ("per_request", "stage", "warn.stage_load_given", "skipped"),
        ("stage", "per_request", "warn.stage_load_taken", "imported")])
    def test_the_warning_names_the_file_not_stored_again(self, tmp_path, first, second, key, status):
        """The file of the result where it is skipped; otherwise the file whose run it replaced."""
        store, (_, later), files = self.imported(tmp_path, (first, second))
        (notice,) = later.warnings
        assert (later.status, notice.key, notice.params["other"], notice.params["runs"]) == (
            status, key, files[first], "one")
        assert files[first] in str(notice)
        store.close()

    def test_the_page_sees_the_load_given_to_a_stored_run(self, tmp_path):
        """The per-request report's run stored first and read, then the stage's load given to it:
        the page's kept read is read again."""
        store, _, files = self.imported(tmp_path, ("per_request",))
        assert np.isnan(store.shown_runs().frame.request_rate.iloc[0])
        store.import_file(files["stage"], (tmp_path / files["stage"]).read_bytes())
        assert store.shown_runs().frame.request_rate.tolist() == [1.0]
        store.close()

    def test_a_folder_is_one_run(self, tmp_path):
        files = one_stage(tmp_path / "one")
        store = Store(tmp_path / "s.duckdb")
        results = [store.import_path(path) for path in importers.folder_files(tmp_path / "one").files]
        assert [r.status for r in results] == ["imported", "skipped", "skipped"]
        (run,) = store.run_rows(store.runs().run_id)
        assert (run["source_file"], run["request_rate"]) == (str(files["per_request"]), 1.0)
        assert int(store.request_summary().requests.sum()) == 4
        store.close()

    def test_once_the_per_request_report_is_removed_the_stage_is_stored_again(self, tmp_path):
        store, (per_request, _), files = self.imported(tmp_path, ("per_request", "stage"))
        assert store.remove_import(per_request.content_hash) == 1 and store.runs().empty
        again = store.import_file(files["stage"], (tmp_path / files["stage"]).read_bytes())
        assert (again.status, again.runs, again.warnings) == ("imported", 1, [])
        store.close()

    def test_a_stage_of_a_run_of_two_is_its_own_run(self, tmp_path):
        """Stage 0 of the two-stage run is of 4 of its 6 requests: a run of its own beside the
        per-request report's, whichever came first."""
        store = Store(tmp_path / "s.duckdb")
        for name in ("stage_0_lifecycle_metrics.json", TestTheSummaryAndThePerRequestReportAreOneRun.PER_REQUEST,
                     "stage_1_lifecycle_metrics.json"):
            assert store.import_file(f"{RUN.name}/{name}", (RUN / name).read_bytes()).warnings == []
        assert len(store.runs()) == 3 and int(store.request_summary().requests.sum()) == 6
        store.close()


class TestValidationReport:
    """inference-perf's validation.json: its findings on its own reports, no result."""

    def test_a_folder_leaves_it_out_saying_what_it_is(self):
        """Before, the folder's import refused it as a file of no known format."""
        found = importers.folder_files(RUN)
        assert RUN / "validation.json" not in found.files
        assert found.left_out[RUN / "validation.json"] == importers.LeftOut("validation")
        said = i18n.t("exp.left_out.validation", "en", file="validation.json")
        assert said.startswith("validation.json: not read: inference-perf's check of its own reports")

    def test_only_beside_inference_perfs_reports(self):
        assert importers.select_files([Path("a/validation.json"), Path("a/x.json")]).files == [
            Path("a/validation.json"), Path("a/x.json")]

    def test_alone_it_is_refused_as_what_it_is(self):
        with pytest.raises(importers.IngestError) as info:
            importers.parse("validation.json", (RUN / "validation.json").read_bytes())
        assert info.value.key == "ingest.inference_perf_validation"
        assert "inference-perf's validation.json" in str(info.value)

    def test_another_object_of_those_keys_is_still_unknown(self):
        with pytest.raises(importers.IngestError) as info:
            importers.parse("v.json", json.dumps({"global": 1, "reports": {}}).encode())
        assert info.value.key == "ingest.unknown_format"


class TestPrometheusReport:
    """tests/fixtures/inference_perf_stage_0_prometheus_metrics.json: the shape of v0.5.0's
    ``summarize_prometheus_metrics``, its figures made up."""

    def test_the_servers_figures_in_milliseconds(self):
        data = (ROOT / "tests" / "fixtures" / "inference_perf_stage_0_prometheus_metrics.json").read_bytes()
        result = importers.parse("run1/stage_0_prometheus_metrics.json", data)
        (run,) = result.runs
        assert result.format == "inference-perf" and not result.warnings
        assert run["label"] == "run1 · Prometheus" and "duration_s" not in run  # its benchmark_time_seconds is 0
        # TTFT mean 0.085 s, request latency p99 3.9 s, ITL median 0.0175 s
        assert (round(run["mean_ttft_ms"], 9), round(run["p99_e2el_ms"], 9), round(run["p50_itl_ms"], 9)) == (85.0, 3900.0, 17.5)
        # 120 requests at 2.0 req/s; 1,024 prompt + 256 output tokens/s
        assert (run["num_requests"], run["request_throughput"], run["total_token_throughput"]) == (120, 2.0, 1280.0)
        extra = json.loads(run["extra"])
        assert extra["stage"] == 0 and extra["report"] == "prometheus"
        assert extra["kv_cache_usage_percentage"]["p90"] == 0.2 and extra["prefix_cache_hit_percent"] == {"mean": 12.5}

    def test_its_summary_is_all_stages(self):
        data = (ROOT / "tests" / "fixtures" / "inference_perf_stage_0_prometheus_metrics.json").read_bytes()
        run = importers.parse("run1/summary_prometheus_metrics.json", data).runs[0]
        assert run["label"] == "run1 · Prometheus · all stages" and json.loads(run["extra"])["stage"] == "all"
