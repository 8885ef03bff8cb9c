"""AgentSession: the user's own shell commands, ``!cmd`` and ``!!cmd`` (spec 30 §1.7)."""

from __future__ import annotations

import asyncio
import os
from typing import Any

from tau.ai.types import AssistantMessage, Context
from tau.runtime.user_bash import parse_user_bash
from tau.session.messages import BashExecutionMessage
from tau.testing.faux import FauxProvider, faux_message

from .conftest import Gate, SessionFactory, file_lines, user_texts


def _capture(seen: list[Context]) -> Any:
    def reply(context: Context, *rest: Any) -> AssistantMessage:
        seen.append(context)
        return faux_message("ok")

    return reply


def test_bang_and_double_bang_are_parsed() -> None:
    assert parse_user_bash("!ls -la") == ("ls -la", False)
    assert parse_user_bash("!! git status ") == ("git status", True)
    assert parse_user_bash("!") is None and parse_user_bash("!!  ") is None
    assert parse_user_bash("hello") is None


async def test_a_bang_command_is_recorded_and_sent_with_the_next_prompt(
    make_session: SessionFactory, faux: FauxProvider
) -> None:
    seen: list[Context] = []
    faux.set_responses([_capture(seen)])
    session = make_session()
    chunks: list[str] = []
    result = await session.execute_bash("printf 'hi\\n\\033[31mred\\033[0m\\n'", on_chunk=chunks.append)
    assert (result.output, result.exit_code, result.cancelled) == ("hi\nred\n", 0, False)
    assert "".join(chunks) == "hi\nred\n"
    recorded = session.messages[-1]
    assert isinstance(recorded, BashExecutionMessage) and recorded.exclude_from_context is None

    await session.prompt("what did it print?")
    texts = user_texts(seen[0])
    assert texts[0].startswith("Ran `printf") and "hi\nred" in texts[0]
    assert texts[1] == "what did it print?"
    bash_line = file_lines(session.session_file)[3]
    assert bash_line["message"]["role"] == "bashExecution" and bash_line["message"]["exitCode"] == 0


async def test_a_double_bang_command_is_kept_but_not_sent(
    make_session: SessionFactory, faux: FauxProvider
) -> None:
    seen: list[Context] = []
    faux.set_responses([_capture(seen)])
    session = make_session()
    result = await session.execute_bash("echo secret", exclude_from_context=True)
    assert result.output == "secret\n"
    await session.prompt("hello")
    assert user_texts(seen[0]) == ["hello"]
    stored = [line["message"] for line in file_lines(session.session_file) if line["type"] == "message"]
    assert stored[0]["role"] == "bashExecution" and stored[0]["excludeFromContext"] is True


async def test_a_command_run_while_streaming_waits_for_the_next_prompt(
    make_session: SessionFactory, faux: FauxProvider
) -> None:
    gate = Gate()
    seen: list[Context] = []
    faux.set_responses([gate, _capture(seen)])
    session = make_session()
    running = asyncio.create_task(session.prompt("first"))
    await gate.entered.wait()
    result = await session.execute_bash("echo during")
    assert result.exit_code == 0
    assert not any(isinstance(m, BashExecutionMessage) for m in session.messages)
    gate.release.set()
    await running
    assert not any(isinstance(m, BashExecutionMessage) for m in session.messages)

    await session.prompt("second")
    roles = [m.role for m in session.messages]
    assert roles == ["user", "assistant", "bashExecution", "user", "assistant"]
    assert user_texts(seen[0])[1:] == ["Ran `echo during`\n```\nduring\n\n```", "second"]


async def test_long_output_is_truncated_with_the_full_output_on_disk(make_session: SessionFactory) -> None:
    session = make_session()
    result = await session.execute_bash("seq 1 30000")
    assert result.truncated and result.exit_code == 0
    assert result.output.endswith("\n30000") and not result.output.startswith("1\n")  # lines as pi 1.6 counts
    assert result.full_output_path is not None
    with open(result.full_output_path) as f:
        assert f.read().splitlines()[0] == "1"


async def test_abort_bash_cancels_the_command(make_session: SessionFactory) -> None:
    session = make_session()
    running = asyncio.create_task(session.execute_bash("echo started; sleep 30"))
    for _ in range(200):
        if session.is_bash_running:
            break
        await asyncio.sleep(0.005)
    await asyncio.sleep(0.05)
    session.abort_bash()
    result = await asyncio.wait_for(running, 5)
    assert result.cancelled and result.exit_code is None
    recorded = session.messages[-1]
    assert isinstance(recorded, BashExecutionMessage) and recorded.cancelled


async def test_a_failing_command_reports_its_exit_code(make_session: SessionFactory) -> None:
    session = make_session()
    result = await session.execute_bash("echo oops >&2; exit 3")
    assert (result.output, result.exit_code) == ("oops\n", 3)
    assert os.path.isdir(session.cwd)
