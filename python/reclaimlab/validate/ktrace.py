"""What the guest's ftrace says about kswapd and direct reclaim during the workload.

The guest's /init traces kswapd0's scheduler events (`sched_wakeup`, `sched_switch` onto and
off its CPU) and the reclaim events `mm_vmscan_wakeup_kswapd`, `mm_vmscan_kswapd_wake`,
`mm_vmscan_kswapd_sleep` and `mm_vmscan_direct_reclaim_begin`/`_end`. From them:

- kswapd's runs (`balance_pgdat` calls: from each `kswapd_wake` to its next voluntary sleep)
  and how long each lasted, and its total time on a CPU;
- what kswapd was doing when each direct reclaim began: running on a CPU, preempted
  (runnable), woken but not yet running, or sleeping (napping or asleep; `D` is an I/O wait);
- wake-ups with no gfp flags (`gfp_flags=none`): the allocator's call after a fallback steal
  boosted a zone's watermarks;
- how long the allocator's request waits for reclaim: from the first `mm_vmscan_wakeup_kswapd`
  after a run began to the next run's `mm_vmscan_kswapd_wake` (`balance_pgdat` starting), and
  the part of it after kswapd was switched onto its CPU (in a TCG guest on a loaded host the
  vCPU can stall there for milliseconds: `sched_wakeup` to `sched_switch` alone misses it);
- the pages each kswapd run reclaimed (a run of one priority-12 batch, about 23 pages, is one
  that a few pages freed into a zone already balanced);
- kswapd's LRU isolations (`mm_vmscan_lru_isolate`) by the highest zone it reclaims for
  (`classzone`), with the pages it scanned and the pages of higher zones it passed over
  (`nr_skipped`, counted in `pgscan_*` as well as `pgskip_*`): a kswapd woken for the DMA zone
  alone (a boost of DMA) walks past the DMA32 pages of the whole inactive list;
- fallback steals (`mm_page_alloc_extfrag`) by zone (the DMA zone is the first 16 MiB) and by
  the migratetypes involved;
- the gfp masks of the huge pages allocated (`mm_page_alloc` of order 9 and up): a THP fault's
  mask shows the guest's `transparent_hugepage/defrag` at work;
- each disk's requests (`block_rq_issue` to `block_rq_complete`, by device and direction):
  their sizes and how long the guest waited for them. A swap page stays under writeback at
  least that long (before issue it waits in the reclaimer's block plug), and while it does a
  fault on it finds it flagged PG_reclaim, the bit PG_readahead shares, so the kernel counts a
  readahead hit and widens its next swap readahead window;
- the reclaimers' block plugs (`block_plug` to the task's next `block_rq_issue`, kswapd's apart
  from the others'): how long a plug held its writes and how many pages each flush issued,
  the figures behind `[swap] max_request`;
- what a page costs kswapd by what became of it (kept, written, freed: `kswapd_per_page`),
  the figures behind the reclaim costs of `[cost]`, and how long a run takes from kswapd's
  switch onto its CPU to its first LRU batch (`switch_in_to_first_batch`: the rest of its
  sleep, `balance_pgdat`'s set-up, the first checks and scan counts), the figure behind
  `[cost] balance_start`;
- how far apart a read-ahead window's pages are allocated (`mm_page_alloc` with the
  read-ahead mask's `__GFP_NORETRY`, traced for the DMA zone's pages: `readahead_page_gap`),
  the figure behind `[cost] readahead_alloc`;
- in a boot that traced every task's scheduler events, where each workload task's time went
  (`workload_time`), the figures behind the workload's costs.

These are the facts behind the simulator's choices for the validation scenarios (their wake-up
latency and the cost of reclaiming a mapped page; docs/VALIDATION.md), kept as
`<sitting>/real/<scenario>.trace.json` by `scripts/validate-trace.py`.
"""

from __future__ import annotations

import re
import statistics
from typing import Any

# The DMA zone's pages (x86-64: below 16 MiB) and the migratetypes as the tracepoints print them.
_DMA_PFNS = 1 << 12
_MT = {"0": "unmovable", "1": "movable", "2": "reclaimable", "3": "highatomic"}

