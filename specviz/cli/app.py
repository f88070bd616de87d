"""The app's command: ``app`` serves the Streamlit app as ``make run`` does, on ``SPECVIZ_HOST`` and
``SPECVIZ_PORT``, from the checkout or from the copy an installed wheel carries
(:data:`specviz.settings.ROOT`); the arguments after ``--`` go to ``streamlit run``."""

from __future__ import annotations

import argparse
import os
import sys
from typing import NoReturn, Sequence

from specviz import settings


def streamlit_argv(extra: Sequence[str]) -> list[str]:
    """The command that serves the app.

    Parameters
    ----------
    extra : sequence of str
        Further arguments of ``streamlit run``. They come last, and Streamlit takes the last value
        of an option given twice: ``-- --server.port 9000`` wins over ``SPECVIZ_PORT``.

    Returns
    -------
    list of str
        ``make run``'s ``streamlit run`` with this interpreter, ``extra`` at the end.
    """
    # Streamlit's server refuses an upload over its own limit (in MB, 200 unless told) with a bare 413
    # before specviz sees it; each uploader says its own, which the browser holds it to: the server's
    # is the largest of them, so that every file an uploader takes reaches specviz's own checks.
    upload_mb = max(settings.upload_mb(name) for name in
                    ("SPECVIZ_MAX_UPLOAD_BYTES", "SPECVIZ_MAX_CONFIG_BYTES", "SPECVIZ_MAX_TOKENIZER_BYTES"))
    return [sys.executable, "-m", "streamlit", "run", str(settings.ROOT / "app.py"),
            "--server.address", str(settings.get("SPECVIZ_HOST")), "--server.port", str(settings.get("SPECVIZ_PORT")),
            "--server.headless", "true", "--browser.gatherUsageStats", "false",
            "--server.maxUploadSize", str(upload_mb), *extra]


def _app(args: argparse.Namespace) -> NoReturn:
    """Replace this process with Streamlit, which so runs in the foreground: Ctrl-C and a service
    manager's SIGTERM reach it directly, its exit code is the command's, and the memory the command
    line's imports took is freed. Never returns (an OSError if Python cannot be started)."""
    argv = streamlit_argv(args.streamlit_args)
    os.execv(argv[0], argv)


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """The app's subcommand."""
    p = sub.add_parser("app", help="serve the app on SPECVIZ_HOST:SPECVIZ_PORT, as make run does, until Ctrl-C",
                       description="Serve the specviz app with Streamlit, in the foreground. Arguments after -- "
                                   "go to streamlit run (e.g. specviz app -- --server.port 9000).")
    p.add_argument("streamlit_args", nargs="*", metavar="-- STREAMLIT_ARGS", help="arguments of streamlit run")
    p.set_defaults(run=_app)
