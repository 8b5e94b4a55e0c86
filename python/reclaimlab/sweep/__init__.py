"""Sweeps: a base scenario × axes of scenario keys × seeds, run into the content-addressed store.

A sweep file (TOML)::

    scenario = "../scenarios/anon-plus-file.toml"   # relative to the sweep file
    seeds = 3                                        # 1..3, or a list: [1, 5, 9]
    [axes]
    "policy.kswapd_balance" = ["v2.6.36", "v6.1"]
    "host.ram" = ["4GiB", "8GiB"]
    [[include]]                                      # extra points, optional
    "policy.kswapd_balance" = "v3.0"
    "host.ram" = "2GiB"

Axis keys are dotted scenario keys; inside ``[[workload]]`` the second part is the workload's
index or name (``"workload.db.anon.size"``). Each point's scenario goes to the engine as TOML
text with the base scenario file's directory, against which the engine resolves every key of
type path (zoneinfo, traces, measured latency samples, the guests' too), as it does for the file
itself: a sweep runs from any directory, and a point that changes nothing has the file's own
store key. :func:`plan` checks every key and value against the scenario schema (through the
engine's own parser) before anything runs, and turns a bad one into a :class:`SweepError` naming
the sweep file's line and column. The runs are the cartesian product of the axes, plus the
included points, times the seeds; each has its store key, so :func:`execute` runs only what the
store lacks, in a local process pool or as Ray tasks, and writes each finished run to the store
as it arrives. The driver process alone writes the store and the summaries, so workers (and Ray
nodes) need no shared file system for results.

The package's modules, by concern: ``file`` (the sweep file: reading, shape, places for
errors), ``planning`` (points, scenario texts, jobs and their keys), ``backends`` (the local pool
and Ray, and ``run_job`` that both run), ``execution`` (running a plan into the store, the
summary files and the manifest). Everything other modules use is re-exported here.

Workers import this package, so it imports nothing heavy at the top (rich, pandas and ray are
imported where used).
"""

from __future__ import annotations

from .backends import run_job
from .execution import (
    MANIFEST,
    SUMMARY_CSV,
    SUMMARY_PARQUET,
    OnEvent,
    Outcome,
    execute,
    write_manifest,
    write_summary,
)
from .file import Sweep, SweepError, load
from .planning import Job, plan, points, set_key

__all__ = [
    "MANIFEST", "SUMMARY_CSV", "SUMMARY_PARQUET", "Job", "OnEvent", "Outcome",
    "Sweep", "SweepError", "execute", "load", "plan", "points", "run_job", "set_key",
    "write_manifest", "write_summary",
]
