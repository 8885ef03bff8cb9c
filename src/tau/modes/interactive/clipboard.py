"""The system clipboard, through whichever tool the platform has (no library reads every
clipboard, and these tools are what the desktops ship): its image read with pngpaste on macOS,
wl-paste on Wayland, xclip on X11; text written with pbcopy, wl-copy, xclip or xsel, and always
as OSC 52 to the terminal."""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
from collections.abc import Callable

from tau.ai.types import ImageContent

__all__ = ["copy_to_clipboard", "read_clipboard_image"]

_PNG = b"\x89PNG\r\n\x1a\n"
_MAX_BYTES = 20 * 1024 * 1024


def _commands() -> list[list[str]]:
    commands = [["pngpaste", "-"]]
    if os.environ.get("WAYLAND_DISPLAY"):
        commands.append(["wl-paste", "--no-newline", "--type", "image/png"])
    commands.append(["xclip", "-selection", "clipboard", "-t", "image/png", "-o"])
    return commands


def read_clipboard_image() -> ImageContent | None:
    """The clipboard's PNG image, or ``None`` when there is none or no tool to read it."""
    for command in _commands():
        if shutil.which(command[0]) is None:
            continue
        try:
            run = subprocess.run(command, capture_output=True, timeout=5, check=False)
        except (OSError, subprocess.SubprocessError):
            continue
        data = run.stdout
        if run.returncode == 0 and data.startswith(_PNG) and len(data) <= _MAX_BYTES:
            return ImageContent(base64.b64encode(data).decode("ascii"), "image/png")
    return None


def copy_to_clipboard(write_raw: Callable[[str], None], text: str) -> None:
    """A clipboard tool when there is one; OSC 52 always (it works over ssh in most terminals),
    written to the terminal with ``write_raw``."""
    for command in (
        ["pbcopy"],
        ["wl-copy"],
        ["xclip", "-selection", "clipboard"],
        ["xsel", "--clipboard", "--input"],
    ):
        if shutil.which(command[0]) and (command[0] != "wl-copy" or os.environ.get("WAYLAND_DISPLAY")):
            try:
                subprocess.run(command, input=text, text=True, timeout=5, check=True, capture_output=True)
                break
            except (OSError, subprocess.SubprocessError):
                continue
    payload = base64.b64encode(text.encode()).decode()
    write_raw(f"\x1b]52;c;{payload}\x07")
