"""Stored runs as llm-d-benchmark's benchmark report v0.2.1, YAML or JSON: a report per run, each
checked against the published v0.2.1 JSON schema before it is written.

The format and its fields are those :mod:`specviz.results.importers.benchmark_report` reads (source:
llm-d/llm-d-benchmark, ``llmdbenchmark/analysis/benchmark_report/schema_v0_2_1.py``, commit
8bc9f1dd). A run imported from a report of v0.2 or v0.2.1 is written back whole: its ``extra``
holds every field of the report that no column took (each ``Statistics`` with its ``units``), put
back at its dotted path, and the columns fill in the rest, each figure in the units its file gave
(a latency column in ms over 1,000 where the file's were s). So exporting and importing again loses
no field of the standard. Of a v0.1 report, the latency, request and input-rate statistics and the
description have a place in v0.2.1; its v0.1-only sections (``metrics.service``,
``metrics.resources``, ``scenario.host``, …) do not.

A run of another format becomes what the standard can say of it: ``results.request_performance.aggregate``
from its columns (latencies in ``ms`` or ``ms/token``, rates in ``tokens/s`` and ``queries/s``,
``requests.total`` = completed + failed), ``run.time.duration`` as ISO 8601 (``PT12.5S``), its label
as ``run.description``, and its engine, model and GPU as a ``generic`` component of the stack (an
``inference_engine`` component needs the accelerator count and parallelism, which a run does not
have; ``unknown`` where its engine or version is not known), and its rate and concurrency as
``scenario.load`` where its mean input length is known (the load requires an input sequence
length): its stored requests' mean, else the mean its totals give (input tokens per second over
requests per second: :func:`specviz.results.prediction.run_tokens`), else the mean its file states
(:func:`_stated_input`). The run's speculative decoding goes in that component's ``native.args`` as the
engine's command line gives it (vLLM's ``--speculative-config``, SGLang's ``--speculative-algorithm``,
``--speculative-draft-model-path`` and ``--speculative-num-steps``), which the importer reads back,
and its ``cfg_id`` hashes them with the rest: a speculative run and its baseline are two
configurations. The standard has no place for the acceptance figures, the workload, the endpoint or
the temperature, nor for the load of a run whose input length nothing gives: each report lists
what it left out (:attr:`Report.left_out`).

Several runs are a YAML stream (``---`` between the reports) or a JSON array; the importer reads
both back, a run per report. A non-finite figure (a request rate of ``inf``) is written as YAML's
``.inf`` and as Python's JSON writes it (``Infinity``).
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import pandas as pd
import yaml

from specviz import settings
from specviz.errors import SpecvizError
from specviz.results import extra as extra_fields
from specviz.results.explorer import PLAIN_METHODS
from specviz.results import prediction
from specviz.results.importers import benchmark_report as standard
from specviz.results.importers.base import nesting_depth
from specviz.results.store import Store

__all__ = ["VERSION", "FORMATS", "Report", "to_report", "dump", "stored_reports", "stored_text"]

VERSION = "0.2.1"
FORMATS = ("yaml", "json")
_AGGREGATE = ("results", "request_performance", "aggregate")
_LOAD = ("scenario", "load", "standardized")
_SECTIONS = ("run", "scenario", "results")
# A v0.1 field that v0.2.1 has (the same Statistics, or the description) → its place there.
_FROM_V01 = {("metrics", "latency"): (*_AGGREGATE, "latency"), ("metrics", "requests"): (*_AGGREGATE, "requests"),
             ("scenario", "description"): ("run", "description")}
# Columns the standard has no place for, left out where a run has them.
# The draft, its method and length have one in an engine's arguments (``native.args``): left out where
# they are not there as the run has them.
_NO_PLACE = ("workload", "endpoint", "draft_model", "spec_method", "num_speculative_tokens", "temperature",
             "acceptance_rate", "acceptance_length", "per_position_acceptance", "zero_accept_rate",
             "synthetic_acceptance", "speculation_by_user")
_NON_FINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}  # as the store keeps them in extra
_LOAD_NUMBERS = {(*_LOAD, "rate_qps"), (*_LOAD, "concurrency")}


@dataclass
class Report:
    """One run's report (``doc``), and the run's fields it has no place for (``left_out``)."""

    run_id: str
    doc: dict[str, Any]
    left_out: list[str] = field(default_factory=list)


def _put(tree: dict[str, Any], path: Sequence[str], value: Any) -> None:
    """Set ``value`` at ``path`` in ``tree``, merging objects that are already there."""
    node = tree
    for key in path[:-1]:
        node = node.setdefault(key, {})
    if isinstance(value, dict) and isinstance(node.get(path[-1]), dict):
        node[path[-1]].update(value)
    else:
        node[path[-1]] = value


def _numbers(node: Any, path: tuple[str, ...] = ()) -> Any:
    """A report's tree with the non-finite numbers the store keeps as text (``"Infinity"``) numbers
    again, in a Statistics object and at the load's rate and concurrency."""
    if isinstance(node, list):
        return [_numbers(value) for value in node]
    if not isinstance(node, dict):
        return node
    figures = "units" in node
    return {key: _NON_FINITE.get(value, value) if isinstance(value, str) and (figures or (*path, key) in _LOAD_NUMBERS)
            else _numbers(value, (*path, key)) for key, value in node.items()}


