"""Python API plumbing on a fake engine (no simulation)."""

from __future__ import annotations

import tomllib

import pytest

import reclaimlab
from reclaimlab import api


def test_dict_becomes_toml(fake_engine):
    scenario = {"name": "d", "sim": {"seed": 5}, "workload": [{"name": "w", "anon": {"size": "1MiB"}}]}
    src = api.scenario_source(scenario)
    assert src.path is None and src.name == "<dict>"
    assert tomllib.loads(src.text) == scenario


def test_run_dict_with_fake(fake_engine, tmp_path):
    r = reclaimlab.run({"name": "d", "sim": {"seed": 5}}, out=tmp_path / "o")
    assert fake_engine.runs == [{"name": "d", "seed": 5, "invariants": "off"}]
    assert r.out == tmp_path / "o" and (tmp_path / "o" / "summary.json").exists()
    assert list(r.timeseries.columns) == ["time_ns", "nr_free_pages"]
    assert r.vmstat["pswpout"] == 100


def test_run_path_seed_invariants(fake_engine, tmp_path):
    p = tmp_path / "s.toml"
    p.write_text('name = "p"\n')
    reclaimlab.run(p, seed=3, invariants="every")
    reclaimlab.run(str(p), invariants=10)
    assert fake_engine.runs == [
        {"name": "p", "seed": 3, "invariants": "every"},
        {"name": "p", "seed": 1, "invariants": 10},
    ]


def test_progress_callable_is_passed(fake_engine):
    calls = []
    reclaimlab.run({"name": "d"}, progress=lambda now, end: calls.append((now, end)))
    assert calls == [(500, 1000)]


def test_missing_path():
    with pytest.raises(reclaimlab.ScenarioNotFound, match="nope.toml: no such file"):
        reclaimlab.run("nope.toml")
    with pytest.raises(FileNotFoundError):
        reclaimlab.show_defaults("nope.toml")


def test_bad_scenario_type():
    with pytest.raises(TypeError):
        reclaimlab.run(42)


def test_show_defaults_fake(fake_engine):
    assert reclaimlab.show_defaults({"name": "z"}) == 'name = "z"\n'


def test_parse_vmstat():
    assert api.parse_vmstat("a 1\nb -2\n\nbad line here\nc 3\n") == {"a": 1, "b": -2, "c": 3}
