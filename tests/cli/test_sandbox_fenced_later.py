"""A session started with ``--sandbox off`` and fenced later (issue #34): bash gets its ``escalate``
parameter from the next request, as a change appended after the cached prefix, and loses it again
when the sandbox goes back off. The real ``tau`` over RPC against the fake server, real bubblewrap.

Plain: an OpenAI-compatible model without the mid-conversation flags (the declaration stays, a
notice gives the definition now). Flags: Anthropic with ``supportsMidConvoToolChanges`` (the new
definition is a ``tool_addition`` in a system message, as pi 1.6 sends it).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pi16 import pi16_command, run_pi16
from tau_command import TauCommand, tau_command

from tau.modes.rpc_client import RpcClient
from tau.testing.fake_llm import RecordedRequest, ScriptedToolCall, Turn, text_turn
from tau.testing.fake_llm.prefix import first_difference, prefix_stats, strip_cache_markers

FLAGS = {"supportsMidConvoSystemMessages": True, "supportsMidConvoToolChanges": True}


@pytest.fixture
def tau(tmp_path: Path) -> Iterator[TauCommand]:
    yield from tau_command(tmp_path)


def configure(tau: TauCommand, *, flags: bool) -> list[str]:
    """models.json pointing at the fake server's Anthropic (``flags``) or OpenAI-compatible endpoint."""
    if flags:
        model: dict[str, Any] = {"id": "claude-opus-4-7", "reasoning": False, "compat": FLAGS}
        provider = {"baseUrl": tau.server.url(), "api": "anthropic-messages"}
    else:
        model = {"id": "fake-model", "reasoning": False}
        provider = {"baseUrl": tau.server.url("/v1"), "api": "openai-completions"}
    model.update(contextWindow=100000, maxTokens=4096)
    provider.update(apiKey="local-key", models=[model])
    (tau.agent_dir / "models.json").write_text(json.dumps({"providers": {"local": provider}}))
    return ["--provider", "local", "--model", model["id"]]


def declared_bash(request: RecordedRequest) -> dict[str, Any]:
    """bash's parameters in the request's tool list."""
    for tool in request.body["tools"]:
        if tool.get("name") == "bash":
            schema: dict[str, Any] = tool["input_schema"]
            return schema
        if tool.get("function", {}).get("name") == "bash":
            schema = tool["function"]["parameters"]
            return schema
    raise AssertionError("no bash tool")


def appended(before: RecordedRequest, after: RecordedRequest) -> str:
    """What ``after`` adds to ``before`` (which it must extend byte for byte), as text."""
    assert first_difference(before, after) is None, first_difference(before, after)
    key = "messages"
    return json.dumps(after.body[key][len(before.body[key]) - 1 :])


REDEFINED = 'Tool "bash" is redefined; use it as defined here, not as first declared:\n'


def bash_definitions(request: RecordedRequest) -> list[dict[str, Any]]:
    """bash's parameters as each change in the request's messages defines them, in order."""
    found: list[dict[str, Any]] = []

    def visit(value: Any) -> None:
        if isinstance(value, dict):
            definition = value.get("definition") if value.get("type") == "tool_definition" else None
            if isinstance(definition, dict) and definition.get("name") == "bash":
                found.append(definition["input_schema"])
                return
            for item in value.values():
                visit(item)
        elif isinstance(value, list):
            for item in value:
                visit(item)
        elif isinstance(value, str):
            for part in value.split(REDEFINED)[1:]:
                found.append(json.JSONDecoder().raw_decode(part)[0]["parameters"])

    visit(request.body["messages"])
    return found


def escalation_entries(tau: TauCommand) -> list[dict[str, Any]]:
    [session] = tau.session_files()
    entries = [json.loads(line) for line in session.read_text().splitlines()]
    return [e["data"] for e in entries if e.get("customType") == "sandbox-escalation"]


async def run(rpc: RpcClient, message: str) -> list[str]:
    """Prompt, allow once whatever the sandbox asks; the tool results the model was sent."""
    results: list[str] = []
    await rpc.call("prompt", message=message)
    async for event in rpc.events():
        if event.get("type") == "extension_ui_request" and event.get("method") == "select":
            await rpc.respond_ui(event["id"], value="Allow once")
        if event.get("type") == "tool_execution_end":
            results.append("".join(part.get("text", "") for part in event["result"]["content"]))
        if event.get("type") == "agent_settled":
            break
    return results


