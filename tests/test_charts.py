"""Tests for specviz.charts: each builder returns a valid Altair spec with the data it was given."""

import json
import math

import altair as alt
import numpy as np
import pytest
import pandas as pd

from conftest import PRESETS, make_scenario
from specviz import calculator, charts, i18n, regime, settings, workload
from specviz.charts import spec as chart_spec
from specviz.advice import claims, draft_length, slowdown
from specviz.live import windows
from specviz.model import spec
from specviz.results import explorer, prediction
from specviz.results.schema import RUN_COLUMNS

DATA = settings.get("SPECVIZ_DATA_DIR")
SCENARIO = make_scenario(target="Llama-3.1-70B")


def layers(chart) -> list:
    return chart.layer if isinstance(chart, alt.LayerChart) else [chart]


class TestSpeedupVsBatch:
    def test_lines_rule_and_crossover_marks(self):
        curves, crossings = calculator.batch_sweep(SCENARIO, [0.6, 0.9], 4, 0, 1024)
        chart = charts.speedup_vs_batch(curves, crossings)
        spec = chart.to_dict()
        assert [layer["mark"]["type"] for layer in spec["layer"]] == ["line", "rule", "text", "point"]
        assert spec["layer"][0]["encoding"]["x"]["scale"]["type"] == "log"
        assert spec["layer"][2]["encoding"]["text"] == {"value": "Break-even"}  # the rule says what it is
        assert len(layers(chart)[3].data) == 2  # one diamond per α that crosses

    def test_the_user_s_alpha_is_a_wider_line_of_its_own_beneath_and_the_others_data_stay(self):
        # As α moves only its own curve's data change: the reference curves are a dataset the browser
        # keeps as drawn (Streamlit sends it unchanged; Vega does not evaluate it again).
        reference, crossings = calculator.batch_sweep(SCENARIO, [0.5, 0.9], 4, 0, 1024)
        sent, specs = [], []
        for alpha in (0.79, 0.8, 0.79):
            yours, _ = calculator.batch_sweep(SCENARIO, [alpha], 4, 0, 1024)
            spec = charts.speedup_vs_batch_spec(reference, crossings, yours=yours)
            lines = [layer for layer in spec["layer"] if layer["mark"]["type"] == "line"]
            # Beneath the reference curves and wider: one at the same α (0.8 at 0.8) shows inside it.
            assert [line["mark"].get("strokeWidth") for line in lines] == [5, None]
            assert lines[0]["encoding"]["color"] == lines[1]["encoding"]["color"]  # one legend
            rest, data = without_data(spec)
            sent.append(data)
            specs.append(rest)
        assert specs[0] == specs[1] == specs[2]
        # The reference α keep their colours whatever the user's α (the review found 0.8 pink at α 0.8,
        # teal at 0.73): a fixed domain, the user's α black and named as theirs.
        scale = lines[0]["encoding"]["color"]["scale"]
        assert scale["domain"] == ["0.5", "0.9", "yours"] and scale["range"][-1] == "#000000"
        yours_name, reference_name = (line["data"]["name"] for line in lines)
        pd.testing.assert_frame_equal(sent[0][reference_name], sent[1][reference_name])
        assert not sent[0][yours_name].equals(sent[1][yours_name])

    def test_a_band_and_the_ideal_roofline_beneath_the_lines(self):
        curves, crossings = calculator.batch_sweep(SCENARIO, [0.6, 0.9], 4, 0, 1024)
        band = calculator.band_vs_batch(SCENARIO, 0.9, 4, 0, 1024)
        spec = charts.speedup_vs_batch(curves, crossings, band=band).to_dict()
        assert [layer["mark"]["type"] for layer in spec["layer"][:2]] == ["area", "line"]
        assert spec["layer"][0]["encoding"]["y2"]["field"] == "high" and spec["layer"][1]["mark"]["strokeDash"]


def without_data(spec: dict) -> tuple[str, dict]:
    """A spec's JSON without its datasets, and its datasets."""
    rest = {k: v for k, v in spec.items() if k != "datasets"}
    return json.dumps(rest, sort_keys=True), spec["datasets"]


class TestCompiledSpec:
    """A chart built once and then given new data: the spec must be the one a fresh build writes."""

    def batch_inputs(self, alpha: float, batch: int, limit: int | None, with_band: bool = True):
        curves, crossings = calculator.batch_sweep(SCENARIO, sorted({0.5, 0.9, alpha}), 4, 0, 1024)
        band = calculator.band_vs_batch(SCENARIO, alpha, 4, 0, 1024) if with_band else None
        yours = curves[curves["alpha"] == alpha]
        return (curves, crossings), dict(band=band, limit=limit, here=(batch, 1.3 + alpha / 10), yours=yours)

    @pytest.mark.parametrize("lang", ["en", "vi"])
    def test_batch_spec_equals_a_fresh_build_at_every_move(self, lang):
        # α moves, the batch, the memory limit (on and off the axis) and the band: after the first
        # build each spec is the template given new frames, and must equal what a build writes.
        cases = [(0.7, 64, 300, True), (0.71, 64, 300, True), (0.93, 8, 12, True), (0.6, 512, 5000, True),
                 (0.6, 512, None, False), (0.8, 1, 300, False)]
        for alpha, batch, limit, with_band in cases:
            args, kwargs = self.batch_inputs(alpha, batch, limit, with_band)
            fresh_spec, fresh_data = without_data(charts.vega_lite_spec(charts.speedup_vs_batch(*args, lang, **kwargs)))
            spec, data = without_data(charts.speedup_vs_batch_spec(*args, lang, **kwargs))
            assert spec == fresh_spec, (alpha, batch, limit, with_band)
            assert list(data) == list(fresh_data)
            for name in data:
                pd.testing.assert_frame_equal(data[name], fresh_data[name])

    def test_a_second_call_with_the_same_key_builds_nothing(self):
        built = []

        def build(frames):
            built.append(1)
            return alt.Chart(frames["points"]).mark_point().encode(x=alt.X("x:Q", title="x"))

        key = ("test_chart", "a second call")
        first = charts.compiled_spec(key, {"points": pd.DataFrame({"x": [1.0]})}, build)
        second = charts.compiled_spec(key, {"points": pd.DataFrame({"x": [2.0]})}, build)
        assert len(built) == 1
        assert first["datasets"]["data-0"]["x"].tolist() == [1.0] and second["datasets"]["data-0"]["x"].tolist() == [2.0]

    def test_a_frame_drawn_but_not_given_is_refused(self):
        # Its data would be the first call's at every later call.
        stray = pd.DataFrame({"x": [1.0]})
        with pytest.raises(ValueError, match="not one of the frames"):
            charts.compiled_spec(("test_chart", "stray"), {"points": pd.DataFrame({"x": [2.0]})},
                                 lambda frames: alt.layer(alt.Chart(frames["points"]).mark_point(),
                                                          alt.Chart(stray).mark_rule()))

    def test_the_cache_keeps_a_bounded_number_of_specs(self):
        for number in range(3 * chart_spec._COMPILED_KEPT):
            charts.compiled_spec(("test_chart", number), {"points": pd.DataFrame({"x": [1.0]})},
                                 lambda frames: alt.Chart(frames["points"]).mark_point())
        assert len(chart_spec._COMPILED) == chart_spec._COMPILED_KEPT


