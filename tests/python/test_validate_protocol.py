"""The validation protocol (docs/VALIDATION.md, "Protocol"): calibration and prediction
scenarios, one guest profile derived from the calibration boots alone, the reference sitting,
the scoring rules, and the prediction score `validate --all` gives on the kept data (no boot),
with docs/VALIDATION.md's generated tables as they are now."""

from __future__ import annotations

import json
import shutil
import statistics
import tomllib
from pathlib import Path

import pytest

from reclaimlab import cli
from reclaimlab.validate import (calibrate, compare, costs, profile, report, sittings, spec,
                                 store)
from reclaimlab.validate.errors import ValidateError

ROOT = Path(__file__).resolve().parents[2]
VALIDATION = ROOT / "validation"
PROFILE = VALIDATION / "profiles" / "debian-6.1-tcg.toml"
DOC = ROOT / "docs" / "VALIDATION.md"
# The reference sitting: the protocol's sixth (2026-12-01-morning), its fifth complete one,
# every scenario booted. The third (2026-11-30) booted the touch and filesystems' calibration
# scenarios for the first time; SECOND is the one before it (the evening of 2026-11-29), FIRST
# the first.
REF = VALIDATION / "sittings" / "2026-12-01-morning"
SECOND = VALIDATION / "sittings" / "2026-11-29-night"
FIRST = VALIDATION / "sittings" / "2026-11-29"

# The floor of the headline: the prediction score `validate --all` reaches on the reference
# sitting (2026-11-29-night, the protocol's second complete one: every scenario booted, the
# cgroup ones for the first time, the profile derived from its two calibration scenarios) is
# 169 of 445 (docs/VALIDATION.md, "The protocol's second sitting"); a change that loses a
# counter fails. (The first sitting's was 89 of 337 as a prediction, 106 in-sample after the
# shared vCPUs; on the earlier reference, four prediction scenarios, 57 of 67.) 166 of 453 since
# XFS's log item shadow buffers (docs/MODEL.md, "Development on seen data after the second
# sitting", 3): a faithful change that took three storm counters over the range's edge. 176
# since ext4's metadata blocks became page cache (item 7 there: 193) and validate mirrored the
# guests' page tables (item 6: 161 alone, 176 with item 7), both made for what the guest is.
# 198 of 449 on the third sitting (2026-11-30), the reference since, scored with the model as
# committed before its first boot (docs/VALIDATION.md, "The protocol's third sitting"). 217
# since XFS checkpoints its log by space (docs/MODEL.md, "Development on the third sitting's
# boots", 8): in-sample on the same boots, a faithful change the next sitting tests. 207 of 446
# on the fifth sitting (2026-12-01), the reference since, scored with the model as committed
# before its first boot (docs/VALIDATION.md, "The protocol's fifth sitting"). 195 of 451 on the
# sixth sitting (2026-12-01-morning), the reference since, scored with the model whose CFS
# scheduler was committed before any of its files was read (the turns it replaced: 229; docs/
# MODEL.md, "Development on the fifth sitting's boots", 14).
PREDICTION_FLOOR = 195


def _calibration_specs(sitting: Path | None = None) -> list[spec.GuestSpec]:
    return [spec.load(p, sitting) for p in sittings.scenarios(VALIDATION)
            if sittings.role(p) == "calibration"]


def _page_calibration_specs() -> list[spec.GuestSpec]:
    """The anonymous and file calibration scenarios (those the slowdown and kswapd's figures
    come from), not the filesystems' ones."""
    return [s for s in _calibration_specs() if s.name in ("anon-seq-reread", "file-stream")]


def test_the_roles_are_the_pre_registered_ones():
    roles = {p.stem: sittings.role(p) for p in sittings.scenarios(VALIDATION)}
    assert roles == {"anon-seq-reread": "calibration", "file-stream": "calibration",
                     "anon-random": "prediction", "file-write": "prediction",
                     "mix": "prediction", "thp-fault": "prediction",
                     # Added on 2026-11-29 ("Filesystem and machine-size scenarios").
                     "mix-1g": "prediction", "mix-2g": "prediction",
                     **{f"{fs}-create-walk-{p}": "prediction" for fs in ("xfs", "ext4")
                        for p in (100, 200, 500)},
                     # Added after the 2026-11-29 sitting ("Cgroup scenarios").
                     "memcg-max": "prediction", "memcg-high": "prediction",
                     "memcg-low": "prediction",
                     # Added after the 2026-11-29-night sitting ("The filesystems' own costs").
                     "xfs-create-stat": "calibration", "ext4-create-stat": "calibration",
                     "anon-touch": "calibration"}


