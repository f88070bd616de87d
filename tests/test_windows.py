"""Tests for specviz.live.windows: the step model's verdict at the batch a live server runs."""

import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from conftest import finished_requests, make_scenario
from specviz import calculator
from specviz.errors import Notice
from specviz.live import windows as live, exposition as prom, replay
from specviz.live.states import SpecDecodeState, spec_decode_states
from specviz.model import calibration, spec, step


def window(seconds: float = 10.0) -> SpecDecodeState:
    """A window of the replay exporter's simulated traffic (a vLLM V1 scrape advancing)."""
    source = replay.Replay(seed=3)
    first = prom.parse(source.text(), time=0.0)
    source.advance(seconds)
    (state,) = spec_decode_states(prom.parse(source.text(), time=seconds), first)
    return state


def window_with_requests(before: tuple[int, int, int], after: tuple[int, int, int]) -> SpecDecodeState:
    """The replay's window with vLLM's per-request histograms beside it: (count, prompt tokens,
    generation tokens) at the first scrape and at the second. The replay's model name is theirs."""
    source = replay.Replay(seed=3)
    model = replay.MODEL_PREFIX + "swiss-ai/Apertus-v1.5-70B"
    first = prom.parse(source.text() + finished_requests(*before, model=model), time=0.0)
    source.advance(10.0)
    (state,) = spec_decode_states(prom.parse(source.text() + finished_requests(*after, model=model), time=10.0),
                                       first)
    return state


class TestLiveContext:
    """The verdict at the mean context of the window's finished requests, P + O/2."""

    def test_three_requests_of_20_in_and_64_out_put_the_verdict_at_context_52(self):
        """2 requests (100 in, 300 out) before, 5 (160, 492) after: 3 finished in the window with 60
        and 192 tokens, P 20, O 64, context 20 + 64/2 = 52, where the sidebar says 1,024."""
        state = window_with_requests((2, 100, 300), (5, 160, 492))
        assert state.mean_context == 52
        chosen = make_scenario()
        verdict = live.paying_now(chosen, vars(state), 1024)
        assert chosen.context == 1024 and verdict.context == 52
        assert verdict.context_from == Notice("live.context.window", context=52, prompt=20.0, output=64.0)
        here = calculator.evaluate_scenario(chosen, round(state.alpha_iid, 3), 3, verdict.batch, 52)
        assert verdict.speedup == pytest.approx(float(here["speedup"]))
        assert "Context 52: the mean of the requests that finished in the window, 20 tokens in and 64 out" in \
            str(verdict.context_from)

    def test_a_window_in_which_no_request_finished_keeps_the_sidebar_s_context_and_says_why(self):
        state = window_with_requests((5, 160, 492), (5, 160, 492))
        assert state.mean_context is None and state.absent["mean_context"].key == "prom.absent.no_finished_requests"
        verdict = live.paying_now(make_scenario(), vars(state), 1024)
        assert verdict.context == 1024 and verdict.context_from == Notice("live.context.sidebar", context=1024)
        assert live.paying_now(make_scenario(), vars(window()), 1024).context == 1024  # no histograms: the same

    def test_the_verdict_at_context_52_beats_the_one_at_1024_for_the_seed_s_pair(self):
        """Qwen3-32B with its 0.6B draft on 2 H100s, α 0.737 (E 2.680; the window's 0.73688 to three
        decimals, as the link to the calculator carries it), γ 3, 64 running requests:
        S = E / (γc + v). At 1,024: c 0.1299, v 1.6126, 2.680 / 2.0021 = 1.34×. At 52: c 0.0794,
        v 1.6991, 2.680 / 1.9373 = 1.38×. The verify pass costs more against a plain step at the short
        context (less KV to read, nearer compute-bound), but the draft far less: its 28 layers read
        114.7 KB of KV a token against 1.2 GB of weights, so its pass shrinks by about two fifths (the
        proposer's 270 µs around it stay)."""
        state = window_with_requests((2, 100, 300), (5, 160, 492))
        chosen = make_scenario()
        at_52 = live.paying_now(chosen, {**vars(state), "running_requests": 64.0}, 1024)
        at_1024 = live.paying_now(chosen, {**vars(state), "running_requests": 64.0, "mean_context": None}, 1024)
        assert (at_52.context, at_1024.context) == (52, 1024)
        assert at_1024.speedup == pytest.approx(1.3388, abs=1e-4) and at_52.speedup == pytest.approx(1.3836, abs=1e-4)
        for verdict, draft_cost in ((at_1024, 0.1299), (at_52, 0.0794)):
            assert verdict.speedup == pytest.approx(verdict.expected_tokens / (3 * draft_cost + verdict.verify_cost),
                                                    abs=2e-4)
        assert at_52.verify_cost > at_1024.verify_cost and at_52.draft_share < at_1024.draft_share

    def test_a_batch_the_sidebar_s_context_does_not_hold_fits_at_the_window_s(self):
        """The seed's pair holds 57 sequences at context 4,096 (docs/model.md), 4,128 at 52: 58 running
        requests get no verdict at the sidebar's context, one at the window's."""
        state = window_with_requests((2, 100, 300), (5, 160, 492))
        chosen = make_scenario(context="4096")
        figures = {**vars(state), "running_requests": 58.0}
        refused = live.paying_now(chosen, {**figures, "mean_context": float("nan")}, 1024)
        assert refused.key == "live.no_fit" and refused.params["context"] == 4096
        assert "Context 4,096: the sidebar's" in str(refused)
        verdict = live.paying_now(chosen, figures, 1024)
        assert isinstance(verdict, live.PayingNow) and (verdict.batch, verdict.context) == (58, 52)

    def test_a_mean_context_past_the_model_s_positions_is_clipped_to_them(self):
        """Qwen3-32B's config says 40,960 positions: a mean of 50,000.4 runs at 40,960; 0.3 at 1."""
        chosen = make_scenario()
        assert chosen.target.max_positions == 40960
        mean = {"mean_prompt_tokens": 1.0, "mean_output_tokens": 1.0}
        assert live.live_context(chosen, {**mean, "mean_context": 50000.4})[0] == 40960
        assert live.live_context(chosen, {**mean, "mean_context": 0.3})[0] == 1
        assert live.live_context(chosen, {**mean, "mean_context": 51.5})[0] == 52


