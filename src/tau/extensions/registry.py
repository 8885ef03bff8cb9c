"""Who registered what: the loaded extensions, in load order, and the rules for name clashes.

- Tools and flags: the first registration of a name wins; a later one from another extension is
  skipped with a diagnostic naming the file and line of the losing call. The same extension
  registering a name again replaces its own.
- Commands: all kept; a name several extensions use gets invocation names ``name:1``, ``name:2``
  in load order (bumped past names already taken).
- Shortcuts: keys bound to essential app actions are refused; between extensions the later wins.
- Message and entry renderers: the first extension registering a ``custom_type`` wins.
- Markdown transformers: one per extension (the latest); tool renderer resolvers: all, in order.
- MCP servers: a name belongs to the extension that registered it first; registering it again
  from that extension replaces the entry, from another one is refused.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from types import ModuleType
from typing import Any

from msgspec import Struct, field

from tau.extensions.errors import DiagnosticType, ExtensionDiagnostic, SourceLocation
from tau.extensions.types import (
    FlagDefinition,
    FlagValue,
    ProviderRegistration,
    RegisteredCommand,
    RegisteredEntryRenderer,
    RegisteredMarkdownTransformer,
    RegisteredMcpServer,
    RegisteredRenderer,
    RegisteredShortcut,
    RegisteredTool,
)
from tau.extensions.virtual_models import VirtualModelRegistration

__all__ = ["RESERVED_SHORTCUTS", "Extension", "ExtensionRegistry", "Handler", "normalize_key"]

Handler = Callable[[Any, Any], Any]
"""``handler(event, ctx)``: a plain function or a coroutine function."""

RESERVED_SHORTCUTS = frozenset(
    {
        "escape",  # interrupt
        "ctrl+c",  # clear
        "ctrl+d",  # exit
        "ctrl+z",  # suspend
        "shift+tab",  # cycle thinking level
        "ctrl+t",  # toggle thinking
        "ctrl+p",  # cycle model
        "ctrl+shift+p",  # cycle model backwards
        "ctrl+l",  # select model
        "ctrl+o",  # expand tools
        "ctrl+g",  # external editor
        "alt+enter",  # follow-up
        "enter",  # submit / confirm
        "ctrl+k",  # delete to line end
    }
)
_MODIFIER_ORDER = {"ctrl": 0, "alt": 1, "shift": 2, "meta": 3, "super": 4}


def normalize_key(key: str) -> str:
    """``Shift+Ctrl+P`` → ``ctrl+shift+p``: lower case, modifiers in one order."""
    parts = [p.strip().lower() for p in key.split("+") if p.strip()]
    if not parts:
        return ""
    *modifiers, last = parts
    modifiers = sorted(set(modifiers), key=lambda m: (_MODIFIER_ORDER.get(m, 9), m))
    return "+".join([*modifiers, last])


class Extension(Struct, eq=False, dict=True):
    """One loaded extension and everything it registered.

    ``path`` names it in messages (a file, a package folder, or ``<entry point name>``); ``root``
    is where its code lives, used to find the line of a failing call (``None`` when unknown).
    """

    name: str
    path: str
    root: str | None = None
    module: ModuleType | None = None
    handlers: dict[str, list[Handler]] = field(default_factory=dict)
    tools: dict[str, RegisteredTool] = field(default_factory=dict)
    commands: dict[str, RegisteredCommand] = field(default_factory=dict)
    shortcuts: dict[str, RegisteredShortcut] = field(default_factory=dict)
    flags: dict[str, FlagDefinition] = field(default_factory=dict)
    renderers: dict[str, RegisteredRenderer] = field(default_factory=dict)
    providers: dict[str, ProviderRegistration] = field(default_factory=dict)
    virtual_models: dict[tuple[str, str], VirtualModelRegistration] = field(default_factory=dict)
    entry_renderers: dict[str, RegisteredEntryRenderer] = field(default_factory=dict)
    markdown_transformer: RegisteredMarkdownTransformer | None = None
    """One per extension: registering again replaces it."""
    tool_renderers: list[Any] = field(default_factory=list)
    """``ToolRendererResolver``s, in registration order."""


class ExtensionRegistry:
    """The extensions of one runner and their registrations, with clashes turned into diagnostics."""

    def __init__(self, flag_values: dict[str, FlagValue] | None = None) -> None:
        self.extensions: list[Extension] = []
        self.diagnostics: list[ExtensionDiagnostic] = []
        self.flag_values: dict[str, FlagValue] = dict(flag_values or {})
        self.mcp_servers: dict[str, RegisteredMcpServer] = {}
        """MCP servers the extensions registered, in registration order."""

    def commit(self, extension: Extension) -> None:
        """Add an extension whose ``setup`` succeeded."""
        self.extensions.append(extension)

    def diagnose(
        self, type: DiagnosticType, message: str, extension: Extension, where: SourceLocation | None
    ) -> None:
        self.diagnostics.append(
            ExtensionDiagnostic(
                type,
                message,
                extension=extension.name,
                path=where.path if where else extension.path,
                line=where.line if where else None,
            )
        )

    def owner(self, path: str) -> Extension:
        """The loaded extension at ``path``."""
        return next(e for e in self.extensions if e.path == path)

    def _others(self, extension: Extension) -> Iterator[Extension]:
        return (e for e in self.extensions if e is not extension)

    # -- registering -----------------------------------------------------------------------------

    def add_handler(self, extension: Extension, event: str, handler: Handler) -> None:
        extension.handlers.setdefault(event, []).append(handler)

    def add_tool(self, extension: Extension, tool: RegisteredTool, where: SourceLocation | None) -> bool:
        name = tool.definition.name
        owner = next((e for e in self._others(extension) if name in e.tools), None)
        if owner is not None:
            self.diagnose(
                "error",
                f"tool {name!r} is already registered by extension {owner.name!r} ({owner.path}); "
                "this registration is skipped",
                extension,
                where,
            )
            return False
        extension.tools[name] = tool
        return True

    def add_command(self, extension: Extension, command: RegisteredCommand) -> None:
        extension.commands[command.name] = command

    def add_shortcut(
        self, extension: Extension, shortcut: RegisteredShortcut, where: SourceLocation | None
    ) -> bool:
        if shortcut.key in RESERVED_SHORTCUTS:
            self.diagnose(
                "error",
                f"shortcut {shortcut.key!r} is reserved by the app and cannot be bound",
                extension,
                where,
            )
            return False
        for other in self._others(extension):
            previous = other.shortcuts.pop(shortcut.key, None)
            if previous is not None:
                self.diagnose(
                    "warning",
                    f"shortcut {shortcut.key!r} of extension {other.name!r} is replaced by this one",
                    extension,
                    where,
                )
        extension.shortcuts[shortcut.key] = shortcut
        return True

    def add_flag(self, extension: Extension, flag: FlagDefinition, where: SourceLocation | None) -> bool:
        owner = next((e for e in self._others(extension) if flag.name in e.flags), None)
        if owner is not None:
            self.diagnose(
                "error",
                f"flag --{flag.name} is already registered by extension {owner.name!r}; this one is skipped",
                extension,
                where,
            )
            return False
        extension.flags[flag.name] = flag
        self.flag_values.setdefault(flag.name, flag.default)
        return True

    def add_renderer(
        self, extension: Extension, renderer: RegisteredRenderer, where: SourceLocation | None
    ) -> bool:
        owner = next((e for e in self._others(extension) if renderer.custom_type in e.renderers), None)
        if owner is not None:
            self.diagnose(
                "warning",
                f"messages of type {renderer.custom_type!r} are already rendered by extension {owner.name!r}",
                extension,
                where,
            )
            return False
        extension.renderers[renderer.custom_type] = renderer
        return True

    def add_entry_renderer(
        self, extension: Extension, renderer: RegisteredEntryRenderer, where: SourceLocation | None
    ) -> bool:
        owner = next((e for e in self._others(extension) if renderer.custom_type in e.entry_renderers), None)
        if owner is not None:
            self.diagnose(
                "warning",
                f"entries of type {renderer.custom_type!r} are already rendered by extension {owner.name!r}",
                extension,
                where,
            )
            return False
        extension.entry_renderers[renderer.custom_type] = renderer
        return True

    def add_mcp_server(self, server: RegisteredMcpServer) -> None:
        """Register or replace ``server``; ``ValueError`` when another extension holds the name."""
        held = self.mcp_servers.get(server.name)
        if held is not None and held.extension_path != server.extension_path:
            raise ValueError(
                f"MCP server {server.name!r} is already registered by the extension at {held.extension_path}"
            )
        self.mcp_servers[server.name] = server

    def remove_mcp_server(self, name: str, extension_path: str) -> bool:
        """Remove ``name`` when ``extension_path`` registered it; whether it did."""
        held = self.mcp_servers.get(name)
        if held is None or held.extension_path != extension_path:
            return False
        del self.mcp_servers[name]
        return True

    # -- views -----------------------------------------------------------------------------------

    def handlers(self, event: str) -> Iterator[tuple[Extension, Handler]]:
        """The handlers of ``event``: extensions in load order, then registration order."""
        for extension in self.extensions:
            for handler in extension.handlers.get(event, ()):
                yield extension, handler

    def has_handlers(self, event: str) -> bool:
        return any(event in e.handlers for e in self.extensions)

    def tools(self) -> list[RegisteredTool]:
        return [tool for e in self.extensions for tool in e.tools.values()]

    def commands(self) -> dict[str, RegisteredCommand]:
        """Every command by invocation name, in load order."""
        every = [c for e in self.extensions for c in e.commands.values()]
        counts: dict[str, int] = {}
        for command in every:
            counts[command.name] = counts.get(command.name, 0) + 1
        taken = {c.name for c in every if counts[c.name] == 1}
        out: dict[str, RegisteredCommand] = {}
        for command in every:
            invocation = command.name
            if counts[command.name] > 1:
                suffix = 1
                while f"{command.name}:{suffix}" in taken:
                    suffix += 1
                invocation = f"{command.name}:{suffix}"
                taken.add(invocation)
            command.invocation_name = invocation
            out[invocation] = command
        return out

    def shortcuts(self) -> dict[str, RegisteredShortcut]:
        return {key: s for e in self.extensions for key, s in e.shortcuts.items()}

    def flags(self) -> dict[str, FlagDefinition]:
        return {name: f for e in self.extensions for name, f in e.flags.items()}

    def renderers(self) -> dict[str, RegisteredRenderer]:
        return {t: r for e in self.extensions for t, r in e.renderers.items()}

    def entry_renderers(self) -> dict[str, RegisteredEntryRenderer]:
        return {t: r for e in self.extensions for t, r in e.entry_renderers.items()}

    def markdown_transformers(self) -> list[RegisteredMarkdownTransformer]:
        """One per extension that registered one, in load order."""
        return [e.markdown_transformer for e in self.extensions if e.markdown_transformer is not None]

    def tool_renderers(self) -> list[tuple[Extension, Any]]:
        """Tool renderer resolvers: extensions in load order, then registration order."""
        return [(e, r) for e in self.extensions for r in e.tool_renderers]

    def providers(self) -> list[ProviderRegistration]:
        return [p for e in self.extensions for p in e.providers.values()]

    def virtual_models(self) -> list[VirtualModelRegistration]:
        """The virtual models the loaded extensions registered, in load order."""
        return [v for e in self.extensions for v in e.virtual_models.values()]

    # -- flag values -----------------------------------------------------------------------------

    def apply_flag_values(self, values: Mapping[str, str | bool | None]) -> list[ExtensionDiagnostic]:
        """Apply CLI ``--name[=value]`` values; an unknown flag, a value for a boolean flag that
        is not one, or a string flag without a value is an error and changes nothing."""
        problems: list[ExtensionDiagnostic] = []
        flags = self.flags()
        for name, value in values.items():
            flag = flags.get(name)
            if flag is None:
                problems.append(ExtensionDiagnostic("error", f"Unknown option: --{name}"))
                continue
            parsed: FlagValue = _boolean(value) if flag.type == "boolean" else value
            if parsed is None or (flag.type == "string" and not isinstance(value, str)):
                problem = (
                    f"--{name} takes no value (got {value!r})"
                    if flag.type == "boolean"
                    else f"--{name} needs a value"
                )
                problems.append(ExtensionDiagnostic("error", problem, flag.extension, flag.path))
                continue
            self.flag_values[name] = parsed
        return problems


def _boolean(value: str | bool | None) -> bool | None:
    if value is None or isinstance(value, bool):
        return True if value is None else value
    lowered = value.strip().lower()
    if lowered in ("true", "1", "yes", "on"):
        return True
    if lowered in ("false", "0", "no", "off"):
        return False
    return None
