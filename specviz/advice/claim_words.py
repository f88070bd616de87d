"""Reading a claim: its figure, batch and percentage from a short claim ("up to 3x", "2.5x at batch 64",
"180% faster", "three times faster", "35% slower"); a slide's whole sentence is
:mod:`specviz.advice.claim_sentence`'s.

Words only: what a claim needs to be true is :mod:`specviz.advice.claims`'s. English and Vietnamese,
the app's two languages. Every pattern runs over the words with each blank run one space and the
text bounded (:func:`parse_claim`), so that every match takes time linear in the text.
"""

from __future__ import annotations

import math
import re

from specviz import settings
from specviz.errors import Notice, SpecvizError

__all__ = ["parse_claim", "batch_in_words", "other_batches", "batches_left_out", "gpus_left_out", "percent_of",
           "percent_reading", "claim_text", "cut_at_word", "in_figures", "without_batch", "BATCH_WORDS", "MAGNITUDE", "SIGN"]

# A figure as written: its minus sign and its exponent are part of it, so that "-3x" is not read as 3x
# nor "1e9x" as 9x. Up to 15 digits (and 5 groups of thousands), 15 decimals and a one-digit exponent:
# "1000000x" is refused as too large and "0.000000000000001x" as no gain, not as no figure, and no
# figure read is infinite ("1" and 249 groups of ",000" had been "inf×") or 100 digits long ("1e99x").
SIGN, MAGNITUDE = r"[-−]", r"\d{1,15}(?:(?:,\d{3}){1,5}|[.,]\d{1,15})?(?:e[-+]?\d)?"
# A claimed speedup is a number followed by x, ×, "times" or "lần", or a percentage faster, in English
# or Vietnamese (the app's two languages): "up to 3x", "2.5× faster", "180% faster", "lên đến 3 lần",
# "nhanh hơn 2,5x", "tăng tốc 3x". "Up to" ("lên đến", "lên tới", "tới") says the figure is a best case.
# Vendors' words about the figure are read with it: "speedup 10x", "2x throughput", "1.8x lower latency"
# (each had been refused in the claim's own field: a manager's pass), "nhanh hơn tới 3 lần", "gấp 3 lần".
_CLAIM = re.compile(r"^\s*(?:speed-?up\s*(?:of\s+)?)?(?:up\s+to|lên\s+đến|lên\s+tới|tới|đến)?\s*"
                    r"(?:(?P<faster_vi>nhanh(?:\s+hơn)?|tăng\s+tốc)|(?P<slower_vi>chậm(?:\s+(?:hơn|đi))?))?\s*(?:(?:lên\s+)?(?:tới|đến)\s+)?(?:gấp\s+)?"
                    # A range ("1.5x–2x", "1.5 to 2x", "49% to 62% slower") claims its far end: the most of a
                    # gain, the deepest of a slowdown.
                    r"(?:(?P<first>\d{1,15}(?:[.,]\d{1,15})?)\s*[x×%]?\s*(?:-|–|—|to|đến)\s*)?"
                    rf"(?P<number>{SIGN}?{MAGNITUDE})\s*(?P<unit>[x×]|times|lần|%)?\s*"
                    # A figure below 1 beside "faster" is refused (its two readings); "0.8x speedup" is a ratio.
                    r"(?:(?P<faster>faster|as\s+fast|nhanh\s+hơn|lower\s+latency"
                    r"|(?:faster|quicker)\s+(?:decoding|inference|generation))|speed-?up|the\s+speed|(?:higher\s+|more\s+)?throughput"
                    # A slowdown: "35% slower", "2x slower", "a 35% slowdown", "30% lower throughput", "chậm hơn 35%".
                    r"|(?P<slower>(?:as\s+)?slow(?:er)?(?:\s+(?:decoding|inference|generation))?(?:\s+than\s+(?:plain|normal|standard)\s+(?:decoding|inference|generation))?|slow-?down|chậm\s+hơn"
                    r"|(?:lower|less|worse)\s+throughput)"
                    # A time per token longer: "35% higher latency", "35% more TPOT", "2x longer" (1/1.35, 1/2).
                    r"|(?P<longer>(?:higher|more|longer)\s+(?:latency|tpot|itl|time\s+per\s+token)|longer))?\s*$", re.IGNORECASE)
