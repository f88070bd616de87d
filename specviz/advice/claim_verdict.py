"""The words of a claim's check: its verdict, the headline that says it, the reasons and the conditions,
and the ranges of batches they name, from the tables :func:`specviz.advice.claims.check_claim` computes.

Every figure a condition names is an "at least" figure rounded up (:func:`at_least`): rounded to the
nearest, the α a claim needs could be shown short of the claim. The module docstring of
:mod:`specviz.advice.claims` says when a claim is plausible, conditional or impossible.

May import: the model, the scenario, the workload and :mod:`specviz.advice`'s evidence and draft
length; :mod:`specviz.advice.claims` only for its types (it imports this module).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from specviz import calculator, workload
from specviz.advice import draft_length, evidence
from specviz.errors import Notice
from specviz.i18n import PresetText
from specviz.model import spec
from specviz.model.published import PublishedAcceptance
from specviz.scenario import Scenario

if TYPE_CHECKING:
    from specviz.advice.claims import Claim, ClaimCheck

__all__ = ["Batches", "NO_BATCHES", "UNLIKELY", "UNLIKELY_WITHOUT_ALPHA", "at_least", "at_most", "measures_at", "batch_range", "batch_runs", "beyond_pair",
           "beyond_published", "best_at_measured_alpha", "devices", "easiest", "headline", "measured_reason", "method_named",
           "on_workload", "optimistic_top", "pair_unpublished", "request_notice", "verdict"]


def at_least(value: ArrayLike, decimals: int = 2) -> Any:
    """An "at least" figure as a page shows it, rounded up to ``decimals``: the α a claim needs,
    0.7543, shown as 0.75 would fall short of the claim (3.16x where 3.2x is claimed). Three decimals
    where a condition, the workload's reason (:func:`on_workload`) or the calculator link names α, as
    the tables show it. A float for a number, an array for an array (NaN kept)."""
    scale = 10.0 ** decimals
    rounded = np.ceil(np.asarray(value, dtype=float) * scale - 1e-9) / scale
    return float(rounded) if rounded.ndim == 0 else rounded


def at_most(value: ArrayLike, decimals: int = 3) -> Any:
    """An "at most" figure as a page shows it, rounded down to ``decimals``: the highest α at which a
    slowdown holds (:mod:`specviz.advice.slowdown`), rounded up, would lie past it. As :func:`at_least`
    otherwise."""
    scale = 10.0 ** decimals
    rounded = np.floor(np.asarray(value, dtype=float) * scale + 1e-9) / scale
    return float(rounded) if rounded.ndim == 0 else rounded


def measures_at(alpha: ArrayLike, gamma: ArrayLike, reuse: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
    """vLLM's acceptance rate and the acceptance length at ``alpha`` as a condition names it (already
    rounded: :func:`at_least`, :func:`at_most`), NaN where it is NaN: a table's, a command's and a
    condition's figures are then one (a manager's pass: `specviz claim` gave a rate of 0.6034 at the
    exact α beside its condition's 0.605 at the α it names, 0.874; a table had said 0.604)."""
    alpha, gamma = np.broadcast_arrays(np.asarray(alpha, dtype=float), np.asarray(gamma, dtype=float))
    known, shown = ~np.isnan(alpha), np.nan_to_num(alpha)
    return (np.where(known, spec.acceptance_rate_from_alpha(shown, gamma, **(reuse or {})), np.nan),
            np.where(known, spec.expected_tokens(shown, gamma, **(reuse or {})), np.nan))


Batches = tuple[float, float, tuple[tuple[int, int], ...]]
NO_BATCHES: Batches = (math.nan, math.nan, ())


def batch_range(batches: np.ndarray, holds: np.ndarray) -> Batches:
    """The smallest and largest batch where ``holds`` (NaN, NaN where none), and the runs of batches
    between them where it does not, each as its first and last batch of the grid: a mixture of
    experts' verify pass reads the most experts more than a plain one at middle batches, so a claim
    may hold at batches 1–2 and 20–721 and not at 3–17 (a manager's pass: "1–721" had hidden the gap).
    ``batches`` are in ascending order."""
    inside = np.flatnonzero(holds)
    if not inside.size:
        return NO_BATCHES
    first, last = inside[0], inside[-1]
    # +1 where a run of batches that do not hold begins, -1 just past where it ends.
    edges = np.diff(np.concatenate(([0], (~holds[first:last + 1]).astype(int), [0])))
    starts, ends = np.flatnonzero(edges == 1) + first, np.flatnonzero(edges == -1) - 1 + first
    return float(batches[first]), float(batches[last]), tuple(
        (int(batches[start]), int(batches[end])) for start, end in zip(starts, ends))


