"""``reclaimlab reproduce free-page-hinting`` (seed 001, mechanisms.md §E.D): each check computed
from real runs and recorded with its band and role, and each able to FAIL: every check is run
here against a deliberately broken variant or set-up (variants swapped, a guest that is not
fragmented, a slower report that does not slow the program) and seen to fail."""

from __future__ import annotations

import csv
import json

import pytest

from reclaimlab import cli
from reclaimlab.experiments import free_page_hinting as exp
from reclaimlab.experiments import free_page_hinting_checks as fc
from reclaimlab.results import load_run
from reclaimlab.store import Store


@pytest.fixture(scope="module")
def repro(tmp_path_factory, repro_store):
    """Every situation but the aged count, the gap and the sensitivity sweep (their checks
    are the same functions, exercised below)."""
    out = tmp_path_factory.mktemp("repro")
    rc = cli.main(["reproduce", "free-page-hinting", "--out", str(out), "--store", str(repro_store),
                   "--no-figures",
                   "--only", "fresh,exit,stall,fragmented,refault"])
    root = out / "free-page-hinting"
    checks = json.loads((root / "report.json").read_text())["checks"]
    return rc, root, {c["id"]: c for c in checks}


def _counts(root, sit="fresh"):
    return {v: exp.guests_completed(load_run(root / sit / v).summary) for v in exp.VARIANTS}


def test_checks_are_recorded_and_the_report_says_their_verdicts(repro):
    rc, root, checks = repro
    for sid in ("E.D.1", "E.D.2", "E.D.3", "E.D.4", "E.D.5"):
        assert any(i.startswith(sid + ".") for i in checks), sid
    for c in checks.values():
        assert {"figure", "band", "ratio", "role", "source"} <= set(c)
    assert checks["E.D.1.D2.fresh"]["band"] == list(fc.D2_GUESTS)
    assert checks["E.D.3.control"]["role"] == "control"
    assert checks["E.D.1.D2.fresh"]["role"] == "prediction"
    assert {c.id: c.role for c in fc.e_d1_checks(_counts(root), fresh=False)}[
        "E.D.1.D2"] == "calibration"
    failed = sum(not c["pass"] for c in checks.values())
    assert (root / "report.md").read_text().count("- FAIL ") == failed
    assert rc == (1 if failed else 0)


def test_guest_counts_come_from_the_runs_and_fail_with_variants_swapped(repro):
    _, root, checks = repro
    c = _counts(root)
    assert checks["E.D.1.D1.fresh"]["measured"] == c["D1"] == 3
    assert checks["E.D.1.D2.fresh"]["measured"] == c["D2"]
    # Without hinting a finished guest keeps its program's memory; with reporting it does not.
    d4 = next(g for g in load_run(root / "fresh" / "D4").summary["guests"]
              if g["killed_at_s"] is None and g["threads"][0]["finished_s"] is not None)
    assert d4["host_rss_bytes"] < 1 * 10**9
    broken = {"D1": c["D4"], "D2": c["D4"], "D2stored": c["D1"], "D3": c["D1"], "D4": c["D1"]}
    got = fc.e_d1_checks(broken, fresh=False)
    assert len(got) == 6 and not any(x.passed for x in got), got
    assert not fc.e_d1_gap(c["D4"], c["D1"]).passed


def test_release_after_exit_and_its_pace_window(repro):
    _, root, checks = repro
    with open(root / "exit-rss.csv") as f:
        rows = list(csv.DictReader(f))
    assert rows and set(rows[0]) == {"time_s", *(f"{v}_host_rss_bytes" for v in
                                                 ("D1", "D2", "D3", "D4"))}
    rel = {}
    for v in ("D1", "D3", "D4"):
        exit_s = load_run(root / "exit" / v).summary["guests"][0]["threads"][0]["finished_s"]
        rel[v] = exp.release_times(exp.rss_series(root / "exit" / v), exit_s)
    assert checks["E.D.2.D4"]["measured"] == rel["D4"]["t_90"]
    # D1 keeps the program's 4 GB: its RSS at the end above its RSS before the program.
    d1 = [int(r["D1_host_rss_bytes"]) for r in rows if r["D1_host_rss_bytes"]]
    assert checks["E.D.2.D1"]["measured"] == d1[-1] - d1[0]
    assert checks["E.D.2.D1"]["figure"] == exp.PROGRAM_BYTES
    window = exp._exit_window(root / "exit" / "D4")
    assert checks["E.D.2.D4"]["band"] == list(window["window"])
    # D1's series in D4's place releases nothing; D4's in D1's place does not stay resident;
    # D4's in D3's is not done by the exit.
    broken = {c.id: c for c in fc.e_d2_checks(rel["D4"], rel["D4"], rel["D1"], window,
                                              exp.PROGRAM_BYTES)}
    assert not any(c.passed for c in broken.values()), broken
    assert broken["E.D.2.D4"].zero == "nothing released"


