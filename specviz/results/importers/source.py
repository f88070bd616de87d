"""A result file read once, within bounds: its bytes (in memory, or for a file on disk read where it
lies a MiB at a time: :class:`OpenedSource`), its content hash and line ends, its first 64 KiB as
text, its JSON documents (decoded at most once, and only after the memory they would take has been
estimated from its byte counts and found within ``SPECVIZ_IMPORT_MEMORY_BYTES``), and its lines.
Every importer reads a :class:`Source`; :mod:`specviz.results.importers.base` holds what they make of it.
"""

from __future__ import annotations

import codecs
import csv
import hashlib
import itertools
import json
import os
import re
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from functools import cached_property
from typing import Any, BinaryIO, Iterable, Iterator

import numpy as np

from specviz import settings
from specviz.errors import Notice
from .base import IngestError, as_ingest_error

__all__ = ["Source", "OpenedSource", "csv_rows", "byte_lines", "header_line_bytes", "occurrences", "byte_histogram",
           "characters", "width", "lines"]

# Memory that decoding costs, estimated from how often each byte occurs before anything is decoded.
# json.loads, measured with tracemalloc on CPython 3.11 over arrays of 1M elements of one shape
# (the text itself not counted), per element: [] 64 B, {} 72 B, [0] 96 B, {"":0} 192 B,
# {"":[]} 248 B, {"":{}} 256 B, an int above 256 36 B, a float 32 B, "ab" 59 B, "ĉ" 85 B,
# a distinct key with its value 115-160 B (dicts double as they grow).
# Charging each '{' a dict, each '[' a list, each ',' and ':' an element and each '"' half a
# string header covers every one of them (tests/test_importers.py checks each against tracemalloc).
_DICT_BYTES, _LIST_BYTES, _ELEMENT_BYTES, _QUOTE_BYTES = 96, 56, 48, 32
# Building and storing one run (its dict, the store's row), beyond what the other charges cover,
# measured with ru_maxrss over a whole import: 970 B a run for 600,000 minimal vllm records
# ({"completed":1} a line), 1.8 KB for 100,000 of nerdalert's full records.
_RUN_BYTES = 4096
# Storing ``extra``: DuckDB parses each JSON text to check it; with ru_maxrss, a 10 MB extra held
# 45 B per value for [0,0,…], 37 B for [[],[],…] and ["ab","ab",…] (values counted by ',' and ':').
_STORED_VALUE_BYTES = 48


def byte_histogram(data: bytes) -> np.ndarray:
    """How often each byte value occurs in ``data`` (256 counts), counted 1 MiB at a time so that
    the integer copy numpy's bincount makes stays small."""
    view = np.frombuffer(data, dtype=np.uint8)
    counts = np.zeros(256, dtype=np.int64)
    for start in range(0, len(view), 1 << 20):
        counts += np.bincount(view[start:start + (1 << 20)], minlength=256)
    return counts


def characters(counts: np.ndarray) -> int:
    """Characters of UTF-8 text with this byte histogram (continuation bytes 0x80-0xBF start none)."""
    return int(counts.sum() - counts[0x80:0xC0].sum())


def width(counts: np.ndarray) -> int:
    """Bytes a character takes in the str that decoding UTF-8 text with this byte histogram makes:
    1, 2 or 4 by the widest character (lead bytes from 0xC4 start characters above U+00FF, from
    0xF0 characters above U+FFFF)."""
    return 4 if counts[0xF0:].any() else 2 if counts[0xC4:0xF0].any() else 1


def _escaped_width(data: bytes) -> int:
    """The same for the widest character a \\uXXXX escape in JSON text writes: 4 for a surrogate
    (half of a character above U+FFFF), 2 above U+00FF, else 1. One such escape makes its whole
    string that wide, however plain its other characters (an escaped backslash before a u only
    overcounts)."""
    if b"\\u" not in data:
        return 1
    if any(data.count(b"\\u" + bytes(p)) for p in itertools.product(b"dD", b"89aAbB")):
        return 4
    return 1 if data.count(b"\\u00") == data.count(b"\\u") else 2


