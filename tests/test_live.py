"""Tests for specviz.live: the step model's verdict at the batch a live server runs."""

import math

import pytest

from conftest import make_scenario
from specviz import calculator, live, prom, replay
from specviz.errors import Notice


def window(seconds: float = 10.0) -> prom.SpecDecodeState:
    """A window of the replay exporter's simulated traffic (a vLLM V1 scrape advancing)."""
    source = replay.Replay(seed=3)
    first = prom.parse(source.text(), time=0.0)
    source.advance(seconds)
    (state,) = prom.spec_decode_states(prom.parse(source.text(), time=seconds), first)
    return state


class TestPayingNow:
    def test_the_calculator_at_the_live_batch_gamma_and_acceptance(self):
        state = window()
        chosen = make_scenario(target="Llama-3.1-70B")
        verdict = live.paying_now(chosen, vars(state), 1024)
        assert verdict.batch == max(1, round(state.running_requests))
        assert verdict.gamma == round(state.num_speculative_tokens) == 3  # the recording's 3-token draft
        assert verdict.alpha == state.alpha_iid
        here = calculator.evaluate_scenario(chosen, state.alpha_iid, 3, verdict.batch, chosen.context)
        assert verdict.speedup == pytest.approx(float(here["speedup"]))
        assert verdict.low <= verdict.speedup <= verdict.high
        _, crossover = calculator.batch_sweep(chosen, [state.alpha_iid], 3, chosen.context, 1024)
        assert verdict.stops_paying_at == crossover.iloc[0] or math.isnan(verdict.stops_paying_at)

    def test_a_window_without_what_it_needs_says_which(self):
        state = window()
        bare = {**vars(state), "running_requests": None, "alpha_iid": float("nan")}
        verdict = live.paying_now(make_scenario(), bare, 1024)
        assert isinstance(verdict, Notice) and verdict.key == "live.no_verdict"
        assert verdict.params["figures"] == "alpha_iid, running_requests"
