"""Result directories: writing, reading, freshness and listing, all in one place.

A result directory holds exactly :data:`RESULT_FILES`, plus ``trace`` when the run recorded one,
and :data:`SLAB_FILES` when the machine had slab shrinkers.

*Writing* is all-or-nothing: the directory is assembled in a hidden temporary directory beside
the target and renamed into place only once every file is written, so an interrupted run never
leaves a half-written directory and never destroys a finished one before its replacement is
complete. The Parquet file is deterministic: identical data gives identical bytes (no
timestamps, fixed format version, fixed compression), as long as the pyarrow version is the same.

*Reading* comes in two strengths: :func:`read_summary` is the cheap, forgiving look used to decide
whether a result can be reused (anything odd means "no"); :func:`load_run` is the strict one used
to report on a result (anything odd is a :class:`RunDirError` naming the directory and the file).

*Freshness*: a result is up to date when it is complete and its summary records the same fully
resolved scenario text (every default filled in), the same seed and this engine's version. That
is what lets ``examples``, ``compare --seeds`` and ``reproduce`` resume instead of recomputing.

This module sits just above the extension: it may import ``_core`` (for the engine version) and
nothing else of the package, so every layer above can use it.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import secrets
import shutil
import socket
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._core import ENGINE_VERSION

RESULT_FILES = (
    "vmstat", "zoneinfo", "buddyinfo", "meminfo", "summary.json", "timeseries.parquet",
    "timeseries.csv",
)

#: The files a run whose machine has slab shrinkers (a ``[fs]`` table) adds: a
#: ``/proc/slabinfo``-style table and 6.1's shrinker debugfs counts.
SLAB_FILES = ("slabinfo", "shrinker_debugfs")

#: The optional file a run recorded with ``trace=...`` adds.
TRACE_FILE = "trace"

#: What :func:`load_run` needs to report on a result (the others are for people and pandas).
REQUIRED_FILES = ("vmstat", "summary.json")

# Parquet settings, fixed so that output bytes depend on the data only.
PARQUET_OPTIONS = dict(
    version="2.6",
    data_page_version="1.0",
    compression="zstd",
    compression_level=3,
    use_dictionary=True,
    write_statistics=True,
    store_schema=True,
)

# Keys that may hold the total simulated time in summary.json, in order of preference.
_SIM_TIME_KEYS = ("sim_time_ns", "simulated_ns", "end_ns", "duration_ns")


class OutputError(Exception):
    """The output location cannot be used (exists and is not a result directory, etc.)."""


class RunDirError(Exception):
    """A directory that is not a readable reclaimlab result."""


# ---- naming -----------------------------------------------------------------------------------

# Letters and digits of any script are kept (``\w`` is Unicode-aware), path separators, spaces
# and control characters are not.
_UNSAFE = re.compile(r"[^\w.+-]+")


def result_dir_name(scenario_name: str) -> str:
    """A scenario name as a single, safe, visible directory name.

    Names of any script are kept as they are ("müll-test", "回收"); what cannot be in a name is
    replaced by ``_``. A name with nothing usable left ("...", "///") becomes ``scenario-`` and a
    short hash of the name, so that two different names never share a directory that way.
    """
    name = _UNSAFE.sub("_", scenario_name).lstrip("._").rstrip("_")
    if not name:
        digest = hashlib.sha256(scenario_name.encode("utf-8")).hexdigest()[:8]
        return f"scenario-{digest}"
    return name


# ---- writing ----------------------------------------------------------------------------------


#: Samples encoded at a time when writing a time series. It bounds the memory of writing a long
#: run's series (a 10-day run sampled every second has 864,000 samples); a series of at most
#: this many samples is one Parquet row group, longer ones one row group per chunk.
SERIES_CHUNK_ROWS = 16384

#: A time series: plain columns (name -> values, ``time_ns`` first), or the engine's
#: :class:`reclaimlab._core.Timeseries` (``names``, ``len()``, ``read(start, count)``), which
#: keeps a long series on disk until it is written.
Series = Any


def series_names(series: Series) -> list[str]:
    if isinstance(series, Mapping):
        return list(series)
    return list(series.names)


def series_len(series: Series) -> int:
    if isinstance(series, Mapping):
        return len(next(iter(series.values()))) if series else 0
    return len(series)


def series_chunks(series: Series, rows: int = SERIES_CHUNK_ROWS) -> Iterator[dict[str, Any]]:
    """The series as consecutive chunks of at most ``rows`` samples: name -> int64 numpy array.
    At least one chunk, empty for an empty series."""
    import numpy as np

    names = series_names(series)
    n = series_len(series)
    starts = range(0, n, rows) if n else range(0, 1)
    if isinstance(series, Mapping):
        for start in starts:
            yield {k: np.asarray(series[k][start:start + rows], dtype=np.int64) for k in names}
        return
    width = len(names)
    for start in starts:
        flat = np.frombuffer(series.read(start, rows), dtype="<i8").astype(np.int64, copy=False)
        table = flat.reshape(-1, width) if width else flat.reshape(0, 0)
        yield {k: np.ascontiguousarray(table[:, i]) for i, k in enumerate(names)}


def _int_table(columns: Mapping[str, Any]):
    import pyarrow as pa

    return pa.table({name: pa.array(values, type=pa.int64()) for name, values in columns.items()})


def _schema(names: Sequence[str]):
    import pyarrow as pa

    return pa.schema([pa.field(n, pa.int64()) for n in names])


def _write_parquet_to(sink, series: Series) -> None:
    import pyarrow.parquet as pq

    with pq.ParquetWriter(sink, _schema(series_names(series)), **PARQUET_OPTIONS) as w:
        for chunk in series_chunks(series):
            w.write_table(_int_table(chunk))


def _write_csv_to(sink, series: Series) -> None:
    """A header line, then one line per sample (the header unquoted, as the column names are
    plain identifiers)."""
    import pyarrow.csv as pacsv

    names = series_names(series)
    sink.write((",".join(names) + "\n").encode("utf-8"))
    options = pacsv.WriteOptions(include_header=False, quoting_style="none")
    with pacsv.CSVWriter(sink, _schema(names), write_options=options) as w:
        for chunk in series_chunks(series):
            w.write_table(_int_table(chunk))


def parquet_bytes(columns: Series) -> bytes:
    """Integer columns (in the given order) as one Parquet table, in memory."""
    import pyarrow as pa

    sink = pa.BufferOutputStream()
    _write_parquet_to(sink, columns)
    return sink.getvalue().to_pybytes()


def csv_bytes(columns: Series) -> bytes:
    """The same columns as CSV (a header line, then one line per sample), for tools without
    Parquet."""
    import pyarrow as pa

    sink = pa.BufferOutputStream()
    _write_csv_to(sink, columns)
    return sink.getvalue().to_pybytes()


def write_parquet(columns: Series, path: str | os.PathLike) -> None:
    """Write integer columns (in the given order) as one Parquet table."""
    Path(path).write_bytes(parquet_bytes(columns))


def write_series_files(directory: str | os.PathLike, series: Series) -> None:
    """Write ``timeseries.parquet`` and ``timeseries.csv`` into ``directory`` a chunk at a time,
    so that memory does not grow with the length of the series."""
    import pyarrow as pa

    d = Path(directory)
    with pa.OSFile(str(d / "timeseries.parquet"), "wb") as f:
        _write_parquet_to(f, series)
    with pa.OSFile(str(d / "timeseries.csv"), "wb") as f:
        _write_csv_to(f, series)


def result_files(texts: Mapping[str, str], columns: Series) -> dict[str, bytes]:
    """The files of a result directory, encoded: the text files of ``texts`` (vmstat, zoneinfo,
    buddyinfo, summary.json [, trace]) and the time series as ``timeseries.parquet`` and
    ``timeseries.csv``. Encoding is the costly part of writing a result; a sweep does it in the
    worker that ran the simulation."""
    files = {name: text.encode("utf-8") for name, text in texts.items()}
    files["timeseries.parquet"] = parquet_bytes(columns)
    files["timeseries.csv"] = csv_bytes(columns)
    return files


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _make_hidden_dir(parent: Path, prefix: str) -> Path:
    """Create a new uniquely named directory (mode from the umask, unlike mkdtemp's 0700)."""
    while True:
        path = parent / f"{prefix}{secrets.token_hex(4)}"
        try:
            os.mkdir(path)
            return path
        except FileExistsError:
            continue


def replaceable(path: Path) -> bool:
    """A directory we may replace: empty, a previous reclaimlab result, or the output of a run
    that failed with an internal error (only its log)."""
    if not path.is_dir() or path.is_symlink():
        return False
    if (path / "summary.json").is_file():
        return True
    return all(p.name == INTERNAL_ERROR_LOG for p in path.iterdir())


class OutputLocked(OutputError):
    """Another process is writing the same output."""


#: The internal-error log a failed run leaves in its output directory (the only file that may
#: be there besides a result).
INTERNAL_ERROR_LOG = "internal-error.log"

# Outputs whose lock this process holds: resolved path -> (fd, depth).
_held: dict[str, list[int]] = {}


def _lock_path(target: Path) -> Path:
    return target.parent / f".{target.name}.lock"


def sweep_leftovers(target: str | os.PathLike) -> list[Path]:
    """Remove what writers of ``target`` that were killed left beside it (``.NAME.partial-*``,
    ``.NAME.old-*``); call it only holding :func:`output_lock`. Returns what was removed."""
    target = Path(target)
    gone = []
    if not target.parent.is_dir():
        return gone
    for prefix in (f".{target.name}.partial-", f".{target.name}.old-"):
        for p in target.parent.glob(f"{glob_escape(prefix)}*"):
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p, ignore_errors=True)
            else:
                p.unlink(missing_ok=True)
            gone.append(p)
    return gone


