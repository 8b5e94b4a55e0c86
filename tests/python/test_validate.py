"""`reclaimlab validate`: the kept real-kernel data, the comparison against real simulator runs,
the serial-console parser on a captured transcript, the workload program on this host, and the
errors. Nothing here boots a VM."""

from __future__ import annotations

import dataclasses
import json
import math
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

import reclaimlab
from reclaimlab import cli
from reclaimlab.validate import (
    compare, costs, guest, initramfs, kernel, ktrace, report, shrinktrace, sittings, spec, store,
)
from reclaimlab.validate.errors import ValidateError

ROOT = Path(__file__).resolve().parents[2]
VALIDATION = ROOT / "validation"
# The calibration and prediction scenarios the reference sitting booted (docs/VALIDATION.md,
# "Protocol"; their kept boots are the reference sitting's, their costs the guest profile's:
# test_validate_protocol.py); one added after it would be not yet sat (test_validate_fs.py).
SCENARIOS = [p for p in sittings.scenarios(VALIDATION)
             if not sittings.not_yet_sat(p, sittings.reference(VALIDATION))]
# The sittings' own scenarios, each with its per-scenario [cost] as that sitting had it and its
# kept results under the sitting's real/.
SITTINGS = sorted(VALIDATION.glob("sittings/*/*.toml"))
# The morning sitting of 2026-11-28 (the reference before the protocol's first sitting), its
# scenarios with their own measured [cost], and the afternoon's partial re-sitting of two.
REF = VALIDATION / "sittings" / "2026-11-28"
AFTERNOON = VALIDATION / "sittings" / "2026-11-28-afternoon"
OWN_COSTS = sorted(REF.glob("*.toml")) + sorted(AFTERNOON.glob("*.toml"))
TRANSCRIPT = Path(__file__).with_name("data") / "validate-console.log"


# --- the kept data ---------------------------------------------------------------------------

def test_every_validation_scenario_has_complete_kept_results():
    assert len(SCENARIOS) >= 5 and len(SITTINGS) >= 5
    for path in SCENARIOS + SITTINGS:
        s = spec.load(path)
        # 512 MiB guests, and the machine-size scenarios' 1 and 2 GiB (mix-1g, mix-2g).
        assert s.ram_bytes in (512 << 20, 1 << 30, 2 << 30), path
        assert s.cpus == 2 and s.swap_bytes in (1 << 30, 2 << 30, 4 << 30), path
        kept = store.load(s)  # checks fields, types and the scenario's content hash
        assert len(kept["reps"]) >= 5, path
        assert kept["kernel"].startswith("Linux version 6.1."), kept["kernel"]
        assert kept["accel"] in ("KVM", "TCG") and kept["qemu"].startswith("QEMU")
        assert kept["guest_settings"]["lru_gen"] in ("0x0000", "absent")
        assert ("[madvise]" if s.thp else "[never]") in kept["guest_settings"]["thp"]
        b = kept["baseline"]
        assert 0 < b["MemFree_kib"] < b["MemTotal_kib"] <= s.ram_bytes // 1024
        for rep in kept["reps"]:
            before, after, delta = rep["vmstat_before"], rep["vmstat_after"], rep["vmstat_delta"]
            # Since 2026-11-27 the workload program reads the counters itself as it ends
            # (vmstat_end), and the delta ends there rather than at the harness's snapshot.
            end = rep.get("vmstat_end") or after
            assert delta == {k: end[k] - before[k] for k in end if k in before}
            assert rep["wall_time_s"] > 0
            assert all(w["exit"] == 0 for w in rep["workloads"]), rep["workloads"]
            assert "MemFree" in rep["meminfo_before"] and "MemFree" in rep["meminfo_after"]
        zones = compare.zone_layout(Path(kept["zoneinfo_path"]).read_text())
        assert [z["zone"] for z in zones] == ["DMA", "DMA32"]
        assert sum(z["managed"] for z in zones) * 4 == b["MemTotal_kib"]


def test_kept_results_of_an_edited_scenario_are_refused(tmp_path):
    """An edit to what the guest runs (here the file's size) invalidates the kept real data;
    an edit to simulator-only settings ([cost]) or comments does not."""
    src = REF / "file-stream.toml"
    (tmp_path / "real").mkdir()
    for suffix in (".json", ".zoneinfo", ".kswapd-wakeup.json"):
        shutil.copy(REF / "real" / f"file-stream{suffix}", tmp_path / "real")
    edited = tmp_path / "file-stream.toml"
    text = src.read_text()
    edited.write_text(text.replace('scan_mapped = "15us"', 'scan_mapped = "16us"') + "\n# edited\n")
    assert store.load(spec.load(edited))["scenario"] == "file-stream"
    edited.write_text(text.replace('size = "1GiB"', 'size = "2GiB"', 1))
    with pytest.raises(ValidateError, match="another version of .*--boot"):
        store.load(spec.load(edited))


def test_a_kept_file_missing_a_field_is_named(tmp_path):
    data = json.loads((REF / "real" / "file-stream.json").read_text())
    del data["reps"][1]["vmstat_delta"]
    with pytest.raises(ValidateError, match=r"reps\[1\] has no 'vmstat_delta'"):
        store.check(data, "x.json")


# --- the comparison, on real simulator runs ----------------------------------------------------

@pytest.fixture(scope="module")
def seq_comparison():
    s = spec.load(REF / "anon-seq-reread.toml")
    kept = store.load(s)
    return s, kept, compare.compare(s, kept, seeds=2)


def test_ratios_means_and_spreads_match_an_independent_computation(seq_comparison):
    s, kept, c = seq_comparison
    # The simulator on the guest's zones, run here without the harness's help.
    used = [r["meminfo_before"]["MemTotal"] - r["meminfo_before"]["MemFree"] for r in kept["reps"]]
    scenario = compare.sim_scenario(
        s, Path(kept["zoneinfo_path"]), kept["guest_settings"], round(sum(used) / len(used))
    )
    assert scenario["host"]["zoneinfo"].endswith("anon-seq-reread.zoneinfo")
    assert "ram" not in scenario["host"]
    # The booted guest's own memory is carried over (about 35 MB, and the traced boots' 32 MiB
    # trace buffer: about 68 MB here).
    assert scenario["host"]["kernel_used"] == f"{round(sum(used) / len(used))}KiB"
    assert 20_000 < round(sum(used) / len(used)) < 90_000
    assert scenario["sysctl"]["min_free_kbytes"] == int(kept["guest_settings"]["min_free_kbytes"])
    sims = [reclaimlab.run(scenario, seed=k).vmstat for k in (1, 2)]
    rows = {r.counter: r for r in c.rows}
    for name in ("pswpout", "pswpin", "pgscan_kswapd", "pgsteal_anon"):
        real = [rep["vmstat_delta"][name] for rep in kept["reps"]]
        sim = [v[name] for v in sims]
        real_mean, sim_mean = sum(real) / len(real), sum(sim) / len(sim)
        r = rows[name]
        assert r.real == real and r.sim == sim
        assert r.real_mean == pytest.approx(real_mean)
        assert r.sim_mean == pytest.approx(sim_mean)
        assert r.ratio == pytest.approx(sim_mean / real_mean)
        assert r.within == (0.8 <= sim_mean / real_mean <= 1.25)
        cv = 100 * statistics.stdev(real) / real_mean
        assert r.real_spread == pytest.approx(cv)
        assert r.spread_ok == (r.sim_spread <= 3 * cv or r.sim_spread == 0)
    assert rows["pswpout"].real_mean > 0  # the scenario swaps for real


def test_the_swap_device_is_the_guests(seq_comparison):
    """The guest's record of its swap device's rotational flag decides the model's readahead;
    boots without the record leave the scenario's own `[swap] rotational`."""
    s, kept, _ = seq_comparison
    zi = Path(kept["zoneinfo_path"])
    assert s.document["swap"].get("rotational") is True
    as_written = compare.sim_scenario(s, zi, kept["guest_settings"])
    assert "swap_rotational" not in kept["guest_settings"]
    assert as_written["swap"]["rotational"] is True
    solid = compare.sim_scenario(s, zi, {**kept["guest_settings"], "swap_rotational": "0"})
    assert solid["swap"]["rotational"] is False
    assert {k: v for k, v in solid["swap"].items() if k != "rotational"} == {
        k: v for k, v in as_written["swap"].items() if k != "rotational"}
    # A garbled record is not read as either.
    odd = compare.sim_scenario(s, zi, {**kept["guest_settings"], "swap_rotational": "?"})
    assert odd["swap"]["rotational"] is True
    # The model runs the other readahead for it: the VMA-based one reads around the faulting
    # address, so the sequential re-read's readahead differs.
    ra = [reclaimlab.run(doc, seed=1).vmstat["swap_ra"] for doc in (as_written, solid)]
    assert ra[0] > 0 and ra[1] > 0 and ra[0] != ra[1]