class TestPayingNow:
    def test_the_calculator_at_the_live_batch_gamma_and_acceptance(self):
        state = window()
        chosen = make_scenario(target="Llama-3.1-70B")
        verdict = live.paying_now(chosen, vars(state), 1024)
        assert verdict.batch == max(1, round(state.running_requests))
        assert verdict.gamma == round(state.num_speculative_tokens) == 3  # the recording's 3-token draft
        # The window's α to three decimals, as the link to the calculator carries it: the verdict is
        # the linked calculator's figure (an SRE's pass: 2.13× at α 0.8128 beside its 2.14× at 0.813).
        assert verdict.alpha == round(state.alpha_iid, 3) == 0.737
        here = calculator.evaluate_scenario(chosen, 0.737, 3, verdict.batch, chosen.context)
        assert verdict.speedup == pytest.approx(float(here["speedup"]))
        assert verdict.low <= verdict.speedup <= verdict.high
        _, crossings = calculator.batch_sweep(chosen, [0.737], 3, chosen.context, 1024)
        assert verdict.stops_paying_at == calculator.loses_from(crossings, 0.737) or \
            math.isnan(verdict.stops_paying_at)

    def test_few_drafts_widen_the_band_to_alpha_s_sampling_interval(self):
        """The replay's window (1,678 drafts) and the same window said to hold 40: the band's ends are
        the model's band at the ends of α's 80 % interval over the drafts (spec.alpha_interval) where
        that is wider than FEW_DRAFTS_WIDTH, as 40 drafts make it; the 1,678, and an engine without
        the count, get the model's band alone, the calculator's at that α. The speedup itself stays at
        the measured α."""
        state = window()
        chosen = make_scenario()
        many = live.paying_now(chosen, vars(state), 1024)
        few = live.paying_now(chosen, {**vars(state), "drafts": 40.0}, 1024)
        uncounted = live.paying_now(chosen, {**vars(state), "drafts": None}, 1024)
        assert many.speedup == few.speedup == uncounted.speedup
        assert (few.drafts, uncounted.drafts, uncounted.alpha_low) == (40.0, None, None)
        assert few.alpha_low < many.alpha_low < state.alpha_iid < many.alpha_high < few.alpha_high
        low, high = calculator.speedup_band(chosen, [few.alpha_low, few.alpha_high], 3, few.batch, few.context)
        assert (few.low, few.high) == (pytest.approx(low[0]), pytest.approx(high[1]))
        assert few.low < many.low == uncounted.low and few.high > many.high == uncounted.high
        assert few.few_drafts and not many.few_drafts and not uncounted.few_drafts
        # Less than one draft is no count (counters of 1e-320 had given a NaN band): the model's band alone.
        for tiny in (1e-320, 0.5):
            assert live.paying_now(chosen, {**vars(state), "drafts": tiny}, 1024) == uncounted

    def test_each_per_position_figure_s_interval_counts_the_drafts_that_reached_it(self):
        """100 drafts, 80 accepted at position 1, 50 at 2, 30 at 3: the unconditional shares over the 100,
        the conditional at 2 over the 80 that reached it and at 3 over the 50; none for a share above 1
        (counters read apart), a figure not known, or a window without the count of drafts."""
        unconditional, conditional = live.position_intervals([0.8, 0.5, 0.3], [0.8, 0.625, 0.6], 100.0)
        assert unconditional == [pytest.approx(spec.share_interval(share, 100)) for share in (0.8, 0.5, 0.3)]
        assert conditional == [pytest.approx(spec.share_interval(0.8, 100)), pytest.approx(spec.share_interval(0.625, 80)),
                               pytest.approx(spec.share_interval(0.6, 50))]
        assert live.position_intervals([0.8, 0.5], [1.2, None], 100.0)[1] == [None, None]
        assert live.position_intervals([0.8], [0.8], None) == ([None], [None])
        assert live.position_intervals([0.0, 0.0], [0.0, None], 10.0)[1][1] is None  # no draft reached 2
        assert live.position_intervals([0.05, 0.0], [0.05, 0.0], 10.0)[1][1] is None  # half a draft reached 2
        assert live.position_intervals([0.8], [0.8], 1e-320) == ([None], [None])

    def test_the_verdict_knows_the_largest_batch_the_memory_holds(self):
        """The demo replay on the default scenario (Qwen3-32B + Qwen3-0.6B on 2 H100s, context 1,024):
        the page said it "stops paying at batch 609" where 200 fit at γ 3; the verdict carries the
        memory's limit, which the page says instead of a batch past it."""
        verdict = live.paying_now(make_scenario(), vars(window()), 1024)
        live_scenario = make_scenario(gamma="3")
        assert verdict.memory_limit == live_scenario.max_batch() < 1024
        assert verdict.stops_paying_at > verdict.memory_limit or math.isnan(verdict.stops_paying_at)

    def test_the_draft_share_of_a_step_from_the_step_model_s_times(self):
        """γ·t_draft / (γ·t_draft + t_verify), what TensorRT-LLM's draft overhead measures, from the
        step model's own seconds at the live batch."""
        state = window()
        chosen = make_scenario(target="Llama-3.1-70B")
        verdict = live.paying_now(chosen, vars(state), 1024)
        times = step.step(chosen.gpu, chosen.target, chosen.draft, batch=verdict.batch, gamma=3, context=chosen.context,
                          alpha=state.alpha_iid, **chosen.parallel, precision=chosen.precision, costs=chosen.costs,
                          routing_overlap=chosen.routing_overlap)
        drafting = 3 * float(times["draft_s"])
        assert verdict.draft_share == pytest.approx(drafting / (drafting + float(times["verify_s"])))
        assert 0 < verdict.draft_share < 1

    def test_the_speedup_at_a_measured_draft_share(self):
        """E (1 − m) / v: at the model's own share, the verdict's speedup; by hand, E 2.8, v 1.2 and a
        measured 30 % give 2.8 × 0.7 / 1.2 = 1.6333."""
        verdict = live.paying_now(make_scenario(target="Llama-3.1-70B"), vars(window()), 1024)
        assert live.speedup_at_draft_share(verdict, verdict.draft_share) == pytest.approx(verdict.speedup)
        made_up = live.PayingNow(8, 3, 0.7, 2.0, 1.8, 2.2, math.nan, 0.2, expected_tokens=2.8, verify_cost=1.2,
                                 context=1024, context_from=Notice("live.context.sidebar", context=1024))
        assert live.speedup_at_draft_share(made_up, 0.3) == pytest.approx(2.8 * 0.7 / 1.2)

    @pytest.mark.parametrize("measured, gap", [(0.20, "agrees"), (0.14, "agrees"), (0.30, "higher"), (0.05, "lower")])
    def test_a_measured_draft_overhead_against_the_model_s_share(self, measured, gap):
        assert live.draft_share_gap(measured, 0.17) == gap

    def test_a_fleet_s_verdict_is_at_each_server_s_batch_not_the_fleet_s_sum(self):
        """Prometheus sums running requests over the servers it scrapes: two servers of 20 running
        requests each are two batches of 20, not one of 40 (the step model is one server's)."""
        state = window()
        chosen = make_scenario()
        fleet = live.paying_now(chosen, {**vars(state), "running_requests": 40.0, "servers": 2.0}, 1024)
        one = live.paying_now(chosen, {**vars(state), "running_requests": 20.0}, 1024)
        assert (fleet.batch, fleet.servers, one.servers) == (20, 2, 1)
        assert fleet.speedup == one.speedup and fleet.speedup > live.paying_now(
            chosen, {**vars(state), "running_requests": 40.0}, 1024).speedup
        assert live.server_batch({"running_requests": 40.0, "servers": float("nan")}) == 40.0  # no count: as summed
        assert live.server_batch({"running_requests": None, "servers": 2.0}) is None

    def test_a_batch_the_sidebar_s_setup_does_not_hold_gets_no_speedup(self):
        """The calculator's memory at context 4k: the seed's pair (Qwen3-32B, its 0.6B draft, 2 H100s,
        BF16) holds 57 sequences with the draft (docs/model.md). 58 running requests, or a fleet's 116 over
        2 servers, are a batch the sidebar says does not fit: no speedup (the step model would give
        one), but how many it holds, at which setup."""
        state = window()
        chosen = make_scenario(context="4096")
        assert isinstance(live.paying_now(chosen, {**vars(state), "running_requests": 57.0}, 1024), live.PayingNow)
        expected = Notice("live.no_fit", batch=58, most=57, gpus=2, gpu="NVIDIA H100 SXM", kv="BF16", context=4096,
                          context_from=Notice("live.context.sidebar", context=4096))
        assert live.paying_now(chosen, {**vars(state), "running_requests": 58.0}, 1024) == expected
        assert live.paying_now(chosen, {**vars(state), "running_requests": 116.0, "servers": 2.0}, 1024) == expected
        said = str(expected)
        assert said.startswith("**No verdict at 58 running requests:**") and "holds at most 57 with its draft" in said
        assert "2 × NVIDIA H100 SXM, KV cache in BF16, context 4,096" in said and "Context 4,096: the sidebar's" in said

    def test_a_window_without_what_it_needs_says_which(self):
        state = window()
        bare = {**vars(state), "running_requests": None, "alpha_iid": float("nan")}
        verdict = live.paying_now(make_scenario(), bare, 1024)
        assert isinstance(verdict, Notice) and verdict.key == "live.no_verdict"
        assert verdict.params["figures"] == "alpha_iid, running_requests"


