"""``reclaimlab policies`` and ``reclaimlab.policies()``: the policy registry as the engine has it."""

from __future__ import annotations

import json

import reclaimlab
from reclaimlab import _core

SWITCH_KEYS = ["name", "default", "spec", "summary", "preset", "variants"]
VARIANT_KEYS = ["name", "kernel", "summary"]


def test_json_shape_is_exact():
    data = json.loads(_core.policies())
    assert list(data) == ["switches"]
    names = []
    for s in data["switches"]:
        assert list(s) == SWITCH_KEYS, s  # the documented keys, in the documented order
        assert all(isinstance(s[k], str) and s[k] for k in ("name", "default", "spec", "summary"))
        if s["preset"] is not None:
            assert list(s["preset"]) == ["follows", "doc"]
            # A preset follows a switch listed before it (defaults resolve in list order).
            assert s["preset"]["follows"] in names, s["name"]
            assert s["preset"]["doc"]
        assert s["variants"], s["name"]
        for v in s["variants"]:
            assert list(v) == VARIANT_KEYS and all(isinstance(v[k], str) and v[k] for k in v)
        names.append(s["name"])
    assert len(names) == len(set(names))
    assert reclaimlab.policies() == data


def test_every_default_is_one_of_its_variants():
    for s in reclaimlab.policies()["switches"]:
        assert s["default"] in [v["name"] for v in s["variants"]], s["name"]


def test_kswapd_balance_is_the_registry_the_readme_describes():
    switches = {s["name"]: s for s in reclaimlab.policies()["switches"]}
    kb = switches["kswapd_balance"]
    assert kb["default"] == "v6.1" and kb["preset"] is None
    assert [v["name"] for v in kb["variants"]] == ["v2.6.36", "v2.6.38", "v3.0", "v6.1"]
    # "the historical ones also run with their era's watermarks"
    assert switches["watermarks"]["preset"]["follows"] == "kswapd_balance"


def blocks(text: str) -> dict[str, list[str]]:
    """The text output split into one block of lines per switch (a line `NAME: summary`)."""
    out: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        if line and not line.startswith(" ") and ": " in line:
            current = line.split(": ", 1)[0]
            out[current] = [line]
        elif current is not None and line:
            out[current].append(line)
    return out


def test_text_lists_every_switch_and_variant(cli, tmp_path):
    r = cli("policies", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    registry = reclaimlab.policies()
    intro, rest = r.stdout.split("\n", 1)
    assert intro == 'Policy switches: set one in a scenario as [policy] SWITCH = "VARIANT".'
    got = blocks(rest)
    assert list(got) == [s["name"] for s in registry["switches"]]
    for s in registry["switches"]:
        lines = got[s["name"]]
        assert lines[0] == f"{s['name']}: {s['summary']}"
        assert lines[1].split()[:2] == ["default", s["default"] + (";" if s["preset"] else "")]
        assert lines[2].split(None, 1) == ["spec", s["spec"]]
        rows = [line.split() for line in lines[3:]]
        assert rows[0] == ["variant", "kernel", "summary"]
        # Each variant on its own row, with its kernel and summary, in registry order.
        assert len(rows) == 1 + len(s["variants"])
        for line, v in zip(lines[4:], s["variants"]):
            assert line.split() == [v["name"], *v["kernel"].split(), *v["summary"].split()], line


def test_json_format(cli, tmp_path):
    r = cli("policies", "--format", "json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == reclaimlab.policies()


def test_bad_format_is_a_usage_error(cli, tmp_path):
    r = cli("policies", "--format", "yaml", cwd=tmp_path)
    assert r.returncode == 2
    assert "invalid choice: 'yaml'" in r.stderr and "Traceback" not in r.stderr
    assert r.stdout == ""
