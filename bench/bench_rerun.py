"""Benchmark: how long the calculator page takes to rerun after a slider move (AppTest).

Run by hand: `.venv/bin/python bench/bench_rerun.py [calculator|explorer]` (both by default).
AppTest runs the whole script (router,
sidebar, page, chart specs) as the server would, without a browser; network and drawing are not
included. Prints the median and 90th percentile over the moves, against the cost of a rerun of an
empty page measured in the same run as the floor of AppTest itself.

AppTest compiles app.py and the page again on every run (a new ScriptCache per run); a server keeps
one cache for the process and compiles each script once. The bench shares one cache across runs, as
the server does, so that the figures are those of a server's rerun (compiling the explorer page is
not part of them). AppTest runs app.py through a link in a folder without pages/, as the tests do
(tests/conftest.py, `_router_entry`): every run is then the run a served app makes.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from streamlit.runtime.scriptrunner.script_cache import ScriptCache
from streamlit.testing.v1 import AppTest, app_test

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

ROOT = Path(__file__).resolve().parent.parent
MOVES = 40
_SERVER_CACHE = ScriptCache()
app_test.ScriptCache = lambda: _SERVER_CACHE  # one compiled copy per script, as in a server process


def timed_reruns(at: AppTest, move) -> list[float]:
    times = []
    for i in range(MOVES):
        move(at, i)
        start = time.perf_counter()
        at.run()
        times.append(time.perf_counter() - start)
        assert not at.exception, at.exception
    return times


def report(name: str, times: list[float]) -> float:
    ms = sorted(t * 1e3 for t in times)
    median = statistics.median(ms)
    print(f"{name:<52} median {median:7.1f} ms   p90 {ms[int(0.9 * len(ms))]:7.1f} ms")
    return median


def explorer_with_a_million_requests(app: str) -> None:
    """Explorer reruns with the examples and a 1M-row per-request CSV stored."""
    import importlib.util
    import os

    spec = importlib.util.spec_from_file_location("bench_ingest", Path(__file__).with_name("bench_ingest.py"))
    bench_ingest = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench_ingest)
    from specviz.results.store import Store

    with tempfile.TemporaryDirectory() as tmp:
        database, csv_path = Path(tmp) / "explorer.duckdb", Path(tmp) / "requests.csv"
        bench_ingest.make_csv(csv_path, 1_000_000)
        store = Store(database)
        store.seed_examples(sorted((ROOT / "data" / "examples").glob("*.csv")))
        store.import_path(csv_path)
        store.close()
        os.environ["SPECVIZ_DB"] = str(database)
        workloads = [[], ["chat"], ["code"], ["json"]]
        for view in ("Runs", "By load", "Baseline", "Acceptance"):
            at = AppTest.from_file(app, default_timeout=60)
            at.session_state["exp_view"] = view
            at.session_state["filters"] = True  # the filter lists are built only while their expander is open
            at.run()
            at.switch_page(str(ROOT / "pages" / "results.py"))
            at.run()
            report(f"explorer, 1M requests [{view}]: filter", timed_reruns(
                at, lambda at, i: at.multiselect(key="filter_workload").set_value(workloads[i % 4])))


def main() -> None:
    parts = sys.argv[1:] or ["calculator", "explorer"]
    with tempfile.TemporaryDirectory() as folder:
        app = Path(folder) / "app.py"
        app.symlink_to(ROOT / "app.py")
        if "calculator" in parts:
            calculator_moves(str(app))
        if "explorer" in parts:
            explorer_with_a_million_requests(str(app))


def calculator_moves(app: str) -> None:
    """Calculator reruns after a move of α or batch, per view, against AppTest's own floor."""
    with tempfile.TemporaryDirectory() as tmp:
        empty = Path(tmp) / "empty.py"
        empty.write_text("import streamlit as st\nst.slider('x', 0.0, 1.0, 0.5, key='x')\n")
        base = AppTest.from_file(str(empty), default_timeout=60)
        base.run()
        floor = report("empty page with one slider (floor)",
                       timed_reruns(base, lambda at, i: at.slider(key="x").set_value(0.3 + 0.01 * (i % 30))))

    alpha = lambda at, i: at.slider(key="alpha").set_value(0.5 + 0.01 * (i % 40))
    batch_values = [1, 8, 64, 256, 1024]
    batch = lambda at, i: at.number_input(key="batch").set_value(batch_values[i % 5])
    for view in ("α table", "By batch", "α × batch", "Roofline"):
        at = AppTest.from_file(app, default_timeout=60)
        at.session_state["view"] = view
        at.run()
        median = report(f"calculator [{view}]: move α", timed_reruns(at, alpha))
        report(f"calculator [{view}]: move batch", timed_reruns(at, batch))
        print(f"{'':<52} α move minus the floor: {median - floor:.1f} ms")


if __name__ == "__main__":
    sys.exit(main())
