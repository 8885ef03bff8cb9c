"""`tau -p` and `tau --mode json` end to end: a real process, a real server, real session files."""

from __future__ import annotations

import json
import os
import signal
import stat
import time
from pathlib import Path

import pytest
from tau_command import MODEL, TauCommand

from tau.testing.fake_llm import Fault, ScriptedToolCall, Turn


def test_print_mode_prints_the_final_reply(tau: TauCommand) -> None:
    tau.server.add(Turn(text="Hello from the model."))
    result = tau.run(*MODEL, "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Hello from the model.\n"
    assert tau.server.last_request.body["messages"][-1]["content"] == [{"type": "text", "text": "hi"}]


def test_print_mode_runs_tools_and_keeps_the_session(tau: TauCommand) -> None:
    tau.server.add(
        Turn(tool_calls=[ScriptedToolCall("bash", {"command": "echo tool-output"})]), Turn(text="Done.")
    )
    result = tau.run(*MODEL, "-p", "run it")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Done.\n"
    assert "tool-output" in json.dumps(tau.server.last_request.body)
    [session] = tau.session_files()
    lines = [json.loads(line) for line in session.read_text().splitlines()]
    assert lines[0]["type"] == "session" and lines[0]["version"] == 3
    roles = [
        line["message"]["role"]
        for line in lines
        if line["type"] == "message" and line["message"]["role"] != "system"
    ]
    assert roles == ["user", "assistant", "toolResult", "assistant"]


def test_continue_sends_the_earlier_conversation(tau: TauCommand) -> None:
    tau.server.add(Turn(text="First answer."), Turn(text="Second answer."))
    assert tau.run(*MODEL, "-p", "first question").returncode == 0
    result = tau.run(*MODEL, "-c", "-p", "second question")
    assert result.returncode == 0, result.stderr
    sent = json.dumps(tau.server.last_request.body["messages"])
    assert "first question" in sent and "First answer." in sent and "second question" in sent
    assert len(tau.session_files()) == 1


def test_piped_stdin_and_file_arguments_join_the_first_message(tau: TauCommand) -> None:
    (tau.work / "notes.txt").write_text("note body")
    tau.server.add(Turn(text="ok"))
    result = tau.run(*MODEL, "@notes.txt", "summarise", stdin="piped text\n")
    assert result.returncode == 0, result.stderr
    content = tau.server.last_request.body["messages"][-1]["content"][0]["text"]
    assert content.startswith("piped text<file name=")  # stdin trimmed, as pi 1.6
    assert "note body" in content and content.endswith("</file>\nsummarise")


def test_remaining_messages_are_sent_one_after_another(tau: TauCommand) -> None:
    tau.server.add(Turn(text="one"), Turn(text="two"))
    result = tau.run(*MODEL, "-p", "first", "second")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "two\n"
    assert len(tau.server.requests) == 2


def test_a_missing_file_argument_exits_1_naming_it(tau: TauCommand) -> None:
    result = tau.run(*MODEL, "-p", "@missing.txt")
    assert result.returncode == 1
    assert "missing.txt" in result.stderr and "not found" in result.stderr.lower()
    assert tau.server.requests == []


def test_a_provider_error_goes_to_stderr_with_exit_1(tau: TauCommand) -> None:
    tau.server.add(Turn(fault=Fault("status", status=400, body={"error": {"message": "bad request body"}})))
    result = tau.run(*MODEL, "-p", "hi")
    assert result.returncode == 1
    assert result.stdout == ""
    assert "bad request body" in result.stderr


def test_json_mode_writes_the_header_then_one_event_per_line(tau: TauCommand) -> None:
    tau.server.add(Turn(text="streamed " * 50, chunk_size=9))
    result = tau.run(*MODEL, "--mode", "json", "-p", "hi")
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert lines[0]["type"] == "session" and lines[0]["version"] == 3
    assert all("type" in line for line in lines[1:])
    assert [line["type"] for line in lines[-2:]] == ["agent_end", "agent_settled"]
    updates = [line for line in lines if line["type"] == "message_update"]
    assert updates and all(
        "message" not in u and "partial" not in u["assistantMessageEvent"] for u in updates
    )
    deltas = "".join(u["assistantMessageEvent"].get("delta", "") for u in updates)
    assert deltas == "streamed " * 50
    end = next(
        line for line in lines if line["type"] == "message_end" and line["message"]["role"] == "assistant"
    )
    assert end["message"]["content"][0]["text"] == "streamed " * 50


def test_json_mode_exits_0_even_when_the_reply_is_an_error(tau: TauCommand) -> None:
    tau.server.add(Turn(fault=Fault("status", status=400)))
    assert tau.run(*MODEL, "--mode", "json", "-p", "hi").returncode == 0
    tau.server.add(Turn(fault=Fault("status", status=400)))
    assert tau.run(*MODEL, "-p", "hi").returncode == 1


def test_an_unknown_model_lists_close_matches(tau: TauCommand) -> None:
    result = tau.run("--model", "claude-sonet-4-5", "-p", "hi")
    assert result.returncode == 1
    assert "claude-sonnet-4-5" in result.stderr
    assert len(result.stderr.strip().splitlines()) <= 8


def test_no_api_key_names_the_variable_and_the_auth_file(tau: TauCommand) -> None:
    result = tau.run("--model", "anthropic/claude-sonnet-4-5", "-p", "hi")
    assert result.returncode == 1
    assert "ANTHROPIC_API_KEY" in result.stderr and "auth.json" in result.stderr
    assert "Traceback" not in result.stderr


def test_an_invalid_models_json_is_reported_with_its_position(tau: TauCommand) -> None:
    (tau.agent_dir / "models.json").write_text('{"providers": {"local": }}')
    result = tau.run(*MODEL, "-p", "hi")
    assert result.returncode == 1
    assert "models.json:1:" in result.stderr
    assert "Traceback" not in result.stderr


def test_an_invalid_settings_json_is_reported_with_its_position(tau: TauCommand) -> None:
    (tau.agent_dir / "settings.json").write_text('{\n  "defaultModel": \n}')
    tau.server.add(Turn(text="still works"))
    result = tau.run(*MODEL, "-p", "hi")
    assert "settings.json:3:" in result.stderr
    assert "Traceback" not in result.stderr


def test_an_unknown_session_id_is_a_clear_error(tau: TauCommand) -> None:
    result = tau.run(*MODEL, "--session", "deadbeef", "-p", "hi")
    assert result.returncode == 1
    assert "deadbeef" in result.stderr and "Traceback" not in result.stderr


def test_a_session_whose_folder_is_gone_says_how_to_go_on(tau: TauCommand) -> None:
    tau.server.add(Turn(text="first"))
    assert tau.run(*MODEL, "-p", "hi").returncode == 0
    [session] = tau.session_files()
    header = json.loads(session.read_text().splitlines()[0])
    header["cwd"] = str(tau.work / "deleted-folder")
    lines = session.read_text().splitlines()
    session.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    result = tau.run(*MODEL, "--session", str(session), "-p", "again")
    assert result.returncode == 1
    assert "deleted-folder" in result.stderr and "--fork" in result.stderr


def test_sigterm_during_a_run_leaves_a_valid_session_file(tau: TauCommand) -> None:
    tau.server.add(Turn(text="slow " * 400, chunk_size=5, fault=Fault("stall", after_events=5, seconds=30)))
    process = tau.popen(*MODEL, "-p", "hi")
    deadline = time.time() + 20
    while not tau.server.requests and time.time() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=20)
    assert process.returncode == 143, stderr
    for path in tau.session_files():
        for line in path.read_text().splitlines():
            json.loads(line)


