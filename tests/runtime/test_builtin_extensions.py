"""pi 1.6's built-in extension names as switches (issue #32)."""

from __future__ import annotations

from tau.runtime.builtin_extensions import builtin_enabled, builtin_entry_problems, without_builtin_entries


def _on(
    name: str, project: list[str], user: list[str], *, explicit: tuple[str, ...] = (), ne: bool = False
) -> bool:
    return builtin_enabled(name, project, user, explicit=explicit, no_extensions=ne)


def test_builtins_are_on_unless_an_entry_switches_them_off() -> None:
    assert _on("mcp", [], [])
    assert not _on("mcp", [], ["-builtin:mcp"])
    assert _on("codemode", [], ["-builtin:mcp"])
    assert not _on("tool-search", [], ["!builtin:*"])


def test_a_project_entry_decides_over_the_users() -> None:
    assert _on("mcp", ["+builtin:mcp"], ["-builtin:mcp"])
    assert not _on("mcp", ["-builtin:mcp"], ["+builtin:mcp"])
    assert not _on("mcp", ["-builtin:mcp"], [])


def test_no_extensions_switches_all_off_but_those_named_with_dash_e() -> None:
    assert not _on("mcp", [], [], ne=True)
    assert _on("mcp", ["-builtin:mcp"], [], explicit=("mcp",), ne=True)


def test_file_entries_keep_their_own_globs() -> None:
    assert without_builtin_entries(["-builtin:mcp", "!*", "x.py", "+builtin:codemode"]) == ["!*", "x.py"]


def test_only_turning_on_a_builtin_tau_lacks_is_a_problem() -> None:
    assert builtin_entry_problems(["-builtin:nope", "!builtin:*", "builtin:mcp", "builtin:llama.cpp"]) == []
    [problem] = builtin_entry_problems(["builtin:nope"])
    assert "no built-in extension 'nope'" in problem
