//! Scenario TOML to a validated [`Scenario`], with errors that say where (file:line:col), which
//! field, and what was expected.
//!
//! The document is parsed with `toml_edit`'s span-preserving parser (`ImDocument`), so every key
//! and value keeps its byte range in the source; errors turn that offset into a 1-based line and
//! column. The whole layout is described in `show.rs`'s output (`reclaimlab run
//! --show-defaults`); the defaults themselves come only from the `Default` impls in `mod.rs`.
//!
//! Field paths in errors use the TOML names with 0-based indices for workloads, e.g.
//! `workload[1].anon.size` is the `size` key of the second `[[workload]]`.
//!
//! Only the first error is reported. Checks run table by table in a fixed order (top-level keys,
//! `sim`, `host`, `sysctl`, `swap`, `disk`, `writeback`, `cost`, `oom`, `policy`, workloads, then
//! the checks that span tables), and within a table unknown keys are reported before bad values.

use std::fmt;
use std::path::{Path, PathBuf};

use toml_edit::{ImDocument, Item, TableLike, TomlError, Value};

use super::units::{format_size, parse_bandwidth, parse_duration_ns, parse_size};
use super::{
    AccessPattern, AnonSpec, Compression, CostModel, DiskDevice, FileOp, FileSpec, HighOrderGfp,
    HighOrderSpec, HostConfig, Lifetimes, MachineType, ObjectSize, OomConfig, PolicyConfig,
    Scenario, SimConfig, SwapDevice, Sysctl, TraceFormat, TraceKind, TraceSpec, TraceTime,
    Workload, WritebackConfig, GIB, KIB, MIB,
};

/// A scenario that cannot be used, and where the problem is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    /// The file name as given to [`parse_file`] / [`parse_str`].
    pub file: String,
    /// 1-based line; 0 when the error is about the file as a whole (e.g. it cannot be read).
    pub line: usize,
    /// 1-based column, counted in characters; 0 together with `line == 0`.
    pub col: usize,
    /// Dotted path of the offending field (`host.ram`, `workload[1].anon.size`); empty when the
    /// error is not about one field (unreadable file, a syntax error outside any key).
    pub field: String,
    /// What is wrong and what was expected.
    pub message: String,
    /// How to fix it, when there is a clear fix.
    pub help: Option<String>,
}

impl ScenarioError {
    fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
}

impl fmt::Display for ScenarioError {
    /// `FILE:LINE:COL: error: in field `FIELD`: MESSAGE`, then `  help: ...` on its own line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: error: ", self.file)?;
        } else {
            write!(f, "{}:{}:{}: error: ", self.file, self.line, self.col)?;
        }
        if !self.field.is_empty() {
            write!(f, "in field `{}`: ", self.field)?;
        }
        f.write_str(&self.message)?;
        if let Some(help) = &self.help {
            write!(f, "\n  help: {help}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ScenarioError {}

type Res<T> = Result<T, ScenarioError>;

/// Parse a scenario from TOML text. `file` is used in error messages and, through its stem, as
/// the default scenario name. A relative `host.zoneinfo` is resolved against the current
/// directory.
pub fn parse_str(text: &str, file: &str) -> Result<Scenario, ScenarioError> {
    parse_with_base(text, file, None)
}

/// Read and parse a scenario file. A relative `host.zoneinfo` is resolved against the directory
/// holding the scenario file.
pub fn parse_file(path: &Path) -> Result<Scenario, ScenarioError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| ScenarioError {
        file: file.clone(),
        line: 0,
        col: 0,
        field: String::new(),
        message: format!("cannot read scenario file: {e}"),
        help: None,
    })?;
    let base = path.parent().unwrap_or(Path::new(""));
    parse_with_base(&text, &file, Some(base))
}

// ---------------------------------------------------------------------------------------------
// Keys. These lists are the single place that says which keys each table accepts; the error for
// an unknown key prints them.

const ROOT_KEYS: &[&str] = &[
    "name",
    "sim",
    "host",
    "sysctl",
    "swap",
    "disk",
    "writeback",
    "cost",
    "oom",
    "policy",
    "workload",
];
const SIM_KEYS: &[&str] = &["seed", "duration", "sample_interval", "max_duration"];
const HOST_KEYS: &[&str] = &[
    "ram",
    "cpus",
    "thp",
    "machine",
    "lowmem",
    "zoneinfo",
    "fragmented_zone",
    "fragment_stride",
];
const SYSCTL_KEYS: &[&str] = &[
    "min_free_kbytes",
    "watermark_scale_factor",
    "lowmem_reserve_ratio",
    "swappiness",
];
const SWAP_KEYS: &[&str] = &[
    "size",
    "read_latency",
    "write_latency",
    "bandwidth",
    "latency_jitter",
];
const DISK_KEYS: &[&str] = &[
    "read_latency",
    "write_latency",
    "bandwidth",
    "latency_jitter",
    "readahead_pages",
];
const WRITEBACK_KEYS: &[&str] = &["dirty_background_ratio", "dirty_ratio"];
const OOM_KEYS: &[&str] = &["allowed", "reaper_delay"];
const WORKLOAD_KEYS: &[&str] = &[
    "name",
    "start",
    "duration",
    "oom_score_adj",
    "anon",
    "file",
    "trace",
    "highorder",
];
const HIGHORDER_KEYS: &[&str] = &["order", "rate", "lifetime", "lifetimes", "gfp", "count"];
const ANON_KEYS: &[&str] = &[
    "size",
    "pattern",
    "zipf_alpha",
    "passes",
    "write_fraction",
    "think",
    "hold",
];
const FILE_KEYS: &[&str] = &["size", "op", "passes", "hold"];
const TRACE_KEYS: &[&str] = &[
    "path",
    "format",
    "compression",
    "kind",
    "object_size",
    "write_fraction",
    "passes",
    "time",
    "time_unit",
    "think",
    "hold",
    "max_records",
];
/// `[workload.trace]` keys that only an oracleGeneral trace takes (a CSV record says these).
const ORACLE_ONLY_TRACE_KEYS: &[&str] = &["kind", "object_size", "write_fraction"];

/// Accessor for one [`CostModel`] field.
pub(super) type CostField = fn(&mut CostModel) -> &mut u64;

/// `[cost]` keys: the `CostModel` field names without their `_ns` suffix, each a duration, with
/// a one-line description (printed by `show.rs`). Table-driven so parser and printer agree.
pub(super) const COST_FIELDS: &[(&str, CostField, &str)] = &[
    (
        "anon_touch",
        |c| &mut c.anon_touch_ns,
        "user access to a resident anonymous page",
    ),
    (
        "anon_fault",
        |c| &mut c.anon_fault_ns,
        "first-touch anonymous fault: allocate and zero a page",
    ),
    (
        "swapcache_fault",
        |c| &mut c.swapcache_fault_ns,
        "minor fault on a swap-cache hit",
    ),
    (
        "major_fault",
        |c| &mut c.major_fault_ns,
        "kernel path of a swap-in fault, excluding device time",
    ),
    (
        "file_hit",
        |c| &mut c.file_hit_ns,
        "buffered read/write of one page that hits the page cache",
    ),
    (
        "file_miss",
        |c| &mut c.file_miss_ns,
        "adding one page to the page cache on a miss, excluding device time",
    ),
    (
        "scan_unmapped",
        |c| &mut c.scan_unmapped_ns,
        "isolating and judging one unmapped LRU page",
    ),
    (
        "scan_mapped",
        |c| &mut c.scan_mapped_ns,
        "isolating and judging one mapped page (rmap walk, young bit, unmap)",
    ),
    (
        "swapout_submit",
        |c| &mut c.swapout_submit_ns,
        "submitting one page for swap-out",
    ),
    (
        "free_page",
        |c| &mut c.free_page_ns,
        "freeing one page back to the allocator",
    ),
    (
        "slowpath",
        |c| &mut c.slowpath_ns,
        "fixed cost of one allocation slow-path entry",
    ),
    (
        "compact_scan",
        |c| &mut c.compact_scan_ns,
        "compaction scanners: per page frame looked at",
    ),
    (
        "migrate_page",
        |c| &mut c.migrate_page_ns,
        "migrating one page (copy, rmap and page-table update)",
    ),
];

/// Zipf exponent when `pattern = "zipf"` is given without `zipf_alpha`. (Lives here because
/// `AccessPattern::Zipf` carries its alpha and has no `Default`.)
pub const DEFAULT_ZIPF_ALPHA: f64 = 1.0;

