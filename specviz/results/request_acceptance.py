"""Per-request acceptance: how a run's requests spread around its mean, and what that spread does
to the latency tail.

A run's acceptance length is a mean over its requests; the requests that accept little take more
steps for the same tokens and make the tail of request latency. Files that give each request's
acceptance (AIPerf's ``spec_decode_acceptance`` per record, vLLM's ``metrics.speculative_decoding``
per response, SpecForge's ``per_request_accept_length``) are stored per request in the
``requests`` table (schema 4); this module reads them as one acceptance length per request,

.. math:: L = \\text{acceptance\\_length}, \\text{ else } 1 + \\frac{\\text{accepted}}{\\text{drafts}},
          \\text{ else } 1 + r\\,\\gamma

(vLLM's definitions: ``vllm/v1/spec_decode/metrics.py``, mean acceptance length = 1 + accepted
tokens / drafts, and the acceptance rate r = accepted / drafted tokens with γ tokens a draft), and
simulates the request latency from that measured mix (:func:`specviz.model.simulate.latency` with
``request_alphas``: each simulated request draws one measured request's α) beside the one-α
simulation at the run's own mean, the figure a page would otherwise use.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from specviz import settings
from specviz.model import simulate, spec
from specviz.scenario import Scenario

__all__ = ["QUANTILES", "request_lengths", "length_quantiles", "tail_setting", "mix_tail", "mix_tail_on"]

QUANTILES = (0.01, 0.1, 0.5, 0.9, 0.99)
"""The quantiles of a run's per-request acceptance lengths shown: the low ones are its tail."""


def request_lengths(requests: pd.DataFrame, gamma: float | None) -> pd.Series:
    """Each request's acceptance length (tokens per verify step), from whichever figure it has.

    Parameters
    ----------
    requests : DataFrame
        Rows of the ``requests`` table: ``acceptance_length``, ``accepted_tokens``, ``drafts``,
        ``acceptance_rate`` (any may be missing or NaN).
    gamma : float or None
        The run's draft length, needed only where a request has a rate alone.

    Returns
    -------
    Series
        Lengths in the requests' order, NaN where none of the three forms is given (or the rate
        without γ, or no drafts at all).
    """
    def column(name: str) -> pd.Series:
        return requests[name].astype(float) if name in requests else pd.Series(np.nan, index=requests.index)

    from_counts = 1.0 + column("accepted_tokens") / column("drafts").where(column("drafts") > 0)
    from_rate = 1.0 + column("acceptance_rate") * (np.nan if gamma is None or pd.isna(gamma) else float(gamma))
    return column("acceptance_length").fillna(from_counts).fillna(from_rate)


def length_quantiles(lengths: pd.Series) -> dict[str, float]:
    """The mean, the :data:`QUANTILES` (linear, as numpy's default) and the count of the known
    lengths; NaN figures where there are none."""
    known = lengths.dropna().to_numpy(dtype=float)
    if not known.size:
        return {"requests": 0, "mean": np.nan, **{f"p{round(q * 100)}": np.nan for q in QUANTILES}}
    return {"requests": int(known.size), "mean": float(known.mean()),
            **{f"p{round(q * 100)}": float(v) for q, v in zip(QUANTILES, np.quantile(known, QUANTILES))}}


def tail_setting(concurrency: float, output_tokens: pd.Series, batch: int,
                 default_output: int) -> tuple[int, int, bool, bool]:
    """The batch and the tokens a request decodes at which a run's tail is simulated, whether those
    tokens were measured and whether the batch is the run's: the run's ``concurrency`` where it set
    one (else ``batch``), and its requests' mean output less the first token, which the prefill gives
    (else ``default_output`` less one, where the run has no output counts)."""
    own_batch = bool(pd.notna(concurrency) and concurrency >= 1)
    chosen = int(concurrency) if own_batch else int(batch)
    mean = output_tokens.mean()
    measured = bool(pd.notna(mean) and mean >= 2)
    return chosen, (int(round(mean)) if measured else int(default_output)) - 1, measured, own_batch


def mix_tail(lengths: pd.Series, gamma: int, times: simulate.StepTimes, output_tokens: int,
             requests: int = 2_000, seed: int = 0) -> pd.DataFrame:
    """Request latency simulated from a run's measured mix of requests and from one α at its mean.

    Parameters
    ----------
    lengths : Series
        Per-request acceptance lengths (:func:`request_lengths`), each in [1, γ + 1]; NaN ignored.
    gamma : int
        The run's draft length.
    times : StepTimes
        A plain and a speculative step's seconds (the step model's, at the run's setting).
    output_tokens : int
        Tokens each request decodes after its first.
    requests, seed : int
        As :func:`specviz.model.simulate.latency`; both simulations use the same seed.

    Returns
    -------
    DataFrame
        Rows ``p50``, ``p90``, ``p99``, ``mean`` (request latency, s); columns ``one_alpha`` (every
        request at the α whose E(α, γ) is the mix's mean length), ``measured_mix`` (each request at
        the α of a measured request, drawn with replacement) and ``change`` (measured / one α − 1).
        Jensen's inequality makes the mix slower on average for the same mean length: the
        requests that accept little cost more steps than those that accept much save.

    Raises
    ------
    specviz.model.spec.InputError
        ``spec.length_range`` where a length is outside [1, γ + 1].
    """
    known = lengths.dropna().to_numpy(dtype=float)
    alphas = np.asarray(spec.alpha_from_acceptance_length(known, gamma), dtype=float).reshape(-1)
    one = float(spec.alpha_from_acceptance_length(float(known.mean()), gamma))
    common = {"times": times, "output_tokens": output_tokens, "requests": requests, "seed": seed}
    single = simulate.latency(one, gamma, **common)
    mixed = simulate.latency(gamma=gamma, request_alphas=alphas, **common)
    rows = ("p50", "p90", "p99", "mean")
    table = pd.DataFrame({"one_alpha": [getattr(single, f"request_{r}_s") for r in rows],
                          "measured_mix": [getattr(mixed, f"request_{r}_s") for r in rows]}, index=list(rows))
    return table.assign(change=table["measured_mix"] / table["one_alpha"] - 1.0)


def mix_tail_on(scenario: Scenario, lengths: pd.Series, gamma: int, batch: int, context: float,
                output_tokens: int) -> pd.DataFrame:
    """:func:`mix_tail` on ``scenario``'s step times (:meth:`specviz.scenario.Scenario.step_times`) at the
    run's γ, ``batch`` and ``context`` and the mix's mean length, its two simulations within
    ``SPECVIZ_PAGE_SIMULATION_CELLS`` (:func:`specviz.model.simulate.requests_within`: fewer requests
    for long outputs), as the Explorer and the Latency view show it.

    Raises
    ------
    SpecvizError
        As :func:`mix_tail`.
    """
    known = lengths.dropna()
    requests = simulate.requests_within(settings.get("SPECVIZ_PAGE_SIMULATION_CELLS"), output_tokens, runs=2)
    times = scenario.step_times(batch=batch, gamma=gamma, context=context, acceptance_length=float(known.mean()))
    return mix_tail(known, gamma, simulate.StepTimes.from_step(times), output_tokens, requests=requests)