def _kept_tree(run: Mapping[str, Any], extra: dict[str, Any], left_out: list[str]) -> dict[str, Any]:
    """What the run's ``extra`` holds of a report, as a v0.2.1 tree (empty for a run of another format)."""
    tree: dict[str, Any] = {}
    if run.get("source_format") != "benchmark-report":
        return tree
    v01 = extra.get("version") == "0.1"
    deepest = settings.get("SPECVIZ_STORED_EXTRA_DEPTH")
    for key, value in extra.items():
        path = tuple(key.split("."))
        # A v0.2 report's tree came from its stack's arguments, which the kept stack holds.
        if key == "version" or (not v01 and key in extra_fields.TREE_FIELDS):
            continue
        if nesting_depth(value) > deepest:  # stored before imports bounded it: YAML's writer recursed past its limit
            left_out.append(key)
            continue
        if not v01 and path[0] in _SECTIONS:
            _put(tree, path, value)
            continue
        place = next((to + path[len(start):] for start, to in _FROM_V01.items() if path[:len(start)] == start), None)
        if v01 and place:
            _put(tree, place, value)
        elif v01 and path == ("metrics", "throughput", "input_tokens_per_sec"):
            _put(tree, (*_AGGREGATE, "throughput", "input_token_rate"), {"units": "tokens/s", "mean": value})
        else:
            left_out.append(key)
    return _numbers(tree)


def _figure(run: Mapping[str, Any], column: str) -> float | None:
    value = run.get(column)
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def _statistics(tree: dict[str, Any], path: tuple[str, ...], units: dict[str, float],
                figures: dict[str, float | None], left_out: list[str]) -> None:
    """Fill the Statistics at ``path`` with ``figures`` (statistic → the column's value), in the
    units it already has or else the first the field allows; one without a mean cannot be written."""
    stats = dict(standard.at(tree, path) or {})
    unit = stats.get("units") if stats.get("units") in units else next(iter(units))
    stats["units"] = unit
    stats.update({statistic: value / units[unit] for statistic, value in figures.items() if value is not None})
    parent = standard.at(tree, path[:-1])
    if len(stats) == 1:
        if isinstance(parent, dict):
            parent.pop(path[-1], None)
        return
    if "mean" not in stats:
        left_out.append(f"{'.'.join(path)} ({', '.join(sorted(set(stats) - {'units'}))})")  # no mean
        if isinstance(parent, dict):
            parent.pop(path[-1], None)
        return
    _put(tree, path, stats)


def _duration(seconds: float) -> str:
    """Seconds as an ISO-8601 duration, exact where Python writes the float without an exponent."""
    text = repr(float(seconds))
    return f"PT{text if 'e' not in text else format(seconds, '.9f')}S"


def _figures(run: Mapping[str, Any], tree: dict[str, Any], left_out: list[str]) -> None:
    """The run's latencies, throughputs, requests and duration into the tree."""
    for field_name, (short, units) in standard.LATENCIES.items():
        _statistics(tree, (*_AGGREGATE, "latency", field_name), units,
                    {s: _figure(run, f"{s}_{short}_ms") for s in standard.STATISTICS}, left_out)
    for field_name, (column, units) in standard.THROUGHPUTS.items():
        _statistics(tree, (*_AGGREGATE, "throughput", field_name), units, {"mean": _figure(run, column)}, left_out)
    requests = dict(standard.at(tree, (*_AGGREGATE, "requests")) or {})
    completed, failed = _figure(run, "num_requests"), _figure(run, "failed_requests")
    if completed is not None:
        requests["total"] = int(completed) + int(failed or 0) + int(requests.get("incomplete") or 0)
        if failed is not None:
            requests["failures"] = int(failed)
        _put(tree, (*_AGGREGATE, "requests"), requests)
    elif failed is not None:  # the standard requires the total, which a run of another format may lack
        left_out.append("failed_requests")
    if (seconds := _figure(run, "duration_s")) is not None:
        _put(tree, ("run", "time", "duration"), _duration(seconds))


