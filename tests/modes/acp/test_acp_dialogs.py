"""``tau --mode acp``: what the editor is asked or chooses: permissions, model and thinking level,
login."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pexpect
import pytest
from acp import (
    PROTOCOL_VERSION,
    RequestError,
    text_block,
)
from acp.schema import (
    AuthCapabilities,
    ClientCapabilities,
    ConfigOptionUpdate,
    CurrentModeUpdate,
    ToolCallProgress,
)
from acp_client import RecordingClient, TerminalClient, initialize, spawn_tau
from tau_command import TauCommand

from tau.accounts.provider_names import api_key_name
from tau.testing.fake_llm import text_turn, tool_turn

pytestmark = pytest.mark.timeout(30)


# None: the client answers the request "cancelled" (as it must for a prompt it cancels).
@pytest.mark.parametrize(("answer", "blocked"), [("allow-once", False), ("reject", True), (None, True)])
async def test_an_extension_confirm_becomes_a_permission_request_and_a_rejected_call_is_blocked(
    tau: TauCommand, answer: str | None, blocked: bool
) -> None:
    doomed = tau.work / "build"
    doomed.mkdir()
    gate = Path(__file__).parents[3] / "examples" / "extensions" / "permission_gate.py"
    tau.server.add(tool_turn("bash", {"command": "rm -rf build"}, id="call-rm"), text_turn("Done."))
    client = RecordingClient(answer=answer)
    async with spawn_tau(tau, client, "-e", str(gate)) as (conn, _):
        await initialize(conn)
        session_id = (await conn.new_session(cwd=str(tau.work), mcp_servers=[])).session_id
        assert (
            await conn.prompt(session_id=session_id, prompt=[text_block("Clean")])
        ).stop_reason == "end_turn"
    [(tool_call, options)] = client.permission_requests
    assert tool_call.tool_call_id == "call-rm" and tool_call.title == "rm -rf build"
    assert [o.kind for o in options] == ["allow_once", "allow_always", "reject_once"]
    final = next(u for u in client.of(ToolCallProgress) if u.tool_call_id == "call-rm" and u.status)
    assert final.status == ("failed" if blocked else "completed")
    assert doomed.exists() is blocked


async def test_always_allow_answers_the_same_question_for_the_rest_of_the_session(tau: TauCommand) -> None:
    gate = Path(__file__).parents[3] / "examples" / "extensions" / "permission_gate.py"
    tau.server.add(
        tool_turn("bash", {"command": "rm -rf build"}, id="call-1"),
        tool_turn("bash", {"command": "rm -rf build"}, id="call-2"),
        tool_turn("bash", {"command": "rm -rf dist"}, id="call-3"),
        text_turn("Cleaned."),
    )
    client = RecordingClient(answer="allow-always")
    async with spawn_tau(tau, client, "-e", str(gate)) as (conn, _):
        await initialize(conn)
        session_id = (await conn.new_session(cwd=str(tau.work), mcp_servers=[])).session_id
        await conn.prompt(session_id=session_id, prompt=[text_block("Clean")])
    # Asked once for build (the second time answered by "always"), once for the other command.
    assert [call.tool_call_id for call, _ in client.permission_requests] == ["call-1", "call-3"]
    finals = [u.status for u in client.of(ToolCallProgress) if u.status]
    assert finals == ["completed", "completed", "completed"]


SELECT_EXTENSION = """
def setup(tau):
    @tau.on("tool_call")
    async def where(event, ctx):
        choice = await ctx.ui.select("Where may it run?", ["here", "nowhere"], signal=ctx.signal)
        if choice != "here":
            return {"block": True, "reason": f"the user chose {choice}"}
