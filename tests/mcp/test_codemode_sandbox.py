"""The codemode sandbox's limits without a deadline (pi 1.6 sets none unless ``timeout_ms`` asks):
a script waits for its calls as long as they take, a busy stretch of JavaScript still has a CPU cap
(QuickJS cannot be interrupted from outside), and an abort ends a waiting script at once."""

from __future__ import annotations

import concurrent.futures
import threading
import time

import pytest

from tau.mcp.codemode_sandbox import RUNAWAY_CPU_S, SandboxScript

pytest.importorskip("quickjs", reason="the codemode extra is part of the dev install")

GLOBALS = {"ALL_TOOLS": "[]", "__stored": "{}"}


def answered_after(seconds: float, calls: list[str]) -> object:
    """A host that answers each call with ``"late"`` after ``seconds``, on a timer thread."""

    def request(kind: str, name: str, payload: str) -> concurrent.futures.Future[str]:
        calls.append(name)
        future: concurrent.futures.Future[str] = concurrent.futures.Future()

        def answer() -> None:
            if future.set_running_or_notify_cancel():  # not if the script cancelled it on ending
                future.set_result('"late"')

        timer = threading.Timer(seconds, answer)
        timer.daemon = True
        timer.start()
        return future

    return request


def test_without_a_deadline_a_script_waits_for_a_call_longer_than_its_cpu_cap() -> None:
    calls: list[str] = []
    script = SandboxScript(
        "return await tools.slow({});",
        answered_after(1.0, calls),  # type: ignore[arg-type]
        timeout_s=None,
        globals_json=GLOBALS,
        runaway_cpu_s=0.3,
    )
    started = time.monotonic()
    outcome = script.run()
    assert time.monotonic() - started >= 1.0
    assert outcome.ok, outcome.error
    assert outcome.output == [{"type": "text", "text": "late"}] and calls == ["slow"]


def test_with_timeout_ms_the_same_wait_fails_at_the_deadline() -> None:
    script = SandboxScript(
        "return await tools.slow({});",
        answered_after(1.0, []),  # type: ignore[arg-type]
        timeout_s=0.2,
        globals_json=GLOBALS,
    )
    outcome = script.run()
    assert not outcome.ok
    assert outcome.error == "Script timed out: Execution timed out after 200 ms"


def test_without_a_deadline_a_busy_loop_stops_at_the_cpu_cap() -> None:
    script = SandboxScript(
        "while (true) {}", answered_after(0, []), timeout_s=None, globals_json=GLOBALS, runaway_cpu_s=0.3
    )  # type: ignore[arg-type]
    outcome = script.run()
    assert not outcome.ok
    assert outcome.error == "the script computed for 0.3 s of CPU time without calling a tool"
    assert RUNAWAY_CPU_S == 120.0


def test_an_abort_ends_a_script_waiting_without_a_deadline() -> None:
    script = SandboxScript(
        "text('before');\nawait tools.slow({});",
        answered_after(30.0, []),  # type: ignore[arg-type]
        timeout_s=None,
        globals_json=GLOBALS,
    )
    threading.Timer(0.3, script.abort).start()
    started = time.monotonic()
    outcome = script.run()
    assert time.monotonic() - started < 5
    assert not outcome.ok and outcome.error == "aborted"
    assert outcome.output == [{"type": "text", "text": "before"}]


@pytest.mark.parametrize(
    "code",
    [
        "for (let i = 0; i < 100001; i++) console.log(i);",
        "try { text('x'.repeat(16777217)); } catch (e) { text('caught'); }\nreturn 'after';",
    ],
)
def test_output_past_pi_16s_limits_fails_the_script_even_when_caught(code: str) -> None:
    script = SandboxScript(code, answered_after(0, []), timeout_s=None, globals_json=GLOBALS)  # type: ignore[arg-type]
    outcome = script.run()
    assert not outcome.ok
    assert outcome.error == (
        "RangeError: script output exceeded the limit of 16777216 characters or 100000 text(), image(), "
        "and console calls. Print a summary instead, or write large data to a file with a tool."
    )
    assert all(item.get("text") not in ("caught", "after") for item in outcome.output)
    assert len(outcome.console) <= 100000


def test_output_within_the_limits_is_kept() -> None:
    code = "for (let i = 0; i < 100000; i++) console.log(i);\nreturn 'done';"
    outcome = SandboxScript(code, answered_after(0, []), timeout_s=None, globals_json=GLOBALS).run()  # type: ignore[arg-type]
    assert outcome.ok and len(outcome.console) == 100000
