//! The scenario schema: every key of every table declared once, as data.
//!
//! A table is a [`Section<S>`] over the struct `S` it fills: its keys ([`Key<S>`]: name, type
//! with unit and range, default or the rule that computes it, checker, one-line doc, accessors),
//! the tables nested in it ([`Child<S>`]: a fixed sub-table, an optional one, an array of tables,
//! or the policy registry's `[policy]`) and the rules that look at several keys at once
//! ([`Rule<S>`]). The parser (`parse.rs`), the `--show-defaults` printer (`show.rs`) and the
//! reference (`docs.rs`, `docs/scenario-reference.md`) all walk these declarations, so a key
//! cannot be known to one and missing from another.
//!
//! The declarations live in `sections/`, written with the [`section!`] macro, which also
//! generates the struct's `Default` from the same lines: a key's default is written once, next
//! to its name. A section is a `static` that any parent can instantiate (`[host]` inside the
//! scenario today; a later `[[guest]]` or `[[machine]]` table can embed the same `HOST`,
//! `SYSCTL`, `SWAP`, ... sections through its own [`Child`] list).

use std::fmt;

use super::error::Res;
use super::source::{Ctx, Table};
use super::writer::Writer;
use super::Scenario;

/// A parsed value, before it is stored in its field. The variant follows the key's [`Ty`].
#[derive(Debug, Clone, PartialEq)]
pub enum Val {
    /// Sizes (bytes), durations (ns), bandwidths (bytes/s), non-negative integers.
    U(u64),
    I(i64),
    F(f64),
    B(bool),
    /// Choices (the variant's name), text and resolved paths.
    S(String),
    /// Fixed-length integer arrays.
    L(Vec<u64>),
}

/// The type of a key, with its unit and range: what the parser accepts, how the printer writes
/// it, and what the reference says.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Ty {
    /// Bytes: "4GiB", "1.5GiB", "4GB" or an integer number of bytes.
    Size {
        min: u64,
        max: u64,
    },
    /// Nanoseconds: "100ms"; `min` is 0 or 1 (strictly positive).
    Duration {
        min: u64,
    },
    /// Bytes per second, greater than zero: "1GiB/s".
    Bandwidth,
    UInt {
        min: u64,
        max: u64,
    },
    Int {
        min: i64,
        max: i64,
    },
    /// A float in a range whose ends are open or closed; always finite.
    Float {
        min: f64,
        max: f64,
        min_open: bool,
        max_open: bool,
    },
    Bool,
    /// One of `names`; `what` is the noun for messages ("machine type").
    Choice {
        names: &'static [&'static str],
        what: &'static str,
    },
    /// A non-empty string; `what` names it in messages ("workload name").
    Text {
        what: &'static str,
    },
    /// A file, resolved against the scenario file's directory; `what` names it in messages.
    Path {
        what: &'static str,
        expected: &'static str,
    },
    /// Exactly `labels.len()` non-negative integers, one per label.
    UIntList {
        labels: &'static [&'static str],
    },
    /// A cgroup memory interface value as the kernel's file takes it: `"max"`, or bytes (an
    /// integer, or a string with an optional K, M, G, T, P or E suffix, `memparse`). Kept as
    /// written; the machine turns it into pages.
    MemoryKnob,
}

/// A rule computing a key's default from the keys before it; `Ok(None)`: leave the default.
pub type Compute<S> = fn(&S) -> Result<Option<Val>, Fix>;
/// A key's extra validation: the table as parsed so far, and the key's value.
pub type Check<S> = fn(&S, &Val) -> Result<(), Fix>;

/// How a key's default is decided.
pub enum Dflt<S: 'static> {
    /// The value written in the section's declaration (the struct's `Default`).
    Value,
    /// An optional setting; the text says what leaving it out means.
    Unset(&'static str),
    /// Computed from other keys by a named rule. `compute` runs in the parser when the key is
    /// absent (after the keys declared before it); `None` when the value is decided elsewhere
    /// (by another key's setter, the file name, or at run time), as `text` says.
    Rule {
        text: &'static str,
        compute: Option<Compute<S>>,
    },
    /// Must be given; the text is an example line.
    Required(&'static str),
}

impl<S> Clone for Dflt<S> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<S> Copy for Dflt<S> {}

/// A key that only makes sense when the rest of its table says so (`zipf_alpha` needs
/// `pattern = "zipf"`). Given otherwise, it is an error; the printer leaves it out.
pub struct OnlyIf<S: 'static> {
    pub when: fn(&S) -> bool,
    /// The condition in words, for the reference ("pattern = \"zipf\"").
    pub cond: &'static str,
    pub message: &'static str,
    pub help: &'static str,
}

