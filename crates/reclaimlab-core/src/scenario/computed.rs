//! Values the machine derives from the scenario when it boots, for the printer: the default
//! `vm.min_free_kbytes` and each zone's watermarks and protection (lowmem_reserve). They are
//! computed exactly as `mm::node` computes them, by the chosen `[policy] watermarks` variant
//! on the zones of `[host]` (or of its zoneinfo file).

use super::schema::{Computed, Val};
use super::Scenario;
use crate::machine::layout::{parse_zoneinfo, ZoneLayout};
use crate::machine::{MAX_NR_ZONES, ZONE_NAMES};

/// The range the parser accepts for `min_free_kbytes`; a computed value outside it could not
/// be printed as a value that parses back.
pub(super) const MIN_FREE_KBYTES_RANGE: (u64, u64) = (128, 262_144);

/// The zones of the scenario's machine; `None` when they cannot be built (a zoneinfo file that
/// is gone, a host the layout rejects): the printer then shows the rule instead of a value.
fn layout(s: &Scenario) -> Option<ZoneLayout> {
    zones(s).map(|(layout, _)| layout)
}

/// The zones and, from a captured zoneinfo, the protection its kernel printed.
fn zones(s: &Scenario) -> Option<(ZoneLayout, Option<[[u64; MAX_NR_ZONES]; MAX_NR_ZONES]>)> {
    match &s.host.zoneinfo {
        Some(path) => {
            let text = std::fs::read_to_string(path).ok()?;
            parse_zoneinfo(&text)
                .ok()
                .map(|z| (z.layout, Some(z.protection())))
        }
        None => ZoneLayout::for_host(&s.host.ram_layout())
            .ok()
            .map(|l| (l, None)),
    }
}

fn watermarks_variant(s: &Scenario) -> &'static str {
    s.policy.choices.get("watermarks")
}

/// The default `min_free_kbytes` of the scenario's machine and how it was computed.
pub(super) fn min_free_kbytes(s: &Scenario) -> Option<Computed> {
    let variant = watermarks_variant(s);
    let setup = crate::policy::watermarks::SWITCH.make(variant);
    let v = setup.min_free_kbytes_default(&layout(s)?.managed(), s.host.thp);
    let (lo, hi) = MIN_FREE_KBYTES_RANGE;
    (lo..=hi).contains(&v).then(|| Computed {
        value: Val::U(v),
        how: format!(
            "default computed by the watermarks policy: {}",
            setup.describe()
        ),
    })
}

/// Comment lines for `[sysctl]`: each populated zone's managed pages, min/low/high watermarks
/// and protection, as the machine will boot with them.
pub(super) fn zone_lines(s: &Scenario) -> Vec<String> {
    let Some((layout, captured)) = zones(s) else {
        return Vec::new();
    };
    let variant = watermarks_variant(s);
    let setup = crate::policy::watermarks::SWITCH.make(variant);
    let managed = layout.managed();
    let thp = s.host.thp;
    let min_free = s
        .sysctl
        .min_free_kbytes
        .unwrap_or_else(|| setup.min_free_kbytes_default(&managed, thp));
    let wm = setup.setup(
        &managed,
        &layout.present(),
        min_free,
        s.sysctl.watermark_scale_factor,
    );
    let reserve = crate::machine::watermark::boot_lowmem_reserve(
        &managed,
        &s.sysctl.lowmem_reserve_ratio,
        captured.as_ref(),
    );
    let mut out = vec![
        String::new(),
        format!(
            "Derived, not settable (pages): watermarks by watermarks = \"{variant}\" from \
             min_free_kbytes = {min_free} and watermark_scale_factor = {};",
            s.sysctl.watermark_scale_factor
        ),
        "protection (lowmem_reserve) from lowmem_reserve_ratio (or as the captured zoneinfo printed \
         it), one entry per highest usable zone."
            .to_string(),
        format!(
            "  {:<7} {:>10} {:>8} {:>8} {:>8}  protection",
            "zone", "managed", "min", "low", "high"
        ),
    ];
    for z in (0..MAX_NR_ZONES).filter(|&z| layout.is_populated(z)) {
        let prot: Vec<String> = reserve[z].iter().map(u64::to_string).collect();
        out.push(format!(
            "  {:<7} {:>10} {:>8} {:>8} {:>8}  ({})",
            ZONE_NAMES[z],
            managed[z],
            wm[z].min,
            wm[z].low,
            wm[z].high,
            prot.join(", ")
        ));
    }
    out
}
