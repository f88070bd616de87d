"""The ``claim`` command: a claimed speedup or slowdown checked on the scenario of a calculator link
(:func:`claim_row`, the Claims page's check) or against costs given as ratios (:func:`claim_at_costs_row`)."""

from __future__ import annotations

import argparse
import math
import sys
import urllib.parse
from typing import Any, Callable

import pandas as pd

from specviz import i18n, scenario, settings
from specviz.advice import claim_over, claim_sentence, claim_verdict, claim_words, claims, evidence, slowdown
from specviz.errors import Notice, SpecvizError, shortened
from specviz.model import spec

from .common import (UsageError, count, frame_rows, in_range, json_text, link_params, link_query, linked_scenario,
                     number, plain, presets, published_speedups, scenario_options, scenario_params, sidebar_notes,
                     words)

__all__ = ["claim_row", "claim_at_costs_row", "linked_claim", "add_parsers"]


def _required(chosen: scenario.Scenario | None, frame: pd.DataFrame, gamma: int | None) -> dict[str, Any]:
    """The α, acceptance length and vLLM rate a claim needs: at its γ, else at the γ that needs the
    least α, as the page's conditions name it (:func:`specviz.advice.claim_verdict.easiest`; None
    where no γ reaches it; ``chosen`` None at given costs)."""
    reachable = frame[frame["alpha_needed"].notna()]
    if gamma is None and len(reachable):
        row = claim_verdict.easiest(chosen, frame)
    elif gamma is not None and len(reachable):
        row = reachable.iloc[0]
    else:
        return {"required_gamma": gamma, "required_alpha": None, "required_acceptance_length": None,
                "required_acceptance_rate_vllm": None}
    # As the conditions and the page's table name them: α rounded up, the rate and length at it.
    shown = claims.required_as_shown(frame, None if chosen is None else chosen.reuse)
    row = shown.loc[shown["gamma"] == row["gamma"]].iloc[0]
    return {"required_gamma": int(row["gamma"]), "required_alpha": float(row["alpha_needed"]),
            "required_acceptance_length": float(row["acceptance_length"]),
            "required_acceptance_rate_vllm": float(row["acceptance_rate"])}


def _slowdown_figures(check: slowdown.SlowdownCheck) -> dict[str, Any]:
    """A slowdown's figures as the Claims page shows them (:class:`specviz.advice.slowdown.SlowdownCheck`):
    the least the setting gives with nothing accepted (``floor``) and, at the γ checked, the highest α
    at which the slowdown holds (rounded down as the conditions name it; None where none does), with
    the vLLM rate and acceptance length there, and the α below which it holds even at the kind end of
    the costs (``alpha_at_most_certain``)."""
    shown = slowdown.required_as_shown(check.required)
    row = shown.loc[shown["gamma"] == check.floor["gamma"]]
    value = lambda column: None if row.empty or column not in row or pd.isna(row[column].iloc[0]) else float(row[column].iloc[0])
    return {"floor": {k: plain(v) for k, v in check.floor.items()}, "required_gamma": check.floor["gamma"],
            "alpha_at_most": value("alpha_max"), "alpha_at_most_certain": value("alpha_certain"),
            "acceptance_rate_vllm_at_most": value("acceptance_rate_at_most"),
            "acceptance_length_at_most": value("acceptance_length_at_most")}


def _whole_up_to(setting: str) -> Callable[[str], int | None]:
    """A field's reading: a whole number from 1 to the setting's value, else None."""
    return lambda text: value if 1 <= (value := count(text)) <= settings.get(setting) else None


