"""Command-line entry point: argument parsing and mode selection."""

from __future__ import annotations

import argparse
import sys

from tau import __version__


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tau",
        description="tau: a minimal, hackable coding agent for the terminal.",
    )
    parser.add_argument("-v", "--version", action="version", version=f"tau {__version__}")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    parser.parse_args(sys.argv[1:] if argv is None else argv)
    parser.print_help()
    return 0
