"""Text and Markdown tables for the CLI: the end-of-run summary, the examples report and the
policy registry."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .progress import format_seconds
from .results import sim_time_ns

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
    """Two aligned columns, label and value (a borderless rich table, as plain text)."""
    if not rows:
        return ""
    import io

    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table(box=None, show_header=False, pad_edge=False, padding=(0, 2, 0, 0))
    table.add_column(no_wrap=True)
    table.add_column(no_wrap=True, overflow="ignore")
    for label, value in rows:
        # Text, not str: a value like "[host]" is not rich markup.
        table.add_row(Text(label), Text(format_value(value)))
    buf = io.StringIO()
    Console(file=buf, width=10_000, color_system=None, force_terminal=False).print(table)
    return "\n".join(line.rstrip() for line in buf.getvalue().splitlines()) + "\n"


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


def examples_report(
    done: Sequence[tuple[str, Mapping[str, Any]]],
    failed: Sequence[tuple[str, str]],
    scenarios_dir: Path,
    engine_version: str,
) -> str:
    """``report.md`` of ``reclaimlab examples``: one row per (scenario name, summary) of ``done``
    with its headline figures, then the (file name, error) of every scenario that ``failed``."""
    heads = headline_columns(s for _, s in done)
    show_time = any(sim_time_ns(s) is not None for _, s in done)
    headers = ["scenario", "seed"] + (["simulated time"] if show_time else []) + heads
    rows = []
    for name, s in done:
        h = s.get("headline") if isinstance(s.get("headline"), dict) else {}
        row: list[Any] = [name, s.get("seed")]
        if show_time:
            row.append(format_sim_time(sim_time_ns(s)))
        row.extend(h.get(k) for k in heads)
        rows.append(row)
    lines = [
        "# reclaimlab examples",
        "",
        f"Engine version {engine_version}. One row per scenario in `{scenarios_dir.as_posix()}/`; "
        "figures are the `headline` of each run's `summary.json` (kernel counter names).",
        "",
    ]
    if rows:
        lines.append(markdown_table(headers, rows).rstrip("\n"))
        lines.append("")
    if failed:
        lines += ["## Failed", ""]
        for file_name, error in failed:
            first = error.strip().splitlines()[0] if error.strip() else "unknown error"
            lines.append(f"- `{file_name}`: {first}")
        lines.append("")
    return "\n".join(lines)


def policies_text(registry: Mapping[str, Any]) -> str:
    """``reclaimlab policies``: each switch with its default and spec, then its variants as an
    aligned table (variant, kernel, summary); ``registry`` is :func:`reclaimlab.api.policies`."""
    out = ['Policy switches: set one in a scenario as [policy] SWITCH = "VARIANT".']
    for s in registry["switches"]:
        default = s["default"]
        preset = s.get("preset")
        if preset:
            default += f"; follows {preset['follows']}: {preset['doc']}"
        out += ["", f"{s['name']}: {s['summary']}", f"  default  {default}", f"  spec     {s['spec']}"]
        rows = [("variant", "kernel", "summary")]
        rows += [(v["name"], v["kernel"], v["summary"]) for v in s["variants"]]
        w0 = max(len(r[0]) for r in rows)
        w1 = max(len(r[1]) for r in rows)
        out += [f"  {a.ljust(w0)}  {b.ljust(w1)}  {c}".rstrip() for a, b, c in rows]
    return "\n".join(out) + "\n"
