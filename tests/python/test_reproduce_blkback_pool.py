"""``reclaimlab reproduce blkback-pool`` (seed 000, mechanisms.md §E.B): each check computed
from real runs, recorded with its band and role, and each able to FAIL: every check is run
here against a deliberately broken variant or set-up (a pool that never squeezes, the wrong
disk, a target the pool was never given) and seen to fail."""

from __future__ import annotations

import json

import pytest

from reclaimlab import api, cli
from reclaimlab.experiments import blkback_pool as bp
from reclaimlab.experiments import blkback_pool_checks as bc
from reclaimlab.results import load_run
from reclaimlab.store import Store


def _figs(run) -> dict[str, int]:
    return {"pswpin": int(run.vmstat["pswpin"]), "pswpout": int(run.vmstat["pswpout"])}


@pytest.fixture(scope="module")
def cheap(tmp_path_factory, repro_store):
    """The reproduction's throughput and invariants situations (the pressure runs take a
    minute; their checks are exercised below on short runs)."""
    out = tmp_path_factory.mktemp("bb")
    rc = cli.main(["reproduce", "blkback-pool", "--out", str(out), "--store", str(repro_store),
                   "--no-figures", "--only", "throughput,invariants"])
    root = out / "blkback-pool"
    checks = json.loads((root / "report.json").read_text())["checks"]
    return rc, root, {c["id"]: c for c in checks}


@pytest.fixture(scope="module")
def short_b1():
    """20 s of the pressure scenario under B1: swaps, but far less than the thread's B1."""
    return api.run(bp.pressure_scenario("B1", duration="20s"), seed=1)


def test_checks_are_recorded_with_band_and_role(cheap):
    rc, root, checks = cheap
    for cid in ("E.B.3.network", "E.B.3.ramdisk", "E.B.3.dom0-bound", "E.B.3.network.rate",
                "E.B.3.ramdisk.rate", "E.B.4.in-use", "E.B.4.unpopulated", "E.B.4.target",
                "E.B.4.converge"):
        assert cid in checks, cid
    assert checks["E.B.3.dom0-bound"]["role"] == "control"
    assert checks["E.B.3.network.rate"]["role"] == "calibration"
    assert checks["E.B.4.converge"]["band"] == [0.0, bc.CONVERGE_MS]
    assert checks["E.B.3.ramdisk.rate"]["ratio"] == pytest.approx(
        checks["E.B.3.ramdisk.rate"]["measured"] / bc.RAMDISK_MBPS, abs=1e-3)
    failed = sum(not c["pass"] for c in checks.values())
    assert rc == (1 if failed else 0)
    assert (root / "report.md").read_text().count("- FAIL ") == failed


def test_dd_figures_come_from_the_runs(cheap):
    _, root, checks = cheap
    runs = {k: load_run(root / "throughput" / k).summary["xen"]["jobs"][0]["runs_mb_per_s"]
            for k in ("dom0-bound-1024", "dom0-bound-0")}
    a, b = (sum(r) / len(r) for r in runs.values())
    assert checks["E.B.3.dom0-bound"]["measured"] == round((b - a) / a * 100, 2)
    # Dom0's path is on the critical path there: the squeeze's allocations cost throughput.
    assert b < a


def test_pressure_figures_come_from_the_runs(tmp_path):
    rc = cli.main(["reproduce", "blkback-pool", "--out", str(tmp_path), "--no-figures",
                   "--only", "pressure"])
    root = tmp_path / "blkback-pool"
    checks = {c["id"]: c for c in json.loads((root / "report.json").read_text())["checks"]}
    figs = {p: _figs(load_run(root / "pressure" / p)) for p in ("B1", "B2", "B3")}
    assert checks["E.B.1.B1.pswpout"]["measured"] == figs["B1"]["pswpout"]
    assert checks["E.B.1.B1.pswpout"]["role"] == "calibration"
    assert checks["E.B.1.B1.pswpout"]["figure"] == bc.B1_PSWPOUT
    for p in ("B2", "B3"):
        c = checks[f"E.B.1.{p}"]
        assert c["role"] == "prediction" and c["band"] == list(bc.CUT_BAND)
        if figs[p]["pswpout"]:
            assert c["measured"] == round(figs["B1"]["pswpout"] / figs[p]["pswpout"], 2)
            assert c["ratio"] == pytest.approx(c["measured"] / c["figure"], rel=1e-3)
        else:
            assert c["zero"] and not c["pass"]
    # B1's rings keep their pools; B3's were squeezed.
    x1 = load_run(root / "pressure" / "B1").summary["xen"]
    x3 = load_run(root / "pressure" / "B3").summary["xen"]
    assert x1["squeezes"] == 0 and x3["squeezes"] > 0
    assert rc == (1 if any(not c["pass"] for c in checks.values()) else 0)


