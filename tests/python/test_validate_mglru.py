"""The protocol's second run (docs/VALIDATION.md, "Under the multi-generational LRU"): every
scenario with the guest's lru_gen switched on and the model's `[policy] lru = "mglru"`, kept in
sittings of its own, scored with the same profile."""

from __future__ import annotations

import json
import shutil
import statistics
from pathlib import Path

import pytest

from reclaimlab import api, cli
from reclaimlab.validate import compare, initramfs, profile, report, sittings, spec, store
from reclaimlab.validate.errors import ValidateError

ROOT = Path(__file__).resolve().parents[2]
VALIDATION = ROOT / "validation"
MIX = VALIDATION / "predict" / "mix.toml"


def _without_mglru_sittings(tmp_path: Path) -> Path:
    """A copy of validation/ whose only sitting is the two-list reference: no MGLRU one."""
    root = tmp_path / "validation"
    for d in ("calibrate", "predict", "profiles"):
        shutil.copytree(VALIDATION / d, root / d)
    ref = sittings.reference(VALIDATION)
    shutil.copytree(ref, root / "sittings" / ref.name)
    return root


def test_the_second_run_is_the_same_guest_with_lru_gen_on_and_a_hash_of_its_own(tmp_path):
    classic = spec.load(MIX)
    # An MGLRU guest's boots go to a sitting of their own: where none is complete, loading
    # the scenario under MGLRU says how to make one.
    bare = _without_mglru_sittings(tmp_path)
    with pytest.raises(ValidateError, match="no complete sitting under mglru.*LRU=mglru bash"):
        spec.load(bare / "predict" / "mix.toml", lru="mglru")
    mglru = spec.load(MIX, lru="mglru", sitting=tmp_path / "mglru-sitting")
    assert mglru.real_dir == tmp_path / "mglru-sitting" / "real"
    assert (classic.lru, mglru.lru) == ("classic", "mglru")
    assert mglru.document["policy"]["lru"] == "mglru"
    assert "lru" not in classic.document.get("policy", {})
    # The two-list boots keep their hash (the reference's kept file still loads); the MGLRU
    # guest is another guest.
    assert store.load(classic)["scenario_sha256"] == classic.content_hash
    assert mglru.content_hash != classic.content_hash
    init_c = initramfs.init_script(classic, [], 1)
    init_m = initramfs.init_script(mglru, [], 1)
    assert "echo 0 > /sys/kernel/mm/lru_gen/enabled" in init_c
    assert "echo y > /sys/kernel/mm/lru_gen/enabled" in init_m
    assert "echo 0 > /sys/kernel/mm/lru_gen/enabled" not in init_m
    assert "min_ttl_ms" not in init_m
    # Everything else the guest runs is the same.
    assert init_c.replace(initramfs._lru_gen_lines(classic), "") == \
        init_m.replace(initramfs._lru_gen_lines(mglru), "")


def test_min_ttl_is_written_when_the_scenario_sets_it(tmp_path):
    text = MIX.read_text() + "\n[policy]\nlru = \"mglru\"\n"
    if "[sysctl]" in MIX.read_text():
        text = text.replace("[sysctl]", "[sysctl]\nlru_gen_min_ttl_ms = 1000", 1)
    else:
        text += "\n[sysctl]\nlru_gen_min_ttl_ms = 1000\n"
    p = tmp_path / "ttl.toml"
    p.write_text(text)
    s = spec.load(p)  # the scenario's own [policy] lru
    assert (s.lru, s.lru_gen_min_ttl_ms) == ("mglru", 1000)
    assert "echo 1000 > /sys/kernel/mm/lru_gen/min_ttl_ms" in initramfs.init_script(s, [], 1)
    assert spec.load(p, lru="classic").lru_gen_min_ttl_ms is None


def test_the_model_beside_it_runs_mglru_with_the_same_profile(tmp_path):
    classic = spec.load(MIX)
    mglru = spec.load(MIX, lru="mglru", sitting=tmp_path)
    kept = store.load(classic)
    prof = profile.load(profile.default_path(VALIDATION))
    doc = compare.kept_sim_scenario(mglru, kept, prof)
    assert doc["policy"]["lru"] == "mglru"
    assert doc["cost"] == compare.kept_sim_scenario(classic, kept, prof)["cost"]
    api.validate(doc)  # the engine takes it


def test_the_reference_under_mglru_is_the_latest_complete_sitting_under_it(tmp_path):
    for d in ("calibrate", "predict"):
        shutil.copytree(VALIDATION / d, tmp_path / d)

    def sitting(name: str, lru: str) -> Path:
        d = tmp_path / "sittings" / name
        due = sittings.begin(d, lru)
        (d / "real").mkdir()
        for n in due:
            (d / "real" / f"{n}.json").write_text(json.dumps({"reps": [{}] * 5}))
        assert sittings.finish(d, tmp_path, 5) == []
        return d

    with pytest.raises(ValidateError, match="LRU=mglru bash scripts/validate-real.sh"):
        sittings.reference(tmp_path, "mglru")
    two_list = sitting("2026-12-01", "classic")
    later = sitting("2026-12-02-mglru", "mglru")
    assert sittings.lru_of(later) == "mglru" and sittings.lru_of(two_list) == "classic"
    assert sittings.reference(tmp_path) == two_list
    assert sittings.reference(tmp_path, "mglru") == later
    s = spec.load(tmp_path / "predict" / "mix.toml", lru="mglru")
    assert s.real_dir == later / "real"


