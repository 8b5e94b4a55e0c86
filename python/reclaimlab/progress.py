"""A plain-text progress bar for long runs: simulated time done / total and the sim/wall ratio.

It draws nothing during the first second of wall time (short runs stay quiet) and nothing at all
when the stream is not a terminal. It is the ``progress`` callable the extension calls now and then.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO


def format_seconds(seconds: float) -> str:
    """Compact human duration: 0.123 s, 12.35 s, 2m 05s, 1h 02m."""
    if seconds < 100:
        return f"{seconds:.3f} s" if seconds < 10 else f"{seconds:.2f} s"
    minutes, secs = divmod(int(round(seconds)), 60)
    if minutes < 60:
        return f"{minutes}m {secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m"


def render_bar(now_ns: int, end_ns: int, wall_s: float, width: int = 30) -> str:
    """One line: ``[#####-----]  50.0%  1.500 s / 3.000 s simulated  12.3x real time``."""
    frac = min(max(now_ns / end_ns, 0.0), 1.0) if end_ns > 0 else 1.0
    filled = int(frac * width)
    bar = "#" * filled + "-" * (width - filled)
    sim_s = now_ns / 1e9
    line = (
        f"[{bar}] {frac * 100:5.1f}%  {format_seconds(sim_s)} / {format_seconds(end_ns / 1e9)}"
        " simulated"
    )
    if wall_s > 0:
        line += f"  {sim_s / wall_s:.3g}x real time"
    return line


def _isatty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


class ProgressBar:
    """``bar(now_ns, end_ns)`` redraws the line; ``bar.close()`` erases it."""

    def __init__(
        self,
        stream: TextIO | None = None,
        *,
        delay: float = 1.0,
        width: int = 30,
        enabled: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = _isatty(self.stream) if enabled is None else enabled
        self.delay = delay
        self.width = width
        self.clock = clock
        self.start = clock()
        self._drawn = 0  # length of the line on screen, 0 if none

    def __call__(self, now_ns: int, end_ns: int) -> None:
        if not self.enabled:
            return None
        wall = self.clock() - self.start
        if wall < self.delay:
            return None
        line = render_bar(now_ns, end_ns, wall, self.width)
        pad = " " * max(self._drawn - len(line), 0)
        self.stream.write("\r" + line + pad)
        self.stream.flush()
        self._drawn = len(line)
        return None

    @property
    def shown(self) -> bool:
        return self._drawn > 0

    def close(self) -> None:
        if self._drawn:
            self.stream.write("\r" + " " * self._drawn + "\r")
            self.stream.flush()
            self._drawn = 0


@contextmanager
def sweep_progress(stream: TextIO | None = None) -> Iterator[Callable[..., None]]:
    """A rich progress display for a sweep: runs done of total, running, failed, ETA. Yields
    the ``on_event`` callable :func:`reclaimlab.sweep.execute` calls. A failed run is also
    printed as a line of its own. On a stream that is not a terminal only those lines show."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    console = Console(file=stream if stream is not None else sys.stderr, highlight=False)
    progress = Progress(
        TextColumn("sweep"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("running {task.fields[running]}  failed {task.fields[failed]}"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=console,
        transient=False,
        disable=not console.is_terminal,
    )
    state = {"running": 0, "failed": 0, "task": None}

    def on_event(kind: str, *details) -> None:
        if kind == "start":
            total, already = details
            state["task"] = progress.add_task("sweep", total=total, completed=already,
                                              running=0, failed=0)
            return
        if kind == "submitted":
            state["running"] += 1
        elif kind in ("done", "failed"):
            state["running"] -= 1
            if kind == "failed":
                state["failed"] += 1
                job, error = details
                first = error.strip().splitlines()[0] if error.strip() else "unknown error"
                console.print(f"FAILED {job.label}: {first}", markup=False)
        if state["task"] is not None:
            progress.update(state["task"], advance=kind in ("done", "failed"),
                            running=state["running"], failed=state["failed"])

    with progress:
        yield on_event
