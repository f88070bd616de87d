"""Tests for specviz.store: a real DuckDB file, imports that are whole or nothing, and the sandbox."""

import json
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import duckdb
import pytest
from hypothesis import given, settings, strategies as st, HealthCheck

from specviz import ingest, store
from specviz.store import Store, StoreError

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
        s = Store(tmp_path / "b.duckdb")
        s._con.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
        s.close()
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
        assert again.status == "skipped" and again.message == "already imported"
        assert len(db.runs()) == 9

    def test_spec_decode_run_and_its_requests(self, db):
        result = db.import_file("sd.json", (FIXTURES / "vllm_bench_spec_decode.json").read_bytes())
        assert result.requests == 3
        run = db.runs().iloc[0]
        assert run.acceptance_rate == pytest.approx(0.615) and list(run.per_position_acceptance) == [0.82, 0.64, 0.55, 0.45]
        summary = db.request_summary()
        assert summary.requests[0] == 3 and summary.p50_ttft_ms[0] == pytest.approx(56.5)

    @pytest.mark.parametrize("data, message", [
        (b"", "empty"), (b"\x00\x01\x02", "binary"), (b'{"request_throughput": ', "truncated"),
        (b"a,b,c\n1,2,3\n", "no recognisable result columns"), (b"concurrency,ttft_ms\n", "no rows"),
        (b'{"benchmarks": [{"metrics": {"x": 1}}]}', "schema other than"),
    ])
    def test_refusals_write_nothing(self, db, data, message):
        with pytest.raises(ingest.IngestError, match=message):
            db.import_file("bad.file", data)
        assert counts(db) == (0, 0, 0)

    def test_upload_limit(self, db):
        with pytest.raises(ingest.IngestError, match="upload limit"):
            db.import_file("big.json", b"x" * 101, max_bytes=100)

    @pytest.mark.parametrize("failure, raised", [(RuntimeError("disk full"), ingest.IngestError),
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
        assert any("percentages" in w for w in result.warnings)

    def test_out_of_range_whole_numbers_become_empty(self, db):
        db.import_file("big.csv", b"concurrency,gamma,output_throughput\n4,2147483648,10\n4,2.5,11\n4,3,12\n")
        gammas = db.runs().num_speculative_tokens
        assert gammas.isna().tolist() == [True, True, False] and gammas.iloc[2] == 3

    def test_user_mapping_for_unknown_names(self, db):
        data = b"conc,tput\n4,100\n"
        with pytest.raises(ingest.IngestError, match="no recognisable"):
            db.import_file("raw.csv", data)
        db.import_file("raw.csv", data, csv_mapping={"conc": "concurrency", "tput": "output_throughput"})
        assert db.runs().output_throughput[0] == 100

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
        with pytest.raises(ingest.IngestError):  # a mapping that leaves no result column
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


class TestInterruptedImport:
    def test_a_killed_import_loses_no_earlier_run_and_leaves_no_part(self, tmp_path):
        path = tmp_path / "k.duckdb"
        s = Store(path)
        s.import_file("g.json", (SAMPLES / "guidellm_benchmarks.json").read_bytes())
        s.close()
        child = textwrap.dedent(f"""
            import sys, time
            sys.path.insert(0, {str(ROOT)!r})
            from specviz.store import Store
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
        assert counts(s) == (1, 1, 0)
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


csv_cells = st.one_of(st.integers(-10**20, 10**20), st.floats(allow_nan=True, allow_infinity=True),
                      st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=6))
csv_headers = st.lists(st.sampled_from(["concurrency", "ttft_ms", "p99_itl_ms", "model", "acceptance_rate",
                                        "output_throughput", "x", "latency", "gamma", "workload", "Ünïcode"]),
                       min_size=1, max_size=6)


class TestFuzzedCsv:
    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(csv_headers, st.lists(st.lists(csv_cells, min_size=6, max_size=6), max_size=5))
    def test_never_crashes_and_never_writes_part(self, db, headers, rows):
        import csv
        import io
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        writer.writerow(headers)
        for row in rows:
            writer.writerow(row[:len(headers)])
        before = counts(db)
        try:
            result = db.import_file("fuzz.csv", buffer.getvalue().encode())
        except ingest.IngestError:
            assert counts(db) == before
            return
        if result.status == "imported":
            assert len(db.runs()) == before[0] + result.runs
            numeric = db.runs()[["concurrency", "output_throughput"]].dropna(how="all")
            assert (numeric.fillna(0) >= 0).all().all()
