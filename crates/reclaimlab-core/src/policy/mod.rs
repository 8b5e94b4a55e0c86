//! The policy registry: every debated mechanism is a switch, every historical or current
//! behaviour of it a variant in a file of its own beside its siblings.
//!
//! A switch names the trait its variants implement (declared next to the code that consults
//! it: the memory model's traits in `machine::policy`, kswapd's in `actors::kswapd`), lists its
//! variants in one table (one line each, in the switch's `mod.rs`) and says where its default
//! comes from: a fixed variant, or a preset that follows another switch (the historical kswapd
//! balancing rules bring their era's watermarks unless told otherwise). The scenario's
//! `[policy]` table has one key per switch, `reclaimlab policies` lists them, and an unknown
//! name is an error that lists the valid ones, all from the tables here.

pub mod blkback_backing;
pub mod blkback_grants;
pub mod blkback_pool;
pub mod hinting;
pub mod kcompactd;
pub mod kswapd_balance;
pub mod kswapd_loop;
pub mod lru;
pub mod memcg_controller;
pub mod shrinker;
pub mod watermark_boost;
pub mod watermark_check;
pub mod watermarks;
pub mod xfs_reclaim;

/// One variant of a switch: its scenario name, the kernel it models, what it does, and how
/// to make it.
pub struct Variant<T: ?Sized + 'static> {
    pub name: &'static str,
    /// Kernel version (or range) whose behaviour it models.
    pub kernel: &'static str,
    pub summary: &'static str,
    pub make: fn() -> Box<T>,
}

/// A default that follows the variant chosen for another switch.
pub struct Preset {
    /// The switch whose choice decides this default.
    pub follows: &'static str,
    pub rule: fn(&str) -> &'static str,
    /// The rule in words, for `--show-defaults` and the reference docs.
    pub doc: &'static str,
}

/// A policy switch and its variants.
pub struct Switch<T: ?Sized + 'static> {
    /// The `[policy]` key.
    pub name: &'static str,
    /// Specification section (core-mm.md or mechanisms.md).
    pub spec: &'static str,
    pub summary: &'static str,
    /// The default variant when no preset applies.
    pub default: &'static str,
    pub preset: Option<Preset>,
    pub variants: &'static [Variant<T>],
}

impl<T: ?Sized + 'static> Switch<T> {
    pub fn find(&self, name: &str) -> Option<&'static Variant<T>> {
        self.variants.iter().find(|v| v.name == name)
    }

    /// Build the named variant; the name must have been validated against this switch.
    pub fn make(&self, name: &str) -> Box<T> {
        match self.find(name) {
            Some(v) => (v.make)(),
            None => panic!(
                "policy {}: unknown variant {name:?} (not validated)",
                self.name
            ),
        }
    }
}

/// What `reclaimlab policies` and the scenario schema see of a variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VariantInfo {
    pub name: &'static str,
    pub kernel: &'static str,
    pub summary: &'static str,
}

/// A switch with its variant type erased, for listing and validation.
pub trait SwitchInfo: Sync {
    fn name(&self) -> &'static str;
    fn spec(&self) -> &'static str;
    fn summary(&self) -> &'static str;
    fn default(&self) -> &'static str;
    fn preset(&self) -> Option<&Preset>;
    fn variants(&self) -> Vec<VariantInfo>;
    /// The default given the other switches' choices (looked up by name).
    fn default_for(&self, chosen: &dyn Fn(&str) -> Option<&'static str>) -> &'static str {
        match self.preset() {
            Some(p) => chosen(p.follows).map_or(self.default(), p.rule),
            None => self.default(),
        }
    }
}

impl<T: ?Sized + 'static> SwitchInfo for Switch<T> {
    fn name(&self) -> &'static str {
        self.name
    }
    fn spec(&self) -> &'static str {
        self.spec
    }
    fn summary(&self) -> &'static str {
        self.summary
    }
    fn default(&self) -> &'static str {
        self.default
    }
    fn preset(&self) -> Option<&Preset> {
        self.preset.as_ref()
    }
    fn variants(&self) -> Vec<VariantInfo> {
        self.variants
            .iter()
            .map(|v| VariantInfo {
                name: v.name,
                kernel: v.kernel,
                summary: v.summary,
            })
            .collect()
    }
}

/// Every switch, in the order the scenario's `[policy]` table and `reclaimlab policies` list
/// them. A switch whose default is a preset comes after the switch it follows.
pub fn switches() -> [&'static dyn SwitchInfo; 14] {
    [
        &kswapd_balance::SWITCH,
        &watermarks::SWITCH,
        &watermark_check::SWITCH,
        &watermark_boost::SWITCH,
        &kcompactd::SWITCH,
        &kswapd_loop::SWITCH,
        &shrinker::SWITCH,
        &xfs_reclaim::SWITCH,
        &lru::SWITCH,
        &hinting::SWITCH,
        &blkback_pool::SWITCH,
        &blkback_backing::SWITCH,
        &blkback_grants::SWITCH,
        &memcg_controller::SWITCH,
    ]
}

