"""``tau --mode acp`` driven by the ACP SDK's client side against the fake LLM server."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pexpect
import pytest
from acp import (
    PROTOCOL_VERSION,
    RequestError,
    embedded_text_resource,
    image_block,
    resource_block,
    resource_link_block,
    spawn_agent_process,
    text_block,
)
from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    AllowedOutcome,
    AuthCapabilities,
    AvailableCommandsUpdate,
    ClientCapabilities,
    ConfigOptionUpdate,
    CreateTerminalResponse,
    CurrentModeUpdate,
    DeniedOutcome,
    EnvVariable,
    FileSystemCapabilities,
    HttpMcpServer,
    McpServerStdio,
    ReadTextFileResponse,
    RequestPermissionResponse,
    SessionNotification,
    TerminalExitStatus,
    TerminalOutputResponse,
    ToolCallProgress,
    ToolCallStart,
    UsageUpdate,
    UserMessageChunk,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)
from acp_wire import WireChecker
from tau_command import MODEL, TauCommand, tau_command

from tau.testing.fake_llm import Fault, ScriptedToolCall, Turn, text_turn, tool_turn
from tau.tools.bash import create_bash_tool
from tau.tools.errors import ToolError

pytestmark = pytest.mark.timeout(30)


class RecordingClient:
    """An ACP client: records every update (validated by the SDK's models on the way in), answers
    permission requests with ``answer``, and serves ``files`` from memory when given."""

    def __init__(self, answer: str | None = "allow-once", files: dict[str, str] | None = None) -> None:
        self.updates: list[SessionNotification] = []
        self.permission_requests: list[Any] = []
        self.answer = answer
        self.files = files

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(SessionNotification(session_id=session_id, update=update))

    async def request_permission(self, session_id: str, tool_call: Any, options: Any, **kwargs: Any) -> Any:
        self.permission_requests.append((tool_call, options))
        if self.answer is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=self.answer))

    async def read_text_file(self, session_id: str, path: str, **kwargs: Any) -> ReadTextFileResponse:
        assert self.files is not None
        return ReadTextFileResponse(content=self.files[path])

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> WriteTextFileResponse:
        assert self.files is not None
        self.files[path] = content
        return WriteTextFileResponse()

    def of(self, kind: type) -> list[Any]:
        return [n.update for n in self.updates if isinstance(n.update, kind)]

    def message_text(self) -> str:
        return "".join(u.content.text for u in self.of(AgentMessageChunk))


class TerminalClient(RecordingClient):
    """A client that offers terminals: each runs its command as a real subprocess (with a variable
    only the editor's environment has) and records what tau asked of it."""

    def __init__(self) -> None:
        super().__init__()
        self.processes: dict[str, asyncio.subprocess.Process] = {}
        self.outputs: dict[str, bytearray] = {}
        self.readers: dict[str, asyncio.Future[None]] = {}
        self.requests: list[tuple[str, Any]] = []

    async def create_terminal(
        self, session_id: str, command: str, args: Any = None, env: Any = None, cwd: Any = None, **kwargs: Any
    ) -> CreateTerminalResponse:
        terminal_id = f"term-{len(self.processes)}"
        self.requests.append(("create", (command, args, cwd, kwargs.get("output_byte_limit"))))
        environment = {**os.environ, "RUN_BY": "editor", **{e.name: e.value for e in env or []}}
        process = await asyncio.create_subprocess_exec(
            command, *(args or []), cwd=cwd, env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )
        self.processes[terminal_id], self.outputs[terminal_id] = process, bytearray()

        async def read() -> None:
            assert process.stdout is not None
            while chunk := await process.stdout.read(65536):
                self.outputs[terminal_id] += chunk

        self.readers[terminal_id] = asyncio.ensure_future(read())
        return CreateTerminalResponse(terminal_id=terminal_id)

    def _status(self, terminal_id: str) -> TerminalExitStatus | None:
        code = self.processes[terminal_id].returncode
        if code is None:
            return None
        return (
            TerminalExitStatus(exit_code=code) if code >= 0 else TerminalExitStatus(signal=f"signal {-code}")
        )

    async def terminal_output(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> TerminalOutputResponse:
        self.requests.append(("output", terminal_id))
        if self.processes[terminal_id].returncode is not None:
            await self.readers[terminal_id]
        output = self.outputs[terminal_id].decode()
        return TerminalOutputResponse(output=output, truncated=False, exit_status=self._status(terminal_id))

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> WaitForTerminalExitResponse:
        await self.processes[terminal_id].wait()
        status = self._status(terminal_id)
        assert status is not None
        return WaitForTerminalExitResponse(exit_code=status.exit_code, signal=status.signal)

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> None:
        self.requests.append(("kill", terminal_id))
        self.processes[terminal_id].kill()
        await self.processes[terminal_id].wait()

    async def release_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> None:
        self.requests.append(("release", terminal_id))


@pytest.fixture
def tau(tmp_path: Path) -> Iterator[TauCommand]:
    yield from tau_command(tmp_path)


@contextlib.asynccontextmanager
async def _spawn(
    tau: TauCommand, client: RecordingClient, *extra: str, model: bool = True
) -> AsyncIterator[Any]:
    """The SDK's client connected to a ``tau --mode acp`` process (``--model`` the fake server's
    unless ``model`` is false); at the end, every message either side sent must have matched the
    protocol's schema exactly."""
    wire = WireChecker()
    with wire.sdk_errors():
        async with spawn_agent_process(
            client,
            sys.executable,
            "-m",
            "tau",
            "--mode",
            "acp",
            *(MODEL if model else []),
            *extra,
            env=tau.env,
            cwd=str(tau.work),
            observers=[wire.observe],
        ) as (conn, process):
            yield conn, process
    assert wire.checked > 0 and wire.problems == []


async def _initialize(conn: Any, fs: bool = False, terminal: bool = False) -> Any:
    caps = ClientCapabilities(
        fs=FileSystemCapabilities(read_text_file=fs, write_text_file=fs), terminal=terminal
    )
    return await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=caps)


async def test_full_flow_new_prompt_with_tools_and_diff_cancel_then_load_in_a_new_process(
    tau: TauCommand,
) -> None:
    target = tau.work / "notes.txt"
    target.write_text("alpha\nbeta\n")
    tau.server.add(
        Turn(
            thinking="Let me look.",
            tool_calls=[ScriptedToolCall("read", {"path": "notes.txt"}, id="call-read")],
        ),
        tool_turn(
            "edit", {"path": "notes.txt", "edits": [{"oldText": "beta", "newText": "gamma"}]}, id="call-edit"
        ),
        text_turn("Changed beta to gamma."),
        # The second prompt stalls mid-stream until it is cancelled.
        Turn(
            text="This reply never ends " * 20,
            chunk_size=4,
            fault=Fault("stall", after_events=12, seconds=20),
        ),
    )
    client = RecordingClient()
    async with _spawn(tau, client) as (conn, process):
        init = await _initialize(conn)
        assert init.protocol_version == PROTOCOL_VERSION
        assert init.agent_capabilities.load_session is True
        assert init.agent_capabilities.prompt_capabilities.image is True
        assert init.agent_capabilities.prompt_capabilities.embedded_context is True
        new = await conn.new_session(cwd=str(tau.work), mcp_servers=[])
        session_id = new.session_id
        assert {o.id for o in new.config_options} >= {"model", "thinking"}

        answer = await conn.prompt(session_id=session_id, prompt=[text_block("Rename beta")])
        assert answer.stop_reason == "end_turn"
        assert client.message_text() == "Changed beta to gamma."
        assert "".join(u.content.text for u in client.of(AgentThoughtChunk)) == "Let me look."
        starts = {u.tool_call_id: u for u in client.of(ToolCallStart)}
        assert starts["call-read"].kind == "read" and starts["call-read"].title == "Read notes.txt"
        assert starts["call-read"].locations[0].path == str(target)
        assert starts["call-edit"].kind == "edit"
        finals = {u.tool_call_id: u for u in client.of(ToolCallProgress) if u.status is not None}
        assert finals["call-read"].status == "completed"
        diff = finals["call-edit"].content[0]
        assert diff.type == "diff" and (diff.path, diff.old_text, diff.new_text) == (
            str(target),
            "beta",
            "gamma",
        )
        assert finals["call-edit"].locations[0].line == 2
        assert target.read_text() == "alpha\ngamma\n"

        streaming = asyncio.ensure_future(conn.prompt(session_id=session_id, prompt=[text_block("Go on")]))
        while "This" not in client.message_text():
            await asyncio.sleep(0.02)
        await conn.cancel(session_id=session_id)
        assert (await asyncio.wait_for(streaming, 10)).stop_reason == "cancelled"
    assert process.returncode == 0

    files = tau.session_files()
    assert len(files) == 1
    assert json.loads(files[0].read_text().splitlines()[0])["id"] == session_id

    tau.server.add(text_turn("Still here."))
    replay = RecordingClient()
    async with _spawn(tau, replay) as (conn, process):
        await _initialize(conn)
        listed = await conn.list_sessions(cwd=str(tau.work))
        assert [s.session_id for s in listed.sessions] == [session_id]
        await conn.load_session(cwd=str(tau.work), session_id=session_id, mcp_servers=[])
        assert [u.content.text for u in replay.of(UserMessageChunk)] == ["Rename beta", "Go on"]
        assert "Changed beta to gamma." in replay.message_text()
        assert {u.tool_call_id for u in replay.of(ToolCallStart)} == {"call-read", "call-edit"}
        before = len(replay.updates)
        answer = await conn.prompt(session_id=session_id, prompt=[text_block("Still there?")])
        assert answer.stop_reason == "end_turn"
        assert "Still here." in "".join(
            u.update.content.text for u in replay.updates[before:] if isinstance(u.update, AgentMessageChunk)
        )
    # The model saw the whole conversation, the cancelled reply included.
    sent = json.dumps(tau.server.last_request.body)
    assert "Rename beta" in sent and "Still there?" in sent
    assert len(tau.session_files()) == 1

    # The editor's session continues in a terminal.
    tau.server.add(text_turn("From the terminal."))
    continued = tau.run("-c", "-p", "And now?", *MODEL)
    assert continued.returncode == 0 and "From the terminal." in continued.stdout
    assert "Still there?" in json.dumps(tau.server.last_request.body)
    assert len(tau.session_files()) == 1


@pytest.mark.parametrize(("answer", "blocked"), [("allow-once", False), ("reject", True)])
async def test_an_extension_confirm_becomes_a_permission_request_and_a_rejected_call_is_blocked(
    tau: TauCommand, answer: str, blocked: bool
) -> None:
    doomed = tau.work / "build"
    doomed.mkdir()
    gate = Path(__file__).parents[3] / "examples" / "extensions" / "permission_gate.py"
    tau.server.add(tool_turn("bash", {"command": "rm -rf build"}, id="call-rm"), text_turn("Done."))
    client = RecordingClient(answer=answer)
    async with _spawn(tau, client, "-e", str(gate)) as (conn, _):
        await _initialize(conn)
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


async def test_read_and_edit_go_through_the_clients_file_system_and_commands_are_offered(
    tau: TauCommand,
) -> None:
    path = str(tau.work / "unsaved.py")
    files = {path: "x = 1\n"}  # an editor buffer that was never saved to disk
    tau.server.add(
        tool_turn("read", {"path": "unsaved.py"}, id="call-read"),
        tool_turn("edit", {"path": "unsaved.py", "edits": [{"oldText": "x = 1", "newText": "x = 2"}]}),
        text_turn("Bumped."),
    )
    (tau.agent_dir / "prompts").mkdir()
    (tau.agent_dir / "prompts" / "review.md").write_text(
        "---\ndescription: Review the diff\n---\nReview it.\n"
    )
    client = RecordingClient(files=files)
    async with _spawn(tau, client) as (conn, _):
        await _initialize(conn, fs=True)
        session_id = (await conn.new_session(cwd=str(tau.work), mcp_servers=[])).session_id
        assert (
            await conn.prompt(session_id=session_id, prompt=[text_block("Bump x")])
        ).stop_reason == "end_turn"
    [commands] = client.of(AvailableCommandsUpdate)
    assert [(c.name, c.description) for c in commands.available_commands] == [("review", "Review the diff")]
    assert files[path] == "x = 2\n"
    assert not os.path.exists(path)
    read_result = next(u for u in client.of(ToolCallProgress) if u.tool_call_id == "call-read" and u.status)
    assert read_result.status == "completed" and "x = 1" in read_result.content[0].content.text


def test_end_of_input_during_a_prompt_exits_cleanly_with_the_session_file_whole(tau: TauCommand) -> None:
    tau.server.add(Turn(text="slow " * 50, chunk_size=5, fault=Fault("stall", after_events=5, seconds=20)))
    process = subprocess.Popen(
        [sys.executable, "-m", "tau", "--mode", "acp", *MODEL],
        cwd=tau.work,
        env=tau.env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdin is not None and process.stdout is not None

    def call(request_id: int, method: str, params: dict[str, Any]) -> None:
        line = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        process.stdin.write(json.dumps(line) + "\n")  # type: ignore[union-attr]
        process.stdin.flush()  # type: ignore[union-attr]

    call(0, "initialize", {"protocolVersion": PROTOCOL_VERSION})
    assert json.loads(process.stdout.readline())["result"]["protocolVersion"] == PROTOCOL_VERSION
    call(1, "session/new", {"cwd": str(tau.work), "mcpServers": []})
    session_id = json.loads(process.stdout.readline())["result"]["sessionId"]
    call(2, "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "Go"}]})
    while "agent_message_chunk" not in process.stdout.readline():  # the reply is streaming
        pass
    process.stdin.close()
    process.stdout.close()  # the editor is gone: no one reads the rest
    assert process.wait(timeout=10) == 0
    assert "Traceback" not in process.stderr.read()  # type: ignore[union-attr]
    [session_file] = tau.session_files()
    entries = [json.loads(line) for line in session_file.read_text().splitlines()]
    assert entries[0]["id"] == session_id
    assert any(e.get("message", {}).get("role") == "user" for e in entries)


def test_print_mode_does_not_import_the_acp_sdk(tau: TauCommand) -> None:
    tau.server.add(text_turn("hi"))
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "tau", "-p", "hi", *MODEL],
        cwd=tau.work,
        env=tau.env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 0
    imported = {line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines() if "|" in line}
    assert "tau.modes.acp" not in imported and "acp" not in imported


def test_the_mode_needs_neither_the_sdk_nor_pydantic(tau: TauCommand) -> None:
    hide = "import sys; sys.modules['acp'] = sys.modules['pydantic'] = None; from tau.cli import main; main()"
    request = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}
    result = subprocess.run(
        [sys.executable, "-c", hide, "--mode", "acp", *MODEL],
        cwd=tau.work,
        env=tau.env,
        input=json.dumps(request) + "\n",
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["result"]["agentInfo"]["name"] == "tau"


def test_the_protocol_can_go_to_a_regular_file(tau: TauCommand) -> None:
    requests = tau.work / "requests.jsonl"
    requests.write_text(
        json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}})
        + "\n"
    )
    log = tau.work / "acp.log"
    with requests.open() as stdin, log.open("w") as stdout:
        result = subprocess.run(
            [sys.executable, "-m", "tau", "--mode", "acp", *MODEL],
            cwd=tau.work,
            env=tau.env,
            stdin=stdin,
            stdout=stdout,
            stderr=subprocess.PIPE,
            text=True,
            timeout=30,
        )
    assert result.returncode == 0 and result.stderr == ""
    assert json.loads(log.read_text())["result"]["protocolVersion"] == 1