# The Claims page's own fields in its link, beside the scenario's, each read within the page's range
# for it (None: one the page would not take).
_CLAIM_FIELDS: dict[str, Callable[[str], Any]] = {
    "claim_batch": _whole_up_to("SPECVIZ_BATCH_MAX"), "claim_gamma": _whole_up_to("SPECVIZ_GAMMA_MAX"),
    "claim_measure": lambda text: text if text in ("none", *claims.MEASURES) else None,
    "claim_value": lambda text: value if 0 <= (value := float(text)) <= claims.MEASURED_VALUE_MAX else None,
    "claim_measured_gamma": _whole_up_to("SPECVIZ_GAMMA_MAX"), "claim_workload": str,
    # What the figure is over, as a sentence read on the page said it: (method, words).
    "claim_over": claim_over.over_from_link}


def linked_claim(link: str, presets: scenario.Presets, given_apart: frozenset[str] = frozenset()) -> dict[str, Any]:
    """The Claims page's fields a link carries beside its scenario (the batch, γ, measured acceptance,
    workload and what its figure is over of its check, by their parameters' names), each read as the page reads it, so that
    its link checked here gives the page's answer; those in ``given_apart`` (an option of the
    command stands for them) are not read.

    Raises
    ------
    UsageError
        ``cli.claim.bad_link_field``, naming the parameter and its value, for one the page would
        not take.
    """
    given = link_params(link)
    fields: dict[str, Any] = {}
    for name, read in _CLAIM_FIELDS.items():
        if name in given_apart or not given.get(name, "").strip():
            continue
        try:
            value = read(given[name])
        except (ValueError, argparse.ArgumentTypeError):
            value = None
        if value is None or (name == "claim_workload" and value != "none" and value not in presets.workloads):
            raise UsageError("cli.claim.bad_link_field", name=name, value=shortened(given[name]))
        fields[name] = value
    return fields


