//! `reclaimlab._core`: the thin PyO3 layer over `reclaimlab-core`.
//!
//! Every entry point takes a scenario either as a file (`path`) or as TOML text (`text`, reported
//! under `name` in error messages). The Python package (`python/reclaimlab`) builds the friendly
//! API on top of these functions; nothing here knows about files other than the scenario.
//!
//! Rules kept here:
//! - The GIL is released while parsing and simulating; the progress callback reacquires it, at
//!   most once per [`CALLBACK_INTERVAL`] of wall time, to call Python and to check for signals
//!   (so Ctrl-C raises `KeyboardInterrupt` promptly).
//! - No Rust panic crosses into Python: a panic becomes `SimulationError("internal error: ...")`.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};
use serde_json::json;

use reclaimlab_core::cachesim::{self, Policy, MAX_CAPACITY};
use reclaimlab_core::observe::ftrace::TraceFormat as FtraceFormat;
use reclaimlab_core::policy;
use reclaimlab_core::scenario::{self, Scenario};
use reclaimlab_core::trace::{Compression, TraceFormat};
use reclaimlab_core::{InvariantMode, RunOptions, SimError};

create_exception!(
    reclaimlab._core,
    ScenarioError,
    PyException,
    "The scenario is invalid; the message is `FILE:LINE:COL: error: in field `FIELD`: ...`."
);
create_exception!(
    reclaimlab._core,
    TraceError,
    PyException,
    "A trace file cannot be read or is malformed; the message is `FILE: record N (byte offset B): ...`."
);
create_exception!(
    reclaimlab._core,
    SimulationError,
    PyException,
    "The simulation could not run (configuration error) or found a broken invariant."
);
create_exception!(
    reclaimlab._core,
    InternalError,
    SimulationError,
    "A bug in the engine (a Rust panic): `args[0]` is one line for the user, `args[1]` the \
     details for a bug report (message, location, backtrace)."
);

/// Least wall time between two calls into Python from the progress callback.
const CALLBACK_INTERVAL: Duration = Duration::from_millis(50);

thread_local! {
    /// True while this thread runs engine code under [`catch_unwind`].
    static CATCHING: Cell<bool> = const { Cell::new(false) };
    /// Where the last caught panic happened (`file:line:col`).
    static PANIC_LOCATION: RefCell<Option<String>> = const { RefCell::new(None) };
    /// The backtrace of the last caught panic, for the bug report.
    static PANIC_BACKTRACE: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Install (once) a panic hook that, for panics we catch, records the location for the error
/// message instead of printing to stderr (unless `RUST_BACKTRACE` asks for the usual report).
fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if CATCHING.with(|c| c.get()) {
                let loc = info
                    .location()
                    .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()));
                PANIC_LOCATION.with(|p| *p.borrow_mut() = loc);
                let bt = std::backtrace::Backtrace::force_capture().to_string();
                PANIC_BACKTRACE.with(|p| *p.borrow_mut() = Some(bt));
                let verbose = std::env::var_os("RUST_BACKTRACE").is_some_and(|v| v != "0");
                if !verbose {
                    return;
                }
            }
            previous(info)
        }));
    });
}

/// `std::panic::catch_unwind` that also records the panic's location for [`internal_error`].
fn catch_unwind<R>(f: impl FnOnce() -> R) -> Result<R, Box<dyn Any + Send>> {
    let was = CATCHING.with(|c| c.replace(true));
    PANIC_LOCATION.with(|p| p.borrow_mut().take());
    PANIC_BACKTRACE.with(|p| p.borrow_mut().take());
    let r = panic::catch_unwind(AssertUnwindSafe(f));
    CATCHING.with(|c| c.set(was));
    r
}

fn panic_message(payload: Box<dyn Any + Send>) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic with a non-string payload".to_string()
    }
}

