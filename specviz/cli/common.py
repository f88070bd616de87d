"""What every command group shares: the parser that reports a bad argument on one line, messages in
the reader's language, rows in JSON, CSV or Markdown, the scenario a calculator link describes, and
files read within their limits.

The language (``--lang``, else ``SPECVIZ_LANG``) is that of the messages: errors, notices, warnings
and the sentences a command prints, on stderr or as values of its JSON. What argparse writes (help,
usage, and its errors about the command line's syntax) is English, as ``docs/cli.md`` is; data (JSON
keys, CSV columns, ids, numbers) never changes with the language."""

from __future__ import annotations

import argparse
import json
import math
import os
import stat
import sys
import urllib.parse
from decimal import Decimal
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd

from specviz import i18n, names, scenario, settings
from specviz.errors import InputError, Notice, shortened
from specviz.model import architecture, dtypes, hf_config
from specviz.results import explorer, export
from specviz.results.store import Store

FORMAT = dict(choices=("json", "csv", "md"), default="json", help="output format")
"""The ``--format`` option of a command that prints rows."""
DB = dict(type=Path, default=None, help="DuckDB file (default: the SPECVIZ_DB setting); one named here or there must "
                                        "exist, but for ingest and record, which make it in a folder that exists; "
                                        "not :memory:, which would end with the command")
"""The ``--db`` option of a command that opens the store."""


class UsageError(InputError):
    """A bad argument of the command line (an option, a link's parameter, a file or a cell of one): a
    message key (``cli.*``) and its parameters, as every :class:`~specviz.errors.InputError`; reported
    on one line in the reader's language, exit 2."""


class Parser(argparse.ArgumentParser):
    """A parser whose errors are one line (:class:`UsageError`) and whose descriptions keep their
    paragraphs (they are the command line's documentation, ``docs/cli.md``, as well as its help)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> None:  # argparse would print the usage block too
        # argparse raises the error it reports while it handles an option type's own (its context):
        # that one is said in the reader's language with the option's name. argparse's own sentences
        # ("unrecognized arguments: …") stay English, as its usage and help are.
        reported = sys.exc_info()[1]
        if isinstance(reported, argparse.ArgumentError) and isinstance(reported.__context__, OptionValueError):
            raise UsageError("cli.option_value", option=reported.argument_name, reason=reported.__context__.notice)
        raise UsageError("cli.parser", message=message)


class OptionValueError(argparse.ArgumentTypeError):
    """A value an option's type refuses: a message key (``cli.value.*``) and its parameters, said in
    the reader's language by :meth:`Parser.error`; its text, in English, is what argparse has."""

    def __init__(self, key: str, **params: Any) -> None:
        self.notice = Notice(key, **params)
        super().__init__(str(self.notice))


