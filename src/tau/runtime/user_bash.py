"""Shell commands the user runs himself: ``!cmd`` (the model sees the result) and ``!!cmd`` (it does not).

The command runs through the same pieces as the ``bash`` tool (``LocalBashOperations`` for the
process, ``OutputAccumulator`` for the bounded tail and the spill file), so its output is budgeted
to the standard 2000 lines / 50 KB and the full output of a long run stays on disk.
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Callable

from msgspec import Struct

from tau.ai.abort import AbortController
from tau.session.messages import BashExecutionMessage
from tau.tools import (
    BashOperations,
    CommandAborted,
    CommandTimedOut,
    SpillDirectory,
    sanitize_terminal_output,
)
from tau.tools.sandbox import Sandbox, SandboxUnavailable

__all__ = ["BashResult", "UserBash", "parse_user_bash"]


class BashResult(Struct, frozen=True):
    """How a user command ended. ``exit_code`` is ``None`` when it was cancelled."""

    output: str
    exit_code: int | None
    cancelled: bool = False
    truncated: bool = False
    full_output_path: str | None = None

    def to_message(self, command: str, *, exclude_from_context: bool | None) -> BashExecutionMessage:
        """The session record; ``exclude_from_context`` is written as given (pi 1.6 writes ``false``
        for a ``!command`` typed in the terminal, nothing when an RPC client left it out)."""
        return BashExecutionMessage(
            command=command,
            output=self.output,
            exit_code=self.exit_code,
            cancelled=self.cancelled,
            truncated=self.truncated,
            full_output_path=self.full_output_path,
            exclude_from_context=exclude_from_context,
        )


def parse_user_bash(text: str) -> tuple[str, bool] | None:
    """``(command, exclude_from_context)`` for ``!cmd`` / ``!!cmd``; ``None`` when ``text`` is not
    one (including a bare ``!`` or ``!!``, which are sent as ordinary text)."""
    if not text.startswith("!"):
        return None
    exclude = text.startswith("!!")
    command = text[2 if exclude else 1 :].strip()
    return (command, exclude) if command else None


class UserBash:
    """Runs one user command at a time in ``cwd``; ``abort()`` cancels the running one."""

    def __init__(
        self,
        cwd: str,
        spill: SpillDirectory,
        *,
        shell_path: str | None = None,
        command_prefix: str | None = None,
        operations: BashOperations | None = None,
        sandbox: Sandbox | None = None,
    ) -> None:
        """``sandbox`` fences the commands run with the local shell (not given ``operations``)."""
        self._cwd = cwd
        self._spill = spill
        self._prefix = command_prefix
        self._ops = operations
        self._shell_path = shell_path
        self._sandbox = sandbox
        self._running: AbortController | None = None

    def _operations(self) -> BashOperations:
        # The local shell's module loads with the first command, not with every session.
        if self._ops is None:
            from tau.tools.shell_exec import LocalBashOperations

            self._ops = LocalBashOperations(shell_path=self._shell_path, sandbox=self._sandbox)
        return self._ops

    @property
    def is_running(self) -> bool:
        return self._running is not None

    def abort(self) -> None:
        if self._running is not None:
            self._running.abort()

    async def run(
        self,
        command: str,
        on_chunk: Callable[[str], None] | None = None,
        *,
        operations: BashOperations | None = None,
    ) -> BashResult:
        """Run ``command`` (with ``operations`` instead of the usual ones, e.g. an extension's
        remote shell); ``on_chunk`` receives the output as it arrives, cleaned for display.

        The caller makes sure only one command runs at a time."""
        controller = AbortController()
        self._running = controller
        from tau.tools.output_accumulator import OutputAccumulator

        accumulator = OutputAccumulator(self._spill)
        decoder = codecs.getincrementaldecoder("utf-8")("replace")

        def on_data(data: bytes) -> None:
            accumulator.feed(data)
            if on_chunk is not None and (text := sanitize_terminal_output(decoder.decode(data))):
                on_chunk(text)

        script = f"{self._prefix}\n{command}" if self._prefix else command
        cancelled = False
        try:
            exit_code = await (operations or self._operations()).exec(
                script, self._cwd, on_data=on_data, signal=controller.signal, timeout=None, env=os.environ
            )
        except (CommandAborted, CommandTimedOut):
            exit_code, cancelled = None, True
        except SandboxUnavailable as broken:  # said as the command's output: it did not run
            accumulator.feed(f"Refused: the sandbox is not working ({broken})\n".encode())
            exit_code = 126
        finally:
            accumulator.finish()
            self._running = None
        snapshot = accumulator.snapshot()
        return BashResult(
            output=snapshot.text,
            exit_code=exit_code,
            cancelled=cancelled,
            truncated=snapshot.truncation.truncated,
            full_output_path=snapshot.full_output_path,
        )
