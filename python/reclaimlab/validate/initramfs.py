"""The guest's initramfs: busybox, the kernel modules the disks need (from the package, in
dependency order), the workload program and its spec, and the /init script that sets the
guest up, measures and powers off.

The archive is a gzip'd cpio "newc" written here (no cpio binary needed), with fixed
timestamps and owners so the same inputs give the same bytes.
"""

from __future__ import annotations

import gzip
import io
from pathlib import Path

from .errors import ValidateError
from .spec import CGROUP_ROOT, DATA_MOUNT, GuestSpec

# The modules the guest loads: the virtio PCI transport, its block driver, and ext4 with the
# crc32c implementation its checksums ask the crypto API for (a soft dependency, which
# modinfo's `depends=` does not list).
# virtio_console: the harness's own output goes over a virtio-serial port, not the serial
# port, whose emulated UART under TCG took 25-40 s of a storm's boot for its 9 MB of trace.
ROOT_MODULES = ("virtio_pci", "virtio_blk", "crc32c_generic", "ext4", "virtio_console")
# An XFS data disk ([fs] type = "xfs") needs xfs too (its own crc32c comes through libcrc32c).
FS_MODULES = {"xfs": ("xfs",), "ext4": ()}


def roots_for(spec: GuestSpec) -> tuple[str, ...]:
    """The modules ``spec``'s guest loads: the disks' and ext4's, and xfs for an XFS scenario
    only (a scenario without it boots the same kernel memory as before)."""
    return ROOT_MODULES + FS_MODULES.get(spec.fs_type or "ext4", ())

# Section markers on the serial console; guest.py's parser looks for exactly these.
MARK = "@@reclaimlab"


def _modinfo_depends(ko: Path) -> list[str]:
    """The `depends=` list from a module's .modinfo strings (NUL-separated key=value)."""
    data = ko.read_bytes()
    for chunk in data.split(b"\0"):
        if chunk.startswith(b"depends="):
            text = chunk[len(b"depends=") :].decode("ascii", "replace")
            return [d for d in text.split(",") if d]
    return []


def module_order(modules_dir: Path, roots=ROOT_MODULES) -> list[Path]:
    """The .ko files for ``roots`` and everything they depend on, each after its dependencies
    (the order insmod needs; the package has no modules.dep, depmod makes that at install)."""
    index: dict[str, Path] = {}
    for ko in sorted(modules_dir.rglob("*.ko")):
        index.setdefault(ko.stem.replace("-", "_"), ko)
    order: list[Path] = []
    state: dict[str, str] = {}

    def visit(name: str, chain: tuple[str, ...]) -> None:
        key = name.replace("-", "_")
        if state.get(key) == "done":
            return
        if state.get(key) == "visiting":
            raise ValidateError(f"module dependency loop: {' -> '.join(chain + (key,))}")
        ko = index.get(key)
        if ko is None:
            raise ValidateError(
                f"module {key} (needed by {chain[-1] if chain else 'the guest'}) is not in "
                f"{modules_dir}; is it built in? then drop it from ROOT_MODULES"
            )
        state[key] = "visiting"
        for dep in _modinfo_depends(ko):
            visit(dep, chain + (key,))
        state[key] = "done"
        order.append(ko)

    for root in roots:
        visit(root, ())
    return order


# What /init reads of each cgroup before and after the workload: one section each,
# "cgroup PATH FILE WHEN".
CGROUP_READS = ("memory.current", "memory.peak", "memory.stat", "memory.events",
                "memory.pressure", "memory.swap.current", "memory.swap.events")


def _cgroup_lines(spec: GuestSpec) -> tuple[str, str]:
    """/init's lines that make the scenario's cgroups (mount cgroup2, enable the memory
    controller down to each cgroup, write its interface files), and the snapshot's lines that
    read them; both empty without [[cgroup]]."""
    if not spec.cgroups:
        return "", ""
    root = CGROUP_ROOT
    setup = [f"mount -t cgroup2 none {root} || fail 'mount cgroup2'",
             f"echo +memory > {root}/cgroup.subtree_control || fail 'enable memory at the root'"]
    parents = {path.rsplit("/", 1)[0] for path, _ in spec.cgroups if "/" in path}
    for path, files in spec.cgroups:
        setup.append(f"mkdir {root}/{path} || fail 'mkdir cgroup {path}'")
        if path in parents:
            setup.append(f"echo +memory > {root}/{path}/cgroup.subtree_control "
                         f"|| fail 'enable memory in {path}'")
        for name, value in files:
            setup.append(f"echo '{value}' > {root}/{path}/{name} || fail '{path} {name}={value}'")
    reads = [f'    section "cgroup {path} {f} $1" {root}/{path}/{f}'
             for path, _ in spec.cgroups for f in CGROUP_READS]
    return "\n".join(setup) + "\n", "\n".join(reads) + "\n"


