"""Tests for specviz.advice.slowdown: a claimed slowdown ("35% slower at batch 64") checked against the
step model itself (not only through the proportionality the module relies on), seed 000's table, and
the verdict."""

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from conftest import PRESETS, make_scenario
from specviz import calculator, workload
from specviz.advice import claim_verdict, evidence, slowdown
from specviz.advice.claims import Claim
from specviz.model import spec
from specviz.results import explorer
from specviz.scenario import largest_batch

GAMMA_MAX, BATCH_MAX = 16, 1024
# Seed 000's load test, past the ridge: verifying γ + 1 = 5 positions costs 5 plain steps, a draft pass 0.05.
SEED_VERIFY, SEED_DRAFT, SEED_GAMMA = 5.0, 0.05, 4
PUBLISHED = explorer.speedup_rows(explorer.load_published(Path(__file__).resolve().parent.parent / "data"))


class TestAlphaAtMost:
    @pytest.mark.parametrize("alpha, shown", [(0.9, 0.79), (0.8, 0.65), (0.6, 0.44), (0.4, 0.32)])
    def test_seed_000_s_table_comes_back(self, alpha, shown):
        """Seed 000: α 0.9 → 0.79×, 0.8 → 0.65×, 0.6 → 0.44×, 0.4 → 0.32× at γ 4 (E / (5 + 4·0.05)). The
        highest α at which each exact figure holds is the α it was computed at; by hand, E(0.8, 4) =
        (1 − 0.8⁵) / 0.2 = 3.3616, over 5.2: 0.6465."""
        floor = 1.0 / (SEED_VERIFY + SEED_GAMMA * SEED_DRAFT)
        exact = float(spec.speedup(alpha, SEED_GAMMA, SEED_VERIFY, SEED_DRAFT))
        assert round(exact, 2) == shown
        assert float(slowdown.alpha_at_most(exact, floor, SEED_GAMMA)) == pytest.approx(alpha, abs=1e-9)
        assert float(spec.speedup(0.8, 4, 5, 0.05)) == pytest.approx(3.3616 / 5.2)

    def test_no_acceptance_or_every_one(self):
        """S*/F below 1: even nothing accepted does better (NaN); at or past E(1, γ) = γ + 1: every α (1)."""
        assert math.isnan(float(slowdown.alpha_at_most(0.3, 0.5, 4)))
        assert float(slowdown.alpha_at_most(0.9, 0.18, 4)) == 1.0  # 0.9 / 0.18 = 5 = γ + 1
        assert float(slowdown.alpha_at_most(0.5, 0.5, 4)) == 0.0  # S* = F: only α = 0

    @settings(max_examples=60, deadline=None)
    @given(st.floats(0.05, 0.99), st.floats(0.02, 0.99), st.integers(1, 16))
    def test_below_it_the_setting_is_at_least_that_slow(self, slowdown_claimed, floor, gamma):
        """The invariant the verdict rests on: at α_max the speedup E·F is the claim; below, less."""
        alpha = float(slowdown.alpha_at_most(slowdown_claimed, floor, gamma))
        if math.isnan(alpha):
            assert floor > slowdown_claimed
        elif alpha < 1.0:
            assert float(spec.expected_tokens(alpha, gamma)) * floor == pytest.approx(slowdown_claimed, rel=1e-9)
            assert float(spec.expected_tokens(alpha * 0.9, gamma)) * floor <= slowdown_claimed + 1e-12
        else:
            assert (gamma + 1) * floor <= slowdown_claimed + 1e-12


