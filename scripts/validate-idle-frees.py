"""Measure how many pages an idle guest frees: the figure behind `[[guest]] background_frees`
(mechanisms.md §D2: the RFC v8 capture arrays fill only from frees, so a guest that frees
nothing after its program exits never reports the arrays' last entries).

The guest is the validation guest (Debian's 6.1 kernel under QEMU, a busybox initramfs whose
/init is the only process: no systemd, journald, getty or network), with the seed's 5 GiB
and 2 vCPUs. /init sleeps until the boot has settled, then reads /proc/vmstat three times:
twice back to back (the difference is what one reading, a `cat`, costs) and once more after
WINDOW seconds of `sleep`. The idle rate is (third - second - one reading's cost) / WINDOW.
It is a floor for the seed's guests (a full distribution with its daemons and a console
login): only the kernel's own work (timers, per-CPU vmstat and RCU work, kworkers) is here.

With --rootfs DIR the guest is instead a Debian 12 system booted with systemd from an ext4
image made of DIR (systemd, udev, journald, rsyslog, cron, dbus and a getty on the serial
console: a distribution guest whose console is up, as the seed's were). Make DIR once with
`debootstrap --include=systemd-sysv,udev,cron,rsyslog,dbus bookworm DIR`; the script adds a
unit that takes the readings SETTLE_SYSTEM seconds after the boot's jobs are done, and powers off.

Usage: .venv/bin/python scripts/validate-idle-frees.py [--boots 3] [--window 60] [--rootfs DIR]
Writes validation/real/idle-frees.json (busybox guest) or idle-frees-systemd.json (--rootfs).
Needs what `reclaimlab validate --boot` needs (bash scripts/validate-setup.sh), and root for
the image (`mkfs.ext4 -d` keeps the tree's owners).
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
import subprocess
import sys
from pathlib import Path

from reclaimlab.validate import guest, initramfs, kernel, store
from reclaimlab.validate.errors import ValidateError

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "validation" / "real" / "idle-frees.json"
OUT_SYSTEM = ROOT / "validation" / "real" / "idle-frees-systemd.json"
SETTLE_SYSTEM_S = 60
IMAGE_MIB = 2048
RAM_MIB, VCPUS = 5120, 2
SETTLE_S = 30
COUNTERS = ("pgfree", "pgalloc_dma", "pgalloc_dma32", "pgalloc_normal", "pgalloc_movable")


def init_script(window_s: int) -> str:
    mark = initramfs.MARK
    snap = "\n".join(
        f'echo "{mark}:begin vmstat{i}@@"; cat /proc/vmstat; echo "{mark}:end vmstat{i}@@"'
        for i in range(2))
    return f"""#!/bin/busybox sh
/bin/busybox mkdir -p /bin /sbin /usr/bin /usr/sbin /proc /sys /dev
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
section() {{ echo "{mark}:begin $1@@"; cat "$2"; echo "{mark}:end $1@@"; }}
section uname /proc/version
sleep {SETTLE_S}
{snap}
sleep {window_s}
section vmstat2 /proc/vmstat
section uptime /proc/uptime
echo "{mark}:done@@"
poweroff -f
"""


def system_unit_script(window_s: int) -> str:
    """The measuring script the systemd guest runs once multi-user.target is reached."""
    mark = initramfs.MARK
    snap = "\n".join(
        f'echo "{mark}:begin vmstat{i}@@"; cat /proc/vmstat; echo "{mark}:end vmstat{i}@@"'
        for i in range(2))
    return f"""#!/bin/sh
