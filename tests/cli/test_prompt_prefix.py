"""A prefix that never breaks (issue #31): the real ``tau`` against the fake server, for each scenario
of ``bench/bench_cache_reuse.py``. After a change of tools, skills, an extension's section or the
thinking level, each request extends the one before it byte for byte (cache order, cache markers
left out). With the Anthropic compat flags the changes go as pi 1.6 sends them; the real pi 1.6
then continues tau's file and sends tau's last request again, with only its own additions after it."""

from __future__ import annotations

import itertools
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pi16 import pi16_command, run_pi16
from tau_command import TauCommand, tau_command

from tau.modes.rpc_client import RpcClient
from tau.testing.fake_llm import RecordedRequest, ScriptedToolCall, ScriptedUsage, Turn, text_turn
from tau.testing.fake_llm.prefix import first_difference, prefix_stats, strip_cache_markers

FLAGS = {
    "forceAdaptiveThinking": True,
    "supportsMidConvoSystemMessages": True,
    "supportsMidConvoToolChanges": True,
    "supportsMidConvoEffort": True,
}

TOOLS_EXTENSION = """
def setup(tau):
    turns = [0]

    @tau.on("turn_end")
    def changed(event, ctx):
        turns[0] += 1
        if turns[0] == 2:
            tau.set_active_tools([n for n in tau.get_active_tools() if n != "write"])
"""

SECTION_EXTENSION = """
from pathlib import Path

def setup(tau):
    @tau.on("before_agent_start")
    def status(event, ctx):
        runs = Path(".runs")
        run = int(runs.read_text()) + 1 if runs.exists() else 1
        runs.write_text(str(run))
        event.system_prompt_options.sections["task_status"] = f"Run {run}: {run} tasks done."
"""

SKILL = "---\nname: notes\ndescription: Keep notes of the work.\n---\nWrite notes to NOTES.md.\n"


def configure(tau: TauCommand, *, flags: bool) -> list[str]:
    """Point tau's models.json at the fake server's Anthropic (``flags``) or OpenAI-compatible
    endpoint; the model arguments to use."""
    if flags:
        provider: dict[str, Any] = {
            "baseUrl": tau.server.url(),
            "api": "anthropic-messages",
            "apiKey": "local-key",
            "models": [
                {
                    "id": "claude-opus-4-7",
                    "reasoning": True,
                    "contextWindow": 100000,
                    "maxTokens": 4096,
                    "compat": FLAGS,
                }
            ],
        }
        model = "claude-opus-4-7"
    else:
        provider = {
            "baseUrl": tau.server.url("/v1"),
            "api": "openai-completions",
            "apiKey": "local-key",
            "models": [{"id": "fake-model", "reasoning": True, "contextWindow": 100000, "maxTokens": 4096}],
        }
        model = "fake-model"
    (tau.agent_dir / "models.json").write_text(json.dumps({"providers": {"local": provider}}))
    return ["--provider", "local", "--model", model]


@pytest.fixture
def tau(tmp_path: Path) -> Iterator[TauCommand]:
    yield from tau_command(tmp_path)


def bash_turns(count: int) -> list[Turn]:
    return [Turn(tool_calls=[ScriptedToolCall("bash", {"command": "echo turn"})]) for _ in range(count)]


def run(tau: TauCommand, model: list[str], *args: str, tools: int = 2) -> None:
    tau.server.add(*bash_turns(tools), text_turn("Done."))
    done = tau.run(*model, *args)
    assert done.returncode == 0, done.stderr


def assert_prefix_kept(requests: list[RecordedRequest]) -> None:
    for before, after in itertools.pairwise(requests):
        difference = first_difference(before, after)
        assert difference is None, difference
    stats = prefix_stats(requests)
    assert stats.uncached == stats.ideal


def texts(value: Any) -> str:
    """Every string in a request body, one per line (the texts the model reads)."""
    if isinstance(value, dict):
        return "\n".join(texts(v) for v in value.values())
    if isinstance(value, list):
        return "\n".join(texts(v) for v in value)
    return value if isinstance(value, str) else ""


