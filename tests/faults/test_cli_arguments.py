"""Unknown flags and odd command lines: one line saying what is wrong, exit 1, nothing sent."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest
from fault_campaign import Campaign
from tau_command import MODEL

from tau.testing.fake_llm import Turn

# Each is run as ``tau <args...> -p hi`` with a working model; ``{work}`` is the work folder.
ODD_ARGUMENTS: dict[str, list[str]] = {
    "unknown-long-flag": ["--frobnicate"],
    "unknown-short-flag": ["-Z"],
    "unknown-flag-with-value": ["--colour=blue"],
    "triple-dash": ["---"],
    "lone-dash": ["-"],
    "model-without-value": ["--model"],
    "provider-without-model": ["--provider", "local"],
    "model-empty": ["--model", ""],
    "model-only-slash": ["--model", "/"],
    "model-unknown-provider": ["--model", "nowhere/fake-model"],
    "model-pattern-matches-nothing": ["--model", "zzzz-no-such-model-zzzz"],
    "model-thinking-suffix-bogus": ["--model", "local/fake-model:ludicrous"],
    "thinking-bogus": [*MODEL, "--thinking", "ludicrous"],
    "thinking-empty": [*MODEL, "--thinking", ""],
    "mode-unknown": [*MODEL, "--mode", "xml"],
    "mode-without-value": [*MODEL, "--mode"],
    "tools-unknown": [*MODEL, "--tools", "teleport"],
    "tools-empty": [*MODEL, "--tools", ""],
    "tools-commas-only": [*MODEL, "--tools", ",,,"],
    "no-tools-and-tools": [*MODEL, "--no-tools", "--tools", "read"],
    "session-empty": [*MODEL, "--session", ""],
    "session-unknown-id": [*MODEL, "--session", "ffffffff"],
    "session-a-directory": [*MODEL, "--session", "{work}"],
    "session-dev-null": [*MODEL, "--session", "/dev/null"],
    "fork-unknown": [*MODEL, "--fork", "00000000"],
    "fork-and-continue": [*MODEL, "--fork", "x", "-c"],
    "resume-in-print-mode": [*MODEL, "-r"],
    "export-missing-file": ["--export", "{work}/missing.jsonl"],
    "export-a-directory": ["--export", "{work}"],
    "export-dev-null": ["--export", "/dev/null"],
    "export-to-a-directory-that-is-missing": ["--export", "{work}/s.jsonl", "{work}/no/such/dir/out.html"],
    "extension-missing": [*MODEL, "-e", "{work}/missing.py"],
    "extension-a-text-file": [*MODEL, "-e", "{work}/notes.txt"],
    "extension-raises-on-import": [*MODEL, "-e", "{work}/raises.py"],
    "extension-syntax-error": [*MODEL, "-e", "{work}/broken.py"],
    "skill-missing": [*MODEL, "--skill", "{work}/missing"],
    "prompt-template-missing": [*MODEL, "--prompt-template", "{work}/missing.md"],
    "system-prompt-a-directory": [*MODEL, "--system-prompt", "{work}"],
    "api-key-empty": [*MODEL, "--api-key", ""],
    "api-key-without-model": ["--api-key", "sk-x"],
    "at-file-missing": [*MODEL, "@{work}/missing.txt"],
    "at-file-a-directory": [*MODEL, "@{work}"],
    "at-alone": [*MODEL, "@"],
    "at-binary-file": [*MODEL, "@{work}/binary.bin"],
    "at-empty-file": [*MODEL, "@{work}/empty.txt"],
    "at-dev-null": [*MODEL, "@/dev/null"],
    "at-proc-file": [*MODEL, "@/proc/self/status"],
    "list-models-and-prompt": [*MODEL, "--list-models", "fake"],
    "huge-prompt-argument": [*MODEL, "x" * 200_000],
    "many-prompt-arguments": [*MODEL, *(["again"] * 100)],
    "control-characters-in-prompt": [*MODEL, "\x1b[2J\x1b]0;title\x07\x08\r"],
    "lone-surrogate-in-prompt": [*MODEL, "bad \udcff byte"],
    "rtl-and-zero-width": [*MODEL, "\u202egnirts\u200b\ufeff"],
    "double-dash-then-flags": [*MODEL, "--", "--model", "x"],
    "flags-after-prompt": [*MODEL, "question", "--frobnicate"],
    "verbose-and-offline": [*MODEL, "--verbose", "--offline"],
    "theme-unknown": [*MODEL, "--theme", "neon"],
    "models-pattern-empty": [*MODEL, "--models", ""],
    "session-dir-dev-null": [*MODEL, "--session-dir", "/dev/null/x"],
}


def prepare_work(work: Path) -> None:
    (work / "notes.txt").write_text("just notes\n")
    (work / "raises.py").write_text("raise RuntimeError('extension import failed')\n")
    (work / "broken.py").write_text("def setup(tau:\n")
    (work / "binary.bin").write_bytes(bytes(range(256)) * 16)
    (work / "empty.txt").write_bytes(b"")
    (work / "s.jsonl").write_text('{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"."}\n')


@pytest.mark.parametrize("case", sorted(ODD_ARGUMENTS))
def test_an_odd_command_line(campaign: Campaign, case: str) -> None:
    work = campaign.work
    prepare_work(work)
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(work / "sock"))
    try:
        args = [a.replace("{work}", str(work)) for a in ODD_ARGUMENTS[case]]
        campaign.server.add(*[Turn(text="ok")] * 110)
        campaign.run_check(*args, "-p", "hi")
    finally:
        listener.close()


# Only a real process can get these: arguments that are not UTF-8, and odd standard streams.
def test_arguments_that_are_not_utf8_in_a_real_process(campaign: Campaign) -> None:
    campaign.server.add(Turn(text="ok"))
    campaign.process_check(*MODEL, "-p", b"caf\xe9 \xff\xfe")


def test_a_flag_value_that_is_not_utf8_in_a_real_process(campaign: Campaign) -> None:
    campaign.server.add(Turn(text="ok"))
    campaign.process_check(*MODEL, "--thinking", b"\xff", "-p", "hi")


def test_a_file_argument_whose_name_is_not_utf8_in_a_real_process(campaign: Campaign) -> None:
    name = b"caf\xe9.txt"
    with open(os.path.join(os.fsencode(campaign.work), name), "wb") as handle:
        handle.write(b"contents")
    campaign.server.add(Turn(text="ok"))
    campaign.process_check(*MODEL, b"@" + name, "-p", "hi")


def test_stdin_that_is_not_utf8_in_a_real_process(campaign: Campaign) -> None:
    campaign.server.add(Turn(text="ok"))
    campaign.process_check(*MODEL, "-p", "hi", stdin=b"\xff\xfe\x00binary\x80" * 100)


def test_stdout_closed_early_in_a_real_process(campaign: Campaign) -> None:
    """``tau -p ... | head -c 1``: the reader goes away; tau ends without a traceback."""
    campaign.server.add(Turn(text="a long reply " * 5000))
    import subprocess
    import sys

    reader = subprocess.Popen(["head", "-c", "1"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    assert reader.stdin is not None
    done = subprocess.run(
        [sys.executable, "-m", "tau", *MODEL, "--mode", "json", "-p", "hi"],
        cwd=campaign.work,
        env=campaign.tau.env,
        stdin=subprocess.DEVNULL,
        stdout=reader.stdin,
        stderr=subprocess.PIPE,
        timeout=20,
    )
    reader.stdin.close()
    reader.wait(timeout=5)
    from fault_campaign import Outcome

    campaign.check(Outcome(done.returncode, "", done.stderr.decode()), codes=(0, 1, 120, 141))


# Files that never end or cannot be opened, and folders that cannot be used: a real process each
# (reading one in process could block the test).
ODD_IN_A_REAL_PROCESS: dict[str, list[str]] = {
    "append-system-prompt-binary-file": [*MODEL, "--append-system-prompt", "{work}/binary.bin"],
    "system-prompt-binary-file": [*MODEL, "--system-prompt", "{work}/binary.bin"],
    "system-prompt-latin1-file": [*MODEL, "--system-prompt", "{work}/latin1.txt"],
    "at-socket": [*MODEL, "@{work}/sock"],
    "at-fifo": [*MODEL, "@{work}/fifo"],
    "at-dev-zero": [*MODEL, "@/dev/zero"],
    "at-dev-urandom": [*MODEL, "@/dev/urandom"],
    "at-100mb-file": [*MODEL, "@{work}/big.txt"],
    "session-dir-a-file": [*MODEL, "--session-dir", "{work}/notes.txt"],
    "session-dir-cannot-be-created": [*MODEL, "--session-dir", "{work}/notes.txt/sessions"],
    "session-dir-read-only": [*MODEL, "--session-dir", "/proc/sessions"],
}


@pytest.mark.parametrize("case", sorted(ODD_IN_A_REAL_PROCESS))
def test_an_odd_file_or_folder_on_the_command_line_in_a_real_process(campaign: Campaign, case: str) -> None:
    work = campaign.work
    (work / "notes.txt").write_text("notes\n")
    (work / "binary.bin").write_bytes(bytes(range(256)) * 16)
    (work / "latin1.txt").write_bytes("café système".encode("latin-1"))
    os.mkfifo(work / "fifo")
    with open(work / "big.txt", "wb") as big:
        big.truncate(100 * 1024 * 1024)
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(work / "sock"))
    try:
        args = [a.replace("{work}", str(work)) for a in ODD_IN_A_REAL_PROCESS[case]]
        campaign.server.add(Turn(text="ok"))
        campaign.process_check(*args, "-p", "hi", timeout=10)
    finally:
        listener.close()
