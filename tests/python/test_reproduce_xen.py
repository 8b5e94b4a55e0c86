"""``reclaimlab reproduce blkback-pool`` and ``reclaimlab reproduce persistent-grants``: seed 000's
pool squeeze under dom0 pressure and seed 003's I/O scaling with persistent grants
(mechanisms.md §E.B, §E.C), each check's figure read back here from the runs it came from."""

from __future__ import annotations

import csv
import json

import pytest

from reclaimlab import api, cli
from reclaimlab.experiments import blkback_pool, persistent_grants
from reclaimlab.results import load_run


def _reproduce(tmp_path_factory, name):
    out = tmp_path_factory.mktemp(name)
    rc = cli.main(["reproduce", name, "--out", str(out), "--no-figures"])
    root = out / name
    checks = json.loads((root / "report.json").read_text())["checks"]
    return rc, root, {c["id"]: c for c in checks}


@pytest.fixture(scope="module")
def pool(tmp_path_factory):
    return _reproduce(tmp_path_factory, "blkback-pool")


@pytest.fixture(scope="module")
def grants(tmp_path_factory):
    return _reproduce(tmp_path_factory, "persistent-grants")


@pytest.mark.parametrize("which,statements,module", [
    ("pool", ("E.B.1", "E.B.2", "E.B.3", "E.B.4"), blkback_pool),
    ("grants", ("E.C.1", "E.C.2", "E.C.3", "E.C.4", "E.C.5"), persistent_grants),
])
def test_every_statement_is_checked_and_passes(which, statements, module, request):
    rc, root, checks = request.getfixturevalue(which)
    for sid in statements:
        assert any(i.startswith(sid + ".") or i == sid for i in checks), sid
    for c in checks.values():
        assert set(c) == {"id", "claim", "expected", "measured", "pass"}
        assert c["pass"], c
    assert rc == 0
    assert "- FAIL " not in (root / "report.md").read_text()
    manifest = json.loads((root / "reproduce.json").read_text())
    assert [s["key"] for s in manifest["situations"]] == [s.key for s in module.SITUATIONS]


def test_pool_swap_figures_come_from_the_runs(pool):
    _, root, checks = pool
    out = {p: load_run(root / "pressure" / p).vmstat["pswpout"] for p in ("B1", "B3")}
    assert checks["E.B.1.B3"]["measured"] == f"{out['B1'] / max(out['B3'], 1):.1f}x"
    assert out["B1"] > 10 * out["B3"]
    sweep = {d: load_run(root / "duration" / d).vmstat["pswpout"] for d in ("1ms", "10ms")}
    assert checks["E.B.2.short"]["measured"] == sweep["1ms"] > sweep["10ms"]
    # B1's rings keep their pools; B3's were squeezed.
    x1 = load_run(root / "pressure" / "B1").summary["xen"]
    x3 = load_run(root / "pressure" / "B3").summary["xen"]
    assert x1["squeezes"] == 0 and x3["squeezes"] > 0
    assert x1["pool_pages"] > x3["pool_pages"]


def test_dd_throughput_is_the_runs_mean(pool):
    _, root, checks = pool
    for dev in ("network", "ramdisk"):
        runs = load_run(root / "throughput" / f"{dev}-0").summary["xen"]["jobs"][0]
        assert len(runs["runs_mb_per_s"]) == 5
        mean = sum(runs["runs_mb_per_s"]) / 5
        assert f"vs {mean:.1f} MB/s" in checks[f"E.B.3.{dev}"]["measured"]
    net = load_run(root / "throughput" / "network-1024").summary["xen"]["jobs"][0]
    assert 37 < net["runs_mb_per_s"][-1] < 40


def test_iops_curve_is_the_runs(grants):
    _, root, checks = grants
    with open(root / "iops.csv") as f:
        rows = {int(r["guests"]): r for r in csv.DictReader(f)}
    assert sorted(rows) == persistent_grants.GUESTS
    for g in (5, 10):
        x = load_run(root / "scaling" / f"none-{g}").summary["xen"]
        assert int(rows[g]["iops_none"]) == round(x["aggregate"]["iops"])
    assert checks["E.C.1.fall"]["measured"] == int(rows[10]["iops_none"])
    peak = max(int(r["iops_none"]) for r in rows.values())
    assert int(rows[10]["iops_none"]) < 0.8 * peak
    assert int(rows[10]["iops_v61"]) > int(rows[5]["iops_v61"])


def test_a_xen_run_is_byte_identical_when_repeated(tmp_path):
    scn = persistent_grants.scaling_scenario("none", 3, duration="50ms")
    a = api.run(scn, out=tmp_path / "a")
    b = api.run(scn, out=tmp_path / "b")
    for name in ("summary.json", "vmstat"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert a.summary["xen"]["tlb_flushes"] > 0