def batch_runs(gaps: Sequence[tuple[int, int]]) -> str:
    """Runs of batches as a page says them: "3–17", "3–17, 40" (a run of one batch its batch)."""
    return ", ".join(f"{low}" if low == high else f"{low}–{high}" for low, high in gaps)


# Headlines a measurement of this very setup that reaches the claim lifts: the "unlikely" of a claim
# with no measured α (one at the user's α is the user's, which the measurement's own acceptance is not).
UNLIKELY_WITHOUT_ALPHA = ("claims.verdict.beyond_published", "claims.verdict.beyond_pair", "claims.verdict.kind_only")
UNLIKELY = (*UNLIKELY_WITHOUT_ALPHA, "claims.verdict.kind", "claims.verdict.short", "claims.verdict.measured_short",
            "claims.verdict.near_reach")
"""The headlines of a claim that is not impossible but ``unlikely``: beyond every published acceptance or its
pair's, reached only at the optimistic end of the model's range (at α = 1 or at the measured α), short at
the measured α, short of a measurement of this very setup, or out of reach at the preset's costs by less
than the presets' median miss (a manager's pass: "Conditional, out of reach" and "Not at your
acceptance" had stood in the yellow of a claim that holds on conditions)."""


def measured_reason(key: str, top: pd.Series, **more: int) -> Notice:
    """The reason ``key`` naming a published speedup of this very setup (:mod:`specviz.advice.evidence`)
    and what it measured (an end-to-end figure carries its prompts' prefill: AMD's 2.11× is one), with
    its note cut at a word."""
    return Notice(key, study=str(top["study"]), value=float(top["value"]), metric=Notice(f"metric.{top['metric']}"),
                  batch=int(top["batch"]), gamma=int(top["gamma"]), note=evidence.note_quoted(top["note"]), **more)


def beyond_pair(scenario: Scenario, claim: Claim, required: pd.DataFrame,
                 published: Sequence[PublishedAcceptance]) -> Notice | None:
    """``claims.condition.beyond_pair`` where a claim with no measured α needs, at the γ that needs
    least, more than the highest acceptance published for the scenario's own pair
    (:func:`specviz.advice.evidence.pair_acceptance`), naming it; None otherwise. "Up to 3x" for
    gpt-oss-120b with EAGLE-3 on an H100 needs α 0.896 (at γ 7), where the pair was published at 0.67 (a
    manager's pass: the page had weighed it against every model's highest, 0.91)."""
    needed = _alpha_needed(scenario, claim, required)
    if needed is None or (own := evidence.pair_acceptance(scenario, published)) is None:
        return None
    alpha, row = own
    if needed <= alpha:
        return None
    return Notice("claims.condition.beyond_pair", alpha=at_least(needed, 3), published=alpha,
                  gamma=row.gamma, dataset=row.dataset, source=row.source)


def pair_unpublished(scenario: Scenario, claim: Claim, required: pd.DataFrame,
                     published: Sequence[PublishedAcceptance]) -> Notice | None:
    """``claims.condition.pair_unpublished`` where a claim with no measured α needs an α and none is
    published for the scenario's own pair (:func:`specviz.advice.evidence.pair_acceptance`) among
    ``published`` (none given: nothing to say); None otherwise. Kimi-K2.5 with EAGLE-3 needed α 0.735
    and the verdict said nothing of whether that is likely (a manager's pass)."""
    needed = _alpha_needed(scenario, claim, required)
    if needed is None or not published or evidence.pair_acceptance(scenario, published) is not None:
        return None
    return Notice("claims.condition.pair_unpublished", alpha=at_least(needed, 3))


def easiest(scenario: Scenario | None, required: pd.DataFrame, column: str = "alpha_needed") -> pd.Series | None:
    """The row of ``required`` whose γ needs the least of ``column`` (the α the claim needs, or at the
    band's edges ``alpha_optimistic`` and ``alpha_safe``), None where no γ reaches the claim
    (``scenario`` None: a check at given costs, of no draft in particular). For an
    EAGLE-3 head, among the draft lengths it is trained for, and for a reused MTP layer those it
    has been measured to hold (:func:`specviz.advice.draft_length.evidenced_positions`), where one of
    them reaches it: past them the figures keep α at every position, which no run measures (a
    manager's pass: "α ≥ 0.845 at γ 10" had led, beside a warning that γ 10 is past the head's
    training, where γ 7 needs 0.854)."""
    reachable = required.dropna(subset=[column])
    if scenario is not None and (known := draft_length.evidenced_positions(scenario)) is not None:
        trained = reachable[reachable["gamma"] <= known]
        reachable = trained if len(trained) else reachable
    return None if reachable.empty else reachable.loc[reachable[column].idxmin()]


