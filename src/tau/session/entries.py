"""The lines of a session file as typed objects: the header and the eleven entry types.

An entry read from a file keeps the JSON object it came from (``raw``) and dumps back to exactly
that object, unknown keys and key order included. An entry made by tau dumps in pi's key order,
leaving out optional keys that are unset (JavaScript's ``JSON.stringify`` drops ``undefined``).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal, TypeAlias

from msgspec import Struct

from tau.ai.types import AssistantMessage, ImageContent, JsonObject, JsonRecord, TextContent, Usage
from tau.session.messages import (
    SessionMessage,
    SystemMessage,
    content_list_from_json,
    session_message_from_json,
)

CURRENT_SESSION_VERSION = 3

_KNOWN_BLOCK_TYPES = frozenset({"text", "thinking", "image", "toolCall"})


# ``raw`` (the object a line was read from) is left out of equality and repr: two entries with the
# same fields are equal whether read from a file or made by tau.
def _equal_but_raw(entry: Struct, other: Struct) -> bool:
    return all(
        getattr(entry, name) == getattr(other, name) for name in entry.__struct_fields__ if name != "raw"
    )


def _repr_but_raw(entry: Struct) -> str:
    shown = ", ".join(f"{name}={getattr(entry, name)!r}" for name in entry.__struct_fields__ if name != "raw")
    return f"{entry.__class__.__qualname__}({shown})"


class SessionHeader(Struct, kw_only=True):
    """Line 1 of a session file: ``{"type":"session","version":3,"id",...}``."""

    id: str
    timestamp: str
    cwd: str = ""
    version: int = CURRENT_SESSION_VERSION
    parent_session: str | None = None
    raw: JsonObject | None = None
    type: ClassVar[Literal["session"]] = "session"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return _equal_but_raw(self, other)

    def __repr__(self) -> str:
        return _repr_but_raw(self)

    def to_json(self) -> JsonObject:
        if self.raw is not None:
            return dict(self.raw)
        out: JsonObject = {
            "type": "session",
            "version": self.version,
            "id": self.id,
            "timestamp": self.timestamp,
            "cwd": self.cwd,
        }
        if self.parent_session is not None:
            out["parentSession"] = self.parent_session
        return out

    @classmethod
    def from_json(cls, data: JsonObject) -> SessionHeader | None:
        """The header in ``data``, or ``None`` unless it is ``type:"session"`` with a string id."""
        if data.get("type") != "session" or not isinstance(data.get("id"), str):
            return None
        version = data.get("version")
        cwd = data.get("cwd")
        parent = data.get("parentSession")
        return cls(
            id=data["id"],
            timestamp=_str(data.get("timestamp")),
            cwd=cwd if isinstance(cwd, str) else "",
            version=version if isinstance(version, int) else 1,
            parent_session=parent if isinstance(parent, str) else None,
            raw=data,
        )


class _Entry(JsonRecord, kw_only=True):
    id: str
    parent_id: str | None
    timestamp: str
    raw: JsonObject | None = None

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return _equal_but_raw(self, other)

    def __repr__(self) -> str:
        return _repr_but_raw(self)

    def to_json(self) -> JsonObject:
        """The entry as a JSON object: the object it was read from, else pi's shape."""
        return dict(self.raw) if self.raw is not None else self._build_json()

    def _build_json(self) -> JsonObject:
        # pi's shape is the fields in order (``raw`` is None here, so left out) for the entry
        # types that name their ``type`` tag; the others write their own.
        return JsonRecord.to_json(self)

    def _base(self, kind: str) -> JsonObject:
        return {"type": kind, "id": self.id, "parentId": self.parent_id, "timestamp": self.timestamp}


class MessageEntry(_Entry, kw_only=True):
    """A conversation message: user, assistant, toolResult, bashExecution or custom, or a pi 1.x
    system message (the prompt sections and tools the branch declares)."""

    message: SessionMessage | SystemMessage
    type: ClassVar[Literal["message"]] = "message"

    def _build_json(self) -> JsonObject:
        out = self._base("message")
        out["message"] = self.message.to_json()
        return out


class ThinkingLevelChangeEntry(_Entry, kw_only=True, tag_field="type", tag="thinking_level_change"):
    thinking_level: str
    type: ClassVar[Literal["thinking_level_change"]] = "thinking_level_change"


class ModelChangeEntry(_Entry, kw_only=True, tag_field="type", tag="model_change"):
    provider: str
    model_id: str
    type: ClassVar[Literal["model_change"]] = "model_change"


class CompactionEntry(_Entry, kw_only=True):
    """History before ``first_kept_entry_id`` summarised; ``from_hook`` marks an extension's summary."""

    summary: str
    first_kept_entry_id: str
    tokens_before: int
    details: Any = None
    from_hook: bool | None = None
    usage: Usage | None = None
    """What making the summary cost (pi 1.x); counted in the session's totals."""
    system_message: SystemMessage | None = None
    """pi 1.x: the branch's prompt and tools replayed at the compaction (its checkpoint)."""
    type: ClassVar[Literal["compaction"]] = "compaction"

    def _build_json(self) -> JsonObject:
        out = self._base("compaction")
        out["summary"] = self.summary
        out["firstKeptEntryId"] = self.first_kept_entry_id
        out["tokensBefore"] = self.tokens_before
        _put_optional(out, "details", self.details)
        if self.usage is not None:
            out["usage"] = self.usage.to_json()
        _put_optional(out, "fromHook", self.from_hook)
        if self.system_message is not None:
            out["systemMessage"] = self.system_message.to_json()
        return out


