"""What a trace of the workload's swap-ins says (docs/MODEL.md item 10): the kprobe events a
boot of `scripts/validate-trace.py --swapin` records on the swap-in path of the guest's 6.1
kernel (initramfs.SWAPIN_PROBES), put back into the order of the workload's faults.

The guest's swap disk is rotational, so its kernel reads ahead by slot
(`swap_cluster_readahead`): one global hit counter, which a swap-cache lookup that clears a
page's PG_readahead raises and each miss takes back to 0, and the last window, which the next
may not undercut by more than half. A fault is a lookup with a VMA (`do_swap_page`'s; shmem
looks up with none): a hit (the page in the swap cache: a minor fault), a readahead hit when
the lookup raised the hit counter, or a miss, whose readahead state (`swapin_cluster`) and
pages read (`swapin_read`) follow it. The window a miss chose is the last window the next
miss's state holds (the function that chooses it is inlined: no probe sees its result). A
lookup of the same slot by the same task straight after its own fault is that fault retried
(the fault waited for the page's read with the mmap lock dropped) and counts as no fault."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from .. import api
from .ktrace import task_events

EVENTS = ("swapin_lookup", "swapin_cluster", "swapin_read")
# x86-64's swp_entry_t: the device's type above bit 58 (5 bits under the xarray's value bit),
# the slot below.
_SLOT_MASK = (1 << 58) - 1
_ARG = re.compile(r"(\w+)=(0x[0-9a-fA-F]+|-?\d+)")
_LOST = re.compile(r"entries-in-buffer/entries-written: (\d+)/(\d+)")
# Histogram buckets (upper bounds, inclusive) for runs of misses and distances between faults.
_RUN_BUCKETS = (0, 1, 2, 3, 4, 8, 16, 32, 64)
_DIST_BUCKETS = (0, 1, 7, 63, 511)
_GAP_CAP = 8


class SwapinTraceError(ValueError):
    """The text holds no swap-in trace to summarise."""


def _args(text: str) -> dict[str, int]:
    return {k: int(v, 0) for k, v in _ARG.findall(text)}


def window_rule(prev_slot: int, slot: int, hits: int, last_win: int, max_pages: int = 8) -> int:
    """The window 6.1's offset-based readahead chooses for a miss on ``slot``
    (`__swapin_nr_pages`, docs/MODEL.md item 10): hits + 2 pages rounded up to a power of two
    of at least 4; with no hit, 2 pages when the miss is next to ``prev_slot`` and 1 otherwise;
    at most ``max_pages`` (2^page-cluster) and never below half of ``last_win``. The engine's
    own function decides, so a guest's window judged by this rule is judged by the model's."""
    return api.swapin_nr_pages(prev_slot, slot, hits, max_pages, last_win)


def _bucket(value: int, bounds: tuple[int, ...]) -> str:
    lo = 0
    for b in bounds:
        if value <= b:
            return str(b) if lo == b else f"{lo}-{b}"
        lo = b + 1
    return f"{lo}+"


def _histogram(values: list[int], bounds: tuple[int, ...]) -> dict[str, int]:
    keys = [_bucket(b, bounds) for b in bounds] + [f"{bounds[-1] + 1}+"]
    c = Counter(_bucket(v, bounds) for v in values)
    return {k: c[k] for k in keys if c[k]}


def aligned_span(slots: list[int]) -> int:
    """The smallest aligned power-of-two block of slots holding all of ``slots`` (what
    scripts/swap-windows.py takes for a window's size from the block reads alone)."""
    lo, hi, w = min(slots), max(slots), 1
    while (lo & ~(w - 1)) + w - 1 < hi:
        w *= 2
    return w


def faults(trace: str) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The workload's swap faults in the trace's order, each a dict: ``t``, ``pid``, ``slot``,
    ``page`` (the faulting address's page), ``kind`` ("miss", "ra_hit" or "hit"), for a miss
    the readahead state the window was chosen from (``seen_hits``, ``prev_slot``,
    ``last_win``), the window (``win``: the next miss's ``last_win``; the last miss has none)
    and the slots read (``reads``); with counts of what was set aside (``retries``,
    ``other_lookups``: lookups with no VMA, shmem's, ``vma_ra_set``: lookups whose VMA had a
    VMA-readahead state, ``lookups``).

    A lookup is a miss when the same task's next event is the readahead's (``swapin_cluster``),
    else a hit; a hit took a PG_readahead flag when the hit counter read at the next event that
    reads it (any task's) is one more than at the lookup."""
    seq: list[dict[str, Any]] = []
    open_lookup: dict[str, dict[str, Any] | None] = {}  # each task's last lookup
    last: dict[str, dict[str, Any]] = {}  # each task's last fault, which a retry repeats
    waiting: list[dict[str, Any]] = []  # lookups that wait for the next reading of the counter
    chose: dict[str, Any] | None = None  # the last miss, whose window the next one tells
    n = Counter()
    for t, _comm, pid, name, text in task_events(trace):
        if name not in EVENTS:
            continue
        a = _args(text)
        if name != "swapin_read":
            for f in waiting:
                f["_after"] = a.get("hits", 0)
            waiting = []
        if name == "swapin_lookup":
            n["lookups"] += 1
            open_lookup[pid] = None
            if not a.get("vma"):
                n["other_lookups"] += 1
                continue
            n["vma_ra_set"] += a.get("vma_ra", 0) != 0
            slot, page = a.get("entry", 0) & _SLOT_MASK, a.get("addr", 0) >> 12
            prev = last.get(pid)
            if prev is not None and prev["slot"] == slot and prev["page"] == page:
                n["retries"] += 1
                continue
            f: dict[str, Any] = {"t": t, "pid": pid, "slot": slot, "page": page, "kind": "hit",
                                 "_before": a.get("hits", 0)}
            seq.append(f)
            last[pid] = open_lookup[pid] = f
            waiting.append(f)
            continue
        f = open_lookup.get(pid)
        if f is None:
            continue
        if name == "swapin_cluster" and "reads" not in f:
            f.update(kind="miss", reads=[], seen_hits=a.get("hits", 0),
                     prev_slot=a.get("prev", 0), last_win=a.get("last", 0))
            if chose is not None:
                chose["win"] = f["last_win"]
            chose = f
        elif name == "swapin_read" and "reads" in f:
            f["reads"].append(a.get("entry", 0) & _SLOT_MASK)
    # A lookup's kind shows in the hit counter of the next event; the trace's last lookups
    # have none, so a readahead hit among them reads as a plain hit (counted as undetermined).
    n["undetermined"] = len(waiting)
    for f in seq:
        after = f.pop("_after", None)
        before = f.pop("_before")
        if f["kind"] == "hit" and after == before + 1:
            f["kind"] = "ra_hit"
    return seq, dict(n)


def lost_events(trace: str) -> int:
    """Events the guest's trace buffer overwrote (its header's entries written less those
    still in the buffer): a nonzero count means the record of faults is not whole."""
    m = _LOST.search(trace)
    return int(m.group(2)) - int(m.group(1)) if m else 0


def _gaps(seq: list[dict[str, Any]]) -> tuple[list[int], list[int], list[int], int, int]:
    """Readahead hits in each gap between two consecutive misses, the runs of misses that no
    hit of any kind breaks, how many misses back the window that read each readahead hit was
    (0: the hit came before the next miss), and the gaps with two readahead hits or more, and
    those of them whose hits all came from one window."""
    gaps, runs, ages = [], [], []
    since: int | None = None
    run = misses = clumped = one_window = 0
    read_by: dict[int, int] = {}  # slot -> the miss (its number) whose window read it
    sources: set[int] = set()
    for f in seq:
        if f["kind"] == "miss":
            if since is not None:
                gaps.append(since)
                clumped += since >= 2
                one_window += since >= 2 and len(sources) == 1
            since, run, sources = 0, run + 1, set()
            for slot in f["reads"]:
                if slot != f["slot"]:
                    read_by[slot] = misses
            misses += 1
            continue
        if f["kind"] == "ra_hit":
            if since is not None:
                since += 1
            if f["slot"] in read_by:
                ages.append(misses - 1 - read_by[f["slot"]])
                sources.add(read_by.pop(f["slot"]))
        if run:
            runs.append(run)
        run = 0
    if run:
        runs.append(run)
    return gaps, runs, ages, clumped, one_window


def _within_each_second(seq: list[dict[str, Any]]) -> float:
    """The share of misses after at least one readahead hit that hits arriving at random
    would give, second by second: the sum over each second of its misses times x / (1 + x)
    for that second's readahead hits a miss, over all misses (how much of the shortfall a
    hit rate that changes over the run explains)."""
    by_s: dict[int, Counter] = {}
    for f in seq:
        by_s.setdefault(int(f["t"]), Counter())[f["kind"]] += 1
    m = sum(c["miss"] for c in by_s.values())
    expected = sum(c["miss"] * (c["ra_hit"] / c["miss"]) / (1 + c["ra_hit"] / c["miss"])
                   for c in by_s.values() if c["miss"])
    return expected / max(m, 1)


def _by_stretch(seq: list[dict[str, Any]], t0: float, span_s: int = 5) -> list[dict[str, Any]]:
    """The run in stretches of ``span_s`` seconds from ``t0``: misses, readahead hits a miss, the share of misses whose window was 4 or
    more, the windows of 2 or more and the readahead pages they read (a window), and the share
    of those pages a later fault found (read in the stretch, found at any time): the two
    factors of the hits a window opened brings, which keep the window open when above one."""
    rows: dict[int, Counter] = {}
    read_in: dict[int, int] = {}
    for f in seq:
        k = int((f["t"] - t0) // span_s) * span_s
        c = rows.setdefault(k, Counter())
        if f["kind"] == "miss":
            w = f.get("win", 0)
            c["misses"] += 1
            c["known"] += w > 0
            c["wide"] += w >= 4
            c["open"] += w >= 2
            for slot in f["reads"]:
                if slot != f["slot"]:
                    c["ahead"] += 1
                    read_in[slot] = k
        elif f["kind"] == "ra_hit":
            c["ra_hits"] += 1
            if f["slot"] in read_in:
                rows[read_in.pop(f["slot"])]["used"] += 1
    return [{"from_s": k, "misses": c["misses"],
             "readahead_hits_per_miss": round(c["ra_hits"] / max(c["misses"], 1), 3),
             "windows_of_4_or_more": round(c["wide"] / max(c["known"], 1), 3),
             "windows_of_2_or_more": c["open"],
             "readahead_pages_a_window": round(c["ahead"] / max(c["open"], 1), 2),
             "readahead_pages_found": round(c["used"] / max(c["ahead"], 1), 2)}
            for k, c in sorted(rows.items())]


def swapins(trace: str, max_pages: int = 8, start_s: float | None = None) -> dict[str, Any]:
    """The summary kept in <scenario>.swapin.json: the workload's faults (misses, readahead
    hits, other hits, retries set aside), the windows chosen by size and whether each is the
    rule's (window_rule on the state read at the miss, ``max_pages`` = 2^page-cluster), the
    readahead hits in each gap between two misses and the runs of misses (histograms), how
    many misses back each readahead hit's window was, the distance from each fault to the one
    before (in slots and in pages of the address space), the pages each window read and the
    aligned span of their slots (what the block reads show of the window), and the shares that
    answer item 10: windows of 4 or more per miss, misses after at least one readahead hit,
    and x / (1 + x) for x readahead hits a miss arriving at random, over the run and second by
    second; and the run in stretches of 5 s from ``start_s`` (the workload's start, the
    guest's uptime; the trace's first event when not given: _by_stretch). Raises
    SwapinTraceError when the trace holds no swap-in fault."""
    seq, counts = faults(trace)
    events = task_events(trace)
    misses = [f for f in seq if f["kind"] == "miss"]
    if not misses:
        raise SwapinTraceError(
            "the trace holds no swap-in fault of the workload (no swapin_lookup and "
            "swapin_cluster events of a fault): boot it with `scripts/validate-trace.py "
            "SCENARIO --swapin`")
    kinds = Counter(f["kind"] for f in seq)
    ra_hits = kinds["ra_hit"]
    hits = [f for f in seq if f["kind"] != "miss"]
    chosen = [f for f in misses if "win" in f]
    windows = Counter(f["win"] for f in chosen)
    with_state = [f for f in chosen if "seen_hits" in f]
    agrees = sum(window_rule(f["prev_slot"], f["slot"], f["seen_hits"], f["last_win"],
                             max_pages) == f["win"] for f in with_state)
    gaps, runs, ages, clumped, one_window = _gaps(seq)
    after_hit = sum(g > 0 for g in gaps)
    x = ra_hits / len(misses)
    slot_d = [abs(b["slot"] - a["slot"]) for a, b in zip(seq, seq[1:])]
    page_d = [abs(b["page"] - a["page"]) for a, b in zip(seq, seq[1:])]
    miss_d = [abs(b["slot"] - a["slot"]) for a, b in zip(misses, misses[1:])]
    # What each window read: its pages, and the aligned block their slots span.
    read_by_win: dict[int, Counter] = {}
    span_by_win: dict[int, Counter] = {}
    ahead: set[int] = set()
    for f in chosen:
        read_by_win.setdefault(f["win"], Counter())[len(f["reads"])] += 1
        if f["reads"]:
            span_by_win.setdefault(f["win"], Counter())[aligned_span(f["reads"])] += 1
    for f in misses:
        ahead.update(s for s in f["reads"] if s != f["slot"])
    used = sum(f["kind"] == "ra_hit" and f["slot"] in ahead for f in hits)
    apparent = sum(aligned_span(f["reads"]) in (4, 8) for f in misses
                   if len(f["reads"]) > 1)
    opened = sum(c for w, c in windows.items() if w >= 4)
    return {
        "faults": len(seq),
        "misses": len(misses),
        "readahead_hits": ra_hits,
        "other_hits": kinds["hit"],
        "retries": counts.get("retries", 0),
        "undetermined": counts.get("undetermined", 0),
        "lookups_not_from_do_swap_page": counts.get("other_lookups", 0),
        "lookups_with_vma_readahead_state": counts.get("vma_ra_set", 0),
        "lost_events": lost_events(trace),
        "readahead_hits_per_miss": round(x, 4),
        "windows": {str(w): windows[w] for w in sorted(windows)},
        "windows_as_the_rule_says": [agrees, len(with_state)],
        "hits_seen_by_the_rule_at_a_miss": _histogram(
            [f["seen_hits"] for f in misses if "seen_hits" in f], tuple(range(_GAP_CAP))),
        "readahead_hits_per_gap": _histogram(gaps, tuple(range(_GAP_CAP))),
        "gaps_with_2_or_more_readahead_hits": [clumped, one_window],
        "readahead_hit_misses_after_its_window": _histogram(ages, _DIST_BUCKETS),
        "miss_runs": _histogram(runs, _RUN_BUCKETS),
        "slots_from_previous_fault": _histogram(slot_d, _DIST_BUCKETS),
        "pages_from_previous_fault": _histogram(page_d, _DIST_BUCKETS),
        "slots_from_previous_miss": _histogram(miss_d, _DIST_BUCKETS),
        "pages_read_by_window": {str(w): dict(sorted(read_by_win[w].items()))
                                 for w in sorted(read_by_win)},
        "aligned_span_of_reads_by_window": {str(w): dict(sorted(span_by_win[w].items()))
                                            for w in sorted(span_by_win)},
        "readahead_pages_read": len(ahead),
        "readahead_pages_hit": used,
        "share": {
            "windows_of_4_or_more_per_miss": round(opened / max(len(chosen), 1), 4),
            "misses_after_a_readahead_hit": round(after_hit / max(len(gaps), 1), 4),
            "at_random_arrival": round(x / (1 + x), 4),
            "at_random_arrival_within_each_second": round(_within_each_second(seq), 4),
            "reads_spanning_4_or_8_per_miss": round(apparent / len(misses), 4),
        },
        "by_5s": _by_stretch(seq, start_s if start_s is not None else events[0][0]),
    }