class TestSpeedupHeatmap:
    def test_diverges_at_one(self):
        grid = calculator.heatmap_grid(SCENARIO, 4, 0, 256)
        scale = charts.speedup_heatmap(grid).to_dict()["layer"][0]["encoding"]["color"]["scale"]
        assert scale["domainMid"] == 1.0 and scale["scheme"] == "redblue"

    def test_a_batch_the_memory_does_not_hold_is_a_dash_not_a_colour(self):
        """An engineer's pass: DeepSeek-V3 + MTP on 8 B200s at 32k holds 33, and batches 64-1024 were
        coloured up to 1.6x."""
        grid = calculator.heatmap_grid(SCENARIO, 4, 0, 256, limit=50)
        assert grid.loc[grid["batch"] <= 50, "speedup"].notna().all() and grid.loc[grid["batch"] > 50, "speedup"].isna().all()
        cells, beyond = charts.speedup_heatmap(grid).layer
        assert set(cells.data["batch"]) == {1, 2, 4, 8, 16, 32} and set(beyond.data["batch"]) == {64, 128, 256}
        assert beyond.to_dict()["mark"]["color"] == "#d62728"


class TestSpeedupVsGamma:
    def test_best_is_flagged(self):
        sweep, best = calculator.gamma_sweep(SCENARIO, 0.8, 1, 0, 8)
        chart = charts.speedup_vs_gamma(sweep, best)
        assert layers(chart)[0].data["best"].sum() == 1
        chart.to_dict()


class TestRooflineChart:
    def test_two_passes_and_translated_labels(self):
        roof, passes = regime.roofline_points(SCENARIO, 4, 64, 0)
        chart = charts.roofline_chart(roof, passes)
        assert set(layers(chart)[3].data["label"]) == {"Plain decode (64 positions)", "Verify (320 positions)"}
        # A steady load's prompts in both passes (batch 16, 2,000 in and 100 out: 16 + 320, 80 + 320·E).
        loaded = workload.steady_load(make_scenario(), 2000, 100)
        labels = set(layers(charts.roofline_chart(*regime.roofline_points(loaded, 4, 16, loaded.context)))[3].data["label"])
        assert labels == {"Plain decode (336 positions)", "Verify (1,156 positions)"}
        assert chart.to_dict()["layer"][0]["encoding"]["y"]["scale"]["type"] == "log"
        # The roof's tooltip rounds as the passes' do (Vega-Lite's own had shown "37.3521852841").
        roof_tip = chart.to_dict()["layer"][0]["encoding"]["tooltip"]
        assert [(tip["field"], tip["format"]) for tip in roof_tip] == [("intensity", ".1f"), ("tflops", ".1f")]

    def test_the_legend_below_never_cuts_a_pass(self):
        """DeepSeek-V3 NVFP4 on 8 H200s at batch 256: the legend on the right showed "Plain decode (256
        positio…" at 1,280 px. It is below the plot now, titled, each name whole."""
        chart = charts.roofline_chart(*regime.roofline_points(SCENARIO, 4, 256, 4096))
        color = chart.to_dict()["layer"][3]["encoding"]["color"]
        assert color["legend"]["orient"] == "bottom" and color["legend"]["labelLimit"] == 0
        assert color["legend"]["title"] == "Pass"
        assert "Plain decode (256 positions)" in set(layers(chart)[3].data["label"])
        # The ridge's label sits left of the rule, where the axis has room (right of it, it ran off at 800 px).
        mark = chart.to_dict()["layer"][2]["mark"]
        assert (mark["align"], mark["dx"]) == ("right", -4)

    def test_the_ridge_is_marked_where_the_roof_bends(self):
        roof, passes = regime.roofline_points(SCENARIO, 4, 64, 0)
        ridge = roof.attrs["ridge"]
        # The roof is flat from the ridge on and a slope through the origin before it.
        assert roof.loc[roof["intensity"] >= ridge, "tflops"].nunique() == 1
        below = roof[roof["intensity"] < ridge]
        assert (below["tflops"] / below["intensity"]).round(9).nunique() == 1
        text = layers(charts.roofline_chart(roof, passes))[2].to_dict()
        assert text["mark"]["type"] == "text" and text["encoding"]["text"]["value"] == f"Ridge {ridge:,.0f} FLOP/byte"


def runs(rows: list[dict]):
    """Canonical runs with the explorer's shared columns, from a few fields per row."""
    base = {c: None for c in RUN_COLUMNS}
    frame = pd.DataFrame([{**base, "run_id": str(i), "source_file": "results/f.csv", **r} for i, r in enumerate(rows)])
    return explorer.with_view_columns(frame.astype({c: "float64" for c, k in RUN_COLUMNS.items()
                                            if k in ("DOUBLE", "BIGINT", "INTEGER")}))


def chart_data(chart) -> pd.DataFrame:
    """The data of a chart's first layer or panel (Altair lifts data shared by all of them to the top)."""
    if isinstance(chart.data, pd.DataFrame):
        return chart.data
    return chart_data((chart.layer if isinstance(chart, alt.LayerChart) else chart.vconcat)[0])


LONG = "a deployment label long enough to be cut by Vega-Lite's default 160 px legend limit"
LOADS = runs([{"label": LONG, "concurrency": c, "output_throughput": 100.0 * c} for c in (1, 2, 4)]
             + [{"label": "rate sweep", "request_rate": r, "output_throughput": 50.0 * r} for r in (1.0, 5.0, math.inf)])