def test_run_length_sets_boot_wall_times_beside_simulated_times(seq_comparison):
    s, kept, c = seq_comparison
    rl = c.run_length
    assert rl is not None and rl.within is None  # shown, never scored
    assert rl.real == [rep["wall_time_s"] for rep in kept["reps"]]
    scenario = compare.sim_scenario(
        s, Path(kept["zoneinfo_path"]), kept["guest_settings"], compare.kernel_used_kib(kept)
    )
    times = [reclaimlab.run(scenario, seed=k).summary["sim_time_ns"] / 1e9 for k in (1, 2)]
    assert rl.sim == pytest.approx(times)
    assert rl.ratio == pytest.approx(statistics.fmean(times) / statistics.fmean(rl.real))
    assert "run length: real" in report.text(c)
    k, m = c.score
    assert m == sum(1 for r in c.rows if r.within is not None)


def test_score_counts_the_counters_at_their_floor_and_the_real_zeros_the_model_moved(
        seq_comparison):
    _, kept, c = seq_comparison
    # Page counters the kernel moved less than once per thousand page allocations are not
    # scored; event counters (allocstall_*, pageoutrun, kswapd_*_hit_quickly, ...) are scored
    # from a real mean of 5 events; a real mean of 0 is a miss when the model's reaches the
    # floor (5, or the page floor for a page counter), and not scored below it.
    allocs = statistics.fmean(
        sum(v for k, v in rep["vmstat_delta"].items() if k.startswith("pgalloc_"))
        for rep in kept["reps"]
    )
    within, judged, small = 0, 0, []
    for r in c.rows:
        real = statistics.fmean(rep["vmstat_delta"][r.counter] for rep in kept["reps"])
        floor = 5 if r.counter in compare.EVENT_COUNTERS else allocs / 1000
        if real == 0:
            if r.sim_mean >= max(5, floor):
                judged += 1
                assert r.within is False and r.zero_real
            else:
                assert r.within is None
        elif real < floor:
            small.append(r)
        else:
            judged += 1
            within += 0.8 <= r.sim_mean / real <= 1.25
    assert c.score == (within, judged)
    assert all(r.small and r.within is None for r in small)
    assert {"pgactivate", "pgdeactivate"} <= {r.counter for r in small}  # a few dozen each
    # Event counters are scored in their own unit: kswapd_high_wmark_hit_quickly's 7 events
    # are far below a thousandth of the page allocations (330), the floor of the old rule.
    quick = {r.counter: r for r in c.rows}["kswapd_high_wmark_hit_quickly"]
    assert quick.within is not None and 5 <= quick.real_mean < allocs / 1000
    assert f"score: {within} of {judged} within [0.8, 1.25]" in report.text(c)


def test_counters_the_model_lacks_are_listed_as_not_modelled(seq_comparison):
    _, kept, c = seq_comparison
    listed = {name: value for name, value, _ in c.not_modelled}
    # The kernel's background compaction ran; the model has its proactive part only, shown beside.
    real_mig = statistics.fmean(rep["vmstat_delta"]["compact_migrate_scanned"] for rep in kept["reps"])
    assert real_mig > 0
    assert listed["compact_migrate_scanned"] == pytest.approx(real_mig)
    assert "compact_migrate_scanned" not in {r.counter for r in c.rows}
    text = report.text(c)
    assert "not scored" in text and "compact_migrate_scanned: real mean" in text
    # Beside it, what the model's compaction (proactive here) moved in the same two seeds.
    s, _, _ = seq_comparison
    sims, _ = compare.simulate(s, kept, 2)
    moved = statistics.fmean(x["pgmigrate_success"] for x in sims)
    why = {name: w for name, _, w in c.not_modelled}["pgmigrate_success"]
    assert why.endswith(f"the model's (proactive, or for its workloads' requests): {moved:.0f}")
    # The morning sitting's file-stream (2026-11-28) compacts proactively in the model: a
    # figure that is not zero.
    t = spec.load(VALIDATION / "sittings" / "2026-11-28" / "file-stream.toml")
    t_kept = store.load(t)
    t_why = {n: w for n, _, w in compare.compare(t, t_kept, seeds=1).not_modelled}
    t_moved = compare.simulate(t, t_kept, 1)[0][0]["pgmigrate_success"]
    assert t_moved > 0 and t_why["pgmigrate_success"].endswith(f": {t_moved:.0f}")
    js = c.as_json()
    assert any(x["counter"] == "compact_migrate_scanned" for x in js["not_modelled"])
    assert js["score"]["within"] == c.score[0]
    # Swap readahead is modelled: it is compared, and agrees on the sequential re-read.
    ra = {r.counter: r for r in c.rows}["swap_ra"]
    assert ra.real_mean > 100_000 and ra.within


def test_a_miss_the_boots_cannot_establish_is_told_apart():
    # Two boots 90 and 110: mean 100, sample sd 14.14, t(0.975, 1 df) = 12.706, so the 95 %
    # interval of the mean is 100 +- 127: a simulated 30 (0.3 of the mean) is outside the
    # range, but within it of a mean the two boots allow.
    r = compare.make_row("x", [90, 110], [30, 30])
    assert r.real_ci == pytest.approx(100 * 12.7062 * statistics.stdev([90, 110]) / 2**0.5 / 100,
                                      rel=1e-4)
    assert r.within is False and r.unresolved
    # Five tight boots pin the mean to about +-1 %: 0.7 of it is a miss they establish.
    r = compare.make_row("x", [99, 100, 101, 100, 100], [70] * 5)
    assert r.real_ci < 2 and r.within is False and not r.unresolved
    # A hit is never "unresolved"; one boot has no interval.
    assert not compare.make_row("x", [90, 110], [100, 100]).unresolved
    assert compare.make_row("x", [100], [30]).real_ci is None


def test_the_markdown_table_keeps_the_flag_of_a_miss_the_boots_cannot_establish(seq_comparison):
    _, _, c = seq_comparison
    c = dataclasses.replace(c, rows=c.rows + [compare.make_row("x", [90, 110], [30, 30])])
    md = report.markdown(c)
    assert "| OUT? " in md
    score = next(line for line in md.splitlines() if line.startswith("Score: "))
    unresolved = sum(1 for r in c.rows if r.within is False and r.unresolved)
    assert unresolved >= 1 and f"{unresolved} (OUT?)" in score


def test_make_row_edge_cases():
    # The kernel never moved it: a miss once the model moves it 5 times or more, else not judged.
    r = compare.make_row("x", [0, 0], [5, 5])
    assert r.ratio is None and r.within is False and r.zero_real
    r = compare.make_row("x", [0, 0], [4, 5])
    assert r.ratio is None and r.within is None and not r.zero_real
    # With a page floor above 5, the model's count must reach that floor.
    assert compare.make_row("x", [0, 0], [40, 40], floor=50).within is None
    assert compare.make_row("x", [0, 0], [60, 60], floor=50).within is False
    # Below the floor: shown, not scored.
    r = compare.make_row("x", [4, 5], [100, 100], floor=5)
    assert r.small and r.within is None
    r = compare.make_row("x", [100, 100], [100, 140])
    assert r.ratio == pytest.approx(1.2) and r.within and not r.spread_ok  # real spread 0
    from reclaimlab.validate.rows import spread

    assert spread([7]) == 0.0


def test_doc_markers_are_rewritten(tmp_path, seq_comparison):
    _, _, c = seq_comparison
    doc = tmp_path / "V.md"
    doc.write_text(f"# head\n\n{report.DOC_BEGIN}\nOLD-TABLE\n{report.DOC_END}\n\ntail\n")
    report.write_doc(doc, [c])
    text = doc.read_text()
    assert text.startswith("# head") and text.endswith("tail\n") and "OLD-TABLE" not in text
    assert "| anon-seq-reread |" in text and "#### anon-seq-reread" in text


# --- the serial console ------------------------------------------------------------------------

def test_parser_reads_a_captured_transcript():
    text = TRANSCRIPT.read_text()
    # Kernel messages may interleave outside the markers; they must be ignored.
    noisy = text.replace("@@reclaimlab:begin vmstat after@@",
                         "[   41.1] Out of memory: noise\r\n@@reclaimlab:begin vmstat after@@")
    rep = guest.rep_from_transcript(noisy, "t")
    assert rep["vmstat_after"]["pswpin"] == 157341 and rep["vmstat_before"]["pswpin"] == 0
    assert rep["vmstat_delta"]["swap_ra"] == 136598
    assert rep["meminfo_before"]["MemFree"] == 430588
    assert rep["guest_settings"]["thp"] == "always madvise [never]"
    assert rep["workloads"] == [
        {"name": "seq", "end_ns": 26091218700, "exit": 0, "killed_by_signal": 0}
    ]
    assert rep["wall_time_s"] == pytest.approx(26.0999534)
    assert [z["zone"] for z in compare.zone_layout(rep["zoneinfo_before"])] == ["DMA", "DMA32"]


