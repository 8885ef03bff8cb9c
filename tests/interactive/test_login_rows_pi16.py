"""``/login``'s provider lists as pi 1.6's, side by side in a real terminal: the title, partners
first, and each row saying how that provider is configured (issue #32)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pi16 import pi16_command
from tau_command import MODEL, TauCommand
from terminal import ENTER, ESCAPE, Terminal

Start = Callable[..., Terminal]
DOWN = "\x1b[B"
TITLE = "Select provider to configure:"


def _pi(tau: TauCommand, tmp_path: Path) -> Terminal:
    pi_dir = tmp_path / "pi-agent"
    pi_dir.mkdir(exist_ok=True)
    (pi_dir / "models.json").write_text((tau.agent_dir / "models.json").read_text())
    env = tau.env | {"PI_OFFLINE": "1", "PI_CODING_AGENT_DIR": str(pi_dir), "HOME": str(pi_dir)}
    pi = Terminal([*pi16_command(), *MODEL], cwd=str(tau.work), env=env, rows=40, cols=140)
    pi.wait_for("fake-model")
    return pi


def _rows(terminal: Terminal, downs: int) -> list[str]:
    """The title and the first rows of the provider list after the method ``downs`` rows down."""
    terminal.settle()
    terminal.type("/login")
    terminal.send(ENTER)
    terminal.wait_for("Sign in with an API key", where="display")
    for _ in range(downs):
        terminal.send(DOWN)
    terminal.send(ENTER)

    def listed() -> list[str]:
        lines = [line.strip() for line in terminal.display().splitlines()]
        start = lines.index(TITLE) if TITLE in lines else len(lines)
        return [line.lstrip("→›").strip() for line in lines[start + 1 :] if " • " in line or " ✓ " in line]

    # pi animates its partner rows, so the screen never goes quiet: wait for the rows instead.
    terminal.wait_for(lambda: len(listed()) >= 6, where="display")
    terminal.settle(timeout=1.0)
    return [TITLE, *listed()[:6]]


def test_the_api_key_list_is_pis(tau: TauCommand, start_tui: Start, tmp_path: Path) -> None:
    tau.env["ANTHROPIC_API_KEY"] = "sk-test"
    pi = _pi(tau, tmp_path)
    try:
        pi_rows = _rows(pi, 1)
    finally:
        pi.close()
    assert (
        pi_rows
        == _rows(start_tui(cols=140, rows=40), 1)
        == [
            TITLE,
            "Radius ✦ • not configured",
            "OpenRouter ✦ • not configured",
            "Amazon Bedrock • not configured",
            "Ant Ling • not configured",
            "Anthropic ✓ env: ANTHROPIC_API_KEY",
            "Azure • not configured",
        ]
    )


def test_the_account_list_is_pis(tau: TauCommand, start_tui: Start, tmp_path: Path) -> None:
    tau.env["ANTHROPIC_API_KEY"] = "sk-test"
    pi = _pi(tau, tmp_path)
    try:
        pi_rows = _rows(pi, 0)
    finally:
        pi.close()
    tau_rows = _rows(start_tui(cols=140, rows=40), 0)
    # tau's sign-ins that pi 1.6 no longer has
    extras = ("Antigravity", "Google Cloud Code Assist")
    assert pi_rows[:5] == [row for row in tau_rows if not row.startswith(extras)][:5]
    assert "Anthropic • API key configured" in pi_rows


def _searched(terminal: Terminal, ref: str) -> list[str]:
    """``/login <ref>`` for a name that is no provider's: both kinds of sign-in, searched."""
    terminal.settle()
    terminal.type(f"/login {ref}")
    terminal.settle()
    terminal.send(ESCAPE)  # the completions offered for the argument closed, so that Enter sends it
    terminal.settle()
    terminal.send(ENTER)
    terminal.wait_for(TITLE, where="display")
    found: list[str] = []
    for _ in range(_MATCHES_SCROLLED):  # every match, scrolling the list from top to bottom
        terminal.settle(quiet=0.15, timeout=1.0)  # a row's move is one small frame
        lines = [line.strip() for line in terminal.display().splitlines()]
        for line in lines[lines.index(TITLE) + 1 :]:
            row = line.lstrip("→›").strip()
            if "] " in line and row not in found:
                found.append(row)
        terminal.send(DOWN)
    return found


_MATCHES_SCROLLED = 16


def test_a_login_search_labels_each_row_with_its_kind_of_sign_in_as_pi(
    tau: TauCommand, start_tui: Start, tmp_path: Path
) -> None:
    tau.env["XAI_API_KEY"] = "xai-test"
    pi = _pi(tau, tmp_path)
    try:
        pi_rows = _searched(pi, "xa")
    finally:
        pi.close()
    tau_rows = _searched(start_tui(cols=140, rows=40), "xa")
    assert pi_rows == tau_rows  # the same matches in the same order (pi's fuzzy ranking)
    assert 8 < len(pi_rows) < _MATCHES_SCROLLED  # more than one screen of them, and every one seen
    assert pi_rows[:2] == ["xAI [subscription] • API key configured", "xAI [API key] ✓ env: XAI_API_KEY"]


def _method_screen(terminal: Terminal, command: str, title: str) -> list[str]:
    """The title and rows of the method screen ``command`` opens."""
    terminal.settle()
    terminal.type(command)
    terminal.settle()
    if " " in command:
        terminal.send(ESCAPE)  # the completions offered for the argument closed
        terminal.settle()
    terminal.send(ENTER)
    terminal.wait_for(title, where="display")
    terminal.settle()
    lines = [line.strip() for line in terminal.display().splitlines()]
    start = lines.index(title)
    rows = [line.lstrip("→›").strip() for line in lines[start + 1 : start + 6]]
    return [title, *[row for row in rows if row.startswith("Sign in with")]]


def test_the_first_login_screen_offers_radius_with_its_status_as_pi(
    tau: TauCommand, start_tui: Start, tmp_path: Path
) -> None:
    title = "Select authentication method:"
    pi = _pi(tau, tmp_path)
    try:
        pi_rows = _method_screen(pi, "/login", title)
    finally:
        pi.close()
    assert (
        pi_rows
        == _method_screen(start_tui(cols=140, rows=40), "/login", title)
        == [
            title,
            "Sign in with an account",
            "Sign in with an API key",
            "Sign in with Radius • not configured",
        ]
    )


def test_login_takes_a_providers_name_in_any_case_as_pi(
    tau: TauCommand, start_tui: Start, tmp_path: Path
) -> None:
    title = "Select authentication method for xAI:"
    pi = _pi(tau, tmp_path)
    try:
        pi_rows = _method_screen(pi, "/login XAI", title)
    finally:
        pi.close()
    assert (
        pi_rows
        == _method_screen(start_tui(cols=140, rows=40), "/login XAI", title)
        == [title, "Sign in with SuperGrok or X Premium", "Sign in with an API key"]
    )
