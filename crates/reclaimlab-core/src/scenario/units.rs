//! Sizes, durations and bandwidths as kernel users write them, and exact formatters back.
//!
//! Parsing rules (all exact: no floating point, so "1.5GiB" is exactly 1610612736 bytes):
//!
//! - **Sizes**: a non-negative number and an optional unit. A bare integer is bytes (as in
//!   `/proc` and sysctls). Binary units: `K`/`KiB`, `M`/`MiB`, `G`/`GiB`, `T`/`TiB`, `P`/`PiB`,
//!   `E`/`EiB` (the single letters follow the kernel's `memparse`, which is binary). Decimal
//!   units: `KB`, `MB`, `GB`, `TB`, `PB` are powers of 1000, as disk vendors and `dd` use them.
//!   `B` is bytes. Units are case-insensitive, except that formatters always emit the IEC form.
//!   A fraction is allowed ("1.5GiB") as long as the result is a whole number of bytes.
//! - **Durations**: a number and a unit, one of `ns`, `us` (also `µs`), `ms`, `s`, `min`, `h`.
//!   A bare number is rejected (is "100" nanoseconds or seconds?), except `0`, which needs no
//!   unit. `m` is rejected as ambiguous (minutes or milli?).
//! - **Bandwidths**: a size followed by `/s`, e.g. "1GiB/s", "500MB/s".
//!
//! The formatters pick the largest unit that represents the value exactly, so
//! `parse(format(x)) == x` for every `x`.

use super::{KIB, NS_PER_MS, NS_PER_SEC, NS_PER_US};

/// Binary size units, largest first; used by the formatter (which only emits these).
const BINARY_UNITS: &[(&str, u64)] = &[
    ("EiB", KIB * KIB * KIB * KIB * KIB * KIB),
    ("PiB", KIB * KIB * KIB * KIB * KIB),
    ("TiB", KIB * KIB * KIB * KIB),
    ("GiB", KIB * KIB * KIB),
    ("MiB", KIB * KIB),
    ("KiB", KIB),
];

/// Duration units, largest first; used by the formatter.
const DURATION_UNITS: &[(&str, u64)] = &[
    ("h", 3600 * NS_PER_SEC),
    ("min", 60 * NS_PER_SEC),
    ("s", NS_PER_SEC),
    ("ms", NS_PER_MS),
    ("us", NS_PER_US),
    ("ns", 1),
];

const SIZE_UNITS_HELP: &str = "use B, KiB, MiB, GiB, TiB, PiB (or K, M, G, T, P, also binary); \
                               KB, MB, GB, TB, PB are powers of 1000";
const DURATION_UNITS_HELP: &str = "use ns, us, ms, s, min or h";

/// Multiplier for a size unit (case-insensitive); `None` if unknown.
fn size_unit(unit: &str) -> Option<u64> {
    let u = unit.to_ascii_lowercase();
    let m = match u.as_str() {
        "" | "b" => 1,
        "k" | "ki" | "kib" => KIB,
        "m" | "mi" | "mib" => KIB.pow(2),
        "g" | "gi" | "gib" => KIB.pow(3),
        "t" | "ti" | "tib" => KIB.pow(4),
        "p" | "pi" | "pib" => KIB.pow(5),
        "e" | "ei" | "eib" => KIB.pow(6),
        "kb" => 1000,
        "mb" => 1000u64.pow(2),
        "gb" => 1000u64.pow(3),
        "tb" => 1000u64.pow(4),
        "pb" => 1000u64.pow(5),
        _ => return None,
    };
    Some(m)
}

/// Multiplier (in ns) for a duration unit; `Err` carries the reason when it is not usable.
fn duration_unit(unit: &str) -> Result<u64, String> {
    // µ is not ASCII: match the two common spellings (micro sign, Greek mu) before lowering.
    if unit == "µs" || unit == "μs" {
        return Ok(NS_PER_US);
    }
    match unit.to_ascii_lowercase().as_str() {
        "ns" => Ok(1),
        "us" => Ok(NS_PER_US),
        "ms" => Ok(NS_PER_MS),
        "s" => Ok(NS_PER_SEC),
        "min" => Ok(60 * NS_PER_SEC),
        "h" => Ok(3600 * NS_PER_SEC),
        "m" => Err(
            "ambiguous unit \"m\": write \"min\" for minutes or \"ms\" for milliseconds"
                .to_string(),
        ),
        _ => Err(format!(
            "unknown duration unit \"{unit}\"; {DURATION_UNITS_HELP}"
        )),
    }
}

