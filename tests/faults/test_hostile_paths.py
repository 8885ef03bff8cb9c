"""Names that try to lead a path out of its folder (issue #30 §2): package sources, session ids and
batch task ids with ``..``, absolute paths, ``%2e%2e``, backslashes, NUL, very long names and
symlinks that point out. Each is refused with one line (or stays inside its folder), and nothing
outside is created, replaced or deleted: a sentinel repository with uncommitted work survives
``tau install``, ``tau update`` and ``tau remove``. Also the two package-install messages of §7."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from fault_campaign import Campaign
from tau_command import MODEL

from tau.testing.fake_llm import Turn

DEEP = "../" * 40  # more than enough to climb from any agent dir to /


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        [
            "git",
            "-c",
            "user.email=t@example.com",
            "-c",
            "user.name=t",
            "-c",
            "init.defaultBranch=main",
            *args,
        ],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def _sentinel_repo(path: Path) -> None:
    """A repository with a committed file changed but not committed, and an untracked file."""
    path.mkdir(parents=True)
    _git(path, "init", "-q")
    (path / "kept.txt").write_text("committed\n")
    _git(path, "add", "kept.txt")
    _git(path, "commit", "-qm", "one")
    (path / "kept.txt").write_text("changed, not committed\n")
    (path / "untracked.txt").write_text("uncommitted work\n")


def _tree(root: Path, *, skip: tuple[Path, ...] = ()) -> dict[str, str]:
    """Every path under ``root`` (not under ``skip``) with what it is: a link's target, a file's text."""
    found: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        if any(path == s or s in path.parents for s in skip):
            continue
        key = str(path.relative_to(root))
        if path.is_symlink():
            found[key] = f"link -> {path.readlink()}"
        elif path.is_file():
            found[key] = path.read_text(errors="replace")
        else:
            found[key] = "folder"
    return found


@pytest.fixture
def sentinel(campaign: Campaign) -> Iterator[Path]:
    """The user's own project, outside the agent dir; checked to be untouched after the test."""
    project = campaign.agent_dir.parent / "home" / "me" / "project"
    _sentinel_repo(project)
    skip = (campaign.agent_dir, campaign.agent_dir.parent / "upstream")  # the tests' own package repositories
    outside = _tree(campaign.agent_dir.parent, skip=skip)
    yield project
    assert (project / "kept.txt").read_text() == "changed, not committed\n"
    assert (project / "untracked.txt").read_text() == "uncommitted work\n"
    assert _tree(campaign.agent_dir.parent, skip=skip) == outside


def _one_line(campaign: Campaign, *args: str, expect: str) -> None:
    outcome = campaign.process_check(*args, codes=(1,))
    errors = [line for line in outcome.stderr.splitlines() if line.strip()]
    assert len(errors) == 1, outcome.stderr
    assert errors[0].startswith("tau: ") and expect in errors[0], errors[0]


def _set_packages(campaign: Campaign, packages: list[str]) -> None:
    path = campaign.agent_dir / "settings.json"
    settings = json.loads(path.read_text())
    path.write_text(json.dumps({**settings, "packages": packages}))


def _climbing_sources(project: Path) -> list[str]:
    inside = str(project).lstrip("/")
    return [
        f"git:file:///{DEEP}{inside}",
        f"file:///{DEEP}{inside}",
        f"git:file://localhost/{DEEP}{inside}",
        f"git:file:///tmp/../{DEEP}{inside}@main",
        f"git:file://../{DEEP}{inside}",
        f"git@..:{DEEP}{inside}",
    ]


def test_a_git_source_that_climbs_out_never_replaces_the_users_repository(
    campaign: Campaign, sentinel: Path
) -> None:
    for source in _climbing_sources(sentinel):
        _one_line(campaign, "install", source, expect="'..'")
    assert not (campaign.agent_dir / "settings.json").read_text().count("packages")


def test_remove_and_update_of_a_climbing_source_in_settings_delete_and_reset_nothing(
    campaign: Campaign, sentinel: Path
) -> None:
    sources = _climbing_sources(sentinel)
    _set_packages(campaign, sources)
    for source in sources:
        _one_line(campaign, "remove", source, expect="'..'")
    updated = campaign.process_check("update", codes=(0, 1))
    assert updated.stderr.count("tau: warning:") == len(sources), updated.stderr
    listed = campaign.process_check("list")
    assert listed.stderr.count("tau: warning:") == len(sources), listed.stderr


