"""The real side of the balloon validation: a QEMU guest with a virtio-balloon device (free
page reporting on for hinting "D4", off for "D1") runs one program that writes, holds and
frees memory while the host samples the QEMU process's resident set; the kept results in
``validation/real/<scenario>.json``.

The guest is read from a scenario with one ``[[guest]]`` table and one ``[[guest.workload]]``
with an ``[anon]`` table (docs/VALIDATION.md, "Free page reporting"): the same file the
simulator runs. It is read here with :mod:`tomllib` only, so the real side works whether or
not the simulator in this checkout knows guests yet.

Alignment: the host records, on its own monotonic clock, when it reads each marker line the
guest prints on the serial console (``@@reclaimlab:mark NAME ...@@``), and the time of each
RSS sample on the same clock, both from the QEMU process's launch.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import re
import subprocess
import sys
import threading
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import guest, initramfs, kernel
from .errors import ValidateError
from .spec import duration_ns, size_bytes

FORMAT = 1
CACHE = Path(".cache/validate")
# The scenarios of the balloon validation, in the order the table shows them.
SCENARIOS = (Path("validation/balloon-d4.toml"), Path("validation/balloon-d1.toml"))
# The virtio PCI transport and the balloon driver (page reporting itself is built in).
MODULES = ("virtio_pci", "virtio_balloon")
# The hinting variants a real QEMU 7.2 / Linux 6.1 guest can run, as the device's property.
REPORTING = {"D4": "on", "D1": "off"}
# Bit 5 of the virtio-balloon feature bits: VIRTIO_BALLOON_F_REPORTING.
F_REPORTING = 5
SAMPLE_INTERVAL_S = 0.5
# Boot under TCG takes 10-20 s; the rest of the budget is the scenario's own timeline.
BOOT_BUDGET_S = 240.0

_MARK = re.compile(r"@@reclaimlab:mark (\S+)(?: t_ns=(\d+))?@@")


@dataclass
class BalloonSpec:
    """What the real guest runs, from a balloon scenario."""

    name: str
    path: Path
    guest_name: str
    ram_bytes: int
    vcpus: int
    hinting: str
    reporting_order: int
    program_start_ns: int  # guest uptime at which the program starts
    size_bytes: int
    free_after_ns: int  # from the program's start
    idle_ns: int  # after the free, until the guest powers off
    content_hash: str = ""
    document: dict[str, Any] = field(default_factory=dict)

    def run(self) -> dict[str, Any]:
        """What the guest runs, as recorded beside the results (and hashed)."""
        return {
            "ram_bytes": self.ram_bytes, "vcpus": self.vcpus,
            "device": device(self), "kernel_args": kernel_args(self),
            "program": "reclaimlab-balloon", "program_args": [self.size_bytes, self.free_after_ns],
            "program_start_uptime_s": self.program_start_ns / 1e9,
            "idle_after_program_s": self.idle_ns / 1e9,
            "program_sha256": _sha256(kernel.BALLOON_SOURCE.read_bytes()),
        }

    @property
    def free_ns(self) -> int:
        """The free on the guest's timeline (the guest starts at 0)."""
        return self.program_start_ns + self.free_after_ns


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def is_guest_scenario(path: Path) -> bool:
    """Whether ``path`` declares guests (the balloon validation's kind), which the per-counter
    validation (`reclaimlab validate SCENARIO`) does not run."""
    try:
        return "guest" in tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError):
        return False


