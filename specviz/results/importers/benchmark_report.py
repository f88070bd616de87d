"""``benchmark-report``: llm-d-benchmark's benchmark report, versions 0.1, 0.2 and 0.2.1, as YAML or JSON.

The report is llm-d-benchmark's common format: its converters turn vLLM, GuideLLM, inference-perf
and AIPerf results into it, and inference-perf 0.5 writes one itself per stage
(``*.partial.stage_N.yaml``, version 0.2.1), whose p99s the stage's run of its lifecycle report takes
where both are imported (:func:`specviz.results.store.repeats._given_to_lifecycle`). Source: llm-d/llm-d-benchmark,
``llmdbenchmark/analysis/benchmark_report/`` (``schema_v0_1.py``, ``schema_v0_2.py``,
``schema_v0_2_1.py``, ``base.py`` and the JSON schemas ``br_v*_json_schema.json`` generated from
them; commit 8bc9f1dd). Each file is checked against the published JSON schema of its version,
shipped in ``data/benchmark_report/`` (their commits in its README).

A file is one report, a YAML stream of reports (``---`` between them) or a JSON array of reports:
a run each. Every figure is an object ``{units, mean, stddev, min, p0p1, p1, p5, …, p99p9, max}``
(``Statistics``) and is read in its ``units``:

- v0.2 and v0.2.1: ``results.request_performance.aggregate``: ``latency.{time_to_first_token,
  request_latency}`` in ``ms`` or ``s``, ``latency.{time_per_output_token, inter_token_latency}``
  in ``ms/token`` or ``s/token``, ``throughput.{output_token_rate, total_token_rate}`` in
  ``tokens/s``, ``throughput.request_rate`` in ``queries/s``; ``requests.{total, failures,
  incomplete}`` counts. ``run.time.duration`` is an ISO-8601 duration (``PT49.97S``);
  ``scenario.load.standardized.{rate_qps, concurrency}`` the load; the ``inference_engine``
  components of ``scenario.stack`` the engine (``tool``, ``tool_version``), model and accelerator,
  and their ``native.args`` the speculative decoding (vLLM's ``--speculative-config``, SGLang's
  ``--speculative-algorithm``…: :func:`speculation`).
- v0.1: ``metrics.latency`` as above, ``metrics.throughput.{output,total}_tokens_per_sec`` and
  ``requests_per_sec`` plain numbers, ``metrics.time.duration`` in seconds, ``metrics.requests``;
  ``scenario.model.name``, ``scenario.platform.engine[]``, ``scenario.host.accelerator[]``,
  ``scenario.load.type`` (the workload).

The mean, p50, p90 and p99 of each latency become the run's ``{stat}_{metric}_ms`` columns (a
value in s times 1,000); ``num_requests`` is what completed: ``total − failures − incomplete``.
Everything else stays in ``extra`` by its dotted path down to four levels (a ``Statistics``
object kept whole, less the figures taken into columns, with its ``units``), so that
:mod:`specviz.results.benchmark_report` writes the report back without losing a field.

A YAML file is read as plain data only: no tag but those of JSON's types, no timestamps (they stay
text, as the schema's ``date-time`` strings are), its aliases counted before any node is built and
refused where they would expand past ``SPECVIZ_IMPORT_MEMORY_BYTES`` or refer to themselves.
"""

from __future__ import annotations

import json
import math
import re
from functools import cache
from pathlib import PurePath
from typing import Any, Iterator

import jsonschema
import yaml

from specviz import settings
from specviz.errors import Notice
from specviz.results.schema import STATISTICS  # the runs' statistics, each one the standard's too

from .base import TOKENS_PER_SEC_COLUMNS, Format, IngestError, Parsed, RunBuilder, preview
from .source import Source, characters, width

__all__ = ["FORMAT", "VERSIONS", "LATENCIES", "THROUGHPUTS", "STATISTICS", "UNITS", "validator", "schema_errors",
           "plain_yaml", "iso_duration", "at", "speculation", "EXTRA_DEPTH", "UNKNOWN"]

