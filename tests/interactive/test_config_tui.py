"""``tau config`` in a terminal (pi's ``pi config``): package resources and built-in extensions
switched with Space, written at once in pi's shapes; Tab to the project's settings."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tau_command import TauCommand
from terminal import ENTER, ESCAPE, Terminal


def _config(tau: TauCommand, *args: str) -> Terminal:
    return Terminal([sys.executable, "-m", "tau", "config", *args], cwd=str(tau.work), env=tau.env, cols=160)


def _package(folder: Path) -> Path:
    (folder / "skills" / "deploy").mkdir(parents=True)
    (folder / "skills" / "deploy" / "SKILL.md").write_text("---\nname: deploy\ndescription: d\n---\nSteps\n")
    (folder / "prompts").mkdir()
    (folder / "prompts" / "review.md").write_text("Review it")
    return folder


def test_tau_config_switches_a_package_resource_and_a_builtin(tau: TauCommand, tmp_path: Path) -> None:
    package = _package(tmp_path / "tools")
    settings = tau.agent_dir / "settings.json"
    settings.write_text(json.dumps({"packages": [str(package)]}))
    terminal = _config(tau)

    terminal.wait_for("Global Resources", where="display")
    terminal.wait_for("[x] skill     skills/deploy/SKILL.md", where="display")
    terminal.wait_for("[x] built-in  llama.cpp", where="display")
    terminal.type("deploy")  # typing filters
    terminal.send(" ")
    terminal.wait_for("Disabled skill skills/deploy/SKILL.md of", where="display")
    terminal.wait_for("[ ] skill     skills/deploy/SKILL.md", where="display")
    terminal.type("llama")
    terminal.send(ENTER)
    terminal.wait_for("Disabled built-in llama.cpp", where="display")
    terminal.wait_for("[ ] built-in  llama.cpp", where="display")
    terminal.send(ESCAPE)
    assert terminal.wait_exit() == 0

    written = json.loads(settings.read_text())
    assert written["packages"] == [{"source": str(package), "skills": ["-skills/deploy/SKILL.md"]}]
    assert written["extensions"] == ["-builtin:llama.cpp"]


def test_tau_config_tab_switches_to_the_trusted_project(tau: TauCommand, tmp_path: Path) -> None:
    package = _package(tmp_path / "tools")
    (tau.work / ".tau").mkdir()
    (tau.work / ".tau" / "settings.json").write_text(json.dumps({"packages": [str(package)]}))
    (tau.agent_dir / "settings.json").write_text(json.dumps({"extensions": ["-builtin:mcp"]}))
    terminal = _config(tau, "--approve")

    terminal.wait_for("Global Resources", where="display")
    terminal.wait_for("[ ] built-in  mcp", where="display")
    terminal.send("\t")
    terminal.wait_for("Project Local Resources", where="display")
    terminal.wait_for("[x] prompt    prompts/review.md", where="display")
    terminal.type("mcp")  # (a space would switch the highlighted row)
    terminal.send(" ")
    terminal.wait_for("Enabled built-in mcp", where="display")
    terminal.send(ESCAPE)
    assert terminal.wait_exit() == 0
    project = json.loads((tau.work / ".tau" / "settings.json").read_text())
    assert project["extensions"] == ["+builtin:mcp"]  # the project's entry decides over the user's


def test_tau_config_local_in_an_untrusted_folder_says_so(tau: TauCommand) -> None:
    (tau.work / ".tau").mkdir()
    (tau.work / ".tau" / "settings.json").write_text("{}")
    terminal = _config(tau, "--local", "--no-approve")
    terminal.wait_for("Project is not trusted. Use --approve")
    assert terminal.wait_exit() == 1


def test_tau_config_switches_a_skill_of_the_agent_folder_off_for_the_next_run(tau: TauCommand) -> None:
    from tau_command import MODEL

    from tau.testing.fake_llm import Turn

    skill = tau.agent_dir / "skills" / "lint"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: lint\ndescription: Lint the code of the user\n---\nRun it\n")
    tau.server.add(Turn(text="ok"), Turn(text="ok"))
    before = tau.run(*MODEL, "-p", "hi")
    assert before.returncode == 0, before.stderr
    assert "Lint the code of the user" in str(tau.server.last_request.body["messages"][0]["content"])
    terminal = _config(tau)
    terminal.wait_for("[x] skill     skills/lint/SKILL.md", where="display")
    terminal.type("lint")
    terminal.send(" ")
    terminal.wait_for("Disabled skill skills/lint/SKILL.md", where="display")
    terminal.send(ESCAPE)
    assert terminal.wait_exit() == 0
    assert json.loads((tau.agent_dir / "settings.json").read_text())["skills"] == ["-skills/lint/SKILL.md"]

    done = tau.run(*MODEL, "-p", "hi")
    assert done.returncode == 0, done.stderr
    assert "Lint the code of the user" not in str(tau.server.last_request.body["messages"][0]["content"])
