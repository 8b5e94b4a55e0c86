"""The guest profile from the calibration scenarios' boots alone, by the fixed rules of
docs/VALIDATION.md ("Protocol"); ``scripts/validate-calibrate.py`` writes it.

Two calibration scenarios, each isolating one kind of cost: an anonymous one (one sequential
workload of two passes: a writing pass of first touches, then a re-reading pass of swap-cache
hits and swap-ins) and a file one (one sequential read through read-ahead). From their
reference-sitting boots (validate/costs.py) come six measured figures, each the cost of one
operation of the guest:

=============  =======================================  ========================================
figure         measured as                              keys it covers (split in native ratio)
=============  =======================================  ========================================
first touch    anon: CPU before the first swap-in /     anon_fault
               pages
re-read page   anon: CPU after it / pages               7 swapcache_fault + 1 major_fault, / 8
file page      file: the reader's CPU / pages           file_hit + file_miss
kept page      anon: kswapd's batches of kept pages     scan_mapped
swapped page   anon: kswapd's batches of written pages  scan_mapped + unmap + swapout_submit
freed page     both: kswapd's batches of freed pages    scan_unmapped + free_page
=============  =======================================  ========================================

The guest's slowdown is the geometric mean of measured over native over those six; every key
no figure covers is its native default times it, the filesystem's CPU costs (`[fs]`, and the
metadata walker's `hit_cost`, `[stat]`) included, and the filesystem's device waits
(`io_latency`, `logforce_latency`) are the data disk's measured request latency. `unmap` (native 0) takes what the swapped
page leaves after `scan_mapped` and `swapout_submit`. The race's two figures (`readahead_alloc`
from the file scenario, `balance_start` from both, their geometric mean: kswapd's run start to
its first batch), the devices' request latencies (the swap disk's from the anonymous scenario,
the data disk's from the file one) and kswapd's wake-up latencies (both scenarios' boots,
pooled: from the allocator's `mm_vmscan_wakeup_kswapd` to `mm_vmscan_kswapd_wake`) are taken
as measured.

A filesystem calibration scenario (one per type, `validation/calibrate/<type>-create-stat`:
one creator making empty files, then one walker stat-ing them twice, with no memory pressure)
measures that type's two CPU costs from its kept boots, by its workloads' end times: a create
(the creator's run over the files it made: `[fs.<type>] create_cost`) and a cached lookup (the
walker's run over its lookups: `[stat.<type>] hit_cost`), each the mean over the boots. In the
model, without pressure, a create takes `create_cost` and a cached lookup `hit_cost`, so the
measured times are the keys (`test_validate_fs_calibration.py` checks the model gives them
back).

The touch calibration scenario (`anon-touch`: one application touching half the RAM at random
for a fixed time, 5 us spun between two accesses) measures what touching a page in memory
costs: `anon_touch` is the value at which the model, under the costs derived from the two page
scenarios, makes the boots' mean count of accesses (bisection: the count falls as the cost
rises). It replaces the key's native times the slowdown and is not in the slowdown.
These figures cover their own keys only and are not in the slowdown. A filesystem calibration
scenario not yet sat in the sitting leaves its type's keys to the section's own (native times
the slowdown).
"""

from __future__ import annotations

import json
import statistics
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import api
from . import costs, profile, sittings, store
from . import spec as spec_module
from .compare import kept_sim_scenario
from .errors import ValidateError
from .spec import GuestSpec, duration_ns, size_bytes

PAGE = 4096
# Keys no figure covers: native default times the guest's slowdown. `wakeup_latency` is not
# among them: the measured samples replace it.
UNMEASURED = ("anon_touch", "file_write", "swapout_submit", "slowpath", "compact_scan",
              "migrate_page", "balance_iteration")
# The filesystem's ([fs]) CPU costs and the metadata walker's ([workload.stat]) cost of a
# cached lookup: no boot measures them, native times the slowdown. The filesystem's waits on
# its device: the data disk's measured request latency.
FS_CPU = ("create_cost", "flush_cluster_cost", "dentry_scan_cost", "inode_scan_cost",
          "free_object_cost")
FS_WAITS = ("io_latency", "logforce_latency")
STAT_CPU = ("hit_cost",)
# The calibration scenarios whose run length their work sets, so that it says how fast a
# sitting's guest went (the speed factor); the touch and filesystem ones run for a set time.
PACED_KINDS = ("anon", "file")