def test_no_calibration_or_prediction_scenario_carries_costs_of_its_own():
    for path in sittings.scenarios(VALIDATION):
        doc = tomllib.loads(path.read_text())
        assert "cost" not in doc, path
        for section in ("swap", "disk"):
            assert not set(doc.get(section, {})) & set(profile.DEVICE_KEYS), (path, section)


def test_a_prediction_scenario_with_a_cost_section_is_refused(tmp_path):
    (tmp_path / "predict").mkdir()
    bad = tmp_path / "predict" / "mix.toml"
    bad.write_text((VALIDATION / "predict" / "mix.toml").read_text()
                   + '\n[cost]\nfile_miss = "30us"\n')
    with pytest.raises(ValidateError, match=r"mix.toml: a prediction scenario carries no \[cost\]"):
        spec.load(bad)


def test_the_profile_is_what_the_calibration_boots_give():
    # scripts/validate-calibrate.py's derivation from the reference sitting's boots of the five
    # calibration scenarios, byte for byte, samples included.
    c = calibrate.derive(_calibration_specs())
    text, samples = calibrate.render(c, PROFILE)
    assert PROFILE.read_text() == text
    assert (PROFILE.parent / calibrate.samples_name(PROFILE.stem)).read_text() == samples
    assert c.sitting == REF
    # Its rules, checked on the values themselves: the measured figures come back as the sum
    # of the keys they cover, and the keys no boot measures are native times the slowdown.
    v = calibrate.profile_values(PROFILE)
    fig = {k: m for k, (m, _) in c.figures.items()}
    assert v["file_hit"] + v["file_miss"] == pytest.approx(fig["file page"], abs=0.002)
    assert (7 * v["swapcache_fault"] + v["major_fault"]) / 8 == pytest.approx(
        fig["re-read page"], abs=0.002)
    assert v["scan_mapped"] + v["unmap"] + v["swapout_submit"] == pytest.approx(
        fig["swapped page"], abs=0.002)
    assert v["scan_unmapped"] + v["free_page"] == pytest.approx(fig["freed page"], abs=0.002)
    # The touch is the touch scenario's (its rule: validate/calibrate.py, solve_anon_touch;
    # test_validate_touch_calibration), and each filesystem's create and cached lookup are the
    # means its create-stat scenario's boots give.
    assert c.sources["anon_touch"].startswith("anon-touch: the value at which the model makes")
    assert v["anon_touch"] != pytest.approx(0.020 * c.slowdown, abs=0.001)
    for fs_type in ("xfs", "ext4"):
        s = next(x for x in _calibration_specs() if x.name == f"{fs_type}-create-stat")
        create_us, lookup_us = calibrate.fs_figures(s, store.load(s)["reps"])
        assert v[f"fs.{fs_type}.create_cost"] == pytest.approx(create_us, abs=0.001)
        assert v[f"stat.{fs_type}.hit_cost"] == pytest.approx(lookup_us, abs=0.001)
    assert c.slowdown == pytest.approx(statistics.geometric_mean(
        [m / native for m, native in c.figures.values()]))
    # The wake-up samples are those the calibration boots recorded, and no other boot's: the
    # allocator's wait from wakeup_kswapd to kswapd's run, what the model's Woken state is.
    pooled = []
    for s in _page_calibration_specs():
        pooled += [w for r in store.load(s)["reps"] for w in r["kswapd_wait_us"]]
    assert json.loads(samples)["latencies_us"] == pooled
    # balance_start runs from there to the first batch: in each calibration scenario, the
    # median over its scored boots (every one traces kswapd) of switch-in to first batch less
    # switch-in to the run.
    gaps = []
    for s in _page_calibration_specs():
        per_boot = [t["switch_in_to_first_batch"]["median_us"]
                    - t["switch_in_to_balance"]["median_us"]
                    for t in (r["kswapd_trace"] for r in store.load(s)["reps"])]
        assert len(per_boot) == 5
        gaps.append(statistics.median(per_boot))
    assert v["balance_start"] == pytest.approx(statistics.geometric_mean(gaps), abs=0.002)


