"""``reclaimlab reproduce NAME``: run a seed thread's situations under each policy, print our
tables beside the thread's published figures, and check the claims the thread makes.

Runs go to ``OUT/NAME/<situation>/<policy>``; a run whose result directory is up to date (same
resolved scenario and seed) is reused, so an interrupted reproduction resumes where it stopped.
The report is printed and written to ``OUT/NAME/report.md``. Exit status 1 if a check fails."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..experiments import EXPERIMENTS
from ..experiments.runner import reproduce
from ._common import CliError, seed_arg

NAME = "reproduce"
HELP = "reproduce a seed thread's experiments beside its published figures"
DESCRIPTION = (
    "Run each situation of a seed thread's experiment under the policies it compares (same "
    "seed), print mmtests-style tables with the thread's own figures beside ours, and check "
    "the direction and size of the effects the thread claims. Experiments: "
    + ", ".join(sorted(EXPERIMENTS))
    + "."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("experiment", choices=sorted(EXPERIMENTS), metavar="EXPERIMENT",
                   help="one of: " + ", ".join(sorted(EXPERIMENTS)))
    p.add_argument("--out", metavar="DIR", default="results/reproduce",
                   help="where the runs and report.md go (default: results/reproduce)")
    p.add_argument("--seed", type=seed_arg, default=1, metavar="N", help="seed (default: 1)")
    p.add_argument("--only", metavar="KEYS",
                   help="comma-separated situation keys to run (default: all)")
    p.add_argument("--trace", action="store_true",
                   help="also record each run's trace (postprocess form) for the rows only a "
                        "trace gives (wake-kswapd requests, writes split by reclaimer); slower, "
                        "and the traces take gigabytes")


def main(args: argparse.Namespace) -> int:
    exp = EXPERIMENTS[args.experiment]
    situations = exp.SITUATIONS
    if args.only:
        keys = [k.strip() for k in args.only.split(",") if k.strip()]
        known = {s.key for s in situations}
        bad = [k for k in keys if k not in known]
        if bad:
            raise CliError(f"--only: no situation {', '.join(bad)} in {exp.NAME} "
                           f"(it has {', '.join(sorted(known))})")
        situations = [s for s in situations if s.key in keys]
    root = Path(args.out) / exp.NAME
    args.results_dir = root

    def progress(sit, policy: str, got) -> None:
        print(f"{exp.NAME} {sit.key} {policy}: {'up to date' if got.reused else 'done'} "
              f"({got.path})", file=sys.stderr, flush=True)

    own = getattr(exp, "reproduce", None)
    if own is not None:
        done = own(situations, root, args.seed, trace=args.trace, on_run=progress)
    else:
        done = reproduce(exp, situations, root, args.seed, trace=args.trace, on_run=progress)
    sys.stdout.write(done.report)
    return 1 if done.failed else 0
