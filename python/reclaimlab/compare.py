"""mmtests-style comparison tables of reclaimlab runs (``reclaimlab compare``).

A *column* is one run, or the runs of one scenario over several seeds (then each cell is the
mean, and a difference from the baseline column is marked significant or not). The first column
is the baseline; every other cell shows its change from the baseline in percent.

Where each row comes from (core-mm §8.4-8.5). Every row is computed from ``vmstat`` and
``summary.json``; the kernel's trace-vmscan-postprocess.pl gives the same totals on a
``--trace postprocess`` trace of the same run:

Runs are read with :func:`reclaimlab.results.load_run` (which also counts a ``trace`` if the run
directory holds one); this module only derives, compares and formats.

* Direct reclaims = Σ allocstall_*; pages scanned/reclaimed = pgscan_*/pgsteal_* per reclaimer.
* Kswapd wakeups, Time kswapd awake, Time stalled direct reclaim = the summary's
  ``kswapd_wakeups``, ``kswapd_awake_ms`` and ``direct_stall_ms``.
* Reclaim writes: anon = pswpout, file = nr_vmscan_write - pswpout. Sync writes are always 0: 6.1
  reclaim writeback is asynchronous and the simulator never emits a sync write. vmstat does not
  split writes between direct reclaim and kswapd, so that split is taken from the run's ``trace``
  (attributed per task as the script does) or, without one, is exact only when one reclaimer
  scanned nothing; otherwise it is unavailable ("-").
* Wake kswapd requests has no vmstat counter: it is counted from ``trace`` (the
  ``mm_vmscan_wakeup_kswapd`` events of tasks that did direct reclaim, as the script counts
  them), and is unavailable without a trace.
* Derived rows as mmtests computes them, with the simulated elapsed time T standing in for both
  the elapsed and the User/Sys time of a real test:
  %age scanned/reclaimed = reclaimed / scanned; %age scanned/written = writes / scanned;
  %age file scanned/written = file writes / scanned;
  Percentage Time Spent Direct Reclaim = stall / (T + stall);
  Percentage Time kswapd Awake = awake / T (all x 100).

Significance (several seeds per column): Welch's two-sided t-test at 95%, shown as in mmtests by a
cell ``mean *+x.xx%*`` instead of ``mean (+x.xx%)``: scipy's ``ttest_ind(equal_var=False)``.
When neither column varies at all over its seeds, a difference is certain and is marked
significant (the t statistic is undefined there).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from .results import Run, sim_time_ns

Value = float | int | None


# ---- rows -------------------------------------------------------------------------------------


def _add(*xs: Value) -> Value:
    return None if any(x is None for x in xs) else sum(xs)


def _sub(a: Value, b: Value) -> Value:
    return None if a is None or b is None else a - b


def _pct(num: Value, den: Value) -> Value:
    if num is None or den is None:
        return None
    return 100.0 * num / den if den else 0.0


def metrics(run: Run) -> dict[str, Value]:
    """Every row's value for one run, keyed by row label."""
    vm = run.vmstat.get
    head = run.summary.get("headline") or {}
    ns = sim_time_ns(run.summary)
    elapsed = None if ns is None else ns / 1e9

    def secs(key: str) -> Value:
        ms = head.get(key)
        return None if ms is None else ms / 1000.0

    stalls = [v for k, v in run.vmstat.items() if k.startswith("allocstall_")]
    d_scan, k_scan = vm("pgscan_direct"), vm("pgscan_kswapd")
    d_steal, k_steal = vm("pgsteal_direct"), vm("pgsteal_kswapd")
    anon_w, all_w = vm("pswpout"), vm("nr_vmscan_write")
    written = {"anon": anon_w, "file": _sub(all_w, anon_w)}

    def writes(who: str, kind: str, mode: str) -> Value:
        if mode == "sync":
            return 0
        if run.trace is not None:
            return run.trace.writes[who, kind, mode]
        # No trace: the split is known only when the other reclaimer scanned (so wrote) nothing.
        this, other = (d_scan, k_scan) if who == "direct" else (k_scan, d_scan)
        if this == 0:
            return 0
        return written[kind] if other == 0 else None

    stall, awake = secs("direct_stall_ms"), secs("kswapd_awake_ms")
    scanned, reclaimed = _add(d_scan, k_scan), _add(d_steal, k_steal)
    m: dict[str, Value] = {
        "Simulated Elapsed Time (seconds)": elapsed,
        "Direct reclaims": sum(stalls) if stalls else None,
        "Direct reclaim pages scanned": d_scan,
        "Direct reclaim pages reclaimed": d_steal,
    }
    for mode in ("async", "sync"):
        for kind in ("file", "anon"):
            m[f"Direct reclaim write {kind} {mode} I/O"] = writes("direct", kind, mode)
    m["Wake kswapd requests"] = None if run.trace is None else run.trace.wake_kswapd_requests
    m["Kswapd wakeups"] = head.get("kswapd_wakeups")
    m["Kswapd pages scanned"] = k_scan
    m["Kswapd pages reclaimed"] = k_steal
    for mode in ("async", "sync"):
        for kind in ("file", "anon"):
            m[f"Kswapd reclaim write {kind} {mode} I/O"] = writes("kswapd", kind, mode)
    m.update(
        {
            "Time stalled direct reclaim (seconds)": stall,
            "Time kswapd awake (seconds)": awake,
            "Total pages scanned": scanned,
            "Total pages reclaimed": reclaimed,
            "%age total pages scanned/reclaimed": _pct(reclaimed, scanned),
            "%age total pages scanned/written": _pct(all_w, scanned),
            "%age file pages scanned/written": _pct(written["file"], scanned),
            "Percentage Time Spent Direct Reclaim": _pct(stall, _add(elapsed, stall)),
            "Percentage Time kswapd Awake": _pct(awake, elapsed),
            "Major Faults": vm("pgmajfault"),
            "Minor Faults": _sub(vm("pgfault"), vm("pgmajfault")),
            "Page ins": vm("pgpgin"),
            "Page outs": vm("pgpgout"),
            "Swap ins": vm("pswpin"),
            "Swap outs": anon_w,
        }
    )
    return m


