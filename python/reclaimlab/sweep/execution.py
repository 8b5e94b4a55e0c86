"""Running a planned sweep: what the store lacks goes to a backend, each finished run goes to
the store as it arrives, and DIR/summary.{parquet,csv} and DIR/sweep.json say where things
stand."""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..results import sim_time_ns, write_bytes_atomic
from ..store import Store
from .backends import _Local, _Ray
from .file import Sweep
from .planning import Job

SUMMARY_PARQUET = "summary.parquet"
SUMMARY_CSV = "summary.csv"
#: What ``reclaimlab report`` needs to find the runs of a sweep directory again.
MANIFEST = "sweep.json"

#: Headline counters of every run, as summary columns (absent ones are left empty).
_RESERVED = ("seed", "status", "key", "wall_time_s", "sim_time_s", "cpu_time_s", "error")


@dataclass
class Outcome:
    """Where each job of a sweep stands after :func:`execute`."""

    done: int = 0
    reused: int = 0
    failed: int = 0
    rows: dict[int, dict[str, Any]] = field(default_factory=dict)
    run_seconds: float = 0.0  # summed wall time of the runs done now
    wall_seconds: float = 0.0
    #: CPU time the sweep process spent writing entries into the store.
    store_cpu_seconds: float = 0.0


def _row(job: Job, status: str, summary: Mapping[str, Any] | None, meta: Mapping[str, Any],
         error: str = "") -> dict[str, Any]:
    row: dict[str, Any] = {f"{k}": v for k, v in job.point.items()}
    row.update(seed=job.seed, status=status, key=job.key, wall_time_s=meta.get("wall_time_s"))
    t = sim_time_ns(summary) if summary else None
    row["sim_time_s"] = None if t is None else t / 1e9
    row["cpu_time_s"] = meta.get("cpu_time_s")
    head = summary.get("headline") if summary else None
    if isinstance(head, Mapping):
        for k, v in head.items():
            if k not in _RESERVED and k not in job.point:
                row[str(k)] = v
    if summary:
        row.update(extra_columns(summary))
    row["error"] = error
    return row


def _column(name: str) -> str:
    """A name as part of a column's: letters, digits and underscores (charts read dots in a
    column's name as nested fields)."""
    return re.sub(r"[^A-Za-z0-9_]", "_", name)


def extra_columns(summary: Mapping[str, Any]) -> dict[str, Any]:
    """What a sweep row has beside the headline: each thread's accesses (a time-bound
    workload's throughput), the system's memory stall totals (PSI) and each memory cgroup's
    peak, memory.events high and max, refaults, stall totals and what proactive writes
    reclaimed from it, when the run has them."""
    out: dict[str, Any] = {}
    for t in summary.get("threads") or []:
        if isinstance(t, Mapping) and "accesses" in t:
            out[f"accesses_{_column(str(t['thread']))}"] = t["accesses"]
    pressure = (summary.get("pressure") or {}).get("memory") or {}
    for kind in ("some", "full"):
        if isinstance(pressure.get(kind), Mapping) and "total_us" in pressure[kind]:
            out[f"psi_{kind}_total_us"] = pressure[kind]["total_us"]
    for name, cg in (summary.get("cgroups") or {}).items():
        c = f"cg_{_column(str(name))}"
        out[f"{c}_peak"] = cg.get("memory.peak")
        for e in ("high", "max"):
            out[f"{c}_events_{e}"] = (cg.get("memory.events") or {}).get(e)
        stat = cg.get("memory.stat") or {}
        out[f"{c}_refaults"] = (stat.get("workingset_refault_anon", 0)
                                + stat.get("workingset_refault_file", 0))
        cg_pressure = cg.get("memory.pressure") or {}
        for kind in ("some", "full"):
            if isinstance(cg_pressure.get(kind), Mapping):
                out[f"{c}_psi_{kind}_total_us"] = cg_pressure[kind].get("total_us")
        pro = cg.get("proactive") or {}
        if pro:
            # Bytes the memory.reclaim and memory.high writes reclaimed (a controller's take).
            out[f"{c}_proactive_reclaimed"] = sum(
                (pro.get(f) or {}).get("reclaimed", 0) for f in ("memory.reclaim", "memory.high"))
    return out


