"""The translation layer: every user-facing string of the app comes from here.

Catalogues are JSON files in ``specviz/locales/`` (``en.json`` is the reference and the fallback),
keyed by dotted names such as ``calc.alpha``; values are ``str.format`` templates. Adding a
language means adding one catalogue with the same keys; no page changes.

A count's words follow it with the format spec ``plural``: ``{runs} {runs:plural run|runs}`` gives
"1 run" and "2 runs" (one form for 1, the other for every other count). A language without plural
forms writes the word once and needs no spec.

A value may itself be a message: an object with a ``key`` and ``params`` (a
:class:`specviz.errors.Notice`) is rendered in the same language, its own values likewise, before it
takes its place. Where code describes a value in words (``Notice("hf_config.kind.object")`` for "an
object"), it passes such a message, never English text, so a Vietnamese sentence gets Vietnamese words.

Text from the shipped presets (a GPU's name and note, a workload's) lives in its CSV row: English in
the column, each other language in a column ``<field>_<lang>`` beside it, empty where the text
reads the same. Loaders keep it as a :class:`PresetText`, a string that knows its translations, so
a message given one as a value shows it in the reader's language.
"""

from __future__ import annotations

import json
import re
import string
from functools import cache
from pathlib import Path
from collections.abc import Mapping
from typing import Any

__all__ = ["LANGUAGES", "t", "md", "message", "escape_markdown", "catalogue", "PresetText", "in_language",
           "whole_characters"]

# Every ASCII punctuation character may be backslash-escaped in CommonMark, which makes it literal:
# no link, image, emphasis, heading, table, HTML, math or colour directive can form.
_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")
# A word Streamlit would make a link of (a URL, an e-mail address, www.…), after its opening
# brackets and before its sentence's closing punctuation.
_LINKABLE = re.compile(r"(?<!\S)([(\[{'\"]*)(\S*?(?::(?=//)|@|(?i:www)\.)\S*?)(?=[.,;:!?)\]}'\"]*(?:\s|$))")
# Characters that change how text reads without showing: controls (line breaks and tabs aside), the
# bidirectional marks, embeddings, overrides and isolates, zero-width spaces and joiners, the soft
# hyphen, the byte-order mark, interlinear annotations and tags.
INVISIBLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e"
                        "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000e0000-\U000e007f]")

class _Formatter(string.Formatter):
    """``str.format`` with one more spec: ``plural one|other`` picks a word by the count."""

    def format_field(self, value: Any, format_spec: str) -> str:
        if format_spec.startswith("plural "):
            one, _, other = format_spec.removeprefix("plural ").partition("|")
            return one if value == 1 else other
        return super().format_field(value, format_spec)


_FORMATTER = _Formatter()
_LOCALES = Path(__file__).resolve().parent / "locales"
LANGUAGES: dict[str, str] = {"en": "English", "vi": "Tiếng Việt"}


@cache
def catalogue(lang: str) -> dict[str, str]:
    """The strings of one language, keyed by name."""
    if lang not in LANGUAGES:
        raise KeyError(f"no catalogue for language {lang!r}; available: {', '.join(LANGUAGES)}")
    return json.loads((_LOCALES / f"{lang}.json").read_text(encoding="utf-8"))


class PresetText(str):
    """A preset's text: the English string itself, with its translations by language.

    A ``str`` everywhere (comparisons, JSON, the command line's output); :func:`t` renders it in the
    message's language, and :func:`in_language` does so where no message is involved.
    """

    translations: dict[str, str]

    def __new__(cls, english: str, translations: Mapping[str, str] | None = None) -> PresetText:
        text = super().__new__(cls, english)
        text.translations = dict(translations or {})
        return text

    def __reduce__(self) -> tuple[type, tuple[str, dict[str, str]]]:
        return PresetText, (str(self), self.translations)

    @classmethod
    def from_row(cls, row: Mapping[str, str], field: str) -> PresetText:
        """``row[field]`` with the translations of the columns ``<field>_<lang>`` that are filled."""
        return cls(row[field], {lang: row[f"{field}_{lang}"] for lang in LANGUAGES
                                if lang != "en" and (row.get(f"{field}_{lang}") or "").strip()})


def in_language(text: str, lang: str) -> str:
    """``text`` in ``lang``: a :class:`PresetText`'s translation where it has one, else the text."""
    return text.translations.get(lang, str(text)) if isinstance(text, PresetText) else text


def _is_message(value: object) -> bool:
    """Whether a value is a message to render in the reader's language (a Notice or a SpecvizError)."""
    return hasattr(value, "key") and hasattr(value, "params")


