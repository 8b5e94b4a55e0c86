"""The Python package's architecture: the import-linter contracts in pyproject.toml hold, they
really catch a wrong import, and only the API and results' freshness reach the extension."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "python" / "reclaimlab"


def lint_imports(pythonpath: Path | None = None) -> subprocess.CompletedProcess:
    """``lint-imports`` with the repository's configuration (no cache left in the tree)."""
    exe = Path(sys.executable).with_name("lint-imports")
    assert exe.is_file(), f"{exe} missing: install the test extra (pip install -e '.[test]')"
    env = dict(os.environ)
    if pythonpath is not None:
        # Ahead of the editable install's path entry, so `reclaimlab` is found there first.
        env["PYTHONPATH"] = str(pythonpath)
    return subprocess.run(
        [str(exe), "--config", str(ROOT / "pyproject.toml"), "--no-cache", "--no-logo"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )


def contracts() -> list[dict]:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["tool"]["importlinter"]["contracts"]


def test_contracts_are_kept():
    r = lint_imports()
    assert r.returncode == 0, r.stdout + r.stderr
    n = len(contracts())
    assert n >= 3 and f"Contracts: {n} kept, 0 broken." in r.stdout, r.stdout


def test_contracts_catch_an_upward_import_and_a_cycle(tmp_path):
    """A copy of the package with six wrong imports breaks every contract: without this, a
    contract that matched nothing (a typo in a module name) would pass silently."""
    copy = tmp_path / "reclaimlab"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    with open(copy / "results" / "naming.py", "a") as f:
        f.write("\nfrom .. import api  # upward: results is below api\n")
    with open(copy / "commands" / "lru.py", "a") as f:
        f.write("\nfrom . import run  # one subcommand importing another\n")
    with open(copy / "validate" / "kernel.py", "a") as f:
        f.write("\nfrom . import store  # upward inside the validation harness\n")
    with open(copy / "results" / "series.py", "a") as f:
        f.write("\nfrom . import read  # upward inside the result directories\n")
    with open(copy / "sweep" / "file.py", "a") as f:
        f.write("\nfrom . import planning  # upward inside the sweeps\n")
    with open(copy / "report" / "page.py", "a") as f:
        f.write("\nfrom . import charts  # upward inside the report\n")
    r = lint_imports(pythonpath=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    out = r.stdout
    assert f"Contracts: 0 kept, {len(contracts())} broken." in out, out
    assert "reclaimlab.results is not allowed to import reclaimlab.api" in out, out
    assert "reclaimlab.commands.lru is not allowed to import reclaimlab.commands.run" in out, out
    assert "reclaimlab.validate.kernel is not allowed to import reclaimlab.validate.store" in out, out
    assert "reclaimlab.results.series is not allowed to import reclaimlab.results.read" in out, out
    assert "reclaimlab.sweep.file is not allowed to import reclaimlab.sweep.planning" in out, out
    assert "reclaimlab.report.page is not allowed to import reclaimlab.report.charts" in out, out


def extension_importers() -> dict[str, list[int]]:
    """Module (relative to the package) -> lines that import ``reclaimlab._core``."""
    found: dict[str, list[int]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).with_suffix("").as_posix().replace("/", ".")
        # The absolute name of the package this file is in (for `a/__init__.py` that is `a`
        # itself, for `a/b.py` also `a`), against which relative imports resolve.
        package = ["reclaimlab", *rel.split(".")[:-1]]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = package[: len(package) - node.level + 1] if node.level else []
                module = ".".join(base + ([node.module] if node.module else []))
                names = [module] + [f"{module}.{a.name}" for a in node.names]
            if "reclaimlab._core" in names:
                found.setdefault(rel, []).append(node.lineno)
    return found


def test_only_api_and_results_import_the_extension():
    # grimp cannot see a compiled module, so import-linter cannot place `_core`; this is the
    # rule its layer stands for: the package reaches the engine through the API (and results'
    # freshness, for the engine version that decides it), never from a command or a report.
    importers = extension_importers()
    assert set(importers) == {"__init__", "api", "results.freshness"}, importers
