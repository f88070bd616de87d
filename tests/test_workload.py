"""Tests for specviz.workload: prefill and decode of one request, with and without speculation."""

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings as hsettings, strategies as st

from conftest import make_scenario
from specviz import settings, workload
from specviz.model import step

SCENARIO = make_scenario()  # Qwen3-32B drafted by Qwen3-0.6B on 2 H100s, vLLM V1


class TestLoadWorkloads:
    def test_presets_with_their_sources(self):
        presets = workload.load_workloads(settings.get("SPECVIZ_DATA_DIR"))
        assert list(presets) == ["coding_assistant", "writing_assistant", "summarisation", "json_extraction"]
        coding = presets["coding_assistant"]
        assert (coding.input_tokens, coding.output_tokens) == (100, 500)  # the article's 5:1 coding assistant
        assert all(w.source and w.note for w in presets.values())
        assert {w.source for w in presets.values() if w.id != "coding_assistant"} == {"illustrative"}


class TestEndToEnd:
    def test_the_parts_add_up(self):
        r = workload.end_to_end(SCENARIO, 0.8, 4, 8, 100, 500)
        costs = SCENARIO.costs
        timed = dict(tp=SCENARIO.tp, precision=SCENARIO.precision, costs=costs)
        prefill = step.pass_time(SCENARIO.gpu, SCENARIO.target, 1, 100, 0, **timed)["time_s"] + costs.step_ms / 1e3
        draft = step.pass_time(SCENARIO.gpu, SCENARIO.draft.model, 1, 100, 0, **timed)["time_s"]
        steps = step.step(SCENARIO.gpu, SCENARIO.target, SCENARIO.draft, batch=8, gamma=4, context=350, alpha=0.8,
                          **timed)
        assert float(r["ttft_plain_s"]) == pytest.approx(float(prefill))
        assert float(r["ttft_spec_s"]) == pytest.approx(float(prefill + draft))
        assert float(r["decode_plain_s"]) == pytest.approx(499 * float(steps["plain_s"]))
        # 499 tokens at E = 3.3616 per speculative step (α 0.8, γ 4)
        assert float(r["decode_spec_s"]) == pytest.approx(499 / 3.3616 * float(steps["spec_s"]), rel=1e-4)
        assert float(r["e2e_speedup"]) == pytest.approx(
            float((prefill + 499 * steps["plain_s"]) / (prefill + draft + 499 / 3.3616 * steps["spec_s"])), rel=1e-4)

    def test_speculation_shortens_decode_only(self):
        r = workload.end_to_end(SCENARIO, 0.8, 4, 1, [100, 4000, 16000], 150)
        assert np.all(r["e2e_speedup"] < r["decode_speedup"])  # the prefill is not shortened
        assert np.all(np.diff(r["e2e_speedup"]) < 0) and np.all(np.diff(r["prefill_share"]) > 0)
        assert np.all(r["e2e_speedup"] <= r["e2e_limit"])

    def test_one_output_token_is_all_prefill(self):
        r = workload.end_to_end(SCENARIO, 0.9, 4, 1, 1000, 1)
        assert float(r["decode_plain_s"]) == 0 and float(r["prefill_share"]) == 1.0
        assert float(r["e2e_speedup"]) < 1  # the draft's own prefill, and nothing to gain

    def test_an_ngram_draft_leaves_the_first_token_alone(self):
        ngram = replace(SCENARIO, draft=step.Draft("ngram"))
        r = workload.end_to_end(ngram, 0.6, 4, 4, 2000, 100)
        assert float(r["ttft_spec_s"]) == float(r["ttft_plain_s"])

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
