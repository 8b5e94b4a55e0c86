"""What the reproductions with checks of their own share: a check (one statement of a thread,
its expected and measured figures, its verdict), how figures print, the verdict lines and
manifest entries of a situation, and the files a finished reproduction writes (report.md,
report.json, and the HTML report's manifest).

A check that compares with a figure of the thread or the spec is two-sided (:func:`band_check`:
the ratio ours / theirs inside a stated band), so that it can fail in both directions; a zero
on either side is said in words and does not pass (no infinite ratio). A check over a sweep
says over how many points it holds (:func:`holds_check`). Each check names its ``role``: a
prediction (nothing in the set-up was chosen by looking at the figure), a calibration input,
an invariant of the model, or a control (a check that the situation exercises what the
prediction is about)."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import api
from ..report import REPRODUCTION_MANIFEST
from ..results import write_text_atomic
from . import overrides

#: What a check's figure is to the model (report.json's ``role``).
ROLES = ("prediction", "calibration", "invariant", "control")


@dataclass
class Check:
    id: str
    claim: str
    expected: str
    measured: Any
    passed: bool
    #: The thread's or the spec's figure this check is compared with.
    figure: float | None = None
    #: The two-sided band of the verdict: on ``ratio`` when ``figure`` is given, else on
    #: ``measured``.
    band: tuple[float, float] | None = None
    #: measured / figure; None when either side is zero.
    ratio: float | None = None
    #: A zero on one side, in words ("no stalls under chinner+X2").
    zero: str | None = None
    role: str = "prediction"
    #: (points where the claim holds, points swept).
    holds: tuple[int, int] | None = None
    #: Where the figure comes from ("seed 002, simoops p99", "spec §E.A.4").
    source: str = ""

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"check {self.id}: role {self.role!r} is not one of {', '.join(ROLES)}")

    @property
    def detail(self) -> str:
        """Expected, measured and the rest of the verdict line (the common runner's form)."""
        return f"expected {self.expected}, measured {fmt(self.measured)}; {_extras(self)}"

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "claim": self.claim, "expected": self.expected,
                "measured": self.measured, "pass": bool(self.passed),
                "figure": self.figure,
                "band": None if self.band is None else [self.band[0], self.band[1]],
                "ratio": self.ratio, "zero": self.zero, "role": self.role,
                "holds": None if self.holds is None else {"n": self.holds[0], "of": self.holds[1]},
                "source": self.source}


def _number(x: Any, what: str) -> float:
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise ValueError(f"{what}: {x!r} is not a number") from None
    if math.isnan(v):
        raise ValueError(f"{what}: NaN")
    return v


def band_check(id: str, claim: str, measured: float, figure: float, lo: float, hi: float, *,
               source: str, role: str = "prediction", zero_ok: bool = False,
               zero_words: tuple[str, str] | None = None) -> Check:
    """Ours against a figure of the thread or the spec: passes iff lo <= measured / figure <= hi.
    A zero on either side does not pass (unless both are zero and ``zero_ok``); ``zero`` then
    says which side is zero, in ``zero_words`` = (ours is zero, theirs is zero) if given."""
    if not lo <= hi:
        raise ValueError(f"check {id}: band [{lo}, {hi}] is empty")
    m, f = _number(measured, f"check {id}: measured"), _number(figure, f"check {id}: figure")
    ours_zero, theirs_zero = (zero_words or ("ours is zero", f"{source}'s figure is zero"))
    ratio: float | None = None
    zero: str | None = None
    if m == 0 and f == 0:
        zero, passed = f"{ours_zero}; {theirs_zero}", zero_ok
    elif m == 0:
        zero, passed = ours_zero, False
    elif f == 0:
        zero, passed = theirs_zero, False
    else:
        ratio = m / f
        passed = lo <= ratio <= hi
    return Check(id, claim, f"ratio to {source}'s {fmt(figure)} in [{fmt(lo)}, {fmt(hi)}]",
                 measured, passed, figure=figure, band=(lo, hi),
                 ratio=None if ratio is None else round(ratio, 4), zero=zero, role=role,
                 source=source)


