"""The terminal UI end to end: the real `tau` in a pseudo-terminal, the fake server answering."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from tau_command import MODEL, TauCommand
from terminal import CTRL_C, ENTER, ESCAPE, Terminal, is_rule

from tau.testing.fake_llm import Fault, ScriptedToolCall, Turn
from tau.testing.fake_llm.script import ScriptedUsage

Start = Callable[..., Terminal]


def _session_lines(tau: TauCommand) -> list[dict[str, object]]:
    [session] = tau.session_files()
    return [json.loads(line) for line in session.read_text().splitlines()]


def _footer_model_line(terminal: Terminal) -> str:
    return [line for line in terminal.display().splitlines() if line.strip()][-1]


def _editor_text(terminal: Terminal) -> str:
    """The lines between the editor's two border lines."""
    lines = terminal.display().splitlines()
    borders = [i for i, line in enumerate(lines) if is_rule(line)]
    if len(borders) < 2:
        return ""
    return "\n".join(lines[borders[-2] + 1 : borders[-1]]).strip()


def _ask(terminal: Terminal, text: str) -> None:
    terminal.type(text)
    terminal.send(ENTER)


def test_a_reply_streams_in_as_rendered_markdown(tau: TauCommand, start_tui: Start) -> None:
    reply = (
        "# Plan\n\nSome **bold** words and `code`.\n\n```python\nprint('hello')\n```\n\n- first\n- second\n"
    )
    tau.server.add(Turn(text=reply, chunk_size=4))
    terminal = start_tui()
    _ask(terminal, "make a plan")
    terminal.wait_for("second")
    text = terminal.text()
    assert "make a plan" in text
    assert "Plan" in text and "# Plan" not in text
    assert "bold" in text and "**bold**" not in text
    assert "print('hello')" in text


def test_the_footer_shows_tokens_cost_context_and_model(tau: TauCommand, start_tui: Start) -> None:
    tau.server.add(Turn(text="Counted.", usage=ScriptedUsage(input=1500, output=42, cache_read=3000)))
    terminal = start_tui()
    _ask(terminal, "count")
    terminal.wait_for("↑1.5k ↓42 R3.0k", where="display")
    display = terminal.display()
    assert "cache 67%" in display  # 3000 cached of 4500 prompt tokens
    assert "%/100k (auto)" in display
    assert "fake-model" in display


def test_a_tool_call_shows_its_command_and_output(tau: TauCommand, start_tui: Start) -> None:
    tau.server.add(
        Turn(tool_calls=[ScriptedToolCall("bash", {"command": "echo tool-said-this"})]),
        Turn(text="All done."),
    )
    terminal = start_tui()
    _ask(terminal, "run it")
    terminal.wait_for("All done.")
    text = terminal.text()
    assert "echo tool-said-this" in text
    assert text.count("tool-said-this") >= 2  # the command and its output


def test_model_command_switches_the_model(tau: TauCommand, start_tui: Start) -> None:
    models = json.loads((tau.agent_dir / "models.json").read_text())
    models["providers"]["local"]["models"].append(
        {"id": "other-model", "contextWindow": 50000, "maxTokens": 1000}
    )
    (tau.agent_dir / "models.json").write_text(json.dumps(models))
    tau.server.add(Turn(text="from the other one"))
    terminal = start_tui()
    _ask(terminal, "/model")
    terminal.wait_for("Choose a model", where="display")
    terminal.type("other")
    terminal.wait_for("›   other-model [local]", where="display")
    terminal.send(ENTER)
    terminal.wait_for("Model: other-model")
    terminal.wait_for(lambda: "other-model" in _footer_model_line(terminal))
    _ask(terminal, "hello")
    terminal.wait_for("from the other one")
    assert tau.server.last_request.body["model"] == "other-model"


