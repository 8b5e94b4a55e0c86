"""Seed 001: "KVM: Guest Free Page Hinting" (Nitesh Narayan Lal's RFC v8, February 2019) and the
alternatives it was weighed against: how many 5 GiB guests a 15,837 MiB host without swap can run
when each guest allocates, writes and frees 4 GiB, under each way a guest can tell its host about
free memory (mechanisms.md §D, §E.D).

One check group per statement of mechanisms.md §E.D:

- ``E.D.1`` guest counts of the seed procedure (guests started one after another, each running
  the 4 GiB program; stop at the host's first OOM kill), per variant, on a guest that has run a
  while (its memory aged: one pinned page per 4 MiB) and on a freshly booted one. The D4 count
  is swept over the gap between guests.
- ``E.D.2`` host RSS after the program exits, per variant, from one guest's ``vm_rss.csv``.
- ``E.D.3`` granularity on a fully fragmented guest (no free 2 MiB block can form).
- ``E.D.4`` refault locality under D4: a second program that fits in the unreported free memory
  refaults nothing; a third that does not, does.
- ``E.D.5`` synchronous cost, from the completion time of a program that frees as it runs:
  a slower report round trip delays D3's program by one round trip per 512 frees, D4's not.
- ``sensitivity``: D2's count over the reading of the seed's units (binary or decimal), the
  guest's base (§D.5's 0.5-1 GB) and fresh or aged guests, seeds 1-5.

The checks are in :mod:`.free_page_hinting_checks`. Every measured figure comes from a run
made here; ``exit-rss.csv`` is the plot-ready host RSS of the E.D.2 runs.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from ..results import load_run
from ..store import Store
from ..tables import markdown_table
from . import free_page_hinting_checks as fc
from .checks import Check, Situation, close_situation, finish, holds_check, open_situation
from .free_page_hinting_checks import guests_completed, release_times, rss_series, write_series
from .sensitivity import (
    ensure_many,
    sensitivity_plot,
    sensitivity_record,
    sensitivity_table,
    sweep_knob,
)

NAME = "free-page-hinting"
TITLE = "Guest free page hinting: how many guests fit (seed 001)"

GIB = 1 << 30
#: The seed's setup (mechanisms.md §D.5) under its two readings: (host RAM, guest RAM,
#: program). "binary", the default, reads "Memory-15837 MB" as what `free -m` (MiB) shows for
#: a 16 GiB host and "5 GB" as QEMU's `-m 5G`; "decimal" reads them as written. The default
#: was flipped to binary in the commit that made E.D.1.D2 pass (e558969); the sensitivity
#: situation shows both (docs/MODEL.md).
READINGS = {"binary": ("15837MiB", "5GiB", "4GiB", 4 * GIB),
            "decimal": ("15837MB", "5GB", "4GB", 4 * 10**9)}
UNITS = "binary"
HOST_RAM, GUEST_RAM, PROGRAM, PROGRAM_BYTES = READINGS[UNITS]
#: The host kernel's own memory and a guest's boot-time resident set (§D.5's host_base, and
#: its base of "about 0.8 GB"); the sensitivity situation sweeps the base over §D.5's 0.5-1 GB
#: up to 800 MB: at 1 GB the 4 GiB program does not fit the 5 GiB guest (the guest's own OOM
#: killer ends it in every guest, under either reading), and the thread's programs finished.
HOST_BASE, GUEST_BASE = "768MiB", "800MB"
BASES = ["500MB", "650MB", "800MB"]
#: Guests tried in the count runs (more than any variant fits); the sensitivity sweep tries 8,
#: enough to decide D2's 5-7 (8 there means "more than 7") at half the cost of its largest runs.
MAX_GUESTS, SWEEP_GUESTS = 16, 8
#: Gap between guests: D4 needs about 30 s to report (§D.5), so 40 s lets every variant finish.
GAP_S = 40
#: An aged guest: one long-lived pinned page per 4 MiB (no free order-10 block); a fully
#: fragmented one: per 2 MiB (no free 2 MiB block at all).
AGED, FRAGMENTED = 1024, 512
VARIANTS = ["D1", "D2", "D2b", "D3", "D3cmma", "D4"]
#: The aged-guest count also runs D2 as its stored code has it (entries in use again kept).
COUNT_VARIANTS = VARIANTS[:2] + ["D2stored"] + VARIANTS[2:]
#: The thread's counts (mechanisms.md §E.D.1); its D2 is the patch set, read either way.
THREAD = {"D1": "3", "D2": "5-7", "D2stored": "5-7"}
#: E.D.5's program: 20,000 allocations of 2 MiB, each freed 1 us later, as fast as the vCPU
#: goes (so a stall on its path delays it); the report's round trip at its default and 1 ms
#: slower.
CHURN = {"order": 9, "rate": 100_000_000, "lifetime": "1us", "gfp": "kernel", "count": 20_000}
REPORT_COSTS = {"base": "30us", "slow": "1030us"}
SEEDS = range(1, 6)

SITUATIONS = [
    Situation("guests", "E.D.1: guests launched until the host kills one (aged guests)",
              COUNT_VARIANTS),
    Situation("fresh", "E.D.1: the same with freshly booted guests, as the thread ran them",
              VARIANTS),
    Situation("gap", "E.D.1: D4's count against the gap between guests", ["10s", "40s"]),
    Situation("exit", "E.D.2: one guest's host RSS after its program exits",
              ["D1", "D2", "D3", "D4"]),
    Situation("stall", "E.D.5: a program that frees as it runs, against the report's cost",
              ["D3-base", "D3-slow", "D4-base", "D4-slow"]),
    Situation("fragmented", "E.D.3: a fully fragmented guest, and a control", ["D2", "D3", "D4"]),
    Situation("refault", "E.D.4: refaults under D4", ["D4"]),
    Situation("sensitivity", "E.D.1's D2 over the units, the guest's base and its age, "
              "seeds 1-5", []),
]


def _guest(name: str, variant: str, start_s: float, *, stride: int | None, programs) -> dict:
    g: dict[str, Any] = {
        "name": name, "ram": GUEST_RAM, "vcpus": 2, "start": f"{start_s}s",
        "boot_resident": GUEST_BASE, "policy": {"hinting": variant},
        "workload": [{"name": f"program{i + 1}", "start": f"{at}s",
                      "anon": {"size": size, "pattern": "sequential", "passes": 1}}
                     for i, (at, size) in enumerate(programs)],
    }
    if stride is not None:
        g["fragment_stride"] = stride
    return g


def count_scenario(variant: str, seed: int, *, stride: int | None, gap_s: int = GAP_S,
                   n: int = MAX_GUESTS, background: int | None = None, units: str = UNITS,
                   base: str = GUEST_BASE) -> dict[str, Any]:
    """The seed procedure: guest k starts at k x gap and runs the 4 GiB program once its console
    is up (1 s); the run ends at the host's first OOM kill. ``background``: the guests'
    ``background_frees`` (None: the measured default); ``units``: the seed's sizes read in
    binary or decimal units; ``base``: each guest's boot-time resident set."""
    host, ram, program, _ = READINGS[units]
    guests = [_guest(f"vm{k + 1}", variant, k * gap_s, stride=stride, programs=[(1, program)])
              for k in range(n)]
    for g in guests:
        g["ram"], g["boot_resident"] = ram, base
        if background is not None:
            g["background_frees"] = background
    tag = "" if background is None else f"-bg{background}"
    tag += "" if (units, base) == (UNITS, GUEST_BASE) else f"-{units}-{base}"
    return {
        "name": f"fph-count-{variant}-{stride or 'fresh'}-{gap_s}s{tag}",
        "sim": {"seed": seed, "duration": f"{n * gap_s}s", "sample_interval": "1s"},
        "host": {"ram": host, "cpus": 8, "thp": False, "kernel_used": HOST_BASE},
        "swap": {"size": "0"},
        "oom": {"stop_on_kill": True},
        "guest": guests,
    }


