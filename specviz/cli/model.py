"""The model's commands: ``speedup`` (the acceptance math at given cost ratios), ``roofline`` (step
times on a GPU preset), ``calc`` (what the calculator shows for a link's scenario, the band
included), ``simulate`` (the Latency view's simulation), ``model-from-config`` and ``presets``."""

from __future__ import annotations

import argparse
import itertools
import json
import math
import urllib.parse
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from specviz import calculator, regime, scenario, settings, workload
from specviz.advice import evidence
from specviz.errors import Notice, shortened
from specviz.model import architecture, dtypes, hf_config, roofline, simulate, spec, step

from .common import (FORMAT, OptionValueError, UsageError, config_model, count, format_rows, in_range, integer,
                     json_text, link_params, link_query, linked_scenario, number, plain, positive, presets,
                     published_speedups, scenario_options, scenario_params, sidebar_notes, words)


def speedup_rows(alphas: Sequence[float], gammas: Sequence[int] | None, *,
                 verify_costs: Sequence[float] | None = None, regime: str | None = None,
                 draft_cost: float = spec.SEED_DRAFT_COST, gamma_max: int = 16) -> list[dict[str, Any]]:
    """Rows of the ``speedup`` subcommand: one per (α, γ, verify_cost); ``gammas=None`` picks the best γ.

    ``regime="compute"`` sets verify_cost = γ + 1 and ``"memory"`` sets it to 1.
    """
    rows = []
    costs: Sequence[float | None] = [None] if regime else (verify_costs or [1.0])
    for alpha, given in itertools.product(alphas, costs):
        if regime:
            verify = (lambda g: g + 1.0) if regime == "compute" else 1.0
        else:
            verify = given
        if gammas is None:
            best, _ = spec.optimal_gamma(alpha, draft_cost, verify, gamma_max)
            candidates = [best]
        else:
            candidates = gammas
        for gamma in candidates:
            v = verify(gamma) if callable(verify) else verify
            rows.append({
                "alpha": alpha, "gamma": gamma, "verify_cost": v, "draft_cost": draft_cost,
                "expected_tokens": spec.expected_tokens(alpha, gamma),
                "acceptance_rate_vllm": spec.acceptance_rate_from_alpha(alpha, gamma),
                "speedup": spec.speedup(alpha, gamma, v, draft_cost),
            })
    return rows


ROOFLINE_KEYS = ("batch", "context", "tokens_per_verify", "regime", "ridge_flop_per_byte",
                 "baseline_step_ms", "verify_step_ms", "draft_step_ms", "verify_cost", "draft_cost",
                 "speedup", "baseline_tokens_per_s", "spec_tokens_per_s", "fits", "max_batch")


# Figures that are counts, written whole ("batch": 64, not 64.0; a CSV's max_batch 35051, not 35051.0).
WHOLE_KEYS = frozenset({"gamma", "batch", "context", "tokens_per_plain", "tokens_per_verify", "max_batch",
                        "max_batch_plain", "input_tokens", "output_tokens"})
# calc's every column, in order: a CSV or Markdown row has them all whatever the scenario (those it has
# no value for empty), so that rows of several scenarios line up; JSON has those the scenario has.
CALC_KEYS = ("gpu", "target", "draft", "engine", "precision", "weight_formats", "kv", "tp", "dp", "ep", "mode", "alpha",
             "gamma", "batch",
             "context", "tokens_per_plain", "tokens_per_verify", "regime", "baseline_regime", "ridge_flop_per_byte",
             "verify_intensity", "baseline_step_ms", "verify_step_ms", "draft_step_ms", "spec_step_ms", "verify_cost",
             "draft_cost", "expected_tokens", "speedup", "baseline_tokens_per_s", "spec_tokens_per_s", "notices",
             "vocab_mismatch", "routing_overlap", "mtp_reuse", "prefill", "input_tokens", "output_tokens", "low", "high",
             "ideal_speedup", "knobs_off_preset", "fits", "max_batch", "max_batch_plain", "memory_need_gb",
             "memory_usable_gb", "equal_memory", "published_here", "expert_tax")


def whole(row: dict[str, Any]) -> dict[str, Any]:
    """``row`` with the figures of :data:`WHOLE_KEYS` that are whole numbers as ints."""
    return {key: int(value) if key in WHOLE_KEYS and isinstance(value, float) and value.is_integer() else value
            for key, value in row.items()}


