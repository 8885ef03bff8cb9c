"""What a pi 1.6 user meets, run side by side with the real pi 1.6 on the same input (issue #32's
re-audit): both against the same fake server, tau first, then pi, and what each sent, printed or
wrote compared."""

from __future__ import annotations

import json
import re
import struct
import subprocess
import zlib
from pathlib import Path
from typing import Any

from pi16 import pi16_command
from tau_command import MODEL, TauCommand

from tau.testing.fake_llm import RecordedRequest, Turn
from tau.testing.fake_llm.script import ScriptedUsage, text_turn, tool_turn


def _pi(
    tau: TauCommand, pi_dir: Path, *args: str, model: list[str] = MODEL
) -> subprocess.CompletedProcess[str]:
    pi_dir.mkdir(exist_ok=True)
    if not (pi_dir / "models.json").exists():
        (pi_dir / "models.json").write_text((tau.agent_dir / "models.json").read_text())
    env = tau.env | {"PI_OFFLINE": "1", "PI_CODING_AGENT_DIR": str(pi_dir), "HOME": str(pi_dir)}
    return subprocess.run(
        [*pi16_command(), *model, *args],
        cwd=tau.work,
        env=env,
        input="",
        capture_output=True,
        text=True,
        timeout=60,
    )


def _both(
    tau: TauCommand, tmp_path: Path, *args: str, turns: list[Turn] = (), model: list[str] = MODEL
) -> tuple[tuple[subprocess.CompletedProcess[str], list[RecordedRequest]], ...]:
    """``(completed, requests)`` of tau, then of pi, each answered with ``turns``."""
    runs = []
    for side in ("tau", "pi"):
        tau.server.add(*turns)
        start = len(tau.server.requests)
        done = tau.run(*model, *args) if side == "tau" else _pi(tau, tmp_path / "pi", *args, model=model)
        runs.append((done, tau.server.requests[start:]))
    return tuple(runs)


def _tool_results(request: RecordedRequest) -> list[Any]:
    return [message["content"] for message in request.body["messages"] if message["role"] == "tool"]


def _models(tau: TauCommand, **provider: Any) -> None:
    config = json.loads((tau.agent_dir / "models.json").read_text())
    config["providers"]["local"].update(provider)
    (tau.agent_dir / "models.json").write_text(json.dumps(config))


def test_built_in_tools_take_arguments_they_do_not_declare_as_pi_16s(tau: TauCommand, tmp_path: Path) -> None:
    """pi's tool schemas leave ``additionalProperties`` open: a stray argument does not fail the call."""
    (tau.work / "a.txt").write_text("hello\n")
    turns = [tool_turn("read", {"path": "a.txt", "extra": 1}), text_turn("done")]
    (ours, our_requests), (pis, pi_requests) = _both(tau, tmp_path, "-p", "read it", turns=turns)
    assert ours.returncode == pis.returncode == 0, (ours.stderr, pis.stderr)
    assert _tool_results(our_requests[1]) == _tool_results(pi_requests[1]) == ["hello\n"]
    ours_tools = {
        tool["function"]["name"]: tool["function"]["parameters"] for tool in our_requests[0].body["tools"]
    }
    pi_tools = {
        tool["function"]["name"]: tool["function"]["parameters"] for tool in pi_requests[0].body["tools"]
    }
    for name in ("read", "bash", "edit", "write"):
        assert ("additionalProperties" in ours_tools[name]) == ("additionalProperties" in pi_tools[name]), (
            name
        )


def test_read_bash_edit_write_go_strict_where_the_model_can_as_pi_16s(
    tau: TauCommand, tmp_path: Path
) -> None:
    """pi's read, bash, edit and write ask for strict JSON-schema sampling where the model has a strict
    mode (``strict: "prefer"``): the same strict tools in the request."""
    _models(tau, compat={"supportsStrictMode": True})
    (ours, our_requests), (pis, pi_requests) = _both(tau, tmp_path, "-p", "hi", turns=[text_turn("ok")])
    assert ours.returncode == pis.returncode == 0, (ours.stderr, pis.stderr)

    def shapes(request: RecordedRequest) -> dict[str, Any]:
        return {
            tool["function"]["name"]: (
                tool["function"].get("strict"),
                tool["function"]["parameters"].get("required"),
            )
            for tool in request.body["tools"]
        }

    assert shapes(our_requests[0]) == shapes(pi_requests[0])
    assert shapes(our_requests[0])["read"][0] is True


def _sent_text(request: RecordedRequest) -> str:
    return str(request.body["messages"][-1]["content"][0]["text"])


