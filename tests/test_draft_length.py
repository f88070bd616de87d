"""The draft length per batch size the step model advises (specviz.advice.draft_length): the
schedule a command states, the batch × context map and the advice in words."""

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from conftest import config_of, make_scenario
from specviz import calculator
from specviz.advice import draft_length, serving
from specviz.advice.memory_flags import engine_rule
from specviz.errors import Notice

SCENARIO = make_scenario()  # Qwen3-32B drafted by Qwen3-0.6B on 2 H100s, vLLM V1


class TestGammaSchedule:
    def test_where_not_one_sequence_fits_there_is_no_schedule(self):
        """DeepSeek-V3 + MTP on 8 H100s without data-parallel attention holds no sequence: Deploy gave a
        γ of 2 at batch 1, 1.67x, and a command (an engineer's Chromium pass)."""
        chosen = make_scenario(gpu="H100-SXM", target="DeepSeek-V3", draft="mtp", tp="8", dp="1", batch="64")
        assert chosen.max_batch() == 0
        schedule = draft_length.gamma_schedule(chosen, 0.8, 1024, 512, 8)
        assert schedule.empty and list(schedule.columns) == ["first", "last", "gamma", "speedup_low", "speedup_high"]
        assert draft_length.advise(chosen, 0.8, 2, 64, schedule) == [
            Notice("advice.nothing_fits", batch=64, context=1024)]

    def test_ranges_cover_every_batch_with_the_best_gamma(self):
        schedule = draft_length.gamma_schedule(SCENARIO, 0.8, 1024, 512, 8)
        # The batches stop where the memory does: 228 sequences with the draft on the 2 H100s.
        assert schedule["first"].iloc[0] == 1 and schedule["last"].iloc[-1] == SCENARIO.max_batch() == 228
        assert (schedule["first"].iloc[1:].to_numpy() == schedule["last"].iloc[:-1].to_numpy() + 1).all()
        for batch in (1, 7, 64, 228):
            row = schedule[(schedule["first"] <= batch) & (schedule["last"] >= batch)].iloc[0]
            speed = calculator.evaluate_scenario(SCENARIO, 0.8, np.arange(1, 9), batch, 1024)["speedup"]
            assert row["gamma"] == (int(np.argmax(speed)) + 1 if speed.max() > 1 else 0)
            if row["gamma"]:
                assert row["speedup_low"] <= speed.max() <= row["speedup_high"]

    def test_longer_drafts_at_small_batches(self):
        schedule = draft_length.gamma_schedule(SCENARIO, 0.8, 1024, 1024, 16)
        assert schedule["gamma"].iloc[0] > schedule["gamma"].iloc[-1]  # γ falls as the verify pass fills

    def test_off_where_speculation_loses(self):
        weak = draft_length.gamma_schedule(SCENARIO, 0.3, 1024, 1024, 8)
        assert weak["gamma"].iloc[-1] == 0 and (weak.loc[weak["gamma"] == 0, "speedup_high"] == 1).all()


    def test_the_ranges_run_to_the_batch_the_command_states(self):
        # gpt-oss-120b in MXFP4 on one MI355X holds 2,659 sequences of 4,096 positions, past the
        # calculator's 1,024; vLLM gives a batch past the last range that range's length, so the
        # ranges run to --max-num-seqs, each batch with the step model's own best γ.
        gpt_oss = make_scenario(target="gpt-oss-120b", draft="eagle3", gpu="MI355X", precision="mxfp4", alpha="0.6",
                                gamma="2", batch="128", context="4096")
        schedule = draft_length.gamma_schedule(gpt_oss, 0.6, 4096, 1024, 16)
        # To the 2,659 the server holds at the schedule's longest draft, 3 (2,660 at γ 2).
        assert schedule["last"].iloc[-1] == replace(gpt_oss, gamma=3).max_batch() == 2659 and gpt_oss.max_batch() == 2660
        # Its MXFP4 experts multiplied at the FP8 peak (W4A8): at 2,659 no γ pays, and the last range is off.
        speed = calculator.evaluate_scenario(gpt_oss, 0.6, np.arange(1, 17), 2659, 4096)["speedup"]
        assert (speed < 1).all() and schedule["gamma"].iloc[-1] == 0
        paying = calculator.evaluate_scenario(gpt_oss, 0.6, np.arange(1, 17), 2316, 4096)["speedup"]
        assert schedule["gamma"].iloc[-2] == int(np.argmax(paying)) + 1 == 1 and schedule["last"].iloc[-2] == 2316
        command = serving.serve_command(gpt_oss, schedule, 2, 128, draft_repo="org/head")
        # The server sets aside room for its longest draft, 3, in each request: one sequence fewer, and
        # the schedule stops there too (it ran to 2,660, a batch the server never reaches: an engineer's pass).
        assert dict(zip(command.argv, command.argv[1:]))["--max-num-seqs"] == "2659"
        assert config_of(command)["num_speculative_tokens_per_batch_size"][-1][1] == 2659
        advice = draft_length.advise(gpt_oss, 0.6, 2, 128, schedule)
        # Off at batches 1-10, where the costs only speculation pays outweigh 2.18 tokens a step, on from
        # 11, and off again from 2,317 to the last batch the memory holds: at those batches, not "from
        # batch 1" (which the advice had said, and the command's switch by batch size would have turned
        # it off at all).
        assert draft_length.off_ranges(schedule) == [(1, 10), (2317, 2659)] and draft_length.stays_off_from(schedule) == 2317
        assert Notice("advice.off_at_and_from", ranges="1–10", batch=2317) in advice
        moved = next(n for n in advice if n.key.startswith("advice.gamma_by"))
        assert moved.params["small_batch"] == 11 and moved.params["small"] > 0

    def test_a_schedule_shorter_than_gamma_runs_to_the_batch_its_server_holds(self):
        """Qwen3-32B on two H100s at γ 8 holds 227 sequences; its schedule drafts 7 at most, which the
        server allocates for, and there it holds 228: --max-num-seqs had said 228 where the schedule's last
        range ended at 227 (a consistency pass: 2,154 against 2,150 elsewhere)."""
        chosen = make_scenario(gamma="8")
        schedule = draft_length.gamma_schedule(chosen, 0.8, 1024, 1024, 16, "vllm")
        assert chosen.max_batch() == 227 and schedule["gamma"].max() == 7
        command = serving.serve_command(chosen, schedule, 8, 64)
        stated = int(dict(zip(command.argv, command.argv[1:]))["--max-num-seqs"])
        assert stated == replace(chosen, gamma=7).max_batch() == schedule["last"].iloc[-1] == 228
        assert config_of(command)["num_speculative_tokens_per_batch_size"][-1][1] == 228

    def test_a_schedule_whose_longest_draft_cycles_ends_where_the_command_does(self):
        """Qwen3-Next + MTP on one B200 under SGLang's rule: 18 sequences at γ 4, whose schedule wants a
        5 at small batches; 15 at γ 5, whose schedule's longest is 4 again. The schedule had stopped at
        15 and the command stated 18 at 4 steps (an engineer's pass): it runs to 18 now, at most γ 4."""
        chosen = make_scenario(gpu="B200", target="Qwen3-Next-80B-A3B", draft="mtp", tp="1")
        held = replace(chosen, engine=replace(chosen.engine, memory=engine_rule(chosen, "SGLang")))
        assert (replace(held, gamma=4).max_batch(), replace(held, gamma=5).max_batch()) == (18, 15)
        schedule = draft_length.gamma_schedule(chosen, chosen.alpha, chosen.context, 1024, 16, "sglang")
        assert schedule["last"].iloc[-1] == 18 and schedule["gamma"].max() == 4
        command = serving.serve_command(chosen, schedule, 4, 64, engine="sglang")
        flags = dict(zip(command.argv, command.argv[1:]))
        assert (flags["--max-running-requests"], flags["--speculative-num-steps"]) == ("18", "4")

    def test_a_memory_of_millions_of_sequences_is_stated_and_scheduled_up_to_the_setting(self, monkeypatch):
        """A 0.6B model on 8 B300s holds 3.5M sequences at context 0: the schedule found every batch up
        to them, 14 s and 6 GB (28.5M and out of memory on 64 GB300s). The command and the schedule
        stop at SPECVIZ_SERVE_BATCH_MAX, and agree."""
        monkeypatch.setenv("SPECVIZ_SERVE_BATCH_MAX", "3000")
        small = make_scenario(target="Qwen3-0.6B", draft="ngram", gpu="B300", tp="8", context="0")
        assert small.max_batch() > 3_000_000
        schedule = draft_length.gamma_schedule(small, 0.8, 0, 1024, 8)
        command = serving.serve_command(small, schedule, 4, 64)
        assert schedule["last"].iloc[-1] == 3000
        assert dict(zip(command.argv, command.argv[1:]))["--max-num-seqs"] == "3000"

    @pytest.mark.parametrize("engine", ["eager", "any", "trt-llm"])
    def test_the_schedule_stops_where_the_command_s_own_memory_rule_does(self, engine):
        """An eager-PyTorch scenario's command is vLLM's: its schedule ran to 264 sequences (eager keeps
        no share apart) where --max-num-seqs said 228 (vLLM's 0.92); 'any' stopped at 156, and a
        TensorRT-LLM scenario's vLLM command at 216."""
        chosen = make_scenario(engine=engine)
        schedule = draft_length.gamma_schedule(chosen, 0.8, 1024, 1024, 8, "vllm")
        command = serving.serve_command(chosen, schedule, 4, 64, engine="vllm")
        stated = int(dict(zip(command.argv, command.argv[1:]))["--max-num-seqs"])
        drafted = replace(chosen, gamma=config_of(command)["num_speculative_tokens"],
                          engine=replace(chosen.engine, memory=engine_rule(chosen, "vLLM")))
        assert schedule["last"].iloc[-1] == 228 and stated == drafted.max_batch()
        assert config_of(command)["num_speculative_tokens_per_batch_size"][-1][1] >= stated

    def test_a_server_the_memory_does_not_stop_stops_at_batch_max(self):
        # A CPU row has no memory figure: no limit, and the calculator's range bounds the ranges.
        cpu = make_scenario(target="Llama-3.2-1B", draft="eagle3", gpu="Intel-Core-Ultra-X7-358H",
                            tflops="20", bandwidth="0.1")
        assert draft_length.gamma_schedule(cpu, 0.8, 1024, 64, 8)["last"].iloc[-1] == 64


