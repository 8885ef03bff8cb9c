"""Tool lists as ``--tools``, ``--exclude-tools`` and the ``defaultTools`` setting write them (pi 1.6).

A list is either an allowlist of names and ``*`` patterns, or only ``+name`` / ``-name`` entries that
change the default selection (read, bash, edit, write, or what ``defaultTools`` says). Mixing the two
kinds is refused: it would be unclear whether the list replaces the defaults or edits them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

__all__ = [
    "apply_tool_modifiers",
    "is_mcp_tool_name",
    "is_tool_modifier",
    "merge_default_tools",
    "resolve_default_tools",
    "tool_list_error",
    "tool_name_matcher",
]


MCP_RESOURCE_TOOLS = frozenset({"list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource"})


def is_mcp_tool_name(name: str) -> bool:
    """Whether ``name`` is an MCP tool (``mcp__<server>__<tool>`` or a resource tool): a ``--tools``
    list filters those only once one of its entries starts with ``mcp__``, as in pi."""
    return name.startswith("mcp__") or name in MCP_RESOURCE_TOOLS


def is_tool_modifier(entry: object) -> bool:
    """Whether ``entry`` is a ``+name`` or ``-name`` entry."""
    return isinstance(entry, str) and entry.startswith(("+", "-"))


def tool_list_error(entries: Sequence[str]) -> str | None:
    """What is wrong with a tool list, or ``None`` when it is usable."""
    modifiers = [entry for entry in entries if is_tool_modifier(entry)]
    if not modifiers:
        return None
    if len(modifiers) < len(entries):
        return "use either tool names and patterns, or only +name/-name entries, not both"
    pattern = next((entry for entry in modifiers if "*" in entry), None)
    if pattern is not None:
        return f"+name/-name entries take exact tool names, not patterns: {pattern}"
    return None


def apply_tool_modifiers(base: Iterable[str], entries: Iterable[str]) -> list[str]:
    """``base`` with each ``+name`` added and each ``-name`` removed, in list order."""
    tools = list(base)
    for entry in entries:
        if not is_tool_modifier(entry) or len(entry) < 2:
            continue
        name = entry[1:]
        if entry.startswith("+") and name not in tools:
            tools.append(name)
        elif entry.startswith("-") and name in tools:
            tools.remove(name)
    return tools


def tool_name_matcher(entries: Iterable[str]) -> Callable[[str], bool]:
    """Whether a tool name is one of ``entries``: exact names, or patterns where ``*`` is any text."""
    names: set[str] = set()
    patterns: list[re.Pattern[str]] = []
    for entry in entries:
        if "*" in entry:
            patterns.append(re.compile(".*".join(re.escape(part) for part in entry.split("*"))))
        else:
            names.add(entry)
    return lambda name: name in names or any(p.fullmatch(name) for p in patterns)


def merge_default_tools(base: Any, override: Any) -> Any:
    """``defaultTools`` of a settings layer over the one below: a list of only ``+``/``-`` entries
    edits the inherited list (so it is appended); any other value replaces it."""
    if (
        isinstance(base, list)
        and isinstance(override, list)
        and override
        and all(is_tool_modifier(entry) for entry in override)
    ):
        return [*base, *override]
    return override


def resolve_default_tools(entries: Sequence[Any]) -> list[str]:
    """The tools a merged ``defaultTools`` list selects: its plain names (or, with none, the built-in
    defaults), then its ``+``/``-`` entries applied. An empty list selects nothing."""
    from tau.tools import CODING_TOOL_NAMES  # not at import: the settings module loads this one

    strings = [entry for entry in entries if isinstance(entry, str)]
    plain = [entry for entry in strings if not is_tool_modifier(entry)]
    base = plain if plain or not strings else list(CODING_TOOL_NAMES)
    return apply_tool_modifiers(base, strings)
