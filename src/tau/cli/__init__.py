"""The ``tau`` command: argument parsing and mode selection."""

from __future__ import annotations


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``tau`` console script (and ``python -m tau``): runs the command with
    ``argv`` (the process's own arguments when None) and returns its exit code."""
    import gc

    # Importing the command's modules makes long-lived objects only: the collector's passes over
    # them are a tenth of that import (``run`` keeps it off for the rest of start-up likewise).
    # The collector stays off up to ``run`` (which keeps it off for the rest of start-up): switched
    # on in between, its first pass would walk everything the import made (~1.8 M instructions of a `tau -p`).
    collecting = gc.isenabled()
    gc.disable()
    try:
        from tau.cli.main import run

        if argv is None:  # the command itself, not a program calling it: mark the process as pi does
            from tau.runtime.shell_environment import mark_process

            mark_process()
    finally:
        if collecting:
            gc.enable()
    return run(argv, process_ends=argv is None)
