"""Pressure stall information and memory cgroups in `validate` (issue 34; docs/VALIDATION.md,
"Cgroups and pressure"): what the guest's /init reads (`/proc/pressure/memory` before and after
every workload, and each `[[cgroup]]`'s interface files), parsed into a boot's record, and the
rows they add to a comparison beside the simulator's own files.

Rows, as the tables name them:

- `psi some total (us)`, `psi full total (us)`: the system's memory stall time over the
  workload, `/proc/pressure/memory`'s `total=` after less before, against the model's
  `summary.json` `pressure.memory` totals (timing-sensitive);
- per cgroup PATH: `PATH memory.peak` (bytes), `PATH memory.events KEY` (low, high, max, oom,
  oom_kill), `PATH memory.stat KEY` for the counters the model keeps (after less before; the
  cgroup is made empty just before the workload), and `PATH memory.pressure some|full total
  (us)`, against the model's `cgroup/NAME/...` files.
"""

from __future__ import annotations

from typing import Any

from .procfs import parse_pairs
from .rows import EVENT_FLOOR, PSI_FLOOR_US, Row, make_row

PSI_ROWS = ("psi some total (us)", "psi full total (us)")
# memory.events keys (6.1's order) and the memory.stat keys the model keeps and a boot scores.
EVENTS = ("low", "high", "max", "oom", "oom_kill")
STAT = ("anon", "file", "pgfault", "pgmajfault", "workingset_refault_anon",
        "workingset_refault_file", "pgscan", "pgsteal", "pgactivate", "pgdeactivate")
# memory.stat keys that are amounts in bytes at the time of reading, not counters.
STAT_BYTES = ("anon", "file")


def parse_pressure(text: str) -> dict[str, dict[str, float]]:
    """`/proc/pressure/memory` (or a cgroup's `memory.pressure`): per line (`some`, `full`) its
    avg10, avg60, avg300 (percent) and total (microseconds)."""
    out: dict[str, dict[str, float]] = {}
    for line in text.splitlines():
        fields = line.split()
        if not fields or fields[0] not in ("some", "full"):
            continue
        vals = dict(f.split("=", 1) for f in fields[1:] if "=" in f)
        try:
            out[fields[0]] = {k: (int(v) if k == "total" else float(v)) for k, v in vals.items()}
        except ValueError:
            continue
    return out


def parse_file(name: str, text: str) -> Any:
    """One cgroup interface file as /init read it: a number, `name value` pairs, or pressure
    lines; None for `max` or an empty read."""
    text = text.strip()
    if name == "memory.pressure":
        return parse_pressure(text)
    if name in ("memory.stat", "memory.events", "memory.swap.events"):
        return parse_pairs(text)
    return int(text) if text.isdigit() else None


def from_sections(sections: dict[str, str]) -> dict[str, Any]:
    """A boot's record entries from its transcript's sections: `psi_before` / `psi_after` and
    `cgroups` (path -> when -> file -> parsed), each only when the boot read it."""
    out: dict[str, Any] = {}
    for when in ("before", "after"):
        if f"pressure {when}" in sections:
            out[f"psi_{when}"] = parse_pressure(sections[f"pressure {when}"])
    cgroups: dict[str, dict[str, dict[str, Any]]] = {}
    for key, text in sections.items():
        parts = key.split()
        if len(parts) == 4 and parts[0] == "cgroup":
            _, path, name, when = parts
            cgroups.setdefault(path, {}).setdefault(when, {})[name] = parse_file(name, text)
    if cgroups:
        out["cgroups"] = cgroups
    return out


def real_psi(rep: dict[str, Any]) -> dict[str, float] | None:
    """A boot's system stall time over the workload, by row; None for a boot that did not
    read /proc/pressure/memory."""
    before, after = rep.get("psi_before"), rep.get("psi_after")
    if not before or not after:
        return None
    return {row: after[kind]["total"] - before[kind]["total"]
            for row, kind in zip(PSI_ROWS, ("some", "full"))
            if kind in before and kind in after}