def test_without_a_sitting_under_it_the_second_run_says_how_to_make_one(tmp_path, monkeypatch,
                                                                       capsys):
    monkeypatch.chdir(_without_mglru_sittings(tmp_path).parent)
    code = cli.main(["validate", "--all", "--lru", "mglru"])
    err = capsys.readouterr().err
    assert code == 2 and "no complete sitting under mglru" in err
    assert "LRU=mglru bash scripts/validate-real.sh" in err and "Traceback" not in err


def test_its_tables_go_between_markers_of_their_own(tmp_path):
    doc = tmp_path / "V.md"
    shutil.copy(ROOT / "docs" / "VALIDATION.md", doc)
    before = report.generated_part(doc)
    c = compare.Comparison("x", 1, 1, {}, [], [], [], lru="mglru")
    report.write_doc(doc, [c], lru="mglru")
    assert report.generated_part(doc) == before
    part = report.generated_part(doc, "mglru")
    assert part.startswith("<!-- validate-mglru:begin") and "\n| x " in part
    assert "#### x" in part


MGLRU_SITTING = VALIDATION / "sittings" / "2026-11-30-mglru"


def test_the_second_run_prints_the_algorithms_effect_from_both_sittings(capsys):
    # The first sitting under MGLRU (partial: memcg-max's fourth boot hung), scored as it
    # stands; the two-list side is the reference sitting's boots of the same scenario.
    scenario = VALIDATION / "predict" / "anon-random.toml"
    code = cli.main(["validate", "--lru", "mglru", "--sitting", str(MGLRU_SITTING),
                     "--reps", "2", "--format", "json", str(scenario)])
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    rows = {e["counter"]: e for e in doc["effect"]["counters"]}
    classic = store.load(spec.load(scenario))
    mglru = store.load(spec.load(scenario, MGLRU_SITTING, "mglru"))

    def real_mean(kept, c):
        return statistics.fmean(rep["vmstat_delta"][c] for rep in kept["reps"])

    # The guest's ratio is the two sittings' kept means; the model's, its two runs' means.
    e = rows["workingset_refault_anon"]
    assert e["real_ratio"] == pytest.approx(real_mean(mglru, "workingset_refault_anon")
                                            / real_mean(classic, "workingset_refault_anon"))
    assert e["sim_ratio"] == pytest.approx(e["sim_mglru_mean"] / e["sim_classic_mean"])
    assert doc["effect"]["score"]["compared"] == len(rows)
    assert doc["effect"]["score"]["judged"] == sum(1 for r in rows.values() if r["judged"])
    # Its scenarios' scores are the MGLRU sitting's.
    assert [s["lru"] for s in doc["scenarios"]] == ["mglru"]


NIGHT_SITTING = VALIDATION / "sittings" / "2026-11-30-night"


def test_the_effect_can_be_taken_against_the_two_list_sitting_of_the_same_night(capsys):
    # The MGLRU sitting (evening) against the two-list sitting booted the same night: the
    # guest's ratio is over that sitting's boots, not the reference's, and the JSON says so.
    scenario = VALIDATION / "predict" / "anon-random.toml"
    code = cli.main(["validate", "--lru", "mglru", "--sitting", str(MGLRU_SITTING),
                     "--effect-against", str(NIGHT_SITTING), "--reps", "2", "--format", "json",
                     str(scenario)])
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["effect"]["against"] == "those of the two-list sitting 2026-11-30-night"
    rows = {e["counter"]: e for e in doc["effect"]["counters"]}
    night = store.load(spec.load(scenario, NIGHT_SITTING, "classic"))
    reference = store.load(spec.load(scenario))
    mglru = store.load(spec.load(scenario, MGLRU_SITTING, "mglru"))

    def real_mean(kept, c):
        return statistics.fmean(rep["vmstat_delta"][c] for rep in kept["reps"])

    c = "pgscan_direct"
    assert rows[c]["real_ratio"] == pytest.approx(real_mean(mglru, c) / real_mean(night, c))
    assert real_mean(night, c) != pytest.approx(real_mean(reference, c), rel=0.01)


@pytest.mark.parametrize("args, said", [
    (["--effect-against", str(MGLRU_SITTING), "--lru", "mglru", "--sitting",
      str(MGLRU_SITTING)], "its guests ran mglru, not the two lists"),
    (["--effect-against", str(NIGHT_SITTING)], "--effect-against goes with --lru mglru"),
    (["--effect-against", "/nonexistent/sitting", "--lru", "mglru", "--sitting",
      str(MGLRU_SITTING)], "no kept boots there"),
])
def test_effect_against_refuses_what_is_not_a_two_list_sitting(args, said, capsys):
    code = cli.main(["validate", *args, str(VALIDATION / "predict" / "anon-random.toml")])
    err = capsys.readouterr().err
    assert code == 2 and said in err and "Traceback" not in err
