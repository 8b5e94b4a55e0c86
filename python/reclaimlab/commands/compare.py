"""``reclaimlab compare RUN...``: an mmtests-style table comparing result directories, or
scenarios run over several seeds (``--seeds N``). The tables themselves are in
:mod:`reclaimlab.compare`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .. import api
from ..compare import RENDERERS, Column
from ..results import RunDirError, load_run
from ._common import CliError, add_store_argument, claim_result_dir, open_store, positive_int

NAME = "compare"
HELP = "compare runs in an mmtests-style table"
DESCRIPTION = (
    "Print a table of the runs' duration, reclaim statistics (the rows of mmtests' "
    '"FTrace Reclaim Statistics: vmscan", derived from vmstat and summary.json) and vmstat '
    "counters, one column per run; the first is the baseline and the others show their change "
    "in percent. With --seeds N the arguments are scenario files, each run for seeds 1..N, and "
    "the table shows means with significance markers (Welch's t-test, 95%)."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "runs", nargs="+", metavar="RUN", help="result directories (scenario files with --seeds)"
    )
    p.add_argument(
        "--seeds", type=positive_int, metavar="N", help="run each scenario file for seeds 1..N"
    )
    p.add_argument(
        "--out",
        metavar="DIR",
        default="results/compare",
        help="with --seeds: where the runs go, as DIR/<name>-seed<k> (default: results/compare)",
    )
    p.add_argument(
        "--trace",
        action="store_true",
        help="with --seeds: also record each run's trace, for the rows vmstat cannot give",
    )
    add_store_argument(p)
    p.add_argument(
        "--machine",
        metavar="GUEST",
        help="compare this guest of each run (its directory guests/GUEST) instead of the host",
    )
    p.add_argument(
        "--labels", metavar="A,B,...", help="column names (default: directory or scenario names)"
    )
    p.add_argument(
        "--format", choices=sorted(RENDERERS), default="text", help="output format (default: text)"
    )


def _run_seeds(
    scenario: str, seeds: int, root: Path, trace: bool, taken: dict[str, str], store
) -> tuple[str, list[Path]]:
    """Run one scenario for seeds 1..N (reusing up-to-date results); (name, result dirs)."""
    if Path(scenario).is_dir():
        raise CliError(
            f"{scenario}: is a directory; with --seeds every argument is a scenario file"
        )
    name = str(api.scenario_info(scenario)["name"])
    base = claim_result_dir(taken, name, scenario)
    dirs = []
    for seed in range(1, seeds + 1):
        got = api.ensure_result(
            scenario, store, seed=seed, trace="postprocess" if trace else None,
            view=root / f"{base}-seed{seed}",
        )
        dirs.append(got.path)
        print(
            f"{name} seed {seed}: {'up to date' if got.reused else 'done'} ({got.path})",
            file=sys.stderr,
            flush=True,
        )
    return name, dirs


def main(args: argparse.Namespace) -> int:
    if args.seeds is None:
        if args.trace:
            raise CliError(
                "--trace needs --seeds (result directories already hold their trace or not)"
            )
        for r in args.runs:
            if Path(r).is_file():
                raise CliError(f"{r}: is a file; to run scenario files pass --seeds N")
        groups = [(Path(r).name or r, [Path(r)]) for r in args.runs]
    else:
        root = Path(args.out)
        args.results_dir = root
        taken: dict[str, str] = {}
        with open_store(args, root).writing("reclaimlab compare") as store:
            groups = [_run_seeds(s, args.seeds, root, args.trace, taken, store) for s in args.runs]

    if args.machine is not None:
        # A guest's directory is a result directory of its own (vmstat, summary.json, ...).
        groups = [(name, [Path(d) / "guests" / args.machine for d in dirs]) for name, dirs in groups]
        for _, dirs in groups:
            for d in dirs:
                if not d.is_dir():
                    raise CliError(f"{d.parent.parent}: the run has no guest {args.machine!r} "
                                   "(its guests are the directories under guests/)")
    labels = [g[0] for g in groups]
    if args.labels is not None:
        labels = [x.strip() for x in args.labels.split(",")]
        if len(labels) != len(groups):
            raise CliError(f"--labels names {len(labels)} columns but there are {len(groups)}")
    try:
        columns = [
            Column(label, [load_run(d) for d in dirs]) for label, (_, dirs) in zip(labels, groups)
        ]
    except RunDirError as e:
        raise CliError(str(e)) from None
    sys.stdout.write(RENDERERS[args.format](columns))
    return 0
