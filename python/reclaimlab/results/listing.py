"""Listing the result directories below a directory."""

from __future__ import annotations

import os
from pathlib import Path

from .read import is_complete


def list_results(root: str | os.PathLike) -> list[Path]:
    """Every complete result directory at or below ``root``, sorted by path.

    Hidden directories (the temporary and old directories of an unfinished write) are skipped,
    and so is everything below a result directory: results do not nest.
    """
    root = Path(root)
    found: list[Path] = []

    def visit(d: Path) -> None:
        if is_complete(d):
            found.append(d)
            return
        try:
            children = sorted(d.iterdir())
        except OSError:
            return
        for child in children:
            if child.is_dir() and not child.is_symlink() and not child.name.startswith("."):
                visit(child)

    if root.is_dir():
        visit(root)
    return found