def take_flock(lock: Path, what: str, busy: Callable[[str], Exception]) -> int:
    """Take the exclusive ``flock`` on the file ``lock`` (created if needed) without waiting,
    and write who holds it there: ``what``, the pid and the host. Returns the descriptor, which
    holds the lock until it is closed (the kernel closes it when the process dies, however it
    dies, so no lock outlives its holder). If another process holds it, raises
    ``busy(holder)``, ``holder`` being what that process wrote (the output lock and the store
    lock both report "X is being written by HOLDER" this way).

    A holder may remove the lock file as it lets go: a lock taken on a file no longer under that
    name guards nothing, so the file now there is taken instead."""
    while True:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip() or "another process"
            os.close(fd)
            raise busy(holder) from None
        try:
            same = os.path.samestat(os.fstat(fd), os.stat(lock))
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{what} (pid {os.getpid()} on {socket.gethostname()})\n".encode(), 0)
    return fd


def glob_escape(text: str) -> str:
    """``text`` with glob metacharacters escaped."""
    return re.sub(r"([*?\[])", r"[\1]", text)


@contextmanager
def output_lock(target: str | os.PathLike, what: str = "reclaimlab") -> Iterator[Path]:
    """Hold the write lock of the output ``target`` (a ``flock`` on ``.NAME.lock`` beside it) for
    the block, after removing what killed writers left behind. A second process asking for the
    same output gets :class:`OutputLocked` at once; the kernel drops the lock of a process that
    dies, however it dies. Re-entrant within a process."""
    target = Path(target)
    key = str(target.absolute())
    if key in _held:
        _held[key][1] += 1
        try:
            yield target
        finally:
            _held[key][1] -= 1
        return
    # Directories made only to hold the lock are removed again if nothing else went in them.
    made = [p for p in [target.parent, *target.parent.parents] if not p.exists()]
    target.parent.mkdir(parents=True, exist_ok=True)
    lock = _lock_path(target)
    fd = take_flock(
        lock,
        what,
        lambda holder: OutputLocked(
            f"{target} is being written by {holder}; wait for it to finish, or give this "
            "run another --out"
        ),
    )
    try:
        _held[key] = [fd, 1]
        sweep_leftovers(target)
        yield target
    finally:
        _held.pop(key, None)
        try:
            os.unlink(lock)
        except OSError:
            pass
        os.close(fd)  # closing releases the flock
        for d in made:
            try:
                os.rmdir(d)
            except OSError:
                break


