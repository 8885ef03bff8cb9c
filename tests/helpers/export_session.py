"""For the HTML export tests: a realistic session to export (three branches, a compaction, a branch
summary, images, every built-in tool, an edit diff, thinking, and a script payload in every place
session text can go) and an audit of the HTML that comes out."""

from __future__ import annotations

import base64
import itertools
import re
import struct
import zlib
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from tau.ai.types import (
    AssistantMessage,
    Cost,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from tau.session import IdSource, SessionManager
from tau.session.messages import BashExecutionMessage
from tau.tools.edit_diff import generate_diff

PAYLOAD = "<script>alert(1)</script><img src=x onerror=alert(2)>"
START_MS = 1_767_225_600_000


def make_png(width: int, height: int) -> str:
    """Base64 of a small RGB gradient PNG (made here, so the test ships no binary file)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(
        b"\x00" + b"".join(bytes((x * 255 // width, y * 255 // height, 160)) for x in range(width))
        for y in range(height)
    )
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    data = (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )
    return base64.b64encode(data).decode()


PNG = make_png(120, 60)

APP_BEFORE = 'def greet(name):\n    return "hi " + name\n\n\nprint(greet("world"))\n'
APP_AFTER = APP_BEFORE.replace('"hi " + name', 'f"Hello, {name}!"')


def ids() -> IdSource:
    counter = itertools.count(1)
    clock = itertools.count(START_MS, 1000)
    return IdSource(
        clock=lambda: next(clock),
        random_uuid=lambda: f"{next(counter):08x}-0000-4000-8000-000000000000",
        session_uuid=lambda: "0195f000-0000-7000-8000-000000000001",
    )


def usage(tokens_in: int, tokens_out: int, dollars: float) -> Usage:
    return Usage(
        input=tokens_in,
        output=tokens_out,
        cache_read=1000,
        cache_write=200,
        total_tokens=tokens_in + tokens_out + 1200,
        cost=Cost(total=dollars),
    )


def reply(*blocks: TextContent | ThinkingContent | ToolCall, error: str | None = None) -> AssistantMessage:
    has_calls = any(isinstance(b, ToolCall) for b in blocks)
    return AssistantMessage(
        content=list(blocks),
        api="anthropic-messages",
        provider="anthropic",
        model="claude-sonnet-4-5",
        usage=usage(1500, 120, 0.0123),
        stop_reason="error" if error else "toolUse" if has_calls else "stop",
        error_message=error,
    )


def result(
    call_id: str, name: str, text: str, *, details: object = None, images: int = 0
) -> ToolResultMessage:
    content: list[TextContent | ImageContent] = [TextContent(text)]
    content += [ImageContent(data=PNG, mime_type="image/png") for _ in range(images)]
    return ToolResultMessage(tool_call_id=call_id, tool_name=name, content=content, details=details)


@dataclass
class BuiltSession:
    manager: SessionManager
    path: Path
    first_user_id: str
    payload_places: dict[str, str]
    """Where the payload went: kind of text → entry id."""
    main_reply_id: str
    main_leaf_id: str
    side_leaf_id: str
    summary_leaf_id: str
    compaction_id: str
    branch_summary_id: str


def build_session(directory: Path) -> BuiltSession:
    manager = SessionManager.create(str(directory / "project"), str(directory / "sessions"), ids=ids())
    manager.append_model_change("anthropic", "claude-sonnet-4-5")
    manager.append_thinking_level_change("medium")
    first_user = manager.append_message(
        UserMessage(
            [
                TextContent(f"Fix the greeting {PAYLOAD}\n\nSee the screenshot:"),
                ImageContent(PNG, "image/png"),
            ]
        )
    )
    first_reply = manager.append_message(
        reply(
            ThinkingContent(f"The user wants a nicer greeting. {PAYLOAD}"),
            TextContent(f"Let me look at the code first. {PAYLOAD}"),
            ToolCall("call-read", "read", {"path": "src/app.py"}),
            ToolCall("call-bash", "bash", {"command": f"ls -la && echo '{PAYLOAD}'"}),
        )
    )
    manager.append_message(result("call-read", "read", APP_BEFORE))
    bash_output = manager.append_message(
        result("call-bash", "bash", f"total 8\n\x1b[34msrc\x1b[0m\n{PAYLOAD}\n" + "line\n" * 40)
    )
    manager.append_message(
        reply(
            TextContent("Searching for other callers."),
            ToolCall(
                "call-grep", "grep", {"pattern": "greet", "path": "src", "glob": "*.py", "ignoreCase": True}
            ),
            ToolCall("call-find", "find", {"pattern": "*.py", "path": "."}),
            ToolCall("call-ls", "ls", {"path": f"src/{PAYLOAD}"}),
        )
    )
    manager.append_message(result("call-grep", "grep", "src/app.py:1: def greet(name):"))
    file_names = manager.append_message(result("call-find", "find", f"src/app.py\nsrc/{PAYLOAD}.py"))
    manager.append_message(result("call-ls", "ls", "app.py\n"))
    diff = generate_diff(APP_BEFORE, APP_AFTER)
    manager.append_message(
        reply(
            ToolCall(
                "call-edit",
                "edit",
                {
                    "path": "src/app.py",
                    "edits": [{"oldText": '"hi " + name', "newText": 'f"Hello, {name}!"'}],
                },
            ),
            ToolCall(
                "call-write", "write", {"path": "src/notes.ts", "content": "export const n: number = 1;\n"}
            ),
            ToolCall("call-shot", "screenshot", {"target": PAYLOAD}),
        )
    )
    manager.append_message(
        result(
            "call-edit",
            "edit",
            "Successfully replaced 1 block(s) in src/app.py.",
            details={"diff": diff.diff, "firstChangedLine": diff.first_changed_line},
        )
    )
    manager.append_message(result("call-write", "write", "Successfully wrote 29 bytes to src/notes.ts"))
    manager.append_message(result("call-shot", "screenshot", PAYLOAD, images=1))
    bash_execution = manager.append_message(
        BashExecutionMessage(command=f"git status # {PAYLOAD}", output=f"clean {PAYLOAD}", exit_code=0)
    )
    custom_message = manager.append_custom_message_entry("note", f"An extension says {PAYLOAD}", display=True)
    manager.append_custom_entry("state", {"x": PAYLOAD})
    compaction = manager.append_compaction(
        f"## Goal\nNicer greeting.\n\n## Done\n- edited `src/app.py` {PAYLOAD}",
        first_kept_entry_id=first_reply,
        tokens_before=48_000,
        details={"readFiles": ["src/app.py"], "modifiedFiles": [f"src/{PAYLOAD}.py"]},
    )
    manager.append_message(
        UserMessage("Thanks! Any [docs](javascript:alert(3)) or [links](https://example.com)?")
    )
    main_reply = manager.append_message(
        reply(
            TextContent(
                "Done:\n\n```python\nprint(greet('world'))\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"
                f"[bad](javascript:alert(4)) {PAYLOAD}"
            )
        )
    )
    manager.append_label_change(first_user, f"start {PAYLOAD}")
    manager.append_session_info(f"Greeting fix {PAYLOAD}")
    main_leaf = manager.get_leaf_id() or main_reply

    manager.branch(first_reply)
    manager.append_message(UserMessage("Try a different approach instead"))
    side_leaf = manager.append_message(
        reply(TextContent("Alternative branch reply"), error=f"overloaded {PAYLOAD}")
    )

    branch_summary = manager.branch_with_summary(first_user, f"Tried an alternative; it failed. {PAYLOAD}")
    manager.append_message(UserMessage("Third branch question"))
    summary_leaf = manager.append_message(reply(TextContent("Third branch answer")))
    assert manager.get_session_file() is not None
    return BuiltSession(
        manager=manager,
        path=Path(manager.get_session_file() or ""),
        first_user_id=first_user,
        payload_places={
            "user text": first_user,
            "assistant text": first_reply,
            "thinking": first_reply,
            "tool arguments": first_reply,
            "tool output": bash_output,
            "file names": file_names,
            "custom message": custom_message,
            "bash execution": bash_execution,
            "compaction": compaction,
            "branch summary": branch_summary,
            "error message": side_leaf,
        },
        main_reply_id=main_reply,
        main_leaf_id=main_leaf,
        side_leaf_id=side_leaf,
        summary_leaf_id=summary_leaf,
        compaction_id=compaction,
        branch_summary_id=branch_summary,
    )


# Old pi session files, written by hand from the format (spec 40 §5): v1 has no ids and a compaction
# pointing at a line index; v2 has ids and the old hookMessage role.
V1_SESSION: list[dict[str, Any]] = [
    {
        "type": "session",
        "id": "v1-session",
        "timestamp": "2025-11-03T09:12:40.118Z",
        "cwd": "/w",
        "provider": "anthropic",
    },
    {
        "type": "message",
        "timestamp": "2025-11-03T09:12:41.002Z",
        "message": {"role": "user", "content": "Why does it crash?", "timestamp": 1762160000000},
    },
    {
        "type": "message",
        "timestamp": "2025-11-03T09:12:44.530Z",
        "message": {
            "role": "assistant",
            "content": [{"type": "text", "text": "An **unguarded** index."}],
            "api": "anthropic-messages",
            "provider": "anthropic",
            "model": "claude-sonnet-4-5",
            "usage": {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "cost": {"total": 0.5}},
            "stopReason": "stop",
            "timestamp": 1762160004000,
        },
    },
    {
        "type": "compaction",
        "timestamp": "2025-11-03T09:13:00.000Z",
        "summary": "Found the crash.",
        "firstKeptEntryIndex": 2,
        "tokensBefore": 900,
    },
]

V2_SESSION: list[dict[str, Any]] = [
    {
        "type": "session",
        "version": 2,
        "id": "v2-session",
        "timestamp": "2025-12-01T14:02:10.504Z",
        "cwd": "/w",
    },
    {
        "type": "message",
        "id": "5e1f0a9c",
        "parentId": None,
        "timestamp": "2025-12-01T14:02:15.871Z",
        "message": {"role": "user", "content": "Add a flag.", "timestamp": 1764597735870},
    },
    {
        "type": "message",
        "id": "77aa00bb",
        "parentId": "5e1f0a9c",
        "timestamp": "2025-12-01T14:02:16.000Z",
        "message": {
            "role": "hookMessage",
            "customType": "reminder",
            "content": "Remember the docs.",
            "display": True,
            "timestamp": 1764597736000,
        },
    },
]


@dataclass
class HtmlAudit:
    """What a page contains that could run script or reach out."""

    tags: set[str] = field(default_factory=set)
    scripts: int = 0
    event_handlers: list[str] = field(default_factory=list)
    hrefs: list[str] = field(default_factory=list)
    image_sources: list[str] = field(default_factory=list)


class _Auditor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.audit = HtmlAudit()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.audit.tags.add(tag)
        if tag == "script":
            self.audit.scripts += 1
        for name, value in attrs:
            if name.startswith("on"):
                self.audit.event_handlers.append(f"{tag} {name}={value}")
            elif name == "href":
                self.audit.hrefs.append(value or "")
            elif name == "src":
                self.audit.image_sources.append(value or "")


def audit_html(html: str) -> HtmlAudit:
    auditor = _Auditor()
    auditor.feed(html)
    auditor.close()
    return auditor.audit


def is_harmless_href(href: str) -> bool:
    scheme = re.match(r"([a-z][a-z0-9+.\-]*):", re.sub(r"[\x00-\x20]", "", href).lower())
    return scheme is None or scheme.group(1) in ("http", "https", "mailto")


def decode_embedded(page: str) -> dict[str, Any]:
    """The session data a page embeds, with shown images put back from their ``<img>`` tags (what
    the page's script does)."""
    import base64
    import gzip
    import json
    import re

    match = re.search(r'<script type="application/octet-stream" id="session-data">([^<]*)</script>', page)
    assert match is not None
    data: dict[str, Any] = json.loads(gzip.decompress(base64.b64decode(match.group(1))))
    images = dict(re.findall(r'data-image-key="([0-9a-f]+)" src="data:[^;]+;base64,([^"]*)"', page))

    def restore(value: Any) -> Any:
        if isinstance(value, list):
            return [restore(item) for item in value]
        if isinstance(value, dict):
            data_field = value.get("data")
            if (
                value.get("type") == "image"
                and isinstance(data_field, str)
                and data_field.startswith("tau-image:")
            ):
                return {**value, "data": images[data_field.removeprefix("tau-image:")]}
            return {k: restore(v) for k, v in value.items()}
        return value

    data["entries"] = restore(data["entries"])
    return data
