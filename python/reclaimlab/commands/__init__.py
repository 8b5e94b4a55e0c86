"""Subcommands of ``reclaimlab``.

A subcommand is a module with ``NAME``, ``HELP``, ``DESCRIPTION``, ``add_arguments(parser)`` and
``main(args) -> int``; list it in :data:`COMMANDS`. ``main`` raises ScenarioNotFound,
ScenarioError, SimulationError, OutputError or :class:`CliError` and lets ``cli.main`` turn them
into messages and exit codes; it sets ``args.results_dir`` once it knows where results go, so that
Ctrl-C can say what was kept.
"""

from __future__ import annotations


class CliError(Exception):
    """A user error the CLI reports as ``error: MESSAGE`` with ``exit_code``."""

    def __init__(self, message: str, exit_code: int = 2):
        super().__init__(message)
        self.exit_code = exit_code


from . import compare, examples, lru, reproduce, run  # noqa: E402  (they import CliError)

COMMANDS = [run, examples, lru, compare, reproduce]
