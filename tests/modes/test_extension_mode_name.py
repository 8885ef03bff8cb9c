"""``ctx.mode``: the mode tau runs in, named as pi 1.6 names it, in each mode an extension runs in."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tau_command import MODEL, TauCommand, tau_command

from tau.modes.rpc_client import RpcClient
from tau.testing.fake_llm import Turn

RECORDER = """
def setup(tau):
    @tau.on("session_start")
    def record(event, ctx):
        with open("modes.txt", "a") as out:
            out.write(f"{ctx.mode} {ctx.has_ui}\\n")
"""


@pytest.fixture
def tau(tmp_path: Path) -> Iterator[TauCommand]:
    yield from tau_command(tmp_path)


async def test_each_mode_names_itself_as_pi16_does(tau: TauCommand) -> None:
    extension = tau.work / "recorder.py"
    extension.write_text(RECORDER)
    tau.server.add(Turn(text="one"), Turn(text="two"))
    assert tau.run(*MODEL, "-e", str(extension), "-p", "hi").returncode == 0
    assert tau.run(*MODEL, "-e", str(extension), "--mode", "json", "-p", "hi").returncode == 0
    command = [sys.executable, "-m", "tau", "--mode", "rpc", *MODEL, "-e", str(extension)]
    async with RpcClient(command, cwd=str(tau.work), env=tau.env) as rpc:
        await rpc.call("get_state")
    assert (tau.work / "modes.txt").read_text().splitlines() == ["print False", "json False", "rpc True"]
