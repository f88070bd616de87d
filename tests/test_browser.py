"""The app in real Chromium: load, move a slider, type into the sidebar, upload a config.json.

Screenshots land in tests/artifacts/ (ignored by git) for a person to look at.
"""

import json
import re
import urllib.parse
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from conftest import ARTIFACTS, PRESETS, ROOT, wait_for_calculator as wait_for_app
from specviz import i18n
from specviz.cli.model import calc_row

pytestmark = pytest.mark.browser

TIMEOUT = 30_000


def metric(page: Page, label: str):
    """The value element of the metric whose label is exactly ``label``."""
    box = page.locator('[data-testid="stMetric"]').filter(has=page.get_by_text(label, exact=True))
    return box.locator('[data-testid="stMetricValue"]')


def view(page: Page, name: str):
    """The segment that opens a page's view ``name``, in its row of views (English)."""
    return page.get_by_role("radiogroup", name="Views").get_by_role("radio", name=name, exact=True)


def metric_value(page: Page, label: str) -> str:
    return metric(page, label).inner_text(timeout=TIMEOUT)


class TestCalculatorInChromium:
    def test_the_slider_moves_the_headline_and_after_a_change_the_derived_fields_follow(self, page: Page,
                                                                                       app_url: str):
        """α's slider moves the headline and the link. Then a new GPU, precision or target takes its own
        default GPU count and draft: the sidebar, the link and the headline agree, and the headline is
        the command line's for the page's link (at the α the slider left)."""
        wait_for_app(page, app_url)
        assert metric_value(page, "Tokens per step E") == "3.36"
        before = metric_value(page, "Speedup")
        thumb = page.locator('[data-testid="stSlider"]').filter(has_text="Acceptance").get_by_role("slider")
        thumb.focus()
        for _ in range(4):  # 0.80 → 0.40 in steps of 0.1 (a slider's PageDown: a tenth of its range)
            thumb.press("PageDown")
        expect(metric(page, "Tokens per step E")).to_have_text("1.65", timeout=TIMEOUT)
        assert metric_value(page, "Speedup") != before
        expect(page).to_have_url(re.compile(r"alpha=0\.4"), timeout=TIMEOUT)
        page.screenshot(path=ARTIFACTS / "calculator.png", full_page=True)

        def agrees(tp: str, draft: str | None = None) -> None:
            expect(page.get_by_role("combobox", name="GPUs (TP)")).to_have_value(tp, timeout=TIMEOUT)
            expect(page).to_have_url(re.compile(rf"tp={tp}(&|$)"), timeout=TIMEOUT)
            if draft:
                expect(page).to_have_url(re.compile(rf"draft={draft}(&|$)"), timeout=TIMEOUT)
            row = calc_row("?" + page.url.split("?", 1)[1], PRESETS)
            assert str(row["tp"]) == tp
            expect(metric(page, "Speedup")).to_have_text(f"{row['speedup']:.2f}×", timeout=TIMEOUT)

        agrees("2", "Qwen3-0.6B")
        page.get_by_role("combobox", name="GPU", exact=True).click()
        page.get_by_role("option", name="NVIDIA H200 SXM").click()
        agrees("1")  # the pair fits one H200
        page.get_by_role("combobox", name="GPU", exact=True).click()
        page.get_by_role("option", name="NVIDIA H100 SXM").click()
        agrees("2")
        page.get_by_role("combobox", name="Precision").click()
        page.get_by_role("option", name="FP8 (weights, KV)", exact=True).click()
        agrees("1")  # in FP8 it fits one H100
        page.get_by_role("combobox", name="Target model").click()
        page.keyboard.type("DeepSeek-V3 / R1")
        page.get_by_role("option", name="MoE · DeepSeek-V3 / R1 (MLA, 256 experts)").click()
        agrees("8", "mtp")  # its own draft, not the old one the new list still holds
        # A mixture of experts end to end: 2 groups of 8 with expert parallelism, and its expert tax said.
        expect(page).to_have_url(re.compile(r"dp=2(&|$)"), timeout=TIMEOUT)
        expect(page).to_have_url(re.compile(r"ep=on(&|$)"), timeout=TIMEOUT)
        expect(page.get_by_text(re.compile(r"Expert tax: each token is routed to 8 of 256 experts"))).to_be_visible(
            timeout=TIMEOUT)
        # A steady load: a preset's tokens and typed ones travel in the URL, and a reload keeps the figure.
        page.get_by_text("also takes arriving prompts (a steady load)").click()
        page.get_by_role("combobox", name="Workload").click()
        page.get_by_role("option", name="JSON extraction").click()
        expect(page).to_have_url(re.compile(r"input_tokens=2000(&|$)"), timeout=TIMEOUT)
        typed = page.get_by_role("spinbutton", name="Output tokens")
        typed.fill("300")
        typed.press("Enter")
        expect(page).to_have_url(re.compile(r"output_tokens=300(&|$)"), timeout=TIMEOUT)
        expect(page).to_have_url(re.compile(r"input_tokens=2000(&|$)"), timeout=TIMEOUT)
        agrees("8", "mtp")
        shown = metric_value(page, "Speedup")
        page.reload()
        expect(metric(page, "Speedup")).to_have_text(shown, timeout=TIMEOUT)

    def test_shared_link_restores_the_scenario(self, page: Page, app_url: str):
        wait_for_app(page, f"{app_url}/?alpha=0.7&batch=1&mode=ratios&verify_cost=2.0")
        expect(metric(page, "Speedup")).to_have_text("1.26×", timeout=TIMEOUT)
        page.get_by_text("Link to this scenario").click()
        link = page.locator('[data-testid="stCode"]').first.inner_text(timeout=TIMEOUT)
        assert link.startswith(f"{app_url}/?") and "verify_cost=2" in link and "mode=ratios" in link

    def test_sidebar_figures_for_a_cpu_preset(self, page: Page, app_url: str):
        page.goto(f"{app_url}/?gpu=Intel-12th-gen-desktop&target=Qwen2.5-1.5B&draft=Qwen2.5-0.5B")
        expect(page.get_by_text("not complete yet")).to_be_visible(timeout=TIMEOUT)
        for label, value in (("Peak dense BF16 TFLOPS", "1.5"), ("Memory bandwidth, TB/s", "0.0768")):
            field = page.get_by_role("spinbutton", name=label)
            field.fill(value)
            field.press("Enter")
        expect(page.get_by_text("even the plain decode pass is compute-bound")).to_be_visible(timeout=TIMEOUT)
        expect(page).to_have_url(re.compile(r"tflops=1\.5"), timeout=TIMEOUT)
        # Another device: the typed figures must not carry over to it.
        page.get_by_role("combobox", name="GPU", exact=True).click()
        page.get_by_role("option", name="NVIDIA H100 SXM").click()
        expect(page.get_by_role("spinbutton", name="Peak dense BF16 TFLOPS")).to_have_value("", timeout=TIMEOUT)
        expect(page).not_to_have_url(re.compile(r"tflops="), timeout=TIMEOUT)

    def test_upload_of_a_bad_file_says_what_is_wrong_and_a_config_json_is_read(self, page: Page, app_url: str,
                                                                              tmp_path):
        # The ideal roofline (every share of peak, no engine cost) at context 0: the hand computation below.
        page.goto(f"{app_url}/?target=custom&batch=1&context=0&mfu=1&mbu=1&overlap=1&step_ms=0&token_us=0&draft_pass_us=0"
                  "&speculation_ms=0&allreduce_us=0")
        expect(page.get_by_text("is empty").first).to_be_visible(timeout=TIMEOUT)
        upload = page.locator('[data-testid="stSidebar"] input[type="file"]')
        bad = tmp_path / "config.json"
        bad.write_bytes(b"\x89PNG\r\n\x1a\n not a config")
        upload.set_input_files(str(bad))
        expect(page.get_by_text("is not a JSON config.json").first).to_be_visible(timeout=TIMEOUT)
        expect(page.get_by_text("Traceback")).to_have_count(0)
        upload.set_input_files(str(ROOT / "data/model_configs/Mixtral-8x7B.json"))
        # Its size now known, the GPUs start from the fewest H100s that hold its 93 GB (they had stayed at
        # the 1 set before the file was read, and a 671B model's config was said not to fit on 1 B200).
        expect(page.get_by_role("combobox", name="GPUs (TP)")).to_have_value("2", timeout=TIMEOUT)
        # On the two devices that hold it (one would not: no speculative figure is shown there), with no
        # all-reduce latency, MoE, memory-bound: one token reads 1.475B shared weights + 2 of 8 experts
        # (11.27B); five positions sharing 38 % of their experts with the one before (the default routing
        # overlap) route as 1 + 4 × 0.62 = 3.48 tokens: 8·(1 − 0.75^3.48) = 5.06 experts (28.52B),
        # 30.00 / 12.75 = 2.35, each pass split over the two alike.
        expect(metric(page, "Verify step cost")).to_have_text("2.35×", timeout=TIMEOUT)
        expect(page.get_by_text("is not a JSON config.json")).to_have_count(0)
        page.screenshot(path=ARTIFACTS / "calculator_uploaded_config.png", full_page=True)