def one_guest_scenario(variant: str, seed: int, *, stride: int | None = None, thp: bool = False,
                       programs=((1, PROGRAM),), duration_s: int = 60,
                       ram: str = GUEST_RAM) -> dict[str, Any]:
    """One guest on the seed's host, its programs at the given times, for ``duration_s``."""
    guest = _guest("vm1", variant, 0, stride=stride, programs=list(programs))
    guest["ram"] = ram
    return {
        "name": f"fph-one-{variant}-{stride or 'fresh'}-{len(programs)}",
        "sim": {"seed": seed, "duration": f"{duration_s}s", "sample_interval": "500ms"},
        "host": {"ram": HOST_RAM, "cpus": 8, "thp": thp, "kernel_used": HOST_BASE},
        "swap": {"size": "0"},
        "guest": [guest],
    }


# ---- reading runs -------------------------------------------------------------------------------


def _gib(b: int | float) -> float:
    return round(b / GIB, 2)


def churn_scenario(variant: str, seed: int, report: str) -> dict[str, Any]:
    """E.D.5: one guest whose program allocates and frees 2 MiB blocks as fast as it can, with
    the report's round trip ``report``."""
    scn = one_guest_scenario(variant, seed, programs=(), duration_s=30)
    g = scn["guest"][0]
    g["kvm"] = {"report": report}
    g["workload"] = [{"name": "churn", "start": "1s", "highorder": dict(CHURN)}]
    scn["name"] = f"fph-churn-{variant}-{report}"
    return scn


