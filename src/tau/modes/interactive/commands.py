"""The built-in slash commands of the interactive mode (spec 70 §2.3).

``run_builtin_command`` answers whether the text was one of them; anything else (extension
commands, ``/skill:name``, prompt templates) goes to the session like any prompt.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

from msgspec import Struct

from tau.ai.types import AssistantMessage, ToolCall, ToolResultMessage, UserMessage
from tau.modes.interactive.clipboard import copy_to_clipboard
from tau.modes.interactive.dialogs import InputDialog, ListDialog, ListItem
from tau.modes.interactive.render.format import format_tokens
from tau.runtime.cache_warmer import WarmingStatus
from tau.session.manager import SessionManager
from tau.session.usage import usage_by_model

if TYPE_CHECKING:
    from tau.modes.interactive.host import CommandHost

__all__ = ["BUILTIN_COMMANDS", "EXTENSION_FIRST", "run_builtin_command"]

Handler = Callable[["CommandHost", str], Awaitable[None]]


class CommandSpec(Struct, frozen=True):
    description: str
    handler: Handler


def run_builtin_command(mode: CommandHost, text: str) -> bool:
    name, _, argument = text[1:].partition(" ")
    spec = BUILTIN_COMMANDS.get(name)
    if spec is None:
        return False
    if name in EXTENSION_FIRST:
        runner = mode.session.extension_runner
        if runner is not None and name in runner.commands:
            return False  # the extension's own command (the MCP extension's /mcp) runs instead
    mode.spawn(spec.handler(mode, argument.strip()))
    return True


# -- model, thinking, settings -------------------------------------------------------------------


async def _model(mode: CommandHost, argument: str) -> None:
    session = mode.session
    models = session.services.model_registry.get_available()
    if not models:
        mode.chat.add_notice(
            "No models have credentials: set an API key or /login (see tau's docs/providers.md)", "error"
        )
        return
    current = session.model
    settings = session.services.settings_manager
    default = (settings.default_provider, settings.default_model)

    def row(m: Any) -> str:
        # pi 1.6's row: the current model ticked, the name when it says more than the id, the
        # provider, the default marked
        tick = "✓ " if current and (m.provider, m.id) == (current.provider, current.id) else "  "
        name = f" ({m.name})" if _distinct_name(m.id, m.name) else ""
        return f"{tick}{m.id}{name} [{m.provider}]" + (" · default" if (m.provider, m.id) == default else "")

    items = [
        ListItem(row(m), m, f"Model Name: {m.name}", f"{m.provider} {m.provider}/{m.id} {m.id} {m.name}")
        for m in models
    ]
    selected = next(
        (
            i
            for i, m in enumerate(models)
            if current and m.id == current.id and m.provider == current.provider
        ),
        0,
    )

    def key(action: str, fallback: str) -> str:
        return mode.keymap.describe(action) or fallback

    # as pi 1.6: Enter switches for this session, Ctrl+S switches and saves the default
    dialog: ListDialog[Any] = ListDialog(
        "Choose a model",
        items,
        selected=selected,
        message=""
        if session.scoped_models
        else "Only showing models from configured providers. Use /login to add providers.",
        hint=f"{key('tui.select.confirm', 'enter')} to select · {key('app.models.save', 'ctrl+s')} to set "
        f"as default · {key('tui.select.cancel', 'escape').replace(', ', '/')} to cancel",
        actions={"app.models.save": lambda shown, item: shown.close(("default", item.value))},
        description_below=True,
    )
    if argument:
        dialog.query.text = argument
    chosen = await mode.show_dialog(dialog)
    if chosen is None:
        return
    if isinstance(chosen, ListItem):
        await session.set_model(chosen.value, persist=False)
        mode.chat.add_notice(f"Model: {chosen.value.id}")
        return
    model = chosen[1]
    await session.set_model(model, persist=True)
    mode.chat.add_notice(f"Default model: {model.provider}/{model.id}")


_LEVEL_DESCRIPTIONS = {
    # pi 1.6's words for its picker's rows
    "off": "No reasoning",
    "minimal": "Very brief reasoning (~1k tokens)",
    "low": "Light reasoning (~2k tokens)",
    "medium": "Moderate reasoning (~8k tokens)",
    "high": "Deep reasoning (~16k tokens)",
    "xhigh": "Extra-high reasoning (~32k tokens)",
    "max": "Maximum reasoning",
}


def _distinct_name(model_id: str, name: str) -> bool:
    """Whether a model's name has words its id lacks (pi shows it then): "Claude Sonnet 4.5" does
    not beside ``claude-sonnet-4-5``; a single-character word must be a whole word of the id."""
    words = [w for w in re.split(r"[\W_]+", model_id.lower()) if w]
    compact = "".join(words)
    return not all(
        w in words or (len(w) > 1 and w in compact) for w in re.split(r"[\W_]+", name.strip().lower()) if w
    )


async def _thinking(mode: CommandHost, argument: str) -> None:
    """``/thinking``: pick the thinking level from the model's levels, as pi's picker;
    ``/thinking <level>`` sets it at once. (Like Shift+Tab, the level is also saved as the default.)"""
    session = mode.session
    levels = list(session.get_available_thinking_levels())
    if argument:
        level = next((lv for lv in levels if lv.lower() == argument.lower()), None)
        if level is None:
            mode.chat.add_notice(
                f'Unknown thinking level "{argument}". Available levels: {", ".join(levels)}.', "error"
            )
            return
    else:
        current = session.thinking_level
        from tau.accounts.model_resolver import DEFAULT_THINKING_LEVEL

        default = session.services.settings_manager.default_thinking_level or DEFAULT_THINKING_LEVEL
        items = [
            ListItem(
                f"{'✓ ' if lv == current else '  '}{lv}".ljust(10),
                lv,
                _LEVEL_DESCRIPTIONS.get(lv, "") + (" · default" if lv == default else ""),
                search_text=lv,
            )
            for lv in levels
        ]
        cycle = mode.keymap.describe("app.thinking.cycle")
        chosen = await mode.show_dialog(
            ListDialog(
                "Thinking Level",
                items,
                message=f"{cycle} cycles thinking levels in-session" if cycle else "",
                selected=levels.index(current) if current in levels else 0,
            )
        )
        if chosen is None:
            return
        level = chosen.value
    session.set_thinking_level(level, persist=True)
    mode.invalidate()
    mode.chat.add_notice(f"Thinking level: {session.thinking_level}")


async def _sandbox(mode: CommandHost, argument: str) -> None:
    """``/sandbox``: pick how the agent's commands are fenced; ``/sandbox <mode>`` sets it at once.
    For this session only (the ``sandbox`` setting and ``--sandbox`` choose the start)."""
    from tau.config.sandbox_config import SandboxConfigError
    from tau.tools.sandbox import SANDBOX_MODES

    session = mode.session
    if argument:
        chosen = argument.strip().lower()
    else:
        current = session.sandbox.policy.mode
        items = [ListItem(m, m) for m in SANDBOX_MODES]
        picked = await mode.show_dialog(ListDialog("Sandbox", items, selected=SANDBOX_MODES.index(current)))
        if picked is None:
            return
        chosen = picked.value
    try:
        session.set_sandbox(chosen)
    except SandboxConfigError as error:
        mode.chat.add_notice(str(error), "error")
        return
    mode.footer_changed()
    mode.invalidate()
    mode.chat.add_notice(session.sandbox.policy.describe())


async def _mcp(mode: CommandHost, argument: str) -> None:
    """``/mcp`` while no MCP extension is loaded (no ``mcp.json``): there are no servers."""
    from tau.mcp.fallback import no_servers_message

    mode.chat.add_notice(no_servers_message(mode.session.services.agent_dir))


async def _changelog(mode: CommandHost, argument: str) -> None:
    """``/changelog``: what changed in tau (the CHANGELOG.md shipped with it), as pi 1.6 shows its
    own: "What's New" over every version's section, drawn as Markdown, the newest last."""
    from tau.modes.interactive.changelog import changelog_entries

    mode.chat.add_markdown("**What's New**\n\n" + changelog_entries())