@pytest.mark.parametrize("flags", [False, True], ids=["plain", "flags"])
async def test_a_session_fenced_later_can_escalate_and_loses_escalate_when_off_again(
    tau: TauCommand, tmp_path: Path, flags: bool
) -> None:
    model = configure(tau, flags=flags)
    outside = tmp_path / "outside"
    outside.mkdir()
    ask = {"reason": "write the report", "writableRoots": [str(outside)]}
    tau.server.add(
        text_turn("One."),
        Turn(tool_calls=[ScriptedToolCall("bash", {"command": f"echo 1 > {outside}/one", "escalate": ask})]),
        text_turn("Two."),
        Turn(
            tool_calls=[ScriptedToolCall("bash", {"command": f"echo 3 > {outside}/three", "escalate": ask})]
        ),
        text_turn("Three."),
    )
    command = [sys.executable, "-m", "tau", "--mode", "rpc", *model, "--sandbox", "off"]
    async with RpcClient(command, cwd=str(tau.work), env=tau.env) as rpc:
        assert await run(rpc, "one") == []
        await rpc.call("set_sandbox", mode="workspace-write")
        fenced = await run(rpc, "two")
        await rpc.call("set_sandbox", mode="off")
        unfenced = await run(rpc, "three")
    one, two, two_done, three, three_done = tau.server.requests

    # Off at the start: no escalate anywhere.
    assert "escalate" not in declared_bash(one)["properties"] and "escalate" not in json.dumps(one.body)
    # Fenced later: the next request extends the first byte for byte (the declaration in the
    # cached tool list stays) and defines bash with escalate after it.
    change = appended(one, two)
    assert declared_bash(two) == declared_bash(one) and "Sandbox: workspace-write." in change
    [fenced_bash] = bash_definitions(two)
    assert fenced_bash["properties"]["escalate"]["required"] == ["reason"]
    if flags:
        assert '"tool_addition"' in change and '"tool_removal"' not in change
    # The model's escalate worked: asked, allowed once, written outside the working folder.
    assert fenced == ["(no output)"] and (outside / "one").read_text() == "1\n"
    assert [e["decision"] for e in escalation_entries(tau)] == ["once"]
    # Off again: appended as well; bash is defined without escalate, and a call with it is refused.
    change = appended(two_done, three)
    assert "Removed system prompt section" in change  # the sandbox line
    assert [set(d["properties"]) for d in bash_definitions(three)] == [
        {"command", "timeout", "escalate"},
        {"command", "timeout"},
    ]
    assert declared_bash(three) == declared_bash(one)
    [refused] = unfenced
    assert "('escalate' was unexpected)" in refused and not (outside / "three").exists()
    assert first_difference(three, three_done) is None
    assert len(escalation_entries(tau)) == 1
    # The cache benchmark's measure: every request paid only for its new messages (1.00).
    stats = prefix_stats(tau.server.requests)
    assert stats.uncached == stats.ideal


def test_a_session_continued_fenced_gets_escalate_appended(tau: TauCommand, tmp_path: Path) -> None:
    model = configure(tau, flags=False)
    outside = tmp_path / "outside"
    outside.mkdir()
    ask = {"reason": "write the report", "writableRoots": [str(outside)]}
    tau.server.add(text_turn("One."))
    assert tau.run(*model, "--sandbox", "off", "-p", "one").returncode == 0
    tau.server.add(
        Turn(tool_calls=[ScriptedToolCall("bash", {"command": f"echo 1 > {outside}/one", "escalate": ask})]),
        text_turn("Two."),
    )
    done = tau.run(*model, "--sandbox", "workspace-write", "-c", "-p", "two")
    assert done.returncode == 0, done.stderr
    one, two, two_done = tau.server.requests
    assert (
        "Sandbox: workspace-write." in appended(one, two)
        and "escalate" in bash_definitions(two)[0]["properties"]
    )
    # The escalate argument is accepted, and refused as print mode refuses any (nobody to ask).
    result = two_done.body["messages"][-1]
    assert result["role"] == "tool" and result["content"].startswith("Escalation refused (nobody can approve")
    assert not (outside / "one").exists()
    assert [e["decision"] for e in escalation_entries(tau)] == ["denied"]


def test_pi16_continuing_a_tau_file_with_bash_redefined_sends_tau_last_request_first(tau: TauCommand) -> None:
    pi = pi16_command()
    model = configure(tau, flags=True)
    tau.server.add(text_turn("One."))
    assert tau.run(*model, "--sandbox", "off", "-p", "one").returncode == 0
    tau.server.add(text_turn("Two."))
    assert tau.run(*model, "--sandbox", "workspace-write", "-c", "-p", "two").returncode == 0
    [session] = tau.session_files()
    tau_last = strip_cache_markers(tau.server.requests[-1].body)
    tau.server.add(text_turn("From pi."))
    run_pi16(pi, tau, tau.work.parent / "pi-agent", "--session", str(session), "-p", "three", model=model)
    pi_request = strip_cache_markers(tau.server.requests[-1].body)
    # pi reads tau's record of bash redefined (withdrawn and declared again) as its own: the same
    # tools and system, and tau's messages, then its reply and pi's own changes appended.
    assert pi_request["tools"] == tau_last["tools"] and pi_request["system"] == tau_last["system"]
    assert pi_request["messages"][: len(tau_last["messages"])] == tau_last["messages"]