def t(key: str, lang: str = "en", **values: object) -> str:
    """The string ``key`` in ``lang`` (English where the language lacks it), formatted with values.

    A value that is a message (a :class:`specviz.errors.Notice`) is first rendered by :func:`t` in
    ``lang``, with its own values.

    Raises
    ------
    KeyError
        If the English catalogue has no such key: every key must exist in English.
    """
    text = catalogue(lang).get(key) if lang != "en" else None
    if text is None:
        text = catalogue("en")[key]
    if not values:
        return text
    rendered = {k: t(v.key, lang, **v.params) if _is_message(v) else in_language(v, lang) if isinstance(v, str) else v
                for k, v in values.items()}
    return _FORMATTER.format(text, **rendered)


# Half a character: JSON may write one ("\ud800") and json.loads keeps it, but it is not Unicode and
# can be neither stored nor shown (json.loads joins the two halves of a whole character into one).
_HALF_CHARACTER = re.compile("[\ud800-\udfff]")


def whole_characters(text: str) -> str:
    """``text`` with each half character (a lone surrogate, which a JSON ``\\ud800`` escape makes)
    replaced by U+FFFD, the replacement character: what an import, a stored value and a page keep."""
    return _HALF_CHARACTER.sub("\ufffd", text)


def visible(text: str) -> str:
    """``text`` with its invisible characters shown as escapes (``\\u202e``): bidirectional
    controls, zero-width characters, the byte-order mark and other format and control characters,
    line breaks and tabs aside.

    A file named ``bidi_\\u202eslx.csv`` reads as "bidi_vsc.xls" where the override is obeyed; shown
    so, it reads as what it is. For every name, label and value that came from a file, a URL or a
    user, wherever it is shown (:func:`escape_markdown` applies it; tables through the pages).
    """
    return INVISIBLE.sub(lambda found: ascii(found.group())[1:-1], text)


def escape_markdown(text: str) -> str:
    """``text`` as literal Markdown: invisible characters shown (:func:`visible`) and every ASCII
    punctuation character backslash-escaped.

    For text that came from a file, a URL or a user (names, labels, values, error details) on its
    way to any Streamlit element that renders Markdown, widget labels included.
    """
    # Streamlit links a bare URL or e-mail address even with its punctuation escaped (or written as
    # character references); in a code span it is literal, and copies as it is (an invisible word
    # joiner after the scheme's colon had kept it plain text, and broke every copy of it).
    # A line break ends the line it is shown in, inside a heading or a bold name too: shown as its
    # escape, as the other control characters are (an attack pass: a model's name split the Live
    # page's heading in two).
    text = visible(text).replace("\r", "\\r").replace("\n", "\\n")
    shown, last = [], 0
    for word in _LINKABLE.finditer(text):
        shown += [_PUNCTUATION.sub(r"\\\1", text[last:word.start(2)]), _code_span(word.group(2))]
        last = word.end()
    escaped = "".join(shown) + _PUNCTUATION.sub(r"\\\1", text[last:])
    # A blank at either end as a character reference, which renders as itself: "**name **" is no bold
    # in Markdown and showed its asterisks (an attack pass).
    core = escaped.strip()
    if not core or core == escaped:
        return escaped
    start = escaped.index(core)
    blanks = lambda run: "".join(f"&#{ord(c)};" for c in run)
    return blanks(escaped[:start]) + core + blanks(escaped[start + len(core):])


def _code_span(text: str) -> str:
    """``text`` as a Markdown code span: fenced by one backtick more than its longest run of them, and
    spaced from a backtick at either end (CommonMark 6.1)."""
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def md(key: str, lang: str = "en", **values: object) -> str:
    """:func:`t` for an element that renders Markdown: text values are escaped, numbers are not
    (their format specs still apply), a preset's text in ``lang``; a value that is a message is
    rendered by :func:`md` in ``lang`` (its catalogue text as it is, its own text values escaped)."""
    safe = {k: md(v.key, lang, **v.params) if _is_message(v) else v if isinstance(v, (int, float))
            else escape_markdown(in_language(v, lang) if isinstance(v, str) else str(v)) for k, v in values.items()}
    return t(key, lang, **safe)


def message(error: Any, lang: str = "en") -> str:
    """A :class:`specviz.errors.SpecvizError` (or Notice) as Markdown-safe text in ``lang``; any other
    exception as its own text, escaped (no key: English, as it was raised)."""
    if not hasattr(error, "key"):
        return escape_markdown(str(error))
    return md(error.key, lang, **error.params)
