//! The simulation: builds the machine from a scenario, runs the actors, collects the output.

use crate::scenario::Scenario;

/// How often the invariant checker runs (every frame in exactly one place; free + used = total;
/// counters never decrease). It is a debugging and testing aid: off by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InvariantMode {
    #[default]
    Off,
    /// After every event (use on small scenarios).
    EveryEvent,
    /// After every Nth event.
    Periodic(u64),
}

#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Overrides the scenario's seed.
    pub seed: Option<u64>,
    pub invariants: InvariantMode,
}

/// Columnar time series: `columns[0]` is `time_ns`; every column has the same length.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Timeseries {
    pub columns: Vec<(String, Vec<i64>)>,
}

#[derive(Debug, Clone)]
pub struct RunOutput {
    /// `/proc/vmstat` text at the end of the run.
    pub vmstat: String,
    /// `/proc/zoneinfo` text at the end of the run.
    pub zoneinfo: String,
    /// `/proc/buddyinfo` text at the end of the run.
    pub buddyinfo: String,
    /// `summary.json` content (pretty-printed, keys in a fixed order, trailing newline).
    pub summary_json: String,
    pub timeseries: Timeseries,
    /// The vmstat event counters as (name, value), in /proc/vmstat order.
    pub counters: Vec<(String, u64)>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum SimError {
    /// The scenario is valid TOML but describes a machine that cannot be built.
    Config(String),
    /// An invariant check failed (a simulator bug); the message says which and when.
    Invariant(String),
    /// The progress callback asked to stop (e.g. Ctrl-C).
    Interrupted,
}

impl std::fmt::Display for SimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SimError::Config(m) => write!(f, "configuration error: {m}"),
            SimError::Invariant(m) => write!(f, "invariant violated: {m}"),
            SimError::Interrupted => write!(f, "interrupted"),
        }
    }
}

impl std::error::Error for SimError {}

/// Run one scenario to completion. `progress(now_ns, end_ns)` is called now and then (about
/// every few milliseconds of wall time); returning `false` stops the run with `Interrupted`.
pub fn run(
    scenario: &Scenario,
    opts: &RunOptions,
    progress: &mut dyn FnMut(u64, u64) -> bool,
) -> Result<RunOutput, SimError> {
    let _ = (scenario, opts, progress);
    todo!("engine under construction")
}
