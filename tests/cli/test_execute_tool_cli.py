"""Tools calling tools (pi 1.6's ``ctx.executeTool``, ``ctx.tools`` and ``exposure``), run by the
real tau process against the fake server: the example ``inspect_file`` tool calls ``read``,
``bash`` and a ``codemode``-exposed tool through ``ctx.execute_tool``; each nested call is a
``tool_execution_*`` event with ``parentToolCallId`` and a ``tool_call`` the extensions see, and
the session keeps pi's ``nestedCalls`` record on the calling tool's result, nothing more."""

from __future__ import annotations

import hashlib
import json
import sys
import textwrap
from pathlib import Path
from typing import Any

from tau_command import MODEL, TauCommand

from tau.testing.fake_llm import ScriptedToolCall, Turn

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "extensions" / "inspect_file.py"

WATCH = textwrap.dedent(
    """
    import json, os

    def setup(tau):
        @tau.on("tool_call")
        async def seen(event, ctx):
            with open(os.environ["WATCH_LOG"], "a") as log:
                log.write(json.dumps([event.tool_name, event.tool_call_id, event.parent_tool_call_id]) + "\\n")
            if event.tool_name == "bash" and "forbidden" in event.input.get("command", ""):
                return {"block": True, "reason": "no forbidden commands"}
    """
)


def tool_names(request: Any) -> list[str]:
    return [tool["function"]["name"] for tool in request.body.get("tools", [])]


def tool_results(request: Any) -> list[str]:
    return [str(m["content"]) for m in request.body["messages"] if m["role"] == "tool"]


def call(name: str, **args: Any) -> Turn:
    return Turn(tool_calls=[ScriptedToolCall(name, args)])


def test_example_tool_calls_read_bash_and_a_codemode_tool_as_nested_calls(tau: TauCommand) -> None:
    notes = "alpha\nbeta\ngamma\ndelta\n"
    (tau.work / "notes.txt").write_text(notes, encoding="utf-8")
    (tau.work / "watch.py").write_text(WATCH, encoding="utf-8")
    log = tau.work / "watch.log"
    tau.env["WATCH_LOG"] = str(log)
    tau.server.add(call("inspect_file", path="notes.txt"), Turn(text="Done."))

    done = tau.run(
        "-p", "--mode", "json", *MODEL, "-e", str(EXAMPLE), "-e", str(tau.work / "watch.py"), "inspect it"
    )

    assert done.returncode == 0, done.stderr
    # file_digest (exposure "codemode") is not declared to the model; inspect_file is.
    assert tool_names(tau.server.requests[0]) == ["read", "bash", "edit", "write", "inspect_file"]
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    tools = [e for e in events if str(e.get("type", "")).startswith("tool_execution_")]
    outer = tools[0]["toolCallId"]
    shape = [
        (e["type"], e["toolCallId"], e["toolName"], e.get("parentToolCallId"))
        for e in tools
        if e["type"] != "tool_execution_update"
    ]
    assert shape == [
        ("tool_execution_start", outer, "inspect_file", None),
        ("tool_execution_start", f"{outer}/1", "read", outer),
        ("tool_execution_end", f"{outer}/1", "read", outer),
        ("tool_execution_start", f"{outer}/2", "bash", outer),
        ("tool_execution_end", f"{outer}/2", "bash", outer),
        ("tool_execution_start", f"{outer}/3", "file_digest", outer),
        ("tool_execution_end", f"{outer}/3", "file_digest", outer),
        ("tool_execution_end", outer, "inspect_file", None),
    ]
    assert all(e["isError"] is False for e in tools if e["type"] == "tool_execution_end")
    # The tool's own update reaches the stream as the calling tool's.
    updates = [e for e in tools if e["type"] == "tool_execution_update" and e["toolCallId"] == outer]
    assert [u["partialResult"]["content"][0]["text"] for u in updates] == ["read done"]
    # What the model gets back: the calling tool's own text, built from the nested results.
    digest = hashlib.sha256(notes.encode()).hexdigest()
    (result,) = tool_results(tau.server.requests[-1])
    assert "alpha\nbeta\ngamma" in result
    assert "delta" not in result.split("line count")[0]  # read's limit of 3 lines
    assert "line count: 4" in result
    assert result.endswith(f"sha256: {digest}")
    # Nested calls reach the extensions' tool_call handlers with the caller's id.
    seen = [json.loads(line) for line in log.read_text().splitlines()]
    assert seen == [
        ["inspect_file", outer, None],
        ["read", f"{outer}/1", outer],
        ["bash", f"{outer}/2", outer],
        ["file_digest", f"{outer}/3", outer],
    ]
    # The transcript has one tool result, carrying pi's nestedCalls record.
    entries = [json.loads(line) for line in tau.session_files()[0].read_text().splitlines()]
    results = [e["message"] for e in entries if e.get("message", {}).get("role") == "toolResult"]
    assert [r["toolName"] for r in results] == ["inspect_file"]
    record = results[0]["nestedCalls"]
    assert record["complete"] is True
    assert [(c["id"], c["name"], c["status"], c["arguments"]) for c in record["calls"]] == [
        (f"{outer}/1", "read", "ok", {"path": "notes.txt", "limit": 3}),
        (f"{outer}/2", "bash", "ok", {"command": "wc -l < 'notes.txt'"}),
        (f"{outer}/3", "file_digest", "ok", {"path": "notes.txt"}),
    ]
    # ctx.tools: the active tools and the codemode-exposed one.
    assert results[0]["details"]["callable"] == [
        "read",
        "bash",
        "edit",
        "write",
        "inspect_file",
        "file_digest",
    ]


