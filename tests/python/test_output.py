"""Result directories: contents, deterministic Parquet, and all-or-nothing replacement."""

from __future__ import annotations

import json
import os

import pandas as pd
import pytest

from reclaimlab import OutputError
from reclaimlab.api import RunResult
from reclaimlab.output import RESULT_FILES, write_parquet, write_result_dir, write_text_atomic


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
    import reclaimlab.output as output

    def bad_parquet(columns, path):
        open(path, "wb").write(b"PAR1 half")
        raise OSError("disk full")

    monkeypatch.setattr(output, "write_parquet", bad_parquet)
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
