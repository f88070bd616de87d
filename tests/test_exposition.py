"""Tests for specviz.live.exposition: a real vLLM scrape and other engines' exposition text read by
role, refusals of text cut short, malformed or past the limits, and generated text that must never
raise anything but a SpecvizError (through to the figures of specviz.live.states)."""

import math

import pytest
from hypothesis import example, given, settings, strategies as st

from conftest import prom_fixture, refused_with, sample_text, vllm_exposition
from specviz import i18n
from specviz.errors import SpecvizError
from specviz.live import exposition as prom
from specviz.live.states import spec_decode_states


class TestParse:
    def test_real_scrape_reads_totals_and_skips_created(self):
        snapshot = prom.parse(sample_text("vllm_metrics_specdecode_excerpt.prom"))
        drafts = snapshot.series["drafts"]
        assert list(drafts.values()) == [14902.0]
        # The _created gauge (1.789e9) is in no role: it is a time, not a count.
        assert all(v < 1e6 for role in snapshot.series.values() for v in role.values())
        assert len(snapshot.series["accepted_per_pos"]) == 3

    def test_exponent_notation(self):
        snapshot = prom.parse(prom_fixture("vllm_v1_pr41916.prom"))
        assert list(snapshot.series["drafts"].values()) == [6491797.0]

    def test_a_series_of_too_many_labels_is_refused_before_it_is_parsed(self):
        """One series of 160,000 labels (1.8 MB) cost prometheus_client 36 s of CPU: refused on its
        count of labels, and a long line on its length, before any parse."""
        line = "vllm:spec_decode_num_drafts_total{" + ",".join(f'l{i}="v"' for i in range(160_000)) + "} 1"
        error = refused_with(lambda: prom.parse(line + "\n"), "prom.line_too_long")
        assert error.params == {"length": len(line), "limit": 16_384} and len(line) > 1_800_000
        few = ",".join(f'l{i}="v"' for i in range(40))
        error = refused_with(lambda: prom.parse(f"vllm:spec_decode_num_drafts_total{{{few}}} 1\n"), "prom.too_many_labels")
        assert error.params == {"count": 40, "limit": 32}

    def test_too_many_series_or_models_are_refused(self, monkeypatch):
        """20,000 models added about 6 MB to the store per poll: a scrape holds at most
        SPECVIZ_METRICS_MAX_MODELS models and SPECVIZ_METRICS_MAX_SERIES series."""
        text = "".join(vllm_exposition(10, 30, 20, [8, 7, 5], model=f"m{i}") for i in range(101))
        assert refused_with(lambda: prom.parse(text), "prom.too_many_models").params == {"count": 101, "limit": 100}
        monkeypatch.setenv("SPECVIZ_METRICS_MAX_SERIES", "50")
        assert refused_with(lambda: prom.parse(text), "prom.too_many_series").params["count"] == 101 * 6  # _created not read
        monkeypatch.setenv("SPECVIZ_METRICS_MAX_SERIES", "10000")
        # A series of no model is no model (an SRE's pass: 100 models beside process_start_time_seconds
        # had been refused as 101)
        started = "# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds 1.7e9\n"
        assert len(prom.parse(started + "".join(vllm_exposition(10, 30, 20, [8, 7, 5], model=f"m{i}") for i in range(100)))
                   .series["drafts"]) == 100

    def test_a_label_longer_than_what_is_stored_is_refused(self):
        """A model's name is stored with every snapshot and window and a saved run: the line limit
        alone let a name of 16,000 characters in."""
        assert prom.parse(vllm_exposition(10, 30, 20, [8, 7, 5], model="m" * 500)).series["drafts"]
        error = refused_with(lambda: prom.parse(vllm_exposition(10, 30, 20, [8, 7, 5], model="m" * 16_000)), "prom.label_too_long")
        assert error.params == {"label": "'model_name'", "length": 16_000, "limit": 500}
        assert str(error) == ("The source's label 'model_name' has a value of 16,000 characters; a label may have "
                              "500 (SPECVIZ_STORED_TEXT_CHARS).")

    def test_lines_of_other_families_are_not_read(self):
        text = "this is no exposition text {{{\n" + vllm_exposition(10, 30, 20, [8, 7, 5])
        assert list(prom.parse(text).series["drafts"].values()) == [10.0]

    @pytest.mark.parametrize("value", ["twelve", "0x10", "1_000"])
    def test_a_value_that_is_no_number_is_named(self, value):
        """An attack pass: 0x10 and 1_000 had been said in prometheus_client's words ("could not
        convert string to float")."""
        line = f'vllm:spec_decode_num_drafts_total{{engine="0"}} {value}'
        with pytest.raises(SpecvizError) as caught:
            prom.parse(line + "\n")
        assert caught.value.key == "prom.bad_value" and caught.value.params == {"value": value, "line": line}

    @pytest.mark.parametrize("text", [
        'vllm:spec_decode_num_drafts_total{engine="0" 12\n',
        'vllm:spec_decode_num_drafts_total{engine=0} 12\n',
        '# TYPE vllm:spec_decode_num_drafts_total\n',
    ])
    def test_malformed_line_of_a_read_family(self, text):
        with pytest.raises(SpecvizError) as caught:
            prom.parse(text)
        assert caught.value.key == "prom.malformed"
        assert "exposition text" in str(caught.value)

    def test_duplicate_series(self):
        line = 'vllm:spec_decode_num_drafts_total{engine="0",model_name="m"} 1\n'
        with pytest.raises(SpecvizError) as caught:
            prom.parse(line + line)
        assert caught.value.key == "prom.duplicate_series"

    def test_a_scrape_cut_mid_line_is_refused(self):
        """An attack pass: a body cut inside its last value ("... 2000" sent as "... 20") was read, an
        acceptance rate of 0.0067 for 0.667. A line without its line feed is a cut one; a comment or
        a blank last line is not."""
        whole = sample_text("vllm_metrics_specdecode_excerpt.prom")
        cut = 'vllm:spec_decode_num_accepted_tokens_total{engine="1",model_name="m"} 20'
        error = refused_with(lambda: prom.parse(whole + cut), "prom.cut_short")
        assert error.params["line"] == cut
        assert prom.parse(whole + "# EOF").series == prom.parse(whole).series
        # Any line cut: a _created gauge or a HELP line may be all that shows of a body cut after its
        # counters (a second pass: such cuts were read, and a window missing counters recorded).
        for cut in ('vllm:spec_decode_num_drafts_created{engine="0",model_name="m"} 1.78', "# HELP vllm:spec_dec",
                    "some_other_family 1"):
            assert refused_with(lambda: prom.parse(whole + cut), "prom.cut_short").params["line"] == cut
        long = "x" * 300
        assert refused_with(lambda: prom.parse(whole + long), "prom.cut_short").params["line"] == "x" * 120 + "…"

    def test_nan_inf_and_negative_counters_are_left_out_with_a_notice(self):
        text = ('vllm:spec_decode_num_drafts_total{engine="0"} NaN\n'
                'vllm:spec_decode_num_drafts_total{engine="1"} -3\n'
                'vllm:spec_decode_num_drafts_total{engine="2"} +Inf\n'
                # A whole number past a float's range: prometheus_client keeps it an int, and
                # float() of it raised OverflowError, which reached the Live page.
                'vllm:spec_decode_num_drafts_total{engine="4"} 1' + "0" * 400 + '\n'
                'vllm:spec_decode_num_drafts_total{engine="3"} 4\n')
        snapshot = prom.parse(text)
        assert list(snapshot.series["drafts"].values()) == [4.0]
        assert [n.params["count"] for n in snapshot.notices] == [4]
        assert str(snapshot.notices[0]).startswith("4 values of vllm:spec_decode_num_drafts_total")


