"""Every path and limit of specviz in one declarative table, read from environment variables.

Each setting has a name (the environment variable), a default and a help text; ``docs/settings.md``
is made from this table (``make docs``), and ``tests/test_settings.py`` fails when it is stale.
Run ``python -m specviz.settings NAME`` to print a setting's current value (the Makefile does).

specviz runs from a checkout or installed from its wheel, which carries app.py, pages/ and data/ in
``specviz/_app``; :data:`ROOT` is the folder that holds them in either layout. Path defaults are
written relative to it (``data/specviz.duckdb``, as a reader of the checkout sees them) and resolved
by :func:`default_value`.
"""

from __future__ import annotations

import difflib
import math
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from .errors import InputError, Notice

__all__ = ["Setting", "SETTINGS", "get", "chosen", "default_value", "unknown_names", "user_data_dir", "ROOT", "INSTALLED"]

_PACKAGE = Path(__file__).resolve().parent
# Only the wheel has this folder (pyproject.toml puts app.py, pages/ and data/ there); a checkout
# keeps them beside the package, where `make run` serves them.
INSTALLED = (_PACKAGE / "_app").is_dir()
ROOT = _PACKAGE / "_app" if INSTALLED else _PACKAGE.parent


@dataclass(frozen=True)
class Setting:
    """One setting: its environment variable, default (as text), type and help.

    A relative path default is relative to :data:`ROOT`, where :func:`default_value` resolves it,
    except the default of a file specviz ``writes`` in an installed copy: that file goes to
    :func:`user_data_dir`, since site-packages may be read-only and is replaced by an upgrade.
    """

    name: str
    default: str
    kind: type
    help: str
    writes: bool = False