class BranchSummaryEntry(_Entry, kw_only=True):
    """The summary of an abandoned branch; ``from_id`` is where the new branch starts (or ``"root"``)."""

    from_id: str
    summary: str
    details: Any = None
    from_hook: bool | None = None
    usage: Usage | None = None
    """What making the summary cost (pi 1.x); counted in the session's totals."""
    type: ClassVar[Literal["branch_summary"]] = "branch_summary"

    def _build_json(self) -> JsonObject:
        out = self._base("branch_summary")
        out["fromId"] = self.from_id
        out["summary"] = self.summary
        _put_optional(out, "details", self.details)
        if self.usage is not None:
            out["usage"] = self.usage.to_json()
        _put_optional(out, "fromHook", self.from_hook)
        return out


class CustomEntry(_Entry, kw_only=True):
    """Extension state; never part of the model's context."""

    custom_type: str
    data: Any = None
    type: ClassVar[Literal["custom"]] = "custom"

    def _build_json(self) -> JsonObject:
        # pi writes the extension fields before the tree fields for this type.
        out: JsonObject = {"type": "custom", "customType": self.custom_type}
        _put_optional(out, "data", self.data)
        out.update(id=self.id, parentId=self.parent_id, timestamp=self.timestamp)
        return out


class CustomMessageEntry(_Entry, kw_only=True):
    """An extension's message for the model; ``display=False`` hides it in the UI only."""

    custom_type: str
    content: str | list[TextContent | ImageContent]
    display: bool
    details: Any = None
    type: ClassVar[Literal["custom_message"]] = "custom_message"

    def _build_json(self) -> JsonObject:
        content: Any = self.content if isinstance(self.content, str) else [b.to_json() for b in self.content]
        out: JsonObject = {"type": "custom_message", "customType": self.custom_type, "content": content}
        out["display"] = self.display
        _put_optional(out, "details", self.details)
        out.update(id=self.id, parentId=self.parent_id, timestamp=self.timestamp)
        return out


class LabelEntry(_Entry, kw_only=True, tag_field="type", tag="label"):
    """Sets the label of ``target_id``; no label (or an empty one) clears it."""

    target_id: str
    label: str | None = None
    type: ClassVar[Literal["label"]] = "label"


class SessionInfoEntry(_Entry, kw_only=True, tag_field="type", tag="session_info"):
    """Session metadata: the display name (empty clears it)."""

    name: str | None = None
    type: ClassVar[Literal["session_info"]] = "session_info"


class UsageEntry(_Entry, kw_only=True):
    """Model usage outside any reply, such as cache warming (pi 1.x): counted in the session's
    totals, never part of the context. ``kind`` names the operation (any string)."""

    kind: str
    provider: str
    model: str
    usage: Usage
    type: ClassVar[Literal["usage"]] = "usage"

    def _build_json(self) -> JsonObject:
        out = self._base("usage")
        out.update(kind=self.kind, provider=self.provider, model=self.model, usage=self.usage.to_json())
        return out


class ContextEditEntry(_Entry, kw_only=True, tag_field="type", tag="context_edit"):
    """pi 1.x: from here on the branch's context shows ``target_id`` with other content
    (``replacement``: ``{"content": ...}``) or not at all (``replacement`` ``None``). The target
    itself is unchanged; the latest edit of a target on the branch wins."""

    target_id: str
    replacement: JsonObject | None
    type: ClassVar[Literal["context_edit"]] = "context_edit"


class UnknownEntry(_Entry, kw_only=True):
    """An entry tau cannot interpret (a newer type, an unreadable message): kept in the tree and
    written back verbatim, never part of the model's context."""

    kind: str

    @property
    def type(self) -> str:
        return self.kind

    def _build_json(self) -> JsonObject:
        return self._base(self.kind)


SessionEntry: TypeAlias = (
    MessageEntry
    | ThinkingLevelChangeEntry
    | ModelChangeEntry
    | CompactionEntry
    | BranchSummaryEntry
    | CustomEntry
    | CustomMessageEntry
    | LabelEntry
    | SessionInfoEntry
    | UsageEntry
    | ContextEditEntry
    | UnknownEntry
)


