"""``tau``: the object each extension's ``setup(tau)`` receives.

Two kinds of methods. Registration (``on``, ``register_tool``, ``register_command`` …) works at
any time, including inside ``setup``. Session actions (``send_message``, ``append_entry``,
``set_active_tools`` …) need the running session: inside ``setup`` they raise
``ExtensionNotReadyError``; call them from handlers, commands and tools. Once the session is
replaced or reloaded, every method raises ``StaleContextError``.

    def setup(tau):
        @tau.on("tool_call")
        async def gate(event, ctx):
            if event.tool_name == "bash" and "rm -rf" in event.input.get("command", ""):
                return {"block": True, "reason": "not here"}
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, overload

from tau.ai.abort import AbortSignal
from tau.ai.classify import ClassifyFunction
from tau.ai.registry import SimpleStreamFunction, StreamFunction
from tau.ai.types import ImageContent, Model, TextContent
from tau.extensions.bus import ExtensionEvents
from tau.extensions.errors import MalformedResultError, caller_location
from tau.extensions.events import EVENT_TYPES
from tau.extensions.host import DeliverAs, UserDelivery
from tau.extensions.process import run_process
from tau.extensions.registry import Extension, normalize_key
from tau.extensions.results import to_custom_message
from tau.extensions.types import (
    CommandHandler,
    CommandInfo,
    EntryRenderer,
    ExecResult,
    FlagDefinition,
    FlagType,
    FlagValue,
    MarkdownTransformer,
    MessageRenderer,
    ProviderRegistration,
    RegisteredCommand,
    RegisteredEntryRenderer,
    RegisteredMarkdownTransformer,
    RegisteredMcpServer,
    RegisteredRenderer,
    RegisteredShortcut,
    RegisteredTool,
    ShortcutHandler,
    ToolDefinition,
    ToolInfo,
    ToolRendererResolver,
)
from tau.extensions.virtual_models import VirtualModelDefinition, VirtualModelRegistration
from tau.session.messages import CustomMessage

if TYPE_CHECKING:
    import asyncio

    from tau.extensions.runner import ExtensionRunner

__all__ = ["ExtensionAPI"]

F = TypeVar("F", bound=Callable[..., Any])

_DELIVERY: dict[str, DeliverAs] = {
    "steer": "steer",
    "follow_up": "follow_up",
    "followUp": "follow_up",
    "next_turn": "next_turn",
    "nextTurn": "next_turn",
}
_MARKDOWN_SURFACES = frozenset({"user", "assistant", "assistant-thinking", "custom", "summary", "changelog"})
_DEFAULT_MARKDOWN_SURFACES = frozenset({"user", "assistant", "assistant-thinking"})
_TOOL_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")


class ExtensionAPI:
    """One extension's handle on tau (the ``tau`` argument of ``setup``)."""

    __slots__ = ("_extension", "_runner", "events")

    def __init__(self, runner: ExtensionRunner, extension: Extension) -> None:
        self._runner = runner
        self._extension = extension
        self.events = ExtensionEvents(runner.bus, extension, runner.binding.check_live)
        """Channels shared with the session's other extensions: ``emit(channel, data)``, ``on(channel, fn)``."""

    @property
    def name(self) -> str:
        """This extension's name (its file, folder or entry-point name)."""
        return self._extension.name

    @property
    def path(self) -> str:
        return self._extension.path

    def _live(self) -> None:
        self._runner.binding.check_live()

    def _where(self) -> Any:
        return caller_location(self._extension.root)

    # -- events ----------------------------------------------------------------------------------

    @overload
    def on(self, event: str) -> Callable[[F], F]: ...

    @overload
    def on(self, event: str, handler: F) -> F: ...

    def on(self, event: str, handler: F | None = None) -> F | Callable[[F], F]:
        """Call ``handler(event, ctx)`` (a function or coroutine function) for ``event``.

        ``tau.on("tool_call", fn)`` or, as a decorator, ``@tau.on("tool_call")``. An unknown event
        name is reported as a diagnostic and the handler is not registered.
        """
        self._live()
        if handler is None:
            where = self._where()

            def decorate(fn: F) -> F:
                self._add_handler(event, fn, where)
                return fn

            return decorate
        self._add_handler(event, handler, self._where())
        return handler

    def _add_handler(self, event: str, handler: Callable[..., Any], where: Any) -> None:
        if not callable(handler):
            raise TypeError(f"the handler for {event!r} must be callable, not {type(handler).__name__}")
        registry = self._runner.registry
        if event not in EVENT_TYPES:
            registry.diagnose(
                "warning", f"unknown event {event!r}; the handler is ignored", self._extension, where
            )
            return
        registry.add_handler(self._extension, event, handler)

    # -- registration ----------------------------------------------------------------------------

    def register_tool(self, tool: ToolDefinition) -> None:
        """Offer ``tool`` to the model (active from the next run when registered during a session)."""
        self._live()
        if not isinstance(tool, ToolDefinition):
            raise TypeError(f"register_tool takes a ToolDefinition, not {type(tool).__name__}")
        if not tool.name or not set(tool.name) <= _TOOL_NAME_CHARS or len(tool.name) > 64:
            raise ValueError(f"tool name {tool.name!r} must be 1-64 letters, digits, '_' or '-'")
        if not callable(tool.execute):
            raise TypeError(f"tool {tool.name!r}: execute must be callable")
        tool.schema()  # fail here, in setup, rather than when the model first sees the tool
        registered = RegisteredTool(tool, self._extension.name, self._extension.path)
        if self._runner.registry.add_tool(self._extension, registered, self._where()):
            self._runner.tool_registered()

    @overload
    def register_command(
        self,
        name: str,
        handler: None = None,
        *,
        description: str = "",
        complete: Callable[[str], Sequence[str] | None] | None = None,
    ) -> Callable[[F], F]: ...

    @overload
    def register_command(
        self,
        name: str,
        handler: CommandHandler,
        *,
        description: str = "",
        complete: Callable[[str], Sequence[str] | None] | None = None,
    ) -> CommandHandler: ...

    def register_command(
        self,
        name: str,
        handler: CommandHandler | None = None,
        *,
        description: str = "",
        complete: Callable[[str], Sequence[str] | None] | None = None,
    ) -> Any:
        """Make ``/name args`` call ``handler(args, ctx)``; ``complete(prefix)`` offers argument
        completions. Without a handler, a decorator."""
        self._live()
        name = name.lstrip("/")
        if not name or any(c.isspace() for c in name):
            raise ValueError(f"command name {name!r} must be one word")

        def add(fn: Any) -> Any:
            command = RegisteredCommand(
                name,
                fn,
                self._extension.name,
                self._extension.path,
                description=description,
                complete=complete,
            )
            self._runner.registry.add_command(self._extension, command)
            return fn

        return add if handler is None else add(handler)

    def register_shortcut(
        self, key: str, handler: ShortcutHandler | None = None, *, description: str = ""
    ) -> Any:
        """Bind a key combination (``ctrl+shift+x``) to ``handler(ctx)`` in the interactive UI."""
        self._live()
        normalized = normalize_key(key)
        if not normalized:
            raise ValueError(f"shortcut key {key!r} is empty")
        where = self._where()

        def add(fn: Any) -> Any:
            shortcut = RegisteredShortcut(
                normalized, fn, self._extension.name, self._extension.path, description=description
            )
            self._runner.registry.add_shortcut(self._extension, shortcut, where)
            return fn

        return add if handler is None else add(handler)

    def register_flag(
        self,
        name: str,
        *,
        type: type[bool] | type[str] | FlagType = bool,
        default: FlagValue = None,
        description: str = "",
    ) -> None:
        """Accept ``--name`` (boolean) or ``--name value`` (string) on the command line."""
        self._live()
        kind: FlagType
        if type in (bool, "boolean"):
            kind = "boolean"
        elif type in (str, "string"):
            kind = "string"
        else:
            raise ValueError(f"flag --{name}: type must be bool or str")
        name = name.lstrip("-")
        if not name:
            raise ValueError("a flag needs a name")
        flag = FlagDefinition(name, kind, self._extension.name, self._extension.path, default, description)
        self._runner.registry.add_flag(self._extension, flag, self._where())

    def get_flag(self, name: str) -> FlagValue:
        """The value of a flag this extension registered (its default unless given); else ``None``."""
        self._live()
        if name not in self._extension.flags:
            return None
        return self._runner.registry.flag_values.get(name)

    def register_message_renderer(self, custom_type: str, renderer: MessageRenderer | None = None) -> Any:
        """Draw messages of ``custom_type`` with ``renderer(message, options, theme)``."""
        self._live()
        where = self._where()

        def add(fn: Any) -> Any:
            registered = RegisteredRenderer(custom_type, fn, self._extension.name, self._extension.path)
            self._runner.registry.add_renderer(self._extension, registered, where)
            return fn

        return add if renderer is None else add(renderer)

    def register_entry_renderer(self, custom_type: str, renderer: EntryRenderer | None = None) -> Any:
        """Draw ``custom`` session entries of ``custom_type`` (``tau.append_entry``; the model never
        sees them) in the interactive chat with ``renderer(entry, options, theme)``. Without a
        renderer, a decorator."""
        self._live()
        where = self._where()

        def add(fn: Any) -> Any:
            if not callable(fn):
                raise TypeError(f"the entry renderer for {custom_type!r} must be callable")
            registered = RegisteredEntryRenderer(custom_type, fn, self._extension.name, self._extension.path)
            self._runner.registry.add_entry_renderer(self._extension, registered, where)
            return fn

        return add if renderer is None else add(renderer)

    def register_markdown_transformer(
        self, transformer: MarkdownTransformer | None = None, *, message_types: Sequence[str] | None = None
    ) -> Any:
        """Rewrite Markdown before the interactive chat draws it: ``transformer(markdown, context)``
        returns the Markdown to draw (display only). ``message_types``: the surfaces it runs on
        (default ``user``, ``assistant``, ``assistant-thinking``; also ``custom``, ``summary``,
        ``changelog``). One per extension: registering again replaces it. Without a transformer,
        a decorator."""
        self._live()
        kinds = frozenset(message_types) if message_types is not None else _DEFAULT_MARKDOWN_SURFACES
        unknown = sorted(kinds - _MARKDOWN_SURFACES)
        if unknown:
            raise ValueError(f"unknown message types {unknown}; use {', '.join(sorted(_MARKDOWN_SURFACES))}")

        def add(fn: Any) -> Any:
            if not callable(fn):
                raise TypeError("a markdown transformer must be callable")
            self._extension.markdown_transformer = RegisteredMarkdownTransformer(
                fn, kinds, self._extension.name, self._extension.path
            )
            return fn

        return add if transformer is None else add(transformer)

    def register_tool_renderer(self, resolver: ToolRendererResolver | None = None) -> Any:
        """Choose how calls of any tool are drawn, registered or not (an MCP tool of a resumed session
        before its server connected, say): ``resolver(tool_name, next)`` returns a renderer
        (``ToolRenderer(render_call=..., render_result=...)``) or ``None``; ``next()`` is what the
        later resolvers, then the tool itself, would use, so ``next() or mine`` only fills in.
        Without a resolver, a decorator."""
        self._live()

        def add(fn: Any) -> Any:
            if not callable(fn):
                raise TypeError("a tool renderer resolver must be callable")
            self._extension.tool_renderers.append(fn)
            return fn

        return add if resolver is None else add(resolver)

    def register_provider(
        self,
        name: str,
        config: Mapping[str, Any] | None = None,
        *,
        stream: StreamFunction | None = None,
        stream_simple: SimpleStreamFunction | None = None,
        classifiers: Mapping[str, ClassifyFunction] | None = None,
    ) -> None:
        """Add (or re-route) a model provider.

        ``config`` is a models.json provider entry (``api``, ``baseUrl``, ``apiKey``, ``models`` …).
        For a wire protocol of its own, pass ``stream`` and/or ``stream_simple`` (either serves for
        both) and name the protocol in ``config["api"]``. ``classifiers`` (pi's) maps a classifier
        api to ``classify(model, context, options)`` (async or not, returning a
        ``ClassifierResult``): this provider's classifier models of that api (``models`` entries
        with ``"type": "classifier"``, or its catalogue ones) classify through it. Registrations
        made in ``setup`` take effect when the runtime takes in the extensions; they are removed
        when it unloads them.
        """
        self._live()
        data = dict(config or {})
        if (stream or stream_simple) and not isinstance(data.get("api"), str):
            raise ValueError(f"provider {name!r}: a stream function needs config['api'] naming its protocol")
        for api, function in (classifiers or {}).items():
            if not isinstance(api, str) or not api or not callable(function):
                raise ValueError(
                    f"provider {name!r}: classifiers maps a classifier api to its classify function"
                )
        registration = ProviderRegistration(
            name,
            data,
            self._extension.name,
            self._extension.path,
            stream=stream,
            stream_simple=stream_simple,
            classifiers=dict(classifiers) if classifiers else None,
        )
        self._extension.providers[name] = registration
        self._runner.provider_registered(registration)

    def unregister_provider(self, name: str) -> None:
        self._live()
        registration = self._extension.providers.pop(name, None)
        if registration is not None:
            self._runner.provider_unregistered(registration)

    # -- virtual models -------------------------------------------------------------------------

    def register_virtual_model(self, definition: VirtualModelDefinition) -> None:
        """Add a selectable model whose ``route(request, ctx)`` picks a physical model and thinking
        level for each request (see docs/virtual-models.md). Registering the same provider and id
        again replaces it; ``unregister_provider`` does not remove it."""
        self._live()
        if not isinstance(definition, VirtualModelDefinition):
            raise TypeError("register_virtual_model takes a VirtualModelDefinition")
        registration = VirtualModelRegistration(definition, self._extension.name, self._extension.path)
        self._extension.virtual_models[(definition.provider, definition.id)] = registration
        self._runner.virtual_model_registered(registration)

    def unregister_virtual_model(self, provider: str, model_id: str) -> None:
        self._live()
        self._extension.virtual_models.pop((provider, model_id), None)
        self._runner.virtual_model_unregistered(provider, model_id)

    # -- MCP servers ------------------------------------------------------------------------------

    def register_mcp_server(self, name: str, config: Mapping[str, Any]) -> None:
        """Add an MCP server for this session: ``config`` is an ``mcpServers`` entry of mcp.json
        (``command``/``args``/``env``/``cwd``, or ``url``/``headers``/``oauth``, and ``exposure``,
        ``toolExposure``, ``description``, ``enabled``, ``timeout``). Registered in ``setup``, it
        starts with the session; later, at once. Not saved: register again on every load. A server
        of the same name in mcp.json wins. ``ValueError`` for a bad name or config, or a name
        another extension registered; registering a name again replaces this extension's entry."""
        self._live()
        from tau.config.mcp_servers import validate_server

        checked = validate_server(name, dict(config) if isinstance(config, Mapping) else config)
        if isinstance(checked, str):
            raise ValueError(checked)
        server = RegisteredMcpServer(name, dict(config), self._extension.path)
        self._runner.registry.add_mcp_server(server)
        self._runner.mcp_servers_changed()

    def unregister_mcp_server(self, name: str) -> None:
        """Remove an MCP server this extension registered; its connection closes and its tools
        can no longer be called."""
        self._live()
        if self._runner.registry.remove_mcp_server(name, self._extension.path):
            self._runner.mcp_servers_changed()

    def get_mcp_servers(self) -> list[RegisteredMcpServer]:
        """Every MCP server the extensions registered (copies), in registration order."""
        self._live()
        return [
            RegisteredMcpServer(s.name, dict(s.config), s.extension_path)
            for s in self._runner.registry.mcp_servers.values()
        ]

    # -- session actions -------------------------------------------------------------------------

    def send_message(
        self,
        message: CustomMessage | Mapping[str, Any],
        *,
        trigger_turn: bool = False,
        deliver_as: str = "steer",
    ) -> None:
        """Add a ``custom`` message (``{customType, content, display?, details?}``) to the conversation.

        While the agent works it is delivered as a steer (default) or follow-up; ``next_turn``
        holds it for the next prompt. When idle, ``trigger_turn=True`` starts a run with it.
        """
        host = self._runner.binding.require_host("tau.send_message()")
        try:
            custom = to_custom_message(message, "send_message")
        except MalformedResultError as exc:
            raise ValueError(str(exc)) from None
        if custom is None:
            raise ValueError("send_message needs a message")
        host.send_message(custom, trigger_turn=trigger_turn, deliver_as=_delivery(deliver_as))

    def send_user_message(
        self, content: str | Sequence[TextContent | ImageContent], *, deliver_as: str | None = None
    ) -> None:
        """Prompt as the user would (the ``input`` event fires with source ``extension``);
        ``deliver_as`` (steer / follow_up) is required while the agent works."""
        host = self._runner.binding.require_host("tau.send_user_message()")
        user: UserDelivery | None = None
        if deliver_as is not None:
            delivery = _delivery(deliver_as)
            if delivery == "next_turn":
                raise ValueError("send_user_message delivers as steer or follow_up")
            user = delivery
        host.send_user_message(content if isinstance(content, str) else list(content), deliver_as=user)

    def append_entry(self, custom_type: str, data: Any = None) -> str:
        """Save extension state in the session (a ``custom`` entry the model never sees); its id."""
        return self._runner.binding.require_host("tau.append_entry()").append_entry(custom_type, data)

    def set_session_name(self, name: str) -> None:
        self._runner.binding.require_host("tau.set_session_name()").set_session_name(name)

    def get_session_name(self) -> str | None:
        return self._runner.binding.require_host("tau.get_session_name()").get_session_name()

    def set_label(self, entry_id: str, label: str | None) -> None:
        self._runner.binding.require_host("tau.set_label()").set_label(entry_id, label)

    def get_active_tools(self) -> list[str]:
        return self._runner.binding.require_host("tau.get_active_tools()").get_active_tools()

    def get_all_tools(self) -> list[ToolInfo]:
        return self._runner.binding.require_host("tau.get_all_tools()").get_all_tools()

    def set_active_tools(self, names: Sequence[str]) -> None:
        """Activate exactly these tools (unknown names are ignored) from the next run."""
        self._runner.binding.require_host("tau.set_active_tools()").set_active_tools(list(names))

    def get_commands(self) -> list[CommandInfo]:
        """Extension commands, then prompt templates, then skills."""
        host = self._runner.binding.require_host("tau.get_commands()")
        own = [
            CommandInfo(name, c.description, "extension", c.path) for name, c in self._runner.commands.items()
        ]
        return own + host.get_resource_commands()

    async def set_model(self, model: Model) -> bool:
        """Switch model; ``False`` when it has no credentials."""
        return await self._runner.binding.require_host("tau.set_model()").set_model(model)

    def get_thinking_level(self) -> str:
        return self._runner.binding.require_host("tau.get_thinking_level()").get_thinking_level()

    def get_settings(self) -> dict[str, Any]:
        """A copy of the effective settings, pi's keys (user's and project's merged, command-line
        overrides applied); changing it changes nothing."""
        return self._runner.binding.require_host("tau.get_settings()").get_settings()

    def set_thinking_level(self, level: str) -> None:
        self._runner.binding.require_host("tau.set_thinking_level()").set_thinking_level(level)

    # -- helpers ---------------------------------------------------------------------------------

    async def exec(
        self,
        command: str,
        args: Sequence[str] = (),
        *,
        cwd: str | None = None,
        timeout: float | None = None,
        signal: AbortSignal | None = None,
    ) -> ExecResult:
        """Run a program (no shell) in the session's cwd; ``{stdout, stderr, code, killed}``."""
        self._live()
        return await run_process(
            command, list(args), cwd=cwd or self._runner.cwd, timeout=timeout, signal=signal
        )

    def spawn(self, work: Awaitable[Any]) -> asyncio.Task[Any]:
        """Run ``work`` in the background, supervised: a failure is reported with this extension's
        name (never crashes tau), and the task is cancelled when the session goes away."""
        self._live()
        if not inspect.isawaitable(work):
            raise TypeError("spawn takes a coroutine or another awaitable")
        return self._runner.supervisor.spawn(self._extension, work)


def _delivery(value: str) -> DeliverAs:
    delivery = _DELIVERY.get(value)
    if delivery is None:
        raise ValueError(f"deliver_as must be steer, follow_up or next_turn, not {value!r}")
    return delivery
