"""Tests for specviz.live.states: a real vLLM scrape's figures checked by hand, other engines'
figures, windows and restarts, the finished requests' mean prompt and output, and figures absent
with their reasons."""

import re

import pytest

from conftest import finished_requests, prom_fixture, sample_text, vllm_exposition
from specviz import i18n
from specviz.errors import Notice, SpecvizError
from specviz.live import exposition as prom, processes
from specviz.live import states as live_states
from specviz.live.states import SpecDecodeState, spec_decode_states
from specviz.model import spec

MODEL = "faruk_zahiragic/swiss-ai/Apertus-v1.5-70B-draft-n3-tp4-faruk_zahiragic-20260913T152358Z"


def one(text, previous=None, **kwargs):
    states = spec_decode_states(prom.parse(text, kwargs.pop("time", None)),
                                None if previous is None else prom.parse(*previous), **kwargs)
    assert len(states) == 1
    return states[0]


class TestSpecDecodeStates:
    def test_real_scrape_by_hand(self):
        # The file's numbers: 14902 drafts, 44706 draft tokens, 31680 accepted, per position
        # 12371, 10390, 8919 (which sum to 31680).
        state = one(sample_text("vllm_metrics_specdecode_excerpt.prom"))
        assert (state.engine, state.model_name, state.window) == ("vllm-v1", MODEL, False)
        assert (state.drafts, state.draft_tokens, state.accepted_tokens) == (14902, 44706, 31680)
        assert state.acceptance_rate == pytest.approx(31680 / 44706)            # 0.7086
        assert state.acceptance_length == pytest.approx(1 + 31680 / 14902)      # 3.1259
        assert state.num_speculative_tokens == 3                                # 44706 = 3 × 14902
        assert spec.expected_tokens(state.alpha_iid, 3) == pytest.approx(state.acceptance_length)
        assert state.alpha_iid == pytest.approx(0.8374, abs=1e-4)
        assert state.per_position_acceptance == pytest.approx([12371 / 14902, 10390 / 14902, 8919 / 14902])
        assert state.per_position_conditional == pytest.approx([12371 / 14902, 10390 / 12371, 8919 / 10390])
        assert state.zero_accept_rate == pytest.approx(1 - 12371 / 14902)       # 0.1698
        assert state.summed_labels == () and not state.counter_reset

    def test_real_scrape_says_why_companions_are_absent(self):
        state = one(sample_text("vllm_metrics_specdecode_excerpt.prom"))
        assert state.running_requests is None and state.itl_p50 is None
        assert state.absent["running_requests"].key == "prom.absent.not_exported"
        assert "num_requests_running" in str(state.absent["running_requests"])
        assert state.absent["generation_throughput"].key == "prom.absent.not_a_window"
        # Every figure that is None has a reason, and no figure that is present has one.
        for name in SpecDecodeState.__dataclass_fields__.keys() & live_states._FIGURES:
            assert (getattr(state, name) is None) == (name in state.absent), name

    def test_pr41916_excerpt_lacks_the_accepted_counter(self):
        state = one(prom_fixture("vllm_v1_pr41916.prom"))
        assert state.drafts == state.draft_tokens == 6491797 and state.num_speculative_tokens == 1
        assert state.acceptance_rate is None and state.acceptance_length is None and state.alpha_iid is None
        assert state.absent["acceptance_rate"] == state.absent["accepted_tokens"]
        assert "spec_decode_num_accepted_tokens" in str(state.absent["acceptance_rate"])

    def test_data_parallel_engines_are_summed_and_kept_apart_on_request(self):
        text = sample_text("vllm_metrics_specdecode_excerpt.prom")
        second = text.replace('engine="0"', 'engine="1"').replace("14902.0", "10000.0")
        both = text + second
        state = one(both)
        assert state.drafts == 24902 and state.draft_tokens == 2 * 44706
        assert state.summed_labels == ("engine",)
        assert any(n.key == "prom.notice.summed" and "engine" in str(n) for n in state.notices)
        apart = spec_decode_states(prom.parse(both), split_by=("engine",))
        assert [(s.labels, s.drafts) for s in apart] == [({"engine": "0"}, 14902), ({"engine": "1"}, 10000)]
        assert apart[0].summed_labels == ()

    def test_several_models_on_one_server(self):
        text = vllm_exposition(100, 300, 150, [60, 50, 40], model="a") + vllm_exposition(10, 20, 5, [4, 1], model="b")
        states = spec_decode_states(prom.parse(text))
        assert [(s.model_name, s.acceptance_length, s.num_speculative_tokens) for s in states] == \
            [("a", 2.5, 3.0), ("b", 1.5, 2.0)]

    def test_vllm_v0(self):
        # issue #9539's log: 8547 accepted, 13311 drafted at k = 3, 10616 emitted.
        state = one(prom_fixture("vllm_v0_composed.prom"))
        assert state.engine == "vllm-v0"
        assert state.acceptance_rate == pytest.approx(0.642, abs=5e-4)
        assert state.reported_acceptance_rate == pytest.approx(state.acceptance_rate)
        assert state.system_efficiency == pytest.approx(0.598, abs=5e-4)
        assert state.emitted_tokens == 10616
        for name in ("acceptance_length", "num_speculative_tokens", "alpha_iid"):
            assert getattr(state, name) is None and state.absent[name].key == "prom.absent.v0_no_drafts"
        # Why not 1 + accepted/steps: steps = 13311/3 = 4437 each emit one token beyond the accepted
        # prefix, so the prefix is at most 10616 − 4437 = 6179 < 8547 accepted.
        assert 10616 - 13311 / 3 < 8547

    def test_sglang_without_speculation_is_refused(self):
        with pytest.raises(SpecvizError) as caught:
            spec_decode_states(prom.parse(prom_fixture("sglang_docs.prom")))
        assert caught.value.key == "prom.no_spec_decode"
        assert "speculative decoding enabled" in str(caught.value)

    def test_a_scrape_whose_every_value_was_left_out_says_so(self):
        """It had said that no speculative-decoding metrics were found, and lost the notice of the
        values left out (the attack pass)."""
        text = ("# TYPE vllm:spec_decode_num_accepted_tokens counter\n"
                'vllm:spec_decode_num_accepted_tokens_total{model_name="m"} NaN\n')
        with pytest.raises(SpecvizError) as caught:
            spec_decode_states(prom.parse(text))
        assert caught.value.key == "prom.no_spec_decode_values"
        assert "vllm:spec_decode_num_accepted_tokens" in caught.value.params["metrics"]

    def test_sglang_gauges_and_companions(self):
        state = one(prom_fixture("sglang_docs.prom") + prom_fixture("sglang_spec_composed.prom"))
        assert (state.engine, state.model_name) == ("sglang", "meta-llama/Llama-3.1-8B-Instruct")
        assert (state.acceptance_length, state.acceptance_rate) == (2.71, 0.57)
        assert state.alpha_iid is None and state.absent["alpha_iid"].key == "prom.absent.no_gamma"
        assert state.drafts is None and state.absent["drafts"].key == "prom.absent.not_exported"
        assert any(n.key == "prom.notice.gauge_source" for n in state.notices)
        # The docs' own numbers: 162 running, 2826 queued, token usage 0.28, 7.557572e+06 generated.
        assert (state.running_requests, state.waiting_requests, state.kv_cache_usage) == (162, 2826, 0.28)
        assert state.generation_tokens == 7557572
        # SGLang's time_per_output_token is per request, not the inter-token latency: not read.
        assert state.itl_p50 is None and state.absent["itl_p50"].key == "prom.absent.not_exported"

    def test_sglang_replicas_that_disagree_give_no_figure(self):
        text = prom_fixture("sglang_spec_composed.prom") + prom_fixture("sglang_spec_composed.prom").replace(
            'tp_rank="0"', 'tp_rank="1"').replace("2.71", "2.5").replace("# ", "#x ")
        text = "".join(line + "\n" for line in text.splitlines() if not line.startswith("#x"))
        state = one(text)
        assert state.acceptance_length is None
        assert state.absent["acceptance_length"].key == "prom.absent.gauges_disagree"
        assert state.acceptance_rate == 0.57  # both replicas report 0.57

    def test_llamacpp_before_speculation_counters_is_refused(self):
        with pytest.raises(SpecvizError) as caught:
            spec_decode_states(prom.parse(prom_fixture("llamacpp_ik_llama_pr695.prom")))
        assert caught.value.key == "prom.no_spec_decode"

    def test_llamacpp_counters(self):
        state = one(prom_fixture("llamacpp_spec_composed.prom"))
        assert (state.engine, state.model_name) == ("llama.cpp", "")
        assert state.acceptance_length == pytest.approx(1 + 1032 / 400)         # 3.58
        assert state.num_speculative_tokens == 4
        assert state.per_position_conditional == pytest.approx([352 / 400, 296 / 352, 224 / 296, 160 / 224])
        assert state.zero_accept_rate == pytest.approx(48 / 400)
        assert state.running_requests == 2 and state.generation_tokens == 3469

    def test_counters_without_type_lines(self):
        text = "".join(line + "\n" for line in prom_fixture("llamacpp_spec_composed.prom").splitlines()
                       if not line.startswith("#"))
        assert one(text).acceptance_length == pytest.approx(1 + 1032 / 400)

    def test_trtllm_scrape_by_hand(self):
        """trtllm_spec_composed_1.prom: per position 3000 drafted at each of 3 positions and
        2400, 1800, 1200 accepted; the iteration counters (10800, 6480) and the gauge (2.75) are not
        read where the per-position counters are there."""
        state = one(prom_fixture("trtllm_spec_composed_1.prom"))
        assert (state.engine, state.model_name, state.window) == ("trt-llm", "undefined", False)
        # drafts = position 0's 3000; draft tokens 3 × 3000 = 9000; accepted 2400 + 1800 + 1200 = 5400
        assert (state.drafts, state.draft_tokens, state.accepted_tokens) == (3000, 9000, 5400)
        assert state.acceptance_rate == pytest.approx(0.6)                      # 5400 / 9000
        assert state.acceptance_length == pytest.approx(2.8)                    # 1 + 5400 / 3000
        assert state.num_speculative_tokens == 3                                # 9000 / 3000
        # α solves 1 + α + α² + α³ = 2.8: 0.7655 (0.7655² = 0.5860, ³ = 0.4486; sum 2.8001)
        assert state.alpha_iid == pytest.approx(0.7655, abs=1e-4)
        assert spec.expected_tokens(state.alpha_iid, 3) == pytest.approx(2.8)
        assert state.per_position_acceptance == pytest.approx([0.8, 0.6, 0.4])  # 2400, 1800, 1200 / 3000
        assert state.per_position_conditional == pytest.approx([0.8, 0.75, 1200 / 1800])
        assert state.zero_accept_rate == pytest.approx(0.2)
        assert state.reported_acceptance_length == 2.75  # the gauge, beside the counted length
        assert (state.running_requests, state.waiting_requests, state.kv_cache_usage) == (24, 3, 0.41)
        assert state.generation_tokens == 8440
        # pid is on the gauges only (prometheus_client's multiprocess mode): one process, nothing summed.
        assert state.summed_labels == () and not any(n.key == "prom.notice.summed" for n in state.notices)
        assert state.draft_overhead == 0.18  # the gauge: draft latency / iteration latency, one iteration's
        assert [n.key for n in state.notices] == ["prom.notice.trtllm_per_request", "prom.notice.trtllm_draft_overhead"]

    def test_trtllm_window_by_hand(self):
        """30 s later: drafted 3500 at each position, accepted 2800, 2050, 1330, generated 9730."""
        state = one(prom_fixture("trtllm_spec_composed_2.prom"), previous=(prom_fixture("trtllm_spec_composed_1.prom"), 100.0),
                    time=130.0)
        assert state.window and state.seconds == 30
        # drafts 3500 − 3000 = 500; draft tokens 3 × 500 = 1500; accepted 400 + 250 + 130 = 780
        assert (state.drafts, state.draft_tokens, state.accepted_tokens) == (500, 1500, 780)
        assert state.acceptance_rate == pytest.approx(0.52)                     # 780 / 1500
        assert state.acceptance_length == pytest.approx(2.56)                   # 1 + 780 / 500
        # α solves 1 + α + α² + α³ = 2.56: 0.7069 (0.7069² = 0.4998, ³ = 0.3533; sum 2.5600)
        assert state.alpha_iid == pytest.approx(0.7069, abs=1e-4)
        assert state.per_position_acceptance == pytest.approx([0.8, 0.5, 0.26])  # 400, 250, 130 / 500
        assert state.per_position_conditional == pytest.approx([0.8, 0.625, 0.52])  # 250 / 400, 130 / 250
        assert state.zero_accept_rate == pytest.approx(0.2)
        assert state.generation_tokens == 1290 and state.generation_throughput == pytest.approx(43.0)  # 1290 / 30
        assert (state.running_requests, state.kv_cache_usage, state.reported_acceptance_length) == (30, 0.47, 2.5)
        assert state.draft_overhead == 0.2  # a gauge has no window: the later scrape's
        assert not state.counter_reset

    @pytest.mark.parametrize("value, reason", [("0.0", "prom.absent.draft_overhead_untimed"),
                                               ("1.5", "prom.absent.draft_overhead_over_one")])
    def test_a_trtllm_draft_overhead_of_zero_or_above_one_is_not_shown(self, value, reason):
        """0 is what TensorRT-LLM reports where nothing timed a draft (a one-model MTP or EAGLE-3 head,
        an n-gram drafter, an iteration without drafts); above 1 a part would outlast the whole."""
        text = prom_fixture("trtllm_spec_composed_1.prom").replace(
            'trtllm_spec_decode_draft_overhead{engine_type="undefined",model_name="undefined",pid="2417"} 0.18',
            f'trtllm_spec_decode_draft_overhead{{engine_type="undefined",model_name="undefined",pid="2417"}} {value}')
        state = one(text)
        assert state.draft_overhead is None and state.absent["draft_overhead"].key == reason
        assert "prom.notice.trtllm_draft_overhead" not in [n.key for n in state.notices]

    def test_trtllm_processes_that_disagree_on_the_draft_overhead_give_none(self):
        text = prom_fixture("trtllm_spec_composed_1.prom") + (
            'trtllm_spec_decode_draft_overhead{engine_type="undefined",model_name="undefined",pid="2418"} 0.3\n')
        state = one(text)
        assert state.draft_overhead is None and state.absent["draft_overhead"].key == "prom.absent.gauges_disagree"

    def test_only_trtllm_has_a_draft_overhead(self):
        state = one(vllm_exposition(1000, 3000, 1800, [800, 600, 400]))
        assert state.draft_overhead is None
        assert state.absent["draft_overhead"] == Notice("prom.absent.draft_overhead_engine", engine="vllm-v1")

    @staticmethod
    def without_per_position(name: str) -> str:
        """A TensorRT-LLM of PR #12545 and before PR #12636: the iteration counters and gauges only."""
        return "".join(line for line in prom_fixture(name).splitlines(keepends=True)
                       if "spec_decode_drafted_tokens" not in line and "spec_decode_accepted_tokens" not in line)

    def test_trtllm_iteration_counters_and_gauge(self):
        state = one(self.without_per_position("trtllm_spec_composed_1.prom"))
        assert state.engine == "trt-llm" and state.drafts is None
        assert (state.draft_tokens, state.accepted_tokens) == (10800, 6480)
        assert state.acceptance_rate == pytest.approx(0.6)                      # 6480 / 10800, sampled iterations
        assert state.acceptance_length == 2.75                                  # the gauge, one iteration's
        assert state.absent["drafts"].key == "prom.absent.trtllm_no_drafts"
        assert state.absent["num_speculative_tokens"] == state.absent["drafts"]
        assert state.absent["alpha_iid"].key == "prom.absent.no_gamma"
        assert state.per_position_acceptance is None
        assert "spec_decode_accepted_tokens{token_position}" in str(state.absent["per_position_acceptance"])
        assert [n.key for n in state.notices] == ["prom.notice.trtllm_sampled", "prom.notice.trtllm_gauge",
                                                  "prom.notice.trtllm_draft_overhead"]

    def test_trtllm_iteration_counters_over_a_window(self):
        state = one(self.without_per_position("trtllm_spec_composed_2.prom"),
                    previous=(self.without_per_position("trtllm_spec_composed_1.prom"), 100.0), time=130.0)
        # draft tokens 12960 − 10800 = 2160, accepted 7668 − 6480 = 1188: 1188 / 2160 = 0.55
        assert (state.draft_tokens, state.accepted_tokens) == (2160, 1188)
        assert state.acceptance_rate == pytest.approx(0.55)
        # A gauge has no window: the length is the latest scrape's gauge, whatever the one before said.
        assert state.acceptance_length == 2.5 and state.alpha_iid is None
        assert state.generation_throughput == pytest.approx(43.0)

    def test_trtllm_says_why_figures_are_absent(self):
        state = one(prom_fixture("trtllm_spec_composed_1.prom"))
        # Its time_per_output_token histogram is per request, not the inter-token latency: not read.
        assert state.itl_p50 is None and state.absent["itl_p50"].key == "prom.absent.not_exported"
        assert state.absent["reported_acceptance_rate"].key == "prom.absent.not_exported"
        for name in SpecDecodeState.__dataclass_fields__.keys() & live_states._FIGURES:
            assert (getattr(state, name) is None) == (name in state.absent), name
        for notice in [*state.absent.values(), *state.notices,
                       *one(self.without_per_position("trtllm_spec_composed_1.prom")).absent.values()]:
            assert str(notice) and i18n.t(notice.key, "vi", **notice.params)

    def test_window_between_two_snapshots(self):
        before = vllm_exposition(1000, 3000, 1800, [800, 600, 400], generation=5000)
        after = vllm_exposition(1500, 4500, 2500, [1200, 800, 500], generation=7000)
        state = one(after, previous=(before, 100.0), time=110.0)
        assert state.window and state.seconds == 10
        assert (state.drafts, state.draft_tokens, state.accepted_tokens) == (500, 1500, 700)
        assert state.acceptance_length == pytest.approx(1 + 700 / 500)
        assert state.per_position_acceptance == pytest.approx([400 / 500, 200 / 500, 100 / 500])
        assert state.generation_tokens == 2000 and state.generation_throughput == pytest.approx(200.0)
        assert not state.counter_reset

    def test_a_window_read_between_two_position_updates_says_so(self):
        """Position 2 counted 5 more steps in the window than position 1: the first snapshot was
        read after position 2's counter moved and before position 1's did."""
        before = vllm_exposition(1000, 3000, 1800, [800, 600, 400], generation=5000)
        after = vllm_exposition(1010, 3030, 1826, [808, 611, 407], generation=5040)
        state = one(after, previous=(before, 100.0), time=101.0)
        assert state.per_position_conditional[1] == pytest.approx(11 / 8)
        notice = next(n for n in state.notices if n.key == "prom.notice.conditional_over_one")
        assert notice.params == {"positions": "2"}
        assert not any(n.key == "prom.notice.conditional_over_one" for n in one(before).notices)

    def test_positions_accepted_by_more_drafts_than_there_were_are_left_out(self):
        """An attack pass: 2,000, 3,000 and 4,000 acceptances at positions 0-2 against 1,000 drafts gave
        shares of 2, 3 and 4 and a zero-accept share of -100 %, shown and stored; 5 positions against
        3 draft tokens a draft kept a share of 1.1."""
        state = one(vllm_exposition(1000, 3000, 1800, [2000, 3000, 4000]))
        assert state.per_position_acceptance is None and state.zero_accept_rate is None
        assert state.absent["zero_accept_rate"] == Notice("prom.absent.position_over_drafts", position=0,
                                                          accepted=2000.0, drafts=1000.0)
        # 5 positions against 3 draft tokens a draft: drafts of several lengths where each position's count
        # is at most the one before it's, said as such (no α, no share given the positions before);
        # else no draft's counters
        five = one(vllm_exposition(1000, 3000, 1800, [800, 500, 300, 150, 50]))
        assert five.per_position_acceptance == pytest.approx([0.8, 0.5, 0.3, 0.15, 0.05])
        assert five.per_position_conditional is None and five.absent["alpha_iid"].key == "prom.absent.mixed_lengths"
        rising = one(vllm_exposition(1000, 3000, 1800, [500, 400, 300, 350, 250]))
        assert rising.per_position_acceptance is None and rising.absent["per_position_acceptance"].key == \
            "prom.absent.positions_over_gamma"
        # A window read between two updates, position 0 one step ahead of the drafts: its shares stay,
        # but no share of drafts is below 0.
        raced = one(vllm_exposition(1010, 3030, 1826, [1011, 608, 404]), previous=(vllm_exposition(1000, 3000, 1800, [1000, 600, 400]), None))
        assert raced.per_position_acceptance == pytest.approx([1.1, 0.8, 0.4])
        assert raced.zero_accept_rate is None and raced.absent["zero_accept_rate"].key == "prom.absent.zero_accept_race"

    def test_window_across_a_restart_counts_from_zero(self):
        before = vllm_exposition(1000, 3000, 1800, [800, 600, 400], generation=5000)
        after = vllm_exposition(40, 120, 60, [30, 20, 10], generation=300)
        state = one(after, previous=(before, 100.0), time=110.0)
        assert state.counter_reset
        assert (state.drafts, state.accepted_tokens, state.generation_tokens) == (40, 60, 300)
        # Tokens since an unknown moment of the window: no rate per second (an exporter's replay, whose
        # counters restart at its recording's, had shown 3,117 tokens/s where it makes at most 845).
        assert state.generation_throughput is None and state.absent["generation_throughput"].key == "prom.absent.restarted"
        assert any(n.key == "prom.notice.counter_reset" for n in state.notices)

    def test_a_restart_whose_counters_climbed_past_the_old_values_counts_from_zero(self):
        """vLLM 0.25.1's real scrape (drafts 48, draft tokens 144, accepted 144, 48 a position,
        generation 192, process_start_time_seconds 1787495985.34), then the same server restarted at
        1787496600 that served more before the next scrape: drafts 60, draft tokens 180, accepted
        150 (50 a position), generation 250, each above its old value. The window is the new
        counts (acceptance length 1 + 150/60 = 3.5, rate 150/180), not the new less the old
        (1 + 6/12 = 1.5)."""
        before = sample_text("2026/vllm_0.25.1/metrics_vllm_0_25_1_speculative.txt")
        after = before.replace("process_start_time_seconds 1.78749598534e+09", "process_start_time_seconds 1.7874966e+09")
        for old, new in (("spec_decode_num_drafts_total{engine=\"0\",model_name=\"facebook/opt-125m\"} 48.0", "60.0"),
                         ("spec_decode_num_draft_tokens_total{engine=\"0\",model_name=\"facebook/opt-125m\"} 144.0", "180.0"),
                         ("spec_decode_num_accepted_tokens_total{engine=\"0\",model_name=\"facebook/opt-125m\"} 144.0", "150.0"),
                         ("generation_tokens_total{engine=\"0\",model_name=\"facebook/opt-125m\"} 192.0", "250.0")):
            assert old in after
            after = after.replace(old, old.rsplit(" ", 1)[0] + " " + new)
        after = re.sub(r'(per_pos_total\{[^}]*\}) 48\.0', r"\1 50.0", after)
        state = one(after, previous=(before, 100.0), time=110.0)
        assert (state.drafts, state.draft_tokens, state.accepted_tokens, state.generation_tokens) == (60, 180, 150, 250)
        assert state.acceptance_length == 3.5 and state.acceptance_rate == pytest.approx(150 / 180)
        assert state.per_position_acceptance == pytest.approx([50 / 60] * 3)
        assert state.counter_reset and any(n.key == "prom.notice.counter_reset" for n in state.notices)
        # The same counters without the start time's change: the window of an unbroken server.
        same = one(after.replace("1.7874966e+09", "1.78749598534e+09"), previous=(before, 100.0), time=110.0)
        assert (same.drafts, same.accepted_tokens, same.acceptance_length) == (12, 6, 1.5) and not same.counter_reset

    def test_a_second_process_behind_one_address_gives_no_window(self):
        """An SRE's pass: a load balancer over two replicas (or a redirect to another server) was read
        as a restart, and the second replica's totals since it started shown as a 2-s window. vLLM
        0.25.1's real scrape, then the same series from a process that started 15 minutes before the
        first scrape: no window exists, and the message says why and what to point at. A restart
        (a start after the first scrape, or within the clocks' skew of it) still counts from zero."""
        first = sample_text("2026/vllm_0.25.1/metrics_vllm_0_25_1_speculative.txt")
        scraped = 1787496000.0  # 14:40:00 UTC; the real process started at 1787495985.34
        assert "process_start_time_seconds 1.78749598534e+09" in first
        other = first.replace("process_start_time_seconds 1.78749598534e+09", "process_start_time_seconds 1.7874951e+09")
        with pytest.raises(SpecvizError) as info:
            one(other, previous=(first, scraped), time=scraped + 2)
        assert info.value.key == "prom.other_process"
        said = i18n.message(info.value, "en").replace("\\", "")  # shown as Markdown: its colons escaped
        assert "from 14:25:00 UTC, before the previous scrape at 14:40:00 UTC" in said and "one replica" in said
        assert "14:25:00 UTC" in i18n.message(info.value, "vi").replace("\\", "")
        for started in (scraped + 1, scraped - processes.CLOCK_SKEW_S + 1):
            restarted = first.replace("process_start_time_seconds 1.78749598534e+09",
                                      f"process_start_time_seconds {started!r}")
            assert one(restarted, previous=(first, scraped), time=scraped + 2).counter_reset
        # Without the scrapes' times (two files) the start times cannot be set against them: a restart.
        assert one(other, previous=(first, None)).counter_reset

    def test_a_scrape_of_another_model_since_gives_no_window(self):
        """A CLI pass: `metrics A --since B`, B a scrape of another server (opt-125m's, A of Apertus-70B)
        with no start time to compare, gave A's totals since it started as a window, without a word.
        With a restart between them, or no speculative series before (llama.cpp's come with its first
        speculative request), the new model's counters count from zero as before."""
        first = sample_text("2026/vllm_0.25.1/metrics_vllm_0_25_1_speculative.txt")
        other = first.replace("facebook/opt-125m", "swiss-ai/Apertus-70B")
        with pytest.raises(SpecvizError) as info:
            one(other, previous=(first, 100.0), time=110.0)
        assert info.value.key == "prom.other_models"
        said = i18n.message(info.value, "en").replace("\\", "")
        assert "of swiss-ai/Apertus-70B only, and the previous one of facebook/opt-125m only" in said
        assert "swiss-ai/Apertus-70B" in i18n.message(info.value, "vi").replace("\\", "")
        restarted = other.replace("process_start_time_seconds 1.78749598534e+09", "process_start_time_seconds 1.7874966e+09")
        assert one(restarted, previous=(first, 1787495990.0), time=1787496010.0).counter_reset
        quiet = "".join(line for line in first.splitlines(keepends=True) if "spec_decode" not in line)
        assert one(other, previous=(quiet, 100.0), time=110.0).drafts == 48

    def test_a_process_s_restart_counts_only_the_series_that_carry_its_labels(self):
        """Two servers in one scrape, told apart by instance, each with its start time: only the
        restarted one's counters count from zero (a: 1500 − 0; b: 1500 − 1000)."""
        def scrape(counts: dict[str, int], started: dict[str, float]) -> str:
            lines = ["# TYPE process_start_time_seconds gauge"]
            lines += [f'process_start_time_seconds{{instance="{i}"}} {t}' for i, t in started.items()]
            for i, n in counts.items():
                lines += [f'vllm:spec_decode_num_{name}_total{{instance="{i}",model_name="m"}} {n * k}'
                          for name, k in (("drafts", 1), ("draft_tokens", 3), ("accepted_tokens", 2))]
            return "\n".join(lines) + "\n"
        before = scrape({"a": 1000, "b": 1000}, {"a": 1.7e9, "b": 1.7e9})
        after = scrape({"a": 1500, "b": 1500}, {"a": 1.7e9 + 600, "b": 1.7e9})
        [a, b] = spec_decode_states(prom.parse(after), prom.parse(before), split_by=("instance",))
        assert (a.labels, a.drafts, a.counter_reset) == ({"instance": "a"}, 1500, True)
        assert (b.labels, b.drafts, b.counter_reset) == ({"instance": "b"}, 500, False)
        summed = one(after, previous=(before, None))  # one model, the two summed: a restart in it
        assert summed.drafts == 2000 and summed.counter_reset
        # A start time that one scrape lacks (another process's pid) is no restart.
        moved = after.replace('process_start_time_seconds{instance="a"}', 'process_start_time_seconds{instance="c"}')
        assert one(moved, previous=(before, None)).drafts == 1000

    def test_a_series_born_inside_the_window_counts_from_zero(self):
        before = vllm_exposition(0, 0, 0, [])
        after = vllm_exposition(10, 30, 12, [6, 4, 2])
        state = one(after, previous=(before, None))
        assert state.per_position_acceptance == pytest.approx([0.6, 0.4, 0.2]) and not state.counter_reset

    def test_empty_window_says_why(self):
        text = vllm_exposition(10, 30, 12, [6, 4, 2])
        state = one(text, previous=(text, None))
        assert state.drafts == 0 and state.acceptance_length is None
        assert state.absent["acceptance_length"].key == "prom.absent.zero"
        assert state.absent["generation_throughput"].key == "prom.absent.no_time"

    def test_more_accepted_than_drafted_is_no_rate(self):
        """Counters that say 120 accepted of 30 drafted are no run's: the rate had come out 4.0 (a
        hostile server's 2,237), where an import refuses a rate above 1."""
        state = one(vllm_exposition(10, 30, 120, [6, 4, 2]))
        assert state.acceptance_rate is None and state.acceptance_length is None and state.alpha_iid is None
        assert state.absent["acceptance_rate"] == Notice("prom.absent.more_accepted", accepted=120.0, drafted=30.0)

    def test_more_draft_tokens_a_draft_than_any_engine_drafts_is_no_run(self):
        """An attack pass: 1e300 draft tokens and as many accepted over one draft read "acceptance length
        1000000000000000052504760…", 300 digits, on the Live page."""
        state = one(vllm_exposition(1, 1e300, 1e300, [1, 1, 1]))
        assert state.acceptance_length is None and state.acceptance_rate is None and state.num_speculative_tokens is None
        said = state.absent["acceptance_length"]
        assert said.key == "prom.absent.per_draft" and said.params["most"] == live_states.MOST_TOKENS_PER_DRAFT
        assert "1e+300 draft tokens over 1 draft in this period" in i18n.message(said, "en")
        assert one(vllm_exposition(10, 30, 12, [6, 4, 2])).acceptance_length == pytest.approx(2.2)

    def test_counters_of_which_some_went_back_are_no_window(self):
        """An attack pass: drafts, draft tokens and accepted at 1,000, 3,000, 2,000 and then 500, 3,000,
        2,500 (the drafts counter reset, the others not) made a window of 500 drafts, no draft token and
        500 accepted, stored with an acceptance length of 2.00, γ 0 and the reason "Draft tokens per
        draft is 0, not a whole number"."""
        state = one(vllm_exposition(500, 3000, 2500, [6, 4, 2]), previous=(vllm_exposition(1000, 3000, 2000, [6, 4, 2]), None))
        assert (state.drafts, state.draft_tokens, state.accepted_tokens) == (500, 0, 500)
        assert state.acceptance_length is None and state.acceptance_rate is None and state.num_speculative_tokens is None
        assert state.absent["acceptance_length"] == Notice("prom.absent.more_accepted", accepted=500.0, drafted=0.0)
        fewer = one(vllm_exposition(500, 100, 50, [6, 4, 2]))  # 100 draft tokens over 500 drafts
        said = fewer.absent["num_speculative_tokens"]
        assert said.key == "prom.absent.per_draft_few" and fewer.acceptance_length is None
        assert "100 draft tokens over 500 drafts in this period, fewer than one a draft" in i18n.message(said, "en")

    def test_a_counter_left_out_is_named_as_left_out_not_as_unexported(self):
        """A drafts counter of NaN made `specviz metrics` say the scrape "holds no" such counter (the
        attack pass): it holds one, broken. Another model's NaN leaves this one's reason alone."""
        text = vllm_exposition("NaN", 30, 12, [6, 4, 2]) + vllm_exposition("NaN", 30, 12, [6, 4, 2], model="other")
        text += 'vllm:spec_decode_num_drafts_total{engine="0",model_name="third"} 5\n'
        [other, mine, third] = spec_decode_states(prom.parse(text))
        for state in (other, mine):
            assert state.absent["acceptance_length"] == Notice(
                "prom.absent.not_finite", metric="vllm:spec_decode_num_drafts")
        assert third.absent["acceptance_rate"].key == "prom.absent.not_exported"
        assert str(mine.absent["acceptance_length"]).startswith("vllm:spec_decode_num_drafts is in this scrape")
        # Over a window, a value broken in the later scrape is named the same way.
        window = one(vllm_exposition("NaN", 30, 12, [6, 4, 2]), previous=(vllm_exposition(5, 15, 6, [3, 2, 1]), None))
        assert window.absent["acceptance_length"].key == "prom.absent.not_finite"

    def test_variable_draft_length_has_no_alpha(self):
        state = one(vllm_exposition(10, 25, 12, [6, 4, 2]))
        assert state.num_speculative_tokens == 2.5 and state.alpha_iid is None
        assert state.absent["alpha_iid"].key == "prom.absent.gamma_not_whole"

    def test_a_draft_length_just_off_a_whole_number_is_not_printed_as_one(self):
        """An SRE's pass: 3,000,000 draft tokens over 1,000,025 drafts (γ 2.999925) read "Draft tokens
        per draft is 3, not a whole number" at three significant digits."""
        state = one(vllm_exposition(1_000_025, 3_000_000, 12, [6, 4, 2]))
        assert str(state.absent["alpha_iid"]).startswith("Draft tokens per draft is 2.99993, not a whole number")

    def test_positions_with_a_gap(self):
        state = one(vllm_exposition(10, 30, 12, [6, 4, 2]).replace('position="1"', 'position="7"'))
        assert state.per_position_acceptance is None
        assert "0, 2, 7" in str(state.absent["per_position_acceptance"])

    def test_drafts_of_several_lengths_give_no_share_given_the_positions_before(self):
        """An SRE's pass: two servers of one model drafting 4 tokens (350 drafts) and one drafting 2
        (100), summed: position 3 showed 90 / 140 = 0.643 given the positions before it, where the
        drafts that reached it accepted 90 / 120 = 0.750 (20 of the 140 are the 2-token server's)."""
        state = one(vllm_exposition(450, 350 * 4 + 100 * 2, 380 + 200 + 90 + 40, [380, 200, 90, 40]))
        assert state.num_speculative_tokens == pytest.approx(1600 / 450)
        assert state.per_position_acceptance == pytest.approx([380 / 450, 200 / 450, 90 / 450, 40 / 450])
        assert state.per_position_conditional is None
        assert state.absent["per_position_conditional"].key == "prom.absent.mixed_lengths"
        assert one(vllm_exposition(10, 30, 12, [6, 4, 2])).per_position_conditional == pytest.approx([0.6, 4 / 6, 0.5])
        # A re-check: 4-token and 2-token drafts at equal rates read γ = 3, whole; the fourth position
        # says so, and α at γ 3 (0.678, a figure of no draft) is not given
        even = one(vllm_exposition(200, 600, 300, [150, 90, 40, 20]))
        assert even.num_speculative_tokens == 3 and even.per_position_conditional is None
        assert even.alpha_iid is None and even.absent["alpha_iid"].key == "prom.absent.mixed_lengths"
        # An attack pass: a position past γ that no draft accepted says nothing of the lengths (α stands),
        # and more tokens a draft than positions counted is no draft's counters
        state = one(vllm_exposition(200, 600, 280, [150, 90, 40, 0]))
        assert state.per_position_conditional is not None
        assert state.alpha_iid == pytest.approx(float(spec.alpha_from_acceptance_length(1 + 280 / 200, 3)))
        under = one(vllm_exposition(200, 680, 280, [150, 90, 40]))
        assert under.per_position_acceptance is None
        assert under.absent["per_position_acceptance"].key == "prom.absent.positions_under_gamma"

    def test_inter_token_latency_and_gauges(self):
        labels = 'engine="0",model_name="m"'
        extra = "\n".join([
            "# TYPE vllm:num_requests_running gauge", f"vllm:num_requests_running{{{labels}}} 12",
            "# TYPE vllm:num_requests_waiting gauge", f"vllm:num_requests_waiting{{{labels}}} 3",
            "# TYPE vllm:kv_cache_usage_perc gauge", f"vllm:kv_cache_usage_perc{{{labels}}} 0.25",
            "# TYPE vllm:inter_token_latency_seconds histogram",
            *(f'vllm:inter_token_latency_seconds_bucket{{{labels},le="{le}"}} {n}'
              for le, n in (("0.01", 10), ("0.02", 60), ("0.05", 95), ("+Inf", 100))),
            f"vllm:inter_token_latency_seconds_sum{{{labels}}} 2.1",
            f"vllm:inter_token_latency_seconds_count{{{labels}}} 100", ""])
        state = one(vllm_exposition(10, 30, 12, [6, 4, 2], extra=extra))
        assert (state.running_requests, state.waiting_requests, state.kv_cache_usage) == (12, 3, 0.25)
        # p50: rank 50 in (0.01, 0.02], 40 of its 50 → 0.018; p99: rank 99 in (0.05, +Inf] → 0.05.
        assert state.itl_p50 == pytest.approx(0.018) and state.itl_p99 == 0.05

    def test_a_figure_past_what_a_server_makes_is_left_out_with_why(self):
        """An attack pass: 1e308 running requests read as a 309-digit tile, and finished requests of 1e300
        prompt tokens each as "Mean context inf"."""
        labels = 'engine="0",model_name="m"'
        extra = "\n".join([f"vllm:num_requests_running{{{labels}}} 1e308", f"vllm:num_requests_waiting{{{labels}}} 3",
                           finished_requests(1, 10**300, 100)])
        state = one(vllm_exposition(10, 30, 12, [6, 4, 2], extra=extra))
        assert (state.running_requests, state.waiting_requests, state.mean_context) == (None, 3, None)
        assert state.absent["running_requests"].key == state.absent["mean_context"].key == "prom.absent.implausible"
        assert str(state.absent["running_requests"]).startswith("This scrape gives 1e+308, more than any server makes")

    def test_an_engine_s_gauge_outside_what_it_can_hold_is_left_out_with_why(self):
        """An attack pass: SGLang's spec_accept_rate 1.5 and spec_accept_length 0.2 were shown as such."""
        state = one('sglang:spec_accept_rate{model_name="m"} 1.5\nsglang:spec_accept_length{model_name="m"} 0.2\n')
        assert (state.acceptance_rate, state.acceptance_length) == (None, None)
        assert state.absent["acceptance_rate"].key == state.absent["acceptance_length"].key == "prom.absent.gauge_out_of_range"
        assert str(state.absent["acceptance_rate"]).startswith("sglang:spec_accept_rate reads 1.5 in this scrape")
        fine = one('sglang:spec_accept_rate{model_name="m"} 0.5\nsglang:spec_accept_length{model_name="m"} 2.5\n')
        assert (fine.acceptance_rate, fine.acceptance_length) == (0.5, 2.5)

    def test_every_reason_renders(self):
        states = [one(prom_fixture(name)) for name in ("vllm_v0_composed.prom", "llamacpp_spec_composed.prom")]
        for state in states:
            for notice in [*state.absent.values(), *state.notices]:
                assert str(notice) and i18n.t(notice.key, **notice.params)


