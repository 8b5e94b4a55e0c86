"""Scenario keys set for every run of a reproduction (``reclaimlab reproduce --set KEY=VALUE``):
the same experiments under the multi-generational LRU (``policy.lru=mglru`` and
``guest.*.policy.lru=mglru`` for the guests' own), another swappiness, another machine.

The experiments build their scenarios as dicts; every place that hands one to the engine passes
it through :func:`apply` first, which sets the keys in effect (none unless the command asked,
so a plain reproduction's runs and store keys are what they were). A key is a sweep axis's
dotted key (:func:`reclaimlab.sweep.planning.set_key`). The checks are not changed: a claim the
thread makes of the two-list LRU is checked as it stands, and a FAIL under another setting is
what the setting changes."""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from ..sweep.planning import set_key

_IN_EFFECT: ContextVar[tuple[tuple[str, Any], ...]] = ContextVar("reproduce_overrides",
                                                                 default=())


@contextmanager
def setting(overrides: Mapping[str, Any]) -> Iterator[None]:
    """Set ``overrides`` (dotted key -> value) on every scenario :func:`apply` sees inside."""
    token = _IN_EFFECT.set(tuple(overrides.items()))
    try:
        yield
    finally:
        _IN_EFFECT.reset(token)


def in_effect() -> dict[str, Any]:
    """The keys set now (empty outside :func:`setting`)."""
    return dict(_IN_EFFECT.get())


def apply(scn: Any) -> Any:
    """``scn`` with the keys in effect set (a copy; ``scn`` itself when none is). Raises
    KeyError naming a key that cannot be set on it."""
    keys = _IN_EFFECT.get()
    if not keys:
        return scn
    if not isinstance(scn, Mapping):
        raise TypeError(f"overrides apply to scenario dicts, not {type(scn).__name__}")
    data = copy.deepcopy(dict(scn))
    for k, v in keys:
        set_key(data, k, v)
    return data


def describe() -> str:
    """The keys in effect as a report line ("" when none is)."""
    keys = _IN_EFFECT.get()
    if not keys:
        return ""
    return "Every run with " + ", ".join(f"`{k} = {v!r}`" for k, v in keys) + " set."
