"""Issue 15's defects, each pinned by a test that failed before its fix: bounded memory of long
runs, output checked first, traces that never end, the RAM limit, trace paths recorded
absolutely, leftovers and locks, truncated zstd, non-ASCII names, the Ctrl-C message, the dict
path, and how an internal error (a panic in the engine) reaches the user."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

import reclaimlab
from reclaimlab import api, cli, results
from reclaimlab.results import PARQUET_OPTIONS, SERIES_CHUNK_ROWS

from conftest import read_tree, run_cli, tiny_dict, tiny_text

ROOT = Path(__file__).resolve().parents[2]
TRACE = ROOT / "scenarios" / "traces" / "zipf-db.oracleGeneral.zst"


def whole_table_bytes(columns: dict[str, list[int]]) -> tuple[bytes, bytes]:
    """Parquet and CSV as written before streaming: the whole table at once."""
    t = pa.table({k: pa.array(v, type=pa.int64()) for k, v in columns.items()})
    s = pa.BufferOutputStream()
    pq.write_table(t, s, **PARQUET_OPTIONS)
    c = pa.BufferOutputStream()
    pacsv.write_csv(t, c, pacsv.WriteOptions(include_header=False, quoting_style="none"))
    return s.getvalue().to_pybytes(), (",".join(columns) + "\n").encode() + c.getvalue().to_pybytes()


def long_scenario(tmp_path: Path, duration: str, interval: str = "1s", name: str = "long") -> Path:
    path = tmp_path / f"{name}.toml"
    path.write_text(textwrap.dedent(f"""\
        name = "{name}"
        [sim]
        seed = 1
        duration = "{duration}"
        sample_interval = "{interval}"
        [host]
        ram = "256MiB"
        cpus = 1
        [[workload]]
        name = "slow"
        [workload.anon]
        size = "64MiB"
        pattern = "zipf"
        passes = 1000000
        think = "100ms"
        """))
    return path


# ---- 1. the time series is not held in memory -------------------------------------------------


def test_engine_keeps_the_series_out_of_python_memory(tiny_scenario):
    raw = reclaimlab._core.run(path=str(tiny_scenario))
    ts = raw["timeseries"]
    # Not a dict of Python lists (what took gigabytes): the engine's own spooled series.
    assert isinstance(ts, reclaimlab._core.Timeseries)
    assert ts.names[0] == "time_ns" and len(ts) > 10


def test_streamed_files_are_byte_identical_to_whole_table_files(tiny_scenario, tmp_path):
    r = api.run(tiny_scenario)
    assert len(r.columns["time_ns"]) <= SERIES_CHUNK_ROWS
    r.write(tmp_path / "out")
    parquet, csv = whole_table_bytes(r.columns)
    assert (tmp_path / "out" / "timeseries.parquet").read_bytes() == parquet
    assert (tmp_path / "out" / "timeseries.csv").read_bytes() == csv


def test_a_series_longer_than_a_chunk_reads_back_exactly(tmp_path):
    # 3 hours at 100 ms: 108,001 samples, several chunks and spill files' worth.
    r = api.run(long_scenario(tmp_path, "3h", "100ms"))
    cols = r.columns
    n = len(cols["time_ns"])
    assert n == 3 * 3600 * 10 + 1 > 3 * SERIES_CHUNK_ROWS
    assert cols["time_ns"] == [i * 100_000_000 for i in range(n)]
    r.write(tmp_path / "out")
    back = pq.read_table(tmp_path / "out" / "timeseries.parquet")
    assert back.column_names == list(cols)
    assert back.to_pydict() == cols
    lines = (tmp_path / "out" / "timeseries.csv").read_text().splitlines()
    assert lines[0] == ",".join(cols) and len(lines) == n + 1
    assert lines[-1] == ",".join(str(cols[k][-1]) for k in cols)


def test_ten_days_at_one_second_stay_under_300_mb(tmp_path):
    # 864,001 samples. Before streaming, this took about 1 GB of RSS (issue 15 reported 5 GB
    # with the time series of a busier machine). The peak is measured by a fresh process whose
    # only child is the run (RUSAGE_CHILDREN is the largest child ever waited for).
    cmd = [sys.executable, "-m", "reclaimlab", "run", str(long_scenario(tmp_path, "240h")),
           "--out", str(tmp_path / "out")]
    probe = (
        "import resource, subprocess, sys\n"
        f"p = subprocess.run({cmd!r}, stdin=subprocess.DEVNULL, capture_output=True, text=True)\n"
        "sys.stderr.write(p.stderr)\n"
        "print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    p = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=600)
    rc, peak_kib = map(int, p.stdout.split())
    assert rc == 0, p.stderr
    assert peak_kib < 300 * 1024, f"peak RSS {peak_kib / 1024:.0f} MiB"
    n = pq.ParquetFile(tmp_path / "out" / "timeseries.parquet").metadata.num_rows
    assert n == 240 * 3600 + 1


# ---- 2. --out is checked before the run -------------------------------------------------------


@pytest.mark.parametrize("case", ["through-file", "is-file", "foreign-dir", "proc"])
def test_bad_out_fails_first_with_one_line(case, tiny_scenario, tmp_path, monkeypatch, capsys):
    (tmp_path / "afile").write_text("x")
    (tmp_path / "foreign").mkdir()
    (tmp_path / "foreign" / "notes.txt").write_text("mine")
    out = {
        "through-file": tmp_path / "afile" / "sub",
        "is-file": tmp_path / "afile",
        "foreign-dir": tmp_path / "foreign",
        "proc": Path("/proc/reclaimlab-out"),
    }[case]
    ran = []
    monkeypatch.setattr(api, "run", lambda *a, **k: ran.append(1))
    assert cli.main(["run", str(tiny_scenario), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert ran == [], "the simulation ran before --out was checked"
    assert err.startswith(f"error: --out {out}: ") and err.count("\n") == 1, err
    assert "give another --out" in err and "Traceback" not in err
    assert (tmp_path / "foreign" / "notes.txt").read_text() == "mine"


# ---- 3. a trace that never ends ---------------------------------------------------------------


def test_a_device_as_trace_is_refused_at_once(tmp_path):
    s = tmp_path / "zero.toml"
    s.write_text(textwrap.dedent("""\
        name = "zero"
        [host]
        ram = "256MiB"
        [[workload]]
        name = "z"
        [workload.trace]
        path = "/dev/zero"
        format = "oracle"
        """))
    p = run_cli("run", str(s), "--out", str(tmp_path / "out"), timeout=30)
    assert p.returncode == 2, p.stderr
    assert "/dev/zero: is not a regular file" in p.stderr and "Traceback" not in p.stderr
    p = run_cli("lru", "/dev/zero", "--capacity", "10", "--format", "oracle", timeout=30)
    assert p.returncode == 2 and "not a regular file" in p.stderr, p.stderr


# ---- 4. one RAM limit, at parse time -----------------------------------------------------------


def test_ram_above_the_limit_is_a_parse_error(tmp_path):
    s = tmp_path / "big.toml"
    s.write_text('name = "big"\n[host]\nram = "2TiB"\n')
    p = run_cli("run", str(s), "--out", str(tmp_path / "out"))
    assert p.returncode == 2
    assert p.stderr.startswith(f"{s}:3:7: error: in field `host.ram`: must be between 64MiB and 1TiB")
    assert not (tmp_path / "out").exists()


# ---- 5. trace paths recorded absolutely --------------------------------------------------------


def test_trace_paths_do_not_depend_on_the_current_directory(tmp_path):
    scenario = ROOT / "scenarios" / "trace-replay.toml"
    a = run_cli("run", str(scenario), "--show-defaults", cwd=ROOT)
    b = run_cli("run", str(scenario), "--show-defaults", cwd=tmp_path)
    c = run_cli("run", os.path.relpath(scenario, ROOT / "python"), "--show-defaults", cwd=ROOT / "python")
    assert a.returncode == b.returncode == c.returncode == 0
    assert a.stdout == b.stdout == c.stdout
    assert f'path = "{TRACE}"' in a.stdout


# ---- 6. leftovers and two writers -------------------------------------------------------------


def test_leftovers_of_killed_writers_are_removed(tmp_path):
    out = tmp_path / "res"
    for junk in (".res.partial-dead1234", ".res.old-dead5678"):
        (tmp_path / junk).mkdir()
        (tmp_path / junk / "vmstat").write_text("x")
    r = api.run(tiny_dict())
    r.write(out)
    assert sorted(os.listdir(tmp_path)) == ["res"]


def test_a_second_writer_gets_a_clear_error(tiny_scenario, tmp_path):
    out = tmp_path / "res"
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time; from reclaimlab.results import output_lock\n"
         f"with output_lock({str(out)!r}, 'the test holder'):\n"
         "    print('held', flush=True); time.sleep(60)"],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        p = run_cli("run", str(tiny_scenario), "--out", str(out))
        assert p.returncode == 1
        assert p.stderr.strip() == (
            f"error: {out} is being written by the test holder (pid {holder.pid} on "
            f"{socket.gethostname()}); wait for it "
            "to finish, or give this run another --out"
        )
        assert not out.exists()
    finally:
        holder.kill()
        holder.wait()
    # The kernel dropped the lock with the holder: the next run goes through.
    p = run_cli("run", str(tiny_scenario), "--out", str(out))
    assert p.returncode == 0, p.stderr
    assert sorted(os.listdir(tmp_path)) == ["res", "tiny-swap.toml"]


# ---- 7. truncated zstd -------------------------------------------------------------------------


def test_truncated_zstd_names_the_byte_and_prints_no_debug_text(tmp_path):
    cut = 300_000
    t = tmp_path / "cut.oracleGeneral.zst"
    t.write_bytes(TRACE.read_bytes()[:cut])
    p = run_cli("lru", str(t), "--capacity", "100")
    assert p.returncode == 2
    assert p.stderr.strip() == (
        f"error: {t}: cannot read the trace: zstd: the compressed data stops at byte {cut} of the "
        "file, in the middle of a block: the file is truncated (an interrupted download or copy, "
        "or a file still being written)"
    )


# ---- 8. non-ASCII scenario names ---------------------------------------------------------------


def test_non_ascii_names_keep_their_own_directories(tmp_path):
    names = ["überlauf", "回收", "сжатие", "...", "///"]
    dirs = [results.result_dir_name(n) for n in names]
    assert dirs[:3] == names[:3]
    assert len(set(dirs)) == len(dirs)
    assert all(d.startswith("scenario-") for d in dirs[3:])
    for n in names[:2]:
        s = tmp_path / f"{len(n)}.toml"
        s.write_text(tiny_text(name=n))
        assert run_cli("run", str(s), cwd=tmp_path).returncode == 0
    assert sorted(os.listdir(tmp_path / "results")) == sorted(names[:2])


# ---- 9. the Ctrl-C message ---------------------------------------------------------------------


def test_interrupt_claims_only_what_exists(tiny_scenario, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(api, "run", interrupted)
    assert cli.main(["run", str(tiny_scenario)]) == 130
    err = capsys.readouterr().err
    assert err.strip() == "interrupted; nothing was written to results/tiny-swap"
    assert not (tmp_path / "results" / "tiny-swap").exists()


# ---- 10. the dict path and scenario paths -----------------------------------------------------


def test_none_in_a_dict_names_the_key():
    d = tiny_dict()
    d["swap"]["size"] = None
    with pytest.raises(api.ScenarioError) as e:
        api.run(d)
    assert str(e.value) == (
        "<dict>: error: in field `swap.size`: is None, and a scenario has no null value\n"
        "  help: leave the key out to get its default, or give it a value"
    )


@pytest.mark.parametrize("key,value,message", [
    ("cpus", "4", 'expected an integer, found the string "4"'),
    ("ram", "512", 'the size "512" has no unit'),
])
def test_quoted_numbers_are_refused(key, value, message):
    d = tiny_dict()
    d["host"][key] = value
    with pytest.raises(api.ScenarioError, match=message):
        api.validate(d)


def test_a_directory_as_scenario_says_so(tmp_path, capsys):
    assert cli.main(["run", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"error: {tmp_path}: is a directory, not a scenario file (give a .toml file)"
    )


# ---- panics ------------------------------------------------------------------------------------


def test_an_engine_panic_is_one_line_exit_70_and_a_log(tiny_scenario, tmp_path):
    out = tmp_path / "res"
    assert run_cli("run", str(tiny_scenario), "--out", str(out)).returncode == 0
    before = read_tree(out)
    env = {**os.environ, "RECLAIMLAB_TEST_PANIC": "1"}
    env.pop("RUST_BACKTRACE", None)
    p = subprocess.run(
        [sys.executable, "-m", "reclaimlab", "run", str(tiny_scenario), "--out", str(out),
         "--seed", "9"], env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL,
    )
    assert p.returncode == 70
    log = out / results.INTERNAL_ERROR_LOG
    assert p.stderr.count("\n") == 1, p.stderr
    assert p.stderr.startswith("internal error: deliberate panic for testing")
    assert p.stderr.strip().endswith(f"this is a bug in reclaimlab; please report it with {log}")
    assert "Traceback" not in p.stderr and "panicked" not in p.stderr
    text = log.read_text()
    assert "backtrace:" in text and "lib.rs" in text and "--seed 9" in text
    # The earlier finished result is intact; the next run replaces it (and the log) as usual.
    assert {n: b for n, b in read_tree(out).items() if n != log.name} == before
    assert run_cli("run", str(tiny_scenario), "--out", str(out)).returncode == 0
    assert not log.exists()
    assert json.loads((out / "summary.json").read_text())["seed"] == 1
