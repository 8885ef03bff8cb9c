"""A session pi 1.6 wrote, continued by the real tau: tau sends the conversation pi 1.6 sent when it
continued the same file. The fixtures (tests/session/fixtures/pi16/) come from a real pi 1.6 run
against the fake server; ``scripts/gen_pi16_fixtures.py`` makes them again."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tau_command import MODEL, TauCommand, tau_command

from tau.session import SessionManager
from tau.testing.fake_llm import text_turn

PI16 = Path(__file__).parent / "fixtures" / "pi16"


@pytest.fixture
def tau(tmp_path: Path) -> Iterator[TauCommand]:
    # pi ran in this folder; tau refuses to continue a session whose folder is gone, so it must exist.
    header = json.loads((PI16 / "session.jsonl").read_text().splitlines()[0])
    folder = Path(header["cwd"])
    made = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    try:
        yield from tau_command(tmp_path)
    finally:
        if made:
            shutil.rmtree(folder.parent if folder.parent.name.startswith("tau-pi16") else folder)


def continue_with_tau(tau: TauCommand) -> tuple[dict[str, Any], Path]:
    session = Path(shutil.copy(PI16 / "session.jsonl", tau.work / "session.jsonl"))
    tau.server.add(text_turn("Done."))
    done = tau.run(*MODEL, "--session", str(session), "-p", "Thanks, that is all.")
    assert done.returncode == 0, done.stderr
    [request] = tau.server.requests
    return request.body, session


def test_tau_continuing_a_pi16_session_sends_the_conversation_pi16_sent(tau: TauCommand) -> None:
    sent, _ = continue_with_tau(tau)
    expected = json.loads((PI16 / "continue_request.json").read_text())
    # After the leading system prompt (each tool states its own) the messages are the same, byte for byte.
    assert sent["messages"][0]["role"] == expected["messages"][0]["role"] == "system"
    assert sent["messages"][1:] == expected["messages"][1:]
    assert {k: v for k, v in sent.items() if k not in ("messages", "tools")} == {
        k: v for k, v in expected.items() if k not in ("messages", "tools")
    }
    assert [t["function"]["name"] for t in sent["tools"]] == [
        t["function"]["name"] for t in expected["tools"]
    ]


def test_tau_appends_to_the_pi16_file_without_touching_what_pi_wrote(tau: TauCommand) -> None:
    original = (PI16 / "session.jsonl").read_bytes()
    _, session = continue_with_tau(tau)
    assert session.read_bytes().startswith(original)
    manager = SessionManager.open(str(session))
    assert manager.warnings == []
    roles = [m.role for m in manager.build_session_context().messages]
    assert roles == ["user", "assistant", "toolResult", "assistant", "user", "assistant"]


def test_the_pi16_system_message_gives_the_branch_prompt_and_tools() -> None:
    context = SessionManager.open(str(PI16 / "continued.jsonl")).build_session_context()
    system = context.system_message
    assert system is not None and system.sections is not None
    assert list(system.sections) == ["preamble", "tools", "rules", "docs", "cwd"]
    assert [t["name"] for t in system.tools_added or []] == ["read", "bash", "edit", "write"]
    assert "system" not in [m.role for m in context.messages]


def system_lines(path: Path) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return [
        line["message"] for line in lines if line["type"] == "message" and line["message"]["role"] == "system"
    ]


def test_tau_records_its_prompt_and_tools_before_the_first_message_as_pi_does(tau: TauCommand) -> None:
    tau.server.add(text_turn("hi"), text_turn("again"))
    assert tau.run(*MODEL, "-p", "hello").returncode == 0
    [session] = tau.session_files()
    [system] = system_lines(session)
    sent = tau.server.requests[0].body
    # The prompt as named sections (issue #31), which joined a blank line apart are the prompt sent.
    assert list(system["sections"]) == ["preamble", "tools", "rules", "docs", "cwd"]
    assert "\n\n".join(system["sections"].values()) == sent["messages"][0]["content"]
    declared = [(t["name"], t["description"], t["parameters"]) for t in system["toolsAdded"]]
    assert declared == [
        (t["function"]["name"], t["function"]["description"], t["function"]["parameters"])
        for t in sent["tools"]
    ]
    types = [json.loads(line)["type"] for line in session.read_text().splitlines()]
    assert types[1:4] == ["model_change", "thinking_level_change", "message"]  # the system message leads
    # Continuing with the same prompt and tools records nothing new.
    assert tau.run(*MODEL, "-c", "-p", "more").returncode == 0
    assert len(system_lines(session)) == 1


def test_a_changed_tool_set_is_recorded_as_a_patch(tau: TauCommand) -> None:
    tau.server.add(text_turn("hi"), text_turn("again"))
    assert tau.run(*MODEL, "-p", "hello").returncode == 0
    assert tau.run(*MODEL, "--tools", "read,bash", "-c", "-p", "more").returncode == 0
    [session] = tau.session_files()
    _, patch = system_lines(session)
    assert [t["name"] for t in patch["toolsRemoved"]] == ["edit", "write"]
    assert "toolsAdded" not in patch and list(patch["sections"]) == ["tools", "rules"]  # only what changed
    branch = SessionManager.open(str(session)).build_session_context().system_message
    assert branch is not None and [t["name"] for t in branch.tools_added or []] == ["read", "bash"]
    first, second = (r.body for r in tau.server.requests)
    # The model without mid-conversation flags keeps the first prompt and tools (issue #31) and is
    # told of the change in a notice at the end.
    assert second["messages"][0] == first["messages"][0] and second["tools"] == first["tools"]
    notice = second["messages"][-1]["content"][-1]["text"]
    assert notice.startswith("<system_prompt_update>") and "Tools no longer available" in notice
    assert "edit, write" in notice and 'Updated system prompt section "tools"' in notice


def test_continuing_a_pi16_file_patches_pi_sections_away_and_sends_the_replayed_prompt(
    tau: TauCommand,
) -> None:
    sent, session = continue_with_tau(tau)
    *_, update = system_lines(session)
    # pi's sections of the same name get tau's text (pi's own text in them is replaced).
    assert list(update["sections"]) == ["preamble", "tools", "rules", "docs", "cwd"]
    assert "\n\n".join(v for v in update["sections"].values() if v) == sent["messages"][0]["content"]
    branch = SessionManager.open(str(session)).build_session_context().system_message
    assert branch is not None and branch.text() == sent["messages"][0]["content"]
    assert [t["name"] for t in branch.tools_added or []] == [t["function"]["name"] for t in sent["tools"]]


def test_a_resumed_branch_gets_back_the_tools_it_recorded(tau: TauCommand) -> None:
    tau.server.add(text_turn("hi"), text_turn("again"))
    assert tau.run(*MODEL, "--tools", "read,bash", "-p", "hello").returncode == 0
    assert tau.run(*MODEL, "-c", "-p", "more").returncode == 0  # no --tools: the branch's own
    assert [t["function"]["name"] for t in tau.server.requests[1].body["tools"]] == ["read", "bash"]
    [session] = tau.session_files()
    assert len(system_lines(session)) == 1  # nothing changed, nothing recorded


def test_an_explicit_tool_list_wins_over_the_recorded_one(tau: TauCommand) -> None:
    tau.server.add(text_turn("hi"), text_turn("again"))
    assert tau.run(*MODEL, "--tools", "read", "-p", "hello").returncode == 0
    assert tau.run(*MODEL, "--tools", "read,write", "-c", "-p", "more").returncode == 0
    assert [t["function"]["name"] for t in tau.server.requests[1].body["tools"]] == ["read", "write"]
