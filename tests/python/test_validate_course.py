"""The course of a run, real beside simulated (`reclaimlab validate --course`,
validate/course.py): the guest's once-a-second samples and the model's time series read at the
same instants."""

from __future__ import annotations

import copy
import json

import pytest

from reclaimlab import api, cli
from reclaimlab.validate import compare, course, sittings, spec, store

from test_validate import VALIDATION

GIB_NS = 1_000_000_000


def _boot(free: list[int], pswpin: list[int]) -> dict[str, list[int]]:
    return {"t_ns": [0, GIB_NS, 2 * GIB_NS], "nr_free_pages": free, "pswpin": pswpin}


def test_table_reads_both_sides_at_the_same_instants():
    real = [_boot([100, 80, 60], [1000, 1010, 1030]), _boot([90, 70, -1], [500, 520, 560])]
    # The model's rows every 0.5 s; its counters start at 0 with the run.
    sim = [{"t_ns": [0, GIB_NS // 2, GIB_NS, 3 * GIB_NS // 2, 2 * GIB_NS],
            "nr_free_pages": [100, 95, 90, 85, 80], "pswpin": [0, 3, 6, 9, 12]}]
    rows = course.table(real, sim, GIB_NS)
    assert [r["t_s"] for r in rows] == [0, 1, 2]
    # State as read, counters from the first sample; a field the guest lacked (-1) is left out
    # of the mean.
    assert rows[1]["nr_free_pages"] == {"real": 75, "sim": 90}
    assert rows[1]["pswpin"] == {"real": 15, "sim": 6}
    assert rows[2]["nr_free_pages"] == {"real": 60, "sim": 80}
    assert rows[2]["pswpin"] == {"real": 45, "sim": 12}
    # A field neither side has is None, not 0.
    assert rows[0]["pgscan_direct"] == {"real": None, "sim": None}


@pytest.fixture(scope="module")
def anon_random():
    ref = sittings.reference(VALIDATION)
    s = spec.load(VALIDATION / "predict" / "anon-random.toml", ref)
    return s, store.load(s)


def test_course_runs_the_scored_scenario_and_reads_its_time_series(anon_random):
    s, kept = anon_random
    kept = copy.deepcopy(kept)
    for rep in kept["reps"]:
        rep["samples"] = _boot([10, 20, 30], [0, 100, 200]) | {"t_ns": [0, 10 * GIB_NS,
                                                                        20 * GIB_NS]}
    rows = course.course(s, kept, 1, None)
    assert [r["t_s"] for r in rows] == [0, 5, 10, 15, 20]
    # The simulated side is the model's own time series of the scenario validate scores.
    cols = api.run(compare.kept_sim_scenario(s, kept), seed=1).columns
    k = max(i for i, t in enumerate(cols["time_ns"]) if t <= 15 * GIB_NS)
    assert rows[3]["pswpin"]["sim"] == cols["pswpin"][k] > 0
    assert rows[3]["nr_active_anon"]["sim"] == cols["nr_active_anon"][k]
    assert rows[3]["pswpin"]["real"] == 100 and rows[4]["nr_free_pages"]["real"] == 30


def test_course_of_boots_without_samples_says_so(capsys):
    # The second sitting's boots were made before the workload program sampled the guest.
    code = cli.main(["validate", str(VALIDATION / "predict" / "mix.toml"), "--reps", "1",
                     "--sitting", str(VALIDATION / "sittings" / "2026-11-29-night"),
                     "--course", "--format", "json"])
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["courses"] == {"mix": []}
    assert "no course" in course.text("mix", [])


def test_the_reference_boots_carry_their_course(capsys):
    # The third sitting's (2026-11-30) boots sampled the guest once a second: the real course
    # sits beside the model's, second by second, in a 512 MiB guest's page counts.
    code = cli.main(["validate", str(VALIDATION / "predict" / "mix.toml"), "--reps", "1",
                     "--course", "--format", "json"])
    assert code == 0
    rows = json.loads(capsys.readouterr().out)["courses"]["mix"]
    # mix runs about 9 s: the course's rows every 5 s, the first (t = 0) before any sample.
    assert [r["t_s"] for r in rows] == [0.0, 5.0]
    assert rows[0]["nr_free_pages"]["real"] is None
    assert 0 < rows[1]["nr_free_pages"]["real"] < 131_072
    assert all(r["nr_free_pages"]["sim"] is not None for r in rows)
    # Each kept boot's samples, a second apart and one more at the run's end, cover its run.
    for rep in json.loads((VALIDATION / "sittings" / "2026-11-30" / "real" / "mix.json")
                          .read_text())["reps"]:
        t = rep["samples"]["t_ns"]
        gaps = [b - a for a, b in zip(t, t[1:])]
        assert len(t) >= int(rep["wall_time_s"]) + 1
        assert all(0.95e9 < g < 1.05e9 for g in gaps[:-1]), gaps
        assert 0 <= gaps[-1] <= 1.05e9