def claim_row(text: str, link: str, presets: scenario.Presets, *, batch: int | None = None,
              gamma: int | None = None, measured: tuple[str, float, int | None] | None = None,
              overrides: dict[str, str] | None = None, lang: str = "en", sentence: bool = True) -> dict[str, Any]:
    """The Claims page's check of ``text`` ("up to 3x", "2.5x at batch 64", a number, or a slide's
    whole sentence, whose GPU, model, method, precision, batch, γ and context set the scenario as the page sets them, under
    ``overrides``, and whose figure over another method is said: ``over``) on the scenario of a calculator link (with ``overrides`` over it): the verdict, its headline, reasons
    and conditions in words, what it requires at the easiest γ (or the claimed one), the best
    setting, the batches where it can hold, and the α each γ needs (``measured``: the acceptance
    measured on the user's traffic, as (measure, value, γ), its γ None where not given: the claim's,
    else the scenario's, :func:`specviz.advice.claims.measured_at`; read for the scenario's draft as the page
    reads it: :func:`specviz.advice.claims.alpha_from_measurement`). Its words in ``lang``. The link's
    own fields of the Claims page (:func:`linked_claim`: its batch, γ, measured acceptance and
    workload) stand where the arguments give none; what it says the page's own claim is over
    (``claim_over``) is said as on the page (``over`` or ``over_words``, ``over_note``). ``sentence``
    False: ``text`` is the page's claim field, which is never read as a sentence (its own GPU and
    model would set the scenario)."""
    apart = {name for name, option in (("claim_batch", batch), ("claim_gamma", gamma)) if option is not None}
    apart |= {"claim_measure", "claim_value", "claim_measured_gamma"} if measured is not None else set()
    fields = linked_claim(link, presets, frozenset(apart))
    batch = batch if batch is not None else fields.get("claim_batch")
    gamma = gamma if gamma is not None else fields.get("claim_gamma")
    if measured is None and fields.get("claim_measure", "none") != "none" and "claim_value" in fields:
        measured = (fields["claim_measure"], fields["claim_value"], fields.get("claim_measured_gamma"))
    workload = presets.workloads.get(fields.get("claim_workload", "none"))
    try:
        speedup, read = claim_words.parse_claim(text), None
    except SpecvizError as exc:
        if exc.key != "claims.unreadable" or not sentence:
            raise
        # A slide's whole sentence, read as the Claims page reads it: what it names sets the
        # scenario, under the options given here.
        read = claim_sentence.read_sentence(text, presets)
        speedup = read.speedup
        linked = linked_scenario(link, presets)
        target = (overrides or {}).get("target") or read.target or linked.target_id
        named, _ = claim_sentence.sentence_choices(read, presets, target)
        named |= {} if read.context is None else {"context": str(read.context)}
        if named.get("engine", linked.engine.id) != linked.engine.id:
            # A new engine brings its preset's costs, as the page's (and the sidebar's) choice of one does.
            costs = scenario.preset_costs(presets.engines[named["engine"]])
            named |= {name: str(getattr(costs, name)) for name in scenario.COST_KNOBS}
        overrides = {**named, **(overrides or {})}
    batch, batch_note = claims.claimed_batch(batch, read.batch if read is not None else claim_words.batch_in_words(text))
    gamma = gamma if gamma is not None or read is None else read.gamma
    # The Claims page judges on the sidebar's scenario, which decodes only at its own context: a
    # calculator link's steady load (prefill=on) is the calculator's alone (a consistency pass: the
    # command had judged at the load's mean context of 16,075 where the page judged at 1,024).
    chosen = linked_scenario(link, presets, {"prefill": "off", **(overrides or {})})
    if measured is not None:  # taken at the γ given, else the claim's, else the scenario's
        measured = (*measured[:2], claims.measured_at(measured[2], gamma, chosen.gamma))
    alpha = None if measured is None else claims.alpha_from_measurement(*measured, chosen.reuse)
    measured_gamma = measured[2] if measured is not None and measured[0] != "alpha" else None
    tokens = None if workload is None else (workload.input_tokens, workload.output_tokens)
    measured = evidence.comparable_published(published_speedups(), chosen, presets)
    claim = claims.Claim(speedup, batch=batch, gamma=gamma, alpha=alpha, workload=tokens, measured_gamma=measured_gamma)
    # A figure below 1 is a slowdown, checked as the Claims page checks it.
    slowing = speedup < 1.0
    check = (slowdown.check_slowdown(chosen, claim, settings.get("SPECVIZ_GAMMA_MAX"), settings.get("SPECVIZ_BATCH_MAX"),
                                     presets.acceptance, measured) if slowing else
             claims.check_claim(chosen, claim, settings.get("SPECVIZ_GAMMA_MAX"), settings.get("SPECVIZ_BATCH_MAX"),
                                presets.acceptance, measured))
    batches = lambda low, high: None if math.isnan(high) else [int(low), int(high)]
    # The runs of batches inside that range where it does not hold (ClaimCheck.holds_gaps): [[3, 17]].
    gaps = lambda key, runs: {key: [list(run) for run in runs]} if runs else {}
    percent = read.percent if read is not None else claim_words.percent_of(text)
    # The page's own claim from its link: what the link says its figure is over, as the page says it.
    method, over = (None, None) if read is not None or sentence else fields.get("claim_over", (None, None))
    over = read.over_words if read is not None else over
    return {"claim": speedup, "batch": batch, **({} if batch_note is None else {"batch_note": words(batch_note, lang)}),
            "alpha": alpha, "gpu": chosen.gpu.id, "target": chosen.target_id,
            **({} if percent is None else {"percent_note": words(claim_words.percent_reading(percent, speedup), lang)}),
            "draft": chosen.draft_id, "engine": chosen.engine.id, "precision": chosen.precision.name, "tp": chosen.tp,
            "dp": chosen.dp, "verdict": check.verdict,
            # What the sidebar would say of this scenario (FP4 weights multiplied at the BF16 peak on an H100).
            **({"notices": [words(n, lang) for n in notes]} if (notes := sidebar_notes(chosen)) else {}),
            "headline": " ".join(words(n, lang) for n in claim_verdict.headline(
                check, over, read.baseline if read is not None else method)),
            **({} if method is None else {"over": method, "over_note": words(Notice(
                "claims.sentence.relative", baseline=claim_verdict.method_named(method), speedup=speedup), lang)}),
            **({} if read is not None or over is None else {"over_words": over, "over_note": words(Notice(
                "claims.sentence.over_other", what=over), lang)}),
            "reasons": [words(n, lang) for n in check.reasons],
            "conditions": [words(n, lang) for n in check.conditions],
            **(_slowdown_figures(check) if slowing else {
                **_required(chosen, check.required, gamma), "max_speedup": plain(check.best["speedup"]),
                **{key: {k: plain(v) for k, v in best.items() if not k.startswith("holds_")} for key, best in (
                    ("best", {k: v for k, v in check.best.items() if k != "trained"}),
                    ("best_trained", check.best.get("trained"))) if best},
                **({} if (trained := check.best.get("trained")) is None else {
                    "holds_at_batches_trained": batches(trained["holds_from"], trained["holds_up_to"]),
                    **gaps("not_at_batches_trained", trained["holds_gaps"])})}),
            "holds_at_batches": batches(check.holds_from, check.holds_up_to),
            **gaps("not_at_batches", check.holds_gaps),
            "holds_at_your_acceptance": batches(check.yours_from, check.yours_up_to),
            **gaps("not_at_your_acceptance", check.yours_gaps),
            "required": frame_rows(check.required),
            **({} if read is None else {"read_from_sentence": {
                "gpu": read.gpu, "gpus": read.gpus, "target": read.target, "draft": read.draft, "dataset": read.dataset,
                "gamma": read.gamma, "precision": read.precision, "kv": read.kv, "engine": read.engine,
                "context": read.context,
                **({} if read.gamma_beyond is None else {"gamma_beyond": read.gamma_beyond, "gamma_note": words(Notice(
                    "claims.sentence.gamma_beyond", gamma=read.gamma_beyond, most=settings.get("SPECVIZ_GAMMA_MAX")), lang)}),
                **({} if read.context_beyond is None else {"context_beyond": read.context_beyond, "context_note": words(
                    Notice("claims.sentence.context_beyond", context=read.context_beyond,
                           most=settings.get("SPECVIZ_CONTEXT_MAX")), lang)}),
                "over": read.baseline,
                **({} if read.baseline is None else {"over_note": words(Notice(
                    "claims.sentence.relative", baseline=claim_verdict.method_named(read.baseline), speedup=read.speedup), lang)}),
                **({} if read.over_words is None else {"over_words": read.over_words, "over_note": words(Notice(
                    "claims.sentence.over_other", what=read.over_words), lang)}),
                **({} if read.over_words is None or read.speculation_said else {"speculation_note": words(Notice(
                    "claims.sentence.no_speculation", what=read.over_words), lang)}),
                **({} if read.target_words is None else {"target_words": read.target_words, "target_note": words(Notice(
                    "claims.sentence.same_architecture", words=read.target_words, model=chosen.target.name), lang)}),
                **({} if read.gpu_words is None else {"gpu_words": read.gpu_words, "gpu_note": words(Notice(
                    "claims.sentence.gpu_assumed", words=read.gpu_words, gpu=chosen.gpu.name), lang)}),
                **({} if read.unknown_model is None else {"unknown_model": read.unknown_model, "model_note": words(Notice(
                    "claims.sentence.unknown_model", model=read.unknown_model, target=chosen.target.name), lang)}),
                **({} if not read.same_speed else {"same_speed": True, "same_speed_note": words(Notice(
                    "claims.sentence.same_speed"), lang)}),
                **({} if not (gpus := claim_words.gpus_left_out(read.gpu, read.other_gpus, chosen.gpu.id)) else {
                    "other_gpus": gpus, "other_gpus_note": words(Notice(
                        "claims.sentence.other_gpus", others=", ".join(i18n.in_language(presets.gpus[gpu].name, lang)
                                                                       for gpu in gpus), gpu=chosen.gpu.name), lang)}),
                **({} if not (others := claim_words.batches_left_out(read.batch, read.other_batches, batch)) else {
                    "other_batches": others, "other_batches_note": words(Notice(
                        "claims.sentence.other_batches", others=", ".join(f"{other:,}" for other in others),
                        batch=f"{batch:,}"), lang)}),
                "draft_applied": read.draft is not None and read.draft == chosen.draft_id,
                "ask_its_author": [words(Notice(f"claims.sentence.unstated.{key}"), lang) for key in read.unstated]}})}


