"""Reading and editing mcp.json (tau.config.mcp_servers), on real files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tau.config.mcp_servers import (
    ServerConfig,
    add_server,
    expand_value,
    load_mcp_config,
    set_server_fields,
    tool_exposure,
    validate_server,
)


def write(path: Path, servers: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return path


def test_a_project_entry_replaces_the_global_one_and_an_override_changes_only_its_switches(
    tmp_path: Path,
) -> None:
    agent, cwd = tmp_path / "agent", tmp_path / "work"
    write(
        agent / "mcp.json",
        {"a": {"command": "a-server", "env": {"K": "v"}}, "b": {"url": "https://b.example/mcp"}},
    )
    write(
        cwd / ".tau" / "mcp.json",
        {"a": {"enabled": False, "exposure": "direct"}, "b": {"command": "local-b"}},
    )

    config = load_mcp_config(str(cwd), str(agent))

    assert config.errors == []
    a, b = config.servers["a"], config.servers["b"]
    assert (a.command, dict(a.env), a.enabled, a.exposure) == ("a-server", {"K": "v"}, False, "direct")
    assert a.override == str(cwd / ".tau" / "mcp.json") and a.scope == "global"
    assert (b.transport, b.command, b.scope) == ("stdio", "local-b", "project")


def test_an_untrusted_project_file_is_not_read_and_pis_folder_is_read_when_tau_has_none(
    tmp_path: Path,
) -> None:
    agent, cwd = tmp_path / "agent", tmp_path / "work"
    write(cwd / ".pi" / "mcp.json", {"p": {"command": "p-server"}})

    assert load_mcp_config(str(cwd), str(agent), include_project=False).servers == {}
    assert list(load_mcp_config(str(cwd), str(agent)).servers) == ["p"]


def test_bad_entries_are_reported_and_skipped_while_the_others_load(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    write(
        agent / "mcp.json",
        {
            "ok": {"command": "fine"},
            "old": {"type": "sse", "url": "https://x/sse"},
            "nothing": {},
            "bad name": {"command": "x"},
            "odd": {"command": "x", "exposure": "sometimes"},
            "ok_2": {"command": "y"},
            "ok-2": {"command": "z"},
        },
    )

    config = load_mcp_config(str(tmp_path), str(agent))

    assert list(config.servers) == ["ok", "ok_2"]
    problems = "\n".join(config.errors)
    assert "SSE transport is not supported" in problems
    assert 'server "nothing": needs "command"' in problems
    assert "letters, digits" in problems
    assert "exposure must be one of" in problems
    assert 'server "ok-2" conflicts with "ok_2"' in problems


def test_tool_exposure_prefers_an_exact_name_then_the_first_matching_pattern() -> None:
    server = validate_server(
        "gh",
        {
            "url": "https://gh.example/mcp",
            "exposure": "deferred",
            "toolExposure": {"get_*": "codemode-deferred", "get_me": "direct", "delete_*": "hidden"},
        },
    )
    assert isinstance(server, ServerConfig)
    assert [tool_exposure(server, t) for t in ("get_me", "get_issue", "delete_repo", "search")] == [
        "direct",
        "codemode",
        "hidden",
        "deferred",
    ]


def test_values_expand_environment_variables_and_commands() -> None:
    assert expand_value("Bearer ${TOKEN}", {"TOKEN": "abc"}) == "Bearer abc"
    with pytest.raises(ValueError, match="MISSING"):
        expand_value("${MISSING}x", {})
    assert expand_value("$TOKEN-$$-$!", {"TOKEN": "abc"}) == "abc-$-!"
    assert expand_value("!echo from-a-command") == "from-a-command"


def test_enabling_and_disabling_edit_only_that_entry_and_keep_other_content(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"a": {"command": "x"}}, "autoEnableCodemode": False}))

    set_server_fields(path, "a", {"enabled": False})
    disabled = json.loads(path.read_text())
    set_server_fields(path, "a", {"enabled": True})
    enabled = json.loads(path.read_text())
    replaced = add_server(path, "a", {"url": "https://a.example/mcp"})

    assert disabled == {"mcpServers": {"a": {"command": "x", "enabled": False}}, "autoEnableCodemode": False}
    assert enabled["mcpServers"]["a"] == {"command": "x"}  # a default is dropped from a full entry
    assert replaced and json.loads(path.read_text())["mcpServers"]["a"] == {"url": "https://a.example/mcp"}


def test_an_auth_provider_entry_names_the_model_provider_whose_login_it_sends() -> None:
    server = validate_server("radius", {"url": "https://radius.pi.dev/mcp", "auth": {"provider": "radius"}})
    assert not isinstance(server, str) and server.auth_provider == "radius"
    assert validate_server("bad", {"url": "https://x.dev/mcp", "auth": {"token": "t"}}) == (
        'server "bad": auth must be {"provider": "<model provider>"}'
    )
