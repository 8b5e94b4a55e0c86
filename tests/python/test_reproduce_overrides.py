"""``reclaimlab reproduce --set KEY=VALUE``: every run of a reproduction with a scenario key set
(the same experiments under the multi-generational LRU), the checks as they stand; and the
dotted keys it takes (a sweep axis's, with `*` for each element of a list)."""

from __future__ import annotations

import json

import pytest

from reclaimlab import cli
from reclaimlab.experiments import memcg_protection as exp
from reclaimlab.experiments import overrides
from reclaimlab.results import load_run
from reclaimlab.sweep.planning import set_key


def test_a_star_sets_the_key_in_each_element_and_none_where_there_is_no_list():
    d = {"guest": [{"name": "a"}, {"name": "b", "policy": {"kswapd_balance": "v6.1"}}]}
    set_key(d, "guest.*.policy.lru", "mglru")
    assert [g["policy"]["lru"] for g in d["guest"]] == ["mglru", "mglru"]
    assert d["guest"][1]["policy"]["kswapd_balance"] == "v6.1"
    host = {"host": {"ram": "1GiB"}}
    set_key(host, "guest.*.policy.lru", "mglru")
    assert host == {"host": {"ram": "1GiB"}}
    for bad, want in (("host.*.x", "'host' is not a list"), ("guest.*", "ends in `*`")):
        with pytest.raises(KeyError, match=want):
            set_key(host, bad, 1)


def test_overrides_apply_only_inside_their_setting_and_leave_the_original_alone():
    scn = {"name": "s", "workload": [{"name": "w", "anon": {"size": "1MiB"}}]}
    assert overrides.apply(scn) is scn and overrides.describe() == ""
    with overrides.setting({"policy.lru": "mglru", "workload.w.anon.size": "2MiB"}):
        got = overrides.apply(scn)
        assert overrides.in_effect() == {"policy.lru": "mglru", "workload.w.anon.size": "2MiB"}
        assert "`policy.lru = 'mglru'`" in overrides.describe()
    assert got["policy"] == {"lru": "mglru"} and got["workload"][0]["anon"]["size"] == "2MiB"
    assert scn == {"name": "s", "workload": [{"name": "w", "anon": {"size": "1MiB"}}]}
    assert overrides.in_effect() == {}


def test_the_selftest_reproduced_under_mglru(tmp_path):
    out = tmp_path / "mglru"
    rc = cli.main(["reproduce", "memcg-protection", "--set", "policy.lru=mglru", "--out",
                   str(out), "--no-figures"])
    root = out / "memcg-protection"
    assert rc in (0, 1)  # the checks are the selftest's as they stand: they may fail
    for s in exp.SITUATIONS:
        for p in s.policies:
            run = load_run(root / s.key / p)
            assert 'lru = "mglru"' in run.summary["scenario"], (s.key, p)
            # Each run is really under MGLRU: the machine wrote its generations' debugfs file.
            assert (root / s.key / p / "lru_gen").is_file()
    report = (root / "report.md").read_text()
    assert "Every run with `policy.lru = 'mglru'` set." in report
    checks = json.loads((root / "report.json").read_text())["checks"]
    assert len(checks) == 17 and all(isinstance(c["pass"], bool) for c in checks)


def test_a_bad_set_is_one_line_and_exit_2(tmp_path, capsys):
    for bad, want in ((["--set", "policy.lru"], "expected KEY=VALUE"),
                      (["--set", "workload.nosuch.x=1"], "no element named 'nosuch'")):
        rc = cli.main(["reproduce", "memcg-protection", *bad, "--out", str(tmp_path / "x"),
                       "--no-figures"])
        err = capsys.readouterr().err
        assert rc == 2 and want in err and "Traceback" not in err, err
