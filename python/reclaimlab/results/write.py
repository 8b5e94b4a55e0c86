"""Writing results: all or nothing. A result directory is assembled in a hidden temporary
directory beside the target and renamed into place only once every file is written, so an
interrupted run never leaves a half-written directory and never destroys a finished one before
its replacement is complete. Two writers of one output never race: each holds the output's
lock (a ``flock`` beside it) while it writes."""

from __future__ import annotations

import fcntl
import os
import re
import secrets
import shutil
import socket
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from .naming import INTERNAL_ERROR_LOG, OutputError
from .series import Series, write_series_files


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
