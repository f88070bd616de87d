"""Tests for specviz.results.store: a real DuckDB file, imports that are whole or nothing, and the sandbox."""

import csv
import hashlib
import io
import codecs
import json
import math
import os
import random
import signal
import subprocess
import sys
import textwrap
import tempfile
import threading
import time
from datetime import datetime, timedelta
from pathlib import Path

import duckdb
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st, HealthCheck

from conftest import APP, PAGES, finished_requests
from specviz import i18n
from specviz.errors import Notice, SpecvizError
from specviz.live import exposition as prom
from specviz.results import explorer, importers, store
from specviz.results.schema import SNAPSHOT_COLUMNS, WINDOW_COLUMNS
from specviz.results.store import Store, StoreError, connection, csv_import, repeats

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT.parent / "shared" / "samples"
FIXTURES = ROOT / "tests" / "fixtures"
SAMPLE_FILES = ["vllm_bench_nerdalert.jsonl", "guidellm_benchmarks.json", "profile_export_genai_perf.csv",
                "llmperf_Yi-1-5-34B_550_150_summary.json"]


@pytest.fixture
def db(tmp_path):
    s = Store(tmp_path / "specviz.duckdb")
    yield s
    s.close()


def counts(s: Store) -> tuple[int, int, int]:
    return len(s.runs()), len(s.imports()), int(s.request_summary().requests.sum())


def in_vietnamese(error: SpecvizError, english: str, key: str) -> bool:
    """Whether ``error`` says in English the words ``english`` that in Vietnamese are the message
    ``key``'s (and not the English ones)."""
    vietnamese = i18n.t(error.key, "vi", **error.params)
    return english in str(error) and english not in vietnamese and i18n.t(key, "vi") in vietnamese


def in_child(tmp_path: Path, work: str, setup: str = "") -> str:
    """Run ``work`` (code using ``store``, a new Store, and what ``setup`` made) in a child process:
    what it prints, then the growth of the child's peak memory (VmHWM) over ``work`` and the most
    the import estimated."""
    child = textwrap.dedent(f"""
        import re, sys
        from pathlib import Path
        sys.path.insert(0, {str(ROOT)!r})
        from specviz.results.importers import source
        from specviz.results.importers.base import IngestError
        from specviz.results.store import Store

        def peak():  # VmHWM starts afresh at exec; ru_maxrss would carry the parent's peak over
            return int(re.search(r"VmHWM:\\s+(\\d+) kB", open("/proc/self/status").read())[1]) * 1024

        estimates = [0]
        check = source.Source.fits
        def record(source, more):
            estimates.append(source.estimate + more)
            check(source, more)
        source.Source.fits = record
        store = Store({str(tmp_path / "child.duckdb")!r})
    """) + textwrap.dedent(setup) + "\nbefore = peak()\n" + textwrap.dedent(work)
    child += "\nprint(peak() - before, max(estimates))\n"
    out = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


class TestSchema:
    def test_new_file_has_the_current_version(self, db):
        assert db.schema_version == store.SCHEMA_VERSION

    def test_reopening_keeps_data_and_version(self, tmp_path):
        s = Store(tmp_path / "a.duckdb")
        s.import_file("g.json", (SAMPLES / "guidellm_benchmarks.json").read_bytes())
        s.close()
        again = Store(tmp_path / "a.duckdb")
        assert len(again.runs()) == 1 and again.schema_version == store.SCHEMA_VERSION
        again.close()

    def test_a_file_from_a_newer_specviz_is_refused(self, tmp_path):
        Store(tmp_path / "b.duckdb").close()
        with duckdb.connect(str(tmp_path / "b.duckdb")) as con:
            con.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
        with pytest.raises(StoreError, match="upgrade specviz"):
            Store(tmp_path / "b.duckdb")


