"""A scenario as the guest runs it: the VM's shape, the sysctls it sets, the workload program's
spec text, and the list of what a real guest cannot mirror.

The scenario is read with :mod:`tomllib` after the simulator's own parser has accepted it
(:func:`reclaimlab.api.validate`), so every value here is already known to be well formed; the
sizes and durations are converted with the same units the scenario reference documents.
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import api
from . import sittings
from .errors import ValidateError

_SIZE_UNITS = {
    "": 1, "B": 1,
    "K": 1 << 10, "KiB": 1 << 10, "M": 1 << 20, "MiB": 1 << 20,
    "G": 1 << 30, "GiB": 1 << 30, "T": 1 << 40, "TiB": 1 << 40,
    "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
}
_TIME_UNITS = {"ns": 1, "us": 10**3, "ms": 10**6, "s": 10**9, "min": 60 * 10**9, "h": 3600 * 10**9}
_QUANTITY = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*$")

# Scenario sysctls the guest writes to /proc/sys/vm (same names there).
SYSCTLS = (
    "swappiness", "min_free_kbytes", "watermark_scale_factor", "watermark_boost_factor",
    "lowmem_reserve_ratio", "compaction_proactiveness", "vfs_cache_pressure",
)
WRITEBACK_SYSCTLS = ("dirty_ratio", "dirty_background_ratio")
# The page-replacement algorithms a guest runs ([policy] lru; `validate --lru`).
LRUS = ("classic", "mglru")

# Where the files of [workload.file] live in the guest (the ext4 data disk's mount point).
DATA_MOUNT = "/data"
# A scenario with [fs] gets a fresh data disk of this size with the scenario's filesystem (its
# geometry, [fs] ags, is that of this size: docs/VALIDATION.md, "Filesystem scenarios").
FS_IMAGE_BYTES = 2 << 30
# Defaults of the model's [workload.fsmark] and [workload.stat] keys the guest mirrors
# (docs/scenario-reference.md).
FSMARK_DEFAULTS = {"threads": 1, "files": 100000, "files_per_dir": 10000, "file_size": 0,
                   "think": 0, "rss": "16MiB"}
STAT_DEFAULTS = {"threads": 1, "passes": 1, "think": 0}


def size_bytes(value: Any) -> int:
    if isinstance(value, int):
        return value
    m = _QUANTITY.match(str(value))
    if not m or m.group(2) not in _SIZE_UNITS:
        raise ValueError(f"not a size: {value!r}")
    return int(float(m.group(1)) * _SIZE_UNITS[m.group(2)])


def duration_ns(value: Any) -> int:
    if value == 0 or value == "0":
        return 0
    m = _QUANTITY.match(str(value))
    if not m or m.group(2) not in _TIME_UNITS:
        raise ValueError(f"not a duration: {value!r}")
    return int(float(m.group(1)) * _TIME_UNITS[m.group(2)])


@dataclass
class GuestSpec:
    """What one boot of the guest needs to know about a scenario."""

    name: str
    path: Path
    content_hash: str
    ram_bytes: int
    cpus: int
    swap_bytes: int
    thp: bool
    machine: str
    sysctls: dict[str, str]
    data_bytes: int
    workload_spec: str
    #: What the guest cannot do as the scenario says, one sentence each.
    not_mirrored: list[str] = field(default_factory=list)
    #: The scenario as tomllib read it (the simulator side rewrites its [host]).
    document: dict[str, Any] = field(default_factory=dict)
    #: Where its kept boots are (validate/sittings.py): a sitting's real/, or the one beside it.
    real_dir: Path = Path("real")
    #: "calibration", "prediction", or None (a sitting's own scenario, a balloon one).
    role: str | None = None
    #: The data disk's filesystem when the scenario has [fs] ("xfs" or "ext4"), which the
    #: model then simulates; None: the plain ext4 data disk of [workload.file], not modelled.
    fs_type: str | None = None
    #: The scenario's memory cgroups (`[[cgroup]]`), parents before children: each one's path
    #: below the guest's cgroup2 root and the interface files /init writes, in writing order.
    cgroups: list[tuple[str, list[tuple[str, str]]]] = field(default_factory=list)
    #: The page-replacement algorithm the guest runs and the model simulates: "classic" (the
    #: two lists) or "mglru" (lru_gen/enabled set; its min_ttl_ms when the scenario sets it).
    lru: str = "classic"
    lru_gen_min_ttl_ms: int | None = None
    #: Scenario keys set on the simulator's side alone (`validate --set`, dotted keys): a point
    #: of a sensitivity sweep, not the scenario the protocol scores. The guest runs as before.
    sim_set: dict[str, Any] = field(default_factory=dict)


def content_hash(spec: "GuestSpec") -> str:
    """sha256 of what the guest runs (machine, sysctls, workload program arguments): kept real
    results name the guest they were measured on. Simulator-only settings ([cost], [policy],
    device latencies, comments) can change without invalidating them."""
    guest = {
        "ram_bytes": spec.ram_bytes, "cpus": spec.cpus, "swap_bytes": spec.swap_bytes,
        "thp": spec.thp, "machine": spec.machine, "sysctls": spec.sysctls,
        "data_bytes": spec.data_bytes, "workload_spec": spec.workload_spec,
    }
    if spec.fs_type is not None:
        # Only then: the kept results of scenarios without [fs] keep their hashes.
        guest["fs_type"] = spec.fs_type
    if spec.cgroups:
        guest["cgroups"] = [[path, [list(f) for f in files]] for path, files in spec.cgroups]
    if spec.lru != "classic":
        # Only then: the two-list LRU's kept results keep their hashes.
        guest["lru"] = [spec.lru, spec.lru_gen_min_ttl_ms]
    return hashlib.sha256(json.dumps(guest, sort_keys=True).encode()).hexdigest()


def find(scenario: str, validation: Path) -> Path:
    """A scenario named on a script's command line: a file as given, or a calibration or
    prediction scenario by name (``validation``/calibrate/ or predict/<name>.toml)."""
    if scenario.endswith(".toml"):
        return Path(scenario)
    for d in sittings.ROLES:
        if (validation / d / f"{scenario}.toml").is_file():
            return validation / d / f"{scenario}.toml"
    return validation / "predict" / f"{scenario}.toml"  # missing: load() names it


def load_for_script(path: str | Path, sitting: Path | None = None,
                    lru: str | None = None) -> GuestSpec:
    """:func:`load` for the scripts under scripts/: any bad scenario is a ValidateError (exit 2)
    with the parser's own message, so each script has one error path."""
    try:
        return load(path, sitting, lru)
    except (api.ScenarioError, api.ScenarioNotFound) as e:
        raise ValidateError(str(e), exit_code=2) from None


