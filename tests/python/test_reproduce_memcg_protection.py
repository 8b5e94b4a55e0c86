"""``reclaimlab reproduce memcg-protection``: the kernel selftest's memory.min / memory.low
hierarchy, its checks computed from the runs' cgroup figures (not restated), each able to fail
on a set-up without protection, and the selftest's tolerances as bands."""

from __future__ import annotations

import json

import pytest

import reclaimlab
from reclaimlab import cli
from reclaimlab.experiments import memcg_protection as exp
from reclaimlab.results import load_run

MB = 1 << 20


@pytest.fixture(scope="module")
def repro(tmp_path_factory, repro_store):
    out = tmp_path_factory.mktemp("memcg")
    rc = cli.main(["reproduce", "memcg-protection", "--out", str(out), "--store",
                   str(repro_store), "--no-figures"])
    root = out / "memcg-protection"
    runs = {(s.key, p): load_run(root / s.key / p) for s in exp.SITUATIONS for p in s.policies}
    checks = {c["id"]: c for c in json.loads((root / "report.json").read_text())["checks"]}
    return rc, root, runs, checks


def current(run, name):
    return run.summary["cgroups"][name]["memory.current"]


def test_every_check_is_computed_from_the_runs_and_recorded(repro):
    rc, root, runs, checks = repro
    assert set(checks) == {
        *(f"{k}.pressure.{n}" for k in ("min", "low") for n in ("B", "C", "D", "F")),
        *(f"{k}.overcommit.{x}" for k in ("min", "low") for x in ("outcome", "B")),
        *(f"low.overcommit.{n}.low_events" for n in "CDEF"), "low.overcommit.no_oom"}
    failed = sum(not c["pass"] for c in checks.values())
    report = (root / "report.md").read_text()
    assert report.count("- PASS") == len(checks) - failed and report.count("- FAIL") == failed
    assert rc == (1 if failed else 0)
    for knob in ("min", "low"):
        run = runs[("pressure", knob)]
        for name, (mib, err) in exp.EXPECTED.items():
            c = checks[f"{knob}.pressure.{name}"]
            assert c["measured"] == current(run, name) and c["figure"] == mib * MB
            lo, hi = exp.close_band(err)
            assert c["band"] == [lo, hi] and c["pass"] == (lo <= current(run, name) / (mib * MB)
                                                         <= hi)
        assert checks[f"{knob}.pressure.F"]["measured"] == current(run, "F")


def test_the_selftests_tolerance_is_its_values_close():
    # values_close(a, b, err): |a - b| <= (a + b) * err / 100, on both sides of the figure.
    lo, hi = exp.close_band(10)
    b = 29 * MB
    for a in (int(b * lo) + 1, int(b * hi) - 1):
        assert abs(a - b) <= (a + b) * 10 / 100
    for a in (int(b * lo) - 2, int(b * hi) + 2):
        assert not abs(a - b) <= (a + b) * 10 / 100


def test_the_hierarchy_is_the_selftests():
    s = exp.scenario("min", overcommit=True)
    cg = {c["name"]: c for c in s["cgroup"]}
    assert cg["A"]["memory"] == {"max": "200M", "swap": {"max": "0"}}
    assert [cg[n]["memory"]["min"] for n in "BCDEF"] == ["50M", "75M", "25M", "0M", "500M"]
    assert cg["G"]["parent"] == "A" and all(cg[n]["parent"] == "B" for n in "CDEF")
    readers = [w for w in s["workload"] if "file" in w]
    assert sorted(w["cgroup"] for w in readers) == ["C", "D", "E"]
    allocs = [w for w in s["workload"] if "anon" in w]
    assert [(w["cgroup"], w["anon"]["size"]) for w in allocs] == [("G", "148MiB"),
                                                                   ("G", "170MiB")]


@pytest.mark.parametrize("knob", ["min", "low"])
def test_without_protection_the_shares_checks_fail(knob):
    # The same hierarchy with every protection at 0: reclaim takes the page cache from C, D
    # and E alike, so C and D are not where the selftest expects them. B's 50M is A's limit's
    # doing (200M less G's 148M), protected or not: with a limit that does not bind it fails.
    broken = reclaimlab.run(exp.scenario(knob, overcommit=False, protect=False), seed=1).summary
    got = {c.id: c for c in exp.pressure_checks(knob, broken)}
    # Unprotected, C, D and E keep about a third each (17M): C's check fails; D's figure (21M)
    # is within the selftest's 10 % of that, so D is also run with C's and D's shares swapped.
    assert not got[f"{knob}.pressure.C"].passed
    assert got[f"{knob}.pressure.B"].passed
    swapped = exp.scenario(knob, overcommit=False)
    cg = {c["name"]: c for c in swapped["cgroup"]}
    cg["C"]["memory"][knob], cg["D"]["memory"][knob] = "25M", "75M"
    got = {c.id: c for c in exp.pressure_checks(knob, reclaimlab.run(swapped, seed=1).summary)}
    assert not got[f"{knob}.pressure.C"].passed and not got[f"{knob}.pressure.D"].passed
    loose = exp.scenario(knob, overcommit=False)
    loose["cgroup"][0]["memory"]["max"] = "400M"
    got = {c.id: c for c in exp.pressure_checks(knob, reclaimlab.run(loose, seed=1).summary)}
    assert not got[f"{knob}.pressure.B"].passed and got[f"{knob}.pressure.F"].passed
    # F is empty only if nothing is charged to it: a reader in F fails its check.
    filled = exp.scenario(knob, overcommit=False)
    filled["workload"].append({"name": "cache-F", "cgroup": "F",
                               "file": {"size": "8MiB", "op": "read"}})
    got = {c.id: c for c in exp.pressure_checks(knob, reclaimlab.run(filled, seed=1).summary)}
    assert not got[f"{knob}.pressure.F"].passed
    over = reclaimlab.run(exp.scenario(knob, overcommit=True, protect=False), seed=1).summary
    got = {c.id: c for c in exp.overcommit_checks(knob, over)}
    # With nothing protected, 170M in G succeeds under either knob: memory.min's refusal fails.
    assert got[f"{knob}.overcommit.outcome"].passed == (knob == "low")
    if knob == "low":
        assert not all(got[f"low.overcommit.{n}.low_events"].passed for n in "CD")
    else:
        assert not got["min.overcommit.B"].passed  # the 170M took B's protected page cache


def test_deterministic(repro):
    _, _, runs, _ = repro
    again = reclaimlab.run(exp.scenario("low", overcommit=False), seed=1)
    assert again.summary["cgroups"] == runs[("pressure", "low")].summary["cgroups"]
