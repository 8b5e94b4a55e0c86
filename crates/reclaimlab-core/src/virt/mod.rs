//! Virtualization: guests whose RAM lives in their host. A guest is a machine of its own (the
//! same memory model as the host); what ties it to the host is here:
//!
//! - `kvm_main.rs`: the memory slot. Guest frame `pfn` is page `pfn` of one anonymous region of
//!   the VM's process on the host. A frame the guest allocates is touched: if the host has not
//!   backed it, the host faults it in (its allocator, its reclaim, its OOM killer, its RSS
//!   counter). A range the guest reports is discarded on the host.
//! - `virtio_balloon.rs`: the host side of a free page report (QEMU's handler): discard each
//!   range unless discards are inhibited, then ack.
//!
//! The guest side of hinting (what is reported, when, and how the guest's allocator treats
//! reported memory) is the guest kernel's: `machine::page_reporting` and the `hinting`
//! policy variants.

pub mod kvm_main;
pub mod virtio_balloon;

pub use crate::machine::cost::KvmCost;
pub use kvm_main::GuestMemory;
