"""The ``codemode`` tool in the real ``tau`` process: the fake LLM writes scripts that call real MCP
servers (the ``mcp`` SDK's server side) through a QuickJS sandbox."""

from __future__ import annotations

import json
import re
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from tau_command import MODEL, TauCommand

from tau.modes.rpc_client import RpcClient
from tau.testing.fake_llm import ScriptedToolCall, Turn

PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="

KIT = textwrap.dedent(
    """
    import base64
    import anyio
    from mcp.server.mcpserver import Image, MCPServer

    server = MCPServer("kit", instructions="Small helpers for the codemode tests.")

    @server.tool()
    def add(a: int, b: int) -> int:
        \"\"\"Add two numbers.\"\"\"
        return a + b

    @server.tool()
    def shout(word: str) -> str:
        \"\"\"Repeat a word in capital letters.\"\"\"
        return word.upper()

    @server.tool()
    def frobnicate_widget(name: str) -> str:
        \"\"\"Frobnicate the named widget.\"\"\"
        return f"{name} frobnicated"

    @server.tool()
    def dot() -> Image:
        \"\"\"A one-pixel picture.\"\"\"
        return Image(data=base64.b64decode(PIXEL), format="png")

    @server.tool()
    async def linger() -> str:
        \"\"\"Answer after a long while.\"\"\"
        await anyio.sleep(30)
        return "late"

    @server.tool()
    def forbidden() -> str:
        \"\"\"A tool the test's extension blocks.\"\"\"
        return "ran anyway"

    if __name__ == "__main__":
        server.run()
    """
).replace("PIXEL", repr(PIXEL))

GATE = textwrap.dedent(
    """
    def setup(tau):
        @tau.on("tool_call")
        async def gate(event, ctx):
            if event.tool_name == "mcp__kit__forbidden":
                return {"block": True, "reason": f"no forbidden calls ({event.tool_call_id})"}
    """
)


