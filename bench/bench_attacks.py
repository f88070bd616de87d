"""Benchmark: peak memory and time of the heaviest attacks (SQL console, large imports) against their bounds.

Run by hand: `.venv/bin/python bench/bench_attacks.py`. Each attack runs through `Store.query` in a
fresh Python process over a store holding the synthetic examples plus 1M per-request rows; the
process makes the sandbox's copy of the tables first (once per version of the data, timed on its
own in the first row) and reports the wall time from the call to the answer and the peak resident
memory of the query process it started (`RUSAGE_CHILDREN`, once the SQL console's fork server has
ended). Baselines in the same run: a trivial query through the same sandbox (the cost of a fresh,
locked-down process) and the same trivial query in-process on an open DuckDB connection (what the console cost before it ran queries in a process of their own).

Imports run in a fresh process each; the peak is that process's own high-water mark (``VmHWM``,
interpreter and the file's bytes included), against the ~1 GB the import promises for any file
within the upload limit (``SPECVIZ_IMPORT_MEMORY_BYTES``).

Fleet: `prometheus.query_figures` split by instance against a Prometheus API on loopback that answers
every range query with its whole fleet (100 models, N replicas): CPU and peak of a fresh process.

Sessions: `streamlit run app.py` on a store of 2M per-request rows and 2M runs of hostile text (20
imports of 100,000 runs, the most one file may bring: 500-character model names with a bidi control,
labels of 230 characters, a 300-character other column), and four Chromium sessions that open the
Explorer together. The peak is the app process's ``VmHWM``; the baseline, in the same run, is the
same four sessions on the shipped examples alone. ``--runs N`` builds a smaller store (the default
takes about 3 minutes to build).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from specviz import settings  # noqa: E402
from specviz.results.sandbox import Limits  # noqa: E402
from specviz.results.store import Store  # noqa: E402

LIMITS = Limits()  # the defaults the app runs with
ATTACKS = {
    "baseline: SELECT 1": "SELECT 1",
    "baseline: p99 TTFT per run over 1M requests":
        "SELECT run_id, quantile_cont(ttft_ms, 0.99) FROM requests GROUP BY 1",
    "one call: repeat('x', 1.5e9)": "SELECT length(repeat('x', 1500000000))",
    "one call: list of 4e8 integers": "SELECT list_aggr(range(400000000), 'sum')",
    "spill: sort of 3e8 random doubles": "SELECT sum(x) FROM (SELECT random() AS x FROM range(300000000) ORDER BY x)",
    "time: count over range(1e11)": "SELECT count(*) FROM range(100000000000)",
    "result: 1,000 rows of 1 MB": "SELECT repeat('x', 1000000) FROM range(1000)",
    "result: 1e8 rows": "SELECT * FROM range(100000000)",
}
PROBE = textwrap.dedent("""
    import json, resource, sys, time
    sys.path.insert(0, {root!r})
    from specviz.results import query_server
    from specviz.results.sandbox import QueryError
    from specviz.results.store import Store
    store = Store({db!r})
    if {warm!r}:
        store.query("SELECT 1")  # the copy of the tables is made once per version of the data
    started = time.monotonic()
    try:
        result = store.query({sql!r})
        outcome = f"{{len(result.frame)}} rows" + (f", cut by {{result.truncated}}" if result.truncated else "")
    except QueryError as exc:
        outcome = exc.key
    seconds = time.monotonic() - started
    query_server.stop_server()  # waited for, the server's query processes count in RUSAGE_CHILDREN
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    print(json.dumps({{"seconds": seconds, "peak": peak, "outcome": outcome}}))
""")


IMPORT_PROBE = textwrap.dedent("""
    import json, re, sys, time
    sys.path.insert(0, {root!r})
    from specviz.results import importers
    from specviz.results.store import Store
    store = Store({db!r})
    started = time.monotonic()
    try:
        result = store.import_path({path!r}, {max_bytes})
        outcome = f"{{result.requests:,}} requests"
    except importers.IngestError as exc:
        outcome = "refused"
    seconds = time.monotonic() - started
    peak = int(re.search(r"VmHWM:\\s+(\\d+) kB", open("/proc/self/status").read())[1]) * 1024
    print(json.dumps({{"seconds": seconds, "peak": peak, "outcome": outcome}}))