def lines(counts: np.ndarray) -> int:
    """Lines of a text with this byte histogram, whether they end in \\n, \\r\\n or \\r."""
    return int(max(counts[ord("\n")], counts[ord("\r")]))


def _json_memory(data: bytes, counts: np.ndarray) -> int:
    """Upper estimate of the memory json.loads needs for ``data`` (``counts``, its byte histogram):
    the decoded text, the contents of its strings and the objects."""
    chars, char_width = characters(counts), width(counts)
    escaped = _escaped_width(data)
    # Contents: at most every character, as wide as an escape makes its string. json builds a
    # string that has escapes in a buffer up to 1.25x its size, copied once more where an escape
    # widens it; measured on one 2M-character string: 2.25x, 4.75x and 7.25x the text.
    contents = chars * (max(char_width, escaped) + (char_width if escaped > char_width else 0))
    if counts[ord("\\")]:
        contents = contents * 4 // 3
    return int(chars * char_width + contents
               + _DICT_BYTES * counts[ord("{")] + _LIST_BYTES * counts[ord("[")]
               + _ELEMENT_BYTES * (counts[ord(",")] + counts[ord(":")]) + _QUOTE_BYTES * counts[ord('"')])


_BLANK = re.compile(r"[ \t\n\r]*")

# The reasons Python's JSON decoder gives (json/decoder.py), by the start of each, as messages in the
# reader's language: "Expecting ':' delimiter" had reached a Vietnamese page as it is.
_JSON_REASONS = (("Expecting value", "value"), ("Expecting ',' delimiter", "comma"),
                 ("Expecting ':' delimiter", "colon"), ("Expecting property name", "name"),
                 ("Unterminated string", "string"), ("Invalid control character", "control"),
                 ("Invalid \\", "escape"))


def json_reason(reason: str) -> Notice | str:
    """The JSON decoder's reason as a message (``ingest.json_reason.*``); one it does not list, as it is."""
    return next((Notice(f"ingest.json_reason.{key}") for start, key in _JSON_REASONS if reason.startswith(start)), reason)


def _json_documents(name: str, text: str) -> Iterator[Any]:
    """The documents of JSON text: one, or JSON lines (one after another), decoded as they are read.

    Raises
    ------
    IngestError
        If the JSON is malformed (``ingest.json_malformed_at``: the line and column where it breaks,
        the decoder's reason and how many documents came whole before it: a JSON-lines file cut off
        mid-write keeps its records up to its last line; ``ingest.json_cut_short`` where it breaks at
        the text's end, a file cut short), nested too deeply or holds an integer of more than 4,300
        digits (both refused by Python's json).
    """
    decoder = json.JSONDecoder()
    end = _BLANK.match(text).end()
    records = 0
    while True:
        try:
            doc, end = decoder.raw_decode(text, end)
        except json.JSONDecodeError as exc:
            if not text[exc.pos:].strip():  # it breaks where the text ends: cut short, not mistyped
                raise IngestError("ingest.json_cut_short", name, line=exc.lineno, records=records) from None
            raise IngestError("ingest.json_malformed_at", name, line=exc.lineno, column=exc.colno,
                              detail=json_reason(exc.msg), records=records) from None
        except ValueError:  # the only other ValueError of json: an integer over 4,300 digits
            raise IngestError("ingest.long_integer", name) from None
        except RecursionError as exc:
            raise as_ingest_error(name, exc) from None
        yield doc
        records += 1
        end = _BLANK.match(text, end).end()
        if end == len(text):
            return


_HEAD_BYTES = 65536  # enough to tell the formats apart; a large CSV is not decoded here in full
_WHITESPACE = np.frombuffer(b" \t\n\r\f\v", np.uint8)
_PIECE_BYTES = 1 << 20  # what is read, hashed and counted at a time


def occurrences(piece: bytes, value: int) -> int:
    """How often the byte ``value`` occurs in ``piece`` (numpy compares a MiB in a third of the time
    ``bytes.count`` takes)."""
    return int(np.count_nonzero(np.frombuffer(piece, np.uint8) == value))


