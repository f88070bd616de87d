"""A request's whole latency, prefill and decode, with and without speculation.

Speculation shortens decode only: the prompt is read in one compute-bound prefill pass either way
(and a draft model reads it too), so the end-to-end gain of a request is

.. math::

    S_{e2e} = \\frac{t_{prefill} + n_{out}\\, t_{plain}}
                   {t_{prefill} + t_{draft\\ prefill} + \\frac{n_{out}}{E}\\, t_{spec}}
            \\;\\le\\; \\frac{1}{\\text{prefill share}}

with t_plain and t_spec the step model's plain and speculative steps (:func:`specviz.model.step.step`) at
the batch and the request's mean context (its prompt and half its output), E the tokens per
speculative step, and the prefill one pass of the prompt (:func:`specviz.model.step.pass_time`, N = prompt
tokens) plus the step's fixed cost. A prompt-heavy request (long in, short out) spends most of its
time in prefill, where speculation does nothing; its time to first token is unchanged, or longer by
the draft's own prefill.

The prefill is the request's own, alone: a server that batches prefills with other requests'
decode steps (chunked prefill) stretches both, so the time to first token here is a lower bound.

References
----------
"GPU chạy 30% công suất — bạn vẫn trả 100% tiền" (the Vietnamese article behind the worked example of
the Claims page): a coding assistant with about 100 input and 500 output tokens per response is
decode-heavy (5:1); prompt-heavy work is dominated by prefill, where speculation does nothing.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from .errors import InputError
from .i18n import PresetText
from .model import step

if TYPE_CHECKING:  # the scenario's presets hold the workloads: a type here, not an import
    from .scenario import Scenario

__all__ = ["Workload", "load_workloads", "end_to_end", "PROMPT_HEAVY_SHARE"]

# A request that spends at least this share of its time (without speculation) in prefill is called
# prompt-heavy: not even a free draft that is always right could make it 4x faster, and a real
# speedup of decode loses a large part of its gain (2.57x on decode is 1.56x on the request at 35 %).
PROMPT_HEAVY_SHARE = 0.25


@dataclass(frozen=True)
class Workload:
    """Tokens in and out per request, with where the figures come from."""

    id: str
    name: str
    input_tokens: int
    output_tokens: int
    source: str
    note: str


def load_workloads(data_dir: Path) -> dict[str, Workload]:
    """The workload presets of ``data_dir / "workloads.csv"`` by id, in file order (name, source and
    note with their translations)."""
    with open(data_dir / "workloads.csv", newline="", encoding="utf-8") as handle:
        return {row["id"]: Workload(row["id"], PresetText.from_row(row, "name"), int(row["input_tokens"]),
                                    int(row["output_tokens"]), PresetText.from_row(row, "source"),
                                    PresetText.from_row(row, "note"))
                for row in csv.DictReader(handle)}


def end_to_end(scenario: Scenario, alpha: ArrayLike, gamma: ArrayLike, batch: ArrayLike, input_tokens: ArrayLike,
               output_tokens: ArrayLike) -> dict[str, np.ndarray]:
    """Time to first token, decode time and the whole request, plain and speculative (the module's
    equation), broadcast over every argument.

    Parameters
    ----------
    scenario : Scenario
        Hardware, models, engine costs, precision and tensor parallelism (its own α, γ, batch and
        context are not used).
    alpha, gamma, batch : array_like
        Per-position acceptance, draft length, and the requests decoded together.
    input_tokens, output_tokens : array_like
        Tokens in the prompt and tokens generated, per request (output at least 1).

    Returns
    -------
    dict of ndarray
        ``ttft_plain_s``, ``ttft_spec_s`` (the prompt's prefill, and with speculation the draft's
        too), ``decode_plain_s``, ``decode_spec_s`` (the output's steps after the first token),
        ``e2e_plain_s``, ``e2e_spec_s``, ``decode_speedup``, ``e2e_speedup``, ``prefill_share``
        (of the plain request's time), ``e2e_limit`` (1 / prefill share: no speculation does
        better) and ``prompt_heavy`` (prefill share ≥ :data:`PROMPT_HEAVY_SHARE`).

    Raises
    ------
    ValueError
        If a count is below its minimum (prompt 1 token, output 1 token).
    """
    n_in, n_out = np.asarray(input_tokens, dtype=float), np.asarray(output_tokens, dtype=float)
    if np.any(n_in < 1) or np.any(n_out < 1):
        raise InputError("workload.tokens")
    costs, timed = scenario.costs, dict(**scenario.parallel, precision=scenario.precision, costs=scenario.costs)
    fixed = costs.step_ms * 1e-3
    prefill = step.pass_time(scenario.gpu, scenario.target, 1.0, n_in, 0.0, **timed)["time_s"] + fixed
    draft = scenario.draft
    if draft.kind == "model":
        drafted = step.pass_time(scenario.gpu, draft.model, 1.0, n_in, 0.0, **timed)["time_s"]
    elif draft.kind in ("eagle", "eagle3"):
        drafted = step.pass_time(scenario.gpu, step.eagle_head(scenario.target, draft.kind), 1.0, n_in, 0.0,
                                 **timed)["time_s"]
    else:  # n-gram lookup reads the prompt on the host; a self-draft shares the target's prefill
        drafted = np.zeros_like(prefill)
    steps = scenario.step_times(batch=batch, gamma=gamma, context=n_in + n_out / 2, alpha=alpha)
    # The first token comes from the prefill; the other n_out − 1 from decode steps.
    decode_plain = (n_out - 1) * steps["plain_s"]
    decode_spec = (n_out - 1) / steps["expected_tokens"] * steps["spec_s"]
    e2e_plain, e2e_spec = prefill + decode_plain, prefill + drafted + decode_spec
    share = prefill / e2e_plain
    out = {"ttft_plain_s": prefill, "ttft_spec_s": prefill + drafted, "decode_plain_s": decode_plain,
           "decode_spec_s": decode_spec, "e2e_plain_s": e2e_plain, "e2e_spec_s": e2e_spec,
           "decode_speedup": steps["speedup"], "e2e_speedup": e2e_plain / e2e_spec, "prefill_share": share,
           "e2e_limit": 1.0 / share, "prompt_heavy": share >= PROMPT_HEAVY_SHARE}
    shape = np.broadcast_shapes(*(np.shape(v) for v in out.values()))
    return {k: np.broadcast_to(v, shape) for k, v in out.items()}
