"""Text and Markdown tables for the CLI: the end-of-run summary and the examples report."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .progress import format_seconds

MISSING = "-"


def format_value(value: Any) -> str:
    if value is None:
        return MISSING
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        # Fixed point, never exponent notation: 268500.1 stays readable in a table.
        if value.is_integer():
            return str(int(value))
        if abs(value) >= 100:
            return f"{value:.1f}"
        return f"{value:.4g}"
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=False)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def format_sim_time(ns: int | None) -> str:
    return MISSING if ns is None else format_seconds(ns / 1e9)


def key_value_table(rows: Sequence[tuple[str, Any]]) -> str:
    """Two aligned columns: label, value."""
    if not rows:
        return ""
    lw = max(len(label) for label, _ in rows)
    lines = [f"{label.ljust(lw)}  {format_value(value)}".rstrip() for label, value in rows]
    return "\n".join(lines) + "\n"


def run_summary_rows(
    *,
    scenario: str | None,
    seed: int | None,
    sim_time_ns: int | None,
    wall_time_s: float | None,
    headline: Mapping[str, Any],
    out: str | None = None,
) -> list[tuple[str, Any]]:
    rows: list[tuple[str, Any]] = [
        ("scenario", scenario),
        ("seed", seed),
        ("simulated time", format_sim_time(sim_time_ns)),
        ("wall time", MISSING if wall_time_s is None else format_seconds(wall_time_s)),
    ]
    rows.extend((str(k), v) for k, v in headline.items())
    if out is not None:
        rows.append(("results", out))
    return rows


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A GitHub Markdown table; columns whose values are all numbers are right-aligned."""
    rows = [list(r) for r in rows]
    ncol = len(headers)
    numeric = [
        bool(rows) and all(_is_number(r[i]) or r[i] is None for r in rows) for i in range(ncol)
    ]
    text_rows = [[_md_escape(format_value(c)) for c in r] for r in rows]
    widths = [
        max([len(headers[i]), 3] + [len(r[i]) for r in text_rows]) for i in range(ncol)
    ]

    def line(cells: Sequence[str]) -> str:
        padded = [
            c.rjust(widths[i]) if numeric[i] else c.ljust(widths[i]) for i, c in enumerate(cells)
        ]
        return "| " + " | ".join(padded) + " |"

    sep = [("-" * (widths[i] - 1) + ":") if numeric[i] else "-" * widths[i] for i in range(ncol)]
    out = [line([_md_escape(h) for h in headers]), "| " + " | ".join(sep) + " |"]
    out.extend(line(r) for r in text_rows)
    return "\n".join(out) + "\n"


def headline_columns(summaries: Iterable[Mapping[str, Any]]) -> list[str]:
    """Union of the headline keys, in order of first appearance."""
    seen: dict[str, None] = {}
    for s in summaries:
        h = s.get("headline")
        if isinstance(h, Mapping):
            for k in h:
                seen.setdefault(str(k), None)
    return list(seen)