def test_balance_start_runs_from_kswapds_run_start_when_the_boots_trace_it():
    # Scored boots that trace both switch-in figures give balance_start themselves: each
    # boot's switch-in to first batch less its switch-in to the run, the median over boots.
    anon = next(s for s in _calibration_specs() if s.name == "anon-seq-reread")

    def rep(first, run, n=25):
        return {"kswapd_trace": {"switch_in_to_first_batch": {"n": n, "median_us": first},
                                 "switch_in_to_balance": {"n": n, "median_us": run}}}

    reps = [rep(100, 30), rep(120, 40), rep(200, 20)]
    assert costs.wake_to_first_batch(anon, reps) == 80
    # A boot with too few runs traced does not count.
    assert costs.wake_to_first_batch(anon, reps[:2] + [rep(900, 0, n=3)]) == 75


def test_the_profile_takes_nothing_from_a_prediction_scenarios_boots(tmp_path):
    # A copy of the reference sitting whose prediction scenarios' boots are gone derives the
    # same profile: nothing in it can come from them.
    sitting = tmp_path / REF.name
    shutil.copytree(REF, sitting)
    for p in sittings.scenarios(VALIDATION):
        if sittings.role(p) == "prediction":
            for f in (sitting / "real").glob(f"{p.stem}.*"):
                f.unlink()
    got = calibrate.derive(_calibration_specs(sitting))
    want = calibrate.derive(_calibration_specs())
    assert (got.cost, got.devices, got.samples) == (want.cost, want.devices, want.samples)


def test_a_scenario_setting_a_profile_key_is_refused():
    prof = profile.load(PROFILE)
    s = spec.load(VALIDATION / "predict" / "mix.toml")
    doc = dict(s.document, disk={"read_latency": "10us"})
    with pytest.raises(ValidateError, match=r"\[disk\] read_latency is set by the scenario and "
                                            r"by the profile"):
        profile.merge(doc, prof, "mix.toml")
    merged = profile.merge(s.document, prof, "mix.toml")
    assert merged["cost"]["file_miss"] == prof["cost"]["file_miss"]
    assert merged["swap"]["max_request"] == "1MiB"  # the scenario's device shape stays
    assert Path(merged["cost"]["wakeup_latency_samples"]).is_absolute()
    base = profile.without_costs(merged)
    assert "cost" not in base and "read_latency" not in base["swap"]


def test_the_reference_is_the_latest_complete_sitting(tmp_path):
    assert sittings.reference(VALIDATION) == REF
    # The afternoon's re-sitting of two scenarios is later than the morning's, but partial.
    afternoon = VALIDATION / "sittings" / "2026-11-28-afternoon"
    assert sorted(sittings.missing(afternoon, VALIDATION)) == [
        "anon-random", "anon-seq-reread", "file-write", "thp-fault"]
    # A later complete sitting takes over; one whose record calls it partial does not.
    for d in ("calibrate", "predict"):
        shutil.copytree(VALIDATION / d, tmp_path / d)
    for day in ("2026-12-01", "2026-12-02"):
        (tmp_path / "sittings" / day / "real").mkdir(parents=True)
        for p in sittings.scenarios(tmp_path):
            (tmp_path / "sittings" / day / "real" / f"{p.stem}.json").write_text("{}")
    (tmp_path / "sittings" / "2026-12-02" / sittings.RECORD).write_text('{"complete": false}')
    assert sittings.reference(tmp_path) == tmp_path / "sittings" / "2026-12-01"
    (tmp_path / "sittings" / "2026-12-01" / "real" / "mix.json").unlink()
    with pytest.raises(ValidateError, match="no complete sitting"):
        sittings.reference(tmp_path)