def roofline_rows(result: dict[str, np.ndarray]) -> list[dict[str, Any]]:
    """Flatten an :func:`specviz.model.roofline.evaluate` result into rows with :data:`ROOFLINE_KEYS`."""
    flat = {k: np.ravel(result[k]) for k in ROOFLINE_KEYS}
    return [whole({k: plain(flat[k][i]) for k in ROOFLINE_KEYS}) for i in range(flat["batch"].size)]


def _resolve_model(name: str, models: dict[str, architecture.Model]) -> architecture.Model:
    if name in models:
        return models[name]
    # A file that is there, whatever its name, or a name of a config.json (read, or said to be missing):
    # a config saved without its suffix, or a .json mistyped, had read as "unknown model" (a CLI pass).
    path = Path(name).expanduser()
    if path.exists() or path.suffix.lower() == ".json":
        return config_model(path)
    raise UsageError("cli.roofline.unknown_model", name=repr(name), models=", ".join(models))


def _resolve_gpu(args: argparse.Namespace, gpus: dict[str, roofline.GPU]) -> roofline.GPU:
    if args.gpu not in gpus:
        raise UsageError("cli.roofline.unknown_gpu", gpu=repr(args.gpu), gpus=", ".join(gpus))
    gpu = gpus[args.gpu]
    overrides = {k: v for k, v in (("tflops", args.tflops), ("bandwidth_tb_s", args.bandwidth))
                 if v is not None}
    return roofline.GPU(**{**asdict(gpu), **overrides})


def _gamma_arg(text: str) -> int | str:
    if text == "auto":
        return text
    try:
        return int(text)
    except ValueError:
        raise OptionValueError("cli.value.gamma", given=repr(text)) from None