# The second serial port: the first one is the console, where a getty hangs up whoever else
# has it open.
trap '' HUP
exec > /dev/ttyS1 2>&1
echo "{mark}:begin uname@@"; cat /proc/version; echo "{mark}:end uname@@"
# Until the boot's jobs are done (this unit is `simple`, so it is not one of them).
systemctl is-system-running --wait > /dev/null
sleep {SETTLE_SYSTEM_S}
{snap}
sleep {window_s}
echo "{mark}:begin vmstat2@@"; cat /proc/vmstat; echo "{mark}:end vmstat2@@"
echo "{mark}:begin uptime@@"; cat /proc/uptime; echo "{mark}:end uptime@@"
echo "{mark}:begin units@@"; systemctl list-units --state=running --no-legend --plain | cut -d' ' -f1; echo "{mark}:end units@@"
echo "{mark}:done@@"
systemctl poweroff --force --force
"""


def system_image(rootfs: Path, work: Path, window_s: int) -> Path:
    """An ext4 image of ``rootfs`` with the measuring unit enabled and an empty root password
    (the getty on the console is up, nobody logs in)."""
    script = rootfs / "usr/local/sbin/reclaimlab-idle"
    script.write_text(system_unit_script(window_s))
    script.chmod(0o755)
    unit = rootfs / "etc/systemd/system/reclaimlab-idle.service"
    unit.write_text("[Unit]\nDescription=reclaimlab idle-frees reading\n"
                    "\n[Service]\nType=simple\n"
                    "ExecStart=/usr/local/sbin/reclaimlab-idle\n\n"
                    "[Install]\nWantedBy=multi-user.target\n")
    wants = rootfs / "etc/systemd/system/multi-user.target.wants"
    wants.mkdir(parents=True, exist_ok=True)
    link = wants / "reclaimlab-idle.service"
    if not link.is_symlink():
        link.symlink_to("/etc/systemd/system/reclaimlab-idle.service")
    (rootfs / "etc/fstab").write_text("/dev/vda / ext4 rw,noatime 0 1\n")
    (rootfs / "etc/hostname").write_text("guest\n")
    image = work / "rootfs.ext4"
    image.unlink(missing_ok=True)
    kernel.run_tool(["mkfs.ext4", "-q", "-F", "-d", str(rootfs), str(image), f"{IMAGE_MIB}M"],
                    "mkfs.ext4", 600)
    return image


def system_initrd(k: kernel.Kernel, busybox: Path, work: Path) -> Path:
    """A busybox initramfs that loads virtio and ext4, mounts /dev/vda and hands over to the
    image's systemd."""
    kos = initramfs.module_order(k.modules)
    insmods = "\n".join(f"insmod /lib/modules/{ko.name}" for ko in kos)
    init = f"""#!/bin/busybox sh
/bin/busybox mkdir -p /bin /proc /sys /dev /newroot
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
{insmods}
n=0
while [ ! -b /dev/vda ]; do n=$((n + 1)); [ $n -gt 200 ] && poweroff -f; sleep 0.1; done
mount -t ext4 -o rw /dev/vda /newroot || poweroff -f
umount /proc /sys
mount --move /dev /newroot/dev
exec switch_root /newroot /sbin/init
"""
    archive = initramfs.Cpio()
    for d in ("bin", "lib", "lib/modules"):
        archive.directory(d)
    archive.file("bin/busybox", busybox.read_bytes(), 0o755)
    for ko in kos:
        archive.file(f"lib/modules/{ko.name}", ko.read_bytes())
    archive.file("init", init.encode(), 0o755)
    return initramfs.write_gzip(work / "initrd-system.gz", archive)