def _alpha_needed(scenario: Scenario, claim: Claim, required: pd.DataFrame) -> float | None:
    """The α a claim with no measured α needs at its easiest γ (:func:`easiest`: the model's, else that
    of the band's optimistic edge); None with a measured α, or where nothing reaches it."""
    column = "alpha_needed" if required["alpha_needed"].notna().any() else "alpha_optimistic"
    row = easiest(scenario, required, column)
    return None if claim.alpha is not None or row is None else float(row[column])


def beyond_published(scenario: Scenario, claim: Claim, required: pd.DataFrame,
                     published: Sequence[PublishedAcceptance]) -> Notice | None:
    """``claims.condition.beyond_published`` where a claim with no measured α needs, at the γ that
    needs least, more than the highest published acceptance (naming it and its source); None
    otherwise, and where the claim is out of reach."""
    needed = _alpha_needed(scenario, claim, required)
    if needed is None or not published:
        return None
    highest = max(published, key=lambda row: row.alpha)
    if needed <= highest.alpha:
        return None
    return Notice("claims.condition.beyond_published", alpha=at_least(needed, 3), highest=highest.alpha,
                  target=highest.target, draft=Notice(f"side.draft.{highest.draft}"), gamma=highest.gamma,
                  source=highest.source)


def method_named(kind: str) -> Notice:
    """A drafting method a claim's figure is over (a draft kind: ``eagle3``), named for a sentence:
    the sidebar's name, but MTP as "MTP layers", for the sidebar's "The target's MTP layer" names the
    target's own, and a figure over MTP may be of a model with none (Qwen3-32B)."""
    return Notice("claims.over_mtp" if kind == "mtp" else f"side.draft.{kind}")


def headline(check: ClaimCheck, over_words: str | None = None, over_method: str | None = None) -> list[Notice]:
    """The verdict's sentence: :attr:`ClaimCheck.headline`, after a lead that says it is against plain
    decoding on this setting where the claim's figure is over something else (``over_words``: "H100",
    "vLLM", from :class:`specviz.advice.claim_sentence.SentenceReading`), or over another drafting method
    (``over_method``, its kind: ``eagle3``), where the check is the least the claim needs. "3x faster
    than H100 on B200 with EAGLE-3" had read as plainly impossible: a B200 over an H100 may make up what
    speculation alone cannot (a manager's pass); "1.69x over EAGLE-3" had read as a plain "Conditional",
    its baseline said apart from the headline a manager forwards (a browser pass)."""
    if over_words:
        return [Notice("claims.verdict.over_other", what=over_words), check.headline]
    if over_method:
        return [Notice("claims.verdict.over_method", method=method_named(over_method)), check.headline]
    return [check.headline]


def optimistic_top(batches: pd.DataFrame) -> float:
    """The most the model allows at the optimistic end of its band, at α = 1: the highest
    ``ceiling_high`` of the batches the claim counts, over every γ, which "impossible" is judged on
    (:func:`batch_range` of where it reaches the claim). The reasons had named the band's top at the γ
    of the best central figure: 2.34× for DeepSeek-R1 + MTP on 8 B200s, where γ 3's top, 2.38×, is
    higher (a manager's pass)."""
    return float(optimistic_row(batches)["ceiling_high"])


def optimistic_row(batches: pd.DataFrame) -> pd.Series:
    """The row of :attr:`ClaimCheck.batches` (among those the claim counts) of :func:`optimistic_top`:
    its ``batch`` and the γ there (``ceiling_high_gamma``), which a reason names beside the figure (a
    browser pass: "2.37×" beside the best central figure's "1.91× (likely 1.54–2.34×)" at another
    batch read as two tops)."""
    counted = batches[batches["counted"]]
    return counted.loc[counted["ceiling_high"].idxmax()]


