"""``reclaimlab reproduce blkback-pool``: seed 000's pool squeeze under dom0 pressure
(mechanisms.md §E.B), each check's figure read back here from the runs it came from. Seed 003's
persistent grants are tested in test_reproduce_persistent_grants.py."""

from __future__ import annotations

import json

import pytest

from reclaimlab import cli
from reclaimlab.experiments import blkback_pool
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


@pytest.mark.parametrize("which,statements,module", [
    ("pool", ("E.B.1", "E.B.2", "E.B.3", "E.B.4"), blkback_pool),
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

