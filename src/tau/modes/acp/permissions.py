"""The extension UI of an ACP session: dialogs become ``session/request_permission``.

A ``confirm`` (the permission gate) offers allow once, allow always and reject; "always" answers
the same question (title and message) yes for the rest of the session without asking. A ``select``
offers its options (the first as allow, the rest as further choices). Free text (``input``,
``editor``) cannot be asked over ACP and gets no answer; display calls (status, widgets) are
dropped, a ``notify`` goes to stderr. The permission names the tool call that is running.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

from acp.schema import AllowedOutcome, PermissionOption, ToolCallUpdate

from tau.ai.abort import AbortSignal
from tau.extensions.ui import NeutralUI, NotifyLevel

__all__ = ["AcpExtensionUI"]

_ALLOW_ONCE, _ALLOW_ALWAYS, _REJECT = "allow-once", "allow-always", "reject"


class AcpExtensionUI(NeutralUI):
    """Dialogs ask the client; what ACP cannot show keeps ``NeutralUI``'s answers."""

    def __init__(
        self, conn: Any, session_id: str, current_call: Callable[[], tuple[str, str] | None]
    ) -> None:
        self._conn = conn
        self._session_id = session_id
        self._current_call = current_call
        self._always: set[tuple[str, str]] = set()

    def _tool_call(self, title: str) -> ToolCallUpdate:
        call = self._current_call()
        if call is None:
            return ToolCallUpdate(tool_call_id=f"dialog-{id(self)}", title=title)
        call_id, call_title = call
        return ToolCallUpdate(tool_call_id=call_id, title=call_title)

    async def _ask(
        self, title: str, options: list[PermissionOption], signal: AbortSignal | None
    ) -> str | None:
        if signal is not None and signal.aborted:
            return None
        try:
            response = await self._conn.request_permission(
                session_id=self._session_id, tool_call=self._tool_call(title), options=options
            )
        except Exception:  # the client is gone or refused the request: no answer
            return None
        outcome = response.outcome
        return outcome.option_id if isinstance(outcome, AllowedOutcome) else None

    async def confirm(
        self, title: str, message: str, *, timeout: float | None = None, signal: AbortSignal | None = None
    ) -> bool:
        key = (title, message)
        if key in self._always:
            return True
        options = [
            PermissionOption(option_id=_ALLOW_ONCE, name="Allow once", kind="allow_once"),
            PermissionOption(option_id=_ALLOW_ALWAYS, name="Always allow", kind="allow_always"),
            PermissionOption(option_id=_REJECT, name="Reject", kind="reject_once"),
        ]
        answer = await self._ask(f"{title}\n{message}", options, signal)
        if answer == _ALLOW_ALWAYS:
            self._always.add(key)
        return answer in (_ALLOW_ONCE, _ALLOW_ALWAYS)

    async def select(
        self,
        title: str,
        options: Sequence[str],
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
    ) -> str | None:
        choices = [
            PermissionOption(option_id=str(i), name=option, kind="allow_once" if i == 0 else "reject_once")
            for i, option in enumerate(options)
        ]
        answer = await self._ask(title, choices, signal)
        if answer is None or not answer.isdigit() or int(answer) >= len(options):
            return None
        return options[int(answer)]

    def notify(self, message: str, level: NotifyLevel = "info") -> None:
        print(f"tau: {level}: {message}", file=sys.stderr)