def _lru_gen_lines(spec: GuestSpec) -> str:
    """/init's lines that choose the page-replacement algorithm: the two lists (the
    multi-generational LRU switched off where the kernel has it), or the multi-generational
    LRU with every capability (`y`: 0x0007) and, when the scenario sets it, its min_ttl_ms."""
    if spec.lru == "classic":
        return ("# Classic two-list LRU: the simulator models it, not the multi-gen LRU.\n"
                "if [ -e /sys/kernel/mm/lru_gen/enabled ]; then\n"
                "    echo 0 > /sys/kernel/mm/lru_gen/enabled || fail 'could not disable lru_gen'\n"
                "fi\n")
    lines = ["# The multi-generational LRU, as [policy] lru = \"mglru\" asks.",
             "[ -e /sys/kernel/mm/lru_gen/enabled ] || fail 'this kernel has no lru_gen'",
             "echo y > /sys/kernel/mm/lru_gen/enabled || fail 'could not enable lru_gen'"]
    if spec.lru_gen_min_ttl_ms is not None:
        lines.append(f"echo {spec.lru_gen_min_ttl_ms} > /sys/kernel/mm/lru_gen/min_ttl_ms "
                     f"|| fail 'lru_gen min_ttl_ms={spec.lru_gen_min_ttl_ms}'")
    return "\n".join(lines) + "\n"


# The workload program's tasks as the kernel names them (/reclaimlab-workload, cut to the 15
# characters of a task's comm): the swap-in probes record these tasks' faults alone.
WORKLOAD_COMM = "reclaimlab-work"

# /init's lines for a boot of `validate-trace.py --swapin` (docs/MODEL.md item 10): kprobe
# events on the swap-in path of Debian's 6.1 kernel, every one checked to be an out-of-line
# symbol of that kernel (its /proc/kallsyms and available_filter_functions; the static helpers
# that choose the window, swapin_nr_pages and __swapin_nr_pages, and the VMA-based
# swap_vma_readahead and swap_ra_info are inlined, not in kallsyms). Arguments are read
# from the x86-64 argument registers (di, si, dx, cx, r8) and from memory:
# - swapin_lookup: swap_cache_get_folio(entry, vma, addr) at entry: the swap entry (type in
#   the top bits, the slot below bit 58), the VMA (none: shmem's lookup, not a fault), the
#   faulting address, the global hit counter `swapin_readahead_hits` before the lookup (the
#   next reading of it tells whether the lookup took a PG_readahead flag: a readahead hit;
#   whether it found the page at all, what follows: the readahead on a miss; no kretprobe,
#   the costliest kind of probe, is needed), and the VMA's `swap_readahead_info`, which is
#   at byte 128 of 6.1's vm_area_struct (6.1 keeps VMAs in a maple tree: vm_start, vm_end,
#   vm_mm, vm_page_prot, vm_flags, the 32-byte interval-tree union `shared`, anon_vma_chain
#   (16), anon_vma, vm_ops, vm_pgoff, vm_file, vm_private_data: 128 bytes, as the kernel's own
#   BTF says too); it stays 0 while the offset-based readahead is in use.
# - swapin_cluster: swap_cluster_readahead(entry, ...) at entry, on a miss while a rotational
#   swap device is on: the state the window is chosen from, the hit counter and the two
#   statics of swapin_nr_pages (the last fault's slot and the last window; their symbols
#   carry a compiler suffix, looked up in /proc/kallsyms). The window a miss chose is the
#   "last window" the next miss reads: read_swap_cache_async, which the readahead calls last,
#   is inlined into swap_cluster_readahead (a probe on its out-of-line copy never fired in a
#   storm's boot), and swapin_nr_pages too.
# - swapin_read: swap_readpage(page, synchronous, plug): each page read from swap; the page's
#   swap entry is its `private`, at byte 40 of 6.1's struct page (flags, then lru (16),
#   mapping, index, private).
# Only the workload's tasks are recorded (the comm filter), so the trace buffer holds a
# storm's 20,000-60,000 faults beside the standard events.
_SWAPIN_KPROBES = (
    ("p", "swapin_lookup", "swap_cache_get_folio",
     "entry=%di:x64 vma=%si:x64 addr=%dx:x64 hits=@swapin_readahead_hits:s32 "
     "vma_ra=+128(%si):x64"),
    ("p", "swapin_cluster", "swap_cluster_readahead",
     "entry=%di:x64 hits=@swapin_readahead_hits:s32 prev=@$po:u64 last=@$lr:s32"),
    ("p", "swapin_read", "swap_readpage", "entry=+40(%di):x64 sync=%si:u8"),
)
SWAPIN_PROBES = "".join([
    "    static_sym() { grep -E \" $1\\.[0-9]+$\" /proc/kallsyms | head -n 1 | cut -d' ' -f3; }\n",
    "    po=$(static_sym prev_offset)\n",
    "    lr=$(static_sym last_readahead_pages)\n",
    "    [ -n \"$po\" ] && [ -n \"$lr\" ] || fail 'swap-in probes: no readahead statics'\n",
    *(f"    echo \"{kind}:swapin/{name} {func} {args}\" >> $T/kprobe_events "
      f"|| fail 'kprobe {name} on {func}'\n" for kind, name, func, args in _SWAPIN_KPROBES),
    *(f"    echo 'comm == \"{WORKLOAD_COMM}\"' > $T/events/swapin/{name}/filter "
      f"|| fail 'filter {name}'\n"
      f"    echo 1 > $T/events/swapin/{name}/enable || fail 'enable {name}'\n"
      for _, name, _, _ in _SWAPIN_KPROBES),
])


