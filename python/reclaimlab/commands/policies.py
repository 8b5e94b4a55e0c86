"""``reclaimlab policies``: the policy registry, every ``[policy]`` switch and its variants."""

from __future__ import annotations

import argparse
import json
import sys

from .. import api
from ..tables import policies_text

NAME = "policies"
HELP = "list the policy switches and their variants"
DESCRIPTION = (
    "List every switch of a scenario's [policy] table: its default (or the switch its default "
    "follows), the specification section, and each variant with the kernel it models and what it "
    "does. --format json prints the registry as JSON."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--format", choices=("text", "json"), default="text", help="output format (default: text)"
    )


def main(args: argparse.Namespace) -> int:
    registry = api.policies()
    if args.format == "json":
        sys.stdout.write(json.dumps(registry, indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(policies_text(registry))
    return 0