// Limits checked by the validator, with the reason each exists.
/// Below this the kernel's own reserves (min_free_kbytes, lowmem_reserve) leave nothing usable.
const MIN_RAM: u64 = 64 * MIB;
/// Frame arrays are sized from RAM; 16 TiB (2^32 4 KiB frames) keeps frame numbers in 32 bits.
const MAX_RAM: u64 = 16 * 1024 * GIB;
/// One page: the smallest region that can be mapped.
const MIN_REGION: u64 = 4 * KIB;
/// The kernel clamps its computed `min_free_kbytes` to this range (init_per_zone_wmark_min).
const MIN_FREE_KBYTES_RANGE: (u64, u64) = (128, 262_144);

// ---------------------------------------------------------------------------------------------
// Source positions.

/// What every error needs: the file name for messages, the text to turn offsets into lines,
/// and where relative paths are resolved.
struct Ctx<'a> {
    file: &'a str,
    src: &'a str,
    /// Directory of the scenario file (`parse_file`), or `None` for the current directory.
    base_dir: Option<&'a Path>,
}

impl Ctx<'_> {
    /// 1-based (line, column) of a byte offset; the column counts characters, not bytes.
    fn line_col(&self, offset: usize) -> (usize, usize) {
        let mut off = offset.min(self.src.len());
        // An error at the very end of a file that ends in a newline belongs to the last line,
        // not to a phantom empty line after it.
        if off == self.src.len() && self.src.ends_with('\n') {
            off -= 1;
        }
        while !self.src.is_char_boundary(off) {
            off -= 1;
        }
        let before = &self.src[..off];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let col = self.src[line_start..off].chars().count() + 1;
        (line, col)
    }

    fn error(&self, at: usize, field: &str, message: impl Into<String>) -> ScenarioError {
        let (line, col) = self.line_col(at);
        ScenarioError {
            file: self.file.to_string(),
            line,
            col,
            field: field.to_string(),
            message: message.into(),
            help: None,
        }
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// A table (`[host]`, `host = { .. }` or dotted `host.ram = ..`) with its path and position.
struct Table<'a> {
    t: &'a dyn TableLike,
    /// Field path of the table itself: "" (top level), "host", "workload[0].anon".
    path: String,
    /// How the user wrote its header, for messages: "[host]", "[workload.anon]".
    header: String,
    /// Byte offset of the table's header (or of its key, for dotted and inline tables).
    at: usize,
}

/// One present key of a table.
struct Field<'a> {
    item: &'a Item,
    path: String,
    key_at: usize,
    val_at: usize,
}

impl<'a> Table<'a> {
    fn root(doc: &'a ImDocument<&'a str>) -> Self {
        Table {
            t: doc.as_table(),
            path: String::new(),
            header: "the top level".into(),
            at: 0,
        }
    }

    fn field(&self, key: &str) -> Option<Field<'a>> {
        let (k, item) = self.t.get_key_value(key)?;
        if item.is_none() {
            return None;
        }
        let key_at = k.span().map_or(self.at, |r| r.start);
        let val_at = item.span().map_or(key_at, |r| r.start);
        Some(Field {
            item,
            path: join(&self.path, key),
            key_at,
            val_at,
        })
    }

    /// Reject any key not in `allowed`, naming the allowed ones and the closest match.
    fn check_keys(&self, ctx: &Ctx, allowed: &[&str]) -> Res<()> {
        for (key, _) in self.t.iter() {
            if allowed.contains(&key) {
                continue;
            }
            let at = self
                .t
                .key(key)
                .and_then(|k| k.span())
                .map_or(self.at, |r| r.start);
            let mut help = String::new();
            if let Some(near) = closest(key, allowed) {
                help = format!("did you mean `{near}`? ");
            }
            help.push_str(&format!(
                "allowed keys in {}: {}",
                self.header,
                allowed.join(", ")
            ));
            return Err(ctx
                .error(
                    at,
                    &join(&self.path, key),
                    format!("unknown key `{key}` in {}", self.header),
                )
                .with_help(help));
        }
        Ok(())
    }

    /// The sub-table `key`, if present; an error if present but not a table.
    fn sub(&self, ctx: &Ctx, key: &str, header: &str) -> Res<Option<Table<'a>>> {
        let Some(f) = self.field(key) else {
            return Ok(None);
        };
        let Some(t) = f.item.as_table_like() else {
            return Err(ctx
                .error(
                    f.val_at,
                    &f.path,
                    format!("expected a table, found {}", f.found(ctx)),
                )
                .with_help(format!("write the settings under a {header} header")));
        };
        // Dotted tables (`host.ram = ..`) have no span of their own: use the key's.
        let at = f.item.span().map_or(f.key_at, |r| r.start);
        Ok(Some(Table {
            t,
            path: f.path,
            header: header.to_string(),
            at,
        }))
    }
}

impl Field<'_> {
    /// "integer 5", "string \"lots\"", "a table": what the user actually wrote.
    fn found(&self, ctx: &Ctx) -> String {
        match self.item {
            Item::Value(v) => {
                let raw = v
                    .span()
                    .and_then(|r| ctx.src.get(r))
                    .unwrap_or_default()
                    .lines()
                    .next()
                    .unwrap_or_default();
                let mut shown: String = raw.chars().take(40).collect();
                if shown.len() < raw.len() {
                    shown.push_str("...");
                }
                format!("{} {shown}", v.type_name())
            }
            Item::Table(_) => "a table".to_string(),
            Item::ArrayOfTables(_) => "an array of tables".to_string(),
            Item::None => "nothing".to_string(),
        }
    }

    fn err(&self, ctx: &Ctx, message: impl Into<String>) -> ScenarioError {
        ctx.error(self.val_at, &self.path, message)
    }

    fn type_err(&self, ctx: &Ctx, expected: &str) -> ScenarioError {
        self.err(
            ctx,
            format!("expected {expected}, found {}", self.found(ctx)),
        )
    }

    fn value(&self) -> Option<&Value> {
        self.item.as_value()
    }

    fn string(&self, ctx: &Ctx, expected: &str) -> Res<String> {
        match self.value() {
            Some(Value::String(s)) => Ok(s.value().clone()),
            _ => Err(self.type_err(ctx, expected)),
        }
    }

    fn boolean(&self, ctx: &Ctx) -> Res<bool> {
        match self.value() {
            Some(Value::Boolean(b)) => Ok(*b.value()),
            _ => Err(self.type_err(ctx, "true or false")),
        }
    }

    /// A non-negative integer. TOML integers stop at 2^63-1, so larger values (seeds) may be
    /// written as a decimal string.
    fn uint(&self, ctx: &Ctx) -> Res<u64> {
        match self.value() {
            Some(Value::Integer(i)) => {
                let v = *i.value();
                u64::try_from(v)
                    .map_err(|_| self.err(ctx, format!("must not be negative, found {v}")))
            }
            Some(Value::String(s)) if is_digits(s.value()) => s
                .value()
                .parse()
                .map_err(|_| self.err(ctx, format!("{} does not fit in 64 bits", s.value()))),
            _ => Err(self.type_err(ctx, "a non-negative integer")),
        }
    }

    /// A non-negative integer in `lo..=hi`; `why` explains the bounds (may be empty).
    fn uint_in(&self, ctx: &Ctx, lo: u64, hi: u64, why: &str) -> Res<u64> {
        let v = self.uint(ctx)?;
        if v < lo || v > hi {
            let bounds = if hi == u64::MAX {
                format!("must be at least {lo}")
            } else {
                format!("must be between {lo} and {hi}")
            };
            return Err(self.err(ctx, format!("{bounds}{why}, found {v}")));
        }
        Ok(v)
    }

    fn int_in(&self, ctx: &Ctx, lo: i64, hi: i64, why: &str) -> Res<i64> {
        let Some(Value::Integer(i)) = self.value() else {
            return Err(self.type_err(ctx, "an integer"));
        };
        let v = *i.value();
        if v < lo || v > hi {
            return Err(self.err(
                ctx,
                format!("must be between {lo} and {hi}{why}, found {v}"),
            ));
        }
        Ok(v)
    }

    /// A float; integers are accepted too (`write_fraction = 1`).
    fn float(&self, ctx: &Ctx) -> Res<f64> {
        match self.value() {
            Some(Value::Float(f)) => Ok(*f.value()),
            Some(Value::Integer(i)) => Ok(*i.value() as f64),
            _ => Err(self.type_err(ctx, "a number")),
        }
    }

    /// A size: a string with a unit ("4GiB") or an integer number of bytes.
    fn size(&self, ctx: &Ctx) -> Res<u64> {
        match self.value() {
            Some(Value::String(s)) => parse_size(s.value()).map_err(|e| self.err(ctx, e)),
            Some(Value::Integer(i)) => {
                u64::try_from(*i.value()).map_err(|_| self.err(ctx, "sizes cannot be negative"))
            }
            _ => Err(self
                .type_err(ctx, "a size like \"4GiB\" (or an integer number of bytes)")
                .with_help(format!("for example: {} = \"4GiB\"", last_key(&self.path)))),
        }
    }

    /// A duration: a string with a unit ("100ms"). A bare integer is accepted only for 0.
    fn duration(&self, ctx: &Ctx) -> Res<u64> {
        match self.value() {
            Some(Value::String(s)) => parse_duration_ns(s.value()).map_err(|e| self.err(ctx, e)),
            Some(Value::Integer(i)) if *i.value() == 0 => Ok(0),
            Some(Value::Integer(i)) => {
                let v = *i.value();
                let msg = if v < 0 {
                    "durations cannot be negative".to_string()
                } else {
                    format!("a duration needs a unit, found the bare number {v}")
                };
                Err(self.err(ctx, msg).with_help(format!(
                    "write it as a string with a unit, e.g. {} = \"{v}ms\" (ns, us, ms, s, min, h)",
                    last_key(&self.path)
                )))
            }
            _ => Err(self.type_err(ctx, "a duration like \"100ms\"")),
        }
    }

    /// A duration that must be strictly positive.
    fn positive_duration(&self, ctx: &Ctx) -> Res<u64> {
        let v = self.duration(ctx)?;
        if v == 0 {
            return Err(self.err(ctx, "must be greater than zero"));
        }
        Ok(v)
    }

    /// A bandwidth string ("1GiB/s"), strictly positive: a device that moves no bytes would
    /// stall every request forever.
    fn bandwidth(&self, ctx: &Ctx) -> Res<u64> {
        let Some(Value::String(s)) = self.value() else {
            return Err(self.type_err(ctx, "a bandwidth like \"1GiB/s\""));
        };
        let v = parse_bandwidth(s.value()).map_err(|e| self.err(ctx, e))?;
        if v == 0 {
            return Err(self.err(ctx, "bandwidth must be greater than zero"));
        }
        Ok(v)
    }

    /// One of `names` (a registry's NAMES list); `what` is the singular noun for messages.
    fn choice(&self, ctx: &Ctx, names: &[&'static str], what: &str) -> Res<&'static str> {
        let expected = format!("a {what} name ({})", quoted_list(names));
        let Some(Value::String(s)) = self.value() else {
            return Err(self.type_err(ctx, &expected));
        };
        let given = s.value().as_str();
        if let Some(n) = names.iter().find(|n| **n == given) {
            return Ok(n);
        }
        let mut e = self.err(
            ctx,
            format!(
                "unknown {what} \"{given}\"; expected one of {}",
                quoted_list(names)
            ),
        );
        if let Some(near) = closest(given, names) {
            e = e.with_help(format!("did you mean \"{near}\"?"));
        }
        Err(e)
    }
}

fn is_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

fn last_key(path: &str) -> &str {
    path.rsplit('.').next().unwrap_or(path)
}

fn quoted_list(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("\"{n}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Edit distance, for "did you mean" hints.
fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The candidate closest to `given`, if it is close enough to be a plausible typo.
fn closest<'n>(given: &str, candidates: &[&'n str]) -> Option<&'n str> {
    let given = given.to_ascii_lowercase();
    candidates
        .iter()
        .map(|c| (levenshtein(&given, c), *c))
        .filter(|(d, c)| *d <= 2.max(c.len() / 4) && *d < c.len())
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

fn file_stem(file: &str) -> String {
    Path::new(file)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "scenario".to_string())
}