def test_tree_moves_the_leaf_back_to_an_earlier_message(tau: TauCommand, start_tui: Start) -> None:
    tau.server.add(Turn(text="first answer"), Turn(text="second answer"), Turn(text="third answer"))
    terminal = start_tui()
    _ask(terminal, "first question")
    terminal.wait_for("first answer")
    _ask(terminal, "second question")
    terminal.wait_for("second answer")
    _ask(terminal, "/tree")
    terminal.wait_for("Session Tree", where="display")
    terminal.type("second question")
    terminal.wait_for("› │ user: second question", where="display")
    terminal.send(ENTER)
    terminal.wait_for("Summarize the branch", where="display")
    terminal.send(ENTER)  # no summary
    # On a user message the leaf moves to its parent and the text comes back into the editor.
    terminal.wait_for(lambda: _editor_text(terminal) == "second question")
    terminal.send(CTRL_C)
    _ask(terminal, "another question")
    terminal.wait_for("third answer")
    sent = json.dumps(tau.server.last_request.body["messages"])
    assert "first answer" in sent and "another question" in sent
    assert "second question" not in sent and "second answer" not in sent


def test_escape_aborts_the_run_and_the_session_stays_consistent(tau: TauCommand, start_tui: Start) -> None:
    tau.server.add(
        Turn(
            text="this reply stalls halfway through",
            chunk_size=4,
            fault=Fault("stall", after_events=4, seconds=30),
        ),
        Turn(text="fresh reply"),
    )
    terminal = start_tui()
    _ask(terminal, "start something long")
    terminal.wait_for("this", where="display")
    terminal.send(ESCAPE)
    terminal.wait_for("Aborted")
    _ask(terminal, "next")
    terminal.wait_for("fresh reply")
    lines = _session_lines(tau)
    messages = [
        line["message"] for line in lines if line["type"] == "message" and line["message"]["role"] != "system"
    ]  # type: ignore[index]
    roles = [m["role"] for m in messages]  # type: ignore[index]
    assert roles == ["user", "assistant", "user", "assistant"]
    assert messages[1]["stopReason"] == "aborted"  # type: ignore[index]


def test_a_resize_redraws_the_conversation_at_the_new_width(tau: TauCommand, start_tui: Start) -> None:
    long_line = " ".join(f"word{i}" for i in range(60))
    tau.server.add(Turn(text=long_line))
    terminal = start_tui(cols=100)
    _ask(terminal, "say a lot")
    terminal.wait_for("word59")
    terminal.resize(30, 50)
    terminal.wait_for(
        lambda: (
            "word59" in terminal.display()
            and all(len(line) <= 50 for line in terminal.display().splitlines())
        )
    )
    assert "word0" in terminal.text()


def test_ctrl_c_clears_the_editor_and_twice_quits(tau: TauCommand, start_tui: Start) -> None:
    terminal = start_tui()
    terminal.type("some draft text")
    terminal.wait_for("some draft text", where="display")
    terminal.send(CTRL_C)
    terminal.wait_for(lambda: "some draft text" not in terminal.display())
    time.sleep(0.6)  # the double press counts only within half a second
    terminal.type("more")
    terminal.wait_for("more", where="display")
    terminal.send(CTRL_C)
    terminal.send(CTRL_C)
    assert terminal.wait_exit() == 0


def test_bang_output_reaches_the_model_and_double_bang_output_does_not(
    tau: TauCommand, start_tui: Start
) -> None:
    tau.server.add(Turn(text="seen"))
    terminal = start_tui()
    _ask(terminal, "!echo shared-output")
    terminal.wait_for("shared-output", where="display")
    terminal.settle()  # the command is over, not only its output shown (under load the two part)
    _ask(terminal, "!!echo private-output")
    terminal.wait_for("private-output", where="display")
    _ask(terminal, "what did you see")
    terminal.wait_for("seen")
    sent = json.dumps(tau.server.last_request.body["messages"])
    assert "shared-output" in sent
    assert "private-output" not in sent


def test_name_without_argument_shows_usage_and_with_one_names_the_session(
    tau: TauCommand, start_tui: Start
) -> None:
    terminal = start_tui()
    _ask(terminal, "/name")
    terminal.wait_for("Usage: /name")
    _ask(terminal, "/name release prep")
    terminal.wait_for("• release prep", where="display")