fn internal_error(payload: Box<dyn Any + Send>) -> PyErr {
    let what = panic_message(payload);
    let mut msg = format!("internal error: {}", what.lines().next().unwrap_or(""));
    let mut details = format!(
        "reclaimlab engine {}\npanic: {what}\n",
        reclaimlab_core::ENGINE_VERSION
    );
    if let Some(loc) = PANIC_LOCATION.with(|p| p.borrow_mut().take()) {
        msg.push_str(&format!(" (at {loc})"));
        details.push_str(&format!("at: {loc}\n"));
    }
    if let Some(bt) = PANIC_BACKTRACE.with(|p| p.borrow_mut().take()) {
        details.push_str(&format!("backtrace:\n{bt}\n"));
    }
    InternalError::new_err((msg, details))
}

/// A deliberate panic inside the engine when `RECLAIMLAB_TEST_PANIC` is set: the one way to
/// test, from outside, how a bug in the engine reaches the user.
fn test_panic_hook() {
    if std::env::var_os("RECLAIMLAB_TEST_PANIC").is_some_and(|v| !v.is_empty()) {
        panic!("deliberate panic for testing (RECLAIMLAB_TEST_PANIC is set)");
    }
}

/// Where the scenario comes from; exactly one of the two must be given. Text may say which
/// directory its relative paths are relative to (`base_dir`; else the current directory).
enum Source {
    Path(PathBuf),
    Text {
        text: String,
        name: String,
        base_dir: Option<PathBuf>,
    },
}

impl Source {
    fn new(
        path: Option<PathBuf>,
        text: Option<String>,
        name: &str,
        base_dir: Option<PathBuf>,
    ) -> PyResult<Source> {
        match (path, text, base_dir) {
            (Some(p), None, None) => Ok(Source::Path(p)),
            (None, Some(t), base_dir) => Ok(Source::Text {
                text: t,
                name: name.to_string(),
                base_dir,
            }),
            (Some(_), None, Some(_)) => Err(PyTypeError::new_err(
                "`base_dir` goes with `text`: a file's paths are relative to its own directory",
            )),
            _ => Err(PyTypeError::new_err(
                "give exactly one of `path` and `text`",
            )),
        }
    }

    /// Parse and validate, without the GIL. Panics in the parser become `SimulationError`.
    fn load(&self, py: Python<'_>) -> PyResult<Scenario> {
        let parsed = py.allow_threads(|| {
            catch_unwind(|| match self {
                Source::Path(p) => scenario::parse_file(p),
                Source::Text {
                    text,
                    name,
                    base_dir: None,
                } => scenario::parse_str(text, name),
                Source::Text {
                    text,
                    name,
                    base_dir: Some(dir),
                } => scenario::parse_str_in(text, name, dir),
            })
        });
        match parsed {
            Ok(Ok(s)) => Ok(s),
            Ok(Err(e)) => Err(ScenarioError::new_err(e.to_string())),
            Err(payload) => Err(internal_error(payload)),
        }
    }
}

fn invariant_mode(arg: Option<&Bound<'_, PyAny>>) -> PyResult<InvariantMode> {
    let Some(arg) = arg else {
        return Ok(InvariantMode::Off);
    };
    if arg.is_none() {
        return Ok(InvariantMode::Off);
    }
    let bad = || {
        PyValueError::new_err(format!(
            "invariants must be \"off\", \"every\" or a positive integer N (check every Nth event), not {}",
            arg.repr().map(|r| r.to_string()).unwrap_or_else(|_| "?".into())
        ))
    };
    if let Ok(s) = arg.downcast::<PyString>() {
        let s = s.to_str()?;
        return match s {
            "off" => Ok(InvariantMode::Off),
            "every" => Ok(InvariantMode::EveryEvent),
            _ => match s.parse::<u64>() {
                Ok(n) if n > 0 => Ok(InvariantMode::Periodic(n)),
                _ => Err(bad()),
            },
        };
    }
    if arg.is_instance_of::<pyo3::types::PyBool>() {
        return Err(bad());
    }
    match arg.extract::<u64>() {
        Ok(n) if n > 0 => Ok(InvariantMode::Periodic(n)),
        _ => Err(bad()),
    }
}

