"""The extension UI over RPC: dialogs become ``extension_ui_request`` lines answered by the client.

A dialog writes ``{"type":"extension_ui_request","id":<uuid>,"method":"confirm",…}`` and waits for
``{"type":"extension_ui_response","id":…,"confirmed"|"value"|"cancelled":…}`` on stdin. A dialog with
a ``timeout`` (seconds here, milliseconds on the wire), an abort signal that fires, or the end of
input answers with its "no answer" value (``None`` / ``False``) by itself. Display calls are written
and not answered; what RPC cannot show (editor contents, tool expansion) answers with a neutral value.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from tau.ai.abort import AbortSignal
from tau.extensions.ui import NeutralUI, NotifyLevel, ThemeResult, WidgetPlacement

__all__ = ["RpcExtensionUI"]

JsonDict = dict[str, Any]


class RpcExtensionUI(NeutralUI):
    """An ``ExtensionUI`` that asks the RPC client; ``resolve`` feeds it the client's answers. What
    pi's RPC mode has no message for (the working message, editor contents, tool expansion) keeps
    ``NeutralUI``'s answers."""

    def __init__(self, write: Callable[[JsonDict], None]) -> None:
        self._write = write
        self._pending: dict[str, asyncio.Future[JsonDict | None]] = {}
        self._closed = False

    def resolve(self, response: JsonDict) -> None:
        """Hand an ``extension_ui_response`` to the dialog waiting for it (unknown ids are ignored)."""
        future = self._pending.pop(str(response.get("id")), None)
        if future is not None and not future.done():
            future.set_result(response)

    def close(self) -> None:
        """No more answers will come (end of input): waiting and future dialogs get no answer."""
        self._closed = True
        for future in self._pending.values():
            if not future.done():
                future.set_result(None)
        self._pending.clear()

    async def _ask(
        self, method: str, fields: JsonDict, timeout: float | None, signal: AbortSignal | None
    ) -> JsonDict | None:
        if self._closed or (signal is not None and signal.aborted):
            return None
        request_id = str(uuid.uuid4())
        request: JsonDict = {"type": "extension_ui_request", "id": request_id, "method": method, **fields}
        if timeout is not None:
            request["timeout"] = round(timeout * 1000)
        future: asyncio.Future[JsonDict | None] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        remove_listener: Callable[[], None] | None = None
        if signal is not None:
            remove_listener = signal.add_listener(lambda: self.resolve({"id": request_id}))
        self._write(request)
        try:
            return await asyncio.wait_for(future, timeout)
        except TimeoutError:
            return None
        finally:
            self._pending.pop(request_id, None)
            if remove_listener is not None:
                remove_listener()

    async def select(
        self,
        title: str,
        options: Sequence[str],
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
    ) -> str | None:
        answer = await self._ask("select", {"title": title, "options": list(options)}, timeout, signal)
        return _text_value(answer)

    async def confirm(
        self,
        title: str,
        message: str,
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
    ) -> bool:
        answer = await self._ask("confirm", {"title": title, "message": message}, timeout, signal)
        return bool(answer and not answer.get("cancelled") and answer.get("confirmed") is True)

    async def input(
        self,
        title: str,
        placeholder: str | None = None,
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
    ) -> str | None:
        fields: JsonDict = {"title": title}
        if placeholder is not None:
            fields["placeholder"] = placeholder
        return _text_value(await self._ask("input", fields, timeout, signal))

    async def editor(self, title: str, prefill: str = "") -> str | None:
        fields: JsonDict = {"title": title}
        if prefill:
            fields["prefill"] = prefill
        return _text_value(await self._ask("editor", fields, None, None))

    def notify(self, message: str, level: NotifyLevel | None = None) -> None:
        # As pi 1.6: the type only when the extension gave one (the client's default is "info").
        self._tell(
            "notify", {"message": message} if level is None else {"message": message, "notifyType": level}
        )

    def set_status(self, key: str, text: str | None) -> None:
        fields: JsonDict = {"statusKey": key}
        if text is not None:
            fields["statusText"] = text
        self._tell("setStatus", fields)

    def set_widget(
        self, key: str, lines: Sequence[str] | None, *, placement: WidgetPlacement | None = None
    ) -> None:
        # As pi 1.6: the placement only when the extension gave one (the client's default is
        # "aboveEditor"), the lines only when there are any.
        fields: JsonDict = {"widgetKey": key}
        if lines is not None:
            fields["widgetLines"] = [str(line) for line in lines]
        if placement is not None:
            fields["widgetPlacement"] = placement
        self._tell("setWidget", fields)

    def set_title(self, title: str) -> None:
        self._tell("setTitle", {"title": title})

    def set_editor_text(self, text: str) -> None:
        self._tell("set_editor_text", {"text": text})

    def paste_to_editor(self, text: str) -> None:
        self.set_editor_text(text)

    def set_theme(self, name: str) -> ThemeResult:
        return {"success": False, "error": "Theme switching not supported in RPC mode"}  # pi 1.6's answer

    def _tell(self, method: str, fields: JsonDict) -> None:
        if not self._closed:
            self._write({"type": "extension_ui_request", "id": str(uuid.uuid4()), "method": method, **fields})


def _text_value(answer: JsonDict | None) -> str | None:
    if answer is None or answer.get("cancelled"):
        return None
    value = answer.get("value")
    return value if isinstance(value, str) else None
