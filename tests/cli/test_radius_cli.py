"""The Radius gateway end to end: ``tau auth login radius`` against the fake gateway (the test plays the
browser), the account's model list it stores, and ``pi-messages`` requests to the fake LLM carrying the
login's token (refreshed when stale)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tau.testing.fake_llm import FakeLLMServer, Fault, ScriptedToolCall, Turn
from tau.testing.fake_oauth import FakeOAuthServer


@pytest.fixture(scope="module")
def llm() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as server:
        yield server


@pytest.fixture(scope="module")
def gateway(llm: FakeLLMServer) -> Iterator[FakeOAuthServer]:
    with FakeOAuthServer(
        device_interval_s=0.05, refresh_delay_s=0, radius_base_url=llm.url("/pi/v1")
    ) as server:
        yield server


@pytest.fixture
def env(tmp_path: Path, gateway: FakeOAuthServer) -> dict[str, str]:
    (tmp_path / "agent").mkdir()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.endswith(("_API_KEY", "_TOKEN")) and not k.startswith("TAU_")
    }
    env.update(
        TAU_AGENT_DIR=str(tmp_path / "agent"),
        TAU_OAUTH_TEST_HOSTS=gateway.hosts_env(),
        TAU_OAUTH_TEST_CALLBACK_PORT="0",
        TAU_OAUTH_TEST_POLL_S="0.05",
        BROWSER="true",
    )
    return env


def _tau(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tau", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=env["TAU_AGENT_DIR"],
    )


def _login(env: dict[str, str], *extra: str) -> tuple[subprocess.CompletedProcess[str], str]:
    """``tau auth login radius``; the test is the browser (GETs the printed URL and follows the redirect)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "tau", "auth", "login", "radius", *extra],
        env=env,
        stdin=subprocess.PIPE,  # open until the end: nothing is pasted
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout
    seen, url = [], ""
    for line in process.stdout:
        seen.append(line)
        if line.startswith("  http") and not extra:
            url = line.strip()
            httpx.get(url, follow_redirects=True, timeout=10)
            break
        if line.startswith("Open ") and "enter code" in line:
            url = line.split()[1]
            break
    out, err = process.communicate(timeout=30)
    return subprocess.CompletedProcess(process.args, process.returncode, "".join(seen) + out, err), url


def _stored(env: dict[str, str], name: str) -> dict[str, dict[str, object]]:
    data: dict[str, dict[str, object]] = json.loads((Path(env["TAU_AGENT_DIR"]) / name).read_text())
    return data


def test_browser_login_stores_the_token_and_the_accounts_models_and_requests_use_both(
    env: dict[str, str], llm: FakeLLMServer, gateway: FakeOAuthServer
) -> None:
    result, url = _login(env)
    assert result.returncode == 0, result.stderr
    assert "Logged in to Radius. Credentials saved to" in result.stdout
    assert (
        "client_id=pi-gateway" in url
        and "handoff=url" in url
        and "redirect_uri=http%3A%2F%2F127.0.0.1%3A" in url
    )
    credential = _stored(env, "auth.json")["radius"]
    assert set(credential) == {"type", "refresh", "access", "expires"}
    assert str(credential["access"]).startswith("radius-at-")
    assert stat.S_IMODE((Path(env["TAU_AGENT_DIR"]) / "auth.json").stat().st_mode) == 0o600
    listed = _stored(env, "models-store.json")["radius"]["models"]
    assert isinstance(listed, list)
    assert [(m["id"], m["api"], m["baseUrl"]) for m in listed] == [
        ("balanced", "pi-messages", llm.url("/pi/v1")),
        ("team-only", "pi-messages", llm.url("/pi/v1")),
    ]

    listing = _tau(env, "--list-models", "radius")
    assert "team-only" in listing.stdout and "claude-fable-5" not in listing.stdout  # the account's list wins

    # As pi, the login points the Radius MCP server at itself; its requests carry the login's token.
    mcp_file = Path(env["TAU_AGENT_DIR"]) / "mcp.json"
    assert f'Added MCP server "radius" in {mcp_file} to use the Radius login.' in result.stdout
    entry = {"url": "https://radius.pi.dev/mcp", "auth": {"provider": "radius"}}
    assert json.loads(mcp_file.read_text()) == {"mcpServers": {"radius": entry}}
    entry["url"] = f"{gateway.url}/radius.pi.dev/mcp"  # the fake gateway records what reaches it
    mcp_file.write_text(json.dumps({"mcpServers": {"radius": entry}}))
    _tau(env, "mcp", "list")
    sent = [h for method, path, h in gateway.requests if (method, path) == ("POST", "radius.pi.dev/mcp")]
    assert sent and sent[0]["authorization"] == f"Bearer {credential['access']}"

    (Path(env["TAU_AGENT_DIR"]) / "work.txt").write_text("gateway-content")
    llm.add(
        Turn(tool_calls=[ScriptedToolCall("read", {"path": "work.txt"})]), Turn(text="Read through Radius.")
    )
    answer = _tau(env, "-p", "read work.txt", "--provider", "radius", "--model", "team-only")
    assert (answer.returncode, answer.stdout) == (0, "Read through Radius.\n"), answer.stderr
    first, second = llm.requests[-2:]
    assert first.api == second.api == "pi-messages"
    assert second.headers["authorization"] == f"Bearer {credential['access']}"
    assert second.body["model"] == "team-only"
    result_message = second.body["context"]["messages"][-1]
    assert (result_message["role"], result_message["content"][0]["text"]) == ("toolResult", "gateway-content")