/// Validate a scenario; raises `ScenarioError` with the precise message when it is invalid.
#[pyfunction]
#[pyo3(signature = (path=None, text=None, name="<dict>", base_dir=None))]
fn parse(
    py: Python<'_>,
    path: Option<PathBuf>,
    text: Option<String>,
    name: &str,
    base_dir: Option<PathBuf>,
) -> PyResult<()> {
    Source::new(path, text, name, base_dir)?.load(py)?;
    Ok(())
}

/// The few facts about a scenario that front ends need before running it:
/// `{"name": str, "seed": int, "workloads": [str, ...]}`.
#[pyfunction]
#[pyo3(signature = (path=None, text=None, name="<dict>", base_dir=None))]
fn info<'py>(
    py: Python<'py>,
    path: Option<PathBuf>,
    text: Option<String>,
    name: &str,
    base_dir: Option<PathBuf>,
) -> PyResult<Bound<'py, PyDict>> {
    let s = Source::new(path, text, name, base_dir)?.load(py)?;
    let d = PyDict::new_bound(py);
    d.set_item("name", &s.name)?;
    d.set_item("seed", s.sim.seed)?;
    let names: Vec<&str> = s.workloads.iter().map(|w| w.name.as_str()).collect();
    d.set_item("workloads", PyList::new_bound(py, names))?;
    Ok(d)
}

/// The full scenario with every default filled in, as TOML.
#[pyfunction]
#[pyo3(signature = (path=None, text=None, name="<dict>", base_dir=None))]
fn show_defaults(
    py: Python<'_>,
    path: Option<PathBuf>,
    text: Option<String>,
    name: &str,
    base_dir: Option<PathBuf>,
) -> PyResult<String> {
    let s = Source::new(path, text, name, base_dir)?.load(py)?;
    py.allow_threads(|| catch_unwind(|| scenario::to_toml(&s)))
        .map_err(internal_error)
}