// ---------------------------------------------------------------------------------------------
// The parser proper.

fn parse_with_base(text: &str, file: &str, base_dir: Option<&Path>) -> Res<Scenario> {
    let ctx = Ctx {
        file,
        src: text,
        base_dir,
    };
    let doc = ImDocument::parse(text).map_err(|e| syntax_error(&ctx, &e))?;
    let root = Table::root(&doc);
    root.check_keys(&ctx, ROOT_KEYS)?;

    let name = match root.field("name") {
        Some(f) => {
            let name = f.string(&ctx, "a string")?;
            if name.trim().is_empty() {
                return Err(f.err(&ctx, "the scenario name must not be empty"));
            }
            name
        }
        None => file_stem(file),
    };
    let mut s = Scenario {
        name,
        ..Scenario::default()
    };

    if let Some(t) = root.sub(&ctx, "sim", "[sim]")? {
        parse_sim(&ctx, &t, &mut s.sim)?;
    }
    if let Some(t) = root.sub(&ctx, "host", "[host]")? {
        parse_host(&ctx, &t, &mut s.host)?;
    }
    if let Some(t) = root.sub(&ctx, "sysctl", "[sysctl]")? {
        parse_sysctl(&ctx, &t, &mut s.sysctl)?;
    }
    if let Some(t) = root.sub(&ctx, "swap", "[swap]")? {
        parse_swap(&ctx, &t, &mut s.swap)?;
    }
    if let Some(t) = root.sub(&ctx, "disk", "[disk]")? {
        parse_disk(&ctx, &t, &mut s.disk)?;
    }
    if let Some(t) = root.sub(&ctx, "writeback", "[writeback]")? {
        parse_writeback(&ctx, &t, &mut s.writeback)?;
    }
    if let Some(t) = root.sub(&ctx, "cost", "[cost]")? {
        parse_cost(&ctx, &t, &mut s.cost)?;
    }
    let mut oom_allowed_at = None;
    if let Some(t) = root.sub(&ctx, "oom", "[oom]")? {
        oom_allowed_at = parse_oom(&ctx, &t, &mut s.oom)?;
    }
    if let Some(t) = root.sub(&ctx, "policy", "[policy]")? {
        parse_policy(&ctx, &t, &mut s.policy)?;
    }
    let (workloads, spots) = parse_workloads(&ctx, &root)?;
    s.workloads = workloads;

    check_capacity(&ctx, &s, oom_allowed_at, &spots)?;
    Ok(s)
}

/// Turn a TOML syntax error into a positioned error. The field is guessed from the line (the
/// key on it and the table header above it) because the parser stops before building one.
fn syntax_error(ctx: &Ctx, e: &TomlError) -> ScenarioError {
    let at = e.span().map_or(0, |r| r.start);
    let detail = e
        .message()
        .trim()
        .lines()
        .map(str::trim)
        .collect::<Vec<_>>()
        .join(": ");
    let (line, _) = ctx.line_col(at);
    let (field, help) = guess_syntax_context(ctx.src, line);
    let mut err = ctx.error(at, &field, format!("invalid TOML: {detail}"));
    err.help = help;
    err
}

/// Split a TOML key as written (`a.b`, `"a".b`) into its parts; `None` if it does not look like
/// a plain key (then no field is guessed).
fn split_key(k: &str) -> Option<Vec<String>> {
    k.split('.')
        .map(|part| {
            let p = part.trim();
            let p = p
                .strip_prefix('"')
                .and_then(|x| x.strip_suffix('"'))
                .or_else(|| p.strip_prefix('\'').and_then(|x| x.strip_suffix('\'')))
                .unwrap_or(p);
            let ok = !p.is_empty()
                && p.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            ok.then(|| p.to_string())
        })
        .collect()
}

/// Best-effort field path and fix for a syntax error on `line` (1-based): replays the table
/// headers above it, counting `[[..]]` headers to get workload indices.
fn guess_syntax_context(src: &str, line: usize) -> (String, Option<String>) {
    let mut aot_counts: std::collections::BTreeMap<String, usize> = Default::default();
    let mut header: Vec<String> = Vec::new();
    let indexed = |parts: &[String], counts: &std::collections::BTreeMap<String, usize>| {
        let mut plain = String::new();
        let mut out = String::new();
        for p in parts {
            plain = join(&plain, p);
            out = join(&out, p);
            if let Some(n) = counts.get(&plain) {
                out.push_str(&format!("[{}]", n.saturating_sub(1)));
            }
        }
        out
    };
    for (i, raw) in src.lines().enumerate().take(line) {
        let l = raw.trim();
        let is_err_line = i + 1 == line;
        let head = if let Some(rest) = l.strip_prefix("[[") {
            rest.split_once("]]")
                .and_then(|(name, _)| split_key(name))
                .map(|p| (p, true))
        } else if let Some(rest) = l.strip_prefix('[') {
            rest.split_once(']')
                .and_then(|(name, _)| split_key(name))
                .map(|p| (p, false))
        } else {
            None
        };
        match head {
            Some((parts, is_array)) => {
                if is_array {
                    *aot_counts.entry(parts.join(".")).or_insert(0) += 1;
                }
                header = parts;
                if is_err_line {
                    return (indexed(&header, &aot_counts), None);
                }
            }
            None if is_err_line => {
                if l.starts_with('[') {
                    return (String::new(), None);
                }
                let Some((k, v)) = l.split_once('=') else {
                    return (indexed(&header, &aot_counts), None);
                };
                let Some(keys) = split_key(k) else {
                    return (String::new(), None);
                };
                let mut parts = header.clone();
                parts.extend(keys);
                let key = k.trim();
                return (indexed(&parts, &aot_counts), unquoted_value_hint(key, v));
            }
            None => {}
        }
    }
    (String::new(), None)
}