def test_device_code_login_without_a_browser_then_a_stale_token_is_refreshed_once(
    env: dict[str, str], gateway: FakeOAuthServer, llm: FakeLLMServer
) -> None:
    gateway.device_pending_polls = 2
    result, url = _login(env, "--no-browser")
    assert result.returncode == 0, result.stderr
    assert url == "https://radius.pi.dev/device" and "RAD-2468" in result.stdout
    (Path(env["TAU_AGENT_DIR"]) / "mcp.json").unlink()  # written as in the browser login: no real server here
    auth_file = Path(env["TAU_AGENT_DIR"]) / "auth.json"
    data = _stored(env, "auth.json")
    old_access = data["radius"]["access"]
    data["radius"]["expires"] = int(time.time() * 1000) - 1000
    auth_file.write_text(json.dumps(data))
    before = gateway.refresh_counts["radius"]

    llm.add(Turn(text="fresh"))
    answer = _tau(env, "-p", "hi", "--provider", "radius", "--model", "balanced")
    assert (answer.returncode, answer.stdout) == (0, "fresh\n"), answer.stderr
    fresh = _stored(env, "auth.json")["radius"]
    assert gateway.refresh_counts["radius"] == before + 1
    assert fresh["access"] != old_access
    assert llm.last_request.headers["authorization"] == f"Bearer {fresh['access']}"


def test_a_gateway_refusing_the_request_is_one_line(
    env: dict[str, str], gateway: FakeOAuthServer, llm: FakeLLMServer
) -> None:
    auth_file = Path(env["TAU_AGENT_DIR"]) / "auth.json"
    auth_file.write_text(json.dumps({"radius": gateway.issue_login("radius")}))
    auth_file.chmod(0o600)
    config = {"providers": {"radius": {"baseUrl": llm.url("/pi/v1")}}}
    (Path(env["TAU_AGENT_DIR"]) / "models.json").write_text(json.dumps(config))
    refusal = {"error": {"message": "Model disabled by your organization", "code": "model_disabled"}}
    llm.add(Turn(fault=Fault("status", status=403, body=refusal)))
    answer = _tau(env, "-p", "hi", "--provider", "radius", "--model", "balanced")
    assert answer.returncode == 1
    assert "Traceback" not in answer.stderr
    # pi 1.6's line: the status and its reason, the gateway's message and its code
    expected = "403 Forbidden: Model disabled by your organization (model_disabled)"
    assert answer.stderr.strip().splitlines() == [expected]


def test_the_gateway_gets_the_sessions_prompt_records_in_place(
    env: dict[str, str], gateway: FakeOAuthServer, llm: FakeLLMServer
) -> None:
    """As pi 1.6 sends a session to Radius: its records as they are, the first system message
    (prompt sections and tools) at the head, a tool's result with how long it ran, a later change of
    tools where it was recorded, and no ``maxTokens`` (the gateway fits the budget to the model)."""
    agent_dir = Path(env["TAU_AGENT_DIR"])
    auth_file = agent_dir / "auth.json"
    auth_file.write_text(json.dumps({"radius": gateway.issue_login("radius")}))
    auth_file.chmod(0o600)
    (agent_dir / "models.json").write_text(
        json.dumps({"providers": {"radius": {"baseUrl": llm.url("/pi/v1")}}})
    )
    (agent_dir / "notes.txt").write_text("the answer is 42\n")
    read = ScriptedToolCall("read", {"path": "notes.txt"}, id="call_1")
    llm.add(Turn(tool_calls=[read]), Turn(text="It is 42."), Turn(text="again"))
    before = len(llm.requests)
    model = ("--provider", "radius", "--model", "claude-opus-5:high")
    assert _tau(env, "-p", "what do my notes say?", *model).returncode == 0
    assert _tau(env, "--tools", "read,bash", "-c", "-p", "more", *model).returncode == 0
    [session] = sorted((agent_dir / "sessions").rglob("*.jsonl"))
    entries = [json.loads(line) for line in session.read_text().splitlines()]
    records = [e["message"] for e in entries if e["type"] == "message"]
    first, second, third = (r.body for r in llm.requests[before:])
    assert first["context"]["messages"] == records[:2]  # the prompt's record, then the question
    assert second["context"]["messages"] == records[:4]  # ... the call and its result
    sent = third["context"]["messages"]
    assert sent == records[:7]  # ... the answer, the change of tools, then "more"
    roles = ["system", "user", "assistant", "toolResult", "assistant", "system", "user"]
    assert [m["role"] for m in sent] == roles
    assert isinstance(sent[3]["durationMs"], int)
    assert [t["name"] for t in sent[5]["toolsRemoved"]] == ["edit", "write"]
    assert "preamble" in sent[0]["sections"] and sent[0]["content"] == ""
    assert third["options"] == {"reasoning": "high", "sessionId": first["options"]["sessionId"]}
