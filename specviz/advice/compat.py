"""Can this draft serve this target? Their vocabularies and tokenizers, compared offline.

Verification compares token ids: the target scores the draft's ids as its own. A draft whose
tokenizer maps text to other ids proposes tokens the target reads as something else; nothing
crashes, the acceptance collapses and, where the special tokens differ, the draft stops or runs on
at the wrong places ("GPU chạy 30% công suất — bạn vẫn trả 100% tiền": a draft with another
tokenizer fails silently). So the pair needs:

* the same token → id map for every token either model can emit: compared from the two
  ``tokenizer.json`` files (Hugging Face tokenizers: ``model.vocab``, a map for BPE and WordPiece, a
  list of [token, score] for Unigram, and ``added_tokens``);
* the same special token ids (``bos_token_id``, ``eos_token_id``, ``pad_token_id`` of each
  ``config.json``);
* and, for engines that check it, the same ``vocab_size`` (the embedding's rows, often padded past
  the tokenizer's size: two sizes can differ over the same tokenizer).

Nothing is downloaded: the files are the user's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Mapping

from specviz import settings
from specviz.errors import Notice, SpecvizError

__all__ = ["VERDICTS", "PairCheck", "read_json", "token_ids", "check_pair"]

VERDICTS = ("same", "usable", "unusable", "unknown")
_SPECIAL = ("bos_token_id", "eos_token_id", "pad_token_id")
# Tokens whose ids differ, listed in a finding at most.
_SHOWN = 5
_CONTAINER_BYTES = 100  # a dict is 64 bytes and a list 56 in CPython, each also held in its parent


def read_json(data: bytes, name: str, max_bytes: int) -> dict[str, Any]:
    """One uploaded JSON object (a config.json or a tokenizer.json), size-limited.

    Raises
    ------
    SpecvizError
        ``compat.empty``, ``compat.too_large``, ``compat.too_dense`` (more memory to parse than
        ``SPECVIZ_IMPORT_MEMORY_BYTES``, estimated before parsing), ``compat.not_json`` (not UTF-8,
        not JSON, nested too deeply) or ``compat.not_object``; each names the file.
    """
    if not data.strip():
        raise SpecvizError("compat.empty", name=name)
    if len(data) > max_bytes:
        raise SpecvizError("compat.too_large", name=name, size=len(data), limit=max_bytes)
    # Sized before it is parsed: each object or list costs json.loads about 100 bytes however small
    # its text (a 50 MB file of {} took 1.26 GB); the text itself, decoded, about twice its bytes.
    needed = 2 * len(data) + _CONTAINER_BYTES * (data.count(b"{") + data.count(b"["))
    budget = settings.get("SPECVIZ_IMPORT_MEMORY_BYTES")
    if needed > budget:
        raise SpecvizError("compat.too_dense", name=name, needed=needed, limit=budget)
    try:
        parsed = json.loads(data.decode("utf-8-sig"))  # a byte-order mark, as some editors write, skipped
    except (UnicodeDecodeError, RecursionError, ValueError):
        raise SpecvizError("compat.not_json", name=name) from None
    if not isinstance(parsed, dict):
        raise SpecvizError("compat.not_object", name=name)
    return parsed


def token_ids(tokenizer: Mapping[str, Any], name: str = "tokenizer.json") -> dict[str, int]:
    """The token → id map of a Hugging Face ``tokenizer.json``: its model's vocabulary (a map, or a
    Unigram list whose position is the id) and its added tokens.

    Raises
    ------
    SpecvizError
        ``compat.not_tokenizer`` if the file has neither in a known shape.
    """
    model = tokenizer.get("model")
    vocab = model.get("vocab") if isinstance(model, dict) else None
    if isinstance(vocab, dict):
        ids = {str(token): i for token, i in vocab.items() if isinstance(i, int) and not isinstance(i, bool)}
    elif isinstance(vocab, list):
        ids = {str(entry[0]): i for i, entry in enumerate(vocab) if isinstance(entry, (list, tuple)) and entry}
    else:
        ids = {}
    for added in tokenizer.get("added_tokens") or []:
        if isinstance(added, dict) and isinstance(added.get("id"), int) and "content" in added:
            ids[str(added["content"])] = added["id"]
    if not ids:
        raise SpecvizError("compat.not_tokenizer", name=name)
    return ids


@dataclass(frozen=True)
class PairCheck:
    """The comparison of a target and a draft.

    Attributes
    ----------
    verdict : str
        ``same`` (identical token maps and special tokens), ``usable`` (the maps agree on every
        token both have; a difference an engine may still refuse is listed), ``unusable`` (ids
        differ: verification would compare different tokens) or ``unknown`` (no tokenizers to
        compare: the configs alone cannot show that two maps agree).
    findings : list of Notice
        What was compared and what differs, in order.
    tokens : dict
        Counts where tokenizers were compared: ``target``, ``draft`` (tokens in each), ``shared``,
        ``different_ids`` (shared tokens mapped to other ids), ``only_target``, ``only_draft``.
    """

    verdict: str
    findings: list[Notice]
    tokens: dict[str, int] = field(default_factory=dict)


def _special(config: Mapping[str, Any], key: str) -> Any:
    """A special token id as comparable: a list (several eos ids) as a sorted tuple."""
    value = config.get(key)
    return tuple(sorted(value)) if isinstance(value, list) else value


def check_pair(target_config: Mapping[str, Any], draft_config: Mapping[str, Any],
               target_tokenizer: Mapping[str, Any] | None = None,
               draft_tokenizer: Mapping[str, Any] | None = None) -> PairCheck:
    """Whether the draft can serve the target (see the module).

    Returns
    -------
    PairCheck
    """
    findings: list[Notice] = []
    serious = False
    sizes = target_config.get("vocab_size"), draft_config.get("vocab_size")
    if None in sizes:
        findings.append(Notice("compat.no_vocab_size"))
    elif sizes[0] == sizes[1]:
        findings.append(Notice("compat.vocab_same", size=sizes[0]))
    else:
        findings.append(Notice("compat.vocab_differs", target=sizes[0], draft=sizes[1]))
    for key in _SPECIAL:
        target, draft = _special(target_config, key), _special(draft_config, key)
        if target is not None and draft is not None and target != draft:
            findings.append(Notice("compat.special_differs", token=key, target=str(target), draft=str(draft)))
            serious = True
    tokens: dict[str, int] = {}
    if target_tokenizer is None or draft_tokenizer is None:
        findings.append(Notice("compat.no_tokenizers"))
        verdict = "unusable" if serious else "unknown"
        return PairCheck(verdict, findings, tokens)
    target_ids, draft_ids = token_ids(target_tokenizer, "target tokenizer.json"), token_ids(draft_tokenizer,
                                                                                          "draft tokenizer.json")
    shared = target_ids.keys() & draft_ids.keys()
    # Set operations over (token, id) pairs run in C: a 150,000-token vocabulary in milliseconds.
    different = sorted({token for token, _ in set(target_ids.items()) - set(draft_ids.items())} & shared)
    tokens = {"target": len(target_ids), "draft": len(draft_ids), "shared": len(shared),
              "different_ids": len(different), "only_target": len(target_ids) - len(shared),
              "only_draft": len(draft_ids) - len(shared)}
    if different:
        findings.append(Notice("compat.ids_differ", count=len(different), shared=len(shared),
                               examples=", ".join(repr(token) for token in different[:_SHOWN])))
        serious = True
    else:
        findings.append(Notice("compat.ids_agree", shared=len(shared)))
    if tokens["only_target"] or tokens["only_draft"]:
        findings.append(Notice("compat.tokens_apart", only_target=tokens["only_target"],
                               only_draft=tokens["only_draft"]))
    if serious:
        verdict = "unusable"
    elif tokens["only_target"] == tokens["only_draft"] == 0 and sizes[0] == sizes[1]:
        verdict = "same"
    else:
        verdict = "usable"
    return PairCheck(verdict, findings, tokens)
