"""The message kinds a coding session adds to the LLM's three: shell runs, custom and summary messages.

``bashExecution`` and ``custom`` are stored in ``message`` entries; ``branchSummary`` and
``compactionSummary`` exist only as projections of ``branch_summary`` / ``compaction`` entries.
``convert_to_llm`` (in ``tau.context``) decides what the model sees of each.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar, Literal, TypeAlias

from msgspec import Struct, field

from tau.ai.types import (
    AssistantMessage,
    ImageContent,
    JsonObject,
    JsonRecord,
    TextContent,
    ToolResultMessage,
    UserMessage,
    content_from_json,
    message_from_json,
    now_ms,
)


class BashExecutionMessage(Struct):
    """A command the user ran with ``!cmd`` (or ``!!cmd``: ``exclude_from_context``)."""

    command: str
    output: str
    exit_code: int | None
    cancelled: bool = False
    truncated: bool = False
    full_output_path: str | None = None
    exclude_from_context: bool | None = None
    timestamp: int = field(default_factory=now_ms)
    role: ClassVar[Literal["bashExecution"]] = "bashExecution"

    def to_json(self) -> JsonObject:
        out: JsonObject = {"role": "bashExecution", "command": self.command, "output": self.output}
        if self.exit_code is not None:
            out["exitCode"] = self.exit_code
        out["cancelled"] = self.cancelled
        out["truncated"] = self.truncated
        if self.full_output_path is not None:
            out["fullOutputPath"] = self.full_output_path
        if self.exclude_from_context is not None:
            out["excludeFromContext"] = self.exclude_from_context
        out["timestamp"] = self.timestamp
        return out

    @classmethod
    def from_json(cls, data: JsonObject) -> BashExecutionMessage:
        exit_code = data.get("exitCode")
        return cls(
            command=data.get("command") or "",
            output=data.get("output") or "",
            exit_code=exit_code if isinstance(exit_code, int) else None,
            cancelled=bool(data.get("cancelled", False)),
            truncated=bool(data.get("truncated", False)),
            full_output_path=data.get("fullOutputPath"),
            exclude_from_context=data.get("excludeFromContext"),
            timestamp=data.get("timestamp", 0),
        )


class CustomMessage(Struct):
    """A message an extension put in the conversation; ``display=False`` hides it in the UI only."""

    custom_type: str
    content: str | list[TextContent | ImageContent]
    display: bool = True
    details: Any = None
    timestamp: int = field(default_factory=now_ms)
    role: ClassVar[Literal["custom"]] = "custom"

    def to_json(self) -> JsonObject:
        content: Any = self.content if isinstance(self.content, str) else [b.to_json() for b in self.content]
        out: JsonObject = {
            "role": "custom",
            "customType": self.custom_type,
            "content": content,
            "display": self.display,
        }
        if self.details is not None:
            out["details"] = self.details
        out["timestamp"] = self.timestamp
        return out

    @classmethod
    def from_json(cls, data: JsonObject) -> CustomMessage:
        return cls(
            custom_type=data.get("customType") or "",
            content=content_list_from_json(data.get("content")),
            display=bool(data.get("display", True)),
            details=data.get("details"),
            timestamp=data.get("timestamp", 0),
        )


class BranchSummaryMessage(JsonRecord, tag_field="role", tag="branchSummary"):
    """The summary of a branch the conversation came back from (projection of ``branch_summary``).
    Written as pi writes it, ``{role, summary, fromId, timestamp}``, by msgspec (``JsonRecord``)."""

    summary: str
    from_id: str
    timestamp: int = field(default_factory=now_ms)
    role: ClassVar[Literal["branchSummary"]] = "branchSummary"

    @classmethod
    def from_json(cls, data: JsonObject) -> BranchSummaryMessage:
        return cls(
            summary=data.get("summary") or "",
            from_id=data.get("fromId") or "",
            timestamp=data.get("timestamp", 0),
        )


class CompactionSummaryMessage(JsonRecord, tag_field="role", tag="compactionSummary"):
    """The summary that stands for compacted history (projection of a ``compaction`` entry).
    Written as pi writes it, ``{role, summary, tokensBefore, timestamp}``, by msgspec (``JsonRecord``)."""

    summary: str
    tokens_before: int
    timestamp: int = field(default_factory=now_ms)
    role: ClassVar[Literal["compactionSummary"]] = "compactionSummary"

    @classmethod
    def from_json(cls, data: JsonObject) -> CompactionSummaryMessage:
        return cls(
            summary=data.get("summary") or "",
            tokens_before=data.get("tokensBefore", 0),
            timestamp=data.get("timestamp", 0),
        )


SessionMessage: TypeAlias = (
    UserMessage
    | AssistantMessage
    | ToolResultMessage
    | BashExecutionMessage
    | CustomMessage
    | BranchSummaryMessage
    | CompactionSummaryMessage
)

_SESSION_KINDS: dict[str, Any] = {
    "user": UserMessage,
    "assistant": AssistantMessage,
    "toolResult": ToolResultMessage,
    "bashExecution": BashExecutionMessage,
    "custom": CustomMessage,
    "branchSummary": BranchSummaryMessage,
    "compactionSummary": CompactionSummaryMessage,
}


def session_message_from_json(data: JsonObject) -> SessionMessage:
    """Any message a session can hold; raises ``ValueError`` for an unknown role."""
    kind = _SESSION_KINDS.get(data.get("role", ""))
    if kind is not None:
        message: SessionMessage = kind.from_json(data)
        return message
    return message_from_json(data)  # raises for the unknown role


def content_list_from_json(raw: Any) -> str | list[TextContent | ImageContent]:
    """User-style content: a string, or the text and image blocks of a list (anything else: none)."""
    if isinstance(raw, str):
        return raw
    if not isinstance(raw, list):
        return []
    blocks = [content_from_json(b) for b in raw if isinstance(b, dict)]
    return [b for b in blocks if isinstance(b, (TextContent, ImageContent))]


class SystemMessage(Struct):
    """pi 1.x's record of the prompt and tools a branch declares (``role: "system"``).

    The first one holds every prompt section and tool declaration; later ones patch ``sections``
    by name (``None`` removes a section) and list ``tools_added`` / ``tools_removed``. Replaying
    them in order (``replay_system_messages``) gives the branch's current prompt and tools.
    ``content`` is free prompt text that comes before the sections.
    """

    content: str = ""
    sections: dict[str, str | None] | None = None
    tools_added: list[JsonObject] | None = None
    tools_removed: list[JsonObject] | None = None
    timestamp: int = field(default_factory=now_ms)
    role: ClassVar[Literal["system"]] = "system"

    def to_json(self) -> JsonObject:
        out: JsonObject = {"role": "system", "content": self.content}
        if self.sections is not None:
            out["sections"] = dict(self.sections)
        out["timestamp"] = self.timestamp
        if self.tools_added is not None:
            out["toolsAdded"] = list(self.tools_added)
        if self.tools_removed is not None:
            out["toolsRemoved"] = list(self.tools_removed)
        return out

    @classmethod
    def from_json(cls, data: JsonObject) -> SystemMessage:
        content = data.get("content")
        if isinstance(content, list):  # text blocks, as pi-ai allows
            content = "\n".join(
                b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"
            )
        raw_sections = data.get("sections")
        sections = (
            {k: v for k, v in raw_sections.items() if v is None or isinstance(v, str)}
            if isinstance(raw_sections, dict)
            else None
        )
        return cls(
            content=content if isinstance(content, str) else "",
            sections=sections,
            tools_added=_tool_list(data.get("toolsAdded")),
            tools_removed=_tool_list(data.get("toolsRemoved")),
            timestamp=data.get("timestamp", 0) if isinstance(data.get("timestamp"), int) else 0,
        )

    def text(self) -> str:
        """The whole prompt this message states: its content, then each section, blank-line apart."""
        parts = [self.content, *(v for v in (self.sections or {}).values() if v is not None)]
        return "\n\n".join(p for p in parts if p)


def _tool_list(raw: Any) -> list[JsonObject] | None:
    if not isinstance(raw, list):
        return None
    return [t for t in raw if isinstance(t, dict) and isinstance(t.get("name"), str)]


def replay_system_messages(messages: Iterable[SystemMessage]) -> SystemMessage | None:
    """One system message holding the prompt and tools after every one of ``messages``, in order
    (``None`` when there are none): contents are joined, sections patched by name, tools
    removed then added by name."""
    contents: list[str] = []
    sections: dict[str, str] = {}
    tools: dict[str, JsonObject] = {}
    timestamp: int | None = None
    for message in messages:
        if timestamp is None:
            timestamp = message.timestamp
        if message.content:
            contents.append(message.content)
        for name, value in (message.sections or {}).items():
            if value is None:
                sections.pop(name, None)
            else:
                sections[name] = value
        for tool in message.tools_removed or []:
            tools.pop(tool["name"], None)
        for tool in message.tools_added or []:
            tools[tool["name"]] = tool
    if timestamp is None:
        return None
    return SystemMessage(
        content="\n\n".join(contents),
        sections=dict(sections) if sections else None,
        tools_added=list(tools.values()) if tools else None,
        timestamp=timestamp,
    )
