//! The Xen tables' declarations (`[xen]`, `[xen.blkback]`, `[xen.cost]`, `[[guest.vbd]]`,
//! `[guest.workload.blkio]`): complete, their defaults the declared ones, each value printed.

use super::schema::{check_complete, check_declared_defaults, other_value};
use crate::machine::xen::{BlkbackParams, XenCost};
use crate::scenario::sections::*;
use crate::scenario::*;

#[test]
fn every_xen_field_is_reachable_from_exactly_one_key() {
    check_complete(
        &XEN,
        &XenConfig::default(),
        &[("blkback", "blkback"), ("cost", "cost")],
        &[],
    );
    check_complete(&BLKBACK, &BlkbackParams::default(), &[], &[]);
    check_complete(&XEN_COST, &XenCost::default(), &[], &[]);
    check_complete(&VBD, &Vbd::default(), &[], &[]);
    // repeat > 1 needs a count (its check), so the base has one.
    let blkio = BlkioSpec {
        count: Some(10),
        ..BlkioSpec::default()
    };
    check_complete(&BLKIO, &blkio, &[], &[]);
}

#[test]
fn xen_defaults_match_the_declarations() {
    check_declared_defaults(&XEN);
    check_declared_defaults(&BLKBACK);
    check_declared_defaults(&XEN_COST);
    check_declared_defaults(&VBD);
    check_declared_defaults(&BLKIO);
}

#[test]
fn every_xen_key_parses_and_prints_its_value() {
    // Each [xen.blkback] and [xen.cost] key set to another value round-trips the printer.
    for (table, keys) in [
        (
            "xen.blkback",
            BLKBACK
                .keys
                .iter()
                .map(|k| (k.name, k.ty, k.value(&BlkbackParams::default())))
                .collect::<Vec<_>>(),
        ),
        (
            "xen.cost",
            XEN_COST
                .keys
                .iter()
                .map(|k| (k.name, k.ty, k.value(&XenCost::default())))
                .collect(),
        ),
    ] {
        for (name, ty, cur) in keys {
            let v = other_value(&ty, &cur);
            let text = crate::scenario::show::format_val(&ty, &v);
            let scn = format!(
                "[{table}]\n{name} = {text}\n[[workload]]\nname = \"w\"\nanon.size = \"1GiB\"\n"
            );
            let s = parse_str(&scn, "t.toml").unwrap_or_else(|e| panic!("{e}"));
            let shown = crate::scenario::to_toml(&s);
            assert!(
                shown.contains(&format!("\n{name} = {text} ")),
                "[{table}] {name} = {text} not shown:\n{shown}"
            );
        }
    }
}
