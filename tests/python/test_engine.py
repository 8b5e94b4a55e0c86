"""End-to-end tests on the real Rust engine, with scenarios small enough to run in well under a
second each (release build)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import tomllib

import pandas as pd
import pytest

import reclaimlab
from conftest import read_tree, tiny_dict, tiny_text
from reclaimlab.results import PRESSURE_FILE, RESULT_FILES

# A real run's directory: the result files and /proc/pressure/memory's directory.
RUN_ENTRIES = sorted([*RESULT_FILES, PRESSURE_FILE.split("/")[0]])

BAD_SCENARIO = """\
name = "bad"

[host]
colour = "blue"
ram = "256MiB"
"""


def test_malformed_scenario_cli(cli, tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(BAD_SCENARIO)
    r = cli("run", str(path), cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert "bad.toml:4:" in r.stderr
    assert "colour" in r.stderr
    assert "error" in r.stderr
    assert "Traceback" not in r.stderr and "Traceback" not in r.stdout
    assert not (tmp_path / "results").exists()


def test_malformed_scenario_show_defaults(cli, tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(BAD_SCENARIO)
    r = cli("run", str(path), "--show-defaults", cwd=tmp_path)
    assert r.returncode == 2
    assert "bad.toml:4:" in r.stderr and "Traceback" not in r.stderr


def test_malformed_dict_raises_scenario_error():
    scenario = tiny_dict()
    scenario["host"]["colour"] = "blue"
    with pytest.raises(reclaimlab.ScenarioError) as e:
        reclaimlab.run(scenario)
    msg = str(e.value)
    assert msg.startswith("<dict>:") and "colour" in msg


def test_parse_accepts_tiny(tiny_scenario):
    reclaimlab.api.validate(tiny_scenario)
    info = reclaimlab.api.scenario_info(tiny_scenario)
    assert info["name"] == "tiny-swap" and info["seed"] == 1 and info["workloads"] == ["hog"]


def test_show_defaults_round_trips(cli, tmp_path, tiny_scenario):
    first = cli("run", str(tiny_scenario), "--show-defaults", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    full = tomllib.loads(first.stdout)  # valid TOML
    assert full["name"] == "tiny-swap" and full["sim"]["seed"] == 1
    again_path = tmp_path / "full.toml"
    again_path.write_text(first.stdout)
    second = cli("run", str(again_path), "--show-defaults", cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert second.stdout == first.stdout
    assert not (tmp_path / "results").exists()


def test_show_defaults_api_matches_cli(cli, tmp_path, tiny_scenario):
    r = cli("run", str(tiny_scenario), "--show-defaults", cwd=tmp_path)
    assert reclaimlab.show_defaults(tiny_scenario) == r.stdout


def test_run_cli_deterministic(cli, tmp_path, tiny_scenario):
    outs = {}
    for label, seed in (("a", "5"), ("b", "5"), ("c", "6")):
        r = cli("run", str(tiny_scenario), "--seed", seed, "--out", f"out-{label}", cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        d = tmp_path / f"out-{label}"
        assert sorted(os.listdir(d)) == RUN_ENTRIES
        outs[label] = read_tree(d)
    assert outs["a"] == outs["b"]  # all five files byte-identical
    assert any(outs["a"][n] != outs["c"][n] for n in RESULT_FILES)
    assert json.loads(outs["c"]["summary.json"])["seed"] == 6


def test_run_cli_default_out_and_table(cli, tmp_path, tiny_scenario):
    r = cli("run", str(tiny_scenario), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out_dir = tmp_path / "results" / "tiny-swap"
    summary = json.loads((out_dir / "summary.json").read_text())
    assert summary["name"] == "tiny-swap"
    assert summary["seed"] == 1
    assert summary["engine_version"] == reclaimlab.ENGINE_VERSION
    headline = summary["headline"]
    assert headline, "summary.json has an empty headline"
    # the table prints every headline key, in order
    labels = [line.split("  ")[0].strip() for line in r.stdout.splitlines()]
    assert [k for k in labels if k in headline] == list(headline)
    assert labels[:4] == ["scenario", "seed", "simulated time", "wall time"]
    assert r.stderr == ""  # not a TTY: no progress bar


def test_run_dict_api(tmp_path):
    r = reclaimlab.run(tiny_dict(), out=tmp_path / "o")
    assert isinstance(r.timeseries, pd.DataFrame)
    assert r.timeseries.columns[0] == "time_ns"
    assert len(r.timeseries) > 1 and r.timeseries["time_ns"].is_monotonic_increasing
    assert "pswpout" in r.vmstat
    assert r.vmstat["pswpout"] > 0  # 384 MiB on a 256 MiB host with swap must swap out
    # the event counters are part of /proc/vmstat, in its order, with the same values
    assert [k for k in r.vmstat if k in r.counters] == list(r.counters)
    assert all(r.vmstat[k] == v for k, v in r.counters.items())
    assert r.summary["name"] == "tiny-dict"
    assert r.summary["scenario"].startswith("# reclaimlab scenario")
    assert sorted(os.listdir(tmp_path / "o")) == RUN_ENTRIES
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "o" / "timeseries.parquet"), r.timeseries)


def test_dict_and_file_agree(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(tiny_text(name="same"))
    a = reclaimlab.run(path, seed=3)
    b = reclaimlab.run(tiny_dict(name="same"), seed=3)
    assert a.vmstat_text == b.vmstat_text and a.summary_json == b.summary_json
    pd.testing.assert_frame_equal(a.timeseries, b.timeseries)


def test_invariant_checking_does_not_change_results(tiny_scenario):
    off = reclaimlab.run(tiny_scenario)
    checked = reclaimlab.run(tiny_scenario, invariants=1000)
    assert off.vmstat_text == checked.vmstat_text
    assert off.summary_json == checked.summary_json


def test_bad_invariants_argument(tiny_scenario):
    with pytest.raises(ValueError):
        reclaimlab.run(tiny_scenario, invariants="sometimes")
    with pytest.raises(ValueError):
        reclaimlab.run(tiny_scenario, invariants=0)


def test_progress_callback_can_stop(tiny_scenario):
    calls = []

    def stop(now_ns, end_ns):
        calls.append((now_ns, end_ns))
        return False

    try:
        reclaimlab.run(tiny_scenario, progress=stop)
    except reclaimlab.SimulationError as e:
        assert "progress callback" in str(e)
        assert len(calls) == 1 and 0 <= calls[0][0] <= calls[0][1]
    else:
        pytest.fail("the run went on after the progress callback returned False")


def test_progress_callback_exception_propagates(tiny_scenario):
    class Stop(Exception):
        pass

    def boom(now_ns, end_ns):
        raise Stop

    # The engine calls progress before its first event, so the exception always surfaces.
    with pytest.raises(Stop):
        reclaimlab.run(tiny_scenario, progress=boom)


def test_examples_resume_real(cli, tmp_path):
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "tiny.toml").write_text(tiny_text(name="tiny-ex"))
    first = cli("examples", "--out", "res", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    summary = tmp_path / "res" / "tiny-ex" / "summary.json"
    mtime = summary.stat().st_mtime_ns
    report = (tmp_path / "res" / "report.md").read_text()
    assert "| tiny-ex" in report
    second = cli("examples", "--out", "res", cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert "up to date" in second.stdout
    assert summary.stat().st_mtime_ns == mtime
    assert (tmp_path / "res" / "report.md").read_text() == report


# A scenario that takes a while, to interrupt.
LONG_SCENARIO = """\
name = "long"

