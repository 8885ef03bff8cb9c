"""The line diff an edit shows: ``+n``/``-n`` changed lines, `` n`` context, ``...`` for gaps.

Lines are numbered (new-file numbers for additions, old-file numbers otherwise) and padded to the
width of the longer file's line count. Up to four context lines surround each change; a longer
unchanged run between changes shows its first and last four around a ``...`` line.
"""

from __future__ import annotations

import difflib
from typing import Literal

from msgspec import Struct

DEFAULT_CONTEXT_LINES = 4

_Kind = Literal["equal", "removed", "added"]


class EditDiff(Struct, frozen=True):
    diff: str
    first_changed_line: int | None
    """New-file line number of the first change."""


def _line_runs(old: list[str], new: list[str]) -> list[tuple[_Kind, list[str]]]:
    """Runs of equal, removed and added lines (removals before additions), like jsdiff's diffLines."""
    # The common head and tail are cut off first: an edit touches a small region of a possibly long
    # file, and SequenceMatcher is quadratic in the worst case.
    head = 0
    limit = min(len(old), len(new))
    while head < limit and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < limit - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    runs: list[tuple[_Kind, list[str]]] = []

    def add(kind: _Kind, lines: list[str]) -> None:
        if not lines:
            return
        if runs and runs[-1][0] == kind:
            runs[-1][1].extend(lines)
        else:
            runs.append((kind, list(lines)))

    add("equal", old[:head])
    old_mid, new_mid = old[head : len(old) - tail], new[head : len(new) - tail]
    matcher = difflib.SequenceMatcher(None, old_mid, new_mid, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            add("equal", old_mid[i1:i2])
        else:
            add("removed", old_mid[i1:i2])
            add("added", new_mid[j1:j2])
    add("equal", old[len(old) - tail :])
    return runs


def generate_diff(old_text: str, new_text: str, context_lines: int = DEFAULT_CONTEXT_LINES) -> EditDiff:
    """The numbered diff of two versions of a file."""
    old_lines = old_text.split("\n")
    new_lines = new_text.split("\n")
    width = len(str(max(len(old_lines), len(new_lines))))
    if old_text.endswith("\n") and new_text.endswith("\n"):
        # The empty string after the final newline is not a line anyone would want to see.
        old_lines, new_lines = old_lines[:-1], new_lines[:-1]
    gap = f" {'':>{width}} ..."
    out: list[str] = []
    old_no = new_no = 1
    first_changed: int | None = None
    runs = _line_runs(old_lines, new_lines)

    for i, (kind, lines) in enumerate(runs):
        if kind == "added":
            first_changed = first_changed or new_no
            for line in lines:
                out.append(f"+{new_no:>{width}} {line}")
                new_no += 1
            continue
        if kind == "removed":
            first_changed = first_changed or new_no
            for line in lines:
                out.append(f"-{old_no:>{width}} {line}")
                old_no += 1
            continue

        after_change = i > 0
        before_change = i < len(runs) - 1
        n = len(lines)
        if after_change and before_change and n > 2 * context_lines:
            shown: list[tuple[int, str] | None] = [
                *enumerate(lines[:context_lines]),
                None,
                *((n - context_lines + k, line) for k, line in enumerate(lines[-context_lines:])),
            ]
        elif after_change and before_change:
            shown = list(enumerate(lines))
        elif before_change:  # leading context
            skip = max(0, n - context_lines)
            shown = [None] if skip else []
            shown += [(skip + k, line) for k, line in enumerate(lines[skip:])]
        elif after_change:  # trailing context
            shown = list(enumerate(lines[:context_lines]))
            if n > context_lines:
                shown.append(None)
        else:
            shown = []
        for item in shown:
            if item is None:
                out.append(gap)
            else:
                offset, line = item
                out.append(f" {old_no + offset:>{width}} {line}")
        old_no += n
        new_no += n

    return EditDiff(diff="\n".join(out), first_changed_line=first_changed)


def _patch_lines(text: str) -> list[str]:
    """The lines of ``text``, each with its ``\\n`` (the last one without, when the text does not end
    with one)."""
    parts = text.split("\n")
    return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def unified_patch(path: str, old_text: str, new_text: str, context_lines: int = DEFAULT_CONTEXT_LINES) -> str:
    """A standard unified patch of the change (pi's ``patch`` detail): ``--- path`` / ``+++ path``,
    then ``@@ -start,count +start,count @@`` hunks with ``context_lines`` lines of context."""
    old, new = _patch_lines(old_text), _patch_lines(new_text)
    # Only the region around the change is compared (the common head and tail cut off first).
    head = 0
    limit = min(len(old), len(new))
    while head < limit and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < limit - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    start = max(0, head - context_lines)
    keep_tail = max(0, tail - context_lines)
    old_part, new_part = old[start : len(old) - keep_tail], new[start : len(new) - keep_tail]
    out = [f"--- {path}\n", f"+++ {path}\n"]

    def emit(mark: str, line: str) -> None:
        out.append(mark + line if line.endswith("\n") else f"{mark}{line}\n\\ No newline at end of file\n")

    matcher = difflib.SequenceMatcher(None, old_part, new_part, autojunk=False)
    for group in matcher.get_grouped_opcodes(context_lines):
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        old_start = start + i1 + (1 if i2 > i1 else 0)  # an empty range names the line before it
        new_start = start + j1 + (1 if j2 > j1 else 0)
        out.append(f"@@ -{old_start},{i2 - i1} +{new_start},{j2 - j1} @@\n")
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                for line in old_part[a1:a2]:
                    emit(" ", line)
                continue
            for line in old_part[a1:a2]:
                emit("-", line)
            for line in new_part[b1:b2]:
                emit("+", line)
    return "".join(out)
