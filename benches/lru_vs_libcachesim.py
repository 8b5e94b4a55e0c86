"""Side-by-side: ``reclaimlab lru`` against libCacheSim's compiled LRU on the same trace.

Writes one Zipf trace in oracleGeneral format to a temporary file, then alternates the two
simulators on it ``--rounds`` times (the order flips every round, so neither always runs on a
warmer machine) and prints each one's requests per second, their ratio and both miss counts::

    python benches/lru_vs_libcachesim.py --alpha 1.0 --objects 1000000 \\
        --requests 10000000 --capacity 100000 --rounds 5

Each timing is the wall time of one complete run from the file, in this process: libCacheSim
builds its ``TraceReader`` (compiled, mmap; ``ignore_obj_size`` so capacity counts objects) and an
``LRU`` and runs its compiled ``process_trace``; reclaimlab runs ``reclaimlab.lru`` (the function
behind ``reclaimlab lru``: open, read, simulate, in Rust without the GIL). The trace file is in
the page cache for both (it was just written). Requests/s is the median over the rounds. Exit
status 1 if the miss counts differ.

Needs the test extra (``pip install -e '.[test]'``, as ``scripts/setup.sh`` does) for libcachesim.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import libcachesim as lcs  # noqa: E402
import tracegen  # noqa: E402

import reclaimlab  # noqa: E402

LIBCACHESIM = {"lru": lcs.LRU, "fifo": lcs.FIFO, "clock": lcs.Clock}


HASHPOWER: int | None = None  # --hashpower; None: libCacheSim's default


def run_libcachesim(path: str, capacity: int, policy: str) -> tuple[float, int, int]:
    """(seconds, requests, misses)."""
    t0 = time.perf_counter()
    reader = lcs.TraceReader(path, lcs.TraceType.ORACLE_GENERAL_TRACE, lcs.ReaderInitParam(ignore_obj_size=True))
    extra = {} if HASHPOWER is None else {"hashpower": HASHPOWER}
    cache = LIBCACHESIM[policy](capacity, **extra)
    miss_ratio, _ = cache.process_trace(reader)
    seconds = time.perf_counter() - t0
    requests = reader.get_num_of_req()
    return seconds, requests, round(miss_ratio * requests)


def run_reclaimlab(path: str, capacity: int, policy: str) -> tuple[float, int, int]:
    t0 = time.perf_counter()
    r = reclaimlab.lru(path, capacity, policy)
    seconds = time.perf_counter() - t0
    return seconds, r["requests"], r["misses"]


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--alpha", type=float, default=1.0, help="Zipf exponent (default 1.0)")
    p.add_argument("--objects", type=int, default=1_000_000, help="distinct objects to draw from (default 1M)")
    p.add_argument("--requests", type=int, default=10_000_000, help="requests in the trace (default 10M)")
    p.add_argument("--capacity", type=int, default=100_000, help="cache capacity in objects (default 100k)")
    p.add_argument("--rounds", type=int, default=5, help="runs of each simulator, alternated (default 5)")
    p.add_argument("--policy", choices=sorted(LIBCACHESIM), default="lru", help="policy (default lru)")
    p.add_argument("--seed", type=int, default=1, help="trace seed (default 1)")
    p.add_argument(
        "--hashpower",
        type=int,
        help="libCacheSim's hash table size (log2 buckets; default: libCacheSim's own default, 24)",
    )
    a = p.parse_args(argv)
    global HASHPOWER
    HASHPOWER = a.hashpower
    if a.rounds < 1 or a.capacity < 1 or a.requests < 1 or a.objects < 1:
        p.error("rounds, capacity, requests and objects must be positive")

    print(
        f"trace: Zipf alpha={a.alpha}, {a.objects} objects, {a.requests} requests, seed {a.seed}; "
        f"{a.policy.upper()} capacity {a.capacity} objects; {a.rounds} rounds; libCacheSim hashpower "
        f"{'default' if a.hashpower is None else a.hashpower}"
    )
    print(
        f"machine: {cpu_model()}, {os.cpu_count()} CPUs; Python {platform.python_version()}; "
        f"libcachesim {version('libcachesim')}; reclaimlab {reclaimlab.__version__}"
    )
    with tempfile.TemporaryDirectory(prefix="lru-bench-") as tmp:
        path = str(Path(tmp) / "zipf.oracleGeneral")
        t0 = time.perf_counter()
        ids = tracegen.zipf_ids(a.objects, a.requests, a.alpha, a.seed)
        tracegen.write_oracle(path, tracegen.records(ids))
        del ids
        print(f"wrote {path} ({os.path.getsize(path) / 1e6:.0f} MB) in {time.perf_counter() - t0:.1f} s\n")

        runners = [("libCacheSim", run_libcachesim), ("reclaimlab", run_reclaimlab)]
        times: dict[str, list[float]] = {name: [] for name, _ in runners}
        counts: dict[str, set[tuple[int, int]]] = {name: set() for name, _ in runners}
        print(f"{'round':>5}  {'simulator':<11}  {'seconds':>8}  {'requests/s':>12}  {'misses':>10}")
        for rnd in range(1, a.rounds + 1):
            order = runners if rnd % 2 else runners[::-1]
            for name, fn in order:
                seconds, requests, misses = fn(path, a.capacity, a.policy)
                times[name].append(seconds)
                counts[name].add((requests, misses))
                print(f"{rnd:>5}  {name:<11}  {seconds:>8.3f}  {requests / seconds:>12,.0f}  {misses:>10}")

    print()
    rate = {}
    for name in times:
        (requests, misses), *more = sorted(counts[name])
        if more:
            print(f"error: {name} gave different counts in different rounds: {sorted(counts[name])}")
            return 1
        rate[name] = requests / statistics.median(times[name])
        best = requests / min(times[name])
        print(
            f"{name:<11}  median {rate[name]:>12,.0f} requests/s  (best {best:,.0f})  "
            f"requests {requests}  misses {misses}"
        )
    ratio = rate["reclaimlab"] / rate["libCacheSim"]
    print(f"ratio        reclaimlab / libCacheSim = {ratio:.2f}x (median requests/s)")
    same = counts["reclaimlab"] == counts["libCacheSim"]
    print(f"misses       {'identical' if same else 'DIFFERENT'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
