"""The chat's bookkeeping: what goes to scrollback when, and how a broken block is contained."""

from __future__ import annotations

from typing import Any

from tau.agent.events import ToolExecutionEnd, ToolExecutionStart
from tau.agent.tool import AgentToolResult
from tau.ai.types import AssistantMessage, TextContent, ToolCall, ToolResultMessage, UserMessage
from tau.modes.interactive.chat import Block, Chat, ViewFlags
from tau.modes.interactive.render.blocks import BlockRenderer
from tau.modes.interactive.render.theme import DARK


def _chat(written: list[str]) -> Chat:
    return Chat(
        lambda width: BlockRenderer(DARK, width),
        lambda: DARK,
        lambda: ViewFlags(80),
        lambda text, new_block: written.append(text),
        lambda: None,
    )


def _reply(*content: Any) -> AssistantMessage:
    return AssistantMessage(list(content), api="openai-completions", provider="p", model="m")


def test_restored_messages_go_to_scrollback_in_order_with_results_joined_to_calls() -> None:
    written: list[str] = []
    chat = _chat(written)
    call = ToolCall("c1", "bash", {"command": "echo hi"})
    chat.add_messages(
        [
            UserMessage("question"),
            _reply(TextContent("looking"), call),
            ToolResultMessage("c1", "bash", [TextContent("hi-output")]),
            _reply(TextContent("answer")),
        ]
    )
    joined = "\n".join(written)
    assert (
        joined.index("question")
        < joined.index("looking")
        < joined.index("hi-output")
        < joined.index("answer")
    )
    assert chat.live == []
    assert len(chat.history) == 4  # user, text, tool (with its result), text


def test_a_block_that_fails_to_draw_shows_a_notice_instead() -> None:
    class Broken(Block):
        def _render(self, renderer: BlockRenderer, flags: ViewFlags) -> str:
            raise ValueError("bad data")

    written: list[str] = []
    chat = _chat(written)
    chat.add_block(Broken())
    chat.add_notice("still alive")
    assert "could not be drawn: ValueError: bad data" in written[0]
    assert "still alive" in written[1]


def test_a_call_without_a_result_in_a_restored_session_is_final() -> None:
    written: list[str] = []
    chat = _chat(written)
    chat.add_messages([_reply(ToolCall("c1", "read", {"path": "a.py"}))])
    chat.add_notice("after")
    assert len(written) == 2 and "after" in written[1]


def test_a_notice_waits_in_the_live_area_behind_a_running_tool() -> None:
    written: list[str] = []
    chat = _chat(written)
    chat.on_agent_event(ToolExecutionStart("c9", "bash", {"command": "sleep 1"}))
    chat.add_notice("later notice")
    assert written == [] and "later notice" in chat.live_text()
    result = AgentToolResult([TextContent("slept")])
    chat.on_agent_event(ToolExecutionEnd("c9", "bash", result, False))
    assert "slept" in written[0] and "later notice" in written[1]
    assert chat.live == []
