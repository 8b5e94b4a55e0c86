"""The ``reclaimlab`` command: argument parsing, dispatch to a subcommand, and error handling.

Each subcommand is a module in :mod:`reclaimlab.commands` (see its docstring). Exit codes:
0 success; 1 simulation or output error; 2 bad scenario, missing or malformed file (scenario or
trace) or bad arguments;
130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from . import __version__
from .api import ENGINE_VERSION, ScenarioError, ScenarioNotFound, SimulationError, TraceError
from .commands import COMMANDS, CliError
from .results import OutputError
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


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # Commands set this as soon as they know it, for the interrupt message.
    args.results_dir = None
    try:
        return int(args.handler(args) or 0)
    except ScenarioNotFound as e:
        _err(f"error: {e.path}: no such file")
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
    except SimulationError as e:
        _err(f"error: {e}")
        return 1
    except OutputError as e:
        _err(f"error: {e}")
        return 1
    except KeyboardInterrupt:
        if args.results_dir is not None:
            _err(f"\ninterrupted; finished results kept in {args.results_dir}")
        else:
            _err("\ninterrupted")
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
