"""The rooms of specviz and the arrows between them: every import of every module under specviz/
is read and checked against the layering its package docstrings state, so that a newcomer can
trust them. Nothing under specviz/ imports Streamlit."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import specviz

PACKAGE = Path(specviz.__file__).resolve().parent

# Each room and the rooms it may import from (itself included). The top-level modules are rooms of
# their own kind: the base, the charts, and the scenario layer.
ROOMS = {
    "base": ("specviz.errors", "specviz.i18n", "specviz.settings", "specviz"),
    "charts": ("specviz.charts",),
    "model": ("specviz.model",),
    "scenario": ("specviz.scenario", "specviz.names", "specviz.calculator", "specviz.regime", "specviz.workload"),
    "live": ("specviz.live",),
    "results": ("specviz.results",),
    "advice": ("specviz.advice",),
    "cli": ("specviz.cli", "specviz.__main__"),
}
MAY_IMPORT = {
    "base": {"base"},
    "charts": {"base", "charts"},
    "model": {"base", "model"},
    "scenario": {"base", "model", "scenario"},
    "live": {"base", "model", "scenario", "live"},
    "results": {"base", "model", "scenario", "live", "results"},
    "advice": {"base", "model", "scenario", "advice"},
    "cli": set(ROOMS),
}
PACKAGES = ("model", "live", "results", "advice")


def room_of(module: str) -> str:
    """The room of a dotted module name: the longest prefix that names one."""
    matches = [(len(prefix), room) for room, prefixes in ROOMS.items() for prefix in prefixes
               if module == prefix or module.startswith(prefix + ".") and prefix != "specviz"]
    if not matches:
        raise KeyError(module)
    return max(matches)[1]


def module_name(path: Path) -> str:
    parts = ["specviz", *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(source: str, module: str, is_package: bool) -> set[str]:
    """The specviz modules (or packages) that ``source`` imports, relative imports resolved, and
    ``streamlit`` where it is imported at all."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[:len(base) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            found.add(target)
            found |= {f"{target}.{alias.name}" for alias in node.names
                      if (PACKAGE.parent / Path(*f"{target}.{alias.name}".split("."))).with_suffix(".py").exists()
                      or (PACKAGE.parent / Path(*f"{target}.{alias.name}".split(".")) / "__init__.py").exists()}
    return {name for name in found if name == "specviz" or name.startswith(("specviz.", "streamlit"))}


def wrong_arrows(module: str, imported: set[str]) -> list[str]:
    """The imports of ``module`` that run against the layering, as 'a -> b (room -> room)'."""
    room = room_of(module)
    wrong = []
    for target in sorted(imported):
        if target.startswith("streamlit"):
            wrong.append(f"{module} -> {target} (nothing under specviz/ imports Streamlit)")
        elif target != "specviz" and room_of(target) not in MAY_IMPORT[room]:
            wrong.append(f"{module} -> {target} ({room} -> {room_of(target)})")
    return wrong


def all_modules() -> list[tuple[str, Path]]:
    return sorted((module_name(path), path) for path in PACKAGE.rglob("*.py"))


def test_every_import_runs_the_way_the_rooms_are_drawn():
    wrong = [arrow for module, path in all_modules()
             for arrow in wrong_arrows(module, imported_modules(path.read_text(), module, path.name == "__init__.py"))]
    assert not wrong, "\n".join(wrong)


def test_every_module_is_in_a_room():
    for module, _ in all_modules():
        room_of(module)


@pytest.mark.parametrize("source, module, arrow", [
    ("from specviz.results import store", "specviz.model.spec", "model -> results"),
    ("from ..live import scrape", "specviz.advice.claims", "advice -> live"),
    ("from . import charts", "specviz.calculator", "scenario -> charts"),
    ("import streamlit as st", "specviz.charts", "Streamlit"),
    ("from specviz.cli import main", "specviz.results.explorer", "results -> cli"),
])
def test_an_arrow_the_wrong_way_is_caught(source, module, arrow):
    """The check itself: a wrong import of each kind is named."""
    assert any(arrow in text for text in wrong_arrows(module, imported_modules(source, module, False)))


@pytest.mark.parametrize("package", PACKAGES)
def test_each_package_says_what_it_may_import_and_it_is_what_is_checked(package):
    """The 'May import:' line of each package's docstring names the rooms this test allows it, and a
    'Must not import:' line follows it."""
    doc = ast.get_docstring(ast.parse((PACKAGE / package / "__init__.py").read_text()))
    may = re.search(r"^May import: (.*?)\.\n", doc, re.M | re.S)
    assert may and "Must not import:" in doc[may.end():], doc
    named = {room_of(name.strip()) for name in may.group(1).replace("\n", " ").split(",")}
    assert named | {package} == MAY_IMPORT[package]


def test_pages_holds_the_pages_named_by_their_paths_and_nothing_else_at_its_top():
    """Streamlit's pages-folder mode, which runs a fresh server's first request, offers every file at
    the top of pages/ as a page: a helper there opened as a blank page without the router (a
    Chromium pass, /controls). What the pages share is in pages/parts/."""
    from specviz import scenario

    pages = PACKAGE.parent / "pages"
    assert sorted(p.name for p in pages.glob("*.py")) == sorted(f"{path}.py" for path in scenario.PAGE_PATHS.values())