def claim_at_costs_row(speedup: float, verify_cost: float, draft_cost: float, *, gamma: int | None = None,
                       alpha: float | None = None, lang: str = "en") -> dict[str, Any]:
    """A claim against costs given as ratios of a plain step (:func:`specviz.advice.claims.check_at_costs`;
    a slowdown, :func:`specviz.advice.slowdown.check_slowdown_at_costs`), its reasons in ``lang``."""
    claim = claims.Claim(speedup, gamma=gamma, alpha=alpha)
    if speedup < 1.0:
        verdict, reasons, required = slowdown.check_slowdown_at_costs(claim, verify_cost, draft_cost,
                                                                      settings.get("SPECVIZ_GAMMA_MAX"))
        shown = slowdown.required_as_shown(required)
        reached = shown[shown["alpha_max"].notna()]
        return {"claim": speedup, "verify_cost": verify_cost, "draft_cost": draft_cost, "alpha": alpha,
                "verdict": verdict, "reasons": [words(n, lang) for n in reasons],
                "alpha_at_most": {int(g): float(a) for g, a in zip(reached["gamma"], reached["alpha_max"])},
                "floor": float(required["floor"].min()), "required": frame_rows(required)}
    verdict, reasons, required = claims.check_at_costs(claim, verify_cost, draft_cost, settings.get("SPECVIZ_GAMMA_MAX"))
    return {"claim": speedup, "verify_cost": verify_cost, "draft_cost": draft_cost, "alpha": alpha,
            "verdict": verdict, "reasons": [words(n, lang) for n in reasons], **_required(None, required, gamma),
            "max_speedup": float(required["max_speedup"].max()), "required": frame_rows(required)}


