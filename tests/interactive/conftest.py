"""Fixtures for the terminal UI tests: the real `tau` in a pseudo-terminal against the fake server."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tau_command import MODEL, TauCommand, tau_command
from terminal import Terminal


@pytest.fixture
def tau(tmp_path: Path) -> Iterator[TauCommand]:
    yield from tau_command(tmp_path)


@pytest.fixture
def start_tui(tau: TauCommand) -> Iterator[Callable[..., Terminal]]:
    """``start_tui(*extra_args, rows=30, cols=100)``: tau with the fake model, up and ready; in the
    inline mode unless ``tui_mode`` says otherwise or ``--tui-mode`` is among the arguments
    (``tui_mode=None``: the default, fullscreen, as a user gets it)."""
    started: list[Terminal] = []

    def start(
        *args: str,
        rows: int = 30,
        cols: int = 100,
        ready: str = "fake-model",
        tui_mode: str | None = "regular",
    ) -> Terminal:
        mode = ["--tui-mode", tui_mode] if tui_mode is not None and "--tui-mode" not in args else []
        terminal = Terminal(
            [sys.executable, "-m", "tau", *MODEL, *mode, *args],
            cwd=str(tau.work),
            env=tau.env,
            rows=rows,
            cols=cols,
        )
        started.append(terminal)
        terminal.wait_for(ready)
        return terminal

    yield start
    for terminal in started:
        terminal.close()