class _Scan:
    """What one pass over a content learns, piece by piece: its SHA-256 (the store's key for it) and
    how many \\n and \\r it holds. The hash leaves out a UTF-8 byte-order mark at the start, which
    the formats read past: a file an editor saved with one is the same results, not new runs."""

    def __init__(self) -> None:
        self.digest = hashlib.sha256()
        self.newlines = self.returns = 0
        self.started = False

    def update(self, piece: bytes) -> None:
        if not self.started:
            self.started = True
            piece = piece.removeprefix(codecs.BOM_UTF8)
        self.digest.update(piece)
        self.newlines += occurrences(piece, ord("\n"))
        if b"\r" in piece:  # a search that stops at the first costs a third of a count
            self.returns += occurrences(piece, ord("\r"))


class Source:
    """One file to import, read once: its size, content hash and line ends (counted in one pass), the
    checks every file passes, its text and JSON documents decoded at most once, and the memory charged
    so far for reading it.

    Close it (or use it as a context manager) to delete the private copy it may have made.

    Parameters
    ----------
    name : str
        The file's name as the user gave it (for messages; never opened).
    data : bytes
        Its content.
    """

    # Whether the hash is known before a format reads the content (in memory: at once; a file on
    # disk is hashed beside the reading, and whether it was imported before is asked after).
    hashed_at_once = True

    def __init__(self, name: str, data: bytes) -> None:
        self.name = name
        self.data = data
        self.size = len(data)
        self.estimate = 0

    def __enter__(self) -> Source:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Delete the private copy, if one was made."""
        if "private_copy" in self.__dict__:
            self.private_copy.close()

    def pieces(self) -> Iterator[bytes]:
        """The content from its start, 1 MiB at a time."""
        for start in range(0, self.size, _PIECE_BYTES):
            yield self.data[start:start + _PIECE_BYTES]

    @cached_property
    def _scan(self) -> _Scan:
        scan = _Scan()
        for piece in self.pieces():
            scan.update(piece)
        return scan

    @property
    def content_hash(self) -> str:
        """The SHA-256 of the content, in hex."""
        return self._scan.digest.hexdigest()

    @property
    def line_ends(self) -> int:
        """How many lines end in \\n, \\r\\n or \\r."""
        return max(self._scan.newlines, self._scan.returns)

    @cached_property
    def private_copy(self) -> BinaryIO:
        """The content in a temporary file with no name, for :attr:`reader_path`. Deleted by
        :meth:`close`."""
        copy = tempfile.TemporaryFile()
        copy.write(self.data)
        copy.flush()
        return copy

    @property
    def reader_path(self) -> str:
        """A path for a reader that takes one (DuckDB): ``/proc/self/fd/N`` of a file that holds
        exactly these bytes, which no other process can put another file in place of."""
        return f"/proc/self/fd/{self.private_copy.fileno()}"

    def read_at(self, offset: int, count: int) -> bytes:
        """Up to ``count`` bytes from ``offset``."""
        return self.data[offset:offset + count]

    def check_unchanged(self) -> None:
        """Raise if the content changed while it was read (in memory, it cannot)."""

    @property
    def head(self) -> str:
        """Up to 64 KiB as text, from the first byte that is not whitespace: JSON may open with any
        amount of it (a file of 70 KB of blanks before its object was not recognised), and a format
        is told by what follows.

        Raises
        ------
        IngestError
            If the file is empty, binary, UTF-16/32 or not UTF-8.
        """
        return self._head[0]

    @property
    def head_is_whole(self) -> bool:
        """Whether :attr:`head` reaches the file's end (else its last line may be cut)."""
        return self._head[1]

    @cached_property
    def _head(self) -> tuple[str, bool]:
        first = next(self.pieces(), b"")
        if first.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):  # a UTF-32 BOM starts the same
            raise IngestError("ingest.utf16", self.name)
        start = self._content_start(len(codecs.BOM_UTF8) if first.startswith(codecs.BOM_UTF8) else 0)
        if start is None:  # nothing but blanks (after a byte-order mark)
            raise IngestError("ingest.empty", self.name)
        head = self.read_at(start, _HEAD_BYTES)
        if b"\x00" in head:
            raise IngestError("ingest.binary", self.name)
        whole = start + len(head) >= self.size
        try:  # a character may straddle the cut: the incremental decoder keeps its start back
            return codecs.getincrementaldecoder("utf-8")().decode(head, final=whole), whole
        except UnicodeDecodeError:
            raise IngestError("ingest.not_utf8", self.name) from None

    def _content_start(self, offset: int) -> int | None:
        """The offset of the first byte from ``offset`` on that is not ASCII whitespace, or None."""
        for piece_start in range(offset, self.size, _PIECE_BYTES):
            piece = np.frombuffer(self.read_at(piece_start, _PIECE_BYTES), np.uint8)
            content = np.flatnonzero(~np.isin(piece, _WHITESPACE))
            if content.size:
                return piece_start + int(content[0])
        return None

    @cached_property
    def counts(self) -> np.ndarray:
        """How often each byte value occurs in the file (256 counts)."""
        return byte_histogram(self.data)

    @cached_property
    def text(self) -> str:
        """The whole file as text (once the memory for it has been charged by the caller)."""
        try:
            return self.data.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise IngestError("ingest.not_utf8", self.name) from None

    @property
    def is_json(self) -> bool:
        """Whether the file starts as JSON does (an object or an array)."""
        return self.head.lstrip()[:1] in ("{", "[")

    @cached_property
    def documents(self) -> list[Any]:
        """The JSON documents (one, or one per line), decoded once, after the memory that takes
        has been estimated and charged; none if the file does not start as JSON does."""
        if not self.is_json:
            return []
        self.charge(_json_memory(self.data, self.counts))
        return list(_json_documents(self.name, self.text))

    @property
    def records(self) -> list[Any]:
        """The JSON records: the documents (one, or one per line), or the elements of the one
        document that is an array (a vLLM sweep's ``summary.json``, a list of reports)."""
        docs = self.documents
        return docs[0] if len(docs) == 1 and isinstance(docs[0], list) else docs

    def fits(self, more: int) -> None:
        """Check that ``more`` bytes beyond what is charged stay within the memory limit.

        Raises
        ------
        IngestError
            If the total is over ``SPECVIZ_IMPORT_MEMORY_BYTES``: the content is far denser than
            a benchmark result's.
        """
        cap = settings.get("SPECVIZ_IMPORT_MEMORY_BYTES")
        if self.estimate + more > cap:
            raise IngestError("ingest.memory", self.name, needed_mb=(self.estimate + more) / 1e6,
                              cap_mb=cap / 1e6)

    def charge(self, more: int) -> None:
        """Add ``more`` bytes to the memory reading this file takes, refused over the limit (:meth:`fits`)."""
        self.fits(more)
        self.estimate += more

    def charge_runs(self, count: int) -> None:
        """Charge building and storing ``count`` runs, before they are built."""
        self.charge(_RUN_BYTES * count)

    def check_extras(self, runs: list[dict[str, Any]]) -> None:
        """Check the memory of the store's parse of each run's ``extra`` JSON, once the runs are built."""
        self.fits(_STORED_VALUE_BYTES * sum(run["extra"].count(",") + run["extra"].count(":") for run in runs))


