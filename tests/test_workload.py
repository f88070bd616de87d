"""Tests for specviz.workload: prefill and decode of one request, with and without speculation."""

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings as hsettings, strategies as st

from conftest import PRESETS, make_scenario
from specviz import settings, workload
from specviz.model import drafters, step
from specviz.model.spec import expected_tokens

SCENARIO = make_scenario()  # Qwen3-32B drafted by Qwen3-0.6B on 2 H100s, vLLM V1


class TestLoadWorkloads:
    def test_presets_with_their_sources(self):
        presets = workload.load_workloads(settings.get("SPECVIZ_DATA_DIR"))
        assert list(presets) == ["coding_assistant", "writing_assistant", "summarisation", "json_extraction"]
        coding = presets["coding_assistant"]
        assert (coding.input_tokens, coding.output_tokens) == (100, 500)  # the article's 5:1 coding assistant
        assert all(w.source and w.note for w in presets.values())
        assert {w.source for w in presets.values() if w.id != "coding_assistant"} == {"illustrative"}


def own_step(scenario, batch, gamma, context, prompt, carried, alpha=0.8, routed=None):
    """A plain and a speculative step carrying ``carried`` tokens of a ``prompt`` on each data-parallel
    rank, ``routed`` of them in all reaching the experts (default: every rank's), by step.step's steady
    load: B·P/O tokens a plain step."""
    timed = dict(**scenario.parallel, precision=scenario.precision, costs=scenario.costs,
                 routing_overlap=scenario.routing_overlap,
                 prompt_routed_share=1.0 if routed is None else routed / (carried * scenario.dp))
    finishing = batch * prompt / (carried * scenario.dp)
    e = float(expected_tokens(alpha, gamma))
    plain = step.step(scenario.gpu, scenario.target, scenario.draft, batch=batch, gamma=gamma, context=context,
                      alpha=alpha, prompt_tokens=prompt, output_tokens=finishing, **timed)["plain_s"]
    spec = step.step(scenario.gpu, scenario.target, scenario.draft, batch=batch, gamma=gamma, context=context,
                     alpha=alpha, prompt_tokens=prompt, output_tokens=finishing * e, **timed)["spec_s"]
    return float(plain), float(spec)


class TestBudgetBatch:
    @pytest.mark.parametrize("link", [{}, {"dp": "2", "tp": "4", "target": "Qwen3-235B-A22B", "ep": "on"},
                                      {"engine": "trt-llm"}])
    @pytest.mark.parametrize("load", [None, (2000, 100), (100, 500)])
    def test_it_is_the_largest_batch_whose_steps_the_budget_admits(self, link, load):
        """The closed form against prompt_room itself, each side: the batch keeps up, one more sequence
        a rank does not."""
        chosen = make_scenario(**link)
        chosen = chosen if load is None else workload.steady_load(chosen, *load)
        for speculative, side in ((True, "keeps_up_spec"), (False, "keeps_up_plain")):
            most = workload.budget_batch(chosen, 0.8, 4, speculative)
            assert bool(workload.prompt_room(chosen, 0.8, 4, most)[side])
            assert not bool(workload.prompt_room(chosen, 0.8, 4, most + chosen.dp)[side])

    def test_by_hand_and_where_prefill_runs_apart(self):
        # vLLM's 8,192 on an H100, γ 4: ⌈8,192 / 5⌉ − 1 = 1,638 speculating, 8,191 plain.
        assert (workload.budget_batch(make_scenario(), 0.8, 4), workload.budget_batch(make_scenario(), 0.8, 4, False)) \
            == (1638, 8191)
        # SGLang runs prefill batches apart: decoding alone never fills its budget.
        assert workload.budget_batch(make_scenario(engine="sglang"), 0.8, 4) == np.iinfo(np.int64).max


