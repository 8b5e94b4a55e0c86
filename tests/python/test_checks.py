"""The reproductions' checks (issue 32): a two-sided band passes inside and fails on either
side, a zero on one side is said in words and fails, a sweep's check counts its points, every
field reaches report.json and the HTML report; and a sensitivity sweep runs through the sweep
machinery and the store (a second sweep computes nothing)."""

from __future__ import annotations

import json

import pytest
from conftest import tiny_dict

from reclaimlab.experiments import checks as ck
from reclaimlab.experiments import sensitivity as sens
from reclaimlab.report import Page
from reclaimlab.store import Store


def test_band_check_passes_inside_and_fails_on_either_side():
    inside = ck.band_check("x", "c", 4.7, 2.35, 0.5, 2.5, source="seed 002")
    assert inside.passed and inside.ratio == 2.0 and inside.band == (0.5, 2.5)
    assert "ratio to seed 002's 2.35 in [0.50, 2.50]" == inside.expected
    assert not ck.band_check("x", "c", 7.0, 2.35, 0.5, 2.5, source="s").passed
    assert not ck.band_check("x", "c", 1.0, 2.35, 0.5, 2.5, source="s").passed
    # The edges belong to the band.
    assert ck.band_check("x", "c", 5.0, 10.0, 0.5, 2.0, source="s").passed


def test_a_zero_side_is_said_in_words_and_fails():
    c = ck.band_check("E.A.4.stalls", "c", 0.0, 1.65, 0.1, 10, source="seed 002",
                      zero_words=("no stalls under chinner+X2", "the thread saw none"))
    assert not c.passed and c.ratio is None and c.zero == "no stalls under chinner+X2"
    c = ck.band_check("x", "c", 3.0, 0, 0.1, 10, source="seed 002")
    assert not c.passed and c.ratio is None and "seed 002" in c.zero
    both = ck.band_check("x", "c", 0, 0, 0.1, 10, source="s")
    assert not both.passed and both.ratio is None
    assert ck.band_check("x", "c", 0, 0, 0.1, 10, source="s", zero_ok=True).passed
    line = ck.verdict_lines([c])[0]
    assert line.startswith("- FAIL x:") and "inf" not in line and "figure is zero" in line
    with pytest.raises(ValueError, match="not a number"):
        ck.band_check("x", "c", None, 1, 0, 1, source="s")
    with pytest.raises(ValueError, match="empty"):
        ck.band_check("x", "c", 1, 1, 2, 1, source="s")


def test_range_check_is_two_sided():
    assert ck.range_check("r", "c", 5, 3, 8, source="spec").passed
    assert not ck.range_check("r", "c", 2.9, 3, 8, source="spec").passed
    assert not ck.range_check("r", "c", 8.1, 3, 8, source="spec").passed


def test_holds_check_counts_points():
    c = ck.holds_check("h", "c", [True, True, False, True], source="sweep")
    assert c.holds == (3, 4) and not c.passed and c.measured == "holds at 3 of 4 points"
    assert ck.holds_check("h", "c", [True, True, False], need="majority", source="s").passed
    assert not ck.holds_check("h", "c", [True, False], need="majority", source="s").passed
    assert ck.holds_check("h", "c", [True] * 15, source="s").holds == (15, 15)
    assert not ck.holds_check("h", "c", [], source="s").passed
    with pytest.raises(ValueError):
        ck.holds_check("h", "c", [True], need="most", source="s")
    with pytest.raises(ValueError, match="role"):
        ck.Check("i", "c", "e", 1, True, role="guess")


def test_every_field_reaches_report_json_and_the_manifest(tmp_path):
    got = [ck.band_check("a", "claim a", 4.7, 2.35, 0.5, 1.5, source="seed 002", role="prediction"),
           ck.holds_check("b", "claim b", [True, False, True], source="sweep", role="control"),
           ck.Check("c", "claim c", "1", 1, True)]
    j = [c.as_json() for c in got]
    assert set(j[0]) == {"id", "claim", "expected", "measured", "pass", "figure", "band", "ratio",
                         "zero", "role", "holds", "source"}
    assert j[0]["band"] == [0.5, 1.5] and j[0]["ratio"] == 2.0 and j[0]["pass"] is False
    assert j[1]["holds"] == {"n": 2, "of": 3} and j[1]["role"] == "control"
    assert j[2]["band"] is None and j[2]["role"] == "prediction"
    lines = ck.verdict_lines(got)
    assert "ratio 2" in lines[0] and "prediction" in lines[0]
    assert "holds at 2 of 3 points" in lines[1] and "control" in lines[1]
    report, checks = [], []
    manifest = {"situations": []}
    sit = ck.Situation("s", "S", [])
    rec = {"title": "t", "knob": "k", "value": "v", "table": "|a|", "holds": {"n": 1, "of": 2},
           "plot": None, "range": "why", "check": "b"}
    ck.close_situation(report, checks, manifest, sit, got, {}, [rec])
    m = manifest["situations"][0]
    assert m["sensitivity"] == [rec]
    assert [c["ratio"] for c in m["checks"]] == [2.0, None, None]
    assert m["checks"][1]["holds"] == {"n": 2, "of": 3}
    done = ck.finish(tmp_path, report, checks, manifest, 0.0)
    assert done.failed == 2
    back = json.loads((tmp_path / "report.json").read_text())["checks"]
    assert [c["pass"] for c in back] == [False, False, True]
    # The HTML report's table of checks shows ratio, band, role and holds.
    page = Page("t")
    page.checks(m["checks"])
    html = "\n".join(page.blocks)
    for text in ("ratio", "band", "[0.5, 1.5]", "prediction", "control", "holds at 2 of 3 points"):
        assert text in html, text


