"""pi 1.6 behaviour the audit of issue #32 found missing, in the real terminal UI against the fake
server: ``/tree``'s filter keys and ``branchSummary.skipPrompt``."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from tau_command import TauCommand
from terminal import ENTER, Terminal, is_rule

from tau.modes.interactive.commands import next_tree_filter
from tau.testing.fake_llm import Turn

Start = Callable[..., Terminal]


def _ask(terminal: Terminal, text: str) -> None:
    terminal.type(text)
    terminal.send(ENTER)


def _editor_text(terminal: Terminal) -> str:
    lines = terminal.display().splitlines()
    borders = [i for i, line in enumerate(lines) if is_rule(line)]
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


def _tree_status(terminal: Terminal) -> str:
    """/tree's line under its rows: "(2/5)", then the filter unless it is the default."""
    return next(
        (line.strip() for line in terminal.display().splitlines() if re.match(r"\(\d+/\d+\)", line)), ""
    )


def test_tree_filter_keys_in_the_terminal(tau: TauCommand, start_tui: Start) -> None:
    tau.server.add(Turn(text="first answer"))
    terminal = start_tui()
    _ask(terminal, "first question")
    terminal.wait_for("first answer")
    _ask(terminal, "/tree")
    terminal.wait_for(lambda: _tree_status(terminal).endswith(")"), where="display")
    terminal.send("\x14")  # Ctrl+T: app.tree.filter.noTools
    terminal.wait_for(lambda: _tree_status(terminal).endswith(" [no-tools]"), where="display")
    terminal.send("\x14")  # again: back to default, as pi's toggle
    terminal.wait_for(lambda: _tree_status(terminal).endswith(")"), where="display")
    terminal.send("\x15")  # Ctrl+U: user-only
    terminal.wait_for(lambda: _tree_status(terminal).endswith(" [user]"), where="display")
    assert "first answer" not in terminal.display().split("Session Tree")[1]
    terminal.send("\x01")  # Ctrl+A: all
    terminal.wait_for(lambda: _tree_status(terminal).endswith(" [all]"), where="display")
    terminal.send("\x04")  # Ctrl+D: default
    terminal.wait_for(lambda: _tree_status(terminal).endswith(")"), where="display")
    terminal.send("\x0f")  # Ctrl+O: the next one, as before
    terminal.wait_for(lambda: _tree_status(terminal).endswith(" [no-tools]"), where="display")


def test_tree_filter_keys_follow_keybindings_json(tau: TauCommand, start_tui: Start) -> None:
    (tau.agent_dir / "keybindings.json").write_text(json.dumps({"app.tree.filter.labeledOnly": "ctrl+b"}))
    tau.server.add(Turn(text="first answer"))
    terminal = start_tui()
    _ask(terminal, "first question")
    terminal.wait_for("first answer")
    _ask(terminal, "/tree")
    terminal.wait_for(lambda: _tree_status(terminal).endswith(")"), where="display")
    terminal.send("\x02")  # Ctrl+B
    terminal.wait_for(lambda: _tree_status(terminal).endswith(" [labeled]"), where="display")


def test_branch_summary_skip_prompt_leaves_without_asking(tau: TauCommand, start_tui: Start) -> None:
    (tau.agent_dir / "settings.json").write_text(json.dumps({"branchSummary": {"skipPrompt": True}}))
    tau.server.add(Turn(text="first answer"), Turn(text="second answer"))
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


CHANGELOG = """# Changelog

## [0.1.0] - 2026-12-24

### Added

- The newest thing.

## 0.0.9 (unreleased)

- An older thing.

## Not a version

- Never shown.
"""


def test_new_entries_are_the_sections_newer_than_the_version_last_seen() -> None:
    from tau.modes.interactive.changelog import new_entries

    newest = "## [0.1.0] - 2026-12-24\n\n### Added\n\n- The newest thing."
    assert new_entries(CHANGELOG, "0.0.8") == [newest, "## 0.0.9 (unreleased)\n\n- An older thing."]
    assert new_entries(CHANGELOG, "v0.0.9-20261201.3") == [newest]  # a prerelease counts as 0.0.9
    assert new_entries(CHANGELOG, "0.1.0") == []
    assert new_entries(CHANGELOG, "1.6.0") == []  # pi's version in a folder shared with pi
    assert new_entries(CHANGELOG, "latest") is None