async def _settings(mode: CommandHost, argument: str) -> None:
    from tau.modes.interactive.settings_menu import open_settings

    await open_settings(mode)


def _close_with_query(action: str) -> Callable[[ListDialog[str]], None]:
    """Close the dialog with ``(action, the search typed)``, to open it again as it was."""
    return lambda shown: shown.close((action, shown.query.text))


def _close_with_shown(action: str) -> Callable[[ListDialog[str]], None]:
    """Close the dialog with ``(action, [the keys it lists now])``: what a search left shown."""
    return lambda shown: shown.close((action, [item.value for item in shown.shown]))


def _edit_scope(
    enabled: list[str] | None, keys: list[str], action: str, value: Any, position: int
) -> tuple[list[str] | None, int]:
    """``/scoped-models``' keys (pi 1.6's) on the enabled models (``None``: all of them): the new
    choice and the row to highlight."""
    from tau.modes.interactive.model_scope_edits import clear_all, enable_all, move, toggle_provider

    every = keys if enabled is None else enabled
    if action == "toggle":
        edited = [k for k in every if k != value] if value in every else [*every, value]
        return _all_or_some(edited, keys), position
    if action == "all":
        return _all_or_some(enable_all(every, value), keys), position
    if action == "clear":
        return clear_all(every, value), position
    if action == "provider":
        return _all_or_some(toggle_provider(every, keys, value.split("/", 1)[0]), keys), position
    if enabled is None:  # nothing to order while every model is on
        return None, position
    moved = move(enabled, value, -1 if action == "up" else 1)
    return moved, max(0, min(len(keys) - 1, position + (-1 if action == "up" else 1)))