SETTINGS: tuple[Setting, ...] = (
    Setting("SPECVIZ_HOST", "127.0.0.1", str, "Address `make run` (`specviz app`) serves the app on."),
    Setting("SPECVIZ_PORT", "8501", int, "Port `make run` (`specviz app`) serves the app on."),
    Setting("SPECVIZ_VIEWER", "false", bool,
            "`true` makes the app a viewer: no uploads, no removal of runs (the SQL console stays, "
            "read-only as always). specviz has no login of its own: on a shared address anyone who "
            "reaches the port can use the app; put it behind your own authentication."),
    Setting("SPECVIZ_LANG", "en", str,
            "Language a new browser session starts in (`en` or `vi`); each reader can change it in the sidebar. "
            "The command line's messages are in it too, unless `--lang` says otherwise; any other value reads as `en`."),
    Setting("SPECVIZ_DATA_DIR", "data", Path,
            "Folder with the shipped presets (`gpus.csv`, `models.csv`, `model_configs/`); a relative path is "
            "read from the checkout, or from the copy an installed specviz carries."),
    Setting("SPECVIZ_DB", "data/specviz.duckdb", Path,
            "The DuckDB file that holds imported runs (created on first use); a relative path is read from the "
            "checkout. An installed specviz (`pip install .`) keeps it in `$XDG_DATA_HOME/specviz/` "
            "(`~/.local/share/specviz/` by default) instead. `:memory:` keeps the app's runs in its own process "
            "until it stops (the page says so); the command line refuses it.", writes=True),
    Setting("SPECVIZ_DB_LOCK_TIMEOUT_S", "10", float,
            "Seconds to wait for another process that holds the database file."),
    Setting("SPECVIZ_MAX_UPLOAD_BYTES", "200000000", int,
            "Largest result file accepted for import, in bytes; the Explorer's uploaders say it in whole MB, and "
            "`make run`'s server takes the largest of it and the config.json and tokenizer limits."),
    Setting("SPECVIZ_IMPORT_MEMORY_BYTES", "1000000000", int,
            "Memory one file's import may take, estimated before it is decoded; denser files are refused, in bytes."),
    Setting("SPECVIZ_STORED_TEXT_CHARS", "500", int,
            "Longest text an import stores in a run's text field (a model name, a label, a file's own "
            "series name); a longer one is cut, with a warning that names the field."),
    Setting("SPECVIZ_STORED_VALUE_CHARS", "4096", int,
            "Longest text an import keeps among a run's other values (`extra`); a longer one is cut, "
            "with a warning."),
    Setting("SPECVIZ_STORED_EXTRA_BYTES", "65536", int,
            "Most bytes of a run's other values (`extra`, as JSON) an import keeps; past it the largest "
            "values are left out, each named in a warning."),
    Setting("SPECVIZ_STORED_EXTRA_DEPTH", "32", int,
            "Deepest nesting of lists and objects an import keeps in one of a run's other values "
            "(`extra`); a deeper value is left out, with a warning (a report nested 400 deep had stopped "
            "every later export of reports)."),
    Setting("SPECVIZ_IMPORT_MAX_RUNS", "100000", int,
            "Most runs one file may bring (a CSV of one run per row included); a file of more is refused."),
    Setting("SPECVIZ_IMPORT_MAX_REPEAT_PAIRS", "100000", int,
            "Most pairs of a file's runs and stored runs an import compares to find the runs already "
            "stored (identical runs counted once); a file that would make more is refused."),
    Setting("SPECVIZ_IMPORT_MAX_COLUMNS", "1000", int,
            "Most columns a CSV may have to be imported (DuckDB's time grows faster than the column count)."),
    Setting("SPECVIZ_MAPPING_MAX_COLUMNS", "100", int,
            "Most columns the Explorer's mapping forms offer at once, over every file waiting for one (each is "
            "a drop-down drawn on every rerun: 1,000 took 3.4 s of the server's CPU a rerun)."),
    Setting("SPECVIZ_LISTED_FILES", "10", int,
            "Most names the Explorer lists of an uploaded folder's files that are no results (a README, a "
            "scrape saved as text), said in one line with how many more."),
    Setting("SPECVIZ_SHOWN_MAX_RUNS", "20000", int,
            "Most runs a page reads and shows: the newest that match its filters (the SQL console and "
            "the command line read them all)."),
    Setting("SPECVIZ_SHOWN_TEXT_CHARS", "200", int,
            "Longest text of a run a page shows (a name, a label, a field of `extra`); a longer one is cut with …."),
    Setting("SPECVIZ_SHOWN_EXTRA_CHARS", "16384", int,
            "Most characters of a run's `extra` a page reads: its scalar fields, for grouping sweeps, in "
            "order of path (lists are left out; a real SGLang result's fields take 14 KB)."),
    Setting("SPECVIZ_FILTER_MAX_VALUES", "1000", int,
            "Most values one of the Explorer's filters offers (the first in order; the page says when there are more)."),
    Setting("SPECVIZ_READ_CACHE_BYTES", "268435456", int,
            "Memory the runs read for pages may keep, shared by every session of one app process, in bytes."),
    Setting("SPECVIZ_SQL_TIMEOUT_S", "5", float, "Time limit of one SQL console query, in seconds."),
    Setting("SPECVIZ_SQL_MAX_ROWS", "10000", int, "Rows a SQL console query returns at most."),
    Setting("SPECVIZ_SQL_MAX_BYTES", "50000000", int,
            "Bytes of data a SQL console query returns at most (the rows that fit are shown; a query "
            "whose first row does not fit is refused)."),
    Setting("SPECVIZ_SQL_MEMORY_BYTES", "2000000000", int,
            "Address space one SQL console query may take, in bytes, beyond what its process holds "
            "before the query runs (DuckDB's own memory limit is half of it)."),
    Setting("SPECVIZ_SQL_MAX_CHARS", "20000", int, "Longest SQL console statement accepted, in characters."),
    Setting("SPECVIZ_SQL_WORKERS", "2", int,
            "SQL console queries that run at once per app process; others wait, within their time limit."),
    Setting("SPECVIZ_MAX_CONFIG_BYTES", "1000000", int,
            "Largest config.json accepted from an upload or paste, in bytes (the sidebar's uploaders say it in whole MB)."),
    Setting("SPECVIZ_MAX_TOKENIZER_BYTES", "50000000", int,
            "Largest tokenizer.json (or config.json) read when a draft is checked against a target, in bytes."),
    Setting("SPECVIZ_METRICS_ALLOW", "127.0.0.0/8,::1", str,
            "Hosts the app may read metrics from, for a visitor or a recorder: host names and networks "
            "(CIDR) separated by commas, `*` for any host. Link-local and cloud metadata addresses are "
            "refused whatever it says. The command line's `--allow-any-host` sets it aside."),
    Setting("SPECVIZ_METRICS_SOURCES", "", str,
            "`/metrics` URLs the Live page offers by name, `name=URL` pairs separated by commas; in "
            "viewer mode the only ones it reads. Their hosts must be allowed by `SPECVIZ_METRICS_ALLOW`."),
    Setting("SPECVIZ_PROMETHEUS_SOURCES", "", str,
            "Prometheus servers the Live page offers by name, as `SPECVIZ_METRICS_SOURCES`."),
    Setting("SPECVIZ_METRICS_MAX_SERIES", "10000", int,
            "Most speculative-decoding series (and companions) one scrape or one Prometheus answer may hold."),
    Setting("SPECVIZ_METRICS_MAX_MODELS", "100", int,
            "Most models one scrape or one Prometheus answer may report; each is kept, charted and stored."),
    Setting("SPECVIZ_METRICS_MAX_LABELS", "32", int,
            "Most labels one series of a scrape may carry, counted before the text is parsed."),
    Setting("SPECVIZ_METRICS_MAX_LINE_CHARS", "16384", int,
            "Longest line of a scrape's speculative-decoding series (labels included), in characters."),
    Setting("SPECVIZ_LIVE_KEEP_SNAPSHOT_ROWS", "2000000", int,
            "Most rows of `snapshots` kept per source (a series of a scrape is a row): past it, each "
            "recorded scrape deletes its source's oldest scrapes whole. The windows between them stay."),
    Setting("SPECVIZ_LIVE_MIN_WINDOW_S", "0.5", float,
            "Shortest window a recorded scrape makes with its source's previous one: a scrape sooner than "
            "that after it (two recorders of one source) is not stored, and the next window runs from the "
            "previous scrape (a 0.15 s window read tokens/s 6.5 % low, its time taken after the read)."),
    Setting("SPECVIZ_SCRAPE_CONNECT_TIMEOUT_S", "3", float,
            "Seconds to wait for a metrics endpoint to accept a connection."),
    Setting("SPECVIZ_SCRAPE_READ_TIMEOUT_S", "10", float,
            "Seconds a metrics endpoint may stay silent, before its answer or within it, before the scrape ends."),
    Setting("SPECVIZ_SCRAPE_DEADLINE_S", "30", float,
            "Time limit of one whole scrape (connection, redirects and body) in seconds: a server that "
            "sends slowly is cut off here."),
    Setting("SPECVIZ_SCRAPE_MAX_BYTES", "20000000", int,
            "Largest metrics text read from a URL (after decompression) or a file, in bytes; reading stops there."),
    Setting("SPECVIZ_SCRAPE_MAX_REDIRECTS", "3", int,
            "Redirects a scrape follows at most (to http or https URLs only)."),
    Setting("SPECVIZ_PROMETHEUS_MAX_POINTS", "11000", int,
            "Most points per series a Prometheus range query may ask for (range / step + 1; "
            "Prometheus itself refuses more than 11,000)."),
    Setting("SPECVIZ_PROMETHEUS_MAX_QUERIES", "300", int,
            "Most PromQL queries one read of a Prometheus server makes: its metric names specviz reads "
            "ask for about 35 an engine's namespace (a server that named 3,000 made 6,004 in 31 s)."),
    Setting("SPECVIZ_PROMETHEUS_DEADLINE_S", "60", float,
            "Seconds one read of a Prometheus server may take in all, its queries together (each also "
            "ends at `SPECVIZ_SCRAPE_DEADLINE_S`: five answers trickled over 25 s each had taken 353 s)."),
    Setting("SPECVIZ_PROMETHEUS_MAX_ROWS", "11000", int,
            "Most rows a Prometheus query may make: its models and split labels × its points (as many as "
            "`SPECVIZ_PROMETHEUS_MAX_POINTS` for one model), each about "
            "0.4 ms of CPU (a fleet of 200 replicas over 61 points took 35 s before the model's α was solved at once)."),
    Setting("SPECVIZ_CLAIM_MAX_CHARS", "1000", int,
            "Longest claim read (\"up to 3x at batch 64\"), in characters once each run of blanks counts as one."),
    Setting("SPECVIZ_PAGE_SIMULATION_CELLS", "10000000", int,
            "Requests × tokens the Latency view simulates at most for one view (its sweep included): "
            "fewer requests are simulated for long outputs, and the view says how many. The command "
            "line's `simulate` takes up to 10⁹."),
    Setting("SPECVIZ_PAGE_TIME_LIMIT_S", "10", float,
            "Time a page's fits may take for one click (the Explorer's per setting, the Live page's per "
            "model), checked between fits: the rest are said not fitted, in seconds."),
    Setting("SPECVIZ_CLI_MAX_ROWS", "100000", int,
            "Most rows a command-line grid may have (the product of its lists of values, such as "
            "`roofline`'s batches × contexts); a larger one is refused with its size before it is computed."),
    Setting("SPECVIZ_GAMMA_MAX", "16", int, "Largest draft length γ offered and searched."),
    Setting("SPECVIZ_BATCH_MAX", "1024", int, "Largest batch size offered and charted."),
    Setting("SPECVIZ_SERVE_BATCH_MAX", "16384", int,
            "Largest batch a Deploy command states (vLLM's --max-num-seqs and the like) where the memory holds "
            "more, and the last its draft-length schedule covers: the schedule is found at every batch up to "
            "it (16,384: about 30 MB and 0.07 s; a 0.6B model on 8 B300s holds 3.5M sequences, 6 GB and 14 s)."),
    Setting("SPECVIZ_CONTEXT_MAX", "131072", int, "Largest context length offered, in tokens."),
    Setting("SPECVIZ_CHROMIUM", "/usr/bin/chromium", Path,
            "Chromium binary the browser tests drive through Playwright."),
    Setting("SPECVIZ_PROMETHEUS", "/usr/bin/prometheus", Path,
            "Prometheus server binary the tests of the Prometheus API mode start (Debian's `prometheus`)."),
)

