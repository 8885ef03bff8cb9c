"""Extensions' renderers in the real terminal UI: entry renderers (live and on resume), Markdown
transformers and tool renderer resolvers (tau.register_entry_renderer / register_markdown_transformer
/ register_tool_renderer)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from tau_command import MODEL, TauCommand
from terminal import ENTER, Terminal

from tau.testing.fake_llm import ScriptedToolCall, Turn

Start = Callable[..., Terminal]
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "extensions"

ARROWS = """
def setup(tau):
    @tau.register_markdown_transformer
    def arrows(markdown, context):
        if context.is_streaming:
            return markdown
        return markdown.replace("-->", "=ARROW=")

    @tau.register_markdown_transformer(message_types=["changelog"])
    def replaced(markdown, context):  # registering again replaces the first one
        return markdown.replace("-->", "=NOT-HERE=")
"""

ARROWS_KEPT = """
def setup(tau):
    def broken(markdown, context):
        raise RuntimeError("transformer broke")

    tau.register_markdown_transformer(broken)
"""

ARROWS_AFTER = """
def setup(tau):
    tau.register_markdown_transformer(lambda markdown, context: markdown.replace("-->", "=ARROW=")
                                      if context.message_type in ("assistant", "user") else markdown)
"""


def _command(terminal: Terminal, text: str) -> None:
    terminal.type(text)
    terminal.send(ENTER)


def test_an_entry_renderer_draws_entries_as_they_are_appended_and_when_the_session_is_resumed(
    tau: TauCommand, start_tui: Start
) -> None:
    tau.server.add(Turn(text="Hello there."))
    terminal = start_tui("-e", str(EXAMPLES / "entry_renderer.py"))
    _command(terminal, "hi")
    terminal.wait_for("Hello there.")
    _command(terminal, "/status-card indexed 17 files")
    terminal.wait_for("[status] indexed 17 files")
    terminal.close()

    resumed = Terminal(
        [sys.executable, "-m", "tau", *MODEL, "-c", "-e", str(EXAMPLES / "entry_renderer.py")],
        cwd=str(tau.work),
        env=tau.env,
        rows=30,
        cols=100,
    )
    try:
        resumed.wait_for("[status] indexed 17 files")
        shown = resumed.text()
        assert shown.index("Hello there.") < shown.index("[status] indexed 17 files")
    finally:
        resumed.close()
    # The model never saw the card.
    assert "indexed 17 files" not in str(tau.server.requests[-1].body)


def test_markdown_transformers_change_what_is_drawn_but_not_what_the_model_sees(
    tau: TauCommand, start_tui: Start
) -> None:
    (tau.work / "arrows.py").write_text(ARROWS)
    (tau.work / "broken.py").write_text(ARROWS_KEPT)
    (tau.work / "after.py").write_text(ARROWS_AFTER)
    tau.server.add(Turn(text="a --> b"))
    terminal = start_tui("-e", "./arrows.py", "-e", "./broken.py", "-e", "./after.py")
    _command(terminal, "from --> to")
    terminal.wait_for("a =ARROW= b")
    # The first extension's transformer was replaced by one for the changelog only; the broken one
    # is reported and passed over; the last one transforms the user's message too.
    shown = terminal.text()
    assert "from =ARROW= to" in shown and "=NOT-HERE=" not in shown
    terminal.wait_for("transformer broke")
    assert "from --> to" in str(tau.server.requests[0].body["messages"][-1]["content"])
    assert terminal.text().count("transformer broke") == 1  # reported once, not at every redraw


def test_a_tool_renderer_draws_registered_and_unregistered_tools(tau: TauCommand, start_tui: Start) -> None:
    (tau.work / "notes.txt").write_text("some notes\n")
    tau.server.add(
        Turn(tool_calls=[ScriptedToolCall("read", {"path": str(tau.work / "notes.txt")})]),
        Turn(tool_calls=[ScriptedToolCall("mcp__docs__search", {"query": "x"})]),
        Turn(text="Both done."),
    )
    terminal = start_tui("-e", str(EXAMPLES / "tool_titles.py"))
    _command(terminal, "read and search")
    terminal.wait_for("Both done.")
    shown = terminal.text()
    assert "read notes.txt" in shown and str(tau.work / "notes.txt") not in shown
    assert "docs › search" in shown
