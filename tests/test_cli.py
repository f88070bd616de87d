"""Tests for ``python -m specviz``: every subcommand, every format, errors as one line, exit 2, and
messages in the reader's language."""

import ast
import contextlib
import csv
import io
import math
import json
import shlex
import shutil
import re
import os
import subprocess
import sys
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Iterator

import pytest

from conftest import PRESETS, make_scenario, serving
from specviz import calculator, cli, i18n, regime, scenario, settings, workload
from specviz.advice import claim_verdict, claims, commands, draft_length, evidence, slowdown
from specviz.cli import common as cli_common, docs
from specviz.cli.app import streamlit_argv
from specviz.cli.live import METRICS_KEYS
from specviz.cli import model as model_cli
from specviz.cli.model import ROOFLINE_KEYS
from specviz.errors import Notice
from specviz.model import spec
from specviz.results import explorer
from specviz.results.store import Store

ROOT = Path(__file__).resolve().parent.parent
QWEN3_MOE = json.loads((ROOT / "data/model_configs/Qwen3-30B-A3B.json").read_text())


def made_store(path: Path) -> str:
    """A new, empty store at ``path``: the commands that read one refuse a path where there is none."""
    Store(path).close()
    return str(path)


def link_gpu(link: str) -> str:
    return dict(part.split("=") for part in link.split("&"))["gpu"]


def run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("argv", [["calc", "--lang", "vi", "alpha=0.7"], ["calc", "alpha=0.7", "--lang=vi"]])
def test_lang_after_the_subcommand_is_said_to_go_before_it(capsys, argv):
    """A CLI pass: "calc --lang vi alpha=2" had read "vi" as the link and said only "unrecognized arguments";
    the hint is in the language asked for."""
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, "") and err.startswith("specviz: error: unrecognized arguments: ")
    assert err.endswith(" (--lang đứng trước lệnh con: specviz --lang vi calc …)\n") and err.count("\n") == 1


def test_a_misspelt_setting_is_said_on_stderr_and_the_command_runs(capsys, monkeypatch):
    monkeypatch.setenv("SPECVIZ_DB_PATH", "/tmp/nowhere.duckdb")
    code, out, err = run(capsys, "speedup", "--alpha", "0.8", "--gamma", "3")
    assert code == 0 and out and err == ("specviz: SPECVIZ_DB_PATH is no setting of specviz and is ignored: did you "
                                         "mean SPECVIZ_DB? (docs/settings.md lists them)\n")


class TestCalcPublishedHere:
    def test_the_measurements_of_this_setup_as_the_page_sets_them_beside_its_figure(self, capsys):
        """gpt-oss-20b + EAGLE-3 on one B200 at batch 8 and γ 3: the vLLM post's three figures, each with the
        model's at its acceptance length, as the calculator's notes give them; none for the default."""
        code, out, _ = run(capsys, "calc", "?gpu=B200&target=gpt-oss-20b&draft=eagle3&tp=1&gamma=3&batch=8")
        here = json.loads(out)["published_here"]
        chosen = make_scenario(gpu="B200", target="gpt-oss-20b", draft="eagle3", tp="1", gamma="3", batch="8")
        rows = evidence.measured_here(explorer.speedup_rows(explorer.load_published(ROOT / "data")), chosen, 8, 3)
        assert code == 0 and [row["value"] for row in here] == [1.72, 1.69, 1.67]
        assert [row["model_speedup"] for row in here] == pytest.approx(list(rows["model_speedup"]))
        assert [row["outside_range"] for row in here] == [True, True, False]
        assert json.loads(run(capsys, "calc", "")[1])["published_here"] == []


class TestSpeedupCommand:
    def test_compute_bound_seed_table(self, capsys):
        code, out, _ = run(capsys, "speedup", "--alpha", "0.9", "0.8", "0.6", "0.4", "--gamma", "4",
                           "--regime", "compute")
        rows = json.loads(out)
        assert code == 0
        assert [round(r["speedup"], 2) for r in rows] == [0.79, 0.65, 0.44, 0.32]
        assert all(r["verify_cost"] == 5 for r in rows)
        assert set(rows[0]) == {"alpha", "gamma", "verify_cost", "draft_cost", "expected_tokens",
                                "acceptance_rate_vllm", "speedup"}

    def test_verify_cost_sweep_as_csv(self, capsys):
        code, out, _ = run(capsys, "speedup", "--alpha", "0.7", "--gamma", "4", "--verify-cost",
                           "1", "2", "3", "5", "--format", "csv")
        rows = list(csv.DictReader(io.StringIO(out)))
        assert [round(float(r["speedup"]), 2) for r in rows] == [2.31, 1.26, 0.87, 0.53]

    def test_gamma_auto_picks_the_best(self, capsys):
        _, out, _ = run(capsys, "speedup", "--alpha", "0.4", "0.9", "--gamma", "auto")
        rows = json.loads(out)
        assert rows[0]["gamma"] < rows[1]["gamma"]

    def test_a_gamma_max_below_one_is_named_by_its_option(self, capsys):
        code, _, err = run(capsys, "speedup", "--alpha", "0.8", "--gamma", "auto", "--gamma-max", "0")
        assert code == 2 and "argument --gamma-max: must be 1 or more" in err and "gamma_max" not in err
        code, _, err = run(capsys, "speedup", "--alpha", "0.5", "--gamma", "auto", "--gamma-max", "1000000000")
        assert code == 2 and err == ("specviz: error: The largest draft length searched (gamma_max) must be at most "
                                     "1,024; got 1,000,000,000.\n")

    def test_markdown_table(self, capsys):
        _, out, _ = run(capsys, "speedup", "--alpha", "0.8", "--gamma", "4", "--format", "md")
        lines = out.strip().splitlines()
        assert lines[0].startswith("| alpha | gamma") and lines[2].startswith("| 0.8 | 4 |")
        assert "3.362" in lines[2]

    @pytest.mark.parametrize("argv, message", [
        (["speedup", "--alpha", "1.5", "--gamma", "4"], "alpha"),
        (["speedup", "--alpha", "0.5", "--gamma", "four"], "gamma"),
        (["speedup", "--alpha", "0.5", "--gamma", "auto", "4"], "auto"),
        (["speedup", "--alpha", "0.5"], "--gamma"),
        (["speedup", "--alpha", "0.5", "--gamma", "4", "--verify-cost", "1", "--regime", "memory"], "not allowed"),
        (["speedup", "--alpha", "0.5", "--gamma", "4", "--verify-cost", "0", "--draft-cost", "0"],
         "--verify-cost: must be a number from 1 to 100, got '0'"),
        # A verify pass cheaper than a plain one would give more than E tokens' worth: 5.6x at γ 4 here.
        (["speedup", "--alpha", "0.5", "--gamma", "4", "--verify-cost", "0.3", "--draft-cost", "0"],
         "--verify-cost: must be a number from 1 to 100, got '0.3'"),
        (["claim", "3x", "--verify-cost", "0.1"], "--verify-cost: must be a number from 1 to 100, got '0.1'"),
    ])
    def test_errors_are_one_line_exit_2(self, capsys, argv, message):
        code, out, err = run(capsys, *argv)
        assert code == 2 and out == ""
        assert err.count("\n") == 1 and message in err and err.startswith("specviz: error:")


class TestRooflineCommand:
    @pytest.mark.parametrize(("argv", "message"), [
        (["roofline", "--gpu", "H100-SXM", "--target", "Qwen3-32B", "--alpha", "0.8", "--gamma", "4", "--batch",
          *map(str, range(1, 2001)), "--context", *map(str, range(100))],
         "2,000 batches × 100 contexts make 200,000 rows; a command computes at most 100,000 (SPECVIZ_CLI_MAX_ROWS)"),
        (["speedup", "--alpha", *[str(a / 100) for a in range(1, 100)], "--gamma", *map(str, range(1, 17)),
          "--verify-cost", *map(str, range(1, 101))],
         "99 α × 16 γ × 100 verify costs make 158,400 rows; a command computes at most 100,000"),
    ])
    def test_a_grid_is_sized_before_it_is_computed(self, capsys, argv, message):
        """20,000 batches × 100 contexts ran 77 s into "unexpected MemoryError": now refused at once."""
        code, out, err = run(capsys, *argv)
        assert code == 2 and out == "" and message in err and "unexpected" not in err

    def test_rows_and_keys(self, capsys):
        code, out, _ = run(capsys, "roofline", "--gpu", "H100-SXM", "--target", "Llama-3.1-70B",
                           "--batch", "1", "64", "--alpha", "0.8", "--gamma", "4", "--context", "0", "8192")
        rows = json.loads(out)
        assert code == 0 and len(rows) == 4
        assert tuple(rows[0]) == ROOFLINE_KEYS
        batch64 = [r for r in rows if r["batch"] == 64]
        assert [r["regime"] for r in batch64] == ["compute", "memory"]
        assert round(rows[0]["ridge_flop_per_byte"]) == 295

    def test_a_batch_one_device_does_not_hold_gets_no_speedup(self, capsys):
        """gpt-oss-120b on one H100 at 131k holds 2 sequences: batches 16 and 256 had been given 1.81× and
        2.15× (a consistency pass), where calc and the pages give none."""
        _, out, _ = run(capsys, "roofline", "--gpu", "H100-SXM", "--target", "gpt-oss-120b", "--batch", "1", "16",
                        "256", "--alpha", "0.75", "--gamma", "3", "--context", "131072", "--realistic")
        rows = json.loads(out)
        assert [(r["batch"], r["fits"], r["max_batch"]) for r in rows] == [(1, True, 2), (16, False, 2), (256, False, 2)]
        assert rows[0]["speedup"] > 1 and all(r["speedup"] is None and r["spec_tokens_per_s"] is None for r in rows[1:])
        assert all(r["baseline_step_ms"] > 0 for r in rows)  # the step's times are still what they are
        # A device without a memory figure states no limit (it had printed int64's largest, and True).
        _, out, _ = run(capsys, "roofline", "--gpu", "Intel-Core-Ultra-X7-358H", "--tflops", "1", "--bandwidth",
                        "0.1", "--target", "Qwen3-0.6B", "--batch", "1", "--alpha", "0.7", "--gamma", "3")
        (row,) = json.loads(out)
        assert row["fits"] is None and row["max_batch"] is None and row["speedup"] > 0

    def test_a_draft_head_preset_is_a_draft(self, capsys):
        """calc, claim and serve take EAGLE3-SpecForge-gpt-oss-120b; roofline had said "unknown model" (a
        consistency pass). Its passes are the head's own: far cheaper than the target's."""
        code, out, err = run(capsys, "roofline", "--gpu", "B200", "--target", "gpt-oss-120b", "--draft",
                             "EAGLE3-SpecForge-gpt-oss-120b", "--batch", "8", "--alpha", "0.7", "--gamma", "3")
        (row,) = json.loads(out)
        assert code == 0 and not err and 0 < row["draft_step_ms"] < row["baseline_step_ms"] / 3

    @pytest.mark.parametrize("link, key", [("gpu=A100-80GB&tp=8&dp=2&target=DeepSeek-V3", "scenario.beyond_domain"),
                                           ("gpu=Intel-12th-gen-desktop&target=Qwen3-32B&tp=1", "scenario.gpu_incomplete")])
    def test_a_split_the_sidebar_refuses_is_refused(self, capsys, link, key):
        """16 A100s in two groups of 8 had been priced (1.44x) by calc and claim, where the sidebar refuses
        them: the same check (scenario.check_hardware) for both (a review)."""
        for command in ("calc", "claim"):
            code, out, err = run(capsys, *((command, link) if command == "calc" else (command, "2x", link)))
            assert code == 2 and out == ""
            assert err.strip() == "specviz: error: " + i18n.t(key, "en", **{
                "gpu": i18n.in_language(PRESETS.gpus[link_gpu(link)].name, "en"), "gpus": 16, "domain": 8})

    def test_its_memory_limit_is_calc_s(self, capsys):
        """One H100 holds 263 sequences of gpt-oss-120b with SpecForge's head (the head held without the
        target's input embedding): roofline had priced the head's copy of it and said 237, not fitting
        batch 250 that calc holds (a review)."""
        head = "EAGLE3-SpecForge-gpt-oss-120b"
        _, out, _ = run(capsys, "roofline", "--gpu", "H100-SXM", "--target", "gpt-oss-120b", "--draft", head,
                        "--batch", "250", "264", "--context", "1024", "--alpha", "0.7", "--gamma", "3")
        rows = json.loads(out)
        _, out, _ = run(capsys, "calc", f"gpu=H100-SXM&target=gpt-oss-120b&draft={head}&tp=1&gamma=3&context=1024")
        assert [(r["max_batch"], r["fits"]) for r in rows] == [(263, True), (263, False)] == [
            (json.loads(out)["max_batch"], True), (263, False)]

    def test_draft_model_and_realistic_knobs(self, capsys):
        _, pure, _ = run(capsys, "roofline", "--gpu", "H100-SXM", "--target", "Qwen3-32B", "--draft",
                         "Qwen3-0.6B", "--batch", "8", "--alpha", "0.7", "--gamma", "5")
        _, real, _ = run(capsys, "roofline", "--gpu", "H100-SXM", "--target", "Qwen3-32B", "--draft",
                         "Qwen3-0.6B", "--batch", "8", "--alpha", "0.7", "--gamma", "5", "--realistic")
        assert json.loads(real)[0]["speedup"] < json.loads(pure)[0]["speedup"]

    def test_target_from_config_path(self, capsys):
        path = ROOT / "data" / "model_configs" / "Llama-3.1-8B.json"
        code, out, _ = run(capsys, "roofline", "--gpu", "H100-SXM", "--target", str(path), "--batch",
                           "1", "--alpha", "0.5", "--gamma", "2")
        assert code == 0 and json.loads(out)[0]["regime"] == "memory"

    def test_weights_at_the_checkpoints_format_unless_told(self, capsys):
        # DeepSeek-V3 ships FP8 weights: read at 2 bytes each, batch 1 took 11.9 ms on a B200 (realistic), 6.3 at 1.
        argv = ["roofline", "--gpu", "B200", "--target", str(SAMPLES / "configs" / "DeepSeek-V3.config.json"),
                "--batch", "1", "--alpha", "0.8", "--gamma", "3", "--context", "4096", "--realistic"]
        _, checkpoint, _ = run(capsys, *argv)
        _, bf16, _ = run(capsys, *argv, "--precision", "bf16")
        step, step_bf16 = json.loads(checkpoint)[0]["baseline_step_ms"], json.loads(bf16)[0]["baseline_step_ms"]
        assert step == pytest.approx(6.29, abs=0.05) and step_bf16 == pytest.approx(11.9, abs=0.05)

    def test_a_config_file_is_read_whatever_its_name_and_a_missing_one_said(self, capsys, tmp_path):
        """A CLI pass: a config saved without .json, and a .json not there, had read as "unknown model"."""
        saved = tmp_path / "qwen_config"
        saved.write_bytes((SAMPLES / "configs" / "Qwen3-235B-A22B.config.json").read_bytes())
        argv = ["roofline", "--gpu", "B200", "--batch", "1", "--alpha", "0.7", "--gamma", "3", "--target"]
        code, by_file, err = run(capsys, *argv, str(saved))
        _, by_json, _ = run(capsys, *argv, str(SAMPLES / "configs" / "Qwen3-235B-A22B.config.json"))
        assert code == 0 and by_file == by_json, err
        code, out, err = run(capsys, *argv, str(tmp_path / "nowhere.json"))
        assert (code, out, err) == (2, "", f"specviz: error: {tmp_path / 'nowhere.json'}: no such file\n")

    def test_cpu_preset_needs_figures_then_works(self, capsys):
        argv = ["roofline", "--gpu", "Intel-12th-gen-desktop", "--target", "Qwen2.5-1.5B", "--draft",
                "Qwen2.5-0.5B", "--batch", "1", "--alpha", "0.8", "--gamma", "4"]
        code, _, err = run(capsys, *argv)
        assert code == 2 and "TFLOPS" in err
        code, out, _ = run(capsys, *argv, "--tflops", "1.5", "--bandwidth", "0.0768")
        assert code == 0 and json.loads(out)[0]["regime"] == "memory"

    @pytest.mark.parametrize("argv, message", [
        (["--gpu", "H999"], "unknown GPU"),
        (["--target", "nope"], "unknown model"),
        (["--mfu", "0"], "mfu"),
        (["--tflops", "1e300", "--bandwidth", "1e300"], "--tflops: must be a number from 0.001 to 1e+06"),
        # A bad figure over a preset's had read "GPU 'B200' has no published peak TFLOPS" (a CLI pass).
        (["--gpu", "B200", "--tflops", "nan"], "--tflops: must be a number from 0.001 to 1e+06, got 'nan'"),
        (["--bandwidth", "-1"], "--bandwidth: must be a number from 0.001 to 10000, got '-1'"),
    ])
    def test_errors(self, capsys, argv, message):
        base = {"--gpu": "H100-SXM", "--target": "Llama-3.1-8B", "--batch": "1", "--alpha": "0.5",
                "--gamma": "4"}
        base.update(dict(zip(argv[::2], argv[1::2])))
        code, _, err = run(capsys, "roofline", *[x for kv in base.items() for x in kv])
        assert code == 2 and message in err and err.count("\n") == 1


class TestModelFromConfigCommand:
    def test_exact_counts(self, capsys):
        code, out, _ = run(capsys, "model-from-config", str(ROOT / "data/model_configs/Mixtral-8x7B.json"))
        row = json.loads(out)
        assert code == 0
        assert row["params_total"] == 46_702_792_704 and row["params_active"] == 12_879_925_248
        assert row["kv_bytes_per_token"] == 131072 and row["layers"] == 32
        assert row["kv_bytes_per_token_past_windows"] == 131072  # no window: the same

    def test_a_linear_attention_state_is_printed_per_sequence(self, capsys):
        """Qwen3-Next's 36 Gated DeltaNet layers (every 4th of 48 is full attention) each keep
        32 value heads × 128 × 128 of recurrent state and 3 × (2·16·128 + 32·128) of convolution
        state, whatever the context (a review: the command printed only the 24,576 cache bytes a
        position adds, where one sequence's state at 1,024 positions is more than its cache)."""
        _, out, _ = run(capsys, "model-from-config", str(SAMPLES / "configs" / "Qwen3-Next-80B-A3B-Thinking.config.json"))
        row = json.loads(out)
        per_layer = 32 * 128 * 128 + 3 * (2 * 16 * 128 + 32 * 128)
        assert per_layer == 548_864 and row["state_bytes_per_sequence"] == 36 * per_layer * 2 == 39_518_208
        assert row["state_bytes_per_sequence"] > 1024 * row["kv_bytes_per_token"]
        _, out, _ = run(capsys, "model-from-config", str(SAMPLES / "configs" / "DeepSeek-V3.config.json"))
        assert json.loads(out)["state_bytes_per_sequence"] == 0

    def test_a_window_s_layers_stop_adding_cache_past_it(self, capsys):
        """gpt-oss-120b: 18 full and 18 sliding layers of 128 positions, 8 KV heads of 64 in BF16: by hand
        36 · 2 · 8 · 64 · 2 = 73,728 bytes a position within the windows, half past them (the output had
        said only the first: an engineer's pass)."""
        _, out, _ = run(capsys, "model-from-config", str(SAMPLES / "configs" / "gpt-oss-120b.config.json"))
        row = json.loads(out)
        assert (row["kv_bytes_per_token"], row["kv_bytes_per_token_past_windows"]) == (73_728, 36_864)
        _, out, _ = run(capsys, "model-from-config", str(SAMPLES / "configs" / "gpt-oss-120b.config.json"), "--kv-bytes", "1")
        assert json.loads(out)["kv_bytes_per_token"] == 36_864  # FP8
        for text in ("nan", "-3", "0"):  # NaN had come out as NaN (no JSON), -3 as a negative cache
            code, out, err = run(capsys, "model-from-config", str(SAMPLES / "configs" / "gpt-oss-120b.config.json"),
                                 "--kv-bytes", text)
            assert code == 2 and out == "" and "--kv-bytes: must be a finite number of bytes above 0" in err
        # 1e308 had come out as Infinity (no JSON): no element takes more than 8 bytes.
        code, out, err = run(capsys, "model-from-config", str(SAMPLES / "configs" / "gpt-oss-120b.config.json"),
                             "--kv-bytes", "1e308")
        assert code == 2 and out == "" and "--kv-bytes: must be at most 8 bytes, got '1e308'" in err

    def test_missing_and_malformed_files(self, capsys, tmp_path):
        code, _, err = run(capsys, "model-from-config", str(tmp_path / "nope.json"))
        assert code == 2 and "no such file" in err
        bad = tmp_path / "config.json"
        bad.write_text("{not json")
        code, _, err = run(capsys, "model-from-config", str(bad))
        assert code == 2 and "not a JSON config.json" in err

    @pytest.mark.parametrize("data, message", [
        (json.dumps({**QWEN3_MOE, "num_hidden_layers": 10**9}).encode(),
         "'num_hidden_layers' must be a whole number between 1 and 1,024, got 1000000000"),
        (json.dumps({**QWEN3_MOE, "num_experts": -8}).encode(), "'num_experts' must be a whole number"),
        (json.dumps({**QWEN3_MOE, "num_experts_per_tok": 129}).encode(), "'num_experts_per_tok'"),
        (json.dumps({**QWEN3_MOE, "tie_word_embeddings": "false"}).encode(), "a JSON boolean"),
        (json.dumps({**QWEN3_MOE, "hidden_size": float("nan")}).encode(), "'hidden_size'"),
        (b'{"model_type": "llama", \xff\xfe}', "not UTF-8"),
        (b'{"a": ' * 100_000 + b"1" + b"}" * 100_000, "nested too deeply"),
    ])
    def test_hostile_files_are_one_line_exit_2(self, capsys, tmp_path, data, message):
        path = tmp_path / "hostile.json"
        path.write_bytes(data)
        code, out, err = run(capsys, "model-from-config", str(path))
        assert code == 2 and out == ""
        assert err.count("\n") == 1 and err.startswith("specviz: error:") and message in err


class TestPresetsCommand:
    def test_json_has_sources(self, capsys):
        _, out, _ = run(capsys, "presets")
        data = json.loads(out)
        h100 = next(g for g in data["gpus"] if g["id"] == "H100-SXM")
        assert h100["tflops"] == 989.4 and h100["source"].startswith("https://")
        cpu = next(g for g in data["gpus"] if g["kind"] == "cpu")
        assert cpu["tflops"] is None  # NaN in the CSV becomes null, keeping the JSON valid
        assert all(m["source"] for m in data["models"])