@dataclass
class Section:
    title: str
    rows: list[str]  # row labels; "" is a blank separator line


FTRACE_ROWS = [
    "Direct reclaims",
    "Direct reclaim pages scanned",
    "Direct reclaim pages reclaimed",
    *(f"Direct reclaim write {k} {m} I/O" for m in ("async", "sync") for k in ("file", "anon")),
    "Wake kswapd requests",
    "Kswapd wakeups",
    "Kswapd pages scanned",
    "Kswapd pages reclaimed",
    *(f"Kswapd reclaim write {k} {m} I/O" for m in ("async", "sync") for k in ("file", "anon")),
    "Time stalled direct reclaim (seconds)",
    "Time kswapd awake (seconds)",
    "",
    "Total pages scanned",
    "Total pages reclaimed",
    "%age total pages scanned/reclaimed",
    "%age total pages scanned/written",
    "%age file pages scanned/written",
    "Percentage Time Spent Direct Reclaim",
    "Percentage Time kswapd Awake",
]

SECTIONS = [
    Section("MMTests Statistics: duration", ["Simulated Elapsed Time (seconds)"]),
    Section("FTrace Reclaim Statistics: vmscan", FTRACE_ROWS),
    Section(
        "proc vmstat: Faults",
        ["Major Faults", "Minor Faults", "Page ins", "Page outs", "Swap ins", "Swap outs"],
    ),
]

VMSTAT_TITLE = "proc vmstat: every counter non-zero in some run"
LATENCY_TITLE = "Latency (HDR histograms, ns)"
LATENCY_PREFIX = "Latency "
_PERCENTILES = (("p50", "p50_ns"), ("p95", "p95_ns"), ("p99", "p99_ns"), ("p99.9", "p99.9_ns"),
                ("max", "max_ns"))


