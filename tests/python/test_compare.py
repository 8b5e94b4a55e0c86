"""``reclaimlab compare`` on real runs: the table's figures are the runs' own vmstat/summary
values, the changes are right, and the trace-only rows agree with the kernel's script."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from scipy.stats import ttest_ind

import reclaimlab
from reclaimlab import compare, results

SCRIPT = Path(__file__).resolve().parents[2] / ".cache" / "trace-vmscan-postprocess.pl"

SCENARIO = """\
name = "{name}"

[host]
ram = "128MiB"

[swap]
size = "128MiB"

[policy]
kswapd_balance = "{policy}"

[[workload]]
name = "hog"

[workload.anon]
size = "{size}"
passes = 2
"""

FTRACE = [r for r in compare.FTRACE_ROWS if r]
FAULTS = ["Major Faults", "Minor Faults", "Page ins", "Page outs", "Swap ins", "Swap outs"]


def scenario(tmp: Path, name: str, policy: str = "v6.1", size: str = "160MiB") -> Path:
    path = tmp / f"{name}.toml"
    path.write_text(SCENARIO.format(name=name, policy=policy, size=size))
    return path


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """seed 1 with a trace (baseline), seed 2 without, and seed 1 under the 2.6.38 rule."""
    tmp = tmp_path_factory.mktemp("compare")
    new = scenario(tmp, "new")
    old = scenario(tmp, "old", policy="v2.6.38")
    out = {"s1": tmp / "s1", "s2": tmp / "s2", "old": tmp / "old"}
    reclaimlab.run(new, seed=1, trace="postprocess", out=out["s1"])
    reclaimlab.run(new, seed=2, out=out["s2"])
    reclaimlab.run(old, seed=1, out=out["old"])
    return out


def parse_text(text: str, labels: list[str]) -> dict[str, list[tuple[str, str | None]]]:
    """Row label -> [(value, change or None)] per column (first match wins, like the table)."""
    rows = {}
    for line in text.splitlines():
        for label in labels:
            if label not in rows and re.match(re.escape(label) + r"\s", line):
                cells: list[list] = []
                for tok in line[len(label) :].split():
                    if tok[0] in "(*":
                        cells[-1][1] = tok
                    else:
                        cells.append([tok, None])
                rows[label] = [tuple(c) for c in cells]
    return rows


def expected(d: Path) -> dict[str, object]:
    vm = reclaimlab.api.parse_vmstat((d / "vmstat").read_text())
    s = json.loads((d / "summary.json").read_text())
    h = s["headline"]
    t, stall, awake = (
        s["sim_time_ns"] / 1e9,
        h["direct_stall_ms"] / 1000,
        h["kswapd_awake_ms"] / 1000,
    )
    scanned = vm["pgscan_direct"] + vm["pgscan_kswapd"]
    return {
        "Simulated Elapsed Time (seconds)": t,
        "Direct reclaims": sum(v for k, v in vm.items() if k.startswith("allocstall_")),
        "Direct reclaim pages scanned": vm["pgscan_direct"],
        "Direct reclaim pages reclaimed": vm["pgsteal_direct"],
        "Kswapd wakeups": h["kswapd_wakeups"],
        "Kswapd pages scanned": vm["pgscan_kswapd"],
        "Kswapd pages reclaimed": vm["pgsteal_kswapd"],
        "Direct reclaim write anon sync I/O": 0,
        "Kswapd reclaim write file sync I/O": 0,
        "Time stalled direct reclaim (seconds)": stall,
        "Time kswapd awake (seconds)": awake,
        "Total pages scanned": scanned,
        "Total pages reclaimed": vm["pgsteal_direct"] + vm["pgsteal_kswapd"],
        "%age total pages scanned/reclaimed": 100
        * (vm["pgsteal_direct"] + vm["pgsteal_kswapd"])
        / scanned,
        "%age total pages scanned/written": 100 * vm["nr_vmscan_write"] / scanned,
        "%age file pages scanned/written": 100 * (vm["nr_vmscan_write"] - vm["pswpout"]) / scanned,
        "Percentage Time Spent Direct Reclaim": 100 * stall / (t + stall),
        "Percentage Time kswapd Awake": 100 * awake / t,
        "Major Faults": vm["pgmajfault"],
        "Minor Faults": vm["pgfault"] - vm["pgmajfault"],
        "Page ins": vm["pgpgin"],
        "Page outs": vm["pgpgout"],
        "Swap ins": vm["pswpin"],
        "Swap outs": vm["pswpout"],
        "pgscan_anon": vm["pgscan_anon"],
    }


def fmt(label: str, v) -> str:
    if label.startswith(("%age", "Percentage")):
        return f"{v:.2f}%"
    return str(v) if isinstance(v, int) else f"{v:.2f}"


def test_text_values_and_changes(runs, cli):
    r = cli(
        "compare",
        str(runs["s1"]),
        str(runs["s2"]),
        str(runs["old"]),
        "--labels",
        "seed1,seed2,v2.6.38",
    )
    assert r.returncode == 0, r.stderr
    out = r.stdout
    for title in (
        "MMTests Statistics: duration",
        "FTrace Reclaim Statistics: vmscan",
        "proc vmstat: Faults",
    ):
        assert f"\n{title}\n" in out
    want = [expected(runs[k]) for k in ("s1", "s2", "old")]
    rows = parse_text(out, list(want[0]))
    assert set(rows) == set(want[0])
    for label, cells in rows.items():
        base = want[0][label]
        assert cells[0] == (fmt(label, base), None), label
        for col, (text, change) in zip(want[1:], cells[1:]):
            v = col[label]
            assert text == fmt(label, v), label
            pct = 0.0 if v == base else (v - base) / base * 100
            assert change == f"({pct:+.2f}%)", label
    # The runs really differ: seed 2, and the 2.6.38 policy (it runs with its era's
    # watermarks, which changes how much kswapd reclaims even on this order-0 load).
    assert want[1]["Kswapd pages scanned"] != want[0]["Kswapd pages scanned"]
    assert want[2]["Kswapd pages scanned"] != want[0]["Kswapd pages scanned"]
    # Trace-only rows: known for the traced baseline, unavailable ("-") for the others.
    wake = parse_text(out, ["Wake kswapd requests"])["Wake kswapd requests"]
    assert wake[0][0].isdigit() and int(wake[0][0]) > 0
    assert [c[0] for c in wake[1:]] == ["-", "-"]
    assert '"-": needs a trace' in out


def script_summary(trace: Path) -> dict[str, str]:
    env = dict(os.environ, PERL_HASH_SEED="0", PERL_PERTURB_KEYS="0")
    with open(trace) as f:
        p = subprocess.run(
            ["perl", str(SCRIPT)], stdin=f, capture_output=True, text=True, env=env, check=True
        )
    block = p.stdout.split("\nSummary\n", 1)[1]
    return {
        k.strip(): v.split()[0]
        for k, v in (ln.split(":", 1) for ln in block.splitlines() if ":" in ln)
    }


def test_trace_rows_match_kernel_script(runs):
    assert SCRIPT.is_file(), f"{SCRIPT} missing: scripts/fetch-postprocess.sh provides it"
    script = script_summary(runs["s1"] / "trace")
    m = compare.metrics(results.load_run(runs["s1"]))
    rows = [
        "Wake kswapd requests",
        "Direct reclaims",
        "Direct reclaim pages scanned",
        "Kswapd pages scanned",
    ]
    rows += [r for r in FTRACE if "write" in r]
    for row in rows:
        assert m[row] == int(script[row]), row
    # Both reclaimers wrote, so the split is a real test of the per-task attribution.
    assert (
        m["Direct reclaim write anon async I/O"] > 0
        and m["Kswapd reclaim write anon async I/O"] > 0
    )


def test_markdown_and_json(runs, cli):
    args = ["compare", str(runs["s1"]), str(runs["s2"])]
    md = cli(*args, "--format", "markdown")
    assert md.returncode == 0, md.stderr
    table_lines = [ln for ln in md.stdout.splitlines() if ln.startswith("|")]
    # Every table line has the label cell and one cell per column (escaped pipes aside).
    assert table_lines and all(len(re.split(r"(?<!\\)\|", ln)) - 2 == 3 for ln in table_lines)
    assert "### FTrace Reclaim Statistics: vmscan" in md.stdout
    assert f"| Swap outs | {expected(runs['s1'])['Swap outs']} |" in md.stdout

    js = cli(*args, "--format", "json")
    assert js.returncode == 0, js.stderr
    data = json.loads(js.stdout)
    assert data["baseline"] == "s1" and [c["seeds"] for c in data["columns"]] == [[1], [2]]
    rows = {r["label"]: r for s in data["sections"] for r in s["rows"]}
    want = [expected(runs["s1"]), expected(runs["s2"])]
    for label in want[0]:
        r = rows[label]
        assert r["values"] == pytest.approx([w[label] for w in want]), label
        b, v = r["values"]
        assert r["change_percent"][0] is None
        assert r["change_percent"][1] == pytest.approx(0.0 if v == b else (v - b) / b * 100)
        assert r["significant"] == [None, None]  # one run per column: no test
    assert rows["Wake kswapd requests"]["values"][1] is None


def test_seeds_means_and_significance(tmp_path, cli):
    small = scenario(tmp_path, "small")
    big = scenario(tmp_path, "big", size="176MiB")
    out = tmp_path / "res"
    args = ["compare", "--seeds", "3", str(small), str(big), "--out", str(out), "--format", "json"]
    r = cli(*args)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert [c["label"] for c in data["columns"]] == ["small", "big"]
    assert [c["seeds"] for c in data["columns"]] == [[1, 2, 3], [1, 2, 3]]
    dirs = {n: [out / f"{n}-seed{k}" for k in (1, 2, 3)] for n in ("small", "big")}
    samples = {n: [expected(d) for d in ds] for n, ds in dirs.items()}
    rows = {r["label"]: r for s in data["sections"] for r in s["rows"]}
    marked = 0
    for label in samples["small"][0]:
        a = [e[label] for e in samples["small"]]
        b = [e[label] for e in samples["big"]]
        row = rows[label]
        assert row["values"] == pytest.approx([sum(a) / 3, sum(b) / 3]), label
        if len(set(a)) > 1 or len(set(b)) > 1:
            assert row["significant"][1] == (ttest_ind(a, b, equal_var=False).pvalue < 0.05), label
        else:
            assert row["significant"][1] == (a[0] != b[0]), label
        marked += row["significant"][1]
    assert 0 < marked < len(samples["small"][0])  # a mix of significant and not

    # The second time every run is reused, and the text table carries mmtests' markers.
    again = cli(*args[:-1], "text")
    assert again.returncode == 0, again.stderr
    assert again.stderr.count("up to date") == 6
    swap_outs = parse_text(again.stdout, ["Swap outs"])["Swap outs"]
    mean = rows["Swap outs"]["values"]
    assert swap_outs[0] == (f"{mean[0]:.2f}", None)
    assert swap_outs[1] == (f"{mean[1]:.2f}", f"*{rows['Swap outs']['change_percent'][1]:+.2f}%*")
    assert "mean of 3 seeds" in again.stdout


def test_an_axis_runs_each_scenario_once_per_value(tmp_path, cli):
    """--axis policy.lru=classic,mglru: the page-replacement algorithm side by side, one
    column per value, each column's runs those of the scenario with the key set (the same as
    a scenario file that sets it), and the values differ where the algorithms do."""
    small = scenario(tmp_path, "small")
    out = tmp_path / "res"
    r = cli("compare", "--seeds", "2", str(small), "--axis", "policy.lru=classic,mglru",
            "--out", str(out), "--format", "json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert [c["label"] for c in data["columns"]] == ["small policy.lru=classic",
                                                      "small policy.lru=mglru"]
    # The mglru column is the scenario run under MGLRU: its runs' resolved scenario says so,
    # and a file setting the key gives the same results (the store key is the same).
    from reclaimlab.results.naming import result_dir_name

    mglru = result_dir_name("small policy.lru=mglru")
    for k in (1, 2):
        summary = json.loads((out / f"{mglru}-seed{k}" / "summary.json").read_text())
        assert 'lru = "mglru"' in summary["scenario"]
    (tmp_path / "m.toml").write_text(
        small.read_text().replace("[policy]", '[policy]\nlru = "mglru"'))
    again = cli("compare", "--seeds", "2", str(tmp_path / "m.toml"), "--out", str(tmp_path / "m"),
                "--store", str(out / ".store"), "--format", "json")
    assert again.returncode == 0, again.stderr
    assert again.stderr.count("up to date") == 2
    rows = {r["label"]: r for s in data["sections"] for r in s["rows"]}
    assert any(r["values"][0] != r["values"][1] for r in rows.values())
    # Bad axes: a message naming the fix, exit 2, no traceback.
    for bad, want in ((["--axis", "policy.lru"], "expected KEY=V1,V2"),
                      (["--axis", "policy.lru=,mglru"], "expected KEY=V1,V2"),
                      (["--axis", "workload.nosuch.size=1MiB"], "no element named 'nosuch'")):
        r = cli("compare", "--seeds", "1", str(small), *bad, "--out", str(tmp_path / "bad"))
        assert r.returncode == 2 and want in r.stderr and "Traceback" not in r.stderr, r.stderr
    r = cli("compare", str(out / f"{mglru}-seed1"), "--axis", "policy.lru=classic")
    assert r.returncode == 2 and "--axis needs --seeds" in r.stderr


def test_bad_arguments(runs, tmp_path, cli):
    def fails(*args: str) -> str:
        r = cli("compare", *args)
        assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
        return r.stderr

    missing = tmp_path / "missing"
    assert f"error: {missing}: no such result directory" in fails(str(runs["s1"]), str(missing))
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "vmstat").write_text("pswpout 1\n")
    assert f"{empty}: not a reclaimlab result directory: summary.json is missing" in fails(
        str(runs["s1"]), str(empty)
    )
    assert "pass --seeds N" in fails(str(scenario(tmp_path, "x")))
    assert "--labels names 2 columns but there are 1" in fails(str(runs["s1"]), "--labels", "a,b")
    assert "with --seeds every argument is a scenario file" in fails(
        "--seeds", "2", str(runs["s1"])
    )


def test_change_and_significance_edge_cases():
    assert compare.change_percent(0, 0) == 0.0
    assert compare.change_percent(0, 5) is None
    assert compare.format_cell(compare.Cell(5, None, None), False, "count") == "5 (n/a)"
    assert compare.significant([1, 1, 1], [1, 1, 1]) is False
    assert compare.significant([1, 1, 1], [2, 2, 2]) is True  # no noise: any difference is real
    assert compare.significant([1], [2]) is None