@dataclass
class Calibration:
    """A derived profile: its values in microseconds with where each came from."""

    sitting: Path
    scenarios: list[str]
    slowdown: float
    cost: dict[str, float] = field(default_factory=dict)
    devices: dict[str, float] = field(default_factory=dict)
    #: `fs.<key>` and `stat.<key>`: the filesystem's and the walker's, in microseconds.
    fs: dict[str, float] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    figures: dict[str, tuple[float, float]] = field(default_factory=dict)
    samples: list[float] = field(default_factory=list)


def _kind(spec: GuestSpec) -> str:
    """"anon", "file", "touch" or "fs-<type>": which cost the calibration scenario isolates; a
    ValidateError when it isolates none as the rules need."""
    ws = spec.document.get("workload", [])
    if len(ws) == 1 and set(ws[0]) - {"name", "start", "duration"} == {"anon"}:
        a = ws[0]["anon"]
        if a.get("pattern") == "random" and "duration" in ws[0] and "fs" not in spec.document:
            return "touch"
    fs = spec.document.get("fs")
    if fs is not None and [set(w) - {"name", "start"} for w in ws] == [{"fsmark"}, {"stat"}]:
        f, st = ws[0]["fsmark"], ws[1]["stat"]
        if (int(f.get("threads", 1)) == 1 and size_bytes(f.get("file_size", 0)) == 0
                and int(st.get("threads", 1)) == 1 and "start" not in ws[0]
                and fs.get("type") in profile.FS_TYPES):
            return f"fs-{fs['type']}"
    if len(ws) == 1 and set(ws[0]) - {"name", "start"} == {"anon"}:
        a = ws[0]["anon"]
        if a.get("pattern", "sequential") == "sequential" and int(a.get("passes", 1)) == 2:
            return "anon"
    if len(ws) == 1 and set(ws[0]) - {"name", "start"} == {"file"}:
        if ws[0]["file"].get("op", "read") == "read":
            return "file"
    raise ValidateError(
        f"{spec.path}: a calibration scenario has one workload, either [workload.anon] "
        "sequential with two passes, or random for a `duration`, or [workload.file] reading, "
        "or, with [fs], one "
        "single-threaded [workload.fsmark] of empty files from the start and then one "
        "single-threaded [workload.stat] (docs/VALIDATION.md, \"Protocol\"); move it to "
        "validation/predict/"
    )


def _native(spec: GuestSpec) -> dict[str, float]:
    """The simulator's native costs, in microseconds (the scenario has no [cost])."""
    resolved = tomllib.loads(api.show_defaults(spec.path))
    return {k: duration_ns(v) / 1e3 for k, v in resolved["cost"].items()
            if k != "wakeup_latency_samples"}


def _fs_native() -> dict[str, float]:
    """The simulator's native [fs] and [workload.stat] costs, in microseconds, `fs.<key>` and
    `stat.<key>` (the defaults of a scenario with a filesystem and a walker)."""
    resolved = tomllib.loads(api.show_defaults(
        {"fs": {}, "workload": [{"name": "c", "fsmark": {}}, {"name": "w", "stat": {}}]}))
    out = {f"fs.{k}": duration_ns(resolved["fs"][k]) / 1e3 for k in FS_CPU + FS_WAITS}
    stat = resolved["workload"][1]["stat"]
    return out | {f"stat.{k}": duration_ns(stat[k]) / 1e3 for k in STAT_CPU}


def _need(value: float | None, what: str, spec: GuestSpec) -> float:
    if value is None or value <= 0:
        raise ValidateError(f"{spec.real_dir}: the kept boots of {spec.name} do not measure "
                            f"{what}; a calibration sitting needs traced boots of it")
    return value


def _tasks(spec: GuestSpec) -> dict[str, float]:
    tasks = costs.load_tasks(spec)
    if tasks is None:
        raise ValidateError(f"{spec.real_dir / (spec.name + '.tasks.json')}: missing; boot "
                            f"it with `scripts/validate-trace.py {spec.path} --tasks`")
    return costs.workload_cpu(tasks)[0]


