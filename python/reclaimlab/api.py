"""The Python API: run a scenario (a TOML file or the same structure as a dict) and get DataFrames.

Everything the command line does goes through here or :mod:`reclaimlab.results`: validating and
resolving scenarios, running them (:func:`run`), reusing an up-to-date result instead of running
again (:func:`ensure_result`), trace replay through a plain cache (:func:`lru`) and the policy
registry (:func:`policies`). This is the only module that calls the extension's functions.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Mapping
from contextlib import nullcontext
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Union

from . import _core
from ._core import ENGINE_VERSION, InternalError, ScenarioError, SimulationError, TraceError
from .results import (
    parse_vmstat,
    result_files,
    series_chunks,
    series_len,
    series_names,
    sim_time_ns,
    write_result_dir,
)
from .store import Store

__all__ = [
    "ENGINE_VERSION",
    "ensure_result",
    "Ensured",
    "InternalError",
    "lru",
    "parse_vmstat",
    "policies",
    "resolved_scenario",
    "run",
    "RunResult",
    "scenario_info",
    "scenario_source",
    "ScenarioError",
    "ScenarioNotFound",
    "show_defaults",
    "sim_time_ns",
    "SimulationError",
    "Source",
    "TraceError",
    "validate",
]

ScenarioLike = Union[str, os.PathLike, Mapping[str, Any]]
ProgressLike = Union[bool, None, Callable[[int, int], Any]]


class ScenarioNotFound(FileNotFoundError):
    """The scenario path does not name a readable file (``reason`` says why)."""

    def __init__(self, path: str, reason: str = "no such file"):
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def _dict_error(path: str, message: str, fix: str) -> ScenarioError:
    return ScenarioError(f"<dict>: error: in field `{path}`: {message}\n  help: {fix}")


def _check_dict(value: Any, path: str = "") -> None:
    """Refuse what TOML cannot hold before it is turned into TOML text: None (TOML has no
    null), keys that are not strings, values of types TOML does not know. The message names the
    key as a dotted path, like the parser's own messages."""
    if isinstance(value, Mapping):
        for k, v in value.items():
            if not isinstance(k, str):
                raise _dict_error(path or "<top>", f"key {k!r} is a {type(k).__name__}, not a string",
                                  "scenario keys are strings, as in a TOML file")
            _check_dict(v, f"{path}.{k}" if path else k)
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            _check_dict(v, f"{path}[{i}]")
    elif value is None:
        raise _dict_error(path, "is None, and a scenario has no null value",
                          "leave the key out to get its default, or give it a value")
    elif not isinstance(value, (str, bool, int, float)):
        raise _dict_error(path, f"is a {type(value).__name__}, which a scenario cannot hold",
                          "use a string, number, boolean, list or dict, as in a TOML file")


@dataclass(frozen=True)
class Source:
    """A scenario as the extension takes it: a path, or TOML text reported under ``name``
    whose relative paths are relative to ``base_dir`` (the current directory if None)."""

    path: str | None = None
    text: str | None = None
    name: str = "<dict>"
    base_dir: str | None = None

    def kwargs(self) -> dict[str, Any]:
        if self.path is not None:
            return {"path": self.path}
        if self.base_dir is not None:
            return {"text": self.text, "name": self.name, "base_dir": self.base_dir}
        return {"text": self.text, "name": self.name}