def init_script(
    spec: GuestSpec, modules: list[str], seed: int, all_tasks: bool = False,
    shrinkers: bool = False, swapin: bool = False,
) -> str:
    """The guest's /init (busybox sh). Every measurement goes to the console between
    `@@reclaimlab:begin NAME@@` / `@@reclaimlab:end NAME@@` lines; a failure prints one
    `@@reclaimlab:error ...@@` line and powers off, so the host never waits for its timeout.
    ``all_tasks`` traces every task's scheduler events, not kswapd0's alone: the workload's own
    time on its vCPU (ktrace.workload_time), at the price of a larger trace and a slower boot.
    ``shrinkers`` adds every `do_shrink_slab` call (`mm_shrink_slab_start`/`_end`): which of
    the kernel's shrinkers scanned what `slabs_scanned` counts (shrinktrace.shrinkers).
    ``swapin`` adds kprobes on the workload's swap-in path (SWAPIN_PROBES): each swap-cache
    lookup and whether it found the page, each readahead window chosen and each page read
    (swapintrace.swapins)."""
    sched_filters = "" if all_tasks else (
        "    echo 'comm == \"kswapd0\"' > $T/events/sched/sched_wakeup/filter\n"
        "    echo 'next_comm == \"kswapd0\" || prev_comm == \"kswapd0\"' "
        "> $T/events/sched/sched_switch/filter\n"
    )
    shrinker_events = (
        "    echo 1 > $T/events/vmscan/mm_shrink_slab_start/enable\n"
        "    echo 1 > $T/events/vmscan/mm_shrink_slab_end/enable\n"
    ) if shrinkers else ""
    swapin_events = SWAPIN_PROBES if swapin else ""
    thp = "madvise" if spec.thp else "never"
    fstype = spec.fs_type or "ext4"
    sysctl_lines = "\n".join(
        f"echo '{value}' > /proc/sys/vm/{key} || fail 'sysctl vm.{key}={value}'"
        for key, value in spec.sysctls.items()
    )
    insmods = "\n".join(f"insmod /lib/modules/{m} || fail 'insmod {m}'" for m in modules)
    cgroup_setup, cgroup_snapshot = _cgroup_lines(spec)
    lru_gen_lines = _lru_gen_lines(spec)
    return f"""#!/bin/busybox sh
/bin/busybox mkdir -p /bin /sbin /usr/bin /usr/sbin /proc /sys /dev /tmp {DATA_MOUNT}
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null

fail() {{ echo "{MARK}:error $*@@"; sync; poweroff -f; }}
section() {{ echo "{MARK}:begin $1@@"; cat "$2"; echo "{MARK}:end $1@@"; }}
# Where a boot's time goes (seconds since the kernel started, printed at the end): the
# workload is a third to a half of a boot, and a sitting is a hundred boots.
phase() {{ echo "$1 $(cut -d' ' -f1 /proc/uptime)" >> /tmp/phases; }}
phase init
snapshot() {{
    section "vmstat $1" /proc/vmstat
    section "meminfo $1" /proc/meminfo
    section "zoneinfo $1" /proc/zoneinfo
    section "pagetypeinfo $1" /proc/pagetypeinfo
    section "slabinfo $1" /proc/slabinfo
    [ -r /proc/pressure/memory ] && section "pressure $1" /proc/pressure/memory
{cgroup_snapshot}}}

{insmods}
# virtio devices are probed asynchronously: wait for both disks (10 s at most).
n=0
while [ ! -b /dev/vda ] || [ ! -b /dev/vdb ]; do
    n=$((n + 1)); [ $n -gt 100 ] && fail 'virtio disks /dev/vda /dev/vdb did not appear'
    sleep 0.1
done

phase disks
# From here the script's output (and the workload program's) goes over a virtio-serial port
# when it came up (whole buffers a write; a console, hvc0, takes 16 bytes a write); kernel
# messages stay on the serial console. The parser reads both.
port=
n=0
while [ -z "$port" ] && [ $n -lt 20 ]; do
    for p in /dev/vport*p*; do [ -c "$p" ] && port=$p; done
    [ -n "$port" ] || {{ n=$((n + 1)); sleep 0.1; }}
done
[ -n "$port" ] && exec >"$port" 2>&1
phase output
{lru_gen_lines}echo {thp} > /sys/kernel/mm/transparent_hugepage/enabled || fail 'could not set THP'
{sysctl_lines}
{cgroup_setup}
mkswap /dev/vda >/dev/null || fail 'mkswap /dev/vda'
swapon /dev/vda || fail 'swapon /dev/vda'
mount -t {fstype} -o noatime /dev/vdb {DATA_MOUNT} || fail 'mount /dev/vdb ({fstype})'

phase mounted
/reclaimlab-workload prepare /workload.spec || fail 'workload prepare'
phase prepared
sync
echo 3 > /proc/sys/vm/drop_caches
# Let the writeback and the freeing of the preparation settle before the first snapshot.
sleep 2
phase settled

# The trace buffer (16 MiB per CPU, 8192 pages with 2 vCPUs) is taken before the first
# snapshot: taken after it, it came out of the workload's page cache unseen by the simulator
# (which carries MemTotal - MemFree before the workload over as kernel_used), and a traced
# boot of mix ended with 7,900 file pages fewer and 10,000 more reclaimed than an untraced
# one (docs/VALIDATION.md, "What a traced boot shows").
T=/sys/kernel/tracing
TRACING=0
if mount -t tracefs nodev $T 2>/dev/null; then
    echo 16384 > $T/buffer_size_kb
    TRACING=1
fi

section uname /proc/version
echo "{MARK}:begin sysctl@@"
for k in min_free_kbytes watermark_scale_factor watermark_boost_factor swappiness page-cluster; do
    echo "$k $(cat /proc/sys/vm/$k)"
done
echo "lru_gen $(cat /sys/kernel/mm/lru_gen/enabled 2>/dev/null || echo absent)"
echo "thp $(cat /sys/kernel/mm/transparent_hugepage/enabled)"
echo "thp_defrag $(cat /sys/kernel/mm/transparent_hugepage/defrag)"
# Which swap readahead the kernel uses: the offset-based one while a rotational device is
# swapped on, else the VMA-based one if enabled (the simulator mirrors the device's flag).
echo "swap_rotational $(cat /sys/block/vda/queue/rotational)"
echo "vma_ra_enabled $(cat /sys/kernel/mm/swap/vma_ra_enabled 2>/dev/null || echo absent)"
echo "{MARK}:end sysctl@@"
snapshot before
# kswapd's wake-ups and its switches onto and off a CPU (its wake-up latency, the simulator's
# [cost] wakeup_latency, and its time on a CPU), and the reclaim events that say who reclaims
# when (validate/ktrace.py), with what each LRU pass scanned, skipped and reclaimed: only
# kswapd0's scheduler events, so the buffer stays small.
if [ $TRACING = 1 ]; then
{sched_filters}    echo 1 > $T/events/sched/sched_wakeup/enable
    echo 1 > $T/events/sched/sched_switch/enable
    for e in mm_vmscan_wakeup_kswapd mm_vmscan_kswapd_wake mm_vmscan_kswapd_sleep \
             mm_vmscan_direct_reclaim_begin mm_vmscan_direct_reclaim_end \
             mm_vmscan_lru_isolate mm_vmscan_lru_shrink_inactive; do
        echo 1 > $T/events/vmscan/$e/enable
    done
    # Fallbacks into another migratetype's pageblock (the watermark boost's cause).
    echo 1 > $T/events/kmem/mm_page_alloc_extfrag/enable
    echo 1 > $T/events/compaction/mm_compaction_try_to_compact_pages/enable || echo "no compaction tracepoint"
    # Huge pages (their gfp masks), and the DMA zone's pages: when DMA32 is under its low mark
    # the DMA zone serves whole read-ahead windows, whose allocations show the window's pace.
    echo 'order > 8 || pfn < 4096' > $T/events/kmem/mm_page_alloc/filter
    echo 1 > $T/events/kmem/mm_page_alloc/enable
    # Each disk request's issue and completion: how long a page stays under writeback.
    echo 1 > $T/events/block/block_rq_issue/enable
    echo 1 > $T/events/block/block_rq_complete/enable
    # The reclaimers' block plugs: when a plug opens and is flushed (explicitly at the end of
    # a reclaim pass, or on its request limit), and the requests it inserts.
    echo 1 > $T/events/block/block_plug/enable
    echo 1 > $T/events/block/block_unplug/enable
    echo 1 > $T/events/block/block_rq_insert/enable
{shrinker_events}{swapin_events}    echo 1 > $T/tracing_on
fi
phase workload
echo "{MARK}:begin workload@@"
/reclaimlab-workload run /workload.spec {seed} || fail 'workload run'
echo "{MARK}:end workload@@"
phase workload_end
if [ -e $T/tracing_on ]; then
    echo 0 > $T/tracing_on
    section sched $T/trace
    phase traced
fi
snapshot after
phase after
sync
phase synced
section phases /tmp/phases
echo "{MARK}:done@@"
poweroff -f
"""


