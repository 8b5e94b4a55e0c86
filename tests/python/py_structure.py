"""The module structure of the Python packages under ``python/``: which module imports which,
and the import cycles between modules and between top-level modules of a package. The graph
and cycle code is ``rust_structure``'s; used by ``test_structure.py`` and
``scripts/check-structure.py``.

What counts as an import of one file by another: ``import a.b`` and ``from a.b import c``
naming a module of the same package (absolute), and relative ``from . import x`` /
``from ..a import b``, anywhere in the file (a function-level import is still a dependency).
Each resolves to the longest module prefix that is a file, and ``from p import name`` to the
module ``p.name`` when that is one. A module's import of a package it is inside (its
``__init__.py``) is kept but, as in Rust, is not an edge of the graph: that is how a package's
modules reach its shared names, and the package's own re-exports point the other way.
"""

from __future__ import annotations

import ast
from pathlib import Path

from rust_structure import Ref, cycles


def _module_name(top: Path, file: Path) -> tuple[str, ...]:
    parts = list(file.relative_to(top.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return tuple(parts)


def package_files(top: Path) -> list[Path]:
    """The package's modules: every ``.py`` under ``top`` (a package directory)."""
    return sorted(f for f in top.rglob("*.py") if "__pycache__" not in f.parts)


def module_refs(top: Path, file: Path, modules: dict[tuple[str, ...], Path]) -> list[Ref]:
    """Every import in ``file`` of another module of the package ``top``."""
    here = _module_name(top, file)
    package = list(here) if file.name == "__init__.py" else list(here[:-1])
    refs: list[Ref] = []

    def add(full: list[str], line: int, text: str) -> None:
        for k in range(len(full), 0, -1):
            key = tuple(full[:k])
            target = modules.get(key)
            if target is not None:
                if target != file:
                    up = len(key) < len(here) and key == here[: len(key)]
                    refs.append(Ref(file, target, line, text, up))
                return

    tree = ast.parse(file.read_text(encoding="utf-8"), str(file))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == top.name:
                    add(a.name.split("."), node.lineno, a.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
            elif node.module and node.module.split(".")[0] == top.name:
                base = []
            else:
                continue  # another distribution's module
            full = base + (node.module.split(".") if node.module else [])
            written = "." * node.level + (node.module or "")
            for a in node.names:
                if tuple(full + [a.name]) in modules:
                    add(full + [a.name], node.lineno, f"{written} import {a.name}")
                else:
                    add(full, node.lineno, f"{written} import {a.name}")
    return refs


def analyse(root: Path, structure) -> None:
    """Add the Python packages under ``root/python`` to ``structure`` (a
    ``rust_structure.Structure``): their files, references and cycles."""
    for top in sorted(p.parent for p in (root / "python").glob("*/__init__.py")):
        files = package_files(top)
        modules = {_module_name(top, f): f for f in files}
        structure.py_files += files
        for f in files:
            structure.py_refs += module_refs(top, f, modules)

    from rust_structure import py_module_key

    structure.py_file_cycles = cycles(structure.py_refs, structure.file_key)
    structure.py_module_cycles = cycles(structure.py_refs, py_module_key(structure))
