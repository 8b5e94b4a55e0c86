//! reclaimlab-core: a deterministic discrete-event simulator of Linux memory reclaim.
//!
//! Layers, top to bottom (nothing flows back up):
//! - [`scenario`]: the validated run description (TOML, precise errors, every default written down).
//! - [`engine`]: integer-nanosecond clock, totally ordered event queue, actors, per-actor RNG streams.
//! - [`mm`]: the host machine: zones, watermarks, buddy allocator, page frames, LRU lists, swap.
//! - [`reclaim`]: `shrink_node` and friends, kswapd (`balance_pgdat`), direct reclaim, OOM.
//! - [`workload`]: the actors that put pressure on memory.
//! - [`observe`]: `/proc/vmstat`, `/proc/zoneinfo`, `/proc/buddyinfo`, time series, summary.
//! - [`sim`]: ties them together; [`run`] is the entry point.
//! - [`trace`]: readers for recorded page-access traces (oracleGeneral, CSV, zstd).
//! - [`cachesim`]: fixed-capacity LRU/FIFO/CLOCK over a trace (`reclaimlab lru`).

pub mod cachesim;
pub mod engine;
pub mod mm;
pub mod observe;
pub mod policy;
pub mod reclaim;
pub mod scenario;
pub mod sim;
pub mod trace;
pub mod workload;

pub use sim::{run, InvariantMode, RunOptions, RunOutput, SimError};

/// Engine version recorded in every summary; bump when simulated results may change.
pub const ENGINE_VERSION: &str = env!("CARGO_PKG_VERSION");