def test_sensitivity_table_counts_the_points_and_the_plot_is_deterministic(tmp_path):
    import pandas as pd

    df = pd.DataFrame({"k": ["1", "1", "2", "2", "3", "3"], "seed": [1, 2, 1, 2, 1, 2],
                       "v": [1.0, 2.0, 3.0, float("nan"), 5.0, 6.0]})
    lines, holds = sens.sensitivity_table(df, "k", "v", lambda v: v < 5.5)
    # 1, 2, 3 and 5 hold; the missing value (NaN) and 6 do not.
    assert holds == (4, 6) and lines[-1] == "Holds at 4 of 6 points."
    text = "\n".join(lines)
    assert "| 2 " in text and "1 of 2" in text
    a = sens.sensitivity_plot(df, "k", "v", tmp_path / "a.svg", band=(0, 5.5), title="t")
    b = sens.sensitivity_plot(df, "k", "v", tmp_path / "b.svg", band=(0, 5.5), title="t")
    assert a.read_bytes() == b.read_bytes() and b"<svg" in a.read_bytes()
    page = Page("t")
    page.svg(a.read_text(), "t")
    assert "<svg" in page.blocks[0] and "http://" not in page.blocks[0]
    page.svg("<svg><script>alert(1)</script></svg>", "bad")
    assert "<script" not in page.blocks[1]


def test_sweep_knob_runs_through_the_store_and_reuses_it(tmp_path):
    store = Store(tmp_path / "store")
    base = tiny_dict("sens")
    events = []
    df = sens.sweep_knob(store, "tiny", base, {"policy.kswapd_balance": ["v2.6.36", "v6.1"]},
                         seeds=[1, 2], on_run=lambda label, st: events.append(st),
                         metrics=lambda run: {"steal": run.vmstat.get("pgsteal_kswapd", 0)},
                         out=tmp_path / "sw")
    assert len(df) == 4 and list(df["seed"]) == [1, 2, 1, 2]
    assert set(df["status"]) == {"ok"} and events.count("done") == 4
    assert (df["steal"] == df["pgsteal_kswapd"]).all()
    assert (tmp_path / "sw" / "summary.parquet").is_file()
    # The seeds differ in something, or the sweep did not pass them on.
    assert df["key"].nunique() == 4
    events.clear()
    again = sens.sweep_knob(store, "tiny", base, {"policy.kswapd_balance": ["v2.6.36", "v6.1"]},
                            seeds=[1, 2], on_run=lambda label, st: events.append(st))
    assert events == ["reused"] * 4
    assert list(again["key"]) == list(df["key"])
    from reclaimlab.sweep import SweepError
    with pytest.raises(SweepError, match="no_such_key|no such|unknown"):
        sens.sweep_knob(store, "bad", base, {"host.no_such_key": [1]}, seeds=[1])


def test_the_reproduction_page_shows_a_sweep_table_and_its_plot(tmp_path):
    import pandas as pd

    from reclaimlab.report import reproduction_page

    df = pd.DataFrame({"ram": ["1GiB", "2GiB"], "seed": [1, 1], "v": [3.0, 9.0]})
    lines, holds = sens.sensitivity_table(df, "ram", "v", lambda v: v < 5)
    plot = sens.sensitivity_plot(df, "ram", "v", tmp_path / "s" / "ram-v.svg", band=(0, 5))
    rec = sens.sensitivity_record('<b>v</b> over ram', "ram", "v", lines, holds, plot, tmp_path,
                                  range_note="why this range", check="x.ram")
    assert rec["plot"] == "s/ram-v.svg" and rec["holds"] == {"n": 1, "of": 2}
    got = [ck.holds_check("x.ram", "claim", [True, False], source="sweep")]
    manifest = {"title": "T", "seed": 1, "situations": [{
        "key": "s", "title": "S", "story": "", "runs": [], "checks": ck.manifest_checks(got),
        "thread": {}, "ours": {}, "tables": [], "sensitivity": [rec]}]}
    html = "\n".join(reproduction_page([(tmp_path, manifest)]).blocks)
    assert "holds at 1 of 2 points" in html and "why this range" in html
    assert "Holds at 1 of 2 points." in html and '<figure class="sensitivity"><svg' in html
    assert "<b>v</b>" not in html and "&lt;b&gt;v&lt;/b&gt;" in html


