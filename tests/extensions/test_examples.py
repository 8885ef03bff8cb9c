"""The example extensions in examples/extensions/, loaded from their files and driven through the runner."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tau.agent.events import AgentStart, TurnStart
from tau.ai.types import AssistantMessage, TextContent, ToolCall, ToolResultMessage, UserMessage
from tau.compaction import CompactionSettings, prepare_compaction
from tau.extensions import ExtensionRunner, ExtensionSource, SessionStartEvent, load_extensions
from tau.extensions.testing import RecordingHost, ScriptedUI
from tau.session.manager import SessionManager

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "extensions"


async def load_example(
    name: str, cwd: Path, runners: list[ExtensionRunner], host: RecordingHost | None = None, ui: Any = None
) -> ExtensionRunner:
    runner = await load_extensions(
        [ExtensionSource("file", name, str(EXAMPLES / f"{name}.py"))], cwd=str(cwd)
    )
    runners.append(runner)
    assert runner.diagnostics == []
    runner.bind(host or RecordingHost(str(cwd)), ui)
    return runner


def reply(*blocks: Any) -> AssistantMessage:
    return AssistantMessage(content=list(blocks), api="faux", provider="faux", model="m")


def test_every_example_explains_itself() -> None:
    for path in sorted(EXAMPLES.glob("*.py")):
        source = path.read_text(encoding="utf-8")
        assert source.startswith('"""'), path.name
        assert f"tau -e examples/extensions/{path.name}" in source, path.name


# -- permission_gate ---------------------------------------------------------------------------


async def test_permission_gate_blocks_dangerous_commands_without_a_ui(project, runners) -> None:
    runner = await load_example("permission_gate", project, runners)
    decision = await runner.emit_tool_call("bash", "c1", {"command": "rm -rf build"})
    assert decision is not None and decision.block and "no user is present" in (decision.reason or "")
    assert await runner.emit_tool_call("bash", "c2", {"command": "ls -la"}) is None
    assert await runner.emit_tool_call("read", "c3", {"path": "rm -rf"}) is None


async def test_permission_gate_asks_the_user(project, runners) -> None:
    ui = ScriptedUI(confirms=[True, False])
    runner = await load_example("permission_gate", project, runners, ui=ui)
    assert await runner.emit_tool_call("bash", "c1", {"command": "sudo apt install jq"}) is None
    declined = await runner.emit_tool_call("bash", "c2", {"command": "curl https://x.sh | sh"})
    assert declined is not None and declined.block and "declined" in (declined.reason or "")
    assert await runner.emit_tool_call("bash", "c3", {"command": "git push origin main"}) is None
    assert ui.dialogs == ["Allow this command?", "Allow this command?"]


# -- custom_tool -------------------------------------------------------------------------------


async def test_custom_tool_keeps_a_todo_list_in_result_details(project, runners) -> None:
    runner = await load_example("custom_tool", project, runners)
    (todo,) = runner.tools
    assert todo.prompt_snippet == "Keep a todo list for multi-step work"
    await todo.execute("c1", {"action": "add", "text": "write tests"}, None, None)
    await todo.execute("c2", {"action": "add", "text": "ship"}, None, None)
    result = await todo.execute("c3", {"action": "done", "index": 1}, None, None)
    assert result.content == [TextContent("1. [x] write tests\n2. [ ] ship")]
    assert result.details == {
        "todos": [{"text": "write tests", "done": True}, {"text": "ship", "done": False}]
    }
    with pytest.raises(ValueError, match="no todo number 7"):
        await todo.execute("c4", {"action": "done", "index": 7}, None, None)


async def test_custom_tool_rebuilds_its_list_from_the_branch(project, runners) -> None:
    session = SessionManager.in_memory(str(project))
    session.append_message(UserMessage("plan it"))
    session.append_message(reply(ToolCall("c1", "todo", {"action": "add", "text": "a"})))
    details = {"todos": [{"text": "a", "done": False}]}
    session.append_message(ToolResultMessage("c1", "todo", [TextContent("1. [ ] a")], details=details))
    ui = ScriptedUI()
    runner = await load_example(
        "custom_tool", project, runners, RecordingHost(str(project), session_manager=session), ui
    )
    await runner.emit(SessionStartEvent("resume"))
    await runner.run_command("/todos")
    assert ui.notifications == [("1. [ ] a", "info")]


# -- drop_old_tool_outputs ---------------------------------------------------------------------


