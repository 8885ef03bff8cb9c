"""The fault campaign (tests/faults): run tau on a bad input, check it fails cleanly, count the cases.

Every bad input goes through ``Campaign.check``: exit 0 or 1 (or a documented signal code), no
traceback, no hang, a short message on errors. The count is printed when the campaign ran:
"N bad inputs, 0 tracebacks, 0 hangs, 0 lines lost".
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import threading
import traceback
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from tau_command import MODEL, TauCommand

from tau.testing.fake_llm import Turn

# How long one bad input may take before it counts as a hang. A clean failure takes well under a
# second; these leave room for a busy machine.
IN_PROCESS_TIMEOUT = 15.0
PROCESS_TIMEOUT = 20.0


@dataclass
class Tally:
    bad_inputs: int = 0
    tracebacks: int = 0
    hangs: int = 0
    lines_lost: int = 0


TALLY = Tally()


@dataclass
class Outcome:
    """How one run ended: exit code (``None``: it hung or raised), output, and a raised traceback."""

    code: int | None
    stdout: str
    stderr: str
    raised: str = ""
    hung: bool = False


class Campaign:
    """A ``TauCommand`` (agent dir, work folder, fake server) that runs tau on bad inputs."""

    def __init__(self, tau: TauCommand) -> None:
        self.tau = tau
        self.server = tau.server
        self.agent_dir = tau.agent_dir
        self.work = tau.work

    # ---- running ------------------------------------------------------------------------------

    def process(
        self, *args: str | bytes, stdin: str | bytes = b"", timeout: float = PROCESS_TIMEOUT
    ) -> Outcome:
        """The real ``tau`` process; a run past ``timeout`` is killed and counted as a hang."""
        data = stdin.encode() if isinstance(stdin, str) else stdin
        try:
            done = subprocess.run(
                [sys.executable, "-m", "tau", *args],
                cwd=self.work,
                env=self.tau.env,
                input=data,
                capture_output=True,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired as exc:
            return Outcome(None, _text(exc.stdout), _text(exc.stderr), hung=True)
        return Outcome(done.returncode, _text(done.stdout), _text(done.stderr))

    def in_process(self, *args: str, stdin: str = "", timeout: float = IN_PROCESS_TIMEOUT) -> Outcome:
        """``tau.cli.main.run`` in this process (~10 ms instead of ~300 ms): the same code path from
        the parsed command line on, with stdin, stdout, stderr, cwd and environment swapped in."""
        from tau.cli.main import run

        result: dict[str, Any] = {}
        out, err = io.StringIO(), io.StringIO()

        def target() -> None:
            try:
                result["code"] = run(list(args))
            except SystemExit as exc:
                result["code"] = exc.code if isinstance(exc.code, int) else 1
            except BaseException:
                result["raised"] = traceback.format_exc()

        saved_env, saved_cwd, saved_stdin = dict(os.environ), os.getcwd(), sys.stdin
        os.environ.clear()
        os.environ.update(self.tau.env)
        os.chdir(self.work)
        sys.stdin = io.StringIO(stdin)
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                thread = threading.Thread(target=target, daemon=True)
                thread.start()
                thread.join(timeout)
        finally:
            sys.stdin = saved_stdin
            os.chdir(saved_cwd)
            os.environ.clear()
            os.environ.update(saved_env)
        if thread.is_alive():
            return Outcome(None, out.getvalue(), err.getvalue(), hung=True)
        return Outcome(result.get("code"), out.getvalue(), err.getvalue(), raised=result.get("raised", ""))

    # ---- checking -----------------------------------------------------------------------------

    def check(
        self,
        outcome: Outcome,
        *,
        codes: Sequence[int] = (0, 1),
        max_error_lines: int = 10,
    ) -> Outcome:
        """Count one bad input and assert it ended cleanly: an allowed exit code, no traceback, no
        hang, and for a failure a short message on stderr."""
        TALLY.bad_inputs += 1
        shown = (
            f"exit {outcome.code}\n--- stdout\n{outcome.stdout[-3000:]}\n--- stderr\n{outcome.stderr[-3000:]}"
        )
        if outcome.hung:
            TALLY.hangs += 1
            pytest.fail(f"tau hung\n{shown}")
        if outcome.raised or "Traceback (most recent call last)" in outcome.stdout + outcome.stderr:
            TALLY.tracebacks += 1
            pytest.fail(f"a traceback\n{outcome.raised}\n{shown}")
        assert outcome.code in codes, shown
        if outcome.code == 1:
            lines = [line for line in outcome.stderr.splitlines() if line.strip()]
            assert lines, f"exit 1 without a message\n{shown}"
            assert len(lines) <= max_error_lines, shown
            assert all(len(line) <= 5000 for line in lines), (
                shown
            )  # tau quotes up to 4000 characters of a body
        return outcome

    def run_check(self, *args: str, stdin: str = "", **check: Any) -> Outcome:
        """``in_process`` then ``check``."""
        return self.check(self.in_process(*args, stdin=stdin), **check)

    def process_check(self, *args: str | bytes, stdin: str | bytes = b"", **check: Any) -> Outcome:
        """``process`` then ``check``."""
        timeout = check.pop("timeout", PROCESS_TIMEOUT)
        return self.check(self.process(*args, stdin=stdin, timeout=timeout), **check)

    # ---- sessions -----------------------------------------------------------------------------

    def session_files(self) -> list[Path]:
        return self.tau.session_files()

    def seed_session(self) -> Path:
        """A real two-message session written by tau itself."""
        self.server.add(Turn(text="first answer"))
        outcome = self.in_process(*MODEL, "-p", "first question")
        assert outcome.code == 0, outcome
        [path] = self.session_files()
        return path


def _text(data: bytes | str | None) -> str:
    if data is None:
        return ""
    return data if isinstance(data, str) else data.decode("utf-8", "replace")


def session_lines(path: Path) -> list[dict[str, Any]]:
    """Every line of a session file as a JSON object; fails on any line that is not one."""
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b"", f"{path} ends in a partial line: {lines[-1][:200]!r}"
    parsed = []
    for number, line in enumerate(lines[:-1], start=1):
        try:
            value = json.loads(line)
        except ValueError:
            pytest.fail(f"{path}:{number} is not JSON: {line[:200]!r}")
        assert isinstance(value, dict), f"{path}:{number}: {line[:200]!r}"
        parsed.append(value)
    return parsed


def count_lost(before: bytes, after: bytes) -> int:
    """How many of the lines in ``before`` are not, in order, at the start of ``after`` (and count them)."""
    old, new = before.split(b"\n"), after.split(b"\n")
    kept = 0
    for a, b in zip(old, new, strict=False):
        if a != b:
            break
        kept += 1
    # A last line without its newline may be completed, never changed.
    lost = len([line for line in old[kept:] if line])
    if lost == 1 and old[-1] and after.startswith(before):
        lost = 0
    TALLY.lines_lost += lost
    return lost


def damaged_session(campaign: Campaign, bad: bytes) -> tuple[Path, bytes]:
    """A session tau wrote, with ``bad`` put in as line 3 (between the question and the reply)."""
    path = campaign.seed_session()
    lines = path.read_bytes().split(b"\n")
    data = b"\n".join([*lines[:2], bad, *lines[2:]])
    path.write_bytes(data)
    return path, data


def reopen_and_continue(campaign: Campaign, path: Path, before: bytes) -> None:
    """Continue the damaged session: a clean exit, the earlier conversation sent, nothing lost."""
    campaign.server.add(Turn(text="second answer"))
    outcome = campaign.run_check(*MODEL, "--session", str(path), "-p", "second question", max_error_lines=20)
    assert outcome.code == 0, outcome
    sent = json.dumps(campaign.server.last_request.body["messages"])
    assert "first question" in sent and "second question" in sent
    after = path.read_bytes()
    assert count_lost(before, after) == 0
    # What tau appended is whole JSON lines.
    appended = after[len(before) :].lstrip(b"\n")
    tail = path.with_suffix(".tail")
    tail.write_bytes(appended)
    assert len(session_lines(tail)) >= 2


def write_json(path: Path, value: Any) -> bytes:
    data = json.dumps(value).encode()
    path.write_bytes(data)
    return data


@contextlib.contextmanager
def unchanged(*paths: Path) -> Iterator[None]:
    """Assert that ``paths`` hold the same bytes (or stay missing) after the block."""
    before = {p: p.read_bytes() if p.is_file() else None for p in paths}
    yield
    for p, data in before.items():
        now = p.read_bytes() if p.is_file() else None
        assert now == data, f"{p} changed"


def processes_running(marker: str) -> list[int]:
    """Pids of live processes whose command line contains ``marker`` (zombies excluded)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                cmdline = handle.read().replace(b"\0", b" ").decode("utf-8", "replace")
            with open(f"/proc/{entry}/stat", "rb") as handle:
                state = handle.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if marker in cmdline and state != b"Z" and int(entry) != os.getpid():
            found.append(int(entry))
    return found


def kill_processes(pids: Sequence[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
