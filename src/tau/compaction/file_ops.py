"""The files a stretch of conversation read and changed, taken from its tool calls by the program.

Which files were touched is a fact the summariser should not have to remember: it is collected
from the ``read``/``write``/``edit`` calls and appended to the summary as ``<read-files>`` and
``<modified-files>`` lists. The lists carry over from one compaction (or branch summary) to the next
through the entry's ``details``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec
from msgspec import Struct, field

from tau.ai.types import AssistantMessage, JsonObject, ToolCall

__all__ = ["FileDetails", "FileOperations", "format_file_lists"]


class FileDetails(Struct, frozen=True, rename="camel"):
    """What a compaction or branch summary stores as ``details``: ``{readFiles, modifiedFiles}``
    (both always written, empty or not: msgspec writes the fields as they are)."""

    read_files: list[str] = field(default_factory=list)
    modified_files: list[str] = field(default_factory=list)

    def to_json(self) -> JsonObject:
        out: JsonObject = msgspec.to_builtins(self)
        return out

    @classmethod
    def from_json(cls, details: Any) -> FileDetails | None:
        """The lists in an entry's ``details``, or ``None`` when it holds none (extension data, say)."""
        if not isinstance(details, dict):
            return None
        read, modified = details.get("readFiles"), details.get("modifiedFiles")
        if not isinstance(read, list) and not isinstance(modified, list):
            return None
        return cls(_strings(read), _strings(modified))


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


class FileOperations(Struct):
    """Paths read, written and edited; sets, so order and repeats do not matter."""

    read: set[str] = field(default_factory=set)
    written: set[str] = field(default_factory=set)
    edited: set[str] = field(default_factory=set)

    def add_message(self, message: object) -> None:
        """Record the paths of an assistant message's ``read``, ``write`` and ``edit`` calls."""
        if not isinstance(message, AssistantMessage):
            return
        for block in message.content:
            if isinstance(block, ToolCall):
                self._add_call(block)

    def add_messages(self, messages: Iterable[object]) -> None:
        for message in messages:
            self.add_message(message)

    def _add_call(self, call: ToolCall) -> None:
        path = call.arguments.get("path") if isinstance(call.arguments, dict) else None
        if not isinstance(path, str) or not path:
            return
        target = {"read": self.read, "write": self.written, "edit": self.edited}.get(call.name)
        if target is not None:
            target.add(path)

    def add_details(self, details: FileDetails) -> None:
        """Carry over an earlier summary's lists: its reads stay reads, its changes count as edits."""
        self.read.update(details.read_files)
        self.edited.update(details.modified_files)

    def details(self) -> FileDetails:
        """Sorted lists: files only read (never changed), and files written or edited."""
        modified = self.written | self.edited
        return FileDetails(_sorted(self.read - modified), _sorted(modified))


def _sorted(paths: Iterable[str]) -> list[str]:
    # JavaScript sorts strings by UTF-16 code units; keep the same order for paths outside the BMP.
    return sorted(paths, key=lambda p: p.encode("utf-16-be", "surrogatepass"))


def format_file_lists(details: FileDetails) -> str:
    """The text appended to a summary: nothing when both lists are empty, else a blank line and the
    non-empty ``<read-files>`` / ``<modified-files>`` blocks separated by a blank line."""
    sections = []
    if details.read_files:
        sections.append("<read-files>\n" + "\n".join(details.read_files) + "\n</read-files>")
    if details.modified_files:
        sections.append("<modified-files>\n" + "\n".join(details.modified_files) + "\n</modified-files>")
    return "\n\n" + "\n\n".join(sections) if sections else ""