class TestMetricVsLoad:
    def test_concurrency_and_request_rate_are_separate_charts(self):
        by_concurrency = charts.metric_vs_load(explorer.on_load_axis(LOADS, "concurrency"), "output_throughput",
                                               "concurrency")
        by_rate = charts.metric_vs_load(explorer.on_load_axis(LOADS, "request_rate"), "output_throughput",
                                        "request_rate")
        assert set(chart_data(by_concurrency).series) == {LONG}
        assert set(chart_data(by_rate).series) == {"rate sweep"} and list(chart_data(by_rate).load) == [1, 5]
        assert by_concurrency.to_dict()["layer"][0]["encoding"]["x"]["title"] == "Concurrency"
        assert by_rate.to_dict()["layer"][0]["encoding"]["x"]["title"] == "Request rate (req/s)"

    def test_the_line_goes_through_the_mean_of_a_load_s_runs_and_each_run_is_a_point(self):
        """A sweep's repeats at one load (run=0, run=1) had drawn the line up and down through each."""
        repeats = explorer.on_load_axis(runs([{"label": "sweep", "concurrency": c, "output_throughput": v}
                                              for c, v in ((8, 100.0), (8, 140.0), (16, 130.0))]), "concurrency")
        line, points = charts.metric_vs_load(repeats, "output_throughput", "concurrency").to_dict()["layer"]
        assert line["mark"]["type"] == "line" and line["encoding"]["y"]["aggregate"] == "mean"
        assert {tip.get("aggregate") for tip in line["encoding"]["tooltip"]} == {None, "mean", "count"}
        assert "source_file" not in {tip.get("field") for tip in line["encoding"]["tooltip"]}  # it would split the mean
        assert points["mark"]["type"] == "point" and points["encoding"]["y"]["field"] == "output_throughput"
        assert "aggregate" not in points["encoding"]["y"]

    def test_the_legend_never_cuts_a_name(self):
        spec = charts.metric_vs_load(explorer.on_load_axis(LOADS, "concurrency"), "output_throughput",
                                     "concurrency").to_dict()
        legend = spec["layer"][0]["encoding"]["color"]["legend"]
        assert legend["labelLimit"] == 0 and legend["symbolLimit"] == 0 and legend["orient"] == "bottom"
        assert legend["columns"] == 1  # one long name: one column

    def test_a_name_of_parts_breaks_into_lines_and_a_long_title_before_its_parenthesis(self):
        """A phone's 390 px cut "eagle3 γ=3, top-k 1, 4 draft tokens · mtbench" and the Live chart's
        Vietnamese title (an analyst's pass): a name's parts are lines, its columns sized by the longest
        line for a phone's chart (about 330 px); a title past 40 characters breaks before its parenthesis."""
        from specviz.charts.layout import series_legend, wrapped_title
        names = pd.Series(["eagle3 γ=3, top-k 1, 4 draft tokens · mtbench", "γ=3 · x.json"])
        legend = series_legend(None, names).to_dict()
        assert legend["labelExpr"] == "split(datum.label, ' · ')"
        assert legend["columns"] == 330 // (7 * len("eagle3 γ=3, top-k 1, 4 draft tokens") + 40) == 1
        assert series_legend(None, pd.Series(["a · b", "c"])).to_dict()["columns"] == 4
        title = "Acceptance rate của vLLM (được chấp nhận/đã draft)"
        assert wrapped_title(title) == ["Acceptance rate của vLLM", "(được chấp nhận/đã draft)"]
        assert wrapped_title("Acceptance rate (accepted/drafted)") == "Acceptance rate (accepted/drafted)"

    def test_groups_in_numeric_order_with_unset_ones_named(self):
        grouped = runs([{"concurrency": 1, "output_throughput": 1, "extra": json.dumps({"max_num_seqs": s})}
                        for s in (16, 4, 128)] + [{"concurrency": 1, "output_throughput": 1}])
        chart = charts.metric_vs_load(explorer.with_group(grouped, "extra.max_num_seqs"), "output_throughput",
                                      "concurrency", group_title="max_num_seqs")
        color = chart.to_dict()["layer"][0]["encoding"]["color"]
        assert color["scale"]["domain"] == ["4", "16", "128", "(not set)"] and color["legend"]["title"] == "max_num_seqs"

    def test_a_line_keeps_its_colour_in_a_chart_without_it(self):
        lines = explorer.on_load_axis(LOADS, "concurrency").assign(p50_itl_ms=[None, None, 5.0])
        lines.loc[lines.index[-1], "group"] = "other"
        color = charts.metric_vs_load(lines, "p50_itl_ms", "concurrency").to_dict()["layer"][0]["encoding"]["color"]
        assert color["scale"]["domain"] == [LONG, "other"]


    @staticmethod
    def many_groups(n: int) -> pd.DataFrame:
        return explorer.on_load_axis(runs([{"label": f"line {i:02d}", "concurrency": c, "output_throughput": 1.0 * c}
                                           for i in range(n) for c in (1, 8)]), "concurrency")

    def test_up_to_ten_lines_use_the_default_colours(self):
        encoding = charts.metric_vs_load(self.many_groups(10), "output_throughput", "concurrency").to_dict()[
            "layer"][0]["encoding"]
        assert "scheme" not in encoding["color"]["scale"] and "strokeDash" not in encoding

    def test_more_than_ten_lines_take_twenty_colours(self):
        encoding = charts.metric_vs_load(self.many_groups(11), "output_throughput", "concurrency").to_dict()[
            "layer"][0]["encoding"]
        assert encoding["color"]["scale"]["scheme"] == "tableau20" and "strokeDash" not in encoding

    def test_beyond_twenty_no_two_lines_look_alike(self):
        lines = self.many_groups(45)
        encoding = charts.metric_vs_load(lines, "output_throughput", "concurrency").to_dict()["layer"][0]["encoding"]
        groups = encoding["color"]["scale"]["domain"]
        assert encoding["strokeDash"]["scale"]["domain"] == groups
        # Group i has colour i mod 20 of tableau20 and a dash pattern: every (colour, dash) pair is unique.
        looks = {(i % 20, json.dumps(dash)) for i, dash in enumerate(encoding["strokeDash"]["scale"]["range"])}
        assert len(looks) == len(groups) == 45
        # One legend for both channels (same title), so the legend shows the dashes too.
        assert encoding["strokeDash"]["legend"] == encoding["color"]["legend"]

    def test_every_metric_shares_the_x_domain_of_all_the_runs(self):
        lines = explorer.on_load_axis(runs([{"label": "a", "concurrency": c, "output_throughput": 1.0 * c,
                                             "p50_itl_ms": 5.0 if c < 100 else None} for c in (1, 10, 1000)]),
                                      "concurrency")
        domains = [charts.metric_vs_load(lines, metric, "concurrency").to_dict()["layer"][0]["encoding"]["x"]["scale"]
                   for metric in ("output_throughput", "p50_itl_ms")]
        assert domains[0] == domains[1] == {"type": "log", "domain": [1.0, 1000.0], "padding": 12}

    def test_the_axis_is_labelled_at_the_loads_measured(self):
        """A log axis labels its powers of ten: points at 1 and 16 ended at a tick of 10 (Chromium).
        Ticks at the measured loads, the last one included; a sweep of many loads gets a few of them."""
        axis = lambda lines: charts.metric_vs_load(explorer.on_load_axis(lines, "concurrency"), "output_throughput",
                                                   "concurrency").to_dict()["layer"][0]["encoding"]["x"]["axis"]
        two = axis(runs([{"target_model": m, "concurrency": c, "output_throughput": 50.0 * c}
                         for m, c in (("a", 16), ("b", 1))]))
        assert two["values"] == [1, 16] and two["format"] == ",~g"
        many = axis(runs([{"concurrency": c, "output_throughput": 1.0} for c in range(1, 101)]))["values"]
        assert len(many) <= 12 and many[0] == 1 and many[-1] == 100 and many == sorted(set(many))


