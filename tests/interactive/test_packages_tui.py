"""``/packages`` in the terminal UI: a package's resources, switched off with Enter in pi's filter shape (issue #16)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tau_command import TauCommand
from terminal import ENTER, ESCAPE, Terminal

Start = Callable[..., Terminal]


def test_slash_packages_switches_a_package_skill_off_and_saves_the_filter(
    tau: TauCommand, start_tui: Start, tmp_path: Path
) -> None:
    package = tmp_path / "tools"
    (package / "skills" / "deploy").mkdir(parents=True)
    (package / "skills" / "deploy" / "SKILL.md").write_text("---\nname: deploy\ndescription: d\n---\nSteps\n")
    (package / "prompts").mkdir()
    (package / "prompts" / "review.md").write_text("Review it")
    settings = tau.agent_dir / "settings.json"
    settings.write_text(json.dumps({"packages": [str(package)]}))
    terminal = start_tui(cols=200)  # the notice names the package's folder: one line at any temporary path

    terminal.type("/packages")
    terminal.send(ENTER)
    terminal.wait_for("[x] prompt    prompts/review.md", where="display")
    terminal.wait_for("[x] skill     skills/deploy/SKILL.md", where="display")
    terminal.wait_for("› [x] skill     skills/deploy/SKILL.md", where="display")  # skills come first
    terminal.send(ENTER)
    terminal.wait_for("› [ ] skill     skills/deploy/SKILL.md", where="display")  # shown again, switched
    terminal.send(ESCAPE)
    terminal.wait_for(
        "tools; /reload applies it"
    )  # the notice: "Disabled skill skills/deploy/SKILL.md of <path>; ..."
    assert "Disabled skill skills/deploy/SKILL.md of" in terminal.text()

    assert json.loads(settings.read_text())["packages"] == [
        {"source": str(package), "skills": ["-skills/deploy/SKILL.md"]}
    ]
