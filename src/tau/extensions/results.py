"""What handlers may return, per event, and how a returned value is checked.

A handler returns ``None`` (no opinion), an instance of the event's result class, or a dict with
the same keys in snake_case or pi's camelCase (``{"block": True, "reason": "..."}``,
``{"isError": True}``). Anything else raises ``MalformedResultError`` with a message saying what
was expected; the runner reports it against the handler and carries on as if it returned ``None``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, Literal, TypeAlias, TypeVar

from msgspec import Struct, field

from tau.agent.messages import AgentMessage
from tau.ai.types import ImageContent, JsonObject, TextContent, content_from_json
from tau.compaction import CompactionResult, FileDetails
from tau.extensions.errors import MalformedResultError
from tau.session.messages import CustomMessage

__all__ = [
    "BeforeAgentStartOutcome",
    "BeforeAgentStartResult",
    "CompactionOverride",
    "ContextResult",
    "InputAction",
    "InputResult",
    "MessageEndResult",
    "ProjectTrustResult",
    "ResourcesDiscoverResult",
    "SessionBeforeCompactResult",
    "SessionBeforeForkResult",
    "SessionBeforeSwitchResult",
    "SessionBeforeTreeResult",
    "ToolCallResult",
    "ToolResultPatch",
    "TreeSummary",
    "UserBashResult",
    "parse_result",
    "to_content",
    "to_custom_message",
]

InputAction: TypeAlias = Literal["continue", "transform", "handled"]
T = TypeVar("T")


class ProjectTrustResult(Struct):
    """``trusted``: ``"yes"`` / ``"no"`` decide, ``"undecided"`` leaves it to the next handler and
    then to tau; ``remember`` saves a yes or no in trust.json."""

    trusted: Literal["yes", "no", "undecided"] = "undecided"
    remember: bool = False


class ResourcesDiscoverResult(Struct):
    skill_paths: list[str] = field(default_factory=list)
    prompt_paths: list[str] = field(default_factory=list)
    theme_paths: list[str] = field(default_factory=list)


class SessionBeforeSwitchResult(Struct):
    cancel: bool = False


class SessionBeforeForkResult(Struct):
    cancel: bool = False
    skip_conversation_restore: bool = False


class CompactionOverride(Struct):
    """An extension's own compaction: what the compaction entry stores instead of the model's summary.

    ``details`` is free JSON data (the built-in summariser stores ``{readFiles, modifiedFiles}``).
    """

    summary: str
    first_kept_entry_id: str
    tokens_before: int
    details: Any = None

    def details_json(self) -> Any:
        """``details`` as stored in the entry (same method as ``CompactionResult``)."""
        return self.details.to_json() if isinstance(self.details, FileDetails) else self.details


class SessionBeforeCompactResult(Struct):
    cancel: bool = False
    compaction: CompactionOverride | None = None


class TreeSummary(Struct):
    summary: str
    details: Any = None


class SessionBeforeTreeResult(Struct):
    cancel: bool = False
    summary: TreeSummary | None = None
    custom_instructions: str | None = None
    replace_instructions: bool | None = None
    label: str | None = None


class InputResult(Struct):
    """``transform`` replaces the text (and images, when given); ``handled`` ends the prompt there."""

    action: InputAction = "continue"
    text: str | None = None
    images: list[ImageContent] | None = None


class BeforeAgentStartResult(Struct):
    """``message`` is added after the user's message; ``system_prompt`` replaces the prompt for this run."""

    message: CustomMessage | None = None
    system_prompt: str | None = None


class MessageEndResult(Struct):
    message: AgentMessage


class ContextResult(Struct):
    messages: list[AgentMessage]


class ToolCallResult(Struct):
    block: bool = False
    reason: str | None = None


class ToolResultPatch(Struct):
    """Fields to change in a tool result; ``None`` keeps the current value."""

    content: list[TextContent | ImageContent] | None = None
    details: Any = None
    is_error: bool | None = None


