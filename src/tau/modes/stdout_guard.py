"""Standard output kept for a mode's own output (print, JSON events, RPC, ACP), as pi keeps it.

Taken before anything else loads, since an extension may print as it is imported: the mode gets a
copy of the stdout descriptor, and descriptor 1 and ``sys.stdout`` become stderr. A stray
``print``, and a child process that inherits descriptor 1 (an extension's ``subprocess.run`` or
``os.system``), then write to stderr instead of into the answer or between protocol lines. The
copy is not inheritable, so no child gets it. ``restore`` puts stdout back for a caller that goes on
after the mode (tests, a program running tau in its own process).
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import TextIO

__all__ = ["StdoutGuard"]


class StdoutGuard:
    """Stdout taken for a mode: ``descriptor`` (ACP's) or ``stream``; stderr everywhere else."""

    def __init__(self, *, as_descriptor: bool) -> None:
        self._saved_stream = stream = sys.stdout
        self._saved_fd: int | None = None
        self.descriptor: int | None = None
        self.stream: TextIO | None = None
        try:
            on_descriptor_1 = stream.fileno() == 1
        except (OSError, ValueError):  # no descriptor (io.UnsupportedOperation is both), or closed
            on_descriptor_1 = False
        if not on_descriptor_1 and not as_descriptor:
            # A caller running tau in its own process swapped in another stream: that stream is
            # the output, and only sys.stdout is redirected.
            sys.stdout = sys.stderr
            self.stream = stream
            return
        stream.flush()
        self._saved_fd = os.dup(1)
        mode_fd = os.dup(self._saved_fd)  # the mode's own, which it may close
        os.dup2(2, 1)
        sys.stdout = sys.stderr
        if as_descriptor:
            self.descriptor = mode_fd
        else:
            # Open until restore(): the mode writes to it for as long as it runs.
            self.stream = open(mode_fd, "w", encoding=stream.encoding, errors=stream.errors)  # noqa: SIM115

    def restore(self) -> None:
        """Stdout (descriptor 1 and ``sys.stdout``) as it was before the guard."""
        if self._saved_fd is not None:
            if self.stream is not None:
                with contextlib.suppress(OSError, ValueError):  # the reader may be gone
                    self.stream.close()
            os.dup2(self._saved_fd, 1)
            os.close(self._saved_fd)
            self._saved_fd = None
        sys.stdout = self._saved_stream
