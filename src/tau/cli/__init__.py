"""The ``tau`` command: argument parsing and mode selection."""

from __future__ import annotations


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``tau`` console script."""
    from tau.cli.main import run

    return run(argv)
