"""The filesystem and machine-size prediction scenarios in `validate` (docs/VALIDATION.md,
"Filesystem and machine-size scenarios"): their guest set-up as pre-registered, the counters
they score parsed from a real guest's /proc text, the comparison's rows, the workload program's
creators and walkers, and the listing of scenarios no sitting has booted yet."""

from __future__ import annotations

import dataclasses
import json
import subprocess
from pathlib import Path

import pytest

import reclaimlab
from reclaimlab import cli
from reclaimlab.validate import (compare, fscount, guest, initramfs, kernel, sittings, spec,
                                 store)

from test_validate_protocol import FIRST, REF, SECOND

ROOT = Path(__file__).resolve().parents[2]
VALIDATION = ROOT / "validation"
PREDICT = VALIDATION / "predict"
# The last sitting before these scenarios were added (the reference until the protocol's first
# sitting, 2026-11-29, booted them all).
BEFORE = VALIDATION / "sittings" / "2026-11-28"
# The protocol's first sitting (FIRST) booted them all; the cgroup scenarios came after it and
# were first booted in the second (SECOND), the touch and filesystems' calibration scenarios
# after that, first booted in the third (2026-11-30); the reference now (REF) booted them all.
# /proc/meminfo and /proc/slabinfo of a Debian 6.1 guest before and after an XFS storm (the
# trial boot of xfs-create-walk-100, cut to a few caches), as its console carried them.
SAMPLE = Path(__file__).with_name("data") / "validate-fs-console.log"

FS = [f"{fs}-create-walk-{p}" for fs in ("ext4", "xfs") for p in (100, 200, 500)]
NEW = sorted(FS + ["mix-1g", "mix-2g"])
# The cgroup prediction scenarios, added after the 2026-11-29 sitting (docs/VALIDATION.md,
# "Cgroup scenarios").
CGROUP = ["memcg-high", "memcg-low", "memcg-max"]


def test_the_fs_scenarios_are_the_pre_registered_set_ups():
    for name in FS:
        s = spec.load(PREDICT / f"{name}.toml")
        fs, pressure = name.split("-")[0], name.rsplit("-", 1)[1]
        assert s.role == "prediction" and s.fs_type == fs
        assert s.sysctls["vfs_cache_pressure"] == pressure
        assert (s.ram_bytes, s.cpus, s.swap_bytes, s.thp) == (512 << 20, 2, 1 << 30, False)
        assert s.data_bytes == spec.FS_IMAGE_BYTES == 2 << 30
        lines = s.workload_spec.splitlines()
        creators = [x for x in lines if x.startswith("fsmark ")]
        walkers = [x for x in lines if x.startswith("stat ")]
        # Two creators of 15,000 empty files, one of 10,000 files of 4 KiB; one walker.
        assert sorted((x.split()[1], x.split()[3], x.split()[5]) for x in creators) == [
            ("index=0", "files=10000", "file_size=4096"),
            ("index=0", "files=15000", "file_size=0"),
            ("index=1", "files=15000", "file_size=0")]
        assert all("rss=0 root=/data" in x for x in creators)
        assert walkers == ["stat index=0 threads=1 passes=2 think_ns=0"]
        starts = {x.split()[1]: x.split()[2] for x in lines if x.startswith("workload ")}
        assert starts == {"name=app": "start_ns=0", "name=empty": "start_ns=8000000000",
                          "name=small": "start_ns=8000000000", "name=walk": "start_ns=40000000000"}
        # The guest's filesystem is mkfs's; the simulator's [fs] keys are listed as such.
        assert any(n.startswith("[fs] keys other than type") for n in s.not_mirrored)
    # The three pressures of a filesystem differ in nothing the guest runs but the sysctl.
    for fs in ("xfs", "ext4"):
        specs = [spec.load(PREDICT / f"{fs}-create-walk-{p}.toml") for p in (100, 200, 500)]
        assert len({x.workload_spec.split("\n", 1)[1] for x in specs}) == 1
        assert len({x.content_hash for x in specs}) == 3


