"""The trust store and the decision rules (``tau.config.project_trust``), on real files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tau.config.config_errors import ConfigError
from tau.config.project_trust import (
    ProjectTrust,
    SavedDecision,
    TrustStore,
    TrustUpdate,
    has_trust_requiring_resources,
    trust_options,
)
from tau.runtime.services import create_agent_session_services


@pytest.fixture
def agent_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "agent"
    folder.mkdir()
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "repo" / "project"
    (folder / ".tau" / "extensions").mkdir(parents=True)
    (folder / ".git").mkdir()
    return folder


def test_the_store_writes_pis_format_sorted_with_two_space_indent(agent_dir: Path, tmp_path: Path) -> None:
    TrustStore(agent_dir).update(
        [TrustUpdate(str(tmp_path / "b"), False), TrustUpdate(str(tmp_path / "a"), True)]
    )
    text = (agent_dir / "trust.json").read_text()
    assert text == json.dumps({str(tmp_path / "a"): True, str(tmp_path / "b"): False}, indent=2) + "\n"


def test_the_closest_saved_folder_decides_and_null_entries_are_passed_over(
    agent_dir: Path, tmp_path: Path
) -> None:
    deep = tmp_path / "a" / "b" / "c"
    data = {str(tmp_path): True, str(tmp_path / "a" / "b"): None, str(tmp_path / "a"): False}
    (agent_dir / "trust.json").write_text(json.dumps(data))
    assert TrustStore(agent_dir).entry(str(deep)) == SavedDecision(str(tmp_path / "a"), False)


def test_a_byte_order_mark_is_accepted(agent_dir: Path, tmp_path: Path) -> None:
    (agent_dir / "trust.json").write_text("\ufeff" + json.dumps({str(tmp_path): True}), encoding="utf-8")
    assert TrustStore(agent_dir).entry(str(tmp_path)) == SavedDecision(str(tmp_path), True)


def test_a_symlinked_folder_is_saved_under_its_real_path(
    agent_dir: Path, project: Path, tmp_path: Path
) -> None:
    link = tmp_path / "link"
    link.symlink_to(project)
    TrustStore(agent_dir).update(trust_options(str(link))[0].updates)
    assert json.loads((agent_dir / "trust.json").read_text()) == {str(project): True}
    assert TrustStore(agent_dir).entry(str(project)) == SavedDecision(str(project), True)


def test_trusting_the_parent_replaces_the_folders_own_entry(agent_dir: Path, project: Path) -> None:
    store = TrustStore(agent_dir)
    store.update([TrustUpdate(str(project), False)])
    [_, parent, *_] = trust_options(str(project))
    assert parent.label == f"Trust parent folder ({project.parent})"
    store.update(parent.updates)
    assert json.loads((agent_dir / "trust.json").read_text()) == {str(project.parent): True}


def test_the_answers_are_pis_five_in_pis_order(project: Path) -> None:
    labels = [option.label for option in trust_options(str(project))]
    assert labels == [
        "Trust",
        f"Trust parent folder ({project.parent})",
        "Trust (this session only)",
        "Do not trust",
        "Do not trust (this session only)",
    ]
    assert [o.trusted for o in trust_options(str(project))] == [True, True, True, False, False]
    assert [o.updates for o in trust_options(str(project))][2::2] == [(), ()]


def test_updating_a_damaged_store_leaves_it_as_it_was(agent_dir: Path, project: Path) -> None:
    (agent_dir / "trust.json").write_text('{"x": 1}')
    with pytest.raises(ConfigError, match="must be true, false or null"):
        TrustStore(agent_dir).update([TrustUpdate(str(project), True)])
    assert (agent_dir / "trust.json").read_text() == '{"x": 1}'


def test_an_answer_that_cannot_be_saved_still_decides_this_run(agent_dir: Path, project: Path) -> None:
    (agent_dir / "trust.json").write_text("[]")
    trust = ProjectTrust(str(agent_dir))
    assert trust.needs_question(str(project))
    assert trust.answer(str(project), trust_options(str(project))[0]) is True
    assert trust.is_trusted(str(project))
    assert len(trust.warnings) == 2  # the damaged file, then the decision that was not saved
    assert trust.warnings[-1].endswith("the trust decision was not saved")


def test_a_bare_tau_folder_needs_no_trust(tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    (folder / ".tau" / "sessions").mkdir(parents=True)
    (folder / ".git").mkdir()
    (folder / "AGENTS.md").write_text("text only")
    assert not has_trust_requiring_resources(str(folder), home=str(tmp_path / "home"))


@pytest.mark.parametrize(
    "entry",
    ["settings.json", "extensions", "skills", "prompts", "themes", "SYSTEM.md", "APPEND_SYSTEM.md", "mcp.json",
     "../.pi/mcp.json"],
)  # fmt: skip
def test_each_protected_entry_of_tau_needs_trust(tmp_path: Path, entry: str) -> None:
    folder = tmp_path / "p"
    (folder / ".git").mkdir(parents=True)
    target = folder / ".tau" / entry
    target.parent.mkdir(parents=True)
    target.write_text("{}") if "." in entry else target.mkdir()
    assert has_trust_requiring_resources(str(folder), home=str(tmp_path / "home"))


@pytest.mark.parametrize(
    "entry",
    ["settings.json", "extensions", "skills", "prompts", "themes", "SYSTEM.md", "APPEND_SYSTEM.md", "mcp.json"],
)  # fmt: skip
def test_each_protected_entry_of_pis_project_folder_needs_trust(tmp_path: Path, entry: str) -> None:
    folder = tmp_path / "p"
    (folder / ".git").mkdir(parents=True)
    target = folder / ".pi" / entry
    target.parent.mkdir(parents=True)
    target.write_text("{}") if "." in entry else target.mkdir()
    assert has_trust_requiring_resources(str(folder), home=str(tmp_path / "home"))


def test_a_bare_pi_folder_needs_no_trust(tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    (folder / ".pi" / "npm").mkdir(parents=True)
    (folder / ".git").mkdir()
    assert not has_trust_requiring_resources(str(folder), home=str(tmp_path / "home"))


def test_agents_skills_up_to_the_git_root_need_trust_but_the_users_own_do_not(tmp_path: Path) -> None:
    home = tmp_path / "home"
    folder = home / "repo" / "sub"
    folder.mkdir(parents=True)
    (home / ".agents" / "skills").mkdir(parents=True)
    assert not has_trust_requiring_resources(str(folder), home=str(home))
    (home / "repo" / ".git").mkdir()
    (home / "repo" / ".agents" / "skills").mkdir(parents=True)
    assert has_trust_requiring_resources(str(folder), home=str(home))


def test_a_folder_with_nothing_to_protect_is_trusted_unless_saved_otherwise(
    agent_dir: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "empty"
    (folder / ".git").mkdir(parents=True)
    assert ProjectTrust(str(agent_dir), default="never").is_trusted(str(folder))
    TrustStore(agent_dir).update([TrustUpdate(str(folder), False)])
    assert not ProjectTrust(str(agent_dir)).is_trusted(str(folder))


def test_the_override_decides_before_anything_else(agent_dir: Path, project: Path) -> None:
    TrustStore(agent_dir).update([TrustUpdate(str(project), False)])
    trust = ProjectTrust(str(agent_dir), override=True)
    assert not trust.needs_question(str(project))
    assert trust.is_trusted(str(project))


def test_untrusted_services_leave_the_project_settings_and_extensions_out(
    agent_dir: Path, project: Path
) -> None:
    (project / ".tau" / "settings.json").write_text(json.dumps({"theme": "light"}))
    (project / ".tau" / "extensions" / "mark.py").write_text("def setup(tau):\n    pass\n")
    (project / "AGENTS.md").write_text("Read me.")
    untrusted = create_agent_session_services(cwd=str(project), agent_dir=agent_dir, project_trusted=False)
    assert untrusted.settings_manager.get("theme") is None
    assert untrusted.extension_runner is None
    assert [c.content for c in untrusted.resource_loader.context_files] == ["Read me."]
    trusted = create_agent_session_services(cwd=str(project), agent_dir=agent_dir)
    assert trusted.settings_manager.get("theme") == "light"
    assert trusted.extension_runner is not None
    trusted.extension_runner.dispose()
