"""``reclaimlab compare RUN...``: an mmtests-style table comparing result directories, or
scenarios run over several seeds (``--seeds N``). The tables themselves are in
:mod:`reclaimlab.compare`."""

from __future__ import annotations

import argparse
import copy
import sys
import tomllib
from pathlib import Path
from typing import Any

import tomli_w

from .. import api
from ..compare import RENDERERS, Column
from ..results import RunDirError, load_run
from ..sweep.planning import set_key
from ._common import (CliError, add_store_argument, claim_result_dir, open_store, positive_int,
                      scenario_value)

NAME = "compare"
HELP = "compare runs in an mmtests-style table"
DESCRIPTION = (
    "Print a table of the runs' duration, reclaim statistics (the rows of mmtests' "
    '"FTrace Reclaim Statistics: vmscan", derived from vmstat and summary.json) and vmstat '
    "counters, one column per run; the first is the baseline and the others show their change "
    "in percent. With --seeds N the arguments are scenario files, each run for seeds 1..N, and "
    "the table shows means with significance markers (Welch's t-test, 95%). With --axis "
    "KEY=V1,V2,... each scenario file is run once per value of the scenario key KEY (as a "
    "sweep's [axes] names it: policy.lru=classic,mglru), one column each."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "runs", nargs="+", metavar="RUN", help="result directories (scenario files with --seeds)"
    )
    p.add_argument(
        "--seeds", type=positive_int, metavar="N", help="run each scenario file for seeds 1..N"
    )
    p.add_argument(
        "--axis",
        metavar="KEY=V1,V2,...",
        help="with --seeds: run each scenario once per value of this dotted scenario key "
        "(e.g. policy.lru=classic,mglru or sysctl.swappiness=60,100), one column each",
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


def parse_axis(text: str) -> tuple[str, list[Any]]:
    """``KEY=V1,V2,...``: the key and its values, each read as a TOML value when it is one
    (``60`` an integer, ``true`` a boolean) and as a string otherwise (``mglru``, ``2GiB``)."""
    key, sep, values = text.partition("=")
    key = key.strip()
    parts = [v.strip() for v in values.split(",")]
    if not sep or not key or not all(parts):
        raise CliError(f"--axis {text!r}: expected KEY=V1,V2,... (e.g. policy.lru=classic,mglru)")

    return key, [scenario_value(v) for v in parts]


def _variants(scenario: str, axis: tuple[str, list[Any]] | None) -> list[tuple[str, Any]]:
    """(label suffix, scenario) for each value of the axis: the file itself without one, else
    its text with the key set, its relative paths resolved against the file's directory."""
    if axis is None:
        return [("", scenario)]
    key, values = axis
    base = tomllib.loads(Path(scenario).read_text(encoding="utf-8"))
    out = []
    for v in values:
        data = copy.deepcopy(base)
        try:
            set_key(data, key, v)
        except KeyError as e:
            raise CliError(f"--axis {key}: {e.args[0]}") from None
        src = api.Source(text=tomli_w.dumps(data), name=scenario,
                         base_dir=str(Path(scenario).parent.resolve()))
        out.append((f" {key}={v}", src))
    return out


def _run_seeds(
    scenario: str, seeds: int, root: Path, trace: bool, taken: dict[str, str], store,
    axis: tuple[str, list[Any]] | None = None,
) -> list[tuple[str, list[Path]]]:
    """Run one scenario (once per axis value) for seeds 1..N, reusing up-to-date results;
    [(column name, result dirs)]."""
    if Path(scenario).is_dir():
        raise CliError(
            f"{scenario}: is a directory; with --seeds every argument is a scenario file"
        )
    return [_run_one(src, f"{api.scenario_info(src)['name']}{suffix}", seeds, root, trace,
                     taken, store, scenario)
            for suffix, src in _variants(scenario, axis)]


def _run_one(src: Any, name: str, seeds: int, root: Path, trace: bool, taken: dict[str, str],
             store, scenario: str) -> tuple[str, list[Path]]:
    base = claim_result_dir(taken, name, scenario)
    dirs = []
    for seed in range(1, seeds + 1):
        got = api.ensure_result(
            src, store, seed=seed, trace="postprocess" if trace else None,
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
    axis = parse_axis(args.axis) if args.axis is not None else None
    if args.seeds is None:
        if axis is not None:
            raise CliError("--axis needs --seeds (it runs the scenario files once per value)")
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
            groups = [g for s in args.runs
                      for g in _run_seeds(s, args.seeds, root, args.trace, taken, store, axis)]

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
