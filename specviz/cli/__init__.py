"""Command line: ``specviz`` (installed) or ``python -m specviz`` (from a checkout).

One module per command group, each adding its subcommands to the parser (``add_parsers``) and
setting on each the function that runs it (``run``: the arguments in, the text to print and the
exit code out):

- ``model``: speedup, roofline, calc, simulate, model-from-config, presets; ``fit``: fit.
- ``claim``: claim; ``advice``: vllm-config, serve, schedule.
- ``results``: ingest, runs, query, export, remove.
- ``live``: metrics, record, prometheus.
- ``app``: app (serves the Streamlit app).
- ``docs``: docs/cli.md and docs/settings.md written from the parser and the settings table.

Every subcommand prints rows as JSON, CSV or a Markdown table (``common``). Errors exit 2 with one
line on stderr, never a traceback. Messages are in the language of ``--lang`` (before the
subcommand), else of ``SPECVIZ_LANG``; what argparse writes stays English (``common`` says where the
line runs).

May import: anything in specviz. Must not import: Streamlit.
"""

from __future__ import annotations

import os
import sys
from typing import Sequence

import duckdb

from specviz import i18n, settings
from specviz.errors import Notice, SpecvizError

from . import advice, app, claim, fit, live, model, results
from .common import Parser, UsageError, one_line, words

__all__ = ["main", "build_parser", "GROUPS"]

GROUPS = (model, fit, claim, advice, results, live, app)
"""The command groups, in the order ``--help`` lists their subcommands."""


def setting_language() -> str:
    """The language ``SPECVIZ_LANG`` names, English where it names none of the catalogues' (as the
    app takes it)."""
    chosen = settings.get("SPECVIZ_LANG")
    return chosen if chosen in i18n.LANGUAGES else "en"


def build_parser() -> Parser:
    """The parser of every subcommand, each with its ``run`` function, and ``--lang``."""
    parser = Parser(prog="specviz", description="Does speculative decoding pay off for your traffic? "
                                                "The figures of the specviz app, on the command line.")
    parser.add_argument("--lang", choices=tuple(i18n.LANGUAGES), default=setting_language(),
                        help="the language of messages: errors, notices, warnings and the sentences a command prints "
                             "(default: SPECVIZ_LANG, else en); help, usage and argparse's own errors (an unknown or missing option) stay English, "
                             "and data (JSON keys, CSV columns) never changes")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for group in GROUPS:
        group.add_parsers(sub)
    return parser


def asked_language(given: Sequence[str], otherwise: str) -> str:
    """The language a command line's ``--lang`` names (``--lang vi``, ``--lang=vi``, wherever it
    stands), or ``otherwise``: for a message about a command line that did not parse."""
    for at, word in enumerate(given):
        value = given[at + 1] if word == "--lang" and at + 1 < len(given) else word.partition("=")[2] \
            if word.startswith("--lang=") else None
        if value in i18n.LANGUAGES:
            return value
    return otherwise


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (0, or 2 on any error)."""
    lang = setting_language()  # until --lang is read: building the parser reads settings, which may be refused
    args = None
    try:
        args = build_parser().parse_args(argv)
        lang = args.lang
        for unknown in settings.unknown_names():
            print(f"specviz: {words(unknown, lang)}", file=sys.stderr)
        output, code = args.run(args)
        print(output)
        sys.stdout.flush()  # a closed pipe fails here, inside the try
        return code
    except BrokenPipeError:
        # The reader went away (`specviz runs | head`): what it read is all it wanted. The standard
        # output is pointed at /dev/null so that the interpreter's own flush at exit stays quiet.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (SpecvizError, ValueError, OSError, duckdb.Error) as exc:  # a UsageError is a SpecvizError
        given = list(sys.argv[1:] if argv is None else argv)
        if args is None:  # refused while parsing: in the language asked for all the same
            lang = asked_language(given, lang)
        if getattr(exc, "key", None) == "cli.parser" and any(a == "--lang" or a.startswith("--lang=") for a in given[1:]):
            # --lang after the subcommand is no option of it (a CLI pass: "calc --lang vi alpha=2" had
            # read "vi" as the link and said only "unrecognized arguments: --lang alpha=2").
            exc = UsageError("cli.parser_lang_late", message=exc.params["message"])
        print(f"specviz: error: {one_line(exc, lang)}", file=sys.stderr)
        return 2
    except Exception as exc:  # the last layer: a result or value nothing above foresaw
        unexpected = Notice("cli.unexpected", kind=type(exc).__name__, error=one_line(exc, lang))
        print(f"specviz: error: {words(unexpected, lang)}", file=sys.stderr)
        return 2
