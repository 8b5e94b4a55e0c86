"""Helpers shared by subcommands."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]+")


def result_dir_name(scenario_name: str) -> str:
    """A scenario name as a single, safe, visible directory name."""
    name = _UNSAFE.sub("_", scenario_name).lstrip("._").rstrip("_")
    return name or "scenario"


def seed_arg(text: str) -> int:
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if not 0 <= value < 2**64:
        raise argparse.ArgumentTypeError(f"seed must be in 0..2^64-1, not {value}")
    return value


def invariants_arg(text: str) -> str | int:
    if text in ("off", "every"):
        return text
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value <= 0:
        raise argparse.ArgumentTypeError(
            f"expected off, every or a positive integer N (check every Nth event), not {text!r}"
        )
    return value


def repo_scenarios_dir() -> Path | None:
    """``scenarios/`` of the source tree this package was installed from (editable install)."""
    here = Path(__file__).resolve()
    for parent in here.parents:
        candidate = parent / "scenarios"
        if candidate.is_dir() and (parent / "pyproject.toml").is_file():
            return candidate
    return None