_EVENT = re.compile(r"^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+\S+\s+(\d+\.\d+): (\w+): (.*)$")


def task_events(trace: str) -> list[tuple[float, str, str, str, str]]:
    """The trace's events with the task's pid: (time, comm, pid, event, arguments). Tasks that
    share a name (the workload program's threads) are told apart by pid."""
    out = []
    for line in trace.splitlines():
        m = _EVENT.match(line)
        if m:
            out.append((float(m.group(4)), m.group(1).strip(), m.group(2), m.group(5),
                        m.group(6)))
    return out


def _events(trace: str) -> list[tuple[float, str, str, str]]:
    out = []
    for line in trace.splitlines():
        m = _EVENT.match(line)
        if m:
            out.append((float(m.group(4)), m.group(1).strip(), m.group(5), m.group(6)))
    return out


def _quantiles_us(values: list[float]) -> dict[str, float]:
    if not values:
        return {"n": 0}
    v = sorted(values)
    n = len(v)
    return {
        "n": n,
        "median_us": round(v[n // 2] * 1e6, 1),
        "p10_us": round(v[n // 10] * 1e6, 1),
        "p90_us": round(v[min(n - 1, n * 9 // 10)] * 1e6, 1),
        "mean_us": round(statistics.fmean(v) * 1e6, 1),
    }


def wakeup_to_balance_us(trace: str) -> list[float]:
    """Microseconds from the allocator's first `mm_vmscan_wakeup_kswapd` after a kswapd run
    began to the next run's `mm_vmscan_kswapd_wake` (`balance_pgdat` starting): what an
    allocation that woke kswapd waited for kswapd's reclaim, including a stall of kswapd's
    vCPU after its switch onto it, which `sched_wakeup` -> `sched_switch` misses. The
    simulator's `Woken` state is this wait (`[cost] wakeup_latency_samples`)."""
    request: float | None = None
    out: list[float] = []
    for t, _comm, name, _args in _events(trace):
        if name == "mm_vmscan_wakeup_kswapd" and request is None:
            request = t
        elif name == "mm_vmscan_kswapd_wake" and request is not None:
            out.append(round((t - request) * 1e6, 1))
            request = None
    return out


def summarise(trace: str) -> dict[str, Any]:
    """The summary of one boot's trace (see the module doc)."""
    ev = _events(trace)
    state = "sleeping"  # kswapd starts the workload asleep
    at_direct = {"running": 0, "preempted": 0, "woken": 0, "sleeping": 0, "io_wait": 0}
    on_cpu_since: float | None = None
    on_cpu = 0.0
    run_start: float | None = None
    runs: list[float] = []
    direct_begin: float | None = None
    direct: list[float] = []
    direct_reclaimed: list[int] = []
    wakeups = boost_wakeups = 0
    # kswapd's last switch-in.
    switched_in: float | None = None
    switch_to_run: list[float] = []
    # The switch-in that began the current run, until the run's first LRU batch.
    run_switched_in: float | None = None
    switch_to_batch: list[float] = []
    run_reclaimed: list[int] = []
    isolate: dict[str, dict[str, int]] = {}
    extfrag: dict[str, int] = {}
    huge: dict[str, int] = {}
    issued: dict[tuple[str, str], float] = {}
    requests: dict[str, list[float]] = {}
    request_pages: dict[str, int] = {}
    for t, comm, name, args in ev:
        if name == "sched_wakeup":
            if "comm=kswapd0 " in args and state != "running":
                state = "woken"
        elif name == "sched_switch":
            if "next_comm=kswapd0" in args:
                state, on_cpu_since, switched_in = "running", t, t
            elif "prev_comm=kswapd0" in args:
                if on_cpu_since is not None:
                    on_cpu += t - on_cpu_since
                    on_cpu_since = None
                prev = args.split("prev_state=")[1].split()[0] if "prev_state=" in args else "S"
                if prev.startswith("R"):
                    state = "preempted"
                elif prev.startswith("D"):
                    state = "io_wait"
                else:
                    state = "sleeping"
                    if run_start is not None:
                        runs.append(t - run_start)
                        run_start = None
        elif name == "mm_vmscan_kswapd_wake":
            run_start = t
            run_reclaimed.append(0)
            run_switched_in = switched_in
            if switched_in is not None:
                switch_to_run.append(t - switched_in)
                switched_in = None
        elif name == "mm_vmscan_lru_shrink_inactive" and comm.startswith("kswapd"):
            m = re.search(r"nr_reclaimed=(\d+)", args)
            if run_reclaimed and m:
                run_reclaimed[-1] += int(m.group(1))
        elif name == "mm_vmscan_wakeup_kswapd":
            wakeups += 1
            if args.rstrip().endswith("gfp_flags=none"):
                boost_wakeups += 1
        elif name == "mm_vmscan_lru_isolate":
            if comm.startswith("kswapd") and run_switched_in is not None:
                switch_to_batch.append(t - run_switched_in)
                run_switched_in = None
            f = dict(kv.split("=", 1) for kv in args.split() if "=" in kv)
            row = isolate.setdefault(f"classzone {f.get('classzone', '?')}", {
                "calls": 0, "nr_scanned": 0, "nr_skipped": 0, "nr_taken": 0})
            row["calls"] += 1
            for k in ("nr_scanned", "nr_skipped", "nr_taken"):
                row[k] += int(f.get(k, 0))
        elif name == "mm_page_alloc_extfrag":
            f = dict(kv.split("=", 1) for kv in args.split() if "=" in kv)
            zone = "DMA" if int(f.get("pfn", "0x0"), 16) < _DMA_PFNS else "DMA32 and up"
            key = (f"{zone}: alloc {_MT.get(f.get('alloc_migratetype', ''), '?')} from "
                   f"{_MT.get(f.get('fallback_migratetype', ''), '?')}")
            extfrag[key] = extfrag.get(key, 0) + 1
        elif name == "mm_page_alloc":
            f = dict(kv.split("=", 1) for kv in args.split() if "=" in kv)
            if int(f.get("order", 0)) >= 9:
                key = f"order {f['order']} {f.get('gfp_flags', '?')}"
                huge[key] = huge.get(key, 0) + 1
        elif name in ("block_rq_issue", "block_rq_complete"):
            req = _block_request(args)
            if req is None:
                continue
            dev, rw, sector, pages = req
            if name == "block_rq_issue":
                issued[(dev, sector)] = t
            elif (dev, sector) in issued:
                key = f"{dev} {rw}"
                requests.setdefault(key, []).append(t - issued.pop((dev, sector)))
                request_pages[key] = request_pages.get(key, 0) + pages
        elif name == "mm_vmscan_direct_reclaim_begin":
            at_direct[state] += 1
            direct_begin = t
        elif name == "mm_vmscan_direct_reclaim_end" and direct_begin is not None:
            direct.append(t - direct_begin)
            m = re.search(r"nr_reclaimed=(\d+)", args)
            direct_reclaimed.append(int(m.group(1)) if m else 0)
            direct_begin = None
    span = (ev[-1][0] - ev[0][0]) if ev else 0.0
    return {
        "traced_s": round(span, 3),
        "kswapd_on_cpu_s": round(on_cpu, 3),
        "kswapd_runs": _quantiles_us(runs),
        "kswapd_runs_under_300us": sum(1 for r in runs if r < 300e-6),
        "kswapd_run_reclaimed_median": (
            sorted(run_reclaimed)[len(run_reclaimed) // 2] if run_reclaimed else 0
        ),
        "kswapd_runs_reclaiming_under_32": sum(1 for r in run_reclaimed if r < 32),
        "wakeup_to_balance": _quantiles_us([x / 1e6 for x in wakeup_to_balance_us(trace)]),
        "switch_in_to_balance": _quantiles_us(switch_to_run),
        "switch_in_to_first_batch": _quantiles_us(switch_to_batch),
        "wakeup_kswapd": wakeups,
        "wakeup_kswapd_gfp_none": boost_wakeups,
        "lru_isolate": dict(sorted(isolate.items())),
        "extfrag": dict(sorted(extfrag.items())),
        "huge_page_allocs": dict(sorted(huge.items())),
        "direct_reclaims": len(direct),
        "direct_reclaim": _quantiles_us(direct),
        "direct_reclaimed_median": (
            sorted(direct_reclaimed)[len(direct_reclaimed) // 2] if direct_reclaimed else 0
        ),
        "kswapd_at_direct_reclaim": at_direct,
        "block_requests": {
            k: _quantiles_us(v) | {"pages": request_pages[k]} for k, v in sorted(requests.items())
        },
        "block_plugs": _block_plugs(ev),
        "kswapd_per_page": kswapd_per_page(ev),
        "readahead_page_gap": readahead_page_gap(trace),
        "swap_layout": swap_layout(ev),
    }


def readahead_page_gap(trace: str) -> dict[str, Any]:
    """How far apart one task's read-ahead pages are allocated: the time between each order-0
    `mm_page_alloc` with the read-ahead mask (`__GFP_NORETRY`) and the same task's previous
    one, for pairs less than 200 us apart (two pages of one window; the gap between windows
    holds the disk request and the copy to the reader). The boot traces such allocations only
    in the DMA zone (its `mm_page_alloc` filter), which serves whole windows at a time when
    the DMA32 zone is under its low mark. The median is the figure behind `[cost]
    readahead_alloc`; it includes the cost of tracing each allocation."""
    last: dict[int, float] = {}
    gaps: list[float] = []
    for line in trace.splitlines():
        m = _EVENT.match(line)
        if m is None or m.group(5) != "mm_page_alloc":
            continue
        args = m.group(6)
        if "order=0 " not in args or "__GFP_NORETRY" not in args:
            continue
        pid, t = int(m.group(2)), float(m.group(4))
        if pid in last and t - last[pid] < 200e-6:
            gaps.append(t - last[pid])
        last[pid] = t
    return _quantiles_us(gaps)


def _block_plugs(ev: list[tuple[float, str, str, str]]) -> dict[str, Any]:
    """The block plugs of kswapd and of the other tasks (the workload's, whose plugs open for
    its swap-in reads as well as for its direct reclaim's writes; only write requests are
    counted, so kswapd's are the clean figures): how long each plug held its first write (`block_plug`, at its first request, to the
    task's next `block_rq_issue`: a virtio disk's plug is flushed by issuing its requests
    directly, without a `block_unplug` event) and the pages each flush wrote."""
    groups: dict[str, dict[str, list[float]]] = {}
    opened: dict[str, float] = {}
    current: dict[str, dict[str, list[float]]] = {}
    for t, comm, name, args in ev:
        if name == "block_plug":
            g = groups.setdefault("kswapd" if comm.startswith("kswapd") else "others",
                                  {"open": [], "pages": []})
            opened[comm] = t
            g["pages"].append(0.0)
            current[comm] = g
        elif name == "block_rq_issue" and comm in current:
            req = _block_request(args)
            if req is None or req[1] != "write":
                continue
            g = current[comm]
            if comm in opened:
                g["open"].append(t - opened.pop(comm))
            g["pages"][-1] += req[3]
    out: dict[str, Any] = {}
    for k, g in sorted(groups.items()):
        pages = [p for p in g["pages"] if p > 0]
        out[k] = {"open": _quantiles_us(g["open"]), "flushes": len(pages),
                  "pages_per_flush_median": statistics.median(pages) if pages else 0,
                  "pages_per_flush_mean": round(statistics.fmean(pages), 1) if pages else 0}
    return out


def kswapd_per_page(ev: list[tuple[float, str, str, str]]) -> dict[str, Any]:
    """What a page costs kswapd, by what became of it: each LRU batch of 16 pages or more,
    from its `mm_vmscan_lru_isolate` to its `mm_vmscan_lru_shrink_inactive`, divided by the
    pages it scanned, for the batches whose pages all met one fate: `kept` (all referenced,
    `nr_ref_keep`), `written` (none reclaimed, kept or activated: all swapped out) and `freed`
    (all reclaimed). The medians are the figures behind `[cost] scan_mapped`, `unmap` plus
    `swapout_submit`, and `scan_unmapped` plus `free_page` (docs/VALIDATION.md)."""
    isolated: float | None = None
    cats: dict[str, list[float]] = {"kept": [], "written": [], "freed": []}
    for t, comm, name, args in ev:
        if not comm.startswith("kswapd"):
            continue
        if name == "mm_vmscan_lru_isolate":
            isolated = t
        elif name == "mm_vmscan_lru_shrink_inactive" and isolated is not None:
            f = dict(kv.split("=", 1) for kv in args.split() if "=" in kv)
            scanned = int(f.get("nr_scanned", 0))
            us = (t - isolated) / max(scanned, 1) * 1e6
            isolated = None
            if scanned < 16:
                continue
            keep, rec = int(f.get("nr_ref_keep", 0)), int(f.get("nr_reclaimed", 0))
            act = int(f.get("nr_activate_anon", 0)) + int(f.get("nr_activate_file", 0))
            if keep == scanned:
                cats["kept"].append(us)
            elif rec == scanned:
                cats["freed"].append(us)
            elif rec == keep == act == 0:
                cats["written"].append(us)
    return {k: {"batches": len(v), "median_us": round(statistics.median(v), 1) if v else 0}
            for k, v in cats.items()}


#: The guest's swap disk (`/dev/vda`, the first virtio disk: initramfs.py) as the block
#: tracepoints name it.
SWAP_DEVICE = "254,0"
#: Slots in the aligned block the offset-based swap readahead reads around a fault, at the
#: default `vm.page-cluster` of 3.
SWAP_RA_BLOCK = 8


def swap_layout(ev: list[tuple[float, str, str, str]]) -> dict[str, Any]:
    """The guest's swap device replayed from its block requests (`block_rq_issue` of
    SWAP_DEVICE; a slot is a page, sector / 8, slot 0 the header): a slot is out from the write
    that put a page there until a read takes it back. For each read request its size in pages,
    and for a read of one page how many of the other slots of its aligned 8-slot block hold
    pages that were out: what a readahead window around that fault would have found to read
    (docs/MODEL.md, "Development on the third sitting's boots", 9)."""
    out: set[int] = set()
    sizes = {"1": 0, "2": 0, "3-4": 0, "5-8": 0, "more": 0}
    neighbours = [0] * SWAP_RA_BLOCK
    for _t, _comm, name, args in ev:
        if name != "block_rq_issue":
            continue
        req = _block_request(args)
        if req is None or req[0] != SWAP_DEVICE:
            continue
        _dev, rw, sector, pages = req
        first = int(sector) // 8
        slots = range(first, first + pages)
        if rw == "write":
            out.update(slots)
            continue
        sizes["1" if pages == 1 else "2" if pages == 2 else "3-4" if pages <= 4
              else "5-8" if pages <= 8 else "more"] += 1
        if pages == 1:
            block = first - first % SWAP_RA_BLOCK
            neighbours[sum(1 for x in range(block, block + SWAP_RA_BLOCK)
                           if x not in (first, 0) and x in out)] += 1
        out.difference_update(slots)
    singles = sum(neighbours)
    return {
        "read_requests_by_pages": sizes,
        "one_page_reads_by_out_neighbours": neighbours,
        "one_page_read_out_neighbours_mean": (
            round(sum(i * n for i, n in enumerate(neighbours)) / singles, 2) if singles else None
        ),
    }


def _block_request(args: str) -> tuple[str, str, str, int] | None:
    """Device (`major,minor`), direction, start sector and size in pages of a `block_rq_issue`
    or `block_rq_complete` line (`254,0 WS 131072 () 2048 + 256 [kswapd0]`); None for
    requests without a sector range (flushes)."""
    f = args.split()
    if len(f) < 2 or "+" not in f:
        return None
    i = f.index("+")
    rw = "write" if "W" in f[1] else "read" if "R" in f[1] else None
    if rw is None or i == 0 or i + 1 >= len(f) or not f[i + 1].isdigit():
        return None
    return f[0], rw, f[i - 1], int(f[i + 1]) // 8


def workload_time(trace: str, prefix: str = "reclaimlab-w") -> dict[str, Any]:
    """Where each workload task's time went, from a boot that traced every task's scheduler
    events (`scripts/validate-trace.py --tasks`; the standard boot traces kswapd0's alone): on
    its vCPU (`sched_switch` in to out), waiting for I/O (switched out in state D until its
    `sched_wakeup`), runnable but preempted (switched out in state R until switched in), and
    inside direct reclaim (`mm_vmscan_direct_reclaim_begin` to `_end`, on or off the CPU). The
    time on the vCPU and in direct reclaim is also split at the task's first swap-in read (a
    `block_rq_issue` read of the swap disk, 254,0): a first pass that only faults pages in,
    then one that swaps them back. Divided by the pages each phase touched (the vmstat delta),
    these are the figures behind the workload's `[cost]` (validate/costs.py). Tasks by pid,
    busiest first."""
    tasks: dict[int, dict[str, Any]] = {}
    on_since: dict[int, float] = {}
    off_since: dict[int, tuple[float, str]] = {}
    direct_since: dict[int, float] = {}
    first_swap_in: dict[int, float] = {}
    t0: float | None = None

    def task(pid: int, comm: str) -> dict[str, Any]:
        return tasks.setdefault(pid, {
            "comm": comm, "on_cpu_s": 0.0, "on_cpu_before_swap_in_s": 0.0, "io_wait_s": 0.0,
            "preempted_s": 0.0, "direct_reclaim_s": 0.0, "direct_reclaim_before_swap_in_s": 0.0,
            "direct_reclaims": 0, "swap_in_reads": 0,
        })

    for line in trace.splitlines():
        m = _EVENT.match(line)
        if m is None:
            continue
        comm, pid, t, name, args = (m.group(1).strip(), int(m.group(2)), float(m.group(4)),
                                    m.group(5), m.group(6))
        if t0 is None:
            t0 = t
        if name == "sched_switch":
            f = dict(re.findall(r"(\w+)=(\S+)", args))
            prev, nxt = int(f.get("prev_pid", -1)), int(f.get("next_pid", -1))
            if f.get("prev_comm", "").startswith(prefix):
                rec = task(prev, f["prev_comm"])
                if prev in on_since:
                    spent = t - on_since.pop(prev)
                    rec["on_cpu_s"] += spent
                    if prev not in first_swap_in:
                        rec["on_cpu_before_swap_in_s"] += spent
                off_since[prev] = (t, f.get("prev_state", "S")[:1])
            if f.get("next_comm", "").startswith(prefix):
                rec = task(nxt, f["next_comm"])
                on_since[nxt] = t
                since = off_since.pop(nxt, None)
                if since is not None and since[1] == "R":
                    rec["preempted_s"] += t - since[0]
        elif name == "sched_wakeup":
            f = dict(re.findall(r"(\w+)=(\S+)", args))
            woken = int(f.get("pid", -1))
            since = off_since.get(woken)
            if since is not None and since[1] == "D":
                task(woken, f.get("comm", "?"))["io_wait_s"] += t - since[0]
                off_since[woken] = (t, "R")  # runnable from here until switched in
        elif comm.startswith(prefix):
            rec = task(pid, comm)
            if name == "mm_vmscan_direct_reclaim_begin":
                direct_since[pid] = t
            elif name == "mm_vmscan_direct_reclaim_end" and pid in direct_since:
                spent = t - direct_since.pop(pid)
                rec["direct_reclaim_s"] += spent
                if pid not in first_swap_in:
                    rec["direct_reclaim_before_swap_in_s"] += spent
                rec["direct_reclaims"] += 1
            elif name == "block_rq_issue":
                req = _block_request(args)
                if req is not None and req[0] == "254,0" and req[1] == "read":
                    rec["swap_in_reads"] += 1
                    first_swap_in.setdefault(pid, t)
    out = {}
    for pid, rec in sorted(tasks.items(), key=lambda kv: -kv[1]["on_cpu_s"]):
        rec = {k: round(v, 4) if isinstance(v, float) else v for k, v in rec.items()}
        if pid in first_swap_in:
            rec["first_swap_in_at_s"] = round(first_swap_in[pid] - (t0 or 0.0), 4)
        out[str(pid)] = rec
    return out