def _plain(value: Any) -> Any:
    """Mappings and sequences (other than strings) as plain dicts and lists, for tomli_w."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, int) and not isinstance(value, bool) and value > 2**63 - 1:
        # TOML integers stop at 2^63-1; the scenario parser takes larger ones as decimal strings.
        return str(value)
    return value


def scenario_source(scenario: ScenarioLike | Source) -> Source:
    """Turn a path or a dict into a :class:`Source`. Raises ScenarioNotFound for a missing file."""
    if isinstance(scenario, Source):
        return scenario
    if isinstance(scenario, Mapping):
        import tomli_w

        _check_dict(scenario)
        return Source(text=tomli_w.dumps(_plain(scenario)), name="<dict>")
    if isinstance(scenario, (str, os.PathLike)):
        path = os.fspath(scenario)
        if os.path.isdir(path):
            raise ScenarioNotFound(path, "is a directory, not a scenario file (give a .toml file)")
        if not os.path.isfile(path):
            reason = "no such file" if not os.path.lexists(path) else "not a regular file"
            raise ScenarioNotFound(path, reason)
        return Source(path=path)
    raise TypeError(
        f"scenario must be a path or a dict, not {type(scenario).__name__}"
    )


def validate(scenario: ScenarioLike | Source) -> None:
    """Raise ScenarioError if the scenario is invalid."""
    _core.parse(**scenario_source(scenario).kwargs())


def scenario_info(scenario: ScenarioLike | Source) -> dict[str, Any]:
    """``{"name", "seed", "workloads"}`` of a valid scenario (raises ScenarioError otherwise)."""
    return dict(_core.info(**scenario_source(scenario).kwargs()))


def show_defaults(scenario: ScenarioLike | Source) -> str:
    """The full scenario with every default written out, as TOML."""
    text = _core.show_defaults(**scenario_source(scenario).kwargs())
    return text if text.endswith("\n") else text + "\n"


def resolved_scenario(scenario: ScenarioLike | Source) -> str:
    """The scenario as a run records it in ``summary.json`` (``"scenario"``): every default
    written out. Two scenarios that resolve to the same text give the same run."""
    return _core.show_defaults(**scenario_source(scenario).kwargs())


def _last_row(series: Any, n: int) -> Mapping[str, list[int]]:
    """The last sample of a series, as plain columns of one value."""
    if isinstance(series, Mapping):
        return {k: list(v[n - 1:n]) for k, v in series.items()}
    import numpy as np

    row = np.frombuffer(series.read(n - 1, 1), dtype="<i8")
    return {k: [int(v)] for k, v in zip(series.names, row)}


class RunResult:
    """The outputs of one run. Build it with :func:`run`."""

    def __init__(self, raw: Mapping[str, Any], wall_time_s: float = 0.0):
        self.vmstat_text: str = raw["vmstat"]
        self.zoneinfo: str = raw["zoneinfo"]
        self.buddyinfo: str = raw["buddyinfo"]
        self.summary_json: str = raw["summary_json"]
        self.counters: dict[str, int] = dict(raw.get("counters", ()))
        self.trace: str | None = raw.get("trace")
        # Files only some runs have (``slabinfo``, ``shrinker_debugfs`` with slab shrinkers).
        self.extra_files: dict[str, str] = dict(raw.get("extra_files", {}))
        # Plain columns, or the engine's Timeseries (a long run's samples stay on disk until
        # written or asked for).
        series = raw["timeseries"]
        self._columns: Any = dict(series) if isinstance(series, Mapping) else series
        self.wall_time_s = wall_time_s
        self.out: Path | None = None

    @cached_property
    def vmstat(self) -> dict[str, int]:
        """``/proc/vmstat`` at the end of the run, name -> value, in the kernel's order."""
        return parse_vmstat(self.vmstat_text)

    @cached_property
    def summary(self) -> dict[str, Any]:
        return json.loads(self.summary_json)

    @cached_property
    def timeseries(self):
        """The sampled time series as a pandas DataFrame (``time_ns`` first, int64 columns)."""
        import numpy as np
        import pandas as pd

        chunks = list(series_chunks(self._columns))
        return pd.DataFrame(
            {name: np.concatenate([c[name] for c in chunks]) for name in series_names(self._columns)}
        )

    @cached_property
    def columns(self) -> dict[str, list[int]]:
        """The time series as plain columns (what ``timeseries.parquet`` holds), read into memory
        (a long run's series is large: :meth:`write` streams it instead)."""
        if isinstance(self._columns, Mapping):
            return self._columns
        return {name: col.tolist() for name, col in self.timeseries.items()}

    @property
    def series(self) -> Any:
        """The time series as the engine keeps it (what :func:`reclaimlab.results.result_files`
        and :func:`reclaimlab.results.write_result_dir` take), without reading it into memory."""
        return self._columns

    @property
    def name(self) -> str | None:
        """The scenario's name."""
        return self.summary.get("name")

    @property
    def scenario(self) -> str | None:
        """The scenario as run, every default filled in (TOML text)."""
        return self.summary.get("scenario")

    @property
    def seed(self) -> int | None:
        return self.summary.get("seed")

    @property
    def headline(self) -> dict[str, Any]:
        h = self.summary.get("headline")
        return dict(h) if isinstance(h, Mapping) else {}

    @property
    def sim_time_ns(self) -> int | None:
        t = sim_time_ns(self.summary)
        if t is None:
            n = series_len(self._columns)
            if n:
                last = next(series_chunks(_last_row(self._columns, n)))
                t = int(last["time_ns"][-1]) if "time_ns" in last else None
        return t

    def texts(self) -> dict[str, str]:
        texts = {
            "vmstat": self.vmstat_text,
            "zoneinfo": self.zoneinfo,
            "buddyinfo": self.buddyinfo,
            "summary.json": self.summary_json,
        }
        if self.trace is not None:
            texts["trace"] = self.trace
        texts.update(self.extra_files)
        return texts

    def write(self, directory: str | os.PathLike) -> Path:
        """Write the result directory (vmstat, zoneinfo, buddyinfo, summary.json,
        timeseries.parquet, timeseries.csv, and trace when the run recorded one), replacing a
        previous result there only once complete."""
        self.out = write_result_dir(directory, self.texts(), self._columns)
        return self.out

    def __repr__(self) -> str:
        return f"<RunResult name={self.name!r} seed={self.seed!r}>"


