"""The CLI's flow (run, show-defaults, errors, examples and its resume) on a fake engine."""

from __future__ import annotations

import json
import os


from reclaimlab import _core, cli
from reclaimlab.results import RESULT_FILES


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_run_writes_results_and_prints_table(fake_engine, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "s.toml", 'name = "alpha"\n[sim]\nseed = 3\n')
    assert cli.main(["run", "s.toml"]) == 0
    out = capsys.readouterr().out
    assert sorted(os.listdir(tmp_path / "results" / "alpha")) == sorted(RESULT_FILES)
    assert "alpha" in out and "pswpin" in out and "pswpout" in out and "oom_kill" in out
    # headline keys in the order the summary gives them
    assert out.index("pswpin") < out.index("pswpout") < out.index("oom_kill")
    assert "wall time" in out and "simulated time" in out
    assert fake_engine.runs == [{"name": "alpha", "seed": 3, "invariants": "off"}]


def test_run_seed_out_invariants(fake_engine, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "s.toml", 'name = "alpha"\n')
    assert cli.main(["run", "s.toml", "--seed", "9", "--out", "o/x", "--check-invariants", "50"]) == 0
    assert fake_engine.runs[-1] == {"name": "alpha", "seed": 9, "invariants": 50}
    summary = json.loads((tmp_path / "o" / "x" / "summary.json").read_text())
    assert summary["seed"] == 9


def test_unsafe_scenario_name_gives_safe_dir(fake_engine, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "s.toml", 'name = "../../etc x"\n')
    assert cli.main(["run", "s.toml"]) == 0
    assert [p.name for p in (tmp_path / "results").iterdir()] == ["etc_x"]


def test_show_defaults_prints_and_runs_nothing(fake_engine, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "s.toml", 'name = "alpha"\n')
    assert cli.main(["run", "s.toml", "--show-defaults"]) == 0
    assert capsys.readouterr().out == 'name = "alpha"\n'
    assert fake_engine.runs == []
    assert not (tmp_path / "results").exists()


def test_scenario_error_exit_2(fake_engine, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "s.toml", "bogus = 1\n")
    assert cli.main(["run", "s.toml"]) == 2
    err = capsys.readouterr().err
    assert "s.toml:1:1: error: in field `bogus`" in err


def test_simulation_error_exit_1(fake_engine, tmp_path, monkeypatch, capsys):
    def boom(**kw):
        raise _core.SimulationError("invariant violated: free + used != total")

    monkeypatch.setattr(_core, "run", boom)
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "s.toml", 'name = "alpha"\n')
    assert cli.main(["run", "s.toml"]) == 1
    assert "error: invariant violated" in capsys.readouterr().err
    assert not (tmp_path / "results").exists()


def test_keyboard_interrupt_exit_130_keeps_finished(fake_engine, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "s.toml", 'name = "alpha"\n')
    assert cli.main(["run", "s.toml"]) == 0
    before = (tmp_path / "results" / "alpha" / "summary.json").read_bytes()

    def interrupted(**kw):
        raise KeyboardInterrupt

    monkeypatch.setattr(_core, "run", interrupted)
    capsys.readouterr()
    assert cli.main(["run", "s.toml", "--seed", "5"]) == 130
    err = capsys.readouterr().err
    assert "interrupted; results/alpha still holds the previous finished result" in err
    assert (tmp_path / "results" / "alpha" / "summary.json").read_bytes() == before
    assert os.listdir(tmp_path / "results") == ["alpha"]


def test_refuses_to_replace_foreign_directory(fake_engine, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "s.toml", 'name = "alpha"\n')
    write(tmp_path / "precious" / "notes.txt", "keep me")
    # Refused before the run (issue 15: --out is checked first), as bad input.
    assert cli.main(["run", "s.toml", "--out", "precious"]) == 2
    assert "refusing to replace it" in capsys.readouterr().err
    assert fake_engine.runs == []
    assert (tmp_path / "precious" / "notes.txt").read_text() == "keep me"


# ---- examples -------------------------------------------------------------------------------


