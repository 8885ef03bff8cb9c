"""Standard output kept for a mode's own output (print, JSON events, RPC, ACP), as pi keeps it.

Taken before anything else loads, since an extension may print as it is imported: the mode gets a
copy of the stdout descriptor, and descriptor 1 and ``sys.stdout`` become stderr. A stray
``print``, and a child process that inherits descriptor 1 (an extension's ``subprocess.run`` or
``os.system``), then write to stderr instead of into the answer or between protocol lines. The
copy is not inheritable, so no child gets it.
"""

from __future__ import annotations

import os
import sys
from typing import TextIO

__all__ = ["take_stdout", "take_stdout_descriptor"]


def take_stdout_descriptor() -> int:
    """The descriptor for the mode's output (stdout's); stdout is stderr from here on."""
    sys.stdout.flush()
    fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return fd


def take_stdout() -> TextIO:
    """A text stream for the mode's output (encoded as stdout was); stdout is stderr from here on.

    When ``sys.stdout`` is not the process's descriptor 1 (a caller running tau in its own process
    swapped in another stream), that stream is the output and only ``sys.stdout`` is redirected."""
    stream = sys.stdout
    try:
        on_descriptor_1 = stream.fileno() == 1
    except (OSError, ValueError):  # no descriptor (io.UnsupportedOperation is both), or closed
        on_descriptor_1 = False
    if not on_descriptor_1:
        sys.stdout = sys.stderr
        return stream
    encoding, errors = stream.encoding, stream.errors
    return open(take_stdout_descriptor(), "w", encoding=encoding, errors=errors)