def _all_or_some(enabled: list[str], keys: list[str]) -> list[str] | None:
    """``None`` (every model, pi's ``null``) when ``enabled`` has each of ``keys``."""
    return None if len(enabled) == len(keys) and set(enabled) == set(keys) else enabled


async def _scoped_models(mode: CommandHost, argument: str) -> None:
    """pi 1.6's "Model Configuration": which models Ctrl+P cycles through, in which order. A change
    holds for the session at once; Ctrl+S saves it as the ``enabledModels`` setting."""
    from tau.accounts.model_resolver import resolve_model_scope

    session = mode.session
    registry = session.services.model_registry
    scoped = [f"{s.model.provider}/{s.model.id}" for s in session.scoped_models]
    enabled: list[str] | None = scoped or None
    position = 0
    keymap = mode.keymap

    def key(action: str, fallback: str) -> str:
        return keymap.describe(action).split(", ")[0] or fallback

    while True:
        available = {f"{m.provider}/{m.id}": m for m in registry.get_available()}
        keys = list(available)
        shown = keys if enabled is None else [*enabled, *(k for k in keys if k not in enabled)]
        items = [
            ListItem(
                ("✓ " if enabled is None or k in enabled else "  ")
                + available[k].id
                + (f" ({available[k].name})" if _distinct_name(available[k].id, available[k].name) else "")
                + f" [{available[k].provider}]",
                k,
                search_text=f"{k} {available[k].name}",
            )
            for k in shown
            if k in available
        ]
        count = (
            "all enabled"
            if enabled is None
            else f"{sum(k in available for k in enabled)}/{len(keys)} enabled"
        )
        dialog: ListDialog[str] = ListDialog(
            "Model Configuration",
            items,
            message=f"Session-only. {key('app.models.save', 'ctrl+s')} to save to settings.",
            selected=position,
            hint=f"{key('tui.select.confirm', 'enter')} toggle · {key('app.models.enableAll', 'ctrl+a')} all · "
            f"{key('app.models.clearAll', 'ctrl+x')} clear · {key('app.models.toggleProvider', 'ctrl+p')} provider · "
            f"{key('app.models.reorderUp', 'alt+up')}/{key('app.models.reorderDown', 'alt+down')} reorder · "
            f"{key('app.models.save', 'ctrl+s')} save · {count}",
            actions={
                "app.models.save": _close_with("save"),
                "app.models.toggleProvider": _close_with("provider"),
                "app.models.reorderUp": _close_with("up"),
                "app.models.reorderDown": _close_with("down"),
            },
        )
        for action_id, name in (("app.models.enableAll", "all"), ("app.models.clearAll", "clear")):
            dialog.on_empty_action(action_id, _close_with_shown(name))
        picked = await mode.show_dialog(dialog)
        if picked is None:
            return
        if isinstance(picked, ListItem):
            action, value = "toggle", picked.value
            position = shown.index(value)
        else:
            action, value = picked
        if action == "save":
            session.services.settings_manager.set_enabled_models(None if enabled is None else list(enabled))
            mode.chat.add_notice("Model selection saved to settings")
            continue
        if action in ("provider", "up", "down"):
            position = shown.index(value)
        enabled, position = _edit_scope(enabled, keys, action, value, position)
        # as pi: the session cycles through them now; none, or every one, is all of them
        chosen = [k for k in enabled or () if k in available]
        partial = bool(chosen) and len(chosen) < len(keys)
        session.set_scoped_models(resolve_model_scope(chosen, registry.get_available())[0] if partial else [])


