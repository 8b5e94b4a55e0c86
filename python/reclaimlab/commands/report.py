"""``reclaimlab report DIR -o report.html``: the HTML report of a sweep, a reproduction or a
run (:mod:`reclaimlab.report`), with each chart also as SVG and PNG."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..report import ReportError, page_for
from ..results import RunDirError
from ._common import CliError

NAME = "report"
HELP = "write the HTML report of a sweep, a reproduction or a run"
DESCRIPTION = (
    "Write one self-contained HTML file (no network needed to view it) with plots of a sweep "
    "directory (reclaimlab sweep --out DIR), of reproductions (reclaimlab reproduce --out "
    "DIR) or of one run (reclaimlab run --out DIR): time series of free pages against the "
    "watermarks, scan, steal and swap rates, memory pressure and each memory cgroup's memory "
    "when the run has them, counters with 95%% intervals over seeds, lines and heatmaps along "
    "the axes, and for reproductions the checks and the thread's figures beside ours. Each "
    "chart is also written as SVG and PNG to <report>-figures/."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("directory", metavar="DIR", help="a sweep's, a reproduction's or a run's --out")
    p.add_argument("-o", "--output", metavar="FILE",
                   help="the HTML file to write (default: DIR/report.html)")
    p.add_argument("--no-figures", action="store_true",
                   help="skip the SVG and PNG files of the charts")


def main(args: argparse.Namespace) -> int:
    out = Path(args.output) if args.output else Path(args.directory) / "report.html"
    try:
        page = page_for(args.directory)
    except (ReportError, RunDirError) as e:
        raise CliError(str(e)) from None
    try:
        figures = page.write(out, figures=not args.no_figures)
    except OSError as e:
        raise CliError(f"{out}: cannot write the report: {e.strerror or e}", exit_code=1) from None
    extra = f" and {len(figures)} figures in {out.stem}-figures/" if figures else ""
    print(f"report: {out} ({len(page.charts)} charts){extra}", flush=True)
    return 0
