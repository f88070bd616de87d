"""The figures README.md and docs/ quote, computed again by the code that shows them: a page that
quotes a figure the code no longer gives fails here. A newcomer's read found thirteen stale ones,
among them the Latency view's tail quoted as 0.64 and 2.15 where the view gave 0.67 and 2.26 and
the command line a third pair (it had timed the steps at another context)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from specviz import calculator, cli, scenario, settings, workload
from specviz.advice import claims, evidence
from specviz.cli.claim import claim_row
from specviz.cli.model import calc_row
from specviz.i18n import message
from specviz.model import spec
from specviz.results import explorer

ROOT = Path(__file__).resolve().parent.parent
PRESETS = scenario.load_presets(settings.get("SPECVIZ_DATA_DIR"))


def doc(name: str) -> str:
    """A page's text with its lines joined: a quoted figure may wrap."""
    return " ".join((ROOT / name).read_text(encoding="utf-8").split())


def speedup(link: str) -> float:
    return calc_row(link, PRESETS)["speedup"]


def test_the_default_scenario_s_headline():
    row = calc_row("", PRESETS)
    said = (f"{row['speedup']:.2f}x at α 0.8, γ 4, batch 64, band {row['low']:.2f}–{row['high']:.2f}x, where the "
            f"ideal roofline says {row['ideal_speedup']:.2f}x")
    assert said == "1.45x at α 0.8, γ 4, batch 64, band 1.20–1.90x, where the ideal roofline says 2.26x"
    assert said in doc("README.md")


def test_the_latency_view_s_tail(capsys):
    """At the Latency view's own steps and requests (`specviz simulate` is that view)."""
    assert cli.main(["simulate", "--alpha", "0.8", "--gamma", "4", "--steps", "200000", "--requests", "2000"]) == 0
    row = json.loads(capsys.readouterr().out)
    gaps = row["latency_ms"]
    mean, p99 = (gaps[name]["spec"] / row["plain_step_ms"] for name in ("itl_mean", "itl_p99"))
    assert round(row["zero_accept_share"], 2) == 0.2
    for name, words in (("README.md", "the mean gap falls to"), ("docs/guide.md", "the mean gap between tokens falls to")):
        assert f"{words} {mean:.2f} of a plain step's while the p99 gap is {p99:.2f} times it" in doc(name)


def test_the_steady_load_s_speedups():
    coding = [speedup(f"prefill=on&input_tokens=100&output_tokens=500&batch={b}") for b in (1, 16, 64)]
    coding_decode = [speedup(f"context=350&batch={b}") for b in (1, 16, 64)]
    extraction = [speedup(f"prefill=on&input_tokens=2000&output_tokens=100&batch={b}") for b in (1, 16, 64)]
    extraction_decode = [speedup(f"context=2050&batch={b}") for b in (1, 16, 64)]
    at_256 = calc_row("prefill=on&input_tokens=2000&output_tokens=100&batch=256", PRESETS)
    listed = lambda values: ", ".join(f"{v:.2f}x" for v in values)
    said = (f"gives {listed(coding)} for the coding assistant (100 in, 500 out; {listed(coding_decode)} decoding only "
            f"at its mean context of 350) and {listed(extraction)} for JSON extraction (2,000 in, 100 out; "
            f"{listed(extraction_decode)} decoding only at 2,050), where batch 256 does not fit "
            f"({at_256['max_batch']} sequences do with the draft)")
    assert not at_256["fits"] and said in doc("docs/guide.md")


def test_the_break_even_acceptance_under_a_load():
    loaded, _ = scenario.from_query_params({"prefill": "on", "input_tokens": "2000", "output_tokens": "100"}, PRESETS)
    under_load = calculator.breakeven_alpha(loaded, 4, 16, loaded.context)
    steps = loaded.step_times(batch=16, gamma=4, context=loaded.context, alpha=0.8)
    one_alpha = float(spec.breakeven_alpha(4, float(steps["verify_cost"]), float(steps["draft_cost"])))
    assert f"({under_load:.3f} there, against {one_alpha:.2f} from one α's costs" in doc("docs/guide.md")


def test_a_request_s_whole_time():
    default, _ = scenario.from_query_params({}, PRESETS)
    summary = workload.end_to_end(default, 0.8, 4, 1, 16000, 150)
    low, high = calculator.band_shown(*calculator.request_speedup_band(default, 0.8, 4, 1, 16000, 150))
    assert (f"keeps {float(summary['e2e_speedup']):.2f}x of decode's {float(summary['decode_speedup']):.2f}x, "
            f"band {low:.2f}–{high:.2f}x") in doc("docs/guide.md")
    loaded, _ = scenario.from_query_params({"prefill": "on", "input_tokens": "2000", "output_tokens": "100"}, PRESETS)
    first = workload.end_to_end(loaded, 0.8, 4, 64, 2000, 100)
    room = workload.prompt_room(loaded, 0.8, 4, 64)
    said = (f"{float(first['ttft_plain_s']) * 1e3:.0f} ms plain and {float(first['ttft_spec_s']) * 1e3:.0f} ms at α 0.8, γ 4 "
            f"(its steps are longer, and take 3.36 times the prompts into {float(room['room_spec']):,.0f} tokens of room "
            f"instead of {float(room['room_plain']):,.0f})")
    assert said in doc("docs/guide.md")


