"""Subcommands of ``reclaimlab``.

A subcommand is a module with ``NAME``, ``HELP``, ``DESCRIPTION``, ``add_arguments(parser)`` and
``main(args) -> int``; list it in :data:`COMMANDS`. A command parses its arguments, calls library
functions (:mod:`reclaimlab.api`, :mod:`reclaimlab.results`, the report modules) and prints; the
work itself lives in the library, so that the Python API can do everything the CLI does.

``main`` raises ScenarioNotFound, ScenarioError, SimulationError, OutputError or
:class:`CliError` and lets ``cli.main`` turn them into messages and exit codes; it sets
``args.results_dir`` once it knows where results go, so that Ctrl-C can say what was kept.
"""

from __future__ import annotations

from . import compare, examples, lru, policies, report, reproduce, run, sweep, validate
from ._common import CliError

COMMANDS = [run, examples, sweep, report, lru, compare, reproduce, policies, validate]

__all__ = ["COMMANDS", "CliError"]
