"""Benchmark: the app in Chromium against the floor Streamlit itself sets on this machine.

Run by hand: `.venv/bin/python bench/bench_browser.py [repetitions]` (5 by default). Starts two
servers on 127.0.0.1, headless, with no file watcher: the app (on a database of its own in a temporary
folder, the shipped examples seeded) and a minimal Streamlit page the bench writes to a temporary
folder, one slider and one Altair chart of the calculator's batch chart's size (340 px high, the page's
width; six lines of 52 points on a log axis). That page is the floor: what any Streamlit app pays on
this machine for a page with a slider and a chart.

Chromium (Debian's, ``SPECVIZ_CHROMIUM``) is driven by Playwright; each server is visited once before
the timing, so that its imports and per-process caches are warm, as on a server that has been up a
while. Two measures, each repeated and given as median and max:

- first render: a fresh browser context (no cache, no cookies) opens the page, from the request of
  the document until its main content is drawn (the page's headline and every chart's canvas or svg
  drawn at least once, no element still waiting for its code: Streamlit's skeleton) and the app is
  idle (no running indicator, no stale element) for 250 ms;
  the time is the later of the last chart draw and the start of that idle spell, read on the page's
  own clock (``performance.now()``, which starts with the navigation);
- redraw: a key press on a control (the α slider on the calculator's "By batch" view, the
  context slider of the explorer's "Predicted" view, the floor's slider) until a chart
  has drawn again and the app is idle as above, from the keydown on the page's clock; four times as
  many moves as first renders. Beside it, the page's main-thread busy time over the same moves
  (DevTools' ``TaskDuration``), which the machine's load stretches less than the wall time.

A chart's draw is seen by wrapping ``CanvasRenderingContext2D.clearRect`` (Vega's canvas renderer
clears before each render) and by a MutationObserver on the charts' svg (Vega's svg renderer). Prints
a table of page, median, max and the ratio of the median to the floor's median, and the load average
before and after (a 2-core machine shared with other work: compare ratios, taken in the same run).
Targets (issue 22 §5): first render ≤ 1.5× the floor's first render; redraw ≤ 1.5× the floor's redraw.
"""

from __future__ import annotations

import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Callable, Iterator

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from specviz import settings  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
QUIET_MS = 250
# A redraw costs half a second where a first render costs several: each is repeated this many times
# more, for a median that moves less between runs.
REDRAWS_PER_REPETITION = 4
TIMEOUT_MS = 60_000

FLOOR_PAGE = '''\
import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

x = st.slider("x", 0.0, 1.0, 0.8, 0.01, key="x")
batch = np.unique(np.round(np.geomspace(1, 1024, 64)).astype(int))
alphas = [0.5, 0.6, 0.7, 0.8, 0.9, round(x, 2)]
frame = pd.DataFrame({"alpha": np.repeat(alphas, batch.size), "batch": np.tile(batch, len(alphas))})
frame["speedup"] = (1 + frame["alpha"] * 3) / (1 + np.log2(frame["batch"]) * (1.2 - x) / 4)
st.altair_chart(alt.Chart(frame).mark_line().encode(
    x=alt.X("batch:Q", scale=alt.Scale(type="log")), y=alt.Y("speedup:Q"), color=alt.Color("alpha:N"),
    tooltip=[alt.Tooltip("alpha:N"), alt.Tooltip("batch:Q"), alt.Tooltip("speedup:Q")]).properties(height=340),
    width="stretch")
'''

CHART = '[data-testid="stVegaLiteChart"]'
# Installed in every page before its scripts: counts the charts' draws and notes the last keydown.
# A chart's svg is watched by an observer of its own (attached by the poll below, which counts a
# chart found already drawn as a draw), not the whole document: every DOM change of the app would
# cost the page a callback. The charts and the status widget are found in live collections (by
# class), which cost the page nothing between polls.
MONITOR = """
(() => {
  const b = window.__bench = {draws: 0, last: 0, key: 0, idle: null,
                              charts: document.getElementsByClassName('stVegaLiteChart'),
                              status: document.getElementsByClassName('stStatusWidget')};
  const drew = () => { b.draws++; b.last = performance.now(); };
  const clear = CanvasRenderingContext2D.prototype.clearRect;
  CanvasRenderingContext2D.prototype.clearRect = function (...args) {
    const c = this.canvas;
    if (c && c.isConnected && c.closest('.stVegaLiteChart')) { drew(); c.__drawn = true; }
    return clear.apply(this, args);
  };
  b.watch = () => {
    for (const c of b.charts) {
      if (c.__watched) continue;
      c.__watched = true;
      if (c.querySelector('svg.marks g')) drew();
      new MutationObserver(drew).observe(c, {subtree: true, childList: true, attributes: true, characterData: true});
    }
  };
  addEventListener('keydown', () => { b.key = performance.now(); }, true);
})();
"""