async def test_a_failed_model_request_answers_the_prompt_with_an_error_naming_it(tau: TauCommand) -> None:
    tau.server.add(
        Turn(fault=Fault("status", status=400, body={"error": {"message": "bad request: no such model"}}))
    )
    client = RecordingClient()
    async with _spawn(tau, client) as (conn, process):
        await _initialize(conn)
        session_id = (await conn.new_session(cwd=str(tau.work), mcp_servers=[])).session_id
        with pytest.raises(RequestError) as failure:
            await conn.prompt(session_id=session_id, prompt=[text_block("Hi")])
        assert "no such model" in json.dumps(failure.value.data)
    assert process.returncode == 0


async def test_prompt_blocks_reach_the_model_as_text_files_and_images(tau: TauCommand) -> None:
    models_json = tau.agent_dir / "models.json"
    models = json.loads(models_json.read_text())
    models["providers"]["local"]["models"][0]["input"] = ["text", "image"]
    models_json.write_text(json.dumps(models))
    tau.server.add(text_turn("Seen."))
    pixel = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
    linked = tau.work / "linked file.py"
    client = RecordingClient()
    async with _spawn(tau, client) as (conn, _):
        await _initialize(conn)
        session_id = (await conn.new_session(cwd=str(tau.work), mcp_servers=[])).session_id
        blocks = [
            text_block("Compare these"),
            resource_link_block("linked file.py", linked.as_uri()),
            resource_block(embedded_text_resource("file:///tmp/buffer.py", "print('unsaved')")),
            image_block(pixel, "image/png"),
        ]
        assert (await conn.prompt(session_id=session_id, prompt=blocks)).stop_reason == "end_turn"
    sent = json.dumps(tau.server.last_request.body)
    assert "Compare these" in sent
    assert json.dumps(f"@{linked}")[1:-1] in sent
    assert json.dumps("<file name=\"/tmp/buffer.py\">\nprint('unsaved')\n</file>")[1:-1] in sent
    assert pixel in sent


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
    async with _spawn(tau, client) as (conn, _):
        await _initialize(conn)
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
        # The reasoning model brought its default level, then the option chose another.
        assert [u.current_mode_id for u in client.of(CurrentModeUpdate)] == ["medium", "low"]
        await conn.prompt(session_id=new.session_id, prompt=[text_block("Hi")])
    assert tau.server.last_request.body["model"] == "other-model"
    entries = [json.loads(line) for line in tau.session_files()[0].read_text().splitlines()]
    levels = [e["thinkingLevel"] for e in entries if e["type"] == "thinking_level_change"]
    assert levels[-2:] == ["high", "low"]