# Generated exposition text: valid lines of the read families with odd labels and values, and broken
# lines; counters that go down between two snapshots.
_names = st.sampled_from(["vllm:spec_decode_num_drafts_total", "vllm:spec_decode_num_draft_tokens_total",
                          "vllm:spec_decode_num_accepted_tokens_total", "llamacpp:spec_decode_num_drafts_total",
                          "vllm:spec_decode_num_accepted_tokens_per_pos_total", "sglang:spec_accept_length",
                          "vllm:spec_decode_num_drafts_created", "vllm:num_requests_running",
                          "vllm:inter_token_latency_seconds_bucket", "vllm:generation_tokens_total",
                          "trtllm_spec_decode_drafted_tokens_total", "trtllm_spec_decode_accepted_tokens_total",
                          "trtllm_spec_decode_num_draft_tokens_total", "trtllm_spec_decode_acceptance_length",
                          "vllm:request_prompt_tokens_sum", "vllm:request_prompt_tokens_count",
                          "trtllm_request_success_total"])
_label_values = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=8).map(
    lambda s: s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n"))
_values = st.one_of(st.floats(allow_nan=True, allow_infinity=True).map(repr), st.integers(-5, 10**12).map(str),
                    st.sampled_from(["NaN", "+Inf", "-Inf", "1e+06", "2.5E-3"]))


@st.composite
def _line(draw):
    name = draw(_names)
    labels = {"model_name": draw(st.sampled_from(["m", "n", ""])), "engine": draw(st.sampled_from(["0", "1"]))}
    if "per_pos" in name:
        labels["position"] = draw(st.sampled_from(["0", "1", "2", "x"]))
    if name.startswith(("trtllm_spec_decode_drafted", "trtllm_spec_decode_accepted")):
        labels["token_position"] = draw(st.sampled_from(["0", "1", "2", "x"]))
    if "bucket" in name:
        labels["le"] = draw(st.sampled_from(["0.01", "0.1", "+Inf"]))
    if draw(st.booleans()):
        labels[draw(st.sampled_from(["odd_label", "tp_rank", "position"]))] = draw(_label_values)
    body = ",".join(f'{k}="{v}"' for k, v in labels.items())
    line = f"{name}{{{body}}} {draw(_values)}"
    if draw(st.integers(0, 9)) == 0:  # a broken line
        cut = draw(st.integers(0, len(line)))
        line = line[:cut] + draw(st.sampled_from(["{", "}", '"', "=", " ", "\t", ",", "#"])) + line[cut:]
    return line


_texts = st.lists(_line(), max_size=25).map("\n".join)


def _checked(text: str, previous: str | None):
    try:
        states = spec_decode_states(prom.parse(text, 2.0), None if previous is None else prom.parse(previous, 1.0))
    except SpecvizError as error:
        assert error.key in i18n.catalogue("en") and str(error)
        return
    for state in states:
        for name in ("drafts", "draft_tokens", "accepted_tokens", "generation_tokens", "generation_throughput",
                     "acceptance_rate", "acceptance_length", "zero_accept_rate", "running_requests"):
            value = getattr(state, name)
            assert value is None or (value >= -1e-9 or name == "zero_accept_rate"), (name, value)
            assert value is None or not math.isnan(value), name
        if state.alpha_iid is not None:
            assert 0 <= state.alpha_iid <= 1
        for notice in [*state.absent.values(), *state.notices]:
            assert str(notice)


class TestGeneratedText:
    @settings(max_examples=300)
    @given(_texts)
    # Found by hypothesis: 268 draft tokens over 1e-306 drafts overflowed γ to infinity.
    @example('vllm:spec_decode_num_drafts_total{model_name="m",engine="0"} 1.4904653079409893e-306\n'
             'vllm:spec_decode_num_draft_tokens_total{model_name="m",engine="0"} 268.0\n'
             'vllm:spec_decode_num_accepted_tokens_total{model_name="m",engine="0"} 0.0')
    def test_one_snapshot_never_raises_anything_else(self, text):
        _checked(text, None)

    @settings(max_examples=300)
    @given(_texts, _texts)
    def test_two_snapshots_never_give_a_negative_count(self, before, after):
        _checked(after, before)

    @given(st.text(max_size=300))
    def test_arbitrary_text(self, text):
        _checked(text, None)