class TestCheckSlowdown:
    def test_the_highest_alpha_is_where_the_step_model_gives_the_claim(self):
        """0.65× at batch 64 on the default scenario (2 H100s, Qwen3-32B drafted by Qwen3-0.6B under vLLM):
        at the α the check names, the calculator's own speedup at γ 4 is the claim."""
        chosen = make_scenario()
        check = slowdown.check_slowdown(chosen, Claim(0.65, batch=64), GAMMA_MAX, BATCH_MAX)
        assert check.verdict == "conditional" and check.floor["gamma"] == 4 and check.floor["batch"] == 64
        row = check.required.set_index("gamma").loc[4]
        at = calculator.evaluate_scenario(chosen, row["alpha_max"], 4, 64, chosen.context)
        assert float(at["speedup"]) == pytest.approx(0.65, rel=1e-9)
        nothing = calculator.evaluate_scenario(chosen, 0.0, 4, 64, chosen.context)
        assert check.floor["speedup"] == pytest.approx(float(nothing["speedup"]))
        assert check.floor["speedup"] == pytest.approx(float(nothing["baseline_step_ms"] / nothing["spec_step_ms"]))
        # Each band edge's α: the certain one (the band's high edge) is the lowest.
        assert row["alpha_certain"] < row["alpha_max"] < row["alpha_possible"]
        assert check.headline.key == "claims.slowdown.verdict.conditional"
        assert check.headline.params["alpha"] == claim_verdict.at_most(row["alpha_max"], 3) <= row["alpha_max"]
        assert slowdown.calculator_point(check) == {"alpha": check.headline.params["alpha"], "gamma": 4, "batch": 64}

    def test_a_measured_acceptance_decides(self):
        chosen = make_scenario()
        low = slowdown.check_slowdown(chosen, Claim(0.65, batch=64, alpha=0.1), GAMMA_MAX, BATCH_MAX)
        assert low.verdict == "plausible" and low.required.set_index("gamma").loc[4, "at_alpha_high"] <= 0.65
        assert low.yours_from == low.yours_up_to == 64
        high = slowdown.check_slowdown(chosen, Claim(0.65, batch=64, alpha=0.9), GAMMA_MAX, BATCH_MAX)
        assert high.verdict == "unlikely" and high.headline.key == "claims.slowdown.verdict.short"
        assert high.required["at_alpha"].min() > 0.65  # no γ falls that low at α 0.9
        # At α 0.6, γ 4 gives about 0.99×: only a longer draft makes it 0.65×, and the check is at the
        # shortest that does, its conditions and the calculator's link too (a manager's pass).
        middle = slowdown.check_slowdown(chosen, Claim(0.65, batch=64, alpha=0.6), GAMMA_MAX, BATCH_MAX)
        longer = middle.floor["gamma"]
        speeds = middle.required.set_index("gamma")["at_alpha"]
        assert middle.headline.key == "claims.slowdown.verdict.longer_draft" and middle.headline.params["shorter"] == 4
        assert speeds[longer] <= 0.65 < speeds[longer - 1] and longer > 4
        assert slowdown.calculator_point(middle)["gamma"] == longer
        assert all(c.params.get("gamma", longer) == longer for c in middle.conditions)
        # Measured at γ 2 (a vLLM rate is one γ's), the check starts there, not at γ 4.
        at_two = slowdown.check_slowdown(chosen, Claim(0.65, batch=64, alpha=0.05, measured_gamma=2), GAMMA_MAX, BATCH_MAX)
        assert at_two.floor["gamma"] == 2

    def test_less_acceptance_than_the_pair_is_published_at_is_unlikely(self):
        """DeepSeek-V3's MTP on 8 B200s: "35% slower at batch 64" needs α ≤ 0.055, where the pair is
        published at 0.81 at least (a manager's pass): unlikely, naming it; measured, the user's α decides."""
        chosen = make_scenario(gpu="B200", target="DeepSeek-V3", draft="mtp", tp="8")
        check = slowdown.check_slowdown(chosen, Claim(0.65, batch=64), GAMMA_MAX, BATCH_MAX, PRESETS.acceptance)
        least, _ = evidence.pair_acceptance(chosen, PRESETS.acceptance, lowest=True)
        below = next(c for c in check.conditions if c.key == "claims.slowdown.condition.below_pair")
        assert check.verdict == "unlikely" and check.headline.key == "claims.slowdown.verdict.below_pair"
        assert below.params["published"] == least > below.params["alpha"]
        assert slowdown.check_slowdown(chosen, Claim(0.65, batch=64), GAMMA_MAX, BATCH_MAX).verdict == "conditional"

    def test_deeper_than_nothing_accepted_allows_is_impossible(self):
        """0.05×: even γ 16 with every draft rejected gives more at the band's low edge."""
        check = slowdown.check_slowdown(make_scenario(), Claim(0.05), GAMMA_MAX, BATCH_MAX)
        assert check.verdict == "impossible" and math.isnan(check.holds_up_to)
        deepest = float(check.headline.params["low"])
        assert deepest > 0.05 and deepest == pytest.approx(check.required["floor_low"].min(), abs=0.005)
        assert check.headline.params["drafts"] == "γ 1–16"

    def test_an_impossible_figure_is_shown_above_the_claim(self):
        """"0.38× cannot happen … at least 0.38×" (a manager's pass): the least is 0.3835, shown so."""
        check = slowdown.check_slowdown(make_scenario(), Claim(0.38, gamma=2, batch=229), GAMMA_MAX, BATCH_MAX)
        assert check.verdict == "impossible" and check.headline.params["low"] == "0.383"

    def test_no_batch_named_checks_the_slowest_and_says_the_range(self):
        check = slowdown.check_slowdown(make_scenario(), Claim(0.65), GAMMA_MAX, BATCH_MAX)
        floors = check.batches.set_index("batch")["floor"].dropna()  # γ 4's: a longer draft holds fewer
        # The largest batch γ 4's draft leaves room for, one short of γ 1's: the slowest there.
        assert check.floor["batch"] == floors.index.max() == check.memory_limit - 1
        assert check.floor["speedup"] == pytest.approx(floors.min())
        assert check.holds_from == 1 and check.holds_up_to == check.memory_limit

    def test_the_batches_where_it_can_happen_are_where_the_slowest_gamma_s_edge_is_under_the_claim(self):
        """The card counts every γ, the chart's lines are the γ checked (6 for 0.25×): the chart draws
        the slowest γ's unfavourable edge too, and the card's batches are where it is under the claim."""
        check = slowdown.check_slowdown(make_scenario(), Claim(0.25), GAMMA_MAX, BATCH_MAX)
        under = check.batches.loc[check.batches["any_gamma_low"] <= 0.25, "batch"]
        assert check.floor["gamma"] == 6 and (check.holds_from, check.holds_up_to) == (under.min(), under.max()) == (13, 228)
        assert check.holds_gaps == () and len(under) == check.batches["batch"].between(13, 228).sum()
        # Below batch 13 the slowest are longer drafts, and γ 6 itself stays above the claim there.
        small = check.batches[check.batches["batch"] < 13]
        assert (small["any_gamma"] > 6).all() and (small["floor_low"] > 0.25).all()
        fits = check.batches.dropna(subset=["floor_low"])  # γ 6 leaves no room at the last batch, γ 1 does
        assert (fits["any_gamma_low"] <= fits["floor_low"]).all() and len(fits) == len(check.batches) - 1

    def test_a_workload_says_what_the_slowdown_is_to_a_whole_request(self):
        """At the γ and batch checked and the highest α (as the conditions name it), else the measured
        one: decode at the request's mean context, and the whole request nearer 1 (its prefill is not
        sped up)."""
        for alpha, shown in ((None, 0.339), (0.3, 0.3)):
            check = slowdown.check_slowdown(make_scenario(), Claim(0.65, batch=64, workload=(4000, 300), alpha=alpha),
                                            GAMMA_MAX, BATCH_MAX)
            said = check.reasons[-1]
            whole = workload.end_to_end(make_scenario(), shown, 4, 64, 4000, 300)
            assert said.key == "claims.slowdown.reason.workload" and (said.params["alpha"], said.params["gamma"]) == (shown, 4)
            assert (said.params["decode"], said.params["request"]) == pytest.approx(
                (float(whole["decode_speedup"]), float(whole["e2e_speedup"])))
            assert said.params["decode"] < said.params["request"] < 1.0 and said.params["context"] == 4150
        assert check.reasons[-1].params["decode"] == pytest.approx(0.573, abs=1e-3)
        impossible = slowdown.check_slowdown(make_scenario(), Claim(0.05, workload=(4000, 300)), GAMMA_MAX, BATCH_MAX)
        assert not any(r.key == "claims.slowdown.reason.workload" for r in impossible.reasons)

    def test_the_batches_where_it_can_happen_end_where_they_do_not_at_the_grid(self):
        """A regression pass: 0.2x for gpt-oss-120b + EAGLE-3 on one H100 gave "except 13–127", the grid's
        next point (141) the first to get that slow again; the batches between are priced: 12–140, as the
        band's low edge at α = 0 at each γ says at batches 11, 12, 140 and 141."""
        chosen = make_scenario(gpu="H100-SXM", target="gpt-oss-120b", draft="eagle3", tp="1")
        check = slowdown.check_slowdown(chosen, Claim(0.2), GAMMA_MAX, BATCH_MAX)
        assert check.holds_gaps == ((12, 140),) and (check.holds_from, check.holds_up_to) == (1, 264)
        step = replace(chosen, mode="step", prefill=False)
        gammas = np.arange(1, GAMMA_MAX + 1)
        limits = np.asarray(largest_batch(chosen.gpu, chosen.target, chosen.draft, chosen.precision, tp=chosen.tp,
                                          dp=chosen.dp, context=chosen.context, gamma=gammas, rule=chosen.engine.memory))
        for batch, reaches in ((11, True), (12, False), (140, False), (141, True)):
            fits = gammas[limits >= batch].astype(float)  # the drafts that leave room for the batch
            low, _ = calculator.speedup_band(step, 0.0, fits, float(batch), step.context)
            assert (np.min(low) <= 0.2) == reaches, batch

    def test_at_a_batch_only_short_drafts_hold_the_deepest_that_fits_is_named(self):
        """At the memory's limit (229: γ 1 and 2 leave room) an impossible 0.2× names γ 2's floor, the
        deepest that fits, not γ 16's (which has no room there, and had been named as nan)."""
        check = slowdown.check_slowdown(make_scenario(), Claim(0.2, batch=229), GAMMA_MAX, BATCH_MAX)
        held = check.required.dropna(subset=["floor"])
        assert check.verdict == "impossible" and list(held["gamma"]) == [1, 2]
        assert check.floor["gamma"] == 2 and check.floor["low"] == pytest.approx(held["floor_low"].min())
        assert all(not math.isnan(v) for v in check.reasons[1].params.values() if isinstance(v, float))

    def test_a_batch_that_does_not_fit_gets_no_figure(self):
        check = slowdown.check_slowdown(make_scenario(), Claim(0.5, batch=100_000), GAMMA_MAX, BATCH_MAX)
        assert check.verdict == "impossible" and check.headline.key == "claims.verdict.no_fit"
        assert math.isnan(check.floor["speedup"]) and check.batches.empty
        assert slowdown.calculator_point(check) == {"batch": 100_000}

    def test_the_claim_s_gamma_is_the_one_checked(self):
        check = slowdown.check_slowdown(make_scenario(), Claim(0.65, batch=64, gamma=2), GAMMA_MAX, BATCH_MAX)
        assert check.floor["gamma"] == 2 and list(check.required["gamma"]) == [2]
        at_64 = check.batches.set_index("batch").loc[64]
        assert at_64["floor"] == pytest.approx(check.required["floor"].iloc[0]) == pytest.approx(check.floor["speedup"])