@pytest.mark.parametrize(
    "path",
    [
        "%2e%2e/%2e%2e/%2e%2e/{inside}",  # not decoded: a folder named "%2e%2e", inside tau's own
        "..\\..\\..\\{inside}",  # a backslash is no separator here: one odd name, inside
        "{inside}/" + "x" * 300,  # a name no file system takes
    ],
)
def test_encoded_backslashed_and_long_git_paths_stay_inside_or_are_refused(
    campaign: Campaign, sentinel: Path, path: str
) -> None:
    source = "git:file:///" + path.format(inside=str(sentinel).lstrip("/"))
    installed = campaign.process_check("install", source, codes=(0, 1))
    if installed.code == 0:
        removed = campaign.process_check("remove", source)
        assert removed.code == 0, removed.stderr
    assert not list((campaign.agent_dir / "git").rglob("untracked.txt"))


def test_a_symlink_in_the_package_folders_that_points_out_is_never_followed(
    campaign: Campaign, sentinel: Path, tmp_path: Path
) -> None:
    # A real package repository at <tmp>/upstream/project: its install folder is
    # <agent>/git/local/<tmp>/upstream/project, and its parent there is planted as a link to the
    # folder that holds the user's project (so the install folder would be the user's project).
    upstream = tmp_path / "upstream" / "project"
    upstream.mkdir(parents=True)
    (upstream / "prompts").mkdir()
    (upstream / "prompts" / "p.md").write_text("hello")
    _git(upstream, "init", "-q")
    _git(upstream, "add", "-A")
    _git(upstream, "commit", "-qm", "one")
    planted = campaign.agent_dir / "git" / "local" / upstream.parent.relative_to("/")
    planted.parent.mkdir(parents=True)
    planted.symlink_to(sentinel.parent)
    source = f"git:{upstream.as_uri()}"
    assert (planted / "project").resolve() == sentinel
    _one_line(campaign, "install", source, expect="symbolic link")
    _set_packages(campaign, [source])
    _one_line(campaign, "remove", source, expect="symbolic link")
    updated = campaign.process_check("update", codes=(0, 1))
    assert "symbolic link" in updated.stderr


def test_a_link_as_the_install_folder_itself_is_never_replaced_or_removed(
    campaign: Campaign, sentinel: Path, tmp_path: Path
) -> None:
    upstream = tmp_path / "upstream" / "tool"
    upstream.mkdir(parents=True)
    (upstream / "README.md").write_text("tool")
    _git(upstream, "init", "-q")
    _git(upstream, "add", "-A")
    _git(upstream, "commit", "-qm", "one")
    target = campaign.agent_dir / "git" / "local" / upstream.relative_to("/")
    target.parent.mkdir(parents=True)
    target.symlink_to(sentinel)
    source = f"git:{upstream.as_uri()}"
    _one_line(campaign, "install", source, expect="symbolic link")
    _set_packages(campaign, [source])
    _one_line(campaign, "remove", source, expect="symbolic link")
    assert target.is_symlink()


def test_a_folder_tau_did_not_install_is_not_replaced(campaign: Campaign, tmp_path: Path) -> None:
    upstream = tmp_path / "upstream" / "tool"
    upstream.mkdir(parents=True)
    (upstream / "README.md").write_text("tool")
    _git(upstream, "init", "-q")
    _git(upstream, "add", "-A")
    _git(upstream, "commit", "-qm", "one")
    target = campaign.agent_dir / "git" / "local" / upstream.relative_to("/")
    target.mkdir(parents=True)
    (target / "notes.txt").write_text("mine")
    source = f"git:{upstream.as_uri()}"
    _one_line(campaign, "install", source, expect="not a package tau installed")
    _set_packages(campaign, [source])
    _one_line(campaign, "remove", source, expect="not a package tau installed")
    assert (target / "notes.txt").read_text() == "mine"
    assert json.loads((campaign.agent_dir / "settings.json").read_text())["packages"] == [source]


@pytest.mark.parametrize("name", ["..", ".", "@scope/..", "@../x/..", "@scope/."])
def test_an_npm_name_that_is_a_dot_folder_never_removes_the_npm_folders(
    campaign: Campaign, name: str
) -> None:
    other = campaign.agent_dir / "npm" / "node_modules" / "other"
    other.mkdir(parents=True)
    (other / "package.json").write_text('{"name": "other"}')
    source = f"npm:{name}"
    _one_line(campaign, "install", source, expect="not an npm package name")
    _set_packages(campaign, [source])
    _one_line(campaign, "remove", source, expect="not an npm package name")
    assert (other / "package.json").is_file()


def test_nul_and_control_characters_in_declared_sources_are_warnings_not_crashes(
    campaign: Campaign, sentinel: Path
) -> None:
    sources = ["git:file:///a\x00b", "npm:a\x00b", "git:https://example.com/a\nb", "npm:@x/\x01"]
    _set_packages(campaign, sources)
    listed = campaign.process_check("list")
    assert listed.stderr.count("tau: warning:") == len(sources), listed.stderr
    updated = campaign.process_check("update", codes=(0, 1))
    assert updated.stderr.count("tau: warning:") == len(sources), updated.stderr
    campaign.server.add(Turn(text="ok"))
    run = campaign.process_check(*MODEL, "-p", "hi", max_error_lines=20)
    assert run.code == 0, run.stderr


