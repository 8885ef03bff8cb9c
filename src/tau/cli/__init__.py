"""The ``tau`` command: argument parsing and mode selection."""

from __future__ import annotations


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``tau`` console script (and ``python -m tau``).

    Run with the process's own arguments (``argv`` None), it ends the process itself when the
    command is done (see ``_end_process``); given ``argv``, it returns the exit code."""
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
    code = run(argv, process_ends=True)
    if argv is None:
        _end_process(code)
    return code


def _end_process(code: int) -> None:
    """End the process now, as a normal exit would but without its teardown: the exit handlers
    run (caches saved, spill files and child process groups cleaned up, terminal restored) and
    the standard streams are flushed; freeing every module and object one by one (a twentieth of a
    ``tau -p``, a sixth of a ``tau --version``) is left to the operating system. Returns instead
    while a non-daemon thread is still running: a normal exit waits for it."""
    import atexit
    import os
    import sys
    import threading

    run_exit_handlers = getattr(atexit, "_run_exitfuncs", None)  # CPython's; elsewhere: a normal exit
    main_thread = threading.main_thread()
    if run_exit_handlers is None or any(
        thread is not main_thread and not thread.daemon for thread in threading.enumerate()
    ):
        return
    run_exit_handlers()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            code = code or 120  # as Python's own exit when flushing stdout fails
    os._exit(code)
