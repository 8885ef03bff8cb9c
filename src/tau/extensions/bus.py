"""``tau.events``: a message bus the extensions of one session share, and supervised background tasks.

Extensions talk to each other by channel name: ``tau.events.emit("plan:changed", data)`` calls
every ``tau.events.on("plan:changed", handler)``. A handler's failure is reported with its
extension's name and never reaches the emitter. Coroutine handlers and ``tau.spawn(...)`` run as
tasks the runner supervises: their errors are reported, and they are cancelled when the session
goes away (a task of a replaced session that touches its stale ``ctx`` just ends).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar, overload

from tau.extensions.errors import StaleContextError
from tau.extensions.registry import Extension

__all__ = ["BusHandler", "EventBus", "ExtensionEvents", "TaskSupervisor"]

BusHandler = Callable[[Any], Any]
H = TypeVar("H", bound=BusHandler)


class ErrorSink(Protocol):
    def __call__(
        self, extension: Extension, event: str, error: BaseException, handler: Any = None
    ) -> None: ...


class TaskSupervisor:
    """Runs extensions' background coroutines; reports failures; cancels them all on ``close``."""

    def __init__(self, report: ErrorSink) -> None:
        self._report = report
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, extension: Extension, awaitable: Awaitable[Any], what: str = "task") -> asyncio.Task[Any]:
        async def run() -> Any:
            return await awaitable

        task = asyncio.ensure_future(run())
        self._tasks.add(task)

        def done(finished: asyncio.Task[Any]) -> None:
            self._tasks.discard(finished)
            if finished.cancelled():
                return
            error = finished.exception()
            if error is not None and not isinstance(error, StaleContextError):
                self._report(extension, what, error)

        task.add_done_callback(done)
        return task

    @property
    def pending(self) -> int:
        return len(self._tasks)

    async def wait(self) -> None:
        """Wait for every task started so far (and those they start) to finish."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        self._tasks.clear()


class EventBus:
    """Channels shared by the extensions of one runner."""

    def __init__(self, report: ErrorSink, supervisor: TaskSupervisor) -> None:
        self._report = report
        self._supervisor = supervisor
        self._handlers: dict[str, list[tuple[Extension, BusHandler]]] = {}

    def subscribe(self, extension: Extension, channel: str, handler: BusHandler) -> Callable[[], None]:
        entry = (extension, handler)
        self._handlers.setdefault(channel, []).append(entry)

        def unsubscribe() -> None:
            entries = self._handlers.get(channel, [])
            if entry in entries:
                entries.remove(entry)

        return unsubscribe

    def emit(self, channel: str, data: Any = None) -> None:
        """Call every handler of ``channel`` now; coroutine handlers continue as supervised tasks."""
        for extension, handler in list(self._handlers.get(channel, ())):
            try:
                outcome = handler(data)
            except StaleContextError:
                continue
            except Exception as error:
                self._report(extension, f"bus:{channel}", error, handler)
                continue
            if inspect.isawaitable(outcome):
                self._supervisor.spawn(extension, outcome, f"bus:{channel}")

    def clear(self) -> None:
        self._handlers.clear()


class ExtensionEvents:
    """What one extension sees as ``tau.events``."""

    __slots__ = ("_bus", "_check", "_extension")

    def __init__(self, bus: EventBus, extension: Extension, check: Callable[[], None]) -> None:
        self._bus = bus
        self._extension = extension
        self._check = check

    def emit(self, channel: str, data: Any = None) -> None:
        self._check()
        self._bus.emit(channel, data)

    @overload
    def on(self, channel: str) -> Callable[[H], H]: ...

    @overload
    def on(self, channel: str, handler: H) -> Callable[[], None]: ...

    def on(self, channel: str, handler: H | None = None) -> Callable[[H], H] | Callable[[], None]:
        """Subscribe ``handler(data)``; returns a function that unsubscribes it. Without a handler,
        a decorator."""
        self._check()
        if handler is None:

            def decorate(fn: H) -> H:
                self._bus.subscribe(self._extension, channel, fn)
                return fn

            return decorate
        return self._bus.subscribe(self._extension, channel, handler)