def _with_changelog(tau: TauCommand, settings: dict[str, object]) -> None:
    package = tau.work.parent / "package"
    package.mkdir(exist_ok=True)
    (package / "CHANGELOG.md").write_text(CHANGELOG)
    tau.env["TAU_PACKAGE_DIR"] = str(package)
    (tau.agent_dir / "settings.json").write_text(json.dumps(settings))


def _stored_version(tau: TauCommand) -> object:
    return json.loads((tau.agent_dir / "settings.json").read_text()).get("lastChangelogVersion")


def test_whats_new_shows_the_changelog_since_the_version_last_seen_once(
    tau: TauCommand, start_tui: Start
) -> None:
    _with_changelog(tau, {"lastChangelogVersion": "0.0.9"})
    terminal = start_tui()
    terminal.wait_for("What's New")
    terminal.wait_for("The newest thing.")
    assert "An older thing" not in terminal.text()
    assert _stored_version(tau) == "0.1.0"
    terminal.close()
    terminal = start_tui()
    terminal.type("/")  # the UI is up and drawn
    terminal.wait_for("→ settings", where="display")
    assert "What's New" not in terminal.text()


def test_whats_new_is_only_recorded_on_the_first_start_and_collapsed_on_request(
    tau: TauCommand, start_tui: Start
) -> None:
    _with_changelog(tau, {})
    terminal = start_tui()
    terminal.wait_for(lambda: _stored_version(tau) == "0.1.0")
    assert "What's New" not in terminal.text()
    terminal.close()
    _with_changelog(tau, {"lastChangelogVersion": "0.0.1", "collapseChangelog": True})
    terminal = start_tui()
    terminal.wait_for("Updated to v0.1.0. Use /changelog to view full changelog.")
    assert "The newest thing" not in terminal.text()


LOOKS = """
from tau.extensions import ExtensionAPI, ExtensionCommandContext


def setup(tau: ExtensionAPI) -> None:
    @tau.register_command("spin", description="A spinner of my own")
    def spin(args: str, ctx: ExtensionCommandContext) -> None:
        ctx.ui.set_working_indicator(["<*>"] if args != "none" else [], interval_ms=120)
        ctx.ui.set_working_message("Busy bee")

    @tau.register_command("hide", description="No working line")
    def hide(args: str, ctx: ExtensionCommandContext) -> None:
        ctx.ui.set_working_visible(False)

    @tau.register_command("label", description="Hidden thinking's words")
    def label(args: str, ctx: ExtensionCommandContext) -> None:
        ctx.ui.set_hidden_thinking_label(args or None)

    @tau.register_command("themes", description="List and switch themes")
    def themes(args: str, ctx: ExtensionCommandContext) -> None:
        names = [f"{t['name']}@{t['path']}" for t in ctx.ui.get_all_themes()]
        ctx.ui.notify("themes: " + ", ".join(names))
        ctx.ui.notify(f"light: {ctx.ui.set_theme('light')}")
        ctx.ui.notify(f"neon: {ctx.ui.set_theme('neon')}")
"""


def _stalled(tau: TauCommand) -> None:
    from tau.testing.fake_llm import Fault

    tau.server.add(
        Turn(text="this reply stalls", chunk_size=4, fault=Fault("stall", after_events=4, seconds=30))
    )


def test_an_extensions_working_indicator_and_words(tau: TauCommand, start_tui: Start) -> None:
    (tau.work / "looks.py").write_text(LOOKS)
    _stalled(tau)
    terminal = start_tui("-e", "looks.py")
    _ask(terminal, "/spin")
    _ask(terminal, "go")
    terminal.wait_for("── <*> Busy bee ──", where="display")  # in the editor's top rule, as pi's


