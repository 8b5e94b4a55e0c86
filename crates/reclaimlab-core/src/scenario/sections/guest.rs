//! `[[guest]]`: a guest, a machine of its own, with the machine tables it shares with the
//! host (`[guest.sysctl]`, `[guest.swap]`, `[guest.cost]`, `[guest.policy]`), what crossing to
//! the host costs (`[guest.kvm]`), its own `[[guest.workload]]`s and, on a Xen host, its
//! virtual block devices (`[[guest.vbd]]`, declared in `xen.rs`).

use crate::scenario::schema::{section, Array, Child, Embedded, Fix, Rule, Ty, Unique, Val};
use crate::scenario::units::format_size;
use crate::scenario::writer::Writer;
use crate::scenario::{
    CostModel, GuestConfig, KvmCost, MachineType, PolicyConfig, Scenario, SwapDevice, Sysctl, Vbd,
    Workload, GIB, MIB, NS_PER_SEC, NS_PER_US,
};

use super::machine::{COST, SWAP, SYSCTL};
use super::policy::PolicyTable;
use super::workload::WORKLOAD;

const LATENCY: Ty = Ty::Duration { min: 0 };

/// `[[guest]] background_frees` when unset: pages a second. Idle guests measured under QEMU
/// free 0.8 a second, a busybox-only guest and a Debian 12 one with systemd alike
/// (validation/real/idle-frees.json, idle-frees-systemd.json).
pub const DEFAULT_BACKGROUND_FREES: u64 = 1;

section! {
    KvmCost => pub static KVM = "kvm",
        "What crossing between the guest and its host costs (mechanisms.md §D.0, §D3); \
         estimates, not measurements." {
        host_fault_ns: 2 * NS_PER_US => Key::new(
            "host_fault",
            LATENCY,
            "a guest's first touch of a frame the host has not backed: exit, host fault, \
             re-entry (besides the host's own anon_fault cost)",
        );
        report_ns: 30 * NS_PER_US => Key::new(
            "report",
            LATENCY,
            "one report round trip: kick, host handler, ack, interrupt (besides the discards)",
        );
        discard_page_ns: 150 => Key::new(
            "discard_page",
            LATENCY,
            "the host dropping one 4KiB page of a reported range (MADV_DONTNEED)",
        );
        isolate_ns: 100 => Key::new(
            "isolate",
            LATENCY,
            "isolating one free block from the guest's buddy and putting it back",
        );
        hypercall_ns: 2 * NS_PER_US => Key::new(
            "hypercall",
            LATENCY,
            "one synchronous hinting hypercall (D2b), exit to re-entry",
        );
        scan_compare_ns: 1 => Key::new(
            "scan_compare",
            LATENCY,
            "one comparison of the D2 capture array's inline scan",
        );
        kthread_wakeup_ns: 50 * NS_PER_US => Key::new(
            "kthread_wakeup",
            LATENCY,
            "D2: from the capture array filling to its kthread running (frees meanwhile are lost)",
        );
    }
    children: [],
    rules: [],
    derived: None,
}