/// The switch named `name`.
pub fn switch(name: &str) -> Option<&'static dyn SwitchInfo> {
    switches().into_iter().find(|s| s.name() == name)
}

/// The preset of the switches whose historical variant came with the historical kswapd rules:
/// the 2.6.3x rules bring that era's behaviour, 6.1's brings 6.1's.
pub const ERA: Preset = Preset {
    follows: "kswapd_balance",
    rule: era_of,
    doc: "\"v6.1\" with kswapd_balance = \"v6.1\", else \"v2.6.36\" (the rule's era)",
};

/// The kswapd_balance rule of the 2.6.3x kernels brings that era's other behaviours.
pub(crate) fn era_of(kswapd_balance: &str) -> &'static str {
    if kswapd_balance == "v6.1" {
        "v6.1"
    } else {
        "v2.6.36"
    }
}

/// The variant chosen for each switch, in [`switches`] order, every default resolved. Two
/// choices are equal when they pick the same variants, however they were arrived at.
#[derive(Debug, Clone, Eq)]
pub struct Choices {
    /// (switch, variant, whether the scenario named it) per switch.
    pub entries: Vec<(&'static str, &'static str, bool)>,
}

impl Choices {
    /// Resolve defaults and presets around the explicit choices (already validated names).
    pub fn resolve(explicit: &[(&'static str, &'static str)]) -> Choices {
        let mut entries: Vec<(&'static str, &'static str, bool)> = Vec::new();
        for s in switches() {
            let named = explicit
                .iter()
                .find(|(k, _)| *k == s.name())
                .map(|&(_, v)| v);
            let v = named.unwrap_or_else(|| {
                s.default_for(&|other| entries.iter().find(|(k, _, _)| *k == other).map(|e| e.1))
            });
            entries.push((s.name(), v, named.is_some()));
        }
        Choices { entries }
    }

    /// The variant of switch `name` (every switch has one once resolved).
    pub fn get(&self, name: &str) -> &'static str {
        self.entries
            .iter()
            .find(|e| e.0 == name)
            .map(|e| e.1)
            .unwrap_or_else(|| panic!("no policy switch {name:?}"))
    }
}

impl PartialEq for Choices {
    fn eq(&self, other: &Self) -> bool {
        self.entries.len() == other.entries.len()
            && self
                .entries
                .iter()
                .zip(&other.entries)
                .all(|(a, b)| a.0 == b.0 && a.1 == b.1)
    }
}

impl Default for Choices {
    fn default() -> Self {
        Choices::resolve(&[])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_follow_kswapd_balance_and_explicit_choices_win() {
        let c = Choices::default();
        for s in switches() {
            // The shrinker switches use the spec's switch table names for 6.1 (mechanisms §G).
            let want = match s.name() {
                "shrinker" => "v61",
                "xfs_reclaim" => "X3",
                // 6.1 without a reporting device (mechanisms §G).
                "hinting" => "D1",
                // Xen blkback in 6.1 with its default config (mechanisms §G).
                "blkback_pool" => "B3",
                "blkback_backing" => "unpopulated",
                "blkback_grants" => "v61",
                // Debian's 6.1 is built without CONFIG_LRU_GEN.
                "lru" => "classic",
                // No userspace agent unless the scenario runs one.
                "memcg_controller" => "none",
                _ => "v6.1",
            };
            assert_eq!(c.get(s.name()), want, "{}", s.name());
        }
        let old = Choices::resolve(&[("kswapd_balance", "v3.0")]);
        assert_eq!(old.get("watermarks"), "v2.6.36");
        assert_eq!(old.get("watermark_check"), "v2.6.36");
        assert_eq!(old.get("kcompactd"), "none");
        assert_eq!(old.get("kswapd_loop"), "v2.6.36");
        let mixed = Choices::resolve(&[("kswapd_balance", "v3.0"), ("watermarks", "v6.1")]);
        assert_eq!(mixed.get("watermarks"), "v6.1");
        assert!(mixed
            .entries
            .iter()
            .any(|e| e == &("watermarks", "v6.1", true)));
        assert_eq!(mixed.get("watermark_check"), "v2.6.36");
    }

    #[test]
    fn every_variant_is_listed_once_and_builds() {
        for s in switches() {
            let names: Vec<_> = s.variants().iter().map(|v| v.name).collect();
            let mut dedup = names.clone();
            dedup.sort();
            dedup.dedup();
            assert_eq!(names.len(), dedup.len(), "{}", s.name());
            assert!(names.contains(&s.default()), "{}", s.name());
            for v in s.variants() {
                assert!(!v.kernel.is_empty() && !v.summary.is_empty());
            }
        }
        for v in kswapd_balance::SWITCH.variants {
            let _ = (v.make)();
        }
    }
}
