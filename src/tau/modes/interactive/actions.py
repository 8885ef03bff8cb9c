"""What the user's keys and messages set off: sending or queueing a message, a ``!`` shell
command, an attached image, Esc, Ctrl+C, taking queued messages back."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Protocol

from tau.modes.interactive.chat import BashBlock
from tau.modes.interactive.clipboard import read_clipboard_image
from tau.modes.interactive.host import CommandHost
from tau.session.messages import BashExecutionMessage

if TYPE_CHECKING:
    from tau.modes.interactive.chat import Chat
    from tau.modes.interactive.editor import EditorBuffer
    from tau.modes.interactive.state import InputState
    from tau.runtime.session_prompt import StreamingBehavior

__all__ = ["ActionHost", "clear_or_quit", "dequeue", "interrupt", "paste_image", "run_bash", "submit"]

DOUBLE_PRESS = 0.5
"""Seconds within which a second Esc or Ctrl+C counts as a double press."""


class ActionHost(CommandHost, Protocol):
    """What the keys' actions use of the mode beside what a command does: the chat's blocks, the
    editor's history, the input state, and the status line's spinner."""

    @property
    def chat(self) -> Chat: ...

    @property
    def editor(self) -> EditorBuffer: ...

    @property
    def input(self) -> InputState: ...

    def start_ticker(self) -> None: ...


def submit(mode: ActionHost, text: str, *, follow_up: bool = False) -> None:
    """What Enter (or Alt+Enter) does with the editor's text."""
    text = text.strip("\n")
    if not text.strip():
        return
    if text.startswith("!"):
        exclude = text.startswith("!!")
        command = text[2:] if exclude else text[1:]
        if command.strip():
            mode.editor.remember(text)
            mode.spawn(run_bash(mode, command.strip(), exclude))
        return
    if text.startswith("/"):
        from tau.modes.interactive.commands import run_builtin_command

        if run_builtin_command(mode, text):
            return  # as in pi, built-in commands are not kept in the Up/Down history
    mode.editor.remember(text)
    if mode.activity.compacting:
        mode.input.held_for_compaction.append(text)
        mode.invalidate()
        return
    behavior: StreamingBehavior | None = None
    if mode.session.is_streaming:
        behavior = "follow_up" if follow_up else "steer"
    images, mode.input.pending_images = mode.input.pending_images, []
    mode.spawn(mode.session.prompt(text, images=images or None, streaming_behavior=behavior))


async def paste_image(mode: ActionHost) -> None:
    """Ctrl+V: attach the clipboard's image to the next message, marked ``[image #n]``."""
    image = await asyncio.to_thread(read_clipboard_image)
    if image is None:
        mode.chat.add_notice("No image on the clipboard (or no clipboard tool: wl-paste, xclip, pngpaste)")
        return
    mode.input.pending_images.append(image)
    mode.editor.insert_text(f"[image #{len(mode.input.pending_images)}]")


async def run_bash(mode: ActionHost, command: str, exclude: bool) -> None:
    if mode.session.is_bash_running:
        mode.chat.add_notice("A shell command is already running (esc to cancel it)", "warning")
        return
    block = BashBlock(command, exclude)
    mode.activity.bash_block = block
    mode.chat.add_block(block)
    mode.start_ticker()

    def on_chunk(chunk: str) -> None:
        block.append(chunk)
        mode.invalidate()

    try:
        result = await mode.session.execute_bash(command, on_chunk=on_chunk, exclude_from_context=exclude)
        block.finish(result.to_message(command, exclude_from_context=exclude))
    except BaseException:
        block.finish(BashExecutionMessage(command, block.output, None, cancelled=True))
        raise
    finally:
        mode.activity.bash_block = None
        mode.chat.commit_ready()


def interrupt(mode: ActionHost) -> None:
    """Escape: abort what runs (restoring queued messages to the editor), else close bash mode."""
    session = mode.session
    if mode.activity.bash_block is not None:
        session.abort_bash()
    elif mode.activity.retry_text is not None:
        session.abort_retry()
    elif mode.activity.compacting or mode.activity.summary_retry_text is not None:
        session.abort_compaction()
    elif session.is_streaming:
        steering, follow_up = session.clear_queue()
        restored = [*steering, *follow_up]
        if restored:
            current = mode.editor.text
            mode.editor.text = "\n\n".join([*restored, *([current] if current else [])])
            mode.editor.cursor_position = len(mode.editor.text)
        mode.spawn(session.abort())
    else:
        now = time.monotonic()
        if not mode.editor.text and now - mode.input.last_escape_at < DOUBLE_PRESS:
            mode.input.last_escape_at = 0.0
            action = mode.session.services.settings_manager.get("doubleEscapeAction", "tree")
            if action in ("tree", "fork"):
                from tau.modes.interactive.commands import run_builtin_command

                run_builtin_command(mode, f"/{action}")
            return
        mode.input.last_escape_at = now


def clear_or_quit(mode: ActionHost) -> None:
    """Ctrl+C: clear the editor; a second press within half a second quits."""
    now = time.monotonic()
    if now - mode.input.last_ctrl_c_at < DOUBLE_PRESS:
        mode.quit()
        return
    mode.input.last_ctrl_c_at = now
    mode.editor.reset()


def dequeue(mode: ActionHost) -> None:
    steering, follow_up = mode.session.clear_queue()
    held, mode.input.held_for_compaction = mode.input.held_for_compaction, []
    restored = [*steering, *follow_up, *held]
    if restored:
        current = mode.editor.text
        mode.editor.text = "\n\n".join([*restored, *([current] if current else [])])
        mode.editor.cursor_position = len(mode.editor.text)
