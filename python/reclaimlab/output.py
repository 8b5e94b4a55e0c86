"""Writing a run's output directory: complete or not at all.

A result directory holds exactly :data:`RESULT_FILES`. It is assembled in a hidden temporary
directory beside the target and renamed into place only once every file is written, so an
interrupted run never leaves a half-written directory and never destroys a finished one before its
replacement is complete.

The Parquet file is deterministic: identical data gives identical bytes (no timestamps, fixed
format version, fixed compression), as long as the pyarrow version is the same.
"""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

RESULT_FILES = ("vmstat", "zoneinfo", "buddyinfo", "summary.json", "timeseries.parquet")

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


class OutputError(Exception):
    """The output location cannot be used (exists and is not a result directory, etc.)."""


def write_parquet(columns: Mapping[str, Sequence[int]], path: str | os.PathLike) -> None:
    """Write integer columns (in the given order) as one Parquet table."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({name: pa.array(values, type=pa.int64()) for name, values in columns.items()})
    pq.write_table(table, os.fspath(path), **PARQUET_OPTIONS)


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


def _is_result_dir(path: Path) -> bool:
    """A directory we may replace: empty, or a previous reclaimlab result."""
    if not path.is_dir() or path.is_symlink():
        return False
    return (path / "summary.json").is_file() or not any(path.iterdir())


@contextmanager
def atomic_directory(target: str | os.PathLike) -> Iterator[Path]:
    """Yield a fresh temporary directory; on normal exit it replaces ``target``.

    On any exception (including KeyboardInterrupt) the temporary directory is removed and
    ``target`` is left exactly as it was.
    """
    target = Path(target)
    if target.exists() or target.is_symlink():
        if not _is_result_dir(target):
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
    columns: Mapping[str, Sequence[int]],
    *,
    _after_first_file: Callable[[Path], None] | None = None,
) -> Path:
    """Write a result directory: the text files of ``texts`` plus ``timeseries.parquet``.

    ``_after_first_file`` is a test hook called once the temporary directory holds a file.
    """
    target = Path(target)
    with atomic_directory(target) as tmp:
        for i, (name, text) in enumerate(texts.items()):
            (tmp / name).write_bytes(text.encode("utf-8"))
            if i == 0 and _after_first_file is not None:
                _after_first_file(tmp)
        write_parquet(columns, tmp / "timeseries.parquet")
    return target


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    """Write a single file via a temporary file beside it and a rename."""
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
            f.write(text.encode("utf-8"))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