class TestAcceptanceByWorkload:
    def test_only_the_figures_that_exist_and_origins_apart(self):
        summary = pd.DataFrame({"origin": ["example", "user"], "workload": ["chat", "chat"],
                                "draft_setting": ["eagle γ=4"] * 2, "acceptance_length": [2.4, 1.5],
                                "zero_accept_rate": [float("nan")] * 2, "runs": [8, 1]})
        chart = charts.acceptance_by_workload(summary)
        assert len(chart.vconcat) == 1  # no empty zero-accept panel
        encoding = chart.to_dict()["vconcat"][0]["encoding"]
        assert encoding["yOffset"]["field"] == "bar" and encoding["opacity"]["field"] == "origin"
        assert set(chart_data(chart).bar) == {"EXAMPLE (synthetic) · eagle γ=4", "Your runs · eagle γ=4"}
        summary["zero_accept_rate"] = [0.27, 0.3]
        assert len(charts.acceptance_by_workload(summary).vconcat) == 2

    def test_each_draft_setting_is_a_bar_of_its_colour(self):
        """SpecForge's mtbench at γ 7 with a tree and at γ 3 in a chain was one bar of 3.49."""
        summary = pd.DataFrame({"origin": ["user"] * 2, "workload": ["mtbench"] * 2,
                                "draft_setting": ["EAGLE3 γ=3, top-k 1, 4 draft tokens",
                                                  "EAGLE3 γ=7, top-k 10, 60 draft tokens"],
                                "acceptance_length": [2.56, 4.42], "zero_accept_rate": [float("nan")] * 2,
                                "runs": [3, 3]})
        chart = charts.acceptance_by_workload(summary)
        encoding = chart.to_dict()["vconcat"][0]["encoding"]
        assert encoding["color"]["field"] == "draft_setting" and encoding["color"]["legend"]["title"] == "Draft setting"
        assert chart_data(chart).bar.nunique() == 2 and "opacity" not in encoding  # one origin: no pale bars

    def test_workload_names_are_never_cut(self):
        summary = pd.DataFrame({"origin": ["user"], "workload": ["(no workload named)"], "draft_setting": ["eagle γ=4"],
                                "acceptance_length": [2.0], "zero_accept_rate": [0.2], "runs": [1]})
        for panel in charts.acceptance_by_workload(summary).to_dict()["vconcat"]:
            assert panel["encoding"]["y"]["axis"]["labelLimit"] == 0


PAIRED = explorer.pair_with_baselines(runs(
    [{"label": "plain", "workload": "chat", "concurrency": c, "output_throughput": 100.0 * c} for c in (1, 64)]
    + [{"label": "eagle", "workload": "chat", "spec_method": "eagle", "num_speculative_tokens": 3,
        "acceptance_length": 2.5, "concurrency": c, "output_throughput": s * 100.0 * c} for c, s in ((1, 1.8), (64, 0.9))]))
LIVE = pd.DataFrame({"time_end": pd.to_datetime([0, 5, 10], unit="s"), "model": "m",
                     **{figure: [0.7, 0.72, None] for figure in charts.LIVE_FIGURES}})
EVERY_CHART = {
    "speedup_vs_batch": lambda: charts.speedup_vs_batch(*calculator.batch_sweep(SCENARIO, [0.6, 0.9], 4, 0, 1024)),
    "speedup_heatmap": lambda: charts.speedup_heatmap(calculator.heatmap_grid(SCENARIO, 4, 0, 256)),
    "speedup_vs_gamma": lambda: charts.speedup_vs_gamma(*calculator.gamma_sweep(SCENARIO, 0.8, 1, 0, 8)),
    "roofline_chart": lambda: charts.roofline_chart(*regime.roofline_points(SCENARIO, 4, 64, 0)),
    "metric_vs_load": lambda: charts.metric_vs_load(explorer.on_load_axis(LOADS, "concurrency"), "output_throughput",
                                                    "concurrency", explorer.sweep_peaks(LOADS)),
    "measured_speedup": lambda: charts.measured_speedup(PAIRED, explorer.crossover_concurrency(PAIRED)),
    "acceptance_by_workload": lambda: charts.acceptance_by_workload(explorer.workload_acceptance(PAIRED)),
    "measured_vs_predicted": lambda: charts.measured_vs_predicted(prediction.predict(PAIRED, SCENARIO, PRESETS, 0)),
    "published_speedups": lambda: charts.published_speedups(explorer.load_published(DATA), PAIRED),
    "live_over_time": lambda: charts.live_over_time(LIVE, "alpha_iid"),
    "per_position": lambda: charts.per_position([0.83, 0.7, 0.6], [0.83, 0.84, None], "en", windows.position_intervals(
        [0.83, 0.7, 0.6], [0.83, 0.84, None], 100.0)),
    "tokens_per_step": lambda: charts.tokens_per_step([20, 15, 12, 10, 43]),
    "request_acceptance": lambda: charts.request_acceptance(pd.Series([1.0, 2.5, 4.0, 3.0]), 3),
    "gamma_map": lambda: charts.gamma_map(draft_length.gamma_map(SCENARIO, 0.8, 64, 4096, 6)),
    "claim_by_batch": lambda: charts.claim_by_batch(
        claims.check_claim(SCENARIO, claims.Claim(2.0, alpha=0.8), 8, 256).batches, 2.0),
}


def views(spec: dict) -> list[list[dict]]:
    """The encodings of each view of a Vega-Lite spec: a layer chart's layers together, each panel apart."""
    if "layer" in spec:
        return [[layer.get("encoding", {}) for layer in spec["layer"]]]
    if "vconcat" in spec:
        return [view for panel in spec["vconcat"] for view in views(panel)]
    return [[spec.get("encoding", {})]]