# The batch a claim names, wherever in its words: "at batch 64", "batch size 64", "bs=64",
# "concurrency 64 users", "at 256 concurrency", "64 concurrent requests", "ở batch 64", "độ đồng thời 128",
# a load test's "64-user" (seed 000's; not "500 users", who use a service, not one batch); and batch 1
# said in words: "a single request", "a single user", "một request".
BATCH_WORDS = re.compile(r"[,;]?\s*(?:(?:at|with|ở|tại|với|for|on|cho)\s+)?"
                    r"(?:\b(?:batch(?:\s+size)?|bs|concurrency(?:\s+of)?|độ\s+đồng\s+thời)\s*[=:]?\s*(?P<batch>\d{1,3}(?:,\d{3})+(?![\d.])|\d+)"
                    r"(?:\s+(?:users|requests|clients|người\s+dùng))?"
                    r"|\b(?P<concurrent>\d{1,3}(?:,\d{3})+(?![\d.])|\d+)(?:\s+(?:concurrent(?:\s+(?:requests|users))?|concurrency"
                    r"|(?:request|người\s+dùng)\s+đồng\s+thời))"
                    r"|(?<![\d.,])(?P<users>\d{1,7})-user\b"
                    r"|(?:\ba\s+)?\b(?P<single>single|một)\s+(?:request|user|stream|người\s+dùng))\b",
                    re.IGNORECASE)
# Two throughputs, the speculative one first, as a vendor prints them: "858 vs 456 TPS", "858 tok/s against
# 456", "from 456 to 858 tokens/s" (the plain one first): their ratio is the claim (a manager's pass:
# the page had asked for "a number and x").
_RATE = r"\s*(?:tok(?:en)?s?\s*/\s*s(?:ec)?|tps|tokens?\s+(?:per|a)\s+second)"
_RATES = re.compile(rf"^\s*(?:(?P<new>{MAGNITUDE})(?:{_RATE})?\s*(?:vs\.?|versus|against|over|so\s+với)\s*"
                    rf"(?P<old>{MAGNITUDE}){_RATE}|from\s+(?P<before>{MAGNITUDE})(?:{_RATE})?\s+to\s+"
                    rf"(?P<after>{MAGNITUDE}){_RATE})\s*$", re.IGNORECASE)
# Past this a figure is not a speedup of decoding: nothing accepts more than 64 tokens a step.
_LARGEST_CLAIM = 64.0


def claim_text(text: str | None) -> str:
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


def cut_at_word(words: str, most: int = 60) -> str:
    """A sentence as a message quotes it: whole, or its words up to ``most`` characters and "…" (a
    cut inside a word, "…trên GB", read as a word of the sentence). :func:`specviz.errors.shortened`
    cuts a refused value, which has no words, at a character."""
    if len(words) <= most:
        return words
    head = words[:most + 1]
    return (head.rsplit(" ", 1)[0] if " " in head else words[:most]).rstrip() + "…"


# Multiples said in words, written as figures before a claim is read: "three times faster", "twice as
# fast", "doubles throughput", "a threefold speedup", "2.5-fold", "gấp ba lần", "gấp đôi", "gấp rưỡi" (1.5)
# (a manager's pass: each had been refused).
_NUMBER_WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
                 "hai": 2, "ba": 3, "bốn": 4, "năm": 5, "sáu": 6, "bảy": 7, "tám": 8, "chín": 9, "mười": 10}
_TIMES_IN_WORDS = re.compile(r"\b(?:(?P<vi>gấp\s+)?(?P<word>two|three|four|five|six|seven|eight|nine|ten|hai|ba|bốn|năm"
                             r"|sáu|bảy|tám|chín|mười)\s+(?P<unit>times|lần)\b"
                             r"|gấp\s+(?P<after>đôi|hai|ba|bốn|năm|sáu|bảy|tám|chín|mười)\b(?:\s+lần\b)?"
                             r"|(?P<twice>twice|doubles|doubled|doubling|triples|tripled|tripling|quadruples|quadrupled)\b"
                             r"|(?P<fold>\d{1,3}(?:\.\d{1,3})?|two|three|four|five|six|seven|eight|nine|ten)[\s-]?fold\b"
                             r"|(?P<half>gấp\s+rưỡi)(?:\s+lần)?)",
                             re.IGNORECASE)