/// A value the printer shows for a key left at a computed default, and how it was computed.
pub struct Computed {
    pub value: Val,
    pub how: String,
}

/// What a checker or rule reports: the message, the fix, and where: paths relative to the
/// table, the first one present in the file wins (its value, or a nested table's header);
/// none: the table itself.
#[derive(Debug, Clone, PartialEq)]
pub struct Fix {
    pub at: Vec<String>,
    pub message: String,
    pub help: String,
}

impl Fix {
    pub fn new(message: impl Into<String>, help: impl Into<String>) -> Fix {
        Fix {
            at: Vec::new(),
            message: message.into(),
            help: help.into(),
        }
    }
    pub fn at(mut self, path: impl Into<String>) -> Fix {
        self.at.push(path.into());
        self
    }
}

/// One key of a table. Built with [`Key::new`] and the builder methods below, in `const`
/// context; [`section!`] fills in the accessors of keys that map to one field.
pub struct Key<S: 'static> {
    pub name: &'static str,
    pub ty: Ty,
    /// Unit of a plain number ("KiB", "pages", "%"); sizes and durations carry theirs.
    pub unit: &'static str,
    pub doc: &'static str,
    /// Why the range is what it is, appended to range errors and the reference.
    pub why: &'static str,
    pub default: Dflt<S>,
    /// Extra validation, after the type and range: sees the table as parsed so far.
    pub check: Option<Check<S>>,
    pub only_if: Option<OnlyIf<S>>,
    /// The value the printer shows when the key is left to a rule computed at run time.
    pub computed: Option<fn(&Scenario) -> Option<Computed>>,
    /// The key's current value; `None` when unset.
    pub get: Option<fn(&S) -> Option<Val>>,
    pub set: Option<fn(&mut S, Val)>,
}

impl<S> Key<S> {
    pub const fn new(name: &'static str, ty: Ty, doc: &'static str) -> Self {
        Key {
            name,
            ty,
            unit: "",
            doc,
            why: "",
            default: Dflt::Value,
            check: None,
            only_if: None,
            computed: None,
            get: None,
            set: None,
        }
    }
    pub const fn unit(self, unit: &'static str) -> Self {
        Key { unit, ..self }
    }
    pub const fn why(self, why: &'static str) -> Self {
        Key { why, ..self }
    }
    pub const fn unset(self, meaning: &'static str) -> Self {
        Key {
            default: Dflt::Unset(meaning),
            ..self
        }
    }
    pub const fn required(self, example: &'static str) -> Self {
        Key {
            default: Dflt::Required(example),
            ..self
        }
    }
    pub const fn rule(self, text: &'static str) -> Self {
        Key {
            default: Dflt::Rule {
                text,
                compute: None,
            },
            ..self
        }
    }
    pub const fn rule_fn(self, text: &'static str, compute: Compute<S>) -> Self {
        Key {
            default: Dflt::Rule {
                text,
                compute: Some(compute),
            },
            ..self
        }
    }
    pub const fn check(self, f: Check<S>) -> Self {
        Key {
            check: Some(f),
            ..self
        }
    }
    pub const fn only_if(
        self,
        when: fn(&S) -> bool,
        cond: &'static str,
        message: &'static str,
        help: &'static str,
    ) -> Self {
        Key {
            only_if: Some(OnlyIf {
                when,
                cond,
                message,
                help,
            }),
            ..self
        }
    }
    pub const fn computed(self, f: fn(&Scenario) -> Option<Computed>) -> Self {
        Key {
            computed: Some(f),
            ..self
        }
    }
    /// Custom accessors, for keys that are not simply one field.
    pub const fn access(self, get: fn(&S) -> Option<Val>, set: fn(&mut S, Val)) -> Self {
        Key {
            get: Some(get),
            set: Some(set),
            ..self
        }
    }
    /// The field accessors [`section!`] derives, unless the key brought its own.
    pub const fn auto(self, get: fn(&S) -> Option<Val>, set: fn(&mut S, Val)) -> Self {
        match self.get {
            Some(_) => self,
            None => self.access(get, set),
        }
    }

