"""The built-in MCP extension: configured servers' tools, ``tool_search``, resources and ``/mcp``.

Loaded by ``tau.runtime.extension_loading`` only when an ``mcp.json`` exists. At ``session_start``
every enabled server starts in the background, all at once (without a UI and without ``direct``
tools, when the model first searches for tools: until then no server can matter); nothing waits
for them, except that the first prompt waits (up to 10 s) for servers with ``direct`` tools, since those belong in its
request (and for servers whose tools a resumed branch had loaded with ``tool_search``: they are
declared again). A server's tools are registered once it is connected:

- ``direct``: declared to the model like a built-in tool;
- ``codemode`` (pi's default): registered inactive and called from ``codemode`` scripts
  (``tau.mcp.codemode``), which find them with ``searchTools()``; the ``codemode`` tool is active
  while such a server is enabled, unless ``autoEnableCodemode`` is false;
- ``deferred``: registered inactive, found and declared by ``tool_search`` for the next model call, so
  a server with hundreds of tools costs the prompt nothing and the prompt prefix does not change
  when it connects (``tool_search`` also reaches ``codemode`` tools, and stands in for ``codemode``
  when that is off or the ``quickjs`` package is missing);
- ``hidden``: not registered.

A server that fails to start is reported once; one that dies is reported in the failing call's
result and started again by the next call.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from msgspec import Struct
from msgspec.structs import replace

from tau.agent.tool import AgentToolResult, text_result
from tau.ai.abort import AbortSignal
from tau.ai.types import TextContent
from tau.config.mcp_servers import McpConfig, ServerConfig, load_mcp_config, tool_exposure, validate_server
from tau.extensions.loader import ExtensionSource
from tau.extensions.types import ToolAnnotations, ToolDefinition, ToolNamespace
from tau.mcp.connection import McpCallError, ServerConnection
from tau.mcp.tool_search import TOOL_SEARCH
from tau.mcp.tools import SearchDocument, mcp_tool_name, schema_text, to_tool_result

if TYPE_CHECKING:
    from tau.extensions.api import ExtensionAPI
    from tau.extensions.context import ExtensionContext
    from tau.mcp.codemode_loadout import CodemodePresentation

__all__ = ["FIRST_PROMPT_WAIT_S", "McpServers", "mcp_extension_source"]

FIRST_PROMPT_WAIT_S = 10.0


def mcp_extension_source(
    cwd: str,
    agent_dir: str,
    *,
    include_project: bool,
    extra: Mapping[str, Mapping[str, Any]] | None = None,
    codemode: bool = True,
    tool_search: bool = True,
    codemode_slot: list[ToolDefinition] | None = None,
    codemode_presentation: CodemodePresentation | None = None,
) -> ExtensionSource:
    """The extension source of the MCP support for ``cwd`` (a project's file only when trusted).
    ``extra``: more servers as mcp.json entries (an editor's, over ACP), over those of the files.
    ``codemode`` / ``tool_search``: pi's built-ins of those names are on (``"-builtin:codemode"``
    in the settings: no ``codemode`` tool, and ``tool_search`` reaches those servers' tools).
    ``codemode_slot``: where the ``codemode`` tool goes for the built-in codemode extension to
    register (``tau.mcp.codemode_builtin``), instead of registering it here."""

    def setup(tau: ExtensionAPI) -> None:
        config = load_mcp_config(cwd, agent_dir, include_project=include_project)
        for name, raw in (extra or {}).items():
            server = validate_server(name, dict(raw), source="the editor (ACP)")
            if isinstance(server, str):
                config.errors.append(server)
            else:
                # An editor cannot say how a server's tools should be reached: they stay behind
                # tool_search, where the model calls them directly once found.
                exposure = server.exposure if "exposure" in raw else "deferred"
                config.servers[name] = replace(server, literal=True, exposure=exposure)
        servers = McpServers(
            tau, config, cwd, agent_dir, trusted=include_project, codemode=codemode, tool_search=tool_search
        )
        servers.codemode_slot = codemode_slot
        servers.codemode_presentation = codemode_presentation
        servers.install()

    return ExtensionSource("inline", "mcp", "<builtin:mcp>", setup=setup)


class _RegisteredTool(Struct):
    server: str
    remote: str
    exposure: str
    description: str
    parameters: str = ""
    schema: dict[str, Any] | None = None


class McpServers:
    """The servers of one session and the tools they registered."""

    def __init__(
        self,
        tau: ExtensionAPI,
        config: McpConfig,
        cwd: str,
        agent_dir: str,
        *,
        trusted: bool = False,
        codemode: bool = True,
        tool_search: bool = True,
    ) -> None:
        """``trusted``: the folder is trusted, so a global server may get a project override.
        ``codemode`` / ``tool_search``: offer that tool (pi's built-in of the name is on)."""
        self.codemode = codemode
        self.tool_search = tool_search
        self.codemode_slot: list[ToolDefinition] | None = None
        self._definitions: dict[str, ToolDefinition] = {}
        """The registered definitions of the servers' tools, by tool name."""
        self.codemode_presentation: CodemodePresentation | None = None
        self.tau = tau
        self.config = config
        self.cwd = cwd
        self.agent_dir = agent_dir
        self.trusted = trusted
        self.connections: dict[str, ServerConnection] = {}
        self.tools: dict[str, _RegisteredTool] = {}
        self._registered_servers: dict[str, list[str]] = {}
        self._ctx: ExtensionContext | None = None
        self._reported: set[tuple[str, int]] = set()
        self._reported_skips: set[tuple[str, int, str]] = set()
        self._first_prompt = True
        self._start_pending = False
        self._restore: set[str] = set()
        """Deferred tools this branch had loaded (resume, reload): active again once registered."""
        self._resource_tools_registered = False
        self._tool_search_registered = False
        self._registered_configs: dict[str, dict[str, Any]] = {}
        """The configs of the servers extensions registered, as given (to notice a replacement)."""
        for name, server in config.servers.items():
            self.connections[name] = self._connection(server)

    def _connection(self, server: ServerConfig) -> ServerConnection:
        auth_factory = None
        if server.transport == "http":
            from tau.mcp.oauth import oauth_factory

            auth_factory = oauth_factory(self.agent_dir, self._provider_token)
        return ServerConnection(
            server,
            self.cwd,
            auth_factory=auth_factory,
            on_change=self._changed,
            log_dir=self.agent_dir,
            fence=self._fence,
        )

    def _fence(self, argv: list[str], cwd: str) -> list[str]:
        """A stdio server's command line as the session's sandbox runs it (``sandbox.mcp``)."""
        if self._ctx is None:  # no session yet: nothing may start unfenced by mistake
            raise RuntimeError("an MCP server cannot start before the session does")
        return self._ctx.fence_command(argv, cwd, "mcp")

    def _provider_token(self, provider: str) -> str | None:
        """The key of a model provider (its login's token) for a server with ``auth.provider``."""
        ctx = self._ctx
        if ctx is None:
            return None
        key = ctx.model_registry.get_api_key_for_provider(provider)
        return key if isinstance(key, str) else None

    def install(self) -> None:
        tau = self.tau
        for registered in tau.get_mcp_servers():
            # A server of the mcp.json files wins over one of the same name an extension registered.
            if registered.name not in self.config.servers and self._add_registered(
                registered.name, registered.config, registered.extension_path
            ):
                self._registered_configs[registered.name] = dict(registered.config)
        tau.on("session_start", self._session_start)
        tau.on("mcp_servers_change", self._servers_changed)
        tau.on("before_agent_start", self._before_agent_start)
        tau.on("session_shutdown", self._session_shutdown)
        from tau.mcp.command import register_mcp_command

        register_mcp_command(tau, self)
        enabled = [s for s in self.config.servers.values() if s.enabled]
        scripted = [s for s in enabled if self._may_script(s)]
        codemode_on = bool(scripted) and self.codemode and self.config.auto_enable_codemode and _has_quickjs()
        if scripted and self.codemode:
            from tau.mcp.codemode import codemode_tool, servers_section
            from tau.mcp.codemode_loadout import CodemodePresentation, codemode_prepare_loadout

            reaches = {s.name: "codemode" if codemode_on else "tool_search" for s in scripted}
            reaches |= {
                s.name: "tool_search" for s in enabled if s.name not in reaches and self._may_defer(s)
            }
            tool = codemode_tool(
                self,
                default_active=codemode_on,
                append_entry=tau.append_entry,
                prepare_loadout=codemode_prepare_loadout(
                    self.codemode_presentation or CodemodePresentation()
                ),
                tool_infos=tau.get_all_tools,
            )
            tool = replace(tool, prompt_guidelines=[*tool.prompt_guidelines, servers_section(self, reaches)])
            if self.codemode_slot is not None:
                self.codemode_slot.append(tool)
            else:
                tau.register_tool(tool)
        searchable = [s for s in enabled if self._may_defer(s, include_codemode=not codemode_on)]
        if searchable and self.tool_search:
            self._register_tool_search(searchable)

    def _register_tool_search(self, searchable: list[ServerConfig]) -> None:
        from tau.mcp.tool_search import tool_search_definition

        self._tool_search_registered = True
        self.tau.register_tool(
            tool_search_definition(self._tool_search, guidelines=[_servers_guideline(searchable)])
        )

    @staticmethod
    def _may_defer(server: ServerConfig, *, include_codemode: bool = False) -> bool:
        exposures = {server.exposure, *server.tool_exposure.values()}
        return bool(exposures & ({"deferred", "codemode"} if include_codemode else {"deferred"}))

    @staticmethod
    def _may_script(server: ServerConfig) -> bool:
        return "codemode" in {server.exposure, *server.tool_exposure.values()}

    @staticmethod
    def _may_be_direct(server: ServerConfig) -> bool:
        return "direct" in {server.exposure, *server.tool_exposure.values()}

    # -- servers the extensions register -------------------------------------------------------

    def _add_registered(self, name: str, raw: Mapping[str, Any], extension_path: str) -> ServerConfig | None:
        server = validate_server(name, dict(raw), source=f"extension {extension_path}")
        if isinstance(server, str):  # checked when registered; kept for a config changed since
            self.report(f"MCP config error: {server}")
            return None
        server = replace(server, extension=extension_path)
        self.config.servers[name] = server
        self.connections[name] = self._connection(server)
        return server

    async def _servers_changed(self, event: Any, ctx: ExtensionContext) -> None:
        """``mcp_servers_change``: connect the servers registered since, close those removed."""
        self._ctx = ctx
        wanted = {s.name: s for s in event.servers}
        for name, connection in list(self.connections.items()):
            registered = wanted.get(name)
            if connection.config.extension and (
                registered is None
                or registered.config != self._registered_configs.get(name)
                or registered.extension_path != connection.config.extension
            ):
                await self._remove_server(name)
        added: list[ServerConfig] = []
        for name, registered in wanted.items():
            present = self.connections.get(name)
            if present is not None:
                # Unchanged, or a server of the mcp.json files (which wins); one this support took
                # in when it was loaded after the session started has yet to start.
                if present.config.extension and present.config.enabled and present.starts == 0:
                    present.start()
                continue
            server = self._add_registered(name, registered.config, registered.extension_path)
            if server is None:
                continue
            self._registered_configs[name] = dict(registered.config)
            added.append(server)
            if server.enabled:
                self.connections[name].start()
        deferred = [s for s in added if s.enabled and self._may_defer(s, include_codemode=True)]
        if deferred and self.tool_search and not self._tool_search_registered:
            self._register_tool_search(deferred)

    async def _remove_server(self, name: str) -> None:
        """Close ``name`` and make its tools unreachable (they leave the active set and the index)."""
        connection = self.connections.pop(name)
        self.config.servers.pop(name, None)
        self._registered_configs.pop(name, None)
        await connection.close()
        mine = set(self._registered_servers.pop(name, ()))
        for tool in mine:
            self.tools.pop(tool, None)
        if mine:
            self.tau.set_active_tools([n for n in self.tau.get_active_tools() if n not in mine])

    # -- lifecycle ---------------------------------------------------------------------------

    async def _session_start(self, event: Any, ctx: ExtensionContext) -> None:
        self._ctx = ctx
        recorded = ctx.session_manager.build_session_context().system_message
        if recorded is not None:
            self._restore = {
                str(t.get("name"))
                for t in recorded.tools_added or []
                if str(t.get("name")).startswith("mcp__")
            }
        for error in self.config.errors:
            self.report(f"MCP config error: {error}")
        self._warn_if_unreachable()
        enabled = [s for s in self.config.servers.values() if s.enabled]
        if ctx.has_ui or self._restore or any(self._may_be_direct(s) for s in enabled):
            self.start_all()
        else:
            # Without a UI (-p, JSON mode) and without direct tools, a server matters only once the
            # model searches its tools: it starts then (tool_search, the resource tools and /mcp
            # start them all), so a run that never needs it neither waits for it nor spawns it.
            self._start_pending = True

    def _warn_if_unreachable(self) -> None:
        """One warning when servers have tools that only ``codemode`` or ``tool_search`` reach and
        neither is active (``--tools`` left both out, say)."""
        indirect = [
            s for s in self.config.servers.values() if s.enabled and self._may_defer(s, include_codemode=True)
        ]
        active = set(self.tau.get_active_tools())
        if indirect and not active & {"codemode", TOOL_SEARCH}:
            self.report(
                "MCP tools are only reachable from the codemode or tool_search tool, but neither is "
                "active; they cannot be called"
            )

    def start_all(self) -> None:
        """Start every enabled server that is not running (in the background)."""
        self._start_pending = False
        for connection in self.connections.values():
            if connection.config.enabled and connection.state in ("idle", "connecting"):
                connection.start()

    async def _before_agent_start(self, event: Any, ctx: ExtensionContext) -> None:
        self._ctx = ctx
        if not self._first_prompt:
            return
        self._first_prompt = False
        restoring = {name.split("__")[1] for name in self._restore}
        waiting = [
            c.start()
            for c in self.connections.values()
            if c.config.enabled
            and c.state == "connecting"
            and (self._may_be_direct(c.config) or c.name.replace("-", "_") in restoring)
        ]
        if waiting:
            await asyncio.wait(waiting, timeout=FIRST_PROMPT_WAIT_S)

    async def _session_shutdown(self, event: Any, ctx: ExtensionContext) -> None:
        await asyncio.gather(*(c.close() for c in self.connections.values()), return_exceptions=True)
        self._ctx = None

    def report(self, message: str, level: str = "warning") -> None:
        """One line for the user: a notification in the TUI, stderr elsewhere."""
        ctx = self._ctx
        if ctx is not None and ctx.has_ui:
            ctx.ui.notify(message, "error" if level == "error" else "warning")
        else:
            print(f"tau: {level}: {message}", file=sys.stderr, flush=True)

    def _changed(self, connection: ServerConnection) -> None:
        if connection.state == "connected":
            for line in connection.skipped_tools:
                if (connection.name, connection.starts, line) not in self._reported_skips:
                    self._reported_skips.add((connection.name, connection.starts, line))
                    self.report(f"MCP server {connection.name!r}: {line}")
            self._register_tools(connection)
            if connection.has_resources and connection.config.exposure != "hidden":
                self._register_resource_tools()
        elif (
            connection.state in ("failed", "needs-auth")
            and (connection.name, connection.starts) not in self._reported
        ):
            self._reported.add((connection.name, connection.starts))
            what = (
                "needs sign-in (run: tau mcp login " + connection.name + ")"
                if connection.state == "needs-auth"
                else "failed"
            )
            first_line = (connection.error or "").splitlines()[0] if connection.error else ""
            self.report(f"MCP server {connection.name!r} {what}: {first_line}")

    # -- tools -------------------------------------------------------------------------------

    def _register_tools(self, connection: ServerConnection) -> None:
        server = connection.config
        before = set(self._registered_servers.get(server.name, ()))
        names: list[str] = []
        taken: set[str] = set()
        for tool in connection.tools:
            remote = str(tool.get("name", ""))
            exposure = tool_exposure(server, remote)
            if not remote or exposure == "hidden":
                continue
            name = mcp_tool_name(server.name, remote, lambda n: n in taken)
            taken.add(name)
            names.append(name)
            description = str(tool.get("description") or f"{remote} (MCP server {server.name})")
            parameters = schema_text(tool.get("inputSchema"))
            self.tools[name] = _RegisteredTool(
                server.name, remote, exposure, description, parameters, _input_schema(tool.get("inputSchema"))
            )
            if name in before:
                continue  # a reconnect or a changed list: the registration still stands
            definition = ToolDefinition(
                name=name,
                label=str(tool.get("title") or remote),
                description=description,
                parameters=_input_schema(tool.get("inputSchema")),
                execute=self._tool_executor(server.name, remote),
                default_active=exposure == "direct",
                exposure=exposure,
                namespace=ToolNamespace(
                    name=f"mcp__{server.name}",
                    aliases=(server.name,),
                    description=server.description.strip() or None,
                    instructions=connection.instructions.strip() or None,
                ),
                annotations=_annotations(tool.get("annotations")),
            )
            self._definitions[name] = definition
            self.tau.register_tool(definition)
        self._registered_servers[server.name] = names
        withdrawn = before - set(names)
        if withdrawn:
            for name in withdrawn:
                self.tools.pop(name, None)
                # Tools cannot be unregistered: hidden, the tool is withdrawn from every caller.
                withdrawn_definition = self._definitions.pop(name, None)
                if withdrawn_definition is not None:
                    self.tau.register_tool(replace(withdrawn_definition, exposure="hidden"))
            self.tau.set_active_tools([n for n in self.tau.get_active_tools() if n not in withdrawn])
        restored = [name for name in names if name in self._restore]
        if restored:
            self._restore -= set(restored)
            self.tau.set_active_tools([*self.tau.get_active_tools(), *restored])

    def _tool_executor(self, server: str, remote: str) -> Any:
        async def execute(
            tool_call_id: str, params: dict[str, Any], signal: Any, on_update: Any, ctx: Any
        ) -> AgentToolResult:
            connection = self.connections.get(server)
            if connection is None:
                raise RuntimeError(f"MCP server {server!r} was removed by the extension that registered it")
            if not connection.config.enabled:
                raise RuntimeError(f"MCP server {server!r} is disabled (enable it with /mcp enable {server})")
            if connection.state == "connected" and not any(t.get("name") == remote for t in connection.tools):
                raise RuntimeError(f"MCP server {server!r} no longer offers the tool {remote!r}")
            try:
                result = await _abortable(connection.call_tool(remote, params), signal)
            except McpCallError as exc:
                raise RuntimeError(str(exc)) from None
            return to_tool_result(server, result)

        return execute

    def _register_resource_tools(self) -> None:
        if self._resource_tools_registered:
            return
        self._resource_tools_registered = True
        exposures = [
            c.config.exposure
            for c in self.connections.values()
            if c.config.enabled and c.config.exposure != "hidden"
        ]
        direct = "direct" in exposures
        from tau.mcp.resources import resource_tools

        for definition in resource_tools(self, default_active=direct):
            self.tau.register_tool(definition)
            self.tools[definition.name] = _RegisteredTool(
                "", definition.name, "direct" if direct else "deferred", definition.description
            )

    async def wait_for_all(self) -> None:
        """Wait for every enabled server that is still starting (each within its timeout)."""
        if self._start_pending:
            self.start_all()
        waiting = [
            (c.start(), c.config.timeout_s)
            for c in self.connections.values()
            if c.config.enabled and c.state == "connecting"
        ]
        if waiting:
            await asyncio.wait([w for w, _ in waiting], timeout=max(t for _, t in waiting))

    async def _tool_search(
        self, tool_call_id: str, params: dict[str, Any], signal: Any, on_update: Any, ctx: Any
    ) -> AgentToolResult:
        from tau.mcp.tool_search import extension_documents, load_matches, search_arguments

        query, limit = search_arguments(params)
        await _abortable(self.wait_for_all(), signal)
        active = self.tau.get_active_tools()
        infos = self.tau.get_all_tools()
        registered = {info.name for info in infos}
        candidates = [
            SearchDocument(
                name, tool.remote, tool.description, self.server_description(tool.server), tool.parameters
            )
            for name, tool in self.tools.items()
            if tool.exposure in ("deferred", "codemode")
            and name not in active
            and name in registered
            and self.enabled(tool.server)
        ]
        # Other extensions' tools registered with a ``deferred`` or ``codemode`` exposure.
        candidates += extension_documents(infos, active, skip=self.tools)
        return load_matches(self.tau, query, limit, candidates)

    def enabled(self, server: str) -> bool:
        connection = self.connections.get(server)
        return connection is None or connection.config.enabled

    def server_description(self, server: str) -> str:
        connection = self.connections.get(server)
        if connection is None:
            return ""
        text = connection.config.description.strip() or connection.instructions.strip()
        return text.splitlines()[0] if text else ""

    async def wait_for_script(self, code: str) -> None:
        """Before a codemode script: start lazily started servers, and wait for those it can need:
        all of them when it searches or reads ``ALL_TOOLS``, else the ones it names."""
        if self._start_pending:
            self.start_all()
        if "searchTools" in code or "ALL_TOOLS" in code or "describeNamespace" in code:
            await self.wait_for_all()
            return
        named = [
            c
            for c in self.connections.values()
            if c.config.enabled and c.state == "connecting" and f"mcp__{c.name.replace('-', '_')}" in code
        ]
        if named:
            await asyncio.wait([c.start() for c in named], timeout=max(c.config.timeout_s for c in named))

    async def call_through_pipeline(
        self, name: str, call_id: str, args: dict[str, Any], signal: AbortSignal | None
    ) -> dict[str, Any]:
        """A script's call of the MCP tool ``name``: the extensions' ``tool_call`` handlers (a block
        raises), the server's ``CallToolResult``, then their ``tool_result`` handlers (which may
        rewrite its content and error flag)."""
        tool = self.tools[name]
        runner = self.tau._runner  # the session's extension runner: its tool hooks are the pipeline's
        decision = await runner.emit_tool_call(name, call_id, args, signal)
        if decision is not None and decision.block:
            raise RuntimeError(decision.reason or "blocked by an extension")
        connection = self.connections[tool.server]
        try:
            result: dict[str, Any] = await _abortable(connection.call_tool(tool.remote, args), signal)
        except McpCallError as exc:
            raise RuntimeError(str(exc)) from None
        is_error = bool(result.get("isError"))
        try:
            seen = to_tool_result(tool.server, {**result, "isError": False})
        except RuntimeError:
            seen = text_result("")
        patch = await runner.emit_tool_result(name, call_id, args, seen, is_error, signal)
        if patch is None:
            return result
        result = dict(result)
        if patch.content is not None:
            result["content"] = [
                {"type": "text", "text": c.text}
                if isinstance(c, TextContent)
                else {"type": "image", "data": c.data, "mimeType": c.mime_type}
                for c in patch.content
            ]
        if patch.is_error is not None:
            result["isError"] = patch.is_error
        return result

    # -- /mcp actions ------------------------------------------------------------------------

    async def reconnect(self, name: str) -> ServerConnection:
        connection = self.connections[name]
        await connection.close()
        with contextlib.suppress(McpCallError):  # the state and error say what happened
            await connection.connected(connection.config.timeout_s)
        return connection

    def may_override_in_project(self, name: str) -> bool:
        """Whether ``name`` is a global server without a project override in a trusted folder (pi's
        "Enable/Disable in this project")."""
        server = self.connections[name].config
        return (
            self.trusted
            and server.scope == "global"
            and server.override is None
            and bool(server.source)
            and not server.extension
        )

    async def set_enabled(self, name: str, enabled: bool, *, in_project: bool = False) -> None:
        """Enable or disable ``name`` for this session and in the file that defines it (its project
        override; ``in_project``: a new override in the project's file)."""
        from pathlib import Path

        from tau.config.mcp_servers import project_config_path, set_server_fields

        connection = self.connections[name]
        server = replace(connection.config, enabled=enabled)
        if in_project:
            override = project_config_path(self.cwd)
            set_server_fields(override, name, {"enabled": enabled}, create_override=True)
            server = replace(server, override=str(override))
        elif (server.override or server.source) and not server.extension:
            set_server_fields(Path(server.override or server.source), name, {"enabled": enabled})
        connection.config = server
        self.config.servers[name] = server
        mine = set(self._registered_servers.get(name, ()))
        if enabled:
            await self.reconnect(name)
            direct = [n for n in mine if self.tools[n].exposure == "direct"]
            self.tau.set_active_tools([*self.tau.get_active_tools(), *direct])
        else:
            await connection.close()
            connection.state = "idle"
            self.tau.set_active_tools([n for n in self.tau.get_active_tools() if n not in mine])

    def status_lines(self) -> list[str]:
        """One block per server, as ``tau mcp list`` prints it; servers that need attention first."""
        from tau.mcp.listing import describe_server

        order = sorted(
            self.connections.values(), key=lambda c: (c.state == "connected" or not c.config.enabled, c.name)
        )
        lines: list[str] = []
        for connection in order:
            lines += describe_server(connection)
        lines += [f"config error: {error}" for error in self.config.errors]
        return lines or ["No MCP servers configured."]


def _servers_guideline(servers: list[ServerConfig]) -> str:
    """The system prompt's line about the servers behind ``tool_search`` (pi's ``mcp_servers``
    section, from the configuration only, so that it does not change when servers connect)."""
    described = [
        f"{s.name} ({s.description.strip().splitlines()[0]})" if s.description.strip() else s.name
        for s in servers
    ]
    return f"Use {TOOL_SEARCH} to find and load the tools of these MCP servers: {'; '.join(described)}"


def _has_quickjs() -> bool:
    """Whether the ``codemode`` extra is installed (a path lookup; the module loads when a script runs)."""
    import importlib.util

    return importlib.util.find_spec("quickjs") is not None


def _annotations(raw: Any) -> ToolAnnotations | None:
    """A tool's MCP ``annotations`` hints (the boolean ones), ``None`` when it declares none."""
    if not isinstance(raw, dict):
        return None

    def hint(key: str) -> bool | None:
        value = raw.get(key)
        return value if isinstance(value, bool) else None

    hints = ToolAnnotations(
        read_only_hint=hint("readOnlyHint"),
        destructive_hint=hint("destructiveHint"),
        idempotent_hint=hint("idempotentHint"),
        open_world_hint=hint("openWorldHint"),
    )
    return hints if hints.to_json() else None


def _input_schema(schema: Any) -> dict[str, Any]:
    if isinstance(schema, dict) and schema.get("type") == "object":
        return schema
    return {"type": "object", "properties": {}}


async def _abortable(work: Any, signal: AbortSignal | None) -> Any:
    """``await work``, cancelled when the tool call's ``signal`` aborts."""
    task = asyncio.ensure_future(work)
    if signal is None:
        return await task
    remove = signal.add_listener(task.cancel)
    try:
        return await task
    except asyncio.CancelledError:
        if signal.aborted:
            raise RuntimeError("aborted") from None
        raise
    finally:
        remove()