_MULTIPLE_VERBS = {"twice": 2, "doubles": 2, "doubled": 2, "doubling": 2, "triples": 3, "tripled": 3, "tripling": 3,
                   "quadruples": 4, "quadrupled": 4}


def in_figures(words: str) -> str:
    """``words`` with multiples said in words written as figures (:data:`_TIMES_IN_WORDS`): "three
    times" as "3 times", "gấp đôi" as "gấp 2 lần" ("gấp" kept: what follows is what the figure is over,
    :func:`over_words`), "twice" as "2x"."""
    def figure(found: re.Match) -> str:
        if found["fold"]:  # "threefold", "2.5-fold"
            return f"{_NUMBER_WORDS.get(found['fold'].lower(), found['fold'])}x"
        if found["half"]:  # "gấp rưỡi": one and a half times
            return "gấp 1.5 lần"
        if found["twice"]:
            return f"{_MULTIPLE_VERBS[found['twice'].lower()]}x"
        if found["after"]:
            return f"gấp {2 if found['after'].lower() == 'đôi' else _NUMBER_WORDS[found['after'].lower()]} lần"
        return f"{found['vi'] or ''}{_NUMBER_WORDS[found['word'].lower()]} {found['unit']}"
    return _TIMES_IN_WORDS.sub(figure, words)


def parse_claim(text: str) -> float:
    """The speedup in a claim's words: "up to 3x", "2.5×", "3X faster", "180% faster" (2.8x), and in
    Vietnamese "lên đến 3 lần", "nhanh hơn 2,5x".

    A percentage is read as "faster than": 180 % faster is 2.8×. Two throughputs are their ratio:
    "858 vs 456 TPS" and "from 456 to 858 tok/s" are 1.88×. A comma may be the decimal mark, and
    a figure may have an exponent ("1e9x" is 10⁹×). A range ("1.5x–2x") claims its upper end. A
    batch named in the words ("2.5x at batch 64") is :func:`batch_in_words`'s and left out here.
    A slowdown is a figure below 1: "0.8x", "35% slower" (0.65×), "2x slower" (0.5×), "30% lower
    throughput", "chậm hơn 35%" (:func:`_slowdown`), the claim of seed 000's load test and seed 002's
    "49% to 62% slower than plain generation" (:mod:`specviz.advice.slowdown` checks it).

    Raises
    ------
    SpecvizError
        ``claims.too_long`` past ``SPECVIZ_CLAIM_MAX_CHARS`` (a run of blanks counted as one);
        ``claims.unreadable`` if the text is not a speedup; ``claims.negative_speedup`` if its figure
        is negative (a speedup is a positive ratio); ``claims.below_one_faster`` for a figure below 1
        said to be faster ("0.5x faster"); ``claims.not_a_speedup`` at 0×, ``claims.no_change``
        at 1×; ``claims.too_large`` above 64× (more tokens a step than any draft gives) and
        ``claims.slowdown_too_deep`` below 1/64×; ``claims.slowdown_percent`` at 100 % slower or more.
    """
    words = claim_text(text)
    if rates := _RATES.match(without_batch(words)):
        new, old = (_figure(rates[name]) for name in (("new", "old") if rates["new"] else ("after", "before")))
        if old <= 0:
            raise SpecvizError("claims.unreadable", text=cut_at_word(words))
        return _checked_speedup(new / old)
    found = _CLAIM.match(without_batch(in_figures(words)))
    if not found:
        raise SpecvizError("claims.unreadable", text=cut_at_word(words))
    number = _figure(found["number"])
    if number < 0:
        raise SpecvizError("claims.negative_speedup", figure=found["number"])
    percent = (found["unit"] or "").startswith("%")
    if (found["faster"] or found["faster_vi"]) and not percent and 0.0 < number < 1.0:
        # "0.5x faster", "nhanh hơn 0,5x": half the speed, or 50 % faster? Both are written; neither is guessed.
        raise SpecvizError("claims.below_one_faster", figure=found["number"], gain=1.0 + number)
    ends = [number] if found["first"] is None else [_figure(found["first"]), number]
    readings = [_reading(found, end, percent) for end in ends]
    if len(readings) == 2 and (readings[0] - 1.0) * (readings[1] - 1.0) < 0:
        # "1.2x to 0.8x": a gain at one end and a loss at the other is no one claim.
        raise SpecvizError("claims.range_mixed", low=min(readings), high=max(readings))
    return _checked_speedup(min(readings) if readings[-1] < 1.0 else readings[-1])


