"""The translation layer: every user-facing string of the app comes from here.

Catalogues are JSON files in ``specviz/locales/`` (``en.json`` is the reference and the fallback),
keyed by dotted names such as ``calc.alpha``; values are ``str.format`` templates. Adding a
language means adding one catalogue with the same keys; no page changes.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

__all__ = ["LANGUAGES", "t", "catalogue"]

_LOCALES = Path(__file__).resolve().parent / "locales"
LANGUAGES: dict[str, str] = {"en": "English"}


@cache
def catalogue(lang: str) -> dict[str, str]:
    """The strings of one language, keyed by name."""
    if lang not in LANGUAGES:
        raise KeyError(f"no catalogue for language {lang!r}; available: {', '.join(LANGUAGES)}")
    return json.loads((_LOCALES / f"{lang}.json").read_text(encoding="utf-8"))


def t(key: str, lang: str = "en", **values: object) -> str:
    """The string ``key`` in ``lang`` (English where the language lacks it), formatted with values.

    Raises
    ------
    KeyError
        If the English catalogue has no such key: every key must exist in English.
    """
    text = catalogue(lang).get(key) if lang != "en" else None
    if text is None:
        text = catalogue("en")[key]
    return text.format(**values) if values else text
