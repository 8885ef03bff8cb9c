"""Writing the summary: one plain model call (no tools, no agent loop) per part.

``compact`` summarises a ``CompactionPreparation``: the history, merged into the previous summary
when there is one, then the opening of a split turn (one call after the other, as a local server
may answer only one at a time). The program then appends the lists of files read and modified; the
model is never asked to remember them.

Given the conversation as the agent last sent it (``conversation``), the history summary is asked
for as that very request plus one appended instruction, so the provider serves everything but the
instruction from its prompt cache (issue #31). That request is not used, and today's one is sent
instead (the history serialised under the summariser's own system prompt), when the conversation
does not end with a finished reply (a refused or cut-off request, an overflowing prompt), when it
leaves too little room for the summary, and when the reply is not a plain summary (a tool call, an
error, a cut-off text). The cached request summarises the whole conversation, a split turn's
opening included, in one summary of the usual format.

A summary may use the model's whole output limit (``summary_max_tokens``): a reasoning model can
think at length before writing it. ``reserveTokens`` only decides when compaction starts. A reply
cut at that limit is incomplete and is refused rather than stored. Summary requests ask the
provider not to cache their prompt.
"""

from __future__ import annotations

from collections.abc import Sequence

from msgspec import Struct

from tau.agent.messages import AgentMessage
from tau.ai.abort import AbortSignal
from tau.ai.output_budget import clamp_max_tokens_to_context
from tau.ai.streaming import complete_simple
from tau.ai.types import (
    AssistantMessage,
    Context,
    JsonObject,
    Model,
    TextContent,
    ThinkingLevelOrOff,
    Usage,
    UserMessage,
)
from tau.compaction.errors import CompactionAbortedError, NothingToCompactError, SummarizationError
from tau.compaction.file_ops import FileDetails, format_file_lists
from tau.compaction.prepare import CompactionPreparation
from tau.compaction.prompts import (
    CACHED_SUMMARY_LEAD,
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
from tau.compaction.retry import SummaryRetry, with_retries
from tau.compaction.serialize import serialize_conversation
from tau.compaction.tokens import CHARS_PER_TOKEN
from tau.context.convert import convert_to_llm

__all__ = [
    "CompactionResult",
    "SummaryRequest",
    "compact",
    "generate_summary",
    "generate_turn_prefix_summary",
    "reply_text",
    "request_summary",
    "summary_max_tokens",
]

# Room kept free beside the estimated input: a fixed margin, or 15% of the input when that is
# larger (a gateway may count the input higher than the estimate), as long as the 15% still leaves
# at least ``_MIN_ROOMY_OUTPUT`` to write in; else only the fixed margin, with output at most that.
_SAFETY_TOKENS = 4096
_SAFETY_RATIO = 0.15
_MIN_ROOMY_OUTPUT = 32768
# Below this much room for the summary, the cached conversation is not asked for one.
_MIN_CACHED_SUMMARY_TOKENS = 2048


class CompactionResult(Struct, frozen=True):
    """What a compaction entry stores: the summary, where the kept history starts, the estimated
    context size before, the file lists, and what writing the summary cost (counted in the
    session's totals). ``estimated_tokens_after``, set once the compaction is saved, estimates the
    rebuilt context (four characters a token), for showing how much was freed."""

    summary: str
    first_kept_entry_id: str
    tokens_before: int
    details: FileDetails | None = None
    usage: Usage | None = None
    estimated_tokens_after: int | None = None

    def details_json(self) -> JsonObject | None:
        return self.details.to_json() if self.details is not None else None

    def to_json(self) -> JsonObject:
        out: JsonObject = {
            "summary": self.summary,
            "firstKeptEntryId": self.first_kept_entry_id,
            "tokensBefore": self.tokens_before,
        }
        if self.estimated_tokens_after is not None:
            out["estimatedTokensAfter"] = self.estimated_tokens_after
        if self.usage is not None:
            out["usage"] = self.usage.to_json()
        if self.details is not None:
            out["details"] = self.details.to_json()
        return out


class SummaryRequest(Struct, frozen=True):
    """How to reach the summarising model: its key and headers, an abort signal, the session's
    thinking level (used only by reasoning models), and how to retry a passing failure."""

    model: Model
    api_key: str | None = None
    headers: dict[str, str] | None = None
    signal: AbortSignal | None = None
    thinking_level: ThinkingLevelOrOff = "off"
    retry: SummaryRetry | None = None

    def reasoning(self) -> ThinkingLevelOrOff | None:
        if self.model.reasoning and self.thinking_level != "off":
            return self.thinking_level
        return None


def summary_max_tokens(model: Model, input_chars: int) -> int | None:
    """The output budget of a summary request of ``input_chars`` characters: the model's output
    limit, lowered when needed so that the estimated input, a safety margin and the output fit the
    context window (at least 1). ``None`` for a model without a known output limit (the client's
    default applies)."""
    if model.max_tokens <= 0:
        return None
    if model.context_window <= 0:
        return model.max_tokens
    estimate = -(-input_chars // CHARS_PER_TOKEN)
    margin = max(_SAFETY_TOKENS, -(-estimate * 15 // 100))
    room = model.context_window - estimate - margin
    if room < _MIN_ROOMY_OUTPUT:
        room = min(_MIN_ROOMY_OUTPUT, model.context_window - estimate - _SAFETY_TOKENS)
    return min(model.max_tokens, max(1, room))


async def request_summary(request: SummaryRequest, prompt_text: str) -> AssistantMessage:
    """One completion of the summariser prompt, retried per ``request.retry``; raises
    ``CompactionAbortedError`` if aborted."""
    context = Context(
        system_prompt=SUMMARIZER_SYSTEM_PROMPT,
        messages=[UserMessage([TextContent(prompt_text)])],
    )

    async def attempt() -> AssistantMessage:
        return await complete_simple(
            request.model,
            context,
            max_tokens=summary_max_tokens(request.model, len(SUMMARIZER_SYSTEM_PROMPT) + len(prompt_text)),
            api_key=request.api_key,
            headers=request.headers,
            signal=request.signal,
            reasoning=request.reasoning(),
            cache_retention="none",  # a one-off prompt: writing it to the provider's cache is waste
        )

    reply = await with_retries(attempt, request.retry, request.signal)
    if reply.stop_reason == "aborted" or (request.signal is not None and request.signal.aborted):
        raise CompactionAbortedError("Compaction aborted")
    return reply


def failure(reply: AssistantMessage, label: str) -> str | None:
    """Why ``reply`` cannot be stored as a summary: an error, or a text cut at the output limit."""
    if reply.stop_reason == "error":
        return f"{label} failed: {reply.error_message or 'unknown error'}"
    if reply.stop_reason == "length":
        return f"{label} failed: the reply reached the output token limit, so the summary is incomplete"
    return None


def reply_text(reply: AssistantMessage) -> str:
    """The text blocks of a reply, one per line."""
    return "\n".join(b.text for b in reply.content if isinstance(b, TextContent))


async def generate_summary(
    messages: Sequence[AgentMessage],
    request: SummaryRequest,
    *,
    custom_instructions: str | None = None,
    previous_summary: str | None = None,
) -> str:
    """The structured summary of ``messages``, merged into ``previous_summary`` when given.

    Raises ``SummarizationError`` on an error reply or one cut at the output limit.
    """
    text, _ = await _history_summary(messages, request, custom_instructions, previous_summary)
    return text


async def _history_summary(
    messages: Sequence[AgentMessage],
    request: SummaryRequest,
    custom_instructions: str | None,
    previous_summary: str | None,
) -> tuple[str, Usage]:
    instructions = UPDATE_SUMMARY_INSTRUCTIONS if previous_summary else INITIAL_SUMMARY_INSTRUCTIONS
    text = conversation_block(serialize_conversation(convert_to_llm(messages)))
    if previous_summary:
        text += previous_summary_block(previous_summary)
    text += with_focus(instructions, custom_instructions)
    return _checked(await request_summary(request, text), "Summarization")


async def generate_turn_prefix_summary(
    messages: Sequence[AgentMessage], request: SummaryRequest, *, custom_instructions: str | None = None
) -> str:
    """A short summary of the opening of a split turn (with the ``/compact`` focus, if any)."""
    text, _ = await _turn_prefix_summary(messages, request, custom_instructions)
    return text


async def _turn_prefix_summary(
    messages: Sequence[AgentMessage], request: SummaryRequest, custom_instructions: str | None
) -> tuple[str, Usage]:
    text = conversation_block(serialize_conversation(convert_to_llm(messages)))
    text += with_focus(TURN_PREFIX_INSTRUCTIONS, custom_instructions)
    return _checked(await request_summary(request, text), "Turn prefix summarization")


def _checked(reply: AssistantMessage, label: str) -> tuple[str, Usage]:
    problem = failure(reply, label)
    if problem is not None:
        raise SummarizationError(problem)
    return reply_text(reply), reply.usage


def _add_usage(first: Usage, second: Usage) -> Usage:
    """The usage of two requests together."""
    total = Usage(
        input=first.input + second.input,
        output=first.output + second.output,
        cache_read=first.cache_read + second.cache_read,
        cache_write=first.cache_write + second.cache_write,
    )
    total.recompute_total()
    for name in ("input", "output", "cache_read", "cache_write", "total"):
        setattr(total.cost, name, getattr(first.cost, name) + getattr(second.cost, name))
    return total


async def _summary_of_conversation(
    conversation: Context, request: SummaryRequest, custom_instructions: str | None
) -> tuple[str | None, Usage] | None:
    """The summary asked of the cached conversation plus one instruction: ``(text, usage)``;
    ``(None, usage)`` when the reply is not a plain summary; ``None`` when not asked (module
    docstring says when)."""
    last = conversation.messages[-1] if conversation.messages else None
    if not isinstance(last, AssistantMessage) or last.stop_reason != "stop":
        return None
    instruction = f"{CACHED_SUMMARY_LEAD}\n\n{with_focus(INITIAL_SUMMARY_INSTRUCTIONS, custom_instructions)}"
    context = Context(
        messages=[*conversation.messages, UserMessage([TextContent(instruction)])],
        system_prompt=conversation.system_prompt,
        tools=conversation.tools,
        anchor=conversation.anchor,
        updates=conversation.updates,
    )
    # The room left beside the conversation as the request will measure it: the provider's own
    # count of the last reply's input, not a count of characters (``tau.ai.output_budget``).
    model = request.model
    max_tokens = (
        clamp_max_tokens_to_context(model.context_window, context, model.max_tokens)
        if model.max_tokens > 0
        else None
    )
    if max_tokens is not None and max_tokens < _MIN_CACHED_SUMMARY_TOKENS:
        return None

    async def attempt() -> AssistantMessage:
        return await complete_simple(
            request.model,
            context,
            max_tokens=max_tokens,
            api_key=request.api_key,
            headers=request.headers,
            signal=request.signal,
            reasoning=request.reasoning(),
        )

    reply = await with_retries(attempt, request.retry, request.signal)
    if reply.stop_reason == "aborted" or (request.signal is not None and request.signal.aborted):
        raise CompactionAbortedError("Compaction aborted")
    text = reply_text(reply)
    if reply.stop_reason != "stop" or reply.tool_calls() or not text.strip():
        return None, reply.usage
    return text, reply.usage


async def compact(
    preparation: CompactionPreparation,
    request: SummaryRequest,
    *,
    custom_instructions: str | None = None,
    conversation: Context | None = None,
) -> CompactionResult:
    """Summarise what ``preparation`` selected and return the compaction entry's content.

    A split turn with no earlier history to summarise keeps the previous summary as its history
    part. Raises ``NothingToCompactError`` (no call made) when nothing was selected,
    ``SummarizationError`` when the model answers with an error, ``CompactionAbortedError`` when
    aborted.
    """
    history = preparation.messages_to_summarize
    prefix = preparation.turn_prefix_messages
    if not history and not prefix:
        raise NothingToCompactError("Nothing to compact (session too small)")
    previous = preparation.previous_summary
    usage: Usage | None = None
    cached: tuple[str | None, Usage] | None = None
    if conversation is not None:
        cached = await _summary_of_conversation(conversation, request, custom_instructions)
    if cached is not None and cached[0] is not None:
        summary, usage = cached[0], cached[1]
    elif preparation.is_split_turn and prefix:
        summary_text = previous or NO_PRIOR_HISTORY
        if history:
            summary_text, usage = await _history_summary(history, request, custom_instructions, previous)
        prefix_text, prefix_usage = await _turn_prefix_summary(prefix, request, custom_instructions)
        usage = prefix_usage if usage is None else _add_usage(usage, prefix_usage)
        summary = f"{summary_text}\n\n---\n\n{SPLIT_TURN_HEADING}\n\n{prefix_text}"
    else:
        summary, usage = await _history_summary(history, request, custom_instructions, previous)
    if cached is not None and cached[0] is None:  # the cached attempt's cost counts too
        usage = cached[1] if usage is None else _add_usage(cached[1], usage)
    details = preparation.file_ops.details()
    return CompactionResult(
        summary=summary + format_file_lists(details),
        first_kept_entry_id=preparation.first_kept_entry_id,
        tokens_before=preparation.tokens_before,
        details=details,
        usage=usage,
    )
