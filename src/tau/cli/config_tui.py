"""``tau config`` in a terminal: pi's resource configuration screen. Every resource of the
installed packages, of the scope's own folders (``extensions/``, ``skills/``, ``prompts/``) and pi's
built-in extensions, each ``[x]`` (loads) or ``[ ]``; Space or Enter switches the highlighted one
(written at once, as pi writes it: a package's ``+path``/``-path`` filter, a ``+path``/``-path``
entry in the scope's resource array, ``+builtin:<name>``/``-builtin:<name>`` in ``extensions``),
typing filters, Tab switches between the user's settings and the
project's (a trusted folder), Esc closes. Changes apply from the next start or ``/reload``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from tau.config.settings import SettingsManager
    from tau.modes.interactive.dialogs import ListItem

__all__ = ["run_config_tui"]

Scope = Literal["global", "project"]
_STYLE = {
    "dialog.title": "bold",
    "dialog.hint": "#808080",
    "dialog.selected": "reverse",
    "dialog.border": "#5f87af",
}


def _builtin_states(settings: SettingsManager, scope: Scope) -> list[tuple[str, bool]]:
    from tau.runtime.builtin_extensions import TAU_BUILTINS, builtin_enabled

    def entries(which: Scope) -> list[str]:
        value = settings.get_scope(which).get("extensions")
        return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []

    project = entries("project") if scope == "project" else []
    return [
        (name, builtin_enabled(name, project, entries("global"), explicit=(), no_extensions=False))
        for name in TAU_BUILTINS
    ]


def _rows(settings: SettingsManager, scope: Scope) -> list[ListItem[Any]]:
    from tau.modes.interactive.dialogs import ListItem
    from tau.packages.configured import configured_packages, declared_scopes
    from tau.packages.switches import resource_switches

    packages, _ = configured_packages(declared_scopes(settings))
    wanted = "project" if scope == "project" else "user"
    rows: list[ListItem[Any]] = []
    for package in packages:
        if package.scope != wanted or not package.installed:
            continue
        where = " (.pi/settings.json)" if package.from_pi else ""
        for switch in resource_switches(package):
            rows.append(
                ListItem(
                    f"[{'x' if switch.on else ' '}] {switch.kind[:-1]:<9} {switch.pattern}",
                    ("package", package, switch),
                    description=f"{package.source.raw}{where}",
                )
            )
    rows += _top_level_rows(settings, scope)
    for name, on in _builtin_states(settings, scope):
        rows.append(
            ListItem(
                f"[{'x' if on else ' '}] built-in  {name}", ("builtin", name, on), description="Built-in"
            )
        )
    return rows


_TOP_KINDS = ("extensions", "skills", "prompts")


def _discovered(base: str, kind: str) -> list[str]:
    """The resources of ``kind`` in ``base``'s own folder (``~/.tau/agent/skills``, ``.tau/prompts``...),
    as paths: an extension file or folder, a skill's ``SKILL.md``, a prompt file."""
    import os

    folder = os.path.join(base, kind)
    try:
        names = sorted(n for n in os.listdir(folder) if not n.startswith((".", "_")))
    except OSError:
        return []
    found: list[str] = []
    for name in names:
        path = os.path.join(folder, name)
        if kind == "extensions" and (name.endswith(".py") or os.path.isdir(path)):
            found.append(path)
        elif kind == "skills" and os.path.isfile(os.path.join(path, "SKILL.md")):
            found.append(os.path.join(path, "SKILL.md"))
        elif kind == "prompts" and name.endswith(".md"):
            found.append(path)
    return found


def _top_level_rows(settings: SettingsManager, scope: Scope) -> list[ListItem[Any]]:
    """The resources found in the scope's own folders, on or off by the scope's settings arrays."""
    import os

    from tau.context.settings_entries import SettingsEntries
    from tau.modes.interactive.dialogs import ListItem

    path = settings.path(scope)
    if path is None:
        return []
    base = str(path.parent)
    rows: list[ListItem[Any]] = []
    for kind in _TOP_KINDS:
        value = settings.get_scope(scope).get(kind)
        entries = SettingsEntries.parse(
            [v for v in value if isinstance(v, str)] if isinstance(value, list) else [], base
        )
        for found in _discovered(base, kind):
            pattern = os.path.relpath(found, base).replace(os.sep, "/")
            on = entries.enables(found, base)
            where = "Project (.tau/)" if scope == "project" else "User"
            rows.append(
                ListItem(
                    f"[{'x' if on else ' '}] {kind[:-1]:<9} {pattern}",
                    ("top", kind, pattern, on),
                    description=where,
                )
            )
    return rows


