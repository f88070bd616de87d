"""The DuckDB store: benchmark runs, per-request rows and live metrics in one embedded file.

* Schema versioned in ``meta``; :data:`MIGRATIONS` bring any older file forward on open
  (:mod:`specviz.results.schema`).
* ``runs``: one row per benchmark run, columns :data:`specviz.results.schema.RUN_COLUMNS`.
  ``requests``: per-request rows where a file has them. ``imports``: one row per imported file.
* Imports are transactional (a file goes in whole or not at all) and idempotent by content hash.
* Every operation opens its own connection and closes it when done, so the app, the command line
  and a recorder can share one file.
* :meth:`Store.query` runs a user's SQL in :mod:`specviz.results.sandbox` over Arrow copies of the tables.
* Live metrics (schema 3): :meth:`Store.record_scrape` stores a scrape's recognised series in
  ``snapshots`` and, per model, the window since the source's previous scrape in ``windows``, in one
  transaction; :meth:`Store.save_live_run` makes a time range of windows a run of format ``live``.

One class, built in layers, each a module: ``connection`` (connections, transactions, the schema
check and migrations), ``imports`` (runs and imports, reads and the console; a user's CSV through
``csv_import``; the runs another file already holds, found through ``repeats``; what a page reads of the runs, bounded and kept for every session, through
``shown``), ``live`` (the live tables).
"""

from __future__ import annotations

from specviz.results.schema import MIGRATIONS, SCHEMA_VERSION

from .connection import StoreError
from .imports import CONSOLE_TABLES, ImportResult
from .live import LiveTables, RecordedScrape
from .shown import FilterValues, ShownRuns

__all__ = ["Store", "StoreError", "ImportResult", "RecordedScrape", "ShownRuns", "FilterValues", "SCHEMA_VERSION",
           "MIGRATIONS", "CONSOLE_TABLES"]


class Store(LiveTables):
    """One DuckDB file of runs, shared with other threads and processes.

    A Store holds no connection between calls: each opens one (read-only to read, read-write to
    write), does its work and closes it, waiting up to ``lock_timeout_s`` for the file where another
    process holds it. The file is checked, and migrated to the current schema, once, when the Store
    is made. ``":memory:"`` is the exception: an in-memory database lives only as long as a
    connection, so that Store keeps one (and each call takes a cursor of it).

    A connection is a cursor of one in-memory DuckDB per process with the file attached to it
    (read-only or read-write) and made its default database; the operations of this process share
    the attachment, and the last one to end detaches the file.

    Parameters
    ----------
    path : str or Path
        The database file (created with the current schema if missing) or ``":memory:"``.
    lock_timeout_s : float
        How long one call waits for the file while another process holds it (DuckDB lets one
        process write a file, and no other open it while it does).

    Attributes
    ----------
    read_only : bool
        Whether the file can only be read here (a read-only file or folder): imports and removals
        raise ``store.read_only``.
    """