""")


def detailed_vllm(requests: int) -> bytes:
    """A vllm --save-detailed file of one-token requests: the densest per-request shape."""
    zeros = b"0," * (requests - 1) + b"0"
    return (b'{"request_throughput": 1, "ttfts": [' + zeros + b'], "itls": [' + b"[]," * (requests - 1)
            + b'[]], "input_lens": [' + zeros + b'], "output_lens": [' + zeros + b"]}")


def import_attacks(folder: Path) -> dict[str, Path]:
    """Hostile and large files, written once: name → path."""
    files = {"detailed vLLM, 10 MB": detailed_vllm(1_111_111), "detailed vLLM, 33 MB": detailed_vllm(3_700_000),
             "detailed vLLM, 190 MB": detailed_vllm(21_000_000),
             "[[],[],...] JSON, 190 MB": b"[" + b"[]," * 63_000_000 + b"[]]"}
    paths = {}
    for name, data in files.items():
        paths[name] = folder / f"{len(paths)}.json"
        paths[name].write_bytes(data)
    rng = np.random.default_rng(1)
    rows = 2_500_000
    paths["per-request CSV, 190 MB"] = folder / "big.csv"
    pd.DataFrame({"label": rng.choice(["baseline", "eagle-k4"], rows), "concurrency": rng.choice([1, 8, 64], rows),
                  "ttft_ms": rng.gamma(2.0, 20.0, rows), "itl_ms": rng.gamma(5.0, 2.0, rows),
                  "e2el_ms": rng.gamma(4.0, 300.0, rows)}).to_csv(paths["per-request CSV, 190 MB"], index=False)
    return paths


def make_store(path: Path, requests: int = 1_000_000) -> None:
    rng = np.random.default_rng(0)
    csv = path.parent / "requests.csv"
    pd.DataFrame({"label": rng.choice(["baseline", "eagle-k4"], requests),
                  "concurrency": rng.choice([1, 8, 64], requests),
                  "ttft_ms": rng.gamma(2.0, 20.0, requests),
                  "itl_ms": rng.gamma(5.0, 2.0, requests)}).to_csv(csv, index=False)
    store = Store(path)
    store.seed_examples(sorted((ROOT / "data" / "examples").glob("*.csv")))
    store.import_path(csv)
    store.close()


def hostile_runs(path: Path, runs: int, per_import: int = 100_000) -> None:
    """Add ``runs`` runs of long, hostile text to the store at ``path``, one import per ``per_import``."""
    rng = np.random.default_rng(2)
    names = np.array([f"model-\u202e{k:04d}-" + "x" * 489 for k in range(1_000)])
    store = Store(path)
    for start in range(0, runs, per_import):
        rows = min(per_import, runs - start)
        csv = path.parent / f"runs-{start}.csv"
        pd.DataFrame({"label": [f"sweep-{start}-{k}-" + "y" * 200 for k in range(rows)],
                      "target_model": names[rng.integers(0, len(names), rows)],
                      "concurrency": rng.choice([1, 8, 64, 256], rows), "output_throughput": rng.gamma(2.0, 500, rows),
                      "p99_itl_ms": rng.gamma(5.0, 2.0, rows),
                      "note": [f"{k % 100}-" + "z" * 300 for k in range(rows)]}).to_csv(csv, index=False)
        store.import_path(csv)
        csv.unlink()
    store.close()


def _server_memory(pid: int) -> tuple[float, float]:
    """Resident and peak resident memory of a process, in GB (``VmRSS``, ``VmHWM``)."""
    status = Path(f"/proc/{pid}/status").read_text()
    return tuple(int(re.search(rf"{field}:\s+(\d+) kB", status)[1]) * 1024 / 1e9 for field in ("VmRSS", "VmHWM"))


def explorer_sessions(db: Path, sessions: int = 4) -> tuple[float, float, float]:
    """Serve the app on ``db`` and open the Explorer in ``sessions`` Chromium pages together; the
    seconds until every page had drawn its runs table, and the app process's resident and peak GB."""
    from playwright.sync_api import sync_playwright

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.address", "127.0.0.1",
         "--server.port", str(port), "--server.headless", "true", "--browser.gatherUsageStats", "false"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, "SPECVIZ_DB": str(db)})
    url = f"http://127.0.0.1:{port}"
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(settings.get("SPECVIZ_CHROMIUM")),
                                        args=["--no-sandbox", "--disable-gpu"])
            pages = [browser.new_page() for _ in range(sessions)]
            for _ in range(300):  # the server's first request goes to the root (see tests/test_browser.py)
                try:
                    pages[0].goto(url)
                    break
                except Exception:  # not listening yet
                    time.sleep(0.2)
            pages[0].get_by_text("Tokens per step E").wait_for(timeout=120_000)
            started = time.monotonic()
            for page in pages:
                page.goto(f"{url}/results")
            for page in pages:  # the runs table's download button is the last thing its tab draws
                page.get_by_role("button", name="Download").first.wait_for(timeout=600_000)
            seconds = time.monotonic() - started
            browser.close()
        return (seconds, *_server_memory(server.pid))
    finally:
        server.terminate()
        server.wait()


