"""swapintrace (docs/MODEL.md item 10): a trace of the workload's swap-ins, written here in the
guest's own format (the kprobe events of initramfs.SWAPIN_PROBES), put back into faults and
summarised; `scripts/validate-trace.py --swapin` on transcripts with and without one; and the
model's own trace of the same events."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

import reclaimlab
from reclaimlab.validate import initramfs, spec, swapintrace

ROOT = Path(__file__).resolve().parents[2]
TRANSCRIPT = Path(__file__).with_name("data") / "validate-console.log"
_T = [10.0]


def _ev(name: str, args: str, pid: int = 149, comm: str = "reclaimlab-work",
        t: float | None = None) -> str:
    _T[0] += 0.0001
    return f"  {comm}-{pid}     [001] .....  {_T[0] if t is None else t:.6f}: {name}: {args}\n"


def _lookup(slot: int, page: int, hits: int, pid: int = 149, vma: int = 0xffff8880031c2000):
    # The swap entry of device 0 is its slot; the address is the page's; shmem has no VMA.
    return _ev("swapin_lookup", f"(swap_cache_get_folio+0x0/0x2c0) entry={slot:#x} "
               f"vma={vma:#x} addr={page << 12:#x} hits={hits} vma_ra=0x0", pid)


def _miss(slot, page, seen, prev, last, reads, pid=149) -> str:
    """A fault that missed the swap cache: the lookup, the readahead's state (the hit counter,
    the last miss's slot, the last window) and its reads."""
    text = _lookup(slot, page, seen, pid)
    text += _ev("swapin_cluster", f"(swap_cluster_readahead+0x0/0x450) entry={slot:#x} "
                f"hits={seen} prev={prev:#x} last={last}", pid)
    return text + "".join(_ev("swapin_read", f"(swap_readpage+0x0/0x2f0) entry={s:#x} "
                              f"sync={len(reads) == 1:d}", pid) for s in reads)


def _at(t: float) -> str:
    _T[0] = t
    return ""


# A lookup no readahead follows is a hit; a readahead hit when the next reading of the hit
# counter is one more.
TRACE = "".join([
    "# entries-in-buffer/entries-written: 60/60   #P:2\n",
    _ev("sched_switch", "prev_comm=kswapd0 prev_pid=44 ==> next_comm=swapper", 44, "kswapd0"),
    _miss(100, 1000, 0, 50, 1, [100]),                    # M1: far from the last: 1 page
    _lookup(100, 1000, 0),                                # its retry: no fault
    _miss(101, 2000, 0, 100, 1, [101]),                   # M2 (M1's window was 1)
    _lookup(300, 3000, 0),                                # a readahead hit (the next says 1)
    _lookup(301, 3001, 1),                                # another (2)
    _lookup(400, 4000, 2),                                # a hit without PG_readahead
    _lookup(9, 0, 2, pid=158, vma=0),                     # shmem's: not a fault
    _miss(200, 5000, 2, 101, 2, [200, 201, 202]),         # M6 (M2's: next to M1's slot: 2)
    _at(11.0),                                            # the next second
    _miss(500, 6000, 0, 101, 4, [500]),                   # M7 (M6's: two hits: 4)
    _lookup(201, 5001, 0),                                # a hit on M6's readahead page
    _lookup(201, 5001, 1),                                # its retry
    _miss(600, 7000, 1, 500, 2, [600, 602]),              # M9 (M7's: half the last: 2)
])


def test_the_faults_are_put_back_in_order():
    seq, counts = swapintrace.faults(TRACE)
    assert [f["kind"] for f in seq] == ["miss", "miss", "ra_hit", "ra_hit", "hit", "miss",
                                        "miss", "ra_hit", "miss"]
    assert [f["slot"] for f in seq] == [100, 101, 300, 301, 400, 200, 500, 201, 600]
    # A miss's window is the next one's last window; the last miss's is unknown.
    assert [f.get("win") for f in seq if f["kind"] == "miss"] == [1, 2, 4, 2, None]
    assert seq[5]["reads"] == [200, 201, 202] and seq[5]["seen_hits"] == 2
    assert counts == {"lookups": 12, "vma_ra_set": 0, "retries": 2, "other_lookups": 1,
                      "undetermined": 0}


