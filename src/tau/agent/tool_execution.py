"""Run the tool calls of one assistant message and turn every outcome into a tool result.

Each call goes through: preflight (find the tool, prepare and validate the arguments, the
``before_tool_call`` hook), execution, then finalisation (the ``after_tool_call`` hook). Nothing
escapes as an exception: an unknown tool, invalid arguments, a block, a raising hook or tool all
become error results the model sees next turn. Only a raising event listener ends the run.

In a parallel batch every call is preflighted first (in order), then the prepared calls run
concurrently; ``tool_execution_end`` events come in completion order, result messages in call order.
"""

from __future__ import annotations

import asyncio
import copy
import time
from collections.abc import Awaitable, Callable
from contextvars import ContextVar

from msgspec import Struct, structs

from tau.agent._awaitable import resolve
from tau.agent.config import AgentLoopConfig
from tau.agent.context import AgentContext
from tau.agent.events import (
    AgentEvent,
    MessageEnd,
    MessageStart,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
)
from tau.agent.hooks import AfterToolCallContext, BeforeToolCallContext
from tau.agent.tool import AgentTool, AgentToolResult, text_result
from tau.ai.abort import AbortSignal
from tau.ai.types import AssistantMessage, JsonObject, TextContent, ToolCall, ToolResultMessage, Usage

Emit = Callable[[AgentEvent], Awaitable[None]]


class ToolBatch(Struct):
    """The result messages in call order; ``terminate`` when every result asked to stop."""

    messages: list[ToolResultMessage]
    terminate: bool


class _PreparedCall(Struct):
    call: ToolCall
    tool: AgentTool
    args: JsonObject


class _ToolOutcome(Struct):
    call: ToolCall
    result: AgentToolResult
    is_error: bool
    duration_ms: int | None = None  # how long execute() took; None: the tool did not run
    nested_calls: JsonObject | None = None  # the record of the calls the tool made (NestedToolCaller)


def error_result(message: str) -> AgentToolResult:
    """The result of a call that failed: the message as text, empty details."""
    return text_result(message, details={})


