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
    yield from tau_command(tmp_path)


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
