"""Agent definitions: ``agents/<name>.md`` files the ``task`` tool hands sub-tasks to (issue #35).

A definition is markdown with frontmatter, as pi's sub-agent example and Claude Code write them::

    ---
    name: scout
    description: Fast codebase recon that returns compressed context
    tools: read, grep, find, ls      # or a YAML list; Claude Code's "Read, Grep" works too
    model: anthropic/claude-haiku-4-5
    thinking: low
    ---
    You are a scout. ...

The body is the child's instructions. The user's definitions live in ``<agent dir>/agents``; a
trusted project's in ``.tau/agents`` and ``.pi/agents`` (and Claude Code's ``.claude/agents``), the
project's winning over the user's of the same name, ``.tau`` over ``.pi`` over ``.claude``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, TypeAlias

from msgspec import Struct, field

from tau.context._frontmatter import FrontmatterError, parse_frontmatter
from tau.context.diagnostics import ResourceDiagnostic
from tau.context.project_dirs import project_dirs

__all__ = [
    "AgentDefinition",
    "AgentSource",
    "LoadAgentsResult",
    "agent_definition_dirs",
    "load_agent_definition",
    "load_agent_definitions",
]

AgentSource: TypeAlias = Literal["user", "project"]

CLAUDE_PROJECT_DIR_NAME = ".claude"


class AgentDefinition(Struct, frozen=True):
    """One loaded definition; ``tools`` is ``None`` when the file names none (the parent's apply)."""

    name: str
    description: str
    prompt: str
    file_path: str
    source: AgentSource
    tools: list[str] | None = None
    model: str | None = None
    thinking: str | None = None


class LoadAgentsResult(Struct):
    agents: list[AgentDefinition] = field(default_factory=list)
    diagnostics: list[ResourceDiagnostic] = field(default_factory=list)


def agent_definition_dirs(
    cwd: str, agent_dir: str, *, project_trusted: bool
) -> list[tuple[str, AgentSource]]:
    """Where definitions are read, the one that wins first."""
    found: list[tuple[str, AgentSource]] = []
    if project_trusted:
        folders = [*project_dirs(cwd), os.path.join(os.path.abspath(cwd), CLAUDE_PROJECT_DIR_NAME)]
        found += [(os.path.join(folder, "agents"), "project") for folder in folders]
    found.append((os.path.join(agent_dir, "agents"), "user"))
    return found


def load_agent_definition(
    path: str, source: AgentSource
) -> tuple[AgentDefinition | None, list[ResourceDiagnostic]]:
    """One file; a file without a description or with bad frontmatter is skipped with a warning."""
    try:
        with open(path, encoding="utf-8") as f:
            frontmatter, body = parse_frontmatter(f.read())
    except (OSError, UnicodeDecodeError, FrontmatterError) as exc:
        return None, [ResourceDiagnostic("warning", f"agent definition not loaded: {exc}", path)]
    name = _text(frontmatter.get("name")) or Path(path).stem
    description = _text(frontmatter.get("description"))
    if not description:
        return None, [
            ResourceDiagnostic("warning", "agent definition not loaded: it has no description", path)
        ]
    definition = AgentDefinition(
        name=name,
        description=description,
        prompt=body.strip(),
        file_path=path,
        source=source,
        tools=_tool_names(frontmatter.get("tools")),
        model=_text(frontmatter.get("model")),
        thinking=_text(frontmatter.get("thinking")),
    )
    return definition, []


def load_agent_definitions(folders: Sequence[tuple[str, AgentSource]]) -> LoadAgentsResult:
    """Every ``*.md`` of ``folders`` (in precedence order): the first definition of a name wins."""
    result = LoadAgentsResult()
    taken: set[str] = set()
    for folder, source in folders:
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        for entry in names:
            path = os.path.join(folder, entry)
            if not entry.endswith(".md") or not os.path.isfile(path):
                continue
            definition, problems = load_agent_definition(path, source)
            result.diagnostics += problems
            if definition is not None and definition.name not in taken:
                taken.add(definition.name)
                result.agents.append(definition)
    return result


def _text(value: Any) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def _tool_names(value: Any) -> list[str] | None:
    """``read, bash`` or ``[read, bash]``; Claude Code's capitalised names (``Read``) as tau's."""
    raw = value.split(",") if isinstance(value, str) else value if isinstance(value, list) else []
    names = [item.strip().lower() for item in raw if isinstance(item, str) and item.strip()]
    return names or None