def test_the_machine_size_scenarios_scale_mix_with_the_ram():
    mix = spec.load(PREDICT / "mix.toml")
    for name, factor in (("mix-1g", 2), ("mix-2g", 4)):
        s = spec.load(PREDICT / f"{name}.toml")
        assert s.role == "prediction" and s.fs_type is None
        assert (s.ram_bytes, s.swap_bytes) == (factor * mix.ram_bytes, factor * mix.swap_bytes)
        sizes = [int(f.split("=")[1]) for line in s.workload_spec.splitlines()
                 for f in line.split() if f.startswith("size=")]
        base = [int(f.split("=")[1]) for line in mix.workload_spec.splitlines()
                for f in line.split() if f.startswith("size=")]
        assert sizes == [factor * b for b in base]


def test_an_xfs_guest_loads_xfs_and_mounts_its_fresh_disk_as_xfs():
    xfs = spec.load(PREDICT / "xfs-create-walk-200.toml")
    ext4 = spec.load(PREDICT / "ext4-create-walk-200.toml")
    mix = spec.load(PREDICT / "mix.toml")
    assert initramfs.roots_for(xfs) == initramfs.ROOT_MODULES + ("xfs",)
    assert initramfs.roots_for(ext4) == initramfs.roots_for(mix) == initramfs.ROOT_MODULES
    init = initramfs.init_script(xfs, ["xfs.ko"], 1)
    assert "mount -t xfs -o noatime /dev/vdb /data" in init
    assert "echo '200' > /proc/sys/vm/vfs_cache_pressure" in init
    assert 'section "slabinfo $1" /proc/slabinfo' in init
    assert "mount -t ext4 -o noatime /dev/vdb /data" in initramfs.init_script(mix, [], 1)
    # A scenario without [fs] keeps its content hash: its kept boots still load.
    assert spec.content_hash(mix) == mix.content_hash


def _sample() -> guest.Transcript:
    return guest.parse_transcript(SAMPLE.read_text())


def test_slab_and_meminfo_counters_parse_from_a_real_guests_proc_text():
    t = _sample()
    before = fscount.parse_slabinfo(t.sections["slabinfo before"])
    after = fscount.parse_slabinfo(t.sections["slabinfo after"])
    # The header lines are not caches; a cache's first number is its active objects.
    assert "slabinfo" not in before and "#" not in before and "name" not in before
    first = next(x for x in t.sections["slabinfo after"].splitlines() if x.startswith("dentry "))
    assert after["dentry"] == int(first.split()[1])
    assert after["xfs_inode"] > before.get("xfs_inode", 0)
    mb = guest.parse_meminfo(t.sections["meminfo before"])
    ma = guest.parse_meminfo(t.sections["meminfo after"])
    assert fscount.parse_meminfo(t.sections["meminfo after"]) == ma
    rep = {"meminfo_before": mb, "meminfo_after": ma,
           "slabinfo_before": before, "slabinfo_after": after}
    rows = fscount.real(rep, "xfs")
    assert rows == {
        "SReclaimable": ma["SReclaimable"] - mb["SReclaimable"],
        "SUnreclaim": ma["SUnreclaim"] - mb["SUnreclaim"],
        "slab dentry": after["dentry"] - before["dentry"],
        "slab xfs_inode": after["xfs_inode"] - before.get("xfs_inode", 0)}
    # A boot from before slabinfo was captured has no such rows.
    assert fscount.real({"meminfo_before": mb, "meminfo_after": ma}, "xfs") is None