def sim_psi(summary: dict[str, Any]) -> dict[str, float]:
    """A run's system stall time (`summary.json` `pressure.memory`), by row."""
    memory = summary.get("pressure", {}).get("memory", {})
    return {row: memory[kind]["total_us"] for row, kind in zip(PSI_ROWS, ("some", "full"))
            if kind in memory}


def real_cgroup(rep: dict[str, Any], path: str) -> dict[str, float]:
    """A boot's rows for cgroup `path` (its counters after less before)."""
    cg = rep.get("cgroups", {}).get(path, {})
    before, after = cg.get("before", {}), cg.get("after", {})
    out: dict[str, float] = {}
    if isinstance(after.get("memory.peak"), int):
        out[f"{path} memory.peak"] = after["memory.peak"]
    for k in EVENTS:
        if k in after.get("memory.events", {}):
            out[f"{path} memory.events {k}"] = (
                after["memory.events"][k] - before.get("memory.events", {}).get(k, 0))
    for k in STAT:
        if k in after.get("memory.stat", {}):
            base = 0 if k in STAT_BYTES else before.get("memory.stat", {}).get(k, 0)
            out[f"{path} memory.stat {k}"] = after["memory.stat"][k] - base
    for kind in ("some", "full"):
        p_after = (after.get("memory.pressure") or {}).get(kind)
        if p_after is not None:
            p_before = (before.get("memory.pressure") or {}).get(kind, {"total": 0})
            out[f"{path} memory.pressure {kind} total (us)"] = p_after["total"] - p_before["total"]
    return out


def sim_cgroup(extra_files: dict[str, str], path: str) -> dict[str, float]:
    """A run's rows for cgroup `path` from its `cgroup/NAME/<file>` outputs (NAME: the
    cgroup's own name, the last part of its path)."""
    name = path.rsplit("/", 1)[-1]

    def read(f: str) -> Any:
        for key in (f"cgroup/{path}/{f}", f"cgroup/{name}/{f}"):
            if key in extra_files:
                return parse_file(f, extra_files[key])
        return None

    out: dict[str, float] = {}
    if isinstance(peak := read("memory.peak"), int):
        out[f"{path} memory.peak"] = peak
    for k, v in (read("memory.events") or {}).items():
        if k in EVENTS:
            out[f"{path} memory.events {k}"] = v
    for k, v in (read("memory.stat") or {}).items():
        if k in STAT:
            out[f"{path} memory.stat {k}"] = v
    for kind, line in (read("memory.pressure") or {}).items():
        out[f"{path} memory.pressure {kind} total (us)"] = line["total"]
    return out


def is_bytes(row: str) -> bool:
    """Whether a cgroup row is an amount in bytes (scored at the page floor in bytes)."""
    return row.endswith("memory.peak") or any(row.endswith(f"memory.stat {k}")
                                              for k in STAT_BYTES)


def rows(paths: list[str], kept: dict[str, Any], sims: list[dict[str, Any]],
         floor: float) -> list[Row]:
    """The stall-time rows of boots that read /proc/pressure/memory, and the rows of the
    cgroups at ``paths``, where the boots and the model both have them: bytes at the page
    floor in bytes, events at the event floor, stall time at PSI_FLOOR_US, page counts at the
    page floor."""
    if not kept["reps"]:
        return []
    per_boot = [real_psi(rep) for rep in kept["reps"]]
    reals: list[dict[str, float]] = [p or {} for p in per_boot]
    if any(p is None for p in per_boot):
        reals = [{} for _ in kept["reps"]]
    for path in paths:
        for r, rep in zip(reals, kept["reps"]):
            r.update(real_cgroup(rep, path))
    out = []
    names = [n for n in reals[0] if all(n in r for r in reals) and all(n in s for s in sims)]
    for n in names:
        if n.endswith("total (us)"):
            row_floor = PSI_FLOOR_US
        elif is_bytes(n):
            row_floor = 4096 * floor
        elif " memory.events " in n:
            row_floor = EVENT_FLOOR
        else:
            row_floor = floor
        out.append(make_row(n, [r[n] for r in reals], [s[n] for s in sims], row_floor))
    return out
