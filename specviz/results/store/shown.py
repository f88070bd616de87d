"""What a page reads of the runs, in a bounded form, and the reads kept for every session of a process.

A page never reads the runs table whole: it reads the newest :envvar:`SPECVIZ_SHOWN_MAX_RUNS` runs
that match its filters (the filters applied by DuckDB, so that they reach every stored run), each
text cut at :envvar:`SPECVIZ_SHOWN_TEXT_CHARS`, and ``extra`` reduced to its scalar fields
(:func:`specviz.results.extra.shown_extra`). One such read is kept per process (:class:`KeptReads`),
up to :envvar:`SPECVIZ_READ_CACHE_BYTES` in all, and shared by every session: without the bounds, a
store of 200,000 runs with long names took one Explorer session to 2.5 GB.
"""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import duckdb
import pandas as pd

from specviz import settings
from specviz.results.extra import shown_extra
from specviz.results.schema import RUN_COLUMNS

__all__ = ["ShownRuns", "FilterValues", "KeptReads", "read_shown_runs", "read_filter_values"]

# The file's order within an import, as Store.runs has it.
_FILE_ORDER = "source_file, length(run_id), run_id"
_UNCUT = frozenset({"run_id", "content_hash", "extra"})  # identities kept whole; extra reduced apart


@dataclass(frozen=True)
class ShownRuns:
    """The runs a page shows: the newest ``limit`` of the ``matching`` runs that pass its filters."""

    frame: pd.DataFrame
    matching: int
    limit: int

    @property
    def cut(self) -> bool:
        """Whether runs that match were left out by the limit."""
        return self.matching > len(self.frame)


@dataclass(frozen=True)
class FilterValues:
    """The values a filter offers: the first ``limit`` distinct values of a column, in order, and
    whether there are more."""

    values: tuple[Any, ...]
    more: bool


def _size(value: Any) -> int:
    """Bytes a kept read holds: a frame's own (its texts included); a filter's values, roughly."""
    if isinstance(value, pd.DataFrame):
        return int(value.memory_usage(index=True, deep=True).sum())
    if isinstance(value, ShownRuns):
        return _size(value.frame)
    return sum(sys.getsizeof(v) for found in value.values() for v in found.values)


def _handed_out(value: Any) -> Any:
    """What a caller gets of a kept read: a frame as a shallow copy, which pandas' copy-on-write
    (pandas 3) copies a column of only when it is changed, so that no caller's change reaches
    another or the kept frame; filter values as they are (frozen)."""
    if isinstance(value, pd.DataFrame):
        return value.copy(deep=False)
    if isinstance(value, ShownRuns):
        return replace(value, frame=value.frame.copy(deep=False))
    return dict(value)


class KeptReads:
    """Reads of the store (frames, :class:`ShownRuns`, filter values), kept between calls and shared by
    every caller of this process (every session of the app), at most ``max_bytes`` in all: the least
    recently used is dropped first, and a read larger than the bound is handed out but not kept.

    Each is filed under its key and the version of the tables it was read from. One read runs at a
    time, so that sessions that open a page together wait for one read instead of each making its
    own copy.
    """

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._kept: OrderedDict[Hashable, tuple[Hashable, Any, int]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, version: Hashable, read: Callable[[], Any]) -> Any:
        """The read kept under ``key`` at ``version``, made by ``read`` when it is missing or older."""
        with self._lock:
            kept = self._kept.get(key)
            if kept is not None and kept[0] == version:
                self._kept.move_to_end(key)
                return _handed_out(kept[1])
            self._kept.pop(key, None)
            value = read()
            size = _size(value)
            if size <= self.max_bytes:
                while self._kept and self.kept_bytes + size > self.max_bytes:
                    self._kept.popitem(last=False)
                self._kept[key] = (version, value, size)
            return _handed_out(value)

    @property
    def kept_bytes(self) -> int:
        """The bytes of every read kept now."""
        return sum(size for _, _, size in self._kept.values())


def _cut(column: str, chars: int) -> str:
    """SQL for ``column`` cut at ``chars`` characters, the last of them ``…`` where it was cut."""
    return f"CASE WHEN length({column}) > {chars} THEN left({column}, {chars - 1}) || '…' ELSE {column} END"


def _shown(column: str, chars: int) -> str:
    """``column`` as a page shows it: a text field cut, anything else as stored. The name is written
    into the SQL, so anything but a run column is refused (ValueError)."""
    if column not in RUN_COLUMNS:
        raise ValueError(f"not a run column: {column!r}")
    return _cut(column, chars) if RUN_COLUMNS[column] == "VARCHAR" and column not in _UNCUT else column


