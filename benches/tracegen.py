"""Synthetic page-access traces in libCacheSim's oracleGeneral format.

Used by ``lru_vs_libcachesim.py`` and to make the example trace in ``scenarios/traces/``::

    python benches/tracegen.py --alpha 0.9 --objects 48000 --requests 300000 \\
        --rate 1000 --seed 7 --out scenarios/traces/zipf-db.oracleGeneral
    zstd -19 --rm scenarios/traces/zipf-db.oracleGeneral

Records are ``{time u32, obj_id u64, obj_size u32, next_access_vtime i64}``, little-endian, 24
bytes each. Object ids are a random permutation of 1..N (so popularity is not id order); the
``next_access_vtime`` field is the index of the object's next request, or -1 if there is none,
as in libCacheSim's oracle traces. The output is a pure function of the arguments.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ORACLE = np.dtype(
    [("time", "<u4"), ("obj_id", "<u8"), ("obj_size", "<u4"), ("next_access_vtime", "<i8")]
)
assert ORACLE.itemsize == 24

_CHUNK = 1 << 22


def zipf_ids(objects: int, requests: int, alpha: float, seed: int = 1) -> np.ndarray:
    """``requests`` object ids drawn from Zipf(``alpha``) over ``objects`` objects (exact
    inverse-CDF sampling of the finite distribution, any alpha >= 0)."""
    if objects < 1 or requests < 0 or alpha < 0:
        raise ValueError("need objects >= 1, requests >= 0, alpha >= 0")
    rng = np.random.default_rng(seed)
    weights = np.arange(1, objects + 1, dtype=np.float64) ** -alpha
    cdf = np.cumsum(weights)
    cdf /= cdf[-1]
    perm = rng.permutation(objects).astype(np.uint64) + 1
    out = np.empty(requests, dtype=np.uint64)
    for start in range(0, requests, _CHUNK):
        n = min(_CHUNK, requests - start)
        idx = np.searchsorted(cdf, rng.random(n), side="right")
        np.minimum(idx, objects - 1, out=idx)
        out[start : start + n] = perm[idx]
    return out


def next_access(ids: np.ndarray) -> np.ndarray:
    """For each request, the index of the next request for the same object, or -1."""
    n = len(ids)
    nxt = np.full(n, -1, dtype=np.int64)
    if n < 2:
        return nxt
    order = np.argsort(ids, kind="stable")
    same = ids[order[1:]] == ids[order[:-1]]
    nxt[order[:-1][same]] = order[1:][same]
    return nxt


def records(
    ids: np.ndarray,
    sizes: np.ndarray | int = 4096,
    rate: int | None = None,
) -> np.ndarray:
    """Structured oracleGeneral records for ``ids``. ``rate``: requests per second of trace
    time (timestamps are seconds); None puts every request at time 0."""
    rec = np.zeros(len(ids), dtype=ORACLE)
    if rate:
        rec["time"] = np.arange(len(ids), dtype=np.uint64) // rate
    rec["obj_id"] = ids
    rec["obj_size"] = sizes
    rec["next_access_vtime"] = next_access(ids)
    return rec


def write_oracle(path: str | Path, rec: np.ndarray) -> Path:
    path = Path(path)
    rec.astype(ORACLE, copy=False).tofile(path)
    return path


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Write a Zipf trace in libCacheSim's oracleGeneral format.")
    p.add_argument("--alpha", type=float, default=1.0, help="Zipf exponent (default 1.0)")
    p.add_argument("--objects", type=int, default=1_000_000, help="distinct objects (default 1M)")
    p.add_argument("--requests", type=int, default=10_000_000, help="requests (default 10M)")
    p.add_argument("--size", type=int, default=4096, help="object size in bytes (default 4096)")
    p.add_argument("--rate", type=int, default=None, help="requests per second of trace time (default: all at time 0)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", required=True, help="output file")
    a = p.parse_args(argv)
    ids = zipf_ids(a.objects, a.requests, a.alpha, a.seed)
    out = write_oracle(a.out, records(ids, a.size, a.rate))
    print(f"wrote {a.requests} requests over {len(np.unique(ids))} objects to {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
