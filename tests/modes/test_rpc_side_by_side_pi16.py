"""Every RPC command pi 1.6 documents (docs/rpc-commands.md), sent to ``tau --mode rpc`` and to pi
1.6's ``--mode rpc`` side by side (each its own fake server, agent dir and folder): the responses
must have the same keys, types, success and error wording. Values that differ by nature (ids,
paths, times, the prompt's prose) are not compared; what tau adds on purpose (get_state's
``sandbox``, the ``dropped`` queue of a session change) and the built-in tools' schemas (compared
by the request parity tests) are set aside, each named below."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

from rpc_side_by_side import (
    Side,
    add_turns,
    differences,
    kinds,
    line_shape,
    response_shape,
    streamed,
    two_sides,
)

from tau.testing.fake_llm import PIXEL_PNG, Fault, ScriptedToolCall, ScriptedUsage, Turn

JsonDict = dict[str, Any]


def two_models(models: JsonDict) -> None:
    """A second model, with reasoning: cycle_model and the thinking levels have somewhere to go."""
    models["providers"]["local"]["models"].append(
        {"id": "second", "contextWindow": 100000, "maxTokens": 4096, "reasoning": True}
    )


def comparable(response: JsonDict) -> JsonDict:
    """``response_shape`` without what tau adds on purpose or what other tests compare: get_state's
    ``sandbox`` (pi-compatibility.md), and the schemas of the tools a system message adds (their
    names stay)."""
    shaped = response_shape(response)
    data = shaped.get("data")
    if isinstance(data, dict):
        data.pop("sandbox", None)

    def tool_names(value: Any) -> Any:
        if isinstance(value, dict):
            return {
                key: (len(item) if key == "toolsAdded" else tool_names(item)) for key, item in value.items()
            }
        if isinstance(value, list):
            return [tool_names(item) for item in value]
        return value

    return tool_names(shaped)


PerSide = dict[str, JsonDict]


def runs_merged(lines: list[JsonDict]) -> list[JsonDict]:
    """``lines`` with each run of ``bash_execution_update`` kept as its first line: how a command's
    output is cut into pieces is the operating system's doing."""
    return [
        line
        for i, line in enumerate(lines)
        if not (line["type"] == "bash_execution_update" and i and lines[i - 1]["type"] == line["type"])
    ]


async def both(tau: Side, pi: Side, command: JsonDict, per_side: PerSide | None = None) -> PerSide:
    """Send ``command`` to each (with ``per_side[name]``'s fields laid over it) and return the answers."""
    answers = {}
    for side in (tau, pi):
        fields = (per_side or {}).get(side.name, {})
        answers[side.name] = await side.rpc.send({**command, **fields}, timeout=30)
    return answers


async def same(tau: Side, pi: Side, command: JsonDict, per_side: PerSide | None = None) -> PerSide:
    """``both``, asserting the two answers have the same shape."""
    answers = await both(tau, pi, command, per_side)
    found = differences(comparable(answers["tau"]), comparable(answers["pi"]))
    assert not found, f"{json.dumps(command)}: " + "; ".join(found)
    return answers


def assert_same_lines(tau: Side, pi: Side) -> None:
    """Every line each wrote, responses and events, in order: the same kinds and shapes."""
    ours, theirs = runs_merged(streamed(tau.rpc.lines)), runs_merged(streamed(pi.rpc.lines))
    assert kinds(ours) == kinds(theirs)
    for index, (line, other) in enumerate(zip(ours, theirs, strict=True)):
        found = differences(line_shape(line), line_shape(other))
        assert not found, f"line {index} ({kinds([line])[0]}): " + "; ".join(found)


