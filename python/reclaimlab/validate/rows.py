"""One counter's comparison, real beside simulated (validate/compare.py's definitions): its
means, spreads, ratio, floor and verdict, and which counters are timing-sensitive. Shared by the
comparison and the rows that filesystems and cgroups add (validate/fscount.py, cgroups.py)."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Any

LOW, HIGH = 0.8, 1.25
SPREAD_FACTOR = 3.0
CONFIDENCE = 0.95

# A real mean below EVENT_FLOOR events is not scored (compare.py, EVENT_COUNTERS).
EVENT_FLOOR = 5.0

# The timing-sensitive subset (docs/VALIDATION.md, "Protocol"): direct reclaim, its stalls,
# kswapd's runs and quick returns, throttling and compaction stalls. Those not compared today
# (pgscan_direct_throttle is not modelled, compact_stall is background) join it when they are.
TIMING = frozenset({
    "pgscan_direct", "pgsteal_direct", "allocstall_dma", "allocstall_dma32",
    "allocstall_normal", "allocstall_movable", "pageoutrun", "kswapd_low_wmark_hit_quickly",
    "kswapd_high_wmark_hit_quickly", "pgscan_direct_throttle", "compact_stall",
})

# Stall time (the system's and each cgroup's pressure totals, validate/cgroups.py) is
# timing-sensitive too: it is the time tasks spent in reclaim, compaction and refaults. Its
# floor: a real mean under 10 ms of stall over a workload is not scored.
PSI_FLOOR_US = 10_000.0


def timing_sensitive(counter: str) -> bool:
    return counter in TIMING or counter.endswith("total (us)")


@dataclass
class Row:
    counter: str
    real: list[int] | list[float]
    sim: list[int] | list[float]
    real_mean: float = 0.0
    real_spread: float = 0.0
    sim_mean: float = 0.0
    sim_spread: float = 0.0
    ratio: float | None = None
    within: bool | None = None
    spread_ok: bool = True
    # Below the noise floor: shown, not scored.
    small: bool = False
    # Half-width of the real mean's confidence interval, percent of the mean (None: one boot).
    real_ci: float | None = None
    # A miss whose simulated mean is within [LOW, HIGH] of a mean inside that interval.
    unresolved: bool = False
    # Scored as a miss: the kernel never moved it, the simulator did (at least the floor).
    zero_real: bool = False

    def as_json(self) -> dict[str, Any]:
        return {
            "counter": self.counter, "real": self.real, "sim": self.sim,
            "real_mean": self.real_mean, "real_spread_pct": self.real_spread,
            "sim_mean": self.sim_mean, "sim_spread_pct": self.sim_spread,
            "ratio": self.ratio, "within": self.within, "spread_ok": self.spread_ok,
            "below_noise_floor": self.small,
            "real_ci_pct": self.real_ci, "miss_within_real_interval": self.unresolved,
            "miss_with_real_zero": self.zero_real, "timing_sensitive": timing_sensitive(self.counter),
        }


def mean(values: list[int] | list[float]) -> float:
    return float(statistics.fmean(values)) if values else 0.0


def ci_half_width(values: list[int] | list[float]) -> float | None:
    """Half the width of the mean's CONFIDENCE interval (Student's t, n - 1 degrees of
    freedom), in percent of the mean; None for fewer than two values or a zero mean."""
    m = mean(values)
    if len(values) < 2 or m == 0:
        return None
    # Imported here: scipy.stats takes over a second to load, which every command would pay.
    from scipy import stats

    t = float(stats.t.ppf((1 + CONFIDENCE) / 2, len(values) - 1))
    return 100.0 * t * statistics.stdev(values) / math.sqrt(len(values)) / abs(m)


def spread(values: list[int] | list[float]) -> float:
    """Coefficient of variation in percent (sample standard deviation / mean)."""
    m = mean(values)
    if len(values) < 2 or m == 0:
        return 0.0
    return 100.0 * statistics.stdev(values) / abs(m)


def make_row(
    counter: str, real: list[int] | list[float], sim: list[int] | list[float], floor: float = 0.0
) -> Row:
    """One counter's comparison. A counter the kernel moved fewer than `floor` times on the
    mean is not scored (see NOISE_FRACTION, EVENT_FLOOR); one the kernel never moved is a miss
    when the simulator moved it at least max(EVENT_FLOOR, floor) times, else not scored."""
    row = Row(counter, real, sim)
    row.real_mean, row.sim_mean = mean(real), mean(sim)
    row.real_spread, row.sim_spread = spread(real), spread(sim)
    if row.real_mean == 0:
        if row.sim_mean >= max(EVENT_FLOOR, floor):
            row.within, row.zero_real = False, True
    elif row.real_mean < floor:
        row.small = True
    else:
        row.ratio = row.sim_mean / row.real_mean
        row.within = LOW <= row.ratio <= HIGH
        row.real_ci = ci_half_width(real)
        if not row.within and row.real_ci is not None:
            h = row.real_ci / 100 * row.real_mean
            row.unresolved = LOW * (row.real_mean - h) <= row.sim_mean <= HIGH * (row.real_mean + h)
    row.spread_ok = row.sim_spread <= SPREAD_FACTOR * row.real_spread or row.sim_spread == 0
    return row
