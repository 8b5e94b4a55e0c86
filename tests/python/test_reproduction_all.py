"""``reclaimlab reproduce all``: every experiment into one store and one report. Collected after
the test_reproduce_* modules, it shares their session store (conftest's ``repro_store``), so the
runs their reproductions made are reused here, as a user's second reproduction would reuse them,
and only what they left out (the default situations they skip, the sensitivity sweeps) runs."""

from __future__ import annotations

import json

from reclaimlab import cli
from reclaimlab.experiments import EXPERIMENTS


def store_entries(store):
    return {p.name for p in (store / "runs").glob("*/[!.]*")}


def test_all_runs_every_experiment_into_one_store_and_one_report(tmp_path, repro_store):
    before = store_entries(repro_store)
    rc_all = cli.main(["reproduce", "all", "--out", str(tmp_path), "--store", str(repro_store),
                       "--no-figures"])
    # The exit status is the verdict of every experiment's checks together.
    failed = sum(
        not c["passed"]
        for name in EXPERIMENTS
        for s in json.loads((tmp_path / name / "reproduce.json").read_text())["situations"]
        for c in s["checks"]
    )
    assert rc_all == (1 if failed else 0)
    # Every experiment wrote its checks, and the runs already in the store were kept and reused
    # beside the ones added (the sweeps no test module runs in full).
    for name in EXPERIMENTS:
        assert json.loads((tmp_path / name / "report.json").read_text())["checks"], name
    after = store_entries(repro_store)
    assert before <= after and len(after) > len(before)
    text = (tmp_path / "report.html").read_text()
    for exp_module in EXPERIMENTS.values():
        assert exp_module.TITLE.replace("'", "&#x27;") in text
