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
    patch: str = ""
    """The change as a unified patch (``--- path``/``+++ path`` headers, four lines of context), as
    pi 1.6 stores it in an edit's ``details.patch``; empty when no ``path`` was given."""


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


def _lines_with_ends(text: str) -> list[str]:
    """The lines of ``text``, each with its newline (the last one without, when the text has none)."""
    if not text:
        return []
    lines = [line + "\n" for line in text.split("\n")]
    if text.endswith("\n"):
        lines.pop()
    else:
        lines[-1] = lines[-1][:-1]
    return lines


def unified_patch(path: str, old_text: str, new_text: str, context_lines: int = DEFAULT_CONTEXT_LINES) -> str:
    """The unified patch of the change, hunks and headers laid out as jsdiff's
    ``createTwoFilesPatch`` (file headers only) lays them out for pi 1.6: every hunk header with
    both counts, changes closer than twice the context in one hunk, and a ``\\ No newline at end
    of file`` line after a last line without one."""
    runs = [*_line_runs(_lines_with_ends(old_text), _lines_with_ends(new_text)), ("equal", [])]
    hunks: list[tuple[int, int, int, int, list[str]]] = []
    current: list[str] = []
    old_start = new_start = 0
    old_no = new_no = 1
    for index, (kind, lines) in enumerate(runs):
        if kind != "equal":
            if not old_start:
                old_start, new_start = old_no, new_no
                if index > 0 and context_lines > 0:
                    current = [" " + line for line in runs[index - 1][1][-context_lines:]]
                    old_start -= len(current)
                    new_start -= len(current)
            current += [("+" if kind == "added" else "-") + line for line in lines]
            if kind == "added":
                new_no += len(lines)
            else:
                old_no += len(lines)
            continue
        if old_start:
            if len(lines) <= 2 * context_lines and index < len(runs) - 2:
                current += [" " + line for line in lines]
            else:
                size = min(len(lines), context_lines)
                current += [" " + line for line in lines[:size]]
                hunks.append(
                    (old_start, old_no - old_start + size, new_start, new_no - new_start + size, current)
                )
                old_start = new_start = 0
                current = []
        old_no += len(lines)
        new_no += len(lines)
    out = [f"--- {path}", f"+++ {path}"]
    for old_first, old_count, new_first, new_count, hunk_lines in hunks:
        # The unified format's quirk: an empty side names the line before it.
        out.append(
            f"@@ -{old_first - (old_count == 0)},{old_count} +{new_first - (new_count == 0)},{new_count} @@"
        )
        for line in hunk_lines:
            if line.endswith("\n"):
                out.append(line[:-1])
            else:
                out += [line, "\\ No newline at end of file"]
    return "\n".join(out) + "\n"


def generate_diff(
    old_text: str, new_text: str, context_lines: int = DEFAULT_CONTEXT_LINES, *, path: str | None = None
) -> EditDiff:
    """The numbered diff of two versions of a file (and, given ``path``, its unified patch)."""
    width = len(str(max(old_text.count("\n"), new_text.count("\n")) + 1))
    gap = f" {'':>{width}} ..."
    out: list[str] = []
    old_no = new_no = 1
    first_changed: int | None = None
    # Lines compared with their newlines, as jsdiff's diffLines compares them: a last line that
    # gains or loses its newline is a changed line. Shown without it.
    runs = [
        (kind, [line.removesuffix("\n") for line in lines])
        for kind, lines in _line_runs(_lines_with_ends(old_text), _lines_with_ends(new_text))
    ]

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

    patch = unified_patch(path, old_text, new_text, context_lines) if path is not None else ""
    return EditDiff(diff="\n".join(out), first_changed_line=first_changed, patch=patch)