SAMPLES = ROOT.parent / "shared" / "samples"


class TestNarrowWindow:
    def test_at_800_px_every_tab_is_in_view(self, browser, app_url: str):
        """At 800 px Streamlit keeps its 300 px sidebar open (it collapses it at 768 px and below, a
        breakpoint no public setting moves): the calculator's and the explorer's seven views must each
        be seen whole in the 468 px left to them, in English and in Vietnamese (the row wraps), none
        cut nor out of sight."""
        context = browser.new_context(viewport={"width": 800, "height": 900})
        page = context.new_page()
        try:
            for lang in ("en", "vi"):
                for path in ("", "results"):
                    page.goto(f"{app_url}/{path}?lang={lang}")
                    views = page.get_by_test_id("stButtonGroup").first.get_by_role("radio")
                    expect(views).to_have_count(7, timeout=TIMEOUT)
                    main = page.get_by_test_id("stMain").bounding_box()
                    for segment in views.all():
                        expect(segment).to_be_visible(timeout=TIMEOUT)
                        box = segment.bounding_box()
                        assert main["x"] <= box["x"] and box["x"] + box["width"] <= main["x"] + main["width"], (
                            lang, path, segment.inner_text(), box, main)
                        width, room = segment.evaluate("e => [e.scrollWidth, e.clientWidth]")
                        assert width <= room, (lang, path, segment.inner_text(), width, room)
        finally:
            context.close()

    def test_at_800_px_the_serve_command_keeps_an_option_a_line(self, browser, app_url: str):
        """In the 468 px left at 800 px the command's long lines wrapped: vLLM's --speculative-config
        JSON ran on at the block's left edge, SGLang's "\\" and TensorRT-LLM's YAML file stood on lines
        of their own, each read as a command of its own. Each line of the command must stay one line
        on screen, the block scrolling sideways to its end, and the page not at all."""
        context = browser.new_context(viewport={"width": 800, "height": 900})
        page = context.new_page()
        try:
            page.goto(f"{app_url}/?view=serve")
            engines = page.locator('[data-testid="stRadio"]').filter(has_text="SGLang")
            for engine, words in (("vLLM", "vllm serve"), ("SGLang", "sglang.launch_server"),
                                  ("TensorRT-LLM", "trtllm-serve")):
                engines.get_by_text(engine, exact=True).click()
                command = page.locator('[data-testid="stCode"]').filter(has_text=words)
                expect(command).to_contain_text(" \\\n    --", timeout=TIMEOUT)
                # The lines the text has against those it takes on screen (its height over its line height).
                lines, shown, wide, room, page_wide = command.evaluate("""block => {
                    const code = block.querySelector('code'), pre = block.querySelector('pre');
                    const range = document.createRange();
                    range.selectNodeContents(code);
                    const height = range.getBoundingClientRect().height;
                    return [code.innerText.trimEnd().split('\\n').length,
                            Math.round(height / parseFloat(getComputedStyle(code).lineHeight)),
                            pre.scrollWidth, pre.clientWidth, document.documentElement.scrollWidth];
                }""")
                assert shown == lines, (engine, lines, shown)
                assert page_wide <= 800, (engine, page_wide)
                if engine == "vLLM":  # its JSON is longer than the block: the block scrolls to it
                    assert wide > room and command.locator("pre").evaluate(
                        "pre => getComputedStyle(pre).overflowX") in ("auto", "scroll"), (wide, room)
        finally:
            context.close()


