"""The host side's tools and inputs: Debian's 6.1 kernel package (downloaded with apt-get, never
installed, unpacked with dpkg-deb into the cache), QEMU, busybox, and the static build of the
workload program. Every external command is bounded by a timeout and every failure is one
:class:`ValidateError` line that says what to install or run."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .errors import ValidateError

SETUP_HINT = "run `bash scripts/validate-setup.sh` (installs qemu-system-x86, busybox-static)"
# The metapackage that names the current 6.1 ABI (linux-image-6.1.0-N-amd64).
META_PACKAGE = "linux-image-amd64"
WORKLOAD_SOURCE = Path(__file__).with_name("workload.c")
BALLOON_SOURCE = Path(__file__).with_name("balloon.c")


@dataclass(frozen=True)
class Kernel:
    """An unpacked kernel package: the bzImage, its module tree and where it came from."""

    package: str
    version: str  # the package version, e.g. 6.1.192-2
    release: str  # uname -r, e.g. 6.1.0-56-amd64
    vmlinuz: Path
    modules: Path  # lib/modules/<release>


def run_tool(argv: list[str], what: str, timeout: float, **kw) -> subprocess.CompletedProcess:
    """Run ``argv`` and return it; a ValidateError naming ``what`` if it is missing, fails or
    takes longer than ``timeout`` seconds."""
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kw)
    except FileNotFoundError:
        raise ValidateError(f"{what}: `{argv[0]}` not found; {SETUP_HINT}") from None
    except subprocess.TimeoutExpired:
        raise ValidateError(f"{what}: `{' '.join(argv)}` took longer than {timeout:.0f} s") from None
    if r.returncode != 0:
        last = (r.stderr or r.stdout).strip().splitlines()
        reason = last[-1] if last else f"exit code {r.returncode}"
        raise ValidateError(f"{what}: `{' '.join(argv[:3])}` failed: {reason}")
    return r


def require(program: str, package: str) -> str:
    path = shutil.which(program)
    if path is None:
        raise ValidateError(f"{program} not found (Debian package {package}); {SETUP_HINT}")
    return path


def qemu_binary() -> str:
    return require("qemu-system-x86_64", "qemu-system-x86")


def _is_static(path: Path) -> bool:
    """An x86_64 ELF with no PT_INTERP program header: it needs no dynamic loader."""
    with open(path, "rb") as f:
        head = f.read(64)
        if head[:4] != b"\x7fELF" or head[4] != 2:
            return False
        phoff = int.from_bytes(head[0x20:0x28], "little")
        phentsize = int.from_bytes(head[0x36:0x38], "little")
        phnum = int.from_bytes(head[0x38:0x3A], "little")
        f.seek(phoff)
        table = f.read(phentsize * phnum)
    return all(
        int.from_bytes(table[i * phentsize : i * phentsize + 4], "little") != 3
        for i in range(phnum)
    )


def busybox_binary() -> Path:
    """A statically linked busybox: the initramfs has no libc to load a dynamic one with."""
    for candidate in ("/bin/busybox", "/usr/bin/busybox"):
        p = Path(candidate)
        if p.is_file() and _is_static(p):
            return p
    raise ValidateError(f"no statically linked busybox (Debian package busybox-static); {SETUP_HINT}")


def kvm_usable() -> bool:
    """/dev/kvm exists and this user may open it (CI machines may have neither)."""
    try:
        fd = os.open("/dev/kvm", os.O_RDWR)
    except OSError:
        return False
    os.close(fd)
    return True


def qemu_version(qemu: str) -> str:
    first = run_tool([qemu, "--version"], "QEMU", 30).stdout.splitlines()
    return first[0].strip() if first else "unknown"


def _current_package() -> str:
    """``linux-image-6.1.0-N-amd64-unsigned`` for the newest ABI the apt lists know."""
    out = run_tool(["apt-cache", "depends", META_PACKAGE], "kernel package lookup", 60).stdout
    m = re.search(r"Depends:\s*(linux-image-6\.1\.\S+-amd64)\b", out)
    if not m:
        raise ValidateError(
            f"kernel package lookup: apt does not know {META_PACKAGE} for Linux 6.1; "
            "run `apt-get update` on a Debian 12 (bookworm) host"
        )
    return m.group(1) + "-unsigned"


def fetch_kernel(cache: Path, package: str | None = None) -> Kernel:
    """The kernel of ``package`` (default: the current 6.1 one), downloaded into ``cache`` with
    `apt-get download` and unpacked with `dpkg-deb -x` the first time."""
    cache.mkdir(parents=True, exist_ok=True)
    debs = sorted(cache.glob("linux-image-6.1.*-amd64*.deb"))
    if package is not None:
        debs = [d for d in debs if d.name.startswith(package + "_")]
    if not debs:
        package = package or _current_package()
        run_tool(["apt-get", "download", package], f"downloading {package}", 600, cwd=cache)
        debs = sorted(cache.glob(f"{package}_*.deb"))
        if not debs:
            raise ValidateError(f"downloading {package}: apt-get left no .deb in {cache}")
    deb = debs[-1]
    pkg, version = deb.name.split("_")[:2]
    root = cache / deb.stem
    if not (root / ".unpacked").is_file():
        shutil.rmtree(root, ignore_errors=True)
        run_tool(["dpkg-deb", "-x", str(deb), str(root)], f"unpacking {deb.name}", 300)
        (root / ".unpacked").write_text(deb.name + "\n")
    images = sorted((root / "boot").glob("vmlinuz-*"))
    if not images:
        raise ValidateError(f"{deb.name}: no boot/vmlinuz-* inside; is it a kernel image package?")
    release = images[-1].name.removeprefix("vmlinuz-")
    modules = root / "lib" / "modules" / release
    if not modules.is_dir():
        raise ValidateError(f"{deb.name}: no lib/modules/{release} inside")
    return Kernel(pkg, version, release, images[-1], modules)


def build_workload(cache: Path) -> Path:
    """The workload program, built statically (the initramfs has no libc) when its source is
    newer than the binary."""
    return build_static(WORKLOAD_SOURCE, cache / "reclaimlab-workload")


def build_balloon(cache: Path) -> Path:
    """The balloon run's guest program (balloon.c), built like the workload program."""
    return build_static(BALLOON_SOURCE, cache / "reclaimlab-balloon")


def build_static(source: Path, out: Path) -> Path:
    """``source`` compiled and linked statically into ``out``, unless ``out`` is newer."""
    if out.is_file() and out.stat().st_mtime >= source.stat().st_mtime:
        return out
    gcc = require("gcc", "gcc")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    run_tool(
        [gcc, "-O2", "-Wall", "-static", "-pthread", "-o", str(tmp), str(source), "-lm"],
        f"building {source.name} (static; needs libc6-dev)",
        300,
    )
    tmp.replace(out)
    return out
