"""Benchmark: a per-request CSV imported into the store, against DuckDB's own floor, in one run.

Run by hand: `.venv/bin/python bench/bench_ingest.py [rows ...]` (default 1,000,000; the issue's
second size is 10,000,000, about 800 MB). Each measurement runs in a fresh child process, which
reports its wall time and its peak resident memory (VmHWM):

* floor: DuckDB alone, ``CREATE TABLE t AS SELECT * FROM read_csv(file)`` and ``CHECKPOINT`` into
  a new database file: the least any import of this file into DuckDB can cost.
* specviz: ``Store.import_path`` into a new store: the file copied privately, hashed and its line
  ends counted (a piece at a time, never whole in memory), format detection, the memory estimate,
  one sniff, the requests inserted straight from the file, then each run's mean and p50/p90/p99
  from the stored requests, all in one transaction.
* pandas: ``read_csv`` into memory, which writes nothing (for scale).

Then the per-run summary: p50/p99 of TTFT and ITL per run (label, workload, concurrency), from
``Store.request_summary()`` over the stored requests against pandas' groupby quantile.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from specviz.results.store import Store  # noqa: E402

CHUNK_ROWS = 1_000_000  # the CSV is written in chunks: 10M rows at once would need GBs of pandas

# Each child prints {"seconds": wall time of the work, "peak_bytes": VmHWM at the end}.
CHILD = """
import json, re, sys, time
sys.path.insert(0, {root!r})
def peak():
    return int(re.search(r"VmHWM:\\s+(\\d+) kB", open("/proc/self/status").read())[1]) * 1024
{setup}
started = time.perf_counter()
{work}
print(json.dumps({{"seconds": time.perf_counter() - started, "peak_bytes": peak()}}))
"""
FLOOR = ("import duckdb\ncon = duckdb.connect({db!r})",
         "con.execute('CREATE TABLE t AS SELECT * FROM read_csv(?)', [{csv!r}])\ncon.execute('CHECKPOINT')\n"
         "con.close()")
SPECVIZ = ("from specviz.results.store import Store\nstore = Store({db!r})",
           "result = store.import_path({csv!r})\nassert result.status == 'imported', result")
PANDAS = ("import pandas as pd", "frame = pd.read_csv({csv!r})")


def make_csv(path: Path, rows: int) -> None:
    """Synthetic requests of 48 runs (2 labels × 3 workloads × 8 concurrencies), written in chunks."""
    rng = np.random.default_rng(0)
    with open(path, "w") as out:
        for start in range(0, rows, CHUNK_ROWS):
            n = min(CHUNK_ROWS, rows - start)
            concurrency = rng.choice([1, 2, 4, 8, 16, 32, 64, 128], n)
            pd.DataFrame({
                "label": rng.choice(["baseline", "eagle-k4"], n),
                "workload": rng.choice(["chat", "code", "json"], n),
                "concurrency": concurrency,
                "ttft_ms": rng.gamma(2.0, 20.0, n) * (1 + concurrency / 32),
                "itl_ms": rng.gamma(5.0, 2.0, n) * (1 + concurrency / 64),
                "e2el_ms": rng.gamma(4.0, 300.0, n),
                "input_tokens": rng.integers(64, 2048, n),
                "output_tokens": rng.integers(16, 1024, n),
            }).to_csv(out, index=False, header=start == 0)


def in_child(kind: tuple[str, str], **paths: str) -> dict[str, float]:
    setup, work = (part.format(**paths) for part in kind)
    script = CHILD.format(root=str(ROOT), setup=setup, work=work)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"the child failed:\n{out.stderr.strip().splitlines()[-1]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def timed(fn) -> tuple[float, object]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def measure(rows: int, tmp: Path) -> float:
    csv_path = tmp / f"requests_{rows}.csv"
    make_csv(csv_path, rows)
    size_mb = csv_path.stat().st_size / 1e6
    floor = in_child(FLOOR, db=str(tmp / f"floor_{rows}.duckdb"), csv=str(csv_path))
    database = tmp / f"specviz_{rows}.duckdb"
    ours = in_child(SPECVIZ, db=str(database), csv=str(csv_path))
    print(f"{rows:,} per-request rows, {size_mb:,.0f} MB CSV, 48 runs")
    print(f"  DuckDB floor (CTAS + CHECKPOINT) {floor['seconds']:7.2f} s  peak RSS {floor['peak_bytes'] / 1e9:5.2f} GB")
    print(f"  specviz import                   {ours['seconds']:7.2f} s  peak RSS {ours['peak_bytes'] / 1e9:5.2f} GB"
          f"  | {ours['seconds'] / floor['seconds']:4.2f}x the floor")
    if rows <= 2_000_000:  # pandas holds the whole frame: skipped for the large size
        read = in_child(PANDAS, csv=str(csv_path))
        print(f"  pandas read_csv (writes nothing) {read['seconds']:7.2f} s  peak RSS {read['peak_bytes'] / 1e9:5.2f} GB")
        frame = pd.read_csv(csv_path)
        keys = ["label", "workload", "concurrency"]
        t_pandas, pandas_summary = timed(
            lambda: frame.groupby(keys)[["ttft_ms", "itl_ms"]].quantile([0.5, 0.99]).unstack())
        store = Store(database)
        t_summary, summary = timed(store.request_summary)
        t_stored, stored = timed(store.runs)
        assert len(summary) == len(pandas_summary) == len(stored) == 48
        p99 = float(summary.sort_values("p99_ttft_ms").p99_ttft_ms.iloc[-1])
        assert np.isclose(p99, pandas_summary[("ttft_ms", 0.99)].max()), "summaries disagree"
        print(f"  per-run p50/p99 recomputed from the stored requests {t_summary * 1e3:6.0f} ms | pandas groupby "
              f"{t_pandas * 1e3:6.0f} ms | the summaries stored at import, read back {t_stored * 1e3:5.0f} ms")
    csv_path.unlink()
    return ours["seconds"]


def main() -> None:
    sizes = [int(arg) for arg in sys.argv[1:]] or [1_000_000]
    with tempfile.TemporaryDirectory() as tmp:
        seconds = [measure(rows, Path(tmp)) for rows in sizes]
    for rows, took in zip(sizes[1:], seconds[1:]):
        print(f"specviz: {rows:,} rows took {took / seconds[0]:.1f}x the time of {sizes[0]:,}")


if __name__ == "__main__":
    main()
