"""pi 1.6 behaviour the audit of issue #32 found missing, in the real terminal UI against the fake
server: ``/tree``'s filter keys and ``branchSummary.skipPrompt``."""

from __future__ import annotations

import json
from collections.abc import Callable

from tau_command import TauCommand
from terminal import ENTER, Terminal

from tau.modes.interactive.commands import next_tree_filter
from tau.testing.fake_llm import Turn

Start = Callable[..., Terminal]


def _ask(terminal: Terminal, text: str) -> None:
    terminal.type(text)
    terminal.send(ENTER)


def _editor_text(terminal: Terminal) -> str:
    lines = terminal.display().splitlines()
    borders = [i for i, line in enumerate(lines) if line.startswith("─" * 20)]
    if len(borders) < 2:
        return ""
    return "\n".join(lines[borders[-2] + 1 : borders[-1]]).strip()


def test_tree_filter_keys_choose_a_filter_and_a_second_press_goes_back_to_default() -> None:
    assert next_tree_filter("default", "no-tools") == "no-tools"
    assert next_tree_filter("no-tools", "no-tools") == "default"
    assert next_tree_filter("user-only", "all") == "all"
    assert next_tree_filter("all", "default") == "default"
    assert next_tree_filter("default", "default") == "default"
    assert next_tree_filter("default", "next") == "no-tools"
    assert next_tree_filter("default", "previous") == "all"
    assert next_tree_filter("all", "next") == "default"


def test_tree_filter_keys_in_the_terminal(tau: TauCommand, start_tui: Start) -> None:
    tau.server.add(Turn(text="first answer"))
    terminal = start_tui()
    _ask(terminal, "first question")
    terminal.wait_for("first answer")
    _ask(terminal, "/tree")
    terminal.wait_for("Session tree (default)", where="display")
    terminal.send("\x14")  # Ctrl+T: app.tree.filter.noTools
    terminal.wait_for("Session tree (no-tools)", where="display")
    terminal.send("\x14")  # again: back to default, as pi's toggle
    terminal.wait_for("Session tree (default)", where="display")
    terminal.send("\x15")  # Ctrl+U: user-only
    terminal.wait_for("Session tree (user-only)", where="display")
    assert "first answer" not in terminal.display().split("Session tree")[1]
    terminal.send("\x01")  # Ctrl+A: all
    terminal.wait_for("Session tree (all)", where="display")
    terminal.send("\x04")  # Ctrl+D: default
    terminal.wait_for("Session tree (default)", where="display")
    terminal.send("\x0f")  # Ctrl+O: the next one, as before
    terminal.wait_for("Session tree (no-tools)", where="display")


def test_tree_filter_keys_follow_keybindings_json(tau: TauCommand, start_tui: Start) -> None:
    (tau.agent_dir / "keybindings.json").write_text(json.dumps({"app.tree.filter.labeledOnly": "ctrl+b"}))
    tau.server.add(Turn(text="first answer"))
    terminal = start_tui()
    _ask(terminal, "first question")
    terminal.wait_for("first answer")
    _ask(terminal, "/tree")
    terminal.wait_for("Session tree (default)", where="display")
    terminal.send("\x02")  # Ctrl+B
    terminal.wait_for("Session tree (labeled-only)", where="display")


def test_branch_summary_skip_prompt_leaves_without_asking(tau: TauCommand, start_tui: Start) -> None:
    (tau.agent_dir / "settings.json").write_text(json.dumps({"branchSummary": {"skipPrompt": True}}))
    tau.server.add(Turn(text="first answer"), Turn(text="second answer"))
    terminal = start_tui()
    _ask(terminal, "first question")
    terminal.wait_for("first answer")
    _ask(terminal, "second question")
    terminal.wait_for("second answer")
    _ask(terminal, "/tree")
    terminal.wait_for("Session tree", where="display")
    terminal.type("second question")
    terminal.wait_for("› │ user: second question", where="display")
    terminal.send(ENTER)
    terminal.wait_for(lambda: _editor_text(terminal) == "second question")
    assert "Summarize the branch" not in terminal.text()
    assert len(tau.server.requests) == 2  # no summary was asked of the model


def _claude_with_key(tau: TauCommand, key: str) -> None:
    models = json.loads((tau.agent_dir / "models.json").read_text())
    models["providers"]["anthropic"] = {"baseUrl": tau.server.base_url}
    (tau.agent_dir / "models.json").write_text(json.dumps(models))
    tau.env["ANTHROPIC_API_KEY"] = key


CLAUDE = ("--provider", "anthropic", "--model", "claude-sonnet-4-5")
EXTRA_USAGE = "Anthropic subscription auth is active."


def test_a_claude_subscription_key_brings_pis_extra_usage_warning_once(
    tau: TauCommand, start_tui: Start
) -> None:
    _claude_with_key(tau, "sk-ant-oat01-for-tests")
    tau.server.add(Turn(text="first answer"))
    terminal = start_tui(*CLAUDE, ready="claude-sonnet-4-5")
    terminal.wait_for(EXTRA_USAGE)
    assert "Disable this warning in /settings." in terminal.text()
    _ask(terminal, "first question")
    terminal.wait_for("first answer")
    assert terminal.text().count(EXTRA_USAGE) == 1


def test_an_api_key_or_the_setting_off_brings_no_extra_usage_warning(
    tau: TauCommand, start_tui: Start
) -> None:
    _claude_with_key(tau, "sk-ant-api03-for-tests")
    tau.server.add(Turn(text="first answer"))
    terminal = start_tui(*CLAUDE, ready="claude-sonnet-4-5")
    _ask(terminal, "first question")
    terminal.wait_for("first answer")
    assert EXTRA_USAGE not in terminal.text()
    terminal.close()
    _claude_with_key(tau, "sk-ant-oat01-for-tests")
    (tau.agent_dir / "settings.json").write_text(json.dumps({"warnings": {"anthropicExtraUsage": False}}))
    tau.server.add(Turn(text="second answer"))
    terminal = start_tui(*CLAUDE, ready="claude-sonnet-4-5")
    _ask(terminal, "second question")
    terminal.wait_for("second answer")
    assert EXTRA_USAGE not in terminal.text()
