"""pi 1.6's docs/cli-integration.md, side by side with pi: what print and JSON mode write and exit
with for a reply, a failed reply, a prompt given without ``-p`` to a process whose output is not a
terminal, and a prompt read from stdin."""

from __future__ import annotations

import json
from pathlib import Path

from rpc_side_by_side import add_turns, kinds, streamed, two_sides

from tau.testing.fake_llm import Fault, Turn

BAD_REQUEST = Fault("status", status=400, body={"error": {"message": "bad request"}})


async def test_print_and_json_mode_write_and_exit_as_pi16(tmp_path: Path) -> None:
    async with two_sides(tmp_path, rpc=False) as (tau, pi):
        cases = [
            ("a reply", Turn(text="fine"), ["-p", "hi"], ""),
            ("a failed reply", Turn(fault=BAD_REQUEST), ["-p", "hi"], ""),
            ("a prompt without -p, output piped", Turn(text="piped"), ["hi"], ""),
            ("a prompt on stdin", Turn(text="from stdin"), [], "what is this"),
            ("a failed reply in JSON", Turn(fault=BAD_REQUEST), ["--mode", "json", "hi"], ""),
        ]
        for case, turn, args, stdin in cases:
            add_turns(tau, pi, turn)
            ours, theirs = tau.run(*args, stdin=stdin), pi.run(*args, stdin=stdin)
            assert ours.returncode == theirs.returncode, case
            if "JSON" in case:
                ours_lines = streamed([json.loads(line) for line in ours.stdout.splitlines()])
                theirs_lines = streamed([json.loads(line) for line in theirs.stdout.splitlines()])
                assert kinds(ours_lines) == kinds(theirs_lines), case
                assert ours.returncode == 0  # a failed reply is in the events, not the exit status
            else:
                assert ours.stdout == theirs.stdout, case
            # A failure is one line on stderr in both (its words are the provider error's, see
            # pi-compatibility.md); nothing else is written there.
            assert len(ours.stderr.splitlines()) == len(theirs.stderr.splitlines()), case
    # The piped text is the prompt, sent as pi sends it.
    sent = [[r.body["messages"][-1]["content"] for r in side.server.requests] for side in (tau, pi)]
    assert sent[0] == sent[1]
    assert sent[0][3] == [{"type": "text", "text": "what is this"}]