def test_event_counters_have_a_floor_in_their_own_unit():
    # A synthetic kept result: a million page allocations put the page floor at 1,000.
    def rep(d):
        return {"vmstat_delta": d | {"pgalloc_normal": 1_000_000}}
    kept = {"reps": [rep({"allocstall_movable": 6, "pgscan_direct": 600, "pageoutrun": 0,
                          "pgsteal_direct": 0})] * 3, "zoneinfo_path": "/nonexistent"}
    s = spec.load(VALIDATION / "predict" / "mix.toml")
    sims = [{"allocstall_movable": 6, "pgscan_direct": 600, "pageoutrun": 5,
             "pgsteal_direct": 900, "pgalloc_normal": 1_000_000}] * 3
    rows = {r.counter: r for r in compare.build(s, kept, sims).rows}
    assert rows["allocstall_movable"].within is True          # 6 events: scored
    assert rows["pgscan_direct"].small and rows["pgscan_direct"].within is None  # 600 pages
    assert rows["pageoutrun"].within is False and rows["pageoutrun"].zero_real
    assert rows["pgsteal_direct"].within is None               # 900 pages < the page floor
    assert rows["pgalloc_normal"].within is True


@pytest.fixture(scope="module")
def validate_all(tmp_path_factory):
    """`reclaimlab validate --all` on the kept data: its JSON, and the doc it writes."""
    doc = tmp_path_factory.mktemp("doc") / "VALIDATION.md"
    shutil.copy(DOC, doc)
    out = tmp_path_factory.mktemp("out") / "all.json"
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = cli.main(["validate", "--all", "--format", "json", "--write-doc", str(doc)])
    out.write_text(buf.getvalue())
    assert code == 0
    return json.loads(buf.getvalue()), doc


def test_validate_all_headlines_the_prediction_score_at_its_floor(validate_all):
    data, _ = validate_all
    scores = data["scores"]
    pred = scores["prediction"]
    assert pred["scenarios"] == (  # in the order of their files' names
        ["anon-random"] + [f"ext4-create-walk-{p}" for p in (100, 200, 500)]
        + ["file-write", "memcg-high", "memcg-low", "memcg-max", "mix-1g", "mix-2g", "mix",
           "thp-fault"]
        + [f"xfs-create-walk-{p}" for p in (100, 200, 500)])
    # The reference sitting booted every scenario, the touch and filesystem calibration
    # scenarios too: none is left unscored.
    assert data["not_yet_sat"] == []
    assert pred["within"] >= PREDICTION_FLOOR and pred["compared"] >= 300
    assert scores["calibration"]["scenarios"] == [
        "anon-seq-reread", "anon-touch", "ext4-create-stat", "file-stream", "xfs-create-stat"]
    # The baseline is the prediction scenarios again, with no costs at all.
    assert [c["scenario"] for c in data["baseline"]] == pred["scenarios"]
    assert all(c["costs"] == "none" for c in data["baseline"])
    assert all(c["costs"].endswith("debian-6.1-tcg.toml") for c in data["scenarios"])
    assert scores["baseline_no_costs"]["compared"] > 0
    # By family: each prediction scenario in exactly one, and the families add up.
    fam = scores["prediction_by_family"]
    assert {f: v["scenarios"] for f, v in fam.items()} == {
        "no filesystem or cgroup": ["anon-random", "file-write", "mix-1g", "mix-2g", "mix",
                                    "thp-fault"],
        "ext4 storms": [f"ext4-create-walk-{p}" for p in (100, 200, 500)],
        "memory cgroups": ["memcg-high", "memcg-low", "memcg-max"],
        "xfs storms": [f"xfs-create-walk-{p}" for p in (100, 200, 500)],
    }
    for key in ("within", "compared"):
        assert sum(v[key] for v in fam.values()) == pred[key]
        assert (sum(v["timing_sensitive"][key] for v in fam.values())
                == scores["prediction_timing_sensitive"][key])
    # The timing-sensitive subset is the prediction rows of TIMING, counted.
    t = [r for c in data["scenarios"] if c["role"] == "prediction" for r in c["counters"]
         if r["timing_sensitive"] and r["within"] is not None]
    assert scores["prediction_timing_sensitive"]["compared"] == len(t) > 10
    assert scores["prediction_timing_sensitive"]["within"] == sum(r["within"] for r in t)


def test_the_docs_generated_tables_are_the_current_output(validate_all):
    # Regenerate with `reclaimlab validate --all --write-doc docs/VALIDATION.md`.
    _, written = validate_all
    assert report.generated_part(DOC) == report.generated_part(written)


