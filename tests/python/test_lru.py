"""``reclaimlab lru`` against libCacheSim, and trace errors through the CLI and the API.

libCacheSim (PyPI ``libcachesim``, a test dependency) reads the same oracleGeneral files with its
own compiled ``TraceReader`` (``ignore_obj_size``, so capacity counts objects) and serves them with
its ``LRU``, ``FIFO`` and ``Clock``; reclaimlab must report exactly the same requests and misses.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import libcachesim as lcs
import numpy as np
import pytest

import reclaimlab
from reclaimlab import _core

REPO = Path(__file__).resolve().parents[2]
EXAMPLE_TRACE = REPO / "scenarios" / "traces" / "zipf-db.oracleGeneral.zst"

ORACLE = np.dtype([("time", "<u4"), ("obj_id", "<u8"), ("obj_size", "<u4"), ("next", "<i8")])
LIBCACHESIM = {"lru": lcs.LRU, "fifo": lcs.FIFO, "clock": lcs.Clock}
CAPACITIES = (1, 7, 100, 1000, 4000)


def write_oracle(path: Path, ids, sizes=4096) -> Path:
    rec = np.zeros(len(ids), dtype=ORACLE)
    rec["time"] = np.arange(len(ids)) // 100
    rec["obj_id"] = ids
    rec["obj_size"] = sizes
    rec["next"] = -1
    rec.tofile(path)
    return path


def zipf_ids(rng, objects: int, requests: int, alpha: float) -> np.ndarray:
    cdf = np.cumsum(np.arange(1, objects + 1, dtype=np.float64) ** -alpha)
    cdf /= cdf[-1]
    perm = rng.permutation(objects).astype(np.uint64) + 1
    return perm[np.minimum(np.searchsorted(cdf, rng.random(requests), side="right"), objects - 1)]


def make_traces(directory: Path) -> dict[str, Path]:
    rng = np.random.default_rng(2024)
    # Zipf(1.0) over 5000 objects.
    zipf = write_oracle(directory / "zipf.oracleGeneral", zipf_ids(rng, 5000, 40_000, 1.0))
    # A loop over 1500 objects, 20 times: larger than the 1000-object cache, smaller than 4000.
    loop = write_oracle(directory / "loop.oracleGeneral", np.tile(np.arange(1, 1501, dtype=np.uint64), 20))
    # A mix: a Zipf hot set, a sequential scan and uniform noise, interleaved, with object sizes
    # from 0 (skipped by both readers) to 12 KiB (ignored: every object counts as one).
    n = 40_000
    hot = zipf_ids(rng, 800, n, 0.8)
    scan = (np.arange(n, dtype=np.uint64) % 6000) + 100_000
    noise = rng.integers(200_000, 230_000, n, dtype=np.uint64)
    pick = rng.integers(0, 10, n)
    ids = np.where(pick < 5, hot, np.where(pick < 8, scan, noise))
    sizes = rng.integers(0, 4, n) * 4096
    mix = write_oracle(directory / "mix.oracleGeneral", ids, sizes)
    return {"zipf": zipf, "loop": loop, "mix": mix}


@pytest.fixture(scope="module")
def traces(tmp_path_factory) -> dict[str, Path]:
    return make_traces(tmp_path_factory.mktemp("traces"))


def libcachesim_counts(path: Path, policy: str, capacity: int) -> tuple[int, int]:
    """(requests, misses) of libCacheSim's compiled cache over its compiled trace reader."""
    reader = lcs.TraceReader(
        str(path), lcs.TraceType.ORACLE_GENERAL_TRACE, lcs.ReaderInitParam(ignore_obj_size=True)
    )
    cache = LIBCACHESIM[policy](capacity)
    requests = misses = 0
    for req in reader:
        requests += 1
        misses += not cache.get(req)
    return requests, misses


@pytest.mark.parametrize("policy", ["lru", "fifo", "clock"])
@pytest.mark.parametrize("trace", ["zipf", "loop", "mix"])
def test_same_misses_as_libcachesim(traces, trace, policy):
    path = traces[trace]
    for capacity in CAPACITIES:
        want = libcachesim_counts(path, policy, capacity)
        got = reclaimlab.lru(path, capacity, policy)
        assert (got["requests"], got["misses"]) == want, f"{trace} {policy} capacity {capacity}"
        assert got["miss_ratio"] == pytest.approx(want[1] / want[0], abs=0, rel=1e-12)
        assert got["policy"] == policy and got["capacity"] == capacity
        assert got["seconds"] >= 0