def test_the_transcript_parser_keeps_the_slabinfo_and_the_fs_threads():
    text = SAMPLE.read_text()
    rep = guest.rep_from_transcript(text, "sample")
    assert rep["slabinfo_after"]["xfs_inode"] == fscount.parse_slabinfo(
        _sample().sections["slabinfo after"])["xfs_inode"]
    created = [t for t in rep["fs_threads"] if "created" in t]
    walked = [t for t in rep["fs_threads"] if "lookups" in t]
    assert sorted(t["created"] for t in created) == [10000, 15000, 15000]
    # That boot's storm outlasted the walk's start at 40 s (a loaded host): the first pass
    # found 21,813 of the 40,000 files, the second 36,258 (the small files' creator was still
    # at work), each pass over what was logged when it began.
    assert walked == [{"workload": "walk", "thread": 0, "stat_passes": 2, "lookups": 58071,
                       "first_pass_files": 21813}]
    ends = {w["name"]: w["end_ns"] for w in rep["workloads"]}
    assert ends["walk"] < ends["small"] and ends["empty"] > 40e9


def test_the_model_side_reads_its_meminfo_and_slabinfo_outputs():
    meminfo = ("MemTotal:         500000 kB\nSReclaimable:      61234 kB\n"
               "SUnreclaim:         789 kB\n")
    tail = " : tunables 0 0 0 : slabdata 1 1 0\n"
    slabinfo = ("slabinfo - version: 2.1\n# name <active_objs> ...\n"
                "dentry             40000  40020    192   21    1" + tail
                + "ext4_inode_cache   39000  39004   1176   13    4" + tail)
    got = fscount.simulated({"meminfo": meminfo, "slabinfo": slabinfo}, "ext4")
    assert got == {"SReclaimable": 61234, "SUnreclaim": 789, "slab dentry": 40000,
                   "slab ext4_inode_cache": 39000}


def test_an_fs_scenario_scores_the_shrinker_and_slab_rows_at_their_floors():
    s = spec.load(PREDICT / "xfs-create-walk-100.toml")

    def rep(slabs, srec, dentry):
        return {"vmstat_delta": {"pgalloc_normal": 100_000, "slabs_scanned": slabs,
                                 "kswapd_inodesteal": 0, "pginodesteal": 3, "pswpout": 500},
                "meminfo_before": {"SReclaimable": 10_000, "SUnreclaim": 20_000},
                "meminfo_after": {"SReclaimable": 10_000 + srec, "SUnreclaim": 20_300},
                "slabinfo_before": {"dentry": 5_000}, "slabinfo_after": {"dentry": 5_000 + dentry,
                                                                         "xfs_inode": 30_000}}
    kept = {"reps": [rep(9_000, 60_000, 40_000), rep(11_000, 62_000, 42_000)],
            "zoneinfo_path": "/nonexistent"}
    sims = [{"pgalloc_normal": 100_000, "slabs_scanned": 12_000, "kswapd_inodesteal": 10,
             "pginodesteal": 0, "pswpout": 0, "SReclaimable": 70_000, "SUnreclaim": 100,
             "slab dentry": 40_000, "slab xfs_inode": 60_000}]
    rows = {r.counter: r for r in compare.build(s, kept, sims).rows}
    assert rows["slabs_scanned"].ratio == pytest.approx(1.2) and rows["slabs_scanned"].within
    # The kernel never moved it, the model did (10 events): a miss; 3 events: under the floor.
    assert rows["kswapd_inodesteal"].within is False and rows["kswapd_inodesteal"].zero_real
    assert rows["pginodesteal"].within is None
    assert rows["SReclaimable"].ratio == pytest.approx(70_000 / 61_000)
    # SUnreclaim grew 300 kB, under the page floor in kB (4 x 100 pages): shown, not scored.
    assert rows["SUnreclaim"].small and rows["SUnreclaim"].within is None
    assert rows["slab dentry"].within and rows["slab xfs_inode"].ratio == pytest.approx(2.0)
    assert rows["slab xfs_inode"].within is False
    assert rows["pswpout"].within is False  # the vmstat rows are there as for any scenario
    # Without [fs] none of these rows exist, and slabs_scanned stays "not modelled".
    mix = spec.load(PREDICT / "mix.toml")
    c = compare.build(mix, kept, sims)
    assert not {r.counter for r in c.rows} & {"slabs_scanned", "SReclaimable", "slab dentry"}
    assert "slabs_scanned" in {n for n, _, _ in c.not_modelled}