def _bidi_file(folder: Path) -> Path:
    """A result file whose name holds a right-to-left override: it reads as "bidi_vsc.xls" where obeyed."""
    path = folder / "bidi_\u202eslx.csv"
    path.write_text("concurrency,output_throughput\n3,333\n")
    return path


class TestExplorerInChromium:
    def test_a_fresh_server_routes_its_first_request_without_a_notice(self, page: Page, tmp_path):
        # Streamlit's older pages-folder mode holds until the first st.navigation of the process: it
        # runs a page file alone where the path is the file's name, and says "Page not found" over the
        # page where no file has that name. Each page's file is named by its path and the guard
        # (pages/parts/shared.py, require_router) hands the run to the router. Each path is the first
        # request of a server of its own (both started at once): a page of the menu, and the calculator's
        # hidden path; the other pages take the first one's way (a third server cost 5-9 s of the suite).
        from conftest import serve_apps
        paths = [("results", "Benchmark results explorer"), ("what-if", "Speculative decoding calculator")]
        with serve_apps(*(tmp_path / f"fresh-{path}.duckdb" for path, _ in paths)) as urls:
            for url, (path, title) in zip(urls, paths):
                page.goto(f"{url}/{path}")
                expect(page.get_by_text(title)).to_be_visible(timeout=TIMEOUT)
                sidebar = page.locator('[data-testid="stSidebar"]')
                expect(sidebar.get_by_text("Scenario")).to_be_visible(timeout=TIMEOUT)  # app.py's sidebar ran
                expect(sidebar.get_by_text("shared", exact=True)).to_have_count(0)  # no pages/ folder listing
                expect(page.get_by_text("Page not found")).to_have_count(0)
                assert page.url.startswith(f"{url}/{path}"), (path, page.url)

    def test_an_unknown_path_says_so(self, page: Page, app_url: str):
        page.goto(f"{app_url}/no-such-page")
        expect(page.get_by_text("Page not found")).to_be_visible(timeout=TIMEOUT)
        expect(page.get_by_text("does not seem to exist")).to_be_visible(timeout=TIMEOUT)

    def test_upload_import_reimport_a_bad_file_and_markdown_shown_as_text(self, page: Page, app_url: str, tmp_path):
        """One explorer page: a file imported, the same content under another name recognised, a
        truncated file reported, a file whose column names, labels and warnings hold links and
        images shown as text (nothing is fetched or linked), and a whole run folder uploaded."""
        open_results(page, app_url)
        upload = page.locator('[data-testid="stFileUploader"] input[type="file"]:not([webkitdirectory])')

        def imports(path) -> None:
            upload.set_input_files(str(path))
            expect(page.locator('[data-testid="stFileChip"]')).to_have_count(1, timeout=TIMEOUT)
            page.get_by_role("button", name="Import", exact=True).click()

        imports(SAMPLES / "vllm_bench_nerdalert.jsonl")
        expect(page.get_by_text("vllm-bench, 9 runs and 0 per-request rows imported")).to_be_visible(timeout=TIMEOUT)
        page.screenshot(path=ARTIFACTS / "explorer_imported.png", full_page=True)
        # The same content under another name: recognised by its hash.
        renamed = tmp_path / "renamed_results.jsonl"
        renamed.write_bytes((SAMPLES / "vllm_bench_nerdalert.jsonl").read_bytes())
        imports(renamed)
        expect(page.get_by_text("renamed_results.jsonl: the same content is already stored, imported as "
                                "vllm_bench_nerdalert.jsonl")).to_be_visible(timeout=TIMEOUT)

        bad = tmp_path / "truncated.json"
        bad.write_text('{"request_throughput": 3.0, "mean_ttft_ms"')
        imports(bad)
        expect(page.get_by_text(re.compile("the JSON ends mid-record at line 1"))).to_be_visible(timeout=TIMEOUT)
        expect(page.get_by_text("Traceback")).to_have_count(0)

        payload = tmp_path / "payload[x](y).csv"
        payload.write_text("label,![img](http://127.0.0.1:9/i.png),[click](http://127.0.0.1:9/),p50_itl_ms\n"
                           "**bold** www.example.com,1,2,3.5\n")
        imports(payload)
        expect(page.get_by_text("columns kept in extra").first).to_be_visible(timeout=TIMEOUT)
        expect(page.get_by_text("![img](http:").first).to_be_visible(timeout=TIMEOUT)  # shown, as text
        page.screenshot(path=ARTIFACTS / "explorer_markdown_payload.png", full_page=True)
        assert page.locator('img[src*="127.0.0.1:9"]').count() == 0
        assert page.locator('a[href*="127.0.0.1:9"], a[href*="example.com"]').count() == 0
        assert page.locator("strong", has_text="bold").count() == 0
        # A URL shown as text copies as it is: in a code span, with no invisible character in it.
        expect(page.locator("code", has_text="click](http://127.0.0.1:9/").first).to_be_visible(timeout=TIMEOUT)
        expect(page.get_by_text("Traceback")).to_have_count(0)
        # The runs table's download writes an invisible character as the table shows it, as the CLI's
        # CSV does (a spreadsheet obeys a bidirectional override): "bidi_\u202eslx.csv", not "bidi_vsc.xls".
        imports(_bidi_file(tmp_path))
        expect(page.get_by_text("bidi_\\u202eslx.csv").first).to_be_visible(timeout=TIMEOUT)
        settled(page)  # the import's message comes before the download button of the run is drawn
        with page.expect_download(timeout=TIMEOUT) as download:
            page.locator('[data-testid="stDownloadButton"] button').first.click()
        written = Path(download.value.path()).read_text(encoding="utf-8")
        assert "bidi_\\u202eslx.csv" in written and "\u202e" not in written

        # A whole AIPerf sweep folder: the browser sends each file's path in it, and the folder is read as
        # ingest reads one: each cell once, from its profile_export_aiperf.json, the rest said.
        sweep = tmp_path / "sweep"
        fixtures = ROOT / "tests" / "fixtures"
        real = json.loads((SAMPLES / "2026" / "aiperf_0.10" / "profile_export_aiperf.json").read_bytes())
        for cell in ("concurrency_10__isl_512", "concurrency_20__isl_512"):
            (sweep / cell).mkdir(parents=True)
            (sweep / cell / "profile_export_aiperf.json").write_text(json.dumps({**real, "benchmark_id": cell}))
            (sweep / cell / "profile_export.jsonl").write_bytes((fixtures / "aiperf_profile_export.jsonl").read_bytes())
        (sweep / "sweep_aggregate").mkdir()
        (sweep / "sweep_aggregate" / "profile_export_aiperf_sweep.json").write_bytes(
            (fixtures / "aiperf_profile_export_aiperf_sweep.json").read_bytes())
        page.locator('[data-testid="stFileUploader"] input[webkitdirectory]').set_input_files(str(sweep))
        expect(page.locator('[data-testid="stFileChip"]')).to_have_count(5, timeout=TIMEOUT)
        page.get_by_role("button", name="Import", exact=True).click()  # enabled once the files are up
        for cell in ("concurrency_10__isl_512", "concurrency_20__isl_512"):
            expect(page.get_by_text(f"sweep/{cell}/profile_export_aiperf.json: aiperf, 1 run")).to_be_visible(
                timeout=TIMEOUT)
            expect(page.get_by_text(f"sweep/{cell}/profile_export.jsonl: not read: its name makes it the same AIPerf run as "
                                    f"sweep/{cell}/profile_export_aiperf.json")).to_be_visible(timeout=TIMEOUT)
        expect(page.get_by_text("sweep/sweep_aggregate/profile_export_aiperf_sweep.json: not read: an AIPerf sweep's "
                                "summary")).to_be_visible(timeout=TIMEOUT)
        expect(page.get_by_text("Traceback")).to_have_count(0)

    def test_the_filters_stay_open_while_chosen_and_apply_while_closed(self, page: Page, app_url: str):
        """The filter lists are built only while their expander is open: a choice keeps it open (a
        title that changed with it closed it), applies once it is closed, and is there when reopened."""
        open_results(page, app_url)
        filters = page.locator('[data-testid="stExpander"]').filter(has_text="Filters").locator("summary")
        expect(filters).to_be_visible(timeout=TIMEOUT)
        # The lists offer the values of the runs shown: the examples', whose methods are known, where
        # runs that other tests imported into this server's store (with none, or other) would hide them.
        show_examples(page)
        filters.click()
        method = page.locator('[data-testid="stMultiSelect"]').filter(has_text="Method")
        method.locator("input").click()
        # Past one value the list starts with Streamlit's own "Select all"; "(not set)" comes next.
        option = page.get_by_role("option").filter(has_not_text="Select all").last
        chosen = option.inner_text()
        option.click()
        page.keyboard.press("Escape")
        expect(method.get_by_text(chosen, exact=True)).to_be_visible(timeout=TIMEOUT)
        expect(page.locator('[data-testid="stMultiSelect"]')).to_have_count(8)  # still open
        filters.click()
        expect(page.get_by_text(f"Filtered by Method: {chosen}")).to_be_visible(timeout=TIMEOUT)
        expect(page.locator('[data-testid="stMultiSelect"]')).to_have_count(0)
        filters.click()
        expect(method.get_by_text(chosen, exact=True)).to_be_visible(timeout=TIMEOUT)
        expect(page.get_by_text("Traceback")).to_have_count(0)

    def test_the_load_views_choices_are_kept_across_views(self, page: Page, app_url: str):
        """Lines by and the load axis had gone back to Series and Concurrency after a visit to another
        view (a control drawn again is a new one in the browser unless it is kept for the session)."""
        open_results(page, app_url)
        view(page, "By load").click()
        lines = page.get_by_role("combobox", name="Lines by")
        lines.click()
        page.get_by_role("option", name="Target model", exact=True).click()
        expect(lines).to_have_value("Target model", timeout=TIMEOUT)
        # Each choice's run drawn before the next: a choice made while another's run is under way was
        # lost once more under load (Streamlit's persist_state, a session's copy of a widget's value).
        settled(page)
        rate = page.get_by_role("radiogroup", name="Load axis").get_by_role("radio", name="Request rate (req/s)")
        rate.click()
        expect(rate).to_be_checked(timeout=TIMEOUT)
        # The choice is kept once the run it started has drawn the control: a view chosen before then
        # stops that run, and the choice with it (it failed so once under load).
        settled(page)
        view(page, "Runs").click()
        expect(page.get_by_role("combobox", name="Lines by")).to_have_count(0, timeout=TIMEOUT)
        view(page, "By load").click()
        expect(page.get_by_role("combobox", name="Lines by")).to_have_value("Target model", timeout=TIMEOUT)
        expect(page.get_by_role("radiogroup", name="Load axis").get_by_role(
            "radio", name="Request rate (req/s)")).to_be_checked(timeout=TIMEOUT)

    def test_calibration_reaches_the_calculator(self, page: Page, app_url: str):
        page.goto(f"{app_url}/results?target=Llama-3.1-8B")
        view(page, "Predicted").click()
        # Runs that other tests imported into this server's store hide the examples: ask for them.
        examples = page.get_by_text("Show the shipped examples instead of your runs")
        calibrate = page.get_by_role("button", name="Calibrate the step model")
        expect(examples.or_(calibrate).first).to_be_visible(timeout=TIMEOUT)
        show_examples(page)
        page.get_by_role("button", name="Calibrate the step model").click()
        # The fit is the heaviest step of any test: 15 s alone, and past 30 s beside a parallel worker on
        # two cores (a clean run of the whole suite saw it): a wait, not a measure of its speed.
        expect(page.get_by_text("fitted on 24 runs")).to_be_visible(timeout=3 * TIMEOUT)
        page.get_by_role("button", name="Open the calculator at these costs").click()
        expect(page.get_by_text("Speculative decoding calculator")).to_be_visible(timeout=TIMEOUT)
        expect(page).to_have_url(re.compile(r"\?(.+&)?mbu=[0-9.]+"), timeout=TIMEOUT)
        expect(page).to_have_url(re.compile(r"target=Llama-3\.1-8B"), timeout=TIMEOUT)
        expect(page.get_by_text("Knobs differ from the vLLM V1 (CUDA or HIP graphs) preset")).to_be_visible(timeout=TIMEOUT)
        page.screenshot(path=ARTIFACTS / "calculator_from_a_fit.png", full_page=True)


