"""Which of a sentence's figures is its claim: a speedup beside a word of speed before any other, then
any other figure, then a slowdown said around its figure ("35% slower", "throughput dropped 35%",
"TPOT increased by 35%"); not a count of GPUs ("on 8x H100"), a model's name ("Mixtral 8x"), another
ratio ("5x cheaper", "0.1x the size"), a reduction ("19.4% reduction in cost") or a fall or rise of
something other than decode speed. The rest of the sentence is :mod:`specviz.advice.claim_sentence`'s.

Words only, English and Vietnamese; every pattern runs over the words with each blank run one space and
the text bounded (:func:`specviz.advice.claim_words.claim_text`), so that every match takes time linear
in the text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from specviz.errors import SpecvizError
from specviz.names import gpu_preset

from .claim_words import MAGNITUDE, SIGN, cut_at_word, parse_claim

__all__ = ["FIGURE_IN_SENTENCE", "SPEED_WORDS", "claimed_figure"]

# A speedup inside a sentence: a number and its unit, not the "8x" of "Mixtral-8x7B"; a whole number
# (not the "9x" of "1e9x" or of "1e999x", nor the "320x" of "1e-320x"), with its minus sign but not a
# name's hyphen ("EAGLE-3x").
FIGURE_IN_SENTENCE = re.compile(rf"(?:up\s+to\s+|lên\s+đến\s+)?(?<![\w.+\-−])"
                                  # A range ("1.5x–2x faster") is read whole: it claims its upper end.
                                  rf"(?:{MAGNITUDE}\s*[x×%]?\s*(?:-|–|—|to|đến)\s*)?{SIGN}?{MAGNITUDE}"
                                  r"\s*(?:[x×](?![\w.])|times\b|lần\b|%)", re.IGNORECASE)
# Words after a figure that make it something else than a speedup: a count of devices ("8x H100s",
# "8x GPUs") or another ratio ("5x cheaper", "3x less memory"); and words that make it one.
# A speed of training ("9.9x faster EAGLE-3 training", "3x faster to train") is not one of decoding.
# A slowdown ("2x slower", "3x higher latency", "2x lower throughput", "chậm hơn"), or a ratio of something
# else said with "the" ("twice the cost", "2x the memory") or in Vietnamese ("rẻ hơn", "giảm") is none either.
_NOT_SPEED = re.compile(r"\s*(?:gpus?\b|nodes?\b|cards?\b|cheaper|less\b|fewer|smaller|more\s+(?:memory|users|cost)"
                        r"|slower\b|as\s+slow\b|longer\b|more\s+(?:latency|time|expensive)|higher\s+(?:latency|cost|tpot|ttft|itl|memory|price)"
                        r"|lower\s+(?:throughput|tps|speed)|the\s+(?:cost|latency|memory|price|time|batch|gpus?)\b"
                        r"|chậm|rẻ\s+hơn|giảm|tốn"
                        r"|(?:faster|speed-?up\s+(?:in|of|for))\s+(?:[\w.\-]+\s+)?(?:training|train)\b)", re.IGNORECASE)
# A percentage of a reduction ("19.4% reduction in cost", "50% lower latency") is not a percentage faster:
# read as one it would be a speedup of 1.194× or 1.5× (half the latency is 2×). Left unread.
_REDUCTION = re.compile(r"\s*(?:reduction|decrease|drop|cut|savings?|lower|giảm)\b", re.IGNORECASE)
# The same said before the figure: "reduces cost by 19.4%", "cuts latency by 50%", and Vietnamese, whose
# verb comes first, "giảm 19,4% chi phí" or "giảm chi phí 19,4%".
# Anything that fell or rose by a percentage ("latency fell 50%", "performance dropped 2%", "p99 latency
# rose 20%") is no percentage faster either: a fall or rise of speed or time per token is read as a
# slowdown where it is one (_loss), the others are left unread (a regression pass: 1.02×, 1.2×). Up to
# four words of what was cut, not across a clause ("cut time per output token by 40%" had been read as
# a gain of 1.40x: a manager's pass; "cuts costs and is 50% faster" is a gain).
_REDUCED_BY = re.compile(r"(?:\breduc\w*|\bcut\w*|\blower\w*|\bdecreas\w*|giảm"
                         r"|\b(?:dropped|drops|fell|falls|declined|went\s+down|goes\s+down))(?:\s+(?!(?:and|but|while|whereas|is|are|was|were|so|yet)\b)[^\s,;:.]+){0,4}?(?:\s+by)?\s*$",
                         re.IGNORECASE)
_ROSE = r"(?:rose|rises|increased|increases|grew|grows|went\s+up|goes\s+up|improved|improves)"
_ROSE_BY = re.compile(rf"\b{_ROSE}(?:\s+by)?\s*$", re.IGNORECASE)
# Said before a figure of any unit, a reduction, a slowdown or a ratio of cost: "reduces cost by 3x",
# "giảm 3 lần chi phí", "slower by 2x", "chậm hơn 2 lần", "rẻ hơn 3 lần", "chậm gấp 2 lần" (not "30% lower cost
# and 2x faster").
_RATIO_BEFORE = re.compile(r"(?:\b(?:reduc|cut|lower|decreas)\w*(?:\s+[^\s,;:.]+){0,2}?\s+by|giảm(?:\s+[^\s,;:.]+){0,2}?"
                           r"|\bslower(?:\s+by)?|\bcheaper(?:\s+by)?|chậm(?:\s+hơn)?|rẻ\s+hơn|độ\s+trễ\s+tăng(?:\s+thêm)?"
                           r"|\blatency\s+(?:rises|grows|increases|goes\s+up)(?:\s+by)?)(?:\s+gấp)?\s*$", re.IGNORECASE)
# A slowdown of speed said after or before its figure ("35% slower", "2x lower throughput", "3x higher
# latency", "chậm hơn 2 lần"): read as one where the sentence has no figure of speed.
_SLOWER_AFTER = re.compile(r"\s*(?:slower\b|as\s+slow\b|slow-?downs?\b|(?:lower|less|worse)\s+(?:throughput|speed|tps)\b"
                           r"|chậm\s+hơn)", re.IGNORECASE)
_SLOWER_BEFORE = re.compile(r"chậm(?:\s+(?:hơn|đi))?(?:\s+gấp)?\s*$", re.IGNORECASE)
# A fall of speed said around its figure: "throughput dropped 35%", "tokens/s went down 30%", "slowed
# down by 20%", "lost 30% throughput", "a 30% throughput loss", "30% drop in throughput" (each had been
# read as a gain of its percentage: a manager's pass). Read as that much slower (1 − p). The noun is the
# one that fell: at most two words before its verb, none of them a gain ("throughput gain dropped") or
# another figure ("throughput stays flat while TPOT dropped"); not a speed-up, an accuracy ("performance")
# or a training's speed (a regression pass).
_SPEED = (r"(?:throughput|tps|tok(?:en)?s?\s*/\s*s(?:ec)?|tok(?:en)?s?\s+per\s+second|speed(?!-?up)|thông\s+lượng"
          r"|tốc\s+độ)")
_FELL = (r"(?:dropped|drops|fell|falls|declined|declines|decreased|decreases|reduced|shrank|went\s+down|goes\s+down"
         r"|was\s+down|giảm(?:\s+đi)?)")
_GAP = (r"(?:\s+(?!(?:gain|improvement|advantage|speed-?up|while|and|but|whereas|tpot|ttft|itl|latency|time|cost"
        r"|memory|accuracy)\b)[^\s,;:.]+){0,2}?\s+")
# The verb before its noun too: "reduced tokens per second by 30%", "cut throughput by 30%", "slowed
# generation by 35%", "giảm thông lượng 40%" (each had been read as a gain of its percentage: a manager's pass).
_SPEED_FELL_BEFORE = re.compile(rf"(?:\b{_SPEED}\b{_GAP}{_FELL}(?:\s+by)?|\bslow(?:ed|s)\s+down(?:\s+by)?"
                                rf"|\bslow(?:ed|s)(?:\s+(?!by\b)[^\s,;:.]+){{1,2}}?(?:\s+down)?\s+by"
                                rf"|\b(?:reduc|cut|lower|decreas|hurt)\w*\s+(?:(?:the|our|its|their|output|decode|decoding"
                                rf"|generation)\s+){{0,2}}{_SPEED}\s+by|\bgiảm(?:\s+đi)?\s+{_SPEED}"
                                r"|\b(?:lost|loses|losing)(?:\s+(?:about|around|some|over|nearly))?)\s*$", re.IGNORECASE)
_SPEED_FELL_AFTER = re.compile(rf"\s*(?:{_SPEED}\s+(?:loss|drop|decline)\b|(?:loss|drop|decline)\s+(?:in|of)\s+{_SPEED}\b)",
                               re.IGNORECASE)
# A rise of speed by a percentage is a gain of it ("throughput increased by 80%": 1.8×); a rise of
# anything else is none (_ROSE_BY).
_SPEED_ROSE_BEFORE = re.compile(rf"\b{_SPEED}\b{_GAP}{_ROSE}(?:\s+by)?\s*$", re.IGNORECASE)
# A rise of the time per token: "latency increased by 35%", "TPOT rose 35%" (1 / (1 + p)); "35% higher
# latency" is the claim's own words (claim_words).
_TIME = r"(?:latency|tpot|itl|time\s+per\s+(?:output\s+)?token|decode\s+time)"
_TIME_ROSE_BEFORE = re.compile(rf"(?:\b{_TIME}\b{_GAP}(?:increased|increases|rose|rises|grew|grows|went\s+up"
                               r"|goes\s+up|was\s+up)(?:\s+by)?|độ\s+trễ\s+tăng(?:\s+thêm)?(?:\s+gấp)?)\s*$", re.IGNORECASE)
_TIME_LONGER_AFTER = re.compile(rf"\s*(?:higher|more|longer)\s+{_TIME}\b", re.IGNORECASE)
# The noun before its figure and the direction after it: "inter-token latency 30% higher", "TPOT was 35%
# longer", "throughput 30% lower" (a manager's pass: read as gains of 1.3×).
_NAMED_BEFORE = r"(?:\s+(?:is|was|were|got|went|came\s+out|became|ended\s+up))?\s*$"
_TIME_BEFORE = re.compile(rf"\b{_TIME}\b{_NAMED_BEFORE}", re.IGNORECASE)
_SPEED_BEFORE = re.compile(rf"\b{_SPEED}\b{_NAMED_BEFORE}", re.IGNORECASE)
_HIGHER_AFTER = re.compile(r"\s*(?:higher|longer|more|up|worse)\b", re.IGNORECASE)
_LOWER_AFTER = re.compile(r"\s*(?:lower|less|down|worse)\b", re.IGNORECASE)


# Not a decode step's speed: a training's, a first token's or a tail's (a regression pass: "TTFT latency
# increased by 15%", "p99 latency rose 20% due to queueing", "training speed dropped 20%").
_NOT_DECODE = re.compile(r"\b(?:train\w*|ttft|time\s+to\s+first|p9\d|tail|prefill|queu\w*)\b", re.IGNORECASE)
# The plain side (or a rival) named as the slower one: "without speculative decoding, generation is 2x
# slower", "plain decoding is 2.5x slower than EAGLE-3", "35% slower than our speculative engine" (a
# regression pass: each had read as a slowdown of speculation, which they say is a gain).
_PLAIN_SIDE = re.compile(r"\b(?:without\s+spec\w*|plain|vanilla|baseline|non-?spec\w*|autoregressive|standard\s+decoding"
                         r"|competitor\w*|rival\w*)\b|thông\s+thường", re.IGNORECASE)
_THAN_SPECULATION = re.compile(r"[^,;:.]{0,24}?\b(?:than|so\s+với)\s+(?:with\s+)?(?:our|the|a|its)?\s*"
                               r"(?:spec\w*|eagle\w*|p-eagle|mtp|medusa|draft\w*|n-?gram|lookahead|ours)\b", re.IGNORECASE)


# What _loss says of a slowdown of the plain side (or another's): no loss of speculation's.
_OTHER_SIDE = "other side"


def _loss(words: str, figure: re.Match) -> str | None:
    """What a sentence's figure says was lost, as the words :func:`specviz.advice.claim_words.parse_claim`
    reads it with (:func:`_time_or_speed_lost`),
    :data:`_OTHER_SIDE` where the slower side is the plain one or another's, not speculation, and None
    where none is said, or where what was lost is not a decode step's speed."""
    before, after = words[max(0, figure.start() - 48):figure.start()], words[figure.end():]
    if _NOT_DECODE.search(before):
        return None
    lost = _time_or_speed_lost(before, after)
    if lost is not None and (_PLAIN_SIDE.search(before) or _THAN_SPECULATION.match(after)):
        return _OTHER_SIDE
    return lost