@contextmanager
def atomic_directory(target: str | os.PathLike) -> Iterator[Path]:
    """Yield a fresh temporary directory; on normal exit it replaces ``target``.

    On any exception (including KeyboardInterrupt) the temporary directory is removed and
    ``target`` is left exactly as it was. Holds the output's lock (:func:`output_lock`), so two
    writers of one output never race.
    """
    with output_lock(target):
        with _atomic_directory(Path(target)) as tmp:
            yield tmp


@contextmanager
def _atomic_directory(target: Path) -> Iterator[Path]:
    if target.exists() or target.is_symlink():
        if not replaceable(target):
            raise OutputError(
                f"refusing to replace {target}: it exists and is not a reclaimlab result directory"
            )
    parent = target.parent
    parent.mkdir(parents=True, exist_ok=True)
    tmp = _make_hidden_dir(parent, f".{target.name}.partial-")
    try:
        yield tmp
        for f in tmp.iterdir():
            _fsync(f)
        _fsync(tmp)
        if target.exists():
            old = _make_hidden_dir(parent, f".{target.name}.old-")
            os.rename(target, old / "result")
            os.rename(tmp, target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(tmp, target)
        _fsync(parent)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def write_result_dir(
    target: str | os.PathLike,
    texts: Mapping[str, str],
    columns: Series,
    *,
    _after_first_file: Callable[[Path], None] | None = None,
) -> Path:
    """Write a result directory: the text files of ``texts`` plus the time series, the series
    streamed a chunk at a time (:func:`write_series_files`).

    ``_after_first_file`` is a test hook called once the temporary directory holds a file.
    """
    target = Path(target)
    with atomic_directory(target) as tmp:
        for i, (name, text) in enumerate(texts.items()):
            # A guest's files sit in a directory of their own (guests/<name>/vmstat).
            (tmp / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp / name).write_bytes(text.encode("utf-8"))
            if i == 0 and _after_first_file is not None:
                _after_first_file(tmp)
        write_series_files(tmp, columns)
    return target


def write_result_files(
    target: str | os.PathLike,
    files: Mapping[str, bytes],
    *,
    _after_first_file: Callable[[Path], None] | None = None,
) -> Path:
    """Write a result directory from its encoded files (:func:`result_files`), atomically."""
    target = Path(target)
    with atomic_directory(target) as tmp:
        for i, (name, data) in enumerate(files.items()):
            # A guest's files sit in a directory of their own (guests/<name>/vmstat).
            (tmp / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp / name).write_bytes(data)
            if i == 0 and _after_first_file is not None:
                _after_first_file(tmp)
    return target


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    """Write a single file (a report beside the results) via a temporary file and a rename."""
    write_bytes_atomic(path, text.encode("utf-8"))


def write_bytes_atomic(path: str | os.PathLike, data: bytes) -> None:
    """Write a single file via a temporary file and a rename: readers see the old file or the
    new one, never a part."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    while True:
        tmp = path.parent / f".{path.name}.partial-{secrets.token_hex(4)}"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            break
        except FileExistsError:
            continue
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


# ---- reading ----------------------------------------------------------------------------------


def parse_vmstat(text: str) -> dict[str, int]:
    """``/proc/vmstat`` text to an ordered dict (counters and gauges alike)."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2:
            out[parts[0]] = int(parts[1])
    return out


def sim_time_ns(summary: Mapping[str, Any]) -> int | None:
    """The simulated time recorded in a summary, if it records one."""
    for key in _SIM_TIME_KEYS:
        value = summary.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def is_complete(directory: str | os.PathLike) -> bool:
    """Whether ``directory`` holds every file of :data:`RESULT_FILES`."""
    d = Path(directory)
    return all((d / name).is_file() for name in RESULT_FILES)


def read_summary(directory: str | os.PathLike) -> dict[str, Any] | None:
    """The summary of a complete result directory, or None (missing, incomplete, unreadable)."""
    d = Path(directory)
    if not is_complete(d):
        return None
    try:
        data = json.loads((d / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


@dataclass
class TraceCounts:
    """What only a trace can tell: per-reclaimer writes and wake-kswapd requests."""

    wake_kswapd_requests: int
    # (who, kind, mode) -> pages, who in {"direct", "kswapd"}, kind {"file", "anon"},
    # mode {"sync", "async"}
    writes: Counter


@dataclass
class Run:
    """A result directory as read back: its counters, its summary and what its trace adds."""

    path: Path
    vmstat: dict[str, int]
    summary: dict[str, Any]
    trace: TraceCounts | None = None


# comm-pid [cpu] flags timestamp: event: details. The comm may contain '-': the pid is the digits
# after the last one, as in the kernel's script.
_TRACE_LINE = re.compile(r"^\s*(\S+)-(\d+)\s+\[\d+\].*?\s[0-9.]+:\s+(\w+):\s*(.*)$")


def parse_trace(path: str | os.PathLike) -> TraceCounts:
    """Count, per task, what trace-vmscan-postprocess.pl counts for the rows vmstat lacks."""
    direct, kswapd = set(), set()
    wakes: Counter = Counter()
    writes: dict[str, Counter] = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = _TRACE_LINE.match(line)
            if not m:
                continue
            pid, event, details = m.group(2), m.group(3), m.group(4)
            if event == "mm_vmscan_direct_reclaim_begin":
                direct.add(pid)
            elif event == "mm_vmscan_kswapd_wake":
                kswapd.add(pid)
            elif event == "mm_vmscan_wakeup_kswapd":
                wakes[pid] += 1
            # 6.1 calls it write_folio; the script and the postprocess trace say writepage.
            elif event in ("mm_vmscan_writepage", "mm_vmscan_write_folio"):
                kind = "file" if "RECLAIM_WB_FILE" in details else "anon"
                mode = "sync" if "RECLAIM_WB_SYNC" in details else "async"
                writes.setdefault(pid, Counter())[kind, mode] += 1
    # A task's figures count as direct if it ever direct-reclaimed, as kswapd's if it ever woke
    # as kswapd; the script drops wake requests from tasks that never direct-reclaimed.
    total: Counter = Counter()
    for pid, c in writes.items():
        for (kind, mode), n in c.items():
            if pid in direct:
                total["direct", kind, mode] += n
            if pid in kswapd:
                total["kswapd", kind, mode] += n
    return TraceCounts(sum(n for pid, n in wakes.items() if pid in direct), total)


def load_run(directory: str | os.PathLike) -> Run:
    """Read a result directory for reporting; :class:`RunDirError` says what is wrong with it."""
    path = Path(directory)
    if not path.is_dir():
        raise RunDirError(f"{path}: no such result directory")
    for name in REQUIRED_FILES:
        if not (path / name).is_file():
            raise RunDirError(f"{path}: not a reclaimlab result directory: {name} is missing")
    try:
        vmstat = parse_vmstat((path / "vmstat").read_text(encoding="utf-8"))
        summary = json.loads((path / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise RunDirError(f"{path}: unreadable result: {e}") from None
    if not isinstance(summary, dict):
        raise RunDirError(f"{path}/summary.json: not a JSON object")
    trace = path / TRACE_FILE
    return Run(path, vmstat, summary, parse_trace(trace) if trace.is_file() else None)


# ---- freshness --------------------------------------------------------------------------------


def summary_matches(summary: Mapping[str, Any] | None, resolved: str, seed: int) -> bool:
    """Whether a summary records this fully resolved scenario, this seed and this engine."""
    return (
        summary is not None
        and summary.get("scenario") == resolved
        and summary.get("seed") == seed
        and summary.get("engine_version") == ENGINE_VERSION
    )


def run_key(resolved: str, seed: int) -> str:
    """The store key of a run: a hash of exactly what :func:`summary_matches` compares (the
    fully resolved scenario text, the seed, this engine's version), so that two requests share a
    key exactly when one's result is up to date for the other."""
    ident = json.dumps(
        {"engine_version": ENGINE_VERSION, "scenario": resolved, "seed": seed}, sort_keys=True
    )
    return hashlib.sha256(ident.encode("utf-8")).hexdigest()


def fresh_summary(
    directory: str | os.PathLike, resolved: str, seed: int, *, need_trace: bool = False
) -> dict[str, Any] | None:
    """The summary of ``directory`` if it holds an up-to-date result, else None.

    Up to date: complete, same resolved scenario text, seed and engine version, and holding a
    ``trace`` when ``need_trace`` (a result without one cannot give the trace-only rows).
    """
    summary = read_summary(directory)
    if not summary_matches(summary, resolved, seed):
        return None
    if need_trace and not (Path(directory) / TRACE_FILE).is_file():
        return None
    return summary


def is_up_to_date(
    directory: str | os.PathLike, resolved: str, seed: int, *, need_trace: bool = False
) -> bool:
    """Whether ``directory`` holds an up-to-date result (see :func:`fresh_summary`)."""
    return fresh_summary(directory, resolved, seed, need_trace=need_trace) is not None


# ---- listing ----------------------------------------------------------------------------------


def list_results(root: str | os.PathLike) -> list[Path]:
    """Every complete result directory at or below ``root``, sorted by path.

    Hidden directories (the temporary and old directories of an unfinished write) are skipped,
    and so is everything below a result directory: results do not nest.
    """
    root = Path(root)
    found: list[Path] = []

    def visit(d: Path) -> None:
        if is_complete(d):
            found.append(d)
            return
        try:
            children = sorted(d.iterdir())
        except OSError:
            return
        for child in children:
            if child.is_dir() and not child.is_symlink() and not child.name.startswith("."):
                visit(child)

    if root.is_dir():
        visit(root)
    return found
