"""Whole frames: every write to the terminal is one synchronized update, so it never shows half a
frame.

A terminal that knows synchronized output (mode 2026: kitty, WezTerm, iTerm2, foot, Ghostty,
Windows Terminal, tmux 3.4+, ...) holds what arrives between ``CSI ?2026h`` and ``CSI ?2026l`` and
shows it at once; others ignore both. ``FrameOutput`` wraps each flush so; ``print_above`` puts
text into the scrollback above the application in one frame (hide the live area, print, draw the
live area again), where prompt_toolkit's ``run_in_terminal`` flushed three times and switched
the terminal to cooked mode and back, leaving frames without the editor and footer between.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from prompt_toolkit.application import Application
from prompt_toolkit.output import ColorDepth, Output, create_output
from prompt_toolkit.output.flush_stdout import flush_stdout
from prompt_toolkit.output.vt100 import Vt100_Output
from prompt_toolkit.patch_stdout import StdoutProxy
from prompt_toolkit.utils import get_bell_environment_variable, get_term_environment_variable

__all__ = ["BEGIN", "END", "FrameOutput", "create_frame_output", "print_above"]

BEGIN = "\x1b[?2026h"
END = "\x1b[?2026l"


class FrameOutput(Vt100_Output):
    """A vt100 output whose every flush is one synchronized update; inside ``frame()`` flushes
    are held and go out together when it ends."""

    _held = 0

    def flush(self) -> None:
        if self._held or not self._buffer:
            return
        data = "".join(self._buffer)
        self._buffer = []
        flush_stdout(self.stdout, BEGIN + data + END)

    @contextmanager
    def frame(self) -> Iterator[None]:
        self._held += 1
        try:
            yield
        finally:
            self._held -= 1
            self.flush()


def create_frame_output() -> Output:
    """A ``FrameOutput`` on the terminal, or prompt_toolkit's usual output when stdout is none."""
    stdout: Any = sys.stdout
    while isinstance(stdout, StdoutProxy):
        stdout = stdout.original_stdout
    if stdout is None or sys.platform == "win32" or not stdout.isatty():
        return create_output()
    return FrameOutput.from_pty(
        stdout,
        term=get_term_environment_variable(),
        default_color_depth=_color_depth(),
        enable_bell=get_bell_environment_variable(),
    )


def _color_depth() -> ColorDepth | None:
    """``TAU_TRUE_COLOR`` (or pi's ``PI_TRUE_COLOR``): ``1`` 24-bit colour, ``0`` 256 colours,
    unset or ``auto`` prompt_toolkit's own detection."""
    from tau._env_twins import env_twin_flag

    forced = env_twin_flag("TRUE_COLOR")
    if forced is None:
        return ColorDepth.from_env()
    return ColorDepth.DEPTH_24_BIT if forced else ColorDepth.DEPTH_8_BIT


def print_above(app: Any, text: str) -> None:
    """Write ``text`` into the scrollback above the running ``app`` and draw the app again below
    it, as one frame."""
    output = app.output
    if not app.is_running:
        output.write_raw(text)
        output.flush()
        return
    held = output.frame() if isinstance(output, FrameOutput) else _nothing()
    with held:
        app.renderer.erase()
        output.write_raw(text)
        output.flush()
        app.renderer.reset()
        _draw_now(app)


def _draw_now(app: Application[Any]) -> None:
    """Draw ``app`` at once, inside the frame (``invalidate`` would draw it later, in a frame of its
    own), as its own redraw does: ask where the cursor is, when its answer can be read, then render
    in the application's context and tell the render hooks."""
    if not app.key_processor.input_queue and not app.is_done:
        app.renderer.request_absolute_cursor_position()

    def draw() -> None:
        app.render_counter += 1
        app.before_render.fire()
        app.renderer.render(app, app.layout)
        app.layout.update_parents_relations()
        app.after_render.fire()

    if app.context is not None:
        app.context.copy().run(draw)
    else:
        draw()


@contextmanager
def _nothing() -> Iterator[None]:
    yield