# -- sessions ------------------------------------------------------------------------------------


async def _new(mode: CommandHost, argument: str) -> None:
    change = await mode.runtime.new_session()
    if change.cancelled:
        mode.chat.add_notice("An extension kept the current session", "warning")
    else:
        mode.chat.add_notice("✓ New session started")


def _no_sessions(*, everywhere: bool, named_only: bool, keymap: Any) -> str:
    """What the session picker says when it lists nothing, in pi 1.6's words."""
    named = keymap.describe("app.session.toggleNamedFilter") or "ctrl+n"
    if named_only:
        if everywhere:
            return f"No named sessions found. Press {named} to show all."
        return f"No named sessions in current folder. Press {named} to show all, or Tab to view all."
    return "No sessions found" if everywhere else "No sessions in current folder. Press Tab to view all."


async def _resume(mode: CommandHost, argument: str) -> None:
    """The session picker: this folder's sessions, Tab for every project's; Ctrl+R renames,
    Ctrl+D deletes (after asking), and Ctrl+Backspace too when nothing is typed (pi 1.6's
    ``app.session.deleteNoninvasive``); as pi 1.6's, Ctrl+S changes the order (threaded, recent,
    relevance), Ctrl+N shows only named sessions, Ctrl+P shows each session's file."""
    from tau.modes.interactive.session_order import next_sort_mode, threaded
    from tau.session.listing import list_all_sessions, list_sessions
    from tau.session.paths import sessions_root

    everywhere = named_only = show_path = False
    sort_mode = "threaded"
    query = ""
    while True:
        manager = mode.session.session_manager
        if everywhere:
            infos = list_all_sessions(sessions_root(mode.session.services.agent_dir))
        else:
            infos = list_sessions(manager.get_session_dir())
        current = mode.session.session_file
        infos = [i for i in infos if i.path != current and (i.name or not named_only)]
        rows = threaded(infos) if sort_mode == "threaded" else [(i, 0) for i in infos]
        items = [
            ListItem(
                ("  " * (depth - 1) + "└ " if depth else "")
                + _one_line(i.name or i.first_message or "(no messages)", 60),
                i.path,
                f"{i.modified:%Y-%m-%d %H:%M} · {i.message_count} msgs"
                + (f" · {i.cwd}" if everywhere else "")
                + (f" · {i.path}" if show_path else ""),
                f"{i.name or ''} {i.cwd if everywhere else ''} {i.all_messages_text[:2000]}",
            )
            for i, depth in rows
        ]

        # pi 1.6's header: the scope, then which sessions and in what order
        scope = "◉ Current Folder | ○ All" if not everywhere else "○ Current Folder | ◉ All"
        sort_label = {"threaded": "Threaded", "recent": "Recent"}.get(sort_mode, "Fuzzy")
        dialog: ListDialog[str] = ListDialog(
            f"Resume Session ({'All' if everywhere else 'Current Folder'})  {scope}  "
            f"Name: {'Named' if named_only else 'All'}  Sort: {sort_label}",
            items,
            hint="enter resume · tab this folder/all projects · ctrl+s order · ctrl+n named · ctrl+p path"
            " · ctrl+r rename · ctrl+d delete · esc cancel",
            actions={
                "app.session.rename": _close_with("rename"),
                "app.session.delete": _close_with("delete"),
            },
            keep_order=sort_mode == "recent",
            empty=_no_sessions(everywhere=everywhere, named_only=named_only, keymap=mode.keymap),
        )
        dialog.query.text = query
        dialog.on_empty_key("tab", lambda shown: shown.close(("scope", shown.query.text)))
        for action_id, kind_of in (
            ("app.session.toggleSort", "sort"),
            ("app.session.toggleNamedFilter", "named"),
            ("app.session.togglePath", "path"),
        ):
            dialog.on_empty_action(action_id, _close_with_query(kind_of))
        dialog.on_empty_action("app.session.deleteNoninvasive", _delete_unless_searching)
        chosen = await mode.show_dialog(dialog)
        if chosen is None:
            return
        if isinstance(chosen, ListItem):
            change = await mode.runtime.switch_session(chosen.value)
            if not change.cancelled:
                mode.chat.add_notice("Resumed session")
            return
        kind, path = chosen
        query = path if kind in ("scope", "sort", "named", "path") else ""
        if kind == "scope":
            everywhere = not everywhere
        elif kind == "sort":
            sort_mode = next_sort_mode(sort_mode)
        elif kind == "named":
            named_only = not named_only
        elif kind == "path":
            show_path = not show_path
        elif kind == "rename":
            name = await mode.show_dialog(InputDialog("New name for the session"))
            if name and name.strip():
                SessionManager.open(path).append_session_info(name.strip())
        elif kind == "delete":
            sure = await mode.show_dialog(
                ListDialog(
                    "Delete this session file?",
                    [ListItem("No", False), ListItem("Yes, delete it", True)],
                    message=path,
                    filterable=False,
                )
            )
            if sure is not None and sure.value:
                os.remove(path)