def derive(specs: list[GuestSpec]) -> Calibration:
    """The profile the kept boots of the calibration scenarios ``specs`` give."""
    by_kind: dict[str, GuestSpec] = {}
    for s in specs:
        kind = _kind(s)
        if kind in by_kind:
            raise ValidateError(f"{s.path}: a second {kind} calibration scenario (beside "
                                f"{by_kind[kind].path}); the rules take one of each")
        by_kind[kind] = s
    if not {"anon", "file"} <= set(by_kind):
        raise ValidateError("the calibration needs one anonymous and one file scenario in "
                            "validation/calibrate/ (docs/VALIDATION.md, \"Protocol\")")
    fs_specs = {k: by_kind.pop(k) for k in sorted(by_kind) if k.startswith("fs-")}
    touch = by_kind.pop("touch", None)
    anon, file = by_kind["anon"], by_kind["file"]
    reps = {k: store.load(s)["reps"] for k, s in by_kind.items()}
    native = _native(anon)
    fa, ff = costs.kswapd_fates(anon, reps["anon"]), costs.kswapd_fates(file, reps["file"])
    ba, bf = costs.from_boots(anon, reps["anon"]), costs.from_boots(file, reps["file"])
    ta, tf = _tasks(anon), _tasks(file)
    anon_pages = size_bytes(anon.document["workload"][0]["anon"]["size"]) // PAGE
    file_pages = size_bytes(file.document["workload"][0]["file"]["size"]) // PAGE

    n = native
    figures = {
        "first touch": (ta["cpu_before_swap_in_s"] / anon_pages * 1e6, n["anon_fault"]),
        "re-read page": ((ta["cpu_s"] - ta["cpu_before_swap_in_s"]) / anon_pages * 1e6,
                         (7 * n["swapcache_fault"] + n["major_fault"]) / 8),
        "file page": (tf["cpu_s"] / file_pages * 1e6, n["file_hit"] + n["file_miss"]),
        "kept page": (_need(fa["kept"], "a kept page", anon), n["scan_mapped"]),
        "swapped page": (_need(fa["written"], "a swapped-out page", anon),
                         n["scan_mapped"] + n["unmap"] + n["swapout_submit"]),
        "freed page": (statistics.geometric_mean([_need(fa["freed"], "a freed page", anon),
                                                  _need(ff["freed"], "a freed page", file)]),
                       n["scan_unmapped"] + n["free_page"]),
    }
    slowdown = statistics.geometric_mean([m / nat for m, nat in figures.values()])
    c = Calibration(sitting=anon.real_dir.parent, scenarios=[anon.name, file.name],
                    slowdown=slowdown, figures=figures)
    src = c.sources

    def split(figure: str, keys: tuple[str, ...], weights: tuple[float, ...]) -> None:
        total = figures[figure][0]
        # total = sum(weight * key) with each key its native default times one factor.
        scale = total / sum(n[x] * w for x, w in zip(keys, weights))
        for k in keys:
            c.cost[k] = n[k] * scale
            src[k] = f"{figure} ({total:.1f} us), split in native proportions"

    split("first touch", ("anon_fault",), (1,))
    # Per page of the re-read: seven swap-cache hits and one swap-in of eight pages.
    split("re-read page", ("swapcache_fault", "major_fault"), (7 / 8, 1 / 8))
    split("file page", ("file_hit", "file_miss"), (1, 1))
    split("freed page", ("scan_unmapped", "free_page"), (1, 1))
    c.cost["scan_mapped"] = figures["kept page"][0]
    src["scan_mapped"] = f"kept page ({figures['kept page'][0]:.1f} us)"
    for k in UNMEASURED:
        c.cost[k] = n[k] * slowdown
        src[k] = f"not measured: native {n[k]:g} us times the slowdown {slowdown:.2f}"
    c.cost["unmap"] = figures["swapped page"][0] - c.cost["scan_mapped"] - c.cost["swapout_submit"]
    src["unmap"] = (f"swapped page ({figures['swapped page'][0]:.1f} us) less scan_mapped and "
                    "swapout_submit")
    c.cost["readahead_alloc"] = _need(bf.get("readahead_alloc"), "the read-ahead page gap", file)
    src["readahead_alloc"] = f"{file.name}: the read-ahead window's page gap"
    # The wake-up samples end at the start of kswapd's run (below), so `balance_start` is from
    # that start to the first batch, not from kswapd's switch onto its CPU.
    c.cost["balance_start"] = statistics.geometric_mean([
        _need(costs.wake_to_first_batch(s, reps[k]), "kswapd's run start to first batch", s)
        for k, s in (("anon", anon), ("file", file))])
    src["balance_start"] = "kswapd's run start to its first batch, both (geometric mean)"
    for key, s, kind in (("swap.read_latency", anon, "anon"), ("swap.write_latency", anon, "anon"),
                         ("disk.read_latency", file, "file")):
        got = (ba if kind == "anon" else bf).get(key)
        c.devices[key] = _need(got, f"the {key.replace('.', ' ')}", s)
        src[key] = f"{s.name}: the median request less its transfer"
    fs_native = _fs_native()
    for k in [f"fs.{x}" for x in FS_CPU] + [f"stat.{x}" for x in STAT_CPU]:
        c.fs[k] = fs_native[k] * slowdown
        src[k] = f"not measured: native {fs_native[k]:g} us times the slowdown {slowdown:.2f}"
    for k in FS_WAITS:
        c.fs[f"fs.{k}"] = c.devices["disk.read_latency"]
        src[f"fs.{k}"] = f"the data disk's request: [disk] read_latency ({file.name})"
    if touch is not None and not sittings.not_yet_sat(touch.path, anon.real_dir.parent):
        reps_t = store.load(touch)["reps"]
        c.cost["anon_touch"] = solve_anon_touch(touch, store.load(touch), c)
        accesses = statistics.fmean(_accesses(touch, reps_t))
        src["anon_touch"] = (f"{touch.name}: the value at which the model makes the boots' "
                             f"{accesses:,.0f} accesses")
        c.scenarios.append(touch.name)
    for kind, s in fs_specs.items():
        if sittings.not_yet_sat(s.path, anon.real_dir.parent):
            continue
        fs_type = kind.removeprefix("fs-")
        create_us, lookup_us = fs_figures(s, store.load(s)["reps"])
        c.fs[f"fs.{fs_type}.create_cost"] = create_us
        src[f"fs.{fs_type}.create_cost"] = f"{s.name}: the creator's run over its creates"
        c.fs[f"stat.{fs_type}.hit_cost"] = lookup_us
        src[f"stat.{fs_type}.hit_cost"] = f"{s.name}: the walker's run over its lookups"
        c.scenarios.append(s.name)
    # The model's wake-up latency is the allocator's wait from `wakeup_kswapd` to kswapd's run
    # (its `Woken` state): `kswapd_wait_us`, not `sched_wakeup` -> `sched_switch`, which misses
    # the remote wake-up's delivery to kswapd's vCPU and kswapd's way back into kswapd().
    for s in (anon, file):
        c.samples += [w for r in reps["anon" if s is anon else "file"]
                      for w in r.get("kswapd_wait_us", [])]
    if len(c.samples) < 50:
        raise ValidateError(f"{anon.real_dir}: the calibration boots traced only "
                            f"{len(c.samples)} kswapd wake-ups; at least 50 are needed")
    return c


