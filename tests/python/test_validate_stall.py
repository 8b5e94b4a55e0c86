"""A boot whose guest kernel locks up before its workload begins (docs/VALIDATION.md,
"Protocol": a set-up that measured nothing is booted again as the same repetition): how a
running boot is watched, and how a sitting keeps the retried boot."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from reclaimlab.validate import guest, initramfs, sittings, spec, store
from reclaimlab.validate.errors import SetUpStall, ValidateError
from test_validate_protocol import fake_guest_tools

ROOT = Path(__file__).resolve().parents[2]
VALIDATION = ROOT / "validation"
LOCKUP = "[  52.17] watchdog: BUG: soft lockup - CPU#1 stuck for 45s! [init:1]\n"
BEGUN = f"{initramfs.MARK}:begin workload@@\n"


def test_a_lockup_before_the_workload_is_a_stalled_set_up(tmp_path):
    console = tmp_path / "console.log"
    output = guest.output_of(console)
    console.write_text("[    0.0] Linux version 6.1\n")
    assert not guest.stalled_before_workload(console)
    console.write_text(LOCKUP)
    assert guest.stalled_before_workload(console)
    # Once the workload has begun (its marker on the port or the console), a lock-up is the
    # kernel under the workload: not a set-up stall.
    output.write_text("@@reclaimlab:begin uname@@\n" + BEGUN)
    assert not guest.stalled_before_workload(console)
    output.unlink()
    console.write_text(BEGUN + LOCKUP)
    assert not guest.stalled_before_workload(console)
    assert not guest.stalled_before_workload(tmp_path / "none.log")


def test_a_stalled_boot_is_ended_at_once_and_named(tmp_path):
    # A stand-in for QEMU: it writes a lock-up to the console and would run for a minute.
    console = tmp_path / "console.log"
    argv = ["sh", "-c", f"printf '%s' '{LOCKUP.strip()}' > {console}; exec sleep 60"]
    t0 = time.monotonic()
    with pytest.raises(SetUpStall, match=r"x: the guest's kernel locked up before the workload "
                                         r"began; the guest's kernel reported \"\[  52.17\] "
                                         r"watchdog: BUG: soft lockup"):
        guest._run_qemu(SimpleNamespace(name="x"), argv, console, timeout_s=30)
    assert time.monotonic() - t0 < 10
    # Without a lock-up the boot runs to its end (or its timeout, as before).
    code, _ = guest._run_qemu(SimpleNamespace(name="x"), ["sh", "-c", "exit 0"],
                              tmp_path / "quiet.log", timeout_s=30)
    assert code == 0
    with pytest.raises(ValidateError, match=r"x: the guest did not power off within 1 s") as e:
        guest._run_qemu(SimpleNamespace(name="x"), ["sleep", "30"], tmp_path / "q.log", 1)
    assert not isinstance(e.value, SetUpStall)


@pytest.fixture
def fake_boots(tmp_path, monkeypatch):
    """A validation tree with the 2026-11-28 sitting's boots standing in for QEMU's; the
    returned list says, boot by boot, which ones stall before their workload."""
    for d in ("calibrate", "predict"):
        shutil.copytree(VALIDATION / d, tmp_path / d)
    shutil.copytree(VALIDATION / "sittings" / "2026-11-28", tmp_path / "sittings" / "2026-11-28")
    kept = store.load(spec.load(tmp_path / "predict" / "mix.toml"))
    zoneinfo = Path(kept["zoneinfo_path"]).read_text()
    stalls: list[bool] = []
    calls: list[int] = []

    def boot(s, k, work, busybox, workload, r, kvm, timeout_s):
        calls.append(r)
        if stalls and stalls.pop(0):
            raise SetUpStall(f"{s.name}: the guest's kernel locked up before the workload began")
        return dict(kept["reps"][(r - 1) % len(kept["reps"])], kernel=kept["kernel"],
                    zoneinfo_before=zoneinfo, guest_settings=kept["guest_settings"])

    fake_guest_tools(monkeypatch, boot)
    return tmp_path, stalls, calls


def test_a_stalled_set_up_is_booted_again_as_the_same_repetition(fake_boots):
    root, stalls, calls = fake_boots
    new = root / "sittings" / "2026-12-01"
    stalls[:] = [False, True, False, False, False]   # rep 2's first boot stalls
    data = store.boot_and_keep(spec.load(root / "predict" / "mix.toml", new), 4, accel="tcg")
    assert calls == [1, 2, 2, 3, 4]
    assert len(data["reps"]) == 4
    assert [(a["rep"], a["retried"]) for a in data["aborted"]] == [(2, True)]
    rec = json.loads((new / sittings.RECORD).read_text())
    assert [(b["rep"], b["status"]) for b in rec["boots"]] == [
        (1, "kept"), (2, "aborted"), (2, "kept"), (3, "kept"), (4, "kept")]
    assert sittings.finish(new, root, 4) == [f"{n}: no kept boots"
                                            for n in sittings.missing(new, root)]


def test_a_set_up_that_keeps_stalling_is_given_up_after_two_retries(fake_boots):
    root, stalls, calls = fake_boots
    new = root / "sittings" / "2026-12-01"
    stalls[:] = [True, True, True, False]   # rep 1 three times: booted again twice, then lost
    data = store.boot_and_keep(spec.load(root / "predict" / "mix.toml", new), 2, accel="tcg")
    assert calls == [1, 1, 1, 2]
    assert [(a["rep"], a["retried"]) for a in data["aborted"]] == [
        (1, True), (1, True), (1, False)]
    assert len(data["reps"]) == 1
    assert "mix: 1 of 2 boots kept" in sittings.finish(new, root, 2)
