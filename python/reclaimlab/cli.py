"""The ``reclaimlab`` command: argument parsing, dispatch to a subcommand, and error handling.

Each subcommand is a module in :mod:`reclaimlab.commands` (see its docstring). Exit codes:
0 success; 1 simulation or output error; 2 bad scenario, missing or malformed file (scenario or
trace) or bad arguments; 70 internal error (a bug in reclaimlab: one line on stderr, the details
in ``internal-error.log`` in the output directory); 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from . import __version__
from .api import (
    ENGINE_VERSION,
    InternalError,
    ScenarioError,
    ScenarioNotFound,
    SimulationError,
    TraceError,
)
from .commands import COMMANDS, CliError
from .results import INTERNAL_ERROR_LOG, OutputError, read_summary
from .sweep import SweepError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="reclaimlab",
        description="Deterministic simulator of Linux memory reclaim on virtualized hosts.",
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"reclaimlab {__version__} (engine {ENGINE_VERSION})",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for cmd in COMMANDS:
        p = sub.add_parser(cmd.NAME, help=cmd.HELP, description=cmd.DESCRIPTION)
        cmd.add_arguments(p)
        p.set_defaults(handler=cmd.main)
    return parser


def _err(message: str) -> None:
    sys.stdout.flush()
    print(message, file=sys.stderr, flush=True)


#: Exit status of an internal error (EX_SOFTWARE of sysexits.h).
EXIT_INTERNAL = 70


def _internal_error_log(results_dir: Path | None, details: str) -> Path:
    """Write the details of an internal error where the user will find them: in the output
    directory if the command had one (beside, never instead of, earlier results), else in a new
    temporary directory."""
    text = f"reclaimlab {__version__} (engine {ENGINE_VERSION})\ncommand: {' '.join(sys.argv)}\n{details}"
    if results_dir is not None:
        try:
            results_dir.mkdir(parents=True, exist_ok=True)
            path = results_dir / INTERNAL_ERROR_LOG
            path.write_text(text, encoding="utf-8")
            return path
        except OSError:
            pass
    path = Path(tempfile.mkdtemp(prefix="reclaimlab-internal-error-")) / INTERNAL_ERROR_LOG
    path.write_text(text, encoding="utf-8")
    return path


def _interrupted_message(results_dir: Path | None) -> str:
    """What Ctrl-C leaves: only what exists is claimed to be kept."""
    if results_dir is None:
        return "interrupted"
    d = Path(results_dir)
    if not d.is_dir():
        return f"interrupted; nothing was written to {d}"
    if read_summary(d) is not None:
        return f"interrupted; {d} still holds the previous finished result"
    if any(not p.name.startswith(".") for p in d.iterdir()):
        return f"interrupted; finished results kept in {d}"
    return f"interrupted; no finished results in {d}"


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # Commands set this as soon as they know it, for the interrupt message.
    args.results_dir = None
    try:
        return int(args.handler(args) or 0)
    except ScenarioNotFound as e:
        _err(f"error: {e.path}: {e.reason}")
        return 2
    except ScenarioError as e:
        _err(str(e).rstrip("\n"))
        return 2
    except TraceError as e:
        _err(f"error: {e}")
        return 2
    except SweepError as e:
        _err(str(e))  # already "FILE:LINE: error: ..."
        return 2
    except CliError as e:
        _err(f"error: {e}")
        return e.exit_code
    except InternalError as e:
        summary = e.args[0] if e.args else "internal error"
        details = e.args[1] if len(e.args) > 1 else summary
        log = _internal_error_log(args.results_dir, details)
        _err(f"{summary}: this is a bug in reclaimlab; please report it with {log}")
        return EXIT_INTERNAL
    except SimulationError as e:
        _err(f"error: {e}")
        return 1
    except OutputError as e:
        _err(f"error: {e}")
        return 1
    except KeyboardInterrupt:
        _err("\n" + _interrupted_message(args.results_dir))
        return 130
    except OSError as e:
        # A file the command had to read or write (not the scenario: that is checked first).
        where = f"{e.filename}: " if e.filename else ""
        _err(f"error: {where}{e.strerror or e}")
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
