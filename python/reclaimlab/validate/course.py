"""The course of a run, real beside simulated (`reclaimlab validate --course`).

The scored rows compare where a run ends; when they miss, where the model parted from the
kernel is in the course. The workload program samples the guest's /proc/vmstat (and the dentry
and inode counts) once a second (`samples` in a kept boot, guest.py); the model's time series
holds the same fields. Both are read here at the same instants, counters counted from the
workload's start, the mean over boots beside the mean over seeds. Diagnosis, in no score.
"""

from __future__ import annotations

from typing import Any

from .. import api
from .compare import kept_sim_scenario
from .spec import GuestSpec

# Fields both the guest's samples and the model's time series have: the lists' sizes and free
# memory (state), and the reclaim and swap counters.
STATE = ("nr_free_pages", "nr_inactive_anon", "nr_active_anon", "nr_inactive_file",
         "nr_active_file", "nr_swapcached")
COUNTERS = ("pswpin", "pswpout", "pgmajfault", "workingset_refault_anon", "pgscan_kswapd",
            "pgscan_direct", "pgsteal_kswapd", "pgsteal_direct")
FIELDS = STATE + COUNTERS


def real_courses(kept: dict[str, Any]) -> list[dict[str, list[int]]]:
    """Each kept boot's samples (empty for boots of programs older than the sampler)."""
    return [rep["samples"] for rep in kept.get("reps", []) if rep.get("samples")]


def _at(cols: dict[str, list[int]], t_ns: int, field: str) -> int | None:
    """The field's value at the last sample taken by ``t_ns``, a counter from the first one."""
    times = cols.get("t_ns", [])
    values = cols.get(field)
    if not times or values is None or times[0] > t_ns:
        return None
    k = max(i for i, t in enumerate(times) if t <= t_ns)
    if values[k] < 0:
        return None
    return values[k] - values[0] if field in COUNTERS else values[k]


def _mean(xs: list[int | None]) -> float | None:
    got = [x for x in xs if x is not None]
    return sum(got) / len(got) if got else None


def table(real: list[dict[str, list[int]]], sims: list[dict[str, list[int]]],
          step_ns: int) -> list[dict[str, Any]]:
    """One row per ``step_ns`` from 0 to the end of the longest real boot: each field's mean over
    the boots and over the seeds (None where none had a sample yet)."""
    end = max((c["t_ns"][-1] for c in real if c.get("t_ns")), default=0)
    rows = []
    for t in range(0, end + 1, step_ns):
        row: dict[str, Any] = {"t_s": t / 1e9}
        for f in FIELDS:
            row[f] = {"real": _mean([_at(c, t, f) for c in real]),
                      "sim": _mean([_at(c, t, f) for c in sims])}
        rows.append(row)
    return rows


def simulated(spec: GuestSpec, kept: dict[str, Any], seeds: int,
              profile: dict[str, Any] | None) -> list[dict[str, list[int]]]:
    """The model's time series for seeds 1..seeds, on the scenario `validate` scores."""
    scenario = kept_sim_scenario(spec, kept, profile)
    out = []
    for s in range(1, seeds + 1):
        cols = api.run(scenario, seed=s).columns
        out.append({"t_ns": cols["time_ns"], **{f: cols[f] for f in FIELDS if f in cols}})
    return out


def course(spec: GuestSpec, kept: dict[str, Any], seeds: int,
           profile: dict[str, Any] | None, step_ns: int = 5_000_000_000) -> list[dict[str, Any]]:
    """The course table of ``spec`` (empty when no kept boot has samples)."""
    real = real_courses(kept)
    if not real:
        return []
    return table(real, simulated(spec, kept, seeds, profile), step_ns)


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:,.0f}"


def text(name: str, rows: list[dict[str, Any]]) -> str:
    """The table as text: one line per instant, each field `real/sim`."""
    if not rows:
        return (f"{name}: no course (its kept boots have no samples: boots of the workload "
                "program before 2026-11-30)\n")
    head = ["t (s)"] + [f for f in FIELDS]
    lines = [f"{name}: the course, real (mean of the boots) / simulated (mean of the seeds)",
             " | ".join(head)]
    for r in rows:
        cells = [f"{r['t_s']:.0f}"] + [f"{_fmt(r[f]['real'])}/{_fmt(r[f]['sim'])}" for f in FIELDS]
        lines.append(" | ".join(cells))
    return "\n".join(lines) + "\n"