def calc_row(link: str, presets: scenario.Presets, target_config: Path | None = None,
             draft_config: Path | None = None, lang: str = "en") -> dict[str, Any]:
    """The calculator's figures for the scenario a link describes (:func:`specviz.scenario.from_query_params`),
    as the page shows them; a config.json read for the target or the draft (a draft model, or an
    EAGLE-3 head of its own config) replaces the link's, as an uploaded one does on the page. The
    link is read for the config's target (a draft it takes, such as its own MTP layer; its default
    draft and split), on the fewest GPUs that hold the pair unless the link says how many; a link
    the page wrote for uploaded models (``target=custom``, ``draft=custom``) needs their configs. What the
    sidebar would say of the scenario (:func:`specviz.cli.common.sidebar_notes`) is ``notices``, in ``lang``."""
    params = link_params(link)
    for name, config in (("target", target_config), ("draft", draft_config)):
        if params.get(name) == scenario.CUSTOM and config is None:
            raise UsageError("cli.calc.custom", name=name, custom=scenario.CUSTOM)
    overrides = {}
    if target_config is not None:  # a preset of its own, for the link's draft and split to be read for it
        presets = replace(presets, models={**presets.models,
                                           scenario.CUSTOM: config_model(target_config, target=True)})
        overrides["target"] = scenario.CUSTOM
    if draft_config is not None:  # the link's draft (custom, in the page's link) stands for the config's, read below
        overrides["draft"] = "eagle3"
    chosen = linked_scenario(link, presets, overrides)
    if draft_config is not None:
        draft = scenario.custom_draft(config_model(draft_config))
        if (mismatch := scenario.head_mismatch(chosen.target, draft)) is not None:
            raise mismatch
        tp, dp, ep = scenario.default_parallel(chosen.gpu, chosen.target, draft, chosen.precision, chosen.engine.memory)
        if "tp" in params:
            tp, dp, ep = chosen.tp, chosen.dp, chosen.ep
        chosen = replace(chosen, draft=draft, tp=tp, dp=dp, ep=ep, draft_id=scenario.CUSTOM)
    head = calculator.headline(chosen)
    fit = head.pop("fit", None)
    band = {key: plain(head.pop(key)) for key in ("low", "high", "ideal_speedup") if key in head}
    row: dict[str, Any] = {"gpu": chosen.gpu.id, "target": chosen.target_id, "draft": chosen.draft_id,
                           "engine": chosen.engine.id, "precision": chosen.precision.name,
                           # Each component's format as served, a link's override included, as the
                           # sidebar says it (a CLI pass: weights_experts=nvfp4 had shown nowhere).
                           "weight_formats": {component: chosen.precision.weight_format(chosen.target, component).name
                                              for component in chosen.target.main_components},
                           "kv": chosen.precision.kv, "tp": chosen.tp,
                           # The GPUs are tp·dp: Kimi-K2 on H100s is 2 groups of 8 with expert parallelism,
                           # whose memory per GPU read as 8 GPUs' alone (tp 8) said that 8 hold it.
                           "dp": chosen.dp, "ep": chosen.ep, "mode": chosen.mode,
                           **{key: plain(value) for key, value in head.items()}}
    if notes := sidebar_notes(chosen):  # FP4 weights multiplied at the BF16 peak on an H100: an attack pass
        row["notices"] = [words(note, lang) for note in notes]
    if (mismatch := scenario.vocab_mismatch(chosen.target, chosen.draft)) is not None:  # as the sidebar warns
        row["vocab_mismatch"] = {"draft": mismatch.params["draft"], "target": mismatch.params["target"]}
    if chosen.target.num_experts:
        row["routing_overlap"] = chosen.routing_overlap
    if chosen.mtp_reused_from is not None:  # the target's MTP layers run past their training
        row["mtp_reuse"] = chosen.mtp_reuse
    if chosen.prefill and chosen.mode == "step":  # each step also takes the load's arriving prompts
        row |= {"prefill": True, "input_tokens": chosen.input_tokens, "output_tokens": chosen.output_tokens}
    if fit is not None:
        row |= band | {"knobs_off_preset": {name: value for name, (value, _) in scenario.knobs_off_preset(chosen).items()},
                "fits": fit["fits"], "max_batch": fit["max_batch"], "max_batch_plain": fit["max_batch_plain"],
                "memory_need_gb": plain(fit["need"]), "memory_usable_gb": plain(fit["usable"])}
        # Each server at the largest batch it holds, as the page's note on the memory gives it (a
        # consistency pass: the page's "1.23× at full load" had no figure here).
        if (full := calculator.equal_memory(chosen)) is not None:
            row["equal_memory"] = {key: plain(value) for key, value in full.items()}
        if fit["fits"]:  # as the page's notes set them beside its figure
            row["published_here"] = published_here(chosen)
    # The Why panel's expert tax, to be checked from here too (an engineer's pass: it could not be).
    tax = regime.expert_tax(chosen, chosen.alpha, chosen.gamma, chosen.batch, chosen.context,
                            settings.get("SPECVIZ_BATCH_MAX"))
    if tax is not None and (fit is None or fit["fits"]):
        row["expert_tax"] = {key: plain(tax[key]) for key in _TAX_KEYS}
    return whole(row)


# The expert tax as calc gives it: the experts a layer a plain and a verify pass read, the ratio of
# their expert weights, the speedup with and without the tax, and where each stops paying.
_TAX_KEYS = ("experts", "per_token", "plain_experts", "verify_experts", "ratio", "speedup",
             "speedup_untaxed", "stops_at", "stops_untaxed_at")


def published_here(chosen: scenario.Scenario) -> list[dict[str, Any]]:
    """The speedups published for this very setup at the scenario's batch and γ, each with the model's
    figure and range at its acceptance (:func:`specviz.advice.evidence.measured_here`), as the
    calculator's notes give them: ``outside_range`` where the measurement lies outside the range;
    ``beyond_model`` there, or where a row without an acceptance length lies above what α = 1 allows
    or below what α = 0 does (the calculator's warnings: :data:`specviz.advice.evidence.OFF_MODEL`)."""
    rows = evidence.measured_here(published_speedups(), chosen, chosen.batch, chosen.gamma)
    return [{"study": row["study"], "series": row["series"] if isinstance(row["series"], str) else None,
             "metric": row["metric"], "value": plain(row["value"]),
             "acceptance_length": plain(pd.to_numeric(row["acceptance_length"], errors="coerce")),
             "model_speedup": plain(row["model_speedup"]), "model_low": plain(row["model_low"]),
             "model_high": plain(row["model_high"]),
             "outside_range": row["outside_range"],
             "beyond_model": evidence.measured_notice(row).key in evidence.OFF_MODEL, "source": row["source"],
             "note": evidence.note_quoted(row["note"])}
            for _, row in rows.iterrows()]