def _accesses(spec: GuestSpec, reps: list[dict[str, Any]]) -> list[int]:
    """Each boot's count of the touch scenario's application's accesses."""
    name = spec.document["workload"][0]["name"]
    out = []
    for i, rep in enumerate(reps, 1):
        got = [t["accesses"] for t in rep.get("anon_threads", []) if t["workload"] == name]
        if not got:
            raise ValidateError(f"{spec.real_dir}: boot {i} of {spec.name} has no access count "
                                "of its application (a workload program from before "
                                "2026-11-29); boot it again")
        out.append(sum(got))
    return out


def _touch_accesses(spec: GuestSpec, kept: dict[str, Any], c: Calibration,
                    touch_us: float) -> int:
    """The model's accesses in the touch scenario, as `validate` simulates it beside the boots
    (the guest's zones), under the costs derived so far with `anon_touch` = ``touch_us``."""
    prof = {"profile": {"path": "(being derived)"},
            "cost": {k: _ns(v) for k, v in c.cost.items()} | {"anon_touch": _ns(touch_us)}}
    r = api.run(kept_sim_scenario(spec, kept, prof), seed=1)
    name = f"{spec.document['workload'][0]['name']}/anon"
    return sum(t["accesses"] for t in r.summary["threads"] if t["thread"] == name)


