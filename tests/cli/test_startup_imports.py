"""What each kind of `tau` start-up imports: only what that run uses (issue #17)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

# Runs tau's entry point in a fresh interpreter and reports which of the named modules it loaded.
_PROBE = """
import json, sys
from tau.cli.main import run
code = run(sys.argv[2:])
sys.stdout.flush()
sys.stderr.write(json.dumps([code, sorted(m for m in json.loads(sys.argv[1]) if m in sys.modules)]))
"""

_HEAVY = [
    "tau.runtime.services",
    "tau.runtime.sdk",
    "tau.context.skills",
    "tau.compaction.summarize",
    "httpx",
]


def _loaded(tmp_path: Path, modules: list[str], *args: str) -> tuple[int, list[str]]:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    env = {"TAU_AGENT_DIR": str(tmp_path / "agent"), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    run = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(modules), *args],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    code, loaded = json.loads(run.stderr.splitlines()[-1])
    return code, loaded


def test_help_without_extensions_imports_no_services_module(tmp_path: Path) -> None:
    assert _loaded(tmp_path, _HEAVY, "--help") == (0, [])


def test_help_reads_the_settings_without_loading_the_model_catalogue_or_message_types(tmp_path: Path) -> None:
    (tmp_path / "agent").mkdir()
    settings = {"defaultThinkingLevel": "high", "defaultProjectTrust": "never"}
    (tmp_path / "agent" / "settings.json").write_text(json.dumps(settings))
    assert _loaded(tmp_path, ["tau.ai.catalogue", "tau.ai.types"], "--help") == (0, [])


def test_help_with_an_extension_folder_still_loads_the_services(tmp_path: Path) -> None:
    extensions = tmp_path / "agent" / "extensions"
    extensions.mkdir(parents=True)
    (extensions / "hello.py").write_text("def setup(tau):\n    pass\n")
    code, loaded = _loaded(tmp_path, ["tau.runtime.services"], "--help")
    assert (code, loaded) == (0, ["tau.runtime.services"])


def test_reading_the_settings_loads_neither_the_summariser_nor_the_skill_loader() -> None:
    probe = (
        "import sys, tau.config.settings, tau.config.project_trust, tau.runtime.extension_loading; "
        "print(sorted(m for m in ('tau.compaction.summarize', 'tau.context.skills', 'tau.tools') if m in sys.modules))"
    )
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "[]"


def test_a_print_run_without_tool_calls_loads_neither_httpx_nor_the_summariser_nor_the_shell(
    tmp_path: Path,
) -> None:
    from tau.testing.fake_llm import FakeLLMServer, Turn

    models = {
        "providers": {
            "local": {
                "api": "openai-completions",
                "apiKey": "k",
                "models": [{"id": "m"}],
            }
        }
    }
    with FakeLLMServer() as server:
        server.add(Turn(text="hello"))
        models["providers"]["local"]["baseUrl"] = server.url("/v1")
        (tmp_path / "agent").mkdir()
        (tmp_path / "agent" / "models.json").write_text(json.dumps(models))
        heavy = ["httpx", "httpcore", "anyio", "tau.compaction.summarize", "tau.compaction.prepare"]
        heavy += ["wcwidth", "tau.modes.interactive.graphemes"]  # the TUI's cluster widths
        # The local shell and its output pieces load with the first bash command (issue #33).
        heavy += ["tau.tools.shell_exec", "tau._process_groups", "tau.tools.output_accumulator"]
        heavy += ["tau.session.listing", "tau.session.forking"]  # only to find or fork a session
        code, loaded = _loaded(
            tmp_path, heavy, "--provider", "local", "--model", "m", "--no-session", "-p", "hi"
        )
    assert (code, loaded) == (0, [])
    assert len(server.requests) == 1