class TestAdvise:
    @pytest.mark.parametrize("query, key", [({}, "advice.gamma_by_batch"),
                                            ({"target": "Qwen3-30B-A3B", "draft": "ngram", "tp": "1"},
                                             "advice.gamma_by_batch_rises"),
                                            ({"target": "DeepSeek-V3", "draft": "mtp", "gpu": "H200", "tp": "8"},
                                             "advice.gamma_by_batch_moves")])
    def test_the_best_gamma_s_move_with_the_batch_is_said_as_it_goes(self, query, key):
        """Qwen3-30B-A3B with prompt lookup: 5 at batches 1-3, 7 at 4, 8 from 5, as its expert tax fades.
        DeepSeek-V3 + MTP on 8 H200s (its one layer reused past its training): 2 at batches 1-5, 1 at
        6-9, 2 again at 10-367, 1 beyond; such a schedule (then 5, 4, up to 8 and 6 at 64) the advice
        had called a rise."""
        chosen = make_scenario(**query)
        schedule = draft_length.gamma_schedule(chosen, 0.8, 1024, 1024, 8)
        moved = next(n for n in draft_length.advise(chosen, 0.8, 4, 64, schedule) if n.key.startswith("advice.gamma_by"))
        assert moved.key == key
        if not key.endswith("_moves"):
            assert (moved.params["large"] > moved.params["small"]) == key.endswith("_rises")

    def test_a_best_gamma_that_falls_and_rises_again_is_said_to_move(self):
        """Kimi-K2 on 8 GB300s in NVFP4: γ 6 at batch 1, 5 at batches 2-14, 7 at 22-59, 4 at 256. The
        advice had said "falls as the batch grows" beside such a schedule (8 at batch 1, 5 at 4-10, 8
        again at 20-46, 4 at 256, before the costs only speculation pays)."""
        kimi = make_scenario(gpu="GB300", target="Kimi-K2", precision="nvfp4", tp="8", ep="on", context="8192")
        schedule = draft_length.gamma_schedule(kimi, 0.8, 8192, 1024, 8)
        # The memory holds 660 sequences of 8,192 positions; from 620 the best γ falls to 3.
        assert list(schedule["gamma"]) == [6, 5, 6, 7, 6, 5, 4, 3]
        moved = next(n for n in draft_length.advise(kimi, 0.8, 4, 256, schedule) if n.key.startswith("advice.gamma_by"))
        assert moved == Notice("advice.gamma_by_batch_moves", small=6, small_batch=1, batch=256, large=4, turn=7, turn_first=22,
                               turn_last=59)

    def test_a_turn_is_never_the_batch_s_own_range(self):
        """A best γ that fell and rises on to this batch: "4 at batch 1, 5 at batches 20-58, 5 at batch
        32" had named this batch's own range as the turn (gpt-oss-120b + EAGLE-3, specviz serve)."""
        schedule = pd.DataFrame({"first": [1, 4, 20], "last": [3, 19, 58], "gamma": [4, 3, 5],
                                 "speedup_low": 1.5, "speedup_high": 2.0})
        moved = next(n for n in draft_length.advise(make_scenario(), 0.8, 4, 32, schedule)
                     if n.key.startswith("advice.gamma_by"))
        assert moved == Notice("advice.gamma_by_batch_moves", small=4, small_batch=1, batch=32, large=5, turn=3, turn_first=4,
                               turn_last=19)

    def test_a_draft_longer_than_the_mtp_layers_is_priced_and_warned_of(self):
        """DeepSeek-V3's one MTP layer, run again for each token past the first, accepts less at each:
        the schedule drafts up to 2 tokens where, pricing every position at α (the bound, reuse 1), it
        drafted past 6."""
        deepseek = make_scenario(gpu="B200", target="DeepSeek-V3", draft="mtp", precision="fp8", tp="8")
        schedule = draft_length.gamma_schedule(deepseek, 0.8, 1024, 1024, 8)
        assert deepseek.target.mtp_layers == 1 and deepseek.mtp_reused_from == 2
        assert int(schedule["gamma"].max()) == 2
        bound = draft_length.gamma_schedule(replace(deepseek, mtp_reuse=1.0), 0.8, 1024, 1024, 8)
        assert int(bound["gamma"].max()) > 6
        # The longest draft asked for: this γ 6, past the schedule's; from the last trained position,
        # 0.8, to the sixth, 0.8 × 0.62⁵ (it said "from 0.50 at the first reused position to 0.50 at
        # position 2" at γ 2, where the first reused position is the last).
        assert Notice("advice.mtp_reused", target=deepseek.target.name, trained=1, gamma=6, reuse=0.62,
                      first=pytest.approx(0.8), last=pytest.approx(0.8 * 0.62 ** 5)) in \
            draft_length.advise(deepseek, 0.8, 6, 64, schedule)
        # At γ 1 (the published α 0.85 is at γ 1) the schedule still drafts 2 tokens with the one layer.
        assert any(n.key == "advice.mtp_reused" and n.params["gamma"] == 2
                   for n in draft_length.advise(deepseek, 0.8, 1, 64, schedule))
        ones = schedule.assign(gamma=1)  # a schedule of one token at every batch, and γ 1: nothing to warn of
        assert not any(n.key == "advice.mtp_reused" for n in draft_length.advise(deepseek, 0.8, 1, 64, ones))

    def test_off_at_small_batches_and_from_a_large_one(self):
        """DeepSeek-V3 + MTP on 8 B200s at α 0.5: off at batches 1-12, one token at 13-688, off from 689.
        The advice said "off from batch 1", and a command without a schedule was given batch 1 as the
        one to switch it off from; it is 689."""
        deepseek = make_scenario(gpu="B200", target="DeepSeek-V3", draft="mtp", precision="fp8", tp="8", ep="off")
        schedule = draft_length.gamma_schedule(deepseek, 0.5, 1024, 1024, 8)
        # To 2,490, the sequences the memory holds at the schedule's one draft token (2,483 at γ 4).
        assert draft_length.off_ranges(schedule) == [(1, 12), (689, 2490)]
        assert draft_length.stays_off_from(schedule) == 689
        assert Notice("advice.off_at_and_from", ranges="1–12", batch=689) in draft_length.advise(deepseek, 0.5, 4, 64,
                                                                                              schedule)
        command = serving.serve_command(deepseek, schedule, 4, 64, version="0.11.0", by_load=False)
        assert [n.params["batch"] for n in command.notices if n.key == "command.disable_ignored"] == [689]

    def test_a_best_gamma_that_rises_then_falls_turns_at_its_peak(self):
        """gpt-oss-120b + EAGLE-3 on an MI355X at α 0.6: off at 1-11, 2 at 12-23, 3 at 24-111, 2 at
        112-298, 1 at 299-758 (its MXFP4 experts at the FP8 peak). At batch 500 the advice had said it
        turned at "2 at batches 125–333"."""
        gpt_oss = make_scenario(target="gpt-oss-120b", draft="eagle3", gpu="MI355X", precision="mxfp4", alpha="0.6")
        schedule = draft_length.gamma_schedule(gpt_oss, 0.6, 1024, 1024, 16)
        moved = next(n for n in draft_length.advise(gpt_oss, 0.6, 4, 500, schedule) if n.key.startswith("advice.gamma_by"))
        assert moved == Notice("advice.gamma_by_batch_moves", small=2, small_batch=12, batch=500, large=1, turn=3,
                               turn_first=24, turn_last=111)

    def test_an_eagle3_head_drafting_past_its_training_is_warned_of(self):
        """SafeAILab's EAGLE-3 head for Llama-3.1-8B on one H100: at α 0.9 the schedule drafts up to 11
        tokens at batches 1-2, past the 7 such heads are trained for; at α 0.8 it drafts at most 6."""
        llama = make_scenario(target="Llama-3.1-8B", draft="EAGLE3-SafeAILab-Llama-3.1-8B", tp="1")
        high = draft_length.gamma_schedule(llama, 0.9, 1024, 1024, 16)
        assert int(high["gamma"].max()) == 11
        assert Notice("advice.head_past_training", gamma=11, trained=7) in draft_length.advise(llama, 0.9, 4, 1, high)
        usual = draft_length.gamma_schedule(llama, 0.8, 1024, 1024, 16)
        assert int(usual["gamma"].max()) == 6
        assert not any(n.key == "advice.head_past_training" for n in draft_length.advise(llama, 0.8, 4, 1, usual))

    @pytest.mark.parametrize("draft, remedy", [("Qwen3-0.6B", "model"), ("eagle3", "head"), ("eagle", "head"),
                                               ("peagle", "head"), ("block", "head"), ("ngram", "lookup"),
                                               ("suffix", "lookup"), ("medusa", "other")])
    def test_a_weak_draft_gets_a_remedy_for_its_kind(self, draft, remedy):
        # α 0.6 at γ 3: vLLM's acceptance rate 0.39, below the 40 % a fitting draft reaches.
        chosen = make_scenario(draft=draft)
        advice = draft_length.advise(chosen, 0.6, 3, 64, draft_length.gamma_schedule(chosen, 0.6, 1024, 1024, 8))
        weak = next(n for n in advice if n.key == "advice.weak_draft")
        assert weak.params["remedy"] == Notice(f"advice.weak_remedy.{remedy}")
        # A head is not told to try a head, nor prompt lookup to try prompt lookup.
        assert ("EAGLE head" in str(weak)) == (remedy == "model")
        assert (Notice("advice.ngram") in advice) == (remedy != "lookup")


