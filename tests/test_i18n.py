"""Tests for specviz.i18n: every key the app uses exists, and catalogues agree."""

import json
import re
from pathlib import Path

import pytest

from specviz import i18n

ROOT = Path(__file__).resolve().parent.parent
SOURCES = [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py")), ROOT / "specviz" / "charts.py"]


def used_keys() -> tuple[set[str], set[str]]:
    """Static keys, and the prefixes of f-string keys, passed to t() in the app's sources."""
    static, prefixes = set(), set()
    for path in SOURCES:
        for is_f, key in re.findall(r'\bt\(\s*(f?)"([^"]+)"', path.read_text()):
            if is_f:
                prefixes.add(key.split("{")[0])
            else:
                static.add(key)
    return static, prefixes


class TestCatalogue:
    def test_every_static_key_exists_in_english(self):
        static, _ = used_keys()
        missing = static - i18n.catalogue("en").keys()
        assert not missing

    def test_every_dynamic_prefix_has_entries(self):
        _, prefixes = used_keys()
        for prefix in prefixes:
            assert any(k.startswith(prefix) for k in i18n.catalogue("en")), prefix

    def test_every_language_has_the_same_keys_and_placeholders(self):
        english = i18n.catalogue("en")
        fields = lambda text: set(re.findall(r"\{(\w+)", text))
        for lang in i18n.LANGUAGES:
            other = i18n.catalogue(lang)
            assert other.keys() == english.keys()
            assert all(fields(other[k]) == fields(english[k]) for k in english)

    def test_files_are_valid_json_objects(self):
        for path in (ROOT / "specviz" / "locales").glob("*.json"):
            assert isinstance(json.loads(path.read_text()), dict)


class TestT:
    def test_formats_values(self):
        assert i18n.t("side.ridge", ridge=295.3, dtype="BF16").startswith("Ridge point: 295 FLOP/byte (BF16 peak")

    def test_unknown_key(self):
        with pytest.raises(KeyError):
            i18n.t("no.such.key")

    def test_unknown_language(self):
        with pytest.raises(KeyError, match="xx"):
            i18n.t("calc.title", "xx")


class TestPlural:
    def test_a_count_picks_its_words(self):
        assert i18n.t("exp.report.imported", file="a.csv", format="csv", runs=1, requests=0) == \
            "a.csv: csv, 1 run and 0 per-request rows imported."
        assert i18n.t("exp.report.imported", file="a.csv", format="csv", runs=2, requests=1) == \
            "a.csv: csv, 2 runs and 1 per-request row imported."
        assert i18n.t("exp.no_load", runs=1).startswith("1 run has neither")
        assert i18n.t("exp.no_load", runs=3).endswith("a place for them:")
