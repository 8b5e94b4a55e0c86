"""The kernel's memory cgroup protection selftest (tools/testing/selftests/cgroup/
test_memcontrol.c, `test_memcg_min` and `test_memcg_low` as 6.1 has them: "the selftest" in
the checks), reproduced: issue
34's check of the memory controller against the kernel's own expectations.

The selftest builds this hierarchy, with `memory.min` (or `memory.low`, the other variant):

    A       memory.max = 200M, memory.swap.max = 0
    A/B     50M protected
    A/B/C   75M protected, 50M of page cache
    A/B/D   25M protected, 50M of page cache
    A/B/E   unprotected,   50M of page cache
    A/B/F   500M protected, nothing
    A/G     where the pressure comes from

Its page cache is a file's holes read into memory (clean pages); with B at 150M, a process in
G faults in 148M of anonymous memory and exits. A's limit then reclaims B's page cache (A holds
no swap), and protection decides where: the selftest expects B at 50M (3 %), C at 29M and D at
21M (10 % each, the dynamics of `mem_cgroup_calculate_protection` as the kernel's
memcg_protection.m models them) and F at 0. Then a process in G faults in 170M, more than A's
unprotected memory: under memory.min it must fail (the cgroup's OOM killer ends it) with B
still at 50M; under memory.low it succeeds, B falls to 30M, C and D count `low` events and E
and F none, and no child counts an OOM.

Tolerances are the selftest's `values_close(a, b, err)`: |a - b| <= (a + b) * err / 100, which
is a ratio a / b within [(100 - err) / (100 + err), (100 + err) / (100 - err)]. The selftest's
`memory.reclaim` step (C reclaimed to 10M) is not reproduced: the model has no memory.reclaim
yet. A 2 GiB host, far from global pressure: all reclaim is A's limit reclaim.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..store import Store
from ..tables import markdown_table
from .checks import (Check, Situation, band_check, begin, close_situation, finish,
                     open_situation)

NAME = "memcg-protection"
TITLE = ("Memory cgroup protection: the kernel selftest's memory.min and memory.low hierarchy "
         "(test_memcg_min, test_memcg_low)")
SOURCE = "the selftest"

MB = 1 << 20
#: The protected children and what each is given (MiB), and whether it holds page cache.
CHILDREN = {"C": (75, True), "D": (25, True), "E": (0, True), "F": (500, False)}
#: The selftest's expected memory.current after the first allocation (MiB) and its tolerance
#: (values_close's err, percent).
EXPECTED = {"B": (50, 3), "C": (29, 10), "D": (21, 10)}
#: Phase two: B's memory.current after the 170M allocation (MiB), per variant, err 3.
AFTER_OVERCOMMIT = {"min": 50, "low": 30}
#: When each process starts (s): the page cache readers at once, then G's first and second
#: allocation, each after the one before has long finished.
START_G1, START_G2 = "2s", "5s"

SITUATIONS = [
    Situation("pressure", "148M in G under A's 200M: protection shares the page cache's cut",
              ["min", "low"]),
    Situation("overcommit", "Then 170M in G: memory.min refuses it, memory.low gives way",
              ["min", "low"]),
]


def close_band(err: float) -> tuple[float, float]:
    """values_close(a, b, err) as a band on the ratio a / b."""
    return ((100 - err) / (100 + err), (100 + err) / (100 - err))


def scenario(knob: str, overcommit: bool, protect: bool = True) -> dict[str, Any]:
    """The selftest's hierarchy and processes, protected by ``knob`` ("min" or "low");
    ``overcommit`` adds the second allocation; ``protect`` False leaves every protection at 0
    (the broken set-up the tests use to see the checks fail)."""
    def prot(mib: int) -> dict[str, str]:
        return {knob: f"{mib if protect else 0}M"}

    cgroups = [
        {"name": "A", "memory": {"max": "200M", "swap": {"max": "0"}}},
        {"name": "B", "parent": "A", "memory": prot(50)},
        *({"name": n, "parent": "B", "memory": prot(mib)} for n, (mib, _) in CHILDREN.items()),
        {"name": "G", "parent": "A"},
    ]
    workloads = [
        {"name": f"cache-{n}", "cgroup": n, "file": {"size": "50MiB", "op": "read"}}
        for n, (_, cache) in CHILDREN.items() if cache
    ]
    workloads.append({"name": "alloc-148M", "cgroup": "G", "start": START_G1,
                      "anon": {"size": "148MiB", "pattern": "sequential", "passes": 1}})
    if overcommit:
        workloads.append({"name": "alloc-170M", "cgroup": "G", "start": START_G2,
                          "anon": {"size": "170MiB", "pattern": "sequential", "passes": 1}})
    return {
        "name": f"memcg-protection-{knob}{'-overcommit' if overcommit else ''}",
        "host": {"ram": "2GiB", "cpus": 2},
        "swap": {"size": "1GiB"},
        "cgroup": cgroups,
        "workload": workloads,
    }


def _current(summary: dict[str, Any], name: str) -> int:
    return int(summary["cgroups"][name]["memory.current"])


def _events(summary: dict[str, Any], name: str) -> dict[str, int]:
    return summary["cgroups"][name]["memory.events"]


def pressure_checks(knob: str, summary: dict[str, Any]) -> list[Check]:
    """After 148M in G: B, C and D against the selftest's figures, F empty."""
    got = []
    for name, (mib, err) in EXPECTED.items():
        lo, hi = close_band(err)
        got.append(band_check(
            f"{knob}.pressure.{name}",
            f"{name}'s memory.current under memory.{knob} (the selftest: {mib}M within {err} %)",
            _current(summary, name), mib * MB, lo, hi, source=SOURCE))
    f = _current(summary, "F")
    got.append(Check(f"{knob}.pressure.F", "F, protected but empty, holds nothing", "exactly 0",
                     f, f == 0, source=SOURCE))
    return got


