"""``/hotkeys``: pi 1.6's tables of keys, Navigation, Editing and Other, with the same actions in
each (in tau's words), the keys the user's keymap gives them (as ``keybindings.json`` writes
them), and the shortcuts extensions registered in a table of their own."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from tau.modes.interactive.keymap import Keymap

__all__ = ["SECTIONS", "hotkeys_markdown"]

Row = tuple[tuple[str, ...], str]
"""The actions of a row (their keys joined with `` / ``) or a literal key (``/``), and what it does."""

SECTIONS: Sequence[tuple[str, Sequence[Row]]] = (
    (
        "Navigation",
        (
            (
                (
                    "tui.editor.cursorUp",
                    "tui.editor.cursorDown",
                    "tui.editor.cursorLeft",
                    "tui.editor.cursorRight",
                ),
                "Move the cursor; up and down past the ends go through the messages sent",
            ),
            (("tui.editor.cursorWordLeft", "tui.editor.cursorWordRight"), "A word back / forward"),
            (("tui.editor.cursorLineStart",), "To the start of the line"),
            (("tui.editor.cursorLineEnd",), "To the end of the line"),
            (("tui.editor.jumpForward",), "On to the next place of the character typed next"),
            (("tui.editor.jumpBackward",), "Back to the last place of the character typed next"),
            (("tui.editor.pageUp", "tui.editor.pageDown"), "A page of the editor up / down"),
        ),
    ),
    (
        "Editing",
        (
            (("tui.input.submit",), "Send the message (a steering message while the agent works)"),
            (("tui.input.newLine",), "A new line (or end the line with \\ and press Enter)"),
            (("tui.editor.deleteWordBackward",), "Delete the word before the cursor"),
            (("tui.editor.deleteWordForward",), "Delete the word after the cursor"),
            (("tui.editor.deleteToLineStart",), "Delete back to the start of the line"),
            (("tui.editor.deleteToLineEnd",), "Delete on to the end of the line"),
            (("tui.editor.yank",), "Put back the text deleted last"),
            (("tui.editor.yankPop",), "Right after that: the text deleted before it instead"),
            (("tui.editor.undo",), "Undo"),
        ),
    ),
    (
        "Other",
        (
            (("tui.input.tab",), "Complete a path / take the completion highlighted"),
            (("app.interrupt",), "Close the completions / stop the run"),
            (("app.clear",), "Clear the editor; twice quickly: quit"),
            (("app.exit",), "Quit (on an empty editor)"),
            (("app.suspend",), "Suspend to the background"),
            (("app.thinking.cycle",), "Next thinking level"),
            (("app.model.cycleForward", "app.model.cycleBackward"), "Next / previous model"),
            (("app.model.select",), "Choose a model"),
            (("app.tools.expand",), "Expand or collapse tool output"),
            (("app.thinking.toggle",), "Show or hide thinking"),
            (("app.editor.external",), "Edit the message in your editor (externalEditor, $VISUAL, $EDITOR)"),
            (("app.message.copy",), "Fullscreen: copy the selection (with fullscreenCopyOnSelect off)"),
            (("app.message.followUp",), "Queue a follow-up message"),
            (("app.message.dequeue",), "Move queued messages back into the editor"),
            (("app.clipboard.pasteImage",), "Attach the image on the clipboard"),
            (("/",), "Commands"),
            (("!",), "Run a shell command"),
            (("!!",), "Run a shell command, its output kept from the model"),
        ),
    ),
)


def _keys(keymap: Keymap, actions: tuple[str, ...]) -> str:
    if not actions[0][0].isalpha():
        return actions[0]  # a literal key
    keys = [keymap.describe(action).replace(", ", "/") for action in actions]
    return " / ".join(key for key in keys if key) or "(unbound)"


def _cell(text: str) -> str:
    return "`" + text.replace("|", "\\|") + "`"


def _table(rows: Iterable[tuple[str, str]]) -> list[str]:
    return ["| Key | Action |", "|-----|--------|", *(f"| {_cell(key)} | {what} |" for key, what in rows)]


def hotkeys_markdown(keymap: Keymap, shortcuts: Iterable[tuple[str, str]] = ()) -> str:
    """The tables as Markdown under pi's title; ``shortcuts`` are the extensions' (key, what it
    does), in an "Extensions" table when there are any."""
    parts = ["**Keyboard Shortcuts**"]
    for title, rows in SECTIONS:
        parts += ["", f"**{title}**", *_table((_keys(keymap, actions), what) for actions, what in rows)]
    extension_rows = list(shortcuts)
    if extension_rows:
        parts += ["", "**Extensions**", *_table(extension_rows)]
    return "\n".join(parts)