def simulate_row(args: argparse.Namespace, presets: scenario.Presets) -> dict[str, Any]:
    """The Latency view's simulation from the command line, as the view runs it: a request of the
    link's (or --input-tokens and --output-tokens) tokens in and out, its decode steps timed by the
    step model at the scenario's batch and the request's mean context
    (:func:`specviz.workload.latency_step_times`), the tokens after the first simulated, acceptance
    from --alpha (with --gamma), --rates or the link's α; a batch the memory does not hold with the
    draft is refused, as the view gives it no latency. Without --alpha or --rates, the view's own
    measured rates in the link (``latency_rates``) are simulated, as the view simulates them (they
    had been left for the link's α: γ 4 and a 5.23 ms gap where the view gave γ 2 and 4.36 ms). The
    rates set the γ simulated, as the view's do, up to :data:`specviz.model.simulate.MAX_GAMMA`,
    beside the scenario's own γ (17 rates had been refused as "--gamma 17", an option not given)."""
    rates = args.rates
    if rates is None and args.alpha is None and (typed := link_params(args.link).get("latency_rates", "").strip()):
        if sum(name == "latency_rates" for name, _ in urllib.parse.parse_qsl(link_query(args.link))) > 1:
            # Given twice: the view takes one (and says so); joined, they would be rates it never had.
            raise UsageError("cli.simulate.repeated_rates", value=shortened(typed))
        rates = list(simulate.parse_rates(typed))
    if rates and args.gamma is not None and args.gamma != len(rates):
        raise UsageError("cli.simulate.rates", gamma=args.gamma, rates=len(rates))
    if args.context is not None:  # the view's steps read the request's mean context, not a slider's
        raise UsageError("cli.simulate.context", context=args.context)
    chosen = linked_scenario(args.link, presets, scenario_params(
        args, presets, batch=args.batch, gamma=None if rates else args.gamma,
        input_tokens=args.input_tokens, output_tokens=args.output_tokens))
    gamma = len(rates) if rates else chosen.gamma
    n_in, n_out = chosen.input_tokens, chosen.output_tokens
    if n_out < 2:  # the prefill gives the only token
        raise UsageError("cli.simulate.no_decode")
    drafting = replace(chosen, gamma=gamma)
    at_load = calculator.load_fit(drafting, n_in, n_out)  # a request the model holds, as the view asks
    fit = calculator.memory_fit(drafting)
    # As the view: a batch the memory does not hold, at the link's context (the headline's) or at the
    # requests' mean context (where the steps are timed), has no latency to simulate.
    if not fit["fits"]:
        raise UsageError("cli.simulate.no_fit", batch=chosen.batch, limit=fit["max_batch"])
    if not at_load["fits"]:
        raise UsageError("cli.simulate.no_fit_at_load", batch=chosen.batch, context=at_load["context"],
                         limit=at_load["max_batch"])
    # As the Latency view: measured rates' tokens a step as the scenario's draft makes them, and a
    # reused MTP layer's rates falling past its training.
    chosen, alpha, rates = workload.latency_acceptance(chosen, chosen.alpha if args.alpha is None else args.alpha,
                                                       gamma, rates)
    context, times = workload.latency_step_times(chosen, alpha, gamma, chosen.batch, n_in, n_out)
    acceptance = {"rates": rates} if rates else {"alpha": alpha, "gamma": gamma}
    requests = args.requests if args.requests is not None else workload.latency_runs(alpha, gamma, rates, n_out - 1)[2]
    summary = simulate.latency(**acceptance, times=times, output_tokens=n_out - 1, requests=requests,
                               steps=args.steps, seed=args.seed)
    table = summary.table(per_step=True)
    # The view's request figures, with the band its speedup carries (None where the prompts queue without end).
    whole = workload.end_to_end(chosen, alpha, gamma, chosen.batch, n_in, n_out)
    low, high = calculator.request_speedup_band(chosen, alpha, gamma, chosen.batch, n_in, n_out)
    timed = math.isfinite(whole["e2e_plain_s"]) and math.isfinite(whole["e2e_spec_s"])
    request = {"ttft_plain_ms": whole["ttft_plain_s"] * 1e3, "ttft_spec_ms": whole["ttft_spec_s"] * 1e3,
               "e2e_plain_s": whole["e2e_plain_s"], "e2e_spec_s": whole["e2e_spec_s"],
               "speedup": whole["e2e_speedup"] if timed else math.nan,
               "low": low, "high": high, "decode_speedup": whole["decode_speedup"], "prefill_share": whole["prefill_share"]}
    request = {name: plain(float(value)) for name, value in request.items()}
    return {"alpha": alpha, "gamma": gamma, "rates": rates,
            # the factor a reused MTP layer was drawn at: the link's, or the one --rates show
            **({"mtp_reuse": chosen.mtp_reuse} if chosen.mtp_reused_from is not None else {}),
            "gpu": chosen.gpu.id, "target": chosen.target_id,
            "draft": chosen.draft_id, "engine": chosen.engine.id, "batch": chosen.batch,
            "input_tokens": n_in, "output_tokens": n_out, "context": context,
            "plain_step_ms": times.plain_s * 1e3, "spec_step_ms": times.spec_s * 1e3, "steps": summary.steps,
            "seed": args.seed, "tokens_per_step_mean": summary.mean_tokens, "tokens_per_step_se": summary.mean_tokens_se,
            "expected_tokens": plain(summary.expected_tokens), "zero_accept_share": summary.zero_accept_share,
            "tokens_per_step_counts": [int(c) for c in summary.counts], "decoded_tokens": summary.output_tokens,
            "requests": summary.requests, "request": request,
            "latency_ms": {row: {"plain": r.plain_s * 1e3, "spec": r.spec_s * 1e3, "ratio": r.ratio}
                           for row, r in table.iterrows()}}