def _toggle(settings: SettingsManager, scope: Scope, value: tuple[Any, ...]) -> str:
    """Switch one row; the line to show about it."""
    if value[0] == "builtin":
        _, name, on = value
        target = f"builtin:{name}"

        def switch_builtin(current: dict[str, Any]) -> None:
            found = current.get("extensions")
            entries = [
                e
                for e in (found if isinstance(found, list) else [])
                if not (isinstance(e, str) and e.strip().lstrip("+-").strip() == target)
            ]
            entries.append(f"{'-' if on else '+'}{target}")  # pi's entries, in either scope
            if entries:
                current["extensions"] = entries
            else:
                current.pop("extensions", None)

        settings.update(switch_builtin, scope=scope)
        return f"{'Disabled' if on else 'Enabled'} built-in {name}"
    if value[0] == "top":
        _, kind, pattern, on = value

        def switch_top(current: dict[str, Any]) -> None:
            found = current.get(kind)
            entries = [
                e
                for e in (found if isinstance(found, list) else [])
                if not (isinstance(e, str) and e.lstrip("!+-") == pattern)
            ]
            entries.append(f"{'-' if on else '+'}{pattern}")
            current[kind] = entries

        settings.update(switch_top, scope=scope)
        return f"{'Disabled' if on else 'Enabled'} {kind[:-1]} {pattern}"
    from tau.packages.switches import switched_entry

    _, package, switch = value
    if package.from_pi:
        return f"{package.source.raw} is declared in .pi/settings.json, which tau does not write: change it there"
    replacement = switched_entry(package.entry, switch.kind, switch.pattern, on=not switch.on)

    def switch_package(current: dict[str, Any]) -> bool:
        entries = current.get("packages")
        if not isinstance(entries, list) or package.entry not in entries:
            return False
        entries[entries.index(package.entry)] = replacement
        return True

    if not settings.update(switch_package, scope=scope):
        return f"{package.source.raw} is no longer in the settings"
    return f"{'Enabled' if not switch.on else 'Disabled'} {switch.kind[:-1]} {switch.pattern} of {package.source.raw}"


def _exit_when_answered(app: Any) -> Any:
    return lambda _future: app.exit()


async def run_config_tui(settings: SettingsManager, *, local: bool, project_available: bool) -> int:
    """The screen until Esc; ``local`` starts with the project's settings. Returns the exit code."""
    from prompt_toolkit.application import Application
    from prompt_toolkit.layout import Layout
    from prompt_toolkit.styles import Style

    from tau.modes.interactive.dialogs import ListDialog

    scope: Scope = "project" if local else "global"
    selected = 0
    message = ""
    while True:
        rows = _rows(settings, scope)
        title = "Project Local Resources" if scope == "project" else "Global Resources"
        where = ".tau/settings.json" if scope == "project" else "the user's settings.json"
        hint = (
            "tab switch mode · " if project_available else ""
        ) + "space toggle · esc close · type to filter"
        dialog: ListDialog[Any] = ListDialog(
            f"{title}  ({where}; from the next start or /reload)",
            rows,
            message=message,
            hint=hint,
            selected=min(selected, max(len(rows) - 1, 0)),
            keys={" ": lambda d, item: d.close(("toggle", item))},
        )
        if project_available:
            dialog.on_empty_key("tab", lambda d: d.close(("switch", None)))
        app: Application[None] = Application(
            layout=Layout(dialog.container, focused_element=dialog.focus),
            style=Style.from_dict(_STYLE),
            full_screen=False,
            mouse_support=False,
            erase_when_done=True,
        )
        dialog.future.add_done_callback(_exit_when_answered(app))
        await app.run_async()
        answer = dialog.future.result() if dialog.future.done() else None
        if answer is None:
            return 0
        if isinstance(answer, tuple) and answer[0] == "switch":
            scope, selected, message = ("global" if scope == "project" else "project"), 0, ""
            continue
        item: ListItem[Any] = answer[1] if isinstance(answer, tuple) else answer
        selected = next((i for i, row in enumerate(rows) if row.value is item.value), 0)
        message = _toggle(settings, scope, item.value)
        for error in settings.drain_errors():
            message = error.error.message
