"""How much CPU the rest of the host takes while a guest runs.

A sitting measures the guest's pace (docs/VALIDATION.md, "Protocol"), so a boot beside other
work measures that work too: a niced compile took a core from a guest whose two vCPUs need
both, and its workload ran twice as long ("A third sitting started and stopped"). Each boot
therefore records the CPU time every other process used while it ran, and a sitting begins
only on a host whose other processes are quiet.

Others' time is the host's busy time (``/proc/stat``) less this process's and its waited-for
children's (``getrusage``): the guest is QEMU, a child of this process, so its time is
counted as the children's once the boot has ended.
"""

from __future__ import annotations

import os
import resource
import time
from dataclasses import dataclass
from pathlib import Path

PROC_STAT = Path("/proc/stat")
# Fields of /proc/stat's `cpu` line that are work: user, nice, system, irq, softirq, steal
# (guest time is already inside user and nice); idle and iowait are not.
_BUSY_FIELDS = (0, 1, 2, 5, 6, 7)


@dataclass(frozen=True)
class CpuSnapshot:
    """CPU seconds so far: the whole host's busy time, this process's, its children's."""

    busy_s: float
    self_s: float
    children_s: float


def snapshot(proc_stat: Path = PROC_STAT) -> CpuSnapshot:
    """The host's, this process's and its waited-for children's CPU seconds now."""
    fields = proc_stat.read_text().splitlines()[0].split()[1:]
    ticks = sum(int(fields[i]) for i in _BUSY_FIELDS if i < len(fields))
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return CpuSnapshot(ticks / os.sysconf("SC_CLK_TCK"), me.ru_utime + me.ru_stime,
                       kids.ru_utime + kids.ru_stime)


def others_cpu_s(before: CpuSnapshot, after: CpuSnapshot) -> float:
    """CPU seconds that processes other than this one and its children used between two
    snapshots (never below 0: /proc/stat counts in ticks, rusage finer)."""
    host = after.busy_s - before.busy_s
    own = (after.self_s - before.self_s) + (after.children_s - before.children_s)
    return max(0.0, host - own)


def others_share(seconds: float = 5.0) -> float:
    """The share of one core that other processes used over the next ``seconds``."""
    before = snapshot()
    time.sleep(seconds)
    return others_cpu_s(before, snapshot()) / seconds