class TestProcess:
    def test_module_entry_point_exit_codes_no_traceback(self):
        ok = subprocess.run([sys.executable, "-m", "specviz", "speedup", "--alpha", "0.8", "--gamma", "4"],
                            capture_output=True, text=True, cwd=ROOT)
        assert ok.returncode == 0 and json.loads(ok.stdout)[0]["expected_tokens"] == pytest.approx(3.3616)
        bad = subprocess.run([sys.executable, "-m", "specviz", "bogus"], capture_output=True, text=True, cwd=ROOT)
        assert bad.returncode == 2 and "Traceback" not in bad.stderr and bad.stderr.count("\n") == 1

    @pytest.mark.parametrize("sql, words", [
        ("SELECT count(*) FROM range(100000000000)", "time limit"),
        ("SELECT length(repeat('x', 1500000000))", "memory limit"),
        ("WITH x AS (DELETE FROM runs RETURNING 1) SELECT * FROM x", "would change data"),
        ("SELECT getenv('HOME')", "not available"),
        ("SELECT * FROM read_text('/etc/hostname')", "not reachable"),
    ])
    def test_query_attacks_exit_2_with_one_line_within_the_limit(self, tmp_path, sql, words):
        env = {**os.environ, "SPECVIZ_DB": made_store(tmp_path / "q.duckdb"), "SPECVIZ_SQL_TIMEOUT_S": "2"}
        run = subprocess.run([sys.executable, "-m", "specviz", "query", sql], capture_output=True, text=True,
                             cwd=ROOT, env=env, timeout=60)
        assert run.returncode == 2 and run.stdout == "" and "Traceback" not in run.stderr
        assert run.stderr.count("\n") == 1 and words in run.stderr

    def test_model_from_config_refuses_large_files_and_non_files(self, tmp_path):
        big = tmp_path / "big.json"
        big.write_bytes(b'{"model_type": "llama", "x": [' + b"{}," * 400_000 + b"{}]}")
        fifo = tmp_path / "fifo.json"
        os.mkfifo(fifo)
        for path, words in ((big, "at most 1,000,000"), (fifo, "not a regular file"), (tmp_path, "not a regular file")):
            run = subprocess.run([sys.executable, "-m", "specviz", "model-from-config", str(path)],
                                 capture_output=True, text=True, cwd=ROOT, timeout=60)
            assert run.returncode == 2 and run.stderr.count("\n") == 1 and words in run.stderr, run.stderr

    def test_query_results_nothing_foresaw_exit_2_without_a_traceback(self, tmp_path):
        env = {**os.environ, "SPECVIZ_DB": str(tmp_path / "q.duckdb")}
        sql = "SELECT '101'::BIT AS b, union_value(k := 1) AS u, 'infinity'::DATE AS d"  # one process: about 4 s each
        run = subprocess.run([sys.executable, "-m", "specviz", "query", sql], capture_output=True, text=True,
                             cwd=ROOT, env=env, timeout=60)
        assert run.returncode in (0, 2) and "Traceback" not in run.stderr, run.stderr


SAMPLES = ROOT.parent / "shared" / "samples"


def import_ids(capsys, db: str) -> dict[str, list[str]]:
    """Each stored file's import ids (content hashes), oldest first, as ``specviz query`` reads them."""
    _, out, _ = run(capsys, "query", "SELECT source_file, list(content_hash ORDER BY imported_at) AS ids FROM imports "
                                     "GROUP BY ALL", "--db", db)
    return {row["source_file"]: row["ids"] for row in json.loads(out)}