def load(path: str | Path, sitting: Path | None = None, lru: str | None = None) -> GuestSpec:
    """Read ``path`` (a valid reclaimlab scenario) into a :class:`GuestSpec`, its kept boots
    those of ``sitting`` (a directory with a real/) when given, else where
    :func:`sittings.real_dir` says. ``lru`` ("classic" or "mglru") runs the scenario under that
    page-replacement algorithm whatever its `[policy] lru` says (the protocol's second run of
    every scenario, docs/VALIDATION.md "Under the multi-generational LRU"); its kept boots are
    then those of the latest complete sitting under that algorithm.

    Raises ScenarioNotFound / ScenarioError (from the simulator's parser) for a bad scenario and
    :class:`ValidateError` for a scenario the guest cannot run at all."""
    p = Path(path)
    api.validate(p)  # the simulator's errors name file:line:col; let them through as they are
    doc = tomllib.loads(p.read_text())
    info = api.scenario_info(p)
    host = doc.get("host", {})
    if "zoneinfo" in host:
        raise ValidateError(
            f"{p}: [host] zoneinfo is set; a validation scenario gives `ram` and the guest's "
            "zoneinfo is captured by the boot (remove the key)"
        )
    if "lowmem" in host:
        raise ValidateError(f"{p}: [host] lowmem cannot be given to QEMU; remove it")
    role = sittings.role(p)
    if role is not None and "cost" in doc:
        raise ValidateError(
            f"{p}: a {role} scenario carries no [cost]; its costs are the guest profile's "
            "(validation/profiles/, docs/VALIDATION.md \"Protocol\"): remove the section"
        )
    sysctl = doc.get("sysctl", {})
    lru = lru or str(doc.get("policy", {}).get("lru", "classic"))
    if lru not in LRUS:
        raise ValidateError(f"{p}: lru {lru!r}: the guest runs one of {', '.join(LRUS)}")
    if lru != "classic":
        doc = {**doc, "policy": {**doc.get("policy", {}), "lru": lru}}
    sysctls = {k: _sysctl_text(sysctl[k]) for k in SYSCTLS if k in sysctl}
    wb = doc.get("writeback", {})
    sysctls.update({k: str(wb[k]) for k in WRITEBACK_SYSCTLS if k in wb})
    spec = GuestSpec(
        name=str(info["name"]),
        path=p,
        content_hash="",
        ram_bytes=size_bytes(host.get("ram", "4GiB")),
        cpus=int(host.get("cpus", 2)),
        swap_bytes=size_bytes(doc.get("swap", {}).get("size", 0)),
        thp=bool(host.get("thp", True)),
        machine=str(host.get("machine", "q35")),
        sysctls=sysctls,
        data_bytes=0,
        workload_spec="",
        document=doc,
        real_dir=sittings.real_dir(p, sitting, lru),
        role=role,
        fs_type=str(doc["fs"].get("type", "xfs")) if "fs" in doc else None,
    )
    spec.cgroups = _cgroups(p, doc)
    spec.lru = lru
    if lru != "classic" and "lru_gen_min_ttl_ms" in sysctl:
        spec.lru_gen_min_ttl_ms = int(sysctl["lru_gen_min_ttl_ms"])
    _fill_workloads(spec, doc)
    _note_unmirrored(spec, doc)
    spec.content_hash = content_hash(spec)
    return spec