/// The most common syntax error in a scenario: a unit or name written without quotes
/// (`ram = 4GiB`, `pattern = zipf`). Suggest the quoted form.
fn unquoted_value_hint(key: &str, value: &str) -> Option<String> {
    let v = value.split('#').next().unwrap_or("").trim();
    let starts_ok = v
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric() || c == '.');
    let has_letter = v.chars().any(|c| c.is_alphabetic() || c == '/');
    let keyword = matches!(v, "true" | "false" | "inf" | "nan");
    (starts_ok && has_letter && !keyword && !v.contains(['"', '\'', '[', '{']))
        .then(|| format!("sizes, durations and names are strings: write {key} = \"{v}\""))
}

fn parse_sim(ctx: &Ctx, t: &Table, out: &mut SimConfig) -> Res<()> {
    t.check_keys(ctx, SIM_KEYS)?;
    if let Some(f) = t.field("seed") {
        out.seed = f.uint(ctx)?;
    }
    if let Some(f) = t.field("duration") {
        out.duration_ns = Some(f.positive_duration(ctx)?);
    }
    if let Some(f) = t.field("sample_interval") {
        out.sample_interval_ns = f.positive_duration(ctx)?;
    }
    if let Some(f) = t.field("max_duration") {
        out.max_duration_ns = f.positive_duration(ctx)?;
    }
    Ok(())
}

fn parse_host(ctx: &Ctx, t: &Table, out: &mut HostConfig) -> Res<()> {
    t.check_keys(ctx, HOST_KEYS)?;
    let ram = t.field("ram");
    if let Some(f) = &ram {
        let v = f.size(ctx)?;
        if !(MIN_RAM..=MAX_RAM).contains(&v) {
            return Err(f.err(
                ctx,
                format!(
                    "RAM must be between 64MiB and 16TiB, found {}",
                    describe_size(v)
                ),
            ));
        }
        out.ram_bytes = v;
    }
    if let Some(f) = t.field("cpus") {
        out.cpus = f.uint_in(ctx, 1, 1024, "")? as u32;
    }
    if let Some(f) = t.field("thp") {
        out.thp = f.boolean(ctx)?;
    }
    if let Some(f) = t.field("machine") {
        let name = f.choice(ctx, MachineType::NAMES, "machine type")?;
        // NAMES and from_name live side by side in mod.rs; a mismatch is a bug there.
        out.machine = MachineType::from_name(name).expect("MachineType::NAMES entry");
    }
    let lowmem = t.field("lowmem");
    if let Some(f) = &lowmem {
        let v = f.size(ctx)?;
        // lowmem is the part of RAM below 4 GiB (DMA + DMA32); it cannot exceed either.
        let cap = (4 * GIB).min(out.ram_bytes);
        if v == 0 || v > cap {
            return Err(f.err(
                ctx,
                format!(
                    "lowmem (RAM below 4GiB) must be greater than zero and at most {} \
                     (the smaller of 4GiB and ram), found {}",
                    format_size(cap),
                    describe_size(v)
                ),
            ));
        }
        out.lowmem_bytes = Some(v);
    }
    if let Some(f) = t.field("fragmented_zone") {
        let name = f.choice(ctx, &["DMA", "DMA32", "Normal"], "zone")?;
        out.fragmented_zone = crate::machine::ZONE_NAMES.iter().position(|z| *z == name);
    }
    if let Some(f) = t.field("fragment_stride") {
        let v = f.uint_in(ctx, 2, 1024, " (pages per pinned page)")?;
        if !v.is_power_of_two() {
            return Err(f
                .err(
                    ctx,
                    format!("fragment_stride must be a power of two, not {v}"),
                )
                .with_help("use 8 to forbid order-3 blocks, 512 to forbid huge pages"));
        }
        out.fragment_stride = v as u32;
    }
    if let Some(f) = t.field("zoneinfo") {
        let given = f.string(ctx, "a path to a captured /proc/zoneinfo")?;
        if given.is_empty() {
            return Err(f.err(ctx, "the zoneinfo path must not be empty"));
        }
        // The zoneinfo describes the zones completely, so a RAM size or lowmem split beside
        // it would be silently ignored; refuse rather than guess which one was meant.
        if let Some(other) = ram.as_ref().or(lowmem.as_ref()) {
            let key = last_key(&other.path);
            return Err(ctx
                .error(
                    other.key_at,
                    &other.path,
                    format!(
                        "`{key}` cannot be given together with `zoneinfo`: \
                         the zones and their sizes come from the zoneinfo file"
                    ),
                )
                .with_help(format!("remove `{key}` (or `zoneinfo`)")));
        }
        let resolved = resolve(ctx, &given);
        let text = std::fs::read_to_string(&resolved).map_err(|e| {
            let msg = if e.kind() == std::io::ErrorKind::NotFound {
                format!("zoneinfo file \"{}\" does not exist", resolved.display())
            } else {
                format!("cannot read zoneinfo file \"{}\": {e}", resolved.display())
            };
            f.err(ctx, msg).with_help(relative_path_help(ctx))
        })?;
        crate::machine::layout::parse_zoneinfo(&text).map_err(|e| {
            f.err(
                ctx,
                format!(
                    "\"{}\" is not a valid /proc/zoneinfo: {e}",
                    resolved.display()
                ),
            )
        })?;
        out.zoneinfo = Some(resolved.to_string_lossy().into_owned());
    }
    Ok(())
}

/// Where a relative path in a scenario is looked for, for error messages.
fn relative_path_help(ctx: &Ctx) -> String {
    match ctx.base_dir {
        Some(d) => {
            // The parent of "x.toml" is "": that is the current directory.
            let dir = if d.as_os_str().is_empty() {
                Path::new(".")
            } else {
                d
            };
            format!(
                "a relative path is resolved against the scenario file's directory (\"{}\")",
                dir.display()
            )
        }
        None => "a relative path is resolved against the current directory".to_string(),
    }
}

/// `given` resolved against the scenario file's directory (or left relative to the current
/// directory for `parse_str`). Purely lexical: no symlinks are followed, so the stored path is
/// exactly what the user wrote, prefixed by the scenario's directory.
fn resolve(ctx: &Ctx, given: &str) -> PathBuf {
    match ctx.base_dir {
        // `join` keeps an absolute `given` as is.
        Some(dir) => dir.join(given),
        None => PathBuf::from(given),
    }
}

/// "0" / "100 bytes" / "4GiB": sizes in messages, exact.
fn describe_size(v: u64) -> String {
    match format_size(v) {
        s if s.bytes().all(|b| b.is_ascii_digit()) => format!("{s} bytes"),
        s => s,
    }
}

fn parse_sysctl(ctx: &Ctx, t: &Table, out: &mut Sysctl) -> Res<()> {
    t.check_keys(ctx, SYSCTL_KEYS)?;
    if let Some(f) = t.field("min_free_kbytes") {
        let (lo, hi) = MIN_FREE_KBYTES_RANGE;
        let v = f.uint_in(
            ctx,
            lo,
            hi,
            " (the range the kernel clamps its computed min_free_kbytes to)",
        )?;
        out.min_free_kbytes = Some(v);
    }
    if let Some(f) = t.field("watermark_scale_factor") {
        out.watermark_scale_factor = f.uint_in(ctx, 1, 3000, " (vm.watermark_scale_factor)")?;
    }
    if let Some(f) = t.field("lowmem_reserve_ratio") {
        let Some(Value::Array(arr)) = f.value() else {
            return Err(f.type_err(ctx, "an array of 4 integers [DMA, DMA32, Normal, Movable]"));
        };
        if arr.len() != 4 {
            return Err(f
                .err(
                    ctx,
                    format!(
                        "expected exactly 4 ratios (DMA, DMA32, Normal, Movable), found {}",
                        arr.len()
                    ),
                )
                .with_help("the default is [256, 256, 32, 0]"));
        }
        for (i, v) in arr.iter().enumerate() {
            let at = v.span().map_or(f.val_at, |r| r.start);
            let path = format!("{}[{i}]", f.path);
            match v {
                Value::Integer(n) if *n.value() >= 0 => {
                    out.lowmem_reserve_ratio[i] = *n.value() as u64
                }
                Value::Integer(n) => {
                    return Err(ctx.error(
                        at,
                        &path,
                        format!("must not be negative, found {}", n.value()),
                    ))
                }
                _ => {
                    return Err(ctx.error(
                        at,
                        &path,
                        format!("expected a non-negative integer, found {}", v.type_name()),
                    ))
                }
            }
        }
    }
    if let Some(f) = t.field("swappiness") {
        out.swappiness = f.uint_in(ctx, 0, 200, " (vm.swappiness)")?;
    }
    Ok(())
}