def test_a_failed_nested_call_is_an_error_outcome_not_an_exception(tau: TauCommand) -> None:
    (tau.work / "watch.py").write_text(WATCH, encoding="utf-8")
    tau.env["WATCH_LOG"] = str(tau.work / "watch.log")
    tau.server.add(call("inspect_file", path="missing.txt"), Turn(text="Done."))

    done = tau.run("-p", "--mode", "json", *MODEL, "-e", str(EXAMPLE), "-e", str(tau.work / "watch.py"), "go")

    assert done.returncode == 0, done.stderr
    (result,) = tool_results(tau.server.requests[-1])
    assert result.startswith("cannot read missing.txt: ")
    entries = [json.loads(line) for line in tau.session_files()[0].read_text().splitlines()]
    (message,) = [e["message"] for e in entries if e.get("message", {}).get("role") == "toolResult"]
    assert message["isError"] is False
    (nested,) = message["nestedCalls"]["calls"]
    assert nested["name"] == "read" and nested["status"] == "error" and "missing.txt" in nested["error"]


EXPOSURES = textwrap.dedent(
    """
    import json
    from tau.extensions import ToolAnnotations, ToolDefinition, ToolNamespace

    def setup(tau):
        def plain(name):
            def execute(tool_call_id, params, signal, on_update, ctx):
                return f"{name} ran"
            return execute

        for exposure in ("direct", "model-only", "codemode", "deferred", "hidden"):
            name = exposure.replace("-", "_") + "_tool"
            tau.register_tool(ToolDefinition(
                name=name, description=f"The {exposure} tool.", parameters={"type": "object"},
                execute=plain(name), exposure=exposure,
                namespace=ToolNamespace(name="demo", description="Demo tools") if exposure == "codemode" else None,
                annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False) if exposure == "deferred" else None,
            ))

        async def probe(tool_call_id, params, signal, on_update, ctx):
            callable_names = [t.name for t in ctx.tools]
            outcomes = {}
            for name in ("direct_tool", "model_only_tool", "codemode_tool", "deferred_tool", "hidden_tool", "nope"):
                outcome = await ctx.execute_tool(name, {})
                outcomes[name] = [outcome.is_error, outcome.result.content[0].text]
            blocked = await ctx.execute_tool("bash", {"command": "echo forbidden"})
            invalid = await ctx.execute_tool("read", {"path": 3})
            # Re-registered hidden: withdrawn (tools cannot be unregistered).
            tau.register_tool(ToolDefinition(
                name="direct_tool", description="Withdrawn.", parameters={"type": "object"},
                execute=plain("direct_tool"), exposure="hidden",
            ))
            tau.set_active_tools([*tau.get_active_tools(), "codemode_tool", "hidden_tool"])
            infos = {
                i.name: [i.exposure, i.namespace.name if i.namespace else None,
                         i.annotations.to_json() if i.annotations else None, i.reaches_tools is not None]
                for i in tau.get_all_tools()
            }
            return json.dumps({
                "callable": callable_names,
                "outcomes": outcomes,
                "blocked": [blocked.is_error, blocked.result.content[0].text],
                "invalid": invalid.is_error,
                "active": tau.get_active_tools(),
                "infos": infos,
            })

        tau.register_tool(ToolDefinition(
            name="probe", description="Probe the exposures.", parameters={"type": "object"},
            execute=probe, exposure="model-only", reaches_tools=lambda params: "all",
        ))
    """
)