# The guest's cgroup2 mount, and the interface files a [[cgroup]] table may set, in the order
# /init writes them (protection first, then the limits; the cgroups are empty when written).
CGROUP_ROOT = "/sys/fs/cgroup"
CGROUP_FILES = (("min",), ("low",), ("high",), ("max",), ("swap", "max"), ("oom", "group"))


def _cgroups(p: Path, doc: dict[str, Any]) -> list[tuple[str, list[tuple[str, str]]]]:
    """Each cgroup's path (its ancestors' names joined by /, parents first) and the memory.*
    files to write, from the scenario's [[cgroup]] tables (the simulator has checked names,
    parents and loops). A workload can only join a leaf: cgroup v2 keeps processes out of a
    cgroup whose controllers are enabled for children."""
    tables = doc.get("cgroup", [])
    parent = {str(c["name"]): str(c.get("parent", "")) for c in tables}

    def path(name: str) -> str:
        up = parent.get(name, "")
        return f"{path(up)}/{name}" if up else name

    out = []
    for c in sorted(tables, key=lambda c: path(str(c["name"])).count("/")):
        memory = c.get("memory", {})
        files = []
        for keys in CGROUP_FILES:
            v: Any = memory
            for k in keys:
                v = v.get(k) if isinstance(v, dict) else None
            if v is not None:
                files.append(("memory." + ".".join(keys), str(v)))
        out.append((path(str(c["name"])), files))
    inner = set(parent.values()) - {""}
    for w in doc.get("workload", []):
        if w.get("cgroup") in inner:
            raise ValidateError(
                f"{p}: workload {w['name']} joins cgroup {w['cgroup']}, which has children; the "
                "guest's cgroup v2 runs processes only in leaves (move the workload to a child)")
    return out


def _sysctl_text(value: Any) -> str:
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    return str(value)


