"""``reclaimlab examples``: run every scenario in scenarios/ and write a Markdown report.

Resumable: a scenario whose result directory holds a summary.json recording the same scenario
name, seed and engine version is not run again ("up to date").
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import _core, api
from .._core import ScenarioError, SimulationError, TraceError
from ..output import RESULT_FILES, OutputError, write_text_atomic
from ..progress import ProgressBar, format_seconds
from ..tables import format_sim_time, headline_columns, markdown_table
from . import CliError
from ._common import repo_scenarios_dir, result_dir_name

NAME = "examples"
HELP = "run every example scenario and write report.md"
DESCRIPTION = (
    "Run every scenarios/*.toml (sorted by file name), write each result to DIR/<scenario name>/ "
    "and a table of the headline figures to DIR/report.md. Results that are up to date (same "
    "scenario, seed and engine version) are kept, not recomputed."
)

REPORT_NAME = "report.md"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", metavar="DIR", default="results", help="results directory (default: results)")
    p.add_argument(
        "--scenarios",
        metavar="DIR",
        help="directory of scenario files (default: ./scenarios, else the source tree's)",
    )


@dataclass
class Outcome:
    file: Path
    name: str | None = None
    summary: dict[str, Any] | None = None
    status: str = "pending"  # "ran", "up to date", "failed"
    error: str | None = None
    exit_code: int = 0


def find_scenarios(directory: str | None) -> list[Path]:
    if directory is not None:
        d = Path(directory)
        if not d.is_dir():
            raise CliError(f"{directory}: no such directory")
    else:
        d = Path("scenarios")
        if not d.is_dir():
            d = repo_scenarios_dir() or d
        if not d.is_dir():
            raise CliError("no scenarios directory: run from the repository root or pass --scenarios DIR")
    files = sorted(p for p in d.glob("*.toml") if p.is_file())
    if not files:
        raise CliError(f"{d}: no *.toml scenario files")
    return files


def read_summary(result_dir: Path) -> dict[str, Any] | None:
    """The summary of a complete result directory, or None."""
    if not all((result_dir / name).is_file() for name in RESULT_FILES):
        return None
    try:
        data = json.loads((result_dir / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def is_up_to_date(summary: dict[str, Any] | None, resolved: str, seed: int) -> bool:
    """Same fully resolved scenario (every default filled in), seed and engine version."""
    return (
        summary is not None
        and summary.get("scenario") == resolved
        and summary.get("seed") == seed
        and summary.get("engine_version") == _core.ENGINE_VERSION
    )


def render_report(outcomes: list[Outcome], scenarios_dir: Path) -> str:
    done = [o for o in outcomes if o.summary is not None]
    heads = headline_columns(o.summary for o in done)
    show_time = any(api.sim_time_ns(o.summary) is not None for o in done)
    headers = ["scenario", "seed"] + (["simulated time"] if show_time else []) + heads
    rows = []
    for o in done:
        s = o.summary
        h = s.get("headline") if isinstance(s.get("headline"), dict) else {}
        row: list[Any] = [o.name, s.get("seed")]
        if show_time:
            row.append(format_sim_time(api.sim_time_ns(s)))
        row.extend(h.get(k) for k in heads)
        rows.append(row)
    lines = [
        "# reclaimlab examples",
        "",
        f"Engine version {_core.ENGINE_VERSION}. One row per scenario in `{scenarios_dir.as_posix()}/`; "
        "figures are the `headline` of each run's `summary.json` (kernel counter names).",
        "",
    ]
    if rows:
        lines.append(markdown_table(headers, rows).rstrip("\n"))
        lines.append("")
    failed = [o for o in outcomes if o.status == "failed"]
    if failed:
        lines += ["## Failed", ""]
        for o in failed:
            first = (o.error or "").strip().splitlines()[0] if o.error else "unknown error"
            lines.append(f"- `{o.file.name}`: {first}")
        lines.append("")
    return "\n".join(lines)


def _say(text: str) -> None:
    print(text, flush=True)


def main(args: argparse.Namespace) -> int:
    files = find_scenarios(args.scenarios)
    root = Path(args.out)
    args.results_dir = root
    outcomes: list[Outcome] = []
    names: dict[str, Path] = {}
    width = len(str(len(files)))
    for i, path in enumerate(files, 1):
        o = Outcome(file=path)
        outcomes.append(o)
        prefix = f"[{i:>{width}}/{len(files)}] {path.name}"
        try:
            info = api.scenario_info(path)
            o.name = str(info["name"])
            dirname = result_dir_name(o.name)
            if dirname in names:
                raise CliError(
                    f"{path}: scenario name {o.name!r} is also used by {names[dirname]}; "
                    "results would collide"
                )
            names[dirname] = path
            out = root / dirname
            existing = read_summary(out)
            resolved = _core.show_defaults(path=str(path))
            if is_up_to_date(existing, resolved, int(info["seed"])):
                o.summary, o.status = existing, "up to date"
                _say(f"{prefix}: up to date ({out})")
                continue
            bar = ProgressBar(sys.stderr)
            result = api.run(path, progress=bar)
            result.write(out)
            o.summary, o.status = result.summary, "ran"
            _say(f"{prefix}: done in {format_seconds(result.wall_time_s)} ({out})")
        except ScenarioError as e:
            o.status, o.error, o.exit_code = "failed", str(e), 2
            print(str(e).rstrip("\n"), file=sys.stderr, flush=True)
            _say(f"{prefix}: FAILED (invalid scenario)")
        except TraceError as e:
            o.status, o.error, o.exit_code = "failed", str(e), 2
            print(f"error: {e}", file=sys.stderr, flush=True)
            _say(f"{prefix}: FAILED (bad trace)")
        except CliError as e:
            o.status, o.error, o.exit_code = "failed", str(e), e.exit_code
            print(f"error: {e}", file=sys.stderr, flush=True)
            _say(f"{prefix}: FAILED")
        except (SimulationError, OutputError) as e:
            o.status, o.error, o.exit_code = "failed", str(e), 1
            print(f"error: {path}: {e}", file=sys.stderr, flush=True)
            _say(f"{prefix}: FAILED")

    report = root / REPORT_NAME
    write_text_atomic(report, render_report(outcomes, files[0].parent))
    failed = [o for o in outcomes if o.status == "failed"]
    _say(f"report: {report}" + (f" ({len(failed)} of {len(outcomes)} failed)" if failed else ""))
    return max((o.exit_code for o in failed), default=0)
