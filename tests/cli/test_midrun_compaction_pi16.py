"""Compaction between the turns of one run, side by side with pi 1.6 (issue #32): a tool-using run
on a small-window model passes the threshold after a tool call; both compact before the next
request (reason ``threshold``, no retry), send that request with the compacted conversation, and
write the same entries and report the same events. pi comes from ``.ci/pi16`` (installed by
``scripts/check``) or ``$TAU_TEST_PI16_DIR``."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from chat_messages import conversation_messages
from pi16 import pi16_command
from tau_command import TauCommand

from tau.modes.rpc_client import RpcClient
from tau.testing.fake_llm import FakeLLMServer, Fault, RecordedRequest, ScriptedToolCall, ScriptedUsage, Turn

MODEL = ["--provider", "local", "--model", "fake-tiny"]
SETTINGS = {"compaction": {"reserveTokens": 1000, "keepRecentTokens": 10}}
SUMMARY = "## Goal\nCount the notes."


def small_window(tau: TauCommand, *dirs: Path) -> None:
    """A 3000-token model beside the fake one, and a threshold of 2000 tokens, for tau and pi."""
    path = tau.agent_dir / "models.json"
    models = json.loads(path.read_text())
    models["providers"]["local"]["models"].append(
        {"id": "fake-tiny", "contextWindow": 3000, "maxTokens": 256}
    )
    path.write_text(json.dumps(models))
    for folder in (tau.agent_dir, *dirs):
        folder.mkdir(exist_ok=True)
        (folder / "settings.json").write_text(json.dumps(SETTINGS))
        (folder / "models.json").write_text(path.read_text())


READY = Turn(text="Ready.", usage=ScriptedUsage(input=200))
"""The first exchange: the history the compaction summarises (the run's own turn is kept)."""


def run_turns() -> list[Turn]:
    """The run: a tool call whose reply reports 2500 tokens (past the threshold), the summary, a
    second tool call and the answer, both small."""
    return [
        Turn(
            tool_calls=[ScriptedToolCall("bash", {"command": "echo one"})],
            usage=ScriptedUsage(input=2400, output=100),
        ),
        Turn(text=SUMMARY),
        Turn(tool_calls=[ScriptedToolCall("bash", {"command": "echo two"})], usage=ScriptedUsage(input=300)),
        Turn(text="Two notes.", usage=ScriptedUsage(input=350)),
    ]


def pi_json(pi: list[str], tau: TauCommand, pi_dir: Path, *args: str) -> list[dict[str, Any]]:
    """pi 1.6 in JSON mode with its own agent dir: the events it printed."""
    env = tau.env | {"PI_OFFLINE": "1", "PI_CODING_AGENT_DIR": str(pi_dir), "HOME": str(pi_dir)}
    ran = subprocess.run(
        [*pi, *MODEL, "--mode", "json", *args],
        cwd=tau.work,
        env=env,
        input="",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ran.returncode == 0, ran.stderr
    return [json.loads(line) for line in ran.stdout.splitlines() if line.startswith("{")]


def tau_json(tau: TauCommand, *args: str) -> list[dict[str, Any]]:
    ran = tau.run(*MODEL, "--mode", "json", *args)
    assert ran.returncode == 0, ran.stderr
    return [json.loads(line) for line in ran.stdout.splitlines() if line.startswith("{")]


def flow(events: list[dict[str, Any]]) -> list[Any]:
    """The run's course: turns, finished messages (by role), tool results, compactions with what
    pi reports about them, the end."""
    out: list[Any] = []
    for event in events:
        kind = event["type"]
        if kind in ("agent_start", "turn_start", "turn_end", "agent_end"):
            out.append([kind])
        elif kind == "message_end" and event["message"]["role"] != "system":
            message = event["message"]
            out.append(
                [kind, message["role"], *([message["stopReason"]] if message["role"] == "assistant" else [])]
            )
        elif kind == "compaction_start":
            out.append([kind, event["reason"]])
        elif kind == "compaction_end":
            result = event.get("result")
            out.append(
                [
                    kind,
                    event["reason"],
                    event["aborted"],
                    event["willRetry"],
                    event.get("errorMessage"),
                    result and {"summary": result["summary"], "tokensBefore": result["tokensBefore"]},
                ]
            )
    return out


def entries(session: Path) -> list[Any]:
    """Each entry without ids and times: its kind, a message's role, a compaction's contents."""
    out: list[Any] = []
    for line in session.read_text().splitlines():
        entry = json.loads(line)
        kind = entry["type"]
        if kind == "message" and entry["message"]["role"] != "system":
            out.append([kind, entry["message"]["role"]])
        elif kind == "compaction":
            out.append([kind, entry["summary"], entry["tokensBefore"], entry.get("fromHook")])
        elif kind not in ("message", "session"):
            out.append([kind])
    return out


def sent(requests: list[RecordedRequest]) -> list[list[str]]:
    """Each request's messages: role and the start of their text (system prompts left out); the
    message carrying the summary as ``<summary>`` (tau words its preamble in its own way)."""
    out = []
    for request in requests:
        messages = []
        for message, content in conversation_messages(request):
            if SUMMARY in content and not content.startswith("<conversation>"):
                content = "<summary>"
            calls = [call["function"]["arguments"] for call in message.get("tool_calls") or []]
            messages.append(f"{message['role']}: {content[:40]} {' '.join(calls)}".strip())
        out.append(messages)
    return out


def test_a_run_past_the_threshold_compacts_before_its_next_request_as_pi16_does(
    tau: TauCommand, tmp_path: Path
) -> None:
    pi = pi16_command()
    pi_dir = tmp_path / "pi"
    small_window(tau, pi_dir)

    tau.server.add(READY)
    tau_json(tau, "-p", "Get ready.")
    tau.server.add(*run_turns())
    tau_events = tau_json(tau, "-c", "-p", "Count the notes.")
    tau_requests = list(tau.server.requests)
    [tau_session] = tau.session_files()
    tau.server.add(READY)
    pi_json(pi, tau, pi_dir, "-p", "Get ready.")
    tau.server.add(*run_turns())
    pi_events = pi_json(pi, tau, pi_dir, "-c", "-p", "Count the notes.")
    pi_requests = tau.server.requests[len(tau_requests) :]
    [pi_session] = sorted((pi_dir / "sessions").rglob("*.jsonl"))

    assert flow(tau_events) == flow(pi_events)
    assert entries(tau_session) == entries(pi_session)
    assert sent(tau_requests) == sent(pi_requests)
    # Between the first turn's tool result and the second request, not after the run.
    course = flow(tau_events)
    start = course.index(["compaction_start", "threshold"])
    assert course[start - 2 : start] == [["message_end", "toolResult"], ["turn_end"]]
    assert course[start + 1][:5] == ["compaction_end", "threshold", False, False, None]
    assert course[start + 2] == ["turn_start"]
    assert [e[0] for e in entries(tau_session)].count("compaction") == 1
    # The requests after the compaction carry the summary and the run's own turn, not the history.
    requests = sent(tau_requests)
    assert requests[3] == [
        "user: <summary>",
        "user: Count the notes.",
        'assistant:  {"command":"echo one"}',
        "tool: one",
    ]
    assert requests[4][:4] == requests[3]
    assert tau.server.pending == 0


HOOK_EXTENSION_PY = """
import json, os

def setup(tau):
    out = os.environ["HOOK_LOG"]

    def log(record):
        with open(out, "a") as f:
            f.write(json.dumps(record) + "\\n")

    @tau.on("session_before_compact")
    def before(event, ctx):
        log(["session_before_compact", event.reason, event.will_retry, event.custom_instructions])

    @tau.on("session_compact")
    def after(event, ctx):
        log(["session_compact", event.reason, event.will_retry, event.from_extension])
"""

HOOK_EXTENSION_TS = """
import { appendFileSync } from "node:fs";

export default function (pi: any) {
  const log = (record: any) => appendFileSync(process.env.HOOK_LOG!, JSON.stringify(record) + "\\n");
  pi.on("session_before_compact", (event: any) => {
    log(["session_before_compact", event.reason, event.willRetry, event.customInstructions ?? null]);
  });
  pi.on("session_compact", (event: any) => {
    log(["session_compact", event.reason, event.willRetry, event.fromExtension]);
  });
}
"""


def test_extensions_see_the_mid_run_compaction_as_in_pi16(tau: TauCommand, tmp_path: Path) -> None:
    pi = pi16_command()
    pi_dir = tmp_path / "pi"
    small_window(tau, pi_dir)
    tau_ext = tmp_path / "hooks.py"
    tau_ext.write_text(textwrap.dedent(HOOK_EXTENSION_PY))
    pi_ext = tmp_path / "hooks.ts"
    pi_ext.write_text(textwrap.dedent(HOOK_EXTENSION_TS))
    tau_log, pi_log = tmp_path / "tau.log", tmp_path / "pi.log"

    tau.env["HOOK_LOG"] = str(tau_log)
    tau.server.add(READY)
    tau_json(tau, "-p", "Get ready.")
    tau.server.add(*run_turns())
    tau_json(tau, "-e", str(tau_ext), "-c", "-p", "Count the notes.")
    tau.env["HOOK_LOG"] = str(pi_log)
    tau.server.add(READY)
    pi_json(pi, tau, pi_dir, "-p", "Get ready.")
    tau.server.add(*run_turns())
    pi_json(pi, tau, pi_dir, "-e", str(pi_ext), "-c", "-p", "Count the notes.")

    seen = [json.loads(line) for line in tau_log.read_text().splitlines()]
    assert seen == [json.loads(line) for line in pi_log.read_text().splitlines()]
    assert seen == [
        ["session_before_compact", "threshold", False, None],
        ["session_compact", "threshold", False, False],
    ]


def pi_rpc(pi: list[str], tau: TauCommand, pi_dir: Path) -> RpcClient:
    env = tau.env | {"PI_OFFLINE": "1", "PI_CODING_AGENT_DIR": str(pi_dir), "HOME": str(pi_dir)}
    return RpcClient([*pi, "--mode", "rpc", *MODEL], cwd=str(tau.work), env=env)


def tau_rpc(tau: TauCommand) -> RpcClient:
    return RpcClient([sys.executable, "-m", "tau", "--mode", "rpc", *MODEL], cwd=str(tau.work), env=tau.env)


async def run_and_stop(rpc: RpcClient, server: FakeLLMServer) -> list[dict[str, Any]]:
    """``Count the notes.``, stopped (``abort``) once its compaction has asked the server for its
    summary (the stalled turn taken; an abort straight after ``compaction_start`` can come before
    the request is sent): the events through ``agent_settled``."""
    await rpc.call("prompt", message="Count the notes.")
    events = await rpc.wait_for("compaction_start")
    deadline = asyncio.get_running_loop().time() + 20
    while server.pending and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.02)
    await rpc.call("abort")
    rest = [] if events[-1]["type"] == "agent_settled" else await rpc.wait_for("agent_settled")
    return events + rest


async def test_a_failed_or_stopped_mid_run_summary_ends_as_in_pi16(tau: TauCommand, tmp_path: Path) -> None:
    pi = pi16_command()
    pi_dir = tmp_path / "pi"
    small_window(tau, pi_dir)
    (tau.agent_dir / "settings.json").write_text(json.dumps({**SETTINGS, "retry": {"enabled": False}}))
    (pi_dir / "settings.json").write_text(json.dumps({**SETTINGS, "retry": {"enabled": False}}))
    failing = [
        *run_turns()[:1],
        Turn(fault=Fault("status", status=400, body="no summary today")),
        *run_turns()[2:],
    ]
    stalled = [*run_turns()[:1], Turn(text=SUMMARY, fault=Fault("stall", seconds=30))]
    outcomes: list[tuple[list[Any], list[Any], list[Any], list[list[str]]]] = []
    for client in (tau_rpc(tau), pi_rpc(pi, tau, pi_dir)):
        async with client as rpc:
            first = len(tau.server.requests)
            tau.server.add(READY)
            await rpc.prompt("Get ready.")
            tau.server.add(*failing)
            failed = flow(await rpc.prompt("Count the notes."))
            tau.server.add(*stalled)
            stopped = flow(await run_and_stop(rpc, tau.server))
            state = await rpc.call("get_state")
        assert tau.server.pending == 0
        outcomes.append(
            (failed, stopped, entries(Path(state["sessionFile"])), sent(tau.server.requests[first:]))
        )

    (tau_failed, tau_stopped, tau_entries, tau_sent), (pi_failed, pi_stopped, pi_entries, pi_sent) = outcomes
    assert tau_failed == pi_failed
    assert tau_stopped == pi_stopped
    assert tau_entries == pi_entries
    assert tau_sent == pi_sent
    # A failed summary: reported, nothing written, the run goes on with the whole conversation.
    end = tau_failed.index(["compaction_start", "threshold"]) + 1
    assert tau_failed[end] == [
        "compaction_end",
        "threshold",
        False,
        False,
        "Auto-compaction failed: Summarization failed: 400 no summary today",
        None,
    ]
    assert tau_failed[end + 1 :] == [
        ["turn_start"],
        ["message_end", "assistant", "toolUse"],
        ["message_end", "toolResult"],
        ["turn_end"],
        ["turn_start"],
        ["message_end", "assistant", "stop"],
        ["turn_end"],
        ["agent_end"],
    ]
    assert "compaction" not in [e[0] for e in tau_entries]
    assert tau_sent[3][:2] == ["user: Get ready.", "assistant: Ready."]
    # Stopped while summarising: compaction_end aborted, then the run ends aborted, nothing sent.
    end = tau_stopped.index(["compaction_start", "threshold"]) + 1
    assert tau_stopped[end:] == [
        ["compaction_end", "threshold", True, False, None, None],
        ["turn_start"],
        ["message_end", "assistant", "aborted"],
        ["turn_end"],
        ["agent_end"],
    ]
    assert tau_sent[-1][0].startswith("user: <conversation>")  # the summary request was the last