class TestStopsNotice:
    @pytest.mark.parametrize("stops, held, said", [
        (300.0, 120, Notice("live.pays_to_memory", batch=120)),  # past what the memory holds
        (float("nan"), 120, Notice("live.pays_to_memory", batch=120)),
        (96.0, 120, Notice("live.stops_at", batch=96)),
        (float("nan"), None, Notice("live.never_stops")),
        (float("nan"), 1024, Notice("live.never_stops")),  # the memory holds every batch weighed
        (300.0, None, Notice("live.stops_at", batch=300)),
        (float("inf"), None, Notice("live.never_stops"))])
    def test_where_speculation_stops_paying_as_the_verdict_says_it(self, stops, held, said):
        verdict = live.paying_now(make_scenario(), vars(window()), 1024)
        assert live.stops_notice(replace(verdict, stops_paying_at=stops, memory_limit=held), 1024) == said


class TestLatencyLinkFields:
    def test_the_link_carries_the_window_s_rates_load_and_requests(self):
        state = window_with_requests((10, 2_000, 6_000), (30, 6_000, 19_000))
        figures = vars(state)
        served = make_scenario()
        fields = live.latency_link_fields(served, figures, [0.8, 0.7, 0.6], 0.7346)
        assert fields["latency_rates"] == "0.800, 0.700, 0.600" and fields["gamma"] == "3" and fields["alpha"] == "0.735"
        assert fields["batch"] == str(max(1, round(live.server_batch(figures))))
        assert fields["context"] == str(live.live_context(served, figures)[0])
        assert (fields["input_tokens"], fields["output_tokens"]) == ("200", "650")  # 4,000 and 13,000 over 20
        # Without the requests' histograms or an α of the sidebar's draft, neither is set.
        bare = live.latency_link_fields(served, vars(window()), [0.8], None)
        assert not {"alpha", "input_tokens", "output_tokens"} & set(bare) and bare["gamma"] == "1"


