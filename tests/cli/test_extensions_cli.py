"""Extensions through the real `tau` command: -e, -ne, extension flags, load failures, and the
print mode's no-UI binding (spec 70 §1.1–1.2, §3)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from tau_command import MODEL, TauCommand

from tau.testing.fake_llm import ScriptedToolCall, Turn

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "extensions"

PLAN = """
    def setup(tau):
        tau.register_flag("plan", type=str, default="slow", description="How to plan the work")

        @tau.on("before_agent_start")
        def plan(event, ctx):
            return {"systemPrompt": event.system_prompt + f"\\nPlan: {tau.get_flag('plan')}"}
"""


def write(path: Path, source: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source).lstrip())
    return path


def system_prompt(tau: TauCommand) -> str:
    first = tau.server.last_request.body["messages"][0]
    assert first["role"] in ("system", "developer")
    return str(first["content"])


def test_the_permission_gate_blocks_rm_rf_without_a_ui(tau: TauCommand) -> None:
    (tau.work / "victim").mkdir()
    tau.server.add(
        Turn(tool_calls=[ScriptedToolCall("bash", {"command": "rm -rf victim"})]), Turn(text="Blocked.")
    )
    result = tau.run(*MODEL, "-e", str(EXAMPLES / "permission_gate.py"), "-p", "clean up")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Blocked.\n"
    assert (tau.work / "victim").is_dir()
    [tool_result] = [m for m in tau.server.last_request.body["messages"] if m["role"] == "tool"]
    assert "Blocked (recursive delete): no user is present to confirm `rm -rf victim`" in json.dumps(
        tool_result
    )


def test_an_extension_flag_takes_its_value_and_shows_in_help(tau: TauCommand) -> None:
    extension = write(tau.work / "plan.py", PLAN)
    tau.server.add(Turn(text="ok"))
    result = tau.run(*MODEL, "-e", str(extension), "--plan", "fast", "-p", "go")
    assert result.returncode == 0, result.stderr
    assert system_prompt(tau).endswith("\nPlan: fast")
    shown = tau.run("-e", str(extension), "--help")
    assert shown.returncode == 0
    assert "Extension flags:" in shown.stdout
    assert "--plan <value>" in shown.stdout and "How to plan the work (plan)" in shown.stdout


def test_a_flag_no_extension_registers_is_an_error(tau: TauCommand) -> None:
    result = tau.run(*MODEL, "--plan", "fast", "-p", "go")
    assert result.returncode == 1
    assert "Unknown option: --plan" in result.stderr
    assert tau.server.requests == []


def test_an_extension_that_fails_to_import_is_one_warning_and_the_run_goes_on(tau: TauCommand) -> None:
    broken = write(tau.work / "broken.py", "import json\nimport does_not_exist\n")
    tau.server.add(Turn(text="still here"))
    result = tau.run(*MODEL, "-e", str(broken), "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "still here\n"
    [warning] = result.stderr.splitlines()
    assert warning.startswith(f"tau: warning: {broken}:2: extension 'broken': failed to load")
    assert "does_not_exist" in warning


def test_each_typescript_or_javascript_extension_found_is_one_line_saying_why_it_is_skipped(
    tau: TauCommand,
) -> None:
    write(tau.work / ".tau" / "extensions" / "shout.py", "def setup(tau):\n    pass\n")
    write(tau.work / ".tau" / "extensions" / "guard.ts", "export default function (pi) {}\n")
    write(tau.work / ".tau" / "extensions" / "todo" / "index.ts", "export default function (pi) {}\n")
    write(tau.agent_dir / "extensions" / "status.mjs", "export default function (pi) {}\n")
    explicit = write(tau.work / "plan.js", "export default function (pi) {}\n")
    tau.server.add(Turn(text="ran"))
    result = tau.run(*MODEL, "-a", "-e", str(explicit), "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "ran\n"
    lines = result.stderr.splitlines()
    expected = {
        str(explicit): "JavaScript",
        str(tau.work / ".tau" / "extensions" / "guard.ts"): "TypeScript",
        str(tau.work / ".tau" / "extensions" / "todo"): "TypeScript",
        str(tau.agent_dir / "extensions" / "status.mjs"): "JavaScript",
    }
    assert len(lines) == len(expected)
    for path, language in expected.items():
        [line] = [line for line in lines if line.startswith(f"tau: warning: {path}: ")]
        assert f"not loadable ({language}): tau runs Python extensions only" in line
        assert "tau's docs/extensions.md" in line


def test_no_extensions_skips_discovered_ones_but_keeps_explicit_ones(tau: TauCommand) -> None:
    write(
        tau.work / ".tau" / "extensions" / "shout.py",
        """
        def setup(tau):
            @tau.on("input")
            def shout(event, ctx):
                return {"action": "transform", "text": event.text.upper()}
        """,
    )
    plan = write(tau.work / "plan.py", PLAN)
    tau.server.add(Turn(text="one"), Turn(text="two"))
    assert tau.run(*MODEL, "-a", "-p", "hello").returncode == 0
    assert tau.server.last_request.body["messages"][-1]["content"][0]["text"] == "HELLO"
    result = tau.run(*MODEL, "-a", "-ne", "-e", str(plan), "-p", "hello")
    assert result.returncode == 0, result.stderr
    assert tau.server.last_request.body["messages"][-1]["content"][0]["text"] == "hello"
    assert system_prompt(tau).endswith("\nPlan: slow")


def test_a_failing_handler_is_one_line_on_stderr_naming_the_extension(tau: TauCommand) -> None:
    extension = write(
        tau.work / "flaky.py",
        """
        def setup(tau):
            @tau.on("agent_start")
            def fail(event, ctx):
                raise RuntimeError("flaky handler")
        """,
    )
    tau.server.add(Turn(text="answer"))
    result = tau.run(*MODEL, "-e", str(extension), "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "answer\n"
    assert result.stderr == (
        f"tau: {extension}:4: extension 'flaky' failed in agent_start: RuntimeError: flaky handler\n"
    )
