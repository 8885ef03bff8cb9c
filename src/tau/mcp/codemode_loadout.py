"""How the tools are presented while ``codemode`` is declared (pi's ``codemode.mode`` and
``codemode.inlineBudget`` settings).

- ``on`` (the default): the other declared tools stay declared, each description ending with how a
  script calls it and what the call resolves to.
- ``only``: the other declared tools are hidden from the model (still callable from scripts), and
  the ``codemode`` description lists every tool a script may call with its TypeScript declaration
  and prompt guidelines, as many as fit ``inlineBudget`` estimated tokens (characters / 4); scripts
  find the rest with ``searchTools()``/``ALL_TOOLS``.

Either way the listing (``Nested tools:``, as pi's) has the tools without a namespace first, then
each namespace under a ``## name`` heading; with ``on`` it lists only the tools not of ``direct``
exposure (extension tools of ``codemode`` exposure); ``deferred`` and MCP tools are never listed.

``tool_search`` and other ``model-only`` tools are the model's own and neither change nor hide.
This is the ``codemode`` tool's ``prepare_loadout`` (pi's mechanism, open to any tool), a pure
function of the active tools, so the same tools give the same request bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeAlias

from msgspec import Struct

from tau.agent.tool import AgentTool
from tau.extensions.types import ToolLoadout, ToolLoadoutChanges, ToolNamespace

__all__ = [
    "DEFAULT_INLINE_BUDGET",
    "CodemodeMode",
    "CodemodePresentation",
    "codemode_prepare_loadout",
    "script_returns",
]

CodemodeMode: TypeAlias = Literal["on", "only"]
DEFAULT_INLINE_BUDGET = 3000
_CODEMODE = "codemode"
_CHARS_PER_TOKEN = 4


def script_returns(name: str) -> str:
    """What ``tools.<name>()`` resolves to, as TypeScript."""
    if name == "bash":
        return "{ output: string; truncated: boolean; full_output_path?: string; exit_code: number; wall_time_seconds: number }"
    if name == "read":
        return 'string | { type: "image"; data: string; mimeType: string; note: string }'
    if name.startswith("mcp__"):
        return "CallToolResult"
    return "string"


_RESOLVES_TO = {
    # pi's words: an object's field names, a union's type on one line
    "bash": "`{ output, truncated, full_output_path?, exit_code, wall_time_seconds }`",
    "read": '`string | { data: string; mimeType: string; note: string; type: "image"; }`',
}


def _resolves_to(name: str) -> str:
    if name in _RESOLVES_TO:
        return _RESOLVES_TO[name]
    returns = script_returns(name)
    return "a string" if returns == "string" else f"`{returns}`"


def _section(tool: AgentTool, guidelines: Sequence[str]) -> str:
    from tau.mcp.codemode import declaration

    bullets = [f"- {g.strip()}" for g in guidelines if g.strip()]
    about = tool.description.strip() + ("\n\n" + "\n".join(bullets) if bullets else "")
    code = declaration(tool.name, dict(tool.parameters), script_returns(tool.name)).removeprefix("tools.")
    return f"### `{tool.name}`\n{about}\n\ncodemode tool declaration:\n```ts\ndeclare const tools: {{ {code}; }};\n```"


def _listing(tools: Sequence[AgentTool], loadout: ToolLoadout, budget: int) -> str:
    """The ``Nested tools:`` part, as pi's: the tools without a namespace, then a ``## namespace``
    heading (with its description) over each namespace's tools, by name; a namespace some of whose
    tools did not fit says so in its heading. Which fit ``budget``: in each round every group adds
    its cheapest tool left while that fits (a group whose next one does not fit stops), so every
    namespace is shown before any is complete; within a group the tools keep their order."""
    groups: dict[str, list[tuple[str, str]]] = {"": []}
    namespaces: dict[str, ToolNamespace] = {}
    for tool in tools:
        namespace = loadout.namespace.get(tool.name)
        key = namespace.name if namespace is not None else ""
        if namespace is not None:
            namespaces.setdefault(key, namespace)
        guidelines = loadout.prompt_guidelines.get(tool.name, tool.prompt_guidelines)
        groups.setdefault(key, []).append((tool.name, _section(tool, guidelines)))
    order = ["", *sorted(k for k in groups if k)]
    shown = _fitting([groups[key] for key in order], budget)
    parts = ["Nested tools:"]
    for key in order:
        visible = [text for name, text in groups[key] if name in shown]
        if key:
            listing = (
                ""
                if len(visible) == len(groups[key])
                else " (tools not listed)"
                if not visible
                else " (some tools not listed)"
            )
            about = (namespaces[key].description or "").strip()
            parts.append(f"## {key}{listing}" + (f"\n{about}" if about else ""))
        parts.extend(visible)
    return "\n\n".join(parts)


def _fitting(groups: Sequence[Sequence[tuple[str, str]]], budget: int) -> set[str]:
    """The names of the sections that fit ``budget`` estimated tokens, a round at a time."""
    queues = [sorted(group, key=lambda entry: len(entry[1])) for group in groups if group]
    shown: set[str] = set()
    left = budget
    while queues:
        still: list[list[tuple[str, str]]] = []
        for queue in queues:
            name, text = queue[0]
            cost = -(-len(text) // _CHARS_PER_TOKEN)
            if cost > left:
                continue
            left -= cost
            shown.add(name)
            if len(queue) > 1:
                still.append(queue[1:])
        queues = still
    return shown


class CodemodePresentation(Struct, frozen=True):
    """The ``codemode`` settings: ``mode`` and ``inline_budget`` (pi's ``inlineBudget``)."""

    mode: CodemodeMode = "on"
    inline_budget: int = DEFAULT_INLINE_BUDGET

    @classmethod
    def from_setting(cls, value: Any) -> CodemodePresentation:
        """From the ``codemode`` setting's value (anything not understood keeps the default)."""
        if not isinstance(value, dict):
            return cls()
        budget = value.get("inlineBudget")
        inline_budget = DEFAULT_INLINE_BUDGET
        if isinstance(budget, int | float) and not isinstance(budget, bool) and budget >= 0:
            inline_budget = int(budget)
        return cls("only" if value.get("mode") == "only" else "on", inline_budget)


def codemode_prepare_loadout(
    presentation: CodemodePresentation,
) -> Callable[[ToolLoadout], ToolLoadoutChanges]:
    """The ``codemode`` tool's ``prepare_loadout``: how the declared tools other tools may call are
    shown while it is active (the module docstring). ``model-only`` tools (``tool_search``) stay as
    they are."""

    def prepare(loadout: ToolLoadout) -> ToolLoadoutChanges:
        others = [tool for tool in loadout.declared if tool.name != _CODEMODE and tool.callable_by_tools]
        callable_tools = [tool for tool in loadout.callable if tool.name != _CODEMODE]
        direct = {t.name for t in callable_tools if loadout.exposure.get(t.name, "direct") == "direct"}
        descriptions: dict[str, str] = {}
        if presentation.mode == "only":
            listed, hidden = callable_tools, [t.name for t in others if t.name in direct]
        else:
            # as pi: the declared tools say how scripts call them; the listing has the tools not
            # of ``direct`` exposure (by exposure, so loading one with tool_search changes nothing)
            listed, hidden = [t for t in callable_tools if t.name not in direct], []
            for tool in others:
                descriptions[tool.name] = (
                    f"{tool.description.rstrip()}\n\nCodemode: `tools.{tool.name}(args)` resolves to "
                    f"{_resolves_to(tool.name)}."
                )
        # Never listed, as in pi: deferred tools, and MCP tools (their servers connect late, and
        # the listing must not change then; scripts find them with searchTools()).
        listed = [
            t for t in listed if loadout.exposure.get(t.name) != "deferred" and not t.name.startswith("mcp__")
        ]
        codemode = next((tool for tool in loadout.declared if tool.name == _CODEMODE), None)
        if codemode is not None and listed:
            listing = _listing(listed, loadout, max(presentation.inline_budget, 0))
            descriptions[_CODEMODE] = f"{codemode.description}\n\n{listing}"
        return ToolLoadoutChanges(descriptions=descriptions, hidden_declarations=hidden)

    return prepare
