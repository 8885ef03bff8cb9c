"""Writing the summary: one plain model call (no tools, no agent loop) per part.

``compact`` summarises a ``CompactionPreparation``: the history, merged into the previous summary
when there is one, and the opening of a split turn (both calls run at once). The program then
appends the lists of files read and modified; the model is never asked to remember them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass

from tau.agent.messages import AgentMessage
from tau.ai.abort import AbortSignal
from tau.ai.streaming import complete_simple
from tau.ai.types import (
    AssistantMessage,
    Context,
    JsonObject,
    Model,
    TextContent,
    ThinkingLevelOrOff,
    UserMessage,
)
from tau.compaction.errors import CompactionAbortedError, SummarizationError
from tau.compaction.file_ops import FileDetails, format_file_lists
from tau.compaction.prepare import CompactionPreparation
from tau.compaction.prompts import (
    INITIAL_SUMMARY_INSTRUCTIONS,
    NO_PRIOR_HISTORY,
    SPLIT_TURN_HEADING,
    SUMMARIZER_SYSTEM_PROMPT,
    TURN_PREFIX_INSTRUCTIONS,
    UPDATE_SUMMARY_INSTRUCTIONS,
    conversation_block,
    previous_summary_block,
    with_focus,
)
from tau.compaction.serialize import serialize_conversation
from tau.context.convert import convert_to_llm

__all__ = [
    "CompactionResult",
    "SummaryRequest",
    "compact",
    "generate_summary",
    "generate_turn_prefix_summary",
    "reply_text",
    "request_summary",
]


@dataclass(frozen=True, slots=True)
class CompactionResult:
    """What a compaction entry stores: the summary, where the kept history starts, the estimated
    context size before, and the file lists."""

    summary: str
    first_kept_entry_id: str
    tokens_before: int
    details: FileDetails | None = None

    def details_json(self) -> JsonObject | None:
        return self.details.to_json() if self.details is not None else None

    def to_json(self) -> JsonObject:
        out: JsonObject = {
            "summary": self.summary,
            "firstKeptEntryId": self.first_kept_entry_id,
            "tokensBefore": self.tokens_before,
        }
        if self.details is not None:
            out["details"] = self.details.to_json()
        return out


@dataclass(frozen=True, slots=True)
class SummaryRequest:
    """How to reach the summarising model: its key and headers, an abort signal, and the session's
    thinking level (used only by reasoning models)."""

    model: Model
    api_key: str | None = None
    headers: dict[str, str] | None = None
    signal: AbortSignal | None = None
    thinking_level: ThinkingLevelOrOff = "off"

    def reasoning(self) -> ThinkingLevelOrOff | None:
        if self.model.reasoning and self.thinking_level != "off":
            return self.thinking_level
        return None


async def request_summary(
    request: SummaryRequest, prompt_text: str, max_tokens: int, *, reasoning: bool = True
) -> AssistantMessage:
    """One completion of the summariser prompt; raises ``CompactionAbortedError`` if aborted."""
    context = Context(
        system_prompt=SUMMARIZER_SYSTEM_PROMPT,
        messages=[UserMessage([TextContent(prompt_text)])],
    )
    reply = await complete_simple(
        request.model,
        context,
        max_tokens=max_tokens,
        api_key=request.api_key,
        headers=request.headers,
        signal=request.signal,
        reasoning=request.reasoning() if reasoning else None,
    )
    if reply.stop_reason == "aborted" or (request.signal is not None and request.signal.aborted):
        raise CompactionAbortedError("Compaction aborted")
    return reply


def reply_text(reply: AssistantMessage) -> str:
    """The text blocks of a reply, one per line."""
    return "\n".join(b.text for b in reply.content if isinstance(b, TextContent))


async def generate_summary(
    messages: Sequence[AgentMessage],
    request: SummaryRequest,
    reserve_tokens: int,
    *,
    custom_instructions: str | None = None,
    previous_summary: str | None = None,
) -> str:
    """The structured summary of ``messages``, merged into ``previous_summary`` when given.

    Output is capped at 80% of ``reserve_tokens``. Raises ``SummarizationError`` on an error reply.
    """
    instructions = UPDATE_SUMMARY_INSTRUCTIONS if previous_summary else INITIAL_SUMMARY_INSTRUCTIONS
    text = conversation_block(serialize_conversation(convert_to_llm(messages)))
    if previous_summary:
        text += previous_summary_block(previous_summary)
    text += with_focus(instructions, custom_instructions)
    reply = await request_summary(request, text, int(0.8 * reserve_tokens))
    if reply.stop_reason == "error":
        raise SummarizationError(f"Summarization failed: {reply.error_message or 'unknown error'}")
    return reply_text(reply)


async def generate_turn_prefix_summary(
    messages: Sequence[AgentMessage], request: SummaryRequest, reserve_tokens: int
) -> str:
    """A short summary of the opening of a split turn, capped at half of ``reserve_tokens``."""
    text = conversation_block(serialize_conversation(convert_to_llm(messages))) + TURN_PREFIX_INSTRUCTIONS
    reply = await request_summary(request, text, int(0.5 * reserve_tokens))
    if reply.stop_reason == "error":
        raise SummarizationError(
            f"Turn prefix summarization failed: {reply.error_message or 'unknown error'}"
        )
    return reply_text(reply)


async def compact(
    preparation: CompactionPreparation,
    request: SummaryRequest,
    *,
    custom_instructions: str | None = None,
) -> CompactionResult:
    """Summarise what ``preparation`` selected and return the compaction entry's content.

    An empty selection (a manual compaction that keeps everything) is summarised as an empty
    conversation, as pi does. Raises ``SummarizationError`` when the model answers with an error,
    ``CompactionAbortedError`` when aborted.
    """
    history = preparation.messages_to_summarize
    prefix = preparation.turn_prefix_messages
    reserve = preparation.settings.reserve_tokens

    def history_summary() -> Awaitable[str]:
        return generate_summary(
            history,
            request,
            reserve,
            custom_instructions=custom_instructions,
            previous_summary=preparation.previous_summary,
        )

    if preparation.is_split_turn and prefix:
        if history:
            summary_text, prefix_text = await _both(
                history_summary(), generate_turn_prefix_summary(prefix, request, reserve)
            )
        else:
            summary_text = NO_PRIOR_HISTORY
            prefix_text = await generate_turn_prefix_summary(prefix, request, reserve)
        summary = f"{summary_text}\n\n---\n\n{SPLIT_TURN_HEADING}\n\n{prefix_text}"
    else:
        summary = await history_summary()
    details = preparation.file_ops.details()
    return CompactionResult(
        summary=summary + format_file_lists(details),
        first_kept_entry_id=preparation.first_kept_entry_id,
        tokens_before=preparation.tokens_before,
        details=details,
    )


async def _both(first: Awaitable[str], second: Awaitable[str]) -> tuple[str, str]:
    """Run both at once; when one fails the other is cancelled and the failure is raised."""
    tasks = [asyncio.ensure_future(first), asyncio.ensure_future(second)]
    try:
        done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    except BaseException:
        for task in tasks:
            task.cancel()
        raise
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    for task in tasks:
        if task in done and task.exception() is not None:
            raise task.exception()  # type: ignore[misc]
    return tasks[0].result(), tasks[1].result()
