"""A pi project's ``.pi/`` folder over the real `tau` process: read beside ``.tau/``, behind the
same project trust, ``.tau/`` winning a name or a settings key both have."""

from __future__ import annotations

import json
from pathlib import Path

from tau_command import MODEL, TauCommand

from tau.testing.fake_llm import Turn

MARKER_EXTENSION = """\
from pathlib import Path


def setup(tau):
    Path(__file__).resolve().parents[2].joinpath("marker.txt").write_text("ran")
"""


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def skill(folder: Path, name: str, description: str) -> None:
    write(folder / name / "SKILL.md", f"---\nname: {name}\ndescription: {description}\n---\nSteps")


def system_prompt(tau: TauCommand) -> str:
    [first, *_] = tau.server.last_request.body["messages"]
    assert first["role"] == "system"
    return str(first["content"])


def last_user_text(tau: TauCommand) -> str:
    return str(tau.server.last_request.body["messages"][-1]["content"][0]["text"])


def test_nothing_of_an_untrusted_pi_folder_loads_and_all_of_it_does_once_trusted(tau: TauCommand) -> None:
    pi = tau.work / ".pi"
    write(pi / "extensions" / "mark.py", MARKER_EXTENSION)
    skill(pi / "skills", "deploy", "Ship the pi project")
    write(pi / "prompts" / "review.md", "Review the pi project carefully")
    write(pi / "APPEND_SYSTEM.md", "Instruction from the pi folder.")
    tau.server.add(Turn(text="one"), Turn(text="two"))

    untrusted = tau.run(*MODEL, "-p", "/review")
    assert untrusted.returncode == 0, untrusted.stderr
    assert last_user_text(tau) == "/review"
    assert "Ship the pi project" not in system_prompt(tau)
    assert "Instruction from the pi folder." not in system_prompt(tau)
    assert not (tau.work / "marker.txt").exists()

    trusted = tau.run(*MODEL, "-a", "-p", "/review")
    assert trusted.returncode == 0, trusted.stderr
    assert last_user_text(tau) == "Review the pi project carefully"
    assert "Ship the pi project" in system_prompt(tau)
    assert "Instruction from the pi folder." in system_prompt(tau)
    assert (tau.work / "marker.txt").read_text() == "ran"


def test_pi_system_md_replaces_the_default_prompt_of_a_trusted_folder(tau: TauCommand) -> None:
    write(tau.work / ".pi" / "SYSTEM.md", "You are the pi project's own agent.")
    tau.server.add(Turn(text="ok"))
    assert tau.run(*MODEL, "-a", "-p", "hi").returncode == 0
    assert system_prompt(tau).startswith("You are the pi project's own agent.")


def test_the_tau_folder_wins_a_system_file_a_skill_and_a_template_of_the_same_name(tau: TauCommand) -> None:
    for folder, who in ((".tau", "tau"), (".pi", "pi")):
        config = tau.work / folder
        write(config / "APPEND_SYSTEM.md", f"Appended by {who}.")
        skill(config / "skills", "deploy", f"Deploy as {who} does")
        write(config / "prompts" / "review.md", f"Review as {who} does")
    skill(tau.work / ".pi" / "skills", "lint", "Lint the pi way")
    tau.server.add(Turn(text="ok"))
    result = tau.run(*MODEL, "-a", "-p", "/review")
    assert result.returncode == 0, result.stderr
    prompt = system_prompt(tau)
    assert "Appended by tau." in prompt and "Appended by pi." not in prompt
    assert "Deploy as tau does" in prompt and "Deploy as pi does" not in prompt
    assert "Lint the pi way" in prompt  # a name only .pi/ has still loads
    assert last_user_text(tau) == "Review as tau does"


def two_models(tau: TauCommand) -> None:
    models = json.loads((tau.agent_dir / "models.json").read_text())
    local = models["providers"]["local"]
    local["models"].append({**local["models"][0], "id": "fake-model-2"})
    (tau.agent_dir / "models.json").write_text(json.dumps(models))


