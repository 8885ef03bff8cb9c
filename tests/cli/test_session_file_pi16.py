"""The whole session file of one scripted RPC run, tau's and pi 1.6's, entry by entry (issue #32):
two replies retried after a 500 and an overloaded error, a model change, a thinking level change,
a manual compaction, a label and a move in the tree with a branch summary, then one more prompt.
Ids become their order of appearance and times are left out; everything else must be the same,
but for what ``different_on_purpose`` names (as pi-compatibility.md says). The prompts' events
and the conversation each request carries on are compared too.
pi comes from ``.ci/pi16`` (installed by ``scripts/check``) or ``$TAU_TEST_PI16_DIR``."""

from __future__ import annotations

import asyncio
import json
import sys
import textwrap
from pathlib import Path
from typing import Any

from chat_messages import conversation_messages
from pi16 import pi16_command
from tau_command import TauCommand

from tau.modes.rpc_client import RpcClient
from tau.testing.fake_llm import Fault, RecordedRequest, ScriptedUsage, Turn

MODEL = ["--provider", "local", "--model", "fake-model"]
SETTINGS = {
    "retry": {"baseDelayMs": 2},
    "compaction": {"reserveTokens": 1000, "keepRecentTokens": 10},
    # Switching from a model that cannot think: both take this level (without it, both keep "off").
    "defaultThinkingLevel": "high",
}
OVERLOADED = {"error": {"type": "overloaded_error", "message": "Overloaded"}}
SUMMARY = "## Goal\nAnswer the questions."
BRANCH_SUMMARY = "## Goal\nThe third question, left behind."

TAU_EXTENSION = """
def setup(tau):
    @tau.register_command("mark", description="Label an entry")
    async def mark(args, ctx):
        entry_id, label = args.split(" ", 1)
        tau.set_label(entry_id, label)

    @tau.register_command("goto", description="Go to an entry, summarising the branch left")
    async def goto(args, ctx):
        await ctx.navigate_tree(args.strip(), summarize=True)
"""

PI_EXTENSION = """
export default function (pi: any) {
  pi.registerCommand("mark", {
    description: "Label an entry",
    handler: async (args: string, ctx: any) => {
      const [entryId, ...label] = args.split(" ");
      pi.setLabel(entryId, label.join(" "));
    },
  });
  pi.registerCommand("goto", {
    description: "Go to an entry, summarising the branch left",
    handler: async (args: string, ctx: any) => {
      await ctx.navigateTree(args.trim(), { summarize: true });
    },
  });
}
"""


def setup(tau: TauCommand, tmp_path: Path) -> tuple[Path, Path, Path]:
    """A second model and a reasoning one beside the fake one; settings and extensions for both."""
    pi_dir = tmp_path / "pi"
    pi_dir.mkdir()
    path = tau.agent_dir / "models.json"
    models = json.loads(path.read_text())
    models["providers"]["local"]["models"].append(
        {"id": "fake-thinker", "contextWindow": 100000, "maxTokens": 4096, "reasoning": True}
    )
    path.write_text(json.dumps(models))
    for folder in (tau.agent_dir, pi_dir):
        (folder / "settings.json").write_text(json.dumps(SETTINGS))
        (folder / "models.json").write_text(path.read_text())
    tau_ext = tmp_path / "script.py"
    tau_ext.write_text(textwrap.dedent(TAU_EXTENSION))
    pi_ext = tmp_path / "script.ts"
    pi_ext.write_text(textwrap.dedent(PI_EXTENSION))
    return pi_dir, tau_ext, pi_ext


def records(session_file: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(session_file).read_text().splitlines()]


def entry_id(session_file: str, role: str, text: str) -> str:
    for entry in records(session_file):
        message = entry.get("message") or {}
        if entry["type"] == "message" and message.get("role") == role and text in json.dumps(message):
            return str(entry["id"])
    raise AssertionError(f"no {role} entry with {text!r}")


async def until(check: Any) -> None:
    for _ in range(200):
        if check():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("timed out")


def conversation(requests: list[RecordedRequest]) -> list[list[str]]:
    """The requests that carry the conversation on (not the summaries'), as role and text; the
    system prompt left out, a summary's wrapper (in tau's own words) as ``<summary>``."""
    out = []
    for request in requests:
        messages = []
        for message, text in conversation_messages(request):
            messages.append(
                f"{message['role']}: {text if text.startswith(('Question', 'Answer')) else '<summary>'}"
            )
        if messages and messages[-1].startswith("user: Question"):
            out.append(messages)
    return out


def kinds(events: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in events if e["type"] != "message_update"]