class UserBashResult(Struct):
    """``result``: the command already ran elsewhere (record this); ``operations``: run it with these."""

    operations: Any = None
    result: Any = None


# -- checking returned values ------------------------------------------------------------------

_CAMEL = re.compile(r"(?<=[a-z0-9])([A-Z])")


def _snake(key: str) -> str:
    return _CAMEL.sub(r"_\1", key).lower()


def _keys(value: Mapping[Any, Any], allowed: set[str], what: str) -> dict[str, Any]:
    """A dict result by snake_case key; an unknown key is a mistake worth reporting."""
    out: dict[str, Any] = {}
    for key, item in value.items():
        name = _snake(key) if isinstance(key, str) else key
        if name not in allowed:
            expected = ", ".join(sorted(allowed))
            raise MalformedResultError(f"unknown key {key!r} in the {what} result (expected: {expected})")
        out[name] = item
    return out


def _kind(value: Any) -> str:
    return type(value).__name__


def _expect(value: Any, types: type | tuple[type, ...], key: str, what: str) -> Any:
    if not isinstance(value, types):
        names = " or ".join(t.__name__ for t in (types if isinstance(types, tuple) else (types,)))
        raise MalformedResultError(f"{what} result: {key!r} must be {names}, not {_kind(value)}")
    return value


def _optional(value: Any, types: type | tuple[type, ...], key: str, what: str) -> Any:
    return None if value is None else _expect(value, types, key, what)


def _mapping_or(cls: type[T], value: Any, what: str) -> T | Mapping[Any, Any]:
    if isinstance(value, (cls, Mapping)):
        return value
    raise MalformedResultError(
        f"{what} handler returned {_kind(value)}; expected None, a dict or {cls.__name__}"
    )


def _strings(value: Any, key: str, what: str) -> list[str]:
    if value is None:
        return []
    items = _expect(value, (list, tuple), key, what)
    return [_expect(item, str, key, what) for item in items]


def to_content(value: Any, key: str, what: str) -> list[TextContent | ImageContent]:
    """Tool-result or message content: a string, or a list of text/image blocks (objects or dicts)."""
    if isinstance(value, str):
        return [TextContent(value)]
    blocks: list[TextContent | ImageContent] = []
    for item in _expect(value, (list, tuple), key, what):
        block = item
        if isinstance(item, Mapping):
            try:
                block = content_from_json(dict(item))
            except ValueError as exc:
                raise MalformedResultError(f"{what} result: {key!r} holds a bad block: {exc}") from None
        if not isinstance(block, (TextContent, ImageContent)):
            raise MalformedResultError(f"{what} result: {key!r} may hold only text and image blocks")
        blocks.append(block)
    return blocks


def _images(value: Any, what: str) -> list[ImageContent] | None:
    if value is None:
        return None
    blocks = to_content(value, "images", what)
    if any(not isinstance(b, ImageContent) for b in blocks):
        raise MalformedResultError(f"{what} result: 'images' may hold only image blocks")
    return [b for b in blocks if isinstance(b, ImageContent)]


def _resources_discover(value: Any) -> ResourcesDiscoverResult:
    what = "resources_discover"
    got = _mapping_or(ResourcesDiscoverResult, value, what)
    if isinstance(got, ResourcesDiscoverResult):
        return got
    data = _keys(got, {"skill_paths", "prompt_paths", "theme_paths"}, what)
    return ResourcesDiscoverResult(
        _strings(data.get("skill_paths"), "skillPaths", what),
        _strings(data.get("prompt_paths"), "promptPaths", what),
        _strings(data.get("theme_paths"), "themePaths", what),
    )


def _before_switch(value: Any) -> SessionBeforeSwitchResult:
    what = "session_before_switch"
    got = _mapping_or(SessionBeforeSwitchResult, value, what)
    if isinstance(got, SessionBeforeSwitchResult):
        return got
    data = _keys(got, {"cancel"}, what)
    return SessionBeforeSwitchResult(bool(_optional(data.get("cancel"), bool, "cancel", what)))


