"""Result directories: naming, writing, reading, freshness and listing, one module each.

A result directory holds exactly :data:`RESULT_FILES`, plus ``trace`` when the run recorded one,
:data:`SLAB_FILES` when the machine had slab shrinkers, and :data:`PRESSURE_FILE` (every run
since pressure stall information was modelled).

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

The package sits just above the extension: it may import ``_core`` (in ``freshness``, for the
engine version) and nothing else of the package, so every layer above can use it. Its modules:
``naming`` (the files and the directory name), ``series`` (encoding the time series and a
result's files), ``write`` (atomic directories and files, the output lock), ``read``,
``freshness`` and ``listing``. Everything is re-exported here, so ``from reclaimlab.results
import X`` keeps working.
"""

from __future__ import annotations

from .freshness import fresh_summary, is_up_to_date, run_key, summary_matches
from .listing import list_results
from .naming import (
    INTERNAL_ERROR_LOG,
    PRESSURE_FILE,
    REQUIRED_FILES,
    RESULT_FILES,
    SLAB_FILES,
    TRACE_FILE,
    OutputError,
    RunDirError,
    result_dir_name,
)
from .read import (
    Run,
    TraceCounts,
    is_complete,
    load_run,
    parse_trace,
    parse_vmstat,
    read_summary,
    sim_time_ns,
)
from .series import (
    PARQUET_OPTIONS,
    SERIES_CHUNK_ROWS,
    Series,
    csv_bytes,
    parquet_bytes,
    result_files,
    series_chunks,
    series_len,
    series_names,
    write_parquet,
    write_series_files,
)
from .write import (
    OutputLocked,
    atomic_directory,
    glob_escape,
    output_lock,
    replaceable,
    sweep_leftovers,
    take_flock,
    write_bytes_atomic,
    write_result_dir,
    write_result_files,
    write_text_atomic,
)

__all__ = [
    "INTERNAL_ERROR_LOG", "PARQUET_OPTIONS", "PRESSURE_FILE", "REQUIRED_FILES", "RESULT_FILES",
    "SERIES_CHUNK_ROWS", "SLAB_FILES", "TRACE_FILE", "OutputError", "OutputLocked", "Run", "RunDirError", "Series",
    "TraceCounts", "atomic_directory", "csv_bytes", "fresh_summary", "glob_escape",
    "is_complete", "is_up_to_date", "list_results", "load_run", "output_lock", "parquet_bytes",
    "parse_trace", "parse_vmstat", "read_summary", "replaceable", "result_dir_name",
    "result_files", "run_key", "series_chunks", "series_len", "series_names", "sim_time_ns",
    "summary_matches", "sweep_leftovers", "take_flock", "write_bytes_atomic", "write_parquet",
    "write_result_dir", "write_result_files", "write_series_files", "write_text_atomic",
]