    pub fn value(&self, s: &S) -> Option<Val> {
        (self.get.expect("accessors filled by section!"))(s)
    }
    pub fn store(&self, s: &mut S, v: Val) {
        (self.set.expect("accessors filled by section!"))(s, v)
    }
    /// Is the key meaningful for this table (its `only_if` holds)?
    pub fn applies(&self, s: &S) -> bool {
        self.only_if.as_ref().is_none_or(|o| (o.when)(s))
    }
}

/// A check over several keys of one table (or, at the top level, over several tables).
pub struct Rule<S: 'static> {
    pub name: &'static str,
    pub doc: &'static str,
    /// The table and the keys that were written in it.
    pub check: fn(&S, &[&str]) -> Result<(), Fix>,
}

/// A tables' declaration: see the module documentation.
pub struct Section<S: 'static> {
    pub name: &'static str,
    pub doc: &'static str,
    pub keys: &'static [Key<S>],
    pub children: &'static [&'static dyn Child<S>],
    pub rules: &'static [Rule<S>],
    /// Comment lines the printer adds after the keys: values derived from the table that are
    /// not keys (the per-zone watermarks under `[sysctl]`).
    pub derived: Option<fn(&Scenario) -> Vec<String>>,
}

impl<S> Section<S> {
    /// Keys and nested tables: everything the table accepts.
    pub fn allowed(&self) -> Vec<&'static str> {
        let keys = self.keys.iter().map(|k| k.name);
        keys.chain(self.children.iter().map(|c| c.name())).collect()
    }
}

/// Where a nested table sits in its parent, and how the parent stores it.
pub trait Child<P>: Sync {
    fn name(&self) -> &'static str;
    /// Parse the nested table (if the parent has it) into the parent.
    fn parse(&self, cx: &Ctx, parent: &Table, out: &mut P) -> Res<()>;
    /// Print the nested table(s); `prefix` is the parent's header path ("" or "workload").
    fn show(&self, w: &mut Writer, parent: &P, root: &Scenario, prefix: &str);
    /// The reference entry for the nested table(s).
    fn doc(&self, out: &mut String, prefix: &str);
}

/// A table that is always there (`[host]` in the scenario): absent means all defaults.
/// Nested tables take their key from their section's name.
pub struct Embedded<P: 'static, C: 'static> {
    pub section: &'static Section<C>,
    pub get: fn(&P) -> &C,
    pub get_mut: fn(&mut P) -> &mut C,
}

/// A table that may be absent (`[workload.anon]`): absent means `None`.
pub struct Optional<P: 'static, C: 'static> {
    pub section: &'static Section<C>,
    pub get: fn(&P) -> Option<&C>,
    pub put: fn(&mut P, C),
}

/// An array of tables (`[[workload]]`), at least one, optionally with a key unique among them.
pub struct Array<P: 'static, C: 'static> {
    pub section: &'static Section<C>,
    pub get: fn(&P) -> &Vec<C>,
    pub get_mut: fn(&mut P) -> &mut Vec<C>,
    /// What an empty or missing array means, and how to add an element.
    pub missing: (&'static str, &'static str),
    /// The parent (parsed so far) does without the array: none is fine then (a scenario
    /// whose guests do the work needs no host workload; a guest may idle).
    pub optional_if: fn(&P) -> bool,
    /// A key whose value must differ between elements.
    pub unique: Option<Unique<C>>,
}

/// A key of an array's tables whose value must differ between them (workload names).
pub struct Unique<C: 'static> {
    pub key: &'static str,
    pub value: fn(&C) -> &str,
    /// Why, as the fix of the error.
    pub help: &'static str,
}

/// Conversion between a field's type and [`Val`]; `from_val` only sees values of the key's
/// type, already validated, so a mismatch is a bug in a declaration (and panics in tests).
pub trait Conv: Sized {
    fn to_val(&self) -> Option<Val>;
    fn from_val(v: Val) -> Self;
}