async def test_each_command_answers_with_pi16s_shape(tmp_path: Path) -> None:
    async with two_sides(tmp_path, models=two_models, files={"a.txt": "a\n"}) as (tau, pi):
        # Before anything was said.
        for kind in ("get_state", "get_messages", "get_entries", "get_tree", "get_last_assistant_text"):
            await same(tau, pi, {"type": kind})
        await same(tau, pi, {"type": "export_html"})  # nothing to export yet: the same words
        await same(tau, pi, {"type": "clone"})  # nothing saved yet: the same words
        add_turns(
            tau,
            pi,
            Turn(text="reading", tool_calls=[ScriptedToolCall("read", {"path": "a.txt"})]),
            Turn(text="done", usage=ScriptedUsage(input=50, output=10)),
        )
        for side in (tau, pi):
            await side.rpc.prompt("read a.txt")
        for kind in (
            "get_state",
            "get_messages",
            "get_entries",
            "get_tree",
            "get_session_stats",
            "get_fork_messages",
            "get_last_assistant_text",
            "get_commands",
            "get_available_models",
            "get_available_thinking_levels",
            "cycle_model",
            "get_available_thinking_levels",
            "cycle_thinking_level",
            "get_state",
            "abort",
            "abort_retry",
            "abort_bash",
            "clear_queue",
        ):
            await same(tau, pi, {"type": kind})
        await same(tau, pi, {"type": "set_model", "provider": "local", "modelId": "fake-model"})
        await same(tau, pi, {"type": "cycle_thinking_level"})  # a model without reasoning: null
        await same(tau, pi, {"type": "set_thinking_level", "level": "high"})
        await same(tau, pi, {"type": "set_steering_mode", "mode": "all"})
        await same(tau, pi, {"type": "set_follow_up_mode", "mode": "all"})
        await same(tau, pi, {"type": "set_auto_compaction", "enabled": False})
        await same(tau, pi, {"type": "set_auto_retry", "enabled": False})
        await same(tau, pi, {"type": "set_session_name", "name": "  named  "})
        state = await same(tau, pi, {"type": "get_state"})
        for side in (tau, pi):
            data = state[side.name]["data"]
            assert (data["steeringMode"], data["followUpMode"], data["sessionName"]) == (
                "all",
                "all",
                "named",
            )
            assert (data["autoCompactionEnabled"], data["thinkingLevel"]) == (False, "off")
        await same(tau, pi, {"type": "bash", "command": "echo hi; exit 3"})
        await same(tau, pi, {"type": "bash", "command": "seq 1 100000", "excludeFromContext": True})
        await same(
            tau,
            pi,
            {"type": "export_html"},
            {side.name: {"outputPath": str(side.root / "page.html")} for side in (tau, pi)},
        )
        add_turns(tau, pi, Turn(text="## Goal\nsummary"))
        compacted = await same(tau, pi, {"type": "compact", "customInstructions": "keep it short"})
        stats = await same(tau, pi, {"type": "get_session_stats"})
        # The numbers too, not only their shape: counts, tokens and cost (the context estimate
        # counts the prompt's prose, which is each program's own).
        numbers = [
            {
                k: v
                for k, v in stats[name]["data"].items()
                if k not in ("sessionFile", "sessionId", "contextUsage")
            }
            for name in ("tau", "pi")
        ]
        assert numbers[0] == numbers[1]
        assert compacted["tau"]["error"] == "Nothing to compact (session too small)"  # pi's words
        forks = await same(tau, pi, {"type": "get_fork_messages"})
        await same(
            tau,
            pi,
            {"type": "fork"},
            {name: {"entryId": forks[name]["data"]["messages"][0]["entryId"]} for name in ("tau", "pi")},
        )
        await same(tau, pi, {"type": "get_entries"})
        await same(tau, pi, {"type": "clone"})  # the fork has nothing answered yet: not saved
        files = {side.name: str(side.session_files()[0]) for side in (tau, pi)}
        await same(
            tau, pi, {"type": "switch_session"}, {name: {"sessionPath": files[name]} for name in files}
        )
        await same(tau, pi, {"type": "clone"})
        await same(tau, pi, {"type": "get_entries"})
        await same(tau, pi, {"type": "new_session", "parentSession": files["tau"]})
        await same(tau, pi, {"type": "get_state"})
    assert_same_lines(tau, pi)
    # What the commands saved as settings (set_model, the queue modes, ...): the same.
    saved = {}
    for side in (tau, pi):
        path = side.agent_dir / "settings.json"
        saved[side.name] = json.loads(path.read_text()) if path.exists() else None
    assert saved["tau"] == saved["pi"]


