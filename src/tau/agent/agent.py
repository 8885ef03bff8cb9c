"""The stateful agent: a conversation, a configuration, and one run of the loop at a time.

    agent = Agent(model=model, system_prompt="Be brief.", tools=[read_tool])
    agent.subscribe(lambda event, signal: print(event.type))
    await agent.prompt("What is in README.md?")

Listeners are awaited one after another for every event before the loop goes on, so the state
they read is the state the loop acts on. A listener that raises fails the run (hosts that want
isolation wrap their own listeners).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, TypeAlias, cast

from msgspec import Struct

from tau.agent.config import (
    AgentLoopConfig,
    ConvertToLlm,
    GetApiKey,
    NextTurnPreparer,
    PollMessages,
    PromptRecorder,
    RequestPreparer,
    StreamFn,
    ToolExecutionMode,
    TransformContext,
)
from tau.agent.context import AgentContext
from tau.agent.events import AgentEnd, AgentEvent
from tau.agent.hooks import AfterToolCall, BeforeToolCall
from tau.agent.loop import run_agent_loop, run_agent_loop_continue
from tau.agent.messages import AgentMessage, default_convert_to_llm, user_message
from tau.agent.queues import MessageQueue, QueueMode
from tau.agent.state import AgentState
from tau.agent.tool import AgentTool
from tau.ai.abort import AbortController, AbortSignal
from tau.ai.options import HeadersHook, PayloadHook, ResponseHook, SimpleStreamOptions, StreamEventHook
from tau.ai.redaction import redact
from tau.ai.types import AssistantMessage, ImageContent, Model, TextContent, ThinkingLevelOrOff
from tau.errors import TauError

Listener: TypeAlias = Callable[[AgentEvent, AbortSignal], "Awaitable[None] | None"]


class AgentBusyError(TauError, RuntimeError):
    """A run was requested while another one is active."""


class _ActiveRun(Struct):
    controller: AbortController
    idle: asyncio.Event


class Agent:
    """Holds the conversation (``state``) and runs the agent loop over it.

    Every option is also a public attribute; changes apply from the next run, because each run
    works on a snapshot of the state and configuration taken when it starts (``live_tools=True``
    makes the tools the exception).
    """

    def __init__(
        self,
        *,
        system_prompt: str = "",
        model: Model | None = None,
        thinking_level: ThinkingLevelOrOff = "off",
        tools: Iterable[AgentTool] = (),
        messages: Iterable[AgentMessage] = (),
        convert_to_llm: ConvertToLlm = default_convert_to_llm,
        transform_context: TransformContext | None = None,
        stream_fn: StreamFn | None = None,
        get_api_key: GetApiKey | None = None,
        api_key: str | None = None,
        on_payload: PayloadHook | None = None,
        on_response: ResponseHook | None = None,
        on_headers: HeadersHook | None = None,
        on_stream_event: StreamEventHook | None = None,
        before_tool_call: BeforeToolCall | None = None,
        after_tool_call: AfterToolCall | None = None,
        steering_mode: QueueMode = "one-at-a-time",
        follow_up_mode: QueueMode = "one-at-a-time",
        session_id: str | None = None,
        thinking_budgets: dict[str, int] | None = None,
        transport: str = "auto",
        websocket_connect_timeout_ms: int | None = None,
        max_retry_delay_ms: int | None = None,
        tool_execution: ToolExecutionMode = "parallel",
        tool_timeout_s: float | None = None,
        live_tools: bool = False,
    ) -> None:
        self._state = AgentState(
            system_prompt=system_prompt,
            model=model,
            thinking_level=thinking_level,
            tools=tools,
            messages=messages,
        )
        self.convert_to_llm = convert_to_llm
        self.transform_context = transform_context
        self.stream_fn = stream_fn
        self.get_api_key = get_api_key
        self.api_key = api_key
        self.on_payload = on_payload
        self.on_response = on_response
        self.on_headers = on_headers
        self.on_stream_event = on_stream_event
        self.before_tool_call = before_tool_call
        self.after_tool_call = after_tool_call
        self.session_id = session_id
        self.thinking_budgets = thinking_budgets
        self.transport = transport
        self.websocket_connect_timeout_ms = websocket_connect_timeout_ms
        self.max_retry_delay_ms = max_retry_delay_ms
        self.tool_execution: ToolExecutionMode = tool_execution
        self.tool_timeout_s = tool_timeout_s
        self.live_tools = live_tools
        """Whether a run sees ``state.tools`` changed during it from its next model call on (a
        coding session's ``tool_search``); by default a run keeps the tools it started with."""
        self.prompt_ledger: PromptRecorder | None = None
        """Set by a coding session: records prompt and tool changes in the conversation and sends
        them in place (``AgentLoopConfig.prompt_ledger``)."""
        self.request_preparer: RequestPreparer | None = None
        """Set by a coding session: routes a virtual model's requests, compacting first when the
        routed model's window calls for it (``AgentLoopConfig.request_preparer``)."""
        self.next_turn_preparer: NextTurnPreparer | None = None
        """Set by a coding session: compacts between the turns of a run when the conversation
        exceeds the model's threshold (``AgentLoopConfig.prepare_next_turn``)."""
        self._steering = MessageQueue(steering_mode)
        self._follow_up = MessageQueue(follow_up_mode)
        self._listeners: list[Listener] = []
        self._active: _ActiveRun | None = None

    @property
    def state(self) -> AgentState:
        return self._state

    @property
    def steering_mode(self) -> QueueMode:
        return self._steering.mode

    @steering_mode.setter
    def steering_mode(self, mode: QueueMode) -> None:
        self._steering.mode = mode

    @property
    def follow_up_mode(self) -> QueueMode:
        return self._follow_up.mode

    @follow_up_mode.setter
    def follow_up_mode(self, mode: QueueMode) -> None:
        self._follow_up.mode = mode

    # -- listening -----------------------------------------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(event, signal)`` for every event (awaited if it returns an awaitable).

        A listener that takes only the event is called with the event alone. Listeners run one
        after another, in subscription order, before the loop goes on; one that raises fails the run.
        Returns a function that unsubscribes it.
        """
        self._listeners.append(_two_argument_listener(listener))

        registered = self._listeners[-1]

        def unsubscribe() -> None:
            if registered in self._listeners:
                self._listeners.remove(registered)

        return unsubscribe

    # -- running -------------------------------------------------------------------------------

    async def prompt(
        self,
        input: str | AgentMessage | Sequence[AgentMessage],
        images: Sequence[ImageContent] | None = None,
    ) -> None:
        """Run the agent on new input: text (plus optional images), one message, or a list.

        Returns when the run and every ``agent_end`` listener are done. Raises ``AgentBusyError``
        if a run is active (queue the message with ``steer()`` or ``follow_up()`` instead).
        """
        self._refuse_if_busy("use steer() or follow_up() to queue a message, or wait_for_idle()")
        if isinstance(input, str):
            prompts: list[AgentMessage] = [user_message(input, images)]
        elif isinstance(input, (list, tuple)):
            prompts = list(input)
        else:
            prompts = [cast(AgentMessage, input)]
        await self._run(prompts)

    async def continue_(self) -> None:
        """Run again from the current history without new input (pi's ``continue()``; ``continue``
        is a Python keyword).

        If the last message is the assistant's, the queued steering (else follow-up) messages
        become the prompt; with nothing queued that is an error, as is an empty history.
        """
        self._refuse_if_busy("wait_for_idle() first")
        messages = self._state.messages
        if not messages:
            raise ValueError("Cannot continue: there are no messages")
        if messages[-1].role != "assistant":
            await self._run(None)
            return
        steering = self._steering.drain()
        if steering:
            await self._run(steering, skip_initial_steering_poll=True)
            return
        follow_ups = self._follow_up.drain()
        if follow_ups:
            await self._run(follow_ups)
            return
        raise ValueError("Cannot continue from an assistant message with nothing queued")

    def abort(self) -> None:
        """Abort the active run (no-op when idle). The run still ends with ``agent_end``."""
        if self._active is not None:
            self._active.controller.abort()

    @property
    def signal(self) -> AbortSignal | None:
        """The active run's abort signal; ``None`` when idle."""
        return self._active.controller.signal if self._active is not None else None

    @property
    def is_running(self) -> bool:
        return self._active is not None

    async def wait_for_idle(self) -> None:
        """Return once no run is active (at once when idle)."""
        if self._active is not None:
            await self._active.idle.wait()

    def reset(self) -> None:
        """Forget the conversation, the last run's status and both queues."""
        self._state.clear()
        self._steering.clear()
        self._follow_up.clear()

    # -- queues --------------------------------------------------------------------------------

    def steer(self, message: str | AgentMessage) -> None:
        """Queue a message for the next turn (after the current tool calls finish)."""
        self._steering.push(user_message(message) if isinstance(message, str) else message)

    def follow_up(self, message: str | AgentMessage) -> None:
        """Queue a message for when the agent would otherwise stop."""
        self._follow_up.push(user_message(message) if isinstance(message, str) else message)

    def clear_steering_queue(self) -> list[AgentMessage]:
        return self._steering.clear()

    def clear_follow_up_queue(self) -> list[AgentMessage]:
        return self._follow_up.clear()

    def clear_all_queues(self) -> list[AgentMessage]:
        return self._steering.clear() + self._follow_up.clear()

    def has_queued_messages(self) -> bool:
        return bool(self._steering) or bool(self._follow_up)

    @property
    def steering_messages(self) -> list[AgentMessage]:
        return self._steering.messages

    @property
    def follow_up_messages(self) -> list[AgentMessage]:
        return self._follow_up.messages

    # -- one run -------------------------------------------------------------------------------

    def _refuse_if_busy(self, advice: str) -> None:
        if self._active is not None:
            raise AgentBusyError(f"The agent is already running; {advice}")

    async def _run(
        self, prompts: list[AgentMessage] | None, *, skip_initial_steering_poll: bool = False
    ) -> None:
        """Run the loop (from ``prompts``, or continuing when ``None``) with the run lifecycle."""
        self._refuse_if_busy("wait_for_idle() first")
        run = _ActiveRun(AbortController(), asyncio.Event())
        self._active = run
        signal = run.controller.signal
        self._state.begin_run()

        async def emit(event: AgentEvent) -> None:
            self._state.apply(event)
            for listener in list(self._listeners):
                outcome = listener(event, signal)
                # Runs for every streamed delta: no coroutine, no ABC check for a plain listener.
                if outcome is not None and inspect.isawaitable(outcome):
                    await outcome

        try:
            context = AgentContext(
                self._state.system_prompt, list(self._state.messages), list(self._state.tools)
            )
            config = self._loop_config(skip_initial_steering_poll)
            if prompts is None:
                await run_agent_loop_continue(context, config, emit, signal, self.stream_fn)
            else:
                await run_agent_loop(prompts, context, config, emit, signal, self.stream_fn)
        except Exception as exc:
            await self._fail(exc, signal, emit)
        finally:
            self._state.end_run()
            self._active = None
            run.idle.set()

    def _loop_config(self, skip_initial_steering_poll: bool) -> AgentLoopConfig:
        level = self._state.thinking_level
        options = SimpleStreamOptions(
            reasoning=None if level == "off" else level,
            thinking_budgets=self.thinking_budgets,
            session_id=self.session_id,
            api_key=self.api_key,
            on_payload=self.on_payload,
            on_response=self.on_response,
            on_headers=self.on_headers,
            on_stream_event=self.on_stream_event,
            extra={"transport": self.transport},
        )
        if self.websocket_connect_timeout_ms is not None:
            options.extra["websocket_connect_timeout_ms"] = self.websocket_connect_timeout_ms
        if self.max_retry_delay_ms is not None:
            options.max_retry_delay_ms = self.max_retry_delay_ms
        return AgentLoopConfig(
            model=self._state.model,
            stream_options=options,
            convert_to_llm=self.convert_to_llm,
            transform_context=self.transform_context,
            get_api_key=self.get_api_key,
            get_steering_messages=self._steering_poll(skip_first=skip_initial_steering_poll),
            get_follow_up_messages=self._follow_up.drain,
            tool_execution=self.tool_execution,
            before_tool_call=self.before_tool_call,
            after_tool_call=self.after_tool_call,
            tool_timeout_s=self.tool_timeout_s,
            get_tools=(lambda: self._state.tools) if self.live_tools else None,
            get_callable_tools=lambda: self._state.callable_tools,
            prompt_ledger=self.prompt_ledger,
            request_preparer=self.request_preparer,
            prepare_next_turn=self.next_turn_preparer,
        )

    def _steering_poll(self, *, skip_first: bool) -> PollMessages:
        """The steering poll; ``skip_first`` keeps the loop's initial poll from taking a second
        message when ``continue_()`` already took one."""
        skip = skip_first

        def poll() -> list[AgentMessage]:
            nonlocal skip
            if skip:
                skip = False
                return []
            return self._steering.drain()

        return poll

    async def _fail(
        self, exc: Exception, signal: AbortSignal, emit: Callable[[AgentEvent], Awaitable[Any]]
    ) -> None:
        """The loop raised (a broken contract): record a synthetic failed assistant message
        directly in the history and end the run with a lone ``agent_end``."""
        model = self._state.model
        message = AssistantMessage(
            content=[TextContent("")],
            api=model.api,
            provider=model.provider,
            model=model.id,
            stop_reason="aborted" if signal.aborted else "error",
            error_message=redact(str(exc)) or type(exc).__name__,
        )
        self._state.record_failure(message, message.error_message or "")
        await emit(AgentEnd([message]))


def _two_argument_listener(listener: Callable[..., Any]) -> Listener:
    """``listener`` itself if it takes ``(event, signal)``; else a wrapper passing the event only."""
    try:
        parameters = inspect.signature(listener).parameters.values()
    except (TypeError, ValueError):
        return listener
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(positional) >= 2 or any(p.kind is p.VAR_POSITIONAL for p in parameters):
        return listener

    def event_only(event: AgentEvent, signal: AbortSignal) -> Any:
        return listener(event)

    return event_only
