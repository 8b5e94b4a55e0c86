"""Sensitivity of a reproduction's claim to a knob the thread does not fix.

A knob chosen by the model (a machine size, a workload's pace, a log size) is not a point but
a range: :func:`sweep_knob` runs a scenario over the cartesian product of the knob's values
(and any policy axis) and seeds through the sweep machinery (:func:`reclaimlab.sweep.plan` and
:func:`reclaimlab.sweep.execute`: the engine checks every key first, the runs go to the local
process pool, each finished run into the result store, so a re-run computes nothing twice),
and returns one row per run. :func:`sensitivity_table` says at how many of the points the
claim holds, :func:`sensitivity_plot` draws the figure per point against the claim's band, and
:func:`sensitivity_record` is the entry the HTML report shows (table and plot).

The sweep's directory (``out``) is an ordinary sweep directory (``sweep.toml``,
``scenario.toml``, ``summary.parquet``, ``sweep.json``): ``reclaimlab report`` draws it too.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import api
from .. import sweep as sweeps
from ..results import load_run, write_text_atomic
from ..store import Store
from ..tables import markdown_table
from . import overrides

#: A sweep's directory under the reproduction's root.
SENSITIVITY_DIR = "sensitivity"


def _toml(data: Mapping[str, Any]) -> str:
    import tomli_w

    return tomli_w.dumps(dict(data))


def sweep_knob(store: Store, name: str, base: dict[str, Any], axes: dict[str, list],
               seeds: Iterable[int] = range(1, 6), workers: int | None = None,
               on_run: Callable[[str, str], None] | None = None, *,
               points: Sequence[Mapping[str, Any]] | None = None,
               metrics: Callable[[Any], Mapping[str, Any]] | None = None,
               out: str | os.PathLike | None = None):
    """Run scenario ``base`` over ``axes`` (dotted scenario keys -> values) x ``seeds`` into
    ``store``; a pandas DataFrame with one row per run, in plan order: the axis values,
    ``seed``, ``status``, ``key``, the run's headline and vmstat counters, and what
    ``metrics(run)`` adds (``run`` is :func:`reclaimlab.results.load_run` of the entry).

    ``points`` are settings of several keys that move together (a policy pair, a workload's
    knobs): each is crossed with the axes (``axes`` may then be empty), and they go to the
    sweep file as its ``[[include]]`` tables.

    ``name`` names the sweep (its directory: ``out``, default a temporary directory removed
    afterwards). ``on_run(label, status)`` is told of each run ("reused", "done" or "failed").
    Takes the store's write lock unless the caller holds it. A bad axis key or value raises
    :class:`reclaimlab.sweep.SweepError` naming it."""
    import pandas as pd

    seeds = [int(s) for s in seeds]
    if not seeds:
        raise ValueError(f"sensitivity sweep {name}: no seeds")
    if (not axes and not points) or any(not isinstance(v, list) or not v for v in axes.values()):
        raise ValueError(f"sensitivity sweep {name}: every axis needs a non-empty list of values")
    include: list[dict[str, Any]] = []
    if points:
        keys = list(axes)
        include = [{**p, **dict(zip(keys, combo))}
                   for p in points for combo in itertools.product(*axes.values())]
        axes = {}
    tmp = None
    if out is None:
        tmp = tempfile.TemporaryDirectory(prefix=f"reclaimlab-sens-{name}-")
        out = tmp.name
    d = Path(out)
    try:
        d.mkdir(parents=True, exist_ok=True)
        write_text_atomic(d / "scenario.toml", _toml(overrides.apply(base)))
        write_text_atomic(d / "sweep.toml", _toml(
            {"scenario": "scenario.toml", "seeds": seeds, "axes": axes, "include": include}))
        sw = sweeps.load(d / "sweep.toml")
        # With points only, the sweep's product of no axes is the base scenario itself: not a
        # point of this sweep.
        jobs = [j for j in sweeps.plan(sw) if j.point or not include]

        ran: set[int] = set()

        def event(kind: str, *args: Any) -> None:
            if kind in ("done", "failed"):
                ran.add(args[0].index)
                if on_run is not None:
                    on_run(args[0].label, kind)

        def run_all() -> Any:
            got = sweeps.execute(jobs, store, d, sw.columns, workers=workers, on_event=event)
            sweeps.write_manifest(d, sw, store)
            return got

        if store.locked:
            outcome = run_all()
        else:
            with store.writing(f"reclaimlab sensitivity {name}"):
                outcome = run_all()
        rows, added = [], {}
        for job in jobs:
            row = dict(outcome.rows.get(job.index) or {"seed": job.seed, "status": "missing"})
            row.update(job.point)
            row["key"] = job.key
            if on_run is not None and job.index not in ran:
                on_run(job.label, "reused")
            if row.get("status") == "ok":
                run = load_run(store.path(job.key))
                for k, v in run.vmstat.items():
                    row.setdefault(k, v)
                if metrics is not None:
                    extra = dict(metrics(run))
                    added.update(dict.fromkeys(extra))
                    row.update(extra)
            rows.append(row)
        df = pd.DataFrame(rows)
        # The columns ``metrics`` adds, in its order (for callers that pick them out).
        df.attrs["metrics"] = list(added)
        return df
    finally:
        if tmp is not None:
            tmp.cleanup()


def ensure_many(store: Store, name: str, runs: Sequence[tuple[Mapping[str, Any], int]],
                workers: int | None = None,
                on_run: Callable[[str, str], None] | None = None) -> int:
    """Make sure ``store`` holds a result of each (scenario, seed) of ``runs``, whatever their
    structure: the missing ones go to the sweep machinery's process pool at once, in the order
    given (longest first keeps the workers busy to the end), so that a reproduction's
    situations, run one after another, then find every run of theirs in the store instead of
    running them one at a time, and a sensitivity sweep given the same scenarios reuses
    them. The keys are those :func:`reclaimlab.api.ensure_result` computes for the same dicts.
    ``on_run(label, status)`` is told of each run it makes ("done" or "failed"); returns how
    many it made."""
    jobs, seen = [], set()
    for scn, seed in runs:
        scn = overrides.apply(scn)
        src = api.scenario_source(scn)
        resolved = api.resolved_scenario(src)
        key = Store.key(resolved, int(seed))
        if key in seen:
            continue
        seen.add(key)
        job = sweeps.Job(len(jobs), {"name": scn.get("name", name)}, int(seed), src.text,
                         src.name, base_dir=os.getcwd())
        job.resolved, job.key = resolved, key
        jobs.append(job)
    if not jobs:
        return 0
    made = 0

    def event(kind: str, *args: Any) -> None:
        nonlocal made
        if kind in ("done", "failed"):
            made += 1
            if on_run is not None:
                on_run(args[0].label, kind)

    with tempfile.TemporaryDirectory(prefix=f"reclaimlab-runs-{name}-") as d:
        def run_all() -> None:
            sweeps.execute(jobs, store, Path(d), ["name"], workers=workers, on_event=event)

        if store.locked:
            run_all()
        else:
            with store.writing(f"reclaimlab {name}"):
                run_all()
    return made


def _value(v: Any) -> float:
    try:
        x = float(v)
    except (TypeError, ValueError):
        return math.nan
    return x


def sensitivity_table(df, knob: str, value_col: str,
                      verdict: Callable[[float], bool]) -> tuple[list[str], tuple[int, int]]:
    """Markdown lines of a table, one row per value of ``knob``: ``value_col`` of each seed and
    at how many seeds ``verdict(value)`` holds; and (points where it holds, points). A run
    without the value (failed, or NaN) counts as a point where the claim does not hold."""
    seeds = sorted(df["seed"].unique())
    rows, n, m = [], 0, 0
    for value, sub in df.groupby(knob, sort=False):
        by_seed = {int(r["seed"]): _value(r[value_col]) for _, r in sub.iterrows()}
        ok = [not math.isnan(v) and bool(verdict(v)) for v in by_seed.values()]
        n, m = n + sum(ok), m + len(ok)
        rows.append([str(value), *[_fmt(by_seed.get(int(s), math.nan)) for s in seeds],
                     f"{sum(ok)} of {len(ok)}"])
    headers = [knob, *[f"seed {s}" for s in seeds], "holds"]
    lines = [markdown_table(headers, rows), "", f"Holds at {n} of {m} points."]
    return lines, (n, m)


def _fmt(v: float) -> str:
    if math.isnan(v):
        return "-"
    if v == 0 or abs(v) >= 100:
        return f"{v:,.0f}"
    return f"{v:.3g}"


def sensitivity_plot(df, knob: str, value_col: str, path: str | os.PathLike,
                     band: tuple[float, float] | None = None, title: str = "") -> Path:
    """``value_col`` of each run against the values of ``knob`` (one mark per seed, their
    median joined by a line), with the claim's band shaded; written to ``path`` as SVG or PNG
    (by its suffix) with altair and vl-convert, as the HTML report draws its charts."""
    import altair as alt
    import pandas as pd
    import vl_convert as vlc

    path = Path(path)
    order = list(dict.fromkeys(df[knob].astype(str)))
    d = pd.DataFrame({"x": df[knob].astype(str), "seed": df["seed"].astype(int),
                      "y": [_value(v) for v in df[value_col]]}).dropna()
    finite = list(d["y"])
    lows = [b for b in (band or ()) if b > 0]
    log = bool(finite) and min(finite) > 0 and max(finite + lows) / min(finite + lows) > 100
    y_scale = alt.Scale(type="log") if log else alt.Scale(zero=False)
    x = alt.X("x:N", sort=order, title=knob)
    y = alt.Y("y:Q", title=value_col + (" (log)" if log else ""), scale=y_scale)
    layers = []
    if band is not None:
        lo, hi = band
        if log and lo <= 0:
            lo = min(finite + lows) / 10
        layers.append(alt.Chart(pd.DataFrame({"lo": [lo], "hi": [hi]})).mark_rect(
            color="#27ae60", opacity=0.15).encode(y=alt.Y("lo:Q", scale=y_scale), y2="hi:Q"))
    layers.append(alt.Chart(d).mark_point(filled=True, size=30).encode(
        x=x, y=y, color=alt.Color("seed:N"), tooltip=["x:N", "seed:N", "y:Q"]))
    med = d.groupby("x", sort=False)["y"].median().reset_index()
    layers.append(alt.Chart(med).mark_line(color="#555").encode(x=x, y=y))
    chart = alt.layer(*layers).properties(
        title=title or f"{value_col} along {knob}", width=320, height=200)
    spec = chart.to_dict()
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".png":
        path.write_bytes(vlc.vegalite_to_png(spec, scale=2))
    else:
        write_text_atomic(path, vlc.vegalite_to_svg(spec))
    return path


def sensitivity_record(title: str, knob: str, value_col: str, lines: Sequence[str],
                       holds: tuple[int, int], plot: str | os.PathLike | None, root: Path,
                       *, range_note: str = "", check: str = "") -> dict[str, Any]:
    """A sweep as the HTML report's manifest lists it under its situation (the ``sensitivity``
    list of :func:`.checks.close_situation`): title, why this range, the table's Markdown, at
    how many points the claim holds, and the plot (relative to ``root``)."""
    return {"title": title, "knob": knob, "value": value_col, "check": check,
            "range": range_note, "table": "\n".join(lines),
            "holds": {"n": holds[0], "of": holds[1]},
            "plot": None if plot is None else os.path.relpath(Path(plot), root)}


# ---- a claim comparing two policies, over a knob ------------------------------------------------


@dataclass
class Knob:
    """A knob of a scenario the thread does not fix, over a stated range: the labels of its
    values, the settings (dotted scenario keys) of each, and why this range."""

    key: str
    title: str
    labels: list[str]
    settings: list[dict[str, Any]]
    why: str


@dataclass
class PairSweep:
    """What :func:`pair_sweep` found: one row per (value, seed) with the old policy's figures
    (``old_*``), the new one's (``new_*``) and each check's figure (by check id); a holds
    check per check; the manifest's records; the report's lines."""

    points: Any
    checks: list[Any]
    records: list[dict[str, Any]]
    lines: list[str]


def _point_value(c: Any) -> float:
    """A check's figure at one point, for the table and the plot: its measured number when it
    has a band (0 when a side is zero), else 1 where it passes and 0 where it does not."""
    if c.band is not None:
        return 0.0 if c.zero or isinstance(c.measured, list) else float(c.measured)
    return 1.0 if c.passed else 0.0


def _point_verdict(c: Any) -> Callable[[float], bool]:
    """The check's own verdict as a function of :func:`_point_value`."""
    if c.band is None:
        return lambda v: v == 1
    lo, hi = c.band
    if c.figure:
        return lambda v: v != 0 and lo <= v / c.figure <= hi
    return lambda v: lo <= v <= hi


