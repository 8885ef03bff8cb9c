"""The application's key bindings: each action of the keymap bound to what it does."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from prompt_toolkit.filters import Condition, FilterOrBool
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.key_binding.bindings.named_commands import get_by_name
from prompt_toolkit.keys import Keys

from tau.modes.interactive import actions
from tau.modes.interactive.actions import ActionHost
from tau.modes.interactive.external_editor import open_external_editor
from tau.modes.interactive.keyboard import lone_escape
from tau.modes.interactive.keymap import CTRL_BACKSPACE, EDITOR_COMMANDS, to_prompt_toolkit_keys

if TYPE_CHECKING:
    from tau.modes.interactive.dialogs import Dialog

__all__ = ["KeysHost", "build_key_bindings"]


class KeysHost(ActionHost, Protocol):
    """What the key bindings use of the mode beside the actions': whether a dialog has the keys,
    the view toggles, and Ctrl+Z."""

    @property
    def dialog(self) -> Dialog | None: ...

    tools_expanded: bool

    def suspend(self) -> None: ...


EDITOR_ROWS = 12
"""The most rows the editor shows (``app.py`` builds its window so): one page of the editor."""


def build_key_bindings(mode: KeysHost) -> KeyBindings:
    bindings = KeyBindings()
    in_editor = Condition(lambda: mode.dialog is None)
    editor = mode.editor

    def bind(action: str, handler: Callable[[KeyPressEvent], None], *, eager: FilterOrBool = False) -> None:
        for keys in mode.keymap.keys(action):
            bindings.add(*keys, filter=in_editor, eager=eager)(handler)

    def submit(event: KeyPressEvent) -> None:
        choice = editor.menu_choice()
        if choice is not None:
            # Enter takes the highlighted suggestion: a command's name then runs it; a file
            # reference or an argument goes into the text and writing goes on (pi's editor).
            names, before = editor.menu_is_commands(), editor.text
            editor.apply_completion(choice)
            if not names and editor.text != before:
                return  # an argument already whole (``/thinking high``) runs at once
            editor.text = editor.text.rstrip(" ")  # the space the command's completion ends with
        text = editor.text
        if text.endswith("\\") and editor.cursor_position == len(text):
            editor.delete_before_cursor(1)
            editor.insert_text("\n")
            return
        editor.reset()
        actions.submit(mode, text)

    def menu_open() -> bool:
        return editor.menu_choice() is not None

    def accept_choice(event: KeyPressEvent) -> None:
        """Tab with the menu open takes the highlighted suggestion into the text and closes the
        menu (pi's editor), instead of stepping through the suggestions."""
        choice = editor.menu_choice()
        if choice is not None:
            editor.apply_completion(choice)

    def bind_jump(action: str, *, backward: bool) -> None:
        """pi's jump to the next (previous) place the character typed after the keys is."""

        def jump(event: KeyPressEvent) -> None:
            document = editor.document
            char = event.data
            if backward:
                found = document.find_backwards(char, in_current_line=False)
            else:
                found = document.find(char, in_current_line=False, include_current_position=False)
            if found is not None:
                editor.cursor_position += found

        for keys in mode.keymap.keys(action):
            bindings.add(*keys, Keys.Any, filter=in_editor)(jump)

    def new_line(event: KeyPressEvent) -> None:
        editor.insert_text("\n")

    def follow_up(event: KeyPressEvent) -> None:
        text = editor.text
        editor.reset()
        actions.submit(mode, text, follow_up=True)

    def interrupt(event: KeyPressEvent) -> None:
        if editor.complete_state is not None:
            editor.cancel_completion()
            return
        actions.interrupt(mode)

    def exit_on_empty(event: KeyPressEvent) -> None:
        if not editor.text:
            mode.quit()
        else:
            editor.delete(1)

    def toggle_tools(event: KeyPressEvent) -> None:
        mode.tools_expanded = not mode.tools_expanded
        mode.redraw_all()

    def toggle_thinking(event: KeyPressEvent) -> None:
        mode.show_thinking = not mode.show_thinking
        mode.redraw_all()

    def cycle_thinking(event: KeyPressEvent) -> None:
        level = mode.session.cycle_thinking_level(persist=True)
        if level is None:
            mode.chat.add_notice("Current model does not support thinking", "info")  # pi's words
        mode.invalidate()

    def cycle_model(direction: str) -> Callable[[KeyPressEvent], None]:
        def handler(event: KeyPressEvent) -> None:
            async def cycle() -> None:
                cycled = await mode.session.cycle_model(
                    "forward" if direction == "forward" else "backward", persist=True
                )
                # pi 1.6's words
                if cycled is None:
                    scoped = bool(mode.session.scoped_models)
                    mode.chat.add_notice(
                        "Only one model in scope" if scoped else "Only one model available", "info"
                    )
                else:
                    model = cycled.model
                    thinking = (
                        f" (thinking: {cycled.thinking_level})"
                        if model.reasoning and cycled.thinking_level not in (None, "off")
                        else ""
                    )
                    mode.chat.add_notice(f"Switched to {model.name or model.id}{thinking}", "info")

            mode.spawn(cycle())

        return handler

    def command(text: str) -> Callable[[KeyPressEvent], None]:
        def handler(event: KeyPressEvent) -> None:
            from tau.modes.interactive.commands import run_builtin_command

            run_builtin_command(mode, text)

        return handler

    def suspend(event: KeyPressEvent) -> None:
        mode.suspend()

    def paste_image(event: KeyPressEvent) -> None:
        mode.spawn(actions.paste_image(mode))

    def external_editor(event: KeyPressEvent) -> None:
        mode.spawn(open_external_editor(mode))

    def tab(event: KeyPressEvent) -> None:
        if menu_open():
            accept_choice(event)
        else:
            get_by_name("menu-complete").call(event)

    # Released first: every binding added after one for the same keys wins over it.
    for keys in mode.keymap.released_editor_keys():
        bindings.add(*keys, filter=in_editor)(lambda event: None)
    for action, name in EDITOR_COMMANDS.items():
        if action in mode.keymap.overridden:
            bind(action, get_by_name(name).call)
    if "tui.editor.deleteWordBackward" not in mode.keymap.overridden:
        # Ctrl+Backspace deletes a word as Alt+Backspace does, in the editor and in every dialog's
        # text, unless a picker's own key has it (the session picker's delete).
        bindings.add(CTRL_BACKSPACE)(get_by_name("backward-kill-word").call)
    if "tui.editor.jumpForward" in mode.keymap.overridden:
        bind_jump("tui.editor.jumpForward", backward=False)
    if "tui.editor.jumpBackward" in mode.keymap.overridden:
        bind_jump("tui.editor.jumpBackward", backward=True)

    # Up/Down are pi's history rules (see ``EditorBuffer``); the history actions browse whatever
    # the cursor's row.
    # A page of the editor (its most rows): pi's tui.editor.pageUp/pageDown. In fullscreen the
    # transcript's own page keys come first, as in pi.
    def page(direction: int) -> Callable[[KeyPressEvent], None]:
        """A page of the completion menu while it is open (its rows), else of the editor."""

        def handler(event: KeyPressEvent) -> None:
            if editor.menu_choice() is not None:
                editor.menu_page(direction, mode.session.services.settings_manager.autocomplete_max_visible)
            elif direction < 0:
                editor.cursor_up(count=EDITOR_ROWS)
            else:
                editor.cursor_down(count=EDITOR_ROWS)

        return handler

    bind("tui.editor.pageUp", page(-1))
    bind("tui.editor.pageDown", page(1))
    bind("tui.editor.cursorUp", lambda event: editor.history_up())
    bind("tui.editor.cursorDown", lambda event: editor.history_down())
    bind("tui.editor.historyPrevious", lambda event: editor.history_backward())
    bind("tui.editor.historyNext", lambda event: editor.history_forward())
    if "tui.input.tab" in mode.keymap.overridden:
        bind("tui.input.tab", tab)
    else:  # Tab opens completions by itself (prompt_toolkit); with the menu open it takes a row
        for keys in mode.keymap.keys("tui.input.tab"):
            bindings.add(*keys, filter=in_editor & Condition(menu_open))(accept_choice)
    bind("tui.input.submit", submit)
    bind("tui.input.newLine", new_line)
    bind("app.message.followUp", follow_up)
    bind("app.message.dequeue", lambda event: actions.dequeue(mode))
    bind("app.interrupt", interrupt, eager=lone_escape)
    bind("app.clear", lambda event: actions.clear_or_quit(mode))
    bind("app.exit", exit_on_empty)
    bind("app.suspend", suspend)
    bind("app.editor.external", external_editor)
    bind("app.clipboard.pasteImage", paste_image)
    bind("app.model.select", command("/model"))
    bind("app.model.cycleForward", cycle_model("forward"))
    bind("app.model.cycleBackward", cycle_model("backward"))
    bind("app.thinking.cycle", cycle_thinking)
    bind("app.tools.expand", toggle_tools)
    bind("app.thinking.toggle", toggle_thinking)
    bind("app.session.new", command("/new"))
    bind("app.session.tree", command("/tree"))
    bind("app.session.fork", command("/fork"))
    bind("app.session.resume", command("/resume"))
    _bind_extension_shortcuts(mode, bindings, in_editor)
    return bindings


def _bind_extension_shortcuts(mode: KeysHost, bindings: KeyBindings, in_editor: Condition) -> None:
    """Shortcuts extensions registered (``tau.register_shortcut``), in pi's key notation."""
    runner = mode.session.extension_runner
    if runner is None:
        return
    for key in runner.shortcuts:
        keys = to_prompt_toolkit_keys(key)
        if keys is None:
            continue

        def handler(event: KeyPressEvent, key: str = key) -> None:
            mode.spawn(mode.session.extension_runner.run_shortcut(key))  # type: ignore[union-attr]

        bindings.add(*keys, filter=in_editor)(handler)
