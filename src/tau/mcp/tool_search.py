"""pi's ``tool_search`` tool: the model searches the tools not declared to it (``deferred`` and
``codemode`` exposure: extension tools and MCP tools) and the matches are declared from its next
call.

Two places register it: the MCP extension (``tau.mcp.extension``, which adds its servers' tools and
waits for servers still starting), and, without MCP, the built-in ``tool-search`` extension of this
module, registered inactive as pi's (``--tools +tool_search`` or ``defaultTools`` turns it on).
Both search the same way (``load_matches``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from tau.agent.tool import AgentToolResult, text_result
from tau.extensions.loader import ExtensionSource
from tau.extensions.types import ToolDefinition, ToolInfo
from tau.mcp.tools import SearchDocument, rank_tools

if TYPE_CHECKING:
    from tau.extensions.api import ExtensionAPI

__all__ = [
    "SEARCH_LIMIT",
    "TOOL_SEARCH",
    "extension_documents",
    "load_matches",
    "search_arguments",
    "tool_search_extension_source",
]

TOOL_SEARCH = "tool_search"
SEARCH_LIMIT = 8
SEARCHABLE = ("deferred", "codemode")
_DESCRIPTION = (
    "Search the tools that are not declared yet (such as the tools of MCP servers) by what they do, "
    f"and declare the best matches for your next call. To find an MCP tool, always use {TOOL_SEARCH}."
)
PARAMETERS = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "What the tool should do."},
        "limit": {"type": "integer", "description": f"Most tools to load (default {SEARCH_LIMIT})."},
    },
    "required": ["query"],
}


def search_arguments(params: dict[str, Any]) -> tuple[str, int]:
    """The query and the limit of a call; a ``ValueError`` for an empty query or a bad limit."""
    query = str(params.get("query", "")).strip()
    if not query:
        raise ValueError("query must not be empty")
    limit = params.get("limit", SEARCH_LIMIT)
    if not isinstance(limit, int) or isinstance(limit, bool) or limit <= 0:
        raise ValueError("limit must be a positive integer")
    return query, limit


def extension_documents(
    infos: Sequence[ToolInfo], active: Sequence[str], skip: Any = ()
) -> list[SearchDocument]:
    """What to rank of the registered tools that ``tool_search`` loads (``deferred`` or ``codemode``
    exposure, not active), but those named in ``skip``."""
    return [
        SearchDocument(
            info.name,
            info.name,
            info.description,
            (info.namespace.description or "") if info.namespace is not None else "",
            json.dumps(info.parameters),
        )
        for info in infos
        if info.exposure in SEARCHABLE and info.name not in active and info.name not in skip
    ]


def load_matches(
    tau: ExtensionAPI, query: str, limit: int, candidates: list[SearchDocument]
) -> AgentToolResult:
    """Rank ``candidates`` for ``query``, activate the best ``limit`` and say which were loaded."""
    active = tau.get_active_tools()
    matches = rank_tools(query, candidates, limit)
    if matches:
        tau.set_active_tools([*active, *(m.name for m in matches)])
        now_active = set(tau.get_active_tools())
        matches = [m for m in matches if m.name in now_active]
    if not matches:
        return text_result("No matching tools found.")
    lines = [
        f"- {m.name}: {m.description.strip().splitlines()[0] if m.description.strip() else ''}"
        for m in matches
    ]
    count = len(matches)
    text = (
        f"Loaded {count} tool{'s' if count != 1 else ''}. They are available from your next call:\n"
        + "\n".join(lines)
    )
    return AgentToolResult([*text_result(text).content], details={"loaded": [m.name for m in matches]})


def tool_search_definition(
    execute: Any, *, guidelines: Sequence[str] = (), default_active: bool = True
) -> ToolDefinition:
    """The ``tool_search`` tool running ``execute``; ``model-only``, reaching every tool."""
    return ToolDefinition(
        name=TOOL_SEARCH,
        label=TOOL_SEARCH,
        description=_DESCRIPTION,
        prompt_snippet="Search for tools that are not loaded yet and load the matches",
        prompt_guidelines=list(guidelines),
        parameters=PARAMETERS,
        execute=execute,
        default_active=default_active,
        exposure="model-only",
        reaches_tools=lambda params: "all",
    )


def tool_search_extension_source() -> ExtensionSource:
    """pi's built-in ``tool-search`` extension without MCP: ``tool_search`` over the registered
    ``deferred`` and ``codemode`` tools, registered inactive."""

    def setup(tau: ExtensionAPI) -> None:
        async def execute(
            tool_call_id: str, params: dict[str, Any], signal: Any, on_update: Any, ctx: Any
        ) -> AgentToolResult:
            query, limit = search_arguments(params)
            candidates = extension_documents(tau.get_all_tools(), tau.get_active_tools())
            return load_matches(tau, query, limit, candidates)

        tau.register_tool(tool_search_definition(execute, default_active=False))

    return ExtensionSource("inline", "tool-search", "<builtin:tool-search>", setup=setup)
