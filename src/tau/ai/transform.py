"""Preparing a conversation for replay to a target model, possibly not the one that wrote it.

``transform_messages`` runs at the start of every API's message conversion: it hides images from
models that cannot see them, strips provider-private data (signatures, foreign reasoning) from
other models' turns, rewrites tool-call ids into the target's alphabet, and repairs the
call/result pairing every API insists on. The ``normalize_id_*`` functions are the per-API id rules.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Hashable, Iterable
from operator import is_

from msgspec.structs import replace

from tau.ai.short_hash import short_hash
from tau.ai.transport.request_cache import MessageMemo, fingerprint
from tau.ai.types import (
    AssistantContent,
    AssistantMessage,
    ImageContent,
    Message,
    Model,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserContent,
    UserMessage,
    now_ms,
)

ToolCallIdNormalizer = Callable[[str, Model, AssistantMessage], str]
"""Maps a foreign tool-call id to one the target accepts: ``(id, target_model, source_message)``."""

USER_IMAGE_PLACEHOLDER = "(image omitted: model does not support images)"
TOOL_IMAGE_PLACEHOLDER = "(tool image omitted: model does not support images)"
MISSING_TOOL_RESULT_TEXT = "No result provided"

# Target providers whose Responses endpoints accept replayed ``call_id|item_id`` pairs.
RESPONSES_TOOL_CALL_PROVIDERS: frozenset[str] = frozenset({"openai", "openai-codex", "opencode"})
AZURE_TOOL_CALL_PROVIDERS: frozenset[str] = RESPONSES_TOOL_CALL_PROVIDERS | {"azure"}

_UNSAFE_ID_CHARS = r"[^A-Za-z0-9_-]"


def transform_messages(
    messages: list[Message],
    model: Model,
    normalize_id: ToolCallIdNormalizer | None = None,
    *,
    memo_key: Hashable = None,
) -> list[Message]:
    """Return a copy of ``messages`` that the target ``model``'s API will accept; the input is not mutated.

    ``memo_key`` (naming the id rule ``normalize_id`` follows, beyond the target model) lets each
    message's rewrite be remembered across requests: an unchanged message comes back as the same
    object, which lets the API's converter reuse its wire form too (``ReplayHistory``).
    """
    if memo_key is None:
        visible = _replace_unseeable_images(messages, model)
        return _pair_tool_calls(_rewrite_for_target(visible, model, normalize_id))
    history = ReplayHistory(model, normalize_id, memo_key)
    history.extend(messages)
    return [*history.messages, *history.open_call_answers()]


def is_same_model(message: AssistantMessage, model: Model) -> bool:
    """Whether ``message`` was written by ``model`` itself (same provider, api and id)."""
    return message.provider == model.provider and message.api == model.api and message.model == model.id


# --- tool-call id normalisers ---------------------------------------------------------------------


def normalize_id_anthropic(tool_call_id: str) -> str:
    """Anthropic and Bedrock ids: only ``[A-Za-z0-9_-]``, at most 64 characters."""
    return _sanitize_id(tool_call_id)[:64]


def normalize_id_openai_completions(tool_call_id: str, provider: str) -> str:
    """Chat Completions ids: a Responses ``call|item`` id keeps its call part; OpenAI allows 40 characters."""
    if "|" in tool_call_id:
        call_id = tool_call_id.split("|", 1)[0]
        return _sanitize_id(call_id)[:40]
    if provider == "openai":
        return tool_call_id[:40]
    return tool_call_id


def normalize_id_responses(
    tool_call_id: str,
    model: Model | None = None,
    source: AssistantMessage | None = None,
    allowed_providers: Collection[str] = RESPONSES_TOOL_CALL_PROVIDERS,
) -> str:
    """Responses ids: ``call|item`` pairs with a sanitised call part and an ``fc_`` item part.

    Targets outside ``allowed_providers`` and ids without ``|`` get a single sanitised part. An item
    id written by another provider or API is replaced by ``fc_<short_hash>``, because the target
    would look it up and fail.
    """
    if (model is not None and model.provider not in allowed_providers) or "|" not in tool_call_id:
        return _responses_id_part(tool_call_id)
    call_id, item_id = tool_call_id.split("|")[:2]
    is_foreign = (
        model is not None
        and source is not None
        and (source.provider != model.provider or source.api != model.api)
    )
    item_part = f"fc_{short_hash(item_id)}"[:64] if is_foreign else _responses_id_part(item_id)
    if not item_part.startswith("fc_"):
        item_part = _responses_id_part(f"fc_{item_part}")
    return f"{_responses_id_part(call_id)}|{item_part}"


def normalize_id_google(tool_call_id: str, model_id: str) -> str:
    """Gemini ids: left alone, except for Claude and gpt-oss models served through Google (sanitised, 64)."""
    if model_id.startswith(("claude-", "gpt-oss-")):
        return _sanitize_id(tool_call_id)[:64]
    return tool_call_id


def _sanitize_id(tool_call_id: str) -> str:
    return re.sub(_UNSAFE_ID_CHARS, "_", tool_call_id)


def _responses_id_part(part: str) -> str:
    return _sanitize_id(part)[:64].rstrip("_")


# --- pass 0: images the target cannot see ---------------------------------------------------------


def _replace_unseeable_images(messages: list[Message], model: Model) -> list[Message]:
    if "image" in model.input:
        return messages
    out: list[Message] = []
    for message in messages:
        if isinstance(message, UserMessage) and not isinstance(message.content, str):
            content = _images_to_placeholder(message.content, USER_IMAGE_PLACEHOLDER)
            if content is not None:
                message = replace(message, content=content)
        elif isinstance(message, ToolResultMessage):
            content = _images_to_placeholder(message.content, TOOL_IMAGE_PLACEHOLDER)
            if content is not None:
                message = replace(message, content=content)
        out.append(message)
    return out


def _images_to_placeholder(content: list[UserContent], placeholder: str) -> list[UserContent] | None:
    """``content`` with each run of images turned into one placeholder text; ``None`` if it had no image."""
    if not any(isinstance(block, ImageContent) for block in content):
        return None
    out: list[UserContent] = []
    after_placeholder = False
    for block in content:
        if isinstance(block, ImageContent):
            if not after_placeholder:
                out.append(TextContent(placeholder))
            after_placeholder = True
        else:
            out.append(block)
            after_placeholder = block.text == placeholder
    return out


# --- pass 1: rewrite each message for the target ----------------------------------------------------


def _rewrite_for_target(
    messages: list[Message], model: Model, normalize_id: ToolCallIdNormalizer | None
) -> list[Message]:
    renamed_ids: dict[str, str] = {}
    out: list[Message] = []
    for message in messages:
        if isinstance(message, AssistantMessage):
            message = _rewrite_assistant(message, model, normalize_id, renamed_ids)
        elif isinstance(message, ToolResultMessage):
            new_id = renamed_ids.get(message.tool_call_id)
            if new_id is not None:
                message = replace(message, tool_call_id=new_id)
        out.append(message)
    return out


_rewrites = MessageMemo()


class ReplayHistory:
    """``transform_messages`` for a history that grows at the end, one message at a time.

    ``messages`` is the replay-safe history so far, without answers for the calls still open;
    ``open_call_answers()`` gives those, for a request that ends here. Each message's rewrite is
    remembered across requests (``memo_key`` as for ``transform_messages``), and a ``Continuation``
    can keep the whole object to go on with the next request's new messages.
    """

    def __init__(self, model: Model, normalize_id: ToolCallIdNormalizer | None, memo_key: Hashable) -> None:
        self.model = model
        self._normalize_id = normalize_id
        self._key = (memo_key, model.api, model.provider, model.id, "image" in model.input)
        self._renamed_ids: dict[str, str] = {}
        self._pairing = _Pairing()
        self.messages = self._pairing.messages

    def extend(self, messages: Iterable[Message], *, resumed: bool = False) -> None:
        """Add the next messages (``resumed``: this request goes on from the last one's state)."""
        _rewrites.next_request(self._key, resumed=resumed)
        add = self._pairing.add
        for message in messages:
            add(self._rewrite(message))

    def open_call_answers(self) -> list[ToolResultMessage]:
        return self._pairing.open_call_answers()

    def _rewrite(self, message: Message) -> Message:
        """Passes 0 and 1 for one message. Most messages come back as they are; a changed one is the
        copy an earlier request made (remembered with the id renames it made), so that its wire form
        is reused too."""
        renamed_ids = self._renamed_ids
        new_id = renamed_ids.get(message.tool_call_id) if isinstance(message, ToolResultMessage) else None
        renames: dict[str, str] = {}
        rewritten = message
        blind = "image" not in self.model.input  # images become a placeholder text
        if blind and not isinstance(message, AssistantMessage) and _has_image(message):
            rewritten = _replace_unseeable_images([message], self.model)[0]
        if isinstance(rewritten, AssistantMessage):
            rewritten = _rewrite_assistant(rewritten, self.model, self._normalize_id, renames)
        elif isinstance(rewritten, ToolResultMessage) and new_id is not None:
            rewritten = replace(rewritten, tool_call_id=new_id)
        if rewritten is message:
            return message
        stamp = (fingerprint(message), new_id)
        remembered: tuple[Message, dict[str, str]] | None = _rewrites.get(message, stamp)
        if remembered is None:
            remembered = (rewritten, renames)
            _rewrites.put(message, stamp, remembered)
        if remembered[1]:
            renamed_ids.update(remembered[1])
        return remembered[0]


def _has_image(message: Message) -> bool:
    content = message.content
    return isinstance(content, list) and any(isinstance(block, ImageContent) for block in content)


def _rewrite_assistant(
    message: AssistantMessage,
    model: Model,
    normalize_id: ToolCallIdNormalizer | None,
    renamed_ids: dict[str, str],
) -> AssistantMessage:
    same_model = is_same_model(message, model)
    if same_model and not any(isinstance(b, ThinkingContent) and _drops_own(b) for b in message.content):
        return message  # the model's own turn replays as it is (the common case: every one resumed)
    content: list[AssistantContent] = []
    for block in message.content:
        rewritten: AssistantContent | None
        if isinstance(block, ThinkingContent):
            rewritten = _rewrite_thinking(block, same_model)
        elif isinstance(block, TextContent):
            keep = same_model or block.text_signature is None
            rewritten = block if keep else TextContent(block.text)
        elif same_model:
            rewritten = block
        else:
            rewritten = _rewrite_foreign_tool_call(block, message, model, normalize_id, renamed_ids)
        if rewritten is not None:
            content.append(rewritten)
    unchanged = len(content) == len(message.content) and all(map(is_, content, message.content))
    return message if unchanged else replace(message, content=content)


def _drops_own(block: ThinkingContent) -> bool:
    """Whether the model's own reasoning block is left out (``_rewrite_thinking``): empty, unsigned."""
    return not block.redacted and not block.thinking_signature and not block.thinking.strip()


def _rewrite_thinking(block: ThinkingContent, same_model: bool) -> AssistantContent | None:
    """Own reasoning replays as is; another model's becomes plain text, since its signature is meaningless here."""
    if block.redacted:
        return block if same_model else None
    if same_model and block.thinking_signature:
        # Encrypted reasoning (OpenAI) has no visible text but must still be replayed.
        return block
    if not block.thinking.strip():
        return None
    # No <thinking> tags: models imitate them in their own answers.
    return block if same_model else TextContent(block.thinking)


def _rewrite_foreign_tool_call(
    block: ToolCall,
    message: AssistantMessage,
    model: Model,
    normalize_id: ToolCallIdNormalizer | None,
    renamed_ids: dict[str, str],
) -> ToolCall:
    rewritten = block if block.thought_signature is None else replace(block, thought_signature=None)
    if normalize_id is not None:
        new_id = normalize_id(block.id, model, message)
        if new_id != block.id:
            renamed_ids[block.id] = new_id
            rewritten = replace(rewritten, id=new_id)
    return rewritten


# --- pass 2: every tool call answered, every answer asked for ---------------------------------------


def _pair_tool_calls(messages: list[Message]) -> list[Message]:
    """Drop unfinished turns and orphan results; answer unanswered calls with a synthetic error result."""
    pairing = _Pairing()
    for message in messages:
        pairing.add(message)
    return [*pairing.messages, *pairing.open_call_answers()]


class _Pairing:
    """Pass 2, one message at a time: ``messages`` holds what is kept so far."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self._pending: list[ToolCall] = []  # the calls of the last assistant turn
        self._answered: set[str] = set()  # which of them have a result
        self._announced: set[str] = set()  # every call id asked for so far

    def add(self, message: Message) -> None:
        if isinstance(message, AssistantMessage):
            self._answer_pending_calls()
            if message.stop_reason in ("error", "aborted"):
                # A partial turn cannot be replayed (e.g. OpenAI rejects reasoning without its item).
                return
            calls = message.tool_calls()
            self._pending.extend(calls)
            self._announced.update(call.id for call in calls)
            self.messages.append(message)
        elif isinstance(message, ToolResultMessage):
            if message.tool_call_id not in self._announced:
                # Answers a call from a dropped turn; Anthropic rejects such orphans.
                return
            self._answered.add(message.tool_call_id)
            self.messages.append(message)
        else:
            self._answer_pending_calls()
            self.messages.append(message)

    def open_call_answers(self) -> list[ToolResultMessage]:
        """Synthetic results for the last turn's calls that have none yet (the state is unchanged)."""
        return [_missing_result(call) for call in self._pending if call.id not in self._answered]

    def _answer_pending_calls(self) -> None:
        if self._pending:
            self.messages.extend(self.open_call_answers())
            self._pending.clear()
        self._answered.clear()


def _missing_result(call: ToolCall) -> ToolResultMessage:
    return ToolResultMessage(
        tool_call_id=call.id,
        tool_name=call.name,
        content=[TextContent(MISSING_TOOL_RESULT_TEXT)],
        is_error=True,
        timestamp=now_ms(),
    )
