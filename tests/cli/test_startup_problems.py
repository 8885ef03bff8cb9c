"""What the real `tau` says about a broken or odd configuration and odd arguments: one line each,
never a traceback, never silence."""

from __future__ import annotations

import json

import pytest
from tau_command import MODEL, TauCommand

from tau.testing.fake_llm import Turn


def warnings_in(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("tau: warning:")]


def test_a_broken_settings_json_is_a_warning_and_tau_goes_on_with_the_defaults(tau: TauCommand) -> None:
    (tau.agent_dir / "settings.json").write_text('{"defaultModel": }')
    tau.server.add(Turn(text="still works"))
    result = tau.run(*MODEL, "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "still works\n"
    [warning] = warnings_in(result.stderr)
    assert "settings.json:1:" in warning
    assert (tau.agent_dir / "settings.json").read_text() == '{"defaultModel": }'  # never written over


def test_a_broken_models_json_is_a_warning_and_the_built_in_models_remain(tau: TauCommand) -> None:
    (tau.agent_dir / "models.json").write_text('{"providers": {"local": }}')
    tau.env["ANTHROPIC_API_KEY"] = "sk-test"
    result = tau.run("--list-models", "claude-sonnet-4-5")
    assert result.returncode == 0, result.stderr
    assert "anthropic" in result.stdout and "claude-sonnet-4-5" in result.stdout
    [warning] = warnings_in(result.stderr)
    assert "models.json:1:" in warning


def test_a_models_json_nested_2000_levels_deep_is_one_clear_line(tau: TauCommand) -> None:
    (tau.agent_dir / "models.json").write_text('{"providers": {}, "x": ' + "[" * 2000 + "]" * 2000 + "}")
    result = tau.run("--list-models")
    assert "Traceback" not in result.stderr
    [warning] = warnings_in(result.stderr)
    assert "models.json" in warning and "nested more than 100 levels deep" in warning


def test_a_settings_json_nested_900_levels_deep_is_one_clear_line(tau: TauCommand) -> None:
    # Deep enough for copying the settings to overflow the stack, not yet for the parser.
    (tau.agent_dir / "settings.json").write_text('{"x": ' + '{"a": ' * 900 + "1" + "}" * 900 + "}")
    tau.server.add(Turn(text="ok"))
    result = tau.run(*MODEL, "-p", "hi")
    assert result.returncode == 0, result.stderr
    [warning] = warnings_in(result.stderr)
    assert "settings.json" in warning and "nested more than 100 levels deep" in warning


def test_a_system_prompt_file_that_is_not_utf8_is_read_as_pi_reads_it_with_a_warning(
    tau: TauCommand,
) -> None:
    (tau.work / "prompt.txt").write_bytes(b"Be brief. \xff\xfe Answer in French.")
    tau.server.add(Turn(text="ok"))
    result = tau.run(*MODEL, "--system-prompt", "prompt.txt", "-p", "hi")
    assert result.returncode == 0, result.stderr
    [warning] = warnings_in(result.stderr)
    assert "prompt.txt" in warning and "UTF-8" in warning
    system = json.dumps(tau.server.last_request.body["messages"][0], ensure_ascii=False)
    assert "Be brief. \ufffd\ufffd Answer in French." in system


def test_without_any_key_there_is_one_message_and_no_session_folder(tau: TauCommand) -> None:
    (tau.agent_dir / "models.json").unlink()
    result = tau.run("-p", "hi")
    assert result.returncode == 1
    [line] = result.stderr.splitlines()
    assert "ANTHROPIC_API_KEY" in line and "auth.json" in line
    assert not (tau.agent_dir / "sessions").exists()


@pytest.mark.parametrize(
    ("settings", "key"),
    [
        ({"steeringMode": 5}, '"steeringMode"'),
        ({"compaction": "yes"}, '"compaction"'),
        ({"hideThinkingBlock": "no"}, '"hideThinkingBlock"'),
        ({"defaultThinkingLevel": "extreme"}, '"defaultThinkingLevel"'),
        ({"retry": {"maxRetries": -1}}, '"retry.maxRetries"'),
        ({"retry": {"provider": {"maxRetryDelayMs": -5}}}, '"retry.provider.maxRetryDelayMs"'),
    ],
)
def test_an_unusable_setting_is_one_warning_naming_the_key(
    tau: TauCommand, settings: dict[str, object], key: str
) -> None:
    (tau.agent_dir / "settings.json").write_text(json.dumps(settings))
    tau.server.add(Turn(text="ok"))
    result = tau.run(*MODEL, "-p", "hi")
    assert result.returncode == 0, result.stderr
    [warning] = warnings_in(result.stderr)
    assert "settings.json" in warning and key in warning


def test_an_unknown_default_provider_is_a_warning_and_a_default_model_is_used(tau: TauCommand) -> None:
    (tau.agent_dir / "settings.json").write_text(json.dumps({"defaultProvider": "nope", "defaultModel": "x"}))
    tau.server.add(Turn(text="ok"))
    result = tau.run("-p", "hi")
    assert result.returncode == 0, result.stderr
    [warning] = warnings_in(result.stderr)
    assert '"nope"' in warning and "defaultProvider" in warning
    assert tau.server.last_request.body["model"] == "fake-model"


def test_an_unknown_mode_is_an_error(tau: TauCommand) -> None:
    result = tau.run(*MODEL, "--mode", "foo", "-p", "hi")
    assert result.returncode == 1
    [line] = result.stderr.splitlines()
    assert '"foo"' in line and "json" in line
    assert tau.server.requests == []


def test_continue_with_no_session_is_an_error(tau: TauCommand) -> None:
    result = tau.run(*MODEL, "-c", "--no-session", "-p", "hi")
    assert result.returncode == 1
    [line] = result.stderr.splitlines()
    assert "-c" in line and "--no-session" in line
    assert tau.server.requests == []


def test_unknown_tool_names_are_a_warning_and_the_known_ones_are_used(tau: TauCommand) -> None:
    tau.server.add(Turn(text="ok"))
    result = tau.run(*MODEL, "--tools", "read,grpe", "-p", "hi")
    assert result.returncode == 0, result.stderr
    [warning] = warnings_in(result.stderr)
    assert '"grpe"' in warning and "grep" in warning
    offered = [tool["function"]["name"] for tool in tau.server.last_request.body["tools"]]
    assert offered == ["read"]


def test_a_session_flag_naming_a_file_that_is_not_a_session_leaves_it_alone(tau: TauCommand) -> None:
    notes = tau.work / "notes.txt"
    notes.write_text("my notes\n")
    result = tau.run(*MODEL, "--session", str(notes), "-p", "hi")
    assert result.returncode == 1
    [line] = result.stderr.splitlines()
    assert "notes.txt" in line and "not a session file" in line
    assert notes.read_text() == "my notes\n"
    assert sorted(p.name for p in tau.work.iterdir()) == ["notes.txt"]
    assert tau.server.requests == []


@pytest.mark.parametrize(("number", "problem"), [("1e400", "too large"), ("NaN", "not a JSON number")])
def test_a_number_in_models_json_that_is_no_number_is_one_warning(
    tau: TauCommand, number: str, problem: str
) -> None:
    models = json.loads((tau.agent_dir / "models.json").read_text())
    text = json.dumps(models).replace('"contextWindow": 100000', f'"contextWindow": {number}')
    (tau.agent_dir / "models.json").write_text(text)
    result = tau.run("--list-models")
    assert result.returncode == 0
    assert "Traceback" not in result.stderr
    [warning] = warnings_in(result.stderr)
    assert "models.json" in warning and problem in warning


@pytest.mark.parametrize("chosen", ["fake-model", "other-model"])
def test_models_flag_starts_a_new_session_with_its_first_model(tau: TauCommand, chosen: str) -> None:
    models = json.loads((tau.agent_dir / "models.json").read_text())
    models["providers"]["local"]["models"].append({"id": "other-model"})
    (tau.agent_dir / "models.json").write_text(json.dumps(models))
    tau.server.add(Turn(text="ok"))
    result = tau.run("--models", f"local/{chosen}", "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert tau.server.last_request.body["model"] == chosen


def test_a_models_pattern_that_matches_nothing_is_a_warning(tau: TauCommand) -> None:
    tau.server.add(Turn(text="ok"))
    result = tau.run(*MODEL, "--models", "nope*", "-p", "hi")
    assert result.returncode == 0, result.stderr
    [warning] = warnings_in(result.stderr)
    assert "--models" in warning and '"nope*"' in warning


def test_a_message_on_the_command_line_in_rpc_mode_is_an_error(tau: TauCommand) -> None:
    result = tau.run(*MODEL, "--mode", "rpc", "hello there")
    assert result.returncode == 1
    [line] = result.stderr.splitlines()
    assert "--mode rpc" in line and "prompt" in line
    assert tau.server.requests == []