def write_summary(out: Path, rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> None:
    """DIR/summary.parquet and DIR/summary.csv, one row per finished run, in plan order; each
    file replaced atomically. Written with pyarrow and the csv module, not pandas: importing
    pandas alone costs more CPU than the bookkeeping of a whole sweep of short runs."""
    import csv
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    names = [*columns, *_RESERVED[:-1]]
    for r in rows:
        names += [k for k in r if k not in names and k != "error"]
    names.append("error")
    data = {n: [r.get(n) for r in rows] for n in names}
    for n, values in data.items():
        kinds = {type(v) for v in values if v is not None}
        if len(kinds) > 1 and kinds != {int, float}:
            # Axis values may mix types ("4GiB" and 4294967296): one type per Parquet column.
            data[n] = [None if v is None else str(v) for v in values]
        elif not kinds:
            data[n] = pa.array(values, type=pa.string())
    sink = pa.BufferOutputStream()
    pq.write_table(pa.table(data), sink)
    write_bytes_atomic(out / SUMMARY_PARQUET, sink.getvalue().to_pybytes())
    text = io.StringIO()
    w = csv.writer(text, lineterminator="\n")
    w.writerow(names)
    for r in rows:
        w.writerow(["" if r.get(n) is None else r.get(n) for n in names])
    write_bytes_atomic(out / SUMMARY_CSV, text.getvalue().encode("utf-8"))


def write_manifest(out: Path, sweep: Sweep, store: Store) -> None:
    data = {
        # As the user gave them, for the report's headings; the store relative to DIR, so
        # that DIR can move with its store.
        "sweep": str(sweep.path),
        "scenario": str(sweep.scenario),
        "store": os.path.relpath(store.root.resolve(), out.resolve()),
        "axes": sweep.columns,
        "seeds": sweep.seeds,
    }
    write_bytes_atomic(out / MANIFEST, (json.dumps(data, indent=1) + "\n").encode("utf-8"))


#: What execute() tells its caller as it goes: ("start", total, already, workers) once, then
#: ("submitted", job) for each run it hands out and ("done", job) or ("failed", job, error)
#: for each that finishes. A display may start a thread on "start", not before.
OnEvent = Callable[..., None]


def execute(
    jobs: Sequence[Job],
    store: Store,
    out: Path,
    columns: Sequence[str],
    *,
    workers: int | None = None,
    ray: str | None = None,
    on_event: OnEvent | None = None,
    summary_every: float = 5.0,
) -> Outcome:
    """Run the jobs the store lacks (the caller holds the store's lock), store each as it
    finishes, and keep DIR/summary.{parquet,csv} up to date (rewritten at most every
    ``summary_every`` seconds while running, and at the end: each rewrite costs some tens of
    milliseconds, which would add up to a noticeable share of a sweep of short runs)."""
    t0 = time.perf_counter()
    emit = on_event or (lambda *a: None)
    outcome = Outcome()
    # A sweep killed while rewriting a summary leaves its hidden temporary file: remove it
    # (the caller holds the store's lock, so no other sweep is writing here).
    for name in (SUMMARY_PARQUET, SUMMARY_CSV, MANIFEST):
        for leftover in out.glob(f".{name}.partial-*"):
            leftover.unlink(missing_ok=True)

    def from_store(job: Job) -> bool:
        found = store.lookup(job.key, job.resolved, job.seed)
        if found is not None:
            outcome.rows[job.index] = _row(job, "ok", found.summary, store.meta(job.key))
        return found is not None

    todo: list[Job] = []
    for job in jobs:
        if from_store(job):
            outcome.reused += 1
        else:
            todo.append(job)

    def flush() -> None:
        write_summary(out, [outcome.rows[i] for i in sorted(outcome.rows)], columns)

    flush()
    if not todo:
        emit("start", len(jobs), outcome.reused, 0)
        outcome.wall_seconds = time.perf_counter() - t0
        return outcome
    backend: _Local | _Ray = (
        _Ray(ray) if ray else _Local(max(1, min(workers or os.cpu_count() or 1, len(todo))))
    )
    interrupted = True
    try:
        # Every job is submitted (the pool's workers forked) before the caller's progress
        # display starts its thread.
        handles = {backend.submit(job): job for job in todo}
        emit("start", len(jobs), outcome.reused, backend.workers)
        for job in todo:
            emit("submitted", job)
        last = time.monotonic()
        for handle, got in backend.results(handles):
            job = handles[handle]
            if got["ok"]:
                store_cpu = time.process_time()
                store.put(job.key, got["files"], wall_time_s=got["wall_time_s"],
                          cpu_time_s=got["cpu_time_s"], label=job.label)
                outcome.store_cpu_seconds += time.process_time() - store_cpu
                summary = json.loads(got["files"]["summary.json"])
                outcome.rows[job.index] = _row(job, "ok", summary, got)
                outcome.done += 1
                outcome.run_seconds += got["wall_time_s"]
                emit("done", job)
            else:
                store.record_failure(job.key, job.label, got["error"])
                outcome.rows[job.index] = _row(job, "failed", None, {}, got["error"])
                outcome.failed += 1
                emit("failed", job, got["error"])
            if time.monotonic() - last >= summary_every:
                flush()
                last = time.monotonic()
        interrupted = False
    finally:
        backend.close(interrupted)
        # An interrupt can land between a run's store.put and its row: the store is what
        # holds the finished runs, so the summary lists what it holds.
        for job in todo:
            if job.index not in outcome.rows and from_store(job):
                outcome.done += 1
        flush()
    outcome.wall_seconds = time.perf_counter() - t0
    return outcome