async def test_a_todo_tool_updates_the_plan_and_each_prompt_reports_its_usage(tau: TauCommand) -> None:
    models_json = tau.agent_dir / "models.json"
    models = json.loads(models_json.read_text())
    # Dollars per million tokens: the scripted 10 input and 5 output tokens cost $1 each per call.
    models["providers"]["local"]["models"][0]["cost"] = {
        "input": 1e5,
        "output": 2e5,
        "cacheRead": 0,
        "cacheWrite": 0,
    }
    models_json.write_text(json.dumps(models))
    todo = Path(__file__).parents[3] / "examples" / "extensions" / "custom_tool.py"
    tau.server.add(
        tool_turn("todo", {"action": "add", "text": "Write the tests"}),
        tool_turn("todo", {"action": "done", "index": 1}),
        text_turn("Planned and done."),
    )
    client = RecordingClient()
    async with _spawn(tau, client, "-e", str(todo)) as (conn, _):
        await _initialize(conn)
        session_id = (await conn.new_session(cwd=str(tau.work), mcp_servers=[])).session_id
        answer = await conn.prompt(session_id=session_id, prompt=[text_block("Plan it")])
    plans = [[(e.content, e.status, e.priority) for e in u.entries] for u in client.of(AgentPlanUpdate)]
    assert plans == [[("Write the tests", "pending", "medium")], [("Write the tests", "completed", "medium")]]
    assert (answer.usage.input_tokens, answer.usage.output_tokens, answer.usage.total_tokens) == (30, 15, 45)
    [usage] = client.of(UsageUpdate)
    assert (usage.used, usage.size) == (15, 100000)
    assert usage.cost.currency == "USD" and usage.cost.amount == pytest.approx(6.0)


