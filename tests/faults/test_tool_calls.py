"""Hostile tool calls from the model: wrong arguments, unknown tools, huge arguments, paths off the
disk, files that are not regular. Each call gets a result (an error result when it cannot run), the
run goes on to the model's next reply, and nothing on disk changes that should not."""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fault_campaign import Campaign, session_lines
from tau_command import MODEL

from tau.testing.fake_llm import ScriptedToolCall, Turn

ALL_TOOLS = ["--tools", "read,write,edit,bash,grep,find,ls"]
VICTIM = "victim.txt"
VICTIM_TEXT = "line one\nline two\n"

WRONG_TYPES: dict[str, Any] = {"number": 5, "null": None, "list": ["a"], "object": {"a": 1}, "bool": True}

# (tool, arguments); ``{work}`` in a string is the work folder.
CALLS: dict[str, tuple[str, Any]] = {
    **{f"read-path-{n}": ("read", {"path": v}) for n, v in WRONG_TYPES.items()},
    **{f"write-path-{n}": ("write", {"path": v, "content": "x"}) for n, v in WRONG_TYPES.items()},
    **{f"write-content-{n}": ("write", {"path": "new.txt", "content": v}) for n, v in WRONG_TYPES.items()},
    **{f"edit-path-{n}": ("edit", {"path": v, "edits": []}) for n, v in WRONG_TYPES.items()},
    **{f"edit-edits-{n}": ("edit", {"path": VICTIM, "edits": v}) for n, v in WRONG_TYPES.items()},
    **{f"bash-command-{n}": ("bash", {"command": v}) for n, v in WRONG_TYPES.items()},
    **{f"grep-pattern-{n}": ("grep", {"pattern": v}) for n, v in WRONG_TYPES.items()},
    **{f"find-pattern-{n}": ("find", {"pattern": v}) for n, v in WRONG_TYPES.items()},
    **{f"ls-path-{n}": ("ls", {"path": v}) for n, v in WRONG_TYPES.items()},
    "read-no-arguments": ("read", {}),
    "write-no-content": ("write", {"path": VICTIM}),
    "edit-no-edits": ("edit", {"path": VICTIM}),
    "bash-no-command": ("bash", {}),
    "grep-no-pattern": ("grep", {}),
    "read-offset-negative": ("read", {"path": VICTIM, "offset": -5}),
    "read-offset-huge": ("read", {"path": VICTIM, "offset": 10**15}),
    "read-offset-string": ("read", {"path": VICTIM, "offset": "two"}),
    "read-offset-float": ("read", {"path": VICTIM, "offset": 1.5}),
    "read-limit-zero": ("read", {"path": VICTIM, "limit": 0}),
    "read-limit-negative": ("read", {"path": VICTIM, "limit": -1}),
    "read-limit-huge": ("read", {"path": VICTIM, "limit": 10**20}),
    "read-extra-argument": ("read", {"path": VICTIM, "sudo": True}),
    "edit-item-number": ("edit", {"path": VICTIM, "edits": [5]}),
    "edit-item-empty": ("edit", {"path": VICTIM, "edits": [{}]}),
    "edit-old-text-empty": ("edit", {"path": VICTIM, "edits": [{"oldText": "", "newText": "x"}]}),
    "edit-old-text-missing": ("edit", {"path": VICTIM, "edits": [{"oldText": "absent", "newText": "x"}]}),
    "edit-old-text-twice": ("edit", {"path": VICTIM, "edits": [{"oldText": "line", "newText": "x"}]}),
    "edit-overlapping": (
        "edit",
        {
            "path": VICTIM,
            "edits": [{"oldText": "line one", "newText": "a"}, {"oldText": "one\nline", "newText": "b"}],
        },
    ),
    "edit-a-missing-file": ("edit", {"path": "missing.txt", "edits": [{"oldText": "a", "newText": "b"}]}),
    "edit-a-directory": ("edit", {"path": ".", "edits": [{"oldText": "a", "newText": "b"}]}),
    "edit-a-binary-file": ("edit", {"path": "binary.bin", "edits": [{"oldText": "\x00", "newText": "b"}]}),
    "bash-command-empty": ("bash", {"command": ""}),
    "bash-timeout-negative": ("bash", {"command": "echo hi", "timeout": -1}),
    "bash-timeout-string": ("bash", {"command": "echo hi", "timeout": "soon"}),
    "bash-times-out": ("bash", {"command": "sleep 20", "timeout": 0.3}),
    "bash-exits-non-zero": ("bash", {"command": "exit 7"}),
    "bash-killed-by-signal": ("bash", {"command": "kill -9 $$"}),
    "bash-binary-output": ("bash", {"command": "head -c 20000 /dev/urandom"}),
    "bash-20mb-output": ("bash", {"command": "head -c 20000000 /dev/zero | tr '\\0' x"}),
    "bash-one-10mb-line": ("bash", {"command": "head -c 10000000 /dev/zero | tr '\\0' y; echo"}),
    "bash-closes-stdout": ("bash", {"command": "exec >&- 2>&-; sleep 0.1"}),
    "bash-reads-stdin": ("bash", {"command": "cat"}),
    "bash-control-characters": ("bash", {"command": "printf '\\033[2J\\033]0;x\\007\\r\\b\\000'"}),
    "bash-invalid-utf8": ("bash", {"command": "printf '\\377\\376\\200 text'"}),
    "bash-syntax-error": ("bash", {"command": "if then fi (("}),
    "bash-missing-command": ("bash", {"command": "no-such-command-anywhere"}),
    "grep-invalid-regex": ("grep", {"pattern": "(["}),
    "grep-empty-pattern": ("grep", {"pattern": ""}),
    "grep-context-negative": ("grep", {"pattern": "line", "context": -3}),
    "grep-limit-zero": ("grep", {"pattern": "line", "limit": 0}),
    "grep-limit-string": ("grep", {"pattern": "line", "limit": "all"}),
    "grep-glob-odd": ("grep", {"pattern": "line", "glob": "[[[**"}),
    "grep-a-missing-path": ("grep", {"pattern": "x", "path": "/no/such/dir"}),
    "grep-binary-file": ("grep", {"pattern": "\\x00", "path": "binary.bin"}),
    "find-odd-pattern": ("find", {"pattern": "[[[**"}),
    "find-empty-pattern": ("find", {"pattern": ""}),
    "find-a-missing-path": ("find", {"pattern": "*", "path": "/no/such/dir"}),
    "find-limit-negative": ("find", {"pattern": "*", "limit": -1}),
    "ls-limit-negative": ("ls", {"path": ".", "limit": -1}),
    "ls-a-file": ("ls", {"path": VICTIM}),
    # Paths that lead nowhere, or off the disk.
    **{
        f"{tool}-path-{name}": (tool, {**extra, "path": path})
        for tool, extra in (
            ("read", {}),
            ("write", {"content": "x"}),
            ("edit", {"edits": [{"oldText": "a", "newText": "b"}]}),
            ("grep", {"pattern": "x"}),
            ("find", {"pattern": "*"}),
            ("ls", {}),
        )
        for name, path in (
            ("empty", ""),
            ("missing-deep", "/no/such/place/at/all/x.txt"),
            ("nul-byte", "a\x00b.txt"),
            ("too-long", "x" * 5000),
            ("component-too-long", "d/" + "y" * 300 + "/z"),
            ("newline", "a\nb.txt"),
            ("through-a-file", f"{VICTIM}/inside"),
            ("symlink-loop", "loop"),
            ("dangling-symlink", "dangling"),
            ("proc-status", "/proc/self/status"),
            ("sys-file", "/sys/kernel/mm/transparent_hugepage/enabled"),
            ("dev-null", "/dev/null"),
            ("socket", "sock"),
            ("tilde-unknown-user", "~no-such-user-zz/x"),
        )
    },
    "write-dev-full": ("write", {"path": "/dev/full", "content": "x"}),
    "write-proc-read-only": ("write", {"path": "/proc/version", "content": "x"}),
    "write-a-directory": ("write", {"path": ".", "content": "x"}),
    "read-a-directory": ("read", {"path": "."}),
    "read-binary-file": ("read", {"path": "binary.bin"}),
    "read-fake-png": ("read", {"path": "fake.png"}),
    "read-proc-self-mem": ("read", {"path": "/proc/self/mem"}),
    "ls-proc": ("ls", {"path": "/proc/self/fd"}),
    "find-in-proc": ("find", {"pattern": "status", "path": "/proc/self"}),
    # Huge arguments.
    "read-path-1mb": ("read", {"path": "p" * 1_000_000}),
    "bash-command-5mb": ("bash", {"command": "true #" + "c" * 5_000_000}),
    "grep-pattern-1mb": ("grep", {"pattern": "q" * 1_000_000}),
    "edit-old-text-5mb": ("edit", {"path": VICTIM, "edits": [{"oldText": "o" * 5_000_000, "newText": ""}]}),
    "edit-10000-edits": (
        "edit",
        {"path": VICTIM, "edits": [{"oldText": f"{i}", "newText": ""} for i in range(10000)]},
    ),
    "write-5mb-content": ("write", {"path": "big.txt", "content": "w" * 5_000_000}),
    "arguments-deeply-nested": ("read", {"path": VICTIM, "x": json.loads("[" * 500 + "]" * 500)}),
}