/// A number as written: integer digits and optional fraction digits, no sign.
struct Decimal<'a> {
    int: &'a str,
    frac: &'a str,
}

/// Split `s` (already trimmed) into its leading decimal number and the unit after it.
/// `what` names the kind of quantity for messages ("size", "duration").
fn split_number<'a>(
    s: &'a str,
    what: &str,
    example: &str,
) -> Result<(Decimal<'a>, &'a str), String> {
    if s.is_empty() {
        return Err(format!(
            "empty {what}; expected a {what} like \"{example}\""
        ));
    }
    if s.starts_with('-') {
        return Err(format!("{what}s cannot be negative (found \"{s}\")"));
    }
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(end);
    if num.is_empty() || num == "." {
        return Err(format!(
            "\"{s}\" is not a {what}: expected a number followed by a unit, like \"{example}\""
        ));
    }
    let (int, frac) = match num.split_once('.') {
        Some((i, f)) => (i, f),
        None => (num, ""),
    };
    if frac.contains('.') {
        return Err(format!(
            "\"{s}\" is not a {what}: the number has two decimal points"
        ));
    }
    // "4 GiB" is as clear as "4GiB"; allow the space.
    Ok((Decimal { int, frac }, unit.trim_start()))
}

/// `number * mult`, exactly. Errors if the result is not a whole number of base units (bytes,
/// nanoseconds) or does not fit in 64 bits.
fn scale(d: &Decimal, mult: u64, original: &str, base: &str) -> Result<u64, String> {
    let too_large = || {
        format!(
            "\"{original}\" is too large (the limit is {} {base})",
            u64::MAX
        )
    };
    let int = d.int.trim_start_matches('0');
    let frac = d.frac.trim_end_matches('0');
    // Bounds keep the u128 arithmetic below from overflowing: 10^20 * 2^60 < 2^128, and
    // 10^18 * 2^60 < 2^128.
    if int.len() > 20 {
        return Err(too_large());
    }
    if frac.len() > 18 {
        return Err(format!(
            "\"{original}\" has too many decimal places to be a whole number of {base}"
        ));
    }
    let int_v: u128 = if int.is_empty() {
        0
    } else {
        int.parse().map_err(|_| too_large())?
    };
    let frac_v: u128 = if frac.is_empty() {
        0
    } else {
        frac.parse().map_err(|_| too_large())?
    };
    let denom = 10u128.pow(frac.len() as u32);
    let frac_scaled = frac_v * mult as u128;
    if !frac_scaled.is_multiple_of(denom) {
        return Err(format!("\"{original}\" is not a whole number of {base}"));
    }
    let total = int_v * mult as u128 + frac_scaled / denom;
    u64::try_from(total).map_err(|_| too_large())
}

/// Parse a size: "4GiB", "512M", "4096" (bytes), "1.5GiB", "4GB" (decimal), "0".
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, unit) = split_number(t, "size", "4GiB")?;
    let mult = size_unit(unit)
        .ok_or_else(|| format!("unknown size unit \"{unit}\" in \"{t}\"; {SIZE_UNITS_HELP}"))?;
    scale(&num, mult, t, "bytes")
}

/// Parse a duration into nanoseconds: "100ms", "10us", "2.5s", "1min", "1h", "0".
pub fn parse_duration_ns(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, unit) = split_number(t, "duration", "100ms")?;
    if unit.is_empty() {
        // Zero is zero in any unit; anything else is ambiguous without one.
        if num.int.bytes().all(|b| b == b'0') && num.frac.bytes().all(|b| b == b'0') {
            return Ok(0);
        }
        return Err(format!(
            "\"{t}\" has no unit; add one, e.g. \"{t}ms\" ({DURATION_UNITS_HELP})"
        ));
    }
    let mult = duration_unit(unit)?;
    scale(&num, mult, t, "nanoseconds")
}

