"""``ctx.ui`` as extensions see it when there is a UI: its dialogs report ``ui_prompt_start`` and
``ui_prompt_end``, so a status integration can tell "waiting for the user" from "working".

Nested or overlapping dialogs make one span: the first to open starts it, the last to close ends
it (both events name the outer dialog). The events are delivered in order but not awaited: a
dialog opens and closes without waiting for their handlers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal, TypeAlias, TypeVar

from tau.ai.abort import AbortSignal
from tau.extensions.ui import ExtensionUI, NotifyLevel, WidgetPlacement

__all__ = ["PromptKind", "PromptTrackingUI"]

PromptKind: TypeAlias = Literal["select", "confirm", "input", "editor", "custom"]
SpanListener = Callable[[Literal["start", "end"], PromptKind, "str | None"], "Awaitable[None] | None"]
T = TypeVar("T")


class PromptTrackingUI:
    """An ``ExtensionUI`` that tells ``listener`` when a dialog span starts and ends."""

    def __init__(self, ui: ExtensionUI, listener: SpanListener) -> None:
        self.inner = ui
        self._listener = listener
        self._depth = 0
        self._outer: tuple[PromptKind, str | None] | None = None
        self._delivery: asyncio.Task[None] | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)  # what a particular UI offers beyond ExtensionUI

    async def _span(self, kind: PromptKind, title: str | None, dialog: Awaitable[T]) -> T:
        if self._depth == 0:
            self._outer = (kind, title)
            self._deliver("start", kind, title)
        self._depth += 1
        try:
            return await dialog
        finally:
            self._depth -= 1
            if self._depth == 0:
                outer_kind, outer_title = self._outer or (kind, title)
                self._outer = None
                self._deliver("end", outer_kind, outer_title)

    def _deliver(self, phase: Literal["start", "end"], kind: PromptKind, title: str | None) -> None:
        previous = self._delivery

        async def deliver() -> None:
            if previous is not None:
                await asyncio.wait([previous])
            outcome = self._listener(phase, kind, title)
            if outcome is not None:
                await outcome

        self._delivery = asyncio.ensure_future(deliver())

    async def select(
        self,
        title: str,
        options: Sequence[str],
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
    ) -> str | None:
        return await self._span(
            "select", title, self.inner.select(title, options, timeout=timeout, signal=signal)
        )

    async def confirm(
        self,
        title: str,
        message: str,
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
    ) -> bool:
        return await self._span(
            "confirm", title, self.inner.confirm(title, message, timeout=timeout, signal=signal)
        )

    async def input(
        self,
        title: str,
        placeholder: str | None = None,
        *,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
    ) -> str | None:
        return await self._span(
            "input", title, self.inner.input(title, placeholder, timeout=timeout, signal=signal)
        )

    async def editor(self, title: str, prefill: str = "") -> str | None:
        return await self._span("editor", title, self.inner.editor(title, prefill))

    async def custom(self, factory: Callable[..., Any], **options: Any) -> Any:
        """A component of the extension's own (``ComponentUI``); a UI without one answers ``None``."""
        show = getattr(self.inner, "custom", None)
        if show is None:
            return None
        return await self._span("custom", None, show(factory, **options))

    def notify(self, message: str, level: NotifyLevel | None = None) -> None:
        self.inner.notify(message, level)

    def set_status(self, key: str, text: str | None) -> None:
        self.inner.set_status(key, text)

    def set_working_message(self, text: str | None) -> None:
        self.inner.set_working_message(text)

    def set_widget(
        self, key: str, lines: Sequence[str] | None, *, placement: WidgetPlacement | None = None
    ) -> None:
        self.inner.set_widget(key, lines, placement=placement)

    def set_title(self, title: str) -> None:
        self.inner.set_title(title)

    def set_editor_text(self, text: str) -> None:
        self.inner.set_editor_text(text)

    def get_editor_text(self) -> str:
        return self.inner.get_editor_text()

    def paste_to_editor(self, text: str) -> None:
        self.inner.paste_to_editor(text)

    def get_tools_expanded(self) -> bool:
        return self.inner.get_tools_expanded()

    def set_tools_expanded(self, expanded: bool) -> None:
        self.inner.set_tools_expanded(expanded)
