"""The application's key bindings: each action of the keymap bound to what it does."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from prompt_toolkit.application import get_app
from prompt_toolkit.filters import Condition, FilterOrBool
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

from tau.modes.interactive import actions

if TYPE_CHECKING:
    from tau.modes.interactive.app import InteractiveMode

__all__ = ["build_key_bindings", "lone_escape"]


@Condition
def lone_escape() -> bool:
    """Esc with nothing after it in the same read from the terminal: a press of Esc itself, to
    act on at once. Esc with more behind it (ESC CR, ESC b, the ESC [1;3A that the parser splits
    into Esc + Up) is a terminal's Alt+key and waits for its second half."""
    return not get_app().key_processor.input_queue


def build_key_bindings(mode: InteractiveMode) -> KeyBindings:
    bindings = KeyBindings()
    in_editor = Condition(lambda: mode.dialog is None)
    editor = mode.editor

    def bind(action: str, handler: Callable[[KeyPressEvent], None], *, eager: FilterOrBool = False) -> None:
        for keys in mode.keymap.keys(action):
            bindings.add(*keys, filter=in_editor, eager=eager)(handler)

    def submit(event: KeyPressEvent) -> None:
        state = editor.complete_state
        if state is not None and state.completions:
            # Enter takes the highlighted suggestion (the first when none is): a command then
            # runs, a file reference goes into the text and writing goes on.
            editor.apply_completion(state.current_completion or state.completions[0])
            if not editor.text.startswith("/"):
                return
        text = editor.text
        if text.endswith("\\") and editor.cursor_position == len(text):
            editor.delete_before_cursor(1)
            editor.insert_text("\n")
            return
        editor.reset()
        actions.submit(mode, text)

    def file_menu_open() -> bool:
        state = editor.complete_state
        words = editor.document.text_before_cursor.split()
        return state is not None and bool(state.completions) and bool(words) and words[-1].startswith("@")

    def accept_file(event: KeyPressEvent) -> None:
        """Tab in the ``@`` menu takes the highlighted file (the first when none is) and closes
        the menu, as Enter does, instead of stepping through the files."""
        state = editor.complete_state
        if state is not None and state.completions:
            editor.apply_completion(state.current_completion or state.completions[0])

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
        level = mode.session.cycle_thinking_level()
        if level is None:
            mode.chat.add_notice("This model has no thinking levels", "info")
        mode.invalidate()

    def cycle_model(direction: str) -> Callable[[KeyPressEvent], None]:
        def handler(event: KeyPressEvent) -> None:
            async def cycle() -> None:
                cycled = await mode.session.cycle_model("forward" if direction == "forward" else "backward")
                if cycled is None:
                    mode.chat.add_notice("Only one model is available", "info")
                else:
                    mode.chat.add_notice(f"Model: {cycled.model.provider}/{cycled.model.id}", "info")

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
        from tau.modes.interactive.external_editor import open_external_editor

        mode.spawn(open_external_editor(mode))

    # Up/Down are fixed keys, not keymap actions: pi's history rules (see ``EditorBuffer``).
    bindings.add("up", filter=in_editor)(lambda event: editor.history_up())
    bindings.add("down", filter=in_editor)(lambda event: editor.history_down())
    bindings.add("tab", filter=in_editor & Condition(file_menu_open))(accept_file)
    bind("submit", submit)
    bind("newLine", new_line)
    bind("followUp", follow_up)
    bind("dequeue", lambda event: actions.dequeue(mode))
    bind("interrupt", interrupt, eager=lone_escape)
    bind("clear", lambda event: actions.clear_or_quit(mode))
    bind("exit", exit_on_empty)
    bind("suspend", suspend)
    bind("externalEditor", external_editor)
    bind("pasteImage", paste_image)
    bind("selectModel", command("/model"))
    bind("cycleModelForward", cycle_model("forward"))
    bind("cycleModelBackward", cycle_model("backward"))
    bind("cycleThinkingLevel", cycle_thinking)
    bind("expandTools", toggle_tools)
    bind("toggleThinking", toggle_thinking)
    bind("newSession", command("/new"))
    bind("tree", command("/tree"))
    bind("fork", command("/fork"))
    bind("resume", command("/resume"))
    _bind_extension_shortcuts(mode, bindings, in_editor)
    return bindings


def _bind_extension_shortcuts(mode: InteractiveMode, bindings: KeyBindings, in_editor: Condition) -> None:
    """Shortcuts extensions registered (``tau.register_shortcut``), in pi's key notation."""
    from tau.modes.interactive.keymap import to_prompt_toolkit_keys

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