class TestEveryBuilder:
    def test_covers_every_public_builder(self):
        assert set(EVERY_CHART) == set(charts.__all__) - {"LIVE_CHARTS", "LIVE_FIGURES", "vega_lite_spec", "compiled_spec",
                                                          "speedup_vs_batch_spec", "measured_vs_predicted_spec"}

    @pytest.mark.parametrize("name", sorted(EVERY_CHART))
    def test_a_legend_below_wraps_into_columns(self, name):
        # One row of long names ran off the chart at 800 px (the claim chart, Chromium).
        for view in views(EVERY_CHART[name]().to_dict()):
            for encoding in view:
                legend = encoding.get("color", {}).get("legend")
                if legend and legend.get("orient") == "bottom":
                    assert legend.get("columns", 0) >= 1 and legend["labelLimit"] == 0, legend

    @pytest.mark.parametrize("name", sorted(EVERY_CHART))
    def test_layers_on_one_axis_share_one_title(self, name):
        # Vega-Lite joins the titles of layers that share an axis: a labelled rule titled with its
        # label read "Speedup (×), Break-even, Claim 3.00×" in Chromium.
        for view in views(EVERY_CHART[name]().to_dict()):
            for channel in ("x", "y"):
                titles = {e[channel]["title"] for e in view if channel in e and e[channel].get("title") is not None}
                assert len(titles) <= 1, (channel, titles)

    @pytest.mark.parametrize("name", sorted(EVERY_CHART))
    def test_every_axis_legend_and_tooltip_is_titled(self, name):
        """Untitled, Vega-Lite names a channel by its data field ("series", "kind", "value"): English
        and raw in every language. A layer may leave an axis to another layer that titles it."""
        for view in views(EVERY_CHART[name]().to_dict()):
            for channel in ("x", "y"):
                drawn = [encoding[channel] for encoding in view if channel in encoding]
                assert not drawn or any("title" in d for d in drawn), (channel, drawn)
            for encoding in view:
                assert all("title" in tip for tip in encoding.get("tooltip", [])), encoding["tooltip"]
                for channel in ("color", "strokeDash"):
                    drawn = encoding.get(channel, {})
                    if "field" in drawn and drawn.get("legend", {}) is not None:  # a legend is shown
                        assert "title" in drawn or "title" in drawn.get("legend", {}), (channel, drawn)

    @pytest.mark.parametrize("name", sorted(EVERY_CHART))
    def test_no_encoding_is_resolved_from_a_shorthand(self, name, monkeypatch):
        # A shorthand ("y:Q") or a dict in an encoding makes Altair search the whole schema on every
        # rerun (about 15 ms each); channel objects skip that, and give the same Vega-Lite.
        resolved = []
        original = alt.SchemaBase.from_dict.__func__
        monkeypatch.setattr(alt.SchemaBase, "from_dict", classmethod(
            lambda cls, *args, **kwargs: resolved.append(cls.__name__) or original(cls, *args, **kwargs)))
        chart = EVERY_CHART[name]()
        assert resolved == []
        chart.to_dict()  # and the spec is valid Vega-Lite


def live_lines(windows: pd.DataFrame, figure: str, **kwargs) -> alt.Chart:
    """The lines of a live chart (its second layer, after the axis's extent)."""
    return charts.live_over_time(windows, figure, **kwargs).layer[1]


def live_domain(windows: pd.DataFrame, figure: str) -> list[float]:
    """The y extent a live chart gives as data: its first layer's two values."""
    return list(charts.live_over_time(windows, figure).layer[0].data[figure])


