"""Every code block the docs mark runnable (a `<!-- runnable -->` line right before the fence) runs as
written: shell blocks with bash, Python blocks with the environment's Python, each from a fresh home
folder whose `PATH` has the environment's `bin` folder (what `. .venv/bin/activate` does).

The home stands in for a user with an Anthropic key: `ANTHROPIC_API_KEY` is set and its
`~/.tau/agent/models.json` points the built-in `anthropic` provider at the fake server, so the blocks
choose their model as a user's run would and nothing leaves the machine."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tau.context import tau_docs_path
from tau.testing.fake_llm import FakeLLMServer, Turn

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted(Path(tau_docs_path()).glob("*.md"))]
MARKER = "<!-- runnable -->"
_BLOCK = re.compile(r"^<!-- runnable -->\n```(\w*)\n(.*?)^```", re.M | re.S)
# Words that show a block asks the model something: then the fake server must have been asked.
_ASKS_THE_MODEL = re.compile(r"\btau\b[^\n|]* -p\b|\.prompt\(")


@dataclass(frozen=True)
class Block:
    page: Path
    number: int
    language: str
    code: str

    @property
    def name(self) -> str:
        return f"{self.page.name}:{self.number}"


def runnable_blocks() -> list[Block]:
    blocks = []
    for page in PAGES:
        for number, match in enumerate(_BLOCK.finditer(page.read_text()), start=1):
            blocks.append(Block(page, number, match.group(1), match.group(2)))
    return blocks


BLOCKS = runnable_blocks()


@dataclass
class Home:
    home: Path
    work: Path
    server: FakeLLMServer
    env: dict[str, str]


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Home]:
    home, work = tmp_path / "home", tmp_path / "home" / "project"
    agent_dir = home / ".tau" / "agent"
    agent_dir.mkdir(parents=True)
    work.mkdir()
    (work / "notes.md").write_text("# Notes\n\nNothing yet.\n")
    with FakeLLMServer() as server:
        server.add(*[Turn(text="Done.") for _ in range(20)])
        (agent_dir / "models.json").write_text(
            json.dumps({"providers": {"anthropic": {"baseUrl": server.url()}}})
        )
        env = {
            "HOME": str(home),
            "PATH": os.pathsep.join([os.path.dirname(sys.executable), os.defpath]),
            "ANTHROPIC_API_KEY": "sk-ant-test",
            "TAU_OFFLINE": "1",
        }
        yield Home(home, work, server, env)


def test_the_docs_mark_blocks_runnable() -> None:
    names = {block.page.name for block in BLOCKS}
    assert {"README.md", "quickstart.md", "sdk.md", "rpc.md", "testing.md"} <= names


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_runnable_marker_stands_right_before_a_shell_or_python_block(page: Path) -> None:
    text = page.read_text()
    markers = len(re.findall(rf"^{re.escape(MARKER)}$", text, re.M))
    blocks = [m.group(1) for m in _BLOCK.finditer(text)]
    assert len(blocks) == markers
    assert set(blocks) <= {"sh", "bash", "python"}


@pytest.mark.parametrize("block", BLOCKS, ids=lambda block: block.name)
def test_a_runnable_block_runs_as_written(home: Home, block: Block) -> None:
    if block.language == "python":
        script = home.work / "example.py"
        script.write_text(block.code)
        command = [sys.executable, script.name]
    else:
        script = home.work / "example.sh"
        script.write_text(block.code)
        command = ["bash", "-e", "-o", "pipefail", script.name]
    result = subprocess.run(command, cwd=home.work, env=home.env, capture_output=True, text=True, timeout=90)
    assert result.returncode == 0, f"{block.name}\n{block.code}\n{result.stdout}\n{result.stderr}"
    assert "Traceback" not in result.stderr
    if _ASKS_THE_MODEL.search(block.code):
        assert home.server.requests, f"{block.name} asked no model"
