"""Shared fixtures: a real Streamlit server on 127.0.0.1 and a real Chromium driven by Playwright;
the check every fuzzed result file must pass."""

from __future__ import annotations

import functools
import json
import math
import os
import socket
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pandas as pd
import pytest
import requests
from hypothesis import settings as hypothesis_settings
from streamlit.components.v2 import manifest_scanner

from specviz import i18n, scenario, settings
from specviz.advice.commands import Command
from specviz.errors import SpecvizError
from specviz.results import explorer, importers
from specviz.results.schema import RUN_COLUMNS
from specviz.results.store import Store

# No per-example deadline: on a loaded CI machine a slow example is not a failure.
hypothesis_settings.register_profile("specviz", deadline=None)
hypothesis_settings.load_profile("specviz")

# Each new AppTest scans every installed distribution's metadata for Streamlit components (0.1 s
# here; 45 s of CPU over the suite's AppTests). The installed set does not change during a run: the
# first scan's answer is kept. This is Streamlit's module, not its public API: a release that renames
# it fails here, at once, and the tests run as before without this line.
manifest_scanner.scan_component_manifests = functools.cache(manifest_scanner.scan_component_manifests)

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "tests" / "artifacts"
SAMPLES = ROOT.parent / "shared" / "samples"
PROM_FIXTURES = ROOT / "tests" / "fixtures" / "prom"
PAGES = ROOT / "pages"


def _router_entry() -> str:
    """app.py as AppTest runs it: through a link in a folder without pages/. AppTest puts Streamlit
    back in its older pages-folder mode before every run (streamlit/testing/v1/app_test.py), which a
    served app leaves at the first request of its process (pages/parts/shared.py, require_router; that
    request is tested in Chromium): through the link, every AppTest run is the run a served app makes
    after it. Pages are switched to by their paths under PAGES."""
    entry = ARTIFACTS / "router" / "app.py"
    entry.parent.mkdir(parents=True, exist_ok=True)
    # Made afresh by each worker and put in place at once: a link left by a checkout since moved
    # would run that checkout's app.py.
    made = entry.with_name(f"app-{os.getpid()}.link")
    made.unlink(missing_ok=True)
    made.symlink_to(ROOT / "app.py")
    os.replace(made, entry)
    return str(entry)


APP = _router_entry()
_DATA = settings.get("SPECVIZ_DATA_DIR")
PRESETS = scenario.load_presets(_DATA)


def raw_frame(rows: list[dict]) -> pd.DataFrame:
    """Canonical runs as the store returns them (γ a nullable integer), from a few fields per row."""
    base = {c: None for c in RUN_COLUMNS}
    frame = pd.DataFrame([{**base, "run_id": str(i), "source_file": "results/f.csv", **r} for i, r in enumerate(rows)])
    return frame.astype({c: "Int32" if c == "num_speculative_tokens" else "float64" for c, k in RUN_COLUMNS.items()
                         if k in ("DOUBLE", "BIGINT", "INTEGER")})


def runs_frame(rows: list[dict]) -> pd.DataFrame:
    """:func:`raw_frame` with the explorer's shared columns."""
    return explorer.with_view_columns(raw_frame(rows))


SWEEP = runs_frame(
    [{"workload": "chat", "concurrency": c, "output_throughput": base} for c, base in ((1, 100), (8, 600), (64, 2000))]
    + [{"workload": "chat", "concurrency": c, "output_throughput": sd, "spec_method": "eagle",
        "num_speculative_tokens": 4, "acceptance_length": 3.0, "label": "eagle"}
       for c, sd in ((1, 250), (8, 900), (64, 1800))])


@pytest.fixture(scope="session")
def example_runs():
    """The shipped example runs, as the explorer reads them."""
    s = Store(":memory:")
    s.seed_examples(sorted((_DATA / "examples").glob("*.csv")))
    runs = explorer.with_view_columns(s.runs())
    s.close()
    return runs


def in_vietnamese(error: SpecvizError, english: str) -> str:
    """The Vietnamese text of ``error``, checked to leave out ``english``, which its English text has:
    what specviz writes inside a message is in the message's language."""
    assert english in str(error)  # the English message keeps its words
    text = i18n.t(error.key, "vi", **error.params)
    assert english not in text
    return text


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler], host: str = "127.0.0.1", **attributes: Any) -> Iterator[str]:
    """The base URL of a server on ``host`` (a loopback address) whose requests ``handler`` answers,
    with ``attributes`` set on the server for it (an answer, a route), shut down after."""
    server = ThreadingHTTPServer((host, 0), handler)
    for name, value in attributes.items():
        setattr(server, name, value)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    try:
        yield f"http://{host}:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def make_scenario(**params: str) -> scenario.Scenario:
    """The scenario a link with these parameters describes (every value must be taken)."""
    made, refused = scenario.from_query_params({k: str(v) for k, v in params.items()}, PRESETS)
    assert not refused, refused
    return made


