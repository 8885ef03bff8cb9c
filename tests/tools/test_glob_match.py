"""Tests for tau.tools.glob_match: fd's glob rules."""

from __future__ import annotations

import pytest

from tau.tools.glob_match import compile_glob


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("*.ts", "a.ts", True),
        ("*.ts", "dir/a.ts", False),
        ("**/*.ts", "a.ts", True),
        ("**/*.ts", "x/y/a.ts", True),
        ("src/**/*.spec.ts", "src/a/b/c.spec.ts", True),
        ("src/**/*.spec.ts", "src/c.spec.ts", True),
        ("src/**/*.spec.ts", "lib/c.spec.ts", False),
        ("a?c", "abc", True),
        ("a?c", "a/c", False),
        ("[ab]x", "bx", True),
        ("[!ab]x", "cx", True),
        ("[!ab]x", "ax", False),
        ("*.{js,ts}", "m.ts", True),
        ("*.{js,ts}", "m.py", False),
        ("file\\*", "file*", True),
        ("file\\*", "fileX", False),
        ("src/**", "src/a/b", True),
        ("*.md", "README.MD", True),  # smart case: all lower case matches any case
        ("*.MD", "readme.md", False),
    ],
)
def test_glob_matches_like_fd(pattern: str, path: str, matches: bool) -> None:
    assert (compile_glob(pattern).fullmatch(path) is not None) is matches
