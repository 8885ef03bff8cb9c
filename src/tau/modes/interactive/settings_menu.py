"""``/settings``: the settings pi 1.6's selector offers that tau has, each with its current value.

Enter on a row opens its choices (with what the setting does above them); a choice is saved in the
user's ``settings.json`` and takes effect at once, and the list opens again on the same row.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from msgspec import Struct

from tau.modes.interactive.dialogs import ListDialog, ListItem
from tau.modes.interactive.host import SettingsHost

if TYPE_CHECKING:
    from tau.config.settings import SettingsManager

__all__ = ["SETTINGS", "Setting", "open_settings"]

_BOOLEAN = ["true", "false"]


class Setting(Struct, frozen=True):
    key: str
    label: str
    description: str
    choices: Callable[[SettingsHost], list[str]]
    current: Callable[[SettingsHost], str]
    apply: Callable[[SettingsHost, str], None]
    shown: Callable[[SettingsHost], bool] = lambda mode: True
    """Whether the row is offered (the image rows only where the terminal draws images, as pi)."""
    submenu: Callable[[SettingsHost], Awaitable[None]] | None = None
    """A row that opens more than one list (per-model thinking levels) instead of ``choices``."""


def _settings(mode: SettingsHost) -> SettingsManager:
    return mode.session.services.settings_manager


def _fixed(*choices: str) -> Callable[[SettingsHost], list[str]]:
    return lambda mode: list(choices)


def _word(value: Any) -> str:
    """A setting's value as the menu shows it (JSON's ``true``/``false`` for booleans)."""
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def _stored(key: str, default: Any) -> Callable[[SettingsHost], str]:
    """The current value of the top-level setting ``key``."""
    return lambda mode: _word(_settings(mode).get(key, default))


def _save(key: str, convert: Callable[[str], Any] = str) -> Callable[[SettingsHost, str], None]:
    """Save the chosen value under ``key``; what reads it reads it as it draws or runs."""
    return lambda mode, value: _settings(mode).set(key, convert(value))


def _save_nested(
    section: str, key: str, convert: Callable[[str], Any]
) -> Callable[[SettingsHost, str], None]:
    return lambda mode, value: _settings(mode).set_nested(section, key, convert(value))


def _redrawn(apply: Callable[[SettingsHost, str], None]) -> Callable[[SettingsHost, str], None]:
    """``apply``, then the screen drawn again (a setting the frame reads as it draws)."""

    def apply_and_redraw(mode: SettingsHost, value: str) -> None:
        apply(mode, value)
        mode.invalidate()

    return apply_and_redraw


def _is_true(value: str) -> bool:
    return value == "true"


def _restyled(apply: Callable[[SettingsHost, str], None]) -> Callable[[SettingsHost, str], None]:
    """``apply``, then the conversation drawn again (a setting the block renderer reads)."""

    def apply_and_restyle(mode: SettingsHost, value: str) -> None:
        apply(mode, value)
        mode.restyle()

    return apply_and_restyle


def _ignore(mode: SettingsHost, value: str) -> None:
    pass


def _images_drawn(mode: SettingsHost) -> bool:
    return mode.capabilities().images is not None


def _image_widths(mode: SettingsHost) -> list[str]:
    current = _settings(mode).image_width_cells
    return [str(n) for n in sorted({60, 80, 120, current})]


# -- the rows that need more than saving a value ----------------------------------------------------


def _thinking_levels(mode: SettingsHost) -> list[str]:
    return list(mode.session.get_available_thinking_levels())


def _set_thinking(mode: SettingsHost, value: str) -> None:
    mode.session.set_thinking_level(value, persist=True)  # type: ignore[arg-type]
    _settings(mode).set_default_thinking_level(mode.session.thinking_level)


def _themes(mode: SettingsHost) -> list[str]:
    from tau.modes.interactive.render.theme import theme_names

    return theme_names()  # the built-in ones and the loaded theme files


def _set_theme(mode: SettingsHost, value: str) -> None:
    _settings(mode).set("theme", value)
    mode.theme_name = value
    mode.restyle()


def _set_tui_mode(mode: SettingsHost, value: str) -> None:
    _settings(mode).set("tuiMode", value)
    mode.switch_tui_mode(value)


def _set_hide_thinking(mode: SettingsHost, value: str) -> None:
    _settings(mode).set("hideThinkingBlock", value == "true")
    mode.show_thinking = value != "true"
    mode.redraw_all()


def _set_output_pad(mode: SettingsHost, value: str) -> None:
    _settings(mode).set("outputPad", int(value))
    mode.set_output_pad(int(value))


def _set_transport(mode: SettingsHost, value: str) -> None:
    _settings(mode).set_transport(value)  # type: ignore[arg-type]
    mode.session.agent.transport = value


_TIMEOUTS = {"30 sec": 30_000, "1 min": 60_000, "2 min": 120_000, "5 min": 300_000, "disabled": 0}


def _timeout_label(mode: SettingsHost) -> str:
    from tau.config.settings_schema import parse_timeout_ms

    milliseconds = parse_timeout_ms(_settings(mode).get("httpIdleTimeoutMs"))
    milliseconds = 300_000 if milliseconds is None else milliseconds
    named = next((label for label, ms in _TIMEOUTS.items() if ms == milliseconds), None)
    return named or f"{milliseconds / 1000:g} sec"


def _timeout_choices(mode: SettingsHost) -> list[str]:
    current = _timeout_label(mode)
    return list(_TIMEOUTS) if current in _TIMEOUTS else [*_TIMEOUTS, current]


def _set_timeout(mode: SettingsHost, value: str) -> None:
    if value in _TIMEOUTS:
        _settings(mode).set("httpIdleTimeoutMs", _TIMEOUTS[value])


_TRUST = {"ask": "Ask", "always": "Always trust", "never": "Never trust"}


def _set_trust(mode: SettingsHost, value: str) -> None:
    chosen = next((key for key, label in _TRUST.items() if label == value), None)
    if chosen is not None:
        _settings(mode).set("defaultProjectTrust", chosen)


def _quiet_word(value: str) -> bool | str:
    return "header" if value == "header" else value == "true"


def _wheel_choices(mode: SettingsHost) -> list[str]:
    current = _settings(mode).fullscreen_wheel_scroll_lines
    numbers = sorted({1, 2, 3, 5, 10} | ({current} if isinstance(current, int) else set()))
    return ["auto", *map(str, numbers)]


def _wheel_value(value: str) -> int | str:
    return "auto" if value == "auto" else int(value)


def _editor_padding(mode: SettingsHost) -> str:
    return str(_settings(mode).editor_padding_x)


_LEVEL_NOTES = {
    "off": "No reasoning",
    "minimal": "Very brief reasoning",
    "low": "Light reasoning",
    "medium": "Moderate reasoning",
    "high": "Deep reasoning",
    "xhigh": "Extra-high reasoning",
    "max": "The most reasoning",
}
_CLEAR = "(clear override)"


def _model_levels(mode: SettingsHost) -> dict[str, str]:
    levels = _settings(mode).get("modelThinkingLevels")
    return {k: v for k, v in levels.items() if isinstance(v, str)} if isinstance(levels, dict) else {}


def _model_levels_summary(mode: SettingsHost) -> str:
    count = len(_model_levels(mode))
    return f"{count} configured" if count else "none"


async def _model_thinking_submenu(mode: SettingsHost) -> None:
    """Pick a model, then the level it starts with (or clear its entry); again until Esc."""
    from tau.ai.thinking import get_supported_thinking_levels

    models = mode.session.services.model_registry.get_available()
    current = mode.session.model
    key_of = {f"{m.provider}/{m.id}": m for m in models}
    first = f"{current.provider}/{current.id}" if current is not None else None
    ordered = sorted(key_of, key=lambda key: (key != first, key))
    while True:
        levels = _model_levels(mode)
        items = [ListItem(f"{key}{f' ({levels[key]})' if key in levels else ''}", key) for key in ordered]
        if not items:
            mode.chat.add_notice("No models have credentials: set an API key (see the README)", "error")
            return
        chosen = await mode.show_dialog(ListDialog("Per-model thinking level", items))
        if chosen is None:
            return
        model = key_of[chosen.value]
        choices: list[str] = list(get_supported_thinking_levels(model)) if model.reasoning else ["off"]
        entry = levels.get(chosen.value)
        level_items = [ListItem(level, level, _LEVEL_NOTES.get(level, "")) for level in choices]
        if entry is not None:
            level_items.append(
                ListItem(_CLEAR, _CLEAR, f"Back to the default ({mode.session.thinking_level})")
            )
        picked = await mode.show_dialog(
            ListDialog(
                f"Thinking level for {chosen.value}",
                level_items,
                selected=choices.index(entry) if entry in choices else 0,
            )
        )
        if picked is not None:
            _settings(mode).set_nested(
                "modelThinkingLevels", chosen.value, None if picked.value == _CLEAR else picked.value
            )


_WARNINGS = [
    Setting(
        "warnings.anthropicExtraUsage", "Anthropic extra usage",
        "Warn when an Anthropic subscription login may be billed as paid extra usage",
        _fixed(*_BOOLEAN), lambda mode: _word(_settings(mode).warn_anthropic_extra_usage),
        _save_nested("warnings", "anthropicExtraUsage", _is_true),
    ),
]  # fmt: skip
"""pi 1.6's "Warnings" rows."""


