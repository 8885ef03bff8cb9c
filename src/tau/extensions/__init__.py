"""tau.extensions: Python extensions that hook into every step of a session.

An extension is a ``.py`` file, a package folder, or an installed entry point (group
``tau.extensions``) exposing ``setup(tau)``:

    from tau.extensions import ToolDefinition

    def setup(tau):
        @tau.on("tool_call")
        async def gate(event, ctx):
            if event.tool_name == "bash" and "sudo" in event.input.get("command", ""):
                if not await ctx.ui.confirm("Allow sudo?", event.input["command"]):
                    return {"block": True, "reason": "sudo needs the user's consent"}

The runtime finds extensions (``discover_extensions``), loads them into an ``ExtensionRunner``
(``load_extensions``), binds the runner to the session (``runner.bind(host, ui)``) and calls it at
each hook point. Names are imported on first access.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tau._lazy import lazy_exports

if TYPE_CHECKING:
    from tau.extensions.api import ExtensionAPI
    from tau.extensions.context import (
        ExtensionCommandContext,
        ExtensionContext,
        ExtensionToolContext,
        ProjectTrustContext,
    )
    from tau.extensions.custom_editor import CustomEditor
    from tau.extensions.errors import (
        ExtensionDiagnostic,
        ExtensionError,
        ExtensionErrorReport,
        ExtensionNotReadyError,
        MalformedResultError,
        StaleContextError,
    )
    from tau.extensions.events import (
        EVENT_TYPES,
        AfterProviderResponseEvent,
        AgentEndEvent,
        AgentStartEvent,
        BeforeAgentStartEvent,
        BeforeProviderHeadersEvent,
        BeforeProviderRequestEvent,
        CacheWarmingDecisionEvent,
        ContextEvent,
        ContextWithSystemEvent,
        ExtensionEvent,
        InputEvent,
        McpServersChangeEvent,
        MessageEndEvent,
        MessageStartEvent,
        MessageUpdateEvent,
        ModelSelectEvent,
        ProjectTrustEvent,
        ProviderStreamEvent,
        ResourcesDiscoverEvent,
        SessionBeforeCompactEvent,
        SessionBeforeForkEvent,
        SessionBeforeSwitchEvent,
        SessionBeforeTreeEvent,
        SessionCompactEvent,
        SessionCompactFailedEvent,
        SessionShutdownEvent,
        SessionStartEvent,
        SessionTreeEvent,
        ThinkingLevelSelectEvent,
        ToolCallEvent,
        ToolExecutionEndEvent,
        ToolExecutionStartEvent,
        ToolExecutionUpdateEvent,
        ToolResultEvent,
        TreePreparation,
        TurnEndEvent,
        TurnStartEvent,
        UiPromptEndEvent,
        UiPromptStartEvent,
        UserBashEvent,
    )
    from tau.extensions.host import ExtensionHost, ProviderSink
    from tau.extensions.loader import (
        ExtensionDiscovery,
        ExtensionSource,
        discover_extensions,
        load_extensions,
        load_extensions_sync,
    )
    from tau.extensions.results import (
        BeforeAgentStartOutcome,
        BeforeAgentStartResult,
        CompactionOverride,
        ContextResult,
        InputResult,
        MessageEndResult,
        ProjectTrustResult,
        ResourcesDiscoverResult,
        SessionBeforeCompactResult,
        SessionBeforeForkResult,
        SessionBeforeSwitchResult,
        SessionBeforeTreeResult,
        ToolCallResult,
        ToolResultPatch,
        TreeSummary,
        UserBashResult,
    )
    from tau.extensions.runner import ExtensionRunner
    from tau.extensions.types import (
        CommandInfo,
        ExecResult,
        MarkdownContext,
        RegisteredMcpServer,
        RenderOptions,
        ToolAnnotations,
        ToolDefinition,
        ToolExposure,
        ToolInfo,
        ToolLoadout,
        ToolLoadoutChanges,
        ToolNamespace,
        ToolRenderer,
    )
    from tau.extensions.ui import ExtensionUI, NoUI
    from tau.extensions.virtual_models import (
        FailedRoute,
        ModelRoute,
        ModelRouteRequest,
        PreviousRoute,
        VirtualModelDefinition,
    )

__all__ = [
    "EVENT_TYPES",
    "AfterProviderResponseEvent",
    "AgentEndEvent",
    "AgentStartEvent",
    "BeforeAgentStartEvent",
    "BeforeAgentStartOutcome",
    "BeforeAgentStartResult",
    "BeforeProviderHeadersEvent",
    "BeforeProviderRequestEvent",
    "CacheWarmingDecisionEvent",
    "CommandInfo",
    "CompactionOverride",
    "ContextEvent",
    "ContextResult",
    "ContextWithSystemEvent",
    "CustomEditor",
    "ExecResult",
    "ExtensionAPI",
    "ExtensionCommandContext",
    "ExtensionContext",
    "ExtensionDiagnostic",
    "ExtensionDiscovery",
    "ExtensionError",
    "ExtensionErrorReport",
    "ExtensionEvent",
    "ExtensionHost",
    "ExtensionNotReadyError",
    "ExtensionRunner",
    "ExtensionSource",
    "ExtensionToolContext",
    "ExtensionUI",
    "FailedRoute",
    "InputEvent",
    "InputResult",
    "MalformedResultError",
    "MarkdownContext",
    "McpServersChangeEvent",
    "MessageEndEvent",
    "MessageEndResult",
    "MessageStartEvent",
    "MessageUpdateEvent",
    "ModelRoute",
    "ModelRouteRequest",
    "ModelSelectEvent",
    "NoUI",
    "PreviousRoute",
    "ProjectTrustContext",
    "ProjectTrustEvent",
    "ProjectTrustResult",
    "ProviderSink",
    "ProviderStreamEvent",
    "RegisteredMcpServer",
    "RenderOptions",
    "ResourcesDiscoverEvent",
    "ResourcesDiscoverResult",
    "SessionBeforeCompactEvent",
    "SessionBeforeCompactResult",
    "SessionBeforeForkEvent",
    "SessionBeforeForkResult",
    "SessionBeforeSwitchEvent",
    "SessionBeforeSwitchResult",
    "SessionBeforeTreeEvent",
    "SessionBeforeTreeResult",
    "SessionCompactEvent",
    "SessionCompactFailedEvent",
    "SessionShutdownEvent",
    "SessionStartEvent",
    "SessionTreeEvent",
    "StaleContextError",
    "ThinkingLevelSelectEvent",
    "ToolAnnotations",
    "ToolCallEvent",
    "ToolCallResult",
    "ToolDefinition",
    "ToolExecutionEndEvent",
    "ToolExecutionStartEvent",
    "ToolExecutionUpdateEvent",
    "ToolExposure",
    "ToolInfo",
    "ToolLoadout",
    "ToolLoadoutChanges",
    "ToolNamespace",
    "ToolRenderer",
    "ToolResultEvent",
    "ToolResultPatch",
    "TreePreparation",
    "TreeSummary",
    "TurnEndEvent",
    "TurnStartEvent",
    "UiPromptEndEvent",
    "UiPromptStartEvent",
    "UserBashEvent",
    "UserBashResult",
    "VirtualModelDefinition",
    "discover_extensions",
    "load_extensions",
    "load_extensions_sync",
]

# Searched in this order: what extension authors import first, the loader and runner last.
_MODULES = (
    "types",
    "virtual_models",
    "errors",
    "events",
    "results",
    "ui",
    "custom_editor",
    "context",
    "host",
    "api",
    "runner",
    "loader",
)

__getattr__, __dir__ = lazy_exports(globals(), _MODULES)