class TestFinishedRequests:
    """The mean prompt P and output O of the requests that finished, and the mean context P + O/2."""

    def test_the_real_scrape_s_three_requests_of_20_in_and_64_out(self):
        """vllm_0.25.1's scrape: 3 requests, 60 prompt and 192 generation tokens (its histograms'
        _sum), so P = 60 / 3 = 20, O = 192 / 3 = 64 and the context 20 + 64/2 = 52."""
        state = one(sample_text("2026/vllm_0.25.1/metrics_vllm_0_25_1_speculative.txt"))
        assert (state.mean_prompt_tokens, state.mean_output_tokens, state.mean_context) == (20, 64, 52)
        assert state.summed_labels == ()

    def test_a_window_in_which_three_requests_finished(self):
        """Before: 2 requests, 100 and 300 tokens. After: 5, 160 and 492. The window's 3 requests
        took 60 and 192 tokens: P 20, O 64, context 52 (the histograms' buckets are not read)."""
        before = vllm_exposition(100, 300, 150, [60, 50, 40]) + finished_requests(2, 100, 300)
        after = vllm_exposition(200, 600, 300, [120, 100, 80]) + finished_requests(5, 160, 492)
        state = one(after, previous=(before, 100.0), time=110.0)
        assert (state.mean_prompt_tokens, state.mean_output_tokens, state.mean_context) == (20, 64, 52)
        assert not {"mean_prompt_tokens", "mean_output_tokens", "mean_context"} & state.absent.keys()

    def test_a_window_in_which_no_request_finished_says_so(self):
        text = vllm_exposition(100, 300, 150, [60, 50, 40]) + finished_requests(2, 100, 300)
        later = vllm_exposition(200, 600, 300, [120, 100, 80]) + finished_requests(2, 100, 300)
        state = one(later, previous=(text, 100.0), time=110.0)
        assert state.mean_prompt_tokens is state.mean_output_tokens is state.mean_context is None
        assert {state.absent[name].key for name in ("mean_prompt_tokens", "mean_output_tokens", "mean_context")} \
            == {"prom.absent.no_finished_requests"}

    def test_a_restart_counts_the_finished_requests_from_zero(self):
        """5 requests before, 1 of 30 in and 10 out after a restart: P 30, O 10, context 35."""
        before = vllm_exposition(200, 600, 300, [120, 100, 80]) + finished_requests(5, 160, 492)
        after = vllm_exposition(10, 30, 15, [6, 5, 4]) + finished_requests(1, 30, 10)
        state = one(after, previous=(before, 100.0), time=110.0)
        assert state.counter_reset and (state.mean_prompt_tokens, state.mean_output_tokens, state.mean_context) \
            == (30, 10, 35)

    def test_sglang_s_counters_over_its_finished_requests(self):
        """The docs' scrape has prompt and generation counters but no num_requests_total (an SGLang
        before it): absent, named. With 11,228 requests (its e2e histogram's count), P = 8,128,902 /
        11,228 and O = 7,557,572 / 11,228."""
        text = prom_fixture("sglang_docs.prom") + prom_fixture("sglang_spec_composed.prom")
        state = one(text)
        assert state.mean_context is None and state.absent["mean_context"].key == "prom.absent.not_exported"
        assert "num_requests_total" in str(state.absent["mean_context"])
        counted = one(text + '# TYPE sglang:num_requests_total counter\n'
                             'sglang:num_requests_total{model_name="meta-llama/Llama-3.1-8B-Instruct"} 11228.0\n')
        prompt, output = 8.128902e6 / 11228, 7.557572e6 / 11228
        assert counted.mean_prompt_tokens == pytest.approx(prompt) and counted.mean_output_tokens == pytest.approx(output)
        assert counted.mean_context == pytest.approx(prompt + output / 2)  # 723.98 + 336.55

    def test_trtllm_s_counters_over_its_successful_requests(self):
        """trtllm_spec_composed_1.prom has no prompt counter: absent. With 40 requests ending by
        stop and 10 by length, 6,000 prompt tokens and its 8,440 generated: P 120, O 168.8, context
        204.4; the finished_reason label is what a series counts, not a replica."""
        text = prom_fixture("trtllm_spec_composed_1.prom")
        assert one(text).absent["mean_prompt_tokens"].key == "prom.absent.not_exported"
        labels = 'engine_type="undefined",model_name="undefined"'
        counted = one(text + "# TYPE trtllm_prompt_tokens_total counter\n"
                      f"trtllm_prompt_tokens_total{{{labels}}} 6000.0\n# TYPE trtllm_request_success_total counter\n"
                      f'trtllm_request_success_total{{{labels},finished_reason="stop"}} 40.0\n'
                      f'trtllm_request_success_total{{{labels},finished_reason="length"}} 10.0\n')
        assert (counted.mean_prompt_tokens, counted.mean_output_tokens) == (120, 168.8)
        assert counted.mean_context == pytest.approx(204.4) and counted.summed_labels == one(text).summed_labels

    def test_llamacpp_counts_no_finished_requests(self):
        state = one(prom_fixture("llamacpp_spec_composed.prom"))
        assert state.mean_context is None and state.absent["mean_context"].key == "prom.absent.not_exported"


def test_a_position_written_in_other_digits_is_said_incomplete_not_raised():
    """Found by the property over generated text: a position label '²' passed str.isdigit() and then
    int() raised ValueError out of the parser."""
    text = ('trtllm_spec_decode_accepted_tokens_total{model_name="m",engine="0",token_position="0",position="²"} 0.0\n')
    states = spec_decode_states(prom.parse(text, 2.0), None)
    assert states and all(state.absent["per_position_acceptance"].key == "prom.absent.positions_incomplete"
                          for state in states)


def test_drafts_so_near_zero_that_the_shares_overflow_are_said_as_none_drafted():
    """Found by the property over generated text: 1e-310 drafts against 1e10 accepted at position 0
    made a share of inf (numpy's overflow warning), which a chart cannot draw."""
    text = ('vllm:spec_decode_num_drafts_total{model_name="m",engine="0"} 1e-310\n'
            'vllm:spec_decode_num_accepted_tokens_per_pos_total{model_name="m",engine="0",position="0"} 1e10\n')
    (state,) = spec_decode_states(prom.parse(text, 2.0), None)
    assert state.per_position_acceptance is None
    assert state.absent["per_position_acceptance"] == Notice("prom.absent.zero", count=Notice("prom.count.drafts"))
