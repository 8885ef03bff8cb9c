"""Print mode (``-p``) and the JSON event stream (``--mode json``).

Both bind the session's extensions without a UI (their dialogs answer "no answer", so a permission
gate blocks; a handler's failure is one line on stderr), then send the prompts one after another,
each awaited to its end. Text mode then prints the last
assistant message's text blocks, or its error on stderr with exit code 1; a reply cut off by the
output limit is printed, then a warning on stderr, and the exit code is 1. JSON mode writes the session
header and then one event per line, and nothing else: ``message_update`` events carry the streamed
delta only, not the whole partial message again (pi repeats it, which makes the output quadratic in
the reply's length), and deltas arriving in a burst are merged (``event_lines``); ``message_end``
carries the full message.

When the session file cannot be written (full disk, read-only file) the run stops at the first
failed write; the reply so far is still printed (it is paid for), then one line says what could not
be saved, and the exit code is 1.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Sequence
from typing import Literal, TextIO

from tau.ai.types import AssistantMessage, ImageContent, TextContent
from tau.modes.event_lines import EventLineWriter, dumps
from tau.modes.line_output import LineOutput
from tau.runtime.agent_session import AgentSession
from tau.session.errors import SessionWriteError

SIGNAL_EXIT_CODES = {signal.SIGTERM: 143, signal.SIGHUP: 129, signal.SIGINT: 130}
TRUNCATED_WARNING = "Response was truncated: the model reached its output token limit."


async def run_print_mode(
    session: AgentSession,
    *,
    mode: Literal["text", "json"],
    initial_text: str | None,
    initial_images: Sequence[ImageContent] = (),
    messages: Sequence[str] = (),
    out: TextIO | None,
    err: TextIO,
) -> int:
    """Run the prompts; returns the process exit code.

    ``out`` may fail (a closed pipe, a full disk) or be ``None`` (a closed stdout): the run is then
    stopped like an interrupted one, and the exit code is 141 for a closed pipe, else 1 with one line
    on ``err``.
    """

    def report_extension_error(report: object) -> None:
        err.write(f"tau: {report}\n")
        err.flush()

    output = LineOutput(out, json_lines=mode == "json")
    stopped_by: list[int] = []
    aborting: list[asyncio.Task[None]] = []
    loop = asyncio.get_running_loop()

    def stop(code: int) -> None:
        # The run is aborted, not killed: the aborted reply is written to the session like any other,
        # so the file stays whole.
        if not stopped_by:
            stopped_by.append(code)
            aborting.append(loop.create_task(session.abort()))

    def on_signal(signum: signal.Signals) -> None:
        stop(SIGNAL_EXIT_CODES[signum])

    if mode == "json":

        def write_line(line: str) -> None:
            if not output.write(line + "\n"):
                stop(output.exit_code)  # nobody reads the events any more

        output.write(dumps(session.session_manager.get_header().to_json()) + "\n")
        session.subscribe(EventLineWriter(write_line))
    if output.failure is not None:  # nothing could be shown: do not run at all
        return _output_failed(output, err)
    await session.bind_extensions(
        None, on_error=report_extension_error, mode="json" if mode == "json" else "print"
    )

    installed = []
    for signum in SIGNAL_EXIT_CODES:
        try:
            loop.add_signal_handler(signum, on_signal, signum)
            installed.append(signum)
        except (NotImplementedError, RuntimeError):
            pass
    write_error: SessionWriteError | None = None
    try:
        prompts: list[tuple[str, Sequence[ImageContent]]] = []
        if initial_text is not None or initial_images:
            prompts.append((initial_text or "", initial_images))
        prompts.extend((text, ()) for text in messages)
        for text, images in prompts:
            if stopped_by:
                break
            if text.startswith(("/mcp", "/llama")) and _answer_builtin(session, text, err):
                continue
            await session.prompt(text, images=list(images) or None)
        await session.wait_for_idle()
    except SessionWriteError as exc:
        write_error = exc
    finally:
        for signum in installed:
            loop.remove_signal_handler(signum)
        for task in aborting:
            await task
    if write_error is not None:
        if mode == "text":
            _print_reply_text(session, output)
        err.write(f"tau: {write_error}; the run was stopped (what was saved before stays readable)\n")
        err.flush()
        return 1
    if output.failure is not None:
        return _output_failed(output, err)
    if stopped_by:
        return stopped_by[0]
    if mode == "json":
        return 0
    return _print_final_reply(session, output, err)


def _print_reply_text(session: AgentSession, output: LineOutput) -> None:
    """The last reply's text if it came to an end (an aborted one was cut off by the failed write)."""
    last = session.messages[-1] if session.messages else None
    if isinstance(last, AssistantMessage) and last.stop_reason not in ("error", "aborted"):
        _write_text(last, output)


def _print_final_reply(session: AgentSession, output: LineOutput, err: TextIO) -> int:
    last = session.messages[-1] if session.messages else None
    if not isinstance(last, AssistantMessage):
        return 0
    if last.stop_reason in ("error", "aborted"):
        fallback = "Request aborted" if last.stop_reason == "aborted" else "Request error"
        err.write(f"{last.error_message or fallback}\n")
        err.flush()
        return 1
    if not _write_text(last, output):
        return _output_failed(output, err)
    if last.stop_reason == "length":
        # Cut off at the output limit (after any recovery): the partial text, a warning, status 1.
        err.write(f"{TRUNCATED_WARNING}\n")
        err.flush()
        return 1
    return 0


def _write_text(message: AssistantMessage, output: LineOutput) -> bool:
    """Write the reply's text blocks; ``False`` when stdout failed."""
    text = "".join(block.text + "\n" for block in message.content if isinstance(block, TextContent))
    return not text or output.write(text)


def _output_failed(output: LineOutput, err: TextIO) -> int:
    if output.message is not None:
        err.write(f"tau: {output.message}\n")
        err.flush()
    return output.exit_code


def _answer_builtin(session: AgentSession, text: str, err: TextIO) -> bool:
    """``/mcp`` with no MCP extension loaded (there are no servers) or ``/llama`` with no llama.cpp
    extension (it is for the terminal UI): say so on stderr and send nothing."""
    from tau.llama_cpp import fallback as llama
    from tau.mcp import fallback as mcp

    runner = session.extension_runner
    registered = runner.commands if runner is not None else ()
    if mcp.answered_by_mode(text, registered):
        line = mcp.no_servers_message(session.services.agent_dir)
    elif llama.answered_by_mode(text, registered):
        line = llama.NOT_HERE
    else:
        return False
    err.write(f"tau: {line}\n")
    err.flush()
    return True
