"""What the rest of the host takes while a guest runs (validate/hostload.py), and the idle
check a sitting begins with (scripts/validate-sitting.py --idle-check)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from reclaimlab.validate import hostload

ROOT = Path(__file__).resolve().parents[2]
SPIN = "import time\nt = time.process_time()\nwhile time.process_time() - t < {s}: pass\n"


def test_others_are_the_host_less_this_process_and_its_children():
    a = hostload.CpuSnapshot(busy_s=100.0, self_s=2.0, children_s=10.0)
    b = hostload.CpuSnapshot(busy_s=110.0, self_s=3.0, children_s=13.0)
    assert hostload.others_cpu_s(a, b) == 6.0
    # /proc/stat's ticks are coarser than rusage: a small negative is nobody's time.
    c = hostload.CpuSnapshot(busy_s=100.01, self_s=2.5, children_s=10.0)
    assert hostload.others_cpu_s(a, c) == 0.0


def test_busy_time_is_read_from_the_cpu_line(tmp_path):
    stat = tmp_path / "stat"
    # user nice system idle iowait irq softirq steal guest guest_nice
    stat.write_text("cpu  100 20 30 400 50 6 7 8 5 0\ncpu0 50 10 15 200 25 3 3 4 2 0\n")
    snap = hostload.snapshot(stat)
    assert snap.busy_s == (100 + 20 + 30 + 6 + 7 + 8) / os.sysconf("SC_CLK_TCK")


def test_a_child_counts_as_its_own_not_as_others():
    before = hostload.snapshot()
    subprocess.run([sys.executable, "-c", SPIN.format(s=0.4)], check=True)
    after = hostload.snapshot()
    kids = after.children_s - before.children_s
    assert kids >= 0.35
    # The host saw at least the child's time (ticks of 10 ms, rounding each way).
    assert after.busy_s - before.busy_s >= kids - 0.05


def test_a_sitting_does_not_begin_beside_a_busy_process(tmp_path):
    spinner = subprocess.Popen([sys.executable, "-c", SPIN.format(s=30)])
    try:
        r = subprocess.run(
            [sys.executable, str(ROOT / "scripts" / "validate-sitting.py"),
             str(tmp_path / "s"), "--idle-check"],
            capture_output=True, text=True, timeout=60)
    finally:
        spinner.kill()
        spinner.wait()
    assert r.returncode == 2, r.stdout + r.stderr
    assert "the host is busy" in r.stderr and "FORCE=1" in r.stderr
    # Nothing of a sitting was started.
    assert not (tmp_path / "s").exists()
