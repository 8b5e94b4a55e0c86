"""``reclaimlab reproduce NAME``: run a seed thread's situations under each policy, print our
tables beside the thread's published figures, and check the claims the thread makes.

Runs go to ``OUT/NAME/<situation>/<policy>``; a run whose result directory is up to date (same
resolved scenario and seed) is reused, so an interrupted reproduction resumes where it stopped.
The report is printed and written to ``OUT/NAME/report.md``. Exit status 1 if a check fails."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from .. import api
from ..compare import (
    Cell,
    Column,
    change_percent,
    format_cell,
    format_value,
    load_run,
    render_markdown,
    unit,
)
from ..experiments import EXPERIMENTS
from ..output import write_text_atomic
from ..tables import markdown_table
from . import CliError
from ._common import seed_arg
from .examples import is_up_to_date, read_summary

NAME = "reproduce"
HELP = "reproduce a seed thread's experiments beside its published figures"
DESCRIPTION = (
    "Run each situation of a seed thread's experiment under the policies it compares (same "
    "seed), print mmtests-style tables with the thread's own figures beside ours, and check "
    "the direction and size of the effects the thread claims. Experiments: "
    + ", ".join(sorted(EXPERIMENTS))
    + "."
)

#: The sections of the comparison table a reproduction prints (the full vmstat dump is in
#: each run's directory).
SECTIONS = ("MMTests Statistics: duration", "FTrace Reclaim Statistics: vmscan", "proc vmstat: Faults")


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


def _thread_table(thread: dict, columns: list[Column], row_of) -> str:
    """The thread's two columns beside our first two, row by row, formatted as our tables are."""
    base, new = columns[0], columns[1]

    def pair(old: float | None, now: float | None, u: str) -> list[str]:
        later = Cell(now, change_percent(old, now))
        return [format_value(old, u), format_cell(later, False, u)]

    rows = []
    for label, (t_old, t_new) in thread.items():
        u, ours = unit(label), row_of(label)
        rows.append([label, *pair(t_old, t_new, u), *pair(base.value(ours), new.value(ours), u)])
    headers = ["", f"thread {base.label}", f"thread {new.label}",
               f"reclaimlab {base.label}", f"reclaimlab {new.label}"]
    return markdown_table(headers, rows)


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
    report = [f"# {exp.TITLE}", "", f"Seed {args.seed}. Runs in `{root}`.", ""]
    failed = 0
    t0 = time.perf_counter()
    for sit in situations:
        sdir = root / sit.key
        sdir.mkdir(parents=True, exist_ok=True)
        if sit.prepare is not None:
            sit.prepare(sdir, args.seed)
        runs = {}
        for label, policy in sit.policies:
            scenario = sit.scenario(policy, args.seed, sdir)
            out = sdir / policy
            resolved = api.show_defaults(scenario)
            fresh = is_up_to_date(read_summary(out), resolved, args.seed) and (
                not args.trace or (out / "trace").is_file()
            )
            if not fresh:
                api.run(scenario, seed=args.seed, out=out,
                        trace="postprocess" if args.trace else None)
            print(f"{exp.NAME} {sit.key} {policy}: {'up to date' if fresh else 'done'} ({out})",
                  file=sys.stderr, flush=True)
            runs[policy] = load_run(out)
        columns = [Column(label, [runs[policy]]) for label, policy in sit.policies]
        checks = sit.checks(runs)
        report += [f"## {sit.title}", "", sit.story]
        if sit.thread:
            report += ["", "**Beside the thread's published figures**", ""]
            report.append(_thread_table(sit.thread, columns, exp.our_row))
        report += ["", render_markdown(columns, SECTIONS)]
        report += ["", "**Checks**", ""]
        for c in checks:
            failed += not c.passed
            report.append(f"- {'PASS' if c.passed else 'FAIL'}: {c.claim} ({c.detail})")
        report.append("")
    report.append(f"{len(situations)} situations in {time.perf_counter() - t0:.1f} s wall time; "
                  f"{'all checks pass' if not failed else f'{failed} checks FAIL'}.")
    text = "\n".join(report) + "\n"
    write_text_atomic(root / "report.md", text)
    sys.stdout.write(text)
    return 1 if failed else 0
