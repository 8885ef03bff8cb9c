"""``codemode`` without MCP (pi's built-in codemode extension): ``--tools +codemode`` declares it,
its scripts call the built-in tools, and each inner call is a ``tool_execution_*`` event with
``parentToolCallId`` in JSON mode and RPC, as in pi 1.6."""

from __future__ import annotations

import json
import sys
import textwrap
from typing import Any

import pytest
from tau_command import MODEL, TauCommand

from tau.modes.rpc_client import RpcClient
from tau.testing.fake_llm import ScriptedToolCall, Turn

pytest.importorskip("quickjs", reason="the codemode extra is part of the dev install")

WATCH = textwrap.dedent(
    """
    import json, os

    def setup(tau):
        @tau.on("tool_call")
        async def seen(event, ctx):
            with open(os.environ["WATCH_LOG"], "a") as log:
                log.write(json.dumps([event.tool_name, event.tool_call_id, event.parent_tool_call_id]) + "\\n")
    """
)


def codemode(code: str) -> Turn:
    return Turn(tool_calls=[ScriptedToolCall("codemode", {"code": code})])


def tool_names(request: Any) -> list[str]:
    return [tool["function"]["name"] for tool in request.body.get("tools", [])]


def tool_results(request: Any) -> list[str]:
    return [str(m["content"]) for m in request.body["messages"] if m["role"] == "tool"]


def test_plus_codemode_declares_the_tool_and_scripts_call_the_built_in_tools(tau: TauCommand) -> None:
    (tau.work / "notes.txt").write_text("alpha\nbeta\n", encoding="utf-8")
    tau.server.add(
        codemode(
            "const [shell, notes] = await Promise.all([\n"
            "  tools.bash({ command: 'echo out; exit 3' }),\n"
            "  tools.read({ path: 'notes.txt' }),\n"
            "]);\n"
            "await tools.write({ path: 'made.txt', content: notes.toUpperCase() });\n"
            "return [shell.output.trim(), shell.exit_code, typeof shell.wall_time_seconds, notes.split('\\n')[1]];"
        ),
        codemode(
            "try { await tools.read({ path: 'missing.txt' }); } catch (e) { text('rejected'); }\n"
            "const chat = await models.getModelsOfType('chat', 'local');\n"
            "return [chat.map((m) => m.id), ALL_TOOLS.map((t) => t.name)];"
        ),
        Turn(text="Done."),
    )

    done = tau.run("-p", *MODEL, "--tools", "+codemode", "script it")

    assert done.returncode == 0, done.stderr
    assert tool_names(tau.server.requests[0]) == ["read", "bash", "edit", "write", "codemode"]
    called, listed = tool_results(tau.server.requests[-1])
    assert called.startswith("Script completed\nWall time ")
    assert called.endswith('Output:\n\n[\n  "out",\n  3,\n  "number",\n  "beta"\n]')
    assert (tau.work / "made.txt").read_text(encoding="utf-8") == "ALPHA\nBETA\n"
    assert listed.endswith(
        'Output:\n\n==> text 1/2 <==\nrejected\n==> text 2/2 <==\n[\n  [\n    "fake-model"\n  ],\n  [\n    "read",\n    "bash",\n    "edit",\n    "write"\n  ]\n]'
    )


def test_without_plus_codemode_the_tool_is_not_declared(tau: TauCommand) -> None:
    tau.server.add(Turn(text="Plain."))
    done = tau.run("-p", *MODEL, "hello")
    assert done.returncode == 0, done.stderr
    assert "codemode" not in tool_names(tau.server.requests[0])