def _progress_callback(progress: ProgressLike):
    """(callback for the extension, object to close afterwards or None)."""
    if progress is None or progress is False:
        return None, None
    if progress is True:
        from .progress import ProgressBar

        bar = ProgressBar(sys.stderr)
        return bar, bar
    if callable(progress):
        return progress, progress if hasattr(progress, "close") else None
    raise TypeError("progress must be a bool or a callable(now_ns, end_ns)")


def run(
    scenario: ScenarioLike,
    seed: int | None = None,
    out: str | os.PathLike | None = None,
    invariants: str | int = "off",
    progress: ProgressLike = False,
    trace: str | None = None,
) -> RunResult:
    """Run a scenario (path to a TOML file, or a dict of the same structure).

    ``seed`` overrides the scenario's seed; ``out`` writes the result directory; ``invariants`` is
    "off", "every" or N (check every Nth event); ``progress=True`` shows a progress bar on stderr
    (if it is a terminal) for runs longer than a second, or pass a callable(now_ns, end_ns).
    ``trace="kernel"`` records the reclaim events in 6.1's ftrace text format (``"postprocess"``:
    the form trace-vmscan-postprocess.pl parses); it is written as ``trace``.
    Raises ScenarioError for an invalid scenario, TraceError for a workload's malformed or
    unreadable trace, SimulationError if the run fails.
    """
    src = scenario_source(scenario)
    callback, closer = _progress_callback(progress)
    t0 = time.perf_counter()
    try:
        raw = _core.run(
            **src.kwargs(), seed=seed, invariants=invariants, progress=callback, trace=trace
        )
    finally:
        if closer is not None:
            closer.close()
    result = RunResult(raw, wall_time_s=time.perf_counter() - t0)
    if out is not None:
        result.write(out)
    return result


def lru(
    trace: str | os.PathLike,
    capacity: int,
    policy: str = "lru",
    format: str | None = None,
    compression: str | None = None,
) -> dict[str, Any]:
    """Replay ``trace`` through a fixed-capacity single-list cache (``reclaimlab lru``).

    ``policy`` is "lru", "fifo" or "clock"; ``capacity`` counts objects (every object has size
    one); ``format`` ("oracle" or "csv") and ``compression`` ("none" or "zstd") default to what
    the file name says. Returns ``{"requests", "misses", "miss_ratio", "seconds", "skipped",
    "policy", "capacity"}``: ``seconds`` is the wall time of reading and simulating, ``skipped``
    the oracleGeneral records of size 0 (not requests, as in libCacheSim). Raises
    :class:`TraceError` for a missing, unreadable or malformed trace.
    """
    return dict(
        _core.lru(os.fspath(trace), capacity, policy=policy, format=format, compression=compression)
    )


