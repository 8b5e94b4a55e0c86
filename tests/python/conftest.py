"""Shared fixtures.

Two kinds of tests live here:
- tests of the pure-Python layer (CLI parsing, output writing, progress bar, tables, examples
  bookkeeping) use the ``fake_engine`` fixture, which replaces the extension's functions with a
  tiny stand-in, so they do not depend on the simulator's behaviour;
- tests marked by using ``tiny_scenario``/``run_cli`` without ``fake_engine`` exercise the real
  Rust engine on scenarios small enough to run in well under a second.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import reclaimlab
from reclaimlab import _core

# A 256 MiB host that must swap: 384 MiB of anonymous memory touched twice, 256 MiB of swap.
TINY_SCENARIO = """\
name = "{name}"

[sim]
seed = {seed}
sample_interval = "10ms"

[host]
ram = "256MiB"
cpus = 1

[swap]
size = "256MiB"

[oom]
allowed = false

[[workload]]
name = "hog"
start = "0s"

[workload.anon]
size = "384MiB"
pattern = "random"
passes = 2
"""


def tiny_text(name: str = "tiny-swap", seed: int = 1) -> str:
    return TINY_SCENARIO.format(name=name, seed=seed)


def tiny_dict(name: str = "tiny-dict", seed: int = 1) -> dict:
    return tomllib.loads(tiny_text(name, seed))


@pytest.fixture
def tiny_scenario(tmp_path: Path) -> Path:
    path = tmp_path / "tiny-swap.toml"
    path.write_text(tiny_text())
    return path


def run_cli(*args: str, cwd: Path | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    """``python -m reclaimlab ARGS`` in a subprocess (stdin closed, output captured)."""
    env = dict(os.environ)
    env.pop("RUST_BACKTRACE", None)
    return subprocess.run(
        [sys.executable, "-m", "reclaimlab", *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture
def cli():
    return run_cli


class FakeEngine:
    """Stands in for ``reclaimlab._core``: deterministic outputs derived from name and seed."""

    def __init__(self):
        self.runs: list[dict] = []

    @staticmethod
    def _load(path=None, text=None, name="<dict>"):
        if path is not None:
            text = Path(path).read_text()
            name = Path(path).stem
        data = tomllib.loads(text)
        if "bogus" in data:
            raise _core.ScenarioError(f"{path or name}:1:1: error: in field `bogus`: unknown key")
        return data, data.get("name", name)

    def parse(self, path=None, text=None, name="<dict>"):
        self._load(path, text, name)

    def info(self, path=None, text=None, name="<dict>"):
        data, sname = self._load(path, text, name)
        return {"name": sname, "seed": data.get("sim", {}).get("seed", 1), "workloads": []}

    def show_defaults(self, path=None, text=None, name="<dict>"):
        data, sname = self._load(path, text, name)
        return f'name = "{sname}"\n'

    def run(self, path=None, text=None, seed=None, invariants=None, progress=None, name="<dict>",
            trace=None):
        data, sname = self._load(path, text, name)
        seed = data.get("sim", {}).get("seed", 1) if seed is None else seed
        self.runs.append({"name": sname, "seed": seed, "invariants": invariants})
        if progress is not None:
            progress(500, 1000)
        summary = {
            "name": sname,
            "scenario": self.show_defaults(path, text, name),
            "seed": seed,
            "engine_version": _core.ENGINE_VERSION,
            "headline": {"pswpin": seed * 10, "pswpout": seed * 20, "oom_kill": 0},
        }
        return {
            "vmstat": f"nr_free_pages 100\npswpin {seed * 10}\npswpout {seed * 20}\n",
            "zoneinfo": "Node 0, zone   Normal\n",
            "buddyinfo": "Node 0, zone   Normal 1 2 3\n",
            "summary_json": json.dumps(summary, indent=2) + "\n",
            "timeseries": {"time_ns": [0, 10, 20], "nr_free_pages": [100, 90 + seed, 80]},
            "counters": [("pswpin", seed * 10), ("pswpout", seed * 20)],
            "extra_files": {"meminfo": "MemTotal:        1000000 kB\n"},
        }


@pytest.fixture
def fake_engine(monkeypatch) -> FakeEngine:
    fake = FakeEngine()
    for fn in ("parse", "info", "show_defaults", "run"):
        monkeypatch.setattr(_core, fn, getattr(fake, fn))
    return fake


def read_tree(directory: Path) -> dict[str, bytes]:
    """Every file under ``directory`` by its relative path (``pressure/memory`` sits in a
    directory of its own)."""
    return {
        p.relative_to(directory).as_posix(): p.read_bytes()
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


__all__ = ["reclaimlab", "tiny_text", "tiny_dict", "read_tree", "run_cli", "FakeEngine"]


@pytest.fixture(scope="session")
def repro_store(tmp_path_factory):
    """One result store for every reproduction test of the session: each test module's
    reproduction adds its runs, and ``reproduce all`` (test_reproduction_all.py, collected after
    them) reuses every run that is already there, as a user's second ``reproduce`` would."""
    return tmp_path_factory.mktemp("repro-store")


def pytest_collection_modifyitems(config, items):
    """How scripts/test.sh's pytest-xdist workers (`--dist loadgroup`) share the tests: each
    test file runs whole on one worker, so a module's fixture is built once; the files that
    share the session's result store (``repro_store``) run together on one worker, in their
    order, so ``reproduce all`` finds their runs, and first, being the longest part."""
    shared = {item.path for item in items if "repro_store" in item.fixturenames}
    for item in items:
        group = "reproductions" if item.path in shared else item.path.stem
        item.add_marker(pytest.mark.xdist_group(group))
    # A stable sort keeps each file's own order.
    items.sort(key=lambda item: item.path not in shared)