def test_the_workload_program_creates_and_walks_as_the_model_does(tmp_path):
    binary = kernel.build_workload(tmp_path)
    fsmark = "fsmark index={} threads={} files={} files_per_dir=100 file_size={} think_ns=0 rss={} "
    (tmp_path / "spec").write_text(
        "workload name=empty start_ns=0 duration_ns=0\n"
        + fsmark.format(0, 2, 250, 0, 8192) + f"root={tmp_path}\n"
        + fsmark.format(1, 2, 250, 0, 0) + f"root={tmp_path}\n"
        + "workload name=small start_ns=0 duration_ns=0\n"
        + fsmark.format(0, 1, 120, 5000, 0) + f"root={tmp_path}\n"
        + "workload name=walk start_ns=2000000000 duration_ns=0\n"
        "stat index=0 threads=2 passes=3 think_ns=0\n"
        "stat index=1 threads=2 passes=3 think_ns=0\n"
    )
    out = subprocess.run([binary, "run", tmp_path / "spec", "1"], check=True, timeout=60,
                         capture_output=True, text=True).stdout
    work = guest.parse_workload(out)
    assert all(w["exit"] == 0 for w in work["workloads"])
    # Creator k of T puts file i in d<k + (i / files_per_dir) * T>; two workloads share the
    # namespace (the small files' only thread writes into d0 and d1 beside the empty ones').
    counts = {d.name: len(list(d.iterdir())) for d in tmp_path.glob("d*")}
    assert counts == {"d0": 200, "d1": 120, "d2": 100, "d3": 100, "d4": 50, "d5": 50}
    names = sorted(p.name for p in (tmp_path / "d1").iterdir())
    assert all(len(n) == 40 for n in names)
    small = [p for p in (tmp_path / "d1").iterdir() if p.name.startswith("w01t00")]
    assert len(small) == 20 and all(p.stat().st_size == 5000 for p in small)
    # The walkers split every pass over the 620 files between them, three passes each.
    walked = [t for t in work["fs"] if "lookups" in t]
    assert sorted(t["lookups"] for t in walked) == [930, 930]
    assert all(t["first_pass_files"] == 620 for t in walked)


def test_a_sitting_from_before_them_lists_them_not_yet_sat(capsys):
    # The first sitting booted every one of them; the cgroup scenarios came after it, the
    # second booted every scenario due then, and the touch and filesystems' calibration
    # scenarios came after it; the reference (the fifth) booted them all.
    fs_cal = ["anon-touch", "ext4-create-stat", "xfs-create-stat"]
    assert sittings.reference(VALIDATION) == REF
    assert not [p for p in sittings.scenarios(VALIDATION) if sittings.not_yet_sat(p, REF)]
    assert sorted(p.stem for p in sittings.scenarios(VALIDATION)
                  if sittings.not_yet_sat(p, SECOND)) == fs_cal
    assert sittings.is_complete(SECOND, VALIDATION)
    assert sorted(p.stem for p in sittings.scenarios(VALIDATION)
                  if sittings.not_yet_sat(p, FIRST)) == sorted(CGROUP + fs_cal)
    assert sorted(sittings.due(FIRST, VALIDATION)) == sorted(
        p.stem for p in sittings.scenarios(VALIDATION) if p.stem not in CGROUP + fs_cal)
    assert sittings.is_complete(FIRST, VALIDATION)
    # The sitting before them: not due there, not yet sat, and it stays complete.
    assert sorted(p.stem for p in sittings.scenarios(VALIDATION)
                  if sittings.not_yet_sat(p, BEFORE)) == sorted(NEW + CGROUP + fs_cal)
    assert sittings.due(BEFORE, VALIDATION) == list(sittings.DUE_BEFORE_RECORDS)
    assert sittings.is_complete(BEFORE, VALIDATION)
    # One of them against that sitting: a one-line error naming the way to boot it.
    code = cli.main(["validate", "--sitting", str(BEFORE), str(PREDICT / "mix-2g.toml")])
    err = capsys.readouterr().err
    assert code == 2 and "mix-2g not yet sat" in err and "validate-real.sh" in err
    assert "Traceback" not in err