def test_enter_while_working_queues_a_steering_message(tau: TauCommand, start_tui: Start) -> None:
    tau.server.add(
        Turn(tool_calls=[ScriptedToolCall("bash", {"command": "sleep 3; echo slow-done"})]),
        Turn(text="after steering"),
    )
    terminal = start_tui()
    _ask(terminal, "do the slow thing")
    terminal.wait_for("sleep 3", where="display")
    _ask(terminal, "also check the tests")
    terminal.wait_for("steer: also check the tests", where="display")
    terminal.wait_for("after steering")
    sent = json.dumps(tau.server.last_request.body["messages"])
    assert "also check the tests" in sent


def test_the_session_file_is_readable_after_quitting(
    tau: TauCommand, start_tui: Start, tmp_path: Path
) -> None:
    tau.server.add(Turn(text="noted"))
    terminal = start_tui()
    _ask(terminal, "remember this")
    terminal.wait_for("noted")
    _ask(terminal, "/quit")
    assert terminal.wait_exit() == 0
    lines = _session_lines(tau)
    assert lines[0]["type"] == "session"
    roles = [line["message"]["role"] for line in lines if line["type"] == "message"]  # type: ignore[index]
    assert roles == ["system", "user", "assistant"]  # the system message: the prompt and tools, as pi 1.x


EXTENSION = """
from tau.extensions import ExtensionAPI, ExtensionCommandContext


def setup(tau: ExtensionAPI) -> None:
    @tau.register_command("pick", description="Ask which colour")
    async def pick(args: str, ctx: ExtensionCommandContext) -> None:
        colour = await ctx.ui.select("Which colour?", ["red", "green", "blue"])
        ctx.ui.notify(f"picked {colour}")
        ctx.ui.set_status("colour", f"colour: {colour}")
        ctx.ui.set_widget("palette", [f"palette widget: {colour}"])

    @tau.register_command("shout", description="Print to stdout")
    def shout(args: str, ctx: ExtensionCommandContext) -> None:
        print("printed by an extension")
"""


def test_extension_dialogs_notices_status_and_widgets_show(tau: TauCommand, start_tui: Start) -> None:
    (tau.work / "colours.py").write_text(EXTENSION)
    terminal = start_tui("-e", "colours.py")
    _ask(terminal, "/pick")
    terminal.wait_for("Which colour?", where="display")
    terminal.type("gre")
    terminal.wait_for("› green", where="display")
    terminal.send(ENTER)
    terminal.wait_for("picked green")
    terminal.wait_for("palette widget: green", where="display")
    assert "colour: green" in _footer_model_line(terminal)


def test_the_permission_gate_example_asks_in_the_tui(tau: TauCommand, start_tui: Start) -> None:
    gate = Path(__file__).resolve().parents[2] / "examples" / "extensions" / "permission_gate.py"
    tau.server.add(
        Turn(tool_calls=[ScriptedToolCall("bash", {"command": "rm -rf build"})]), Turn(text="understood")
    )
    terminal = start_tui("-e", str(gate))
    _ask(terminal, "clean up")
    terminal.wait_for("Allow this command?", where="display")
    terminal.send("\x1b[B")  # down to "No"
    terminal.wait_for("› No", where="display")
    terminal.send(ENTER)
    terminal.wait_for("understood")
    assert "The user declined" in json.dumps(tau.server.last_request.body["messages"])


def test_compact_passes_its_instructions_to_the_summary(tau: TauCommand, start_tui: Start) -> None:
    (tau.agent_dir / "settings.json").write_text(json.dumps({"compaction": {"keepRecentTokens": 1}}))
    tau.server.add(
        Turn(text="first answer"),
        Turn(text="second answer"),
        Turn(text="## Goal\nsummary text"),
        Turn(text="prefix summary"),
    )
    terminal = start_tui()
    _ask(terminal, "first question")
    terminal.wait_for("first answer")
    _ask(terminal, "second question")
    terminal.wait_for("second answer")
    _ask(terminal, "/compact focus on the tests")
    terminal.wait_for(lambda: any(line.get("type") == "compaction" for line in _session_lines(tau)))
    assert any("focus on the tests" in json.dumps(request.body) for request in tau.server.requests)