class OpenedSource(Source):
    """A regular file on disk as a :class:`Source`, read where it lies through the descriptor opened
    once: DuckDB is given ``/proc/self/fd/N`` of it (:attr:`reader_path`), so the path is never
    looked up again and no other file can take its place. A thread hashes it and counts its line
    ends a piece at a time while a format reads it; none of it stays in memory but what a format
    reads whole (JSON, genai-perf's CSV).

    It is not copied: a private copy of a 1M-line AIPerf export (1.6 GB) took 3 s, as long as
    three quarters of DuckDB's own read of it. What was hashed is what was read as long as the file
    is not written to while it is imported: its size and modification time are compared with the
    opening's before the import commits (:meth:`check_unchanged`), as GNU tar checks a file it
    archives, so a file still being written is refused. (A rewrite in place that keeps the size,
    within the kernel's clock tick of the opening, a few milliseconds, keeps the time too and is
    not seen.)

    Parameters
    ----------
    name : str
        The file's name as the user gave it (for messages).
    descriptor : int
        Open for reading on a regular file; the source owns it and closes it in :meth:`close`.
    """

    hashed_at_once = False

    def __init__(self, name: str, descriptor: int) -> None:
        self.name = name
        self.estimate = 0
        self._descriptor = descriptor
        info = os.fstat(descriptor)
        self.size = info.st_size
        self._opened = _identity(info)
        self._stop = threading.Event()
        self._scanner = ThreadPoolExecutor(1)
        self._scanning = self._scanner.submit(self._scan_pieces)

    def _scan_pieces(self) -> _Scan:
        scan = _Scan()
        for piece in self.pieces():
            if self._stop.is_set():  # closed before the scan's end: nobody asks for it
                break
            scan.update(piece)
        return scan

    @property
    def _scan(self) -> _Scan:
        return self._scanning.result()

    def close(self) -> None:
        """Stop the scan and close the file."""
        if self._descriptor < 0:
            return
        self._stop.set()
        self._scanner.shutdown(wait=True)
        os.close(self._descriptor)
        self._descriptor = -1

    @property
    def reader_path(self) -> str:
        return f"/proc/self/fd/{self._descriptor}"

    def read_at(self, offset: int, count: int) -> bytes:
        return os.pread(self._descriptor, count, offset)

    def check_unchanged(self) -> None:
        """Raise if the file's size or modification time is not what it was when it was opened: it
        was written while it was read.

        Raises
        ------
        IngestError
            ``ingest.changed``.
        """
        if _identity(os.fstat(self._descriptor)) != self._opened:
            raise IngestError("ingest.changed", self.name)

    @cached_property
    def data(self) -> bytes:
        """The whole content, read where a format needs it whole."""
        with open(self._descriptor, "rb", buffering=0, closefd=False) as file:
            file.seek(0)
            data = file.readall()
        if len(data) != self.size:
            raise IngestError("ingest.changed", self.name)
        return data

    def pieces(self) -> Iterator[bytes]:
        for offset in range(0, self.size, _PIECE_BYTES):
            yield os.pread(self._descriptor, min(_PIECE_BYTES, self.size - offset), offset)


