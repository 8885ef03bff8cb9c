"""The extension UI of an ACP session: dialogs become ``session/request_permission``.

A ``confirm`` (the permission gate) offers allow once, allow always and reject; "always" answers
the same question (title and message) yes for the rest of the session without asking. A ``select``
offers its options (the first as allow once, an "Allow ... for this session" as allow always, the
rest as reject). Free text (``input``,
``editor``) cannot be asked over ACP and gets no answer; display calls (status, widgets) are
dropped, a ``notify`` goes to stderr. The permission names the tool call that is running.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

from tau.ai.abort import AbortSignal
from tau.ai.types import JsonObject
from tau.extensions.ui import NeutralUI, NotifyLevel

__all__ = ["AcpExtensionUI"]

_ALLOW_ONCE, _ALLOW_ALWAYS, _REJECT = "allow-once", "allow-always", "reject"


def _option(option_id: str, name: str, kind: str) -> JsonObject:
    return {"optionId": option_id, "name": name, "kind": kind}


def _select_kind(index: int, option: str) -> str:
    """The first option allows once; a later "Allow ... session/always" allows always (the sandbox's
    escalation question); the others reject."""
    if index == 0:
        return "allow_once"
    lowered = option.lower()
    if lowered.startswith("allow") and ("session" in lowered or "always" in lowered):
        return "allow_always"
    return "reject_once"


class AcpExtensionUI(NeutralUI):
    """Dialogs ask the client; what ACP cannot show keeps ``NeutralUI``'s answers."""

    def __init__(
        self, conn: Any, session_id: str, current_call: Callable[[], tuple[str, str] | None]
    ) -> None:
        self._conn = conn
        self._session_id = session_id
        self._current_call = current_call
        self._always: set[tuple[str, str]] = set()

    def _tool_call(self, title: str) -> JsonObject:
        call = self._current_call()
        if call is None:
            return {"toolCallId": f"dialog-{id(self)}", "title": title}
        call_id, call_title = call
        return {"toolCallId": call_id, "title": call_title}

    async def _ask(self, title: str, options: list[JsonObject], signal: AbortSignal | None) -> str | None:
        if signal is not None and signal.aborted:
            return None
        params = {"sessionId": self._session_id, "toolCall": self._tool_call(title), "options": options}
        try:
            response = await self._conn.request("session/request_permission", params)
        except Exception:  # the client is gone or refused the request: no answer
            return None
        outcome = response.get("outcome") if isinstance(response, dict) else None
        if isinstance(outcome, dict) and outcome.get("outcome") == "selected":
            option_id = outcome.get("optionId")
            return option_id if isinstance(option_id, str) else None
        return None

    async def confirm(
        self, title: str, message: str, *, timeout: float | None = None, signal: AbortSignal | None = None
    ) -> bool:
        key = (title, message)
        if key in self._always:
            return True
        options = [
            _option(_ALLOW_ONCE, "Allow once", "allow_once"),
            _option(_ALLOW_ALWAYS, "Always allow", "allow_always"),
            _option(_REJECT, "Reject", "reject_once"),
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
        choices = [_option(str(i), option, _select_kind(i, option)) for i, option in enumerate(options)]
        answer = await self._ask(title, choices, signal)
        if answer is None or not answer.isdigit() or int(answer) >= len(options):
            return None
        return options[int(answer)]

    def notify(self, message: str, level: NotifyLevel | None = None) -> None:
        print(f"tau: {level or 'info'}: {message}", file=sys.stderr)