def test_a_retried_summary_shows_its_countdown_and_escape_cancels_the_compaction(
    tau: TauCommand, start_tui: Start
) -> None:
    settings = {"compaction": {"keepRecentTokens": 1}, "retry": {"baseDelayMs": 30_000}}
    (tau.agent_dir / "settings.json").write_text(json.dumps(settings))
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    tau.server.add(Turn(text="first answer"), Turn(fault=Fault("status", status=529, body=overloaded)))
    terminal = start_tui()
    _ask(terminal, "first question")
    terminal.wait_for("first answer")
    _ask(terminal, "/compact")
    terminal.wait_for("retrying the summary in")
    assert "529 Overloaded (attempt 1/3)" in terminal.text()
    terminal.send(ESCAPE)
    terminal.wait_for("Compaction cancelled")
    assert "retrying the summary" not in terminal.display()
    assert not any(line.get("type") == "compaction" for line in _session_lines(tau))


def test_shift_tab_cycles_the_thinking_level_in_the_footer(tau: TauCommand, start_tui: Start) -> None:
    models = json.loads((tau.agent_dir / "models.json").read_text())
    models["providers"]["local"]["models"][0]["reasoning"] = True
    (tau.agent_dir / "models.json").write_text(json.dumps(models))
    terminal = start_tui("--thinking", "low")
    terminal.wait_for(lambda: _footer_model_line(terminal).endswith("fake-model • low"))
    terminal.send("\x1b[Z")  # Shift+Tab
    terminal.wait_for(lambda: _footer_model_line(terminal).endswith("fake-model • medium"))


PNG_1X1 = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cfc0f01f0005000201e5273cd20000000049454e44ae426082"
)


def test_ctrl_v_attaches_the_clipboard_image_to_the_next_message(tau: TauCommand, start_tui: Start) -> None:
    models = json.loads((tau.agent_dir / "models.json").read_text())
    models["providers"]["local"]["models"][0]["input"] = ["text", "image"]
    (tau.agent_dir / "models.json").write_text(json.dumps(models))
    bin_dir = tau.work.parent / "bin"
    bin_dir.mkdir()
    (bin_dir / "image.png").write_bytes(PNG_1X1)
    fake_xclip = bin_dir / "xclip"
    fake_xclip.write_text(f"#!/bin/sh\ncat {bin_dir / 'image.png'}\n")
    fake_xclip.chmod(0o755)
    tau.env["PATH"] = f"{bin_dir}:{tau.env['PATH']}"
    tau.env.pop("WAYLAND_DISPLAY", None)
    tau.server.add(Turn(text="a tiny image"))
    terminal = start_tui()
    terminal.type("what is this ")
    terminal.send("\x16")  # Ctrl+V
    terminal.wait_for("what is this [image #1]", where="display")
    terminal.send(ENTER)
    terminal.wait_for("a tiny image")
    content = tau.server.last_request.body["messages"][-1]["content"]
    assert any(part.get("type") == "image_url" for part in content)


def test_escape_brings_queued_messages_back_into_the_editor(tau: TauCommand, start_tui: Start) -> None:
    tau.server.add(
        Turn(text="working on it slowly", chunk_size=4, fault=Fault("stall", after_events=3, seconds=30)),
    )
    terminal = start_tui()
    _ask(terminal, "start")
    terminal.wait_for("work", where="display")
    _ask(terminal, "and then the docs")
    terminal.wait_for("steer: and then the docs", where="display")
    terminal.send(ESCAPE)
    terminal.wait_for(lambda: _editor_text(terminal) == "and then the docs")
    assert "steer:" not in terminal.display()


def test_export_writes_the_session_as_html(tau: TauCommand, start_tui: Start) -> None:
    tau.server.add(Turn(text="exported answer"))
    terminal = start_tui()
    _ask(terminal, "question to export")
    terminal.wait_for("exported answer")
    _ask(terminal, "/export chat.html")
    terminal.wait_for("Session exported to:")
    page = (tau.work / "chat.html").read_text()
    assert "question to export" in page and "exported answer" in page


