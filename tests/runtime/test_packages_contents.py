"""What tau reads from a package folder, and how package sources are told apart (issue #16)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tau.packages.contents import package_contents
from tau.packages.sources import SourceError, parse_source


@pytest.fixture
def package(tmp_path: Path) -> Path:
    for skill in ("deploy", "lint"):
        (tmp_path / "skills" / skill).mkdir(parents=True)
        (tmp_path / "skills" / skill / "SKILL.md").write_text(f"---\nname: {skill}\n---\n")
    (tmp_path / "prompts").mkdir()
    for name in ("review.md", "fix.md"):
        (tmp_path / "prompts" / name).write_text(name)
    (tmp_path / "extensions").mkdir()
    (tmp_path / "extensions" / "a.py").write_text("")
    (tmp_path / "extensions" / "b.ts").write_text("")
    return tmp_path


def _relative(paths: list[str], root: Path) -> list[str]:
    return [str(Path(p).relative_to(root)) for p in paths]


def test_conventional_folders_give_every_kind_and_typescript_is_not_loadable(package: Path) -> None:
    contents = package_contents(str(package))
    assert _relative(contents.found["skills"], package) == ["skills/deploy", "skills/lint"]
    assert _relative(contents.found["prompts"], package) == ["prompts/fix.md", "prompts/review.md"]
    assert _relative(contents.found["extensions"], package) == ["extensions/a.py"]
    assert [Path(p).name for p, _ in contents.not_loadable] == ["b.ts"]


def test_a_folder_extension_with_an_index_script_is_not_loadable_with_its_language(package: Path) -> None:
    (package / "extensions" / "todo").mkdir()
    (package / "extensions" / "todo" / "index.js").write_text("")
    contents = package_contents(str(package))
    assert [(Path(p).name, language) for p, language in contents.not_loadable] == [
        ("b.ts", "TypeScript"),
        ("todo", "JavaScript"),
    ]


def test_an_empty_filter_loads_none_of_that_kind_and_an_absent_one_all(package: Path) -> None:
    contents = package_contents(str(package), {"source": ".", "skills": []})
    assert contents.found["skills"] == []
    assert len(contents.found["prompts"]) == 2


def test_a_glob_filter_keeps_only_its_matches_and_minus_path_drops_one(package: Path) -> None:
    contents = package_contents(str(package), {"prompts": ["prompts/*.md", "-prompts/fix.md"]})
    assert _relative(contents.found["prompts"], package) == ["prompts/review.md"]


def test_an_exclusion_filter_drops_a_skill_folder_and_plus_path_brings_it_back(package: Path) -> None:
    dropped = package_contents(str(package), {"skills": ["!skills/lint"]})
    assert _relative(dropped.found["skills"], package) == ["skills/deploy"]
    restored = package_contents(str(package), {"skills": ["!skills/*", "+skills/lint"]})
    assert _relative(restored.found["skills"], package) == ["skills/lint"]


def test_a_pi_manifest_lists_paths_and_leaves_undeclared_kinds_out(package: Path) -> None:
    manifest = {"name": "x", "pi": {"prompts": ["./prompts/*.md", "!**/fix.md"], "skills": ["./skills"]}}
    (package / "package.json").write_text(json.dumps(manifest))
    contents = package_contents(str(package))
    assert _relative(contents.found["prompts"], package) == ["prompts/review.md"]
    assert len(contents.found["skills"]) == 2
    assert contents.found["extensions"] == [] and contents.not_loadable == []


def test_git_sources_split_the_ref_and_share_an_identity_without_it() -> None:
    pinned = parse_source("git:github.com/example/tools@v1")
    assert (pinned.spec, pinned.ref, pinned.host, pinned.repo_path) == (
        "https://github.com/example/tools",
        "v1",
        "github.com",
        "example/tools",
    )
    assert pinned.identity("/a") == parse_source("https://github.com/example/tools.git").identity("/a")
    scp = parse_source("git:git@github.com:example/tools")
    assert (scp.host, scp.repo_path, scp.ref) == ("github.com", "example/tools", None)


def test_npm_and_pip_sources_are_identified_by_name() -> None:
    scoped = parse_source("npm:@demo/pi-tools@1.2.0")
    assert (scoped.name, scoped.version) == ("@demo/pi-tools", "1.2.0")
    assert scoped.identity("/a") == parse_source("npm:@demo/pi-tools").identity("/a")
    assert parse_source("pip:My_Tools>=2").identity("/a") == parse_source("pip:my-tools").identity("/a")


def test_an_unknown_scheme_is_refused_with_the_schemes_tau_knows() -> None:
    with pytest.raises(SourceError, match=r"unknown package source scheme 'ftp'.*npm:, git:, pip:"):
        parse_source("ftp:example.com/tools")


def test_a_python_project_folder_listing_tau_extensions_is_one_extension(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.tau]\nextensions = ["tools/main.py"]\n')
    contents = package_contents(str(tmp_path))
    assert contents.found["extensions"] == [str(tmp_path)]


def test_a_skill_is_switched_off_by_its_skill_file_as_pi_config_writes_it(package: Path) -> None:
    contents = package_contents(str(package), {"skills": ["-skills/lint/SKILL.md"]})
    assert _relative(contents.found["skills"], package) == ["skills/deploy"]