class TestLiveOverTime:
    def test_a_fleet_s_sums_say_they_are_summed_and_its_ratios_do_not(self):
        """An SRE's pass: the fleet's running requests, titled "the live batch", peaked at 31 where the
        verdict spoke of 16 a server."""
        lines = lambda figure, summed: charts.live_over_time(LIVE, figure, servers_summed=summed).to_dict()["title"]
        # A long title is two lines (layout.wrapped_title), read here as one.
        title = lambda figure, summed: " ".join(t) if isinstance(t := lines(figure, summed), list) else t
        assert title("running_requests", True) == "Running requests (the live batch), summed over the servers"
        assert title("running_requests", False) == "Running requests (the live batch)"
        assert title("acceptance_rate", True) == title("acceptance_rate", False)

    def test_a_fleet_s_times_and_a_server_s_are_drawn_on_one_clock_utc(self):
        """An SRE's pass: Prometheus's times are zone-aware, the store's naive UTC, and a browser at UTC+7
        drew one moment as 02:21 on the fleet's charts and 19:21 on a server's; both are UTC now, as the
        axis's title and the page's messages say."""
        aware = LIVE.assign(time_end=LIVE["time_end"].dt.tz_localize("UTC").dt.tz_convert("Asia/Ho_Chi_Minh"))
        drawn = lambda frame: list(live_lines(frame, "acceptance_rate").data["time_end"])
        assert drawn(aware) == drawn(LIVE) == list(LIVE["time_end"][:2])
        assert live_lines(LIVE, "acceptance_rate").to_dict()["encoding"]["x"]["title"] == "Time (UTC)"

    def test_one_figure_one_line_per_model_without_gaps(self):
        lines = live_lines(LIVE, "acceptance_rate")
        assert len(lines.data) == 2  # the window without a figure is left out, not drawn as zero
        assert lines.to_dict()["encoding"]["y"]["field"] == "acceptance_rate"

    def test_a_refresh_changes_the_data_not_the_spec(self):
        # A domain written in the spec had Vega compile every chart again at every refresh of the page.
        specs = []
        for values in ([0.70, 0.71, 0.72], [0.3, 0.9, 0.5], [0.99, 1.0, 1.0]):
            spec = charts.vega_lite_spec(charts.live_over_time(LIVE.assign(alpha_iid=values), "alpha_iid"))
            datasets = spec.pop("datasets")
            assert list(datasets["data-0"]["alpha_iid"]) == live_domain(LIVE.assign(alpha_iid=values), "alpha_iid")
            specs.append(spec)
        assert specs[0] == specs[1] == specs[2] and "domain" not in json.dumps(specs[0])
        y = specs[0]["layer"][0]["encoding"]["y"]
        assert y["scale"] == {"zero": False, "nice": False} and specs[0]["layer"][0]["mark"]["opacity"] == 0

    def test_a_figure_in_whole_numbers_has_ticks_a_whole_number_apart(self):
        """A browser pass: an idle server's tokens/s, on [0, 1], labelled its axis "0, 0, 0, 1, 1, 1"."""
        idle = LIVE.assign(generation_throughput=0.0)
        assert live_domain(idle, "generation_throughput") == [0.0, 1.0]
        axis = lambda figure: live_lines(idle, figure).to_dict()["encoding"]["y"]["axis"]
        assert axis("generation_throughput") == {"format": ",.0f", "tickMinStep": 1}
        assert "tickMinStep" not in axis("acceptance_rate")  # three decimals: ticks as Vega-Lite places them

    def test_the_figures_that_move_together_share_a_chart_and_its_tooltip(self):
        spec = live_lines(LIVE, "acceptance_rate", also=("acceptance_length", "alpha_iid")).to_dict()
        assert [tip["field"] for tip in spec["encoding"]["tooltip"]] == [
            "time_end", "model", "acceptance_rate", "acceptance_length", "alpha_iid"]
        assert spec["encoding"]["y"]["field"] == "acceptance_rate"
        assert {f for group in charts.LIVE_CHARTS for f in group} == set(charts.LIVE_FIGURES)

    def test_a_companion_without_a_value_keeps_the_window(self):
        lines = live_lines(LIVE.assign(alpha_iid=None), "acceptance_rate", also=("alpha_iid",))
        assert len(lines.data) == 2  # as without the companion: only the drawn figure's gaps leave a window out

    def test_the_legend_never_takes_the_plot_s_height(self):
        # Fitted to the width only: a legend below adds to the 160 px instead of squeezing the plot
        # (fit in both directions left a flat line with no y-axis in Chromium).
        spec = charts.live_over_time(LIVE, "alpha_iid").to_dict()
        assert spec["autosize"]["type"] == "fit-x" and spec["height"] == 160

    @pytest.mark.parametrize("figure", charts.LIVE_FIGURES)
    def test_each_figure_labels_its_axis_in_its_own_format(self, figure):
        assert live_lines(LIVE, figure).to_dict()["encoding"]["y"]["axis"]["format"]

    def test_a_line_breaks_where_windows_are_not_contiguous(self):
        # Two visits: 0–5 s and 5–10 s, then the page was closed until 60 s.
        times = lambda *seconds: pd.to_datetime(list(seconds), unit="s")
        windows = pd.DataFrame({"time_start": times(0, 5, 60, 65), "time_end": times(5, 10, 65, 70),
                                "model": "m", **{f: [0.7, 0.71, 0.72, 0.73] for f in charts.LIVE_FIGURES}})
        lines = live_lines(windows, "alpha_iid")
        assert list(lines.data["run"]) == [0, 0, 1, 1] and lines.to_dict()["encoding"]["detail"]["field"] == "run"
        other_model = windows.assign(model=["a", "b", "a", "b"], time_start=times(0, 0, 5, 5), time_end=times(5, 5, 10, 10))
        assert list(live_lines(other_model, "alpha_iid").data["run"]) == [0, 0, 0, 0]

    def test_a_window_across_a_gap_stands_alone(self):
        # A later visit's first window is measured from the earlier visit's last scrape: 10 minutes,
        # against windows of 2 s. It is a point of its own; the lines either side do not reach it.
        ends = [2, 4, 6, 606, 608, 610]
        starts = [0, 2, 4, 6, 606, 608]
        windows = pd.DataFrame({"time_start": pd.to_datetime(starts, unit="s"), "time_end": pd.to_datetime(ends, unit="s"),
                                "model": "m", **{f: 0.7 for f in charts.LIVE_FIGURES}})
        assert list(live_lines(windows, "alpha_iid").data["run"]) == [0, 0, 0, 1, 2, 2]

    def test_a_line_breaks_at_a_window_without_the_figure(self):
        # An analyst's pass: a server idle for two windows (no draft: no acceptance) between busy ones
        # was drawn as one line across them.
        times = lambda *seconds: pd.to_datetime(list(seconds), unit="s")
        windows = pd.DataFrame({"time_start": times(0, 5, 10, 15, 20), "time_end": times(5, 10, 15, 20, 25), "model": "m",
                                **{f: [0.7, 0.71, None, None, 0.73] for f in charts.LIVE_FIGURES}})
        assert list(live_lines(windows, "alpha_iid").data["run"]) == [0, 0, 2]  # one run ends at each idle window
        prometheus_range = windows.drop(columns="time_start")
        assert list(live_lines(prometheus_range, "alpha_iid").data["run"]) == [0, 0, 2]
        assert list(live_lines(prometheus_range.assign(alpha_iid=0.7), "alpha_iid").data["run"]) == [0] * 5

    def test_a_prometheus_range_breaks_at_steps_without_data(self):
        """An SRE's pass: Prometheus held no point of one model from 21:31:00 to 21:32:15 (steps of
        15 s), and the line bridged the 75 s; the other model's, at every step, runs on."""
        steps = [0, 15, 30, 105, 120]
        frame = pd.DataFrame({"time_end": pd.to_datetime(steps + list(range(0, 135, 15)), unit="s", utc=True),
                              "model": ["a"] * 5 + ["b"] * 9, **{f: 0.7 for f in charts.LIVE_FIGURES}})
        runs = live_lines(frame, "alpha_iid").data.groupby("model")["run"].agg(list)
        assert runs["a"] == [0, 0, 0, 1, 1] and runs["b"] == [0] * 9

    def test_the_tooltip_gives_the_time_to_the_second_and_the_ends_none(self):
        """An SRE's pass: the tooltip said "Dec 06, 2026" (English in Vietnamese too), and the
        invisible rules that set the y domain showed the raw column's name near the axis."""
        spec = charts.live_over_time(LIVE, "acceptance_rate", "vi").to_dict()
        extent, lines = spec["layer"]
        assert extent["mark"]["tooltip"] is False
        assert lines["encoding"]["tooltip"][0]["format"] == "%Y-%m-%d %H:%M:%S"

    def test_a_flat_series_stays_flat_with_distinct_ticks(self):
        # A flat 0.709 on Scale(zero=False) read "0.709" on all five ticks in Chromium, and rounding noise
        # of 0.0002 zig-zagged across the chart's whole height.
        flat = LIVE.assign(acceptance_rate=[0.7091, 0.7089, 0.709], running_requests=[30.0, 30.0, 30.0])
        assert live_domain(flat, "acceptance_rate") == pytest.approx([0.659, 0.759])
        assert live_domain(flat, "running_requests") == [29, 31]

    def test_a_rate_s_domain_keeps_within_zero_and_one_and_a_wide_one_keeps_the_data(self):
        near_one = LIVE.assign(acceptance_rate=[0.99, 0.995, 1.0])
        assert live_domain(near_one, "acceptance_rate") == pytest.approx([0.945, 1.0])
        wide = LIVE.assign(alpha_iid=[0.3, 0.9, None])
        assert live_domain(wide, "alpha_iid") == pytest.approx([0.3, 0.9])

    def test_a_legend_only_when_models_are_told_apart(self):
        one = live_lines(LIVE, "alpha_iid").to_dict()
        two = live_lines(LIVE.assign(model=["a", "b", "b"]), "alpha_iid").to_dict()
        assert one["encoding"]["color"]["legend"] is None
        assert two["encoding"]["color"]["legend"]["orient"] == "bottom"