class TestFirstToken:
    def test_decoding_only_half_a_step_then_the_step_that_carries_the_prompt(self):
        # Qwen3-32B + 0.6B on 2 H100s (80 GB: vLLM's budget 8,192 a step), 8 requests decoding, a
        # prompt of 100 tokens: it fits one step (8,192 - 8 and - 8·5 tokens of room), no queue.
        r = workload.first_token(SCENARIO, 0.8, 4, 8, 100, 350)
        steps = SCENARIO.step_times(batch=8, gamma=4, context=350, alpha=0.8)
        plain, spec = own_step(SCENARIO, 8, 4, 350, 100, 100)
        assert (float(r["budget"]), float(r["room_plain"]), float(r["room_spec"])) == (8192, 8184, 8152)
        assert float(r["ttft_plain_s"]) == pytest.approx(0.5 * float(steps["plain_s"]) + plain)
        assert float(r["ttft_spec_s"]) == pytest.approx(0.5 * float(steps["spec_s"]) + spec)
        assert float(r["ttft_spec_even_s"]) == float(r["ttft_spec_s"]) and float(r["queue_spec"]) == 0

    def test_each_engine_s_own_budget_sets_the_prompt_s_steps(self):
        """One 8,000-token prompt at batch 64, γ 4, decoding only, on 2 H100s (80 GB): vLLM's 8,192
        tokens a step leave 8,192 - 64 = 8,128 plain (one step) and 8,192 - 64·5 = 7,872 speculating
        (⌈8,000 / 7,872⌉ = 2 steps of 4,000); SGLang's chunk, 8,192 too, runs apart from the decodes
        (one step of 8,000 either way); TensorRT-LLM's 8,192 counts the decodes as vLLM's does."""
        on = {engine: replace(SCENARIO, engine=PRESETS.engines[engine])
              for engine in ("vllm-v1", "sglang", "trt-llm")}
        rooms = {engine: workload.prompt_room(chosen, 0.8, 4, 64) for engine, chosen in on.items()}
        assert [(float(r["room_plain"]), float(r["room_spec"])) for r in rooms.values()] == \
            [(8128, 7872), (8192, 8192), (8128, 7872)]
        for engine, spec_steps in (("vllm-v1", 2), ("sglang", 1), ("trt-llm", 2)):
            chosen = on[engine]
            r = workload.first_token(chosen, 0.8, 4, 64, 8000, 4000)
            steps = chosen.step_times(batch=64, gamma=4, context=4000, alpha=0.8)
            plain, _ = own_step(chosen, 64, 4, 4000, 8000, 8000)
            _, spec = own_step(chosen, 64, 4, 4000, 8000, 8000 / spec_steps)
            assert float(r["ttft_plain_s"]) == pytest.approx(0.5 * float(steps["plain_s"]) + plain), engine
            assert float(r["ttft_spec_s"]) == pytest.approx(0.5 * float(steps["spec_s"]) + spec_steps * spec), engine

    def test_a_40_gb_gpu_gives_sglang_twice_vllm_s_budget(self):
        # A 40 GB A100 is 37.3 GiB: SGLang's chunk is 4,096 (20-60 GiB), vLLM's budget 2,048 (below 70).
        chosen = make_scenario(gpu="A100-40GB", tp="4")
        sglang = replace(chosen, engine=PRESETS.engines["sglang"])
        assert [float(workload.prompt_room(c, 0.8, 4, 16)["budget"]) for c in (chosen, sglang)] == [2048, 4096]
        # 3,000 tokens: two steps of 1,500 under vLLM's 2,048 - 16·5 = 1,968 of room, one under SGLang's.
        r = workload.first_token(sglang, 0.8, 4, 16, 3000, 2000)
        steps = sglang.step_times(batch=16, gamma=4, context=2000, alpha=0.8)
        assert float(r["ttft_spec_s"]) == pytest.approx(
            0.5 * float(steps["spec_s"]) + own_step(sglang, 16, 4, 2000, 3000, 3000)[1])

    def test_a_prompt_longer_than_a_steps_room_takes_several(self):
        r = workload.first_token(SCENARIO, 0.8, 4, 8, 20_000, 10_000)
        plain, _ = own_step(SCENARIO, 8, 4, 10_000, 20_000, 20_000 / 3)  # ⌈20,000 / 8,184⌉ = 3 steps
        steps = SCENARIO.step_times(batch=8, gamma=4, context=10_000, alpha=0.8)
        assert float(r["ttft_plain_s"]) == pytest.approx(0.5 * float(steps["plain_s"]) + 3 * plain)

    def test_a_steady_load_queues_the_prompts_speculation_more(self):
        # 64 requests of 2,000 in and 100 out: 1,280 prompt tokens a plain step (ρ = 1,280 / 8,128),
        # E(0.8, 4) = 3.3616 times as many speculating, in 8,192 - 64·5 = 7,872 tokens of room.
        load = workload.steady_load(replace(SCENARIO, batch=64), 2000, 100)
        r = workload.first_token(load, 0.8, 4, 64, 2000, load.context)
        rho = 1280 * 3.3616 / 7872
        assert float(r["queue_plain"]) == pytest.approx(1280 / 8128)
        assert float(r["queue_spec"]) == pytest.approx(rho, rel=1e-4)
        wait = rho * (2000 / 7872) / (2 * (1 - rho))  # steps, M/D/1
        steps = load.step_times(batch=64, gamma=4, context=load.context, alpha=0.8)
        _, spec = own_step(load, 64, 4, load.context, 2000, 1280 * 3.3616 if 1280 * 3.3616 > 2000 else 2000)
        assert float(r["ttft_spec_even_s"]) == pytest.approx(0.5 * float(steps["spec_s"]) + spec, rel=1e-4)
        assert float(r["ttft_spec_s"] - r["ttft_spec_even_s"]) == pytest.approx(wait * float(steps["spec_s"]), rel=1e-3)
        assert float(r["ttft_spec_s"]) > 2 * float(r["ttft_plain_s"])

    def test_with_data_parallel_attention_the_experts_see_each_rank_s_own_prompts(self):
        # DeepSeek-V3 + MTP on 8 H200s, attention in 8 ranks: a 4,000-token prompt arrives at one rank
        # (8,192 tokens of budget: one step). That rank sets the step's time, as if each carried 4,000;
        # the experts see its 4,000 alone, decoding only, and 4,000 + 7·160 under a load of 64 requests
        # of 2,000 in and 100 out (each rank's own 8·2,000/100 = 160 a step).
        dp8 = make_scenario(gpu="H200", target="DeepSeek-V3", draft="mtp", tp="1", dp="8", ep="on", gamma="1")
        r = workload.first_token(dp8, 0.8, 1, 64, 4000, 2000)
        steps = dp8.step_times(batch=64, gamma=1, context=2000, alpha=0.8)
        plain, spec = own_step(dp8, 64, 1, 2000, 4000, 4000, routed=4000)
        assert float(r["ttft_plain_s"]) == pytest.approx(0.5 * float(steps["plain_s"]) + plain)
        assert float(r["ttft_spec_s"]) == pytest.approx(0.5 * float(steps["spec_s"]) + spec)
        every_rank, _ = own_step(dp8, 64, 1, 2000, 4000, 4000)  # the experts priced for 8·4,000 tokens
        one_rank, _ = own_step(dp8, 64, 1, 2000, 4000, 4000 / 8)  # the attention for 4,000 over all ranks
        assert one_rank < plain < every_rank
        load = workload.steady_load(replace(dp8, batch=64), 2000, 100)
        r = workload.first_token(load, 0.8, 1, 64, 4000, load.context)
        assert float(r["prompts_plain"]) == pytest.approx(160)
        steps = load.step_times(batch=64, gamma=1, context=load.context, alpha=0.8)
        plain, _ = own_step(load, 64, 1, load.context, 4000, 4000, routed=4000 + 7 * 160)
        assert float(r["ttft_plain_even_s"]) == pytest.approx(0.5 * float(steps["plain_s"]) + plain)

    def test_a_routed_share_of_one_is_the_load_s_step(self):
        load = workload.steady_load(replace(SCENARIO, batch=16), 2000, 100)
        moe = make_scenario(target="Qwen3-30B-A3B", draft="Qwen3-0.6B", tp="1")
        for chosen in (load, moe):
            plain = chosen.step_times(batch=16, gamma=4, context=1000, alpha=0.8,
                                      load={"prompt_tokens": 2000, "output_tokens": 100})
            shared = chosen.step_times(batch=16, gamma=4, context=1000, alpha=0.8,
                                       load={"prompt_tokens": 2000, "output_tokens": 100, "prompt_routed_share": 1.0})
            assert all(np.array_equal(plain[k], shared[k]) for k in ("plain_s", "spec_s"))
        half = moe.step_times(batch=16, gamma=4, context=1000, alpha=0.8,
                              load={"prompt_tokens": 2000, "output_tokens": 100, "prompt_routed_share": 0.5})
        assert float(half["plain_s"]) < float(plain["plain_s"])

    def test_prompts_faster_than_the_budget_admits_them_never_get_a_first_token(self):
        # At 256 the speculative steps would take 17,203 prompt tokens into 6,912 of room.
        load = workload.steady_load(replace(SCENARIO, batch=256), 2000, 100)
        r = workload.first_token(load, 0.8, 4, 256, 2000, load.context)
        assert bool(r["keeps_up_plain"]) and not bool(r["keeps_up_spec"])
        assert float(r["queue_spec"]) == pytest.approx(256 * 20 * 3.3616 / 6912, rel=1e-4)
        assert np.isinf(r["ttft_spec_s"]) and np.isfinite(r["ttft_plain_s"])
        whole = workload.end_to_end(load, 0.8, 4, 256, 2000, 100)
        assert float(whole["e2e_speedup"]) == 0 and np.isinf(whole["e2e_spec_s"])


