"""Runs and imports: a result file parsed and stored whole or not at all (idempotent by content hash),
removed, the shipped examples seeded once; the runs read back; a user's SQL over the tables in the
sandbox (:mod:`specviz.results.sandbox`)."""

from __future__ import annotations

import json
import os
import stat
import threading
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any

import duckdb
import pandas as pd

from specviz import settings
from specviz.errors import Notice, SpecvizError, out_of_room
from specviz.results import extra, importers, sandbox, schema
from specviz.results.importers import user_csv
from specviz.results.importers.base import IngestError, check_run_count
from specviz.results.schema import RUN_COLUMNS

from . import csv_import, shown
from .repeats import REPEATS, REPLACES, repeat_notices, run_named
from .connection import Connections, StoreError, quote_identifier

__all__ = ["RunsAndImports", "ImportResult", "CONSOLE_TABLES", "stored_name"]

CONSOLE_TABLES = ("runs", "requests", "imports", "snapshots", "windows")
"""The tables the SQL console (:meth:`Store.query`) sees."""
# The console's runs carry their import's origin ('user' or 'example'), as the explorer's tables do: a
# query over runs had counted the shipped examples with the user's runs, unsaid, and `origin` was no
# column of them (an analyst's pass).
_CONSOLE_SELECT = {"runs": "SELECT runs.*, (SELECT any_value(origin) FROM imports WHERE imports.content_hash = "
                           "runs.content_hash) AS origin FROM runs"}
# What the tables hold, in one cheap read: every write to runs, requests or imports adds or removes an
# imports row (with a new imported_at), but for the user's synthetic flag on runs already stored
# (:meth:`RunsAndImports.flag_synthetic`), which the count of flagged runs tells, the speculation a user
# stated (:meth:`RunsAndImports.state_speculation`), which the hash of the stated runs tells, and a stage's load
# given to a stored run (:func:`specviz.results.store.repeats._give_load`), which adds to its import's warnings; so this changes
# whenever the tables do. Reads kept between calls (runs, imports, the console's copy) are read
# again when it changes.
_IMPORTS_VERSION = ("SELECT count(*), bit_xor(hash(concat(content_hash, imported_at, warnings))), "
                    "(SELECT count(*) FILTER (WHERE synthetic_acceptance) FROM runs), "
                    "(SELECT bit_xor(hash(concat(run_id, spec_method, num_speculative_tokens))) FROM runs "
                    "WHERE speculation_by_user IS NOT NULL) FROM imports")
# A run whose file says nothing of speculation, as :func:`specviz.results.explorer.says_nothing_of_speculation`
# tells it: the runs whose speculation a user may state (:meth:`RunsAndImports.state_speculation`).
_SAYS_NOTHING = ("coalesce(trim(spec_method), '') = '' AND num_speculative_tokens IS NULL "
                 "AND acceptance_length IS NULL AND acceptance_rate IS NULL")
# A run whose file gives a γ of 1 or more, or an acceptance, but no method, as
# :func:`specviz.results.explorer.method_unsaid` tells it: a method may be stated for it, its γ kept.
_METHOD_UNSAID = ("coalesce(trim(spec_method), '') = '' AND coalesce(num_speculative_tokens, 1) >= 1 "
                  f"AND NOT ({_SAYS_NOTHING})")
# The console's copy holds the live tables too, which only grow (a recorder appends to them).
_CONSOLE_VERSION = ("SELECT *, (SELECT count(*) FROM snapshots), (SELECT max(time) FROM snapshots), "
                    f"(SELECT count(*) FROM windows), (SELECT max(time_end) FROM windows) FROM ({_IMPORTS_VERSION})")

# The characters of a content hash that begin its runs' ids (``<hash[:12]>-<index>``): an import's
# short id, which :meth:`RunsAndImports.find_import` takes and names.
_SHORT_ID = 12
# The stored names an error lists where a name matched none: enough to see a typo, not a terminal's
# worth of a store of thousands.
_NAMED_MAX = 10


@dataclass
class ImportResult:
    """What happened to one file."""

    file: str
    status: str  # "imported", "skipped", or "replaced" (a live save over an earlier one)
    format: str = ""
    runs: int = 0
    requests: int = 0
    warnings: list[Notice] = field(default_factory=list)
    unmatched_columns: list[str] = field(default_factory=list)  # CSV columns kept only in extra
    content_hash: str = ""  # the file's, where it is stored (imported, or skipped as already imported)
    imported_as: str = ""  # skipped: the name its content was stored under, where that is another name
    runs_from: tuple[str, ...] = ()  # skipped: the files its runs were stored from (its content is new)

    @property
    def reason(self) -> Notice | None:
        """Why a skipped file added nothing (its runs' other files, the name its content is stored
        under, or the same file again); None for an import."""
        if self.status != "skipped":
            return None
        if self.runs_from:
            return Notice("store.skipped.runs_from", others=", ".join(self.runs_from))
        return Notice("store.skipped.as", other=self.imported_as) if self.imported_as else Notice("store.skipped.same")

    @property
    def message(self) -> str:
        """:attr:`reason` in English ("already imported as a.jsonl"); empty for an import."""
        return "" if self.reason is None else str(self.reason)