def sessions_report(folder: Path, runs: int) -> None:
    examples = folder / "examples.duckdb"
    store = Store(examples)
    store.seed_examples(sorted((ROOT / "data" / "examples").glob("*.csv")))
    store.close()
    hostile = folder / "hostile.duckdb"
    started = time.monotonic()
    make_store(hostile, requests=2_000_000)
    hostile_runs(hostile, runs)
    print(f"\nstore of 2,000,000 requests and {runs:,} hostile runs built in {time.monotonic() - started:.0f} s, "
          f"{hostile.stat().st_size / 1e6:.0f} MB")
    print(f"{'four Explorer sessions':40} {'time s':>7} {'RSS GB':>7} {'peak GB':>8} {'/baseline':>9}")
    base = explorer_sessions(examples)
    print(f"{'baseline: shipped examples only':40} {base[0]:7.1f} {base[1]:7.2f} {base[2]:8.2f} {1:9.2f}")
    heavy = explorer_sessions(hostile)
    print(f"{'2M requests, hostile runs':40} {heavy[0]:7.1f} {heavy[1]:7.2f} {heavy[2]:8.2f} {heavy[2] / base[2]:9.2f}")


def console_report(folder: Path) -> None:
    db = folder / "bench.duckdb"
    make_store(db)
    with duckdb.connect(str(db), read_only=True) as con:
        started = time.perf_counter()
        for _ in range(100):
            con.execute("SELECT 1").fetchall()
        in_process = (time.perf_counter() - started) / 100
    print(f"limits: time {LIMITS.timeout_s:g} s, memory {LIMITS.memory_bytes / 1e9:.2f} GB, "
          f"result {LIMITS.max_rows:,} rows / {LIMITS.max_bytes / 1e6:.0f} MB, {LIMITS.workers} workers")
    print(f"in-process DuckDB, SELECT 1: {in_process * 1e3:.3f} ms (no isolation)")
    print(f"{'attack':48} {'outcome':24} {'time s':>7} {'/limit':>7} {'peak GB':>8} {'/limit':>7}")
    sandboxed = None
    for name, sql, warm in [("first query: SELECT 1 (makes the copy)", "SELECT 1", False),
                            *((name, sql, True) for name, sql in ATTACKS.items())]:
        out = subprocess.run([sys.executable, "-c", PROBE.format(root=str(ROOT), db=str(db), sql=sql, warm=warm)],
                             capture_output=True, text=True, check=True)
        row = json.loads(out.stdout)
        sandboxed = row["seconds"] if sql == "SELECT 1" else sandboxed
        print(f"{name:48} {row['outcome']:24} {row['seconds']:7.2f} {row['seconds'] / LIMITS.timeout_s:7.2f} "
              f"{row['peak'] / 1e9:8.2f} {row['peak'] / LIMITS.memory_bytes:7.2f}")
    print(f"sandbox overhead: SELECT 1 takes {sandboxed:.2f} s, {sandboxed / in_process:,.0f}x in-process")


def import_report(folder: Path) -> None:
    limit = settings.get("SPECVIZ_MAX_UPLOAD_BYTES")
    print(f"\n{'import':32} {'size MB':>8} {'outcome':22} {'time s':>7} {'peak GB (bound ~1)':>19}")
    for name, path in import_attacks(folder).items():
        out = subprocess.run([sys.executable, "-c", IMPORT_PROBE.format(
            root=str(ROOT), db=str(folder / f"import-{path.stem}.duckdb"), path=str(path),
            max_bytes=limit)], capture_output=True, text=True, check=True)
        row = json.loads(out.stdout)
        print(f"{name:32} {path.stat().st_size / 1e6:8.0f} {row['outcome']:22} {row['seconds']:7.2f} "
              f"{row['peak'] / 1e9:19.2f}")