def _identity(info: os.stat_result) -> tuple[int, int]:
    """What a write to a file changes: its size and modification time (not its change time, which
    a rename or the removal of its name also sets, while the content read stays the same)."""
    return info.st_size, info.st_mtime_ns


# A line with its end (\r\n, \n or a lone \r, as a file opened with newline="" splits), or a last
# line without one; never empty.
_LINE = re.compile(r"[^\r\n]*(?:\r\n?|\n)|[^\r\n]+$")


def csv_rows(text: str) -> Iterator[list[str]]:
    """The rows of CSV text, fed to the reader line by line from the text itself (``io.StringIO``
    would hold a copy of it at four bytes a character)."""
    return csv.reader(m.group() for m in _LINE.finditer(text))


_BYTE_LINE = re.compile(rb"[^\r\n]*(?:\r\n?|\n)|[^\r\n]+$")


def byte_lines(pieces: Iterable[bytes]) -> Iterator[str]:
    """The lines of a content given in pieces (as :func:`csv_rows` splits text), each decoded only
    when it is asked for."""
    encoding, held = "utf-8-sig", []
    for piece in pieces:
        held.append(piece)
        if b"\n" not in piece and b"\r" not in piece:
            continue  # a line longer than a piece: joined once, when its end comes
        buffer = b"".join(held)
        # Whole lines: to the last line end, but for a \r at the very end (a \n may follow it).
        cut = max(buffer.rfind(b"\n"), buffer.rfind(b"\r", 0, len(buffer) - 1)) + 1
        for match in _BYTE_LINE.finditer(buffer, 0, cut):
            yield match.group().decode(encoding)
            encoding = "utf-8"
        held = [buffer[cut:]]
    for match in _BYTE_LINE.finditer(b"".join(held)):
        yield match.group().decode(encoding)
        encoding = "utf-8"


def header_line_bytes(pieces: Iterable[bytes]) -> int:
    """The length in bytes of the first line (to its first \\n or \\r) of a content given in pieces."""
    length = 0
    for piece in pieces:
        ends = [i for i in (piece.find(b"\n"), piece.find(b"\r")) if i >= 0]
        if ends:
            return length + min(ends)
        length += len(piece)
    return length