def settled(page: Page) -> None:
    """Wait until the run a change started has finished: Streamlit shows its status widget while one
    goes on, from a moment after the change (a run too short to show it is over by then)."""
    running = page.get_by_test_id("stStatusWidget")
    try:
        running.wait_for(state="visible", timeout=2_000)
    except PlaywrightTimeout:
        pass
    expect(running).to_be_hidden(timeout=TIMEOUT)


def run_sql(page: Page, sql: str) -> None:
    page.get_by_role("textbox", name=re.compile("^SQL")).fill(sql)
    page.get_by_role("button", name="Run", exact=True).click()


def open_results(page: Page, url: str) -> None:
    """The explorer (app_url's server has had its first request: see conftest.app_url)."""
    page.goto(f"{url}/results")
    expect(page.get_by_text("Benchmark results explorer")).to_be_visible(timeout=TIMEOUT)


def show_examples(page: Page) -> None:
    """The shipped examples in place of the runs that other tests imported into the server's store,
    where there are such runs (the toggle is drawn only then; a page's views could be drawn before
    it was, so it is waited for)."""
    examples = page.get_by_text("Show the shipped examples instead of your runs")
    try:
        examples.wait_for(state="visible", timeout=10_000)
    except PlaywrightTimeout:  # no runs of one's own: the examples are shown already
        return
    examples.click()
    expect(page.get_by_text(re.compile(r"^Showing the 48 shipped EXAMPLE runs"))).to_be_visible(timeout=TIMEOUT)