macro_rules! conv {
    ($t:ty, $var:ident, |$x:ident| $to:expr, |$y:ident| $from:expr) => {
        impl Conv for $t {
            fn to_val(&self) -> Option<Val> {
                let $x = self;
                Some(Val::$var($to))
            }
            fn from_val(v: Val) -> Self {
                match v {
                    Val::$var($y) => $from,
                    other => panic!("{} field given {other:?}", stringify!($t)),
                }
            }
        }
    };
}
conv!(u64, U, |x| *x, |y| y);
conv!(u32, U, |x| u64::from(*x), |y| y as u32);
conv!(i32, I, |x| i64::from(*x), |y| y as i32);
conv!(f64, F, |x| *x, |y| y);
conv!(bool, B, |x| *x, |y| y);
conv!(String, S, |x| x.clone(), |y| y);
conv!([u64; 4], L, |x| x.to_vec(), |y| {
    let mut a = [0; 4];
    a.copy_from_slice(&y);
    a
});

impl<T: Conv> Conv for Option<T> {
    fn to_val(&self) -> Option<Val> {
        self.as_ref().and_then(T::to_val)
    }
    fn from_val(v: Val) -> Self {
        Some(T::from_val(v))
    }
}

/// `Conv` for an enum with `name()` and `from_name()`, stored as its name.
macro_rules! named_conv {
    ($($t:ty),* $(,)?) => {$(
        impl $crate::scenario::schema::Conv for $t {
            fn to_val(&self) -> Option<$crate::scenario::schema::Val> {
                Some($crate::scenario::schema::Val::S(self.name().to_string()))
            }
            fn from_val(v: $crate::scenario::schema::Val) -> Self {
                match v {
                    $crate::scenario::schema::Val::S(s) => <$t>::from_name(&s)
                        .unwrap_or_else(|| panic!("{s:?} is not in {}::NAMES", stringify!($t))),
                    other => panic!("{} field given {other:?}", stringify!($t)),
                }
            }
        }
    )*};
}
pub(crate) use named_conv;

/// Declare a section: the struct's `Default` and the `static` [`Section`] in one list.
///
/// ```text
/// section! {
///     HostConfig => pub static HOST = "host", "The machine: RAM, CPUs, zones." {
///         ram_bytes: 4 * GIB => Key::new("ram", Ty::Size { .. }, "RAM of the machine"),
///         fragment_stride: DEFAULT_FRAGMENT_STRIDE => Key::new(..),
///         anon: None;                       // no key: a nested table, or set by another key
///     }
///     children: [..], rules: [..], derived: None
/// }
/// ```
///
/// Each field is `field: default` (a Rust expression of the field's type), then `=>` and the
/// keys stored in it, usually one. A key without its own `.access(..)` reads and writes the
/// field through [`Conv`]. The struct literal in the generated `Default` must name every
/// field, so a field added to the struct without a line here does not compile.
macro_rules! section {
    (
        $S:ident => $vis:vis static $NAME:ident = $name:literal, $doc:literal {
            $( $f:ident : $d:expr $( => $($k:expr),+ )? ; )*
        }
        children: [ $($c:expr),* $(,)? ],
        rules: [ $($r:expr),* $(,)? ],
        derived: $x:expr $(,)?
    ) => {
        impl Default for $S {
            fn default() -> Self {
                $S { $( $f: $d, )* }
            }
        }

        $vis static $NAME: $crate::scenario::schema::Section<$S> =
            $crate::scenario::schema::Section {
                name: $name,
                doc: $doc,
                keys: &[ $( $( $(
                    {
                        // Within the declaration `Key` is this section's key type, so the
                        // closures in builder calls need no type annotations.
                        #[allow(dead_code)]
                        type Key = $crate::scenario::schema::Key<$S>;
                        let k: Key = $k;
                        k.auto(
                            |s: &$S| $crate::scenario::schema::Conv::to_val(&s.$f),
                            |s: &mut $S, v| s.$f = $crate::scenario::schema::Conv::from_val(v),
                        )
                    },
                )+ )? )* ],
                children: &[ $( &$c ),* ],
                rules: &[ $( $r ),* ],
                derived: $x,
            };
    };
}
pub(crate) use section;