class TestCalibrateWindows:
    # Llama-3.1-70B with its Llama-3.2-1B draft on 4 H100s, at costs inside vLLM V1's priors.
    SCENARIO = make_scenario(target="Llama-3.1-70B", context="2048")
    TRUE = step.Costs(mfu=0.55, mbu=0.8, overlap=0.2, step_ms=2.0, layer_us=1.0, token_us=12.0, allreduce_us=8.0,
                      draft_pass_us=270.0, speculation_ms=1.05)

    def windows(self, batches, length=3.1, gamma=4, noise=0.0) -> pd.DataFrame:
        """Windows a server with TRUE's costs would report: tokens/s = B·E / t_spec."""
        b = np.asarray(batches, dtype=float)
        made = step.step(self.SCENARIO.gpu, self.SCENARIO.target, self.SCENARIO.draft, batch=b, gamma=gamma,
                         context=2048, acceptance_length=length, tp=self.SCENARIO.tp, costs=self.TRUE)
        rate = b * length / made["spec_s"] * (1 + noise * np.random.default_rng(0).standard_normal(b.size))
        return pd.DataFrame({"running_requests": b, "acceptance_length": length, "num_speculative_tokens": gamma,
                             "generation_throughput": rate})

    def test_recovers_the_speedup_that_made_the_windows(self):
        fit = live.calibrate_windows(self.SCENARIO, self.windows([2, 8, 16, 48, 96], noise=0.02))
        assert isinstance(fit, calibration.Fit) and not fit.warnings
        truth = step.step(self.SCENARIO.gpu, self.SCENARIO.target, self.SCENARIO.draft, batch=32, gamma=4,
                          context=2048, acceptance_length=3.1, tp=self.SCENARIO.tp, costs=self.TRUE)["speedup"]
        band = fit.predict(32, 4, 2048, 3.1)
        assert band["low"][0] <= float(truth) <= band["high"][0]
        assert band["speedup"][0] == pytest.approx(float(truth), rel=0.05)

    def test_a_fleet_s_windows_are_fitted_at_each_server_s_batch(self):
        """Windows summed over 3 servers (3× the running requests and the tokens/s) fit as one server's."""
        one = self.windows([2, 8, 16, 48, 96])
        fleet = one.assign(running_requests=3 * one.running_requests, generation_throughput=3 * one.generation_throughput,
                           servers=3.0)
        fits = [live.calibrate_windows(self.SCENARIO, frame) for frame in (one, fleet)]
        assert fits[0].predict(32, 4, 2048, 3.1)["speedup"][0] == fits[1].predict(32, 4, 2048, 3.1)["speedup"][0]

    def test_one_load_is_not_enough(self):
        notice = live.calibrate_windows(self.SCENARIO, self.windows([8, 8.2, 7.9]))
        assert notice.key == "live.calibrate_loads" and notice.params["windows"] == 3


    def test_more_windows_than_a_fit_takes_said_not_fitted(self, monkeypatch):
        monkeypatch.setattr(calibration, "MAX_FIT_CELLS", 4 * 400)
        notice = live.calibrate_windows(self.SCENARIO, self.windows([2, 8, 16, 48, 96]))
        assert notice.key == "live.calibrate_too_many" and notice.params == {"windows": 5, "most": 4}
        assert isinstance(live.calibrate_windows(self.SCENARIO, self.windows([2, 8, 16, 48])), calibration.Fit)

    def test_windows_the_calculator_cannot_price_are_left_out(self):
        """A scrape's 1e300 running requests had failed the fit with "unexpected ValueError" (an attack pass)."""
        good = self.windows([2, 8, 16, 48, 96])
        hostile = pd.DataFrame({"running_requests": [1e300, float("inf"), 8.0, 8.0], "acceptance_length": 3.1,
                                "num_speculative_tokens": [4, 4, 1e300, -1], "generation_throughput": 1e3})
        fitted = live.calibrate_windows(self.SCENARIO, pd.concat([good, hostile], ignore_index=True))
        alone = live.calibrate_windows(self.SCENARIO, good)
        assert fitted.predict(32, 4, 2048, 3.1)["speedup"][0] == alone.predict(32, 4, 2048, 3.1)["speedup"][0]
        assert live.calibrate_windows(self.SCENARIO, hostile) == Notice("live.calibrate_loads", windows=0)

    def test_each_model_is_fitted_on_its_own_windows_within_the_time_limit(self):
        over_time = pd.concat([self.windows([2, 8, 16, 48, 96]).assign(model="b"),
                               self.windows([8, 8.2, 7.9]).assign(model="a")], ignore_index=True)
        (first, refused), (second, (fitted, count, warnings)) = live.calibrate_models(self.SCENARIO, over_time, 60.0)
        assert (first, refused.key, second, count, warnings) == ("a", "live.calibrate_loads", "b", 5, [])
        assert fitted.costs != self.SCENARIO.costs and fitted.target == self.SCENARIO.target
        stopped = live.calibrate_models(self.SCENARIO, over_time, -1.0)  # past the limit before the first
        assert stopped == [(None, Notice("live.calibrate_stopped", done=0, models=2, seconds=-1.0))]


