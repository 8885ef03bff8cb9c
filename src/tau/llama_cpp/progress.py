"""A router operation that takes a while (a model load or download), shown as pi's ``/llama`` shows
it: a progress view with the model, the router's latest word, a bar when the router says how far
it is and a detail line (the bytes of a download), where Escape asks "Stop loading?" and, when the
user agrees, tells the router to stop (``cancel``) and abandons the wait."""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from tau.extensions.ui import ComponentUI, ExtensionUI
from tau.llama_cpp.events import Progress

__all__ = ["Stopped", "run_with_progress"]

T = TypeVar("T")
_BAR_CELLS = 40


class Stopped:
    """The user stopped the operation (and the router was told)."""


class _ProgressView:
    """The component: title, model, message, the bar and detail when known, and the key that
    stops."""

    def __init__(
        self, tui: Any, keybindings: Any, done: Callable[[Any], None], state: dict[str, Any]
    ) -> None:
        self.tui, self.keybindings, self.done, self.state = tui, keybindings, done, state

    def render(self, width: int) -> list[str]:
        title, message = self.state["title"], self.state["message"]
        lines = [f"\x1b[1m{title}\x1b[0m", self.state["model"], "", f"\x1b[2m{message}\x1b[0m"]
        ratio = self.state.get("ratio")
        if isinstance(ratio, float | int):
            lines.append(_bar(ratio))
        if self.state.get("detail"):
            lines.append(f"\x1b[2m{self.state['detail']}\x1b[0m")
        lines.append("\x1b[2mesc stop\x1b[0m")
        return lines

    def handle_input(self, key: str) -> None:
        if key == "escape" or self.keybindings.matches(key, "tui.select.cancel"):
            self.done(True)


async def run_with_progress(
    ui: ExtensionUI,
    *,
    title: str,
    model: str,
    stop_title: str,
    run: Callable[[Callable[[Progress], None]], Awaitable[T]],
    cancel: Callable[[], Awaitable[None]],
) -> T | Stopped:
    """``run(update)``'s result, with the progress on screen until it settles; ``Stopped`` when the
    user pressed Escape and confirmed ``stop_title`` (then ``cancel()`` has been awaited and ``run``
    abandoned). ``run``'s error is raised as it came."""
    state: dict[str, Any] = {"title": title, "model": model, "message": "Starting…"}
    views: list[Any] = []

    def update(progress: Progress) -> None:
        state.update(progress)
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


def _bar(ratio: float) -> str:
    """``████──── 50%``: forty cells, as pi draws it."""
    filled = math.floor(max(0.0, min(1.0, ratio)) * _BAR_CELLS + 0.5)  # halves up, as JavaScript's
    return f"{'█' * filled}{'─' * (_BAR_CELLS - filled)} {math.floor(ratio * 100 + 0.5)}%"


async def _shown_until_stop(
    ui: ExtensionUI, task: asyncio.Future[Any], state: dict[str, Any], views: list[Any]
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
