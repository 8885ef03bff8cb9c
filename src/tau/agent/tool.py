"""The tool protocol: what the agent loop needs from a tool, and what a tool gives back."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal, Protocol, TypeAlias

from msgspec import Struct, field

from tau.ai.abort import AbortSignal
from tau.ai.types import ConstrainedSampling, ImageContent, JsonObject, TextContent, Tool, Usage

ExecutionMode: TypeAlias = Literal["sequential", "parallel"]
ToolExposure: TypeAlias = Literal["direct", "model-only", "codemode", "deferred", "hidden"]
"""How the model and other tools reach a tool (pi's ``exposure``): ``direct`` declared while active
and callable by other tools while active; ``model-only`` declared while active, never callable;
``codemode`` callable whenever registered; ``deferred`` as ``codemode`` but found by ``tool_search``
rather than listed to scripts; ``hidden`` registered but unreachable."""
CALLABLE_WHEN_INACTIVE: frozenset[str] = frozenset({"codemode", "deferred"})
"""Exposures callable from other tools whether active or not."""


class AgentToolResult(Struct):
    """What a tool returns: content for the model, ``details`` for the UI only.

    ``terminate`` asks the loop not to call the model again after this batch (honoured only when
    every result of the batch asks for it).
    """

    content: list[TextContent | ImageContent]
    details: Any = None
    terminate: bool = False
    usage: Usage | None = None
    """What the models the tool called cost (pi's ``usage``); the session counts it."""
    structured_content: Any = None
    """The result as a value for programs (pi's ``structuredContent``: ``read`` the file's text,
    ``bash`` ``{output, truncated, full_output_path?, exit_code, wall_time_seconds}``); not sent to
    the model, shown in ``tool_execution_end``."""
    is_error: bool = False
    """A result that reports a failure without raising (pi's ``isError``: ``bash`` with a non-zero
    exit code): the call counts as failed, the result keeps its other fields."""


ToolUpdate: TypeAlias = Callable[[AgentToolResult], None]
"""Streams a partial result (the accumulated result so far, not a delta); fire-and-forget."""


class ToolExecute(Protocol):
    def __call__(
        self,
        tool_call_id: str,
        args: JsonObject,
        signal: AbortSignal | None,
        on_update: ToolUpdate | None,
    ) -> Awaitable[AgentToolResult]: ...


class AgentTool(Struct, kw_only=True, dict=True):
    """A tool the agent can run. Failure is signalled by raising; a returned result is a success.

    ``prepare_arguments`` runs before validation (to fold legacy argument shapes into the schema).
    ``execution_mode="sequential"`` makes any batch containing this tool run one call at a time.
    ``prompt_snippet`` and ``prompt_guidelines`` feed the system prompt builder.
    ``constrained_sampling`` asks for provider-side constrained sampling (pi 1.6's
    ``constrainedSampling``): ``JsonSchemaSampling`` samples the arguments against ``parameters``
    where the model can (strict tools); ``GrammarSampling`` samples the one string argument from a
    grammar on models with OpenAI grammar tools. Elsewhere the tool is sent as any other.
    ``exposure``: how the model and other tools reach it (``ToolExposure``).
    """

    name: str
    description: str
    parameters: JsonObject
    execute: ToolExecute
    label: str = ""
    prepare_arguments: Callable[[JsonObject], JsonObject] | None = None
    execution_mode: ExecutionMode | None = None
    prompt_snippet: str | None = None
    prompt_guidelines: list[str] = field(default_factory=list)
    constrained_sampling: ConstrainedSampling | None = None
    exposure: ToolExposure = "direct"

    @property
    def callable_by_tools(self) -> bool:
        """Whether other tools may call it (when active, or for ``codemode``/``deferred`` always)."""
        return self.exposure not in ("model-only", "hidden")

    def __post_init__(self) -> None:
        if not self.label:
            self.label = self.name

    def to_tool(self) -> Tool:
        """The schema the model sees."""
        return Tool(
            name=self.name,
            description=self.description,
            parameters=self.parameters,
            constrained_sampling=self.constrained_sampling,
        )


def text_result(text: str, details: Any = None) -> AgentToolResult:
    """A result with one text block."""
    return AgentToolResult(content=[TextContent(text)], details=details)
