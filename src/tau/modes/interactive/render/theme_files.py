"""pi's theme files (``{"name", "appearance", "vars", "colors"}``) read as tau themes.

Themes are found where pi looks: ``<agent dir>/themes/*.json``, a trusted project's
``.tau/themes/*.json`` and ``.pi/themes/*.json``, the ``themes`` setting's paths (files or folders), installed packages'
themes, and ``--theme <file>``. Each colour role tau draws maps to one of pi's roles (pi's
``syntax*`` colours are not used: tau highlights code with a Pygments style, picked by the theme's
appearance). A file that cannot be read, lacks a role, or reuses a taken name is one line and is
left out.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from typing import Any

from tau.context.project_dirs import project_dirs
from tau.errors import TauError
from tau.modes.interactive.render.theme import Theme, register_theme, theme_names
from tau.modes.interactive.render.theme_colors import ColorError, to_rich_color

__all__ = ["ThemeFileError", "discover_theme_files", "load_theme_file", "register_theme_files", "theme_file"]


class ThemeFileError(TauError, ValueError):
    """A theme file tau cannot use; the message is one line."""


# tau's field -> (pi's colour role, the rich style put before the colour)
_ROLES: dict[str, tuple[str, str]] = {
    "accent": ("accent", ""),
    "muted": ("muted", ""),
    "dim": ("dim", ""),
    "text": ("text", ""),
    "thinking": ("thinkingText", "italic "),
    "user_bg": ("userMessageBg", ""),
    "custom_bg": ("customMessageBg", ""),
    "custom_label": ("customMessageLabel", "bold "),
    "tool_title": ("toolTitle", "bold "),
    "tool_pending_bg": ("toolPendingBg", ""),
    "tool_success_bg": ("toolSuccessBg", ""),
    "tool_error_bg": ("toolErrorBg", ""),
    "tool_output": ("toolOutput", ""),
    "error": ("error", ""),
    "warning": ("warning", ""),
    "success": ("success", ""),
    "diff_added": ("toolDiffAdded", ""),
    "diff_removed": ("toolDiffRemoved", ""),
    "diff_context": ("toolDiffContext", ""),
    "bash_mode": ("bashMode", ""),
    "notice_info": ("muted", ""),
    "notice_warning": ("warning", ""),
    "notice_error": ("error", ""),
    "footer": ("dim", ""),
    "footer_warning": ("warning", ""),
    "footer_error": ("error", ""),
    "border_off": ("thinkingOff", ""),
    "border_minimal": ("thinkingMinimal", ""),
    "border_low": ("thinkingLow", ""),
    "border_medium": ("thinkingMedium", ""),
    "border_high": ("thinkingHigh", ""),
    "border_xhigh": ("thinkingXhigh", ""),
    "md_heading": ("mdHeading", "bold "),
    "md_link": ("mdLink", ""),
    "md_link_url": ("mdLinkUrl", ""),
    "md_code": ("mdCode", ""),
    "md_code_border": ("mdCodeBlockBorder", ""),
    "md_quote": ("mdQuote", "italic "),
    "md_bullet": ("mdListBullet", ""),
    "md_hr": ("mdHr", ""),
}
_CODE_THEMES = {"dark": "monokai", "light": "friendly"}


def load_theme_file(path: str) -> Theme:
    """The theme in the pi theme file at ``path``."""
    try:
        with open(path, encoding="utf-8-sig") as f:
            data = json.load(f)
    except (OSError, ValueError) as exc:
        raise ThemeFileError(f"theme {path}: cannot read it: {exc}") from None
    try:
        return _theme(data)
    except ThemeFileError as exc:
        raise ThemeFileError(f"theme {path}: {exc}") from None


def _theme(data: Any) -> Theme:
    if not isinstance(data, dict):
        raise ThemeFileError("not a JSON object")
    name = data.get("name")
    if not isinstance(name, str) or not name.strip() or "/" in name or name == "system":
        raise ThemeFileError('"name" must be a name without "/" (and not "system")')
    variables = data.get("vars", {})
    colors = data.get("colors")
    if not isinstance(variables, dict) or not isinstance(colors, dict):
        raise ThemeFileError('"colors" (and "vars", if given) must be objects')
    fields: dict[str, Any] = {}  # the colour fields only: all str
    for field, (role, style) in _ROLES.items():
        if role not in colors:
            raise ThemeFileError(f'the colour "{role}" is missing')
        try:
            color = to_rich_color(_resolve(colors[role], variables))
        except ColorError as exc:
            raise ThemeFileError(f'colour "{role}": {exc}') from None
        fields[field] = f"{style}{color}" if color != "default" or not style else style.strip()
    appearance = data.get("appearance")
    if appearance not in ("dark", "light"):
        appearance = _appearance(fields["user_bg"], fields["text"])
    return Theme(name=name, code_theme=_CODE_THEMES[appearance], **fields)


def _resolve(value: Any, variables: Mapping[str, Any]) -> Any:
    """``value`` with variable names followed to a colour (chains allowed, cycles not)."""
    seen: list[str] = []
    while isinstance(value, str) and value in variables:
        if value in seen:
            raise ColorError(f"the variables {' -> '.join([*seen, value])} go round in a circle")
        seen.append(value)
        value = variables[value]
    return value


def _appearance(background: str, text: str) -> str:
    """``dark`` or ``light``, from the user message background (else the text colour)."""
    for color, dark_when_light in ((background, False), (text, True)):
        if color.startswith("#"):
            r, g, b = (int(color[i : i + 2], 16) / 255 for i in (1, 3, 5))
            light = 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.5
            return "dark" if light == dark_when_light else "light"
    return "dark"


def discover_theme_files(
    agent_dir: str,
    cwd: str,
    *,
    project_trusted: bool,
    setting_paths: Iterable[str],
    extra: Iterable[str],
    discovered: bool = True,
) -> list[str]:
    """The theme files to read, in order: the user's and the project's ``themes/`` folders (unless
    not ``discovered``), the setting's paths, then ``extra`` (packages', the command line's). A
    folder stands for its ``*.json`` files."""
    folders = [os.path.join(agent_dir, "themes")] if discovered else []
    if project_trusted and discovered:
        folders += [os.path.join(folder, "themes") for folder in project_dirs(cwd)]
    found: list[str] = []
    for path in [*folders, *(os.path.join(agent_dir, os.path.expanduser(p)) for p in setting_paths), *extra]:
        if os.path.isdir(path):
            found += sorted(os.path.join(path, n) for n in os.listdir(path) if n.endswith(".json"))
        elif os.path.isfile(path):
            found.append(path)
    return list(dict.fromkeys(os.path.abspath(p) for p in found))


_LOADED_FROM: dict[str, str] = {}
"""The file each registered theme was read from, by theme name."""


def theme_file(name: str) -> str | None:
    """Where the theme ``name`` was read from; ``None`` for a built-in one."""
    return _LOADED_FROM.get(name)


def register_theme_files(paths: Iterable[str]) -> tuple[dict[str, str], list[str]]:
    """Read and register each theme file; returns the names by file and one line per problem."""
    names: dict[str, str] = {}
    problems: list[str] = []
    for path in paths:
        try:
            theme = load_theme_file(path)
        except ThemeFileError as exc:
            problems.append(str(exc))
            continue
        if theme.name in theme_names():
            problems.append(f"theme {path}: the name {theme.name!r} is taken by another theme; left out")
            continue
        register_theme(theme)
        names[path] = theme.name
        _LOADED_FROM[theme.name] = os.path.abspath(path)
    return names, problems