def test_pace_rule_matches_the_spec_worked_example():
    # §D4: 1,024 order-10 blocks on one list, 96 a pass, all of them in 11 passes.
    assert fc.passes_to_share([1024], [1024], share=1.0) == 11
    one = fc.d4_window({"Normal": [0] * 10 + [1024]}, 1024)
    assert one["passes"] == (10, 10) and one["window"] == (18.0, 20.5)
    # Two lists report in parallel, so the same blocks go faster.
    two = fc.d4_window({"DMA32": [0] * 10 + [512], "Normal": [0] * 10 + [512]}, 1024)
    assert two["passes"][1] < one["passes"][0]
    with pytest.raises(ValueError):
        fc.d4_window({"Normal": [0] * 10 + [100]}, 1024)


def test_stall_is_read_from_completion_times_and_fails_swapped(repro):
    _, root, checks = repro
    t = {}
    for label in exp.SITUATIONS[4].policies:
        v, cost = label.split("-")
        t[(v, cost)] = load_run(root / "stall" / label).summary["guests"][0]["threads"][0][
            "finished_s"]
    slope = (t[("D3", "slow")] - t[("D3", "base")]) / 1e-3
    assert checks["E.D.5.D3"]["measured"] == round(slope, 2)
    assert checks["E.D.5.D3"]["figure"] == round(exp.CHURN["count"] / 512, 2)
    swapped = {(("D4" if v == "D3" else "D3"), c): x for (v, c), x in t.items()}
    assert not any(c.passed for c in fc.e_d5_checks(swapped, exp.CHURN["count"], 1e-3))


def test_granularity_fails_on_a_guest_that_is_not_fragmented(repro):
    _, root, checks = repro
    frag = {v: load_run(root / "fragmented" / v).summary["guests"][0] for v in ("D2", "D3", "D4")}
    ctl = {v: load_run(root / "fragmented" / f"control-{v}").summary["guests"][0]
           for v in ("D3", "D4")}
    assert checks["E.D.3.D4"]["measured"] == frag["D4"]["blocks_reported"]
    # The control guests in the fragmented guests' place: D3 and D4 report, D2's place taken
    # by D4 (nothing reported), and the control fed the fragmented runs.
    broken = {c.id: c for c in fc.e_d3_checks({"D2": frag["D4"], **ctl}, frag)}
    assert not any(c.passed for c in broken.values()), broken


def test_refaults_fail_swapped(repro):
    _, root, checks = repro
    f2 = load_run(root / "refault" / "D4-small").summary["guests"][0]["host_refaults"]
    f3 = load_run(root / "refault" / "D4-large").summary["guests"][0]["host_refaults"]
    assert checks["E.D.4.exhausted"]["measured"] == f3 > 100_000
    assert not any(c.passed for c in fc.e_d4_checks(f3, f2))


def test_sensitivity_counts_points_and_fails_where_the_count_is_off(tmp_path, monkeypatch):
    # Decimal units on fresh guests: 4 GB is 954 blocks of 4 MiB, never a full D2 array.
    monkeypatch.setattr(exp, "SENS_POINTS", [("decimal", "fresh", "800MB"),
                                             ("decimal", "aged", "800MB")])
    monkeypatch.setattr(exp, "SEEDS", [1])
    got, records, lines = exp.sensitivity(Store(tmp_path / "store"), tmp_path)
    ids = {c.id: c for c in got}
    assert ids["E.D.1.D2.units"].holds == (0, 2) and not ids["E.D.1.D2.units"].passed
    assert records and records[0]["holds"] == {"n": 0, "of": 2}
    assert any("decimal-fresh-800MB" in line for line in lines)


def test_release_times_of_a_series():
    series = [(0.0, 100), (1.0, 500), (2.0, 500), (3.0, 300), (4.0, 140), (5.0, 100)]
    got = exp.release_times(series, exit_s=2.0)
    assert got["released"] == 400
    assert got["t_half"] == 1.0  # 300 at 3 s: 200 of 400 released
    assert got["t_90"] == 2.0  # 140 at 4 s: 360 released
    flat = exp.release_times([(0.0, 10), (1.0, 10)], exit_s=0.5)
    assert flat["t_half"] is None and flat["released"] == 0
