"""Encoding a run's files: the time series as deterministic Parquet and as CSV (a chunk at a
time, so memory does not grow with the run), and a result directory's files as bytes.

The Parquet file is deterministic: identical data gives identical bytes (no timestamps, fixed
format version, fixed compression), as long as the pyarrow version is the same."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

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
