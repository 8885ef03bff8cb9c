"""Text that UTF-8 cannot encode as it is: an emoji whose two surrogate halves a provider sends in two
stream events, lone surrogates in a reply, a tool result, a prompt, an RPC command id. Each output
mode of the real ``tau`` process goes on: the split emoji arrives whole, a lone half is escaped in
protocol lines (as pi's ``JSON.stringify`` writes it) and shown as U+FFFD in plain text, every
request gets its answer, the exit code is 0, and the session file reads back (in tau and in pi)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from acp_client import RawAcp
from batch_run import batch_run, steps_prompt
from fault_campaign import Campaign, session_lines
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pi16 import pi16_command, run_pi16
from tau_command import MODEL

from tau.testing.fake_llm import ScriptedToolCall, Turn

# Deltas of 8 characters: the high half ends the first one, the low half starts the second; the fake
# server writes each half as a lone \ud83d / \ude00 escape in its JSON.
SPLIT = "abcdefg\ud83d\ude00 end"
JOINED = "abcdefg😀 end"
LONE = "lone \ud83d and \udc00 halves"


def joined(text: str) -> str:
    """``text`` with adjacent surrogate halves joined: the string JavaScript (and JSON) sees."""
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def shown(text: str) -> str:
    """``text`` as plain-text output shows it: pairs joined, each lone half as U+FFFD."""
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def json_lines(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines()]


def assistant_texts(events: list[dict[str, Any]]) -> list[str]:
    return [
        block["text"]
        for event in events
        if event.get("type") == "message_end" and event["message"]["role"] == "assistant"
        for block in event["message"]["content"]
        if block["type"] == "text"
    ]


def session_texts(campaign: Campaign) -> list[str]:
    """Every text block of the session's messages, as tau reads the file back."""
    [path] = campaign.session_files()
    texts = []
    for entry in session_lines(path):
        content = entry.get("message", {}).get("content")
        if isinstance(content, list):
            texts += [block["text"] for block in content if block.get("type") == "text"]
    return texts


# -- print mode ------------------------------------------------------------------------------------


def test_print_mode_prints_an_emoji_split_across_two_deltas(campaign: Campaign) -> None:
    campaign.server.add(Turn(text=SPLIT, chunk_size=8))
    outcome = campaign.process_check(*MODEL, "-p", "hi", codes=(0,))
    assert outcome.stdout == JOINED + "\n"
    assert session_texts(campaign) == ["hi", JOINED]


def test_print_mode_shows_a_lone_surrogate_in_the_reply_as_a_replacement_character(
    campaign: Campaign,
) -> None:
    campaign.server.add(Turn(text=LONE))
    outcome = campaign.process_check(*MODEL, "-p", "hi", codes=(0,))
    assert outcome.stdout == "lone \ufffd and \ufffd halves\n"
    assert session_texts(campaign) == ["hi", LONE]  # kept as sent, escaped in the file


def test_print_mode_takes_a_prompt_with_bytes_that_are_not_utf8(campaign: Campaign) -> None:
    campaign.server.add(Turn(text="ok"))
    done = subprocess.run(
        [sys.executable, "-m", "tau", *MODEL, "-p", b"caf\xe9 \xed\xa0\xbd"],
        cwd=campaign.work,
        env=campaign.tau.env,
        capture_output=True,
        timeout=30,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, b"ok\n", b"")
    prompt = os.fsdecode(b"caf\xe9 \xed\xa0\xbd")  # how the command line arrives: \udce9...
    assert session_texts(campaign) == [prompt, "ok"]
    sent = campaign.server.last_request.body["messages"][-1]["content"]
    assert sent == "caf " or sent == [{"type": "text", "text": "caf "}]  # lone halves dropped, as pi does


# -- JSON events -----------------------------------------------------------------------------------


def test_json_mode_streams_to_the_end_with_split_and_lone_surrogates(campaign: Campaign) -> None:
    campaign.server.add(
        Turn(tool_calls=[ScriptedToolCall("no\ud83dsuch", {"q": LONE})]),
        Turn(text=SPLIT + LONE, chunk_size=8),
    )
    outcome = campaign.process_check(*MODEL, "--mode", "json", "hi", codes=(0,))
    events = json_lines(outcome.stdout)
    assert events[-1]["type"] == "agent_settled"
    assert assistant_texts(events)[-1] == JOINED + LONE
    results = [e for e in events if e["type"] == "tool_execution_end"]
    assert [r["result"]["content"][0]["text"] for r in results] == ["Tool no\ud83dsuch not found"]
    deltas = "".join(
        e["assistantMessageEvent"]["delta"]
        for e in events
        if e["type"] == "message_update" and e["assistantMessageEvent"]["type"] == "text_delta"
    )
    assert joined(deltas) == JOINED + LONE
    assert outcome.stdout.isascii() or outcome.stdout.encode("utf-8")  # escaped: valid UTF-8


