"""A run's other values (``extra``, the JSON of what a file holds beyond the canonical columns): its
scalar fields by dotted path, which the explorer groups sweeps by and a page shows.

A page reads ``extra`` in this flat form only (:meth:`specviz.results.store.Store.shown_runs`): the
fields a sweep can be told apart by, each cut, never the per-request arrays that make a run's
``extra`` tens of kilobytes (an SGLang ``bench_serving`` line stores 19 KB of them).

Read from it too: the tree a run drafted (:func:`tree_shape`, :func:`tree_width`), which no chain's
figures hold.
"""

from __future__ import annotations

import json
import math
import numbers
from typing import Any

__all__ = ["scalar_fields", "shown_extra", "TREE_FIELDS", "tree_shape", "tree_text", "tree_width", "tokenizer_id"]


def _object(text: Any) -> dict[str, Any]:
    """One run's ``extra`` as the JSON object it holds; empty for text that is none, not an object, or
    nests deeper than this call stack decodes."""
    try:
        parsed = json.loads(text) if isinstance(text, str) and text else {}
    except (ValueError, RecursionError):
        return {}
    return parsed if isinstance(parsed, dict) else {}


def scalar_fields(text: Any) -> dict[str, Any]:
    """The scalar fields of one run's ``extra`` by dotted path (objects flattened:
    ``sweep.serve.max_num_seqs``); lists, and what is inside them, are left out.

    Walked with a stack, not recursion: a file's nesting may be as deep as its import could decode.
    Text that is not a JSON object, or nests deeper than this call stack decodes, has no fields.
    """
    flat: dict[str, Any] = {}
    stack = [("", _object(text))]
    while stack:
        prefix, node = stack.pop()
        for key, value in node.items():
            if isinstance(value, dict):
                stack.append((f"{prefix}{key}.", value))
            elif value is None or isinstance(value, (str, numbers.Real)):
                flat[f"{prefix}{key}"] = value
    return flat


def shown_extra(text: Any, max_chars: int, text_chars: int) -> str | None:
    """``extra`` as a page reads it: its scalar fields (:func:`scalar_fields`) in order of path, each
    path and text value cut at ``text_chars`` with ``…``, while their compact JSON stays within
    ``max_chars``; ``None`` for a run without fields. The fields past the bound are left out (a real
    file's fit: an SGLang ``bench_serving`` line has 325 scalar fields in 14 KB)."""
    def cut(value: Any) -> Any:
        return value[:text_chars - 1] + "…" if isinstance(value, str) and len(value) > text_chars else value

    fields = scalar_fields(text)
    kept: dict[str, Any] = {}
    used = 1  # "{"; each field then adds its "path":value and the comma or "}" after it
    for path in sorted(fields):
        path_shown, value = cut(path), cut(fields[path])
        used += len(json.dumps({path_shown: value}, ensure_ascii=False, separators=(",", ":"))) - 1
        if used > max_chars:
            break
        kept[path_shown] = value
    return json.dumps(kept, ensure_ascii=False, separators=(",", ":")) if kept else None


TREE_FIELDS = {"topk": ("topk", "server_info.speculative_eagle_topk"),
               "num_draft_tokens": ("num_draft_tokens", "server_info.speculative_num_draft_tokens")}
"""The fields of ``extra`` that give the tree a run drafted, by SGLang's name for each, each at its
paths: SpecForge's own and the benchmark report's (its engine's ``--speculative-eagle-topk`` and
``--speculative-num-draft-tokens``, kept by name), then SGLang ``bench_serving``'s ``server_info``."""


def _count(value: Any) -> bool:
    """Whether a value is a tree's count: a finite number, not a flag."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)


# The tree's fields as SpecForge's labels write each (whole numbers without ".0").
_TREE_SHOWN = {"topk": "top-k {:.12g}", "num_draft_tokens": "{:.12g} draft tokens"}


def tree_text(shape: dict[str, Any]) -> str:
    """A tree (:func:`tree_shape`, or a file's own fields by those names) as a run's draft setting
    goes on: ``", top-k 10, 60 draft tokens"``; each field that is no count left out, ``""`` for none.
    The SpecForge importer's labels and the explorer's draft settings say a tree alike with it (the
    label had said "top-k 10.0" and "top-k None" where the setting said "top-k 10" and nothing)."""
    return "".join(f", {shown.format(shape[name])}" for name, shown in _TREE_SHOWN.items() if _count(shape.get(name)))


def tree_shape(extra: Any) -> dict[str, Any]:
    """The tree a run drafted as its ``extra`` gives it (:data:`TREE_FIELDS`): ``topk`` and
    ``num_draft_tokens``, each where a path gives it a finite number (counts: text, a flag, or the
    store's note of a value too large to keep, ``(not stored: …)``, is none: an attack pass)."""
    found = _object(extra)

    def scalar_at(path: str) -> Any:
        node: Any = found
        for key in path.split("."):
            node = node.get(key) if isinstance(node, dict) else None
        return node if _count(node) else None

    shape = {name: next((v for v in map(scalar_at, paths) if v is not None), None) for name, paths in TREE_FIELDS.items()}
    return {name: value for name, value in shape.items() if value is not None}


def tree_width(extra: Any) -> int | None:
    """The top-k of a run that drafted a tree, None for a chain: its ``topk`` (:func:`tree_shape`)
    above 1. A tree verifies its ``num_draft_tokens`` nodes a step where a chain verifies γ + 1, and
    its acceptance length is no chain's E(α, γ): the calculator, which prices chains, does not
    predict it."""
    width = tree_shape(extra).get("topk")
    return int(width) if width is not None and width > 1 else None


def tokenizer_id(extra: Any) -> str | None:
    """The tokenizer a run names in ``extra`` (``tokenizer_id``: vLLM bench's, and AIPerf's
    ``input_config.tokenizer.name`` as its importer keeps it), None where none."""
    found = _object(extra).get("tokenizer_id")
    return found if isinstance(found, str) else None
