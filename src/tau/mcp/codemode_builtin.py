"""pi's built-in ``codemode`` extension: the ``codemode`` tool, registered inactive.

``--tools +codemode`` or ``"defaultTools": ["+codemode"]`` turns it on; its scripts call the tools
declared to the model (``read``, ``bash``, extension tools...) and, when the MCP extension loaded,
the MCP tools. With MCP servers whose tools only scripts reach, the MCP extension makes the tool
(it knows those servers) and hands it here in ``slot``, so one ``codemode`` tool serves both.
tau loads this extension only when ``codemode`` is named (``--tools``, ``defaultTools``,
``-e builtin:codemode``) or the MCP extension loads: a session that never names it costs nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tau.extensions.loader import ExtensionSource

if TYPE_CHECKING:
    from tau.extensions.api import ExtensionAPI
    from tau.extensions.types import ToolDefinition
    from tau.mcp.codemode_loadout import CodemodePresentation

__all__ = ["codemode_extension_source"]


def codemode_extension_source(
    slot: list[ToolDefinition] | None = None, presentation: CodemodePresentation | None = None
) -> ExtensionSource:
    """The extension source; ``slot`` holds the MCP extension's tool when it made one (the MCP
    source must load first); ``presentation``: the ``codemode`` settings."""

    def setup(tau: ExtensionAPI) -> None:
        if slot:
            tau.register_tool(slot[0])
            return
        from tau.mcp.codemode import codemode_tool
        from tau.mcp.codemode_loadout import CodemodePresentation, codemode_prepare_loadout

        tau.register_tool(
            codemode_tool(
                None,
                default_active=False,
                append_entry=tau.append_entry,
                prepare_loadout=codemode_prepare_loadout(presentation or CodemodePresentation()),
                tool_infos=tau.get_all_tools,
            )
        )

    return ExtensionSource("inline", "codemode", "<builtin:codemode>", setup=setup)