fn parse_swap(ctx: &Ctx, t: &Table, out: &mut SwapDevice) -> Res<()> {
    t.check_keys(ctx, SWAP_KEYS)?;
    if let Some(f) = t.field("size") {
        let v = f.size(ctx)?;
        // 0 means "no swap"; anything else must hold at least one page.
        if v != 0 && v < MIN_REGION {
            return Err(f.err(
                ctx,
                format!(
                    "swap size must be 0 (no swap) or at least 4KiB, found {}",
                    describe_size(v)
                ),
            ));
        }
        out.size_bytes = v;
    }
    if let Some(f) = t.field("read_latency") {
        out.read_latency_ns = f.duration(ctx)?;
    }
    if let Some(f) = t.field("write_latency") {
        out.write_latency_ns = f.duration(ctx)?;
    }
    if let Some(f) = t.field("bandwidth") {
        out.bandwidth_bytes_per_sec = f.bandwidth(ctx)?;
    }
    if let Some(f) = t.field("latency_jitter") {
        out.latency_jitter = jitter(ctx, &f)?;
    }
    Ok(())
}

/// A latency spread: a fraction in [0, 1) (1 would allow zero-latency requests).
fn jitter(ctx: &Ctx, f: &Field) -> Res<f64> {
    let v = f.float(ctx)?;
    if !(0.0..1.0).contains(&v) {
        return Err(f.err(
            ctx,
            format!("latency_jitter must be at least 0 and below 1, found {v}"),
        ));
    }
    Ok(v)
}

fn parse_disk(ctx: &Ctx, t: &Table, out: &mut DiskDevice) -> Res<()> {
    t.check_keys(ctx, DISK_KEYS)?;
    if let Some(f) = t.field("read_latency") {
        out.read_latency_ns = f.duration(ctx)?;
    }
    if let Some(f) = t.field("write_latency") {
        out.write_latency_ns = f.duration(ctx)?;
    }
    if let Some(f) = t.field("bandwidth") {
        out.bandwidth_bytes_per_sec = f.bandwidth(ctx)?;
    }
    if let Some(f) = t.field("latency_jitter") {
        out.latency_jitter = jitter(ctx, &f)?;
    }
    if let Some(f) = t.field("readahead_pages") {
        // A request moves at least one page; 1 means "no read-ahead". The upper bound (4 GiB
        // per request) only guards against typos.
        out.readahead_pages = f.uint_in(ctx, 1, 1 << 20, " (1 disables read-ahead)")?;
    }
    Ok(())
}

fn parse_writeback(ctx: &Ctx, t: &Table, out: &mut WritebackConfig) -> Res<()> {
    t.check_keys(ctx, WRITEBACK_KEYS)?;
    // Percentages, as the sysctls. A background ratio at or above dirty_ratio is not an error:
    // the kernel halves it in that case, and the simulator follows the kernel.
    if let Some(f) = t.field("dirty_background_ratio") {
        out.dirty_background_ratio = f.uint_in(ctx, 0, 100, " (a percentage)")?;
    }
    if let Some(f) = t.field("dirty_ratio") {
        out.dirty_ratio = f.uint_in(ctx, 0, 100, " (a percentage)")?;
    }
    Ok(())
}

fn parse_cost(ctx: &Ctx, t: &Table, out: &mut CostModel) -> Res<()> {
    let keys: Vec<&str> = COST_FIELDS.iter().map(|(k, _, _)| *k).collect();
    t.check_keys(ctx, &keys)?;
    for (key, field, _) in COST_FIELDS {
        if let Some(f) = t.field(key) {
            *field(out) = f.duration(ctx)?;
        }
    }
    Ok(())
}

/// Returns the `allowed` field, which the capacity check points at.
fn parse_oom<'a>(ctx: &Ctx, t: &Table<'a>, out: &mut OomConfig) -> Res<Option<Field<'a>>> {
    t.check_keys(ctx, OOM_KEYS)?;
    let allowed = t.field("allowed");
    if let Some(f) = &allowed {
        out.allowed = f.boolean(ctx)?;
    }
    if let Some(f) = t.field("reaper_delay") {
        out.reaper_delay_ns = f.duration(ctx)?;
    }
    Ok(allowed)
}

fn parse_policy(ctx: &Ctx, t: &Table, out: &mut PolicyConfig) -> Res<()> {
    let switches = crate::policy::switches();
    let keys: Vec<&str> = switches.iter().map(|s| s.name()).collect();
    t.check_keys(ctx, &keys)?;
    let mut explicit = Vec::new();
    for s in switches {
        if let Some(f) = t.field(s.name()) {
            let names: Vec<&'static str> = s.variants().iter().map(|v| v.name).collect();
            let name = f.choice(ctx, &names, &format!("{} policy", s.name()))?;
            explicit.push((s.name(), name));
        }
    }
    out.choices = crate::policy::Choices::resolve(&explicit);
    Ok(())
}

/// Where each workload's pieces are, for the checks that look across workloads.
struct WorkloadSpots {
    anon_size_at: Vec<(usize, String)>,
}

fn parse_workloads(ctx: &Ctx, root: &Table) -> Res<(Vec<Workload>, WorkloadSpots)> {
    let mut spots = WorkloadSpots {
        anon_size_at: Vec::new(),
    };
    let Some(f) = root.field("workload") else {
        return Err(ctx
            .error(0, "workload", "the scenario has no workloads")
            .with_help(
            "add a [[workload]] table with a name and a [workload.anon] or [workload.file] table",
        ));
    };
    // Both `[[workload]]` headers and `workload = [{ .. }, ..]` are arrays of tables.
    let mut tables: Vec<Table> = Vec::new();
    match f.item {
        Item::ArrayOfTables(a) => {
            for (i, t) in a.iter().enumerate() {
                let at = t.span().map_or(f.key_at, |r| r.start);
                tables.push(Table {
                    t,
                    path: format!("workload[{i}]"),
                    header: "[[workload]]".into(),
                    at,
                });
            }
        }
        Item::Value(Value::Array(arr)) => {
            for (i, v) in arr.iter().enumerate() {
                let at = v.span().map_or(f.val_at, |r| r.start);
                let path = format!("workload[{i}]");
                let Value::InlineTable(t) = v else {
                    return Err(ctx.error(
                        at,
                        &path,
                        format!("expected a workload table, found {}", v.type_name()),
                    ));
                };
                tables.push(Table {
                    t,
                    path,
                    header: "[[workload]]".into(),
                    at,
                });
            }
        }
        Item::Table(_) => {
            return Err(ctx
                .error(
                    f.val_at,
                    "workload",
                    "`workload` must be an array of tables",
                )
                .with_help("write [[workload]] (double brackets) above each workload"));
        }
        _ => return Err(f.type_err(ctx, "[[workload]] tables")),
    }
    if tables.is_empty() {
        return Err(f.err(ctx, "the scenario has no workloads"));
    }

    let mut out: Vec<Workload> = Vec::new();
    for t in &tables {
        let w = parse_workload(ctx, t, &mut spots)?;
        if out.iter().any(|o| o.name == w.name) {
            let nf = t.field("name").expect("name was required above");
            return Err(nf
                .err(ctx, format!("duplicate workload name \"{}\"", w.name))
                .with_help(
                    "every workload needs its own name (it labels counters and OOM kills)",
                ));
        }
        out.push(w);
    }
    Ok((out, spots))
}

