"""Cancellation token passed by the caller into a stream (pi's ``AbortSignal``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

_T = TypeVar("_T")


class AbortSignal:
    """Set once with ``abort()``; listeners run at that moment, in registration order.

    Works across event loops and threads that share it: listeners are plain callables, and
    ``wait()`` binds to the loop of its caller.
    """

    __slots__ = ("_aborted", "_listeners", "reason")

    def __init__(self) -> None:
        self._aborted = False
        self.reason: str | None = None
        self._listeners: list[Callable[[], None]] = []

    @property
    def aborted(self) -> bool:
        return self._aborted

    def abort(self, reason: str | None = None) -> None:
        if self._aborted:
            return
        self._aborted = True
        self.reason = reason
        listeners, self._listeners = self._listeners, []
        for listener in listeners:
            listener()

    def add_listener(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Run ``listener`` on abort (at once if already aborted); returns a remover."""
        if self._aborted:
            listener()
            return lambda: None
        self._listeners.append(listener)

        def remove() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return remove

    async def wait(self) -> None:
        import asyncio

        if self._aborted:
            return
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()

        def resolve() -> None:
            if not future.done():
                future.set_result(None)

        def wake() -> None:
            loop.call_soon_threadsafe(resolve)

        remove = self.add_listener(wake)
        try:
            await future
        finally:
            remove()


class AbortController:
    """Owns a signal; ``abort()`` sets it. Mirrors the web API for readers coming from pi."""

    __slots__ = ("signal",)

    def __init__(self) -> None:
        self.signal = AbortSignal()

    def abort(self, reason: str | None = None) -> None:
        self.signal.abort(reason)


class Aborted(Exception):
    """Raised by :func:`until_aborted` when the signal aborted before the work was done."""


async def until_aborted(work: Awaitable[_T], signal: AbortSignal | None) -> _T:
    """``work``'s result, or :class:`Aborted` (the work cancelled) once ``signal`` aborts first."""
    import asyncio  # as in ``wait``: importing this module does not load asyncio

    if signal is None:
        return await work
    if signal.aborted:
        if asyncio.iscoroutine(work):
            work.close()
        raise Aborted
    task = asyncio.ensure_future(work)
    waiter = asyncio.ensure_future(signal.wait())
    try:
        await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiter.cancel()
    if task.done():
        return task.result()
    task.cancel()
    raise Aborted