def _thread(summary: dict[str, Any], name: str) -> dict[str, Any]:
    return next(t for t in summary["threads"] if t["thread"].startswith(f"{name}/"))


def overcommit_checks(knob: str, summary: dict[str, Any]) -> list[Check]:
    """After 170M in G: the allocation's outcome, B's memory.current, the children's events."""
    killed = bool(_thread(summary, "alloc-170M")["oom_killed"])
    want_killed = knob == "min"
    got = [Check(
        f"{knob}.overcommit.outcome",
        f"170M in G {'fails' if want_killed else 'succeeds'} under memory.{knob}",
        "OOM-killed" if want_killed else "completes",
        "OOM-killed" if killed else "completes", killed == want_killed, source=SOURCE)]
    lo, hi = close_band(3)
    mib = AFTER_OVERCOMMIT[knob]
    got.append(band_check(
        f"{knob}.overcommit.B",
        f"B's memory.current after 170M in G under memory.{knob} (the selftest: {mib}M within 3 %)",
        _current(summary, "B"), mib * MB, lo, hi, source=SOURCE))
    if knob == "low":
        for name in CHILDREN:
            low = int(_events(summary, name)["low"])
            want = name in ("C", "D")
            got.append(Check(f"low.overcommit.{name}.low_events",
                             f"{name} {'counts' if want else 'counts no'} memory.events low",
                             "> 0" if want else "0", low, (low > 0) == want, source=SOURCE))
        ooms = {n: int(_events(summary, n)["oom"]) for n in CHILDREN}
        got.append(Check("low.overcommit.no_oom", "no child counts an OOM",
                         "0 in each of C, D, E, F", sum(ooms.values()),
                         not any(ooms.values()), source=SOURCE))
    return got


def reproduce(situations, root: Path, seed: int, *, store: Store, trace: bool = False,
              on_run: Callable[[Any, str, Any], None] | None = None):
    """Run ``situations`` with ``seed`` into ``store`` (runs linked under ``root``); write
    report.md, report.json and the HTML report's manifest."""
    t0 = time.perf_counter()
    report, checks, manifest = begin(
        NAME, TITLE, seed, root,
        "The selftest's hierarchy (A at 200M with no swap; B protected 50M; its children C, D, "
        "E, F protected 75M, 25M, 0 and 500M, the first three with 50M of page cache; G beside "
        "B) under memory.min and under memory.low. Every figure is the selftest's expectation, "
        "with its tolerance; nothing was fitted.")
    for sit in situations:
        report += [f"## {sit.title}", ""]
        ensure, keys = open_situation(root, sit, store, seed, on_run)
        overcommit = sit.key == "overcommit"
        got: list[Check] = []
        rows = []
        for knob in sit.policies:
            summary = ensure(knob, scenario(knob, overcommit)).summary
            got += (overcommit_checks if overcommit else pressure_checks)(knob, summary)
            rows.append([f"memory.{knob}",
                         *(f"{_current(summary, n) / MB:.1f}" for n in ("B", *CHILDREN))])
        report.append(markdown_table(["variant", "B MiB", *(f"{n} MiB" for n in CHILDREN)],
                                     rows))
        close_situation(report, checks, manifest, sit, got, keys)
    return finish(root, report, checks, manifest, t0)


def our_row(label: str) -> str:
    return label
