"""Which tools a session has, which of them are active, and the base system prompt they imply.

The registry holds the built-in tools, overlaid by extension tools and then SDK custom tools (a tool
with a built-in name replaces it). An allowlist (``tools=[...]``, names or ``*`` patterns) limits the
registry itself, so only matching names can ever be activated; an exclusion list removes its matches. The base system prompt is rebuilt only when the active set changes,
from the resource loader's current state (no disk access) and a fixed date, so it stays
byte-identical through a session and provider prompt caches keep hitting.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Literal, TypeAlias

from msgspec.structs import replace

from tau.agent.tool import CALLABLE_WHEN_INACTIVE, AgentTool
from tau.config.tool_selection import is_mcp_tool_name, tool_name_matcher
from tau.context.resources import ResourceLoader
from tau.context.system_prompt import SystemPromptOptions, build_system_prompt
from tau.tools import (
    CODING_TOOL_NAMES,
    SessionEnvironment,
    SpillDirectory,
    create_bash_tool,
    create_edit_tool,
    create_find_tool,
    create_grep_tool,
    create_ls_tool,
    create_read_tool,
    create_write_tool,
)
from tau.tools.images import ImageLimits
from tau.tools.sandbox import Sandbox

if TYPE_CHECKING:
    from tau.extensions.types import ToolLoadout, ToolLoadoutChanges, ToolNamespace

    LoadoutPreparer: TypeAlias = Callable[[ToolLoadout], ToolLoadoutChanges | None]

__all__ = ["NoTools", "ToolRegistry", "create_builtin_tools"]

_ACTIVATED = frozenset({"direct", "model-only"})

NoTools: TypeAlias = Literal["all", "builtin"]


def create_builtin_tools(
    cwd: str,
    *,
    spill: SpillDirectory,
    shell_path: str | None = None,
    shell_command_prefix: str | None = None,
    session_env: SessionEnvironment | None = None,
    sandbox: Sandbox | None = None,
    auto_resize_images: Callable[[], bool] | None = None,
    image_limits: Callable[[], ImageLimits] | None = None,
) -> list[AgentTool]:
    """Every built-in tool for ``cwd``, in pi's order: read, bash, edit, write, grep, find, ls.
    ``session_env``: the session's variables for bash commands (``tau.runtime.shell_environment``);
    ``sandbox`` fences bash and keeps edit and write to the folders it lets be written;
    ``auto_resize_images`` (asked per read) is the ``images.autoResize`` setting and
    ``image_limits`` (asked per read) the current model's image limits."""
    return [
        create_read_tool(cwd, auto_resize_images=auto_resize_images or True, image_limits=image_limits),
        create_bash_tool(
            cwd,
            spill=spill,
            shell_path=shell_path,
            command_prefix=shell_command_prefix,
            session_env=session_env,
            sandbox=sandbox,
        ),
        create_edit_tool(cwd, sandbox=sandbox),
        create_write_tool(cwd, sandbox=sandbox),
        create_grep_tool(cwd),
        create_find_tool(cwd),
        create_ls_tool(cwd),
    ]