def _page_of(text: str) -> str | None:
    """The page a link's path names (a key of :data:`specviz.scenario.PAGE_PATHS`; ``calculator`` for
    the root, ``other`` for a path the app does not route), None for a bare query. The path's last
    segment is compared whole: "/not-check-a-claim" had been read as the Claims page (an attack pass)."""
    if text.startswith("?") or "?" not in text and "://" not in text and not text.startswith("/"):
        return None
    last = urllib.parse.urlsplit(text).path.rstrip("/").rsplit("/", 1)[-1]
    return "calculator" if not last else next((page for page, path in scenario.PAGE_PATHS.items() if path == last),
                                              "other")


def _is_link(text: str) -> bool:
    """Whether ``text`` reads as a calculator link or its query (a scenario's parameters), or as the
    Claims page's link (its path alone, as the page opens it), not as a claim's words."""
    named = set(urllib.parse.parse_qs(link_query(text)))
    return _page_of(text) == "claims" or bool(named & {*scenario.CHOICES, *scenario.FIELDS, "claim", *_CLAIM_FIELDS})


def _claim(args: argparse.Namespace, presets: scenario.Presets) -> dict[str, Any]:
    """``claim``: its words or --speedup, against --verify-cost and --draft-cost or a scenario."""
    if (args.measure is None) != (args.value is None):
        raise UsageError("cli.claim.measure_value")
    if args.speedup is None and args.text is None:
        raise UsageError("cli.claim.no_claim")
    if args.speedup is not None and args.link:
        raise UsageError("cli.claim.speedup_and_words")
    sentence = True
    if args.speedup is None and not args.link and _is_link(args.text):
        # The Claims page's own link holds its claim: checked as the page checks its claim field
        # (never read as a sentence), its last value where it is given twice (the field takes the
        # last, and the page says so). Another link where the words go is said.
        given = urllib.parse.parse_qsl(link_query(args.text), keep_blank_values=True)
        claimed = [value for name, value in given if name == "claim"]
        # The page's own link leaves its default claim out: its path, or (a bare query) a field of its
        # own, says it is one.
        page = _page_of(args.text)
        if not claimed and (page == "claims" or page is None and any(name in _CLAIM_FIELDS for name, _ in given)):
            claimed = [claims.DEFAULT_CLAIM]
        if claimed and not claimed[-1].strip():  # the page checks nothing then, and says so
            raise UsageError("cli.claim.blank_in_link", link=shortened(args.text))
        if not claimed:
            raise UsageError("cli.claim.link_as_words", link=args.text)
        text, link, sentence = claimed[-1], args.text, False
    else:
        text, link = (str(args.speedup), args.text or "") if args.speedup is not None else (args.text, args.link)
    measured = None if args.measure is None else (args.measure, args.value, args.measured_gamma)
    if args.verify_cost is not None:
        if link or any(getattr(args, name) is not None for name in ("gpu", "target", "draft", "engine", "context")):
            raise UsageError("cli.claim.costs_and_scenario")
        draft_cost = spec.SEED_DRAFT_COST if args.draft_cost is None else args.draft_cost
        alpha = None if measured is None else claims.alpha_from_measurement(
            args.measure, args.value, claims.measured_at(args.measured_gamma, args.gamma))
        return claim_at_costs_row(claim_words.parse_claim(text), args.verify_cost, draft_cost, gamma=args.gamma,
                                  alpha=alpha, lang=args.lang)
    if args.draft_cost is not None:
        raise UsageError("cli.claim.draft_cost_alone")
    # A calculator link's α, γ and batch are its own knobs, not the claim's (the Claims page reads
    # claim_batch, claim_gamma and a measured acceptance): said, where it had checked at none of them
    # without a word (a CLI pass).
    if calculator_knobs := [name for name in ("alpha", "gamma", "batch") if name in link_params(link)]:
        note = Notice("cli.claim.calculator_knobs", names=", ".join(calculator_knobs))
        print(f"specviz: {words(note, args.lang)}", file=sys.stderr)
    return claim_row(text, link, presets, batch=args.batch, gamma=args.gamma, measured=measured,
                     overrides=scenario_params(args, presets), lang=args.lang, sentence=sentence)


