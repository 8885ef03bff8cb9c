"""How a tau tool call looks to an ACP client: its kind, title, locations and content.

Built-in tools get a kind and a title that names what they touch (read/edit/write with the file as
a location, the line where known); an edit's content is ACP ``diff`` content, one per replacement
(old and new text), a write's is the whole new file (against the one it replaced, once known);
any other tool shows its text output.
"""

from __future__ import annotations

import os
from typing import Any

from tau.agent.tool import AgentToolResult
from tau.ai.types import JsonObject, TextContent

__all__ = ["kind_of", "locations_of", "result_content", "started_content", "text_content", "title_of"]

_KINDS: dict[str, str] = {
    "read": "read",
    "edit": "edit",
    "write": "edit",
    "bash": "execute",
    "grep": "search",
    "find": "search",
    "ls": "search",
}


def kind_of(tool_name: str) -> str:
    return _KINDS.get(tool_name, "other")


def _path(args: JsonObject, cwd: str) -> str | None:
    path = args.get("path")
    if not isinstance(path, str) or not path:
        return None
    return path if os.path.isabs(path) else os.path.normpath(os.path.join(cwd, path))


def title_of(tool_name: str, args: JsonObject) -> str:
    path = args.get("path")
    if tool_name in ("read", "edit", "write") and isinstance(path, str):
        return f"{tool_name.capitalize()} {path}"
    if tool_name == "bash" and isinstance(command := args.get("command"), str):
        return command.splitlines()[0] if command.strip() else "bash"
    if tool_name in ("grep", "find") and isinstance(pattern := args.get("pattern"), str):
        return f"{tool_name} {pattern}" + (f" in {path}" if isinstance(path, str) else "")
    if tool_name == "ls":
        return f"ls {path}" if isinstance(path, str) else "ls"
    return tool_name


def locations_of(tool_name: str, args: JsonObject, cwd: str, details: Any = None) -> list[JsonObject] | None:
    if tool_name not in ("read", "edit", "write"):
        return None
    path = _path(args, cwd)
    if path is None:
        return None
    line: int | None = None
    if tool_name == "read" and isinstance(offset := args.get("offset"), int | float):
        line = max(int(offset), 1)
    elif tool_name == "edit" and isinstance(details, dict):
        first = details.get("firstChangedLine")
        line = first if isinstance(first, int) else None
    return [{"path": path} if line is None else {"path": path, "line": line}]


def _edit_pairs(args: JsonObject) -> list[tuple[str, str]]:
    edits = args.get("edits")
    pairs: list[tuple[str, str]] = []
    if isinstance(edits, list):
        for edit in edits:
            if isinstance(edit, dict) and isinstance(old := edit.get("oldText"), str):
                new = edit.get("newText")
                pairs.append((old, new if isinstance(new, str) else ""))
    elif isinstance(old := args.get("oldText"), str):
        new = args.get("newText")
        pairs.append((old, new if isinstance(new, str) else ""))
    return pairs


def _diff(path: str, old: str | None, new: str) -> JsonObject:
    diff: JsonObject = {"type": "diff", "path": path, "newText": new}
    if old is not None:
        diff["oldText"] = old
    return diff


def text_content(text: str) -> JsonObject:
    return {"type": "content", "content": {"type": "text", "text": text}}


def started_content(
    tool_name: str, args: JsonObject, cwd: str, old_text: str | None = None
) -> list[JsonObject] | None:
    """What a client shows before the call ran: the edit's or write's proposed change
    (``old_text``: the file a write replaces, ``None`` while unknown or for a new file)."""
    path = _path(args, cwd)
    if path is None:
        return None
    if tool_name == "edit":
        return [_diff(path, old, new) for old, new in _edit_pairs(args)] or None
    if tool_name == "write" and isinstance(content := args.get("content"), str):
        return [_diff(path, old_text, content)]
    return None


def _text(result: AgentToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


def result_content(
    tool_name: str,
    args: JsonObject,
    cwd: str,
    result: AgentToolResult,
    is_error: bool,
    old_text: str | None = None,
) -> list[JsonObject]:
    """The content of a finished call: an edit's or write's diff (on success), then its text."""
    content: list[JsonObject] = []
    if not is_error:
        content.extend(started_content(tool_name, args, cwd, old_text) or [])
    text = _text(result)
    if text:
        content.append(text_content(text))
    return content