# Work one visitor or one command can start (issue 20), each in a fresh process: what it was before
# its bound, in the comment. The code runs after ``from specviz import ...`` of what it names.
CPU_ATTACKS = {
    "claim: 100,000 spaces and '!' (1,500 took 39 s)": (
        "from specviz.advice import claim_words",
        "claim_words.parse_claim('up to 3' + ' ' * 100_000 + '!')"),
    "claim: 100,000 characters of words and digits": (
        "from specviz.advice import claim_words",
        "claim_words.parse_claim('up to 3.2x faster at batch 8 ' * 3_500)"),
    "claim: 1,000 characters, '3x ' repeated (the bound)": (
        "from specviz.advice import claim_words",
        "claim_words.parse_claim('3x ' * 333)"),
    "/metrics: one series of 160,000 labels (36 s)": (
        "from specviz.live import exposition",
        "exposition.parse('vllm:spec_decode_num_drafts_total{' + ','.join(f'l{i}=\"v\"' for i in range(160_000)) + '} 1\\n')"),
    "/metrics: 20,000 models (6 MB a poll)": (
        "from specviz.live import exposition",
        "exposition.parse(''.join(f'vllm:spec_decode_num_drafts_total{{model_name=\"m{i}\"}} 1\\n' for i in range(20_000)))"),
    "/metrics: a model name of 16,000 characters": (
        "from specviz.live import exposition",
        "exposition.parse('vllm:spec_decode_num_drafts_total{model_name=\"' + 'm' * 16_000 + '\"} 1\\n')"),
    "Latency view: 131,072 tokens at γ 16 (1.8e9 cells, 40 s)": (
        "from pages import _latency",
        "_latency.simulated.__wrapped__(0.99, 16, 0.02, 0.03, 131_071)"),
    "roofline: 20,000 batches × 100 contexts (77 s, MemoryError)": (
        "from specviz import cli",
        "cli.main(['roofline', '--gpu', 'H100-SXM', '--target', 'Qwen3-32B', '--alpha', '0.8', '--gamma', '4', "
        "'--batch', *map(str, range(1, 20_001)), '--context', *map(str, range(1, 101))])"),
    "fit: 5,000 speedups without lengths (43 s, 18 GB)": (
        "import numpy as np; from specviz import scenario, settings; from specviz.model import calibration",
        "s = scenario.from_query_params({}, scenario.load_presets(settings.get('SPECVIZ_DATA_DIR')))[0]; "
        "b = np.linspace(1, 256, 5_000); calibration.calibrate(s.gpu, s.target, s.draft, s.engine, batch=b, "
        "gamma=4, context=1024, measured_speedup=np.ones_like(b))"),
    "fit: 10,000 points with lengths (at the bound)": (
        "import numpy as np; from specviz import scenario, settings; from specviz.model import calibration",
        "s = scenario.from_query_params({}, scenario.load_presets(settings.get('SPECVIZ_DATA_DIR')))[0]; "
        "b = np.linspace(1, 256, 10_000); calibration.calibrate(s.gpu, s.target, s.draft, s.engine, batch=b, "
        "gamma=4, context=1024, measured_speedup=np.linspace(2, 0.9, 10_000), acceptance_length=3.0)"),
    "scrape: the cloud metadata address": (
        "from specviz.live import scrape",
        "scrape.fetch_url('http://169.254.169.254/latest/meta-data/')"),
    "simulate --seed 10**400 (unexpected TypeError)": (
        "from specviz import cli",
        "cli.main(['simulate', '--alpha', '0.8', '--gamma', '4', '--seed', '1' + '0' * 400])"),
}
CPU_PROBE = textwrap.dedent("""
    import io, json, re, resource, sys, time, contextlib
    sys.path.insert(0, {root!r})
    {imports}
    from specviz.errors import SpecvizError
    started = time.process_time()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as said:
        try:
            result = {call}
            outcome = f"exit {{result}}" if isinstance(result, int) else "computed"
            if result == 2:
                outcome = "refused: " + said.getvalue().split("error: ")[-1][:40].strip()
        except SpecvizError as exc:
            outcome = "refused: " + exc.key
    cpu = time.process_time() - started
    peak = int(re.search(r"VmHWM:\\s+(\\d+) kB", open("/proc/self/status").read())[1]) * 1024
    print(json.dumps({{"outcome": outcome, "cpu": cpu, "peak": peak}}))
""")