@pytest.fixture(scope="module")
def kit(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("codemode")
    (folder / "kit.py").write_text(KIT, encoding="utf-8")
    (folder / "gate.py").write_text(GATE, encoding="utf-8")
    return folder


def configure(tau: TauCommand, kit: Path, **top: Any) -> None:
    servers = {
        "kit": {"command": sys.executable, "args": [str(kit / "kit.py")], "description": "Test helpers"}
    }
    (tau.agent_dir / "mcp.json").write_text(json.dumps({"mcpServers": servers, **top}), encoding="utf-8")


def codemode(code: str) -> Turn:
    return Turn(tool_calls=[ScriptedToolCall("codemode", {"code": code})])


def tool_names(request: Any) -> list[str]:
    return [tool["function"]["name"] for tool in request.body.get("tools", [])]


def tool_results(request: Any) -> list[str]:
    return [str(m["content"]) for m in request.body["messages"] if m["role"] == "tool"]


def system_prompt(request: Any) -> str:
    return str(request.body["messages"][0]["content"])


def test_codemode_scripts_combine_mcp_calls_find_tools_show_an_image_and_keep_stored_values(
    tau: TauCommand, kit: Path
) -> None:
    configure(tau, kit)
    tau.server.add(
        codemode(
            "const [sum, loud] = await Promise.all([\n"
            "  tools.mcp__kit__add({ a: 2, b: 3 }),\n"
            "  tools.mcp__kit__shout({ word: 'hi' }),\n"
            "]);\n"
            "console.log('called', 2);\n"
            "return `${loud.content[0].text} ${sum.structuredContent.result}`;"
        ),
        codemode(
            "const found = await searchTools('frobnicate widget', { limit: 1 });\n"
            "const ns = await describeNamespace('kit');\n"
            "text(found.map((t) => t.name));\n"
            "text(`${ns.name}: ${ns.instructions} (${ns.tools.length} tools)`);"
        ),
        codemode(
            "const picture = await tools.mcp__kit__dot({});\nimage(picture.content[0]);\nreturn 'shown';"
        ),
        codemode("store('cursor', { page: 2 });\nstore('gone', 1);\nstore('gone', undefined);"),
        codemode("store('cursor', { page: 9 });\nthrow new Error('not kept');"),
        codemode("return [load('cursor').page + 1, load('gone')];"),
        codemode("return await describeTool('mcp__kit__add');"),
        Turn(text="Done."),
    )

    done = tau.run("-p", *MODEL, "use the kit")

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Done." and "cannot be called" not in done.stderr
    first, last = tau.server.requests[0], tau.server.requests[-1]
    assert tool_names(first) == ["read", "bash", "edit", "write", "codemode"]
    assert "- mcp__kit (codemode): Test helpers" in system_prompt(first)
    # The server connecting and its tools being called change neither the prompt nor the tools.
    assert all(r.body["messages"][0] == first.body["messages"][0] for r in tau.server.requests)
    assert all(r.body["tools"] == first.body["tools"] for r in tau.server.requests)
    combined, searched, shown, _stored, _failed, loaded, described = tool_results(last)
    assert combined.startswith("Script completed\nWall time ")
    assert combined.endswith("Output:\n\nHI 5\n<console_output>\ncalled 2\n</console_output>")
    assert searched.endswith(
        'Output:\n\n==> text 1/2 <==\n[\n  "mcp__kit__frobnicate_widget"\n]\n'
        "==> text 2/2 <==\nmcp__kit: Small helpers for the codemode tests. (6 tools)"
    )
    # As pi's image(), the image is saved to a temporary file named before it.
    saved = re.search(
        r"Output:\n\nshown\n\[Image saved to (/\S+tau-codemode-\w+\.png) \(image/png, \d+B\)\]\n", shown
    )
    assert saved is not None, shown
    assert Path(saved.group(1)).read_bytes().startswith(b"\x89PNG")
    assert shown.endswith("\n(tool image omitted: model does not support images)")
    entries = [json.loads(line) for line in tau.session_files()[0].read_text().splitlines()]
    results = [e["message"] for e in entries if e.get("message", {}).get("role") == "toolResult"]
    picture = results[2]["content"][3]  # after the header, the output and the line naming its file
    assert (picture["type"], picture["data"], picture["mimeType"]) == ("image", PIXEL, "image/png")
    assert loaded.endswith("Output:\n\n[\n  3,\n  null\n]")  # the failed script's page 9 was not kept
    assert described.endswith(
        "Output:\n\nAdd two numbers.\n\ntools.mcp__kit__add(args: {\n  a: number;\n  b: number;\n}): Promise<CallToolResult>"
    )
    stores = [e["data"] for e in entries if e.get("customType") == "codemode-store"]
    assert stores == [{"set": {"cursor": {"page": 2}}, "delete": ["gone"]}]


def test_script_errors_time_limits_blocked_calls_and_a_late_options_line_fail_the_call(
    tau: TauCommand, kit: Path
) -> None:
    configure(tau, kit)
    tau.server.add(
        codemode("text('before');\nthrow new Error('the script gave up');"),
        codemode('// @options: {"timeout_ms": 400}\nawait tools.mcp__kit__linger({});'),
        codemode("try { await tools.mcp__kit__forbidden({}); } catch (e) { return e.message; }"),
        codemode("await tools.mcp__kit__nothing({});"),
        codemode('text(1);\n// @options: {"timeout_ms": 1000}'),
        Turn(text="Reported."),
    )

    done = tau.run("-p", *MODEL, "-e", str(kit / "gate.py"), "try things")

    assert done.returncode == 0, done.stderr
    thrown, timed_out, blocked, missing, misplaced = tool_results(tau.server.requests[-1])
    assert thrown.startswith("Script failed\nWall time ")
    assert thrown.endswith(
        "Output:\n\nbefore\nScript error:\nError: the script gave up\n\nNo tool calls were made."
    )
    assert timed_out.endswith(
        "Script error:\nScript timed out: Execution timed out after 400 ms"
        "\n\nTool calls made before the failure (they are not undone): mcp__kit__linger (cancelled)"
    )
    messages = tau.server.requests[-1].body["messages"]
    call_id = [call["id"] for m in messages for call in m.get("tool_calls") or []][2]
    assert blocked.endswith(f"Output:\n\nno forbidden calls ({call_id}/1)")  # pi: <parent id>/<n>
    assert missing.endswith(
        "Script error:\nError: there is no tool 'mcp__kit__nothing': find tools with searchTools() or ALL_TOOLS"
        "\n\nNo tool calls were made."
    )
    assert misplaced == "a // @options: line must be the script's first line"


def test_auto_enable_codemode_false_leaves_codemode_off_and_tool_search_reaches_the_tools(
    tau: TauCommand, kit: Path
) -> None:
    configure(tau, kit, autoEnableCodemode=False)
    tau.server.add(Turn(text="Fine."))
    tau.env["PYTHONPROFILEIMPORTTIME"] = "1"

    done = tau.run("-p", *MODEL, "hello")

    assert done.returncode == 0, done.stderr
    first = tau.server.requests[0]
    assert tool_names(first) == ["read", "bash", "edit", "write", "tool_search"]
    assert "Use tool_search to find and load the tools of these MCP servers: kit (Test helpers)" in (
        system_prompt(first)
    )
    assert "tau.mcp.codemode_sandbox" not in done.stderr and "quickjs" not in done.stderr
    assert "cannot be called" not in done.stderr


def test_codemode_without_an_importable_quickjs_fails_with_one_line_naming_the_extra(
    tau: TauCommand, kit: Path, tmp_path: Path
) -> None:
    broken = tmp_path / "site" / "quickjs"
    broken.mkdir(parents=True)
    (broken / "__init__.py").write_text("raise ImportError('no QuickJS here')\n", encoding="utf-8")
    tau.env["PYTHONPATH"] = str(broken.parent)
    configure(tau, kit)
    tau.server.add(codemode("return 1;"), Turn(text="Noted."))

    done = tau.run("-p", *MODEL, "run a script")

    assert done.returncode == 0, done.stderr
    assert tool_results(tau.server.requests[-1]) == [
        "codemode needs the quickjs package: pip install 'tau-agent[codemode]'"
    ]


async def test_an_abort_stops_a_busy_codemode_script_at_once(tau: TauCommand, kit: Path) -> None:
    configure(tau, kit)
    tau.server.add(codemode("while (true) {}"))
    command = [sys.executable, "-m", "tau", "--mode", "rpc", *MODEL]
    async with RpcClient(command, cwd=str(tau.work), env=tau.env) as rpc:
        await rpc.call("prompt", message="spin")
        await rpc.wait_for("tool_execution_start")
        started = time.monotonic()
        await rpc.call("abort", timeout=10)
        events = await rpc.wait_for("agent_settled", timeout=10)
        stopped = time.monotonic() - started
    assert events[-1] == {"type": "agent_settled", "aborted": True}
    ends = [e for e in rpc.lines if e["type"] == "tool_execution_end"]
    assert [(e["toolName"], e["isError"]) for e in ends] == [("codemode", True)]
    assert stopped < 5  # no deadline (as pi); the busy stretch's CPU cap is 120 s


def test_tools_that_leave_out_codemode_and_tool_search_get_one_warning_that_mcp_tools_are_unreachable(
    tau: TauCommand, kit: Path
) -> None:
    configure(tau, kit)
    tau.server.add(Turn(text="Fine."))

    done = tau.run("-p", *MODEL, "--tools", "read,bash", "hello")

    assert done.returncode == 0, done.stderr
    assert tool_names(tau.server.requests[0]) == ["read", "bash"]
    assert done.stderr.count("neither is active; they cannot be called") == 1
