"""A guest profile: the one set of costs of a guest (docs/VALIDATION.md, "Protocol").

``validation/profiles/<name>.toml`` holds the `[cost]` section, the device latencies (`[swap]`
and `[disk]` `read_latency`, `write_latency`), the filesystem's costs and device waits (`[fs]`,
for a scenario with a filesystem), the metadata walker's cost (`[stat]`, for each
`[workload.stat]`) and the kswapd wake-up latency samples of one guest, written by ``scripts/validate-calibrate.py`` (validate/calibrate.py) from the
calibration scenarios' boots. ``reclaimlab validate`` merges it into each calibration and
prediction scenario before simulating (``--profile``); a scenario that sets one of its keys
itself is refused, so no scenario can carry a cost of its own.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

from .errors import ValidateError
from .spec import duration_ns

DEFAULT_NAME = "debian-6.1-tcg"
# The sections a profile may set, and within [swap] and [disk] the keys it may set (the
# devices' shape, size, rotational, max_request, stays the scenario's). [fs] holds the
# filesystem's costs and device waits, merged into a scenario with a filesystem only; [stat]
# the metadata walker's, merged into each [workload.stat]. Within [fs] and [stat], a table
# named after a filesystem type ([fs.xfs], [stat.ext4]) holds what its calibration scenario
# measured for that type; it overrides the section's own key for a scenario of that type.
SECTIONS = ("cost", "swap", "disk", "fs", "stat")
FS_TYPES = ("xfs", "ext4")
DEVICE_KEYS = ("read_latency", "write_latency")
FS_KEYS = ("create_cost", "flush_cluster_cost", "dentry_scan_cost", "inode_scan_cost",
           "free_object_cost", "io_latency", "logforce_latency")
STAT_KEYS = ("hit_cost",)
ALLOWED = {"swap": DEVICE_KEYS, "disk": DEVICE_KEYS, "fs": FS_KEYS, "stat": STAT_KEYS}


def default_path(validation_root: Path) -> Path:
    return validation_root / "profiles" / f"{DEFAULT_NAME}.toml"


def load(path: Path) -> dict[str, Any]:
    """The profile at ``path`` with its samples' path made absolute; a ValidateError naming the
    file and the fix when it is missing or holds a key it may not."""
    if not path.is_file():
        raise ValidateError(
            f"{path}: no such profile; write it with `python scripts/validate-calibrate.py` "
            "or give another with --profile"
        )
    try:
        doc = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as e:
        raise ValidateError(f"{path}: malformed TOML: {e}") from None
    for section, table in doc.items():
        if section == "profile":
            continue
        if section not in SECTIONS or not isinstance(table, dict):
            raise ValidateError(f"{path}: [{section}] is not a profile section "
                                f"(only [profile], {', '.join(f'[{s}]' for s in SECTIONS)})")
        if section != "cost":
            typed = {t: table[t] for t in FS_TYPES if section in ("fs", "stat") and t in table}
            for where, keys in [(section, set(table) - set(typed))] + [
                    (f"{section}.{t}", set(v) if isinstance(v, dict) else {t})
                    for t, v in typed.items()]:
                extra = sorted(keys - set(ALLOWED[section]))
                if extra:
                    raise ValidateError(
                        f"{path}: [{where}] {extra[0]} is the scenario's, not the profile's (a "
                        f"profile sets {', '.join(ALLOWED[section])})")
    cost = doc.get("cost", {})
    samples = cost.get("wakeup_latency_samples")
    if isinstance(samples, str):
        resolved = (path.parent / samples).resolve()
        if not resolved.is_file():
            raise ValidateError(f"{path}: wakeup_latency_samples {samples!r}: no such file "
                                f"({resolved})")
        cost["wakeup_latency_samples"] = str(resolved)
    meta = doc.setdefault("profile", {})
    meta["path"] = str(path)
    if "sitting" in meta:
        meta["sitting"] = str((path.parent / meta["sitting"]).resolve())
    return doc


def merge(scenario: dict[str, Any], profile: dict[str, Any], where: str) -> dict[str, Any]:
    """``scenario`` (a parsed scenario table) with ``profile``'s sections merged in; a
    ValidateError when the scenario sets a key the profile holds (``where`` names it)."""
    out = {k: (dict(v) if isinstance(v, dict) else v) for k, v in scenario.items()}

    def take(mine: dict[str, Any], theirs: dict[str, Any], name: str) -> dict[str, Any]:
        clash = sorted(set(mine) & set(theirs))
        if clash:
            raise ValidateError(
                f"{where}: [{name}] {clash[0]} is set by the scenario and by the profile "
                f"{profile['profile'].get('path', '')}; a scenario taking a profile leaves "
                "its costs and device latencies to it (remove the key)"
            )
        return mine | theirs

    fs_type = out.get("fs", {}).get("type", "xfs") if "fs" in out else None
    for section in SECTIONS:
        theirs = profile.get(section)
        if not theirs:
            continue
        if section in ("fs", "stat"):
            theirs = typed(theirs, fs_type)
        if section == "stat":
            out["workload"] = [
                w | {"stat": take(dict(w["stat"]), theirs, "workload.stat")} if "stat" in w else w
                for w in out.get("workload", [])]
            continue
        if section == "fs" and "fs" not in out:
            continue  # no filesystem: none is made for the profile's sake
        out[section] = take(dict(out.get(section, {})), theirs, section)
    return out


def typed(table: dict[str, Any], fs_type: str | None) -> dict[str, Any]:
    """An [fs] or [stat] section for a scenario of filesystem ``fs_type``: its own keys, those
    of its table for that type over them, the other types' tables dropped."""
    own = {k: v for k, v in table.items() if k not in FS_TYPES}
    return own | (table.get(fs_type, {}) if fs_type is not None else {})


