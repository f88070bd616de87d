"""Benchmark: a per-request CSV imported into the store, against DuckDB's own floor, in one run.

Run by hand: `.venv/bin/python bench/bench_ingest.py [rows ...]` (default 1,000,000; the issue's
second size is 10,000,000, about 800 MB). Each measurement runs in a fresh child process, which
reports its wall time and its peak resident memory (VmHWM):

* floor: DuckDB alone, ``CREATE TABLE t AS SELECT * FROM read_csv(file)`` and ``CHECKPOINT`` into
  a new database file: the least any import of this file into DuckDB can cost.
* specviz: ``Store.import_path`` into a new store: the file read where it lies, hashed and its line
  ends counted (a piece at a time, never whole in memory), format detection, the memory estimate,
  one sniff, the requests inserted straight from the file, then each run's mean and p50/p90/p99
  from the stored requests, all in one transaction.
* pandas: ``read_csv`` into memory, which writes nothing (for scale).

Then the per-run summary: p50/p99 of TTFT and ITL per run (label, workload, concurrency), from
``Store.request_summary()`` over the stored requests against pandas' groupby quantile.

``bench/bench_ingest.py aiperf [lines ...]`` (default 1,000,000): an AIPerf ``profile_export.jsonl``
of that many profiling records (each line the shape of the second of
``tests/fixtures/aiperf_spec_decode_profile_export.jsonl``, about 1.6 KB, with its own times, verify
steps and acceptance histogram), against DuckDB's
``CREATE TABLE AS SELECT * FROM read_json(file)`` and ``CHECKPOINT``: specviz with its settings as
they are (``SPECVIZ_MAX_UPLOAD_BYTES`` refuses a file over 200 MB; the refusal and its time are
reported), then with the upload limit lifted (``SPECVIZ_IMPORT_MEMORY_BYTES`` as it is), the floor and
the import one after the other in three pairs, each pair's ratio and their median.

``bench/bench_ingest.py inference-perf [requests ...]`` (default 1,000,000): an inference-perf
``per_request_lifecycle_metrics.json`` of that many requests, each the shape of the first request
of the real sample (``../shared/samples/2026/inference_perf_0.5_two_stage/``: 8 token times,
``json.dumps(indent=2)`` as inference-perf writes it locally, about 1.2 KB a request) with its own
times and input length, against DuckDB's ``CREATE TABLE AS SELECT * FROM read_json(file)`` and
``CHECKPOINT``, in the same two ways.
"""

from __future__ import annotations

import json
import os
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

# Each child prints {"seconds": wall time of the work, "cpu_seconds": the CPU time its threads took
# for it (what contention for the cores does not stretch), "peak_bytes": VmHWM at the end}.
CHILD = """
import json, os, re, sys, time
sys.path.insert(0, {root!r})
def peak():
    return int(re.search(r"VmHWM:\\s+(\\d+) kB", open("/proc/self/status").read())[1]) * 1024
def cpu():
    return os.times().user + os.times().system
{setup}
started, cpu_started = time.perf_counter(), cpu()
{work}
print(json.dumps({{"seconds": time.perf_counter() - started, "cpu_seconds": cpu() - cpu_started,
                  "peak_bytes": peak()}}))
"""
FLOOR = ("import duckdb\ncon = duckdb.connect({db!r})",
         "con.execute('CREATE TABLE t AS SELECT * FROM read_csv(?)', [{csv!r}])\ncon.execute('CHECKPOINT')\n"
         "con.close()")
SPECVIZ = ("from specviz.results.store import Store\nstore = Store({db!r})",
           "result = store.import_path({csv!r})\nassert result.status == 'imported', result")
PANDAS = ("import pandas as pd", "frame = pd.read_csv({csv!r})")
JSON_FLOOR = ("import duckdb\ncon = duckdb.connect({db!r})",
              "con.execute('CREATE TABLE t AS SELECT * FROM read_json(?, format=?)', [{csv!r}, {fmt!r}])\n"
              "con.execute('CHECKPOINT')\ncon.close()")
# The import as `specviz ingest` makes it (its upload limit), a refusal reported instead of failing the child.
SPECVIZ_JSONL = ("from specviz import settings\nfrom specviz.results.importers import IngestError\n"
                 "from specviz.results.store import Store\nstore = Store({db!r})",
                 "try:\n    store.import_path({csv!r}, settings.get('SPECVIZ_MAX_UPLOAD_BYTES'))\n"
                 "except IngestError as exc:\n    print('refused:', exc)")


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


