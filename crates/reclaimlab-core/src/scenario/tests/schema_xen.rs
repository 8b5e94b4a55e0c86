//! The Xen tables' declarations (`[xen]`, `[xen.blkback]`, `[xen.cost]`, `[[guest.vbd]]`,
//! `[guest.workload.blkio]`): complete, their defaults the declared ones, each value printed.

use super::schema::{check_complete, check_declared_defaults, fields, other_value};
use crate::machine::xen::{BlkbackParams, XenCost};
use crate::scenario::sections::*;
use crate::scenario::*;

fn xen_fields(s: &XenConfig) -> Vec<(&'static str, String)> {
    fields!(
        s,
        XenConfig {
            ram_bytes,
            blkback,
            cost
        }
    )
}
fn blkback_fields(s: &BlkbackParams) -> Vec<(&'static str, String)> {
    fields!(
        s,
        BlkbackParams {
            max_buffer_pages,
            buffer_squeeze_duration_ms,
            max_persistent_grants,
            persistent_grant_unused_seconds,
            max_queues,
            feature_persistent,
            log_stats,
            reqs,
            balloon_delay_ns
        }
    )
}
fn xen_cost_fields(s: &XenCost) -> Vec<(&'static str, String)> {
    fields!(
        s,
        XenCost {
            request_ns,
            map_ns,
            map_op_ns,
            unmap_ns,
            unmap_op_ns,
            flush_ns,
            flush_cpu_ns,
            flush_contention_ns,
            ipi_ns,
            lookup_ns,
            pool_alloc_ns,
            evtchn_ns,
            guest_request_ns,
            guest_grant_ns,
            guest_copy_ns,
            ramdisk_page_ns
        }
    )
}
fn vbd_fields(s: &Vbd) -> Vec<(&'static str, String)> {
    fields!(
        s,
        Vbd {
            name,
            backend,
            latency_ns,
            bandwidth,
            queues,
            persistent,
            max_indirect_segments
        }
    )
}
fn blkio_fields(s: &BlkioSpec) -> Vec<(&'static str, String)> {
    fields!(
        s,
        BlkioSpec {
            vbd,
            pattern,
            write,
            bs_bytes,
            count,
            iodepth,
            think_ns,
            repeat,
            pause_ns
        }
    )
}

#[test]
fn every_xen_field_is_reachable_from_exactly_one_key() {
    check_complete(
        &XEN,
        &XenConfig::default(),
        xen_fields,
        &[("blkback", "blkback"), ("cost", "cost")],
        &[],
    );
    check_complete(
        &BLKBACK,
        &BlkbackParams::default(),
        blkback_fields,
        &[],
        &[],
    );
    check_complete(&XEN_COST, &XenCost::default(), xen_cost_fields, &[], &[]);
    check_complete(&VBD, &Vbd::default(), vbd_fields, &[], &[]);
    // repeat > 1 needs a count (its check), so the base has one.
    let blkio = BlkioSpec {
        count: Some(10),
        ..BlkioSpec::default()
    };
    check_complete(&BLKIO, &blkio, blkio_fields, &[], &[]);
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