def fake_guest_tools(monkeypatch, boot) -> None:
    """Booting replaced by ``boot`` and the kernel, busybox, workload program and QEMU by
    names (no QEMU here). (Also test_validate_stall's.)"""
    from reclaimlab.validate import guest, kernel

    monkeypatch.setattr(guest, "boot", boot)
    monkeypatch.setattr(kernel, "fetch_kernel", lambda cache: type(
        "K", (), {"package": "linux-image", "version": "6.1", "vmlinuz": Path("vmlinuz")})())
    monkeypatch.setattr(kernel, "busybox_binary", lambda: Path("busybox"))
    monkeypatch.setattr(kernel, "build_workload", lambda cache: Path("workload"))
    monkeypatch.setattr(kernel, "qemu_binary", lambda: "qemu")
    monkeypatch.setattr(kernel, "qemu_version", lambda q: "QEMU emulator version 7.2")


def test_a_sitting_keeps_every_boot_with_its_start_and_an_aborted_one_with_why(
        tmp_path, monkeypatch):
    # Booting is replaced by the kept boots of the reference sitting (no QEMU here); the
    # second boot aborts. The boots land in the new sitting, which stays partial.
    for d in ("calibrate", "predict"):
        shutil.copytree(VALIDATION / d, tmp_path / d)
    shutil.copytree(VALIDATION / "sittings" / "2026-11-28", tmp_path / "sittings" / "2026-11-28")
    ref = spec.load(tmp_path / "predict" / "mix.toml")
    kept = store.load(ref)
    zoneinfo = Path(kept["zoneinfo_path"]).read_text()

    def boot(s, k, work, busybox, workload, r, kvm, timeout_s):
        if r == 2:
            raise ValidateError("boot 2: timed out after 900 s")
        return dict(kept["reps"][r - 1], kernel=kept["kernel"], zoneinfo_before=zoneinfo,
                    guest_settings=kept["guest_settings"])

    fake_guest_tools(monkeypatch, boot)
    new = tmp_path / "sittings" / "2026-12-01"
    s = spec.load(tmp_path / "predict" / "mix.toml", new)
    data = store.boot_and_keep(s, 3, accel="tcg")
    assert all(r["started"].endswith("+00:00") for r in data["reps"])  # each boot's start, UTC
    assert len(data["reps"]) == 2 and data["aborted"][0]["rep"] == 2
    assert "timed out" in data["aborted"][0]["why"]
    rec = json.loads((new / sittings.RECORD).read_text())
    assert [(b["scenario"], b["rep"], b["status"]) for b in rec["boots"]] == [
        ("mix", 1, "kept"), ("mix", 2, "aborted"), ("mix", 3, "kept")]
    assert all(b["started"] for b in rec["boots"]) and rec["complete"] is False
    # Partial (one scenario, two boots of three): the reference stays the earlier sitting.
    why = sittings.finish(new, tmp_path, 3)
    assert "mix: 2 of 3 boots kept" in why and "anon-random: no kept boots" in why
    assert sittings.reference(tmp_path) == tmp_path / "sittings" / "2026-11-28"


def test_a_sittings_speed_factor_scales_every_time_of_the_profile(tmp_path):
    prof = profile.load(PROFILE)
    # The profile's own sitting runs at its pace: factor 1, the profile untouched.
    ref = REF
    assert calibrate.speed_factor(VALIDATION, ref, prof) == pytest.approx(1.0, abs=1e-12)
    # The afternoon's partial re-sitting (2026-11-28) has one calibration scenario,
    # file-stream: its factor is that scenario's mean run length there over the reference's.
    afternoon = VALIDATION / "sittings" / "2026-11-28-afternoon"

    def wall(d: Path) -> float:
        reps = json.loads((d / "real" / "file-stream.json").read_text())["reps"]
        return statistics.fmean(r["wall_time_s"] for r in reps)

    factor = calibrate.speed_factor(VALIDATION, afternoon, prof)
    # The afternoon's guest ran file-stream slower than the reference's (2026-12-01: 1.145;
    # against the third sitting, 2026-11-30, it was 1.004, the second 0.85, the first 0.6).
    assert factor == pytest.approx(wall(afternoon) / wall(ref)) and 1.12 < factor < 1.17
    fast = profile.scaled(prof, factor, tmp_path)
    # Every time of every section, a filesystem type's own table ([fs.xfs]) too, in us.
    want, got = calibrate.values(prof), calibrate.values(fast)
    assert set(got) == set(want) and any(k.startswith("fs.xfs.") for k in want)
    for key, value in want.items():
        assert got[key] == pytest.approx(value * factor, abs=0.001), key
    old = json.loads(Path(prof["cost"]["wakeup_latency_samples"]).read_text())["latencies_us"]
    new = json.loads(Path(fast["cost"]["wakeup_latency_samples"]).read_text())["latencies_us"]
    assert new == pytest.approx([x * factor for x in old])
    assert fast["profile"]["speed_factor"] == factor