def test_inner_calls_are_json_events_with_parent_tool_call_id(tau: TauCommand) -> None:
    log = tau.work / "watch.log"
    (tau.work / "watch.py").write_text(WATCH, encoding="utf-8")
    tau.env["WATCH_LOG"] = str(log)
    tau.server.add(
        codemode(
            "const a = await tools.bash({ command: 'echo one' });\nawait tools.ls({});\nreturn a.output;"
        ),
        Turn(text="Done."),
    )

    done = tau.run(
        "-p", "--mode", "json", *MODEL, "--tools", "+codemode", "-e", str(tau.work / "watch.py"), "go"
    )

    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    tools = [e for e in events if str(e.get("type", "")).startswith("tool_execution_")]
    outer = tools[0]["toolCallId"]
    shape = [(e["type"], e["toolCallId"], e["toolName"], e.get("parentToolCallId")) for e in tools]
    assert shape == [
        ("tool_execution_start", outer, "codemode", None),
        ("tool_execution_update", outer, "codemode", None),  # the script's calls so far: none
        ("tool_execution_start", f"{outer}/1", "bash", outer),
        ("tool_execution_update", f"{outer}/1", "bash", outer),
        ("tool_execution_update", f"{outer}/1", "bash", outer),
        ("tool_execution_end", f"{outer}/1", "bash", outer),
        ("tool_execution_update", outer, "codemode", None),
        ("tool_execution_start", f"{outer}/2", "ls", outer),  # not declared: the call fails
        ("tool_execution_end", f"{outer}/2", "ls", outer),
        ("tool_execution_update", outer, "codemode", None),
        ("tool_execution_end", outer, "codemode", None),
    ]
    assert tools[5]["isError"] is False and tools[8]["isError"] is True
    assert tools[8]["result"]["content"][0]["text"] == "Tool ls not found"
    calls = tools[9]["partialResult"]["details"]["calls"]
    assert [(c["id"], c["name"], c["args"], c["status"]) for c in calls] == [
        (f"{outer}/1", "bash", '{"command":"echo one"}', "ok"),
        (f"{outer}/2", "ls", "{}", "error"),
    ]  # pi's record of a script's calls
    # Nested calls reach the extensions' tool_call handlers with the caller's id.
    seen = [json.loads(line) for line in log.read_text().splitlines()]
    assert seen == [["codemode", outer, None], ["bash", f"{outer}/1", outer]]
    # They add nothing to the transcript: one tool result, the script's.
    entries = [json.loads(line) for line in tau.session_files()[0].read_text().splitlines()]
    results = [e["message"] for e in entries if e.get("message", {}).get("role") == "toolResult"]
    assert [r["toolName"] for r in results] == ["codemode"]
    # pi's nestedCalls record on the calling tool's result message
    assert results[0]["nestedCalls"] == {
        "calls": [
            {
                "id": f"{outer}/1",
                "name": "bash",
                "status": "ok",
                "arguments": {"command": "echo one"},
                "durationMs": results[0]["nestedCalls"]["calls"][0]["durationMs"],
            },
            {
                "id": f"{outer}/2",
                "name": "ls",
                "status": "error",
                "arguments": {},
                "durationMs": results[0]["nestedCalls"]["calls"][1]["durationMs"],
                "error": "Tool ls not found",
            },
        ],
        "complete": True,
    }


async def test_inner_calls_are_rpc_events_with_parent_tool_call_id(tau: TauCommand) -> None:
    tau.server.add(codemode("return (await tools.bash({ command: 'echo rpc' })).output;"), Turn(text="Done."))
    command = [sys.executable, "-m", "tau", "--mode", "rpc", *MODEL, "--tools", "+codemode"]
    async with RpcClient(command, cwd=str(tau.work), env=tau.env) as rpc:
        await rpc.call("prompt", message="go")
        await rpc.wait_for("agent_settled", timeout=30)
    ends = [e for e in rpc.lines if e.get("type") == "tool_execution_end"]
    assert [(e["toolName"], "parentToolCallId" in e) for e in ends] == [("bash", True), ("codemode", False)]
    assert ends[0]["parentToolCallId"] == ends[1]["toolCallId"]
    assert ends[0]["toolCallId"] == ends[1]["toolCallId"] + "/1"


def test_builtin_codemode_switched_off_leaves_plus_codemode_unknown(tau: TauCommand) -> None:
    (tau.agent_dir / "settings.json").write_text(json.dumps({"extensions": ["-builtin:codemode"]}))
    tau.server.add(Turn(text="Plain."))
    done = tau.run("-p", *MODEL, "--tools", "+codemode", "hello")
    assert "codemode" not in tool_names(tau.server.requests[0])
    assert "codemode" in done.stderr