_BY_NAME = {s.name: s for s in SETTINGS}
_BOOLEANS = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}


def user_data_dir() -> Path:
    """Where an installed specviz keeps the files it writes.

    Returns
    -------
    Path
        ``$XDG_DATA_HOME/specviz``, or ``~/.local/share/specviz`` when that variable is unset or
        relative (the XDG rule); not created here.
    """
    xdg = os.environ.get("XDG_DATA_HOME", "")
    base = Path(xdg) if os.path.isabs(xdg) else Path.home() / ".local" / "share"
    return base / "specviz"


def default_value(setting: Setting) -> str:
    """The value a setting takes when its variable is unset.

    Parameters
    ----------
    setting : Setting
        One of :data:`SETTINGS`.

    Returns
    -------
    str
        Its default as text; a relative path default resolved as :class:`Setting` says.
    """
    if setting.kind is not Path or Path(setting.default).is_absolute():
        return setting.default
    if INSTALLED and setting.writes:
        return str(user_data_dir() / Path(setting.default).name)
    return str(ROOT / setting.default)


def get(name: str) -> str | int | float | bool | Path:
    """Current value of a setting: the environment variable if set, else :func:`default_value`.

    Raises
    ------
    KeyError
        If ``name`` is not in :data:`SETTINGS`.
    ValueError
        If the environment holds a value that does not parse as the setting's type.
    """
    setting = _BY_NAME[name]
    raw = os.environ.get(name)
    if raw is None:
        raw = default_value(setting)
    if setting.kind is bool:  # bool("false") would be True
        if raw.strip().lower() not in _BOOLEANS:
            raise InputError("settings.not_boolean", name=name, raw=repr(raw), choices=", ".join(_BOOLEANS))
        return _BOOLEANS[raw.strip().lower()]
    try:
        value = setting.kind(raw)
    except ValueError:
        raise InputError("settings.bad_type", name=name, raw=repr(raw), kind=setting.kind.__name__) from None
    if setting.kind in (int, float) and value <= 0:
        raise InputError("settings.not_positive", name=name, raw=repr(raw))
    return value