def test_a_run_two_situations_share_is_drawn_once(tmp_path):
    import reclaimlab
    from reclaimlab.report import reproduction_page

    reclaimlab.run(tiny_dict("shared"), seed=1, out=tmp_path / "runs" / "a")
    reclaimlab.run(tiny_dict("other"), seed=2, out=tmp_path / "runs" / "b")

    def sit(key, runs):
        return {"key": key, "title": key.upper(), "story": "", "checks": [], "thread": {},
                "ours": {}, "tables": [], "sensitivity": [],
                "runs": [{"label": label, "path": path} for label, path in runs]}

    manifest = {"title": "T", "seed": 1, "situations": [
        sit("fresh", [("D4", "runs/a")]),
        sit("gap", [("40s", "runs/../runs/a"), ("10s", "runs/b")])]}
    page = reproduction_page([(tmp_path, manifest)])
    html = "\n".join(page.blocks)
    course = [name for name, _ in page.charts if name.split("-", 1)[1].startswith(("fresh-d4", "gap-"))
              and "thread" not in name]
    # The shared run's course under "fresh" only; the other gap run's is drawn.
    assert any(n.split("-", 1)[1].startswith("fresh-d4") for n in course)
    assert any(n.split("-", 1)[1].startswith("gap-10s") for n in course)
    assert not any(n.split("-", 1)[1].startswith("gap-40s") for n in course)
    assert "gap 40s: the same run as fresh D4" in html


def test_ensure_many_runs_scenarios_of_any_structure_into_the_store(tmp_path):
    # Two scenarios that differ in structure (one has a second workload), two seeds, and a
    # duplicate: three runs made at once, which api.ensure_result then finds (same keys) and
    # a sweep over the same scenario reuses.
    from reclaimlab import api

    store = Store(tmp_path / "store")
    one, two = tiny_dict("many-a"), tiny_dict("many-b")
    two["workload"].append({"name": "reader", "file": {"size": "16MiB", "op": "read"}})
    events = []
    made = sens.ensure_many(store, "tiny", [(one, 1), (two, 1), (one, 2), (one, 1)],
                            on_run=lambda label, st: events.append((label, st)))
    assert made == 3 and [st for _, st in events] == ["done"] * 3
    assert len(set(store.keys())) == 3
    for scn, seed in ((one, 1), (two, 1), (one, 2)):
        assert api.ensure_result(scn, store, seed=seed).reused
    assert sens.ensure_many(store, "tiny", [(two, 1), (one, 2)]) == 0
    df = sens.sweep_knob(store, "again", one, {}, seeds=[1, 2], points=[{"name": "many-a"}])
    assert set(df["status"]) == {"ok"} and len(df) == 2
    assert set(df["key"]) <= set(store.keys()) and len(store.keys()) == 3


def test_pair_sweep_runs_are_the_runs_pair_sweep_makes(tmp_path):
    # The runs listed for ensure_many, made first, are every run the pair sweep then needs:
    # it computes nothing more.
    store = Store(tmp_path / "store")
    knob = sens.Knob("ram", "machine size", ["256MiB", "320MiB"],
                     [{"host.ram": "256MiB"}, {"host.ram": "320MiB"}], "a test's range")
    pairs = [{"policy.kswapd_balance": "v2.6.36"}, {"policy.kswapd_balance": "v6.1"}]
    runs = sens.pair_sweep_runs(knob, pairs, tiny_dict("pairs"), [1])
    assert len(runs) == 4 and sens.ensure_many(store, "pairs", runs) == 4
    made = []
    sens.pair_sweep(store, tmp_path, "sens", "pairs", knob, pairs, tiny_dict("pairs"),
                    lambda r: {"steal": r.vmstat.get("pgsteal_kswapd", 0)},
                    lambda old, new: [ck.range_check("x", "c", new["steal"], 0, 1e12,
                                                     source="t")],
                    [1], on_run=lambda label, st: made.append(st))
    assert made == ["reused"] * 4 and len(store.keys()) == 4
