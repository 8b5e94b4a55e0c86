"""How much of a VM's host resident set comes back after its guest frees memory, and how fast:
the analysis both sides of the balloon validation share (the QEMU process's sampled RSS on
the real host, a guest's column of the simulator's ``vm_rss.csv``).

Definitions (docs/VALIDATION.md repeats them):

- **at free**: the resident set at the free: the last sample at or before it.
- **final**: the mean of the samples in the last ``TAIL_S`` seconds before the end of the
  idle period (the real guest's `idle_done` marker; the simulated guest's last sample).
- **returned**: at free minus final.
- **t_half, t_90**: seconds from the free until the resident set first falls to at free minus
  50 % (90 %) of returned, linearly interpolated between the two samples around the crossing.
  Not given (None) when less than ``MIN_RETURNED`` came back: a level that hardly moves has
  no meaningful half-way point.
"""

from __future__ import annotations

import csv
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .errors import ValidateError

TAIL_S = 5.0
MIN_RETURNED = 16 << 20


@dataclass(frozen=True)
class Returned:
    """One series' figures, bytes and seconds (see the module's definitions)."""

    at_free: float
    final: float
    returned: float
    t_half: float | None
    t_90: float | None

    def as_json(self) -> dict[str, float | None]:
        return {
            "at_free_bytes": self.at_free, "final_bytes": self.final,
            "returned_bytes": self.returned, "t_half_s": self.t_half, "t_90_s": self.t_90,
        }


def returned(
    times: Sequence[float], rss: Sequence[float], free_t: float, end_t: float | None = None,
    tail_s: float = TAIL_S,
) -> Returned:
    """The figures of one series: ``times`` (s, increasing) and ``rss`` (bytes) sampled
    together, the free at ``free_t`` and the idle period ending at ``end_t`` (default: the last
    sample)."""
    if len(times) != len(rss) or not times:
        raise ValueError("times and rss must be non-empty and of the same length")
    end = times[-1] if end_t is None else end_t
    before = [i for i, t in enumerate(times) if t <= free_t]
    if not before:
        raise ValueError(f"no sample at or before the free at {free_t:.3f} s")
    i0 = before[-1]
    at_free = float(rss[i0])
    tail = [float(v) for t, v in zip(times, rss) if end - tail_s <= t <= end and t > free_t]
    if not tail:
        raise ValueError(f"no sample between {end - tail_s:.3f} s and {end:.3f} s after the free")
    final = statistics.fmean(tail)
    back = at_free - final
    if back < MIN_RETURNED:
        return Returned(at_free, final, back, None, None)
    return Returned(
        at_free, final, back,
        _crossing(times, rss, i0, at_free - 0.5 * back) - free_t,
        _crossing(times, rss, i0, at_free - 0.9 * back) - free_t,
    )


def _crossing(times: Sequence[float], rss: Sequence[float], i0: int, level: float) -> float:
    """When the series first falls to ``level`` after sample ``i0``, interpolated linearly."""
    for i in range(i0 + 1, len(times)):
        if rss[i] <= level:
            t0, t1, v0, v1 = times[i - 1], times[i], float(rss[i - 1]), float(rss[i])
            return t1 if v0 == v1 else t0 + (t1 - t0) * (v0 - level) / (v0 - v1)
    # The mean of the tail lies between its samples, so some sample reaches any level above
    # it; a level at or below every sample can only be the final one itself.
    return times[-1]


def read_vm_rss_csv(path: Path) -> tuple[list[float], dict[str, list[int]]]:
    """A simulator result's ``vm_rss.csv`` (header ``time_s,<guest>,...``, one row per sample,
    RSS in bytes): the sample times and each guest's column."""
    try:
        f = open(path, newline="")
    except FileNotFoundError:
        raise ValidateError(
            f"{path}: no such file (a run with [[guest]] tables writes it)"
        ) from None
    with f:
        rows = csv.reader(f)
        header = next(rows, None)
        if not header or header[0] != "time_s" or len(header) < 2:
            raise ValidateError(f"{path}:1: expected a header `time_s,<guest name>,...`")
        names = header[1:]
        times: list[float] = []
        cols: dict[str, list[int]] = {n: [] for n in names}
        for line, row in enumerate(rows, start=2):
            if not row:
                continue
            if len(row) != len(header):
                raise ValidateError(
                    f"{path}:{line}: {len(row)} fields, the header has {len(header)}"
                )
            try:
                times.append(float(row[0]))
                for n, v in zip(names, row[1:]):
                    cols[n].append(int(v))
            except ValueError:
                raise ValidateError(f"{path}:{line}: not a number in {row!r}") from None
    if not times:
        raise ValidateError(f"{path}: a header and no samples")
    return times, cols
