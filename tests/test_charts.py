"""Tests for specviz.charts: each builder returns a valid Altair spec with the data it was given."""

import altair as alt

from specviz import calculator, charts, roofline, settings

DATA = settings.get("SPECVIZ_DATA_DIR")
SCENARIO = calculator.Scenario(roofline.load_gpus(DATA)["H100-SXM"], roofline.load_models(DATA)["Llama-3.1-70B"])


def layers(chart) -> list:
    return chart.layer if isinstance(chart, alt.LayerChart) else [chart]


class TestSpeedupVsBatch:
    def test_lines_rule_and_crossover_marks(self):
        curves, crossover = calculator.batch_sweep(SCENARIO, [0.6, 0.9], 4, 0, 1024)
        chart = charts.speedup_vs_batch(curves, crossover)
        spec = chart.to_dict()
        assert len(spec["layer"]) == 3
        assert spec["layer"][0]["encoding"]["x"]["scale"]["type"] == "log"
        assert len(layers(chart)[2].data) == 2  # one diamond per α that crosses


class TestSpeedupHeatmap:
    def test_diverges_at_one(self):
        grid = calculator.heatmap_grid(SCENARIO, 4, 0, 256)
        scale = charts.speedup_heatmap(grid).to_dict()["encoding"]["color"]["scale"]
        assert scale["domainMid"] == 1.0 and scale["scheme"] == "redblue"


class TestSpeedupVsGamma:
    def test_best_is_flagged(self):
        sweep, best = calculator.gamma_sweep(SCENARIO, 0.8, 1, 0, 8)
        chart = charts.speedup_vs_gamma(sweep, best)
        assert layers(chart)[0].data["best"].sum() == 1
        chart.to_dict()


class TestRooflineChart:
    def test_two_passes_and_translated_labels(self):
        roof, passes = calculator.roofline_points(SCENARIO, 4, 64, 0)
        chart = charts.roofline_chart(roof, passes)
        assert set(layers(chart)[1].data["label"]) == {"Plain decode", "Verify (γ+1 positions)"}
        assert chart.to_dict()["layer"][0]["encoding"]["y"]["scale"]["type"] == "log"