async def test_commands_pi16_refuses_are_refused_in_its_words(tmp_path: Path) -> None:
    async with two_sides(tmp_path) as (tau, pi):
        add_turns(tau, pi, Turn(text="hello"))
        for side in (tau, pi):
            await side.rpc.prompt("hi")
        refused = [
            {"type": "no_such_command"},
            {"type": "set_model", "provider": "nope", "modelId": "x"},
            {"type": "get_entries", "since": "nope"},
            {"type": "fork", "entryId": "nope"},
            {"type": "set_session_name", "name": "   "},
        ]
        entries = await both(tau, pi, {"type": "get_entries"})
        not_a_user_message = {
            name: {"entryId": entries[name]["data"]["entries"][-1]["id"]} for name in ("tau", "pi")
        }
        answers = [await same(tau, pi, command) for command in refused]
        answers.append(await same(tau, pi, {"type": "fork"}, not_a_user_message))
        errors = [answer["tau"]["error"] for answer in answers]
        assert errors == [
            "Unknown command: no_such_command",
            "Model not found: nope/x",
            "Entry not found: nope",
            "Invalid entry ID for forking",
            "Session name cannot be empty",
            "Invalid entry ID for forking",
        ]
        # A prompt while a reply streams, without streamingBehavior.
        add_turns(
            tau,
            pi,
            Turn(text="slow slow slow", chunk_size=2, fault=Fault("stall", after_events=3, seconds=2)),
        )
        for side in (tau, pi):
            await side.rpc.call("prompt", message="go")
            await side.rpc.wait_for("message_update")
        busy = await same(tau, pi, {"type": "prompt", "message": "again"})
        assert busy["tau"]["success"] is False
        for side in (tau, pi):
            await side.rpc.wait_for("agent_settled")
        # A line that is not JSON: a response without an id, command "parse".
        for side in (tau, pi):
            await side.rpc.write_line("{not json")
        parsed = {}
        for side in (tau, pi):
            event = await side.rpc.next_event(timeout=30)
            assert event is not None
            parsed[side.name] = event
        # The parser's own words after the prefix differ by nature (Python's json, V8's JSON.parse).
        prefix = "Failed to parse command: "
        assert all(answer["error"].startswith(prefix) for answer in parsed.values())
        assert {k: v for k, v in parsed["tau"].items() if k != "error"} == {
            "type": "response",
            "command": "parse",
            "success": False,
        }
        assert {k: v for k, v in parsed["pi"].items() if k != "error"} == {
            k: v for k, v in parsed["tau"].items() if k != "error"
        }
        for side in (tau, pi):
            side.rpc.lines.pop()  # the parse answers: their words differ by nature (checked above)
        assert_same_lines(tau, pi)


# Malformed commands: where pi 1.6 refuses with words of its own, tau uses the same words; where it
# reads a missing field as ``undefined`` (a JavaScript TypeError, or a silent success that stores
# ``undefined``), tau refuses with a line naming the field (pi-compatibility.md).
SAME_WORDS = [
    ({"type": "fork"}, "Invalid entry ID for forking"),
    ({"type": "fork", "entryId": 5}, "Invalid entry ID for forking"),
    ({"type": "get_entries", "since": 5}, "Entry not found: 5"),
]
TAU_NAMES_THE_FIELD = [
    # (command, tau's refusal, what pi 1.6 answers: an error starting so, or None for a success)
    ({"type": "prompt"}, "prompt needs a string field 'message'", "Cannot read properties of undefined"),
    ({"type": "steer"}, "steer needs a string field 'message'", "Cannot read properties of undefined"),
    (
        {"type": "follow_up"},
        "follow_up needs a string field 'message'",
        "Cannot read properties of undefined",
    ),
    (
        {"type": "set_model"},
        "set_model needs a string field 'provider'",
        "Model not found: undefined/undefined",
    ),
    ({"type": "set_session_name"}, "set_session_name needs a string field 'name'", "Cannot read properties"),
    (
        {"type": "switch_session"},
        "switch_session needs a string field 'sessionPath'",
        "Cannot read properties",
    ),
    (
        {"type": "set_thinking_level", "level": "bogus"},
        "Unknown thinking level: bogus. Valid values: off, minimal, low, medium, high, xhigh, max",
        None,
    ),
    (
        {"type": "set_steering_mode", "mode": "bogus"},
        "Unknown mode: bogus (use 'all' or 'one-at-a-time')",
        None,
    ),
    ({"type": "set_follow_up_mode"}, "set_follow_up_mode needs a string field 'mode'", None),
    ({"type": "set_auto_compaction"}, "set_auto_compaction needs a boolean field 'enabled'", None),
    ({"type": "set_auto_retry", "enabled": "yes"}, "set_auto_retry needs a boolean field 'enabled'", None),
    ({"type": "bash"}, "bash needs a string field 'command'", None),  # pi runs `undefined`
    (
        {"type": "new_session", "parentSession": 5},
        "new_session: field 'parentSession' must be a string",
        None,
    ),
    (
        {"type": "steer", "message": "x", "images": "nope"},
        "'images' must be a list of {type:'image', data, mimeType}",
        None,
    ),
]