def solve_anon_touch(spec: GuestSpec, kept: dict[str, Any], c: Calibration) -> float:
    """`anon_touch` (us) at which the model's accesses in the touch scenario are the boots'
    mean: the model's count falls as the cost rises, so bisection over [0, 1000] us, to 1 ns.
    A ValidateError when even a free touch makes fewer accesses than the boots (the other
    costs already take longer than the guest did)."""
    want = statistics.fmean(_accesses(spec, kept["reps"]))
    lo, hi = 0.0, 1000.0
    if _touch_accesses(spec, kept, c, lo) < want:
        raise ValidateError(f"{spec.real_dir}: the model makes fewer accesses than the boots of "
                            f"{spec.name} ({want:,.0f}) even with touches free: its first "
                            "touches or spin already take longer than the guest's run")
    while hi - lo > 0.001:
        mid = (lo + hi) / 2
        if _touch_accesses(spec, kept, c, mid) >= want:
            lo = mid
        else:
            hi = mid
    return round((lo + hi) / 2, 3)


def fs_figures(spec: GuestSpec, reps: list[dict[str, Any]]) -> tuple[float, float]:
    """A filesystem calibration scenario's two figures in microseconds, means over its boots:
    a create (the creator's end over the files it made; it starts with the run) and a cached
    lookup (the walker's end less its start, over its lookups). A ValidateError when a boot
    lacks them or its creator was still creating when the walker began."""
    creator, walker = (w["name"] for w in spec.document["workload"])
    walk_start = duration_ns(spec.document["workload"][1].get("start", 0))
    creates, lookups = [], []
    for i, rep in enumerate(reps, 1):
        ends = {w["name"]: w["end_ns"] for w in rep.get("workloads", [])}
        made = sum(t.get("created", 0) for t in rep.get("fs_threads", [])
                   if t.get("workload") == creator)
        looked = sum(t.get("lookups", 0) for t in rep.get("fs_threads", [])
                     if t.get("workload") == walker)
        if creator not in ends or walker not in ends or not made or not looked:
            raise ValidateError(f"{spec.real_dir}: boot {i} of {spec.name} lacks its creator's "
                                "or walker's end or counts; boot it again")
        if ends[creator] > walk_start:
            raise ValidateError(
                f"{spec.real_dir}: in boot {i} of {spec.name} the creator ran until "
                f"{ends[creator] / 1e9:.1f} s, past the walker's start at {walk_start / 1e9:.0f} "
                "s: the walk's lookups were not alone; start the walker later in the scenario "
                "(a change of the calibration set-up: a new sitting)")
        creates.append(ends[creator] / made / 1e3)
        lookups.append((ends[walker] - walk_start) / looked / 1e3)
    return statistics.fmean(creates), statistics.fmean(lookups)


def _ns(us: float) -> str:
    return f"{round(us * 1000)}ns"


def samples_name(name: str) -> str:
    return f"{name}.kswapd-wakeup.json"