fn parse_workload(ctx: &Ctx, t: &Table, spots: &mut WorkloadSpots) -> Res<Workload> {
    t.check_keys(ctx, WORKLOAD_KEYS)?;
    let name = match t.field("name") {
        Some(f) => {
            let n = f.string(ctx, "a string")?;
            if n.trim().is_empty() {
                return Err(f.err(ctx, "the workload name must not be empty"));
            }
            n
        }
        None => {
            return Err(ctx
                .error(t.at, &join(&t.path, "name"), "missing required key `name`")
                .with_help("give every workload a unique name, e.g. name = \"hog\""));
        }
    };
    let mut w = Workload {
        name,
        start_ns: 0,
        duration_ns: None,
        oom_score_adj: 0,
        anon: None,
        file: None,
        trace: None,
        highorder: None,
    };
    if let Some(f) = t.field("start") {
        w.start_ns = f.duration(ctx)?;
    }
    if let Some(f) = t.field("duration") {
        w.duration_ns = Some(f.positive_duration(ctx)?);
    }
    if let Some(f) = t.field("oom_score_adj") {
        w.oom_score_adj = f.int_in(ctx, -1000, 1000, "")? as i32;
    }
    if let Some(a) = t.sub(ctx, "anon", "[workload.anon]")? {
        let (spec, size_at) = parse_anon(ctx, &a)?;
        spots.anon_size_at.push((size_at, join(&a.path, "size")));
        w.anon = Some(spec);
    }
    if let Some(ft) = t.sub(ctx, "file", "[workload.file]")? {
        w.file = Some(parse_file_spec(ctx, &ft)?);
    }
    if let Some(tt) = t.sub(ctx, "trace", "[workload.trace]")? {
        w.trace = Some(parse_trace(ctx, &tt)?);
    }
    if let Some(ht) = t.sub(ctx, "highorder", "[workload.highorder]")? {
        let spec = parse_highorder(ctx, &ht)?;
        if spec.count.is_none() && w.duration_ns.is_none() {
            return Err(ctx
                .error(ht.at, &ht.path, "a high-order workload needs an end")
                .with_help("give it count = N allocations, or the workload a duration"));
        }
        w.highorder = Some(spec);
    }
    if w.anon.is_none() && w.file.is_none() && w.trace.is_none() && w.highorder.is_none() {
        return Err(ctx
            .error(
                t.at,
                &t.path,
                format!(
                    "workload \"{}\" does nothing: it has no anon, file, trace or highorder table",
                    w.name
                ),
            )
            .with_help(
                "add a [workload.anon] table (size = \"1GiB\"), a [workload.file] table \
                 and/or a [workload.trace] table (path = \"my.oracleGeneral.zst\")",
            ));
    }
    Ok(w)
}

fn parse_highorder(ctx: &Ctx, t: &Table) -> Res<HighOrderSpec> {
    t.check_keys(ctx, HIGHORDER_KEYS)?;
    let mut spec = HighOrderSpec::default();
    if let Some(f) = t.field("order") {
        spec.order = f.uint_in(
            ctx,
            0,
            10,
            " (orders 0..=10; order 0 with gfp \"kernel\" models long-lived slab pages)",
        )? as u32;
    }
    if let Some(f) = t.field("rate") {
        spec.rate_per_sec = f.uint_in(ctx, 1, 100_000_000, " (allocations per second)")?;
    }
    if let Some(f) = t.field("lifetime") {
        spec.lifetime_ns = f.positive_duration(ctx)?;
    }
    if let Some(f) = t.field("lifetimes") {
        let name = f.choice(ctx, Lifetimes::NAMES, "lifetime distribution")?;
        spec.lifetimes = Lifetimes::from_name(name).expect("Lifetimes::NAMES entry");
    }
    if let Some(f) = t.field("gfp") {
        let name = f.choice(ctx, HighOrderGfp::NAMES, "high-order gfp")?;
        spec.gfp = HighOrderGfp::from_name(name).expect("HighOrderGfp::NAMES entry");
    }
    if let Some(f) = t.field("count") {
        spec.count = Some(f.uint_in(ctx, 1, u64::MAX >> 1, "")?);
    }
    Ok(spec)
}

fn parse_trace(ctx: &Ctx, t: &Table) -> Res<TraceSpec> {
    t.check_keys(ctx, TRACE_KEYS)?;
    let Some(pf) = t.field("path") else {
        return Err(ctx
            .error(
                t.at,
                &join(&t.path, "path"),
                "missing required key `path` in [workload.trace]",
            )
            .with_help("for example: path = \"traces/db.oracleGeneral.zst\""));
    };
    let given = pf.string(ctx, "a path to a trace file")?;
    if given.is_empty() {
        return Err(pf.err(ctx, "the trace path must not be empty"));
    }
    let resolved = resolve(ctx, &given);
    let problem = match std::fs::metadata(&resolved) {
        Ok(m) if m.is_dir() => Some("is a directory, not a trace file".to_string()),
        Ok(_) => std::fs::File::open(&resolved)
            .err()
            .map(|e| format!("cannot be read: {e}")),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some("does not exist".to_string()),
        Err(e) => Some(format!("cannot be read: {e}")),
    };
    if let Some(problem) = problem {
        return Err(pf
            .err(
                ctx,
                format!("trace file \"{}\" {problem}", resolved.display()),
            )
            .with_help(relative_path_help(ctx)));
    }
    let (guessed_format, guessed_compression) = crate::trace::detect(&resolved);
    let mut spec = TraceSpec {
        path: resolved.to_string_lossy().into_owned(),
        compression: guessed_compression,
        ..TraceSpec::default()
    };
    spec.format = match t.field("format") {
        Some(f) => TraceFormat::from_name(f.choice(ctx, TraceFormat::NAMES, "trace format")?)
            .expect("TraceFormat::NAMES entry"),
        None => guessed_format.ok_or_else(|| {
            pf.err(
                ctx,
                format!(
                    "cannot tell the trace format from the file name \"{}\"",
                    resolved.display()
                ),
            )
            .with_help(
                "add format = \"oracle\" (libCacheSim oracleGeneral) or format = \"csv\" \
                 (time_ns,object,offset,kind); names ending in .oracleGeneral, .bin or .csv \
                 (then optionally .zst) are recognised",
            )
        })?,
    };
    if let Some(f) = t.field("compression") {
        spec.compression =
            Compression::from_name(f.choice(ctx, Compression::NAMES, "compression")?)
                .expect("Compression::NAMES entry");
    }
    if spec.format == TraceFormat::Csv {
        for key in ORACLE_ONLY_TRACE_KEYS {
            if let Some(f) = t.field(key) {
                return Err(ctx
                    .error(
                        f.key_at,
                        &f.path,
                        format!(
                            "`{key}` only applies to format = \"oracle\": each CSV record says \
                             its kind (anon_read, anon_write, file_read, file_write) and offset"
                        ),
                    )
                    .with_help(format!("remove `{key}`")));
            }
        }
    }
    if let Some(f) = t.field("kind") {
        spec.kind = match f.choice(ctx, TraceKind::NAMES, "trace kind")? {
            "anon" => TraceKind::Anon,
            "file" => TraceKind::File,
            other => unreachable!("TraceKind::NAMES has {other} but the parser does not"),
        };
    }
    if let Some(f) = t.field("object_size") {
        spec.object_size = match f.choice(ctx, ObjectSize::NAMES, "object_size setting")? {
            "pages" => ObjectSize::Pages,
            "ignore" => ObjectSize::Ignore,
            other => unreachable!("ObjectSize::NAMES has {other} but the parser does not"),
        };
    }
    if let Some(f) = t.field("write_fraction") {
        let v = f.float(ctx)?;
        if !(0.0..=1.0).contains(&v) {
            return Err(f.err(
                ctx,
                format!("write_fraction must be between 0 and 1, found {v}"),
            ));
        }
        spec.write_fraction = v;
    }
    if let Some(p) = passes(ctx, t)? {
        spec.passes = p;
    }
    let mut time_name = "ignore";
    if let Some(f) = t.field("time") {
        time_name = f.choice(ctx, TraceTime::NAMES, "trace time mode")?;
    }
    spec.time = match (time_name, t.field("time_unit")) {
        ("trace", Some(f)) => TraceTime::Trace {
            unit_ns: f.positive_duration(ctx)?,
        },
        ("trace", None) => TraceTime::Trace {
            unit_ns: TraceSpec::default_time_unit_ns(spec.format),
        },
        (_, Some(f)) => {
            return Err(ctx
                .error(
                    f.key_at,
                    &f.path,
                    "time_unit only applies to time = \"trace\" (timestamps are ignored here)",
                )
                .with_help("remove time_unit, or set time = \"trace\""));
        }
        ("ignore", None) => TraceTime::Ignore,
        (other, None) => unreachable!("TraceTime::NAMES has {other} but the parser does not"),
    };
    if let Some(f) = t.field("think") {
        spec.think_ns = f.duration(ctx)?;
    }
    if let Some(f) = t.field("hold") {
        spec.hold_ns = f.duration(ctx)?;
    }
    if let Some(f) = t.field("max_records") {
        spec.max_records = Some(f.uint_in(ctx, 1, u64::MAX, "")?);
    }
    Ok(spec)
}

/// A region size: required, at least one page.
fn region_size(ctx: &Ctx, t: &Table) -> Res<(u64, usize)> {
    let Some(f) = t.field("size") else {
        return Err(ctx
            .error(
                t.at,
                &join(&t.path, "size"),
                format!("missing required key `size` in {}", t.header),
            )
            .with_help("for example: size = \"1GiB\""));
    };
    let v = f.size(ctx)?;
    if v < MIN_REGION {
        return Err(f.err(
            ctx,
            format!(
                "size must be at least 4KiB (one page), found {}",
                describe_size(v)
            ),
        ));
    }
    Ok((v, f.val_at))
}

