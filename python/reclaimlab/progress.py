"""Progress displays, drawn with rich: the bar of one long run (simulated time done / total and
the sim/wall ratio) and the display of a sweep (runs done, running, failed, ETA).

Both draw nothing when the stream is not a terminal; the run's bar also stays quiet during its
first second of wall time, so short runs print nothing.
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


def _console(stream: TextIO | None, enabled: bool | None):
    """A rich console on ``stream`` (stderr by default); ``enabled`` forces it to act as a
    terminal or not (None: whether the stream is one)."""
    from rich.console import Console

    return Console(
        file=stream if stream is not None else sys.stderr,
        force_terminal=enabled,
        highlight=False,
    )


class ProgressBar:
    """A rich progress bar of one run: ``bar(now_ns, end_ns)`` updates it (simulated time done,
    of total, and how much faster than real time); ``bar.close()`` erases it.

    It draws nothing during the first ``delay`` seconds of wall time (short runs stay quiet) and
    nothing at all when the stream is not a terminal. It is the ``progress`` callable the
    extension calls now and then, so it redraws only then (no refresh thread).
    """

    def __init__(
        self,
        stream: TextIO | None = None,
        *,
        delay: float = 1.0,
        enabled: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.console = _console(stream, enabled)
        self.enabled = self.console.is_terminal if enabled is None else enabled
        self.delay = delay
        self.clock = clock
        self.start = clock()
        self._progress = None
        self._task = None

    def __call__(self, now_ns: int, end_ns: int) -> None:
        if not self.enabled:
            return None
        wall = self.clock() - self.start
        if wall < self.delay:
            return None
        if self._progress is None:
            from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn

            self._progress = Progress(
                BarColumn(),
                TaskProgressColumn(),
                TextColumn("{task.fields[sim]}"),
                TextColumn("{task.fields[speed]}"),
                console=self.console,
                transient=True,
                auto_refresh=False,
            )
            self._progress.start()
            self._task = self._progress.add_task("run", total=max(end_ns, 1), sim="", speed="")
        sim_s = now_ns / 1e9
        self._progress.update(
            self._task,
            total=max(end_ns, 1),
            completed=min(max(now_ns, 0), max(end_ns, 1)),
            sim=f"{format_seconds(sim_s)} / {format_seconds(end_ns / 1e9)} simulated",
            speed=f"{sim_s / wall:.3g}x real time" if wall > 0 else "",
        )
        self._progress.refresh()
        return None

    @property
    def shown(self) -> bool:
        return self._progress is not None

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()  # transient: the bar is erased
            self._progress = None


@contextmanager
def sweep_progress(stream: TextIO | None = None) -> Iterator[Callable[..., None]]:
    """A rich progress display for a sweep: runs done of total, running, failed, ETA. Yields
    the ``on_event`` callable :func:`reclaimlab.sweep.execute` calls. A failed run is also
    printed as a line of its own. On a stream that is not a terminal only those lines show."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    console = _console(stream, None)
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
    # "in flight": handed to the pool or Ray; at most "workers" of them run at a time.
    state = {"in_flight": 0, "workers": 0, "failed": 0, "task": None}

    def on_event(kind: str, *details) -> None:
        if kind == "start":
            total, already, state["workers"] = details
            # The display's refresh thread starts only now: the sweep forks its workers before.
            progress.start()
            state["task"] = progress.add_task("sweep", total=total, completed=already,
                                              running=0, failed=0)
            return
        if kind == "submitted":
            state["in_flight"] += 1
        elif kind in ("done", "failed"):
            state["in_flight"] -= 1
            if kind == "failed":
                state["failed"] += 1
                job, error = details
                first = error.strip().splitlines()[0] if error.strip() else "unknown error"
                console.print(f"FAILED {job.label}: {first}", markup=False)
        if state["task"] is not None:
            progress.update(state["task"], advance=kind in ("done", "failed"),
                            running=min(state["in_flight"], state["workers"]),
                            failed=state["failed"])

    try:
        yield on_event
    finally:
        progress.stop()
