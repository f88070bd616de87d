"""Tests for specviz.results.request_acceptance and simulate.latency's measured mix: each request's
acceptance length from whichever figure it has, the spread's quantiles, and the latency tail of a
measured mix against one α at its mean, checked by hand."""

import numpy as np
import pandas as pd
import pytest

from conftest import make_scenario
from specviz import settings
from specviz.errors import SpecvizError
from specviz.model import simulate, spec
from specviz.results import request_acceptance
from specviz.results.request_acceptance import length_quantiles, mix_tail, request_lengths


class TestLengths:
    def test_each_form_by_hand(self):
        requests = pd.DataFrame({
            "acceptance_length": [2.5, np.nan, np.nan, np.nan, np.nan],
            "accepted_tokens": [np.nan, 30.0, np.nan, 5.0, np.nan],
            "drafts": [np.nan, 20.0, np.nan, 0.0, np.nan],
            "acceptance_rate": [np.nan, np.nan, 0.6, np.nan, np.nan]})
        # 2.5 as given; 1 + 30 / 20 = 2.5; 1 + 0.6 · 4 = 3.4; no drafts at all and nothing: unknown
        assert request_lengths(requests, 4).tolist()[:3] == [2.5, 2.5, pytest.approx(3.4)]
        assert request_lengths(requests, 4).isna().tolist() == [False, False, False, True, True]
        assert request_lengths(requests, None).isna().tolist() == [False, False, True, True, True]  # a rate needs γ

    def test_a_frame_with_one_form_only(self):
        assert request_lengths(pd.DataFrame({"acceptance_length": [1.0, 4.0]}), None).tolist() == [1.0, 4.0]

    def test_quantiles(self):
        figures = length_quantiles(pd.Series([1.0, 2.0, 3.0, 4.0, np.nan]))
        # numpy's linear quantiles of 1..4: p50 = 2.5, p10 = 1 + 0.1 · 3 = 1.3, p99 = 1 + 0.99 · 3 = 3.97
        assert figures == {"requests": 4, "mean": 2.5, "p1": pytest.approx(1.03), "p10": pytest.approx(1.3),
                           "p50": 2.5, "p90": pytest.approx(3.7), "p99": pytest.approx(3.97)}
        assert length_quantiles(pd.Series([np.nan]))["requests"] == 0


class TestMixTail:
    def test_half_accept_nothing_half_everything(self):
        """γ = 3, 100 tokens, 10 ms a speculative step. A request at α = 0 (length 1) takes 100
        steps: 1.0 s; at α = 1 (length 4) 25 steps: 0.25 s. Half of each: the p99 is the slow half's
        1.0 s and the mean about (1.0 + 0.25) / 2 = 0.625 s. One α at their mean length 2.5 takes
        about 100 / 2.5 = 40 steps: far faster at the p99."""
        times = simulate.StepTimes(plain_s=0.008, spec_s=0.01)
        tail = mix_tail(pd.Series([1.0, 4.0] * 50), 3, times, 100)
        assert tail.at["p99", "measured_mix"] == pytest.approx(1.0)
        assert tail.at["mean", "measured_mix"] == pytest.approx(0.625, abs=0.02)
        assert 0.3 < tail.at["p99", "one_alpha"] < 0.6 and tail.at["p99", "change"] > 0.6
        assert (tail["change"] == tail["measured_mix"] / tail["one_alpha"] - 1).all()

    def test_one_length_for_every_request_is_the_one_alpha(self):
        times = simulate.StepTimes(plain_s=0.008, spec_s=0.01)
        tail = mix_tail(pd.Series([2.5] * 40), 3, times, 200, requests=4_000)
        # The same α either way; the two simulations draw apart, so they agree within sampling.
        assert tail["change"].abs().max() < 0.02

    def test_a_length_beyond_gamma_plus_one_is_refused(self):
        with pytest.raises(spec.InputError):
            mix_tail(pd.Series([2.0, 5.5]), 3, simulate.StepTimes(0.008, 0.01), 100)


    def test_on_a_scenario_is_the_tail_at_its_step_times_and_the_page_s_budget(self):
        """The Explorer's and the Latency view's figure: the scenario's step times at the mix's mean length
        (NaN left out), as many requests as SPECVIZ_PAGE_SIMULATION_CELLS allows two runs of 200 tokens."""
        chosen, lengths = make_scenario(), pd.Series([1.5, 3.0, np.nan, 4.0])
        times = chosen.step_times(batch=8, gamma=3, context=1024, acceptance_length=float(lengths.mean()))
        requests = simulate.requests_within(settings.get("SPECVIZ_PAGE_SIMULATION_CELLS"), 200, runs=2)
        expected = mix_tail(lengths.dropna(), 3, simulate.StepTimes.from_step(times), 200, requests=requests)
        pd.testing.assert_frame_equal(request_acceptance.mix_tail_on(chosen, lengths, 3, 8, 1024, 200), expected)

class TestRequestAlphas:
    times = simulate.StepTimes(plain_s=0.008, spec_s=0.01)

    @pytest.mark.parametrize("alphas", [[], [0.5, 1.5], [[0.5]], [float("nan")], "x"])
    def test_bad_mixes_are_refused(self, alphas):
        with pytest.raises(SpecvizError) as refused:
            simulate.latency(gamma=3, request_alphas=alphas, times=self.times, output_tokens=10, requests=10)
        assert refused.value.key == "simulate.bad_request_alphas"

    def test_it_is_one_source_of_acceptance(self):
        with pytest.raises(SpecvizError) as refused:
            simulate.latency(0.8, 3, request_alphas=[0.8], times=self.times, output_tokens=10, requests=10)
        assert refused.value.key == "simulate.one_source"

    def test_every_request_at_alpha_one_takes_the_fewest_steps(self):
        summary = simulate.latency(gamma=3, request_alphas=[1.0, 1.0], times=self.times, output_tokens=10, requests=7)
        # 10 tokens at 4 a step: 3 steps (the last overshoots), 30 ms each request
        assert summary.request_p99_s == pytest.approx(0.03) and summary.request_p50_s == pytest.approx(0.03)


@pytest.mark.parametrize("concurrency, outputs, batch, setting", [
    (8.0, [100, 102, 101], 64, (8, 100, True, True)),        # the run's: the first token is the prefill's
    (float("nan"), [100, 102], 64, (64, 100, True, False)),  # no concurrency: the sidebar's batch, said so
    (0.5, [None, None], 64, (64, 511, False, False)),        # no counts: the default workload's 512
    (4.0, [1, 1], 16, (4, 511, False, True)),                # one token each: nothing decoded to measure
])
def test_the_tail_is_simulated_at_the_run_s_batch_and_tokens_where_it_has_them(concurrency, outputs, batch, setting):
    assert request_acceptance.tail_setting(concurrency, pd.Series(outputs, dtype=float), batch, 512) == setting