async def _import(mode: CommandHost, argument: str) -> None:
    """``/import <file.jsonl>``: copy a session file into this folder's sessions and resume it."""
    source = os.path.expanduser(argument.strip().strip('"').strip("'"))
    if not source:
        mode.chat.add_notice("Usage: /import <session.jsonl>")
        return
    if not os.path.isfile(source):
        mode.chat.add_notice(f"No such file: {source}", "error")
        return
    target_dir = mode.session.session_manager.get_session_dir()
    os.makedirs(target_dir, exist_ok=True)
    target = os.path.join(target_dir, os.path.basename(source))
    if os.path.exists(target) and not os.path.samefile(source, target):
        stem, ext = os.path.splitext(target)
        target = f"{stem}-imported{ext}"
    if not os.path.exists(target):
        shutil.copyfile(source, target)
    change = await mode.runtime.switch_session(target)
    if not change.cancelled:
        mode.chat.add_notice(f"Session imported from: {source}")


async def _name(mode: CommandHost, argument: str) -> None:
    if not argument:
        name = mode.session.session_name
        # pi 1.6's words, here and below
        mode.chat.add_notice(
            f"Session name: {name}" if name else "Usage: /name <name>", "info" if name else "warning"
        )
        return
    mode.session.set_session_name(argument)
    mode.chat.add_notice(f"Session name set: {argument}")


async def _session(mode: CommandHost, argument: str) -> None:
    """``/session``: pi 1.6's sections (the session, its messages, tokens, cache warming, cost;
    the cost of each model that answered when that is not just the selected one)."""
    from tau.session.entries import MessageEntry

    session = mode.session
    # as pi: every message of the file (each branch, the recorded system prompt too)
    messages = [e.message for e in session.session_manager.get_entries() if isinstance(e, MessageEntry)]
    replies = [m for m in messages if isinstance(m, AssistantMessage)]
    totals = mode.totals
    lines = ["Session Info", ""]
    if session.session_name:
        lines.append(f"Name: {session.session_name}")
    lines += [
        f"File: {session.session_file or 'In-memory'}",
        f"ID: {session.session_id}",
        "",
        "Messages",
        f"Total: {len(messages)}",
        f"User: {sum(isinstance(m, UserMessage) for m in messages)}",
        f"Assistant: {len(replies)}",
        f"Tools: {sum(isinstance(b, ToolCall) for m in replies for b in m.content)} calls, "
        f"{sum(isinstance(m, ToolResultMessage) for m in messages)} results",
        "",
        "Tokens",
    ]
    prompt = totals.input + totals.cache_read + totals.cache_write
    lines.append(f"Input: {prompt:,}")
    if prompt > 0 and (totals.cache_read or totals.cache_write):
        lines.append(f"  Cached: {totals.cache_read:,} ({totals.cache_read / prompt * 100:.1f}%)")
        written = f" ({totals.cache_write:,} written to cache)" if totals.cache_write else ""
        lines.append(f"  Uncached: {totals.input + totals.cache_write:,}{written}")
    lines += [f"Output: {totals.output:,}", f"Total: {prompt + totals.output:,}"]
    setting = session.services.settings_manager.cache_warming
    warming = cache_warming_line(setting, session.cache_warming_status).removeprefix(
        f"Cache warming: {setting}, "
    )
    lines += ["", "Cache Warming", f"Mode: {setting}", f"Status: {warming[:1].upper()}{warming[1:]}"]
    # Per model that answered (a virtual model routes to several), unless one entry repeats the total.
    breakdown = usage_by_model(session.session_manager.get_entries())
    selected = f"{session.model.provider}/{session.model.id}" if session.model else None
    by_model = len(breakdown) > 1 or bool(breakdown and breakdown[0][0] != selected)
    if totals.cost > 0 or by_model:
        lines += ["", "Cost", f"Total: ${totals.cost:.3f}"]
        if by_model:
            lines += [
                f"  {key}: ${cost:.3f} ({format_tokens(tokens)} tokens)" for key, cost, tokens in breakdown
            ]
    mode.chat.add_notice("\n".join(lines))


