"""AppTest of the router and the calculator page: renders, reacts, restores from the URL, refuses
bad input with a message and never shows an exception.

Sidebar inputs are given through the URL or session state before the first run: in Streamlit
1.67's AppTest, with an st.navigation page file, a rerun neither sends sidebar widget values set with
set_value() nor returns the sidebar's elements. Typing into the sidebar and uploading a file there
are tested in real Chromium (tests/test_browser.py).
"""

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")


def make_app(state: dict | None = None, **query: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    for key, value in query.items():
        at.query_params[key] = value
    for key, value in (state or {}).items():
        at.session_state[key] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def metric(at: AppTest, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


class TestCalculatorPage:
    def test_default_scenario_headline(self):
        at = make_app()
        assert metric(at, "Tokens per step E") == "3.36"
        assert metric(at, "vLLM acceptance rate") == "0.59"
        assert metric(at, "Verify cost") == "1.08×"  # batch 64, γ = 4, 70B on H100: just past the ridge
        assert "past the ridge but the plain decode pass is not" in at.info[0].value
        assert len(at.dataframe) == 1 and not at.get("vega_lite_chart")  # only the open tab is built

    @pytest.mark.parametrize("view", ["Speedup vs batch", "α × batch", "Best draft length", "Roofline"])
    def test_each_chart_view_renders_when_open(self, view):
        at = make_app({"view": view})
        assert len(at.get("vega_lite_chart")) == 1 and len(at.download_button) == (view != "Roofline")

    @pytest.mark.parametrize("view", ["Speedup vs batch", "α × batch", "Roofline"])
    def test_batch_views_need_the_roofline_model(self, view):
        at = make_app({"view": view}, mode="ratios")
        assert not at.get("vega_lite_chart")
        assert "needs the roofline" in at.info[-1].value

    def test_moving_alpha_changes_the_speedup(self):
        at = make_app()
        before = metric(at, "Speedup")
        at.slider(key="alpha").set_value(0.4).run()
        assert not at.exception
        assert metric(at, "Speedup") != before
        assert metric(at, "Tokens per step E") == "1.65"

    def test_url_restores_the_scenario(self):
        at = make_app(alpha="0.7", gamma="4", batch="1", mode="ratios", verify_cost="2.0")
        assert at.slider(key="alpha").value == 0.7
        assert at.select_slider(key="batch").value == 1
        assert metric(at, "Speedup") == "1.26×"  # seed 000: α 0.7, v = 2

    def test_ratios_mode_reproduces_the_seed_table(self):
        at = make_app(mode="ratios")
        table = at.dataframe[0].value
        assert [round(v, 2) for v in table["compute-bound limit"]] == [0.32, 0.44, 0.53, 0.65, 0.79]
        assert [round(v, 2) for v in table["memory-bound"]][2] == 2.31

    def test_long_context_keeps_verify_memory_bound(self):
        at = make_app(batch="256", context="8192")
        assert "still waits on memory" in at.info[0].value

    def test_a_model_too_large_for_the_device_is_flagged(self):
        assert not make_app().warning  # Qwen3-32B, 65.5 GB of weights, fits an 80 GB H100
        at = make_app(target="Llama-3.1-70B")
        assert "need 141 GB; this device has 80 GB" in at.warning[0].value

    def test_moe_verify_reads_more_experts(self):
        at = make_app(target="Mixtral-8x7B", batch="1")
        assert metric(at, "Verify cost") == "2.81×"
        assert "not free" in at.info[0].value

    def test_realistic_preset_button_sets_the_knobs(self):
        at = make_app()
        at.button[0].click().run()
        assert at.slider(key="mfu").value == 0.6 and at.slider(key="overlap").value == 0.0
        assert at.slider(key="overhead_ms").value == 0.3

    def test_cpu_preset_without_figures_asks_for_them(self):
        at = make_app(gpu="Intel-12th-gen-desktop", target="Qwen2.5-1.5B")
        assert "no published peak TFLOPS" in at.sidebar.error[0].value
        assert "not complete yet" in at.info[0].value and not at.metric

    def test_cpu_preset_with_figures_from_the_url(self):
        # 1.5 TFLOPS over 76.8 GB/s: a ridge of 20 FLOP/byte, so batch 64 is compute-bound.
        at = make_app(gpu="Intel-12th-gen-desktop", target="Qwen2.5-1.5B", draft="Qwen2.5-0.5B",
                      tflops="1.5", bandwidth="0.0768")
        assert not at.sidebar.error
        assert "even the plain decode pass is compute-bound" in at.info[0].value


class TestScenarioSidebar:
    def test_vocabulary_mismatch_warns(self):
        at = make_app(target="Llama-3.1-70B", draft="Qwen3-0.6B")
        assert "vocabularies differ" in at.sidebar.warning[0].value

    def test_matching_pair_does_not_warn(self):
        at = make_app(target="Qwen3-32B", draft="Qwen3-0.6B")
        assert not at.sidebar.warning

    def test_unknown_ids_in_the_url_fall_back_to_defaults(self):
        at = make_app(gpu="H999", target="../etc/passwd", mode="evil")
        assert metric(at, "Verify cost") == "1.08×"

    def test_pasted_config(self):
        config = (ROOT / "data/model_configs/Llama-3.1-8B.json").read_text()
        at = make_app({"target_config_text": config}, target="custom")
        assert not at.sidebar.error
        assert metric(at, "Tokens per step E") == "3.36"

    @pytest.mark.parametrize("text, message", [
        ("{not json", "not a JSON config.json"),
        (json.dumps({"model_type": "gpt2"}), "not supported"),
        (json.dumps({"model_type": "llama", "hidden_size": 64}), "num_hidden_layers"),
        ("", "is empty"),
    ])
    def test_bad_pasted_config_is_refused_with_a_message(self, text, message):
        at = make_app({"target_config_text": text}, target="custom")
        assert message in at.sidebar.error[0].value
        assert "not complete yet" in at.info[0].value and message in at.info[0].value

    def test_oversized_paste_is_refused(self, monkeypatch):
        monkeypatch.setenv("SPECVIZ_MAX_CONFIG_BYTES", "100")
        config = (ROOT / "data/model_configs/Qwen3-0.6B.json").read_text()
        at = make_app({"target_config_text": config}, target="custom")
        assert "at most 100" in at.sidebar.error[0].value
