"""What a claim's figure is compared with: a drafting method named after a word of comparison
("1.69x over EAGLE-3", :func:`named_methods`), other words ("4x relative to the best prior Blackwell
baseline", "nhanh gấp 1,5 lần vLLM": :func:`over_words`), or nothing, which is plain decoding; and what
a Claims link says of it (``claim_over``, :func:`over_from_link`).

Words only, English and Vietnamese, as :mod:`specviz.advice.claim_words` reads the rest of a sentence
(which imports this module, never the reverse). Every pattern runs over words bounded by the caller,
its reads of a figure's comparison at most :data:`_OVER_MOST_CHARS` characters.
"""

from __future__ import annotations

import re

from specviz.errors import InputError

__all__ = ["named_methods", "first_method", "compared", "over_words", "over_from_link"]

# Drafts as a sentence names them → the scenario's draft kind, the most specific first.
# "EAGLE 3" (and "Eagle 3.1") as often as "EAGLE-3", but not the figure of "EAGLE 3x faster".
_METHOD_WORDS = (("peagle", r"\bp-?eagle"), ("eagle3", r"\beagle(?:-?3|\s3(?![\d,]*(?:\.\d+)?\s*(?:[x×%]|times\b|lần\b)))"), ("mtp", r"\bmtp\b|multi-token prediction"),
                 ("block", r"\bdflash\b|\bdspark\b|block diffusion"), ("medusa", r"\bmedusa\b"),
                 ("suffix", r"suffix decoding"), ("ngram", r"\bn-?gram\b|prompt lookup"), ("eagle", r"\beagle\b"))
# The words of a comparison: "over", "than", "vs", "compared to", "relative to", "so với".
_COMPARISON = r"(?:\bover|\bthan|\bvs\.?|\bversus|\bcompared\s+(?:to|with)|\brelative\s+to|\bagainst|so\s+với)"
# Vietnamese "gấp 1,5 lần X", "gấp đôi X" ("1.5 times X", "twice X"): X is what the figure is over,
# without a word of comparison.
_TIMES_OF = r"\bgấp\s+(?:[\d.,]+\s*(?:lần|x|×)|\w+(?:\s+lần)?)"
# Words that make the method after them the figure's baseline, not its method: "1.69x over EAGLE-3",
# "outperforms EAGLE-3 by 1.69x", "nhanh hơn EAGLE-3" (Vietnamese "hơn", than), "nhanh gấp 1,7 lần EAGLE-3".
_COMPARED_WITH = re.compile(rf"(?:{_COMPARISON}|\boutperform(?:s|ed)?|\bbeats?|\bhơn|{_TIMES_OF})"
                            r"\s+(?:(?:the|a|an|standard|vanilla|plain)\s+)*$", re.IGNORECASE)
# A comparison's words after it ("relative to the best prior Blackwell baseline", "than vLLM", "vs H100"):
# what a figure is over, where the sentence says. Not a number ("over 1,000 tokens/s", "more than 2x").
# A point between digits is a version's ("vLLM 0.9"), not a sentence's end; Vietnamese "hơn" (than) says
# it without "so với" ("nhanh hơn vLLM 1,5 lần"). At most this many words
# (over_words keeps them) and characters (_OVER_WHAT reads them), as a link's claim_over.
_OVER_MOST_WORDS, _OVER_MOST_CHARS = 8, 80
_OVER_WHAT = re.compile(rf"(?:{_COMPARISON}|\bhơn)\s+(?P<what>(?![\d.,]+)(?:[^,;:.()\n]|(?<=\d)\.(?=\d)){{1,{_OVER_MOST_CHARS}}})",
                        re.IGNORECASE)
# What a "gấp N lần" figure is over, right after it ("nhanh gấp 1,5 lần vLLM trên H100"): a name, its first
# word holding a capital or a digit ("vLLM", "H100"), not a word of the sentence ("gấp 2 lần nhờ EAGLE-3",
# "gấp 2 lần trên H100"). The figure is read as "1,5 lần", after "gấp" (_TIMES_BEFORE).
_TIMES_WHAT = re.compile(rf"\s+(?P<what>(?=[^\s,;:.()]*[A-Z0-9])(?:[^,;:.()\n]|(?<=\d)\.(?=\d)){{1,{_OVER_MOST_CHARS}}})")
_TIMES_BEFORE = re.compile(r"\bgấp\s+$", re.IGNORECASE)
# Where what a figure is over ends: "than H100 with speculative decoding on 8 GPUs" is over "H100".
_WHAT_ENDS = re.compile(r"\s(?:with|on|using|for|at|in|across|when|while|by|trên|với|khi)\s", re.IGNORECASE)
# Words between "hơn" and its figure that say how far, not over what: "nhanh hơn tới 3 lần" is "up to 3x
# faster" (a Vietnamese reader's pass: read as 3x over "tới").
_UP_TO = re.compile(r"(?:lên\s+)?(?:tới|đến|gần|khoảng|cỡ|chừng|tận|những|hẳn)", re.IGNORECASE)
# What says plain decoding: the figure over it is the speedup the check is about.
_PLAIN_DECODING = re.compile(r"auto-?regressive|(?:vanilla|standard|plain|regular|normal|naive|greedy|baseline|ordinary)"
                             r"\s+(?:decoding|generation|inference|sampling)|without\s+(?:speculat|draft)|no\s+speculat"
                             r"|non-?speculative|decode\s+thường|tự\s+hồi\s+quy|không\s+(?:dùng\s+)?speculative",
                             re.IGNORECASE)


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


