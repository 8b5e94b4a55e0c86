//! The defaults, pinned value by value.

use crate::scenario::*;

/// Every default, pinned: results are pinned by digests elsewhere, so a default must never
/// change by accident. (These are the values of the hand-written `Default` impls the
/// declarations replaced.)
#[test]
fn defaults_are_the_pinned_values() {
    let s = Scenario::default();
    assert_eq!(s.name, "scenario");
    assert_eq!(
        s.sim,
        SimConfig {
            seed: 1,
            duration_ns: None,
            sample_interval_ns: 100 * NS_PER_MS,
            max_duration_ns: 3600 * NS_PER_SEC
        }
    );
    assert_eq!(
        s.host,
        HostConfig {
            ram_bytes: 4 * GIB,
            cpus: 2,
            cpu_contention: false,
            thp: true,
            thp_defrag: ThpDefrag::Madvise,
            machine: MachineType::Q35,
            lowmem_bytes: None,
            zoneinfo: None,
            fragmented_zone: None,
            fragment_stride: DEFAULT_FRAGMENT_STRIDE,
            kernel_used_bytes: 0,
            pcp_lists: false,
            page_tables: false,
            vmstat_drift: false,
        }
    );
    assert_eq!(DEFAULT_FRAGMENT_STRIDE, 8);
    assert_eq!(
        s.sysctl,
        Sysctl {
            min_free_kbytes: None,
            watermark_scale_factor: 10,
            watermark_boost_factor: 15_000,
            compaction_proactiveness: 20,
            lowmem_reserve_ratio: [256, 256, 32, 0],
            swappiness: 60,
            page_cluster: 3,
            vfs_cache_pressure: 100,
        }
    );
    assert_eq!(
        s.swap,
        SwapDevice {
            size_bytes: 0,
            read_latency_ns: 80 * NS_PER_US,
            write_latency_ns: 40 * NS_PER_US,
            bandwidth_bytes_per_sec: GIB,
            latency_jitter: 0.1,
            nr_requests: 256,
            max_request_bytes: 0,
            rotational: false,
        }
    );
    assert_eq!(
        s.disk,
        DiskDevice {
            read_latency_ns: 100 * NS_PER_US,
            write_latency_ns: 50 * NS_PER_US,
            bandwidth_bytes_per_sec: GIB,
            latency_jitter: 0.1,
            nr_requests: 256,
            readahead_pages: 32,
        }
    );
    assert_eq!(
        s.writeback,
        WritebackConfig {
            dirty_background_ratio: 10,
            dirty_ratio: 20
        }
    );
    assert_eq!(
        costs(&s.cost),
        [
            20, 1000, 1000, 5000, 300, 300, 1000, 0, 300, 1500, 0, 2000, 100, 1000, 20, 2000, 0,
            1000, 20_000
        ]
    );
    // No measured latencies: every wake-up takes the constant.
    assert_eq!(s.cost.wakeup_latency_samples, None);
    assert_eq!(
        s.oom,
        OomConfig {
            allowed: true,
            reaper_delay_ns: NS_PER_MS,
            stop_on_kill: false,
        }
    );
    assert_eq!(s.policy, PolicyConfig::default());
    assert!(s.workloads.is_empty());
    assert!(s.guests.is_empty());
    // A guest's background activity: the measured idle rate (validation/real/idle-frees*.json).
    let g = GuestConfig::default();
    assert_eq!(
        (g.background_frees, g.background_lifetime_ns),
        (1, NS_PER_SEC)
    );
    assert_eq!(
        HighOrderSpec::default(),
        HighOrderSpec {
            order: 3,
            rate_per_sec: 1000,
            lifetime_ns: 10 * NS_PER_MS,
            lifetimes: Lifetimes::Fixed,
            gfp: HighOrderGfp::Atomic,
            count: None,
        }
    );
    assert_eq!(
        AnonSpec::default(),
        AnonSpec {
            size_bytes: 0,
            pattern: AccessPattern::Sequential,
            passes: 1,
            write_fraction: 1.0,
            think_ns: 0,
            hold_ns: 0,
        }
    );
    assert_eq!(
        FileSpec::default(),
        FileSpec {
            size_bytes: 0,
            op: FileOp::Read,
            passes: 1,
            hold_ns: 0
        }
    );
    assert_eq!(
        TraceSpec::default(),
        TraceSpec {
            path: String::new(),
            format: TraceFormat::Oracle,
            compression: Compression::None,
            kind: TraceKind::Anon,
            object_size: ObjectSize::Pages,
            write_fraction: 0.0,
            passes: 1,
            time: TraceTime::Ignore,
            think_ns: 0,
            hold_ns: 0,
            max_records: None,
        }
    );
    assert_eq!(DEFAULT_ZIPF_ALPHA, 1.0);
}

fn costs(c: &CostModel) -> Vec<u64> {
    let CostModel {
        anon_touch_ns,
        anon_fault_ns,
        swapcache_fault_ns,
        major_fault_ns,
        file_hit_ns,
        file_write_ns,
        file_miss_ns,
        readahead_alloc_ns,
        scan_unmapped_ns,
        scan_mapped_ns,
        unmap_ns,
        swapout_submit_ns,
        free_page_ns,
        slowpath_ns,
        compact_scan_ns,
        migrate_page_ns,
        balance_start_ns,
        balance_iteration_ns,
        wakeup_latency_ns,
        wakeup_latency_samples: _,
    } = c.clone();
    vec![
        anon_touch_ns,
        anon_fault_ns,
        swapcache_fault_ns,
        major_fault_ns,
        file_hit_ns,
        file_write_ns,
        file_miss_ns,
        readahead_alloc_ns,
        scan_unmapped_ns,
        scan_mapped_ns,
        unmap_ns,
        swapout_submit_ns,
        free_page_ns,
        slowpath_ns,
        compact_scan_ns,
        migrate_page_ns,
        balance_start_ns,
        balance_iteration_ns,
        wakeup_latency_ns,
    ]
}
