"""Wall time of ``reclaimlab reproduce EXPERIMENT`` from scratch (no reused runs), per situation
and policy, best of N rounds; also peak RSS of the process. Each round writes to a fresh
temporary directory.

Usage: .venv/bin/python benches/reproduce.py [EXPERIMENT] [--rounds N]
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

from reclaimlab import api
from reclaimlab.experiments import EXPERIMENTS


def one_round(exp, root: Path) -> dict[str, float]:
    times: dict[str, float] = {}
    for sit in exp.SITUATIONS:
        sdir = root / sit.key
        sdir.mkdir(parents=True)
        if sit.prepare is not None:
            t = time.perf_counter()
            sit.prepare(sdir, 1)
            times[f"{sit.key} prepare"] = time.perf_counter() - t
        for _, policy in sit.policies:
            t = time.perf_counter()
            api.run(sit.scenario(policy, 1, sdir), seed=1, out=sdir / policy)
            times[f"{sit.key} {policy}"] = time.perf_counter() - t
    return times


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("experiment", nargs="?", default="kswapd-highorder", choices=sorted(EXPERIMENTS))
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    exp = EXPERIMENTS[args.experiment]
    rounds = []
    for _ in range(args.rounds):
        with tempfile.TemporaryDirectory() as tmp:
            rounds.append(one_round(exp, Path(tmp)))
    best = min(rounds, key=lambda r: sum(r.values()))
    totals = sorted(sum(r.values()) for r in rounds)
    for step, secs in best.items():
        print(f"{step:<20} {secs:6.2f} s")
    print(f"{'total (best round)':<20} {totals[0]:6.2f} s   all rounds: "
          + ", ".join(f"{t:.2f}" for t in totals))
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {rss:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