def test_a_skill_typed_in_full_is_expanded_with_skill_commands_off_as_pi_16s(
    tau: TauCommand, tmp_path: Path
) -> None:
    """``enableSkillCommands: false`` only leaves skills out of the command list (pi 1.6)."""
    skill = "---\nname: my-skill\ndescription: Does a thing.\n---\nThe skill's body\n"
    for agent_dir in (tau.agent_dir, tmp_path / "pi"):
        (agent_dir / "skills" / "my-skill").mkdir(parents=True)
        (agent_dir / "skills" / "my-skill" / "SKILL.md").write_text(skill)
        (agent_dir / "settings.json").write_text(json.dumps({"enableSkillCommands": False}))
    (ours, our_requests), (pis, pi_requests) = _both(
        tau, tmp_path, "-p", "/skill:my-skill go", turns=[text_turn("ok")]
    )
    assert ours.returncode == pis.returncode == 0, (ours.stderr, pis.stderr)
    for sent in (_sent_text(our_requests[0]), _sent_text(pi_requests[0])):
        assert (
            sent.startswith('<skill name="my-skill"') and "The skill's body" in sent and sent.endswith("go")
        )


def test_api_key_and_header_values_read_variables_as_pi_16s(tau: TauCommand, tmp_path: Path) -> None:
    """``$NAME``, ``${NAME}``, ``$$`` and ``$!`` in models.json values; a bare name is literal."""
    tau.env.update(MY_KEY_VAR="from-env", OTHER="o")
    for value in ("MY_KEY_VAR", "$MY_KEY_VAR", "pre-${MY_KEY_VAR}-post", "$!literal", "$$x", "sk-$OTHER"):
        _models(tau, apiKey=value, headers={"X-H": value})
        (tmp_path / "pi").mkdir(exist_ok=True)
        (tmp_path / "pi" / "models.json").write_text((tau.agent_dir / "models.json").read_text())
        (ours, our_requests), (pis, pi_requests) = _both(tau, tmp_path, "-p", "hi", turns=[text_turn("ok")])
        assert ours.returncode == pis.returncode == 0, (value, ours.stderr, pis.stderr)
        sent = [(r[0].headers["authorization"], r[0].headers["x-h"]) for r in (our_requests, pi_requests)]
        assert sent[0] == sent[1], value
    assert sent[0] == ("Bearer sk-o", "sk-o")