def _zones(window: dict[str, Any]) -> str:
    return ", ".join(f"{z} {n:,}" for z, n in window["zones"].items())


def _exit_window(path: Path) -> dict[str, Any]:
    """E.D.2's D4 window from the guest's free lists after the exit (its buddyinfo)."""
    buddy = fc.parse_buddyinfo((path / "guests" / "vm1" / "buddyinfo").read_text())
    return fc.d4_window(buddy, PROGRAM_BYTES // (4 << 20))


def scenarios_of(key: str, seed: int) -> dict[str, dict[str, Any]]:
    """The runs of situation ``key`` (not the sensitivity sweep's), by label: the one place
    the situations and :func:`planned_runs` take them from."""
    if key in ("guests", "fresh"):
        stride = AGED if key == "guests" else None
        variants = COUNT_VARIANTS if key == "guests" else VARIANTS
        return {v: count_scenario(v, seed, stride=stride) for v in variants}
    if key == "gap":
        return {f"{g}s": count_scenario("D4", seed, stride=None, gap_s=g) for g in (10, 40)}
    if key == "exit":
        return {v: one_guest_scenario(v, seed) for v in ("D1", "D2", "D3", "D4")}
    if key == "stall":
        return {f"{v}-{cost}": churn_scenario(v, seed, REPORT_COSTS[cost])
                for v in ("D3", "D4") for cost in ("base", "slow")}
    if key == "fragmented":
        # A 2 GiB guest has one zone (DMA32 on q35), all of it aged; the controls are the same
        # guest where blocks can merge.
        frag = dict(thp=True, ram="2GiB", programs=((1, "1GB"),), duration_s=30)
        out = {v: one_guest_scenario(v, seed, stride=FRAGMENTED, **frag) for v in ("D2", "D3", "D4")}
        out.update({f"control-{v}": one_guest_scenario(v, seed, stride=stride, **frag)
                    for v, stride in (("D4", AGED), ("D3", None))})
        return out
    if key == "refault":
        # Program 1 exits at about 5 s; reporting's passes run every 2 s, each taking about a
        # sixteenth of each free list plus one more report; by 10 s most of the freed memory
        # is still unreported. Program 2 (1 GB) fits in it; program 3 (3,500 MB) does not.
        progs = ((1, PROGRAM), (10, "1GB"), (10, "3500MB"))
        return {"D4-small": one_guest_scenario("D4", seed, programs=progs[:2], duration_s=30),
                "D4-large": one_guest_scenario("D4", seed, programs=progs[::2], duration_s=30)}
    return {}


def planned_runs(situations, seed: int) -> list[tuple[dict[str, Any], int]]:
    """Every (scenario, seed) the situations run, the sensitivity sweep's included, longest
    first (the count runs of 16 guests, then the sweep's of 8, then the single guests), for
    :func:`.sensitivity.ensure_many`."""
    keys = [s.key for s in situations]
    counts = [(scn, seed) for k in ("fresh", "guests", "gap") if k in keys
              for scn in scenarios_of(k, seed).values()]
    sweep = sensitivity_runs() if "sensitivity" in keys else []
    single = [(scn, seed) for k in keys if k not in ("fresh", "guests", "gap")
              for scn in scenarios_of(k, seed).values()]
    return counts + sweep + single


# ---- sensitivity ------------------------------------------------------------------------------

#: The sweep's points: (units, guest state, base). The units and the state are crossed at
#: §D.5's base; the base is swept over §D.5's 0.5-1 GB on fresh guests (the thread's) under
#: both readings.
SENS_POINTS = ([(u, st, GUEST_BASE) for u in READINGS for st in ("fresh", "aged")]
               + [(u, "fresh", b) for u in READINGS for b in BASES if b != GUEST_BASE])


def _point_settings(units: str, base: str) -> dict[str, Any]:
    """A sweep point as dotted scenario keys: the host's and every guest's sizes under
    ``units``, every guest's base."""
    host, ram, program, _ = READINGS[units]
    out: dict[str, Any] = {"host.ram": host}
    for k in range(SWEEP_GUESTS):
        g = f"guest.vm{k + 1}"
        out.update({f"{g}.ram": ram, f"{g}.boot_resident": base,
                    f"{g}.workload.program1.anon.size": program})
    return out


def _sweep_base(state: str) -> dict[str, Any]:
    return count_scenario("D2", 1, stride=AGED if state == "aged" else None, n=SWEEP_GUESTS)


def sensitivity_runs() -> list[tuple[dict[str, Any], int]]:
    """The sweep's runs as (scenario, seed), as :func:`sensitivity`'s sweeps make them (the
    same scenarios, so the same store keys): the points that try all 8 guests first."""
    import copy

    from ..sweep import set_key

    out = []
    for u, st, b in sorted(SENS_POINTS, key=lambda p: (p[0] != "binary", p[1] != "fresh")):
        scn = copy.deepcopy(_sweep_base(st))
        for k, v in _point_settings(u, b).items():
            set_key(scn, k, v)
        out += [(scn, s) for s in SEEDS]
    return out


def sensitivity(store: Store, root: Path, on_run=None):
    """D2's guest count over SENS_POINTS x seeds 1-5 (a sweep through the store per guest
    state: the age of a guest is a key it has or has not); the checks ("holds at N of M
    points"), the manifest's records and the report's lines."""
    import pandas as pd

    host_units = {v[0]: u for u, v in READINGS.items()}
    frames = []

    def told(label: str, status: str, state: str) -> None:
        # The sweep's label lists every guest's keys: the point and the seed say enough.
        parts = dict(p.split("=", 1) for p in label.split(", ") if "=" in p)
        seed = label.rsplit("seed", 1)[-1].strip()
        if on_run is not None:
            on_run(f"D2 {host_units.get(parts.get('host.ram'), '?')}-{state}-"
                   f"{parts.get('guest.vm1.boot_resident', GUEST_BASE)} seed {seed}", status)

    for state in ("fresh", "aged"):
        pts = [_point_settings(u, b) for u, st, b in SENS_POINTS if st == state]
        df = sweep_knob(store, f"fph-d2-{state}", _sweep_base(state), {}, SEEDS,
            on_run=lambda label, status, state=state: told(label, status, state),
            points=pts, metrics=lambda r: {"D2 guests": guests_completed(r.summary)},
            out=root / "sensitivity" / f"fph-d2-{state}")
        df["point"] = [f"{host_units[h]}-{state}-{b}" for h, b in
                       zip(df["host.ram"], df["guest.vm1.boot_resident"])]
        frames.append(df[["point", "seed", "status", "key", "D2 guests"]])
    df = pd.concat(frames, ignore_index=True)
    lines, records, got = [], [], []
    lo, hi = fc.D2_GUESTS
    verdict = lambda v: lo <= v <= hi  # noqa: E731 - the check's own band
    for title, sel, why in (
            ("units x age", [f"{u}-{st}-{GUEST_BASE}" for u in READINGS
                             for st in ("fresh", "aged")],
             "The seed's sizes read in binary units (the default since e558969, the commit "
             "that made D2 pass) or as written, on fresh guests (the thread's) and aged ones "
             "(one pinned page per 4 MiB), at §D.5's base of 0.8 GB. 8 guests are tried: 8 "
             "means more than 7."),
            ("base (fresh guests)", [f"{u}-fresh-{b}" for u in READINGS for b in BASES],
             "§D.5 puts a guest's boot-time resident set at about 0.5-1 GB; at 1 GB the 4 GiB "
             "program does not fit the 5 GiB guest (its own OOM killer ends it, 0 guests "
             "complete), which the thread's did, so the range stops at 0.8 GB. Fresh guests, "
             "as the thread ran them, under both readings. 8 guests are tried: 8 means more "
             "than 7.")):
        sub = df[df["point"].isin(sel)]
        sub = sub.assign(_o=sub["point"].map({p: i for i, p in enumerate(sel)}))
        sub = sub.sort_values(["_o", "seed"]).drop(columns="_o")
        table, holds = sensitivity_table(sub, "point", "D2 guests", verdict)
        key = title.split()[0]
        plot = sensitivity_plot(sub, "point", "D2 guests", root / "sensitivity" / f"d2-{key}.svg",
                                band=(lo, hi), title=f"D2 guests over {title}")
        c = holds_check(f"E.D.1.D2.{key}", f"D2 runs 5 to 7 guests, over {title} x seeds 1-5",
                        [verdict(v) for v in sub["D2 guests"]],
                        source=f"seed 001, hinting; sweep of {title}")
        got.append(c)
        lines += [f"### {c.id}: {title}", "", why, "", *table, ""]
        records.append(sensitivity_record(f"E.D.1.D2 over {title}", "point", "D2 guests",
                                          table, holds, plot, root, range_note=why,
                                          check=c.id))
    return got, records, lines




# ---- the reproduction ---------------------------------------------------------------------------

def reproduce(situations, root: Path, seed: int, *, store: Store, trace: bool = False,
              on_run: Callable[[Any, str, Any], None] | None = None):
    """Run ``situations`` with ``seed`` into ``store`` (runs linked under ``root``); write
    report.md, report.json, exit-rss.csv and the HTML report's manifest there."""
    t0 = time.perf_counter()
    report = [f"# {TITLE}", "", f"Seed {seed}. Runs in `{root}`.", "",
              f"Host {HOST_RAM} without swap, {HOST_BASE} held by its kernel; guests of "
              f"{GUEST_RAM} with {GUEST_BASE} resident after boot; the program allocates and "
              f"writes {PROGRAM} and exits. The seed's figures are read in {UNITS} units (its "
              "15,837 MB as what `free -m` shows for a 16 GiB host, its 5 GB guests as QEMU's "
              "`-m 5G`), a reading chosen after E.D.1.D2 failed: the sensitivity situation "
              "shows the other one beside it.", ""]
    checks: list[Check] = []
    manifest: dict[str, Any] = {"experiment": NAME, "title": TITLE, "seed": seed,
                                "situations": []}
    # Every run of every situation at once through the process pool, longest first; the
    # situations below then find theirs in the store.
    everything = Situation("runs", "every run of the situations, at once", [])

    def made(label: str, status: str) -> None:
        if on_run is not None:
            on_run(everything, label.removeprefix("name="),
                   SimpleNamespace(reused=False, path=f"pool, {status}"))

    ensure_many(store, NAME, planned_runs(situations, seed), on_run=made)
    for sit in situations:
        report += [f"## {sit.title}", ""]
        ensure, keys = open_situation(root, sit, store, seed, on_run)
        runs: dict[str, Any] = {}
        records: list[dict[str, Any]] = []

        def run(label: str, scn: dict[str, Any]):
            ens = ensure(label, scn)
            runs[label] = (load_run(ens.path), Path(ens.path))
            return runs[label]

        def told(label: str, status: str, sit=sit) -> None:
            if on_run is not None:
                on_run(sit, label, SimpleNamespace(reused=status == "reused",
                                                   path=f"sweep, {status}"))

        got: list[Check] = []
        scns = scenarios_of(sit.key, seed)
        if sit.key in ("guests", "fresh"):
            c = {v: guests_completed(run(v, scns[v])[0].summary) for v in sit.policies}
            rows = []
            for v in sit.policies:
                s = runs[v][0].summary
                idle = [g["host_rss_bytes"] for g in s["guests"]
                        if g["threads"] and g["threads"][0]["finished_s"] is not None
                        and g["killed_at_s"] is None]
                rows.append([v, THREAD.get(v, "-"), c[v],
                             _gib(sum(idle) / len(idle)) if idle else "-",
                             s["guests"][0]["reports"]])
            report.append(markdown_table(
                ["variant", "thread", "guests (ours)", "idle host RSS per finished guest (GiB)",
                 "reports by guest 1"], rows))
            if sit.key == "guests":
                g2 = runs["D2"][0].summary["guests"][0]
                report += ["", f"D2's guest 1 captured {g2['frees_captured']:,} frees, lost "
                           f"{g2['frees_lost']:,} and reported {_gib(g2['bytes_reported'])} "
                           f"GiB in {g2['reports']} kthread passes; it idles at "
                           f"{_gib(g2['host_rss_bytes'])} GiB on the host.", "", D2_STORY, ""]
            got = fc.e_d1_checks(c, fresh=sit.key == "fresh")
        elif sit.key == "gap":
            c = {label: guests_completed(run(label, scns[label])[0].summary)
                 for label in sit.policies}
            report.append(markdown_table(["gap between guests", "D4 guests"],
                                         [[k, v] for k, v in c.items()]))
            got = [fc.e_d1_gap(c[sit.policies[0]], c[sit.policies[-1]])]
        elif sit.key == "exit":
            table, series_all, rel = [], {}, {}
            for v in sit.policies:
                r, path = run(v, scns[v])
                g = r.summary["guests"][0]
                exit_s = g["threads"][0]["finished_s"]
                series_all[v] = rss_series(path)
                rel[v] = release_times(series_all[v], exit_s)
                table.append([v, round(exit_s, 3), _gib(rel[v]["rss_exit"]),
                              _gib(rel[v]["rss_end"]), rel[v]["t_half"], rel[v]["t_90"],
                              g["reports"]])
            report.append(markdown_table(
                ["variant", "program exit (s)", "peak host RSS (GiB)", "at 60 s (GiB)",
                 "to half the release (s)", "to 90 % (s)", "reports"], table))
            write_series(root / "exit-rss.csv", series_all)
            window = _exit_window(runs["D4"][1])
            report += ["", f"Host RSS over time, plot-ready: `{root / 'exit-rss.csv'}`. D4's "
                       f"window: the program's {PROGRAM_BYTES // (4 << 20):,} blocks of 4 MiB "
                       f"in the guest's order-10 free lists ({_zones(window)}) take "
                       f"{window['passes'][0]}-{window['passes'][1]} passes to 90 % by §D4's "
                       "rule (a list's budget ceil(nr_free / 512) report calls plus one, 32 "
                       "blocks each); §E.D.2's 20-30 s is the same rule on a single list."]
            got = fc.e_d2_checks(rel["D1"], rel["D3"], rel["D4"], window, PROGRAM_BYTES)
        elif sit.key == "stall":
            t, rows = {}, []
            for label in sit.policies:
                v, cost = label.split("-")
                r, _ = run(label, scns[label])
                g = r.summary["guests"][0]
                t[(v, cost)] = g["threads"][0]["finished_s"]
                rows.append([v, REPORT_COSTS[cost], t[(v, cost)], g["reports"],
                             g["host_refaults"]])
            report.append(markdown_table(["variant", "report round trip", "program done (s)",
                                          "reports", "host refaults"], rows))
            report += ["", f"The program: {CHURN['count']:,} allocations of 2 MiB, each freed "
                       "1 us later, as fast as its vCPU goes. Its run time is mostly host "
                       "refaults of what D3 reported; the check reads only how it moves when "
                       "the report's round trip is 1 ms slower."]
            got = fc.e_d5_checks(t, CHURN["count"], 1e-3)
        elif sit.key == "fragmented":
            g, ctl, table = {}, {}, []
            for v in sit.policies:
                g[v] = run(v, scns[v])[0].summary["guests"][0]
            for v in ("D4", "D3"):
                ctl[v] = run(f"control-{v}", scns[f"control-{v}"])[0].summary["guests"][0]
            for label, x in [*g.items(), *((f"control {k}", x) for k, x in ctl.items())]:
                table.append([label, x["blocks_reported"], _gib(x["bytes_reported"]),
                              x["host_thp_splits"]])
            report.append(markdown_table(["variant", "blocks reported", "GiB reported",
                                          "host THP splits"], table))
            got = fc.e_d3_checks(g, ctl)
        elif sit.key == "refault":
            r2, _ = run("D4-small", scns["D4-small"])
            r3, _ = run("D4-large", scns["D4-large"])
            f2 = r2.summary["guests"][0]["host_refaults"]
            f3 = r3.summary["guests"][0]["host_refaults"]
            report.append(markdown_table(
                ["second program", "host refaults"],
                [["1 GB (fits in unreported free memory)", f2], ["3,500 MB (does not)", f3]]))
            got = fc.e_d4_checks(f2, f3)
        elif sit.key == "sensitivity":
            got, records, lines = sensitivity(store, root, told)
            report += lines
        close_situation(report, checks, manifest, sit, got, keys, records)
    return finish(root, report, checks, manifest, t0)


#: What decides D2's count (the aged situation's story).
D2_STORY = (
    "**What decides D2's count.** The RFC v8 kthread runs only when a CPU's array holds 1,000 "
    "distinct free blocks after the inline scan (its `hinting_should_run` tests the index "
    "against `MAX_FGPT_ENTRIES`); nothing else empties an array, neither a timer nor the exit "
    "path. The program's exit fills the exiting vCPU's array several times, but what is left "
    "in it at the end (up to 999 free blocks, merged as large as the guest's memory allows: "
    "4 MiB where it is unfragmented) waits for further frees on that vCPU, and an idle guest "
    "makes few (0.8 pages a second measured in idle Debian 6.1 guests under QEMU, "
    "`[[guest]] background_frees`; docs/VALIDATION.md, \"Idle guests\"). That residue, more "
    "than the frees lost while an array is full, is what D2 keeps, so its count moves with "
    "how the guest's free memory merges. A freshly booted guest's 4 GiB merges into 1,024 "
    "blocks of 4 MiB, just over the array's 1,000: it fills once, at the end of the exit, and "
    "D2 returns nearly everything in one pass; 4 GB in decimal units is 954 such blocks, "
    "never enough. An aged guest's memory merges into smaller, more numerous blocks, which "
    "fill the array several times and leave a residue. The sensitivity situation shows what "
    "this does to the count under each reading.")
