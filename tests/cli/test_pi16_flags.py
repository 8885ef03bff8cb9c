"""The command-line flags and settings of pi 1.6, run through the real ``tau`` process."""

from __future__ import annotations

import http.client
import json
import threading
import urllib.parse
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest
from tau_command import MODEL, TauCommand

from tau.testing.fake_llm import Fault, Turn


def _models(tau: TauCommand, **model: Any) -> None:
    """Replace the fake provider's one model by ``fake-model`` with the given extra fields."""
    config = json.loads((tau.agent_dir / "models.json").read_text())
    config["providers"]["local"]["models"] = [
        {"id": "fake-model", "contextWindow": 100000, "maxTokens": 4096, **model}
    ]
    (tau.agent_dir / "models.json").write_text(json.dumps(config))


def _body(tau: TauCommand) -> dict[str, Any]:
    body = tau.server.last_request.body
    assert isinstance(body, dict)
    return body


def _tool_names(tau: TauCommand) -> list[str]:
    return sorted(tool["function"]["name"] for tool in _body(tau).get("tools", []))


# -- 1. the max thinking level --------------------------------------------------------------------


def test_thinking_max_is_sent_when_the_model_maps_it(tau: TauCommand) -> None:
    _models(tau, reasoning=True, thinkingLevelMap={"xhigh": "xhigh", "max": "max"})
    tau.server.add(Turn(text="ok"))
    result = tau.run(*MODEL, "--thinking", "max", "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert _body(tau)["reasoning_effort"] == "max"


def test_thinking_max_falls_back_to_the_highest_level_a_model_offers(tau: TauCommand) -> None:
    _models(tau, reasoning=True)
    tau.server.add(Turn(text="ok"))
    result = tau.run(*MODEL, "--thinking", "max", "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert _body(tau)["reasoning_effort"] == "high"


def test_model_suffix_max_sets_the_level(tau: TauCommand) -> None:
    _models(tau, reasoning=True, thinkingLevelMap={"max": "max"})
    tau.server.add(Turn(text="ok"))
    result = tau.run("--model", "local/fake-model:max", "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert _body(tau)["reasoning_effort"] == "max"


def test_default_thinking_level_setting_accepts_max(tau: TauCommand) -> None:
    _models(tau, reasoning=True, thinkingLevelMap={"max": "max"})
    (tau.agent_dir / "settings.json").write_text(json.dumps({"defaultThinkingLevel": "max"}))
    tau.server.add(Turn(text="ok"))
    result = tau.run(*MODEL, "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert _body(tau)["reasoning_effort"] == "max"
    assert "defaultThinkingLevel" not in result.stderr


def test_unknown_thinking_level_warns_with_the_valid_levels(tau: TauCommand) -> None:
    tau.server.add(Turn(text="ok"))
    result = tau.run(*MODEL, "--thinking", "maximum", "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert (
        'Invalid thinking level "maximum". Valid values: off, minimal, low, medium, high, xhigh, max'
        in result.stderr
    )


def test_rpc_set_thinking_level_accepts_max_and_names_the_valid_levels(tau: TauCommand) -> None:
    _models(tau, reasoning=True, thinkingLevelMap={"max": "max"})
    commands = [
        {"id": "1", "type": "set_thinking_level", "level": "max"},
        {"id": "2", "type": "get_state"},
        {"id": "3", "type": "set_thinking_level", "level": "huge"},
    ]
    result = tau.run(
        *MODEL, "--mode", "rpc", "--no-session", stdin="".join(json.dumps(c) + "\n" for c in commands)
    )
    responses = {
        r["id"]: r for r in map(json.loads, result.stdout.splitlines()) if r.get("type") == "response"
    }
    assert responses["1"]["success"] is True
    assert responses["2"]["data"]["thinkingLevel"] == "max"
    assert responses["3"]["success"] is False
    assert "Valid values: off, minimal, low, medium, high, xhigh, max" in responses["3"]["error"]


# -- 2. tool selection ----------------------------------------------------------------------------


def _tools_sent(tau: TauCommand, *flags: str) -> list[str]:
    tau.server.add(Turn(text="ok"))
    result = tau.run(*MODEL, *flags, "-p", "hi")
    assert result.returncode == 0, result.stderr
    return _tool_names(tau)


def test_tools_accepts_star_patterns(tau: TauCommand) -> None:
    assert _tools_sent(tau, "--tools", "gr*,read") == ["grep", "read"]


def test_tools_plus_and_minus_entries_edit_the_defaults(tau: TauCommand) -> None:
    assert _tools_sent(tau, "--tools", "+grep,-bash") == ["edit", "grep", "read", "write"]


def test_exclude_tools_removes_names_and_patterns(tau: TauCommand) -> None:
    assert _tools_sent(tau, "--exclude-tools", "e*,write") == ["bash", "read"]
    # ``*`` also turns on pi's built-in codemode and tool_search (tests/cli/test_smallcli_pi16.py).
    assert _tools_sent(tau, "-t", "*", "-xt", "bash,ls,code*,tool_*") == [
        "edit",
        "find",
        "grep",
        "read",
        "write",
    ]


def test_no_builtin_tools_with_plus_entries_starts_from_nothing(tau: TauCommand) -> None:
    assert _tools_sent(tau, "-nbt", "--tools", "+ls") == ["ls"]


def test_no_tools_still_activates_a_tools_allowlist(tau: TauCommand) -> None:
    assert _tools_sent(tau, "--no-tools", "--tools", "find") == ["find"]


def test_tools_mixing_names_and_plus_entries_is_refused(tau: TauCommand) -> None:
    result = tau.run(*MODEL, "--tools", "read,+grep", "-p", "hi")
    assert result.returncode == 1
    assert "--tools: use either tool names and patterns, or only +name/-name entries" in result.stderr
    assert tau.server.requests == []


def test_default_tools_setting_replaces_the_defaults(tau: TauCommand) -> None:
    (tau.agent_dir / "settings.json").write_text(json.dumps({"defaultTools": ["read", "grep"]}))
    assert _tools_sent(tau) == ["grep", "read"]


def test_default_tools_modifiers_of_a_project_edit_the_global_list(tau: TauCommand) -> None:
    (tau.agent_dir / "settings.json").write_text(json.dumps({"defaultTools": ["read", "grep"]}))
    (tau.work / ".tau").mkdir()
    (tau.work / ".tau" / "settings.json").write_text(json.dumps({"defaultTools": ["+find", "-read"]}))
    assert _tools_sent(tau, "-a") == ["find", "grep"]


def test_default_tools_plus_entries_alone_add_to_the_built_in_defaults(tau: TauCommand) -> None:
    (tau.agent_dir / "settings.json").write_text(json.dumps({"defaultTools": ["+ls"]}))
    assert _tools_sent(tau) == ["bash", "edit", "ls", "read", "write"]


def test_an_exclude_entry_that_matches_no_tool_is_a_warning(tau: TauCommand) -> None:
    tau.server.add(Turn(text="ok"))
    result = tau.run(*MODEL, "-xt", "nosuch*", "-p", "hi")
    assert result.returncode == 0
    assert '--exclude-tools: no tool named "nosuch*"' in result.stderr


# -- 3. --name and --session-id -------------------------------------------------------------------


def _entries(path: Any) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_name_gives_the_new_session_its_display_name(tau: TauCommand) -> None:
    tau.server.add(Turn(text="ok"))
    result = tau.run(*MODEL, "-n", "Refactor auth", "-p", "hi")
    assert result.returncode == 0, result.stderr
    [session] = tau.session_files()
    infos = [e for e in _entries(session) if e["type"] == "session_info"]
    assert [e["name"] for e in infos] == ["Refactor auth"]


def test_an_empty_name_is_refused(tau: TauCommand) -> None:
    result = tau.run(*MODEL, "--name", "  ", "-p", "hi")
    assert result.returncode == 1
    assert "--name needs a non-empty name" in result.stderr
    assert tau.server.requests == []


def test_session_id_creates_a_session_with_that_id_then_reopens_it(tau: TauCommand) -> None:
    tau.server.add(Turn(text="first answer"), Turn(text="second answer"))
    first = tau.run(*MODEL, "--session-id", "task-42", "-p", "one")
    assert first.returncode == 0, first.stderr
    assert "starting a new one with it" in first.stderr
    [session] = tau.session_files()
    assert _entries(session)[0]["id"] == "task-42"

    second = tau.run(*MODEL, "--session-id", "task-42", "-p", "two")
    assert second.returncode == 0, second.stderr
    assert "starting a new one" not in second.stderr
    assert tau.session_files() == [session]
    sent = json.dumps(_body(tau)["messages"])
    assert "first answer" in sent and "two" in sent


def test_session_id_must_be_usable_in_a_file_name(tau: TauCommand) -> None:
    result = tau.run(*MODEL, "--session-id", "../escape", "-p", "hi")
    assert result.returncode == 1
    assert '--session-id "../escape": use letters, digits' in result.stderr
    assert tau.session_files() == []


def test_session_id_cannot_be_combined_with_continue(tau: TauCommand) -> None:
    result = tau.run(*MODEL, "--session-id", "abc", "-c", "-p", "hi")
    assert result.returncode == 1
    assert "--session-id cannot be combined with -c" in result.stderr


# -- 4. unknown flags and "--" --------------------------------------------------------------------


def test_unknown_long_flags_are_one_error_naming_them_all(tau: TauCommand) -> None:
    result = tau.run(*MODEL, "--foo", "--bar=1", "-p", "hi")
    assert result.returncode == 1
    assert "Unknown options: --foo, --bar" in result.stderr
    assert tau.server.requests == []


def test_one_unknown_long_flag_is_named_alone(tau: TauCommand) -> None:
    result = tau.run(*MODEL, "--frobnicate", "-p", "hi")
    assert result.returncode == 1
    assert "tau: error: Unknown option: --frobnicate\n" in result.stderr


def test_double_dash_ends_the_options(tau: TauCommand) -> None:
    tau.server.add(Turn(text="ok"), Turn(text="ok"))
    result = tau.run(*MODEL, "-p", "--", "- first point", "--not-a-flag")
    assert result.returncode == 0, result.stderr
    sent = json.dumps(_body(tau)["messages"])  # the second prompt's request holds both
    assert "- first point" in sent and "--not-a-flag" in sent


# -- 5. settings ----------------------------------------------------------------------------------


def test_retry_max_agent_delay_caps_the_backoff(tau: TauCommand) -> None:
    settings = {"retry": {"baseDelayMs": 600_000, "maxAgentDelayMs": 5, "provider": {"maxRetries": 0}}}
    (tau.agent_dir / "settings.json").write_text(json.dumps(settings))
    tau.server.add(Turn(fault=Fault("status", status=529)), Turn(text="Back again."))
    result = tau.run(*MODEL, "--mode", "json", "-p", "hi")
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    [start] = [e for e in events if e.get("type") == "auto_retry_start"]
    assert start["delayMs"] == 5


def test_model_thinking_levels_sets_the_start_level_of_that_model(tau: TauCommand) -> None:
    _models(tau, reasoning=True)
    settings = {"defaultThinkingLevel": "high", "modelThinkingLevels": {"local/fake-model": "low"}}
    (tau.agent_dir / "settings.json").write_text(json.dumps(settings))
    tau.server.add(Turn(text="ok"))
    result = tau.run(*MODEL, "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert _body(tau)["reasoning_effort"] == "low"


def test_model_thinking_levels_applies_when_switching_models(tau: TauCommand) -> None:
    config = json.loads((tau.agent_dir / "models.json").read_text())
    config["providers"]["local"]["models"] = [
        {"id": m, "contextWindow": 100000, "maxTokens": 4096, "reasoning": True}
        for m in ("fake-model", "other")
    ]
    (tau.agent_dir / "models.json").write_text(json.dumps(config))
    (tau.agent_dir / "settings.json").write_text(
        json.dumps({"modelThinkingLevels": {"local/other": "minimal"}})
    )
    commands = [
        {"id": "1", "type": "set_model", "provider": "local", "modelId": "other"},
        {"id": "2", "type": "get_state"},
    ]
    result = tau.run(
        *MODEL, "--mode", "rpc", "--no-session", stdin="".join(json.dumps(c) + "\n" for c in commands)
    )
    responses = {
        r["id"]: r for r in map(json.loads, result.stdout.splitlines()) if r.get("type") == "response"
    }
    assert responses["1"]["success"] is True, responses["1"]
    assert responses["2"]["data"]["thinkingLevel"] == "minimal"


class _ForwardingProxy(BaseHTTPRequestHandler):
    """A plain-HTTP proxy: takes absolute-URI requests, records them and forwards them."""

    seen: ClassVar[list[str]] = []

    def do_POST(self) -> None:
        self.seen.append(self.path)
        target = urllib.parse.urlsplit(self.path)
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        upstream = http.client.HTTPConnection(target.hostname or "", target.port, timeout=30)
        headers = {
            k: v for k, v in self.headers.items() if k.lower() not in ("proxy-connection", "connection")
        }
        upstream.request("POST", target.path, body=body, headers=headers)
        response = upstream.getresponse()
        data = response.read()
        self.send_response(response.status)
        self.send_header("Content-Type", response.getheader("Content-Type") or "text/event-stream")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def proxy() -> Iterator[tuple[str, list[str]]]:
    seen: ClassVar[list[str]] = []
    handler = type("Handler", (_ForwardingProxy,), {"seen": seen})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


def test_http_proxy_setting_routes_model_requests_through_the_proxy(
    tau: TauCommand, proxy: tuple[str, list[str]]
) -> None:
    url, seen = proxy
    (tau.agent_dir / "settings.json").write_text(json.dumps({"httpProxy": url}))
    tau.server.add(Turn(text="through the proxy"))
    result = tau.run(*MODEL, "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "through the proxy\n"
    assert seen == [tau.server.url("/v1/chat/completions")]


def test_http_proxy_of_a_project_is_not_used(tau: TauCommand, proxy: tuple[str, list[str]]) -> None:
    url, seen = proxy
    (tau.work / ".tau").mkdir()
    (tau.work / ".tau" / "settings.json").write_text(json.dumps({"httpProxy": url}))
    tau.server.add(Turn(text="direct"))
    result = tau.run(*MODEL, "-a", "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert seen == []


def test_models_glob_picks_the_first_matching_model_for_a_new_session(tau: TauCommand) -> None:
    config = json.loads((tau.agent_dir / "models.json").read_text())
    config["providers"]["local"]["models"] = [
        {"id": m, "contextWindow": 100000, "maxTokens": 4096} for m in ("fake-model", "other-model")
    ]
    (tau.agent_dir / "models.json").write_text(json.dumps(config))
    tau.server.add(Turn(text="ok"))
    result = tau.run("--models", "local/oth*", "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert _body(tau)["model"] == "other-model"


def test_a_session_recorded_at_max_resumes_at_max(tau: TauCommand) -> None:
    _models(tau, reasoning=True, thinkingLevelMap={"max": "max"})
    tau.server.add(Turn(text="one"), Turn(text="two"))
    assert tau.run(*MODEL, "--thinking", "max", "-p", "hi").returncode == 0
    [session] = tau.session_files()
    levels = [e["thinkingLevel"] for e in _entries(session) if e["type"] == "thinking_level_change"]
    assert levels == ["max"]
    result = tau.run(*MODEL, "-c", "-p", "again")
    assert result.returncode == 0, result.stderr
    assert _body(tau)["reasoning_effort"] == "max"


def test_fork_with_session_id_gives_the_copy_that_id(tau: TauCommand) -> None:
    tau.server.add(Turn(text="one"), Turn(text="two"))
    assert tau.run(*MODEL, "--session-id", "source", "-p", "hi").returncode == 0
    result = tau.run(*MODEL, "--fork", "source", "--session-id", "copy-1", "-p", "more")
    assert result.returncode == 0, result.stderr
    headers = {_entries(path)[0]["id"]: _entries(path)[0] for path in tau.session_files()}
    assert set(headers) == {"source", "copy-1"}
    assert headers["copy-1"]["parentSession"].endswith(".jsonl")
