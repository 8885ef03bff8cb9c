"""The README's RPC and SDK examples work as written: copied into a file and run from a fresh shell
whose PATH has the environment's `bin` folder (what `. .venv/bin/activate` does), against the fake
server."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from tau_command import TauCommand

from tau.testing.fake_llm import Turn

README = Path(__file__).resolve().parents[2] / "README.md"


def python_example(section: str) -> str:
    """The first ```python block after the heading ``section``."""
    text = README.read_text()
    start = text.index(f"\n{section}\n")
    match = re.compile(r"```python\n(.*?)```", re.S).search(text, start)
    assert match is not None, section
    return match.group(1)


def run_as_a_user(tau: TauCommand, code: str) -> subprocess.CompletedProcess[str]:
    script = tau.work / "example.py"
    script.write_text(code)
    env = {
        "HOME": str(tau.work),
        "PATH": os.pathsep.join([os.path.dirname(sys.executable), os.defpath]),
        "TAU_AGENT_DIR": str(tau.agent_dir),
    }
    return subprocess.run(
        [sys.executable, script.name],
        cwd=tau.work,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize("section", ["### RPC mode", "### Embedding tau (SDK)"])
def test_the_readme_example_runs_as_written_and_prints_the_reply(tau: TauCommand, section: str) -> None:
    tau.server.add(Turn(text="Two TODOs."))
    result = run_as_a_user(tau, python_example(section))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "Two TODOs."
    assert tau.server.requests