def test_resume_flag_opens_the_session_picker_and_loads_the_choice(tau: TauCommand, start_tui: Start) -> None:
    tau.server.add(Turn(text="answer from the old session"))
    assert tau.run(*MODEL, "-p", "an old question").returncode == 0
    terminal = start_tui("-r", ready="Resume Session")
    terminal.wait_for("› an old question", where="display")
    terminal.send(ENTER)
    terminal.wait_for("answer from the old session")
    assert "an old question" in terminal.text()


def test_at_completes_a_project_file_by_fuzzy_match(tau: TauCommand, start_tui: Start) -> None:
    (tau.work / "src").mkdir()
    (tau.work / "src" / "session_manager.py").write_text("x = 1\n")
    (tau.work / "notes.md").write_text("n\n")
    terminal = start_tui()
    terminal.type("look at @sesman")
    terminal.wait_for("src/session_manager.py", where="display")
    terminal.send(ENTER)  # takes the suggestion and closes the menu; does not send yet
    terminal.wait_for(lambda: _editor_text(terminal) == "look at @src/session_manager.py")
    terminal.wait_for(lambda: terminal.display().count("session_manager.py") == 1)  # the editor's only


def _theme_row(terminal: Terminal) -> str | None:
    """The value on /settings' highlighted Theme row (in the values' column, as pi's)."""
    row = next((line for line in terminal.display().splitlines() if line.startswith("› Theme  ")), None)
    return None if row is None else row[2:].removeprefix("Theme").strip()


def test_settings_switch_the_theme_save_it_and_keep_the_row(tau: TauCommand, start_tui: Start) -> None:
    terminal = start_tui()
    _ask(terminal, "/settings")
    terminal.wait_for("Settings", where="display")
    terminal.type("theme")
    terminal.wait_for(lambda: _theme_row(terminal) == "system")  # the default, as pi 1.6
    terminal.send(ENTER)
    terminal.wait_for("› system", where="display")
    terminal.type("light")
    terminal.wait_for("› light", where="display")
    terminal.send(ENTER)
    terminal.wait_for(lambda: _theme_row(terminal) == "light")  # the cursor stays on the changed row
    terminal.send(ESCAPE)
    terminal.wait_for(
        lambda: json.loads((tau.agent_dir / "settings.json").read_text()).get("theme") == "light"
    )


def test_hotkeys_lists_the_keys_from_keybindings_json(tau: TauCommand, start_tui: Start) -> None:
    (tau.agent_dir / "keybindings.json").write_text(json.dumps({"expandTools": "ctrl+x"}))
    terminal = start_tui()
    _ask(terminal, "/hotkeys")
    terminal.wait_for("Expand or collapse tool output")
    line = next(line for line in terminal.text().splitlines() if "Expand or collapse tool output" in line)
    assert "ctrl+x" in line


def test_session_picker_shows_all_projects_on_tab_and_deletes_after_asking(
    tau: TauCommand, start_tui: Start
) -> None:
    other = tau.work.parent / "other-project"
    other.mkdir()
    tau.server.add(Turn(text="here"), Turn(text="there"))
    assert tau.run(*MODEL, "-p", "question in this folder").returncode == 0
    ran = subprocess.run(
        [sys.executable, "-m", "tau", *MODEL, "-p", "question elsewhere"],
        cwd=other,
        env=tau.env,
        capture_output=True,
        # tau -p adds a piped stdin to the prompt: an empty pipe, not the runner's stdin nor
        # /dev/null (on this machine at times a regular file that other programs write into)
        input=b"",
    )
    assert ran.returncode == 0
    terminal = start_tui()
    _ask(terminal, "/resume")
    terminal.wait_for("› question in this folder", where="display")
    assert "question elsewhere" not in terminal.display()
    terminal.send("\t")
    terminal.wait_for("Resume Session (All)", where="display")
    terminal.type("elsewhere")
    terminal.wait_for("› question elsewhere", where="display")
    terminal.send("\x04")  # Ctrl+D
    terminal.wait_for("Delete this session file?", where="display")
    terminal.send("\x1b[B")
    terminal.send(ENTER)
    terminal.wait_for(lambda: len(tau.session_files()) == 1)


