"""A response stream handed out at once for a request that needs async work before it is sent.

``deferred_stream(model, signal, open_request)`` returns an ``AssistantMessageEventStream`` now;
a task awaits ``open_request()`` (resolving a credential, routing a virtual model) and then passes
on every event of the stream it returns. A failure of ``open_request`` (an exception, an abort)
ends the stream with one ``error`` event naming ``model``: callers get errors as values, never
raised. Once the request is open, an abort is the opened stream's to report (it has the signal).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from tau.ai.abort import AbortSignal
from tau.ai.events import AssistantMessageEventStream
from tau.ai.stream_writer import error_event
from tau.ai.types import Model

__all__ = ["deferred_stream"]


def deferred_stream(
    model: Model,
    signal: AbortSignal | None,
    open_request: Callable[[], Awaitable[AssistantMessageEventStream]],
) -> AssistantMessageEventStream:
    """The events of the stream ``open_request()`` gives, in a stream returned before it runs.
    Must be called with a running event loop."""
    outer = AssistantMessageEventStream()
    opened = False

    async def main() -> None:
        nonlocal opened
        try:
            if signal is not None and signal.aborted:
                raise asyncio.CancelledError
            inner = await open_request()
        except asyncio.CancelledError:
            outer.push(error_event(model, "Request was aborted", reason="aborted"))
            return
        except Exception as error:
            outer.push(error_event(model, str(error) or type(error).__name__))
            return
        opened = True
        async for event in inner:  # a consumer that goes away cancels this, which abandons inner
            outer.push(event)
        if not outer.closed:
            outer.end(await inner.result())

    loop = asyncio.get_running_loop()
    task = loop.create_task(main())

    def abort() -> None:  # the signal may be aborted from another thread
        if not opened and not task.done():
            loop.call_soon_threadsafe(task.cancel)

    def abandon() -> None:
        if not task.done():
            task.cancel()

    remove_listener = signal.add_listener(abort) if signal is not None else None
    if remove_listener is not None:
        task.add_done_callback(lambda _: remove_listener())
    outer.set_abandon_handler(abandon)
    outer.attach_producer(task)
    return outer
