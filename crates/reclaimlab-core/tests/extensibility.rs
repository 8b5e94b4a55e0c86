//! An actor and a policy variant added from outside the crate, with nothing but their own code:
//! the world's actor set and the policy switches are open.

use std::any::Any;

use reclaimlab_core::machine::gfp::GFP_NOWAIT;
use reclaimlab_core::machine::policy::{PgdatBalanced, WatermarkCheck};
use reclaimlab_core::machine::zone::Zone;
use reclaimlab_core::machine::{Machine, TaskCtx, MAX_NR_ZONES};
use reclaimlab_core::run::host_params;
use reclaimlab_core::scenario::parse_str;
use reclaimlab_core::world::{Actor, StepCx, Wake};
use reclaimlab_core::{Run, RunOptions, RunOutput};

const SCENARIO: &str = r#"
name = "toy"
[host]
ram = "256MiB"
[swap]
size = "256MiB"
[[workload]]
name = "hog"
anon = { size = "224MiB", passes = 2 }
"#;

fn counter(out: &RunOutput, name: &str) -> u64 {
    out.counters
        .iter()
        .find(|(n, _)| n == name)
        .map(|c| c.1)
        .unwrap_or_else(|| panic!("no counter {name}"))
}

/// A balloon driver of our own: every 10 ms it takes 1024 pages of kernel memory (GFP_NOWAIT: it
/// never reclaims itself, it only wakes kswapd) until it holds `target` pages.
struct Balloon {
    target: u64,
    held: u64,
    failed: u64,
}

impl Actor for Balloon {
    fn name(&self) -> &str {
        "balloon"
    }

    fn step(&mut self, cx: &mut StepCx) -> Wake {
        let m: &mut Machine = cx.machine();
        let mut t = TaskCtx::default();
        for _ in 0..1024 {
            if self.held >= self.target {
                return Wake::Done;
            }
            match m.alloc_pages(GFP_NOWAIT, 0, &mut t) {
                Ok(pfn) => {
                    m.mark_kernel_pages(pfn, 0);
                    self.held += 1;
                }
                Err(_) => self.failed += 1,
            }
        }
        cx.charge_cpu(t.cost_ns);
        Wake::At(cx.now() + 10_000_000)
    }

    /// The run lasts until the balloon is full, even if the hog is done first.
    fn holds_run_open(&self) -> bool {
        self.held < self.target
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

fn run_with(balloon: Option<u64>) -> (RunOutput, Option<(u64, u64)>) {
    let scn = parse_str(SCENARIO, "toy.toml").unwrap();
    let mut run = Run::new(&scn, &RunOptions::default()).unwrap();
    let id = balloon.map(|target| {
        let w = run.world_mut();
        let id = w.add_actor(Box::new(Balloon {
            target,
            held: 0,
            failed: 0,
        }));
        w.start(id, 0);
        id
    });
    run.go(&mut |_, _| true).unwrap();
    let held = id.map(|id| {
        let b = run.world().actor(id).unwrap();
        let b = b.as_any().downcast_ref::<Balloon>().unwrap();
        (b.held, b.failed)
    });
    (run.output(), held)
}

#[test]
fn an_actor_from_outside_the_crate_runs_and_presses_on_memory() {
    let (plain, _) = run_with(None);
    // 48 MiB of the 256 MiB host taken by the balloon.
    let target = 48 * 256;
    let (with, held) = run_with(Some(target));
    let (held, _failed) = held.unwrap();
    assert_eq!(held, target, "the balloon got all its pages");
    let steal = |o: &RunOutput| counter(o, "pgsteal_kswapd") + counter(o, "pgsteal_direct");
    assert!(
        steal(&with) > steal(&plain),
        "less room for the hog: more reclaim ({} vs {} pages)",
        steal(&with),
        steal(&plain)
    );
    assert_eq!(counter(&with, "oom_kill"), 0);
    // Deterministic with the extra actor too.
    let (again, _) = run_with(Some(target));
    assert_eq!(again.vmstat, with.vmstat);
}

/// A kswapd balancing rule of our own: the node is always balanced, so kswapd never runs and
/// the allocating task reclaims for itself.
#[derive(Debug)]
struct AlwaysBalanced;

impl PgdatBalanced for AlwaysBalanced {
    fn balanced(
        &self,
        _zones: &[Zone; MAX_NR_ZONES],
        _check: &dyn WatermarkCheck,
        _order: u32,
        _hz: usize,
    ) -> bool {
        true
    }
}

#[test]
fn a_policy_variant_from_outside_the_crate_changes_who_reclaims() {
    let scn = parse_str(SCENARIO, "toy.toml").unwrap();
    let opts = RunOptions::default();
    let default = reclaimlab_core::run(&scn, &opts, &mut |_, _| true).unwrap();
    let mut params = host_params(&scn, scn.sim.seed, false).unwrap();
    params.policy.balance = Box::new(AlwaysBalanced);
    // A watermark boost wakes kswapd whatever the balance rule says: no boosting here.
    params.config.sysctl.watermark_boost_factor = 0;
    let machine = Machine::new(params).unwrap();
    let mut run = Run::with_machine(&scn, &opts, machine).unwrap();
    run.go(&mut |_, _| true).unwrap();
    let toy = run.output();
    assert!(counter(&default, "pageoutrun") > 0);
    assert_eq!(counter(&toy, "pageoutrun"), 0, "kswapd never woke");
    assert_eq!(counter(&toy, "pgscan_kswapd"), 0);
    assert!(counter(&toy, "pgscan_direct") > counter(&default, "pgscan_direct"));
    assert!(counter(&toy, "allocstall_movable") > 0);
}