def upload_mb(name: str) -> int:
    """A byte limit ``name`` as Streamlit takes an upload limit (``max_upload_size``,
    ``server.maxUploadSize``): whole MB of 10^6 bytes, rounded up and at least 1, so that the uploader
    never refuses what the setting allows, whether Streamlit counts an MB as 10^6 or 2^20 bytes, and
    says about the setting's size ("Limit 1MB per file" for a config.json, not Streamlit's 200MB).

    Raises
    ------
    KeyError
        If ``name`` is not in :data:`SETTINGS`.
    """
    return max(1, math.ceil(get(name) / 1e6))


def chosen(name: str) -> bool:
    """Whether the environment sets the setting ``name`` to a value (an empty one names nothing) rather
    than leaving its default: a store the user names must exist, where the default one is made
    (``specviz.cli.common.open_store``).

    Raises
    ------
    KeyError
        If ``name`` is not in :data:`SETTINGS`.
    """
    return bool(os.environ.get(_BY_NAME[name].name))


def unknown_names() -> list[Notice]:
    """``settings.unknown`` (or ``settings.unknown_near``, naming the setting it resembles) for each
    environment variable named ``SPECVIZ_…`` that is no setting: ignored, and said where the app and
    the command line start (a CLI pass: SPECVIZ_DB_PATH, a misspelling of SPECVIZ_DB, had left the
    default store in use without a word)."""
    said = []
    # Compared without the prefix every name shares; one that begins with a setting's name (a
    # suffix added: SPECVIZ_DB_PATH, SPECVIZ_LANGUAGE) resembles it, the longest such first.
    own = {known.removeprefix("SPECVIZ_"): known for known in _BY_NAME}
    for name in sorted(key for key in os.environ if key.startswith("SPECVIZ_") and key not in _BY_NAME):
        rest = name.removeprefix("SPECVIZ_")
        begun = sorted((part for part in own if rest.startswith(part)), key=len, reverse=True)
        near = begun or difflib.get_close_matches(rest, own, n=1, cutoff=0.75)
        said.append(Notice("settings.unknown_near", name=name, near=own[near[0]]) if near
                    else Notice("settings.unknown", name=name))
    return said


if __name__ == "__main__":
    # The Makefile's way to a setting's value; anything but one known name is told the names.
    if len(sys.argv) != 2 or sys.argv[1] not in _BY_NAME:
        sys.exit("usage: python -m specviz.settings NAME, one of:\n  " + "\n  ".join(_BY_NAME))
    print(get(sys.argv[1]))
