"""The comparison: the real kernel's vmstat deltas (kept results) beside the simulator's counters
for the same scenario on the guest's own zone layout.

Definitions (docs/VALIDATION.md repeats them):

- **delta**: a counter's value after the workload minus before it, per boot. The simulator starts
  from zero at its time 0, so its end-of-run value is its delta.
- **mean**: arithmetic mean over the reps (real) or seeds 1..N (simulated).
- **spread**: coefficient of variation, sample standard deviation (n - 1) over the mean, in
  percent; 0 for a single value or a zero mean.
- **ratio**: simulated mean / real mean; flagged when outside [0.8, 1.25].
- **spread ok**: simulated spread at most 3x the real spread (both 0 counts as ok).
- **score**: K of M within [0.8, 1.25], over the scored counters: those whose real mean is at
  least their floor (5 events for an event counter, EVENT_COUNTERS; one per thousand of the
  run's page allocations for a page counter), and those whose real mean is 0 while the
  simulated mean reaches the floor (5 events; 5 pages or the page floor), each such a miss.
- **timing-sensitive**: the rows of TIMING, which move with who reclaims first.
- **real 95 %**: half the width of the real mean's 95 % confidence interval (Student's t over
  the boots), in percent of the mean: how well the boots pin the mean down. Above 20 % the
  boots cannot tell a mean 0.8 times theirs from their own.
- **OUT?**: a counter outside [0.8, 1.25] whose simulated mean is still within [0.8, 1.25] of
  some mean inside that interval: a miss the boots cannot establish (still a miss in the score).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import api
from ..sweep.planning import set_key
from . import cgroups, fscount
from . import profile as guest_profile
from .rows import CONFIDENCE, EVENT_FLOOR, HIGH, LOW, Row, make_row, mean, timing_sensitive
from .errors import ValidateError
from .spec import GuestSpec

# The reclaim counters the model updates (machine/vmstat.rs and its callers), in /proc/vmstat
# order. A counter here that the simulator leaves at 0 while the kernel does not is a finding
# of the table (ratio 0), not hidden.
COMPARED = (
    "workingset_refault_anon", "workingset_refault_file", "workingset_activate_anon",
    "workingset_activate_file", "workingset_restore_anon", "workingset_restore_file",
    "nr_vmscan_write", "nr_vmscan_immediate_reclaim",
    "pgpgin", "pgpgout", "pswpin", "pswpout",
    "pgalloc_dma", "pgalloc_dma32", "pgalloc_normal", "allocstall_dma", "allocstall_dma32",
    "allocstall_normal", "allocstall_movable", "pgfree", "pgactivate", "pgdeactivate",
    "pgfault", "pgmajfault", "pgrefill",
    "pgsteal_kswapd", "pgsteal_direct", "pgscan_kswapd", "pgscan_direct",
    "pgscan_anon", "pgscan_file", "pgsteal_anon", "pgsteal_file",
    "kswapd_low_wmark_hit_quickly", "kswapd_high_wmark_hit_quickly", "pageoutrun", "pgrotated",
    "swap_ra", "swap_ra_hit", "oom_kill",
)

# A page counter the kernel moves less than once per this many page allocations of the run is
# the guest's own background (the workload binary's start-up faults, the shell, kernel threads
# touching file pages): its real spread is typically 50-200 %. It is shown but not scored.
NOISE_FRACTION = 0.001

# Counters of events rather than pages: their floor is in their own unit (docs/VALIDATION.md,
# "Protocol"), since a page-allocation fraction is thousands of events and would leave them
# never scored. A real mean below EVENT_FLOOR is not scored; a real mean of 0 against a
# simulated mean of EVENT_FLOOR or more is a miss (for page counters: the higher of the two).
EVENT_COUNTERS = frozenset({
    "allocstall_dma", "allocstall_dma32", "allocstall_normal", "allocstall_movable",
    "pageoutrun", "kswapd_low_wmark_hit_quickly", "kswapd_high_wmark_hit_quickly", "oom_kill",
    "compact_stall", "compact_fail", "compact_success", "compact_daemon_wake",
})

# Compaction in these guests is mostly the kernel's own background work: proactive compaction
# (kcompactd every 500 ms while vm.compaction_proactiveness sees fragmentation) and compaction
# for the kernel's own high-order allocations (slab, stacks, the workload's fork), which no
# scenario describes. The model has the first (actors/kcompactd.rs) but not the second, and its
# scanners are abstracted (machine/compaction.rs counts whole candidate blocks as scanned), so
# these counters are shown apart, with the model's figure beside the kernel's, and not scored.
BACKGROUND = (
    "pgmigrate_success", "compact_migrate_scanned", "compact_free_scanned", "compact_isolated",
    "compact_stall", "compact_fail", "compact_success", "compact_daemon_wake",
    "compact_daemon_migrate_scanned", "compact_daemon_free_scanned",
)

# Counters the real kernel moves during reclaim that the model does not produce, and why
# (docs/MODEL.md's list of what is not modelled). Reported when the kernel's mean is non-zero.
NOT_MODELLED = {
    "workingset_nodes": "no shadow-node accounting",
    "workingset_nodereclaim": "no shadow-node shrinker",
    "slabs_scanned": "no slab shrinkers",
    "kswapd_inodesteal": "no slab shrinkers (inode cache)",
    "pginodesteal": "no slab shrinkers (inode cache)",
    "pgscan_direct_throttle": "no direct-reclaim throttling",
    "pgscan_khugepaged": "no khugepaged",
    "pgsteal_khugepaged": "no khugepaged",
    "pgmigrate_fail": "compaction migrates only blocks whose pages can all move",
    "thp_fault_alloc": "the simulator's transhuge stream does not count THP faults",
    "thp_fault_fallback": "the simulator's transhuge stream does not count THP faults",
    "thp_migration_success": "no THP migration",
    "pgreuse": "no copy-on-write reuse accounting",
    "zswpout": "no zswap",
    "drop_pagecache": "caches are dropped before the snapshot, never in the model",
}

# What the guest never mirrors, whatever the scenario (the scenario adds its own).
GENERAL_LIMITS = (
    "the booted guest's own memory (kernel slab, page tables, the initramfs in rootfs) is carried "
    "over as [host] kernel_used (MemTotal - MemFree before the workload) but as one block of "
    "unmovable pages, not as slab the kernel could shrink",
    "the guest's CPU speed and disk speed are real (TCG or KVM on this host), not [cost], "
    "[swap] and [disk]: counters that depend on timing (kswapd vs direct) differ for that alone",
    "per-CPU page lists and vmstat drift: the kernel's counters are exact only after the "
    "snapshot's fold; the model has both as options ([host] pcp_lists, vmstat_drift), off in "
    "the validation scenarios",
    "the guest's scheduler balances threads between its vCPUs; the simulator makes 6.1's CFS "
    "decisions on each vCPU at the end of each step and moves a thread only to an idle vCPU "
    "([host] cpu_contention and cpu_migration, on for every guest: docs/MODEL.md, CPUs)",
)


@dataclass
class Comparison:
    scenario: str
    reps: int
    seeds: int
    kept: dict[str, Any]
    rows: list[Row]
    not_modelled: list[tuple[str, float, str]]
    not_mirrored: list[str]
    zones: list[dict[str, Any]] = field(default_factory=list)
    # The workload's run length in seconds: each boot's wall time, each seed's simulated time.
    # Not scored: it checks the scenario's [cost], measured in the boots (the reference
    # sitting's) or fitted to this very figure (earlier sittings; docs/VALIDATION.md).
    run_length: Row | None = None
    # Each anonymous workload's accesses (validate/compare.pace_rows), real beside simulated:
    # not scored either, a check of the profile's costs for a workload bounded by time.
    pace: list[Row] = field(default_factory=list)
    # "calibration", "prediction" or None (a sitting's own scenario); what it was simulated
    # with: a profile's path, "own [cost]", or "none" (the baseline).
    role: str | None = None
    costs: str = "own [cost]"
    # The sitting's speed factor the profile's times were scaled by (1: the profile's own pace).
    speed: float = 1.0
    # The page-replacement algorithm, the guest's and the model's ("classic" or "mglru").
    lru: str = "classic"
    # What the scenario exercises, for the scores by family (`family`).
    family: str = ""
    # Keys set on the simulator's side alone (GuestSpec.sim_set).
    sim_set: dict[str, Any] = field(default_factory=dict)

    @property
    def score(self) -> tuple[int, int]:
        judged = [r for r in self.rows if r.within is not None]
        return sum(1 for r in judged if r.within), len(judged)

    @property
    def timing_score(self) -> tuple[int, int]:
        judged = [r for r in self.rows if r.within is not None and timing_sensitive(r.counter)]
        return sum(1 for r in judged if r.within), len(judged)

    @property
    def unresolved(self) -> int:
        """Misses the boots cannot establish (within [LOW, HIGH] of their mean's interval)."""
        return sum(1 for r in self.rows if r.within is False and r.unresolved)

    def as_json(self) -> dict[str, Any]:
        k, m = self.score
        t, tm = self.timing_score
        return {
            "scenario": self.scenario,
            "role": self.role,
            "lru": self.lru,
            "family": self.family,
            "set": self.sim_set,
            "costs": self.costs,
            "speed_factor": self.speed,
            "real_reps": self.reps,
            "sim_seeds": self.seeds,
            "kernel": self.kept.get("kernel"),
            "accel": self.kept.get("accel"),
            "baseline": self.kept.get("baseline"),
            "zones": self.zones,
            "counters": [r.as_json() for r in self.rows],
            "run_length_s": self.run_length.as_json() if self.run_length else None,
            "accesses": [r.as_json() for r in self.pace],
            "score": {"within": k, "compared": m, "low": LOW, "high": HIGH,
                      "misses_within_real_interval": self.unresolved,
                      "confidence": CONFIDENCE,
                      "timing_sensitive": {"within": t, "compared": tm}},
            "not_modelled": [
                {"counter": c, "real_mean": v, "why": why} for c, v, why in self.not_modelled
            ],
            "not_mirrored": self.not_mirrored,
        }


def zone_layout(zoneinfo: str) -> list[dict[str, Any]]:
    """Each populated zone of a /proc/zoneinfo: name, spanned, present, managed pages, min."""
    zones: list[dict[str, Any]] = []
    cur: dict[str, Any] | None = None
    for line in zoneinfo.splitlines():
        s = line.split()
        if line.startswith("Node ") and "zone" in s:
            cur = {"zone": s[-1]}
            zones.append(cur)
        elif cur is not None and len(s) == 2 and s[0] in ("spanned", "present", "managed", "min"):
            cur.setdefault(s[0], int(s[1]))
    return [z for z in zones if z.get("present")]


def kernel_used_kib(kept: dict[str, Any]) -> int | None:
    """What the booted guest's kernel holds before the workload (MemTotal - MemFree after
    drop_caches), averaged over the boots; None when the kept data lacks meminfo."""
    used = [
        r["meminfo_before"]["MemTotal"] - r["meminfo_before"]["MemFree"]
        for r in kept.get("reps", [])
        if "MemTotal" in r.get("meminfo_before", {}) and "MemFree" in r["meminfo_before"]
    ]
    return round(sum(used) / len(used)) if used else None


def sim_scenario(
    spec: GuestSpec, zoneinfo: Path, guest_settings: dict[str, str], kernel_used: int | None = None,
    profile: dict[str, Any] | None = None, baseline: bool = False,
) -> dict:
    """The scenario as the simulator runs it beside the guest: the guest's captured zoneinfo
    instead of `ram` (the zones, with the kernel's own reserved pages), the memory the booted
    kernel already holds (`kernel_used`, KiB) unless the scenario sets it, and the guest's
    min_free_kbytes unless the scenario sets one (the kernel computes it at boot from managed
    pages that later change when the initramfs is freed), and the swap device's rotational flag
    where the boots recorded it. With ``profile`` (validate/profile.py)
    its costs and device latencies merged in; with ``baseline``, no cost section at all."""
    doc = {k: (dict(v) if isinstance(v, dict) else v) for k, v in spec.document.items()}
    if baseline:
        doc = guest_profile.without_costs(doc)
    elif profile is not None:
        doc = guest_profile.merge(doc, profile, str(spec.path))
    host = dict(doc.get("host", {}))
    for key in ("ram", "lowmem", "machine"):
        host.pop(key, None)
    host["zoneinfo"] = str(zoneinfo.resolve())
    # The guest's vCPUs are shared by everything it runs: a workload's threads, kswapd and the
    # filesystem's workers queue for them. The simulator's default (a CPU for every busy
    # thread) would let a guest with more busy threads than vCPUs run them all at once.
    host.setdefault("cpu_contention", True)
    # Its processes have page tables, charged to their memory cgroups as in 6.1: without them
    # a cgroup whose memory.low equals its application's size sits exactly at its protection,
    # where the guest's is over it by its page tables and is scanned (memcg-low's `prot`).
    host.setdefault("page_tables", True)
    if kernel_used is not None and "kernel_used" not in host:
        host["kernel_used"] = f"{kernel_used}KiB"
    doc["host"] = host
    sysctl = dict(doc.get("sysctl", {}))
    if "min_free_kbytes" not in sysctl and guest_settings.get("min_free_kbytes", "").isdigit():
        sysctl["min_free_kbytes"] = int(guest_settings["min_free_kbytes"])
    doc["sysctl"] = sysctl
    # The swap device as the guest's kernel sees it (boots from 2026-11-30 on record it): its
    # rotational flag chooses the readahead (offset-based or VMA-based), so the model takes the
    # guest's, whatever the scenario assumed.
    if "swap" in doc and guest_settings.get("swap_rotational") in ("0", "1"):
        doc["swap"] = {**doc.get("swap", {}), "rotational": guest_settings["swap_rotational"] == "1"}
    # The scenario is handed over as a table, not a file: a relative path in it (the measured
    # wake-up latencies) is made absolute against the scenario's directory, as the parser
    # would have resolved it.
    cost = dict(doc.get("cost", {}))
    samples = cost.get("wakeup_latency_samples")
    if isinstance(samples, str):
        cost["wakeup_latency_samples"] = str((spec.path.parent / samples).resolve())
        doc["cost"] = cost
    doc["name"] = spec.name
    # A sensitivity sweep's point (`validate --set`), over everything above.
    for key, value in spec.sim_set.items():
        try:
            set_key(doc, key, value)
        except KeyError as e:
            raise ValidateError(f"--set {key}: {e.args[0]}") from None
    return doc


def kept_sim_scenario(
    spec: GuestSpec, kept: dict[str, Any], profile: dict[str, Any] | None = None,
    baseline: bool = False,
) -> dict:
    """The scenario the simulator runs beside the kept boots of ``spec``."""
    return sim_scenario(
        spec, Path(kept["zoneinfo_path"]), kept.get("guest_settings", {}), kernel_used_kib(kept),
        profile, baseline,
    )


def simulate(
    spec: GuestSpec, kept: dict[str, Any], seeds: int, profile: dict[str, Any] | None = None,
    baseline: bool = False,
) -> tuple[list[dict[str, int]], list[float]]:
    """The simulator's vmstat and simulated run length (seconds) for seeds 1..seeds
    (deterministic: same inputs, same numbers)."""
    counters, times, _ = _simulate(spec, kept, seeds, profile, baseline)
    return counters, times


def _simulate(
    spec: GuestSpec, kept: dict[str, Any], seeds: int, profile: dict[str, Any] | None,
    baseline: bool,
) -> tuple[list[dict[str, int]], list[float], list[dict[str, Any]]]:
    scenario = kept_sim_scenario(spec, kept, profile, baseline)
    results = [api.run(scenario, seed=s) for s in range(1, seeds + 1)]
    counters = [dict(r.vmstat) for r in results]
    if spec.fs_type is not None:
        # The filesystem's slab at the end of the run, beside the vmstat counters.
        for c, r in zip(counters, results):
            c.update(fscount.simulated(r.extra_files, spec.fs_type))
    # Stall time and each cgroup's files, where the model writes them (validate/cgroups.py).
    for c, r in zip(counters, results):
        c.update(cgroups.sim_psi(r.summary))
        for path, _ in spec.cgroups:
            c.update(cgroups.sim_cgroup(r.extra_files, path))
    return (counters, [r.summary["sim_time_ns"] / 1e9 for r in results],
            [r.summary for r in results])


def pace_rows(kept: dict[str, Any], summaries: list[dict[str, Any]]) -> list[Row]:
    """Each anonymous workload's accesses, real (the workload program's count per boot) beside
    simulated (the thread's `accesses` per seed): how fast the application ran, which sets how
    often its pages are found referenced and refault. Not scored, like the run length; empty for
    boots of programs older than the count."""
    per_boot = [rep.get("anon_threads") for rep in kept.get("reps", [])]
    if not per_boot or any(not b for b in per_boot):
        return []
    rows = []
    for name in sorted({t["workload"] for t in per_boot[0]}):
        real = [sum(t["accesses"] for t in b if t["workload"] == name) for b in per_boot]
        sim = [sum(t["accesses"] for t in s.get("threads", []) if t["thread"] == f"{name}/anon")
               for s in summaries]
        if min(real) > 0 and min(sim) > 0:
            row = make_row(f"{name} accesses", real, sim)
            row.within = None
            rows.append(row)
    return rows


def compare(
    spec: GuestSpec, kept: dict[str, Any], seeds: int, profile: dict[str, Any] | None = None,
    baseline: bool = False,
) -> Comparison:
    """Compare the kept real results of ``spec`` with the simulator over ``seeds`` seeds: with
    ``profile``'s costs merged in, or with none at all (``baseline``)."""
    sims, times, summaries = _simulate(spec, kept, seeds, profile, baseline)
    c = build(spec, kept, sims)
    c.pace = pace_rows(kept, summaries)
    c.role = spec.role
    c.lru = spec.lru
    c.sim_set = dict(spec.sim_set)
    c.costs = ("none" if baseline else profile["profile"]["path"] if profile is not None
               else "own [cost]" if "cost" in spec.document else "none")
    if profile is not None and not baseline:
        c.speed = float(profile["profile"].get("speed_factor", 1.0))
    walls = [rep["wall_time_s"] for rep in kept["reps"] if "wall_time_s" in rep]
    if walls and len(walls) == len(kept["reps"]):
        c.run_length = make_row("run length (s)", walls, times)
        c.run_length.within = None
    return c


def noise_floor(deltas: list[dict[str, int]]) -> float:
    """NOISE_FRACTION of the page allocations of the real runs (mean over the boots)."""
    allocs = [sum(v for k, v in d.items() if k.startswith("pgalloc_")) for d in deltas]
    return NOISE_FRACTION * mean(allocs) if allocs else 0.0


def family(spec: GuestSpec) -> str:
    """The family a scenario's score is summed in: its filesystem if it has one (the creation
    storms), else memory cgroups if it has any, else neither."""
    if spec.fs_type is not None:
        return f"{spec.fs_type} storms"
    return "memory cgroups" if spec.cgroups else "no filesystem or cgroup"


def build(spec: GuestSpec, kept: dict[str, Any], sims: list[dict[str, int]]) -> Comparison:
    deltas = [rep["vmstat_delta"] for rep in kept["reps"]]
    floor = noise_floor(deltas)
    rows = []
    # Without an anonymous workload, page faults are only the workload program's own start-up
    # and I/O buffer, which the scenario does not describe.
    has_anon = any("anon" in w for w in spec.document.get("workload", []))
    skipped = () if has_anon else ("pgfault",)
    for c in COMPARED:
        if c in skipped:
            continue
        if all(c in d for d in deltas) and all(c in s for s in sims):
            row_floor = EVENT_FLOOR if c in EVENT_COUNTERS else floor
            rows.append(make_row(c, [d[c] for d in deltas], [s[c] for s in sims], row_floor))
    if spec.fs_type is not None:
        rows += _fs_rows(spec.fs_type, kept, deltas, sims, floor)
    rows += cgroups.rows([path for path, _ in spec.cgroups], kept, sims, floor)
    not_modelled = []
    for c in BACKGROUND:
        if all(c in d for d in deltas):
            m = mean([d[c] for d in deltas])
            if m != 0:
                sim = mean([s.get(c, 0) for s in sims])
                why = (
                    "background compaction, proactive and for the kernel's own allocations; "
                    f"the model's (proactive, or for its workloads' requests): {sim:.0f}"
                )
                not_modelled.append((c, m, why))
    for c in skipped:
        m = mean([d.get(c, 0) for d in deltas])
        if m != 0:
            not_modelled.append((c, m, "the workload program's own faults (start-up, I/O buffer)"))
    for c, why in NOT_MODELLED.items():
        if spec.fs_type is not None and c in fscount.VMSTAT:
            continue  # compared above
        if all(c in d for d in deltas):
            m = mean([d[c] for d in deltas])
            if m != 0:
                not_modelled.append((c, m, why))
    zones = []
    zpath = Path(kept["zoneinfo_path"])
    if zpath.is_file():
        zones = zone_layout(zpath.read_text())
    limits = list(GENERAL_LIMITS) + [x for x in spec.not_mirrored if x not in GENERAL_LIMITS]
    return Comparison(spec.name, len(deltas), len(sims), kept, rows, not_modelled, limits, zones,
                      family=family(spec))


def _fs_rows(
    fs_type: str, kept: dict[str, Any], deltas: list[dict[str, int]], sims: list[dict[str, int]],
    floor: float,
) -> list[Row]:
    """The rows a scenario with [fs] adds (validate/fscount.py): the shrinker's vmstat
    counters at the event floor, SReclaimable and SUnreclaim (kB) at the page floor in kB, the
    dentry and inode caches' objects at the event floor. Rows the boots lack are left out."""
    rows = []
    for c in fscount.VMSTAT:
        if all(c in d for d in deltas) and all(c in s for s in sims):
            rows.append(make_row(c, [d[c] for d in deltas], [s[c] for s in sims], EVENT_FLOOR))
    real = [fscount.real(rep, fs_type) for rep in kept["reps"]]
    if any(r is None for r in real):
        return rows
    for c in fscount.rows(fs_type):
        row_floor = 4 * floor if c in fscount.MEMINFO else EVENT_FLOOR
        rows.append(make_row(c, [r[c] for r in real if r is not None], [s.get(c, 0) for s in sims],
                             row_floor))
    return rows
