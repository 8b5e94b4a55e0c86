"""``reclaimlab run SCENARIO``: run one scenario, write its result directory, print a summary."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .. import api
from ..progress import ProgressBar
from ..results import output_lock, result_dir_name
from ..tables import key_value_table, run_summary_rows
from ._common import check_output_dir, invariants_arg, seed_arg

NAME = "run"
HELP = "run one scenario"
DESCRIPTION = (
    "Run one scenario and write vmstat, zoneinfo, buddyinfo, summary.json and timeseries.parquet "
    "to the output directory (default: results/<scenario name>)."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("scenario", metavar="SCENARIO", help="scenario TOML file")
    p.add_argument("--seed", type=seed_arg, metavar="N", help="override the scenario's seed")
    p.add_argument("--out", metavar="DIR", help="output directory (default: results/<scenario name>)")
    p.add_argument(
        "--show-defaults",
        action="store_true",
        help="print the full scenario with every default filled in, and exit",
    )
    p.add_argument(
        "--trace",
        choices=["kernel", "postprocess"],
        help="also write `trace`: the reclaim events as 6.1 ftrace text (kernel), or in the form "
        "the kernel's trace-vmscan-postprocess.pl parses (postprocess)",
    )
    p.add_argument(
        "--check-invariants",
        type=invariants_arg,
        default="off",
        metavar="{off,every,N}",
        help="check the simulator's invariants after every event, every Nth event, or never (default: off)",
    )


def main(args: argparse.Namespace) -> int:
    src = api.scenario_source(args.scenario)
    if args.show_defaults:
        sys.stdout.write(api.show_defaults(src))
        return 0
    info = api.scenario_info(src)
    out = Path(args.out) if args.out else Path("results") / result_dir_name(str(info["name"]))
    # Checked before the run, not after it: a bad --out must not cost the simulation.
    check_output_dir(out)
    args.results_dir = out
    with output_lock(out, f"reclaimlab run {args.scenario}"):
        bar = ProgressBar(sys.stderr)
        result = api.run(
            src, seed=args.seed, invariants=args.check_invariants, progress=bar, trace=args.trace
        )
        result.write(out)
    rows = run_summary_rows(
        scenario=result.name if result.name is not None else info["name"],
        seed=result.seed if result.seed is not None else (args.seed if args.seed is not None else info["seed"]),
        sim_time_ns=result.sim_time_ns,
        wall_time_s=result.wall_time_s,
        headline=result.headline,
        out=str(out),
    )
    sys.stdout.write(key_value_table(rows))
    return 0