def test_exposure_decides_what_is_declared_and_what_other_tools_call(tau: TauCommand) -> None:
    (tau.work / "exposures.py").write_text(EXPOSURES, encoding="utf-8")
    (tau.work / "watch.py").write_text(WATCH, encoding="utf-8")
    tau.env["WATCH_LOG"] = str(tau.work / "watch.log")
    tau.server.add(call("probe"), Turn(text="Done."))

    done = tau.run(
        "-p", *MODEL, "-e", str(tau.work / "exposures.py"), "-e", str(tau.work / "watch.py"), "probe"
    )

    assert done.returncode == 0, done.stderr
    # direct and model-only tools are declared (activated on registration); the others are not.
    assert tool_names(tau.server.requests[0]) == [
        "read",
        "bash",
        "edit",
        "write",
        "direct_tool",
        "model_only_tool",
        "probe",
    ]
    report = json.loads(tool_results(tau.server.requests[-1])[0])
    # Callable: active tools but model-only ones, and codemode/deferred ones whether active or not.
    assert report["callable"] == [
        "read",
        "bash",
        "edit",
        "write",
        "direct_tool",
        "codemode_tool",
        "deferred_tool",
    ]
    outcomes = report["outcomes"]
    assert outcomes["direct_tool"] == [False, "direct_tool ran"]
    assert outcomes["codemode_tool"] == [False, "codemode_tool ran"]
    assert outcomes["deferred_tool"] == [False, "deferred_tool ran"]
    assert outcomes["model_only_tool"] == [True, "Tool model_only_tool not found"]
    assert outcomes["hidden_tool"] == [True, "Tool hidden_tool not found"]
    assert outcomes["nope"] == [True, "Tool nope not found"]
    # A tool_call handler's block and a validation error come back as error outcomes.
    assert report["blocked"] == [True, "no forbidden commands"]
    assert report["invalid"] is True
    # set_active_tools ignores hidden tools; an explicitly activated codemode tool is declared.
    assert report["active"] == [
        "read",
        "bash",
        "edit",
        "write",
        "model_only_tool",
        "probe",
        "codemode_tool",
    ]
    assert "codemode_tool" in tool_names(tau.server.requests[-1])
    assert "hidden_tool" not in tool_names(tau.server.requests[-1])
    infos = report["infos"]
    assert infos["direct_tool"] == ["hidden", None, None, False]
    assert infos["deferred_tool"] == ["deferred", None, {"readOnlyHint": True, "openWorldHint": False}, False]
    assert infos["model_only_tool"] == ["model-only", None, None, False]
    assert infos["codemode_tool"] == ["codemode", "demo", None, False]
    assert infos["hidden_tool"] == ["hidden", None, None, False]
    assert infos["probe"] == ["model-only", None, None, True]
    assert infos["read"] == ["direct", None, None, False]


LOADOUT = textwrap.dedent(
    """
    from tau.extensions import ToolDefinition, ToolLoadoutChanges

    def setup(tau):
        def prepare(loadout):
            callable_names = ", ".join(t.name for t in loadout.callable if t.name != "runner")
            return ToolLoadoutChanges(
                descriptions={"runner": f"Runs shell commands through: {callable_names}."},
                hidden_declarations=["bash"],
            )

        async def execute(tool_call_id, params, signal, on_update, ctx):
            partials = []
            outcome = await ctx.execute_tool("bash", {"command": params["command"]}, on_update=partials.append)
            return f"{outcome.result.content[0].text.strip()} ({'updates' if partials else 'no updates'})"

        tau.register_tool(ToolDefinition(
            name="runner", description="Runs shell commands.",
            parameters={"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
            execute=execute, prepare_loadout=prepare,
        ))
    """
)


def test_prepare_loadout_hides_declarations_that_stay_callable(tau: TauCommand) -> None:
    (tau.work / "loadout.py").write_text(LOADOUT, encoding="utf-8")
    tau.server.add(call("runner", command="echo through runner"), Turn(text="Done."))

    done = tau.run("-p", *MODEL, "-e", str(tau.work / "loadout.py"), "run")

    assert done.returncode == 0, done.stderr
    first = tau.server.requests[0]
    assert tool_names(first) == ["read", "edit", "write", "runner"]
    description = next(
        t["function"]["description"] for t in first.body["tools"] if t["function"]["name"] == "runner"
    )
    assert description == "Runs shell commands through: read, bash, edit, write."
    # bash is still active and callable: the runner's nested call runs it, its partial results
    # reaching the runner's on_update.
    assert tool_results(tau.server.requests[-1])[0] == "through runner (updates)"