def extension(tau: TauCommand, name: str, source: str) -> list[str]:
    path = tau.work.parent / name
    path.write_text(source)
    return ["-e", str(path)]


@pytest.mark.parametrize("flags", [True, False], ids=["flags", "plain"])
def test_tools_changed_by_an_extension_at_turn_end_keep_the_prefix_from_the_next_request(
    tau: TauCommand, flags: bool
) -> None:
    model = configure(tau, flags=flags)
    run(tau, model, *extension(tau, "tools.py", TOOLS_EXTENSION), "-p", "go", tools=4)
    requests = tau.server.requests
    assert_prefix_kept(requests)
    # turn_end of the second turn removed "write": the third request already says so.
    third, second = json.dumps(requests[2].body), json.dumps(requests[1].body)
    assert ("tool_removal" in third) if flags else ("Tools no longer available" in texts(requests[2].body))
    assert "tool_removal" not in second and "no longer available" not in texts(requests[1].body)


@pytest.mark.parametrize("flags", [True, False], ids=["flags", "plain"])
def test_a_skill_added_between_runs_is_appended(tau: TauCommand, flags: bool) -> None:
    model = configure(tau, flags=flags)
    run(tau, model, "-p", "go")
    skill = tau.agent_dir / "skills" / "notes"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL)
    run(tau, model, "-c", "-p", "more")
    assert_prefix_kept(tau.server.requests)
    assert 'Updated system prompt section "skills"' in texts(tau.server.requests[-1].body)


@pytest.mark.parametrize("flags", [True, False], ids=["flags", "plain"])
def test_an_extension_section_that_changes_each_run_is_appended(tau: TauCommand, flags: bool) -> None:
    model = configure(tau, flags=flags)
    ext = extension(tau, "section.py", SECTION_EXTENSION)
    run(tau, model, *ext, "-p", "go")
    run(tau, model, *ext, "-c", "-p", "more")
    run(tau, model, *ext, "-c", "-p", "and more")
    requests = tau.server.requests
    assert_prefix_kept(requests)
    assert "<task_status>\nRun 1: 1 tasks done.\n</task_status>" in texts(requests[0].body)
    assert 'Updated system prompt section "task_status":\n\n<task_status>\nRun 3' in texts(requests[-1].body)


def test_a_thinking_level_change_travels_in_a_message_with_the_flags(tau: TauCommand) -> None:
    model = configure(tau, flags=True)
    run(tau, model, "--thinking", "high", "-p", "go")
    run(tau, model, "--thinking", "low", "-c", "-p", "more")
    requests = tau.server.requests
    assert_prefix_kept(requests)
    last = requests[-1].body
    assert last["output_config"] == {"effort": "low"} and last["thinking"]["type"] == "adaptive"
    efforts = [m["output_config"]["effort"] for m in last["messages"] if "output_config" in m]
    assert efforts[0] == "high" and efforts[-1] == "low"


def test_a_bad_section_name_is_reported_and_left_out(tau: TauCommand) -> None:
    model = configure(tau, flags=True)
    source = "def setup(tau):\n    tau.on('before_agent_start', lambda e, c: e.system_prompt_options.sections.update({'Bad Name': 'x'}))\n"
    tau.server.add(text_turn("Done."))
    done = tau.run(*model, *extension(tau, "bad.py", source), "-p", "go")
    assert done.returncode == 0, done.stderr
    assert "Invalid system prompt section name 'Bad Name'" in done.stderr
    assert "Bad Name" not in json.dumps(tau.server.requests[0].body)


# -- pi 1.6 continues the file tau wrote ----------------------------------------------------------


def comparable(body: dict[str, Any]) -> dict[str, Any]:
    """A request as the cache sees it, without key order or cache markers."""
    out: dict[str, Any] = strip_cache_markers(body)
    return out