async def _local_bash(command: str, cwd: Path) -> str:
    """What tau's own bash tool tells the model (its spill file's name left out)."""
    os.environ["RUN_BY"] = "editor"
    try:
        await create_bash_tool(str(cwd)).execute("local", {"command": command}, None, None)
    except ToolError as failed:
        return re.sub(r" Full output: \S+\]", "]", str(failed))
    finally:
        del os.environ["RUN_BY"]
    raise AssertionError("the command should fail")


async def test_bash_runs_in_the_editors_terminal_truncated_as_tau_truncates_and_an_abort_kills_it(
    tau: TauCommand,
) -> None:
    command = "seq 1 3000; echo by $RUN_BY; exit 3"
    tau.server.add(
        tool_turn("bash", {"command": command}, id="call-seq"),
        text_turn("Counted."),
        tool_turn("bash", {"command": "sleep 30"}, id="call-sleep"),
        text_turn("never sent"),
    )
    client = TerminalClient()
    async with _spawn(tau, client) as (conn, _):
        await _initialize(conn, terminal=True)
        session_id = (await conn.new_session(cwd=str(tau.work), mcp_servers=[])).session_id
        answer = await conn.prompt(session_id=session_id, prompt=[text_block("Count")])
        assert answer.stop_reason == "end_turn"
        [seen] = [
            re.sub(r" Full output: \S+\]", "]", m["content"])
            for m in tau.server.last_request.body["messages"]
            if m["role"] == "tool"
        ]
        assert seen == await _local_bash(command, tau.work)  # cut as tau's own bash cuts it
        assert "\nby editor\n" in seen and "Command exited with code 3" in seen
        final = next(u for u in client.of(ToolCallProgress) if u.tool_call_id == "call-seq" and u.status)
        assert final.status == "failed"
        assert final.content[0].type == "terminal" and final.content[0].terminal_id == "term-0"
        assert "Command exited with code 3" in final.content[1].content.text

        sleeping = asyncio.ensure_future(conn.prompt(session_id=session_id, prompt=[text_block("Wait")]))
        while len(client.processes) < 2:
            await asyncio.sleep(0.02)
        await conn.cancel(session_id=session_id)
        assert (await asyncio.wait_for(sleeping, 10)).stop_reason == "cancelled"
    assert client.processes["term-1"].returncode == -9
    command, args, cwd, limit = client.requests[0][1]
    assert (command, args[0], cwd) == ("bash", "-c", str(tau.work)) and limit > 50 * 1024
    assert [r for r in client.requests if r[0] in ("kill", "release")] == [
        ("release", "term-0"),
        ("kill", "term-1"),
        ("release", "term-1"),
    ]