def _before_fork(value: Any) -> SessionBeforeForkResult:
    what = "session_before_fork"
    got = _mapping_or(SessionBeforeForkResult, value, what)
    if isinstance(got, SessionBeforeForkResult):
        return got
    data = _keys(got, {"cancel", "skip_conversation_restore"}, what)
    return SessionBeforeForkResult(
        bool(_optional(data.get("cancel"), bool, "cancel", what)),
        bool(_optional(data.get("skip_conversation_restore"), bool, "skipConversationRestore", what)),
    )


def _compaction(value: Any, what: str) -> CompactionOverride | None:
    if value is None or isinstance(value, CompactionOverride):
        return value
    if isinstance(value, CompactionResult):
        return CompactionOverride(
            value.summary, value.first_kept_entry_id, value.tokens_before, value.details_json()
        )
    if not isinstance(value, Mapping):
        raise MalformedResultError(f"{what} result: 'compaction' must be a dict or CompactionOverride")
    data = _keys(value, {"summary", "first_kept_entry_id", "tokens_before", "details"}, f"{what} compaction")
    for key in ("summary", "first_kept_entry_id", "tokens_before"):
        if key not in data:
            raise MalformedResultError(f"{what} result: 'compaction' lacks {key!r}")
    tokens = data["tokens_before"]
    if isinstance(tokens, bool) or not isinstance(tokens, int):
        raise MalformedResultError(f"{what} result: 'tokensBefore' must be int, not {_kind(tokens)}")
    return CompactionOverride(
        _expect(data["summary"], str, "summary", what),
        _expect(data["first_kept_entry_id"], str, "firstKeptEntryId", what),
        tokens,
        data.get("details"),
    )


def _before_compact(value: Any) -> SessionBeforeCompactResult:
    what = "session_before_compact"
    got = _mapping_or(SessionBeforeCompactResult, value, what)
    if isinstance(got, SessionBeforeCompactResult):
        return SessionBeforeCompactResult(got.cancel, _compaction(got.compaction, what))
    data = _keys(got, {"cancel", "compaction"}, what)
    return SessionBeforeCompactResult(
        bool(_optional(data.get("cancel"), bool, "cancel", what)), _compaction(data.get("compaction"), what)
    )


def _tree_summary(value: Any, what: str) -> TreeSummary | None:
    if value is None or isinstance(value, TreeSummary):
        return value
    if isinstance(value, str):
        return TreeSummary(value)
    if not isinstance(value, Mapping):
        raise MalformedResultError(f"{what} result: 'summary' must be a str, a dict or TreeSummary")
    data = _keys(value, {"summary", "details"}, f"{what} summary")
    return TreeSummary(_expect(data.get("summary"), str, "summary", what), data.get("details"))


def _before_tree(value: Any) -> SessionBeforeTreeResult:
    what = "session_before_tree"
    got = _mapping_or(SessionBeforeTreeResult, value, what)
    if isinstance(got, SessionBeforeTreeResult):
        return got
    data = _keys(got, {"cancel", "summary", "custom_instructions", "replace_instructions", "label"}, what)
    return SessionBeforeTreeResult(
        bool(_optional(data.get("cancel"), bool, "cancel", what)),
        _tree_summary(data.get("summary"), what),
        _optional(data.get("custom_instructions"), str, "customInstructions", what),
        _optional(data.get("replace_instructions"), bool, "replaceInstructions", what),
        _optional(data.get("label"), str, "label", what),
    )


_INPUT_ACTIONS: dict[str, InputAction] = {
    "continue": "continue",
    "transform": "transform",
    "handled": "handled",
}


