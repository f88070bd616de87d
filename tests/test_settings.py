"""Tests for specviz.settings: the table, environment overrides, and docs/settings.md made from it."""

import os
import subprocess
import sys
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

    def test_a_variable_that_names_no_setting_is_said_with_the_one_it_resembles(self, monkeypatch):
        """A CLI pass: SPECVIZ_DB_PATH (for SPECVIZ_DB) had left the default store in use without a word."""
        monkeypatch.setenv("SPECVIZ_DB_PATH", "/tmp/x.duckdb")
        monkeypatch.setenv("SPECVIZ_COLOUR", "blue")
        said = {(n.key, tuple(sorted(n.params.items()))) for n in settings.unknown_names()}
        assert said == {("settings.unknown_near", (("name", "SPECVIZ_DB_PATH"), ("near", "SPECVIZ_DB"))),
                        ("settings.unknown", (("name", "SPECVIZ_COLOUR"),))}
        monkeypatch.delenv("SPECVIZ_DB_PATH")
        monkeypatch.delenv("SPECVIZ_COLOUR")
        assert [n for n in settings.unknown_names() if n.params["name"] in ("SPECVIZ_DB_PATH", "SPECVIZ_COLOUR")] == []

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
        with pytest.raises(KeyError):
            settings.chosen("SPECVIZ_NOPE")

    def test_chosen_is_a_value_set_not_the_default(self, monkeypatch):
        monkeypatch.delenv("SPECVIZ_DB", raising=False)
        assert not settings.chosen("SPECVIZ_DB")
        monkeypatch.setenv("SPECVIZ_DB", "")  # empty names nothing
        assert not settings.chosen("SPECVIZ_DB")
        monkeypatch.setenv("SPECVIZ_DB", "/tmp/x.duckdb")
        assert settings.chosen("SPECVIZ_DB")


    def test_the_module_prints_a_value_or_the_names(self):
        """The Makefile reads a setting as ``python -m specviz.settings NAME``; without a name, or
        with an unknown one, it had raised an IndexError or KeyError."""
        env = {k: v for k, v in os.environ.items() if k != "SPECVIZ_PORT"}
        run = lambda *args: subprocess.run([sys.executable, "-m", "specviz.settings", *args], cwd=ROOT, env=env,
                                           capture_output=True, text=True, timeout=60)
        assert run("SPECVIZ_PORT").stdout == "8501\n"
        for args in ((), ("SPECVIZ_NOPE",)):
            said = run(*args)
            assert said.returncode == 1 and "Traceback" not in said.stderr
            assert said.stderr.startswith("usage: python -m specviz.settings NAME") and "SPECVIZ_PORT" in said.stderr

class TestDefaultPaths:
    def test_checkout_defaults_are_beside_the_package(self, monkeypatch):
        monkeypatch.delenv("SPECVIZ_DB")
        assert not settings.INSTALLED
        assert settings.get("SPECVIZ_DATA_DIR") == settings.ROOT / "data"
        assert settings.get("SPECVIZ_DB") == settings.ROOT / "data" / "specviz.duckdb"
        assert (settings.ROOT / "app.py").is_file()

    def test_installed_store_is_in_the_user_data_folder(self, monkeypatch, tmp_path):
        monkeypatch.delenv("SPECVIZ_DB")
        monkeypatch.setattr(settings, "INSTALLED", True)
        monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
        assert settings.get("SPECVIZ_DB") == tmp_path / "specviz" / "specviz.duckdb"
        assert settings.get("SPECVIZ_DATA_DIR") == settings.ROOT / "data"

    def test_relative_xdg_data_home_is_ignored(self, monkeypatch, tmp_path):
        monkeypatch.setenv("XDG_DATA_HOME", "relative")
        monkeypatch.setenv("HOME", str(tmp_path))
        assert settings.user_data_dir() == tmp_path / ".local" / "share" / "specviz"

    def test_defaults_read_relative_to_the_checkout(self):
        shown = {s.name: s.default for s in settings.SETTINGS}
        assert shown["SPECVIZ_DATA_DIR"] == "data"
        assert shown["SPECVIZ_DB"] == "data/specviz.duckdb"
