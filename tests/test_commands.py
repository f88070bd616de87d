"""Tests for specviz.advice.commands: the flags each vLLM version takes, SGLang's, and the draft length
per batch size."""

import json
import shlex
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from conftest import PRESETS, config_of, make_scenario
from specviz import calculator, i18n, workload
from specviz.advice import commands as vllm_config
from specviz.advice import draft_length, memory_flags, serving, sglang, trtllm
from specviz.errors import Notice, SpecvizError
from specviz.model import dtypes, step

SCENARIO = make_scenario()  # Qwen3-32B drafted by Qwen3-0.6B on 2 H100s, vLLM V1
# The same target with the model type of a checkpoint that ships MTP layers (specviz models none yet).
WITH_MTP = replace(SCENARIO, target=replace(SCENARIO.target, model_type="deepseek_v3"))


def keys(command: vllm_config.Command) -> list[str]:
    """The command's notices but the one every command with a context flag carries (its own test below)."""
    return [n.key for n in command.notices if n.key not in ("command.context_flag", "command.context_flag_load")]


def test_a_command_says_its_context_flag_refuses_longer_requests():
    """"--max-model-len 1024", the context's default, was said nowhere: pasted as it is, the server
    refuses a longer prompt (a browser pass)."""
    command = vllm_config.vllm_command(SCENARIO, "0.16.0", 4)
    (said,) = [n for n in command.notices if n.key == "command.context_flag"]
    assert said.params == {"flag": "--max-model-len", "longest": 1024, "batch_flag": "--max-num-seqs"}
    assert "--max-model-len 1024" in " ".join(command.argv)
    # Under a steady load the page has no context slider: the load's tokens in and out are named
    # (an engineer's pass: the note pointed at a control the page did not show).
    loaded = make_scenario(prefill="on", input_tokens="2000", output_tokens="100")
    command = vllm_config.vllm_command(loaded, "0.33.0", 4)
    (said,) = [n for n in command.notices if n.key.startswith("command.context_flag")]
    assert said.key == "command.context_flag_load" and said.params["longest"] == 2100
    assert "--max-model-len 2100" in " ".join(command.argv)


class TestParseVersion:
    @pytest.mark.parametrize("text, version", [("0.8.3", (0, 8, 3)), ("v0.10.1.1", (0, 10, 1)), ("0.11", (0, 11, 0)),
                                               (" 0.24.0 ", (0, 24, 0))])
    def test_versions(self, text, version):
        assert vllm_config.parse_version(text) == version

    @pytest.mark.parametrize("text", ["", "latest", "0", "0.8.3; rm -rf /", "1.2.3.4.5"])
    def test_not_versions(self, text):
        with pytest.raises(SpecvizError) as raised:
            vllm_config.parse_version(text)
        assert raised.value.key == "command.bad_version"

    def test_every_offered_version_parses_in_order(self):
        parsed = [vllm_config.parse_version(v) for v in vllm_config.VLLM_VERSIONS]
        assert parsed == sorted(parsed)


