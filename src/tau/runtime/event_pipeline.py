"""The session's event pipeline: agent events in, queue bookkeeping, listeners, persistence.

The agent hands every event to ``enqueue``, which only appends it to a queue, so a slow listener
(a terminal, a pipe) never holds up the agent. One worker task at a time processes the queue in
order: per event it updates the display queues, hands it to the extensions (``extension_step``),
notifies the session's listeners, persists finished messages, and at ``agent_end`` runs the
run-end checks. ``drain()`` waits until everything queued
so far is processed; the session calls it before ``prompt()`` returns.

A listener that raises does not stop the pipeline: the error is kept and ``raise_errors()`` re-raises
the first one once the run is over, so the session file stays consistent either way.
"""

from __future__ import annotations

import asyncio
import inspect
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any, TypeAlias

import msgspec

from tau.agent.events import AgentEnd, MessageEnd, MessageStart, MessageUpdate, TurnStart
from tau.agent.messages import AgentMessage
from tau.ai.types import AssistantMessage, TextContent, ToolResultMessage, UserMessage
from tau.runtime.events import AgentSessionEvent, QueueUpdate
from tau.session.errors import SessionWriteError
from tau.session.manager import SessionManager
from tau.session.messages import CustomMessage, SystemMessage

__all__ = ["DisplayQueues", "EventPipeline", "MessageEndCheck", "RunEndCheck", "SessionListener"]

SessionListener: TypeAlias = Callable[[AgentSessionEvent], "Awaitable[None] | None"]
RunEndCheck: TypeAlias = Callable[[AgentEnd], Awaitable[bool | None]]
MessageEndCheck: TypeAlias = Callable[[MessageEnd], Awaitable[None]]
ExtensionStep: TypeAlias = Callable[[AgentSessionEvent], "Awaitable[None] | None"]
"""The extensions' turn at an event: ``None`` when there is nothing to wait for (no extension
handles it), so that a streamed delta costs no coroutine."""


class _ForListenersOnly:
    """An event for the session's listeners alone: no extensions, no persistence, no checks."""

    __slots__ = ("event",)

    def __init__(self, event: AgentSessionEvent) -> None:
        self.event = event


class DisplayQueues:
    """The texts of queued steering and follow-up messages, as hosts show them."""

    def __init__(self) -> None:
        self.steering: list[str] = []
        self.follow_up: list[str] = []

    def __len__(self) -> int:
        return len(self.steering) + len(self.follow_up)

    def snapshot(self) -> QueueUpdate:
        return QueueUpdate(list(self.steering), list(self.follow_up))

    def remove(self, text: str) -> bool:
        """Forget the first queued copy of ``text`` (steering first); whether there was one."""
        for queue in (self.steering, self.follow_up):
            if text in queue:
                queue.remove(text)
                return True
        return False

    def clear(self) -> tuple[list[str], list[str]]:
        taken = (self.steering, self.follow_up)
        self.steering, self.follow_up = [], []
        return taken