def test_e_b1_fails_on_a_pool_that_never_squeezes(short_b1):
    b1 = _figs(short_b1)
    assert b1["pswpout"] > 0
    for label in ("B2", "B3"):
        got = {c.id: c for c in bc.e_b1_checks(b1, b1, label)}
        assert set(got) == {f"E.B.1.{label}", f"E.B.1.pswpin.{label}",
                            f"E.B.1.pswpin-more.{label}"}
        assert not any(c.passed for c in got.values()), got
        assert got[f"E.B.1.{label}"].ratio == pytest.approx(1 / bc.CUT_OUT[label], rel=1e-2)


def test_e_b1_calibration_fails_off_the_thread_figure(short_b1):
    cal, pin = bc.e_b1_calibration(_figs(short_b1))
    assert cal.role == "calibration" and pin.role == "prediction"
    assert not cal.passed and cal.ratio < bc.CALIBRATION_BAND[0]
    # B1's swap-in (a prediction) fails too on the short run: a third of the time, a
    # fraction of the thread's swap-in.
    assert not pin.passed and pin.ratio < pin.band[0], pin.ratio
    # A B3 that swaps nothing is said in words, not an infinite cut that passes.
    zero = bc.e_b1_checks(_figs(short_b1), {"pswpin": 0, "pswpout": 0}, "B3")
    assert all(not c.passed for c in zero) and "no swap-out under B3" in zero[0].zero


def test_e_b2_fails_when_the_duration_changes_nothing():
    # B1 ignores the squeeze duration: the same swap-out at 1, 10 and 100 ms.
    out = {ms: int(api.run(bp.pressure_scenario("B1", squeeze_ms=ms, duration="15s"),
                           seed=1).vmstat["pswpout"]) for ms in (1, 10, 100)}
    assert len(set(out.values())) == 1
    got = {c.id: c for c in bc.e_b2_checks(out)}
    assert not any(got[i].passed for i in ("E.B.2.short", "E.B.2.returns", "E.B.2.short.size"))
    # A 100 ms window that removes all swap-out is no "little gain": said in words, failing.
    far = bc.e_b2_checks({1: 6_000, 10: 3_000, 100: 0})
    assert not far[3].passed and far[3].zero == "no swap-out at 100 ms"
    # The thread's v2 figures pass them all.
    v2 = bc.e_b2_checks({1: 6_424, 10: 3_325, 100: 3_340})
    assert all(c.passed for c in v2), v2


def _rates(scn) -> list[float]:
    return api.run(scn, seed=1).summary["xen"]["jobs"][0]["runs_mb_per_s"]


def test_e_b3_fails_on_the_wrong_set_ups():
    bound = {m: _rates(bp.dd_scenario("ramdisk", m, think=bp.DOM0_BOUND_THINK)) for m in (1024, 0)}
    slow = {m: _rates(bp.dd_scenario("ramdisk", m)) for m in (1024, 0)}
    # "No cost" where dom0 is the bottleneck fails; the control on a latency-bound set-up fails.
    got = {c.id: c for c in bc.e_b3_checks({("ramdisk", m): r for m, r in bound.items()})}
    assert not got["E.B.3.ramdisk"].passed and not got["E.B.3.ramdisk.rate"].passed
    ctl = bc.e_b3_checks({("dom0-bound", m): r for m, r in slow.items()},
                         {("dom0-bound", m): 1.0 for m in slow})
    assert [c.id for c in ctl] == ["E.B.3.dom0-bound"] and not ctl[0].passed
    # The dom0-bound rates without a busy dom0 CPU do not make a control either.
    idle = bc.e_b3_checks({("dom0-bound", m): r for m, r in bound.items()},
                          {("dom0-bound", m): 0.1 for m in bound})
    assert not idle[0].passed and "not the bottleneck" in idle[0].zero
    # A network disk twice as fast as the thread's is off its calibration.
    fast = bp.dd_scenario("network", 1024)
    fast["guest"][0]["vbd"][0]["bandwidth"] = "74MiB/s"
    rate = {c.id: c for c in bc.e_b3_checks({("network", 1024): _rates(fast),
                                              ("network", 0): _rates(fast)})}
    assert not rate["E.B.3.network.rate"].passed and rate["E.B.3.network"].passed