def without_costs(scenario: dict[str, Any]) -> dict[str, Any]:
    """``scenario`` with no cost section and no device latencies: the baseline, the simulator's
    native costs (docs/VALIDATION.md, "Protocol")."""
    out = {k: (dict(v) if isinstance(v, dict) else v) for k, v in scenario.items()
           if k != "cost"}
    for section in ("swap", "disk", "fs"):
        if section in out:
            out[section] = {k: v for k, v in out[section].items() if k not in ALLOWED[section]}
    if "workload" in out:
        out["workload"] = [
            w | {"stat": {k: v for k, v in w["stat"].items() if k not in STAT_KEYS}}
            if "stat" in w else w for w in out["workload"]]
    return out


def scaled(prof: dict[str, Any], factor: float, cache: Path) -> dict[str, Any]:
    """``prof`` with every time in it multiplied by ``factor`` (a sitting's speed factor:
    docs/VALIDATION.md, "Protocol"): the costs, the device latencies and each wake-up latency
    sample, the samples written to a file of their own under ``cache``."""
    if factor == 1.0:
        return prof
    out = {k: dict(v) for k, v in prof.items()}

    def scale(table: dict[str, Any]) -> dict[str, Any]:
        return {k: scale(v) if isinstance(v, dict) else
                v if k == "wakeup_latency_samples" else f"{round(duration_ns(v) * factor)}ns"
                for k, v in table.items()}

    for section in SECTIONS:
        if section in out:
            out[section] = scale(out[section])
    samples = out.get("cost", {}).get("wakeup_latency_samples")
    if samples:
        data = json.loads(Path(samples).read_text())
        data["latencies_us"] = [x * factor for x in data["latencies_us"]]
        data["speed_factor"] = factor
        path = cache / f"{Path(samples).stem}-x{factor:.4f}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data) + "\n")
        out["cost"]["wakeup_latency_samples"] = str(path.resolve())
    out["profile"]["speed_factor"] = factor
    return out
