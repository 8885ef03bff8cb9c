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
