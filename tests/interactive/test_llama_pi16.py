"""pi 1.6's own ``/llama`` and tau's, side by side in a real terminal against the same fake
llama.cpp router: the same rows in the same order, and the same stage and bar from the router's
event stream while a model loads (so the fake router's ``/models/sse`` is what pi reads)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from fake_llama_router import FakeLlamaRouter
from pi16 import pi16_command
from tau_command import TauCommand
from terminal import ENTER, ESCAPE, Terminal

DOWN = "\x1b[B"
CATALOG = {"qwen-small": "loaded", "big-model": "unloaded", "Sleepy": "sleeping", "busy": "loading"}


def _rows(terminal: Terminal) -> list[str]:
    """The list's rows: whole lines after a two-cell marker whose first word is a model's or the
    download row's."""
    names = {*CATALOG, "Download"}
    return [
        line[2:]
        for line in terminal.display().splitlines()
        if line[:2] in ("→ ", "› ", "  ") and line[2:].split(" ")[0] in names
    ]


def _load_big_model(terminal: Terminal) -> tuple[list[str], str]:
    """Open /llama, take the second row (big-model), keep the loaded model, and wait for the
    router's stage on screen; the rows, and the screen then. Arrow keys, as pi's list has no filter."""
    terminal.type("/llama")
    terminal.send(ENTER)
    terminal.wait_for(lambda: len(_rows(terminal)) == len(CATALOG) + 1)
    rows = _rows(terminal)
    terminal.send(DOWN)
    time.sleep(0.2)  # the dialog has the key before the next one
    terminal.send(ENTER)
    terminal.wait_for("2 models are loaded", where="display")  # a sleeping one counts
    terminal.send(DOWN)
    time.sleep(0.2)
    terminal.send(ENTER)  # Keep loaded and load
    bar = f"{'█' * 20}{'─' * 20} 50%"
    terminal.wait_for(lambda: "Loading tensors" in terminal.display() and bar in terminal.display())
    return rows, terminal.display()


def test_pi_and_tau_list_the_same_rows_and_show_the_same_load_progress(
    tau: TauCommand, start_tui: Callable[..., Terminal], tmp_path: Path
) -> None:
    with FakeLlamaRouter(CATALOG, slow=frozenset({"big-model"}), contexts={"Sleepy": 32768}) as router:
        tau.env["LLAMA_BASE_URL"] = router.url
        pi_dir = tmp_path / "pi-agent"
        pi_dir.mkdir()
        env = tau.env | {"PI_OFFLINE": "1", "PI_CODING_AGENT_DIR": str(pi_dir), "HOME": str(pi_dir)}
        pi = Terminal(pi16_command(), cwd=str(tau.work), env=env, rows=30, cols=140)
        try:
            pi.wait_for("v1.6.0")
            pi_rows, pi_screen = _load_big_model(pi)
            pi.send(ESCAPE)
            pi.wait_for("Stop loading?", where="display")
            pi.send(ENTER)  # Yes
        finally:
            pi.close()
        router.status["big-model"] = "unloaded"  # pi stopped it; tau starts from the same catalogue

        tau_rows, tau_screen = _load_big_model(start_tui(cols=140))

    assert (
        pi_rows
        == tau_rows
        == [
            f"{'qwen-small':<36}loaded · 8k context",
            "big-model",
            f"{'busy':<36}loading",
            f"{'Sleepy':<36}loaded · 33k context",
            f"{'Download model…':<36}Hugging Face owner/repository[:quant]",
        ]
    )
    for screen in (pi_screen, tau_screen):  # the stage and bar were waited for; the title and model too
        lines = [line.strip() for line in screen.splitlines()]
        assert "Loading model" in lines and "big-model" in lines


def _block(terminal: Terminal, first: str, count: int) -> list[str]:
    """The ``count`` stripped lines on screen from the one that is ``first``."""
    lines = [line.strip() for line in terminal.display().splitlines()]
    return lines[lines.index(first) : lines.index(first) + count] if first in lines else []


def _load_then_unload(terminal: Terminal, url: str) -> list[list[str]]:
    """Open /llama, load big-model keeping the others, then unload it: the list's title, the
    question before the load, the line after it, the question before the unload, the line after."""
    seen: list[list[str]] = []

    def step(keys: list[str], first: str, count: int) -> None:
        for key in keys:
            terminal.send(key)
            time.sleep(0.2)  # the dialog has the key before the next one
        # Every line drawn: a dialog's title can be on screen a frame before the line under it.
        terminal.wait_for(
            lambda: len(block := _block(terminal, first, count)) == count and all(block), where="display"
        )
        seen.append(_block(terminal, first, count))

    terminal.type("/llama")
    step([ENTER], "llama.cpp models", 2)
    terminal.wait_for(lambda: len(_rows(terminal)) == 4)
    step([DOWN, ENTER], "2 models are loaded", 1)
    step([DOWN, ENTER], "Loaded big-model", 1)
    terminal.wait_for(lambda: _rows(terminal)[:1] == [f"{'big-model':<36}loaded · 8k context"])
    step([ENTER], "Unload model?", 2)
    step([ENTER], "Unloaded big-model", 1)
    assert seen[0] == ["llama.cpp models", url]
    return seen


def _unreachable(terminal: Terminal) -> list[str]:
    terminal.type("/llama")
    terminal.send(ENTER)
    terminal.wait_for(lambda: len(_block(terminal, "llama.cpp unavailable", 4)) == 4, where="display")
    return _block(terminal, "llama.cpp unavailable", 4)


def test_pi_and_tau_title_the_list_and_word_a_load_an_unload_and_a_missing_router_alike(
    tau: TauCommand, start_tui: Callable[..., Terminal], tmp_path: Path
) -> None:
    """The list's title and the router's address under it, the question and the line after a load
    and after an unload, and "llama.cpp unavailable" when nothing answers: the same words in both."""
    catalog = {"qwen-small": "loaded", "big-model": "unloaded", "Sleepy": "sleeping"}
    pi_dir = tmp_path / "pi-agent"
    pi_dir.mkdir()
    pi_env = tau.env | {"PI_OFFLINE": "1", "PI_CODING_AGENT_DIR": str(pi_dir), "HOME": str(pi_dir)}
    with FakeLlamaRouter(catalog) as router:
        tau.env["LLAMA_BASE_URL"] = pi_env["LLAMA_BASE_URL"] = url = router.url
        pi = Terminal(pi16_command(), cwd=str(tau.work), env=pi_env, rows=30, cols=140)
        try:
            pi.wait_for("v1.6.0")
            pi_seen = _load_then_unload(pi, url)
        finally:
            pi.close()
        assert router.status == catalog
        tau_seen = _load_then_unload(start_tui(cols=140), url)
    assert pi_seen == tau_seen
    assert [lines[-1] for lines in tau_seen[2:]] == ["Loaded big-model", "big-model", "Unloaded big-model"]

    # nothing listens at the address now
    pi = Terminal(pi16_command(), cwd=str(tau.work), env=pi_env, rows=30, cols=140)
    try:
        pi.wait_for("v1.6.0")
        pi_dialog = _unreachable(pi)
    finally:
        pi.close()
    tau_dialog = _unreachable(start_tui(cols=140))
    port = url.rsplit(":", 1)[1]
    assert (
        pi_dialog
        == tau_dialog
        == [
            "llama.cpp unavailable",
            url,
            "",
            f"Could not reach llama.cpp server at {url}: connect ECONNREFUSED 127.0.0.1:{port}",
        ]
    )