# Protected by every case that does not name them: the file and the special files stay as they were.
UNKNOWN_TOOLS: dict[str, ScriptedToolCall] = {
    "unknown-tool": ScriptedToolCall("teleport", {"to": "mars"}),
    "empty-tool-name": ScriptedToolCall("", {}),
    "tool-name-with-path": ScriptedToolCall("../../bash", {"command": "echo x"}),
    "tool-name-huge": ScriptedToolCall("t" * 100_000, {}),
    "arguments-not-json": ScriptedToolCall("read", raw_arguments='{"path": '),
    "arguments-array": ScriptedToolCall("read", raw_arguments="[1, 2]"),
    "arguments-null": ScriptedToolCall("read", raw_arguments="null"),
    "arguments-string": ScriptedToolCall("bash", raw_arguments='"rm -rf /"'),
    "arguments-number": ScriptedToolCall("bash", raw_arguments="5"),
    "arguments-empty": ScriptedToolCall("ls", raw_arguments=""),
    "arguments-nan": ScriptedToolCall("read", raw_arguments='{"path": NaN}'),
    "arguments-invalid-escape": ScriptedToolCall("read", raw_arguments='{"path": "\\q\\ud800"}'),
    "arguments-two-objects": ScriptedToolCall("read", raw_arguments='{"path": "a"}{"path": "b"}'),
    "arguments-5mb-garbage": ScriptedToolCall("bash", raw_arguments="{" + "x" * 5_000_000),
}


