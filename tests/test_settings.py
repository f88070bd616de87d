"""Tests for specviz.settings: the table, environment overrides, and docs/settings.md made from it."""

from pathlib import Path

import pytest

from specviz import settings
from specviz.cli import docs

ROOT = Path(__file__).resolve().parent.parent


class TestSettingsTable:
    def test_names_are_unique_and_prefixed(self):
        names = [s.name for s in settings.SETTINGS]
        assert len(names) == len(set(names))
        assert all(n.startswith("SPECVIZ_") for n in names)

    def test_every_default_parses(self):
        for s in settings.SETTINGS:
            assert settings.get(s.name) is not None

    def test_docs_settings_md_is_made_from_the_table(self):
        """docs/settings.md is what `make docs` makes of the table today: every setting, its default
        and its help."""
        assert (ROOT / docs.SETTINGS_DOC).read_text(encoding="utf-8") == docs.settings_markdown(), \
            "docs/settings.md is stale: run make docs"


class TestGet:
    def test_environment_overrides_default(self, monkeypatch):
        monkeypatch.setenv("SPECVIZ_PORT", "9000")
        assert settings.get("SPECVIZ_PORT") == 9000

    def test_bad_value_names_the_variable(self, monkeypatch):
        monkeypatch.setenv("SPECVIZ_PORT", "eighty")
        with pytest.raises(ValueError, match="SPECVIZ_PORT"):
            settings.get("SPECVIZ_PORT")

    def test_non_positive_limit_is_refused(self, monkeypatch):
        monkeypatch.setenv("SPECVIZ_GAMMA_MAX", "0")
        with pytest.raises(ValueError, match="positive"):
            settings.get("SPECVIZ_GAMMA_MAX")

    def test_unknown_name(self):
        with pytest.raises(KeyError):
            settings.get("SPECVIZ_NOPE")
