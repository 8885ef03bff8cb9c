"""A package's skill switched by ``tau config`` is written as pi 1.6's ``pi config`` writes it
(``-skills/<name>/SKILL.md`` in the package's entry), so the real pi 1.6 reading the same settings
drops and restores the same skill (issue #32)."""

from __future__ import annotations

import json
from pathlib import Path

from pi16 import pi16_command, run_pi16
from tau_command import TauCommand

from tau.testing.fake_llm import Turn


def _skill(package: Path, name: str, description: str) -> None:
    (package / "skills" / name).mkdir(parents=True)
    (package / "skills" / name / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n---\nSteps\n"
    )


def _pi_system_prompt(tau: TauCommand, pi_dir: Path) -> str:
    pi_dir.mkdir(exist_ok=True)
    (pi_dir / "settings.json").write_text((tau.agent_dir / "settings.json").read_text())
    tau.server.add(Turn(text="ok"))
    run_pi16(pi16_command(), tau, pi_dir, "-p", "hi")
    return str(tau.server.last_request.body["messages"][0]["content"])


def test_a_skill_switched_by_tau_config_is_switched_for_pi16_too(tau: TauCommand, tmp_path: Path) -> None:
    package = tmp_path / "tools"
    _skill(package, "deploy", "Deploy the service of the team")
    _skill(package, "lint", "Lint the code of the user")
    settings = tau.agent_dir / "settings.json"
    settings.write_text(json.dumps({"packages": [str(package)]}))

    off = tau.run("config", "disable", str(package), "skills/deploy")
    assert off.returncode == 0, off.stderr
    assert json.loads(settings.read_text())["packages"] == [
        {"source": str(package), "skills": ["-skills/deploy/SKILL.md"]}
    ]
    prompt = _pi_system_prompt(tau, tmp_path / "pi")
    assert "Lint the code of the user" in prompt
    assert "Deploy the service of the team" not in prompt

    on = tau.run("config", "enable", str(package), "skills/deploy/SKILL.md")
    assert on.returncode == 0, on.stderr
    assert json.loads(settings.read_text())["packages"] == [
        {"source": str(package), "skills": ["+skills/deploy/SKILL.md"]}  # replaces pi's switch of the skill
    ]
    assert "Deploy the service of the team" in _pi_system_prompt(tau, tmp_path / "pi")


def test_tau_reads_the_switch_pi16_writes_and_replaces_it(tau: TauCommand, tmp_path: Path) -> None:
    from tau_command import MODEL

    package = tmp_path / "tools"
    _skill(package, "deploy", "Deploy the service of the team")
    settings = tau.agent_dir / "settings.json"
    settings.write_text(
        json.dumps({"packages": [{"source": str(package), "skills": ["-skills/deploy/SKILL.md"]}]})
    )
    assert "  [ ] skill     skills/deploy/SKILL.md" in tau.run("config").stdout.splitlines()
    tau.server.add(Turn(text="ok"))
    assert tau.run(*MODEL, "-p", "hi").returncode == 0
    assert "Deploy the service of the team" not in str(tau.server.last_request.body["messages"][0]["content"])
    assert tau.run("config", "enable", str(package), "skills/deploy").returncode == 0
    assert json.loads(settings.read_text())["packages"] == [
        {"source": str(package), "skills": ["+skills/deploy/SKILL.md"]}
    ]
