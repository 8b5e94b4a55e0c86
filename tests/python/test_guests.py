"""Guests through the Python front end: each guest's result directory, vm_rss.csv, compare per
machine, byte-identical reruns."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from reclaimlab import api, cli

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "scenarios" / "kvm-free-page-reporting.toml"


def test_each_guest_has_a_result_directory_and_vm_rss_is_per_vm(tmp_path):
    out = tmp_path / "a"
    api.run(SCENARIO, out=out)
    for g in ("reporting", "silent"):
        d = out / "guests" / g
        for f in ("vmstat", "zoneinfo", "buddyinfo", "summary.json"):
            assert (d / f).is_file(), (g, f)
        s = json.loads((d / "summary.json").read_text())
        assert s["guest"]["name"] == g
    with open(out / "vm_rss.csv") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == ["time_s", "reporting", "silent"]
    last = rows[-1]
    # The reporting guest is back near its boot set; the silent one keeps its program's 3 GiB.
    assert int(last["reporting"]) < 1 << 30
    assert int(last["silent"]) > 3 << 30
    peak = max(int(r["reporting"]) for r in rows)
    assert peak > 3 << 30
    # Reruns are byte-identical.
    again = tmp_path / "b"
    api.run(SCENARIO, out=again)
    for f in ("vm_rss.csv", "summary.json", "guests/reporting/vmstat", "guests/silent/zoneinfo"):
        assert (out / f).read_bytes() == (again / f).read_bytes(), f


def test_compare_one_guest_of_two_runs(tmp_path, capsys):
    a, b = tmp_path / "a", tmp_path / "b"
    api.run(SCENARIO, out=a)
    d3 = tmp_path / "d3.toml"
    d3.write_text(SCENARIO.read_text().replace('policy.hinting = "D4"', 'policy.hinting = "D3"'))
    api.run(d3, out=b)
    assert cli.main(["compare", str(a), str(b), "--machine", "reporting"]) == 0
    text = capsys.readouterr().out
    assert "Simulated Elapsed Time" in text and " a " in f" {text} "
    assert cli.main(["compare", str(a), str(b), "--machine", "nope"]) == 2
    assert "no guest 'nope'" in capsys.readouterr().err
