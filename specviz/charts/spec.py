"""How a chart reaches the browser: the Vega-Lite spec of an Altair chart with its data frames as
named datasets (:func:`vega_lite_spec`), and a layered chart's spec built once and given new frames
(:func:`compiled_spec`). Used by the builders of :mod:`specviz.charts` and by the pages."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Callable, Mapping

import altair as alt
import pandas as pd

__all__ = ["vega_lite_spec", "compiled_spec"]

_COMPOSED = ("layer", "vconcat", "hconcat", "concat")


def vega_lite_spec(chart: Any) -> dict[str, Any]:
    """The Vega-Lite spec of an Altair chart as ``st.altair_chart`` sends it, each data frame a
    dataset named by its place in the chart (``data-0``, ``data-1``, …; one frame used by several
    layers is one dataset), without Altair's check of the spec against the Vega-Lite schema.

    The check costs about 60 ms a chart on every rerun and finds nothing in specviz's charts, whose
    builders the tests check (tests/test_charts.py validates every one). Named by place, the datasets
    need no hash of their bytes; the browser matches them by place either way (a chart whose data
    alone changed is updated, not compiled again, as with st.altair_chart's names)."""
    datasets: dict[str, pd.DataFrame] = {}
    swapped: list[tuple[Any, Any]] = []

    def name_data(part: Any) -> None:
        data = getattr(part, "data", alt.Undefined)
        if isinstance(data, pd.DataFrame):
            name = next((n for n, known in datasets.items() if known is data), f"data-{len(datasets)}")
            datasets[name] = data
            swapped.append((part, data))
            part.data = {"name": name}  # as a dict, not alt.NamedData, which Altair would check too
        for composed in _COMPOSED:
            for inner in getattr(part, composed, None) or ():
                name_data(inner)

    name_data(chart)
    try:
        # Not top-level: no Altair theme (st.altair_chart turns the default one off too); the schema
        # is named as Altair names it.
        spec = chart.to_dict(validate=False, context={"top_level": False})
    finally:
        for part, data in swapped:  # the chart as it was given
            part.data = data
    return {"$schema": alt.SCHEMA_URL, **spec, "datasets": datasets}


# Specs compiled by compiled_spec, by key, the most recently used last; with each, which of the
# frames each of its datasets is.
_COMPILED: OrderedDict[tuple, tuple[dict[str, Any], dict[str, str]]] = OrderedDict()
_COMPILED_KEPT = 64
_COMPILED_LOCK = threading.Lock()  # the app's sessions run in threads of one process


def compiled_spec(key: tuple, frames: Mapping[str, pd.DataFrame],
                  build: Callable[[Mapping[str, pd.DataFrame]], Any]) -> dict[str, Any]:
    """:func:`vega_lite_spec` of ``build(frames)``, built once per ``key`` and then given new frames.

    Building a layered chart in Altair and writing its spec takes about 20 ms (the batch chart's nine
    layers), on every move of a control; the spec does not change when only its data do. So the first
    call with a key builds the chart and notes which of ``frames`` each dataset is (by identity); a
    later call with that key returns the same spec with its own frames in their places, as the
    browser then gets it: same spec, new data. ``key`` must hold everything the chart's spec depends
    on besides the frames (language, axis domains, which layers are drawn), and ``build`` must take
    every frame it draws from ``frames``.

    Raises
    ------
    ValueError
        Where the built chart draws a frame that is not one of ``frames`` (its data would be stale at
        the next call).
    """
    with _COMPILED_LOCK:
        known = _COMPILED.get(key)
        if known is not None:
            _COMPILED.move_to_end(key)
    if known is None:
        spec = vega_lite_spec(build(frames))
        datasets = spec.pop("datasets")
        roles = {}
        for name, data in datasets.items():
            role = next((role for role, frame in frames.items() if frame is data), None)
            if role is None:
                raise ValueError(f"{key[0]}: dataset {name} is not one of the frames given ({', '.join(frames)})")
            roles[name] = role
        known = spec, roles
        with _COMPILED_LOCK:
            _COMPILED[key] = known
            while len(_COMPILED) > _COMPILED_KEPT:
                _COMPILED.popitem(last=False)
    spec, roles = known
    return {**spec, "datasets": {name: frames[role] for name, role in roles.items()}}
