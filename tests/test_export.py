"""Tests for specviz.results.export: every CSV specviz writes is quoted and formula-safe."""

import csv
import io
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
from hypothesis import given, strategies as st

from specviz.results import export

TRIGGERS = "=+-@\t\r"


def read_back(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def looks_like_a_formula(cell: str) -> bool:
    """What a spreadsheet would run: a cell, or a line inside it, starting with a trigger."""
    return any(line[:1] in TRIGGERS for line in [cell, *cell.replace("\r", "\n").split("\n")[1:]] if line)


class TestNeutralise:
    def test_formula_starts(self):
        assert [export.neutralise(v) for v in ["=cmd()", "+1", "-2", "@x", "\tx", "\r=x", "plain"]] == \
            ["'=cmd()", "'+1", "'-2", "'@x", "'\tx", "'\r'=x", "plain"]

    def test_after_a_line_break_inside_the_cell(self):
        assert export.neutralise("ok\n=HYPERLINK(\"http://127.0.0.1:9\")") == "ok\n'=HYPERLINK(\"http://127.0.0.1:9\")"
        assert export.neutralise("a\r\n@SUM(A1)") == "a\r\n'@SUM(A1)"
        assert export.neutralise("a\r\r-1") == "a\r'\r'-1"


class TestCsvText:
    def test_every_field_is_quoted_and_numbers_stay_numbers(self):
        text = export.csv_text(pd.DataFrame({"a": ["=cmd()", None], "n": [-1.5, 2.0]}))
        assert text.splitlines()[0] == '"a","n"'
        assert read_back(text)[1:] == [["'=cmd()", "-1.5"], ["", "2.0"]]

    def test_list_and_mapping_cells_are_json_in_full(self):
        # DuckDB gives a LIST column (per_position_acceptance) as numpy arrays: pandas alone wrote
        # "[0.85       0.71666667 0.59444444]", shortened and not a list a reader can parse.
        frame = pd.DataFrame({"p": [np.array([0.85, 0.7166666666666667]), None], "s": [{"a": np.array([1, 2])}, [[1], [2, 3]]]})
        rows = read_back(export.csv_text(frame))
        assert rows[1] == ["[0.85, 0.7166666666666667]", '{"a": [1, 2]}']
        assert rows[2] == ["", "[[1], [2, 3]]"]

    def test_headers_are_neutralised_too(self):
        assert read_back(export.csv_text(pd.DataFrame({"=evil": [1], "ok\n+x": [2]})))[0] == ["'=evil", "ok\n'+x"]

    @given(st.lists(st.text(alphabet=st.sampled_from("=+-@\t\r\n,\"'ab ")), min_size=1, max_size=8))
    def test_nothing_reads_back_as_a_formula_and_every_row_survives(self, cells):
        frame = pd.DataFrame({"c": cells, "d": cells[::-1]})
        rows = read_back(export.csv_text(frame))
        assert len(rows) == len(cells) + 1
        assert not any(looks_like_a_formula(cell) for row in rows for cell in row)
        assert [row[0].replace("'", "") for row in rows[1:]] == [c.replace("'", "") for c in cells]


def test_tables_offer_no_download_of_their_own():
    """Streamlit's table toolbar downloads a table as it is (=HYPERLINK(…), +cmd|… unchanged): the app's
    config turns it off, so a table leaves the app only through a page's CSV button and csv_text."""
    config = tomllib.loads((Path(__file__).resolve().parent.parent / ".streamlit" / "config.toml").read_text())
    assert config["client"]["disableDataExport"] is True


def test_visible_frame_shows_invisible_characters_in_cells_names_and_lists_as_escapes():
    frame = pd.DataFrame({"model\u202e": ["Llama\u202e-3", "plain", None], "runs": [1, 2, 3],
                          "tags": [["a\u200bb"], [], ["c"]]})
    shown = export.visible_frame(frame)
    assert list(shown.columns) == ["model\\u202e", "runs", "tags"]
    assert shown["model\\u202e"].tolist()[:2] == ["Llama\\u202e-3", "plain"] and shown["model\\u202e"].isna().iloc[2]
    assert shown["tags"].tolist() == [["a\u200bb"], [], ["c"]]  # a list is shown by the table as it is
    assert shown["runs"].tolist() == [1, 2, 3] and frame.columns[0] == "model\u202e"  # the input untouched


def test_names_that_read_alike_once_escaped_stay_two_columns():
    """A query's "a\\u202eb" (typed) and "a" U+202E "b" had become one name twice: the CLI's CSV failed
    with AttributeError and the console with "Duplicate column names" (an attack pass)."""
    frame = pd.DataFrame([["x", "y", "z"]], columns=["a\\u202eb", "a\u202eb", "a\\u202eb (2)"])
    shown = export.visible_frame(frame)
    assert list(shown.columns) == ["a\\u202eb", "a\\u202eb (3)", "a\\u202eb (2)"]
    assert list(csv.reader(io.StringIO(export.csv_text(shown)))) == [list(shown.columns), ["x", "y", "z"]]