def _below_one(figure: re.Match) -> bool:
    """Whether a sentence's figure is a multiple below 1 ("0.8x"; a percentage is never one)."""
    text = figure.group(0).strip()
    number = re.findall(r"\d+(?:[.,]\d+)?(?:e[-+]?\d)?", text, re.IGNORECASE)
    return not text.endswith("%") and bool(number) and float(number[-1].replace(",", ".")) < 1.0


# A loss read with the words that name what was lost: a time per token or a throughput said, no other
# reading to ask about (claim_words.percent_of); "35% slower" or "slowed generation by 35%" say neither.
_TIME_LOST, _SPEED_LOST, _EITHER_LOST = " higher latency", " lower throughput", " slower"
_SPEED_NEAR = re.compile(rf"\b{_SPEED}\b", re.IGNORECASE)


def _time_or_speed_lost(before: str, after: str) -> str | None:
    """The words a figure is read with where those around it say the time per token rose by it
    (:data:`_TIME_LOST`) or the speed fell by it (:data:`_SPEED_LOST` where they name the speed,
    :data:`_EITHER_LOST` where they do not), None otherwise (:func:`_loss`)."""
    if (_TIME_ROSE_BEFORE.search(before) or _TIME_LONGER_AFTER.match(after)
            or _TIME_BEFORE.search(before) and _HIGHER_AFTER.match(after)):
        return _TIME_LOST
    if _SPEED_BEFORE.search(before) and _LOWER_AFTER.match(after):
        return _SPEED_LOST
    lost = re.search(r"\b(?:lost|loses|losing)(?:\s+(?:about|around|some|over|nearly))?\s*$", before, re.IGNORECASE)
    if (_SPEED_FELL_BEFORE.search(before) and (not lost or re.match(rf"\s*(?:of\s+)?(?:its\s+|the\s+)?{_SPEED}\b",
                                                                   after, re.IGNORECASE))
            or _SPEED_FELL_AFTER.match(after) or _SLOWER_AFTER.match(after) or _SLOWER_BEFORE.search(before[-12:])):
        named = _SPEED_NEAR.search(before[-40:]) or _SPEED_NEAR.match(after.lstrip()[:40]) or \
            re.match(rf"\s*(?:\S+\s+){{0,2}}?{_SPEED}\b", after, re.IGNORECASE)
        return _SPEED_LOST if named else _EITHER_LOST
    return None
