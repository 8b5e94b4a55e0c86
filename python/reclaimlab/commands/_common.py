"""What subcommands share: the user-error exception and argument types."""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path
from typing import Any

from ..results import replaceable, result_dir_name
from ..store import Store, default_store


class CliError(Exception):
    """A user error the CLI reports as ``error: MESSAGE`` with ``exit_code``."""

    def __init__(self, message: str, exit_code: int = 2):
        super().__init__(message)
        self.exit_code = exit_code


def claim_result_dir(taken: dict[str, str], scenario_name: str, scenario: object) -> str:
    """The result directory name of ``scenario_name``, recorded in ``taken`` (name -> scenario);
    a CliError if another scenario of the same command already claimed it."""
    dirname = result_dir_name(scenario_name)
    if dirname in taken:
        raise CliError(
            f"{scenario}: scenario name {scenario_name!r} is also used by {taken[dirname]}; "
            "results would collide"
        )
    taken[dirname] = str(scenario)
    return dirname


def positive_int(text: str) -> int:
    """An argparse type: an integer of at least 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, not {text!r}")
    return value


def seed_arg(text: str) -> int:
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if not 0 <= value < 2**64:
        raise argparse.ArgumentTypeError(f"seed must be in 0..2^64-1, not {value}")
    return value


def invariants_arg(text: str) -> str | int:
    if text in ("off", "every"):
        return text
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value <= 0:
        raise argparse.ArgumentTypeError(
            f"expected off, every or a positive integer N (check every Nth event), not {text!r}"
        )
    return value


def repo_scenarios_dir() -> Path | None:
    """``scenarios/`` of the source tree this package was installed from (editable install)."""
    here = Path(__file__).resolve()
    for parent in here.parents:
        candidate = parent / "scenarios"
        if candidate.is_dir() and (parent / "pyproject.toml").is_file():
            return candidate
    return None


def add_store_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--store",
        metavar="DIR",
        help="the content-addressed result store to use (default: OUT/.store); commands that "
        "share one never compute the same run twice",
    )


def open_store(args: argparse.Namespace, out: Path) -> Store:
    """The store of ``--store``, or the default one inside the command's output directory."""
    return Store(args.store if args.store else default_store(out))


def check_output_dir(out: Path, option: str = "--out") -> None:
    """Refuse, before any work, an output directory that could not be written at the end: a
    path through a file, an existing file or foreign directory, or a place without write
    permission. Raises CliError (exit 2) naming the path and what to do."""
    hint = f"give another {option}"
    if out.exists() or out.is_symlink():
        if not out.is_dir():
            raise CliError(f"{option} {out}: exists and is not a directory; {hint}")
        if not replaceable(out):
            raise CliError(
                f"{option} {out}: exists and is not a reclaimlab result directory (refusing to "
                f"replace it); remove it or {hint}"
            )
    # The nearest existing ancestor must be a directory we may create entries in.
    parent = out.absolute().parent
    while not parent.exists():
        if parent.is_symlink():
            raise CliError(f"{option} {out}: {parent} is a broken symbolic link; {hint}")
        parent = parent.parent
    if not parent.is_dir():
        raise CliError(f"{option} {out}: {parent} is not a directory; {hint}")
    # Try it: permission bits do not tell for root, read-only mounts or /proc.
    try:
        probe = tempfile.mkdtemp(prefix=".reclaimlab-probe-", dir=parent)
    except OSError as e:
        raise CliError(f"{option} {out}: cannot create a directory in {parent}: "
                       f"{e.strerror or e}; {hint}") from None
    os.rmdir(probe)


def scenario_value(text: str) -> Any:
    """A value given on the command line for a scenario key: a TOML value when it is one (``60``
    an integer, ``0.5`` a float, ``true`` a boolean) and a string otherwise (``mglru``,
    ``2GiB``)."""
    import tomllib

    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def key_value(text: str, option: str) -> tuple[str, Any]:
    """``KEY=VALUE`` of ``option`` (``--set``): the dotted scenario key and its value."""
    key, sep, value = text.partition("=")
    key, value = key.strip(), value.strip()
    if not sep or not key or not value:
        raise CliError(f"{option} {text!r}: expected KEY=VALUE (e.g. policy.lru=mglru)")
    return key, scenario_value(value)
