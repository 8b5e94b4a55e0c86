"""What a trace of every `do_shrink_slab` call says (`mm_shrink_slab_start` and `_end`):
which shrinker scanned what `slabs_scanned` counts, and what it freed. The guest writes the
events in a boot of `scripts/validate-trace.py --shrinkers`, the simulator in a run with
`--trace kernel`: the same text, so one summary reads both."""

from __future__ import annotations

import re
from typing import Any

from .ktrace import task_events

_SHRINK_START = re.compile(
    r"^(\S+?)(?:\+\S+)?(?: \[\w+\])? (\S+): nid: \d+ objects to shrink (-?\d+) gfp_flags (\S+) "
    r"cache items (-?\d+) delta (-?\d+) total_scan (-?\d+) priority (-?\d+)")
_SHRINK_END = re.compile(
    r"^(\S+?)(?:\+\S+)?(?: \[\w+\])? (\S+): nid: \d+ unused scan count (-?\d+) new scan count "
    r"(-?\d+) total_scan (-?\d+) last shrinker return val (-?\d+)")


def shrinkers(trace: str) -> dict[str, Any]:
    """Every `do_shrink_slab` call the trace holds (`mm_shrink_slab_start` and `_end`, guest or
    simulator: the same text), summed by shrinker (its `scan_objects` function and instance):
    calls (by kswapd, by others, and those made without `__GFP_FS`), the objects the start
    counted (`cache items`) at the first and largest call, the `delta` added and the deferred
    work taken (`objects to shrink`), the scan planned (`total_scan` at the start) and done
    (planned less what the end says was left: what `slabs_scanned` counts), the objects freed
    (`last shrinker return val`; a negative one, a shrinker's "freed everything" LONG_MAX
    printed as an int, is counted apart) and the backlog left at
    the last call (`new scan count`). Calls are paired by task: a start is closed by the same
    task's next end."""
    open_call: dict[str, tuple[dict[str, Any], int, int, int, int, bool, bool]] = {}
    out: dict[str, dict[str, Any]] = {}
    for _t, comm, pid, name, args in task_events(trace):
        if name == "mm_shrink_slab_start":
            m = _SHRINK_START.match(args)
            if m:
                sym, ptr, nr, gfp, items, delta, total, _prio = m.groups()
                s = out.setdefault(f"{sym} {ptr}", {
                    "shrinker": sym, "calls": 0, "kswapd_calls": 0, "nofs_calls": 0,
                    "first_items": int(items), "max_items": 0, "delta": 0,
                    "deferred_taken": 0, "planned": 0, "scanned": 0, "freed": 0,
                    "negative_return_calls": 0, "backlog_end": 0,
                })
                open_call[pid] = (s, int(nr), int(items), int(delta), int(total),
                                  comm.startswith("kswapd"), "GFP_NOFS" in gfp or "GFP_NOIO" in gfp)
        elif name == "mm_shrink_slab_end" and pid in open_call:
            m = _SHRINK_END.match(args)
            if not m:
                continue
            s, nr, items, delta, total, kswapd, nofs = open_call.pop(pid)
            new, left, ret = (int(m.group(i)) for i in (4, 5, 6))
            s["calls"] += 1
            s["kswapd_calls"] += kswapd
            s["nofs_calls"] += nofs
            s["max_items"] = max(s["max_items"], items)
            s["delta"] += delta
            s["deferred_taken"] += nr
            s["planned"] += total
            s["scanned"] += max(total - left, 0)
            if ret >= 0:
                s["freed"] += ret
            else:
                s["negative_return_calls"] += 1
            s["backlog_end"] = new
    # A call the trace saw start but not end is in no sum.
    return dict(sorted(((k, v) for k, v in out.items() if v["calls"]),
                       key=lambda kv: -kv[1]["scanned"]))