class TestGammaMap:
    def test_the_grid_and_each_cell_best_gamma(self):
        grid = draft_length.gamma_map(SCENARIO, 0.8, 1024, 131072, 8)
        assert sorted(set(grid["batch"])) == [2 ** k for k in range(11)]
        assert sorted(set(grid["context"])) == [2 ** k for k in range(8, 18)]
        for _, cell in grid.sample(8, random_state=0).iterrows():
            speed = calculator.evaluate_scenario(SCENARIO, 0.8, np.arange(1, 9), cell["batch"], cell["context"])["speedup"]
            assert cell["gamma"] == (int(np.argmax(speed)) + 1 if speed.max() > 1 else 0)
            assert cell["speedup"] == pytest.approx(speed.max() if cell["gamma"] else 1.0)

    def test_the_context_moves_where_speculation_stops(self):
        # At α 0.6 speculation stops at batch 256 over a short context, at 512 over 1,024-2,048
        # tokens; over 8,192 tokens and more the KV cache's reads keep the verify pass memory-bound and
        # it pays at every batch.
        grid = draft_length.gamma_map(SCENARIO, 0.6, 1024, 65536, 8)
        stops = grid[grid["gamma"] == 0].groupby("context")["batch"].min()
        assert stops[256] == 256 and stops[2048] > stops[256]
        assert (grid.loc[grid["context"] >= 8192, "gamma"] > 0).all()

    def test_where_each_server_still_fits(self):
        grid = draft_length.gamma_map(SCENARIO, 0.8, 1024, 131072, 8)
        for context in (1024, 4096, 131072):
            cells = grid[grid["context"] == context]
            held = replace(SCENARIO, context=context)
            assert (cells["fits"] == (cells["batch"] <= held.max_batch())).all()
            assert (cells["fits_plain"] == (cells["batch"] <= held.max_batch(speculative=False))).all()
        at_4k = grid[grid["context"] == 4096].set_index("batch")
        assert at_4k.loc[32, "fits"] and not at_4k.loc[64, "fits"] and at_4k.loc[64, "fits_plain"]  # 50 and 73


def test_a_reused_mtp_layer_is_not_called_a_weak_draft():
    """DeepSeek-V3's one MTP layer at α 0.8 drafting 4: vLLM would count 0.34 of the drafts accepted,
    the reused positions' loss, which a shorter draft fixes, not another draft; judged at its trained
    position it accepts 0.8. A draft model at α 0.6, γ 3 is still weak (0.39)."""
    deepseek = make_scenario(gpu="B200", target="DeepSeek-V3", draft="mtp", precision="fp8", tp="8")
    schedule = draft_length.gamma_schedule(deepseek, 0.8, 1024, 1024, 8)
    assert not [n for n in draft_length.advise(deepseek, 0.8, 4, 64, schedule) if n.key == "advice.weak_draft"]
    weak = make_scenario()
    assert [n for n in draft_length.advise(weak, 0.6, 3, 64, draft_length.gamma_schedule(weak, 0.6, 1024, 1024, 8))
            if n.key == "advice.weak_draft"]