def cache_warming_line(setting: str, status: WarmingStatus, now: float | None = None) -> str:
    """``/session``'s account of prompt-cache warming: the setting, then what it does now."""
    if status.state == "inactive":
        return f"Cache warming: {setting}, inactive ({status.reason})"
    text = f"Cache warming: {setting}, {status.state}"
    if status.next_warm_at is not None:
        left = max(0, round(status.next_warm_at - (time.time() if now is None else now)))
        text += f", next refresh in {left // 60}m {left % 60}s"
    decision = status.decision
    if decision is not None and decision.economics_available:
        text += f" (expected savings ${decision.expected_savings:.3f}, {decision.continuation_probability:.0%} chance of a next request)"
    return text


_TREE_FILTER_KEYS: Final[Mapping[str, str]] = {
    "app.tree.filter.cycleForward": "next",
    "app.tree.filter.cycleBackward": "previous",
    "app.tree.filter.default": "default",
    "app.tree.filter.noTools": "no-tools",
    "app.tree.filter.userOnly": "user-only",
    "app.tree.filter.labeledOnly": "labeled-only",
    "app.tree.filter.all": "all",
}
"""``/tree``'s filter keys and what each asks for: a step through the filters, or one of them."""


def next_tree_filter(current: str, wanted: str) -> str:
    """The ``/tree`` filter after a filter key, as pi 1.6's: ``next``/``previous`` step through
    the filters; a named one is chosen, or when it is the one shown already, ``default`` again."""
    from tau.modes.interactive.tree_view import FILTER_MODES

    if wanted in ("next", "previous"):
        step = 1 if wanted == "next" else -1
        return FILTER_MODES[(FILTER_MODES.index(current) + step) % len(FILTER_MODES)]
    return "default" if wanted == current else wanted


def _close_filter(target: str) -> Callable[[ListDialog[str]], None]:
    return lambda shown: shown.close(("filter", target))


async def _tree(mode: CommandHost, argument: str) -> None:
    from tau.modes.interactive.tree_dialog import TreeDialog
    from tau.modes.interactive.tree_view import FILTER_MODES, child_session_of, tree_rows

    session = mode.session
    manager = session.session_manager
    settings = session.services.settings_manager
    filter_mode = str(settings.get("treeFilterMode", "default"))
    filter_mode = filter_mode if filter_mode in FILTER_MODES else "default"
    folded: set[str] = set()
    label_times = False
    keep: str | None = None  # the row to highlight again after a label edit
    while True:
        rows = tree_rows(manager, filter_mode)
        selected = next((i for i, item in enumerate(rows.items) if item.value == keep), rows.selected)
        dialog = TreeDialog(
            "Session Tree",
            rows,
            filter_mode=filter_mode,
            folded=folded,
            label_times=label_times,
            selected=selected,
            actions={"app.tree.editLabel": _close_with("label")},
        )
        for action_id, target in _TREE_FILTER_KEYS.items():
            dialog.on_empty_action(action_id, _close_filter(target))
        chosen = await mode.show_dialog(dialog)
        folded, label_times, keep = dialog.folded, dialog.label_times, None
        if chosen is None:
            return
        if isinstance(chosen, ListItem):
            break
        kind, entry_id = chosen
        if kind == "filter":
            filter_mode = next_tree_filter(filter_mode, entry_id)
            folded = set()  # as pi's: a filter unfolds everything
        elif kind == "label":
            keep = entry_id
            text = await mode.show_dialog(
                InputDialog("Label (empty to clear)", initial=manager.get_label(entry_id) or "")
            )
            if text is not None:
                manager.append_label_change(entry_id, text.strip() or None)
    child = child_session_of(chosen.value)
    if child is not None:  # a sub-agent's transcript: open it (its header names this session)
        await mode.runtime.switch_session(child)
        return
    if chosen.value == manager.get_leaf_id():
        mode.chat.add_notice("Already at this point")
        return
    choice = "none"  # branchSummary.skipPrompt: leave without a summary, unasked (as pi 1.6)
    if not settings.branch_summary_skip_prompt:
        summary = await mode.show_dialog(
            ListDialog(
                "Summarize the branch you are leaving?",
                [
                    ListItem("No summary", "none"),
                    ListItem("Summarize", "summary"),
                    ListItem("Summarize with instructions…", "custom"),
                ],
                filterable=False,
            )
        )
        if summary is None:
            return
        choice = summary.value
    instructions = None
    if choice == "custom":
        instructions = await mode.show_dialog(InputDialog("Instructions for the summary"))
        if instructions is None:
            return
    result = await session.navigate_tree(
        chosen.value, summarize=choice != "none", custom_instructions=instructions or None
    )
    if result.cancelled:
        mode.chat.add_notice(
            "Branch summarization cancelled" if result.aborted else "Navigation cancelled", "warning"
        )
        return
    mode.redraw_all(reload_messages=True)
    mode.chat.add_notice("Navigated to selected point")
    if result.editor_text:
        mode.editor.text = result.editor_text
        mode.editor.cursor_position = len(result.editor_text)