@pytest.mark.parametrize(
    "session_id",
    ["..", "../../outside", "/tmp/abs", "a/../../b", "%2e%2e", "a\\..\\b", "a\nb", "x" * 300],
)
def test_a_session_id_that_cannot_be_a_file_name_is_refused_before_anything_is_sent(
    campaign: Campaign, session_id: str
) -> None:
    outside = _tree(campaign.agent_dir.parent, skip=(campaign.agent_dir,))
    _one_line(campaign, *MODEL, "--session-id", session_id, "-p", "hi", expect="--session-id")
    assert campaign.server.requests == []
    assert campaign.session_files() == []
    assert _tree(campaign.agent_dir.parent, skip=(campaign.agent_dir,)) == outside


def test_batch_task_ids_that_cannot_name_a_file_are_refused_and_nothing_lands_outside_out(
    campaign: Campaign,
) -> None:
    project = campaign.work / "project"
    project.mkdir()
    bad = ["..", ".", "a/b", "../../escape", "a\\b", "x\x00y", "new\nline", "é" * 150, "/abs"]
    lines = [json.dumps({"id": task_id, "prompt": "hi", "cwd": "project"}) for task_id in bad]
    lines.append(json.dumps({"id": "%2e%2e", "prompt": "hi", "cwd": "project"}))
    (campaign.work / "tasks.jsonl").write_text("\n".join(lines) + "\n")
    campaign.server.add(Turn(text="ok"))
    before = _tree(campaign.agent_dir.parent, skip=(campaign.agent_dir, campaign.work / "out"))
    outcome = campaign.process_check(
        "batch", "tasks.jsonl", "--out", "out", "--model", "local/fake-model", max_error_lines=len(bad) + 5
    )
    assert outcome.code == 1
    refused = [line for line in outcome.stderr.splitlines() if "cannot name the task's files" in line]
    assert [line.split(":")[1].strip() for line in refused] == [f"tasks.jsonl line {n}" for n in range(1, 10)]
    assert _tree(campaign.agent_dir.parent, skip=(campaign.agent_dir, campaign.work / "out")) == before
    results = [
        json.loads(line) for line in (campaign.work / "out" / "results.jsonl").read_text().splitlines()
    ]
    assert [r["id"] for r in results] == ["%2e%2e"]
    assert sorted(p.name for p in (campaign.work / "out" / "sessions").iterdir()) == ["%2e%2e.jsonl"]


def test_an_unknown_scheme_is_named(campaign: Campaign) -> None:
    for source in ("ftp://x/y", "s3://bucket/pkg", "svn+ssh://host/repo"):
        scheme = source.split(":")[0]
        _one_line(campaign, "install", source, expect=f"unknown package source scheme {scheme!r}")


def test_a_failed_pip_install_shows_pips_own_error_line(campaign: Campaign) -> None:
    broken = campaign.work / "broken"
    broken.mkdir()
    (broken / "pyproject.toml").write_text("[project\nname = ")
    outcome = campaign.process_check("install", "pip:./broken", codes=(1,), timeout=120)
    [line] = [line for line in outcome.stderr.splitlines() if line.strip()]
    assert line.startswith("tau: pip install ") and "failed: " in line
    assert "ERROR: Exception" not in line
    assert "Expected ']' at the end of a table declaration" in line
    assert not (campaign.agent_dir / "pip" / "broken").exists()


def test_a_climbing_source_for_one_run_is_a_warning_and_replaces_nothing(
    campaign: Campaign, sentinel: Path
) -> None:
    campaign.server.add(*[Turn(text="ok")] * 6)
    for source in _climbing_sources(sentinel):
        run = campaign.process_check("-e", source, *MODEL, "-p", "hi", max_error_lines=20)
        assert run.code == 0, run.stderr
        assert f"tau: warning: -e {source}: " in run.stderr and "'..'" in run.stderr


def test_an_unknown_scheme_for_one_run_is_named(campaign: Campaign) -> None:
    campaign.server.add(Turn(text="ok"))
    run = campaign.process_check("-e", "ftp://x/y", *MODEL, "-p", "hi", max_error_lines=20)
    assert run.code == 0, run.stderr
    assert "unknown package source scheme 'ftp'" in run.stderr


def test_a_kind_folder_that_is_a_link_out_of_the_agent_dir_is_not_followed(
    campaign: Campaign, sentinel: Path
) -> None:
    (campaign.agent_dir / "npm").mkdir()
    (campaign.agent_dir / "npm" / "node_modules").symlink_to(sentinel.parent)
    _set_packages(campaign, ["npm:project"])
    _one_line(campaign, "remove", "npm:project", expect="symbolic link")
    _one_line(campaign, "install", "npm:project", expect="symbolic link")