class TestEndToEnd:
    def test_the_parts_add_up(self):
        r = workload.end_to_end(SCENARIO, 0.8, 4, 8, 100, 500)
        timed = dict(tp=SCENARIO.tp, precision=SCENARIO.precision, costs=SCENARIO.costs)
        first = workload.first_token(SCENARIO, 0.8, 4, 8, 100, 350)
        draft = step.pass_time(SCENARIO.gpu, SCENARIO.draft.model, 1, 100, 0, **timed)["time_s"]
        steps = step.step(SCENARIO.gpu, SCENARIO.target, SCENARIO.draft, batch=8, gamma=4, context=350, alpha=0.8,
                          **timed)
        prefill = float(first["ttft_plain_s"])
        assert float(r["ttft_plain_s"]) == pytest.approx(prefill)
        assert float(r["ttft_spec_s"]) == pytest.approx(float(first["ttft_spec_s"] + draft))
        assert float(r["decode_plain_s"]) == pytest.approx(499 * float(steps["plain_s"]))
        # 499 tokens at E = 3.3616 per speculative step (α 0.8, γ 4)
        assert float(r["decode_spec_s"]) == pytest.approx(499 / 3.3616 * float(steps["spec_s"]), rel=1e-4)
        assert float(r["e2e_speedup"]) == pytest.approx(
            float((prefill + 499 * steps["plain_s"]) / (r["ttft_spec_s"] + 499 / 3.3616 * steps["spec_s"])), rel=1e-4)

    def test_speculation_shortens_decode_only(self):
        r = workload.end_to_end(SCENARIO, 0.8, 4, 1, [100, 4000, 16000], 150)
        assert np.all(r["e2e_speedup"] < r["decode_speedup"])  # the prefill is not shortened
        assert np.all(np.diff(r["e2e_speedup"]) < 0) and np.all(np.diff(r["prefill_share"]) > 0)
        assert np.all(r["e2e_speedup"] <= r["e2e_limit"])

    def test_the_evenly_spaced_time_counts_the_draft_s_prompt_pass_too(self):
        """Decoding only no prompt queues: the evenly spaced time to first token is the one at random,
        the draft model's pass over the prompt in both (the Latency view's help had given it without)."""
        r = workload.end_to_end(SCENARIO, 0.8, 4, 1, 100, 500)
        first = workload.first_token(SCENARIO, 0.8, 4, 1, 100, 350)
        assert float(r["ttft_spec_even_s"]) == float(r["ttft_spec_s"]) > float(first["ttft_spec_even_s"])
        assert float(r["ttft_plain_even_s"]) == float(r["ttft_plain_s"])

    def test_one_output_token_is_all_prefill(self):
        r = workload.end_to_end(SCENARIO, 0.9, 4, 1, 1000, 1)
        assert float(r["decode_plain_s"]) == 0 and float(r["prefill_share"]) == 1.0
        assert float(r["e2e_speedup"]) < 1  # the draft's own prefill, and nothing to gain

    def test_an_ngram_draft_reads_no_prompt_but_its_steps_are_longer(self):
        ngram = replace(SCENARIO, draft=step.Draft("ngram"))
        r = workload.end_to_end(ngram, 0.6, 4, 4, 2000, 100)
        first = workload.first_token(ngram, 0.6, 4, 4, 2000, 2050)
        assert float(r["ttft_spec_s"]) == float(first["ttft_spec_s"]) > float(r["ttft_plain_s"])

    def test_a_prompt_heavy_request_is_flagged(self):
        r = workload.end_to_end(SCENARIO, 0.8, 4, 1, [100, 64000], [500, 50])
        assert list(r["prompt_heavy"]) == [False, True]
        assert float(r["e2e_limit"][1]) < 2  # not even a perfect draft could double its speed

    @pytest.mark.parametrize("n_in, n_out", [(0, 10), (10, 0), (-1, 5)])
    def test_a_request_has_tokens_in_and_out(self, n_in, n_out):
        with pytest.raises(ValueError):
            workload.end_to_end(SCENARIO, 0.8, 4, 1, n_in, n_out)

    @hsettings(max_examples=30, deadline=None)
    @given(st.floats(0, 1), st.integers(1, 8), st.integers(1, 256), st.integers(1, 20000), st.integers(1, 4000))
    def test_invariants(self, alpha, gamma, batch, n_in, n_out):
        r = workload.end_to_end(SCENARIO, alpha, gamma, batch, n_in, n_out)
        assert 0 < float(r["prefill_share"]) <= 1 and float(r["ttft_spec_s"]) >= float(r["ttft_plain_s"])
        low, high = sorted([1.0, float(r["decode_speedup"])])
        assert float(r["e2e_speedup"]) <= high + 1e-12
        assert float(r["e2e_plain_s"]) == pytest.approx(float(r["ttft_plain_s"] + r["decode_plain_s"]))