def _input(value: Any) -> InputResult:
    what = "input"
    got = _mapping_or(InputResult, value, what)
    data = (
        {"action": got.action, "text": got.text, "images": got.images}
        if isinstance(got, InputResult)
        else _keys(got, {"action", "text", "images"}, what)
    )
    action = data.get("action", "continue")
    if action not in _INPUT_ACTIONS:
        raise MalformedResultError(
            f"input result: 'action' must be continue, transform or handled, not {action!r}"
        )
    text = _optional(data.get("text"), str, "text", what)
    if action == "transform" and text is None:
        raise MalformedResultError("input result: a 'transform' needs 'text'")
    return InputResult(_INPUT_ACTIONS[action], text, _images(data.get("images"), what))


def to_custom_message(value: Any, what: str) -> CustomMessage | None:
    if value is None or isinstance(value, CustomMessage):
        return value
    if not isinstance(value, Mapping):
        raise MalformedResultError(f"{what} result: 'message' must be a dict or CustomMessage")
    data = _keys(value, {"custom_type", "content", "display", "details"}, f"{what} message")
    content: str | list[TextContent | ImageContent]
    raw = data.get("content", "")
    content = raw if isinstance(raw, str) else to_content(raw, "content", what)
    return CustomMessage(
        custom_type=_expect(data.get("custom_type"), str, "customType", what),
        content=content,
        display=bool(_optional(data.get("display", True), bool, "display", what)),
        details=data.get("details"),
    )


def _before_agent_start(value: Any) -> BeforeAgentStartResult:
    what = "before_agent_start"
    got = _mapping_or(BeforeAgentStartResult, value, what)
    if isinstance(got, BeforeAgentStartResult):
        return BeforeAgentStartResult(
            to_custom_message(got.message, what), _optional(got.system_prompt, str, "systemPrompt", what)
        )
    data = _keys(got, {"message", "system_prompt"}, what)
    return BeforeAgentStartResult(
        to_custom_message(data.get("message"), what),
        _optional(data.get("system_prompt"), str, "systemPrompt", what),
    )


def _message_end(value: Any) -> MessageEndResult:
    what = "message_end"
    got = _mapping_or(MessageEndResult, value, what)
    if isinstance(got, MessageEndResult):
        return got
    data = _keys(got, {"message"}, what)
    message = data.get("message")
    if message is None or not isinstance(getattr(message, "role", None), str):
        raise MalformedResultError("message_end result: 'message' must be a message (an object with a role)")
    return MessageEndResult(message)


def _context(value: Any, what: str = "context") -> ContextResult:
    got = _mapping_or(ContextResult, value, what)
    messages = (
        got.messages if isinstance(got, ContextResult) else _keys(got, {"messages"}, what).get("messages")
    )
    if not isinstance(messages, list):
        raise MalformedResultError(f"{what} result: 'messages' must be a list, not {_kind(messages)}")
    for message in messages:
        if not isinstance(getattr(message, "role", None), str):
            raise MalformedResultError(f"{what} result: {_kind(message)} in 'messages' is not a message")
    return ContextResult(messages)


def _context_with_system(value: Any) -> ContextResult:
    return _context(value, "context_with_system")


def _before_provider_request(value: Any) -> JsonObject:
    if not isinstance(value, dict):
        raise MalformedResultError(
            f"before_provider_request handler returned {_kind(value)}; expected None or the new payload dict"
        )
    return value


def _tool_call(value: Any) -> ToolCallResult:
    what = "tool_call"
    got = _mapping_or(ToolCallResult, value, what)
    if isinstance(got, ToolCallResult):
        return got
    data = _keys(got, {"block", "reason"}, what)
    return ToolCallResult(
        bool(_optional(data.get("block"), bool, "block", what)),
        _optional(data.get("reason"), str, "reason", what),
    )


