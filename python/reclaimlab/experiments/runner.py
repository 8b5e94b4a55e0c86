"""Running a reproduction: every situation of an experiment under each of its policies, then
the report (our tables beside the thread's figures, and the verdict of each check).

Runs go to ``ROOT/<situation>/<policy>``; :func:`reclaimlab.api.ensure_result` reuses a run
whose result is up to date, so an interrupted reproduction resumes where it stopped. The
report is written to ``ROOT/report.md``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from .. import api
from ..compare import Cell, Column, change_percent, format_cell, format_value, render_markdown, unit
from ..results import load_run, write_text_atomic
from ..tables import markdown_table

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
    trace: bool = False,
    on_run: OnRun | None = None,
) -> Reproduction:
    """Run ``situations`` (of experiment module ``exp``) with ``seed`` under ``root``, write and
    return the report. ``trace`` also records each run's trace (postprocess form)."""
    report = [f"# {exp.TITLE}", "", f"Seed {seed}. Runs in `{root}`.", ""]
    failed = 0
    t0 = time.perf_counter()
    for sit in situations:
        sdir = root / sit.key
        sdir.mkdir(parents=True, exist_ok=True)
        if sit.prepare is not None:
            sit.prepare(sdir, seed)
        runs = {}
        for _, policy in sit.policies:
            got = api.ensure_result(
                sit.scenario(policy, seed, sdir), sdir / policy, seed=seed,
                trace="postprocess" if trace else None,
            )
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
    report.append(f"{len(situations)} situations in {time.perf_counter() - t0:.1f} s wall time; "
                  f"{'all checks pass' if not failed else f'{failed} checks FAIL'}.")
    text = "\n".join(report) + "\n"
    write_text_atomic(root / "report.md", text)
    return Reproduction(text, failed)
