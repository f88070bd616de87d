"""CSV that is safe to open in a spreadsheet: the one writer behind every CSV specviz produces (page
downloads, SQL results, ``--format csv`` on the command line).

Every field is quoted, so a line break or a delimiter inside a cell cannot start a new cell or row.
A text cell or header that a spreadsheet would evaluate as a formula (it starts with ``=``, ``+``,
``-``, ``@``, a tab or a carriage return; OWASP, "CSV Injection") gets a leading ``'``, and so does
every line inside a cell that starts with one after a carriage return or line feed.

:func:`visible_frame` shows a frame's invisible characters as escapes, for a page's table, a terminal
or a CSV alike.
"""

from __future__ import annotations

import csv
import json
import re
from typing import Any

import numpy as np
import pandas as pd

from specviz import i18n
from specviz.results.sandbox import distinct_names

__all__ = ["neutralise", "csv_text", "visible_frame"]

_FORMULA_START = re.compile(r"(^|[\r\n])(?=[=+\-@\t\r])")


def neutralise(text: str) -> str:
    """``text`` with a ``'`` before a formula character at its start and after each CR or LF.

    >>> neutralise("=1+1")
    "'=1+1"
    >>> neutralise("ok\\n@SUM(A1)")
    "ok\\n'@SUM(A1)"
    """
    return _FORMULA_START.sub(r"\1'", text)


def _cell(value: Any) -> Any:
    """An object cell as CSV writes it: text neutralised; a list, array or mapping (DuckDB's LIST and
    STRUCT, such as per_position_acceptance) as JSON, whole, where pandas would write numpy's
    shortened repr (``[0.85       0.71666667 0.59444444]``)."""
    if isinstance(value, str):
        return neutralise(value)
    if isinstance(value, (list, tuple, dict, np.ndarray)):
        return json.dumps(value.tolist() if isinstance(value, np.ndarray) else value, default=_json_item)
    return value


def _json_item(value: Any) -> Any:
    """What json cannot write by itself inside a list or mapping cell: numpy's arrays and scalars."""
    return value.tolist() if isinstance(value, (np.ndarray, np.generic)) else str(value)


def csv_text(frame: pd.DataFrame) -> str:
    """``frame`` (without its index) as CSV text: every field quoted, text cells and headers
    neutralised, list and mapping cells as JSON."""
    safe = frame.rename(columns=lambda c: neutralise(str(c)))
    for column in safe.columns:
        if safe[column].dtype == object or pd.api.types.is_string_dtype(safe[column]):
            safe[column] = safe[column].map(_cell)
    return safe.to_csv(index=False, quoting=csv.QUOTE_ALL, lineterminator="\n")


def visible_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with the invisible characters of its text cells and column names shown as escapes
    (:func:`specviz.i18n.visible`): file names, labels, model names and a query's column names came
    from files, servers and users, and a bidirectional override in one would make it read as another
    name. Two names that read alike once escaped ("a\\u202eb" and "a" U+202E "b", a query's) are told
    apart by a number, "a\\u202eb (2)", as no two columns of a table may share a name. Columns of text
    are searched without a Python call per cell (a page reruns often)."""
    shown = frame.set_axis(distinct_names([i18n.visible(c) if isinstance(c, str) else c for c in frame.columns]), axis=1)
    for column in [c for c in shown.columns if not pd.api.types.is_numeric_dtype(shown[c])]:
        values = shown[column]
        if pd.api.types.is_string_dtype(values):
            marked = values.str.contains(i18n.INVISIBLE.pattern, regex=True, na=False)
            if marked.any():
                shown[column] = values.where(~marked, values[marked].map(i18n.visible))
        else:  # text among other values (lists)
            shown[column] = values.map(lambda v: i18n.visible(v) if isinstance(v, str) else v)
    return shown