def test_import_copies_a_session_file_here_and_resumes_it(tau: TauCommand, start_tui: Start) -> None:
    tau.server.add(Turn(text="imported answer"))
    assert tau.run(*MODEL, "-p", "imported question").returncode == 0
    [original] = tau.session_files()
    outside = tau.work.parent / "shared-session.jsonl"
    outside.write_bytes(original.read_bytes())
    original.unlink()
    terminal = start_tui()
    _ask(terminal, f"/import {outside}")
    terminal.wait_for("imported answer")
    assert [f.name for f in tau.session_files()] == ["shared-session.jsonl"]


def test_login_saves_a_masked_api_key_or_pis_vertex_settings_and_logout_removes_them(
    tau: TauCommand, start_tui: Start
) -> None:
    terminal = start_tui()
    _ask(terminal, "/login")
    terminal.wait_for("Select authentication method:", where="display")
    terminal.type("API key")
    terminal.wait_for("› Sign in with an API key", where="display")
    terminal.send(ENTER)
    terminal.wait_for("Select provider to configure:", where="display")
    terminal.type("anthropic")
    terminal.wait_for("› Anthropic", where="display")
    terminal.send(ENTER)
    terminal.wait_for("Login to Anthropic", where="display")
    terminal.wait_for("Enter Anthropic API key", where="display")
    terminal.type("sk-secret-123")
    terminal.wait_for("*************", where="display")
    assert "sk-secret-123" not in terminal.display()
    terminal.send(ENTER)
    terminal.wait_for("Saved the API key for Anthropic")
    auth = json.loads((tau.agent_dir / "auth.json").read_text())
    assert auth["anthropic"] == {"type": "api_key", "key": "sk-secret-123"}
    assert "sk-secret-123" not in terminal.text()
    _ask(terminal, "/logout")
    terminal.wait_for("› Anthropic", where="display")
    terminal.send(ENTER)
    terminal.wait_for("Removed stored API key for Anthropic.")
    assert "anthropic" not in json.loads((tau.agent_dir / "auth.json").read_text())
    # Vertex asks what pi asks: the way in, then (for Google Cloud credentials) project and location.
    _ask(terminal, "/login google-vertex")
    terminal.wait_for("How should tau authenticate to Google Vertex AI?", where="display")
    terminal.type("Application")
    terminal.wait_for("› Application Default Credentials", where="display")
    terminal.send(ENTER)
    terminal.wait_for("Google Cloud project ID", where="display")
    terminal.type("vertex-project")
    terminal.send(ENTER)
    terminal.wait_for("Google Cloud location", where="display")
    terminal.type("europe-west4")
    terminal.send(ENTER)
    terminal.wait_for("Saved the Google Vertex AI credentials")
    auth = json.loads((tau.agent_dir / "auth.json").read_text())
    assert auth["google-vertex"] == {
        "type": "api_key",
        "env": {"GOOGLE_CLOUD_PROJECT": "vertex-project", "GOOGLE_CLOUD_LOCATION": "europe-west4"},
    }


def test_a_first_message_on_the_command_line_is_sent_at_start(tau: TauCommand, start_tui: Start) -> None:
    (tau.work / "spec.txt").write_text("the spec body")
    tau.server.add(Turn(text="read your spec"))
    terminal = start_tui("@spec.txt", "summarise this")
    terminal.wait_for("read your spec")
    content = tau.server.last_request.body["messages"][-1]["content"][0]["text"]
    assert "the spec body" in content and content.endswith("summarise this")


def test_without_a_model_the_tui_starts_and_says_how_to_get_one(tau: TauCommand) -> None:
    (tau.agent_dir / "models.json").unlink()
    terminal = Terminal([sys.executable, "-m", "tau"], cwd=str(tau.work), env=tau.env)
    try:
        terminal.wait_for("no model available")
        _ask(terminal, "hello")
        terminal.wait_for("No model")
        assert terminal.child.isalive()
    finally:
        terminal.close()