fn passes(ctx: &Ctx, t: &Table) -> Res<Option<u64>> {
    t.field("passes")
        .map(|f| f.uint_in(ctx, 1, u64::MAX, ""))
        .transpose()
}

fn parse_anon(ctx: &Ctx, t: &Table) -> Res<(AnonSpec, usize)> {
    t.check_keys(ctx, ANON_KEYS)?;
    let mut spec = AnonSpec::default();
    let (size, size_at) = region_size(ctx, t)?;
    spec.size_bytes = size;
    let mut pattern_name = "sequential";
    if let Some(f) = t.field("pattern") {
        pattern_name = f.choice(ctx, AccessPattern::NAMES, "pattern")?;
    }
    let alpha = match t.field("zipf_alpha") {
        Some(f) if pattern_name != "zipf" => {
            return Err(ctx
                .error(
                    f.key_at,
                    &f.path,
                    format!("zipf_alpha only applies to pattern = \"zipf\" (this pattern is \"{pattern_name}\")"),
                )
                .with_help("remove zipf_alpha, or set pattern = \"zipf\""));
        }
        Some(f) => {
            let a = f.float(ctx)?;
            if !(a.is_finite() && a > 0.0) {
                return Err(f.err(
                    ctx,
                    format!("zipf_alpha must be a finite number greater than 0, found {a}"),
                ));
            }
            a
        }
        None => DEFAULT_ZIPF_ALPHA,
    };
    spec.pattern = match pattern_name {
        "sequential" => AccessPattern::Sequential,
        "random" => AccessPattern::Random,
        "zipf" => AccessPattern::Zipf { alpha },
        other => unreachable!("AccessPattern::NAMES has {other} but the parser does not"),
    };
    if let Some(p) = passes(ctx, t)? {
        spec.passes = p;
    }
    if let Some(f) = t.field("write_fraction") {
        let v = f.float(ctx)?;
        if !(0.0..=1.0).contains(&v) {
            return Err(f.err(
                ctx,
                format!("write_fraction must be between 0 and 1, found {v}"),
            ));
        }
        spec.write_fraction = v;
    }
    if let Some(f) = t.field("think") {
        spec.think_ns = f.duration(ctx)?;
    }
    if let Some(f) = t.field("hold") {
        spec.hold_ns = f.duration(ctx)?;
    }
    Ok((spec, size_at))
}

fn parse_file_spec(ctx: &Ctx, t: &Table) -> Res<FileSpec> {
    t.check_keys(ctx, FILE_KEYS)?;
    let mut spec = FileSpec {
        size_bytes: region_size(ctx, t)?.0,
        ..FileSpec::default()
    };
    if let Some(f) = t.field("op") {
        spec.op = match f.choice(ctx, FileOp::NAMES, "file op")? {
            "read" => FileOp::Read,
            "write" => FileOp::Write,
            other => unreachable!("FileOp::NAMES has {other} but the parser does not"),
        };
    }
    if let Some(p) = passes(ctx, t)? {
        spec.passes = p;
    }
    if let Some(f) = t.field("hold") {
        spec.hold_ns = f.duration(ctx)?;
    }
    Ok(spec)
}