def tool_description(request: Any, name: str) -> str:
    return next(t["function"]["description"] for t in request.body["tools"] if t["function"]["name"] == name)


def test_mode_on_tells_each_declared_tool_how_scripts_call_it(tau: TauCommand) -> None:
    tau.server.add(Turn(text="Plain."))
    done = tau.run("-p", *MODEL, "--tools", "+codemode", "hello")
    assert done.returncode == 0, done.stderr
    request = tau.server.requests[0]
    # pi 1.6's words, checked against `pi --tools +codemode`
    assert tool_description(request, "bash").endswith(
        "Codemode: `tools.bash(args)` resolves to `{ output, truncated, full_output_path?, exit_code, wall_time_seconds }`."
    )
    assert tool_description(request, "read").endswith(
        'Codemode: `tools.read(args)` resolves to `string | { data: string; mimeType: string; note: string; type: "image"; }`.'
    )
    assert tool_description(request, "write").endswith("Codemode: `tools.write(args)` resolves to a string.")
    assert "Nested tools" not in tool_description(request, "codemode")


def test_mode_only_hides_the_tools_behind_codemode_which_lists_and_still_calls_them(tau: TauCommand) -> None:
    (tau.agent_dir / "settings.json").write_text(json.dumps({"codemode": {"mode": "only"}}))
    tau.server.add(
        codemode("return (await tools.bash({ command: 'echo hidden' })).output;"), Turn(text="Done.")
    )
    done = tau.run("-p", *MODEL, "--tools", "+codemode", "go")
    assert done.returncode == 0, done.stderr
    first = tau.server.requests[0]
    assert tool_names(first) == ["codemode"]
    listing = tool_description(first, "codemode")
    assert "Nested tools:\n\n" in listing
    assert all(f"### `{name}`" in listing for name in ("read", "bash", "edit", "write"))
    assert "declare const tools: { read(args: {" in listing
    assert tool_results(tau.server.requests[-1])[0].endswith("Output:\n\nhidden\n")


def test_inline_budget_zero_lists_no_tool(tau: TauCommand) -> None:
    settings = {"codemode": {"mode": "only", "inlineBudget": 0}}
    (tau.agent_dir / "settings.json").write_text(json.dumps(settings))
    tau.server.add(Turn(text="Plain."))
    done = tau.run("-p", *MODEL, "--tools", "+codemode", "hello")
    assert done.returncode == 0, done.stderr
    listing = tool_description(tau.server.requests[0], "codemode")
    assert listing.endswith("\n\nNested tools:")  # as pi's: the globals' line says how to find them
    assert "### `" not in listing


def _span(result: str) -> tuple[int, int]:
    start, end = (int(n) for n in result.split("Output:\n", 1)[1].split())
    return start, end


@pytest.mark.parametrize(("limit", "overlap"), [("1", False), ("2", True)])
def test_codemode_max_workers_limits_the_scripts_running_at_once(
    tau: TauCommand, limit: str, overlap: bool
) -> None:
    tau.env["TAU_CODEMODE_MAX_WORKERS"] = limit
    script = "return (await tools.bash({ command: 'date +%s%N; sleep 0.5; date +%s%N' })).output;"
    tau.server.add(
        Turn(
            tool_calls=[
                ScriptedToolCall("codemode", {"code": script}),
                ScriptedToolCall("codemode", {"code": script}),
            ]
        ),
        Turn(text="Done."),
    )
    done = tau.run("-p", *MODEL, "--tools", "+codemode", "twice")
    assert done.returncode == 0, done.stderr
    (_a_start, a_end), (b_start, _b_end) = sorted(_span(r) for r in tool_results(tau.server.requests[-1]))
    assert (b_start < a_end) is overlap


