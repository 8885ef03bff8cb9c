"""Prompt templates: ``prompts/<name>.md`` files the user invokes as ``/<name> args``."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal, TypeAlias

from msgspec import Struct, field

from tau.context._frontmatter import FrontmatterError, parse_frontmatter, split_frontmatter
from tau.context.diagnostics import ResourceCollision, ResourceDiagnostic
from tau.context.project_dirs import project_dirs
from tau.context.settings_entries import SettingsEntries

TemplateSource: TypeAlias = Literal["path", "project", "user"]

MAX_DESCRIPTION_FROM_BODY = 60

# One pass over the template, so a substituted value is never scanned again.
_PLACEHOLDER = r"\$\{@:(\d+)(?::(\d+))?\}|\$ARGUMENTS|\$@|\$(\d+)"


class PromptTemplate(Struct, frozen=True):
    """A loaded template; ``content`` is the file's body without frontmatter."""

    name: str
    description: str
    content: str
    file_path: str
    source: TemplateSource
    argument_hint: str | None = None


class LoadPromptTemplatesResult(Struct):
    templates: list[PromptTemplate] = field(default_factory=list)
    diagnostics: list[ResourceDiagnostic] = field(default_factory=list)


def load_prompt_template(
    path: str, source: TemplateSource
) -> tuple[PromptTemplate | None, list[ResourceDiagnostic]]:
    """One template file. Its description is the frontmatter's, else the body's first non-empty line."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        frontmatter, body = parse_frontmatter(text)
    except (OSError, UnicodeDecodeError, FrontmatterError) as exc:
        return None, [ResourceDiagnostic("warning", f"prompt template not loaded: {exc}", path)]
    # As pi 1.6: a body after frontmatter is trimmed; a file without any is used as it is.
    content = body.strip() if split_frontmatter(text)[0] is not None else body
    description = frontmatter.get("description")
    if not isinstance(description, str) or not description.strip():
        description = _first_line_summary(body)
    hint = frontmatter.get("argument-hint")
    template = PromptTemplate(
        name=Path(path).stem,
        description=description.strip(),
        content=content,
        file_path=path,
        source=source,
        argument_hint=str(hint) if hint is not None else None,
    )
    return template, []


def _first_line_summary(body: str) -> str:
    line = next((ln.strip() for ln in body.splitlines() if ln.strip()), "")
    if len(line) > MAX_DESCRIPTION_FROM_BODY:
        return line[:MAX_DESCRIPTION_FROM_BODY] + "..."
    return line


def load_prompt_templates(
    *,
    cwd: str,
    agent_dir: str,
    template_paths: Sequence[str] = (),
    include_defaults: bool = True,
    project_entries: SettingsEntries | None = None,
    user_entries: SettingsEntries | None = None,
    include_project: bool = True,
) -> LoadPromptTemplatesResult:
    """Templates from explicit paths, then the project's (its settings' ``prompts`` paths, then
    ``<cwd>/.tau/prompts``, then pi's ``<cwd>/.pi/prompts``), then the user's (its settings' paths, then ``<agent_dir>/prompts``).

    Folders are read without recursion, ``*.md`` only, in name order. Each scope's settings entries
    also switch off (and on) what is found in that scope. A file reached twice loads once; the first
    template of a name wins, and a later one gives a ``collision`` diagnostic.
    ``include_project=False`` (a folder not trusted) leaves the project scope out.
    """
    result = LoadPromptTemplatesResult()
    found: list[tuple[str, TemplateSource]] = []
    for raw in template_paths:
        path = os.path.abspath(os.path.join(cwd, os.path.expanduser(raw.strip())))
        found += [(p, "path") for p in _template_files(path, result.diagnostics)]
    if include_defaults:
        folders = project_dirs(cwd)
        agent = os.path.abspath(agent_dir)
        scopes: list[tuple[TemplateSource, SettingsEntries, list[str]]] = [
            ("project", project_entries or SettingsEntries(folders[0]), folders),
            ("user", user_entries or SettingsEntries(agent), [agent]),
        ]
        for source, entries, bases in scopes:
            if source == "project" and not include_project:
                continue
            for path in entries.paths:
                found += [
                    (p, source) for p in _template_files(path, result.diagnostics) if entries.enables(p)
                ]
            for base in bases:
                discovered = _markdown_files(os.path.join(base, "prompts"))
                found += [(p, source) for p in discovered if entries.enables(p, base)]

    by_name: dict[str, PromptTemplate] = {}
    seen: set[str] = set()
    for path, source in found:
        real = os.path.realpath(path)
        if real in seen:  # one file reached twice (a settings path naming a discovered folder)
            continue
        seen.add(real)
        template, diagnostics = load_prompt_template(path, source)
        result.diagnostics += diagnostics
        if template is None:
            continue
        winner = by_name.setdefault(template.name, template)
        if winner is not template:
            collision = ResourceCollision("prompt", template.name, winner.file_path, path)
            message = f'prompt template name "/{template.name}" already taken'
            result.diagnostics.append(ResourceDiagnostic("collision", message, path, collision))
    result.templates = list(by_name.values())
    return result


def _template_files(path: str, diagnostics: list[ResourceDiagnostic]) -> list[str]:
    """The templates a path names: the file itself, or a folder's ``*.md`` files."""
    if os.path.isdir(path):
        return _markdown_files(path)
    if os.path.isfile(path) and path.endswith(".md"):
        return [path]
    diagnostics.append(ResourceDiagnostic("warning", "prompt template path not found", path))
    return []


def _markdown_files(folder: str) -> list[str]:
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    return [p for p in (os.path.join(folder, n) for n in names if n.endswith(".md")) if os.path.isfile(p)]


def parse_command_args(text: str) -> list[str]:
    """Shell-like words: whitespace separates, ``'…'`` and ``"…"`` group (quotes dropped, no escapes)."""
    args: list[str] = []
    current: list[str] = []
    quote: str | None = None
    for char in text:
        if quote is not None:
            if char == quote:
                quote = None
            else:
                current.append(char)
        elif char in "'\"":
            quote = char
        elif char.isspace():
            if current:
                args.append("".join(current))
                current = []
        else:
            current.append(char)
    if current:
        args.append("".join(current))
    return args


def substitute_arguments(content: str, args: Sequence[str]) -> str:
    """Fill ``$1``…``$N`` (missing → empty), ``${@:N}`` / ``${@:N:L}`` (1-based slice, 0 counts as 1),
    ``$ARGUMENTS`` and ``$@`` (all args joined by spaces)."""

    def replace(match: re.Match[str]) -> str:
        start, length, index = match.group(1), match.group(2), match.group(3)
        if index is not None:
            n = int(index)
            return args[n - 1] if 1 <= n <= len(args) else ""
        if start is not None:
            first = max(int(start), 1) - 1
            chosen = args[first:] if length is None else args[first : first + int(length)]
            return " ".join(chosen)
        return " ".join(args)

    return re.sub(_PLACEHOLDER, replace, content)


def expand_prompt_template(text: str, templates: Iterable[PromptTemplate]) -> str:
    """``/<name> args`` replaced by that template with the args filled in; any other text unchanged."""
    if not text.startswith("/"):
        return text
    head = re.match(r"/(\S+)", text)
    if head is None:
        return text
    template = next((t for t in templates if t.name == head.group(1)), None)
    if template is None:
        return text
    return substitute_arguments(template.content, parse_command_args(text[head.end() :]))