@pytest.fixture
def work(campaign: Campaign) -> Iterator[Path]:
    """The work folder, with a file to protect and odd files to point at."""
    work = campaign.work
    (work / VICTIM).write_text(VICTIM_TEXT)
    (work / "binary.bin").write_bytes(bytes(range(256)) * 8)
    (work / "fake.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"garbage" * 10)
    os.symlink("loop", work / "loop")
    os.symlink("nowhere", work / "dangling")
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(work / "sock"))
    try:
        yield work
    finally:
        listener.close()


def run_tool_call(campaign: Campaign, call: ScriptedToolCall, *, real_process: bool = False) -> None:
    """The model asks for ``call``, then answers "done": the run ends with that answer, the call got
    a result, the session file is whole and the protected file is as it was."""
    # A window the megabyte arguments fit in: this campaign is about the tools, and a conversation
    # past the window would be compacted between the turns first (as pi 1.6 does).
    models = campaign.agent_dir / "models.json"
    config = json.loads(models.read_text())
    for provider in config["providers"].values():
        for model in provider.get("models", []):
            model["contextWindow"] = 100_000_000
    models.write_text(json.dumps(config))
    # Big deltas: streaming megabytes of arguments in 8-character pieces is its own benchmark.
    campaign.server.add(Turn(tool_calls=[call], chunk_size=4096), Turn(text="done"))
    args = (*MODEL, *ALL_TOOLS, "-p", "go")
    outcome = campaign.process_check(*args, timeout=15) if real_process else campaign.run_check(*args)
    assert outcome.code == 0, outcome
    assert outcome.stdout == "done\n"
    results = [m for m in campaign.server.last_request.body["messages"] if m["role"] == "tool"]
    assert len(results) == 1
    [session] = campaign.session_files()
    session_lines(session)


@pytest.mark.parametrize("case", sorted(CALLS))
def test_a_hostile_tool_call(campaign: Campaign, work: Path, case: str) -> None:
    tool, arguments = CALLS[case]
    run_tool_call(campaign, ScriptedToolCall(tool, arguments))
    if VICTIM not in json.dumps(arguments) or tool not in ("write", "edit"):
        assert (work / VICTIM).read_text() == VICTIM_TEXT
    assert (work / "loop").is_symlink() and (work / "sock").is_socket()


@pytest.mark.parametrize("case", sorted(UNKNOWN_TOOLS))
def test_a_malformed_tool_call(campaign: Campaign, work: Path, case: str) -> None:
    run_tool_call(campaign, UNKNOWN_TOOLS[case])
    assert (work / VICTIM).read_text() == VICTIM_TEXT


def test_many_hostile_calls_in_one_reply_in_a_real_process(campaign: Campaign, work: Path) -> None:
    """Forty of the cases at once, through the real ``tau`` process: every call gets its result."""
    names = sorted(CALLS)[::7]
    calls = [ScriptedToolCall(*CALLS[name]) for name in names if len(json.dumps(CALLS[name])) < 10_000]
    campaign.server.add(Turn(tool_calls=calls), Turn(text="done"))
    outcome = campaign.process_check(*MODEL, *ALL_TOOLS, "-p", "go", timeout=30)
    assert outcome.code == 0 and outcome.stdout == "done\n"
    results = [m for m in campaign.server.last_request.body["messages"] if m["role"] == "tool"]
    assert len(results) == len(calls)
