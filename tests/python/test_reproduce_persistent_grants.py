"""``reclaimlab reproduce persistent-grants``: seed 003's I/O scaling with persistent grants
(mechanisms.md §E.C). The reproduction's checks are recorded (not asserted to pass: an honest
FAIL stays in the report), its figures are read back from the runs they came from, the
calibration uses the 1- and 5-guest points only, and every check fails when handed the runs of
a deliberately broken set-up."""

from __future__ import annotations

import csv
import json

import pytest

from reclaimlab import api
from reclaimlab.experiments import persistent_grants as pg
from reclaimlab.experiments import persistent_grants_calibration as pcal
from reclaimlab.experiments import persistent_grants_checks as chk
from reclaimlab.results import load_run
from reclaimlab.store import Store

#: Broken set-ups run briefly: their verdicts do not hinge on the length.
SHORT = "50ms"


@pytest.fixture(scope="module")
def grants(tmp_path_factory, repro_store):
    out = tmp_path_factory.mktemp("grants")
    root = out / pg.NAME
    store = Store(repro_store)
    done = pg.reproduce(pg.SITUATIONS, root, 1, store=store)
    checks = json.loads((root / "report.json").read_text())["checks"]
    return done, root, {c["id"]: c for c in checks}, store


def xen(scn, seed=1):
    return api.run(scn, seed=seed).summary["xen"]


def curve(grants_, guests, cost, duration=SHORT, vbd=None):
    out = {}
    for g in guests:
        scn = pg.scaling_scenario(grants_, g, duration=duration, cost=cost)
        for guest in scn["guest"]:
            guest["vbd"][0].update(vbd or {})
        out[g] = round(xen(scn)["aggregate"]["iops"])
    return out


def test_every_statement_is_checked_and_recorded(grants):
    done, root, checks, _ = grants
    for sid in ("E.C.1", "E.C.2", "E.C.3", "E.C.4", "E.C.5"):
        assert any(i.startswith(sid + ".") or i == sid for i in checks), sid
    for v in ("v38", "v61"):
        assert f"E.C.2.{v}" in checks and f"E.C.2.knee.{v}" in checks
    assert {"E.C.5.idle", "E.C.5.purge", "E.C.1.V.fall", "E.C.1.fall.split"} <= set(checks)
    roles = {c["role"] for c in checks.values()}
    assert roles == {"calibration", "prediction", "invariant"}
    assert {i for i, c in checks.items() if c["role"] == "calibration"} == {
        "E.C.1.cal.x1", "E.C.1.cal.x5", "E.C.1.peak"}
    assert checks["E.C.1.fall"]["role"] == "prediction"
    for c in checks.values():
        if c["figure"] is not None:
            lo, hi = c["band"]
            assert lo <= hi and c["source"]
            assert c["ratio"] == pytest.approx(c["measured"] / c["figure"], rel=1e-3)
            assert c["pass"] == (lo <= c["ratio"] <= hi)
        if c["holds"] is not None:
            assert c["measured"] == f"holds at {c['holds']['n']} of {c['holds']['of']} points"
    report = (root / "report.md").read_text()
    fails = [i for i, c in checks.items() if not c["pass"]]
    assert done.failed == len(fails) == report.count("- FAIL ")
    manifest = json.loads((root / "reproduce.json").read_text())
    assert [s["key"] for s in manifest["situations"]] == [s.key for s in pg.SITUATIONS]
    plots = [s["plot"] for sit in manifest["situations"] for s in sit["sensitivity"]]
    assert len(plots) == 4 and all((root / p).stat().st_size > 1000 for p in plots)