def test_the_summary_counts_hits_per_gap_runs_and_windows():
    s = swapintrace.swapins(TRACE)
    assert (s["faults"], s["misses"], s["readahead_hits"], s["other_hits"], s["retries"]) == (
        9, 5, 3, 1, 2)
    assert s["lookups_not_from_do_swap_page"] == 1 and s["lost_events"] == 0
    assert s["windows"] == {"1": 1, "2": 2, "4": 1}
    assert s["windows_as_the_rule_says"] == [4, 4]
    # Readahead hits between consecutive misses: M1-M2 none, M2-M6 two (the hit without
    # PG_readahead is not one), M6-M7 none, M7-M9 one.
    assert s["readahead_hits_per_gap"] == {"0": 2, "1": 1, "2": 1}
    assert s["hits_seen_by_the_rule_at_a_miss"] == {"0": 3, "1": 1, "2": 1}
    # One gap holds two readahead hits, from no window traced; M6's page is hit one miss on.
    assert s["gaps_with_2_or_more_readahead_hits"] == [1, 0]
    assert s["readahead_hit_misses_after_its_window"] == {"1": 1}
    # Runs of misses that no hit breaks: M1 M2, M6 M7, M9.
    assert s["miss_runs"] == {"1": 1, "2": 2}
    assert s["slots_from_previous_fault"] == {"1": 2, "64-511": 6}
    assert s["pages_from_previous_fault"] == {"1": 1, "512+": 7}
    assert s["slots_from_previous_miss"] == {"1": 1, "64-511": 3}
    assert s["pages_read_by_window"] == {"1": {1: 1}, "2": {1: 2}, "4": {3: 1}}
    assert s["aligned_span_of_reads_by_window"]["4"] == {4: 1}
    assert (s["readahead_pages_read"], s["readahead_pages_hit"]) == (3, 1)
    # x = 3 / 5 over the run; second by second 2 hits over 3 misses, then 1 over 2:
    # (3 * 0.4 + 2 * 1/3) / 5.
    assert s["share"] == {"windows_of_4_or_more_per_miss": 0.25,
                          "misses_after_a_readahead_hit": 0.5,
                          "at_random_arrival": 0.375,
                          "at_random_arrival_within_each_second": 0.3733,
                          "reads_spanning_4_or_8_per_miss": 0.4}


def test_the_window_rule():
    """6.1's offset-based rule, from the state read at a miss."""
    assert swapintrace.window_rule(50, 100, 0, 1) == 1      # far, no hit
    assert swapintrace.window_rule(100, 101, 0, 1) == 2     # next slot up
    assert swapintrace.window_rule(100, 99, 0, 0) == 2      # next slot down
    assert swapintrace.window_rule(0, 100, 1, 0) == 4
    assert swapintrace.window_rule(0, 100, 3, 0) == 8       # 5 -> 8
    assert swapintrace.window_rule(0, 100, 7, 0) == 8       # capped by page-cluster 3
    assert swapintrace.window_rule(0, 100, 7, 0, max_pages=32) == 16
    assert swapintrace.window_rule(0, 100, 0, 8) == 4       # half the last window
    assert swapintrace.window_rule(0, 100, 0, 4) == 2


def test_a_trace_without_swapins_is_refused_and_an_overflow_is_counted():
    with pytest.raises(swapintrace.SwapinTraceError, match="--swapin"):
        swapintrace.swapins("# entries-in-buffer/entries-written: 1/1\n"
                            + _lookup(100, 1000, 0) + _lookup(101, 1001, 1))
    lost = swapintrace.swapins(TRACE.replace("60/60", "60/75"))
    assert lost["lost_events"] == 15


def test_the_init_script_probes_the_workload_only():
    s = spec.load(ROOT / "validation" / "predict" / "ext4-create-walk-200.toml",
                  ROOT / "validation" / "sittings" / "2026-12-01")
    plain = initramfs.init_script(s, ["virtio.ko"], 1)
    init = initramfs.init_script(s, ["virtio.ko"], 1, swapin=True)
    assert "kprobe_events" not in plain
    for e in swapintrace.EVENTS:
        assert f"swapin/{e} " in init
    assert "'comm == \"reclaimlab-work\"'" in init
    # The probes go on before tracing starts.
    assert init.index("swapin_read") < init.index("echo 1 > $T/tracing_on")