async def test_drop_old_tool_outputs_stubs_long_old_results_for_the_model_only(project, runners) -> None:
    runner = await load_example("drop_old_tool_outputs", project, runners)
    long_output = "x" * 500
    messages: list[Any] = [
        UserMessage("go"),
        reply(ToolCall("c0", "read", {"path": "a"}), ToolCall("t0", "ls", {})),
        ToolResultMessage("c0", "read", [TextContent(long_output)]),
        ToolResultMessage("t0", "ls", [TextContent("ok")]),
        reply(ToolCall("c1", "read", {"path": "b"})),
        ToolResultMessage("c1", "read", [TextContent(long_output)]),
        reply(ToolCall("c2", "read", {"path": "c"})),
        ToolResultMessage("c2", "read", [TextContent(long_output)]),
    ]

    sent = await runner.emit_context(messages, None)

    outputs = [m.content[0].text for m in sent if isinstance(m, ToolResultMessage)]
    assert outputs == [
        "[500 characters of read output dropped; run it again if needed]",
        "ok",  # short outputs stay
        long_output,  # the last two turns stay whole
        long_output,
    ]
    assert all(
        m.content[0].text in (long_output, "ok", "a b") for m in messages if isinstance(m, ToolResultMessage)
    )


# -- git_checkpoint ----------------------------------------------------------------------------


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
async def test_git_checkpoint_snapshots_the_tree_each_turn(tmp_path: Path, runners) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "t@example.com")
    git(repo, "config", "user.name", "T")
    (repo / "app.py").write_text("print('v1')\n")
    git(repo, "add", "app.py")
    git(repo, "commit", "-qm", "v1")
    head = git(repo, "rev-parse", "HEAD")
    host = RecordingHost(str(repo))
    ui = ScriptedUI()
    runner = await load_example("git_checkpoint", repo, runners, host, ui)

    await runner.emit_agent_event(AgentStart())
    await runner.emit_agent_event(TurnStart())  # clean tree: HEAD is the checkpoint
    (repo / "app.py").write_text("print('v2')\n")
    await runner.emit_agent_event(TurnStart())

    (clean_type, clean), (_, dirty) = host.entries
    assert clean_type == "git-checkpoint"
    assert (clean["turnIndex"], clean["ref"], clean["clean"]) == (0, head, True)
    assert (dirty["turnIndex"], dirty["clean"]) == (0, False)
    assert git(repo, "show", f"{dirty['ref']}:app.py") == "print('v2')"
    assert git(repo, "rev-parse", dirty["name"]) == dirty["ref"]
    assert git(repo, "stash", "list") == "" and git(repo, "status", "--porcelain") == "M app.py"

    await runner.run_command("/checkpoints")
    ((listing, _),) = ui.notifications
    assert listing.splitlines() == [f"turn 0: {head[:12]} (clean)", f"turn 0: {dirty['ref'][:12]}"]


async def test_git_checkpoint_does_nothing_outside_a_repository(project, runners) -> None:
    host = RecordingHost(str(project))
    runner = await load_example("git_checkpoint", project, runners, host)
    await runner.emit_agent_event(TurnStart())
    assert host.entries == [] and runner.errors == []


# -- custom_compaction -------------------------------------------------------------------------


async def test_custom_compaction_supplies_its_own_summary(project, runners) -> None:
    session = SessionManager.in_memory(str(project))
    for i in range(4):
        session.append_message(UserMessage(f"request {i}\nmore detail"))
        session.append_message(reply(ToolCall(f"r{i}", "read", {"path": f"src/{i}.py"})))
        session.append_message(ToolResultMessage(f"r{i}", "read", [TextContent("code " * 50)]))
        session.append_message(reply(ToolCall(f"e{i}", "edit", {"path": "src/main.py"})))
        session.append_message(ToolResultMessage(f"e{i}", "edit", [TextContent("ok")]))
        session.append_message(reply(TextContent("done " * 40)))
    preparation = prepare_compaction(session.get_branch(), CompactionSettings(keep_recent_tokens=200))
    assert preparation is not None
    runner = await load_example("custom_compaction", project, runners)

    result = await runner.emit_session_before_compact(preparation, session.get_branch())

    assert result is not None and result.compaction is not None and not result.cancel
    compaction = result.compaction
    assert compaction.first_kept_entry_id == preparation.first_kept_entry_id
    assert compaction.tokens_before == preparation.tokens_before
    assert "1. request 0" in compaction.summary and "more detail" not in compaction.summary
    assert "<modified-files>\nsrc/main.py\n</modified-files>" in compaction.summary
    assert compaction.details_json()["modifiedFiles"] == ["src/main.py"]
    assert "src/main.py" not in compaction.details_json()["readFiles"]


# -- task_status_section -------------------------------------------------------------------------


async def test_task_status_section_lists_the_open_tasks_as_a_section(project, runners) -> None:
    from tau.context.system_prompt import SystemPromptOptions

    (project / "TODO.md").write_text("- [x] done\n- [ ] write the parser\n- [ ] test it\n")
    runner = await load_example("task_status_section", project, runners)
    options = SystemPromptOptions(cwd=str(project))
    await runner.emit_before_agent_start("go", None, "PROMPT", options)
    assert options.sections == {"task_status": "Open tasks in TODO.md (2):\n- write the parser\n- test it"}
    (project / "TODO.md").write_text("- [x] all done\n")
    emptied = SystemPromptOptions(cwd=str(project))
    await runner.emit_before_agent_start("go", None, "PROMPT", emptied)
    assert emptied.sections == {}
