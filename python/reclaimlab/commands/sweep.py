"""``reclaimlab sweep SWEEP.toml --out DIR``: a scenario × axes × seeds, into the result store.

The sweep itself (file format, planning, the pool and Ray backends, the summaries) is
:mod:`reclaimlab.sweep`; this module parses arguments, holds the store's lock and shows
progress with rich.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .. import sweep as sweeps
from ..progress import format_seconds, sweep_progress
from ._common import CliError, add_store_argument, open_store, positive_int

NAME = "sweep"
HELP = "run a scenario over axes of scenario keys and seeds, resumably"
DESCRIPTION = (
    "Run every point of a sweep file (a base scenario, [axes] of dotted scenario keys with their "
    "values, optional [[include]] points, seeds) into a content-addressed result store, skipping "
    "runs the store already holds, and write DIR/summary.parquet and DIR/summary.csv (one row "
    "per run). Runs go to a local process pool, or to a Ray cluster with --ray. Killing the "
    "sweep loses no finished run; run it again to resume. Exit status 1 if a run failed."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("sweep", metavar="SWEEP.toml", help="the sweep file")
    p.add_argument("--out", metavar="DIR", required=True,
                   help="where summary.parquet, summary.csv and (unless --store) the store go")
    p.add_argument("--workers", type=positive_int, metavar="N",
                   help="local worker processes (default: the number of CPUs)")
    p.add_argument("--ray", metavar="ADDRESS",
                   help="run each run as a Ray task on the cluster at ADDRESS (host:port, or "
                        "auto); needs pip install 'reclaimlab[ray]'")
    add_store_argument(p)


def main(args: argparse.Namespace) -> int:
    if args.ray and args.workers:
        raise CliError("--workers is for the local pool; with --ray the cluster decides")
    spec = sweeps.load(args.sweep)  # SweepError: cli prints it and exits 2
    jobs = sweeps.plan(spec)
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise CliError(f"--out {out}: cannot create the directory: {e.strerror}; give another --out")

    args.results_dir = out
    store = open_store(args, out)
    with store.writing(f"reclaimlab sweep {args.sweep}"):
        sweeps.write_manifest(out, spec, store)
        with sweep_progress(sys.stderr) as on_event:
            got = sweeps.execute(jobs, store, out, spec.columns, workers=args.workers,
                                 ray=args.ray, on_event=on_event)
    total = len(jobs)
    print(
        f"sweep: {total} runs: {got.done} run now, {got.reused} already in the store, "
        f"{got.failed} failed, in {format_seconds(got.wall_seconds)} (store writes "
        f"{got.store_cpu_seconds:.2f} s CPU); {out / sweeps.SUMMARY_CSV}",
        flush=True,
    )
    return 1 if got.failed else 0