def _scenario(run: Mapping[str, Any], tree: dict[str, Any], input_tokens: float | None, left_out: list[str]) -> None:
    """The load's rate and concurrency, and the run's engine, model and GPU where the tree has no stack.

    A run with no load of a report gets one where its requests' mean input length is known, as
    llm-d-benchmark's converter of ``vllm bench`` results writes it (``native_to_br0_2.py``): the
    input sequence length of distribution ``other`` at that mean, the tool the run's format, its
    version and the tokens' source ``unknown``."""
    rate, concurrency = _figure(run, "request_rate"), _figure(run, "concurrency")
    load = [(key, value) for key, value in (("rate_qps", rate), ("concurrency", concurrency))
            if value is not None and value > 0]
    if load and not isinstance(standard.at(tree, ("scenario", "load")), dict) and input_tokens is not None:
        _put(tree, ("scenario", "load"), {
            "metadata": {"schema_version": "0.0.1"}, "native": {},
            "standardized": {"tool": run.get("source_format") or standard.UNKNOWN, "tool_version": standard.UNKNOWN,
                             "source": standard.UNKNOWN, "input_seq_len": {"distribution": "other",
                                                                           "value": input_tokens}}})
    if isinstance(standard.at(tree, ("scenario", "load")), dict):
        for key, value in load:
            _put(tree, (*_LOAD, key), value)
    else:
        left_out += [column for column, value in (("request_rate", rate), ("concurrency", concurrency))
                     if value is not None]
    named = {column: run.get(column) for column in ("engine", "engine_version", "target_model", "gpu")}
    if standard.at(tree, ("scenario", "stack")) is None and any(named.values()):
        standardized: dict[str, Any] = {"kind": "generic", "tool": named["engine"] or standard.UNKNOWN,
                                        "tool_version": named["engine_version"] or standard.UNKNOWN}
        if named["target_model"]:
            standardized["model"] = {"name": named["target_model"]}
        if named["gpu"]:
            standardized["accelerator"] = {"model": named["gpu"]}
        native = {"args": args} if (args := _speculative_args(run)) else {}
        # Of the component's whole configuration: a speculative run and its baseline are two.
        cfg_id = hashlib.sha256(json.dumps([standardized, native], sort_keys=True).encode()).hexdigest()[:32]
        _put(tree, ("scenario", "stack"), [{"metadata": {"schema_version": "0.0.1", "label": standardized["tool"],
                                                         "cfg_id": cfg_id},
                                            "standardized": standardized, "native": native}])


def _same(placed: Any, given: Any) -> bool:
    """Whether a value the report's arguments give back is the run's: a method's name in any case (an
    engine's own case is written: EAGLE3 for SGLang, eagle3 for vLLM; an attack pass had found EAGLE3
    listed as left out where it was written)."""
    if isinstance(placed, str) and isinstance(given, str):
        return placed.casefold() == given.casefold()
    return placed == given


def _speculative_args(run: Mapping[str, Any]) -> dict[str, Any]:
    """The engine's own arguments for a run's speculative decoding, as its command line gives them and
    the importer reads them back (:func:`specviz.results.importers.benchmark_report.speculation`):
    SGLang's ``--speculative-algorithm`` (its names are upper case), ``--speculative-draft-model-path``,
    ``--speculative-num-steps`` and the tree it drafted (``--speculative-eagle-topk``,
    ``--speculative-num-draft-tokens``: :func:`specviz.results.extra.tree_shape`; without them a
    SpecForge tree of 60 tokens read as a chain of 7: an analyst's pass); any other engine's as vLLM's
    ``--speculative-config`` (its methods lower case). None for a plain run."""
    method, draft, gamma = (run.get(c) for c in ("spec_method", "draft_model", "num_speculative_tokens"))
    # A plain run's method (none, off) or γ 0 is no engine argument: `--speculative-config {method: none}`
    # is not one vLLM takes (an analyst's pass, of a run stated plain).
    if method is None and draft is None and gamma is None or str(method).strip().lower() in PLAIN_METHODS or gamma == 0:
        return {}
    gamma = None if gamma is None else int(gamma)
    if str(run.get("engine") or "").lower().startswith("sglang"):
        tree = extra_fields.tree_shape(run.get("extra"))
        args = {"--speculative-algorithm": None if method is None else method.upper(),
                "--speculative-draft-model-path": draft, "--speculative-num-steps": gamma,
                "--speculative-eagle-topk": tree.get("topk"), "--speculative-num-draft-tokens": tree.get("num_draft_tokens")}
        return {key: value for key, value in args.items() if value is not None}
    config = {"method": None if method is None else method.lower(), "model": draft, "num_speculative_tokens": gamma}
    return {"--speculative-config": {key: value for key, value in config.items() if value is not None}}


