"""``reclaimlab lru TRACE --capacity N``: a plain single-list cache over a trace.

The textbook LRU (or FIFO, or CLOCK) of a fixed number of objects, with no watermarks, daemons or
second list: the same policy libCacheSim implements, run over the same trace reader as trace
workloads. It is the outside check of reclaimlab's trace reading and page-replacement machinery,
and the "ideal" baseline to put beside the kernel's two-list LRU.
"""

from __future__ import annotations

import argparse
import json
import sys

from .. import api
from ..tables import key_value_table

NAME = "lru"
HELP = "replay a trace through a fixed-capacity LRU, FIFO or CLOCK cache"
DESCRIPTION = (
    "Replay a page-access trace (libCacheSim oracleGeneral or reclaimlab CSV, optionally .zst) "
    "through a single-list cache of CAPACITY objects and print requests, misses, miss ratio and "
    "seconds. Every object counts as one (libCacheSim's ignore_obj_size); oracleGeneral records of "
    "size 0 are skipped, as libCacheSim's reader does. For a CSV trace each record requests its "
    "object (the offset is not used)."
)

POLICIES = ("lru", "fifo", "clock")


def _capacity(text: str) -> int:
    try:
        value = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if not 1 <= value <= 2**32 - 2:
        raise argparse.ArgumentTypeError(f"capacity must be between 1 and {2**32 - 2} objects, not {value}")
    return value


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("trace", metavar="TRACE", help="trace file (.oracleGeneral, .bin or .csv, optionally .zst)")
    p.add_argument("--capacity", type=_capacity, required=True, metavar="N", help="cache capacity in objects")
    p.add_argument("--policy", choices=POLICIES, default="lru", help="replacement policy (default: lru)")
    p.add_argument(
        "--format",
        choices=("oracle", "csv"),
        help="trace format (default: from the file name)",
    )
    p.add_argument(
        "--compression",
        choices=("none", "zstd"),
        help="compression (default: zstd if the name ends in .zst)",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help='print {"requests", "misses", "miss_ratio", "seconds"} as JSON',
    )


def main(args: argparse.Namespace) -> int:
    r = api.lru(args.trace, args.capacity, policy=args.policy, format=args.format, compression=args.compression)
    if args.json:
        out = {k: r[k] for k in ("requests", "misses", "miss_ratio", "seconds")}
        sys.stdout.write(json.dumps(out) + "\n")
        return 0
    rows = [
        ("trace", args.trace),
        ("policy", r["policy"]),
        ("capacity", r["capacity"]),
        ("requests", r["requests"]),
        ("misses", r["misses"]),
        ("miss ratio", f"{r['miss_ratio']:.6f}"),
        ("seconds", f"{r['seconds']:.3f}"),
    ]
    if r["skipped"]:
        rows.insert(4, ("skipped (size 0)", r["skipped"]))
    sys.stdout.write(key_value_table(rows))
    return 0