def _reading(found: re.Match, number: float, percent: bool) -> float:
    """The speed ratio ``number`` stands for in a claim matched by :data:`_CLAIM`: a slowdown's
    (:func:`_slowdown`), a longer time per token's (1 / (1 + p) for a percentage, 1 / N for "N times"),
    or a gain's (1 + p for a percentage, the figure itself)."""
    if found["slower"] or found["slower_vi"]:
        return _slowdown(number, percent)
    if found["longer"]:
        return 1.0 / (1.0 + number / 100.0) if percent else _slowdown(number, percent)
    return 1.0 + number / 100.0 if percent else number


def without_batch(words: str) -> str:
    """``words`` with the batch they name (:data:`BATCH_WORDS`) taken out and the blanks left one space
    apart: a run of blanks where several were taken out had made the claim's pattern try its ways
    through them (200 ms for "bs=1 " written 200 times, a regression pass)."""
    return " ".join(BATCH_WORDS.sub(" ", words).split())


def _slowdown(number: float, percent: bool) -> float:
    """The speed ratio of a slowdown as written: "35% slower" is a throughput 35 % lower, 0.65× (the
    other reading, a time per token 35 % longer, is :func:`percent_reading`'s); "2x slower" is half the
    speed, 0.5×; a figure below 1 ("0.8x slower") is the ratio itself.

    Raises
    ------
    SpecvizError
        ``claims.slowdown_percent`` for 100 % or more, which would leave no throughput at all.
    """
    if percent:
        if number >= 100.0:
            raise SpecvizError("claims.slowdown_percent", percent=number, factor=1.0 + number / 100.0)
        return 1.0 - number / 100.0
    return 1.0 / number if number > 1.0 else number


def _checked_speedup(speedup: float) -> float:
    """``speedup``, a gain above 1 or a slowdown below it, refused where it is no speed at all
    (``claims.not_a_speedup``), exactly 1 (``claims.no_change``), more than any draft gives
    (``claims.too_large``) or a slowdown deeper than any speculative step costs
    (``claims.slowdown_too_deep``: below 1/64, the reciprocal of the largest gain)."""
    if speedup <= 0.0:
        raise SpecvizError("claims.not_a_speedup", speedup=speedup)
    if speedup == 1.0:
        raise SpecvizError("claims.no_change")
    if speedup > _LARGEST_CLAIM:
        raise SpecvizError("claims.too_large", speedup=speedup, largest=_LARGEST_CLAIM)
    if speedup < 1.0 / _LARGEST_CLAIM:
        raise SpecvizError("claims.slowdown_too_deep", speedup=speedup, largest=_LARGEST_CLAIM)
    return speedup


def percent_of(text: str) -> float | None:
    """The percentage a claim's words give where two readings part on it: 100 % faster or more ("400%
    faster": :func:`parse_claim` reads the old speed plus that share, 5×, some authors mean the new
    speed as that share of the old, 4×), and any percentage slower ("35% slower": a throughput 35 %
    lower, 0.65×, or a time per token 35 % longer, 0.74×). None for any other claim, and for a loss
    whose words name what fell or rose ("30% lower throughput", "35% higher latency": a regression
    pass had asked "which?" of them)."""
    found = _CLAIM.match(without_batch(in_figures(claim_text(text))))
    if not found or not (found["unit"] or "").startswith("%"):
        return None
    number = _figure(found["number"])
    named = re.search(r"throughput|latency|tpot|itl|time", (found["slower"] or "") + (found["longer"] or ""), re.IGNORECASE)
    if named:
        return None
    return number if found["slower"] or found["slower_vi"] or found["longer"] or number >= 100 else None


def percent_reading(percent: float, speedup: float) -> Notice:
    """How a percentage of :func:`percent_of` was read, and the other reading to ask the author about:
    for a gain (``claims.percent_reading``) the new speed as that share of the old, percent / 100; for
    a throughput that much lower (``claims.percent_reading_slower``, 1 − percent / 100) a time per
    token that much longer, 1 / (1 + percent / 100), and the other way round (``claims.percent_reading_longer``)."""
    lower, longer = 1.0 - percent / 100.0, 1.0 / (1.0 + percent / 100.0)
    if speedup < 1.0 and math.isclose(speedup, lower):
        return Notice("claims.percent_reading_slower", percent=percent, speedup=speedup, other=longer)
    if speedup < 1.0:
        return Notice("claims.percent_reading_longer", percent=percent, speedup=speedup, other=lower)
    return Notice("claims.percent_reading", percent=percent, speedup=speedup, other=percent / 100.0)