async def test_malformed_commands_are_refused_in_pi16s_words_or_naming_the_field(tmp_path: Path) -> None:
    async with two_sides(tmp_path) as (tau, pi):
        add_turns(tau, pi, Turn(text="hello"))
        for side in (tau, pi):
            await side.rpc.prompt("hi")
        for command, words in SAME_WORDS:
            answers = await same(tau, pi, command)
            assert answers["tau"]["error"] == words
        for command, ours, theirs in TAU_NAMES_THE_FIELD:
            answers = await both(tau, pi, command)
            assert (answers["tau"]["success"], answers["tau"].get("error")) == (False, ours)
            if theirs is None:
                assert answers["pi"]["success"] is True, answers["pi"]
            else:
                assert answers["pi"]["success"] is False and answers["pi"]["error"].startswith(theirs)


async def test_commands_during_a_run_a_retry_and_a_command_stream_as_pi16s(tmp_path: Path) -> None:
    """steer, follow_up and clear_queue while a reply streams, abort_retry while a retry waits,
    abort_bash while a command runs and abort while a reply streams: the same lines in both."""
    settings = {"retry": {"baseDelayMs": 20000, "provider": {"maxRetries": 0}}}
    async with two_sides(tmp_path, settings=settings) as (tau, pi):

        def stalled(seconds: float) -> Turn:
            return Turn(
                text="slow slow slow", chunk_size=2, fault=Fault("stall", after_events=3, seconds=seconds)
            )

        add_turns(
            tau,
            pi,
            stalled(1.5),
            Turn(text="steered"),
            Turn(text="followed"),
            stalled(1.5),
            Turn(fault=Fault("status", status=503, body={"error": {"message": "unavailable"}})),
            stalled(10),
        )

        async def script(side: Side) -> None:
            rpc = side.rpc
            await rpc.call("prompt", message="go")
            await rpc.wait_for("message_update")
            await rpc.call("steer", message="s1")
            await rpc.call("follow_up", message="f1")
            await rpc.wait_for("agent_settled")
            await rpc.call("prompt", message="again")
            await rpc.wait_for("message_update")
            await rpc.call("follow_up", message="dropped")
            assert await rpc.call("clear_queue") == {"steering": [], "followUp": ["dropped"]}
            await rpc.wait_for("agent_settled")
            await rpc.call("prompt", message="fails")
            await rpc.wait_for("auto_retry_start")
            await rpc.call("abort_retry")
            await rpc.wait_for("agent_settled")
            running = asyncio.ensure_future(rpc.send({"type": "bash", "command": "echo started; sleep 10"}))
            await rpc.wait_for("bash_execution_update")
            await rpc.call("abort_bash")
            assert (await running)["data"]["cancelled"] is True
            await rpc.call("prompt", message="slow")
            await rpc.wait_for("message_update")
            await rpc.call("abort")
            await asyncio.sleep(0.3)  # nothing may follow

        await asyncio.gather(script(tau), script(pi))
        assert_same_lines(tau, pi)


HELLO_PYTHON = """
def setup(tau):
    @tau.register_command("hello", description="Say hello")
    async def hello(args, ctx):
        pass
"""
HELLO_TYPESCRIPT = """
export default function (pi) {
  pi.registerCommand("hello", { description: "Say hello", handler: async () => {} });
}
"""


