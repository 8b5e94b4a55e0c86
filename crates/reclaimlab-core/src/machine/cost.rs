//! The CPU-time cost model: what each simulated operation costs the CPU that runs it. Every
//! figure is an abstraction (the kernel does not spend a fixed time on anything), chosen inside
//! the ranges of core-mm §9's table of typical costs; all are scenario keys (`[cost]`) so a
//! study can vary them. Costs are charged to the actor running the operation and end up in its
//! CPU's busy time.

/// Simulated CPU cost of each operation, in nanoseconds. The default values are declared with
/// the `[cost]` keys (`scenario/sections/machine.rs`); the comment of each field names the row
/// of core-mm §9's table of typical costs they are taken from (`[EST]`: estimates for a modern
/// x86 server).
#[derive(Debug, Clone, PartialEq)]
pub struct CostModel {
    /// User access to a resident anonymous page (a cache-missing load or store).
    pub anon_touch_ns: u64,
    /// First-touch anonymous fault: allocate and zero a page (§9 "minor anon fault", 0.5-2 us).
    pub anon_fault_ns: u64,
    /// Minor fault on a swap-cache hit (§9 "minor fault, page-cache hit", 0.3-1 us).
    pub swapcache_fault_ns: u64,
    /// Kernel path of a major (swap-in) fault, excluding device time (§9: kernel path ~5-10 us).
    pub major_fault_ns: u64,
    /// Buffered read of one page that hits the page cache (§9, 0.3-1 us).
    pub file_hit_ns: u64,
    /// Buffered write of one whole page, whether it was cached or not: the copy into the page
    /// cache and the page's dirtying, and its share of the writeback CPU work that follows
    /// (block mapping, bio submission and completion), which the model's flusher does not
    /// charge (§9 has no row for it; by default the same as a read hit).
    pub file_write_ns: u64,
    /// Adding one page to the page cache on a miss, excluding device time.
    pub file_miss_ns: u64,
    /// The part of `file_miss_ns` spent while a read-ahead window fills: allocating one page
    /// and adding it to the page cache. The kernel allocates a window one page at a time, and
    /// kswapd, woken by one of them, runs on another CPU meanwhile; with a value, a window
    /// whose page went through the slow path yields between its pages (`filemap.rs`). A
    /// guest's trace spaces a window's allocations 18 us apart (docs/VALIDATION.md).
    pub readahead_alloc_ns: u64,
    /// Isolating and judging one unmapped page on an LRU list (§9 "LRU scan", 0.2-1 us).
    pub scan_unmapped_ns: u64,
    /// Isolating and judging one mapped page: the rmap walk that reads and clears its young
    /// bits (§9, 1-5 us, which also counts the unmap: with `unmap_ns` 0 this is the whole cost).
    pub scan_mapped_ns: u64,
    /// Unmapping a mapped page that reclaim goes on to write or free (`try_to_unmap`: a second
    /// rmap walk, the PTE cleared, the TLB flushed with an IPI to the CPUs using the mm). A
    /// guest's trace tells the two apart: a referenced page kept took 3-5 us, a page unmapped
    /// and swapped out about 100 us (docs/VALIDATION.md, "The reclaimer's block plug").
    pub unmap_ns: u64,
    /// The multi-generational LRU's aging walk, per page-table entry tested (`walk_pte_range`:
    /// read and clear the accessed bit, promote the folio).
    pub lru_gen_walk_ns: u64,
    /// Submitting one page for swap-out: add_to_swap, unmap, bio (§9, 1-5 us/page).
    pub swapout_submit_ns: u64,
    /// Freeing one page back to the allocator (§9 "order-0 alloc/free via PCP", 50-200 ns).
    pub free_page_ns: u64,
    /// Fixed cost of one allocation slow-path entry (wakeups, zonelist walk).
    pub slowpath_ns: u64,
    /// Compaction's migrate and free scanners, per page frame looked at.
    pub compact_scan_ns: u64,
    /// Migrating one page: copy 4 KiB, update the rmap and the page table.
    pub migrate_page_ns: u64,
    /// kswapd from being switched onto its CPU to its first LRU batch: the rest of
    /// `kswapd_try_to_sleep`, `balance_pgdat`'s set-up, the first `pgdat_balanced` and the
    /// scan counts. An allocation racing a woken kswapd gets that long more; a guest's trace
    /// measures it (docs/VALIDATION.md).
    pub balance_start_ns: u64,
    /// One `balance_pgdat` priority iteration besides the pages it scans (watermark checks,
    /// lock round trips); it keeps an iteration that scans nothing from being free.
    pub balance_iteration_ns: u64,
    /// From a wake-up to the woken kernel thread (kswapd) running on its CPU: the scheduler's
    /// wake-up latency. Not in the spec: an estimate of tens of microseconds for an idle CPU
    /// (an IPI and a context switch); a slower guest (TCG) takes far longer.
    pub wakeup_latency_ns: u64,
    /// Measured wake-up latencies: when given, each wake-up of kswapd draws one of them
    /// (uniformly, from the machine's own random stream) instead of `wakeup_latency_ns`.
    pub wakeup_latency_samples: Option<LatencySamples>,
}

