"""A run's extra as a page reads it (specviz/results/extra.py)."""

import json

from hypothesis import given, strategies as st

from specviz.results import extra

SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=50)
OBJECTS = st.recursive(st.dictionaries(st.text(max_size=20), SCALARS | st.lists(SCALARS, max_size=3), max_size=6),
                       lambda inner: st.dictionaries(st.text(max_size=20), inner, max_size=4), max_leaves=30)


class TestScalarFields:
    def test_objects_flattened_lists_left_out(self):
        text = '{"a": 1, "sweep": {"serve": {"max_num_seqs": 64}}, "ttfts": [1, 2], "n": null}'
        assert extra.scalar_fields(text) == {"a": 1, "sweep.serve.max_num_seqs": 64, "n": None}

    def test_no_fields(self):
        assert extra.scalar_fields(None) == extra.scalar_fields("") == extra.scalar_fields("[1]") == {}
        assert extra.scalar_fields("[" * 100_000 + "]" * 100_000) == {}  # deeper than the stack decodes


class TestShownExtra:
    def test_cut_and_bounded_in_order_of_path(self):
        text = json.dumps({"b": "x" * 50, "a": "short", "c": "left out"})
        assert json.loads(extra.shown_extra(text, 30, 10)) == {"a": "short", "b": "x" * 9 + "…"}
        assert len(extra.shown_extra(text, 30, 10)) == 30  # exactly at the bound; "c" would pass it
        assert extra.shown_extra("{}", 30, 10) is extra.shown_extra(text, 3, 10) is None

    @given(OBJECTS, st.integers(2, 400), st.integers(1, 30))
    def test_never_past_the_bound_and_always_valid_json(self, value, max_chars, text_chars):
        shown = extra.shown_extra(json.dumps(value), max_chars, text_chars)
        if shown is not None:
            assert len(shown) <= max_chars
            assert json.loads(shown).keys() <= {k[:text_chars - 1] + "…" if len(k) > text_chars else k
                                                for k in extra.scalar_fields(json.dumps(value))}


class TestTreeShape:
    def test_at_each_path_in_order(self):
        assert extra.tree_shape('{"topk": 10, "num_draft_tokens": 60}') == {"topk": 10, "num_draft_tokens": 60}
        server = '{"server_info": {"speculative_eagle_topk": 4, "speculative_num_draft_tokens": 8}}'
        assert extra.tree_shape(server) == {"topk": 4, "num_draft_tokens": 8} and extra.tree_width(server) == 4
        assert extra.tree_width('{"topk": 1, "num_draft_tokens": 4}') is None  # a chain
        assert extra.tree_shape("{}") == extra.tree_shape(None) == {}

    def test_only_counts(self):
        """The store's note of a value too large to keep had been a top-k: "top-k (not stored: …)"
        (an attack pass); text and flags are no count either."""
        for value in ('"(not stored: nested 60 deep)"', '"4"', "true", "NaN", '{"a": 1}', "[4]"):
            assert extra.tree_shape(f'{{"topk": {value}, "num_draft_tokens": 8}}') == {"num_draft_tokens": 8}, value