def cpu_report() -> None:
    print(f"\n{'work a visitor or a command can start':58} {'outcome':44} {'CPU s':>6} {'peak GB':>8}")
    for name, (imports, call) in CPU_ATTACKS.items():
        out = subprocess.run([sys.executable, "-c", CPU_PROBE.format(root=str(ROOT), imports=imports, call=call)],
                             capture_output=True, text=True, cwd=ROOT)
        if out.returncode:
            print(f"{name:58} crashed: {out.stderr.strip().splitlines()[-1][:80]}")
            continue
        row = json.loads(out.stdout)
        print(f"{name:58} {row['outcome'][:44]:44} {row['cpu']:6.2f} {row['peak'] / 1e9:8.2f}")


def hostile_prometheus(instances: int, points: int) -> ThreadingHTTPServer:
    """A Prometheus API on loopback whose fleet is ``instances`` replicas of 100 models, answering
    every range query with all of them over ``points`` points (served from 127.0.0.1 only)."""
    names = ["vllm:spec_decode_num_drafts_total", "vllm:spec_decode_num_draft_tokens_total",
             "vllm:spec_decode_num_accepted_tokens_total", "vllm:spec_decode_num_accepted_tokens_per_pos_total",
             "vllm:num_requests_running", "vllm:generation_tokens_total", "vllm:kv_cache_usage_perc"]

    class Answer(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if "label/__name__/values" in self.path:
                data: Any = names
            else:
                query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
                start, step = float(query["start"][0]), float(query["step"][0])
                data = {"resultType": "matrix", "result": [
                    {"metric": {"model_name": f"m{i % 100}", "instance": f"host-{i}", "position": str(i % 4)},
                     "values": [[start + k * step, str(k)] for k in range(points)]} for i in range(instances)]}
            body = json.dumps({"status": "success", "data": data}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Answer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def fleet_report() -> None:
    """A fleet query split by instance against a hostile Prometheus (it took 136 s): CPU and the
    process's peak, at the row limit and past it, beside a baseline of one model."""
    print(f"\n{'fleet query (1 h at 30 s, by instance)':44} {'outcome':34} {'CPU s':>6} {'peak GB':>8}")
    for name, instances, points in (("baseline: 1 replica", 1, 121), ("90 replicas × 121 points (at the limit)", 90, 121),
                                    ("1,000 replicas × 121 points", 1_000, 121)):
        server = hostile_prometheus(instances, points)
        code = textwrap.dedent(f"""
            import json, resource, sys, time
            sys.path.insert(0, {str(ROOT)!r})
            from specviz.errors import SpecvizError
            from specviz.live import prometheus
            started = time.process_time()
            try:
                frame = prometheus.query_figures("http://127.0.0.1:{server.server_address[1]}", "1h", "30s",
                                                 end=1_700_000_000, by=("instance",))
                outcome = f"{{len(frame):,}} rows"
            except SpecvizError as exc:
                outcome = exc.key
            print(json.dumps({{"outcome": outcome, "cpu": time.process_time() - started,
                              "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}}))
        """)
        try:
            row = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                            check=True).stdout)
        finally:
            server.shutdown()
        print(f"{name:44} {row['outcome']:34} {row['cpu']:6.1f} {row['peak'] / 1e9:8.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=2_000_000, help="hostile runs in the sessions' store")
    parser.add_argument("--only", choices=["console", "imports", "cpu", "fleet", "sessions"], help="one part of the bench")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        if args.only in (None, "console"):
            console_report(Path(folder))
        if args.only in (None, "imports"):
            import_report(Path(folder))
        if args.only in (None, "cpu"):
            cpu_report()
        if args.only in (None, "fleet"):
            fleet_report()
        if args.only in (None, "sessions"):
            sessions_report(Path(folder), args.runs)


if __name__ == "__main__":
    main()
