"""HTML export of a 2.4 MB session: wall time in-process and as ``tau --export``, and page size.

The session is generated: turns of user prompts, assistant markdown with code and thinking, file
reads (tau's own source files), pytest-like bash output, grep results, edits with their diffs and
file writes, three side branches and a compaction. Reported: the median wall seconds of
``export_session_html`` (warm, in-process) and of the whole ``tau --export`` command (Python
start-up included), and the size of the page relative to the session file.
"""

from __future__ import annotations

import itertools
import random
import sys
import tempfile
import time
from pathlib import Path

from _common import PYTHON, Figure, median, time_command
from tau.ai.types import (
    AssistantMessage,
    Cost,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from tau.export import export_session_html
from tau.session import IdSource, SessionManager
from tau.tools.edit_diff import generate_diff

TARGET_BYTES = 2_400_000
SOURCES = sorted((Path(__file__).resolve().parent.parent / "src" / "tau").rglob("*.py"))

REPLY = """I looked at `{path}`. The problem is in how the entries are indexed:

1. the parent map is rebuilt on every append;
2. labels are replayed twice.

```python
{code}
```

With this change the lookup stays **O(1)** per entry. See [the docs](https://example.com/docs) for
the format, and run the tests again with `pytest -q`.
"""


def _assistant(*blocks: TextContent | ThinkingContent | ToolCall) -> AssistantMessage:
    return AssistantMessage(
        content=list(blocks),
        api="anthropic-messages",
        provider="anthropic",
        model="claude-sonnet-4-5",
        usage=Usage(4200, 350, 3100, 120, 7770, Cost(total=0.0187)),
        stop_reason="toolUse" if any(isinstance(b, ToolCall) for b in blocks) else "stop",
    )


def _result(call_id: str, name: str, text: str, details: object = None) -> ToolResultMessage:
    return ToolResultMessage(call_id, name, [TextContent(text)], details=details)


def _bash_output(rng: random.Random) -> str:
    lines = [
        f"tests/test_mod_{rng.randrange(40)}.py::test_case_{n} PASSED" for n in range(rng.randrange(20, 90))
    ]
    return "\n".join([*lines, f"==== {len(lines)} passed in {rng.uniform(0.5, 9):.2f}s ===="])


def build_session(folder: Path, seed: int = 7) -> Path:
    """A session file of about ``TARGET_BYTES``."""
    rng = random.Random(seed)
    counter = itertools.count()
    clock = itertools.count(1_767_225_600_000, 1500)
    ids = IdSource(clock=lambda: next(clock), random_uuid=lambda: f"{rng.getrandbits(128):032x}")
    manager = SessionManager.create(str(folder / "project"), str(folder / "sessions"), ids=ids)
    manager.append_model_change("anthropic", "claude-sonnet-4-5")
    path = Path(manager.get_session_file() or "")
    branch_points: list[str] = []
    for turn in itertools.count():
        if path.exists() and path.stat().st_size >= TARGET_BYTES:
            break
        source = rng.choice(SOURCES)
        code = source.read_text(encoding="utf-8")
        rel = str(source.relative_to(SOURCES[0].parents[2]))
        user = manager.append_message(
            UserMessage(f"Step {turn}: please look at `{rel}` and fix the failing test.")
        )
        branch_points.append(user)
        calls = [
            ToolCall(f"c{next(counter)}", "read", {"path": rel}),
            ToolCall(f"c{next(counter)}", "bash", {"command": "pytest -q tests/session"}),
            ToolCall(f"c{next(counter)}", "grep", {"pattern": "def ", "path": rel}),
        ]
        manager.append_message(_assistant(ThinkingContent("Let me read the module first. " * 8), *calls))
        manager.append_message(_result(calls[0].id, "read", code))
        manager.append_message(_result(calls[1].id, "bash", _bash_output(rng)))
        greps = [f"{rel}:{n}: {line}" for n, line in enumerate(code.splitlines(), 1) if "def " in line]
        manager.append_message(_result(calls[2].id, "grep", "\n".join(greps)))
        lines = code.splitlines()
        start = rng.randrange(max(1, len(lines) - 12))
        old = "\n".join(lines[start : start + 6])
        new = old.replace("self", "this", 1) + "\n    # checked"
        edit = ToolCall(
            f"c{next(counter)}", "edit", {"path": rel, "edits": [{"oldText": old, "newText": new}]}
        )
        write = ToolCall(
            f"c{next(counter)}", "write", {"path": f"notes/step_{turn}.md", "content": REPLY[:300]}
        )
        manager.append_message(_assistant(TextContent("Making the change."), edit, write))
        diff = generate_diff(code, code.replace(old, new, 1))
        details = {"diff": diff.diff, "firstChangedLine": diff.first_changed_line}
        manager.append_message(
            _result(edit.id, "edit", f"Successfully replaced 1 block(s) in {rel}.", details)
        )
        manager.append_message(
            _result(write.id, "write", f"Successfully wrote 300 bytes to notes/step_{turn}.md")
        )
        snippet = "\n".join(lines[start : start + 14])
        manager.append_message(_assistant(TextContent(REPLY.format(path=rel, code=snippet))))
        if turn in (20, 40, 60):  # a side branch from an earlier prompt
            manager.branch(branch_points[turn // 2])
            manager.append_message(UserMessage("Try a different approach instead."))
            manager.append_message(_assistant(TextContent(REPLY.format(path=rel, code=snippet))))
            manager.branch(manager.get_entries()[-3].id)
        if turn == 30:
            manager.append_compaction("## Goal\nFix the tests.\n\n## Progress\n- many edits\n", user, 120_000)
    return path


def run(repeat: int) -> list[Figure]:
    with tempfile.TemporaryDirectory() as folder:
        session = build_session(Path(folder))
        out = Path(folder) / "out.html"
        export_session_html(session, out)  # imports and lexers loaded once, as in a running tau
        walls = []
        for _ in range(repeat):
            started = time.perf_counter()
            export_session_html(session, out)
            walls.append(time.perf_counter() - started)
        command_s, _ = time_command([PYTHON, "-m", "tau", "--export", str(session), str(out)], repeat)
        size_mb = session.stat().st_size / 1_000_000
        ratio = out.stat().st_size / session.stat().st_size
        entries = sum(1 for _ in session.open(encoding="utf-8")) - 1
    return [
        Figure(f"export: {size_mb:.1f} MB, {entries} entries, in-process", median(walls), "s", "≤ 1 s"),
        Figure("export: `tau --export` command, start-up included", command_s, "s", "≤ 1 s"),
        Figure("export: page size / session size", ratio, "×", "≤ 2"),
    ]


if __name__ == "__main__":
    for figure in run(int(sys.argv[1]) if len(sys.argv) > 1 else 3):
        print(figure)
