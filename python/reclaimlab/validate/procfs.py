"""Text the guest's kernel prints, as numbers: `name value` lines (/proc/vmstat, the sysctl
section, a cgroup's memory.stat and memory.events)."""

from __future__ import annotations


def parse_pairs(text: str) -> dict[str, int]:
    """``name value`` lines as name -> int; other lines are skipped."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].lstrip("-").isdigit():
            out[parts[0]] = int(parts[1])
    return out