/// Run a scenario and return its outputs as a dict:
/// `vmstat`, `zoneinfo`, `buddyinfo`, `summary_json` (str), `timeseries` (a `Timeseries`: names,
/// `time_ns` first), `counters` (list of (name, value) in /proc/vmstat order), `trace` (the
/// ftrace text when `trace="kernel"|"postprocess"`, else None).
///
/// `progress(now_ns, end_ns)` is called now and then (at most every 50 ms of wall time); a return
/// value of `False` stops the run (`SimulationError`), an exception it raises stops the run and
/// propagates. Ctrl-C raises `KeyboardInterrupt`.
#[pyfunction]
#[pyo3(signature = (path=None, text=None, seed=None, invariants=None, progress=None, name="<dict>", trace=None, base_dir=None))]
#[allow(clippy::too_many_arguments)]
fn run<'py>(
    py: Python<'py>,
    path: Option<PathBuf>,
    text: Option<String>,
    seed: Option<u64>,
    invariants: Option<&Bound<'py, PyAny>>,
    progress: Option<PyObject>,
    name: &str,
    trace: Option<&str>,
    base_dir: Option<PathBuf>,
) -> PyResult<Bound<'py, PyDict>> {
    let opts = RunOptions {
        seed,
        invariants: invariant_mode(invariants)?,
        trace: trace_format(trace)?,
    };
    let progress = progress.filter(|p| !p.is_none(py));
    if let Some(p) = &progress {
        if !p.bind(py).is_callable() {
            return Err(PyTypeError::new_err(
                "progress must be callable(now_ns, end_ns) or None",
            ));
        }
    }
    let scenario = Source::new(path, text, name, base_dir)?.load(py)?;

    // State shared with the callback; the callback runs on this thread, without the GIL.
    let mut py_error: Option<PyErr> = None;
    let mut stopped_by_callback = false;
    let mut last_call: Option<Instant> = None;

    let result = py.allow_threads(|| {
        let mut callback = |now_ns: u64, end_ns: u64| -> bool {
            if py_error.is_some() || stopped_by_callback {
                return false; // already asked to stop
            }
            let now = Instant::now();
            if let Some(prev) = last_call {
                if now.duration_since(prev) < CALLBACK_INTERVAL {
                    return true;
                }
            }
            last_call = Some(now);
            Python::with_gil(|py| {
                if let Err(e) = py.check_signals() {
                    py_error = Some(e);
                    return false;
                }
                let Some(p) = &progress else { return true };
                match p.call1(py, (now_ns, end_ns)) {
                    Err(e) => {
                        py_error = Some(e);
                        false
                    }
                    Ok(ret) => {
                        // Only an explicit `False` stops the run; `None` and anything else go on.
                        let stop = ret
                            .bind(py)
                            .downcast::<pyo3::types::PyBool>()
                            .map(|b| !b.is_true())
                            .unwrap_or(false);
                        if stop {
                            stopped_by_callback = true;
                        }
                        !stop
                    }
                }
            })
        };
        catch_unwind(|| {
            test_panic_hook();
            reclaimlab_core::run(&scenario, &opts, &mut callback)
        })
    });

    // A Python exception raised while the run was going (Ctrl-C, or from the callback) wins,
    // whatever the engine returned afterwards.
    if let Some(e) = py_error {
        return Err(e);
    }
    let out = match result {
        Err(payload) => return Err(internal_error(payload)),
        Ok(Err(SimError::Interrupted)) => {
            let why = if stopped_by_callback {
                "run stopped: the progress callback returned False"
            } else {
                "run interrupted"
            };
            return Err(SimulationError::new_err(why));
        }
        Ok(Err(SimError::Trace(e))) => return Err(TraceError::new_err(e.to_string())),
        Ok(Err(e)) => return Err(SimulationError::new_err(e.to_string())),
        Ok(Ok(out)) => out,
    };

    let d = PyDict::new_bound(py);
    d.set_item("vmstat", out.vmstat)?;
    d.set_item("zoneinfo", out.zoneinfo)?;
    d.set_item("buddyinfo", out.buddyinfo)?;
    d.set_item("summary_json", out.summary_json)?;
    d.set_item("timeseries", Py::new(py, Timeseries(out.timeseries))?)?;
    let counters = PyList::empty_bound(py);
    for (counter, value) in out.counters {
        counters.append(PyTuple::new_bound(
            py,
            [counter.into_py(py), value.into_py(py)],
        ))?;
    }
    d.set_item("counters", counters)?;
    d.set_item("trace", out.trace)?;
    let extra = PyDict::new_bound(py);
    for (name, text) in out.extra_files {
        extra.set_item(name, text)?;
    }
    d.set_item("extra_files", extra)?;
    Ok(d)
}

/// A run's time series, kept where the engine put it (mostly on disk) until read.
#[pyclass(module = "reclaimlab._core", frozen)]
struct Timeseries(reclaimlab_core::observe::timeseries::Timeseries);

#[pymethods]
impl Timeseries {
    /// The column names, `time_ns` first.
    #[getter]
    fn names(&self) -> Vec<String> {
        self.0.names().to_vec()
    }

    fn __len__(&self) -> usize {
        self.0.len()
    }

    /// Samples `start..start + count` (clipped to the end) as little-endian int64, row-major.
    fn read<'py>(
        &self,
        py: Python<'py>,
        start: usize,
        count: usize,
    ) -> PyResult<Bound<'py, PyBytes>> {
        // Reading back the spool file fails only if it vanished: an internal error.
        let rows = py
            .allow_threads(|| catch_unwind(|| self.0.rows(start, count)))
            .map_err(internal_error)?;
        let bytes: Vec<u8> = rows.iter().flat_map(|v| v.to_le_bytes()).collect();
        Ok(PyBytes::new_bound(py, &bytes))
    }
}