VERSIONS = ("0.1", "0.2", "0.2.1")
UNKNOWN = "unknown"  # the standard's word for a value not known (LoadSource.UNKNOWN); never a column's value
SCHEMAS = settings.ROOT / "data" / "benchmark_report"

# Each unit the standard allows for a figure, and the factor that turns it into the column's unit
# (base.py's UNITS_TIME, UNITS_GEN_LATENCY, UNITS_GEN_THROUGHPUT, UNITS_REQUEST_THROUGHPUT).
TIME_MS = {"ms": 1.0, "s": 1000.0}
TOKEN_TIME_MS = {"ms/token": 1.0, "s/token": 1000.0}
TOKEN_RATE = {"tokens/s": 1.0}
QUERY_RATE = {"queries/s": 1.0}
QUANTITY = {"count": 1.0, "pixels": 1.0}
LATENCIES: dict[str, tuple[str, dict[str, float]]] = {
    "time_to_first_token": ("ttft", TIME_MS), "time_per_output_token": ("tpot", TOKEN_TIME_MS),
    "inter_token_latency": ("itl", TOKEN_TIME_MS), "request_latency": ("e2el", TIME_MS)}
THROUGHPUTS: dict[str, tuple[str, dict[str, float]]] = {
    "output_token_rate": ("output_throughput", TOKEN_RATE), "total_token_rate": ("total_token_throughput", TOKEN_RATE),
    "request_rate": ("request_throughput", QUERY_RATE)}
# Every Statistics whose units the upstream models check, by field name under its section.
UNITS: dict[str, dict[str, float]] = {
    **{name: units for name, (_, units) in LATENCIES.items()}, "normalized_time_per_output_token": TOKEN_TIME_MS,
    **{name: units for name, (_, units) in THROUGHPUTS.items()}, "input_token_rate": TOKEN_RATE,
    "input_length": QUANTITY, "output_length": QUANTITY}
# The order a Statistics' figures must keep (schema_v0_2.Statistics), each no larger than the next.
_ORDER = ("min", "p0p1", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "p99p9", "max")
EXTRA_DEPTH = 4  # extra keeps a report's fields by dotted path down to this many levels

_SECTIONS = {"0.1": ("metrics",), "0.2": ("results", "request_performance", "aggregate")}
# What a report's aggregate holds in every version: a report without one of them has none of its figures.
_AGGREGATES = ("requests", "latency", "throughput")


