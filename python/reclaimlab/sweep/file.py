"""The sweep file: reading it, checking its shape, and placing its keys and values (line and
column) for error messages."""

from __future__ import annotations

import json
import os
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class SweepError(Exception):
    """A bad sweep file: the message names the file, the line and column, and the fix."""


@dataclass
class Sweep:
    path: Path
    scenario: Path
    seeds: list[int]
    axes: dict[str, list[Any]]
    include: list[dict[str, Any]]
    text: str = ""

    @property
    def columns(self) -> list[str]:
        """The axis columns of the summary: the axes, then keys only ``[[include]]`` sets."""
        cols = list(self.axes)
        for point in self.include:
            cols += [k for k in point if k not in cols]
        return cols


#: A place in the sweep file: 1-based line and column.
Pos = tuple[int, int]


def _pos_of(text: str, needle_re: str, start: int = 0, stop: int | None = None) -> Pos | None:
    """Line and column (1-based) of the first match of ``needle_re`` in lines [start, stop);
    the column is where its first group starts, or the match if it has none."""
    lines = text.splitlines()
    for i in range(start, len(lines) if stop is None else min(stop, len(lines))):
        m = re.search(needle_re, lines[i])
        if m:
            return i + 1, (m.start(1) if m.re.groups else m.start()) + 1
    return None


def _line_of(text: str, needle_re: str, start: int = 0, stop: int | None = None) -> int | None:
    """1-based number of the first line in [start, stop) matching ``needle_re``."""
    pos = _pos_of(text, needle_re, start, stop)
    return pos[0] if pos else None


def _key_re(key: str) -> str:
    return r"^\s*(" + re.escape(f'"{key}"') + "|" + re.escape(f"'{key}'") + "|" + re.escape(key) + r")\s*="


def _value_re(value: Any) -> str:
    if isinstance(value, str):
        return re.escape(json.dumps(value)) + "|" + re.escape(f"'{value}'")
    if isinstance(value, bool):
        return r"\b" + ("true" if value else "false") + r"\b"
    return r"(?<![\w.])" + re.escape(str(value)) + r"(?![\w.])"


class _Where:
    """Places (line and column) of the sweep file's keys and values, for error messages
    (tomllib keeps none)."""

    def __init__(self, path: Path, text: str):
        self.path, self.text = path, text
        self.nlines = len(text.splitlines())
        self.axes = _line_of(text, r"^\s*\[\s*axes\s*\]")
        self.includes = [i + 1 for i, l in enumerate(text.splitlines())
                         if re.match(r"^\s*\[\[\s*include\s*\]\]", l)]

    def _section(self, start: int | None) -> tuple[int, int]:
        if start is None:
            return 0, self.nlines
        end = _line_of(self.text, r"^\s*\[", start) or self.nlines + 1
        return start, end - 1

    def key(self, key: str, include: int | None = None) -> Pos | None:
        start = self.axes if include is None else self.includes[include]
        lo, hi = self._section(start)
        return _pos_of(self.text, _key_re(key), lo, hi)

    def value(self, key: str, value: Any, include: int | None = None) -> Pos | None:
        """Where ``value`` of axis (or ``[[include]]`` table) key ``key`` is; the key's place
        if it cannot be found."""
        return self._value_after(self.key(key, include), value)

    def top(self, key: str) -> Pos | None:
        lo = 0
        hi = min([x for x in [self.axes, *self.includes] if x] or [self.nlines + 1]) - 1
        return _pos_of(self.text, _key_re(key), lo, hi)

    def top_value(self, key: str, value: Any) -> Pos | None:
        """Where the value of top-level key ``key`` is (the key's place if not found)."""
        return self._value_after(self.top(key), value)

    def _value_after(self, at: Pos | None, value: Any) -> Pos | None:
        if at is None:
            return None
        line = self.text.splitlines()[at[0] - 1]
        # On the key's line, after its `=` (a value can look like the key).
        eq = line.index("=", at[1] - 1) + 1
        m = re.search(_value_re(value), line[eq:])
        if m:
            return at[0], eq + m.start() + 1
        # Or on a following line, before the next key or table (a multi-line array).
        nxt = _line_of(self.text, r"^\s*(\[|[\"'\w.-]+\s*=)", at[0]) or self.nlines + 1
        return _pos_of(self.text, _value_re(value), at[0], nxt - 1) or at

    def error(self, pos: Pos | None, message: str) -> SweepError:
        line, col = pos or (1, 1)
        return SweepError(f"{self.path}:{line}:{col}: error: {message}")


def load(path: str | os.PathLike) -> Sweep:
    """Read and check the shape of a sweep file (the keys themselves are checked by :func:`plan`)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SweepError(f"error: {path}: no such file") from None
    except OSError as e:
        raise SweepError(f"error: {path}: cannot read: {e.strerror}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"line (\d+), column (\d+)", str(e))
        raise SweepError(
            f"{path}:{m.group(1) if m else 1}:{m.group(2) if m else 1}: error: not valid TOML: {e}; "
            "check the quotes and "
            "brackets there (keys with dots are quoted: \"host.ram\" = [...])"
        ) from None
    where = _Where(path, text)
    allowed = {"scenario", "seeds", "axes", "include"}
    for k in data:
        if k not in allowed:
            raise where.error(where.top(k), f"unknown key `{k}` in a sweep file; allowed: "
                              "scenario, seeds, [axes], [[include]]")
    if not isinstance(data.get("scenario"), str):
        raise where.error(where.top("scenario"),
                          'needs scenario = "PATH" (the base scenario file, relative to this file)')
    scenario = path.parent / data["scenario"]
    if not scenario.is_file():
        raise where.error(where.top_value("scenario", data["scenario"]),
                          f"scenario {data['scenario']!r}: no such file "
                          f"({scenario}; a relative path is resolved against the sweep file's directory)")
    seeds_raw = data.get("seeds", 1)
    if isinstance(seeds_raw, int) and not isinstance(seeds_raw, bool) and seeds_raw >= 1:
        seeds = list(range(1, seeds_raw + 1))
    elif (isinstance(seeds_raw, list) and seeds_raw
          and all(isinstance(s, int) and not isinstance(s, bool) and 0 <= s < 2**64 for s in seeds_raw)):
        seeds = list(dict.fromkeys(seeds_raw))
    else:
        raise where.error(where.top_value("seeds", seeds_raw), "seeds must be a count (seeds = 3: seeds 1..3) or a "
                          "non-empty list of seeds (seeds = [1, 5, 9])")
    axes = data.get("axes", {})
    if not isinstance(axes, dict):
        raise where.error(where.top("axes"), "axes must be a table: [axes] with "
                          '"dotted.key" = [values...] lines')
    for k, vs in axes.items():
        if not isinstance(vs, list) or not vs:
            raise where.error(where.key(k), f"axis {k!r} must be a non-empty list of values, "
                              f'for example "{k}" = [{json.dumps(vs) if not isinstance(vs, list) else "..."}]')
    include = data.get("include", [])
    if not isinstance(include, list) or not all(isinstance(p, dict) for p in include):
        raise where.error(where.top("include"), "include must be tables: [[include]] with "
                          '"dotted.key" = value lines')
    sweep = Sweep(path, scenario, seeds, dict(axes), list(include), text)
    return sweep
