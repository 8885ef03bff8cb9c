"""The ``tau`` command: argument parsing and mode selection."""

from __future__ import annotations


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``tau`` console script (and ``python -m tau``): runs the command with
    ``argv`` (the process's own arguments when None) and returns its exit code."""
    import gc

    # Importing the command's modules makes long-lived objects only: the collector's passes over
    # them are a tenth of that import (``run`` keeps it off for the rest of start-up likewise).
    collecting = gc.isenabled()
    gc.disable()
    try:
        from tau.cli.main import run
    finally:
        if collecting:
            gc.enable()
    if argv is None:  # the command itself, not a program calling it: mark the process as pi does
        from tau.runtime.shell_environment import mark_process

        mark_process()
    return run(argv, process_ends=argv is None)