def load_spec(path: Path) -> BalloonSpec:
    """The guest of a balloon scenario; a ValidateError naming the key otherwise."""
    try:
        doc = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise ValidateError(f"{path}: no such file") from None
    except tomllib.TOMLDecodeError as e:
        raise ValidateError(f"{path}: not TOML: {e}") from None
    guests = doc.get("guest", [])
    if not isinstance(guests, list) or len(guests) != 1:
        raise ValidateError(f"{path}: a balloon scenario has exactly one [[guest]] table")
    g = guests[0]
    works = g.get("workload", [])
    if len(works) != 1 or "anon" not in works[0] or "duration" not in works[0]:
        raise ValidateError(
            f"{path}: [[guest.workload]]: the real guest runs one workload with an [anon] table "
            "and a `duration` (when its program frees and exits)"
        )
    w = works[0]
    policy = g.get("policy", {})
    hinting = str(policy.get("hinting", "D1") if isinstance(policy, dict) else "D1")
    if hinting not in REPORTING:
        raise ValidateError(
            f"{path}: [guest.policy] hinting = {hinting!r}: the real guest (QEMU virtio-balloon, "
            f"Linux 6.1) runs only {' and '.join(sorted(REPORTING))}; use one of them"
        )
    if "duration" not in doc.get("sim", {}):
        raise ValidateError(
            f"{path}: [sim] duration is missing; the real guest idles after the free until it"
        )
    if duration_ns(g.get("start", 0)) != 0:
        raise ValidateError(f"{path}: [[guest]] start: the real guest starts at 0; set \"0s\"")
    try:
        start = duration_ns(w.get("start", 0))
        free_after = duration_ns(w["duration"])
        end = duration_ns(doc["sim"]["duration"])
        spec = BalloonSpec(
            name=str(doc.get("name", path.stem)), path=path, guest_name=str(g["name"]),
            ram_bytes=size_bytes(g["ram"]), vcpus=int(g.get("vcpus", 1)), hinting=hinting,
            reporting_order=int(g.get("page_reporting_order", 9)),
            program_start_ns=start, size_bytes=size_bytes(w["anon"]["size"]),
            free_after_ns=free_after, idle_ns=end - start - free_after, document=doc,
        )
    except KeyError as e:
        raise ValidateError(
            f"{path}: [[guest]]: missing key {e.args[0]!r} (see docs/VALIDATION.md)"
        ) from None
    except ValueError as e:
        raise ValidateError(f"{path}: {e}") from None
    if spec.idle_ns <= 0:
        raise ValidateError(f"{path}: [sim] duration ends before the program frees; lengthen it")
    spec.content_hash = _sha256(json.dumps(spec.run(), sort_keys=True).encode())
    return spec


def device(spec: BalloonSpec) -> str:
    return f"virtio-balloon-pci,free-page-reporting={REPORTING[spec.hinting]}"


def kernel_args(spec: BalloonSpec) -> list[str]:
    # The reporting order is a parameter of the built-in page_reporting code; 9 (the pageblock
    # order) is what the driver asks for anyway, so it is passed only when it differs.
    extra = [] if spec.reporting_order == 9 else [
        f"page_reporting.page_reporting_order={spec.reporting_order}"
    ]
    return ["console=ttyS0", "quiet", "loglevel=1", "panic=-1", "rdinit=/init",
            "transparent_hugepage=never", *extra]


def init_script(spec: BalloonSpec, modules: list[str]) -> str:
    """The guest's /init: load the balloon driver, wait for the program's start time, run it,
    idle, print the markers and the sections the host parses, power off."""
    mark = initramfs.MARK
    insmods = "\n".join(f"insmod /lib/modules/{m} || fail 'insmod {m}'" for m in modules)
    start_s = spec.program_start_ns / 1e9
    idle_s = spec.idle_ns / 1e9
    return f"""#!/bin/busybox sh
/bin/busybox mkdir -p /bin /sbin /usr/bin /usr/sbin /proc /sys /dev /tmp
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null

fail() {{ echo "{mark}:error $*@@"; poweroff -f; }}
section() {{ echo "{mark}:begin $1@@"; cat "$2"; echo "{mark}:end $1@@"; }}

{insmods}
# The device is probed asynchronously: wait for the driver to bind (10 s at most).
n=0
while ! ls /sys/bus/virtio/drivers/virtio_balloon/ 2>/dev/null | grep -q '^virtio'; do
    n=$((n + 1)); [ $n -gt 100 ] && fail 'virtio_balloon did not bind to a device'
    sleep 0.1
done
dev=$(ls -d /sys/bus/virtio/drivers/virtio_balloon/virtio* | head -1)

section uname /proc/version
echo "{mark}:begin settings@@"
echo "features $(cat $dev/features)"
order=/sys/module/page_reporting/parameters/page_reporting_order
echo "page_reporting_order $(cat $order 2>/dev/null || echo absent)"
echo "uptime_before_wait $(cut -d' ' -f1 /proc/uptime)"
echo "{mark}:end settings@@"
section "meminfo before" /proc/meminfo

# The program starts at the scenario's guest time (the guest's uptime).
while [ "$(awk '{{print ($1 >= {start_s})}}' /proc/uptime)" != 1 ]; do sleep 0.05; done
/reclaimlab-balloon {spec.size_bytes} {spec.free_after_ns} || fail 'reclaimlab-balloon'
sleep {idle_s:g}
echo "{mark}:mark idle_done@@"
section "meminfo after" /proc/meminfo
echo "{mark}:done@@"
poweroff -f
"""