def first_method(words: object) -> str | None:
    """The drafting kind ``words`` name first ("EAGLE-3 (3 steps, …)", a run's "EAGLE3": eagle3), or None
    where they name none (or are no text): a published row's method, a run's ``spec_method``."""
    named = named_methods(words) if isinstance(words, str) else []
    return named[0][0] if named else None


def compared(before: str) -> bool:
    """Whether the words ``before`` a name make it what a figure is compared with ("than", "over",
    "vs": :data:`_COMPARED_WITH`)."""
    return _COMPARED_WITH.search(before[-40:].rstrip() + " ") is not None


def over_words(words: str, figure: tuple[int, int], figures: list[tuple[int, int]]) -> str | None:
    """The words of what a sentence compares its ``figure`` (a span of ``words``) with, up to a word
    such as "with" or "on", where that is not plain decoding (a drafting method is read by
    :func:`named_methods`, and this is not asked then): the first
    comparison after it and before the next figure ("4x speed-up relative to the best prior Blackwell
    baseline" gives "the best prior Blackwell baseline"), else the last one before it since the
    figure before ("Compared to vLLM, SGLang is 3x faster" gives "vLLM"), the name right after a Vietnamese
    "gấp 1,5 lần" between them ("nhanh gấp 1,5 lần vLLM"); None where the sentence
    compares the figure with nothing, or with plain decoding or a method."""
    after = min((start for start, _ in figures if start >= figure[1]), default=len(words))
    before = max((end for _, end in figures if end <= figure[0]), default=0)
    found = next(_OVER_WHAT.finditer(words, figure[1], after), None) or (
        _TIMES_WHAT.match(words, figure[1], after) if _TIMES_BEFORE.search(words, before, figure[0]) else None) or next(
        reversed(list(_OVER_WHAT.finditer(words, before, figure[0]))), None)
    if found is None:
        return None
    # Characters that do not print (a soft hyphen in text copied from a web page) are left out: a link
    # carries these words, and the page that opens it refuses them (an attack pass).
    what = found["what"]
    if len(what) == _OVER_MOST_CHARS and found.end() < len(words) and not words[found.end()].isspace() \
            and len(what.split()) > 1:
        # Cut by _OVER_WHAT's length within a word: the word left out whole ("v0.10.2" had been "v0.1",
        # and "v1." a claim_over its link refused: an attack pass).
        what = what.rsplit(None, 1)[0]
    shown = "".join(character for character in what if character.isprintable() or character.isspace())
    what = " ".join(_WHAT_ENDS.split(shown, 1)[0].split()[:_OVER_MOST_WORDS])
    what = re.sub(rf"(?:^|\s+){_UP_TO.pattern}$", "", what, flags=re.IGNORECASE)  # "hơn vLLM tới 2 lần": vLLM
    return None if not what or _PLAIN_DECODING.search(what) else what


# What a link may say a figure is over (``claim_over``): as a sentence's reading says it, none of the
# characters _OVER_WHAT stops at (a parameter given twice is joined with a comma, as the page shows it).
_OVER_STOPS = re.compile(r"[,;:()]|(?<!\d)\.|\.(?!\d)")


def over_from_link(text: str) -> tuple[str | None, str | None]:
    """What a Claims page link says the claim's figure is over (its ``claim_over``, written from a
    sentence's reading), so that the page opened from it, and ``specviz claim LINK``, say it as the
    page did: ``(method, None)`` for a drafting method's kind (``eagle3``: the reading's ``baseline``),
    ``(None, words)`` for other words on one line (``vLLM``: its :func:`over_words`), and
    ``(None, None)`` for none or words that say plain decoding.

    Raises
    ------
    InputError
        ``claims.over_unreadable`` for text no sentence's reading gives: more than eight words or
        eighty characters, a character that is not printable (a line break or a tab too: the words
        are on one line) or one of ``,;:()``, or a point but between digits (``vLLM 0.9``).
    """
    what = " ".join(text.split())
    if (len(what.split()) > _OVER_MOST_WORDS or len(what) > _OVER_MOST_CHARS
            or not all(c.isprintable() for c in text) or _OVER_STOPS.search(text)):
        raise InputError("claims.over_unreadable", words=_OVER_MOST_WORDS, chars=_OVER_MOST_CHARS)
    if not what:
        return None, None
    if what in {kind for kind, _ in _METHOD_WORDS}:
        return what, None
    return None, None if _PLAIN_DECODING.search(what) else what
