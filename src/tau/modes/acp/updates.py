"""tau's session events (live) and messages (replayed on ``session/load``) as ACP session updates
(the ``update`` of a ``session/update`` notification, in the protocol's camelCase).

tau has no plan tool of its own; a ``todo`` tool (the one in ``examples/extensions/custom_tool.py``,
and pi's todo example) keeps its list in each result's ``details.todos`` as ``{text, done}``
items, so each such result is also the session's ``plan``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from tau._unicode import join_pairs
from tau.agent.events import MessageUpdate, ToolExecutionEnd, ToolExecutionStart, ToolExecutionUpdate
from tau.agent.tool import AgentToolResult
from tau.ai.events import TextDeltaEvent, ThinkingDeltaEvent
from tau.ai.types import (
    AssistantMessage,
    ImageContent,
    JsonObject,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from tau.modes.acp.tool_calls import kind_of, locations_of, result_content, started_content, title_of

__all__ = ["event_updates", "history_updates", "plan_update", "terminal_content"]


def _chunk(kind: str, content: JsonObject) -> JsonObject:
    return {"sessionUpdate": kind, "content": content}


def _text_chunk(kind: str, text: str) -> JsonObject:
    return {"sessionUpdate": kind, "content": {"type": "text", "text": text}}


def _start_call(call_id: str, tool_name: str, args: Any, cwd: str, content: Any = None) -> JsonObject:
    update: JsonObject = {
        "sessionUpdate": "tool_call",
        "toolCallId": call_id,
        "title": title_of(tool_name, args),
        "kind": kind_of(tool_name),
        "status": "in_progress",
        "rawInput": args,
    }
    if content:
        update["content"] = content
    if (locations := locations_of(tool_name, args, cwd)) is not None:
        update["locations"] = locations
    return update


def plan_update(tool_name: str, details: Any) -> JsonObject | None:
    todos = details.get("todos") if tool_name == "todo" and isinstance(details, dict) else None
    if not isinstance(todos, list):
        return None
    entries = [
        {
            "content": str(todo.get("text", "")),
            "priority": "medium",
            "status": "completed" if todo.get("done") is True else "pending",
        }
        for todo in todos
        if isinstance(todo, dict)
    ]
    return {"sessionUpdate": "plan", "entries": entries}


def event_updates(
    event: Any,
    cwd: str,
    args_by_call: dict[str, Any],
    terminals: dict[str, str],
    old_texts: dict[str, str | None],
    held: dict[str, str] | None = None,
) -> Iterator[JsonObject]:
    """The updates one session event makes (most make none). ``args_by_call`` keeps each running
    call's arguments from its start to its end; ``terminals`` the editor terminal a bash call runs
    in (which shows its output, so the call's content is that terminal); ``old_texts`` the file a
    write call replaced; ``held`` the high half of a surrogate pair that ended a text or thinking
    delta, sent with the low half that starts the next one (so the client gets the character, not
    two halves that a JSON reader such as Rust's refuses one by one); any other event sends it as
    it is."""
    if held is None:
        held = {}
    if isinstance(event, MessageUpdate):
        inner = event.assistant_message_event
        if isinstance(inner, TextDeltaEvent) and inner.delta:
            yield from _joined_chunk("agent_message_chunk", inner.delta, held)
        elif isinstance(inner, ThinkingDeltaEvent) and inner.delta:
            yield from _joined_chunk("agent_thought_chunk", inner.delta, held)
        else:
            yield from _release(held)
        return
    yield from _release(held)
    if isinstance(event, ToolExecutionStart):
        args_by_call[event.tool_call_id] = event.args
        content = started_content(event.tool_name, event.args, cwd)
        yield _start_call(event.tool_call_id, event.tool_name, event.args, cwd, content)
    elif isinstance(event, ToolExecutionUpdate):
        if event.tool_call_id in terminals:
            return
        content = result_content(event.tool_name, {}, cwd, event.partial_result, False)
        if content:
            yield {"sessionUpdate": "tool_call_update", "toolCallId": event.tool_call_id, "content": content}
    elif isinstance(event, ToolExecutionEnd):
        args = args_by_call.pop(event.tool_call_id, {})
        terminal = terminals.pop(event.tool_call_id, None)
        old_text = old_texts.pop(event.tool_call_id, None)
        yield _finished_call(
            event.tool_call_id, event.tool_name, args, cwd, event.result, event.is_error, terminal, old_text
        )
        if not event.is_error and (plan := plan_update(event.tool_name, event.result.details)) is not None:
            yield plan


def _joined_chunk(kind: str, delta: str, held: dict[str, str]) -> Iterator[JsonObject]:
    for other in [k for k in held if k != kind]:
        yield _text_chunk(other, held.pop(other))
    text = join_pairs(held.pop(kind, "") + delta)
    if "\ud800" <= text[-1] <= "\udbff":
        held[kind], text = text[-1], text[:-1]
    if text:
        yield _text_chunk(kind, text)


def _release(held: dict[str, str]) -> Iterator[JsonObject]:
    while held:
        kind, text = held.popitem()
        yield _text_chunk(kind, text)


def terminal_content(terminal_id: str) -> JsonObject:
    return {"type": "terminal", "terminalId": terminal_id}


def _finished_call(
    call_id: str,
    tool_name: str,
    args: Any,
    cwd: str,
    result: AgentToolResult,
    is_error: bool,
    terminal: str | None = None,
    old_text: str | None = None,
) -> JsonObject:
    content = result_content(tool_name, args, cwd, result, is_error, old_text)
    if terminal is not None:  # the terminal shows the output; a failure adds what the model read
        content = [terminal_content(terminal), *(content if is_error else [])]
    update: JsonObject = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": call_id,
        "status": "failed" if is_error else "completed",
        "content": content,
    }
    if (locations := locations_of(tool_name, args, cwd, result.details)) is not None:
        update["locations"] = locations
    return update


def history_updates(messages: list[Any], cwd: str) -> Iterator[JsonObject]:
    """A stored conversation as the updates a client would have seen live (``session/load``)."""
    calls: dict[str, ToolCall] = {}
    for message in messages:
        if isinstance(message, UserMessage):
            if isinstance(message.content, str):
                yield _text_chunk("user_message_chunk", message.content)
                continue
            for block in message.content:
                if isinstance(block, TextContent):
                    yield _text_chunk("user_message_chunk", block.text)
                elif isinstance(block, ImageContent):
                    image = {"type": "image", "data": block.data, "mimeType": block.mime_type}
                    yield _chunk("user_message_chunk", image)
        elif isinstance(message, AssistantMessage):
            for part in message.content:
                if isinstance(part, TextContent) and part.text:
                    yield _text_chunk("agent_message_chunk", part.text)
                elif isinstance(part, ThinkingContent) and part.thinking and not part.redacted:
                    yield _text_chunk("agent_thought_chunk", part.thinking)
                elif isinstance(part, ToolCall):
                    calls[part.id] = part
                    yield _start_call(part.id, part.name, part.arguments, cwd)
        elif isinstance(message, ToolResultMessage):
            call = calls.get(message.tool_call_id)
            args = call.arguments if call is not None else {}
            result = AgentToolResult(
                [block for block in message.content if isinstance(block, TextContent | ImageContent)],
                message.details,
            )
            yield _finished_call(message.tool_call_id, message.tool_name, args, cwd, result, message.is_error)
            if not message.is_error and (plan := plan_update(message.tool_name, message.details)) is not None:
                yield plan