@cache
def validator(version: str) -> jsonschema.Draft202012Validator:
    """The validator of a report version's published JSON schema (``data/benchmark_report``)."""
    schema = json.loads((SCHEMAS / f"br_v{version.replace('.', '_')}_json_schema.json").read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator(schema)


def schema_errors(doc: Any, version: str) -> tuple[str, str] | None:
    """The most telling way ``doc`` breaks its version's schema, as (dotted path, message), or None.
    The message is cut at 300 characters (it may quote the value)."""
    error = jsonschema.exceptions.best_match(validator(version).iter_errors(doc))
    if error is None:
        return None
    return ".".join(map(str, error.absolute_path)) or "(top)", error.message[:300]


# ----------------------------------------------------------------------------------------- YAML
_BASE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_PLAIN_TAGS = frozenset(f"tag:yaml.org,2002:{name}" for name in ("str", "int", "float", "bool", "null", "map", "seq",
                                                                 "merge"))
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
# A composed node and what is built of it, measured with tracemalloc on PyYAML 6.0.4 with libyaml:
# 368-470 bytes a scalar, 703 a collection; 800 covers both.
_YAML_NODE_BYTES = 800
_YAML_DEPTH = 1000  # a report nests about 10 levels; libyaml itself stops here too


class _PlainLoader(_BASE_LOADER):  # type: ignore[valid-type, misc]
    """A safe loader of JSON's types only: timestamps stay text, and no constructor builds anything
    but a str, number, bool, null, list or dict."""

    yaml_implicit_resolvers = {first: [(tag, pattern) for tag, pattern in resolvers if tag != _TIMESTAMP]
                               for first, resolvers in _BASE_LOADER.yaml_implicit_resolvers.items()}
    yaml_constructors = {tag: build for tag, build in _BASE_LOADER.yaml_constructors.items()
                         if tag is None or tag in _PLAIN_TAGS}


def _malformed(name: str, exc: yaml.YAMLError) -> IngestError:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    # The place in the reader's language (PyYAML's problem is its own English, as a parser's detail is).
    where = Notice("ingest.yaml_where", line=mark.line + 1, column=mark.column + 1) if mark is not None else ""
    return IngestError("ingest.yaml_malformed", name, detail=problem[:300], where=where)


def _expanded_nodes(source: Source, text: str) -> int:
    """The nodes the YAML text holds once every alias is expanded, counted from its events alone (no
    node is built): a scalar or a collection one, an alias the nodes of its anchor.

    Raises
    ------
    IngestError
        ``ingest.yaml_tag`` for a tag other than JSON's types (``!!python/object``, ``!!binary``,
        ``!!timestamp``, a local ``!tag``), ``ingest.yaml_recursive`` for an alias inside the node it
        names, ``ingest.yaml_expansion`` as soon as the count would take more memory than is left of
        ``SPECVIZ_IMPORT_MEMORY_BYTES`` (a "billion laughs" stops after a few hundred events),
        ``ingest.too_deep`` past 1,000 levels, ``ingest.yaml_malformed`` for text that is not YAML.
    """
    most = max(0, settings.get("SPECVIZ_IMPORT_MEMORY_BYTES") - source.estimate) // _YAML_NODE_BYTES
    anchors: dict[str, int] = {}
    open_nodes: list[tuple[str | None, int]] = []  # each open collection's anchor and the count at its start
    seen = 0
    try:
        for event in yaml.parse(text, Loader=_PlainLoader):
            if isinstance(event, yaml.AliasEvent):
                if event.anchor in anchors:
                    seen += anchors[event.anchor]
                elif any(anchor == event.anchor for anchor, _ in open_nodes):
                    raise IngestError("ingest.yaml_recursive", source.name, anchor=preview(event.anchor))
                else:
                    raise IngestError("ingest.yaml_malformed", source.name,
                                      detail=Notice("ingest.detail.yaml_alias", alias=preview(event.anchor)), where="")
            elif isinstance(event, (yaml.ScalarEvent, yaml.CollectionStartEvent)):
                if event.tag not in (None, "!") and event.tag not in _PLAIN_TAGS:
                    raise IngestError("ingest.yaml_tag", source.name, tag=preview(event.tag))
                seen += 1
                if isinstance(event, yaml.ScalarEvent):
                    if event.anchor is not None:
                        anchors[event.anchor] = 1
                else:
                    open_nodes.append((event.anchor, seen - 1))
                    if len(open_nodes) > _YAML_DEPTH:
                        raise IngestError("ingest.too_deep", source.name)
            elif isinstance(event, yaml.CollectionEndEvent):
                anchor, start = open_nodes.pop()
                if anchor is not None:
                    anchors[anchor] = seen - start
            if seen > most:
                raise IngestError("ingest.yaml_expansion", source.name, nodes=seen, most=most)
    except yaml.YAMLError as exc:
        raise _malformed(source.name, exc) from None
    return seen


def plain_yaml(source: Source) -> list[Any]:
    """The documents of a YAML source as plain data, once the memory they take, aliases expanded,
    has been charged (:func:`_expanded_nodes`).

    Raises
    ------
    IngestError
        As :func:`_expanded_nodes`; ``ingest.memory`` if the text itself does not fit.
    """
    source.charge(characters(source.counts) * width(source.counts))
    text = source.text
    source.charge(_expanded_nodes(source, text) * _YAML_NODE_BYTES)
    try:
        return list(yaml.load_all(text, Loader=_PlainLoader))
    except yaml.YAMLError as exc:
        raise _malformed(source.name, exc) from None
    except ValueError as exc:  # an integer of more than 4,300 digits
        raise IngestError("ingest.yaml_malformed", source.name, detail=str(exc).splitlines()[0][:300], where="") from None


# ------------------------------------------------------------------------------------- detection
_TOP_KEY = re.compile(r"^(version|run|scenario|results|metrics)[ \t]*:", re.M)
_RESULT_SECTION = re.compile(r"^results[ \t]*:[^\n]*\n(?:[ \t]*(?:#[^\n]*)?\n)*[ \t]+(?:request_performance|"
                             r"session_performance|observability|component_health|profiling)[ \t]*:", re.M)


def _is_report(doc: Any) -> bool:
    return isinstance(doc, dict) and ({"run", "results"} <= doc.keys() or {"scenario", "metrics"} <= doc.keys())


# The top-level keys a report needs in each version, and every one a report has: a document with
# some of them and not those it needs is what a file cut short leaves (a writer that sorts keys puts
# "results" first).
_NEEDED = {"0.1": ("scenario", "metrics"), "0.2": ("run", "results")}
_TOP_KEYS = ("version", "run", "scenario", "results", "metrics")


def _not_a_report(name: str, doc: Any) -> IngestError:
    """The refusal of a document that is not a report: ``ingest.report_cut_short`` where it has a
    report's top-level keys but not all those its version needs (naming both), else ``ingest.report_shape``."""
    if isinstance(doc, dict) and any(key in doc for key in _TOP_KEYS if key != "version"):
        version = "0.1" if "metrics" in doc or str(doc.get("version")) == "0.1" else "0.2"
        return IngestError("ingest.report_cut_short", name, present=", ".join(key for key in _TOP_KEYS if key in doc),
                           missing=", ".join(key for key in _NEEDED[version] if key not in doc))
    return IngestError("ingest.report_shape", name)


def sniff(source: Source) -> float:
    """0.95 for JSON whose documents (or the array that is its one document) are reports: an object
    with ``run`` and ``results`` (v0.2) or ``scenario`` and ``metrics`` (v0.1). 0.9 for text whose
    first 64 KiB has those top-level YAML keys, or ``results:`` with one of its sections under it."""
    if source.is_json:
        docs = source.records
        return 0.95 if docs and all(map(_is_report, docs)) else 0.0
    keys = set(_TOP_KEY.findall(source.head))
    if {"run", "results"} <= keys or {"scenario", "metrics"} <= keys or _RESULT_SECTION.search(source.head):
        return 0.9
    return 0.0


# --------------------------------------------------------------------------------------- reading
_DURATION = re.compile(r"P(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?")


def iso_duration(text: Any) -> float | None:
    """Seconds of an ISO-8601 duration of days, hours, minutes and seconds (``PT49.97S``,
    ``P1DT2H``), or None for anything else (years and months have no fixed length)."""
    found = _DURATION.fullmatch(text) if isinstance(text, str) and text not in ("P", "PT") else None
    if found is None or text.endswith("T"):
        return None
    days, hours, minutes, seconds = (float(part) if part else 0.0 for part in found.groups())
    return ((days * 24 + hours) * 60 + minutes) * 60 + seconds


def at(doc: Any, path: tuple[str, ...]) -> Any:
    """The value at ``path`` in nested objects, or None where a step is missing or not an object."""
    for key in path:
        doc = doc.get(key) if isinstance(doc, dict) else None
    return doc


def _version(name: str, doc: dict[str, Any]) -> str:
    """The schema version a report is read by: its ``version`` (absent: 0.1 if it has ``metrics``,
    else 0.2.1, each schema's default).

    Raises
    ------
    IngestError
        ``ingest.report_version`` for another version.
    """
    stated = doc.get("version")
    version = ("0.1" if "metrics" in doc else "0.2.1") if stated is None else str(stated)
    if version not in VERSIONS:
        raise IngestError("ingest.report_version", name, version=preview(stated), versions=", ".join(VERSIONS))
    return version


def _check_units(name: str, doc: dict[str, Any], version: str) -> None:
    """Refuse a figure in a unit the standard does not allow for it (``ingest.report_unit``): a
    latency in ``furlongs`` or in ``tokens/s`` cannot be read as milliseconds. Checked before the
    schema, so that the message names the field and the units it may have."""
    base = _SECTIONS["0.1" if version == "0.1" else "0.2"]
    for group in ("latency", "throughput", "requests"):
        section = at(doc, (*base, group))
        for field, allowed in UNITS.items() if isinstance(section, dict) else ():
            stats = section.get(field)
            if isinstance(stats, dict) and stats.get("units") not in allowed:
                raise IngestError("ingest.report_unit", name, field=".".join((*base, group, field, "units")),
                                  unit=preview(stats.get("units")), allowed=", ".join(allowed))


def _as_float(value: int | float) -> float:
    """A figure as a float: an integer past the range of floats (2**1023 and up) as infinity."""
    return math.inf if isinstance(value, int) and value.bit_length() > 1023 else float(value)


def _check_figures(name: str, stats: Any, path: tuple[str, ...]) -> None:
    """Refuse a figure of a Statistics that is negative or not finite, or out of order (a p50 above
    the p99, a mean outside min and max): ``ingest.report_negative``, ``ingest.report_unordered``."""
    if not isinstance(stats, dict):
        return
    field = ".".join(path)
    figures = {key: _as_float(value) for key, value in stats.items()
               if isinstance(value, (int, float)) and not isinstance(value, bool)}
    for key, value in figures.items():
        if not 0 <= value < math.inf:
            raise IngestError("ingest.report_negative", name, field=f"{field}.{key}", value=preview(stats[key]))
    present = [(key, figures[key]) for key in _ORDER if key in figures]
    pairs = list(zip(present, present[1:]))
    mean = figures.get("mean")
    if mean is not None:
        pairs += [(low, ("mean", mean)) for low in present if low[0] == "min"]
        pairs += [(("mean", mean), high) for high in present if high[0] == "max"]
    for (low_key, low), (high_key, high) in pairs:
        if low > high * (1 + 1e-9) + 1e-12:
            raise IngestError("ingest.report_unordered", name, field=field, low=low_key, low_value=low,
                              high=high_key, high_value=high)


class _Reader:
    """One report into one run: each figure taken into its column is noted by its path, and the rest
    of the report goes to ``extra`` (:meth:`keep_rest`)."""

    def __init__(self, name: str, doc: dict[str, Any], warnings: list[Notice]) -> None:
        self.name, self.doc = name, doc
        self.run = RunBuilder(warnings)
        self.taken: set[tuple[str, ...]] = set()

    def take(self, column: str, path: tuple[str, ...], scale: float = 1.0) -> None:
        value = at(self.doc, path)
        if value is not None:
            self.run.set(column, value, scale, source=".".join(path))
            self.taken.add(path)

    def latencies_and_rates(self, base: tuple[str, ...]) -> None:
        for field, (short, units) in LATENCIES.items():
            path = (*base, "latency", field)
            stats = at(self.doc, path)
            _check_figures(self.name, stats, path)
            if isinstance(stats, dict):
                for statistic in STATISTICS:
                    self.take(f"{statistic}_{short}_ms", (*path, statistic), units[stats["units"]])

    def requests(self, path: tuple[str, ...]) -> None:
        requests = at(self.doc, path)
        if not isinstance(requests, dict) or not isinstance(requests.get("total"), int):
            return
        failures, incomplete = requests.get("failures") or 0, requests.get("incomplete") or 0
        completed = requests["total"] - failures - incomplete
        if completed < 0:
            raise IngestError("ingest.report_requests", self.name, field=".".join(path), total=requests["total"],
                              failures=failures, incomplete=incomplete)
        self.run.set("num_requests", completed, source=".".join((*path, "total")))
        self.taken.add((*path, "total"))
        self.take("failed_requests", (*path, "failures"))

    def keep_rest(self) -> None:
        """Keep every field not taken, by dotted path down to :data:`EXTRA_DEPTH` levels; a
        Statistics (an object with ``units``) whole, less its figures taken."""
        for path, value in _rest(self.doc, (), self.taken):
            self.run.keep(".".join(path), value)


def _rest(node: Any, path: tuple[str, ...], taken: set[tuple[str, ...]]) -> Iterator[tuple[tuple[str, ...], Any]]:
    """The fields of ``node`` at ``path`` but those ``taken``, flattened to :data:`EXTRA_DEPTH` levels."""
    if isinstance(node, dict) and path and (len(path) >= EXTRA_DEPTH or "units" in node):
        kept = _without(node, path, taken)
        if kept or not node:
            yield path, kept
    elif isinstance(node, dict):
        for key, value in node.items():
            if (*path, str(key)) not in taken:
                yield from _rest(value, (*path, str(key)), taken)
    else:
        yield path, node


def _without(node: Any, path: tuple[str, ...], taken: set[tuple[str, ...]]) -> Any:
    """``node`` less the ``taken`` paths under it; shared, not copied, where none is (a YAML alias
    may make one object two fields, so nothing is removed in place)."""
    if not isinstance(node, dict) or not any(t[:len(path)] == path for t in taken):
        return node
    return {key: _without(value, (*path, str(key)), taken) for key, value in node.items()
            if (*path, str(key)) not in taken}


def _engines(doc: dict[str, Any], run: RunBuilder) -> None:
    """Engine, its version, the model and the accelerator of a v0.2 report's inference engines
    (:func:`_engine_components`; the distinct values of each, in order, joined by " + " where the
    stack mixes them), and the speculative decoding their arguments give (:func:`speculation`)."""
    engines = [c["standardized"] for c in _engine_components(doc)]
    for column, path in (("engine", ("tool",)), ("engine_version", ("tool_version",)),
                         ("target_model", ("model", "name")), ("gpu", ("accelerator", "model"))):
        values = list(dict.fromkeys(str(at(e, path)) for e in engines if at(e, path) not in (None, UNKNOWN)))
        if values:
            run.set(column, " + ".join(values), source=".".join(("scenario", "stack", "standardized", *path)))
    speculations = _speculations(doc)
    if len({json.dumps(found, sort_keys=True, default=str) for found in speculations}) > 1:
        # Engines of one stack that speculate differently (a prefill and a decode pool): the first is
        # the run's, said (an attack pass: it had been taken in silence).
        run.warnings.append(Notice("warn.report_speculations", components=len(speculations)))
    for column, value in (speculations[0] if speculations else {}).items():
        if column in _TREE_ARGS:
            run.keep(column, value)
            continue
        source = f"scenario.stack.native.args ({column})"
        run.set(column, value, source=source)
        # A value refused is said; the stack is kept whole (keep_rest), its arguments with it, and a key
        # of extra that is no path of the report would be written back into one (an export).
        run.extra.pop(source, None)


# The engine's own arguments of speculative decoding, in a stack component's ``native.args`` (its
# command line, as llm-d-benchmark records it and :mod:`specviz.results.benchmark_report` writes it),
# each name without its dashes and with "-" for "_" (vLLM takes both): the column → the arguments that
# give it, the first found taken. vLLM's ``--speculative-config`` (a JSON object, or its text; 0.8.2 and
# later) and, before it, ``--speculative-model`` (``[ngram]``: prompt lookup) and
# ``--num-speculative-tokens``; SGLang's ``--speculative-algorithm``, ``--speculative-draft-model-path``
# and ``--speculative-num-steps`` (a chain's depth, as its bench's server_info gives it).
_SPECULATIVE_ARGS = {"spec_method": (("speculative-config", "method"), ("speculative-algorithm",)),
                     "draft_model": (("speculative-config", "model"), ("speculative-model",),
                                     ("speculative-draft-model-path",)),
                     "num_speculative_tokens": (("speculative-config", "num_speculative_tokens"),
                                                ("num-speculative-tokens",), ("speculative-num-steps",))}
# SGLang's tree (``--speculative-eagle-topk``, ``--speculative-num-draft-tokens``): no column holds it,
# and it is kept in ``extra`` by its name there (specviz.results.extra.TREE_FIELDS).
_TREE_ARGS = {"topk": (("speculative-eagle-topk",),), "num_draft_tokens": (("speculative-num-draft-tokens",),)}
_NGRAM_MODEL = "[ngram]"  # vLLM's --speculative-model for prompt lookup, before --speculative-config


def speculation(doc: Any) -> dict[str, Any]:
    """The speculative decoding a v0.2 report's stack ran, from the first engine component whose
    ``native.args`` give it (:data:`_SPECULATIVE_ARGS`, :data:`_TREE_ARGS`): ``spec_method`` (lower
    case, as the engine names it), ``draft_model``, ``num_speculative_tokens``, and SGLang's tree
    (``topk``, ``num_draft_tokens``), each where given; ``{}`` where none."""
    return next(iter(_speculations(doc)), {})


def _speculations(doc: Any) -> list[dict[str, Any]]:
    """:func:`speculation` of each engine component whose arguments give one, in the stack's order."""
    return [found for component in _engine_components(doc) if (found := _component_speculation(component))]


def _component_speculation(component: dict[str, Any]) -> dict[str, Any]:
    """What one stack component's ``native.args`` give of speculative decoding (:func:`speculation`)."""
    args = at(component, ("native", "args"))
    if not isinstance(args, dict):
        return {}
    named = {str(key).lstrip("-").replace("_", "-"): value for key, value in args.items()}
    config = named.get("speculative-config")
    if isinstance(config, str):
        try:
            named["speculative-config"] = json.loads(config)
        except (ValueError, RecursionError):  # not JSON, or nested past the parser: left unread
            pass
    found = {}
    for column, paths in {**_SPECULATIVE_ARGS, **_TREE_ARGS}.items():
        value = next((v for v in (at(named, path) for path in paths) if v is not None), None)
        if value is not None:
            found[column] = value
    if found.get("draft_model") == _NGRAM_MODEL:
        found["draft_model"], found["spec_method"] = None, found.get("spec_method") or "ngram"
    if isinstance(found.get("spec_method"), str):
        found["spec_method"] = found["spec_method"].lower()
    return {column: value for column, value in found.items() if value is not None}


def _engine_components(doc: Any) -> list[dict[str, Any]]:
    """A v0.2 report's inference engines; in a stack of none, its generic components that name a model
    (``standardized.model.name``) or whose command line (``native.args``) runs speculative decoding,
    as :mod:`specviz.results.benchmark_report` writes a run whose file said no more (a SpecForge run
    names no model: its export had come back as a plain run). A router's own arguments make it no
    engine (an attack pass: any ``native.args`` had)."""
    components = [c for c in at(doc, ("scenario", "stack")) or [] if isinstance(c, dict)]
    return [c for c in components if at(c, ("standardized", "kind")) == "inference_engine"] or \
        [c for c in components if isinstance(at(c, ("standardized", "model", "name")), str)
         or _SPECULATIVE_ARGS.keys() & _component_speculation(c).keys()]


def _read_v02(reader: _Reader, label: str | None) -> None:
    """A v0.2 or v0.2.1 report's columns (the module's docstring lists them); ``label`` where it has
    no description."""
    doc, run = reader.doc, reader.run
    base = _SECTIONS["0.2"]
    reader.latencies_and_rates(base)
    for field, (column, units) in THROUGHPUTS.items():
        path = (*base, "throughput", field)
        stats = at(doc, path)
        _check_figures(reader.name, stats, path)
        if isinstance(stats, dict):
            reader.take(column, (*path, "mean"), units[stats["units"]])
    reader.requests((*base, "requests"))
    seconds = iso_duration(at(doc, ("run", "time", "duration")))
    if seconds is not None:
        run.set("duration_s", seconds, source="run.time.duration")
        reader.taken.add(("run", "time", "duration"))
    load = ("scenario", "load", "standardized")
    reader.take("request_rate", (*load, "rate_qps"))
    concurrency = at(doc, (*load, "concurrency"))
    if isinstance(concurrency, (int, float)) and concurrency < math.inf:  # .inf: unbounded, kept in extra
        reader.take("concurrency", (*load, "concurrency"))
    _engines(doc, run)
    run.set("label", at(doc, ("run", "description")) or label, source="run.description")


def _read_v01(reader: _Reader, label: str | None) -> None:
    """A v0.1 report's columns (the module's docstring lists them); ``label`` where it has no description."""
    doc, run = reader.doc, reader.run
    reader.latencies_and_rates(_SECTIONS["0.1"])
    for field, column in TOKENS_PER_SEC_COLUMNS.items():
        path = ("metrics", "throughput", field)
        value = at(doc, path)
        if isinstance(value, (int, float)) and not 0 <= _as_float(value) < math.inf:
            raise IngestError("ingest.report_negative", reader.name, field=".".join(path), value=preview(value))
        reader.take(column, path)
    reader.requests(("metrics", "requests"))
    reader.take("duration_s", ("metrics", "time", "duration"))
    for column, path in (("target_model", ("model", "name")), ("workload", ("load", "type")),
                         ("label", ("description",))):
        run.set(column, at(doc, ("scenario", *path)) or (label if column == "label" else None),
                source=".".join(("scenario", *path)))
    for column, (path, key) in (("engine", (("platform", "engine"), "name")),
                                ("engine_version", (("platform", "engine"), "version")),
                                ("gpu", (("host", "accelerator"), "model"))):
        values = list(dict.fromkeys(str(item[key]) for item in at(doc, ("scenario", *path)) or [] if item.get(key)))
        run.set(column, " + ".join(values) or None, source=".".join(("scenario", *path, key)))


def _reports(source: Source) -> list[Any]:
    """The file's documents: JSON's (one, JSON lines, or the array that is its one document), or YAML's."""
    if source.is_json:
        return source.records
    return [doc for doc in plain_yaml(source) if doc is not None]


def parse(source: Source) -> Parsed:
    """Each report of the file into a run, after its units, its schema and its figures are checked; a
    report without one of its aggregate's sections (requests, latency, throughput) is read with the
    warning ``warn.report_sections_missing``, as a file cut inside its results is.

    Raises
    ------
    IngestError
        For the YAML (:func:`plain_yaml`), a document that is not a report (``ingest.report_cut_short``
        where it has a report's top-level keys but not all it needs), a version not known
        (``ingest.report_version``), a figure in a unit its field may not have
        (``ingest.report_unit``), a report its schema refuses (``ingest.report_invalid``, naming the
        field), and absurd figures: negative or not finite, out of order, more failures than requests.
    """
    docs = _reports(source)
    source.charge_runs(len(docs))
    warnings: list[Notice] = []
    runs = []
    folder = PurePath(source.name).parent.name or None
    for doc in docs:
        if not _is_report(doc):
            raise _not_a_report(source.name, doc)
        version = _version(source.name, doc)
        _check_units(source.name, doc, version)
        if invalid := schema_errors(doc, version):
            raise IngestError("ingest.report_invalid", source.name, version=version, field=invalid[0],
                              detail=invalid[1])
        reader = _Reader(source.name, doc, warnings)
        (_read_v01 if version == "0.1" else _read_v02)(reader, folder)
        base = _SECTIONS["0.1" if version == "0.1" else "0.2"]
        if absent := [".".join((*base, part)) for part in _AGGREGATES if not isinstance(at(doc, (*base, part)), dict)]:
            warnings.append(Notice("warn.report_sections_missing", sections=", ".join(absent)))
        reader.keep_rest()
        runs.append(reader.run.build())
    if not runs:
        raise IngestError("ingest.no_runs", source.name)
    return Parsed("benchmark-report", runs, warnings=warnings)


FORMAT = Format("benchmark-report", sniff, parse)