section! {
    GuestConfig => pub static GUEST = "guest",
        "A KVM guest: a machine of its own (the host's memory model) whose RAM is anonymous \
         memory of one process on the host. Its workloads' times count from its start." {
        name: String::new() => Key::new("name", Ty::Text { what: "guest name" }, "unique name; names its VM process and result directory")
            .required("name = \"vm1\"");
        ram_bytes: 2 * GIB => Key::new("ram", Ty::Size { min: 64 * MIB, max: 1024 * GIB }, "guest RAM");
        vcpus: 1 => Key::new("vcpus", Ty::UInt { min: 1, max: 1024 }, "virtual CPUs");
        machine: MachineType::Q35 => Key::new(
            "machine",
            Ty::Choice { names: MachineType::NAMES, what: "machine type" },
            "QEMU machine type, decides the guest RAM below 4GiB",
        );
        thp: false => Key::new("thp", Ty::Bool, "transparent huge pages in the guest kernel");
        page_tables: true => Key::new(
            "page_tables",
            Ty::Bool,
            "the guest's anonymous memory has page-table pages (as [host] page_tables): they sit \
             among a program's pages until it exits, which decides what a free can merge into",
        );
        fragment_stride: None => Key::new(
            "fragment_stride",
            Ty::UInt { min: 2, max: 1024 },
            "an aged guest: one long-lived kernel page pinned in every fragment_stride pages of \
             its highest zone (as [host] fragmented_zone), so no free block that large forms there",
        )
        .unset("a freshly booted guest: its free memory is in the largest blocks")
        .check(stride_power_of_two);
        start_ns: 0 => Key::new("start", Ty::Duration { min: 0 }, "host time at which the VM starts");
        shutdown_ns: None => Key::new("shutdown", Ty::Duration { min: 1 }, "host time at which the VM shuts down and its process exits")
            .unset("it runs to the end of the run")
            .check(shutdown_after_start);
        boot_resident_bytes: 800 * MIB => Key::new(
            "boot_resident",
            Ty::Size { min: 0, max: u64::MAX },
            "memory the guest kernel holds after booting: host-resident from the start \
             (mechanisms.md §D.5's base, about 0.5-1 GB)",
        )
        .check(boot_resident_fits);
        page_reporting_order: crate::machine::PAGEBLOCK_ORDER => Key::new(
            "page_reporting_order",
            Ty::UInt { min: 0, max: (crate::machine::MAX_ORDER - 1) as u64 },
            "smallest order the reporting variants (D3, D4) report; 6.1's virtio-balloon registers pageblock_order",
        );
        background_frees: DEFAULT_BACKGROUND_FREES => Key::new(
            "background_frees",
            Ty::UInt { min: 0, max: 100_000_000 },
            "pages the guest's own system (kernel threads, timers, daemons) allocates and frees \
             a second, besides its workloads, shared evenly by its vCPUs; the default is the \
             measured rate of an idle guest (scripts/validate-idle-frees.py); 0: none",
        );
        background_lifetime_ns: NS_PER_SEC => Key::new(
            "background_lifetime",
            Ty::Duration { min: 1 },
            "mean time a background page is held before it is freed (exponential lifetimes; \
             an abstraction, not measured)",
        );
        discard_inhibited: false => Key::new(
            "discard_inhibited",
            Ty::Bool,
            "the host has discards inhibited (device assignment, postcopy): reports are acked \
             and nothing is discarded",
        );
        cgroup: None => Key::new(
            "cgroup",
            Ty::Text { what: "cgroup name" },
            "the host memory cgroup (a [[cgroup]] name) the VM's process runs in: its guest RAM \
             is charged there as the process's anonymous memory, so the cgroup's memory.max, \
             memory.high and memory.low limit and protect the VM as one process",
        )
        .unset("the root cgroup");
        sysctl: Sysctl::default();
        swap: SwapDevice::default();
        cost: CostModel::default();
        kvm: KvmCost::default();
        policy: PolicyConfig::default();
        vbds: Vec::new();
        workloads: Vec::new();
    }
    children: [
        AS_MACHINE_SYSCTL,
        AS_MACHINE_SWAP,
        AS_MACHINE_COST,
        Embedded::<GuestConfig, KvmCost> {
            section: &KVM,
            get: |g| &g.kvm,
            get_mut: |g| &mut g.kvm,
        },
        AsMachine(PolicyTable::<GuestConfig> {
            get: |g| &g.policy,
            get_mut: |g| &mut g.policy,
        }),
        Array::<GuestConfig, Vbd> {
            section: &super::xen::VBD,
            get: |g| &g.vbds,
            get_mut: |g| &mut g.vbds,
            missing: ("", ""),
            optional_if: |_| true,
            unique: Some(Unique {
                key: "name",
                value: |v| v.name.as_str(),
                help: "every VBD of a guest needs its own name",
            }),
        },
        Array::<GuestConfig, Workload> {
            section: &WORKLOAD,
            get: |g| &g.workloads,
            get_mut: |g| &mut g.workloads,
            missing: ("", ""),
            optional_if: |_| true,
            unique: Some(Unique {
                key: "name",
                value: |w| w.name.as_str(),
                help: "every workload of a guest needs its own name",
            }),
        },
    ],
    rules: [Rule {
        name: "a guest has no filesystem",
        doc: "a `[[guest.workload]]` cannot have a fsmark, simoops or stat table: guests have no `[fs]`",
        check: |g, _| match g.workloads.iter().position(|w| w.fsmark.is_some() || w.simoops.is_some() || w.stat.is_some()) {
            Some(i) => Err(Fix::new(
                format!(
                    "guest workload \"{}\" works on a filesystem, and guests have none",
                    g.workloads[i].name
                ),
                "run the fsmark or simoops workload on the host (a top-level [[workload]] with an [fs] table)",
            )
            .at(format!("workload[{i}]"))),
            None => Ok(()),
        },
    }],
    derived: None,
}

static AS_MACHINE_SYSCTL: AsMachine<Embedded<GuestConfig, Sysctl>> = AsMachine(Embedded {
    section: &SYSCTL,
    get: |g| &g.sysctl,
    get_mut: |g| &mut g.sysctl,
});
static AS_MACHINE_SWAP: AsMachine<Embedded<GuestConfig, SwapDevice>> = AsMachine(Embedded {
    section: &SWAP,
    get: |g| &g.swap,
    get_mut: |g| &mut g.swap,
});
static AS_MACHINE_COST: AsMachine<Embedded<GuestConfig, CostModel>> = AsMachine(Embedded {
    section: &COST,
    get: |g| &g.cost,
    get_mut: |g| &mut g.cost,
});