def range_check(id: str, claim: str, measured: float, lo: float, hi: float, *, source: str,
                role: str = "prediction") -> Check:
    """A two-sided band on the measured value itself (no figure to divide by)."""
    if not lo <= hi:
        raise ValueError(f"check {id}: band [{lo}, {hi}] is empty")
    m = _number(measured, f"check {id}: measured")
    return Check(id, claim, f"in [{fmt(lo)}, {fmt(hi)}] ({source})", measured, lo <= m <= hi,
                 band=(lo, hi), role=role, source=source)


def holds_check(id: str, claim: str, points: Sequence[bool], *, need: str = "all", source: str,
                role: str = "prediction") -> Check:
    """A claim over swept points: "holds at N of M points"; passes if it holds at all of them
    (``need="all"``) or at more than half (``"majority"``). No point: no pass."""
    if need not in ("all", "majority"):
        raise ValueError(f"check {id}: need must be 'all' or 'majority', not {need!r}")
    n, m = sum(bool(p) for p in points), len(points)
    passed = m > 0 and (n == m if need == "all" else 2 * n > m)
    want = "all points" if need == "all" else "a majority of the points"
    return Check(id, claim, f"holds at {want} ({source})", f"holds at {n} of {m} points", passed,
                 role=role, holds=(n, m), source=source)


@dataclass
class Situation:
    """One situation of a reproduction: its key (directory), title and the labels it runs."""

    key: str
    title: str
    policies: list[str]


def begin(name: str, title: str, seed: int, root: Path,
          intro: str) -> tuple[list[str], list[Check], dict[str, Any]]:
    """A reproduction's report so far (its title, seed, where the runs are and ``intro``), its
    checks (none yet) and the HTML report's manifest, before the first situation."""
    report = [f"# {title}", "", f"Seed {seed}. Runs in `{root}`. {overrides.describe()}".rstrip(),
              "", intro, ""]
    return report, [], {"experiment": name, "title": title, "seed": seed, "situations": []}


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
        ens = api.ensure_result(overrides.apply(scn), store, seed=seed, view=sdir / label)
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
    """A figure as the reports print it: thousands separated, two decimals (three significant
    figures below 0.1), '-' for none."""
    if isinstance(v, float):
        # Three significant figures below 0.1 (a fraction like 0.0121 is not "0.01").
        return f"{v:.3g}" if 0 < abs(v) < 0.1 else f"{v:,.2f}"
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}"
    return "-" if v is None else str(v)


def _extras(c: Check) -> str:
    """What a verdict line says beyond expected and measured: ratio, zero, band, holds, role."""
    parts = []
    if c.ratio is not None:
        parts.append(f"ratio {c.ratio:,.4g}")
    if c.zero:
        parts.append(c.zero)
    if c.band is not None and c.figure is None:
        parts.append(f"band [{fmt(c.band[0])}, {fmt(c.band[1])}]")
    if c.holds is not None:
        parts.append(f"holds at {c.holds[0]} of {c.holds[1]} points")
    parts.append(c.role)
    return "; ".join(parts)


def verdict_lines(got: list[Check]) -> list[str]:
    """The PASS/FAIL lines of a situation's checks, for report.md."""
    return [f"- {'PASS' if c.passed else 'FAIL'} {c.id}: {c.claim}: expected {c.expected}, "
            f"measured {fmt(c.measured)} ({_extras(c)})" for c in got]


def manifest_checks(got: list[Check]) -> list[dict[str, Any]]:
    """A situation's checks as the HTML report's manifest lists them: the verdict line's text
    and every field of report.json."""
    return [{"claim": f"{c.id}: {c.claim}", "passed": bool(c.passed), "detail": c.detail,
             **{k: v for k, v in c.as_json().items() if k not in ("claim", "pass")}}
            for c in got]


def close_situation(report: list[str], checks: list[Check], manifest: dict[str, Any], sit: Any,
                    got: list[Check], runs: dict[str, str],
                    sensitivity: list[dict[str, Any]] | None = None) -> None:
    """End a situation: its verdict lines in the report, its checks with the others, and its
    entry (runs by label -> store key, checks, the sensitivity sweeps' tables and plots from
    :func:`.sensitivity.sensitivity_record`) in the HTML report's manifest."""
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
        "sensitivity": list(sensitivity or []),
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
