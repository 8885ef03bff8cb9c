"""The terminal's capabilities as pi 1.6 detects them, the TAU_*/PI_* overrides and the settings."""

from __future__ import annotations

import pytest

from tau.modes.interactive.capabilities import Capabilities, detect_capabilities, terminal_capabilities


def _no_tmux_links() -> bool:
    return False


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"TERM_PROGRAM": "kitty"}, Capabilities("kitty", True, True)),
        ({"KITTY_WINDOW_ID": "3"}, Capabilities("kitty", True, True)),
        ({"TERM_PROGRAM": "ghostty"}, Capabilities("kitty", True, True)),
        ({"TERM": "xterm-ghostty"}, Capabilities("kitty", True, True)),
        ({"WEZTERM_PANE": "1"}, Capabilities("kitty", True, True)),
        ({"TERM_PROGRAM": "WarpTerminal"}, Capabilities("kitty", True, True)),
        ({"TERM_PROGRAM": "iTerm.app"}, Capabilities("iterm2", True, True)),
        ({"ITERM_SESSION_ID": "w0"}, Capabilities("iterm2", True, True)),
        ({"TERM_PROGRAM": "vscode"}, Capabilities(None, True, True)),
        ({"WT_SESSION": "x"}, Capabilities(None, True, True)),
        ({"ALACRITTY_WINDOW_ID": "1"}, Capabilities(None, True, True)),
        ({"TERMINAL_EMULATOR": "JetBrains-JediTerm"}, Capabilities(None, True, False)),
        ({"TERM": "screen-256color", "COLORTERM": "truecolor"}, Capabilities(None, True, False)),
        ({"TERM": "xterm-256color"}, Capabilities(None, False, False)),
        ({"TERM": "xterm-direct"}, Capabilities(None, True, False)),
        ({"TERM_PROGRAM": "herdr", "KITTY_WINDOW_ID": "1"}, Capabilities("kitty", False, True)),
        ({"TERM_PROGRAM": "orca"}, Capabilities(None, False, False)),
        ({"TERM_PROGRAM": "orca", "ORCA_IMAGE_PROTOCOL": "kitty"}, Capabilities("kitty", True, True)),
    ],
)
def test_terminals_are_detected_as_pi_detects_them(env: dict[str, str], expected: Capabilities) -> None:
    assert detect_capabilities(env, "linux", _no_tmux_links) == expected


def test_inside_tmux_images_are_off_and_links_follow_the_tmux_client() -> None:
    env = {"TMUX": "/tmp/tmux", "TERM_PROGRAM": "kitty"}
    assert detect_capabilities(env, "linux", lambda: True) == Capabilities(None, False, True)
    assert detect_capabilities(env, "linux", lambda: False) == Capabilities(None, False, False)


def test_a_windows_console_has_true_colour_but_no_links() -> None:
    assert detect_capabilities({}, "win32", _no_tmux_links) == Capabilities(None, True, False)


def test_environment_overrides_win_over_the_detection_tau_names_first() -> None:
    env = {"TERM_PROGRAM": "kitty", "TAU_IMAGE_PROTOCOL": "none", "PI_HYPERLINKS": "0", "TAU_TRUE_COLOR": "0"}
    assert detect_capabilities(env, "linux", _no_tmux_links) == Capabilities(None, False, False)
    env = {"PI_IMAGE_PROTOCOL": "iterm2", "TAU_IMAGE_PROTOCOL": "kitty", "PI_HYPERLINKS": "1"}
    assert detect_capabilities(env, "linux", _no_tmux_links) == Capabilities("kitty", False, True)


def test_settings_override_detection_and_environment() -> None:
    env = {"TERM_PROGRAM": "kitty", "TAU_HYPERLINKS": "1"}
    found = terminal_capabilities(env, hyperlinks=False, true_color=False, images=None)
    assert found == Capabilities(None, False, False)
    found = terminal_capabilities({"TERM": "xterm"}, hyperlinks=True, true_color=True, images="iterm2")
    assert found == Capabilities("iterm2", True, True)
    found = terminal_capabilities(env, hyperlinks=None, true_color=None, images="auto")
    assert found == Capabilities("kitty", True, True)