def _exception_text(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


class _ToolRun:
    """One batch: what every call needs to know, and the three steps applied to a call."""

    def __init__(
        self,
        context: AgentContext,
        assistant: AssistantMessage,
        config: AgentLoopConfig,
        emit: Emit,
        signal: AbortSignal | None,
        parent: str | None = None,
    ) -> None:
        self.context = context
        self.assistant = assistant
        self.config = config
        self.emit = emit
        self.signal = signal
        self.parent = parent
        """The calling tool's id when this run serves calls a tool makes while it runs."""

    async def prepare(self, call: ToolCall) -> _PreparedCall | _ToolOutcome:
        tool = self.context.find_tool(call.name)
        if tool is None:
            return _ToolOutcome(call, error_result(f"Tool {call.name} not found"), is_error=True)
        return await self.prepare_with(call, tool)

    async def prepare_with(self, call: ToolCall, tool: AgentTool) -> _PreparedCall | _ToolOutcome:
        if call.arguments_error is not None:
            text = f'Invalid arguments for tool "{call.name}": {call.arguments_error}'
            return _ToolOutcome(call, error_result(text), is_error=True)
        try:
            args = call.arguments
            if tool.prepare_arguments is not None:
                # A copy, so the raw arguments (already in tool_execution_start) stay as sent.
                args = tool.prepare_arguments(copy.deepcopy(args))
            from tau.ai.validation import validate_tool_arguments  # a run without tool calls never needs it

            args = validate_tool_arguments(tool, args)
            hook = self.config.before_tool_call
            if hook is not None:
                context = BeforeToolCallContext(self.assistant, call, args, self.context, self.parent)
                decision = await resolve(hook(context, self.signal))
                if decision is not None and decision.block:
                    reason = decision.reason or f"Tool call {call.name} was blocked"
                    return _ToolOutcome(call, error_result(reason), is_error=True)
        except Exception as exc:
            return _ToolOutcome(call, error_result(_exception_text(exc)), is_error=True)
        return _PreparedCall(call, tool, args)

    async def execute(
        self, prepared: _PreparedCall, also_update: Callable[[AgentToolResult], None] | None = None
    ) -> _ToolOutcome:
        call = prepared.call
        updates = _UpdateEmitter(self.emit)

        def on_update(partial: AgentToolResult) -> None:
            updates.push(ToolExecutionUpdate(call.id, call.name, call.arguments, partial, self.parent))
            if also_update is not None:
                also_update(partial)

        timeout = self.config.tool_timeout_s
        outcome: _ToolOutcome
        started = time.monotonic()
        caller = NestedToolCaller(self, call.id, _DEPTH.get())
        token = _CALLER.set(caller)
        try:
            async with asyncio.timeout(timeout) as deadline:
                result = await prepared.tool.execute(call.id, prepared.args, self.signal, on_update)
            outcome = _ToolOutcome(call, result, is_error=result.is_error)
        except TimeoutError as exc:
            text = (
                f"Tool {call.name} timed out after {timeout:g} s"
                if deadline.expired()
                else _exception_text(exc)
            )
            outcome = _ToolOutcome(call, error_result(text), is_error=True)
        except Exception as exc:
            outcome = _ToolOutcome(call, error_result(_exception_text(exc)), is_error=True)
        finally:
            _CALLER.reset(token)
        if caller.usage is not None:
            # pi: what the nested calls cost, at every depth, counts as the calling tool's.
            own = outcome.result.usage
            outcome.result = structs.replace(
                outcome.result, usage=caller.usage if own is None else own.plus(caller.usage)
            )
        outcome.duration_ms = round((time.monotonic() - started) * 1000)
        outcome.nested_calls = caller.record.snapshot()
        await updates.close()
        return outcome

    async def finalize(self, prepared: _PreparedCall, outcome: _ToolOutcome) -> _ToolOutcome:
        hook = self.config.after_tool_call
        if hook is None:
            return outcome
        context = AfterToolCallContext(
            self.assistant,
            prepared.call,
            prepared.args,
            outcome.result,
            outcome.is_error,
            self.context,
            self.parent,
        )
        try:
            change = await resolve(hook(context, self.signal))
        except Exception as exc:
            return _ToolOutcome(
                outcome.call,
                error_result(_exception_text(exc)),
                True,
                outcome.duration_ms,
                outcome.nested_calls,
            )
        if change is None:
            return outcome
        result = outcome.result
        amended = AgentToolResult(
            content=result.content if change.content is None else change.content,
            details=result.details if change.details is None else change.details,
            terminate=result.terminate if change.terminate is None else change.terminate,
            usage=result.usage,
        )
        is_error = outcome.is_error if change.is_error is None else change.is_error
        return _ToolOutcome(outcome.call, amended, is_error, outcome.duration_ms, outcome.nested_calls)

    async def run_prepared(self, prepared: _PreparedCall) -> _ToolOutcome:
        outcome = await self.finalize(prepared, await self.execute(prepared))
        await self.emit_end(outcome)
        return outcome

    async def emit_start(self, call: ToolCall) -> None:
        await self.emit(ToolExecutionStart(call.id, call.name, call.arguments, self.parent))

    async def emit_end(self, outcome: _ToolOutcome) -> None:
        await _emit_end(self.emit, outcome, self.parent)

    async def emit_result_message(self, outcome: _ToolOutcome) -> ToolResultMessage:
        return await _emit_result_message(self.emit, outcome)


async def execute_tool_calls(
    context: AgentContext,
    assistant: AssistantMessage,
    calls: list[ToolCall],
    config: AgentLoopConfig,
    emit: Emit,
    signal: AbortSignal | None,
) -> ToolBatch:
    """Run ``calls`` (sequentially or concurrently, see module doc) and emit their events."""
    run = _ToolRun(context, assistant, config, emit, signal)
    if _must_run_sequentially(context, calls, config):
        outcomes, messages = await _run_sequential(run, calls)
    else:
        outcomes, messages = await _run_parallel(run, calls)
    terminate = bool(outcomes) and all(o.result.terminate for o in outcomes)
    return ToolBatch(messages, terminate)


async def refuse_truncated_tool_calls(calls: list[ToolCall], emit: Emit) -> ToolBatch:
    """Answer every call of a reply cut off by the output limit with an error, running none.

    The arguments of such calls may be cut short yet still parse (the streaming parser closes what
    is open), so a ``write`` would save half a file; the model is asked to send the call again.
    """
    messages: list[ToolResultMessage] = []
    for call in calls:
        await emit(ToolExecutionStart(call.id, call.name, call.arguments))
        text = (
            f"Tool call {call.name} was not run: the reply was cut off by the output token limit, "
            "so its arguments may be truncated. Send the call again with complete arguments "
            "(split a large write into smaller pieces)."
        )
        outcome = _ToolOutcome(call, error_result(text), is_error=True)
        await _emit_end(emit, outcome)
        messages.append(await _emit_result_message(emit, outcome))
    return ToolBatch(messages, terminate=False)


async def _emit_end(emit: Emit, outcome: _ToolOutcome, parent: str | None = None) -> None:
    await emit(
        ToolExecutionEnd(
            outcome.call.id,
            outcome.call.name,
            outcome.result,
            outcome.is_error,
            duration_ms=outcome.duration_ms,
            parent_tool_call_id=parent,
        )
    )


async def _emit_result_message(emit: Emit, outcome: _ToolOutcome) -> ToolResultMessage:
    message = ToolResultMessage(
        tool_call_id=outcome.call.id,
        tool_name=outcome.call.name,
        content=list(outcome.result.content),
        details=outcome.result.details,
        is_error=outcome.is_error,
        nested_calls=outcome.nested_calls,
        duration_ms=outcome.duration_ms,
        usage=outcome.result.usage,
    )
    await emit(MessageStart(message))
    await emit(MessageEnd(message))
    return message


def _must_run_sequentially(context: AgentContext, calls: list[ToolCall], config: AgentLoopConfig) -> bool:
    if config.tool_execution == "sequential":
        return True
    for call in calls:
        tool = context.find_tool(call.name)
        if tool is not None and tool.execution_mode == "sequential":
            return True
    return False


async def _run_sequential(
    run: _ToolRun, calls: list[ToolCall]
) -> tuple[list[_ToolOutcome], list[ToolResultMessage]]:
    outcomes: list[_ToolOutcome] = []
    messages: list[ToolResultMessage] = []
    for call in calls:
        await run.emit_start(call)
        prepared = await run.prepare(call)
        if isinstance(prepared, _ToolOutcome):
            outcome = prepared
            await run.emit_end(outcome)
        else:
            outcome = await run.run_prepared(prepared)
        outcomes.append(outcome)
        messages.append(await run.emit_result_message(outcome))
    return outcomes, messages


async def _run_parallel(
    run: _ToolRun, calls: list[ToolCall]
) -> tuple[list[_ToolOutcome], list[ToolResultMessage]]:
    slots: list[_ToolOutcome | None] = [None] * len(calls)
    ready: list[tuple[int, _PreparedCall]] = []
    for index, call in enumerate(calls):
        await run.emit_start(call)
        prepared = await run.prepare(call)
        if isinstance(prepared, _ToolOutcome):
            slots[index] = prepared
            await run.emit_end(prepared)
        else:
            ready.append((index, prepared))

    async def run_one(index: int, prepared: _PreparedCall) -> None:
        slots[index] = await run.run_prepared(prepared)

    tasks = [asyncio.ensure_future(run_one(index, prepared)) for index, prepared in ready]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    outcomes = [outcome for outcome in slots if outcome is not None]
    messages = [await run.emit_result_message(outcome) for outcome in outcomes]
    return outcomes, messages


class _UpdateEmitter:
    """Emits a tool's progress updates in order without blocking the tool; ``close()`` waits for
    them all, so none can follow ``tool_execution_end``. Updates after ``close()`` are dropped."""

    def __init__(self, emit: Emit) -> None:
        self._emit = emit
        self._tail: asyncio.Future[None] | None = None
        self._closed = False

    def push(self, event: ToolExecutionUpdate) -> None:
        if not self._closed:
            self._tail = asyncio.ensure_future(self._emit_after(self._tail, event))

    async def _emit_after(self, previous: asyncio.Future[None] | None, event: ToolExecutionUpdate) -> None:
        if previous is not None:
            await previous
        await self._emit(event)

    async def close(self) -> None:
        self._closed = True
        if self._tail is not None:
            await self._tail


class NestedToolResult(Struct):
    """What a call made by a running tool came to: the result after the hooks, and whether it failed."""

    tool_call_id: str
    result: AgentToolResult
    is_error: bool


class NestedToolCaller:
    """Runs tool calls on behalf of the tool call ``parent_id`` while that call runs (a codemode
    script's ``tools.<name>()``). Each call gets the id ``<parent id>/<n>``, goes through argument
    validation and the ``before_tool_call``/``after_tool_call`` hooks like a model's call (the hooks
    see ``parent_tool_call_id``), and emits ``tool_execution_*`` events carrying
    ``parent_tool_call_id``. Nested calls add nothing to the transcript; their results reach only the
    caller. A failure is a result with ``is_error``, never an exception."""

    def __init__(self, run: _ToolRun, parent_id: str, record: NestedCallRecord | None = None) -> None:
        self._run = _ToolRun(run.context, run.assistant, run.config, run.emit, run.signal, parent_id)
        self.parent_id = parent_id
        self._next = 0
        self.usage: Usage | None = None
        """What the calls made so far cost (their results' ``usage``, which holds their own nested
        calls' in turn)."""
        self.record = record if record is not None else NestedCallRecord()
        """The calls made under the model's call, at every depth (shared with deeper callers)."""

    async def relay(self, event: ToolExecutionStart | ToolExecutionUpdate | ToolExecutionEnd) -> None:
        """Emit a tool event of a run made on this call's behalf outside this loop (a sub-agent's),
        in the caller's event stream: its ids become ``<parent id>/<id>``, unique under this call,
        and a call the run made at its top level names this call as its parent."""
        parent = self.parent_id
        nested_parent = event.parent_tool_call_id
        event = structs.replace(
            event,
            tool_call_id=f"{parent}/{event.tool_call_id}",
            parent_tool_call_id=parent if nested_parent is None else f"{parent}/{nested_parent}",
        )
        await self._run.emit(event)

    @property
    def tools(self) -> list[AgentTool]:
        """The tools calls may reach: those declared to the model (but ``model-only`` ones), then
        those only tools call (``codemode``/``deferred`` exposure, or hidden by a loadout)."""
        declared = [tool for tool in self._run.context.tools if tool.callable_by_tools]
        more = self._run.config.get_callable_tools
        if more is None:
            return declared
        names = {tool.name for tool in declared}
        return declared + [tool for tool in more() if tool.name not in names and tool.callable_by_tools]

    async def call(
        self,
        name: str,
        args: JsonObject,
        *,
        tool: AgentTool | None = None,
        signal: AbortSignal | None = None,
        on_update: Callable[[AgentToolResult], None] | None = None,
    ) -> NestedToolResult:
        """Run ``name`` with ``args``: ``tool`` when given (one the model is not declared, such as an
        MCP tool only scripts reach), else the declared tool of that name."""
        self._next += 1
        call = ToolCall(id=f"{self.parent_id}/{self._next}", name=name, arguments=args)
        run = self._run
        if signal is not None and signal is not run.signal:
            run = _ToolRun(run.context, run.assistant, run.config, run.emit, signal, self.parent_id)
        await run.emit_start(call)
        entry = self.record.start(call)
        started = time.monotonic()
        if tool is None:
            tool = next((t for t in self.tools if t.name == name), None)
        if tool is None:
            prepared: _PreparedCall | _ToolOutcome = _ToolOutcome(
                call, error_result(f"Tool {name} not found"), is_error=True
            )
        else:
            prepared = await run.prepare_with(call, tool)
        if isinstance(prepared, _ToolOutcome):
            outcome = prepared
        else:
            token = _DEPTH.set(self.record)
            try:
                outcome = await run.finalize(prepared, await run.execute(prepared, on_update))
            finally:
                _DEPTH.reset(token)
        self.record.finish(entry, outcome, time.monotonic() - started)
        if outcome.result.usage is not None:
            self.usage = outcome.result.usage if self.usage is None else self.usage.plus(outcome.result.usage)
        await run.emit_end(outcome)
        return NestedToolResult(call.id, outcome.result, outcome.is_error)


_CALLER: ContextVar[NestedToolCaller | None] = ContextVar("tau_nested_tool_caller", default=None)
_DEPTH: ContextVar[NestedCallRecord | None] = ContextVar("tau_nested_call_record", default=None)
"""Set while a nested call runs: a call it makes in turn goes into the same record."""


class NestedCallRecord:
    """pi's bounded ``nestedCalls`` record of one model-issued call: at most 256 calls, arguments
    kept up to 8 KiB per call and 32 KiB in all (larger ones only counted), errors cut to 500
    characters; ``complete`` is false once anything was left out or a call did not finish."""

    MAX_CALLS = 256
    MAX_ARGUMENT_BYTES = 8 * 1024
    MAX_ARGUMENT_BYTES_TOTAL = 32 * 1024
    MAX_ERROR_CHARS = 500

    def __init__(self) -> None:
        self.calls: list[JsonObject] = []
        self.complete = True
        self._argument_bytes = 0

    def start(self, call: ToolCall) -> JsonObject | None:
        if len(self.calls) >= self.MAX_CALLS:
            self.complete = False
            return None
        import json

        entry: JsonObject = {"id": call.id, "name": call.name, "status": "unfinished"}
        encoded = json.dumps(call.arguments, ensure_ascii=False, separators=(",", ":"))
        size = len(encoded.encode())
        if size > self.MAX_ARGUMENT_BYTES or self._argument_bytes + size > self.MAX_ARGUMENT_BYTES_TOTAL:
            entry["argumentsBytes"] = size
            self.complete = False
        else:
            entry["arguments"] = json.loads(encoded)
            self._argument_bytes += size
        self.calls.append(entry)
        return entry

    def finish(self, entry: JsonObject | None, outcome: _ToolOutcome, seconds: float) -> None:
        if entry is None:
            return
        entry["status"] = "error" if outcome.is_error else "ok"
        entry["durationMs"] = round(seconds * 1000)
        if outcome.is_error:
            text = "\n".join(b.text for b in outcome.result.content if isinstance(b, TextContent))
            if text:
                entry["error"] = text[: self.MAX_ERROR_CHARS]

    def snapshot(self) -> JsonObject | None:
        """A copy for the result message, ``None`` when no call was made."""
        if not self.calls and self.complete:
            return None
        calls = [dict(c) for c in self.calls]
        return {"calls": calls, "complete": self.complete and all(c["status"] != "unfinished" for c in calls)}


def nested_tool_caller() -> NestedToolCaller | None:
    """The caller for calls the running tool makes (``None`` outside a tool's ``execute``). Read it
    at the start of ``execute``, on the event loop: a thread of the tool's own does not see it."""
    return _CALLER.get()