def test_the_transcript_is_the_port_and_the_serial_console(tmp_path, monkeypatch):
    """The harness prints over a virtio-serial port (output.log) and the kernel over the
    serial console (console.log); a boot from before the port has only the console."""
    text = TRANSCRIPT.read_text()
    console = tmp_path / "console.log"
    console.write_text("[   41.1] Out of memory: Killed process 99 (noise)\n")
    guest.output_of(console).write_text(text)
    both = guest.read_transcript(console)
    assert both.startswith(text) and "Killed process 99" in both
    rep = guest.rep_from_transcript(both, "t")
    assert rep["vmstat_delta"]["swap_ra"] == 136598
    # Before the port: everything on the console.
    guest.output_of(console).unlink()
    console.write_text(text)
    assert guest.rep_from_transcript(guest.read_transcript(console), "t") == rep
    # The QEMU command line gives the guest the port and writes it beside the console.
    monkeypatch.setattr(kernel, "qemu_binary", lambda: "qemu-system-x86_64")
    argv = guest.qemu_command(spec.load(REF / "mix.toml"), kernel.Kernel(
        vmlinuz=Path("/k"), modules=Path("/m"), package="p", version="v", release="r"),
        Path("/i"), Path("/s"), Path("/d"), console, False)
    assert f"file,id=out,path={tmp_path / 'output.log'}" in argv
    assert "virtserialport,chardev=out,name=reclaimlab" in argv
    # And its init sends its output there once the port is up, with the phases at the end.
    init = initramfs.init_script(spec.load(REF / "mix.toml"), ["virtio_console.ko"], 1)
    assert 'exec >"$port" 2>&1' in init and "section phases /tmp/phases" in init
    assert "virtio_console" in initramfs.ROOT_MODULES


def test_the_trace_script_reads_the_port_too(tmp_path):
    """scripts/validate-trace.py summarises a boot from its port and console together: the
    third sitting's first traced boot stopped on a script that read the console alone ("no
    'uname' section"). This transcript has no kswapd trace, so it gets as far as saying so."""
    console = tmp_path / "console.log"
    console.write_text("[   41.1] Out of memory: Killed process 99 (noise)\n")
    guest.output_of(console).write_text(TRANSCRIPT.read_text())
    run = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "validate-trace.py"), "mix", "--console",
         str(console)], capture_output=True, text=True, cwd=ROOT, check=False)
    assert run.returncode == 1, run.stderr
    assert "the transcript has no trace of the workload" in run.stderr
    assert "uname" not in run.stderr


def test_the_kvm_probe_answers_from_its_console(tmp_path, monkeypatch):
    """The probe boot's own console says whether a KVM guest ran (no port: a bare initramfs)."""
    monkeypatch.setattr(kernel, "kvm_usable", lambda: True)
    monkeypatch.setattr(kernel, "qemu_binary", lambda: "qemu-system-x86_64")
    monkeypatch.setattr(initramfs, "build_probe", lambda out, busybox, mark: out)
    seen = []

    def qemu(argv, **kw):
        seen.append(argv)
        console = Path(argv[argv.index("-serial") + 1].removeprefix("file:"))
        console.write_text(printed)
        return subprocess.CompletedProcess(argv, 0, "", "")

    monkeypatch.setattr(guest.subprocess, "run", qemu)
    k = kernel.Kernel(vmlinuz=Path("/k"), modules=Path("/m"), package="p", version="v",
                      release="r")
    printed = "[ 0.5] booting\n@@reclaimlab:probe@@\n"
    assert guest.kvm_works(k, Path("/bb"), tmp_path) is True
    printed = "[ 0.5] booting, then nothing\n"
    assert guest.kvm_works(k, Path("/bb"), tmp_path) is False
    assert all("-enable-kvm" in a and "virtserialport" not in " ".join(a) for a in seen)


def test_the_delta_ends_where_the_workload_program_read_the_counters():
    """A workload program that prints the counters as its last workload ends (`vmstat NAME
    VALUE` lines) sets where the delta ends: the harness's own commands after it (which fault
    in swapped-out tmpfs pages) stay out. The later snapshot is kept beside it."""
    text = TRANSCRIPT.read_text()
    old = guest.rep_from_transcript(text, "t")
    assert "vmstat_end" not in old
    before = old["vmstat_before"]
    # The program read the counters before the harness's swap-ins: 136,500 pages read ahead.
    end = dict(old["vmstat_after"], swap_ra=before["swap_ra"] + 136_500, pswpin=157_000)
    lines = "".join(f"vmstat {k} {v}\r\n" for k, v in end.items())
    marked = text.replace("result elapsed_ns=", lines + "result elapsed_ns=", 1)
    rep = guest.rep_from_transcript(marked, "t")
    assert rep["vmstat_end"] == end
    assert rep["vmstat_delta"]["swap_ra"] == 136_500
    assert rep["vmstat_delta"]["pswpin"] == 157_000 - before["pswpin"]
    assert rep["vmstat_after"] == old["vmstat_after"]
    # Counters the program did not read are not guessed from the later snapshot.
    assert set(rep["vmstat_delta"]) == set(end) & set(before)


def test_parser_names_what_a_cut_transcript_lacks():
    text = TRANSCRIPT.read_text()
    cut = text[: text.index("@@reclaimlab:end vmstat after@@")]
    with pytest.raises(ValidateError, match="no 'vmstat after' section"):
        guest.rep_from_transcript(cut, "t")
    with pytest.raises(ValidateError, match="the guest failed: swapon /dev/vda"):
        guest.rep_from_transcript("boot\n@@reclaimlab:error swapon /dev/vda@@\n", "t")


# --- the guest's inputs --------------------------------------------------------------------------