/// Wake-up latencies measured on a real machine (`[cost] wakeup_latency_samples`): the file
/// they were read from and the samples in nanoseconds, in the file's order.
///
/// The distribution matters, not only its mean: a scheduler's wake-up latency is mostly short
/// with a long tail (the validation guest: median 90 us, mean 395 us, one wake-up in fifty
/// over 4 ms), and it is the tail that lets an allocator run from the low watermark down to
/// the min one before kswapd runs, so a constant mean gives no direct reclaim where the real
/// machine has some.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LatencySamples {
    pub path: String,
    pub ns: Vec<u64>,
}

impl LatencySamples {
    /// The `i`-th sample of a uniform draw `u` in `[0, 2^64)`.
    #[inline]
    pub fn draw(&self, u: u64) -> u64 {
        let i = ((u as u128 * self.ns.len() as u128) >> 64) as usize;
        self.ns[i]
    }
}

impl CostModel {
    /// How long a wake-up of kswapd takes to get it running: a draw from `rng` (the machine's
    /// own wake-up stream) among the measured samples when the scenario gives them, else the
    /// constant `wakeup_latency_ns` (and then `rng` is left alone).
    pub fn kswapd_wakeup_latency(&self, rng: &mut crate::engine::Rng) -> u64 {
        match &self.wakeup_latency_samples {
            Some(s) if !s.ns.is_empty() => s.draw(rng.next_u64()),
            _ => self.wakeup_latency_ns,
        }
    }
}

