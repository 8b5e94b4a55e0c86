"""Running a reproduction: every situation of an experiment under each of its policies, then
the report (our tables beside the thread's figures, and the verdict of each check).

Runs live in a content-addressed store (:mod:`reclaimlab.store`; ``reproduce all`` shares one
between the experiments) and ``ROOT/<situation>/<policy>`` is a symlink to each;
:func:`reclaimlab.api.ensure_result` reuses a run whose result is up to date, so an
interrupted reproduction resumes where it stopped. The report is written to ``ROOT/report.md``,
and what the HTML report needs (checks, the thread's figures and ours, the tables, the runs) to
``ROOT/reproduce.json`` (:data:`reclaimlab.report.REPRODUCTION_MANIFEST`).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from .. import api
from ..compare import (
    Cell,
    Column,
    build,
    change_percent,
    format_cell,
    format_value,
    render_markdown,
    unit,
)
from ..report import REPRODUCTION_MANIFEST
from ..results import load_run, write_text_atomic
from ..store import Store
from ..tables import markdown_table
from . import overrides

#: The sections of the comparison table a reproduction prints (the full vmstat dump is in
#: each run's directory).
SECTIONS = ("MMTests Statistics: duration", "FTrace Reclaim Statistics: vmscan", "proc vmstat: Faults")

#: Called after each run with (situation, policy, what ensure_result did), for progress lines.
OnRun = Callable[[Any, str, api.Ensured], None]


@dataclass
class Reproduction:
    """A finished reproduction: the report text (also in ``ROOT/report.md``) and its verdict."""

    report: str
    #: How many checks failed (0: the thread's claims all hold).
    failed: int
    #: The content of ROOT/reproduce.json.
    manifest: dict[str, Any] | None = None


def thread_table(thread: dict, columns: list[Column], row_of: Callable[[str], str]) -> str:
    """The thread's two columns beside our first two, row by row, formatted as our tables are."""
    base, new = columns[0], columns[1]

    def pair(old: float | None, now: float | None, u: str) -> list[str]:
        later = Cell(now, change_percent(old, now))
        return [format_value(old, u), format_cell(later, False, u)]

    rows = []
    for label, (t_old, t_new) in thread.items():
        u, ours = unit(label), row_of(label)
        rows.append([label, *pair(t_old, t_new, u), *pair(base.value(ours), new.value(ours), u)])
    headers = ["", f"thread {base.label}", f"thread {new.label}",
               f"reclaimlab {base.label}", f"reclaimlab {new.label}"]
    return markdown_table(headers, rows)


def reproduce(
    exp: ModuleType,
    situations: Sequence[Any],
    root: Path,
    seed: int,
    *,
    store: Store,
    trace: bool = False,
    on_run: OnRun | None = None,
) -> Reproduction:
    """Run ``situations`` (of experiment module ``exp``) with ``seed`` into ``store``, linked
    under ``root``; write and return the report. ``trace`` also records each run's trace
    (postprocess form)."""
    report = [f"# {exp.TITLE}", "", f"Seed {seed}. Runs in `{root}`. {overrides.describe()}"
              .rstrip(), ""]
    manifest: dict[str, Any] = {"experiment": exp.NAME, "title": exp.TITLE, "seed": seed,
                                "situations": []}
    failed = 0
    t0 = time.perf_counter()
    for sit in situations:
        sdir = root / sit.key
        sdir.mkdir(parents=True, exist_ok=True)
        if sit.prepare is not None:
            sit.prepare(sdir, seed)
        runs = {}
        keys = {}
        for _, policy in sit.policies:
            got = api.ensure_result(
                overrides.apply(sit.scenario(policy, seed, sdir)), store, seed=seed,
                trace="postprocess" if trace else None, view=sdir / policy,
            )
            keys[policy] = got.key
            if on_run is not None:
                on_run(sit, policy, got)
            runs[policy] = load_run(got.path)
        columns = [Column(label, [runs[policy]]) for label, policy in sit.policies]
        checks = sit.checks(runs)
        report += [f"## {sit.title}", "", sit.story]
        if sit.thread:
            report += ["", "**Beside the thread's published figures**", ""]
            report.append(thread_table(sit.thread, columns, exp.our_row))
        report += ["", render_markdown(columns, SECTIONS)]
        report += ["", "**Checks**", ""]
        for c in checks:
            failed += not c.passed
            report.append(f"- {'PASS' if c.passed else 'FAIL'}: {c.claim} ({c.detail})")
        report.append("")
        manifest["situations"].append(_situation_record(exp, sit, columns, checks, keys, root))
    report.append(f"{len(situations)} situations in {time.perf_counter() - t0:.1f} s wall time; "
                  f"{'all checks pass' if not failed else f'{failed} checks FAIL'}.")
    text = "\n".join(report) + "\n"
    write_text_atomic(root / "report.md", text)
    write_text_atomic(root / REPRODUCTION_MANIFEST, json.dumps(manifest, indent=1) + "\n")
    return Reproduction(text, failed, manifest)


def _situation_record(exp: ModuleType, sit: Any, columns: list[Column], checks: list,
                      keys: dict[str, str], root: Path) -> dict[str, Any]:
    """A situation as the HTML report reads it from reproduce.json."""
    tables = []
    for title, rows in build(columns):
        if title in SECTIONS:
            tables.append({
                "title": title,
                "headers": ["", *(c.label for c in columns)],
                "rows": [[r.label, *(format_cell(c, i == 0, r.unit) for i, c in enumerate(r.cells))]
                         for r in rows if r.label],
            })
    base, new = columns[0], columns[1]
    return {
        "key": sit.key,
        "title": sit.title,
        "story": sit.story,
        "runs": [{"label": label, "policy": policy,
                  "path": os.path.relpath(root / sit.key / policy, root), "key": keys[policy]}
                 for label, policy in sit.policies],
        "checks": [{"claim": c.claim, "passed": bool(c.passed), "detail": c.detail} for c in checks],
        "thread": {k: list(v) for k, v in sit.thread.items()},
        "ours": {k: [base.value(exp.our_row(k)), new.value(exp.our_row(k))] for k in sit.thread},
        "tables": tables,
    }
