"""pi 1.6's notice of reasoning a provider withheld from the model (``showCacheMissNotices``):
the line from the reply's ``*_input_transformations`` diagnostic, in the real terminal against the
fake server, and the rule that only a count above the previous reply's is news."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tau_command import TauCommand
from terminal import ENTER, Terminal

from tau.ai.types import AssistantMessage, TextContent, UserMessage
from tau.modes.interactive.dropped_reasoning import dropped_reasoning_notice
from tau.session import SessionManager
from tau.testing.fake_llm import Turn

Start = Callable[..., Terminal]


def _ask(terminal: Terminal, text: str) -> None:
    terminal.type(text)
    terminal.send(ENTER)


def _use_api(tau: TauCommand, api: str, base_url: str) -> None:
    models = json.loads((tau.agent_dir / "models.json").read_text())
    models["providers"]["local"].update(api=api, baseUrl=base_url)
    (tau.agent_dir / "models.json").write_text(json.dumps(models))
    (tau.agent_dir / "settings.json").write_text(json.dumps({"showCacheMissNotices": True}))


def _thinking_dropped(*reasons: str) -> list[dict[str, Any]]:
    return [
        {"type": "thinking_dropped", "path": f"messages.{i}.content.0", "reason": reason}
        for i, reason in enumerate(reasons)
    ]


def _reply(diagnostics: list[dict[str, Any]] | None, at: int) -> AssistantMessage:
    return AssistantMessage(
        content=[TextContent("ok")],
        api="anthropic-messages",
        provider="p",
        model="m",
        diagnostics=diagnostics,
        timestamp=at,
    )


def _anthropic(*reasons: str) -> list[dict[str, Any]]:
    transformations = _thinking_dropped(*reasons)
    return [
        {
            "type": "anthropic_input_transformations",
            "timestamp": 1,
            "details": {"transformations": transformations},
        }
    ]


def test_the_line_counts_names_the_reasons_once_and_only_reports_growth() -> None:
    manager = SessionManager.in_memory("/p")
    first = _reply(_anthropic("prefix_mismatch"), 1)
    assert dropped_reasoning_notice(manager.get_branch(), first) == (
        "Anthropic dropped 1 thinking block: prefix_mismatch (details in session)"
    )
    manager.append_message(UserMessage(content="q"))
    manager.append_message(first)
    # The reply's own entry, already written, is not its previous reply.
    assert dropped_reasoning_notice(manager.get_branch(), first) is not None
    same = _reply(_anthropic("prefix_mismatch"), 2)
    assert dropped_reasoning_notice(manager.get_branch(), same) is None  # reported again on replay
    more = _reply(_anthropic("prefix_mismatch", "other", "prefix_mismatch"), 3)
    assert dropped_reasoning_notice(manager.get_branch(), more) == (
        "Anthropic dropped 3 thinking blocks: prefix_mismatch, other (details in session)"
    )
    openai = [
        {
            "type": "openai_input_transformations",
            "timestamp": 1,
            "details": {"transformations": [{"type": "reasoning", "id": "rs_1", "action": "removed"}]},
        }
    ]
    # Another provider's kind is news whatever the counts; no reason: no colon.
    assert dropped_reasoning_notice(manager.get_branch(), _reply(openai, 4)) == (
        "OpenAI dropped 1 reasoning item (details in session)"
    )
    odd = [{"type": "anthropic_input_transformations", "details": {"transformations": [{"type": "other"}]}}]
    for diagnostics in (None, [], odd, [{"type": "anthropic_input_transformations", "details": "x"}]):
        assert dropped_reasoning_notice(manager.get_branch(), _reply(diagnostics, 5)) is None


def test_anthropic_dropped_thinking_is_noticed_in_the_terminal_when_it_grows(
    tau: TauCommand, start_tui: Start
) -> None:
    _use_api(tau, "anthropic-messages", tau.server.base_url)
    tau.server.add(
        Turn(text="first answer", input_transformations=_thinking_dropped("prefix_mismatch")),
        Turn(text="second answer", input_transformations=_thinking_dropped("prefix_mismatch")),
        Turn(
            text="third answer",
            input_transformations=_thinking_dropped("prefix_mismatch", "signature_invalid"),
        ),
    )
    terminal = start_tui()
    _ask(terminal, "first question")
    terminal.wait_for("first answer")
    terminal.wait_for("Anthropic dropped 1 thinking block: prefix_mismatch (details in session)")
    _ask(terminal, "second question")
    terminal.wait_for("second answer")
    _ask(terminal, "third question")
    terminal.wait_for("third answer")
    terminal.wait_for(
        "Anthropic dropped 2 thinking blocks: prefix_mismatch, signature_invalid (details in session)"
    )
    text = terminal.text()
    assert text.count("Anthropic dropped") == 2  # the second reply's drop was the first one replayed
    assert text.index("first answer") < text.index("Anthropic dropped 1") < text.index("second question")
    [session] = tau.session_files()
    replies = [
        json.loads(line)["message"]
        for line in session.read_text().splitlines()
        if '"assistant"' in line and json.loads(line).get("type") == "message"
    ]
    [diagnostic] = replies[0]["diagnostics"]
    assert diagnostic["type"] == "anthropic_input_transformations"
    assert diagnostic["details"] == {"transformations": _thinking_dropped("prefix_mismatch")}


def test_openai_removed_reasoning_is_noticed_in_the_terminal(tau: TauCommand, start_tui: Start) -> None:
    _use_api(tau, "openai-responses", tau.server.url("/v1"))
    removed = [
        {"type": "reasoning", "id": f"rs_{i}", "action": "removed", "reason": "prefix_mismatch"}
        for i in range(2)
    ]
    tau.server.add(Turn(text="the answer", input_transformations=removed))
    terminal = start_tui()
    _ask(terminal, "a question")
    terminal.wait_for("the answer")
    terminal.wait_for("OpenAI dropped 2 reasoning items: prefix_mismatch (details in session)")


def test_no_dropped_reasoning_notice_with_cache_notices_off(tau: TauCommand, start_tui: Start) -> None:
    _use_api(tau, "anthropic-messages", tau.server.base_url)
    (tau.agent_dir / "settings.json").write_text("{}")
    tau.server.add(
        Turn(text="first answer", input_transformations=_thinking_dropped("prefix_mismatch")),
        Turn(text="second answer"),
    )
    terminal = start_tui()
    _ask(terminal, "first question")
    terminal.wait_for("first answer")
    _ask(terminal, "second question")
    terminal.wait_for("second answer")
    assert "Anthropic dropped" not in terminal.text()


def _diagnostics(session: Path) -> list[list[dict[str, Any]]]:
    """Each reply's diagnostics in a session file, without their timestamps."""
    replies = []
    for line in session.read_text().splitlines():
        entry = json.loads(line)
        message = entry.get("message") if entry.get("type") == "message" else None
        if isinstance(message, dict) and message.get("role") == "assistant":
            replies.append(
                [{k: v for k, v in d.items() if k != "timestamp"} for d in message.get("diagnostics", [])]
            )
    return replies