class TestPerPosition:
    def test_both_kinds_per_position(self):
        chart = charts.per_position([0.83, 0.7, 0.6], [0.83, 0.84, None])
        assert len(chart.data) == 5 and set(chart.data.position) == {1, 2, 3}
        assert chart.to_dict()["encoding"]["y"]["scale"]["domain"] == [0, 1.0]

    @pytest.mark.parametrize("lang", ["en", "vi"])
    def test_the_two_kinds_keep_their_order_and_colours_in_every_language(self, lang):
        """An SRE's pass: sorted by name, the conditional bars came first and took the other colour in Vietnamese."""
        encoding = charts.per_position([0.83, 0.7], [0.83, 0.84], lang).to_dict()["encoding"]
        order = [i18n.t(f"chart.position.{kind}", lang) for kind in ("unconditional", "conditional")]
        assert encoding["color"]["scale"]["domain"] == order and encoding["xOffset"]["sort"] == order

    def test_a_kind_with_no_bar_is_not_in_the_legend(self):
        """A re-check: drafts of several lengths give no conditional share, yet the legend listed it."""
        encoding = charts.per_position([0.8, 0.53, 0.27, 0.13], []).to_dict()["encoding"]
        assert encoding["color"]["scale"]["domain"] == [i18n.t("chart.position.unconditional")]

    def test_the_legend_below_never_takes_the_plot_s_height(self):
        spec = charts.per_position([0.83, 0.7], [0.83, 0.84]).to_dict()
        assert spec["autosize"]["type"] == "fit-x" and spec["height"] == 240

    def test_each_figure_s_sampling_interval_is_a_rule_over_its_bar(self):
        """100 drafts, 80 accepted at position 1 and 50 at 2: a rule over each bar where the interval is
        known (windows.position_intervals), its ends in the tooltip; none past a figure not known."""
        acceptance, conditional = [0.8, 0.5], [0.8, 0.625]
        chart = charts.per_position(acceptance, conditional, "en", windows.position_intervals(acceptance, conditional, 100))
        bars, rules = chart.to_dict()["layer"]
        assert rules["mark"]["type"] == "rule" and rules["encoding"]["y2"]["field"] == "high"
        assert [t["field"] for t in bars["encoding"]["tooltip"]][-2:] == ["low", "high"]
        assert chart.layer[1].data is alt.Undefined and len(chart.data) == 4
        row = chart.data[(chart.data.position == 2) & (chart.data.kind == i18n.t("chart.position.conditional"))]
        assert (row["low"].item(), row["high"].item()) == pytest.approx(spec.share_interval(0.625, 80))
        assert isinstance(charts.per_position(acceptance, conditional), alt.Chart)  # no interval: the bars alone

    def test_a_rate_read_above_one_is_drawn_whole(self):
        chart = charts.per_position([0.8, 0.88], [0.8, 1.1])
        assert chart.to_dict()["encoding"]["y"]["scale"]["domain"] == [0, 1.1]


class TestClaimByBatch:
    def test_the_ceiling_the_measured_alpha_and_the_claim(self):
        check = claims.check_claim(SCENARIO, claims.Claim(2.0, alpha=0.8), 8, 256)
        spec = charts.claim_by_batch(check.batches, 2.0).to_dict()
        assert [layer["mark"]["type"] for layer in spec["layer"]] == ["area", "line", "area", "line", "rule", "text",
                                                                      "rule", "text"]
        # The band at α = 1 from its cautious edge: it had been shaded from the line up, the text's
        # "likely 5.01–10.10×" drawn from 7.13 only.
        assert (spec["layer"][0]["encoding"]["y"]["field"], spec["layer"][0]["encoding"]["y2"]["field"]) == (
            "ceiling_low", "ceiling_high")
        # Each band says what it is, rounded: the page's default tooltip had listed ceiling_high 12.6694068684.
        assert [(tip["field"], tip.get("title"), tip.get("format")) for tip in spec["layer"][0]["encoding"]["tooltip"]] == [
            ("batch", "Batch size", None), ("kind", "Series", None), ("ceiling_low", "Band, 10th percentile", ".2f"),
            ("ceiling_high", "Band, 90th percentile", ".2f")]
        assert (check.batches["ceiling_low"] < check.batches["ceiling"]).all()
        assert (check.batches["ceiling"] < check.batches["ceiling_high"]).all()
        best = check.batches.loc[check.batches["batch"] == check.best["batch"]].iloc[0]
        assert (best["ceiling_low"], best["ceiling"], best["ceiling_high"]) == pytest.approx(
            (check.best["low"], check.best["speedup"], check.best["high"]))
        assert spec["layer"][3]["mark"]["strokeDash"] == [6, 3]  # the measured α, dashed
        assert spec["layer"][-2]["mark"]["color"] == "#d62728"  # the claim, named on the chart
        assert spec["layer"][-1]["encoding"]["text"] == {"value": "Claim 2.00×"}

    def test_without_a_measured_alpha_only_the_ceiling(self):
        check = claims.check_claim(SCENARIO, claims.Claim(2.0), 8, 256)
        assert len(charts.claim_by_batch(check.batches, 2.0).to_dict()["layer"]) == 6

    def test_the_claimed_batch_is_marked_and_a_slowdown_draws_its_floor(self):
        check = slowdown.check_slowdown(SCENARIO, claims.Claim(0.65, batch=64, alpha=0.3), 8, 256)
        spec = charts.claim_by_batch(check.batches, 0.65, claimed_batch=64).to_dict()
        assert (spec["layer"][0]["encoding"]["y"]["field"], spec["layer"][1]["encoding"]["y"]["field"]) == (
            "floor_low", "floor")
        # The claim's label at the rule's right end, the break-even's at its left: near 1 they had overprinted.
        claim_label = next(layer for layer in spec["layer"] if layer["mark"].get("color") == "#d62728"
                           and layer["mark"]["type"] == "text")
        assert claim_label["mark"]["align"] == "right" and claim_label["encoding"]["x"] == {"value": "width"}
        # The slowest γ's unfavourable edge, dotted, in the legend: the card's "batches where it can happen".
        dotted = next(layer for layer in spec["layer"] if layer["encoding"].get("y", {}).get("field") == "any_gamma_low")
        assert dotted["mark"] == {"type": "line", "strokeDash": [2, 2]}
        legend = spec["layer"][0]["encoding"]["color"]["legend"]
        assert (legend["symbolType"], legend["symbolOpacity"]) == ("stroke", 1)  # not the band's pale circle
        assert "Slowest γ, unfavourable end, α = 0" in {row["kind"] for row in spec["datasets"][dotted["data"]["name"]]}
        rule, label = spec["layer"][-2:]
        # Batch 64 of a log axis from 1 to 229 is in its right half: labelled to the rule's left, short of the wall.
        assert rule["mark"]["type"] == "rule" and (label["mark"]["align"], label["mark"]["dx"]) == ("right", -4)
        small = charts.claim_by_batch(check.batches, 0.65, claimed_batch=4).to_dict()["layer"][-1]
        assert small["mark"]["align"] == "left"
        assert spec["datasets"][rule["data"]["name"]] == [{"batch": 64, "label": "claimed at batch 64"}]
        assert label["mark"]["type"] == "text"