def rows_shown(page: Page) -> str:
    caption = page.get_by_text(re.compile(r"^[\d,]+ rows in ")).last
    expect(caption).to_be_visible(timeout=TIMEOUT)
    return caption.inner_text().split(" rows")[0]


class TestHardeningInChromium:
    def test_what_one_session_runs_in_the_console_never_changes_what_another_sees(self, browser, app_url: str):
        sessions = [browser.new_context(viewport={"width": 1400, "height": 1600}) for _ in range(2)]
        try:
            one, two = (context.new_page() for context in sessions)
            for page in (one, two):
                open_results(page, app_url)
                view(page, "SQL").click()
            run_sql(two, "SELECT * FROM runs")
            before = rows_shown(two)
            for attack, answer in (
                    ("WITH x AS (DELETE FROM runs RETURNING 1) SELECT count(*) FROM x", "would change data"),
                    ("EXPLAIN ANALYZE DELETE FROM runs", "EXPLAIN ANALYZE executes"),
                    ("CREATE TABLE runs AS SELECT 1 AS x", "only read-only queries")):
                run_sql(one, attack)
                expect(one.get_by_text(answer)).to_be_visible(timeout=TIMEOUT)
            one.screenshot(path=ARTIFACTS / "console_refusal.png", full_page=True)
            run_sql(two, "SELECT 1 AS marker")  # a different result first, so the next caption is new
            expect(two.get_by_text(re.compile(r"^1 row in "))).to_be_visible(timeout=TIMEOUT)
            run_sql(two, "SELECT * FROM runs")
            expect(two.get_by_text(re.compile(rf"^{before} rows in "))).to_be_visible(timeout=TIMEOUT)
        finally:
            for context in sessions:
                context.close()