def test_version_is_fast_to_reach_and_exits_0(tau: TauCommand) -> None:
    result = tau.run("--version")
    assert result.returncode == 0 and result.stdout.startswith("tau ")


def _pi_session_in(tau: TauCommand, fixture: str) -> Path:
    """A copy of a hand-written pi session fixture whose cwd is the test's work folder."""
    source = Path(__file__).parent.parent / "session" / "fixtures" / fixture
    lines = source.read_text().splitlines()
    header = json.loads(lines[0])
    header["cwd"] = str(tau.work)
    target = tau.agent_dir / "pi-sessions" / fixture
    target.parent.mkdir()
    target.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    return target


@pytest.mark.parametrize("fixture", ["v1_session.jsonl", "v2_session.jsonl", "v3_session.jsonl"])
def test_a_pi_session_of_any_version_is_continued(tau: TauCommand, fixture: str) -> None:
    path = _pi_session_in(tau, fixture)
    tau.server.add(Turn(text="Continuing."))
    result = tau.run(*MODEL, "--session", str(path), "-p", "and now?")
    assert result.returncode == 0, result.stderr
    sent = tau.server.last_request.body["messages"]
    assert len(sent) > 2 and "and now?" in json.dumps(sent[-1])
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines[0]["version"] == 3
    ids = {line["id"] for line in lines[1:]}
    assert all(line["parentId"] in ids or line["parentId"] is None for line in lines[1:])
    assert lines[-1]["message"]["role"] == "assistant"


