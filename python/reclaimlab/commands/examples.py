"""``reclaimlab examples``: run every scenario in scenarios/ and write a Markdown report.

Resumable: runs live in a content-addressed store (``DIR/.store`` unless ``--store``), and a
scenario whose result is up to date there (same fully resolved scenario, seed and engine
version: :func:`reclaimlab.api.ensure_result`) is not run again; ``DIR/<scenario name>`` is a
symlink to its entry.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .. import api
from ..api import ScenarioError, SimulationError, TraceError
from ..progress import ProgressBar, format_seconds
from ..results import OutputError, write_text_atomic
from ..tables import examples_report
from ._common import CliError, add_store_argument, claim_result_dir, open_store, repo_scenarios_dir

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
    add_store_argument(p)


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


def _say(text: str) -> None:
    print(text, flush=True)


def main(args: argparse.Namespace) -> int:
    files = find_scenarios(args.scenarios)
    root = Path(args.out)
    args.results_dir = root
    with open_store(args, root).writing("reclaimlab examples") as store:
        return _run_all(files, root, store)


def _run_all(files: list[Path], root: Path, store) -> int:
    done: list[tuple[str, dict[str, Any]]] = []  # (scenario name, summary), in file order
    failed: list[tuple[str, str]] = []  # (file name, error message)
    exit_code = 0
    taken: dict[str, str] = {}
    width = len(str(len(files)))
    for i, path in enumerate(files, 1):
        prefix = f"[{i:>{width}}/{len(files)}] {path.name}"
        try:
            name = str(api.scenario_info(path)["name"])
            out = root / claim_result_dir(taken, name, path)
            got = api.ensure_result(path, store, view=out, progress=ProgressBar(sys.stderr))
            done.append((name, got.summary))
            if got.reused:
                _say(f"{prefix}: up to date ({out})")
            else:
                _say(f"{prefix}: done in {format_seconds(got.wall_time_s or 0.0)} ({out})")
            continue
        except ScenarioError as e:
            code, error, message, note = 2, str(e), str(e).rstrip("\n"), "invalid scenario"
        except TraceError as e:
            code, error, message, note = 2, str(e), f"error: {e}", "bad trace"
        except CliError as e:
            code, error, message, note = e.exit_code, str(e), f"error: {e}", None
        except (SimulationError, OutputError) as e:
            code, error, message, note = 1, str(e), f"error: {path}: {e}", None
        # One bad scenario does not stop the others; the report lists it under "Failed".
        failed.append((path.name, error))
        print(message, file=sys.stderr, flush=True)
        _say(f"{prefix}: FAILED" + (f" ({note})" if note else ""))
        exit_code = max(exit_code, code)

    report = root / REPORT_NAME
    text = examples_report(done, failed, files[0].parent, api.ENGINE_VERSION)
    write_text_atomic(report, text)
    total = len(done) + len(failed)
    _say(f"report: {report}" + (f" ({len(failed)} of {total} failed)" if failed else ""))
    return exit_code