class TestReplicaTable:
    def test_data_parallel_engines_one_row_each(self):
        text = "".join(
            f'vllm:spec_decode_num_drafts_total{{engine="{e}",model_name="m"}} {d}\n'
            f'vllm:spec_decode_num_draft_tokens_total{{engine="{e}",model_name="m"}} {3 * d}\n'
            f'vllm:spec_decode_num_accepted_tokens_total{{engine="{e}",model_name="m"}} {a}\n'
            f'vllm:num_requests_running{{engine="{e}",model_name="m"}} {r}\n'
            for e, d, a, r in ((1, 100, 90, 4), (0, 100, 240, 12)))
        (summed,) = spec_decode_states(prom.parse(text))
        assert summed.summed_labels == ("engine",) and summed.acceptance_rate == pytest.approx(330 / 600)
        apart = spec_decode_states(prom.parse(text), split_by=summed.summed_labels)
        table = live.replica_table([{**vars(s), "model": s.model_name, **s.labels} for s in apart], ("engine",))
        assert list(table.columns) == ["model", "replica", *live.REPLICA_FIGURES]
        assert list(table.replica) == ["engine=0", "engine=1"]
        assert list(table.acceptance_rate) == pytest.approx([240 / 300, 90 / 300])  # hand-computed
        assert list(table.acceptance_length) == pytest.approx([3.4, 1.9])
        assert list(table.running_requests) == [12, 4]
        assert table.kv_cache_usage.isna().all()  # not exported here: NaN, not 0

    def test_a_window_s_replicas_by_the_labels_its_figures_summed(self):
        """Over a window, each replica's own increase: the Live page's table beside the summed figures."""
        def scrape(drafts: tuple[int, int], at: float) -> prom.Snapshot:
            return prom.parse("".join(
                f'vllm:spec_decode_num_drafts_total{{engine="{e}",model_name="m"}} {d}\n'
                f'vllm:spec_decode_num_draft_tokens_total{{engine="{e}",model_name="m"}} {3 * d}\n'
                f'vllm:spec_decode_num_accepted_tokens_total{{engine="{e}",model_name="m"}} {d}\n'
                for e, d in enumerate(drafts)), time=at)
        earlier, later = scrape((14000, 9000), 0.0), scrape((14902, 10000), 10.0)
        summed = spec_decode_states(later, earlier)
        assert [(s.labels, s.drafts) for s in live.replica_states(later, earlier, summed)] == [
            ({"engine": "0"}, 902), ({"engine": "1"}, 1000)]
        assert live.replica_states(later, None, summed) == []  # no window, no replicas
        one = prom.parse('vllm:spec_decode_num_drafts_total{model_name="m"} 5\n', time=0.0)
        assert live.replica_states(one, one, spec_decode_states(one, one)) == []  # nothing summed

    def test_records_of_a_prometheus_frame(self):
        records = [{"model": "m", "instance": "b:8000", "acceptance_rate": 0.5, "running_requests": 3.0},
                   {"model": "m", "instance": "a:8000", "acceptance_rate": None}]
        table = live.replica_table(records, ("instance",))
        assert list(table.replica) == ["instance=a:8000", "instance=b:8000"]
        assert np.isnan(table.acceptance_rate[0]) and table.acceptance_rate[1] == 0.5
        # vLLM's engine label is the frame's engine_label (beside the serving engine's column): named as
        # the label (an SRE's pass read "engine_label=0")
        engines = live.replica_table([{"model": "m", "engine_label": "0"}], ("engine_label",), shown=("engine",))
        assert list(engines.replica) == ["engine=0"]


