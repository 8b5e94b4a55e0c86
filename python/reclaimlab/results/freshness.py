"""Freshness: a result is up to date when it is complete and its summary records the same fully
resolved scenario text (every default filled in), the same seed and this engine's version. That
is what lets ``examples``, ``compare --seeds``, ``reproduce`` and ``sweep`` resume instead of
recomputing, and what the store key (:func:`run_key`) hashes.

The only module of the package besides the API that imports the extension (for the engine
version)."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .._core import ENGINE_VERSION
from .naming import TRACE_FILE
from .read import read_summary


def summary_matches(summary: Mapping[str, Any] | None, resolved: str, seed: int) -> bool:
    """Whether a summary records this fully resolved scenario, this seed and this engine."""
    return (
        summary is not None
        and summary.get("scenario") == resolved
        and summary.get("seed") == seed
        and summary.get("engine_version") == ENGINE_VERSION
    )


def run_key(resolved: str, seed: int) -> str:
    """The store key of a run: a hash of exactly what :func:`summary_matches` compares (the
    fully resolved scenario text, the seed, this engine's version), so that two requests share a
    key exactly when one's result is up to date for the other."""
    ident = json.dumps(
        {"engine_version": ENGINE_VERSION, "scenario": resolved, "seed": seed}, sort_keys=True
    )
    return hashlib.sha256(ident.encode("utf-8")).hexdigest()


def fresh_summary(
    directory: str | os.PathLike, resolved: str, seed: int, *, need_trace: bool = False
) -> dict[str, Any] | None:
    """The summary of ``directory`` if it holds an up-to-date result, else None.

    Up to date: complete, same resolved scenario text, seed and engine version, and holding a
    ``trace`` when ``need_trace`` (a result without one cannot give the trace-only rows).
    """
    summary = read_summary(directory)
    if not summary_matches(summary, resolved, seed):
        return None
    if need_trace and not (Path(directory) / TRACE_FILE).is_file():
        return None
    return summary


def is_up_to_date(
    directory: str | os.PathLike, resolved: str, seed: int, *, need_trace: bool = False
) -> bool:
    """Whether ``directory`` holds an up-to-date result (see :func:`fresh_summary`)."""
    return fresh_summary(directory, resolved, seed, need_trace=need_trace) is not None