def latency_metrics(run: Run) -> dict[str, Value]:
    """``Latency <kind> <percentile>`` rows from summary.json's ``latency`` object."""
    out: dict[str, Value] = {}
    for kind, h in (run.summary.get("latency") or {}).items():
        if not isinstance(h, dict) or not h.get("count"):
            continue
        for label, key in _PERCENTILES:
            out[f"{LATENCY_PREFIX}{kind} {label}"] = h.get(key)
    return out


def unit(label: str) -> str:
    if label.startswith(("%age", "Percentage")):
        return "percent"
    return "seconds" if label.endswith("(seconds)") else "count"


# ---- statistics -------------------------------------------------------------------------------


def mean(xs: Sequence[Value]) -> Value:
    if not xs or any(x is None for x in xs):
        return None
    return sum(xs) / len(xs)


def change_percent(base: Value, value: Value) -> Value:
    if base is None or value is None:
        return None
    if base == 0:
        return 0.0 if value == 0 else None  # no finite relative change from zero
    return 100.0 * (value - base) / base


def significant(base: Sequence[Value], other: Sequence[Value]) -> bool | None:
    """Welch's two-sided t-test at 95% (scipy's ``ttest_ind(equal_var=False)``); None when it
    cannot be applied (< 2 samples, gaps)."""
    if len(base) < 2 or len(other) < 2 or None in base or None in other:
        return None
    import warnings

    from scipy.stats import ttest_ind

    def spread(xs: Sequence[float]) -> float:
        m = sum(xs) / len(xs)
        return sum((x - m) ** 2 for x in xs)

    if spread(base) + spread(other) == 0:
        return mean(base) != mean(other)  # no noise at all: any difference is real
    with warnings.catch_warnings():
        # scipy warns of precision loss on near-constant samples, which a deterministic
        # simulator often gives; the p-value is still right for them.
        warnings.simplefilter("ignore", RuntimeWarning)
        p = ttest_ind(other, base, equal_var=False).pvalue
    return bool(p < 0.05)


# ---- the comparison ---------------------------------------------------------------------------


@dataclass
class Column:
    label: str
    runs: list[Run]
    samples: dict[str, list[Value]] = field(default_factory=dict)

    def __post_init__(self):
        per_run = [metrics(r) | latency_metrics(r) | {"vmstat " + n: v for n, v in r.vmstat.items()}
                   for r in self.runs]
        names = dict.fromkeys(k for m in per_run for k in m)
        self.samples = {k: [m.get(k) for m in per_run] for k in names}

    def value(self, row: str) -> Value:
        xs = self.samples.get(row, [None])
        return xs[0] if len(xs) == 1 else mean(xs)


@dataclass
class Cell:
    value: Value
    change: Value = None
    significant: bool | None = None


@dataclass
class Row:
    label: str
    unit: str
    cells: list[Cell]


def build(columns: list[Column]) -> list[tuple[str, list[Row]]]:
    """The sections as (title, rows); a row with an empty label is a separator."""

    def row(key: str, label: str) -> Row:
        if not label:
            return Row("", "", [])
        base = columns[0]
        cells = [Cell(base.value(key))]
        for c in columns[1:]:
            v = c.value(key)
            sig = significant(base.samples.get(key, []), c.samples.get(key, []))
            cells.append(Cell(v, change_percent(cells[0].value, v), sig))
        return Row(label, unit(label), cells)

    out = [(s.title, [row(r, r) for r in s.rows]) for s in SECTIONS]
    # Latency percentiles of runs with filesystem workloads (summary.json `latency`).
    lat = list(dict.fromkeys(k for c in columns for k in c.samples if k.startswith(LATENCY_PREFIX)))
    if lat:
        out.append((LATENCY_TITLE, [row(k, k) for k in lat]))
    names: dict[str, None] = {}
    for c in columns:
        for r in c.runs:
            names.update((n, None) for n, v in r.vmstat.items() if v)
    out.append((VMSTAT_TITLE, [row("vmstat " + n, n) for n in names]))
    return out