def test_an_empty_indicator_leaves_the_words_and_hidden_leaves_nothing(
    tau: TauCommand, start_tui: Start
) -> None:
    (tau.work / "looks.py").write_text(LOOKS)
    _stalled(tau)
    _stalled(tau)
    terminal = start_tui("-e", "looks.py")
    _ask(terminal, "/spin none")
    _ask(terminal, "go")
    terminal.wait_for(
        lambda: any(line.startswith("── Busy bee ──") for line in terminal.display().splitlines())
    )
    terminal.send("\x1b")  # abort
    terminal.wait_for("Aborted")
    _ask(terminal, "/hide")
    _ask(terminal, "again")
    terminal.wait_for("this", where="display")
    terminal.wait_for(lambda: terminal.display().count("this") >= 2)
    assert "Busy bee" not in terminal.display()


def test_an_extensions_hidden_thinking_label(tau: TauCommand, start_tui: Start) -> None:
    (tau.work / "looks.py").write_text(LOOKS)
    (tau.agent_dir / "settings.json").write_text(json.dumps({"hideThinkingBlock": True}))
    tau.server.add(Turn(thinking="pondering the request", text="answered"))
    terminal = start_tui("-e", "looks.py")
    _ask(terminal, "think")
    terminal.wait_for("answered")
    terminal.wait_for("Thinking… (Ctrl+T to show, 3 words)")
    _ask(terminal, "/label Mulling it over")
    terminal.wait_for(
        lambda: "Mulling it over" in terminal.display() and "Thinking…" not in terminal.display()
    )
    _ask(terminal, "/label")
    terminal.wait_for("Thinking… (Ctrl+T to show, 3 words)", where="display")


def test_an_extension_lists_and_switches_themes(tau: TauCommand, start_tui: Start) -> None:
    (tau.work / "looks.py").write_text(LOOKS)
    themes = tau.agent_dir / "themes"
    themes.mkdir()
    roles = [
        "accent",
        "muted",
        "dim",
        "text",
        "thinkingText",
        "userMessageBg",
        "customMessageBg",
        "customMessageLabel",
        "toolTitle",
        "toolPendingBg",
        "toolSuccessBg",
        "toolErrorBg",
        "toolOutput",
        "error",
        "warning",
        "success",
        "toolDiffAdded",
        "toolDiffRemoved",
        "toolDiffContext",
        "bashMode",
        "thinkingOff",
        "thinkingMinimal",
        "thinkingLow",
        "thinkingMedium",
        "thinkingHigh",
        "thinkingXhigh",
        "mdHeading",
        "mdLink",
        "mdLinkUrl",
        "mdCode",
        "mdCodeBlockBorder",
        "mdQuote",
        "mdListBullet",
        "mdHr",
    ]
    (themes / "ocean.json").write_text(
        json.dumps({"name": "ocean", "colors": dict.fromkeys(roles, "#336699")})
    )
    terminal = start_tui("-e", "looks.py", cols=200)
    _ask(terminal, "/themes")
    terminal.wait_for(f"themes: dark@None, light@None, system@None, ocean@{themes / 'ocean.json'}")
    terminal.wait_for("light: {'success': True}")
    terminal.wait_for("neon: {'success': False, 'error': 'Theme not found: neon'}")


def test_scope_edits_as_pis_scoped_models_keys() -> None:
    from tau.modes.interactive.model_scope_edits import clear_all, enable_all, move, toggle_provider

    every = ["a/1", "a/2", "b/1"]
    assert enable_all(["b/1"], every) == ["b/1", "a/1", "a/2"]
    assert clear_all(["b/1", "a/1"], ["a/1", "a/2"]) == ["b/1"]
    assert toggle_provider(["b/1"], every, "a") == ["b/1", "a/1", "a/2"]
    assert toggle_provider(["a/2", "b/1", "a/1"], every, "a") == ["b/1"]
    assert move(["a/1", "a/2", "b/1"], "b/1", -1) == ["a/1", "b/1", "a/2"]
    assert move(["a/1", "a/2"], "a/1", -1) == ["a/1", "a/2"]  # already first
    assert move(["a/1"], "b/1", 1) == ["a/1"]  # not chosen