def _tool_result(value: Any) -> ToolResultPatch:
    what = "tool_result"
    got = _mapping_or(ToolResultPatch, value, what)
    if isinstance(got, ToolResultPatch):
        data: dict[str, Any] = {"content": got.content, "details": got.details, "is_error": got.is_error}
    else:
        data = _keys(got, {"content", "details", "is_error"}, what)
    content = data.get("content")
    return ToolResultPatch(
        None if content is None else to_content(content, "content", what),
        data.get("details"),
        _optional(data.get("is_error"), bool, "isError", what),
    )


def _user_bash(value: Any) -> UserBashResult:
    what = "user_bash"
    got = _mapping_or(UserBashResult, value, what)
    if isinstance(got, UserBashResult):
        return got
    data = _keys(got, {"operations", "result"}, what)
    return UserBashResult(data.get("operations"), data.get("result"))


def _project_trust(value: Any) -> ProjectTrustResult:
    what = "project_trust"
    got = _mapping_or(ProjectTrustResult, value, what)
    if isinstance(got, ProjectTrustResult):
        return got
    data = _keys(got, {"trusted", "remember"}, what)
    trusted = data.get("trusted")
    if trusted not in ("yes", "no", "undecided"):
        raise MalformedResultError(f'{what}: "trusted" must be "yes", "no" or "undecided", not {trusted!r}')
    return ProjectTrustResult(trusted, bool(_optional(data.get("remember"), bool, "remember", what)))


class CacheWarmingDecisionResult(Struct):
    action: Literal["warm", "stop"]


def _cache_warming_decision(value: Any) -> CacheWarmingDecisionResult:
    what = "cache_warming_decision"
    got = _mapping_or(CacheWarmingDecisionResult, value, what)
    action = (
        got.action
        if isinstance(got, CacheWarmingDecisionResult)
        else _keys(got, {"action"}, what).get("action")
    )
    if action not in ("warm", "stop"):
        raise MalformedResultError(f'{what}: "action" must be "warm" or "stop", not {action!r}')
    return CacheWarmingDecisionResult(action)


def _agent_before_settle(value: Any) -> tuple[list[Any] | None, bool | None]:
    what = "agent_before_settle"
    if not isinstance(value, dict):
        raise MalformedResultError(f"{what} result must be a dict with 'entries' and/or 'continue'")
    unknown = set(value) - {"entries", "continue"}
    if unknown:
        raise MalformedResultError(f"{what} result: unknown keys {sorted(unknown)}")
    entries = value.get("entries")
    if entries is not None and not isinstance(entries, list):
        raise MalformedResultError(f"{what} result: 'entries' must be a list, not {_kind(entries)}")
    return entries, _optional(value.get("continue"), bool, "continue", what)


_PARSERS: dict[str, Callable[[Any], Any]] = {
    "agent_before_settle": _agent_before_settle,
    "project_trust": _project_trust,
    "resources_discover": _resources_discover,
    "session_before_switch": _before_switch,
    "session_before_fork": _before_fork,
    "session_before_compact": _before_compact,
    "session_before_tree": _before_tree,
    "input": _input,
    "before_agent_start": _before_agent_start,
    "message_end": _message_end,
    "context": _context,
    "context_with_system": _context_with_system,
    "before_provider_request": _before_provider_request,
    "tool_call": _tool_call,
    "tool_result": _tool_result,
    "user_bash": _user_bash,
    "cache_warming_decision": _cache_warming_decision,
}


def parse_result(event_type: str, value: Any) -> Any:
    """The checked result of a handler for ``event_type``: ``None`` for no result (and for every
    notification event, whose return values are ignored); raises ``MalformedResultError``."""
    if value is None:
        return None
    parser = _PARSERS.get(event_type)
    return parser(value) if parser is not None else None


class BeforeAgentStartOutcome(Struct):
    """``before_agent_start`` combined: the prompt for this run (``None``: use the base prompt)
    and the handlers' messages, in order, to add after the user's message."""

    system_prompt: str | None = None
    messages: list[CustomMessage] = field(default_factory=list)