class TestVllmCommand:
    def test_old_flags_up_to_0_8_1(self):
        command = vllm_config.vllm_command(SCENARIO, "0.7.3", 5, off_from=32)
        assert command.argv[:3] == ["vllm", "serve", "Qwen/Qwen3-32B"]
        assert command.line == ("vllm serve Qwen/Qwen3-32B --tensor-parallel-size 2 --max-num-seqs 228 --max-model-len 1024 "
                                "--gpu-memory-utilization 0.92 --speculative-model Qwen/Qwen3-0.6B "
                                "--num-speculative-tokens 5 --speculative-disable-by-batch-size 32")

    def test_ngram_in_old_and_new_form(self):
        ngram = replace(SCENARIO, draft=step.Draft("ngram"))
        old = vllm_config.vllm_command(ngram, "0.8.1", 4)
        assert "[ngram]" in old.argv and old.argv[-2:] == ["--ngram-prompt-lookup-max", "4"]
        assert config_of(vllm_config.vllm_command(ngram, "0.8.3", 4)) == {
            "method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 4}  # seed 000's advice

    def test_speculative_config_from_0_8_2_as_json(self):
        command = vllm_config.vllm_command(SCENARIO, "0.8.3", 4)
        assert config_of(command) == {"method": "draft_model", "model": "Qwen/Qwen3-0.6B", "num_speculative_tokens": 4}
        assert shlex.split(command.line) == command.argv  # quoted for a shell
        # The page's form: an option a line; a shell joins the lines where a backslash ends one.
        assert command.lines.splitlines()[0] == "vllm serve Qwen/Qwen3-32B \\"
        assert all(line.startswith("    --") for line in command.lines.splitlines()[1:])
        assert shlex.split(command.lines.replace("\\\n", "")) == command.argv

    def test_disable_by_batch_size_where_it_works_and_where_not(self):
        v0 = vllm_config.vllm_command(SCENARIO, "0.9.2", 4, off_from=48)
        assert config_of(v0)["disable_by_batch_size"] == 48
        assert keys(v0) == ["command.v0_fallback", "command.disable_v0_only"]  # a draft model runs on V0 here
        eagle = replace(SCENARIO, draft=step.Draft("eagle"))
        ignored = vllm_config.vllm_command(eagle, "0.10.0", 4, off_from=48, draft_repo="org/eagle")
        assert "disable_by_batch_size" not in config_of(ignored) and "command.disable_ignored" in keys(ignored)
        removed = vllm_config.vllm_command(SCENARIO, "0.17.0", 4, off_from=48)
        assert "disable_by_batch_size" not in config_of(removed) and "command.disable_removed" in keys(removed)
        assert config_of(vllm_config.vllm_command(SCENARIO, "0.9.2", 4, off_from=1))["disable_by_batch_size"] == 2

    def test_the_batch_schedule_from_0_24_0(self):
        schedule = draft_length.gamma_schedule(SCENARIO, 0.8, 1024, 1024, 8)
        config = config_of(vllm_config.vllm_command(SCENARIO, "0.24.0", 8, schedule=schedule))
        ranges = config["num_speculative_tokens_per_batch_size"]
        assert ranges[0][0] == 1 and ranges[-1][1] == SCENARIO.max_batch() and len(ranges) == len(schedule)
        assert config["num_speculative_tokens"] == max(k for *_, k in ranges)
        earlier = vllm_config.vllm_command(SCENARIO, "0.17.0", 8, schedule=schedule)
        assert "num_speculative_tokens_per_batch_size" not in config_of(earlier)
        assert "command.no_schedule" in keys(earlier)

    @pytest.mark.parametrize("model_type, refused, runs", [
        ("llama", "0.8.3", "0.8.5"), ("qwen3", "0.10.0", "0.10.1"), ("qwen2", "0.10.1", "0.10.2"),
        ("qwen3_moe", "0.11.0", "0.11.1"), ("mistral", "0.16.0", "0.17.0"), ("gpt_oss", "0.10.0", "0.11.0"),
        ("llama4_text", "0.11.0", "0.11.1"), ("phi3", "0.16.0", "0.17.0"), ("deepseek_v3", "0.17.0", "0.18.0"),
        ("kimi_k2", "0.17.0", "0.18.0"), ("qwen3_next", "0.20.0", "0.24.0"),
        ("qwen2_moe", "0.33.0", None), ("mixtral", "0.33.0", None), ("glm4_moe", "0.33.0", None),
        ("gemma3_text", "0.33.0", None)])
    def test_eagle3_by_target_model_type(self, model_type, refused, runs):
        """From each release's source: the config's list of target types and the model runner's
        SupportsEagle3 check (the module's facts)."""
        target = replace(SCENARIO.target, model_type=model_type)
        eagle3 = replace(SCENARIO, target=target, draft=step.Draft("eagle3"))
        with pytest.raises(SpecvizError) as raised:
            vllm_config.vllm_command(eagle3, refused, 4, draft_repo="org/eagle3-head")
        if model_type == "llama":  # before EAGLE-3 came in at all
            assert raised.value.key == "command.method_unknown"
        elif runs is None:
            assert raised.value.key == "command.eagle3_target_never"
        else:
            assert raised.value.key == "command.eagle3_target_since" and raised.value.params["since"] == runs
        if runs is not None:
            assert config_of(vllm_config.vllm_command(eagle3, runs, 4, draft_repo="org/h"))["method"] == "eagle3"
        # EAGLE (the first) reads only the last hidden state: any target.
        eagle = replace(eagle3, draft=step.Draft("eagle"))
        assert config_of(vllm_config.vllm_command(eagle, "0.33.0", 4, draft_repo="org/h"))["method"] == "eagle"


    def test_methods_by_version(self):
        eagle3 = replace(SCENARIO, draft=step.Draft("eagle3"))
        with pytest.raises(SpecvizError) as raised:
            vllm_config.vllm_command(eagle3, "0.8.3", 4)
        assert raised.value.key == "command.method_unknown" and raised.value.params["since"] == "0.8.5"
        command = vllm_config.vllm_command(eagle3, "0.11.0", 4, draft_repo="org/eagle3-head")
        assert config_of(command)["model"] == "org/eagle3-head" and not keys(command)
        unnamed = vllm_config.vllm_command(eagle3, "0.11.0", 4)
        assert config_of(unnamed)["model"].startswith("<EAGLE-3 head for Qwen3-32B")
        assert [p.key for p in unnamed.problems] == ["command.name_the_draft"]
        with pytest.raises(SpecvizError) as raised:  # V1 alone, and it refuses a draft model until 0.16.0
            vllm_config.vllm_command(SCENARIO, "0.11.0", 4)
        assert raised.value.key == "command.draft_model_unsupported"
        assert not keys(vllm_config.vllm_command(SCENARIO, "0.16.0", 4))

    def test_a_head_preset_whose_source_names_its_checkpoint_is_served_by_it(self):
        """AQ-MedAI's head for Kimi-K2 is published (data/draft_heads.csv names its Hugging Face page): every
        engine's command serves it, where it had asked the user to name a head the preset names (a
        consistency pass). SpecForge's heads are training configs: still a placeholder and a problem."""
        kimi = make_scenario(gpu="GB200", target="Kimi-K2", draft="EAGLE3-AQ-MedAI-Kimi-K2")
        schedule = draft_length.gamma_schedule(kimi, kimi.alpha, kimi.context, 1024, 8, "vllm")
        for engine, words in (("vllm", '"model": "AQ-MedAI/Kimi-K2-Instruct-eagle3"'),
                              ("sglang", "--speculative-draft-model-path AQ-MedAI/Kimi-K2-Instruct-eagle3"),
                              ("trtllm", 'speculative_model: "AQ-MedAI/Kimi-K2-Instruct-eagle3"')):
            command = serving.serve_command(kimi, schedule, 4, 64, engine=engine)
            assert words in command.line + "".join(command.files.values()) and not command.problems, engine
        trained = make_scenario(gpu="B200", target="gpt-oss-120b", draft="EAGLE3-SpecForge-gpt-oss-120b", tp="1")
        unnamed = vllm_config.vllm_command(trained, "0.33.0", 3)
        assert [p.key for p in unnamed.problems] == ["command.name_the_draft"]

    def test_methods_the_step_model_does_not_cost(self):
        mtp = vllm_config.vllm_command(WITH_MTP, "0.24.0", 1, method="mtp")
        assert config_of(mtp) == {"method": "mtp", "num_speculative_tokens": 1}  # the target's own layers
        assert keys(mtp) == ["command.mtp_layers", "command.drafted_batch"] and not mtp.problems
        suffix = vllm_config.vllm_command(SCENARIO, "0.24.0", 8, method="suffix")
        assert config_of(suffix) == {"method": "suffix", "num_speculative_tokens": 8}
        assert keys(suffix) == ["command.suffix_package", "command.drafted_batch"]
        medusa = vllm_config.vllm_command(SCENARIO, "0.16.0", 3, method="medusa", draft_repo="org/medusa-heads")
        assert config_of(medusa) == {"method": "medusa", "model": "org/medusa-heads", "num_speculative_tokens": 3}
        unnamed = vllm_config.vllm_command(SCENARIO, "0.9.2", 3, method="mlp_speculator")
        assert config_of(unnamed)["model"] == "<MLP speculator for Qwen3-32B>"
        assert [(p.key, p.params["engine"]) for p in unnamed.problems] == [("command.name_the_draft", "vLLM")]
        pasted = vllm_config.vllm_command(SCENARIO, "0.16.0", 3, method="medusa",
                                          draft_repo="https://huggingface.co/org/medusa-heads/")
        assert config_of(pasted)["model"] == "org/medusa-heads"  # a Hugging Face URL gives its id
        for url in ("https://huggingface.co/org/medusa-heads/tree/main",
                    "https://huggingface.co/org/medusa-heads/blob/main/config.json"):
            pasted = vllm_config.vllm_command(SCENARIO, "0.16.0", 3, method="medusa", draft_repo=url)
            assert config_of(pasted)["model"] == "org/medusa-heads", url  # had been refused as no id
        # A self-speculative scenario can still be served with a method that names its own draft.
        self_draft = replace(WITH_MTP, draft=step.Draft("self", kv_budget=512))
        assert config_of(vllm_config.vllm_command(self_draft, "0.24.0", 2, method="mtp"))["method"] == "mtp"

    @pytest.mark.parametrize("engine", ["vllm", "sglang"])
    def test_mtp_needs_a_target_with_mtp_layers(self, engine):
        # vLLM maps a target's model type to its MTP draft and refuses any other (0.11.0 on).
        write = (lambda: vllm_config.vllm_command(SCENARIO, "0.24.0", 1, method="mtp")) if engine == "vllm" else \
            (lambda: sglang.sglang_command(SCENARIO, 1, method="mtp"))
        with pytest.raises(SpecvizError) as raised:
            write()
        assert raised.value.key == "command.no_mtp_layers" and raised.value.params["model_type"] == "qwen3"
        # It named DeepSeek-V3, GLM-4.5 and Qwen3-Next as targets "none of which specviz models yet": presets all.
        assert "none of which" not in str(raised.value)
        assert all(model_id in str(raised.value) for model_id in ("DeepSeek-V3", "GLM-4.5-Air", "Qwen3-Next"))

    @pytest.mark.parametrize(("target", "since", "before"), [
        # vllm/config/speculative.py's hf_config_override of each release on PyPI.
        ("GLM-5", "0.16.0", "0.14.1"), ("Qwen3.5-397B-A17B", "0.17.0", "0.16.0"),
        ("DeepSeek-V4-Flash", "0.20.0", "0.19.1")])
    def test_the_2026_mtp_targets_from_the_release_that_runs_them(self, target, since, before):
        """Their presets draft with their MTP layers by default: Deploy had refused every one as
        having none, while the calculator gave their speedup."""
        chosen = make_scenario(target=target, draft="mtp", gpu="B200")
        assert config_of(vllm_config.vllm_command(chosen, since, 2, method="mtp"))["method"] == "mtp"
        argv = sglang.sglang_command(chosen, 2, method="mtp").argv
        assert argv[argv.index("--speculative-algorithm") + 1] == "EAGLE"
        with pytest.raises(SpecvizError) as raised:
            vllm_config.vllm_command(chosen, before, 2, method="mtp")
        assert raised.value.key == "command.mtp_target_since" and raised.value.params["since"] == since
        # MiniMax-M2's MTP modules run in no engine yet (vLLM runs MiniMax-M3's alone).
        with pytest.raises(SpecvizError) as raised:
            vllm_config.vllm_command(make_scenario(target="MiniMax-M2.5", draft="mtp", gpu="B200"), "0.33.0", 2,
                                     method="mtp")
        assert raised.value.key == "command.no_mtp_layers"

    @pytest.mark.parametrize(("method", "version", "gone"), [
        ("mlp_speculator", "0.10.0", "0.10.0"), ("mlp_speculator", "0.16.0", "0.10.0"), ("medusa", "0.33.0", "0.33.0")])
    def test_a_method_a_version_no_longer_runs(self, method, version, gone):
        with pytest.raises(SpecvizError) as raised:
            vllm_config.vllm_command(SCENARIO, version, 3, method=method, draft_repo="org/heads")
        assert raised.value.key == "command.method_gone" and raised.value.params["gone"] == gone

    def test_the_engine_a_method_runs_on_while_v0_exists(self):
        # 0.8.2: V1 drafts only with n-gram, so the others are started on V0.
        eagle = vllm_config.vllm_command(replace(SCENARIO, draft=step.Draft("eagle")), "0.8.2", 3, draft_repo="org/eagle")
        assert eagle.line.startswith("VLLM_USE_V1=0 vllm serve ") and "command.v0_env" in keys(eagle)
        ngram = vllm_config.vllm_command(replace(SCENARIO, draft=step.Draft("ngram")), "0.8.2", 3)
        assert ngram.argv[0] == "vllm" and "command.v0_env" not in keys(ngram)
        # From 0.8.3 vLLM falls back to V0 by itself: Medusa until 0.9.0, the MLP speculator always.
        for method, version, fallback in (("medusa", "0.8.3", True), ("medusa", "0.9.2", False),
                                          ("mlp_speculator", "0.9.2", True)):
            command = vllm_config.vllm_command(SCENARIO, version, 3, method=method, draft_repo="org/heads")
            assert command.argv[0] == "vllm" and ("command.v0_fallback" in keys(command)) == fallback

    @pytest.mark.parametrize(("method", "version", "since"), [
        ("mtp", "0.10.0", "0.11.0"), ("suffix", "0.11.0", "0.11.1"), ("mtp", "0.7.3", "0.11.0"),
        ("suffix", "0.8.1", "0.11.1")])
    def test_a_method_newer_than_the_version(self, method, version, since):
        with pytest.raises(SpecvizError) as raised:
            vllm_config.vllm_command(WITH_MTP, version, 2, method=method)
        key = "command.mtp_before_method" if method == "mtp" else "command.method_unknown"
        assert raised.value.key == key and raised.value.params["since"] == since
        if method == "mtp":  # not "choose another draft": that release ran the layer as deepseek_mtp
            assert "ran DeepSeek's MTP layer as the method deepseek_mtp" in str(raised.value)

    def test_before_the_config_flag_heads_go_to_speculative_model(self):
        medusa = vllm_config.vllm_command(SCENARIO, "0.7.3", 3, method="medusa", draft_repo="org/medusa-heads")
        assert medusa.argv[medusa.argv.index("--speculative-model") + 1] == "org/medusa-heads"
        with pytest.raises(SpecvizError) as raised:  # EAGLE-3 came after the old flags had gone
            vllm_config.vllm_command(replace(SCENARIO, draft=step.Draft("eagle3")), "0.7.3", 3)
        assert raised.value.params["since"] == "0.8.5"

    def test_an_unknown_method(self):
        with pytest.raises(SpecvizError) as raised:
            vllm_config.vllm_command(SCENARIO, "0.24.0", 2, method="lookahead")
        assert raised.value.key == "command.bad_method"

    # An option ("--trust-remote-code", "-rf") had gone into the command as the model; a Cyrillic "е"
    # had been taken for the id it looks like.
    @pytest.mark.parametrize("text", ["<b>x</b>", "org/model; rm -rf ~", "a b", "x" * 201, "$(id)",
                                      "--trust-remote-code", "-rf", "Qw\u0435n/Qwen3-32B"])
    def test_a_draft_id_that_is_not_one(self, text):
        with pytest.raises(SpecvizError) as raised:
            vllm_config.vllm_command(SCENARIO, "0.24.0", 4, draft_repo=text)
        assert raised.value.key == "command.bad_checkpoint"

    def test_a_schedule_stops_speculation_itself(self):
        schedule = draft_length.gamma_schedule(SCENARIO, 0.4, 1024, 1024, 8)
        assert (schedule["gamma"] == 0).any()
        command = vllm_config.vllm_command(SCENARIO, "0.33.0", 8, schedule=schedule, off_from=100)
        # Its longest draft, 2, holds 201 sequences where the scenario's γ 4 holds 200: said, and no more.
        assert keys(command) == ["command.drafted_batch"] and "disable_by_batch_size" not in config_of(command)

    def test_a_self_draft_is_not_offered(self):
        with pytest.raises(SpecvizError) as raised:
            vllm_config.vllm_command(replace(SCENARIO, draft=step.Draft("self", kv_budget=512)), "0.24.0", 4)
        assert raised.value.key == "command.no_self_draft"


class TestSglangCommand:
    def test_a_chain_of_gamma_drafts(self):
        command = sglang.sglang_command(SCENARIO, 4)
        # SGLang keeps 13.7 GB of each 80 GiB GPU for activations and graphs: 200 sequences fit.
        assert command.line == ("python -m sglang.launch_server --model-path Qwen/Qwen3-32B --tp 2 "
                                "--max-running-requests 200 --context-length 1024 --chunked-prefill-size 8192 "
                                "--speculative-algorithm STANDALONE --speculative-draft-model-path Qwen/Qwen3-0.6B "
                                "--speculative-num-steps 4 --speculative-eagle-topk 1 --speculative-num-draft-tokens 5")

    def test_adaptive_tiers_for_eagle(self):
        eagle3 = replace(SCENARIO, draft=step.Draft("eagle3"))
        schedule = draft_length.gamma_schedule(eagle3, 0.8, 1024, 1024, 8)
        command = sglang.sglang_command(eagle3, 8, schedule=schedule, draft_repo="org/head")
        tiers = json.loads(command.files["adaptive_tiers.json"])
        assert list(tiers) == [str(f) for f in schedule["first"]]
        assert [t["candidate_steps"] for t in tiers.values()] == [[g] for g in schedule["gamma"]]
        assert command.argv[-3:] == ["--speculative-adaptive", "--speculative-adaptive-config", "adaptive_tiers.json"]
        steps = int(command.argv[command.argv.index("--speculative-num-steps") + 1])
        assert steps == schedule["gamma"].max()
        assert command.argv[command.argv.index("--speculative-num-draft-tokens") + 1] == str(steps + 1)
        model = sglang.sglang_command(SCENARIO, 4, schedule=schedule)
        assert not model.files and keys(model) == ["command.sglang_tiers_eagle_only"]

    def test_mtp_runs_as_eagle_without_a_draft(self):
        command = sglang.sglang_command(WITH_MTP, 1, method="mtp")
        assert command.line == ("python -m sglang.launch_server --model-path Qwen/Qwen3-32B --tp 2 "
                                "--max-running-requests 200 --context-length 1024 --chunked-prefill-size 8192 "
                                "--speculative-algorithm EAGLE --speculative-num-steps 1 --speculative-eagle-topk 1 "
                                "--speculative-num-draft-tokens 2")
        # 200 at its 1 draft and at the scenario's 4 (SGLang's reserve leaves room for both): nothing to say.
        assert keys(command) == ["command.mtp_layers"]
        # SGLang renames MTP to EAGLE before it checks adaptive tiers, so MTP takes them too.
        schedule = draft_length.gamma_schedule(SCENARIO, 0.8, 1024, 1024, 8)
        tiered = sglang.sglang_command(WITH_MTP, 1, method="mtp", schedule=schedule)
        # Its tiers draft 7 at most, where SGLang holds 199, one fewer than at γ 4: said.
        assert "adaptive_tiers.json" in tiered.files
        assert keys(tiered) == ["command.mtp_layers", "command.drafted_batch", "command.sglang_tiers"]

    def test_no_tiers_where_no_draft_length_gains(self):
        # --speculative-num-steps must be one of the tiers' steps: all 0 would not start.
        off = pd.DataFrame({"first": [1, 64], "last": [63, 1024], "gamma": [0, 0]})
        command = sglang.sglang_command(replace(SCENARIO, draft=step.Draft("eagle")), 3, schedule=off,
                                             draft_repo="org/eagle")
        assert not command.files and "--speculative-adaptive" not in command.argv
        assert keys(command) == ["command.schedule_all_off"]
        assert command.argv[command.argv.index("--speculative-num-steps") + 1] == "3"

    @pytest.mark.parametrize("method", ["suffix", "medusa", "mlp_speculator"])
    def test_methods_sglang_does_not_have(self, method):
        with pytest.raises(SpecvizError) as raised:
            sglang.sglang_command(SCENARIO, 2, method=method)
        assert raised.value.key == "command.not_in_engine" and raised.value.params["engine"] == "SGLang"

    def test_a_draft_to_name_names_sglang(self):
        command = sglang.sglang_command(replace(SCENARIO, draft=step.Draft("eagle3")), 4)
        assert [(p.key, p.params["engine"]) for p in command.problems] == [("command.name_the_draft", "SGLang")]
        assert "<EAGLE-3 head for Qwen3-32B>" in command.argv

    @pytest.mark.parametrize("model_type", ["llama", "mistral", "qwen2", "qwen3", "qwen2_moe", "qwen3_moe", "mixtral",
                                            "deepseek_v3", "kimi_k2", "gpt_oss", "llama4_text", "qwen3_next", "glm4_moe"])
    def test_sglang_eagle3_where_the_target_captures_hidden_states(self, model_type):
        eagle3 = replace(SCENARIO, target=replace(SCENARIO.target, model_type=model_type), draft=step.Draft("eagle3"))
        if model_type == "mixtral":
            with pytest.raises(SpecvizError) as raised:
                sglang.sglang_command(eagle3, 4, draft_repo="org/h")
            assert raised.value.key == "command.sglang_eagle3_target"
        else:
            assert "EAGLE3" in sglang.sglang_command(eagle3, 4, draft_repo="org/h").argv


class TestParallelFlags:
    """Data-parallel attention and expert parallelism in each engine's command (the module's facts:
    vLLM's arg_utils.py of 0.7.3 to 0.33.0, SGLang's server_args.py and arg_groups of 0.5.5 to 0.5.23)."""

    DEEPSEEK = make_scenario(target="DeepSeek-V3", gpu="H200", tp="1", dp="8", ep="on")

    def test_vllm_data_parallel_attention_with_expert_parallelism(self):
        command = vllm_config.vllm_command(self.DEEPSEEK, "0.33.0", 3)
        line = command.line
        assert "--data-parallel-size 8" in line and "--enable-expert-parallel" in line
        assert "--tensor-parallel-size" not in line and config_of(command)["method"] == "mtp"
        assert not command.problems and "command.multi_node_vllm_dp" not in keys(command)

    def test_vllm_releases_before_the_flags(self):
        eagle = replace(self.DEEPSEEK, draft=step.Draft("eagle"))
        before_dp = vllm_config.vllm_command(eagle, "0.8.2", 3, draft_repo="org/h")
        assert [(p.key, p.params["since"]) for p in before_dp.problems] == [("command.dp_since", "0.8.3")]
        assert "--data-parallel-size" not in before_dp.argv and "--enable-expert-parallel" in before_dp.argv
        before_ep = vllm_config.vllm_command(eagle, "0.7.3", 3, draft_repo="org/h")
        assert {p.key for p in before_ep.problems} == {"command.dp_since", "command.ep_since"}
        assert "--enable-expert-parallel" not in before_ep.argv

    def test_vllm_no_data_parallelism_on_the_v0_engine(self):
        # 0.9.2 runs a draft model on V0, which has no data parallelism.
        drafted = replace(self.DEEPSEEK, draft=step.Draft("model", SCENARIO.draft.model))
        command = vllm_config.vllm_command(drafted, "0.9.2", 3, draft_repo="org/d")
        assert [p.key for p in command.problems] == ["command.dp_v0"] and "--data-parallel-size" not in command.argv

    def test_vllm_schedule_left_out_with_data_parallelism(self):
        schedule = draft_length.gamma_schedule(self.DEEPSEEK, 0.8, 1024, 64, 6)
        command = serving.serve_command(self.DEEPSEEK, schedule, 3, 8)
        assert "num_speculative_tokens_per_batch_size" not in config_of(command)
        assert "command.schedule_dp" in keys(command) and "command.disable_removed" not in keys(command)

    def test_vllm_across_hosts(self):
        two_nodes = make_scenario(target="DeepSeek-V3", gpu="H100-SXM")
        assert (two_nodes.tp, two_nodes.dp, two_nodes.ep) == (8, 2, True)
        command = vllm_config.vllm_command(two_nodes, "0.33.0", 3)
        notice = next(n for n in command.notices if n.key == "command.multi_node_vllm_dp")
        assert notice.params == {"devices": 16, "hosts": 2, "per_host": 8}
        # An NVL72 rack's hosts are compute trays of 4 GPUs; tensor parallelism of 8 spans two.
        rack = vllm_config.vllm_command(make_scenario(target="DeepSeek-V3", gpu="GB200", tp="8", dp="1"), "0.33.0", 3)
        assert [(n.params["tp"], n.params["hosts"]) for n in rack.notices if n.key == "command.multi_node_vllm_tp"] \
            == [(8, 2)]

    def test_sglang_counts_every_gpu_in_tp(self):
        command = sglang.sglang_command(self.DEEPSEEK, 3)
        flags = dict(zip(command.argv, command.argv[1:]))
        assert (flags["--tp"], flags["--attn-dp-size"], flags["--ep-size"]) == ("8", "8", "8")
        assert "command.sglang_attn_dp" in keys(command)
        # A dense target's data parallelism is replicas.
        dense = sglang.sglang_command(replace(SCENARIO, dp=2), 3)
        flags = dict(zip(dense.argv, dense.argv[1:]))
        assert (flags["--tp"], flags["--dp-size"]) == ("2", "2") and "--attn-dp-size" not in dense.argv

    def test_sglang_tiers_are_per_rank(self):
        # Each of 8 ranks picks its tier by its own batch: the server's batch 64 is a rank's 8.
        schedule = pd.DataFrame({"first": [1, 4, 16, 64, 200], "last": [3, 15, 63, 199, 512],
                                 "gamma": [4, 3, 2, 1, 0]})
        assert sglang.rank_tiers(schedule, 1) == {str(f): {"candidate_steps": [g]}
                                                        for f, g in [(1, 4), (4, 3), (16, 2), (64, 1), (200, 0)]}
        # By hand: keys ⌈1/8⌉=1, ⌈4/8⌉=1, ⌈16/8⌉=2, ⌈64/8⌉=8, ⌈200/8⌉=25; key 1 is the server's 8
        # (the row from 4: γ 3), key 2 its 16 (γ 2), key 8 its 64 (γ 1), key 25 its 200 (γ 0).
        assert sglang.rank_tiers(schedule, 8) == {"1": {"candidate_steps": [3]}, "2": {"candidate_steps": [2]},
                                                        "8": {"candidate_steps": [1]}, "25": {"candidate_steps": [0]}}
        # Eight replicas of a dense target (--dp-size): each its own server's tiers.
        replicas = make_scenario(target="Llama-3.1-8B", draft="eagle3", tp="1", dp="8")
        command = sglang.sglang_command(replicas, 3, schedule=schedule)
        assert json.loads(command.files["adaptive_tiers.json"]) == sglang.rank_tiers(schedule, 8)
        assert next(n for n in command.notices if n.key == "command.sglang_tiers_per_rank").params == {"dp": 8}
        # --speculative-num-steps must be one of the tiers' steps: their longest, 3, not the schedule's 4
        # at the server's batches 1-3, which no rank's key holds (Llama 4 Maverick on 16 H100s: 8, tiers to 7).
        steps = command.argv[command.argv.index("--speculative-num-steps") + 1]
        assert steps == "3" and command.argv[command.argv.index("--speculative-num-draft-tokens") + 1] == "4"

    def test_sglang_writes_no_tiers_with_data_parallel_attention(self):
        """SGLang 0.5.23 turns adaptive tiers off with data-parallel attention ("adaptive tier decisions
        are not synchronized across DP ranks", adaptive_spec_params.py) and drafts its steps throughout:
        the command had written tiers for DeepSeek-V3 + MTP over 8 attention groups (a flags review)."""
        schedule = pd.DataFrame({"first": [1, 4, 16, 64, 200], "last": [3, 15, 63, 199, 512],
                                 "gamma": [4, 3, 2, 1, 0]})
        command = sglang.sglang_command(self.DEEPSEEK, 3, schedule=schedule, method="mtp")
        assert not command.files and "--speculative-adaptive" not in command.argv and "--attn-dp-size" in command.argv
        assert next(n for n in command.notices if n.key == "command.sglang_tiers_attn_dp").params == {"dp": 8, "steps": 3}
        assert not [n for n in command.notices if n.key == "command.sglang_tiers_per_rank"]
        assert command.argv[command.argv.index("--speculative-num-steps") + 1] == "3"


class TestPerRankBatch:
    def test_a_per_rank_limit_is_said_to_be_one(self):
        """DeepSeek-V3 + MTP on 8 H200s as 8 attention ranks: the page says 1,199 sequences fit, the
        command --max-num-seqs 149, with no word that it is each rank's. Now a notice says so, in
        vLLM's and TensorRT-LLM's commands; SGLang's flag is the server's and gets none."""
        deepseek = make_scenario(target="DeepSeek-V3", gpu="H200", precision="fp8", tp="1", dp="8", ep="on",
                                 batch="256", context="4096")
        limit = deepseek.max_batch()
        command = vllm_config.vllm_command(deepseek, "0.33.0", 4)
        flags = dict(zip(command.argv, command.argv[1:]))
        (said,) = [n for n in command.notices if n.key == "command.per_rank_batch"]
        assert flags["--max-num-seqs"] == str(limit // 8) == str(said.params["per_rank"])
        assert (said.params["ranks"], said.params["limit"], said.params["engine"]) == (8, limit, "vLLM")
        assert "holds for each of the 8 data-parallel ranks" in str(said)
        trt = trtllm.trtllm_command(deepseek, "1.2.1", 4)
        assert [n.params["flag"] for n in trt.notices if n.key == "command.per_rank_batch"] == ["--max_batch_size"]
        launched = sglang.sglang_command(deepseek, 4)
        assert not [n for n in launched.notices if n.key == "command.per_rank_batch"]
        one = vllm_config.vllm_command(make_scenario(), "0.33.0", 4)  # one rank: nothing to say
        assert not [n for n in one.notices if n.key == "command.per_rank_batch"]

    def test_a_limit_past_what_a_command_states_is_not_called_the_memory_s(self):
        """DeepSeek-V3 + MTP on GB200s as 9 ranks of 8: the memory holds more than the 16,384 a command
        states at most; the note had said "of the 16,384 the memory holds" beside the page's 19,404 (an
        engineer's pass). Now it says the command's bound, and what the memory holds."""
        fleet = make_scenario(target="DeepSeek-V3", gpu="GB200", draft="mtp", precision="fp8", tp="8", dp="9", ep="on")
        command = vllm_config.vllm_command(fleet, "0.33.0", 2)
        (capped,) = [n for n in command.notices if n.key == "command.batch_capped"]
        assert capped.params["limit"] == 16_384 and capped.params["held"] > 16_384
        assert str(capped).startswith(f"The memory holds {capped.params['held']:,} sequences with the draft as vLLM divides it")
        (said,) = [n for n in command.notices if n.key == "command.per_rank_batch_capped"]
        assert str(said).endswith("of the 16,384 the command states at most.")
        assert not [n for n in command.notices if n.key == "command.per_rank_batch"]


class TestMemoryFlags:
    """The flags that hold each server to what its memory fits (specviz.model.memory)."""

    def test_sized_at_the_longest_draft_the_server_allocates(self):
        """A hybrid keeps a linear-attention state for each position a verify pass may roll back to,
        and the server allocates them for its longest draft: Qwen3.5-397B-A17B on 8 H200s holds 479
        sequences at the page's γ 4 and 326 at the 7 its schedule drafts at batches 25-68, which
        vLLM's num_speculative_tokens and SGLang's --speculative-num-steps are; the commands state
        326 (they stated 479)."""
        qwen = make_scenario(target="Qwen3.5-397B-A17B", gpu="H200")
        schedule = draft_length.gamma_schedule(qwen, 0.8, 1024, 1024, 16)
        assert (qwen.max_batch(), int(schedule["gamma"].max()), replace(qwen, gamma=7).max_batch()) == (479, 7, 326)
        vllm = vllm_config.vllm_command(qwen, "0.33.0", 4, schedule=schedule)
        config = json.loads(vllm.argv[-1])
        assert config["num_speculative_tokens"] == 7 and vllm.argv[vllm.argv.index("--max-num-seqs") + 1] == "326"
        launched = sglang.sglang_command(qwen, 4, schedule=schedule)
        sized = replace(qwen, gamma=7, engine=replace(qwen.engine, memory=PRESETS.engines["sglang"].memory))
        assert launched.argv[launched.argv.index("--speculative-num-steps") + 1] == "7"
        assert launched.argv[launched.argv.index("--max-running-requests") + 1] == str(sized.max_batch())

    def test_vllm_per_data_parallel_rank_and_sglang_over_all(self):
        deepseek = make_scenario(target="DeepSeek-V3", gpu="H200", tp="1", dp="8", ep="on", gamma="3")
        flags = lambda command: dict(zip(command.argv, command.argv[1:]))
        vllm = flags(vllm_config.vllm_command(deepseek, "0.33.0", 3))
        assert int(vllm["--max-num-seqs"]) == deepseek.max_batch() // 8 and vllm["--gpu-memory-utilization"] == "0.92"
        launched = flags(sglang.sglang_command(deepseek, 3))
        sized = replace(deepseek, engine=replace(deepseek.engine, memory=PRESETS.engines["sglang"].memory))
        # SGLang's own rule (its reserve over all the GPUs), not vLLM's share of each.
        assert int(launched["--max-running-requests"]) == sized.max_batch() != deepseek.max_batch()

    def test_a_schedule_past_the_limit_and_a_batch_that_does_not_fit(self):
        long = make_scenario(target="Qwen3-32B", draft="Qwen3-0.6B", gpu="H100-SXM", tp="2", context="4096", batch="64")
        schedule = draft_length.gamma_schedule(long, 0.8, 4096, 1024, 8)
        assert schedule["last"].iloc[-1] == long.max_batch() == 57
        advice = draft_length.advise(long, 0.8, 4, 64, schedule)
        # With the γ whose room it is: the schedule's longest draft (7), not the page's (4).
        assert advice[0].key == "advice.batch_no_fit" and advice[0].params == {"batch": 64, "limit": 57, "gamma": 7}
        command = serving.serve_command(long, schedule, 4, 64)
        assert dict(zip(command.argv, command.argv[1:]))["--max-num-seqs"] == "57"

    def test_a_batch_the_page_s_gamma_holds_past_the_schedule_s_end_is_said_to_fit_there(self):
        """Qwen3-Next + MTP on one B200 (NVFP4, FP8 cache, 32k): at γ 2 the memory holds 234 sequences, at the
        schedule's longest draft (5) 192. Batch 200 had read "does not fit" beside the calculator's 1.62×,
        and beside a command of one draft length that holds it (a consistency pass)."""
        qwen = make_scenario(gpu="B200", target="Qwen3-Next-80B-A3B", draft="mtp", precision="nvfp4", kv="fp8",
                             alpha="0.8", gamma="2", batch="200", context="32768")
        schedule = draft_length.gamma_schedule(qwen, 0.8, 32768, 1024, 16, "vllm")
        assert (schedule["last"].iloc[-1], schedule["gamma"].max(), qwen.max_batch()) == (192, 5, 234)
        (said, *_) = draft_length.advise(qwen, 0.8, 2, 200, schedule, "vllm")
        assert said.key == "advice.batch_past_schedule"
        assert said.params == {"batch": 200, "limit": 192, "gamma": 5, "own_gamma": 2, "own_limit": 234}
        one = serving.serve_command(qwen, schedule, 2, 200, by_load=False)
        assert dict(zip(one.argv, one.argv[1:]))["--max-num-seqs"] == "234"
        # Past what γ 2 holds too, it does not fit.
        assert draft_length.advise(qwen, 0.8, 2, 235, schedule, "vllm")[0].key == "advice.batch_no_fit"
        # A command of one draft length holds what its γ holds: γ 8 holds 164, so batch 192, within the
        # schedule, does not fit it (an attack pass: "γ 4 is best at batch 192" beside --max-num-seqs 164).
        one = draft_length.advise(qwen, 0.8, 8, 192, schedule, "vllm", by_load=False)
        assert (one[0].key, one[0].params) == ("advice.batch_no_fit_gamma", {"batch": 192, "gamma": 8, "limit": 164})
        assert one[1].key == "advice.best_gamma"
        by_load = draft_length.advise(qwen, 0.8, 8, 192, schedule, "vllm")[0]  # by load: fits
        assert by_load.key == "advice.best_gamma"
        # With the band the calculator gives the same speedup (a browser pass: the Deploy view's had none).
        low, high = calculator.speedup_band(qwen, 0.8, by_load.params["gamma"], 192, qwen.context)
        assert (by_load.params["low"], by_load.params["high"]) == (float(low), float(high))
        assert by_load.params["low"] < by_load.params["speedup"] < by_load.params["high"]
        (past, *_) = draft_length.advise(qwen, 0.8, 8, 235, schedule, "vllm", by_load=False)
        assert past.key == "advice.batch_no_fit_gamma" and past.params["limit"] == 164

    def test_nothing_fits_is_a_problem_not_a_flag(self):
        crowded = make_scenario(target="Llama-3.1-70B", draft="eagle3", gpu="H100-SXM", tp="1")
        command = vllm_config.vllm_command(crowded, "0.33.0", 3, draft_repo="org/h")
        assert [p.key for p in command.problems] == ["command.no_fit"] and "--max-num-seqs" not in command.argv


class TestDraftKindsInCommands:
    """The scenario's draft kinds of 2026 as each engine names them."""

    def test_mtp_p_eagle_and_block_drafts_in_vllm(self):
        deepseek = make_scenario(target="DeepSeek-V3", gpu="H200", tp="8", dp="1", ep="off")
        assert deepseek.draft_id == "mtp"
        assert config_of(vllm_config.vllm_command(deepseek, "0.33.0", 3))["method"] == "mtp"
        peagle = vllm_config.vllm_command(make_scenario(target="gpt-oss-120b", gpu="B200", draft="peagle"), "0.33.0", 3)
        assert config_of(peagle)["method"] == "eagle3" and config_of(peagle)["parallel_drafting"] is True
        assert "<P-EAGLE head for" in config_of(peagle)["model"]
        with pytest.raises(SpecvizError) as raised:
            vllm_config.vllm_command(make_scenario(target="gpt-oss-120b", gpu="B200", draft="peagle"), "0.11.1", 3)
        assert raised.value.params == {"engine": "vLLM", "method": "parallel_drafting", "version": "0.11.1", "since": "0.16.0"}
        block = replace(SCENARIO, draft=step.Draft("block", SCENARIO.draft.model))
        assert config_of(vllm_config.vllm_command(block, "0.20.0", 7, draft_repo="org/dflash"))["method"] == "dflash"
        with pytest.raises(SpecvizError) as raised:
            vllm_config.vllm_command(block, "0.18.0", 7, draft_repo="org/dflash")
        assert raised.value.key == "command.method_unknown" and raised.value.params["since"] == "0.20.0"

    def test_block_drafts_in_sglang_are_one_window(self):
        block = replace(SCENARIO, draft=step.Draft("block", SCENARIO.draft.model))
        command = sglang.sglang_command(block, 7, draft_repo="org/dflash")
        flags = dict(zip(command.argv, command.argv[1:]))
        assert flags["--speculative-algorithm"] == "DFLASH" and flags["--speculative-num-draft-tokens"] == "8"
        assert "--speculative-num-steps" not in command.argv and "command.sglang_since" in keys(command)
        with pytest.raises(SpecvizError) as raised:
            sglang.sglang_command(make_scenario(target="gpt-oss-120b", gpu="B200", draft="peagle"), 3)
        assert raised.value.key == "command.not_in_engine"


class TestServeCommand:
    def test_by_load_the_schedule_or_the_best_gamma_here(self):
        schedule = draft_length.gamma_schedule(SCENARIO, 0.8, 1024, 1024, 8)
        newest = serving.serve_command(SCENARIO, schedule, 4, 64)
        assert config_of(newest)["num_speculative_tokens_per_batch_size"][0][0] == 1
        here = int(schedule[(schedule["first"] <= 64) & (schedule["last"] >= 64)]["gamma"].iloc[0])
        older = serving.serve_command(SCENARIO, schedule, 4, 64, version="0.17.0")
        assert config_of(older)["num_speculative_tokens"] == here != 4

    def test_a_scenario_on_vllm_v0_gets_a_release_that_serves_on_v0(self):
        """vLLM V0's costs are served by the newest release before V1 became the default (0.8.0), not by
        0.33.0, which has no V0 and writes a per-batch schedule V0 never read."""
        on_v0 = make_scenario(engine="vllm-v0")
        assert serving.default_version("vllm", on_v0) == "0.7.3" == vllm_config.vllm_default_version("vllm-v0")
        assert serving.default_version("vllm", SCENARIO) == "0.33.0"
        assert serving.default_version("trtllm", on_v0) == "1.2.1" and serving.default_version("sglang", on_v0) is None
        schedule = draft_length.gamma_schedule(on_v0, 0.8, 1024, 1024, 8)
        command = serving.serve_command(on_v0, schedule, 4, 64)
        assert command.argv[command.argv.index("--speculative-model") + 1] == "Qwen/Qwen3-0.6B"
        assert "--speculative-config" not in command.argv and "num_speculative_tokens_per_batch_size" not in command.line
        assert "command.no_schedule" in keys(command)
        chosen = serving.serve_command(on_v0, schedule, 4, 64, version="0.33.0")  # a release chosen is kept
        assert "num_speculative_tokens_per_batch_size" in config_of(chosen)

    def test_one_length_for_a_method_the_schedule_is_not_for(self):
        schedule = draft_length.gamma_schedule(SCENARIO, 0.8, 1024, 1024, 8)
        suffix = serving.serve_command(SCENARIO, schedule, 4, 64, method="suffix")
        assert config_of(suffix) == {"method": "suffix", "num_speculative_tokens": 4}
        sglang = serving.serve_command(SCENARIO, schedule, 4, 64, engine="sglang", by_load=False)
        assert sglang.argv[sglang.argv.index("--speculative-num-steps") + 1] == "4"

    def test_a_suffix_schedule_is_left_out_where_vllm_drops_it(self):
        """vLLM 0.33.0 runs suffix decoding on its V1 model runner, which drops
        num_speculative_tokens_per_batch_size for it (config/vllm.py, _maybe_disable_dynamic_sd_for_v1);
        0.24.0 applied it. The command had written it without a word (a flags review)."""
        suffix = make_scenario(target="Qwen3-32B", draft="suffix", tp="2", alpha="0.5", gamma="4", batch="16",
                               context="4096")
        schedule = draft_length.gamma_schedule(suffix, 0.5, 4096, 1024, 8)
        here = int(schedule[(schedule["first"] <= 16) & (schedule["last"] >= 16)]["gamma"].iloc[0])
        newest = serving.serve_command(suffix, schedule, 4, 16)
        assert config_of(newest) == {"method": "suffix", "num_speculative_tokens": here}
        assert next(n for n in newest.notices if n.key == "command.schedule_suffix").params == {
            "version": "0.33.0", "gamma": here}
        older = serving.serve_command(suffix, schedule, 4, 16, version="0.24.0")
        assert "num_speculative_tokens_per_batch_size" in config_of(older) and "command.schedule_suffix" not in keys(older)

    def test_a_one_length_command_says_where_its_length_stops_gaining(self):
        """A command that drafts one length throughout (SGLang's n-gram, vLLM 0.18.0) had only the
        schedule's "turn off from 437" beside it, where its own length loses from 205 (an engineer's
        pass). By hand from the step model: γ 3 gains at 204 and loses at every batch from 205."""
        small = make_scenario(target="gpt-oss-20b", draft="ngram", tp="1", alpha="0.6", gamma="3", batch="64",
                              context="256", kv="fp8")
        for engine, version, flag in (("sglang", None, "--max-running-requests"), ("vllm", "0.18.0", "--max-num-seqs")):
            schedule = draft_length.gamma_schedule(small, 0.6, 256, 1024, 16, engine)
            command = serving.serve_command(small, schedule, 3, 64, engine=engine, version=version)
            said = next(n for n in command.notices if n.key == "command.one_length_off_later")
            assert said.params == {"gamma": 3, "batch": 205, "schedule_off": draft_length.stays_off_from(schedule),
                                   "flag": flag}
            speed = calculator.evaluate_scenario(small, 0.6, 3, np.arange(1, int(schedule["last"].iloc[-1]) + 1),
                                                 256)["speedup"]
            assert speed[203] >= 1 and (speed[204:] < 1).all()
        # By batch (vLLM 0.33.0 writes the schedule), nothing to say.
        schedule = draft_length.gamma_schedule(small, 0.6, 256, 1024, 16, "vllm")
        assert not [n for n in serving.serve_command(small, schedule, 3, 64).notices if n.key.startswith("command.one_length")]

    def test_max_num_seqs_stays_within_vllm_s_token_budget(self):
        """vLLM refuses to start where --max-num-seqs passes --max-num-batched-tokens ("must be greater
        than or equal to max_num_seqs", config/scheduler.py, 0.24.0 and 0.33.0): gpt-oss-20b on one
        H100 with an FP8 cache holds 13,320 sequences of 256 positions, and the command had stated them
        against a default budget of 8,192 (a flags review). It states 8,192 and says why; its schedule
        ends there."""
        small = make_scenario(target="gpt-oss-20b", draft="ngram", tp="1", alpha="0.6", gamma="3", batch="64",
                              context="256", kv="fp8")
        schedule = draft_length.gamma_schedule(small, 0.6, 256, 1024, 8)
        command = serving.serve_command(small, schedule, 3, 64)
        flags = dict(zip(command.argv, command.argv[1:]))
        assert flags["--max-num-seqs"] == "8192" and "--max-num-batched-tokens" not in flags
        said = next(n for n in command.notices if n.key == "command.seqs_budget_schedule")
        assert said.params == {"flag": "--max-num-seqs", "most": 8192, "held": replace(small, gamma=5).max_batch()} \
            and said.params["held"] == 13_320
        assert config_of(command)["num_speculative_tokens_per_batch_size"][-1][1] == 8192
        within = serving.serve_command(SCENARIO, draft_length.gamma_schedule(SCENARIO, 0.8, 1024, 1024, 8), 4, 64)
        assert not {"command.seqs_budget", "command.seqs_budget_schedule"} & set(keys(within))
        # Without a schedule (0.18.0 has none), γ 3 throughout: a step of 2,048 tokens (its H100 budget)
        # steps 2,048 / 4 = 512 sequences whole, and the command states them.
        older = serving.serve_command(small, schedule, 3, 64, version="0.18.0")
        said = next(n for n in older.notices if n.key == "command.seqs_spec_budget")
        assert said.params == {"flag": "--max-num-seqs", "most": 512, "held": 13_389, "budget": 2048, "over": 513,
                               "gamma": 3, "slots": 0, "count": 2048, "needed": 2048 * 4}
        assert dict(zip(older.argv, older.argv[1:]))["--max-num-seqs"] == "512"
        assert not {"command.seqs_budget", "command.seqs_budget_schedule"} & set(keys(older))

    @pytest.mark.parametrize("gpu, version, most", [
        ("H100-SXM", "0.33.0", 8192), ("A100-80GB", "0.33.0", 2048), ("A100-80GB", "0.24.0", 2048),
        ("B200", "0.33.0", 16_384), ("B200", "0.24.0", 8192), ("B200", "0.17.0", 2048), ("H100-SXM", "0.7.3", 2048)])
    def test_the_token_budget_is_the_release_s_and_the_gpu_s(self, gpu, version, most):
        """vllm serve's default budget a step (engine/arg_utils.py, get_batch_defaults): an A100 keeps
        2,048 whatever its memory, 160 GiB gets 16,384 in 0.33.0 and 8,192 in 0.24.0, V0 (0.7.3) the
        longest request or 2,048, and releases not read the smallest (a review: the cap had taken
        0.33.0's H100 tier everywhere, and vLLM would still refuse an A100's 8,192). γ 3 throughout:
        V1 steps a quarter of its budget whole, and the command states that many; V0 the budget."""
        small = make_scenario(target="gpt-oss-20b", draft="ngram", gpu=gpu, tp="1", alpha="0.6", gamma="3",
                              batch="64", context="256", kv="fp8")
        assert vllm_config.vllm_most_seqs(small, version) == most
        command = vllm_config.vllm_command(small, version, 3)
        flags = dict(zip(command.argv, command.argv[1:]))
        stated = most if version == "0.7.3" else most // 4
        assert flags["--max-num-seqs"] == str(stated) and small.max_batch() > most
        said = {n.key: n.params["most"] for n in command.notices if n.key.startswith("command.seqs_")}
        assert said == ({"command.seqs_budget": most} if version == "0.7.3" else {"command.seqs_spec_budget": stated})

    def test_every_sequence_the_command_states_steps_whole(self):
        """memory_flags.step_tokens by hand: lengths 4, 4, 2, 2, 2, 0 … at
        batches 1 to 6 need 5, 10, 10, 12, 15, 15 tokens and 6 … (the most so far), plus 3 slots a
        sequence for a parallel drafter of 4: 8, 16, 19, 24, 30, 33."""
        lengths = np.array([4, 4, 2, 2, 2, 0, 0])
        assert memory_flags.step_tokens(lengths, 0).tolist() == [5, 10, 10, 12, 15, 15, 15]
        assert memory_flags.step_tokens(lengths, 3).tolist() == [8, 16, 19, 24, 30, 33, 36]
        # The slots follow num_speculative_tokens (config/speculative.py, 0.24.0 and 0.33.0).
        slots = vllm_config.vllm_drafter_slots
        assert (slots("eagle3", True, 7, "0.33.0"), slots("draft_model", False, 5, "0.24.0"),
                slots("dflash", False, 7, "0.24.0"), slots("dflash", False, 7, "0.33.0"),
                slots("eagle3", False, 7, "0.33.0"), slots("ngram", False, 3, "0.24.0")) == (6, 1, 6, 0, 0, 0)

    def test_a_parallel_drafter_s_slots_keep_vllm_starting(self):
        """vLLM 0.24.0 takes num_speculative_tokens − 1 slots a sequence of P-EAGLE off its budget for
        every --max-num-seqs before any request (_set_max_num_scheduled_tokens) and refuses to start
        where none is left: the command had stated 8,192 sequences of gpt-oss-20b on one B200 drafting
        up to 13, where 8,192 − 12 × 8,192 < 0. It states the most whose step fits whole, by hand from
        its schedule below."""
        peagle = make_scenario(target="gpt-oss-20b", gpu="B200", draft="peagle", gamma="7", batch="64",
                               context="1024", kv="fp8")
        schedule = pd.DataFrame({"first": [1, 2, 96, 166, 225], "last": [1, 95, 165, 224, 9000],
                                 "gamma": [12, 13, 3, 2, 0]})
        command = vllm_config.vllm_command(peagle, "0.24.0", 13, schedule=schedule)
        assert config_of(command)["num_speculative_tokens"] == 13
        stated = int(dict(zip(command.argv, command.argv[1:]))["--max-num-seqs"])
        # batch 95 at γ 13 needs 1,330 tokens: 8,192 − 1,330 = 6,862 for 12 slots each, 571 sequences.
        assert stated == (8192 - 95 * 14) // 12 == 571
        said = next(n for n in command.notices if n.key == "command.seqs_spec_budget_slots")
        assert said.params["slots"] == 12 and said.params["most"] == 571 and said.params["over"] == 572
        assert config_of(command)["num_speculative_tokens_per_batch_size"][-1] == [225, 571, 0]
        # One length of 7 in 0.18.0 (no schedule), whose budget on a B200 is 2,048: 2,048 // (7 + 1 + 6).
        older = vllm_config.vllm_command(peagle, "0.18.0", 7)
        assert dict(zip(older.argv, older.argv[1:]))["--max-num-seqs"] == str(2048 // 14) == "146"


class TestTrtllmCommand:
    """trtllm-serve and its options file, per release (specviz.advice.trtllm's facts)."""

    SCHEDULE = pd.DataFrame({"first": [1, 6, 16, 111], "last": [5, 15, 110, 200], "gamma": [5, 4, 3, 0]})

    @staticmethod
    def on_trtllm(chosen):
        """The scenario under TensorRT-LLM's memory rule, which its command is sized by."""
        return replace(chosen, engine=replace(chosen.engine, memory=PRESETS.engines["trt-llm"].memory))

    def test_max_batch_size_steps_whole_within_max_num_tokens(self):
        """TensorRT-LLM's iteration counts a generation request's token and its draft tokens in
        --max_num_tokens (8,192 written) and leaves the rest out past it: gpt-oss-20b + n-gram on one
        H100 with an FP8 cache holds 12,856 sequences of 256 positions there, and at 3 drafts 8,192 / 4
        = 2,048 step as one, which the command states and says."""
        small = self.on_trtllm(make_scenario(target="gpt-oss-20b", draft="ngram", tp="1", alpha="0.6", gamma="3",
                                             batch="64", context="256", kv="fp8"))
        command = trtllm.trtllm_command(small, "1.2.1", 3)
        flags = dict(zip(command.argv, command.argv[1:]))
        assert flags["--max_batch_size"] == "2048" and flags["--max_num_tokens"] == "8192"
        (said,) = [n for n in command.notices if n.key == "command.trtllm_seqs_budget"]
        assert said.params == {"flag": "--max_batch_size", "most": 2048, "held": small.max_batch(), "budget": 8192,
                               "gamma": 3, "over": 2049, "needed": small.max_batch() * 4}
        assert small.max_batch() == 12_856
        # Where the memory holds fewer, nothing is capped or said.
        assert not [n for n in trtllm.trtllm_command(SCENARIO, "1.2.1", 4).notices
                    if n.key == "command.trtllm_seqs_budget"]

    def test_a_draft_model_with_its_schedule_in_1_2(self):
        command = trtllm.trtllm_command(SCENARIO, "1.2.1", 4, schedule=self.SCHEDULE)
        # TensorRT-LLM's 0.9 of each GPU holds fewer sequences than vLLM's 0.92.
        limit = self.on_trtllm(SCENARIO).max_batch()
        assert limit < SCENARIO.max_batch()
        assert command.line == ("trtllm-serve Qwen/Qwen3-32B --backend pytorch --tp_size 2 "
                                f"--max_batch_size {limit} --max_seq_len 1024 --max_num_tokens 8192 --kv_cache_free_gpu_memory_fraction 0.9 "
                                "--extra_llm_api_options extra_llm_api_options.yaml")
        assert command.files == {"extra_llm_api_options.yaml": (
            "speculative_config:\n"
            "  decoding_type: \"DraftTarget\"\n"
            "  max_draft_len: 5\n"
            "  speculative_model: \"Qwen/Qwen3-0.6B\"\n"
            "  draft_len_schedule:\n"
            "    1: 5\n    6: 4\n    16: 3\n    111: 0\n")}
        assert keys(command) == ["command.trtllm_schedule_lower"] and not command.problems

    def test_one_schedule_two_meanings(self):
        # 1.2: the largest key at or below the batch (key 1 holds max_draft_len); 1.3: the
        # smallest key at or above it, nothing drafted past the largest.
        assert trtllm.draft_len_schedule(self.SCHEDULE, vllm_config.parse_release("1.2.0")) == \
            {1: 5, 6: 4, 16: 3, 111: 0}
        assert trtllm.draft_len_schedule(self.SCHEDULE, vllm_config.parse_release("1.3.0rc8")) == \
            {5: 5, 15: 4, 110: 3}
        # Off, then on again, has no 1.3 form; a longest draft past the first batch has neither.
        again = pd.DataFrame({"first": [1, 6, 16], "last": [5, 15, 40], "gamma": [3, 0, 2]})
        assert trtllm.draft_len_schedule(again, vllm_config.parse_release("1.3.0rc8")) is None
        rising = pd.DataFrame({"first": [1, 2], "last": [1, 9], "gamma": [2, 3]})
        assert trtllm.draft_len_schedule(rising, vllm_config.parse_release("1.2.1")) is None
        command = trtllm.trtllm_command(SCENARIO, "1.2.1", 3, schedule=rising)
        assert "draft_len_schedule" not in command.files["extra_llm_api_options.yaml"]
        assert keys(command) == ["command.trtllm_schedule_shape"]

    @pytest.mark.parametrize("version, decoding_type, path_key, one_model, scheduled", [
        ("0.19.0", "Eagle", "pytorch_eagle_weights_path", False, False),
        ("0.21.0", "Eagle", "pytorch_weights_path", True, False),
        ("1.0.0", "Eagle", "speculative_model_dir", True, False),
        ("1.2.1", "Eagle", "speculative_model", True, False),
        ("1.3.0rc8", "Eagle3", "speculative_model", False, True),
    ])
    def test_eagle3_keys_by_release(self, version, decoding_type, path_key, one_model, scheduled):
        llama = make_scenario(target="Llama-3.1-8B", gpu="H100-SXM", draft="eagle3")
        command = trtllm.trtllm_command(llama, version, 4, schedule=self.SCHEDULE, draft_repo="org/head")
        options = command.files["extra_llm_api_options.yaml"]
        assert f"decoding_type: \"{decoding_type}\"" in options and f"{path_key}: \"org/head\"" in options
        assert ("eagle3_one_model: true" in options) == one_model
        assert ("draft_len_schedule" in options) == scheduled
        assert ("command.trtllm_no_schedule" in keys(command)) != scheduled
        assert "command.trtllm_eagle3_unchecked" not in keys(command)

    def test_mtp_and_attention_data_parallelism(self):
        deepseek = make_scenario(target="DeepSeek-V3", gpu="H200", tp="1", dp="8", ep="on", kv="fp8")
        command = trtllm.trtllm_command(deepseek, "1.2.1", 3)
        flags = dict(zip(command.argv, command.argv[1:]))
        assert (flags["--tp_size"], flags["--ep_size"]) == ("8", "8")
        # Each rank's own batch, sized at the 3 drafts the server allocates for.
        assert int(flags["--max_batch_size"]) == self.on_trtllm(replace(deepseek, gamma=3)).max_batch() // 8
        assert command.files["extra_llm_api_options.yaml"] == (
            "enable_attention_dp: true\n"
            "kv_cache_config:\n  dtype: \"fp8\"\n  free_gpu_memory_fraction: 0.9\n"
            "speculative_config:\n  decoding_type: \"MTP\"\n  num_nextn_predict_layers: 3\n  max_draft_len: 3\n")
        # 0.19.0 writes no KV format: its cache stays BF16, and the batch limit is that cache's.
        old = trtllm.trtllm_command(deepseek, "0.19.0", 3)
        bf16 = replace(deepseek, precision=replace(deepseek.precision, kv="bf16"))
        assert dict(zip(old.argv, old.argv[1:]))["--max_batch_size"] == str(
            self.on_trtllm(replace(bf16, gamma=3)).max_batch() // 8)
        assert "max_draft_len" not in old.files["extra_llm_api_options.yaml"]
        assert "command.trtllm_fp8_kv_since" in keys(old)

    def test_what_each_release_refuses(self):
        refusals = [(SCENARIO, "0.18.0", "command.trtllm_no_options"),
                    (make_scenario(draft="ngram"), "0.20.0", "command.method_unknown"),
                    (make_scenario(target="Qwen3-Next-80B-A3B", gpu="H200"), "1.2.1", "command.trtllm_mtp_target"),
                    (replace(SCENARIO, draft=step.Draft("block", SCENARIO.draft.model)), "1.3.0rc8",
                     "command.not_in_engine"),
                    (SCENARIO, "1.2.x", "command.bad_version")]
        for chosen, version, key in refusals:
            with pytest.raises(SpecvizError) as raised:
                trtllm.trtllm_command(chosen, version, 3)
            assert raised.value.key == key, (version, key)

    def test_versions_sort_candidates_before_the_release(self):
        parsed = [vllm_config.parse_release(v) for v in trtllm.TRTLLM_VERSIONS]
        assert parsed == sorted(parsed) and vllm_config.parse_release("1.3.0rc8") < vllm_config.parse_release("1.3.0")

    @pytest.mark.parametrize("gpu, runs", [("MI355X", False), ("MI300X", False), ("TPU-v6e", False),
                                           ("Gaudi-3", False), ("Trainium2", False), ("H200", True), ("B200", True),
                                           ("GB300", True), ("RTX-PRO-6000", True)])
    def test_only_an_nvidia_gpu_runs_it(self, gpu, runs):
        """Kimi-K2 + EAGLE-3 on 8 MI355X: the command was written with no word that TensorRT-LLM
        cannot run on an AMD GPU; now a problem says so, named in the reader's language."""
        chosen = make_scenario(target="Llama-3.1-8B", gpu=gpu, draft="eagle3")
        assert trtllm.nvidia(chosen.gpu) == runs
        command = trtllm.trtllm_command(chosen, "1.2.1", 4, draft_repo="org/head")
        said = [p for p in command.problems if p.key == "command.trtllm_nvidia_only"]
        assert bool(said) != runs
        if said:
            assert said[0].params["gpu"] == PRESETS.gpus[gpu].name
            assert "is not one" in i18n.t(said[0].key, "en", **said[0].params)
            assert "không phải GPU NVIDIA" in i18n.t(said[0].key, "vi", **said[0].params)

    @pytest.mark.parametrize("gpu, precision, said", [
        ("H200", "nvfp4", True), ("H100-SXM", "nvfp4", True),  # no FP4 units: the checkpoint would not load
        ("B200", "nvfp4", False), ("GB300", "nvfp4", False),
        ("H200", "fp8", False), ("H200", "mxfp4", False),      # MXFP4 experts run on Hopper too (gpt-oss)
    ])
    def test_nvfp4_weights_need_a_blackwell_gpu(self, gpu, precision, said):
        """DeepSeek-V3 in NVFP4 on 8 H200s got a trtllm-serve command with no word that TensorRT-LLM's
        FP4 needs Blackwell (found by the engineer's review)."""
        chosen = make_scenario(target="DeepSeek-V3", draft="mtp", gpu=gpu, precision=precision, tp="8")
        command = trtllm.trtllm_command(chosen, "1.2.1", 1, method="mtp")
        found = [p for p in command.problems if p.key == "command.trtllm_nvfp4_blackwell"]
        assert bool(found) == said
        if found:
            assert found[0].params == {"gpu": PRESETS.gpus[gpu].name}
            assert "Blackwell GPUs only" in i18n.t(found[0].key, "en", **found[0].params)

    def test_a_scenario_on_trtllm_gets_its_command(self):
        on_trt = make_scenario(engine="trt-llm")
        assert serving.command_engine(on_trt) == "trtllm"
        schedule = draft_length.gamma_schedule(on_trt, 0.8, 1024, 1024, 8)
        assert serving.serve_command(on_trt, schedule, 4, 8).argv[0] == "trtllm-serve"


class TestTargetWords:
    """The target a command loads is the one whose memory the page shows: its format, its code."""

    ENGINES = ("vllm", "sglang", "trtllm")

    def command(self, scenario, engine: str) -> vllm_config.Command:
        return serving.serve_command(scenario, draft_length.gamma_schedule(scenario, 0.8, 1024, 64, 4), 2, 16,
                                     engine=engine)

    @pytest.mark.parametrize("engine", ENGINES)
    def test_fp4_weights_need_a_checkpoint_in_fp4(self, engine):
        # DeepSeek-V3's repository is its FP8 checkpoint, 672 GB: 168 GB a GPU on 4 B200s, where the
        # page holds NVFP4 weights (101 GB a GPU). Loading it would not fit.
        chosen = make_scenario(gpu="B200", target="DeepSeek-V3", draft="mtp", precision="nvfp4", tp="4", ep="on")
        command = self.command(chosen, engine)
        assert "<NVFP4 checkpoint of deepseek-ai/DeepSeek-V3>" in command.argv
        assert "deepseek-ai/DeepSeek-V3" not in command.argv
        problem = next(p for p in command.problems if p.key == "command.quantized_checkpoint")
        assert (problem.params["weights"], problem.params["shipped"]) == ("NVFP4", "FP8-BLOCK")
        assert problem.params["tools"].key == "command.quantizers.nvidia"
        # AMD Quark's format is made with AMD's tool (an attack pass: it had been said to be NVIDIA's).
        quark = self.command(replace(chosen, gpu=PRESETS.gpus["MI355X"], precision=dtypes.PRECISIONS["mxfp4-w4a4"]), engine)
        made = next(p for p in quark.problems if p.key == "command.quantized_checkpoint")
        assert made.params["weights"] == "MXFP4-W4A4" and made.params["tools"].key == "command.quantizers.amd"

    @pytest.mark.parametrize("engine", ENGINES)
    def test_a_smaller_component_served_otherwise_than_it_ships_is_said(self, engine):
        """gpt-oss-120b in MXFP4 throughout: its checkpoint's experts are MXFP4, its attention and router
        BF16. The command loads openai/gpt-oss-120b as shipped (65.25 GB by hand) where the page held
        63.8 GB, and said nothing (an engineer's pass)."""
        chosen = make_scenario(gpu="MI355X", target="gpt-oss-120b", draft="eagle3", precision="mxfp4")
        command = self.command(chosen, engine)
        assert "openai/gpt-oss-120b" in command.argv and "command.quantized_checkpoint" not in {p.key for p in command.problems}
        said = {(n.params["component"].key, n.params["shipped"], n.params["weights"])
                for n in command.notices if n.key == "command.component_as_shipped"}
        assert said == {("side.component.attention", "BF16", "MXFP4"), ("side.component.mlp", "BF16", "MXFP4")}
        shipped = self.command(make_scenario(gpu="MI355X", target="gpt-oss-120b", draft="eagle3"), engine)
        assert not [n for n in shipped.notices if n.key == "command.component_as_shipped"]

    def test_fp8_from_a_bf16_checkpoint_is_quantized_while_loading_where_the_engine_can(self):
        chosen = make_scenario(gpu="B200", target="Qwen3-235B-A22B", precision="fp8", tp="2")
        for engine in ("vllm", "sglang"):
            argv = self.command(chosen, engine).argv
            assert "Qwen/Qwen3-235B-A22B" in argv
            assert argv[argv.index("--quantization") + 1] == "fp8"
        trt = self.command(chosen, "trtllm")
        assert "<FP8 checkpoint of Qwen/Qwen3-235B-A22B>" in trt.argv
        assert [p.key for p in trt.problems] == ["command.quantized_checkpoint"]

    def test_a_draft_model_in_fp8_is_quantized_by_its_own_config(self):
        """vLLM's --quantization is the target's alone: the draft loaded in BF16, 2.5 GB where the page
        counted 1.5, one sequence fewer than --max-num-seqs on an RTX 4090 (an engineer's pass)."""
        chosen = make_scenario(gpu="RTX-4090", target="Llama-3.1-8B", draft="Llama-3.2-1B", precision="fp8", tp="1",
                               batch="16", context="8192")
        command = self.command(chosen, "vllm")
        config = json.loads(command.argv[command.argv.index("--speculative-config") + 1])
        assert (config["model"], config["quantization"]) == ("meta-llama/Llama-3.2-1B", "fp8")
        assert json.loads(self.command(SCENARIO, "vllm").argv[-1]).get("quantization") is None  # BF16 as shipped
        nvfp4 = self.command(make_scenario(gpu="B200", target="Llama-3.1-8B", draft="Llama-3.2-1B", precision="nvfp4",
                                           tp="1"), "vllm")
        assert "command.draft_quantized_checkpoint" in {p.key for p in nvfp4.problems}

    def test_sglang_gives_a_draft_model_its_own_quantization_where_the_target_has_none(self):
        """SGLang loads a draft model at the target's --quantization unless it is given its own
        (server_args.py, 0.5.7 to 0.5.23): where the target ships FP8 and needs none, a BF16 draft
        served in FP8 needs its own flag; where the target is quantized while loading, it inherits it."""
        fp8_target = make_scenario(gpu="B200", target="DeepSeek-V3", draft="Llama-3.2-1B", precision="fp8", tp="8")
        command = self.command(fp8_target, "sglang")
        assert "--quantization" not in command.argv
        assert command.argv[command.argv.index("--speculative-draft-model-quantization") + 1] == "fp8"
        assert "command.sglang_draft_quantization" in {n.key for n in command.notices}
        both = self.command(make_scenario(gpu="RTX-4090", target="Llama-3.1-8B", draft="Llama-3.2-1B", precision="fp8",
                                          tp="1", batch="16", context="8192"), "sglang")
        assert both.argv[both.argv.index("--quantization") + 1] == "fp8"
        assert "--speculative-draft-model-quantization" not in both.argv
        nvfp4 = self.command(make_scenario(gpu="B200", target="Llama-3.1-8B", draft="Llama-3.2-1B", precision="nvfp4",
                                           tp="1"), "sglang")
        problem = next(p for p in nvfp4.problems if p.key == "command.draft_quantized_checkpoint")
        assert "SGLang does not make from that checkpoint" in i18n.t(problem.key, **problem.params)
        assert "in --speculative-draft-model-path" in i18n.t(problem.key, **problem.params)

    def test_a_draft_past_its_own_positions_is_said(self):
        """Gemma-3-1B is built for 32,768 positions; beside Gemma-3-27B at 128k nothing said so."""
        long = make_scenario(gpu="H200", target="Gemma-3-27B", draft="Gemma-3-1B", context="131072", batch="4")
        assert long.draft_beyond_positions() == {"draft": long.draft.model.name, "length": long.longest_request,
                                                 "limit": 32768}
        assert "calc.draft_beyond_positions" in {n.key for n in self.command(long, "vllm").notices}
        assert replace(long, context=8192).draft_beyond_positions() is None
        assert make_scenario(draft="eagle3").draft_beyond_positions() is None  # a head: the target's positions

    @pytest.mark.parametrize("engine", ENGINES)
    def test_the_format_the_checkpoint_ships_loads_as_it_is(self, engine):
        # FP8 weights on DeepSeek-V3, whose checkpoint is FP8 with block scales: the same format.
        chosen = make_scenario(gpu="B200", target="DeepSeek-V3", draft="mtp", precision="fp8", tp="8")
        command = self.command(chosen, engine)
        assert "deepseek-ai/DeepSeek-V3" in command.argv and "--quantization" not in command.argv
        assert command.problems == []

    @pytest.mark.parametrize("engine, flag", [("vllm", "--trust-remote-code"), ("sglang", "--trust-remote-code"),
                                              ("trtllm", "--trust_remote_code")])
    def test_kimi_k2_loads_its_own_code_and_others_do_not(self, engine, flag):
        kimi = make_scenario(gpu="B200", target="Kimi-K2", draft="EAGLE3-AQ-MedAI-Kimi-K2", tp="8", ep="on")
        assert flag in self.command(kimi, engine).argv
        assert flag not in self.command(SCENARIO, engine).argv

    @pytest.mark.parametrize("engine", ENGINES)
    def test_a_target_read_from_a_config_file_is_named_by_the_user(self, engine):
        uploaded = replace(SCENARIO, target=replace(SCENARIO.target, source=""))
        command = self.command(uploaded, engine)
        assert "<Qwen3-32B>" in command.argv
        assert Notice("command.name_the_target", target="Qwen3-32B",
                      engine=memory_flags.ENGINE_NAMES[engine]) in command.problems


    @pytest.mark.parametrize("engine", ENGINES)
    def test_a_checkpoint_the_user_names_is_served_as_named(self, engine):
        # DeepSeek-R1's NVFP4 build on DeepSeek-V3's architecture, as the vLLM GB300 post serves it: named,
        # it replaces the placeholder and its problem, and the notice says whose figures they are.
        chosen = make_scenario(gpu="B200", target="DeepSeek-V3", draft="mtp", precision="nvfp4", tp="4", ep="on")
        url = "https://huggingface.co/nvidia/DeepSeek-R1-0528-NVFP4/tree/main"
        command = serving.serve_command(chosen, draft_length.gamma_schedule(chosen, 0.8, 1024, 64, 4), 2, 16,
                                        engine=engine, target_repo=url)
        assert "nvidia/DeepSeek-R1-0528-NVFP4" in command.argv
        assert not any("<" in word for word in command.argv)
        assert command.problems == []
        assert Notice("command.named_target", checkpoint="nvidia/DeepSeek-R1-0528-NVFP4", target=chosen.target.name,
                      weights="NVFP4") in command.notices

    def test_the_preset_s_own_checkpoint_named_is_the_preset_s(self):
        chosen = make_scenario(gpu="B200", target="DeepSeek-V3", draft="mtp", precision="nvfp4", tp="4", ep="on")
        schedule = draft_length.gamma_schedule(chosen, 0.8, 1024, 64, 4)
        for named in ("deepseek-ai/DeepSeek-V3", "https://huggingface.co/deepseek-ai/deepseek-v3"):
            command = serving.serve_command(chosen, schedule, 2, 16, target_repo=named)
            assert [p.key for p in command.problems] == ["command.quantized_checkpoint"]
            assert "command.named_target" not in [n.key for n in command.notices]

    @pytest.mark.parametrize("text", ["org/model; rm -rf ~", "$(id)", "x" * 201])
    def test_a_target_checkpoint_that_is_not_an_id_or_a_path(self, text):
        for engine in self.ENGINES:
            with pytest.raises(SpecvizError) as raised:
                serving.serve_command(SCENARIO, draft_length.gamma_schedule(SCENARIO, 0.8, 1024, 64, 4), 2, 16,
                                      engine=engine, target_repo=text)
            assert raised.value.key == "command.bad_checkpoint"
            assert raised.value.params["text"] == text[:60]


class TestPositions:
    @pytest.mark.parametrize("engine, flag", [("vllm", "--max-model-len"), ("sglang", "--context-length"),
                                              ("trtllm", "--max_seq_len")])
    def test_a_length_past_the_model_s_positions_is_a_problem(self, engine, flag):
        long = make_scenario(context="131072", batch="1")
        schedule = draft_length.gamma_schedule(long, 0.8, 131072, 64, 4)
        command = serving.serve_command(long, schedule, 2, 1, engine=engine)
        assert Notice("command.beyond_positions", target="Qwen3-32B", length=131072, limit=40960,
                      engine=memory_flags.ENGINE_NAMES[engine], flag=flag) in command.problems
        within = make_scenario(context="40960", batch="1")
        assert not any(p.key == "command.beyond_positions" for p in serving.serve_command(
            within, draft_length.gamma_schedule(within, 0.8, 40960, 64, 4), 2, 1, engine=engine).problems)

    def test_a_steady_load_s_requests_count_in_and_out(self):
        loaded = workload.steady_load(make_scenario(), 40000, 2000)
        assert loaded.longest_request == 42000
        assert loaded.beyond_positions() == {"target": "Qwen3-32B", "length": 42000, "limit": 40960}
        assert workload.steady_load(make_scenario(), 38000, 2000).beyond_positions() is None


class TestTokenBudget:
    def test_a_step_past_vllm_s_default_budget_is_said(self):
        """DeepSeek-V3 + MTP on 8 B200s with 2,000 tokens in and 100 out at batch 512: a step of γ 3
        schedules 512 x 4 = 2,048 positions and 512 x 20 x E = 23,745 prompt tokens (E = 2.319, the
        one MTP layer run twice past its training), where vLLM's default budget on a 180 GB GPU is
        16,384 tokens a step."""
        loaded = workload.steady_load(make_scenario(gpu="B200", target="DeepSeek-V3", draft="mtp", precision="fp8",
                                                    tp="8", batch="512"), 2000, 100)
        notices = memory_flags.budget_notices(loaded, 3)
        expected = float(loaded.expected_tokens(loaded.alpha, 3))
        assert round(expected, 3) == 2.319
        assert notices == [Notice("command.token_budget", batch=512, tokens=int(np.ceil(2048 + 512 * 20 * expected)),
                                  positions=4, budget=16384, prompts=round(512 * 20 * expected))]
        assert notices[0] in serving.serve_command(loaded, draft_length.gamma_schedule(
            loaded, loaded.alpha, loaded.context, 1024, 3), 3, 512, engine="vllm", by_load=False).notices

    def test_decoding_only_counts_each_sequence_s_positions_per_rank(self):
        # 2 H100s (80 GB: 8,192 a step): 1,024 sequences x 9 positions is past it, x 5 is not, and
        # split over two data-parallel ranks x 9 is not either.
        assert [n.key for n in memory_flags.budget_notices(make_scenario(batch="1024"), 8)] == \
            ["command.token_budget_decode"]
        assert memory_flags.budget_notices(make_scenario(batch="1024"), 4) == []
        assert memory_flags.budget_notices(make_scenario(batch="1024", tp="1", dp="2"), 8) == []

    def test_vllm_s_notice_is_vllm_s_budget_whatever_engine_the_costs_are(self):
        # The same 1,024 sequences x 9 positions on SGLang's costs: the vLLM command's budget is still vLLM's.
        on_sglang = make_scenario(batch="1024", engine="sglang")
        assert memory_flags.budget_notices(on_sglang, 8) == memory_flags.budget_notices(make_scenario(batch="1024"), 8)

    def test_each_command_states_its_engine_s_own_budget_for_the_gpu(self):
        """SGLang writes its chunk for the GPU (8,192 on an H100, 4,096 on a 40 GB A100, where vLLM's
        default is 2,048), TensorRT-LLM its max_num_tokens (8,192 on any GPU); vLLM's command is as
        before, its budget left to its default."""
        def flag_value(command, flag):
            return command.argv[command.argv.index(flag) + 1] if flag in command.argv else None

        for gpu, chunk in (("H100-SXM", "8192"), ("A100-40GB", "4096"), ("B200", "16384")):
            chosen = make_scenario(gpu=gpu, tp="4", engine="sglang")
            assert flag_value(sglang.sglang_command(chosen, 4), "--chunked-prefill-size") == chunk, gpu
            assert flag_value(trtllm.trtllm_command(chosen, "1.2.1", 4), "--max_num_tokens") == "8192", gpu
            vllm = vllm_config.vllm_command(make_scenario(gpu=gpu, tp="4"), "0.33.0", 4)
            assert "--max-num-batched-tokens" not in vllm.argv
        # SGLang's flag is the server's: it divides the chunk over data-parallel attention groups itself.
        moe = make_scenario(gpu="H200", target="DeepSeek-V3", draft="mtp", precision="fp8", tp="8", dp="2", ep="on",
                            engine="sglang")
        assert flag_value(sglang.sglang_command(moe, 1, method="mtp"), "--chunked-prefill-size") == "8192"
        assert workload.prompt_room(moe, 0.8, 1, 64)["budget"] == 4096  # each of the 2 groups' share
        on_vllm = replace(moe, engine=PRESETS.engines["vllm-v1"])
        assert workload.prompt_room(on_vllm, 0.8, 1, 64)["budget"] == 8192  # vLLM's holds for each rank


class TestTrtllmAttentionRanks:
    def test_attention_dp_over_groups_of_several_gpus_is_said_and_sized_per_gpu(self):
        """DeepSeek-V3 on a GB200 NVL72, 9 attention groups of TP 8: trtllm-serve's attention DP runs 72
        groups of one GPU, and its --max_batch_size (per rank) had been the limit over 9, 1,820 a rank:
        131,040 sequences where the figures hold 16,380."""
        nvl = make_scenario(gpu="GB200", target="DeepSeek-V3", draft="mtp", precision="fp8", tp="8", dp="9", ep="on")
        schedule = draft_length.gamma_schedule(nvl, 0.8, 1024, 1024, 4)
        command = serving.serve_command(nvl, schedule, 2, 64, engine="trtllm")
        limit = draft_length.gamma_schedule(nvl, 0.8, 1024, 1024, 4, "trtllm")["last"].iloc[-1]
        stated = int(dict(zip(command.argv, command.argv[1:]))["--max_batch_size"])
        assert stated == limit // 72 and stated * 72 <= limit
        assert Notice("command.trtllm_attention_ranks", ranks=72, dp=9, tp=8) in command.notices
        one_gpu_groups = make_scenario(gpu="GB200", target="DeepSeek-V3", draft="mtp", precision="fp8", tp="1", dp="8",
                                       ep="on")
        assert not any(n.key == "command.trtllm_attention_ranks" for n in serving.serve_command(
            one_gpu_groups, draft_length.gamma_schedule(one_gpu_groups, 0.8, 1024, 1024, 4), 2, 64,
            engine="trtllm").notices)