/// `trace="kernel"|"postprocess"|None`.
fn trace_format(trace: Option<&str>) -> PyResult<Option<FtraceFormat>> {
    match trace {
        None => Ok(None),
        Some(t) => FtraceFormat::from_name(t).map(Some).ok_or_else(|| {
            PyValueError::new_err(format!(
                "trace must be one of {:?}, not {t:?}",
                FtraceFormat::NAMES
            ))
        }),
    }
}

/// `reclaimlab lru`: replay a trace through a fixed-capacity LRU, FIFO or CLOCK cache of
/// `capacity` objects. Returns `{"requests", "misses", "miss_ratio", "seconds", "skipped",
/// "policy", "capacity"}`; `seconds` is the wall time of opening, reading and simulating, and
/// `skipped` counts oracleGeneral records of size 0 (not requests, as in libCacheSim).
/// `format` ("oracle" or "csv") and `compression` ("none" or "zstd") default to what the file
/// name says. Raises `TraceError` for an unreadable or malformed trace, `ValueError` for bad
/// arguments.
#[pyfunction]
#[pyo3(signature = (path, capacity, policy="lru", format=None, compression=None))]
fn lru<'py>(
    py: Python<'py>,
    path: PathBuf,
    capacity: &Bound<'py, PyAny>,
    policy: &str,
    format: Option<&str>,
    compression: Option<&str>,
) -> PyResult<Bound<'py, PyDict>> {
    let policy = Policy::from_name(policy).ok_or_else(|| {
        PyValueError::new_err(format!(
            "unknown policy {policy:?}; expected one of {}",
            Policy::NAMES.join(", ")
        ))
    })?;
    let bad_capacity = || {
        PyValueError::new_err(format!(
            "capacity must be an integer between 1 and {MAX_CAPACITY} (objects), not {}",
            capacity
                .repr()
                .map(|r| r.to_string())
                .unwrap_or_else(|_| "?".into())
        ))
    };
    if capacity.is_instance_of::<pyo3::types::PyBool>() {
        return Err(bad_capacity());
    }
    let capacity = match capacity.extract::<u64>() {
        Ok(c) if (1..=MAX_CAPACITY).contains(&c) => c as u32,
        _ => return Err(bad_capacity()),
    };
    let format = format
        .map(|f| {
            TraceFormat::from_name(f).ok_or_else(|| {
                PyValueError::new_err(format!(
                    "unknown trace format {f:?}; expected one of {}",
                    TraceFormat::NAMES.join(", ")
                ))
            })
        })
        .transpose()?;
    let compression = compression
        .map(|c| {
            Compression::from_name(c).ok_or_else(|| {
                PyValueError::new_err(format!(
                    "unknown compression {c:?}; expected one of {}",
                    Compression::NAMES.join(", ")
                ))
            })
        })
        .transpose()?;
    let result = py.allow_threads(|| {
        catch_unwind(|| cachesim::simulate_file(&path, format, compression, policy, capacity))
    });
    let r = match result {
        Err(payload) => return Err(internal_error(payload)),
        Ok(Err(e)) => return Err(TraceError::new_err(e.to_string())),
        Ok(Ok(r)) => r,
    };
    let d = PyDict::new_bound(py);
    d.set_item("requests", r.requests)?;
    d.set_item("misses", r.misses)?;
    d.set_item("miss_ratio", r.miss_ratio())?;
    d.set_item("seconds", r.wall_ns as f64 / 1e9)?;
    d.set_item("skipped", r.skipped)?;
    d.set_item("policy", r.policy.name())?;
    d.set_item("capacity", r.capacity)?;
    Ok(d)
}

