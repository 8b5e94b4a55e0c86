//! The files of `/sys/kernel/mm/lru_gen/` (`mm/vmscan.c`'s sysfs interface, 6.1;
//! docs/design/mglru.md §4.8, §6.5): `enabled`, the capability word, and `min_ttl_ms`.
//!
//! `enabled` takes `y`/`n` (only the first character is looked at, as the kernel does) or an
//! unsigned number in C notation (decimal, `0x` hex, leading-zero octal); bits beyond the
//! three capabilities are ignored, and reading it shows the bits that are both on and
//! supported. `min_ttl_ms` is kept in jiffies, rounded up, and read back in milliseconds, so a
//! value that is not a multiple of a jiffy (4 ms at HZ = 250) reads back larger. The scenario
//! keys of issue 35 (`[sysctl] lru_gen_enabled`, `lru_gen_min_ttl_ms`) are meant to go
//! through these functions, so that a bad value is refused with the kernel's rule.

use crate::machine::HZ;

/// The main switch.
pub const LRU_GEN_CORE: u32 = 1 << 0;
/// Aging walks the page tables (needs hardware-set accessed bits).
pub const LRU_GEN_MM_WALK: u32 = 1 << 1;
/// The walk skips page tables whose non-leaf PMD accessed bit is clear.
pub const LRU_GEN_NONLEAF_YOUNG: u32 = 1 << 2;
pub const NR_LRU_GEN_CAPS: u32 = 3;
/// Every capability (`echo y`).
pub const LRU_GEN_ALL_CAPS: u32 = (1 << NR_LRU_GEN_CAPS) - 1;

/// The capabilities an x86-64 machine supports: the walk always (the MMU sets accessed
/// bits); the non-leaf PMD bit except in a Xen PV guest.
#[inline]
pub fn supported_caps(xen_pv: bool) -> u32 {
    if xen_pv {
        LRU_GEN_CORE | LRU_GEN_MM_WALK
    } else {
        LRU_GEN_ALL_CAPS
    }
}

/// `kstrtouint(s, 0)`: an unsigned 32-bit number in C notation, with at most one trailing
/// newline.
pub fn kstrtouint(s: &str) -> Option<u32> {
    let s = s.strip_suffix('\n').unwrap_or(s);
    let s = s.strip_prefix('+').unwrap_or(s);
    let b = s.as_bytes();
    let (digits, radix) =
        if b.len() > 2 && b[0] == b'0' && (b[1] | 0x20) == b'x' && b[2].is_ascii_hexdigit() {
            (&s[2..], 16)
        } else if b.first() == Some(&b'0') {
            (s, 8)
        } else {
            (s, 10)
        };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    u32::from_str_radix(digits, radix).ok()
}

/// `store_enabled`: the capability bits a write to `enabled` sets, or why it is refused.
pub fn parse_enabled(text: &str) -> Result<u32, String> {
    match text.bytes().next().map(|c| c.to_ascii_lowercase()) {
        Some(b'n') => Ok(0),
        Some(b'y') => Ok(LRU_GEN_ALL_CAPS),
        _ => kstrtouint(text)
            .map(|caps| caps & LRU_GEN_ALL_CAPS)
            .ok_or_else(|| {
                format!(
                    "lru_gen enabled = {text:?} is not y, n or an unsigned number; write y, n \
                     or a capability mask such as 0x0007 (the kernel refuses it with EINVAL)"
                )
            }),
    }
}

/// `show_enabled`: the capabilities that are on and supported, as `0x%04x`.
pub fn show_enabled(caps: u32, xen_pv: bool) -> String {
    format!("0x{:04x}", caps & supported_caps(xen_pv))
}

/// `msecs_to_jiffies`, rounding up.
#[inline]
pub fn msecs_to_jiffies(ms: u64) -> u64 {
    (ms * HZ).div_ceil(1000)
}

/// `jiffies_to_msecs`.
#[inline]
pub fn jiffies_to_msecs(j: u64) -> u64 {
    j * 1000 / HZ
}

/// `store_min_ttl`: `min_ttl_ms` as written, in jiffies.
pub fn parse_min_ttl_ms(text: &str) -> Result<u64, String> {
    kstrtouint(text)
        .map(|ms| msecs_to_jiffies(ms as u64))
        .ok_or_else(|| {
            format!(
                "lru_gen min_ttl_ms = {text:?} is not an unsigned number of milliseconds; \
                 write e.g. 1000 (0 turns the thrashing protection off)"
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// §8.2 test 16: `enabled`.
    #[test]
    fn enabled_parsing() {
        let show = |t: &str| show_enabled(parse_enabled(t).unwrap(), false);
        assert_eq!(show("y"), "0x0007");
        assert_eq!(show("Y\n"), "0x0007");
        assert_eq!(show("yes"), "0x0007");
        assert_eq!(show("n"), "0x0000");
        assert_eq!(show("N"), "0x0000");
        assert_eq!(show("5"), "0x0005");
        assert_eq!(show("0x2"), "0x0002");
        assert_eq!(show("0X7\n"), "0x0007");
        assert_eq!(show("07"), "0x0007");
        assert_eq!(show("010"), "0x0000", "octal 8: no capability bit");
        assert_eq!(show("15"), "0x0007", "bits beyond the three are ignored");
        assert_eq!(show("0"), "0x0000");
        assert_eq!(show_enabled(parse_enabled("y").unwrap(), true), "0x0003");
        for bad in ["x", "", "0x", "08", "-1", "1 ", "4294967296"] {
            let e = parse_enabled(bad).unwrap_err();
            assert!(e.contains(&format!("{bad:?}")), "{e}");
        }
    }

    /// A7: the jiffy round trip of `min_ttl_ms` at HZ = 250.
    #[test]
    fn min_ttl_round_trip_a7() {
        assert_eq!(HZ, 250);
        for (ms, j, back) in [(1000, 250, 1000), (1001, 251, 1004), (1, 1, 4), (0, 0, 0)] {
            assert_eq!(msecs_to_jiffies(ms), j);
            assert_eq!(jiffies_to_msecs(j), back);
            assert_eq!(parse_min_ttl_ms(&format!("{ms}\n")), Ok(j));
        }
        assert!(parse_min_ttl_ms("1s").unwrap_err().contains("\"1s\""));
    }
}