SETTINGS: list[Setting] = [
    Setting(
        "compaction.enabled", "Auto-compact", "Summarise the conversation when the context fills up",
        _fixed(*_BOOLEAN), lambda mode: _word(mode.session.auto_compaction_enabled),
        lambda mode, value: mode.session.set_auto_compaction_enabled(value == "true"),
    ),
    Setting(
        "terminal.showImages", "Show images", "Draw images in the conversation (this terminal can)",
        _fixed(*_BOOLEAN), lambda mode: _word(_settings(mode).show_images),
        _restyled(_save_nested("terminal", "showImages", _is_true)), shown=_images_drawn,
    ),
    Setting(
        "terminal.imageWidthCells", "Image width", "The widest an image is drawn, in cells",
        _image_widths, lambda mode: str(_settings(mode).image_width_cells),
        _restyled(_save_nested("terminal", "imageWidthCells", int)), shown=_images_drawn,
    ),
    Setting(
        "images.autoResize", "Auto-resize images", "Scale images down to 2000x2000 at most before sending them",
        _fixed(*_BOOLEAN), lambda mode: _word(_settings(mode).auto_resize_images),
        _save_nested("images", "autoResize", _is_true),
    ),
    Setting(
        "images.blockImages", "Block images", "Keep images from being sent to the model",
        _fixed(*_BOOLEAN), lambda mode: _word(_settings(mode).block_images),
        _save_nested("images", "blockImages", _is_true),
    ),
    Setting(
        "enableSkillCommands", "Skill commands", "Offer each skill as a /skill:name command",
        _fixed(*_BOOLEAN), _stored("enableSkillCommands", True), _save("enableSkillCommands", _is_true),
    ),
    Setting(
        "showHardwareCursor", "Show hardware cursor", "The terminal's cursor in the editor instead of a drawn one",
        _fixed(*_BOOLEAN), lambda mode: _word(_settings(mode).show_hardware_cursor),
        _redrawn(_save("showHardwareCursor", _is_true)),
    ),
    Setting(
        "editorPaddingX", "Editor padding", "Blank cells each side of the editor's text (0-3)",
        _fixed("0", "1", "2", "3"), _editor_padding, _redrawn(_save("editorPaddingX", int)),
    ),
    Setting(
        "outputPad", "Output padding", "Blank cells each side of messages, tool output and command output",
        _fixed("0", "1"), lambda mode: str(mode.output_pad), _set_output_pad,
    ),
    Setting(
        "autocompleteMaxVisible", "Autocomplete max items", "Rows of the / and @ completion menu (3-20)",
        _fixed("3", "5", "7", "10", "15", "20"), lambda mode: str(_settings(mode).autocomplete_max_visible),
        _save("autocompleteMaxVisible", int),
    ),
    Setting(
        "terminal.clearOnShrink", "Clear on shrink",
        "Clear the rows left empty when the inline UI gets shorter (may flicker)",
        _fixed(*_BOOLEAN), lambda mode: _word(_settings(mode).clear_on_shrink),
        _save_nested("terminal", "clearOnShrink", _is_true),
    ),
    Setting(
        "terminal.showTerminalProgress", "Terminal progress",
        "The terminal's progress indicator (OSC 9;4) while the agent works",
        _fixed(*_BOOLEAN), lambda mode: _word(_settings(mode).show_terminal_progress),
        _save_nested("terminal", "showTerminalProgress", _is_true),
    ),
    Setting(
        "steeringMode", "Steering mode", "Messages sent while the agent works: one per turn, or all at once",
        _fixed("one-at-a-time", "all"), lambda mode: _settings(mode).steering_mode,
        lambda mode, value: mode.session.set_steering_mode(value),  # type: ignore[arg-type]
    ),
    Setting(
        "followUpMode", "Follow-up mode", "Follow-ups queued until the agent stops: one per turn, or all",
        _fixed("one-at-a-time", "all"), lambda mode: _settings(mode).follow_up_mode,
        lambda mode, value: mode.session.set_follow_up_mode(value),  # type: ignore[arg-type]
    ),
    Setting(
        "transport", "Transport", "How providers that offer more than one are reached",
        _fixed("sse", "websocket", "websocket-cached", "auto"), lambda mode: _settings(mode).transport,
        _set_transport,
    ),
    Setting(
        "sessionShareDestination", "Session share destination", "Where /share uploads the session",
        _fixed("auto", "gist", "radius"), _stored("sessionShareDestination", "auto"),
        _save("sessionShareDestination"),
    ),
    Setting(
        "httpIdleTimeoutMs", "HTTP idle timeout",
        "Longest wait for a reply's headers or next bytes (disable for slow local models)",
        _timeout_choices, _timeout_label, _set_timeout,
    ),
    Setting(
        "cacheWarming", "Cache warming",
        "Keep the prompt cache warm: off; while the agent runs; also between runs while it pays",
        _fixed("off", "streaming", "idle"), lambda mode: _settings(mode).cache_warming, _save("cacheWarming"),
    ),
    Setting(
        "hideThinkingBlock", "Hide thinking", "Leave the model's thinking out of the conversation shown",
        _fixed(*_BOOLEAN), lambda mode: "false" if mode.show_thinking else "true", _set_hide_thinking,
    ),
    Setting(
        "markdown.mermaid", "Mermaid diagrams",
        "Draw Mermaid code blocks as diagrams: never, once the reply is complete, or as it streams",
        _fixed("off", "final", "streaming"), lambda mode: _settings(mode).mermaid_mode,
        _restyled(_save_nested("markdown", "mermaid", str)),
    ),
    Setting(
        "showCacheMissNotices", "Cache miss notices",
        "Notices of prompt tokens billed again after a cache miss, of what a compaction cost, and of reasoning a provider dropped",
        _fixed(*_BOOLEAN), lambda mode: _word(_settings(mode).show_cache_miss_notices),
        _save("showCacheMissNotices", _is_true),
    ),
    Setting(
        "collapseChangelog", "Collapse changelog", "Say \"Updated to vX\" in one line instead of What's New after an update",
        _fixed(*_BOOLEAN), lambda mode: _word(_settings(mode).collapse_changelog),
        _save("collapseChangelog", _is_true),
    ),
    Setting(
        "quietStartup", "Quiet startup", "Start without the header and what was loaded (header: keep the header)",
        _fixed("true", "header", "false"), lambda mode: _word(_settings(mode).quiet_startup),
        _save("quietStartup", _quiet_word),
    ),
    Setting(
        "defaultProjectTrust", "Default project trust", "What to do with a folder whose trust is not decided yet",
        _fixed(*_TRUST.values()), lambda mode: _TRUST[_settings(mode).default_project_trust], _set_trust,
    ),
    Setting(
        "doubleEscapeAction", "Double-escape action", "What Esc twice on an empty editor opens",
        _fixed("tree", "fork", "none"), _stored("doubleEscapeAction", "tree"), _save("doubleEscapeAction"),
    ),
    Setting(
        "treeFilterMode", "Tree filter mode", "The filter /tree opens with",
        _fixed("default", "no-tools", "user-only", "labeled-only", "all"),
        lambda mode: _settings(mode).tree_filter_mode, _save("treeFilterMode"),
    ),
    Setting(
        "warnings", "Warnings", "Which warnings tau gives",
        _fixed(), lambda mode: "configure", _ignore, submenu=lambda mode: _list_menu(mode, "Warnings", _WARNINGS),
    ),
    Setting(
        "modelThinkingLevels", "Default thinking level per model",
        "The thinking level a model starts with (Shift+Tab still changes it in the session)",
        _fixed(), _model_levels_summary, _ignore, submenu=_model_thinking_submenu,
    ),
    Setting(
        "tuiMode", "TUI mode", "fullscreen: the terminal's alternate screen; regular: its own scrollback",
        _fixed("regular", "fullscreen"), lambda mode: mode.tui_mode, _set_tui_mode,
    ),
    Setting(
        "fullscreenExitOutput", "Fullscreen exit output", "What leaving fullscreen prints: the conversation or how to resume",
        _fixed("transcript", "resume-hint"), _stored("fullscreenExitOutput", "transcript"),
        _save("fullscreenExitOutput"),
    ),
    Setting(
        "fullscreenScrollbar", "Fullscreen scrollbar", "When fullscreen shows its scrollbar",
        _fixed("auto", "always", "hidden"), _stored("fullscreenScrollbar", "auto"),
        _redrawn(_save("fullscreenScrollbar")),
    ),
    Setting(
        "fullscreenCopyOnSelect", "Fullscreen copy on select", "Copy a mouse selection at once (false: Ctrl+X copies it)",
        _fixed(*_BOOLEAN), _stored("fullscreenCopyOnSelect", True), _save("fullscreenCopyOnSelect", _is_true),
    ),
    Setting(
        "fullscreenWheelScrollLines", "Fullscreen wheel scrolling", "Lines a wheel notch scrolls (auto: by the wheel's speed)",
        _wheel_choices, lambda mode: str(_settings(mode).fullscreen_wheel_scroll_lines),
        _save("fullscreenWheelScrollLines", _wheel_value),
    ),
    Setting("theme", "Theme", "Colours of the interface", _themes, lambda mode: mode.theme_name, _set_theme),
    # tau's own, beside pi's rows
    Setting(
        "thinking", "Thinking level", "How much the model reasons first (saved as the default level)",
        _thinking_levels, lambda mode: mode.session.thinking_level, _set_thinking,
    ),
    Setting(
        "retry.enabled", "Auto-retry", "Retry a request that failed for a passing reason (overload, rate limit)",
        _fixed(*_BOOLEAN), lambda mode: _word(mode.session.auto_retry_enabled),
        lambda mode, value: mode.session.set_auto_retry_enabled(value == "true"),
    ),
]  # fmt: skip