/// The policy registry as JSON text: `{"switches": [{"name", "default", "spec", "summary",
/// "preset", "variants": [{"name", "kernel", "summary"}]}]}`, switches in the order the
/// scenario's `[policy]` table lists them. `preset` is `null` or `{"follows", "doc"}` (the
/// default then follows the variant chosen for the switch `follows` names).
///
/// JSON text rather than Python objects so that the shape is decided here, once, and the
/// Python side (`reclaimlab.policies()`, `reclaimlab policies --format json`) passes it on.
/// One `do_shrink_slab` call of a `[policy] shrinker` variant on a fixed cache (the engine's
/// own code; see `reclaimlab_core::policy::shrinker::fixed_cache_call`): a dict with
/// `freeable`, `delta`, `nr`, `planned`, `scanned`, `freed`, `new_nr`, `calls`, `stopped`.
#[pyfunction]
#[pyo3(signature = (variant, freeable, nr_deferred, priority, batch, seeks=2, kswapd=false, nofs=false))]
#[allow(clippy::too_many_arguments)]
fn shrinker_call<'py>(
    py: Python<'py>,
    variant: &str,
    freeable: u64,
    nr_deferred: u64,
    priority: i32,
    batch: u64,
    seeks: u64,
    kswapd: bool,
    nofs: bool,
) -> PyResult<Bound<'py, PyDict>> {
    if !(0..=12).contains(&priority) {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "priority must be 0..=12",
        ));
    }
    let Some((o, calls)) = policy::shrinker::fixed_cache_call(
        variant,
        freeable,
        nr_deferred,
        priority,
        batch,
        seeks,
        kswapd,
        nofs,
    ) else {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "no shrinker variant {variant:?}"
        )));
    };
    let d = PyDict::new_bound(py);
    d.set_item("freeable", o.freeable)?;
    d.set_item("delta", o.delta)?;
    d.set_item("nr", o.nr)?;
    d.set_item("planned", o.planned)?;
    d.set_item("scanned", o.scanned)?;
    d.set_item("freed", o.freed)?;
    d.set_item("new_nr", o.new_nr)?;
    d.set_item("calls", calls)?;
    d.set_item("stopped", o.stopped)?;
    Ok(d)
}

/// The swap-in readahead window the engine chooses (`machine::swap_state::swapin_nr_pages`,
/// 6.1's `__swapin_nr_pages`): for a miss at slot or page `offset` after one at `prev`,
/// with `hits` readahead pages used since the last window of `prev_win` pages, at most
/// `max_pages`. The guest-trace summaries (`validate/swapintrace.py`) judge the guest's
/// windows by this very function.
#[pyfunction]
fn swapin_nr_pages(prev: u32, offset: u32, hits: u32, max_pages: u32, prev_win: u32) -> u32 {
    reclaimlab_core::machine::swap_state::swapin_nr_pages(prev, offset, hits, max_pages, prev_win)
}

#[pyfunction]
fn policies() -> String {
    let switches: Vec<serde_json::Value> = policy::switches()
        .iter()
        .map(|s| {
            let preset = s
                .preset()
                .map(|p| json!({"follows": p.follows, "doc": p.doc}));
            let variants: Vec<serde_json::Value> = s
                .variants()
                .iter()
                .map(|v| json!({"name": v.name, "kernel": v.kernel, "summary": v.summary}))
                .collect();
            json!({
                "name": s.name(),
                "default": s.default(),
                "spec": s.spec(),
                "summary": s.summary(),
                "preset": preset,
                "variants": variants,
            })
        })
        .collect();
    json!({ "switches": switches }).to_string()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    install_panic_hook();
    m.add("ScenarioError", py.get_type_bound::<ScenarioError>())?;
    m.add("SimulationError", py.get_type_bound::<SimulationError>())?;
    m.add("TraceError", py.get_type_bound::<TraceError>())?;
    m.add("InternalError", py.get_type_bound::<InternalError>())?;
    m.add_class::<Timeseries>()?;
    m.add("ENGINE_VERSION", reclaimlab_core::ENGINE_VERSION)?;
    m.add_function(wrap_pyfunction!(parse, m)?)?;
    m.add_function(wrap_pyfunction!(info, m)?)?;
    m.add_function(wrap_pyfunction!(show_defaults, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(lru, m)?)?;
    m.add_function(wrap_pyfunction!(policies, m)?)?;
    m.add_function(wrap_pyfunction!(shrinker_call, m)?)?;
    m.add_function(wrap_pyfunction!(swapin_nr_pages, m)?)?;
    Ok(())
}
