"""pi 1.6's program status (the Program Status Protocol, OSC 7501): the terminal UI tells terminals
and agent dashboards whether tau is working, waiting for the user, done, or failed.

The status is sent only once the terminal answered the protocol's query (asked with the start-up
key queries); ``TAU_PROGRAM_STATUS`` (or pi's ``PI_PROGRAM_STATUS``) ``1`` sends it without asking,
``0`` never. Messages are the session name, a dialog's title or an error's first line, never a
prompt or a reply. On exit (and while suspended) the status is cleared.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable

__all__ = ["QUERY", "ProgramStatus", "format_status"]

QUERY = "\x1b]7501;?\x1b\\"
"""The feature query; a terminal that speaks the protocol answers with the same body."""
_APP = re.compile(r"[A-Za-z0-9_.+-]{1,32}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]+")
_MAX_MESSAGE_BYTES = 2048


def format_status(
    state: str, message: str | None = None, *, kind: str | None = None, app: str = "tau"
) -> str:
    """One report: ``ESC ] 7501 ; state=...[:app=...][:kind=...][:msg=<base64>] ESC \\``."""
    pairs = [f"state={state}"]
    if _APP.fullmatch(app):
        pairs.append(f"app={app}")
    if state == "blocked" and kind:
        pairs.append(f"kind={kind}")
    text = _CONTROL.sub(" ", message or "").strip().encode()[:_MAX_MESSAGE_BYTES]
    text = text.decode("utf-8", "ignore").encode()  # not a character cut in half
    if text:
        pairs.append("msg=" + base64.b64encode(text).decode("ascii"))
    return f"\x1b]7501;{':'.join(pairs)}\x1b\\"


def _first_line(text: str | None) -> str:
    return (text or "").split("\n", 1)[0].strip() or "Error"


class ProgramStatus:
    """The reports of one terminal UI: ``working`` while a run or a compaction goes on, ``blocked``
    while an extension dialog or a login waits, then ``done``, ``error`` or ``idle`` (started,
    or the run was stopped), as pi 1.6's reporter decides them."""

    def __init__(
        self, write: Callable[[str], None], override: str | None, session_name: Callable[[], str | None]
    ):
        self._write = write
        self._override = override
        self._session_name = session_name
        self.supported = override == "1"
        self._pending = override not in ("0", "1")
        self._run_active = False
        self._compacting = False
        self._run_result: tuple[str, str | None] = ("done", None)
        self._resting: tuple[str, str | None] = ("idle", None)
        self._blocked: dict[str, tuple[str, str]] = {}
        self._last: str | None = None

    def query(self) -> str:
        """What to send with the start-up queries: the protocol's query, unless it is settled."""
        return QUERY if self._pending else ""

    def answered(self) -> None:
        """The terminal answered the query: it shows reports, so send the current one."""
        if self._pending:
            self._pending = False
            self.supported = True
            self._last = None
            self.report()

    def stop(self) -> None:
        """tau leaves the terminal (exit, Ctrl+Z): clear the status; ask again on the next start."""
        if self.supported and self._last is not None:
            self._write(format_status("clear"))
        self.supported = self._override == "1"
        self._pending = self._override not in ("0", "1")
        self._last = None

    # -- what happens --------------------------------------------------------------------------

    def run_started(self) -> None:
        self._run_active = True
        self._run_result = ("done", None)
        self.report()

    def reply_ended(self, stop_reason: str, error_message: str | None) -> None:
        """The latest reply decides the run's outcome (a retried error is replaced by its retry)."""
        if stop_reason == "error":
            self._run_result = ("error", _first_line(error_message))
        elif stop_reason == "aborted":
            self._run_result = ("idle", None)
        else:
            self._run_result = ("done", None)
        self.report()

    def compaction_started(self) -> None:
        self._compacting = True
        self.report()

    def compaction_ended(self, *, aborted: bool, error_message: str | None, manual: bool) -> None:
        self._compacting = False
        if self._run_active:
            if aborted:
                self._run_result = ("idle", None)
            elif error_message:
                self._run_result = ("error", _first_line(error_message))
        elif aborted:
            self._resting = ("idle", None)
        elif manual:
            self._resting = ("error", _first_line(error_message)) if error_message else ("done", None)
        self.report()

    def run_ended(self) -> None:
        self._run_active = False
        self._resting = self._run_result
        self.report()

    def blocked(self, source: str, kind: str | None = None, message: str = "") -> None:
        """``source`` waits for the user (``kind``: ``question``, ``permission``, ``auth``), or no
        longer does (``kind`` ``None``)."""
        self._blocked.pop(source, None)
        if kind is not None:
            self._blocked[source] = (kind, message)
        self.report()

    # -- reporting -----------------------------------------------------------------------------

    def current(self) -> str:
        if self._blocked:
            kind, title = list(self._blocked.values())[-1]
            return format_status("blocked", title, kind=kind)
        if self._compacting:
            return format_status("working", "Compacting context")
        state, message = ("working", None) if self._run_active else self._resting
        if state in ("working", "done"):
            message = self._session_name()
        return format_status(state, message)

    def report(self) -> None:
        """Send the current status when the terminal shows it and it changed."""
        if not self.supported:
            return
        status = self.current()
        if status != self._last:
            self._last = status
            self._write(status)