def test_pi16_continuing_tau_file_sends_tau_last_request_then_its_own_additions(tau: TauCommand) -> None:
    pi = pi16_command()
    model = configure(tau, flags=True)
    run(tau, model, *extension(tau, "tools.py", TOOLS_EXTENSION), "--thinking", "high", "-p", "go", tools=3)
    [session] = tau.session_files()
    tau_last = comparable(tau.server.requests[-1].body)
    tau.server.add(text_turn("From pi."))
    pi_dir = tau.work.parent / "pi-agent"
    run_pi16(pi, tau, pi_dir, "--thinking", "high", "--session", str(session), "-p", "next", model=model)
    pi_request = comparable(tau.server.requests[-1].body)
    assert pi_request["model"] == tau_last["model"]
    assert pi_request["system"] == tau_last["system"]
    assert pi_request["tools"] == tau_last["tools"]
    assert (
        pi_request["thinking"] == tau_last["thinking"]
        and pi_request["output_config"] == tau_last["output_config"]
    )
    sent = tau_last["messages"][:-1]  # without the trailing effort message
    assert pi_request["messages"][: len(sent)] == sent
    # Then tau's reply, pi's prompt, and pi's own prompt sections and tools as one appended update.
    after = pi_request["messages"][len(sent) :]
    assert [m["role"] for m in after] == ["system", "assistant", "user", "system", "system"]
    kinds = {block["type"] for block in after[3]["content"]}
    assert kinds == {"text", "tool_addition"}  # pi redefines its own tools (a new definition replaces)
    assert after[-1] == {"role": "system", "content": [], "output_config": {"effort": "high"}}


def test_the_task_status_example_appends_its_section_when_todo_changes(tau: TauCommand) -> None:
    model = configure(tau, flags=False)
    example = [
        "-e",
        str(Path(__file__).resolve().parents[2] / "examples" / "extensions" / "task_status_section.py"),
    ]
    (tau.work / "TODO.md").write_text("- [ ] parse\n")
    run(tau, model, *example, "-p", "go", tools=1)
    (tau.work / "TODO.md").write_text("- [x] parse\n- [ ] test\n")
    run(tau, model, *example, "-c", "-p", "next", tools=1)
    requests = tau.server.requests
    assert_prefix_kept(requests)
    assert "<task_status>\nOpen tasks in TODO.md (1):\n- parse\n</task_status>" in texts(requests[0].body)
    assert 'Updated system prompt section "task_status"' in texts(requests[-1].body)
    assert "- test" in texts(requests[-1].body) and "- test" not in texts(requests[0].body)


@pytest.mark.parametrize("flags", [True, False], ids=["flags", "plain"])
def test_a_compaction_asks_for_its_summary_as_the_cached_conversation_plus_an_instruction(
    tau: TauCommand, flags: bool
) -> None:
    model = configure(tau, flags=flags)
    models = json.loads((tau.agent_dir / "models.json").read_text())
    models["providers"]["local"]["models"][0]["contextWindow"] = 40_000
    (tau.agent_dir / "models.json").write_text(json.dumps(models))
    # Compaction starts at 40,000 - 16,384 tokens, leaving the summary room beside the conversation.
    (tau.agent_dir / "settings.json").write_text(json.dumps({"compaction": {"keepRecentTokens": 40}}))
    tau.server.add(*bash_turns(6), Turn(text="Done.", usage=ScriptedUsage(input=24_000, output=50)))
    tau.server.add(text_turn("## Goal\nRun the checks.\n\n## Progress\n### Done\n- [x] ran them"))
    done = tau.run(*model, "-p", "go")
    assert done.returncode == 0, done.stderr
    *turns, summary = tau.server.requests
    assert_prefix_kept([*turns, summary])  # the summary request only appends to the last turn's
    assert "Stop the task here" in texts(summary.body["messages"][-2:])
    [session] = tau.session_files()
    [entry] = [json.loads(line) for line in session.read_text().splitlines() if '"type":"compaction"' in line]
    assert entry["summary"].startswith("## Goal\nRun the checks.")


