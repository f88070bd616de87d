"""Which published measurements and stored runs are evidence about a setting.

A claim is set beside the measurements taken on the same kind of setting (:func:`setting_class`:
the model family, the drafting and the hardware class). A measurement overrules the model, or says
a claim went beyond it, only where it was taken on this very setting (:func:`same_setup`); the
calculator sets those of its point beside the model's figure there (:func:`measured_here`). A pair's
own published acceptance (:func:`pair_acceptance`) says what a claim with no measured α can expect
of it. :mod:`specviz.advice.claims` words what these find into a verdict.

May import what :mod:`specviz.advice` may.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import numpy as np
import pandas as pd

from specviz import calculator, names
from specviz.advice import claim_over, claim_words
from specviz.errors import InputError, Notice
from specviz.model import architecture, dtypes, fidelity, roofline, spec
from specviz.model.published import PublishedAcceptance
from specviz.scenario import Presets, Scenario, largest_batch, published_acceptance

__all__ = ["setting_class", "comparable_runs", "comparable_published", "published_reaching", "published_as_slow", "same_setup",
           "same_setup_reaching", "same_setup_elsewhere", "same_setup_other_ep", "same_setup_short", "same_setup_as_slow", "same_setup_faster", "measured_here", "measured_notice", "OFF_MODEL", "pair_acceptance", "NOTE_CHARS", "note_quoted"]


# Drafts grouped by how they draft: heads on the target's features, its own MTP layers, the host, ...
_DRAFTING = {"eagle": "eagle", "eagle3": "eagle", "peagle": "eagle", "mtp": "mtp", "ngram": "host", "suffix": "host",
             "medusa": "medusa", "self": "self", "block": "block"}


def setting_class(target: architecture.Model, draft_id: str, gpu: roofline.GPU) -> tuple[str, str, str, str]:
    """A setting's model family (its model type's leading word: ``llama`` for Llama 2, 3 and 4), its
    drafting (:data:`_DRAFTING`, else a separate draft ``model``) and its hardware's vendor and kind
    (``NVIDIA``, ``gpu``): what a published result must share to be evidence about a claim."""
    drafting = _DRAFTING.get(draft_id, "eagle" if draft_id.startswith("EAGLE3-") else "model")
    return _class(target, drafting, gpu)


def _class(target: architecture.Model, drafting: str, gpu: roofline.GPU) -> tuple[str, str, str, str]:
    family = re.match(r"[a-z]+", target.model_type)
    return family[0] if family else target.model_type, drafting, gpu.name.split()[0], gpu.kind


def _run_drafting(method: object) -> str | None:
    """The drafting of :data:`_DRAFTING` a stored run's ``spec_method`` names, as engines and tools
    write it (vLLM's ``eagle3``, ``deepseek_mtp``, ``ngram``, ``draft_model``; SGLang's ``EAGLE3``,
    ``NEXTN``); None where it names none."""
    key = re.sub(r"[^a-z0-9]", "", str(method).lower()) if isinstance(method, str) else ""
    if not key:
        return None
    for words, drafting in ((("mtp", "nextn"), "mtp"), (("eagle",), "eagle"), (("ngram", "suffix", "lookup"), "host"),
                            (("medusa",), "medusa")):
        if any(word in key for word in words):
            return drafting
    return "model"


def comparable_runs(paired: pd.DataFrame, scenario: Scenario, presets: Presets,
                    batch: int | None = None) -> pd.DataFrame:
    """The stored runs paired with their baselines (:func:`specviz.results.explorer.pair_with_baselines`)
    of the same model family, drafting and hardware class as ``scenario``, as
    :func:`comparable_published` takes the published ones, and with ``batch`` at that concurrency or
    more: a run whose model (``target_model``), GPU or method names no preset or drafting cannot be
    placed and is left out (synthetic Llama-3.1-8B examples on an H100 are no evidence about gpt-oss
    on a B200)."""
    wanted = setting_class(scenario.target, scenario.draft_id, scenario.gpu)

    def same(model: object, gpu: object, method: object) -> bool:
        model_id = names.model_preset(model, presets.models) if isinstance(model, str) else None
        gpu_id = names.gpu_preset(gpu, presets.gpus) if isinstance(gpu, str) else None
        drafting = _run_drafting(method)
        return (model_id is not None and gpu_id is not None and drafting is not None
                and _class(presets.models[model_id], drafting, presets.gpus[gpu_id]) == wanted)
    keep = np.array([same(m, g, d) for m, g, d in zip(paired["target_model"], paired["gpu"], paired["spec_method"])],
                    dtype=bool)
    if batch is not None:
        keep &= (paired["concurrency"] >= batch).to_numpy(dtype=bool, na_value=False)
    return paired[keep]


def comparable_published(published: pd.DataFrame, scenario: Scenario, presets: Presets) -> pd.DataFrame:
    """The published results of the same model family, drafting and hardware class as ``scenario``
    (:func:`setting_class`): a T5 on a TPU is no evidence about Llama on an H100. A row that names no
    preset target or GPU (``target``, ``gpu``), or no draft, cannot be placed and is left out."""
    wanted = setting_class(scenario.target, scenario.draft_id, scenario.gpu)
    placed = published["target"].isin(list(presets.models)) & published["gpu"].isin(list(presets.gpus)) \
        & published["draft"].notna()
    same = [setting_class(presets.models[t], str(d), presets.gpus[g]) == wanted if ok else False
            for ok, t, d, g in zip(placed, published["target"], published["draft"], published["gpu"])]
    return published[np.asarray(same, dtype=bool)]


def published_reaching(speedups: pd.DataFrame, speedup: float, batch: int | None = None) -> pd.DataFrame:
    """The published speedups (:func:`specviz.results.explorer.speedup_rows`) that reach ``speedup``,
    highest first; with ``batch``, only those measured at that batch or a larger one (a speedup at
    batch 1 says little of one claimed at 64: it falls as the batch grows)."""
    if batch is not None:
        speedups = speedups[speedups["batch"] >= batch]
    # A figure read from other words ("111% faster" is 2.1100000000000003) reaches one printed as 2.11.
    return speedups[speedups["value"] >= speedup * (1.0 - 1e-9)].sort_values("value", ascending=False)


def published_as_slow(speedups: pd.DataFrame, slowdown: float, batch: int | None = None) -> pd.DataFrame:
    """The published figures as slow as a claimed ``slowdown`` (below 1) or slower, slowest first;
    with ``batch``, only those measured at that batch or a smaller one (a loss deepens as the batch
    grows: one as slow at a smaller batch bears on the claim). The Claims page had counted the gains
    that "reach" a slowdown of 0.70x: "45 of all 45" (a manager's pass)."""
    if batch is not None:
        speedups = speedups[speedups["batch"] <= batch]
    return speedups[speedups["value"] <= slowdown * (1.0 + 1e-9)].sort_values("value")


# Metrics a shortfall is weighed on: a claim is judged on decoding alone, and an end-to-end figure
# carries its prompts' prefill, which speculation does not speed up (AMD's 1.25× at batch 64 over
# 3,200-token prompts).
_WITH_PREFILL = "e2e_"


def same_setup(measured: pd.DataFrame, scenario: Scenario, gamma_max: int, any_context: bool = False,
               other_ep: bool = False) -> pd.DataFrame:
    """The published speedups (``measured``: :func:`comparable_published`) of this very setup, at a γ up
    to ``gamma_max`` and a stated batch: the same GPU and count of them (``tp``, the row's GPUs, is
    the scenario's tp·dp), target and engine; the same drafting, the kind its ``method`` names
    (:func:`specviz.advice.claim_over.first_method`; else its ``draft``) being the scenario's draft
    (a head of a named checkpoint, such as SpecForge's for gpt-oss-120b, is matched by none: no row
    says whose head it ran); the same weights, component by component (where the row states its
    ``weight_dtype``), expert parallelism (where it states its ``ep``), and a context within a factor of
    two of the row's (where it states one). A
    looser match had let P-EAGLE at γ 7 stand for EAGLE-3 at γ 1, 8 H100s under gpt-fast at 32,000
    positions for one under vLLM, the EAGLE-3 paper's heads (``draft`` eagle, the step model's kind
    for their cost) for EAGLE's, an MXFP4 run for BF16 experts and a 3,600-token run for 100,000
    (attack passes). ``any_context``: at any context (:func:`same_setup_elsewhere`); ``other_ep``: the
    rows that state the other expert parallelism instead (:func:`same_setup_other_ep`)."""
    # The plain columns first, as arrays (a page runs this each time): the drafting and the weights are
    # read of the few rows left.
    value = lambda name: measured[name].to_numpy()
    plain = ((value("gpu") == scenario.gpu.id) & (value("target") == scenario.target_id)
             & (value("tp") == scenario.tp * scenario.dp) & (value("engine") == scenario.engine.id)
             & (value("gamma") <= gamma_max) & ~pd.isna(value("batch")))
    own = measured.iloc[np.flatnonzero(plain)] if plain.any() else measured.iloc[:0]
    if own.empty:
        return own
    column = lambda name: own[name] if name in own else pd.Series(np.nan, index=own.index, dtype=object)
    drafting = column("method").map(claim_over.first_method).fillna(column("draft"))
    context = pd.to_numeric(column("context"), errors="coerce")
    near = any_context | context.isna() | ((scenario.context >= context / 2) & (scenario.context <= context * 2))
    weights = column("weight_dtype").map(lambda stated: _same_weights(stated, scenario)).astype(bool)
    # Expert parallelism where the row says (DSpark's runs on 8 B300s had matched a scenario without
    # it: a review).
    said = column("ep").map(fidelity.expert_parallel)
    parallel = (said.map(lambda ep: ep is not None and ep != scenario.ep) if other_ep
                else said.map(lambda ep: ep is None or ep == scenario.ep))
    return own[(drafting == scenario.draft_id) & weights & near & parallel.astype(bool)]


def same_setup_other_ep(measured: pd.DataFrame, scenario: Scenario, speedup: float, batch: int | None,
                        gamma_max: int) -> pd.Series | None:
    """A published speedup of this very setup but for its expert parallelism, which the row states
    and the scenario does not run (:func:`same_setup`, ``other_ep``), that reaches ``speedup``, at the
    claim's batch where one was measured there (else a larger one), the nearest batch then the
    highest; None where there is none. Not weighed, said: vLLM's DSpark runs on 8 B300s, with expert
    parallelism, reach 2.5× at batch 1, where a sentence that names no parallelism is read without it
    (a manager's pass: the page had said nothing of them)."""
    other = same_setup(measured, scenario, gamma_max, other_ep=True)
    reaching = published_reaching(_at_claimed_batch(other, batch), speedup, batch)
    if reaching.empty:
        return None
    return reaching.assign(off=(reaching["batch"] - (batch if batch is not None else 0)).abs()).sort_values(
        ["off", "value"], ascending=[True, False]).iloc[0]


def _same_weights(stated: object, scenario: Scenario) -> bool:
    """Whether a row's ``weight_dtype`` serves the scenario's target in the scenario's formats, component
    by component (gpt-oss's checkpoint is MXFP4 experts beside BF16 attention: not all-MXFP4); True
    where the row states none, False for a name no precision has."""
    if not isinstance(stated, str):
        return True
    try:  # a preset's name, or a format's (AMD's Kimi-K2.5 runs are mxfp4-w4a4, no preset's until then)
        row = dtypes.PRECISIONS[stated] if stated in dtypes.PRECISIONS else dtypes.precision_of(stated, "bf16")
    except InputError:
        return False
    ours, target = scenario.precision, scenario.target
    return all(row.weight_format(target, part) == ours.weight_format(target, part) for part in target.active)


def same_setup_reaching(measured: pd.DataFrame, scenario: Scenario, speedup: float, batch: int | None,
                        gamma_max: int) -> pd.Series | None:
    """The published speedup of this very setup (:func:`same_setup`) that reaches ``speedup``, nearest
    ``batch`` first and highest then; None where none does. At the claim's batch where this setup was
    measured there (the gpt-oss-20b runs rise from batch 1 to 8: one at a larger batch says nothing of
    it), else at a larger one (a speedup falls as the batch grows past where the experts are all
    read). P-EAGLE's 2.46× at batch 8 had been named for a claim at batch 1, beside its own 1.88× there
    (a browser pass)."""
    own = _at_claimed_batch(same_setup(measured, scenario, gamma_max), batch)
    reaching = published_reaching(own, speedup, batch)
    if reaching.empty:
        return None
    if batch is not None:
        reaching = reaching.assign(off=(reaching["batch"] - batch).abs()).sort_values(["off", "value"],
                                                                                     ascending=[True, False])
    return reaching.iloc[0]


def same_setup_elsewhere(measured: pd.DataFrame, scenario: Scenario, speedup: float, batch: int | None,
                         gamma_max: int) -> pd.Series | None:
    """A published speedup of this very setup but at a stated context more than twice or half the
    scenario's (:func:`same_setup`, ``any_context``) that reaches ``speedup``, at the claim's batch where
    one was measured there (else a larger one), the memory holding its batch at its context (a context
    at which the page could not weigh it is none to point to); the nearest batch, then the nearest
    context, then the highest; None where there is none. Not weighed: a longer context leaves each step
    more memory-bound, where speculation pays more. MagicDec's Llama-2-7B runs on 8 A100s reach 1.3× at
    batch 64 from 8,000 positions, not at 1,024."""
    every = same_setup(measured, scenario, gamma_max, any_context=True)
    context = pd.to_numeric(every["context"], errors="coerce") if "context" in every else pd.Series(dtype=float)
    apart = every[(context < scenario.context / 2) | (context > scenario.context * 2)]
    reaching = published_reaching(_at_claimed_batch(apart, batch), speedup, batch)
    if reaching.empty:
        return None
    contexts, gammas = (reaching[name].to_numpy(dtype=float) for name in ("context", "gamma"))
    held = largest_batch(scenario.gpu, scenario.target, scenario.draft, scenario.precision, tp=scenario.tp,
                         dp=scenario.dp, context=contexts, gamma=gammas, rule=scenario.engine.memory)
    reaching = reaching[np.asarray(held) >= reaching["batch"].to_numpy(dtype=float)]
    if reaching.empty:
        return None
    return reaching.assign(
        off=(reaching["batch"] - (batch if batch is not None else 0)).abs(),
        far=np.abs(np.log(reaching["context"].astype(float) / max(scenario.context, 1)))).sort_values(
            ["off", "far", "value"], ascending=[True, True, False]).iloc[0]


def same_setup_short(measured: pd.DataFrame, scenario: Scenario, speedup: float, batch: int | None,
                     gamma_max: int, gamma: int | None = None) -> tuple[pd.Series, tuple[int, int]] | None:
    """The highest published speedup of this very setup (:func:`same_setup`) at the claim's ``batch``
    (at any batch where it names none) and ``gamma`` (any up to ``gamma_max`` where it names none: a
    shorter draft falling short says nothing of a longer one), of decoding (not an end-to-end figure,
    which carries the prompts' prefill), where every one there falls short of ``speedup``; None where
    this setup was not measured there, or a measurement reaches it; with it, the least and the largest
    batch of those weighed. DeepSeek-V3 + MTP on 8 MI300X was measured at 1.25–2.11× by AMD: a claim
    of 2.5× at batch 1 is beyond what its own measurement there reached."""
    own = _decoding_there(measured, scenario, batch, gamma_max, gamma)
    if own.empty or not published_reaching(own, speedup).empty:
        return None
    return own.sort_values("value", ascending=False, kind="stable").iloc[0], (int(own["batch"].min()),
                                                                               int(own["batch"].max()))


def same_setup_as_slow(measured: pd.DataFrame, scenario: Scenario, slowdown: float, batch: int | None,
                       gamma_max: int, gamma: int | None = None) -> pd.Series | None:
    """The published speedup of this very setup (:func:`same_setup`) at or below ``slowdown``: at the
    claim's ``batch`` where this setup was measured there, else at a smaller one (a setting slows as
    the batch grows, so a loss at a smaller batch is one at the claim's too; one at a larger batch says
    nothing of it); at the claim's ``gamma`` where it names one. Any metric: an end-to-end figure
    carries its prompts' prefill, which speculation leaves as it is, so decoding was slower still.
    Nearest the claim's batch first, then the slowest; None where none is that slow. vLLM's blog
    measured DeepSeek-R1 + MTP (1 token) on 2 GB300s at 0.50× the plain TPOT at concurrency 64
    (prompts of 2,048 tokens)."""
    own = same_setup(measured, scenario, gamma_max)
    if gamma is not None:
        own = own[own["gamma"] == gamma]
    if batch is not None:
        there = own[own["batch"] == batch]
        own = there if not there.empty else own[own["batch"] < batch]
    slow = own[own["value"] <= slowdown * (1.0 + 1e-9)]
    if slow.empty:
        return None
    off = (slow["batch"] - (batch if batch is not None else 0)).abs()
    return slow.assign(off=off).sort_values(["off", "value"], kind="stable").iloc[0]


def same_setup_faster(measured: pd.DataFrame, scenario: Scenario, slowdown: float, batch: int | None,
                      gamma_max: int, gamma: int | None = None) -> tuple[pd.Series, tuple[int, int]] | None:
    """The slowest published speedup of this very setup (:func:`same_setup`) at the claim's ``batch``
    (at any batch where it names none) and ``gamma`` (any where it names none), of decoding (an
    end-to-end figure's prefill brings it nearer 1 than its decoding was), where every one there is
    faster than ``slowdown``; None where this setup was not measured there, or one is that slow; with
    it, the least and the largest batch of those weighed: :func:`same_setup_short` for a loss."""
    own = _decoding_there(measured, scenario, batch, gamma_max, gamma)
    if own.empty or (own["value"] <= slowdown * (1.0 + 1e-9)).any():
        return None
    return own.sort_values("value", kind="stable").iloc[0], (int(own["batch"].min()), int(own["batch"].max()))


def _decoding_there(measured: pd.DataFrame, scenario: Scenario, batch: int | None, gamma_max: int,
                    gamma: int | None) -> pd.DataFrame:
    """This very setup's published figures of decoding (:func:`same_setup`; no end-to-end figure, which
    carries its prompts' prefill) at ``batch`` and ``gamma`` (any where None)."""
    own = same_setup(measured, scenario, gamma_max)
    own = own[~own["metric"].astype(str).str.startswith(_WITH_PREFILL)]
    if batch is not None:
        own = own[own["batch"] == batch]
    return own if gamma is None else own[own["gamma"] == gamma]


def measured_here(measured: pd.DataFrame, scenario: Scenario, batch: int, gamma: int) -> pd.DataFrame:
    """The published speedups of this very setup (:func:`same_setup`) at ``batch`` and ``gamma``, highest
    first, each with ``model_speedup``: the scenario's speedup (:func:`specviz.calculator.evaluate_scenario`,
    its costs and load as the calculator prices them) at the α of the row's acceptance length, and its
    band (``model_low``, ``model_high``: :func:`specviz.calculator.speedup_band`), and ``outside_range``
    where the measurement lies outside that band; NaN (None) where the row gives no length or one no
    draft of this γ makes. ``ceiling_high``, the top of the band at α = 1, and ``floor_low``, its low
    edge at α = 0 (nothing accepted), are what any acceptance allows: a row without a length measured
    above the one or below the other is beyond the model at the preset's costs. The
    model beside what was measured at the same point: the vLLM post's EAGLE-3 on gpt-oss-20b, at batch
    8 and γ 3 on a B200, measured 1.72× on HumanEval at 2.65 tokens a step."""
    there = (measured["batch"].to_numpy() == batch) & (measured["gamma"].to_numpy() == gamma)
    own = same_setup(measured.iloc[np.flatnonzero(there)] if there.any() else measured.iloc[:0], scenario, gamma)
    if own.empty:
        return own.assign(alpha=np.nan, model_speedup=np.nan, model_low=np.nan, model_high=np.nan, outside_range=None,
                          ceiling_high=np.nan, floor_low=np.nan)
    own = own.sort_values("value", ascending=False, kind="stable")
    lengths = pd.to_numeric(own["acceptance_length"], errors="coerce").to_numpy(dtype=float)
    makes = (lengths >= 1.0) & (lengths <= np.asarray(scenario.expected_tokens(1.0, gamma), dtype=float) + 1e-12)
    alphas, model, low, high = (np.full(lengths.shape, np.nan) for _ in range(4))
    if makes.any():
        alphas[makes] = spec.alpha_from_acceptance_length(lengths[makes], float(gamma), **scenario.reuse)
        at = (scenario, alphas[makes], gamma, batch, scenario.context)
        model[makes] = np.asarray(calculator.evaluate_scenario(*at)["speedup"], dtype=float)
        low[makes], high[makes] = (np.asarray(edge, dtype=float) for edge in calculator.speedup_band(*at))
    values = own["value"].to_numpy(dtype=float)
    outside = [None if np.isnan(m) else bool(not lo <= v <= hi) for m, lo, hi, v in zip(model, low, high, values)]
    _, ceiling_high = calculator.speedup_band(scenario, 1.0, gamma, batch, scenario.context)
    floor_low, _ = calculator.speedup_band(scenario, 0.0, gamma, batch, scenario.context)
    return own.assign(alpha=alphas, model_speedup=model, model_low=low, model_high=high, outside_range=outside,
                      ceiling_high=float(ceiling_high), floor_low=float(floor_low))


def measured_notice(row: pd.Series) -> Notice:
    """A row of :func:`measured_here` as the calculator's headline notes say it: the measurement and the
    model's figure at its acceptance (``calc.measured_here``); one outside the model's band says to
    calibrate (``calc.measured_here_outside``); one the model cannot price (no acceptance length, or
    one no draft of its γ makes) says how it was measured instead (``calc.measured_here_no_length``), and
    where it lies above the band's top at α = 1 or below its low edge at α = 0, that no acceptance
    prices it (``calc.measured_here_above_ceiling``, ``calc.measured_here_below_floor``). :data:`OFF_MODEL`
    are the keys of a measurement the model does not reach."""
    said = dict(batch=int(row["batch"]), gamma=int(row["gamma"]), value=float(row["value"]),
                metric=Notice(f"metric.{row['metric']}"),
                series=str(row["series"]) if isinstance(row["series"], str) else str(row["study"]))
    if math.isnan(row["model_speedup"]):
        # Above what α = 1 allows (a figure of decoding or of a whole request, which decoding bounds, not a
        # TPOT under a load that also prefills): no acceptance prices it (an engineer's pass: AMD's 2.11×
        # for DeepSeek-V3 + MTP on 8 MI300X stood without remark below the page's 1.04×, whose band at
        # α = 1 ends at 1.64×).
        priced = not (row["metric"] == "tpot_speedup" and pd.notna(row.get("prompt_tokens")))
        if priced and row["value"] > row["ceiling_high"]:
            return Notice("calc.measured_here_above_ceiling", **said, note=note_quoted(row["note"]),
                          high=float(row["ceiling_high"]))
        # Below what nothing accepted allows: vLLM's DeepSeek-R1 + MTP on 2 GB300s measured 0.81× in
        # throughput at concurrency 64 beside a headline of 1.49× whose floor is 0.82× (an engineer's pass).
        if priced and row["value"] < row["floor_low"]:
            return Notice("calc.measured_here_below_floor", **said, note=note_quoted(row["note"]),
                          low=float(row["floor_low"]))
        return Notice("calc.measured_here_no_length", **said, note=note_quoted(row["note"]))
    return Notice("calc.measured_here_outside" if row["outside_range"] else "calc.measured_here", **said,
                  length=float(row["acceptance_length"]), alpha=float(row["alpha"]), model=float(row["model_speedup"]),
                  low=float(row["model_low"]), high=float(row["model_high"]))


OFF_MODEL = frozenset({"calc.measured_here_outside", "calc.measured_here_above_ceiling", "calc.measured_here_below_floor"})

# A published row's note as a reason or a line quotes it: its caveats come first ("relaxes acceptance
# (not lossless)"), and the P-EAGLE rows' account of reading a chart runs to 1,500 characters. AMD's
# own caveat had been cut at 240 (a browser pass).
NOTE_CHARS = 480


def note_quoted(note: object) -> str:
    """A published row's ``note`` as Claims and the calculator quote it: whole up to :data:`NOTE_CHARS`,
    else cut at a word before it, with "…" (:func:`specviz.advice.claim_words.cut_at_word`)."""
    return claim_words.cut_at_word(note if isinstance(note, str) else "", NOTE_CHARS)


def _at_claimed_batch(own: pd.DataFrame, batch: int | None) -> pd.DataFrame:
    """The measurements at ``batch`` where there are some, else all of ``own``."""
    if batch is None:
        return own
    there = own[own["batch"] == batch]
    return there if not there.empty else own


def pair_acceptance(scenario: Scenario, published: Sequence[PublishedAcceptance],
                    lowest: bool = False) -> tuple[float, PublishedAcceptance] | None:
    """The highest acceptance published for the scenario's own pair (target and draft, as the calculator
    offers it: :func:`specviz.scenario.published_acceptance`), or the ``lowest`` (what a slowdown is
    weighed against), as α at the scenario's reuse of MTP layers, with its row; None where the pair has
    none. Matched by the draft's exact id: the SpecForge head for gpt-oss-120b is not the SpecDrift one."""
    own = []
    for row in published_acceptance(published, scenario.target_id, scenario.draft_id):
        try:
            own.append((row.alpha_at(scenario.reuse), row))
        except InputError:  # a length the draft cannot make at this reuse: no α to weigh
            continue
    return (min if lowest else max)(own, key=lambda found: found[0]) if own else None
