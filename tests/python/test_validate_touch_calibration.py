"""The cost of touching a page in memory from its calibration scenario (docs/VALIDATION.md,
"Protocol"; validate/calibrate.py, `solve_anon_touch`): `anon_touch` is the value at which the
model makes the boots' count of accesses in `validation/calibrate/anon-touch`."""

from __future__ import annotations

import copy
import json
import shutil

import pytest

from reclaimlab.validate import calibrate, sittings, spec, store
from reclaimlab.validate.errors import ValidateError

from test_validate_protocol import SECOND as BEFORE, VALIDATION


def _sat(root, accesses: list[int]):
    """A copy of the last sitting before the touch scenario was booted (2026-11-29-night), in
    which it was booted, its application making ``accesses`` in each boot."""
    sitting = root / BEFORE.name
    shutil.copytree(BEFORE, sitting)
    s = spec.load(VALIDATION / "calibrate" / "anon-touch.toml", sitting)
    data = json.loads((BEFORE / "real" / "anon-random.json").read_text())
    data.update(scenario=s.name, scenario_file=s.path.name, scenario_sha256=s.content_hash)
    rep0 = data["reps"][0]
    data["reps"] = []
    for n in accesses:
        rep = copy.deepcopy(rep0)
        rep["workloads"] = [{"name": "app", "end_ns": 20_000_000_000, "exit": 0,
                             "killed_by_signal": 0}]
        rep["anon_threads"] = [{"workload": "app", "thread": 0, "accesses": n}]
        rep["wall_time_s"] = 20.0
        data["reps"].append(rep)
    (sitting / "real" / "anon-touch.json").write_text(json.dumps(data))
    shutil.copy(BEFORE / "real" / "anon-random.zoneinfo", sitting / "real" / "anon-touch.zoneinfo")
    specs = [spec.load(p, sitting) for p in sittings.scenarios(VALIDATION)
             if sittings.role(p) == "calibration"]
    return s, specs


@pytest.fixture(scope="module")
def derived(tmp_path_factory):
    # 1.6 M accesses in 20 s: about 12.5 us an access, 5 of them spun.
    s, specs = _sat(tmp_path_factory.mktemp("touch"), [1_550_000, 1_600_000, 1_650_000])
    return s, specs, calibrate.derive(specs)


def test_anon_touch_is_where_the_model_makes_the_boots_accesses(derived):
    s, _, c = derived
    kept = store.load(s)
    t = c.cost["anon_touch"]
    # A touch far dearer than the native 0.02 us times the slowdown: the guest's 12.5 us an
    # access, less the spin.
    assert 5.0 < t < 9.0
    got = calibrate._touch_accesses(s, kept, c, t)
    assert got == pytest.approx(1_600_000, rel=0.001)
    # And it is the crossing: a nanosecond either side makes more, then fewer.
    assert calibrate._touch_accesses(s, kept, c, t - 0.01) >= got
    assert calibrate._touch_accesses(s, kept, c, t + 0.01) <= got
    assert "anon-touch" in c.scenarios
    assert c.sources["anon_touch"].startswith("anon-touch: the value at which the model makes")


def test_nothing_else_moves_when_the_touch_scenario_arrives(derived):
    _, _, c = derived
    want = calibrate.derive([spec.load(p, BEFORE) for p in sittings.scenarios(VALIDATION)
                             if sittings.role(p) == "calibration"])
    assert c.slowdown == want.slowdown and c.devices == want.devices and c.fs == want.fs
    assert {k: v for k, v in c.cost.items() if k != "anon_touch"} == {
        k: v for k, v in want.cost.items() if k != "anon_touch"}
    # Without the scenario's boots the key is the rule's for unmeasured keys.
    assert want.cost["anon_touch"] == pytest.approx(0.02 * want.slowdown)


def test_boots_faster_than_the_model_can_go_are_refused(tmp_path):
    # 10 M accesses in 20 s: 2 us each, less than the 5 us spin.
    _, specs = _sat(tmp_path, [10_000_000])
    with pytest.raises(ValidateError, match="even with touches free"):
        calibrate.derive(specs)