def _event_shape(stdout: str) -> list[tuple[str, str, str, bool]]:
    """Each tool event: its type, tool, id relative to the codemode call, and whether it names a parent."""
    events = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    tools = [e for e in events if str(e.get("type", "")).startswith("tool_execution_")]
    outer = tools[0]["toolCallId"]
    shape: list[tuple[str, str, str, bool]] = []
    for e in tools:
        if e["type"] == "tool_execution_update" and e["toolName"] == "codemode":
            continue
        event = (e["type"], e["toolName"], e["toolCallId"].replace(outer, "<id>"), "parentToolCallId" in e)
        # How many progress updates a command streams depends on timing (in pi as in tau): a run of
        # them counts once.
        if not (event[0] == "tool_execution_update" and shape and shape[-1] == event):
            shape.append(event)
    return shape


def test_nested_events_match_pi_16(tau: TauCommand, tmp_path: Any) -> None:
    import subprocess

    from pi16 import pi16_command

    script = "const a = await tools.bash({ command: 'echo one' });\nreturn a.exit_code;"
    for _ in range(2):  # one script for pi, one for tau
        tau.server.add(codemode(script), Turn(text="Done."))
    pi_dir = tmp_path / "pi"
    pi_dir.mkdir()
    (pi_dir / "models.json").write_text((tau.agent_dir / "models.json").read_text())
    env = tau.env | {"PI_OFFLINE": "1", "PI_CODING_AGENT_DIR": str(pi_dir), "HOME": str(pi_dir)}
    pi = subprocess.run(
        [*pi16_command(), *MODEL, "--mode", "json", "-p", "--tools", "+codemode", "go"],
        cwd=tau.work,
        env=env,
        input="",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert pi.returncode == 0, pi.stderr
    ours = tau.run("-p", "--mode", "json", *MODEL, "--tools", "+codemode", "go")
    assert ours.returncode == 0, ours.stderr
    assert _event_shape(ours.stdout) == _event_shape(pi.stdout)
    pi_result, tau_result = (
        next(m for m in r.body["messages"] if m["role"] == "tool")["content"]
        for r in (tau.server.requests[1], tau.server.requests[3])
    )
    assert pi_result.endswith("Output:\n\n0") and tau_result.endswith("Output:\n\n0")  # two blocks, as pi


NAMESPACED_TS = """
import { Type } from "typebox";
export default function (pi: any) {
  const docs = { name: "docs", aliases: ["documentation"], description: "The project's documentation." };
  const tool = (name: string, description: string, namespace?: any) =>
    pi.registerTool({
      name, label: name, description, exposure: "codemode", namespace,
      parameters: Type.Object({}),
      execute: async () => ({ content: [{ type: "text", text: name }] }),
    });
  tool("alpha", "The alpha tool.");
  tool("docs_search", "Search the documentation for a phrase.", docs);
  tool("docs_get", "One page.", docs);
  tool("zed_ping", "Ping zed.", { name: "zed" });
}
"""

NAMESPACED_PY = """
from tau.extensions.types import ToolDefinition, ToolNamespace


def setup(tau):
    docs = ToolNamespace(name="docs", aliases=("documentation",), description="The project's documentation.")

    def tool(name, description, namespace=None):
        async def execute(tool_call_id, params, signal, on_update, ctx):
            return name

        tau.register_tool(
            ToolDefinition(
                name=name, description=description, parameters={"type": "object", "properties": {}},
                execute=execute, exposure="codemode", namespace=namespace,
            )
        )

    tool("alpha", "The alpha tool.")
    tool("docs_search", "Search the documentation for a phrase.", docs)
    tool("docs_get", "One page.", docs)
    tool("zed_ping", "Ping zed.", ToolNamespace(name="zed"))
"""


def _skeleton(description: str) -> list[str]:
    """The listing's headings (``Nested tools:``, ``## namespace``, ``### `tool```) and each
    namespace's description line."""
    lines = description.split("Nested tools:", 1)[-1].splitlines() if "Nested tools:" in description else []
    shown = ["Nested tools:"] if "Nested tools:" in description else []
    for line, after in zip(lines, [*lines[1:], ""], strict=True):
        if line.startswith("#"):
            shown.append(line)
            if line.startswith("## ") and after and not after.startswith("#"):
                shown.append(after)
    return shown


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        (
            {"mode": "only"},
            [
                "Nested tools:",
                *(f"### `{name}`" for name in ("read", "bash", "edit", "write", "alpha")),
                "## docs",
                "The project's documentation.",
                "### `docs_search`",
                "### `docs_get`",
                "## zed",
                "### `zed_ping`",
            ],
        ),
        (
            {"mode": "only", "inlineBudget": 0},
            [
                "Nested tools:",
                "## docs (tools not listed)",
                "The project's documentation.",
                "## zed (tools not listed)",
            ],
        ),
        (
            {"mode": "on"},
            [
                "Nested tools:",
                "### `alpha`",
                "## docs",
                "The project's documentation.",
                "### `docs_search`",
                "### `docs_get`",
                "## zed",
                "### `zed_ping`",
            ],
        ),
    ],
)
def test_codemode_lists_the_tools_scripts_call_under_their_namespaces_as_pi_16(
    tau: TauCommand, tmp_path: Any, settings: dict[str, Any], expected: list[str]
) -> None:
    """The same extension tools (``codemode`` exposure, two in a namespace with a description, one
    in a namespace without, one in none) in pi 1.6 and tau: the ``codemode`` description lists
    them under the same headings in the same order, and says the same of a namespace left out."""
    from pi16 import pi16_command, run_pi16

    (tmp_path / "tools.ts").write_text(NAMESPACED_TS)
    (tmp_path / "tools.py").write_text(NAMESPACED_PY)
    pi_dir = tmp_path / "pi"
    pi_dir.mkdir()
    for folder in (pi_dir, tau.agent_dir):
        (folder / "settings.json").write_text(json.dumps({"codemode": settings}))
    tau.server.add(Turn(text="Plain."), Turn(text="Plain."))
    run_pi16(
        pi16_command(), tau, pi_dir, "-p", "--tools", "+codemode", "-e", str(tmp_path / "tools.ts"), "hi"
    )
    done = tau.run("-p", *MODEL, "--tools", "+codemode", "-e", str(tmp_path / "tools.py"), "hi")
    assert done.returncode == 0, done.stderr
    pi_request, tau_request = tau.server.requests
    assert tool_names(pi_request) == tool_names(tau_request)
    pi_listing, tau_listing = (tool_description(r, "codemode") for r in (pi_request, tau_request))
    assert _skeleton(pi_listing) == _skeleton(tau_listing) == expected
    if settings.get("inlineBudget") != 0:  # each tool's declaration, wrapped as pi wraps it
        declared = "### `zed_ping`\nPing zed.\n\ncodemode tool declaration:\n```ts\ndeclare const tools: { zed_ping(args: "
        assert declared in pi_listing and declared in tau_listing


