"""A report's charts as files: each chart as SVG (vl-convert runs Vega once) and as PNG
rasterised from that SVG, written beside the HTML report.

vl-convert draws on one engine per process and holds the interpreter while it does, so
threads gain nothing; with two or more processors and enough charts one helper process
(``python -m reclaimlab.report.figures``) draws some of them while this process draws the
rest. The helper takes one chart at a time, the next one not yet started, so the two finish
together whatever each chart costs; which process draws a chart changes nothing in its files.
A chart the helper could not draw is drawn here, so its error is raised as without a helper."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import tempfile
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..results import write_bytes_atomic, write_text_atomic

#: A chart: its Vega-Lite specification, and the SVG and PNG files to write.
Job = tuple[dict[str, Any], Path, Path]

#: Fewer charts than this are drawn here alone: the helper's start (Python, the imports and
#: vl-convert's engine, about a second of CPU) would cost more than it saves.
HELPER_MIN_CHARTS = 16


def draw(job: Job) -> None:
    """One chart as SVG, and as PNG rasterised from that SVG (Vega runs once, not twice)."""
    import vl_convert as vlc

    spec, svg, png = job
    text = vlc.vegalite_to_svg(spec)
    write_text_atomic(svg, text)
    write_bytes_atomic(png, vlc.svg_to_png(text, scale=2))


def draw_all(jobs: Sequence[Job]) -> None:
    """Draw every chart, with a helper process where that pays (see the module's text)."""
    if len(jobs) < HELPER_MIN_CHARTS or (os.cpu_count() or 1) < 2:
        for job in jobs:
            draw(job)
        return
    with tempfile.TemporaryDirectory(prefix="reclaimlab-figures-") as d:
        # The specifications go to the helper in a file, and only their numbers through its
        # pipe, so that handing one out never waits for the helper to read.
        listing = Path(d) / "jobs.json"
        listing.write_text(json.dumps([[spec, str(svg), str(png)] for spec, svg, png in jobs]),
                           encoding="utf-8")
        try:
            helper = subprocess.Popen(
                [sys.executable, "-m", __name__, str(listing)], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, text=True, bufsize=1)
        except OSError:
            for job in jobs:
                draw(job)
            return
        _share(jobs, helper)


def _share(jobs: Sequence[Job], helper: subprocess.Popen) -> None:
    """Draw ``jobs`` here and in ``helper``: it is handed the next chart whenever it is idle,
    this process draws the next one otherwise."""
    todo = deque(range(len(jobs)))
    given: int | None = None
    failed: list[int] = []

    def hand_out() -> None:
        nonlocal given
        given = todo.popleft()
        try:
            helper.stdin.write(f"{given}\n")
        except OSError:  # the helper is gone: its chart is drawn here
            failed.append(given)
            given = None

    def collect(block: bool) -> None:
        """The helper's answer about the chart it has, if there is one yet (or, ``block``,
        when it comes)."""
        nonlocal given
        if given is None:
            return
        if not block and not select.select([helper.stdout], [], [], 0)[0]:
            return
        if helper.stdout.readline().strip() != "ok":
            failed.append(given)
        given = None

    try:
        while todo:
            collect(block=False)
            if given is None and helper.poll() is None:
                hand_out()
                continue
            draw(jobs[todo.popleft()])
        collect(block=True)
    finally:
        try:
            helper.stdin.close()
        except OSError:
            pass
        helper.wait()
    for i in failed:
        draw(jobs[i])


def _serve(listing: str) -> int:
    """The helper: draw the charts whose numbers come on standard input, one line each,
    answering "ok" (or "failed" and the error) on standard output for each. Ctrl-C is the
    parent's to handle: it closes the helper's input, and the helper ends after its chart."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    jobs = json.loads(Path(listing).read_text(encoding="utf-8"))
    for line in sys.stdin:
        spec, svg, png = jobs[int(line)]
        try:
            draw((spec, Path(svg), Path(png)))
        except Exception as e:  # noqa: BLE001 - the parent draws it again and raises
            print(f"failed {type(e).__name__}: {e}".replace("\n", " "), flush=True)
            continue
        print("ok", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(_serve(sys.argv[1]))
