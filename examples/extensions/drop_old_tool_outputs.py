"""Drop old tool outputs from what the model sees, keeping the session file whole.

Hooks ``context``, which runs before every model call on a copy of the conversation. Tool results
older than the last ``KEEP_TURNS`` assistant turns are replaced by a one-line stub when they are
longer than ``MIN_CHARS``: a file read or a test run from an hour ago rarely matters, but it
still costs tokens on every request. The session keeps the full outputs, so ``/tree``, export
and compaction still see them.

    tau -e examples/extensions/drop_old_tool_outputs.py
"""

from __future__ import annotations

from typing import Any

import msgspec

from tau.agent.messages import AgentMessage
from tau.ai.types import AssistantMessage, TextContent, ToolResultMessage
from tau.extensions import ContextEvent, ExtensionAPI, ExtensionContext

KEEP_TURNS = 2
MIN_CHARS = 200


def output_size(message: ToolResultMessage) -> int:
    return sum(len(block.text) for block in message.content if isinstance(block, TextContent))


def drop_old_outputs(messages: list[AgentMessage], keep_turns: int = KEEP_TURNS) -> list[AgentMessage]:
    """``messages`` with the long tool outputs before the last ``keep_turns`` replies stubbed."""
    replies = [i for i, m in enumerate(messages) if isinstance(m, AssistantMessage)]
    if len(replies) <= keep_turns:
        return messages
    cutoff = replies[-keep_turns]
    out: list[AgentMessage] = []
    for index, message in enumerate(messages):
        if index < cutoff and isinstance(message, ToolResultMessage) and output_size(message) > MIN_CHARS:
            stub = f"[{output_size(message)} characters of {message.tool_name} output dropped; run it again if needed]"
            message = msgspec.structs.replace(message, content=[TextContent(stub)])
        out.append(message)
    return out


def setup(tau: ExtensionAPI) -> None:
    @tau.on("context")
    def trim(event: ContextEvent, ctx: ExtensionContext) -> dict[str, Any]:
        return {"messages": drop_old_outputs(event.messages)}