class TestStoreCommands:
    @pytest.mark.parametrize("where", ["option", "setting"])
    def test_a_store_in_memory_is_refused(self, capsys, monkeypatch, where):
        """An attack pass: `ingest --db :memory:` reported one run imported, which no later command could
        find: the store ended with the command."""
        if where == "setting":
            monkeypatch.setenv("SPECVIZ_DB", ":memory:")
        given = ["--db", ":memory:"] if where == "option" else []
        code, out, err = run(capsys, "ingest", *given, str(ROOT / "tests/fixtures/vllm_bench_spec_decode.json"))
        assert code == 2 and out == "" and "a store in memory (:memory:) ends with the command" in err

    def test_a_reader_that_stops_early_ends_it_quietly(self, tmp_path):
        """`specviz runs | head -1` printed "specviz: error: [Errno 32] Broken pipe"."""
        db, many = str(tmp_path / "p.duckdb"), tmp_path / "many.csv"
        many.write_text("concurrency,output_throughput\n" + "".join(f"{c},{c * 10}\n" for c in range(1, 3001)))
        assert cli.main(["ingest", str(many), "--db", db]) == 0
        reader = subprocess.Popen([sys.executable, "-m", "specviz", "runs", "--db", db, "--format", "csv"],
                                  cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert reader.stdout.readline().startswith(b'"run_id",')
        reader.stdout.close()  # long before the 3,000 runs' CSV (about 1 MB) is written
        assert (reader.wait(timeout=60), reader.stderr.read()) == (0, b"")

    def test_a_folder_without_result_files_is_an_error_of_its_own(self, capsys, tmp_path):
        """It was passed over without a word (exit 0, nothing imported)."""
        (tmp_path / "empty" / "sub").mkdir(parents=True)
        (tmp_path / "empty" / "notes.txt").write_text("not a result")
        code, out, err = run(capsys, "ingest", str(tmp_path / "empty"), "--db", str(tmp_path / "c.duckdb"))
        report = json.loads(out)
        assert code == 2 and report["imported"] == [] and report["errors"][0]["file"] == str(tmp_path / "empty")
        # Exit 2 with one line on stderr, as every error (it had written none: a CLI pass).
        assert err == "specviz: 1 file(s) could not be imported, each with its reason in errors; 0 imported\n"
        assert "no result files (.json, .jsonl, .csv, .yaml or .yml)" in report["errors"][0]["message"]

    def test_ingest_reports_each_file_and_exits_2_on_any_error(self, capsys, tmp_path):
        db = str(tmp_path / "c.duckdb")
        bad = tmp_path / "bad.json"
        bad.write_text('{"hello": 1}')
        code, out, _ = run(capsys, "ingest", str(SAMPLES / "guidellm_benchmarks.json"),
                           str(SAMPLES / "vllm_bench_nerdalert.jsonl"), str(bad), str(tmp_path / "missing.csv"),
                           "--db", db)
        report = json.loads(out)
        assert code == 2
        assert [e["runs"] for e in report["imported"]] == [1, 9]
        assert [e["file"] for e in report["errors"]] == [str(bad), str(tmp_path / "missing.csv")]
        assert "not a benchmark result file of a known format" in report["errors"][0]["message"]
        code, out, _ = run(capsys, "ingest", str(SAMPLES / "guidellm_benchmarks.json"), "--db", db)
        assert code == 0 and json.loads(out)["skipped"][0]["message"] == "already imported"
        # In the reader's language, as every other line (it had stayed the store's English).
        code, out, _ = run(capsys, "--lang", "vi", "ingest", str(SAMPLES / "guidellm_benchmarks.json"), "--db", db)
        assert code == 0 and json.loads(out)["skipped"][0]["message"] == "đã import rồi"
        assert '"message": "đã import rồi"' in out  # as text, not "\\u0111\\u00e3", which a terminal shows raw

    def test_text_from_a_file_reaches_the_terminal_with_its_invisible_characters_shown(self, capsys, tmp_path):
        """A model name with an ESC sequence (it set the terminal's title and cleared its screen) and a
        right-to-left override came out raw in runs --format md and query --format csv; JSON keeps the
        data, its control characters escaped as JSON escapes them."""
        hostile = "Qwen\x1b]0;PWNED\x07\x1b[2J\u202eevil"
        run_file = json.loads((SAMPLES / "vllm_0.25_bench_serve_specdecode.json").read_text())
        (tmp_path / "r.json").write_text(json.dumps({**run_file, "model_id": hostile}))
        db = str(tmp_path / "c.duckdb")
        assert run(capsys, "ingest", str(tmp_path / "r.json"), "--db", db)[0] == 0
        for argv in (("runs", "--format", "md"), ("query", "SELECT target_model FROM runs", "--format", "csv"),
                     ("query", "SELECT target_model FROM runs", "--format", "md")):
            code, out, err = run(capsys, *argv, "--db", db)
            assert code == 0 and "\x1b" not in out + err and "\u202e" not in out + err, argv
            shown = "Qwen\\x1b]0;PWNED\\x07\\x1b[2J\\u202eevil"  # a Markdown cell doubles its backslashes
            assert (shown.replace("\\", "\\\\") if "md" in argv else shown) in out, argv
        code, out, _ = run(capsys, "query", "SELECT target_model FROM runs", "--format", "json", "--db", db)
        assert json.loads(out)[0]["target_model"] == hostile and "\x1b" not in out
        # Messages too: record's progress lines and the errors go through words().
        assert cli_common.words(hostile, "en") == "Qwen\\x1b]0;PWNED\\x07\\x1b[2J\\u202eevil"

    def test_a_message_s_values_keep_their_stars_and_stay_on_one_line(self):
        """A file named "**BOLD** …\\nspecviz: error: …" had lost its stars (the page's bold marks were
        taken out of the whole line) and started a line of its own, which could pass for specviz's
        (an attack pass). The catalogue's marks go; a value's stay, its line breaks shown as \\n."""
        name = "**BOLD**\r\nspecviz: error: fake.jsonl"
        said = cli_common.words(Notice("exp.shared_runs", file=name, runs="1"), "en")
        assert "\n" not in said and "\r" not in said
        assert said.startswith("**BOLD**\\nspecviz: error: fake.jsonl left its runs (named 1 in it) to this file")
        nested = cli_common.words(Notice("cli.record.failed", number=2, when="now",
                                         error=Notice("scrape.refused", source="a*b\nc")), "en")
        assert "a*b\\nc" in nested and "\n" not in nested

    def test_ingest_says_what_a_file_that_says_nothing_of_speculation_ran(self, capsys, tmp_path):
        """Two AIPerf runs, speculation off and on: the client's files say nothing of it, and both had been
        baselines. --spec-method states it for the runs that say nothing, never what a file says."""
        db, plain = str(tmp_path / "c.duckdb"), SAMPLES / "aiperf_profile_export_aiperf.json"
        doc = json.loads(plain.read_bytes())
        doc["output_token_throughput"]["avg"] *= 1.5
        (tmp_path / "eagle3.json").write_text(json.dumps(doc))
        code, out, err = run(capsys, "ingest", str(tmp_path / "eagle3.json"), "--db", db, "--spec-method", "eagle3")
        assert (code, out) == (2, "") and "--num-speculative-tokens" in err and not (tmp_path / "c.duckdb").exists()
        code, out, err = run(capsys, "ingest", str(tmp_path / "eagle3.json"), "--db", db, "--num-speculative-tokens", "3")
        assert (code, out) == (2, "") and "needs --spec-method" in err and not (tmp_path / "c.duckdb").exists()
        code, out, _ = run(capsys, "ingest", str(plain), "--db", db)
        assert code == 0 and "stated_runs" not in json.loads(out)["imported"][0]
        code, out, _ = run(capsys, "ingest", str(tmp_path / "eagle3.json"), str(SAMPLES / "vllm_0.25_bench_serve_specdecode.json"),
                           "--db", db, "--spec-method", "eagle3", "--num-speculative-tokens", "3")
        # The vLLM run gives γ 3 but no method: it takes the method alone, its γ kept.
        assert code == 0 and [e["stated_runs"] for e in json.loads(out)["imported"]] == [1, 1]
        runs = Store(db).runs()
        (pair,) = explorer.pair_with_baselines(explorer.with_view_columns(runs)).itertuples()
        assert pair.measured_speedup == pytest.approx(1.5) and pair.spec_method == "eagle3"
        # A copy of a run stored from another file: nothing of it is stated, and it says where to.
        copy = SAMPLES / "2026" / "aiperf_0.10" / "profile_export_aiperf.json"
        (skipped,) = json.loads(run(capsys, "ingest", str(copy), "--db", db, "--spec-method", "none")[1])["skipped"]
        assert skipped["stated_runs"] == 0 and f"its runs are stored from {plain}" in skipped["warnings"][-1]
        vllm = runs.set_index("source_format").loc["vllm-bench"]  # the file's own γ 3, the method stated
        assert (vllm["spec_method"], vllm["num_speculative_tokens"], vllm["speculation_by_user"]) == ("eagle3", 3, "method")

    def test_ingest_reads_a_sweep_folder_once_and_keeps_its_settings(self, capsys, tmp_path):
        sweep = tmp_path / "sweep"
        shutil.copytree(SAMPLES / "vllm_0.25_sweep", sweep)
        (sweep / "README.md").write_text("# notes\n")  # not a result file: not read, and said
        (sweep / "summary.csv").write_text("max_num_seqs,max_concurrency,output_throughput\n4,2,1.0\n")
        db = str(tmp_path / "c.duckdb")
        code, out, _ = run(capsys, "ingest", str(sweep), str(SAMPLES / "sglang_bench_serving_c8.jsonl"), "--db", db)
        report = json.loads(out)
        # The sweep's table is passed over, said in the words of the Explorer's upload.
        assert {"file": str(sweep / "summary.csv"), "message": i18n.t("exp.left_out.sweep_table", "en", file="summary.csv")
                } in report["skipped"] and set(report) == {"imported", "skipped", "errors"}
        (sweep / "scrape.txt").write_text("vllm:num_requests_running 1\n")
        code, out, _ = run(capsys, "ingest", str(sweep), "--db", str(tmp_path / "d.duckdb"))
        skipped = json.loads(out)["skipped"]
        assert {"file": str(sweep / "README.md"), "message": "README.md: not read: not a result file (specviz reads .json, "
                ".jsonl, .csv, .yaml, .yml)."} in skipped
        # The word on what reads a scrape, for text alone (a re-check: every file had it), in path order
        assert {"file": str(sweep / "scrape.txt"), "message": "scrape.txt: not read: not a result file (specviz reads .json, "
                ".jsonl, .csv, .yaml, .yml). A vLLM /metrics scrape saved as text is read by `specviz metrics FILE`."
                } in skipped
        passed_over = [entry["file"] for entry in skipped if ": not read: " in entry["message"]]
        assert len(passed_over) == 3 and passed_over == sorted(passed_over)
        assert code == 0 and [(e["format"], e["runs"]) for e in report["imported"]] == [
            ("vllm-bench", 2), ("sglang-bench", 1)]
        assert report["imported"][0]["file"].endswith("max_num_seqs=4-BENCH--max_concurrency=2-num_prompts=8/summary.json")
        runs = Store(db).runs()
        sweep_runs = runs[runs.source_format == "vllm-bench"]
        assert sorted(json.loads(e)["sweep"]["serve"]["max_num_seqs"] for e in sweep_runs.extra) == [4, 4]
        assert runs[runs.source_format == "sglang-bench"].engine.tolist() == ["sglang"]

    def test_ingest_imports_the_file_named_never_what_duckdb_would_expand_the_name_to(self, capsys,
                                                                                        expansion_decoys):
        """A name with glob characters or a leading ~ is the file of that name, or missing."""
        tmp_path = expansion_decoys
        (tmp_path / "r*.csv").write_text("output_throughput,label\n1,checked\n")
        (tmp_path / "~").mkdir()
        (tmp_path / "~" / "x.csv").write_text("output_throughput,label\n2,checked too\n")
        db = str(tmp_path / "c.duckdb")
        code, out, _ = run(capsys, "ingest", "r*.csv", "~/x.csv", "r?other.csv", "--db", db)
        report = json.loads(out)
        assert code == 2 and [e["file"] for e in report["imported"]] == ["r*.csv", "~/x.csv"]
        assert [e["file"] for e in report["errors"]] == ["r?other.csv"]  # missing, though r_other.csv matches
        s = Store(db)
        assert sorted(s.runs().label) == ["checked", "checked too"]
        s.close()

    def test_ingest_of_hostile_paths_and_files_never_ends_the_batch(self, tmp_path):
        """Devices, a FIFO, a directory, a link to /dev/zero and files that break parsers, with good
        files among them: each bad one is an error of its own, the good ones go in, exit 2, no
        traceback, and nothing blocks or reads without end (a generous timeout guards that)."""
        fifo = tmp_path / "fifo.json"
        os.mkfifo(fifo)
        link = tmp_path / "zero.json"
        link.symlink_to("/dev/zero")
        folder_link = tmp_path / "folder"  # a link to a folder is not walked: no loop can hold the import
        folder_link.symlink_to(tmp_path)
        hostile = {"deep.json": b'{"completed": 1, "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
                   "digits.json": b'{"completed": 1, "x": ' + b"9" * 5_000 + b"}",
                   "binary.csv": b"\x89PNG\r\n\x1a\n\x00\x00", "utf16.json": '{"completed": 1}'.encode("utf-16"),
                   "genai.csv": b"Metric,avg\nx," + b"a" * 200_000 + b"\n"}
        for name, data in hostile.items():
            (tmp_path / name).write_bytes(data)
        good = [str(SAMPLES / "guidellm_benchmarks.json"), str(SAMPLES / "sglang_bench_serving_c8.jsonl")]
        expected = {"/dev/zero": "this is a device; only regular files are imported",
                    "/dev/null": "this is a device; only regular files are imported",
                    str(fifo): "this is a FIFO; only regular files are imported",
                    str(folder_link): "this is a directory; only regular files are imported",
                    str(link): "this is a device; only regular files are imported",
                    str(tmp_path / "deep.json"): "nested too deeply",
                    str(tmp_path / "digits.json"): "more than 4,300 digits",
                    str(tmp_path / "binary.csv"): "binary file",
                    str(tmp_path / "utf16.json"): "UTF-16",
                    str(tmp_path / "genai.csv"): "genai-perf CSV is malformed"}
        paths = [good[0], *expected, good[1]]
        proc = subprocess.run([sys.executable, "-m", "specviz", "ingest", *paths, "--db", str(tmp_path / "c.duckdb")],
                              capture_output=True, text=True, cwd=ROOT, timeout=60)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
        report = json.loads(proc.stdout)
        assert [e["file"] for e in report["imported"]] == good
        errors = {e["file"]: e["message"] for e in report["errors"]}
        assert list(errors) == list(expected)
        for path, message in expected.items():
            assert errors[path].startswith(f"{path}: ") and message in errors[path]

    def test_a_store_another_process_holds_past_the_timeout_is_one_line_exit_2(self, capsys, tmp_path,
                                                                               monkeypatch):
        db = tmp_path / "held.duckdb"
        Store(db).close()
        result = tmp_path / "r.csv"
        result.write_text("concurrency,output_throughput\n1,10\n")
        monkeypatch.setenv("SPECVIZ_DB_LOCK_TIMEOUT_S", "0.5")
        holder = subprocess.Popen([sys.executable, "-c", f"import duckdb, time; con = duckdb.connect({str(db)!r}); "
                                   "print('held', flush=True); time.sleep(60)"], stdout=subprocess.PIPE, text=True)
        try:
            assert holder.stdout.readline().strip() == "held"
            for argv in (["ingest", str(result)], ["runs"]):
                code, out, err = run(capsys, *argv, "--db", str(db))
                assert (code, out) == (2, "")
                assert err == (f"specviz: error: The store {db} stayed locked by another process for 0.5 s: "
                               "close the other program or try again.\n")
        finally:
            holder.kill()
            holder.wait()
        code, out, _ = run(capsys, "ingest", str(result), "--db", str(db))
        assert code == 0 and len(json.loads(out)["imported"]) == 1

    def test_an_unexpected_failure_is_that_files_error(self, capsys, tmp_path, monkeypatch):
        original = Store.import_path

        def import_path(self, path, *args):
            if path.name == "boom.json":
                raise MemoryError()
            return original(self, path, *args)

        monkeypatch.setattr(Store, "import_path", import_path)
        code, out, _ = run(capsys, "ingest", str(tmp_path / "boom.json"), str(SAMPLES / "guidellm_benchmarks.json"),
                           "--db", str(tmp_path / "c.duckdb"))
        report = json.loads(out)
        assert code == 2 and len(report["imported"]) == 1
        assert report["errors"] == [{"file": str(tmp_path / "boom.json"), "message": f"{tmp_path / 'boom.json'}: "
                                     "reading it needs more memory than this machine has free"}]

    def test_runs_as_json_and_csv(self, capsys, tmp_path):
        db = str(tmp_path / "c.duckdb")
        run(capsys, "ingest", str(SAMPLES / "llmperf_Yi-1-5-34B_550_150_summary.json"), "--db", db)
        _, out, _ = run(capsys, "runs", "--db", db)
        rows = json.loads(out)
        assert rows[0]["source_file"] == str(SAMPLES / "llmperf_Yi-1-5-34B_550_150_summary.json")
        assert rows[0]["concurrency"] == 16 and rows[0]["mean_ttft_ms"] == pytest.approx(6056.374991535766)
        assert rows[0]["origin"] == "user"  # told from the shipped examples, as the console's runs are
        _, out, _ = run(capsys, "runs", "--db", db, "--format", "csv")
        assert list(csv.DictReader(io.StringIO(out)))[0]["source_format"] == "llmperf"

    def test_an_infinite_rate_is_one_in_every_table(self, capsys, tmp_path):
        """An analyst's pass: a request rate of ∞ (everything sent at once) printed as an empty cell in
        Markdown, as no rate does; the CSV wrote inf. JSON, which has no infinity, keeps null."""
        db, rates = str(tmp_path / "c.duckdb"), tmp_path / "rates.csv"
        rates.write_text("label,concurrency,request_rate,output_throughput\nall,8,inf,100\nnone,8,,100\n")
        run(capsys, "ingest", str(rates), "--db", db)
        query = ("query", "SELECT label, request_rate FROM runs ORDER BY label", "--db", db, "--format")
        assert run(capsys, *query, "md")[1].splitlines()[2:] == ["| all | inf |", "| none |  |"]
        assert list(csv.DictReader(io.StringIO(run(capsys, *query, "csv")[1]))) == [
            {"label": "all", "request_rate": "inf"}, {"label": "none", "request_rate": ""}]
        assert json.loads(run(capsys, *query, "json")[1]) == [{"label": "all", "request_rate": None},
                                                              {"label": "none", "request_rate": None}]

    def test_query_and_refusal(self, capsys, tmp_path):
        db = str(tmp_path / "c.duckdb")
        run(capsys, "ingest", str(SAMPLES / "vllm_bench_nerdalert.jsonl"), "--db", db)
        code, out, _ = run(capsys, "query", "SELECT count(*) AS n FROM runs", "--db", db)
        assert code == 0 and json.loads(out) == [{"n": 9}]
        code, out, err = run(capsys, "query", "DELETE FROM runs", "--db", db)
        assert code == 2 and out == "" and "DELETE" in err and err.count("\n") == 1

    def test_query_sums_and_decimals_are_json_numbers(self, capsys, tmp_path):
        """sum() of an integer column (HUGEINT) and a literal such as 1.5 (DECIMAL) were printed as
        JSON strings ("n": "9"), where every other figure is a number."""
        db = str(tmp_path / "c.duckdb")
        run(capsys, "ingest", str(SAMPLES / "vllm_bench_nerdalert.jsonl"), "--db", db)
        code, out, _ = run(capsys, "query", "SELECT sum(num_requests) AS n, 1.5 AS x, 0.125 AS y, "
                                            "NULL::DECIMAL(9, 2) AS none, (2::HUGEINT << 100) AS big FROM runs", "--db", db)
        # The file's nine runs: three of 300 requests and six of 900.
        assert code == 0 and json.loads(out) == [{"n": 6300, "x": 1.5, "y": 0.125, "none": None, "big": 2 ** 101}]
        assert json.loads(out)[0]["n"].__class__ is int
        code, out, _ = run(capsys, "query", "SELECT sum(num_requests) AS n, 1.5 AS x FROM runs", "--db", db,
                           "--format", "md")
        assert code == 0 and out.splitlines()[-1] == "| 6300 | 1.5 |"

    def test_query_as_a_markdown_table_whose_cells_cannot_break_it(self, capsys, tmp_path):
        db = made_store(tmp_path / "c.duckdb")
        code, out, _ = run(capsys, "query", "SELECT 'a|b' AS x, 'two\nlines' AS y, 1.5 AS z", "--db", db, "--format", "md")
        assert code == 0 and out.splitlines() == ["| x | y | z |", "|---|---|---|", "| a\\|b | two lines | 1.5 |"]
        code, out, _ = run(capsys, "runs", "--db", db, "--format", "md")
        assert code == 0 and out.splitlines()[0].startswith("| run_id | source_file |")  # the columns, with no row

    @pytest.mark.parametrize("argv", [["runs"], ["query", "SELECT 1"], ["remove", "x.csv"], ["export", "r-0", "--format", "benchmark-report"]])
    def test_a_store_named_where_there_is_none_is_said_not_made(self, capsys, tmp_path, monkeypatch, argv):
        """A CLI pass: `runs --db typo.duckdb` had made an empty store and printed [] (and a misspelt
        SPECVIZ_DB the same), `ingest --db /nonexistent/dir/x.duckdb` made its folders."""
        typo = tmp_path / "typo.duckdb"
        for given in (["--db", str(typo)], []):
            if not given:
                monkeypatch.setenv("SPECVIZ_DB", str(typo))
            code, out, err = run(capsys, *argv, *given)
            assert (code, out) == (2, "") and not typo.exists()
            assert err == (f"specviz: error: no store at {typo}: check the path (--db, or SPECVIZ_DB); `specviz ingest` "
                           "makes a store where it imports\n")
        folder = tmp_path / "no" / "such"
        code, out, err = run(capsys, "ingest", str(SAMPLES / "vllm_0.25_bench_serve_specdecode.json"), "--db", str(folder / "x.duckdb"))
        assert (code, out) == (2, "") and not (tmp_path / "no").exists()
        assert err == f"specviz: error: no folder {folder} for a new store at {folder / 'x.duckdb'}: check the path " \
                      "(--db, or SPECVIZ_DB), or make the folder first\n"
        code, _, err = run(capsys, "ingest", str(SAMPLES / "vllm_0.25_bench_serve_specdecode.json"), "--db", str(typo))
        assert code == 0 and typo.exists(), err

    def test_a_result_cut_by_a_cap_says_so(self, capsys, tmp_path, monkeypatch):
        """The rows that fit are printed, exit 0, and stderr says which cap cut them (it was silent)."""
        monkeypatch.setenv("SPECVIZ_SQL_MAX_ROWS", "5")
        code, out, err = run(capsys, "query", "SELECT * FROM range(20)", "--db", made_store(tmp_path / "c.duckdb"))
        assert code == 0 and len(json.loads(out)) == 5
        assert err == "specviz: the result is cut at its first 5 rows (SPECVIZ_SQL_MAX_ROWS)\n"
        code, out, err = run(capsys, "query", "SELECT * FROM range(3)", "--db", str(tmp_path / "c.duckdb"))
        assert code == 0 and len(json.loads(out)) == 3 and err == ""

    def test_remove_by_id_and_by_name_leaves_the_other_imports_whole(self, capsys, tmp_path):
        """There was no remove command: an imported file stayed in the store for good."""
        db = str(tmp_path / "c.duckdb")
        spec_decode = ROOT / "tests/fixtures/vllm_bench_spec_decode.json"
        run(capsys, "ingest", str(SAMPLES / "vllm_bench_nerdalert.jsonl"), str(spec_decode),
            str(SAMPLES / "guidellm_benchmarks.json"), "--db", db)
        content_hash = import_ids(capsys, db)[str(spec_decode)][0]
        code, out, err = run(capsys, "remove", content_hash[:12], "--db", db)
        assert (code, err) == (0, "")
        assert json.loads(out) == {"removed": {"file": str(spec_decode), "id": content_hash, "format": "vllm-bench",
                                               "runs": 1, "requests": 3}}
        code, out, _ = run(capsys, "remove", str(SAMPLES / "guidellm_benchmarks.json"), "--db", db)
        assert code == 0 and json.loads(out)["removed"]["runs"] == 1
        _, out, _ = run(capsys, "query", "SELECT source_file, count(*) AS runs, (SELECT count(*) FROM requests) "
                                         "AS requests, (SELECT count(*) FROM imports) AS imports FROM runs GROUP BY ALL",
                        "--db", db)
        assert json.loads(out) == [{"source_file": str(SAMPLES / "vllm_bench_nerdalert.jsonl"), "runs": 9,
                                    "requests": 0, "imports": 1}]

    def test_a_file_whose_name_is_no_utf8_is_removed_by_the_name_it_was_ingested_under(self, capsys, tmp_path):
        """A CLI pass: ingest stored its name's stray bytes as U+FFFD, and remove by that name failed in
        DuckDB's conversion ("cannot encode str as UTF-8, surrogate …")."""
        db = made_store(tmp_path / "c.duckdb")
        named = os.fsdecode(bytes(tmp_path) + b"/bad\xff\xfename.json")
        Path(named).write_bytes((SAMPLES / "vllm_0.25_bench_serve_specdecode.json").read_bytes())
        code, out, err = run(capsys, "ingest", named, "--db", db)
        assert code == 0, err
        code, out, err = run(capsys, "remove", named, "--db", db)
        assert (code, err) == (0, "") and json.loads(out)["removed"]["file"] == f"{tmp_path}/bad\ufffd\ufffdname.json"

    def test_remove_names_the_files_that_left_runs_to_it(self, capsys, tmp_path):
        db = str(tmp_path / "c.duckdb")
        lines = (SAMPLES / "vllm_bench_nerdalert.jsonl").read_bytes().splitlines()
        (tmp_path / "first.jsonl").write_bytes(b"\n".join(lines[:2]))
        (tmp_path / "all.jsonl").write_bytes(b"\n".join(lines))
        run(capsys, "ingest", str(tmp_path / "first.jsonl"), str(tmp_path / "all.jsonl"), "--db", db)
        code, out, err = run(capsys, "remove", str(tmp_path / "first.jsonl"), "--db", db)
        assert code == 0 and json.loads(out)["removed"]["runs"] == 2
        assert err == f"specviz: {tmp_path / 'all.jsonl'} left its runs (named 1, 2 in it) to this file, as already stored from it: " \
                      f"they go with it, and {tmp_path / 'all.jsonl'}'s import holds only its other runs until " \
                      f"{tmp_path / 'all.jsonl'} is imported again, which then stores them from it.\n"
        # Imported again, it has them back (an analyst's pass: it had been refused as already imported).
        code, out, _ = run(capsys, "ingest", str(tmp_path / "all.jsonl"), "--db", db)
        assert code == 0 and json.loads(out)["imported"][0]["runs"] == len(lines)

    def test_remove_names_the_files_skipped_whole_for_it(self, capsys, tmp_path):
        """A CLI pass: a sweep's run=0.json, skipped at import as its runs were stored from summary.json,
        lost them without a word when summary.json was removed."""
        db = str(tmp_path / "c.duckdb")
        sweep = tmp_path / "sweep"
        shutil.copytree(SAMPLES / "vllm_0.25_sweep", sweep)
        run(capsys, "ingest", str(sweep), "--db", db)
        (folder,) = {path.parent for path in sweep.rglob("run=0.json")}
        for _ in range(2):  # skipped twice, named once
            code, out, _ = run(capsys, "ingest", str(folder / "run=0.json"), "--db", db)
            assert code == 0 and json.loads(out)["skipped"]
        code, out, err = run(capsys, "remove", str(folder / "summary.json"), "--db", db)
        assert code == 0 and json.loads(out)["removed"]["runs"] >= 1
        assert err == (f"specviz: {folder / 'run=0.json'} was not stored when it was imported, as its runs (named 0 in it) were "
                       f"already stored from this file: they go with it. To keep them, import {folder / 'run=0.json'} "
                       "again once this file is removed.\n")
        code, out, _ = run(capsys, "ingest", str(folder / "run=0.json"), "--db", db)  # as it says: stored now
        assert code == 0 and len(json.loads(out)["imported"]) == 1

    def test_remove_of_an_unknown_or_ambiguous_name_exits_2_and_removes_nothing(self, capsys, tmp_path):
        db = str(tmp_path / "c.duckdb")
        for value in (1, 2):  # one name, two contents: two imports
            (tmp_path / "a.csv").write_text(f"concurrency,output_throughput\n{value},{value * 10}\n")
            run(capsys, "ingest", str(tmp_path / "a.csv"), "--db", db)
        code, out, err = run(capsys, "remove", "b.csv", "--db", db)
        assert (code, out) == (2, "") and err.count("\n") == 1
        assert err.startswith("specviz: error: No import has the id or file name b.csv; the stored files are "
                              f"{tmp_path / 'a.csv'} (")
        code, out, err = run(capsys, "remove", str(tmp_path / "a.csv"), "--db", db)
        ids = [content_hash[:12] for content_hash in import_ids(capsys, db)[str(tmp_path / "a.csv")]]
        assert (code, out) == (2, "") and err.count("\n") == 1
        assert err.startswith(f"specviz: error: 2 imports are named {tmp_path / 'a.csv'}")
        assert all(short in err for short in ids) and err.rstrip().endswith("Nothing was removed.")
        _, out, _ = run(capsys, "runs", "--db", db)
        assert sorted(r["concurrency"] for r in json.loads(out)) == [1, 2]
        code, out, _ = run(capsys, "remove", ids[1], "--db", db)  # its id says which
        assert code == 0 and json.loads(out)["removed"]["runs"] == 1
        _, out, _ = run(capsys, "runs", "--db", db)
        assert [r["concurrency"] for r in json.loads(out)] == [1]


# --- fit --------------------------------------------------------------------------------------

from specviz.model import dtypes, hf_config, roofline, step  # noqa: E402

FIT_DATA = settings.get("SPECVIZ_DATA_DIR")
FIT_GPUS, FIT_MODELS = roofline.load_gpus(FIT_DATA), hf_config.load_models(FIT_DATA)
# Knobs inside the vllm-v1 priors (as tests/test_calibration.py makes its points).
FIT_TRUE = step.Costs(mfu=0.55, mbu=0.8, overlap=0.2, step_ms=0.9, layer_us=1.0, token_us=8.0, allreduce_us=8.0,
                      draft_pass_us=270.0, speculation_ms=1.05)
FIT_HEADER = ["series", "gpu", "target", "draft", "gamma", "batch", "context", "acceptance_length"]
FIT_DRAFTS = {"eagle3": step.Draft("eagle3"), "Llama-3.2-1B": step.Draft("model", FIT_MODELS["Llama-3.2-1B"])}


def fit_truth(draft: str, batch: float, length: float = 2.9) -> float:
    """The speedup the step model gives at FIT_TRUE: H100, Llama-3.1-8B, γ 3, context 512."""
    return float(step.step(FIT_GPUS["H100-SXM"], FIT_MODELS["Llama-3.1-8B"], FIT_DRAFTS[draft], batch=batch,
                           gamma=3, context=512, acceptance_length=length, costs=FIT_TRUE)["speedup"])


def write_csv(path: Path, header: list[str], rows: list[list]) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def measured_rows(target: str = "Llama-3.1-8B") -> list[list]:
    """Two series at batch 2 and 160: EAGLE-3 with its acceptance length, a draft model without."""
    return ([["eagle3-head", "H100-SXM", target, "eagle3", 3, b, 512, 2.9, fit_truth("eagle3", b), "vllm-v1"]
             for b in (2, 160)]
            + [["draft-model", "H100-SXM", target, "Llama-3.2-1B", 3, b, 512, "", fit_truth("Llama-3.2-1B", b),
                "vllm-v1"] for b in (2, 160)])


MEASURED_HEADER = FIT_HEADER + ["measured_speedup", "engine"]
# P.csv: the EAGLE-3 rows repeat the setting, the draft-model rows leave it to the series.
PREDICT_ROWS = ([["eagle3-head", "H100-SXM", "Llama-3.1-8B", "eagle3", 3, b, 512, 2.9] for b in (8, 24, 64)]
                + [["draft-model", "", "", "", 3, b, 512, ""] for b in (8, 24, 64)])


@pytest.fixture
def fit_files(tmp_path):
    return (write_csv(tmp_path / "M.csv", MEASURED_HEADER, measured_rows()),
            write_csv(tmp_path / "P.csv", FIT_HEADER, PREDICT_ROWS))


class TestFitCommand:
    def check_predictions(self, result):
        assert [p["row"] for p in result["predictions"]] == [1, 2, 3, 4, 5, 6]
        assert [p["series"] for p in result["predictions"]] == ["eagle3-head"] * 3 + ["draft-model"] * 3
        for p, row in zip(result["predictions"], PREDICT_ROWS):
            truth = fit_truth("eagle3" if row[0] == "eagle3-head" else "Llama-3.2-1B", row[5])
            assert p["speedup"] == pytest.approx(truth, rel=0.02)
            assert p["low"] <= truth <= p["high"] and p["low"] <= p["speedup"] <= p["high"]

    def test_json_shape_and_predictions_near_the_truth_within_their_band(self, capsys, fit_files):
        measured, predict = fit_files
        code, out, err = run(capsys, "fit", "--measured", str(measured), "--predict", str(predict), "--format", "json")
        assert (code, err) == (0, "")
        result = json.loads(out)
        assert set(result) == {"series", "predictions"}
        assert list(result["series"]) == ["eagle3-head", "draft-model"]
        for entry in result["series"].values():
            assert set(entry) == {"fitted", "rms_error", "warnings"}
            assert set(entry["fitted"]) == {"mfu", "mbu", "overlap", "layer_us", "allreduce_us", "step_ms",
                                            "token_us", "draft_pass_us", "speculation_ms", "expected_tokens"}
            assert entry["rms_error"] < 0.01 and entry["warnings"] == []
        assert result["series"]["eagle3-head"]["fitted"]["expected_tokens"] == 2.9  # measured, not fitted
        assert 2.5 < result["series"]["draft-model"]["fitted"]["expected_tokens"] <= 4  # fitted
        assert set(result["predictions"][0]) == {"row", "series", "speedup", "low", "high"}
        self.check_predictions(result)

    def test_without_predict_predictions_is_empty_and_warnings_are_english(self, capsys, tmp_path):
        """4x faster with 2.9 tokens a step at no cost is impossible: the fit says so in words."""
        rows = [["impossible", "H100-SXM", "Llama-3.1-8B", "ngram", 3, b, 512, 2.9, s]
                for b, s in ((1, 4.0), (64, 3.9))]
        measured = write_csv(tmp_path / "M.csv", FIT_HEADER + ["measured_speedup"], rows)
        code, out, _ = run(capsys, "fit", "--measured", str(measured))
        result = json.loads(out)
        assert code == 0 and result["predictions"] == []
        assert result["series"]["impossible"]["warnings"] == [
            "No fixed costs per step and costs per token that are zero or more fit these points: check the setting (GPU, "
            "models, draft, tensor parallelism) against the runs. The closest fit with no cost per token is shown. "
            "Its band is widened by how far it misses them."]

    def test_frontier_drafts_and_a_kv_budget_are_fitted(self, capsys, tmp_path):
        """An MTP series on DeepSeek-V3 in its FP8 checkpoint on 8 B200s, a block drafter, an EAGLE-3
        head of its own config, and a StreamingLLM draft that reads 512 positions: each one a fit."""
        head = Path(settings.get("SPECVIZ_DATA_DIR")) / "model_configs" / "EAGLE3-SpecForge-qwen3-32B.json"
        rows = ([[name, "B200", target, draft, 3, b, 2048, 2.5, 2.2 - b / 200, 8, "checkpoint", "", budget]
                 for name, target, draft, budget in (
                     ("mtp", "DeepSeek-V3", "mtp", ""), ("block", "Qwen3-32B", "block:Qwen3-0.6B", ""),
                     ("head", "Qwen3-32B", f"eagle3:{head}", ""), ("streaming", "Qwen3-32B", "Qwen3-0.6B", "512"))
                 for b in (2, 64)])
        header = FIT_HEADER + ["measured_speedup", "tp", "weight_dtype", "kv_dtype", "draft_kv_budget"]
        code, out, err = run(capsys, "fit", "--measured", str(write_csv(tmp_path / "M.csv", header, rows)))
        assert code == 0, err
        assert set(json.loads(out)["series"]) == {"mtp", "block", "head", "streaming"}
        rows[0][3] = rows[1][3] = "mtp"
        rows[0][2] = rows[1][2] = "Qwen3-32B"
        code, _, err = run(capsys, "fit", "--measured", str(write_csv(tmp_path / "M.csv", header, rows)))
        assert code == 2 and "row 1, column draft: Qwen3-32B has no MTP layers in its config.json" in err

    def test_an_empty_weight_dtype_is_the_checkpoints_formats_as_in_calc(self, capsys, tmp_path):
        """A CLI pass: an empty cell had priced DeepSeek-V3, which ships FP8 blocks, in BF16, where calc
        and the calculator take the checkpoint's formats."""
        header = FIT_HEADER + ["measured_speedup", "tp", "weight_dtype"]
        points = [[1, 1.6], [32, 1.4]]
        predictions = {}
        for written in ("", "checkpoint", "bf16"):
            rows = [["s", "B200", "DeepSeek-V3", "mtp", 1, b, 1024, 1.8, speedup, 8, written] for b, speedup in points]
            predict = write_csv(tmp_path / "P.csv", header, [[*rows[0][:5], 8, *rows[0][6:]]])
            code, out, err = run(capsys, "fit", "--measured", str(write_csv(tmp_path / "M.csv", header, rows)),
                                 "--predict", str(predict))
            assert code == 0, err
            predictions[written] = json.loads(out)["predictions"][0]["speedup"]
        assert predictions[""] == predictions["checkpoint"] != predictions["bf16"]

    @pytest.mark.parametrize("column, value, message", [
        ("batch", "2000", "row 1, column batch: must be a finite number above 0 and at most 1024, got '2000'"),
        ("context", "10000000", "row 1, column context: must be a finite number from 0 to 131072, got '10000000'")])
    def test_a_batch_or_context_past_what_calc_takes_is_refused(self, capsys, tmp_path, column, value, message):
        """A CLI pass: batch 100,000 and a context of 10⁷ tokens had been fitted, RMS error 0, no word."""
        rows = [["s", "H100-SXM", "Llama-3.1-8B", "eagle3", 3, b, 1024, 2.5, 2 - b / 300] for b in (1, 64)]
        rows[0][FIT_HEADER.index(column)] = value
        code, out, err = run(capsys, "fit", "--measured", str(write_csv(tmp_path / "M.csv", FIT_HEADER + ["measured_speedup"], rows)))
        assert code == 2 and out == "" and message in err

    def test_rows_whose_batch_the_memory_does_not_hold_are_warned_of(self, capsys, tmp_path):
        rows = [["s", "H100-SXM", "Llama-3.1-8B", "eagle3", 3, b, context, 2.5, 2 - b / 300]
                for b, context in ((1, 1024), (512, 131072))]
        code, out, err = run(capsys, "fit", "--measured", str(write_csv(tmp_path / "M.csv", FIT_HEADER + ["measured_speedup"], rows)))
        held = int(scenario.largest_batch(FIT_GPUS["H100-SXM"], FIT_MODELS["Llama-3.1-8B"], FIT_DRAFTS["eagle3"],
                                          dtypes.precision_of("checkpoint", "bf16"), tp=1, context=131072, gamma=3,
                                          rule=scenario.load_presets(FIT_DATA).engines["any"].memory))
        assert code == 0, err
        assert held < 512
        assert json.loads(out)["series"]["s"]["warnings"][-1] == (
            f"rows 2: the memory does not hold the batch there (batch 512 at a context of 131,072 tokens holds at most "
            f"{held:,} sequences on 1 GPUs with the draft): the runs had another setting (more GPUs, another precision "
            "or context) than the one fitted, so its figures are not theirs")

    def test_data_parallel_attention_and_expert_parallelism_columns(self, capsys, tmp_path):
        rows = [["dp-ep", "H200", "DeepSeek-V3", "mtp", 2, b, 2048, 2.6, 2.1 - b / 300, 1, 8, "on"] for b in (4, 64)]
        header = FIT_HEADER + ["measured_speedup", "tp", "dp", "ep"]
        code, out, err = run(capsys, "fit", "--measured", str(write_csv(tmp_path / "M.csv", header, rows)))
        assert code == 0, err
        rows[1][-1] = "maybe"
        code, _, err = run(capsys, "fit", "--measured", str(write_csv(tmp_path / "M.csv", header, rows)))
        assert code == 2 and "row 2, column ep: 'maybe': use on or off (empty: off)" in err

    def test_a_tp_that_does_not_divide_the_heads_is_refused(self, capsys, tmp_path):
        """tp 3 for Qwen3-32B (64 heads) had been fitted: no engine ran it (the CLI review)."""
        rows = [["odd", "H100-SXM", "Qwen3-32B", "Qwen3-0.6B", 4, b, 1024, "", 2 - b / 300, 3] for b in (2, 64)]
        measured = write_csv(tmp_path / "M.csv", FIT_HEADER + ["measured_speedup", "tp"], rows)
        code, _, err = run(capsys, "fit", "--measured", str(measured))
        assert code == 2 and "row 1, column tp: tp 3 does not divide Qwen3-32B's 64 attention heads" in err

    def test_a_series_too_large_to_fit_is_refused_with_its_size(self, capsys, tmp_path):
        """300 speedups without acceptance lengths are 5.8 × 10⁶ candidates × points (5,000 took 18 GB)."""
        rows = [["big", "H100-SXM", "Llama-3.1-8B", "eagle3", 3, b, 512, "", 2 - b / 300] for b in range(1, 301)]
        measured = write_csv(tmp_path / "M.csv", FIT_HEADER + ["measured_speedup"], rows)
        code, out, err = run(capsys, "fit", "--measured", str(measured))
        assert code == 2 and out == ""
        assert ("series 'big' (rows 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 … 300 rows) cannot be fitted: a fit of 300 "
                "points is too large (5,760,000 candidate settings × points, at most 4,000,000): fit at most 208 "
                "points, one sweep at a time") in err

    def test_an_acceptance_at_the_edge_is_said_in_words_and_not_carried_to_a_shorter_draft(self, capsys, tmp_path):
        """10 % above what all 4 tokens γ 3 allows give, without an acceptance length: the fit asks
        for all 4, and a row at γ 2 (at most 3 tokens) needs its own acceptance length."""
        rows = [["edge", "H100-SXM", "Llama-3.1-8B", "eagle3", 3, b, 512, "", 1.10 * fit_truth("eagle3", b, 4.0),
                 "vllm-v1"] for b in (2, 160)]
        measured = write_csv(tmp_path / "M.csv", MEASURED_HEADER, rows)
        predict = write_csv(tmp_path / "P.csv", FIT_HEADER, [["edge", "", "", "", 2, 8, 512, ""]])
        code, out, _ = run(capsys, "fit", "--measured", str(measured))
        assert code == 0 and json.loads(out)["series"]["edge"]["warnings"] == [
            "The points ask for as many tokens per step as the draft length allows (E at γ + 1): check the "
            "acceptance length or γ."]
        code, out, err = run(capsys, "fit", "--measured", str(measured), "--predict", str(predict))
        assert code == 2 and out == "" and err.count("\n") == 1
        assert f"{predict}, row 1, column acceptance_length: empty, and series 'edge' has up to 4 tokens" in err

    def test_csv_and_markdown(self, capsys, fit_files):
        measured, predict = fit_files
        _, out, _ = run(capsys, "fit", "--measured", str(measured), "--predict", str(predict), "--format", "csv")
        series, predictions = out.strip().split("\n\n")
        assert [r["series"] for r in csv.DictReader(io.StringIO(series))] == ["eagle3-head", "draft-model"]
        assert [int(r["row"]) for r in csv.DictReader(io.StringIO(predictions))] == [1, 2, 3, 4, 5, 6]
        _, out, _ = run(capsys, "fit", "--measured", str(measured), "--format", "md")
        assert out.startswith("| series | mfu |")

    def test_target_from_a_config_json_path(self, capsys, fit_files, tmp_path, monkeypatch):
        """A config path relative to the CSV's folder, from another working folder, fits as its preset."""
        (tmp_path / "configs").mkdir()
        shutil.copy(ROOT / "data/model_configs/Llama-3.1-8B.json", tmp_path / "configs" / "config.json")
        measured = write_csv(tmp_path / "M-config.csv", MEASURED_HEADER, measured_rows("configs/config.json"))
        predict = write_csv(tmp_path / "P-config.csv", FIT_HEADER,
                            [[*row[:2], "configs/config.json" if row[2] else "", *row[3:]] for row in PREDICT_ROWS])
        monkeypatch.chdir(ROOT)
        code, out, err = run(capsys, "fit", "--measured", str(measured), "--predict", str(predict))
        assert (code, err) == (0, "")
        by_config = json.loads(out)
        _, out, _ = run(capsys, "fit", "--measured", str(fit_files[0]), "--predict", str(fit_files[1]))
        assert by_config == json.loads(out)
        self.check_predictions(by_config)

    @pytest.mark.parametrize("edits, message", [
        ([("M", 1, "gpu", "H999")], "M.csv, row 1, column gpu: unknown GPU 'H999': use one of H100-SXM"),
        ([("M", 1, "target", "Llama-9")],
         "M.csv, row 1, column target: unknown model 'Llama-9': use a preset id (Qwen3-32B"),
        ([("M", 2, "draft", "hydra")], "M.csv, row 2, column draft: unknown model 'hydra': use a preset id "
                                       "(Qwen3-32B, "),
        ([("M", 2, "draft", "block:nowhere")], "M.csv, row 2, column draft: unknown model 'nowhere'"),
        ([("M", "add", "draft_kv_budget", "0")], "M.csv, row 1, column draft_kv_budget: must be a whole number of 1"),
        ([("M", 3, "engine", "vllm-v9")], "M.csv, row 3, column engine: unknown engine 'vllm-v9': use one of vllm-v1"),
        ([("M", "drop", "context")], "M.csv: missing column 'context'; the columns needed are series, gpu"),
        ([("M", "drop", "measured_speedup")], "M.csv: missing column 'measured_speedup'"),
        ([("P", "drop", "acceptance_length")], "P.csv: missing column 'acceptance_length'"),
        ([("M", 2, "batch", "lots")], "M.csv, row 2, column batch: 'lots' is not a number"),
        ([("M", 4, "measured_speedup", "")], "M.csv, row 4, column measured_speedup: empty; give a number"),
        ([("M", 1, "gamma", "2.5")], "M.csv, row 1, column gamma: must be a whole number of 1 or more, got '2.5'"),
        ([("P", 3, "acceptance_length", "nan")],
         "P.csv, row 3, column acceptance_length: must be a finite number of 1 or more, got 'nan'"),
        ([("M", "pop", 4)], "M.csv: series 'draft-model' has 1 row (row 3); a fit needs 2 rows or more"),
        ([("P", 2, "series", "eagle-x")], "P.csv, row 2, column series: 'eagle-x' is not a series of "),
        ([("M", 2, "gpu", "H200")],
         "M.csv, row 2, column gpu: series 'eagle3-head' has 'H200' here and 'H100-SXM' in row 1"),
        ([("P", 4, "gpu", "A100-80GB")],
         "P.csv, row 4, column gpu: 'A100-80GB', but series 'draft-model' was measured with 'H100-SXM'"),
        ([("M", 4, "acceptance_length", "2.9")],
         "M.csv, row 4, column acceptance_length: series 'draft-model' gives an acceptance length in some rows"),
        ([("M", 1, "acceptance_length", "4.5")], "M.csv, row 1, column acceptance_length: 4.5 tokens per step is "
                                                 "more than the verify pass scores (γ + 1 = 4)"),
        ([("M", "add", "weight_dtype", "bf16"), ("M", "add", "kv_dtype", "int4")],
         "M.csv, row 1, column kv_dtype: a int4 KV cache is not modelled; use one of: bf16, fp8 (empty cells: bf16)"),
        ([("M", "add", "weight_dtype", "fp3")],
         "M.csv, row 1, column weight_dtype: fp3 weights are not modelled; use one of: bf16, fp16, fp8, int4, fp4"),
        ([("M", "add", "tp", "0")], "M.csv, row 1, column tp: must be a whole number of 1 or more, got '0'"),
        ([("M", "cells", 2)], "M.csv, row 2: 11 cells, but the header names 10 columns"),
    ])
    def test_errors_name_the_file_row_and_column_exit_2(self, capsys, tmp_path, edits, message):
        tables = {"M": [list(MEASURED_HEADER)] + measured_rows(),
                  "P": [list(FIT_HEADER)] + [list(row) for row in PREDICT_ROWS]}
        for name, *edit in edits:
            table = tables[name]
            if edit[0] == "drop":
                i = table[0].index(edit[1])
                tables[name] = [row[:i] + row[i + 1:] for row in table]
            elif edit[0] == "pop":
                table.pop(edit[1])
            elif edit[0] == "add":
                table[0].append(edit[1])
                for row in table[1:]:
                    row.append(edit[2])
            elif edit[0] == "cells":
                table[edit[1]].append("extra")
            else:
                table[edit[0]][table[0].index(edit[1])] = edit[2]
        m = write_csv(tmp_path / "M.csv", tables["M"][0], tables["M"][1:])
        p = write_csv(tmp_path / "P.csv", tables["P"][0], tables["P"][1:])
        code, out, err = run(capsys, "fit", "--measured", str(m), "--predict", str(p))
        assert code == 2 and out == "" and err.count("\n") == 1, err
        assert err.startswith(f"specviz: error: {tmp_path}/") and message in err, err

    def test_series_of_tensor_parallel_rows_on_a_gpu_without_a_link_is_its_error(self, capsys, tmp_path):
        rows = [["tp2", "Intel-12th-gen-desktop", "Llama-3.1-8B", "ngram", 3, b, 512, 2.9, 1.5, 2] for b in (1, 8)]
        m = write_csv(tmp_path / "M.csv", FIT_HEADER + ["measured_speedup", "tp"], rows)
        code, out, err = run(capsys, "fit", "--measured", str(m))
        assert code == 2 and out == "" and err.count("\n") == 1
        assert f"{m}: series 'tp2' (rows 1, 2) cannot be fitted: " in err

    def test_unreadable_files_exit_2(self, capsys, tmp_path, monkeypatch):
        cases = {tmp_path / "missing.csv": "no such file", tmp_path: "not a regular file"}
        (tmp_path / "latin1.csv").write_bytes(",".join(MEASURED_HEADER).encode() + b"\nx\xe9,H100-SXM\n")
        cases[tmp_path / "latin1.csv"] = "not UTF-8 text"
        (tmp_path / "empty.csv").write_text("\n\n")
        cases[tmp_path / "empty.csv"] = "empty; the first line names the columns"
        (tmp_path / "header.csv").write_text(",".join(MEASURED_HEADER) + "\n")
        cases[tmp_path / "header.csv"] = "no rows below the header"
        (tmp_path / "huge-cell.csv").write_text('series,gpu\nx,"' + "a" * 200_000 + '"\n')
        cases[tmp_path / "huge-cell.csv"] = "huge-cell.csv, line 2: not a readable CSV (field larger than field limit"
        os.mkfifo(tmp_path / "fifo.csv")
        cases[tmp_path / "fifo.csv"] = "not a regular file"
        for path, message in cases.items():
            code, out, err = run(capsys, "fit", "--measured", str(path))
            assert code == 2 and out == "" and err.count("\n") == 1 and message in err, (path, err)
            assert str(path) in err
        monkeypatch.setenv("SPECVIZ_MAX_UPLOAD_BYTES", "100")
        big = write_csv(tmp_path / "big.csv", MEASURED_HEADER, measured_rows())
        code, _, err = run(capsys, "fit", "--measured", str(big))
        assert code == 2 and "a CSV is at most 100 (SPECVIZ_MAX_UPLOAD_BYTES)" in err

    def test_a_target_path_that_is_no_regular_file_or_too_large_is_refused_with_its_row(self, capsys, tmp_path,
                                                                                       monkeypatch):
        os.mkfifo(tmp_path / "fifo.json")
        big = tmp_path / "big.json"
        big.write_bytes(b'{"model_type": "llama", "x": "' + b"a" * 2000 + b'"}')
        monkeypatch.setenv("SPECVIZ_MAX_CONFIG_BYTES", "1000")
        for target, message in (("fifo.json", "not a regular file"), ("big.json", "a config.json is at most 1,000"),
                                ("nowhere/config.json", "no such file")):
            m = write_csv(tmp_path / "M.csv", MEASURED_HEADER, measured_rows(target))
            code, _, err = run(capsys, "fit", "--measured", str(m))
            assert code == 2 and err.count("\n") == 1 and message in err, err
            assert "M.csv, row 1, column target: " in err

    def test_through_python_dash_m(self, fit_files):
        measured, predict = fit_files
        ok = subprocess.run([sys.executable, "-m", "specviz", "fit", "--measured", str(measured), "--predict",
                             str(predict), "--format", "json"], capture_output=True, text=True, cwd=ROOT, timeout=120)
        assert ok.returncode == 0 and ok.stderr == "", ok.stderr
        self.check_predictions(json.loads(ok.stdout))
        bad = write_csv(measured.parent / "bad.csv", MEASURED_HEADER, measured_rows()[:3])
        failed = subprocess.run([sys.executable, "-m", "specviz", "fit", "--measured", str(bad)],
                                capture_output=True, text=True, cwd=ROOT, timeout=120)
        assert failed.returncode == 2 and failed.stdout == "" and "Traceback" not in failed.stderr
        assert failed.stderr == (f"specviz: error: {bad}: series 'draft-model' has 1 row (row 3); "
                                 "a fit needs 2 rows or more\n")


class TestClaimCommand:
    def test_a_link_s_rate_in_percent_gets_the_page_s_words(self, capsys):
        """claim_value=80 had been "not one the Claims page takes", where the page takes up to 100 and says
        that a rate is between 0 and 1 (a review)."""
        code, out, err = run(capsys, "claim", "http://localhost:8501/check-a-claim?claim=2x&claim_measure=acceptance_rate"
                                              "&claim_value=80")
        assert code == 2 and out == "" and "give 70% as 0.70" in err

    def test_a_slowdown_is_the_page_s_check_of_it(self, capsys):
        """Seed 000's kind of claim, "35% slower at batch 64": the highest α at which it holds, as the
        Claims page names it (tests/test_app.py), and its other reading said."""
        code, out, _ = run(capsys, "claim", "35% slower at batch 64")
        row = json.loads(out)
        check = slowdown.check_slowdown(make_scenario(), claims.Claim(0.65, batch=64), settings.get("SPECVIZ_GAMMA_MAX"),
                                        settings.get("SPECVIZ_BATCH_MAX"))
        assert code == 0 and (row["claim"], row["batch"], row["verdict"]) == (0.65, 64, "conditional")
        assert row["headline"].startswith("Conditional: 0.65× on 2× NVIDIA H100 SXM for Qwen3-32B") and "α 0.339" in row["headline"]
        assert row["alpha_at_most"] == 0.339 == claim_verdict.at_most(check.required.set_index("gamma").loc[4, "alpha_max"], 3)
        assert row["floor"]["speedup"] == pytest.approx(check.floor["speedup"]) and row["required_gamma"] == 4
        assert "a time per token 35% longer, 0.74×" in row["percent_note"]
        assert "max_speedup" not in row and "best" not in row
        # At given costs, seed 000's load test: 0.65× at γ 4 holds up to α 0.802 (0.8027 exactly).
        code, out, _ = run(capsys, "claim", "35% slower", "--verify-cost", "5", "--gamma", "4", "--measure", "alpha",
                           "--value", "0.8")
        row = json.loads(out)
        assert (code, row["verdict"], row["alpha_at_most"]) == (0, "plausible", {"4": 0.802})
        assert row["floor"] == pytest.approx(1 / 5.2)

    def test_the_page_s_check_of_a_claim_with_its_batch(self, capsys):
        code, out, _ = run(capsys, "claim", "2.5x at batch 64")
        row = json.loads(out)
        check = claims.check_claim(make_scenario(), claims.Claim(2.5, batch=64), settings.get("SPECVIZ_GAMMA_MAX"),
                                   settings.get("SPECVIZ_BATCH_MAX"), PRESETS.acceptance)
        assert code == 0 and (row["claim"], row["batch"], row["verdict"]) == (2.5, 64, check.verdict)
        # α 0.987, past every published acceptance: unlikely, as the page says it (no Markdown).
        assert row["headline"].startswith("Unlikely: 2.50× on 2× NVIDIA H100 SXM for Qwen3-32B")
        assert row["conditions"][1].startswith("That α (0.987) is above every published acceptance")
        assert row["holds_at_batches"] == [64, 64] and len(row["required"]) == len(check.required)
        # Without a measured acceptance it said only "enter it above", the Claims page's field.
        assert any("--measure and --value of specviz claim" in reason for reason in row["reasons"])

    def test_an_engine_over_another_without_speculation_is_said_to_be_so(self, capsys):
        _, out, _ = run(capsys, "claim", "SGLang is 1.5x faster than vLLM on H100")
        read = json.loads(out)["read_from_sentence"]
        assert read["over_words"] == "vLLM" and read["speculation_note"].startswith(
            "Nor does it say the figure comes from speculative decoding: a server faster than vLLM")

    def test_batches_inside_the_range_where_it_does_not_hold_are_listed(self, capsys):
        _, out, _ = run(capsys, "claim", "DeepSeek-V3 with MTP is 1.8x faster on 8 H200")
        row = json.loads(out)
        assert (row["holds_at_batches"], row["not_at_batches"]) == ([1, 721], [[3, 17]])
        assert "not_at_your_acceptance" not in row

    def test_the_claims_page_s_own_link_gives_the_page_s_check(self, capsys):
        """Its claim, batch, γ, measured acceptance and workload: the CLI had read the scenario alone
        from it (α ≥ 0.764 at γ 8 where the page said 0.781 at γ 5: a manager's pass)."""
        link = ("http://127.0.0.1:8501/check-a-claim?claim=2.8x&claim_batch=1&claim_gamma=5&claim_measure=alpha"
                "&claim_value=0.7&claim_workload=coding_assistant&gpu=H100-SXM&tp=4")
        code, out, _ = run(capsys, "claim", link)
        row = json.loads(out)
        chosen = make_scenario(gpu="H100-SXM", tp=4)
        workload = PRESETS.workloads["coding_assistant"]
        check = claims.check_claim(chosen, claims.Claim(2.8, batch=1, gamma=5, alpha=0.7, workload=(
            workload.input_tokens, workload.output_tokens)), settings.get("SPECVIZ_GAMMA_MAX"),
            settings.get("SPECVIZ_BATCH_MAX"), PRESETS.acceptance)
        assert code == 0 and (row["claim"], row["batch"], row["alpha"], row["required_gamma"]) == (2.8, 1, 0.7, 5)
        assert (row["verdict"], row["headline"]) == (check.verdict, cli_common.words(check.headline, "en"))
        # An option stands over the link's field.
        _, out, _ = run(capsys, "claim", "2.8x", link, "--batch", "8")
        assert json.loads(out)["batch"] == 8
        failed = run(capsys, "claim", "2.8x", link.replace("claim_batch=1", "claim_batch=0"))
        assert failed[0] == 2 and "the link's claim_batch=0 is not one the Claims page takes" in failed[2]
        # An option given stands for its field: the link's is not read (an attack pass).
        _, out, _ = run(capsys, "claim", "2.8x", link.replace("claim_gamma=5", "claim_gamma=abc"), "--gamma", "3")
        assert json.loads(out)["required_gamma"] == 3

    def test_a_calculator_link_s_steady_load_is_not_the_claims_page_s(self, capsys):
        """A consistency pass: a Claims link that kept the calculator's load (prefill=on, 16,000 in, 150
        out) was judged by the command at the load's mean context, 16,075 ("impossible": 22 sequences
        fit), where the page judged on its sidebar's scenario, decoding at 1,024 (1.16×)."""
        link = ("/check-a-claim?target=Llama-3.1-8B&prefill=on&input_tokens=16000&output_tokens=150"
                "&claim=1.5x%20at%20batch%20256&claim_workload=coding_assistant&claim_measure=alpha&claim_value=0.8")
        code, out, _ = run(capsys, "claim", link)
        row = json.loads(out)
        workload = PRESETS.workloads["coding_assistant"]
        check = claims.check_claim(make_scenario(target="Llama-3.1-8B"), claims.Claim(
            1.5, batch=256, alpha=0.8, workload=(workload.input_tokens, workload.output_tokens)),
            settings.get("SPECVIZ_GAMMA_MAX"), settings.get("SPECVIZ_BATCH_MAX"), PRESETS.acceptance)
        assert code == 0 and (row["verdict"], row["headline"]) == (check.verdict, cli_common.words(check.headline, "en"))
        assert check.verdict != "impossible" and "16,075" not in out

    def test_the_link_s_claim_is_its_field_not_a_sentence(self, capsys):
        """The page reads its claim field as a figure, never as a sentence whose GPU and model would set
        the scenario; given twice, the field takes the last (an attack pass: the CLI had checked 3x on
        B200 for Llama-3.1-70B where the page refused, and 3x where the page took 4x)."""
        code, _, err = run(capsys, "claim", "?gpu=H100-SXM&claim=3x+faster+on+B200+for+Llama-3.1-70B")
        assert code == 2 and "is not a speedup" in err
        code, _, err = run(capsys, "claim", "?claim=3x%00")
        assert code == 2 and "is not a speedup" in err
        _, out, _ = run(capsys, "claim", "?claim=3x&claim=4x")
        assert json.loads(out)["claim"] == 4.0

    def test_a_measured_length_is_taken_at_the_claims_gamma_else_the_links(self, capsys):
        """An engineer's pass: 2.43 tokens a step at γ 3 had been read at γ 4 whatever the claim's γ or
        the link's (α 0.629 where the calculator reads 0.673)."""
        link = "target=gpt-oss-120b&draft=eagle3&tp=1&engine=sglang"
        measured = ("--measure", "acceptance_length", "--value", "2.43")
        at = lambda gamma: pytest.approx(spec.alpha_from_acceptance_length(2.43, gamma))
        assert json.loads(run(capsys, "claim", "1.44x", link, "--gamma", "3", *measured)[1])["alpha"] == at(3)
        assert json.loads(run(capsys, "claim", "1.44x", link + "&gamma=2", *measured)[1])["alpha"] == at(2)
        assert json.loads(run(capsys, "claim", "1.44x", link + "&gamma=2", "--gamma", "3", "--measured-gamma", "5",
                              *measured)[1])["alpha"] == at(5)
        page = f"check-a-claim?{link}&claim_gamma=3&claim_measure=acceptance_length&claim_value=2.43"
        assert json.loads(run(capsys, "claim", page)[1])["alpha"] == at(3)

    def test_the_claims_page_s_link_without_its_default_claim_checks_that_claim(self, capsys):
        """The page leaves its default claim, "up to 3x", out of its link; the command had refused the
        link as "a link, not a claim" (a manager's pass). A calculator's link is still refused so."""
        link = "http://127.0.0.1:8501/check-a-claim?target=gpt-oss-120b&draft=eagle3&tp=1&dp=1&ep=off"
        for given in (link, link + "&claim_measure=acceptance_length&claim_value=2.41&claim_measured_gamma=3",
                      "claim_batch=8&gpu=B200"):
            code, out, _ = run(capsys, "claim", given)
            assert code == 0 and json.loads(out)["claim"] == 3.0
        _, out, _ = run(capsys, "claim", "up to 3x", link)
        assert json.loads(out)["headline"] == json.loads(run(capsys, "claim", link)[1])["headline"]
        code, _, err = run(capsys, "claim", "gpu=B200&batch=8")
        assert code == 2 and "is a link, not a claim" in err
        # The path's last segment whole, the path alone as the page opens it, a blank claim said as one
        # (an attack pass: "/not-check-a-claim" had been the Claims page, its path alone a sentence).
        for given, said in (("http://127.0.0.1:8501/not-check-a-claim?gpu=H100-SXM", "is a link, not a claim"),
                            ("http://127.0.0.1:8501/live-metrics?claim_gamma=3", "is a link, not a claim"),
                            ("http://127.0.0.1:8501/check-a-claim?gpu=H100-SXM&claim=", "the link's claim= is empty")):
            code, _, err = run(capsys, "claim", given)
            assert code == 2 and said in err, given
        for given in ("http://127.0.0.1:8501/check-a-claim", "http://127.0.0.1:8501/check-a-claim/?claim_view=beside"):
            code, out, _ = run(capsys, "claim", given)
            assert code == 0 and json.loads(out)["claim"] == 3.0

    def test_a_claims_link_says_what_its_figure_is_over_as_the_page_did(self, capsys):
        """A link copied after a sentence over vLLM or over EAGLE-3 (claim_over) leads its headline and says
        its baseline as the page does; words given apart from the link are their own claim."""
        link = "http://127.0.0.1:8501/check-a-claim?gpu=B200&target=gpt-oss-20b&draft=peagle&tp=1&claim=5x"
        _, plain, _ = run(capsys, "claim", link)
        code, out, _ = run(capsys, "claim", link + "&claim_over=vLLM")
        over = json.loads(out)
        assert code == 0 and over["headline"] == ("Against plain decoding on this setting, not what the claim's figure "
                                                  "is over (vLLM), which needs its own baseline: "
                                                  + json.loads(plain)["headline"])
        assert over["over_words"] == "vLLM" and "does not say is plain decoding" in over["over_note"]
        _, out, _ = run(capsys, "claim", link + "&claim_over=eagle3")
        method = json.loads(out)
        # Over another method, the check is the least the claim needs: its headline says so (a browser
        # pass: a forwarded headline had lost it).
        assert method["over"] == "eagle3" and method["headline"] == (
            "Against plain decoding, the least a figure over EAGLE-3 head needs (where drafting with EAGLE-3 head pays at all): "
            + json.loads(plain)["headline"])
        assert method["over_note"].startswith("The figure is over EAGLE-3 head, not over plain decoding.")
        _, out, _ = run(capsys, "claim", "5x", link + "&claim_over=vLLM")
        assert "over_words" not in json.loads(out) and json.loads(out)["headline"] == json.loads(plain)["headline"]
        code, _, err = run(capsys, "claim", link + "&claim_over=" + "+".join(["word"] * 9))
        assert code == 2 and "claim_over" in err

    def test_a_claim_at_a_batch_the_memory_does_not_hold(self, capsys):
        """Valid JSON (max_speedup was NaN) and the page's verdict: impossible at that batch."""
        code, out, _ = run(capsys, "claim", "3x at batch 500", "target=gpt-oss-120b&draft=EAGLE3-SpecForge-gpt-oss-120b&tp=1")
        row = json.loads(out, parse_constant=lambda name: pytest.fail(f"{name} is not JSON"))
        assert code == 0 and row["verdict"] == "impossible" and row["max_speedup"] is None
        assert row["headline"].startswith("Impossible here: batch 500 does not fit") and row["holds_at_batches"] is None

    def test_a_sentences_draft_length_and_precision_set_the_check_as_on_the_page(self, capsys):
        code, out, _ = run(capsys, "claim", "3x on Llama 4 Scout with FP4 on GB200 with 5 draft tokens")
        sentence = json.loads(out)
        _, out, _ = run(capsys, "claim", "3x", "?gpu=GB200&target=Llama-4-Scout&precision=nvfp4", "--gamma", "5")
        linked = json.loads(out)
        assert code == 0 and (sentence["read_from_sentence"]["gamma"], sentence["read_from_sentence"]["precision"]) == (
            5, "nvfp4")
        for key in ("tp", "verdict", "max_speedup", "required_alpha", "required_gamma"):
            assert sentence[key] == linked[key], key
        assert sentence["required_gamma"] == 5 and sentence["tp"] == 1

    def test_a_sentences_context_sets_the_check_and_the_option_stands_over_it(self, capsys):
        """A browser pass: "context 8k" was read as nothing, and batch 512 was judged as holding at
        the default 1,024 tokens, where at 8,192 it does not fit."""
        sentence = "1.8x at batch 512 with MTP on DeepSeek-R1, 8x B200, FP8, context 8k"
        code, out, _ = run(capsys, "claim", sentence)
        read = json.loads(out)
        _, out, _ = run(capsys, "claim", "1.8x", "?gpu=B200&target=DeepSeek-V3&precision=fp8-weights&tp=8&context=8192",
                        "--batch", "512")
        linked = json.loads(out)
        assert code == 0 and read["read_from_sentence"]["context"] == 8192 and read["verdict"] == "impossible"
        for key in ("verdict", "headline", "holds_at_batches"):
            assert read[key] == linked[key], key
        _, out, _ = run(capsys, "claim", sentence, "--context", "1024")
        assert json.loads(out)["verdict"] != "impossible"

    def test_a_sentences_other_gpus_and_batches_are_said_as_on_the_page(self, capsys):
        code, out, _ = run(capsys, "claim", "MTP doubles DeepSeek-V3 on 8x H200 and 8x B200 at batch 1, 32 and 256")
        read = json.loads(out)["read_from_sentence"]
        assert code == 0 and read["other_gpus"] == ["B200"] and read["other_batches"] == [32, 256]
        assert read["other_gpus_note"] == i18n.t("claims.sentence.other_gpus", "en", others="NVIDIA B200 (HGX)",
                                                 gpu="NVIDIA H200 SXM").replace("**", "")
        assert read["other_batches_note"].startswith("The sentence names batch 32, 256 as well: the verdict is at batch 1")
        # A --batch over the sentence's: the verdict's batch is the option's.
        _, out, _ = run(capsys, "claim", "MTP doubles DeepSeek-V3 on 8x H200 at batch 1, 32 and 256", "--batch", "32")
        read = json.loads(out)["read_from_sentence"]
        assert read["other_batches"] == [1, 256] and "names batch 1, 256 as well: the verdict is at batch 32 alone" \
            in read["other_batches_note"]

    def test_a_sentences_engine_sets_the_check_with_its_costs_as_on_the_page(self, capsys):
        """TensorRT-LLM named in the sentence: its engine and its preset's costs, over a link's cost knobs
        (which the page's choice of an engine sets to the preset, as the sidebar's does)."""
        sentence = "DeepSeek-R1 with MTP 2x at batch 32 on 4 GB200 with TensorRT-LLM"
        code, out, _ = run(capsys, "claim", sentence, "?step_ms=3")
        read = json.loads(out)
        _, out, _ = run(capsys, "claim", "2x at batch 32", "?gpu=GB200&target=DeepSeek-V3&draft=mtp&tp=4&engine=trt-llm")
        linked = json.loads(out)
        assert code == 0 and read["engine"] == read["read_from_sentence"]["engine"] == "trt-llm"
        for key in ("tp", "verdict", "max_speedup", "required_alpha"):
            assert read[key] == linked[key], key

    def test_a_measured_acceptance_and_a_refusal(self, capsys):
        _, out, _ = run(capsys, "claim", "up to 3x", "engine=sglang", "--measure", "alpha", "--value", "0.6")
        assert json.loads(out)["alpha"] == 0.6 and json.loads(out)["engine"] == "sglang"
        code, out, err = run(capsys, "claim", "100x")
        assert code == 2 and not out and "beyond what speculative decoding can give" in err
        code, _, err = run(capsys, "claim", "3x", "--measure", "alpha")
        assert code == 2 and "--measure and --value go together" in err

    def test_a_slides_whole_sentence_as_the_page_reads_it(self, capsys):
        """The help said 'as the Claims page does', and a sentence was refused ('"...on B200 for gpt" is
        not a speedup'). Read as the page reads it, it gives the verdict of its scenario's link."""
        code, out, _ = run(capsys, "claim", "EAGLE-3 delivers 2.5x throughput at batch 64 on B200 for gpt-oss-120b")
        sentence = json.loads(out)
        _, out, _ = run(capsys, "claim", "2.5x at batch 64", "?gpu=B200&target=gpt-oss-120b&draft=eagle3")
        linked = json.loads(out)
        assert code == 0 and (sentence["gpu"], sentence["target"], sentence["draft"]) == ("B200", "gpt-oss-120b", "eagle3")
        for key in ("claim", "batch", "verdict", "required_alpha", "required_gamma"):
            assert sentence[key] == linked[key], key
        assert sentence["read_from_sentence"]["draft_applied"] and "read_from_sentence" not in linked
        # A method the model cannot draft with is said, and the options given still win.
        _, out, _ = run(capsys, "claim", "Up to 2x faster with MTP", "--gpu", "B200")
        mtp = json.loads(out)
        assert mtp["gpu"] == "B200" and mtp["draft"] == "Qwen3-0.6B" and not mtp["read_from_sentence"]["draft_applied"]
        assert any(q.startswith("Which model?") for q in mtp["read_from_sentence"]["ask_its_author"])
        assert mtp["read_from_sentence"]["over"] is None and "over_note" not in mtp["read_from_sentence"]

    def test_a_sentences_count_of_gpus_is_the_scenarios(self, capsys):
        code, out, _ = run(capsys, "claim", "3x higher throughput at batch 64 on 8x H200 for Llama 3.3 70B")
        result = json.loads(out)
        assert code == 0 and (result["gpu"], result["tp"], result["dp"]) == ("H200", 8, 1)
        assert result["read_from_sentence"]["gpus"] == 8 and "2.44×" in result["reasons"][0]

    def test_a_gpu_family_a_model_that_is_no_preset_and_another_checkpoint_are_said(self, capsys):
        code, out, _ = run(capsys, "claim", "2x faster generation of Mixtral 8x22B on A100 with Medusa")
        read, result = json.loads(out)["read_from_sentence"], json.loads(out)
        assert code == 0 and result["gpu"] == "A100-80GB" and read["gpu_words"] == "A100"
        assert read["gpu_note"].startswith("“A100” names no single GPU: it is read as the NVIDIA A100 SXM 80GB")
        assert read["unknown_model"] == "Mixtral 8x22B" and "target_words" not in read
        assert read["model_note"].startswith("The claim names Mixtral 8x22B, which is not among specviz's models: it "
                                             "is judged on the sidebar's Qwen3-32B")
        _, out, _ = run(capsys, "claim", "3x faster with EAGLE-3 for Llama 3.3 70B on H100")
        read = json.loads(out)["read_from_sentence"]
        assert (read["target"], read["target_words"]) == ("Llama-3.1-70B", "Llama 3.3 70B")
        assert read["target_note"].startswith("“Llama 3.3 70B” is read as Llama 3.1 70B, whose architecture")

    def test_a_figure_over_another_method_says_its_baseline(self, capsys):
        code, out, _ = run(capsys, "claim", "P-EAGLE delivers up to 1.69x speedup over EAGLE-3 on gpt-oss-20b")
        read = json.loads(out)["read_from_sentence"]
        assert code == 0 and (read["draft"], read["over"]) == ("peagle", "eagle3")
        # The method by its name, as the Claims page gives it, not by its id.
        assert read["over_note"].startswith("The figure is over EAGLE-3 head, not over plain decoding. The check "
                                            "below is against plain decoding: 1.69× over EAGLE-3 head is")
        _, out, _ = run(capsys, "claim", "up to 400% faster inference performance than vLLM")
        read = json.loads(out)["read_from_sentence"]
        assert read["over"] is None and read["over_words"] == "vLLM" and "does not say is plain decoding" in read["over_note"]
        assert json.loads(out)["percent_note"].startswith("“400% faster” is read as 5.00×")
        # A manager's pass: over another GPU, "Impossible" alone had been the verdict; it is said to be
        # against plain decoding on this setting, not the claim's baseline.
        _, out, _ = run(capsys, "claim", "3x faster than H100 on B200 with EAGLE-3 for Llama 3.3 70B at 256 concurrency")
        answer = json.loads(out)
        assert answer["read_from_sentence"]["over_words"] == "H100" and answer["verdict"] == "impossible"
        assert answer["headline"].startswith("Against plain decoding on this setting, not what the claim's figure is "
                                             "over (H100), which needs its own baseline: Impossible")
        _, out, _ = run(capsys, "claim", "3x with EAGLE-3 on B200 for Llama 3.3 70B at 256 concurrency")
        assert json.loads(out)["headline"].startswith("Impossible")

    def test_a_batch_given_over_the_claim_s_own_is_said(self, capsys):
        _, out, _ = run(capsys, "claim", "2.5x at batch 64", "--batch", "8")
        answer = json.loads(out)
        assert answer["batch"] == 8 and answer["batch_note"].startswith("The batch given, 8, is not the claim's own, batch 64")
        for args in (("--batch", "64"), ()):
            _, out, _ = run(capsys, "claim", "2.5x at batch 64", *args)
            assert json.loads(out)["batch"] == 64 and "batch_note" not in json.loads(out)


    def test_the_issue_s_form_against_costs(self, capsys):
        code, out, _ = run(capsys, "claim", "--speedup", "3", "--gamma", "5", "--verify-cost", "1", "--draft-cost",
                           "0.05", "--format", "json")
        row = json.loads(out)
        # At the α the reasons name (0.807, rounded up from 0.80695), as they give the rate and length.
        assert code == 0 and row["verdict"] == "conditional" and row["required_alpha"] == 0.807
        assert row["required_acceptance_length"] == pytest.approx(3.75, abs=1e-3)
        assert row["required_acceptance_rate_vllm"] == pytest.approx(0.55, abs=1e-3) and row["max_speedup"] == pytest.approx(4.8)
        assert row["reasons"][0].startswith("It needs an acceptance α of at least 0.807 at γ 5: vLLM's acceptance rate 0.550, 3.75 tokens")
        _, out, _ = run(capsys, "claim", "--speedup", "4.9", "--gamma", "5", "--verify-cost", "1", "--draft-cost", "0.05")
        assert json.loads(out)["verdict"] == "impossible" and json.loads(out)["required_alpha"] is None

    def test_the_issue_s_form_on_presets(self, capsys):
        code, out, _ = run(capsys, "claim", "--speedup", "2.5", "--gpu", "H100-SXM", "--target", "Qwen/Qwen3-32B",
                           "--draft", "Qwen3-0.6B", "--batch", "64")
        row = json.loads(out)
        check = claims.check_claim(make_scenario(), claims.Claim(2.5, batch=64), settings.get("SPECVIZ_GAMMA_MAX"),
                                   settings.get("SPECVIZ_BATCH_MAX"), PRESETS.acceptance)
        easiest = check.required.loc[check.required["alpha_needed"].idxmin()]
        # The α it needs is past every published acceptance: unlikely, on the page and here.
        assert code == 0 and row["target"] == "Qwen3-32B" and row["verdict"] == check.verdict == "unlikely"
        assert row["required_alpha"] == claim_verdict.at_least(float(easiest["alpha_needed"]), 3)
        (said,) = [c for c in check.conditions if c.key == "claims.condition.acceptance"]
        assert (row["required_acceptance_rate_vllm"], row["required_acceptance_length"]) == pytest.approx(
            (said.params["rate"], said.params["length"]))  # the condition's figures, not the exact α's
        assert row["required_gamma"] == easiest["gamma"] and row["max_speedup"] == pytest.approx(check.best["speedup"])

    @pytest.mark.parametrize(("argv", "message"), [
        (["claim"], "give the claim's words or --speedup"),
        (["claim", "3x", "--verify-cost", "1", "--gpu", "H100-SXM"], "--verify-cost gives the costs"),
        (["claim", "3x", "--draft-cost", "0.1"], "--draft-cost goes with --verify-cost"),
        (["claim", "--speedup", "3", "a", "b"], "the one argument left is the link"),
        # A link where the words go (a review's slip): it was read as words, "is not a speedup".
        (["claim", "target=DeepSeek-V3&draft=mtp&mtp_reuse=1"], "is a link, not a claim: give the claim's words first"),
        (["claim", "http://127.0.0.1:8501/?gpu=B200"], "is a link, not a claim"),
        (["claim", "3x", "--target", "no/such-model"], "unknown target 'no/such-model'")])
    def test_what_it_refuses(self, capsys, argv, message):
        code, out, err = run(capsys, *argv)
        assert code == 2 and not out and message in err


class TestSimulateCommand:
    def test_against_the_closed_forms(self, capsys):
        code, out, _ = run(capsys, "simulate", "--alpha", "0.8", "--gamma", "4", "--steps", "200000", "--seed", "3",
                           "--output-tokens", "100", "--requests", "2000", "--format", "json")
        row = json.loads(out)
        assert code == 0 and row["expected_tokens"] == pytest.approx(spec.expected_tokens(0.8, 4))
        assert abs(row["tokens_per_step_mean"] - row["expected_tokens"]) < 4 * row["tokens_per_step_se"]
        assert abs(row["zero_accept_share"] - 0.2) < 4 * math.sqrt(0.2 * 0.8 / 200_000)
        assert sum(row["tokens_per_step_counts"]) == 200_000
        # The p99 gap is a whole speculative step; the mean is that step over the tokens it yields.
        assert row["latency_ms"]["itl_p99"]["spec"] == pytest.approx(row["spec_step_ms"])
        assert row["latency_ms"]["itl_mean"]["plain"] == pytest.approx(row["plain_step_ms"])

    def test_the_latency_view_s_rates_in_its_link_are_simulated(self, capsys):
        """A Latency view's link carries the measured rates it simulates: without --alpha or --rates
        they are the acceptance, as on the page (the link's α and γ 4 had been simulated: 14.52 ms a
        step where the view gave γ 2 and 11.42 ms); --alpha stands over them; bad ones are refused."""
        link = "target=Llama-3.1-8B&draft=Llama-3.2-1B&tp=1&alpha=0.7&batch=8&context=2048&view=latency"
        base = ("--steps", "20000", "--requests", "200")
        _, out, _ = run(capsys, "simulate", f"{link}&latency_rates=0.9,%200.8", *base)
        linked = json.loads(out)
        _, out, _ = run(capsys, "simulate", link, "--rates", "0.9", "0.8", *base)
        assert linked == json.loads(out) and linked["gamma"] == 2 and linked["rates"] == [0.9, 0.8]
        _, out, _ = run(capsys, "simulate", f"{link}&latency_rates=0.9,0.8", "--alpha", "0.7", *base)
        assert json.loads(out)["alpha"] == 0.7 and not json.loads(out)["rates"]
        code, _, err = run(capsys, "simulate", f"{link}&latency_rates=0.9,high", *base)
        assert code == 2 and "0.9,high" in err
        # Given twice, refused (the view takes one): joined, they had been simulated as rates it never had.
        code, _, err = run(capsys, "simulate", f"{link}&latency_rates=0.5&latency_rates=0.6", *base)
        assert code == 2 and "latency_rates more than once" in err
        # More rates than a link's γ may be: the γ simulated, as on the view ("--gamma 17" had been refused).
        _, out, _ = run(capsys, "simulate", f"{link}&latency_rates={','.join(['0.9'] * 17)}", *base)
        assert json.loads(out)["gamma"] == 17

    def test_rates_give_gamma_and_the_same_seed_the_same_answer(self, capsys):
        argv = ("simulate", "--rates", "0.9", "0.8", "--steps", "50000", "--requests", "500", "--seed", "7")
        _, first, _ = run(capsys, *argv)
        _, second, _ = run(capsys, *argv)
        row = json.loads(first)
        assert first == second and row["gamma"] == 2 and row["expected_tokens"] == pytest.approx(1 + 0.9 + 0.72)
        assert abs(row["zero_accept_share"] - 0.1) < 4 * math.sqrt(0.1 * 0.9 / 50_000)
        code, _, err = run(capsys, "simulate", "--rates", "0.9", "0.8", "--gamma", "3")
        assert code == 2 and "the rates give γ" in err

    def test_the_link_s_alpha_and_a_batch_the_memory_does_not_hold(self, capsys):
        """simulate had asked for --alpha where the link gave one, and timed batch 1,024, which the
        memory does not hold (calc said so; the Latency view gives it no latency)."""
        argv = ("--steps", "20000", "--requests", "200", "--output-tokens", "50")
        _, by_link, _ = run(capsys, "simulate", "alpha=0.7&batch=16", *argv)
        _, given, _ = run(capsys, "simulate", "batch=16", "--alpha", "0.7", *argv)
        assert by_link == given and json.loads(by_link)["alpha"] == 0.7
        code, out, err = run(capsys, "simulate", "batch=1024", "--alpha", "0.8")
        limit = calculator.memory_fit(make_scenario(batch="1024"))["max_batch"]
        assert (code, out) == (2, "") and f"batch 1,024 does not fit in memory with the draft (it holds {limit:,})" in err


    def test_the_whole_request_is_the_latency_view_s_with_its_band(self, capsys):
        """The view's time to first token, request time and request speedup had no command; its
        speedup had no band on either (an attack pass). Where the prompts queue without end, no
        ratio: null, never 0 or Infinity."""
        argv = ("--steps", "2000", "--requests", "50", "--format", "json")
        _, out, _ = run(capsys, "simulate", "batch=8&input_tokens=16000&output_tokens=150", "--alpha", "0.8", *argv)
        request = json.loads(out)["request"]
        whole = workload.end_to_end(make_scenario(batch="8"), 0.8, 4, 8, 16000, 150)
        assert request["speedup"] == pytest.approx(float(whole["e2e_speedup"]))
        assert request["ttft_spec_ms"] == pytest.approx(float(whole["ttft_spec_s"]) * 1e3)
        assert (request["low"], request["high"]) == pytest.approx(
            calculator.request_speedup_band(make_scenario(batch="8"), 0.8, 4, 8, 16000, 150))
        assert request["low"] < request["speedup"] < request["high"] < request["decode_speedup"] * 1.5
        # A steady load of 64 × 2,000 tokens in, 40 out: 3,200 prompt tokens a step, which the plain
        # server's budget admits and the speculative one's (E times as many, less room) does not.
        _, out, _ = run(capsys, "simulate", "tp=2&batch=64&input_tokens=2000&output_tokens=40&prefill=on",
                        "--alpha", "0.8", *argv)
        queued = json.loads(out)["request"]
        assert queued["ttft_plain_ms"] > 0 and queued["ttft_spec_ms"] is None
        assert queued["speedup"] is queued["low"] is queued["high"] is None

    def test_a_reused_mtp_layer_draws_its_falling_rates(self, capsys):
        """DeepSeek-V3's one MTP layer drafting 3: 0.8, 0.496, 0.308 per position, E 2.319, as the
        Latency view draws them; the --rates such a server measured give back α 0.8."""
        link = "target=DeepSeek-V3&gpu=B200&draft=mtp"
        code, out, _ = run(capsys, "simulate", link, "--alpha", "0.8", "--gamma", "3", "--steps", "20000", "--seed", "3",
                           "--format", "json")
        row = json.loads(out)
        assert code == 0 and row["rates"] == pytest.approx([0.8, 0.496, 0.30752])
        assert row["expected_tokens"] == pytest.approx(1 + 0.8 + 0.8 * 0.496 + 0.8 * 0.496 * 0.30752)
        _, out, _ = run(capsys, "simulate", link, "--rates", "0.8", "0.496", "0.30752", "--steps", "2000", "--format", "json")
        assert json.loads(out)["alpha"] == pytest.approx(0.8) and json.loads(out)["mtp_reuse"] == 0.62
        # `calc` states the factor it priced with, as it states a mixture of experts' routing overlap.
        _, out, _ = run(capsys, "calc", link + "&mtp_reuse=0.8", "--format", "json")
        row = json.loads(out)
        assert row["mtp_reuse"] == 0.8 and row["expected_tokens"] == pytest.approx(
            1 + 0.8 + 0.64 * 0.8 + 0.512 * 0.8 ** 3 + 0.4096 * 0.8 ** 6)
        _, out, _ = run(capsys, "calc", "", "--format", "json")
        assert "mtp_reuse" not in json.loads(out)


class TestVllmConfigCommand:
    def test_a_suffix_draft_s_one_length_is_the_gamma_given(self, capsys):
        """vLLM 0.33.0 drops a suffix schedule: the command drafts the --gamma given, 6, which the notice
        had called "the best length at this batch" (a review), where by_batch lists 3 at batch 1."""
        _, out, _ = run(capsys, "vllm-config", "--version", "0.33.0", "--target", "Qwen3-32B", "--method", "suffix",
                        "--gamma", "6", "--tp", "2", "--by-batch", "--gpu", "H100-SXM", "--alpha", "0.5")
        row = json.loads(out)
        assert '"num_speculative_tokens": 6}' in row["command"] and "per_batch_size" not in row["command"]
        assert i18n.t("command.schedule_suffix_given", "en", version="0.33.0", gamma=6) in row["warnings"]

    def test_each_version_band(self, capsys):
        base = ("vllm-config", "--target", "Qwen3-32B", "--draft", "Qwen/Qwen3-0.6B", "--gamma", "4",
                "--disable-by-batch-size", "32")
        _, out, _ = run(capsys, *base, "--version", "0.8.1")
        assert json.loads(out)["command"].endswith("--speculative-model Qwen/Qwen3-0.6B --num-speculative-tokens 4 "
                                                   "--speculative-disable-by-batch-size 32")
        _, out, _ = run(capsys, *base, "--version", "0.9.2")
        assert '"disable_by_batch_size": 32' in json.loads(out)["command"]
        for version, said in (("0.16.0", "accepts disable_by_batch_size but ignores it"),
                              ("0.17.0", "rejects disable_by_batch_size")):
            _, out, _ = run(capsys, *base, "--version", version)
            row = json.loads(out)
            assert "disable_by_batch_size" not in row["command"] and any(said in w for w in row["warnings"])

    def test_by_batch_writes_the_schedule_where_the_version_has_one(self, capsys):
        argv = ("vllm-config", "--target", "Qwen3-32B", "--draft", "Qwen3-0.6B", "--gamma", "4", "--by-batch",
                "--gpu", "H100-SXM", "--alpha", "0.8", "--context", "2048", "--format", "json")
        _, out, _ = run(capsys, *argv, "--version", "0.24.0")
        row = json.loads(out)
        schedule = draft_length.gamma_schedule(make_scenario(alpha=0.8, context=2048), 0.8, 2048,
                                              settings.get("SPECVIZ_BATCH_MAX"), settings.get("SPECVIZ_GAMMA_MAX"))
        assert row["by_batch"] == [[int(r.first), int(r.last), int(r.gamma)] for r in schedule.itertuples()]
        assert f'"num_speculative_tokens_per_batch_size": {json.dumps(row["by_batch"])}' in row["command"]
        _, out, _ = run(capsys, *argv, "--version", "0.16.0")
        older = json.loads(out)
        assert older["by_batch"] == row["by_batch"] and "per_batch_size" not in older["command"]

    def test_a_method_and_its_head(self, capsys):
        _, out, _ = run(capsys, "vllm-config", "--version", "0.33.0", "--target", "Qwen3-32B", "--method", "eagle3",
                        "--head", "org/eagle3", "--gamma", "3", "--tp", "1")
        # One H100 (80 GiB) holds Qwen3-32B's 65.5 GB and the cache of 36 sequences of 1,024 positions.
        assert json.loads(out)["command"] == ("vllm serve Qwen/Qwen3-32B --max-num-seqs 36 --max-model-len 1024 "
                                              "--gpu-memory-utilization 0.92 --speculative-config '{\"method\": \"eagle3\", "
                                              "\"model\": \"org/eagle3\", \"num_speculative_tokens\": 3}'")
        code, _, err = run(capsys, "vllm-config", "--version", "0.24.0", "--target", "Qwen3-32B", "--method", "mtp",
                           "--gamma", "2")
        assert code == 2 and "no engine (vLLM, SGLang or TensorRT-LLM) runs the multi-token-prediction layers" in err
        code, _, err = run(capsys, "vllm-config", "--version", "0.24.0", "--target", "Qwen3-32B", "--draft",
                           "Qwen3-0.6B", "--gamma", "2", "--by-batch")
        assert code == 2 and "--by-batch needs --gpu and --alpha" in err

    def test_a_draft_head_preset_is_a_draft(self, capsys):
        """--draft takes a head's preset as a link's draft does: SpecForge's gpt-oss-120b head, the
        page's default draft there, had been refused as unknown, and ``--method eagle3 --head`` priced
        a head of the target's shape (140 sequences on one H100, where the head's own scenario holds
        139, as the Deploy view and ``serve`` say)."""
        head = "EAGLE3-SpecForge-gpt-oss-120b"
        _, out, _ = run(capsys, "vllm-config", "--version", "0.33.0", "--target", "gpt-oss-120b", "--draft", head,
                        "--gamma", "3", "--tp", "1", "--by-batch", "--gpu", "H100-SXM", "--alpha", "0.7", "--context", "2048")
        ours = json.loads(out)
        _, out, _ = run(capsys, "serve", f"gpu=H100-SXM&target=gpt-oss-120b&draft={head}&tp=1&alpha=0.7&gamma=3&context=2048")
        served = json.loads(out)
        assert "--max-num-seqs 139 " in ours["command"] and ours["command"] == served["command"]
        for argv in (("claim", "2x", "--target", "gpt-oss-120b", "--draft", head),
                     ("simulate", "target=gpt-oss-120b&tp=1", "--draft", head)):
            code, _, err = run(capsys, *argv)
            assert code == 0, err


class TestServeCommand:
    def test_the_deploy_view_s_command(self, capsys):
        # On 4 H100s, 810 sequences fit, and at α 0.5 speculation stops paying from 312 on.
        code, out, _ = run(capsys, "serve", "alpha=0.5&draft=eagle&tp=4", "--version", "0.10.0", "--draft", "org/eagle")
        row = json.loads(out)
        assert code == 0 and row["command"].startswith("vllm serve Qwen/Qwen3-32B --tensor-parallel-size 4 ")
        assert "disable_by_batch_size" not in row["command"]
        assert any("accepts disable_by_batch_size but ignores it" in n for n in row["notices"])
        code, out, err = run(capsys, "serve", "alpha=0.55", "--version", "0.10.0")
        assert code == 2 and not out and "refuses a separate draft model" in err  # no command that cannot start

    def test_a_draft_to_name_is_named_by_an_option_of_the_command(self, capsys):
        # The problem only said "put its Hugging Face id in the field above", the Deploy view's field.
        code, out, err = run(capsys, "serve", "gpu=B200&target=gpt-oss-120b&draft=eagle3")
        assert any("--draft of specviz serve" in problem for problem in json.loads(out)["problems"])
        # A command with a placeholder for its draft would not start: exit 1, said (it had exited 0, a CLI pass).
        assert code == 1 and err == "specviz: the command would not start as it stands: 1 problem(s), listed in its problems; exit 1\n"
        code, out, _ = run(capsys, "serve", "gpu=B200&target=gpt-oss-120b&draft=eagle3", "--format", "shell")
        lines = out.splitlines()
        assert code == 1 and any(line.startswith("# problem:") for line in lines[:lines.index("exit 1")])  # `| bash` runs nothing
        assert lines.index("exit 1") < next(i for i, line in enumerate(lines) if line.startswith("vllm serve"))
        code, out, _ = run(capsys, "vllm-config", "--version", "0.24.0", "--target", "gpt-oss-120b", "--method", "eagle3",
                           "--gamma", "3")
        row = json.loads(out)  # a problem apart from the notes: a script tells them apart
        assert code == 1 and any("--head of specviz vllm-config" in problem for problem in row["problems"])
        assert not any("--head of specviz vllm-config" in warning for warning in row["warnings"])

    def test_the_deploy_view_s_own_link_fields_are_read(self, capsys):
        """A link copied from the Deploy view carries its engine, release, method, schedule toggle
        and checkpoints: `serve` writes the view's command from them, as its options would (an SGLang
        link had given vLLM's command, the head it named a placeholder); an option stands over the
        link's field, and a field the view would not take is refused by name."""
        scene = "gpu=H100-SXM&target=gpt-oss-120b&draft=EAGLE3-SpecForge-gpt-oss-120b&tp=1&alpha=0.7&gamma=3&batch=32"
        head = "lmsys/EAGLE3-gpt-oss-120b-bf16"
        _, out, _ = run(capsys, "serve", f"{scene}&view=serve&serve_engine=sglang&serve_draft_repo={head}")
        linked = json.loads(out)
        _, out, _ = run(capsys, "serve", scene, "--engine", "sglang", "--draft", head)
        assert linked == json.loads(out) and linked["command"].startswith("python -m sglang.launch_server ")
        _, out, _ = run(capsys, "serve", f"{scene}&serve_version=0.16.0&serve_by_load=false&serve_target_repo=org%2Fgpt")
        given = json.loads(out)
        _, out, _ = run(capsys, "serve", scene, "--version", "0.16.0", "--one-length", "--target-repo", "org/gpt")
        assert given == json.loads(out) and given["version"] == "0.16.0" and "org/gpt" in given["command"]
        _, out, _ = run(capsys, "serve", f"{scene}&serve_engine=sglang", "--engine", "vllm")
        assert json.loads(out)["engine"] == "vllm"
        for field in ("serve_method=bogus", "serve_engine=vllm2", "serve_engine=", "serve_engine=%20sglang",
                      "serve_by_load=maybe", "serve_version=9.9.9", "serve_engine=sglang&sglang_version=0.5.0",
                      f"serve_draft_repo={'x' * 201}"):
            code, out, err = run(capsys, "serve", f"{scene}&{field}")
            key = field.split("&")[-1].split("=")[0]
            assert code == 2 and not out and f"the link's {key}=" in err and "Deploy view" in err, (field, err)
        # Another engine's release is the view's too, and not read for this one's command (as the view).
        _, out, _ = run(capsys, "serve", f"{scene}&trtllm_version=bogus")
        assert json.loads(out)["engine"] == "vllm"

    def test_no_command_where_not_one_sequence_fits(self, capsys):
        code, out, err = run(capsys, "serve", "gpu=H100-SXM&target=DeepSeek-V3&draft=mtp&tp=8&dp=1")
        row = json.loads(out)
        assert code == 1 and row["command"] is None and row["advice"][0].startswith("Not one sequence fits")
        assert err.startswith("specviz: no command: not one sequence fits")
        assert row["problems"] == []  # the scenario's own engine: the calculator's memory check says the same
        # As a script: the advice, then exit 1 (it had crashed with "unexpected TypeError", a CLI pass).
        code, out, _ = run(capsys, "serve", "gpu=H100-SXM&target=DeepSeek-V3&draft=mtp&tp=8&dp=1", "--format", "shell")
        assert code == 1 and out.splitlines()[0].startswith("# advice: Not one sequence fits") and out.splitlines()[-1] == "exit 1"
        # Another engine's rule: DeepSeek-V3 with n-gram drafts on 4 B200s holds 114 sequences as vLLM divides
        # the memory, none as SGLang does; said to be that engine's (an engineer's pass).
        link = "gpu=B200&target=DeepSeek-V3&draft=ngram&tp=4&dp=1&ep=off"
        _, out, _ = run(capsys, "serve", link, "--engine", "sglang")
        row = json.loads(out)
        assert row["command"] is None and row["problems"][0].startswith("SGLang divides the GPUs' memory by its own rule")
        assert "(the scenario's engine holds more)" in row["problems"][0]
        # Where the scenario's own engine holds none either, that is not said (an engineer's pass).
        _, out, _ = run(capsys, "serve", "gpu=H100-SXM&target=Qwen3-Next-80B-A3B&draft=mtp&tp=2", "--engine", "sglang")
        row = json.loads(out)
        assert row["problems"][0].startswith("SGLang divides") and "holds more" not in row["problems"][0]

    def test_a_checkpoint_of_the_preset_s_architecture_is_served_by_its_own_name(self, capsys):
        # DeepSeek-R1 ships DeepSeek-V3's config.json: --target names the preset, and the command serves R1.
        code, out, _ = run(capsys, "vllm-config", "--version", "0.25.1", "--target", "deepseek-ai/DeepSeek-R1-0528",
                           "--method", "mtp", "--gamma", "1", "--tp", "8")
        row = json.loads(out)
        assert code == 0 and row["command"].startswith("vllm serve deepseek-ai/DeepSeek-R1-0528 ")
        assert any("architecture" in w and "DeepSeek-R1-0528" in w for w in row["warnings"])
        _, out, _ = run(capsys, "vllm-config", "--version", "0.25.1", "--target", "deepseek-ai/DeepSeek-V3",
                        "--method", "mtp", "--gamma", "1", "--tp", "8")
        assert json.loads(out)["command"].startswith("vllm serve deepseek-ai/DeepSeek-V3 ")
        link = "gpu=B200&target=DeepSeek-V3&draft=mtp&precision=nvfp4&tp=4&ep=on"
        _, out, _ = run(capsys, "serve", link)
        assert "<NVFP4 checkpoint of deepseek-ai/DeepSeek-V3>" in json.loads(out)["command"]
        assert any("--target-repo" in problem for problem in json.loads(out)["problems"])
        code, out, _ = run(capsys, "serve", link, "--target-repo", "nvidia/DeepSeek-R1-0528-NVFP4")
        row = json.loads(out)
        assert code == 0 and row["command"].startswith("vllm serve nvidia/DeepSeek-R1-0528-NVFP4 ")
        assert row["problems"] == []
        code, out, err = run(capsys, "serve", link, "--target-repo", "x; rm -rf ~")
        assert code == 2 and not out and "is not a Hugging Face id or a path" in err
        _, out, _ = run(capsys, "claim", "up to 2x", "--target", "deepseek-ai/DeepSeek-R1", "--gpu", "B200")
        assert json.loads(out)["target"] == "DeepSeek-V3"

    def test_vllm_config_takes_the_whole_scenario_as_serve_does(self, capsys):
        """Precision, KV cache, data and expert parallelism as options: DeepSeek-V3 + MTP on 8 B200s
        with an FP8 cache holds twice the sequences (vllm-config had priced a BF16 cache alone, 623),
        and its command is serve's for the same link."""
        link = "gpu=B200&target=DeepSeek-V3&draft=mtp&tp=8&dp=1&ep=on&kv=fp8&context=2048&gamma=1"
        _, out, _ = run(capsys, "serve", link, "--version", "0.24.0", "--one-length")
        served = json.loads(out)["command"]
        base = ("vllm-config", "--version", "0.24.0", "--target", "DeepSeek-V3", "--method", "mtp", "--gamma", "1",
                "--gpu", "B200", "--tp", "8", "--context", "2048")
        code, out, _ = run(capsys, *base, "--dp", "1", "--ep", "on", "--kv", "fp8")
        assert code == 0 and json.loads(out)["command"] == served
        assert "--max-num-seqs 1246 " in served and "--enable-expert-parallel" in served
        _, out, _ = run(capsys, *base)
        assert "--max-num-seqs 623 " in json.loads(out)["command"]
        _, out, _ = run(capsys, *base, "--dp", "8", "--tp", "1", "--kv", "fp8")
        assert json.loads(out)["command"].startswith("vllm serve deepseek-ai/DeepSeek-V3 --data-parallel-size 8 ")
        code, _, err = run(capsys, *base, "--kv", "fp16")
        assert code == 2 and "--kv" in err
        # An attack pass: a release older than any specviz knows had been written for silently, and with
        # data-parallel ranks the --gamma given had been called "the best length at this batch".
        code, _, err = run(capsys, *base[:2], "0.1.0", *base[3:])
        assert code == 2 and "older than any vLLM release specviz writes for (the oldest is 0.7.3)" in err
        # A release newer than any it knows is written with the newest's options, and said (a CLI pass).
        newest = commands.VLLM_VERSIONS[-1]
        code, out, _ = run(capsys, *base[:2], "9.9.9", *base[3:])
        assert code == 0 and (
            f"vLLM 9.9.9 is newer than the newest release specviz knows ({newest}): the command is written with "
            f"{newest}'s options, which a later release may have renamed") in json.loads(out)["warnings"]
        _, out, _ = run(capsys, *base[:2], newest, *base[3:])
        assert not any("is newer than" in warning for warning in json.loads(out)["warnings"])
        _, out, _ = run(capsys, "vllm-config", "--version", "0.24.0", "--target", "Qwen3-32B", "--draft", "Qwen3-0.6B",
                        "--gamma", "9", "--dp", "2", "--by-batch", "--gpu", "H100-SXM", "--alpha", "0.7")
        warnings = " ".join(json.loads(out)["warnings"])
        assert "drafts 9 tokens throughout, the --gamma given" in warnings and "the best length at this batch" not in warnings
        # What the sidebar says and a command line had not: EP of a dense model, FP4 on a GPU without its peak.
        dense = ("vllm-config", "--version", "0.33.0", "--target", "Qwen3-32B", "--draft", "Qwen3-0.6B", "--gamma", "4")
        _, out, _ = run(capsys, *dense, "--ep", "on")
        assert any(w.startswith("Expert parallelism is asked of Qwen3-32B, which has no experts") for w in json.loads(out)["warnings"])
        _, out, _ = run(capsys, *dense, "--precision", "nvfp4", "--gpu", "H100-SXM")
        assert any(w.startswith("NVIDIA H100 SXM has no NVFP4 peak") for w in json.loads(out)["warnings"])
        _, out, _ = run(capsys, "serve", "target=gpt-oss-120b&tp=1&gpu=H100-SXM", "--one-length")
        assert any(n.startswith("NVIDIA H100 SXM has no MXFP4 peak") for n in json.loads(out)["notices"])

    def test_a_steady_load_s_requests_are_as_long_as_their_tokens(self, capsys):
        """The load's context is its requests' mean (2,050); the longest, 2,100, bounds the server."""
        code, out, _ = run(capsys, "serve", "batch=16&prefill=on&input_tokens=2000&output_tokens=100")
        assert code == 0 and "--max-model-len 2100 " in out.replace("\\\n", " ")
        code, _, err = run(capsys, "calc", "prefill=on&input_tokens=100&output_tokens=3")
        assert code == 2 and "prefill='on'" in err and "output_tokens at least gamma + 2" in err

    def test_a_link_on_vllm_v0_gets_a_release_that_serves_on_v0(self, capsys):
        code, out, _ = run(capsys, "serve", "engine=vllm-v0")
        row = json.loads(out)
        assert code == 0 and row["version"] == "0.7.3" and "--speculative-model Qwen/Qwen3-0.6B" in row["command"]
        assert "speculative-config" not in row["command"] and "per_batch_size" not in row["command"]
        _, out, _ = run(capsys, "serve", "engine=vllm-v0", "--version", "0.33.0")
        assert json.loads(out)["version"] == "0.33.0" and "per_batch_size" in json.loads(out)["command"]

    def test_the_schedule_runs_to_max_num_seqs(self, capsys):
        # One MI355X holds 2,660 sequences of gpt-oss-120b at γ 2, past the calculator's batches (1,024).
        link = "target=gpt-oss-120b&draft=eagle3&gpu=MI355X&precision=mxfp4&alpha=0.6&gamma=2&batch=128&context=4096"
        code, out, _ = run(capsys, "serve", link, "--draft", "org/head")
        words = json.loads(out)["command"].split()
        config = json.loads(shlex.split(json.loads(out)["command"])[-1])
        # 2,660 at γ 2; 2,659 at the 3 the schedule drafts at batches 24-115, which the server allocates,
        # and where the schedule ends.
        assert code == 0 and words[words.index("--max-num-seqs") + 1] == "2659"
        assert config["num_speculative_tokens"] == 3 and config["num_speculative_tokens_per_batch_size"][-1][1] == 2659

    def test_a_script_to_read_and_run(self, capsys):
        code, out, _ = run(capsys, "serve", "engine=sglang&draft=eagle3", "--draft", "org/head", "--format", "shell")
        lines = out.splitlines()
        assert code == 0 and lines[0].startswith("# advice: Draft length:")
        assert "cat > adaptive_tiers.json <<'SPECVIZ_EOF'" in lines and "SPECVIZ_EOF" in lines
        assert lines[-1].startswith("python -m sglang.launch_server ") and "--speculative-adaptive-config" in lines[-1]

    def test_the_links_engine_picks_the_command(self, capsys):
        _, out, _ = run(capsys, "serve", "engine=sglang&draft=eagle3", "--draft", "org/head")
        row = json.loads(out)
        assert row["engine"] == "sglang" and row["command"].startswith("python -m sglang.launch_server ")
        _, out, _ = run(capsys, "serve", "engine=sglang&draft=eagle3", "--engine", "vllm", "--draft", "org/head")
        assert json.loads(out)["command"].startswith("vllm serve ")

    def test_sglang_and_a_method(self, capsys):
        _, out, _ = run(capsys, "serve", "draft=eagle3", "--engine", "sglang", "--draft", "org/head")
        row = json.loads(out)
        assert "--speculative-algorithm EAGLE3" in row["command"] and "adaptive_tiers.json" in row["files"]
        _, out, _ = run(capsys, "serve", "--method", "suffix", "--version", "0.24.0")
        assert '"method": "suffix"' in json.loads(out)["command"]  # one length: the schedule is the draft's
        assert "per_batch_size" not in json.loads(out)["command"]
        code, _, err = run(capsys, "serve", "--engine", "sglang", "--method", "medusa")
        assert code == 2 and "SGLang has no medusa drafting" in err

    def test_tensorrt_llm_with_its_options_file(self, capsys):
        code, out, _ = run(capsys, "serve", "engine=trt-llm&draft=eagle3", "--draft", "org/head", "--version", "1.3.0rc8",
                           "--format", "shell")
        lines = out.splitlines()
        assert code == 0 and "cat > extra_llm_api_options.yaml <<'SPECVIZ_EOF'" in lines
        assert '  decoding_type: "Eagle3"' in lines and "  draft_len_schedule:" in lines
        assert lines[-1].startswith("trtllm-serve Qwen/Qwen3-32B --backend pytorch ")
        _, out, _ = run(capsys, "serve", "engine=trt-llm&draft=eagle3", "--draft", "org/head")
        assert json.loads(out)["version"] == "1.2.1"  # the newest final release checked
        code, _, err = run(capsys, "serve", "--engine", "trtllm", "--version", "0.33.0")
        assert code == 2 and "not a trtllm release" in err and "1.3.0rc8" in err
        code, _, err = run(capsys, "serve", "--version", " 0.24.0")
        assert code == 2 and err.startswith("specviz: error: --version ' 0.24.0' is not a vllm release")
        code, _, err = run(capsys, "serve", "--version", "9" * 100_000)
        assert code == 2 and len(err) < 1_000 and f"'{'9' * 40}…'" in err


class TestScheduleCommand:
    def test_a_measured_grid_as_each_engine_s_schedule(self, capsys, tmp_path):
        from test_schedule import grid
        (tmp_path / "grid.json").write_bytes(grid())
        tables = {}
        for engine, version in (("vllm", None), ("sglang", None), ("trtllm", "1.2.1"), ("trtllm", "1.3.0rc8")):
            code, out, _ = run(capsys, "schedule", "--from-runs", str(tmp_path / "grid.json"), "--engine", engine,
                               *(("--version", version) if version else ()))
            assert code == 0
            tables[engine, version] = json.loads(out)["tables"][0]
        assert tables["vllm", None]["ranges"] == [[1, 31, 3], [32, 63, 1], [64, 64, 0]]
        assert tables["vllm", None]["config"]["num_speculative_tokens_per_batch_size"] == [[1, 31, 3], [32, 63, 1],
                                                                                           [64, 64, 0]]
        assert tables["sglang", None]["config"]["adaptive_tiers"]["32"] == {"candidate_steps": [1]}
        # TensorRT-LLM 1.3 keys each length by its last batch (0 past it); 1.2 reads the schedule for its
        # two-model drafters only, and these runs are EAGLE-3's (a CLI pass: it had been written for them).
        assert tables["trtllm", "1.3.0rc8"]["config"]["draft_len_schedule"] == {"31": 3, "63": 1}
        assert tables["trtllm", "1.2.1"]["config"] is None
        assert tables["trtllm", "1.2.1"]["note"].startswith("TensorRT-LLM 1.2.1 reads no schedule for eagle3")
        assert tables["vllm", None]["by_batch"][2] == {"batch": 32, "gamma": 1, "measured_speedup": 1.1385,
                                                       "gammas": 2, "runs": 4}

    def test_no_schedule_for_a_method_the_engine_does_not_read_it_for(self, capsys, tmp_path):
        """A CLI pass: a grid of MTP runs got SGLang tiers and a TensorRT-LLM draft_len_schedule, where the
        serve command says TensorRT-LLM reads none for MTP; n-gram runs get no SGLang tiers (EAGLE, EAGLE3
        and MTP only) and 1.2.1's schedule (its two-model drafters read it)."""
        rows = ["workload,concurrency,spec_method,num_speculative_tokens,output_throughput"]
        for batch, plain, gains in ((1, 100, (1.5, 1.9)), (8, 700, (1.4, 1.6)), (32, 2000, (1.1, 1.05))):
            rows += [f"chat,{batch},,,{plain}"] + [f"chat,{batch},{{method}},{gamma},{plain * gain}"
                                                   for gamma, gain in zip((1, 3), gains)]
        # vLLM 0.33.0 drops a suffix schedule (its V1 runner), which 0.24.0 read (a review).
        for method, engine, version, written in (("mtp", "sglang", None, True), ("mtp", "trtllm", "1.3.0rc8", False),
                                                 ("ngram", "sglang", None, False), ("ngram", "trtllm", "1.2.1", True),
                                                 ("suffix", "vllm", "0.33.0", False), ("suffix", "vllm", "0.24.0", True)):
            (tmp_path / f"{method}.csv").write_text("\n".join(rows).replace("{method}", method) + "\n")
            code, out, _ = run(capsys, "schedule", "--from-runs", str(tmp_path / f"{method}.csv"), "--engine", engine,
                               *(("--version", version) if version else ()))
            (table,) = json.loads(out)["tables"]
            assert code == 0 and table["ranges"] == [[1, 31, 3], [32, 32, 1]], (method, engine)
            assert (table["config"] is not None) is written, (method, engine)
            if not written:
                named = {"sglang": "SGLang", "trtllm": "TensorRT-LLM 1.3.0rc8", "vllm": "vLLM 0.33.0"}[engine]
                assert table["note"].startswith(f"{named} reads no schedule for {method}")

    def test_a_vllm_release_without_the_key_gets_the_deploy_view_s_word(self, capsys, tmp_path):
        """vLLM 0.10.0 has no num_speculative_tokens_per_batch_size (0.24.0 brought it): the command
        had written one for it, with no note, where the Deploy view says the release cannot hold it
        (a code review: two copies of the rule)."""
        from test_schedule import grid
        (tmp_path / "grid.json").write_bytes(grid())
        code, out, _ = run(capsys, "schedule", "--from-runs", str(tmp_path / "grid.json"), "--engine", "vllm",
                           "--version", "0.10.0")
        table = json.loads(out)["tables"][0]
        assert code == 0 and table["config"] is None
        assert table["note"].startswith("vLLM 0.10.0 has no draft length per batch size: num_speculative_tokens_per_batch_size came in 0.24.0")

    def test_runs_that_cannot_enter_are_counted(self, capsys):
        code, out, _ = run(capsys, "schedule", "--from-runs",
                           str(SAMPLES / "2026" / "specforge" / "dev_result.jsonl"))
        assert code == 0 and json.loads(out) == {"tables": [], "speculative_runs_without_a_batch": 0,
                                                 "speculative_runs_without_a_baseline": 6,
                                                 "runs_at_synthetic_acceptance_left_out": 0}
        code, _, err = run(capsys, "schedule", "--from-runs", str(SAMPLES / "2026" / "specforge" / "dev_result.jsonl"),
                           "--engine", "trtllm", "--version", "9.9.9")
        assert code == 2 and "not a trtllm release" in err


class TestClaimOfACalculatorLink:
    def test_the_calculator_s_knobs_in_the_link_are_said_not_read(self, capsys):
        """A CLI pass: the same link through calc and claim, alpha=0.8&gamma=3&batch=64 in it, gave a claim
        checked at no α, any γ and any batch without a word; the Claims page reads its own fields."""
        link = "gpu=B200&target=DeepSeek-V3&draft=mtp&tp=8&ep=on&alpha=0.8&gamma=3&batch=64"
        code, out, err = run(capsys, "claim", "1.5x", link)
        assert code == 0 and json.loads(out)["alpha"] is None
        assert err.startswith("specviz: note: a claim does not read the calculator's knobs in the link (alpha, gamma, batch)")
        code, out, err = run(capsys, "claim", "1.5x", link, "--measure", "alpha", "--value", "0.8", "--gamma", "3",
                             "--batch", "64")
        assert code == 0 and (json.loads(out)["alpha"], json.loads(out)["batch"]) == (0.8, 64)
        _, _, err = run(capsys, "claim", "1.5x", "gpu=B200&target=DeepSeek-V3&draft=mtp&tp=8&ep=on")
        assert err == ""


class TestCalcCommand:
    def test_the_expert_tax_is_the_why_panels(self, capsys):
        """An engineer's pass: the page's expert tax (1.15x the expert weights for DeepSeek-V3 + MTP on 8
        B200s at batch 64) could not be checked from the command line."""
        link = "gpu=B200&target=DeepSeek-V3&draft=mtp&precision=fp8&tp=8&context=4096"
        row = json.loads(run(capsys, "calc", link)[1])
        chosen = make_scenario(gpu="B200", target="DeepSeek-V3", draft="mtp", precision="fp8", tp="8", context="4096")
        page = regime.expert_tax(chosen, 0.8, 4, 64, 4096, settings.get("SPECVIZ_BATCH_MAX"))
        assert row["expert_tax"]["ratio"] == pytest.approx(page["ratio"]) and round(page["ratio"], 2) == 1.15
        assert row["expert_tax"]["speedup"] == pytest.approx(row["speedup"]) and row["expert_tax"]["stops_at"] == 535
        assert "expert_tax" not in json.loads(run(capsys, "calc", "")[1])  # a dense target has none

    def test_a_parameter_that_reads_nearly_as_a_scenario_s_is_refused_by_name(self, capsys):
        """A CLI pass: "gama=2&Batch=8" gave γ 4 and batch 64, the defaults, at exit 0 without a word. A
        page's own parameters (the open view, a claim's batch, the Deploy view's engine) still pass."""
        code, out, err = run(capsys, "calc", "alpha=0.8&gama=2&Batch=8")
        assert code == 2 and out == "" and err.count("\n") == 1
        assert "no such parameter: 'gama' (gamma?), 'Batch' (batch?)" in err
        code, out, _ = run(capsys, "calc", "view=batch&claim_batch=8&serve_engine=sglang&latency_rates=0.8&lang=vi&gamma=2")
        assert code == 0 and json.loads(out)["gamma"] == 2

    def test_a_components_format_is_shown_and_a_wrong_one_refused_with_the_formats_taken(self, capsys):
        """A CLI pass: weights_experts=nvfp4 showed nowhere in the output (precision "checkpoint"), and
        weights_experts=fp4 was said to take "a value of its own"."""
        link = "gpu=B200&target=DeepSeek-V3&draft=mtp&tp=8&ep=on&alpha=0.7&batch=32"
        _, out, _ = run(capsys, "calc", link)
        shipped = json.loads(out)
        assert (shipped["weight_formats"]["experts"], shipped["weight_formats"]["attention"], shipped["kv"]) == (
            "fp8-block", "fp8-block", "bf16")
        _, out, _ = run(capsys, "calc", link + "&weights_experts=nvfp4&kv=fp8")
        over = json.loads(out)
        assert (over["precision"], over["weight_formats"]["experts"], over["weight_formats"]["attention"], over["kv"]) == (
            "checkpoint", "nvfp4", "fp8-block", "fp8")
        assert over["speedup"] != shipped["speedup"]
        code, out, err = run(capsys, "calc", link + "&weights_experts=fp4")
        assert (code, out) == (2, "") and err == (
            "specviz: error: the link sets weights_experts='fp4', which the calculator does not take (weights_experts: "
            "one of bf16, fp8, fp8-block, int4, int4-g32, mxfp4, mxfp4-w4a4, nvfp4)\n")

    def test_a_csv_row_has_the_same_columns_whatever_the_scenario_and_counts_whole(self, capsys):
        """A CLI pass: DeepSeek-V3 + MTP had 42 columns, Qwen3-Next 41 and gpt-oss 42 with notices in the
        middle, so rows of several scenarios appended to one file did not line up; 64.0 for a batch."""
        links = ["gpu=B200&target=DeepSeek-V3&draft=mtp&tp=8&ep=on", "gpu=H100-SXM&target=Qwen3-Next-80B-A3B&draft=mtp",
                 "gpu=H100-SXM&target=gpt-oss-120b&draft=eagle3&tp=1", "mode=ratios"]
        headers = set()
        for link in links:
            code, out, _ = run(capsys, "calc", link, "--format", "csv")
            header, row = csv.reader(io.StringIO(out))
            headers.add(tuple(header))
            assert code == 0 and tuple(header) == model_cli.CALC_KEYS and len(row) == len(header)
        assert len(headers) == 1
        row = json.loads(run(capsys, "calc", links[0])[1])
        assert all(type(row[key]) is int for key in ("gamma", "batch", "context", "tokens_per_verify", "max_batch"))
        assert set(row) <= set(model_cli.CALC_KEYS)

    def test_a_draft_of_another_vocabulary_is_said_in_calc_and_in_serve(self, capsys):
        """An engineer's pass: the sidebar alone had said it; calc gave 1.96x and serve a command, silent."""
        link = "target=DeepSeek-V3&draft=Qwen3-0.6B&gpu=B200&precision=fp8"
        row = json.loads(run(capsys, "calc", link)[1])
        assert row["vocab_mismatch"] == {"draft": 151_936, "target": 129_280} and row["speedup"] is not None
        served = json.loads(run(capsys, "serve", link, "--draft", "Qwen/Qwen3-0.6B")[1])
        assert served["notices"][0].startswith("Draft and target vocabularies differ (151,936 vs 129,280 tokens)")
        assert "vocab_mismatch" not in json.loads(run(capsys, "calc", "target=DeepSeek-V3&gpu=B200")[1])

    def test_what_the_sidebar_says_of_the_scenario_calc_and_claim_say_too(self, capsys):
        """FP4 weights on an H100 are multiplied at the BF16 peak: the sidebar said so, and serve; calc,
        claim (which did not even name the precision) were silent (an attack pass). In Vietnamese too; a
        B200 has the FP4 peak, and nothing is said; expert parallelism on a dense model changes nothing."""
        expanded = i18n.t("side.expanded", "en", compute="FP4", gpu="NVIDIA H100 SXM")
        assert json.loads(run(capsys, "calc", "precision=mxfp4-w4a4")[1])["notices"] == [expanded]
        claimed = json.loads(run(capsys, "claim", "2x", "precision=mxfp4-w4a4")[1])
        assert claimed["precision"] == "mxfp4-w4a4" and claimed["notices"] == [expanded]
        vietnamese = json.loads(run(capsys, "--lang", "vi", "calc", "precision=mxfp4-w4a4")[1])["notices"]
        assert vietnamese == [i18n.t("side.expanded", "vi", compute="FP4", gpu="NVIDIA H100 SXM")]
        assert "notices" not in json.loads(run(capsys, "calc", "precision=mxfp4-w4a4&gpu=B200")[1])
        assert "notices" not in json.loads(run(capsys, "claim", "2x", "gpu=B200")[1])
        dense = json.loads(run(capsys, "calc", "ep=on")[1])["notices"]
        assert dense == [i18n.t("cli.ep_dense", "en", target="Qwen3-32B")]

    def test_a_refused_draft_is_answered_with_the_drafts_this_target_takes(self, capsys):
        """Qwen3-32B has no MTP layer: the refusal of draft=mtp listed mtp among the choices."""
        code, out, err = run(capsys, "calc", "target=Qwen3-32B&draft=mtp")
        assert code == 2 and out == "" and "draft='mtp'" in err
        choices = err.split("draft: one of ", 1)[1].rstrip(")\n").split(", ")
        assert "mtp" not in choices and "eagle3" in choices and "EAGLE3-SpecForge-Qwen3-32B" in choices
        assert "EAGLE3-SpecForge-DeepSeek-V3" not in choices  # a head of another target is not taken either

    def test_a_parameter_given_twice_is_refused_as_the_page_refuses_it(self, capsys):
        """The last value was taken (α 0.9 on a B200) where the page showed its defaults (α 0.8 on an H100)."""
        code, out, err = run(capsys, "calc", "alpha=0.5&alpha=0.9&gpu=H200&gpu=B200")
        assert code == 2 and out == "" and "gpu='H200, B200', alpha='0.5, 0.9'" in err

    def test_the_default_scenario_as_the_page_shows_it(self, capsys):
        code, out, _ = run(capsys, "calc")
        row = json.loads(out)
        chosen = make_scenario()
        here = calculator.evaluate_scenario(chosen, 0.8, 4, 64, 1024)
        low, high = calculator.speedup_band(chosen, 0.8, 4, 64, 1024)
        assert code == 0 and (row["target"], row["draft"], row["tp"], row["engine"]) == ("Qwen3-32B", "Qwen3-0.6B", 2,
                                                                                          "vllm-v1")
        assert row["speedup"] == float(here["speedup"]) and (row["low"], row["high"]) == (float(low), float(high))
        assert row["expected_tokens"] == 3.3616 and row["knobs_off_preset"] == {}

    def test_the_gpus_are_said_whole(self, capsys):
        """Kimi-K2 on H100s is 2 groups of 8 with expert parallelism (16 GPUs); calc said tp 8 alone,
        beside a memory per GPU that 8 could not give. The row names dp and ep too."""
        code, out, _ = run(capsys, "calc", "target=Kimi-K2&gpu=H100-SXM")
        row = json.loads(out)
        assert code == 0 and (row["tp"], row["dp"], row["ep"]) == (8, 2, True) and row["fits"]
        code, out, _ = run(capsys, "calc", "")
        assert (json.loads(out)["dp"], json.loads(out)["ep"]) == (1, False)

    def test_a_link_or_its_query(self, capsys):
        chosen = make_scenario(engine="sglang", alpha="0.7", mfu="0.7", draft="eagle3", tp="4")
        query = "&".join(f"{k}={v}" for k, v in scenario.to_query_params(chosen, PRESETS).items())
        _, by_query, _ = run(capsys, "calc", query)
        _, by_url, _ = run(capsys, "calc", f"http://127.0.0.1:8501/what-if?{query}")
        row = json.loads(by_query)
        assert by_query == by_url and row["knobs_off_preset"] == {"mfu": 0.7} and row["draft"] == "eagle3"
        assert row["speedup"] == float(calculator.evaluate_scenario(chosen, 0.7, 4, 64, 1024)["speedup"])

    def test_a_steady_load_s_link(self, capsys):
        chosen = make_scenario(prefill="on", input_tokens="2000", output_tokens="100", batch="16")
        code, out, _ = run(capsys, "calc", "prefill=on&input_tokens=2000&output_tokens=100&batch=16")
        row = json.loads(out)
        low, high = calculator.speedup_band(chosen, 0.8, 4, 16, 2050)
        assert code == 0 and (row["prefill"], row["input_tokens"], row["output_tokens"]) == (True, 2000, 100)
        assert row["context"] == 2050 and row["fits"]
        assert row["speedup"] == float(calculator.evaluate_scenario(chosen, 0.8, 4, 16, 2050)["speedup"])
        assert (row["low"], row["high"]) == (float(low), float(high)) and row["speedup"] < 1.4
        assert "prefill" not in json.loads(run(capsys, "calc", "batch=16")[1])

    def test_a_batch_neither_server_holds_gets_no_rates_and_the_table_writes_whole_numbers(self, capsys):
        """MI355X at batch 256 and context 32,768 holds 17 sequences with the draft, 25 without: the row
        gave no speedup but a plain rate of 675.8 tokens/s, and Markdown wrote the context 3.277e+04."""
        _, out, _ = run(capsys, "calc", "gpu=MI355X&batch=256&context=32768")
        row = json.loads(out)
        assert (row["fits"], row["max_batch_plain"]) == (False, 25)
        assert row["baseline_tokens_per_s"] is None and row["spec_tokens_per_s"] is None and row["speedup"] is None
        _, table, _ = run(capsys, "calc", "gpu=MI355X&batch=256&context=32768", "--format", "md")
        header, _, cells = table.splitlines()
        shown = dict(zip(header.split(" | "), cells.split(" | ")))
        assert (shown["batch"], shown["context"], shown["baseline_tokens_per_s"]) == ("256", "32768", "")

    def test_ratios_mode_reproduces_the_seed(self, capsys):
        _, out, _ = run(capsys, "calc", "mode=ratios&alpha=0.7&verify_cost=2")
        row = json.loads(out)
        assert round(row["speedup"], 2) == 1.26 and "low" not in row

    def test_a_value_the_page_would_refuse_is_an_error(self, capsys):
        code, out, err = run(capsys, "calc", "alpha=5&target=../etc/passwd")
        assert code == 2 and out == "" and err.count("\n") == 1
        assert "target='../etc/passwd', alpha='5'" in err and "alpha: a number from 0 to 1" in err
        # A value of 100 KB is named by its first 60 characters, not written back whole.
        code, _, err = run(capsys, "calc", "alpha=" + "9" * 100_000)
        assert code == 2 and f"alpha='{'9' * 57}...'" in err and len(err) < 500

    @pytest.mark.parametrize(("argv", "message"), [
        (["simulate", "--alpha", "0.8", "--gamma", "20"], "specviz: error: --gamma 20: a whole number from 1 to 16\n"),
        (["vllm-config", "--version", "0.24.0", "--target", "Qwen3-32B", "--draft", "Qwen3-0.6B", "--gamma", "40"],
         "specviz: error: --gamma 40: a whole number from 1 to 16\n"),
        (["simulate", "--alpha", "0.8", "--seed", str(10**23)],
         f"specviz: error: The seed must be a whole number from 0 to {2**63 - 1:,}; got {10**23}.\n"),
    ])
    def test_an_option_out_of_range_is_named_as_the_option(self, capsys, argv, message):
        """An option is not "the link" (it was), and a seed past 64 bits is a seed out of range (it was
        "unexpected TypeError")."""
        code, out, err = run(capsys, *argv)
        assert code == 2 and out == "" and err == message


SAMPLE_PROM = "vllm_metrics_specdecode_excerpt.prom"


def sample(name: str) -> Path:
    """A real file of ../shared/samples (a test that calls this is marked ``samples``)."""
    return SAMPLES / name
REPLAY_PROM = ROOT / "data" / "replay" / "vllm_specdecode.prom"


@contextlib.contextmanager
def replay_server(host: str = "127.0.0.1", redirect: bool = False) -> Iterator[str]:
    """The base URL of a server on ``host`` that answers any path with the replay's scrape; with
    ``redirect``, /metrics alone, and any other path with a redirect to it."""

    class Metrics(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            moved = redirect and self.path != "/metrics"
            body = b"" if moved else REPLAY_PROM.read_bytes()
            self.send_response(302 if moved else 200)
            if moved:
                self.send_header("Location", "/metrics")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    with serving(Metrics, host) as base:
        yield base


def counters_text(drafts: int, per_pos: list[int], running: int = 4, generation: int = 1000) -> str:
    """vLLM V1 exposition text of model "m" with these counters (γ = len(per_pos))."""
    labels = 'engine="0",model_name="m"'
    lines = [f"vllm:spec_decode_num_drafts_total{{{labels}}} {drafts}",
             f"vllm:spec_decode_num_draft_tokens_total{{{labels}}} {drafts * len(per_pos)}",
             f"vllm:spec_decode_num_accepted_tokens_total{{{labels}}} {sum(per_pos)}",
             *(f'vllm:spec_decode_num_accepted_tokens_per_pos_total{{{labels},position="{i}"}} {v}'
               for i, v in enumerate(per_pos)),
             f"vllm:num_requests_running{{{labels}}} {running}", f"vllm:generation_tokens_total{{{labels}}} {generation}"]
    return "\n".join(lines) + "\n"


class TestMetricsCommand:
    @pytest.mark.parametrize("command", [["metrics"], ["record", "--every", "1", "--count", "1"],
                                         ["prometheus"]])
    def test_a_host_the_settings_do_not_allow_is_read_only_with_allow_any_host(self, capsys, tmp_path, monkeypatch,
                                                                                command):
        """The command line follows SPECVIZ_METRICS_ALLOW as the app does; --allow-any-host sets it aside
        for the person at the terminal, but never for the metadata address."""
        monkeypatch.setenv("SPECVIZ_METRICS_ALLOW", "127.0.0.1/32")
        monkeypatch.setenv("SPECVIZ_DB", str(tmp_path / "r.duckdb"))
        with replay_server("127.0.0.2") as base:
            url = base + ("" if command == ["prometheus"] else "/metrics")
            name, *options = command
            code, out, err = run(capsys, name, url, *options)
            assert code == 2 and "this app does not read from that host" in err
            code, out, err = run(capsys, name, url, *options, "--allow-any-host")
            if name == "prometheus":  # read, and found to be no Prometheus API
                assert code == 2 and "this app does not read from that host" not in err
            else:
                assert code == 0, err
            code, out, err = run(capsys, name, "http://169.254.169.254/latest/meta-data/", *options, "--allow-any-host")
            assert code == 2 and "this app does not read from that host" in err

    @pytest.mark.parametrize("command", ["metrics", "record"])
    def test_a_redirected_scrape_says_where_its_figures_came_from(self, capsys, tmp_path, monkeypatch, command):
        """The Live page said where a (checked) redirect led; the commands did not."""
        monkeypatch.setenv("SPECVIZ_DB", str(tmp_path / "r.duckdb"))
        options = ["--format", "json"] if command == "metrics" else ["--every", "1", "--count", "1"]
        with replay_server(redirect=True) as base:
            for asked, moved in ((f"{base}/old?token=SECRET", True), (f"{base}/metrics", False)):
                code, out, err = run(capsys, command, asked, *options)
                said = (" ".join(" ".join(row["notices"]) for row in json.loads(out)) if command == "metrics" else err)
                assert code == 0, err
                assert ("read from " + base + "/metrics" in said) is moved and "SECRET" not in said
                if command == "metrics" and moved:
                    assert said.startswith(f"{base}/old redirected the scrape: its figures were read from")

    def test_the_real_vllm_scrape(self, capsys):
        """Hand-checked against the sample's counters: 14902 drafts, 44706 draft tokens, 31680
        accepted, 12371 / 10390 / 8919 per position."""
        code, out, err = run(capsys, "metrics", str(sample(SAMPLE_PROM)), "--format", "json")
        assert code == 0 and err == ""
        [row] = json.loads(out)
        assert tuple(row) == METRICS_KEYS
        assert row["engine"] == "vllm-v1" and row["model_name"].startswith("faruk_zahiragic/swiss-ai/Apertus-v1.5-70B")
        assert (row["drafts"], row["draft_tokens"], row["accepted_tokens"]) == (14902, 44706, 31680)
        assert row["acceptance_rate"] == pytest.approx(31680 / 44706) == pytest.approx(0.70863, abs=1e-5)
        assert row["acceptance_length"] == pytest.approx(1 + 31680 / 14902) == pytest.approx(3.12589, abs=1e-5)
        assert row["num_speculative_tokens"] == 3
        alpha = row["alpha_iid"]
        assert 1 + alpha + alpha ** 2 + alpha ** 3 == pytest.approx(row["acceptance_length"])
        assert alpha == pytest.approx(0.8374, abs=1e-4)
        assert row["per_position_acceptance"] == pytest.approx([12371 / 14902, 10390 / 14902, 8919 / 14902])
        assert row["per_position_conditional"] == pytest.approx([12371 / 14902, 10390 / 12371, 8919 / 10390])
        assert row["zero_accept_rate"] == pytest.approx(1 - 12371 / 14902)
        assert row["counter_reset"] is False and row["window"] is False and row["summed_labels"] == []
        # What this excerpt does not hold is absent, with its reason in English.
        assert row["running_requests"] is None and row["itl_p50_ms"] is None
        assert row["absent"]["running_requests"] == ("This scrape of vllm-v1 holds no vllm:num_requests_running, which "
                                                     "this figure needs.")
        assert row["absent"]["generation_throughput"] == "A rate per second needs two snapshots."
        assert "itl_p99_ms" in row["absent"] and "itl_p99" not in row["absent"]
        assert set(row["absent"]) == {k for k, v in row.items() if v is None and k != "seconds"}

    def test_the_shipped_replay_recording_reads_as_the_scrape_it_was_taken_from(self, capsys):
        _, scraped, _ = run(capsys, "metrics", str(sample(SAMPLE_PROM)))
        code, replayed, _ = run(capsys, "metrics", str(REPLAY_PROM))
        [scraped_row], [replayed_row] = json.loads(scraped), json.loads(replayed)
        assert code == 0 and replayed_row.pop("model_name") == "swiss-ai/Apertus-v1.5-70B"
        scraped_row.pop("model_name")
        assert replayed_row == scraped_row  # the same scrape, its run name shortened to the model's id

    def test_since_an_earlier_file_gives_the_window(self, capsys, tmp_path):
        before, after = tmp_path / "before.prom", tmp_path / "after.prom"
        before.write_text(counters_text(100, [80, 60], running=4, generation=1000))
        after.write_text(counters_text(300, [240, 170], running=6, generation=1500))
        code, out, _ = run(capsys, "metrics", str(after), "--since", str(before))
        [row] = json.loads(out)
        assert code == 0 and row["window"] is True and row["counter_reset"] is False
        assert (row["drafts"], row["draft_tokens"], row["accepted_tokens"]) == (200, 400, 270)
        assert row["acceptance_rate"] == pytest.approx(270 / 400) and row["acceptance_length"] == pytest.approx(2.35)
        assert row["per_position_acceptance"] == pytest.approx([160 / 200, 110 / 200])
        assert row["per_position_conditional"] == pytest.approx([160 / 200, 110 / 160])
        assert row["running_requests"] == 6 and row["generation_tokens"] == 500
        # Files carry no time of their scrape: no rate per second, and the reason says so.
        assert row["generation_throughput"] is None and "carry no times" in row["absent"]["generation_throughput"]
        # Counters lower than the earlier scrape's: a restart, counted from zero.
        _, out, _ = run(capsys, "metrics", str(before), "--since", str(after))
        [row] = json.loads(out)
        assert row["counter_reset"] is True and row["drafts"] == 100 and row["acceptance_length"] == pytest.approx(2.4)
        assert any("server restarted" in notice for notice in row["notices"])

    def test_tensorrt_llm_and_sglang_say_what_their_figures_are(self, capsys, tmp_path):
        """TensorRT-LLM's window between its two fixture scrapes (checked by hand in
        test_exposition.py), and SGLang's gauges with the caveat that a gauge has no window."""
        prom = ROOT / "tests" / "fixtures" / "prom"
        code, out, _ = run(capsys, "metrics", str(prom / "trtllm_spec_composed_2.prom"), "--since",
                           str(prom / "trtllm_spec_composed_1.prom"))
        [row] = json.loads(out)
        assert code == 0 and (row["engine"], row["model_name"], row["window"]) == ("trt-llm", "undefined", True)
        assert (row["drafts"], row["draft_tokens"], row["accepted_tokens"]) == (500, 1500, 780)
        assert row["acceptance_length"] == pytest.approx(2.56) and row["alpha_iid"] == pytest.approx(0.7069, abs=1e-4)
        assert row["draft_overhead"] == 0.2  # its gauge at the later scrape
        assert row["notices"][0] == ("TensorRT-LLM counts a request's drafts when the request finishes: a window "
                                     "holds the requests that finished in it, every step of each.")
        assert row["notices"][1].startswith("The draft overhead is TensorRT-LLM's gauge")
        sglang = tmp_path / "sglang.prom"
        sglang.write_text((prom / "sglang_docs.prom").read_text() + (prom / "sglang_spec_composed.prom").read_text())
        code, out, _ = run(capsys, "metrics", str(sglang), "--since", str(sglang))
        [row] = json.loads(out)
        assert code == 0 and (row["acceptance_length"], row["acceptance_rate"]) == (2.71, 0.57)
        assert row["notices"] == ["sglang reports acceptance only as gauges over its last logging interval: these "
                                  "figures are the engine's, not counted over this window."]

    def test_a_url_and_the_window_between_two_scrapes_of_it(self, capsys):
        from specviz.live import replay

        with replay.start(speed=30) as server:
            code, out, _ = run(capsys, "metrics", server.url, "--since", server.url)
        [row] = json.loads(out)
        assert code == 0 and row["window"] is True and row["seconds"] > 0
        assert row["model_name"].startswith(replay.MODEL_PREFIX) and row["generation_throughput"] >= 0

    def test_a_window_shorter_than_the_store_takes_is_said_to_be(self, capsys, monkeypatch):
        """An SRE's pass: --since the same URL gave a window of 0.01 s (one draft, acceptance 0)
        without a word, where the store and the recorder refuse one under 0.5 s."""
        from specviz.live import replay

        monkeypatch.setenv("SPECVIZ_LIVE_MIN_WINDOW_S", "3600")  # any two scrapes are nearer
        with replay.start(speed=30) as server:
            code, out, _ = run(capsys, "metrics", server.url, "--since", server.url)
        [row] = json.loads(out)
        assert code == 0 and row["window"] is True
        assert any(n.startswith(f"The window is {row['seconds']:.3f} s, under the 3600 s the store takes as a window")
                   for n in row["notices"])

    def test_per_engine_view(self, capsys, tmp_path):
        two = counters_text(10, [5]) + counters_text(30, [12]).replace('engine="0"', 'engine="1"')
        (tmp_path / "dp.prom").write_text(two)
        _, summed, _ = run(capsys, "metrics", str(tmp_path / "dp.prom"))
        _, split, _ = run(capsys, "metrics", str(tmp_path / "dp.prom"), "--split-by", "engine")
        [row] = json.loads(summed)
        assert row["drafts"] == 40 and row["summed_labels"] == ["engine"]
        assert [(r["labels"], r["drafts"]) for r in json.loads(split)] == [({"engine": "0"}, 10), ({"engine": "1"}, 30)]

    @pytest.mark.parametrize("argv, message", [
        (["metrics", "/no/such/file.prom"], "no such file"),
        (["metrics", "file:///etc/passwd"], "only http and https"),
        (["metrics", "http://127.0.0.1:1/metrics"], "connection was refused"),
        (["metrics", str(ROOT / "README.md")], "not Prometheus metrics text"),
        (["metrics", str(REPLAY_PROM), "--format", "csv"], "invalid choice"),
    ])
    def test_failures_are_one_line_exit_2(self, capsys, argv, message):
        code, out, err = run(capsys, *argv)
        assert code == 2 and out == "" and err.count("\n") == 1
        assert err.startswith("specviz: error:") and message in err


class TestRecordCommand:
    def test_two_polls_of_the_replay(self, capsys, tmp_path):
        from specviz.live import replay

        database = tmp_path / "rec.duckdb"
        with replay.start(speed=30) as server:
            code, out, err = run(capsys, "record", server.url, "--db", str(database), "--every", "0.2", "--count", "2")
        assert code == 0
        report = json.loads(out)
        assert report == {"source": server.url, "db": str(database), "polls": 2, "recorded": 2, "failed": 0,
                          "too_soon": 0, "windows": 1, "anew": 0, "interrupted": False}
        lines = err.splitlines()
        assert len(lines) == 2
        assert lines[0].startswith("poll 1/2 ") and "recorded (first scrape, totals since start)" in lines[0]
        assert lines[1].startswith("poll 2/2 ") and "recorded (window)" in lines[1] and "tokens/s" in lines[1]
        s = Store(database)
        windows = s.windows(server.url)
        assert len(windows) == 1 and windows.drafts[0] > 0 and not windows.counter_reset[0]
        # Fixed digits as the Live page gives them, no exponent (an SRE's pass: "2.2" beside "2.05",
        # "1.117e+04 tokens/s").
        assert f"acceptance length {windows.acceptance_length[0]:.2f}, rate {windows.acceptance_rate[0]:.3f}" in lines[1]
        assert re.search(r", \d+ tokens/s", lines[1]) and "e+" not in err
        s.close()

    def test_a_poll_stored_as_a_new_start_says_why(self):
        """A rolling update's new pod answering (recorder's test_another_server_s_scrape_becomes_the_new_start):
        the line says the poll is a new start, why, and that windows start again."""
        from specviz.cli.live import poll_line
        from specviz.results import recorder

        why = Notice("prom.other_process", started="08:37:00 UTC", previous="08:38:28 UTC")
        for lang, said in (("en", "recorded (a new start, totals since it started, no window: Another process answered"),
                           ("vi", "một điểm bắt đầu mới")):
            line = poll_line(recorder.Poll(3, 1787496000.0, True, anew=why), 5, lang)
            assert line.startswith("poll 3/5 " if lang == "en" else "lần poll 3/5 ") and said in line
            assert "08:37:00 UTC" in line

    def test_polls_more_often_than_a_window_takes_are_refused_at_once(self, capsys, monkeypatch):
        """An SRE's pass: --every 0.1 was taken, and every poll after the first was refused as too soon
        after "another recorder's" (its own)."""
        monkeypatch.setenv("SPECVIZ_LIVE_MIN_WINDOW_S", "0.5")
        code, out, err = run(capsys, "record", str(REPLAY_PROM), "--every", "0.1", "--count", "3")
        assert code == 2 and out == "" and err.count("\n") == 1
        assert "--every 0.1 s is shorter than the 0.5 s a window takes (SPECVIZ_LIVE_MIN_WINDOW_S)" in err

    def test_the_default_store_and_a_file_source(self, capsys, private_database):
        code, out, err = run(capsys, "record", str(REPLAY_PROM), "--every", "0.01", "--count", "2")
        assert code == 0 and json.loads(out)["db"] == str(private_database)
        assert "acceptance length n/a" in err.splitlines()[1]  # nothing happened between the two reads
        code, out, _ = run(capsys, "query", "SELECT count(*) AS n, sum(drafts) AS drafts FROM windows")
        assert json.loads(out) == [{"n": 1, "drafts": 0.0}]

    def test_a_poll_too_soon_after_the_last_stored_scrape_is_said_not_stored(self, capsys, monkeypatch, private_database):
        from specviz.live import exposition

        monkeypatch.setenv("SPECVIZ_LIVE_MIN_WINDOW_S", "3600")
        store = Store(private_database)  # another recorder's scrape of the source, just before
        store.record_scrape(str(REPLAY_PROM), exposition.parse(REPLAY_PROM.read_text()))
        store.close()
        code, out, err = run(capsys, "record", str(REPLAY_PROM), "--every", "3600", "--count", "1")
        assert code == 0 and (json.loads(out)["recorded"], json.loads(out)["too_soon"]) == (0, 1)
        assert re.match(r"poll 1/1 \S+ \S+ UTC not stored: 0\.\d\d s after the last scrape stored of this source",
                        err.splitlines()[0]) and "(SPECVIZ_LIVE_MIN_WINDOW_S)" in err

    def test_polls_that_all_fail(self, capsys, tmp_path):
        code, out, err = run(capsys, "record", "http://127.0.0.1:1/metrics", "--db", str(tmp_path / "f.duckdb"),
                             "--every", "0.05", "--count", "2")
        lines = err.splitlines()
        assert code == 2 and len(lines) == 3
        assert all("failed: http://127.0.0.1:1/metrics: the connection was refused" in line for line in lines[:2])
        assert lines[2].startswith("specviz: error: no poll of http://127.0.0.1:1/metrics succeeded (2 failed)")
        # A script still reads how it went: the summary is on stdout as where some polls succeed.
        summary = json.loads(out)
        assert {k: summary[k] for k in ("polls", "recorded", "failed", "too_soon", "windows", "interrupted")} == {
            "polls": 2, "recorded": 0, "failed": 2, "too_soon": 0, "windows": 0, "interrupted": False}

    @pytest.mark.parametrize("argv, message", [
        (["--every", "0"], "--every: must be a finite number of seconds above 0"),
        (["--every", "soon"], "--every: must be a number of seconds"),
        # It had stored one poll and ended in an OverflowError, with no summary (a CLI pass).
        (["--every", "1e11", "--count", "2"], "--every: must be at most 86400 seconds, got '1e11'"),
        (["--every", "1", "--count", "0"], "--count: must be 1 or more"),
        ([], "the following arguments are required: --every"),
    ])
    def test_bad_arguments(self, capsys, argv, message):
        code, out, err = run(capsys, "record", str(REPLAY_PROM), *argv)
        assert code == 2 and out == "" and err.count("\n") == 1 and message in err


class TestGeneratedDocs:
    def test_docs_cli_md_is_what_the_parser_and_the_examples_say(self):
        """docs/cli.md is what `make docs` makes today: every subcommand with its help, description,
        options, and its example's output as this checkout prints it."""
        text = docs.cli_markdown()
        # Figures to 12 significant digits: the last bits of a float printed whole differ between
        # machines (numpy's reductions take the SIMD path the CPU offers).
        figures = lambda doc: re.sub(r"\d+\.\d{12,}", lambda m: f"{float(m.group()):.12g}", doc)
        assert figures((ROOT / docs.CLI_DOC).read_text(encoding="utf-8")) == figures(text), \
            "docs/cli.md is stale: run make docs"
        for name in docs.EXAMPLES:
            assert f"### specviz {name}\n" in text

    def test_every_subcommand_has_an_example(self):
        assert set(docs.EXAMPLES) == set(docs._subcommands(cli.build_parser()))


class TestAppCommand:
    """``app`` itself replaces the process with Streamlit; tests/test_packaging.py serves it."""

    def test_make_runs_command_line_then_the_extra_arguments(self, monkeypatch):
        monkeypatch.setenv("SPECVIZ_HOST", "0.0.0.0")
        monkeypatch.setenv("SPECVIZ_PORT", "9123")
        argv = streamlit_argv(["--server.port", "9000"])
        assert argv[:5] == [sys.executable, "-m", "streamlit", "run", str(settings.ROOT / "app.py")]
        assert Path(argv[4]).is_file()
        assert argv[5:] == ["--server.address", "0.0.0.0", "--server.port", "9123", "--server.headless", "true",
                            "--browser.gatherUsageStats", "false", "--server.maxUploadSize", "200", "--server.port", "9000"]

    def test_the_server_s_upload_limit_is_its_largest_uploader_s(self, monkeypatch):
        """The server refuses past its own limit with a bare 413: it takes the largest of the result,
        config.json and tokenizer limits, each uploader holding its own files to theirs (a review: a
        20 MB tokenizer.json under a 10 MB result limit was refused by the server where its uploader
        said 50 MB)."""
        limit = lambda: (argv := streamlit_argv([]))[argv.index("--server.maxUploadSize") + 1]
        monkeypatch.setenv("SPECVIZ_MAX_UPLOAD_BYTES", "400000000")
        assert limit() == "400"
        monkeypatch.setenv("SPECVIZ_MAX_UPLOAD_BYTES", "10000000")
        assert limit() == "50"  # the tokenizer's 50 MB
        monkeypatch.setenv("SPECVIZ_MAX_TOKENIZER_BYTES", "1000")
        assert limit() == "10"
        monkeypatch.setenv("SPECVIZ_MAX_UPLOAD_BYTES", "1000")
        assert limit() == "1"

    def test_streamlit_arguments_only_after_the_separator(self, capsys):
        code, out, err = run(capsys, "app", "--server.port", "9000")
        assert code == 2 and out == "" and "unrecognized arguments: --server.port" in err


class TestCalcWithConfigs:
    def test_a_draft_head_as_the_target_config_is_refused(self, capsys):
        head = SAMPLES / "configs" / "EAGLE3-SpecForge-qwen3-32B.config.json"
        code, out, err = run(capsys, "calc", "", "--target-config", str(head))
        assert code == 2 and not out and "is a draft head's" in err and "--draft-config" in err

    def test_config_paths_for_target_and_draft_give_the_presets_figures(self, capsys):
        configs = Path(settings.get("SPECVIZ_DATA_DIR")) / "model_configs"
        code, out, err = run(capsys, "calc", "gpu=H200&tp=8&draft=EAGLE3-SpecForge-DeepSeek-V3&target=DeepSeek-V3",
                             "--format", "json")
        preset = json.loads(out)
        code, out, err = run(capsys, "calc", "gpu=H200&tp=8", "--target-config", str(configs / "DeepSeek-V3.json"),
                             "--draft-config", str(configs / "EAGLE3-SpecForge-deepseek-v3-671B.json"), "--format", "json")
        read = json.loads(out)
        assert code == 0, err
        assert (read["target"], read["draft"]) == ("custom", "custom")
        assert read["speedup"] == pytest.approx(preset["speedup"]) and read["low"] == pytest.approx(preset["low"])

    def test_the_link_is_read_for_the_target_config_its_draft_and_default(self, capsys):
        # DeepSeek-V3's config.json ships an MTP layer: the link's draft=mtp is taken, and without a
        # draft the link's default is the config's own (its MTP layer), not the default target's Qwen3-0.6B.
        link = "gpu=B200&alpha=0.8&gamma=3&batch=64&context=4096"
        config = SAMPLES / "configs" / "DeepSeek-V3.config.json"
        _, out, _ = run(capsys, "calc", link + "&target=DeepSeek-V3")
        preset = json.loads(out)
        for given in (link, link + "&draft=mtp"):
            code, out, err = run(capsys, "calc", given, "--target-config", str(config))
            read = json.loads(out)
            assert code == 0, err
            assert (read["draft"], read["tp"]) == ("mtp", 4)  # the fewest B200s (180 GiB) that hold it
            assert read["speedup"] == pytest.approx(preset["speedup"])
            assert read["max_batch"] == preset["max_batch"]

    def test_a_link_of_uploaded_models_is_read_with_their_configs(self, capsys):
        configs = SAMPLES / "configs"
        code, out, err = run(capsys, "calc", "gpu=H200&tp=8&target=custom&draft=custom",
                             "--target-config", str(configs / "DeepSeek-V3.config.json"),
                             "--draft-config", str(configs / "EAGLE3-SpecForge-deepseek-v3-671B.config.json"))
        assert code == 0, err
        assert (json.loads(out)["target"], json.loads(out)["draft"]) == ("custom", "custom")
        code, out, err = run(capsys, "calc", "draft=custom")
        assert code == 2 and not out and "draft=custom" in err and "--draft-config" in err


def built_from_text(source: str) -> list[str]:
    """The ``UsageError(...)`` calls of ``source`` whose first argument is not a message key: an
    f-string, text joined or formatted, or a literal that is no key of the English catalogue (a key
    passed through a name, as ``preset_id``'s ``unknown``, is one)."""
    english = i18n.catalogue("en")
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "UsageError":
            key = node.args[0] if node.args else None
            literal_key = isinstance(key, ast.Constant) and key.value in english
            if not (literal_key or isinstance(key, ast.Name)):
                found.append(f"line {node.lineno}: {ast.unparse(key) if key is not None else '(no key)'}")
    return found


class TestLanguage:
    """The messages in the language of --lang, else SPECVIZ_LANG; data the same in every language."""

    def test_a_usage_error_in_english_and_in_vietnamese(self, capsys, monkeypatch):
        argv = ("claim", "3x", "--measure", "alpha")
        english, vietnamese = (f"specviz: error: {i18n.t('cli.claim.measure_value', lang)}\n" for lang in ("en", "vi"))
        assert english == "specviz: error: --measure and --value go together\n" and vietnamese != english
        assert run(capsys, *argv) == (2, "", english)
        assert run(capsys, "--lang", "vi", *argv) == (2, "", vietnamese)
        monkeypatch.setenv("SPECVIZ_LANG", "vi")
        assert run(capsys, *argv) == (2, "", vietnamese)
        assert run(capsys, "--lang", "en", *argv) == (2, "", english)  # the option over the setting
        monkeypatch.setenv("SPECVIZ_LANG", "fr")  # no catalogue: English, as the app takes it
        assert run(capsys, *argv) == (2, "", english)

    def test_a_usage_error_s_values_and_nested_messages_in_vietnamese(self, capsys, tmp_path):
        """The file, row and column a fit names, and the reason of another layer inside it."""
        measured = write_csv(tmp_path / "M.csv", MEASURED_HEADER + ["kv_dtype"], [row + ["int4"] for row in measured_rows()])
        code, out, err = run(capsys, "--lang", "vi", "fit", "--measured", str(measured))
        where = i18n.t("cli.fit.where", "vi", path=str(measured), row=1, column="kv_dtype")
        reason = i18n.t("dtypes.kv", "vi", value="int4", known="bf16, fp8")
        assert (code, out) == (2, "") and err == f"specviz: error: {i18n.t('cli.fit.precision', 'vi', where=where, error=reason)}\n"
        words = err.replace(str(measured), "")
        assert ", dòng 1, cột kv_dtype: " in words and "row" not in words and "not modelled" not in words

    @pytest.mark.parametrize("argv, english, vietnamese", [
        (("simulate", "--batch", "x"), "argument --batch: must be a whole number, got 'x'",
         "tham số --batch: phải là một số nguyên; nhận được 'x'"),
        (("record", "--every", "0"), "argument --every: must be a finite number of seconds above 0, got '0'",
         "tham số --every: phải là một số giây hữu hạn, lớn hơn 0; nhận được '0'"),
        (("claim", "3x", "--verify-cost", "0.1"), "argument --verify-cost: must be a number from 1 to 100, got '0.1'",
         "tham số --verify-cost: phải là một số từ 1 đến 100; nhận được '0.1'"),
        # Options of plain int and float types too (a review: argparse's "invalid int value" had stayed).
        (("claim", "3x", "--context", "x"), "argument --context: must be a whole number, got 'x'",
         "tham số --context: phải là một số nguyên; nhận được 'x'"),
        (("claim", "x", "--speedup", "abc"), "argument --speedup: must be a number, got 'abc'",
         "tham số --speedup: phải là một số; nhận được 'abc'")])
    def test_a_value_an_option_refuses_in_either_language(self, capsys, monkeypatch, argv, english, vietnamese):
        """Said by the option's own type in the language asked for (it had been argparse's English),
        by --lang before or after the subcommand or by SPECVIZ_LANG."""
        assert run(capsys, *argv) == (2, "", f"specviz: error: {english}\n")
        assert run(capsys, "--lang", "vi", *argv) == (2, "", f"specviz: error: {vietnamese}\n")
        assert run(capsys, *argv, "--lang=vi")[2].startswith(f"specviz: error: {vietnamese}")
        monkeypatch.setenv("SPECVIZ_LANG", "vi")
        assert run(capsys, *argv) == (2, "", f"specviz: error: {vietnamese}\n")

    def test_argparse_s_own_errors_stay_english(self, capsys):
        code, out, err = run(capsys, "--lang", "vi", "speedup", "--alpha", "0.5")
        assert (code, out) == (2, "") and err == "specviz: error: the following arguments are required: --gamma\n"
        code, _, err = run(capsys, "--lang", "fr", "speedup")
        assert code == 2 and "argument --lang: invalid choice: 'fr'" in err

    def test_a_notice_in_vietnamese(self, capsys, tmp_path, monkeypatch):
        monkeypatch.setenv("SPECVIZ_SQL_MAX_ROWS", "5")
        code, out, err = run(capsys, "--lang", "vi", "query", "SELECT * FROM range(20)", "--db", made_store(tmp_path / "c.duckdb"))
        assert code == 0 and len(json.loads(out)) == 5
        assert err == f"specviz: {i18n.t('cli.query.cut.rows', 'vi', rows=5)}\n" == \
            "specviz: kết quả bị cắt ở 5 dòng đầu tiên (SPECVIZ_SQL_MAX_ROWS)\n"

    def test_a_claim_s_sentences_in_vietnamese_its_data_the_same(self, capsys):
        _, english, _ = run(capsys, "claim", "2.5x at batch 64")
        _, vietnamese, _ = run(capsys, "--lang", "vi", "claim", "2.5x at batch 64")
        english, vietnamese = json.loads(english), json.loads(vietnamese)
        check = claims.check_claim(make_scenario(), claims.Claim(2.5, batch=64), settings.get("SPECVIZ_GAMMA_MAX"),
                                   settings.get("SPECVIZ_BATCH_MAX"), PRESETS.acceptance)
        # The page's sentence in Vietnamese, its Markdown taken out and a preset's name in Vietnamese.
        assert vietnamese["headline"] == i18n.t(check.headline.key, "vi", **check.headline.params).replace("**", "")
        assert vietnamese["headline"].startswith("Khó xảy ra: 2.50× trên 2× NVIDIA H100 SXM cho Qwen3-32B")
        sentences = ("headline", "reasons", "conditions")
        assert all(english[key] != vietnamese[key] for key in sentences)
        assert {k: v for k, v in english.items() if k not in sentences} == \
            {k: v for k, v in vietnamese.items() if k not in sentences}

    @pytest.mark.parametrize("argv", [
        ["speedup", "--alpha", "0.8", "0.6", "--gamma", "auto", "--format", "csv"],
        ["roofline", "--gpu", "H100-SXM", "--target", "Qwen3-32B", "--draft", "Qwen3-0.6B", "--batch", "1", "64",
         "--alpha", "0.7", "--gamma", "5", "--format", "md"],
        ["calc", "alpha=0.7&batch=16&engine=sglang"],
        ["simulate", "--alpha", "0.8", "--gamma", "4", "--steps", "1000", "--requests", "100"],
        ["presets", "--format", "csv"],
    ])
    def test_data_is_the_same_in_every_language(self, capsys, argv):
        outputs = {lang: run(capsys, "--lang", lang, *argv) for lang in i18n.LANGUAGES}
        assert outputs["en"][0] == 0 and outputs["en"][2] == ""
        assert all(output == outputs["en"] for output in outputs.values())

    def test_no_usage_error_is_built_from_text(self):
        """Every UsageError carries a message key (and values), never English built in place: the
        reader's language is chosen when it is shown."""
        sources = sorted((ROOT / "specviz" / "cli").glob("*.py"))
        calls = sum(path.read_text().count("UsageError(") for path in sources)
        assert calls > 50  # the scan sees the code
        assert {path.name: found for path in sources if (found := built_from_text(path.read_text()))} == {}

    @pytest.mark.parametrize("source", [
        'raise UsageError(f"unknown GPU {gpu!r}")', 'raise UsageError("--by-batch needs --gpu")',
        'raise UsageError("unknown " + what)', 'raise UsageError("; ".join(parts))', "raise UsageError()",
    ])
    def test_the_scan_catches_text(self, source):
        assert built_from_text(source)

    @pytest.mark.parametrize("source", ['raise UsageError("cli.vllm_config.by_batch")',
                                        "raise UsageError(unknown, text=repr(text))"])
    def test_the_scan_passes_keys(self, source):
        assert built_from_text(source) == []