class TestNavigationInChromium:
    def test_no_request_leaves_the_apps_host_and_a_page_keeps_its_choices(self, page: Page, app_url: str):
        """Every request of each page, its icons and fonts included, goes to the app itself (a page's
        Material icon as favicon used to be fetched from fonts.gstatic.com, which fails offline); and a
        page's choices survive visits to the others."""
        hosts = set()
        page.on("request", lambda request: hosts.add(request.url.split("/")[2]))
        wait_for_app(page, app_url)
        page.get_by_text("Simple ratios (verify and draft cost given)").click()
        expect(page).to_have_url(re.compile(r"mode=ratios"), timeout=TIMEOUT)
        view(page, "Best γ").click()
        expect(view(page, "Best γ")).to_be_checked(timeout=TIMEOUT)
        for name, heading in (("Explorer", "Benchmark results explorer"), ("Live", "Live speculative decoding"),
                              ("Claims", "Check a speedup claim")):
            page.get_by_role("link", name=name).click()
            expect(page.get_by_role("heading", name=heading).first).to_be_visible(timeout=TIMEOUT)
        page.get_by_role("combobox", name="Acceptance on your traffic").click()
        page.get_by_role("option", name="vLLM's acceptance rate (accepted/drafted)").click()
        # That choice's run has ended (its value box enabled) before the claim is typed: a claim typed
        # during it had reached the server but not the URL (a clean clone's run under load, once).
        expect(page.get_by_role("spinbutton", name="Measured value")).to_be_enabled(timeout=TIMEOUT)
        expect(page).to_have_url(re.compile(r"claim_measure=acceptance_rate"), timeout=TIMEOUT)
        claim = page.get_by_role("textbox", name="Claimed speedup")
        claim.fill("2x")
        claim.press("Enter")
        # The claim has reached the server before the page is left: the page shows it read (the
        # URL alone did not show it: the claim was lost once under load, with claim=2x in the URL).
        expect(page.get_by_test_id("stMetricValue").first).to_have_text("2.00×", timeout=TIMEOUT)
        expect(page).to_have_url(re.compile(r"claim=2x"), timeout=TIMEOUT)
        expect(page).to_have_url(re.compile(r"claim_measure=acceptance_rate"), timeout=TIMEOUT)
        view(page, "Acceptance it needs").click()
        expect(page).to_have_url(re.compile(r"claim_view=required"), timeout=TIMEOUT)
        page.get_by_role("link", name="Calculator", exact=True).click()  # the sidebar's, not Claims' link to it
        # Leaving a page takes its choices out of the URL; coming back brings them back, and the
        # view that was open.
        expect(page.get_by_role("radio", name="Simple ratios (verify and draft cost given)")).to_be_checked(
            timeout=TIMEOUT)
        expect(view(page, "Best γ")).to_be_checked(timeout=TIMEOUT)
        page.get_by_role("link", name="Claims").click()
        expect(page.get_by_role("combobox", name="Acceptance on your traffic")).to_have_value(
            "vLLM's acceptance rate (accepted/drafted)", timeout=TIMEOUT)
        expect(page.get_by_role("textbox", name="Claimed speedup")).to_have_value("2x", timeout=TIMEOUT)
        expect(page).to_have_url(re.compile(r"claim_measure=acceptance_rate"), timeout=TIMEOUT)
        expect(view(page, "Acceptance it needs")).to_be_checked(timeout=TIMEOUT)
        expect(page).to_have_url(re.compile(r"claim_view=required"), timeout=TIMEOUT)
        page.wait_for_load_state("networkidle")
        assert hosts == {app_url.split("/")[2]}

    def test_back_from_another_page_brings_the_calculators_values_back(self, page: Page, app_url: str):
        """A browser pass: α 0.7, γ 3 and batch 32 came back from the Explorer by the browser's Back as
        0.8, 4 and 64, with another speedup (controls.enter_page says why)."""
        wait_for_app(page, f"{app_url}/?alpha=0.7&gamma=3&batch=32&gpu=MI355X&target=gpt-oss-120b&draft=eagle3")
        speedup = page.get_by_test_id("stMetric").filter(has_text="Speedup").get_by_test_id("stMetricValue")
        expect(speedup).to_have_text(re.compile(r"\d\.\d\d×"), timeout=TIMEOUT)
        settled(page)
        before = speedup.inner_text()
        page.get_by_role("link", name="Explorer").click()
        expect(page.get_by_role("heading", name="Benchmark results explorer").first).to_be_visible(timeout=TIMEOUT)
        settled(page)
        # Streamlit writes each change of the URL as a history entry of its own, and the sidebar writes
        # its choices one at a time on the new page: Back may first land on one of the Explorer's own
        # entries. Back until the calculator's, as a user presses it.
        for _ in range(10):
            page.go_back()
            settled(page)
            if urllib.parse.urlsplit(page.url).path in ("/", "/what-if"):
                break
        expect(page).to_have_url(re.compile(r"alpha=0\.7"), timeout=TIMEOUT)
        expect(speedup).to_have_text(before, timeout=TIMEOUT)
        settled(page)
        query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(page.url).query))
        assert {k: query.get(k) for k in ("alpha", "gamma", "batch", "gpu")} == {
            "alpha": "0.7", "gamma": "3", "batch": "32", "gpu": "MI355X"}
        assert speedup.inner_text() == before == f"{calc_row('?' + page.url.split('?', 1)[1], PRESETS)['speedup']:.2f}×"

    def test_the_claims_link_to_the_calculator_leaves_an_address_of_the_same_figure(self, page: Page, app_url: str):
        """A manager's pass: the Claims page's link to the calculator at context 32,768 computed there,
        and left an address without context=, which, copied, gave context 1,024's figure (2.95× for
        2.00×): Streamlit drops a bound control's value from the URL on a switch of page."""
        wait_for_app(page, app_url)
        page.goto(f"{app_url}/check-a-claim?claim=2x&claim_batch=4&context=32768&engine=sglang&gpu=H200&tp=1")
        link = page.get_by_role("link", name=re.compile("^In the calculator: α"))
        # As a browser resolves it on the Claims page (a copied or middle-clicked link): a link to the
        # default page has an empty path, which had resolved to the Claims page itself.
        address = urllib.parse.urljoin(page.url, link.get_attribute("href"))
        assert urllib.parse.urlsplit(address).path == "/what-if"
        link.click()
        expect(page).to_have_url(re.compile(r"context=32768"), timeout=TIMEOUT)
        speedup = page.get_by_test_id("stMetric").filter(has_text="Speedup").get_by_test_id("stMetricValue")
        expect(speedup).to_have_text(re.compile(r"\d\.\d\d×"), timeout=TIMEOUT)
        settled(page)
        row = calc_row("?" + page.url.split("?", 1)[1], PRESETS)
        assert row["context"] == 32768 and speedup.inner_text() == f"{row['speedup']:.2f}×"
        # The link opened in a new tab, a session with no sidebar of its own, gives the same figure:
        # it had carried the claim's point alone and priced it on the default H100 with vLLM.
        tab = page.context.new_page()
        tab.goto(address)
        fresh = tab.get_by_test_id("stMetric").filter(has_text="Speedup").get_by_test_id("stMetricValue")
        expect(fresh).to_have_text(speedup.inner_text(), timeout=TIMEOUT)
        tab.close()

    def test_a_link_s_load_survives_a_visit_to_another_page(self, page: Page, app_url: str):
        """A shared link's steady load (prefill=on and its tokens) was lost on a visit to another page:
        the headline went from the load's 1.31× to decoding only's 1.44× (a consistency pass). Values
        set in the page survived; those that came with the link were the controls' defaults only."""
        link = "gpu=B200&target=DeepSeek-V3&draft=mtp&precision=fp8&prefill=on&input_tokens=2000&output_tokens=100"
        wait_for_app(page, f"{app_url}/?{link}")
        speedup = page.get_by_test_id("stMetric").filter(has_text="Speedup").get_by_test_id("stMetricValue")
        expect(speedup).to_have_text(re.compile(r"\d\.\d\d×"), timeout=TIMEOUT)
        linked = speedup.inner_text()
        page.get_by_role("link", name="Explorer").click()
        expect(page.get_by_role("heading", name="Benchmark results explorer").first).to_be_visible(timeout=TIMEOUT)
        page.get_by_role("link", name="Calculator", exact=True).click()
        expect(page).to_have_url(re.compile(r"prefill=on"), timeout=TIMEOUT)
        expect(page).to_have_url(re.compile(r"input_tokens=2000&output_tokens=100"), timeout=TIMEOUT)
        expect(speedup).to_have_text(linked, timeout=TIMEOUT)

    def test_the_language_chosen_first_on_the_default_page_takes(self, page: Page, app_url: str):
        # A session's first rerun on the default page reset the selectbox to the URL's language.
        wait_for_app(page, f"{app_url}/?view=latency&workload=summarisation")
        page.get_by_role("combobox", name="Language · Ngôn ngữ").click()
        page.get_by_role("option", name="Tiếng Việt").click()
        expect(page).to_have_url(re.compile(r"lang=vi"), timeout=TIMEOUT)
        expect(page.get_by_role("heading", level=1)).to_have_text(re.compile("^Công cụ tính"), timeout=TIMEOUT)
        # The workload travels as its tokens, which name their preset.
        expect(page).to_have_url(re.compile(r"input_tokens=16000&output_tokens=150"), timeout=TIMEOUT)
        # A choice shows its label in the new language, not the one it was drawn in.
        workload = page.get_by_role("combobox", name=i18n.t("calc.workload", "vi"))
        expect(workload).to_have_value("Tóm tắt (đầu vào dài, đầu ra ngắn)", timeout=TIMEOUT)
        page.get_by_role("combobox", name="Language · Ngôn ngữ").click()
        page.get_by_role("option", name="English").click()
        expect(page.get_by_role("combobox", name="Workload")).to_have_value("Summarisation (long in, short out)",
                                                                             timeout=TIMEOUT)