def plain(value: Any) -> Any:
    """numpy scalars to Python ones; NaN and the infinities (a request whose prompts queue without
    end) to None so that JSON stays valid."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def number_cell(value: float) -> str:
    """A number in a Markdown table as a reader wants it: a whole one whole (a context of 32768, not
    3.277e+04), four significant digits below 10⁴, none after the point above (tokens/s)."""
    if not math.isfinite(value):
        return str(value)
    if value.is_integer() or abs(value) >= 1e4:
        return f"{value:.0f}"
    return f"{value:.4g}"


def json_text(value: Any) -> str:
    """JSON as every command prints it: indented, with text other than ASCII as itself (Vietnamese
    messages, a file's name), where ``json.dumps``'s default wrote ``\\u1ecb`` escapes a terminal
    shows as they are. Control characters stay escaped, as JSON has them."""
    return json.dumps(value, indent=2, ensure_ascii=False)


def format_rows(rows: list[dict[str, Any]], fmt: str, keys: list[str] | None = None) -> str:
    """Render rows (dicts with the same keys) as ``json``, ``csv`` or ``md``; ``keys`` names the
    columns where there may be no row to take them from."""
    if fmt == "json":  # data as it is: JSON writes every control character as an escape
        return json_text([{k: plain(v) for k, v in row.items()} for row in rows])
    # An infinity stays one in a table (a request rate of ∞, as the page shows it); NaN is no figure.
    rows = [{k: v if isinstance(v, float) and math.isinf(v) else plain(v) for k, v in row.items()} for row in rows]
    # For a terminal or a spreadsheet, text from files and servers with its invisible characters shown.
    rows = [{k: i18n.visible(v) if isinstance(v, str) else v for k, v in row.items()} for row in rows]
    keys = keys if keys is not None else list(rows[0]) if rows else []
    if fmt == "csv":
        return export.csv_text(pd.DataFrame(rows, columns=keys)).rstrip("\n")
    # A cell's own pipe or line break would end the cell or the row: escaped, as a table cell can hold them.
    text = lambda v: str(v).replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace("\n", " ")
    cell = lambda v: "" if v is None else text(v) if not isinstance(v, float) else number_cell(v)
    lines = ["| " + " | ".join(text(k) for k in keys) + " |", "|" + "---|" * len(keys)]
    lines += ["| " + " | ".join(cell(r[k]) for k in keys) + " |" for r in rows]
    return "\n".join(lines)


def integer(text: str) -> int:
    """An option's type for a whole number (int's, with its refusal in the reader's language)."""
    try:
        return int(text)
    except ValueError:
        raise OptionValueError("cli.value.whole", given=repr(text)) from None


def number(text: str) -> float:
    """An option's type for a number (float's, with its refusal in the reader's language)."""
    try:
        return float(text)
    except ValueError:
        raise OptionValueError("cli.value.number", given=repr(text)) from None


def count(text: str) -> int:
    """An option's type for a whole number of 1 or more."""
    try:
        value = int(text)
    except ValueError:
        raise OptionValueError("cli.value.whole", given=repr(text)) from None
    if value < 1:
        raise OptionValueError("cli.value.at_least_one", given=repr(text))
    return value


def positive(unit: Notice, most: float) -> Callable[[str], float]:
    """An option's type for a number of ``unit`` (seconds, bytes) above 0 and at most ``most``: NaN,
    infinities and 0 are refused (``--kv-bytes nan`` had printed NaN, which is no JSON), and so is
    what no use has (``--kv-bytes 1e308`` had printed Infinity, ``record --every 1e11`` ended in an
    OverflowError after its first poll)."""
    def parsed(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise OptionValueError("cli.value.number_of", unit=unit, given=repr(text)) from None
        if not (math.isfinite(value) and value > 0):
            raise OptionValueError("cli.value.above_zero", unit=unit, given=repr(text))
        if value > most:
            raise OptionValueError("cli.value.at_most", most=f"{most:g}", unit=unit, given=repr(text))
        return value
    return parsed


def in_range(name: str) -> Callable[[str], float]:
    """An option's type for a number the calculator takes as its field ``name`` (a cost of the ratios
    form, ``verify_cost``, ``draft_cost``: a verify pass costs at least a plain one; a GPU's
    ``tflops`` or ``bandwidth``), in the field's range (:data:`specviz.scenario.FIELDS`)."""
    field = scenario.FIELDS[name]

    def parsed(text: str) -> float:
        try:
            return field.parse(text)
        except ValueError:
            raise OptionValueError("cli.value.in_range", low=f"{field.low:g}", high=f"{field.upper:g}",
                                   given=repr(text)) from None
    return parsed


def scenario_options(p: argparse.ArgumentParser) -> None:
    """Options that set a scenario's hardware, models and context over its link's."""
    p.add_argument("--gpu", help="GPU preset id")
    p.add_argument("--target", help="target: a model preset id, its Hugging Face id or a checkpoint of its "
                                    "architecture (deepseek-ai/DeepSeek-R1 is DeepSeek-V3)")
    p.add_argument("--draft", help="draft: a model or head preset id, a model's Hugging Face id, or a kind: "
                                   + ", ".join(scenario.DRAFT_KINDS))
    p.add_argument("--engine", help="engine preset id")
    p.add_argument("--context", type=integer, help="context length in tokens")


def preset_id(text: str, models: dict[str, architecture.Model], unknown: str, heads: Sequence[str] = ()) -> str:
    """A model preset's id from its id, its Hugging Face id (case aside) or a checkpoint's name that
    matches it as the Live page matches a served model (:func:`specviz.names.model_preset`:
    ``deepseek-ai/DeepSeek-R1`` is DeepSeek-V3's); a head's name as given. ``unknown`` is the message
    key of a name that matches none (``cli.unknown.target``)."""
    if text in models or text in heads:
        return text
    by_hub = {(names.hugging_face_id(m.source) or "").lower(): k for k, m in models.items()}
    if text.lower() in by_hub:
        return by_hub[text.lower()]
    if found := names.model_preset(text, models):
        return found
    raise UsageError(unknown, text=repr(text), known=", ".join([*heads, *models]))


def scenario_params(args: argparse.Namespace, presets: scenario.Presets, **numbers: Any) -> dict[str, str]:
    """The link parameters that :func:`scenario_options` set, and ``numbers`` (a command's own
    batch, γ, α or tp) that are not None. --draft takes what a link's ``draft`` takes: a kind, a
    model or a draft head's preset (a head, the page's default draft for gpt-oss-120b, had been
    refused as unknown, and ``vllm-config`` then priced a head of the target's shape)."""
    params = {name: str(value) for name in ("gpu", "engine", "context") if (value := getattr(args, name, None)) is not None}
    params |= {name: str(value) for name, value in numbers.items() if value is not None}
    if getattr(args, "target", None):
        params["target"] = preset_id(args.target, presets.models, "cli.unknown.target")
    if getattr(args, "draft", None):
        params["draft"] = preset_id(args.draft, presets.models, "cli.unknown.draft",
                                    (*scenario.DRAFT_KINDS, *presets.heads))
    return params


def presets() -> scenario.Presets:
    """The shipped presets (``SPECVIZ_DATA_DIR``)."""
    return scenario.load_presets(settings.get("SPECVIZ_DATA_DIR"))


def published_speedups() -> pd.DataFrame:
    """The shipped published results that are speedups (:func:`specviz.results.explorer.speedup_rows`),
    which ``calc`` and ``claim`` set beside their figures as the pages do."""
    return explorer.speedup_rows(explorer.load_published(settings.get("SPECVIZ_DATA_DIR")))


def link_query(link: str) -> str:
    """The query of a calculator link, or the link where it is a query already."""
    return urllib.parse.urlsplit(link).query if "?" in link else link


def link_params(link: str) -> dict[str, str]:
    """The parameters of a calculator link, or of its query; a parameter given twice has its values
    joined, as the page shows them, to be refused as there."""
    given: dict[str, list[str]] = {}
    for name, text in urllib.parse.parse_qsl(link_query(link), keep_blank_values=True):
        given.setdefault(name, []).append(text)
    return {name: ", ".join(texts) for name, texts in given.items()}


def linked_scenario(link: str, presets: scenario.Presets, overrides: dict[str, str] | None = None) -> scenario.Scenario:
    """The scenario a calculator link (or its query) describes, with ``overrides`` set over it; a
    value the page would refuse is an error here, not a silent default, and so is a parameter that
    reads nearly as a scenario's (:func:`_refuse_near_names`)."""
    overrides = overrides or {}
    params = link_params(link) | overrides
    _refuse_near_names(params)
    chosen, refused = scenario.from_query_params(params, presets)
    # Each named as it was given: an option of the command, or a parameter of the link (its first 60
    # characters: a value of 100 KB had been written back whole on the error's one line).
    taken = lambda name: _what_is_taken(name, presets, chosen.target_id)
    refused = [(name, shortened(text)) for name, text in refused]
    faults = [Notice("cli.link.option", option=f"--{name.replace('_', '-')}", value=text, takes=taken(name))
              for name, text in refused if name in overrides]
    from_link = [(name, text) for name, text in refused if name not in overrides]
    if from_link:
        faults.append(Notice("cli.link.refused", params=", ".join(f"{name}={text!r}" for name, text in from_link),
                             takes=listed([Notice("cli.link.takes", name=name, takes=taken(name))
                                           for name, _ in from_link])))
    if faults:
        raise UsageError("cli.link", faults=listed(faults))
    scenario.check_hardware(chosen.gpu, chosen.tp, chosen.dp)  # as the sidebar refuses it
    return chosen


def _refuse_near_names(params: dict[str, str]) -> None:
    """Refuse a parameter that is no scenario's but reads nearly as one (:func:`specviz.scenario.near_names`)."""
    if near := scenario.near_names(list(params)):
        raise UsageError("cli.link.near_name", names=", ".join(f"{name!r} ({meant}?)" for name, meant in near.items()))


def listed(items: Sequence[Any]) -> Any:
    """Messages as one, separated by semicolons: the one item, or ``cli.list`` of the first and the
    rest (a message's values are single messages, never lists)."""
    return items[0] if len(items) == 1 else Notice("cli.list", first=items[0], rest=listed(items[1:]))


def _what_is_taken(name: str, presets: scenario.Presets, target_id: str) -> Notice:
    """What a scenario parameter takes, as a message: its range, or its ids (the drafts ``target_id``
    takes: its MTP layer only where it has one)."""
    if name == "prefill":
        return Notice("cli.takes.prefill", most=scenario.FIELDS["input_tokens"].upper)
    if name in scenario.FIELDS:
        field = scenario.FIELDS[name]
        return Notice("cli.takes.whole" if field.whole else "cli.takes.number", low=field.low, high=field.upper)
    # A component's weight format and the KV cache's are named too (a CLI pass: weights_experts=fp4 had
    # been said to take "a value of its own").
    ids = {"gpu": presets.gpus, "target": presets.models, "draft": scenario.draft_choices(presets, target_id),
           "engine": presets.engines, "precision": dtypes.PRECISIONS, "tp": scenario.TENSOR_PARALLEL,
           "dp": scenario.DATA_PARALLEL, "ep": scenario.EXPERT_PARALLEL, "kv": dtypes.KV_FORMATS,
           "mode": scenario.MODES, **dict.fromkeys(scenario.WEIGHT_CHOICES, dtypes.FORMATS)}.get(name)
    return Notice("cli.takes.one_of", ids=", ".join(map(str, ids))) if ids is not None else Notice("cli.takes.own")


# Stands for a value's own "*" while the catalogue's bold marks are taken out (a private-use character).
_VALUE_STAR = "\ue000"


def sidebar_notes(chosen: scenario.Scenario) -> list[Notice]:
    """What the sidebar says of a scenario that a command line has no sidebar to say (attack passes;
    the sidebar says the first as side.ep_dense):
    expert parallelism asked of a model with no experts, which changes nothing, and weights whose
    format the GPU has no peak for, multiplied at the BF16 peak (``side.expanded``: FP4 on an H100)."""
    notes = [Notice("cli.ep_dense", target=chosen.target.name)] if chosen.ep and not chosen.target.num_experts else []
    expanded = scenario.expanded_compute(chosen.gpu, chosen.target, chosen.precision)
    return notes if expanded is None else [*notes, expanded]


def words(message: Any, lang: str) -> str:
    """A message (a Notice or a SpecvizError) as plain text in ``lang``, for a terminal: the page's
    bold marks taken out of the catalogue's text, never out of a value ("**BOLD**.jsonl" is a file's
    name); its values as they are (no Markdown escapes, which a terminal would show) but on one line
    (a line break in a file's name shown as ``\\n``: it had started a line of its own, which could
    pass for one of specviz's) and with their invisible characters shown as escapes
    (:func:`specviz.i18n.visible`: a model name a server sent with an ESC sequence had set the
    terminal's title and cleared its screen); any other exception as its own text, shown alike."""
    if not hasattr(message, "key"):
        return i18n.visible(str(message))
    return i18n.visible(_catalogue_plain(message, lang).replace(_VALUE_STAR, "*"))


def _catalogue_plain(message: Any, lang: str) -> str:
    """``message`` in ``lang`` with the catalogue's ``**`` taken out and each text value's ``*`` held
    as :data:`_VALUE_STAR` and its line breaks as ``\\n`` (a value that is a message, so too)."""
    def held(value: Any) -> Any:
        if hasattr(value, "key") and hasattr(value, "params"):
            return _catalogue_plain(value, lang)
        if isinstance(value, str):  # a preset's text in ``lang`` first, as the catalogue renders it
            text = i18n.in_language(value, lang)
            return text.replace("*", _VALUE_STAR).replace("\r\n", "\\n").replace("\n", "\\n")
        return value
    return i18n.t(message.key, lang, **{k: held(v) for k, v in message.params.items()}).replace("**", "")


def file_name(path: Path | str) -> str:
    """A file's path as text a report can carry and the store names it: bytes that are no UTF-8 (which
    the command line's arguments give as surrogates, and no UTF-8 output can write) as U+FFFD, as
    :meth:`specviz.results.store.Store.import_path` stores the name."""
    return os.fsencode(path).decode("utf-8", "replace")


def open_store(path: Path | None, *, create: bool = False) -> Store:
    """The store at ``path`` (``--db``), else at ``SPECVIZ_DB``. One the user names (either way) must
    exist for a command that uses what it holds, and a new one's folder for a command that may make it
    (``create``: ingest, record): a mistyped path is said, not made (a CLI pass: ``runs --db typo.duckdb``
    had made an empty store and printed ``[]``; ``ingest --db /nonexistent/dir/x.duckdb``, its folders).
    The default store is made where it is missing, as the app makes it."""
    named = path if path is not None else (settings.get("SPECVIZ_DB") if settings.chosen("SPECVIZ_DB") else None)
    if named is not None and str(named) == ":memory:":
        # A store in memory ends with the command: an import into it was reported and then was gone (an
        # attack pass: "runs": 1, then `runs --db :memory:` gave []).
        raise UsageError("cli.store.in_memory")
    if named is not None and not Path(named).exists():
        if not create:
            raise UsageError("cli.store.missing", path=str(named))
        if not Path(named).parent.is_dir():
            raise UsageError("cli.store.no_folder", path=str(named), folder=str(Path(named).parent))
    return Store(path or settings.get("SPECVIZ_DB"), settings.get("SPECVIZ_DB_LOCK_TIMEOUT_S"))


def _decimal_number(value: Any) -> Any:
    """A :class:`~decimal.Decimal` as a JSON number: whole, an int (exact at any size); else a float.
    Any other value unchanged."""
    if not isinstance(value, Decimal) or not value.is_finite():
        return value
    return int(value) if value == value.to_integral_value() else float(value)


def frame_rows(frame: Any) -> list[dict[str, Any]]:
    """DataFrame rows as JSON-safe dicts (timestamps as ISO text, lists as lists).

    A console result's DECIMAL and HUGEINT columns (``sum`` of an integer column, a literal such as
    ``1.5``) arrive as :class:`~decimal.Decimal` objects, which ``to_json`` writes as text: they are
    numbers here, as every other numeric column is.
    """
    rows = json.loads(frame.to_json(orient="records", date_format="iso"))
    decimal = [c for c in frame.columns if frame[c].dtype == object
               and frame[c].map(lambda v: isinstance(v, Decimal)).any()]
    for row, values in zip(rows, frame[decimal].itertuples(index=False)):
        row.update({str(c): _decimal_number(v) for c, v in zip(decimal, values)})
    return rows


def read_limited(path: Path, kind: Notice, setting: str) -> bytes:
    """The bytes of a regular file of at most ``setting`` bytes (``kind`` names such a file in the
    messages: ``Notice("cli.file.csv")``), read no further than the limit even if the file grows
    meanwhile."""
    try:
        info = path.stat()
    except OSError:
        raise UsageError("cli.file.missing", path=str(path)) from None
    if not stat.S_ISREG(info.st_mode):
        raise UsageError("cli.file.not_regular", path=str(path), kind=kind)
    limit = settings.get(setting)
    if info.st_size > limit:
        raise UsageError("cli.file.too_large", path=str(path), size=info.st_size, kind=kind, limit=limit,
                         setting=setting)
    try:
        with open(path, "rb") as f:
            data = f.read(limit + 1)
    except OSError as exc:
        raise UsageError("cli.file.unreadable", path=str(path), detail=exc.strerror or str(exc)) from None
    if len(data) > limit:
        raise UsageError("cli.file.grew", path=str(path), limit=limit, kind=kind, setting=setting)
    return data


def config_model(path: Path, *, target: bool = False) -> architecture.Model:
    """A model from a config.json on disk: a regular file within the size limit uploads have
    (``target``: the model to serve, where a draft head's config is refused)."""
    data = read_limited(path, Notice("cli.file.config"), "SPECVIZ_MAX_CONFIG_BYTES")
    return hf_config.model_from_config_bytes(data, path.name, settings.get("SPECVIZ_MAX_CONFIG_BYTES"), target=target)


def one_line(exc: BaseException, lang: str) -> str:
    """An error's text in ``lang`` on one line (a terminal's message), or its type where it has no text."""
    return " ".join(words(exc, lang).split()) or type(exc).__name__


def cause(exc: BaseException) -> Any:
    """An error as a value of another's message: itself where it is a message (rendered in the
    reader's language with the one it is part of), else its own text on one line."""
    return exc if hasattr(exc, "key") else one_line(exc, "en")
