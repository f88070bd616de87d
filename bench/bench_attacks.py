"""Benchmark: peak memory and time of the heaviest attacks (SQL console, large imports) against their bounds.

Run by hand: `.venv/bin/python bench/bench_attacks.py`. Each attack runs through `Store.query` in a
fresh Python process over a store holding the synthetic examples plus 1M per-request rows; the
process makes the sandbox's copy of the tables first (once per version of the data, timed on its
own in the first row) and reports the wall time from the call to the answer and the peak resident memory of the query
process it started (`RUSAGE_CHILDREN`). Baselines in the same run: a trivial query through the same
sandbox (the cost of a fresh, locked-down process) and the same trivial query in-process on an open
DuckDB connection (what the console cost before it ran queries in a process of their own).

Imports run in a fresh process each; the peak is that process's own high-water mark (``VmHWM``,
interpreter and the file's bytes included), against the ~1 GB the import promises for any file
within the upload limit (``SPECVIZ_IMPORT_MEMORY_BYTES``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

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


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "bench.duckdb"
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
        limit = settings.get("SPECVIZ_MAX_UPLOAD_BYTES")
        print(f"\n{'import':32} {'size MB':>8} {'outcome':22} {'time s':>7} {'peak GB (bound ~1)':>19}")
        for name, path in import_attacks(Path(folder)).items():
            out = subprocess.run([sys.executable, "-c", IMPORT_PROBE.format(
                root=str(ROOT), db=str(Path(folder) / f"import-{path.stem}.duckdb"), path=str(path),
                max_bytes=limit)], capture_output=True, text=True, check=True)
            row = json.loads(out.stdout)
            print(f"{name:32} {path.stat().st_size / 1e6:8.0f} {row['outcome']:22} {row['seconds']:7.2f} "
                  f"{row['peak'] / 1e9:19.2f}")


if __name__ == "__main__":
    main()