def test_ctrl_o_expands_tool_output_and_ctrl_t_hides_thinking(tau: TauCommand, start_tui: Start) -> None:
    tau.server.add(
        Turn(
            thinking="pondering the request",
            tool_calls=[ScriptedToolCall("bash", {"command": "seq -w 1 40 | sed 's/^/row-/'"})],
        ),
        Turn(text="listed"),
    )
    terminal = start_tui()
    _ask(terminal, "list")
    terminal.wait_for("listed")
    assert "pondering the request" in terminal.text()
    assert "row-01" not in terminal.text() and "row-40" in terminal.text()  # collapsed: the tail
    terminal.send("\x0f")  # Ctrl+O
    terminal.wait_for(lambda: "row-01" in terminal.text())
    terminal.send("\x14")  # Ctrl+T
    terminal.wait_for(
        lambda: "pondering the request" not in terminal.text() and "Thinking" in terminal.text()
    )


def test_an_unknown_theme_is_named_in_a_notice(tau: TauCommand, start_tui: Start) -> None:
    terminal = start_tui("--theme", "neon")
    terminal.wait_for("theme neon: no such theme (the themes are: dark, light, system)")


def test_scoped_models_choose_what_ctrl_p_cycles_and_are_saved(tau: TauCommand, start_tui: Start) -> None:
    """As pi 1.6's: every model is on until one is switched off; a change holds for the session at
    once, Ctrl+S saves it."""
    models = json.loads((tau.agent_dir / "models.json").read_text())
    models["providers"]["local"]["models"] += [{"id": "other-model"}, {"id": "third-model"}]
    (tau.agent_dir / "models.json").write_text(json.dumps(models))
    terminal = start_tui()
    _ask(terminal, "/scoped-models")
    terminal.wait_for("Model Configuration", where="display")
    terminal.wait_for("all enabled", where="display")
    terminal.type("other")
    terminal.wait_for("› ✓ other-model [local]", where="display")
    terminal.send(ENTER)  # off: the two others stay on
    terminal.wait_for("2/3 enabled", where="display")
    terminal.wait_for("  other-model [local]", where="display")
    terminal.send("\x13")  # Ctrl+S
    terminal.wait_for("Model selection saved to settings")
    settings = json.loads((tau.agent_dir / "settings.json").read_text())
    assert settings["enabledModels"] == ["local/fake-model", "local/third-model"]
    terminal.send(ESCAPE)
    terminal.wait_for(lambda: "Model Configuration" not in terminal.display())
    terminal.send("\x10")  # Ctrl+P: from fake-model, past other-model
    terminal.wait_for("Switched to third-model")


def test_a_stray_print_shows_above_the_app_and_the_app_goes_on(tau: TauCommand, start_tui: Start) -> None:
    (tau.work / "colours.py").write_text(EXTENSION)
    tau.server.add(Turn(text="still here"))
    terminal = start_tui("-e", "colours.py")
    _ask(terminal, "/shout")
    terminal.wait_for("printed by an extension")
    _ask(terminal, "are you there")
    terminal.wait_for("still here")
    terminal.wait_for(lambda: "fake-model" in _footer_model_line(terminal))
    assert terminal.text().count("printed by an extension") == 1


def test_an_emoji_split_across_deltas_shows_whole_and_a_lone_half_as_a_replacement(
    tau: TauCommand, start_tui: Start
) -> None:
    # Deltas of 8: the emoji's high half ends one delta and its low half starts the next.
    tau.server.add(
        Turn(tool_calls=[ScriptedToolCall("no\ud83dsuch", {"q": "x"})]),
        Turn(text="abcdefg\ud83d\ude00 end, lone \ud83d here", chunk_size=8),
        Turn(text="second fine"),
    )
    terminal = start_tui()
    _ask(terminal, "hi")
    terminal.wait_for("here")
    text = terminal.text()
    assert "abcdefg😀 end, lone \ufffd here" in text
    assert "Tool no\ufffdsuch not found" in text
    _ask(terminal, "again")  # the TUI goes on
    terminal.wait_for("second fine")
