"""A reply cut off by the output limit, side by side with pi 1.6 (issue #32): a ``length`` stop
below the model's own ``maxTokens`` is recoverable (the cut reply, and the results of a cut tool
call, leave the context through ``context_edit`` entries, an ``overflow`` compaction runs with
``willRetry``, the turn is retried once); one at ``maxTokens`` is not. In print mode a reply that
stays cut off is printed, with a warning on stderr and exit status 1. pi comes from ``.ci/pi16``
(installed by ``scripts/check``) or ``$TAU_TEST_PI16_DIR``."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from chat_messages import conversation_messages
from pi16 import pi16_command
from tau_command import TauCommand

from tau.testing.fake_llm import Fault, RecordedRequest, ScriptedToolCall, ScriptedUsage, Turn

MODEL = ["--provider", "local", "--model", "fake-small"]
SETTINGS = {"compaction": {"reserveTokens": 1000, "keepRecentTokens": 10}}
SUMMARY = "## Goal\nWrite the essay."
SUMMARY_OF_TURN = f"No prior history.\n\n---\n\n**Turn Context (split turn):**\n\n{SUMMARY}"
MAX_TOKENS = 256


def small_model(tau: TauCommand, *dirs: Path) -> None:
    """A model with ``maxTokens`` 256 beside the fake one, for tau and pi."""
    path = tau.agent_dir / "models.json"
    models = json.loads(path.read_text())
    models["providers"]["local"]["models"].append(
        {"id": "fake-small", "contextWindow": 100000, "maxTokens": MAX_TOKENS}
    )
    path.write_text(json.dumps(models))
    for folder in (tau.agent_dir, *dirs):
        folder.mkdir(exist_ok=True)
        (folder / "settings.json").write_text(json.dumps(SETTINGS))
        (folder / "models.json").write_text(path.read_text())


READY = Turn(text="Ready to write the essay. " * 8, usage=ScriptedUsage(input=200))


def cut(output: int, text: str = "The essay begins") -> Turn:
    return Turn(text=text, stop_reason="length", usage=ScriptedUsage(input=300, output=output))


class Ran:
    def __init__(self, ran: subprocess.CompletedProcess[str], requests: list[RecordedRequest], session: Path):
        self.code = ran.returncode
        self.stdout = ran.stdout
        self.stderr = ran.stderr
        self.requests = requests
        self.session = session


def both(tau: TauCommand, tmp_path: Path, turns: list[Turn], *args: str) -> tuple[Ran, Ran]:
    pi = pi16_command()
    pi_dir = tmp_path / "pi"
    small_model(tau, pi_dir)
    out = []
    for side in ("tau", "pi"):
        tau.server.add(READY)
        run(tau, pi, pi_dir, side, "-p", "Get ready.")
        start = len(tau.server.requests)
        tau.server.add(*turns)
        ran = run(tau, pi, pi_dir, side, "-c", *args)
        sessions = tau.session_files() if side == "tau" else sorted((pi_dir / "sessions").rglob("*.jsonl"))
        out.append(Ran(ran, tau.server.requests[start:], sessions[-1]))
        assert tau.server.pending == 0
    return out[0], out[1]


def run(
    tau: TauCommand, pi: list[str], pi_dir: Path, side: str, *args: str
) -> subprocess.CompletedProcess[str]:
    if side == "tau":
        return tau.run(*MODEL, *args)
    env = tau.env | {"PI_OFFLINE": "1", "PI_CODING_AGENT_DIR": str(pi_dir), "HOME": str(pi_dir)}
    return subprocess.run(
        [*pi, *MODEL, *args], cwd=tau.work, env=env, input="", capture_output=True, text=True, timeout=60
    )


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
            message = event["message"]
            out.append([kind, message["role"], message.get("stopReason")])
        elif kind == "compaction_start":
            out.append([kind, event["reason"]])
        elif kind == "compaction_end":
            result = event.get("result")
            out.append(
                [
                    kind,
                    event["reason"],
                    event["aborted"],
                    event["willRetry"],
                    event.get("errorMessage"),
                    result and result["summary"],
                ]
            )
        elif kind == "entry_appended":
            out.append([kind, event["entry"]["type"]])
    return out


def entries(session: Path) -> list[Any]:
    """Each entry without ids and times; a ``context_edit`` names the role of its target."""
    out: list[Any] = []
    lines = [json.loads(line) for line in session.read_text().splitlines()]
    by_id = {e.get("id"): e for e in lines}
    for entry in lines:
        kind = entry["type"]
        if kind == "message" and entry["message"]["role"] != "system":
            out.append([kind, entry["message"]["role"], entry["message"].get("stopReason")])
        elif kind == "compaction":
            # tokensBefore estimates the whole context, the system prompt too (worded differently).
            kept = [e.get("id") for e in lines].index(entry["firstKeptEntryId"]) - len(lines)
            out.append([kind, entry["summary"], entry["tokensBefore"] > 1000, kept])
        elif kind == "context_edit":
            target = by_id[entry["targetId"]]["message"]
            out.append([kind, target["role"], sorted(entry), entry["replacement"]])
        elif kind not in ("message", "session"):
            out.append([kind])
    return out


def sent(requests: list[RecordedRequest]) -> list[list[str]]:
    out = []
    for request in requests:
        messages = []
        for message, content in conversation_messages(request):
            if content.startswith(("<conversation>", "# Conversation")):
                # The summary request (tau words it in its own way): whether the cut reply is in it.
                content = f"<summary request{' with the cut reply' if 'The essay begins' in content else ''}>"
            elif SUMMARY in content:
                content = "<summary>"
            calls = [call["function"]["arguments"] for call in message.get("tool_calls") or []]
            messages.append(f"{message['role']}: {content[:30]} {' '.join(calls)}".strip())
        out.append(messages)
    return out


def test_a_reply_cut_below_the_output_limit_is_compacted_and_retried_as_pi16_does(
    tau: TauCommand, tmp_path: Path
) -> None:
    tau_run, pi_run = both(
        tau,
        tmp_path,
        [cut(100), Turn(text=SUMMARY), Turn(text="The essay.")],
        "--mode",
        "json",
        "-p",
        "Write.",
    )
    assert (tau_run.code, pi_run.code) == (0, 0), (tau_run.stderr, pi_run.stderr)
    assert flow(tau_run.stdout) == flow(pi_run.stdout)
    assert entries(tau_run.session) == entries(pi_run.session)
    assert sent(tau_run.requests) == sent(pi_run.requests)
    course = flow(tau_run.stdout)
    edit = course.index(["entry_appended", "context_edit"])
    assert course[edit - 1] == ["agent_end", False]
    assert course[edit + 1] == ["compaction_start", "overflow"]
    assert course[edit + 2][:5] == ["compaction_end", "overflow", False, True, None]
    # The cut reply is neither summarised nor in the retried request.
    assert sent(tau_run.requests)[1] == ["user: <summary request>"]
    assert sent(tau_run.requests)[2] == [
        "user: <summary>",
        "assistant: Ready to write the essay. Read",
        "user: Write.",
    ]
    assert [e[:2] for e in entries(tau_run.session)][-4:] == [
        ["message", "assistant"],
        ["context_edit", "assistant"],
        ["compaction", SUMMARY_OF_TURN],
        ["message", "assistant"],
    ]


def test_a_reply_cut_again_after_the_retry_is_printed_with_a_warning_as_pi16_does(
    tau: TauCommand, tmp_path: Path
) -> None:
    tau_run, pi_run = both(
        tau, tmp_path, [cut(100), Turn(text=SUMMARY), cut(120, "Again cut")], "-p", "Write."
    )
    assert entries(tau_run.session) == entries(pi_run.session)
    assert sent(tau_run.requests) == sent(pi_run.requests)
    assert (tau_run.code, tau_run.stdout, tau_run.stderr) == (pi_run.code, pi_run.stdout, pi_run.stderr)
    assert (tau_run.code, tau_run.stdout) == (1, "Again cut\n")
    assert tau_run.stderr == "Response was truncated: the model reached its output token limit.\n"


def test_the_second_cut_reports_the_failed_recovery_as_pi16_does(tau: TauCommand, tmp_path: Path) -> None:
    tau_run, pi_run = both(
        tau, tmp_path, [cut(100), Turn(text=SUMMARY), cut(120, "Again cut")], "--mode", "json", "-p", "Write."
    )
    assert flow(tau_run.stdout) == flow(pi_run.stdout)
    assert flow(tau_run.stdout)[-1] == [
        "compaction_end",
        "overflow",
        False,
        False,
        "Truncated response recovery failed after one compact-and-retry attempt.",
        None,
    ]


def test_a_reply_cut_at_the_output_limit_is_kept_and_printed_with_a_warning_as_pi16_does(
    tau: TauCommand, tmp_path: Path
) -> None:
    tau_run, pi_run = both(tau, tmp_path, [cut(MAX_TOKENS)], "-p", "Write.")
    assert entries(tau_run.session) == entries(pi_run.session)
    assert (
        sent(tau_run.requests)
        == sent(pi_run.requests)
        == [["user: Get ready.", "assistant: Ready to write the essay. Read", "user: Write."]]
    )
    assert (tau_run.code, tau_run.stdout, tau_run.stderr) == (pi_run.code, pi_run.stdout, pi_run.stderr)
    assert (tau_run.code, tau_run.stdout) == (1, "The essay begins\n")
    assert "context_edit" not in tau_run.session.read_text()


def test_a_cut_tool_call_gets_an_error_result_and_the_run_goes_on_as_pi16_does(
    tau: TauCommand, tmp_path: Path
) -> None:
    cut_call = Turn(
        tool_calls=[ScriptedToolCall("bash", {"command": "echo one"})],
        stop_reason="length",
        usage=ScriptedUsage(input=300, output=100),
    )
    tau_run, pi_run = both(tau, tmp_path, [cut_call, Turn(text="Done.")], "--mode", "json", "-p", "Write.")
    assert flow(tau_run.stdout) == flow(pi_run.stdout)
    assert entries(tau_run.session) == entries(pi_run.session)

    # Not the run's last reply: no recovery; the call is answered as not run (in tau's words).
    def masked(requests: list[RecordedRequest]) -> list[list[str]]:
        return [[m.split(":")[0] if m.startswith("tool:") else m for m in r] for r in sent(requests)]

    assert masked(tau_run.requests) == masked(pi_run.requests)
    assert "context_edit" not in tau_run.session.read_text()
    assert sent(tau_run.requests)[1][-1].startswith("tool: Tool call bash was not run")


def test_a_prompt_refused_as_too_long_leaves_the_context_the_same_way_as_pi16_does(
    tau: TauCommand, tmp_path: Path
) -> None:
    too_long = {"error": {"message": "prompt is too long: 5000 tokens > 4000 maximum"}}
    refused = Turn(fault=Fault("status", status=400, body=too_long))
    tau_run, pi_run = both(
        tau,
        tmp_path,
        [refused, Turn(text=SUMMARY), Turn(text="The essay.")],
        "--mode",
        "json",
        "-p",
        "Write.",
    )
    assert (tau_run.code, pi_run.code) == (0, 0), (tau_run.stderr, pi_run.stderr)
    assert flow(tau_run.stdout) == flow(pi_run.stdout)
    assert entries(tau_run.session) == entries(pi_run.session)
    assert sent(tau_run.requests) == sent(pi_run.requests)
    assert [e[:2] for e in entries(tau_run.session)][-4:] == [
        ["message", "assistant"],
        ["context_edit", "assistant"],
        ["compaction", SUMMARY_OF_TURN],
        ["message", "assistant"],
    ]


def test_a_cut_reply_left_unrecovered_is_compacted_before_the_next_prompt_as_pi16_does(
    tau: TauCommand, tmp_path: Path
) -> None:
    """With compaction off the cut reply stays; once it is on, the next prompt first compacts for
    ``overflow`` with ``willRetry: true`` (pi 1.6 words it so there too), and the prompt, not a
    retry, carries the work on."""
    pi = pi16_command()
    pi_dir = tmp_path / "pi"
    small_model(tau, pi_dir)
    off = json.dumps({"compaction": {**SETTINGS["compaction"], "enabled": False}})
    out = []
    for side in ("tau", "pi"):
        folder = tau.agent_dir if side == "tau" else pi_dir
        tau.server.add(READY, cut(100))
        (folder / "settings.json").write_text(off)
        run(tau, pi, pi_dir, side, "-p", "Get ready.")
        assert run(tau, pi, pi_dir, side, "-c", "-p", "Write.").returncode == 1
        (folder / "settings.json").write_text(json.dumps(SETTINGS))
        start = len(tau.server.requests)
        tau.server.add(Turn(text=SUMMARY), Turn(text="The essay."))
        ran = run(tau, pi, pi_dir, side, "-c", "--mode", "json", "-p", "Go on.")
        sessions = tau.session_files() if side == "tau" else sorted((pi_dir / "sessions").rglob("*.jsonl"))
        out.append(Ran(ran, tau.server.requests[start:], sessions[-1]))
        assert tau.server.pending == 0
    tau_run, pi_run = out
    assert (tau_run.code, pi_run.code) == (0, 0), (tau_run.stderr, pi_run.stderr)
    assert flow(tau_run.stdout) == flow(pi_run.stdout)
    assert entries(tau_run.session) == entries(pi_run.session)
    assert sent(tau_run.requests) == sent(pi_run.requests)
    course = flow(tau_run.stdout)
    assert course[:3] == [
        ["entry_appended", "context_edit"],
        ["compaction_start", "overflow"],
        ["compaction_end", "overflow", False, True, None, SUMMARY_OF_TURN],
    ]
    assert course[3] == ["agent_start"]
    assert course.count(["agent_start"]) == 1  # no retry: the prompt is the next request
    assert sent(tau_run.requests)[-1] == [
        "user: <summary>",
        "assistant: Ready to write the essay. Read",
        "user: Write.",
        "user: Go on.",
    ]


def test_a_finished_reply_over_the_window_is_compacted_without_a_retry_as_pi16_does(
    tau: TauCommand, tmp_path: Path
) -> None:
    over = Turn(text="The essay, at last.", usage=ScriptedUsage(input=150000, output=10))
    tau_run, pi_run = both(tau, tmp_path, [over, Turn(text=SUMMARY)], "--mode", "json", "-p", "Write.")
    assert (tau_run.code, pi_run.code) == (0, 0), (tau_run.stderr, pi_run.stderr)
    assert flow(tau_run.stdout) == flow(pi_run.stdout)
    assert entries(tau_run.session) == entries(pi_run.session)
    course = flow(tau_run.stdout)
    # The finished reply is kept (no context_edit) and nothing is retried.
    assert course[-3:] == [
        ["agent_end", False],
        ["compaction_start", "overflow"],
        ["compaction_end", "overflow", False, False, None, course[-1][5]],
    ]
    assert "context_edit" not in tau_run.session.read_text()


def test_a_long_prompt_refused_as_too_long_is_summarised_as_a_split_turn_as_pi16_does(
    tau: TauCommand, tmp_path: Path
) -> None:
    """Past ``keepRecentTokens`` on its own, the refused prompt is followed only by its omitted
    attempt: the cut moves onto that attempt, so the prompt becomes the opening of a split turn,
    summarised after the history (two calls), as pi 1.6 cuts it."""
    too_long = {"error": {"message": "prompt is too long: 5000 tokens > 4000 maximum"}}
    refused = Turn(fault=Fault("status", status=400, body=too_long))
    opening = "## Goal\nWrite the long essay."
    tau_run, pi_run = both(
        tau,
        tmp_path,
        [refused, Turn(text=SUMMARY), Turn(text=opening), Turn(text="The essay.")],
        "--mode",
        "json",
        "-p",
        "Write the essay. " * 20,
    )
    assert (tau_run.code, pi_run.code) == (0, 0), (tau_run.stderr, pi_run.stderr)
    assert flow(tau_run.stdout) == flow(pi_run.stdout)
    assert entries(tau_run.session) == entries(pi_run.session)
    assert len(tau_run.requests) == len(pi_run.requests) == 4
    [compaction] = [e for e in entries(tau_run.session) if e[0] == "compaction"]
    assert compaction[1] == f"{SUMMARY}\n\n---\n\n**Turn Context (split turn):**\n\n{opening}"
    assert compaction[3] == -4  # kept from the refused attempt: it, its edit, the compaction, the reply
    assert "Write the essay. Write" not in json.dumps(tau_run.requests[-1].body)
