"""Drift monitors' calibration (docs/reference/drift.md, Calibration) on one core: the time of
`drift.calibration.calibrate` (2,000 runs, the search for h and ARL1 at R = 2 and 3) at
`arl0_target` 10,000 and 100,000, next to the plain-tool limit measured in the same run: one
ARL0 estimate at the h it returned by the plainest vectorised NumPy loop (every run advanced one
step at a time until all have signalled), the least any simulation-based calibration does.

    taskset -c 0 .venv/bin/python bench/drift_bench.py                  # both targets, 3 rounds
    taskset -c 0 .venv/bin/python bench/drift_bench.py --targets 10000 --rounds 5

The baseline is the reference's worked example (100 points at c = 0.3 with 30 followed, 100 at
0.9 with 90 followed), `over_reliance`, R_A = 2. The rounds alternate the service's code and the
limit. Prints one JSON line last."""

import argparse
import json
import math
import os
import statistics
import sys
import time
from pathlib import Path

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from drift.calibration import calibrate  # noqa: E402
from drift.charts import fit_follow_model, follow_probability  # noqa: E402


def worked_example_mix() -> list[float]:
    fit = fit_follow_model([(0.3, 1)] * 30 + [(0.3, 0)] * 70 + [(0.9, 1)] * 90 + [(0.9, 0)] * 10)
    return [follow_probability(fit, c) for c in [0.3] * 100 + [0.9] * 100]


def plain_arl0(mix: list[float], h: float, runs: int, seed: int) -> float:
    """The plain loop: all live runs advance one step per iteration until every one has signalled."""
    rng = np.random.default_rng(seed)
    p = np.asarray(mix)
    x, lengths, alive, step = np.zeros(runs), np.zeros(runs), np.arange(runs), 0
    while alive.size:
        step += 1
        i = rng.integers(0, p.size, alive.size)
        e = rng.random(alive.size) < p[i]
        x[alive] = np.maximum(0.0, x[alive] + e * math.log(2.0) - np.log(1 + p[i]))
        done = x[alive] >= h
        lengths[alive[done]] = step
        alive = alive[~done]
    return float(lengths.mean())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--targets", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    mix = worked_example_mix()
    out: dict[str, object] = {
        "runs": args.runs,
        "load_average": os.getloadavg()[0],
        "cpus": sorted(os.sched_getaffinity(0)),
    }
    for target in args.targets:
        service, limit, hs = [], [], []
        for round_ in range(args.rounds):
            start = time.perf_counter()
            result = calibrate(mix, odds_ratio=2.0, arl0_target=target, runs=args.runs, seed=round_)
            service.append(time.perf_counter() - start)
            hs.append(result.h)
            start = time.perf_counter()
            plain_arl0(mix, result.h, args.runs, round_)
            limit.append(time.perf_counter() - start)
            print(
                f"target {target} round {round_}: calibrate {service[-1]:.2f} s (h {result.h}), "
                f"plain ARL0 at h {limit[-1]:.2f} s",
                file=sys.stderr,
            )
        out[str(target)] = {
            "calibrate_s": [round(s, 2) for s in service],
            "plain_one_h_s": [round(s, 2) for s in limit],
            "ratio_median": round(statistics.median(s / p for s, p in zip(service, limit, strict=True)), 2),
            "h": hs,
        }
    out["load_average_end"] = os.getloadavg()[0]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