def entry_from_json(data: JsonObject) -> SessionEntry:
    """The typed entry for one parsed line; raises ``ValueError`` when it has no string ``id``.

    Unknown types and messages that cannot be read become ``UnknownEntry`` so the tree stays whole.
    """
    entry_id = data.get("id")
    if not isinstance(entry_id, str):
        raise ValueError("entry without a string id")
    parent = data.get("parentId")
    parent_id = parent if isinstance(parent, str) else None
    timestamp = data.get("timestamp")
    timestamp = timestamp if isinstance(timestamp, str) else ""
    kind = data.get("type")
    if kind == "message":  # nearly every line: built without the keyword dict the others share
        message = _message_from_json(data.get("message"))
        if message is not None:
            return MessageEntry(
                id=entry_id, parent_id=parent_id, timestamp=timestamp, raw=data, message=message
            )
    kind = kind if isinstance(kind, str) else ""
    base: dict[str, Any] = {"id": entry_id, "parent_id": parent_id, "timestamp": timestamp, "raw": data}
    if kind == "message":
        return UnknownEntry(kind=kind, **base)
    if kind == "thinking_level_change":
        return ThinkingLevelChangeEntry(thinking_level=_str(data.get("thinkingLevel"), "off"), **base)
    if kind == "model_change":
        return ModelChangeEntry(
            provider=_str(data.get("provider")), model_id=_str(data.get("modelId")), **base
        )
    if kind == "compaction":
        tokens = data.get("tokensBefore")
        return CompactionEntry(
            summary=_str(data.get("summary")),
            first_kept_entry_id=_str(data.get("firstKeptEntryId")),
            tokens_before=tokens if isinstance(tokens, int) else 0,
            details=data.get("details"),
            from_hook=data.get("fromHook"),
            usage=_usage(data.get("usage")),
            system_message=_system_message(data.get("systemMessage")),
            **base,
        )
    if kind == "branch_summary":
        return BranchSummaryEntry(
            from_id=_str(data.get("fromId")),
            summary=_str(data.get("summary")),
            details=data.get("details"),
            from_hook=data.get("fromHook"),
            usage=_usage(data.get("usage")),
            **base,
        )
    if kind == "usage":
        usage = _usage(data.get("usage"))
        if usage is None:
            return UnknownEntry(kind=kind, **base)
        return UsageEntry(
            kind=_str(data.get("kind")),
            provider=_str(data.get("provider")),
            model=_str(data.get("model")),
            usage=usage,
            **base,
        )
    if kind == "context_edit":
        replacement = data.get("replacement")
        target = data.get("targetId")
        content = replacement.get("content") if isinstance(replacement, dict) else None
        if not isinstance(target, str) or not (replacement is None or isinstance(content, str | list)):
            return UnknownEntry(kind=kind, **base)
        return ContextEditEntry(target_id=target, replacement=replacement, **base)
    if kind == "custom":
        return CustomEntry(custom_type=_str(data.get("customType")), data=data.get("data"), **base)
    if kind == "custom_message":
        return CustomMessageEntry(
            custom_type=_str(data.get("customType")),
            content=content_list_from_json(_known_blocks(data.get("content"))),
            display=bool(data.get("display", True)),
            details=data.get("details"),
            **base,
        )
    if kind == "label":
        label = data.get("label")
        return LabelEntry(
            target_id=_str(data.get("targetId")), label=label if isinstance(label, str) else None, **base
        )
    if kind == "session_info":
        name = data.get("name")
        return SessionInfoEntry(name=name if isinstance(name, str) else None, **base)
    return UnknownEntry(kind=kind, **base)


def is_assistant_entry(entry: SessionEntry) -> bool:
    return isinstance(entry, MessageEntry) and isinstance(entry.message, AssistantMessage)


def _message_from_json(data: Any) -> SessionMessage | SystemMessage | None:
    """The message of a ``message`` entry, tolerating content blocks of unknown types and old
    usage objects without ``totalTokens``; ``None`` when it cannot be read at all."""
    if not isinstance(data, dict):
        return None
    if data.get("role") == "system":
        return SystemMessage.from_json(data)
    try:
        message = session_message_from_json(data)
    except (ValueError, TypeError, AttributeError, KeyError):
        # A block of a type this version does not know (or no block at all): read without it.
        content = data.get("content")
        if type(content) is not list or len(known := _known_blocks(content)) == len(content):
            return None
        try:
            message = session_message_from_json({**data, "content": known})
        except (ValueError, TypeError, AttributeError, KeyError):
            return None
    if isinstance(message, AssistantMessage):
        usage = data.get("usage")
        if isinstance(usage, dict) and "totalTokens" not in usage:
            message.usage.recompute_total()
    return message


def _usage(data: Any) -> Usage | None:
    if not isinstance(data, dict):
        return None
    usage = Usage.from_json(data)
    if "totalTokens" not in data:
        usage.recompute_total()
    return usage


def _system_message(data: Any) -> SystemMessage | None:
    return SystemMessage.from_json(data) if isinstance(data, dict) and data.get("role") == "system" else None


def _known_blocks(content: Any) -> Any:
    if not isinstance(content, list):
        return content
    return [b for b in content if _block_type(b) in _KNOWN_BLOCK_TYPES]


def _block_type(block: Any) -> Any:
    return block.get("type") if isinstance(block, dict) else None


def _str(value: Any, default: str = "") -> str:
    return value if isinstance(value, str) else default


def _put_optional(out: JsonObject, key: str, value: Any) -> None:
    if value is not None:
        out[key] = value