class EventPipeline:
    """Processes one session's events in order, off the agent's path."""

    def __init__(self, session_manager: SessionManager, queues: DisplayQueues) -> None:
        self._session = session_manager
        self._queues = queues
        self._listeners: list[SessionListener] = []
        self._update_listeners: list[SessionListener] = []  # those of them that take message_update
        self._pending: deque[AgentSessionEvent | _ForListenersOnly] = deque()
        self._worker: asyncio.Task[None] | None = None
        self._errors: list[BaseException] = []
        self._queued = 0  # events ever queued, and processed: catch_up() compares the two
        self._processed = 0
        self._catching_up: list[tuple[int, asyncio.Future[None], Callable[[], None] | None]] = []
        self.last_assistant: AssistantMessage | None = None
        self.run_end_checks: list[RunEndCheck] = []
        """Awaited in order at ``agent_end``, after listeners: auto-retry (spec 30 §1.4) then
        auto-compaction (§1.5) register here. A check returning True has taken the run's end in
        hand (a retry is under way) and the later checks are skipped."""
        self.message_end_checks: list[MessageEndCheck] = []
        """Awaited in order at ``message_end``, after listeners and persistence."""
        self.will_retry: Callable[[AgentEnd], bool] | None = None
        """Says, before anyone sees an ``agent_end``, whether a retry follows (its ``will_retry``)."""
        self.extension_step: ExtensionStep | None = None
        """Awaited with each event before the listeners see it (a ``message_end`` handler may
        replace the message in place, so listeners and the session file get the replacement)."""
        self.extensions_see_updates: Callable[[], bool] = lambda: True
        """Whether the extension step has anyone to give a ``message_update`` to. With neither that
        nor a listener that takes updates, a streamed delta is not queued at all (a 10 MB reply in
        16-character deltas is 650k of them)."""
        self._system_message: SystemMessage | None = None
        self._system_shown = False
        self.on_write_error: Callable[[SessionWriteError], None] | None = None
        """Called when a message cannot be saved (the session stops its run there: going on would
        only pile up results that are lost); the error is then re-raised by ``raise_errors``."""

    # -- listeners -----------------------------------------------------------------------------

    def subscribe(self, listener: SessionListener, *, updates: bool = True) -> Callable[[], None]:
        """Call ``listener`` with each event; ``updates=False``: not with ``message_update`` ones
        (a listener that ignores them)."""
        self._listeners.append(listener)
        if updates:
            self._update_listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)
            if updates and listener in self._update_listeners:
                self._update_listeners.remove(listener)

        return unsubscribe

    def clear_listeners(self) -> None:
        self._listeners.clear()
        self._update_listeners.clear()

    # -- queueing ------------------------------------------------------------------------------

    def enqueue(self, event: AgentSessionEvent) -> None:
        """Queue ``event`` for processing; never blocks and never raises."""
        if type(event) is MessageUpdate and not self._update_listeners and not self.extensions_see_updates():
            return  # nobody would see it
        self._pending.append(event)
        self._queued += 1
        self._start_worker()

    def announce_system_message(self, message: SystemMessage) -> None:
        """``message`` was recorded for the run about to start: its listeners see it as pi 1.6
        shows a run's system message, ``message_start`` / ``message_end`` after the first
        ``turn_start`` and first in ``agent_end``'s messages (it is persisted already)."""
        self._system_message, self._system_shown = message, False

    def enqueue_for_listeners(self, event: AgentSessionEvent) -> None:
        """Queue ``event`` for the session's listeners only (the caller has persisted it)."""
        self._pending.append(_ForListenersOnly(event))
        self._queued += 1
        self._start_worker()

    def _start_worker(self) -> None:
        if self._worker is not None and not self._worker.done():
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # called outside the event loop: the next enqueue or drain() starts the worker
        self._worker = loop.create_task(self._work())

    async def drain(self) -> None:
        """Wait until every event queued so far (and any they cause) has been processed.

        Called from a listener (inside the worker) it returns at once rather than wait for itself."""
        self._start_worker()
        while self._worker is not None and not self._worker.done():
            if asyncio.current_task() is self._worker:
                return
            await asyncio.shield(self._worker)

    async def catch_up(self, then: Callable[[], None] | None = None) -> None:
        """Wait until the events queued so far have reached the listeners, not for later ones
        (a reply to a command goes out after the events the command caused, as in pi).

        ``then`` runs at that very point, before the next event reaches a listener: a reply written
        there cannot come after a later event, as one written once the caller wakes up could.
        Called from a listener (inside the worker) it returns (after ``then``) at once."""
        if self._processed >= self._queued or asyncio.current_task() is self._worker:
            if then is not None:
                then()
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._catching_up.append((self._queued, waiter, then))
        self._start_worker()
        await waiter

    def _release_caught_up(self) -> None:
        still: list[tuple[int, asyncio.Future[None], Callable[[], None] | None]] = []
        for target, waiter, then in self._catching_up:
            if self._processed < target:
                still.append((target, waiter, then))
            elif not waiter.done():  # a cancelled caller's ``then`` does not run
                try:
                    if then is not None:
                        then()
                except Exception as exc:
                    waiter.set_exception(exc)
                else:
                    waiter.set_result(None)
        self._catching_up = still

    def raise_errors(self) -> None:
        """Re-raise the first listener or persistence error since the last call."""
        if self._errors:
            first = self._errors[0]
            self._errors.clear()
            raise first

    async def _work(self) -> None:
        while self._pending:
            event = self._pending.popleft()
            try:
                await self._process(event)
            except Exception as exc:
                self._errors.append(exc)
            finally:
                self._processed += 1
                if self._catching_up:
                    self._release_caught_up()

    # -- one event -----------------------------------------------------------------------------

    async def _process(self, event: AgentSessionEvent | _ForListenersOnly) -> None:
        if type(event) is MessageUpdate:
            # One per streamed delta: the steps below that apply to an update, without a coroutine
            # for each (a 10 MB reply in 16-character deltas is 650k of them).
            step = self.extension_step
            if step is not None:
                try:
                    outcome = step(event)
                    if outcome is not None:
                        await outcome
                except Exception as exc:
                    self._errors.append(exc)
            for listener in list(self._update_listeners):
                try:
                    outcome = listener(event)
                    if outcome is not None and inspect.isawaitable(outcome):
                        await outcome
                except Exception as exc:
                    self._errors.append(exc)
            return
        if isinstance(event, _ForListenersOnly):
            await self._notify(event.event)
            return
        starts_queued_input = (
            isinstance(event, MessageStart)
            and isinstance(event.message, UserMessage)
            and self._queues.remove(_text_of(event.message))
        )
        if starts_queued_input:
            await self._notify(self._queues.snapshot())
        if isinstance(event, AgentEnd) and self.will_retry is not None:
            event.will_retry = self.will_retry(event)
        if self.extension_step is not None:
            try:
                outcome = self.extension_step(event)
                if outcome is not None:
                    await outcome
            except Exception as exc:  # the event must still reach the listeners and the file
                self._errors.append(exc)
        await self._notify_with_system_message(event)
        if isinstance(event, MessageEnd):
            self._persist(event.message)
            for message_check in list(self.message_end_checks):
                await message_check(event)
        elif isinstance(event, AgentEnd):
            for check in list(self.run_end_checks):
                if await check(event):
                    break

    async def notify_now(self, event: AgentSessionEvent) -> None:
        """Hand ``event`` to the listeners at once. Only for checks, which run inside the worker:
        the event then follows the one being processed, ahead of anything queued behind it."""
        await self._notify(event)

    async def _notify_with_system_message(self, event: AgentSessionEvent) -> None:
        system = self._system_message
        if system is None:
            await self._notify(event)
        elif isinstance(event, AgentEnd):
            self._system_message = None
            shown = self._system_shown
            await self._notify(
                msgspec.structs.replace(event, messages=[system, *event.messages]) if shown else event
            )
        else:
            await self._notify(event)
            if isinstance(event, TurnStart) and not self._system_shown:
                self._system_shown = True
                await self._notify(MessageStart(system))
                await self._notify(MessageEnd(system))

    async def _notify(self, event: AgentSessionEvent) -> None:
        listeners = self._update_listeners if type(event) is MessageUpdate else self._listeners
        for listener in list(listeners):
            try:
                outcome: Any = listener(event)
                if outcome is not None and inspect.isawaitable(outcome):
                    await outcome
            except Exception as exc:
                self._errors.append(exc)

    def _persist(self, message: AgentMessage) -> None:
        try:
            if isinstance(message, (UserMessage, AssistantMessage, ToolResultMessage)):
                self._session.append_message(message)
                if isinstance(message, AssistantMessage):
                    self.last_assistant = message
            elif isinstance(message, CustomMessage):
                self._session.append_custom_message_entry(
                    message.custom_type, message.content, message.display, message.details
                )
        except SessionWriteError as exc:
            if self.on_write_error is not None:
                self.on_write_error(exc)
            raise


def _text_of(message: UserMessage) -> str:
    if isinstance(message.content, str):
        return message.content
    return next((b.text for b in message.content if isinstance(b, TextContent)), "")