def _png(width: int, height: int) -> bytes:
    """A real RGB PNG of that size (a gradient)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(
        b"\0" + bytes((x * 7 + y * 3) % 256 for x in range(width) for _ in range(3)) for y in range(height)
    )
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def test_block_images_sends_pi_16s_placeholder(tau: TauCommand, tmp_path: Path) -> None:
    """``images.blockImages``: an attached image is replaced by the same text pi sends."""
    (tau.work / "dot.png").write_bytes(_png(20, 10))
    _models(tau, models=[{"id": "fake-model", "input": ["text", "image"]}])
    for agent_dir in (tau.agent_dir, tmp_path / "pi"):
        agent_dir.mkdir(exist_ok=True)
        (agent_dir / "settings.json").write_text(json.dumps({"images": {"blockImages": True}}))
    (ours, our_requests), (pis, pi_requests) = _both(
        tau, tmp_path, "-p", "@dot.png", "what", turns=[text_turn("ok")]
    )
    assert ours.returncode == pis.returncode == 0, (ours.stderr, pis.stderr)
    assert our_requests[0].body["messages"][-1] == pi_requests[0].body["messages"][-1]
    assert "Image reading is disabled." in json.dumps(our_requests[0].body["messages"][-1])


def test_piped_stdin_is_trimmed_as_pi_16s(tau: TauCommand, tmp_path: Path) -> None:
    """pi trims piped stdin before joining it to the first message."""
    runs = []
    for side in ("tau", "pi"):
        tau.server.add(text_turn("ok"))
        start = len(tau.server.requests)
        if side == "tau":
            done = tau.run(*MODEL, "-p", "summarize", stdin="  piped content\n\n")
        else:
            (tmp_path / "pi").mkdir(exist_ok=True)
            (tmp_path / "pi" / "models.json").write_text((tau.agent_dir / "models.json").read_text())
            env = tau.env | {
                "PI_OFFLINE": "1",
                "PI_CODING_AGENT_DIR": str(tmp_path / "pi"),
                "HOME": str(tmp_path),
            }
            done = subprocess.run(
                [*pi16_command(), *MODEL, "-p", "summarize"],
                cwd=tau.work,
                env=env,
                input="  piped content\n\n",
                capture_output=True,
                text=True,
                timeout=60,
            )
        assert done.returncode == 0, done.stderr
        runs.append(_sent_text(tau.server.requests[start]))
    assert runs[0] == runs[1] == "piped contentsummarize"


def test_past_the_threshold_with_nothing_to_compact_no_compaction_starts_as_pi_16s(
    tau: TauCommand, tmp_path: Path
) -> None:
    """One long exchange kept whole by ``keepRecentTokens``: pi starts no compaction, so a JSON
    reader sees no ``compaction_start``/``compaction_end``."""
    _models(tau, models=[{"id": "fake-model", "contextWindow": 10000, "maxTokens": 1000}])
    settings = json.dumps({"compaction": {"reserveTokens": 2000, "keepRecentTokens": 100}})
    for agent_dir in (tau.agent_dir, tmp_path / "pi"):
        agent_dir.mkdir(exist_ok=True)
        (agent_dir / "settings.json").write_text(settings)
    big = Turn(text="long answer", usage=ScriptedUsage(input=9000, output=900))
    (ours, our_requests), (pis, pi_requests) = _both(
        tau, tmp_path, "--mode", "json", "-p", "first", "second", turns=[big, text_turn("two")]
    )
    assert ours.returncode == pis.returncode == 0, (ours.stderr, pis.stderr)

    def kinds(out: str) -> list[str]:
        return [json.loads(line)["type"] for line in out.splitlines() if line.startswith("{")]

    assert [k for k in kinds(ours.stdout) if "compaction" in k] == []
    assert [k for k in kinds(pis.stdout) if "compaction" in k] == []
    assert len(our_requests) == len(pi_requests) == 2


def test_after_a_compaction_the_output_cap_ignores_the_kept_replys_old_usage_as_pi_16s(
    tau: TauCommand, tmp_path: Path
) -> None:
    """A reply kept after the compaction summary reported usage of the whole old history; pi does
    not count it when fitting ``max_tokens`` into the window, so the next request is not capped to 1."""
    _models(tau, models=[{"id": "fake-model", "contextWindow": 10000, "maxTokens": 1000}])
    settings = json.dumps({"compaction": {"reserveTokens": 2000, "keepRecentTokens": 50}})
    for agent_dir in (tau.agent_dir, tmp_path / "pi"):
        agent_dir.mkdir(exist_ok=True)
        (agent_dir / "settings.json").write_text(settings)
    turns = [
        Turn(text="first answer " * 30, usage=ScriptedUsage(input=500, output=100)),
        Turn(text="second answer " * 30, usage=ScriptedUsage(input=9000, output=900)),
        text_turn("## Goal\nsummary"),
        text_turn("turn prefix"),
        text_turn("third answer"),
    ]
    (ours, our_requests), (pis, pi_requests) = _both(
        tau, tmp_path, "-p", "q1 " * 100, "q2 " * 100, "q3", turns=turns
    )
    assert ours.returncode == pis.returncode == 0, (ours.stderr, pis.stderr)
    assert len(our_requests) == len(pi_requests) == 5  # two answers, two summaries, the third
    assert (
        our_requests[-1].body["max_completion_tokens"]
        == pi_requests[-1].body["max_completion_tokens"]
        == 1000
    )


def _first_tool_result(requests: list[RecordedRequest]) -> str:
    text = _tool_results(requests[1])[0]
    return re.sub(r"Full output: \S+]", "Full output: <file>]", str(text))


def test_tool_output_lines_are_counted_and_an_empty_result_is_said_as_pi_16s(
    tau: TauCommand, tmp_path: Path
) -> None:
    """A final newline ends the last line (``seq 3000`` is 3000 lines, shown 1001-3000); a result
    with nothing but white space goes to the model as ``(no tool output)``."""
    (tau.work / "empty.txt").write_text("")
    calls = [
        ("bash", {"command": "seq 1 3000"}),
        ("bash", {"command": "echo"}),
        ("read", {"path": "empty.txt"}),
        ("bash", {"command": "printf 'x\\n%.0s' $(seq 1 2001)"}),
    ]
    for name, arguments in calls:
        (ours, our_requests), (pis, pi_requests) = _both(
            tau, tmp_path, "-p", "go", turns=[tool_turn(name, arguments), text_turn("done")]
        )
        assert ours.returncode == pis.returncode == 0, (ours.stderr, pis.stderr)
        assert _first_tool_result(our_requests) == _first_tool_result(pi_requests), arguments
    assert _first_tool_result(our_requests).endswith("[Showing lines 2-2001 of 2001. Full output: <file>]")


def test_a_white_space_tool_result_goes_to_gemini_as_pi_16s(tau: TauCommand, tmp_path: Path) -> None:
    _models(
        tau,
        api="google-generative-ai",
        baseUrl=tau.server.url("/v1beta"),
        models=[{"id": "gemini-2.5-flash", "contextWindow": 100000, "maxTokens": 4096}],
    )
    model = ["--provider", "local", "--model", "gemini-2.5-flash"]
    turns = [tool_turn("bash", {"command": "echo"}), text_turn("done")]
    (ours, our_requests), (pis, pi_requests) = _both(tau, tmp_path, "-p", "go", turns=turns, model=model)
    assert ours.returncode == pis.returncode == 0, (ours.stderr, pis.stderr)

    def response(request: RecordedRequest) -> Any:
        return request.body["contents"][-1]["parts"][0]["functionResponse"]["response"]

    assert response(our_requests[1]) == response(pi_requests[1]) == {"output": ""}


def test_prompt_templates_expand_as_pi_16s(tau: TauCommand, tmp_path: Path) -> None:
    """Arguments (``$1``, ``$@``, ``$ARGUMENTS``, ``${@:2}``, ``${@:2:1}``, quotes) and the body:
    trimmed after frontmatter, as written without it (its final newline kept)."""
    templates = {
        "t.md": "A=$1 B=$2 ALL=$@ ARGS=$ARGUMENTS R=${@:2} S=${@:2:1} Z=$9 Q=${1}\n",
        "f.md": "---\ndescription: d\n---\n\nbody $1\n\n",
    }
    for agent_dir in (tau.agent_dir, tmp_path / "pi"):
        (agent_dir / "prompts").mkdir(parents=True)
        for name, text in templates.items():
            (agent_dir / "prompts" / name).write_text(text)
    for message in ('/t one "two words" three', "/t", "/f x"):
        (ours, our_requests), (pis, pi_requests) = _both(
            tau, tmp_path, "-p", message, turns=[text_turn("ok")]
        )
        assert ours.returncode == pis.returncode == 0, (ours.stderr, pis.stderr)
        assert _sent_text(our_requests[0]) == _sent_text(pi_requests[0]), message
    assert _sent_text(our_requests[0]) == "body x"


def _edit_details(tau: TauCommand, pi_dir: Path) -> tuple[Any, Any]:
    found = []
    for folder in (tau.agent_dir, pi_dir):
        [session] = sorted((folder / "sessions").rglob("*.jsonl"), key=lambda p: p.stat().st_mtime)[-1:]
        records = [json.loads(line) for line in session.read_text().splitlines()]
        found.append(
            [r["message"]["details"] for r in records if r.get("message", {}).get("role") == "toolResult"]
        )
    return found[0], found[1]


def test_an_edits_details_hold_pi_16s_diff_and_unified_patch(tau: TauCommand, tmp_path: Path) -> None:
    """``details.diff`` and ``details.patch`` as pi 1.6 writes them, a last line gaining its newline
    and two changes far apart (two hunks) included."""
    files = {"d.txt": "one\ntwo\nthree", "b.txt": "".join(f"l{i}\n" for i in range(1, 40))}
    calls = [
        ("d.txt", [{"oldText": "three", "newText": "three\n"}]),
        ("b.txt", [{"oldText": "l2\n", "newText": "L2\nextra\n"}, {"oldText": "l30\n", "newText": "L30\n"}]),
    ]
    for path, edits in calls:
        for name, text in files.items():
            (tau.work / name).write_text(text)
        tau.server.add(tool_turn("edit", {"path": path, "edits": edits}), text_turn("done"))
        assert tau.run(*MODEL, "-p", "go").returncode == 0
        for name, text in files.items():
            (tau.work / name).write_text(text)
        tau.server.add(tool_turn("edit", {"path": path, "edits": edits}), text_turn("done"))
        assert _pi(tau, tmp_path / "pi", "-p", "go").returncode == 0
        ours, pis = _edit_details(tau, tmp_path / "pi")
        assert ours == pis, path
    assert ours[0]["patch"].startswith("--- b.txt\n+++ b.txt\n@@ -1,6 +1,7 @@\n")


def test_a_scoped_models_level_starts_the_session_at_it_as_pi_16s(tau: TauCommand, tmp_path: Path) -> None:
    """``--models think-model:low`` (no ``--model``): the first scoped model, at its level."""
    _models(
        tau,
        models=[
            {"id": "fake-model"},
            {"id": "think-model", "reasoning": True, "contextWindow": 100000, "maxTokens": 8192},
        ],
    )
    (ours, our_requests), (pis, pi_requests) = _both(
        tau, tmp_path, "--models", "think-model:low", "-p", "hi", turns=[text_turn("ok")], model=[]
    )
    assert ours.returncode == pis.returncode == 0, (ours.stderr, pis.stderr)
    sent = [(r[0].body["model"], r[0].body.get("reasoning_effort")) for r in (our_requests, pi_requests)]
    assert sent[0] == sent[1] == ("think-model", "low")


def test_provider_without_model_is_refused_naming_that_provider(tau: TauCommand) -> None:
    done = tau.run("--provider", "local", "-p", "hi")
    assert done.returncode == 1 and "--provider local --model" in done.stderr