_SIMULATE_DOC = """\
The Latency view's simulation. A request of the link's tokens in and out (the coding assistant's
100 and 500 by default), its steps timed at the batch and at the request's mean context (input +
output / 2, as the view times them, not the link's context: --context is refused), the tokens after
the first simulated. JSON: mean tokens per step with its standard error beside the closed form, the
zero-accept share, the counts of each step size, and the inter-token gap, per-step time per token
and request latency at p50, p90, p99 and mean, without and with speculation, in ms (`tpot_*` is each
step's time per token over steps, not vLLM bench's per-request TPOT); and `request`, the view's whole
request by the closed form: time to first token, request time, its speedup with the band the view
gives it (`low`, `high`), decode's speedup and the prefill's share (null where the prompts queue
without end). By default it simulates the
view's steps and requests with the view's seed, so its figures are the page's. Without --alpha or
--rates, the measured rates a Latency view's link carries (latency_rates) are simulated, as there;
a batch that does not fit at the link's context or at the requests' mean context is refused.
"""

_MODEL_DOC = """\
The language model a config.json describes, counted as specviz counts it (specviz/model/hf_config.py).
`params_active` is every weight one token's pass uses: its k routed experts and every other weight
whole, the input embedding table and the output head included (DeepSeek-V3's 37.55B; DeepSeek and
OpenAI state 37B and 5.1B with the embedding left out, docs/model.md says each publisher's
convention). `kv_bytes_per_token` is what one more position adds while it is within every layer's
window; `kv_bytes_per_token_past_windows`, once it is past every sliding or chunked window (the same
for a model without windows); `state_bytes_per_sequence`, what a sequence keeps whatever its context:
a linear-attention layer's state (Qwen3-Next's 39.5 MB in BF16, more than its cache of 1,024
positions), once; a verify pass keeps one for each position it may roll back to (0 for a model
whose every layer caches positions).
"""

_CALC_DOC = """\
What the calculator shows for the scenario a link describes (the same parameters, read by
`scenario.from_query_params`): the setting, E, verify and draft cost, the speedup with its band,
the ideal roofline's speedup, the regime and the knobs that differ from the engine's preset; whether
the batch fits the GPUs' memory as the engine divides it (`fits`, the largest batch with the draft
and plain, the GB each GPU needs and the engine takes); a batch that does not fit gets no speedup
(null), as on the page. A draft of another vocabulary size than the target's is said as the sidebar
says it (`vocab_mismatch`, both sizes). The speedups published for this very setup at the batch and
γ, each with the model's figure and range at its acceptance length and whether it lies outside
that range (`published_here`), as the page's notes give them. For a mixture of experts, the Why
panel's expert tax (`expert_tax`: the routed experts a layer a plain and a verify pass read, the
ratio of their expert weights, the speedup with and without the tax and the batch where each stops
paying, null where none). A value the page would replace by its
default is an error here (exit 2, naming each), and so is a parameter that is no scenario's but reads
nearly as one (`gama`, `Batch`: a typo the page would drop); a page's own parameters are ignored. As
CSV or Markdown the row has every column whatever the scenario (those it has no value for empty).
"""