def test_pi_settings_apply_in_a_trusted_folder_under_the_tau_settings(tau: TauCommand) -> None:
    two_models(tau)
    write(
        tau.work / ".pi" / "settings.json",
        json.dumps({"defaultProvider": "local", "defaultModel": "fake-model-2"}),
    )
    tau.server.add(Turn(text="one"), Turn(text="two"), Turn(text="three"))
    assert tau.run("-a", "-p", "hi").returncode == 0
    assert tau.server.last_request.body["model"] == "fake-model-2"

    assert tau.run("-p", "hi").returncode == 0  # not trusted: the first model with a key
    assert tau.server.last_request.body["model"] == "fake-model"

    write(tau.work / ".tau" / "settings.json", json.dumps({"defaultModel": "fake-model"}))
    result = tau.run("-a", "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert tau.server.last_request.body["model"] == "fake-model"


def test_pi_settings_resource_paths_are_relative_to_the_pi_folder(tau: TauCommand) -> None:
    pi = tau.work / ".pi"
    skill(pi / "team-skills", "release", "Release from the pi folder")
    skill(pi / "team-skills", "draft", "A draft the settings switch off")
    write(pi / "settings.json", json.dumps({"skills": ["team-skills", "!team-skills/draft"]}))
    tau.server.add(Turn(text="ok"))
    result = tau.run(*MODEL, "-a", "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert "Release from the pi folder" in system_prompt(tau)
    assert "A draft the settings switch off" not in system_prompt(tau)


def test_a_tau_settings_array_replaces_the_pi_one(tau: TauCommand) -> None:
    skill(tau.work / ".pi" / "pi-skills", "from-pi", "Listed by pi settings")
    skill(tau.work / ".tau" / "tau-skills", "from-tau", "Listed by tau settings")
    write(tau.work / ".pi" / "settings.json", json.dumps({"skills": ["pi-skills"]}))
    write(tau.work / ".tau" / "settings.json", json.dumps({"skills": ["tau-skills"]}))
    tau.server.add(Turn(text="ok"))
    assert tau.run(*MODEL, "-a", "-p", "hi").returncode == 0
    assert "Listed by tau settings" in system_prompt(tau)
    assert "Listed by pi settings" not in system_prompt(tau)


def test_a_broken_pi_settings_file_is_one_warning_naming_it(tau: TauCommand) -> None:
    path = tau.work / ".pi" / "settings.json"
    write(path, "{not json")
    tau.server.add(Turn(text="hello"))
    result = tau.run(*MODEL, "-a", "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "hello\n"
    [warning] = result.stderr.splitlines()
    assert str(path) in warning
    assert path.read_text() == "{not json"  # never written over


def test_the_pi_folders_session_dir_waits_for_trust(tau: TauCommand) -> None:
    planted = tau.work / "planted-sessions"
    write(tau.work / ".pi" / "settings.json", json.dumps({"sessionDir": str(planted)}))
    tau.server.add(Turn(text="hello"), Turn(text="again"))
    result = tau.run(*MODEL, "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert '"sessionDir"' in result.stderr
    assert not planted.exists()
    assert tau.run(*MODEL, "-a", "-p", "hi").returncode == 0
    assert list(planted.rglob("*.jsonl"))


def test_pi_settings_packages_load_from_where_pi_installed_them_once_trusted(tau: TauCommand) -> None:
    pi = tau.work / ".pi"
    write(pi / "settings.json", json.dumps({"packages": ["npm:@acme/pi-tools", "./vendor/notes"]}))
    installed = pi / "npm" / "node_modules" / "@acme" / "pi-tools"  # where pi installs a project package
    write(installed / "package.json", json.dumps({"name": "@acme/pi-tools", "version": "1.0.0"}))
    skill(installed / "skills", "release", "Cut a release of the pi project")
    write(pi / "vendor" / "notes" / "prompts" / "notes.md", "Summarise the notes")  # relative to .pi/
    tau.server.add(Turn(text="one"), Turn(text="two"))

    untrusted = tau.run(*MODEL, "-p", "/notes")
    assert untrusted.returncode == 0, untrusted.stderr
    assert last_user_text(tau) == "/notes"
    assert "Cut a release" not in system_prompt(tau)

    trusted = tau.run(*MODEL, "-a", "-p", "/notes")
    assert trusted.returncode == 0, trusted.stderr
    assert last_user_text(tau) == "Summarise the notes"
    assert "Cut a release of the pi project" in system_prompt(tau)

    listed = tau.run("list", "-a")
    assert "npm:@acme/pi-tools (.pi/settings.json)" in listed.stdout
    assert str(installed) in listed.stdout


def test_a_package_tau_declares_wins_over_the_same_one_in_pi_settings(tau: TauCommand) -> None:
    package = tau.work / "shared-pkg"
    skill(package / "skills", "alpha", "Alpha skill of the shared package")
    skill(package / "skills", "beta", "Beta skill of the shared package")
    write(tau.work / ".pi" / "settings.json", json.dumps({"packages": [str(package)]}))
    tau_entry = {"source": str(package), "skills": ["-skills/beta"]}
    write(tau.work / ".tau" / "settings.json", json.dumps({"packages": [tau_entry]}))
    tau.server.add(Turn(text="ok"))

    done = tau.run(*MODEL, "-a", "-p", "hi")

    assert done.returncode == 0, done.stderr
    assert "Alpha skill of the shared package" in system_prompt(tau)
    assert "Beta skill of the shared package" not in system_prompt(tau)  # .tau's filter decides


def test_a_missing_pi_package_is_pis_to_install(tau: TauCommand) -> None:
    write(tau.work / ".pi" / "settings.json", json.dumps({"packages": ["npm:@acme/absent"]}))
    tau.server.add(Turn(text="ok"))
    done = tau.run(*MODEL, "-a", "-p", "hi")
    assert done.returncode == 0, done.stderr
    assert (
        "package npm:@acme/absent (.pi/settings.json) is not installed; pi installs it (pi update)"
        in done.stderr
    )
    updated = tau.run("update", "-a")
    assert "Updating npm:@acme/absent" not in updated.stdout  # tau writes nothing into .pi/
    assert not (tau.work / ".pi" / "npm").exists()