class ToolRegistry:
    """The session's tools by name, the active subset, and the base system prompt built from it.

    Built-ins are overlaid by extension tools, then by SDK custom tools: a later tool with a
    taken name replaces the earlier one. Extension tools change at run time (a registration in a
    handler, a reload): ``set_extension_tools`` rebuilds the overlay."""

    def __init__(
        self,
        builtin: Sequence[AgentTool],
        custom: Sequence[AgentTool] = (),
        *,
        extension: Sequence[AgentTool] = (),
        allowlist: Sequence[str] | None = None,
        no_tools: NoTools | None = None,
        exclude: Sequence[str] = (),
        defaults: Sequence[str] = CODING_TOOL_NAMES,
        inactive: Collection[str] = (),
    ) -> None:
        """``defaults``: the built-in names active without an allowlist (the ``defaultTools`` setting);
        ``inactive``: extension tools registered inactive (only a name in ``defaults`` or the
        allowlist activates one)."""
        if no_tools == "all":
            allowlist = []
        self._builtin = list(builtin)
        self._custom = list(custom)
        self._extension = list(extension)
        self._allowlist = list(allowlist) if allowlist is not None else None
        self._allowed = tool_name_matcher(self._allowlist) if self._allowlist is not None else None
        # As in pi, an allowlist filters MCP tools only once one of its entries names them.
        self._filters_mcp = any(entry.startswith("mcp__") for entry in self._allowlist or ())
        self._excluded = tool_name_matcher(exclude) if exclude else None
        self._tools = self._overlay(extension)
        # Only direct and model-only tools are activated by being there (pi's exposure rule).
        inactive = {*inactive, *(t.name for t in (*extension, *custom) if t.exposure not in _ACTIVATED)}
        added = [t.name for t in (*extension, *custom) if t.name in self._tools and t.name not in inactive]
        if self._allowlist is not None:
            # Named tools first, in the list's order; then every other one a pattern matches. As in
            # pi, matching a pattern (``--tools '*'``) activates a declarable tool registered
            # inactive too (``codemode``, ``tool_search``).
            allowed = self._allowed
            initial = [
                *self._allowlist,
                *(
                    name
                    for name, tool in self._tools.items()
                    if name not in inactive
                    or (tool.exposure in _ACTIVATED and allowed is not None and allowed(name))
                ),
            ]
        elif no_tools == "builtin":
            initial = added
        else:
            initial = [*defaults, *added]
        self._active: list[str] = self._known(initial)
        self._preparers: dict[str, LoadoutPreparer] = {}
        self._namespaces: dict[str, ToolNamespace] = {}
        self._generation = 0
        self._cached: tuple[object, dict[str, AgentTool], tuple[list[AgentTool], list[AgentTool]]] | None = (
            None
        )
        self.on_loadout_error: Callable[[str, str], None] | None = None
        """Told ``(tool name, problem)`` when a tool's ``prepare_loadout`` raises (its changes are
        then left out)."""

    def _overlay(self, extension: Sequence[AgentTool]) -> dict[str, AgentTool]:
        tools: dict[str, AgentTool] = {t.name: t for t in self._builtin}
        tools.update((t.name, t) for t in extension)
        tools.update((t.name, t) for t in self._custom)
        return {name: tool for name, tool in tools.items() if self._is_allowed(name)}

    def _is_allowed(self, name: str) -> bool:
        if self._excluded is not None and self._excluded(name):
            return False
        if self._allowed is None or (not self._filters_mcp and is_mcp_tool_name(name)):
            return True
        return self._allowed(name)

    def allowlist_selects(self, name: str) -> bool:
        """Whether the allowlist names or matches ``name`` (``True`` without one)."""
        return self._allowed is None or self._allowed(name)

    @property
    def has_allowlist(self) -> bool:
        """Whether ``tools=[...]`` limits the registry (new tools are then never activated by themselves)."""
        return self._allowlist is not None

    def set_tool_metadata(
        self, preparers: Mapping[str, LoadoutPreparer], namespaces: Mapping[str, ToolNamespace]
    ) -> None:
        """The extension tools' ``prepare_loadout`` hooks and ``namespace``s, by tool name."""
        self._preparers = dict(preparers)
        self._namespaces = dict(namespaces)
        self._generation += 1

    def set_extension_tools(self, extension: Sequence[AgentTool]) -> list[str]:
        """Replace the extension tools; returns the names that were not registered before.
        Active names whose tool is gone are deactivated."""
        before = set(self._tools)
        self._extension = list(extension)
        self._tools = self._overlay(extension)
        self._active = self._known(self._active)
        return [name for name in self._tools if name not in before]

    def replace_builtin(self, name: str, change: Callable[[AgentTool], AgentTool]) -> None:
        """Put ``change(tool)`` in place of the built-in tool ``name`` (the bash tool declared for a new
        sandbox mode); an extension or SDK tool of that name still overlays it. Nothing without one."""
        for index, tool in enumerate(self._builtin):
            if tool.name == name:
                changed = change(tool)
                if changed is not tool:
                    self._builtin[index] = changed
                    self._tools = self._overlay(self._extension)
                return

    def _known(self, names: Iterable[str]) -> list[str]:
        """``names`` that are registered and not ``hidden``, each once, in the given order."""
        tools = self._tools
        return list(dict.fromkeys(n for n in names if n in tools and tools[n].exposure != "hidden"))

    @property
    def names(self) -> list[str]:
        """Every registered tool name."""
        return list(self._tools)

    @property
    def active_names(self) -> list[str]:
        return list(self._active)

    @property
    def active_tools(self) -> list[AgentTool]:
        """The tools declared to the model, as the active tools' ``prepare_loadout`` hooks show them."""
        return self._loadout()[0]

    @property
    def callable_tools(self) -> list[AgentTool]:
        """The tools other tools may call that are not declared to the model: active ones a loadout
        hides, then every registered ``codemode``/``deferred`` tool that is not active."""
        hidden = self._loadout()[1]
        active = set(self._active)
        return [
            *hidden,
            *(
                tool
                for name, tool in self._tools.items()
                if name not in active and tool.exposure in CALLABLE_WHEN_INACTIVE
            ),
        ]

    def _loadout(self) -> tuple[list[AgentTool], list[AgentTool]]:
        """The tools declared to the model and the active ones hidden from it, as the
        ``prepare_loadout`` hooks of the active tools (``codemode``'s among them) change them
        (computed once per active set)."""
        key = (tuple(self._active), self._generation)
        if self._cached is not None and self._cached[0] == key and self._cached[1] is self._tools:
            return self._cached[2]
        active = [self._tools[name] for name in self._active]
        declared: list[AgentTool] = active
        hidden: list[AgentTool] = []
        preparers = [(name, self._preparers[name]) for name in self._active if name in self._preparers]
        if preparers:
            declared, hidden = self._prepared(active, preparers)
        self._cached = (key, self._tools, (declared, hidden))
        return declared, hidden

    def _prepared(
        self, active: list[AgentTool], preparers: list[tuple[str, LoadoutPreparer]]
    ) -> tuple[list[AgentTool], list[AgentTool]]:
        """The ``active`` tools as their ``prepare_loadout`` hooks change them: new descriptions,
        and declarations left out (returned second)."""
        from tau.extensions.types import ToolLoadout

        names = set(self._active)
        loadout = ToolLoadout(
            declared=tuple(active),
            callable=(
                *(tool for tool in active if tool.callable_by_tools),
                *(
                    t
                    for n, t in self._tools.items()
                    if n not in names and t.exposure in CALLABLE_WHEN_INACTIVE
                ),
            ),
            registered=tuple(self._tools.values()),
            exposure={name: tool.exposure for name, tool in self._tools.items()},
            namespace=dict(self._namespaces),
            prompt_guidelines={name: tuple(tool.prompt_guidelines) for name, tool in self._tools.items()},
        )
        descriptions: dict[str, str] = {}
        hide: set[str] = set()
        for name, prepare in preparers:
            try:
                changes = prepare(loadout)
            except Exception as error:
                if self.on_loadout_error is not None:
                    self.on_loadout_error(name, f"prepare_loadout failed: {error}")
                continue
            if changes is not None:
                descriptions.update(changes.descriptions)
                hide.update(changes.hidden_declarations)
        kept: list[AgentTool] = []
        moved: list[AgentTool] = []
        for tool in active:
            if tool.name in hide:
                moved.append(tool)
            elif tool.name in descriptions:
                kept.append(replace(tool, description=descriptions[tool.name]))
            else:
                kept.append(tool)
        return kept, moved

    def get(self, name: str) -> AgentTool | None:
        return self._tools.get(name)

    def all_tools(self) -> list[AgentTool]:
        return list(self._tools.values())

    def origin(self, name: str) -> Literal["builtin", "extension", "sdk"] | None:
        """Where the tool registered as ``name`` comes from (``None`` when there is none)."""
        tool = self._tools.get(name)
        if tool is None:
            return None
        if any(t is tool for t in self._custom):
            return "sdk"
        return "builtin" if any(t is tool for t in self._builtin) else "extension"

    def set_active(self, names: Iterable[str]) -> list[str]:
        """Activate exactly the registered ones of ``names`` (unknown names are ignored); returns them."""
        self._active = self._known(names)
        return self.active_names

    def build_system_prompt(self, resources: ResourceLoader) -> tuple[str, SystemPromptOptions]:
        """The base system prompt for the active tools, and the options it was built from."""
        options = resources.system_prompt_options(self.active_tools)
        return build_system_prompt(options), options