@pytest.fixture
def other_models_server(monkeypatch):
    """A replay exporter on 127.0.0.1 in this process whose recording names another preset's model
    (Qwen3-235B-A22B) than the sidebar's default target: the URL of its /metrics."""
    from specviz.live import replay

    text = replay.recording().replace('model_name="swiss-ai/Apertus-v1.5-70B"', 'model_name="Qwen/Qwen3-235B-A22B"')
    assert text != replay.recording()
    monkeypatch.setattr(replay, "recording", lambda: text)
    with replay.start() as server:
        yield server.url


class TestLiveInChromium:
    def test_a_server_of_another_model_gets_no_verdict_but_a_switch(self, page: Page, app_url: str,
                                                                    other_models_server: str):
        """A server's /metrics of Qwen3-235B-A22B, a preset other than the sidebar's Qwen3-32B: a
        warning and no verdict, and a button that switches the sidebar's target to it."""
        page.goto(f"{app_url}/live-metrics")
        page.get_by_text("A server's /metrics", exact=True).click()
        url = page.get_by_role("textbox", name="Metrics URL")
        url.fill(other_models_server)
        url.press("Enter")
        every = page.get_by_role("spinbutton", name="Every (seconds)")
        every.fill("2")
        every.press("Enter")
        page.get_by_text("Poll", exact=True).click()
        warning = page.get_by_text(re.compile(r"This server serves replay:Qwen/Qwen3-235B-A22B, not the sidebar's "
                                              r"Qwen3-32B: no verdict is given"))
        expect(warning).to_be_visible(timeout=TIMEOUT)
        verdict = page.get_by_text(re.compile(r"^(Paying now|Losing now|Not settled):"))
        expect(verdict).to_have_count(0)
        page.get_by_role("button", name="Switch the sidebar to Qwen3-235B-A22B").click()
        # The button is drawn in the polling st.fragment: the whole page must rerun for the sidebar.
        expect(page.get_by_role("combobox", name="Target model")).to_have_value(re.compile("Qwen3-235B-A22B"),
                                                                                timeout=TIMEOUT)
        expect(page).to_have_url(re.compile(r"target=Qwen3-235B-A22B(&|$)"), timeout=TIMEOUT)
        expect(warning).to_have_count(0, timeout=TIMEOUT)
        expect(verdict).to_be_visible(timeout=TIMEOUT)  # the verdict, for the model it serves
        expect(page.get_by_text("Traceback")).to_have_count(0)


GUIDE = ARTIFACTS / "guide"  # `make screenshots` copies these into docs/screenshots/ for the user guide (docs/guide.md)


@pytest.fixture
def guide_page(browser):
    """A 1,280 × 960 window: the size the user guide's screenshots are taken at."""
    context = browser.new_context(viewport={"width": 1280, "height": 960})
    GUIDE.mkdir(parents=True, exist_ok=True)
    yield context.new_page()
    context.close()


def to_top(locator) -> None:
    """Scroll the page so that ``locator`` is at the top of the window."""
    expect(locator).to_be_visible(timeout=TIMEOUT)
    locator.evaluate("element => element.scrollIntoView({block: 'start'})")
    locator.page.wait_for_timeout(500)  # the charts settle after the scroll


