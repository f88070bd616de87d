"""Runs whose acceptance the benchmark set instead of measuring: synthetic acceptance.

Engines can be told to accept drafts at a chosen rate, so that a throughput benchmark runs at a
known acceptance without a trained draft. Such a run says what the engine does at that rate, nothing
about how often a real draft is accepted on real traffic: it is kept out of calibration and of Claims
unless the user asks for it, and labelled in every table and chart (``runs.synthetic_acceptance``).

What marks a run, wherever it appears in the file's name or folder, the run's label or any field
kept in its ``extra`` (a ``--metadata`` key, a sweep folder's setting, a command line):

* vLLM's ``rejection_sample_method`` set to ``synthetic`` (``vllm/config/speculative.py``,
  ``RejectionSampleMethod``: from 0.19.0; ``synthetic_acceptance_rate`` in 0.19.0, then
  ``synthetic_acceptance_rates`` or ``synthetic_acceptance_length`` from 0.20.0, "only valid when
  rejection_sample_method is 'synthetic'");
* a value given to any of those ``synthetic_acceptance_*`` keys (a number or a list of them, not
  ``null``), whatever method is named beside it;
* SGLang's ``SGLANG_SIMULATE_ACC_LEN`` above 0 (``python/sglang/srt/speculative/spec_utils.py``,
  0.5.23: ``SIMULATE_ACC_LEN = envs.SGLANG_SIMULATE_ACC_LEN.get()  # turn off if < 0``);
* the user's own flag: a CSV column ``synthetic_acceptance`` (or ``synthetic``), or the Explorer's
  and the store's :meth:`specviz.results.store.Store.flag_synthetic`.

A run the file already flags (a CSV column) keeps the file's word, true or false.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

from specviz.errors import Notice

__all__ = ["EVIDENCE", "synthetic_evidence", "mark_synthetic"]

# Between a key and its value: quotes (escaped or not), '=', ':', spaces, as JSON, a flag, a
# folder name or an environment assignment write them.
_GAP = r"""[\s"'\\:=]{1,8}"""
EVIDENCE: dict[str, re.Pattern[str]] = {
    "rejection_sample_method": re.compile(rf"rejection[_-]sample[_-]method{_GAP}synthetic\b", re.IGNORECASE),
    "synthetic_acceptance": re.compile(rf"synthetic[_-]acceptance[_-](?:rates?|length){_GAP}(?:\[\s*)?[0-9.]",
                                       re.IGNORECASE),
    "SGLANG_SIMULATE_ACC_LEN": re.compile(rf"SGLANG_SIMULATE_ACC_LEN{_GAP}([+-]?(?:\d+(?:\.\d*)?|\.\d+))"),
}
"""What each marker looks like in text, by the name it is reported under."""


def synthetic_evidence(texts: Iterable[str]) -> str | None:
    """The first marker of synthetic acceptance in ``texts``, as the text that carries it.

    Parameters
    ----------
    texts : iterable of str
        A run's file name, label and ``extra`` JSON, in any order.

    Returns
    -------
    str or None
        The matched text (``rejection_sample_method": "synthetic``,
        ``SGLANG_SIMULATE_ACC_LEN=2.5``), or None where nothing says the acceptance was synthetic.
        ``SGLANG_SIMULATE_ACC_LEN`` of 0 or below is SGLang's "off" and is no evidence.

    >>> synthetic_evidence(['{"speculative_config": {"rejection_sample_method": "synthetic"}}'])
    'rejection_sample_method": "synthetic'
    >>> synthetic_evidence(["SGLANG_SIMULATE_ACC_LEN=-1 python -m sglang.launch_server"]) is None
    True
    """
    for text in texts:
        for name, pattern in EVIDENCE.items():
            for found in pattern.finditer(text):
                if name == "SGLANG_SIMULATE_ACC_LEN" and float(found[1]) <= 0:
                    continue
                return found[0]
    return None


def mark_synthetic(runs: list[dict[str, Any]], file_name: str) -> list[Notice]:
    """Flag the runs of one file whose acceptance was synthetic, in place (``synthetic_acceptance``).

    Parameters
    ----------
    runs : list of dict
        Canonical runs as an importer built them (``label``, ``extra`` as JSON text).
    file_name : str
        The file's name as the user gave it, folders included (a sweep folder names its settings).

    Returns
    -------
    list of Notice
        One ``ingest.synthetic`` notice with the number of runs flagged and the evidence of the
        first, or none.
    """
    flagged, first = 0, None
    for run in runs:
        if run.get("synthetic_acceptance") is not None:
            continue
        evidence = synthetic_evidence((file_name, run.get("label") or "", run.get("extra") or ""))
        if evidence is not None:
            run["synthetic_acceptance"] = True
            flagged += 1
            first = first or evidence
    return [Notice("ingest.synthetic", runs=flagged, evidence=first)] if flagged else []