class TestImportFile:
    @pytest.mark.parametrize("name, fmt, runs", [("vllm_bench_nerdalert.jsonl", "vllm-bench", 9),
                                                 ("guidellm_benchmarks.json", "guidellm", 1),
                                                 ("profile_export_genai_perf.csv", "genai-perf", 1),
                                                 ("llmperf_Yi-1-5-34B_550_150_summary.json", "llmperf", 1)])
    def test_real_samples(self, db, name, fmt, runs):
        result = db.import_file(name, (SAMPLES / name).read_bytes())
        assert (result.status, result.format, result.runs) == ("imported", fmt, runs)
        stored = db.runs()
        assert len(stored) == runs and set(stored.source_format) == {fmt}
        assert all(json.loads(e) is not None for e in stored.extra)

    def test_same_content_twice_adds_nothing(self, db):
        data = (SAMPLES / "vllm_bench_nerdalert.jsonl").read_bytes()
        db.import_file("a.jsonl", data)
        again = db.import_file("renamed.jsonl", data)
        # Under another name it says which: the runs are listed under a.jsonl, not renamed.jsonl.
        assert (again.status, again.message, again.imported_as) == ("skipped", "already imported as a.jsonl", "a.jsonl")
        same = db.import_file("a.jsonl", data)
        assert (same.status, same.message, same.imported_as) == ("skipped", "already imported", "")
        assert len(db.runs()) == 9

    def test_a_byte_order_mark_is_the_same_content(self, db, tmp_path):
        """A file an editor saved with a UTF-8 byte-order mark holds the same results: skipped, in
        memory and from disk, not imported as new runs."""
        data = (SAMPLES / "profile_export_genai_perf.csv").read_bytes()
        assert not data.startswith(codecs.BOM_UTF8)
        first = db.import_file("a.csv", data)
        again = db.import_file("b.csv", codecs.BOM_UTF8 + data)
        path = tmp_path / "c.csv"
        path.write_bytes(codecs.BOM_UTF8 + data)
        from_disk = db.import_path(path)
        assert (again.status, again.imported_as, from_disk.status) == ("skipped", "a.csv", "skipped")
        assert again.content_hash == from_disk.content_hash == first.content_hash and len(db.runs()) == 1

    def test_spec_decode_run_and_its_requests(self, db):
        result = db.import_file("sd.json", (FIXTURES / "vllm_bench_spec_decode.json").read_bytes())
        assert result.requests == 3
        run = db.runs().iloc[0]
        assert run.acceptance_rate == pytest.approx(0.615) and list(run.per_position_acceptance) == [0.82, 0.64, 0.55, 0.45]
        summary = db.request_summary()
        assert summary.requests[0] == 3 and summary.p50_ttft_ms[0] == pytest.approx(56.5)

    @pytest.mark.parametrize("data, message", [
        (b"", "empty"), (b"\x00\x01\x02", "binary"), (b'{"request_throughput": ', "looks cut short"),
        (b"a,b,c\n1,2,3\n", "no recognisable result columns"), (b"concurrency,ttft_ms\n", "no rows"),
        (b'{"benchmarks": [{"metrics": {"x": 1}}]}', "ingest.guidellm_schema"),
    ])
    def test_refusals_write_nothing(self, db, data, message):
        with pytest.raises(importers.IngestError) as info:
            db.import_file("bad.file", data)
        assert refused_for(info.value, message)
        assert counts(db) == (0, 0, 0)

    def test_upload_limit(self, db):
        with pytest.raises(importers.IngestError, match=r"upload limit \(SPECVIZ_MAX_UPLOAD_BYTES\)"):
            db.import_file("big.json", b"x" * 101, max_bytes=100)

    @pytest.mark.parametrize("failure, raised", [(RuntimeError("disk full"), importers.IngestError),
                                                 (KeyboardInterrupt(), KeyboardInterrupt)])
    def test_failure_mid_import_rolls_back(self, db, monkeypatch, failure, raised):
        """Any exception is the file's error, except KeyboardInterrupt and SystemExit, which go on."""
        original = Store._insert_parsed

        def insert_then_fail(self, *args):
            original(self, *args)
            raise failure

        monkeypatch.setattr(Store, "_insert_parsed", insert_then_fail)
        with pytest.raises(raised) as info:
            db.import_file("sd.json", (FIXTURES / "vllm_bench_spec_decode.json").read_bytes())
        assert counts(db) == (0, 0, 0)
        assert raised is KeyboardInterrupt or str(info.value) == "sd.json: it could not be imported (RuntimeError: disk full)"

    def test_two_threads_import_at_once(self, db):
        files = [(SAMPLES / n).read_bytes() for n in SAMPLE_FILES] * 2  # each file twice
        results = []
        threads = [threading.Thread(target=lambda d=d, i=i: results.append(db.import_file(f"f{i}", d)))
                   for i, d in enumerate(files)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(r.status for r in results) == ["imported"] * 4 + ["skipped"] * 4
        assert len(db.runs()) == 12 and len(db.imports()) == 4


class TestCsvImport:
    def test_runs_csv_with_synonyms_units_and_extra(self, db):
        data = (b"model,concurrency,output tok/s,p99 ITL (ms),median_ttft_s,acceptance rate,notes\n"
                b"Qwen3-32B,1,55.5,20,0.25,71,first\nQwen3-32B,8,300,\"1,200\",0.5,65,second\n")
        result = db.import_file("mine.csv", data)
        runs = db.runs()
        assert result.runs == 2 and list(runs.concurrency) == [1, 8]
        assert list(runs.p99_itl_ms) == [20, 1200] and list(runs.p50_ttft_ms) == [250, 500]
        assert list(runs.acceptance_rate) == [0.71, 0.65]
        assert json.loads(runs.extra[0]) == {"notes": "first"}
        assert any(w.key == "warn.csv_percent_rows" for w in result.warnings)

    def test_acceptance_no_run_can_have_is_left_empty_and_kept_in_extra(self, db):
        """An attack pass: a rate of 150 (1.5 once read as a percentage) and 1e6, a zero-accept share of
        200, and acceptance lengths of 9 at γ 3 and 0.2 had been stored as they were."""
        result = db.import_file("ar.csv", b"label,num_speculative_tokens,acceptance_rate,zero_accept_rate,acceptance_length\n"
                                          b"Y1,3,150,200,9\nY2,3,1000000,17.5,0.2\nY3,3,0.7,0.1,3.1\nY4,,70,0.1,7\n")
        runs = db.runs().set_index("label").sort_index()
        assert runs.acceptance_rate.tolist()[2:] == [0.7, 0.7] and runs.acceptance_rate[:2].isna().all()
        assert runs.zero_accept_rate.fillna(-1).tolist() == [-1, 0.175, 0.1, 0.1]
        assert runs.acceptance_length.fillna(-1).tolist() == [-1, -1, 3.1, 7.0]  # no γ, no bound above
        assert json.loads(runs.extra["Y1"]) == {"acceptance_rate": 150, "zero_accept_rate": 200, "acceptance_length": 9}
        assert json.loads(runs.extra["Y2"]) == {"acceptance_rate": 1e6, "acceptance_length": 0.2}
        said = {w.key: w.params for w in result.warnings}
        assert said["warn.csv_impossible.fraction"] == {"rows": 1, "column": "zero_accept_rate"}
        assert said["warn.csv_impossible.length"] == {"rows": 2, "column": "acceptance_length"}
        assert [w.params for w in result.warnings if w.key == "warn.csv_impossible.fraction"][0] == {
            "rows": 2, "column": "acceptance_rate"}

    def test_figures_a_run_contradicts_itself_with_are_said_as_in_any_other_file(self, db):
        """The CSV path reads through DuckDB, not the importers' RunBuilder, and had said neither (an
        attack pass): the first run of each kind is said, and every figure is stored as given."""
        result = db.import_file("said.csv", b"label,request_throughput,duration_s,num_requests,mean_e2el_ms,mean_ttft_ms,mean_tpot_ms\n"
                                            b"ok,10,10,100,500,20,4\nrate,100,10,50,500,20,4\nlate,10,10,100,10,20,1\n"
                                            b"late2,10,10,100,36.9,36.9,36.9\n")
        said = {w.key: w.params for w in result.warnings}
        assert said["warn.throughput_disagrees"]["rate"] == "100.00"
        assert said["warn.latency_disagrees"] == {"field": "mean_e2el_ms", "e2el": "10.00", "ttft": "20.00", "tpot": "1.00"}
        assert [w.key for w in result.warnings].count("warn.latency_disagrees") == 1
        assert db.runs().set_index("label").mean_e2el_ms["late"] == 10

    def test_out_of_range_whole_numbers_become_empty(self, db):
        db.import_file("big.csv", b"concurrency,gamma,output_throughput\n4,2147483648,10\n4,2.5,11\n4,3,12\n")
        gammas = db.runs().num_speculative_tokens
        assert gammas.isna().tolist() == [True, True, False] and gammas.iloc[2] == 3

    def test_user_mapping_for_unknown_names(self, db):
        data = b"conc,tput\n4,100\n"
        with pytest.raises(importers.IngestError, match="no recognisable"):
            db.import_file("raw.csv", data)
        db.import_file("raw.csv", data, csv_mapping={"conc": "concurrency", "tput": "output_throughput"})
        assert db.runs().output_throughput[0] == 100

    @pytest.mark.parametrize("reserved", ["run_id", "source_file", "source_format", "imported_at", "content_hash",
                                          "extra"])
    def test_a_mapping_to_a_column_the_store_fills_is_refused(self, db, reserved, monkeypatch, tmp_path):
        """Refused before the file is read (DuckDB once failed mid-import on the column given twice)."""
        monkeypatch.setattr(importers, "parse", lambda *args: pytest.fail("the file was read"))
        mapping = {"conc": "concurrency", "tput": "output_throughput", "h": reserved}
        with pytest.raises(importers.IngestError) as info:
            db.import_file("raw.csv", b"conc,tput,h\n4,100,x\n", csv_mapping=mapping)
        assert info.value.key == "ingest.csv_mapping_reserved" and info.value.params["field"] == reserved
        assert str(info.value) == (f"raw.csv: {reserved} is filled in by specviz itself; "
                                   "map 'h' to a measured field or leave it out")
        (tmp_path / "raw.csv").write_bytes(b"conc,tput,h\n4,100,x\n")
        with pytest.raises(importers.IngestError, match="filled in by specviz"):
            db.import_path(tmp_path / "raw.csv", csv_mapping=mapping)
        assert counts(db) == (0, 0, 0)

    @pytest.mark.parametrize("per_request", [False, True], ids=["runs", "requests"])
    def test_text_in_a_column_mapped_to_a_number_is_reported(self, db, per_request):
        """Cells that are not numbers are stored empty, and each such column says how many."""
        if per_request:
            data = b"nclients2,lat,tps2\nabc,12,fast\n4,13,slow\n4,14,9\n"
            mapping = {"nclients2": "concurrency", "lat": "request:ttft_ms", "tps2": "request:output_tokens"}
        else:
            data = b"nclients2,tps2\nabc,fast\n"
            mapping = {"nclients2": "concurrency", "tps2": "output_throughput"}
        result = db.import_file("mine.csv", data, csv_mapping=mapping)
        dropped = [w for w in result.warnings if w.key == "warn.csv_not_numbers"]
        if per_request:
            assert [w.params for w in dropped] == [
                {"column": "nclients2", "field": "concurrency", "rows": 1, "example": "'abc'"},
                {"column": "tps2", "field": "output_tokens", "rows": 2, "example": "'fast'"}]
        else:
            assert [w.params for w in dropped] == [
                {"column": "nclients2", "field": "concurrency", "rows": 1, "example": "'abc'"},
                {"column": "tps2", "field": "output_throughput", "rows": 1, "example": "'fast'"}]
            assert db.runs()[["concurrency", "output_throughput"]].isna().all(axis=None)
            assert str(dropped[1]) == ("'tps2' (mapped to output_throughput): cells that are not numbers were left "
                                       "empty: 1, such as 'fast'")
        stored = json.loads(db.imports().warnings[0])
        assert sum(w["key"] == "warn.csv_not_numbers" for w in stored) == 2

    @pytest.mark.parametrize("data, line, fields", [
        (b"concurrency,output_throughput,mean_tpot_ms\n" + b"1,100,5\n" * 8 + b"4,40", 10, 2),  # a file cut short
        (b"concurrency,output_throughput,mean_tpot_ms\n1,100,5\n2,200,6,7,8\n" + b"4,400,7\n" * 8, 3, 5),
        (b"concurrency,output_throughput,mean_tpot_ms\n" + b"".join(b"%d,%d,5\n" % (i, i) for i in range(1, 30_000))
         + b"7,8\n", 30_001, 2),  # past what DuckDB's sniffer samples
    ], ids=["last line cut", "a line with more fields", "deep in the file"])
    def test_a_line_of_other_fields_than_the_header_is_named(self, db, data, line, fields):
        """A file cut short was read by DuckDB's sniffer as one column named after the whole header
        line, and refused as having no result columns (the page offered to map that one column)."""
        with pytest.raises(importers.IngestError) as info:
            db.import_file("cut.csv", data)
        assert info.value.key == "ingest.csv_ragged"
        assert info.value.params == {"file": "cut.csv", "line": line, "fields": fields, "columns": 3}
        assert str(info.value).startswith(f"cut.csv: line {line:,} has {fields} fields where the header has 3")
        assert counts(db) == (0, 0, 0)

    def test_a_line_longer_than_duckdb_reads_is_named(self, db):
        """A 3 MB field on line 2 (a file well within the upload limit) had been refused in DuckDB's
        words, naming line 1 (an attack pass)."""
        with pytest.raises(importers.IngestError) as info:
            db.import_file("long.csv", b"label,ttft_ms,note\nA,10," + b"y" * 3_000_000 + b"\nB,11,z\n")
        assert info.value.key == "ingest.csv_line_too_long" and info.value.params == {
            "file": "long.csv", "line": 2, "most": "2 MiB"}
        assert counts(db) == (0, 0, 0)

    @pytest.mark.parametrize("per_request", [False, True], ids=["runs", "requests"])
    def test_a_second_table_below_the_first_is_refused_whole(self, db, per_request):
        """30 runs under a first header and 5 under a second of four columns: DuckDB's sniffer took the
        second header, skipped the 31 lines before it and stored the 5 runs alone, without a word (an
        attack pass). Refused, naming the line it would have started from; a blank line before the
        header is no second table."""
        first = b"label,concurrency,mean_tpot_ms\n" if not per_request else b"concurrency,latency_ms,output_tokens\n"
        rows = b"".join(b"r%d,%d,5\n" % (i, i) for i in range(1, 31)) if not per_request else b"4,12,10\n" * 30
        second = b"label,concurrency,mean_tpot_ms,gpu\n" + b"s,2,6,H100\n" * 5
        with pytest.raises(importers.IngestError) as info:
            db.import_file("two.csv", first + rows + second)
        assert info.value.key == "ingest.csv_not_one_table" and info.value.params == {"file": "two.csv", "line": 32}
        assert str(info.value).startswith("two.csv: its rows are not one table under its first line: DuckDB would "
                                          "read them from line 32 on")
        assert counts(db) == (0, 0, 0)
        assert db.import_file("blank.csv", b"\n" + first + rows).runs == (30 if not per_request else 1)
        # A line of a blank alone before the header is blank too, and a header cell quoted over two
        # lines starts the header on the first (a review: both had been refused).
        assert db.import_file("space.csv", b" \n" + first + rows + b"\n").runs == (30 if not per_request else 1)
        two_lines = b'"label\n(name)",concurrency,mean_tpot_ms\nA,1,5\nB,2,6\n'
        assert db.import_file("quoted.csv", two_lines).runs == 2

    @pytest.mark.parametrize("per_request", [False, True], ids=["runs", "requests"])
    def test_numbers_a_field_cannot_hold_are_reported(self, db, per_request):
        """A negative, infinite or fractional count was stored empty without a word (the JSON
        importers say each); in a column DuckDB typed as numbers or as text alike."""
        if per_request:
            data = b"concurrency,lat,toks\n4,-12,10\n4,13,x\n8,1e400,20\n"
            mapping = {"lat": "request:ttft_ms", "toks": "request:output_tokens"}
            expected = [("warn.csv_not_numbers", "toks", 1, "'x'"), ("warn.csv_out_of_range", "lat", 2, "'-12.0'")]
        else:
            data = (b"concurrency,num_speculative_tokens,output_throughput,mean_tpot_ms\n"
                    b"1,2.5,-139.8,7\n4,3,100,inf\n8,3,200,9\n")
            expected = [("warn.csv_out_of_range", "num_speculative_tokens", 1, "'2.5'"),
                        ("warn.csv_out_of_range", "output_throughput", 1, "'-139.8'"),
                        ("warn.csv_out_of_range", "mean_tpot_ms", 1, "'inf'")]
            mapping = {}
        result = db.import_file("mine.csv", data, csv_mapping=mapping)
        said = sorted((w.key, w.params["column"], w.params["rows"], w.params["example"]) for w in result.warnings
                      if w.key in ("warn.csv_not_numbers", "warn.csv_out_of_range"))
        assert said == sorted(expected)
        if not per_request:
            assert db.runs()[["num_speculative_tokens", "output_throughput", "mean_tpot_ms"]].isna().sum().tolist() == [1, 1, 1]
            assert str(next(w for w in result.warnings if w.params.get("column") == "output_throughput")) == (
                "'output_throughput' (mapped to output_throughput): numbers it cannot hold (below 0, not finite, "
                "not whole for a count, or more requests at once than 10,000,000) were left empty: 1, such as '-139.8'")

    @pytest.mark.parametrize("data", [b"concurrency,tput\n4,100\n8,\n", b"concurrency,tput\n4,\"1,100\"\n"],
                             ids=["numbers and an empty cell", "thousands separators"])
    def test_numbers_give_no_such_warning(self, db, data):
        result = db.import_file("clean.csv", data, csv_mapping={"tput": "output_throughput"})
        assert result.runs > 0 and not any(w.key in ("warn.csv_not_numbers", "warn.csv_out_of_range")
                                           for w in result.warnings)

    def test_unmatched_columns_are_reported_and_can_be_mapped_on_a_replace(self, db):
        data = b"concurrency,p50_itl_ms,tput,notes\n4,12,100,a\n8,15,180,b\n"
        first = db.import_file("mine.csv", data)
        assert first.unmatched_columns == ["tput", "notes"] and db.runs().output_throughput.isna().all()
        again = db.import_file("mine.csv", data, csv_mapping={"tput": "output_throughput"}, replace=True)
        assert again.status == "imported" and again.unmatched_columns == ["notes"]
        assert db.runs().output_throughput.tolist() == [100, 180] and len(db.imports()) == 1

    def test_a_failed_replace_keeps_the_old_rows(self, db):
        data = b"concurrency,p50_itl_ms,tput\n4,12,100\n"
        db.import_file("mine.csv", data)
        with pytest.raises(importers.IngestError):  # a mapping that leaves no result column
            db.import_file("mine.csv", data, csv_mapping={"p50_itl_ms": "label"}, replace=True)
        assert db.runs().concurrency.tolist() == [4]

    def test_per_request_csv_is_grouped_into_runs(self, db):
        rows = ["workload,concurrency,ttft_ms,itl_ms,output_tokens,request_id"]
        rows += [f"chat,1,{10 + i},{5 + i % 3},100,{i}" for i in range(101)]
        rows += [f"code,8,{100 + i},{9},50,{i}" for i in range(11)]
        result = db.import_file("per_request.csv", "\n".join(rows).encode())
        assert (result.runs, result.requests) == (2, 112)
        runs = db.runs().set_index("workload")
        assert runs.loc["chat", "num_requests"] == 101 and runs.loc["chat", "p50_ttft_ms"] == 60
        assert runs.loc["chat", "p99_ttft_ms"] == pytest.approx(109)  # quantile_cont of 10..110
        assert runs.loc["code", "concurrency"] == 8
        extra = json.loads(db.query("SELECT extra FROM requests LIMIT 1").frame.extra[0])
        assert "request_id" in extra


class TestStoredTextIsBounded:
    """A model name of 50 MB and an extra value of 100 MB were imported whole: a CSV's text fields are
    cut at SPECVIZ_STORED_TEXT_CHARS, its other columns' texts at SPECVIZ_STORED_VALUE_CHARS and a run's
    extra past SPECVIZ_STORED_EXTRA_BYTES is left out, as the JSON formats' (tests/test_importers.py)."""

    @pytest.mark.parametrize("suffix, data", [(".json", (SAMPLES / "llmperf_Yi-1-5-34B_550_150_summary.json").read_bytes()),
                                              (".csv", b"concurrency,output_throughput\n1,2\n")])
    def test_a_file_s_name_is_kept_to_its_last_500_characters(self, db, suffix, data):
        """An attack pass: a name of 1,000,005 characters was stored whole in runs and imports."""
        name = "b" * 1_000_000 + suffix
        result = db.import_file(name, data)
        kept = "…" + name[-499:]
        assert result.file == kept and set(db.runs()["source_file"]) == set(db.imports()["source_file"]) == {kept}

    def test_a_csv_s_text_and_other_columns(self, db, monkeypatch):
        csv = ("workload,concurrency,output_throughput,notes\n" + "w" * 2_000 + ",1,100," + "n" * 10_000
               + "\nshort,2,200,x\n").encode()
        result = db.import_file("t.csv", csv)
        said = [str(w) for w in result.warnings]
        assert "workload: a text longer than 500 characters, cut there (SPECVIZ_STORED_TEXT_CHARS)." in said
        assert "notes: a text longer than 4,096 characters, kept cut there (SPECVIZ_STORED_VALUE_CHARS)." in said
        runs = db.runs().sort_values("concurrency")
        assert runs.workload.tolist() == ["w" * 500, "short"]
        assert [len(json.loads(e)["notes"]) for e in runs.extra] == [4_096, 1]
        monkeypatch.setenv("SPECVIZ_STORED_EXTRA_BYTES", "100")
        result = db.import_file("u.csv", ("workload,concurrency,output_throughput,notes\nw,3,1," + "n" * 300
                                          + "\nv,4,1,x\n").encode())
        assert "extra: 1 value not stored, a run keeping 100 bytes" in " ".join(map(str, result.warnings))
        kept = db.runs().query("source_file == 'u.csv'").sort_values("concurrency").extra.map(json.loads).tolist()
        assert kept == [{"not stored": 312}, {"notes": "x"}]

    def test_a_per_request_csv_s_other_columns(self, db):
        result = db.import_file("req.csv", ("ttft_ms,itl_ms,workload,comment\n1,2,a," + "c" * 5_000
                                            + "\n3,4,a,short\n").encode())
        assert (result.runs, result.requests) == (1, 2)
        assert "comment: a text longer than 4,096 characters, kept cut there" in " ".join(map(str, result.warnings))
        assert sorted(db.query("SELECT length(extra->>'comment') AS n FROM requests").frame.n) == [5, 4_096]


class TestRunsPerImport:
    def test_a_file_of_more_runs_than_the_limit_is_refused_and_writes_nothing(self, db, monkeypatch):
        """A 40 MB per-run CSV of 2M rows made 2M runs, and the Explorer then took 4.75 GB: a file brings
        at most SPECVIZ_IMPORT_MAX_RUNS runs, whatever its format."""
        monkeypatch.setenv("SPECVIZ_IMPORT_MAX_RUNS", "3")
        csv = ("concurrency,output_throughput\n" + "".join(f"{c},{c * 10}\n" for c in range(1, 5))).encode()
        with pytest.raises(importers.IngestError) as refused:
            db.import_file("many.csv", csv)
        assert refused.value.key == "ingest.too_many_runs" and refused.value.params["runs"] == 4
        assert "(SPECVIZ_IMPORT_MAX_RUNS)" in str(refused.value) and counts(db) == (0, 0, 0)
        sweep = (SAMPLES / "vllm_bench_nerdalert.jsonl").read_bytes()  # 9 runs of a JSON format
        with pytest.raises(importers.IngestError) as refused:
            db.import_file("sweep.jsonl", sweep)
        assert refused.value.params["runs"] == 9 and counts(db) == (0, 0, 0)
        monkeypatch.setenv("SPECVIZ_IMPORT_MAX_RUNS", "9")
        assert db.import_file("sweep.jsonl", sweep).runs == 9


class TestShownRuns:
    """A page reads the runs bounded (store/shown.py): a store of 200,000 runs with long names took one
    Explorer session to 2.5 GB when it read them whole."""

    @staticmethod
    def sweep(db: Store, name: str, rows: int, **columns: str) -> None:
        head = ",".join(["concurrency", "output_throughput", *columns])
        body = "".join(",".join([str(c), str(c * 10), *columns.values()]) + "\n" for c in range(1, rows + 1))
        db.import_file(name, f"{head}\n{body}".encode())

    def test_the_newest_runs_that_match_oldest_first(self, db, monkeypatch):
        monkeypatch.setenv("SPECVIZ_SHOWN_MAX_RUNS", "3")
        self.sweep(db, "old.csv", 2, workload="chat")
        time.sleep(0.01)  # a later import_at
        self.sweep(db, "new.csv", 2, workload="code")
        read = db.shown_runs()
        assert (read.matching, read.limit, read.cut) == (4, 3, True)
        assert list(zip(read.frame.source_file, read.frame.concurrency)) == [
            ("old.csv", 1.0), ("new.csv", 1.0), ("new.csv", 2.0)]
        # The filter is the store's: it reaches the run the limit left out.
        read = db.shown_runs({"workload": ["chat"], "concurrency": []})
        assert (read.matching, read.cut, list(read.frame.concurrency)) == (2, False, [1.0, 2.0])
        assert db.shown_runs({"workload": ["nothing"]}).matching == 0

    def test_a_filter_value_is_a_value_and_a_column_must_be_a_run_column(self, db):
        self.sweep(db, "a.csv", 1, workload="x' OR '1'='1")
        assert db.shown_runs({"workload": ["x' OR '1'='1"]}).matching == 1
        assert db.shown_runs({"workload": ["' OR 1=1 --"]}).matching == 0
        with pytest.raises(ValueError, match="not a run column"):
            db.shown_runs({"1=1; DROP TABLE runs; --": ["a"]})
        assert counts(db) == (1, 1, 0)

    def test_texts_cut_for_display_and_extra_reduced_to_its_fields(self, db, monkeypatch):
        monkeypatch.setenv("SPECVIZ_SHOWN_TEXT_CHARS", "10")
        monkeypatch.setenv("SPECVIZ_SHOWN_EXTRA_CHARS", "40")
        self.sweep(db, "long-name-of-a-file.csv", 1, target_model="m" * 400, b_note="n" * 50, a_note="short",
                   c_note="dropped")
        run = db.shown_runs().frame.iloc[0]
        assert run.target_model == "m" * 9 + "…" and run.source_file == "long-name…"
        assert len(run.run_id) > 10 and run.run_id == db.runs().run_id[0]  # identities are whole
        assert json.loads(run.extra) == {"a_note": "short", "b_note": "n" * 9 + "…"}
        assert db.runs().target_model[0] == "m" * 400  # what is stored is whole
        # A filter offers the cut value, and choosing it finds the run.
        assert db.filter_values(["target_model"], "user")["target_model"].values == ("m" * 9 + "…",)
        assert db.shown_runs({"target_model": ["m" * 9 + "…"]}).matching == 1

    def test_extra_loses_its_lists(self, db):
        db.import_file("s.jsonl", (SAMPLES / "sglang_bench_serving_c8.jsonl").read_bytes())
        stored, shown = db.runs().extra[0], db.shown_runs().frame.extra[0]
        assert len(stored) == 18_937 and len(shown) < 14_000  # its lists are left out, all 325 fields kept
        assert json.loads(shown) == explorer.extra.scalar_fields(stored)

    def test_filter_values_are_sorted_and_say_when_there_are_more(self, db, monkeypatch):
        monkeypatch.setenv("SPECVIZ_FILTER_MAX_VALUES", "3")
        self.sweep(db, "a.csv", 5)
        offered = db.filter_values(["concurrency", "engine"], "user")
        # Whole, as a user set them: the list read "1.0, 2.0, …" (Chromium); the choice matches the run.
        assert offered["concurrency"] == store.FilterValues((1, 2, 3), more=True)
        assert [type(v) for v in offered["concurrency"].values] == [int] * 3
        assert db.shown_runs({"concurrency": [2]}).frame.concurrency.tolist() == [2.0]
        assert offered["engine"] == store.FilterValues((), more=False)

    def test_the_runs_without_a_value_are_offered_first_and_found(self, db):
        self.sweep(db, "a.csv", 3)
        self.sweep(db, "b.csv", 2, engine="vllm")
        assert db.filter_values(["engine"], "user")["engine"].values == (None, "vllm")
        assert db.shown_runs({"engine": [None]}).matching == 3
        assert db.shown_runs({"engine": [None, "vllm"]}).matching == 5
        assert db.shown_runs({"engine": ["vllm"]}).matching == 2

    def test_filter_values_are_those_of_one_origin(self, db):
        # With the shipped examples hidden, the lists offered their workloads, engine and labels.
        db.seed_examples(sorted(EXAMPLES.glob("*.csv")))
        self.sweep(db, "a.csv", 2, workload="mine")
        assert db.filter_values(["workload"], "user")["workload"].values == ("mine",)
        examples = db.filter_values(["workload", "engine"], "example")
        assert "mine" not in examples["workload"].values and "synthetic" in examples["engine"].values

    def test_one_read_shared_by_every_caller_and_bounded_in_bytes(self, tmp_path, monkeypatch):
        monkeypatch.setenv("SPECVIZ_READ_CACHE_BYTES", "1000000")
        s = Store(tmp_path / "k.duckdb")
        self.sweep(s, "a.csv", 50)
        first, second = s.shown_runs().frame, s.shown_runs().frame
        assert first is not second and first["concurrency"].values.base is second["concurrency"].values.base
        first.loc[0, "concurrency"] = -1.0  # copy-on-write: the change is the caller's alone
        assert s.shown_runs().frame.concurrency[0] == 1.0
        kept = s._kept_reads.kept_bytes
        assert 0 < kept <= 1_000_000
        for workload in range(40):  # reads of other filters push the oldest out, within the bound
            s.shown_runs({"concurrency": [float(workload + 1)]})
            assert s._kept_reads.kept_bytes <= 1_000_000
        monkeypatch.setenv("SPECVIZ_READ_CACHE_BYTES", "10")
        tiny = Store(tmp_path / "k.duckdb")  # a read past the bound is handed out, not kept
        assert len(tiny.shown_runs().frame) == 50 and tiny._kept_reads.kept_bytes == 0
        tiny.close()
        s.close()


class TestSpillFolders:
    def test_a_killed_process_s_folder_is_removed_by_the_next(self, tmp_path, monkeypatch):
        """A killed command line (SIGKILL, or SIGTERM, which runs no atexit) left its empty spill folder
        in the temporary folder; the next specviz process removes it, and keeps a living one's."""
        probe = ("import sys, time; sys.path.insert(0, sys.argv[1])\n"
                 "from specviz.results.store.connection import hub_cursor\n"
                 "hub_cursor(); print('ready', flush=True); time.sleep(60)\n")
        children = [subprocess.Popen([sys.executable, "-c", probe, str(ROOT)], stdout=subprocess.PIPE, text=True,
                                     env={**os.environ, "TMPDIR": str(tmp_path)}) for _ in range(2)]
        try:
            assert [child.stdout.readline() for child in children] == ["ready\n"] * 2
            children[0].send_signal(signal.SIGKILL)
            children[0].wait(10)
            folders = {int(f.name.split("-")[2]): f for f in tmp_path.glob("specviz-duckdb-*")}
            assert set(folders) == {child.pid for child in children}
            monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
            connection._remove_orphan_spill_folders()
            assert not folders[children[0].pid].exists() and folders[children[1].pid].exists()
        finally:
            for child in children:
                child.kill()
                child.wait(10)


class TestSweepRunsUploadedApart:
    """A ``vllm bench sweep`` writes each run as ``run=N.json`` and again in ``summary.json``; the page
    takes files, not folders, so both may come: the run is stored once."""

    FOLDER = SAMPLES / "vllm_0.25_sweep" / "SERVE--max_num_seqs=4-BENCH--max_concurrency=2-num_prompts=8"

    def read(self, name: str) -> bytes:
        return (self.FOLDER / name).read_bytes()

    def test_the_run_file_first(self, db):
        first = db.import_file("run=0.json", self.read("run=0.json"))
        summary = db.import_file("summary.json", self.read("summary.json"))
        assert (first.status, first.runs, summary.status, summary.runs) == ("imported", 1, "imported", 1)
        assert [w.params for w in summary.warnings if w.key == "warn.sweep_run_repeated"] == [
            {"other": "run=0.json", "runs": "0"}]
        runs = db.runs()
        assert len(runs) == 2 and sorted(json.loads(e)["run_number"] for e in runs.extra) == [0, 1]
        assert json.loads(db.imports().set_index("source_file").warnings["summary.json"])[-1] == {
            "key": "warn.sweep_run_repeated", "params": {"other": "run=0.json", "runs": "0"}}

    def test_the_summary_first(self, db):
        """Every run of run=0.json is already stored: nothing of it is, as for an identical file."""
        db.import_file("summary.json", self.read("summary.json"))
        again = db.import_file("run=0.json", self.read("run=0.json"))
        assert (again.status, again.runs, again.format) == ("skipped", 0, "vllm-bench")
        assert again.message == "already imported from summary.json"
        assert [str(w) for w in again.warnings] == [
            "run_number 0 of this sweep: already stored from summary.json (same sweep settings and measurements), "
            "not stored again"]
        assert len(db.runs()) == 2 and db.imports().source_file.tolist() == ["summary.json"]

    def test_removing_the_other_file_lets_the_run_file_in(self, db):
        db.import_file("summary.json", self.read("summary.json"))
        db.import_file("run=0.json", self.read("run=0.json"))
        db.remove_import(db.imports().content_hash[0])
        assert db.import_file("run=0.json", self.read("run=0.json")).runs == 1 and len(db.runs()) == 1

    def test_a_file_that_left_runs_to_a_removed_one_takes_them_back_when_imported_again(self, db):
        """An analyst's pass: run=0.json, then summary.json (which leaves its run 0 to it); run=0.json
        removed took run 0 with it, and summary.json imported again was "already imported", one of its
        two runs stored. Imported again, it replaces its import and holds both, said; while the file it
        left them to is stored, it is refused as before."""
        db.import_file("run=0.json", self.read("run=0.json"))
        db.import_file("summary.json", self.read("summary.json"))
        assert db.import_file("summary.json", self.read("summary.json")).status == "skipped"
        db.remove_import(db.imports().set_index("source_file").content_hash["run=0.json"])
        assert len(db.runs()) == 1
        again = db.import_file("summary.json", self.read("summary.json"))
        assert (again.status, again.runs) == ("imported", 2)
        assert [w.params for w in again.warnings if w.key == "store.restored_runs"] == [{"files": "run=0.json"}]
        runs = db.runs()
        assert sorted(json.loads(e)["run_number"] for e in runs.extra) == [0, 1]
        assert db.imports().source_file.tolist() == ["summary.json"]
        assert db.import_file("summary.json", self.read("summary.json")).status == "skipped"  # whole now

    def test_named_inside_the_folder_or_on_their_own(self, db):
        """A path names the swept settings, an upload none: the runs are still the same."""
        db.import_path(self.FOLDER / "run=0.json")
        summary = db.import_file("summary.json", self.read("summary.json"))
        assert summary.runs == 1 and len(db.runs()) == 2

    def test_other_sweep_settings_are_another_run(self, db):
        db.import_file(f"a/{self.FOLDER.name}/run=0.json", self.read("run=0.json"))
        other = db.import_file("b/SERVE--max_num_seqs=8-BENCH--max_concurrency=2-num_prompts=8/summary.json",
                               self.read("summary.json"))
        assert other.runs == 2 and not other.warnings and len(db.runs()) == 3

    def test_other_measurements_of_the_same_run_are_refused(self, db):
        """run_number 0 started at the same second in the same sweep is one run: a copy of other
        figures is refused, naming the field, and what is stored stays."""
        run = json.loads(self.read("run=0.json"))
        db.import_file("run=0.json", json.dumps({**run, "duration": run["duration"] * 2}).encode())
        with pytest.raises(importers.IngestError) as info:
            db.import_file("summary.json", self.read("summary.json"))
        error = info.value
        assert (error.key, error.file, error.params["other"], error.params["field"]) == (
            "ingest.sweep_run_differs", "summary.json", "run=0.json", "duration_s")
        assert float(error.params["stored"]) == run["duration"] * 2 and float(error.params["value"]) == run["duration"]
        assert len(db.runs()) == 1 and db.imports().source_file.tolist() == ["run=0.json"]

    def test_a_field_kept_in_extra_is_compared_too(self, db):
        db.import_file("summary.json", self.read("summary.json"))
        run = json.loads(self.read("run=0.json"))
        with pytest.raises(importers.IngestError) as info:
            db.import_file("run=0.json", json.dumps({**run, "total_output_tokens": 1}).encode())
        assert info.value.params["field"] == "total_output_tokens" and info.value.params["run"] == "0"
        assert len(db.runs()) == 2

    def test_runs_without_a_date_are_one_only_when_equal(self, db):
        run = {k: v for k, v in json.loads(self.read("run=0.json")).items() if k != "date"}
        db.import_file("a.json", json.dumps(run).encode())
        assert db.import_file("b.json", json.dumps(run, indent=1).encode()).status == "skipped"
        assert db.import_file("c.json", json.dumps({**run, "duration": 9.0}).encode()).runs == 1
        assert len(db.runs()) == 2

    def test_runs_of_a_plain_benchmark_are_never_compared(self, db):
        """Only a sweep writes run_number: two plain result files of the same values are the user's to keep."""
        run = json.loads(self.read("run=0.json"))
        del run["run_number"]
        db.import_file("a.json", json.dumps(run).encode())
        assert db.import_file("b.json", json.dumps(run, indent=1).encode()).runs == 1 and len(db.runs()) == 2


class TestAppendedResultFile:
    """``vllm bench serve --append-result``, SGLang's ``bench_serving --output-file`` and SpecForge's
    benchmark add each run as a line to the same file: imported again once more runs were appended,
    its earlier lines were stored a second time (a baseline and its speculative runs counted twice)."""

    @staticmethod
    def lines(path: Path) -> list[bytes]:
        return [line for line in path.read_bytes().splitlines() if line.strip()]

    @pytest.mark.parametrize("sample, fmt, first", [("vllm_bench_nerdalert.jsonl", "vllm-bench", 3),
                                                    ("2026/specforge/dev_result.jsonl", "specforge-bench", 4)])
    def test_the_lines_stored_before_are_not_stored_again(self, db, sample, fmt, first):
        lines = self.lines(SAMPLES / sample)
        # vLLM writes "\n" before each appended object and none after the last; SGLang and SpecForge a line each.
        db.import_file("results.jsonl", b"\n".join(lines[:first]))
        again = db.import_file("results.jsonl", b"\n".join(lines) + b"\n")
        assert (again.status, again.format, again.runs) == ("imported", fmt, len(lines) - first)
        assert [w.params for w in again.warnings] == [
            {"other": "results.jsonl", "runs": ", ".join(str(n) for n in range(1, first + 1))}]
        assert [str(w) for w in again.warnings][0].startswith("run 1, 2")
        assert len(db.runs()) == len(lines)

    def test_removing_a_file_says_which_runs_another_file_left_to_it(self, db):
        """SpecForge's seven lines after its first six were stored from another file: removing that one
        had taken the six with it and said nothing of the file of seven, which then held one run and
        was skipped as already imported (an analyst's pass). The removal now names it, and the way back."""
        lines = self.lines(SAMPLES / "2026/specforge/dev_result.jsonl")
        first = db.import_file("dev_result.jsonl", b"\n".join(lines[:4]))
        db.import_file("with_more.jsonl", b"\n".join(lines) + b"\n")
        (shared,) = db.sharing_imports(first.content_hash)
        assert shared == Notice("exp.shared_runs", file="with_more.jsonl", runs="1, 2, 3, 4")
        assert str(shared).startswith("with_more.jsonl left its runs (named 1, 2, 3, 4 in it) to this file")
        later = db.imports().set_index("source_file").at["with_more.jsonl", "content_hash"]
        assert db.sharing_imports(later) == [] and db.sharing_imports("no such hash") == []
        # The way back the notice gives: both removed, the larger file imported again holds every run.
        db.remove_import(first.content_hash)
        db.remove_import(later)
        assert db.import_file("with_more.jsonl", b"\n".join(lines) + b"\n").runs == len(lines)

    def test_one_run_left_to_a_file_is_named_as_one(self, db):
        lines = self.lines(SAMPLES / "2026/specforge/dev_result.jsonl")
        first = db.import_file("dev_result.jsonl", lines[0])
        db.import_file("with_more.jsonl", b"\n".join(lines) + b"\n")
        (shared,) = db.sharing_imports(first.content_hash)
        assert shared == Notice("exp.shared_run", file="with_more.jsonl", runs="1")
        assert str(shared).startswith("with_more.jsonl left its run (named 1 in it) to this file")

    def test_a_speculative_run_appended_to_its_baseline(self, db):
        plain = json.loads((SAMPLES / "sglang_bench_serving_c8.jsonl").read_bytes())  # "Infinity" as Python reads it
        spec = {**plain, "accept_length": 2.8, "output_throughput": 1100.0,
                "server_info": {**plain["server_info"], "speculative_algorithm": "EAGLE3", "speculative_num_steps": 3}}
        first = (SAMPLES / "sglang_bench_serving_c8.jsonl").read_bytes()
        db.import_file("sglang.jsonl", first)
        again = db.import_file("sglang.jsonl", first + json.dumps(spec).encode() + b"\n")
        assert (again.status, again.runs) == ("imported", 1) and len(db.runs()) == 2
        paired = explorer.pair_with_baselines(explorer.with_view_columns(db.runs()))
        assert paired["measured_speedup"].tolist() == [pytest.approx(1100.0 / plain["output_throughput"])]

    def test_every_line_stored_already_is_a_file_skipped(self, db):
        lines = self.lines(SAMPLES / "vllm_bench_nerdalert.jsonl")
        db.import_file("results.jsonl", b"\n".join(lines))
        again = db.import_file("copy.jsonl", b"\n".join(json.dumps(json.loads(line), indent=None).encode()
                                                       for line in lines) + b"\n")
        assert (again.status, again.runs, again.message) == ("skipped", 0, "already imported from results.jsonl")
        assert len(db.runs()) == 9 and db.imports().source_file.tolist() == ["results.jsonl"]

    def test_a_line_of_other_figures_is_another_run(self, db):
        lines = self.lines(SAMPLES / "vllm_bench_nerdalert.jsonl")
        db.import_file("a.jsonl", b"\n".join(lines[:2]))
        changed = json.dumps({**json.loads(lines[0]), "output_throughput": 1.0}).encode()
        assert db.import_file("b.jsonl", b"\n".join([changed, lines[2]])).runs == 2 and len(db.runs()) == 4


    def test_copies_of_one_run_are_compared_once(self, db, monkeypatch):
        """1,000 copies of one run, imported again under another hash, had joined 1,000 × 1,000 stored
        rows (34 s, 5.1 GB; 1,000 SGLang lines: the kernel killed it at 24 GB). Copies are compared
        once: with room for a single pair, the second content is recognised whole."""
        line = self.lines(SAMPLES / "vllm_bench_nerdalert.jsonl")[0]
        db.import_file("copies.jsonl", b"\n".join([line] * 300))
        monkeypatch.setenv("SPECVIZ_IMPORT_MAX_REPEAT_PAIRS", "1")
        again = db.import_file("copies.jsonl", b"\n".join([line] * 300) + b"\n ")
        assert (again.status, again.message) == ("skipped", "already imported from copies.jsonl")

    def test_more_pairs_to_compare_than_the_limit_is_refused_and_nothing_changes(self, db, monkeypatch):
        """Runs of one record and other figures each (a hostile file) make pairs no copy collapses:
        no more than one past the limit read, and refused past it, naming the counts."""
        run = json.loads(self.lines(SAMPLES / "vllm_bench_nerdalert.jsonl")[0])
        lines = [json.dumps({**run, "output_throughput": 100.0 + i}).encode() for i in range(30)]
        db.import_file("a.jsonl", b"\n".join(lines))
        before = db.runs()
        monkeypatch.setenv("SPECVIZ_IMPORT_MAX_REPEAT_PAIRS", "100")
        with pytest.raises(importers.IngestError) as refused:
            db.import_file("b.jsonl", b"\n".join(lines[::-1]))
        assert (refused.value.key, refused.value.params) == (
            "ingest.too_many_repeats", {"file": "b.jsonl", "runs": 30, "pairs": 900, "most": 100})
        assert db.runs().equals(before) and db.imports().source_file.tolist() == ["a.jsonl"]


class TestAiperfRunStoredTwice:
    """One AIPerf run (benchmark_id 108f93f90b09) exported into two folders, whose configurations name
    their own artifact directory: it was stored twice, under two series names."""

    FIRST, SECOND = SAMPLES / "aiperf_profile_export_aiperf.json", SAMPLES / "2026" / "aiperf_0.10" / "profile_export_aiperf.json"

    def test_the_second_copy_is_not_stored_and_said_to_be_stored(self, db):
        db.import_path(self.FIRST)
        again = db.import_path(self.SECOND)
        assert (again.status, again.runs, again.format) == ("skipped", 0, "aiperf")
        assert [str(w) for w in again.warnings] == [
            f"benchmark_id 108f93f90b09: this AIPerf run is already stored from {self.FIRST} (same benchmark and "
            "measurements), not stored again"]
        assert len(db.runs()) == 1 and db.imports().source_file.tolist() == [str(self.FIRST)]

    def test_other_figures_of_the_same_benchmark_are_another_run(self, db):
        db.import_path(self.FIRST)
        doc = json.loads(self.SECOND.read_bytes())
        doc["request_throughput"]["avg"] *= 2
        other = db.import_file("other.json", json.dumps(doc).encode())
        assert (other.status, other.runs, other.warnings) == ("imported", 1, []) and len(db.runs()) == 2


class TestConcurrencyBound:
    """An attack pass: a concurrency of 1e23 had wrapped to a negative batch in the measured schedule,
    and 1e15 had broken the step model's calibration; past CONCURRENCY_MOST it is no load a client ran."""

    def test_a_csv_s_and_a_json_file_s_concurrency_past_the_bound_is_left_out_and_said(self, db):
        rows = "label,concurrency,output_throughput\na,8,100\nb,1e15,100\nc,10000000,100\n"
        result = db.import_file("huge.csv", rows.encode())
        assert db.runs().set_index("label")["concurrency"].to_dict() == pytest.approx({"a": 8.0, "b": math.nan, "c": 1e7},
                                                                                       nan_ok=True)
        assert any(w.key == "warn.csv_out_of_range" and w.params["field"] == "concurrency" for w in result.warnings)
        doc = json.loads((SAMPLES / "vllm_0.25_bench_serve_specdecode.json").read_bytes())
        doc["max_concurrency"] = 1e23
        result = db.import_file("huge.json", json.dumps(doc).encode())
        assert [str(w) for w in result.warnings if w.key == "warn.rejected.concurrency"] == [
            "'max_concurrency' = '1e+23' is no number of requests at once a benchmark ran (at most 10,000,000); kept in "
            "extra only"]
        assert pd.isna(db.runs().set_index("source_file").at["huge.json", "concurrency"])


class TestStatedSpeculation:
    """A benchmark client's file says nothing of what the server ran (AIPerf's, genai-perf's): its runs
    counted as plain, so that two AIPerf runs, speculation on and off, were two baselines and no speedup.
    The user states what a file's runs ran; what a file says is never changed."""

    PLAIN = SAMPLES / "aiperf_profile_export_aiperf.json"

    def two_aiperf_runs(self, db):
        doc = json.loads(self.PLAIN.read_bytes())
        doc["output_token_throughput"]["avg"] *= 1.5
        db.import_path(self.PLAIN)
        return db.import_file("speculative.json", json.dumps(doc).encode())

    def test_a_stated_run_is_set_beside_its_baseline(self, db):
        speculative = self.two_aiperf_runs(db)
        assert explorer.pair_with_baselines(explorer.with_view_columns(db.runs())).empty
        assert db.state_speculation(speculative.content_hash, "eagle3", 3) == 1
        runs = explorer.with_view_columns(db.runs())
        (pair,) = explorer.pair_with_baselines(runs).itertuples()
        assert pair.measured_speedup == pytest.approx(1.5) and pair.num_speculative_tokens == 3
        stated = runs.set_index("source_file")
        assert stated.at["speculative.json", "speculation_by_user"] and pd.isna(stated.at[str(self.PLAIN), "speculation_by_user"])

    def test_a_statement_can_be_changed_but_never_what_a_file_says(self, db):
        speculative = self.two_aiperf_runs(db)
        said = db.import_path(SAMPLES / "vllm_0.25_bench_serve_specdecode.json")
        assert db.state_speculation(said.content_hash, "none", None) == 0
        assert db.state_speculation(speculative.content_hash, "eagle3", 3) == 1
        assert db.state_speculation(speculative.content_hash, "none", 5) == 1  # a plain run's γ is 0
        runs = db.runs().set_index("source_file")
        assert (runs.at["speculative.json", "spec_method"], runs.at["speculative.json", "num_speculative_tokens"]) == ("none", 0)
        vllm = runs.loc[str(SAMPLES / "vllm_0.25_bench_serve_specdecode.json")]
        assert vllm["num_speculative_tokens"] == 3 and pd.isna(vllm["speculation_by_user"])

    @pytest.mark.parametrize("method, gamma, key", [("eagle-3", 3, "store.unknown_method"), ("", 3, "store.unknown_method"),
                                                    ("eagle3", None, "store.stated_gamma"), ("eagle3", 0, "store.stated_gamma"),
                                                    ("eagle3", 17, "store.stated_gamma"), ("mtp", True, "store.stated_gamma"),
                                                    ("mtp", 2.0, "store.stated_gamma")])
    def test_a_method_or_length_not_known_changes_nothing(self, db, method, gamma, key):
        speculative = self.two_aiperf_runs(db)
        before = db.runs()
        with pytest.raises(StoreError) as info:
            db.state_speculation(speculative.content_hash, method, gamma)
        assert info.value.key == key and "Nothing was changed" in str(info.value)
        pd.testing.assert_frame_equal(db.runs(), before)

    def test_a_run_that_gives_its_gamma_but_no_method_takes_the_method_alone(self, db):
        """vLLM 0.25.1's MTP run gives γ 3 and its acceptance but no method: the Predicted view could not
        be told it was MTP. The method is stated, its γ kept; plain is not, for it speculated; and its
        copy from another file is still known as it."""
        path = SAMPLES / "2026" / "vllm_0.25.1" / "bench_serve_speculative_v0.25.1.json"
        mtp = db.import_path(path)
        assert explorer.method_unsaid(db.runs()).tolist() == [True]
        assert db.state_speculation(mtp.content_hash, "none", None) == 0
        assert db.state_speculation(mtp.content_hash, "mtp", 7) == 1
        (run,) = db.runs().to_dict("records")
        assert (run["spec_method"], run["num_speculative_tokens"], run["speculation_by_user"]) == ("mtp", 3, "method")
        # Compared with a copy from another file as its file gave it: no method, its own γ.
        assert {k: repeats._as_its_file_gave(run)[k] for k in ("spec_method", "num_speculative_tokens")} == {
            "spec_method": None, "num_speculative_tokens": 3}

    def test_a_stated_run_is_still_known_when_its_copy_comes_again(self, db):
        """An analyst's pass: once stated, an AIPerf run was stored again from its copy and paired with it at
        1.00x; a file's first lines stated, the whole file stored them twice; a stated sweep summary
        refused its run=0.json. A statement is the user's word, not the file's figures."""
        first = db.import_path(self.PLAIN)
        db.state_speculation(first.content_hash, "eagle3", 3)
        copy = db.import_path(SAMPLES / "2026" / "aiperf_0.10" / "profile_export_aiperf.json")
        assert (copy.status, len(db.runs())) == ("skipped", 1)
        lines = (SAMPLES / "vllm_bench_nerdalert.jsonl").read_bytes().splitlines()
        head = db.import_file("head.jsonl", b"\n".join(lines[:3]))
        db.state_speculation(head.content_hash, "eagle3", 3)
        whole = db.import_file("all.jsonl", b"\n".join(lines))
        assert whole.runs == len(lines) - 3 and len(db.runs()) == 1 + len(lines)
        sweep = next((SAMPLES / "vllm_0.25_sweep").iterdir())
        summary = db.import_path(sweep / "summary.json")
        db.state_speculation(summary.content_hash, "none", None)
        again = db.import_path(sweep / "run=0.json")
        assert again.status == "skipped"

    def test_the_runs_it_changes_are_those_the_explorer_says_say_nothing(self, db):
        rows = ["label,concurrency,output_throughput,spec_method,num_speculative_tokens,acceptance_length,acceptance_rate",
                "a,1,100,,,,", "b,2,100, ,,,", "c,3,100,,4,,", "d,4,100,,,2.5,", "e,5,100,,,,0.6", "f,6,100,eagle,,,",
                "g,7,100,none,,,"]
        result = db.import_file("mixed.csv", "\n".join(rows).encode())
        nothing = explorer.says_nothing_of_speculation(db.runs())
        no_method = explorer.method_unsaid(db.runs())
        assert (nothing.sum(), no_method.sum()) == (2, 3)
        assert db.state_speculation(result.content_hash, "ngram", 4) == 5
        # The method alone for the runs that gave a γ or an acceptance (c, d, e), their γ kept.
        stated = db.runs().set_index("label")
        assert stated["speculation_by_user"].fillna("").to_dict() == {
            "a": "method_gamma", "b": "method_gamma", "c": "method", "d": "method", "e": "method", "f": "", "g": ""}
        assert stated["num_speculative_tokens"].iloc[:5].isna().tolist() == [False, False, False, True, True]
        files = explorer.speculation_unstated(db.runs())
        assert files[["unstated", "no_method", "stated", "method", "gamma"]].values.tolist() == [[0, 0, 5, "ngram", 4]]


class TestPerRequestRuns:
    @pytest.mark.parametrize("shape", ["blocks", "old Mac line ends", "a quoted line break", "a blank line"])
    def test_each_run_has_the_dimensions_of_its_own_rows(self, db, monkeypatch, shape):
        """Runs one after another over 3 MB (pieces of a MiB): each run's dimensions are read from
        the line of its first request; where rows and lines are apart (a quoted line break, a blank
        line), from the whole file."""
        rows = ["label,concurrency,ttft_ms,notes"]
        for run in range(6):
            rows += [f"run{run},{2 ** run},{i},n" for i in range(25_000)]
        if shape == "a quoted line break":
            rows[1] = 'run0,1,0,"two\nlines"'
        elif shape == "a blank line":
            rows.insert(30_000, "")
        end = "\r" if shape == "old Mac line ends" else "\n"
        found = []
        lines_at = csv_import._lines_at
        monkeypatch.setattr(csv_import, "_lines_at", lambda *args: found.append(lines_at(*args)) or found[-1])
        result = db.import_file("blocks.csv", (end.join(rows) + end).encode())
        assert (result.runs, result.requests) == (6, 150_000)
        runs = db.runs().set_index("label")
        assert runs.concurrency.to_dict() == {f"run{run}": 2.0 ** run for run in range(6)}
        assert (runs.num_requests == 25_000).all() and (runs.p50_ttft_ms == 12_499.5).all()
        if shape in ("blocks", "old Mac line ends"):  # the header and each run's first line, found by number
            firsts = [rows[0], *(f"run{run},{2 ** run},0,n" for run in range(6))]
            assert found == ["".join(line + end for line in firsts).encode()]

    @pytest.mark.parametrize("dates", [False, True], ids=["sniffed once", "sniffed at each read"])
    def test_text_that_looks_like_numbers_is_kept_as_written(self, db, dates):
        """A dimension column of numbers ("-3618", "1.5e-38") stored as text: DuckDB turns a number
        into text differently from plan to plan ("-3618" or "-3618.0"), which once split a run's
        key between its two queries and lost the run. Read as text, every run arrives as written."""
        head = "workload,ttft_ms" + (",day" if dates else "")
        lines = [f"{w},{t}" + (",2026-11-30" if dates else "") for w in ("-3618", "1.5e-38", "7") for t in (1, 2)]
        result = db.import_file("numbers.csv", "\n".join([head, *lines, ""]).encode())
        assert (result.runs, result.requests) == (3, 6)
        assert sorted(db.runs().workload) == ["-3618", "1.5e-38", "7"]
        assert counts(db) == (3, 1, 6)


    def test_runs_whose_rows_read_differently_are_refused_in_the_reader_s_language(self, tmp_path):
        """A run the second read does not find (here: no row names it) refuses the file; the reason
        is said in the message's language."""
        path = tmp_path / "runs.csv"
        path.write_bytes(b"run_id\nrun0\n")
        reading = csv_import._CsvReading(None, [("run_id", "VARCHAR")], 0, b"\n")
        with importers.Source("runs.csv", path.read_bytes()) as source, pytest.raises(importers.IngestError) as info:
            csv_import._csv_run_dimensions(source, reading, str(path), f"SELECT DISTINCT run_id FROM {reading.sql}",
                                      {"run1": 0})
        assert info.value.key == "ingest.csv_unreadable"
        assert in_vietnamese(info.value, "its rows read differently on a second pass", "ingest.detail.rows_differ")


class TestInterruptedImport:
    def test_a_killed_import_loses_no_earlier_run_and_leaves_no_part(self, tmp_path):
        path = tmp_path / "k.duckdb"
        s = Store(path)
        s.import_file("g.json", (SAMPLES / "guidellm_benchmarks.json").read_bytes())
        before = counts(s)
        s.close()
        child = textwrap.dedent(f"""
            import sys, time
            sys.path.insert(0, {str(ROOT)!r})
            from specviz.results.store import Store
            original = Store._insert_parsed
            def insert_and_hang(self, *args):
                result = original(self, *args)
                print("inside the transaction", flush=True)
                time.sleep(60)
                return result
            Store._insert_parsed = insert_and_hang
            Store({str(path)!r}).import_file("sd.json", open({str(FIXTURES / 'vllm_bench_spec_decode.json')!r}, "rb").read())
        """)
        proc = subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE, text=True)
        assert proc.stdout.readline().strip() == "inside the transaction"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        s = Store(path)
        assert counts(s) == before
        assert s.runs().source_file.tolist() == ["g.json"]
        s.close()


