//! Discrete-event core: integer-nanosecond clock, a totally ordered event queue, and per-actor
//! random streams.
//!
//! Every actor has at most one pending wake-up. The queue orders entries by (time, sequence
//! number), where the sequence number is assigned when the entry is scheduled, so two actors due
//! at the same nanosecond run in the order they were scheduled: a total, reproducible order that
//! does not depend on hashing or on the machine.

pub mod cpu;
pub mod fair;
pub mod histogram;
mod queue;
pub mod rng;
pub mod units;

pub use queue::{ActorId, EventQueue};
pub use rng::Rng;