MCP_SERVER = """
import os
import sys
try:
    from mcp.server.fastmcp import FastMCP
except ImportError:  # mcp 2.x renamed FastMCP
    from mcp.server.mcpserver import MCPServer as FastMCP

server = FastMCP("notes")


@server.tool()
def shout(text: str) -> str:
    \"\"\"Say the text loudly.\"\"\"
    return text.upper() + os.environ.get("SUFFIX", "")


if len(sys.argv) > 1:
    server.run(transport="streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
else:
    server.run()
"""


async def test_the_mcp_servers_of_session_new_give_that_session_their_tools(tau: TauCommand) -> None:
    script = tau.work / "notes_server.py"
    script.write_text(MCP_SERVER)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    web = subprocess.Popen([sys.executable, str(script), str(port)], stderr=subprocess.DEVNULL)
    tau.server.add(
        tool_turn("tool_search", {"query": "shout loudly"}),
        Turn(
            tool_calls=[
                ScriptedToolCall("mcp__Editor_Notes__shout", {"text": "hello"}, id="call-stdio"),
                ScriptedToolCall("mcp__web__shout", {"text": "web"}, id="call-http"),
            ]
        ),
        text_turn("Shouted."),
    )
    stdio = McpServerStdio(
        name="Editor Notes",
        command=sys.executable,
        args=[str(script)],
        env=[EnvVariable(name="SUFFIX", value="!")],
    )
    http = HttpMcpServer(type="http", name="web", url=f"http://127.0.0.1:{port}/mcp", headers=[])
    client = RecordingClient()
    try:
        while socket.socket().connect_ex(("127.0.0.1", port)) != 0:  # the HTTP server is starting
            await asyncio.sleep(0.05)
        async with _spawn(tau, client) as (conn, _):
            capabilities = (await _initialize(conn)).agent_capabilities.mcp_capabilities
            assert (capabilities.http, capabilities.sse) == (True, False)
            session_id = (await conn.new_session(cwd=str(tau.work), mcp_servers=[stdio, http])).session_id
            answer = await conn.prompt(session_id=session_id, prompt=[text_block("Shout hello")])
            assert answer.stop_reason == "end_turn"
    finally:
        web.terminate()
        web.wait(10)
    finals = {u.tool_call_id: u for u in client.of(ToolCallProgress) if u.status}
    assert (
        finals["call-stdio"].status == "completed"
        and finals["call-stdio"].content[0].content.text == "HELLO!"
    )
    assert finals["call-http"].status == "completed" and finals["call-http"].content[0].content.text == "WEB"
    assert not (tau.agent_dir / "mcp.json").exists()  # the editor's servers are the session's, not saved


