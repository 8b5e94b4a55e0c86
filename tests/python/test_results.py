"""Result directories: contents, deterministic Parquet, all-or-nothing replacement, reading back,
freshness and listing (:mod:`reclaimlab.results`), and reuse through ``api.ensure_result``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest

from reclaimlab import ENGINE_VERSION, OutputError, api, results
from reclaimlab.api import RunResult
from reclaimlab.results import RESULT_FILES, write_parquet, write_result_dir, write_text_atomic


def raw(seed: int = 1, rows: int = 50) -> dict:
    summary = {"name": "t", "scenario": "t", "seed": seed, "engine_version": "x", "headline": {"pswpout": seed}}
    return {
        "vmstat": f"nr_free_pages 12\npswpin 0\npswpout {seed}\n",
        "zoneinfo": "Node 0, zone   Normal\n  pages free     12\n",
        "buddyinfo": "Node 0, zone   Normal      1      0      2\n",
        "summary_json": json.dumps(summary, indent=2) + "\n",
        "timeseries": {
            "time_ns": [i * 100_000_000 for i in range(rows)],
            "nr_free_pages": [(i * 7919 * seed) % 1000 for i in range(rows)],
            "pgscan_kswapd": [i * i for i in range(rows)],
        },
        "counters": [("pswpin", 0), ("pswpout", seed)],
        "extra_files": {"meminfo": f"MemFree:        {seed:>8} kB\n"},
    }


def listing(d):
    return sorted(os.listdir(d))


def test_write_contents(tmp_path):
    r = RunResult(raw())
    out = r.write(tmp_path / "res" / "t")
    assert out == tmp_path / "res" / "t"
    assert listing(out) == sorted(RESULT_FILES)
    assert (out / "vmstat").read_text() == r.vmstat_text
    assert (out / "zoneinfo").read_text() == r.zoneinfo
    assert (out / "buddyinfo").read_text() == r.buddyinfo
    assert json.loads((out / "summary.json").read_text()) == r.summary
    df = pd.read_parquet(out / "timeseries.parquet")
    assert list(df.columns) == ["time_ns", "nr_free_pages", "pgscan_kswapd"]
    assert all(str(t) == "int64" for t in df.dtypes)
    pd.testing.assert_frame_equal(df, r.timeseries)
    # nothing else is left beside the result
    assert listing(tmp_path / "res") == ["t"]


def test_result_fields():
    r = RunResult(raw(seed=4))
    assert list(r.vmstat.items()) == [("nr_free_pages", 12), ("pswpin", 0), ("pswpout", 4)]
    assert r.counters == {"pswpin": 0, "pswpout": 4}
    assert r.summary["seed"] == 4 and r.seed == 4 and r.name == "t"
    assert r.headline == {"pswpout": 4}
    assert r.timeseries.columns[0] == "time_ns"
    assert r.sim_time_ns == 49 * 100_000_000  # no time in summary: last sample


def test_parquet_is_byte_identical_for_identical_data(tmp_path):
    cols = raw()["timeseries"]
    write_parquet(cols, tmp_path / "a.parquet")
    write_parquet({k: list(v) for k, v in cols.items()}, tmp_path / "b.parquet")
    assert (tmp_path / "a.parquet").read_bytes() == (tmp_path / "b.parquet").read_bytes()
    write_parquet(raw(seed=2)["timeseries"], tmp_path / "c.parquet")
    assert (tmp_path / "a.parquet").read_bytes() != (tmp_path / "c.parquet").read_bytes()


def test_whole_directory_byte_identical(tmp_path):
    RunResult(raw()).write(tmp_path / "one")
    RunResult(raw()).write(tmp_path / "two")
    a = {n: (tmp_path / "one" / n).read_bytes() for n in RESULT_FILES}
    b = {n: (tmp_path / "two" / n).read_bytes() for n in RESULT_FILES}
    assert a == b


def test_parquet_has_no_timestamps(tmp_path):
    import pyarrow.parquet as pq

    write_parquet(raw()["timeseries"], tmp_path / "a.parquet")
    meta = pq.ParquetFile(tmp_path / "a.parquet").metadata
    kv = meta.metadata or {}
    assert b"pandas" not in kv  # built from arrays, not from a DataFrame
    assert meta.row_group(0).column(0).compression == "ZSTD"


def test_empty_timeseries(tmp_path):
    r = RunResult({**raw(), "timeseries": {"time_ns": []}})
    out = r.write(tmp_path / "e")
    assert len(pd.read_parquet(out / "timeseries.parquet")) == 0


class Boom(Exception):
    pass


def test_interrupted_write_leaves_nothing(tmp_path):
    seen = []

    def fail(tmp):
        seen.append(tmp)
        assert tmp.exists() and tmp.parent == tmp_path
        raise KeyboardInterrupt

    r = RunResult(raw())
    with pytest.raises(KeyboardInterrupt):
        write_result_dir(tmp_path / "t", r.texts(), r._columns, _after_first_file=fail)
    assert seen and not seen[0].exists()
    assert listing(tmp_path) == []


def test_interrupted_write_keeps_finished_result(tmp_path):
    first = RunResult(raw(seed=1))
    first.write(tmp_path / "t")
    before = {n: (tmp_path / "t" / n).read_bytes() for n in RESULT_FILES}

    def fail(tmp):
        raise Boom

    second = RunResult(raw(seed=2))
    with pytest.raises(Boom):
        write_result_dir(tmp_path / "t", second.texts(), second._columns, _after_first_file=fail)
    assert listing(tmp_path) == ["t"]
    assert {n: (tmp_path / "t" / n).read_bytes() for n in RESULT_FILES} == before

    # and a complete write does replace it
    second.write(tmp_path / "t")
    assert json.loads((tmp_path / "t" / "summary.json").read_text())["seed"] == 2
    assert listing(tmp_path) == ["t"]


def test_parquet_failure_leaves_nothing(tmp_path, monkeypatch):
    import pyarrow.parquet as pq

    real = pq.ParquetWriter.write_table

    def disk_full_in_parquet(self, table, *a, **k):
        real(self, table, *a, **k)  # a part of the file, then the disk is full
        raise OSError("disk full")

    monkeypatch.setattr(pq.ParquetWriter, "write_table", disk_full_in_parquet)
    with pytest.raises(OSError):
        RunResult(raw()).write(tmp_path / "t")
    assert listing(tmp_path) == []


def test_refuses_foreign_directory_and_file(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "thesis.tex").write_text("x")
    with pytest.raises(OutputError):
        RunResult(raw()).write(tmp_path / "d")
    assert listing(tmp_path / "d") == ["thesis.tex"]
    (tmp_path / "f").write_text("x")
    with pytest.raises(OutputError):
        RunResult(raw()).write(tmp_path / "f")
    # an empty directory is fine
    (tmp_path / "empty").mkdir()
    RunResult(raw()).write(tmp_path / "empty")
    assert listing(tmp_path / "empty") == sorted(RESULT_FILES)


def test_write_text_atomic(tmp_path):
    write_text_atomic(tmp_path / "sub" / "report.md", "hello\n")
    write_text_atomic(tmp_path / "sub" / "report.md", "again\n")
    assert (tmp_path / "sub" / "report.md").read_text() == "again\n"
    assert listing(tmp_path / "sub") == ["report.md"]


# ---- reading, freshness, listing ----------------------------------------------------------------


def fresh_raw(seed: int = 1, scenario: str = "resolved text\n") -> dict:
    """A result that records ``scenario`` as its resolved scenario, for this engine."""
    r = raw(seed)
    summary = json.loads(r["summary_json"]) | {"scenario": scenario, "engine_version": ENGINE_VERSION}
    return r | {"summary_json": json.dumps(summary)}


def test_read_summary_needs_a_complete_readable_result(tmp_path):
    out = RunResult(fresh_raw(seed=3)).write(tmp_path / "r")
    assert results.read_summary(out)["seed"] == 3
    assert results.read_summary(tmp_path / "nowhere") is None
    (out / "summary.json").write_text("{not json")
    assert results.read_summary(out) is None
    (out / "summary.json").write_text("[1, 2]")  # JSON, but not a summary
    assert results.read_summary(out) is None
    RunResult(fresh_raw(seed=3)).write(out)
    (out / "zoneinfo").unlink()  # incomplete: a file of RESULT_FILES is missing
    assert results.read_summary(out) is None


def test_up_to_date_means_same_scenario_seed_engine_and_trace_if_asked(tmp_path, monkeypatch):
    out = RunResult(fresh_raw(seed=3)).write(tmp_path / "r")
    assert results.is_up_to_date(out, "resolved text\n", 3)
    assert results.fresh_summary(out, "resolved text\n", 3)["seed"] == 3
    assert not results.is_up_to_date(out, "resolved text\n", 4)
    assert not results.is_up_to_date(out, "other text\n", 3)
    assert not results.is_up_to_date(out, "resolved text\n", 3, need_trace=True)
    RunResult(fresh_raw(seed=3) | {"trace": "kswapd0-33 ...\n"}).write(out)
    assert results.is_up_to_date(out, "resolved text\n", 3, need_trace=True)
    monkeypatch.setattr(results.freshness, "ENGINE_VERSION", "9.9.9-next")
    assert not results.is_up_to_date(out, "resolved text\n", 3)


def test_load_run_reads_counters_summary_and_trace(tmp_path):
    out = RunResult(raw(seed=5)).write(tmp_path / "r")
    run = results.load_run(out)
    assert run.path == out and run.vmstat["pswpout"] == 5 and run.summary["seed"] == 5
    assert run.trace is None
    (out / "trace").write_text(
        "          dd-500   [000] .....     1.000000: mm_vmscan_direct_reclaim_begin: order=0\n"
        "          dd-500   [000] .....     1.000001: mm_vmscan_wakeup_kswapd: nid=0 order=0\n"
        "          dd-500   [000] .....     1.000002: mm_vmscan_writepage: pfn=1 flags=RECLAIM_WB_ANON|RECLAIM_WB_ASYNC\n"
        "     kswapd0-33    [000] .....     1.000003: mm_vmscan_kswapd_wake: nid=0 order=0\n"
        "     kswapd0-33    [000] .....     1.000004: mm_vmscan_writepage: pfn=2 flags=RECLAIM_WB_FILE|RECLAIM_WB_ASYNC\n"
    )
    run = results.load_run(out)
    assert run.trace.wake_kswapd_requests == 1
    assert dict(run.trace.writes) == {("direct", "anon", "async"): 1, ("kswapd", "file", "async"): 1}


def test_load_run_names_what_is_wrong(tmp_path):
    with pytest.raises(results.RunDirError, match="no such result directory"):
        results.load_run(tmp_path / "missing")
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "vmstat").write_text("pswpout 1\n")
    with pytest.raises(results.RunDirError, match="summary.json is missing"):
        results.load_run(tmp_path / "d")
    (tmp_path / "d" / "summary.json").write_text('"a string"')
    with pytest.raises(results.RunDirError, match="summary.json: not a JSON object"):
        results.load_run(tmp_path / "d")


def test_list_results_finds_complete_results_only(tmp_path):
    for rel in ("b", "a/x", "a/y", "a/x/inner", ".a.partial-1234/r"):
        RunResult(raw()).write(tmp_path / rel)
    RunResult(raw()).write(tmp_path / "broken")
    (tmp_path / "broken" / "vmstat").unlink()
    (tmp_path / "a" / "report.md").write_text("# not a result\n")
    # a/x/inner is inside the result a/x (results do not nest, so it is not listed); the hidden
    # directory stands for an unfinished write; "broken" is incomplete.
    found = [p.relative_to(tmp_path).as_posix() for p in results.list_results(tmp_path)]
    assert found == ["a/x", "a/y", "b"]
    assert results.list_results(tmp_path / "b") == [tmp_path / "b"]
    assert results.list_results(tmp_path / "nowhere") == []


def test_result_dir_name_is_safe():
    assert results.result_dir_name("../../etc x") == "etc_x"
    assert results.result_dir_name("kswapd-highorder-a-v2.6.36") == "kswapd-highorder-a-v2.6.36"
    # Nothing usable left: a name of its own, not one shared by every such scenario.
    assert results.result_dir_name("...").startswith("scenario-")
    assert results.result_dir_name("...") != results.result_dir_name("///")


def test_ensure_result_runs_once_then_reuses(fake_engine, tmp_path):
    scen = tmp_path / "s.toml"
    scen.write_text('name = "s"\n[sim]\nseed = 4\n')
    first = api.ensure_result(scen, tmp_path / "out")
    assert not first.reused and first.summary["seed"] == 4 and first.wall_time_s is not None
    again = api.ensure_result(scen, tmp_path / "out")
    assert again.reused and again.summary == first.summary and again.wall_time_s is None
    assert len(fake_engine.runs) == 1
    # Another seed is another result; asking for a trace the result lacks runs again.
    assert not api.ensure_result(scen, tmp_path / "out", seed=5).reused
    assert not api.ensure_result(scen, tmp_path / "out", seed=5, trace="postprocess").reused
    assert [r["seed"] for r in fake_engine.runs] == [4, 5, 5]


def test_timeseries_csv_holds_the_parquet_columns(tmp_path):
    out = RunResult(raw(seed=3)).write(tmp_path / "t")
    csv = pd.read_csv(out / "timeseries.csv")
    parquet = pd.read_parquet(out / "timeseries.parquet")
    assert list(csv.columns) == list(parquet.columns) and csv.columns[0] == "time_ns"
    assert csv.equals(parquet) and len(csv) > 0
    assert (out / "timeseries.csv").read_text().splitlines()[0].startswith("time_ns,")