# Polled on every animation frame: the time (page clock) the page settled, or false. The cheap tests
# first, so that a poll costs the page next to nothing while it works: a query of the whole document
# (a skeleton, a stale element, the headline) only once no chart draw is awaited and nothing runs,
# and the visibility test, which makes the browser lay the page out, last.
SETTLED = """
([ready, since, quiet]) => {
  const b = window.__bench, now = performance.now();
  b.watch();
  const settled = b.draws > since
    && ![...b.status].some(w => w.querySelector('[data-testid="stStatusWidgetRunningIcon"]'))
    && [...b.charts].every(c => c.querySelector('svg.marks g') || [...c.querySelectorAll('canvas')].some(x => x.__drawn))
    && !document.querySelector('[data-stale="true"], [data-testid="stSkeleton"]')
    && ready.every(s => { const e = document.querySelector(s); return e && e.getClientRects().length; });
  if (!settled) {
    b.idle = null;
    return false;
  }
  if (b.idle === null) b.idle = now;
  const since_ms = Math.max(b.idle, b.last);
  return now - since_ms >= quiet ? since_ms : false;
}
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def served(script: Path, env: dict[str, str], log: Path) -> Iterator[str]:
    """`streamlit run script` on a free loopback port, headless, no file watcher; yields its URL."""
    port = free_port()
    with open(log, "w") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", str(script), "--server.address", "127.0.0.1",
             "--server.port", str(port), "--server.headless", "true", "--browser.gatherUsageStats", "false",
             "--server.fileWatcherType", "none"],
            cwd=script.parent, stdout=out, stderr=subprocess.STDOUT, env={**os.environ, **env})
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    with urllib.request.urlopen(f"{url}/_stcore/health", timeout=1):
                        break
                except OSError:
                    if server.poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError(f"streamlit did not start; see {log}")
                    time.sleep(0.2)
            yield url
        finally:
            server.terminate()
            server.wait(timeout=10)


def settle(page, ready: list[str], since: int) -> float:
    """The page-clock time at which ``ready`` is visible, every chart drawn (more than ``since`` draws
    in all) and the app idle for QUIET_MS."""
    return page.wait_for_function(SETTLED, arg=[ready, since, QUIET_MS], polling="raf", timeout=TIMEOUT_MS).json_value()


def new_page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1600})
    context.add_init_script(MONITOR)
    return context, context.new_page()


def first_render(browser, url: str, ready: list[str], charts: bool) -> float:
    """Milliseconds from the document's request to the page drawn and idle, in a fresh context."""
    context, page = new_page(browser)
    try:
        page.goto(url, wait_until="commit")
        return settle(page, ready, 0 if charts else -1)
    finally:
        context.close()


class Redraw:
    """A page kept open, a control moved by key presses and the chart's redraw timed."""

    def __init__(self, browser, url: str, ready: list[str], open_view: Callable, control: Callable,
                 keys: tuple[str, str]):
        self.context, self.page = new_page(browser)
        self.page.goto(url, wait_until="commit")
        self.ready, self.keys = ready, keys
        settle(self.page, ready, -1)
        open_view(self.page)
        settle(self.page, ready, 0)
        self.control = control(self.page)
        self.presses = 0
        self.devtools = self.context.new_cdp_session(self.page)
        self.devtools.send("Performance.enable")
        self.cpu: list[float] = []
        self.once()  # untimed: the first move of a control can cost what later ones do not
        self.cpu.clear()

    def main_thread_ms(self) -> float:
        """The page's main thread's busy time so far (DevTools' TaskDuration), in ms."""
        metrics = self.devtools.send("Performance.getMetrics")["metrics"]
        return 1000 * next(m["value"] for m in metrics if m["name"] == "TaskDuration")

    def once(self) -> float:
        since = self.page.evaluate("window.__bench.draws")
        busy = self.main_thread_ms()
        self.control.press(self.keys[self.presses % 2])
        self.presses += 1
        redrawn = settle(self.page, self.ready, since) - self.page.evaluate("window.__bench.key")
        self.cpu.append(self.main_thread_ms() - busy)
        return redrawn

    def close(self) -> None:
        self.context.close()