class Cpio:
    """A cpio "newc" archive in memory."""

    def __init__(self) -> None:
        self.buf = io.BytesIO()
        self.ino = 1

    def _entry(self, name: str, mode: int, data: bytes = b"") -> None:
        fields = [self.ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(name) + 1, 0]
        self.ino += 1
        header = "070701" + "".join(f"{v:08X}" for v in fields)
        self.buf.write(header.encode("ascii") + name.encode() + b"\0")
        self.buf.write(b"\0" * (-(110 + len(name) + 1) % 4))
        self.buf.write(data)
        self.buf.write(b"\0" * (-len(data) % 4))

    def directory(self, name: str) -> None:
        self._entry(name, 0o040755)

    def file(self, name: str, data: bytes, mode: int = 0o644) -> None:
        self._entry(name, 0o100000 | mode, data)

    def finish(self) -> bytes:
        self._entry("TRAILER!!!", 0)
        return self.buf.getvalue()


def build(
    out: Path, spec: GuestSpec, modules_dir: Path, busybox: Path, workload: Path, seed: int,
    all_tasks: bool = False, shrinkers: bool = False, swapin: bool = False,
) -> Path:
    """Write the initramfs for one boot of ``spec`` to ``out`` (``all_tasks``, ``shrinkers``,
    ``swapin``: init_script's)."""
    kos = module_order(modules_dir, roots_for(spec))
    archive = Cpio()
    for d in ("bin", "lib", "lib/modules"):
        archive.directory(d)
    archive.file("bin/busybox", busybox.read_bytes(), 0o755)
    for ko in kos:
        archive.file(f"lib/modules/{ko.name}", ko.read_bytes())
    archive.file("reclaimlab-workload", workload.read_bytes(), 0o755)
    archive.file("workload.spec", spec.workload_spec.encode())
    init = init_script(spec, [k.name for k in kos], seed, all_tasks, shrinkers, swapin)
    archive.file("init", init.encode(), 0o755)
    return write_gzip(out, archive)


def write_gzip(out: Path, archive: Cpio) -> Path:
    """The finished archive, gzip'd with a fixed header (same inputs, same bytes), at ``out``."""
    out.write_bytes(gzip.compress(archive.finish(), compresslevel=6, mtime=0))
    return out


def build_probe(out: Path, busybox: Path, marker: str) -> Path:
    """An initramfs whose /init prints ``marker`` and powers off: the KVM probe's guest."""
    archive = Cpio()
    archive.directory("bin")
    archive.file("bin/busybox", busybox.read_bytes(), 0o755)
    init = f"#!/bin/busybox sh\n/bin/busybox echo '{marker}'\n/bin/busybox poweroff -f\n"
    archive.file("init", init.encode(), 0o755)
    return write_gzip(out, archive)
