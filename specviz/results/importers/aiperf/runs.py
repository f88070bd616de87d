"""What every AIPerf file's run is given the same way: AIPerf's units, the load, model and endpoint of
its configuration, the shares of an acceptance histogram, and the settings of a sweep's cell.

Sweep cells
    AIPerf names a cell's folder ``{leaf parameter}_{value}``, joined by ``__`` in a grid
    (``concurrency_10__isl_512``): every file in such a folder gets the cell's settings in
    ``extra.sweep``, and its concurrency or rate as the load where the file gives none.
    :func:`specviz.results.importers.aiperf.left_out` says which files of a folder repeat another's runs (a cell is one run).

Sources: as in :mod:`specviz.results.importers.aiperf`.
"""

from __future__ import annotations

import math
import re
from pathlib import PurePath
from typing import Any, Iterable

import numpy as np

from specviz.model import spec

from ..base import PERCENT, RunBuilder, dig, number

# AIPerf's time units (MetricTimeUnit), in milliseconds and in seconds; its rates' units.
MS = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "sec": 1e3}
SECONDS = {unit: scale / 1e3 for unit, scale in MS.items()}
RATE = {"%": PERCENT, "ratio": 1.0}
MOST_POSITIONS = 64  # no draft is longer; a histogram key past it is no draft position
# A sweep cell folder's part, ``{leaf parameter}_{value}``, and the folders of repetitions that look alike.
_CELL_PART = re.compile(r"(?P<name>[A-Za-z][A-Za-z0-9_]*?)_(?P<value>-?\d+(?:\.\d+)?)")
_NOT_CELLS = {"trial", "run", "search_iter"}
_CELL_LOADS = {"concurrency": "concurrency", "request_rate": "request_rate", "rate": "request_rate"}


def histogram_figures(histogram: Any, gamma: float | None = None) -> tuple[list[float] | None, float | None]:
    """From a histogram of verify steps by the draft tokens each accepted (``{"j": steps}``, the
    keys JSON text): the share of steps that accepted position i (a step that accepted j tokens
    accepted positions 0 to j − 1, as vLLM's ``num_accepted_tokens_per_pos`` counts them), for i
    below γ (the largest j where γ is not known), and the share that accepted none. ``(None,
    None)`` where it is no histogram of counts; no per-position shares where a j exceeds γ or
    :data:`MOST_POSITIONS`."""
    if not isinstance(histogram, dict) or not all(isinstance(k, str) and k.isascii() and k.isdigit()
                                                  for k in histogram):
        return None, None
    steps = [number(v) for v in histogram.values()]
    if not steps or any(n is None or n < 0 for n in steps):
        return None, None
    total = sum(steps)
    if not 0 < total < math.inf:
        return None, None
    accepted = [int(k) for k in histogram]
    zero = sum(n for j, n in zip(accepted, steps) if j == 0) / total
    positions = max(accepted) if gamma is None else gamma
    if max(accepted) > positions or not 0 < positions <= MOST_POSITIONS:
        return None, zero
    counts = np.zeros(int(positions) + 1)
    np.add.at(counts, accepted, steps)
    return spec.histogram_shares(counts)[0].tolist(), zero


def _agreed(values: Iterable[Any]) -> Any:
    """The one value the measured phases share, or None where they differ or none has one."""
    present = [v for v in values if v is not None]
    return present[0] if present and all(v == present[0] for v in present) else None


def _model(models: Any, legacy: Any) -> str | None:
    """The model names: ``models.items[].name`` (or a list of names), else ``endpoint.model_names``."""
    if isinstance(models, dict):
        models = models.get("items")
    if not isinstance(models, list):
        models = legacy if isinstance(legacy, list) else [models]
    names = [m.get("name") if isinstance(m, dict) else m for m in models]
    return ", ".join(n for n in names if isinstance(n, str)) or None


def set_config(run: RunBuilder, config: dict[str, Any]) -> None:
    """Load, model, tokenizer and endpoint type from ``input_config``; the phases AIPerf leaves out
    of its results (warmup) do not count."""
    phases = config.get("phases")
    if isinstance(phases, list):
        measured = [p for p in phases if isinstance(p, dict) and p.get("exclude_from_results") is not True
                    and "warmup" not in (p.get("kind"), p.get("name"))]
        # Concurrency is the load only in a concurrency phase; beside a rate it is a cap on the
        # requests in flight (kept in extra with input_config), not the load.
        run.set("concurrency", _agreed(p.get("concurrency") for p in measured if p.get("type") == "concurrency"),
                source="input_config.phases.concurrency")
        run.set("request_rate", _agreed(p.get("rate") for p in measured if p.get("type") != "concurrency"),
                source="input_config.phases.rate")
    else:
        loadgen = dig(config, "loadgen")
        run.set("concurrency", loadgen.get("concurrency"), source="input_config.loadgen.concurrency")
        run.set("request_rate", loadgen.get("request_rate"), source="input_config.loadgen.request_rate")
    endpoint = dig(config, "endpoint")
    run.set("target_model", _model(config.get("models"), endpoint.get("model_names")), source="input_config.models")
    # The model's Hugging Face id where the served name is an alias ("qwen3.6-nvfp4"), under vLLM
    # bench's key for it: what a prediction matches a preset by where the name matches none.
    if isinstance(tokenizer := dig(config, "tokenizer").get("name"), str):
        run.keep("tokenizer_id", tokenizer)
    run.set("endpoint", endpoint.get("type"), source="input_config.endpoint.type")


def apply_cell(run: RunBuilder, cell: dict[str, Any]) -> None:
    """A sweep cell's settings: in ``extra`` as ``sweep``, and its concurrency or rate as the load
    where the file gives none (a concurrency beside a rate the file gives is a cap, not the load)."""
    if not cell:
        return
    run.keep("sweep", cell)
    if "concurrency" not in run.row and "request_rate" not in run.row:
        for name, column in _CELL_LOADS.items():
            if name in cell:
                run.set(column, cell[name], source=f"sweep.{name}")


def cell_settings(file_name: str) -> dict[str, Any]:
    """The swept settings of the innermost sweep cell folder in a file's path: ``{"concurrency":
    10, "isl": 512}`` from ``…/concurrency_10__isl_512/profile_export_aiperf.json`` (AIPerf names a
    cell ``{leaf parameter}_{value}``, joined by ``__`` in a grid; numbers as numbers); empty where
    no folder is a cell (``trial_0001`` and ``run_0001`` are a repetition's, not a cell's). AIPerf
    writes a value as Python writes the number (``10``, ``2.5``), so a folder of another spelling is
    no cell (``aiperf_0.10``, a folder a user named after a release, had read as a sweep of
    ``aiperf`` at 0.1)."""
    for part in reversed(PurePath(file_name.replace("\\", "/")).parts[:-1]):
        pieces = [_CELL_PART.fullmatch(piece) for piece in part.split("__")]
        if all(pieces) and not any(m["name"] in _NOT_CELLS for m in pieces) and all(
                m["value"] == (repr(float(m["value"])) if "." in m["value"] else str(int(m["value"]))) for m in pieces):
            return {m["name"]: number(m["value"]) for m in pieces}
    return {}
