//! Observation: counters with the kernel's names and semantics and the kernel's text formats.

pub mod procfs;
pub mod summary;
pub mod timeseries;
pub mod vmstat;