@pytest.mark.parametrize(
    ("api", "reported"),
    [
        (
            "anthropic-messages",
            [
                {
                    "type": "thinking_dropped",
                    "path": "messages.1.content.0",
                    "reason": "prefix_mismatch",
                    "x": 1,
                },
                {"type": "thinking_dropped", "reason": None},
            ],
        ),
        (
            "openai-responses",
            [
                {"type": "reasoning", "id": "rs_1", "action": "removed", "reason": "prefix_mismatch", "x": 1},
                {"type": "reasoning", "id": "rs_2", "action": "removed", "reason": "turn_boundary"},
                {"type": "reasoning", "action": "removed"},
            ],
        ),
    ],
)
def test_the_session_keeps_the_diagnostic_as_pi_16_writes_it(
    tau: TauCommand, tmp_path: Path, api: str, reported: list[dict[str, Any]]
) -> None:
    from pi16 import pi16_command, run_pi16
    from tau_command import MODEL

    base_url = tau.server.base_url if api == "anthropic-messages" else tau.server.url("/v1")
    _use_api(tau, api, base_url)
    tau.server.add(*[Turn(text="ok", input_transformations=reported)] * 2)
    assert tau.run(*MODEL, "-p", "a question").returncode == 0
    [tau_session] = tau.session_files()
    pi_dir = tmp_path / "pi"
    run_pi16(pi16_command(), tau, pi_dir, "-p", "a question")
    [pi_session] = sorted((pi_dir / "sessions").rglob("*.jsonl"))
    assert _diagnostics(tau_session) == _diagnostics(pi_session)
    assert _diagnostics(tau_session)[0] != []