class TestAge:
    """How old the figures a page heads with are, once newer ones stop coming."""

    def test_a_window_shown_after_failed_scrapes_says_when_it_ended(self):
        # 1,700,000,000 s is 2023-11-14 22:13:20 UTC; 35.2 s later is 35 s ago.
        said = live.stale_window(1_700_000_000.4, 1_700_000_035.6)
        assert said == Notice("live.stale_window", end="22:13:20 UTC", seconds=35)
        assert str(said).startswith("Figures of the window ending 22:13:20 UTC, 35 s ago: the latest scrapes failed")
        assert live.stale_window(1_700_000_000.0, 1_699_999_999.0).params["seconds"] == 0  # never "−1 s ago"

    def test_a_model_s_point_is_late_past_two_steps_before_the_range_s_end(self):
        """Steps of 60 s ending at 22:20:00 UTC: a point at 22:18:00 is two steps behind (a server whose
        latest scrape is not yet in a window), one at 22:17:00 is three, 180 s old."""
        end = 1_700_000_400.0  # 22:20:00 UTC
        assert live.late_point(end, end, 60.0) is None and live.late_point(end - 120.0, end, 60.0) is None
        late = live.late_point(end - 180.0, end, 60.0)
        assert late == Notice("live.late_point", time="22:17:00 UTC", end="22:20:00 UTC", seconds=180)
        assert str(late).startswith("Figures of the point at 22:17:00 UTC, 180 s before the range's end (22:20:00 UTC)")

    def test_a_fleet_headline_of_a_long_or_old_step_says_which(self):
        """A 24-hour range's last step: 24 minutes to 22:00:00 UTC, read at 22:04:11 (the SRE's pass had
        read "Paying now" over it, a server down at its end). A 15-minute range's step of 15 s, read
        within two of its steps (the latest scrape not yet in a window), is now; so is a 5-minute window
        that ended a minute ago."""
        end = 1_699_999_200.0  # 22:00:00 UTC
        said = live.fleet_point(end, 1440.0, end + 251.4)
        assert said == Notice("live.fleet_point", minutes=24.0, time="22:00:00 UTC", seconds=251)
        assert str(said).startswith("These figures are the range's last step: the 24.0 minutes to 22:00:00 UTC (251 s ago)")
        assert live.fleet_point(end, 15.0, end + 29.0) is None and live.fleet_point(end, 300.0, end + 60.0) is None
        # older than two of its windows: the servers stopped, which no shorter range mends (an SRE's
        # pass had read "0.2 minutes ... a shorter range gives shorter steps" on the shortest range)
        assert live.fleet_point(end, 60.0, end + 121.0) == Notice("live.fleet_point_late", time="22:00:00 UTC", seconds=121)

    def test_a_fleet_that_lost_a_server_says_its_sums_fell_with_it(self):
        """Two servers until 22:19:00 UTC, one at 22:20:00: said, with when both last reported; a steady
        count, a count that rose, and no count at all (no running-requests gauge) say nothing."""
        times = pd.Series(pd.to_datetime([1_700_000_280.0, 1_700_000_340.0, 1_700_000_400.0], unit="s"))
        said = live.servers_dropped(pd.Series([2.0, 2.0, 1.0]), times)
        assert said == Notice("live.servers_dropped", now=1, most=2, time="22:19:00 UTC")
        assert str(said).startswith("1 of the 2 servers that reported this model at 22:19:00 UTC report at its latest point")
        for steady in ([2.0, 2.0, 2.0], [1.0, 2.0, 2.0], [float("nan")] * 3, [2.0, 1.0, float("nan")]):
            assert live.servers_dropped(pd.Series(steady), times) is None
        # Where Prometheus says which stopped (query_figures' attrs["stopped"]), named: an SRE's pass.
        named = live.servers_dropped(pd.Series([2.0, 2.0, 1.0]), times, ["10.0.0.2:8000"])
        assert named == Notice("live.servers_dropped_named", now=1, most=2, time="22:19:00 UTC", gone="10.0.0.2:8000")
        assert "report at its latest point (10.0.0.2:8000 no longer)" in str(named)