def below(top: float, claim: float, decimals: int = 2) -> float:
    """``top``, which falls short of ``claim``, as a reason says it: rounded down where rounding would
    reach the claim (a browser pass: "cannot reach 3.00×: the most the model allows … is 3.00×" for a
    top of 2.997×)."""
    step = 10.0 ** -decimals
    return math.floor(top / step) * step if round(top, decimals) >= claim else top


def best_at_measured_alpha(batches: pd.DataFrame) -> pd.Series:
    """The row of :attr:`ClaimCheck.batches`, among those the claim counts, where the figure at the
    measured α is highest: the batch and γ the verdict, the calculator's link and a workload's figure
    name for a claim with a measured acceptance."""
    counted = batches[batches["counted"]]
    return counted.loc[counted["at_alpha"].idxmax()]


def on_workload(scenario: Scenario, claim: Claim, required: pd.DataFrame, batches: pd.DataFrame) -> Notice:
    """What the claim's decode speedup is worth to a whole request of the user's workload: at the
    measured α and the γ and batch that do best there, else at the α the claim needs at its easiest
    γ and batch, rounded up to the two decimals its sentence names it with (:func:`at_least`;
    :func:`specviz.workload.end_to_end`)."""
    if claim.alpha is not None:
        top = best_at_measured_alpha(batches)
        alpha, gamma, batch = claim.alpha, int(top["at_alpha_gamma"]), int(top["batch"])
    else:
        counted = batches[batches["counted"]]
        row = easiest(scenario, required)
        # Where the model reaches the claim at no α, the γ it does best at (the last γ had priced a
        # slowdown at γ 16: an attack pass).
        # As the conditions name it, to three decimals (an analyst's pass: the workload's α 0.78 beside the
        # condition's 0.771 had priced a request at more acceptance than the claim needs).
        alpha = 1.0 if row is None else at_least(float(row["alpha_needed"]), 3)
        row = required.loc[required["ceiling"].idxmax()] if row is None else row
        gamma, batch = int(row["gamma"]), int(counted.loc[counted["ceiling"].idxmax(), "batch"])
    return request_notice(scenario, claim.workload, alpha, gamma, batch)


def request_notice(scenario: Scenario, tokens: tuple[int, int], alpha: float, gamma: int, batch: int,
                   key: str = "claims.reason.workload") -> Notice:
    """The reason ``key``: decode's speedup and a whole request's (:func:`specviz.workload.end_to_end`,
    with its band) on a workload of ``tokens`` (in, out) at ``alpha``, ``gamma`` and ``batch``;
    ``claims.reason.workload_queue`` where the load's prompts come faster than the steps admit them."""
    n_in, n_out = tokens
    whole = {k: float(v) for k, v in workload.end_to_end(scenario, alpha, gamma, batch, n_in, n_out).items()}
    if math.isinf(whole["e2e_spec_s"]):
        budget = scenario.engine.memory.budget  # the scenario's engine's, by its own name and flag
        return Notice("claims.reason.workload_queue", input=n_in, output=n_out, alpha=alpha, gamma=gamma, batch=batch,
                      engine=budget.engine, flag=budget.flag)
    low, high = calculator.band_shown(*calculator.request_speedup_band(scenario, alpha, gamma, batch, n_in, n_out))
    return Notice(key, input=n_in, output=n_out, alpha=alpha, gamma=gamma, batch=batch,
                  context=workload.mean_context(n_in, n_out), decode=whole["decode_speedup"], request=whole["e2e_speedup"],
                  low=low, high=high, share=whole["prefill_share"])


def devices(scenario: Scenario) -> str:
    """The GPUs a verdict names: their count and model ("2× NVIDIA H100 SXM"), the model alone for one,
    in each language the preset's name has (a Vietnamese verdict had named "4× NVIDIA GB200 (one GPU of a
    NVL72)" in English: a browser pass)."""
    count, name = scenario.tp * scenario.dp, scenario.gpu.name
    if count == 1:
        return name
    translations = name.translations if isinstance(name, PresetText) else {}
    return PresetText(f"{count}× {name}", {lang: f"{count}× {text}" for lang, text in translations.items()})


