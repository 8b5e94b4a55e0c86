//! Why a run could not be built or did not finish.

use crate::world::Failure;

#[derive(Debug, Clone, PartialEq)]
pub enum SimError {
    /// The scenario is valid TOML but describes a machine that cannot be built.
    Config(String),
    /// An invariant check failed (a simulator bug); the message says which and when.
    Invariant(String),
    /// The progress callback asked to stop (e.g. Ctrl-C).
    Interrupted,
    /// A workload's trace file cannot be read or is malformed (the error names the record).
    Trace(crate::trace::TraceError),
}

impl std::fmt::Display for SimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SimError::Config(m) => write!(f, "configuration error: {m}"),
            SimError::Invariant(m) => write!(f, "invariant violated: {m}"),
            SimError::Interrupted => write!(f, "interrupted"),
            SimError::Trace(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for SimError {}

impl From<Failure> for SimError {
    fn from(f: Failure) -> SimError {
        match f {
            Failure::Trace(e) => SimError::Trace(e),
        }
    }
}