class TestReusedMtpLayer:
    """A server drafting with its target's one MTP layer: the window's tokens a step are what the
    layer made, so the verdict's α is the one at which the scenario's reused layer makes them."""

    def test_the_verdict_makes_the_measured_tokens_a_step(self):
        state = window()
        deepseek = make_scenario(gpu="B200", target="DeepSeek-V3", draft="mtp", precision="fp8", tp="8")
        verdict = live.paying_now(deepseek, vars(state), 1024)
        # To α's three decimals (dE/dα is about 3 here: E within 2e-3).
        assert verdict.expected_tokens == pytest.approx(state.acceptance_length, abs=2e-3)
        assert verdict.alpha > state.alpha_iid  # the first position's, which the i.i.d. α understates
        assert deepseek.expected_tokens(verdict.alpha, verdict.gamma) == pytest.approx(state.acceptance_length, abs=2e-3)
        assert live.scenario_alpha(deepseek, state.alpha_iid, state.num_speculative_tokens) == pytest.approx(verdict.alpha)
        assert live.scenario_alpha(make_scenario(), 0.7, 3) == pytest.approx(0.7)  # a draft model: the same α

    def test_more_tokens_than_the_reused_layer_makes_is_said(self):
        """3.6 tokens a step at γ 3 (α 0.9 i.i.d.): DeepSeek-V3's one layer at reuse 0.62 makes at
        most 1 + 1 + 0.62 + 0.62³ = 2.86, so the sidebar's reuse factor is below this server's."""
        deepseek = make_scenario(gpu="B200", target="DeepSeek-V3", draft="mtp", precision="fp8", tp="8")
        said = live.scenario_alpha(deepseek, 0.9, 3)
        assert said.key == "live.reuse_short" and said.params["top"] == pytest.approx(2.858328)
        assert said.params["length"] == pytest.approx(1 + 0.9 + 0.81 + 0.729)
        figures = {"alpha_iid": 0.9, "num_speculative_tokens": 3.0, "running_requests": 8.0}
        assert live.paying_now(deepseek, figures, 1024) == said