def make_aiperf_jsonl(path: Path, lines: int) -> None:
    """AIPerf per-request records with acceptance (γ = 3), written from one template a chunk at a time."""
    template = json.loads((ROOT / "tests/fixtures/aiperf_spec_decode_profile_export.jsonl").read_text().splitlines()[1])
    text = json.dumps(template, separators=(",", ":"))
    for key, value in (("1760000000000000000", "{start}"), ("1760000002000000000", "{end}"),
                       ('"value":100.0', '"value":{ttft}'), ('"value":2000.0', '"value":{e2el}'),
                       ('"0":39,"1":1,"3":3', '"0":{h0},"1":{h1},"2":{h2},"3":{h3}'),
                       ('"num_accepted_draft_tokens":10', '"num_accepted_draft_tokens":{accepted}'),
                       ('"num_draft_tokens":129', '"num_draft_tokens":{drafted}'),
                       ('"num_spec_steps":43', '"num_spec_steps":{steps}'),
                       ('"mean_acceptance_length":1.2325581395348837', '"mean_acceptance_length":{length}'),
                       ('"draft_acceptance_rate":0.07751937984496124', '"draft_acceptance_rate":{rate}')):
        assert key in text, key
        text = text.replace(key, value, 1)
    text = text.replace("{", "{{").replace("}", "}}")
    for field in ("start", "end", "ttft", "e2el", "h0", "h1", "h2", "h3", "accepted", "drafted", "steps", "length",
                  "rate"):
        text = text.replace("{{" + field + "}}", "{" + field + "}")
    rng = np.random.default_rng(0)
    with open(path, "w") as out:
        for first in range(0, lines, CHUNK_ROWS):
            n = min(CHUNK_ROWS, lines - first)
            steps = rng.integers(20, 200, n)
            hist = rng.multinomial(steps, [0.3, 0.25, 0.2, 0.25])
            accepted = hist @ np.arange(4)
            start = 1_760_000_000_000_000_000 + (first + np.arange(n)) * 1_000_000
            e2el = rng.gamma(4.0, 500.0, n)
            out.writelines(text.format(start=a, end=a + int(e * 1e6), ttft=t, e2el=e, h0=h[0], h1=h[1], h2=h[2],
                                       h3=h[3], accepted=c, drafted=3 * s, steps=s, length=1 + c / s,
                                       rate=c / (3 * s)) + "\n"
                           for a, e, t, h, c, s in zip(start.tolist(), e2el.tolist(), rng.gamma(2.0, 50.0, n).tolist(),
                                                       hist.tolist(), accepted.tolist(), steps.tolist()))


def make_inference_perf_json(path: Path, requests: int) -> None:
    """inference-perf per-request records shaped as the sample's first (8 token times), each with its
    own start, token times, end and input length, written from one template a chunk at a time."""
    sample = ROOT.parent / "shared/samples/2026/inference_perf_0.5_two_stage/per_request_lifecycle_metrics.json"
    record = json.loads(sample.read_text())[0]
    response = record["info"]["response_metrics"]
    tokens = len(response["output_token_times"])
    response["chunk_times"] = response["output_token_times"] = [f"@t{i}@" for i in range(tokens)]
    record["start_time"], record["end_time"] = "@start@", "@end@"
    record["info"]["input_tokens"] = record["info"]["request_metrics"]["text"]["input_tokens"] = "@input@"
    response["server_usage"]["prompt_tokens"] = "@input@"
    text = json.dumps([record], indent=2)[2:-2].replace("{", "{{").replace("}", "}}")  # one record as in the array
    for field in ("start", "end", "input", *(f"t{i}" for i in range(tokens))):
        text = text.replace(f'"@{field}@"', "{" + field + "}")
    rng = np.random.default_rng(0)
    with open(path, "w") as out:
        out.write("[\n")
        for first in range(0, requests, CHUNK_ROWS):
            n = min(CHUNK_ROWS, requests - first)
            start = (first + np.arange(n)) * 0.001
            gaps = rng.gamma(5.0, 0.004, (n, tokens))
            times = start[:, None] + rng.gamma(2.0, 0.05, n)[:, None] + np.cumsum(gaps, 1) - gaps[:, :1]
            inputs = rng.integers(64, 2048, n)
            out.write(",\n".join(text.format(start=a, end=t[-1] + 0.001, input=i, **{f"t{j}": v for j, v in enumerate(t)})
                                 for a, i, t in zip(start.tolist(), inputs.tolist(), times.tolist())))
            out.write(",\n" if first + n < requests else "\n")
        out.write("]\n")


