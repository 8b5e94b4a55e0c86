"""``reclaimlab reproduce free-page-hinting``: the guest counts, the release of a program's memory,
granularity, refaults and synchronous cost of the hinting variants (mechanisms.md §E.D), each
check's figure read back here from the runs it came from."""

from __future__ import annotations

import csv
import json

import pytest

from reclaimlab import cli
from reclaimlab.experiments import free_page_hinting as exp
from reclaimlab.results import load_run


@pytest.fixture(scope="module")
def repro(tmp_path_factory):
    out = tmp_path_factory.mktemp("repro")
    rc = cli.main(["reproduce", "free-page-hinting", "--out", str(out)])
    root = out / "free-page-hinting"
    checks = json.loads((root / "report.json").read_text())["checks"]
    return rc, root, {c["id"]: c for c in checks}


def test_every_statement_has_checks_and_the_report_its_verdicts(repro):
    rc, root, checks = repro
    for sid in ("E.D.1", "E.D.2", "E.D.3", "E.D.4", "E.D.5"):
        assert any(i.startswith(sid + ".") for i in checks), sid
    for c in checks.values():
        assert set(c) == {"id", "claim", "expected", "measured", "pass"}
    failed = sum(not c["pass"] for c in checks.values())
    assert (root / "report.md").read_text().count("- FAIL ") == failed
    assert rc == (1 if failed else 0)
    manifest = json.loads((root / "reproduce.json").read_text())
    assert [s["key"] for s in manifest["situations"]] == [s.key for s in exp.SITUATIONS]


def test_guest_counts_come_from_the_runs(repro):
    _, root, checks = repro
    for v in exp.COUNT_VARIANTS:
        summary = load_run(root / "guests" / v).summary
        n = exp.guests_completed(summary)
        if v == "D1":
            assert checks["E.D.1.D1"]["measured"] == n == 3
        if v in ("D2", "D2stored", "D3", "D4"):
            assert checks[f"E.D.1.{v}"]["measured"] == n
    # Without hinting a finished guest keeps its program's memory; with reporting it does not.
    def survivor(v):
        return next(g for g in load_run(root / "fresh" / v).summary["guests"]
                    if g["killed_at_s"] is None and g["threads"][0]["finished_s"] is not None)

    d1, d4 = survivor("D1"), survivor("D4")
    assert d1["host_rss_bytes"] > 4 * 10**9
    assert d4["host_rss_bytes"] < 1 * 10**9
    assert d4["bytes_reported"] >= 4 * 10**9 * 0.9


def test_release_after_exit_matches_the_series(repro):
    _, root, checks = repro
    with open(root / "exit-rss.csv") as f:
        rows = list(csv.DictReader(f))
    assert rows and set(rows[0]) == {"time_s", *(f"{v}_host_rss_bytes" for v in
                                                 ("D1", "D2", "D3", "D4"))}
    d4 = exp.rss_series(root / "exit" / "D4")
    exit_s = load_run(root / "exit" / "D4").summary["guests"][0]["threads"][0]["finished_s"]
    rel = exp.release_times(d4, exit_s)
    assert checks["E.D.2.D4"]["measured"] == rel["t_90"]
    assert checks["E.D.2.D4"]["pass"] and checks["E.D.2.D1"]["pass"]
    # Reporting runs in 2 s passes: half is not gone before the second pass.
    assert rel["t_half"] >= 2.0


def test_granularity_refaults_and_stalls(repro):
    _, _, checks = repro
    for cid in ("E.D.3.D4", "E.D.3.D3", "E.D.3.D2", "E.D.4.fits", "E.D.4.exhausted",
                "E.D.5.D3", "E.D.5.D4"):
        assert checks[cid]["pass"], checks[cid]
    assert checks["E.D.4.exhausted"]["measured"] > 100_000


def test_release_times_of_a_series():
    series = [(0.0, 100), (1.0, 500), (2.0, 500), (3.0, 300), (4.0, 140), (5.0, 100)]
    got = exp.release_times(series, exit_s=2.0)
    assert got["released"] == 400
    assert got["t_half"] == 1.0  # 300 at 3 s: 200 of 400 released
    assert got["t_90"] == 2.0  # 140 at 4 s: 360 released
    flat = exp.release_times([(0.0, 10), (1.0, 10)], exit_s=0.5)
    assert flat["t_half"] is None and flat["released"] == 0
