"""How one run of the loop is configured: the model, call options and the callbacks it consults.

Callbacks may be plain functions or coroutines. ``convert_to_llm``, ``transform_context``,
``get_api_key``, the two queue polls and ``should_stop_after_turn`` must not raise: an exception
ends the loop without its normal events (the ``Agent`` turns it into a failed run).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Literal, Protocol, TypeAlias

from msgspec import Struct, field

from tau.agent.context import AgentContext
from tau.agent.hooks import AfterToolCall, BeforeToolCall
from tau.agent.messages import AgentMessage, default_convert_to_llm
from tau.agent.tool import AgentTool
from tau.ai.abort import AbortSignal
from tau.ai.events import AssistantMessageEventStream
from tau.ai.options import SimpleStreamOptions
from tau.ai.types import AssistantMessage, Context, Message, Model, ToolResultMessage

ToolExecutionMode: TypeAlias = Literal["sequential", "parallel"]


class StreamFn(Protocol):
    """The LLM transport: ``tau.ai.stream_simple`` by default. Failures must come back as an
    ``error`` event in the stream, not as an exception."""

    def __call__(
        self, model: Model, context: Context, options: SimpleStreamOptions
    ) -> AssistantMessageEventStream | Awaitable[AssistantMessageEventStream]: ...


class TurnSummary(Struct):
    """What ``should_stop_after_turn`` sees once a turn has ended."""

    message: AssistantMessage
    tool_results: list[ToolResultMessage]
    context: AgentContext
    new_messages: list[AgentMessage]


ConvertToLlm: TypeAlias = Callable[[list[AgentMessage]], "list[Message] | Awaitable[list[Message]]"]
TransformContext: TypeAlias = Callable[
    [list[AgentMessage], AbortSignal | None], "list[AgentMessage] | Awaitable[list[AgentMessage]]"
]
GetApiKey: TypeAlias = Callable[[str], "str | Awaitable[str | None] | None"]
PollMessages: TypeAlias = Callable[[], "list[AgentMessage] | Awaitable[list[AgentMessage]]"]
ShouldStopAfterTurn: TypeAlias = Callable[[TurnSummary], "bool | Awaitable[bool]"]


class PromptRecorder(Protocol):
    """Keeps the prompt and tools as a record in the conversation (the runtime's; issue #31)."""

    async def before_request(self, context: AgentContext) -> list[AgentMessage]:
        """Called before each model call: bring ``context``'s prompt and tools up to date and
        return the messages that record a change (appended to the conversation)."""
        ...

    def project(self, messages: Sequence[AgentMessage], request: Context) -> Context:
        """The request to send, given the messages it was built from (after ``transform_context``)."""
        ...


class PreparedRequest(Struct):
    """Where one model call goes, as a ``RequestPreparer`` decided."""

    model: Model
    """The model to send the request to."""
    messages: list[AgentMessage] | None = None
    """The run's conversation, replaced before this call (a compaction): the run goes on from it
    and the request is built again from it."""
    error: str | None = None
    """Why the call cannot be made (a failed route): it ends with this error, nothing is sent."""


class RequestPreparer(Protocol):
    """A step between building each request and sending it (the coding layer's: the route of a
    virtual model's request, and a compaction the routed model's context window calls for)."""

    async def prepare(self, model: Model, request: Context, options: SimpleStreamOptions) -> PreparedRequest:
        """Where the request built for ``model`` goes; may change ``options`` for this call (its
        reasoning level, its key)."""
        ...


NextTurnPreparer: TypeAlias = Callable[[AgentContext], "Awaitable[list[AgentMessage] | None]"]
"""Asked before each turn of a run but its first (before that turn's ``turn_start``), with the
run's context: returns the run's conversation replaced (a compaction: the run goes on from it),
or ``None`` to go on as it is."""


class AgentLoopConfig(Struct, kw_only=True, dict=True):
    """Everything a run needs besides its context.

    ``stream_options`` go to every LLM call (``reasoning`` is the thinking level, ``None`` = off);
    the loop fills in ``signal`` and the API key (``get_api_key(provider)`` per call, falling back
    to ``stream_options.api_key``). ``tool_timeout_s`` (beyond pi) turns a tool that runs longer
    into an error result. ``prompt_ledger``, when set, is asked before each model call (it may
    change the prompt and tools and record the change) and shapes each request. ``get_tools``, when set, gives the tools before each model call after
    the first, so tools activated during a run (``tool_search``) are declared on the next call.
    """

    model: Model
    stream_options: SimpleStreamOptions = field(default_factory=SimpleStreamOptions)
    convert_to_llm: ConvertToLlm = field(default=default_convert_to_llm)
    transform_context: TransformContext | None = None
    get_api_key: GetApiKey | None = None
    get_steering_messages: PollMessages | None = None
    get_follow_up_messages: PollMessages | None = None
    tool_execution: ToolExecutionMode = "parallel"
    before_tool_call: BeforeToolCall | None = None
    after_tool_call: AfterToolCall | None = None
    should_stop_after_turn: ShouldStopAfterTurn | None = None
    tool_timeout_s: float | None = None
    get_tools: Callable[[], Sequence[AgentTool]] | None = None
    get_callable_tools: Callable[[], Sequence[AgentTool]] | None = None
    """Tools a running tool may call (``tau.agent.tool_execution.NestedToolCaller``) besides the
    declared ones."""
    prompt_ledger: PromptRecorder | None = None
    request_preparer: RequestPreparer | None = None
    """Asked before each model call, after the request is built (``RequestPreparer``)."""
    prepare_next_turn: NextTurnPreparer | None = None
    """Asked between the turns of a run (``NextTurnPreparer``)."""