_CLAIM_DOC = """\
The Claims page's check on the scenario of a calculator link, or of --gpu, --target, --draft
(preset ids, or the Hugging Face ids the presets name), --engine and --context set over it. JSON:
the verdict (plausible, conditional, unlikely or impossible), its headline, reasons and conditions in words, `required_alpha`,
`required_acceptance_length` and `required_acceptance_rate_vllm` at the claimed γ or the one that
needs the least α, `max_speedup`, the best setting (`best`; `best_trained` within the positions an EAGLE-3 head
is trained for or a reused MTP layer measured, where the best is past them, with `holds_at_batches_trained` and
`not_at_batches_trained` within them), the batches where the claim can hold (`holds_at_batches`,
the first and last as `[from, to]`, null where none, with `not_at_batches` the runs between them where it
cannot; `holds_at_your_acceptance` and `not_at_your_acceptance` the same at the measured α), and the α
each γ needs. A slowdown ("35% slower at batch 64", "0.8x", a figure below 1) gives in their place the
least the setting gives with nothing accepted (`floor`, with the verify pass's and a draft pass's costs
and its regime), at the γ checked (`required_gamma`) the highest α at which it holds (`alpha_at_most`,
`alpha_at_most_certain` even at the kind end of the costs, `acceptance_rate_vllm_at_most`,
`acceptance_length_at_most`; null where none does), the batches where it can happen, and each γ's
(`required`: `floor`, `alpha_max`, `alpha_certain`, `alpha_possible`); at given costs, `floor` the
least and `alpha_at_most` by γ (seed 000's load test: `claim 0.65x --verify-cost 5 --gamma 4`, up to α 0.802). A whole sentence is read as the page reads it (`read_from_sentence`): what it names,
the questions to ask its author, and what its figure is over where that is not plain decoding (`over`,
a method such as EAGLE-3; `over_words`, anything else, "the best prior Blackwell baseline"), with
`over_note`, and the headline then says it is against plain decoding; a checkpoint read as the preset
of its architecture (`target_words`, "Llama 3.3 70B" as Llama 3.1 70B, with `target_note`); a --batch that is not the
batch the claim's words name is said in `batch_note`; a GPU family's name read as one GPU (`gpu_words`, "A100" as the A100 SXM 80GB, with
`gpu_note`), the GPUs and batches it names that the check is not on (`other_gpus`, `other_batches`, with
`other_gpus_note`, `other_batches_note`) and a model it names that is no preset (`unknown_model`, with `model_note`). Given the
Claims page's own link alone, it checks the link's claim (the page's default, "up to 3x", where the
link leaves it out) with the link's batch, γ, measured acceptance and workload, as the page does, and
what the link says its figure is over (`claim_over`, written by the page after a sentence: `over`
or `over_words` with `over_note`, and the headline's lead); an option given stands over the link's
field. A calculator link's alpha, gamma and batch are its own knobs, which a claim does not read: a
note on stderr says so (the claim's are --batch, --gamma and --measure with --value).

With --verify-cost (and --draft-cost, default 0.05) it checks the claim against those costs in
closed form (`claims.required_at_costs`): `claim 3x --verify-cost 1 --gamma 5`, 3x at γ 5 with a
draft pass at 0.05, needs 3.75 tokens per step (α 0.807, a vLLM acceptance rate of 0.55), and at γ 5
anything above 4.8x is impossible. A claim that
cannot be checked exits 2 with one line.
"""