"""


async def test_an_extension_select_becomes_a_permission_request_with_its_options(tau: TauCommand) -> None:
    extension = tau.work / "where.py"
    extension.write_text(SELECT_EXTENSION)
    tau.server.add(tool_turn("bash", {"command": "echo hi"}, id="call-echo"), text_turn("Stopped."))
    client = RecordingClient(answer="1")  # the second option
    async with spawn_tau(tau, client, "-e", str(extension)) as (conn, _):
        await initialize(conn)
        session_id = (await conn.new_session(cwd=str(tau.work), mcp_servers=[])).session_id
        await conn.prompt(session_id=session_id, prompt=[text_block("Echo")])
    [(tool_call, options)] = client.permission_requests
    assert tool_call.tool_call_id == "call-echo"
    assert [(o.option_id, o.name, o.kind) for o in options] == [
        ("0", "here", "allow_once"),
        ("1", "nowhere", "reject_once"),
    ]
    final = next(u for u in client.of(ToolCallProgress) if u.status)
    assert final.status == "failed" and "the user chose nowhere" in final.content[0].content.text


async def test_model_and_thinking_level_are_selectable_and_change_the_session(
    tau: TauCommand,
) -> None:
    models_json = tau.agent_dir / "models.json"
    models = json.loads(models_json.read_text())
    models["providers"]["local"]["models"].append(
        {"id": "other-model", "contextWindow": 100000, "maxTokens": 4096, "reasoning": True}
    )
    models_json.write_text(json.dumps(models))
    tau.server.add(text_turn("From the other one."))
    client = RecordingClient()
    async with spawn_tau(tau, client) as (conn, _):
        await initialize(conn)
        new = await conn.new_session(cwd=str(tau.work), mcp_servers=[])
        model = next(o for o in new.config_options if o.id == "model")
        assert model.current_value == "local/fake-model"
        assert {o.value for o in model.options} == {"local/fake-model", "local/other-model"}
        changed = await conn.set_config_option(
            config_id="model", session_id=new.session_id, value="local/other-model"
        )
        assert next(o for o in changed.config_options if o.id == "model").current_value == "local/other-model"
        assert [m.id for m in new.modes.available_modes] == ["off"]  # fake-model does not reason
        await conn.set_session_mode(session_id=new.session_id, mode_id="high")
        [options] = [u.config_options for u in client.of(ConfigOptionUpdate)]
        assert next(o for o in options if o.id == "thinking").current_value == "high"
        await conn.set_config_option(config_id="thinking", session_id=new.session_id, value="low")
        # The switch kept the level (off: no default is saved, as in pi 1.6), then the option chose one.
        assert [u.current_mode_id for u in client.of(CurrentModeUpdate)] == ["low"]
        await conn.prompt(session_id=new.session_id, prompt=[text_block("Hi")])
    assert tau.server.last_request.body["model"] == "other-model"
    entries = [json.loads(line) for line in tau.session_files()[0].read_text().splitlines()]
    levels = [e["thinkingLevel"] for e in entries if e["type"] == "thinking_level_change"]
    assert levels[-2:] == ["high", "low"]


def _login_in_a_terminal(tau: TauCommand, args: list[str], provider: str, key: str) -> None:
    """What an editor does with a terminal login: tau run with the method's arguments, in a
    terminal, answered by the user (the provider picked from the list, the key typed)."""
    child = pexpect.spawn(
        sys.executable,
        ["-m", "tau", *args],
        cwd=str(tau.work),
        env=tau.env,
        encoding="utf-8",
        timeout=20,
        use_poll=True,  # select() fails once the test process holds a descriptor above 1023
    )
    child.expect(r"Select 1-\d+: ")
    number = re.search(rf"(\d+)\. {provider}\r?\n", child.before)
    assert number is not None, child.before
    child.sendline(number.group(1))
    child.expect(re.escape(f"Enter {api_key_name(provider)}: "))
    child.sendline(key)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before


async def test_without_credentials_a_session_needs_the_login_the_editor_runs_in_a_terminal(
    tau: TauCommand,
) -> None:
    # Only a built-in provider (pointed at the fake server), and no key for it.
    (tau.agent_dir / "models.json").write_text(
        json.dumps({"providers": {"anthropic": {"baseUrl": tau.server.url()}}})
    )
    tau.server.add(text_turn("Logged in."))
    async with spawn_tau(tau, RecordingClient(), model=False) as (conn, _):
        capabilities = ClientCapabilities(auth=AuthCapabilities(terminal=True))
        init = await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=capabilities)
        methods = {m.id: m for m in init.auth_methods}
        assert set(methods) == {"tau-login", "tau-api-key", "tau-credentials"}
        with pytest.raises(RequestError) as refused:
            await conn.new_session(cwd=str(tau.work), mcp_servers=[])
        assert refused.value.code == -32000 and "tau auth login" in refused.value.data["message"]
        with pytest.raises(RequestError) as still:
            await conn.authenticate(method_id="tau-api-key")
        assert still.value.code == -32000

        _login_in_a_terminal(tau, methods["tau-api-key"].args, "anthropic", "sk-ant-test")
        await conn.authenticate(method_id="tau-api-key")
        session_id = (await conn.new_session(cwd=str(tau.work), mcp_servers=[])).session_id
        answer = await conn.prompt(session_id=session_id, prompt=[text_block("Hi")])
        assert answer.stop_reason == "end_turn"
    assert tau.server.last_request.headers["x-api-key"] == "sk-ant-test"
    assert len(tau.session_files()) == 1  # the refused session left no file


async def test_a_client_without_terminals_is_offered_only_the_login_made_elsewhere(tau: TauCommand) -> None:
    async with spawn_tau(tau, RecordingClient()) as (conn, _):
        init = await initialize(conn)
        assert [(m.id, getattr(m, "type", None)) for m in init.auth_methods] == [("tau-credentials", None)]
        await conn.authenticate(method_id="tau-credentials")  # a model is available: nothing to do
        with pytest.raises(RequestError) as unknown:
            await conn.authenticate(method_id="oauth")
        assert unknown.value.code == -32602


async def test_a_sandbox_escalation_is_a_permission_request_and_allow_always_lasts(
    tau: TauCommand, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    escalate = {"reason": "write the report", "writableRoots": [str(outside)]}
    tau.server.add(
        tool_turn("bash", {"command": f"echo 1 > {outside}/one", "escalate": escalate}, id="call-1"),
        tool_turn("bash", {"command": f"echo 2 > {outside}/two"}, id="call-2"),
        text_turn("Written."),
    )
    client = RecordingClient(answer="1")  # "Allow for this session"
    async with spawn_tau(tau, client, "--sandbox", "workspace-write") as (conn, _):
        await initialize(conn)
        session_id = (await conn.new_session(cwd=str(tau.work), mcp_servers=[])).session_id
        await conn.prompt(session_id=session_id, prompt=[text_block("Report")])
    [(tool_call, options)] = client.permission_requests
    assert tool_call.tool_call_id == "call-1"
    assert [(o.name, o.kind) for o in options] == [
        ("Allow once", "allow_once"),
        ("Allow for this session", "allow_always"),
        ("Deny", "reject_once"),
    ]
    assert (outside / "one").read_text() == "1\n" and (outside / "two").read_text() == "2\n"


# Fenced from the start, or started off and fenced by the mode option.
@pytest.mark.parametrize("start", ["workspace-write", "off"])
async def test_a_fenced_session_can_escalate_with_the_editors_terminal_too(
    tau: TauCommand, tmp_path: Path, start: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    escalate = {"reason": "write the report", "writableRoots": [str(outside)]}
    tau.server.add(
        tool_turn("bash", {"command": f"echo 1 > {outside}/one", "escalate": escalate}, id="call-1"),
        text_turn("Written."),
    )
    client = TerminalClient()
    client.answer = "0"  # "Allow once"
    async with spawn_tau(tau, client, "--sandbox", start) as (conn, _):
        await initialize(conn, terminal=True)
        session_id = (await conn.new_session(cwd=str(tau.work), mcp_servers=[])).session_id
        if start == "off":
            await conn.set_config_option(config_id="sandbox", session_id=session_id, value="workspace-write")
        await conn.prompt(session_id=session_id, prompt=[text_block("Report")])
    [(tool_call, _)] = client.permission_requests
    assert tool_call.tool_call_id == "call-1"
    assert (outside / "one").read_text() == "1\n"
    assert client.processes == {}  # fenced: run in tau's fence, not the editor's terminal


async def test_the_sandbox_is_a_mode_config_option_that_fences_the_next_command(tau: TauCommand) -> None:
    tau.server.add(tool_turn("bash", {"command": "echo x > here.txt"}, id="call-write"), text_turn("Tried."))
    client = RecordingClient()
    async with spawn_tau(tau, client, "--sandbox", "workspace-write") as (conn, _):
        await initialize(conn)
        new = await conn.new_session(cwd=str(tau.work), mcp_servers=[])
        sandbox = next(o for o in new.config_options if o.id == "sandbox")
        assert sandbox.category == "mode" and sandbox.current_value == "workspace-write"
        assert [o.value for o in sandbox.options] == ["off", "read-only", "workspace-write"]
        changed = await conn.set_config_option(
            config_id="sandbox", session_id=new.session_id, value="read-only"
        )
        assert next(o for o in changed.config_options if o.id == "sandbox").current_value == "read-only"
        with pytest.raises(RequestError) as refused:
            await conn.set_config_option(config_id="sandbox", session_id=new.session_id, value="loose")
        assert refused.value.code == -32602 and 'unknown sandbox mode "loose"' in str(refused.value.data)
        await conn.prompt(session_id=new.session_id, prompt=[text_block("Write")])
    assert not (tau.work / "here.txt").exists()
    final = next(u for u in client.of(ToolCallProgress) if u.tool_call_id == "call-write" and u.status)
    assert final.status == "failed"
