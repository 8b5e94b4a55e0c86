"""One boot of the guest: disk images, the QEMU command line, and the serial console transcript
turned into the measurements of one repetition.

The console carries the kernel's own messages too (few: the guest boots with `quiet
loglevel=1`), so the parser reads only what lies between the harness's markers and ignores
the rest.
"""

from __future__ import annotations

import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import cgroups, fscount, initramfs, kernel, ktrace
from .errors import SetUpStall, ValidateError
from .fscount import parse_meminfo  # one parser for the guest's and the model's /proc/meminfo
from .procfs import parse_pairs
from .spec import GuestSpec

_BEGIN = re.compile(r"@@reclaimlab:begin (.+?)@@")
_END = re.compile(r"@@reclaimlab:end (.+?)@@")
_ERROR = re.compile(r"@@reclaimlab:error (.*?)@@")
_DONE = "@@reclaimlab:done@@"

# Boot and shutdown take a few seconds under KVM; the budget is for the workload.
DEFAULT_TIMEOUT_S = 900.0


@dataclass
class Transcript:
    """The sections of one console transcript, by name (``"vmstat before"`` ...)."""

    sections: dict[str, str]
    error: str | None
    done: bool


def parse_transcript(text: str) -> Transcript:
    """Split a console transcript into its marked sections. Lines outside the markers (kernel
    messages, the shell's) are ignored; a section cut short by the end of the transcript is
    dropped, so a crashed guest shows up as a missing section, not as a half-read one."""
    sections: dict[str, str] = {}
    current: str | None = None
    lines: list[str] = []
    error = None
    done = False
    for raw in text.replace("\r", "").split("\n"):
        if (m := _ERROR.search(raw)) is not None:
            error = m.group(1).strip()
            continue
        if _DONE in raw:
            done = True
            continue
        if current is None:
            if (m := _BEGIN.search(raw)) is not None:
                current, lines = m.group(1), []
            continue
        if (m := _END.search(raw)) is not None and m.group(1) == current:
            sections[current] = "\n".join(lines) + ("\n" if lines else "")
            current = None
            continue
        lines.append(raw)
    return Transcript(sections, error, done)


def parse_workload(text: str) -> dict[str, Any]:
    """The workload program's `result ...` lines (elapsed time and each process's end), its
    `vmstat NAME VALUE` lines (the counters as the last workload ended), its `fs ...` lines
    (creators and walkers), its `anon ...` lines (each anonymous thread's accesses) and its
    `sample ...` lines (the kernel's state and counters once a second, as columns: `t_ns` and
    one list per field, -1 where the guest had no such field); the last four are absent from
    boots of programs older than them."""
    out: dict[str, Any] = {"elapsed_ns": None, "workloads": [], "vmstat_end": {}, "fs": [],
                           "anon": [], "samples": {}}
    for line in text.splitlines():
        if line.startswith("sample "):
            fields = dict(f.split("=", 1) for f in line.split()[1:] if "=" in f)
            if not all(v.lstrip("-").isdigit() for v in fields.values()) or "t_ns" not in fields:
                continue
            cols = out["samples"]
            n = len(cols.get("t_ns", []))
            for k, v in fields.items():
                # A field first seen late is -1 for the samples before it.
                cols.setdefault(k, [-1] * n).append(int(v))
            continue
        if line.startswith("anon "):
            # An anonymous thread's accesses: its pace (absent from older programs' boots).
            fields = dict(f.split("=", 1) for f in line.split()[1:] if "=" in f)
            if fields.get("thread", "").isdigit() and fields.get("accesses", "").isdigit():
                out["anon"].append({"workload": fields.get("workload", ""),
                                    "thread": int(fields["thread"]),
                                    "accesses": int(fields["accesses"])})
            continue
        if line.startswith("fs "):
            # A creator's or walker's end: what it created, or its passes and lookups.
            fields = dict(f.split("=", 1) for f in line.split()[1:] if "=" in f)
            out["fs"].append({k: v if k == "workload" else int(v) for k, v in fields.items()
                              if k == "workload" or v.isdigit()})
            continue
        if line.startswith("vmstat "):
            fields = line.split()
            if len(fields) == 3 and fields[2].lstrip("-").isdigit():
                out["vmstat_end"][fields[1]] = int(fields[2])
            continue
        if not line.startswith("result "):
            continue
        fields = dict(f.split("=", 1) for f in line.split()[1:] if "=" in f)
        if "elapsed_ns" in fields:
            out["elapsed_ns"] = int(fields["elapsed_ns"])
        elif "workload" in fields:
            out["workloads"].append(
                {
                    "name": fields["workload"],
                    "end_ns": int(fields.get("end_ns", 0)),
                    "exit": int(fields.get("exit", -1)),
                    "killed_by_signal": int(fields.get("killed", 0)),
                }
            )
    return out