def _note_held_for(cur: duckdb.DuckDBPyConnection, name: str, repeated: dict[int, tuple[str, str]]) -> None:
    """On the import of each file that holds the runs of ``name``, a file skipped whole for it
    (``repeated``: its runs, each with the file that holds it), ``store.held_for`` naming ``name`` and
    those runs, once: removing that import then names ``name``, whose runs go with it and which no
    import holds (a CLI pass: a sweep's run=0.json, skipped for its summary.json, had gone without a
    word with the summary's removal)."""
    for said in repeat_notices(repeated, "store.held_for"):
        holder, runs = said.params["other"], said.params["runs"]
        held = Notice("store.held_for", file=name, runs=runs).to_json()
        for content_hash, warnings in cur.execute("SELECT content_hash, CAST(warnings AS VARCHAR) FROM imports "
                                                  "WHERE source_file = ?", [holder]).fetchall():
            stored = json.loads(warnings or "[]")
            if held not in stored:
                cur.execute("UPDATE imports SET warnings = ? WHERE content_hash = ?",
                            [json.dumps([*stored, held]), content_hash])


def stored_name(name: str) -> str:
    """A file's name as the store keeps it (``source_file``): whole up to ``SPECVIZ_STORED_TEXT_CHARS``
    characters, else "…" and its last ones, the file's own name after a long folder path (an attack
    pass: a name of 1,000,005 characters was stored whole, where a run's other texts are cut at 500)."""
    most = settings.get("SPECVIZ_STORED_TEXT_CHARS")
    return name if len(name) <= most else "…" + name[len(name) - most + 1:]


def _already_imported(name: str, earlier: str, content_hash: str) -> ImportResult:
    """The report of a file whose content is stored: under another name (a copy, a renamed file, the
    same file in another folder), it names that one, since nothing of this name will show in the runs."""
    if earlier == name:
        return ImportResult(name, "skipped", content_hash=content_hash)
    return ImportResult(name, "skipped", content_hash=content_hash, imported_as=earlier)


def _check_size(name: str, size: int, max_bytes: int | None) -> None:
    if max_bytes is not None and size > max_bytes:
        raise IngestError("ingest.too_large", name, size=size, limit=max_bytes)


_NOT_REGULAR = ((stat.S_ISDIR, "directory"), (stat.S_ISCHR, "device"), (stat.S_ISBLK, "device"),
                (stat.S_ISFIFO, "fifo"), (stat.S_ISSOCK, "socket"))


def _require_regular(name: str, mode: int) -> None:
    if not stat.S_ISREG(mode):
        kind = next((kind for test, kind in _NOT_REGULAR if test(mode)), "other")
        raise IngestError(f"ingest.not_regular.{kind}", name)


def _open_regular_file(path: Path, name: str, max_bytes: int | None) -> importers.OpenedSource:
    """A regular file (symlinks followed), opened once, with a bound: a device such as /dev/zero, a
    FIFO, a socket or a directory is refused before it is read. Errors name the path."""
    shown = str(path)
    try:
        _require_regular(shown, os.stat(path).st_mode)
        # O_NONBLOCK: a FIFO put in the file's place after the stat cannot block the open.
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        try:
            info = os.fstat(descriptor)
            _require_regular(shown, info.st_mode)  # what was opened, not only what was looked at
            _check_size(shown, info.st_size, max_bytes)  # before reading any of it
            return importers.OpenedSource(name, descriptor)
        except BaseException:
            os.close(descriptor)
            raise
    except (OSError, MemoryError) as exc:
        raise importers.as_ingest_error(shown, exc) from None


def delete_import(cur: duckdb.DuckDBPyConnection, content_hash: str) -> int:
    """Delete one imported file's runs, requests and imports row (inside the caller's transaction)."""
    removed = cur.execute("SELECT count(*) FROM runs WHERE content_hash = ?", [content_hash]).fetchone()[0]
    cur.execute("DELETE FROM requests WHERE run_id IN (SELECT run_id FROM runs WHERE content_hash = ?)",
                [content_hash])
    cur.execute("DELETE FROM runs WHERE content_hash = ?", [content_hash])
    cur.execute("DELETE FROM imports WHERE content_hash = ?", [content_hash])
    return removed