_ROOFLINE_DOC = """\
The first model (`roofline.evaluate`: one device, a fixed overhead per pass). --target and --draft
take a preset id or a config.json path; without --draft a draft pass costs --draft-cost (default
0.05, seed 000's) of a target pass; --realistic starts from mfu 0.6, mbu 0.8, overlap 0 and 0.3 ms
per pass (`roofline.REALISTIC`). Whether the batch fits the one device's memory as vLLM divides it
(`fits`, and `max_batch`: with the draft, or plain without --draft; null for a device without a
memory figure); a batch that does not fit gets no speedup and no speculative tokens/s (null), as
calc and the pages give none.
"""

def add_parsers(sub: argparse._SubParsersAction) -> None:
    """The model's subcommands."""
    p = sub.add_parser("speedup", help="speedup from α, γ and cost ratios")
    p.add_argument("--alpha", type=number, nargs="+", required=True, help="per-position acceptance α, one or more")
    p.add_argument("--gamma", type=_gamma_arg, nargs="+", required=True,
                   help="draft lengths γ, or auto for the best γ of each α")
    group = p.add_mutually_exclusive_group()
    group.add_argument("--verify-cost", type=in_range("verify_cost"), nargs="+",
                       help="the verify pass's cost as a multiple of a plain step, one or more (default 1)")
    group.add_argument("--regime", choices=("memory", "compute"),
                       help="the verify cost of a regime: memory-bound 1, compute-bound γ + 1")
    p.add_argument("--draft-cost", type=in_range("draft_cost"), default=spec.SEED_DRAFT_COST,
                   help=f"a draft pass's cost as a multiple of a plain step (default {spec.SEED_DRAFT_COST})")
    p.add_argument("--gamma-max", type=count, default=settings.get("SPECVIZ_GAMMA_MAX"),
                   help="the largest γ that auto searches (default: SPECVIZ_GAMMA_MAX)")
    p.add_argument("--format", **FORMAT)
    p.set_defaults(run=_speedup)

    p = sub.add_parser("roofline", description=_ROOFLINE_DOC, help="step times and speedup on a GPU preset")
    p.add_argument("--gpu", required=True, help="GPU preset id")
    p.add_argument("--target", required=True, help="preset id or config.json path")
    p.add_argument("--draft", help="preset id (a draft head's too) or config.json path; without it --draft-cost applies")
    p.add_argument("--batch", type=integer, nargs="+", required=True, help="batch sizes, one or more")
    p.add_argument("--alpha", type=number, required=True, help="per-position acceptance α")
    p.add_argument("--gamma", type=integer, required=True, help="draft length γ")
    p.add_argument("--context", type=integer, nargs="+", default=[0], help="context lengths in tokens (default 0)")
    p.add_argument("--realistic", action="store_true", help="start from the realistic knob preset")
    p.add_argument("--mfu", type=number, help="share of peak FLOPs a pass reaches (default 1)")
    p.add_argument("--mbu", type=number, help="share of peak bandwidth a pass reaches (default 1)")
    p.add_argument("--overlap", type=number, help="share of the shorter of compute and memory time hidden "
                                                 "under the longer (default 1)")
    p.add_argument("--overhead-ms", type=number, help="fixed time per pass, in ms (default 0)")
    p.add_argument("--draft-cost", type=in_range("draft_cost"), default=spec.SEED_DRAFT_COST,
                   help=f"a draft pass's cost as a multiple of a target pass, without --draft "
                        f"(default {spec.SEED_DRAFT_COST})")
    p.add_argument("--precision", choices=dtypes.PRECISIONS, default=scenario.DEFAULT_PRECISION,
                   help="the weights' and KV cache's formats (default checkpoint: each component's as its "
                        "config.json ships it, as calc takes it)")
    p.add_argument("--tflops", type=in_range("tflops"), help="override the preset's dense BF16 TFLOPS")
    p.add_argument("--bandwidth", type=in_range("bandwidth"), help="override the preset's bandwidth, TB/s")
    p.add_argument("--format", **FORMAT)
    p.set_defaults(run=_roofline)

    p = sub.add_parser("calc", description=_CALC_DOC, help="what the calculator shows for a scenario given as its link (or the "
                                    "link's query), the band included")
    p.add_argument("link", nargs="?", default="", help="e.g. 'alpha=0.7&batch=16&engine=sglang' or a whole "
                                                       "calculator URL; empty: the default scenario")
    p.add_argument("--target-config", type=Path, help="a config.json for the target, over the link's")
    p.add_argument("--draft-config", type=Path, help="a config.json for the draft (a model, or an EAGLE-3 head's "
                                                     "own config), over the link's")
    p.add_argument("--format", **FORMAT)
    p.set_defaults(run=_calc)

    p = sub.add_parser("simulate", description=_SIMULATE_DOC, help="tokens per step, inter-token and request latency with and without "
                                        "speculation, simulated from α or per-position rates")
    p.add_argument("link", nargs="?", default="", help="the scenario whose step times are used, as for calc")
    acceptance = p.add_mutually_exclusive_group()
    acceptance.add_argument("--alpha", type=number, help="per-position acceptance α (i.i.d.; default: the link's)")
    acceptance.add_argument("--rates", type=number, nargs="+", help="measured acceptance at each draft position, "
                                                                  "given the positions before (γ = their count)")
    p.add_argument("--gamma", type=count, help="draft length (with --alpha; default: the link's)")
    p.add_argument("--batch", type=count, help="the batch whose step times are used (default: the link's)")
    p.add_argument("--steps", type=count, default=workload.LATENCY_STEPS,
                   help=f"steps simulated (default {workload.LATENCY_STEPS:,}, the Latency view's)")
    p.add_argument("--requests", type=count, help="requests simulated (default: the Latency view's, 2,000 for the "
                                                  "usual request, fewer for long outputs)")
    p.add_argument("--input-tokens", type=count, help="a request's prompt tokens (default: the link's, 100)")
    p.add_argument("--output-tokens", type=count, help="a request's output tokens, the first from its prefill and the "
                                                       "rest decoded (default: the link's, 500)")
    p.add_argument("--seed", type=integer, default=0, help="the simulation's seed (default 0)")
    scenario_options(p)
    p.add_argument("--format", choices=("json",), default="json", help="output format")
    p.set_defaults(run=lambda args: (json_text(simulate_row(args, presets())), 0))

    p = sub.add_parser("model-from-config", description=_MODEL_DOC, help="exact parameter counts from a config.json")
    p.add_argument("file", type=Path, help="a model's config.json, as Hugging Face publishes it")
    p.add_argument("--kv-bytes", type=positive(Notice("cli.unit.bytes"), 8), default=2.0,
                   help="bytes per KV element (2 for BF16, 1 for FP8; at most 8)")
    p.add_argument("--format", **FORMAT)
    p.set_defaults(run=_model_from_config)

    p = sub.add_parser("presets", help="the shipped GPU and model presets with their sources",
                       description="The shipped GPU and model presets with their sources. JSON: {\"gpus\": [...], "
                                   "\"models\": [...]}; CSV and Markdown: the GPUs' table, a blank line, then the "
                                   "models' table (two tables of their own columns).")
    p.add_argument("--format", **FORMAT)
    p.set_defaults(run=_presets_table)