def make_examples(tmp_path):
    write(tmp_path / "scenarios" / "b-second.toml", 'name = "second"\n[sim]\nseed = 2\n')
    write(tmp_path / "scenarios" / "a-first.toml", 'name = "first"\n[sim]\nseed = 1\n')
    write(tmp_path / "scenarios" / "notes.txt", "not a scenario")


def test_examples_runs_all_and_writes_report(fake_engine, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    make_examples(tmp_path)
    assert cli.main(["examples", "--out", "res"]) == 0
    assert [r["name"] for r in fake_engine.runs] == ["first", "second"]  # sorted by file name
    for name in ("first", "second"):
        assert sorted(os.listdir(tmp_path / "res" / name)) == sorted(RESULT_FILES)
    report = (tmp_path / "res" / "report.md").read_text()
    table = [line for line in report.splitlines() if line.startswith("|")]
    assert len(table) == 4  # header, separator, two rows
    header = [c.strip() for c in table[0].strip("|").split("|")]
    assert header[:2] == ["scenario", "seed"]
    assert header[-3:] == ["pswpin", "pswpout", "oom_kill"]
    first = [c.strip() for c in table[2].strip("|").split("|")]
    assert first[0] == "first" and first[-3:] == ["10", "20", "0"]


def test_examples_resume_skips_up_to_date(fake_engine, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    make_examples(tmp_path)
    assert cli.main(["examples", "--out", "res"]) == 0
    mtime = (tmp_path / "res" / "first" / "summary.json").stat().st_mtime_ns
    report1 = (tmp_path / "res" / "report.md").read_text()
    capsys.readouterr()

    assert cli.main(["examples", "--out", "res"]) == 0
    out = capsys.readouterr().out
    assert len(fake_engine.runs) == 2  # nothing re-run
    assert out.count("up to date") == 2
    assert (tmp_path / "res" / "first" / "summary.json").stat().st_mtime_ns == mtime
    assert (tmp_path / "res" / "report.md").read_text() == report1

    # A changed seed, or a different engine version, makes a result stale.
    write(tmp_path / "scenarios" / "a-first.toml", 'name = "first"\n[sim]\nseed = 7\n')
    summary = tmp_path / "res" / "second" / "summary.json"
    data = json.loads(summary.read_text())
    data["engine_version"] = "0.0.0-old"
    summary.write_text(json.dumps(data))
    assert cli.main(["examples", "--out", "res"]) == 0
    assert [r["name"] for r in fake_engine.runs[2:]] == ["first", "second"]


def test_examples_continues_after_a_bad_scenario(fake_engine, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    make_examples(tmp_path)
    write(tmp_path / "scenarios" / "0-bad.toml", "bogus = 1\n")
    assert cli.main(["examples", "--out", "res"]) == 2
    captured = capsys.readouterr()
    assert "error: in field `bogus`" in captured.err
    assert [r["name"] for r in fake_engine.runs] == ["first", "second"]
    report = (tmp_path / "res" / "report.md").read_text()
    assert "## Failed" in report and "0-bad.toml" in report


def test_examples_interrupt(fake_engine, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    make_examples(tmp_path)
    real_run = fake_engine.run

    def run_then_interrupt(**kw):
        if fake_engine.runs:
            raise KeyboardInterrupt
        return real_run(**kw)

    monkeypatch.setattr(_core, "run", run_then_interrupt)
    assert cli.main(["examples", "--out", "res"]) == 130
    assert "interrupted; finished results kept in res" in capsys.readouterr().err
    # The finished run is in the store (hidden) and under its name; nothing of the second.
    assert sorted(p.name for p in (tmp_path / "res").iterdir()) == [".store", "first"]
    assert len(list((tmp_path / "res" / ".store" / "runs").glob("*/[!.]*"))) == 1


def test_examples_reruns_incomplete_result(fake_engine, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    make_examples(tmp_path)
    assert cli.main(["examples", "--out", "res"]) == 0
    (tmp_path / "res" / "second" / "timeseries.parquet").unlink()
    assert cli.main(["examples", "--out", "res"]) == 0
    assert [r["name"] for r in fake_engine.runs] == ["first", "second", "second"]
    assert (tmp_path / "res" / "second" / "timeseries.parquet").exists()
