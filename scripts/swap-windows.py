#!/usr/bin/env python3
"""How often a real guest's swap readahead window opened (docs/MODEL.md, "Development on the
third sitting's boots", item 10; diagnosis only, in no score).

Reads a task-tracing boot's transcript (`.cache/validate/work-trace/SCENARIO/output.log`) and
groups the block reads of the swap disk (254,0, the guest's vda) into swap-ins: reads by one task issued within 0.2 ms of
each other are one fault's window. Prints how many swap-ins read 1, 2, ... pages and the
smallest aligned window spanning each (4 or 8: 6.1 opened its window, which it does only after
a readahead hit since the last miss), then the guest's hits per major fault from the boot's
final vmstat.

    .venv/bin/python scripts/swap-windows.py .cache/validate/work-trace/ext4-create-walk-200/output.log
"""
import collections
import re
import sys

from reclaimlab.validate.swapintrace import aligned_span

ISSUE = re.compile(r"^\s*\S+-(\d+)\s+\[\d+\].*?\s([\d.]+): block_rq_issue: 254,0 (\w+) \d+ "
                   r"\(\) (\d+) \+ (\d+)")
GAP_S = 0.0002


def main(path: str) -> int:
    groups, last = [], {}
    vmstat = {}
    with open(path, errors="replace") as f:
        for line in f:
            m = ISSUE.match(line)
            if m:
                pid, t, rw, sector, sectors = m.groups()
                if "R" not in rw:
                    continue
                t, first, n = float(t), int(sector) // 8, int(sectors) // 8
                g = last.get(pid)
                if g is not None and t - g[-1][0] < GAP_S:
                    g.append((t, first, n))
                else:
                    last[pid] = [(t, first, n)]
                    groups.append(last[pid])
                continue
            k, _, v = line.strip().partition(" ")
            if k in ("swap_ra", "swap_ra_hit", "pgmajfault") and v.isdigit():
                vmstat[k] = max(vmstat.get(k, 0), int(v))  # counters: the largest is the end
    pages, spans = collections.Counter(), collections.Counter()
    for g in groups:
        pages[sum(x[2] for x in g)] += 1
        spans[aligned_span([x[1] for x in g] + [x[1] + x[2] - 1 for x in g])] += 1
    opened = spans[4] + spans[8]
    print(f"{len(groups)} swap-ins; pages read: {sorted(pages.items())}")
    print(f"smallest aligned window spanning each: {sorted(spans.items())}")
    print(f"window of 4 or 8: {opened} ({100 * opened / max(len(groups), 1):.1f} %)")
    if vmstat.get("pgmajfault"):
        x = vmstat["swap_ra_hit"] / vmstat["pgmajfault"]
        print(f"hits a major fault: {x:.3f}; at random arrival a miss follows a hit with "
              f"probability x / (1 + x) = {100 * x / (1 + x):.1f} %")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python scripts/swap-windows.py TRANSCRIPT (a traced boot's output.log)")
    sys.exit(main(sys.argv[1]))