async def test_a_client_asking_for_another_protocol_version_is_answered_with_taus(tau: TauCommand) -> None:
    async with _spawn(tau, RecordingClient()) as (conn, _):
        for asked in (PROTOCOL_VERSION + 1, 0):
            assert (await conn.initialize(protocol_version=asked)).protocol_version == PROTOCOL_VERSION


def _login_in_a_terminal(tau: TauCommand, args: list[str], provider: str, key: str) -> None:
    """What an editor does with a terminal login: tau run with the method's arguments, in a
    terminal, answered by the user (the provider picked from the list, the key typed)."""
    child = pexpect.spawn(
        sys.executable, ["-m", "tau", *args], cwd=str(tau.work), env=tau.env, encoding="utf-8", timeout=20
    )
    child.expect(r"Select 1-\d+: ")
    number = re.search(rf"(\d+)\. {provider}\r?\n", child.before)
    assert number is not None, child.before
    child.sendline(number.group(1))
    child.expect(f"API key for {provider}: ")
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
    async with _spawn(tau, RecordingClient(), model=False) as (conn, _):
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
    async with _spawn(tau, RecordingClient()) as (conn, _):
        init = await _initialize(conn)
        assert [(m.id, getattr(m, "type", None)) for m in init.auth_methods] == [("tau-credentials", None)]
        await conn.authenticate(method_id="tau-credentials")  # a model is available: nothing to do
        with pytest.raises(RequestError) as unknown:
            await conn.authenticate(method_id="oauth")
        assert unknown.value.code == -32602