# A word of gain right after a figure, or before it in Vietnamese: below 1 ("0.5x faster", "nhanh hơn
# 0,5 lần") it is refused, not read as a slowdown.
_SAID_FASTER = re.compile(r"\s*(?:faster|quicker|as\s+fast)\b", re.IGNORECASE)
_FASTER_BEFORE = re.compile(r"(?:nhanh(?:\s+hơn)?|tăng\s+tốc)(?:\s+(?:gấp|tới|đến))?\s*$", re.IGNORECASE)
# What may follow a figure below 1 that stands alone as a speed ratio: a word of speed, or nothing of its
# own (a batch, a GPU, the sentence's end: "EAGLE-3 is 0.8x at batch 256"); "0.1x the size", "0.05x of a
# target pass", "0.3x extra memory" are other ratios (a regression pass).
_RATIO_ALONE = re.compile(r"\s*(?:$|(?:at|on|with|for|in|when|under|using|trên|với|ở)\b|[,;)])", re.IGNORECASE)
_NEXT_WORD = re.compile(r"\s*(\S*)")
# Where the words that say what a figure measures end: at the next figure or clause ("2x the cost, 1.5x
# faster": "faster" is the second figure's).
_CLAUSE_END = re.compile(r"[,;:]|\.(?!\d)")
SPEED_WORDS = re.compile(r"faster|speed-?up|accelerat|throughput|tps\b|tokens?/s|lower\s+(?:latency|tpot|itl)|nhanh"
                          r"|tăng\s+tốc", re.IGNORECASE)


