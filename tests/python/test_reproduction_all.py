"""``reclaimlab reproduce all``: every experiment into one store and one report. Collected after
the test_reproduce_* modules, it shares their session store (conftest's ``repro_store``), so the
runs their reproductions made are reused here, as a user's second reproduction would reuse them,
and only what they left out (the default situations they skip, the sensitivity sweeps) runs.

The README's table of what holds per seed, its per-experiment counts of passing checks, and
docs/MODEL.md's per-seed summaries are held to the report.json this run writes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from reclaimlab import cli
from reclaimlab.experiments import EXPERIMENTS

REPO = Path(__file__).resolve().parents[2]
#: The seed thread behind each experiment (the README's table and MODEL.md's sections name it);
#: memcg-protection reproduces the kernel's cgroup selftest instead of a thread.
SEED = {"blkback-pool": "000", "free-page-hinting": "001", "shrinker-deferral": "002",
        "persistent-grants": "003", "kswapd-highorder": "004", "memcg-protection": "selftest"}


def opening(name: str) -> str:
    """How the README's paragraph on an experiment opens."""
    seed = SEED[name]
    return f"`{name}` (seed {seed}" if seed.isdigit() else f"`{name}` (the kernel's cgroup selftest"


def store_entries(store):
    return {p.name for p in (store / "runs").glob("*/[!.]*")}


@pytest.fixture(scope="module")
def everything(tmp_path_factory, repro_store):
    out = tmp_path_factory.mktemp("all")
    before = store_entries(repro_store)
    rc = cli.main(["reproduce", "all", "--out", str(out), "--store", str(repro_store),
                   "--no-figures"])
    checks = {name: json.loads((out / name / "report.json").read_text())["checks"]
              for name in EXPERIMENTS}
    return rc, out, before, checks


def test_all_runs_every_experiment_into_one_store_and_one_report(everything, repro_store):
    rc_all, out, before, checks = everything
    # The exit status is the verdict of every experiment's checks together.
    failed = sum(
        not c["passed"]
        for name in EXPERIMENTS
        for s in json.loads((out / name / "reproduce.json").read_text())["situations"]
        for c in s["checks"]
    )
    assert failed == sum(not c["pass"] for cs in checks.values() for c in cs)
    assert rc_all == (1 if failed else 0)
    # Every experiment wrote its checks, and the runs already in the store were kept and reused
    # beside the ones added (the sweeps no test module runs in full).
    for name in EXPERIMENTS:
        assert checks[name], name
    after = store_entries(repro_store)
    assert before <= after and len(after) > len(before)
    text = (out / "report.html").read_text()
    for exp_module in EXPERIMENTS.values():
        assert exp_module.TITLE.replace("'", "&#x27;") in text


def _of(text: str) -> set[tuple[int, int]]:
    """Every "N of M" in a text."""
    return {(int(n), int(m)) for n, m in re.findall(r"(\d+) of (\d+)", text.replace(",", ""))}


def readme_table() -> dict[str, tuple[str, str, str]]:
    """The README's table of what holds: experiment -> (whole range, part of it, not at all)."""
    rows = {}
    for line in (REPO / "README.md").read_text().splitlines():
        m = re.match(r"\| (\d{3}|selftest) `([a-z-]+)` \| (.*) \| (.*) \| (.*) \|$", line)
        if m:
            assert SEED[m.group(2)] == m.group(1), line
            rows[m.group(2)] = (m.group(3), m.group(4), m.group(5))
    return rows


def model_summaries() -> dict[str, str]:
    """docs/MODEL.md's "**Summary for seed NNN.**" paragraphs (and "**Summary for the
    selftest.**"), by experiment."""
    text = (REPO / "docs" / "MODEL.md").read_text()
    by_seed = {v: k for k, v in SEED.items()}
    out = {}
    for m in re.finditer(r"\*\*Summary for (?:seed (\d{3})|the (selftest))\.\*\*(.*?)(?:\n\n|\Z)",
                         text, re.S):
        seed = m.group(1) or m.group(2)
        assert by_seed[seed] not in out, f"two summaries for {seed}"
        out[by_seed[seed]] = " ".join(m.group(3).split())
    return out


def readme_pass_counts() -> dict[str, tuple[int, int]]:
    """"N of M checks pass" in each experiment's paragraph of the README (the first after the
    paragraph's "`name` (seed NNN" opening)."""
    text = (REPO / "README.md").read_text()
    out = {}
    for name in SEED:
        at = text.find(opening(name))
        m = re.compile(r"(\d+) of (\d+)\s+checks\s+pass").search(text, at) if at >= 0 else None
        nxt = min((i for i in (text.find(opening(o), at + 1) for o in SEED if o != name)
                   if i > at), default=len(text))
        if m and m.start() < nxt:
            out[name] = (int(m.group(1)), int(m.group(2)))
    return out


def test_readme_and_model_summaries_say_what_the_reports_say(everything):
    _, _, _, checks = everything
    rows, sums, counts = readme_table(), model_summaries(), readme_pass_counts()
    assert set(rows) == set(sums) == set(EXPERIMENTS)
    for name, got in checks.items():
        holds = {(c["holds"]["n"], c["holds"]["of"]) for c in got if c["holds"]}
        partial = {h for h in holds if 0 < h[0] < h[1]}
        passed = sum(c["pass"] for c in got)
        whole, part, none = rows[name]
        # Each sweep that holds over part of its range is named, with its count, in the
        # README's row and in MODEL.md's summary; every count they give is a sweep's.
        assert partial <= _of(part + none), (name, partial - _of(part + none))
        assert _of(whole + part + none) <= holds, (name, _of(whole + part + none) - holds)
        assert partial <= _of(sums[name]), (name, partial - _of(sums[name]))
        assert _of(sums[name]) - {(passed, len(got))} <= holds, (name, _of(sums[name]) - holds)
        # "Does not hold" is empty exactly when every check passes.
        assert (none.strip() == "-") == (passed == len(got)), (name, none)
        # The counts of passing checks.
        assert f"{passed} of {len(got)} checks pass" in sums[name], (name, passed, len(got))
        if name in counts:
            assert counts[name] == (passed, len(got)), name
    assert set(counts) >= set(EXPERIMENTS) - {"kswapd-highorder"}