REQUIRED = ("uname", "sysctl", "vmstat before", "meminfo before", "zoneinfo before",
            "workload", "vmstat after", "meminfo after")


def kswapd_wakeup_latencies(trace: str) -> list[float]:
    """Microseconds from each `sched_wakeup` of kswapd0 to the next `sched_switch` onto it, from
    the guest's ftrace text. A wake-up of a task that is already running has no switch after
    it before the next wake-up and is skipped."""
    woken: float | None = None
    out: list[float] = []
    for line in trace.splitlines():
        m = re.search(r"\s(\d+\.\d+): (sched_wakeup|sched_switch):", line)
        if m is None:
            continue
        t = float(m.group(1))
        if m.group(2) == "sched_wakeup":
            # Only kswapd0's wake-ups (a boot may trace every task's: validate-trace --tasks).
            if "comm=kswapd0 " in line:
                woken = t
        elif woken is not None and "next_comm=kswapd0" in line:
            out.append(round((t - woken) * 1e6, 1))
            woken = None
    return out


def rep_from_transcript(text: str, source: str) -> dict[str, Any]:
    """One repetition's record from a whole transcript; a ValidateError naming the missing
    section (and the guest's own error line, if it printed one)."""
    t = parse_transcript(text)
    if t.error is not None:
        raise ValidateError(f"{source}: the guest failed: {t.error}", exit_code=1)
    missing = [s for s in REQUIRED if s not in t.sections]
    if missing:
        raise ValidateError(
            f"{source}: the console transcript has no {missing[0]!r} section "
            "(the guest crashed or timed out; read the transcript)",
            exit_code=1,
        )
    before = parse_pairs(t.sections["vmstat before"])
    after = parse_pairs(t.sections["vmstat after"])
    work = parse_workload(t.sections["workload"])
    if work["elapsed_ns"] is None:
        raise ValidateError(f"{source}: the workload program printed no elapsed time", 1)
    # The delta ends where the workload did when the program read the counters itself (the
    # harness's own commands after it fault in swapped-out pages of the root file system).
    end = work["vmstat_end"] or after
    return {
        "kernel": t.sections["uname"].strip(),
        "guest_settings": {k: v for k, v in _settings(t.sections["sysctl"]).items()},
        "wall_time_s": work["elapsed_ns"] / 1e9,
        "workloads": work["workloads"],
        "vmstat_before": before,
        "vmstat_after": after,
        "vmstat_delta": {k: end[k] - before[k] for k in end if k in before},
        "meminfo_before": parse_meminfo(t.sections["meminfo before"]),
        "meminfo_after": parse_meminfo(t.sections["meminfo after"]),
        "zoneinfo_before": t.sections["zoneinfo before"],
    } | ({"vmstat_end": work["vmstat_end"]} if work["vmstat_end"] else {}) | (
        {"fs_threads": work["fs"]} if work["fs"] else {}
    ) | (
        {"anon_threads": work["anon"]} if work["anon"] else {}
    ) | (
        {"samples": work["samples"]} if work["samples"] else {}
    ) | (
        {"phases": _phases(t.sections["phases"])} if "phases" in t.sections else {}
    ) | (
        {"slabinfo_before": fscount.parse_slabinfo(t.sections["slabinfo before"]),
         "slabinfo_after": fscount.parse_slabinfo(t.sections["slabinfo after"])}
        if "slabinfo before" in t.sections and "slabinfo after" in t.sections
        else {}
    ) | cgroups.from_sections(t.sections) | (
        {
            "kswapd_wakeup_us": kswapd_wakeup_latencies(t.sections["sched"]),
            "kswapd_wait_us": ktrace.wakeup_to_balance_us(t.sections["sched"]),
            "kswapd_trace": ktrace.summarise(t.sections["sched"]),
        }
        if "sched" in t.sections
        else {}
    )


def _phases(text: str) -> dict[str, float]:
    """The boot's phases (`name uptime` lines, initramfs's `phase`): seconds since the kernel
    started at each, in the order the script reached them."""
    out = {}
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        try:
            out[name] = float(value)
        except ValueError:
            continue
    return out


