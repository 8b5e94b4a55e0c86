"""Reading results back, in two strengths: :func:`read_summary` is the cheap, forgiving look
used to decide whether a result can be reused (anything odd means "no"); :func:`load_run` is the
strict one used to report on a result (anything odd is a :class:`RunDirError` naming the
directory and the file)."""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .naming import REQUIRED_FILES, RESULT_FILES, TRACE_FILE, RunDirError

# Keys that may hold the total simulated time in summary.json, in order of preference.
_SIM_TIME_KEYS = ("sim_time_ns", "simulated_ns", "end_ns", "duration_ns")


def parse_vmstat(text: str) -> dict[str, int]:
    """``/proc/vmstat`` text to an ordered dict (counters and gauges alike)."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2:
            out[parts[0]] = int(parts[1])
    return out


def sim_time_ns(summary: Mapping[str, Any]) -> int | None:
    """The simulated time recorded in a summary, if it records one."""
    for key in _SIM_TIME_KEYS:
        value = summary.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def is_complete(directory: str | os.PathLike) -> bool:
    """Whether ``directory`` holds every file of :data:`RESULT_FILES`."""
    d = Path(directory)
    return all((d / name).is_file() for name in RESULT_FILES)


def read_summary(directory: str | os.PathLike) -> dict[str, Any] | None:
    """The summary of a complete result directory, or None (missing, incomplete, unreadable)."""
    d = Path(directory)
    if not is_complete(d):
        return None
    try:
        data = json.loads((d / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


@dataclass
class TraceCounts:
    """What only a trace can tell: per-reclaimer writes and wake-kswapd requests."""

    wake_kswapd_requests: int
    # (who, kind, mode) -> pages, who in {"direct", "kswapd"}, kind {"file", "anon"},
    # mode {"sync", "async"}
    writes: Counter


@dataclass
class Run:
    """A result directory as read back: its counters, its summary and what its trace adds."""

    path: Path
    vmstat: dict[str, int]
    summary: dict[str, Any]
    trace: TraceCounts | None = None


# comm-pid [cpu] flags timestamp: event: details. The comm may contain '-': the pid is the digits
# after the last one, as in the kernel's script.
_TRACE_LINE = re.compile(r"^\s*(\S+)-(\d+)\s+\[\d+\].*?\s[0-9.]+:\s+(\w+):\s*(.*)$")


def parse_trace(path: str | os.PathLike) -> TraceCounts:
    """Count, per task, what trace-vmscan-postprocess.pl counts for the rows vmstat lacks."""
    direct, kswapd = set(), set()
    wakes: Counter = Counter()
    writes: dict[str, Counter] = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = _TRACE_LINE.match(line)
            if not m:
                continue
            pid, event, details = m.group(2), m.group(3), m.group(4)
            if event == "mm_vmscan_direct_reclaim_begin":
                direct.add(pid)
            elif event == "mm_vmscan_kswapd_wake":
                kswapd.add(pid)
            elif event == "mm_vmscan_wakeup_kswapd":
                wakes[pid] += 1
            # 6.1 calls it write_folio; the script and the postprocess trace say writepage.
            elif event in ("mm_vmscan_writepage", "mm_vmscan_write_folio"):
                kind = "file" if "RECLAIM_WB_FILE" in details else "anon"
                mode = "sync" if "RECLAIM_WB_SYNC" in details else "async"
                writes.setdefault(pid, Counter())[kind, mode] += 1
    # A task's figures count as direct if it ever direct-reclaimed, as kswapd's if it ever woke
    # as kswapd; the script drops wake requests from tasks that never direct-reclaimed.
    total: Counter = Counter()
    for pid, c in writes.items():
        for (kind, mode), n in c.items():
            if pid in direct:
                total["direct", kind, mode] += n
            if pid in kswapd:
                total["kswapd", kind, mode] += n
    return TraceCounts(sum(n for pid, n in wakes.items() if pid in direct), total)


def load_run(directory: str | os.PathLike) -> Run:
    """Read a result directory for reporting; :class:`RunDirError` says what is wrong with it."""
    path = Path(directory)
    if not path.is_dir():
        raise RunDirError(f"{path}: no such result directory")
    for name in REQUIRED_FILES:
        if not (path / name).is_file():
            raise RunDirError(f"{path}: not a reclaimlab result directory: {name} is missing")
    try:
        vmstat = parse_vmstat((path / "vmstat").read_text(encoding="utf-8"))
        summary = json.loads((path / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise RunDirError(f"{path}: unreadable result: {e}") from None
    if not isinstance(summary, dict):
        raise RunDirError(f"{path}/summary.json: not a JSON object")
    trace = path / TRACE_FILE
    return Run(path, vmstat, summary, parse_trace(trace) if trace.is_file() else None)
