"""pi 1.6's "Download model" search: Hugging Face searched as you type (half a second after the
last key, each query's answer kept for the rest of the session), the answer's repositories
narrowed at once by what is typed while the next one is on its way, arrows to pick one, Enter
to take it (or what is typed, when it is an exact ``owner/repository[:quant]``), Esc to go back."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from typing import Any

from tau.llama_cpp.hugging_face import HubModel

__all__ = ["EXACT", "HubSearchView", "compact_count"]

EXACT = re.compile(r"[^/\s]+/[^:\s]+(?::[^\s:]+)?")
"""A repository named exactly (``owner/repository``, ``:quant`` optional): taken as typed."""
_VISIBLE = 10
_DELAY = 0.5
_TOO_SHORT = "Type at least 2 characters"
_SEARCHING = "Searching Hugging Face…"
_NONE = "No GGUF models found"
_DIM, _BOLD, _RESET = "\x1b[2m", "\x1b[1m", "\x1b[0m"


def compact_count(value: int) -> str:
    """``1234567`` → ``1.2M`` (as pi shows download counts)."""
    if value >= 1_000_000:
        return f"{value / 1_000_000:.{0 if value >= 10_000_000 else 1}f}M"
    if value >= 1_000:
        return f"{value / 1_000:.{0 if value >= 100_000 else 1}f}k"
    return str(value)


def _matches(query: str, text: str) -> bool:
    """Every word of ``query`` in ``text``, its letters in order (not necessarily together)."""
    text = text.lower()
    for word in query.lower().split():
        position = 0
        for letter in word:
            position = text.find(letter, position) + 1
            if position == 0:
                return False
    return True


class HubSearchView:
    """The component ``ui.custom`` shows; ``done(repository)`` answers, ``done(None)`` on Esc.
    ``search(query)`` asks the hub; ``cache`` holds the answers by lower-cased query."""

    def __init__(
        self,
        tui: Any,
        keybindings: Any,
        done: Callable[[str | None], None],
        search: Callable[[str], Awaitable[list[HubModel]]],
        cache: dict[str, list[HubModel]],
    ) -> None:
        self.tui, self.keybindings, self._done = tui, keybindings, done
        self._search, self._cache = search, cache
        self.query = ""
        """What is typed."""
        self._searched = ""
        """What is typed, trimmed: the query the list is for."""
        self.results: list[HubModel] = []
        self.shown: list[HubModel] = []
        self.index = 0
        self.status = _TOO_SHORT
        self._touched = False  # the user moved the highlight since the query last changed
        self._pending: asyncio.Task[None] | None = None
        self._closed = False

    # Drawing.

    def render(self, width: int) -> list[str]:
        lines = [f"{_BOLD}Download model{_RESET}", f"{_DIM}Model name or owner/repository[:quant]{_RESET}"]
        lines += [f"> {self.query}", ""]
        start = max(0, min(self.index - _VISIBLE // 2, len(self.shown) - _VISIBLE))
        end = min(start + _VISIBLE, len(self.shown))
        for position in range(start, end):
            model = self.shown[position]
            marker = "→ " if position == self.index else "  "
            lines.append(f"{marker}{model.id}  {compact_count(model.downloads)} downloads")
        if start > 0 or end < len(self.shown):
            lines.append(f"{_DIM}  ({self.index + 1}/{len(self.shown)}){_RESET}")
        if not self.shown or self.status == _SEARCHING:
            lines.append(f"{_DIM}  {self.status}{_RESET}")
        lines += ["", f"{_DIM}enter select · esc back{_RESET}"]
        return lines

    # Keys.

    def handle_input(self, key: str) -> None:
        matches = self.keybindings.matches
        if matches(key, "tui.select.up") or matches(key, "tui.select.down"):
            if self.shown:
                step = -1 if matches(key, "tui.select.up") else 1
                self.index = (self.index + step) % len(self.shown)
                self._touched = True
        elif matches(key, "tui.select.confirm"):
            chosen = self.query if EXACT.fullmatch(self.query) else None
            if chosen is None and self.shown:
                chosen = self.shown[self.index].id
            if chosen:
                self._close(chosen)
            return
        elif key == "escape" or matches(key, "tui.select.cancel"):
            self._close(None)
            return
        elif key == "backspace":
            self._typed(self.query[:-1])
        elif len(key) == 1 and key.isprintable():
            self._typed(self.query + key)
        self.tui.request_render()

    def _typed(self, text: str) -> None:
        self.query = text
        if text.strip() != self._searched:
            self._touched = False
            self._schedule(text.strip())

    # Searching.

    def _schedule(self, query: str) -> None:
        self._searched = query
        if self._pending is not None:
            self._pending.cancel()
            self._pending = None
        if len(query) < 2:
            self.status = _TOO_SHORT
            self._filter()
            return
        cached = self._cache.get(query.lower())
        if cached is not None:
            self.results = cached
            self.status = _NONE if not cached else ""
            self._filter()
            return
        self.status = _SEARCHING
        self._filter()
        self._pending = asyncio.ensure_future(self._run(query))

    async def _run(self, query: str) -> None:
        await asyncio.sleep(_DELAY)
        try:
            results = await self._search(query)
        except asyncio.CancelledError:
            raise
        except Exception as error:  # the hub's answer as the list's one line, as pi's
            if self._closed or query != self._searched:
                return
            self.results, self.status = [], str(error) or type(error).__name__
            self._filter()
            self.tui.request_render()
            return
        self._cache[query.lower()] = results
        if self._closed or query != self._searched:
            return
        kept = self.shown[self.index].id if self._touched and self.shown else None
        self.results, self.index = results, 0
        self.status = _NONE if not results else ""
        self._filter(kept)
        self.tui.request_render()

    def _filter(self, keep: str | None = None) -> None:
        query = self._searched
        self.shown = [m for m in self.results if _matches(query, m.id)] if query else list(self.results)
        ids = [m.id for m in self.shown]
        if keep in ids:
            self.index = ids.index(keep)
        else:
            self.index = min(self.index, max(0, len(self.shown) - 1))

    def _close(self, answer: str | None) -> None:
        if self._closed:
            return
        self._closed = True
        if self._pending is not None:
            self._pending.cancel()
        self._done(answer)