[host]
ram = "4GiB"

[swap]
size = "4GiB"

[[workload]]
name = "hog"

[workload.anon]
size = "6GiB"
pattern = "random"
passes = 200
"""


def test_ctrl_c_exits_130_and_writes_nothing(tmp_path):
    (tmp_path / "long.toml").write_text(LONG_SCENARIO)
    # Restore Python's SIGINT handler in case this test runs with SIGINT ignored.
    # The marker file says the imports are done, so the signal lands in the run itself however
    # slow the machine is (CI's shared machines have taken over 1.5 s to import).
    code = (
        "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler);"
        "from reclaimlab.cli import main; open('imported', 'w').close();"
        "sys.exit(main(sys.argv[1:]))"
    )
    env = {k: v for k, v in os.environ.items() if k != "RUST_BACKTRACE"}
    p = subprocess.Popen(
        [sys.executable, "-c", code, "run", "long.toml"],
        cwd=tmp_path, env=env, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    deadline = time.monotonic() + 60
    while not (tmp_path / "imported").exists():
        assert p.poll() is None, f"the run ended before it started: {p.communicate()}"
        assert time.monotonic() < deadline, "importing reclaimlab.cli took over 60 s"
        time.sleep(0.05)
    time.sleep(1.0)  # a little simulation
    # The scenario simulates hours; finishing within a second would be a failure in itself.
    assert p.poll() is None, f"the long run ended early: {p.communicate()}"
    started = time.monotonic()
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=30)
    assert time.monotonic() - started < 5, "Ctrl-C took too long to stop the run"
    assert p.returncode == 130, err
    # Nothing was finished, and the message does not claim otherwise (issue 15).
    assert "interrupted; nothing was written to results/long" in err
    assert "Traceback" not in err
    assert not (tmp_path / "results").exists() or os.listdir(tmp_path / "results") == []


def test_the_command_loads_no_heavy_library_before_it_needs_one():
    # scipy.stats and pandas each take about a second to import; a command that does not use
    # them (run, compare's table, --help) must not pay it, and Ctrl-C during an import would
    # end in Python's traceback rather than the CLI's message.
    code = "import sys, reclaimlab.cli; print(sorted(m for m in ('scipy', 'pandas', 'matplotlib', 'plotly') if m in sys.modules))"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "[]", r.stdout


def test_run_writes_a_kernel_format_trace(cli, tmp_path, tiny_scenario):
    r = cli("run", str(tiny_scenario), "--trace", "kernel", "--out", "o", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    trace = (tmp_path / "o" / "trace").read_text()
    assert trace.startswith("# tracer: nop\n")
    vm = dict(
        line.split() for line in (tmp_path / "o" / "vmstat").read_text().splitlines()
    )
    # Every balance_pgdat run is preceded by exactly one kswapd_wake event.
    assert trace.count(": mm_vmscan_kswapd_wake: ") == int(vm["pageoutrun"])
    assert int(vm["pageoutrun"]) > 0
    shrunk = sum(
        int(l.split("nr_reclaimed=")[1].split()[0])
        for l in trace.splitlines()
        if ": mm_vmscan_lru_shrink_inactive: " in l
    )
    assert shrunk == int(vm["pgsteal_kswapd"]) + int(vm["pgsteal_direct"])
