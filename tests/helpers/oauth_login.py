"""The real ``tau`` process driven through subscription logins against the fake OAuth server: the
test plays the browser (or enters the device code) and reads what tau stored in auth.json."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from tau.ai.catalogue import get_models
from tau.testing.fake_oauth import FakeOAuthServer


@dataclass
class Tau:
    agent_dir: Path
    env: dict[str, str]

    @property
    def auth_file(self) -> Path:
        return self.agent_dir / "auth.json"

    def stored(self) -> dict[str, dict[str, object]]:
        data: dict[str, dict[str, object]] = json.loads(self.auth_file.read_text())
        return data

    def popen(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-m", "tau", *args],
            env=self.env,
            cwd=self.agent_dir,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def run(self, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "tau", *args],
            env=self.env,
            cwd=self.agent_dir,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=60,
        )

    def login(
        self, provider: str, *, stdin: str = "", browse: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """``tau auth login provider``, playing the browser: GET the printed URL and follow its redirect
        to tau's callback, as a browser does after the user approves."""
        process = self.popen("auth", "login", provider)
        assert process.stdin and process.stdout
        if stdin:
            process.stdin.write(stdin)
            process.stdin.flush()
        seen = []
        for line in process.stdout:
            seen.append(line)
            if browse and line.startswith("  http"):
                httpx.get(line.strip(), follow_redirects=True, timeout=10)
                break
        out, err = process.communicate(timeout=30)
        return subprocess.CompletedProcess(process.args, process.returncode, "".join(seen) + out, err)

    def expire(self, provider: str) -> None:
        """Make the stored login of ``provider`` stale, as after an hour away."""
        data = self.stored()
        data[provider]["expires"] = int(time.time() * 1000) - 1000
        self.auth_file.write_text(json.dumps(data))


def make_tau(tmp_path: Path, oauth: FakeOAuthServer) -> Tau:
    """A fresh agent folder, and an environment whose provider hosts are the fake's and whose browser
    does nothing (the test is the browser); no key or token of the calling shell leaks in."""
    agent_dir = tmp_path / "agent"
    agent_dir.mkdir()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.endswith(("_API_KEY", "_TOKEN")) and not k.startswith("TAU_")
    }
    env.update(
        TAU_AGENT_DIR=str(agent_dir),
        TAU_OAUTH_TEST_HOSTS=oauth.hosts_env(),
        TAU_OAUTH_TEST_CALLBACK_PORT="0",
        TAU_OAUTH_TEST_POLL_S="0.05",  # device logins poll every 50 ms, not every second
        BROWSER="true",  # webbrowser runs `true <url>`: the test is the browser
    )
    return Tau(agent_dir, env)


def model_id(provider: str, api: str) -> str:
    """The first catalogue model of ``provider`` on ``api``."""
    return next(m.id for m in get_models(provider) if m.api == api)
