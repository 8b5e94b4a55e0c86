//! reclaimlab-core: a deterministic discrete-event simulator of Linux memory reclaim.
//!
//! Layers, top to bottom; each imports only from the layers below it:
//! - [`run`]: runs the world [`boot`] makes of a scenario (every machine, host and guests, by
//!   the same functions; their kernel threads, workloads and policies) and hands it to
//!   [`observe`] for its outputs; [`sim_error`]: why a run failed.
//! - [`scenario`]: the validated run description (TOML, precise errors, every default written down).
//! - [`policy`]: the registry of policy switches, one file per variant.
//! - [`observe`]: `/proc/vmstat`, `/proc/zoneinfo`, `/proc/buddyinfo`, time series, summary,
//!   ftrace text; observers read the world and never change it.
//! - [`actors`]: kswapd, kcompactd, the flusher, the oom_reaper, device completions, workloads,
//!   Xen's blkback rings and blkfront jobs.
//! - [`world`]: machines, actors and observers on one clock; the actor contract.
//! - [`virt`]: guests whose RAM lives in a host: the memory slot, the balloon device's reports.
//! - [`machine`]: the memory model of one machine (zones, buddy, frames, LRU, swap, page cache,
//!   writeback, reclaim, compaction, OOM, counters), named after the kernel sources it models;
//!   on a Xen dom0 also its Xen drivers (`machine::xen`).
//! - [`engine`]: integer-nanosecond event queue, per-actor random streams, CPU time accounting.
//! - [`trace`]: readers for recorded page-access traces (oracleGeneral, CSV, zstd).
//! - [`cachesim`]: fixed-capacity LRU/FIFO/CLOCK over a trace (`reclaimlab lru`).

pub mod actors;
pub mod boot;
pub mod cachesim;
pub mod engine;
pub mod machine;
pub mod observe;
pub mod policy;
pub mod run;
pub mod scenario;
pub mod sim_error;
pub mod trace;
pub mod virt;
pub mod world;

pub use run::{run, InvariantMode, Run, RunOptions, RunOutput, SimError, ENGINE_VERSION};
