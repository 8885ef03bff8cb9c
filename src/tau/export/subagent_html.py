"""A ``task`` call's child conversation inside the page (issue #35).

The child's transcript is a session file of its own (the result's ``details.sessionFile``); the
export reads it and shows its messages in a collapsed box under the call's result, the child's own
tool calls rendered as the parent's are. A file that is gone or unreadable shows nothing.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Protocol

from tau.ai.types import AssistantMessage, TextContent, ToolCall, ToolResultMessage, UserMessage
from tau.export.errors import ExportError
from tau.export.markup import escape, plain_code
from tau.export.source import source_from_file
from tau.session.entries import MessageEntry


class CallRenderer(Protocol):
    """What a transcript needs of ``tool_html.ToolHtml``."""

    def call(self, call: ToolCall) -> str: ...

    def result(self, message: ToolResultMessage) -> str: ...


RendererFactory = Callable[[Mapping[str, ToolCall], Mapping[str, ToolResultMessage], int], CallRenderer]
"""Makes the renderer of one transcript's calls: (calls, results, depth)."""

MAX_NESTING = 4
"""Children of children are shown down to this depth (the task tool allows three)."""


def child_transcript(details: object, renderer_for: RendererFactory, depth: int = 0) -> str:
    """The collapsed transcript of the child whose file ``details`` names, or ``""``."""
    path = details.get("sessionFile") if isinstance(details, dict) else None
    if not isinstance(path, str) or depth >= MAX_NESTING or not os.path.isfile(path):
        return ""
    try:
        source = source_from_file(path)
    except ExportError:
        return ""
    messages = [e.message for e in source.entries if isinstance(e, MessageEntry)]
    calls = {
        block.id: block
        for m in messages
        if isinstance(m, AssistantMessage)
        for block in m.content
        if isinstance(block, ToolCall)
    }
    results = {m.tool_call_id: m for m in messages if isinstance(m, ToolResultMessage)}
    renderer = renderer_for(calls, results, depth + 1)
    parts = [_message(m, renderer) for m in messages]
    body = "".join(part for part in parts if part)
    agent = details.get("agent") if isinstance(details, dict) else None
    title = f"sub-agent {agent}" if isinstance(agent, str) and agent else "sub-agent"
    return (
        f'<details class="subagent"><summary>{escape(title)} transcript '
        f'<span class="dim">{escape(os.path.basename(path))}</span></summary>{body}</details>'
    )


def _message(message: object, renderer: CallRenderer) -> str:
    if isinstance(message, UserMessage):
        content = message.content
        text = (
            content
            if isinstance(content, str)
            else "".join(b.text for b in content if isinstance(b, TextContent))
        )
        return f'<div class="subagent-user">{plain_code(text)}</div>'
    if isinstance(message, AssistantMessage):
        parts = []
        for block in message.content:
            if isinstance(block, TextContent) and block.text.strip():
                parts.append(f'<div class="subagent-text">{plain_code(block.text)}</div>')
            elif isinstance(block, ToolCall):
                parts.append(renderer.call(block))
        return "".join(parts)
    if isinstance(message, ToolResultMessage):
        return renderer.result(message)
    return ""
