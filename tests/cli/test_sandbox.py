"""``--sandbox``: a real ``tau -p`` whose fake model runs commands and edits under real bubblewrap.

Each test lets the model try one thing and checks the disk afterwards: what the fence allows is
there, what it refuses is untouched, and the model was told so.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest
from tau_command import MODEL, TauCommand

from tau.modes.rpc_client import RpcClient
from tau.testing.fake_llm import RecordedRequest, ScriptedToolCall, Turn

WRITABLE = ("--sandbox", "workspace-write")


def tool_result(request: RecordedRequest) -> str:
    """The text of the last tool result the model was sent."""
    [message] = [m for m in request.body["messages"][-1:] if m["role"] == "tool"]
    content = message["content"]
    return content if isinstance(content, str) else "".join(part["text"] for part in content)


def run_tool(
    tau: TauCommand, tool: str, arguments: dict[str, Any], *flags: str
) -> tuple[subprocess.CompletedProcess[str], str]:
    """Run ``tau -p`` whose model calls ``tool`` once; the process and the result the model saw."""
    tau.server.add(Turn(tool_calls=[ScriptedToolCall(tool, arguments)]), Turn(text="Done."))
    result = tau.run(*MODEL, *(flags or WRITABLE), "-p", "go")
    assert result.returncode == 0, result.stderr
    return result, tool_result(tau.server.last_request)


def run_bash(tau: TauCommand, command: str, *flags: str) -> str:
    return run_tool(tau, "bash", {"command": command}, *flags)[1]


def test_a_command_writes_into_the_working_folder(tau: TauCommand) -> None:
    output = run_bash(tau, "echo made > made.txt && cat made.txt")
    assert output.strip() == "made"
    assert (tau.work / "made.txt").read_text() == "made\n"


def test_a_command_cannot_write_into_home(tau: TauCommand, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "notes.txt").write_text("mine\n")
    tau.env["HOME"] = str(home)
    output = run_bash(tau, 'echo changed > "$HOME/notes.txt"; echo new > "$HOME/new.txt"')
    assert "Read-only file system" in output
    assert (home / "notes.txt").read_text() == "mine\n"
    assert not (home / "new.txt").exists()


def test_a_command_cannot_write_into_etc(tau: TauCommand) -> None:
    target = Path("/etc") / f"tau-sandbox-test-{os.getpid()}"
    try:
        output = run_bash(tau, f"echo planted > {target}")
        assert "Read-only file system" in output
        assert not target.exists()
    finally:
        target.unlink(missing_ok=True)


def test_a_command_cannot_write_the_agent_folder(tau: TauCommand) -> None:
    settings = tau.agent_dir / "settings.json"
    settings.write_text("{}\n")
    output = run_bash(tau, f'echo \'{{"sandbox": "off"}}\' > {settings}; touch {tau.agent_dir}/trust.json')
    assert output.count("Read-only file system") == 2
    assert settings.read_text() == "{}\n"
    assert not (tau.agent_dir / "trust.json").exists()


def test_a_command_cannot_write_the_project_settings(tau: TauCommand) -> None:
    (tau.work / ".tau").mkdir()
    settings = tau.work / ".tau" / "settings.json"
    settings.write_text("{}\n")
    output = run_bash(tau, 'echo \'{"sandbox": "off"}\' > .tau/settings.json')
    assert "Read-only file system" in output
    assert settings.read_text() == "{}\n"


def test_a_command_cannot_create_a_missing_project_config_folder(tau: TauCommand) -> None:
    output = run_bash(tau, "mkdir -p .tau .pi; echo '{}' > .tau/settings.json; echo '{}' > .pi/mcp.json")
    assert output.count("Read-only file system") == 2
    # The stand-in folders are taken away when tau ends: nothing is left in the working folder.
    assert not (tau.work / ".tau").exists() and not (tau.work / ".pi").exists()


def test_a_command_cannot_write_git_hooks_or_config(tau: TauCommand) -> None:
    subprocess.run(["git", "init", "-q", str(tau.work)], check=True)
    config = (tau.work / ".git" / "config").read_text()
    output = run_bash(
        tau,
        "echo 'echo pwned' > .git/hooks/pre-commit; git config core.hooksPath /tmp; git add -A && echo added",
    )
    assert "Read-only file system" in output
    assert not (tau.work / ".git" / "hooks" / "pre-commit").exists()
    assert (tau.work / ".git" / "config").read_text() == config
    assert "added" in output  # the rest of the repository is the working folder's: git still works


def test_read_only_lets_commands_write_only_the_temporary_folder(tau: TauCommand) -> None:
    output = run_bash(
        tau,
        'echo x > here.txt; echo y > "$TMPDIR/scratch" && cat "$TMPDIR/scratch"',
        "--sandbox",
        "read-only",
    )
    assert "Read-only file system" in output and output.rstrip().endswith("y")
    assert not (tau.work / "here.txt").exists()


def _sleeping(marker: str) -> list[str]:
    found = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout.split()
    return [pid for pid in found if int(pid) != os.getpid()]


def test_what_a_command_leaves_running_is_gone_when_the_call_ends(tau: TauCommand) -> None:
    marker = f"sleep {1000 + os.getpid() % 1000}.5"
    seen_between_calls: list[list[str]] = []

    def after_the_call(request: RecordedRequest) -> Turn:  # the model's next request: the call is over
        seen_between_calls.append(_sleeping(marker))
        return Turn(text="Done.")

    # Out of the process group too (setsid): the call's leader (a child subreaper) catches that one.
    command = f"{marker} & setsid {marker} & echo started"
    tau.server.add(Turn(tool_calls=[ScriptedToolCall("bash", {"command": command})]), after_the_call)
    result = tau.run(*MODEL, *WRITABLE, "-p", "go")
    assert result.returncode == 0, result.stderr
    assert "started" in tool_result(tau.server.last_request)
    assert seen_between_calls == [[]]


def test_processes_started_by_processes_that_ended_are_gone_when_the_call_ends(tau: TauCommand) -> None:
    marker = f"sleep {3000 + os.getpid() % 1000}.5"
    seen_between_calls: list[list[str]] = []

    def after_the_call(request: RecordedRequest) -> Turn:
        seen_between_calls.append(_sleeping(marker))
        return Turn(text="Done.")

    # Many orphans, each in a session of its own, their parents gone before the call ends.
    command = f"for i in $(seq 30); do (setsid sh -c '{marker} & {marker}' &); done; echo spawned"
    tau.server.add(Turn(tool_calls=[ScriptedToolCall("bash", {"command": command})]), after_the_call)
    result = tau.run(*MODEL, *WRITABLE, "-p", "go")
    assert result.returncode == 0, result.stderr
    assert "spawned" in tool_result(tau.server.last_request)
    assert seen_between_calls == [[]]


def test_a_repository_made_during_the_session_gets_its_hooks_protected(tau: TauCommand) -> None:
    hook = "echo planted > .git/hooks/pre-commit"
    tau.server.add(
        Turn(tool_calls=[ScriptedToolCall("bash", {"command": "git init -q . && echo made"})]),
        Turn(tool_calls=[ScriptedToolCall("bash", {"command": hook})]),
        Turn(text="Done."),
    )
    result = tau.run(*MODEL, *WRITABLE, "-p", "go")
    assert result.returncode == 0, result.stderr
    assert "Read-only file system" in tool_result(tau.server.last_request)
    assert not (tau.work / ".git" / "hooks" / "pre-commit").exists()


def test_a_fenced_command_that_times_out_is_ended_with_what_it_started(tau: TauCommand) -> None:
    marker = f"sleep {2000 + os.getpid() % 1000}.5"
    arguments = {"command": f"setsid {marker} & {marker}", "timeout": 1}
    _, output = run_tool(tau, "bash", arguments)
    assert "Command timed out after 1 seconds" in output
    assert _sleeping(marker) == []


def test_write_and_edit_refuse_a_path_outside_the_writable_folders(tau: TauCommand, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me\n")
    _, edited = run_tool(
        tau, "edit", {"path": str(outside), "edits": [{"oldText": "keep", "newText": "lost"}]}
    )
    assert "Refused by the sandbox (workspace-write)" in edited and str(tau.work) in edited
    _, written = run_tool(tau, "write", {"path": str(outside), "content": "lost\n"})
    assert "Refused by the sandbox (workspace-write)" in written
    assert outside.read_text() == "keep me\n"


def test_write_refuses_the_project_settings_and_allows_the_working_folder(tau: TauCommand) -> None:
    _, refused = run_tool(tau, "write", {"path": ".tau/settings.json", "content": '{"sandbox": "off"}'})
    assert "stays read-only" in refused
    assert not (tau.work / ".tau").exists()
    _, written = run_tool(tau, "write", {"path": "src/ok.txt", "content": "fine\n"})
    assert "Successfully wrote" in written
    assert (tau.work / "src" / "ok.txt").read_text() == "fine\n"


def test_the_sandbox_setting_and_its_writable_roots_apply(tau: TauCommand, tmp_path: Path) -> None:
    extra = tmp_path / "cache"
    extra.mkdir()
    settings = {"sandbox": {"mode": "workspace-write", "writableRoots": [str(extra)]}}
    (tau.agent_dir / "settings.json").write_text(json.dumps(settings))
    output = run_bash(tau, f"echo cached > {extra}/c.txt && echo ok")
    assert output.strip() == "ok" and (extra / "c.txt").read_text() == "cached\n"
    prompt = tau.server.last_request.body["messages"][0]["content"]
    assert (
        f"Sandbox: workspace-write. Commands and file edits may write {os.path.realpath(tau.work)}, {extra}"
        in prompt
    )


def test_an_untrusted_project_cannot_turn_the_sandbox_off(tau: TauCommand) -> None:
    (tau.work / ".tau").mkdir()
    (tau.work / ".tau" / "settings.json").write_text('{"sandbox": "off"}')
    (tau.agent_dir / "settings.json").write_text('{"sandbox": "read-only"}')
    output = run_bash(tau, "echo x > here.txt", "--no-approve")
    assert "Read-only file system" in output and not (tau.work / "here.txt").exists()


# -- the network --------------------------------------------------------------------------------


class _Hello(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"hello from outside")

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def outside_server() -> Any:
    server = HTTPServer(("127.0.0.1", 0), _Hello)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def _fetch(url: str) -> str:
    script = f'import urllib.request; print(urllib.request.urlopen("{url}", timeout=5).read().decode())'
    return f"{sys.executable} -c '{script}'"


def test_the_network_is_off_by_default(tau: TauCommand, outside_server: str) -> None:
    output = run_bash(tau, _fetch(outside_server))
    assert "Connection refused" in output and "hello from outside" not in output


def test_network_on_reaches_a_server_outside(tau: TauCommand, outside_server: str) -> None:
    (tau.agent_dir / "settings.json").write_text('{"sandbox": {"network": "on"}}')
    output = run_bash(tau, _fetch(outside_server))
    assert output.strip() == "hello from outside"


def _curl(url: str, *flags: str) -> str:
    return f"curl -sS --max-time 10 {' '.join(flags)} {url}; echo exit=$?"


def test_a_listed_host_is_reached_through_the_proxy(tau: TauCommand, outside_server: str) -> None:
    (tau.agent_dir / "settings.json").write_text('{"sandbox": {"network": ["127.0.0.1"]}}')
    output = run_bash(tau, _curl(outside_server))
    assert "hello from outside" in output and "exit=0" in output


def test_a_host_not_listed_is_refused_by_the_proxy_with_a_reason(
    tau: TauCommand, outside_server: str
) -> None:
    (tau.agent_dir / "settings.json").write_text('{"sandbox": {"network": ["example.org"]}}')
    output = run_bash(tau, _curl(outside_server, "--fail-with-body"))
    assert "hello from outside" not in output
    assert "127.0.0.1" in output and "is not in sandbox.network (allowed: example.org)" in output
    assert "exit=22" in output


def test_a_tunnel_to_a_host_not_listed_is_refused(tau: TauCommand, outside_server: str) -> None:
    (tau.agent_dir / "settings.json").write_text('{"sandbox": {"network": ["example.org"]}}')
    output = run_bash(tau, _curl(outside_server, "--proxytunnel"))
    assert "hello from outside" not in output and "403" in output and "exit=56" in output


def test_a_tunnel_to_a_listed_host_works(tau: TauCommand, outside_server: str) -> None:
    (tau.agent_dir / "settings.json").write_text('{"sandbox": {"network": ["127.0.0.1"]}}')
    output = run_bash(tau, _curl(outside_server, "--proxytunnel"))
    assert "hello from outside" in output and "exit=0" in output


def test_a_direct_connection_is_refused_beside_the_proxy(tau: TauCommand, outside_server: str) -> None:
    (tau.agent_dir / "settings.json").write_text('{"sandbox": {"network": ["127.0.0.1"]}}')
    output = run_bash(tau, _curl(outside_server, "--noproxy '*'"))
    assert "hello from outside" not in output and "exit=7" in output


def test_a_host_list_that_is_not_a_list_of_names_is_one_line(tau: TauCommand) -> None:
    (tau.agent_dir / "settings.json").write_text('{"sandbox": {"mode": "read-only", "network": [3]}}')
    line = _one_error_line(tau.run(*MODEL, "-p", "go"))
    assert "sandbox.network must be" in line and "list of host names" in line


# -- user commands (RPC's bash, the TUI's !) ------------------------------------------------------------


async def test_a_user_command_is_fenced_too(tau: TauCommand) -> None:
    command = [sys.executable, "-m", "tau", "--mode", "rpc", *MODEL, *WRITABLE]
    async with RpcClient(command, cwd=str(tau.work), env=tau.env) as rpc:
        data = await rpc.call("bash", command=f"echo x > {tau.agent_dir}/planted; echo ok > mine.txt")
    assert "Read-only file system" in data["output"]
    assert not (tau.agent_dir / "planted").exists() and (tau.work / "mine.txt").read_text() == "ok\n"


# -- what cannot start ------------------------------------------------------------------------------


def _one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    return lines[0]


def test_an_unknown_mode_on_the_command_line_is_one_line(tau: TauCommand) -> None:
    line = _one_error_line(tau.run(*MODEL, "--sandbox", "strict", "-p", "go"))
    assert '"strict"' in line and "off, read-only, workspace-write" in line
    assert tau.server.requests == []


def test_an_unknown_mode_in_the_settings_is_one_line(tau: TauCommand) -> None:
    (tau.agent_dir / "settings.json").write_text('{"sandbox": "locked"}')
    line = _one_error_line(tau.run(*MODEL, "-p", "go"))
    assert '"locked"' in line and "off, read-only, workspace-write" in line
    assert tau.server.requests == []


def test_a_writable_root_that_does_not_exist_is_one_line(tau: TauCommand, tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    settings = {"sandbox": {"mode": "workspace-write", "writableRoots": [str(missing)]}}
    (tau.agent_dir / "settings.json").write_text(json.dumps(settings))
    line = _one_error_line(tau.run(*MODEL, "-p", "go"))
    assert str(missing) in line and "not an existing folder" in line
    assert tau.server.requests == []


def test_a_missing_bubblewrap_is_one_line_saying_what_to_install(tau: TauCommand, tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    tau.env["PATH"] = str(empty)
    line = _one_error_line(tau.run(*MODEL, *WRITABLE, "-p", "go"))
    assert "bubblewrap" in line and "apt-get install bubblewrap" in line
    assert tau.server.requests == []


def test_refused_user_namespaces_are_one_line(tau: TauCommand, tmp_path: Path) -> None:
    # A bwrap that fails as it does where the kernel refuses unprivileged user namespaces.
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "bwrap").write_text(
        "#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n"
    )
    (fake / "bwrap").chmod(0o755)
    tau.env["PATH"] = f"{fake}:{tau.env['PATH']}"
    line = _one_error_line(tau.run(*MODEL, *WRITABLE, "-p", "go"))
    assert "user namespaces" in line and "No permissions" in line
    assert tau.server.requests == []


def test_a_fence_that_fails_late_is_one_line_before_any_request(tau: TauCommand, tmp_path: Path) -> None:
    # Print mode builds the session while bubblewrap starts and sees the start through only before
    # the first request: a bubblewrap that fails after a while still ends the run before any request.
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "bwrap").write_text(
        "#!/bin/sh\nsleep 0.5\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n"
    )
    (fake / "bwrap").chmod(0o755)
    tau.env["PATH"] = f"{fake}:{tau.env['PATH']}"
    line = _one_error_line(tau.run(*MODEL, *WRITABLE, "-p", "go"))
    assert "user namespaces" in line and "No permissions" in line
    assert tau.server.requests == []


def test_sandbox_off_runs_commands_as_before(tau: TauCommand, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    output = run_bash(tau, f"echo free > {outside} && echo ok", "--sandbox", "off")
    assert output.strip() == "ok" and outside.read_text() == "free\n"
    prompt = tau.server.last_request.body["messages"][0]["content"]
    assert "Sandbox:" not in prompt


# -- RPC: the state and changing the mode --------------------------------------------------------


async def test_get_state_reports_the_sandbox_and_set_sandbox_changes_it(tau: TauCommand) -> None:
    command = [sys.executable, "-m", "tau", "--mode", "rpc", *MODEL, *WRITABLE]
    async with RpcClient(command, cwd=str(tau.work), env=tau.env) as rpc:
        state = await rpc.call("get_state")
        work = os.path.realpath(tau.work)
        assert state["sandbox"] == {"mode": "workspace-write", "writableRoots": [work], "network": "off"}
        assert (await rpc.call("bash", command="echo one > one.txt"))["exitCode"] == 0
        changed = await rpc.call("set_sandbox", mode="read-only")
        assert changed["sandbox"] == {"mode": "read-only", "writableRoots": [], "network": "off"}
        refused = await rpc.call("bash", command="echo two > two.txt")
        assert "Read-only file system" in refused["output"]
        tau.server.add(Turn(text="Fine."))
        await rpc.prompt("hi")
    assert (tau.work / "one.txt").exists() and not (tau.work / "two.txt").exists()
    # The prompt the model gets says read-only now.
    sent = json.dumps(tau.server.last_request.body["messages"])
    assert "Sandbox: read-only." in sent and "Sandbox: workspace-write" not in sent


async def test_set_sandbox_outlives_a_new_session(tau: TauCommand) -> None:
    command = [sys.executable, "-m", "tau", "--mode", "rpc", *MODEL, *WRITABLE]
    async with RpcClient(command, cwd=str(tau.work), env=tau.env) as rpc:
        await rpc.call("set_sandbox", mode="read-only")
        await rpc.call("new_session")
        state = await rpc.call("get_state")
        assert state["sandbox"]["mode"] == "read-only"
        refused = await rpc.call("bash", command="echo two > two.txt")
        assert "Read-only file system" in refused["output"]
    assert not (tau.work / "two.txt").exists()


async def test_set_sandbox_refuses_an_unknown_mode_and_keeps_the_fence(tau: TauCommand) -> None:
    command = [sys.executable, "-m", "tau", "--mode", "rpc", *MODEL, "--sandbox", "read-only"]
    async with RpcClient(command, cwd=str(tau.work), env=tau.env) as rpc:
        response = await rpc.send({"type": "set_sandbox", "mode": "none"})
        assert response["success"] is False and '"none"' in response["error"]
        assert (await rpc.call("get_state"))["sandbox"]["mode"] == "read-only"
        refused = await rpc.call("bash", command="echo x > x.txt")
    assert "Read-only file system" in refused["output"] and not (tau.work / "x.txt").exists()


async def test_a_mode_change_keeps_the_prompt_before_the_sandbox_line(tau: TauCommand) -> None:
    command = [sys.executable, "-m", "tau", "--mode", "rpc", *MODEL, *WRITABLE]
    async with RpcClient(command, cwd=str(tau.work), env=tau.env) as rpc:
        tau.server.add(Turn(text="One."), Turn(text="Two."))
        await rpc.prompt("first")
        await rpc.call("set_sandbox", mode="read-only")
        await rpc.prompt("second")
    first, second = (request.body["messages"] for request in tau.server.requests)
    # The second request repeats the first one's messages byte for byte (the cached prefix) and
    # says the new mode after them.
    assert second[: len(first)] == first
    assert "Sandbox: workspace-write." in first[0]["content"]
    update = json.dumps(second[len(first) :])
    assert 'section \\"sandbox\\"' in update and "Sandbox: read-only." in update


# -- asking for more (escalate) ------------------------------------------------------------------


def _escalation_entries(tau: TauCommand) -> list[dict[str, Any]]:
    entries = []
    for path in tau.session_files():
        for line in path.read_text().splitlines():
            entry = json.loads(line)
            if entry.get("type") == "custom" and entry.get("customType") == "sandbox-escalation":
                entries.append(entry["data"])
    return entries


def test_the_bash_tool_offers_escalate_only_when_commands_are_fenced(tau: TauCommand) -> None:
    def bash_schema() -> dict[str, Any]:
        [tool] = [t for t in tau.server.last_request.body["tools"] if t["function"]["name"] == "bash"]
        return tool["function"]["parameters"]

    tau.server.add(Turn(text="hi"), Turn(text="hi"))
    assert tau.run(*MODEL, *WRITABLE, "-p", "go").returncode == 0
    assert "escalate" in bash_schema()["properties"]
    assert tau.run(*MODEL, "--sandbox", "off", "-p", "go").returncode == 0
    assert "escalate" not in bash_schema()["properties"]


def test_an_escalation_in_print_mode_is_refused_and_recorded(tau: TauCommand, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    escalate = {"reason": "the build writes its cache there", "writableRoots": [str(outside)]}
    command = f"echo x > {outside}/made.txt"
    _, output = run_tool(tau, "bash", {"command": command, "escalate": escalate})
    assert output.startswith("Escalation refused (nobody can approve it in this mode")
    assert "the command was not run" in output
    assert not (outside / "made.txt").exists()
    [entry] = _escalation_entries(tau)
    assert entry["decision"] == "denied" and entry["reason"] == "the build writes its cache there"
    assert entry["grant"] == {"writableRoots": [str(outside)]} and entry["command"] == command


def test_an_escalation_for_a_folder_that_does_not_exist_is_an_error_the_model_reads(
    tau: TauCommand, tmp_path: Path
) -> None:
    escalate = {"reason": "r", "writableRoots": [str(tmp_path / "missing")]}
    _, output = run_tool(tau, "bash", {"command": "true", "escalate": escalate})
    assert "escalate.writableRoots" in output and "is not an existing folder" in output
    assert _escalation_entries(tau) == []


async def _escalate_over_rpc(tau: TauCommand, outside: Path, answer: str) -> tuple[list[str], list[Any]]:
    """Two bash calls over RPC, the first asking to write ``outside``; the user answers ``answer``.
    The two results the model saw, and the questions asked."""
    escalate = {"reason": "write the report", "writableRoots": [str(outside)]}
    tau.server.add(
        Turn(
            tool_calls=[
                ScriptedToolCall("bash", {"command": f"echo 1 > {outside}/one", "escalate": escalate})
            ]
        ),
        Turn(tool_calls=[ScriptedToolCall("bash", {"command": f"echo 2 > {outside}/two"})]),
        Turn(text="Done."),
    )
    results: list[str] = []
    asked: list[Any] = []
    command = [sys.executable, "-m", "tau", "--mode", "rpc", *MODEL, *WRITABLE]
    async with RpcClient(command, cwd=str(tau.work), env=tau.env) as rpc:
        await rpc.call("prompt", message="go")
        async for event in rpc.events():
            if event.get("type") == "extension_ui_request" and event.get("method") == "select":
                asked.append(event)
                await rpc.respond_ui(event["id"], value=answer)
            if event.get("type") == "tool_execution_end":
                content = event["result"]["content"]
                results.append("".join(part.get("text", "") for part in content))
            if event.get("type") == "agent_settled":
                break
    return results, asked


async def test_an_escalation_allowed_once_over_rpc_widens_that_call_only(
    tau: TauCommand, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    results, asked = await _escalate_over_rpc(tau, outside, "Allow once")
    [question] = asked
    assert question["options"] == ["Allow once", "Allow for this session", "Deny"]
    assert "write the report" in question["title"] and str(outside) in question["title"]
    assert (outside / "one").read_text() == "1\n"
    assert not (outside / "two").exists() and "Read-only file system" in results[1]
    [entry] = _escalation_entries(tau)
    assert entry["decision"] == "once" and entry["why"] == "the user answered"


async def test_an_escalation_allowed_for_the_session_over_rpc_lasts(tau: TauCommand, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    results, _ = await _escalate_over_rpc(tau, outside, "Allow for this session")
    assert (outside / "one").read_text() == "1\n" and (outside / "two").read_text() == "2\n"
    assert "Read-only" not in results[1]
    assert [e["decision"] for e in _escalation_entries(tau)] == ["session"]


async def test_an_escalation_denied_over_rpc_runs_nothing(tau: TauCommand, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    results, _ = await _escalate_over_rpc(tau, outside, "Deny")
    assert results[0].startswith("Escalation refused (the user answered)")
    assert not (outside / "one").exists()
    assert [e["decision"] for e in _escalation_entries(tau)] == ["denied"]


async def test_an_escalation_for_a_host_allowed_once_reaches_it_through_the_proxy_that_call_only(
    tau: TauCommand, outside_server: str
) -> None:
    escalate = {"reason": "fetch the page", "network": ["127.0.0.1"]}
    fetch = _curl(outside_server)
    tau.server.add(
        Turn(tool_calls=[ScriptedToolCall("bash", {"command": fetch, "escalate": escalate})]),
        Turn(tool_calls=[ScriptedToolCall("bash", {"command": fetch})]),
        Turn(text="Done."),
    )
    results: list[str] = []
    command = [sys.executable, "-m", "tau", "--mode", "rpc", *MODEL, *WRITABLE]
    async with RpcClient(command, cwd=str(tau.work), env=tau.env) as rpc:
        await rpc.call("prompt", message="go")
        async for event in rpc.events():
            if event.get("type") == "extension_ui_request" and event.get("method") == "select":
                await rpc.respond_ui(event["id"], value="Allow once")
            if event.get("type") == "tool_execution_end":
                results.append("".join(p.get("text", "") for p in event["result"]["content"]))
            if event.get("type") == "agent_settled":
                break
    assert "hello from outside" in results[0] and "exit=0" in results[0]
    assert "hello from outside" not in results[1]
    assert [e["grant"] for e in _escalation_entries(tau)] == [{"network": ["127.0.0.1"]}]