def test_tau_continuing_a_pi16_file_sends_pi_last_request_then_its_own_additions(tau: TauCommand) -> None:
    pi = pi16_command()
    model = configure(tau, flags=True)
    tau.server.add(*bash_turns(2), text_turn("Done."))
    run_pi16(pi, tau, tau.work.parent / "pi-agent", "--thinking", "high", "-p", "go", model=model)
    [session] = sorted((tau.work.parent / "pi-agent" / "sessions").rglob("*.jsonl"))
    pi_last = comparable(tau.server.requests[-1].body)
    run(tau, model, "--thinking", "high", "--session", str(session), "-p", "next", tools=0)
    tau_request = comparable(tau.server.requests[-1].body)
    assert tau_request["system"] == pi_last["system"] and tau_request["tools"] == pi_last["tools"]
    assert tau_request["thinking"] == pi_last["thinking"]
    sent = pi_last["messages"][:-1]  # without the trailing effort message
    assert tau_request["messages"][: len(sent)] == sent
    # Then pi's reply, tau's prompt and tau's own sections and tools as one appended update.
    after = tau_request["messages"][len(sent) :]
    assert [m["role"] for m in after] == ["system", "assistant", "user", "system", "system"]
    assert 'Updated system prompt section "preamble"' in after[3]["content"][0]["text"]


def test_a_call_to_a_tool_removed_mid_run_is_refused_while_it_stays_declared(tau: TauCommand) -> None:
    model = configure(tau, flags=False)
    write = Turn(tool_calls=[ScriptedToolCall("write", {"path": "x.txt", "content": "x"})])
    tau.server.add(*bash_turns(2), write, text_turn("Done."))
    done = tau.run(*model, *extension(tau, "tools.py", TOOLS_EXTENSION), "-p", "go")
    assert done.returncode == 0, done.stderr
    requests = tau.server.requests
    assert_prefix_kept(requests)
    last = requests[-1].body
    assert "write" in [t["function"]["name"] for t in last["tools"]]  # still declared: the prefix stays
    assert {
        "role": "tool",
        "content": "Tool write not found",
        "tool_call_id": last["messages"][-1]["tool_call_id"],
    } in last["messages"]
    assert not (tau.work / "x.txt").exists()


@pytest.mark.parametrize("flags", [True, False], ids=["flags", "plain"])
async def test_a_fork_and_a_manual_compaction_over_rpc_keep_the_prefix(tau: TauCommand, flags: bool) -> None:
    model = configure(tau, flags=flags)
    # Little to keep verbatim, so the manual compaction has something to summarise.
    (tau.agent_dir / "settings.json").write_text(json.dumps({"compaction": {"keepRecentTokens": 10}}))
    tau.server.add(*bash_turns(1), text_turn("One."), *bash_turns(1), text_turn("Two."), text_turn("Three."))
    tau.server.add(text_turn("## Goal\nNotes."), text_turn("Four."))
    command = [sys.executable, "-m", "tau", "--mode", "rpc", *model]
    async with RpcClient(command, cwd=str(tau.work), env=tau.env) as rpc:
        await rpc.call("prompt", message="one")
        await rpc.wait_for("agent_settled", timeout=30)
        await rpc.call("prompt", message="two")
        await rpc.wait_for("agent_settled", timeout=30)
        [_, second] = (await rpc.call("get_fork_messages"))["messages"]
        await rpc.call("fork", entryId=second["entryId"])  # back to before "two"
        await rpc.call("prompt", message="three")
        await rpc.wait_for("agent_settled", timeout=30)
        await rpc.call("compact", timeout=30)
        await rpc.call("prompt", message="four")
        await rpc.wait_for("agent_settled", timeout=30)
    one_done, _, _, three, summary, four = tau.server.requests[1:]
    assert first_difference(one_done, three) is None  # the fork goes on from the first run's request
    assert first_difference(three, summary) is None  # the summary request only appends an instruction
    assert "Three." in texts(summary.body) and "Two." not in texts(three.body)
    assert "## Goal\nNotes." in texts(four.body)