def _check_grid(key: str, **lengths: int) -> None:
    """Refuse a grid of more rows than ``SPECVIZ_CLI_MAX_ROWS`` before it is computed, with its size:
    ``key`` names the lengths of its lists (20,000 batches × 100 contexts once ran 77 s into a
    MemoryError)."""
    rows, limit = math.prod(lengths.values()), settings.get("SPECVIZ_CLI_MAX_ROWS")
    if rows > limit:
        raise UsageError(key, rows=rows, limit=limit, **lengths)


def _speedup(args: argparse.Namespace) -> tuple[str, int]:
    _check_grid("cli.grid.speedup", alphas=len(args.alpha), gammas=len(args.gamma), costs=len(args.verify_cost or [1]))
    autos = [g for g in args.gamma if g == "auto"]
    if autos and len(args.gamma) > 1:
        raise UsageError("cli.speedup.auto_mixed")
    gammas = None if autos else args.gamma
    rows = speedup_rows(args.alpha, gammas, verify_costs=args.verify_cost, regime=args.regime,
                        draft_cost=args.draft_cost, gamma_max=args.gamma_max)
    return format_rows(rows, args.format), 0


def _roofline(args: argparse.Namespace) -> tuple[str, int]:
    _check_grid("cli.grid.roofline", batches=len(args.batch), contexts=len(args.context))
    data_dir = settings.get("SPECVIZ_DATA_DIR")
    models = hf_config.load_models(data_dir)
    gpu = _resolve_gpu(args, roofline.load_gpus(data_dir))
    # A draft head preset (EAGLE3-SpecForge-gpt-oss-120b) is a model of its own shape, as calc takes it.
    drafts = models | {head_id: head for head_id, (_, head) in hf_config.load_draft_heads(data_dir).items()}
    knobs = dict(roofline.REALISTIC) if args.realistic else {}
    knobs |= {k: v for k, v in (("mfu", args.mfu), ("mbu", args.mbu), ("overlap", args.overlap),
                                 ("overhead_ms", args.overhead_ms)) if v is not None}
    target = _resolve_model(args.target, models)
    draft = _resolve_model(args.draft, drafts) if args.draft else None
    precision = dtypes.PRECISIONS[args.precision]
    batch, context = np.array(args.batch)[:, None], np.array(args.context)[None, :]
    result = roofline.evaluate(gpu, target, draft, alpha=args.alpha, gamma=args.gamma, batch=batch, context=context,
                               draft_cost=args.draft_cost, precision=precision, **knobs)
    # One device's memory as vLLM divides it, the draft held as calc and the pages hold it (a head
    # without the target's input embedding): a batch it does not hold is given no speedup.
    held_draft = None if draft is None else step.Draft("model", draft)
    held = np.broadcast_to(scenario.largest_batch(gpu, target, held_draft, precision, tp=1, context=context,
                                                  gamma=args.gamma), result["speedup"].shape)
    fits = batch <= held
    # A device without a memory figure (a CPU preset) holds any batch: no limit to state, nor a fit.
    unlimited = held == np.iinfo(np.int64).max
    result |= {"fits": np.where(unlimited, None, fits), "max_batch": np.where(unlimited, np.nan, held),
               **{name: np.where(fits, result[name], np.nan) for name in ("speedup", "spec_tokens_per_s")}}
    return format_rows(roofline_rows(result), args.format), 0


