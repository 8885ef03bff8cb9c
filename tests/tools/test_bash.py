"""Tests for the bash tool: output, errors, timeout and abort (no orphans), streaming, spilling."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tau.agent.tool import AgentToolResult
from tau.ai.abort import AbortController
from tau.tools import SpillDirectory, ToolAborted, ToolError, create_bash_tool


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes in process group ``pgid``, from /proc."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as file:
                fields = file.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[2]) == pgid:
            members.append(int(entry))
    return members


def wait_until_group_is_gone(pgid: int, seconds: float = 2.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while (members := group_members(pgid)) and time.monotonic() < deadline:
        time.sleep(0.02)
    return members


def first_line_number(text: str) -> int:
    return int(text.strip().split("\n")[0])


async def test_echo_output_is_returned(tmp_path: Path, run: Any, text_of: Callable[..., str]) -> None:
    result = await run(create_bash_tool(str(tmp_path)), {"command": "echo test output"})
    assert text_of(result) == "test output\n"
    assert result.details is None


async def test_a_command_without_output_says_so(
    tmp_path: Path, run: Any, text_of: Callable[..., str]
) -> None:
    assert text_of(await run(create_bash_tool(str(tmp_path)), {"command": "true"})) == "(no output)"


async def test_a_non_zero_exit_is_an_error_with_the_code_and_the_output(tmp_path: Path, run: Any) -> None:
    # As pi 1.6: a failed result (not an exception) that keeps the structured output.
    result = await run(create_bash_tool(str(tmp_path)), {"command": "echo before failing; exit 1"})
    assert result.is_error is True
    assert result.content[0].text == "before failing\n\n\nCommand exited with code 1"
    structured = result.structured_content
    assert (structured["output"], structured["truncated"], structured["exit_code"]) == (
        "before failing\n",
        False,
        1,
    )
    assert "full_output_path" not in structured and isinstance(structured["wall_time_seconds"], float)


async def test_the_structured_output_holds_the_whole_output_up_to_a_mebibyte(
    tmp_path: Path, run: Any
) -> None:
    long = await run(create_bash_tool(str(tmp_path)), {"command": "seq 1 100000"})
    assert long.structured_content["output"] == "".join(f"{i}\n" for i in range(1, 100001))
    assert long.structured_content["truncated"] is False and "full_output_path" not in long.structured_content
    huge = await run(create_bash_tool(str(tmp_path)), {"command": "head -c 3000000 /dev/zero | tr '\\0' x"})
    output = huge.structured_content["output"]
    assert huge.structured_content["truncated"] is True
    assert output == "x" * 524288 + "\n\n[... 1951424 bytes omitted ...]\n\n" + "x" * 524288
    assert huge.structured_content["full_output_path"] == huge.details["fullOutputPath"]


async def test_the_command_runs_in_the_tools_cwd(
    tmp_path: Path, run: Any, text_of: Callable[..., str]
) -> None:
    assert text_of(await run(create_bash_tool(str(tmp_path)), {"command": "pwd"})).strip() == str(tmp_path)


async def test_a_timeout_kills_the_process_group_within_about_a_second(tmp_path: Path, run: Any) -> None:
    started = time.monotonic()
    with pytest.raises(ToolError, match="timed out after 1 seconds") as caught:
        await run(create_bash_tool(str(tmp_path)), {"command": "echo $$; sleep 5 & sleep 5", "timeout": 1})
    assert time.monotonic() - started < 2.5
    assert wait_until_group_is_gone(first_line_number(str(caught.value))) == []


async def test_an_abort_mid_run_kills_background_children_and_keeps_partial_output(
    tmp_path: Path, run: Any
) -> None:
    controller = AbortController()
    tool = create_bash_tool(str(tmp_path))
    loop = asyncio.get_running_loop()
    loop.call_later(0.4, controller.abort)
    with pytest.raises(ToolAborted, match="aborted") as caught:
        await run(tool, {"command": "echo $$; sleep 100 & wait"}, signal=controller.signal)
    message = str(caught.value)
    pgid = first_line_number(message)
    assert wait_until_group_is_gone(pgid) == []


async def test_an_aborted_signal_stops_the_call_before_it_starts(tmp_path: Path, run: Any) -> None:
    controller = AbortController()
    controller.abort()
    marker = tmp_path / "ran"
    with pytest.raises(ToolAborted):
        await run(create_bash_tool(str(tmp_path)), {"command": f"touch {marker}"}, signal=controller.signal)
    assert not marker.exists()


async def test_a_missing_working_directory_is_an_error_naming_it(tmp_path: Path, run: Any) -> None:
    missing = tmp_path / "gone"
    with pytest.raises(ToolError, match="gone"):
        await run(create_bash_tool(str(missing)), {"command": "echo hi"})


async def test_a_missing_shell_is_an_enoent_error(tmp_path: Path, run: Any) -> None:
    with pytest.raises(FileNotFoundError, match="ENOENT"):
        await run(create_bash_tool(str(tmp_path), shell_path="/no/such/shell"), {"command": "echo hi"})


async def test_the_command_prefix_runs_first(tmp_path: Path, run: Any, text_of: Callable[..., str]) -> None:
    tool = create_bash_tool(str(tmp_path), command_prefix="echo from-prefix")
    assert text_of(await run(tool, {"command": "echo from-command"})) == "from-prefix\nfrom-command\n"


async def test_seq_3000_keeps_the_last_2000_lines_and_spills_everything(
    tmp_path: Path, run: Any, text_of: Callable[..., str], spill: SpillDirectory
) -> None:
    result = await run(create_bash_tool(str(tmp_path), spill=spill), {"command": "seq 3000"})
    text = text_of(result)
    body, note = text.rsplit("\n\n", 1)
    assert body.split("\n")[0] == "1001" and body.endswith("\n3000")  # as pi 1.6 counts lines
    assert "1001-3000 of 3000" in note
    path = result.details["fullOutputPath"]
    assert path in note and os.path.dirname(path) == spill.path
    assert Path(path).read_text() == "".join(f"{i}\n" for i in range(1, 3001))
    assert result.details["truncation"]["totalLines"] == 3000


async def test_a_200kb_single_line_shows_its_end_and_spills_the_whole_line(
    tmp_path: Path, run: Any, text_of: Callable[..., str], spill: SpillDirectory
) -> None:
    tool = create_bash_tool(str(tmp_path), spill=spill)
    result = await run(tool, {"command": "head -c 200000 /dev/zero | tr '\\0' x"})
    body, note = text_of(result).rsplit("\n\n", 1)
    assert body == "x" * 51200
    assert "50.0KB of line 1" in note and "195.3KB" in note
    assert Path(result.details["fullOutputPath"]).read_bytes() == b"x" * 200_000
    assert result.details["truncation"]["lastLinePartial"] is True


async def test_a_background_process_holding_stdout_does_not_hold_the_call(
    tmp_path: Path, run: Any, text_of: Callable[..., str]
) -> None:
    started = time.monotonic()
    result = await run(create_bash_tool(str(tmp_path)), {"command": "echo $$; (sleep 3 &); echo done"})
    assert time.monotonic() - started < 1.5
    assert text_of(result).endswith("done\n")
    with contextlib.suppress(ProcessLookupError):  # the call kills the group; this is a safety net
        os.killpg(first_line_number(text_of(result)), 9)


async def test_multibyte_characters_split_across_chunks_decode_whole(
    tmp_path: Path, run: Any, text_of: Callable[..., str]
) -> None:
    result = await run(
        create_bash_tool(str(tmp_path)), {"command": "printf '\\303'; sleep 0.1; printf '\\251\\n'"}
    )
    assert text_of(result) == "é\n"


async def test_stderr_is_interleaved_with_stdout_in_arrival_order(
    tmp_path: Path, run: Any, text_of: Callable[..., str]
) -> None:
    result = await run(create_bash_tool(str(tmp_path)), {"command": "echo out1; echo err1 >&2; echo out2"})
    assert text_of(result) == "out1\nerr1\nout2\n"


async def test_invalid_utf8_output_is_decoded_with_replacement_characters(
    tmp_path: Path, run: Any, text_of: Callable[..., str]
) -> None:
    result = await run(create_bash_tool(str(tmp_path)), {"command": "printf '\\377\\376 ok\\n'"})
    assert text_of(result) == "\ufffd\ufffd ok\n"


async def test_terminal_colour_codes_are_removed_unless_sanitising_is_off(
    tmp_path: Path, run: Any, text_of: Callable[..., str]
) -> None:
    command = {"command": "printf '\\033[31mred\\033[0m\\n10%%\\r100%%\\n'"}
    assert text_of(await run(create_bash_tool(str(tmp_path)), command)) == "red\n100%\n"
    raw = text_of(await run(create_bash_tool(str(tmp_path), sanitize=False), command))
    assert raw == "\x1b[31mred\x1b[0m\n10%\r100%\n"


async def test_a_shell_killed_from_outside_counts_as_success(
    tmp_path: Path, run: Any, text_of: Callable[..., str]
) -> None:
    result = await run(create_bash_tool(str(tmp_path)), {"command": "echo bye; kill -9 $$"})
    assert text_of(result) == "bye\n"


async def test_updates_start_empty_and_then_carry_the_accumulated_output(
    tmp_path: Path, run: Any, text_of: Callable[..., str]
) -> None:
    updates: list[AgentToolResult] = []
    tool = create_bash_tool(str(tmp_path))
    await run(tool, {"command": "for i in 1 2 3; do echo $i; sleep 0.15; done"}, updates=updates)
    texts = [text_of(update) for update in updates]
    assert texts[0] == ""
    assert texts[-1] == "1\n2\n3\n"
    assert any(t == "1\n" for t in texts) and any(t == "1\n2\n" for t in texts)


async def test_updates_are_throttled_to_about_ten_a_second(tmp_path: Path, run: Any) -> None:
    updates: list[AgentToolResult] = []
    command = "for i in $(seq 200); do echo $i; sleep 0.002; done"
    started = time.monotonic()
    await run(create_bash_tool(str(tmp_path)), {"command": command}, updates=updates)
    elapsed = time.monotonic() - started
    assert len(updates) <= elapsed / 0.1 + 3


async def test_spawn_hook_can_rewrite_the_environment(
    tmp_path: Path, run: Any, text_of: Callable[..., str]
) -> None:
    def hook(context: Any) -> Any:
        context.env["TAU_TEST_VALUE"] = "from-hook"
        return context

    tool = create_bash_tool(str(tmp_path), spawn_hook=hook)
    assert text_of(await run(tool, {"command": "echo $TAU_TEST_VALUE"})) == "from-hook\n"


async def test_session_env_is_read_per_command_before_the_spawn_hook_and_none_unsets(
    tmp_path: Path, run: Any, text_of: Callable[..., str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TAU_TEST_STALE", "inherited")
    values = iter(["first", "second"])
    seen: list[str] = []

    def session_env() -> dict[str, str | None]:
        return {"TAU_TEST_MODEL": next(values), "TAU_TEST_STALE": None}

    def hook(context: Any) -> Any:
        seen.append(context.env["TAU_TEST_MODEL"])
        return context

    tool = create_bash_tool(str(tmp_path), spawn_hook=hook, session_env=session_env)
    command = {"command": 'echo "$TAU_TEST_MODEL ${TAU_TEST_STALE-unset}"'}
    assert text_of(await run(tool, command)) == "first unset\n"
    assert text_of(await run(tool, command)) == "second unset\n"
    assert seen == ["first", "second"]
    assert tool.prompt_guidelines and not create_bash_tool(str(tmp_path)).prompt_guidelines


async def test_bin_dir_comes_first_on_path(tmp_path: Path, run: Any, text_of: Callable[..., str]) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "tau-test-helper"
    script.write_text("#!/bin/sh\necho helper ran\n")
    script.chmod(0o755)
    tool = create_bash_tool(str(tmp_path), bin_dir=str(bin_dir))
    assert text_of(await run(tool, {"command": "tau-test-helper"})) == "helper ran\n"


async def test_the_given_operations_run_the_command(
    tmp_path: Path, run: Any, text_of: Callable[..., str]
) -> None:
    seen: list[str] = []

    class Remote:
        async def exec(
            self, command: str, cwd: str, *, on_data: Any, signal: Any, timeout: Any, env: Any
        ) -> int:
            seen.append(command)
            on_data(b"remote says hi\n")
            return 0

    result = await run(create_bash_tool(str(tmp_path), Remote()), {"command": "uname"})
    assert seen == ["uname"] and text_of(result) == "remote says hi\n"