BROKEN_LOADOUT = textwrap.dedent(
    """
    from tau.extensions import ToolDefinition

    def setup(tau):
        def prepare(loadout):
            raise RuntimeError("no loadout today")

        tau.register_tool(ToolDefinition(
            name="broken", description="Has a broken loadout hook.", parameters={"type": "object"},
            execute=lambda call_id, params, signal, on_update, ctx: "ok", prepare_loadout=prepare,
        ))
    """
)


def test_a_prepare_loadout_that_raises_is_reported_and_changes_nothing(tau: TauCommand) -> None:
    (tau.work / "broken.py").write_text(BROKEN_LOADOUT, encoding="utf-8")
    tau.server.add(Turn(text="Plain."))

    done = tau.run("-p", *MODEL, "-e", str(tau.work / "broken.py"), "hello")

    assert done.returncode == 0, done.stderr
    assert tool_names(tau.server.requests[0]) == ["read", "bash", "edit", "write", "broken"]
    assert done.stderr.count("prepare_loadout failed: no loadout today") == 1, done.stderr


DEFERRED = textwrap.dedent(
    """
    from tau.extensions import ToolDefinition, ToolNamespace

    def setup(tau):
        tau.register_tool(ToolDefinition(
            name="weather_lookup", description="Look up the weather forecast of a city.",
            parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
            execute=lambda call_id, params, signal, on_update, ctx: f"sunny in {params['city']}",
            exposure="deferred",
        ))
        tau.register_tool(ToolDefinition(
            name="stock_quote", description="The price of a stock ticker.", parameters={"type": "object"},
            execute=lambda call_id, params, signal, on_update, ctx: "42",
            exposure="codemode",
            namespace=ToolNamespace(
                name="market", aliases=("stocks",), description="Market data", instructions="Quotes are delayed."
            ),
        ))
    """
)


def test_builtin_tool_search_finds_and_declares_a_deferred_extension_tool(tau: TauCommand) -> None:
    (tau.work / "deferred.py").write_text(DEFERRED, encoding="utf-8")
    tau.server.add(
        call("tool_search", query="weather forecast"),
        call("weather_lookup", city="Oslo"),
        Turn(text="Done."),
    )

    done = tau.run("-p", *MODEL, "-e", str(tau.work / "deferred.py"), "--tools", "+tool_search", "weather?")

    assert done.returncode == 0, done.stderr
    first, second, last = tau.server.requests
    assert tool_names(first) == ["read", "bash", "edit", "write", "tool_search"]
    assert tool_results(second)[0] == (
        "Loaded 1 tool. They are available from your next call:\n"
        "- weather_lookup: Look up the weather forecast of a city."
    )
    assert tool_names(second) == ["read", "bash", "edit", "write", "tool_search", "weather_lookup"]
    assert tool_results(last)[-1] == "sunny in Oslo"


def test_without_plus_tool_search_deferred_tools_stay_undeclared(tau: TauCommand) -> None:
    (tau.work / "deferred.py").write_text(DEFERRED, encoding="utf-8")
    tau.server.add(Turn(text="Plain."))
    done = tau.run("-p", *MODEL, "-e", str(tau.work / "deferred.py"), "hello")
    assert done.returncode == 0, done.stderr
    assert tool_names(tau.server.requests[0]) == ["read", "bash", "edit", "write"]


def test_codemode_scripts_list_codemode_tools_and_call_deferred_ones(tau: TauCommand) -> None:
    (tau.work / "deferred.py").write_text(DEFERRED, encoding="utf-8")
    script = (
        "const listed = ALL_TOOLS.map((t) => t.name);\n"
        "const found = (await searchTools('weather')).map((t) => t.name);\n"
        "const ns = await describeNamespace('stocks');\n"
        "const inMarket = (await searchTools('', { namespace: 'market' })).map((t) => t.name);\n"
        "return [listed, found, await tools.weather_lookup({ city: 'Rome' }), await tools.stock_quote({}), ns, inMarket];"
    )
    tau.server.add(call("codemode", code=script), Turn(text="Done."))

    done = tau.run("-p", *MODEL, "-e", str(tau.work / "deferred.py"), "--tools", "+codemode", "script")

    assert done.returncode == 0, done.stderr
    output = tool_results(tau.server.requests[-1])[0].split("Output:\n", 1)[1]
    listed, found, weather, quote, namespace, in_market = json.loads(output)
    assert "stock_quote" in listed and "weather_lookup" not in listed
    assert "weather_lookup" not in found
    assert (weather, quote) == ("sunny in Rome", "42")
    # describeNamespace() and searchTools()'s namespace option know extension namespaces, by alias too.
    assert namespace == {
        "name": "market",
        "tools": ["stock_quote"],
        "description": "Market data",
        "instructions": "Quotes are delayed.",
    }
    assert in_market == ["stock_quote"]