def _figure(text: str) -> float:
    """A claim's number as written: "1,000" groups thousands, "2,5" (Vietnamese) has a decimal comma."""
    figure = text.replace("−", "-")
    return float(figure.replace(",", "") if re.fullmatch(r"-?\d{1,3}(?:,\d{3})+", figure) else figure.replace(",", "."))


# More batches after the first, as a list: "at batch 1, 32 and 256", "concurrency 8 or 64".
# A number is one only where what follows it ends the list or the clause, not where it counts
# something else ("at batch 64, 8 H100s", "and 4 draft tokens": a review).
_MORE_BATCHES = re.compile(r"\s*(?:,\s*(?:(?:and|or|&|và|hoặc)\s+)?|\s(?:and|or|&|và|hoặc)\s+)"
                           r"(?P<batch>\d{1,3}(?:,\d{3})+(?![\d.])|\d{1,7})(?![\dx×%]|\.\d)"
                           r"(?=\s*$|\s*[,;:!?)\]]|\.(?!\d)|\s+(?:and|or|&|và|hoặc|on|with|at|for|in|using|trên|với|ở"
                           r"|users?|requests?|concurrent|clients?|người)\b)", re.IGNORECASE)


def other_batches(text: str) -> tuple[int, ...]:
    """The batches a claim's words list after the one :func:`batch_in_words` reads ("at batch 1, 32
    and 256": 32 and 256), which a check at one batch leaves out and says (a manager's pass)."""
    words = claim_text(text)
    found = BATCH_WORDS.search(words)
    if found is None or found["single"]:
        return ()
    more, at = [], found.end()
    while (following := _MORE_BATCHES.match(words, at)) is not None:
        more.append(int(following["batch"].replace(",", "")))
        at = following.end()
    return tuple(batch for batch in more if batch > 0)


def gpus_left_out(first: str | None, more: tuple[str, ...], gpu: str) -> list[str]:
    """The GPU presets a sentence names (``first`` and ``more``: :class:`specviz.advice.claim_sentence.SentenceReading`'s ``gpu`` and
    ``other_gpus``) that a check on ``gpu`` leaves out; none where it names one alone (a review: the
    B200 chosen, the note had named it as left out, and the H200 not)."""
    return [named for named in (first, *more) if named != gpu] if more else []


def batches_left_out(first: int | None, more: tuple[int, ...], batch: int | None) -> list[int]:
    """The batches a sentence names (``first`` and ``more``: :func:`batch_in_words`, :func:`other_batches`)
    that a check at ``batch`` leaves out; none where it names one alone, or the check weighs every
    batch (``batch`` None)."""
    return [named for named in (first, *more) if named != batch] if more and batch else []


def batch_in_words(text: str) -> int | None:
    """The batch size a claim's words name ("2.5x at batch 64", "3x, bs=256", "2x with 64 concurrent
    requests", 1 for "a single request"), or None where they name none.

    Raises
    ------
    SpecvizError
        ``claims.too_long`` past ``SPECVIZ_CLAIM_MAX_CHARS``, as :func:`parse_claim`;
        ``claims.batch_too_large`` past ``SPECVIZ_BATCH_MAX``, the largest batch a check weighs;
        ``claims.batch_zero`` for batch 0.
    """
    found = BATCH_WORDS.search(claim_text(text))
    if found is None:
        return None
    # "batch 1,025" groups thousands (it had been read as batch 1).
    batch = 1 if found["single"] else int((found["batch"] or found["concurrent"] or found["users"]).replace(",", ""))
    if batch > (batch_max := settings.get("SPECVIZ_BATCH_MAX")):  # said, as the batch field says it
        # A batch of 23 digits said as 1e+23, not in full.
        raise SpecvizError("claims.batch_too_large", batch=batch if batch < 10 ** 12 else float(batch), batch_max=batch_max)
    if batch < 1:  # "at batch 0" had checked every batch without a word (an attack pass)
        raise SpecvizError("claims.batch_zero")
    return batch
