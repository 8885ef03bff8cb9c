"""Start-up: parse the command line, then hand over to a mode."""

from __future__ import annotations

import sys

from tau import __version__
from tau.cli.args import parse_args
from tau.cli.help import HELP


def run(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.version:
        print(f"tau {__version__}")
        return 0
    for error in args.errors:
        print(f"tau: {error}", file=sys.stderr)
    if args.errors:
        return 1
    if args.help:
        print(HELP, end="")
        return 0
    print(HELP, end="")
    return 0
