"""Why the verify pass costs what it does: the batches at which it and the plain pass turn
compute-bound, the Why panel's explanation of its regime, the expert tax of a mixture of experts,
and the roofline's points. No Streamlit; each figure from the same
:func:`specviz.calculator.evaluate_scenario` as the headline.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from . import calculator
from .errors import Notice
from .model import drafters, roofline, step
from .scenario import Scenario

__all__ = ["MOE_HEAVY_RATIO", "SPECULATION_NOTE_SHARE", "at_batch", "ridge_detail_key", "message_suffix",
           "explanation_notes", "regime_crossovers", "regime_explanation", "expert_tax", "expert_tax_verdict",
           "roofline_points"]


def regime_crossovers(scenario: Scenario, alpha: float, gamma: int, context: int,
                      batch_max: int) -> dict[str, float]:
    """Batches at which the verify pass and the plain decode pass turn compute-bound, at ``alpha``:
    under a steady load a speculative step carries the prompts of E(α) tokens' worth of finished
    requests, so the verify pass turns sooner the more is accepted (Qwen3-32B on 2 H100s, 2,000
    tokens in and 100 out, γ 4: batch 8 at α 0.3, 3 at α 0.9).

    Returns
    -------
    dict
        ``verify`` and ``baseline``: the smallest batch in 1..batch_max whose pass is compute-bound
        (NaN if none is). Between the two, verify costs more than a plain pass but less than γ + 1
        of them; past ``baseline`` the seed's compute-bound table applies.
    """
    if scenario.mode != "step":
        return {"verify": float("nan"), "baseline": float("nan")}
    every = np.arange(1, batch_max + 1)
    r = calculator.evaluate_scenario(scenario, alpha, gamma, every, context)
    memory = lambda regime: np.where(regime == "memory", 1.0, 0.0)
    return {"verify": roofline.crossover_batch(every, memory(r["regime"]), 0.5),
            "baseline": roofline.crossover_batch(every, memory(r["baseline_regime"]), 0.5)}


# Above this ratio of the expert weights a verify pass reads to a plain pass's, the experts are why a
# memory-bound verify pass costs more than a plain one (below it the Why panel names the positions'
# own work): a tenth more, which a reader can tell from the positions' own matmuls and KV reads.
MOE_HEAVY_RATIO = 1.1


# A memory-bound verify pass below this cost (in plain passes) reads about what a plain pass reads,
# and is explained as such; above it, the Why panel says what it reads besides.
_MEMORY_HEAVY_VERIFY_COST = 1.2


def _experts_read(scenario: Scenario, alpha: float, gamma: int, batch: float) -> tuple[float, float]:
    """The routed experts per MoE layer that a plain pass and a verify pass read
    (:func:`specviz.model.roofline.experts_touched`): B tokens and a steady load's B·P/O prompts, and
    the verify pass's B·(γ + 1) positions, which share the scenario's ``routing_overlap`` of their
    experts with the token before them (B·(1 + γ(1 − q)) independent tokens,
    :func:`specviz.model.step.verify_routed_tokens`), and E times the prompts."""
    prompts = float(scenario.prompts_per_step(batch))
    routed = (step.verify_routed_tokens(batch, gamma + 1, scenario.routing_overlap)
              + float(scenario.expected_tokens(alpha, gamma)) * prompts)
    plain, verify = (float(roofline.experts_touched(scenario.target, tokens)) for tokens in (batch + prompts, routed))
    return plain, verify


def regime_explanation(scenario: Scenario, here: dict[str, np.ndarray]) -> tuple[str, str, dict[str, float]]:
    """Which passes wait on memory at one point of :func:`evaluate_scenario` (step mode), as the
    message key of the regime (``calc.regime.memory``/``compute``), the message key that explains it,
    and the figures both quote. Under a steady load (``scenario.prefill``) it is ``load``: the prompts
    a step carries, E times as many in a speculative one, set the verify pass's cost.

    A memory-bound verify pass is cheap only if it reads about what a plain pass reads: past 1.2× a
    plain pass (``_MEMORY_HEAVY_VERIFY_COST``) it is ``memory_heavy_moe`` where its γ + 1 positions
    read more than :data:`MOE_HEAVY_RATIO` times the expert weights of a plain pass (:func:`expert_tax`'s ratio)
    and that tax (``experts_cost``: the pass's cost less its cost without the tax) makes at least half of
    what the pass costs beyond a plain one, ``memory_heavy`` otherwise, for a dense model or a mixture of experts whose plain pass already
    reads (nearly) every expert: the positions' matmuls and KV traffic add to the weight reads where
    compute and memory time do not overlap (Kimi-K2 at batch 256 reads 382 and 384 of 384 experts). A verify pass past the ridge
    while the plain one is not is ``between``; with both past it, ``compute``. The ridge is the one
    the verify pass meets: its FLOPs over its compute time at each format's peak, over bandwidth, at
    the shares of them reached (mfu, mbu); ``datasheet_ridge`` is the same without the shares, which is
    the sidebar's ``sidebar_ridge`` where every matmul runs at one peak (not for gpt-oss's MXFP4
    experts beside its BF16 attention).

    ``verify_cost`` in the figures is the verify pass's own, without the speculative step's work
    (``costs.speculation_ms``), which ``speculation_share`` gives as a share of a plain step, beside
    ``draft_pass_share``, the γ draft passes' proposer work (``costs.draft_pass_us``): what only
    speculation pays, explained apart from the pass it does not come from.
    """
    regime = str(here["regime"])
    plain_ms = float(here["baseline_step_ms"])
    speculation_share = scenario.costs.speculation_ms / plain_ms
    passes = float(drafters.proposer_passes(scenario.draft.kind, float(here["gamma"])))
    draft_pass_share = passes * scenario.costs.draft_pass_us * 1e-3 / plain_ms
    pass_cost = float(here["verify_cost"]) - speculation_share
    experts_cost = 0.0  # what routing the verify positions to more experts adds to the pass, where it is asked
    if scenario.prefill:  # the load's prompts, not the drafts, set what a verify pass costs
        explain = "calc.explain.load"
    elif regime == "memory":
        if pass_cost < _MEMORY_HEAVY_VERIFY_COST:
            explain = "calc.explain.memory"
        else:
            plain, verify = _experts_read(scenario, float(here["alpha"]), int(here["gamma"]), float(here["batch"])) \
                if scenario.target.num_experts else (1.0, 1.0)
            if verify / plain > MOE_HEAVY_RATIO:
                untaxed = calculator.evaluate_scenario(scenario, float(here["alpha"]), int(here["gamma"]), float(here["batch"]),
                                            float(here["context"]), expert_tax=False)
                experts_cost = pass_cost - (float(untaxed["verify_cost"]) - speculation_share)
            # The experts are named where they make at least half of what the pass costs beyond a plain
            # one (DeepSeek-V3 + MTP on 8 B200s at batch 64: 0.11 of 0.33, and the panel had named them).
            explain = "calc.explain.memory_heavy_moe" if experts_cost >= (pass_cost - 1.0) / 2 else "calc.explain.memory_heavy"
    else:
        explain = "calc.explain.between" if str(here["baseline_regime"]) == "memory" else "calc.explain.compute"
    # The pass's own ridge without the shares: its formats' peaks weighted by their FLOPs, which is the
    # sidebar's (its largest part's peak) where every matmul runs at one peak.
    datasheet_ridge = float(here["ridge_flop_per_byte"]) * scenario.costs.mbu / scenario.costs.mfu
    prompts = float(here["tokens_per_plain"]) - float(here["batch"])
    # One attention group's pass, whose intensity this is: with data-parallel attention each group runs
    # its B/dp sequences (a browser pass: "1,280 positions" beside the intensity of a group's 320).
    figures = {"positions": round(float(here["tokens_per_verify"]) / scenario.dp),
               "plain_positions": round(float(here["tokens_per_plain"])),
               "prompts": prompts, "spec_prompts": prompts * float(here["expected_tokens"]),
               "expected_tokens": float(here["expected_tokens"]), "intensity": float(here["verify_intensity"]),
               "ridge": float(here["ridge_flop_per_byte"]), "datasheet_ridge": datasheet_ridge,
               "sidebar_ridge": scenario.gpu.ridge_at(scenario.precision.matmul_compute(scenario.target)),
               "mfu": scenario.costs.mfu, "mbu": scenario.costs.mbu, "verify_cost": pass_cost,
               "speculation_share": speculation_share, "draft_pass_share": draft_pass_share, "plain_ms": plain_ms,
               "speculation_ms": scenario.costs.speculation_ms, "draft_pass_us": scenario.costs.draft_pass_us,
               "experts_cost": experts_cost}
    return f"calc.regime.{regime}", explain, figures


def expert_tax(scenario: Scenario, alpha: float, gamma: int, batch: int, context: int,
               batch_max: int) -> dict[str, float] | None:
    """What the verify pass's extra tokens cost a mixture of experts (None for a dense target, and for
    one whose every token reads every expert, which has no tax: an uploaded config of 1 expert had been
    said to lose "for by then a plain pass reads nearly every expert"): the
    routed experts per MoE layer that a plain pass of B tokens and a verify pass of B·(γ + 1) read
    (:func:`specviz.model.roofline.experts_touched`; the verify pass's tokens share the scenario's
    ``routing_overlap`` of their experts with the token before them, so they route as
    B·(1 + γ(1 − q)) independent tokens, :func:`specviz.model.step.verify_routed_tokens`), the ratio
    of their expert weights, and where
    speculation pays at this α and γ, with the tax and in the bound without it (each sequence's
    drafts routed to its current token's experts): the speedup at ``batch`` (in 1..``batch_max``) and
    the first batch at which it falls below 1 (NaN: none), and the experts a plain pass reads there.
    The tax is largest at small batches; once a plain pass reads nearly every expert, the two agree,
    and so do their crossovers.

    At batch 8 with γ 4 on DeepSeek-V3 (256 experts, 8 a token) and uniform routing (q = 0) a plain
    pass reads 57 experts a layer and the verify pass 184, 3.2 times the expert weights; at batch 64,
    222 and 256: 1.15 times."""
    model = scenario.target
    if not model.num_experts or model.experts_per_token >= model.num_experts or scenario.mode != "step":
        return None
    # A steady load's prompts are routed too: B·P/O in a plain pass, E times as many in a verify pass.
    prompts = float(scenario.prompts_per_step(batch))
    expected = float(scenario.expected_tokens(alpha, gamma))
    plain_tokens = batch + prompts
    plain, verify = _experts_read(scenario, alpha, gamma, batch)
    every = np.arange(1, batch_max + 1)
    taxed, untaxed = (calculator.evaluate_scenario(scenario, alpha, gamma, every, context, expert_tax=tax)["speedup"]
                      for tax in (True, False))
    return {"experts": model.num_experts, "per_token": model.experts_per_token, "plain_tokens": round(plain_tokens),
            "overlap": scenario.routing_overlap,
            "verify_tokens": round(batch * (gamma + 1) + expected * prompts), "plain_experts": plain, "verify_experts": verify,
            # Decimals to show the counts at: one where whole numbers would read the same beside a ratio
            # that is not 1 (Llama-4-Scout's 15.74 and 16.0 read "16 of them, 16: 1.02x"), or would give a
            # ratio 0.05 or more off the one beside them (gpt-oss-120b's 4 and 13.4 at batch 1 read "4, 13:
            # 3.35x": a browser pass).
            "experts_places": int(round(plain) == round(verify) and round(verify / plain, 2) != 1
                                  or abs(round(verify) / round(plain) - verify / plain) >= 0.05),
            "ratio": verify / plain, "speedup": float(taxed[batch - 1]), "speedup_untaxed": float(untaxed[batch - 1]),
            "stops_at": (stops := float(roofline.crossover_batch(every, taxed))),
            "stops_untaxed_at": float(roofline.crossover_batch(every, untaxed)),
            # What a plain pass reads where speculation stops paying: nearly every expert, or the tax
            # is not what stops it.
            "plain_experts_at_stop": (math.nan if math.isnan(stops) else _experts_read(scenario, alpha, gamma, stops)[0])}


# The costs only speculation pays are said apart once they add this share of a plain step to a
# speculative one (the verify pass's own cost, which the explanation gives, leaves them out).
SPECULATION_NOTE_SHARE = 0.05


def ridge_detail_key(figures: dict[str, float]) -> str:
    """The sentence that gives the ridge of :func:`regime_explanation`'s ``figures``: the pass's own
    where it is the datasheet's (``calc.regime_detail``), with the shares of the peaks reached where
    they move it (``calc.regime_detail_shares``), and both the pass's and the sidebar's where they
    round apart (``calc.regime_detail_mixed``: gpt-oss's MXFP4 experts beside its BF16 attention), so
    that the sidebar's figure is never quoted as another."""
    if round(figures["datasheet_ridge"]) != round(figures["sidebar_ridge"]):
        return "calc.regime_detail_mixed"
    return "calc.regime_detail" if math.isclose(figures["ridge"], figures["datasheet_ridge"]) else "calc.regime_detail_shares"


def message_suffix(draft_kind: str) -> str:
    """The suffix of the calculator's messages that differ by how a draft proposes its γ positions
    (:func:`specviz.model.drafters.drafting`): none for a pass each, ``_one_pass`` for one pass for
    all, ``_host`` for none on the GPU."""
    return {"chain": "", "one_pass": "_one_pass", "host": "_host"}[drafters.drafting(draft_kind)]


def explanation_notes(figures: dict[str, float], draft_kind: str, gamma: int, context: int) -> list[Notice]:
    """The notes under the Why panel's explanation: what the context adds (where there is one), and
    the costs only speculation pays (its fixed work and the γ draft passes' proposer work) once they
    reach :data:`SPECULATION_NOTE_SHARE` of a plain step, their drafts said by how the draft proposes
    (a pass each, one pass for all, or none on the GPU: :func:`specviz.model.drafters.drafting`)."""
    notes = [Notice("calc.explain.context", context=context)] if context else []
    if figures["speculation_share"] + figures["draft_pass_share"] >= SPECULATION_NOTE_SHARE:
        suffix = message_suffix(draft_kind)
        drafts = "" if suffix == "_host" else Notice(f"calc.explain.speculation_drafts{suffix}", **figures, gamma=gamma)
        notes.append(Notice("calc.explain.speculation_costs", **figures, drafts=drafts))
    return notes


def at_batch(value: float, up_to: int) -> Notice:
    """'at batch N', or 'at no batch up to ``up_to``' for NaN or a batch past it."""
    return Notice("calc.never", batch_max=up_to) if math.isnan(value) or value > up_to else \
        Notice("calc.at_batch", batch=int(value))


def expert_tax_verdict(tax: dict[str, float], alpha: float, gamma: int, batch: int, fits: bool,
                       memory_limit: int, batch_max: int) -> list[Notice]:
    """What the expert tax (:func:`expert_tax`) does to the speedup at ``batch`` (not said for a batch the
    memory does not hold: ``fits`` False) and to where speculation stops paying, with and without it,
    among the batches the server holds (up to ``memory_limit``, of the ``batch_max`` weighed): a
    crossover past them is none, and where not one sequence fits, nothing is said. Where the two
    crossovers agree, why: a plain pass there reads at least 90 % of the experts, or the tax is not
    what stops speculation."""
    if memory_limit < 1:
        return []
    never, never_untaxed = (math.isnan(tax[k]) or tax[k] > memory_limit for k in ("stops_at", "stops_untaxed_at"))
    if never and never_untaxed:
        stops = Notice("calc.expert_tax_never_stops", batch_max=batch_max) if memory_limit >= batch_max else \
            Notice("calc.expert_tax_never_stops_held", batch=memory_limit)
    elif tax["stops_at"] == tax["stops_untaxed_at"]:
        nearly_every = tax["plain_experts_at_stop"] >= 0.9 * tax["experts"]
        stops = Notice("calc.expert_tax_same_crossover" if nearly_every else "calc.expert_tax_same_crossover_untaxed",
                       stops=at_batch(tax["stops_at"], memory_limit), plain=tax["plain_experts_at_stop"],
                       experts=tax["experts"])
    else:
        stops = Notice("calc.expert_tax_crossover", stops=at_batch(tax["stops_at"], memory_limit),
                       stops_untaxed=at_batch(tax["stops_untaxed_at"], memory_limit))
    if not fits:
        return [stops]
    return [Notice("calc.expert_tax_here", alpha=alpha, gamma=gamma, batch=batch, speedup=tax["speedup"],
                   untaxed=tax["speedup_untaxed"]), stops]


def roofline_points(scenario: Scenario, gamma: int, batch: int, context: int,
                    alpha: float | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The roof (attainable TFLOPS against arithmetic intensity) and the two passes on it, as the
    step model runs them (:func:`specviz.model.step.step_work`: the routing overlap of a mixture of
    experts' verify pass, and the load's prompts where each step carries them, whose share a
    speculative step takes grows with E at ``alpha``, the scenario's by default).

    Returns
    -------
    roof : DataFrame
        ``intensity, tflops``: min(peak·mfu, bandwidth·mbu·intensity) on a log grid, for the devices
        of a model copy together at the verify pass's peak (its matmuls' peaks weighted by their
        FLOPs: the precision's peak where they share one); ``roof.attrs["ridge"]`` is where the two
        meet, peak·mfu / (bandwidth·mbu) in FLOP/byte, the ridge its regime is judged against.
    passes : DataFrame
        ``pass, intensity, tflops, positions`` for the plain decode pass and the verify pass, where
        tflops is what the pass achieves (FLOPs over its whole time, costs beyond the roofline
        included: they put it under the roof).
    """
    expected = scenario.expected_tokens(scenario.alpha if alpha is None else alpha, gamma)
    work = step.step_work(scenario.gpu, scenario.target, scenario.draft, batch=batch, gamma=gamma, context=context,
                          **scenario.parallel, precision=scenario.precision, link_gb_s=scenario.costs.link_gb_s,
                          routing_overlap=scenario.routing_overlap, expected_tokens=expected, **scenario.load)
    times = step.step_seconds(work, scenario.costs)
    # The verify pass's own roof: its FLOPs over its compute time (its matmuls each at their format's
    # peak, × mfu) and its bytes over its memory time (× mbu), so that the ridge drawn is the one its
    # regime is judged against (step's verify_ridge), not the peak of the model's largest part alone.
    verify = times["verify_pass"]
    peak = float(verify["flops"] / verify["compute_s"] / 1e12)
    bandwidth = float(verify["bytes"] / verify["memory_s"] / 1e12)
    passes = []
    for name, kind in (("decode", "plain"), ("verify", "verify")):
        p = times[f"{kind}_pass"]
        passes.append({"pass": name, "intensity": float(p["flops"] / p["bytes"]),
                       "tflops": float(p["flops"] / p["time_s"] / 1e12),
                       # One attention group's (its intensity is the pass's: each group's share of the work).
                       "positions": int(round(float(work[kind]["tokens"] + work[kind]["prefill"]) / work[kind]["ranks"]))})
    low = min(1.0, min(p["intensity"] for p in passes) / 2)
    high = max(4 * peak / bandwidth, max(p["intensity"] for p in passes) * 2)
    x = np.geomspace(low, high, 80)
    roof = pd.DataFrame({"intensity": x, "tflops": np.minimum(peak, bandwidth * x)})
    roof.attrs["ridge"] = peak / bandwidth
    return roof, pd.DataFrame(passes)