class TestUserGuideInChromium:
    """The user guide's screenshots, each from a real flow whose outcome is checked first (and the
    checks of other flows that pass the same pages)."""

    def test_calculator_its_latency_and_its_deploy_views(self, guide_page: Page, app_url: str):
        wait_for_app(guide_page, app_url)
        expect(guide_page.get_by_text(re.compile(r"^Speculation pays here: 1\.45×"))).to_be_visible(timeout=TIMEOUT)
        guide_page.screenshot(path=GUIDE / "calculator.png")
        # The views as their segments open them (a link's view= opens the same view: TestApp's tests).
        view(guide_page, "Latency").click()
        tail = guide_page.get_by_role("heading", name="Tokens per step, and what the tail sees")
        expect(tail).to_be_visible(timeout=TIMEOUT)
        to_top(view(guide_page, "Latency"))
        guide_page.screenshot(path=GUIDE / "calculator_latency.png")
        view(guide_page, "Deploy").click()
        command = guide_page.locator('[data-testid="stCode"]').filter(has_text="vllm serve")
        expect(command).to_contain_text("--speculative-config", timeout=TIMEOUT)
        engines = guide_page.locator('[data-testid="stRadio"]').filter(has_text="SGLang")
        to_top(engines)  # the command's controls
        guide_page.screenshot(path=GUIDE / "calculator_deploy.png")
        # Another engine in the Deploy view: SGLang's own launcher.
        engines.get_by_text("SGLang", exact=True).click()
        sglang = guide_page.locator('[data-testid="stCode"]').filter(has_text="sglang.launch_server")
        expect(sglang).to_have_text(re.compile(r"^\s*python -m sglang\.launch_server "), timeout=TIMEOUT)
        expect(guide_page.locator('[data-testid="stCode"]').filter(has_text="vllm serve")).to_have_count(0)

    def test_explorer(self, guide_page: Page, app_url: str):
        open_results(guide_page, app_url)
        view(guide_page, "By load").click()
        expect(guide_page.locator('[data-testid="stVegaLiteChart"]').first).to_be_visible(timeout=TIMEOUT)
        to_top(view(guide_page, "By load"))
        guide_page.screenshot(path=GUIDE / "explorer.png")

    def test_live(self, guide_page: Page, app_url: str):
        """The demo source updates window by window; its model matches no preset, and it gets a
        verdict on the user's word that it is the sidebar's."""
        page = guide_page
        page.goto(f"{app_url}/live-metrics")
        expect(page.get_by_text(re.compile(r"^REPLAY: a recorded vLLM scrape"))).to_be_visible(timeout=TIMEOUT)
        every = page.get_by_role("spinbutton", name="Every (seconds)")
        every.fill("2")
        every.press("Enter")
        page.get_by_text("Poll", exact=True).click()
        expect(metric(page, "Running requests")).not_to_have_text("—", timeout=TIMEOUT)
        first = metric_value(page, "Generated tokens/s"), metric_value(page, "Acceptance rate (accepted/drafted)")
        # The replay's traffic moves every window: the figures change without a click.
        expect(metric(page, "Acceptance rate (accepted/drafted)")).not_to_have_text(first[1], timeout=TIMEOUT)
        # Its Apertus-70B matches no preset: the verdict waits for the user's word that it is the sidebar's.
        expect(page.get_by_text(re.compile("which matches no preset"))).to_be_visible(timeout=TIMEOUT)
        page.get_by_text(re.compile("^This server serves the sidebar's")).click()
        verdict = page.get_by_text(re.compile(r"^(Paying now|Losing now|Not settled):"))
        expect(verdict).to_be_visible(timeout=TIMEOUT)
        expect(metric(page, "Running requests")).not_to_have_text("—", timeout=TIMEOUT)
        expect(page.get_by_text("Traceback")).to_have_count(0)
        # The per-position chart is readable: its legend below adds to the chart, not squeezes the
        # plot (fitted in both directions, its y axis spanned 79 of its 240 px).
        # Waited for in the page: a poll's rerender lays the chart out afresh, and a box read between
        # two renders had been none (two CI runs, once each).
        page.wait_for_function(
            """() => [...document.querySelectorAll('[data-testid="stVegaLiteChart"] g.role-axis')]
                .some(axis => (axis.getAttribute('aria-label') || '').startsWith("Y-axis titled 'Acceptance'")
                              && axis.getBoundingClientRect().height >= 240)""",
            timeout=TIMEOUT,
        )
        page.screenshot(path=ARTIFACTS / "live_replay.png", full_page=True)
        to_top(page.get_by_role("heading", level=1))
        page.screenshot(path=GUIDE / "live.png")

    def test_claims(self, guide_page: Page, app_url: str):
        """The worked example; then a pasted slide sentence gives a verdict."""
        page = guide_page
        page.goto(f"{app_url}/check-a-claim")
        page.get_by_role("button", name=re.compile("^Worked example")).click()
        expect(page.get_by_text(re.compile(r"^Conditional:"))).to_be_visible(timeout=TIMEOUT)
        to_top(page.get_by_role("heading", level=1))
        page.screenshot(path=GUIDE / "claims.png")
        sentence = page.get_by_role("textbox", name="Or paste the claim's sentence")
        sentence.fill("Up to 3.2x faster decoding with speculative decoding on H100 (Llama-3.1-70B, EAGLE-3)")
        sentence.press("Control+Enter")  # a text area sends its value on Ctrl+Enter or on leaving it
        page.get_by_role("button", name="Read the sentence").click()
        expect(page.get_by_text(re.compile(r"3\.20× on 4× NVIDIA H100 SXM for Llama 3\.1 70B"))).to_be_visible(timeout=TIMEOUT)
        expect(page.get_by_text("What the claim leaves out: ask its author")).to_be_visible(timeout=TIMEOUT)
        expect(page.get_by_role("combobox", name="Target model")).to_have_value(re.compile("Llama 3.1 70B"), timeout=TIMEOUT)
        expect(page.get_by_text("is not a speedup")).to_have_count(0)

    def test_calculator_in_vietnamese(self, guide_page: Page, app_url: str):
        guide_page.goto(f"{app_url}/?lang=vi")
        expect(guide_page.get_by_role("heading", level=1)).to_have_text(re.compile("^Công cụ tính"), timeout=TIMEOUT)
        expect(metric(guide_page, "Tăng tốc")).to_have_text("1.45×", timeout=TIMEOUT)
        guide_page.screenshot(path=GUIDE / "calculator_vi.png")
