"""The content-addressed result store: every run once, under the hash of what decides its result.

Layout of a store directory::

    STORE/lock                    held (flock) by the one process writing the store
    STORE/runs/<kk>/<key>/        a result directory (results.RESULT_FILES [+ trace]), kk = key[:2]
    STORE/meta/<key>.json         how the run went: wall and CPU time, when, where (not part of
                                  the result, which is byte-identical wherever it ran)
    STORE/failed/<key>.json       a run that failed: its error (retried by the next writer)

``key`` is :func:`reclaimlab.results.run_key` of the fully resolved scenario and the seed (and
the engine version): the same definition of "up to date" as the result directories'
freshness, in one place. An entry is written as a hidden temporary directory beside its final
name and renamed into place once complete (:func:`reclaimlab.results.write_result_files`), so a
writer killed at any moment (SIGKILL included) leaves either a complete entry or none; the
leftovers of a killed writer are hidden temporaries, removed by the next writer. A lookup
still checks that the entry is complete and that its summary records the same scenario, seed
and engine (a hand-edited or truncated entry is recomputed, not trusted).

Two writers would not corrupt entries (renames are atomic) but would compute the same runs
twice and race on the summaries beside the store, so a writer takes ``STORE/lock`` with
``flock``: the kernel releases it when the holder dies, however it dies, so a killed sweep
never leaves a stale lock behind.

This module sits just above :mod:`reclaimlab.results` and does not run anything: running is
:func:`reclaimlab.api.ensure_result`'s and the sweep executor's job.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .results import (
    TRACE_FILE,
    OutputError,
    replaceable,
    fresh_summary,
    run_key,
    take_flock,
    write_bytes_atomic,
    write_result_files,
)

#: Where a command keeps its store unless told otherwise: hidden inside its output directory,
#: so that it never collides with a result named after a scenario.
DEFAULT_DIRNAME = ".store"


class StoreLocked(OutputError):
    """Another process is writing the store."""


@dataclass(frozen=True)
class Found:
    """An up-to-date entry of the store."""

    key: str
    path: Path
    summary: dict[str, Any]


def default_store(out: str | os.PathLike) -> Path:
    """The store a command writing to ``out`` uses when no ``--store`` is given."""
    return Path(out) / DEFAULT_DIRNAME


class Store:
    """A store directory (created on first write)."""

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)
        self._lock_fd: int | None = None

    def __repr__(self) -> str:
        return f"Store({str(self.root)!r})"

    @property
    def locked(self) -> bool:
        """Whether this object holds the write lock (inside :meth:`writing`)."""
        return self._lock_fd is not None

    # ---- keys and places ------------------------------------------------------------------

    key = staticmethod(run_key)

    def path(self, key: str) -> Path:
        return self.root / "runs" / key[:2] / key

    def _meta_path(self, key: str) -> Path:
        return self.root / "meta" / f"{key}.json"

    def _failed_path(self, key: str) -> Path:
        return self.root / "failed" / f"{key}.json"

    # ---- reading --------------------------------------------------------------------------

    def lookup(self, key: str, resolved: str, seed: int, *, need_trace: bool = False) -> Found | None:
        """The entry of ``key`` if it holds an up-to-date result (with a trace if asked)."""
        path = self.path(key)
        summary = fresh_summary(path, resolved, seed, need_trace=need_trace)
        return None if summary is None else Found(key, path, summary)

    def keys(self) -> list[str]:
        """Keys of the complete entries, sorted (temporaries of unfinished writes are hidden)."""
        runs = self.root / "runs"
        if not runs.is_dir():
            return []
        return sorted(
            p.name
            for d in runs.iterdir() if d.is_dir() and not d.name.startswith(".")
            for p in d.iterdir() if not p.name.startswith(".") and (p / "summary.json").is_file()
        )

    def meta(self, key: str) -> dict[str, Any]:
        """What :meth:`put` recorded about how the run went ({} if nothing)."""
        return _read_json(self._meta_path(key))

    def failure(self, key: str) -> dict[str, Any] | None:
        """The recorded failure of ``key``, if its last attempt failed."""
        return _read_json(self._failed_path(key)) or None

    # ---- writing (hold the lock) ----------------------------------------------------------

    def put(
        self,
        key: str,
        files: Mapping[str, bytes],
        *,
        wall_time_s: float,
        cpu_time_s: float | None = None,
        label: str = "",
    ) -> Path:
        """Store a finished run (its encoded files: :func:`reclaimlab.results.result_files`)
        atomically; returns its entry."""
        meta = {
            "key": key,
            "label": label,
            "wall_time_s": wall_time_s,
            "cpu_time_s": cpu_time_s,
            "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "host": socket.gethostname(),
            "trace": TRACE_FILE in files,
        }
        # The metadata first: an entry never exists without it (an orphan one is harmless).
        write_bytes_atomic(self._meta_path(key), _dumps(meta))
        path = write_result_files(self.path(key), files)
        self._failed_path(key).unlink(missing_ok=True)
        return path

    def record_failure(self, key: str, label: str, error: str) -> None:
        info = {
            "key": key,
            "label": label,
            "error": error,
            "failed": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        write_bytes_atomic(self._failed_path(key), _dumps(info))

    @contextmanager
    def writing(self, what: str = "reclaimlab") -> Iterator[Store]:
        """Hold the store's write lock for the block (StoreLocked if another process has it),
        after removing what killed writers left behind."""
        self.root.mkdir(parents=True, exist_ok=True)
        fd = take_flock(
            self.root / "lock",
            what,
            lambda holder: StoreLocked(
                f"{self.root} is being written by {holder}; wait for it to finish, or give "
                "this one another --out (or --store)"
            ),
        )
        try:
            self._lock_fd = fd
            self._sweep_leftovers()
            yield self
        finally:
            self._lock_fd = None
            os.ftruncate(fd, 0)
            os.close(fd)  # closing releases the flock

    def _sweep_leftovers(self) -> None:
        """Remove the hidden temporaries of writers that were killed (we hold the lock, so
        nobody else is writing)."""
        for sub in ("runs", "meta", "failed"):
            base = self.root / sub
            if not base.is_dir():
                continue
            for p in [*base.glob(".*"), *base.glob("*/.*")]:
                if ".partial-" in p.name or ".old-" in p.name:
                    if p.is_dir():
                        shutil.rmtree(p, ignore_errors=True)
                    else:
                        p.unlink(missing_ok=True)

    # ---- views ----------------------------------------------------------------------------

    def link(self, view: str | os.PathLike, key: str) -> Path:
        """Make ``view`` (a readable name such as ``results/<scenario>``) a relative symlink to
        the entry of ``key``, replacing an older link or an old-style result directory there."""
        view = Path(view)
        target = os.path.relpath(self.path(key), view.parent.resolve())
        if view.is_symlink():
            if os.readlink(view) == target:
                return view
        elif view.exists():
            if not replaceable(view):
                raise OutputError(
                    f"refusing to replace {view}: it exists and is not a reclaimlab result directory"
                )
            shutil.rmtree(view)
        view.parent.mkdir(parents=True, exist_ok=True)
        tmp = view.with_name(f".{view.name}.partial-link-{os.getpid()}")
        tmp.unlink(missing_ok=True)
        os.symlink(target, tmp)
        os.replace(tmp, view)
        return view


def _dumps(data: Any) -> bytes:
    return (json.dumps(data, indent=1, sort_keys=True) + "\n").encode("utf-8")


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