def build_initramfs(out: Path, spec: BalloonSpec, k: kernel.Kernel, busybox: Path,
                    program: Path) -> Path:
    kos = initramfs.module_order(k.modules, MODULES)
    archive = initramfs.Cpio()
    for d in ("bin", "lib", "lib/modules"):
        archive.directory(d)
    archive.file("bin/busybox", busybox.read_bytes(), 0o755)
    for ko in kos:
        archive.file(f"lib/modules/{ko.name}", ko.read_bytes())
    archive.file("reclaimlab-balloon", program.read_bytes(), 0o755)
    archive.file("init", init_script(spec, [ko.name for ko in kos]).encode(), 0o755)
    return initramfs.write_gzip(out, archive)


def qemu_command(spec: BalloonSpec, k: kernel.Kernel, initrd: Path, kvm: bool) -> list[str]:
    accel = ["-enable-kvm", "-cpu", "host"] if kvm else ["-accel", "tcg", "-cpu", "max"]
    return [
        kernel.qemu_binary(), "-machine", "q35", *accel,
        "-m", f"{spec.ram_bytes >> 20}M", "-smp", str(spec.vcpus),
        "-kernel", str(k.vmlinuz), "-initrd", str(initrd),
        "-append", " ".join(kernel_args(spec)),
        "-device", device(spec),
        "-display", "none", "-monitor", "none", "-serial", "stdio",
        "-nic", "none", "-no-reboot",
    ]


def _status_kib(pid: int) -> dict[str, int] | None:
    """VmRSS, RssAnon and RssFile (KiB) of process ``pid``; None once it is gone."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    out = {}
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "RssAnon", "RssFile"):
            out[key] = int(rest.split()[0])
    return out if "VmRSS" in out else None


def boot(spec: BalloonSpec, k: kernel.Kernel, work: Path, busybox: Path, program: Path,
         kvm: bool, timeout_s: float) -> dict[str, Any]:
    """One boot: QEMU launched, its RSS sampled every SAMPLE_INTERVAL_S until it exits, each
    console line timed on the same clock. Returns the repetition's record; the console
    transcript stays in ``work/console.log``."""
    work.mkdir(parents=True, exist_ok=True)
    initrd = build_initramfs(work / "initrd.gz", spec, k, busybox, program)
    argv = qemu_command(spec, k, initrd, kvm)
    lines: list[tuple[float, str]] = []
    t0 = time.monotonic()
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
    except FileNotFoundError:
        raise ValidateError(f"{argv[0]} not found; {kernel.SETUP_HINT}") from None

    def read_console() -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            lines.append((time.monotonic() - t0, raw.decode(errors="replace").rstrip("\r\n")))

    reader = threading.Thread(target=read_console, daemon=True)
    reader.start()
    samples: dict[str, list] = {"t_s": [], "vm_rss_kib": [], "rss_anon_kib": [],
                                "rss_file_kib": []}
    tick = 0
    timed_out = False
    while proc.poll() is None:
        st = _status_kib(proc.pid)
        now = time.monotonic() - t0
        if st is not None:
            samples["t_s"].append(round(now, 3))
            samples["vm_rss_kib"].append(st["VmRSS"])
            samples["rss_anon_kib"].append(st.get("RssAnon", 0))
            samples["rss_file_kib"].append(st.get("RssFile", 0))
        if now > timeout_s:
            proc.kill()
            timed_out = True
            break
        tick += 1
        time.sleep(max(0.0, tick * SAMPLE_INTERVAL_S - (time.monotonic() - t0)))
    proc.wait()
    reader.join(timeout=10)
    stderr = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    console = work / "console.log"
    console.write_text("".join(f"{t:10.3f} {line}\n" for t, line in lines))
    if timed_out:
        raise ValidateError(
            f"{spec.name}: the guest did not power off within {timeout_s:.0f} s "
            f"(console: {console}); raise --timeout", exit_code=1)
    if proc.returncode != 0:
        last = stderr.strip().splitlines()
        raise ValidateError(
            f"{spec.name}: QEMU failed: {last[-1] if last else f'exit code {proc.returncode}'}", 1)
    return rep_from_console(lines, samples, str(console))


def rep_from_console(lines: list[tuple[float, str]], samples: dict[str, list],
                     source: str) -> dict[str, Any]:
    """One repetition's record from the timed console lines and the RSS samples."""
    t = guest.parse_transcript("\n".join(line for _, line in lines))
    if t.error is not None:
        raise ValidateError(f"{source}: the guest failed: {t.error}", exit_code=1)
    markers: dict[str, dict[str, float | None]] = {}
    for when, line in lines:
        if (m := _MARK.search(line)) is not None:
            markers[m.group(1)] = {
                "host_s": round(when, 3),
                "guest_s": int(m.group(2)) / 1e9 if m.group(2) else None,
            }
    for name in ("start", "written", "freeing", "freed", "idle_done"):
        if name not in markers:
            raise ValidateError(
                f"{source}: no `{name}` marker on the console (the guest crashed or timed "
                "out; read the transcript)", exit_code=1)
    for name in ("uname", "settings", "meminfo before", "meminfo after"):
        if name not in t.sections:
            raise ValidateError(f"{source}: the console has no {name!r} section", exit_code=1)
    settings = dict(
        line.split(" ", 1) for line in t.sections["settings"].splitlines() if " " in line
    )
    features = settings.get("features", "")
    return {
        "kernel": t.sections["uname"].strip(),
        "reporting_negotiated": len(features) > F_REPORTING and features[F_REPORTING] == "1",
        "guest_settings": settings,
        "markers": markers,
        "meminfo_before": guest.parse_meminfo(t.sections["meminfo before"]),
        "meminfo_after": guest.parse_meminfo(t.sections["meminfo after"]),
        "samples": samples,
    }