def test_guest_spec_and_what_it_cannot_mirror(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text(
        'name = "s"\n[host]\nram = "512MiB"\nthp = true\n[swap]\nsize = "1GiB"\n'
        '[sysctl]\nswappiness = 100\n'
        '[[workload]]\nname = "a"\nstart = "1s"\n[workload.anon]\nsize = "64MiB"\n'
        'pattern = "zipf"\nzipf_alpha = 1.2\nthink = "2us"\n'
        '[[workload]]\nname = "k"\nduration = "2s"\n[workload.highorder]\norder = 3\n'
        '[[workload]]\nname = "f"\n[workload.file]\nsize = "16MiB"\nop = "write"\n'
    )
    s = spec.load(p)
    assert s.sysctls == {"swappiness": "100"} and s.thp
    lines = s.workload_spec.splitlines()
    assert "workload name=a start_ns=1000000000 duration_ns=0" in lines
    assert ("anon size=67108864 pattern=zipf alpha=1.2 passes=1 write_fraction=1.0 "
            "think_ns=2000 hold_ns=0") in lines
    assert "file size=16777216 op=write passes=1 hold_ns=0 path=/data/w2-f" in lines
    assert not any(x.startswith("thp ") for x in lines)
    assert any('gfp = "atomic"' in x and "cannot" in x for x in s.not_mirrored)
    init = initramfs.init_script(s, ["virtio.ko"], 3)
    assert "echo '100' > /proc/sys/vm/swappiness" in init
    assert "echo madvise > /sys/kernel/mm/transparent_hugepage/enabled" in init
    assert "/reclaimlab-workload run /workload.spec 3" in init
    # The trace buffer is taken before the "before" snapshot, so that the simulator's
    # kernel_used (MemTotal - MemFree before) includes it.
    assert init.index("buffer_size_kb") < init.index("snapshot before")
    assert init.index("snapshot before") < init.index("echo 1 > $T/tracing_on")
    # The standard boot traces kswapd0's scheduler events alone; all_tasks drops the filters.
    assert "sched_switch/filter" in init and "sched_wakeup/filter" in init
    every = initramfs.init_script(s, ["virtio.ko"], 3, all_tasks=True)
    assert "/filter" in every  # mm_page_alloc's order filter stays
    assert "sched_switch/filter" not in every and "sched_wakeup/filter" not in every
    assert "echo 1 > $T/events/sched/sched_switch/enable" in every
    # Shrinker calls are traced only when asked for, and before tracing starts.
    assert "mm_shrink_slab" not in init and "mm_shrink_slab" not in every
    shr = initramfs.init_script(s, ["virtio.ko"], 3, shrinkers=True)
    for e in ("mm_shrink_slab_start", "mm_shrink_slab_end"):
        assert shr.index(f"echo 1 > $T/events/vmscan/{e}/enable") < shr.index("echo 1 > $T/tracing_on")


def test_module_order_puts_dependencies_first(tmp_path):
    def ko(name, deps):
        (tmp_path / f"{name}.ko").write_bytes(b"\x7fELF\0license=GPL\0depends=" +
                                              ",".join(deps).encode() + b"\0")
    ko("ext4", ["jbd2", "mbcache", "crc16"])
    ko("jbd2", [])
    ko("mbcache", [])
    ko("crc16", [])
    ko("virtio-blk", ["virtio", "virtio_ring"])
    ko("virtio", ["virtio_ring"])
    ko("virtio_ring", [])
    names = [p.stem for p in initramfs.module_order(tmp_path, ("virtio_blk", "ext4"))]
    assert names == ["virtio_ring", "virtio", "virtio-blk", "jbd2", "mbcache", "crc16", "ext4"]
    with pytest.raises(ValidateError, match="module nope .* is not in"):
        initramfs.module_order(tmp_path, ("nope",))


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_workload_program_runs_a_small_spec_on_this_host(tmp_path):
    binary = kernel.build_workload(tmp_path)
    f = tmp_path / "data"
    (tmp_path / "spec").write_text(
        "workload name=a start_ns=0 duration_ns=0\n"
        "anon size=4194304 pattern=random alpha=1.0 passes=2 write_fraction=0.5 think_ns=0 hold_ns=0\n"
        "workload name=b start_ns=1000000 duration_ns=0\n"
        f"file size=1048576 op=read passes=2 hold_ns=0 path={f}\n"
        # Ended by its duration long before its passes are done.
        "workload name=c start_ns=0 duration_ns=1200000000\n"
        "anon size=4194304 pattern=random alpha=1.0 passes=1000000 write_fraction=0 "
        "think_ns=2000 hold_ns=0\n"
    )
    subprocess.run([binary, "prepare", tmp_path / "spec"], check=True, timeout=60)
    assert f.stat().st_size == 1 << 20
    out = subprocess.run([binary, "run", tmp_path / "spec", "1"], check=True, timeout=60,
                         capture_output=True, text=True).stdout
    work = guest.parse_workload(out)
    assert sorted(w["name"] for w in work["workloads"]) == ["a", "b", "c"]
    # Each anonymous thread's accesses: all of a's (2 passes over 1,024 pages); c made as many
    # as 1.2 s allowed at 2 us spun between two (its first 1,024 are faults), never more.
    acc = {t["workload"]: t["accesses"] for t in work["anon"]}
    assert acc["a"] == 2 * 1024 and set(acc) == {"a", "c"}
    assert 1024 < acc["c"] <= 1_200_000_000 // 2000
    assert all(w["exit"] == 0 for w in work["workloads"]) and work["elapsed_ns"] > 0
    # It read this machine's counters as its workloads ended: at least their own faults.
    assert work["vmstat_end"]["pgfault"] >= (4 << 20) // 4096
    # Its course: a sample at the start, one a second, and the state as the last one ended,
    # before the counters above were read.
    s = work["samples"]
    t = s["t_ns"]
    assert len(t) == 3 and t[0] < 200_000_000 and 950_000_000 <= t[1] < 1_150_000_000
    assert t[2] == work["elapsed_ns"] >= 1_200_000_000
    for name in ("nr_free_pages", "nr_inactive_anon", "pgmajfault", "pgscan_kswapd",
                 "slabs_scanned", "nr_dentry", "nr_inodes"):
        assert len(s[name]) == 3 and min(s[name]) >= 0, name
    assert s["nr_free_pages"][0] > 0 and s["nr_dentry"][0] > 0
    for name in ("pgmajfault", "pswpout", "pgscan_kswapd", "slabs_scanned"):
        assert s[name] == sorted(s[name]) and s[name][-1] <= work["vmstat_end"][name], name


def test_workload_samples_parse_as_columns():
    out = ("sample t_ns=0 nr_free_pages=100 pswpin=5\n"
           "sample t_ns=1000000000 nr_free_pages=90 pswpin=7 nr_dentry=3\n"
           "sample t_ns=bad nr_free_pages=1\n"
           "result elapsed_ns=1000000000\n")
    s = guest.parse_workload(out)["samples"]
    # A field first seen late is -1 before it; a malformed line is dropped.
    assert s == {"t_ns": [0, 1_000_000_000], "nr_free_pages": [100, 90], "pswpin": [5, 7],
                 "nr_dentry": [-1, 3]}


# --- errors through the command line --------------------------------------------------------------

def _cli(capsys, *argv):
    code = cli.main(["validate", *map(str, argv)])
    return code, capsys.readouterr().err


def test_missing_scenario_is_exit_2(capsys):
    code, err = _cli(capsys, "no/such.toml")
    assert code == 2 and err.strip() == "error: no/such.toml: no such file"


def test_malformed_scenario_is_exit_2_naming_the_place(tmp_path, capsys):
    p = tmp_path / "bad.toml"
    p.write_text('[host]\nram = "lots"\n')
    code, err = _cli(capsys, p)
    assert code == 2 and f"{p}:2:" in err and "Traceback" not in err


def test_scenario_without_kept_results_is_exit_2_with_the_fix(tmp_path, capsys):
    p = tmp_path / "fresh.toml"
    p.write_text((REF / "file-stream.toml").read_text())
    # Its measured wake-up latencies, which the simulator side reads, but no kept results.
    (tmp_path / "real").mkdir()
    shutil.copy(REF / "real" / "file-stream.kswapd-wakeup.json", tmp_path / "real")
    code, err = _cli(capsys, p)
    assert code == 2
    assert err.strip() == (
        f"error: {tmp_path}/real/fresh.json: no kept real-kernel results for {p}; "
        f"make them with `reclaimlab validate --boot {p}`"
    )


def test_missing_tool_is_one_line(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda _name: None)
    with pytest.raises(ValidateError, match=r"qemu-system-x86_64 not found \(Debian package "
                       r"qemu-system-x86\); run `bash scripts/validate-setup.sh`"):
        kernel.qemu_binary()


def test_json_format(capsys):
    code = cli.main(["validate", "--reps", "1", "--format", "json",
                     str(REF / "file-stream.toml")])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["scenario"] == "file-stream" and out["sim_seeds"] == 1
    assert out["score"]["compared"] == sum(
        1 for r in out["counters"]
        if (r["real_mean"] != 0 and not r["below_noise_floor"]) or r["miss_with_real_zero"]
    )


def test_overall_score_sums_the_scenarios(capsys):
    paths = [str(REF / f"{n}.toml") for n in ("file-stream", "mix")]
    code = cli.main(["validate", "--reps", "2", *paths])
    out = capsys.readouterr().out
    scores = [
        tuple(int(x) for x in line.split()[1:4:2])
        for line in out.splitlines()
        if line.startswith("score: ")
    ]
    assert code == 0 and len(scores) == 2
    k, m = sum(s[0] for s in scores), sum(s[1] for s in scores)
    assert f"overall score: {k} of {m} within [0.8, 1.25]" in out


def test_kswapd_wakeup_latency_from_the_guest_trace():
    trace = "\n".join([
        "# tracer: nop",
        "      reclaim-110   [001] d.... 101.000100: sched_wakeup: comm=kswapd0 pid=45 prio=120 target_cpu=000",
        "          <idle>-0     [000] d.... 101.000350: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=kswapd0 next_pid=45 next_prio=120",
        # A wake-up of kswapd while it already runs: no switch follows before the next one.
        "      reclaim-110   [001] d.... 101.002000: sched_wakeup: comm=kswapd0 pid=45 prio=120 target_cpu=000",
        "      reclaim-110   [001] d.... 101.005000: sched_wakeup: comm=kswapd0 pid=45 prio=120 target_cpu=000",
        "          <idle>-0     [000] d.... 101.006250: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=kswapd0 next_pid=45 next_prio=120",
    ])
    assert guest.kswapd_wakeup_latencies(trace) == [250.0, 1250.0]


KTRACE = """\
 reclaimlab-work-130 [001] d..1.  10.000000: mm_vmscan_wakeup_kswapd: nid=0 order=0 gfp_flags=GFP_HIGHUSER_MOVABLE
          <idle>-0   [000] dNh2.  10.000100: sched_wakeup: comm=kswapd0 pid=44 prio=120 target_cpu=000
          <idle>-0   [000] d..2.  10.000150: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=kswapd0 next_pid=44 next_prio=120
         kswapd0-44  [000] .....  10.000160: mm_vmscan_kswapd_wake: nid=0 order=0
         kswapd0-44  [000] .....  10.000300: mm_vmscan_lru_shrink_inactive: nid=0 nr_scanned=23 nr_reclaimed=23 nr_dirty=0 priority=12
 reclaimlab-work-130 [001] .....  10.000500: mm_vmscan_direct_reclaim_begin: order=0 gfp_flags=GFP_HIGHUSER_MOVABLE
         kswapd0-44  [000] d..2.  10.001150: sched_switch: prev_comm=kswapd0 prev_pid=44 prev_prio=120 prev_state=R+ ==> next_comm=rcu_preempt next_pid=9 next_prio=120
 reclaimlab-work-130 [001] .....  10.001500: mm_vmscan_direct_reclaim_end: nr_reclaimed=40
 reclaimlab-work-130 [001] .....  10.001600: mm_vmscan_direct_reclaim_begin: order=0 gfp_flags=GFP_HIGHUSER_MOVABLE
     rcu_preempt-9   [000] d..2.  10.001700: sched_switch: prev_comm=rcu_preempt prev_pid=9 prev_prio=120 prev_state=I ==> next_comm=kswapd0 next_pid=44 next_prio=120
 reclaimlab-work-130 [001] .....  10.001900: mm_vmscan_direct_reclaim_end: nr_reclaimed=32
         kswapd0-44  [000] d..2.  10.002700: sched_switch: prev_comm=kswapd0 prev_pid=44 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
    slab-user-131    [001] d..1.  10.003000: mm_vmscan_wakeup_kswapd: nid=0 order=0 gfp_flags=none
 reclaimlab-work-130 [001] .....  10.003100: mm_vmscan_direct_reclaim_begin: order=0 gfp_flags=GFP_HIGHUSER_MOVABLE
"""


def test_kswapd_trace_summary_counts_what_kswapd_was_doing():
    s = ktrace.summarise(KTRACE)
    assert s["kswapd_at_direct_reclaim"] == {
        "running": 1, "preempted": 1, "woken": 0, "sleeping": 1, "io_wait": 0,
    }
    # On a CPU 10.000150-10.001150 and 10.001700-10.002700.
    assert s["kswapd_on_cpu_s"] == pytest.approx(0.002)
    # One balance_pgdat run, from kswapd_wake to the voluntary sleep.
    assert s["kswapd_runs"]["n"] == 1
    assert s["kswapd_runs"]["median_us"] == pytest.approx(2540.0)
    assert (s["wakeup_kswapd"], s["wakeup_kswapd_gfp_none"]) == (2, 1)
    assert s["direct_reclaims"] == 2 and s["direct_reclaimed_median"] == 40
    assert s["traced_s"] == 0.003  # rounded to the millisecond
    # The request at 10.000000 waited 160 us for balance_pgdat, 10 us of it on kswapd's CPU;
    # the boost request at 10.003000 has no run after it.
    assert s["wakeup_to_balance"]["n"] == 1
    assert s["wakeup_to_balance"]["median_us"] == pytest.approx(160.0)
    assert s["switch_in_to_balance"]["median_us"] == pytest.approx(10.0)
    assert (s["kswapd_run_reclaimed_median"], s["kswapd_runs_reclaiming_under_32"]) == (23, 1)
    assert ktrace.wakeup_to_balance_us(KTRACE) == [160.0]


def test_kswapd_trace_summary_times_each_disk_request():
    trace = """\
         kswapd0-44  [000] .....  20.000000: block_rq_issue: 254,0 WS 131072 () 2048 + 256 [kswapd0]
         kswapd0-44  [000] .....  20.000100: block_rq_issue: 254,0 WS 4096 () 4096 + 8 [kswapd0]
 reclaimlab-work-130 [001] .....  20.000200: block_rq_issue: 254,0 RA 4096 () 777 + 8 [reclaimlab-work]
          <idle>-0   [000] d.h1.  20.000700: block_rq_complete: 254,0 R () 777 + 8 [0]
          <idle>-0   [000] d.h1.  20.002100: block_rq_complete: 254,0 WS () 4096 + 8 [0]
          <idle>-0   [000] d.h1.  20.005000: block_rq_complete: 254,0 WS () 2048 + 256 [0]
          <idle>-0   [000] d.h1.  20.005100: block_rq_complete: 254,0 FF () 0 + 0 [0]
"""
    s = ktrace.summarise(trace)["block_requests"]
    # Matched by device and sector, not by order: writes of 5.0 and 2.0 ms, 33 pages.
    assert s["254,0 write"]["n"] == 2 and s["254,0 write"]["pages"] == 33
    assert sorted([s["254,0 write"]["median_us"], s["254,0 write"]["p10_us"]]) == [2000.0, 5000.0]
    assert s["254,0 read"] == {"n": 1, "median_us": 500.0, "p10_us": 500.0, "p90_us": 500.0,
                               "mean_us": 500.0, "pages": 1}


def test_kswapd_trace_summary_times_each_reclaimers_block_plug():
    # kswapd's plug opens at its first write (block_plug) and is flushed by issuing its
    # requests; a read of the workload's between them is not the plug's.
    trace = """\
         kswapd0-44  [000] .....  30.000000: block_plug: [kswapd0]
 reclaimlab-work-130 [001] .....  30.001000: block_rq_issue: 254,0 R 4096 () 777 + 64 [reclaimlab-work]
         kswapd0-44  [000] .....  30.010000: block_rq_issue: 254,0 W 524288 () 2048 + 1024 [kswapd0]
         kswapd0-44  [000] .....  30.010050: block_rq_issue: 254,0 W 4096 () 9000 + 16 [kswapd0]
         kswapd0-44  [000] .....  30.020000: block_plug: [kswapd0]
         kswapd0-44  [000] .....  30.024000: block_rq_issue: 254,0 W 8192 () 9016 + 64 [kswapd0]
"""
    s = ktrace.summarise(trace)["block_plugs"]
    assert list(s) == ["kswapd"]
    k = s["kswapd"]
    # Open 10 ms and 4 ms; the flushes wrote 128 + 2 and 8 pages.
    assert (k["open"]["n"], k["open"]["mean_us"]) == (2, 7000.0)
    assert (k["flushes"], k["pages_per_flush_mean"], k["pages_per_flush_median"]) == (2, 69.0, 69.0)


def test_kswapd_per_page_cost_by_what_became_of_the_batch():
    def batch(t0: float, us: float, scanned: int, rec: int, keep: int, act: int = 0) -> str:
        t1 = t0 + us * scanned / 1e6
        return (f"         kswapd0-44  [000] .....  {t0:.6f}: mm_vmscan_lru_isolate: "
                f"isolate_mode=0 classzone=3 order=0 nr_requested=32 nr_scanned={scanned} "
                f"nr_skipped=0 nr_taken={scanned} lru=inactive_anon\n"
                f"         kswapd0-44  [000] .....  {t1:.6f}: mm_vmscan_lru_shrink_inactive: "
                f"nid=0 nr_scanned={scanned} nr_reclaimed={rec} nr_dirty=0 nr_writeback=0 "
                f"nr_congested=0 nr_immediate=0 nr_activate_anon={act} nr_activate_file=0 "
                f"nr_ref_keep={keep} nr_unmap_fail=0 priority=6 flags=RECLAIM_WB_ANON\n")
    trace = (batch(1.0, 3.0, 32, 0, 32) + batch(2.0, 5.0, 32, 0, 32)  # kept
             + batch(3.0, 100.0, 32, 0, 0)  # written
             + batch(4.0, 8.0, 32, 32, 0)  # freed
             + batch(5.0, 50.0, 32, 10, 12)  # mixed: not counted
             + batch(6.0, 1.0, 8, 8, 0))  # under 16 pages: not counted
    s = ktrace.summarise(trace)["kswapd_per_page"]
    assert s == {"kept": {"batches": 2, "median_us": 4.0},
                 "written": {"batches": 1, "median_us": 100.0},
                 "freed": {"batches": 1, "median_us": 8.0}}


def test_the_race_figures_of_a_traced_boot():
    # Read-ahead pages of one task 15 us apart within a window; the other task's and the
    # gap between windows (1 ms) are not counted, nor are allocations without the read-ahead
    # mask. kswapd's first LRU batch comes 120 us after its switch onto the CPU.
    ra = "GFP_NOFS|__GFP_HIGHMEM|__GFP_NOWARN|__GFP_NORETRY|__GFP_COMP|__GFP_MOVABLE"

    def alloc(t: float, pid: int, gfp: str = ra) -> str:
        return (f" reclaimlab-work-{pid} [000] .....  {t:.6f}: mm_page_alloc: page=0000000011"
                f" pfn=0x449 order=0 migratetype=1 gfp_flags={gfp}")
    lines = [alloc(1.0 + i * 15e-6, 131) for i in range(4)]
    lines += [alloc(1.001 + i * 15e-6, 131) for i in range(3)]
    lines += [alloc(1.0000075, 132), alloc(1.002, 131, "GFP_HIGHUSER_MOVABLE"),
              alloc(1.0020100, 131, "GFP_HIGHUSER_MOVABLE")]
    lines += [
        "          <idle>-0   [001] d..2.  2.000000: sched_switch: prev_comm=swapper/1 prev_pid=0"
        " prev_prio=120 prev_state=R ==> next_comm=kswapd0 next_pid=44 next_prio=120",
        "         kswapd0-44  [001] .....  2.000030: mm_vmscan_kswapd_wake: nid=0 order=0",
        "         kswapd0-44  [001] .....  2.000120: mm_vmscan_lru_isolate: isolate_mode=0"
        " classzone=3 order=0 nr_requested=23 nr_scanned=23 nr_skipped=0 nr_taken=23"
        " lru=inactive_file",
        "         kswapd0-44  [001] .....  2.000300: mm_vmscan_lru_isolate: isolate_mode=0"
        " classzone=3 order=0 nr_requested=32 nr_scanned=32 nr_skipped=0 nr_taken=32"
        " lru=inactive_file",
    ]
    lines.sort(key=lambda line: float(line.split(": ")[0].split()[-1]))
    s = ktrace.summarise("\n".join(lines))
    assert s["readahead_page_gap"]["n"] == 5
    assert s["readahead_page_gap"]["median_us"] == pytest.approx(15.0)
    assert s["switch_in_to_first_batch"]["n"] == 1
    assert s["switch_in_to_first_batch"]["median_us"] == pytest.approx(120.0)
    assert s["switch_in_to_balance"]["median_us"] == pytest.approx(30.0)


def test_costs_scale_a_single_boots_figures_by_the_pace_of_the_scored_boots(tmp_path):
    # A page freed cost kswapd 7 us in the scored boots and 3.5 us in the single boot: that
    # boot ran twice as fast, and its race figures count double.
    src = spec.load(REF / "file-stream.toml")
    (tmp_path / "real").mkdir()
    scenario = tmp_path / "file-stream.toml"
    scenario.write_text(src.path.read_text())
    per_page = {"kept": {"batches": 0, "median_us": 0}, "written": {"batches": 0, "median_us": 0}}
    single = {"scenario": "file-stream", "trace": {
        "kswapd_per_page": per_page | {"freed": {"batches": 500, "median_us": 3.5}},
        "readahead_page_gap": {"n": 900, "median_us": 12.0},
        "switch_in_to_first_batch": {"n": 300, "median_us": 80.0}}}
    (tmp_path / "real" / "file-stream.trace.json").write_text(json.dumps(single))
    for name in ("file-stream.kswapd-wakeup.json", "file-stream.zoneinfo"):
        (tmp_path / "real" / name).write_text((REF / "real" / name).read_text())
    s = spec.load(scenario)
    rep = {"kswapd_trace": {"kswapd_per_page": per_page | {"freed": {"batches": 800,
                                                                     "median_us": 7.0}}}}
    got = costs.from_boots(s, [rep, rep, rep])
    assert got["readahead_alloc"] == pytest.approx(24.0)
    assert got["balance_start"] == pytest.approx(160.0)
    # Scored boots that carry the figures themselves are taken as they are.
    rep["kswapd_trace"] |= {"readahead_page_gap": {"n": 900, "median_us": 19.0},
                            "switch_in_to_first_batch": {"n": 300, "median_us": 140.0}}
    got = costs.from_boots(s, [rep, rep, rep])
    assert (got["readahead_alloc"], got["balance_start"]) == (19.0, 140.0)


def test_workload_time_splits_each_tasks_time_on_and_off_its_vcpu():
    def sw(t: float, prev: str, pp: int, state: str, nxt: str, np_: int) -> str:
        return (f"          <idle>-0   [001] d..2.  {t:.6f}: sched_switch: prev_comm={prev} "
                f"prev_pid={pp} prev_prio=120 prev_state={state} ==> next_comm={nxt} "
                f"next_pid={np_} next_prio=120")
    w = "reclaimlab-work"
    trace = "\n".join([
        sw(1.0, "swapper/1", 0, "R", w, 130),
        # 0.5 s on the vCPU, then preempted by kswapd for 0.1 s.
        sw(1.5, w, 130, "R", "kswapd0", 44),
        sw(1.6, "kswapd0", 44, "S", w, 130),
        f" {w}-130 [001] .....  1.700000: mm_vmscan_direct_reclaim_begin: order=0 gfp_flags=GFP_HIGHUSER_MOVABLE",
        f" {w}-130 [001] .....  1.800000: mm_vmscan_direct_reclaim_end: nr_reclaimed=32",
        # Its first swap-in read, then an I/O wait of 0.2 s and 0.05 s runnable after it.
        f" {w}-130 [001] .....  1.900000: block_rq_issue: 254,0 R 32768 () 800 + 64 [{w}]",
        sw(2.0, w, 130, "D", "swapper/1", 0),
        # Another task's wake-up is not this one's.
        "          <idle>-0   [000] dNh2.  2.100000: sched_wakeup: comm=kworker/0:1 pid=7 prio=120 target_cpu=000",
        f"          <idle>-0   [001] dNh2.  2.200000: sched_wakeup: comm={w} pid=130 prio=120 target_cpu=001",
        sw(2.25, "swapper/1", 0, "R", w, 130),
        sw(2.75, w, 130, "S", "swapper/1", 0),
        # Another workload task (mix's second process), on the other vCPU.
        sw(1.0, "swapper/0", 0, "R", w, 131),
        sw(1.25, w, 131, "S", "swapper/0", 0),
    ])
    t = ktrace.workload_time(trace)
    assert list(t) == ["130", "131"]  # busiest first
    a = t["130"]
    assert a["on_cpu_s"] == pytest.approx(0.5 + 0.4 + 0.5)
    assert a["on_cpu_before_swap_in_s"] == pytest.approx(0.5)
    assert a["preempted_s"] == pytest.approx(0.1 + 0.05)
    assert a["io_wait_s"] == pytest.approx(0.2)
    assert (a["direct_reclaim_s"], a["direct_reclaims"]) == (pytest.approx(0.1), 1)
    assert a["direct_reclaim_before_swap_in_s"] == pytest.approx(0.1)
    assert a["swap_in_reads"] == 1 and a["first_swap_in_at_s"] == pytest.approx(0.9)
    assert t["131"]["on_cpu_s"] == pytest.approx(0.25) and "first_swap_in_at_s" not in t["131"]
    # The kswapd summary of the same trace sees no wake-up of kswapd in the others'.
    assert guest.kswapd_wakeup_latencies(trace) == []


def test_kept_traces_name_their_scenarios():
    paths = sorted(VALIDATION.glob("**/real/*.trace.json"))
    assert len(paths) >= 10  # this sitting's six, and earlier ones'
    for path in paths:
        data = json.loads(path.read_text())
        assert path.name == f"{data['scenario']}.trace.json"
        t = data["trace"]
        assert sum(t["kswapd_at_direct_reclaim"].values()) == t["direct_reclaims"]
        assert data["vmstat_delta"]["allocstall_movable"] >= t["direct_reclaims"] - 5


def test_each_scenario_draws_kswapd_wakeups_from_latencies_measured_in_its_guest():
    for path in OWN_COSTS:
        s = spec.load(path)
        samples = s.document["cost"]["wakeup_latency_samples"]
        measured = json.loads((path.parent / samples).read_text())
        # Measured in a boot of this scenario, or anon-seq-reread's (the first measurement).
        assert measured["scenario"] in (s.name, "anon-seq-reread"), path.name
        assert len(measured["latencies_us"]) >= 50
        assert measured["mean_us"] == pytest.approx(
            statistics.fmean(measured["latencies_us"]), abs=0.1
        )


def test_pooled_waits_are_the_ones_the_kept_boots_recorded():
    # `scripts/validate-wakeup.py SCENARIO --kept` pools the waits (wakeup_kswapd to
    # balance_pgdat, or with the default `--from` sched_wakeup to sched_switch) that the kept
    # boots themselves recorded: the samples of such a scenario are exactly those, in boot
    # order, so they go with the boots it is scored against.
    pooled_ones = 0
    for path in SITTINGS:
        s = spec.load(path)
        measured = json.loads(
            (path.parent / s.document["cost"]["wakeup_latency_samples"]).read_text()
        )
        if "boots" not in measured:
            continue  # a separate boot's sched_wakeup latencies (docs/VALIDATION.md)
        pooled_ones += 1
        kept = store.load(s)
        assert measured["boots"] == len(kept["reps"]) and measured["date"] == kept["date"][:10]
        field = "kswapd_wakeup_us" if "each sched_wakeup" in measured["what"] else "kswapd_wait_us"
        pooled = [w for rep in kept["reps"] for w in rep[field]]
        assert measured["latencies_us"] == pooled, path.name
        assert measured["wakeups"] == len(pooled) >= 50
    assert pooled_ones >= 6  # file-write and the 2026-11-27 sitting


def test_file_writes_cost_factor_is_the_kept_pace_of_its_day():
    # The 2026-11-27 file-write's costs (kept with that sitting) are the 2026-11-23 reference
    # scenarios' times the guest's pace on the day of its boots: the geometric mean of the kept
    # pace boots' run lengths over the reference boots'.
    pace = json.loads((VALIDATION / "sittings/2026-11-27/pace-boots.json").read_text())
    ref_dir, fw_dir = VALIDATION / "sittings/2026-11-23", VALIDATION / "sittings/2026-11-27"
    ratios = []
    for name, boot in pace["boots"].items():
        ref = store.load(spec.load(ref_dir / f"{name}.toml"))
        ratios.append(boot["wall_time_s"] / statistics.fmean(r["wall_time_s"] for r in ref["reps"]))
    factor = statistics.geometric_mean(ratios)
    assert 1.8 < factor < 2.2
    def ns(path: Path, key: str) -> float:
        text = spec.load(path).document["cost"][key]
        m = re.fullmatch(r"([0-9.]+)(ns|us|ms)", text)
        return float(m.group(1)) * {"ns": 1, "us": 1e3, "ms": 1e6}[m.group(2)]

    for key in ("anon_touch", "file_hit", "file_miss", "scan_mapped", "swapout_submit"):
        assert ns(fw_dir / "file-write.toml", key) == pytest.approx(
            ns(ref_dir / "file-stream.toml", key) * round(factor)), key


def test_anon_randoms_swap_readahead_happens_during_the_workload():
    # The kept evidence behind docs/VALIDATION.md's account of anon-random's swap_ra: three
    # boots whose workload program read the counters itself as its workloads ended.
    kept = json.loads((VALIDATION / "sittings/2026-11-27/swap-ra-boots.json").read_text())
    plain = [b for b in kept["boots"] if "unlocked" in b["program"]]
    locked = [b for b in kept["boots"] if "unlocked" not in b["program"]]
    assert len(plain) == len(locked) == 2

    def delta(boot: dict, snap: str, name: str) -> int:
        return boot[snap][name] - boot["vmstat_before"][name]

    # The model of that account: the 2026-11-23 reference, without the reclaimer's plug.
    s = spec.load(VALIDATION / "sittings/2026-11-23/anon-random.toml")
    sims, _ = compare.simulate(s, store.load(s), 1)
    for boot in kept["boots"]:
        during = delta(boot, "vmstat_end", "swap_ra")
        # The harness's commands after the program exits add under 5 % of the readahead.
        assert during <= delta(boot, "vmstat_after", "swap_ra") < 1.05 * during
        # Every swap-in the program's faults did not ask for is a readahead page.
        assert delta(boot, "vmstat_end", "pswpin") - delta(boot, "vmstat_end", "pgmajfault") == during
        # Hundreds of pages, far above the model's few.
        assert during > 50 * max(1, sims[0]["swap_ra"])
    # With the program's own pages locked (it holds them: nr_mlock) the readahead stays: the
    # locked boots' range overlaps the unlocked ones' (980 and 626 against 587 and 893).
    ra = {id(b): delta(b, "vmstat_end", "swap_ra") for b in kept["boots"]}
    assert all(b["vmstat_end"]["nr_mlock"] > 200 for b in locked)
    assert all(b["vmstat_end"]["nr_mlock"] == 0 for b in plain)
    assert max(ra[id(b)] for b in locked) > min(ra[id(b)] for b in plain)
    assert max(ra[id(b)] for b in plain) > min(ra[id(b)] for b in locked)
    # The traced boot timed the swap device's writes: each page stays under writeback for
    # about a millisecond after its request is issued, over ten times the model's 40 us.
    writes = kept["boots"][-1]["block_requests"]["254,0 write"]
    assert writes["pages"] == delta(kept["boots"][-1], "vmstat_end", "pswpout")
    assert writes["median_us"] > 10 * 40


def test_the_sampled_wakeup_latency_reaches_the_simulator(tmp_path):
    # The 2026-11-23 sitting's mix, whose samples have a tail of multi-millisecond wake-ups.
    day = VALIDATION / "sittings/2026-11-23"
    s = spec.load(day / "mix.toml")
    kept = json.loads((day / "real" / "mix.json").read_text())
    zoneinfo = day / "real" / "mix.zoneinfo"
    scenario = compare.sim_scenario(s, zoneinfo, kept["guest_settings"])
    # The relative path is resolved against the scenario's directory, not the caller's.
    got = Path(scenario["cost"]["wakeup_latency_samples"])
    assert got.is_absolute() and got == (day / "real" / "mix.kswapd-wakeup.json").resolve()
    sampled = [reclaimlab.run(scenario, seed=k).vmstat for k in (1, 2)]
    constant = dict(scenario, cost={
        k: v for k, v in scenario["cost"].items() if k != "wakeup_latency_samples"
    })
    constant["cost"]["wakeup_latency"] = "270us"  # about the samples' mean
    flat = reclaimlab.run(constant, seed=1).vmstat
    # A constant latency near the mean leaves the allocator above the min watermark; the
    # measured tail (a few wake-ups in a hundred take milliseconds) lets it reach direct
    # reclaim, differently for each seed (with the guest's vCPUs shared, seed 1 not at all).
    assert flat["allocstall_movable"] == 0
    stalls = [v["allocstall_movable"] for v in sampled]
    assert max(stalls) > 0 and len(set(stalls)) == 2
    assert sampled[0]["pgscan_direct"] != sampled[1]["pgscan_direct"]


def test_sim_out_writes_the_scenario_the_comparison_simulated(tmp_path, capsys):
    # The written file, run as any scenario, gives the comparison's own seed-1 counters: a user
    # can trace it, or change one key and see what moves.
    code = cli.main(["validate", str(REF / "thp-fault.toml"), "--reps", "1",
                     "--sim-out", str(tmp_path / "sim"), "--format", "json"])
    out = capsys.readouterr().out
    assert code == 0
    written = tmp_path / "sim" / "thp-fault.toml"
    assert written.read_text().startswith("# thp-fault as `reclaimlab validate` simulates it")
    mine = reclaimlab.run(str(written), seed=1).vmstat
    row = {r["counter"]: r for r in json.loads(out)["counters"]}["pgscan_kswapd"]
    assert row["sim"] == [mine["pgscan_kswapd"]] and mine["pgscan_kswapd"] > 100_000


def test_sim_out_into_an_unwritable_place_is_exit_2(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    code, err = _cli(capsys, REF / "thp-fault.toml", "--reps", "1",
                     "--sim-out", blocker)
    assert code == 2 and "--sim-out: cannot write" in err and "Traceback" not in err


def _us(value: str) -> float:
    return spec.duration_ns(value) / 1e3


def test_the_validation_scenarios_take_the_costs_their_boots_measured():
    # Each scenario's reclaim costs and device latencies are what its own scored boots'
    # traces say (validate/costs.py, `scripts/validate-costs.py`), not a fit.
    seen = set()
    for path in OWN_COSTS:
        s = spec.load(path)
        measured = costs.from_boots(s, store.load(s)["reps"])
        doc = s.document
        for key, us in measured.items():
            section, _, name = key.rpartition(".")
            value = doc[section or "cost"][name]
            assert _us(value) == pytest.approx(us, abs=0.6), (path.name, key)
            seen.add(key)
        if "unmap" in measured:
            written = sum(_us(doc["cost"][k]) for k in ("scan_mapped", "unmap", "swapout_submit"))
            assert written > 10 * _us(doc["cost"]["scan_mapped"])
    assert {"scan_mapped", "unmap", "scan_unmapped", "swap.read_latency", "swap.write_latency",
            "disk.read_latency", "readahead_alloc", "balance_start"} <= seen


def test_the_validation_workloads_cost_what_their_tasks_boot_measured():
    # The workload's costs times what it did (the `--tasks` boot's own vmstat delta) come to
    # its time on its vCPU in that boot, within 2 %.
    def cpu(name: str) -> list[dict]:
        s = spec.load(REF / f"{name}.toml")
        return costs.workload_cpu(costs.load_tasks(s))

    def cost(name: str) -> dict[str, float]:
        doc = spec.load(REF / f"{name}.toml").document["cost"]
        return {k: _us(v) for k, v in doc.items() if k != "wakeup_latency_samples"}

    pages = {"file-stream": 262_144, "mix": 196_608, "thp-fault": 196_608}
    for name, n in pages.items():
        reader = cpu(name)[0]
        c = cost(name)
        assert reader["pgpgin_pages"] == pytest.approx(n, abs=2)
        assert (c["file_hit"] + c["file_miss"]) * n / 1e6 == pytest.approx(reader["cpu_s"], rel=0.02)
    # file-write: each page of the uncached file is added to the page cache and written.
    c, writer = cost("file-write"), cpu("file-write")[0]
    assert (c["file_miss"] + c["file_write"]) * 262_144 / 1e6 == pytest.approx(writer["cpu_s"], rel=0.02)
    # mix's working set: 65,536 first touches and five more passes over resident pages.
    c, db = cost("mix"), cpu("mix")[1]
    assert (c["anon_fault"] * 65_536 + c["anon_touch"] * 5 * 65_536) / 1e6 == pytest.approx(
        db["cpu_s"], rel=0.02)
    # anon-seq-reread: the writing pass (before the first swap-in) and the re-reading pass,
    # seven swap-cache hits and one swap-in for each eight pages.
    c, seq = cost("anon-seq-reread"), cpu("anon-seq-reread")[0]
    assert c["anon_fault"] * 163_840 / 1e6 == pytest.approx(seq["cpu_before_swap_in_s"], rel=0.02)
    reread = (7 * c["swapcache_fault"] + c["major_fault"]) / 8
    assert reread * 163_840 / 1e6 == pytest.approx(
        seq["cpu_s"] - seq["cpu_before_swap_in_s"], rel=0.02)
    # anon-random: its first touches (two uniform passes: 1 - e^-2 of the pages), swap-ins
    # and swap-cache hits, from its tasks boot's counters.
    c, rnd = cost("anon-random"), cpu("anon-random")[0]
    tasks = costs.load_tasks(spec.load(REF / "anon-random.toml"))["vmstat_delta"]
    first = 163_840 * (1 - math.exp(-2))
    minor = tasks["pgfault"] - first - tasks["pgmajfault"]
    total = (c["anon_fault"] * first + c["major_fault"] * tasks["pgmajfault"]
             + c["swapcache_fault"] * minor) / 1e6
    assert total == pytest.approx(rnd["cpu_s"], rel=0.02)
    # Its costs are anon-seq-reread's in the same proportions.
    a = cost("anon-seq-reread")
    for k in ("swapcache_fault", "major_fault"):
        assert c[k] / c["anon_fault"] == pytest.approx(a[k] / a["anon_fault"], rel=0.02)


def test_the_anon_seq_reread_costs_agree_with_the_measurements_kept_of_their_boots():
    # The per-page figures behind anon-seq-reread's reclaim costs, from the console
    # transcripts of its traced boots (kept in measurements-2026-11-28.json: those boots
    # predate the per-page summary in each rep).
    m = json.loads((REF / "real/measurements-2026-11-28.json").read_text())
    doc = spec.load(REF / "anon-seq-reread.toml").document
    cost, swap = doc["cost"], doc["swap"]
    per_page = m["anon-seq-reread"]["kswapd_per_page"]
    assert _us(cost["scan_mapped"]) == pytest.approx(per_page["kept"]["median_us"], abs=0.05)
    written = _us(cost["scan_mapped"]) + _us(cost["unmap"]) + _us(cost["swapout_submit"])
    assert written == pytest.approx(per_page["written"]["median_us"], rel=0.01)
    freed = _us(cost["scan_unmapped"]) + _us(cost["free_page"])
    assert freed == pytest.approx(per_page["freed"]["median_us"], rel=0.05)
    # The plug holds at most the virtio disk's largest request (2,032 sectors seen, 1 MiB).
    assert swap["max_request"] == "1MiB"
    assert m["anon-seq-reread"]["block_plugs"]["pages_per_flush_median"] <= 256


def test_each_anonymous_workloads_pace_is_shown_beside_the_models_and_not_scored():
    # The workload program's `anon` lines, per boot, against the simulated threads' accesses.
    kept = {"reps": [{"anon_threads": [{"workload": "app", "thread": 0, "accesses": a}]}
                     for a in (400_000, 600_000)]}
    summaries = [{"threads": [{"thread": "app/anon", "accesses": s},
                              {"thread": "other/stat0", "accesses": 7}]}
                 for s in (1_000_000, 1_200_000)]
    (row,) = compare.pace_rows(kept, summaries)
    assert row.counter == "app accesses" and row.real == [400_000, 600_000]
    assert row.sim == [1_000_000, 1_200_000] and row.ratio == pytest.approx(2.2)
    assert row.within is None  # a check of the costs, never in a score
    # Boots from before the program counted (or one boot without the count): nothing shown.
    assert compare.pace_rows({"reps": [{}, kept["reps"][0]]}, summaries) == []
    c = compare.Comparison("x", 2, 2, kept, [], [], [])
    c.pace = [row]
    assert "app accesses: real 500000" in report.text(c)
    assert c.as_json()["accesses"][0]["sim_mean"] == pytest.approx(1_100_000)


def test_shrinker_calls_summed_by_shrinker_and_paired_by_task():
    """shrinktrace.shrinkers reads 6.1's mm_shrink_slab_start/_end (guest and simulator alike):
    a start is closed by the same task's end, even with another task's call in between."""
    def start(comm, pid, t, sym, ptr, nr, gfp, items, delta, total, prio):
        return (f"  {comm}-{pid} [000] ..... {t:.6f}: mm_shrink_slab_start: {sym} {ptr}: nid: 0 "
                f"objects to shrink {nr} gfp_flags {gfp} cache items {items} delta {delta} "
                f"total_scan {total} priority {prio}")

    def end(comm, pid, t, sym, ptr, unused, new, left, ret):
        return (f"  {comm}-{pid} [000] ..... {t:.6f}: mm_shrink_slab_end: {sym} {ptr}: nid: 0 "
                f"unused scan count {unused} new scan count {new} total_scan {left} "
                f"last shrinker return val {ret}")

    sb, xb = "super_cache_scan+0x0/0x1a0", "xfs_buftarg_shrink_scan+0x0/0x90 [xfs]"
    trace = "\n".join([
        start("kswapd0", 44, 1.0, sb, "00000000aaaa", 3000, "GFP_KERNEL", 60000, 900, 1800, 3),
        # A creator's call inside a transaction, interleaved on the other vCPU: it cannot scan.
        start("reclaimlab-work", 147, 1.1, sb, "00000000aaaa", 100, "GFP_NOFS|__GFP_NOWARN",
              59000, 20, 30, 9),
        end("reclaimlab-work", 147, 1.2, sb, "00000000aaaa", 100, 130, 30, 0),
        end("kswapd0", 44, 1.3, sb, "00000000aaaa", 3000, 1200, 0, 250),
        start("kswapd0", 44, 1.4, xb, "00000000bbbb", 0, "GFP_KERNEL", 64, 2, 2, 12),
        end("kswapd0", 44, 1.5, xb, "00000000bbbb", 0, 2, 2, 0),
        # An end whose start the trace missed is ignored.
        end("reclaimlab-work", 150, 1.6, sb, "00000000aaaa", 0, 0, 0, 7),
    ])
    s = shrinktrace.shrinkers(trace)
    assert list(s) == ["super_cache_scan 00000000aaaa", "xfs_buftarg_shrink_scan 00000000bbbb"]
    a = s["super_cache_scan 00000000aaaa"]
    assert (a["calls"], a["kswapd_calls"], a["nofs_calls"]) == (2, 1, 1)
    assert (a["first_items"], a["max_items"]) == (60000, 60000)
    assert (a["delta"], a["deferred_taken"], a["planned"]) == (920, 3100, 1830)
    # Planned less what each call left: kswapd's 1800, the creator's none.
    assert (a["scanned"], a["freed"], a["backlog_end"]) == (1800, 250, 1200)
    b = s["xfs_buftarg_shrink_scan 00000000bbbb"]
    assert (b["shrinker"], b["calls"], b["scanned"], b["backlog_end"]) == (
        "xfs_buftarg_shrink_scan", 1, 0, 2)


def test_swap_layout_replays_the_swap_disks_requests():
    """ktrace.swap_layout: a slot is out from its write until a read takes it back; a one-page
    read counts the out slots of its aligned 8-slot block (not itself, not the header)."""
    def rq(t, rw, sector, sectors, dev="254,0"):
        return (f"  kswapd0-44 [000] ..... {t:.6f}: block_rq_issue: {dev} {rw} 4096 () "
                f"{sector} + {sectors} [kswapd0]")

    trace = "\n".join([
        rq(1.0, "W", 8, 56),              # slots 1-7 out
        rq(1.1, "W", 8, 8, dev="254,16"),  # the data disk: not swap
        rq(2.0, "R", 24, 8),              # slot 3 alone: 1, 2, 4, 5, 6, 7 out
        rq(2.1, "R", 32, 16),             # slots 4-5 together
        rq(2.2, "R", 8, 8),               # slot 1 alone: 2, 6, 7 out
        rq(2.3, "R", 64, 72),             # nine pages
    ])
    s = ktrace.swap_layout(ktrace._events(trace))
    assert s["read_requests_by_pages"] == {"1": 2, "2": 1, "3-4": 0, "5-8": 0, "more": 1}
    assert s["one_page_reads_by_out_neighbours"] == [0, 0, 0, 1, 0, 0, 1, 0]
    assert s["one_page_read_out_neighbours_mean"] == 4.5
    # Every traced boot's summary keeps it.
    assert ktrace.summarise(trace)["swap_layout"] == s


def test_a_boot_that_hangs_keeps_what_its_kernel_said(tmp_path):
    """The console is scratch (the next boot overwrites it), so an aborted boot's why, which
    the sitting keeps, names the kernel's own report of being stuck (as the first sitting
    under MGLRU met: memcg-max's fourth boot)."""
    from reclaimlab.validate import guest

    console = tmp_path / "console.log"
    console.write_text(
        "[    1.0] Run /init as init process\n"
        "[   52.840322] watchdog: BUG: soft lockup - CPU#1 stuck for 45s! [init:1]\n"
        "[   80.838821] watchdog: BUG: soft lockup - CPU#1 stuck for 71s! [init:1]\n"
        "[  808.838982] watchdog: BUG: soft lockup - CPU#1 stuck for 749s! [init:1]\n")
    said = guest.kernel_complaint(console)
    assert said.startswith("; the guest's kernel reported \"[   52.840322] watchdog: BUG: soft")
    assert "stuck for 749s! [init:1]\" (3 such lines)" in said
    console.write_text("[    1.0] Run /init as init process\n@@reclaimlab:begin x@@\n")
    assert guest.kernel_complaint(console) == ""
    assert guest.kernel_complaint(tmp_path / "missing.log") == ""