def test_tools_given_lone_surrogates_write_what_node_writes_for_them(campaign: Campaign) -> None:
    # A pair of halves is the character; a lone half becomes U+FFFD in a file's text, in a file name
    # and in a command, as pi's Node does: the file is valid UTF-8 that edit then takes.
    campaign.server.add(
        Turn(
            tool_calls=[
                ScriptedToolCall("write", {"path": "f.txt", "content": "a\ud83d\ude00 \ud83d b"}),
                ScriptedToolCall("write", {"path": "g\udcff.txt", "content": "x"}),
                ScriptedToolCall("bash", {"command": "printf 'c\\n\ud83d'"}),
            ]
        ),
        Turn(
            tool_calls=[ScriptedToolCall("edit", {"path": "f.txt", "oldText": "\ufffd b", "newText": "ok"})]
        ),
        Turn(text="done"),
    )
    outcome = campaign.process_check(*MODEL, "--mode", "json", "go", codes=(0,))
    results = [e for e in json_lines(outcome.stdout) if e["type"] == "tool_execution_end"]
    assert [r["isError"] for r in results] == [False] * 4, results
    assert (campaign.work / "f.txt").read_text(encoding="utf-8") == "a😀 ok"
    assert (campaign.work / "g\ufffd.txt").read_text() == "x"
    [shell] = [r for r in results if r["toolName"] == "bash"]
    assert shell["result"]["content"][0]["text"] == "c\n\ufffd"


# -- RPC -------------------------------------------------------------------------------------------