def claimed_figure(words: str, unbatched: str, written: list[re.Match], named_like: list[re.Match],
                   gpus: Mapping[str, object]) -> tuple[re.Match, str, float]:
    """The figure of ``written`` (the figures :data:`FIGURE_IN_SENTENCE` finds in ``unbatched``, the
    sentence's ``words`` with their batch taken out; ``named_like``, those that begin a model's name)
    that is the sentence's claim, the words it is read with and its speed ratio (see the module's
    docstring). ``gpus`` are the GPU presets: a figure before one's name counts GPUs.

    Raises
    ------
    SpecvizError
        ``claims.slower_other`` where the only slowdown is the plain side's; ``claims.no_speed_figure``
        where no figure is one of speed; ``claims.unreadable`` where there is none; as
        :func:`specviz.advice.claim_words.parse_claim` for the figure; ``claims.below_one_faster`` for
        a figure below 1 said to be faster.
    """
    figures = [f for f in written
               if not _NOT_SPEED.match(unbatched, f.end())
               and not _RATIO_BEFORE.search(unbatched[max(0, f.start() - 40):f.start()])
               and not (f.group(0).endswith("%") and (_REDUCTION.match(unbatched, f.end())
                                                      or _REDUCED_BY.search(unbatched[max(0, f.start() - 40):f.start()])
                                                      or _ROSE_BY.search(unbatched[max(0, f.start() - 40):f.start()])
                                                      and not _SPEED_ROSE_BEFORE.search(unbatched[max(0, f.start() - 48):f.start()])))
               and not gpu_preset(_NEXT_WORD.match(unbatched, f.end())[1], gpus)]
    starts = [f.start() for f in written]

    def own_words(f: re.Match) -> str:
        """The words after a figure that say what it measures: up to 24 characters, the next figure or
        the clause's end."""
        end = min(f.end() + 24, next((start for start in starts if start >= f.end()), len(unbatched)))
        cut = _CLAUSE_END.search(unbatched, f.end(), end)
        return unbatched[f.end():cut.start() if cut else end]
    losses = {f.start(): lost for f in written if f not in named_like and (lost := _loss(unbatched, f))}
    # A figure below 1 is a speed ratio where a word of speed, or nothing of its own, follows it.
    figures = [f for f in figures if f.start() not in losses
               and (not _below_one(f) or SPEED_WORDS.search(own_words(f)) or _RATIO_ALONE.match(unbatched, f.end()))]
    near = [f for f in figures if SPEED_WORDS.search(own_words(f))]
    slowdowns = [f for f in written if f.start() in losses and losses[f.start()] != _OTHER_SIDE]
    # A gain before a ratio below 1: "0.9x at batch 256 and 1.5x at batch 64" is a claim of 1.5×.
    gains = [f for f in near or figures if not _below_one(f)]
    figure = (gains or near or figures or slowdowns or [None])[0]
    if figure is None and (other := next((f for f in written if losses.get(f.start()) == _OTHER_SIDE), None)):
        # The plain side named as the slower one, and no other figure: the gain it is, said as one.
        raise SpecvizError("claims.slower_other", figure=other.group(0).strip())
    if figure is None and written:
        raise SpecvizError("claims.no_speed_figure", figures=", ".join(f.group(0).strip() for f in written[:3]))
    if figure is None:
        raise SpecvizError("claims.unreadable", text=cut_at_word(words))
    # A slowdown's figure is read with the word that makes it one ("35%" of "35% slower": 0.65×).
    figure_words = figure.group(0) + losses.get(figure.start(), "")
    speedup = parse_claim(figure_words)
    if speedup < 1.0 and (_SAID_FASTER.match(own_words(figure))
                          or _FASTER_BEFORE.search(unbatched[max(0, figure.start() - 24):figure.start()])):
        # "0.5x faster" in a sentence, as in the claim's field: neither reading is guessed.
        raise SpecvizError("claims.below_one_faster", figure=f"{speedup:g}", gain=1.0 + speedup)
    return figure, figure_words, speedup