async def script(tau: TauCommand, rpc: RpcClient) -> tuple[str, list[list[str]]]:
    """The scripted run; the session file it wrote and the events of its prompts."""
    seen: list[list[str]] = []
    state = await rpc.call("get_state")
    session_file = state["sessionFile"]
    tau.server.add(
        Turn(fault=Fault("status", status=500)), Turn(text="Answer one.", usage=ScriptedUsage(input=200))
    )
    seen.append(kinds(await rpc.prompt("Question one.")))
    await rpc.call("set_model", provider="local", modelId="fake-thinker")
    await rpc.call("set_thinking_level", level="low")
    tau.server.add(
        Turn(fault=Fault("status", status=529, body=OVERLOADED)),
        Turn(text="Answer two.", usage=ScriptedUsage(input=300)),
    )
    seen.append(kinds(await rpc.prompt("Question two.")))
    tau.server.add(Turn(text=SUMMARY))
    await rpc.call("compact")
    tau.server.add(Turn(text="Answer three.", usage=ScriptedUsage(input=400)))
    seen.append(kinds(await rpc.prompt("Question three.")))
    first = entry_id(session_file, "assistant", "Answer one.")
    await rpc.call("prompt", message=f"/mark {first} the first answer")
    await until(lambda: any(e["type"] == "label" for e in records(session_file)))
    second = entry_id(session_file, "assistant", "Answer two.")
    tau.server.add(Turn(text=BRANCH_SUMMARY))
    await rpc.call("prompt", message=f"/goto {second}")
    await until(lambda: any(e["type"] == "branch_summary" for e in records(session_file)))
    tau.server.add(Turn(text="Answer four.", usage=ScriptedUsage(input=500)))
    seen.append(kinds(await rpc.prompt("Question four.")))
    assert tau.server.pending == 0
    return str(session_file), seen


def normalised(session_file: str) -> list[dict[str, Any]]:
    """The entries with ids as their order of appearance, without times, and with what
    ``different_on_purpose`` names reduced to what both must share."""
    lines = records(session_file)
    ids: dict[str, str] = {}
    for entry in lines:
        if "id" in entry:
            ids[entry["id"]] = f"#{len(ids)}"

    def clean(value: Any) -> Any:
        if isinstance(value, dict):
            return {
                k: clean(v) for k, v in value.items() if k not in ("timestamp", "durationMs", "responseId")
            }
        if isinstance(value, list):
            return [clean(v) for v in value]
        if isinstance(value, str) and value in ids:
            return ids[value]
        return value

    out = [different_on_purpose(clean(entry)) for entry in lines]
    out[0].pop("cwd", None)
    return out


def different_on_purpose(entry: dict[str, Any]) -> dict[str, Any]:
    """What differs on purpose (pi-compatibility.md), reduced to its common part:

    - the system prompt's sections and the tools' descriptions are in tau's own words; the same
      sections and the same tools with the same parameters are recorded;
    - pi's built-in tools ask for constrained sampling (``constrainedSampling``), tau's do not and
      close their schemas (``additionalProperties: false``) instead;
    - a provider error is one line with the server's message (``500 fake server error 500``) where
      pi writes the status and the raw body; the status comes first in both;
    - a compaction asks for its summary as the conversation's own cached request (issue #31), so a
      split turn gets one summary, not pi's history and turn-opening parts; a branch summary's
      preamble is in tau's words. The model's summary text is in both.
    """
    system = entry.get("systemMessage")  # a compaction's: the system prompt it was made under
    if isinstance(system, dict):
        different_on_purpose({"type": "message", "message": system})
    message = entry.get("message")
    if isinstance(message, dict) and message.get("role") == "system":
        if "sections" in message:
            message["sections"] = sorted(message["sections"])
        for key in ("tools", "toolsAdded"):
            if key in message:
                message[key] = [
                    {"name": tool["name"], "parameters": sorted(tool["parameters"]["properties"])}
                    for tool in message[key]
                ]
    if isinstance(message, dict) and message.get("errorMessage"):
        message["errorMessage"] = message["errorMessage"][:3]
    if entry["type"] == "compaction":
        assert entry["summary"].endswith(SUMMARY)
        entry["summary"] = SUMMARY
    if entry["type"] == "branch_summary":
        assert entry["summary"].endswith(BRANCH_SUMMARY)
        entry["summary"] = BRANCH_SUMMARY
    return entry


async def test_the_session_file_of_a_scripted_run_matches_pi16_entry_by_entry(
    tau: TauCommand, tmp_path: Path
) -> None:
    pi_dir, tau_ext, pi_ext = setup(tau, tmp_path)
    pi_env = tau.env | {"PI_OFFLINE": "1", "PI_CODING_AGENT_DIR": str(pi_dir), "HOME": str(pi_dir)}
    files, events, sent = [], [], []
    for command, env in (
        ([sys.executable, "-m", "tau", "--mode", "rpc", *MODEL, "-e", str(tau_ext)], tau.env),
        ([*pi16_command(), "--mode", "rpc", *MODEL, "-e", str(pi_ext)], pi_env),
    ):
        start = len(tau.server.requests)
        async with RpcClient(command, cwd=str(tau.work), env=env) as rpc:
            session_file, seen = await script(tau, rpc)
        sent.append(conversation(tau.server.requests[start:]))
        files.append(session_file)
        events.append(seen)
    assert events[0] == events[1]
    assert sent[0] == sent[1]
    # Back on the branch before the compaction, with the summary of the branch left.
    assert sent[0][-1] == [
        "user: Question one.",
        "assistant: Answer one.",
        "user: Question two.",
        "assistant: Answer two.",
        "user: <summary>",
        "user: Question four.",
    ]
    assert events[0][1][-11:] == [
        "agent_end",
        "auto_retry_start",
        "entry_appended",  # the context_edit taking the overloaded reply out
        "agent_start",
        "turn_start",
        "message_start",
        "message_end",
        "auto_retry_end",
        "turn_end",
        "agent_end",
        "agent_settled",
    ]
    tau_entries, pi_entries = (normalised(f) for f in files)
    assert [e["type"] for e in tau_entries] == [e["type"] for e in pi_entries]
    assert tau_entries == pi_entries