def test_a_new_sittings_record_lists_what_is_due_in_it(tmp_path):
    for d in ("calibrate", "predict"):
        (tmp_path / d).mkdir()
        for p in (VALIDATION / d).glob("*.toml"):
            (tmp_path / d / p.name).write_text(p.read_text())
    new = tmp_path / "sittings" / "2026-12-01"
    due = sittings.begin(new)
    assert sorted(due) == sorted(p.stem for p in sittings.scenarios(tmp_path))
    assert set(NEW) <= set(due)
    # A scenario added after it began is not due in it, and is not yet sat there.
    (tmp_path / "predict" / "later.toml").write_text((PREDICT / "mix.toml").read_text())
    assert "later" not in sittings.due(new, tmp_path)
    assert sittings.not_yet_sat(tmp_path / "predict" / "later.toml", new)
    # Every due scenario kept: complete once finished, although "later" has no boots.
    (new / "real").mkdir()
    for name in due:
        (new / "real" / f"{name}.json").write_text(json.dumps({"reps": [{}] * 5}))
    assert sittings.finish(new, tmp_path, 5) == []
    assert sittings.reference(tmp_path) == new


def test_the_profile_gives_the_filesystem_and_the_walker_their_costs(tmp_path):
    from reclaimlab.validate import profile

    prof = profile.load(VALIDATION / "profiles" / "debian-6.1-tcg.toml")
    slowdown = prof["profile"]["slowdown"]
    xfs = spec.load(PREDICT / "xfs-create-walk-100.toml").document
    merged = profile.merge(xfs, prof, "xfs")
    # The sections' own keys: native 20 us a create, 1 us a cached lookup, times the slowdown.
    # (The profile prints the slowdown to 4 decimals: 20 us times its rounding is up to 1 ns,
    # and the cost is rounded to the ns.)
    assert spec.duration_ns(prof["fs"]["create_cost"]) == pytest.approx(20e3 * slowdown, abs=2)
    assert spec.duration_ns(prof["stat"]["hit_cost"]) == pytest.approx(1e3 * slowdown, abs=1)
    # An XFS scenario takes XFS's own, which xfs-create-stat measured (the profile's
    # [fs.xfs] and [stat.xfs]), and the disk's request.
    assert merged["fs"]["create_cost"] == prof["fs"]["xfs"]["create_cost"]
    # (measured, so not the native figure times the slowdown: 296 us against 320 on the
    # 2026-12-01 reference, 433 against 425 on the 2026-11-30 one)
    assert merged["fs"]["create_cost"] != prof["fs"]["create_cost"]
    assert merged["fs"]["io_latency"] == prof["disk"]["read_latency"]
    assert merged["fs"]["type"] == "xfs" and merged["fs"]["ags"] == 4
    walk = next(w for w in merged["workload"] if "stat" in w)
    assert walk["stat"]["hit_cost"] == prof["stat"]["xfs"]["hit_cost"]
    # No filesystem is made for a scenario without one.
    assert "fs" not in profile.merge(spec.load(PREDICT / "mix.toml").document, prof, "mix")
    # The baseline drops them with the other costs; a speed factor scales them.
    base = profile.without_costs(merged)
    assert set(base["fs"]) == {"type", "ags"} and "hit_cost" not in next(
        w for w in base["workload"] if "stat" in w)["stat"]
    fast = profile.scaled(prof, 0.5, tmp_path)
    assert spec.duration_ns(fast["fs"]["create_cost"]) == pytest.approx(
        spec.duration_ns(prof["fs"]["create_cost"]) / 2, abs=1)
    assert spec.duration_ns(fast["stat"]["hit_cost"]) == pytest.approx(
        spec.duration_ns(prof["stat"]["hit_cost"]) / 2, abs=1)
    # A scenario that sets one of them itself is refused.
    with pytest.raises(Exception, match=r"\[fs\] create_cost is set by the scenario"):
        profile.merge(xfs | {"fs": xfs["fs"] | {"create_cost": "1us"}}, prof, "xfs")