def _transcript(tmp_path: Path, trace: str) -> Path:
    """A boot's transcript (the test data's) with a trace section of ``trace``."""
    console = tmp_path / "console.log"
    console.write_text("")
    sched = ("@@reclaimlab:begin sched@@\n"
             + _ev("sched_switch", "prev_comm=swapper ==> next_comm=kswapd0", 44, "kswapd0", 9.0)
             + trace
             + _ev("sched_switch", "prev_comm=kswapd0 ==> next_comm=swapper", 44, "kswapd0", 11.0)
             + "@@reclaimlab:end sched@@\n")
    text = TRANSCRIPT.read_text().replace("@@reclaimlab:begin vmstat after@@",
                                          sched + "@@reclaimlab:begin vmstat after@@", 1)
    console.with_name("output.log").write_text(text)
    return console


@pytest.mark.parametrize("with_swapins", [True, False])
def test_the_trace_script_keeps_a_swapin_summary_or_says_why_not(tmp_path, with_swapins):
    console = _transcript(tmp_path, TRACE if with_swapins else "")
    run = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "validate-trace.py"), "mix", "--swapin",
         "--console", str(console), "--sitting", str(tmp_path / "sitting")],
        capture_output=True, text=True, cwd=ROOT, check=False)
    kept = tmp_path / "sitting" / "real" / "mix.swapin.json"
    if with_swapins:
        assert run.returncode == 0, run.stderr
        assert json.loads(kept.read_text())["swapin"]["misses"] == 5
    else:
        assert run.returncode == 1 and not kept.exists()
        assert "no swap-in fault of the workload" in run.stderr
        assert "Traceback" not in run.stderr


def test_the_models_trace_reads_as_the_guests():
    """The model's kernel trace writes the same three events (`reclaimlab run --trace
    kernel`), so one summary reads a model run as it reads a guest boot: a sequential pass
    over more than the RAM on a rotational swap disk, whose windows open to 8 slots, each of
    its faults put back and counted as its own vmstat counts them."""
    scenario = {
        "name": "swapin-trace",
        "host": {"ram": "128MiB"},
        "swap": {"size": "256MiB", "rotational": True},
        "workload": [{"name": "app", "anon": {"size": "160MiB", "pattern": "sequential",
                                              "passes": 6}}],
    }
    r = reclaimlab.run(scenario, trace="kernel")
    v = r.vmstat
    seq, counts = swapintrace.faults(r.trace)
    misses = [f for f in seq if f["kind"] == "miss"]
    assert len(misses) == v["pgmajfault"] > 20_000
    assert sum(f["kind"] == "ra_hit" for f in seq) == v["swap_ra_hit"] > 100_000
    assert sum(len(f["reads"]) for f in misses) == v["pswpin"]
    assert sum(len(f["reads"]) - 1 for f in misses) == v["swap_ra"]
    assert counts.get("retries", 0) == 0 and counts.get("other_lookups", 0) == 0
    s = swapintrace.swapins(r.trace, start_s=1.0)
    assert s["misses"] == v["pgmajfault"] and s["lost_events"] == 0
    # Every window is the rule's on the state the trace shows, and a walk in order opens
    # them to 2^page-cluster = 8 slots.
    agree, chosen = s["windows_as_the_rule_says"]
    assert agree == chosen == len(misses) - 1
    assert s["windows"]["8"] > 0.9 * chosen
    assert s["by_5s"][0]["from_s"] == 0 and s["by_5s"][0]["readahead_hits_per_miss"] > 5


def test_the_model_swapin_script_keeps_a_summary_beside_its_counters(tmp_path):
    """scripts/model-swapin.py: the storm as validate simulates it, its trace summarised; the
    summary's misses and readahead hits are the run's own counters."""
    scenario = ROOT / "validation" / "predict" / "xfs-create-walk-200.toml"
    subprocess.run([sys.executable, str(ROOT / "scripts" / "model-swapin.py"), str(scenario),
                    "--out", str(tmp_path)], check=True, capture_output=True, text=True)
    kept = json.loads((tmp_path / "xfs-create-walk-200.swapin.json").read_text())
    s, v = kept["swapin"], kept["vmstat"]
    assert s["misses"] == v["pgmajfault"] > 10_000
    # (A readahead hit among the trace's last lookups cannot be told from a plain one.)
    assert 0 <= v["swap_ra_hit"] - s["readahead_hits"] <= s["undetermined"]
    assert v["swap_ra_hit"] > 1_000
    agree, chosen = s["windows_as_the_rule_says"]
    assert agree == chosen == s["misses"] - 1
    assert kept["accesses"][0] > 100_000