def test_e_b4_in_use_fails_without_squeezes():
    (c,) = bp.in_use_check(1, pool="B1", duration="5s")
    assert c.role == "invariant" and not c.passed and "0 squeezes" in c.measured


def test_e_b4_unpopulated_fails_with_balloon_backing():
    free = {}
    for pool in ("B1", "B3"):
        r = api.run(bp.pressure_scenario(pool, anon="1950MiB", duration="20s"), seed=1)
        free[pool] = (r.summary["xen"]["balloon"]["current_kb"] // 4,
                      r.summary["xen"]["squeezes"])
    c = bc.e_b4_unpopulated(free["B1"][0], free["B3"][0], free["B3"][1], ram_pages=2 << 18)
    assert not c.passed, c
    nothing = bc.e_b4_unpopulated(100, 100, 0, ram_pages=2 << 18)
    assert not nothing.passed and nothing.zero


def test_e_b4_pool_over_time_fails_against_targets_it_was_not_given(tmp_path):
    df = bp.sample_pools(Store(tmp_path / "store"), tmp_path, 1, step_ms=47)
    samples = bc.ring_samples(df, bp.JOB_STARTS_MS)
    target, conv = bc.e_b4_pool_checks(samples, bp.CONVERGE_TARGET)
    assert target.passed and conv.passed, (target, conv)
    # The pools read at the cuts are the runs' own.
    row = df.iloc[10]
    run = load_run(Store(tmp_path / "store").path(row["key"]))
    assert row["pool0"] == sum(r["pool_pages"] for r in run.summary["xen"]["devices"][0]["rings"])
    # Against 1,024 the samples never see a pool over its target: nothing was tested.
    assert not bc.e_b4_pool_checks(samples, 1024)[0].passed
    # Against 0 (a squeeze that never ends) the idle pools of 64 never converge.
    assert not bc.e_b4_pool_checks(samples, 0)[1].passed
    # Samples cut only while the dd runs cannot show convergence.
    busy = samples[~(samples["idle_ms"] > bc.CONVERGE_MS)]
    assert not bc.e_b4_pool_checks(busy, bp.CONVERGE_TARGET)[1].passed


def test_sweep_checks_fail_with_the_pools_swapped(tmp_path):
    # The service-load sweep's own code at one load (the calibrated 1,675 MiB) and seed 1,
    # with 20 s runs: once in the right order (B1 old, B3 new) and once swapped (the same runs,
    # nothing computed twice). Swapped, B3's swap-out is no calibration of B1's and there is
    # no cut.
    from reclaimlab.experiments.sensitivity import Knob, pair_sweep

    store = Store(tmp_path / "store")
    knob = Knob("dom0_anon", "dom0's service load", ["1675MiB"],
                [{"workload.dom0-services.anon.size": "1675MiB"}], "a test's range")
    base = bp.pressure_scenario("B1", duration="20s")
    b1, b3 = {"policy.blkback_pool": "B1"}, {"policy.blkback_pool": "B3"}
    right = pair_sweep(store, tmp_path, "sensitivity", "bb", knob, [b1, b3], base,
                       bc.swap_figures, bc.sweep_checks, [1])
    swapped = pair_sweep(store, tmp_path, "sensitivity", "bb", knob, [b3, b1], base,
                         bc.swap_figures, bc.sweep_checks, [1])
    ids = ["E.B.1.B1.pswpout.dom0_anon", "E.B.1.B3.dom0_anon", "E.B.1.pswpin.B3.dom0_anon"]
    assert [c.id for c in right.checks] == [c.id for c in swapped.checks] == ids
    assert all(c.holds[1] == 1 for c in swapped.checks)
    assert not any(c.passed for c in swapped.checks), [c.measured for c in swapped.checks]
    # The point's verdict is the reproduction's own check on those runs' figures, which are
    # the runs' counters.
    row = right.points.iloc[0]
    old, new = ({k: int(row[f"{w}_{k}"]) for k in ("pswpin", "pswpout")} for w in ("old", "new"))
    direct = {p: _figs(load_run(api.ensure_result(
        bp.pressure_scenario(p, duration="20s"), store, seed=1).path)) for p in ("B1", "B3")}
    assert (old, new) == (direct["B1"], direct["B3"])
    assert [c.passed for c in right.checks] == [c.passed for c in bc.sweep_checks(old, new)]