def test_iops_curve_is_the_runs(grants):
    _, root, checks, _ = grants
    with open(root / "iops.csv") as f:
        rows = {int(r["guests"]): r for r in csv.DictReader(f)}
    assert sorted(rows) == pg.GUESTS
    for g in (5, 10):
        x = load_run(root / "scaling" / f"none-{g}").summary["xen"]
        assert int(rows[g]["iops_none"]) == round(x["aggregate"]["iops"])
    assert checks["E.C.1.fall"]["measured"] == int(rows[10]["iops_none"])
    assert checks["E.C.1.fall"]["figure"] == 400_000
    for v in ("v38", "v61"):
        assert checks[f"E.C.2.{v}"]["measured"] == round(
            int(rows[10][f"iops_{v}"]) / int(rows[5][f"iops_{v}"]), 3)


def test_calibration_is_the_runs_and_uses_only_1_and_5_guests(grants):
    _, root, checks, store = grants
    x1 = load_run(root / "calibration" / "x1").summary["xen"]["aggregate"]["iops"]
    probe = load_run(root / "calibration" / "probe-5").summary["xen"]["aggregate"]["iops"]
    assert checks["E.C.1.cal.x1"]["measured"] == round(x1)
    assert checks["E.C.1.cal.x5"]["measured"] == round(probe)
    seen = []

    def iops(scn):
        seen.append(len(scn["guest"]))
        return api.ensure_result(scn, store, seed=1).summary["xen"]["aggregate"]["iops"]

    cal = pcal.fit(iops)
    assert set(seen) == {1, 5}
    assert f"guest_request = {cal.guest_request_ns} ns" in checks["E.C.1.cal.x1"]["claim"]
    # The fitted costs are the ones the scaling runs used.
    scn = load_run(root / "scaling" / "none-10").summary["scenario"]
    assert f"{cal.flush_contention_ns}ns" in scn and f"{cal.guest_request_ns}ns" in scn


def test_calibration_checks_fail_at_unfitted_costs():
    x1 = xen(pcal.scaling_scenario("none", 1, duration=SHORT))["aggregate"]["iops"]
    probe = pcal.scaling_scenario("none", 5, duration=SHORT, cost={
        "guest_request": f"{pcal.PROBE_GUEST_REQUEST_NS}ns", "flush_contention": "300ns"})
    x5 = xen(probe)["aggregate"]["iops"]
    got = chk.calibration_checks(pcal.Calibration(7000, 300, None, x1, x5, probe))
    assert [c.passed for c in got] == [False, False], [c.ratio for c in got]


def test_no_fit_where_the_fixed_part_fills_the_hold():
    with pytest.raises(pcal.NoFit, match="flush_contention"):
        pcal.fit(lambda s: xen(s)["aggregate"]["iops"], flush_ns=1500)
    assert not chk.split_check([(0, 400_000), (1500, None)]).passed
    assert not chk.split_check([(0, 400_000), (600, 500_000)]).passed
    assert chk.split_check([(0, 400_000), (300, 420_000)]).passed


def test_collapse_checks_fail_without_flush_contention():
    broken = curve("none", range(1, 11), {"guest_request": "7292ns", "flush_contention": "0ns"})
    got = {c.id: c for c in chk.collapse_checks(broken)}
    assert not got["E.C.1.peak"].passed and not got["E.C.1.fall"].passed
    assert not got["E.C.1.decline"].passed


def test_scaling_checks_fail_when_the_frontend_does_not_persist():
    cost = {"guest_request": "7292ns", "flush_contention": "177ns"}
    for v in ("v38", "v61"):
        broken = curve(v, (4, 5, 6, 8, 10), cost, vbd={"persistent": False})
        got = chk.scaling_checks(v, broken)
        assert len(got) == 2 and not any(c.passed for c in got), [(c.id, c.measured) for c in got]