def test_known_values(traces):
    # The loop misses every request when it does not fit, and only its first round when it does.
    for policy in ("lru", "fifo", "clock"):
        assert reclaimlab.lru(traces["loop"], 1000, policy)["misses"] == 30_000
        assert reclaimlab.lru(traces["loop"], 4000, policy)["misses"] == 1500
    # The mix has size-0 records: not requests, for libCacheSim and reclaimlab alike.
    r = reclaimlab.lru(traces["mix"], 1000)
    assert r["skipped"] > 0
    assert r["requests"] + r["skipped"] == 40_000
    # A bigger cache never misses more under LRU (stack property), and misses at least the
    # distinct objects.
    m = [reclaimlab.lru(traces["zipf"], c)["misses"] for c in CAPACITIES]
    assert m == sorted(m, reverse=True)
    assert m[-1] >= len(np.unique(np.fromfile(traces["zipf"], dtype=ORACLE)["obj_id"]))


def test_compiled_process_trace_agrees(traces):
    """The benchmark uses libCacheSim's compiled process_trace; it counts the same misses."""
    for policy in ("lru", "fifo", "clock"):
        reader = lcs.TraceReader(
            str(traces["zipf"]), lcs.TraceType.ORACLE_GENERAL_TRACE, lcs.ReaderInitParam(ignore_obj_size=True)
        )
        miss_ratio, _ = LIBCACHESIM[policy](1000).process_trace(reader)
        ours = reclaimlab.lru(traces["zipf"], 1000, policy)
        assert round(miss_ratio * ours["requests"]) == ours["misses"]


def test_zstd_example_trace_matches_libcachesim():
    """The committed example trace, zstd-compressed: both decompress it and agree."""
    for policy in ("lru", "clock"):
        want = libcachesim_counts(EXAMPLE_TRACE, policy, 12_000)
        got = reclaimlab.lru(EXAMPLE_TRACE, 12_000, policy)
        assert want[0] == 150_000
        assert (got["requests"], got["misses"]) == want


def test_csv_trace_requests_objects(traces, tmp_path):
    """A CSV trace of the same objects gives the same result as the oracleGeneral one."""
    ids = np.fromfile(traces["zipf"], dtype=ORACLE)["obj_id"]
    csv = tmp_path / "zipf.csv"
    lines = ["time_ns,object,offset,kind"] + [f"{i},{o},{(i % 3) * 4096},anon_read" for i, o in enumerate(ids)]
    csv.write_text("\n".join(lines) + "\n")
    for policy in ("lru", "fifo", "clock"):
        assert reclaimlab.lru(csv, 500, policy)["misses"] == reclaimlab.lru(traces["zipf"], 500, policy)["misses"]


# ------------------------------------------------------------------------------------------ CLI