def _calc(args: argparse.Namespace) -> tuple[str, int]:
    row = calc_row(args.link, presets(), args.target_config, args.draft_config, args.lang)
    if args.format == "json":
        return json_text(row), 0
    cells = {key: json.dumps(row[key]) if isinstance(row.get(key), (dict, list)) else row.get(key) for key in CALC_KEYS}
    return format_rows([cells], args.format, list(CALC_KEYS)), 0


def _model_from_config(args: argparse.Namespace) -> tuple[str, int]:
    model = config_model(args.file)
    row = {"params_total": model.params_total, "params_active": model.params_active,
           "kv_bytes_per_token": model.kv_bytes_per_token(args.kv_bytes),
           "kv_bytes_per_token_past_windows": model.kv_bytes_per_token(args.kv_bytes, past_windows=True),
           "state_bytes_per_sequence": float(model.cache_bytes(0, args.kv_bytes))}
    notes = " ".join(words(note, args.lang) for note in model.notes)  # each a sentence
    row |= {k: v for k, v in model.row().items() if k not in row} | {"notes": notes}
    return (json_text(row) if args.format == "json" else format_rows([row], args.format)), 0


def _presets_table(args: argparse.Namespace) -> tuple[str, int]:
    data_dir = settings.get("SPECVIZ_DATA_DIR")
    gpus = [asdict(g) | {"ridge_flop_per_byte": g.ridge} for g in roofline.load_gpus(data_dir).values()]
    models = [{"id": k, **m.row(), "source": m.source} for k, m in hf_config.load_models(data_dir).items()]
    if args.format == "json":
        return json_text({"gpus": [{k: plain(v) for k, v in g.items()} for g in gpus], "models": models}), 0
    return format_rows(gpus, args.format) + "\n\n" + format_rows(models, args.format), 0