def _more_models(tau: TauCommand) -> None:
    models = json.loads((tau.agent_dir / "models.json").read_text())
    models["providers"]["local"]["models"] += [{"id": "other-model"}, {"id": "third-model"}]
    models["providers"]["extra"] = {**models["providers"]["local"], "models": [{"id": "x-model"}]}
    (tau.agent_dir / "models.json").write_text(json.dumps(models))


def test_scoped_models_takes_pis_bulk_and_order_keys(tau: TauCommand, start_tui: Start) -> None:
    _more_models(tau)
    terminal = start_tui(rows=40)
    _ask(terminal, "/scoped-models")
    terminal.wait_for("Model Configuration", where="display")
    terminal.wait_for("all enabled", where="display")  # pi's null: every model on
    terminal.type("model")  # every model matches the search
    terminal.send("\x18")  # Ctrl+X: all the search shows cleared
    terminal.wait_for("0/4 enabled", where="display")
    assert "✓" not in terminal.display()
    terminal.type("x-model")
    terminal.wait_for("›   x-model [extra]", where="display")
    terminal.send("\x10")  # Ctrl+P: the highlighted model's provider, all of it
    terminal.wait_for("1/4 enabled", where="display")
    terminal.wait_for("✓ x-model [extra]", where="display")
    terminal.type("third")
    terminal.wait_for("›   third-model [local]", where="display")
    terminal.send(ENTER)
    terminal.wait_for("2/4 enabled", where="display")
    terminal.type("third")
    terminal.wait_for("› ✓ third-model [local]", where="display")
    terminal.send("\x1b[1;3A")  # Alt+Up: before extra/x-model in Ctrl+P's order
    terminal.wait_for(
        lambda: (
            [row[2:].strip() for row in terminal.display().splitlines() if "✓" in row][:2]
            == ["✓ third-model [local]", "✓ x-model [extra]"]
        )
    )
    terminal.send("\x13")  # Ctrl+S
    terminal.wait_for("Model selection saved to settings")
    settings = json.loads((tau.agent_dir / "settings.json").read_text())
    assert settings["enabledModels"] == ["local/third-model", "extra/x-model"]
    terminal.type("model")
    terminal.send("\x01")  # Ctrl+A: every model the search shows, which is all of them: pi's null again
    terminal.wait_for("all enabled", where="display")


STATUS_QUERY = b"\x1b]7501;?\x1b\\"


def _status(state: str, message: str | None = None, kind: str | None = None) -> bytes:
    import base64

    pairs = [f"state={state}", "app=tau"]
    if kind:
        pairs.append(f"kind={kind}")
    if message:
        pairs.append("msg=" + base64.b64encode(message.encode()).decode())
    return f"\x1b]7501;{':'.join(pairs)}\x1b\\".encode()


ASKS = """
from tau.extensions import ExtensionAPI, ExtensionCommandContext


def setup(tau: ExtensionAPI) -> None:
    @tau.register_command("ask", description="Ask for permission")
    async def ask(args: str, ctx: ExtensionCommandContext) -> None:
        ctx.ui.notify(f"allowed: {await ctx.ui.confirm('Run the deploy?', 'It pushes to production')}")
"""