class TestTheDraftsPromptPass:
    @pytest.mark.parametrize("query, reads", [({"target": "DeepSeek-V3", "draft": "mtp", "gpu": "H200", "tp": "8"}, True),
                                              ({"draft": "peagle"}, True), ({"draft": "medusa"}, False),
                                              ({"draft": "ngram"}, False)])
    def test_every_draft_with_a_cache_of_its_own_reads_the_prompt(self, query, reads):
        """An MTP layer, a P-EAGLE head or a block drafter had added nothing to the time to first token;
        the draft model and EAGLE heads had (vLLM's proposers run over every scheduled token)."""
        chosen = make_scenario(**query)
        whole = workload.end_to_end(chosen, 0.8, 4, 8, 2000, 100)
        first = workload.first_token(chosen, 0.8, 4, 8, 2000, 2050)
        drafted = float(whole["ttft_spec_s"] - first["ttft_spec_s"])
        if reads:
            timed = dict(**chosen.parallel, precision=chosen.precision, costs=chosen.costs)
            pass_s = step.pass_time(chosen.gpu, drafters.drafter(chosen.target, chosen.draft), 1.0, 2000, 0.0, **timed)
            assert drafted == pytest.approx(float(pass_s["time_s"])) and drafted > 0
        else:
            assert drafted == 0