def pair_sweep_runs(knob: Knob, pairs: Sequence[Mapping[str, Any]], base: dict[str, Any],
                    seeds: Iterable[int] = range(1, 6)) -> list[tuple[dict[str, Any], int]]:
    """The (scenario, seed) runs :func:`pair_sweep` makes for these arguments, as its sweep
    builds them (the same store keys), for :func:`ensure_many`."""
    import copy

    out = []
    for point in ({**pair, **st} for pair in pairs for st in knob.settings):
        scn = copy.deepcopy(base)
        for k, v in point.items():
            sweeps.set_key(scn, k, v)
        out += [(scn, int(s)) for s in seeds]
    return out


def pair_sweep(store: Store, root: Path, sit_key: str, name: str, knob: Knob,
               pairs: Sequence[Mapping[str, Any]], base: dict[str, Any],
               figures: Callable[[Any], Mapping[str, Any]],
               checks: Callable[[Mapping[str, Any], Mapping[str, Any]], list[Any]],
               seeds: Iterable[int] = range(1, 6),
               on_run: Callable[[str, str], None] | None = None) -> PairSweep:
    """Run ``knob`` x the two policy settings ``pairs`` (old, new) x ``seeds`` from ``base``
    (sweep directory ``root/sensitivity/<name>``); at each (value, seed), ``checks(old
    figures, new figures)`` as the reproduction computes them at its own point. Per check: a
    table, a plot (``root/<sit_key>/<knob>-<check>.svg``) and a holds check (``<id>.<knob>``,
    "holds at N of M points", which passes only if the claim holds at every point)."""
    from .checks import holds_check

    points = [{**pair, **st} for pair in pairs for st in knob.settings]
    df = sweep_knob(store, name, base, {}, seeds, on_run=on_run, points=points, metrics=figures,
                    out=root / SENSITIVITY_DIR / name)
    keys = list(knob.settings[0])
    label = {json.dumps(st, sort_keys=True): lab for lab, st in zip(knob.labels, knob.settings)}
    df[knob.key] = [label[json.dumps({k: r[k] for k in keys}, sort_keys=True)]
                    for _, r in df.iterrows()]
    sel = []
    for pair in pairs:
        mask = df["status"] == "ok"
        for k, v in pair.items():
            mask &= df[k] == v
        sel.append(df[mask].set_index([knob.key, "seed"]))
    cols = df.attrs["metrics"]
    pts = sel[0][cols].add_prefix("old_").join(sel[1][cols].add_prefix("new_"), how="outer")
    pts = pts.reset_index()
    order = {lab: i for i, lab in enumerate(knob.labels)}
    pts = pts.assign(_o=pts[knob.key].map(order)).sort_values(["_o", "seed"]).drop(columns="_o")
    pts = pts.reset_index(drop=True)
    # A point whose runs did not both finish (a failed run) holds no claim.
    per = [None if r[[f"{w}_{c}" for w in ("old", "new") for c in cols]].isna().any() else
           checks({c: r[f"old_{c}"] for c in cols}, {c: r[f"new_{c}"] for c in cols})
           for _, r in pts.iterrows()]
    done = [p for p in per if p is not None]
    if not done:
        raise RuntimeError(f"sensitivity sweep {name}: no point finished both runs; see "
                           f"{root / SENSITIVITY_DIR / name / 'summary.csv'}")
    out = PairSweep(pts, [], [], [])
    for i, first in enumerate(done[0]):
        cid = first.id
        pts[cid] = [math.nan if p is None else _point_value(p[i]) for p in per]
        verdict = _point_verdict(first)
        table, holds = sensitivity_table(pts, knob.key, cid, verdict)
        band = None
        if first.band is not None:
            band = (first.band[0] * first.figure, first.band[1] * first.figure) if first.figure \
                else first.band
        plot = sensitivity_plot(pts, knob.key, cid, root / sit_key / f"{knob.key}-{cid}.svg",
                                band=band, title=f"{cid} along {knob.title}")
        c = holds_check(f"{cid}.{knob.key}", f"{first.claim}, over {knob.title} x seeds",
                        [p is not None and p[i].passed for p in per], source=f"sweep of {knob.title}",
                        role=first.role)
        out.checks.append(c)
        out.lines += [f"### {c.id}: {knob.title}", "", knob.why, "", *table, ""]
        out.records.append(sensitivity_record(f"{cid} over {knob.title}", knob.key, cid, table,
                                              holds, plot, root, range_note=knob.why,
                                              check=c.id))
    return out
