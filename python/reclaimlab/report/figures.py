"""A report's charts as files: each chart as SVG (vl-convert runs Vega once) and as PNG
rasterised from that SVG, written beside the HTML report.

vl-convert draws on one engine per process and holds the interpreter while it does, so
threads gain nothing; with two or more processors and enough charts one helper process
(``python -m reclaimlab.report.figures``) draws some of them while this process does other
work or draws the rest. A :class:`Drawer` takes charts as a page is built: once it holds
enough of them it starts the helper, which draws them while this process goes on building
the page (the page's CPU time and the figures' overlap on two processors); at the end this
process draws the charts not handed out yet, handing the helper the next one whenever it has
fewer than :data:`AHEAD` waiting, so the two finish together whatever each chart costs. Which
process draws a chart changes nothing in its files. A chart the helper could not draw is
drawn here, so its error is raised as without a helper."""

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
#: Charts handed to the helper and not answered yet, at most: two, so that it never waits
#: for this process between charts (which is busy building the page), and at the end this
#: process is left at most two charts' time behind or ahead.
AHEAD = 2


def draw(job: Job) -> None:
    """One chart as SVG, and as PNG rasterised from that SVG (Vega runs once, not twice)."""
    import vl_convert as vlc

    spec, svg, png = job
    text = vlc.vegalite_to_svg(spec)
    write_text_atomic(svg, text)
    write_bytes_atomic(png, vlc.svg_to_png(text, scale=2))


def draw_all(jobs: Sequence[Job]) -> None:
    """Draw every chart, with a helper process where that pays (see the module's text)."""
    drawer = Drawer()
    for job in jobs:
        drawer.add(job)
    drawer.finish()


class Drawer:
    """Charts drawn as they are added: by the helper process (started once
    :data:`HELPER_MIN_CHARTS` charts are waiting, on two or more processors) while this
    process goes on, the rest here in :meth:`finish`."""

    def __init__(self) -> None:
        self.jobs: list[Job] = []
        self.todo: deque[int] = deque()   # not handed out yet
        self.given: deque[int] = deque()  # handed to the helper, not answered yet, in order
        self.failed: list[int] = []
        self.helper: subprocess.Popen | None = None
        self.tmp: tempfile.TemporaryDirectory | None = None
        self.replies = b""
        self.can_help = (os.cpu_count() or 1) >= 2

    def add(self, job: Job) -> None:
        """A chart to draw (now by the helper if it is idle, else later)."""
        self.jobs.append(job)
        self.todo.append(len(self.jobs) - 1)
        if self.helper is None and self.can_help and len(self.todo) >= HELPER_MIN_CHARTS:
            self._start()
        self._feed()

    def finish(self) -> None:
        """Draw every chart not drawn yet (here, and in the helper when it is idle), wait for
        the helper's, and draw again here the ones it could not."""
        try:
            while self.todo:
                self._feed()
                if self.todo:
                    draw(self.jobs[self.todo.popleft()])
            while self.given and self.helper is not None:
                self._collect(block=True)
        finally:
            self.close()
        for i in self.failed:
            draw(self.jobs[i])
        self.failed = []

    def close(self) -> None:
        """End the helper (after its chart in hand) and remove its files; charts it had not
        answered for count as failed."""
        if self.helper is not None:
            try:
                self.helper.stdin.close()
            except OSError:
                pass
            self.helper.wait()
            self.helper.stdout.close()
            self.helper = None
        self.failed += list(self.given)
        self.given.clear()
        if self.tmp is not None:
            self.tmp.cleanup()
            self.tmp = None

    def _start(self) -> None:
        self.tmp = tempfile.TemporaryDirectory(prefix="reclaimlab-figures-")
        try:
            self.helper = subprocess.Popen(
                [sys.executable, "-m", __name__, self.tmp.name], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, text=True, bufsize=1)
        except OSError:
            self.can_help = False
            self.helper = None

    def _feed(self) -> None:
        """Take the helper's answers so far, and hand it charts while it has fewer than
        :data:`AHEAD`."""
        if self.helper is None:
            return
        self._collect(block=False)
        while self.helper is not None and self.todo and len(self.given) < AHEAD:
            i = self.todo.popleft()
            spec, svg, png = self.jobs[i]
            # The specification goes in a file of its own, and only its number through the
            # pipe, so that handing one out never waits for the helper to read.
            (Path(self.tmp.name) / f"{i}.json").write_text(
                json.dumps([spec, str(svg), str(png)]), encoding="utf-8")
            try:
                self.helper.stdin.write(f"{i}\n")
            except OSError:  # the helper is gone: its charts are drawn here
                self.failed.append(i)
                self._lost()
                return
            self.given.append(i)

    def _collect(self, block: bool) -> None:
        """Read the helper's answers that have come (``block``: wait for at least one)."""
        fd = self.helper.stdout.fileno()
        while True:
            while b"\n" in self.replies:
                line, self.replies = self.replies.split(b"\n", 1)
                i = self.given.popleft()
                if line.strip() != b"ok":
                    self.failed.append(i)
                block = False
            if not self.given or not (block or select.select([fd], [], [], 0)[0]):
                return
            chunk = os.read(fd, 4096)
            if not chunk:  # the helper died
                self._lost()
                return
            self.replies += chunk

    def _lost(self) -> None:
        """The helper is gone: what it held is drawn here, and nothing more goes to it."""
        self.can_help = False
        self.close()


def _serve(folder: str) -> int:
    """The helper: draw the charts whose numbers come on standard input, one line each (chart
    ``i``'s job in ``folder/i.json``), answering "ok" (or "failed" and the error) on standard
    output for each. Ctrl-C is the parent's to handle: it closes the helper's input, and the
    helper ends after its chart."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for line in sys.stdin:
        try:
            spec, svg, png = json.loads((Path(folder) / f"{int(line)}.json").read_text(
                encoding="utf-8"))
            draw((spec, Path(svg), Path(png)))
        except Exception as e:  # noqa: BLE001 - the parent draws it again and raises
            print(f"failed {type(e).__name__}: {e}".replace("\n", " "), flush=True)
            continue
        print("ok", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(_serve(sys.argv[1]))