def finished_requests(count: int, prompt: int, generation: int, model: str = "m", engine: str = "0") -> str:
    """vLLM's per-request token histograms as vllm_0.25.1's scrape writes them (HELP, TYPE, buckets,
    ``_count``, ``_sum`` and the ``_created`` gauge): ``count`` finished requests of ``prompt`` and
    ``generation`` tokens in all."""
    labels = f'engine="{engine}",model_name="{model}"'
    lines = []
    for name, total, help_text in (("prompt", prompt, "prefill"), ("generation", generation, "generation")):
        family = f"vllm:request_{name}_tokens"
        lines += [f"# HELP {family} Number of {help_text} tokens processed.", f"# TYPE {family} histogram"]
        lines += [f'{family}_bucket{{engine="{engine}",le="{le}",model_name="{model}"}} {count}.0'
                  for le in ("1000.0", "2000.0", "+Inf")]
        lines += [f"{family}_count{{{labels}}} {count}.0", f"{family}_sum{{{labels}}} {total}.0",
                  f"# HELP {family}_created Number of {help_text} tokens processed.",
                  f"# TYPE {family}_created gauge", f"{family}_created{{{labels}}} 1.7874960047713223e+09"]
    return "\n".join(lines) + "\n"


def aiperf_run_pair() -> tuple[bytes, bytes]:
    """A run's summary and its records, from AIPerf's own fixture (2026/aiperf_0.3_concurrency1: the JSONL
    keeps 10 of the summary's 64 requests): the summary's count, first request and span set to the 10
    records', as AIPerf writes them of one run (min_request_timestamp, benchmark_duration)."""
    records = (SAMPLES / "2026/aiperf_0.3_concurrency1/profile_export.jsonl").read_bytes()
    lines = [json.loads(line) for line in records.decode().splitlines()]
    first = min(line["metadata"]["request_start_ns"] for line in lines)
    last = max(line["metadata"]["request_end_ns"] for line in lines)
    summary = json.loads((SAMPLES / "2026/aiperf_0.3_concurrency1/profile_export_aiperf.json").read_bytes())
    summary["request_count"]["avg"] = float(len(lines))
    summary["min_request_timestamp"]["avg"], summary["max_response_timestamp"]["avg"] = float(first), float(last)
    summary["benchmark_duration"]["avg"] = (last - first) / 1e9
    return json.dumps(summary).encode(), records


def sample_text(name: str) -> str:
    """A shared sample's text (``../shared/samples``)."""
    return (SAMPLES / name).read_text()


def prom_fixture(name: str) -> str:
    """A fixture of exposition text (``tests/fixtures/prom``)."""
    return (PROM_FIXTURES / name).read_text()


def refused_with(call, key: str) -> SpecvizError:
    """The SpecvizError ``call`` raises, checked to carry ``key`` and to render."""
    with pytest.raises(SpecvizError) as caught:
        call()
    assert caught.value.key == key, str(caught.value)
    assert str(caught.value)  # the message renders
    return caught.value


def vllm_exposition(drafts, draft_tokens, accepted, per_pos, model="m", engine="0", generation=None, extra=""):
    """vLLM V1 exposition text in the shape of the real scrape (``_total``, ``_created``, ``engine``)."""
    labels = f'engine="{engine}",model_name="{model}"'
    lines = []
    for name, value in (("drafts", drafts), ("draft_tokens", draft_tokens), ("accepted_tokens", accepted)):
        lines += [f"# TYPE vllm:spec_decode_num_{name}_total counter",
                  f"vllm:spec_decode_num_{name}_total{{{labels}}} {value}",
                  f"# TYPE vllm:spec_decode_num_{name}_created gauge",
                  f"vllm:spec_decode_num_{name}_created{{{labels}}} 1.7893163568313677e+09"]
    lines.append("# TYPE vllm:spec_decode_num_accepted_tokens_per_pos_total counter")
    lines += [f'vllm:spec_decode_num_accepted_tokens_per_pos_total{{{labels},position="{i}"}} {v}'
              for i, v in enumerate(per_pos)]
    if generation is not None:
        lines += ["# TYPE vllm:generation_tokens_total counter", f"vllm:generation_tokens_total{{{labels}}} {generation}"]
    return "\n".join(lines) + "\n" + extra