def in_child(kind: tuple[str, str], env: dict[str, str] | None = None, **paths: str) -> dict[str, float]:
    setup, work = (part.format(**paths) for part in kind)
    script = CHILD.format(root=str(ROOT), setup=setup, work=work)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env={**os.environ, **(env or {})})
    if out.returncode:
        raise SystemExit(f"the child failed:\n{out.stderr.strip().splitlines()[-1]}")
    said = out.stdout.strip().splitlines()
    return {**json.loads(said[-1]), "said": " ".join(said[:-1])}


# Floor and import measured alternately, pairs of them: on the shared cores one pair's ratio moved from
# 1.06x to 1.33x between two pairs minutes apart (AIPerf, 1M lines, load 1.0-1.3).
JSON_PAIRS = 3


def measure_json(path: Path, what: str, fmt: str) -> None:
    """A per-request JSON file imported as ``specviz ingest`` would (its upload limit), then
    :data:`JSON_PAIRS` times DuckDB's ``read_json`` of the same file (``fmt``) and the import with
    that limit lifted, one after the other; each pair's ratio and their median."""
    tmp = path.parent
    print(f"{what}, {path.stat().st_size / 1e6:,.0f} MB of JSON")
    refused = in_child(SPECVIZ_JSONL, db=str(tmp / f"specviz_{path.stem}_refused.duckdb"), csv=str(path))
    print(f"  specviz import, settings as they are: {refused['seconds']:.2f} s  {refused['said'][:160]}")
    ratios, cpu_ratios = [], []
    for pair in range(JSON_PAIRS):
        databases = [tmp / f"json_floor_{path.stem}.duckdb", tmp / f"specviz_{path.stem}.duckdb"]
        floor = in_child(JSON_FLOOR, db=str(databases[0]), csv=str(path), fmt=fmt)
        ours = in_child(SPECVIZ_JSONL, {"SPECVIZ_MAX_UPLOAD_BYTES": str(10**12)}, db=str(databases[1]), csv=str(path))
        for database in databases:
            database.unlink(missing_ok=True)
        ratios.append(ours["seconds"] / floor["seconds"])
        cpu_ratios.append(ours["cpu_seconds"] / floor["cpu_seconds"])
        print(f"  pair {pair + 1}: DuckDB read_json (CTAS + CHECKPOINT) {floor['seconds']:6.2f} s (CPU {floor['cpu_seconds']:6.2f} s, "
              f"peak RSS {floor['peak_bytes'] / 1e9:4.2f} GB); specviz import, upload limit lifted {ours['seconds']:6.2f} s "
              f"(CPU {ours['cpu_seconds']:6.2f} s, peak RSS {ours['peak_bytes'] / 1e9:4.2f} GB) | {ratios[-1]:4.2f}x "
              f"(CPU {cpu_ratios[-1]:4.2f}x)  load {os.getloadavg()[0]:.1f}  {ours['said'][:120]}")
    print(f"  median of {JSON_PAIRS} pairs: {np.median(ratios):4.2f}x read_json (CPU {np.median(cpu_ratios):4.2f}x); "
          f"target 1.5x, peak RSS 1 GB")
    path.unlink()


def measure_aiperf(lines: int, tmp: Path) -> None:
    path = tmp / f"profile_export_{lines}.jsonl"
    make_aiperf_jsonl(path, lines)
    measure_json(path, f"{lines:,} AIPerf per-request records", "newline_delimited")


def measure_inference_perf(requests: int, tmp: Path) -> None:
    path = tmp / f"per_request_lifecycle_metrics_{requests}.json"
    make_inference_perf_json(path, requests)
    measure_json(path, f"{requests:,} inference-perf per-request records", "array")


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
    if sys.argv[1:2] in (["aiperf"], ["inference-perf"]):
        measure_format = measure_aiperf if sys.argv[1] == "aiperf" else measure_inference_perf
        with tempfile.TemporaryDirectory() as tmp:
            for count in [int(arg) for arg in sys.argv[2:]] or [1_000_000]:
                measure_format(count, Path(tmp))
        return
    sizes = [int(arg) for arg in sys.argv[1:]] or [1_000_000]
    with tempfile.TemporaryDirectory() as tmp:
        seconds = [measure(rows, Path(tmp)) for rows in sizes]
    for rows, took in zip(sizes[1:], seconds[1:]):
        print(f"specviz: {rows:,} rows took {took / seconds[0]:.1f}x the time of {sizes[0]:,}")


if __name__ == "__main__":
    main()