async def test_commands_templates_and_skills_are_listed_and_run_as_pi16s(tmp_path: Path) -> None:
    def resources(side: Side) -> None:
        prompts = side.agent_dir / "prompts"
        prompts.mkdir()
        (prompts / "review.md").write_text("---\ndescription: Review the code\n---\nReview $@ carefully")
        skill = side.agent_dir / "skills" / "tidy"
        skill.mkdir(parents=True)
        (skill / "SKILL.md").write_text(
            "---\nname: tidy\ndescription: Tidy things up\n---\nTidy the files.\n"
        )
        project = side.work / ".pi"  # a pi project's folder, which tau reads too (trusted: -a)
        (project / "prompts").mkdir(parents=True)
        (project / "prompts" / "local.md").write_text("Local $1")
        (project / "extensions").mkdir()
        if side.name == "tau":
            (project / "extensions" / "hello.py").write_text(HELLO_PYTHON)
        else:
            (project / "extensions" / "hello.ts").write_text(HELLO_TYPESCRIPT)

    async with two_sides(tmp_path, agent_files=resources, extra=lambda side: ["-a"]) as (tau, pi):
        listed = await same(tau, pi, {"type": "get_commands"})
        names = [
            (c["name"], c["source"], c["sourceInfo"]["scope"]) for c in listed["tau"]["data"]["commands"]
        ]
        assert names == [
            (c["name"], c["source"], c["sourceInfo"]["scope"]) for c in listed["pi"]["data"]["commands"]
        ]
        assert ("review", "prompt", "user") in names and ("skill:tidy", "skill", "user") in names
        assert ("local", "prompt", "project") in names and ("hello", "extension", "project") in names
        add_turns(tau, pi, Turn(text="reviewed"), Turn(text="tidied"))
        for side in (tau, pi):
            await side.rpc.prompt("/review src/app.py")
            await side.rpc.prompt("/skill:tidy now")
        sent = {
            side.name: [
                m["content"] for m in side.server.requests[-1].body["messages"] if m["role"] == "user"
            ]
            for side in (tau, pi)
        }
        assert_same_lines(tau, pi)
    # What the model was sent for the template and the skill, paths aside, and the skill's line
    # about relative paths (tau words its prose itself).
    for name, root in (("tau", tau.root), ("pi", pi.root)):
        sent[name] = [
            re.sub(r"\\n[^\\]*relative to <root>[^\\]*\\n", "\\n<relative paths>\\n", text)
            for text in (json.dumps(content).replace(str(root), "<root>") for content in sent[name])
        ]
    assert sent["tau"] == sent["pi"]
    assert "<relative paths>" in sent["tau"][1]


async def test_a_prompt_with_an_image_is_sent_and_recorded_as_pi16s(tmp_path: Path) -> None:
    def with_images(models: JsonDict) -> None:
        models["providers"]["local"]["models"][0]["input"] = ["text", "image"]

    image = {"type": "image", "data": PIXEL_PNG, "mimeType": "image/png"}  # base64 already
    async with two_sides(tmp_path, models=with_images) as (tau, pi):
        add_turns(tau, pi, Turn(text="a pixel"), Turn(text="still a pixel"))
        for side in (tau, pi):
            await side.rpc.prompt("what is this?", images=[image])
        # And queued with a steer, while nothing runs (it waits for the next prompt).
        await same(tau, pi, {"type": "steer", "message": "look again", "images": [image]})
        for side in (tau, pi):
            await side.rpc.prompt("well?")
        assert_same_lines(tau, pi)
        sent = [
            [m["content"] for m in side.server.requests[-1].body["messages"] if m["role"] == "user"]
            for side in (tau, pi)
        ]
    assert sent[0] == sent[1]


VETO_PYTHON = """
def setup(tau):
    @tau.on("session_before_switch")
    def keep(event, ctx):
        return {"cancel": True}

    @tau.on("session_before_fork")
    def no_fork(event, ctx):
        return {"cancel": True}
"""
VETO_TYPESCRIPT = """
export default function (pi) {
  pi.on("session_before_switch", async () => ({ cancel: true }));
  pi.on("session_before_fork", async () => ({ cancel: true }));
}
"""


async def test_an_extension_cancelling_session_changes_answers_as_pi16s(tmp_path: Path) -> None:
    def veto(side: Side) -> list[str]:
        path = side.root / ("veto.py" if side.name == "tau" else "veto.ts")
        path.write_text(VETO_PYTHON if side.name == "tau" else VETO_TYPESCRIPT)
        return ["-e", str(path)]

    async with two_sides(tmp_path, extra=veto) as (tau, pi):
        add_turns(tau, pi, Turn(text="hello"))
        for side in (tau, pi):
            await side.rpc.prompt("hi")
        forks = await same(tau, pi, {"type": "get_fork_messages"})
        entry = {name: {"entryId": forks[name]["data"]["messages"][0]["entryId"]} for name in ("tau", "pi")}
        for command, per_side in (
            ({"type": "new_session"}, None),
            ({"type": "fork"}, entry),
            ({"type": "clone"}, None),
            (
                {"type": "switch_session"},
                {side.name: {"sessionPath": str(side.root / "x.jsonl")} for side in (tau, pi)},
            ),
        ):
            answers = await same(tau, pi, command, per_side)
            assert answers["tau"]["data"] == {"cancelled": True}
        assert_same_lines(tau, pi)