def verdict(scenario: Scenario, claim: Claim, best: dict[str, float], required: pd.DataFrame, batches: pd.DataFrame,
             holds: Batches, memory_binds: int) -> tuple[str, Notice, list[Notice], list[Notice], Batches]:
    """The verdict, its headline, reasons and conditions, and the batches where the claim holds at the
    measured acceptance, from the tables of :func:`check_claim`; ``memory_binds``, the batch from
    which the memory leaves out some γ (the longest drafts first), where a range of batches that
    reaches it ends for want of memory. Each α a condition names is rounded up to the tables' three
    decimals (:func:`at_least`), and the acceptance rate and tokens per step beside it are that α's,
    as the calculator shows them at it (rounding α to two decimals first had read α 0.996, rate 0.970
    and 16.52 tokens per step at γ 16 as 1.00, 1.00 and 17.00)."""
    setting = {"claim": claim.speedup, "gpu": devices(scenario), "target": scenario.target.name,
               "engine": scenario.engine.name}
    ceilings = [Notice("claims.reason.ceiling", speedup=best["speedup"], low=best["low"], high=best["high"],
                       gamma=best["gamma"], batch=best["batch"])]
    if (top := best.get("trained")) is not None:
        # The most at α = 1 is at a γ past an EAGLE-3 head's training, where the figures keep α: the most
        # within it beside it (a browser pass: 8.89× at γ 16 for a head trained on 7 positions), the
        # Claims page's card's figure.
        key = "claims.reason.ceiling_trained" if scenario.draft.kind == "eagle3" else "claims.reason.ceiling_measured"
        ceilings.append(Notice(key, trained=top["positions"], speedup=top["speedup"], low=top["low"],
                               high=top["high"], gamma=top["gamma"], batch=top["batch"]))
    none = NO_BATCHES
    if math.isnan(holds[1]):
        top = optimistic_row(batches)
        short = Notice("claims.reason.out_of_reach", claim=claim.speedup, high=below(float(top["ceiling_high"]), claim.speedup),
                       batch=int(top["batch"]), gamma=int(top["ceiling_high_gamma"]))
        return ("impossible", Notice("claims.verdict.impossible", **setting), [short, *ceilings], [], none)
    acceptance: list[Notice] = []
    if (least := easiest(scenario, required)) is not None:
        gamma, needed = int(least["gamma"]), float(least["alpha_needed"])
        shown = at_least(needed, 3)
        # The rate and tokens per step at the α shown, which the calculator's link opens at and shows
        # them for: rounded up from the exact α's, they had read 3.02 tokens where it read 3.01 (a
        # browser pass).
        acceptance.append(Notice("claims.condition.acceptance", alpha=needed, shown=shown, gamma=gamma, batch=best["batch"],
                                 rate=float(spec.acceptance_rate_from_alpha(shown, gamma, **scenario.reuse)),
                                 length=float(spec.expected_tokens(shown, gamma, **scenario.reuse)),
                                 optimistic=at_least(float(least["alpha_optimistic"]), 3)))
        safest = easiest(scenario, required, "alpha_safe")
        # The α at a γ past an EAGLE-3 head's training is kept at every position there, as the
        # calculator says beside the same γ (a manager's pass: "α ≥ 0.786 at γ 8" had stood alone),
        # said once, at the longest draft the conditions name (the unkind end's "α ≥ 0.900 at γ 9"
        # had stood alone beside a γ 7 that needs none: a manager's pass).
        longest = max(gamma, -1 if safest is None else int(safest["gamma"]))
        if (past := draft_length.head_past_training(scenario, longest)) is not None:
            acceptance.append(past)
        if safest is None:  # the band's low edge never reaches, even at α = 1
            acceptance.append(Notice("claims.condition.kind_costs_too"))
        else:  # the α that holds the claim even at the unkind end, at the γ that needs least of it
            acceptance.append(Notice("claims.condition.safe_alpha", shown=at_least(float(safest["alpha_safe"]), 3),
                                     gamma=int(safest["gamma"])))
    else:
        least = easiest(scenario, required, "alpha_optimistic")
        acceptance.append(Notice("claims.condition.kind_costs", alpha=float(least["alpha_optimistic"]),
                                 shown=at_least(float(least["alpha_optimistic"]), 3), gamma=int(least["gamma"])))
        if (past := draft_length.head_past_training(scenario, int(least["gamma"]))) is not None:
            acceptance.append(past)
    # A range that ends at the memory's limit says so: no acceptance sets that end; nor does the
    # largest batch weighed (SPECVIZ_BATCH_MAX), past which nothing was looked at.
    weighed = int(batches["batch"].max()) if len(batches) else 0

    def unsaid(low: float, high: float, gaps: tuple[tuple[int, int], ...]) -> bool:
        """No range of batches to say: the claim names its batch, or the range is every batch weighed."""
        return claim.batch is not None or (weighed <= high < memory_binds and low <= 1 and not gaps)

    def except_at(gaps: tuple[tuple[int, int], ...]) -> list[Notice]:
        return [Notice("claims.condition.except_batches", gaps=batch_runs(gaps))] if gaps else []

    def batchbatch_range(low: float, high: float, gaps: tuple[tuple[int, int], ...]) -> list[Notice]:
        if unsaid(low, high, gaps):
            return []
        bounds = dict(low=int(low), high=int(high))
        at_high = batches.loc[batches["batch"] == high].iloc[0]
        if high >= memory_binds and at_high["ceiling_high_held"] == high:
            # With the γ whose room ends the range: a shorter draft holds more (a manager's pass: "at most
            # 721" beside the chart's "memory holds 722 at γ 1", where γ 1 does not reach the claim).
            key = "claims.condition.batch_memory" if low > 1 else "claims.condition.batch_memory_all"
            return [Notice(key, **bounds, context=scenario.context, gamma=int(at_high["ceiling_high_gamma"])),
                    *except_at(gaps)]
        if high >= weighed:
            return [Notice("claims.condition.batch_weighed", **bounds), *except_at(gaps)]
        return [Notice("claims.condition.batch" if low < high else "claims.condition.batch_one", **bounds),
                *except_at(gaps)]

    # Where the figure at the measured α reaches the claim: not where α = 1 does, which the range above
    # is said to be ("A batch between 1 and 1 …: outside it not even α = 1 reaches the claim" had stood
    # beside batches 1–67 where it can hold: an attack pass).
    def at_alphabatch_range(low: float, high: float, gaps: tuple[tuple[int, int], ...]) -> list[Notice]:
        if unsaid(low, high, gaps):
            return []
        key = "claims.condition.batch_at_alpha" if low < high else "claims.condition.batch_at_alpha_one"
        return [Notice(key, low=int(low), high=int(high), alpha=claim.alpha), *except_at(gaps)]
    if claim.alpha is None:
        headline = "claims.verdict.conditional" if required["alpha_needed"].notna().any() else "claims.verdict.kind_only"
        return ("conditional", Notice(headline, **setting),
                [*ceilings, Notice("claims.reason.no_alpha")], acceptance + batchbatch_range(*holds), none)
    counted = batches[batches["counted"]]
    top = best_at_measured_alpha(batches)
    # Below 1x at its best batch and γ, the measured acceptance says leave speculation off, not which γ.
    # A best that rounds to the claim but falls short of it is said to three places (an engineer's pass:
    # "1.48x" was unlikely beside "the best is 1.48x", which was 1.4767).
    just_short = round(float(top["at_alpha"]), 2) == round(claim.speedup, 2) and top["at_alpha"] < claim.speedup
    reached = Notice("claims.reason.at_alpha_just_short" if just_short else "claims.reason.at_alpha"
                     if top["at_alpha"] >= 1.0 else "claims.reason.at_alpha_loses",
                     alpha=claim.alpha, gamma=int(top["at_alpha_gamma"]), speedup=float(top["at_alpha"]),
                     low=float(top["at_alpha_low"]), high=float(top["at_alpha_high"]), batch=int(top["batch"]),
                     claim=claim.speedup)
    at_yours = lambda column: batch_range(counted["batch"].to_numpy(), (counted[column] >= claim.speedup).to_numpy())
    yours = at_yours("at_alpha_low")
    if not math.isnan(yours[1]):
        return ("plausible", Notice("claims.verdict.plausible", **setting), [reached, *ceilings],
                [Notice("claims.condition.batch_yours" if yours[0] < yours[1] else "claims.condition.batch_yours_one",
                        low=int(yours[0]), high=int(yours[1])), *except_at(yours[2])]
                if claim.batch is None else [], yours)
    for column, key, condition in (("at_alpha", "claims.verdict.band", "claims.condition.not_unkind"),
                                   ("at_alpha_high", "claims.verdict.kind", "claims.condition.kind_costs_yours")):
        reach = at_yours(column)
        if not math.isnan(reach[1]):
            return ("conditional", Notice(key, **setting, alpha=claim.alpha), [reached, *ceilings],
                    [Notice(condition, alpha=claim.alpha), *at_alphabatch_range(*reach)], none)
    return ("conditional", Notice("claims.verdict.short", **setting, alpha=claim.alpha, speedup=float(top["at_alpha"])),
            [reached, *ceilings], acceptance + batchbatch_range(*holds), none)
