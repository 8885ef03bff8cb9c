"""Custom compaction: write the compaction summary without asking the model.

Hooks ``session_before_compact``, which runs when tau is about to summarise older history (by
``/compact`` or automatically). Instead of the model's summary this returns a plain, predictable
record: the user's requests in order, how many tool calls ran, and the files read and modified.
It costs no tokens and never fails; the trade-off is that it keeps no reasoning. Return
``{"cancel": True}`` instead to forbid compaction altogether.

    tau -e examples/extensions/custom_compaction.py
"""

from __future__ import annotations

from typing import Any

from tau.agent.messages import AgentMessage
from tau.ai.types import AssistantMessage, TextContent, ToolCall, UserMessage
from tau.compaction import CompactionPreparation
from tau.extensions import ExtensionAPI, ExtensionContext, SessionBeforeCompactEvent


def first_line(message: UserMessage) -> str:
    text = (
        message.content
        if isinstance(message.content, str)
        else " ".join(block.text for block in message.content if isinstance(block, TextContent))
    )
    line = text.strip().splitlines()[0] if text.strip() else "(no text)"
    return line if len(line) <= 120 else line[:117] + "..."


def summarize(preparation: CompactionPreparation) -> str:
    messages: list[AgentMessage] = [*preparation.messages_to_summarize, *preparation.turn_prefix_messages]
    requests = [first_line(m) for m in messages if isinstance(m, UserMessage)]
    calls = sum(
        isinstance(b, ToolCall) for m in messages if isinstance(m, AssistantMessage) for b in m.content
    )
    ops = preparation.file_ops
    modified = sorted(ops.written | ops.edited)
    read = sorted(ops.read - set(modified))
    parts = []
    if preparation.previous_summary:
        parts += ["## Earlier", preparation.previous_summary.strip(), ""]
    parts.append("## User requests")
    parts += [f"{i}. {r}" for i, r in enumerate(requests, 1)] or ["(none)"]
    parts += ["", f"## Work\n{calls} tool calls."]
    if read:
        parts += ["", "<read-files>", *read, "</read-files>"]
    if modified:
        parts += ["", "<modified-files>", *modified, "</modified-files>"]
    return "\n".join(parts)


def setup(tau: ExtensionAPI) -> None:
    @tau.on("session_before_compact")
    def compact(event: SessionBeforeCompactEvent, ctx: ExtensionContext) -> dict[str, Any]:
        preparation = event.preparation
        ops = preparation.file_ops
        modified = sorted(ops.written | ops.edited)
        return {
            "compaction": {
                "summary": summarize(preparation),
                "firstKeptEntryId": preparation.first_kept_entry_id,
                "tokensBefore": preparation.tokens_before,
                "details": {"readFiles": sorted(ops.read - set(modified)), "modifiedFiles": modified},
            }
        }
