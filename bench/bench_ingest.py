"""Benchmark: a 1M-row per-request CSV ingested and summarised, specviz vs pandas, in one run.

Run by hand: `.venv/bin/python bench/bench_ingest.py [rows]`. specviz's ingest is a full import
into a DuckDB file (hashing, format detection, typed staging, one transaction that writes the
requests and the per-run summary rows); pandas' is `read_csv` into memory, which writes nothing. The
summary is p50/p99 of TTFT and ITL per run (label, workload, concurrency): specviz's
`Store.request_summary()` over the stored tables vs pandas' groupby quantile on the frame in memory.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from specviz.store import Store  # noqa: E402


def make_csv(path: Path, rows: int) -> None:
    rng = np.random.default_rng(0)
    concurrency = rng.choice([1, 2, 4, 8, 16, 32, 64, 128], rows)
    frame = pd.DataFrame({
        "label": rng.choice(["baseline", "eagle-k4"], rows),
        "workload": rng.choice(["chat", "code", "json"], rows),
        "concurrency": concurrency,
        "ttft_ms": rng.gamma(2.0, 20.0, rows) * (1 + concurrency / 32),
        "itl_ms": rng.gamma(5.0, 2.0, rows) * (1 + concurrency / 64),
        "e2el_ms": rng.gamma(4.0, 300.0, rows),
        "input_tokens": rng.integers(64, 2048, rows),
        "output_tokens": rng.integers(16, 1024, rows),
    })
    frame.to_csv(path, index=False)


def timed(fn) -> tuple[float, object]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def main() -> None:
    rows = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    with tempfile.TemporaryDirectory() as tmp:
        csv_path = Path(tmp) / "requests.csv"
        make_csv(csv_path, rows)
        size_mb = csv_path.stat().st_size / 1e6

        t_pandas_read, frame = timed(lambda: pd.read_csv(csv_path))
        keys = ["label", "workload", "concurrency"]
        t_pandas_summary, pandas_summary = timed(
            lambda: frame.groupby(keys)[["ttft_ms", "itl_ms"]].quantile([0.5, 0.99]).unstack())

        store = Store(Path(tmp) / "bench.duckdb")
        t_ingest, result = timed(lambda: store.import_path(csv_path))
        t_summary, summary = timed(store.request_summary)
        t_stored, stored = timed(store.runs)
        store.close()

    assert result.requests == rows and len(summary) == len(pandas_summary) == 48
    p99 = float(summary.sort_values("p99_ttft_ms").p99_ttft_ms.iloc[-1])
    assert np.isclose(p99, pandas_summary[("ttft_ms", 0.99)].max()), "summaries disagree"
    print(f"{rows:,} per-request rows, {size_mb:.0f} MB CSV, 48 runs")
    print(f"ingest : specviz import {t_ingest:6.2f} s  | pandas read_csv {t_pandas_read:6.2f} s  | "
          f"ratio {t_pandas_read / t_ingest:5.2f}x")
    print(f"summary: specviz        {t_summary * 1e3:6.0f} ms | pandas groupby   {t_pandas_summary * 1e3:6.0f} ms | "
          f"ratio {t_pandas_summary / t_summary:5.2f}x  (recomputed from the 1M stored requests)")
    print(f"summary: specviz        {t_stored * 1e3:6.0f} ms | pandas groupby   {t_pandas_summary * 1e3:6.0f} ms | "
          f"ratio {t_pandas_summary / t_stored:5.2f}x  (the per-run p50/p99 that the import stored, "
          f"read back; computing them is part of the ingest time)")
    assert len(stored) == 48


if __name__ == "__main__":
    main()
