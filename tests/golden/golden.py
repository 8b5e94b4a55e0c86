"""Digests of the engine's deterministic outputs, pinned across refactors.

For every example scenario at seeds 1 and 7, and every run of ``reproduce kswapd-highorder``
(seed 1), the SHA-256 of ``vmstat``, ``zoneinfo``, the ``headline`` object of summary.json
(canonical JSON) and, where recorded, the kernel-format ``trace``. ``digests.json`` beside this
file holds the pinned values; ``python tests/golden/golden.py --write`` regenerates it (only for a
deliberate change of results, listed with its reason in the change's notes).

The reproduction runs' traces are large (hundreds of MB in total); they are pinned too, but the
test suite checks them only when ``RECLAIMLAB_GOLDEN_TRACES=1`` (see docs/TESTING.md).
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
DIGESTS = HERE / "digests.json"
SEEDS = (1, 7)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def digest(result, with_trace: bool) -> dict[str, str]:
    out = {
        "vmstat": _sha(result.vmstat_text),
        "zoneinfo": _sha(result.zoneinfo),
        "headline": _sha(json.dumps(result.summary["headline"], sort_keys=True)),
    }
    if with_trace:
        out["trace"] = _sha(result.trace)
    return out


def example_runs():
    """(key, scenario path, seed) of every example scenario run."""
    for path in sorted((ROOT / "scenarios").glob("*.toml")):
        for seed in SEEDS:
            yield f"{path.stem}@{seed}", path, seed


def reproduce_runs(workdir: Path):
    """(key, scenario dict, seed) of every reproduce kswapd-highorder run, seed 1."""
    from reclaimlab.experiments import kswapd_highorder as k

    for sit in k.SITUATIONS:
        if sit.prepare is not None:
            sit.prepare(workdir, 1)
        for _, policy in sit.policies:
            yield f"kswapd-highorder/{sit.key}/{policy}@1", sit.scenario(policy, 1, workdir), 1


def compute(keys=None, reproduce_traces: bool = True) -> dict[str, dict[str, str]]:
    import reclaimlab

    out: dict[str, dict[str, str]] = {}
    for key, path, seed in example_runs():
        if keys is not None and key not in keys:
            continue
        r = reclaimlab.run(path, seed=seed, trace="kernel")
        out[key] = digest(r, True)
    with tempfile.TemporaryDirectory() as d:
        for key, scn, seed in reproduce_runs(Path(d)):
            if keys is not None and key not in keys:
                continue
            r = reclaimlab.run(scn, seed=seed, trace="kernel" if reproduce_traces else None)
            out[key] = digest(r, reproduce_traces)
            del r
    return out


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        d = compute()
        DIGESTS.write_text(json.dumps(d, indent=1, sort_keys=True) + "\n")
        print(f"wrote {len(d)} digests to {DIGESTS}")
    elif sys.argv[1:] == ["--check"]:
        pinned = json.loads(DIGESTS.read_text())
        got = compute()
        bad = [k for k in pinned if pinned[k] != got.get(k)]
        for k in bad:
            diff = [f for f in pinned[k] if pinned[k][f] != got.get(k, {}).get(f)]
            print(f"DIFFERS {k}: {', '.join(diff)}")
        print(f"{len(pinned) - len(bad)} of {len(pinned)} runs identical")
        sys.exit(1 if bad else 0)
    else:
        print(__doc__)
        sys.exit(2)