ANNOTATED_SERVER = textwrap.dedent(
    """
    from mcp.server.mcpserver import MCPServer
    from mcp.types import ToolAnnotations

    server = MCPServer("calc", instructions="Arithmetic for the tests.")

    @server.tool(annotations=ToolAnnotations(readOnlyHint=True, openWorldHint=False))
    def add(a: int, b: int) -> int:
        \"\"\"Add two numbers.\"\"\"
        return a + b

    if __name__ == "__main__":
        server.run()
    """
)

MCP_CALLER = textwrap.dedent(
    """
    import json
    from tau.extensions import ToolDefinition

    def setup(tau):
        async def execute(tool_call_id, params, signal, on_update, ctx):
            outcome = await ctx.execute_tool("mcp__calc__add", {"a": 2, "b": 40})
            info = next(i for i in tau.get_all_tools() if i.name == "mcp__calc__add")
            return json.dumps({
                "sum": outcome.result.content[0].text,
                "error": outcome.is_error,
                "exposure": info.exposure,
                "annotations": info.annotations.to_json() if info.annotations else None,
                "namespace": [info.namespace.name, list(info.namespace.aliases), info.namespace.description,
                              info.namespace.instructions] if info.namespace else None,
            })

        tau.register_tool(ToolDefinition(
            name="sum_it", description="Adds through MCP.", parameters={"type": "object"}, execute=execute,
        ))
    """
)


def test_mcp_tools_carry_their_annotations_and_namespace_and_tools_call_them(
    tau: TauCommand, tmp_path: Path
) -> None:
    (tmp_path / "calc.py").write_text(ANNOTATED_SERVER, encoding="utf-8")
    servers = {
        "calc": {
            "command": sys.executable,
            "args": [str(tmp_path / "calc.py")],
            "description": "Calculator",
            "exposure": "direct",
        }
    }
    (tau.agent_dir / "mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    (tau.work / "caller.py").write_text(MCP_CALLER, encoding="utf-8")
    tau.server.add(call("sum_it"), Turn(text="Done."))

    done = tau.run("-p", *MODEL, "-e", str(tau.work / "caller.py"), "add")

    assert done.returncode == 0, done.stderr
    report = json.loads(tool_results(tau.server.requests[-1])[0])
    assert report == {
        "sum": "42",
        "error": False,
        "exposure": "direct",
        "annotations": {"readOnlyHint": True, "openWorldHint": False},
        "namespace": ["mcp__calc", ["calc"], "Calculator", "Arithmetic for the tests."],
    }


COSTLY = textwrap.dedent(
    """
    from tau.agent.tool import AgentToolResult
    from tau.ai.types import Cost, TextContent, Usage
    from tau.extensions import ToolDefinition

    def spent(tokens, dollars):
        return Usage(input=tokens, total_tokens=tokens, cost=Cost(input=dollars, total=dollars))

    def setup(tau):
        def costly(call_id, params, signal, on_update, ctx):
            return AgentToolResult([TextContent("paid")], usage=spent(100, 0.25))

        tau.register_tool(ToolDefinition(
            name="costly", description="Costs money.", parameters={"type": "object"}, execute=costly,
            exposure="codemode",
        ))

        async def spender(call_id, params, signal, on_update, ctx):
            await ctx.execute_tool("costly", {})
            await ctx.execute_tool("costly", {})
            return AgentToolResult([TextContent("spent")], usage=spent(10, 0.5))

        tau.register_tool(ToolDefinition(
            name="spender", description="Calls costly twice.", parameters={"type": "object"}, execute=spender,
        ))
    """
)


def test_the_usage_of_nested_calls_counts_as_the_calling_tools(tau: TauCommand) -> None:
    (tau.work / "costly.py").write_text(COSTLY, encoding="utf-8")
    tau.server.add(call("spender"), Turn(text="Done."))

    done = tau.run("-p", *MODEL, "-e", str(tau.work / "costly.py"), "spend")

    assert done.returncode == 0, done.stderr
    entries = [json.loads(line) for line in tau.session_files()[0].read_text().splitlines()]
    (message,) = [e["message"] for e in entries if e.get("message", {}).get("role") == "toolResult"]
    assert message["toolName"] == "spender"
    assert message["usage"]["input"] == 210 and message["usage"]["totalTokens"] == 210
    assert message["usage"]["cost"]["total"] == 1.0
