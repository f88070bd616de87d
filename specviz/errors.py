"""Errors that reach a user: each carries a message key of the translation layer and its parameters.

Code decides on an error's type, never on its text; the text is rendered from ``key`` and
``params`` in the reader's language by :func:`specviz.i18n.message` (``str(error)`` is the English).
"""

from __future__ import annotations

import errno
import os
from typing import Any

from . import i18n

__all__ = ["SpecvizError", "InputError", "Notice", "out_of_room", "kept", "shortened"]

# A write refused for want of room: a full disk, a quota, a file-size limit.
_NO_ROOM_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
_NO_ROOM_WORDS = tuple(os.strerror(code) for code in _NO_ROOM_ERRNOS)


def out_of_room(exc: BaseException) -> bool:
    """Whether ``exc`` is a write refused for want of room (``ENOSPC``, ``EDQUOT``, ``EFBIG``): an
    ``OSError`` by its errno; another library's error (DuckDB's, which has no errno or type for it)
    by the OS's own words for them in its message. specviz's own errors are told apart by their
    key, never by their text; another library's are read by their words only where it has no type
    for the case: here (the operating system's words), the store's wait for a file another process
    holds (DuckDB's "lock", ``store.connection``), a JSON record past DuckDB's object size
    (``importers.base.duckdb_read_error``, for inference-perf's and AIPerf's per-request files), a
    table the SQL console's query names that does not exist (DuckDB's catalog error,
    ``results.sandbox``: a path there is a file out of reach), and the reason Python's JSON decoder
    gives, only to say it in the reader's language (``importers.source.json_reason``)."""
    if isinstance(exc, OSError):
        return exc.errno in _NO_ROOM_ERRNOS
    return any(words in str(exc) for words in _NO_ROOM_WORDS)


class SpecvizError(Exception):
    """Base of the errors specviz shows to a user.

    Parameters
    ----------
    key : str
        A key of ``specviz/locales/en.json``.
    **params
        The values its template interpolates; a value that is a :class:`Notice` (a word or phrase
        specviz writes, such as ``Notice("prometheus.detail.no_data")``) is rendered in the reader's
        language too.
    """

    def __init__(self, key: str, **params: Any) -> None:
        super().__init__(key)
        self.key = key
        self.params = params

    def __str__(self) -> str:
        return i18n.t(self.key, "en", **self.params)


class InputError(SpecvizError, ValueError):
    """A value out of its range or of the wrong kind (a user's number, setting or file field).

    Still a :class:`ValueError`, so callers and tests that catch ValueError keep working.
    """


class Notice:
    """Something a user should know about a result that was still produced (a value kept only in
    ``extra``, a unit assumed): a message key and its parameters, as :class:`SpecvizError`.

    Parameters
    ----------
    key : str
        A key of ``specviz/locales/en.json``.
    **params
        The values its template interpolates (JSON-serialisable, or Notices whose own values are:
        notices are stored); a value that is a Notice is rendered in the reader's language too.
    """

    def __init__(self, key: str, **params: Any) -> None:
        self.key = key
        self.params = params

    def __str__(self) -> str:
        return i18n.t(self.key, "en", **self.params)

    def __repr__(self) -> str:
        return f"Notice({self.key!r}, {self.params!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Notice) and (self.key, self.params) == (other.key, other.params)

    def to_json(self) -> dict[str, Any]:
        """``{"key": ..., "params": ...}``, as the store keeps it (a value that is a Notice, so too)."""
        return {"key": self.key,
                "params": {k: v.to_json() if isinstance(v, Notice) else v for k, v in self.params.items()}}

    @classmethod
    def from_json(cls, stored: dict[str, Any]) -> Notice:
        """The Notice :meth:`to_json` wrote (a value that was a Notice is one again)."""
        nested = lambda v: cls.from_json(v) if isinstance(v, dict) and set(v) == {"key", "params"} else v
        return cls(stored["key"], **{k: nested(v) for k, v in stored.get("params", {}).items()})


def kept(error: Exception) -> Notice | str:
    """What ``error`` says, to keep after it was caught (in a session, a report): a Notice of its key
    and parameters, or its text. A kept exception holds its traceback's frames and all they read: a
    session kept 150 MB for each refused 150 MB upload (an attack pass)."""
    return Notice(error.key, **error.params) if isinstance(error, SpecvizError) else str(error)


def shortened(value: Any, chars: int = 60) -> str:
    """A refused value as an error's parameter may quote it: its text (``repr`` but for a string) in at
    most ``chars`` characters, cut with "..." (a value of 100 KB had been written back whole on an
    error's one line)."""
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= chars else text[:chars - 3] + "..."