def test_list_models_shows_the_configured_models(tau: TauCommand) -> None:
    result = tau.run("--list-models")
    assert result.returncode == 0, result.stderr
    assert "local" in result.stdout and "fake-model" in result.stdout


def test_no_context_files_keeps_agents_md_out_of_the_prompt(tau: TauCommand) -> None:
    (tau.work / "AGENTS.md").write_text("Always answer in French.")
    tau.server.add(Turn(text="a"), Turn(text="b"))
    assert tau.run(*MODEL, "--no-session", "-p", "hi").returncode == 0
    assert "Always answer in French." in json.dumps(tau.server.requests[0].body)
    assert tau.run(*MODEL, "--no-session", "-nc", "-p", "hi").returncode == 0
    assert "Always answer in French." not in json.dumps(tau.server.requests[1].body)


def test_no_session_writes_no_file_and_session_dir_moves_them(tau: TauCommand) -> None:
    tau.server.add(Turn(text="a"), Turn(text="b"))
    assert tau.run(*MODEL, "--no-session", "-p", "hi").returncode == 0
    assert tau.session_files() == []
    elsewhere = tau.work / "my-sessions"
    assert tau.run(*MODEL, "--session-dir", str(elsewhere), "-p", "hi").returncode == 0
    assert len(list(elsewhere.glob("*.jsonl"))) == 1


def test_tools_flag_limits_what_the_model_is_offered(tau: TauCommand) -> None:
    tau.server.add(Turn(text="a"))
    assert tau.run(*MODEL, "--no-session", "--tools", "read,grep", "-p", "hi").returncode == 0
    names = [t["function"]["name"] for t in tau.server.last_request.body["tools"]]
    assert names == ["read", "grep"]


def test_a_corrupt_session_line_is_reported_and_the_session_continues(tau: TauCommand) -> None:
    tau.server.add(Turn(text="first"), Turn(text="second"))
    assert tau.run(*MODEL, "-p", "hi").returncode == 0
    [session] = tau.session_files()
    with session.open("a") as handle:
        handle.write('{"type":"message","id":"broken\n')
    result = tau.run(*MODEL, "-c", "-p", "again")
    assert result.returncode == 0, result.stderr
    assert "skipped" in result.stderr and session.name in result.stderr
    assert result.stdout == "second\n"
    assert '{"type":"message","id":"broken' in session.read_text()


def test_a_session_path_naming_a_fifo_is_one_line_and_the_fifo_stays(tau: TauCommand) -> None:
    # As root, a rename over `--session /dev/null` used to replace the system's /dev/null with a file.
    fifo = tau.work / "session.jsonl"
    os.mkfifo(fifo)
    result = tau.run(*MODEL, "--session", str(fifo), "-p", "hi")
    assert result.returncode == 1
    assert result.stderr == f"tau: Cannot read session file {fifo}: it is not a regular file\n"
    assert "Traceback" not in result.stderr
    assert stat.S_ISFIFO(fifo.stat().st_mode)


def test_a_run_in_process_closes_its_model_connections(tau: TauCommand) -> None:
    # A process that runs tau more than once (tests, embedders) must not keep each run's
    # kept-alive connection, whose event loop is gone.
    from fault_campaign import Campaign

    campaign = Campaign(tau)

    def open_sockets() -> int:
        # One pass, each link read once: the fake server's thread closes its sockets meanwhile.
        count = 0
        for fd in os.listdir("/proc/self/fd"):
            try:
                count += os.readlink(f"/proc/self/fd/{fd}").startswith("socket:")
            except OSError:
                continue
        return count

    tau.server.add(Turn(text="one"), Turn(text="two"), Turn(text="three"))
    campaign.in_process(*MODEL, "--no-session", "-p", "q")  # the first run may open lasting things
    before = open_sockets()
    for _ in range(2):
        assert campaign.in_process(*MODEL, "--no-session", "-p", "q").code == 0
    # The server's end of a connection closes once tau's end has (it reads to end of file).
    deadline = time.monotonic() + 5
    while open_sockets() > before and time.monotonic() < deadline:
        time.sleep(0.02)
    assert open_sockets() == before