def test_cli_json(cli, traces):
    r = cli("lru", str(traces["zipf"]), "--capacity", "1000", "--policy", "clock", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert set(out) == {"requests", "misses", "miss_ratio", "seconds"}
    want = libcachesim_counts(traces["zipf"], "clock", 1000)
    assert (out["requests"], out["misses"]) == want
    assert out["miss_ratio"] == pytest.approx(want[1] / want[0])


def test_cli_text(cli, traces):
    r = cli("lru", str(traces["mix"]), "--capacity", "100")
    assert r.returncode == 0, r.stderr
    rows = dict(re.split(r"\s{2,}", line, maxsplit=1) for line in r.stdout.splitlines())
    api = reclaimlab.lru(traces["mix"], 100)
    assert rows["requests"] == str(api["requests"])
    assert rows["misses"] == str(api["misses"])
    assert rows["policy"] == "lru"
    assert int(rows["skipped (size 0)"]) == api["skipped"] > 0
    assert float(rows["miss ratio"]) == pytest.approx(api["miss_ratio"], abs=1e-6)
    assert float(rows["seconds"]) >= 0


def _assert_clean_error(r, *needles):
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr
    assert r.stderr.startswith("error: ") or ": error: " in r.stderr, r.stderr
    for n in needles:
        assert n in r.stderr, r.stderr


def test_cli_missing_trace(cli, tmp_path):
    r = cli("lru", str(tmp_path / "nope.oracleGeneral"), "--capacity", "10")
    _assert_clean_error(r, "nope.oracleGeneral: cannot open the trace")


def test_cli_truncated_trace(cli, tmp_path):
    p = write_oracle(tmp_path / "t.oracleGeneral", np.arange(1, 11, dtype=np.uint64))
    with open(p, "ab") as f:
        f.write(b"\x01" * 5)
    r = cli("lru", str(p), "--capacity", "10")
    _assert_clean_error(r, "record 11 (byte offset 240): truncated record")


def test_cli_malformed_csv(cli, tmp_path):
    p = tmp_path / "bad.csv"
    p.write_text("time_ns,object,offset,kind\n1,2,0,anon_read\n2,x,0,swap_read\n")
    r = cli("lru", str(p), "--capacity", "10")
    _assert_clean_error(r, "record 2 (line 3): unknown kind \"swap_read\"")


def test_cli_format_from_name_or_flag(cli, traces, tmp_path):
    odd = tmp_path / "trace.dat"
    odd.write_bytes(traces["loop"].read_bytes())
    _assert_clean_error(cli("lru", str(odd), "--capacity", "10"), "cannot tell the trace format")
    r = cli("lru", str(odd), "--capacity", "1000", "--format", "oracle", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["misses"] == 30_000


@pytest.mark.parametrize("args", [["--capacity", "0"], ["--capacity", "many"], ["--policy", "arc", "--capacity", "5"], []])
def test_cli_bad_arguments(cli, traces, args):
    r = cli("lru", str(traces["zipf"]), *args)
    assert r.returncode == 2
    assert "Traceback" not in r.stderr


def test_api_bad_arguments(traces):
    with pytest.raises(ValueError, match="capacity must be"):
        reclaimlab.lru(traces["zipf"], 0)
    with pytest.raises(ValueError, match="capacity must be"):
        reclaimlab.lru(traces["zipf"], True)
    with pytest.raises(ValueError, match="unknown policy"):
        reclaimlab.lru(traces["zipf"], 5, "arc")
    with pytest.raises(ValueError, match="unknown trace format"):
        reclaimlab.lru(traces["zipf"], 5, format="parquet")
    with pytest.raises(reclaimlab.TraceError, match="cannot open the trace"):
        reclaimlab.lru(traces["zipf"].with_name("missing.oracleGeneral"), 5)


# ------------------------------------------------------------------- trace workloads in the CLI


def _trace_scenario(directory: Path, trace: Path, extra: str = "") -> Path:
    s = directory / "replay.toml"
    s.write_text(
        'name = "replay"\n[host]\nram = "96MiB"\n[swap]\nsize = "256MiB"\n'
        f'[[workload]]\nname = "t"\n[workload.trace]\npath = "{trace.name}"\n{extra}'
    )
    return s


def test_trace_workload_runs_and_is_deterministic(tmp_path):
    rng = np.random.default_rng(4)
    write_oracle(tmp_path / "db.oracleGeneral", zipf_ids(rng, 40_000, 60_000, 0.8))
    scen = _trace_scenario(tmp_path, tmp_path / "db.oracleGeneral", "write_fraction = 0.5\n")
    a = reclaimlab.run(scen)
    b = reclaimlab.run(scen)
    assert a.vmstat_text == b.vmstat_text
    assert a.summary_json == b.summary_json
    thread = a.summary["threads"][0]
    assert thread["thread"] == "t/trace"
    assert thread["records_replayed"] == 60_000
    assert a.vmstat["pswpout"] > 0


def test_cli_run_truncated_trace(cli, tmp_path):
    p = write_oracle(tmp_path / "t.oracleGeneral", np.arange(1, 101, dtype=np.uint64))
    with open(p, "ab") as f:
        f.write(b"\x00" * 23)
    scen = _trace_scenario(tmp_path, p)
    r = cli("run", str(scen), "--out", str(tmp_path / "out"))
    _assert_clean_error(r, "record 101 (byte offset 2400): truncated record")
    assert not (tmp_path / "out").exists()


def test_cli_run_missing_trace_points_at_the_key(cli, tmp_path):
    scen = _trace_scenario(tmp_path, tmp_path / "gone.oracleGeneral")
    r = cli("run", str(scen))
    _assert_clean_error(r, f"{scen}:9:8: error: in field `workload[0].trace.path`", "does not exist")


def test_trace_error_is_exported():
    assert issubclass(reclaimlab.TraceError, Exception)
    assert reclaimlab.TraceError is _core.TraceError


def test_examples_report_a_bad_trace_and_go_on(cli, tmp_path):
    scen = tmp_path / "scenarios"
    scen.mkdir()
    write_oracle(scen / "good.oracleGeneral", np.arange(1, 2001, dtype=np.uint64))
    bad = write_oracle(scen / "bad.oracleGeneral", np.arange(1, 11, dtype=np.uint64))
    with open(bad, "ab") as f:
        f.write(b"\x00" * 3)
    for name in ("good", "bad"):
        (scen / f"{name}.toml").write_text(
            f'[[workload]]\nname = "t"\n[workload.trace]\npath = "{name}.oracleGeneral"\n'
        )
    r = cli("examples", "--scenarios", str(scen), "--out", str(tmp_path / "res"))
    assert r.returncode == 2, r.stderr
    assert "bad.toml: FAILED (bad trace)" in r.stdout
    assert "good.toml: done" in r.stdout
    assert "record 11 (byte offset 240): truncated record" in r.stderr
    report = (tmp_path / "res" / "report.md").read_text()
    assert "| good" in report and "`bad.toml`: " in report
