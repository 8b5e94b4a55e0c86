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
index or name (``"workload.db.anon.size"``). :func:`plan` checks every key and value against
the scenario schema (through the engine's own parser) before anything runs, and turns a bad
one into a :class:`SweepError` naming the sweep file's line and column. The runs are the cartesian product
of the axes, plus the included points, times the seeds; each has its store key, so
:func:`execute` runs only what the store lacks, in a local process pool or as Ray tasks, and
writes each finished run to the store as it arrives. The driver process alone writes the store
and the summaries, so workers (and Ray nodes) need no shared file system for results.

Workers import this module, so it imports nothing heavy at the top (rich, pandas and ray are
imported where used).
"""

from __future__ import annotations

import copy
import itertools
import json
import os
import re
import time
import tomllib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import api
from .results import result_files, sim_time_ns, write_bytes_atomic
from .store import Store

SUMMARY_PARQUET = "summary.parquet"
SUMMARY_CSV = "summary.csv"
#: What ``reclaimlab report`` needs to find the runs of a sweep directory again.
MANIFEST = "sweep.json"

#: Paths inside a scenario, resolved against the scenario file's directory by the engine. A
#: sweep hands the engine TOML text, so it makes them relative to the current directory the
#: same way (then the resolved scenario, and so the store key, equals the file's own).
PATH_KEYS = (("host", "zoneinfo"), ("workload", "*", "trace", "path"))

#: Headline counters of every run, as summary columns (absent ones are left empty).
_RESERVED = ("seed", "status", "key", "wall_time_s", "sim_time_s", "cpu_time_s", "error")


class SweepError(Exception):
    """A bad sweep file: the message names the file, the line and column, and the fix."""


# ---- the sweep file ---------------------------------------------------------------------------


@dataclass
class Sweep:
    path: Path
    scenario: Path
    seeds: list[int]
    axes: dict[str, list[Any]]
    include: list[dict[str, Any]]
    text: str = ""

    @property
    def columns(self) -> list[str]:
        """The axis columns of the summary: the axes, then keys only ``[[include]]`` sets."""
        cols = list(self.axes)
        for point in self.include:
            cols += [k for k in point if k not in cols]
        return cols


@dataclass
class Job:
    """One run of a sweep: a point (axis key -> value), a seed, and the scenario as TOML text."""

    index: int
    point: dict[str, Any]
    seed: int
    text: str
    name: str
    key: str = ""
    resolved: str = field(default="", repr=False)

    @property
    def label(self) -> str:
        pts = ", ".join(f"{k}={v}" for k, v in self.point.items())
        return f"{pts}{', ' if pts else ''}seed {self.seed}"


#: A place in the sweep file: 1-based line and column.
Pos = tuple[int, int]


def _pos_of(text: str, needle_re: str, start: int = 0, stop: int | None = None) -> Pos | None:
    """Line and column (1-based) of the first match of ``needle_re`` in lines [start, stop);
    the column is where its first group starts, or the match if it has none."""
    lines = text.splitlines()
    for i in range(start, len(lines) if stop is None else min(stop, len(lines))):
        m = re.search(needle_re, lines[i])
        if m:
            return i + 1, (m.start(1) if m.re.groups else m.start()) + 1
    return None


def _line_of(text: str, needle_re: str, start: int = 0, stop: int | None = None) -> int | None:
    """1-based number of the first line in [start, stop) matching ``needle_re``."""
    pos = _pos_of(text, needle_re, start, stop)
    return pos[0] if pos else None


def _key_re(key: str) -> str:
    return r"^\s*(" + re.escape(f'"{key}"') + "|" + re.escape(f"'{key}'") + "|" + re.escape(key) + r")\s*="


def _value_re(value: Any) -> str:
    if isinstance(value, str):
        return re.escape(json.dumps(value)) + "|" + re.escape(f"'{value}'")
    if isinstance(value, bool):
        return r"\b" + ("true" if value else "false") + r"\b"
    return r"(?<![\w.])" + re.escape(str(value)) + r"(?![\w.])"


class _Where:
    """Places (line and column) of the sweep file's keys and values, for error messages
    (tomllib keeps none)."""

    def __init__(self, path: Path, text: str):
        self.path, self.text = path, text
        self.nlines = len(text.splitlines())
        self.axes = _line_of(text, r"^\s*\[\s*axes\s*\]")
        self.includes = [i + 1 for i, l in enumerate(text.splitlines())
                         if re.match(r"^\s*\[\[\s*include\s*\]\]", l)]

    def _section(self, start: int | None) -> tuple[int, int]:
        if start is None:
            return 0, self.nlines
        end = _line_of(self.text, r"^\s*\[", start) or self.nlines + 1
        return start, end - 1

    def key(self, key: str, include: int | None = None) -> Pos | None:
        start = self.axes if include is None else self.includes[include]
        lo, hi = self._section(start)
        return _pos_of(self.text, _key_re(key), lo, hi)

    def value(self, key: str, value: Any, include: int | None = None) -> Pos | None:
        """Where ``value`` of axis (or ``[[include]]`` table) key ``key`` is; the key's place
        if it cannot be found."""
        return self._value_after(self.key(key, include), value)

    def top(self, key: str) -> Pos | None:
        lo = 0
        hi = min([x for x in [self.axes, *self.includes] if x] or [self.nlines + 1]) - 1
        return _pos_of(self.text, _key_re(key), lo, hi)

    def top_value(self, key: str, value: Any) -> Pos | None:
        """Where the value of top-level key ``key`` is (the key's place if not found)."""
        return self._value_after(self.top(key), value)

    def _value_after(self, at: Pos | None, value: Any) -> Pos | None:
        if at is None:
            return None
        line = self.text.splitlines()[at[0] - 1]
        # On the key's line, after its `=` (a value can look like the key).
        eq = line.index("=", at[1] - 1) + 1
        m = re.search(_value_re(value), line[eq:])
        if m:
            return at[0], eq + m.start() + 1
        # Or on a following line, before the next key or table (a multi-line array).
        nxt = _line_of(self.text, r"^\s*(\[|[\"'\w.-]+\s*=)", at[0]) or self.nlines + 1
        return _pos_of(self.text, _value_re(value), at[0], nxt - 1) or at

    def error(self, pos: Pos | None, message: str) -> SweepError:
        line, col = pos or (1, 1)
        return SweepError(f"{self.path}:{line}:{col}: error: {message}")


def load(path: str | os.PathLike) -> Sweep:
    """Read and check the shape of a sweep file (the keys themselves are checked by :func:`plan`)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SweepError(f"error: {path}: no such file") from None
    except OSError as e:
        raise SweepError(f"error: {path}: cannot read: {e.strerror}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"line (\d+), column (\d+)", str(e))
        raise SweepError(
            f"{path}:{m.group(1) if m else 1}:{m.group(2) if m else 1}: error: not valid TOML: {e}; "
            "check the quotes and "
            "brackets there (keys with dots are quoted: \"host.ram\" = [...])"
        ) from None
    where = _Where(path, text)
    allowed = {"scenario", "seeds", "axes", "include"}
    for k in data:
        if k not in allowed:
            raise where.error(where.top(k), f"unknown key `{k}` in a sweep file; allowed: "
                              "scenario, seeds, [axes], [[include]]")
    if not isinstance(data.get("scenario"), str):
        raise where.error(where.top("scenario"),
                          'needs scenario = "PATH" (the base scenario file, relative to this file)')
    scenario = path.parent / data["scenario"]
    if not scenario.is_file():
        raise where.error(where.top_value("scenario", data["scenario"]),
                          f"scenario {data['scenario']!r}: no such file "
                          f"({scenario}; a relative path is resolved against the sweep file's directory)")
    seeds_raw = data.get("seeds", 1)
    if isinstance(seeds_raw, int) and not isinstance(seeds_raw, bool) and seeds_raw >= 1:
        seeds = list(range(1, seeds_raw + 1))
    elif (isinstance(seeds_raw, list) and seeds_raw
          and all(isinstance(s, int) and not isinstance(s, bool) and 0 <= s < 2**64 for s in seeds_raw)):
        seeds = list(dict.fromkeys(seeds_raw))
    else:
        raise where.error(where.top_value("seeds", seeds_raw), "seeds must be a count (seeds = 3: seeds 1..3) or a "
                          "non-empty list of seeds (seeds = [1, 5, 9])")
    axes = data.get("axes", {})
    if not isinstance(axes, dict):
        raise where.error(where.top("axes"), "axes must be a table: [axes] with "
                          '"dotted.key" = [values...] lines')
    for k, vs in axes.items():
        if not isinstance(vs, list) or not vs:
            raise where.error(where.key(k), f"axis {k!r} must be a non-empty list of values, "
                              f'for example "{k}" = [{json.dumps(vs) if not isinstance(vs, list) else "..."}]')
    include = data.get("include", [])
    if not isinstance(include, list) or not all(isinstance(p, dict) for p in include):
        raise where.error(where.top("include"), "include must be tables: [[include]] with "
                          '"dotted.key" = value lines')
    sweep = Sweep(path, scenario, seeds, dict(axes), list(include), text)
    return sweep


# ---- scenarios of the points -----------------------------------------------------------------


def _absolutize_paths(data: dict[str, Any], base: Path) -> None:
    """Make the scenario's relative paths relative to the current directory (see PATH_KEYS),
    joined lexically as the engine joins them for a scenario file."""
    def walk(node: Any, keys: Sequence[str]) -> None:
        if not keys:
            return
        head, rest = keys[0], keys[1:]
        if head == "*":
            for item in node if isinstance(node, list) else []:
                walk(item, rest)
        elif isinstance(node, dict) and head in node:
            if not rest:
                if isinstance(node[head], str) and not os.path.isabs(node[head]):
                    node[head] = os.path.join(base, node[head])
            else:
                walk(node[head], rest)

    for keys in PATH_KEYS:
        walk(data, keys)


def set_key(data: dict[str, Any], dotted: str, value: Any) -> None:
    """Set a dotted scenario key; a list (``workload``) is indexed by position or by name.
    Raises KeyError with a message when a list has no such element."""
    parts = dotted.split(".")
    node: Any = data
    for i, part in enumerate(parts[:-1]):
        if isinstance(node, list):
            node = _element(node, part, ".".join(parts[: i + 1]))
            continue
        if not isinstance(node, dict):
            raise KeyError(f"{'.'.join(parts[:i])!r} is a value, not a table")
        nxt = node.get(part)
        if nxt is None:
            nxt = node[part] = {}
        node = nxt
    last = parts[-1]
    if isinstance(node, list):
        raise KeyError(f"{dotted!r} names a whole list element; name a key inside it")
    if not isinstance(node, dict):
        raise KeyError(f"{'.'.join(parts[:-1])!r} is a value, not a table")
    node[last] = value


def _element(items: list, part: str, where: str) -> Any:
    if part.isdigit():
        if int(part) < len(items):
            return items[int(part)]
        raise KeyError(f"{where!r}: there are only {len(items)} elements (indexes from 0)")
    for item in items:
        if isinstance(item, dict) and item.get("name") == part:
            return item
    names = ", ".join(str(i.get("name")) for i in items if isinstance(i, dict))
    raise KeyError(f"{where!r}: no element named {part!r} (names: {names}; or use an index from 0)")


def _scenario_text(base: dict[str, Any], point: Mapping[str, Any], base_dir: Path) -> str:
    """The scenario of a point as TOML text; paths (the base's and the axes') are relative to
    the scenario file's directory, as in the file itself."""
    import tomli_w

    data = copy.deepcopy(base)
    for k, v in point.items():
        set_key(data, k, v)
    _absolutize_paths(data, base_dir)
    return tomli_w.dumps(data)


def _key_at_fault(e: Exception, text: str) -> bool:
    """Whether the engine's error about the generated scenario ``text`` points at a key or a
    table (its column is the first of the line's text), rather than at a value."""
    m = re.match(r"^[^\n]*?:(\d+):(\d+): error: ", str(e).strip())
    if not m:
        return False
    lines, line, col = text.splitlines(), int(m.group(1)), int(m.group(2))
    return 0 < line <= len(lines) and lines[line - 1][: col - 1].strip() == ""


def _engine_message(e: Exception) -> str:
    """The engine's message without its location in generated text, on one line."""
    msg = re.sub(r"^[^\n]*?:\d+:\d+: error: ", "", str(e).strip())
    return re.sub(r"\s*\n\s*help: ", "; help: ", msg).replace("\n", " ")


def points(sweep: Sweep) -> list[tuple[dict[str, Any], int | None]]:
    """The distinct points: the cartesian product of the axes, then the included ones (with the
    index of their [[include]] table, for error messages)."""
    keys = list(sweep.axes)
    out: list[tuple[dict[str, Any], int | None]] = [
        (dict(zip(keys, combo)), None) for combo in itertools.product(*sweep.axes.values())
    ]
    out += [(dict(p), i) for i, p in enumerate(sweep.include)]
    seen, unique = set(), []
    for p, inc in out:
        ident = json.dumps(p, sort_keys=True)
        if ident not in seen:
            seen.add(ident)
            unique.append((p, inc))
    return unique


def plan(sweep: Sweep) -> list[Job]:
    """Every run of the sweep, each checked by the engine's parser and given its store key.
    Raises SweepError naming the sweep file's line and column of the first bad key or value."""
    where = _Where(sweep.path, sweep.text)
    # The base scenario first, as it stands: its own errors name its own file and line
    # (ScenarioError, which the command line prints as is).
    api.validate(sweep.scenario)
    base = tomllib.loads(sweep.scenario.read_text(encoding="utf-8"))
    base_dir = sweep.scenario.parent
    name = str(sweep.scenario)

    def check(point: Mapping[str, Any], at: Callable[[bool], Pos | None], what: str) -> str:
        """The resolved scenario of ``point``; a SweepError at ``at(True)`` (the key's place)
        if the key is at fault, else at ``at(False)`` (the value's)."""
        text = ""
        try:
            text = _scenario_text(base, point, base_dir)
            return api.resolved_scenario(api.Source(text=text, name=name))
        except KeyError as e:
            raise where.error(at(True), f"{what}: {e.args[0]}") from None
        except api.ScenarioError as e:
            raise where.error(at(_key_at_fault(e, text)), f"{what}: {_engine_message(e)}") from None

    # Each key and value alone first, so that the error names the place of the culprit.
    for k, vs in sweep.axes.items():
        for v in vs:
            check({k: v}, lambda key, k=k, v=v: where.key(k) if key else where.value(k, v),
                  f"axis {json.dumps(k)} = {json.dumps(v)}")
    for i, p in enumerate(sweep.include):
        for k, v in p.items():
            check({k: v}, lambda key, k=k, v=v, i=i: where.key(k, i) if key else where.value(k, v, i),
                  f"[[include]] {json.dumps(k)} = {json.dumps(v)}")
    jobs: list[Job] = []
    for point, inc in points(sweep):
        desc = ", ".join(f"{k} = {json.dumps(v)}" for k, v in point.items()) or "the base scenario"
        first = next(iter(point), None)
        resolved = check(
            point,
            lambda _key, first=first, inc=inc: (where.key(first, inc) if first else where.top("scenario")),
            f"the point {desc}",
        )
        text = _scenario_text(base, point, base_dir)
        for seed in sweep.seeds:
            job = Job(len(jobs), point, seed, text, name)
            job.resolved = resolved
            job.key = Store.key(resolved, seed)
            jobs.append(job)
    return jobs


# ---- running ----------------------------------------------------------------------------------


def run_job(text: str, name: str, seed: int) -> dict[str, Any]:
    """Run one job where it is scheduled (a pool worker, a Ray task): the result's files,
    encoded, or the error. Errors are returned, not raised: a run that fails fails the same way
    every time (the simulator is deterministic), so there is nothing to retry. The times cover
    the simulation and the encoding of its files, what ``reclaimlab run`` does for one run."""
    cpu, wall = time.process_time(), time.perf_counter()
    try:
        r = api.run(api.Source(text=text, name=name), seed=seed)
    except Exception as e:  # noqa: BLE001 - recorded with the run, the sweep goes on
        return {"ok": False, "error": f"{type(e).__name__}: {str(e).strip()}"}
    files = result_files(r.texts(), r.series)
    return {"ok": True, "files": files, "wall_time_s": time.perf_counter() - wall,
            "cpu_time_s": time.process_time() - cpu}


def _init_worker() -> None:
    """A pool worker dies with its parent, however the parent dies (SIGKILL included), instead
    of finishing a run nobody will store; Ctrl-C is the parent's to handle."""
    import ctypes
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass
    if os.getppid() == 1:  # the parent died before prctl took effect
        os._exit(1)


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


class _Local:
    """A process pool of ``workers`` processes, forked from this one: they start with
    everything already imported (a spawned worker would spend about half a second of CPU on
    imports, several percent of a sweep of short runs). :func:`execute` submits the first job
    before anything starts a thread in this process (the progress display starts after), so
    the fork copies no thread's half-held lock."""

    def __init__(self, workers: int):
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        self.workers = workers
        self.pool = ProcessPoolExecutor(
            workers, mp_context=multiprocessing.get_context("fork"), initializer=_init_worker
        )

    def submit(self, job: Job):
        return self.pool.submit(run_job, job.text, job.name, job.seed)

    def results(self, handles: dict) -> Iterable[tuple[Any, dict[str, Any]]]:
        from concurrent.futures import as_completed

        for fut in as_completed(handles):
            try:
                yield fut, fut.result()
            except Exception as e:  # a worker died (killed, out of memory)
                yield fut, {"ok": False, "error": f"worker lost: {type(e).__name__}: {e}"}

    def close(self, interrupted: bool) -> None:
        if interrupted:
            # Do not wait for the runs in flight: kill the workers (their results would be lost
            # anyway, and the next sweep recomputes only those).
            for p in list(getattr(self.pool, "_processes", {}).values()):
                p.kill()
        # Wait even then: with the workers dead the pool's manager thread ends at once, and
        # joining it here keeps it from writing into pipes the interpreter's exit has already
        # closed (a traceback after the "interrupted" line, seen on a loaded machine).
        self.pool.shutdown(wait=True, cancel_futures=True)


def _check_reachable(address: str) -> None:
    """Fail fast on a HOST:PORT nobody listens on (ray.init would retry for minutes)."""
    import socket

    host, sep, port = address.rpartition(":")
    if address == "auto" or not sep or not port.isdigit() or "://" in address:
        return
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as e:
        raise SweepError(
            f"error: --ray {address}: cannot connect to a Ray cluster ({e.strerror or e}); start "
            "one with `ray start --head`, or check the address"
        ) from None


class _Ray:
    """Each run a Ray task on the cluster at ``address`` ("auto": the one this machine is in),
    retried by Ray if its worker or node dies."""

    RETRIES = 3

    def __init__(self, address: str):
        try:
            import ray
        except ImportError:
            raise SweepError(
                "error: --ray needs Ray: pip install 'reclaimlab[ray]' (in this environment)"
            ) from None
        import logging

        self.ray = ray
        _check_reachable(address)
        try:
            ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False)
        except (ConnectionError, RuntimeError, ValueError) as e:
            raise SweepError(f"error: --ray {address}: cannot connect to a Ray cluster: {e}") from None
        self.workers = max(1, int(ray.cluster_resources().get("CPU", 1)))
        self.remote = ray.remote(max_retries=self.RETRIES, num_cpus=1)(run_job)

    def submit(self, job: Job):
        return self.remote.remote(job.text, job.name, job.seed)

    def results(self, handles: dict) -> Iterable[tuple[Any, dict[str, Any]]]:
        pending = list(handles)
        while pending:
            ready, pending = self.ray.wait(pending, num_returns=1)
            ref = ready[0]
            try:
                yield ref, self.ray.get(ref)
            except Exception as e:  # retries exhausted
                yield ref, {"ok": False, "error": f"ray task failed: {type(e).__name__}: {e}"}

    def close(self, interrupted: bool) -> None:
        self.ray.shutdown()


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
    row["error"] = error
    return row


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