def test_program_status_follows_the_run_once_the_terminal_answers_the_query(
    tau: TauCommand, start_tui: Start
) -> None:
    from tau.testing.fake_llm import Fault

    (tau.work / "asks.py").write_text(ASKS)
    tau.server.add(
        Turn(text="first answer"), Turn(fault=Fault("status", status=400, body="bad request here"))
    )
    terminal = start_tui("-e", "asks.py")
    terminal.wait_for(lambda: STATUS_QUERY in terminal.raw)
    assert b"state=" not in terminal.raw  # nothing before the terminal said it shows reports
    terminal.send(STATUS_QUERY.decode())  # the terminal's answer: the same body
    terminal.wait_for(lambda: _status("idle") in terminal.raw)
    _ask(terminal, "/name deploy work")
    _ask(terminal, "first question")
    terminal.wait_for("first answer")
    terminal.wait_for(lambda: _status("done", "deploy work") in terminal.raw)
    assert _status("working", "deploy work") in terminal.raw
    _ask(terminal, "/ask")
    terminal.wait_for("Run the deploy?", where="display")
    terminal.wait_for(lambda: _status("blocked", "Run the deploy?", kind="permission") in terminal.raw)
    terminal.send(ENTER)
    terminal.wait_for("allowed: True")
    terminal.wait_for(
        lambda: terminal.raw.rfind(_status("done", "deploy work")) > terminal.raw.rfind(b"blocked")
    )
    _ask(terminal, "second question")
    terminal.wait_for(lambda: b"state=error:app=tau:msg=" in terminal.raw)
    terminal.send("\x04")  # Ctrl+D: quit
    terminal.wait_exit()
    assert terminal.raw.rfind(_status("clear")) > terminal.raw.rfind(b"state=error")


def test_program_status_variables_force_it_on_or_off(tau: TauCommand, start_tui: Start) -> None:
    tau.env["PI_PROGRAM_STATUS"] = "1"  # pi's name is read too
    terminal = start_tui()
    terminal.wait_for(lambda: _status("idle") in terminal.raw)
    assert STATUS_QUERY not in terminal.raw
    terminal.close()
    tau.env["TAU_PROGRAM_STATUS"] = "0"  # tau's wins
    tau.server.add(Turn(text="first answer"))
    terminal = start_tui()
    _ask(terminal, "first question")
    terminal.wait_for("first answer")
    assert b"\x1b]7501" not in terminal.raw


def test_cache_miss_notices_say_what_a_reply_paid_again_when_switched_on(
    tau: TauCommand, start_tui: Start
) -> None:
    from tau.testing.fake_llm.script import ScriptedUsage

    (tau.agent_dir / "settings.json").write_text(json.dumps({"showCacheMissNotices": True}))
    tau.server.add(
        Turn(text="first answer", usage=ScriptedUsage(input=100, output=5, cache_read=30000)),
        Turn(text="second answer", usage=ScriptedUsage(input=30200, output=5)),
        Turn(text="third answer", usage=ScriptedUsage(input=200, output=5, cache_read=30100)),
    )
    terminal = start_tui()
    _ask(terminal, "first question")
    terminal.wait_for("first answer")
    _ask(terminal, "second question")
    terminal.wait_for("second answer")
    terminal.wait_for("Cache miss: 30k tokens re-billed")
    _ask(terminal, "third question")
    terminal.wait_for("third answer")
    assert terminal.text().count("Cache miss") == 1  # the third read its prompt from the cache


def test_no_cache_miss_notice_by_default(tau: TauCommand, start_tui: Start) -> None:
    from tau.testing.fake_llm.script import ScriptedUsage

    tau.server.add(
        Turn(text="first answer", usage=ScriptedUsage(input=100, output=5, cache_read=30000)),
        Turn(text="second answer", usage=ScriptedUsage(input=30200, output=5)),
    )
    terminal = start_tui()
    _ask(terminal, "first question")
    terminal.wait_for("first answer")
    _ask(terminal, "second question")
    terminal.wait_for("second answer")
    assert "Cache miss" not in terminal.text()


def test_session_picker_orders_filters_and_paths_as_pis(tau: TauCommand, start_tui: Start) -> None:
    from tau_command import MODEL

    tau.server.add(Turn(text="a"), Turn(text="b"), Turn(text="c"))
    assert tau.run(*MODEL, "-p", "original question").returncode == 0
    [original] = tau.session_files()
    assert tau.run(*MODEL, "--fork", str(original), "-p", "forked question").returncode == 0
    assert tau.run(*MODEL, "-n", "named session", "-p", "third question").returncode == 0
    terminal = start_tui(cols=160)
    _ask(terminal, "/resume")
    terminal.wait_for("Name: All  Sort: Threaded", where="display")
    rows = [row for row in terminal.display().splitlines() if "question" in row or "named session" in row]
    assert [row[2:].split("  ")[0] for row in rows][:3] == [
        "named session",
        "original question",
        "└ original question",  # the fork, under the session it came from (it starts the same)
    ]
    terminal.send("\x13")  # Ctrl+S: recent
    terminal.wait_for("Name: All  Sort: Recent", where="display")
    terminal.wait_for(lambda: "└" not in terminal.display())
    terminal.send("\x0e")  # Ctrl+N: named sessions only
    terminal.wait_for("Name: Named  Sort: Recent", where="display")
    assert "original question" not in terminal.display() and "named session" in terminal.display()
    terminal.send("\x10")  # Ctrl+P: each session's file
    terminal.wait_for("/agent/sessions/", where="display")
    terminal.send("\x13")  # Ctrl+S: relevance
    terminal.wait_for("Name: Named  Sort: Fuzzy", where="display")


