"""The kernel's own trace-vmscan-postprocess.pl reads the compatibility trace and its Summary
totals equal the run's own counters."""

import json
import os
import re
import subprocess
from pathlib import Path

import reclaimlab

SCRIPT = Path(__file__).resolve().parents[2] / ".cache" / "trace-vmscan-postprocess.pl"

SCENARIO = {
    "name": "postprocess",
    "host": {"ram": "128MiB"},
    "swap": {"size": "128MiB"},
    # The hold lets kswapd finish and sleep, so its awake time is closed in the trace.
    "workload": [{"name": "hog", "anon": {"size": "160MiB", "passes": 2, "hold": "2s"}}],
}


def summary_block(text: str) -> dict[str, str]:
    block = text.split("\nSummary\n", 1)[1]
    out = {}
    for line in block.splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            out[k.strip()] = v.strip()
    return out


def test_postprocess_summary_equals_vmstat(tmp_path):
    assert SCRIPT.is_file(), f"{SCRIPT} missing: scripts/fetch-postprocess.sh provides it"
    r = reclaimlab.run(SCENARIO, trace="postprocess", out=tmp_path / "o")
    trace = (tmp_path / "o" / "trace").read_text()
    env = dict(os.environ, PERL_HASH_SEED="0", PERL_PERTURB_KEYS="0")
    p = subprocess.run(
        ["perl", str(SCRIPT)], input=trace, capture_output=True, text=True, env=env, check=True
    )
    s = summary_block(p.stdout)
    vm = r.vmstat
    head = r.summary["headline"]
    allocstall = sum(v for k, v in vm.items() if k.startswith("allocstall_"))
    # The run must exercise both reclaimers for the comparison to mean anything.
    assert allocstall > 0 and vm["pgscan_kswapd"] > 0
    assert int(s["Direct reclaims"]) == allocstall
    assert int(s["Direct reclaim pages scanned"]) == vm["pgscan_direct"]
    assert int(s["Direct reclaim pages reclaimed"]) == vm["pgsteal_direct"]
    assert int(s["Kswapd wakeups"]) == head["kswapd_wakeups"]
    assert int(s["Kswapd pages scanned"]) == vm["pgscan_kswapd"]
    assert int(s["Kswapd pages reclaimed"]) == vm["pgsteal_kswapd"]
    writes = int(s["Kswapd reclaim write anon async I/O"]) + int(
        s["Direct reclaim write anon async I/O"]
    )
    assert writes == vm["pswpout"]
    stalled = float(s["Time stalled direct reclaim"].split()[0])
    awake = float(s["Time kswapd awake"].split()[0])
    assert abs(stalled - head["direct_stall_ms"] / 1000) < 0.011
    assert abs(awake - head["kswapd_awake_ms"] / 1000) < 0.011