# ---- formatting -------------------------------------------------------------------------------


def format_value(value: Value, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "percent":
        return f"{value:.2f}%"
    if unit == "count" and isinstance(value, int):
        return str(value)  # a single run's count; means keep their decimals
    return f"{value:.2f}"


def format_cell(cell: Cell, baseline: bool, unit: str) -> str:
    text = format_value(cell.value, unit)
    if baseline or cell.value is None:
        return text
    change = "n/a" if cell.change is None else f"{cell.change:+.2f}%"
    # mmtests' marker: a significant change is framed by '*' instead of parentheses.
    return f"{text} *{change}*" if cell.significant else f"{text} ({change})"


def _cells(row: Row) -> list[str]:
    return [format_cell(c, i == 0, row.unit) for i, c in enumerate(row.cells)]


def notes(columns: list[Column]) -> list[str]:
    n = len(columns[0].runs)
    out = [f"baseline: {columns[0].label}"]
    if any(len(c.runs) > 1 for c in columns):
        out.append(
            f"each value is the mean of {n} seeds; *+x.xx%* marks a change significant at 95% "
            "(Welch's t-test), (+x.xx%) one that is not"
        )
    if any(r.trace is None for c in columns for r in c.runs):
        out.append(
            '"-": needs a trace (reclaimlab run --trace postprocess, or compare --seeds N --trace)'
        )
    return out


def render_text(columns: list[Column]) -> str:
    sections = build(columns)
    labels = [c.label for c in columns]
    body = {id(r): _cells(r) for _, rows in sections for r in rows}
    lw = max(len(r.label) for _, rows in sections for r in rows)
    widths = [
        max([len(labels[i])] + [len(cells[i]) for cells in body.values() if cells])
        for i in range(len(columns))
    ]

    def line(label: str, cells: Sequence[str]) -> str:
        return (
            label.ljust(lw) + "".join("  " + c.rjust(w) for c, w in zip(cells, widths))
        ).rstrip()

    out = list(notes(columns))
    for title, rows in sections:
        out += ["", title, line("", labels)]
        out += [line(r.label, body[id(r)]) for r in rows]
    return "\n".join(out) + "\n"


def render_markdown(columns: list[Column], titles: Collection[str] | None = None) -> str:
    """The comparison as Markdown; only the sections named in ``titles``, if given."""

    def md(text: str) -> str:
        return text.replace("|", "\\|").replace("*", "\\*")

    out = [f"_{md(n)}_" for n in notes(columns)]
    for title, rows in build(columns):
        if titles is not None and title not in titles:
            continue
        out += ["", f"### {title}", ""]
        out.append("| | " + " | ".join(md(c.label) for c in columns) + " |")
        out.append("|---|" + "---:|" * len(columns))
        out += ["| " + " | ".join(map(md, [r.label, *_cells(r)])) + " |" for r in rows if r.label]
    return "\n".join(out) + "\n"


def to_json(columns: list[Column]) -> dict[str, Any]:
    return {
        "baseline": columns[0].label,
        "columns": [
            {
                "label": c.label,
                "runs": [str(r.path) for r in c.runs],
                "seeds": [r.summary.get("seed") for r in c.runs],
            }
            for c in columns
        ],
        "sections": [
            {
                "title": title,
                "rows": [
                    {
                        "label": r.label,
                        "unit": r.unit,
                        "values": [c.value for c in r.cells],
                        "change_percent": [c.change for c in r.cells],
                        "significant": [c.significant for c in r.cells],
                    }
                    for r in rows
                    if r.label
                ],
            }
            for title, rows in build(columns)
        ],
        "notes": notes(columns),
    }


def render_json(columns: list[Column]) -> str:
    return json.dumps(to_json(columns), indent=2, allow_nan=False) + "\n"


RENDERERS: dict[str, Callable[[list[Column]], str]] = {
    "text": render_text,
    "markdown": render_markdown,
    "json": render_json,
}