def test_the_guest_mirror_shares_its_vcpus_among_its_threads():
    # Three creators, the application and kswapd on two vCPUs: the guest runs them in turns,
    # so the mirrored scenario queues them (cpu_contention), where the simulator's default
    # would give each busy thread a CPU of its own and finish the storm several times sooner.
    s = spec.load(PREDICT / "xfs-create-walk-100.toml")
    kept = store.load(s)
    mirror = compare.kept_sim_scenario(s, kept)
    assert mirror["host"]["cpu_contention"] is True
    alone = json.loads(json.dumps(mirror))
    alone["host"]["cpu_contention"] = False
    shared, own = (reclaimlab.run(x, seed=1).summary for x in (mirror, alone))
    waits = [c["runq_wait_ms"] for c in shared["cpus"]]
    assert min(waits) > 0 and all(c["runq_wait_ms"] == 0 for c in own["cpus"])
    # The storm's 40,000 creates share the vCPUs with the application: at least twice as long.
    storm = [x["fsmark"]["finished_ns"] - 8e9 for x in (shared, own)]
    assert storm[0] > 2 * storm[1]
    # A scenario that says otherwise is taken at its word (and listed as not mirrored).
    doc = json.loads(json.dumps(s.document))
    doc.setdefault("host", {})["cpu_contention"] = False
    said = compare.sim_scenario(dataclasses.replace(s, document=doc),
                                Path(kept["zoneinfo_path"]), kept["guest_settings"])
    assert said["host"]["cpu_contention"] is False


def test_set_changes_the_simulators_side_alone(capsys):
    """`validate --set KEY=VALUE`: a sensitivity sweep's point. The key is set on the scenario
    the simulator runs, over the profile's and the mirror's own settings; the guest's kept boots
    (their hash) and the scenario's other keys stay as they are."""
    s = spec.load(PREDICT / "xfs-create-walk-200.toml")
    kept = store.load(s)
    from reclaimlab.validate import profile
    prof = profile.load(profile.default_path(VALIDATION))
    plain = compare.kept_sim_scenario(s, kept, prof)
    point = dataclasses.replace(s, sim_set={"fs.log_inodes": 100_000,
                                            "host.cpu_contention": False})
    swept = compare.kept_sim_scenario(point, kept, prof)
    assert (plain["fs"].get("log_inodes"), swept["fs"]["log_inodes"]) == (None, 100_000)
    assert (plain["host"]["cpu_contention"], swept["host"]["cpu_contention"]) == (True, False)
    for doc in (plain, swept):
        doc["fs"].pop("log_inodes", None)
        doc["host"].pop("cpu_contention")
    assert swept == plain
    assert spec.content_hash(point) == spec.content_hash(s)
    # A list element that does not exist, an unknown key, --boot: an error naming it, exit 2.
    for bad, said in (("workload.nope.think=1us", "no element named 'nope'"),
                      ("fs.log_inode=1", "did you mean `log_inodes`")):
        code = cli.main(["validate", "--reps", "1", "--set", bad,
                         str(PREDICT / "xfs-create-walk-200.toml")])
        assert code == 2 and said in capsys.readouterr().err
    assert cli.main(["validate", "--boot", "--set", "fs.log_inodes=1",
                     str(PREDICT / "xfs-create-walk-200.toml")]) == 2
    assert "cannot go with --boot" in capsys.readouterr().err