def test_flush_checks_fail_on_broken_set_ups():
    # v3.8's and 6.1's backends with a frontend that does not persist: map and unmap per
    # request.
    for v in ("v38", "v61"):
        scn = pg.scaling_scenario(v, 2, duration=SHORT)
        for g in scn["guest"]:
            g["vbd"][0]["persistent"] = False
        got = chk.flush_checks(v, xen(scn))
        assert len(got) == 2 and not any(c.passed for c in got), v
    # The no-grants checks on 6.1's run (its grants persist: nothing is unmapped).
    got = chk.flush_checks("none", xen(pg.scaling_scenario("v61", 2, duration=SHORT)))
    assert len(got) == 2 and not any(c.passed for c in got), [c.measured for c in got]
    # Sequential I/O merged into requests of 32 segments: more than one flush per request.
    scn = pg.scaling_scenario("none", 2, duration=SHORT, pattern="sequential")
    got = {c.id: c for c in chk.flush_checks("none", xen(scn))}
    assert not got["E.C.3.none.tlb_flushes"].passed, got["E.C.3.none.tlb_flushes"].measured


def test_vcpu_checks_fail_when_flushes_do_not_cost_per_vcpu():
    cost = {"guest_request": "7292ns", "flush_contention": "177ns", "flush_cpu": "0ns"}
    x5, x10 = {}, {}
    for v in (8, 24, 48):
        for g, into in ((5, x5), (10, x10)):
            scn = pg.scaling_scenario("none", g, duration=SHORT, cost=cost, cpus=v)
            into[(v, 1)] = xen(scn)["aggregate"]["iops"]
    level, fall = chk.vcpu_checks(x5, x10)
    assert not level.passed and not fall.passed, (level.measured, fall.measured)


def test_copy_check_fails_with_a_costly_copy():
    def cpu(grants_, copy):
        scn = pg.scaling_scenario(grants_, 1, duration=SHORT, cost={"guest_copy": copy})
        return xen(scn)["jobs"][0]["guest_cpu_ns_per_request"]

    none = cpu("none", "450ns")
    got = chk.copy_check([(c, none, cpu("v61", f"{c}ns")) for c in (2000, 3000)])
    assert not got.passed and got.holds == (0, 2)


def test_flood_checks_fail_past_the_spec_cap_and_without_fresh_grants():
    over = pg.flood_scenario("v61", SHORT, {})
    over["xen"]["blkback"] = {"max_persistent_grants": 1200}
    got = {c.id: c for c in chk.flood_checks("v61", xen(over))}
    assert not got["E.C.5.cap.v61"].passed and got["E.C.5.cap.v61"].measured == 1200
    for v in ("v38", "v61"):
        reuse = pg.scaling_scenario(v, 1, duration=SHORT)
        got = {c.id: c for c in chk.flood_checks(v, xen(reuse))}
        assert not got[f"E.C.5.cap.{v}"].passed and not got[f"E.C.5.churn.{v}"].passed


def test_purge_check_fails_with_another_cap_or_no_purge():
    def purged(grants_, duration, blkback):
        scn = pg.flood_scenario(grants_, duration, {})
        scn["xen"]["blkback"] = blkback
        return xen(scn)["persistent_purged"]

    small = {"max_persistent_grants": 500}
    assert not chk.purge_check(purged("v61", "500ms", small), purged("v61", "1s", small),
                               5).passed
    assert not chk.purge_check(purged("v38", "500ms", {}), purged("v38", "1s", {}), 5).passed


@pytest.mark.parametrize("unused", [30, 0])
def test_idle_check_fails_with_another_idle_time(unused):
    def run(duration):
        scn = pg.flood_scenario("v61", duration, {}, io_for="5ms")
        scn["xen"]["blkback"] = {"persistent_grant_unused_seconds": unused}
        return xen(scn)

    held = run("10ms")["devices"][0]["rings"][0]["persistent_gnt_c"]
    got = chk.idle_check(held, run("59.905s"), run("60.205s"), pg.IDLE_AT)
    assert held > 0 and not got.passed, got.measured


def test_a_xen_run_is_byte_identical_when_repeated(tmp_path):
    scn = pg.scaling_scenario("none", 3, duration=SHORT)
    a = api.run(scn, out=tmp_path / "a")
    api.run(scn, out=tmp_path / "b")
    for name in ("summary.json", "vmstat"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert a.summary["xen"]["tlb_flushes"] > 0
