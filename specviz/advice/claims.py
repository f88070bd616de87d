"""Checking a speedup claim: what would have to be true for "up to 3x", and can it be?

A vendor's figure is one speedup S*. In the step model (:func:`specviz.model.step.step`) the times of a plain
and of a speculative step do not depend on acceptance, so at a fixed setting (hardware, models,
engine, batch, context, γ) the speedup is proportional to the expected tokens per step:

.. math:: S(α) = E(α, γ)\\,\\frac{t_{plain}}{t_{spec}} = \\frac{E(α, γ)}{γ + 1}\\, S(1)

with S(1) the speedup when every draft token is accepted (E = γ + 1). The claim therefore needs
E ≥ S*·(γ + 1) / S(1), an α through the inverse of E (:func:`specviz.model.spec.alpha_from_acceptance_length`),
and is out of reach where S(1) < S*. The same holds for the edges of the prediction band
(:func:`specviz.calculator.speedup_band`): its quantiles over the cost priors and its widening by the
model's error are both proportional to E, so the α at which the band's low edge reaches S* (the claim
holds even if the costs are unkind) and the α at which its high edge does (it can hold only if they
are kind) come from the band at α = 1 in the same way.

:func:`check_claim` returns the verdict:

* ``impossible``: even with every draft token accepted, the band's high edge stays below S* at every
  batch and γ the claim allows;
* ``plausible``: at the acceptance the user measured on their own traffic, the band's low edge
  reaches S* at the γ the model finds best (at the claim's batch, or at some batch when it names
  none);
* ``conditional``: otherwise; true only under the conditions listed: costs not at the unkind end of
  their range (the model's figure reaches S* at the measured α), costs at the kind end (only the
  band's high edge does), or more acceptance than measured; and a batch range.
  Without a measured acceptance a claim is at best conditional: acceptance belongs to one model pair,
  one temperature and one domain (seed 000), and only the user's traffic says what it is.

References
----------
Leviathan, Kalman, Matias 2023, "Fast Inference from Transformers via Speculative Decoding"
(arXiv 2211.17192): E(α, γ) and the speedup E / (γc + 1).
Seed 000 ("Speculative decoding makes vLLM slower: the acceptance-rate math"): a speedup figure belongs
to one model pair, temperature, domain and batch size.
Seed 003 ("GPU at 30% utilisation, you still pay 100%"): "up to 3x" on AWS Trainium with Qwen3, the
worked example.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from specviz import calculator, settings, workload
from specviz.errors import Notice, SpecvizError
from specviz.model import architecture, roofline, spec
from specviz.scenario import Presets, Scenario, draft_choices, gpu_preset, model_preset

__all__ = ["VERDICTS", "MEASURES", "Claim", "ClaimCheck", "parse_claim", "claimed_batch", "alpha_from_measurement", "check_claim",
           "required_at_costs", "check_at_costs", "published_reaching", "setting_class", "comparable_published", "SentenceReading", "UNSTATED", "read_sentence", "percent_of", "sentence_choices", "at_least"]

VERDICTS = ("plausible", "conditional", "impossible")
# How acceptance on the user's traffic may be given: α itself, vLLM's accepted/drafted, or the mean
# tokens per step (the acceptance length).
MEASURES = ("alpha", "acceptance_rate", "acceptance_length")
_BAD_MEASUREMENT = {"alpha": "claims.bad_alpha", "acceptance_rate": "claims.bad_acceptance_rate",
                    "acceptance_length": "claims.bad_acceptance_length"}
# A figure as written: its minus sign and its exponent are part of it, so that "-3x" is not read as 3x
# nor "1e9x" as 9x.
_SIGN, _MAGNITUDE = r"[-−]", r"\d{1,6}(?:(?:,\d{3})+|[.,]\d{1,6})?(?:e[-+]?\d{1,2})?"
# A claimed speedup is a number followed by x, ×, "times" or "lần", or a percentage faster, in English
# or Vietnamese (the app's two languages): "up to 3x", "2.5× faster", "180% faster", "lên đến 3 lần",
# "nhanh hơn 2,5x", "tăng tốc 3x". "Up to" ("lên đến", "lên tới", "tới") says the figure is a best case.
_CLAIM = re.compile(r"^\s*(?:up\s+to|lên\s+đến|lên\s+tới|tới|đến)?\s*(?:nhanh\s+hơn|tăng\s+tốc)?\s*"
                    # A range ("1.5x–2x", "1.5 to 2x") claims its upper end.
                    r"(?:\d{1,6}(?:[.,]\d{1,6})?\s*[x×]?\s*(?:-|–|—|to|đến)\s*)?"
                    rf"(?P<number>{_SIGN}?{_MAGNITUDE})\s*(?P<unit>[x×]|times|lần|%)?\s*"
                    r"(?:faster|speed-?up|nhanh\s+hơn)?\s*$", re.IGNORECASE)
# The batch a claim names, wherever in its words: "at batch 64", "batch size 64", "bs=64",
# "concurrency 64 users", "at 256 concurrency", "64 concurrent requests", "ở batch 64", "độ đồng thời 128";
# and batch 1 said in words: "a single request", "a single user", "một request".
_BATCH = re.compile(r"[,;]?\s*(?:(?:at|with|ở|tại|với|for|on|cho)\s+)?"
                    r"(?:\b(?:batch(?:\s+size)?|bs|concurrency(?:\s+of)?|độ\s+đồng\s+thời)\s*[=:]?\s*(?P<batch>\d{1,7})"
                    r"(?:\s+(?:users|requests|clients|người\s+dùng))?"
                    r"|\b(?P<concurrent>\d{1,7})\s+(?:concurrent(?:\s+(?:requests|users))?|concurrency)"
                    r"|(?:\ba\s+)?\b(?P<single>single|một)\s+(?:request|user|stream|người\s+dùng))\b",
                    re.IGNORECASE)
# Past this a figure is not a speedup of decoding: nothing accepts more than 64 tokens a step.
_LARGEST_CLAIM = 64.0


@dataclass(frozen=True)
class Claim:
    """A claimed speedup and the conditions it was stated for.

    Attributes
    ----------
    speedup : float
        The claimed speedup S* (3.0 for "up to 3x"), above 1.
    batch : int or None
        The batch size (concurrent requests) it was claimed at; None: any.
    gamma : int or None
        The draft length it was claimed at; None: the best one.
    alpha : float or None
        The per-position acceptance α measured on the user's traffic; None: not measured.
    workload : tuple of int or None
        The user's tokens in and out per request: a speedup is claimed for decode, and a request
        gains less where its prefill takes time (:func:`specviz.workload.end_to_end`).
    """

    speedup: float
    batch: int | None = None
    gamma: int | None = None
    alpha: float | None = None
    workload: tuple[int, int] | None = None


@dataclass(frozen=True)
class ClaimCheck:
    """The answer to a claim (:func:`check_claim`).

    Attributes
    ----------
    claim : Claim
    verdict : str
        One of :data:`VERDICTS`.
    headline : Notice
        The verdict in one sentence: ``claims.verdict.<verdict>``, or for a conditional claim at a
        measured acceptance ``claims.verdict.band`` (the model's figure reaches the claim, its band's
        low edge does not), ``.kind`` (only the band's high edge does) or ``.short`` (not even that:
        it needs more acceptance than measured).
    reasons : list of Notice
        Why, in order, in words a manager can forward.
    conditions : list of Notice
        What must hold for the claim (for ``conditional``; the same facts for the others).
    best : dict
        The largest speedup the setting allows with every draft token accepted: ``speedup``, ``low``,
        ``high``, and the ``gamma`` and ``batch`` it is reached at (the claim's batch if it names one).
    required : DataFrame
        One row per γ at ``best["batch"]``: ``gamma``; ``ceiling`` (S at α = 1), ``ceiling_low``,
        ``ceiling_high``; the α needed for the claim by the model (``alpha_needed``), by the band's low edge
        (``alpha_safe``) and by its high edge (``alpha_optimistic``), NaN where out of reach; the
        vLLM-style ``acceptance_rate`` and the ``acceptance_length`` of ``alpha_needed``; and, with a
        measured α, ``at_alpha``, ``at_alpha_low``, ``at_alpha_high``.
    batches : DataFrame
        One row per batch of the grid (with the claim's batch): ``batch``, ``counted`` (the claim's
        batch, or every batch when it names none), the best γ's ``ceiling`` and ``ceiling_high`` at
        α = 1, and with a measured α ``at_alpha``, ``at_alpha_low`` and ``at_alpha_high`` at the γ
        the model finds best there (``at_alpha_gamma``).
    holds_from, holds_up_to : float
        The smallest and largest counted batch at which the band's high edge at α = 1 reaches the
        claim (NaN: none): outside them the claim is impossible whatever the acceptance.
    yours_from, yours_up_to : float
        The same where the band's low edge at the measured α reaches it (NaN: none, or no α).
    """

    claim: Claim
    verdict: str
    headline: Notice
    reasons: list[Notice]
    conditions: list[Notice]
    best: dict[str, float]
    required: pd.DataFrame
    batches: pd.DataFrame
    holds_from: float
    holds_up_to: float
    yours_from: float
    yours_up_to: float


def _words(text: str | None) -> str:
    """A claim's words one space apart, refused past ``SPECVIZ_CLAIM_MAX_CHARS``.

    The patterns above chain optional parts, each with ``\\s*`` around it; over a run of n blanks
    they would try the ways to share it out, about n³ of them (2,000 spaces took 86 s). With each
    blank run one space, and the text bounded, every match takes time linear in the text.

    Raises
    ------
    SpecvizError
        ``claims.too_long`` for a text longer than the setting (a claim is a sentence).
    """
    words = " ".join((text or "").split())
    limit = settings.get("SPECVIZ_CLAIM_MAX_CHARS")
    if len(words) > limit:
        raise SpecvizError("claims.too_long", length=len(words), limit=limit)
    return words


def parse_claim(text: str) -> float:
    """The speedup in a claim's words: "up to 3x", "2.5×", "3X faster", "180% faster" (2.8x), and in
    Vietnamese "lên đến 3 lần", "nhanh hơn 2,5x".

    A percentage is read as "faster than": 180 % faster is 2.8×. A comma may be the decimal mark, and
    a figure may have an exponent ("1e9x" is 10⁹×). A range ("1.5x–2x") claims its upper end. A
    batch named in the words ("2.5x at batch 64") is :func:`claimed_batch`'s and left out here.

    Raises
    ------
    SpecvizError
        ``claims.too_long`` past ``SPECVIZ_CLAIM_MAX_CHARS`` (a run of blanks counted as one);
        ``claims.unreadable`` if the text is not a speedup; ``claims.negative_speedup`` if its figure
        is negative (a speedup is a positive ratio); ``claims.not_a_speedup`` if it is 1× or less (no
        gain to check); ``claims.too_large`` above 64× (more tokens a step than any draft gives).
    """
    words = _words(text)
    found = _CLAIM.match(_BATCH.sub(" ", words))
    if not found:
        raise SpecvizError("claims.unreadable", text=words[:60])
    number = _figure(found["number"])
    if number < 0:
        raise SpecvizError("claims.negative_speedup", figure=found["number"])
    speedup = 1.0 + number / 100.0 if (found["unit"] or "").startswith("%") else number
    if speedup <= 1.0:
        raise SpecvizError("claims.not_a_speedup", speedup=speedup)
    if speedup > _LARGEST_CLAIM:
        raise SpecvizError("claims.too_large", speedup=speedup, largest=_LARGEST_CLAIM)
    return speedup


def percent_of(text: str) -> float | None:
    """The percentage a claim's words give where it is 100 % or more ("400% faster": 400), the figures
    two readings part on: :func:`parse_claim` reads it as the old speed plus that share (5×), some
    authors mean the new speed as that share of the old (4×). None for any other claim."""
    found = _CLAIM.match(_BATCH.sub(" ", _words(text)))
    if not found or not (found["unit"] or "").startswith("%"):
        return None
    number = _figure(found["number"])
    return number if number >= 100 else None


def _figure(text: str) -> float:
    """A claim's number as written: "1,000" groups thousands, "2,5" (Vietnamese) has a decimal comma."""
    figure = text.replace("−", "-")
    return float(figure.replace(",", "") if re.fullmatch(r"-?\d{1,3}(?:,\d{3})+", figure) else figure.replace(",", "."))


def claimed_batch(text: str) -> int | None:
    """The batch size a claim's words name ("2.5x at batch 64", "3x, bs=256", "2x with 64 concurrent
    requests", 1 for "a single request"), or None where they name none (or name 0).

    Raises
    ------
    SpecvizError
        ``claims.too_long`` past ``SPECVIZ_CLAIM_MAX_CHARS``, as :func:`parse_claim`.
    """
    found = _BATCH.search(_words(text))
    batch = (1 if found["single"] else int(found["batch"] or found["concurrent"])) if found else 0
    return batch or None


# A speedup inside a sentence: a number and its unit, not the "8x" of "Mixtral-8x7B"; a whole number
# (not the "9x" of "1e9x" or of "1e999x", nor the "320x" of "1e-320x"), with its minus sign but not a
# name's hyphen ("EAGLE-3x").
_SPEEDUP_IN_SENTENCE = re.compile(rf"(?:up\s+to\s+|lên\s+đến\s+)?(?<![\w.+\-−])"
                                  # A range ("1.5x–2x faster") is read whole: it claims its upper end.
                                  rf"(?:{_MAGNITUDE}\s*[x×]?\s*(?:-|–|—|to|đến)\s*)?{_SIGN}?{_MAGNITUDE}"
                                  r"\s*(?:[x×](?![\w.])|times\b|lần\b|%)", re.IGNORECASE)
# Words after a figure that make it something else than a speedup: a count of devices ("8x H100s",
# "8x GPUs") or another ratio ("5x cheaper", "3x less memory"); and words that make it one.
# A speed of training ("9.9x faster EAGLE-3 training", "3x faster to train") is not one of decoding.
_NOT_SPEED = re.compile(r"\s*(?:gpus?\b|nodes?\b|cards?\b|cheaper|less\b|fewer|smaller|more\s+(?:memory|users|cost)"
                        r"|(?:faster|speed-?up\s+(?:in|of|for))\s+(?:[\w.\-]+\s+)?(?:training|train)\b)", re.IGNORECASE)
# A percentage of a reduction ("19.4% reduction in cost", "50% lower latency") is not a percentage faster:
# read as one it would be a speedup of 1.194× or 1.5× (half the latency is 2×). Left unread.
_REDUCTION = re.compile(r"\s*(?:reduction|decrease|drop|cut|savings?|lower|giảm)\b", re.IGNORECASE)
# The same said before the figure: "reduces cost by 19.4%", "cuts latency by 50%", and Vietnamese, whose
# verb comes first, "giảm 19,4% chi phí" or "giảm chi phí 19,4%".
_REDUCED_BY = re.compile(r"(?:\breduc\w*|\bcut\w*|\blower\w*|\bdecreas\w*|giảm)(?:\s+[^\s,;:.]+){0,2}?(?:\s+by)?\s*$",
                         re.IGNORECASE)
_SPEED_WORDS = re.compile(r"faster|speed-?up|accelerat|throughput|tps\b|tokens?/s|lower\s+(?:latency|tpot|itl)|nhanh"
                          r"|tăng\s+tốc", re.IGNORECASE)
# Drafts as a sentence names them → the scenario's draft kind, the most specific first.
# "EAGLE 3" (and "Eagle 3.1") as often as "EAGLE-3", but not the figure of "EAGLE 3x faster".
_METHOD_WORDS = (("peagle", r"\bp-?eagle"), ("eagle3", r"\beagle(?:-?3|\s3(?![\d,]*(?:\.\d+)?\s*(?:[x×%]|times\b|lần\b)))"), ("mtp", r"\bmtp\b|multi-token prediction"),
                 ("block", r"\bdflash\b|\bdspark\b|block diffusion"), ("medusa", r"\bmedusa\b"),
                 ("suffix", r"suffix decoding"), ("ngram", r"\bn-?gram\b|prompt lookup"), ("eagle", r"\beagle\b"))
# Words that make the method after them the figure's baseline, not its method: "1.69x over EAGLE-3",
# "outperforms EAGLE-3 by 1.69x", "nhanh hơn EAGLE-3" (Vietnamese "hơn", than).
_COMPARED_WITH = re.compile(r"(?:\bover|\bthan|\bvs\.?|\bversus|\bcompared\s+(?:to|with)|\brelative\s+to|\bagainst"
                            r"|\boutperform(?:s|ed)?|\bbeats?|so\s+với|\bhơn)"
                            r"\s+(?:(?:the|a|an|standard|vanilla|plain)\s+)*$", re.IGNORECASE)
# A comparison's words after it ("relative to the best prior Blackwell baseline", "than vLLM", "vs H100"):
# what a figure is over, where the sentence says. Not a number ("over 1,000 tokens/s", "more than 2x").
_OVER_WHAT = re.compile(r"(?:\bover|\bthan|\bvs\.?|\bversus|\bcompared\s+(?:to|with)|\brelative\s+to|\bagainst|so\s+với)"
                        r"\s+(?P<what>(?![\d.,]+)[^,;:.()\n]{1,80})", re.IGNORECASE)
# Where what a figure is over ends: "than H100 with speculative decoding on 8 GPUs" is over "H100".
_WHAT_ENDS = re.compile(r"\s(?:with|on|using|for|at|in|across|when|while|by|trên|với|khi)\s", re.IGNORECASE)
# What says plain decoding: the figure over it is the speedup the check is about.
_PLAIN_DECODING = re.compile(r"auto-?regressive|(?:vanilla|standard|plain|regular|normal|naive|greedy|baseline|ordinary)"
                             r"\s+(?:decoding|generation|inference|sampling)|without\s+(?:speculat|draft)|no\s+speculat"
                             r"|non-?speculative|decode\s+thường|tự\s+hồi\s+quy|không\s+(?:dùng\s+)?speculative",
                             re.IGNORECASE)
_DATASETS = ("MT-Bench", "HumanEval", "GSM8K", "ShareGPT", "Alpaca", "CNN/DailyMail", "SWE-bench", "MBPP",
             "LiveCodeBench", "AIME", "Spec-Bench", "Arena-Hard", "MATH-500")
# What a claim should state and often does not, each with the words that state it.
UNSTATED = {"model": None, "hardware": None, "batch": None, "dataset": None, "temperature": r"temperature|greedy|sampling|\btemp\b",
            "output_length": r"output (?:length|tokens)|\bosl\b|tokens out|\d+\s*(?:output|generated) tokens",
            "acceptance": r"synthetic|simulated|measured acceptance|acceptance (?:rate|length)",
            "equal_footing": None}
# A figure of throughput ("179% more tok/s/GPU") compares two servers at some point of their
# throughput-latency curves: at equal batch, or at equal speed per user, where speculation's server
# runs a larger batch. Asked where the sentence does not say which.
_THROUGHPUT_FIGURE = re.compile(r"throughput|tok(?:en)?s?/s|\btps\b|per\s+gpu|/gpu", re.IGNORECASE)
_EQUAL_FOOTING = re.compile(r"same\s+(?:batch|concurrency|interactivity|latency|tpot|speed)|equal|\biso-?|at\s+batch"
                            r"|at\s+(?:a\s+)?concurrency|per[\s-]user", re.IGNORECASE)


@dataclass(frozen=True)
class SentenceReading:
    """What a claim's sentence states: the ``speedup`` (the first figure with its unit), the ``batch``
    or concurrency, the ``gpu`` and ``target`` presets it names, the ``draft`` kind
    (:data:`specviz.scenario.DRAFT_KINDS`) and the ``dataset``, each None where it names none;
    ``unstated``, the keys of :data:`UNSTATED` it leaves out: the questions to ask its author; and
    ``baseline``, the draft kind the figure is measured over ("1.69x over EAGLE-3"), None where it is
    over plain decoding, as a speedup is unless the sentence says otherwise; and ``over_words``, the
    words of any other thing it is said to be over ("the best prior Blackwell baseline", "vLLM",
    "H100"), None where the sentence compares with plain decoding, a method or nothing; ``percent``,
    a figure of 100 % or more as written (:func:`percent_of`)."""

    speedup: float
    batch: int | None
    gpu: str | None
    target: str | None
    draft: str | None
    dataset: str | None
    unstated: tuple[str, ...]
    baseline: str | None = None
    over_words: str | None = None
    percent: float | None = None


def named_methods(words: str) -> list[tuple[str, bool]]:
    """The drafting methods a sentence names, in its order, each as ``(kind, baseline)``: ``baseline``
    where the words before it compare with it ("over", "than", "vs", "compared to", "outperforms",
    "so với", "hơn": "1.69x over EAGLE-3"). A name inside a longer one is the longer one's ("EAGLE" in "P-EAGLE" and in
    "EAGLE-3"): the kinds are tried most specific first (:data:`_METHOD_WORDS`)."""
    lower, taken, found = words.lower(), [], []
    for kind, pattern in _METHOD_WORDS:
        for match in re.finditer(pattern, lower):
            if any(start < match.end() and match.start() < end for start, end in taken):
                continue
            taken.append(match.span())
            before = lower[max(0, match.start() - 40):match.start()]
            found.append((match.start(), kind, _COMPARED_WITH.search(before) is not None))
    return [(kind, baseline) for _, kind, baseline in sorted(found)]


def _named_gpu(tokens: list[str], presets: Presets) -> str | None:
    """The first GPU preset a sentence's words name: a run of two or three words that spells a
    preset's own id ("A100 80GB", "RTX PRO 6000", "TPU v6e", "Gaudi 3"), else one word that names one
    (:func:`specviz.scenario.gpu_preset`: "H100", "8xB200"); None where none does."""
    own = {re.sub(r"[^a-z0-9]", "", gpu_id.lower()) for gpu_id in presets.gpus}
    for start, token in enumerate(tokens):
        for length in (3, 2):
            span = " ".join(tokens[start:start + length])
            if len(tokens) - start >= length and re.sub(r"[^a-z0-9]", "", span.lower()) in own:
                return gpu_preset(span, presets.gpus)
        if found := gpu_preset(token, presets.gpus):
            return found
    return None


def read_sentence(text: str, presets: Presets) -> SentenceReading:
    """A claim's whole sentence read: "Up to 3.2x faster decoding with speculative decoding on H100
    (Llama-3.1-70B, EAGLE-3)" states 3.2×, an H100, Llama-3.1-70B and an EAGLE-3 head, and leaves
    out the batch, the dataset, the temperature, the output length and whether the acceptance was
    measured. Models and GPUs are matched to presets by their names
    (:func:`specviz.scenario.model_preset`, :func:`specviz.scenario.gpu_preset`), over runs of one to
    four words, the longest first.

    Raises
    ------
    SpecvizError
        As :func:`parse_claim` for the figure; ``claims.no_speed_figure`` where its figures are all
        something else than a speedup of decoding (a cost, a reduction, a count of GPUs, a training
        speed), naming them; ``claims.unreadable`` where it holds no figure at all.
    """
    words = _words(text)
    unbatched = _BATCH.sub(" ", words)
    tokens = re.findall(r"[\w][\w.\-/]*", words)
    # The figure that is a speedup: not a count of GPUs ("on 8x H100") nor another ratio ("5x cheaper");
    # one beside a word of speed ("2x faster", "1.8x TPS") before any other.
    written = list(_SPEEDUP_IN_SENTENCE.finditer(unbatched))
    figures = [f for f in written
               if not _NOT_SPEED.match(unbatched, f.end())
               and not (f.group(0).endswith("%") and (_REDUCTION.match(unbatched, f.end())
                                                      or _REDUCED_BY.search(unbatched[max(0, f.start() - 40):f.start()])))
               and not gpu_preset((unbatched[f.end():].split() or [""])[0], presets.gpus)]
    near = [f for f in figures if _SPEED_WORDS.search(unbatched[f.end():f.end() + 24])]
    figure = (near or figures or [None])[0]
    if figure is None and written:
        raise SpecvizError("claims.no_speed_figure", figures=", ".join(f.group(0).strip() for f in written[:3]))
    if figure is None:
        raise SpecvizError("claims.unreadable", text=words[:60])
    speedup = parse_claim(figure.group(0))
    spans = [" ".join(tokens[i:i + n]).strip(".-/") for n in (4, 3, 2, 1) for i in range(len(tokens) - n + 1)]
    target = next((m for m in (model_preset(span, presets.models) for span in spans) if m), None)
    gpu = _named_gpu(tokens, presets)
    lower = words.lower()
    methods = named_methods(words)
    draft = next((kind for kind, baseline in methods if not baseline), None)
    baseline = next((kind for kind, baseline in methods if baseline and kind != draft), None)
    # The dataset of the figure's own clause, between the figures before and after it: "2.11x on the
    # Random dataset and 1.80x on ShareGPT" does not give 2.11x on ShareGPT.
    bounds = [f.span() for f in written]
    clause = unbatched[max((end for _, end in bounds if end <= figure.start()), default=0):
                       min((start for start, _ in bounds if start >= figure.end()), default=len(unbatched))].lower()
    dataset = next((name for name in _DATASETS if name.lower() in clause), None)
    batch = claimed_batch(words)
    stated = {"batch": batch is not None, "dataset": dataset is not None, "model": target is not None,
              "hardware": gpu is not None,
              "equal_footing": not _THROUGHPUT_FIGURE.search(unbatched[figure.start():figure.end() + 40])
              or _EQUAL_FOOTING.search(words) is not None}
    unstated = tuple(key for key, pattern in UNSTATED.items()
                     if not stated.get(key, pattern is not None and re.search(pattern, lower) is not None))
    return SentenceReading(speedup, batch, gpu, target, draft, dataset, unstated, baseline,
                           None if baseline else over_words(unbatched, figure.span(), bounds), percent_of(figure.group(0)))


def over_words(words: str, figure: tuple[int, int], figures: list[tuple[int, int]]) -> str | None:
    """The words of what a sentence compares its ``figure`` (a span of ``words``) with, up to a word
    such as "with" or "on", where that is not plain decoding (a drafting method is read by
    :func:`named_methods`, and this is not asked then): the first
    comparison after it and before the next figure ("4x speed-up relative to the best prior Blackwell
    baseline" gives "the best prior Blackwell baseline"), else the last one before it since the
    figure before ("Compared to vLLM, SGLang is 3x faster" gives "vLLM"); None where the sentence
    compares the figure with nothing, or with plain decoding or a method."""
    after = min((start for start, _ in figures if start >= figure[1]), default=len(words))
    before = max((end for _, end in figures if end <= figure[0]), default=0)
    found = next(_OVER_WHAT.finditer(words, figure[1], after), None) or next(
        reversed(list(_OVER_WHAT.finditer(words, before, figure[0]))), None)
    if found is None:
        return None
    what = " ".join(_WHAT_ENDS.split(found["what"], 1)[0].split()[:8])
    return None if not what or _PLAIN_DECODING.search(what) else what


def sentence_choices(reading: SentenceReading, presets: Presets, target: str) -> tuple[dict[str, str], str | None]:
    """The scenario's choices a sentence sets, as the Claims page and ``specviz claim`` set them: its
    ``gpu`` and ``target`` where it names them, and its drafting method as the ``draft`` where the
    model the scenario ends with (``target``) can draft with it; and that method where it cannot (MTP
    named of Qwen3-32B), which is said rather than dropped, else None."""
    choices = {key: value for key, value in (("gpu", reading.gpu), ("target", reading.target)) if value is not None}
    if reading.draft is not None and reading.draft in draft_choices(presets, target):
        return {**choices, "draft": reading.draft}, None
    return choices, reading.draft


def at_least(value: float) -> float:
    """An "at least" figure as a page shows it, to two decimals rounded up: the α a claim needs,
    0.7543, shown as 0.75 would fall short of the claim (3.16x where 3.2x is claimed)."""
    return math.ceil(value * 100.0 - 1e-9) / 100.0


def alpha_from_measurement(measure: str, value: float, gamma: int) -> float:
    """The per-position α of an acceptance measured as ``measure`` at draft length ``gamma``.

    .. math:: E = 1 + r γ \\ (\\text{r: vLLM's rate}),\\qquad α = E^{-1}(E, γ)

    (:func:`specviz.model.spec.alpha_from_acceptance_length`); ``alpha`` is taken as it is.

    Raises
    ------
    SpecvizError
        ``claims.bad_alpha``, ``claims.bad_acceptance_rate`` (outside [0, 1]) or
        ``claims.bad_acceptance_length`` (outside [1, γ + 1]: it cannot come from γ drafts).
    """
    if measure == "alpha":
        low, high, alpha = 0.0, 1.0, value
    elif measure == "acceptance_rate":
        low, high = 0.0, 1.0
        alpha = spec.alpha_from_acceptance_length(1.0 + value * gamma, gamma) if low <= value <= high else math.nan
    else:
        low, high = 1.0, gamma + 1.0
        alpha = spec.alpha_from_acceptance_length(value, gamma) if low <= value <= high else math.nan
    if not (math.isfinite(value) and low <= value <= high):
        raise SpecvizError(_BAD_MEASUREMENT[measure], value=value, low=low, high=high, gamma=gamma)
    return float(alpha)


# Drafts grouped by how they draft: heads on the target's features, its own MTP layers, the host, ...
_DRAFTING = {"eagle": "eagle", "eagle3": "eagle", "peagle": "eagle", "mtp": "mtp", "ngram": "host", "suffix": "host",
             "medusa": "medusa", "self": "self", "block": "block"}


def setting_class(target: architecture.Model, draft_id: str, gpu: roofline.GPU) -> tuple[str, str, str, str]:
    """A setting's model family (its model type's leading word: ``llama`` for Llama 2, 3 and 4), its
    drafting (:data:`_DRAFTING`, else a separate draft ``model``) and its hardware's vendor and kind
    (``NVIDIA``, ``gpu``): what a published result must share to be evidence about a claim."""
    family = re.match(r"[a-z]+", target.model_type)
    drafting = _DRAFTING.get(draft_id, "eagle" if draft_id.startswith("EAGLE3-") else "model")
    return family[0] if family else target.model_type, drafting, gpu.name.split()[0], gpu.kind


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


def published_reaching(published: pd.DataFrame, speedup: float, batch: int | None = None) -> pd.DataFrame:
    """The published speedups (rows of ``data/published_results.csv`` whose metric is a speedup)
    that reach ``speedup``, highest first; with ``batch``, only those measured at that batch or a
    larger one (a speedup at batch 1 says little of one claimed at 64: it falls as the batch grows)."""
    speedups = published[published["metric"].str.endswith("speedup")]
    if batch is not None:
        speedups = speedups[speedups["batch"] >= batch]
    return speedups[speedups["value"] >= speedup].sort_values("value", ascending=False)


def _alpha_for(length: np.ndarray, gamma: np.ndarray) -> np.ndarray:
    """α with E(α, γ) = length, NaN where the length is beyond γ + 1 (out of reach)."""
    reachable = length <= gamma + 1.0
    clipped = np.where(reachable, np.maximum(length, 1.0), 1.0)
    return np.where(reachable, spec.alpha_from_acceptance_length(clipped, gamma), np.nan)


def required_at_costs(speedup: ArrayLike, gamma: ArrayLike, verify_cost: ArrayLike = 1.0,
                      draft_cost: ArrayLike = spec.SEED_DRAFT_COST) -> dict[str, float | np.ndarray]:
    """What a claimed speedup S* needs where the costs of a step are given as ratios of a plain one
    (the calculator's simple-ratios mode), in closed form.

    .. math:: S = \\frac{E(α, γ)}{v + γc} \\;\\Rightarrow\\; E^* = S^*\\,(v + γc),\\qquad
              α^* = E^{-1}(E^*, γ),\\qquad S_{max} = \\frac{γ + 1}{v + γc}

    Parameters
    ----------
    speedup, gamma, verify_cost, draft_cost : array_like
        S*, the draft length γ, the verify pass's cost v and one draft pass's cost c (both relative
        to a plain decode step); they broadcast.

    Returns
    -------
    dict
        ``acceptance_length`` (E*), ``alpha`` (α*; NaN where E* > γ + 1, out of reach even at
        α = 1; 0 where E* ≤ 1, a claim the costs meet without any acceptance),
        ``acceptance_rate`` (vLLM's accepted / drafted at α*, NaN where α* is) and ``max_speedup``
        (S at α = 1). Scalars for scalar input.

    Examples
    --------
    3x at γ = 5 with a draft pass at 0.05 of a plain step and a verify pass at 1 needs
    E* = 3 · 1.25 = 3.75 tokens per step (α* = 0.807, a vLLM acceptance rate of 2.75 / 5 = 0.55), and
    the setting gives at most 6 / 1.25 = 4.8x.

    References
    ----------
    Leviathan, Kalman, Matias 2023 (arXiv 2211.17192): the speedup E / (γc + 1), here with the
    verify pass's cost v in place of 1.
    """
    g = np.asarray(gamma, dtype=float)
    cost = np.asarray(spec.step_cost(g, verify_cost, draft_cost), dtype=float)
    length = np.asarray(speedup, dtype=float) * cost
    length, g = np.broadcast_arrays(length, g)
    alpha = _alpha_for(length, g)
    rate = np.where(np.isnan(alpha), np.nan, spec.acceptance_rate_from_alpha(np.nan_to_num(alpha), g))
    out = {"acceptance_length": length, "alpha": alpha, "acceptance_rate": rate, "max_speedup": (g + 1.0) / cost}
    return {k: float(v) if np.ndim(v) == 0 else v for k, v in out.items()}


def check_at_costs(claim: Claim, verify_cost: float, draft_cost: float, gamma_max: int) -> tuple[str, list[Notice], pd.DataFrame]:
    """A claim against costs given as ratios (:func:`required_at_costs`), at the claim's γ or each γ
    in 1..``gamma_max``: ``impossible`` where no γ reaches S* even at α = 1, ``plausible`` where the
    measured α (``claim.alpha``) reaches it at some γ, else ``conditional`` on the α the easiest γ
    needs. The costs are given, so there is no band, and batch and context do not enter.

    Returns
    -------
    verdict : str
    reasons : list of Notice
    required : DataFrame
        One row per γ: ``gamma``, ``max_speedup``, ``alpha_needed``, ``acceptance_rate``,
        ``acceptance_length`` (and ``at_alpha``, the speedup at the measured α, where there is one).
    """
    gammas = np.arange(1, gamma_max + 1) if claim.gamma is None else np.array([claim.gamma])
    need = required_at_costs(claim.speedup, gammas, verify_cost, draft_cost)
    required = pd.DataFrame({"gamma": gammas, "max_speedup": need["max_speedup"], "alpha_needed": need["alpha"],
                             "acceptance_rate": need["acceptance_rate"], "acceptance_length": need["acceptance_length"]})
    best = required.loc[required["max_speedup"].idxmax()]
    costs = {"verify": verify_cost, "draft": draft_cost}
    ceiling = Notice("claims.reason.costs_ceiling", speedup=float(best["max_speedup"]), gamma=int(best["gamma"]), **costs)
    if required["alpha_needed"].isna().all():
        return "impossible", [Notice("claims.reason.costs_out_of_reach", claim=claim.speedup, **costs), ceiling], required
    easiest = required.loc[required["alpha_needed"].idxmin()]
    needed = Notice("claims.reason.costs_needs", alpha=float(easiest["alpha_needed"]),
                    shown=at_least(float(easiest["alpha_needed"])), gamma=int(easiest["gamma"]),
                    rate=float(easiest["acceptance_rate"]), length=float(easiest["acceptance_length"]))
    if claim.alpha is None:
        return "conditional", [needed, ceiling], required
    required["at_alpha"] = spec.speedup(claim.alpha, gammas, verify_cost, draft_cost)
    mine = required.loc[required["at_alpha"].idxmax()]
    measured = Notice("claims.reason.costs_measured", alpha=claim.alpha, speedup=float(mine["at_alpha"]),
                      gamma=int(mine["gamma"]))
    return ("plausible" if mine["at_alpha"] >= claim.speedup else "conditional"), [measured, needed, ceiling], required


def _range(batches: np.ndarray, holds: np.ndarray) -> tuple[float, float]:
    """The smallest and largest batch where ``holds`` (NaN, NaN where none)."""
    inside = batches[holds]
    return (float(inside.min()), float(inside.max())) if inside.size else (math.nan, math.nan)


def check_claim(scenario: Scenario, claim: Claim, gamma_max: int, batch_max: int) -> ClaimCheck:
    """Whether ``claim`` can hold in ``scenario`` (its hardware, models, engine costs and context).

    For every γ in 1..``gamma_max`` (or the claim's γ) and every batch of
    :func:`specviz.calculator.batch_grid` up to ``batch_max`` (and the claim's batch): S(1), the
    speedup with every draft token accepted, and its band; the α the claim needs at the claim's batch
    (else where S(1) is highest), α = E⁻¹(S*·(γ + 1) / S(1)), for the model and for each edge of the
    band; and, with a measured α, the speedup there at the γ the model finds best at each batch. Only
    the claim's batch counts for the verdict when it names one; the grid is there for the chart.
    See the module's docstring for the verdict. A claim is judged on decoding alone, as vendors state
    speedups: a load whose prompts share each step (``scenario.prefill``) makes the speedup a
    function of E that the inverse above does not hold, and is left out.

    Returns
    -------
    ClaimCheck
    """
    step_scenario = replace(scenario, mode="step", prefill=False)
    gammas = np.arange(1, gamma_max + 1) if claim.gamma is None else np.array([claim.gamma])
    grid = calculator.batch_grid(batch_max)
    if claim.batch is not None:
        grid = np.union1d(grid, [claim.batch])
    counted = grid == claim.batch if claim.batch is not None else np.ones(grid.size, dtype=bool)
    g, b = gammas[:, None].astype(float), grid[None, :].astype(float)
    context = step_scenario.context
    ceiling = np.asarray(calculator.evaluate_scenario(step_scenario, 1.0, g, b, context)["speedup"], dtype=float)
    low, high = (np.asarray(edge, dtype=float) for edge in calculator.speedup_band(step_scenario, 1.0, g, b, context))
    ceiling, low, high = (np.broadcast_to(v, (gammas.size, grid.size)) for v in (ceiling, low, high))

    # The batch the per-γ table speaks for: the claim's, else where the ceiling is highest.
    at = int(np.argmax(np.where(counted, ceiling.max(axis=0), -np.inf)))
    best_g = int(np.argmax(ceiling[:, at]))
    best = {"speedup": float(ceiling[best_g, at]), "low": float(low[best_g, at]), "high": float(high[best_g, at]),
            "gamma": int(gammas[best_g]), "batch": int(grid[at])}
    needed = lambda edge: _alpha_for(claim.speedup * (gammas + 1.0) / edge[:, at], gammas.astype(float))
    alpha = needed(ceiling)
    required = pd.DataFrame({
        "gamma": gammas, "ceiling": ceiling[:, at], "ceiling_low": low[:, at], "ceiling_high": high[:, at],
        "alpha_needed": alpha, "alpha_safe": needed(low), "alpha_optimistic": needed(high),
        "acceptance_rate": np.where(np.isnan(alpha), np.nan, spec.acceptance_rate_from_alpha(np.nan_to_num(alpha), gammas)),
        "acceptance_length": np.where(np.isnan(alpha), np.nan, spec.expected_tokens(np.nan_to_num(alpha), gammas)),
    })
    batches = pd.DataFrame({"batch": grid, "counted": counted, "ceiling": ceiling.max(axis=0),
                            "ceiling_high": high.max(axis=0)})
    if claim.alpha is not None:
        share = np.asarray(spec.expected_tokens(claim.alpha, gammas), dtype=float)[:, None] / (gammas[:, None] + 1.0)
        at_alpha, at_alpha_low, at_alpha_high = share * ceiling, share * low, share * high
        required["at_alpha"], required["at_alpha_low"], required["at_alpha_high"] = (
            v[:, at] for v in (at_alpha, at_alpha_low, at_alpha_high))
        # Per batch, the γ the model finds best at the measured α, and its band.
        chosen = np.argmax(at_alpha, axis=0)
        pick = lambda v: np.take_along_axis(v, chosen[None, :], axis=0)[0]
        batches["at_alpha_gamma"] = gammas[chosen]
        batches["at_alpha"], batches["at_alpha_low"], batches["at_alpha_high"] = (
            pick(v) for v in (at_alpha, at_alpha_low, at_alpha_high))
    holds = _range(grid, counted & (high.max(axis=0) >= claim.speedup))
    verdict, headline, reasons, conditions, yours = _verdict(scenario, claim, best, required, batches, holds)
    if claim.workload is not None and verdict != "impossible":
        reasons.append(_on_workload(step_scenario, claim, required, batches))
    return ClaimCheck(claim, verdict, headline, reasons, conditions, best, required, batches, *holds, *yours)


def _on_workload(scenario: Scenario, claim: Claim, required: pd.DataFrame, batches: pd.DataFrame) -> Notice:
    """What the claim's decode speedup is worth to a whole request of the user's workload: at the
    measured α and the γ and batch that do best there, else at the α the claim needs at its easiest
    γ and batch (:func:`specviz.workload.end_to_end`)."""
    counted = batches[batches["counted"]]
    if claim.alpha is not None:
        top = counted.loc[counted["at_alpha"].idxmax()]
        alpha, gamma, batch = claim.alpha, int(top["at_alpha_gamma"]), int(top["batch"])
    else:
        rows = required.dropna(subset=["alpha_needed"])
        easiest = rows.loc[rows["alpha_needed"].idxmin()] if len(rows) else required.iloc[-1]
        alpha = float(easiest["alpha_needed"]) if len(rows) else 1.0
        gamma, batch = int(easiest["gamma"]), int(counted.loc[counted["ceiling"].idxmax(), "batch"])
    n_in, n_out = claim.workload
    whole = {k: float(v) for k, v in workload.end_to_end(scenario, alpha, gamma, batch, n_in, n_out).items()}
    if math.isinf(whole["e2e_spec_s"]):  # the load's prompts come faster than the steps admit them
        return Notice("claims.reason.workload_queue", input=n_in, output=n_out, alpha=alpha, gamma=gamma, batch=batch)
    return Notice("claims.reason.workload", input=n_in, output=n_out, alpha=alpha, gamma=gamma, batch=batch,
                  context=n_in + n_out / 2, decode=whole["decode_speedup"], request=whole["e2e_speedup"],
                  share=whole["prefill_share"])


def _verdict(scenario: Scenario, claim: Claim, best: dict[str, float], required: pd.DataFrame, batches: pd.DataFrame,
             holds: tuple[float, float]) -> tuple[str, Notice, list[Notice], list[Notice], tuple[float, float]]:
    """The verdict, its headline, reasons and conditions, and the batches where the claim holds at the
    measured acceptance, from the tables of :func:`check_claim`."""
    setting = {"claim": claim.speedup, "gpu": scenario.gpu.name, "target": scenario.target.name,
               "engine": scenario.engine.name}
    ceiling = Notice("claims.reason.ceiling", speedup=best["speedup"], low=best["low"], high=best["high"],
                     gamma=best["gamma"], batch=best["batch"])
    none = (math.nan, math.nan)
    if math.isnan(holds[1]):
        return ("impossible", Notice("claims.verdict.impossible", **setting),
                [Notice("claims.reason.out_of_reach", claim=claim.speedup, high=best["high"]), ceiling], [], none)
    acceptance: list[Notice] = []
    if required["alpha_needed"].notna().any():
        easiest = required.loc[required["alpha_needed"].idxmin()]
        acceptance.append(Notice("claims.condition.acceptance", alpha=float(easiest["alpha_needed"]),
                                 shown=at_least(float(easiest["alpha_needed"])), gamma=int(easiest["gamma"]), rate=float(easiest["acceptance_rate"]),
                                 length=float(easiest["acceptance_length"]),
                                 optimistic=float(easiest["alpha_optimistic"])))
        if required["alpha_safe"].isna().all():  # the band's low edge never reaches, even at α = 1
            acceptance.append(Notice("claims.condition.kind_costs_too"))
    else:
        easiest = required.loc[required["alpha_optimistic"].idxmin()]
        acceptance.append(Notice("claims.condition.kind_costs", alpha=float(easiest["alpha_optimistic"]),
                                 shown=at_least(float(easiest["alpha_optimistic"])), gamma=int(easiest["gamma"])))
    batch_range = lambda low, high: [] if claim.batch is not None else [
        Notice("claims.condition.batch", low=int(low), high=int(high))]
    if claim.alpha is None:
        return ("conditional", Notice("claims.verdict.conditional", **setting),
                [ceiling, Notice("claims.reason.no_alpha")], acceptance + batch_range(*holds), none)
    counted = batches[batches["counted"]]
    top = counted.loc[counted["at_alpha"].idxmax()]
    reached = Notice("claims.reason.at_alpha", alpha=claim.alpha, gamma=int(top["at_alpha_gamma"]),
                     speedup=float(top["at_alpha"]), low=float(top["at_alpha_low"]), high=float(top["at_alpha_high"]),
                     batch=int(top["batch"]))
    at_yours = lambda column: _range(counted["batch"].to_numpy(), (counted[column] >= claim.speedup).to_numpy())
    yours = at_yours("at_alpha_low")
    if not math.isnan(yours[1]):
        return ("plausible", Notice("claims.verdict.plausible", **setting), [reached, ceiling],
                [Notice("claims.condition.batch_yours", low=int(yours[0]), high=int(yours[1]))]
                if claim.batch is None else [], yours)
    for column, key, condition in (("at_alpha", "claims.verdict.band", "claims.condition.not_unkind"),
                                   ("at_alpha_high", "claims.verdict.kind", "claims.condition.kind_costs_yours")):
        reach = at_yours(column)
        if not math.isnan(reach[1]):
            return ("conditional", Notice(key, **setting, alpha=claim.alpha), [reached, ceiling],
                    [Notice(condition, alpha=claim.alpha), *batch_range(*reach)], none)
    return ("conditional", Notice("claims.verdict.short", **setting, alpha=claim.alpha, speedup=float(top["at_alpha"])),
            [reached, ceiling], acceptance + batch_range(*holds), none)