def add_parsers(sub: argparse._SubParsersAction) -> None:
    """The ``claim`` subcommand."""
    p = sub.add_parser("claim", description=_CLAIM_DOC, help="check a claimed speedup (\"up to 3x\", \"2.5x at batch 64\") on a scenario, "
                                     "as the Claims page does, or against costs given as ratios")
    p.add_argument("text", nargs="?", help="the claim as it was written; with --speedup, the link")
    p.add_argument("link", nargs="?", default="", help="the scenario, as for calc; empty: the default scenario")
    p.add_argument("--speedup", type=number, help="the claimed speedup as a number, in place of its words")
    p.add_argument("--batch", type=count, help="the batch it was claimed at (default: the one its words name, "
                                                "else any)")
    p.add_argument("--gamma", type=count, help="the draft length it was claimed at (default: the best)")
    p.add_argument("--verify-cost", type=in_range("verify_cost"),
                   help="check against a verify pass of this cost (× a plain step) and --draft-cost, not against the "
                        "step model")
    p.add_argument("--draft-cost", type=in_range("draft_cost"), help=f"a draft pass's cost (× a plain step; default "
                                                     f"{spec.SEED_DRAFT_COST} with --verify-cost)")
    scenario_options(p)
    p.add_argument("--measure", choices=claims.MEASURES, help="how --value gives the acceptance on your traffic")
    p.add_argument("--value", type=number, help="the acceptance measured on your traffic")
    p.add_argument("--measured-gamma", type=count, help="the γ it was measured at (default: the link's, else the claim's, else the scenario's)")
    p.add_argument("--format", choices=("json",), default="json", help="output format")
    p.set_defaults(run=lambda args: (json_text(_claim(args, presets())), 0))
