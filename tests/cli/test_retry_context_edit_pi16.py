"""What a retried error reply leaves in the session, side by side with pi 1.6 (issue #32): each
error reply auto-retry sends again stays in the file and leaves the context through a
``context_edit`` entry (replacement ``null``) written right after ``auto_retry_start`` and announced
with ``entry_appended``; a resumed session, tau's or pi's, continuing either one's file, sends the
conversation without it. pi comes from ``.ci/pi16`` (installed by ``scripts/check``) or
``$TAU_TEST_PI16_DIR``."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from chat_messages import conversation_messages
from pi16 import pi16_command
from tau_command import MODEL, TauCommand

from tau.testing.fake_llm import Fault, RecordedRequest, Turn

SETTINGS = {"retry": {"baseDelayMs": 2}}
OVERLOADED = {"error": {"type": "overloaded_error", "message": "Overloaded"}}


def status(code: int, body: dict[str, Any] | None = None) -> Turn:
    return Turn(fault=Fault("status", status=code, body=body))


class Ran:
    def __init__(self, ran: subprocess.CompletedProcess[str], requests: list[RecordedRequest], session: Path):
        self.code = ran.returncode
        self.stdout = ran.stdout
        self.stderr = ran.stderr
        self.requests = requests
        self.session = session


def run(tau: TauCommand, side: str, pi_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    if side == "tau":
        return tau.run(*MODEL, *args)
    env = tau.env | {"PI_OFFLINE": "1", "PI_CODING_AGENT_DIR": str(pi_dir), "HOME": str(pi_dir)}
    return subprocess.run(
        [*pi16_command(), *MODEL, *args],
        cwd=tau.work,
        env=env,
        input="",
        capture_output=True,
        text=True,
        timeout=60,
    )


def setup(tau: TauCommand, tmp_path: Path) -> Path:
    pi_dir = tmp_path / "pi"
    pi_dir.mkdir()
    for folder in (tau.agent_dir, pi_dir):
        (folder / "settings.json").write_text(json.dumps(SETTINGS))
    (pi_dir / "models.json").write_text((tau.agent_dir / "models.json").read_text())
    return pi_dir


def both(tau: TauCommand, tmp_path: Path, turns: list[Turn]) -> tuple[Ran, Ran, Path]:
    """A first prompt, then one whose reply fails as ``turns`` say, in tau and in pi."""
    pi_dir = setup(tau, tmp_path)
    out = []
    for side in ("tau", "pi"):
        tau.server.add(Turn(text="Ready."))
        assert run(tau, side, pi_dir, "-p", "Get ready.").returncode == 0
        start = len(tau.server.requests)
        tau.server.add(*turns)
        ran = run(tau, side, pi_dir, "-c", "--mode", "json", "-p", "Ask.")
        sessions = tau.session_files() if side == "tau" else sorted((pi_dir / "sessions").rglob("*.jsonl"))
        out.append(Ran(ran, tau.server.requests[start:], sessions[-1]))
        assert tau.server.pending == 0
    return out[0], out[1], pi_dir


def flow(stdout: str) -> list[Any]:
    out: list[Any] = []
    for line in stdout.splitlines():
        if not line.startswith("{"):
            continue
        event = json.loads(line)
        kind = event["type"]
        if kind in ("agent_start", "turn_start", "turn_end"):
            out.append([kind])
        elif kind == "agent_end":
            out.append([kind, event.get("willRetry")])
        elif kind == "message_end" and event["message"]["role"] != "system":
            out.append([kind, event["message"]["role"], event["message"].get("stopReason")])
        elif kind == "auto_retry_start":
            out.append([kind, event["attempt"], event["maxAttempts"], event["delayMs"]])
        elif kind == "auto_retry_end":
            out.append([kind, event["success"], event["attempt"]])
        elif kind == "entry_appended":
            entry = event["entry"]
            out.append([kind, entry["type"], sorted(entry), entry.get("replacement")])
    return out


def entries(session: Path) -> list[Any]:
    """Each entry without ids and times; a ``context_edit`` names its target and its fields."""
    out: list[Any] = []
    lines = [json.loads(line) for line in session.read_text().splitlines()]
    by_id = {e.get("id"): e for e in lines}
    for entry in lines:
        kind = entry["type"]
        if kind == "message" and entry["message"]["role"] != "system":
            message = entry["message"]
            out.append([kind, message["role"], message.get("stopReason"), by_id[entry["parentId"]]["type"]])
        elif kind == "context_edit":
            target = by_id[entry["targetId"]]
            out.append(
                [
                    kind,
                    target["message"]["role"],
                    target["message"].get("stopReason"),
                    sorted(entry),
                    entry["replacement"],
                    # Each edit follows the entry before it on the branch: its parent is the latest.
                    lines.index(by_id[entry["parentId"]]) == lines.index(entry) - 1,
                ]
            )
        elif kind not in ("message", "session"):
            out.append([kind])
    return out


def sent(requests: list[RecordedRequest]) -> list[list[str]]:
    out = []
    for request in requests:
        messages = []
        for message, content in conversation_messages(request):
            messages.append(f"{message['role']}: {content}")
        out.append(messages)
    return out


def test_a_500_then_success_leaves_the_same_entries_and_events_as_pi16(
    tau: TauCommand, tmp_path: Path
) -> None:
    tau_run, pi_run, _ = both(tau, tmp_path, [status(500), Turn(text="The answer.")])
    assert (tau_run.code, pi_run.code) == (0, 0), (tau_run.stderr, pi_run.stderr)
    assert flow(tau_run.stdout) == flow(pi_run.stdout)
    assert entries(tau_run.session) == entries(pi_run.session)
    assert sent(tau_run.requests) == sent(pi_run.requests)
    course = flow(tau_run.stdout)
    retry = course.index(["auto_retry_start", 1, 3, 2])
    assert course[retry - 1] == ["agent_end", True]
    assert course[retry + 1] == [
        "entry_appended",
        "context_edit",
        ["id", "parentId", "replacement", "targetId", "timestamp", "type"],
        None,
    ]
    assert course[retry + 2] == ["agent_start"]
    assert entries(tau_run.session)[-3:] == [
        ["message", "assistant", "error", "message"],
        [
            "context_edit",
            "assistant",
            "error",
            ["id", "parentId", "replacement", "targetId", "timestamp", "type"],
            None,
            True,
        ],
        ["message", "assistant", "stop", "context_edit"],
    ]


def test_overloaded_twice_then_success_leaves_an_edit_for_each_failed_reply_as_pi16_does(
    tau: TauCommand, tmp_path: Path
) -> None:
    turns = [status(529, OVERLOADED), status(529, OVERLOADED), Turn(text="The answer.")]
    tau_run, pi_run, _ = both(tau, tmp_path, turns)
    assert (tau_run.code, pi_run.code) == (0, 0), (tau_run.stderr, pi_run.stderr)
    assert flow(tau_run.stdout) == flow(pi_run.stdout)
    assert entries(tau_run.session) == entries(pi_run.session)
    assert sent(tau_run.requests) == sent(pi_run.requests)
    assert [e[:3] for e in entries(tau_run.session)][-5:] == [
        ["message", "assistant", "error"],
        ["context_edit", "assistant", "error"],
        ["message", "assistant", "error"],
        ["context_edit", "assistant", "error"],
        ["message", "assistant", "stop"],
    ]
    # No request carries a failed reply.
    assert sent(tau_run.requests)[-1] == ["user: Get ready.", "assistant: Ready.", "user: Ask."]


def test_each_continuing_the_others_file_sends_the_conversation_without_the_failed_replies(
    tau: TauCommand, tmp_path: Path
) -> None:
    turns = [status(529, OVERLOADED), status(500), Turn(text="The answer.")]
    tau_run, pi_run, pi_dir = both(tau, tmp_path, turns)
    assert (tau_run.code, pi_run.code) == (0, 0), (tau_run.stderr, pi_run.stderr)
    tau.server.add(Turn(text="Again."), Turn(text="Again."))
    start = len(tau.server.requests)
    assert run(tau, "pi", pi_dir, "--session", str(tau_run.session), "-p", "More.").returncode == 0
    assert run(tau, "tau", pi_dir, "--session", str(pi_run.session), "-p", "More.").returncode == 0
    pi_sent, tau_sent = sent(tau.server.requests[start:])
    expected = [
        "user: Get ready.",
        "assistant: Ready.",
        "user: Ask.",
        "assistant: The answer.",
        "user: More.",
    ]
    assert pi_sent == tau_sent == expected
