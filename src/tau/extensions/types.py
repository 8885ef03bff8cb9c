"""What extensions register: tools, commands, shortcuts, flags, message renderers and providers.

``ToolDefinition`` is built by the extension author; the other records are built by the ``tau``
API from its arguments and carry the name and path of the extension that registered them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias

from msgspec import Struct

from tau.agent.tool import AgentTool, AgentToolResult, ExecutionMode, ToolExposure, ToolUpdate
from tau.ai.abort import AbortSignal
from tau.ai.classify import ClassifyFunction
from tau.ai.registry import SimpleStreamFunction, StreamFunction
from tau.ai.types import ConstrainedSampling, JsonObject
from tau.session.messages import CustomMessage

if TYPE_CHECKING:
    from tau.extensions.context import ExtensionCommandContext, ExtensionContext

__all__ = [
    "CommandHandler",
    "CommandInfo",
    "EntryRenderer",
    "ExecResult",
    "FlagDefinition",
    "FlagType",
    "FlagValue",
    "MarkdownContext",
    "MarkdownSurface",
    "MarkdownTransformer",
    "MessageRenderer",
    "ProviderRegistration",
    "RegisteredCommand",
    "RegisteredEntryRenderer",
    "RegisteredMarkdownTransformer",
    "RegisteredMcpServer",
    "RegisteredRenderer",
    "RegisteredShortcut",
    "RegisteredTool",
    "RenderOptions",
    "ShortcutHandler",
    "ToolAnnotations",
    "ToolDefinition",
    "ToolExecuteWithContext",
    "ToolExposure",
    "ToolInfo",
    "ToolLoadout",
    "ToolLoadoutChanges",
    "ToolNamespace",
    "ToolOutput",
    "ToolRenderer",
    "ToolRendererResolver",
]

ToolOutput: TypeAlias = AgentToolResult | str | Mapping[str, Any]
"""What an extension tool may return: a result, plain text, or ``{content, details?, terminate?}``."""


class ToolExecuteWithContext(Protocol):
    """``execute(tool_call_id, params, signal, on_update, ctx)``: the agent's four arguments plus a
    fresh ``ExtensionContext``. Plain function or coroutine; raise to report a failure."""

    def __call__(
        self,
        tool_call_id: str,
        params: JsonObject,
        signal: AbortSignal | None,
        on_update: ToolUpdate | None,
        ctx: ExtensionContext,
        /,
    ) -> ToolOutput | Awaitable[ToolOutput]: ...


class ToolNamespace(Struct, kw_only=True, frozen=True, omit_defaults=True):
    """A group of related tools, as the tools of one MCP server (pi's ``namespace``): ``name``
    (``mcp__docs``), ``aliases`` scripts may look it up by (``docs``), a short ``description``
    listed with the group, and longer ``instructions`` given on request."""

    name: str
    aliases: tuple[str, ...] = ()
    description: str | None = None
    instructions: str | None = None


class ToolAnnotations(Struct, kw_only=True, frozen=True, omit_defaults=True):
    """Hints about what a tool does, with the meaning of MCP tool annotations (unverified; a
    permission extension may use them). ``None``: not said (MCP's defaults: not read-only, may be
    destructive, open world)."""

    read_only_hint: bool | None = None
    destructive_hint: bool | None = None
    idempotent_hint: bool | None = None
    open_world_hint: bool | None = None

    def to_json(self) -> JsonObject:
        """pi's camelCase object, only the hints that are set."""
        hints = {
            "readOnlyHint": self.read_only_hint,
            "destructiveHint": self.destructive_hint,
            "idempotentHint": self.idempotent_hint,
            "openWorldHint": self.open_world_hint,
        }
        return {key: value for key, value in hints.items() if value is not None}


class ToolLoadout(Struct, frozen=True):
    """The session's tools as ``prepare_loadout`` sees them: ``declared`` (the active tools, in
    order, with their own descriptions), ``callable`` (what ``ctx.execute_tool`` reaches) and
    ``registered`` (every tool); ``exposure``, ``namespace`` and ``prompt_guidelines`` by name."""

    declared: tuple[AgentTool, ...]
    callable: tuple[AgentTool, ...]
    registered: tuple[AgentTool, ...]
    exposure: Mapping[str, ToolExposure]
    namespace: Mapping[str, ToolNamespace]
    prompt_guidelines: Mapping[str, Sequence[str]]


class ToolLoadoutChanges(Struct, kw_only=True, frozen=True):
    """What ``prepare_loadout`` changes: model-facing ``descriptions`` of declared tools by name,
    and ``hidden_declarations``: active tools left out of requests (still active and callable)."""

    descriptions: Mapping[str, str] = {}
    hidden_declarations: Sequence[str] = ()


class ToolDefinition(Struct, kw_only=True, dict=True):
    """A tool for the model, registered with ``tau.register_tool``.

    ``parameters`` is a JSON Schema object (or a pydantic model class: its schema is used). Prefer
    string enums to unions of literals (Google's API accepts only those). ``prompt_snippet`` is the
    tool's one line under "Available tools" in the system prompt; ``prompt_guidelines`` are bullets
    added while the tool is active (name the tool in them). A tool with a built-in's name replaces
    the built-in's execution, but not its prompt text. ``default_active=False`` registers the tool
    inactive (pi's ``defaultActive``): ``--tools``, ``defaultTools`` or ``set_active_tools`` turn it on.
    ``constrained_sampling`` (pi's ``constrainedSampling``) asks for provider-side constrained
    sampling: ``JsonSchemaSampling("prefer" | "require")`` for strict arguments, or
    ``GrammarSampling({"openai_lark": ...})`` for a tool whose one required string argument the
    model writes as raw text under a grammar (see docs/models.md).

    ``exposure`` (``ToolExposure``): how the model and other tools (``ctx.execute_tool``) reach it;
    only ``direct`` and ``model-only`` tools are activated on registration. ``namespace`` groups
    tools, ``annotations`` hint at what the tool does. ``reaches_tools(params)``: a tool that calls
    others says which a call may reach, ``"all"`` or the words of its input that may name them.
    ``prepare_loadout(loadout)``: while the tool is active, changes what the model sees of the
    declared tools (``ToolLoadoutChanges``).
    """

    name: str
    description: str
    parameters: Any
    execute: ToolExecuteWithContext
    label: str = ""
    prompt_snippet: str | None = None
    prompt_guidelines: Sequence[str] = ()
    prepare_arguments: Callable[[JsonObject], JsonObject] | None = None
    execution_mode: ExecutionMode | None = None
    render_call: Callable[..., Any] | None = None
    render_result: Callable[..., Any] | None = None
    default_active: bool = True
    constrained_sampling: ConstrainedSampling | None = None
    exposure: ToolExposure = "direct"
    namespace: ToolNamespace | None = None
    annotations: ToolAnnotations | None = None
    reaches_tools: Callable[[JsonObject], Literal["all"] | Sequence[str]] | None = None
    prepare_loadout: Callable[[ToolLoadout], ToolLoadoutChanges | None] | None = None

    @property
    def activates_on_registration(self) -> bool:
        """Active once registered: ``default_active`` and a ``direct`` or ``model-only`` exposure."""
        return self.default_active and self.exposure in ("direct", "model-only")

    def schema(self) -> JsonObject:
        """``parameters`` as a JSON Schema dict."""
        to_schema = getattr(self.parameters, "model_json_schema", None)
        if callable(to_schema):
            schema: JsonObject = to_schema()
            return schema
        if not isinstance(self.parameters, dict):
            raise TypeError(f"tool {self.name!r}: parameters must be a JSON Schema dict or a pydantic model")
        return self.parameters


class RegisteredTool(Struct):
    definition: ToolDefinition
    extension: str
    path: str


CommandHandler: TypeAlias = Callable[[str, "ExtensionCommandContext"], "Awaitable[None] | None"]
ShortcutHandler: TypeAlias = Callable[["ExtensionContext"], "Awaitable[None] | None"]


class RegisteredCommand(Struct):
    """A ``/name args`` command. ``invocation_name`` differs from ``name`` (``review:1``,
    ``review:2``) when several extensions register the same name."""

    name: str
    handler: CommandHandler
    extension: str
    path: str
    description: str = ""
    complete: Callable[[str], Sequence[str] | None] | None = None
    invocation_name: str = ""


class RegisteredShortcut(Struct):
    key: str
    handler: ShortcutHandler
    extension: str
    path: str
    description: str = ""


FlagType: TypeAlias = Literal["boolean", "string"]
FlagValue: TypeAlias = bool | str | None


class FlagDefinition(Struct):
    """A ``--name[=value]`` CLI flag an extension reads with ``tau.get_flag(name)``."""

    name: str
    type: FlagType
    extension: str
    path: str
    default: FlagValue = None
    description: str = ""


class RenderOptions(Struct, frozen=True):
    expanded: bool = False


MessageRenderer: TypeAlias = Callable[[CustomMessage, RenderOptions, Any], Any]
"""``renderer(message, options, theme) -> component | None`` (``None``: default rendering)."""


class RegisteredRenderer(Struct):
    custom_type: str
    renderer: MessageRenderer
    extension: str
    path: str


EntryRenderer: TypeAlias = Callable[[Any, RenderOptions, Any], Any]
"""``renderer(entry, options, theme) -> component | None``: draws a ``custom`` session entry
(``tau.append_entry``) in the interactive chat; ``None`` draws nothing."""


class RegisteredEntryRenderer(Struct):
    custom_type: str
    renderer: EntryRenderer
    extension: str
    path: str


MarkdownSurface: TypeAlias = Literal[
    "user", "assistant", "assistant-thinking", "custom", "summary", "changelog"
]
"""Where Markdown is drawn: transcript messages (the default surfaces), custom messages without a
renderer, expanded compaction and branch summaries, the changelog."""


class MarkdownContext(Struct, frozen=True):
    """What a Markdown transformer is told about the text it transforms."""

    message_type: MarkdownSurface
    is_streaming: bool = False
    available_width: int = 80
    message_id: str | None = None
    timestamp: str | None = None


MarkdownTransformer: TypeAlias = Callable[[str, MarkdownContext], str]
"""``transformer(markdown, context) -> markdown``: display only (the session keeps the original)."""


class RegisteredMarkdownTransformer(Struct):
    transformer: MarkdownTransformer
    message_types: frozenset[str]
    extension: str
    path: str


class ToolRenderer(Struct, frozen=True):
    """How calls of a tool are drawn: ``render_call(args, theme)`` for its title line,
    ``render_result(result, options, theme)`` for its output (either may be ``None``: the default)."""

    render_call: Callable[..., Any] | None = None
    render_result: Callable[..., Any] | None = None


ToolRendererResolver: TypeAlias = Callable[[str, Callable[[], Any]], Any]
"""``resolver(tool_name, next) -> renderer | None``: ``next()`` is what the later resolvers, then
the tool itself, would use; a renderer is anything with ``render_call`` / ``render_result``
(a ``ToolRenderer``, a ``ToolDefinition``, a dict with those keys)."""


class RegisteredMcpServer(Struct):
    """An MCP server an extension registered (``tau.register_mcp_server``): ``config`` is an
    ``mcpServers`` entry of mcp.json as given (camelCase keys); ``extension_path`` names the extension."""

    name: str
    config: JsonObject
    extension_path: str


class ProviderRegistration(Struct):
    """A provider an extension adds: ``config`` in the models.json provider format (``api``,
    ``baseUrl``, ``apiKey``, ``models``…) and, for a new wire protocol, the functions that stream it
    (or, for its classifier models, classify with it)."""

    name: str
    config: JsonObject
    extension: str
    path: str
    stream: StreamFunction | None = None
    stream_simple: SimpleStreamFunction | None = None
    classifiers: dict[str, ClassifyFunction] | None = None
    """pi's ``classifiers``: the provider's own classifier apis, by api."""


class ToolInfo(Struct, frozen=True):
    """A tool as ``tau.get_all_tools()`` describes it; ``source`` is an extension path or
    ``<builtin:name>`` / ``<sdk:name>``. ``reaches_tools`` is the tool's own function (``None``
    when it reaches no other tool)."""

    name: str
    description: str
    parameters: JsonObject
    source: str
    prompt_guidelines: tuple[str, ...] = ()
    exposure: ToolExposure = "direct"
    namespace: ToolNamespace | None = None
    annotations: ToolAnnotations | None = None
    reaches_tools: Callable[[JsonObject], Literal["all"] | Sequence[str]] | None = None


class CommandInfo(Struct, frozen=True):
    name: str
    description: str
    source: Literal["extension", "prompt", "skill"]
    path: str | None = None


class ExecResult(Struct, frozen=True):
    """What ``tau.exec`` gives back; ``code`` is ``None`` when the process was killed."""

    stdout: str
    stderr: str
    code: int | None
    killed: bool = False