async def _fork(mode: CommandHost, argument: str) -> None:
    from tau.session.entries import MessageEntry

    manager = mode.session.session_manager
    items = [
        ListItem(_one_line(_user_text(e.message), 100), e.id)
        for e in manager.get_branch()
        if isinstance(e, MessageEntry)
        and isinstance(e.message, UserMessage)
        and _user_text(e.message).strip()
    ]
    if not items:
        mode.chat.add_notice("No messages to fork from")
        return
    # pi 1.6's picker: the messages in order, each numbered, the last one highlighted
    items = [
        ListItem(item.label, item.value, f"Message {n} of {len(items)}") for n, item in enumerate(items, 1)
    ]
    chosen = await mode.show_dialog(
        ListDialog(
            "Fork from Message",
            items,
            message="Select a user message to copy the active path up to that point into a new session",
            selected=len(items) - 1,
            keep_order=True,
        )
    )
    if chosen is None:
        return
    result = await mode.runtime.fork(chosen.value, "before")
    if result.cancelled:
        mode.chat.add_notice("An extension stopped the fork", "warning")
        return
    if result.selected_text:
        mode.editor.text = result.selected_text
        mode.editor.cursor_position = len(result.selected_text)
    mode.chat.add_notice("Forked to new session")


async def _clone(mode: CommandHost, argument: str) -> None:
    leaf = mode.session.session_manager.get_leaf_id()
    if leaf is None:
        mode.chat.add_notice("Nothing to clone yet")
        return
    result = await mode.runtime.fork(leaf, "at")
    if not result.cancelled:
        mode.chat.add_notice("Cloned to new session")


async def _compact(mode: CommandHost, argument: str) -> None:
    ended = mode.activity.compactions_ended
    try:
        await mode.session.compact(argument or None)
    except Exception as exc:
        if mode.activity.compactions_ended == ended:  # else compaction_end has already told the user
            mode.chat.add_notice(str(exc), "error")


async def _copy(mode: CommandHost, argument: str) -> None:
    text = mode.session.get_last_assistant_text()
    if not text:
        mode.chat.add_notice("No agent messages to copy yet.", "error")
        return
    copy_to_clipboard(mode.write_raw, text)
    mode.chat.add_notice("Copied last agent message to clipboard")


async def _export(mode: CommandHost, argument: str) -> None:
    session = mode.session
    target = os.path.expanduser(argument.strip().strip('"').strip("'")) if argument else None
    if target and target.endswith(".jsonl"):
        path = session.session_manager.export_branch(os.path.abspath(target))
    else:
        from tau.export import ExportError

        try:
            path = session.export_to_html(target, theme=mode.theme())
        except ExportError as exc:
            mode.chat.add_notice(f"Failed to export session: {exc}", "error")
            return
    mode.chat.add_notice(f"Session exported to: {path}")


async def _bug(mode: CommandHost, argument: str) -> None:
    from tau.modes.interactive.bug_report import report_bug

    await report_bug(mode, argument)


async def _share(mode: CommandHost, argument: str) -> None:
    from tau.modes.interactive.share import share_session

    await share_session(mode)


async def _reload(mode: CommandHost, argument: str) -> None:
    diagnostics = await mode.session.reload()
    mode.keymap_reload()
    for diagnostic in diagnostics:
        mode.chat.add_notice(f"{diagnostic.type}: {diagnostic.message}", "warning")
    mode.chat.add_notice("Reloaded keybindings, extensions, skills, prompts and context files")


