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
- ``E.D.5`` synchronous cost: D3's blocked time against (#frees / 512) x the report's round
  trip; D4's program runs as fast as without hinting (its blocking is the worker's).

Every measured figure comes from a run made here. report.json holds ``{"checks": [{"id",
"claim", "expected", "measured", "pass"}]}``; ``exit-rss.csv`` is the plot-ready host RSS of the
E.D.2 runs.
"""

from __future__ import annotations

import csv
import io
import time
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..results import load_run, write_text_atomic
from ..store import Store
from ..tables import markdown_table
from .checks import Check, Situation, close_situation, finish, fmt, open_situation

NAME = "free-page-hinting"
TITLE = "Guest free page hinting: how many guests fit (seed 001)"

GIB = 1 << 30
#: The seed's setup (mechanisms.md §D.5), read in binary units: "Memory-15837 MB" is what
#: `free -m` (MiB) shows for a 16 GiB host (16,384 MiB less what firmware and the kernel image
#: reserve; read as 15,837,000,000 bytes it would be a 16 GiB host missing 1.3 GiB), and "5 GB"
#: guests are QEMU's `-m 5G` (GiB); the program's 4 GB is read the same way.
PROGRAM_BYTES = 4 * GIB
HOST_RAM, GUEST_RAM, PROGRAM = "15837MiB", "5GiB", f"{PROGRAM_BYTES // GIB}GiB"
#: The host kernel's own memory and a guest's boot-time resident set (§D.5's host_base, and
#: its base of "about 0.8 GB").
HOST_BASE, GUEST_BASE = "768MiB", "800MB"
#: Guests tried in the count runs (more than any variant fits).
MAX_GUESTS = 16
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
#: Background frees a second tried for D2 beside the measured default: 1,000 times an
#: idle guest's rate (`[[guest]] background_frees`, docs/VALIDATION.md "Idle guests").
BACKGROUND_SWEEP = (1000,)



SITUATIONS = [
    Situation("guests", "E.D.1: guests launched until the host kills one (aged guests)",
              COUNT_VARIANTS),
    Situation("fresh", "E.D.1: the same with freshly booted guests", VARIANTS),
    Situation("gap", "E.D.1: D4's count against the gap between guests", ["10s", "20s", "30s", "40s"]),
    Situation("exit", "E.D.2, E.D.5: one guest's host RSS after its program exits",
              ["D1", "D2", "D3", "D4"]),
    Situation("fragmented", "E.D.3: a fully fragmented guest", ["D2", "D3", "D4"]),
    Situation("refault", "E.D.4: refaults under D4", ["D4"]),
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
                   n: int = MAX_GUESTS, background: int | None = None) -> dict[str, Any]:
    """The seed procedure: guest k starts at k x gap and runs the 4 GiB program once its console
    is up (1 s); the run ends at the host's first OOM kill. ``background``: the guests'
    ``background_frees`` (None: the measured default)."""
    guests = [_guest(f"vm{k + 1}", variant, k * gap_s, stride=stride, programs=[(1, PROGRAM)])
              for k in range(n)]
    if background is not None:
        for g in guests:
            g["background_frees"] = background
    tag = "" if background is None else f"-bg{background}"
    return {
        "name": f"fph-count-{variant}-{stride or 'fresh'}-{gap_s}s{tag}",
        "sim": {"seed": seed, "duration": f"{n * gap_s}s", "sample_interval": "1s"},
        "host": {"ram": HOST_RAM, "cpus": 8, "thp": False, "kernel_used": HOST_BASE},
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


def guests_completed(summary: dict) -> int:
    """Guests whose program finished before the host's first OOM kill (the seed's count)."""
    kills = [g["killed_at_s"] for g in summary["guests"] if g["killed_at_s"] is not None]
    first_kill = min(kills) if kills else float("inf")
    done = 0
    for g in summary["guests"]:
        t = g["threads"][0]["finished_s"] if g["threads"] else None
        if t is not None and t <= first_kill and not g["threads"][0]["killed"]:
            done += 1
    return done


def rss_series(path: Path) -> list[tuple[float, int]]:
    """(time s, host RSS bytes) of the first VM of a run's vm_rss.csv."""
    rows = list(csv.reader(io.StringIO((path / "vm_rss.csv").read_text())))
    return [(float(r[0]), int(r[1])) for r in rows[1:]]


def release_times(series: list[tuple[float, int]], exit_s: float) -> dict[str, float | None]:
    """The peak host RSS, the RSS at the end, the bytes released, and the times from the
    program's exit to half and to 90 % of the release (None: nothing released)."""
    # The peak: the program's memory all there, before anything of it was returned (D3
    # returns it while the program exits).
    at_exit = max(v for _, v in series)
    end = series[-1][1]
    released = at_exit - end
    out: dict[str, float | None] = {"rss_exit": at_exit, "rss_end": end, "released": released,
                                    "t_half": None, "t_90": None}
    if released <= 0:
        return out
    for key, share in (("t_half", 0.5), ("t_90", 0.9)):
        for t, v in series:
            if t >= exit_s and at_exit - v >= share * released:
                out[key] = round(t - exit_s, 3)
                break
    return out