def boot(k: kernel.Kernel, busybox: Path, work: Path, window_s: int,
         rootfs: Path | None = None) -> dict:
    work.mkdir(parents=True, exist_ok=True)
    if rootfs is None:
        archive = initramfs.Cpio()
        archive.directory("bin")
        archive.file("bin/busybox", busybox.read_bytes(), 0o755)
        archive.file("init", init_script(window_s).encode(), 0o755)
        initrd = initramfs.write_gzip(work / "initrd.gz", archive)
        cmdline, disk, budget = "rdinit=/init", [], SETTLE_S + window_s + 300
    else:
        initrd = system_initrd(k, busybox, work)
        image = system_image(rootfs, work, window_s)
        cmdline = "rdinit=/init"
        ttys1 = work / "ttyS1.log"
        ttys1.unlink(missing_ok=True)
        disk = ["-drive", f"file={image},format=raw,if=virtio"]
        budget = SETTLE_SYSTEM_S + window_s + 900
    argv = [kernel.qemu_binary(), "-machine", "q35", "-accel", "tcg", "-cpu", "max",
            "-m", f"{RAM_MIB}M", "-smp", str(VCPUS), "-kernel", str(k.vmlinuz),
            "-initrd", str(initrd), *disk, "-append",
            f"console=ttyS0 quiet loglevel=1 panic=-1 {cmdline} transparent_hugepage=never",
            "-display", "none", "-monitor", "none", "-serial", "stdio", "-nic", "none",
            "-no-reboot"]
    if rootfs is not None:
        argv += ["-serial", f"file:{ttys1}"]
    p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=budget)
    text = p.stdout.decode(errors="replace").replace("\r", "")
    (work / "console.log").write_text(text)
    if rootfs is not None:
        text = (work / "ttyS1.log").read_text(errors="replace").replace("\r", "")
    t = guest.parse_transcript(text)
    snaps = []
    for i in range(3):
        sec = t.sections.get(f"vmstat{i}")
        if sec is None:
            raise ValidateError(f"no vmstat{i} section on the console ({work / 'console.log'})", 1)
        snaps.append({k: int(v) for k, v in (ln.split() for ln in sec.splitlines() if ln.strip())})
    one_read = {c: snaps[1].get(c, 0) - snaps[0].get(c, 0) for c in COUNTERS}
    window = {c: snaps[2].get(c, 0) - snaps[1].get(c, 0) for c in COUNTERS}
    idle = {c: window[c] - one_read[c] for c in COUNTERS}
    units = t.sections.get("units", "").split()
    return {"kernel": t.sections["uname"].strip(), "running_units": units,
            "one_reading": one_read, "window": window,
            "idle": idle, "pgfree_per_s": round(idle["pgfree"] / window_s, 2),
            "pgalloc_per_s": round(sum(idle[c] for c in COUNTERS[1:]) / window_s, 2)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--boots", type=int, default=3)
    ap.add_argument("--window", type=int, default=60)
    ap.add_argument("--rootfs", type=Path, help="a debootstrapped Debian tree: boot it with systemd")
    args = ap.parse_args()
    out = OUT if args.rootfs is None else OUT_SYSTEM
    try:
        k = kernel.fetch_kernel(store.CACHE)
        busybox = kernel.busybox_binary()
        reps = []
        for b in range(args.boots):
            print(f"validate-idle-frees: boot {b + 1}/{args.boots}", file=sys.stderr, flush=True)
            reps.append(boot(k, busybox, store.CACHE / "work-idle" / str(b), args.window,
                             args.rootfs))
            print(f"  pgfree {reps[-1]['pgfree_per_s']}/s", file=sys.stderr, flush=True)
    except ValidateError as e:
        print(f"validate-idle-frees: {e}", file=sys.stderr)
        return e.exit_code
    rates = [r["pgfree_per_s"] for r in reps]
    data = {
        "what": "pages freed (/proc/vmstat pgfree) and allocated (pgalloc_*) per second by an "
                f"idle guest of {RAM_MIB} MiB and {VCPUS} vCPUs "
                + ("whose only process is a busybox /init sleeping; "
                   f"{SETTLE_S} s after boot" if args.rootfs is None else
                   "booted with systemd from a debootstrapped Debian 12 (systemd-sysv, udev, "
                   "journald, rsyslog, cron, dbus, a serial getty); "
                   f"{SETTLE_SYSTEM_S} s after multi-user.target")
                + f", over a window of {args.window} s, less one vmstat reading's own cost",
        "kernel": reps[0]["kernel"], "accel": "TCG", "window_s": args.window,
        "date": datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat(),
        "pgfree_per_s": {"mean": round(statistics.mean(rates), 2),
                         "stdev": round(statistics.stdev(rates), 2) if len(rates) > 1 else 0.0,
                         "reps": rates},
        "reps": reps,
    }
    out.write_text(json.dumps(data, indent=1) + "\n")
    print(f"validate-idle-frees: pgfree {data['pgfree_per_s']['mean']} ± "
          f"{data['pgfree_per_s']['stdev']} /s; kept in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
