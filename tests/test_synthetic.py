"""Tests for specviz.results.synthetic: runs whose acceptance the benchmark set, flagged from every
source (vLLM's server settings, SGLang's environment, a sweep folder, a user's CSV column, the
user's word at import) and kept out of fits, schedules and claims unless asked."""

import json
from pathlib import Path

import pytest

from specviz.cli import main
from specviz.results import explorer, importers
from specviz.results.store import Store
from specviz.results.synthetic import mark_synthetic, synthetic_evidence

ROOT = Path(__file__).resolve().parent.parent
VLLM_BENCH = ROOT.parent / "shared" / "samples" / "2026" / "vllm_0.25.1" / "bench_serve_speculative_v0.25.1.json"


class TestEvidence:
    @pytest.mark.parametrize("text, found", [
        # vLLM's speculative config as JSON (a --metadata value kept in extra), as a server's flag,
        # escaped inside another JSON string, and as a sweep folder's setting
        ('{"speculative_config": {"method": "eagle3", "rejection_sample_method": "synthetic"}}',
         'rejection_sample_method": "synthetic'),
        ("""--speculative-config '{"rejection_sample_method":"synthetic","synthetic_acceptance_length":2.5}'""",
         'rejection_sample_method":"synthetic'),
        ('{"server_args": "{\\"rejection_sample_method\\": \\"synthetic\\"}"}', 'rejection_sample_method\\": \\"synthetic'),
        ("SERVE--speculative_config.rejection_sample_method=synthetic-BENCH--max_concurrency=8/run=0.json",
         "rejection_sample_method=synthetic"),
        # the rates or length given with another method (block) still set the acceptance
        ('{"rejection_sample_method": "block", "synthetic_acceptance_rates": [0.8, 0.6]}',
         'synthetic_acceptance_rates": [0'),
        ("synthetic_acceptance_length=3.0", "synthetic_acceptance_length=3"),
        # SGLang's knob: on above 0
        ("SGLANG_SIMULATE_ACC_LEN=2.5 python -m sglang.launch_server", "SGLANG_SIMULATE_ACC_LEN=2.5"),
        ('{"env": {"SGLANG_SIMULATE_ACC_LEN": "3"}}', 'SGLANG_SIMULATE_ACC_LEN": "3'),
    ])
    def test_each_marker_is_found(self, text, found):
        assert synthetic_evidence([text]) == found

    @pytest.mark.parametrize("text", [
        '{"rejection_sample_method": "standard"}', '{"rejection_sample_method": "block"}',
        '{"synthetic_acceptance_rates": null, "synthetic_acceptance_length": null}',
        "SGLANG_SIMULATE_ACC_LEN=-1", "SGLANG_SIMULATE_ACC_LEN=0", "the synthetic dataset of random prompts",
        "eagle γ=4 · run.json"])
    def test_what_is_no_evidence(self, text):
        assert synthetic_evidence([text]) is None

    def test_a_flag_the_file_gave_is_kept(self):
        runs = [{"label": "SGLANG_SIMULATE_ACC_LEN=3", "synthetic_acceptance": False, "extra": "{}"},
                {"label": "SGLANG_SIMULATE_ACC_LEN=3", "extra": "{}"}, {"label": "real", "extra": "{}"}]
        notices = mark_synthetic(runs, "x.json")
        assert [r.get("synthetic_acceptance") for r in runs] == [False, True, None]
        assert [(n.key, n.params) for n in notices] == [("ingest.synthetic", {"runs": 1,
                                                                              "evidence": "SGLANG_SIMULATE_ACC_LEN=3"})]