def test_threaded_order_puts_forks_under_their_parents_and_survives_a_loop() -> None:
    from datetime import datetime, timedelta

    from tau.modes.interactive.session_order import next_sort_mode, threaded
    from tau.session.listing import SessionInfo

    start = datetime(2026, 12, 1)

    def info(path: str, minutes: int, parent: str | None = None) -> SessionInfo:
        when = start + timedelta(minutes=minutes)
        return SessionInfo(path, path, "/p", None, parent, when, when, 1, path, path)

    rows = threaded([info("a", 1), info("b", 5, "a"), info("c", 3), info("d", 4, "a"), info("e", 9, "gone")])
    assert [(i.path, depth) for i, depth in rows] == [("e", 0), ("c", 0), ("a", 0), ("b", 1), ("d", 1)]
    looped = threaded([info("x", 1, "y"), info("y", 2, "x")])
    assert sorted(i.path for i, _ in looped) == ["x", "y"]
    assert [next_sort_mode(m) for m in ("threaded", "recent", "relevance")] == [
        "recent",
        "relevance",
        "threaded",
    ]


LISTENS = """
from tau.extensions import ExtensionAPI, ExtensionCommandContext

removers = []


def setup(tau: ExtensionAPI) -> None:
    @tau.register_command("grab", description="Watch raw input")
    def grab(args: str, ctx: ExtensionCommandContext) -> None:
        def listener(data):  # keys typed apart may arrive in one read under load: either way works
            if set(data) == {"q"}:
                return {"consume": True}
            if "q" in data or "w" in data:
                return {"data": data.replace("q", "").replace("w", "W!")}
            return None

        removers.append(ctx.ui.on_terminal_input(listener))

    @tau.register_command("release", description="Stop watching")
    def release(args: str, ctx: ExtensionCommandContext) -> None:
        for remove in removers:
            remove()
"""


def test_an_extension_sees_raw_input_first_and_can_swallow_or_change_it(
    tau: TauCommand, start_tui: Start
) -> None:
    (tau.work / "listens.py").write_text(LISTENS)
    terminal = start_tui("-e", "listens.py")
    _ask(terminal, "/grab")
    terminal.send("a")
    terminal.send("q")  # swallowed
    terminal.send("w")  # handed on as "W!"
    terminal.send("b")
    terminal.wait_for(lambda: _editor_text(terminal) == "aW!b")
    terminal.send("\x15")  # Ctrl+U: the line cleared
    terminal.wait_for(lambda: _editor_text(terminal) == "")
    _ask(terminal, "/release")
    terminal.send("q")
    terminal.wait_for(lambda: _editor_text(terminal) == "q")


def _package(folder: Path, version: str, changelog: str) -> None:
    (folder / "extensions").mkdir(parents=True, exist_ok=True)
    (folder / "extensions" / "hello.py").write_text("def setup(tau):\n    pass\n")
    (folder / "package.json").write_text(json.dumps({"name": "my-tools", "version": version}))
    (folder / "CHANGELOG.md").write_text(changelog)