def test_bad_profile_and_speed_are_one_line_exit_2(tmp_path, capsys):
    mix = str(VALIDATION / "predict" / "mix.toml")
    code = cli.main(["validate", "--reps", "1", "--profile", str(tmp_path / "none.toml"), mix])
    err = capsys.readouterr().err
    assert code == 2 and "no such profile" in err and "Traceback" not in err
    code = cli.main(["validate", "--reps", "1", "--speed", "fast", mix])
    err = capsys.readouterr().err
    assert code == 2 and "--speed 'fast': give `auto` or a positive number" in err


def test_an_interrupted_sitting_resumes_with_what_it_has_not_kept(tmp_path):
    """RESUME=1 (scripts/validate-real.sh): the scenarios without kept boots are left, in the
    order they were due, and the record notes the resumption; a complete one has nothing left to
    boot; a sitting that was never begun is refused with the way out."""
    import subprocess
    import sys

    for d in ("calibrate", "predict"):
        shutil.copytree(VALIDATION / d, tmp_path / d)
    new = tmp_path / "sittings" / "2026-12-02"
    with pytest.raises(ValidateError, match="no such sitting record.*validate-real.sh"):
        sittings.resume(new, tmp_path)
    due = sittings.begin(new)
    (new / "real").mkdir()
    for name in due[:3]:
        (new / "real" / f"{name}.json").write_text(json.dumps({"reps": [{}] * 5}))
    # The fourth was under way: some of its boots recorded, none kept.
    sittings.record_boot(new, due[3], {"rep": 1, "status": "kept"})
    assert sittings.resume(new, tmp_path) == due[3:]
    rec = json.loads((new / sittings.RECORD).read_text())
    assert rec["resumed"][0]["left"] == due[3:] and not rec["complete"]
    # The under-way scenario's recorded boot was never written: the record says it was lost.
    assert [(b["scenario"], b["status"]) for b in rec["boots"]] == [(due[3], "lost")]
    for name in due[3:]:
        (new / "real" / f"{name}.json").write_text(json.dumps({"reps": [{}] * 5}))
    assert sittings.finish(new, tmp_path, 5) == []
    # Complete: nothing left to boot (the script goes on with the traces it lacks).
    assert sittings.resume(new, tmp_path) == []
    assert sittings.is_complete(new, tmp_path)
    # The script prints the files to boot, relative to the repository (the real tree's sitting
    # record is not touched: a sitting of a name that does not exist is refused).
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "validate-sitting.py"),
                        str(VALIDATION / "sittings" / "no-such-sitting"), "--resume"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "no such sitting record" in r.stderr
    assert "Traceback" not in r.stderr


def test_a_set_time_calibration_scenario_does_not_move_the_speed_factor(tmp_path):
    # The touch and filesystem calibration scenarios run for a set time: a later sitting's
    # guest twice as slow still ends them at about the same time, so they do not count; the
    # anonymous and file scenarios, whose work sets their run length, do.
    prof = profile.load(PROFILE)
    sitting = tmp_path / REF.name
    shutil.copytree(REF, sitting)

    def stretch(name: str, by: float) -> None:
        f = sitting / "real" / f"{name}.json"
        data = json.loads(f.read_text())
        for r in data["reps"]:
            r["wall_time_s"] *= by
        f.write_text(json.dumps(data))

    for name in ("anon-touch", "xfs-create-stat", "ext4-create-stat"):
        stretch(name, 2.0)
    assert calibrate.speed_factor(VALIDATION, sitting, prof) == pytest.approx(1.0, abs=1e-12)
    stretch("anon-seq-reread", 1.5)
    assert calibrate.speed_factor(VALIDATION, sitting, prof) == pytest.approx(1.5 ** 0.5)
