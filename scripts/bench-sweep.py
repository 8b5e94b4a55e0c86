#!/usr/bin/env python3
"""Benchmark of `reclaimlab sweep`: scheduling overhead of a local pool and of Ray, and the cost
of the store. Prints Markdown rows for BENCHMARKS.md.

    .venv/bin/python scripts/bench-sweep.py [--runs 100] [--workers 2] [--ray]

A sweep of RUNS short runs (a 768 MiB host swapping a 1 GiB anonymous working set; 4 points x
RUNS/4 seeds) is run into a fresh store. Its *scheduling overhead* is what the sweep costs beyond
the runs themselves, on the cores it was given:

    wall overhead = (wall time x workers - summed run wall time) / summed run wall time
    CPU overhead  = (CPU time of the sweep and its workers - summed run CPU time
                     - CPU time of writing the store) / summed run CPU
    store writes  = CPU time of writing the entries into the store / summed run CPU

where a run's time is measured inside the worker around `api.run` and the encoding of its files
(what `reclaimlab run` does), from summary.csv. Everything else (starting workers, sending scenarios and
results between processes, writing entries and summaries) is overhead. The wall figure assumes
the cores are ours alone; on a shared machine the CPU figure is the one to trust. Then the same sweep again,
every run already in the store: the cost of the lookups and summaries alone. With --ray the
first measurement is repeated on a Ray head started here on loopback (its workers on the same
cores).
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

SCENARIO = """\
name = "bench-swap"
[sim]
seed = 1
sample_interval = "10ms"
[host]
ram = "768MiB"
cpus = 1
[swap]
size = "1GiB"
[oom]
allowed = false
[[workload]]
name = "hog"
[workload.anon]
size = "1GiB"
pattern = "random"
passes = {passes}
"""

SWEEP = """\
scenario = "bench.toml"
seeds = {seeds}
[axes]
"policy.kswapd_balance" = ["v2.6.36", "v6.1"]
"workload.hog.anon.size" = ["960MiB", "1GiB"]
"""


def sweep(args: list[str], env: dict | None = None) -> tuple[float, float, float]:
    """(wall time, CPU time of the sweep process and its workers, CPU time of its store
    writes) of one `reclaimlab sweep`."""
    exe = Path(sys.executable).with_name("reclaimlab")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run([str(exe), "sweep", *args], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        sys.exit(f"bench: sweep failed:\n{r.stdout}{r.stderr}")
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    store = float(re.search(r"store writes ([0-9.]+) s CPU", r.stdout).group(1))
    return wall, cpu, store


def measure(d: Path, out: str, extra: list[str], env=None):
    """(wall, CPU of the whole sweep, store-write CPU, summed run wall, summed run CPU, runs)."""
    wall, cpu, store = sweep([str(d / "s.toml"), "--out", str(d / out), *extra], env)
    df = pd.read_csv(d / out / "summary.csv")
    return wall, cpu, store, float(df["wall_time_s"].sum()), float(df["cpu_time_s"].sum()), len(df)


def store_put_ms(d: Path, n: int = 50) -> float:
    """Milliseconds to write one entry of this benchmark's runs into a store (fsyncs included)."""
    from reclaimlab import api
    from reclaimlab.results import result_files
    from reclaimlab.store import Store

    r = api.run(d / "bench.toml", seed=1)
    files = result_files(r.texts(), r.columns)
    st = Store(d / "put-store")
    with st.writing("bench"):
        t0 = time.perf_counter()
        for i in range(n):
            st.put(f"{i:064x}", files, wall_time_s=r.wall_time_s)
        return 1000 * (time.perf_counter() - t0) / n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--passes", type=int, default=6, help="passes over the working set per run")
    ap.add_argument("--ray", action="store_true", help="also measure on a local Ray head")
    a = ap.parse_args()
    d = Path(tempfile.mkdtemp(prefix="bench-sweep-"))
    try:
        (d / "bench.toml").write_text(SCENARIO.format(passes=a.passes))
        (d / "s.toml").write_text(SWEEP.format(seeds=a.runs // 4))
        load = os.getloadavg()[0]
        rows = []
        wall, cpu, store_cpu, runs, run_cpu, n = measure(d, "local", ["--workers", str(a.workers)])
        rows.append((f"local pool, {a.workers} workers", n, runs, wall,
                     (wall * a.workers - runs) / runs, run_cpu, cpu,
                     (cpu - run_cpu - store_cpu) / run_cpu, store_cpu / run_cpu))
        again, again_cpu, _ = sweep([str(d / "s.toml"), "--out", str(d / "local")])
        store = d / "local" / ".store"
        size = sum(p.stat().st_size for p in store.rglob("*") if p.is_file())
        put = store_put_ms(d)
        if a.ray:
            rows.append(ray_row(d, a.workers))
        print(f"{n} runs of {rows[0][2] / n:.3f} s on average, {os.cpu_count()} CPUs, load "
              f"average {load:.2f} at the start\n")
        print("| backend | runs | summed run wall (s) | sweep wall (s) | wall overhead | "
              "summed run CPU (s) | sweep CPU (s) | scheduling CPU overhead | store writes |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for name, n_, r_, w_, o_, rc, c_, co, so in rows:
            cpu_cells = f"{rc:.1f} | {c_:.1f} | {100 * co:.1f}%" if c_ is not None else f"{rc:.1f} | - | -"
            print(f"| {name} | {n_} | {r_:.1f} | {w_:.1f} | {100 * o_:.1f}% | {cpu_cells} | "
                  f"{100 * so:.1f}% |")
        per_run = (cpu - run_cpu - store_cpu - again_cpu) / n
        print(f"\nAgain, all {n} runs in the store: {again:.2f} s wall, {again_cpu:.2f} s CPU "
              f"(the whole command: start-up, imports, planning, lookups, summaries; the part of "
              f"the overhead that does not grow with the runs). Beyond that, scheduling costs "
              f"{1000 * per_run:.1f} ms CPU per run. "
              f"the store holds {size / 1e6:.1f} MB ({size / n / 1e3:.0f} kB per run); "
              f"writing one entry takes {put:.1f} ms.")
    finally:
        shutil.rmtree(d, ignore_errors=True)


def ray_row(d: Path, workers: int):
    ray_exe = Path(sys.executable).with_name("ray")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0", RAY_USAGE_STATS_ENABLED="0")
    temp = Path("/tmp") / f"rl-bench-ray-{os.getpid()}"
    head = subprocess.Popen(
        [str(ray_exe), "start", "--head", "--block", "--port", str(port), "--node-ip-address",
         "127.0.0.1", "--num-cpus", str(workers), "--include-dashboard", "false",
         "--disable-usage-stats", "--temp-dir", str(temp)],
        env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    sys.exit("bench: the Ray head did not come up")
                time.sleep(0.5)
        time.sleep(3)  # the raylet registers after the GCS listens
        wall, _, store_cpu, runs, run_cpu, n = measure(d, "ray", ["--ray", f"127.0.0.1:{port}"], env)
        # The Ray workers are the head's children, not ours: no CPU figure for the sweep.
        return (f"Ray, local head, {workers} CPUs", n, runs, wall, (wall * workers - runs) / runs,
                run_cpu, None, None, store_cpu / run_cpu)
    finally:
        os.killpg(head.pid, signal.SIGTERM)
        try:
            head.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(head.pid, signal.SIGKILL)
        shutil.rmtree(temp, ignore_errors=True)


if __name__ == "__main__":
    main()