class TestAtGivenCosts:
    def test_seed_000_s_load_test(self):
        """Verify 5 plain steps, a draft pass 0.05, γ 4: 0.65× holds up to α 0.8028; seed 000 measured
        α 0.8 there (0.65×): plausible. At α 0.9 (0.79×) it is not."""
        verdict, reasons, required = slowdown.check_slowdown_at_costs(Claim(0.65, gamma=4), 5.0, 0.05, GAMMA_MAX)
        assert verdict == "conditional" and required["alpha_max"].iloc[0] == pytest.approx(0.80279, abs=1e-5)
        assert float(spec.speedup(required["alpha_max"].iloc[0], 4, 5.0, 0.05)) == pytest.approx(0.65)
        assert reasons[1].params["shown"] == 0.802 and reasons[1].params["rate"] == pytest.approx(
            float(spec.acceptance_rate_from_alpha(0.802, 4))) == pytest.approx(required["acceptance_rate_at_most"].iloc[0])
        assert slowdown.check_slowdown_at_costs(Claim(0.65, gamma=4, alpha=0.8), 5.0, 0.05, GAMMA_MAX)[0] == "plausible"
        assert slowdown.check_slowdown_at_costs(Claim(0.65, gamma=4, alpha=0.9), 5.0, 0.05, GAMMA_MAX)[0] == "unlikely"

    def test_out_of_reach_and_every_acceptance(self):
        # Cheap passes (verify 1, draft 0.05): γ 4 with nothing accepted gives 1/1.2 = 0.83×, never 0.5×.
        verdict, _, _ = slowdown.check_slowdown_at_costs(Claim(0.5, gamma=4), 1.0, 0.05, GAMMA_MAX)
        assert verdict == "impossible"
        # A verify pass of 6 at γ 4: even all accepted, 5 / 6.2 = 0.81×: any acceptance is 0.9× or slower.
        verdict, reasons, _ = slowdown.check_slowdown_at_costs(Claim(0.9, gamma=4), 6.0, 0.05, GAMMA_MAX)
        assert verdict == "plausible" and reasons[1].key == "claims.slowdown.condition.any_alpha"