def _gib(b: int | float) -> float:
    return round(b / GIB, 2)


# ---- the reproduction ---------------------------------------------------------------------------

def reproduce(situations, root: Path, seed: int, *, store: Store, trace: bool = False,
              on_run: Callable[[Any, str, Any], None] | None = None):
    """Run ``situations`` with ``seed`` into ``store`` (runs linked under ``root``); write
    report.md, report.json, exit-rss.csv and the HTML report's manifest there."""
    t0 = time.perf_counter()
    report = [f"# {TITLE}", "", f"Seed {seed}. Runs in `{root}`.", "",
              f"Host {HOST_RAM} without swap, {HOST_BASE} held by its kernel; guests of "
              f"{GUEST_RAM} with {GUEST_BASE} resident after boot; the program allocates and "
              f"writes {PROGRAM} and exits. The seed's figures are read in binary units: its "
              "15,837 MB is what `free -m` (MiB) shows for a 16 GiB host, and its 5 GB guests "
              "are QEMU's `-m 5G`; the guest's base is §D.5's estimate of about 0.8 GB.", ""]
    checks: list[Check] = []
    manifest: dict[str, Any] = {"experiment": NAME, "title": TITLE, "seed": seed,
                                "situations": []}
    counts: dict[str, dict[str, int]] = {}
    for sit in situations:
        report += [f"## {sit.title}", ""]
        ensure, keys = open_situation(root, sit, store, seed, on_run)
        runs: dict[str, Any] = {}

        def run(label: str, scn: dict[str, Any]):
            ens = ensure(label, scn)
            runs[label] = (load_run(ens.path), Path(ens.path))
            return runs[label]

        got: list[Check] = []
        if sit.key in ("guests", "fresh"):
            stride = AGED if sit.key == "guests" else None
            c = {v: guests_completed(run(v, count_scenario(v, seed, stride=stride))[0].summary)
                 for v in sit.policies}
            counts[sit.key] = c
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
                bg = tomllib.loads(runs["D2"][0].summary["scenario"])["guest"][0]
                sweep = {}
                for rate in BACKGROUND_SWEEP:
                    r, _ = run(f"D2-bg{rate}", count_scenario("D2", seed, stride=AGED,
                                                              background=rate))
                    sweep[rate] = (guests_completed(r.summary), r.summary["guests"][0])
                report += [
                    "", f"D2's guest 1 captured {g2['frees_captured']:,} frees, lost "
                    f"{g2['frees_lost']:,} and reported {_gib(g2['bytes_reported'])} GiB in "
                    f"{g2['reports']} kthread passes; it idles at "
                    f"{_gib(g2['host_rss_bytes'])} GiB on the host.",
                    "",
                    "**What decides D2's count.** The RFC v8 kthread runs only when a CPU's "
                    "array holds 1,000 distinct free blocks after the inline scan (its "
                    "`hinting_should_run` tests the index against `MAX_FGPT_ENTRIES`); nothing "
                    "else empties an array, neither a timer nor the exit path. The program's "
                    "exit fills the exiting vCPU's array several times, but what is left in it "
                    "at the end (up to 999 free blocks, merged as large as the guest's memory "
                    "allows: 4 MiB where it is unfragmented) waits for further frees on that "
                    "vCPU, and an idle guest makes few: "
                    f"{bg['background_frees']} page(s) a second here "
                    "(`[[guest]] background_frees`, each page held "
                    f"{bg['background_lifetime']} on average), the rate measured in idle "
                    "Debian 6.1 guests under QEMU (0.8 a second; docs/VALIDATION.md, \"Idle "
                    "guests\"). That residue, more than the frees lost while an array is full, "
                    "is what D2 keeps, so its count moves with how the guest's free memory "
                    "merges. A freshly booted guest's 4 GiB merges into 1,024 blocks of 4 MiB, "
                    "just over the array's 1,000: it fills once, at the end of the exit, and "
                    "D2 returns nearly everything in one pass (next section; 4 GB in decimal "
                    "units would be 954 such blocks, never enough). An aged guest's memory "
                    "merges into smaller, more numerous blocks, which fill the array several "
                    "times and leave a residue. The thread's \"5 to 7 guests (based on the "
                    "amount of memory freed/captured)\" is this spread. A guest far busier "
                    "than measured drains the residue:",
                    "",
                    markdown_table(
                        ["background frees a second", "D2 guests", "guest 1 kthread passes",
                         "guest 1 GiB reported", "guest 1 idle host RSS (GiB)"],
                        [[f"{bg['background_frees']} (measured)", c["D2"], g2["reports"],
                          _gib(g2["bytes_reported"]), _gib(g2["host_rss_bytes"])]]
                        + [[rate, n, g["reports"], _gib(g["bytes_reported"]),
                            _gib(g["host_rss_bytes"])] for rate, (n, g) in sweep.items()]),
                    "",
                ]
                got = [
                    Check("E.D.1.D1", "without hinting the host runs 3 guests", "3", c["D1"],
                          c["D1"] == 3),
                    Check("E.D.1.D2", "with the RFC v8 capture arrays it runs 5 to 7", "5-7",
                          c["D2"], 5 <= c["D2"] <= 7),
                    Check("E.D.1.D2stored", "so does the patch's stored code (entries in use "
                          "again kept by the inline scan)", "5-7", c["D2stored"],
                          5 <= c["D2stored"] <= 7),
                    Check("E.D.1.D2>D1", "hinting lets more guests run than none", f"> {c['D1']}",
                          c["D2"], c["D2"] > c["D1"]),
                    Check("E.D.1.D3", "D3 runs at least as many guests as D2", f">= {c['D2']}",
                          c["D3"], c["D3"] >= c["D2"]),
                    Check("E.D.1.D4", "D4 runs at least as many guests as D2 (gap 40 s)",
                          f">= {c['D2']}", c["D4"], c["D4"] >= c["D2"]),
                ]
        elif sit.key == "gap":
            c = {}
            for label in sit.policies:
                gap = int(label.rstrip("s"))
                c[label] = guests_completed(
                    run(label, count_scenario("D4", seed, stride=None, gap_s=gap))[0].summary)
            report.append(markdown_table(["gap between guests", "D4 guests"],
                                         [[k, v] for k, v in c.items()]))
            short, long = c[sit.policies[0]], c[sit.policies[-1]]
            got = [Check("E.D.1.D4.gap", "D4 needs its ~30 s of reporting between guests: a "
                         "short gap runs fewer guests than a long one",
                         f"{sit.policies[0]} < {sit.policies[-1]}", f"{short} vs {long}",
                         short < long)]
        elif sit.key == "exit":
            table, series_all = [], {}
            for v in sit.policies:
                r, path = run(v, one_guest_scenario(v, seed))
                g = r.summary["guests"][0]
                exit_s = g["threads"][0]["finished_s"]
                series = rss_series(path)
                series_all[v] = series
                rel = release_times(series, exit_s)
                runs[v] = (r, path, g, rel, exit_s)
                table.append([v, round(exit_s, 3), _gib(rel["rss_exit"]), _gib(rel["rss_end"]),
                              rel["t_half"], rel["t_90"], g["reports"],
                              g["blocked_in_reports_ms"]])
            report.append(markdown_table(
                ["variant", "program exit (s)", "peak host RSS (GiB)", "at 60 s (GiB)",
                 "to half the release (s)", "to 90 % (s)", "reports", "blocked in reports (ms)"],
                table))
            _write_series(root / "exit-rss.csv", series_all)
            report += ["", f"Host RSS over time, plot-ready: `{root / 'exit-rss.csv'}`."]
            d1, d3, d4 = runs["D1"][3], runs["D3"][3], runs["D4"][3]
            peak1 = d1["rss_exit"]
            got = [
                Check("E.D.2.D1", "without hinting the program's memory stays resident",
                      ">= 99 % of the peak", round(d1["rss_end"] / peak1, 4),
                      d1["rss_end"] >= 0.99 * peak1),
                # §E.D.2's 20-30 s is one free list's worth (96 blocks a pass for 1,024 order-10
                # blocks); a 5 GiB q35 guest has two zones (DMA32, Normal), each reported at that
                # pace in the same pass, so its 4 GiB goes in about half the passes.
                Check("E.D.2.D4", "free page reporting returns it within its ~16 passes of 2 s, "
                      "several passes after the exit", "90 % in 8-32 s", d4["t_90"],
                      d4["t_90"] is not None and 8 <= d4["t_90"] <= 32),
                Check("E.D.2.D4.amount", "and returns nearly all of it",
                      f">= 90 % of {PROGRAM}", round(d4["released"] / PROGRAM_BYTES, 3),
                      d4["released"] >= 0.9 * PROGRAM_BYTES),
                Check("E.D.2.D3", "D3 returns memory at buffer-full time: by the program's exit",
                      "half within 1 s of the exit", d3["t_half"],
                      d3["t_half"] is not None and d3["t_half"] <= 1.0),
            ]
            # E.D.5 from the same runs.
            g3 = runs["D3"][2]
            kvm = g3["kvm_costs_ns"]
            full = g3["frees_captured"] // 512
            expect = full * kvm["report"] + g3["blocks_reported"] * kvm["isolate"]
            got += [
                Check("E.D.5.D3", "D3 stalls the freeing vCPU about (#frees / 512) x t_report",
                      f"{full} reports x {kvm['report'] / 1e3:.0f} us + isolation = "
                      f"{expect / 1e6:.3f} ms", g3["blocked_in_reports_ms"],
                      abs(g3["blocked_in_reports_ms"] - expect / 1e6) <= 0.05 * expect / 1e6
                      and full > 0),
                Check("E.D.5.D4", "D4 blocks in its worker, not on the free path: the program "
                      "finishes as it does without hinting", f"{runs['D1'][4]} s",
                      runs["D4"][4], runs["D4"][4] == runs["D1"][4]),
            ]
        elif sit.key == "fragmented":
            table = []
            for v in sit.policies:
                # A 2 GiB guest has one zone (DMA32 on q35), all of it aged.
                r, path = run(v, one_guest_scenario(v, seed, stride=FRAGMENTED, thp=True,
                                                    ram="2GiB", programs=((1, "1GB"),),
                                                    duration_s=30))
                g = r.summary["guests"][0]
                runs[v] = (r, path, g)
                per_mb = g["blocks_reported"] / max(g["bytes_reported"] / 2**20, 1e-9) \
                    if g["bytes_reported"] else 0.0
                table.append([v, g["blocks_reported"], _gib(g["bytes_reported"]),
                              round(per_mb, 2), g["host_thp_splits"]])
            report.append(markdown_table(
                ["variant", "blocks reported", "GiB reported", "hints per MiB",
                 "host THP splits"], table))
            g2, g3, g4 = (runs[v][2] for v in ("D2", "D3", "D4"))
            got = [
                Check("E.D.3.D4", "free page reporting reports nothing from a fully fragmented "
                      "guest", "0 blocks", g4["blocks_reported"], g4["blocks_reported"] == 0),
                Check("E.D.3.D3", "neither does D3 at its order", "0 blocks",
                      g3["blocks_reported"], g3["blocks_reported"] == 0),
                Check("E.D.3.D2", "D2 reports small orders there, many hints per MiB, splitting "
                      "the host's huge pages", "> 0 blocks, > 1 hint per MiB, THP splits > 0",
                      f"{g2['blocks_reported']} blocks, {table[0][3]} per MiB, "
                      f"{g2['host_thp_splits']} splits",
                      g2["blocks_reported"] > 0 and table[0][3] > 1
                      and g2["host_thp_splits"] > 0),
            ]
        elif sit.key == "refault":
            # Program 1 exits at about 5 s; reporting's first pass runs 2 s later and one every
            # 2 s after, each taking about a sixteenth of each free list plus one more report;
            # by 10 s two passes have run and most of the freed memory is still unreported.
            # Program 2 (1 GB) fits in it; program 3 (3,500 MB) does not.
            progs = ((1, PROGRAM), (10, "1GB"), (10, "3500MB"))
            r2, _ = run("D4-small", one_guest_scenario("D4", seed, programs=progs[:2],
                                                       duration_s=30))
            r3, _ = run("D4-large", one_guest_scenario("D4", seed, programs=progs[::2],
                                                       duration_s=30))
            f2 = r2.summary["guests"][0]["host_refaults"]
            f3 = r3.summary["guests"][0]["host_refaults"]
            report.append(markdown_table(
                ["second program", "host refaults"],
                [["1 GB (fits in unreported free memory)", f2], ["3,500 MB (does not)", f3]]))
            got = [
                # The allocator takes the smallest free block first, so the few reported
                # order-9 blocks go before the unreported order-10 ones: ≈ 0, not 0.
                Check("E.D.4.fits", "allocations take unreported blocks first: refaults stay "
                      "≈ 0 while they last", f"< 10 % of its {1_000_000_000 // 4096:,} pages",
                      f2, f2 < 0.1 * 1e9 / 4096),
                Check("E.D.4.exhausted", "once unreported memory runs out, reported frames are "
                      "refaulted", f"> 10 x the first ({f2:,})", f3, f3 > 10 * max(f2, 1)),
            ]
        close_situation(report, checks, manifest, sit, got, keys)
    return finish(root, report, checks, manifest, t0)


def _write_series(path: Path, series: dict[str, list[tuple[float, int]]]) -> None:
    """One time column and one host-RSS column (bytes) per variant."""
    names = list(series)
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["time_s"] + [f"{n}_host_rss_bytes" for n in names])
    for i, (t, _) in enumerate(series[names[0]]):
        w.writerow([t] + [series[n][i][1] if i < len(series[n]) else "" for n in names])
    write_text_atomic(path, out.getvalue())