FAILING_PYTHON = """
def setup(tau):
    @tau.register_command("boom", description="Fails")
    async def boom(args, ctx):
        raise RuntimeError("it broke")

    @tau.on("turn_start")
    def bad(event, ctx):
        raise ValueError("handler broke")
"""
FAILING_TYPESCRIPT = """
export default function (pi) {
  pi.registerCommand("boom", { description: "Fails", handler: async () => { throw new Error("it broke"); } });
  pi.on("turn_start", async () => { throw new Error("handler broke"); });
}
"""


async def test_extension_errors_are_reported_as_pi16s(tmp_path: Path) -> None:
    def failing(side: Side) -> list[str]:
        path = side.root / ("boom.py" if side.name == "tau" else "boom.ts")
        path.write_text(FAILING_PYTHON if side.name == "tau" else FAILING_TYPESCRIPT)
        return ["-e", str(path)]

    async with two_sides(tmp_path, extra=failing) as (tau, pi):
        add_turns(tau, pi, Turn(text="hello"))
        for side in (tau, pi):
            assert await side.rpc.call("prompt", message="/boom") == {"disposition": "handled"}
            await side.rpc.prompt("hi")
        assert_same_lines(tau, pi)
        reports = [
            [line for line in side.rpc.lines if line["type"] == "extension_error"] for side in (tau, pi)
        ]
    # Where and in which event, as pi says it; the words are Python's (the exception's type first).
    assert [(r["extensionPath"], r["event"]) for r in reports[0]] == [
        ("command:boom", "command"),
        (str(tau.root / "boom.py"), "turn_start"),
    ]
    assert [(r["extensionPath"], r["event"]) for r in reports[1]] == [
        ("command:boom", "command"),
        (str(pi.root / "boom.ts"), "turn_start"),
    ]
    assert [r["error"] for r in reports[0]] == ["RuntimeError: it broke", "ValueError: handler broke"]
    assert [r["error"] for r in reports[1]] == ["it broke", "handler broke"]


async def test_queue_modes_deliver_queued_messages_as_pi16s(tmp_path: Path) -> None:
    """``all``: every queued steer (or follow-up) goes in one turn; ``one-at-a-time``: one a turn."""
    async with two_sides(tmp_path) as (tau, pi):

        def stalled() -> Turn:
            return Turn(
                text="slow slow slow", chunk_size=2, fault=Fault("stall", after_events=3, seconds=1.5)
            )

        add_turns(tau, pi, stalled(), Turn(text="both steers"), Turn(text="both follow-ups"))
        add_turns(tau, pi, stalled(), *[Turn(text=f"answer {i}") for i in range(4)])

        async def script(side: Side) -> None:
            rpc = side.rpc
            for mode in ("all", "one-at-a-time"):
                await rpc.call("set_steering_mode", mode=mode)
                await rpc.call("set_follow_up_mode", mode=mode)
                await rpc.call("prompt", message=f"go {mode}")
                await rpc.wait_for("message_update")
                for text in ("s1", "s2"):
                    await rpc.call("steer", message=text)
                for text in ("f1", "f2"):
                    await rpc.call("follow_up", message=text)
                await rpc.wait_for("agent_settled")

        await asyncio.gather(script(tau), script(pi))
        assert_same_lines(tau, pi)
        sent = [[len(r.body["messages"]) for r in side.server.requests] for side in (tau, pi)]
    assert sent[0] == sent[1]


async def test_a_manual_compaction_answers_and_streams_as_pi16s(tmp_path: Path) -> None:
    async with two_sides(tmp_path) as (tau, pi):
        add_turns(
            tau,
            pi,
            Turn(text="one", usage=ScriptedUsage(input=30000, output=10)),
            Turn(text="two", usage=ScriptedUsage(input=60000, output=10)),
            Turn(text="## Goal\nsummary", usage=ScriptedUsage(input=500, output=40)),
        )
        for side in (tau, pi):
            await side.rpc.prompt("x" * 100_000)  # older than keepRecentTokens keeps: something to summarise
            await side.rpc.prompt("y" * 100_000)
        answers = await same(tau, pi, {"type": "compact", "customInstructions": "keep it short"})
        data = [answers[name]["data"] for name in ("tau", "pi")]
        assert data[0]["usage"] == data[1]["usage"] and data[0]["tokensBefore"] == data[1]["tokensBefore"]
        assert data[0]["summary"] == data[1]["summary"] == "## Goal\nsummary"
        await same(tau, pi, {"type": "get_state"})
        await same(tau, pi, {"type": "get_session_stats"})
        assert_same_lines(tau, pi)