async def _hotkeys(mode: CommandHost, argument: str) -> None:
    """``/hotkeys``: pi 1.6's tables of keys (see ``hotkeys``), the extensions' shortcuts after them."""
    from tau.modes.interactive.hotkeys import hotkeys_markdown

    runner = mode.session.extension_runner
    shortcuts = runner.shortcuts.values() if runner is not None else ()
    mode.chat.add_markdown(
        hotkeys_markdown(mode.keymap, ((s.key, s.description or s.path) for s in shortcuts))
    )


async def _login(mode: CommandHost, argument: str) -> None:
    from tau.modes.interactive.login import login_command

    await login_command(mode, argument)


async def _logout(mode: CommandHost, argument: str) -> None:
    from tau.modes.interactive.login import logout_command

    await logout_command(mode, argument)


async def _trust(mode: CommandHost, argument: str) -> None:
    from tau.modes.interactive.trust import trust_command

    await trust_command(mode, argument)


async def _packages(mode: CommandHost, argument: str) -> None:
    from tau.modes.interactive.packages_command import packages_command

    await packages_command(mode, argument)


async def _quit(mode: CommandHost, argument: str) -> None:
    mode.quit()


def _delete_unless_searching(shown: ListDialog[str]) -> None:
    """pi 1.6's ``app.session.deleteNoninvasive``: the highlighted session's delete when nothing is
    typed; else the key edits the search, deleting the word before the cursor."""
    query = shown.query
    if query.text:
        start = query.document.find_start_of_previous_word()
        query.delete_before_cursor(-start if start is not None else query.cursor_position)
    elif shown.shown:
        shown.close(("delete", shown.shown[shown.index].value))


def _close_with(kind: str) -> Callable[[ListDialog[str], ListItem[str]], None]:
    """A picker key that closes it with ``(kind, highlighted value)`` for the command to act on."""
    return lambda shown, item: shown.close((kind, item.value))


def _user_text(message: UserMessage) -> str:
    if isinstance(message.content, str):
        return message.content
    return "".join(getattr(b, "text", "") for b in message.content)


def _one_line(text: str, limit: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


EXTENSION_FIRST = frozenset({"mcp"})
"""Built-ins an extension's command of the same name takes over (the MCP extension's ``/mcp``)."""

BUILTIN_COMMANDS: dict[str, CommandSpec] = {  # in pi 1.6's order, as its / menu lists them
    "settings": CommandSpec("Settings: thinking, theme, queue modes, compaction…", _settings),
    "model": CommandSpec("Choose the model", _model),
    "tree": CommandSpec("Move around the session tree", _tree),
    "thinking": CommandSpec("Set the thinking level [level]", _thinking),
    "scoped-models": CommandSpec("Choose the models Ctrl+P cycles through", _scoped_models),
    "export": CommandSpec("Export the session to HTML (or .jsonl) [file]", _export),
    "import": CommandSpec("Copy a session file here and resume it <file.jsonl>", _import),
    "share": CommandSpec("Share the session as a private GitHub gist (needs gh)", _share),
    "bug": CommandSpec("Write a bug report zip to attach to an issue [description]", _bug),
    "copy": CommandSpec("Copy the last reply", _copy),
    "name": CommandSpec("Name this session", _name),
    "session": CommandSpec("Show session file, counts, tokens and cost", _session),
    "changelog": CommandSpec("Show what changed in tau", _changelog),
    "hotkeys": CommandSpec("List the keys", _hotkeys),
    "fork": CommandSpec("New session from before an earlier message", _fork),
    "clone": CommandSpec("New session with this branch", _clone),
    "trust": CommandSpec("Save whether this folder's .tau files may load", _trust),
    "login": CommandSpec("Sign in with an account or save an API key [provider]", _login),
    "logout": CommandSpec("Remove a stored credential", _logout),
    "new": CommandSpec("Start a new session", _new),
    "compact": CommandSpec("Summarize the conversation to free context [instructions]", _compact),
    "resume": CommandSpec("Resume another session", _resume),
    "reload": CommandSpec("Reload keybindings, extensions, skills, prompts, context files", _reload),
    # tau's own, before pi's last
    "sandbox": CommandSpec("Fence the agent's commands: off, read-only, workspace-write [mode]", _sandbox),
    "packages": CommandSpec("Switch the installed packages' resources on or off", _packages),
    "mcp": CommandSpec("MCP servers: status, reconnect, enable, disable", _mcp),
    "quit": CommandSpec("Quit tau", _quit),
}
