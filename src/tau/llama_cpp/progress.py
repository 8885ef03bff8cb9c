"""A router operation that takes a while (a model load), shown as pi's ``/llama`` shows it: a
progress view with the model and the router's latest word, where Escape asks "Stop loading?" and,
when the user agrees, tells the router to stop (``cancel``) and abandons the wait."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from tau.extensions.ui import ComponentUI, ExtensionUI

__all__ = ["Stopped", "run_with_progress"]

T = TypeVar("T")


class Stopped:
    """The user stopped the operation (and the router was told)."""


class _ProgressView:
    """The component: title, model, message, and the key that stops."""

    def __init__(
        self, tui: Any, keybindings: Any, done: Callable[[Any], None], state: dict[str, str]
    ) -> None:
        self.tui, self.keybindings, self.done, self.state = tui, keybindings, done, state

    def render(self, width: int) -> list[str]:
        return [
            f"\x1b[1m{self.state['title']}\x1b[0m",
            self.state["model"],
            "",
            f"\x1b[2m{self.state['message']}\x1b[0m",
            "\x1b[2mesc stop\x1b[0m",
        ]

    def handle_input(self, key: str) -> None:
        if key == "escape" or self.keybindings.matches(key, "tui.select.cancel"):
            self.done(True)


async def run_with_progress(
    ui: ExtensionUI,
    *,
    title: str,
    model: str,
    stop_title: str,
    run: Callable[[Callable[[str], None]], Awaitable[T]],
    cancel: Callable[[], Awaitable[None]],
) -> T | Stopped:
    """``run(update)``'s result, with the progress on screen until it settles; ``Stopped`` when the
    user pressed Escape and confirmed ``stop_title`` (then ``cancel()`` has been awaited and ``run``
    abandoned). ``run``'s error is raised as it came."""
    state = {"title": title, "model": model, "message": "Starting…"}
    views: list[Any] = []

    def update(message: str) -> None:
        state["message"] = message
        for view in views:
            view.tui.request_render()

    task = asyncio.ensure_future(run(update))
    try:
        while not task.done():
            if not await _shown_until_stop(ui, task, state, views):
                break
            if not await ui.confirm(stop_title, model) or task.done():
                continue
            try:
                await cancel()
            finally:
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
            return Stopped()
        return await task
    finally:
        if not task.done():
            task.cancel()


async def _shown_until_stop(
    ui: ExtensionUI, task: asyncio.Future[Any], state: dict[str, str], views: list[Any]
) -> bool:
    """The progress view until ``task`` settles (``False``) or the user asks to stop (``True``)."""
    if not isinstance(ui, ComponentUI):  # no view to draw it in: wait for the router
        await asyncio.wait([task])
        return False

    def factory(tui: Any, _theme: Any, keybindings: Any, done: Callable[[Any], None]) -> _ProgressView:
        view = _ProgressView(tui, keybindings, done, state)
        views[:] = [view]
        task.add_done_callback(lambda _: done(False))
        return view

    answer = await ui.custom(factory)
    views.clear()
    return answer is not False and not task.done()
