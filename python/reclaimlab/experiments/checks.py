"""What the reproductions with checks of their own share: a check (one statement of a thread,
its expected and measured figures, its verdict), how figures print, the verdict lines and
manifest entries of a situation, and the files a finished reproduction writes (report.md,
report.json, and the HTML report's manifest)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import api
from ..report import REPRODUCTION_MANIFEST
from ..results import write_text_atomic


@dataclass
class Check:
    id: str
    claim: str
    expected: str
    measured: Any
    passed: bool

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "claim": self.claim, "expected": self.expected,
                "measured": self.measured, "pass": bool(self.passed)}


@dataclass
class Situation:
    """One situation of a reproduction: its key (directory), title and the labels it runs."""

    key: str
    title: str
    policies: list[str]


def open_situation(root: Path, sit: Any, store: Any, seed: int,
                   on_run: Callable[[Any, str, Any], None] | None):
    """Start a situation: its directory under ``root``, and ``ensure(label, scenario)``, which
    runs the scenario with ``seed`` into ``store`` (or reuses its result), links it as
    ``root/<key>/<label>``, records its store key in the returned ``keys`` and reports it to
    ``on_run``."""
    sdir = root / sit.key
    sdir.mkdir(parents=True, exist_ok=True)
    keys: dict[str, str] = {}

    def ensure(label: str, scn: Any) -> api.Ensured:
        ens = api.ensure_result(scn, store, seed=seed, view=sdir / label)
        keys[label] = ens.key
        if on_run is not None:
            on_run(sit, label, ens)
        return ens

    return ensure, keys


@dataclass
class Reproduction:
    report: str
    failed: int


def fmt(v: Any) -> str:
    """A figure as the reports print it: thousands separated, two decimals, '-' for none."""
    if isinstance(v, float):
        return f"{v:,.2f}"
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}"
    return "-" if v is None else str(v)


def verdict_lines(got: list[Check]) -> list[str]:
    """The PASS/FAIL lines of a situation's checks, for report.md."""
    return [f"- {'PASS' if c.passed else 'FAIL'} {c.id}: {c.claim}: expected {c.expected}, "
            f"measured {fmt(c.measured)}" for c in got]


def manifest_checks(got: list[Check]) -> list[dict[str, Any]]:
    """A situation's checks as the HTML report's manifest lists them."""
    return [{"claim": f"{c.id}: {c.claim}", "passed": bool(c.passed),
             "detail": f"expected {c.expected}, measured {fmt(c.measured)}"} for c in got]


def close_situation(report: list[str], checks: list[Check], manifest: dict[str, Any], sit: Any,
                    got: list[Check], runs: dict[str, str]) -> None:
    """End a situation: its verdict lines in the report, its checks with the others, and its
    entry (runs by label -> store key, checks) in the HTML report's manifest."""
    report += ["", "**Checks**", ""]
    report += verdict_lines(got)
    report.append("")
    checks += got
    manifest["situations"].append({
        "key": sit.key, "title": sit.title, "story": "",
        "runs": [{"label": label, "policy": label, "path": f"{sit.key}/{label}", "key": key}
                 for label, key in runs.items()],
        "checks": manifest_checks(got),
        "thread": {}, "ours": {}, "tables": [],
    })


def finish(root: Path, report: list[str], checks: list[Check], manifest: dict[str, Any],
           t0: float) -> Reproduction:
    """Close the report with the count and the wall time, and write report.md, report.json
    and the manifest under ``root``."""
    failed = sum(not c.passed for c in checks)
    report.append(f"{len(checks)} checks in {time.perf_counter() - t0:.1f} s wall time; "
                  f"{'all pass' if not failed else f'{failed} FAIL'}.")
    text = "\n".join(report) + "\n"
    write_text_atomic(root / "report.md", text)
    write_text_atomic(root / "report.json",
                      json.dumps({"checks": [c.as_json() for c in checks]}, indent=1) + "\n")
    write_text_atomic(root / REPRODUCTION_MANIFEST, json.dumps(manifest, indent=1) + "\n")
    return Reproduction(text, failed)