impl fmt::Display for Ty {
    /// The type as the reference names it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ty::Size { .. } => f.write_str("size"),
            Ty::Duration { .. } => f.write_str("duration"),
            Ty::Bandwidth => f.write_str("bandwidth"),
            Ty::UInt { .. } | Ty::Int { .. } => f.write_str("integer"),
            Ty::Float { .. } => f.write_str("number"),
            Ty::Bool => f.write_str("bool"),
            Ty::Choice { names, .. } => {
                let q: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
                write!(f, "one of {}", q.join(", "))
            }
            Ty::Text { .. } => f.write_str("string"),
            Ty::Path { .. } => f.write_str("path"),
            Ty::UIntList { labels } => write!(f, "array of {} integers", labels.len()),
            Ty::MemoryKnob => f.write_str("bytes or \"max\""),
        }
    }
}

impl Ty {
    /// The range in words, as errors and the reference give it ("between 1 and 1024"); `None`
    /// when every value of the type is allowed.
    pub fn range(&self) -> Option<String> {
        use super::units::format_size;
        match *self {
            Ty::Size {
                min: 0,
                max: u64::MAX,
            } => None,
            Ty::Size { min, max: u64::MAX } => Some(format!("at least {}", format_size(min))),
            Ty::Size { min: 1, max } => Some(format!(
                "greater than zero and at most {}",
                format_size(max)
            )),
            Ty::Size { min, max } => Some(format!(
                "between {} and {}",
                format_size(min),
                format_size(max)
            )),
            Ty::Duration { min: 0 } => None,
            Ty::Duration { .. } | Ty::Bandwidth => Some("greater than zero".into()),
            Ty::UInt {
                min: 0,
                max: u64::MAX,
            } => None,
            Ty::UInt { min, max: u64::MAX } => Some(format!("at least {min}")),
            Ty::UInt { min, max } => Some(format!("between {min} and {max}")),
            Ty::Int { min, max } => Some(format!("between {min} and {max}")),
            Ty::Float {
                min,
                max,
                min_open,
                max_open,
            } => Some(match (min_open, max.is_infinite(), max_open) {
                (true, true, _) => format!("greater than {min}"),
                (false, true, _) => format!("at least {min}"),
                (false, false, false) => format!("between {min} and {max}"),
                (false, false, true) => format!("at least {min} and below {max}"),
                (true, false, false) => format!("greater than {min} and at most {max}"),
                (true, false, true) => format!("greater than {min} and below {max}"),
            }),
            Ty::Bool | Ty::Choice { .. } | Ty::Text { .. } | Ty::Path { .. } | Ty::MemoryKnob => {
                None
            }
            Ty::UIntList { .. } => Some("0 or more each".into()),
        }
    }

    /// Is `v` inside a float range? (Always finite: NaN and infinities are never meant.)
    pub fn float_ok(&self, v: f64) -> bool {
        let Ty::Float {
            min,
            max,
            min_open,
            max_open,
        } = *self
        else {
            return false;
        };
        v.is_finite()
            && if min_open { v > min } else { v >= min }
            && if max_open { v < max } else { v <= max }
    }

    /// A valid value as TOML text, for help lines when the key has no default to show.
    pub fn example(&self) -> String {
        use super::units::format_size;
        match *self {
            Ty::Size { min, .. } => format!("\"{}\"", format_size(min.max(1 << 30))),
            Ty::Duration { .. } => "\"100ms\"".into(),
            Ty::Bandwidth => "\"1GiB/s\"".into(),
            Ty::UInt { min, .. } => min.max(1).to_string(),
            Ty::Int { min, max } => 0.clamp(min, max).to_string(),
            Ty::Float { min, .. } => format!("{:?}", (min + 0.5).max(0.5)),
            Ty::Bool => "true".into(),
            Ty::Choice { names, .. } => format!("\"{}\"", names[0]),
            Ty::Text { .. } => "\"hog\"".into(),
            Ty::Path { .. } => "\"file\"".into(),
            Ty::UIntList { labels } => format!("[{}]", vec!["0"; labels.len()].join(", ")),
            Ty::MemoryKnob => "\"100M\"".into(),
        }
    }
}

// Two field types whose keys bring their own accessors; `section!` still type-checks the
// derived ones, so they need these impls, which the accessors never call.
conv!(usize, U, |x| *x as u64, |y| y as usize);
impl Conv for super::TraceTime {
    fn to_val(&self) -> Option<Val> {
        Some(Val::S(self.name().into()))
    }
    fn from_val(_: Val) -> Self {
        unreachable!("`time` is set by its own accessor: the unit depends on the format")
    }
}
