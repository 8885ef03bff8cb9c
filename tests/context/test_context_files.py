"""AGENTS.md / CLAUDE.md discovery: global first, then root down to cwd, one per folder (spec 30 case 19)."""

from __future__ import annotations

from pathlib import Path

from tau.context import load_context_files


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def under(files: list[str], root: Path) -> list[str]:
    """Only the files inside the test's folder (an ancestor of tmp_path could have its own)."""
    return [f for f in files if f.startswith(str(root))]


def test_global_file_comes_first_then_root_down_to_cwd(tmp_path: Path) -> None:  # case 19
    agent = tmp_path / "agent"
    write(agent / "AGENTS.md", "global")
    write(tmp_path / "a" / "AGENTS.md", "a")
    write(tmp_path / "a" / "b" / "CLAUDE.md", "b")
    files, diagnostics = load_context_files(str(tmp_path / "a" / "b"), str(agent))
    assert under([f.path for f in files], tmp_path) == [
        str(agent / "AGENTS.md"),
        str(tmp_path / "a" / "AGENTS.md"),
        str(tmp_path / "a" / "b" / "CLAUDE.md"),
    ]
    assert [f.content for f in files if f.path.startswith(str(tmp_path))] == ["global", "a", "b"]
    assert diagnostics == []


def test_a_folder_with_both_files_contributes_only_agents_md(tmp_path: Path) -> None:  # case 19
    write(tmp_path / "p" / "AGENTS.md", "agents")
    write(tmp_path / "p" / "CLAUDE.md", "claude")
    files, _ = load_context_files(str(tmp_path / "p"), str(tmp_path / "agent"))
    assert under([f.path for f in files], tmp_path) == [str(tmp_path / "p" / "AGENTS.md")]


def test_folders_below_cwd_are_not_searched(tmp_path: Path) -> None:
    write(tmp_path / "p" / "sub" / "AGENTS.md", "deeper")
    files, _ = load_context_files(str(tmp_path / "p"), str(tmp_path / "agent"))
    assert under([f.path for f in files], tmp_path) == []


def test_the_agent_dir_inside_cwd_chain_is_listed_once(tmp_path: Path) -> None:
    write(tmp_path / "AGENTS.md", "shared")
    files, _ = load_context_files(str(tmp_path), str(tmp_path))
    assert under([f.path for f in files], tmp_path) == [str(tmp_path / "AGENTS.md")]


def test_an_unreadable_file_is_skipped_with_a_warning(tmp_path: Path) -> None:
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "AGENTS.md").write_bytes(b"\xff\xfe not utf-8")
    write(tmp_path / "agent" / "AGENTS.md", "global")
    files, diagnostics = load_context_files(str(tmp_path / "p"), str(tmp_path / "agent"))
    assert under([f.path for f in files], tmp_path) == [str(tmp_path / "agent" / "AGENTS.md")]
    assert [(d.type, d.path) for d in diagnostics] == [("warning", str(tmp_path / "p" / "AGENTS.md"))]


def test_agents_override_md_replaces_that_folders_agents_md_only(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    write(agent / "AGENTS.md", "global")
    write(tmp_path / "a" / "AGENTS.md", "parent")
    write(tmp_path / "a" / "b" / "AGENTS.md", "plain")
    write(tmp_path / "a" / "b" / "CLAUDE.md", "claude")
    write(tmp_path / "a" / "b" / "AGENTS.override.md", "override")
    files, diagnostics = load_context_files(str(tmp_path / "a" / "b"), str(agent))
    assert [f.content for f in files if f.path.startswith(str(tmp_path))] == ["global", "parent", "override"]
    assert diagnostics == []


def test_agents_override_md_in_the_agent_dir_replaces_the_global_file(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    write(agent / "AGENTS.md", "global")
    write(agent / "AGENTS.override.md", "global override")
    files, _ = load_context_files(str(tmp_path / "p"), str(agent))
    assert under([f.path for f in files], tmp_path) == [str(agent / "AGENTS.override.md")]