def test_extension_updates_show_a_packages_changelog_since_the_version_last_seen(
    tau: TauCommand, start_tui: Start
) -> None:
    package = tau.work.parent / "my-tools"
    _package(package, "1.0.0", "# Changelog\n\n## [1.0.0]\n\n- First release.\n")
    settings = {"packages": [str(package)], "lastChangelogVersion": "0.1.0"}
    (tau.agent_dir / "settings.json").write_text(json.dumps(settings))
    terminal = start_tui()
    key = json.dumps({"source": str(package), "scope": "user"}, separators=(",", ":"))

    def stored() -> dict[str, str]:
        return dict(
            json.loads((tau.agent_dir / "settings.json").read_text()).get("extensionChangelogVersions", {})
        )

    terminal.wait_for(lambda: stored().get(key) == "1.0.0")  # first seen: recorded only
    assert "Extension Updates" not in terminal.text()
    terminal.close()
    _package(
        package, "1.1.0", "# Changelog\n\n## [1.1.0]\n\n- Added hello.\n\n## [1.0.0]\n\n- First release.\n"
    )
    terminal = start_tui()
    terminal.wait_for("Extension Updates")
    terminal.wait_for("my-tools [1.1.0]")
    assert "Added hello." in terminal.text() and "First release." not in terminal.text()
    assert stored()[key] == "1.1.0"
    terminal.close()
    _package(package, "1.2.0", "## [1.2.0]\n\n- More.\n")
    settings = json.loads((tau.agent_dir / "settings.json").read_text())
    (tau.agent_dir / "settings.json").write_text(json.dumps({**settings, "collapseChangelog": True}))
    terminal = start_tui()
    terminal.wait_for("Updated my-tools to v1.2.0.")


def test_page_keys_move_the_cursor_a_page_of_the_editor(tau: TauCommand, start_tui: Start) -> None:
    terminal = start_tui(rows=40)
    for number in range(1, 16):
        terminal.type(f"l{number:02d}" + ("\\" if number < 15 else ""))
        if number < 15:
            terminal.send(ENTER)  # a backslash before Enter: a new line
    terminal.wait_for("l15", where="display")
    terminal.send("\x1b[5~")  # Page Up: twelve rows up
    terminal.type("X")
    terminal.wait_for("l03X", where="display")
    terminal.send("\x1b[6~")  # Page Down: twelve rows down
    terminal.type("Y")
    terminal.wait_for("l15Y", where="display")


def test_a_cache_refresh_shows_its_cost_with_cache_notices_on(tau: TauCommand, start_tui: Start) -> None:
    models = json.loads((tau.agent_dir / "models.json").read_text())
    models["providers"]["local"]["models"][0].update(  # a cache of 11 s, refreshed after about 1 s
        promptCache={"short": 11}, cost={"input": 100_000, "output": 0, "cacheRead": 0, "cacheWrite": 0}
    )
    (tau.agent_dir / "models.json").write_text(json.dumps(models))
    settings = {"cacheWarming": "idle", "showCacheMissNotices": True}
    (tau.agent_dir / "settings.json").write_text(json.dumps(settings))
    tau.server.add(Turn(text="Hi."), Turn(text="."))
    terminal = start_tui()
    _ask(terminal, "hello")
    terminal.wait_for("Hi.")
    terminal.wait_for("Cache warmed: $1.000", timeout=20)  # ten prompt tokens at $100,000 per million


def test_cache_miss_lines_come_back_when_a_session_is_resumed(tau: TauCommand, start_tui: Start) -> None:
    from tau_command import MODEL

    from tau.testing.fake_llm.script import ScriptedUsage

    tau.server.add(
        Turn(text="first answer", usage=ScriptedUsage(input=100, output=5, cache_read=30000)),
        Turn(text="second answer", usage=ScriptedUsage(input=30200, output=5)),
    )
    assert tau.run(*MODEL, "-p", "first question").returncode == 0
    assert tau.run(*MODEL, "-c", "-p", "second question").returncode == 0
    (tau.agent_dir / "settings.json").write_text(json.dumps({"showCacheMissNotices": True}))
    terminal = start_tui("-c")
    terminal.wait_for("second answer")
    terminal.wait_for("Cache miss: 30k tokens re-billed")
    assert terminal.text().index("second answer") < terminal.text().index("Cache miss")