def test_the_claims_worked_example():
    row = claim_row("up to 3x on decode-heavy work", "gpu=Trainium2&tp=1&input_tokens=100&output_tokens=500", PRESETS)
    needed = re.match(r"Acceptance α of at least ([0-9.]+) at γ (\d+) and batch 1 \(vLLM's acceptance rate ([0-9.]+),",
                      row["conditions"][0])
    alpha, gamma, rate = needed.groups()
    assert row["verdict"] == "conditional" and row["holds_at_batches"] == [1, 67]
    assert f"comes out conditional: α ≥ {alpha} at γ {gamma}, at batches up to 67" in doc("README.md")
    guide = doc("docs/guide.md")
    assert (f"comes out **conditional**: α ≥ {alpha} at γ {gamma} (a vLLM acceptance rate of only {rate}, "
            "under the 40 % the same article calls unsuitable), at batches up to 67") in guide
    chosen, _ = scenario.from_query_params({"gpu": "Trainium2", "tp": "1", "input_tokens": "100", "output_tokens": "500"},
                                           PRESETS)
    checked = claims.check_claim(chosen, claims.Claim(3.0, workload=(100, 500)), settings.get("SPECVIZ_GAMMA_MAX"),
                                 settings.get("SPECVIZ_BATCH_MAX"))
    line = next(message(r, "en") for r in checked.reasons if r.key.startswith("claims.reason.workload"))
    on_workload = re.search(r"at α ([0-9.]+), γ \d+ and batch 1, decode gains ([0-9.]+)× .* a whole request ([0-9.]+)×", line)
    at, decode, whole = on_workload.groups()
    assert f"at α {at} a whole request gains {whole}× of decode's {decode}×" in guide
    published = explorer.speedup_rows(explorer.load_published(settings.get("SPECVIZ_DATA_DIR")))
    assert (f"of all {len(published)}, none reaches 2.5x at batch 64 or more and "
            f"{len(evidence.published_reaching(published, 2.5))} do at any batch") in guide
    assert not len(evidence.published_reaching(published, 2.5, 64))
    assert f"and {len(evidence.published_reaching(published, 3.0))} of all {len(published)} reach 3×" in guide


def test_a_hybrid_s_sequences_at_its_schedule_s_longest_draft(capsys):
    assert cli.main(["serve", "gpu=H200&target=Qwen3.5-397B-A17B&tp=8"]) == 0
    said = re.search(r"sized at the (\d+) draft tokens .* the memory holds (\d+) sequences there, and (\d+) at the page's γ 4",
                     capsys.readouterr().out)
    longest, there, at_4 = said.groups()
    assert f"{at_4} sequences at γ 4, {there} at the {longest} its schedule drafts" in doc("docs/guide.md")


@pytest.mark.parametrize("name", ["docs/model.md"])
def test_the_published_results_counted(name):
    published = explorer.load_published(settings.get("SPECVIZ_DATA_DIR"))
    earlier = published[published["generation"] != "2025-2026"]
    assert f"holds {len(published)} published measurements, a source per row; the {len(earlier)} before 2025" in doc(name)


def test_the_sql_console_s_attacks_counted():
    from test_sandbox import ATTACKS
    assert f"runs {len(ATTACKS)} hostile statements" in doc("docs/security.md")


def test_the_calculators_published_measurement_of_this_setup():
    """The guide's gpt-oss-20b + EAGLE-3 example of a measurement set beside the model."""
    chosen, _ = scenario.from_query_params({"gpu": "B200", "target": "gpt-oss-20b", "draft": "eagle3", "tp": "1",
                                            "gamma": "3", "batch": "8"}, PRESETS)
    published = explorer.speedup_rows(explorer.load_published(settings.get("SPECVIZ_DATA_DIR")))
    rows = evidence.measured_here(evidence.comparable_published(published, chosen, PRESETS), chosen, 8, 3)
    said = lambda column: ", ".join(f"{v:.2f}×" for v in rows[column].iloc[:-1]) + f" and {rows[column].iloc[-1]:.2f}×"
    assert said("value") == "1.72×, 1.69× and 1.67×"
    assert " ".join(doc("docs/guide.md").split()).count(
        f"the vLLM post's {said('value')} (HumanEval, SPEED-Bench, MT-Bench) against the preset's "
        f"{said('model_speedup')} at their lengths") == 1


def test_equal_memory_with_its_band():
    full = calculator.equal_memory(scenario.from_query_params({"context": "1024"}, PRESETS)[0])
    low, high = calculator.band_shown(full["low"], full["high"])
    said = (f"{full['tokens_per_s']:,.0f} tokens/s against {full['tokens_per_s_plain']:,.0f}, {full['ratio']:.2f}x "
            f"at full load (band {low:.2f}–{high:.2f}x: whether it loses is not sure)")
    assert said in doc("docs/model.md")
