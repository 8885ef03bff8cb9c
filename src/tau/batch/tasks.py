"""The task file: one JSON object per line, checked line by line so one bad line stops nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from msgspec import Struct, field

from tau._contained import file_name_problem, shown
from tau.tools.sandbox import SANDBOX_MODES

__all__ = ["MAX_TASK_ID_BYTES", "BatchTask", "TaskProblem", "read_tasks", "task_id_problem"]

MAX_TASK_ID_BYTES = 200
"""A task id names its session file (``<id>.jsonl``) and its scratch folder: this leaves room for both."""

_STRINGS = (
    "id",
    "prompt",
    "cwd",
    "repo",
    "commit",
    "model",
    "thinking",
    "system_prompt",
    "append_system_prompt",
    "setup",
    "check",
    "sandbox",
)
_NUMBERS = ("timeout_s", "max_cost")


class BatchTask(Struct, frozen=True):
    """One line of the task file, validated; ``line`` is its 1-based line number."""

    id: str
    prompt: str
    line: int
    cwd: str | None = None
    repo: str | None = None
    commit: str | None = None
    model: str | None = None
    thinking: str | None = None
    tools: list[str] | None = None
    system_prompt: str | None = None
    append_system_prompt: str | None = None
    max_turns: int | None = None
    timeout_s: float | None = None
    max_cost: float | None = None
    setup: str | None = None
    check: str | None = None
    sandbox: str | None = None
    """The task's ``--sandbox`` mode (over the run's ``--sandbox`` and the ``sandbox`` setting)."""
    extra: dict[str, Any] = field(default_factory=dict)

    def to_wire(self) -> dict[str, Any]:
        """The task as plain JSON for a worker."""
        return {name: getattr(self, name) for name in self.__struct_fields__ if name != "extra"}

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> BatchTask:
        return cls(**data)


class TaskProblem(Struct, frozen=True):
    """A line that cannot run, and why (one line for the user)."""

    line: int
    message: str


def read_tasks(path: Path, *, base: Path) -> Iterator[BatchTask | TaskProblem]:
    """The tasks of ``path`` in order; relative ``cwd``/``repo`` paths are taken from ``base``
    (the task file's folder). A malformed line, a repeated id or a task without a working copy
    is a ``TaskProblem`` and the lines after it still count."""
    seen: set[str] = set()
    with path.open(encoding="utf-8", errors="replace") as lines:
        for number, text in enumerate(lines, start=1):
            if not text.strip():
                continue
            item = _parse_line(text, number, base)
            if isinstance(item, BatchTask):
                if item.id in seen:
                    item = TaskProblem(number, f"task id {item.id!r} is used again (each id must be unique)")
                else:
                    seen.add(item.id)
            yield item


def task_id_problem(task_id: str) -> str | None:
    """Why ``task_id`` cannot name the task's files (``None`` when it can): it becomes one file
    name, so no ``/`` or ``\\``, not ``.`` or ``..``, no control character, at most 200 bytes."""
    problem = file_name_problem(task_id)
    if problem is None and len(task_id.encode("utf-8", "surrogatepass")) > MAX_TASK_ID_BYTES:
        problem = f"is longer than {MAX_TASK_ID_BYTES} bytes"
    if problem is None:
        return None
    return f"task id {shown(task_id)} cannot name the task's files: it {problem}"


def _parse_line(text: str, number: int, base: Path) -> BatchTask | TaskProblem:
    try:
        data = json.loads(text.strip())
    except json.JSONDecodeError as exc:
        return TaskProblem(number, f"not valid JSON ({exc.msg} at column {exc.colno})")
    if not isinstance(data, dict):
        return TaskProblem(number, "a task must be a JSON object")
    task_id = data.get("id")
    if isinstance(task_id, int) and not isinstance(task_id, bool):
        task_id = data["id"] = str(task_id)
    if not isinstance(task_id, str) or not task_id.strip():
        return TaskProblem(number, 'the task has no "id" (a non-empty string)')
    if (problem := task_id_problem(task_id)) is not None:
        return TaskProblem(number, problem)
    label = f"task {task_id!r}"
    for name in _STRINGS:
        if name in data and data[name] is not None and not isinstance(data[name], str):
            return TaskProblem(number, f'{label}: "{name}" must be a string')
    for name in _NUMBERS:
        value = data.get(name)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int | float) or value <= 0
        ):
            return TaskProblem(number, f'{label}: "{name}" must be a positive number')
    max_turns = data.get("max_turns")
    if max_turns is not None and (
        isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < 1
    ):
        return TaskProblem(number, f'{label}: "max_turns" must be a whole number of at least 1')
    tools = data.get("tools")
    if isinstance(tools, str):
        tools = [t.strip() for t in tools.split(",") if t.strip()]
    if tools is not None and (not isinstance(tools, list) or not all(isinstance(t, str) for t in tools)):
        return TaskProblem(number, f'{label}: "tools" must be a list of tool names')
    sandbox = data.get("sandbox")
    if sandbox is not None and sandbox not in SANDBOX_MODES:
        return TaskProblem(number, f'{label}: "sandbox" must be one of {", ".join(SANDBOX_MODES)}')
    if not isinstance(data.get("prompt"), str) or not data["prompt"].strip():
        return TaskProblem(number, f'{label} has no "prompt"')
    cwd, repo, commit = data.get("cwd"), data.get("repo"), data.get("commit")
    if cwd and (repo or commit):
        return TaskProblem(number, f'{label}: give either "cwd" or "repo" + "commit", not both')
    if not cwd and not (repo and commit):
        missing = "commit" if repo else "repo" if commit else 'cwd" or "repo" + "commit'
        return TaskProblem(number, f'{label} has no "{missing}" (the working copy to run in)')
    if cwd:
        cwd = str((base / cwd).resolve())
        if not Path(cwd).is_dir():
            return TaskProblem(number, f"{label}: cwd {cwd} is not a folder")
    if repo and not _looks_remote(repo):
        repo = str((base / repo).resolve())
    known = set(BatchTask.__struct_fields__) - {"line", "extra"}
    return BatchTask(
        id=task_id,
        prompt=data["prompt"],
        line=number,
        cwd=cwd,
        repo=repo,
        commit=commit,
        model=data.get("model"),
        thinking=data.get("thinking"),
        tools=tools,
        system_prompt=data.get("system_prompt"),
        append_system_prompt=data.get("append_system_prompt"),
        max_turns=max_turns,
        timeout_s=data.get("timeout_s"),
        max_cost=data.get("max_cost"),
        setup=data.get("setup"),
        check=data.get("check"),
        sandbox=sandbox,
        extra={k: v for k, v in data.items() if k not in known},
    )


def _looks_remote(repo: str) -> bool:
    return "://" in repo or (":" in repo and not repo.startswith(("/", ".")))
