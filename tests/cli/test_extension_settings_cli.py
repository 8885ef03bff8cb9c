"""pi 1.6's ``pi.getSettings()`` and ``ctx.getSystemPromptOptions()`` as tau's
``tau.get_settings()`` / ``ctx.get_system_prompt_options()``, read by an extension in the real
``tau -p`` against the fake server."""

from __future__ import annotations

import json

from tau_command import MODEL, TauCommand

from tau.testing.fake_llm import Turn

EXTENSION = """
import json
import os

from tau.extensions import ExtensionAPI


def setup(tau: ExtensionAPI) -> None:
    @tau.on("before_agent_start")
    def seen(event, ctx):
        settings = tau.get_settings()
        options = ctx.get_system_prompt_options()
        settings["theme"] = "changed by the extension"  # a copy: changes nothing
        with open(os.environ["SEEN_FILE"], "w") as out:
            json.dump(
                {
                    "settings": settings,
                    "again": tau.get_settings().get("theme"),
                    "cwd": options.cwd,
                    "tools": list(options.selected_tools or []),
                    "appended": options.append_system_prompt,
                },
                out,
            )
"""


def test_an_extension_reads_the_effective_settings_and_the_prompts_options(tau: TauCommand) -> None:
    (tau.agent_dir / "settings.json").write_text(
        json.dumps({"theme": "light", "compaction": {"enabled": False}})
    )
    (tau.work / ".tau").mkdir()
    (tau.work / ".tau" / "settings.json").write_text(json.dumps({"compaction": {"reserveTokens": 9000}}))
    (tau.work / "seen.py").write_text(EXTENSION)
    seen = tau.work / "seen.json"
    tau.env["SEEN_FILE"] = str(seen)
    tau.server.add(Turn(text="ok"))
    result = tau.run(
        *MODEL, "-a", "-e", "seen.py", "--tools", "read,ls", "--append-system-prompt", "Be brief.", "-p", "hi"
    )
    assert result.returncode == 0, result.stderr
    got = json.loads(seen.read_text())
    assert got["settings"]["compaction"] == {"enabled": False, "reserveTokens": 9000}  # user's and project's
    assert got["again"] == "light"
    assert got["cwd"] == str(tau.work)
    assert got["tools"] == ["read", "ls"]
    assert got["appended"] == "Be brief."