/// The `latencies_us` list of a JSON object, in nanoseconds.
pub fn parse_latency_samples(text: &str) -> Result<Vec<u64>, String> {
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("not valid JSON: {e}"))?;
    let Some(list) = v.get("latencies_us").and_then(|l| l.as_array()) else {
        return Err("expected an object with a `latencies_us` array of microseconds".into());
    };
    if list.is_empty() {
        return Err("`latencies_us` is empty: give at least one sample".into());
    }
    list.iter()
        .enumerate()
        .map(|(i, x)| match x.as_f64() {
            Some(us) if us.is_finite() && us >= 0.0 => Ok((us * 1000.0).round() as u64),
            _ => Err(format!(
                "`latencies_us` item {i} is {x}: expected a non-negative number of microseconds"
            )),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_are_read_in_nanoseconds_and_drawn_uniformly() {
        let ns = parse_latency_samples(r#"{"latencies_us": [90, 2.5, 4083]}"#).unwrap();
        assert_eq!(ns, vec![90_000, 2_500, 4_083_000]);
        let s = LatencySamples {
            path: "x".into(),
            ns,
        };
        assert_eq!(s.draw(0), 90_000);
        assert_eq!(s.draw(u64::MAX / 3 + 1), 2_500);
        assert_eq!(s.draw(u64::MAX), 4_083_000);
    }

    fn cost(samples: Option<Vec<u64>>) -> CostModel {
        let s = "name = \"t\"\n[host]\nram = \"64MiB\"\n[cost]\nwakeup_latency = \"400us\"\n\
                 [[workload]]\nname = \"w\"\nanon = { size = \"1MiB\" }\n";
        let mut c = crate::scenario::parse_str(s, "t.toml").unwrap().cost;
        c.wakeup_latency_samples = samples.map(|ns| LatencySamples {
            path: "x".into(),
            ns,
        });
        c
    }

    #[test]
    fn wakeup_latency_is_the_constant_without_samples() {
        let c = cost(None);
        let mut rng = crate::engine::Rng::for_actor(1, "kswapd-wakeup");
        assert_eq!(c.kswapd_wakeup_latency(&mut rng), 400_000);
        assert_eq!(c.kswapd_wakeup_latency(&mut rng), 400_000);
    }

    #[test]
    fn wakeup_latency_draws_the_measured_samples_per_seed() {
        let ns = vec![30_000, 90_000, 4_000_000];
        let c = cost(Some(ns.clone()));
        let draws = |seed| {
            let mut rng = crate::engine::Rng::for_actor(seed, "kswapd-wakeup");
            (0..300)
                .map(|_| c.kswapd_wakeup_latency(&mut rng))
                .collect::<Vec<u64>>()
        };
        let a = draws(1);
        // Only measured values, each of them drawn, about a third of the time each.
        for &v in &ns {
            let n = a.iter().filter(|&&x| x == v).count();
            assert!((70..=130).contains(&n), "{v} drawn {n} times of 300");
        }
        assert_eq!(a.len(), 300);
        // Deterministic for a seed; another seed draws another sequence.
        assert_eq!(draws(1), a);
        assert_ne!(draws(2), a);
    }

    #[test]
    fn bad_sample_files_say_what_is_wrong() {
        assert!(parse_latency_samples("{")
            .unwrap_err()
            .contains("not valid JSON"));
        assert!(parse_latency_samples(r#"{"x": 1}"#)
            .unwrap_err()
            .contains("latencies_us"));
        assert!(parse_latency_samples(r#"{"latencies_us": []}"#)
            .unwrap_err()
            .contains("empty"));
        let e = parse_latency_samples(r#"{"latencies_us": [1, -2]}"#).unwrap_err();
        assert!(e.contains("item 1"), "{e}");
    }
}

/// What crossing between a guest and its host costs (mechanisms.md §D.0, §D3): estimates, not
/// measurements; every one is a `[guest.kvm]` key so a study can vary it. The guest kernel
/// charges the hinting costs, the memory slot (`virt::kvm_main`) the host faults and discards.
#[derive(Debug, Clone, PartialEq)]
pub struct KvmCost {
    /// A guest's first touch of a frame the host has not backed: the EPT violation exit, the
    /// host's anonymous fault with its zeroing, and the re-entry (`c_fault4k`), on top of the
    /// host fault's own cost in the host's `[cost]`.
    pub host_fault_ns: u64,
    /// One report round trip: the guest queues the list and kicks the device, the host wakes
    /// the device thread, handles the list and acks, the guest takes the interrupt
    /// (`t_report`, besides the discards themselves).
    pub report_ns: u64,
    /// The host dropping one 4 KiB page of a reported range (`MADV_DONTNEED`: unmap, free,
    /// TLB flush share).
    pub discard_page_ns: u64,
    /// Isolating one free block from the guest's buddy and putting it back (`t_iso`).
    pub isolate_ns: u64,
    /// One synchronous hypercall exit and re-entry (Duyck's per-free hint).
    pub hypercall_ns: u64,
    /// One comparison of the RFC v8 capture array's inline scan (O(N^2) over 1,000 entries).
    pub scan_compare_ns: u64,
    /// From the capture array filling to the hinting kthread running on that CPU: the freeing
    /// task goes on (and its frees are lost) until it reaches a preemption point.
    pub kthread_wakeup_ns: u64,
}