/// Parse a bandwidth into bytes per second: "1GiB/s", "500MiB/s", "200MB/s".
pub fn parse_bandwidth(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let Some(size) = t.strip_suffix("/s") else {
        return Err(format!(
            "\"{t}\" is not a bandwidth: expected a size per second, like \"1GiB/s\""
        ));
    };
    let size = size.trim_end();
    if size.is_empty() {
        return Err(format!("\"{t}\" is missing the amount, e.g. \"1GiB/s\""));
    }
    // Re-word the size parser's messages so they talk about bandwidth.
    parse_size(size).map_err(|e| {
        if e.contains("negative") {
            format!("bandwidths cannot be negative (found \"{t}\")")
        } else {
            format!("bad bandwidth \"{t}\": {e}")
        }
    })
}

/// Largest unit in `units` that divides `v` exactly.
fn exact_unit(v: u64, units: &[(&'static str, u64)]) -> Option<(u64, &'static str)> {
    units
        .iter()
        .find(|(_, m)| v.is_multiple_of(*m))
        .map(|(name, m)| (v / m, *name))
}

/// Exact size: "4GiB", "1536MiB", "64KiB"; plain bytes ("12345") when not a whole KiB; "0".
pub fn format_size(bytes: u64) -> String {
    if bytes == 0 {
        return "0".to_string();
    }
    match exact_unit(bytes, BINARY_UNITS) {
        Some((n, unit)) => format!("{n}{unit}"),
        None => bytes.to_string(),
    }
}

/// Exact duration: "100ms", "1s", "1500us", "90s", "0s".
pub fn format_duration(ns: u64) -> String {
    if ns == 0 {
        return "0s".to_string();
    }
    // "ns" divides everything, so a unit is always found.
    let (n, unit) = exact_unit(ns, DURATION_UNITS).unwrap_or((ns, "ns"));
    format!("{n}{unit}")
}

/// Exact bandwidth: "1GiB/s", "500MiB/s", "12345B/s".
pub fn format_bandwidth(bytes_per_sec: u64) -> String {
    match exact_unit(bytes_per_sec, BINARY_UNITS) {
        Some((n, unit)) if bytes_per_sec != 0 => format!("{n}{unit}/s"),
        _ => format!("{bytes_per_sec}B/s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{GIB, MIB};

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4GiB"), Ok(4 * GIB));
        assert_eq!(parse_size("512MiB"), Ok(512 * MIB));
        assert_eq!(parse_size("64KiB"), Ok(64 * KIB));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("1.5GiB"), Ok(1536 * MIB));
        assert_eq!(parse_size("4G"), Ok(4 * GIB));
        assert_eq!(parse_size("512M"), Ok(512 * MIB));
        assert_eq!(parse_size("4K"), Ok(4 * KIB));
        assert_eq!(parse_size("4k"), Ok(4 * KIB));
        assert_eq!(parse_size("4GB"), Ok(4_000_000_000));
        assert_eq!(parse_size("512MB"), Ok(512_000_000));
        assert_eq!(parse_size("0"), Ok(0));
        assert_eq!(parse_size("0GiB"), Ok(0));
        assert_eq!(parse_size(" 4 GiB "), Ok(4 * GIB));
        assert_eq!(parse_size("100B"), Ok(100));
        assert_eq!(parse_size("2TiB"), Ok(2048 * GIB));
        assert_eq!(parse_size(".5KiB"), Ok(512));
        assert!(parse_size("16EiB").unwrap_err().contains("too large"));
        assert_eq!(parse_size("15EiB"), Ok(15 << 60));
        assert_eq!(parse_size("18446744073709551615"), Ok(u64::MAX));
        assert!(parse_size("18446744073709551616")
            .unwrap_err()
            .contains("too large"));
    }

    #[test]
    fn size_errors() {
        assert!(parse_size("-4GiB")
            .unwrap_err()
            .contains("sizes cannot be negative"));
        let e = parse_size("4XB").unwrap_err();
        assert!(e.contains("unknown size unit \"XB\""), "{e}");
        assert!(parse_size("lots").unwrap_err().contains("is not a size"));
        assert!(parse_size("").unwrap_err().contains("empty size"));
        assert!(parse_size("GiB").unwrap_err().contains("is not a size"));
        assert!(parse_size("1.2.3K")
            .unwrap_err()
            .contains("two decimal points"));
        // 0.1 KiB = 102.4 bytes.
        assert!(parse_size("0.1KiB")
            .unwrap_err()
            .contains("whole number of bytes"));
        assert!(parse_size("1.5")
            .unwrap_err()
            .contains("whole number of bytes"));
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration_ns("100ms"), Ok(100 * NS_PER_MS));
        assert_eq!(parse_duration_ns("10us"), Ok(10 * NS_PER_US));
        assert_eq!(parse_duration_ns("10µs"), Ok(10 * NS_PER_US));
        assert_eq!(parse_duration_ns("1s"), Ok(NS_PER_SEC));
        assert_eq!(parse_duration_ns("2.5s"), Ok(2_500_000_000));
        assert_eq!(parse_duration_ns("500ns"), Ok(500));
        assert_eq!(parse_duration_ns("1min"), Ok(60 * NS_PER_SEC));
        assert_eq!(parse_duration_ns("1h"), Ok(3600 * NS_PER_SEC));
        assert_eq!(parse_duration_ns("0"), Ok(0));
        assert_eq!(parse_duration_ns("0.0"), Ok(0));
        assert_eq!(parse_duration_ns("1.5us"), Ok(1500));
    }

    #[test]
    fn duration_errors() {
        assert!(parse_duration_ns("100").unwrap_err().contains("add one"));
        assert!(parse_duration_ns("1m").unwrap_err().contains("ambiguous"));
        assert!(parse_duration_ns("1fortnight")
            .unwrap_err()
            .contains("unknown duration unit"));
        assert!(parse_duration_ns("-1s")
            .unwrap_err()
            .contains("durations cannot be negative"));
        assert!(parse_duration_ns("1.5ns")
            .unwrap_err()
            .contains("whole number of nanoseconds"));
        assert!(parse_duration_ns("999999999h")
            .unwrap_err()
            .contains("too large"));
    }

    #[test]
    fn bandwidths() {
        assert_eq!(parse_bandwidth("1GiB/s"), Ok(GIB));
        assert_eq!(parse_bandwidth("500MiB/s"), Ok(500 * MIB));
        assert_eq!(parse_bandwidth("200MB/s"), Ok(200_000_000));
        assert_eq!(parse_bandwidth("12345B/s"), Ok(12345));
        assert_eq!(parse_bandwidth("12345/s"), Ok(12345));
        assert!(parse_bandwidth("1GiB").unwrap_err().contains("per second"));
        assert!(parse_bandwidth("/s")
            .unwrap_err()
            .contains("missing the amount"));
        assert!(parse_bandwidth("-1GiB/s")
            .unwrap_err()
            .contains("cannot be negative"));
        assert!(parse_bandwidth("1XB/s")
            .unwrap_err()
            .contains("unknown size unit"));
    }

    #[test]
    fn formatting() {
        assert_eq!(format_size(4 * GIB), "4GiB");
        assert_eq!(format_size(1536 * MIB), "1536MiB");
        assert_eq!(format_size(12345), "12345");
        assert_eq!(format_size(0), "0");
        assert_eq!(format_size(4096), "4KiB");
        assert_eq!(format_duration(100 * NS_PER_MS), "100ms");
        assert_eq!(format_duration(NS_PER_SEC), "1s");
        assert_eq!(format_duration(1500 * NS_PER_US), "1500us");
        assert_eq!(format_duration(90 * NS_PER_SEC), "90s");
        assert_eq!(format_duration(3600 * NS_PER_SEC), "1h");
        assert_eq!(format_duration(0), "0s");
        assert_eq!(format_duration(7), "7ns");
        assert_eq!(format_bandwidth(GIB), "1GiB/s");
        assert_eq!(format_bandwidth(12345), "12345B/s");
        assert_eq!(format_bandwidth(0), "0B/s");
    }

    #[test]
    fn round_trips() {
        // A spread of values: powers of two, odd numbers, unit boundaries and the extremes.
        let mut vals = vec![
            0,
            1,
            7,
            999,
            1000,
            1023,
            1024,
            4096,
            1 << 40,
            u64::MAX,
            u64::MAX - 1,
        ];
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for i in 0..2000u64 {
            // xorshift: deterministic, no dependency.
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            vals.push(x >> (i % 64));
            vals.push((x % 4096) << (i % 50));
            vals.push((x % 1000) * 1_000u64.pow((i % 6) as u32));
        }
        for v in vals {
            assert_eq!(parse_size(&format_size(v)), Ok(v), "size {v}");
            assert_eq!(
                parse_duration_ns(&format_duration(v)),
                Ok(v),
                "duration {v}"
            );
            assert_eq!(
                parse_bandwidth(&format_bandwidth(v)),
                Ok(v),
                "bandwidth {v}"
            );
        }
    }
}
