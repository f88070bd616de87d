"""The advice commands: ``claim`` checks a claimed speedup on the scenario of a calculator link
(:func:`claim_row`, the Claims page's check) or against costs given as ratios
(:func:`claim_at_costs_row`); ``vllm-config`` writes ``vllm serve`` for a version, target and draft
(:func:`vllm_config_row`); ``serve`` writes the vLLM, SGLang or TensorRT-LLM command for a link's scenario
(:func:`serve_row`, the Deploy view's)."""

from __future__ import annotations

import argparse
import math
import shlex
import sys
import tempfile
import urllib.parse
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from specviz import i18n, scenario, settings
from specviz.advice import (claim_over, claim_sentence, claim_verdict, claim_words, claims, commands, draft_length,
                            evidence, serving, sglang, slowdown, trtllm)
from specviz.errors import Notice, SpecvizError, shortened
from specviz.model import dtypes, spec
from specviz.results import explorer, importers
from specviz.results import schedule as measured

from .common import (UsageError, count, frame_rows, in_range, integer, json_text, link_params, link_query,
                     linked_scenario, number, open_store, plain, presets, published_speedups, scenario_options,
                     scenario_params, sidebar_notes, words)

# vllm-config's --method: vLLM's names for what drafts, other than a draft model.
_CONFIG_METHODS = ("ngram", "eagle", "eagle3", *(m for m in commands.METHODS if m != "draft"))


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
              gamma: int | None = None, measured: tuple[str, float, int] | None = None,
              overrides: dict[str, str] | None = None, lang: str = "en", sentence: bool = True) -> dict[str, Any]:
    """The Claims page's check of ``text`` ("up to 3x", "2.5x at batch 64", a number, or a slide's
    whole sentence, whose GPU, model, method, precision, batch, γ and context set the scenario as the page sets them, under
    ``overrides``, and whose figure over another method is said: ``over``) on the scenario of a calculator link (with ``overrides`` over it): the verdict, its headline, reasons
    and conditions in words, what it requires at the easiest γ (or the claimed one), the best
    setting, the batches where it can hold, and the α each γ needs (``measured``: the acceptance
    measured on the user's traffic, as (measure, value, γ), read for the scenario's draft as the page
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
        measured = (fields["claim_measure"], fields["claim_value"],
                    fields.get("claim_measured_gamma", claims.MEASURED_GAMMA))
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
    alpha = None if measured is None else claims.alpha_from_measurement(*measured, chosen.reuse)
    measured_gamma = measured[2] if measured is not None and measured[0] != "alpha" else None
    tokens = None if workload is None else (workload.input_tokens, workload.output_tokens)
    measured = evidence.comparable_published(published_speedups(), chosen, presets)
    claim = claims.Claim(speedup, batch=batch, gamma=gamma, alpha=alpha, workload=tokens, measured_gamma=measured_gamma)
    # A figure below 1 is a slowdown, checked as the Claims page checks it.
    slowing = speedup < 1.0
    check = (slowdown.check_slowdown(chosen, claim, settings.get("SPECVIZ_GAMMA_MAX"), settings.get("SPECVIZ_BATCH_MAX"),
                                     presets.acceptance) if slowing else
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
                **{key: {k: plain(v) for k, v in best.items()} for key, best in (
                    ("best", {k: v for k, v in check.best.items() if k != "trained"}),
                    ("best_trained", check.best.get("trained"))) if best}}),
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


def vllm_config_row(args: argparse.Namespace, presets: scenario.Presets) -> dict[str, Any]:
    """``vllm serve`` for a version, a target and a draft model or method: the command, why vLLM
    would not start it as it stands (``problems``) and what else to know of it (``warnings``), in
    words in ``args.lang``, and, with --by-batch, the best draft length per
    batch size from the step model on --gpu at --alpha, written into the command where the version
    takes it."""
    if args.by_batch and (args.gpu is None or args.alpha is None):
        raise UsageError("cli.vllm_config.by_batch")
    # Before the oldest release it knows, specviz knows no option's name (serve refuses them too).
    if commands.parse_version(args.version) < commands.parse_version(commands.VLLM_VERSIONS[0]):
        raise UsageError("cli.version.too_old", version=shortened(args.version), oldest=commands.VLLM_VERSIONS[0])
    params = scenario_params(args, presets, tp=args.tp, dp=args.dp, ep=args.ep, precision=args.precision,
                             kv=args.kv, alpha=args.alpha, gamma=args.gamma)
    if args.method in scenario.DRAFT_KINDS and args.method not in commands.METHODS:
        params["draft"] = args.method
    chosen = linked_scenario("", presets, params)
    method = args.method if args.method in commands.METHODS else "draft"
    schedule = (draft_length.gamma_schedule(chosen, chosen.alpha, chosen.context, settings.get("SPECVIZ_BATCH_MAX"),
                                           settings.get("SPECVIZ_GAMMA_MAX"), "vllm") if args.by_batch else None)
    command = commands.vllm_command(chosen, args.version, args.gamma, schedule=schedule,
                                       off_from=args.disable_by_batch_size, draft_repo=args.head,
                                       # A Hugging Face id names the checkpoint (the preset's own is no other).
                                       target_repo=args.target_repo or (args.target if "/" in args.target else None),
                                       prompt_lookup_max=args.prompt_lookup_max, method=method)
    # With data-parallel ranks, or suffix decoding from 0.33.0, one length: here the --gamma given, not
    # the best at a batch (this command names none), which by_batch lists (an attack pass: "the best
    # length at this batch").
    given = {"command.schedule_dp": "command.schedule_dp_given", "command.schedule_suffix": "command.schedule_suffix_given"}
    notices = [Notice(given[n.key], **n.params) if n.key in given else n for n in command.notices]
    # Past the newest release specviz knows, its options are taken as that release's: said (a CLI
    # pass: 9.9.9 had been written for without a word, where serve refuses it).
    newest = commands.VLLM_VERSIONS[-1]
    if commands.parse_version(args.version) > commands.parse_version(newest):
        notices.append(Notice("cli.version.newer", version=shortened(args.version), newest=newest))
    row: dict[str, Any] = {"command": command.line, "problems": [words(n, args.lang) for n in command.problems],
                           "warnings": [words(n, args.lang) for n in (*notices, *sidebar_notes(chosen))]}
    if schedule is not None:
        row["by_batch"] = [[int(r.first), int(r.last), int(r.gamma)] for r in schedule.itertuples()]
    return row


def linked_deploy(link: str) -> dict[str, Any]:
    """The Deploy view's fields a link carries beside its scenario, each read as the view reads it, by
    :func:`serve_row`'s argument names: ``engine`` (``serve_engine``; the release,
    :func:`linked_release`, is read for the engine the command is for), ``method`` (``serve_method``),
    ``by_load`` (``serve_by_load``, ``true`` or ``false``) and the checkpoints' ids ``target`` and
    ``draft`` (``serve_target_repo``, ``serve_draft_repo``), those the link gives: a link copied from
    the view then gets the view's command (an SGLang command's link had given vLLM's, with the head
    it named left a placeholder).

    Raises
    ------
    UsageError
        ``cli.serve.bad_link_field``, naming the parameter and its value, for one the view would
        not take.
    """
    given = link_params(link)
    fields: dict[str, Any] = {}
    # A choice is taken as written (the view refuses " sglang" or an empty one); an id is stripped, as
    # the view's field strips it, and an empty one names none.
    for name, key, takes in (("engine", "serve_engine", lambda text: text in serving.ENGINES),
                             ("method", "serve_method", lambda text: text in commands.METHODS),
                             ("by_load", "serve_by_load", lambda text: text in ("true", "false")),
                             ("target", "serve_target_repo", lambda text: len(text.strip()) <= serving.REPO_CHARS),
                             ("draft", "serve_draft_repo", lambda text: len(text.strip()) <= serving.REPO_CHARS)):
        if key not in given:
            continue
        if not takes(given[key]):
            raise UsageError("cli.serve.bad_link_field", name=key, value=shortened(given[key]))
        fields[name] = given[key] == "true" if name == "by_load" else given[key].strip() or None
    return fields


def linked_release(link: str, engine: str) -> str | None:
    """The release a link gives for ``engine``, under its key of
    :data:`specviz.advice.serving.VERSION_KEYS`, as the Deploy view reads it: only the key of the engine
    the command is for (another engine's is the view's too, and not read).

    Raises
    ------
    UsageError
        ``cli.serve.bad_link_field`` for a release the view does not list for ``engine``.
    """
    key = serving.VERSION_KEYS[engine]
    given = link_params(link).get(key)
    if given is not None and given not in serving.VERSIONS.get(engine, ()):
        raise UsageError("cli.serve.bad_link_field", name=key, value=shortened(given))
    return given


def serve_row(link: str, presets: scenario.Presets, *, engine: str | None = None, version: str | None = None,
              method: str | None = None, draft: str | None = None, target: str | None = None,
              by_load: bool | None = None, lang: str = "en") -> dict[str, Any]:
    """The Deploy view's command for the scenario of a calculator link: by load, the best γ for every
    batch size written where the engine takes it (else the best γ at the link's batch), and the
    batch from which to stop; otherwise the link's γ. ``draft`` and ``target`` name checkpoints the
    presets do not. Where an argument is None, the view's own field in the link stands for it
    (:func:`linked_deploy`), else the view's default (the scenario's engine and its default release,
    a draft model's method, by load). Its advice, notices and problems in words, in ``lang``."""
    chosen = linked_scenario(link, presets)
    fields = linked_deploy(link)
    engine = engine or fields.get("engine") or serving.command_engine(chosen)
    version = version or linked_release(link, engine)
    method = method or fields.get("method", "draft")
    by_load = fields.get("by_load", True) if by_load is None else by_load
    draft, target = draft or fields.get("draft"), target or fields.get("target")
    _check_release(engine, version)
    version = version or serving.default_version(engine, chosen)
    batch_max, gamma_max = settings.get("SPECVIZ_BATCH_MAX"), settings.get("SPECVIZ_GAMMA_MAX")
    schedule = draft_length.gamma_schedule(chosen, chosen.alpha, chosen.context, batch_max, gamma_max, engine)
    advice = [words(n, lang) for n in draft_length.advise(chosen, chosen.alpha, chosen.gamma, chosen.batch, schedule,
                                                          engine, by_load and method == "draft")]
    if schedule.empty:  # not one sequence fits: no command, as on the page, which says so for another engine
        problems = [] if engine == serving.command_engine(chosen) else [words(serving.engine_no_fit(chosen, engine), lang)]
        return {"engine": engine, "version": version, "command": None, "files": {}, "problems": problems,
                "notices": [], "advice": advice}
    command = serving.serve_command(chosen, schedule, chosen.gamma, chosen.batch, engine=engine, version=version,
                                    method=method, draft_repo=draft, target_repo=target, by_load=by_load)
    return {"engine": engine, "version": version, "command": command.line,
            "files": command.files, "problems": [words(n, lang) for n in command.problems],
            "notices": [words(n, lang) for n in (*command.notices, *sidebar_notes(chosen))], "advice": advice}


def _check_release(engine: str, version: str | None) -> None:
    """Refuse a --version that is not a release of ``engine`` specviz writes for, naming those it does."""
    releases = serving.VERSIONS.get(engine, ())
    if version is not None and version not in releases:
        # Quoted and cut: " 0.24.0" had read as 0.24.0, and 100,000 nines had filled a 100 kB line.
        given = repr(version[:40] + ("…" if len(version) > 40 else ""))
        if releases:
            raise UsageError("cli.version.unknown", version=given, engine=engine, releases=", ".join(releases))
        raise UsageError("cli.version.none", version=given, engine=engine)


def _engine_schedule(ranges: pd.DataFrame, engine: str, version: str | None,
                     methods: list[str]) -> tuple[dict[str, Any] | None, Notice | None]:
    """A measured schedule in ``engine``'s own form, or None and why the release cannot hold it:
    also where it does not read one for a drafting method of the runs (``methods``: SGLang's tiers
    run with EAGLE, EAGLE3 and MTP; TensorRT-LLM's draft_len_schedule by method and release), as the
    Deploy view's command says it (a CLI pass: schedules had been written for MTP runs either engine
    ignores)."""
    longest = int(ranges["gamma"].max())
    if engine == "vllm":  # the Deploy view's keys, and its word where the release has none
        release = version or commands.VLLM_VERSIONS[-1]
        if unread := [m for m in methods if commands.vllm_drops_schedule(m, release)]:
            return None, Notice("cli.schedule.method_unread", methods=", ".join(unread), engine=f"vLLM {release}")
        return commands.vllm_schedule(ranges, release)
    if longest == 0:
        return None, Notice("cli.schedule.no_gain")
    if engine == "sglang":
        if unread := [m for m in methods if m not in sglang.TIERED_METHODS]:
            return None, Notice("cli.schedule.method_unread", methods=", ".join(unread), engine="SGLang")
        return {"adaptive_tiers": sglang.rank_tiers(ranges, 1)}, None
    release = version or trtllm.TRTLLM_DEFAULT
    if unread := [m for m in methods if not trtllm.reads_schedule(m, commands.parse_release(release))]:
        return None, Notice("cli.schedule.method_unread", methods=", ".join(unread), engine=f"TensorRT-LLM {release}")
    table = trtllm.draft_len_schedule(ranges, commands.parse_release(release))
    if table is None:
        return None, Notice("cli.schedule.trtllm_order")
    return {"max_draft_len": longest, "draft_len_schedule": {str(k): v for k, v in table.items()}}, None


def schedule_rows(paths: list[Path], engine: str, version: str | None = None, lang: str = "en") -> dict[str, Any]:
    """Measured draft-length tables (:mod:`specviz.results.schedule`) from result files, each
    setting's in ``engine``'s form, and how many speculative runs could not enter (no batch: a
    request-rate load; no plain run of their batch to measure against; an acceptance the benchmark
    set, :mod:`specviz.results.synthetic`). The files are read into a store of their own, never the
    user's. A table's note, where there is one, in ``lang``."""
    _check_release(engine, version)
    files = [found for path in paths for found in (importers.result_files(path) if path.is_dir() else [path])]
    with tempfile.TemporaryDirectory(prefix="specviz-schedule-") as folder:
        store = open_store(Path(folder) / "runs.duckdb", create=True)
        try:
            for path in files:
                try:
                    store.import_path(path, settings.get("SPECVIZ_MAX_UPLOAD_BYTES"))
                except SpecvizError:
                    raise
                except Exception as exc:  # an unreadable file is named, never a traceback
                    raise importers.as_ingest_error(str(path), exc) from None
            runs, synthetic = explorer.measured_acceptance(explorer.with_view_columns(store.runs()))
        finally:
            store.close()
    table = measured.measured_draft_lengths(runs)
    # Each setting's drafting methods, by its key with NaN as None (NaN is no key a dict finds again).
    setting = lambda key: tuple(None if pd.isna(part) else part for part in key)
    speculative = runs[explorer.is_speculative(runs)]
    methods = {setting(key): sorted({kind for method in group["spec_method"].dropna() if (kind := _method_kind(method))})
               for key, group in speculative.groupby(list(measured.SETTING), dropna=False, sort=False)}
    tables = []
    for key, one in table.groupby(list(measured.SETTING), dropna=False, sort=False):
        ranges = measured.as_ranges(one)
        config, note = _engine_schedule(ranges, engine, version, methods.get(setting(key), []))
        tables.append({"setting": {k: plain(v) for k, v in zip(measured.SETTING, key)},
                       "by_batch": frame_rows(one.drop(columns=list(measured.SETTING))),
                       "ranges": [[int(r.first), int(r.last), int(r.gamma)] for r in ranges.itertuples()],
                       "engine": engine, "version": version or serving.DEFAULT_VERSIONS.get(engine),
                       "config": config, "note": None if note is None else words(note, lang)})
    without_batch = int((explorer.is_speculative(runs) & runs["concurrency"].isna()).sum())
    unpaired = len(explorer.unpaired_speculative(runs, explorer.pair_with_baselines(runs)))
    return {"tables": tables, "speculative_runs_without_a_batch": without_batch,
            "speculative_runs_without_a_baseline": unpaired, "runs_at_synthetic_acceptance_left_out": synthetic}


def _method_kind(method: str) -> str | None:
    """The drafting method a run's ``spec_method`` names (:func:`specviz.advice.claim_over.first_method`;
    "draft_model" and SGLang's "standalone": draft_model; vLLM's "suffix", which a sentence names as
    "suffix decoding"), None where it names none specviz knows."""
    named = method.strip().lower()
    return claim_over.first_method(method) or ("draft_model" if named in ("draft_model", "standalone")
                                               else "suffix" if named == "suffix" else None)


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
    at = claims.MEASURED_GAMMA if args.measured_gamma is None else args.measured_gamma
    measured = None if args.measure is None else (args.measure, args.value, at)
    if args.verify_cost is not None:
        if link or any(getattr(args, name) is not None for name in ("gpu", "target", "draft", "engine", "context")):
            raise UsageError("cli.claim.costs_and_scenario")
        draft_cost = spec.SEED_DRAFT_COST if args.draft_cost is None else args.draft_cost
        alpha = None if measured is None else claims.alpha_from_measurement(*measured)
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
is trained for or a reused MTP layer measured, where the best is past them), the batches where the claim can hold (`holds_at_batches`,
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

_VLLM_CONFIG_DOC = """\
`vllm serve` for a version, a target and a draft model or a method: the command, its `problems`
(why vLLM would not start it as it stands: a checkpoint still to be named) and its `warnings`;
with --by-batch, the best draft length per batch size as `by_batch`, in the command where the
version takes it. Exit 0 for a command to run, 1 for one with problems (said on stderr); a method
the version cannot run exits 2 with one line. Its scenario is its
options' (the GPU count, expert parallelism and the weights' and cache's formats among them): for a
calculator's link, with its batch, context and costs, `specviz serve`.
"""

_SERVE_DOC = """\
The Deploy view's command for a link's scenario, vLLM, SGLang or TensorRT-LLM (with the YAML file
its --extra_llm_api_options reads), with its advice, notices and problems (a draft the version
cannot run, a draft still to be named). A link copied from the Deploy view carries the view's own
fields (serve_engine, the engine's release, serve_method, serve_by_load, serve_target_repo,
serve_draft_repo): they stand where no option does, so the command is the view's. Exit 0 for a
command to run; 1 where there is none (not one sequence fits) or the engine would not start it as
it stands (`problems`), said on stderr, and with --format shell the script then exits 1 before any
command, so that `| bash` runs nothing.
"""

def add_parsers(sub: argparse._SubParsersAction) -> None:
    """The advice subcommands."""
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
    p.add_argument("--measured-gamma", type=count, help="the γ it was measured at (default: the link's, else 4)")
    p.add_argument("--format", choices=("json",), default="json", help="output format")
    p.set_defaults(run=lambda args: (json_text(_claim(args, presets())), 0))

    p = sub.add_parser("vllm-config", description=_VLLM_CONFIG_DOC, help="the vllm serve command for a version, target and draft or method "
                                           "(with --by-batch, the draft length per batch size)")
    p.add_argument("--version", required=True, help="the vLLM release, e.g. 0.10.0")
    p.add_argument("--target", required=True, help="a model preset id, its Hugging Face id or a checkpoint of its "
                                                   "architecture (deepseek-ai/DeepSeek-R1 is DeepSeek-V3)")
    p.add_argument("--target-repo", help="the checkpoint to serve, where not the preset's own (default: --target where "
                                         "it names a checkpoint of the preset's architecture)")
    drafting = p.add_mutually_exclusive_group(required=True)
    drafting.add_argument("--draft", help="a draft model or head: a preset id (a model's or a draft head's) or a model's Hugging Face id")
    drafting.add_argument("--method", choices=_CONFIG_METHODS, help="a method instead of a draft model "
                                                                    "(--head names an EAGLE, Medusa or MLP checkpoint)")
    p.add_argument("--head", help="the Hugging Face id of the EAGLE, EAGLE-3, Medusa or MLP-speculator checkpoint")
    p.add_argument("--gamma", type=count, required=True, help="num_speculative_tokens")
    p.add_argument("--tp", type=integer, choices=scenario.TENSOR_PARALLEL, help="tensor parallelism (default: the "
                                                                           "GPUs the pair needs)")
    p.add_argument("--dp", type=integer, choices=scenario.DATA_PARALLEL, help="data-parallel attention groups of --tp "
                                                                         "GPUs each (default: as for --tp)")
    p.add_argument("--ep", choices=scenario.EXPERT_PARALLEL, help="expert parallelism over the tp·dp GPUs (default: "
                                                                 "on where the pair needs it)")
    p.add_argument("--precision", choices=list(dtypes.PRECISIONS), help="the weights' and KV cache's formats (default "
                                                                       "checkpoint: each component's as its config.json ships it)")
    p.add_argument("--kv", choices=dtypes.KV_FORMATS, help="the KV cache's format, over the precision's")
    p.add_argument("--disable-by-batch-size", type=count, help="stop speculating from this batch (where the "
                                                               "version can)")
    p.add_argument("--prompt-lookup-max", type=count, default=4,
                   help="the n-gram looked up in the prompt (vLLM's prompt_lookup_max, default 4): from 0.8.2, "
                        "with no prompt_lookup_min, vLLM matches exactly this many tokens; before, 1 up to it")
    p.add_argument("--by-batch", action="store_true", help="the best draft length for each batch size from the step "
                                                           "model (needs --gpu and --alpha)")
    p.add_argument("--gpu", help=f"GPU preset id (default {scenario.DEFAULT_GPU}): it sizes the GPU count and "
                                "--max-num-seqs (needed with --by-batch)")
    p.add_argument("--alpha", type=number, help="per-position acceptance α (for --by-batch)")
    p.add_argument("--context", type=integer, help="context length in tokens: it sizes --max-model-len and --max-num-seqs "
                                               "(default 1,024)")
    p.add_argument("--format", choices=("json",), default="json", help="output format")
    p.set_defaults(run=lambda args: _written(vllm_config_row(args, presets()), json_text, args.lang))

    p = sub.add_parser("schedule", description=_SCHEDULE_DOC, help="the best draft length per batch size, measured "
                                     "from result files, as an engine's schedule")
    p.add_argument("--from-runs", type=Path, nargs="+", required=True, metavar="FILE",
                   help="result files (or folders of them) holding plain and speculative runs at several batches")
    p.add_argument("--engine", choices=serving.ENGINES, default="vllm", help="whose schedule to write (default vllm)")
    p.add_argument("--version", help="the TensorRT-LLM release whose draft_len_schedule to write (default "
                   + serving.DEFAULT_VERSIONS["trtllm"] + "; 1.2 and 1.3 read its keys differently)")
    p.add_argument("--format", choices=("json",), default="json", help="output format")
    p.set_defaults(run=lambda args: (json_text(schedule_rows(args.from_runs, args.engine, args.version, args.lang)), 0))

    p = sub.add_parser("serve", description=_SERVE_DOC, help="the vLLM, SGLang or TensorRT-LLM command for the scenario of a "
                                     "calculator link, as the Deploy view writes it")
    p.add_argument("link", nargs="?", default="", help="the scenario, as for calc; empty: the default scenario")
    p.add_argument("--engine", choices=serving.ENGINES,
                   help="the command's engine (default: the Deploy view's, the link's serve_engine, else the link's "
                        "engine: SGLang's for engine=sglang, TensorRT-LLM's for engine=trt-llm, else vLLM's)")
    p.add_argument("--version", help="the vLLM release (" + ", ".join(serving.VERSIONS["vllm"]) + "; default "
                   + serving.DEFAULT_VERSIONS["vllm"] + ", " + commands.vllm_default_version("vllm-v0")
                   + " for engine=vllm-v0, the newest that serves on V0) or TensorRT-LLM release (" + ", ".join(serving.VERSIONS["trtllm"])
                   + "; default " + serving.DEFAULT_VERSIONS["trtllm"] + "); a link from the Deploy view gives its own "
                   "(serve_version, trtllm_version)")
    p.add_argument("--method", choices=commands.METHODS,
                   help="how to draft (default: the link's serve_method, else the scenario's draft)")
    p.add_argument("--draft", help="the draft's Hugging Face id or path, where specviz has none")
    p.add_argument("--target-repo", help="the target's Hugging Face id or path, where not the preset's own "
                                         "(DeepSeek-R1 on DeepSeek-V3's architecture, an FP4 build)")
    p.add_argument("--one-length", action="store_true", help="one draft length (the link's γ), not one per batch size")
    p.add_argument("--format", choices=("json", "shell"), default="json",
                   help="output format: json, or shell (a script: the notes as comments, the files, the command)")
    p.set_defaults(run=_serve)


_SCHEDULE_DOC = """\
The best draft length at each batch, measured: from a grid of runs that share target, draft, GPU,
engine and workload but differ in batch (concurrency) and γ (SpecForge's benchmark, a vllm bench
sweep over num_speculative_tokens, your own runs), each speculative run against the plain run of
its batch; written as the engine's schedule (vLLM's num_speculative_tokens_per_batch_size, SGLang's
adaptive tiers, TensorRT-LLM's draft_len_schedule for the release), where the engine reads one for
the runs' drafting method (SGLang's tiers: EAGLE, EAGLE3 and MTP; TensorRT-LLM's: n-gram and draft
models from 1.2.0rc3, EAGLE-3 from 1.3.0rc8, MTP in no release identified), else `config` is null and
`note` says why. The files are read, not stored.
"""


def _serve(args: argparse.Namespace) -> tuple[str, int]:
    row = serve_row(args.link, presets(), engine=args.engine, version=args.version, method=args.method,
                    draft=args.draft, target=args.target_repo, by_load=False if args.one_length else None,
                    lang=args.lang)
    return _written(row, (lambda r: _shell(r, args.lang)) if args.format == "shell" else json_text, args.lang)


def _written(row: dict[str, Any], text: Callable[[dict[str, Any]], str], lang: str) -> tuple[str, int]:
    """A serving command's row as ``text`` writes it, and the exit status: 1 where there is no command
    (not one sequence fits) or the engine would not start it as it stands (``problems``: a draft it
    cannot run, a checkpoint to name), said on stderr, so that a script can tell (both had exited 0);
    else 0."""
    if row["command"] is None or row["problems"]:
        said = (Notice("cli.serve.not_runnable", problems=len(row["problems"])) if row["command"] is not None
                else Notice("cli.serve.no_command"))
        print(f"specviz: {words(said, lang)}", file=sys.stderr)
        return text(row), 1
    return text(row), 0


def _shell(row: dict[str, Any], lang: str) -> str:
    """:func:`serve_row` as a script to read and run: its advice, problems and notices as comments
    (labelled in ``lang``), each file it reads written by a here-document, then the command. Where
    there is no command or the engine would not start it, the script exits 1 after the comments, so
    that ``| bash`` runs nothing (it had run a command with a placeholder for the draft, and crashed
    where there was no command)."""
    comment = lambda label, texts: [f"# {words(Notice(label), lang)}: {' '.join(text.splitlines())}" for text in texts]
    lines = [*comment("cli.serve.advice", row["advice"]), *comment("cli.serve.problem", row["problems"]),
             *comment("cli.serve.note", row["notices"])]
    if row["command"] is None or row["problems"]:
        lines.append("exit 1")
    for name, text in row["files"].items():
        lines += [f"cat > {shlex.quote(name)} <<'SPECVIZ_EOF'", text, "SPECVIZ_EOF"]
    return "\n".join([*lines, *([row["command"]] if row["command"] is not None else [])])
