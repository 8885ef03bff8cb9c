"""Content pi 1.x writes into session files: context edits, usage records, system messages and the
new assistant fields. Read from files, projected as pi projects them, written back as pi writes."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tau.ai.types import AssistantMessage, TextContent, ToolResultMessage, Usage, UserMessage
from tau.session import IdSource, SessionManager
from tau.session.messages import SystemMessage
from tau.session.usage import usages

Objects = list[dict[str, Any]]


def write_session(path: Path, entries: Objects) -> Path:
    header = {
        "type": "session",
        "version": 3,
        "id": "s1",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "cwd": "/p",
    }
    parent = None
    lines = [header]
    for index, entry in enumerate(entries):
        entry = {
            "id": entry.pop("id", f"e{index}"),
            "parentId": parent,
            "timestamp": "2026-01-01T00:00:01.000Z",
            **entry,
        }
        parent = entry["id"]
        lines.append(entry)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def user(text: str, id: str) -> dict[str, Any]:
    return {"type": "message", "id": id, "message": {"role": "user", "content": text, "timestamp": 1}}


def assistant(text: str, id: str, **extra: Any) -> dict[str, Any]:
    message = {
        "role": "assistant", "content": [{"type": "text", "text": text}], "api": "openai-completions",
        "provider": "local", "model": "m", "usage": usage_json(10, 5, 0.5), "stopReason": "stop", "timestamp": 2,
        **extra,
    }  # fmt: skip
    return {"type": "message", "id": id, "message": message}


def usage_json(input: int, output: int, cost: float) -> dict[str, Any]:
    return {
        "input": input, "output": output, "cacheRead": 0, "cacheWrite": 0, "totalTokens": input + output,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": cost},
    }  # fmt: skip


def edit(target: str, replacement: Any, id: str) -> dict[str, Any]:
    return {"type": "context_edit", "id": id, "targetId": target, "replacement": replacement}


def texts(manager: SessionManager) -> list[str]:
    out = []
    for message in manager.build_session_context().messages:
        assert isinstance(message, UserMessage | AssistantMessage | ToolResultMessage)
        content = message.content
        out.append(content if isinstance(content, str) else "".join(getattr(b, "text", "") for b in content))
    return out


def test_a_context_edit_with_null_replacement_leaves_its_target_out_of_the_context(tmp_path: Path) -> None:
    path = write_session(
        tmp_path / "s.jsonl", [user("a", "u1"), assistant("b", "a1"), edit("u1", None, "x1")]
    )
    manager = SessionManager.open(str(path))
    assert texts(manager) == ["b"]
    assert manager.warnings == []


def test_a_string_replacement_of_an_assistant_becomes_one_text_block(tmp_path: Path) -> None:
    path = write_session(
        tmp_path / "s.jsonl", [user("a", "u1"), assistant("b", "a1"), edit("a1", {"content": "B"}, "x1")]
    )
    [_, reply] = SessionManager.open(str(path)).build_session_context().messages
    assert isinstance(reply, AssistantMessage)
    assert reply.content == [TextContent("B")]
    assert (reply.provider, reply.model, reply.usage.input) == ("local", "m", 10)  # only the content changes


def test_the_latest_edit_of_a_target_wins(tmp_path: Path) -> None:
    entries = [
        user("a", "u1"),
        assistant("b", "a1"),
        edit("u1", {"content": "one"}, "x1"),
        edit("u1", {"content": "two"}, "x2"),
    ]
    assert texts(SessionManager.open(str(write_session(tmp_path / "s.jsonl", entries)))) == ["two", "b"]


def test_a_branch_from_before_the_edit_sees_the_original(tmp_path: Path) -> None:
    path = write_session(
        tmp_path / "s.jsonl", [user("a", "u1"), assistant("b", "a1"), edit("u1", None, "x1")]
    )
    manager = SessionManager.open(str(path))
    manager.branch("a1")
    assert texts(manager) == ["a", "b"]


def test_an_edit_written_by_tau_projects_and_reloads(tmp_path: Path, ids: IdSource, msg: Any) -> None:
    manager = SessionManager.create(str(tmp_path), str(tmp_path / "sessions"), ids=ids)
    target = manager.append_message(msg.user("secret"))
    manager.append_message(msg.assistant("ok"))
    manager.append_context_edit(target, {"content": "[redacted]"})
    assert texts(manager) == ["[redacted]", "ok"]
    file = manager.get_session_file()
    assert file is not None
    assert texts(SessionManager.open(file, ids=ids)) == ["[redacted]", "ok"]
    assert json.loads(Path(file).read_text().splitlines()[-1])["replacement"] == {"content": "[redacted]"}


def test_a_context_edit_of_a_missing_entry_is_ignored_with_a_warning(tmp_path: Path) -> None:
    path = write_session(
        tmp_path / "s.jsonl", [user("a", "u1"), assistant("b", "a1"), edit("gone", None, "x1")]
    )
    manager = SessionManager.open(str(path))
    assert texts(manager) == ["a", "b"]
    assert manager.warnings == [
        f"{path}: context edit x1 targets entry gone, which is not in the file; ignored"
    ]


def test_usage_entries_and_summary_usage_count_in_the_totals(tmp_path: Path) -> None:
    tool_result = {
        "type": "message", "id": "t1",
        "message": {"role": "toolResult", "toolCallId": "c", "toolName": "x", "content": [], "isError": False,
                    "usage": usage_json(3, 1, 0.25), "timestamp": 3},
    }  # fmt: skip
    entries = [
        user("a", "u1"),
        assistant("b", "a1"),
        tool_result,
        {"type": "usage", "id": "w1", "kind": "cache_warm", "provider": "p", "model": "m", "usage": usage_json(0, 0, 1.0)},
        {"type": "compaction", "id": "c1", "summary": "s", "firstKeptEntryId": "a1", "tokensBefore": 9,
         "usage": usage_json(100, 20, 2.0)},
        {"type": "branch_summary", "id": "b1", "fromId": "c1", "summary": "t", "usage": usage_json(7, 3, 4.0)},
    ]  # fmt: skip
    manager = SessionManager.open(str(write_session(tmp_path / "s.jsonl", entries)))
    recorded = list(usages(manager.get_entries()))
    assert [u.input for u in recorded] == [10, 3, 0, 100, 7]
    assert sum(u.cost.total for u in recorded) == 7.75
    # usage entries are not part of the conversation
    assert [m.role for m in manager.build_session_context().messages] == [
        "compactionSummary",
        "assistant",
        "toolResult",
        "branchSummary",
    ]


def test_summary_usage_written_by_tau_is_kept(tmp_path: Path, ids: IdSource, msg: Any) -> None:
    manager = SessionManager.create(str(tmp_path), str(tmp_path / "sessions"), ids=ids)
    first = manager.append_message(msg.user("a"))
    manager.append_message(msg.assistant("b"))
    manager.append_compaction("sum", first, 10, usage=Usage(input=40, output=2, total_tokens=42))
    file = manager.get_session_file()
    assert file is not None
    reopened = SessionManager.open(file, ids=ids)
    assert [u.input for u in usages(reopened.get_entries())] == [10, 40]


def test_new_assistant_fields_round_trip() -> None:
    data = assistant(
        "b", "a1", responseId="r-1", rawStopReason="end_turn", durationMs=120, thinkingLevel="high"
    )["message"]
    message = AssistantMessage.from_json(data)
    assert (message.response_id, message.raw_stop_reason, message.duration_ms, message.thinking_level) == (
        "r-1", "end_turn", 120, "high",
    )  # fmt: skip
    assert message.to_json() == data | {"usage": message.usage.to_json()}


SYSTEM = {
    "role": "system", "content": "",
    "sections": {"preamble": "You help.", "tools": "<tools>read</tools>", "cwd": "<cwd>/p</cwd>"},
    "timestamp": 5, "toolsAdded": [{"name": "read", "description": "Read", "parameters": {}},
                                   {"name": "write", "description": "Write", "parameters": {}}],
}  # fmt: skip
PATCH = {"role": "system", "content": "", "sections": {"cwd": None, "skills": "<skills/>"}, "timestamp": 6,
         "toolsRemoved": [{"name": "write"}]}  # fmt: skip


def test_system_messages_replay_into_the_branch_prompt_and_tools(tmp_path: Path) -> None:
    entries = [
        {"type": "message", "id": "s1", "message": SYSTEM},
        user("a", "u1"),
        assistant("b", "a1"),
        {"type": "message", "id": "s2", "message": PATCH},
    ]
    context = SessionManager.open(str(write_session(tmp_path / "s.jsonl", entries))).build_session_context()
    assert [m.role for m in context.messages] == ["user", "assistant"]
    system = context.system_message
    assert system is not None
    assert system.sections == {"preamble": "You help.", "tools": "<tools>read</tools>", "skills": "<skills/>"}
    assert [t["name"] for t in system.tools_added or []] == ["read"]
    assert system.text() == "You help.\n\n<tools>read</tools>\n\n<skills/>"


def test_a_branch_without_the_patch_keeps_the_first_prompt(tmp_path: Path) -> None:
    entries = [{"type": "message", "id": "s1", "message": SYSTEM}, user("a", "u1"), assistant("b", "a1"),
               {"type": "message", "id": "s2", "message": PATCH}]  # fmt: skip
    manager = SessionManager.open(str(write_session(tmp_path / "s.jsonl", entries)))
    manager.branch("a1")
    system = manager.build_session_context().system_message
    assert system is not None and [t["name"] for t in system.tools_added or []] == ["read", "write"]


def test_a_compaction_records_the_branch_prompt_as_its_checkpoint(tmp_path: Path, ids: IdSource) -> None:
    entries = [{"type": "message", "id": "s1", "message": SYSTEM}, user("a", "u1"), assistant("b", "a1"),
               {"type": "message", "id": "s2", "message": PATCH}, user("c", "u2"), assistant("d", "a2")]  # fmt: skip
    path = write_session(tmp_path / "s.jsonl", entries)
    manager = SessionManager.open(str(path), ids=ids)
    before = manager.build_session_context().system_message
    manager.append_compaction("summary", "u1", 100)
    line = json.loads(path.read_text().splitlines()[-1])
    assert line["systemMessage"]["sections"] == (before.sections if before else None)
    after = SessionManager.open(str(path), ids=ids).build_session_context()
    # the kept range holds the patch, but only the checkpoint counts: the same prompt, once
    assert after.system_message is not None and after.system_message.sections == before.sections  # type: ignore[union-attr]
    assert [m.role for m in after.messages] == ["compactionSummary", "user", "assistant", "user", "assistant"]


def test_the_branch_system_message_alone_is_the_contexts_on_every_branch(
    tmp_path: Path, ids: IdSource
) -> None:
    entries = [{"type": "message", "id": "s1", "message": SYSTEM}, user("a", "u1"), assistant("b", "a1"),
               {"type": "message", "id": "s2", "message": PATCH}, user("c", "u2"), assistant("d", "a2")]  # fmt: skip
    manager = SessionManager.open(str(write_session(tmp_path / "s.jsonl", entries)), ids=ids)
    manager.append_compaction("summary", "u2", 100)
    manager.append_message(SystemMessage.from_json({**PATCH, "toolsRemoved": [{"name": "read"}]}))
    leaves = [None, "s1", "u1", "a1", "s2", "a2", *(e.id for e in manager.get_entries()[-2:])]
    for leaf in leaves:
        if leaf is None:
            manager.reset_leaf()
        else:
            manager.branch(leaf)
        assert manager.branch_system_message() == manager.build_session_context().system_message, leaf


def test_system_messages_dump_back_unchanged(tmp_path: Path, read_jsonl: Callable[[Path], Objects]) -> None:
    assert SystemMessage.from_json(SYSTEM).to_json() == SYSTEM
    assert SystemMessage.from_json(PATCH).to_json() == PATCH