def _settings(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if key:
            out[key] = value.strip()
    return out


def _make_disks(spec: GuestSpec, work: Path) -> tuple[Path, Path]:
    """A raw swap image of the scenario's size (mkswap runs in the guest) and a fresh raw data
    image made here with mkfs.ext4, or mkfs.xfs for an XFS scenario. Both sparse: only what the
    guest writes takes host disk."""
    swap = work / "swap.img"
    data = work / "data.img"
    if spec.swap_bytes:
        with open(swap, "wb") as f:
            f.truncate(spec.swap_bytes)
    else:
        # The guest still gets a tiny vda, so the device names stay put; mkswap on 64 KiB
        # fails, so scenarios without swap are refused earlier (see boot()).
        raise ValidateError(f"{spec.path}: [swap] size is 0; the guest needs a swap disk", 2)
    data.unlink(missing_ok=True)  # fresh: no block of an earlier boot's filesystem
    with open(data, "wb") as f:
        f.truncate(spec.data_bytes)
    if spec.fs_type == "xfs":
        mkfs = kernel.require("mkfs.xfs", "xfsprogs")
        # mkfs.xfs's defaults (what a user gets); -f: the image is new, nothing to protect.
        kernel.run_tool([mkfs, "-q", "-f", str(data)], "mkfs.xfs on the data image", 300)
        return swap, data
    mkfs = kernel.require("mkfs.ext4", "e2fsprogs")
    # Inode tables and journal written now, so ext4lazyinit does not write during the run.
    kernel.run_tool(
        [mkfs, "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", str(data)],
        "mkfs.ext4 on the data image",
        300,
    )
    return swap, data


def qemu_command(
    spec: GuestSpec, k: kernel.Kernel, initrd: Path, swap: Path, data: Path, console: Path,
    kvm: bool,
) -> list[str]:
    thp = "madvise" if spec.thp else "never"
    append = " ".join([
        "console=ttyS0", "quiet", "loglevel=1", "panic=-1", "rdinit=/init",
        f"transparent_hugepage={thp}",
        # zswap would keep swapped pages in RAM; off is the kernel's default, said explicitly.
        "zswap.enabled=0",
    ])
    accel = ["-enable-kvm", "-cpu", "host"] if kvm else ["-accel", "tcg", "-cpu", "max"]
    machine = "q35" if spec.machine == "q35" else "pc"
    return [
        kernel.qemu_binary(), "-machine", machine, *accel,
        "-m", f"{spec.ram_bytes >> 20}M", "-smp", str(spec.cpus),
        "-kernel", str(k.vmlinuz), "-initrd", str(initrd), "-append", append,
        "-drive", f"file={swap},if=virtio,format=raw,cache=writeback",
        "-drive", f"file={data},if=virtio,format=raw,cache=writeback",
        "-display", "none", "-monitor", "none", "-serial", f"file:{console}",
        # The harness's output channel (a virtio-serial port: initramfs's init), beside the
        # serial console that keeps the kernel's messages.
        "-device", "virtio-serial-pci", "-chardev", f"file,id=out,path={output_of(console)}",
        "-device", "virtserialport,chardev=out,name=reclaimlab",
        "-nic", "none", "-no-reboot",
    ]


def output_of(console: Path) -> Path:
    """Where the guest's virtio-serial port is written, beside the serial console's file."""
    return console.with_name("output.log")


def read_transcript(console: Path) -> str:
    """What the guest printed: its virtio-serial port's output, then the serial console's
    (kernel messages, and everything when the port did not come up)."""
    parts = [p.read_text(errors="replace") for p in (output_of(console), console) if p.is_file()]
    return "\n".join(parts)


_PROBE = "@@reclaimlab:probe@@"


def kvm_works(k: kernel.Kernel, busybox: Path, work: Path, timeout_s: float = 45.0) -> bool:
    """Whether a KVM guest really runs here: /dev/kvm can exist and open while the guest never
    gets going (nested virtualization without the host's support). Boots a tiny initramfs that
    prints a marker and powers off; TCG is used when that does not come back in time."""
    if not kernel.kvm_usable():
        return False
    work.mkdir(parents=True, exist_ok=True)
    initrd = initramfs.build_probe(work / "probe.gz", busybox, _PROBE)
    console = work / "probe.log"
    console.unlink(missing_ok=True)
    argv = [
        kernel.qemu_binary(), "-machine", "q35", "-enable-kvm", "-cpu", "host", "-m", "256M",
        "-kernel", str(k.vmlinuz), "-initrd", str(initrd),
        "-append", "console=ttyS0 quiet loglevel=1 panic=-1 rdinit=/init",
        "-display", "none", "-monitor", "none", "-serial", f"file:{console}",
        "-nic", "none", "-no-reboot",
    ]
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return False
    return r.returncode == 0 and console.is_file() and _PROBE in console.read_text(errors="replace")


# What a guest's kernel prints when it is stuck rather than slow (the watchdogs' and the hung
# task detector's reports, an oops): named in an aborted boot's why, which a sitting keeps,
# since the console itself is scratch and the next boot overwrites it.
_COMPLAINTS = ("soft lockup", "hard LOCKUP", "blocked for more than", "rcu_sched self-detected",
               "rcu: INFO", "BUG:", "Oops", "Kernel panic")


def kernel_complaint(console: Path) -> str:
    """``; the guest's kernel reported "<first>" ... "<last>"`` for the first and last
    console lines that say the kernel was stuck or failed, or "" when none does."""
    try:
        lines = console.read_text(errors="replace").splitlines()
    except OSError:
        return ""
    found = [ln.strip() for ln in lines if any(c in ln for c in _COMPLAINTS)]
    if not found:
        return ""
    said = f'"{found[0]}"'
    if len(found) > 1:
        said += f' ... "{found[-1]}" ({len(found)} such lines)'
    return f"; the guest's kernel reported {said}"


# How often a running boot's console is read for a lock-up before its workload began.
_WATCH_S = 1.0
_WORKLOAD_BEGUN = f"{initramfs.MARK}:begin workload@@"


def stalled_before_workload(console: Path) -> bool:
    """The guest's kernel reported a soft lockup and the workload has not begun: the set-up
    is stuck (seen twice in 200 boots, /init in the kernel for minutes from about 8 s into
    the boot; once known to be just after the first snapshot, where the tracepoints are
    switched on), and the boot has measured nothing yet."""
    try:
        said = console.read_text(errors="replace")
    except OSError:
        return False
    if "soft lockup" not in said:
        return False
    try:
        out = output_of(console).read_text(errors="replace")
    except OSError:
        out = ""
    return _WORKLOAD_BEGUN not in said and _WORKLOAD_BEGUN not in out


def _run_qemu(spec: GuestSpec, argv: list[str], console: Path,
              timeout_s: float) -> tuple[int, str]:
    """Run QEMU to its power-off; returns its exit code and standard error. A lock-up before
    the workload began ends the boot at once (`SetUpStall`), any other boot that outlives
    ``timeout_s`` when it runs out."""
    try:
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                text=True)
    except FileNotFoundError:
        raise ValidateError(f"{argv[0]} not found; {kernel.SETUP_HINT}") from None
    deadline = time.monotonic() + timeout_s
    try:
        while True:
            try:
                _, stderr = proc.communicate(timeout=_WATCH_S)
                return proc.returncode, stderr
            except subprocess.TimeoutExpired:
                pass
            if stalled_before_workload(console):
                raise SetUpStall(
                    f"{spec.name}: the guest's kernel locked up before the workload began"
                    f"{kernel_complaint(console)} (console: {console})"
                )
            if time.monotonic() >= deadline:
                raise ValidateError(
                    f"{spec.name}: the guest did not power off within {timeout_s:.0f} s"
                    f"{kernel_complaint(console)} (console: {console}); raise --timeout or "
                    "shrink the workload",
                    exit_code=1,
                )
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def boot(
    spec: GuestSpec, k: kernel.Kernel, work: Path, busybox: Path, workload: Path, seed: int,
    kvm: bool, timeout_s: float = DEFAULT_TIMEOUT_S, all_tasks: bool = False,
    shrinkers: bool = False, swapin: bool = False,
) -> dict[str, Any]:
    """Boot the guest once for ``spec`` in ``work`` (a scratch directory) and return the
    repetition's record; the console transcript stays in ``work/console.log``. ``all_tasks``:
    trace every task's scheduler events; ``shrinkers``: every shrinker call; ``swapin``: the
    workload's swap-in path (initramfs.init_script)."""
    work.mkdir(parents=True, exist_ok=True)
    swap, data = _make_disks(spec, work)
    initrd = initramfs.build(
        work / "initrd.gz", spec, k.modules, busybox, workload, seed, all_tasks, shrinkers,
        swapin,
    )
    console = work / "console.log"
    console.unlink(missing_ok=True)
    output_of(console).unlink(missing_ok=True)
    argv = qemu_command(spec, k, initrd, swap, data, console, kvm)
    t0 = time.monotonic()
    returncode, stderr = _run_qemu(spec, argv, console, timeout_s)
    if returncode != 0:
        last = stderr.strip().splitlines()
        raise ValidateError(
            f"{spec.name}: QEMU failed: {last[-1] if last else f'exit code {returncode}'}", 1
        )
    text = read_transcript(console)
    rep = rep_from_transcript(text, str(console))
    rep["boot_s"] = round(time.monotonic() - t0, 3)
    # The images are scratch: up to the scenario's swap + data size each boot.
    swap.unlink(missing_ok=True)
    data.unlink(missing_ok=True)
    return rep
