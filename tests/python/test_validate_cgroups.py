"""Pressure stall information and memory cgroups in `validate` (validate/cgroups.py): what the
guest's /init makes and reads, how a boot's record keeps it, and the rows it adds beside the
simulator's files."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
from pathlib import Path

import pytest

from reclaimlab.validate import cgroups, compare, guest, initramfs, kernel, spec
from reclaimlab.validate.errors import ValidateError

ROOT = Path(__file__).resolve().parents[2]
MIX = ROOT / "validation" / "predict" / "mix.toml"

PRESSURE = ("some avg10=1.25 avg60=0.40 avg300=0.08 total=123456\n"
            "full avg10=0.50 avg60=0.10 avg300=0.02 total=65432\n")


def test_pressure_lines_parse_as_the_kernel_prints_them():
    p = cgroups.parse_pressure(PRESSURE)
    assert p["some"] == {"avg10": 1.25, "avg60": 0.40, "avg300": 0.08, "total": 123456}
    assert p["full"]["total"] == 65432 and set(p) == {"some", "full"}
    # A cgroup's memory.pressure has the same two lines; a file the kernel left empty, none.
    assert cgroups.parse_file("memory.pressure", PRESSURE) == p
    assert cgroups.parse_pressure("") == {}
    assert cgroups.parse_file("memory.max", "max\n") is None
    assert cgroups.parse_file("memory.peak", "8388608\n") == 8388608
    assert cgroups.parse_file("memory.events", "low 0\nhigh 3\nmax 12\noom 1\noom_kill 1\n") == {
        "low": 0, "high": 3, "max": 12, "oom": 1, "oom_kill": 1}


def _doc(*cgroup_tables, workloads=()):
    return {"cgroup": list(cgroup_tables), "workload": list(workloads)}


def test_cgroups_are_made_parents_first_with_their_files_in_writing_order():
    doc = _doc({"name": "pod", "parent": "kube", "memory": {"max": "100M", "low": "20M",
                                                             "swap": {"max": 0}}},
               {"name": "kube", "memory": {"high": "300M", "oom": {"group": 1}}},
               workloads=[{"name": "w", "cgroup": "pod"}])
    got = spec._cgroups(Path("x.toml"), doc)
    assert got == [("kube", [("memory.high", "300M"), ("memory.oom.group", "1")]),
                   ("kube/pod", [("memory.low", "20M"), ("memory.max", "100M"),
                                 ("memory.swap.max", "0")])]
    # A workload in a cgroup with children cannot run in the guest (cgroup v2: leaves only).
    with pytest.raises(ValidateError, match="workload w joins cgroup kube, which has children"):
        spec._cgroups(Path("x.toml"), _doc(*doc["cgroup"], workloads=[{"name": "w",
                                                                        "cgroup": "kube"}]))


def _cgroup_spec() -> spec.GuestSpec:
    s = spec.load(MIX)
    cgs = [("kube", [("memory.high", "300M")]), ("kube/pod", [("memory.max", "100M")])]
    return dataclasses.replace(s, cgroups=cgs, content_hash="")


def test_init_mounts_cgroup2_makes_the_cgroups_and_reads_them_around_the_workload():
    s = _cgroup_spec()
    text = initramfs.init_script(s, [], 1)
    lines = text.splitlines()
    i = lines.index("mount -t cgroup2 none /sys/fs/cgroup || fail 'mount cgroup2'")
    # The memory controller is enabled at the root and in kube (a parent), not in its leaf.
    assert lines[i + 1].startswith("echo +memory > /sys/fs/cgroup/cgroup.subtree_control")
    assert any(x.startswith("echo +memory > /sys/fs/cgroup/kube/cgroup.subtree_control")
               for x in lines)
    assert not any("kube/pod/cgroup.subtree_control" in x for x in lines)
    assert "echo '100M' > /sys/fs/cgroup/kube/pod/memory.max || fail 'kube/pod memory.max=100M'" \
        in lines
    # Made before the swap and the data disk, read in each snapshot with the system's pressure.
    assert i < lines.index(next(x for x in lines if x.startswith("mkswap")))
    assert '    section "cgroup kube/pod memory.stat $1" /sys/fs/cgroup/kube/pod/memory.stat' \
        in lines
    assert '    [ -r /proc/pressure/memory ] && section "pressure $1" /proc/pressure/memory' \
        in lines
    # Without [[cgroup]] nothing of it, but the system's pressure all the same.
    plain = initramfs.init_script(spec.load(MIX), [], 1)
    assert "cgroup" not in plain and "/proc/pressure/memory" in plain
    # The cgroups are part of what the guest runs: another hash than the scenario without.
    assert spec.content_hash(s) != spec.load(MIX).content_hash


def _sections(psi_after_total: int) -> dict[str, str]:
    sec = {"pressure before": "some avg10=0.00 avg60=0.00 avg300=0.00 total=1000\n"
                              "full avg10=0.00 avg60=0.00 avg300=0.00 total=400\n",
           "pressure after": f"some avg10=2.00 avg60=1.00 avg300=0.20 total={psi_after_total}\n"
                             "full avg10=1.00 avg60=0.50 avg300=0.10 total=20400\n"}
    for when, stat, events, peak in (
            ("before", "anon 0\nfile 0\npgfault 0\npgscan 0\n", "low 0\nhigh 0\nmax 0\noom 0\n"
             "oom_kill 0\n", "0"),
            ("after", "anon 52428800\nfile 4096\npgfault 30000\npgscan 9000\n",
             "low 0\nhigh 0\nmax 40\noom 0\noom_kill 0\n", "104857600")):
        sec[f"cgroup kube/pod memory.stat {when}"] = stat
        sec[f"cgroup kube/pod memory.events {when}"] = events
        sec[f"cgroup kube/pod memory.peak {when}"] = peak + "\n"
        sec[f"cgroup kube/pod memory.max {when}"] = "104857600\n"
    return sec


def test_a_boots_record_keeps_the_pressure_and_each_cgroups_files():
    rec = cgroups.from_sections(_sections(51000))
    assert rec["psi_after"]["some"]["total"] == 51000
    after = rec["cgroups"]["kube/pod"]["after"]
    assert after["memory.stat"]["pgscan"] == 9000 and after["memory.peak"] == 104857600
    assert cgroups.real_psi(rec) == {"psi some total (us)": 50000, "psi full total (us)": 20000}
    rows = cgroups.real_cgroup(rec, "kube/pod")
    assert rows["kube/pod memory.events max"] == 40
    assert rows["kube/pod memory.stat anon"] == 52428800  # an amount, as read after
    assert rows["kube/pod memory.stat pgscan"] == 9000  # a counter, after less before
    # A boot from before /init read them has none of it.
    assert cgroups.from_sections({"vmstat before": ""}) == {}
    assert cgroups.real_psi({}) is None


def test_the_rows_set_the_boots_beside_the_models_files():
    s = _cgroup_spec()
    reps = []
    for total in (51000, 61000):
        rep = {"vmstat_delta": {"pgalloc_normal": 200_000}} | cgroups.from_sections(
            _sections(total))
        reps.append(rep)
    kept = {"reps": reps, "zoneinfo_path": "/nonexistent"}
    files = {"cgroup/pod/memory.stat": "anon 37748736\nfile 0\npgfault 33000\npgscan 9900\n",
             "cgroup/pod/memory.events": "low 0\nhigh 0\nmax 50\noom 0\noom_kill 0\n",
             "cgroup/pod/memory.peak": "104857600\n"}
    sim = {"pgalloc_normal": 200_000} | cgroups.sim_psi(
        {"pressure": {"memory": {"some": {"total_us": 66000}, "full": {"total_us": 20000}}}})
    sim |= cgroups.sim_cgroup(files, "kube/pod")
    rows = {r.counter: r for r in compare.build(s, kept, [sim]).rows}
    some = rows["psi some total (us)"]
    assert some.real == [50000, 60000] and some.ratio == pytest.approx(1.2) and some.within
    assert some.as_json()["timing_sensitive"] and not rows["kube/pod memory.peak"].as_json()[
        "timing_sensitive"]
    assert rows["kube/pod memory.events max"].ratio == pytest.approx(1.25)
    # 36 MiB against the guest's 50 MiB: 0.72, a miss.
    assert rows["kube/pod memory.stat anon"].ratio == pytest.approx(0.72)
    assert rows["kube/pod memory.stat anon"].within is False
    # The model's file named by the cgroup's path is read as well as by its name.
    assert cgroups.sim_cgroup({"cgroup/kube/pod/memory.peak": "7\n"}, "kube/pod") == {
        "kube/pod memory.peak": 7}
    # Boots that did not read the pressure add no stall rows, whatever the model says.
    old = {"reps": [{"vmstat_delta": {"pgalloc_normal": 200_000}}] * 2,
           "zoneinfo_path": "/nonexistent"}
    assert not [r for r in compare.build(spec.load(MIX), old, [sim]).rows
                if r.counter.startswith("psi")]


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_the_workload_program_joins_its_cgroup_before_it_runs(tmp_path):
    binary = kernel.build_workload(tmp_path)
    cg = tmp_path / "cg"
    cg.mkdir()
    (cg / "cgroup.procs").write_text("")
    (tmp_path / "spec").write_text(
        f"workload name=a start_ns=0 duration_ns=0 cgroup={cg}\n"
        "anon size=65536 pattern=sequential alpha=1.0 passes=1 write_fraction=1 think_ns=0 "
        "hold_ns=0\n")
    out = subprocess.run([binary, "run", tmp_path / "spec", "1"], check=True, timeout=60,
                         capture_output=True, text=True).stdout
    # Writing 0 to cgroup.procs moves the writer: the workload's process wrote it, once.
    assert (cg / "cgroup.procs").read_text() == "0\n"
    assert guest.parse_workload(out)["workloads"][0]["exit"] == 0
    # A cgroup directory that is not there stops the program with its error line.
    (tmp_path / "bad").write_text("workload name=b start_ns=0 duration_ns=0 cgroup=/nonexistent/x\n"
                                  "anon size=65536 pattern=sequential alpha=1.0 passes=1 "
                                  "write_fraction=1 think_ns=0 hold_ns=0\n")
    bad = subprocess.run([binary, "run", tmp_path / "bad", "1"], timeout=60,
                         capture_output=True, text=True).stdout
    assert "@@reclaimlab:error workload: /nonexistent/x/cgroup.procs" in bad
