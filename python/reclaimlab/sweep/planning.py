"""Planning a sweep: the points (axes × includes), each point's scenario text, checked key by
key by the engine's own parser, and the jobs (point × seed) with their store keys."""

from __future__ import annotations

import copy
import itertools
import json
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .. import api
from ..store import Store
from .file import Pos, Sweep, _Where


@dataclass
class Job:
    """One run of a sweep: a point (axis key -> value), a seed, and the scenario as TOML text."""

    index: int
    point: dict[str, Any]
    seed: int
    text: str
    name: str
    key: str = ""
    resolved: str = field(default="", repr=False)
    #: The base scenario file's directory (absolute): the engine resolves the scenario's
    #: relative paths, whatever keys hold them, against it, as it does for the file itself,
    #: so the resolved scenario (and so the store key) is the file's own, from any directory.
    base_dir: str = ""

    @property
    def label(self) -> str:
        pts = ", ".join(f"{k}={v}" for k, v in self.point.items())
        return f"{pts}{', ' if pts else ''}seed {self.seed}"


def set_key(data: dict[str, Any], dotted: str, value: Any) -> None:
    """Set a dotted scenario key; a list (``workload``) is indexed by position or by name, or
    ``*`` for every element (``guest.*.policy.lru``: each guest's; none if there is no such
    list). Raises KeyError with a message when a list has no such element."""
    parts = dotted.split(".")
    node: Any = data
    if parts[-1] == "*":
        raise KeyError(f"{dotted!r} ends in `*`; name a key inside each element")
    for i, part in enumerate(parts[:-1]):
        if part == "*":
            if not isinstance(node, list):
                raise KeyError(f"{'.'.join(parts[:i])!r} is not a list; `*` stands for each "
                               "element of a list ([[workload]], [[guest]], ...)")
            rest = ".".join(parts[i + 1:])
            for item in node:
                set_key(item, rest, value)
            return
        if isinstance(node, list):
            node = _element(node, part, ".".join(parts[: i + 1]))
            continue
        if not isinstance(node, dict):
            raise KeyError(f"{'.'.join(parts[:i])!r} is a value, not a table")
        if parts[i + 1] == "*" and part not in node:
            return  # no such list: no element to set
        nxt = node.get(part)
        if nxt is None:
            nxt = node[part] = {}
        node = nxt
    last = parts[-1]
    if isinstance(node, list):
        raise KeyError(f"{dotted!r} names a whole list element; name a key inside it")
    if not isinstance(node, dict):
        raise KeyError(f"{'.'.join(parts[:-1])!r} is a value, not a table")
    node[last] = value


def _element(items: list, part: str, where: str) -> Any:
    if part.isdigit():
        if int(part) < len(items):
            return items[int(part)]
        raise KeyError(f"{where!r}: there are only {len(items)} elements (indexes from 0)")
    for item in items:
        if isinstance(item, dict) and item.get("name") == part:
            return item
    names = ", ".join(str(i.get("name")) for i in items if isinstance(i, dict))
    raise KeyError(f"{where!r}: no element named {part!r} (names: {names}; or use an index from 0)")


def _scenario_text(base: dict[str, Any], point: Mapping[str, Any]) -> str:
    """The scenario of a point as TOML text; its paths (the base's and the axes') stay relative
    to the scenario file's directory, which the engine is given with the text (``Job.base_dir``)."""
    import tomli_w

    data = copy.deepcopy(base)
    for k, v in point.items():
        set_key(data, k, v)
    return tomli_w.dumps(data)


def _key_at_fault(e: Exception, text: str) -> bool:
    """Whether the engine's error about the generated scenario ``text`` points at a key or a
    table (its column is the first of the line's text), rather than at a value."""
    m = re.match(r"^[^\n]*?:(\d+):(\d+): error: ", str(e).strip())
    if not m:
        return False
    lines, line, col = text.splitlines(), int(m.group(1)), int(m.group(2))
    return 0 < line <= len(lines) and lines[line - 1][: col - 1].strip() == ""


def _engine_message(e: Exception) -> str:
    """The engine's message without its location in generated text, on one line."""
    msg = re.sub(r"^[^\n]*?:\d+:\d+: error: ", "", str(e).strip())
    return re.sub(r"\s*\n\s*help: ", "; help: ", msg).replace("\n", " ")


def points(sweep: Sweep) -> list[tuple[dict[str, Any], int | None]]:
    """The distinct points: the cartesian product of the axes, then the included ones (with the
    index of their [[include]] table, for error messages)."""
    keys = list(sweep.axes)
    out: list[tuple[dict[str, Any], int | None]] = [
        (dict(zip(keys, combo)), None) for combo in itertools.product(*sweep.axes.values())
    ]
    out += [(dict(p), i) for i, p in enumerate(sweep.include)]
    seen, unique = set(), []
    for p, inc in out:
        ident = json.dumps(p, sort_keys=True)
        if ident not in seen:
            seen.add(ident)
            unique.append((p, inc))
    return unique


def plan(sweep: Sweep) -> list[Job]:
    """Every run of the sweep, each checked by the engine's parser and given its store key.
    Raises SweepError naming the sweep file's line and column of the first bad key or value."""
    where = _Where(sweep.path, sweep.text)
    # The base scenario first, as it stands: its own errors name its own file and line
    # (ScenarioError, which the command line prints as is).
    api.validate(sweep.scenario)
    base = tomllib.loads(sweep.scenario.read_text(encoding="utf-8"))
    base_dir = str(sweep.scenario.parent.resolve())
    name = str(sweep.scenario)

    def check(point: Mapping[str, Any], at: Callable[[bool], Pos | None], what: str) -> str:
        """The resolved scenario of ``point``; a SweepError at ``at(True)`` (the key's place)
        if the key is at fault, else at ``at(False)`` (the value's)."""
        text = ""
        try:
            text = _scenario_text(base, point)
            return api.resolved_scenario(api.Source(text=text, name=name, base_dir=base_dir))
        except KeyError as e:
            raise where.error(at(True), f"{what}: {e.args[0]}") from None
        except api.ScenarioError as e:
            raise where.error(at(_key_at_fault(e, text)), f"{what}: {_engine_message(e)}") from None

    # Each key and value alone first, so that the error names the place of the culprit.
    for k, vs in sweep.axes.items():
        for v in vs:
            check({k: v}, lambda key, k=k, v=v: where.key(k) if key else where.value(k, v),
                  f"axis {json.dumps(k)} = {json.dumps(v)}")
    for i, p in enumerate(sweep.include):
        for k, v in p.items():
            check({k: v}, lambda key, k=k, v=v, i=i: where.key(k, i) if key else where.value(k, v, i),
                  f"[[include]] {json.dumps(k)} = {json.dumps(v)}")
    jobs: list[Job] = []
    for point, inc in points(sweep):
        desc = ", ".join(f"{k} = {json.dumps(v)}" for k, v in point.items()) or "the base scenario"
        first = next(iter(point), None)
        resolved = check(
            point,
            lambda _key, first=first, inc=inc: (where.key(first, inc) if first else where.top("scenario")),
            f"the point {desc}",
        )
        text = _scenario_text(base, point)
        for seed in sweep.seeds:
            job = Job(len(jobs), point, seed, text, name, base_dir=base_dir)
            job.resolved = resolved
            job.key = Store.key(resolved, seed)
            jobs.append(job)
    return jobs