def kept_path(spec: BalloonSpec) -> Path:
    return spec.path.parent / "real" / f"{spec.path.stem}.json"


def load_kept(spec: BalloonSpec) -> dict[str, Any]:
    """The kept real results of ``spec``, checked against what the scenario now runs."""
    path = kept_path(spec)
    if not path.is_file():
        raise ValidateError(
            f"{path}: no kept real results for {spec.path}; make them with "
            f"`reclaimlab validate --balloon --boot`")
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise ValidateError(f"{path}:{e.lineno}:{e.colno}: malformed JSON: {e.msg}") from None
    for key in ("format", "scenario_sha256", "guest_run", "reps"):
        if key not in data:
            raise ValidateError(f"{path}: missing field {key!r}; refresh with --balloon --boot")
    if data["format"] != FORMAT:
        raise ValidateError(f"{path}: format {data['format']}, expected {FORMAT}; refresh")
    if data["scenario_sha256"] != spec.content_hash:
        raise ValidateError(
            f"{path}: recorded for another guest than {spec.path} now describes (its guest, "
            "program or balloon.c changed); refresh with `reclaimlab validate --balloon --boot`")
    if not data["reps"]:
        raise ValidateError(f"{path}: no repetitions")
    return data


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def boot_and_keep(spec: BalloonSpec, reps: int, accel: str = "auto",
                  timeout_s: float | None = None, cache: Path = CACHE) -> dict[str, Any]:
    """Boot the guest ``reps`` times and write the kept results; returns them."""
    k = kernel.fetch_kernel(cache)
    busybox = kernel.busybox_binary()
    program = kernel.build_balloon(cache)
    qemu = kernel.qemu_version(kernel.qemu_binary())
    kvm = accel == "kvm" or (accel == "auto" and guest.kvm_works(k, busybox, cache / "probe"))
    limit = timeout_s or BOOT_BUDGET_S + (spec.free_ns + spec.idle_ns) / 1e9
    data = {
        "format": FORMAT,
        "what": "host RSS of the QEMU process (VmRSS, RssAnon, RssFile of /proc/PID/status, "
                f"KiB) every {SAMPLE_INTERVAL_S} s from its launch, and the host times of the "
                "guest program's console markers on the same clock",
        "scenario": spec.name,
        "scenario_file": spec.path.name,
        "scenario_sha256": spec.content_hash,
        "guest_run": spec.run(),
        "kernel": None,
        "kernel_package": f"{k.package} {k.version}",
        "qemu": qemu,
        "accel": "KVM" if kvm else "TCG",
        "host_thp": _host_thp(),
        "date": datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat(),
        "reps": [],
    }
    path = kept_path(spec)
    path.parent.mkdir(parents=True, exist_ok=True)
    for r in range(1, reps + 1):
        _log(f"{spec.name}: boot {r}/{reps} ({'KVM' if kvm else 'TCG'})")
        rep = boot(spec, k, cache / "work-balloon" / spec.name, busybox, program, kvm, limit)
        want = spec.hinting == "D4"
        if rep["reporting_negotiated"] != want:
            raise ValidateError(
                f"{spec.name}: the guest {'did not negotiate' if want else 'negotiated'} free "
                f"page reporting (features {rep['guest_settings'].get('features')})", 1)
        data["kernel"] = data["kernel"] or rep["kernel"]
        data["reps"].append(rep)
        # Written after every boot: a later boot that fails loses none of the finished ones.
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(data, indent=1) + "\n")
        os.replace(tmp, path)
        _log(f"{spec.name}: boot {r}/{reps} done, kept in {path}")
    return data


def _host_thp() -> str:
    try:
        return Path("/sys/kernel/mm/transparent_hugepage/enabled").read_text().strip()
    except OSError:
        return "unknown"
