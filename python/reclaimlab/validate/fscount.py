"""The counters a scenario with `[fs]` scores beside the vmstat rows (docs/VALIDATION.md,
"Filesystem and machine-size scenarios"): the slab the filesystem's workloads leave, from
`/proc/meminfo` and `/proc/slabinfo`, the real one as its change over the workload, the
simulated one at the end of the run (the model's slab starts empty: the booted guest's own is
in `kernel_used`).

A row's name is what the tables show: `SReclaimable`, `SUnreclaim` (kB), `slab dentry`,
`slab xfs_inode` or `slab ext4_inode_cache` (active objects).
"""

from __future__ import annotations

from typing import Any

# vmstat counters the model moves only with [fs] (its superblock shrinker and inode LRU);
# compared for those scenarios alone (NOT_MODELLED says why the others lack them).
VMSTAT = ("slabs_scanned", "kswapd_inodesteal", "pginodesteal")
MEMINFO = ("SReclaimable", "SUnreclaim")
# The inode cache of each filesystem, as /proc/slabinfo names it (6.1).
INODE_CACHE = {"xfs": "xfs_inode", "ext4": "ext4_inode_cache"}
SLAB_PREFIX = "slab "


def slab_caches(fs_type: str) -> tuple[str, ...]:
    return ("dentry", INODE_CACHE[fs_type])


def rows(fs_type: str) -> tuple[str, ...]:
    """The names of the state rows, in table order."""
    return MEMINFO + tuple(SLAB_PREFIX + c for c in slab_caches(fs_type))


def parse_slabinfo(text: str) -> dict[str, int]:
    """/proc/slabinfo (version 2.1) as cache name -> active objects; the header lines and
    anything not shaped as a cache's line are skipped."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        fields = line.split()
        if len(fields) > 2 and not line.startswith(("slabinfo", "#")) and fields[1].isdigit():
            out[fields[0]] = int(fields[1])
    return out


def parse_meminfo(text: str) -> dict[str, int]:
    """/proc/meminfo as name -> kB (HugePages_* counts are kept as they are): the guest's
    snapshots (validate/guest.py) and the model's `meminfo` output file alike."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        name, sep, rest = line.partition(":")
        fields = rest.split()
        if sep and fields and fields[0].isdigit():
            out[name.strip()] = int(fields[0])
    return out


def real(rep: dict[str, Any], fs_type: str) -> dict[str, int] | None:
    """One kept boot's state rows: after the workload less before it; None when the boot
    lacks what they need (a boot from before slabinfo was captured)."""
    if "slabinfo_before" not in rep or "slabinfo_after" not in rep:
        return None
    before, after = rep["meminfo_before"], rep["meminfo_after"]
    if not all(k in before and k in after for k in MEMINFO):
        return None
    out = {k: after[k] - before[k] for k in MEMINFO}
    sb, sa = rep["slabinfo_before"], rep["slabinfo_after"]
    for c in slab_caches(fs_type):
        out[SLAB_PREFIX + c] = sa.get(c, 0) - sb.get(c, 0)
    return out


def simulated(extra_files: dict[str, str], fs_type: str) -> dict[str, int]:
    """One run's state rows from its `meminfo` and `slabinfo` outputs at the end of the run."""
    mem = parse_meminfo(extra_files.get("meminfo", ""))
    slab = parse_slabinfo(extra_files.get("slabinfo", ""))
    out = {k: mem.get(k, 0) for k in MEMINFO}
    for c in slab_caches(fs_type):
        out[SLAB_PREFIX + c] = slab.get(c, 0)
    return out
