"""What a result directory is called and holds: its files, the errors about it, and the safe
directory name of a scenario."""

from __future__ import annotations

import hashlib
import re

RESULT_FILES = (
    "vmstat", "zoneinfo", "buddyinfo", "meminfo", "summary.json", "timeseries.parquet",
    "timeseries.csv",
)

#: The files a run whose machine has slab shrinkers (a ``[fs]`` table) adds: a
#: ``/proc/slabinfo``-style table and 6.1's shrinker debugfs counts.
SLAB_FILES = ("slabinfo", "shrinker_debugfs")

#: The optional file a run recorded with ``trace=...`` adds.
TRACE_FILE = "trace"

#: ``/proc/pressure/memory`` at the end of the run, in a directory of its own as in ``/proc``.
#: Every run writes it; results written before pressure stall information was modelled lack
#: it, so it is not one of :data:`RESULT_FILES`.
PRESSURE_FILE = "pressure/memory"

#: What :func:`load_run` needs to report on a result (the others are for people and pandas).
REQUIRED_FILES = ("vmstat", "summary.json")

#: The internal-error log a failed run leaves in its output directory (the only file that may
#: be there besides a result).
INTERNAL_ERROR_LOG = "internal-error.log"


class OutputError(Exception):
    """The output location cannot be used (exists and is not a result directory, etc.)."""


class RunDirError(Exception):
    """A directory that is not a readable reclaimlab result."""


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