/// A machine table of a guest: printed with the guest as the machine the computed values
/// (its default min_free_kbytes, its zones' watermarks) are worked out for, not the host.
pub struct AsMachine<C>(pub C);

impl<C: Child<GuestConfig>> Child<GuestConfig> for AsMachine<C> {
    fn name(&self) -> &'static str {
        self.0.name()
    }
    fn parse(
        &self,
        cx: &crate::scenario::source::Ctx,
        parent: &crate::scenario::source::Table,
        out: &mut GuestConfig,
    ) -> crate::scenario::error::Res<()> {
        self.0.parse(cx, parent, out)
    }
    fn show(&self, w: &mut Writer, parent: &GuestConfig, root: &Scenario, prefix: &str) {
        self.0.show(w, parent, &parent.as_machine(root), prefix)
    }
    fn doc(&self, out: &mut String, prefix: &str) {
        self.0.doc(out, prefix)
    }
}

impl GuestConfig {
    /// The guest described as a scenario's machine (`[host]`, `[sysctl]`, `[swap]`, `[cost]`,
    /// `[policy]` are the guest's; the rest is the host scenario's): what the machine builder
    /// and the printer's computed values read.
    pub fn as_machine(&self, host: &Scenario) -> Scenario {
        let mut s = host.clone();
        s.name = self.name.clone();
        s.host.ram_bytes = self.ram_bytes;
        s.host.cpus = self.vcpus;
        s.host.machine = self.machine;
        s.host.thp = self.thp;
        s.host.page_tables = self.page_tables;
        s.host.lowmem_bytes = None;
        s.host.zoneinfo = None;
        // The aged zone is the guest's highest: Normal, or DMA32 for a guest below 4GiB.
        let highest = if crate::machine::layout::lowmem_bytes(&s.host.ram_layout()) < self.ram_bytes
        {
            crate::machine::ZONE_NORMAL
        } else {
            crate::machine::ZONE_DMA32
        };
        s.host.fragmented_zone = self.fragment_stride.map(|_| highest);
        s.host.fragment_stride = self.fragment_stride.unwrap_or(s.host.fragment_stride);
        s.host.kernel_used_bytes = self.boot_resident_bytes;
        s.sysctl = self.sysctl.clone();
        s.swap = self.swap.clone();
        s.cost = self.cost.clone();
        s.policy = self.policy.clone();
        s.fs = None;
        s.guests = Vec::new();
        s.xen = None;
        s.workloads = self.workloads.clone();
        s
    }
}

fn stride_power_of_two(_: &GuestConfig, v: &Val) -> Result<(), Fix> {
    match v {
        Val::U(n) if !n.is_power_of_two() => Err(Fix::new(
            format!("fragment_stride must be a power of two, not {n}"),
            "use 512 to forbid 2MiB blocks (nothing for free page reporting to report), 1024 to \
             forbid only the largest",
        )),
        _ => Ok(()),
    }
}

fn shutdown_after_start(g: &GuestConfig, v: &Val) -> Result<(), Fix> {
    match v {
        Val::U(t) if *t <= g.start_ns => Err(Fix::new(
            "a guest must shut down after it starts",
            "set shutdown later than start, or leave it out (the VM then runs to the end)",
        )),
        _ => Ok(()),
    }
}

fn boot_resident_fits(g: &GuestConfig, v: &Val) -> Result<(), Fix> {
    match v {
        // The guest kernel's own reserves need room beside what it holds.
        Val::U(b) if *b > g.ram_bytes / 2 => Err(Fix::new(
            format!(
                "boot_resident ({}) must be at most half the guest's ram ({})",
                format_size(*b),
                format_size(g.ram_bytes)
            ),
            "lower boot_resident, or give the guest more ram",
        )),
        _ => Ok(()),
    }
}

/// Hinting is something a guest does: the host's own `[policy] hinting` stays "D1".
pub(super) const HOST_HINTING: Rule<Scenario> = Rule {
    name: "hinting is a guest's",
    doc: "`[policy] hinting` of the top level (the host) must stay \"D1\"; set it in a \
          `[guest.policy]` table",
    check: |s, _| {
        let named = s
            .policy
            .choices
            .entries
            .iter()
            .any(|&(k, v, named)| k == "hinting" && named && v != "D1");
        if named {
            Err(Fix::new(
                "the host reports free pages to nobody: [policy] hinting applies to guests",
                "move it into the guest's table: [guest.policy] hinting = \"D4\"",
            )
            .at("policy.hinting"))
        } else {
            Ok(())
        }
    },
};
