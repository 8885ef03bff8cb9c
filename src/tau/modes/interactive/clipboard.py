"""The system clipboard's image, through whichever tool the platform has (no library reads every
clipboard, and these tools are what the desktops ship): pngpaste on macOS, wl-paste on Wayland,
xclip on X11."""

from __future__ import annotations

import base64
import os
import shutil
import subprocess

from tau.ai.types import ImageContent

__all__ = ["read_clipboard_image"]

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