BASH_OUTPUT_SCRIPT = """
const big = await tools.bash({ command: "seq 1 500000" });
const small = await tools.bash({ command: "seq 1 20000 | head -c 102400" });
const marker = big.output.match(/\\n\\n\\[\\.\\.\\. \\d+ bytes omitted \\.\\.\\.\\]\\n\\n/);
const saved = await tools.bash({ command: `wc -c < '${big.full_output_path}'` });
return JSON.stringify({
  bigBytes: big.output.length, bigTruncated: big.truncated, marker: marker && marker[0],
  start: big.output.slice(0, 12), end: big.output.slice(-14), saved: saved.output.trim(),
  smallBytes: small.output.length, smallTruncated: small.truncated, smallPath: "full_output_path" in small,
  smallEnd: small.output.slice(-6),
});
"""


def test_bash_output_in_a_script_holds_up_to_one_mib_as_pi_16(tau: TauCommand, tmp_path: Any) -> None:
    """``tools.bash()`` in a script: 100 KB of output arrives whole (not the model's 50 KB), and
    3.3 MiB keeps its first and last 512 KiB around pi's omission marker, with the whole output in
    ``full_output_path``; the same script in pi 1.6 returns the same."""
    import subprocess

    from pi16 import pi16_command

    for _ in range(2):  # one script for pi, one for tau
        tau.server.add(codemode(BASH_OUTPUT_SCRIPT), Turn(text="Done."))
    pi_dir = tmp_path / "pi"
    pi_dir.mkdir()
    (pi_dir / "models.json").write_text((tau.agent_dir / "models.json").read_text())
    env = tau.env | {"PI_OFFLINE": "1", "PI_CODING_AGENT_DIR": str(pi_dir), "HOME": str(pi_dir)}
    pi = subprocess.run(
        [*pi16_command(), *MODEL, "-p", "--tools", "+codemode", "go"],
        cwd=tau.work,
        env=env,
        input="",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert pi.returncode == 0, pi.stderr
    ours = tau.run("-p", *MODEL, "--tools", "+codemode", "go")
    assert ours.returncode == 0, ours.stderr
    pi_result, tau_result = (
        json.loads(tool_results(r)[0].split("Output:\n", 1)[1])
        for r in (tau.server.requests[1], tau.server.requests[3])
    )
    total = len("".join(f"{n}\n" for n in range(1, 500001)))
    assert tau_result == {
        "bigBytes": 1024 * 1024 + len(f"\n\n[... {total - 1024 * 1024} bytes omitted ...]\n\n"),
        "bigTruncated": True,
        "marker": f"\n\n[... {total - 1024 * 1024} bytes omitted ...]\n\n",
        "start": "1\n2\n3\n4\n5\n6\n",
        "end": "499999\n500000\n",
        "saved": str(total),
        "smallBytes": 102400,
        "smallTruncated": False,
        "smallPath": False,
        "smallEnd": tau_result["smallEnd"],
    }
    assert pi_result == tau_result


def test_output_past_the_limits_fails_the_script_as_pi_16(tau: TauCommand, tmp_path: Any) -> None:
    """A script that catches the output-limit error still fails, with pi 1.6's words, in both."""
    import subprocess

    from pi16 import pi16_command

    script = "try { text('x'.repeat(16777217)); } catch (e) { text('caught'); }\nreturn 'after';"
    for _ in range(2):  # one script for pi, one for tau
        tau.server.add(codemode(script), Turn(text="Done."))
    pi_dir = tmp_path / "pi"
    pi_dir.mkdir()
    (pi_dir / "models.json").write_text((tau.agent_dir / "models.json").read_text())
    env = tau.env | {"PI_OFFLINE": "1", "PI_CODING_AGENT_DIR": str(pi_dir), "HOME": str(pi_dir)}
    pi = subprocess.run(
        [*pi16_command(), *MODEL, "-p", "--tools", "+codemode", "go"],
        cwd=tau.work,
        env=env,
        input="",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert pi.returncode == 0, pi.stderr
    ours = tau.run("-p", *MODEL, "--tools", "+codemode", "go")
    assert ours.returncode == 0, ours.stderr
    pi_result, tau_result = (
        tool_results(r)[0].split("Output:\n", 1)[1].strip()
        for r in (tau.server.requests[1], tau.server.requests[3])
    )
    # pi's error carries the script's stack (its line numbers are its own wrapping's); tau's does not
    assert tau_result == "\n".join(line for line in pi_result.splitlines() if not line.startswith("    at "))
    assert tau_result.endswith("a file with a tool.\n\nNo tool calls were made.")


def test_a_script_that_gets_no_worker_before_its_deadline_fails_without_running_as_pi_16(
    tau: TauCommand,
) -> None:
    tau.env["TAU_CODEMODE_MAX_WORKERS"] = "1"
    busy = "await tools.bash({ command: 'sleep 1.5' });\nreturn 'first';"
    waiting = '// @options: {"timeout_ms": 300}\nreturn "second";'
    tau.server.add(
        Turn(
            tool_calls=[
                ScriptedToolCall("codemode", {"code": busy}),
                ScriptedToolCall("codemode", {"code": waiting}),
            ]
        ),
        Turn(text="Done."),
    )
    done = tau.run("-p", *MODEL, "--tools", "+codemode", "twice")
    assert done.returncode == 0, done.stderr
    first, second = tool_results(tau.server.requests[-1])
    assert first.endswith("Output:\n\nfirst")
    assert second.startswith("Script failed\nWall time 0.")
    assert second.endswith(
        "Output:\n\nScript error:\nScript timed out: Execution timed out after 300 ms while waiting for a free "
        "codemode worker\n\nThe script did not start."
    )
