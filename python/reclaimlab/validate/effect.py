"""The algorithm's effect (issue 35, docs/VALIDATION.md "Under the multi-generational LRU"):
what switching a guest from the two lists to the multi-generational LRU changed in the real
kernel, beside what the same switch changed in the model.

A user comparing the two algorithms asks the model for a difference, so the difference is
scored, not only each side. For a scenario scored under both algorithms, each counter scored in
both (above its floor in both sittings, validate/rows.py) gives two ratios: the guest's, its
MGLRU boots' mean over its two-list boots' mean, and the model's, its MGLRU mean over its
two-list mean, each side simulated with the same profile and seeds. A change is judged only
where the guest's algorithm moved the counter out of [LOW, HIGH] and the two sittings' 95 %
intervals of the mean do not overlap: a smaller or unresolved change is the boots' own noise,
and no model could be told right or wrong on it. A judged change holds when the model moved
the counter the same way, and is within range when the model's ratio is within [LOW, HIGH]
of the guest's. The two sittings are different days' boots; the profile is one, so a pace that
moved between them moves the guest's ratio alone (the speed factor of each sitting says how far).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..tables import markdown_table
from .compare import Comparison
from .rows import HIGH, LOW, Row, timing_sensitive


@dataclass(frozen=True)
class Effect:
    scenario: str
    counter: str
    # Means under the two lists and under MGLRU: the guest's and the model's.
    real_classic: float
    real_mglru: float
    sim_classic: float
    sim_mglru: float
    # Whether the guest's change is judged (out of [LOW, HIGH], intervals apart).
    judged: bool

    @property
    def real_ratio(self) -> float:
        return self.real_mglru / self.real_classic

    @property
    def sim_ratio(self) -> float:
        return self.sim_mglru / self.sim_classic if self.sim_classic > 0 else math.inf

    @property
    def same_way(self) -> bool:
        return (self.real_ratio > 1) == (self.sim_ratio > 1)

    @property
    def within(self) -> bool:
        return LOW <= self.sim_ratio / self.real_ratio <= HIGH

    def as_json(self) -> dict[str, Any]:
        sim = self.sim_ratio
        return {
            "scenario": self.scenario, "counter": self.counter,
            "real_classic_mean": self.real_classic, "real_mglru_mean": self.real_mglru,
            "sim_classic_mean": self.sim_classic, "sim_mglru_mean": self.sim_mglru,
            "real_ratio": self.real_ratio, "sim_ratio": None if math.isinf(sim) else sim,
            "judged": self.judged, "same_way": self.same_way if self.judged else None,
            "within": self.within if self.judged else None,
            "timing_sensitive": timing_sensitive(self.counter),
        }


def _interval(r: Row) -> tuple[float, float]:
    half = r.real_mean * (r.real_ci or 0.0) / 100.0
    return r.real_mean - half, r.real_mean + half


def _apart(a: Row, b: Row) -> bool:
    lo_a, hi_a = _interval(a)
    lo_b, hi_b = _interval(b)
    return hi_a < lo_b or hi_b < lo_a


def effects(classic: Sequence[Comparison], mglru: Sequence[Comparison]) -> list[Effect]:
    """Every counter scored under both algorithms, scenario by scenario (in ``mglru``'s
    order), with whether the guest's change is judged."""
    by_name = {c.scenario: c for c in classic}
    out = []
    for m in mglru:
        c = by_name.get(m.scenario)
        if c is None:
            continue
        rows = {r.counter: r for r in c.rows if r.within is not None}
        for rm in m.rows:
            rc = rows.get(rm.counter)
            if rm.within is None or rc is None or rc.real_mean <= 0 or rm.real_mean <= 0:
                continue
            ratio = rm.real_mean / rc.real_mean
            judged = not LOW <= ratio <= HIGH and _apart(rc, rm)
            out.append(Effect(m.scenario, rm.counter, rc.real_mean, rm.real_mean,
                              rc.sim_mean, rm.sim_mean, judged))
    return out


def score(es: Sequence[Effect]) -> dict[str, Any]:
    judged = [e for e in es if e.judged]
    timing = [e for e in judged if timing_sensitive(e.counter)]
    return {
        "compared": len(es), "judged": len(judged),
        "same_way": sum(e.same_way for e in judged), "within": sum(e.within for e in judged),
        "timing_sensitive": {"judged": len(timing), "same_way": sum(e.same_way for e in timing),
                             "within": sum(e.within for e in timing)},
        "low": LOW, "high": HIGH,
    }


def _x(v: float) -> str:
    return "inf" if math.isinf(v) else f"{v:.2f}"


def table(es: Sequence[Effect]) -> str:
    """The judged changes as a Markdown table, then one line of totals."""
    rows = [
        [e.scenario, e.counter, f"{e.real_classic:.0f} → {e.real_mglru:.0f}", _x(e.real_ratio),
         f"{e.sim_classic:.0f} → {e.sim_mglru:.0f}", _x(e.sim_ratio),
         ("same way" if e.same_way else "OPPOSITE") + (", ok" if e.within else "")]
        for e in es if e.judged
    ]
    s = score(es)
    t = s["timing_sensitive"]
    head = ("scenario", "counter", "guest, two lists → MGLRU", "guest ×", "model, two lists → MGLRU",
            "model ×", "model's change")
    return (
        (markdown_table(head, rows) + "\n\n" if rows else "")
        + f"The algorithm's effect: of {s['compared']} counters scored under both, the guest's "
        f"switch moved {s['judged']} out of [{LOW}, {HIGH}] (intervals apart); the model moved "
        f"{s['same_way']} of them the same way, {s['within']} by a ratio within [{LOW}, {HIGH}] "
        f"of the guest's (timing-sensitive: {t['judged']} judged, {t['same_way']} the same way, "
        f"{t['within']} within).\n"
    )