async def open_settings(mode: SettingsHost) -> None:
    await _list_menu(mode, "Settings", SETTINGS, counter=True)


async def _list_menu(
    mode: SettingsHost, title: str, settings: list[Setting], *, counter: bool = False
) -> None:
    """A list of ``settings`` with their values until Esc; Enter on a row opens its choices (or
    its submenu) and the list opens again on that row, not back at the top."""
    row = 0
    while True:
        offered = [s for s in settings if s.shown(mode)]
        # as pi's list: the labels in a column (at most 36 wide), the values after it, the
        # highlighted row's description under the list, where it is among them ("(3/33)")
        width = min(36, max(len(s.label) for s in offered))
        items = [
            ListItem(f"{s.label.ljust(width)}  {s.current(mode)}", s, s.description, s.label) for s in offered
        ]
        chosen = await mode.show_dialog(
            ListDialog(title, items, selected=row, description_below=True, counter=counter)
        )
        if chosen is None:
            return
        setting: Setting = chosen.value
        row = offered.index(setting)
        if setting.submenu is not None:
            await setting.submenu(mode)
            continue
        choices = setting.choices(mode)
        current = setting.current(mode)
        value = await mode.show_dialog(
            ListDialog(
                setting.label,
                [ListItem(choice, choice) for choice in choices],
                message=setting.description,
                selected=choices.index(current) if current in choices else 0,
            )
        )
        if value is not None and value.value != current:
            setting.apply(mode, value.value)