def to_report(run: Mapping[str, Any], input_tokens: float | None = None) -> Report:
    """One stored run (its columns as :meth:`specviz.results.store.Store.run_rows` reads them) as a
    v0.2.1 report, checked against the published schema; ``input_tokens``, the mean of its
    requests' (:meth:`specviz.results.store.Store.mean_input_tokens`), places the load of a run
    of another format.

    Raises
    ------
    SpecvizError
        ``export.invalid`` if the report breaks the v0.2.1 schema (a value the store cut to its
        bounds, such as an ``extra`` value past ``SPECVIZ_STORED_VALUE_CHARS``), naming the field.
    """
    extra = json.loads(run["extra"]) if isinstance(run.get("extra"), str) else {}
    left_out: list[str] = []
    tree = _kept_tree(run, extra if isinstance(extra, dict) else {}, left_out)
    _figures(run, tree, left_out)
    _scenario(run, tree, input_tokens, left_out)
    if run.get("source_format") != "benchmark-report" and run.get("label"):
        _put(tree, ("run", "description"), run["label"])
    tree.setdefault("run", {}).setdefault("uid", run["run_id"])
    results = tree.pop("results", {})
    doc = {"version": VERSION, "run": tree.pop("run"), **tree, "results": results}
    placed = standard.speculation(doc)  # what the stack's arguments give back, as the importer reads them
    left_out += [column for column in _NO_PLACE if run.get(column) is not None and run.get(column) != []
                 and not _same(placed.get(column), run.get(column))]
    # Another format's extra has no place, but for the tree its engine's arguments now give.
    if run.get("source_format") != "benchmark-report" and extra and (not isinstance(extra, dict) or any(
            key not in extra_fields.TREE_FIELDS or placed.get(key) != value for key, value in extra.items())):
        left_out.insert(0, "extra")
    if invalid := standard.schema_errors(doc, VERSION):
        raise SpecvizError("export.invalid", run=run["run_id"], field=invalid[0], detail=invalid[1])
    return Report(run["run_id"], doc, left_out)


def dump(made: Sequence[Report], fmt: str = "yaml") -> str:
    """Reports as text: YAML (a stream of documents, one a report) or JSON (one report an object,
    several an array).

    An infinite figure (a rate of ``inf``: ``vllm bench serve`` sends every request at once) is
    YAML's ``.inf`` and JSON's ``null``, as the standard's own Pydantic models write JSON
    (``ser_json_inf_nan`` "null"): JSON has no Infinity, and ``JSON.parse`` refuses the text that has one."""
    docs = [report.doc for report in made]
    if fmt == "json":
        return json.dumps(_finite(docs[0] if len(docs) == 1 else docs), indent=2, ensure_ascii=False, allow_nan=False)
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return yaml.dump_all(docs, Dumper=dumper, sort_keys=False, allow_unicode=True)


def _finite(value: Any) -> Any:
    """``value`` with every float that is not finite, at any depth, as None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_finite(item) for item in value]
    return value


def stored_reports(store: Store, run_ids: Sequence[str]) -> list[Report]:
    """The reports of stored runs (:func:`to_report`), in the order of ``run_ids``.

    Raises
    ------
    SpecvizError
        ``export.unknown_runs`` naming the ids no stored run has; as :func:`to_report`.
    """
    runs = store.run_rows(run_ids)
    if missing := sorted(set(run_ids) - {run["run_id"] for run in runs}):
        raise SpecvizError("export.unknown_runs", runs=", ".join(missing))
    input_tokens = store.mean_input_tokens(run_ids)
    # A run without requests of its own: the mean its totals give (SGLang's total_input_tokens over its
    # requests; 15 of the 18 sample runs had lost their load to the download: an analyst's pass), else
    # the mean its file states (llmperf's, AIPerf's: an attack pass).
    totals = prediction.run_tokens(pd.DataFrame(runs))["prompt_tokens"] if runs else pd.Series(dtype=float)
    return [to_report(run, input_tokens.get(run["run_id"], _stated_input(run) if math.isnan(total) else float(total)))
            for run, total in zip(runs, totals)]


# A file's own measured mean of input tokens per request, by its tool's name for it, in order.
_STATED_INPUT = ("results_number_input_tokens_mean", "input_sequence_length.avg")


def _stated_input(run: Mapping[str, Any]) -> float | None:
    """The mean input tokens a run's file states (:data:`_STATED_INPUT`: llmperf's summary, AIPerf's
    ``input_sequence_length``), where it is a positive finite number; None otherwise."""
    fields = extra_fields.scalar_fields(run.get("extra"))
    stated = (fields.get(key) for key in _STATED_INPUT)
    return next((float(v) for v in stated if isinstance(v, (int, float)) and not isinstance(v, bool)
                 and math.isfinite(v) and v > 0), None)


def stored_text(store: Store, run_ids: Sequence[str], fmt: str = "yaml") -> str:
    """The reports of stored runs as text (:func:`stored_reports`, :func:`dump`), for a download."""
    return dump(stored_reports(store, run_ids), fmt)