def test_the_reuse_factor_a_window_measured():
    deepseek = make_scenario(gpu="B200", target="DeepSeek-V3", draft="mtp", precision="fp8", tp="8")
    assert deepseek.reuse_from_rates([0.8, 0.6, 0.5]) == 0.78
    assert deepseek.reuse_from_rates([0.8]) is None  # no position past the trained one
    assert deepseek.reuse_from_rates([0.8, None, 0.5]) is None and deepseek.reuse_from_rates([0.8, 1.1]) is None
    assert make_scenario().reuse_from_rates([0.8, 0.6, 0.5]) is None  # a draft model: no MTP layer to reuse


def test_the_engines_a_scrape_names_one_included_and_only_the_model_s():
    """A vLLM of one data-parallel engine labels it engine="0" and sums nothing: the verdict beside a
    sidebar of 2 attention groups must still learn it runs one (an SRE's pass)."""
    one = prom.parse(replay.recording())
    (model,) = {dict(labels)["model_name"] for _, labels in one.series["drafts"]}
    assert live.engine_labels(one, model) == {"0"} and live.engine_labels(one, "another") == set()
    two = prom.parse(replay.recording() + "".join(
        line.replace('engine="0"', 'engine="1"') + "\n" for line in replay.recording().splitlines()
        if line.startswith("vllm:spec_decode_num_drafts")))
    assert live.engine_labels(two, model) == {"0", "1"}