def slider(label: str) -> Callable:
    return lambda page: page.locator('[data-testid="stSlider"]').filter(has_text=label).get_by_role("slider")


def open_view(name: str) -> Callable:
    """A page's view opened by its segment in the row of views."""
    return lambda page: page.get_by_role("radiogroup", name="Views").get_by_role("radio", name=name, exact=True).click()


def report(name: str, times: list[float], floor: float | None) -> float:
    median = statistics.median(times)
    ratio = f"{median / floor:6.2f}x" if floor else "   1.00x (floor)"
    print(f"{name:<58} {median:8.0f} ms {max(times):8.0f} ms {ratio}", flush=True)
    return median


def main() -> None:
    from playwright.sync_api import sync_playwright

    repetitions = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    load_before = os.getloadavg()
    metric = '[data-testid="stMetricValue"]'
    chart = CHART
    with ExitStack() as stack, tempfile.TemporaryDirectory() as tmp:
        floor_script = Path(tmp) / "floor.py"
        floor_script.write_text(FLOOR_PAGE)
        floor = stack.enter_context(served(floor_script, {}, Path(tmp) / "floor.log"))
        app = stack.enter_context(served(ROOT / "app.py", {"SPECVIZ_DB": str(Path(tmp) / "bench.duckdb")},
                                         Path(tmp) / "app.log"))
        p = stack.enter_context(sync_playwright())
        browser = p.chromium.launch(executable_path=str(settings.get("SPECVIZ_CHROMIUM")), args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--no-first-run"])
        stack.callback(browser.close)

        # (name, url, what must be visible, whether it has a chart)
        pages = [("floor: slider and chart", f"{floor}/", [chart], True),
                 ("Calculator (/what-if)", f"{app}/", [metric, '[data-testid="stTable"]'], False),
                 ("Explorer (/results)", f"{app}/results", ['[data-testid="stDataFrame"]'], False),
                 ("Live (/live-metrics)", f"{app}/live-metrics", ['[data-testid="stAlert"], ' + metric], False),
                 ("Claims (/check-a-claim)", f"{app}/check-a-claim", [metric, chart], True)]
        for _, url, ready, charts in pages:  # warm each server: imports, caches, the seeded examples
            first_render(browser, url, ready, charts)
        firsts = {name: [] for name, *_ in pages}
        for _ in range(repetitions):  # interleaved, so that a change of load falls on all alike
            for name, url, ready, charts in pages:
                firsts[name].append(first_render(browser, url, ready, charts))

        redraws = {"floor: slider → chart": Redraw(browser, f"{floor}/", [chart], lambda page: None, slider("x"),
                                                    ("ArrowLeft", "ArrowRight")),
                   "Calculator, By batch: α slider → chart": Redraw(
                       browser, f"{app}/?view=batch", [metric, chart], lambda page: None, slider("Acceptance"),
                       ("ArrowLeft", "ArrowRight")),
                   "Explorer, Predicted: context → chart": Redraw(
                       browser, f"{app}/results", ['[data-testid="stDataFrame"]'],
                       open_view("Predicted"), slider("Context"), ("ArrowRight", "ArrowLeft"))}
        times = {name: [] for name in redraws}
        for _ in range(REDRAWS_PER_REPETITION * repetitions):
            for name, redraw in redraws.items():
                times[name].append(redraw.once())
        cpu = {name: redraw.cpu for name, redraw in redraws.items()}
        for redraw in redraws.values():
            redraw.close()

    print(f"\nChromium, {repetitions} repetitions; load average before {load_before[0]:.2f} "
          f"{load_before[1]:.2f}, after {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} ({os.cpu_count()} cores)")
    print(f"{'page':<58} {'median':>11} {'max':>11} {'ratio':>7}")
    print("first render, fresh context, until drawn and idle")
    floor_first = None
    for name, *_ in pages:
        median = report(name, firsts[name], floor_first)
        floor_first = floor_first or median
    print(f"input → chart redrawn and idle ({REDRAWS_PER_REPETITION * repetitions} moves each)")
    floor_redraw = None
    for name in redraws:
        median = report(name, times[name], floor_redraw)
        floor_redraw = floor_redraw or median
    print("the same moves, the page's main thread busy (CPU; the bench's own polling included, as in the floor)")
    floor_cpu = None
    for name in redraws:
        median = report(name, cpu[name], floor_cpu)
        floor_cpu = floor_cpu or median
    print("targets: first render ≤ 1.5x the floor's, redraw ≤ 1.5x the floor's")


if __name__ == "__main__":
    main()
