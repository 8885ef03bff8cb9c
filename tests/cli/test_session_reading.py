"""Opening damaged or missing sessions through the real `tau` process: each problem is one line naming
the file (and entry), the rest of the session stays usable, and a typo never starts a new one."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from tau_command import MODEL, TauCommand

from tau.modes.rpc_client import RpcClient, RpcError
from tau.testing.fake_llm import Turn

TOO_DEEP = b"[" * 2000 + b"]" * 2000 + b"\n"


def two_exchanges(tau: TauCommand) -> Path:
    """A session file holding user "one", "first reply", user "two", "second reply"."""
    tau.server.add(Turn(text="first reply"), Turn(text="second reply"))
    assert tau.run(*MODEL, "-p", "one", "two").returncode == 0
    [session] = tau.session_files()
    return session


def read_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def message_index(lines: list[dict[str, Any]], text: str) -> int:
    """The line of the message whose first text block is ``text``."""
    return next(
        i
        for i, line in enumerate(lines)
        if line.get("type") == "message"
        and line["message"]["content"]
        and line["message"]["content"][0]["text"] == text
    )


def write_lines(path: Path, lines: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def sent_texts(tau: TauCommand) -> str:
    return json.dumps(tau.server.last_request.body["messages"])


def warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("tau: warning: ")]


def test_session_in_a_missing_folder_is_an_error_not_a_new_session(tau: TauCommand) -> None:
    target = tau.work / "typo" / "session.jsonl"
    result = tau.run(*MODEL, "--session", str(target), "-p", "hi")
    assert result.returncode == 1
    assert result.stderr == f"tau: no session file {target}: the folder {target.parent} does not exist\n"
    assert not target.parent.exists()
    assert tau.server.requests == []


async def test_rpc_switch_session_to_a_missing_file_starts_a_new_session_there_as_pi_16_does(
    tau: TauCommand,
) -> None:
    tau.server.add(Turn(text="kept"), Turn(text="fresh"))
    command = [sys.executable, "-m", "tau", "--mode", "rpc", *MODEL]
    async with RpcClient(command, cwd=str(tau.work), env=tau.env) as client:
        await client.prompt("hello")
        before = (await client.call("get_state"))["sessionFile"]
        missing = str(tau.work / "later" / "new.jsonl")
        assert await client.call("switch_session", sessionPath=missing) == {"cancelled": False}
        assert (await client.call("get_state"))["sessionFile"] == missing
        assert (await client.call("get_messages"))["messages"] == []
        await client.prompt("again")
    header = json.loads(Path(missing).read_text().splitlines()[0])
    assert header["type"] == "session" and header["cwd"] == str(tau.work)
    assert "kept" in Path(before).read_text() and "fresh" not in Path(before).read_text()


async def test_rpc_switch_session_to_a_file_that_is_not_a_session_leaves_it_alone(tau: TauCommand) -> None:
    notes = tau.work / "notes.jsonl"
    notes.write_text("my notes\n")
    command = [sys.executable, "-m", "tau", "--mode", "rpc", *MODEL]
    async with RpcClient(command, cwd=str(tau.work), env=tau.env) as client:
        try:
            await client.call("switch_session", sessionPath=str(notes))
        except RpcError as exc:
            assert exc.response["error"] == (
                f"Cannot resume {notes}: not a session file (its first line is not a session header)"
            )
        else:
            raise AssertionError("switch_session to a file that is not a session succeeded")
    assert notes.read_text() == "my notes\n"
    assert sorted(p.name for p in tau.work.iterdir()) == ["notes.jsonl"]


def test_continue_names_a_newer_file_that_is_not_a_session_and_takes_the_session_before_it(
    tau: TauCommand,
) -> None:
    session = two_exchanges(tau)
    stray = session.parent / "zz-notes.jsonl"
    stray.write_text("just some notes\n")
    os.utime(stray, (session.stat().st_mtime + 10,) * 2)
    tau.server.add(Turn(text="third reply"))

    result = tau.run(*MODEL, "-c", "-p", "three")

    assert result.returncode == 0, result.stderr
    assert warnings(result.stderr) == [
        f"tau: warning: -c skipped {stray}: not a session file (its first line is not a session header)"
    ]
    assert "second reply" in sent_texts(tau)


def test_continue_names_an_unreadable_newest_file_before_starting_a_new_session(tau: TauCommand) -> None:
    folder = tau.agent_dir / "sessions" / "mine"
    (folder / "broken.jsonl").mkdir(parents=True)
    tau.server.add(Turn(text="fresh"))

    result = tau.run(*MODEL, "--session-dir", str(folder), "-c", "-p", "hi")

    assert result.returncode == 0, result.stderr
    assert warnings(result.stderr) == [
        f"tau: warning: -c skipped {folder / 'broken.jsonl'}: cannot read it (Is a directory)",
        f"tau: warning: no session to continue in {folder}: starting a new one",
    ]
    assert len([p for p in folder.iterdir() if p.is_file()]) == 1


def test_a_broken_parent_is_named_and_the_intact_chain_to_the_leaf_is_used(tau: TauCommand) -> None:
    session = two_exchanges(tau)
    lines = read_lines(session)
    second_user = lines[message_index(lines, "two")]
    second_user["parentId"] = "gone0000"
    write_lines(session, lines)
    tau.server.add(Turn(text="third reply"))

    result = tau.run(*MODEL, "--session", str(session), "-p", "three")

    assert result.returncode == 0, result.stderr
    [warning] = warnings(result.stderr)
    assert (
        f"{session}: entry {second_user['id']} points to a parent gone0000 that is not in the file" in warning
    )
    sent = sent_texts(tau)
    assert "second reply" in sent and "first reply" not in sent


def test_a_self_parent_is_named(tau: TauCommand) -> None:
    session = two_exchanges(tau)
    lines = read_lines(session)
    second_user = lines[message_index(lines, "two")]
    second_user["parentId"] = second_user["id"]
    write_lines(session, lines)
    tau.server.add(Turn(text="third reply"))

    result = tau.run(*MODEL, "--session", str(session), "-p", "three")

    assert result.returncode == 0, result.stderr
    [warning] = warnings(result.stderr)
    assert f"entry {second_user['id']} names itself as its parent" in warning
    assert "second reply" in sent_texts(tau)


def test_a_duplicate_id_is_named_and_the_first_copy_keeps_the_history_in_order(tau: TauCommand) -> None:
    session = two_exchanges(tau)
    lines = read_lines(session)
    first_reply = lines[message_index(lines, "first reply")]
    impostor = json.loads(json.dumps(first_reply))
    impostor["parentId"] = first_reply["id"]
    impostor["message"]["content"] = [{"type": "text", "text": "impostor"}]
    lines.insert(message_index(lines, "two"), impostor)
    write_lines(session, lines)
    tau.server.add(Turn(text="third reply"))

    result = tau.run(*MODEL, "--session", str(session), "-p", "three")

    assert result.returncode == 0, result.stderr
    [warning] = warnings(result.stderr)
    assert f"entry {first_reply['id']} appears twice; the first copy is used" in warning
    sent = sent_texts(tau)
    assert "impostor" not in sent
    assert sent.index("one") < sent.index("first reply") < sent.index("two") < sent.index("second reply")


def with_a_line_too_deep_to_parse(tau: TauCommand) -> Path:
    session = two_exchanges(tau)
    data = session.read_bytes().splitlines(keepends=True)
    session.write_bytes(b"".join([*data[:5], TOO_DEEP, *data[5:]]))
    tau.server.add(Turn(text="third reply"))
    return session


def test_a_line_nested_too_deep_is_skipped_with_a_warning_by_session(tau: TauCommand) -> None:
    session = with_a_line_too_deep_to_parse(tau)
    result = tau.run(*MODEL, "--session", str(session), "-p", "three")
    assert result.returncode == 0, result.stderr
    assert warnings(result.stderr) == [
        f"tau: warning: {session}:6: skipped a line that is not a JSON object (it stays in the file)"
    ]
    assert "second reply" in sent_texts(tau)
    assert TOO_DEEP in session.read_bytes()


def test_a_line_nested_too_deep_is_skipped_with_a_warning_by_continue(tau: TauCommand) -> None:
    session = with_a_line_too_deep_to_parse(tau)
    result = tau.run(*MODEL, "-c", "-p", "three")
    assert result.returncode == 0, result.stderr
    assert len(warnings(result.stderr)) == 1
    assert "second reply" in sent_texts(tau)
    assert len(tau.session_files()) == 1 and session.exists()


def test_a_line_nested_too_deep_does_not_stop_an_export(tau: TauCommand) -> None:
    session = with_a_line_too_deep_to_parse(tau)
    result = tau.run("--export", str(session), "page.html")
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"Exported to: {tau.work / 'page.html'}\n"
    assert "second reply" in (tau.work / "page.html").read_text()


def test_exporting_a_folder_says_it_is_not_a_file(tau: TauCommand) -> None:
    (tau.work / "folder.jsonl").mkdir()
    result = tau.run("--export", "folder.jsonl")
    assert result.returncode == 1
    assert result.stderr == f"tau: Not a file: {tau.work / 'folder.jsonl'}\n"