class TestImport:
    def test_a_vllm_bench_file_with_the_servers_setting_in_its_metadata(self, tmp_path):
        """``vllm bench serve --metadata rejection_sample_method=synthetic`` writes the key at the top
        level: kept in extra, and the run flagged with a notice that quotes it."""
        data = json.loads(VLLM_BENCH.read_bytes())
        marked = json.dumps({**data, "rejection_sample_method": "synthetic"}).encode()
        parsed = importers.parse("bench.json", marked)
        assert parsed.runs[0]["synthetic_acceptance"] is True
        assert [n.params["evidence"] for n in parsed.warnings if n.key == "ingest.synthetic"] == [
            'rejection_sample_method":"synthetic']  # extra is compact JSON
        assert "synthetic_acceptance" not in importers.parse("bench.json", VLLM_BENCH.read_bytes()).runs[0]
        store = Store(tmp_path / "s.duckdb")
        store.import_file("bench.json", marked)
        store.import_file("real.json", VLLM_BENCH.read_bytes())
        flags = store.runs().set_index("source_file")["synthetic_acceptance"]
        assert flags["bench.json"] == True and flags.isna()["real.json"]  # noqa: E712 (numpy bool)

    def test_a_csv_column_says_it_per_row(self, tmp_path):
        csv = (b"label,concurrency,output_throughput,acceptance_length,synthetic\n"
               b"a,1,100,2.0,yes\nb,2,180,2.1,no\nc,4,300,2.2,maybe\nd,8,500,2.3,\n"
               b"SGLANG_SIMULATE_ACC_LEN=2.5 run,16,800,2.5,\n")
        store = Store(tmp_path / "s.duckdb")
        result = store.import_file("mine.csv", csv)
        runs = store.runs()
        flags = dict(zip(runs["label"], [None if explorer.pd.isna(v) else bool(v) for v in runs["synthetic_acceptance"]]))
        # yes/no as said, "maybe" and an empty cell unknown, and a label that names SGLang's knob
        assert flags == {
            "a": True, "b": False, "c": None, "d": None, "SGLANG_SIMULATE_ACC_LEN=2.5 run": True}
        keys = {n.key: n.params for n in result.warnings}
        assert keys["warn.csv_not_flags"] == {"column": "synthetic", "field": "synthetic_acceptance", "rows": 1,
                                              "example": "'maybe'"}
        assert keys["ingest.synthetic"]["runs"] == 1

    def test_the_users_word_at_import(self, tmp_path, capsys):
        """``ingest --synthetic`` (and the Explorer's box) marks every run of the files, the file's
        content already stored included."""
        db = tmp_path / "s.duckdb"
        assert main(["ingest", "--db", str(db), str(VLLM_BENCH)]) == 0
        assert Store(db).runs()["synthetic_acceptance"].isna().all()
        assert main(["ingest", "--synthetic", "--db", str(db), str(VLLM_BENCH)]) == 0
        capsys.readouterr()
        assert Store(db).runs()["synthetic_acceptance"].tolist() == [True]


    def test_a_flag_set_after_the_import_reaches_what_pages_read(self, tmp_path):
        """The runs a page shows are kept until the store changes: a flag set on stored runs is such
        a change, in this process and in another."""
        store = Store(tmp_path / "s.duckdb")
        result = store.import_file("real.json", VLLM_BENCH.read_bytes())
        assert store.shown_runs().frame["synthetic_acceptance"].isna().all()
        assert store.flag_synthetic(result.content_hash) == 1
        assert store.shown_runs().frame["synthetic_acceptance"].tolist() == [True]


class TestExplorer:
    def frame(self) -> "explorer.pd.DataFrame":
        rows = [dict(run_id=str(i), source_file="s.json", content_hash="h", label=None, workload="chat",
                     spec_method=m, num_speculative_tokens=g, concurrency=c, request_rate=None,
                     acceptance_length=a, acceptance_rate=None, zero_accept_rate=None, output_throughput=tput,
                     mean_tpot_ms=None,
                     engine="vllm", gpu="H100", target_model="m", origin="user", synthetic_acceptance=s)
                for i, (m, g, c, a, tput, s) in enumerate([
                    ("", None, 8, None, 100.0, None), ("eagle3", 3, 8, 3.0, 150.0, True),
                    ("eagle3", 3, 8, 2.0, 120.0, None), ("eagle3", 3, 8, 2.2, 125.0, False)])]
        frame = explorer.pd.DataFrame(rows)
        return frame.assign(series=explorer.series_names(frame))

    def test_the_series_name_says_it(self):
        names = self.frame()["series"].tolist()
        assert names == ["plain · s.json · chat", "eagle3 γ=3 · s.json · chat · synthetic acceptance",
                         "eagle3 γ=3 · s.json · chat", "eagle3 γ=3 · s.json · chat"]

    def test_fits_and_means_leave_it_out_unless_asked(self):
        frame = self.frame()
        kept, left_out = explorer.measured_acceptance(frame)
        assert kept["run_id"].tolist() == ["0", "2", "3"] and left_out == 1
        assert explorer.measured_acceptance(frame, synthetic_wanted=True)[0]["run_id"].tolist() == ["0", "1", "2", "3"]
        # the workload's mean acceptance: (2.0 + 2.2) / 2 = 2.1, not (3.0 + 2.0 + 2.2) / 3
        summary = explorer.workload_acceptance(frame)
        assert summary["acceptance_length"].tolist() == [pytest.approx(2.1)] and summary["runs"].tolist() == [2]