class TestPublishedMeasurements:
    """vLLM's blog measured DeepSeek-R1 NVFP4 + MTP (1 token) on 2 GB300s under prompts of 2,048 tokens:
    TPOT 0.50× plain at concurrency 64 (total throughput 0.81×, end-to-end latency 0.83×), 0.69× at 128."""

    GB300 = dict(gpu="GB300", tp="2", target="DeepSeek-V3", draft="mtp", engine="vllm-v1", precision="nvfp4")

    def check(self, claim: Claim, **changes: str) -> slowdown.SlowdownCheck:
        chosen = make_scenario(**{**self.GB300, **changes}, context="2048")
        measured = evidence.comparable_published(PUBLISHED, chosen, PRESETS)
        return slowdown.check_slowdown(chosen, claim, GAMMA_MAX, BATCH_MAX, PRESETS.acceptance, measured)

    def test_a_measurement_as_slow_stands_over_the_pair_s_acceptance(self):
        """Without it 0.5× at 64 is unlikely (α ≤ 0.015 against 0.81 published for the pair)."""
        check = self.check(Claim(0.5, batch=64))
        first = check.reasons[0]
        assert check.verdict == "conditional" and check.headline.key == "claims.slowdown.verdict.measured"
        assert first.key == "claims.slowdown.reason.measured_as_slow"
        assert (first.params["value"], first.params["batch"], first.params["gamma"]) == (0.5, 64, 1)
        assert first.params["metric"].key == "metric.tpot_speedup"
        alone = slowdown.check_slowdown(make_scenario(**self.GB300, context="2048"), Claim(0.5, batch=64), GAMMA_MAX,
                                        BATCH_MAX, PRESETS.acceptance)
        assert alone.verdict == "unlikely" and alone.headline.key == "claims.slowdown.verdict.below_pair"
        assert check.conditions == alone.conditions  # the model's own reading stays said
        # The model at the measurement's γ 1 does not get that slow (its least there, 0.72×): said, and why
        # the conditions are at another γ (a regression pass).
        second = check.reasons[1]
        assert second.key == "claims.slowdown.reason.measured_gamma" and second.params["gamma"] == 1
        assert second.params["low"] == pytest.approx(float(check.required.set_index("gamma").at[1, "floor_low"]))
        assert second.params["low"] > 0.5 and second.params["checked"] == check.floor["gamma"] != 1

    def test_with_no_batch_named_the_headline_names_the_measurement_s(self):
        """A regression pass: "0.5x" with no batch had been "measured … at batch 1024", the model's
        slowest batch, where the measurement was at 64."""
        check = self.check(Claim(0.5))
        assert check.headline.key == "claims.slowdown.verdict.measured" and check.headline.params["batch"] == 64
        assert check.floor["batch"] != 64

    def test_a_loss_at_a_smaller_batch_is_one_at_a_larger_and_not_the_other_way(self):
        assert self.check(Claim(0.5, batch=100)).reasons[0].params["batch"] == 64
        assert not any(r.key.startswith("claims.slowdown.reason.measured") for r in self.check(Claim(0.5, batch=32)).reasons)

    def test_an_end_to_end_figure_shows_a_loss_but_not_a_gain(self):
        """0.83× end to end at 64 carries the prompts' prefill, which speculation leaves: decoding lost
        more. A claim of 0.45× is slower than every figure of decoding there (0.50×, 0.81×)."""
        slowest = evidence.same_setup_as_slow(
            evidence.comparable_published(PUBLISHED, make_scenario(**self.GB300, context="2048"), PRESETS)
            .query("metric == 'e2e_latency_speedup'"), make_scenario(**self.GB300, context="2048"), 0.83, 64, GAMMA_MAX)
        assert (slowest["value"], slowest["batch"]) == (pytest.approx(0.8267), 64)
        check = self.check(Claim(0.45, batch=64))
        first = check.reasons[0]
        assert first.key == "claims.slowdown.reason.measured_faster" and first.params["value"] == 0.5
        assert check.verdict == "unlikely"

    def test_faster_everywhere_makes_a_conditional_claim_unlikely(self):
        """0.65× at batch 64 is conditional by the model alone (no published acceptance given): the
        shipped rows moved to 1.2× stand for measurements faster than the claim."""
        chosen = make_scenario(**self.GB300, context="2048")
        faster = evidence.comparable_published(PUBLISHED, chosen, PRESETS).assign(value=1.2)
        check = slowdown.check_slowdown(chosen, Claim(0.65, batch=64), GAMMA_MAX, BATCH_MAX, (), faster)
        assert slowdown.check_slowdown(chosen, Claim(0.65, batch=64), GAMMA_MAX, BATCH_MAX).verdict == "conditional"
        assert check.verdict == "unlikely" and check.headline.key == "claims.slowdown.verdict.measured_faster"
        assert check.reasons[0].params["value"] == 1.2

    def test_a_measurement_lifts_an_impossible_figure(self):
        """0.25× is beyond what the model allows there (at least 0.31×): a measurement of this setup as
        slow (the shipped row moved to 0.2×) stands over it."""
        chosen = make_scenario(**self.GB300, context="2048")
        assert slowdown.check_slowdown(chosen, Claim(0.25, batch=64), GAMMA_MAX, BATCH_MAX).verdict == "impossible"
        slower = evidence.comparable_published(PUBLISHED, chosen, PRESETS).assign(value=0.2)
        check = slowdown.check_slowdown(chosen, Claim(0.25, batch=64), GAMMA_MAX, BATCH_MAX, (), slower)
        assert check.verdict == "conditional" and check.headline.key == "claims.slowdown.verdict.measured"