class RunsAndImports(Connections):
    """Imports, removals, reads and the SQL console of a store (see :class:`specviz.results.store.Store`).

    Reads kept between calls (the runs, the imports, the console's copy of the tables) are read
    again only when the tables changed.
    """

    def __init__(self, path: str | Path, lock_timeout_s: float = 10.0) -> None:
        self._snapshot_cache: tuple[tuple, sandbox.Snapshot] | None = None
        self._kept_reads = shown.KeptReads(settings.get("SPECVIZ_READ_CACHE_BYTES"))
        self._cache_lock = threading.Lock()
        super().__init__(path, lock_timeout_s)

    def close(self) -> None:
        """Release the console's copy of the tables, and what :meth:`Connections.close` releases."""
        if self._snapshot_cache is not None:
            self._snapshot_cache[1].close()
            self._snapshot_cache = None
        super().close()

    def import_path(self, path: Path, max_bytes: int | None = None,
                    csv_mapping: dict[str, str] | None = None) -> ImportResult:
        """:meth:`import_file` for a file on disk, named as given.

        Only a regular file is read (symlinks followed), of no more than ``max_bytes``. The path
        is opened once and the file read through that descriptor (never the path again, which
        DuckDB would expand as a glob or a ``~`` and which another file may have taken by then),
        hashed a piece at a time beside the format's reading; a file written to while it is
        imported is refused (:meth:`specviz.results.importers.OpenedSource.check_unchanged`), and a
        large CSV is never held in memory.

        Raises
        ------
        specviz.results.importers.IngestError
            As :meth:`import_file`, and if the path is missing, unreadable, or a device, FIFO,
            socket or directory.
        """
        self._require_writable()
        path = Path(path)
        name = os.fsencode(path).decode("utf-8", "replace")  # stored: bytes of no UTF-8 name become U+FFFD
        user_csv.check_mapping(name, csv_mapping or {})
        with _open_regular_file(path, name, max_bytes) as source:
            return self.import_file(name, source, csv_mapping=csv_mapping)

    def import_file(self, name: str, data: bytes | importers.Source, max_bytes: int | None = None,
                    csv_mapping: dict[str, str] | None = None, replace: bool = False,
                    origin: str = "user") -> ImportResult:
        """Import one result file, whole or not at all.

        Parameters
        ----------
        name : str
            The file's name as the user gave it (stored as ``source_file``, its last
            ``SPECVIZ_STORED_TEXT_CHARS`` characters: :func:`stored_name`; never used as a path).
        data : bytes or specviz.results.importers.Source
            Its content, or a source that holds it (as :meth:`import_path` reads a file).
        max_bytes : int, optional
            Refuse larger files.
        csv_mapping : dict, optional
            For a plain CSV: the user's column name → canonical column, for names the synonyms miss
            (one of :data:`specviz.results.importers.user_csv.MAPPABLE_COLUMNS`).
        replace : bool
            Import content that is already stored again (with a new mapping): its old runs and
            requests are deleted in the same transaction.
        origin : str
            ``"user"``, or ``"example"`` for the shipped examples (:data:`specviz.results.schema.ORIGINS`).

        Returns
        -------
        ImportResult
            ``status="skipped"`` if the same content was imported before (a file on disk is hashed
            while it is parsed, so it is parsed first, and one that no longer parses says so), and
            also if every run of the file is a ``vllm bench sweep`` run already stored from another
            file of the sweep
            (``run=0.json`` after the ``summary.json`` that repeats it; :func:`specviz.results.store.repeats._sweep_repeats`).
            Then, as for the same content, nothing of the file is stored, not even its ``imports``
            row: what it holds is in the store once, under the other file, and if that file is
            removed, importing this one again stores its runs. The warnings name the other file.
            Where only some runs repeat (``summary.json`` after ``run=0.json``), the others are
            imported and a warning names the file that holds the repeats. An AIPerf run already
            stored from another file (the same ``benchmark_id`` and figures; :func:`specviz.results.store.repeats._aiperf_repeats`)
            is passed over the same way, and so is a run of a vLLM, SGLang or SpecForge file of
            several runs that is the same record as a stored one (a file that its tool appended
            more runs to, imported again; :func:`specviz.results.store.repeats._appended_repeats`), and an inference-perf report
            whose run is stored from another report of the same requests that holds more of it
            (a summary after its per-request report, or after the report of a run's only stage; a
            stage report after the per-request report, whose run takes the stage's load:
            :func:`specviz.results.store.repeats._stored_from_later`). The other way round, that report replaces the stored
            one's import (:func:`specviz.results.store.repeats._replacing_earlier`; the per-request report's run taking a
            stage's load), with a warning naming it: either way the run is stored once, from the
            per-request report where it is stored, with the stage's load where the stage's report
            is. A stage's benchmark report (``*.partial.stage_N.yaml``) and its lifecycle report are
            one run too, which takes the p99s only the benchmark report gives, whichever came first
            (:func:`specviz.results.store.repeats._given_to_lifecycle`, ``_taking_report``).

        Raises
        ------
        specviz.results.importers.IngestError
            For anything wrong with the file: too large, empty, binary, malformed, of no known
            shape, too deeply nested, too dense for ``SPECVIZ_IMPORT_MEMORY_BYTES``, and any other
            exception reading it raised (:class:`specviz.results.importers.UnrecognisedColumnsError` for a CSV
            none of whose columns is recognised), and a ``csv_mapping`` to a column the store fills
            in itself (``ingest.csv_mapping_reserved``, before the file is read); nothing is written.
            Also a ``vllm bench sweep`` run that another file of the sweep stored with other figures
            (``ingest.sweep_run_differs``, naming the field; :func:`specviz.results.store.repeats._sweep_repeats`): what is stored stays.
        ValueError
            An ``origin`` that is none of :data:`specviz.results.schema.ORIGINS` (a caller's mistake).
        """
        if origin not in schema.ORIGINS:
            raise ValueError(f"origin {origin!r} is none of {schema.ORIGINS}")
        self._require_writable()
        name = stored_name(name)
        user_csv.check_mapping(name, csv_mapping or {})
        with ExitStack() as stack:
            source = data if isinstance(data, importers.Source) else stack.enter_context(importers.Source(name, data))
            _check_size(name, source.size, max_bytes)
            restored: tuple[str, ...] = ()
            if source.hashed_at_once and not replace and (earlier := self._stored_as(source.content_hash)) is not None:
                if not (restored := self._left_to_removed(source.content_hash)):
                    return _already_imported(name, earlier, source.content_hash)
                replace = True
            now = datetime.now(timezone.utc).replace(tzinfo=None)
            unmatched: list[str] = []
            fmt = content_hash = ""
            try:
                # Parsed before the file is opened for writing: other processes wait only for the writes.
                parsed = importers.parse(name, source)
                fmt = parsed.format
                content_hash = source.content_hash  # a file on disk: hashed beside the parse
                if not source.hashed_at_once and not replace and (earlier := self._stored_as(content_hash)) is not None:
                    if not (restored := self._left_to_removed(content_hash)):
                        return _already_imported(name, earlier, content_hash)
                    replace = True
                check_run_count(name, len(parsed.runs))
                with self._transaction() as cur:
                    if replace:
                        delete_import(cur, content_hash)
                    if fmt == "csv":
                        runs, requests, warnings, unmatched = csv_import.import_csv(cur, source, content_hash, now,
                                                                                    csv_mapping or {}, name)
                    else:
                        repeated: dict[int, tuple[str, str]] = {}
                        notices = [Notice("store.restored_runs", files=", ".join(restored))] if restored else []
                        for find, notice in REPEATS.get(fmt, ()):
                            found = {i: at for i, at in find(cur, name, parsed).items() if i not in repeated}
                            repeated.update(found)
                            notices += repeat_notices(found, notice)
                        if repeated and len(repeated) == len(parsed.runs):
                            others = tuple(sorted({other for other, _ in repeated.values()}))
                            _note_held_for(cur, name, repeated)
                            return ImportResult(name, "skipped", fmt, warnings=notices, runs_from=others)
                        for find, notice in REPLACES.get(fmt, ()):
                            for replaced, (other, run_name) in find(cur, name, parsed).items():
                                delete_import(cur, replaced)
                                notices.append(Notice(notice, other=other, runs=run_named(run_name)))
                        runs, requests, warnings = self._insert_parsed(cur, name, parsed, content_hash, now,
                                                                       repeated.keys())
                        warnings = [*warnings, *notices]
                    source.check_unchanged()  # all read: what was hashed is what is stored
                    cur.execute("INSERT INTO imports (content_hash, source_file, source_format, imported_at, runs, "
                                "requests, warnings, origin) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                                [content_hash, name, fmt, now, runs, requests,
                                 json.dumps([w.to_json() for w in warnings]), origin])
            except BaseException as exc:
                if out_of_room(exc):  # parsing spilled to a full temporary folder
                    raise self.no_room(exc) from None
                if isinstance(exc, (duckdb.ConstraintException, duckdb.TransactionException)):
                    # A key taken, or a write conflict: another thread, or a process since the check
                    # above, is importing the same content (the key of its imports row, or the run
                    # ids, which start with the hash's first 12 characters); it may not be committed yet.
                    return self._await_concurrent_import(name, fmt, content_hash)
                if isinstance(exc, duckdb.IOException):  # the disk, not the file: full, or a write refused
                    raise StoreError("store.write_failed", detail=str(exc).splitlines()[0]) from None
                if isinstance(exc, duckdb.Error):  # the file's values, not the store, were at fault
                    raise IngestError("ingest.not_stored", name, detail=str(exc).splitlines()[0]) from None
                if isinstance(exc, Exception) and not isinstance(exc, SpecvizError):
                    # Anything else reading this file raised (deep nesting, a huge number, no memory
                    # left, a parser's bug) is this file's error, not the batch's end. KeyboardInterrupt
                    # and SystemExit go on; so does a SpecvizError, which is about the store, not the file.
                    raise importers.as_ingest_error(name, exc) from None
                raise
            return ImportResult(name, "imported", fmt, runs, requests, warnings, unmatched_columns=unmatched,
                                content_hash=content_hash)

    def _stored_as(self, content_hash: str, read_only: bool = True) -> str | None:
        """The name the content was imported under, or None where it is not stored."""
        with self._connection(read_only) as con:
            found = con.execute("SELECT source_file FROM imports WHERE content_hash = ?", [content_hash]).fetchone()
        return None if found is None else found[0]

    def _left_to_removed(self, content_hash: str) -> tuple[str, ...]:
        """The files the stored import of ``content_hash`` left some of its runs to, as already stored
        from them (its repeat notices: :data:`specviz.results.store.repeats.REPEATS`), that are no
        longer imported: those runs went with them, and the file imported again replaces its import
        to have them back (an analyst's pass: summary.json, once run=0.json was removed, held one of
        its two runs and was refused as "already imported")."""
        repeated = {key for finders in REPEATS.values() for _, key in finders}
        with self._connection() as con:
            found = con.execute("SELECT CAST(warnings AS VARCHAR) FROM imports WHERE content_hash = ?",
                                [content_hash]).fetchone()
            present = {name for (name,) in con.execute("SELECT DISTINCT source_file FROM imports").fetchall()}
        if found is None:
            return ()
        holders = {said.params.get("other") for said in map(Notice.from_json, json.loads(found[0] or "[]"))
                   if said.key in repeated}
        return tuple(sorted(holder for holder in holders if holder and holder not in present))

    def _await_concurrent_import(self, name: str, fmt: str, content_hash: str) -> ImportResult:
        """Wait for a concurrent import of the same content to commit, as long as for a file another
        process holds (``lock_timeout_s``), then report it as done. Each look is a write connection:
        it joins this process's importing threads rather than waiting for them all to finish, and
        sees their commits at once."""
        deadline = time.monotonic() + self.lock_timeout_s
        while time.monotonic() < deadline:
            if self._stored_as(content_hash, read_only=False) is not None:
                return ImportResult(name, "skipped", fmt)
            time.sleep(0.05)
        raise IngestError("ingest.concurrent", name)

    def _insert_parsed(self, cur: duckdb.DuckDBPyConnection, name: str, parsed: importers.Parsed,
                       content_hash: str, now: datetime, left_out: Iterable[int] = ()) -> tuple[int, int, list[Notice]]:
        """Insert a parsed file's runs and requests but those of the runs ``left_out`` (by index):
        each run keeps the id of its place in the file, so its requests find it by their index."""
        if not parsed.runs:
            raise IngestError("ingest.no_runs", name)
        prefix = content_hash[:12]
        left_out = set(left_out)
        kept = [index for index in range(len(parsed.runs)) if index not in left_out]
        runs = [parsed.runs[index] for index in kept]
        # Column by column, and only the columns some run has (the rest are NULL): a dict of every
        # column for each run would cost more than the run itself.
        present = {column for run in runs for column in run}
        columns: dict[str, Any] = {column: [run.get(column) for run in runs]
                                   for column in RUN_COLUMNS if column in present}
        columns.update(run_id=[f"{prefix}-{index}" for index in kept], source_file=name,
                       source_format=parsed.format, imported_at=now, content_hash=content_hash)
        casts = ", ".join(f"CAST({quote_identifier(c)} AS {RUN_COLUMNS[c]}) AS {quote_identifier(c)}" for c in columns)
        cur.register("incoming_runs", pd.DataFrame(columns))
        cur.execute(f"INSERT INTO runs BY NAME SELECT {casts} FROM incoming_runs")
        cur.unregister("incoming_runs")
        requests = parsed.requests
        if left_out and not requests.empty:
            requests = requests[~requests.run_index.isin(list(left_out))]
        if not requests.empty:  # run ids are made by DuckDB, not as a Python string per request
            cur.register("incoming_requests", requests)
            cur.execute(f"INSERT INTO requests BY NAME SELECT '{prefix}-' || CAST(run_index AS VARCHAR) AS run_id, "
                        "* EXCLUDE (run_index) FROM incoming_requests")
            cur.unregister("incoming_requests")
        return len(runs), len(requests), parsed.warnings

    def seed_examples(self, paths: list[Path]) -> list[ImportResult]:
        """Import the shipped example files once, on a store's first use; never again after that,
        so examples a user removed stay removed."""
        with self._connection() as con:
            if con.execute("SELECT 1 FROM meta WHERE key = 'examples_seeded'").fetchone():
                return []
        results = [self.import_file(f"examples/{p.name}", p.read_bytes(), origin="example") for p in paths]
        with self._connection(read_only=False) as con:
            con.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('examples_seeded', 'yes')")
        return results

    def find_import(self, given: str) -> dict[str, Any]:
        """The one import that ``given`` names, for its removal: by its id (its content hash, whole or
        from its first 12 characters, which begin its runs' ids) or by the name it was imported under.

        Parameters
        ----------
        given : str
            An import's id, or its file's name as it was imported (``source_file``).

        Returns
        -------
        dict
            The import's row of ``imports``.

        Raises
        ------
        StoreError
            ``store.no_imports`` where the store holds none; ``store.no_such_import`` naming the
            stored files where nothing matches; ``store.ambiguous_import`` naming each match's id
            and time where a name matches several imports (one name, other contents).
        """
        with self._connection() as con:
            cursor = con.execute("SELECT * FROM imports WHERE source_file = ? OR (length(?) >= ? AND "
                                 "starts_with(content_hash, ?)) ORDER BY imported_at",
                                 [given, given, _SHORT_ID, given])
            columns = [column[0] for column in cursor.description]
            found = [dict(zip(columns, row)) for row in cursor.fetchall()]
            stored = [] if found else [name for (name,) in con.execute(
                "SELECT DISTINCT source_file FROM imports ORDER BY ALL LIMIT ?", [_NAMED_MAX + 1]).fetchall()]
        if len(found) == 1:
            return found[0]
        if found:
            choices = "; ".join(f"{row['content_hash'][:_SHORT_ID]} ({row['imported_at']:%Y-%m-%d %H:%M:%S})"
                                for row in found)
            raise StoreError("store.ambiguous_import", given=given, count=len(found), choices=choices)
        if not stored:
            raise StoreError("store.no_imports", given=given)
        files = ", ".join(stored[:_NAMED_MAX]) + (" …" if len(stored) > _NAMED_MAX else "")
        raise StoreError("store.no_such_import", given=given, files=files)

    def sharing_imports(self, content_hash: str) -> list[Notice]:
        """The other files that left some of their runs to this one, as already stored from it:
        removing it removes those runs too, which no other import holds. One ``exp.shared_runs``
        notice (``exp.shared_run`` for one run) per imported file that did (the repeat notices of
        :data:`specviz.results.store.repeats.REPEATS` that name its file), naming it and the runs its
        notice named, and one ``exp.skipped_runs`` per file skipped whole for it (``store.held_for``
        on its own import)."""
        repeated = {key for finders in REPEATS.values() for _, key in finders}
        with self._connection() as con:
            found = con.execute("SELECT source_file, CAST(warnings AS VARCHAR) FROM imports WHERE content_hash = ?",
                                [content_hash]).fetchall()
            if not found:
                return []
            others = con.execute("SELECT source_file, CAST(warnings AS VARCHAR) FROM imports WHERE content_hash <> ? "
                                 "ORDER BY imported_at, source_file", [content_hash]).fetchall()
        shared = [Notice("exp.skipped_runs", file=said.params["file"], runs=said.params["runs"])
                  for said in map(Notice.from_json, json.loads(found[0][1] or "[]")) if said.key == "store.held_for"]
        for other, warnings in others:
            for said in map(Notice.from_json, json.loads(warnings or "[]")):
                if said.key in repeated and said.params.get("other") == found[0][0]:
                    runs = said.params.get("runs", "")
                    one = isinstance(runs, str) and runs and "," not in runs
                    shared.append(Notice("exp.shared_run" if one else "exp.shared_runs", file=other, runs=runs))
        return shared

    def remove_import(self, content_hash: str) -> int:
        """Delete one imported file's runs and requests (one transaction); returns the runs removed."""
        with self._transaction() as cur:
            return delete_import(cur, content_hash)

    def flag_synthetic(self, content_hash: str) -> int:
        """Mark every run of one imported file as measured at synthetic acceptance (the user's word:
        :mod:`specviz.results.synthetic`); returns the runs marked."""
        with self._transaction() as cur:
            return cur.execute("UPDATE runs SET synthetic_acceptance = true WHERE content_hash = ?",
                               [content_hash]).fetchone()[0]

    def state_speculation(self, content_hash: str, method: str, gamma: int | None) -> int:
        """Say what one imported file's runs ran where the file does not: plain decoding (``method``
        ``none``) or a method of :data:`specviz.results.schema.STATED_METHODS` with ``gamma`` draft
        tokens, for the runs that say nothing of speculation (no method, no γ, no acceptance figure:
        :func:`specviz.results.explorer.says_nothing_of_speculation`; ``speculation_by_user``
        ``method_gamma``); the method alone for the runs that give a γ or an acceptance but no method
        (vLLM 0.25.1's MTP run: :func:`specviz.results.explorer.method_unsaid`; ``method``, its γ kept,
        and never ``none``, for they speculated); or either again where stated before. What a file
        says is never changed; returns the runs changed.

        Raises
        ------
        StoreError
            ``store.unknown_method`` for a method not listed, ``store.stated_gamma`` for a γ that is
            not a whole number from 1 to ``SPECVIZ_GAMMA_MAX`` (a plain run's is 0, whatever given).
        """
        if method not in schema.STATED_METHODS:
            raise StoreError("store.unknown_method", given=method, methods=", ".join(schema.STATED_METHODS))
        most = settings.get("SPECVIZ_GAMMA_MAX")
        if method != "none" and not (isinstance(gamma, int) and not isinstance(gamma, bool) and 1 <= gamma <= most):
            raise StoreError("store.stated_gamma", given=gamma, most=most)
        with self._transaction() as cur:
            changed = cur.execute(
                "UPDATE runs SET spec_method = ?, num_speculative_tokens = ?, speculation_by_user = 'method_gamma' "
                f"WHERE content_hash = ? AND (speculation_by_user = 'method_gamma' OR ({_SAYS_NOTHING}))",
                [method, 0 if method == "none" else gamma, content_hash]).fetchone()[0]
            if method != "none":
                changed += cur.execute(
                    "UPDATE runs SET spec_method = ?, speculation_by_user = 'method' "
                    f"WHERE content_hash = ? AND (speculation_by_user = 'method' OR ({_METHOD_UNSAID}))",
                    [method, content_hash]).fetchone()[0]
            return changed

    def remove_examples(self) -> int:
        """Delete every import of the shipped examples (``imports.origin = 'example'``), whatever its
        file name, with their runs and requests, in one transaction; returns the runs removed. A
        user's file is never one of them, even under a name such as ``examples/x.csv``."""
        with self._transaction() as cur:
            examples = cur.execute("SELECT content_hash FROM imports WHERE origin = 'example'").fetchall()
            return sum(delete_import(cur, content_hash) for (content_hash,) in examples)

    # ----------------------------------------------------------------------------- reading
    def _kept_read(self, key: Hashable, read: Callable[[duckdb.DuckDBPyConnection], Any]) -> Any:
        """What ``read`` returns on a connection, kept for every caller of this process
        (:class:`~specviz.results.store.shown.KeptReads`) and read again only when an import or a
        removal (of this process or another) changed the tables since: a page reads on every rerun,
        and the version costs a tenth of the read."""
        with self._connection() as con, self._transaction(con):
            version = con.execute(_IMPORTS_VERSION).fetchall()[0]
            return self._kept_reads.get(key, version, lambda: read(con))

    def runs(self) -> pd.DataFrame:
        """Every run with its canonical columns, oldest import first, whole (for the command line;
        a page reads :meth:`shown_runs`)."""
        with self._connection() as con:
            return con.execute("SELECT * FROM runs ORDER BY imported_at, source_file, length(run_id), run_id").df()

    def run_rows(self, run_ids: Sequence[str]) -> list[dict[str, Any]]:
        """The runs of these ids, whole and as Python values (``extra`` its JSON text), in the order
        given; an id that no stored run has is left out."""
        with self._connection() as con:
            cursor = con.execute("SELECT * FROM runs WHERE list_contains(?, run_id)", [list(run_ids)])
            names = [column[0] for column in cursor.description]
            found = {row["run_id"]: row for row in (dict(zip(names, values)) for values in cursor.fetchall())}
        return [found[run_id] for run_id in dict.fromkeys(run_ids) if run_id in found]

    def mean_input_tokens(self, run_ids: Sequence[str]) -> dict[str, float]:
        """The mean input tokens of each of these runs' stored requests, for the runs that have some."""
        with self._connection() as con:
            return dict(con.execute("SELECT run_id, avg(input_tokens) FROM requests WHERE list_contains(?, run_id) "
                                    "AND input_tokens IS NOT NULL GROUP BY run_id", [list(run_ids)]).fetchall())

    def shown_runs(self, filters: Mapping[str, Sequence[Any]] | None = None) -> shown.ShownRuns:
        """The runs a page shows: the newest that match ``filters`` (column → chosen values), bounded
        in count and text (:func:`specviz.results.store.shown.read_shown_runs`), kept for every session."""
        filters = {column: tuple(chosen) for column, chosen in (filters or {}).items() if chosen}
        return self._kept_read(("shown_runs", tuple(sorted(filters.items()))),
                               lambda con: shown.read_shown_runs(con, filters))

    def filter_values(self, columns: Sequence[str], origin: str) -> dict[str, shown.FilterValues]:
        """The values each of ``columns`` offers as a filter, over the stored runs of ``origin``
        (``"user"`` or ``"example"``, :func:`specviz.results.store.shown.read_filter_values`), kept for
        every session."""
        return self._kept_read(("filter_values", tuple(columns), origin),
                               lambda con: shown.read_filter_values(con, columns, origin))

    def imports(self) -> pd.DataFrame:
        """One row per imported file."""
        return self._kept_read("imports", lambda con: con.execute("SELECT * FROM imports ORDER BY imported_at").df())

    def request_summary(self) -> pd.DataFrame:
        """Per run: request count and p50/p99 of TTFT and ITL from the ``requests`` table."""
        with self._connection() as con:
            return con.execute("""
                SELECT r.run_id, any_value(runs.concurrency) AS concurrency, count(*) AS requests,
                       quantile_cont(ttft_ms, 0.5) AS p50_ttft_ms, quantile_cont(ttft_ms, 0.99) AS p99_ttft_ms,
                       quantile_cont(itl_ms, 0.5) AS p50_itl_ms, quantile_cont(itl_ms, 0.99) AS p99_itl_ms
                FROM requests r JOIN runs USING (run_id) GROUP BY r.run_id ORDER BY r.run_id""").df()

    def request_acceptance(self) -> pd.DataFrame:
        """Per stored run that has per-request acceptance (schema 4): its γ, its own acceptance
        length, how many of its requests give one and its tree's top-k (``tree_width``, NaN for a
        chain: :func:`specviz.results.extra.tree_width`), newest import first; kept for every session
        (a scan of every request, which the Latency view and the Explorer would pay on each rerun)."""
        def read(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
            found = con.execute("""
                SELECT runs.run_id, any_value(runs.source_file) AS source_file, any_value(runs.label) AS label,
                       any_value(runs.num_speculative_tokens) AS num_speculative_tokens,
                       any_value(runs.concurrency) AS concurrency, any_value(runs.acceptance_length) AS acceptance_length,
                       count(*) AS requests, CAST(any_value(runs.extra) AS VARCHAR) AS extra
                FROM requests JOIN runs USING (run_id)
                WHERE requests.acceptance_length IS NOT NULL OR requests.accepted_tokens IS NOT NULL
                   OR requests.acceptance_rate IS NOT NULL
                GROUP BY runs.run_id ORDER BY any_value(runs.imported_at) DESC, runs.run_id""").df()
            widths = found.pop("extra").map(extra.tree_width)
            return found.assign(tree_width=pd.to_numeric(widths, errors="coerce"))
        return self._kept_read("request_acceptance", read)

    def request_acceptance_of(self, run_id: str) -> pd.DataFrame:
        """One run's requests, their acceptance figures and output tokens only (a run of a million
        requests is 40 MB of them, not the whole rows)."""
        with self._connection() as con:
            return con.execute("SELECT acceptance_length, accepted_tokens, drafts, acceptance_rate, output_tokens "
                               "FROM requests WHERE run_id = ?", [run_id]).df()

    # ----------------------------------------------------------------------------- console
    def _snapshot(self) -> sandbox.Snapshot:
        """The tables for the SQL sandbox, kept between calls (the Store outlives its connections)
        and made again only when an import or a removal changed them, or a recorder added snapshots
        or windows, in this process or another. The version of the tables and the copy are read in one transaction: a write of this
        process may share the attachment, and the copy must be of the version it is filed under."""
        with self._connection() as con, self._transaction(con):
            version = con.execute(_CONSOLE_VERSION).fetchall()[0]
            with self._cache_lock:
                if self._snapshot_cache is None or self._snapshot_cache[0] != version:
                    fresh = sandbox.Snapshot({table: con.sql(_CONSOLE_SELECT.get(table, f"SELECT * FROM {table}"))
                                              .to_arrow_table() for table in CONSOLE_TABLES})
                    self._snapshot_cache = (version, fresh)
                return self._snapshot_cache[1]

    def query(self, sql: str, limits: sandbox.Limits | None = None) -> sandbox.QueryResult:
        """Run one read-only statement of a user's SQL over ``runs``, ``requests``, ``imports``,
        ``snapshots`` and ``windows`` (:data:`CONSOLE_TABLES`) in the sandbox (:mod:`specviz.results.sandbox`); the time limit includes preparing the copy.

        Raises
        ------
        specviz.results.sandbox.QueryError
            If the statement is refused, fails, or exceeds a limit; its key says which.
        """
        started = time.monotonic()
        limits = limits or sandbox.Limits.from_settings()
        sandbox.check_length(sql, limits.max_sql_chars)  # before the copy is made: a refusal costs nothing
        return sandbox.run_query(sql, self._snapshot(), limits, started)
