"""How the tools are presented while ``codemode`` is declared (pi's ``codemode.mode`` and
``codemode.inlineBudget`` settings).

- ``on`` (the default): the other declared tools stay declared, each description ending with how a
  script calls it and what the call resolves to.
- ``only``: the other declared tools are hidden from the model (still callable from scripts), and
  the ``codemode`` description lists them with their TypeScript declarations and prompt guidelines,
  as many as fit ``inlineBudget`` estimated tokens (characters / 4); scripts find the rest with
  ``searchTools()``/``ALL_TOOLS``.

``tool_search`` and other ``model-only`` tools are the model's own and neither change nor hide.
This is the ``codemode`` tool's ``prepare_loadout`` (pi's mechanism, open to any tool), a pure
function of the active tools, so the same tools give the same request bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeAlias

from msgspec import Struct

from tau.agent.tool import AgentTool
from tau.extensions.types import ToolLoadout, ToolLoadoutChanges

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


def _section(tool: AgentTool) -> str:
    from tau.mcp.codemode import declaration

    bullets = [f"- {g.strip()}" for g in tool.prompt_guidelines if g.strip()]
    about = tool.description.strip() + ("\n\n" + "\n".join(bullets) if bullets else "")
    code = declaration(tool.name, dict(tool.parameters), script_returns(tool.name))
    return f"### `{tool.name}`\n{about}\n\n```ts\n{code}\n```"


def _listing(tools: Sequence[AgentTool], budget: int) -> str:
    """The ``Nested tools:`` part: the cheapest sections first while they fit, in the tools' order."""
    sections = {tool.name: _section(tool) for tool in tools}
    shown: set[str] = set()
    left = budget
    for name, text in sorted(sections.items(), key=lambda item: len(item[1])):
        cost = -(-len(text) // _CHARS_PER_TOKEN)
        if cost > left:
            break
        shown.add(name)
        left -= cost
    listed = [sections[t.name] for t in tools if t.name in shown]
    head = (
        "Nested tools:"
        if len(listed) == len(tools)
        else "Nested tools (some not listed; find them with searchTools() or ALL_TOOLS):"
    )
    return "\n\n".join([head, *listed])


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
        if presentation.mode == "only":
            codemode = next((tool for tool in loadout.declared if tool.name == _CODEMODE), None)
            descriptions: dict[str, str] = {}
            if codemode is not None and others:
                listing = _listing(others, max(presentation.inline_budget, 0))
                descriptions[_CODEMODE] = f"{codemode.description}\n\n{listing}"
            return ToolLoadoutChanges(descriptions=descriptions, hidden_declarations=[t.name for t in others])
        return ToolLoadoutChanges(
            descriptions={
                tool.name: f"{tool.description.rstrip()}\n\nCodemode: `tools.{tool.name}(args)` resolves to "
                f"{_resolves_to(tool.name)}."
                for tool in others
            }
        )

    return prepare