/// With OOM kills forbidden, the anonymous working sets must fit in RAM + swap, or the run
/// could only end in a stuck allocation. (Page cache is reclaimable, so file sizes do not
/// count; summing all workloads is conservative when they do not overlap in time.) Skipped
/// with a zoneinfo, whose RAM is not known here.
fn check_capacity(
    ctx: &Ctx,
    s: &Scenario,
    allowed: Option<Field>,
    spots: &WorkloadSpots,
) -> Res<()> {
    if s.oom.allowed || s.host.zoneinfo.is_some() {
        return Ok(());
    }
    let need: u128 = s
        .workloads
        .iter()
        .filter_map(|w| w.anon.as_ref())
        .map(|a| a.size_bytes as u128)
        .sum();
    let have = s.host.ram_bytes as u128 + s.swap.size_bytes as u128;
    if need <= have {
        return Ok(());
    }
    let show = |v: u128| u64::try_from(v).map_or_else(|_| format!("{v} bytes"), describe_size);
    let message = format!(
        "the workloads' anonymous working sets ({}) exceed RAM + swap ({} = {} + {}) and no OOM kill is allowed",
        show(need),
        show(have),
        describe_size(s.host.ram_bytes),
        describe_size(s.swap.size_bytes),
    );
    let (at, field) = match (&allowed, spots.anon_size_at.last()) {
        (Some(f), _) => (f.val_at, f.path.clone()),
        (None, Some((at, path))) => (*at, path.clone()),
        (None, None) => (0, "oom.allowed".to_string()),
    };
    Err(ctx.error(at, &field, message).with_help(
        "set allowed = true in [oom], add swap ([swap] size = ...), or shrink the workloads",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{NS_PER_MS, NS_PER_SEC, NS_PER_US};

    const MINIMAL: &str = "[[workload]]\nname = \"w\"\nanon.size = \"1GiB\"\n";

    fn err(text: &str) -> ScenarioError {
        parse_str(text, "t.toml").expect_err("should fail")
    }

    #[test]
    fn minimal_takes_every_default() {
        let s = parse_str(MINIMAL, "dir/my-scen.toml").unwrap();
        let mut want = Scenario {
            name: "my-scen".into(),
            ..Scenario::default()
        };
        want.workloads.push(Workload {
            name: "w".into(),
            start_ns: 0,
            duration_ns: None,
            oom_score_adj: 0,
            anon: Some(AnonSpec {
                size_bytes: GIB,
                ..AnonSpec::default()
            }),
            file: None,
            trace: None,
            highorder: None,
        });
        assert_eq!(s, want);
    }

    #[test]
    fn full_example() {
        let text = r#"
name = "anon-overcommit"
[sim]
seed = 7
duration = "60s"
sample_interval = "250ms"
max_duration = "2h"
[host]
ram = "8GiB"
cpus = 4
thp = false
machine = "i440fx"
lowmem = "3GiB"
[sysctl]
min_free_kbytes = 67584
watermark_scale_factor = 150
lowmem_reserve_ratio = [256, 256, 64, 0]
swappiness = 100
[swap]
size = "2GB"
read_latency = "100us"
write_latency = "50us"
bandwidth = "500MiB/s"
[disk]
read_latency = "1ms"
write_latency = "2ms"
bandwidth = "200MB/s"
readahead_pages = 64
[writeback]
dirty_background_ratio = 5
dirty_ratio = 15
[cost]
anon_touch = "25ns"
slowpath = "2us"
[oom]
allowed = false
reaper_delay = "10ms"
[policy]
kswapd_balance = "v6.1"
[[workload]]
name = "hog"
start = "1s"
duration = "10s"
oom_score_adj = 500
[workload.anon]
size = "6GiB"
pattern = "zipf"
zipf_alpha = 0.99
passes = 3
write_fraction = 0.5
hold = "2.5s"
[[workload]]
name = "reader"
file = { size = "8GiB", op = "write", passes = 2, hold = "1min" }
"#;
        let s = parse_str(text, "x.toml").unwrap();
        assert_eq!(s.name, "anon-overcommit");
        assert_eq!(
            s.sim,
            SimConfig {
                seed: 7,
                duration_ns: Some(60 * NS_PER_SEC),
                sample_interval_ns: 250 * NS_PER_MS,
                max_duration_ns: 7200 * NS_PER_SEC
            }
        );
        assert_eq!(s.host.ram_bytes, 8 * GIB);
        assert_eq!(s.host.cpus, 4);
        assert!(!s.host.thp);
        assert_eq!(s.host.machine, MachineType::I440fx);
        assert_eq!(s.host.lowmem_bytes, Some(3 * GIB));
        assert_eq!(
            s.sysctl,
            Sysctl {
                min_free_kbytes: Some(67584),
                watermark_scale_factor: 150,
                lowmem_reserve_ratio: [256, 256, 64, 0],
                swappiness: 100
            }
        );
        assert_eq!(
            s.swap,
            SwapDevice {
                size_bytes: 2_000_000_000,
                read_latency_ns: 100 * NS_PER_US,
                write_latency_ns: 50 * NS_PER_US,
                bandwidth_bytes_per_sec: 500 * MIB,
                latency_jitter: 0.1,
            }
        );
        assert_eq!(
            s.disk,
            DiskDevice {
                read_latency_ns: NS_PER_MS,
                write_latency_ns: 2 * NS_PER_MS,
                bandwidth_bytes_per_sec: 200_000_000,
                latency_jitter: 0.1,
                readahead_pages: 64
            }
        );
        assert_eq!(
            s.writeback,
            WritebackConfig {
                dirty_background_ratio: 5,
                dirty_ratio: 15
            }
        );
        assert_eq!(
            s.cost,
            CostModel {
                anon_touch_ns: 25,
                slowpath_ns: 2000,
                compact_scan_ns: 20,
                migrate_page_ns: 2000,
                ..CostModel::default()
            }
        );
        assert_eq!(
            s.oom,
            OomConfig {
                allowed: false,
                reaper_delay_ns: 10 * NS_PER_MS
            }
        );
        assert_eq!(s.workloads.len(), 2);
        let hog = &s.workloads[0];
        assert_eq!(
            (hog.start_ns, hog.duration_ns, hog.oom_score_adj),
            (NS_PER_SEC, Some(10 * NS_PER_SEC), 500)
        );
        assert_eq!(
            hog.anon,
            Some(AnonSpec {
                size_bytes: 6 * GIB,
                pattern: AccessPattern::Zipf { alpha: 0.99 },
                passes: 3,
                write_fraction: 0.5,
                think_ns: 0,
                hold_ns: 2_500_000_000
            })
        );
        assert_eq!(
            s.workloads[1].file,
            Some(FileSpec {
                size_bytes: 8 * GIB,
                op: FileOp::Write,
                passes: 2,
                hold_ns: 60 * NS_PER_SEC
            })
        );
        assert_eq!(s.workloads[1].anon, None);
    }

    #[test]
    fn every_cost_key_sets_its_field() {
        for (i, (key, field, _)) in COST_FIELDS.iter().enumerate() {
            let text = format!("[cost]\n{key} = \"{}ns\"\n{MINIMAL}", 1000 + i);
            let s = parse_str(&text, "t.toml").unwrap();
            let mut want = CostModel::default();
            *field(&mut want) = 1000 + i as u64;
            assert_eq!(s.cost, want, "{key}");
        }
    }

    #[test]
    fn zipf_alpha_defaults_and_inline_workloads() {
        let s = parse_str(
            "workload = [{ name = \"a\", anon = { size = 4096, pattern = \"zipf\" } }]",
            "t.toml",
        )
        .unwrap();
        assert_eq!(
            s.workloads[0].anon.as_ref().unwrap().pattern,
            AccessPattern::Zipf { alpha: 1.0 }
        );
        assert_eq!(s.workloads[0].anon.as_ref().unwrap().size_bytes, 4096);
    }

    #[test]
    fn big_seed_as_string() {
        let s = parse_str(&format!("sim.seed = \"{}\"\n{MINIMAL}", u64::MAX), "t").unwrap();
        assert_eq!(s.sim.seed, u64::MAX);
    }

    #[test]
    fn positions_and_display() {
        let e = err("[host]\nram = \"4GiB\"\n  cpus = 0\n");
        assert_eq!((e.line, e.col, e.field.as_str()), (3, 10, "host.cpus"));
        assert_eq!(
            e.to_string(),
            "t.toml:3:10: error: in field `host.cpus`: must be between 1 and 1024, found 0"
        );

        let e = err("[host]\nrma = \"4GiB\"\n");
        assert_eq!((e.line, e.col, e.field.as_str()), (2, 1, "host.rma"));
        let shown = e.to_string();
        assert!(shown.contains("unknown key `rma` in [host]"), "{shown}");
        assert!(shown.contains("help: did you mean `ram`?"), "{shown}");
        assert!(
            shown.contains("ram, cpus, thp, machine, lowmem, zoneinfo"),
            "{shown}"
        );

        // Columns count characters, not bytes.
        let e = err("name = \"é\"\n[sim]\nseed = 1\nsample_interval = \"é\"\n");
        assert_eq!((e.line, e.col), (4, 19));
    }

    #[test]
    fn syntax_errors_guess_the_field() {
        let e = err("[host]\nram = 4GiB\n");
        assert_eq!((e.line, e.field.as_str()), (2, "host.ram"));
        assert!(e.message.starts_with("invalid TOML"), "{}", e.message);
        assert_eq!(
            e.help.as_deref(),
            Some("sizes, durations and names are strings: write ram = \"4GiB\"")
        );

        let e = err("[[workload]]\nname = \"a\"\n[[workload]]\nname = \"b\"\n[workload.anon]\nsize = 1 GiB\n");
        assert_eq!((e.line, e.field.as_str()), (6, "workload[1].anon.size"));

        // Unterminated array: reported on the line it starts, not past the end of the file.
        let e = err("[sysctl]\nlowmem_reserve_ratio = [1, 2\n");
        assert_eq!(e.line, 2);
    }

    #[test]
    fn workload_table_without_double_brackets() {
        let e = err("[workload]\nname = \"a\"\n");
        assert_eq!((e.line, e.field.as_str()), (1, "workload"));
        assert!(e.help.unwrap().contains("[[workload]]"));
    }

    #[test]
    fn duration_integer_needs_unit() {
        let e = err(&format!("[sim]\nduration = 60\n{MINIMAL}"));
        assert_eq!((e.line, e.col, e.field.as_str()), (2, 12, "sim.duration"));
        assert!(e.help.unwrap().contains("duration = \"60ms\""));
        // 0 needs no unit.
        let s = parse_str(&format!("[oom]\nreaper_delay = 0\n{MINIMAL}"), "t").unwrap();
        assert_eq!(s.oom.reaper_delay_ns, 0);
    }

    #[test]
    fn unreadable_file() {
        let e = parse_file(Path::new("/nonexistent/dir/x.toml")).unwrap_err();
        assert_eq!((e.line, e.col, e.field.as_str()), (0, 0, ""));
        assert!(e
            .to_string()
            .starts_with("/nonexistent/dir/x.toml: error: cannot read scenario file"));
    }

    #[test]
    fn suggestion_distance() {
        assert_eq!(closest("workloads", ROOT_KEYS), Some("workload"));
        assert_eq!(closest("zipf", AccessPattern::NAMES), Some("zipf"));
        assert_eq!(
            closest("seqential", AccessPattern::NAMES),
            Some("sequential")
        );
        assert_eq!(closest("xyz", HOST_KEYS), None);
    }

    /// The parser keeps NAMES and its own matches in step; a name listed in mod.rs but not
    /// handled here would otherwise hit `unreachable!` on user input.
    #[test]
    fn every_registered_name_parses() {
        for m in MachineType::NAMES {
            let s = parse_str(&format!("host.machine = \"{m}\"\n{MINIMAL}"), "t").unwrap();
            assert_eq!(s.host.machine.name(), *m);
        }
        for sw in crate::policy::switches() {
            for v in sw.variants() {
                let text = format!("policy.{} = \"{}\"\n{MINIMAL}", sw.name(), v.name);
                let s = parse_str(&text, "t").unwrap();
                assert_eq!(s.policy.choices.get(sw.name()), v.name);
            }
        }
        for p in AccessPattern::NAMES {
            let text = format!(
                "[[workload]]\nname = \"w\"\nanon = {{ size = \"1GiB\", pattern = \"{p}\" }}"
            );
            parse_str(&text, "t").unwrap();
        }
        for op in FileOp::NAMES {
            let text =
                format!("[[workload]]\nname = \"w\"\nfile = {{ size = \"1GiB\", op = \"{op}\" }}");
            parse_str(&text, "t").unwrap();
        }
    }

    /// Bad input must give an error, never a panic: cut a full scenario at every character and
    /// drop each of its lines in turn. Every error must point inside the text.
    #[test]
    fn damaged_input_never_panics() {
        let mut s = parse_str(MINIMAL, "t").unwrap();
        s.host.lowmem_bytes = Some(GIB);
        s.sysctl.min_free_kbytes = Some(1000);
        s.workloads[0].anon.as_mut().unwrap().pattern = AccessPattern::Zipf { alpha: 0.5 };
        s.workloads[0].file = Some(FileSpec {
            size_bytes: GIB,
            ..FileSpec::default()
        });
        let full = crate::scenario::show::to_toml(&s);
        let lines: Vec<&str> = full.lines().collect();
        let mut texts: Vec<String> = full
            .char_indices()
            .map(|(i, _)| full[..i].to_string())
            .collect();
        for skip in 0..lines.len() {
            let kept: Vec<&str> = lines
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != skip)
                .map(|(_, l)| *l)
                .collect();
            texts.push(kept.join("\n"));
        }
        for text in &texts {
            if let Err(e) = parse_str(text, "t.toml") {
                let n_lines = text.lines().count().max(1);
                assert!(
                    e.line >= 1 && e.line <= n_lines && e.col >= 1,
                    "{e} for:\n{text}"
                );
            }
        }
    }
}