def render(c: Calibration, out: Path) -> tuple[str, str]:
    """The profile's TOML text and its samples' JSON text, for a profile written at ``out``."""
    sitting = Path("..") / c.sitting.relative_to(out.parent.parent) if c.sitting.is_relative_to(
        out.parent.parent) else c.sitting
    lines = [
        f"# The guest profile {out.stem}: Debian's 6.1 kernel in a TCG guest (docs/VALIDATION.md,",
        "# \"Protocol\"). Written by `python scripts/validate-calibrate.py` from the kept boots of",
        f"# the calibration scenarios ({', '.join(c.scenarios)}) of the sitting {sitting};",
        "# do not edit by hand (a test checks that it is what the script derives).",
        "# Measured figures, us (measured / native):",
    ]
    lines += [f"#   {k}: {m:.2f} ({m / nat:.1f} x {nat:g})" for k, (m, nat) in c.figures.items()]
    lines += [
        "",
        "[profile]",
        f'sitting = "{sitting.as_posix()}"',
        f"calibration = [{', '.join(json.dumps(s) for s in c.scenarios)}]",
        f"slowdown = {c.slowdown:.4f}",
        "",
        "[cost]",
    ]
    for k in sorted(c.cost):
        lines += [f"# {c.sources[k]}", f'{k} = "{_ns(c.cost[k])}"']
    lines += ["# kswapd's wake-up latencies the calibration boots recorded (wakeup_kswapd to its "
              "run), pooled",
              f'wakeup_latency_samples = "{samples_name(out.stem)}"']
    for section in ("swap", "disk"):
        keys = sorted(k for k in c.devices if k.startswith(section + "."))
        lines += ["", f"[{section}]"]
        for k in keys:
            lines += [f"# {c.sources[k]}", f'{k.split(".", 1)[1]} = "{_ns(c.devices[k])}"']
    heads = {"fs": "# The filesystem's, for a scenario with [fs]",
             "stat": "# The metadata walker's, for each [workload.stat]"}
    for section, head in heads.items():
        lines += ["", f"[{section}]", head]
        for k in sorted(x for x in c.fs if x.startswith(section + ".") and x.count(".") == 1):
            lines += [f"# {c.sources[k]}", f'{k.split(".", 1)[1]} = "{_ns(c.fs[k])}"']
    for section in heads:
        for t in profile.FS_TYPES:
            keys = sorted(x for x in c.fs if x.startswith(f"{section}.{t}."))
            if keys:
                lines += ["", f"[{section}.{t}]", f"# Measured on {t}, over [{section}]'s own"]
            for k in keys:
                lines += [f"# {c.sources[k]}", f'{k.rsplit(".", 1)[1]} = "{_ns(c.fs[k])}"']
    text = "\n".join(lines) + "\n"
    lat = c.samples
    samples = {
        "what": "kswapd0 wake-up latency: microseconds from the allocator's "
                "mm_vmscan_wakeup_kswapd to the next mm_vmscan_kswapd_wake (kswapd_wait_us), "
                "pooled over the calibration scenarios' kept boots",
        "scenarios": c.scenarios[:2],
        "sitting": sitting.as_posix(),
        "wakeups": len(lat),
        "mean_us": round(statistics.fmean(lat), 1),
        "median_us": statistics.median(lat),
        "latencies_us": lat,
    }
    return text, json.dumps(samples, indent=1) + "\n"


def write(c: Calibration, out: Path) -> None:
    text, samples = render(c, out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    (out.parent / samples_name(out.stem)).write_text(samples)


def profile_values(path: Path) -> dict[str, float]:
    """A written profile's values in microseconds, `section.key` for the devices (for the
    test that it is what :func:`derive` gives)."""
    return values(profile.load(path))


def values(doc: dict[str, Any]) -> dict[str, float]:
    """A loaded profile's times in microseconds, as :func:`profile_values` names them."""
    out = {k: duration_ns(v) / 1e3 for k, v in doc.get("cost", {}).items()
           if k != "wakeup_latency_samples"}
    for section in ("swap", "disk", "fs", "stat"):
        for k, v in doc.get(section, {}).items():
            if isinstance(v, dict):
                out |= {f"{section}.{k}.{x}": duration_ns(y) / 1e3 for x, y in v.items()}
            else:
                out[f"{section}.{k}"] = duration_ns(v) / 1e3
    return out



def speed_factor(root: Path, sitting: Path, prof: dict[str, Any]) -> float:
    """A sitting's speed factor against the profile ``prof`` (docs/VALIDATION.md, "The speed
    factor of a sitting"): over the calibration scenarios both sittings kept, the geometric
    mean of the ratio of their mean run lengths, this sitting's over the profile's own. Only
    those of PACED_KINDS count: a scenario that runs for a set time would pull it to 1."""
    own = Path(prof["profile"]["sitting"])
    ratios = []
    for path in sittings.scenarios(root):
        if sittings.role(path) != "calibration":
            continue
        specs = [spec_module.load(path, d) for d in (sitting, own)]
        if _kind(specs[0]) not in PACED_KINDS:
            continue
        try:
            walls = [statistics.fmean(r["wall_time_s"] for r in store.load(s)["reps"])
                     for s in specs]
        except ValidateError:  # not kept in one of the two sittings
            continue
        ratios.append(walls[0] / walls[1])
    if not ratios:
        raise ValidateError(f"{sitting}: no kept boots of a calibration scenario to take its "
                            "speed factor from; give --speed FACTOR")
    return statistics.geometric_mean(ratios)