@dataclass(frozen=True)
class Ensured:
    """What :func:`ensure_result` found or made."""

    #: The result directory: the ``view`` if one was asked for, else the store entry.
    path: Path
    summary: dict[str, Any]
    #: True if an up-to-date result was already in the store and nothing ran.
    reused: bool
    #: Wall time of the run, None when reused.
    wall_time_s: float | None = None
    #: The run's key in the store (:func:`reclaimlab.results.run_key`).
    key: str = ""


def ensure_result(
    scenario: ScenarioLike | Source,
    store: Store | str | os.PathLike,
    *,
    seed: int | None = None,
    trace: str | None = None,
    progress: ProgressLike = False,
    view: str | os.PathLike | None = None,
) -> Ensured:
    """Make sure ``store`` (a :class:`reclaimlab.store.Store` or its directory) holds an
    up-to-date result of ``scenario`` (with ``seed``, or the scenario's own): reuse it if it
    does, run and store it otherwise. ``view`` also makes that path a symlink to the entry.

    Up to date means the same fully resolved scenario, seed and engine version (the store key),
    and a recorded trace when ``trace`` asks for one. This is what makes ``examples``,
    ``compare --seeds``, ``reproduce`` and ``sweep`` resumable. Takes the store's write lock
    for the call unless the caller holds it.
    """
    src = scenario_source(scenario)
    want_seed = int(scenario_info(src)["seed"]) if seed is None else seed
    resolved = resolved_scenario(src)
    st = store if isinstance(store, Store) else Store(store)
    key = st.key(resolved, want_seed)
    with nullcontext(st) if st.locked else st.writing("reclaimlab"):
        found = st.lookup(key, resolved, want_seed, need_trace=trace is not None)
        if found is not None:
            path, summary, wall = found.path, found.summary, None
        else:
            result = run(src, seed=want_seed, progress=progress, trace=trace)
            path = st.put(
                key, result_files(result.texts(), result.series), wall_time_s=result.wall_time_s,
                label=f"{result.name} seed {want_seed}",
            )
            summary, wall = result.summary, result.wall_time_s
        if view is not None:
            path = st.link(view, key)
    return Ensured(Path(path), summary, reused=wall is None, wall_time_s=wall, key=key)


def shrinker_call(
    variant: str,
    freeable: int,
    nr_deferred: int,
    priority: int,
    batch: int,
    seeks: int = 2,
    kswapd: bool = False,
    nofs: bool = False,
) -> dict[str, Any]:
    """One ``do_shrink_slab`` call of a ``[policy] shrinker`` variant, by the engine's own code,
    on a filesystem-like cache of ``freeable`` objects holding ``nr_deferred`` deferred work
    (GFP_NOFS callers get SHRINK_STOP): ``{"freeable", "delta", "nr", "planned", "scanned",
    "freed", "new_nr", "calls", "stopped"}``. Raises ValueError for an unknown variant."""
    return dict(_core.shrinker_call(variant, freeable, nr_deferred, priority, batch, seeks,
                                    kswapd, nofs))


def swapin_nr_pages(prev: int, offset: int, hits: int, max_pages: int, prev_win: int) -> int:
    """The engine's swap-in readahead window in pages (6.1's `__swapin_nr_pages`): for a miss
    at ``offset`` after one at ``prev``, ``hits`` readahead pages used since the last window of
    ``prev_win`` pages, at most ``max_pages``."""
    return int(_core.swapin_nr_pages(prev, offset, hits, max_pages, prev_win))


def policies() -> dict[str, Any]:
    """The policy registry: every ``[policy]`` switch with its default and its variants.

    ``{"switches": [{"name", "default", "spec", "summary", "preset", "variants": [{"name",
    "kernel", "summary"}]}]}``; ``preset`` is None or ``{"follows", "doc"}``: the default then
    follows the variant chosen for the switch ``follows`` names.
    """
    return json.loads(_core.policies())
