"""What the terminal can show: inline images (and by which protocol), 24-bit colour, OSC 8 links.

Detected from the environment the terminal sets (``TERM_PROGRAM``, ``KITTY_WINDOW_ID``, ...) as pi 1.6
detects them; an unknown terminal gets the safe answers (no images, no links, 24-bit colour only
when ``COLORTERM`` says so). ``TAU_HYPERLINKS``/``TAU_TRUE_COLOR`` (``1`` or ``0``) and
``TAU_IMAGE_PROTOCOL`` (``kitty``, ``iterm2``, ``none``), or pi's ``PI_*`` names, override the
detection; the ``terminal.hyperlinks``, ``terminal.trueColor`` and ``terminal.images`` settings
override both.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Mapping
from typing import Literal

from msgspec import Struct

__all__ = ["Capabilities", "ImageProtocol", "detect_capabilities", "terminal_capabilities"]

ImageProtocol = Literal["kitty", "iterm2"]


class Capabilities(Struct, frozen=True):
    images: ImageProtocol | None
    true_color: bool
    hyperlinks: bool


def _tmux_forwards_hyperlinks() -> bool:
    """Whether the tmux client passes OSC 8 on (tmux drops it unless its client lists the feature)."""
    try:
        features = subprocess.run(
            ["tmux", "display-message", "-p", "#{client_termfeatures}"],
            capture_output=True,
            text=True,
            timeout=0.25,
            check=False,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    return "hyperlinks" in (feature.strip() for feature in features.split(","))


def _from_environment(
    env: Mapping[str, str], platform: str, tmux_hyperlinks: Callable[[], bool]
) -> Capabilities:
    program = env.get("TERM_PROGRAM", "").lower()
    term = env.get("TERM", "").lower()
    colorterm = env.get("COLORTERM", "").lower()
    hinted = colorterm in ("truecolor", "24bit") or term.endswith("-direct")
    if env.get("TMUX") or term.startswith("tmux"):
        return Capabilities(None, hinted, tmux_hyperlinks())  # images do not pass tmux reliably
    if term.startswith("screen"):
        return Capabilities(None, hinted, False)
    # Terminal multiplexers and terminals that speak kitty's graphics protocol; herdr first, as a
    # KITTY_WINDOW_ID of the terminal around it can leak into its panes.
    if program == "herdr":
        return Capabilities("kitty", hinted, True)
    if (
        program == "rex"
        or (program == "orca" and env.get("ORCA_IMAGE_PROTOCOL") == "kitty")
        or env.get("KITTY_WINDOW_ID")
        or program in ("kitty", "ghostty", "wezterm", "warpterminal")
        or "ghostty" in term
        or env.get("GHOSTTY_RESOURCES_DIR")
        or env.get("WEZTERM_PANE")
        or env.get("WARP_SESSION_ID")
        or env.get("WARP_TERMINAL_SESSION_UUID")
    ):
        return Capabilities("kitty", True, True)
    if env.get("ITERM_SESSION_ID") or program == "iterm.app":
        return Capabilities("iterm2", True, True)
    if (
        env.get("WT_SESSION")
        or program in ("alacritty", "vscode", "zed")
        or term.startswith("alacritty")
        or env.get("ALACRITTY_WINDOW_ID")
    ):
        return Capabilities(None, True, True)
    if env.get("TERMINAL_EMULATOR", "").lower() == "jetbrains-jediterm":
        return Capabilities(None, True, False)
    if platform == "win32":
        return Capabilities(None, True, False)
    # Unknown: a terminal that swallows OSC 8 would hide a link's address, so links stay text.
    return Capabilities(None, hinted, False)


def _flag(env: Mapping[str, str], name: str) -> bool | None:
    value = env.get(f"TAU_{name}", env.get(f"PI_{name}"))
    return True if value == "1" else False if value == "0" else None


def detect_capabilities(
    env: Mapping[str, str],
    platform: str = sys.platform,
    tmux_hyperlinks: Callable[[], bool] = _tmux_forwards_hyperlinks,
) -> Capabilities:
    """The terminal's capabilities from ``env``, with the ``TAU_*``/``PI_*`` overrides applied."""
    hyperlinks = _flag(env, "HYPERLINKS")
    detected = _from_environment(
        env, platform, tmux_hyperlinks if hyperlinks is None else (lambda: bool(hyperlinks))
    )
    protocol = env.get("TAU_IMAGE_PROTOCOL", env.get("PI_IMAGE_PROTOCOL", "")).lower()
    images: ImageProtocol | None = detected.images
    if protocol in ("kitty", "iterm2"):
        images = "kitty" if protocol == "kitty" else "iterm2"
    elif protocol in ("none", "0"):
        images = None
    true_color = _flag(env, "TRUE_COLOR")
    return Capabilities(
        images=images,
        true_color=detected.true_color if true_color is None else true_color,
        hyperlinks=detected.hyperlinks if hyperlinks is None else hyperlinks,
    )


def terminal_capabilities(
    env: Mapping[str, str],
    *,
    hyperlinks: bool | None,
    true_color: bool | None,
    images: Literal["kitty", "iterm2", "auto"] | None,
) -> Capabilities:
    """The capabilities to draw with: the settings' choices (``None``/``"auto"``: detected) over
    the detection. ``images=None`` is ``terminal.images: false``."""
    # A settings choice decides without asking tmux.
    detected = detect_capabilities(
        env,
        tmux_hyperlinks=(lambda: bool(hyperlinks)) if hyperlinks is not None else _tmux_forwards_hyperlinks,
    )
    return Capabilities(
        images=detected.images if images == "auto" else images,
        true_color=detected.true_color if true_color is None else true_color,
        hyperlinks=detected.hyperlinks if hyperlinks is None else hyperlinks,
    )
