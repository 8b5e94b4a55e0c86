"""The kept real-kernel results: ``real/<scenario>.json`` and ``real/<scenario>.zoneinfo`` in
the scenario's kept directory (a sitting's, or beside the scenario file: validate/sittings.py),
and the boots that (re)make them.

A kept file names the sha256 of the scenario file it was measured for; a scenario edited since
no longer matches, and the comparison refuses to use the old numbers.
"""

from __future__ import annotations

import datetime
import json
import os
import sys
from pathlib import Path
from typing import Any

from . import guest, hostload, kernel, sittings
from .errors import SetUpStall, ValidateError
from .spec import GuestSpec

FORMAT = 1
CACHE = Path(".cache/validate")

# Every rep carries these; test_validate.py and load() check them.
REP_KEYS = ("wall_time_s", "vmstat_before", "vmstat_after", "vmstat_delta",
            "meminfo_before", "meminfo_after", "workloads")
META_KEYS = ("format", "scenario", "scenario_file", "scenario_sha256", "kernel", "kernel_package",
             "qemu", "accel", "date", "guest_settings", "baseline", "reps")


def kept_paths(spec: GuestSpec) -> tuple[Path, Path]:
    real = spec.real_dir
    return real / f"{spec.path.stem}.json", real / f"{spec.path.stem}.zoneinfo"


def load(spec: GuestSpec) -> dict[str, Any]:
    """The kept results of ``spec``'s scenario, checked for completeness and for the scenario's
    current content."""
    jpath, zpath = kept_paths(spec)
    if not jpath.is_file():
        raise ValidateError(
            f"{jpath}: no kept real-kernel results for {spec.path}; make them with "
            f"`reclaimlab validate --boot {spec.path}`"
        )
    try:
        data = json.loads(jpath.read_text())
    except json.JSONDecodeError as e:
        raise ValidateError(f"{jpath}:{e.lineno}:{e.colno}: malformed JSON: {e.msg}") from None
    check(data, str(jpath))
    if data["scenario_sha256"] != spec.content_hash:
        raise ValidateError(
            f"{jpath}: recorded for another version of {spec.path} (its content changed); "
            f"refresh with `reclaimlab validate --boot {spec.path}`"
        )
    if not zpath.is_file():
        raise ValidateError(f"{zpath}: missing (kept beside {jpath.name}); refresh with --boot")
    data["zoneinfo_path"] = str(zpath)
    return data


def check(data: Any, where: str) -> None:
    """A ValidateError naming the first missing or mistyped field of a kept results file."""
    if not isinstance(data, dict):
        raise ValidateError(f"{where}: expected a JSON object")
    for key in META_KEYS:
        if key not in data:
            raise ValidateError(f"{where}: missing field {key!r}; refresh with --boot")
    if data["format"] != FORMAT:
        raise ValidateError(f"{where}: format {data['format']}, expected {FORMAT}; refresh")
    reps = data["reps"]
    if not isinstance(reps, list) or not reps:
        raise ValidateError(f"{where}: `reps` must be a non-empty list")
    for i, rep in enumerate(reps):
        for key in REP_KEYS:
            if key not in rep:
                raise ValidateError(f"{where}: reps[{i}] has no {key!r}; refresh with --boot")
        for key in ("vmstat_before", "vmstat_after", "vmstat_delta", "vmstat_end"):
            if key in rep and not all(isinstance(v, int) for v in rep[key].values()):
                raise ValidateError(f"{where}: reps[{i}].{key} holds a non-integer value")


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# One probe per kernel and process: `--all` boots several scenarios.
_kvm_probe: dict[Path, bool] = {}
# How many times in a row one repetition is booted again after its set-up locked up.
SETUP_RETRIES = 2


