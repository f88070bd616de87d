"""Write data/examples/example_sweep.csv: SYNTHETIC example runs, not measurements.

A concurrency sweep (1 to 128) of Llama-3.1-8B on one H100, plain and with a γ = 4 EAGLE-style head,
for three workloads whose acceptance lengths follow seed 002's pattern (JSON > code > chat). Figures
come from specviz's own step model (an EAGLE head, vLLM V1's preset costs, context 1,024), plus 3 %
seeded noise, so that the explorer's "calibrate" has something to recover. Run from the repository
root:
`.venv/bin/python data/examples/generate.py`.
"""

import csv
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from specviz import calculator, scenario, settings  # noqa: E402
from specviz.model import spec  # noqa: E402

GAMMA = 4
WORKLOADS = {"json": 3.5, "code": 3.0, "chat": 2.4}  # mean tokens per step (acceptance length)
ZERO_ACCEPT = {"json": 0.12, "code": 0.18, "chat": 0.27}
CONCURRENCY = np.array([1, 2, 4, 8, 16, 32, 64, 128])


def main() -> None:
    presets = scenario.load_presets(settings.get("SPECVIZ_DATA_DIR"))
    chosen, _ = scenario.from_query_params({"target": "Llama-3.1-8B", "draft": "eagle", "tp": "1"}, presets)
    rng = np.random.default_rng(2026)
    rows = []
    for workload, length in WORKLOADS.items():
        alpha = spec.alpha_from_acceptance_length(length, GAMMA)
        r = calculator.evaluate_scenario(chosen, alpha, GAMMA, CONCURRENCY, 1024)
        for i, c in enumerate(CONCURRENCY):
            for speculative in (False, True):
                tokens_per_s = (r["spec_tokens_per_s"] if speculative else r["baseline_tokens_per_s"])[i]
                tokens_per_s *= 1 + rng.normal(0, 0.03)
                tpot = 1e3 * c / tokens_per_s
                rows.append({
                    "label": f"EXAMPLE {'eagle γ=4' if speculative else 'no speculation'}",
                    "workload": workload, "target_model": "Llama-3.1-8B", "gpu": "H100-SXM",
                    "engine": "synthetic", "spec_method": "eagle" if speculative else "",
                    "num_speculative_tokens": GAMMA if speculative else "", "concurrency": int(c),
                    "output_throughput": round(float(tokens_per_s), 1), "mean_tpot_ms": round(float(tpot), 3),
                    "p99_itl_ms": round(float(tpot * (GAMMA + 1 if speculative else 1.3)), 3),
                    "acceptance_length": round(length * (1 + rng.normal(0, 0.01)), 3) if speculative else "",
                    "zero_accept_rate": ZERO_ACCEPT[workload] if speculative else "",
                    "note": "synthetic example made by data/examples/generate.py, not a measurement",
                })
    path = Path(__file__).with_name("example_sweep.csv")
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {len(rows)} rows to {path}")


if __name__ == "__main__":
    main()
