"""Settings: pi's keys and defaults, global/project merge, key-wise persistence, broken files, migrations."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tau.config.settings import (
    CompactionSettings,
    RetrySettings,
    SettingsManager,
    deep_merge_settings,
    migrate_settings,
)


@pytest.fixture
def agent(tmp_path: Path) -> Path:
    return tmp_path / "agent"


@pytest.fixture
def cwd(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


def write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2))


def read_json(path: Path) -> Any:
    return json.loads(path.read_text())


def manager(cwd: Path, agent: Path) -> SettingsManager:
    return SettingsManager.create(cwd, agent)


def test_defaults_follow_pi_when_no_file_exists(cwd: Path, agent: Path) -> None:
    settings = manager(cwd, agent)

    assert settings.default_provider is None
    assert settings.default_model is None
    assert settings.default_thinking_level is None
    assert settings.transport == "auto"
    assert settings.steering_mode == "one-at-a-time"
    assert settings.follow_up_mode == "one-at-a-time"
    assert settings.compaction == CompactionSettings(
        enabled=True, reserve_tokens=16384, keep_recent_tokens=20000
    )
    assert settings.branch_summary_reserve_tokens == 16384
    assert settings.branch_summary_skip_prompt is False
    assert settings.retry == RetrySettings(
        enabled=True,
        max_retries=3,
        base_delay_ms=2000,
        provider_timeout_ms=None,
        provider_max_retries=None,
        provider_max_retry_delay_ms=60000,
    )
    assert settings.thinking_budgets is None
    assert settings.auto_resize_images is True
    assert settings.block_images is False
    assert settings.shell_path is None
    assert settings.shell_command_prefix is None
    assert settings.npm_command is None
    assert settings.session_dir is None
    assert settings.packages == []
    assert settings.extensions == settings.skills == settings.prompts == settings.themes == []
    assert settings.enable_skill_commands is True
    assert settings.enabled_models is None
    assert settings.theme == "system"
    assert settings.hide_thinking_block is False
    assert settings.quiet_startup is False
    assert settings.collapse_changelog is False
    assert settings.enable_install_telemetry is True
    assert settings.double_escape_action == "tree"
    assert settings.tree_filter_mode == "default"
    assert (settings.show_images, settings.image_width_cells) == (True, 60)
    assert (settings.clear_on_shrink, settings.show_terminal_progress) == (False, False)
    assert (settings.editor_padding_x, settings.autocomplete_max_visible) == (0, 5)
    assert settings.show_hardware_cursor is False
    assert settings.code_block_indent == "  "
    assert settings.warn_anthropic_extra_usage is True
    assert settings.last_changelog_version is None
    assert settings.tool_execution == "parallel"
    assert settings.drain_errors() == []
    assert not (agent / "settings.json").exists()


def test_reading_settings_creates_no_file(cwd: Path, agent: Path) -> None:
    manager(cwd, agent)

    assert not agent.exists()
    assert not (cwd / ".tau").exists()


def test_project_nested_value_overrides_global_while_other_global_nested_keys_remain(
    cwd: Path, agent: Path
) -> None:
    write_json(agent / "settings.json", {"compaction": {"enabled": False, "reserveTokens": 1000}})
    write_json(cwd / ".tau" / "settings.json", {"compaction": {"reserveTokens": 5000}})

    settings = manager(cwd, agent)

    assert settings.compaction == CompactionSettings(
        enabled=False, reserve_tokens=5000, keep_recent_tokens=20000
    )


def test_project_scalars_and_arrays_replace_global_ones(cwd: Path, agent: Path) -> None:
    write_json(
        agent / "settings.json", {"theme": "light", "extensions": ["a.py", "b.py"], "quietStartup": True}
    )
    write_json(cwd / ".tau" / "settings.json", {"theme": "solarized", "extensions": ["c.py"]})

    settings = manager(cwd, agent)

    assert settings.theme == "solarized"
    assert settings.extensions == ["c.py"]
    assert settings.quiet_startup is True


def test_merge_is_one_level_deep_like_pi() -> None:
    merged = deep_merge_settings(
        {"retry": {"enabled": True, "provider": {"timeoutMs": 1, "maxRetries": 2}}},
        {"retry": {"provider": {"timeoutMs": 5}}, "theme": None},
    )

    assert merged == {"retry": {"enabled": True, "provider": {"timeoutMs": 5}}}


def test_setter_writes_only_its_key_and_keeps_keys_added_by_others_meanwhile(cwd: Path, agent: Path) -> None:
    path = agent / "settings.json"
    write_json(path, {"theme": "light", "myExtension": {"x": 1}})
    settings = manager(cwd, agent)
    write_json(path, {"theme": "light", "myExtension": {"x": 1}, "addedElsewhere": True})

    settings.set_default_model_and_provider("anthropic", "claude-opus-4-7")

    assert read_json(path) == {
        "theme": "light",
        "myExtension": {"x": 1},
        "addedElsewhere": True,
        "defaultProvider": "anthropic",
        "defaultModel": "claude-opus-4-7",
    }
    assert settings.get("addedElsewhere") is True


def test_nested_setter_replaces_only_its_nested_key(cwd: Path, agent: Path) -> None:
    path = agent / "settings.json"
    write_json(path, {"compaction": {"reserveTokens": 1234}})
    settings = manager(cwd, agent)
    write_json(path, {"compaction": {"reserveTokens": 1234, "keepRecentTokens": 999}})

    settings.set_compaction_enabled(False)

    assert read_json(path) == {
        "compaction": {"reserveTokens": 1234, "keepRecentTokens": 999, "enabled": False}
    }
    assert settings.compaction.enabled is False


def test_setters_write_the_global_file_and_project_values_still_win(cwd: Path, agent: Path) -> None:
    write_json(cwd / ".tau" / "settings.json", {"steeringMode": "all"})
    settings = manager(cwd, agent)

    settings.set_steering_mode("one-at-a-time")

    assert read_json(agent / "settings.json") == {"steeringMode": "one-at-a-time"}
    assert read_json(cwd / ".tau" / "settings.json") == {"steeringMode": "all"}
    assert settings.steering_mode == "all"


def test_project_scope_setter_creates_the_project_dir(cwd: Path, agent: Path) -> None:
    settings = manager(cwd, agent)

    settings.set("extensions", ["local.py"], scope="project")

    assert read_json(cwd / ".tau" / "settings.json") == {"extensions": ["local.py"]}
    assert not (agent / "settings.json").exists()
    assert settings.extensions == ["local.py"]


def test_setting_none_removes_the_key_from_the_file(cwd: Path, agent: Path) -> None:
    path = agent / "settings.json"
    write_json(path, {"shellPath": "/bin/zsh", "theme": "light"})
    settings = manager(cwd, agent)

    settings.set_shell_path(None)

    assert read_json(path) == {"theme": "light"}
    assert settings.shell_path is None


def test_corrupt_global_file_falls_back_to_defaults_is_reported_and_never_written(
    cwd: Path, agent: Path
) -> None:
    path = agent / "settings.json"
    path.parent.mkdir(parents=True)
    broken = '{\n  "theme": "light",\n  "quietStartup": tru\n}\n'
    path.write_text(broken)
    write_json(cwd / ".tau" / "settings.json", {"theme": "project-theme"})

    settings = manager(cwd, agent)
    settings.set_theme("dark")
    settings.set_default_model("x")

    assert path.read_text() == broken
    assert settings.theme == "project-theme"
    assert settings.default_model == "x"
    errors = settings.drain_errors()
    assert [e.scope for e in errors] == ["global"]
    message = str(errors[0].error)
    assert message.startswith(f"{path}:3:")
    assert "\n" not in message
    assert "invalid JSON" in message
    assert settings.drain_errors() == []


def test_corrupt_project_file_keeps_global_settings(cwd: Path, agent: Path) -> None:
    write_json(agent / "settings.json", {"theme": "light"})
    project = cwd / ".tau" / "settings.json"
    project.parent.mkdir()
    project.write_text("[1, 2")

    settings = manager(cwd, agent)

    assert settings.theme == "light"
    assert [e.scope for e in settings.drain_errors()] == ["project"]


def test_a_file_holding_something_other_than_an_object_is_an_error(cwd: Path, agent: Path) -> None:
    write_json(agent / "settings.json", ["not", "settings"])

    errors = manager(cwd, agent).drain_errors()

    assert "expected a JSON object" in str(errors[0].error)


def test_empty_file_counts_as_no_settings(cwd: Path, agent: Path) -> None:
    (agent).mkdir()
    (agent / "settings.json").write_text("  \n")

    settings = manager(cwd, agent)

    assert settings.drain_errors() == []
    assert settings.as_dict() == {}


def test_legacy_queue_mode_and_retry_max_delay_are_migrated() -> None:
    migrated = migrate_settings({"queueMode": "all", "retry": {"maxDelayMs": 5000, "enabled": False}})

    assert migrated == {
        "steeringMode": "all",
        "retry": {"enabled": False, "provider": {"maxRetryDelayMs": 5000}},
    }


def test_legacy_websockets_flag_and_skills_object_are_migrated() -> None:
    assert migrate_settings({"websockets": True}) == {"transport": "websocket"}
    assert migrate_settings({"websockets": False}) == {"transport": "sse"}
    assert migrate_settings({"skills": {"enableSkillCommands": False, "customDirectories": ["~/s"]}}) == {
        "enableSkillCommands": False,
        "skills": ["~/s"],
    }
    assert migrate_settings({"skills": {"customDirectories": []}}) == {}


def test_migrated_values_are_read_and_rewritten_on_the_next_save(cwd: Path, agent: Path) -> None:
    path = agent / "settings.json"
    write_json(path, {"queueMode": "all", "retry": {"maxDelayMs": 0}})
    settings = manager(cwd, agent)

    assert settings.steering_mode == "all"
    assert settings.retry.provider_max_retry_delay_ms == 0
    settings.set_follow_up_mode("all")

    assert read_json(path) == {
        "retry": {"provider": {"maxRetryDelayMs": 0}},
        "steeringMode": "all",
        "followUpMode": "all",
    }


def test_values_of_the_wrong_type_read_as_defaults(cwd: Path, agent: Path) -> None:
    write_json(
        agent / "settings.json",
        {
            "compaction": {"enabled": "yes", "reserveTokens": "many"},
            "steeringMode": "sometimes",
            "defaultThinkingLevel": "extreme",
            "enabledModels": "claude",
            "images": True,
        },
    )

    settings = manager(cwd, agent)

    assert settings.compaction == CompactionSettings()
    assert settings.steering_mode == "one-at-a-time"
    assert settings.default_thinking_level is None
    assert settings.enabled_models is None
    assert settings.block_images is False


def test_typed_getters_read_configured_values(cwd: Path, agent: Path) -> None:
    write_json(
        agent / "settings.json",
        {
            "defaultProvider": "openai",
            "defaultModel": "gpt-5.5",
            "defaultThinkingLevel": "high",
            "retry": {"maxRetries": 5, "baseDelayMs": 100, "provider": {"timeoutMs": 30000, "maxRetries": 1}},
            "shellPath": "/bin/zsh",
            "shellCommandPrefix": "shopt -s expand_aliases",
            "images": {"blockImages": True},
            "enabledModels": ["claude-*", "gpt-5.5:high"],
            "thinkingBudgets": {"low": 1000, "high": 20000},
            "toolExecution": "sequential",
            "packages": ["npm:x", {"source": "git:y", "skills": []}],
        },
    )

    settings = manager(cwd, agent)

    assert (settings.default_provider, settings.default_model) == ("openai", "gpt-5.5")
    assert settings.default_thinking_level == "high"
    assert settings.retry == RetrySettings(
        enabled=True,
        max_retries=5,
        base_delay_ms=100,
        provider_timeout_ms=30000,
        provider_max_retries=1,
        provider_max_retry_delay_ms=60000,
    )
    assert settings.shell_path == "/bin/zsh"
    assert settings.shell_command_prefix == "shopt -s expand_aliases"
    assert settings.block_images is True
    assert settings.enabled_models == ["claude-*", "gpt-5.5:high"]
    assert settings.thinking_budgets == {"low": 1000, "high": 20000}
    assert settings.tool_execution == "sequential"
    assert settings.packages == ["npm:x", {"source": "git:y", "skills": []}]


def test_runtime_overrides_are_not_saved_and_survive_setters_and_reload(cwd: Path, agent: Path) -> None:
    settings = manager(cwd, agent)
    settings.apply_overrides({"compaction": {"enabled": False}})

    settings.set_theme("light")
    settings.reload()

    assert settings.compaction.enabled is False
    assert read_json(agent / "settings.json") == {"theme": "light"}


def test_reload_picks_up_external_edits(cwd: Path, agent: Path) -> None:
    settings = manager(cwd, agent)
    write_json(agent / "settings.json", {"quietStartup": True})

    settings.reload()

    assert settings.quiet_startup is True


def test_in_memory_manager_never_touches_the_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TAU_AGENT_DIR", str(tmp_path / "agent"))

    settings = SettingsManager.in_memory({"queueMode": "all"})
    settings.set_theme("light")

    assert settings.steering_mode == "all"
    assert settings.theme == "light"
    assert list(tmp_path.iterdir()) == []


def test_create_defaults_to_the_agent_dir_from_the_environment(
    tmp_path: Path, cwd: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TAU_AGENT_DIR", str(tmp_path / "from-env"))
    write_json(tmp_path / "from-env" / "settings.json", {"theme": "env-theme"})

    settings = SettingsManager.create(cwd)

    assert settings.theme == "env-theme"
    assert settings.path("global") == tmp_path / "from-env" / "settings.json"
    assert settings.path("project") == cwd / ".tau" / "settings.json"


def test_writes_leave_no_temp_files_nor_lock_and_keep_a_symlinked_file_a_symlink(
    tmp_path: Path, cwd: Path, agent: Path
) -> None:
    real = tmp_path / "dotfiles" / "settings.json"
    write_json(real, {"theme": "light"})
    agent.mkdir()
    (agent / "settings.json").symlink_to(real)
    settings = manager(cwd, agent)

    settings.set_quiet_startup(True)

    assert (agent / "settings.json").is_symlink()
    assert read_json(real) == {"theme": "light", "quietStartup": True}
    assert os.listdir(real.parent) == ["settings.json"]
    assert os.listdir(agent) == ["settings.json"]


def test_saved_file_is_pretty_json_with_unicode_kept(cwd: Path, agent: Path) -> None:
    settings = manager(cwd, agent)

    settings.set_theme("thème")

    assert (agent / "settings.json").read_text() == '{\n  "theme": "thème"\n}\n'


def test_values_of_the_wrong_type_are_reported_by_key_and_the_defaults_used(cwd: Path, agent: Path) -> None:
    write_json(
        agent / "settings.json",
        {"steeringMode": 5, "compaction": "yes", "defaultThinkingLevel": "extreme", "theme": "dark"},
    )
    settings = manager(cwd, agent)

    problems = [e.error.message for e in settings.drain_errors()]
    assert len(problems) == 3
    assert all(p.startswith(f"{agent / 'settings.json'}: ") for p in problems)
    assert any('"steeringMode" should be one of "all", "one-at-a-time", not 5' in p for p in problems)
    assert any('"compaction" should be an object, not "yes"' in p for p in problems)
    assert any('"defaultThinkingLevel"' in p and '"extreme"' in p for p in problems)
    assert settings.steering_mode == "one-at-a-time"
    assert settings.compaction == CompactionSettings()
    assert settings.default_thinking_level is None


@pytest.mark.parametrize(("value", "read"), [("header", "header"), (True, True), (False, False)])
def test_quiet_startup_takes_header_as_pi_does(cwd: Path, agent: Path, value: object, read: object) -> None:
    write_json(agent / "settings.json", {"quietStartup": value})
    settings = manager(cwd, agent)

    assert settings.drain_errors() == []
    assert settings.quiet_startup == read


def test_a_quiet_startup_word_other_than_header_is_reported(cwd: Path, agent: Path) -> None:
    write_json(agent / "settings.json", {"quietStartup": "yes"})
    settings = manager(cwd, agent)

    [problem] = [e.error.message for e in settings.drain_errors()]
    assert '"quietStartup" should be true, false or "header", not "yes"' in problem
    assert settings.quiet_startup is False


def test_negative_retry_values_are_reported_and_the_defaults_used(cwd: Path, agent: Path) -> None:
    write_json(
        agent / "settings.json",
        {"retry": {"maxRetries": -1, "baseDelayMs": -5, "provider": {"maxRetries": -2, "timeoutMs": 0}}},
    )
    settings = manager(cwd, agent)

    problems = [e.error.message for e in settings.drain_errors()]
    assert [p.split(": ", 1)[1].split(" should")[0] for p in problems] == [
        '"retry.maxRetries"',
        '"retry.baseDelayMs"',
        '"retry.provider.maxRetries"',
    ]
    assert settings.retry == RetrySettings(provider_timeout_ms=0)


def test_unknown_keys_and_valid_values_are_not_reported(cwd: Path, agent: Path) -> None:
    write_json(
        agent / "settings.json",
        {"somePiOnlyKey": [1, 2], "retry": {"maxRetries": 5, "provider": {"idleTimeoutMs": 0}}, "skills": []},
    )
    assert manager(cwd, agent).drain_errors() == []


# ---- pi's .pi/settings.json ----------------------------------------------------------------------


def test_pi_project_settings_lie_under_the_tau_ones_and_are_never_written(cwd: Path, agent: Path) -> None:
    pi_file = cwd / ".pi" / "settings.json"
    write_json(pi_file, {"steeringMode": "all", "shellPath": "/bin/pi-sh", "compaction": {"enabled": False}})
    write_json(
        cwd / ".tau" / "settings.json", {"steeringMode": "one-at-a-time", "compaction": {"reserveTokens": 1}}
    )
    settings = manager(cwd, agent)
    assert settings.get("steeringMode") == "one-at-a-time"
    assert settings.get("shellPath") == "/bin/pi-sh"
    assert settings.get("compaction") == {"enabled": False, "reserveTokens": 1}
    settings.set("shellPath", "/bin/tau-sh", scope="project")
    assert settings.get("shellPath") == "/bin/tau-sh"
    assert read_json(pi_file)["shellPath"] == "/bin/pi-sh"
    assert read_json(cwd / ".tau" / "settings.json")["shellPath"] == "/bin/tau-sh"


def test_pi_project_settings_are_not_read_for_a_folder_not_trusted(cwd: Path, agent: Path) -> None:
    write_json(cwd / ".pi" / "settings.json", {"steeringMode": "all"})
    assert SettingsManager.create(cwd, agent, project=False).get_scope("project") == {}


def test_pi_project_resource_paths_point_into_the_pi_folder_and_its_packages_stay_pis(
    cwd: Path, agent: Path
) -> None:
    pi = cwd / ".pi"
    write_json(
        pi / "settings.json",
        {
            "skills": ["team", "!drafts/*", "!draft-*", "+team/keep", "-team/old", "~/mine", "/abs/x"],
            "extensions": ["-builtin:mcp", "ext/a.py"],
            "packages": ["npm:@someone/pi-thing"],
        },
    )
    project = manager(cwd, agent).get_scope("project")
    assert project["skills"] == [
        f"{pi}/team", f"!{pi}/drafts/*", "!draft-*", f"+{pi}/team/keep", f"-{pi}/team/old", "~/mine", "/abs/x",
    ]  # fmt: skip
    assert project["extensions"] == ["-builtin:mcp", f"{pi}/ext/a.py"]
    assert "packages" not in project


def test_a_broken_pi_project_settings_file_is_reported_and_the_rest_loads(cwd: Path, agent: Path) -> None:
    (cwd / ".pi").mkdir()
    (cwd / ".pi" / "settings.json").write_text("{broken")
    write_json(cwd / ".tau" / "settings.json", {"steeringMode": "all"})
    settings = manager(cwd, agent)
    assert settings.get("steeringMode") == "all"
    [error] = settings.drain_errors()
    assert error.scope == "project"
    assert str(cwd / ".pi" / "settings.json") in str(error)


@pytest.mark.parametrize(
    ("value", "read"), [(None, "auto"), ("auto", "auto"), (4, 4), (2.7, 2), (0, 1), (-3, 1), (500, 100)]
)
def test_fullscreen_wheel_scroll_lines_is_auto_or_1_to_100(
    cwd: Path, agent: Path, value: object, read: object
) -> None:
    write_json(agent / "settings.json", {} if value is None else {"fullscreenWheelScrollLines": value})
    settings = manager(cwd, agent)

    assert settings.drain_errors() == []
    assert settings.fullscreen_wheel_scroll_lines == read


def test_a_wheel_scroll_word_other_than_auto_is_reported(cwd: Path, agent: Path) -> None:
    write_json(agent / "settings.json", {"fullscreenWheelScrollLines": "fast"})
    settings = manager(cwd, agent)

    [problem] = [e.error.message for e in settings.drain_errors()]
    assert '"fullscreenWheelScrollLines" should be "auto" or a number of lines, not "fast"' in problem
    assert settings.fullscreen_wheel_scroll_lines == "auto"