def _fill_workloads(spec: GuestSpec, doc: dict[str, Any]) -> None:
    lines = [f"# {spec.name}: generated by reclaimlab validate from {spec.path.name}"]
    data = 0
    for i, w in enumerate(doc.get("workload", [])):
        name = str(w["name"])
        cgroup = next((f" cgroup={CGROUP_ROOT}/{path}" for path, _ in spec.cgroups
                       if path.rsplit("/", 1)[-1] == w.get("cgroup")), "")
        lines.append(
            f"workload name={name} start_ns={duration_ns(w.get('start', 0))} "
            f"duration_ns={duration_ns(w['duration']) if 'duration' in w else 0}{cgroup}"
        )
        if "anon" in w:
            a = w["anon"]
            lines.append(
                f"anon size={size_bytes(a['size'])} pattern={a.get('pattern', 'sequential')} "
                f"alpha={float(a.get('zipf_alpha', 1.0))} passes={int(a.get('passes', 1))} "
                f"write_fraction={float(a.get('write_fraction', 1.0))} "
                f"think_ns={duration_ns(a.get('think', 0))} hold_ns={duration_ns(a.get('hold', 0))}"
            )
        if "file" in w:
            f = w["file"]
            size = size_bytes(f["size"])
            data += size
            lines.append(
                f"file size={size} op={f.get('op', 'read')} passes={int(f.get('passes', 1))} "
                f"hold_ns={duration_ns(f.get('hold', 0))} path={DATA_MOUNT}/w{i}-{name}"
            )
        if "highorder" in w:
            line = _highorder_line(spec, name, w)
            if line:
                lines.append(line)
        if "fsmark" in w:
            f = {**FSMARK_DEFAULTS, **w["fsmark"]}
            for k in range(int(f["threads"])):
                lines.append(
                    f"fsmark index={k} threads={int(f['threads'])} files={int(f['files'])} "
                    f"files_per_dir={int(f['files_per_dir'])} "
                    f"file_size={size_bytes(f['file_size'])} think_ns={duration_ns(f['think'])} "
                    f"rss={size_bytes(f['rss'])} root={DATA_MOUNT}"
                )
        if "stat" in w:
            st = {**STAT_DEFAULTS, **w["stat"]}
            for k in range(int(st["threads"])):
                lines.append(
                    f"stat index={k} threads={int(st['threads'])} passes={int(st['passes'])} "
                    f"think_ns={duration_ns(st['think'])}"
                )
        for table in ("simoops", "drop_caches"):
            if table in w:
                spec.not_mirrored.append(
                    f"workload {name}: [workload.{table}] is not run in the guest")
        if "trace" in w:
            spec.not_mirrored.append(
                f"workload {name}: [workload.trace] is not replayed in the guest (the trace's "
                "pages are not run there)"
            )
    spec.workload_spec = "\n".join(lines) + "\n"
    # The files plus room for ext4's metadata and journal, so the disk never fills.
    spec.data_bytes = data + max(data // 8, 256 << 20)
    if "fs" in doc:
        spec.data_bytes = max(spec.data_bytes, FS_IMAGE_BYTES)


# /sys/kernel/mm/transparent_hugepage/defrag as Debian's 6.1 kernel boots (read back by /init,
# `thp_defrag` in the guest settings): the guest keeps it, so a scenario mirrors the guest's
# THP faults only with `[host] thp_defrag` set to it.
GUEST_THP_DEFRAG = "never"


def _highorder_line(spec: GuestSpec, name: str, w: dict[str, Any]) -> str | None:
    h = w["highorder"]
    gfp = h.get("gfp", "atomic")
    order = int(h.get("order", 3))
    if gfp != "transhuge":
        spec.not_mirrored.append(
            f"workload {name}: [workload.highorder] gfp = \"{gfp}\" is a kernel allocation "
            "(network buffers, slab); userspace cannot make it, so the guest skips this stream"
        )
        return None
    if order != 9:
        spec.not_mirrored.append(
            f"workload {name}: gfp = \"transhuge\" with order {order}: the guest's THP faults "
            "are order 9 (2 MiB) whatever the scenario says"
        )
    rate = int(h.get("rate", 1000))
    if "count" in h:
        count = int(h["count"])
    else:
        count = rate * duration_ns(w["duration"]) // 10**9
    spec.not_mirrored.append(
        f"workload {name}: THP faults are madvised 2 MiB regions touched once; a fault that "
        "finds no huge page falls back to one 4 KiB page (thp_fault_fallback), which the "
        "simulator's stream does not allocate"
    )
    defrag = spec.document.get("host", {}).get("thp_defrag", "madvise")
    if defrag != GUEST_THP_DEFRAG:
        spec.not_mirrored.append(
            f"workload {name}: [host] thp_defrag = \"{defrag}\", but the guest's THP faults run "
            f"with its kernel's own setting, \"{GUEST_THP_DEFRAG}\" (Debian's 6.1; the guest does "
            "not change it)"
        )
    return (
        f"thp count={count} rate={rate} lifetime_ns={duration_ns(h.get('lifetime', '10ms'))} "
        f"lifetimes={h.get('lifetimes', 'fixed')}"
    )


def _note_unmirrored(spec: GuestSpec, doc: dict[str, Any]) -> None:
    if doc.get("host", {}).get("fragmented_zone"):
        spec.not_mirrored.append(
            "[host] fragmented_zone: a fresh guest has no aged zone; the pinned pages are not made"
        )
    if doc.get("host", {}).get("cpu_contention"):
        spec.not_mirrored.append("[host] cpu_contention: the guest's scheduler decides, not the key")
    if doc.get("policy"):
        spec.not_mirrored.append("[policy]: the guest runs 6.1's own rules whatever is chosen")
    for key in ("swap", "disk"):
        if any(k != "size" for k in doc.get(key, {})):
            spec.not_mirrored.append(
                f"[{key}] latency and bandwidth: the guest's virtio disk is as fast as the host "
                "serves it (a traced boot times its requests: ktrace's block_requests)"
            )
    if doc.get("cost"):
        spec.not_mirrored.append("[cost]: the guest's CPU costs are real")
    if any(k != "type" for k in doc.get("fs", {})):
        spec.not_mirrored.append(
            "[fs] keys other than type: the guest's filesystem has mkfs's geometry and log on "
            "a fresh image, and the kernel's own costs and device waits"
        )
    if any("fsmark" in w and w["fsmark"].get("nofs_fraction", 1.0) not in (0, 1)
           for w in doc.get("workload", [])):
        spec.not_mirrored.append(
            "[workload.fsmark] nofs_fraction: which of a create's allocations are GFP_NOFS is "
            "the filesystem's own choice in the guest"
        )
    if doc.get("oom", {}).get("reaper_delay"):
        spec.not_mirrored.append("[oom] reaper_delay: the guest's oom_reaper runs when it runs")
    if "duration" in doc.get("sim", {}):
        spec.not_mirrored.append("[sim] duration: the guest runs until the workloads exit")
