"""reclaimlab: a deterministic simulator of Linux memory reclaim on virtualized hosts.

The simulator itself is Rust (``reclaimlab._core``); this package is the front end::

    import reclaimlab
    r = reclaimlab.run("scenarios/anon-overcommit-swap.toml", seed=7, out="results/x")
    r.vmstat["pswpout"], r.timeseries.head(), r.summary["headline"]
"""

from importlib.metadata import PackageNotFoundError, version as _version

from ._core import ENGINE_VERSION, InternalError, ScenarioError, SimulationError, TraceError
from .api import RunResult, ScenarioNotFound, lru, policies, run, show_defaults
from .results import OutputError

try:
    __version__ = _version("reclaimlab")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    __version__ = ENGINE_VERSION

__all__ = [
    "ENGINE_VERSION",
    "OutputError",
    "RunResult",
    "InternalError",
    "ScenarioError",
    "ScenarioNotFound",
    "SimulationError",
    "TraceError",
    "lru",
    "policies",
    "run",
    "show_defaults",
]