def _where(filters: Mapping[str, Sequence[Any]], chars: int) -> tuple[str, list[Any]]:
    """A WHERE clause that keeps the runs whose shown value of each filtered column is one of its
    chosen values (no choice keeps all; None, the runs without a value), and its parameters. Column
    names must be run columns: they are written into the SQL, the values never are."""
    terms, params = [], []
    for column, chosen in filters.items():
        shown = _shown(column, chars)
        values = [v for v in chosen if v is not None]
        either = [f"{shown} IN ({', '.join('?' * len(values))})"] if values else []
        if len(values) < len(chosen):  # None: the runs without a value
            either.append(f"{column} IS NULL")
        if either:
            terms.append(f"({' OR '.join(either)})")
            params.extend(values)
    return (f"WHERE {' AND '.join(terms)}" if terms else ""), params


def read_shown_runs(con: duckdb.DuckDBPyConnection, filters: Mapping[str, Sequence[Any]]) -> ShownRuns:
    """The newest :envvar:`SPECVIZ_SHOWN_MAX_RUNS` runs that match ``filters`` (column → chosen shown
    values), oldest import first and in each file's order, with their texts cut and ``extra``
    reduced (see the module's docstring); and how many runs match. The newest runs are the newest
    imports', each import's in its file's order."""
    limit, chars = settings.get("SPECVIZ_SHOWN_MAX_RUNS"), settings.get("SPECVIZ_SHOWN_TEXT_CHARS")
    where, params = _where(filters, chars)
    matching = con.execute(f"SELECT count(*) FROM runs {where}", params).fetchall()[0][0]
    columns = ", ".join(f"{_shown(c, chars)} AS {c}" for c in RUN_COLUMNS)
    cursor = con.execute(f"""
        SELECT * FROM (SELECT {columns} FROM runs {where} ORDER BY imported_at DESC, {_FILE_ORDER} LIMIT {limit})
        ORDER BY imported_at, {_FILE_ORDER}""", params)
    extra_chars = settings.get("SPECVIZ_SHOWN_EXTRA_CHARS")
    chunks: list[pd.DataFrame] = []
    # extra is reduced a DuckDB vector (2,048 runs of at most 64 KiB each) at a time: never all of it at once.
    while not (chunk := cursor.fetch_df_chunk(1)).empty or not chunks:
        chunks.append(chunk.assign(extra=pd.Series([shown_extra(text, extra_chars, chars) for text in chunk["extra"]],
                                                   index=chunk.index, dtype=object)))
        if chunk.empty:
            break
    frame = pd.concat(chunks, ignore_index=True)
    return ShownRuns(frame, int(matching), limit)


def read_filter_values(con: duckdb.DuckDBPyConnection, columns: Sequence[str], origin: str) -> dict[str, FilterValues]:
    """For each of ``columns``, the first :envvar:`SPECVIZ_FILTER_MAX_VALUES` distinct shown values of
    the stored runs of ``origin`` (their import's, ``"user"`` or ``"example"``), sorted, and whether there
    are more. Only the runs of the origin a page shows: with the shipped examples hidden, the lists
    offered the examples' workloads, engine and labels, which matched nothing shown. A whole number
    stored as a double (a concurrency) is offered as an integer, 8 and not 8.0; it matches the same runs.
    None comes first where some runs have a value and others none (the plain runs of a method), so
    that those can be chosen too."""
    most, chars = settings.get("SPECVIZ_FILTER_MAX_VALUES"), settings.get("SPECVIZ_SHOWN_TEXT_CHARS")
    found = {}
    for column in columns:
        shown = _shown(column, chars)
        of_origin = "content_hash IN (SELECT content_hash FROM imports WHERE origin = ?)"
        values = [int(v) if isinstance(v, float) and v.is_integer() else v for (v,) in con.execute(
            f"""SELECT DISTINCT {shown} FROM runs WHERE {column} IS NOT NULL
                AND {of_origin} ORDER BY 1 LIMIT {most + 1}""", [origin]).fetchall()]
        unset = bool(values) and con.execute(f"SELECT count(*) FROM runs WHERE {column} IS NULL AND {of_origin}",
                                             [origin]).fetchall()[0][0] > 0
        found[column] = FilterValues((None,) * unset + tuple(values[:most]), len(values) > most)
    return found
