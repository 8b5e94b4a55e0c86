"""The filesystems' own costs from their calibration scenarios (docs/VALIDATION.md,
"Protocol"; validate/calibrate.py): a create and a cached lookup per filesystem type, measured
by `validation/calibrate/<type>-create-stat`, written as `[fs.<type>]` and `[stat.<type>]` in
the guest profile and merged into a scenario of that type only."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import pytest

from reclaimlab import api
from reclaimlab.validate import calibrate, profile, sittings, spec, store
from reclaimlab.validate.compare import kept_sim_scenario
from reclaimlab.validate.errors import ValidateError
from reclaimlab.validate.spec import duration_ns

from test_validate_protocol import SECOND as BEFORE, VALIDATION

# What a boot measures: the creator's 10,000 empty files in 9.0 s, the walker's 20,000
# lookups from 25 s to 29.5 s (so a create takes 900 us and a cached lookup 225 us), each boot
# a little off the mean.
CREATE_END_NS = [8_800_000_000, 9_000_000_000, 9_200_000_000]
WALK_END_NS = [29_400_000_000, 29_500_000_000, 29_600_000_000]


def _boots(s: spec.GuestSpec, template: dict, creator_end: list[int], walk_end: list[int]) -> dict:
    """Kept boots of ``s`` in the store's format, shaped after a real kept file's."""
    data = copy.deepcopy(template)
    data.update(scenario=s.name, scenario_file=s.path.name, scenario_sha256=s.content_hash)
    rep0 = data["reps"][0]
    data["reps"] = []
    for c, w in zip(creator_end, walk_end):
        rep = copy.deepcopy(rep0)
        rep["workloads"] = [
            {"name": "create", "end_ns": c, "exit": 0, "killed_by_signal": 0},
            {"name": "walk", "end_ns": w, "exit": 0, "killed_by_signal": 0}]
        rep["fs_threads"] = [
            {"workload": "create", "thread": 0, "created": 10_000},
            {"workload": "walk", "thread": 0, "stat_passes": 2, "lookups": 20_000,
             "first_pass_files": 10_000}]
        rep["wall_time_s"] = w / 1e9
        data["reps"].append(rep)
    return data


@pytest.fixture(scope="module")
def sat(tmp_path_factory):
    """A copy of the last sitting before the filesystems' calibration scenarios were booted
    (2026-11-29-night), in which the XFS one was booted (three boots), the ext4 one not."""
    sitting = tmp_path_factory.mktemp("sat") / BEFORE.name
    shutil.copytree(BEFORE, sitting)
    template = json.loads((BEFORE / "real" / "xfs-create-walk-200.json").read_text())
    s = spec.load(VALIDATION / "calibrate" / "xfs-create-stat.toml", sitting)
    (sitting / "real" / "xfs-create-stat.json").write_text(
        json.dumps(_boots(s, template, CREATE_END_NS, WALK_END_NS)))
    shutil.copy(BEFORE / "real" / "xfs-create-walk-200.zoneinfo",
                sitting / "real" / "xfs-create-stat.zoneinfo")
    specs = [spec.load(p, sitting) for p in sittings.scenarios(VALIDATION)
             if sittings.role(p) == "calibration"]
    return sitting, s, calibrate.derive(specs)


def test_a_sat_filesystem_calibration_gives_its_types_two_costs(sat):
    _, _, c = sat
    # The means over the boots: 900 us a create, 225 us a cached lookup.
    assert c.fs["fs.xfs.create_cost"] == pytest.approx(900.0)
    assert c.fs["stat.xfs.hit_cost"] == pytest.approx(225.0)
    assert "xfs-create-stat" in c.scenarios and "ext4-create-stat" not in c.scenarios
    # The ext4 scenario was not sat: no ext4 table; the sections' own keys stay native times
    # the slowdown, and neither the slowdown nor any other key moved.
    assert not any(k.startswith(("fs.ext4.", "stat.ext4.")) for k in c.fs)
    want = calibrate.derive([spec.load(p, BEFORE) for p in sittings.scenarios(VALIDATION)
                             if sittings.role(p) == "calibration"])
    assert (c.slowdown, c.cost, c.devices) == (want.slowdown, want.cost, want.devices)
    assert {k: v for k, v in c.fs.items() if k.count(".") == 1} == want.fs


def test_the_model_gives_the_measured_times_back_under_the_written_profile(sat, tmp_path):
    sitting, s, c = sat
    out = tmp_path / "profiles" / "p.toml"
    calibrate.write(c, out)
    prof = profile.load(out)
    assert calibrate.profile_values(out)["fs.xfs.create_cost"] == pytest.approx(900.0, abs=0.001)
    kept = store.load(s)
    r = api.run(kept_sim_scenario(s, kept, prof), seed=1)
    # Without pressure the model's create takes create_cost and its cached lookup hit_cost:
    # its creator ends after 10,000 of them, its walker 20,000 lookups after 25 s.
    assert r.summary["fsmark"]["finished_ns"] / 10_000 / 1e3 == pytest.approx(900.0, rel=0.01)
    walk_us = (r.summary["sim_time_ns"] - 25_000_000_000) / 20_000 / 1e3
    assert walk_us == pytest.approx(225.0, rel=0.01)


def test_a_types_table_reaches_scenarios_of_that_type_only(sat, tmp_path):
    _, _, c = sat
    out = tmp_path / "profiles" / "p.toml"
    calibrate.write(c, out)
    prof = profile.load(out)
    xfs = spec.load(VALIDATION / "predict" / "xfs-create-walk-200.toml")
    ext4 = spec.load(VALIDATION / "predict" / "ext4-create-walk-200.toml")
    mx = profile.merge(xfs.document, prof, "x")
    me = profile.merge(ext4.document, prof, "e")
    assert duration_ns(mx["fs"]["create_cost"]) == 900_000
    assert duration_ns(me["fs"]["create_cost"]) == duration_ns(prof["fs"]["create_cost"])
    walk = [w for w in mx["workload"] if "stat" in w][0]["stat"]
    assert duration_ns(walk["hit_cost"]) == 225_000
    assert "xfs" not in mx["fs"] and "ext4" not in me["fs"]
    # A speed factor scales the types' tables too.
    fast = profile.scaled(prof, 2.0, tmp_path / "speed")
    assert duration_ns(fast["fs"]["xfs"]["create_cost"]) == 1_800_000
    # A table may only hold the section's keys.
    bad = tmp_path / "profiles" / "bad.toml"
    bad.write_text(out.read_text() + '\n[fs.ext4]\nags = "4"\n')
    shutil.copy(out.parent / calibrate.samples_name("p"), out.parent / calibrate.samples_name("bad"))
    with pytest.raises(ValidateError, match=r"\[fs.ext4\] ags is the scenario's"):
        profile.load(bad)


def test_a_creator_still_running_when_the_walk_starts_is_refused(sat):
    _, s, _ = sat
    reps = _boots(s, json.loads((BEFORE / "real" / "xfs-create-walk-200.json").read_text()),
                  [26_000_000_000], [40_000_000_000])["reps"]
    with pytest.raises(ValidateError, match=r"creator ran until 26.0 s, past the walker's "
                                            r"start at 25 s"):
        calibrate.fs_figures(s, reps)