def rpc(campaign: Campaign, commands: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The commands (written as Python's json writes them: lone halves as escapes) to a real RPC
    process, then end of input: it exits 0; every line it wrote, each one JSON."""
    data = "".join(json.dumps(command) + "\n" for command in commands).encode()
    outcome = campaign.process_check("--mode", "rpc", *MODEL, stdin=data, codes=(0,))
    return json_lines(outcome.stdout)


def test_rpc_answers_a_command_whose_id_and_prompt_hold_lone_surrogates(campaign: Campaign) -> None:
    campaign.server.add(Turn(text=SPLIT + LONE, chunk_size=8))
    lines = rpc(
        campaign,
        [
            {"id": "a\ud83d", "type": "prompt", "message": "please \udcff"},
            {"id": "\ude00b", "type": "get_state"},
        ],
    )
    responses = {line["id"]: line for line in lines if line.get("type") == "response"}
    assert responses["a\ud83d"]["success"] and responses["\ude00b"]["success"]
    assert lines[-1]["type"] == "agent_settled"
    assert assistant_texts(lines) == [JOINED + LONE]
    assert session_texts(campaign) == ["please \udcff", JOINED + LONE]


# -- ACP -------------------------------------------------------------------------------------------


def test_acp_answers_a_prompt_with_lone_surrogates_and_streams_the_split_emoji(campaign: Campaign) -> None:
    campaign.server.add(Turn(text=SPLIT + LONE, chunk_size=8))
    acp = RawAcp(campaign.tau)
    try:
        acp.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        session = acp.call("session/new", {"cwd": str(campaign.work), "mcpServers": []})
        session_id = session["result"]["sessionId"]
        answer = acp.call(
            "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi \ud83d"}]}
        )
        assert answer["result"]["stopReason"] == "end_turn", answer
        chunks = [
            n["params"]["update"]["content"]["text"]
            for n in acp.notifications
            if n["params"]["update"].get("sessionUpdate") == "agent_message_chunk"
        ]
        # The high half that ended a delta waits for the low half: the client gets the character.
        assert "".join(chunks) == JOINED + LONE
        assert any("😀" in chunk for chunk in chunks)
        acp.close()
    finally:
        if acp.process.poll() is None:
            acp.process.kill()
            acp.process.wait()
    assert session_texts(campaign) == ["hi \ud83d", JOINED + LONE]


# -- the session file ------------------------------------------------------------------------------


def test_a_session_with_split_and_lone_surrogates_is_continued_by_tau_and_by_pi(
    campaign: Campaign, tmp_path: Path
) -> None:
    campaign.server.add(Turn(text=SPLIT + LONE, chunk_size=8))
    campaign.process_check(*MODEL, "-p", "hi \udcff".encode("utf-8", "surrogateescape"), codes=(0,))
    [path] = campaign.session_files()
    raw = path.read_bytes()
    raw.decode("utf-8")  # valid UTF-8 throughout
    assert "😀".encode() in raw and b"\\ud83d" in raw  # the emoji as it is, the lone half escaped

    campaign.server.add(Turn(text="pi here"))
    run_pi16(pi16_command(), campaign.tau, tmp_path / "pi-agent", "--session", str(path), "-p", "next")
    pi_sent = json.dumps(campaign.server.last_request.body, ensure_ascii=False)
    assert JOINED + "lone  and  halves" in pi_sent  # pi read the text: emoji whole, lone halves dropped

    campaign.server.add(Turn(text="tau again"))
    campaign.process_check(*MODEL, "--session", str(path), "-p", "more", codes=(0,))
    tau_sent = json.dumps(campaign.server.last_request.body, ensure_ascii=False)
    assert JOINED + "lone  and  halves" in tau_sent
    assert session_texts(campaign)[-4:] == ["next", "pi here", "more", "tau again"]


# -- any text, every mode, every field ------------------------------------------------------------

ANY_TEXT = st.lists(
    st.one_of(
        st.integers(0xD800, 0xDFFF).map(chr),  # lone halves, often (characters() never draws them)
        st.just("\ud83d\ude00"),  # an emoji's two halves, which deltas of 3 may split
        st.characters(codec=None, exclude_categories=()),  # anything else
    ),
    max_size=12,
).map("".join)
PROPERTY = settings(
    max_examples=8,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def test_any_text_arrives_through_every_mode_and_every_field(campaign: Campaign) -> None:
    """Each example is a reply (split into deltas of 3), a tool result (the name of a tool that does
    not exist comes back in it), a prompt and an RPC command id; print mode, JSON mode, RPC and ACP
    each get it, and each must answer every request and exit 0."""

    @PROPERTY
    @given(ANY_TEXT)
    def run(text: str) -> None:
        reply = f"<{text}>"
        server = campaign.server

        def turns() -> None:
            server.add(
                Turn(tool_calls=[ScriptedToolCall(f"t{text}", {"q": text})], chunk_size=3),
                Turn(text=reply, chunk_size=3),
            )

        prompt_bytes = f"p{text}".encode("utf-8", "surrogatepass")
        turns()
        printed = campaign.process_check(*MODEL, "-p", prompt_bytes, codes=(0,))
        assert printed.stdout == shown(reply) + "\n"

        turns()
        streamed = campaign.process_check(*MODEL, "--mode", "json", prompt_bytes, codes=(0,))
        events = json_lines(streamed.stdout)
        assert assistant_texts(events) == [joined(reply)]
        results = [e["result"]["content"][0]["text"] for e in events if e["type"] == "tool_execution_end"]
        assert results == [f"Tool {joined('t' + text)} not found"]
        assert events[-1]["type"] == "agent_settled"

        turns()
        lines = rpc(
            campaign, [{"id": text, "type": "prompt", "message": text}, {"id": text, "type": "get_state"}]
        )
        assert [line["id"] for line in lines if line.get("type") == "response"] == [joined(text)] * 2
        assert assistant_texts(lines) == [joined(reply)]

        turns()
        acp = RawAcp(campaign.tau)
        try:
            acp.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
            session = acp.call("session/new", {"cwd": str(campaign.work), "mcpServers": []})
            prompt = [{"type": "text", "text": text or "-"}]
            answer = acp.call(
                "session/prompt", {"sessionId": session["result"]["sessionId"], "prompt": prompt}
            )
            assert answer["result"]["stopReason"] == "end_turn", answer
            acp.close()
        finally:
            if acp.process.poll() is None:
                acp.process.kill()
                acp.process.wait()
        assert server.pending == 0

    run()


# -- batch -----------------------------------------------------------------------------------------


def test_a_batch_task_with_lone_surrogates_in_its_prompt_and_reply_is_recorded(tmp_path: Path) -> None:
    for batch in batch_run(tmp_path):
        reply = "the answer \ud83d is \udcff here"
        (batch.root / "project").mkdir()
        prompt = "please \ude00 " + steps_prompt(["text", reply])
        batch.write_tasks([{"id": "odd", "prompt": prompt, "cwd": "project"}])
        done = batch.run("tasks.jsonl", "--out", "out", "--workers", "1", "--model", "local/fake-model")
        assert done.returncode == 0, done.stderr
        raw = (batch.root / "out" / "results.jsonl").read_bytes()
        raw.decode("utf-8")  # valid UTF-8, the lone halves escaped
        [result] = batch.results()
        assert (result["id"], result["finalText"], result["attempts"]) == ("odd", reply, 1), result
        session = batch.root / "out" / result["sessionFile"]
        assert all(json.loads(line) for line in session.read_text(encoding="utf-8").splitlines())


# -- config files ----------------------------------------------------------------------------------


def test_mcp_add_with_an_argument_that_is_not_utf8_writes_mcp_json_and_reads_it_back(
    campaign: Campaign,
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tau", "mcp", "add", "srv", "--", "echo", b"hi\xff"],
        cwd=campaign.work,
        env=campaign.tau.env,
        capture_output=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    written = (campaign.tau.agent_dir / "mcp.json").read_bytes()
    written.decode("utf-8")  # the file is UTF-8 throughout: the undecodable byte is an escape
    assert json.loads(written)["mcpServers"]["srv"]["args"] == [os.fsdecode(b"hi\xff")]
