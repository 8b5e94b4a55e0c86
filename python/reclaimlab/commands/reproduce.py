"""``reclaimlab reproduce NAME``: run a seed thread's situations under each policy, print our
tables beside the thread's published figures, and check the claims the thread makes.

``reproduce all`` runs every experiment there is into one store and writes one HTML report with
every check and its plots, ``OUT/report.html``.

Runs live in the result store (``OUT/.store`` unless ``--store``), linked as
``OUT/NAME/<situation>/<policy>``; a run that is up to date there (same resolved scenario, seed
and engine) is reused, so an interrupted reproduction resumes where it stopped. The report is
printed and written to ``OUT/NAME/report.md``, the HTML report to ``OUT/NAME/report.html``
(``OUT/report.html`` for ``all``). Exit status 1 if a check fails. ``--set KEY=VALUE`` runs
every scenario with that key set (``experiments/overrides.py``): the same reproductions under
the multi-generational LRU, for one."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..experiments import EXPERIMENTS, overrides
from ..experiments.runner import reproduce
from ..report import REPRODUCTION_MANIFEST, reproduction_page
from ._common import CliError, add_store_argument, key_value, open_store, seed_arg

NAME = "reproduce"
HELP = "reproduce a seed thread's experiments beside its published figures"
DESCRIPTION = (
    "Run each situation of a seed thread's experiment under the policies it compares (same "
    "seed), print mmtests-style tables with the thread's own figures beside ours, and check "
    "the direction and size of the effects the thread claims. Experiments: "
    + ", ".join(sorted(EXPERIMENTS))
    + "; all runs every one of them and writes one HTML report."
)

ALL = "all"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("experiment", choices=[ALL, *sorted(EXPERIMENTS)], metavar="EXPERIMENT",
                   help="one of: " + ", ".join(sorted(EXPERIMENTS)) + "; or all")
    p.add_argument("--out", metavar="DIR", default="results/reproduce",
                   help="where the runs, report.md and report.html go (default: results/reproduce)")
    p.add_argument("--seed", type=seed_arg, default=1, metavar="N", help="seed (default: 1)")
    p.add_argument("--only", metavar="KEYS",
                   help="comma-separated situation keys to run (default: all)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="overrides",
                   help="set a scenario key in every run (repeatable; a sweep axis's dotted key, "
                   "`*` for each guest: --set policy.lru=mglru --set 'guest.*.policy.lru=mglru'); "
                   "give another --out, the checks are the thread's as they stand")
    p.add_argument("--trace", action="store_true",
                   help="also record each run's trace (postprocess form) for the rows only a "
                        "trace gives (wake-kswapd requests, writes split by reclaimer); slower, "
                        "and the traces take gigabytes")
    p.add_argument("--no-figures", action="store_true",
                   help="skip the SVG and PNG files of the HTML report's charts")
    add_store_argument(p)


def main(args: argparse.Namespace) -> int:
    names = sorted(EXPERIMENTS) if args.experiment == ALL else [args.experiment]
    if args.only and len(names) > 1:
        raise CliError("--only names situations of one experiment; it cannot go with all")
    out = Path(args.out)
    args.results_dir = out
    failed = 0
    keys = dict(key_value(t, "--set") for t in args.overrides)
    with open_store(args, out).writing(f"reclaimlab reproduce {args.experiment}") as store, \
            overrides.setting(keys):
        for name in names:
            try:
                failed += _one(EXPERIMENTS[name], args, out, store)
            except KeyError as e:
                raise CliError(f"--set: {e.args[0]}") from None
    # One HTML report: of this experiment, or (all) of every one, beside their report.md.
    html = out / "report.html" if args.experiment == ALL else out / names[0] / "report.html"
    found = [(out / n, json.loads((out / n / REPRODUCTION_MANIFEST).read_text())) for n in names]
    # The figures are drawn (by a helper process) while the page is built.
    page = reproduction_page(found, figures_for=None if args.no_figures else html)
    figures = page.write(html, figures=not args.no_figures)
    print(f"reproduce: {html} ({len(page.charts)} charts"
          + (f", figures in {html.stem}-figures/" if figures else "") + ")",
          file=sys.stderr, flush=True)
    return 1 if failed else 0


def _one(exp, args: argparse.Namespace, out: Path, store) -> int:
    """Run one experiment (its situations, or those of --only); the number of failed checks."""
    situations = exp.SITUATIONS
    if args.only:
        keys = [k.strip() for k in args.only.split(",") if k.strip()]
        known = {s.key for s in situations}
        bad = [k for k in keys if k not in known]
        if bad:
            raise CliError(f"--only: no situation {', '.join(bad)} in {exp.NAME} "
                           f"(it has {', '.join(sorted(known))})")
        situations = [s for s in situations if s.key in keys]
    root = out / exp.NAME

    def progress(sit, policy: str, got) -> None:
        print(f"{exp.NAME} {sit.key} {policy}: {'up to date' if got.reused else 'done'} "
              f"({got.path})", file=sys.stderr, flush=True)

    # An experiment with checks of its own (computed from the engine's functions as well as
    # from runs) runs itself; the others go through the common runner.
    own = getattr(exp, "reproduce", None)
    if own is not None:
        done = own(situations, root, args.seed, store=store, trace=args.trace, on_run=progress)
    else:
        done = reproduce(exp, situations, root, args.seed, store=store, trace=args.trace,
                         on_run=progress)
    sys.stdout.write(done.report)
    return done.failed
