# Type stubs for the Rust extension (crates/reclaimlab-py/src/lib.rs).
from collections.abc import Callable
from os import PathLike
from typing import Any

ENGINE_VERSION: str

class ScenarioError(Exception): ...
class SimulationError(Exception): ...
class TraceError(Exception): ...
class InternalError(SimulationError):
    """A bug in the engine: args[0] one line for the user, args[1] the details (backtrace)."""

class Timeseries:
    """A run's time series where the engine keeps it (mostly on disk)."""

    @property
    def names(self) -> list[str]: ...
    def __len__(self) -> int: ...
    def read(self, start: int, count: int) -> bytes:
        """Samples start..start+count (clipped) as little-endian int64, row-major."""
        ...

_Path = str | PathLike[str] | None

# `base_dir` (with `text` only): the directory the text's relative paths are relative to, as if
# it were a file there; without it, the current directory.
def parse(path: _Path = None, text: str | None = None, name: str = "<dict>",
          base_dir: _Path = None) -> None: ...
def info(path: _Path = None, text: str | None = None, name: str = "<dict>",
         base_dir: _Path = None) -> dict[str, object]: ...
def show_defaults(path: _Path = None, text: str | None = None, name: str = "<dict>",
                  base_dir: _Path = None) -> str: ...
def run(
    path: _Path = None,
    text: str | None = None,
    seed: int | None = None,
    invariants: str | int | None = None,
    progress: Callable[[int, int], bool | None] | None = None,
    name: str = "<dict>",
    trace: str | None = None,
    base_dir: _Path = None,
) -> dict[str, object]: ...
def lru(
    path: str | PathLike[str],
    capacity: int,
    policy: str = "lru",
    format: str | None = None,
    compression: str | None = None,
) -> dict[str, object]: ...
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
    """One do_shrink_slab call of a [policy] shrinker variant on a fixed cache of `freeable`
    objects with `nr_deferred` deferred work: {"freeable", "delta", "nr", "planned", "scanned",
    "freed", "new_nr", "calls", "stopped"}."""
    ...

def policies() -> str:
    """The policy registry as JSON text: {"switches": [{"name", "default", "spec", "summary",
    "preset": null | {"follows", "doc"}, "variants": [{"name", "kernel", "summary"}]}]}."""
    ...

def swapin_nr_pages(prev: int, offset: int, hits: int, max_pages: int, prev_win: int) -> int:
    """The engine's swap-in readahead window (6.1's `__swapin_nr_pages`), in pages."""
    ...
