"""Checking a slowdown: "speculation made vLLM 35% slower at 64 users": what would have to be true, and can it be?

Seed 000's load test lost throughput with speculation on (0.79× to 0.32× at γ 4 past the ridge), and
seed 002 measured 49 % to 62 % slower on a CPU. A slowdown claim is a speed ratio S* below 1. As for a
gain (:mod:`specviz.advice.claims`), the step model's plain and speculative steps do not depend on
acceptance, so at a fixed setting the speedup is the expected tokens per step times its value with
none accepted:

.. math:: S(α) = E(α, γ)\\,F, \\qquad F = S(0) = \\frac{t_{plain}}{t_{spec}}

F, the floor, is the least speculation can give at that γ and batch: every draft rejected, a whole
speculative step (γ draft passes and a verify pass of γ + 1 tokens a sequence) for the one token a
plain step gives. The slowdown holds where S(α) ≤ S*, that is at any acceptance up to

.. math:: α^{max} = E^{-1}(S^*/F,\\ γ)

(:func:`specviz.model.spec.alpha_from_acceptance_length`): none where S*/F < 1 (even with nothing
accepted the setting does better than S*) and every one where S*/F ≥ E(1, γ) (even full acceptance
does worse). The prediction band's edges (:func:`specviz.calculator.speedup_band`) are proportional
to E as well, so each edge has its own α: below ``alpha_certain`` (from the band's high edge) the
slowdown holds even where the costs are kind to speculation; below ``alpha_possible`` (the low edge)
only where they are unkind.

:func:`check_slowdown` returns one of :data:`specviz.advice.claims.VERDICTS`:

* ``impossible``: at every batch the claim counts and every γ it allows, the band's low edge at α = 0
  stays above S*: no acceptance, however poor, makes the setting that slow;
* ``plausible``: at the acceptance the user measured (or at any acceptance, where even α = 1 does not
  lift the band's high edge above S*), the band's high edge is at or below S* at the γ checked;
* ``conditional``: the model's figure reaches the slowdown at an acceptance up to ``alpha_max``
  (with no measured α; at any acceptance where even α = 1 does, the costs not at their kind end), or
  at the measured α only where the costs are not at the kind end of their range, or only with a
  longer draft than the one measured (the check is then at the shortest that gets there);
* ``unlikely``: only the band's low edge (costs at the unkind end) reaches it, the measured
  acceptance is above what the slowdown allows at every γ, or (with none measured) it needs less
  acceptance than the least published for the pair.

The γ checked is the claim's, else the first that reaches the slowdown at the measured α, by the
model's figure with nothing accepted, or by its band's low edge: the γ the acceptance was measured at
(``Claim.measured_gamma``) or :data:`specviz.advice.claims.MEASURED_GAMMA` (4, seed 000's load test
and a common ``num_speculative_tokens``) where it does, else the shortest that does; the table has
every γ. The batch is the claim's, else the one where that γ is slowest with nothing accepted (the
deepest slowdown it allows, usually the largest batch the memory holds with it).
A slowdown is judged on decoding alone, as a gain is, with the published measurements of this very
setup weighed as for a gain (:func:`check_slowdown`); a workload's whole request is said beside it.

References
----------
Leviathan, Kalman, Matias 2023 (arXiv 2211.17192): E(α, γ) and the speedup E / (γc + 1).
Seed 000 ("Speculative decoding makes vLLM slower: the acceptance-rate math"): past the ridge,
verifying γ + 1 positions costs about γ + 1 times as much; 0.79/0.65/0.44/0.32× at α 0.9/0.8/0.6/0.4.
Seed 002 ("a = 3.5 was not enough"): speculation 49 % to 62 % slower than plain generation.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from specviz import calculator
from specviz.advice import claim_verdict, evidence
from specviz.advice.claims import MEASURED_GAMMA, Claim, between_turns, claim_grid, no_fit_notices, with_batches
from specviz.errors import Notice
from specviz.model import spec
from specviz.model.published import PublishedAcceptance
from specviz.scenario import Scenario

__all__ = ["SlowdownCheck", "check_slowdown", "check_slowdown_at_costs", "alpha_at_most", "preferred_gamma",
           "required_as_shown", "calculator_point"]


@dataclass(frozen=True)
class SlowdownCheck:
    """The answer to a slowdown claim (:func:`check_slowdown`).

    Attributes
    ----------
    claim : Claim
        Its ``speedup`` is the claimed ratio S* < 1.
    verdict : str
        One of :data:`specviz.advice.claims.VERDICTS`.
    headline : Notice
        ``claims.slowdown.verdict.<case>``: the verdict in one sentence.
    reasons, conditions : list of Notice
        Why, and what must hold, in words a manager can forward.
    floor : dict
        The least the setting gives with nothing accepted at the γ and batch checked: ``speedup``
        (F), its band ``low`` and ``high``, ``gamma``, ``batch``, and the verify pass's and one draft
        pass's cost over a plain step (``verify_cost``, ``draft_cost``) and the verify pass's
        ``regime`` ("compute" past the ridge, else "memory").
    required : DataFrame
        One row per γ at ``floor["batch"]``: ``gamma``; ``floor``, ``floor_low``, ``floor_high``
        (S at α = 0 and its band); the highest α at which the slowdown holds by the model
        (``alpha_max``), by the band's high edge (``alpha_certain``) and by its low edge
        (``alpha_possible``), NaN where none does, 1 where every α does; the vLLM-style
        ``acceptance_rate_at_most`` and the ``acceptance_length_at_most`` at ``alpha_max`` as the conditions name it
        (rounded down to three decimals); and, with a measured α,
        ``at_alpha``, ``at_alpha_low``, ``at_alpha_high``.
    batches : DataFrame
        One row per batch of the grid: ``batch``, ``counted`` (the claim's batch, or every batch when
        it names none), ``floor``, ``floor_low``, ``floor_high`` at the γ checked; ``any_gamma_low``,
        the band's low edge at α = 0 at the γ slowest there (``any_gamma``), which ``holds_from`` and
        ``holds_up_to`` compare with the claim; and, with a measured α, ``at_alpha``,
        ``at_alpha_low``, ``at_alpha_high`` at the γ checked.
    holds_from, holds_up_to : float
        The smallest and largest counted batch at which the band's low edge at α = 0 reaches the
        slowdown at some γ (NaN: none): outside them no acceptance makes the setting that slow. Exact
        where the claim names no batch: the batches between two of the grid's where it turns are
        priced too (:func:`specviz.advice.claims.between_turns`), and are rows of ``batches``.
    holds_gaps : tuple of (int, int)
        The runs of batches between them where it does not.
    yours_from, yours_up_to, yours_gaps
        The same where the band's high edge at the measured α reaches it at the γ checked (NaN: none,
        or no α).
    memory_limit, memory_gamma : int
        As :class:`specviz.advice.claims.ClaimCheck`'s: the grid stops at the largest batch the
        memory holds with the draft, at the γ that leaves the most room.
    """

    claim: Claim
    verdict: str
    headline: Notice
    reasons: list[Notice]
    conditions: list[Notice]
    floor: dict[str, float]
    required: pd.DataFrame
    batches: pd.DataFrame
    holds_from: float
    holds_up_to: float
    holds_gaps: tuple[tuple[int, int], ...]
    yours_from: float
    yours_up_to: float
    yours_gaps: tuple[tuple[int, int], ...]
    memory_limit: int
    memory_gamma: int


def alpha_at_most(slowdown: float, floor: np.ndarray, gamma: np.ndarray, reuse: dict | None = None) -> np.ndarray:
    """The highest α at which a setting whose speedup with nothing accepted is ``floor`` gives
    ``slowdown`` or less: E⁻¹(S*/F, γ), NaN where S*/F < 1 (no acceptance is low enough), 1 where
    S*/F ≥ E(1, γ) (every acceptance is). ``reuse`` as :attr:`specviz.scenario.Scenario.reuse`.

    Examples
    --------
    Seed 000's load test, costs in ratios (verify 5 plain steps, a draft pass 0.05: F = 1/5.2): 0.65×
    at γ 4 holds up to E = 0.65 · 5.2 = 3.38 tokens a step, α 0.803 (its table: α 0.8 gives 0.65×).
    """
    reuse = reuse or {}
    length = slowdown / np.asarray(floor, dtype=float)
    gamma = np.asarray(gamma, dtype=float)
    full = np.asarray(spec.expected_tokens(1.0, gamma, **reuse), dtype=float)
    inside = np.clip(np.nan_to_num(length, nan=1.0), 1.0, full)
    alpha = np.asarray(spec.alpha_from_acceptance_length(np.minimum(inside, gamma + 1.0), gamma, **reuse), dtype=float)
    return np.where(~np.isfinite(length) | (length < 1.0), np.nan, np.where(length >= full, 1.0, alpha))


def check_slowdown(scenario: Scenario, claim: Claim, gamma_max: int, batch_max: int,
                   published: Sequence[PublishedAcceptance] = (), measured: pd.DataFrame | None = None) -> SlowdownCheck:
    """Whether the slowdown ``claim`` (``claim.speedup`` below 1) can hold in ``scenario``. See the
    module's docstring for the verdict; a claim at a batch the memory does not hold with the draft at
    any γ is ``impossible``, said as for a gain (:func:`specviz.advice.claims.no_fit_notices`), with
    nothing to draw. ``published`` are the published acceptances specviz ships: with no measured α,
    a slowdown that needs less acceptance than the least published for the scenario's own pair
    (:func:`specviz.advice.evidence.pair_acceptance`) is ``unlikely``, naming it (a manager's pass:
    DeepSeek-V3's MTP "35% slower at 64" needs α ≤ 0.055, where it is published at 0.81 and more).
    ``measured`` are published speedups (:func:`specviz.advice.evidence.comparable_published`), weighed
    as for a gain: one of this very setup as slow as the claim (:func:`specviz.advice.evidence.same_setup_as_slow`)
    stands over the model (an impossible or, with no measured α, unlikely claim is ``conditional``,
    said for the measurement); where every one at the claim's batch is faster
    (:func:`specviz.advice.evidence.same_setup_faster`), a conditional claim with no measured α is
    ``unlikely``. vLLM's blog measured DeepSeek-R1 + MTP on 2 GB300s at 0.50× at concurrency 64, where
    the model, needing α ≤ 0.015 against the pair's 0.81 published, had called 0.5× unlikely.

    The step model at α = 0 on every γ in 1..``gamma_max`` (or the claim's γ) and every batch of
    :func:`specviz.calculator.batch_grid` up to ``batch_max``, the memory's limits and the claim's
    batch, with its band; a batch a γ's draft leaves no room for is out of reach at that γ.
    """
    gammas = np.arange(1, gamma_max + 1) if claim.gamma is None else np.array([claim.gamma])
    step_scenario, limits, memory_limit, memory_gamma, grid = claim_grid(scenario, claim, gammas, batch_max)
    context = step_scenario.context
    if memory_limit < 1 or claim.batch is not None and claim.batch > memory_limit:
        headline, reasons = no_fit_notices(scenario, claim, memory_limit)
        nothing = {"speedup": math.nan, "low": math.nan, "high": math.nan, "gamma": int(gammas[0]),
                   "batch": claim.batch or 1}
        return SlowdownCheck(claim, "impossible", headline, reasons, [], nothing, pd.DataFrame({"gamma": gammas}),
                             pd.DataFrame({"batch": [], "counted": []}), *claim_verdict.NO_BATCHES,
                             *claim_verdict.NO_BATCHES, memory_limit, memory_gamma)

    def with_nothing_accepted(batches: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The speedup at α = 0 and its band's edges per γ (rows) and batch, NaN where a γ's draft
        leaves no room for the batch."""
        g, b = gammas[:, None].astype(float), batches[None, :].astype(float)
        fits = b <= limits[:, None]
        held = lambda v: np.where(fits, np.broadcast_to(np.asarray(v, dtype=float), fits.shape), np.nan)
        low, high = (held(edge) for edge in calculator.speedup_band(step_scenario, 0.0, g, b, context))
        return held(calculator.evaluate_scenario(step_scenario, 0.0, g, b, context)["speedup"]), low, high

    floor, low, high = with_nothing_accepted(grid)
    # The batches where it can happen end where they do, not at the grid's points (a regression pass:
    # "except 13–127" where the grid's next point, 141, was the first to get that slow): the batches
    # between the points where the least at any γ crosses the claim are priced too, as for a gain.
    if claim.batch is None and (extra := between_turns(grid, [-low], -claim.speedup)).size:
        grid, (floor, low, high) = with_batches(grid, extra, (floor, low, high), with_nothing_accepted(extra))
    counted = grid == claim.batch if claim.batch is not None else np.ones(grid.size, dtype=bool)
    low_counted = np.where(counted[None, :], low, np.nan)
    holds = claim_verdict.batch_range(grid, counted & (np.fmin.reduce(low, axis=0) <= claim.speedup))
    # Per γ, the least over the batches the claim counts: the model's figure, its band's low edge, and
    # (with a measured α) the model's figure there; the γ checked is the first that reaches the claim.
    least = lambda values: np.fmin.reduce(np.where(counted[None, :], values, np.nan), axis=1)
    at_measured = ([] if claim.alpha is None else
                   [np.asarray(step_scenario.expected_tokens(claim.alpha, gammas), dtype=float) * least(floor)])
    # A measurement of this very setup as slow names the γ it ran: checked there first where the claim
    # names none (a regression pass: conditions at γ 11 had stood under a measurement at γ 1).
    slow = None if measured is None else evidence.same_setup_as_slow(measured, scenario, claim.speedup, claim.batch,
                                                                      int(gammas.max()), claim.gamma)
    first = claim if slow is None or claim.measured_gamma is not None else replace(claim, measured_gamma=int(slow["gamma"]))
    chosen = _checked_gamma(first, gammas, [*at_measured, least(floor), least(low)], claim.speedup)
    row = int(np.flatnonzero(gammas == chosen)[0])
    # The batch checked: the claim's, else where the γ checked is slowest with nothing accepted.
    at = int(np.argmax(counted)) if claim.batch is not None else int(np.nanargmin(low_counted[row]))
    reuse = step_scenario.reuse
    need = lambda edge: alpha_at_most(claim.speedup, edge[:, at], gammas, reuse)
    alpha_max = need(floor)
    required = pd.DataFrame({
        "gamma": gammas, "floor": floor[:, at], "floor_low": low[:, at], "floor_high": high[:, at],
        "alpha_max": alpha_max, "alpha_certain": need(high), "alpha_possible": need(low),
        **_measures_at(alpha_max, gammas, reuse)})
    # The card's "batches where it can happen" counts every γ: its edge is drawn beside the γ checked.
    slowest = np.argmin(np.nan_to_num(low, nan=np.inf), axis=0)
    batches = pd.DataFrame({"batch": grid, "counted": counted, "floor": floor[row], "floor_low": low[row],
                            "floor_high": high[row], "any_gamma_low": np.fmin.reduce(low, axis=0),
                            "any_gamma": gammas[slowest]})
    # What the step costs at the point checked, said in the reasons.
    point = calculator.evaluate_scenario(step_scenario, 0.0, float(chosen), float(grid[at]), context)
    floor_at = {"speedup": float(floor[row, at]), "low": float(low[row, at]), "high": float(high[row, at]),
                "gamma": int(chosen), "batch": int(grid[at]), "verify_cost": float(point["verify_cost"]),
                "draft_cost": float(point["draft_cost"]), "regime": str(point["regime"])}
    yours = claim_verdict.NO_BATCHES
    if claim.alpha is not None:
        share = (np.asarray(step_scenario.expected_tokens(claim.alpha, gammas), dtype=float))[:, None]
        at_alpha = {"at_alpha": share * floor, "at_alpha_low": share * low, "at_alpha_high": share * high}
        for name, values in at_alpha.items():
            required[name] = values[:, at]
            batches[name] = values[row]
        yours = claim_verdict.batch_range(grid, counted & (at_alpha["at_alpha_high"][row] <= claim.speedup))
    verdict, headline, reasons, conditions = _verdict(scenario, claim, floor_at, required, holds, grid[counted],
                                                      float(np.nanmin(low[:, at])), int(gammas[np.nanargmin(low[:, at])]))
    if verdict == "conditional" and claim.alpha is None and (least := evidence.pair_acceptance(
            scenario, published, lowest=True)) is not None:
        alpha_max = float(required.loc[required["gamma"] == chosen, "alpha_max"].iloc[0])
        if least[0] > alpha_max:
            row_published = least[1]
            verdict, headline = "unlikely", Notice("claims.slowdown.verdict.below_pair", **headline.params)
            conditions.insert(1, Notice("claims.slowdown.condition.below_pair", alpha=claim_verdict.at_most(alpha_max, 3),
                                        published=least[0], gamma=row_published.gamma, dataset=row_published.dataset,
                                        source=row_published.source))
    verdict, headline = _weigh_measured(scenario, claim, measured, slow, required, floor_at, verdict, headline, reasons)
    if claim.workload is not None and verdict != "impossible" and (whole := _on_workload(step_scenario, claim, floor_at,
                                                                                        required)) is not None:
        reasons.append(whole)
    return SlowdownCheck(claim, verdict, headline, reasons, conditions, floor_at, required, batches, *holds, *yours,
                         memory_limit, memory_gamma)


def _weigh_measured(scenario: Scenario, claim: Claim, measured: pd.DataFrame | None, slow: pd.Series | None,
                    required: pd.DataFrame, floor: dict[str, float], verdict: str, headline: Notice,
                    reasons: list[Notice]) -> tuple[str, Notice]:
    """The verdict and headline with the published measurements of this very setup weighed (see
    :func:`check_slowdown`; ``slow``, the one as slow as the claim, where there is one), the one
    weighed named first among ``reasons`` (changed in place), and after it, where the model does not
    get that slow at the γ the measurement ran, that it does not (why its conditions are at another)."""
    if measured is None:
        return verdict, headline
    if slow is not None:
        reasons.insert(0, claim_verdict.measured_reason("claims.slowdown.reason.measured_as_slow", slow))
        there = required.loc[required["gamma"] == int(slow["gamma"])]
        if int(slow["gamma"]) != floor["gamma"] and len(there) and there["floor_low"].iloc[0] > claim.speedup:
            reasons.insert(1, Notice("claims.slowdown.reason.measured_gamma", gamma=int(slow["gamma"]),
                                     low=float(there["floor_low"].iloc[0]), batch=floor["batch"], checked=floor["gamma"],
                                     value=float(slow["value"])))
        if verdict == "impossible" or verdict == "unlikely" and claim.alpha is None:
            # At the measurement's batch, which the headline names (the model's own had stood there).
            return "conditional", Notice("claims.slowdown.verdict.measured", **{**headline.params, "batch": int(slow["batch"])})
        return verdict, headline
    faster = evidence.same_setup_faster(measured, scenario, claim.speedup, claim.batch, int(required["gamma"].max()),
                                        claim.gamma)
    if faster is None:
        return verdict, headline
    top, (low, high) = faster
    reasons.insert(0, claim_verdict.measured_reason("claims.slowdown.reason.measured_faster", top)
                   if claim.batch is not None else
                   claim_verdict.measured_reason("claims.slowdown.reason.measured_faster_any", top, low=low, high=high))
    if verdict == "conditional" and claim.alpha is None:
        return "unlikely", Notice("claims.slowdown.verdict.measured_faster", **headline.params)
    return verdict, headline


def _on_workload(scenario: Scenario, claim: Claim, floor: dict[str, float], required: pd.DataFrame) -> Notice | None:
    """What the slowdown is to a whole request of the claim's workload, at the γ and batch checked and
    the measured α, else the highest α at which it holds (as the conditions name it); None where no α
    does. A request's prefill is not sped up by speculation, so a loss in decode is a smaller one
    in the whole request's time, and the request's mean context is not the page's: "35% slower at
    batch 64" on two H100s (Qwen3-32B, γ 4, α at most 0.339) is 0.606× in decode at the mean context
    of a request of 4,000 tokens in and 300 out (4,150) and 0.609× for the whole request, whose time
    to the first token is 2.9 % of it."""
    row = required.loc[required["gamma"] == floor["gamma"]].iloc[0]
    if claim.alpha is not None:
        alpha = claim.alpha
    elif math.isnan(row["alpha_max"]):
        return None
    else:
        alpha = float(claim_verdict.at_most(float(row["alpha_max"]), 3))
    return claim_verdict.request_notice(scenario, claim.workload, alpha, int(floor["gamma"]), int(floor["batch"]),
                                        "claims.slowdown.reason.workload")


def _measures_at(alpha_max: np.ndarray, gammas: np.ndarray, reuse: dict | None = None) -> dict[str, np.ndarray]:
    """vLLM's acceptance rate and the acceptance length at each highest α as the conditions name it
    (rounded down to three decimals, :func:`specviz.advice.claim_verdict.at_most`), NaN where none: the
    table's figures are then the conditions' (at the exact α, a rate of 0.595 had stood beside a
    condition's 0.594)."""
    rate, length = claim_verdict.measures_at(claim_verdict.at_most(alpha_max, 3), gammas, reuse)
    return {"acceptance_rate_at_most": rate, "acceptance_length_at_most": length}


def _checked_gamma(claim: Claim, gammas: np.ndarray, tiers: list[np.ndarray], slowdown: float) -> int:
    """The γ a slowdown is checked at: the claim's; else the first of ``tiers`` (per γ, the least
    speedup of the batches the claim counts: the model's figure at the measured α, the model's figure
    at α = 0, its band's low edge there) that some γ brings down to ``slowdown``: the preferred γ
    (:func:`preferred_gamma`) where it does, else the shortest that does; else the γ of the deepest
    floor, which the impossible verdict names (the longest where it fits: at a batch only short drafts
    leave room for, a shorter one). A manager's pass: "2x slower" for gpt-oss-120b had been said to
    need the unkind end of the costs at γ 5, where γ 12's central figure reaches it."""
    if claim.gamma is not None:
        return int(claim.gamma)
    preferred = preferred_gamma(claim, gammas)
    for tier in tiers:
        reaching = np.nan_to_num(tier, nan=np.inf) <= slowdown
        if reaching[gammas == preferred].any():
            return preferred
        if reaching.any():
            return int(gammas[reaching].min())
    return int(gammas[np.nanargmin(tiers[-1])])


def preferred_gamma(claim: Claim, gammas: np.ndarray) -> int:
    """The γ a slowdown is checked at first where the claim names none: the one its acceptance was
    measured at (a load test ran it), else :data:`MEASURED_GAMMA` (4: seed 000's load test, and a
    common ``num_speculative_tokens``), within ``gammas``."""
    wanted = claim.measured_gamma if claim.measured_gamma is not None else MEASURED_GAMMA
    return int(min(max(wanted, gammas.min()), gammas.max()))


def _verdict(scenario: Scenario, claim: Claim, floor: dict[str, float], required: pd.DataFrame,
             holds: claim_verdict.Batches, counted: np.ndarray, deepest: float,
             deepest_gamma: int) -> tuple[str, Notice, list[Notice], list[Notice]]:
    """The verdict, its headline, reasons and conditions (see the module's docstring): ``counted``, the
    batches the claim counts; ``deepest``, the band's low edge at α = 0 at the batch checked, lowest
    over γ (at ``deepest_gamma``), what an impossible claim is said to be beyond."""
    setting = {"claim": claim.speedup, "gpu": claim_verdict.devices(scenario), "target": scenario.target.name,
               "engine": scenario.engine.name, "gamma": floor["gamma"], "batch": floor["batch"]}
    why = Notice("claims.slowdown.reason.floor", speedup=floor["speedup"], low=floor["low"], high=floor["high"],
                 gamma=floor["gamma"], batch=floor["batch"], verify=floor["verify_cost"], draft=floor["draft_cost"],
                 tokens=floor["batch"] * (floor["gamma"] + 1), steps=1.0 / floor["speedup"],
                 regime=Notice(f"claims.slowdown.regime.{floor['regime']}"))
    if math.isnan(holds[1]):
        drafts = f"γ {claim.gamma}" if claim.gamma is not None else f"γ 1–{int(required['gamma'].max())}"
        least = _apart(deepest, claim.speedup)
        return ("impossible", Notice("claims.slowdown.verdict.impossible", **setting, low=least, drafts=drafts),
                [Notice("claims.slowdown.reason.out_of_reach", claim=claim.speedup, low=least, gamma=deepest_gamma,
                        batch=floor["batch"]), why], [])
    row = required.loc[required["gamma"] == floor["gamma"]].iloc[0]
    conditions = _acceptance_conditions(scenario, claim, row)
    if claim.batch is None and (holds[0] > counted.min() or holds[1] < counted.max() or holds[2]):
        conditions.append(Notice("claims.slowdown.condition.batches", low=int(holds[0]), high=int(holds[1])))
        if holds[2]:  # the runs of batches inside that range where no γ gets that slow (the card's "except")
            conditions.append(Notice("claims.condition.except_batches", gaps=claim_verdict.batch_runs(holds[2])))
    if claim.alpha is None:
        if row["alpha_certain"] >= 1.0:
            return "plausible", Notice("claims.slowdown.verdict.any_acceptance", **setting), [why], conditions
        if row["alpha_max"] >= 1.0:
            return "conditional", Notice("claims.slowdown.verdict.any_model", **setting), [why], conditions
        if math.isnan(row["alpha_max"]):
            return "unlikely", Notice("claims.slowdown.verdict.unkind_only", **setting), [why], conditions
        return ("conditional", Notice("claims.slowdown.verdict.conditional", **setting,
                                      alpha=claim_verdict.at_most(float(row["alpha_max"]), 3)), [why], conditions)
    mine = Notice("claims.slowdown.reason.at_alpha", alpha=claim.alpha, gamma=floor["gamma"], batch=floor["batch"],
                  speedup=float(row["at_alpha"]), low=float(row["at_alpha_low"]), high=float(row["at_alpha_high"]))
    reasons = [mine, why]
    if row["at_alpha_high"] <= claim.speedup:
        return "plausible", Notice("claims.slowdown.verdict.plausible", **setting, alpha=claim.alpha), reasons, conditions
    if row["at_alpha"] <= claim.speedup:
        not_kind = [Notice("claims.slowdown.condition.not_kind", alpha=claim.alpha), *conditions]
        shorter = preferred_gamma(claim, required["gamma"].to_numpy())
        if claim.gamma is None and floor["gamma"] > shorter:
            # The γ checked is the shortest at which the measured α gets that slow: the conditions and
            # the calculator's link are at it (a manager's pass: they had stayed at γ 4, which does better).
            return ("conditional", Notice("claims.slowdown.verdict.longer_draft", **setting, alpha=claim.alpha,
                                          shorter=shorter), reasons, not_kind)
        return "conditional", Notice("claims.slowdown.verdict.band", **setting, alpha=claim.alpha), reasons, not_kind
    if row["at_alpha_low"] <= claim.speedup:
        return "unlikely", Notice("claims.slowdown.verdict.kind_only_yours", **setting, alpha=claim.alpha), reasons, conditions
    return ("unlikely", Notice("claims.slowdown.verdict.short", **setting, alpha=claim.alpha,
                               speedup=float(row["at_alpha"])), reasons, conditions)


def _apart(value: float, claim: float) -> str:
    """``value``, above ``claim``, with the decimals that show it above: "0.384" beside a claim of
    0.38, where two had read "0.38× cannot happen … at least 0.38×" (a manager's pass)."""
    for decimals in (2, 3, 4):
        shown = f"{value:.{decimals}f}"
        if float(shown) > round(claim, decimals):
            return shown
    return f"{value:.4f}"


def _acceptance_conditions(scenario: Scenario, claim: Claim, row: pd.Series) -> list[Notice]:
    """The acceptance the slowdown needs at the γ checked, as conditions: at most ``alpha_max`` (with
    its acceptance rate and tokens a step, as the calculator shows them at it) and, where it differs,
    the α below which it holds even at the kind end of the costs; any acceptance where even α = 1 slows
    the setting that much."""
    gamma = int(row["gamma"])
    if row["alpha_max"] >= 1.0:
        return [Notice("claims.slowdown.condition.any_alpha", gamma=gamma)]
    if math.isnan(row["alpha_max"]):
        return [Notice("claims.slowdown.condition.unkind_costs", gamma=gamma,
                       shown=claim_verdict.at_most(float(row["alpha_possible"]), 3))]
    shown = claim_verdict.at_most(float(row["alpha_max"]), 3)
    conditions = [Notice("claims.slowdown.condition.acceptance", shown=shown, gamma=gamma,
                         rate=float(spec.acceptance_rate_from_alpha(shown, gamma, **scenario.reuse)),
                         length=float(spec.expected_tokens(shown, gamma, **scenario.reuse)))]
    if math.isnan(row["alpha_certain"]):
        conditions.append(Notice("claims.slowdown.condition.kind_costs_too"))
    elif row["alpha_certain"] < row["alpha_max"]:
        conditions.append(Notice("claims.slowdown.condition.certain_alpha",
                                 shown=claim_verdict.at_most(float(row["alpha_certain"]), 3), gamma=gamma))
    return conditions


def check_slowdown_at_costs(claim: Claim, verify_cost: float, draft_cost: float,
                            gamma_max: int) -> tuple[str, list[Notice], pd.DataFrame]:
    """A slowdown against costs given as ratios of a plain step (the calculator's simple-ratios mode,
    seed 000's arithmetic), in closed form: F = 1 / (v + γc), and the slowdown holds up to
    α = E⁻¹(S*·(v + γc)) (:func:`alpha_at_most`). ``impossible`` where no γ in 1..``gamma_max`` (or
    the claim's) is that slow even with nothing accepted; else at the γ checked (as
    :func:`check_slowdown` picks it), ``plausible`` at any acceptance or where the measured α is at
    or below the highest, ``unlikely`` where it is above it, ``conditional`` with no measured α. The
    costs are given: no band, and batch and context do not enter.

    Examples
    --------
    Seed 000's load test (verify 5, draft 0.05, γ 4): 0.65× holds up to α 0.803, and at a measured α
    of 0.8 the setting gives 3.3616 / 5.2 = 0.646×: plausible.

    Returns
    -------
    verdict : str
    reasons : list of Notice
    required : DataFrame
        One row per γ: ``gamma``, ``floor`` (S at α = 0), ``max_speedup`` (at α = 1), ``alpha_max``,
        ``acceptance_rate_at_most``, ``acceptance_length_at_most`` (and ``at_alpha`` where α is measured).
    """
    gammas = np.arange(1, gamma_max + 1) if claim.gamma is None else np.array([claim.gamma])
    cost = np.asarray(spec.step_cost(gammas, verify_cost, draft_cost), dtype=float)
    alpha_max = alpha_at_most(claim.speedup, 1.0 / cost, gammas)
    required = pd.DataFrame({"gamma": gammas, "floor": 1.0 / cost, "max_speedup": (gammas + 1.0) / cost,
                             "alpha_max": alpha_max, **_measures_at(alpha_max, gammas)})
    costs = {"verify": verify_cost, "draft": draft_cost}
    if required["alpha_max"].isna().all():
        return "impossible", [Notice("claims.slowdown.reason.costs_out_of_reach", claim=claim.speedup,
                                     floor=float(required["floor"].min()), gamma=int(gammas.max()), **costs)], required
    at_measured = [] if claim.alpha is None else [np.asarray(spec.speedup(claim.alpha, gammas, verify_cost, draft_cost))]
    gamma = _checked_gamma(claim, gammas, [*at_measured, required["floor"].to_numpy()], claim.speedup)
    row = required.loc[required["gamma"] == gamma].iloc[0]
    floor = Notice("claims.slowdown.reason.costs_floor", gamma=gamma, floor=float(row["floor"]), **costs)
    if math.isnan(row["alpha_max"]):
        # The γ checked is never that slow: the claim's γ, given, that the longer drafts would reach.
        return "impossible", [Notice("claims.slowdown.reason.costs_out_of_reach", claim=claim.speedup,
                                     floor=float(row["floor"]), gamma=gamma, **costs)], required
    shown = claim_verdict.at_most(float(row["alpha_max"]), 3)
    needs = (Notice("claims.slowdown.condition.any_alpha", gamma=gamma) if row["alpha_max"] >= 1.0 else
             Notice("claims.slowdown.condition.acceptance", shown=shown, gamma=gamma,
                    rate=float(spec.acceptance_rate_from_alpha(shown, gamma)), length=float(spec.expected_tokens(shown, gamma))))
    if claim.alpha is None:
        return ("plausible" if row["alpha_max"] >= 1.0 else "conditional"), [floor, needs], required
    required["at_alpha"] = spec.speedup(claim.alpha, gammas, verify_cost, draft_cost)
    mine = Notice("claims.slowdown.reason.costs_measured", alpha=claim.alpha, gamma=gamma,
                  speedup=float(required.loc[required["gamma"] == gamma, "at_alpha"].iloc[0]))
    return ("plausible" if claim.alpha <= row["alpha_max"] else "unlikely"), [mine, floor, needs], required


def required_as_shown(required: pd.DataFrame, decimals: int = 3) -> pd.DataFrame:
    """:attr:`SlowdownCheck.required` as a table shows it: each highest α rounded down to ``decimals``
    as the conditions name them (:func:`specviz.advice.claim_verdict.at_most`), NaN kept; the rate and
    length are already those of the α shown."""
    return required.assign(**{c: claim_verdict.at_most(required[c], decimals)
                              for c in ("alpha_max", "alpha_certain", "alpha_possible") if c in required})


def calculator_point(check: SlowdownCheck) -> dict[str, float]:
    """Where the calculator shows a slowdown: the measured α, else the highest α at which it holds
    (rounded down to three decimals as the conditions name it, :func:`specviz.advice.claim_verdict.at_most`),
    else α = 0, at the γ and batch checked. Where the claim's batch does not fit, that ``batch``
    alone, as :func:`specviz.advice.claims.calculator_point` gives it."""
    if math.isnan(check.floor["speedup"]):
        return {"batch": check.floor["batch"]}
    row = check.required.loc[check.required["gamma"] == check.floor["gamma"]].iloc[0]
    alpha = (check.claim.alpha if check.claim.alpha is not None else
             0.0 if math.isnan(row["alpha_max"]) else claim_verdict.at_most(float(row["alpha_max"]), 3))
    return {"alpha": alpha, "gamma": check.floor["gamma"], "batch": check.floor["batch"]}