def config_of(command: Command) -> dict:
    """A vLLM command's ``--speculative-config``, read back as the server reads it."""
    return json.loads(command.argv[command.argv.index("--speculative-config") + 1])


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the tests that read the real result files in ../shared/samples (``-m samples``, or
    ``-m "not samples"`` on a checkout without them): those whose code names ``SAMPLES`` or
    calls ``sample(...)``."""
    for item in items:
        function = getattr(item, "function", None)
        code = getattr(function, "__code__", None)
        if code is not None and ({"SAMPLES", "sample"} & set(code.co_names)):
            item.add_marker(pytest.mark.samples)


def parses_or_refuses(name: str, data: bytes) -> None:
    """Parsing ``data`` gives runs and requests of checked values, or an IngestError; nothing else."""
    try:
        parsed = importers.parse(name, data)
    except importers.IngestError:
        return
    for run in parsed.runs:
        json.loads(run["extra"], parse_constant=pytest.fail)  # strict JSON: no NaN or Infinity
        for key, value in run.items():
            if RUN_COLUMNS.get(key) == "DOUBLE" and value is not None and key != "request_rate":
                assert math.isfinite(value) and value >= 0, key
        for key in ("acceptance_rate", "zero_accept_rate"):
            assert run.get(key, 0) <= 1
    if not parsed.requests.empty:
        for extra in parsed.requests.get("extra", pd.Series(dtype=object)).dropna():
            json.loads(extra, parse_constant=pytest.fail)
        values = parsed.requests.drop(columns=["run_index", "extra"], errors="ignore").to_numpy(np.float64)
        assert not (values < 0).any() and not np.isinf(values).any()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(autouse=True)
def private_database(tmp_path, monkeypatch) -> Path:
    """Every test gets its own DuckDB file: tests never write the user's data/specviz.duckdb."""
    path = tmp_path / "specviz.duckdb"
    monkeypatch.setenv("SPECVIZ_DB", str(path))
    # The tests poll a source within a fraction of a second, as a server several seconds apart would:
    # the shortest window is a test of its own (test_store.py, test_a_scrape_too_soon_after_the_last_is_not_stored).
    monkeypatch.setenv("SPECVIZ_LIVE_MIN_WINDOW_S", "1e-9")
    return path


@pytest.fixture
def expansion_decoys(tmp_path, monkeypatch) -> Path:
    """A working folder (returned) where DuckDB's expansion of a glob or a leading ``~`` in a CSV path
    would find other files: r_other.csv and rx.csv in it, and x.csv in $HOME, each labelled 'other'."""
    monkeypatch.chdir(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for other in (tmp_path / "r_other.csv", tmp_path / "rx.csv", home / "x.csv"):
        other.write_text("output_throughput,label\n99,other\n")
    return tmp_path


def _start_app(database: Path) -> tuple[subprocess.Popen, str, object]:
    """`streamlit run app.py` started on a free loopback port with its own database (not yet ready)."""
    port = _free_port()
    ARTIFACTS.mkdir(exist_ok=True)
    log = open(ARTIFACTS / f"streamlit-{port}.log", "w")
    server = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.address", "127.0.0.1",
         "--server.port", str(port), "--server.headless", "true", "--browser.gatherUsageStats", "false"],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "SPECVIZ_DB": str(database)})
    return server, f"http://127.0.0.1:{port}", log


def _wait_until_healthy(server: subprocess.Popen, url: str, log) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            if requests.get(f"{url}/_stcore/health", timeout=1).ok:
                return
        except (requests.ConnectionError, requests.Timeout):  # not listening yet, or too busy starting to answer
            pass
        if server.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"streamlit did not start; see {log.name}")
        time.sleep(0.2)


@contextmanager
def serve_apps(*databases: Path) -> Iterator[list[str]]:
    """One `streamlit run app.py` per database, each on a free loopback port with its own database,
    started together (their starts overlap); yields their URLs once every one answers."""
    started = []
    try:
        for database in databases:
            started.append(_start_app(database))
        for server, url, log in started:
            _wait_until_healthy(server, url, log)
        yield [url for _, url, _ in started]
    finally:
        for server, _, log in started:
            server.terminate()
        for server, _, log in started:
            server.wait(timeout=10)
            log.close()


@contextmanager
def serve_app(database: Path) -> Iterator[str]:
    """`streamlit run app.py` on a free loopback port with its own database; yields the URL."""
    with serve_apps(database) as (url,):
        yield url


def wait_for_calculator(page, url: str) -> None:
    """``page`` at ``url``, once the calculator's headline figures are drawn."""
    from playwright.sync_api import expect

    page.goto(url)
    expect(page.get_by_text("Tokens per step E")).to_be_visible(timeout=60_000)


@pytest.fixture(scope="session")
def app_url(tmp_path_factory) -> Iterator[str]:
    """One served app for the whole session; its first request may be for any page (docs/guide.md,
    Routing)."""
    with serve_app(tmp_path_factory.mktemp("server") / "specviz.duckdb") as url:
        yield url


@pytest.fixture(scope="session")
def browser():
    """Debian's Chromium, launched by Playwright (no browser download)."""
    from playwright.sync_api import sync_playwright

    executable = settings.get("SPECVIZ_CHROMIUM")
    if not executable.exists():
        raise RuntimeError(f"{executable} not found: install Debian's chromium (apt-get install chromium) "
                           "or set SPECVIZ_CHROMIUM")
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(executable), args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run"])
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    """A fresh browser page, 1400 px wide so the sidebar and four slider columns fit."""
    context = browser.new_context(viewport={"width": 1400, "height": 1600})
    yield context.new_page()
    context.close()
