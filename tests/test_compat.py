"""Tests for specviz.advice.compat: a draft's tokenizer and special tokens against the target's."""

import json

import pytest
from hypothesis import given, settings, strategies as st

from specviz.advice import compat
from specviz.errors import SpecvizError

VOCAB = {"<unk>": 0, "▁the": 1, "▁a": 2, "ing": 3, "def": 4, "(": 5, ")": 6}
ADDED = [{"id": 7, "content": "<|endoftext|>", "special": True}]


def bpe(vocab=VOCAB, added=ADDED) -> dict:
    return {"version": "1.0", "model": {"type": "BPE", "vocab": dict(vocab), "merges": []}, "added_tokens": list(added)}


def config(**fields) -> dict:
    return {"model_type": "qwen3", "vocab_size": 8, "eos_token_id": 7, **fields}


class TestReadJson:
    def test_an_object(self):
        assert compat.read_json(json.dumps(config()).encode(), "config.json", 1000)["vocab_size"] == 8

    @pytest.mark.parametrize("data, key", [(b"", "compat.empty"), (b"  \n", "compat.empty"), (b"x" * 2000, "compat.too_large"),
                                           (b"{not json", "compat.not_json"), (b"\xff\xfe", "compat.not_json"),
                                           (b"[1, 2]", "compat.not_object")])
    def test_what_is_not_one(self, data, key):
        with pytest.raises(SpecvizError) as raised:
            compat.read_json(data, "draft config.json", 1000)
        assert raised.value.key == key and raised.value.params["name"] == "draft config.json"

    def test_a_byte_order_mark_before_the_object_is_skipped(self):
        data = b"\xef\xbb\xbf" + json.dumps(config()).encode()
        assert compat.read_json(data, "config.json", 1000) == config()

    def test_a_file_dense_in_objects_is_refused_before_it_is_parsed(self, monkeypatch):
        """A 50 MB file of {} took 1.26 GB to parse: memory is estimated from its objects and lists first."""
        dense = b"[" + b"{}," * 16_000_000 + b"{}]"
        with pytest.raises(SpecvizError) as raised:
            compat.read_json(dense, "tokenizer.json", 50_000_000)
        assert raised.value.key == "compat.too_dense" and raised.value.params["needed"] > 1_000_000_000
        merges = json.dumps({"model": {"vocab": {f"t{i}": i for i in range(150_000)},
                                       "merges": [[f"t{i}", f"t{i + 1}"] for i in range(150_000)]}}).encode()
        monkeypatch.setenv("SPECVIZ_IMPORT_MEMORY_BYTES", str(100_000_000))  # a real tokenizer's shape is read
        assert len(compat.read_json(merges, "tokenizer.json", 50_000_000)["model"]["merges"]) == 150_000

    def test_deep_nesting_beyond_the_parser(self):
        with pytest.raises(SpecvizError) as raised:
            compat.read_json(b"[" * 100_000 + b"]" * 100_000, "x.json", 10**6)
        assert raised.value.key == "compat.not_json"


class TestTokenIds:
    def test_bpe_map_and_added_tokens(self):
        ids = compat.token_ids(bpe())
        assert ids["def"] == 4 and ids["<|endoftext|>"] == 7 and len(ids) == 8

    def test_unigram_list_position_is_the_id(self):
        unigram = {"model": {"type": "Unigram", "vocab": [["<unk>", 0.0], ["▁the", -1.2], ["s", -2.0]]}}
        assert compat.token_ids(unigram) == {"<unk>": 0, "▁the": 1, "s": 2}

    @pytest.mark.parametrize("tokenizer", [{}, {"model": {"vocab": 5}}, {"model": "BPE"}, {"added_tokens": "x"}])
    def test_not_a_tokenizer(self, tokenizer):
        with pytest.raises(SpecvizError) as raised:
            compat.token_ids(tokenizer)
        assert raised.value.key == "compat.not_tokenizer"


class TestCheckPair:
    def keys(self, check):
        return [f.key for f in check.findings]

    def test_the_same_tokenizer(self):
        check = compat.check_pair(config(), config(), bpe(), bpe())
        assert check.verdict == "same" and check.tokens == {"target": 8, "draft": 8, "shared": 8, "different_ids": 0,
                                                             "only_target": 0, "only_draft": 0}

    def test_one_token_with_another_id_makes_it_unusable(self):
        swapped = {**VOCAB, "def": 5, "(": 4}
        check = compat.check_pair(config(), config(), bpe(), bpe(swapped))
        assert check.verdict == "unusable" and check.tokens["different_ids"] == 2
        (differ,) = [f for f in check.findings if f.key == "compat.ids_differ"]
        assert differ.params["examples"] == "'(', 'def'"

    def test_a_padded_embedding_over_the_same_tokenizer_is_usable(self):
        # Qwen2.5-7B's embedding has 152,064 rows and Qwen2.5-0.5B's 151,936, over one tokenizer.
        check = compat.check_pair(config(vocab_size=152064), config(vocab_size=151936), bpe(), bpe())
        assert check.verdict == "usable" and "compat.vocab_differs" in self.keys(check)

    def test_tokens_only_one_side_has(self):
        more = bpe(added=ADDED + [{"id": 8, "content": "<tool_call>"}])
        check = compat.check_pair(config(), config(), bpe(), more)
        assert check.verdict == "usable" and check.tokens["only_draft"] == 1

    def test_special_tokens_that_differ(self):
        check = compat.check_pair(config(eos_token_id=[7, 2]), config(eos_token_id=7), bpe(), bpe())
        assert check.verdict == "unusable" and "compat.special_differs" in self.keys(check)
        assert compat.check_pair(config(eos_token_id=[7, 2]), config(eos_token_id=[2, 7]), bpe(), bpe()).verdict == "same"

    def test_configs_alone_cannot_say(self):
        check = compat.check_pair(config(), config())
        assert check.verdict == "unknown" and self.keys(check) == ["compat.vocab_same", "compat.no_tokenizers"]
        assert compat.check_pair(config(eos_token_id=1), config()).verdict == "unusable"
        assert "compat.no_vocab_size" in self.keys(compat.check_pair({}, config()))

    @settings(max_examples=40, deadline=None)
    @given(st.dictionaries(st.text(min_size=1, max_size=4), st.integers(0, 50), max_size=30),
           st.dictionaries(st.text(min_size=1, max_size=4), st.integers(0, 50), max_size=30))
    def test_counts_add_up(self, first, second):
        if not first or not second:
            return
        check = compat.check_pair(config(), config(), bpe(first, []), bpe(second, []))
        counts = check.tokens
        assert counts["shared"] + counts["only_target"] == counts["target"] == len(first)
        assert counts["shared"] + counts["only_draft"] == counts["draft"] == len(second)
        assert (check.verdict == "unusable") == (counts["different_ids"] > 0)