class TestTwoProcesses:
    def test_the_second_waits_for_the_first(self, tmp_path):
        db_path = tmp_path / "p.duckdb"
        procs = [subprocess.Popen([sys.executable, "-m", "specviz", "ingest", str(SAMPLES / name), "--db", str(db_path)],
                                  cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for name in SAMPLE_FILES[:2]]
        outputs = [p.communicate(timeout=60) for p in procs]
        assert [p.returncode for p in procs] == [0, 0], outputs
        s = Store(db_path)
        assert len(s.imports()) == 2
        s.close()


EXAMPLES = ROOT / "data" / "examples"
SCHEMA1 = FIXTURES / "store_schema1.duckdb"


def a_csv(value: int) -> bytes:
    """A user's CSV of one run, different for each value."""
    return f"concurrency,output_throughput\n{value},{value * 10}\n".encode()


def schema1_copy(tmp_path: Path) -> Path:
    """A copy of the schema-1 fixture: the fixture itself is never opened for writing."""
    path = tmp_path / "old.duckdb"
    path.write_bytes(SCHEMA1.read_bytes())
    return path


class TestUpgradeFromSchema1:
    def test_every_run_is_kept_and_endpoint_types_leave_engine(self, tmp_path):
        fixture_digest = hashlib.sha256(SCHEMA1.read_bytes()).hexdigest()
        path = schema1_copy(tmp_path)
        with duckdb.connect(str(path)) as con:  # values schema 1 wrote into engine (the fixture's are engines)
            vllm = [r for (r,) in con.execute("SELECT run_id FROM runs WHERE source_format = 'vllm-bench' "
                                              "ORDER BY run_id").fetchall()]
            con.execute("UPDATE runs SET engine = 'openai-chat' WHERE run_id = ?", [vllm[0]])
            con.execute("UPDATE runs SET engine = 'tensorrt-llm' WHERE run_id = ?", [vllm[1]])
            con.execute("UPDATE runs SET engine = 'openai' WHERE source_file = 'examples/my_own_sweep.csv'")
        with duckdb.connect(str(path), read_only=True) as con:
            assert con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("1",)
            before = con.execute("SELECT * FROM runs ORDER BY run_id").df()
            imports_before = con.execute("SELECT count(*) FROM imports").fetchone()[0]
        s = Store(path)
        assert s.schema_version == store.SCHEMA_VERSION == 8
        assert s.snapshots().empty and s.windows().empty  # schema 3's tables, empty
        after = s.runs().sort_values("run_id", ignore_index=True)
        assert len(after) == len(before) == 60 and len(s.imports()) == imports_before == 4
        # schema 7: llmperf's TPOT from its means (73.4 ms), where schema 1 had stored its end-to-end
        # time per token (111.1 ms) as ITL
        llmperf = (before.source_format == "llmperf").to_numpy()
        assert before.mean_itl_ms[llmperf].tolist() == [pytest.approx(111.12, abs=0.01)]
        assert after.mean_tpot_ms[llmperf].tolist() == [pytest.approx(73.37, abs=0.01)]
        assert after[llmperf].filter(like="_itl_ms").isna().all().all()
        latency = [c for c in before.columns if c.endswith(("_itl_ms", "_tpot_ms"))]
        unchanged = [c for c in before.columns if c != "engine" and c not in latency]
        assert after[unchanged].to_json(date_format="iso") == before[unchanged].to_json(date_format="iso")
        assert after[latency][~llmperf].to_json() == before[latency][~llmperf].to_json()
        moved = after.set_index("run_id")[["source_file", "engine", "endpoint"]]
        moved = moved.astype(object).where(moved.notna(), None)
        assert moved.loc[vllm[0]].tolist()[1:] == [None, "openai-chat"]
        assert moved.loc[vllm[1]].tolist()[1:] == ["trt-llm", None]
        assert set(moved.loc[vllm[2:], "engine"]) == {"vllm"}
        mine = moved[moved.source_file == "examples/my_own_sweep.csv"]  # a CSV's engine is the user's own
        assert set(mine.engine) == {"openai"} and mine.endpoint.isna().all()
        assert moved.loc[~moved.index.isin(vllm[:1]), "endpoint"].isna().all()
        s.close()
        assert hashlib.sha256(SCHEMA1.read_bytes()).hexdigest() == fixture_digest

    def test_only_the_seeded_example_becomes_one_and_new_imports_go_in(self, tmp_path):
        s = Store(schema1_copy(tmp_path))
        origins = dict(s.imports()[["source_file", "origin"]].itertuples(index=False))
        assert origins == {"examples/example_sweep.csv": "example", "examples/my_own_sweep.csv": "user",
                           "../shared/samples/vllm_bench_nerdalert.jsonl": "user",
                           "../shared/samples/llmperf_Yi-1-5-34B_550_150_summary.json": "user"}
        assert s.seed_examples(sorted(EXAMPLES.glob("*.csv"))) == []  # seeded by schema 1: not again
        result = s.import_file("sd.json", (FIXTURES / "vllm_bench_spec_decode.json").read_bytes())
        assert (result.status, result.runs, result.requests) == ("imported", 1, 3)
        assert s.imports().set_index("source_file").loc["sd.json", "origin"] == "user"
        assert s.remove_examples() == 48
        assert sorted(s.runs().source_file.unique()) == ["../shared/samples/llmperf_Yi-1-5-34B_550_150_summary.json",
                                                         "../shared/samples/vllm_bench_nerdalert.jsonl",
                                                         "examples/my_own_sweep.csv", "sd.json"]
        s.close()


SCHEMA2 = FIXTURES / "store_schema2.duckdb"


class TestUpgradeFromSchema2:
    def test_every_run_is_kept_and_the_live_tables_are_added(self, tmp_path):
        fixture_digest = hashlib.sha256(SCHEMA2.read_bytes()).hexdigest()
        path = tmp_path / "old2.duckdb"
        path.write_bytes(SCHEMA2.read_bytes())
        with duckdb.connect(str(path), read_only=True) as con:
            assert con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("2",)
            assert {t for (t,) in con.execute("SHOW TABLES").fetchall()} == {"meta", "runs", "requests", "imports"}
            runs_before = con.execute("SELECT * FROM runs ORDER BY run_id").df()
            imports_before = con.execute("SELECT * FROM imports ORDER BY content_hash").df()
            requests_before = con.execute("SELECT count(*) FROM requests").fetchone()[0]
        s = Store(path)
        assert s.schema_version == store.SCHEMA_VERSION == 8
        after = s.runs().sort_values("run_id", ignore_index=True)
        # schema 4's flag and schema 8's statement: unknown, and none, for every old run
        assert after.synthetic_acceptance.isna().all() and after.speculation_by_user.isna().all()
        after = after.drop(columns=["synthetic_acceptance", "speculation_by_user"])
        assert len(after) == 50 and after.to_json(date_format="iso") == runs_before.to_json(date_format="iso")
        imports_after = s.imports().sort_values("content_hash", ignore_index=True)
        assert imports_after.to_json(date_format="iso") == imports_before.to_json(date_format="iso")
        assert int(s.request_summary().requests.sum()) == requests_before == 3
        assert s.seed_examples(sorted(EXAMPLES.glob("*.csv"))) == []  # seeded under schema 2: not again
        recorded = s.record_scrape("http://vllm:8000/metrics", prom.parse(exposition(100, [80, 60]), 1000.0))
        assert recorded.series == 5 and not recorded.window and len(s.snapshots()) == 5
        s.close()
        assert hashlib.sha256(SCHEMA2.read_bytes()).hexdigest() == fixture_digest


class TestUpgradeToSchema7:
    def test_the_tools_inter_token_latency_moves_to_tpot(self, tmp_path):
        """An analyst's pass: AIPerf's, genai-perf's and GuideLLM's inter-token latency, a request's
        (latency − TTFT) / (tokens − 1), had been stored as ITL. A store written so (here: today's
        imports put back as schema 6 stored them) is mended on opening; other formats are untouched."""
        path = tmp_path / "six.duckdb"
        s = Store(path)
        for name in ("profile_export_genai_perf.csv", "guidellm_benchmarks.json", "2026/aiperf_0.3_concurrency1/profile_export.jsonl",
                     "vllm_bench_nerdalert.jsonl"):
            assert s.import_file(name, (SAMPLES / name).read_bytes()).status == "imported"
        now = s.runs().set_index("source_format")
        s.close()
        moved = ("genai-perf", "guidellm", "aiperf")
        with duckdb.connect(str(path)) as con:
            con.execute("UPDATE runs SET mean_itl_ms = mean_tpot_ms, p50_itl_ms = p50_tpot_ms, p90_itl_ms = p90_tpot_ms, "
                        "p99_itl_ms = p99_tpot_ms, mean_tpot_ms = NULL, p50_tpot_ms = NULL, p90_tpot_ms = NULL, "
                        "p99_tpot_ms = NULL WHERE source_format IN ?", [list(moved)])
            con.execute("UPDATE runs SET mean_tpot_ms = 5.2, extra = json_object('kept', 1) WHERE source_format = 'guidellm'")
            con.execute("UPDATE requests SET itl_ms = tpot_ms, tpot_ms = NULL")
            con.execute("ALTER TABLE runs DROP COLUMN speculation_by_user")  # schema 8's
            con.execute("UPDATE meta SET value = '6' WHERE key = 'schema_version'")
        s = Store(path)
        after = s.runs().set_index("source_format")
        for name in moved:
            assert after.loc[name, "mean_tpot_ms"] == now.loc[name, "mean_tpot_ms"] and math.isnan(after.loc[name, "mean_itl_ms"])
        assert after.loc["genai-perf", "mean_tpot_ms"] == 30.35
        assert json.loads(after.loc["guidellm", "extra"]) == {"kept": 1, "time_per_output_token_ms": {"mean": 5.2}}
        vllm = ["mean_itl_ms", "p99_itl_ms", "mean_tpot_ms"]
        unchanged = lambda runs: runs.loc["vllm-bench"].sort_values("run_id")[vllm].reset_index(drop=True)
        pd.testing.assert_frame_equal(unchanged(after), unchanged(now))
        with s._connection() as con:
            per_request = con.execute("SELECT count(tpot_ms), count(itl_ms) FROM requests r JOIN runs USING (run_id) "
                                      "WHERE source_format = 'guidellm'").fetchone()
        assert per_request == (1, 0)
        s.close()


    @pytest.mark.parametrize("tokens", ["NaN", "Infinity", "1e400", "1", "x"])
    def test_an_odd_llmperf_count_or_a_guidellm_extra_that_is_no_object_is_left_as_an_import_leaves_it(
            self, tmp_path, tokens):
        """An attack pass: a count of "Infinity" gave a TPOT of 0.0, "NaN" a NaN; a GuideLLM extra of
        [1, 2, 3] was replaced whole."""
        path = tmp_path / "six.duckdb"
        s = Store(path)
        for name in ("llmperf_Yi-1-5-34B_550_150_summary.json", "guidellm_benchmarks.json"):
            s.import_file(name, (SAMPLES / name).read_bytes())
        s.close()
        with duckdb.connect(str(path)) as con:
            con.execute("UPDATE runs SET mean_itl_ms = 111.1, mean_tpot_ms = NULL, "
                        "extra = json_object('results_number_output_tokens_mean', ?) WHERE source_format = 'llmperf'", [tokens])
            con.execute("UPDATE runs SET extra = '[1, 2, 3]' WHERE source_format = 'guidellm'")
            con.execute("ALTER TABLE runs DROP COLUMN speculation_by_user")  # schema 8's
            con.execute("UPDATE meta SET value = '6' WHERE key = 'schema_version'")
        s = Store(path)
        runs = s.runs().set_index("source_format")
        with s._connection() as con:  # NULL, not NaN: SQL's avg() over a NaN is NaN
            assert con.execute("SELECT mean_tpot_ms IS NULL AND mean_itl_ms IS NULL FROM runs "
                               "WHERE source_format = 'llmperf'").fetchone() == (True,)
        assert json.loads(runs.loc["guidellm", "extra"]) == [1, 2, 3]
        s.close()


def exposition(drafts: float, per_pos: list[float], running: float | None = None, generation: float | None = None,
               model: str = "m") -> str:
    """vLLM V1 exposition text of one model: the spec-decode counters (γ = len(per_pos), accepted =
    the sum over positions), and the running requests and generated tokens where given."""
    labels = f'engine="0",model_name="{model}"'
    lines = ["# TYPE vllm:spec_decode_num_drafts counter", f"vllm:spec_decode_num_drafts_total{{{labels}}} {drafts}",
             "# TYPE vllm:spec_decode_num_draft_tokens counter",
             f"vllm:spec_decode_num_draft_tokens_total{{{labels}}} {drafts * len(per_pos)}",
             "# TYPE vllm:spec_decode_num_accepted_tokens counter",
             f"vllm:spec_decode_num_accepted_tokens_total{{{labels}}} {sum(per_pos)}",
             "# TYPE vllm:spec_decode_num_accepted_tokens_per_pos counter"]
    lines += [f'vllm:spec_decode_num_accepted_tokens_per_pos_total{{{labels},position="{i}"}} {v}'
              for i, v in enumerate(per_pos)]
    if running is not None:
        lines += ["# TYPE vllm:num_requests_running gauge", f"vllm:num_requests_running{{{labels}}} {running}"]
    if generation is not None:
        lines += ["# TYPE vllm:generation_tokens counter", f"vllm:generation_tokens_total{{{labels}}} {generation}"]
    return "\n".join(lines) + "\n"


def at(seconds: float) -> datetime:
    """A time as the store keeps it (naive UTC) from seconds since the epoch."""
    return datetime(1970, 1, 1) + timedelta(seconds=seconds)


# Three scrapes of one server, 10 s apart (hand-checked windows in the tests below):
#   window 1: drafts 200, draft tokens 400, accepted 160 + 110 = 270, generated 500 tokens, running 6
#   window 2: drafts  50, draft tokens 100, accepted  50 +  30 =  80, generated 200 tokens, running 2
SCRAPES = [(1000.0, exposition(100, [80, 60], running=4, generation=1000)),
           (1010.0, exposition(300, [240, 170], running=6, generation=1500)),
           (1020.0, exposition(350, [290, 200], running=2, generation=1700))]
SOURCE = "http://vllm:8000/metrics"


def recorded(s: Store, source: str = SOURCE, scrapes=SCRAPES) -> list[store.RecordedScrape]:
    return [s.record_scrape(source, prom.parse(text, when)) for when, text in scrapes]


class TestLiveTables:
    def test_the_migrations_build_the_declared_columns(self, db):
        with db._connection() as con:
            for table, columns in (("snapshots", SNAPSHOT_COLUMNS), ("windows", WINDOW_COLUMNS)):
                described = [(name, kind) for name, kind, *_ in con.execute(f"DESCRIBE {table}").fetchall()]
                assert described == list(columns.items())

    def test_a_scrape_is_its_series_and_the_window_since_the_one_before(self, db):
        first, second, third = recorded(db)
        assert (first.window, second.window, third.window) == (False, True, True)
        assert first.states[0].acceptance_length == 1 + 140 / 100  # totals since start: nothing stored as a window
        assert first.time == at(1000) and first.series == 7
        snapshots = db.snapshots(SOURCE)
        assert len(snapshots) == 21 and snapshots.time.nunique() == 3
        assert set(snapshots.engine) == {"vllm-v1"} and set(snapshots.model) == {"m"}
        per_pos = snapshots[snapshots.metric == "accepted_per_pos"]
        assert [json.loads(labels) for labels in per_pos.labels[:2]] == [
            {"engine": "0", "model_name": "m", "position": "0"}, {"engine": "0", "model_name": "m", "position": "1"}]
        windows = db.windows(SOURCE)
        assert windows.time_start.tolist() == [at(1000), at(1010)] and windows.time_end.tolist() == [at(1010), at(1020)]
        expected = {"drafts": [200, 50], "draft_tokens": [400, 100], "accepted_tokens": [270, 80],
                    "acceptance_rate": [270 / 400, 80 / 100], "acceptance_length": [1 + 270 / 200, 1 + 80 / 50],
                    "num_speculative_tokens": [2, 2], "zero_accept_rate": [1 - 160 / 200, 1 - 50 / 50],
                    "running_requests": [6, 2], "generation_throughput": [500 / 10, 200 / 10]}
        for column, values in expected.items():
            assert windows[column].tolist() == pytest.approx(values), column
        assert [x for v in windows.per_position_acceptance for x in v] == pytest.approx([0.8, 0.55, 1.0, 0.6])
        # α solves 1 + α + α² = 2.35 (γ = 2)
        assert windows.alpha_iid[0] == pytest.approx((-1 + (1 + 4 * 1.35) ** 0.5) / 2)
        assert windows.counter_reset.tolist() == [False, False]
        assert windows.waiting_requests.isna().all() and windows.itl_p50_ms.isna().all()  # not exported here
        assert len(db.snapshots(SOURCE, since=1010)) == 14 and len(db.windows(since=at(1015))) == 1
        assert len(db.windows(SOURCE, until=1010)) == 1 and db.windows("elsewhere").empty
        assert db.live_sources()[["source", "first", "last", "scrapes"]].values.tolist() == [
            [SOURCE, at(1000), at(1020), 3]]

    @pytest.mark.parametrize("most, kept", [(14, [1010, 1020]), (15, [1010, 1020]), (21, [1000, 1010, 1020]),
                                            (3, [1020])])
    def test_a_source_keeps_its_latest_scrapes_within_the_limit(self, db, monkeypatch, most, kept):
        """Seven series a scrape: the oldest scrapes go whole, the latest stays even past the limit,
        and every window stays (the last one taken against the scrape kept before it)."""
        monkeypatch.setenv("SPECVIZ_LIVE_KEEP_SNAPSHOT_ROWS", str(most))
        recorded(db)
        snapshots = db.snapshots(SOURCE)
        assert sorted(snapshots.time.unique()) == [at(t) for t in kept] and len(snapshots) == 7 * len(kept)
        windows = db.windows(SOURCE)
        assert windows.time_end.tolist() == [at(1010), at(1020)] and windows.drafts.tolist() == [200, 50]

    def test_counters_that_went_down_count_from_zero(self, db):
        recorded(db, scrapes=SCRAPES[:2] + [(1030.0, exposition(40, [30, 20], running=1, generation=90))])
        window = db.windows(SOURCE).iloc[-1]
        assert window.counter_reset and window.drafts == 40 and window.accepted_tokens == 50
        assert window.acceptance_length == pytest.approx(1 + 50 / 40)
        # Its tokens count from a moment the scrapes do not give: no rate (never a negative one either).
        assert math.isnan(window.generation_throughput)

    def test_a_restart_seen_only_in_the_process_start_time_counts_from_zero(self, db):
        """The start time is stored with the scrape and read back as the previous one: the server
        restarted between 1010 and 1020 and drafted 350 since, more than its 300 before, so the
        window is 350 drafts (290 + 200 accepted), not 50."""
        started = lambda t: f"# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds {t}\n"
        recorded(db, scrapes=[(1000.0, SCRAPES[0][1] + started(900.0)), (1010.0, SCRAPES[1][1] + started(900.0)),
                              (1020.0, SCRAPES[2][1] + started(1015.0))])
        assert set(db.snapshots(SOURCE).metric) >= {"process_start"}
        first, second = db.windows(SOURCE).itertuples()
        assert (first.drafts, first.counter_reset) == (200, False)
        assert (second.drafts, second.accepted_tokens, second.counter_reset) == (350, 490, True)

    def test_a_trtllm_window_is_the_one_of_its_two_scrapes(self, db):
        """Stored under the engine trt-llm and read back under its namespace trtllm: the window of
        the store is the one exposition.py gives the two scrapes (drafts 3500 − 3000 = 500, accepted
        400 + 250 + 130 = 780, length 1 + 780 / 500 = 2.56), not the second scrape counted from zero."""
        texts = [(FIXTURES / "prom" / f"trtllm_spec_composed_{i}.prom").read_text() for i in (1, 2)]
        recorded(db, "http://trtllm:8000/prometheus/metrics", [(1000.0, texts[0]), (1030.0, texts[1])])
        assert set(db.snapshots("http://trtllm:8000/prometheus/metrics").engine) == {"trt-llm"}
        window = db.windows("http://trtllm:8000/prometheus/metrics").iloc[-1]
        assert (window.engine, window.drafts, window.accepted_tokens) == ("trt-llm", 500, 780)
        assert window.acceptance_length == pytest.approx(2.56) and not window.counter_reset
        assert window.draft_overhead == 0.2  # the gauge at the later scrape
        assert db.save_live_run("http://trtllm:8000/prometheus/metrics", 1000.0, 1030.0).status == "imported"
        assert json.loads(db.runs().iloc[-1].extra)["mean_draft_overhead"] == 0.2  # one window: its value

    def test_a_window_keeps_the_mean_context_of_its_finished_requests(self, db):
        """3 requests of 20 tokens in and 64 out finished in the first window (2 with 100 and 300
        before, 5 with 160 and 492 after): P 20, O 64, context 52; none in the second: NULL."""
        counts = [(2, 100, 300), (5, 160, 492), (5, 160, 492)]
        recorded(db, scrapes=[(when, text + finished_requests(*count)) for (when, text), count in zip(SCRAPES, counts)])
        means = db.windows(SOURCE)[["mean_prompt_tokens", "mean_output_tokens", "mean_context"]]
        assert means.iloc[0].tolist() == [20, 64, 52] and means.iloc[1].isna().all()

    def test_sources_and_models_are_kept_apart(self, db):
        recorded(db)
        two = [(1000.0, exposition(10, [5]) + exposition(20, [4], model="other")),
               (1010.0, exposition(30, [15]) + exposition(60, [20], model="other"))]
        recorded(db, "other.prom", two)
        assert len(db.windows(SOURCE)) == 2  # the other source's scrapes are not this one's previous
        windows = db.windows("other.prom")
        assert windows.model.tolist() == ["m", "other"] and windows.drafts.tolist() == [20, 40]
        assert windows.acceptance_rate.tolist() == pytest.approx([10 / 20, 16 / 40])

    def test_a_scrape_too_soon_after_the_last_is_not_stored(self, db, monkeypatch):
        """The Live page and specviz record polling one source made windows of 0.15 s, one of which read
        tokens/s 6.5 % low (an SRE's pass). A scrape under SPECVIZ_LIVE_MIN_WINDOW_S (0.5 s by default)
        after the source's last stored one is not stored, and the next window runs from that one."""
        monkeypatch.delenv("SPECVIZ_LIVE_MIN_WINDOW_S")
        first = db.record_scrape(SOURCE, prom.parse(SCRAPES[0][1], 1000.0))
        soon = db.record_scrape(SOURCE, prom.parse(SCRAPES[1][1], 1000.15))
        assert soon.too_soon_s == pytest.approx(0.15) and (soon.series, soon.window, soon.states) == (0, False, [])
        assert first.too_soon_s is None and len(db.snapshots(SOURCE).time.unique()) == 1 and db.windows().empty
        later = db.record_scrape(SOURCE, prom.parse(SCRAPES[1][1], 1010.0))
        assert later.window and later.too_soon_s is None
        assert db.windows(SOURCE).drafts.tolist() == [200]  # since the first scrape, 10 s before

    def test_a_scrape_without_speculative_decoding_writes_nothing(self, db):
        with pytest.raises(SpecvizError) as info:
            db.record_scrape(SOURCE, prom.parse("vllm:num_requests_running 3\n", 1000.0))
        assert info.value.key == "prom.no_spec_decode"
        assert db.snapshots().empty and db.windows().empty

    def test_a_saved_run_s_running_requests_are_the_mean_of_their_readings(self, db):
        """Windows of 10 s, 10 s and then 440 s (polling stopped): 6 and 7 running at the first two
        ends and 1 at the last. Weighted by the windows' lengths, that one reading had stood for 440 s
        of 460 (2.3); the readings' mean is 14/3. Throughput stays tokens over time: 1,400 / 460 s."""
        scrapes = [(1000.0, exposition(100, [80, 60], running=5, generation=1000)),
                   (1010.0, exposition(200, [160, 120], running=6, generation=1400)),
                   (1020.0, exposition(300, [240, 180], running=7, generation=1800)),
                   (1460.0, exposition(400, [320, 240], running=1, generation=2400))]
        recorded(db, scrapes=scrapes)
        run = db.runs().iloc[0] if db.save_live_run(SOURCE, 1000, at(1460)).runs else None
        assert run.concurrency == pytest.approx((6 + 7 + 1) / 3)
        assert run.output_throughput == pytest.approx(1400 / 460)

    def test_a_saved_run_leaves_idle_windows_out_of_its_load(self, db):
        """An analyst's pass: three windows, one busy (12 running, 999 tokens/s), had been saved as
        concurrency 4.0 and 370 tokens/s. Idle windows (nothing running, no token) are left out of the
        load's figures and counted; the acceptance, from counts, is the same either way."""
        scrapes = [(1000.0, exposition(100, [80, 60], running=0, generation=1000)),
                   (1010.0, exposition(100, [80, 60], running=0, generation=1000)),
                   (1020.0, exposition(200, [160, 120], running=12, generation=10990)),
                   (1030.0, exposition(200, [160, 120], running=0, generation=10990))]
        recorded(db, scrapes=scrapes)
        db.save_live_run(SOURCE, 1000, at(1030))
        run = db.runs().iloc[0]
        assert (run.concurrency, run.output_throughput, run.duration_s) == (12.0, pytest.approx(999.0), 10.0)
        assert json.loads(run.extra)["idle_windows"] == 2 and run.acceptance_rate == pytest.approx(140 / 200)

    def test_a_saved_run_s_inter_token_latency_is_the_whole_range_s(self, db):
        """An SRE's pass: the saved run had no ITL though its windows had p50 25 ms and p99 49.5 ms.
        Window 1's 100 gaps are all under 10 ms, window 2's 100 between 20 and 50 ms; over the range,
        rank 100 of 200 is the top of the first bucket (10 ms) and rank 198 lies 98 % into
        (20, 50] ms (49.4 ms), which no mean of the windows' quantiles gives."""
        def itl(counts: tuple[int, int, int, int]) -> str:
            labels = 'engine="0",model_name="m"'
            return "# TYPE vllm:inter_token_latency_seconds histogram\n" + "".join(
                f'vllm:inter_token_latency_seconds_bucket{{{labels},le="{le}"}} {n}\n'
                for le, n in zip(("0.01", "0.02", "0.05", "+Inf"), counts))
        scrapes = [(when, text + itl(counts)) for (when, text), counts in
                   zip(SCRAPES, [(0, 0, 0, 0), (100, 100, 100, 100), (100, 100, 200, 200)])]
        recorded(db, scrapes=scrapes)
        windows = db.windows(SOURCE)
        assert windows.itl_p50_ms.tolist() == pytest.approx([5.0, 35.0]) and windows.itl_p99_ms.tolist() == pytest.approx([9.9, 49.7])
        db.save_live_run(SOURCE, 1000, at(1020))
        run = db.runs().iloc[0]
        assert (run.p50_itl_ms, run.p99_itl_ms) == (pytest.approx(10.0), pytest.approx(49.4))
        assert db.save_live_run(SOURCE, 1005, at(1020)).runs == 1  # the second window alone: its own
        assert db.runs().sort_values("p50_itl_ms").p50_itl_ms.tolist() == pytest.approx([10.0, 35.0])

    def test_a_saved_run_of_drafts_of_several_lengths_keeps_no_alpha(self, db):
        """An attack pass: drafts of 4 and 2 tokens at equal rates (γ 3 on average) had been saved
        with α 0.80 at γ 3, which the Live page refuses."""
        scrapes = [(1000.0, exposition(100, [0, 0, 0, 0])), (1010.0, exposition(300, [150, 90, 40, 20]))]
        scrapes[1] = (1010.0, scrapes[1][1].replace("num_draft_tokens_total{engine=\"0\",model_name=\"m\"} 1200",
                                                    "num_draft_tokens_total{engine=\"0\",model_name=\"m\"} 1000"))
        recorded(db, scrapes=scrapes)
        window = db.windows(SOURCE).iloc[0]
        assert window.num_speculative_tokens == 3.0 and pd.isna(window.alpha_iid)
        db.save_live_run(SOURCE, 1000, at(1010))
        run = db.runs().iloc[0]
        extra = json.loads(run.extra)
        assert "alpha_iid" not in extra and extra["mixed_lengths"] and pd.isna(run.num_speculative_tokens)
        assert list(run.per_position_acceptance) == pytest.approx([0.75, 0.45, 0.2, 0.1])

    def test_a_saved_run_of_windows_that_do_not_follow_on_has_no_itl(self, db):
        """An attack pass: a model gone from the source and back had its ITL taken over the time between."""
        recorded(db)
        frame = db.windows(SOURCE)
        kept = frame.iloc[[0]].assign(time_start=at(990), time_end=at(995))  # 995 to 1,000 not served
        with db._transaction() as cur:
            cur.register("kept", kept)
            cur.execute("INSERT INTO windows SELECT * FROM kept")
        db.save_live_run(SOURCE, 990, at(1020))
        extra = json.loads(db.runs().iloc[0].extra)
        assert extra["windows"] == 3 and extra["itl_not_saved"] == "the windows do not follow on"

    def test_a_saved_run_whose_first_scrape_is_gone_says_why_it_has_no_itl(self, db, monkeypatch):
        monkeypatch.setenv("SPECVIZ_LIVE_KEEP_SNAPSHOT_ROWS", "14")  # the last two scrapes of seven series
        recorded(db)
        db.save_live_run(SOURCE, 1000, at(1020))
        run = db.runs().iloc[0]
        assert math.isnan(run.p50_itl_ms) and json.loads(run.extra)["itl_not_saved"] == (
            "the scrapes at the range's ends are no longer kept")

    def test_a_range_of_windows_saved_as_a_run(self, db):
        recorded(db)
        db.import_file("a.csv", a_csv(1))
        result = db.save_live_run(SOURCE, 1000, at(1020), label="prod")
        assert (result.status, result.format, result.runs) == ("imported", "live", 1)
        runs = db.runs()
        run = runs[runs.source_format == "live"].iloc[0]
        assert len(runs) == 2 and run.source_file == SOURCE and run.label == "prod" and run.workload == "live"
        assert (run.engine, run.target_model, run.num_speculative_tokens) == ("vllm", "m", 2)
        # Sums of the two windows: drafts 250, draft tokens 500, accepted 350; per position 210 and 140.
        assert run.acceptance_rate == pytest.approx(350 / 500) and run.acceptance_length == pytest.approx(1 + 350 / 250)
        assert list(run.per_position_acceptance) == pytest.approx([210 / 250, 140 / 250])
        assert run.zero_accept_rate == pytest.approx(1 - 210 / 250)
        assert run.output_throughput == pytest.approx(700 / 20) and run.concurrency == pytest.approx((6 + 2) / 2)
        assert run.duration_s == 20
        extra = json.loads(run.extra)
        assert extra["engine_detail"] == "vllm-v1" and extra["windows"] == 2 and extra["counter_resets"] == 0
        assert (extra["drafts"], extra["draft_tokens"], extra["accepted_tokens"]) == (250, 500, 350)
        assert extra["alpha_iid"] == pytest.approx((-1 + (1 + 4 * 1.4) ** 0.5) / 2)
        assert "mean_draft_overhead" not in extra  # vLLM times no draft
        assert (extra["source"], extra["time_start"], extra["time_end"]) == (SOURCE, at(1000).isoformat(),
                                                                             at(1020).isoformat())
        imports = db.imports().set_index("source_format")
        assert imports.loc["live", "source_file"] == SOURCE and imports.loc["live", "runs"] == 1
        assert db.save_live_run(SOURCE, 1000, 1020, label="prod").status == "skipped"  # the same range again
        later = db.save_live_run(SOURCE, 1005, 1020)  # only the second window lies wholly inside
        later_run = db.runs().set_index("content_hash").loc[db.imports().content_hash.iloc[-1]]
        assert later.runs == 1 and later_run.acceptance_length == pytest.approx(1 + 80 / 50)
        assert db.remove_import(imports.loc["live", "content_hash"]) == 1
        assert sorted(db.runs().source_format) == ["csv", "live"]

    def test_a_second_save_as_the_windows_grow_replaces_the_first(self, db):
        """An SRE's pass: two clicks of "Save these windows as a run" while polling made two overlapping
        runs of the same windows. The later save, whose range holds the earlier's, replaces it in one
        transaction; a save of a range that does not hold it leaves it."""
        recorded(db)
        first = db.save_live_run(SOURCE, 1000, at(1010))
        assert (first.status, first.runs) == ("imported", 1)
        grown = db.save_live_run(SOURCE, 1000, at(1020))
        assert (grown.status, grown.runs) == ("replaced", 1)
        assert len(db.runs()) == 1 and len(db.imports()) == 1 and db.runs().duration_s.iloc[0] == 20
        assert db.save_live_run(SOURCE, 1010, at(1020)).status == "imported"  # holds less: both kept
        assert len(db.runs()) == 2

    def test_a_window_across_a_restart_is_no_part_of_the_run_s_duration(self, db):
        """A server down for 13 minutes: the window from the last scrape before to the first after its
        restart spans the outage, and the saved duration had been 1,406 s for 600 s of serving (an
        SRE's pass). Its counts stand (from the restart), its time is left out."""
        scrapes = [*SCRAPES, (1800.0, exposition(40, [30, 20], running=3, generation=300))]  # counters fell
        recorded(db, scrapes=scrapes)
        db.save_live_run(SOURCE, 1000, at(1800))
        run = db.runs().iloc[0]
        assert run.duration_s == 20 and json.loads(run.extra)["counter_resets"] == 1

    def test_one_run_per_model_unless_one_is_chosen(self, db):
        two = [(1000.0, exposition(10, [5]) + exposition(20, [4], model="other")),
               (1010.0, exposition(30, [15]) + exposition(60, [20], model="other"))]
        recorded(db, "two.prom", two)
        assert db.save_live_run("two.prom", 1000, 1010).runs == 2
        assert db.save_live_run("two.prom", 1000, 1010, model="other").runs == 1
        assert sorted(db.runs().target_model) == ["m", "other", "other"]

    @pytest.mark.parametrize("start, end, model", [(1011, 1019, None), (1000, 1020, "nobody"), (2000, 3000, None)])
    def test_a_range_without_windows_is_refused(self, db, start, end, model):
        recorded(db)
        with pytest.raises(StoreError) as info:
            db.save_live_run(SOURCE, start, end, model=model)
        assert info.value.key == "store.live_no_windows" and SOURCE in str(info.value)
        assert db.runs().empty and db.imports().empty

    def test_a_range_without_windows_for_any_model_is_said_in_the_reader_s_language(self, db):
        recorded(db)
        with pytest.raises(StoreError) as info:
            db.save_live_run(SOURCE, 2000, 3000)
        assert in_vietnamese(info.value, "(model: any)", "store.any_model")

    def test_the_console_sees_the_live_tables_as_they_grow(self, db):
        recorded(db, scrapes=SCRAPES[:2])
        assert db.query("SELECT count(*) AS n FROM windows").frame.n[0] == 1
        db.record_scrape(SOURCE, prom.parse(*reversed(SCRAPES[2])))
        assert db.query("SELECT count(*) AS n FROM windows").frame.n[0] == 2  # the copy is made again
        assert db.query("SELECT count(*) AS n FROM snapshots").frame.n[0] == 21
        frame = db.query(explorer.EXAMPLE_QUERIES["live_windows"]).frame
        assert frame[["running", "windows"]].values.tolist() == [[2, 1], [6, 1]]
        assert frame.acceptance_length.tolist() == pytest.approx([1 + 80 / 50, 1 + 270 / 200])


class TestExamples:
    def test_an_import_is_the_user_s_or_an_example_and_nothing_else(self, db):
        with pytest.raises(ValueError):
            db.import_file("x.csv", a_csv(2), origin="examples")
        assert db.imports().empty

    def test_remove_examples_spares_a_users_file_of_the_same_name_pattern(self, db):
        seeded = db.seed_examples(sorted(EXAMPLES.glob("*.csv")))
        assert [r.status for r in seeded] == ["imported"]
        db.import_file("examples/mine.csv", a_csv(4))
        db.import_file("sd.json", (FIXTURES / "vllm_bench_spec_decode.json").read_bytes())
        assert db.remove_examples() == 48
        assert sorted(db.imports().source_file) == ["examples/mine.csv", "sd.json"]
        assert sorted(db.runs().source_file) == ["examples/mine.csv", "sd.json"]
        assert db.request_summary().requests.sum() == 3
        assert db.remove_examples() == 0
        assert db.seed_examples(sorted(EXAMPLES.glob("*.csv"))) == []  # removed examples stay removed

    def test_remove_import_deletes_one_file_whole(self, db):
        db.import_file("a.csv", a_csv(1))
        db.import_file("sd.json", (FIXTURES / "vllm_bench_spec_decode.json").read_bytes())
        content_hash = db.imports().set_index("source_file").loc["sd.json", "content_hash"]
        assert db.remove_import(content_hash) == 1
        assert counts(db) == (1, 1, 0)

    def test_find_import_by_its_name_or_its_id(self, db):
        """The command line removes an import it names: by the file's name as imported, or by its id
        (the content hash, whole or its first 12 characters, which begin its runs' ids)."""
        db.import_file("a.csv", a_csv(1))
        db.import_file("sd.json", (FIXTURES / "vllm_bench_spec_decode.json").read_bytes())
        content_hash = db.imports().set_index("source_file").loc["sd.json", "content_hash"]
        assert db.find_import("sd.json")["content_hash"] == content_hash
        for named in (content_hash, content_hash[:12], content_hash[:20]):
            assert db.find_import(named)["source_file"] == "sd.json"
        assert db.runs().set_index("source_file").loc["sd.json", "run_id"].startswith(content_hash[:12])

    def test_find_import_names_the_choices_where_it_finds_none_or_several(self, db):
        with pytest.raises(StoreError) as info:
            db.find_import("a.csv")
        assert info.value.key == "store.no_imports"
        db.import_file("a.csv", a_csv(1))
        db.import_file("a.csv", a_csv(2))  # the same name, another content: a second import
        db.import_file("b.csv", a_csv(3))
        with pytest.raises(StoreError) as info:
            db.find_import("c.csv")
        assert info.value.key == "store.no_such_import" and info.value.params["files"] == "a.csv, b.csv"
        with pytest.raises(StoreError) as info:
            db.find_import(db.imports().content_hash[0][:11])  # shorter than an id: no prefix of it matches
        assert info.value.key == "store.no_such_import"
        with pytest.raises(StoreError) as info:
            db.find_import("a.csv")
        ids = [h[:12] for h in db.imports().set_index("source_file").loc["a.csv", "content_hash"]]
        assert info.value.key == "store.ambiguous_import" and info.value.params["count"] == 2
        assert all(short in str(info.value) for short in ids) and "Nothing was removed" in str(info.value)
        assert "Không có gì bị xoá" in i18n.message(info.value, "vi")
        assert counts(db) == (3, 3, 0)

    def test_find_import_lists_at_most_ten_stored_names(self, db):
        for value in range(12):
            db.import_file(f"f{value:02}.csv", a_csv(value))
        with pytest.raises(StoreError) as info:
            db.find_import("nope.csv")
        assert info.value.params["files"] == ", ".join(f"f{value:02}.csv" for value in range(10)) + " …"


def hold(path: Path, read_only: bool = False, seconds: float = 60) -> subprocess.Popen:
    """Another process with the file open in plain DuckDB for ``seconds``; returns once it has it."""
    code = (f"import duckdb, time; con = duckdb.connect({str(path)!r}, read_only={read_only!r}); "
            f"print('held', flush=True); time.sleep({seconds})")
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    return holder


def ingest(database: Path, *files: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "specviz", "ingest", *map(str, files), "--db", str(database)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def imported(proc: subprocess.Popen) -> list[str]:
    """The files an ``ingest`` process reports as imported; it must have exited 0."""
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, (out, err)
    return [entry["file"] for entry in json.loads(out)["imported"]]


class TestSharedFile:
    """The file is held only while an operation runs: other processes can write it in between."""

    def test_no_connection_is_held_between_calls(self, tmp_path):
        path = tmp_path / "s.duckdb"
        s = Store(path)
        s.import_file("a.csv", a_csv(1))
        s.runs(), s.imports(), s.request_summary(), s.schema_version
        assert s.query("SELECT count(*) AS n FROM runs").frame.n[0] == 1
        # Plain DuckDB, which does not wait: it gets the file for writing at once.
        subprocess.run([sys.executable, "-c", f"import duckdb; duckdb.connect({str(path)!r}).close()"],
                       check=True, timeout=60)
        s.close()

    def test_kept_reads_follow_the_writes_of_other_processes(self, tmp_path):
        """shown_runs() and imports() are kept between calls and read again once an import or a
        removal, of another process or another Store, changed the tables."""
        path = tmp_path / "k.duckdb"
        s = Store(path)
        s.import_file("a.csv", a_csv(1))
        shown = lambda: s.shown_runs().frame["concurrency"]  # noqa: E731
        mine = s.shown_runs().frame
        mine["concurrency"] = 99.0  # a caller's change stays its own
        assert list(shown()) == [1.0]
        other_file = tmp_path / "b.csv"
        other_file.write_bytes(a_csv(2))
        assert len(imported(ingest(path, other_file))) == 1
        assert sorted(shown()) == [1.0, 2.0] and len(s.imports()) == 2
        other = Store(path)
        assert other.remove_import(s.imports()["content_hash"].iloc[0]) == 1
        assert list(shown()) == [2.0] and len(s.imports()) == 1
        other.close()
        s.close()

    def test_a_writer_that_holds_the_file_past_the_timeout(self, tmp_path):
        path = tmp_path / "held.duckdb"
        s = Store(path, lock_timeout_s=0.5)
        holder = hold(path)
        try:
            started = time.monotonic()
            with pytest.raises(StoreError) as info:
                s.import_file("a.csv", a_csv(1))
            assert time.monotonic() - started >= 0.5
            assert info.value.key == "store.locked"
            assert str(info.value) == (f"The store {path} stayed locked by another process for 0.5 s: "
                                       "close the other program or try again.")
            with pytest.raises(StoreError, match="stayed locked by another process"):
                s.runs()  # a read waits for a writer too
            with pytest.raises(StoreError, match="stayed locked by another process"):
                Store(path, lock_timeout_s=0.5)
        finally:
            holder.kill()
            holder.wait()
        assert s.import_file("a.csv", a_csv(1)).status == "imported"  # free again: nothing was left behind
        s.close()

    def test_a_write_waits_for_another_process_read_then_goes_in(self, tmp_path):
        path = tmp_path / "r.duckdb"
        s = Store(path)
        reader = hold(path, read_only=True, seconds=1)
        started = time.monotonic()
        assert s.import_file("a.csv", a_csv(1)).status == "imported"
        assert time.monotonic() - started > 0.5  # it waited for the read
        assert reader.wait(timeout=60) == 0
        s.close()

    def test_reads_of_another_process_let_imports_through(self, tmp_path):
        """A process reading over and over, as an app's reruns do, holds the file only for each read."""
        path = tmp_path / "loop.duckdb"
        Store(path).close()
        code = textwrap.dedent(f"""
            import signal, sys, time
            sys.path.insert(0, {str(ROOT)!r})
            from specviz.results.store import Store
            signal.signal(signal.SIGTERM, lambda *_: sys.exit())  # an exit that cleans up after itself
            s = Store({str(path)!r})
            print("reading", flush=True)
            while True:
                s.runs(), s.imports()
                time.sleep(0.02)
        """)
        reader = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
        try:
            assert reader.stdout.readline().strip() == "reading"
            s = Store(path, lock_timeout_s=5)
            assert [s.import_file(f"{i}.csv", a_csv(i)).status for i in range(3)] == ["imported"] * 3
            assert reader.poll() is None  # and the reader never failed
        finally:
            reader.terminate()
            reader.wait(timeout=60)
        s.close()

    def test_threads_and_stores_of_one_process_share_the_file(self, tmp_path):
        """DuckDB attaches a file once per database: reads and writes through two Stores of one
        file, from eight threads at once, take turns without an error."""
        path = tmp_path / "t.duckdb"
        reading, writing = Store(path), Store(path)
        errors: list[BaseException] = []

        def collect(work):
            def run():
                try:
                    work()
                except BaseException as exc:
                    errors.append(exc)
            return threading.Thread(target=run)

        threads = [collect(lambda: [(reading.runs(), reading.imports()) for _ in range(20)]) for _ in range(3)]
        threads += [collect(lambda i=i: writing.import_file(f"{i}.csv", a_csv(i))) for i in range(5)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == [] and len(reading.runs()) == 5
        reading.close()
        writing.close()

    def test_a_write_kept_waiting_by_this_process_reads_is_busy(self, tmp_path):
        s = Store(tmp_path / "b.duckdb", lock_timeout_s=0.3)
        errors: list[StoreError] = []

        def write():
            try:
                s.import_file("a.csv", a_csv(1))
            except StoreError as exc:
                errors.append(exc)

        with s._connection():  # a read of this process that outlasts the writer's patience
            writer = threading.Thread(target=write)
            writer.start()
            writer.join()
        assert [e.key for e in errors] == ["store.busy"]
        assert s.import_file("a.csv", a_csv(1)).status == "imported"
        s.close()

    def test_the_console_copy_is_made_again_when_another_process_imports(self, tmp_path):
        path = tmp_path / "c.duckdb"
        s = Store(path)
        s.import_file("a.csv", a_csv(1))
        assert s.query("SELECT count(*) AS n FROM runs").frame.n[0] == 1
        copy = s._snapshot()
        assert s._snapshot() is copy  # nothing changed: the copy is kept
        (tmp_path / "b.csv").write_bytes(a_csv(2))
        assert imported(ingest(path, tmp_path / "b.csv")) == [str(tmp_path / "b.csv")]
        assert s.query("SELECT count(*) AS n FROM runs").frame.n[0] == 2
        assert s._snapshot() is not copy
        s.close()

    @pytest.mark.browser
    def test_the_command_line_imports_while_the_app_serves_the_file(self, tmp_path, monkeypatch):
        """The app, run as Streamlit runs it (its script in this process, the command line in
        others), that has opened, seeded and read the store, and written to it, holds no lock
        between reruns: one import, then two at once, from the command line go in."""
        from streamlit.testing.v1 import AppTest

        files = []
        for i in range(4):
            files.append(tmp_path / f"run{i}.csv")
            files[-1].write_bytes(a_csv(i + 1))
        database = tmp_path / "shared.duckdb"
        monkeypatch.setenv("SPECVIZ_DB", str(database))
        examples_note = i18n.t("exp.examples_note", "en")

        def shows_examples(app: AppTest) -> bool:
            assert not app.exception, [e.value for e in app.exception]
            return any(examples_note in box.value for box in app.info)

        app = AppTest.from_file(APP, default_timeout=60)
        app.run()
        app.switch_page(f"{PAGES}/results.py")
        assert shows_examples(app.run())
        assert imported(ingest(database, files[0])) == [str(files[0])]
        both = [ingest(database, files[1]), ingest(database, files[2])]
        assert [imported(p) for p in both] == [[str(files[1])], [str(files[2])]]
        app.button(key="remove_examples").click()  # the app writes in between
        assert not shows_examples(app.run())
        assert imported(ingest(database, files[3])) == [str(files[3])]
        reader = Store(database)  # a third process reads while the app serves
        assert sorted(reader.imports().source_file) == [str(f) for f in files]
        reader.close()
        app.run()
        assert not app.exception and not [e for e in app.error if "stayed locked" in e.value]


csv_cells = st.one_of(st.integers(-10**20, 10**20), st.floats(allow_nan=True, allow_infinity=True),
                      st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=6))
csv_headers = st.lists(st.sampled_from(["concurrency", "ttft_ms", "p99_itl_ms", "model", "acceptance_rate",
                                        "output_throughput", "x", "latency", "gamma", "workload", "Ünïcode"]),
                       min_size=1, max_size=6)


# The two fuzz classes below check the store's side: a refused file writes nothing and what goes in
# is bounded. Each example is a DuckDB import (about 0.25 s here), so they run 30 examples each; the
# parsers themselves are fuzzed in process at 60 to 200 examples (tests/test_importers*.py).
class TestFuzzedCsv:
    @settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(csv_headers, st.lists(st.lists(csv_cells, min_size=6, max_size=6), max_size=5))
    def test_never_crashes_and_never_writes_part(self, db, headers, rows):
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        writer.writerow(headers)
        for row in rows:
            writer.writerow(row[:len(headers)])
        before = counts(db)
        try:
            result = db.import_file("fuzz.csv", buffer.getvalue().encode())
        except importers.IngestError:
            assert counts(db) == before
            return
        if result.status == "imported":
            assert len(db.runs()) == before[0] + result.runs
            numeric = db.runs()[["concurrency", "output_throughput"]].dropna(how="all")
            assert (numeric.fillna(0) >= 0).all().all()


def nested(levels: int, inner: bytes = b"1") -> bytes:
    return b"[" * levels + inner + b"]" * levels


def csv_bytes(*rows: list) -> bytes:
    buffer = io.StringIO()
    csv.writer(buffer).writerows(rows)
    return buffer.getvalue().encode()


PAYLOAD = "![x](http://127.0.0.1:9/x.png)"
FORMULA = '=HYPERLINK("http://127.0.0.1:9","y")'
HTML = "<img src=x onerror=alert(1)>"
# Hostile files of every format: (name, content, None if it goes in, else a part of its error).
HOSTILE = [
    # vllm bench, JSON and JSON lines
    ("vllm_deep.json", b'{"completed": 1, "x": ' + nested(100_000) + b"}", "nested too deeply"),
    # As deep as the caller's own stack leaves room for: a test runner's worker takes some of the ~1,000.
    ("vllm_deep_900.json", b'{"completed": 1, "x": ' + nested(900) + b"}", None),
    ("vllm_digits_4000.json", b'{"completed": ' + b"9" * 4_000 + b"}", None),
    ("vllm_digits_5000.json", b'{"completed": 1, "x": ' + b"9" * 5_000 + b"}", "more than 4,300 digits"),
    ("vllm_digits_400.json", b'{"completed": 1, "mean_ttft_ms": -' + b"9" * 400 + b"}", None),
    ("vllm_overflow.json", b'{"completed": 1, "duration": 1e999, "mean_itl_ms": 1e308, "request_rate": -1e999}', None),
    ("vllm_non_finite.json", b'{"completed": 1, "request_rate": Infinity, "x": [NaN, -Infinity], "y": {"z": NaN}}',
     None),
    ("vllm_strings.json", json.dumps({"completed": "many", "request_throughput": "1,5", "mean_ttft_ms": "NaN",
                                      "spec_decode_acceptance_rate": "61.5%", "max_concurrency": "16"}).encode(), None),
    ("vllm_objects.json", json.dumps({"completed": {"a": 1}, "ttfts": {"a": 1}, "itls": "x", "input_lens": 5,
                                      "spec_decode_per_position_acceptance_rates": {"0": 0.5},
                                      "label": ["a"], "model_id": {"b": [1]}}).encode(), None),
    ("vllm_detail_junk.json", json.dumps({"completed": 2, "ttfts": [0.1, "x", None, [1], {"a": 1}, True, 10**400],
                                          "itls": [[1, [2]], None, "abc", [{"a": 1}]], "input_lens": [None, "1"],
                                          "output_lens": [[1]]}).encode(), None),
    ("vllm_markup.json", json.dumps({"completed": 1, "label": PAYLOAD, "model_id": FORMULA, "gpu": HTML,
                                     FORMULA: PAYLOAD, HTML: {"**": "`x`"}, "deployment": "$$x^2$$"}).encode(), None),
    ("vllm_lone_surrogate.json", b'{"completed": 1, "label": "\\ud800", "\\udc00": ["\\ud83d"]}', None),
    ("vllm_jsonl_mixed.jsonl", b'{"completed": 1}\n[1, 2]\n{"completed": 2}\n', "ingest.record_shape"),
    ("vllm_jsonl_unknown.jsonl", b'{"completed": 1}\n{"something": "else"}\n', "ingest.record_shape"),
    ("vllm_jsonl_truncated.jsonl", b'{"completed": 1}\n{"completed": ', "ends mid-record at line 2"),
    ("vllm_nul.jsonl", b'{"completed": 1}\n' + b"\x00" * 8, "binary"),
    ("vllm_nul_late.json", b'{"completed": 1, "x": "' + b"a" * 70_000 + b'\x00"}', "breaks at line 1"),
    ("top_level_array.json", b"[]", "ingest.unknown_format"),
    ("utf16.json", '{"completed": 1}'.encode("utf-16"), "UTF-16"),
    ("utf16le.json", '{"completed": 1}'.encode("utf-16-le"), "binary"),
    ("utf8_bom.json", b'\xef\xbb\xbf{"completed": 1}', None),
    ("latin1.json", '{"completed": 1, "label": "café"}'.encode("latin-1"), "not UTF-8"),
    # GuideLLM
    ("guidellm_not_a_list.json", b'{"benchmarks": "x"}', "ingest.unknown_format"),
    ("guidellm_scalars.json", b'{"benchmarks": [1, "x", null]}', "ingest.unknown_format"),
    ("guidellm_odd.json", json.dumps({"benchmarks": [{
        "metrics": {"m": {"successful": []}, "time_to_first_token_ms": {"successful": {
            "mean": "fast", "percentiles": "x", "median": [1]}}},
        "args": {"strategy": {"type_": {"a": 1}, "rate": [1], "streams": 10**400}}, "worker": [],
        "request_totals": {"successful": -3, "errored": 1e300}, "duration": "long"}]}).encode(), None),
    ("guidellm_deep.json", b'{"benchmarks": [' + nested(100_000) + b"]}", "nested too deeply"),
    ("guidellm_empty.json", b'{"benchmarks": []}', "ingest.unknown_format"),  # no benchmark says it is GuideLLM's
    # genai-perf, CSV and JSON
    ("genai_field.csv", b"Metric,avg\nTime To First Token (ms)," + b"1" * 200_000 + b"\n", "malformed"),
    ("genai_inf.csv", b'Metric,avg,p99\nTime To First Token (ms),1e999,-5\nInter Token Latency (ms),"1,,,2",x\n',
     None),
    ("genai_quote.csv", b'Metric,avg\n"Time To First Token (ms),1\n', "holds none of the figures specviz reads"),
    ("genai_blocks.csv", b"Metric\n\n\n,,,\nMetric,Value\nRequest Throughput (per sec)\n", "no genai-perf metric"),
    ("genai_markup.csv", f"Metric,avg\n{FORMULA},{PAYLOAD}\n{HTML},1\nTime To First Token (ms),2\n".encode(), None),
    ("genai_odd.json", json.dumps({"time_to_first_token": {"unit": "ms", "avg": [1], "p99": {"a": 1}},
                                   "request_throughput": {"unit": "x", "avg": 10**400},
                                   "input_config": {"a": [{"concurrency": "x"}], "model": {"m": 1}}}).encode(), None),
    ("genai_deep_config.json", b'{"x": {"unit": "ms"}, "input_config": ' + b'{"a": ' * 900 + b"1" + b"}" * 900 + b"}",
     None),
    # llmperf
    ("llmperf_odd.json", json.dumps({"results_x": 1, "num_concurrent_requests": "sixteen", "name": ["a"],
                                     "model": {"x": 1}, "results_ttft_s_mean": 1e308,
                                     "results_num_completed_requests": 2**60}).encode()[:-1]
     + b', "results_num_completed_requests_per_min": ' + b"9" * 400 + b"}", None),
    # a user's own CSV
    ("user_formula.csv", csv_bytes(["model", "concurrency", "output_throughput"], [FORMULA, 4, "=1+1"],
                                   [PAYLOAD, "=cmd|x", 5], [HTML, "@SUM(1)", "+5"]), None),
    ("user_formula_header.csv", csv_bytes([FORMULA, HTML], [1, 2]), "no recognisable result columns"),
    ("user_latin1.csv", "model,concurrency,output_throughput\ncafé,1,2\n".encode("latin-1"), "not UTF-8"),
    ("user_latin1_late.csv", b"model,concurrency,output_throughput\n" + b"a,1,2\n" * 12_000
     + "é,1,2\n".encode("latin-1"), "not UTF-8"),
    ("user_utf16.csv", "concurrency,output_throughput\n1,2\n".encode("utf-16"), "UTF-16"),
    ("user_nul_late.csv", b"concurrency,output_throughput\n" + b"1,2\n" * 20_000 + b"1,\x00\n", None),
    ("user_bom.csv", b"\xef\xbb\xbfconcurrency,output_throughput\n1,2\n", None),
    ("user_header_only.csv", b"concurrency,ttft_ms\n", "no rows"),
    ("user_non_finite.csv", b"concurrency,output_throughput,num_requests,request_rate\ninf,1e400,nan,inf\n"
                            b"-1,-inf,1e30,1\n", None),
    ("user_long_line.csv", b"concurrency,output_throughput\n1," + b"9" * 3_000_000 + b"\n", "is longer than the 2 MiB"),
    ("user_wide.csv", b",".join(b"c%d" % i for i in range(2_000)) + b"\n" + b"1," * 1_999 + b"1\n",
     "more than 1,000 columns"),
    ("user_quotes.csv", b'concurrency,ttft_ms\n"1,2\n3,"4\n', "ingest.unknown_format"),  # one field under two names
    ("user_old_mac.csv", b"concurrency,output_throughput\r1,2\r3,4\r", None),
    ("user_duplicates.csv", b"concurrency,concurrency,ttft_ms,ttft_ms\n1,2,3,4\n", None),
    ("blank.csv", b"   \n\t\n", "empty"),
]


def refused_for(error: importers.IngestError, reason: str) -> bool:
    """Whether an error has the message key ``reason``, or says ``reason`` in English."""
    return error.key == reason or reason in str(error)


class TestHostileFiles:
    @pytest.mark.parametrize("name, data, refusal", HOSTILE, ids=[h[0] for h in HOSTILE])
    def test_each_goes_in_or_is_refused_alone(self, db, name, data, refusal):
        """An ImportResult or an IngestError naming the file, never another exception; a refused
        file writes nothing, and the store takes the next file."""
        before = counts(db)
        try:
            result = db.import_file(name, data, max_bytes=10_000_000)
        except importers.IngestError as exc:
            assert refusal and refused_for(exc, refusal), (exc.key, str(exc))
            assert exc.params["file"] == name and str(exc).startswith(f"{name}: ")
            assert counts(db) == before
        else:
            assert refusal is None and result.status == "imported", result
            assert counts(db) == (before[0] + result.runs, before[1] + 1, before[2] + result.requests)
            for extra in db.runs().extra:  # strict JSON: DuckDB's JSON type holds no NaN or Infinity
                json.loads(extra, parse_constant=pytest.fail)
        good = db.import_file("good.json", (SAMPLES / "guidellm_benchmarks.json").read_bytes())
        assert good.status == "imported"

    def test_non_finite_csv_numbers_are_left_empty(self, db):
        db.import_file("nf.csv", b"concurrency,output_throughput,num_requests,request_rate\n"
                                 b"inf,1e400,nan,inf\n4,-inf,1e30,2\n")
        runs = db.runs()
        assert runs.concurrency.isna().tolist() == [True, False] and runs.output_throughput.isna().all()
        assert runs.num_requests.isna().all()  # NaN, and past BIGINT
        assert runs.request_rate.tolist() == [float("inf"), 2.0]  # an unbounded rate, as vllm writes it

    def test_markup_and_formulas_are_stored_as_written(self, db):
        """Escaping them is the job of whatever shows or exports them."""
        for name in ("vllm_markup.json", "user_formula.csv"):
            db.import_file(name, next(data for n, data, _ in HOSTILE if n == name))
        runs = db.runs()
        assert runs[["label", "target_model", "gpu"]].iloc[0].tolist() == [PAYLOAD, FORMULA, HTML]
        assert runs.target_model.iloc[1:].tolist() == [FORMULA, PAYLOAD, HTML]
        assert json.loads(runs.extra.iloc[0])[FORMULA] == PAYLOAD

    def test_unrecognised_columns_have_their_own_error_type(self, db):
        with pytest.raises(importers.UnrecognisedColumnsError) as info:
            db.import_file("raw.csv", b"conc,tput,notes\n4,100,x\n")
        assert info.value.columns == ["conc", "tput", "notes"] and isinstance(info.value, importers.IngestError)
        with pytest.raises(importers.IngestError) as other:
            db.import_file("empty.csv", b"concurrency,ttft_ms\n")
        assert not isinstance(other.value, importers.UnrecognisedColumnsError)


class TestImportPath:
    def test_a_regular_file_and_a_link_to_one(self, db, tmp_path):
        link = tmp_path / "link.json"
        link.symlink_to(SAMPLES / "guidellm_benchmarks.json")
        assert db.import_path(link).status == "imported"
        assert db.runs().source_file.tolist() == [str(link)]

    @pytest.mark.parametrize("suffix, data", [(".json", (SAMPLES / "guidellm_benchmarks.json").read_bytes()),
                                              (".csv", b"concurrency,output_throughput\n1,2\n")])
    def test_a_name_that_is_not_utf8(self, db, tmp_path, suffix, data):
        path = tmp_path / os.fsdecode(b"\xffname" + suffix.encode())
        path.write_bytes(data)
        assert db.import_path(path).status == "imported"
        assert db.runs().source_file.tolist() == [f"{tmp_path}/\ufffdname{suffix}"]

    @pytest.mark.parametrize("kind", ["directory", "link to a directory", "missing", "dangling link"])
    def test_what_is_not_a_readable_regular_file_is_refused(self, db, tmp_path, kind):
        path = tmp_path / "x.json"
        if kind == "directory":
            path.mkdir()
        elif kind == "link to a directory":
            path.symlink_to(tmp_path)
        elif kind == "dangling link":
            path.symlink_to(tmp_path / "nowhere")
        key = "ingest.not_regular.directory" if "directory" in kind else "ingest.unreadable"
        with pytest.raises(importers.IngestError) as info:
            db.import_path(path)
        assert info.value.key == key and str(info.value).startswith(f"{path}: ")

    @pytest.mark.parametrize("checked", [True, False], ids=["checked file", "missing"])
    @pytest.mark.parametrize("name", ["r*.csv", "r?.csv", "r[x].csv", "~/x.csv"])
    def test_the_checked_file_is_imported_never_a_name_duckdb_would_expand(self, db, expansion_decoys,
                                                                            name, checked):
        """DuckDB's read_csv expands globs and ``~`` in a path: it is given the bytes that were
        checked, never the name, so neither rx.csv nor $HOME/x.csv can go in instead."""
        path = Path(name)
        if checked:
            path.parent.mkdir(exist_ok=True)
            path.write_text("output_throughput,label\n1,checked\n")
            assert db.import_path(path).status == "imported"
            assert db.runs()[["source_file", "label"]].values.tolist() == [[name, "checked"]]
        else:
            with pytest.raises(importers.IngestError, match="No such file or directory"):
                db.import_path(path)
            assert counts(db) == (0, 0, 0)

    def test_a_file_changed_after_it_was_read_is_imported_as_read(self, db, tmp_path, monkeypatch):
        """What DuckDB reads is the content that was checked and hashed, not the path again."""
        path = tmp_path / "r.csv"
        path.write_text("output_throughput,label\n1,checked\n")
        parse = importers.parse

        def parse_then_swap(name, data):
            parsed = parse(name, data)
            path.unlink()
            os.mkfifo(path)  # a read of the path now would block
            return parsed

        monkeypatch.setattr(importers, "parse", parse_then_swap)
        assert db.import_path(path).status == "imported"
        assert db.runs().label.tolist() == ["checked"]

    def test_a_file_written_to_while_it_is_imported_is_refused(self, db, tmp_path, monkeypatch):
        """What is stored is what was hashed: a file appended to between its parse and the commit (a
        benchmark still writing it; DuckDB reads a CSV's rows in the transaction) is refused, and
        nothing of it is stored."""
        path = tmp_path / "r.csv"
        path.write_text("output_throughput,label\n1,checked\n")
        parse = importers.parse

        def parse_then_append(name, data):
            parsed = parse(name, data)
            with open(path, "a") as file:
                file.write("2,later\n")
            return parsed

        monkeypatch.setattr(importers, "parse", parse_then_append)
        with pytest.raises(importers.IngestError) as info:
            db.import_path(path)
        assert info.value.key == "ingest.changed" and str(info.value).startswith(f"{path}: ")
        assert counts(db) == (0, 0, 0)
        monkeypatch.undo()
        assert db.import_path(path).status == "imported"  # complete now: imported whole
        assert sorted(db.runs().label) == ["checked", "later"]

    def test_a_file_on_disk_imported_again_is_skipped(self, db, tmp_path):
        """A file on disk is hashed beside its parse: whether it was imported is asked after."""
        path = tmp_path / "b.json"
        path.write_bytes((SAMPLES / "guidellm_benchmarks.json").read_bytes())
        first = db.import_path(path)
        again = db.import_path(SAMPLES / "guidellm_benchmarks.json")
        assert (first.status, again.status, again.message) == ("imported", "skipped", f"already imported as {path}")
        assert again.content_hash == first.content_hash and len(db.runs()) == 1

    def test_the_size_limit_is_checked_before_reading(self, db, tmp_path):
        path = tmp_path / "huge.json"
        with open(path, "wb") as file:
            file.truncate(10**12)  # sparse: a terabyte that takes no disk and would fit in no memory
        with pytest.raises(importers.IngestError, match="1,000,000,000,000 bytes is over the 200,000,000-byte"):
            db.import_path(path, max_bytes=200_000_000)


# Keys of every format, so that generated documents reach every parser's branches.
FORMAT_KEYS = ["request_throughput", "output_throughput", "mean_ttft_ms", "p99_itl_ms", "completed", "failed",
               "max_concurrency", "request_rate", "duration", "label", "model_id", "backend",
               "spec_decode_acceptance_rate", "spec_decode_acceptance_length",
               "spec_decode_per_position_acceptance_rates", "ttfts", "itls", "input_lens", "output_lens",
               "benchmarks", "metrics", "successful", "percentiles", "median", "mean", "p90", "args", "strategy",
               "type_", "rate", "streams", "worker", "backend_model", "request_totals", "errored",
               "time_to_first_token_ms", "request_latency", "unit", "avg", "p99", "input_config", "concurrency",
               "model", "model_names", "time_to_first_token", "request_count", "num_concurrent_requests", "name",
               "results_ttft_s_mean", "results_num_completed_requests", "results_num_completed_requests_per_min"]
json_leaves = (st.none() | st.booleans() | st.integers() | st.floats()
               | st.sampled_from([10**400, -10**4_000, 1e308, "1,234.5", "inf", "NaN", PAYLOAD, FORMULA, HTML,
                                 "\ud800"])
               | st.text(max_size=10))
json_docs = st.recursive(json_leaves, lambda inner: st.lists(inner, max_size=4)
                         | st.dictionaries(st.sampled_from(FORMAT_KEYS) | st.text(max_size=5), inner, max_size=5),
                         max_leaves=25)
# What makes each format recognised, so that most documents reach a parser (random keys may undo it).
MARKERS = [{"completed": 1}, {"request_throughput": 1.5, "ttfts": [0.1], "itls": [[0.01]]},
           {"num_concurrent_requests": 4, "results_x": 1}, {"time_to_first_token": {"unit": "ms", "avg": 1}}, {}]
guidellm_benchmarks = st.fixed_dictionaries(
    {"metrics": st.dictionaries(st.sampled_from(["time_to_first_token_ms", "request_latency", "requests_per_second"]),
                                st.fixed_dictionaries({"successful": json_docs}), max_size=3)},
    optional={"args": json_docs, "worker": json_docs, "request_totals": json_docs, "duration": json_leaves})


def marked(markers: list[dict]) -> st.SearchStrategy[dict]:
    return (st.tuples(st.sampled_from(markers), st.dictionaries(st.sampled_from(FORMAT_KEYS), json_docs, max_size=8))
            .map(lambda pair: {**pair[0], **pair[1]}).filter(bool))


one_document = st.one_of(marked(MARKERS),
                         st.fixed_dictionaries({"benchmarks": st.lists(guidellm_benchmarks, max_size=3)}))
# One document of any format, or JSON lines of vllm records.
files = st.one_of(one_document.map(lambda doc: [doc]), st.lists(marked(MARKERS[:2]), min_size=2, max_size=3))


class TestFuzzedJson:
    @settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(files, st.integers(0, 3_000), st.booleans())
    def test_never_crashes_and_never_writes_part(self, db, docs, depth, deep):
        """Documents mixing every format's keys with random values, as JSON or JSON lines, some
        with a value nested ``depth`` levels deep: an ImportResult or an IngestError, nothing else."""
        lines = [json.dumps(doc).encode() for doc in docs]
        if deep:
            lines[0] = b'{"deep": ' + nested(depth) + b", " + lines[0][1:]
        before = counts(db)
        try:
            result = db.import_file("fuzz.json", b"\n".join(lines))
        except importers.IngestError as exc:
            assert str(exc).startswith("fuzz.json: ")
            assert counts(db) == before
            return
        if result.status == "imported":
            assert counts(db)[0] == before[0] + result.runs
            numeric = db.runs().select_dtypes("number").drop(columns=["request_rate"])
            assert (((numeric >= 0) & (numeric < float("inf"))) | numeric.isna()).all().all()


class TestImportMemory:
    def test_a_dense_per_request_file_stays_within_its_bound(self, tmp_path):
        """10 MB of --save-detailed arrays, 1.1M requests with empty ITL lists, measured in a child
        process: built as a dict per request, the import took 570 MB beyond the file; built column
        by column, about 250 MB when this test was written and 357-369 MB on 2026-12-04, above the
        296 MB the memory limit was checked against, which now charges each request's row too
        (vllm._REQUEST_BYTES). The peak stays below that estimate, and below 450 MB."""
        n = 1_111_111
        zeros = b"0," * (n - 1) + b"0"
        path = tmp_path / "detailed.json"
        path.write_bytes(b'{"request_throughput": 1, "ttfts": [' + zeros + b'], "itls": [' + b"[]," * (n - 1)
                         + b'[]], "input_lens": [' + zeros + b'], "output_lens": [' + zeros + b"]}")
        out = in_child(tmp_path, 'print(store.import_file("detailed.json", data).requests, end=" ")',
                       setup=f"data = open({str(path)!r}, 'rb').read()")
        requests, taken, estimate = map(int, out.split())
        assert requests == n and taken < estimate < 450_000_000, (taken, estimate)

    @pytest.mark.parametrize("shape", ["genai-perf header repeated", "unknown columns per request",
                                       "unknown columns as runs", "many columns, few rows"])
    def test_the_estimate_bounds_what_a_wide_csv_takes(self, tmp_path, shape):
        """Files whose header is repeated in every row's extra (genai-perf's metric rows, a user
        CSV's unknown columns): the peak (VmHWM) of the import, measured in a child process, stays
        below the estimate that the memory limit is checked against."""
        if shape == "genai-perf header repeated":
            text = ("Metric," + ",".join(f"h{i}".ljust(1_000, "x") for i in range(1_000)) + "\n"
                    + "".join(f"m{i}" + "," * 1_000 + "\n" for i in range(30))
                    + "\nMetric,Value\nRequest Throughput (per sec),1\n")  # a figure: a run to store
        else:
            rows, width = (3, 4) if shape == "many columns, few rows" else (300, 60)
            first = "output_throughput," if shape == "unknown columns as runs" else "ttft_ms,"
            text = (first + ",".join(f"c{i}_".ljust(width, "x") for i in range(999)) + "\n"
                    + ("1" + "," * 999 + "\n") * rows)
        path = tmp_path / "wide.csv"
        path.write_text(text)
        status, taken, estimate = in_child(tmp_path, 'print(store.import_file("wide.csv", data).status, end=" ")',
                                           setup=f"data = open({str(path)!r}, 'rb').read()").split()
        assert status == "imported" and int(taken) < int(estimate), (taken, estimate)

    def test_a_per_request_csv_read_from_a_path_stays_within_its_estimate(self, tmp_path):
        """2M requests of 48 runs in eight columns (100 MB), imported from a path in a child process:
        the peak (VmHWM) stays below the estimate (354-427 MB of 479; staged, 2M rows took 540 MB)."""
        path = tmp_path / "requests.csv"
        rng = random.Random(0)
        lines = [f"{rng.choice(['base', 'eagle'])},{rng.choice(['chat', 'code', 'json'])},{2 ** rng.randrange(8)},"
                 f"{rng.gammavariate(2, 20):.6f},{rng.gammavariate(5, 2):.6f},{rng.gammavariate(4, 300):.4f},"
                 f"{rng.randrange(64, 2048)},{rng.randrange(16, 1024)}\n" for _ in range(100_000)]
        path.write_bytes(b"label,workload,concurrency,ttft_ms,itl_ms,e2el_ms,input_tokens,output_tokens\n"
                         + "".join(lines).encode() * 20)
        work = f"print(store.import_path(Path({str(path)!r})).status, end=' ')"
        status, taken, estimate = in_child(tmp_path, work).split()
        assert status == "imported" and int(taken) < int(estimate), (taken, estimate)

    def test_a_file_read_from_a_path_is_not_held_in_memory(self, tmp_path, monkeypatch):
        """200 MB of requests, refused as too dense once it has been copied, hashed and counted a
        MiB at a time: the import's peak grows by about 3 MB (read whole, by the file's 200)."""
        monkeypatch.setenv("SPECVIZ_IMPORT_MEMORY_BYTES", "400000000")
        path = tmp_path / "dense.csv"
        path.write_bytes(b"ttft_ms\n" + b"1\n" * 100_000_000)
        out = in_child(tmp_path, f"""
            try:
                store.import_path(Path({str(path)!r}))
            except IngestError as exc:
                print(exc.key, end=" ")""")
        key, taken, _ = out.split()
        assert key == "ingest.memory" and int(taken) < 20_000_000, taken

    def test_rows_that_become_runs_are_charged_as_runs(self, db, monkeypatch):
        """A row inserted as a run is a key of the runs table's index too: the same rows go in as
        requests and are refused as runs."""
        monkeypatch.setenv("SPECVIZ_IMPORT_MEMORY_BYTES", "410000000")
        assert db.import_file("requests.csv", b"ttft_ms\n" + b"1\n" * 700_000).requests == 700_000
        with pytest.raises(importers.IngestError, match="SPECVIZ_IMPORT_MEMORY_BYTES"):
            db.import_file("runs.csv", b"output_throughput\n" + b"1\n" * 700_000)
        with pytest.raises(importers.IngestError, match="SPECVIZ_IMPORT_MEMORY_BYTES"):  # by the user's mapping
            db.import_file("requests.csv", b"ttft_ms\n" + b"1\n" * 700_000, csv_mapping={"ttft_ms": "p50_ttft_ms"},
                           replace=True)
        assert counts(db) == (1, 1, 700_000)

    def test_the_same_file_is_refused_under_a_lower_limit(self, db, monkeypatch):
        monkeypatch.setenv("SPECVIZ_IMPORT_MEMORY_BYTES", "100000000")
        n = 1_111_111
        zeros = b"0," * (n - 1) + b"0"
        data = (b'{"request_throughput": 1, "ttfts": [' + zeros + b'], "itls": [' + b"[]," * (n - 1)
                + b'[]], "input_lens": [' + zeros + b'], "output_lens": [' + zeros + b"]}")
        with pytest.raises(importers.IngestError, match=r"about \d+ MB of memory, over the 100 MB limit"):
            db.import_file("detailed.json", data)
        assert counts(db) == (0, 0, 0)


def with_file_size_limit(size: int, code: str) -> subprocess.CompletedProcess:
    """Run ``code`` in a child process that may write no file past ``size`` bytes: every write past
    it fails as on a full disk (EFBIG)."""
    probe = textwrap.dedent(f"""
        import resource, signal, sys
        sys.path.insert(0, {str(ROOT)!r})
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, ({size}, {size}))
    """) + textwrap.dedent(code)
    return subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)


class TestStoreFiles:
    """Files that are not (writable) specviz stores: one-line message, file untouched, nothing downloaded."""

    @staticmethod
    def digest(path: Path) -> str:
        return hashlib.sha256(path.read_bytes()).hexdigest()

    def test_a_duckdb_file_of_another_application(self, tmp_path):
        other = tmp_path / "other.duckdb"
        with duckdb.connect(str(other)) as con:
            con.execute("CREATE TABLE invoices AS SELECT 1 AS id")
        before = self.digest(other)
        with pytest.raises(StoreError) as exc:
            Store(other)
        assert exc.value.key == "store.foreign" and "invoices" in str(exc.value)
        assert self.digest(other) == before

    def test_an_sqlite_file_is_refused_before_duckdb_would_load_an_extension(self, tmp_path):
        import sqlite3
        path = tmp_path / "runs.db"
        with sqlite3.connect(path) as con:
            con.execute("CREATE TABLE t (a)")
        before = self.digest(path)
        with pytest.raises(StoreError) as exc:
            Store(path)
        assert exc.value.key == "store.sqlite" and self.digest(path) == before
        assert not (Path.home() / ".duckdb" / "extensions").exists() or not list(
            (Path.home() / ".duckdb" / "extensions").rglob("sqlite*"))

    @pytest.mark.parametrize("content", [b"hello, not a database\n", bytes(range(256)) * 20])
    def test_other_files_and_folders(self, tmp_path, content):
        path = tmp_path / "x.duckdb"
        path.write_bytes(content)
        with pytest.raises(StoreError) as exc:
            Store(path)
        assert exc.value.key == "store.not_duckdb" and path.read_bytes() == content
        with pytest.raises(StoreError) as exc:
            Store(tmp_path)
        assert exc.value.key == "store.not_a_file"

    def test_a_folder_that_cannot_be_written_is_said_in_the_reader_s_language(self, tmp_path, monkeypatch):
        monkeypatch.setattr(connection.os, "access", lambda *args, **kwargs: False)  # root may write anywhere
        with pytest.raises(StoreError) as exc:
            Store(tmp_path / "new" / "specviz.duckdb")
        assert exc.value.key == "store.folder"
        assert in_vietnamese(exc.value, "not writable", "store.detail.not_writable")

    @staticmethod
    def files(path: Path) -> tuple[str | None, str | None]:
        """The digests of a store and of its WAL (None where there is none)."""
        wal = Path(f"{path}.wal")
        return (TestStoreFiles.digest(path) if path.exists() else None,
                TestStoreFiles.digest(wal) if wal.exists() else None)

    @pytest.mark.parametrize("statements, key", [
        (["CREATE VIEW v AS SELECT 42 AS answer"], "store.foreign"),
        (["CREATE MACRO m(x) AS x + 1"], "store.foreign"),
        (["CREATE SEQUENCE s"], "store.foreign"),
        (["CREATE TYPE mood AS ENUM ('a', 'b')"], "store.foreign"),
        (["CREATE SCHEMA app"], "store.foreign"),
        (["CREATE SCHEMA app", "CREATE TABLE app.t (x INT)"], "store.foreign"),
        (["CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR)", "INSERT INTO meta VALUES ('owner', 'x')"],
         "store.foreign"),
        (["CREATE TABLE meta (id INTEGER, blob VARCHAR)", "INSERT INTO meta VALUES (1, 'x')"], "store.foreign"),
        (["CREATE TABLE meta (key VARCHAR, value VARCHAR)", "INSERT INTO meta VALUES ('schema_version', '1')"],
         "store.foreign"),  # a version, but none of the tables it has
        (["CREATE TABLE meta (key VARCHAR, value VARCHAR)", "INSERT INTO meta VALUES ('schema_version', 'abc')"],
         "store.bad_version"),
        (["CREATE TABLE meta (key VARCHAR, value VARCHAR)",
          "INSERT INTO meta VALUES ('schema_version', repeat('9', 5000))"], "store.bad_version"),
    ], ids=["view", "macro", "sequence", "type", "schema", "table in a schema", "meta without a version",
            "meta of another shape", "meta without the tables", "version not a number", "version of 5000 digits"])
    @pytest.mark.parametrize("pending_wal", [False, True], ids=["checkpointed", "pending WAL"])
    def test_a_duckdb_file_of_another_application_is_never_adopted(self, tmp_path, statements, key, pending_wal):
        """Whatever another program left in a DuckDB file (also still in its WAL, which a
        read-write open would replay and checkpoint): a one-line refusal, file and WAL untouched."""
        path = tmp_path / "other.duckdb"
        make = textwrap.dedent(f"""
            import duckdb, os
            con = duckdb.connect({str(path)!r})
            if {pending_wal!r}:
                con.execute("PRAGMA disable_checkpoint_on_shutdown")
                con.execute("SET wal_autocheckpoint = '1TB'")
                con.execute("CREATE TABLE t_unseen (x INT)")
                con.execute("CHECKPOINT")
                con.execute("DROP TABLE t_unseen")
            for statement in {statements!r}:
                con.execute(statement)
            if not {pending_wal!r}:
                con.close()
            os._exit(0)  # without a close, no checkpoint: what it wrote stays in the WAL
        """)
        subprocess.run([sys.executable, "-c", make], check=True, timeout=60)
        assert Path(f"{path}.wal").exists() == pending_wal
        before = self.files(path)
        with pytest.raises(StoreError) as exc:
            Store(path)
        assert exc.value.key == key and "\n" not in str(exc.value) and "The file was not changed" in str(exc.value)
        assert self.files(path) == before

    def test_a_read_only_look_replays_a_wal_without_writing(self, tmp_path):
        """What the store's first look relies on: DuckDB opened read-only sees what the WAL holds
        and writes neither the file nor the WAL."""
        path = tmp_path / "w.duckdb"
        make = (f"import duckdb, os; con = duckdb.connect({str(path)!r}); "
                "con.execute('PRAGMA disable_checkpoint_on_shutdown'); con.execute(\"SET wal_autocheckpoint = '1TB'\"); "
                "con.execute('CREATE TABLE t AS SELECT 1 AS x'); os._exit(0)")
        subprocess.run([sys.executable, "-c", make], check=True, timeout=60)
        before = self.files(path)
        assert before[1] is not None
        with duckdb.connect(str(path), read_only=True) as con:
            assert con.execute("SELECT x FROM t").fetchall() == [(1,)]
        assert self.files(path) == before

    def test_an_empty_meta_left_by_an_interrupted_first_open_is_finished(self, tmp_path):
        path = tmp_path / "s.duckdb"
        with duckdb.connect(str(path)) as con:
            con.execute("CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR)")
        s = Store(path)
        assert s.schema_version == store.SCHEMA_VERSION
        s.close()

    def test_a_newer_store_is_left_untouched(self, tmp_path):
        path = tmp_path / "new.duckdb"
        Store(path).close()
        with duckdb.connect(str(path)) as con:
            con.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
        before = self.digest(path)
        with pytest.raises(StoreError, match="newer specviz"):
            Store(path)
        assert self.digest(path) == before

    def test_a_read_only_store_can_be_read_but_not_written(self, tmp_path):
        """On a read-only mount (root writes through file modes, not through a read-only mount):
        the store opens read-only, reads and queries work, imports are refused, nothing changes."""
        folder = tmp_path / "shared"
        folder.mkdir()
        s = Store(folder / "specviz.duckdb")
        s.import_file("g.json", (SAMPLES / "guidellm_benchmarks.json").read_bytes())
        s.close()
        before = self.digest(folder / "specviz.duckdb")
        probe = textwrap.dedent(f"""
            import json, sys
            sys.path.insert(0, {str(ROOT)!r})
            from specviz.results.store import Store, StoreError
            s = Store({str(folder / "specviz.duckdb")!r})
            from specviz.live import exposition as prom
            out = {{"read_only": s.read_only, "runs": len(s.runs()),
                    "query": int(s.query("SELECT count(*) AS n FROM runs").frame.n[0])}}
            scrape = prom.parse({(SAMPLES / "vllm_metrics_specdecode_excerpt.prom").read_text()!r}, 0.0)
            for attempt, call in (("import", lambda: s.import_file("x.json", b"{{}}")),
                                  ("record", lambda: s.record_scrape("x", scrape)),
                                  ("save", lambda: s.save_live_run("x", 0, 1)),
                                  ("new", lambda: Store({str(folder / "new" / "specviz.duckdb")!r}))):
                try:
                    call()
                except StoreError as exc:
                    out[attempt] = exc.key
            print(json.dumps(out))
        """)
        mount = f"mount --bind {folder} {folder} && mount -o remount,ro,bind {folder} {folder}"
        run = subprocess.run(["unshare", "--mount", "sh", "-c", f'{mount} && exec "$0" -c "$1"', sys.executable, probe],
                             capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr
        assert json.loads(run.stdout) == {"read_only": True, "runs": 1, "query": 1, "import": "store.read_only",
                                          "record": "store.read_only", "save": "store.read_only",
                                          "new": "store.folder"}
        assert self.digest(folder / "specviz.duckdb") == before

    def test_a_full_disk_is_said_as_one_and_the_store_goes_on_once_there_is_room(self, tmp_path):
        """A store on an 8 MB tmpfs (a private mount namespace) with 5 MB taken. Its disk full, an import, the next
        import (whose failed COMMIT was taken for another import's conflict: "another import of the
        same content did not finish") and a recorded scrape (a raw TransactionException) each say
        that the disk is full; once there is room, the same import goes in whole."""
        folder = tmp_path / "small"
        folder.mkdir()
        requests = tmp_path / "requests.csv"
        requests.write_text("concurrency,ttft_ms,itl_ms\n" + "".join(f"{i % 8},{i * 0.5},{i * 0.1}\n"
                                                                     for i in range(200_000)))
        probe = textwrap.dedent(f"""
            import json, sys
            from pathlib import Path
            sys.path.insert(0, {str(ROOT)!r})
            from specviz.live import exposition as prom
            from specviz.results.store import Store, StoreError
            folder = Path({str(folder)!r})
            s = Store(folder / "specviz.duckdb")
            out = {{"first": s.import_file("a.csv", {a_csv(1)!r}).status}}
            scrape = prom.parse({(SAMPLES / "vllm_metrics_specdecode_excerpt.prom").read_text()!r}, 0.0)
            attempts = (("requests", lambda: s.import_path(Path({str(requests)!r}))),
                        ("next", lambda: s.import_file("b.csv", {a_csv(2)!r})),
                        ("record", lambda: s.record_scrape("x", scrape)))
            for attempt, call in attempts:
                try:
                    call()
                except StoreError as exc:
                    out[attempt] = exc.key
                    out["said"] = str(exc)
            (folder / "filler").unlink()
            out["after"] = [s.import_file("b.csv", {a_csv(2)!r}).status, s.import_path(Path({str(requests)!r})).status]
            out["runs"] = len(s.runs())
            print(json.dumps(out))
        """)
        mount = f"mount -t tmpfs -o size=8m tmpfs {folder} && head -c 5000000 /dev/zero > {folder}/filler"
        run = subprocess.run(["unshare", "--mount", "sh", "-c", f'{mount} && exec "$0" -c "$1"', sys.executable, probe],
                             capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr
        out = json.loads(run.stdout)
        assert {k: out[k] for k in ("first", "requests", "next", "record")} == {
            "first": "imported", "requests": "store.disk_full", "next": "store.disk_full", "record": "store.disk_full"}
        assert "There is no room left to write the store" in out["said"] and "No space left on device" in out["said"]
        assert out["after"] == ["imported", "imported"] and out["runs"] == 10

    def test_a_full_disk_during_an_import_loses_nothing(self, tmp_path):
        """The file-size limit makes every write past it fail as a full disk would (EFBIG)."""
        db = tmp_path / "specviz.duckdb"
        Store(db).close()
        big = tmp_path / "requests.csv"
        big.write_text("concurrency,ttft_ms,itl_ms\n" + "".join(f"{i % 8},{i * 0.5},{i * 0.1}\n" for i in range(200_000)))
        run = with_file_size_limit(db.stat().st_size + 300_000, f"""
            from specviz import cli
            sys.exit(cli.main(["ingest", {str(big)!r}, "--db", {str(db)!r}]))
        """)
        assert run.returncode == 2 and "Traceback" not in run.stderr + run.stdout
        # The file is read where it lies: what hits the limit is the store's write of its rows.
        assert "There is no room left to write the store" in run.stdout and "File too large" in run.stdout
        again = Store(db)
        assert len(again.runs()) == 0 and len(again.imports()) == 0
        again.close()

    def test_a_checkpoint_that_fails_after_the_commit_keeps_the_import(self, tmp_path):
        """The file may not grow (the WAL, a file of its own, may): the import commits to the WAL
        and the checkpoint when the file is let go fails. The import was stored, and says so."""
        db = tmp_path / "specviz.duckdb"
        Store(db).close()
        rows = tmp_path / "runs.csv"
        rows.write_text("concurrency,output_throughput\n" + "".join(f"{i},{i * 1.5}\n" for i in range(300)))
        run = with_file_size_limit(db.stat().st_size, f"""
            from pathlib import Path
            from specviz.results.store import Store
            print(Store({str(db)!r}).import_path(Path({str(rows)!r})).status)
        """)
        assert (run.returncode, run.stdout) == (0, "imported\n"), run.stderr
        assert Path(f"{db}.wal").exists()  # the checkpoint did not happen
        again = Store(db)
        assert len(again.runs()) == 300
        again.close()
