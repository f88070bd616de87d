"""Live traffic beside the step model: is speculation paying at the batch the server runs now?

The live page measures, over a window of a running server (:mod:`specviz.prom`), the draft length γ,
the acceptance length and the running requests (the batch the engine decodes). :func:`paying_now`
puts those into the scenario of the sidebar (its GPU, models, engine costs and precision) and asks the
calculator's step model what speculation gains at that batch, with its band, and at which batch it
would stop paying at the acceptance measured.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Mapping

import numpy as np

from . import calculator
from .errors import Notice
from .scenario import Scenario

__all__ = ["PayingNow", "paying_now"]


@dataclass(frozen=True)
class PayingNow:
    """The step model's verdict for a live window.

    Attributes
    ----------
    batch : int
        The running requests, rounded, at least 1: the batch the engine decodes now.
    gamma : int
        The measured draft length (draft tokens per draft), rounded.
    alpha : float
        α of the measured acceptance length at that γ (i.i.d.).
    speedup, low, high : float
        The step model's speedup at that batch and its band
        (:func:`specviz.calculator.speedup_band`).
    stops_paying_at : float
        The smallest batch at which the speedup at this α falls below 1 (NaN: none up to
        ``batch_max``): above it, speculation should be off.
    """

    batch: int
    gamma: int
    alpha: float
    speedup: float
    low: float
    high: float
    stops_paying_at: float


def paying_now(scenario: Scenario, figures: Mapping[str, Any], batch_max: int) -> PayingNow | Notice:
    """What speculation gains on the sidebar's scenario at the live batch, γ and acceptance.

    .. math:: S = \\frac{E\\, t_{plain}(B)}{γ\\, t_{draft}(B) + t_{verify}(B)},\\quad
              B = \\text{running requests},\\ E = \\text{measured acceptance length}

    with α = E⁻¹(acceptance length, γ) as the window gives it. ``figures`` holds a window's
    ``alpha_iid``, ``num_speculative_tokens`` and ``running_requests``: the fields of a
    :class:`specviz.prom.SpecDecodeState` (``vars(state)``) or a row of
    :func:`specviz.prometheus.query_figures`. The scenario's context is kept: the metrics do not say
    how long the running requests' contexts are.

    Returns
    -------
    PayingNow, or a Notice (``live.no_verdict``) naming the figure the window lacks (the engine does
    not export it, or nothing ran in the window).
    """
    needed = ("alpha_iid", "num_speculative_tokens", "running_requests")
    missing = [name for name in needed if figures.get(name) is None or not math.isfinite(figures[name])]
    if missing:
        return Notice("live.no_verdict", figures=", ".join(missing))
    batch = max(1, int(round(figures["running_requests"])))
    gamma = max(1, int(round(figures["num_speculative_tokens"])))
    live = replace(scenario, mode="step", alpha=float(figures["alpha_iid"]), gamma=gamma, batch=batch)
    here = calculator.evaluate_scenario(live, live.alpha, gamma, batch, live.context)
    low, high = calculator.speedup_band(live, live.alpha, gamma, batch, live.context)
    _, crossover = calculator.batch_sweep(live, [live.alpha], gamma, live.context, batch_max)
    return PayingNow(batch, gamma, float(live.alpha), float(here["speedup"]), float(np.asarray(low)),
                     float(np.asarray(high)), float(crossover.iloc[0]))