def boot_and_keep(
    spec: GuestSpec, reps: int, accel: str = "auto", timeout_s: float = guest.DEFAULT_TIMEOUT_S,
    cache: Path = CACHE,
) -> dict[str, Any]:
    """Boot the guest ``reps`` times (seeds 1..reps for the workload's random draws) and write
    the kept results; returns them as :func:`load` would."""
    k = kernel.fetch_kernel(cache)
    busybox = kernel.busybox_binary()
    workload = kernel.build_workload(cache)
    qemu = kernel.qemu_version(kernel.qemu_binary())
    if accel == "auto":
        kvm = _kvm_probe.get(k.vmlinuz)
        if kvm is None:
            kvm = _kvm_probe[k.vmlinuz] = guest.kvm_works(k, busybox, cache / "probe")
    else:
        kvm = accel == "kvm"
    records, aborted = [], []
    # A calibration or prediction scenario boots into a sitting, which records every boot.
    sitting = spec.real_dir.parent if spec.role is not None else None
    r, stalls = 1, 0
    while r <= reps:
        _log(f"{spec.name}: boot {r}/{reps} ({'KVM' if kvm else 'TCG'})")
        started, cpu0 = _now(), hostload.snapshot()
        try:
            rep = guest.boot(spec, k, cache / "work" / spec.name, busybox, workload, r, kvm,
                             timeout_s)
        except ValidateError as e:
            # Kept with why, never dropped silently. A boot whose set-up locked up measured
            # nothing: the same repetition is booted again, at most SETUP_RETRIES times in a
            # row; any other abort leaves the sitting incomplete.
            retry = isinstance(e, SetUpStall) and stalls < SETUP_RETRIES
            aborted.append({"rep": r, "started": started, "ended": _now(), "why": str(e),
                            "others_cpu_s": _others(cpu0), "retried": retry})
            if sitting is not None:
                sittings.record_boot(sitting, spec.name, aborted[-1] | {"status": "aborted"})
            _log(f"{spec.name}: boot {r}/{reps} aborted{', booted again' if retry else ''}: {e}")
            if retry:
                stalls += 1
            else:
                r, stalls = r + 1, 0
            continue
        # What the rest of the host took meanwhile: the guest's pace is measured.
        others = _others(cpu0)
        rep["started"], rep["others_cpu_s"] = started, others
        records.append(rep)
        if sitting is not None:
            sittings.record_boot(sitting, spec.name, {"rep": r, "started": started,
                                                      "ended": _now(), "status": "kept",
                                                      "others_cpu_s": others})
        _log(f"{spec.name}: boot {r}/{reps} done, workload {rep['wall_time_s']:.1f} s, "
             f"other processes {others:.1f} s of CPU")
        r, stalls = r + 1, 0
    if not records:
        raise ValidateError(f"{spec.name}: every boot aborted (the first: {aborted[0]['why']})")
    first = records[0]
    meminfo = first["meminfo_before"]
    data = {
        "format": FORMAT,
        "scenario": spec.name,
        "scenario_file": spec.path.name,
        "scenario_sha256": spec.content_hash,
        "kernel": first["kernel"],
        "kernel_package": f"{k.package} {k.version}",
        "qemu": qemu,
        "accel": "KVM" if kvm else "TCG",
        "date": datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat(),
        "guest_settings": first["guest_settings"],
        # What the booted guest already uses before the workload starts (after drop_caches):
        # the simulator starts with every managed page free.
        "baseline": {
            "MemTotal_kib": meminfo.get("MemTotal"),
            "MemFree_kib": meminfo.get("MemFree"),
            "MemAvailable_kib": meminfo.get("MemAvailable"),
            "used_after_boot_kib": meminfo.get("MemTotal", 0) - meminfo.get("MemFree", 0),
        },
        "not_mirrored": spec.not_mirrored,
        "aborted": aborted,
        "reps": [{k2: v for k2, v in rep.items() if k2 != "zoneinfo_before"} for rep in records],
    }
    jpath, zpath = kept_paths(spec)
    jpath.parent.mkdir(parents=True, exist_ok=True)
    _write(zpath, first["zoneinfo_before"])
    _write(jpath, json.dumps(data, indent=1, sort_keys=False) + "\n")
    data["zoneinfo_path"] = str(zpath)
    return data


def _others(before: hostload.CpuSnapshot) -> float:
    """CPU seconds other processes used since ``before`` (one decimal)."""
    return round(hostload.others_cpu_s(before, hostload.snapshot()), 1)


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat()


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