class TestMeasuredVsPredicted:
    def test_series_in_strong_colours_and_bands_that_show(self):
        # Under Streamlit's theme the second series was pale blue (#83c9ff) and its band, a rule at
        # opacity 0.5, barely showed on white (Chromium).
        spec = charts.measured_vs_predicted(prediction.predict(PAIRED, SCENARIO, PRESETS, 0)).to_dict()
        _, bands, dots = spec["layer"]
        for layer in (bands, dots):
            assert layer["encoding"]["color"]["scale"]["scheme"] == "tableau10"
        assert bands["mark"]["opacity"] >= 0.8 and bands["mark"]["strokeWidth"] >= 2

    def test_a_run_predicted_on_the_sidebar_s_setting_is_a_hollow_diamond(self):
        """Its distance from the diagonal is the gap between two setups (an analyst's pass: a model of no
        preset's MTP runs sat 2× off the line, drawn as any other run)."""
        predicted = prediction.predict(PAIRED, SCENARIO, PRESETS, 0)
        predicted = predicted.assign(own_setting=[i % 2 == 0 for i in range(len(predicted))])
        spec = charts.vega_lite_spec(charts.measured_vs_predicted(predicted))
        dots = spec["layer"][2]["encoding"]
        assert dots["shape"] == {"value": "diamond", "condition": {"test": "datum.own_setting", "value": "circle"}}
        assert dots["fillOpacity"] == {"value": 0.0, "condition": {"test": "datum.own_setting", "value": 1.0}}
        drawn = spec["datasets"][spec["layer"][2]["data"]["name"]]  # a frame, as Streamlit sends it
        assert list(drawn["own_setting"]) == list(predicted.dropna(subset=["predicted_speedup"])["own_setting"])

    @pytest.mark.parametrize("lang", ["en", "vi"])
    def test_spec_equals_a_fresh_build_and_stays_as_the_figures_move(self, lang):
        # The Explorer's context moves every prediction: the spec (no domain written in it) must stay the
        # same, so that the browser updates the chart in place, and equal what a build writes.
        specs = []
        for context in (0, 4096, 32768):
            predicted = prediction.predict(PAIRED, SCENARIO, PRESETS, context)
            fresh_spec, fresh_data = without_data(charts.vega_lite_spec(charts.measured_vs_predicted(predicted, lang)))
            spec, data = without_data(charts.measured_vs_predicted_spec(predicted, lang))
            assert spec == fresh_spec and list(data) == list(fresh_data)
            for name in data:
                pd.testing.assert_frame_equal(data[name], fresh_data[name])
            specs.append(spec)
            top = data["data-0"]["x"].max()  # the diagonal's end: both axes' extent
            assert top == pytest.approx(1.1 * max(data["data-1"]["measured_speedup"].max(),
                                                  data["data-1"]["predicted_high"].max(), 1.0))
        assert specs[0] == specs[1] == specs[2] and "domain" not in json.dumps(specs[0])


class TestPublishedSpeedups:
    def test_a_claim_is_drawn_as_a_rule(self):
        published = explorer.load_published(DATA)
        assert len(layers(charts.published_speedups(published, PAIRED))) == 4
        # The user's runs over the studies' triangles (an analyst's pass: a run at concurrency 2 was hidden).
        assert [layer["mark"]["type"] for layer in charts.published_speedups(published, PAIRED).to_dict()["layer"]][:2] \
            == ["point", "circle"]
        rule = layers(charts.published_speedups(published, PAIRED, claim=3.0))[-2]
        assert rule.to_dict()["mark"]["color"] == "#d62728" and list(rule.data["claim"]) == [3.0]

    def test_studies_have_colours_of_their_own_and_the_stored_runs_a_legend_entry(self):
        """An analyst's pass: 13 studies in ten colours, and grey dots the legend did not name."""
        published = explorer.speedup_rows(explorer.load_published(DATA))
        spec = charts.published_speedups(published, PAIRED).to_dict()
        studies, runs = spec["layer"][0]["encoding"]["color"], spec["layer"][1]["encoding"]["color"]
        assert published["study"].nunique() > 10 and studies["scale"] == {"scheme": "tableau20"}
        # Black: tableau20's two greys are studies' (a second pass: a study's grey triangles under the runs' grey).
        assert runs["scale"] == {"domain": ["Stored runs (each over its plain baseline)"], "range": ["black"]}
        assert spec["resolve"] == {"scale": {"color": "independent"}}

    def test_a_point_names_its_metric_by_its_title(self):
        published = explorer.speedup_rows(explorer.load_published(DATA))
        points = layers(charts.published_speedups(published, PAIRED, "vi"))[0]
        assert set(points.data["metric"]) >= {i18n.t("metric.walltime_speedup", "vi"), i18n.t("metric.throughput_speedup", "vi")}
        assert "Mức tăng tốc theo thời gian wall-clock" in set(points.data["metric"])
        assert list(charts.metric_titles(pd.Series(["own_metric"]))) == ["own_metric"]  # a data folder's own

    def test_no_comparable_published_figure_draws_no_study_legend(self):
        """A setting no published study matches: the triangles' layer, and with it a legend titled
        "Study" with no entries, is left out; the user's runs and the rules stay."""
        none = explorer.load_published(DATA).iloc[:0]
        spec = charts.published_speedups(none, PAIRED, claim=3.0).to_dict()
        assert [layer["mark"]["type"] for layer in spec["layer"]] == ["circle", "rule", "text", "rule", "text"]
        assert "Study" not in json.dumps(spec)
        assert len(layers(charts.published_speedups(explorer.load_published(DATA), PAIRED.iloc[:0]))) == 3


class TestTokensPerStep:
    def test_shares_and_the_zero_accept_bar_apart(self):
        chart = charts.tokens_per_step([20, 15, 12, 10, 43])
        assert list(chart.data["share"]) == [0.20, 0.15, 0.12, 0.10, 0.43]
        assert list(chart.data["kind"]) == ["No draft accepted"] + ["Some accepted"] * 4
        assert chart.to_dict()["encoding"]["color"]["scale"]["range"][0] == "#d62728"


class TestGammaMap:
    def test_cells_coloured_by_speedup_with_the_best_gamma_written(self):
        grid = draft_length.gamma_map(SCENARIO, 0.8, 64, 4096, 6)
        spec = charts.gamma_map(grid).to_dict()
        assert [layer["mark"]["type"] for layer in spec["layer"]] == ["rect", "text", "text"]
        assert spec["layer"][0]["encoding"]["color"]["scale"]["domainMid"] == 1.0
        assert spec["layer"][1]["encoding"]["text"]["field"] == "gamma"
        # Past the memory's limit, no colour and no γ: what does not fit says so.
        assert spec["layer"][2]["encoding"]["text"]["field"] == "label"

    def test_the_colour_scale_spans_one_where_every_cell_gains(self):
        # A scale of the data alone left 1 outside it: Vega warned (Chromium's console, every redraw of
        # the Deploy view) and painted the smallest gain red, as a loss.
        grid = draft_length.gamma_map(SCENARIO, 0.8, 64, 4096, 6)
        gains = grid.assign(speedup=np.linspace(1.2, 2.0, len(grid)), fits=True)
        scale = charts.gamma_map(gains).to_dict()["layer"][0]["encoding"]["color"]["scale"]
        assert scale["domain"] == [1.0, 2.0] and scale["domainMid"] == 1.0
        losses = grid.assign(speedup=np.linspace(0.5, 0.9, len(grid)), fits=True)
        assert charts.gamma_map(losses).to_dict()["layer"][0]["encoding"]["color"]["scale"]["domain"] == [0.5, 1.0]
