"""The message editor's buffer and its completions: ``/`` commands, ``@`` project files (fuzzy),
and file paths on Tab."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from collections.abc import Callable, Iterable, Sequence

from msgspec import Struct
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.completion import CompleteEvent, Completer, Completion, PathCompleter
from prompt_toolkit.document import Document
from prompt_toolkit.history import InMemoryHistory

from tau.modes.interactive import graphemes
from tau.modes.interactive.fuzzy import fuzzy_filter, pi_fuzzy_filter

__all__ = [
    "ArgumentChoice",
    "CompletionCommand",
    "EditorBuffer",
    "EditorCompleter",
    "ProjectFiles",
    "create_editor_buffer",
]

_MAX_FILES = 50_000
_MAX_SUGGESTIONS = 30
MAX_HISTORY = 100


class ArgumentChoice(Struct, frozen=True):
    """One suggestion for a command's argument: what goes into the text, what the menu shows."""

    value: str
    label: str = ""
    description: str = ""


ArgumentCompleter = Callable[[str], Sequence[ArgumentChoice] | None]


class CompletionCommand(Struct, frozen=True):
    name: str
    description: str = ""
    arguments: ArgumentCompleter | None = None
    """Suggestions for the argument typed so far (pi's ``getArgumentCompletions``)."""


class ProjectFiles:
    """The files under ``cwd`` that ``@`` offers (ripgrep's list: ignores .gitignore'd files),
    read once in a background thread."""

    def __init__(self, cwd: str) -> None:
        self.cwd = cwd
        self._files: list[str] | None = None
        self._lock = threading.Lock()
        self._started = False

    def start(self) -> None:
        with self._lock:
            if self._started:
                return
            self._started = True
        threading.Thread(target=self._load, name="tau-project-files", daemon=True).start()

    def get(self) -> list[str]:
        self.start()
        return self._files or []

    def _load(self) -> None:
        self._files = _list_files(self.cwd)


def _list_files(cwd: str) -> list[str]:
    from tau.tools.ripgrep import find_rg

    rg = find_rg() or shutil.which("rg")
    if rg:
        try:
            run = subprocess.run(
                [rg, "--files", "--hidden", "--glob", "!.git"],
                cwd=cwd,
                capture_output=True,
                text=True,
                timeout=10,
                check=False,
            )
            return run.stdout.splitlines()[:_MAX_FILES]
        except (OSError, subprocess.SubprocessError):
            pass
    found: list[str] = []
    for root, dirs, files in os.walk(cwd):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d != "node_modules"]
        for name in files:
            found.append(os.path.relpath(os.path.join(root, name), cwd))
            if len(found) >= _MAX_FILES:
                return found
    return found


class EditorCompleter(Completer):
    def __init__(self, commands: Callable[[], Sequence[CompletionCommand]], files: ProjectFiles) -> None:
        self._commands = commands
        self.files = files
        self._paths = PathCompleter(expanduser=True)

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        before = document.text_before_cursor
        if _names_a_command(before):
            for command in _matching_commands(before[1:], self._commands()):
                yield Completion(
                    "/" + command.name + " ",  # as pi's: the name and a space, ready for an argument
                    start_position=-len(before),
                    display=command.name,  # pi's menu lists the names without the slash
                    display_meta=command.description,
                )
            return
        if before.startswith("/") and "\n" not in before:
            name, _, typed = before[1:].partition(" ")
            found = next((c for c in self._commands() if c.name == name), None)
            if found is not None and found.arguments is not None:
                yield from _argument_completions(found.arguments, typed)
                return
        word = before.split()[-1] if before and not before[-1].isspace() else ""
        if word.startswith("@"):
            query = word[1:]
            files = self.files.get()
            for path in fuzzy_filter(query, files, lambda f: f, limit=_MAX_SUGGESTIONS):
                yield Completion("@" + path + " ", start_position=-len(word), display=path)
            return
        if complete_event.completion_requested and word:
            yield from self._paths.get_completions(Document(word, len(word)), complete_event)


def _names_a_command(before: str) -> bool:
    """Whether the text before the cursor is ``/`` and a word: the menu then offers command names."""
    return before.startswith("/") and " " not in before and "\n" not in before


def _matching_commands(query: str, commands: Sequence[CompletionCommand]) -> list[CompletionCommand]:
    """The commands for ``/query``, all of them, ranked as pi 1.6 ranks them: by the name without
    a ``skill:`` prefix first, then the skills matched only with it."""
    bare = pi_fuzzy_filter(query, commands, lambda c: c.name.removeprefix("skill:"))
    chosen = set(map(id, bare))
    skills = [c for c in commands if c.name.startswith("skill:") and id(c) not in chosen]
    return bare + pi_fuzzy_filter(query, skills, lambda c: c.name)


def _argument_completions(arguments: ArgumentCompleter, typed: str) -> Iterable[Completion]:
    """A command's suggestions for ``typed``, each replacing it; none when the command's
    completer fails (an extension's may), as when it has nothing to offer."""
    try:
        choices = list(arguments(typed) or ())
    except Exception:  # an extension's completer: its failure only means no suggestions
        return
    for choice in choices:
        yield Completion(
            choice.value,
            start_position=-len(typed),
            display=choice.label or choice.value,
            display_meta=choice.description,
        )


class EditorBuffer(Buffer):
    """The editor, with pi's Up/Down: on the first line Up recalls the previous message (when the
    editor is empty, the cursor is at the line's start or a message is already recalled), else it
    goes to the line's start; on the last line Down goes to a newer message while one is
    recalled, else to the line's end. Between them the arrows move the cursor.

    The cursor stays on grapheme cluster boundaries, and Backspace / Delete take a whole cluster:
    one press removes 👩‍👩‍👧 or é (e + U+0301), never a code point of it."""

    _menu_state: object = None
    _menu_index = 0

    def menu_index(self) -> int:
        """The completion menu's highlighted row, as pi's: the first when the menu opens; Up and
        Down move it (``menu_move``) without touching the text, which only Tab or Enter change."""
        state = self.complete_state
        if state is None or not state.completions:
            return 0
        if state is not self._menu_state:
            self._menu_state, self._menu_index = state, 0
        return min(self._menu_index, len(state.completions) - 1)

    def menu_move(self, step: int) -> None:
        """Move the highlighted row ``step`` rows, wrapping round at either end (pi's list)."""
        if choices := self.menu_choices():
            self._menu_index = (self.menu_index() + step) % len(choices)

    def menu_page(self, direction: int, page: int) -> None:
        """Page Up (``-1``) or Down (``1``): the mark ``page`` rows on, stopping at either end
        (pi's list)."""
        if choices := self.menu_choices():
            self._menu_index = max(0, min(len(choices) - 1, self.menu_index() + direction * page))

    def menu_pick(self, index: int, *, take: bool) -> None:
        """A click on row ``index``: a press highlights it, the release (``take``) takes it into
        the text as Tab does (pi's list)."""
        state = self.complete_state
        if state is None or not 0 <= index < len(state.completions):
            return
        self.menu_index()  # the menu's state is this one's before the index is set
        self._menu_index = index
        if take:
            self.apply_completion(state.completions[index])

    def menu_choices(self) -> list[Completion]:
        """The completion menu's rows (none while it is closed)."""
        state = self.complete_state
        return state.completions if state is not None else []

    def menu_is_commands(self) -> bool:
        """Whether the menu offers command names (the text so far is ``/`` and a word)."""
        return _names_a_command(self.document.text_before_cursor)

    def menu_choice(self) -> Completion | None:
        """The highlighted completion, or ``None`` when the menu is closed or empty."""
        choices = self.menu_choices()
        return choices[self.menu_index()] if choices else None

    @property
    def cursor_position(self) -> int:
        return Buffer.cursor_position.fget(self)  # type: ignore[attr-defined,no-any-return]

    @cursor_position.setter
    def cursor_position(self, value: int) -> None:
        text = self.text
        value = max(0, min(value, len(text)))
        value = graphemes.snap(text, value, forward=value > self.cursor_position)
        Buffer.cursor_position.fset(self, value)  # type: ignore[attr-defined]

    def delete_before_cursor(self, count: int = 1) -> str:
        position = self.cursor_position
        start = graphemes.cluster_start(self.text, max(0, position - count))
        return super().delete_before_cursor(position - start)

    def delete(self, count: int = 1) -> str:
        position = self.cursor_position
        end = min(position + count, len(self.text))
        if not graphemes.is_boundary(self.text, end):
            end = graphemes.cluster_end(self.text, end)
        return super().delete(end - position)

    def remember(self, text: str) -> None:
        """Add a sent message to the history (not twice in a row)."""
        text = text.strip()
        strings = self.history.get_strings()
        if text and (not strings or strings[-1] != text):
            self.history.append_string(text)

    def _browsing(self) -> bool:
        return self.working_index < len(self._working_lines) - 1

    def history_up(self) -> None:
        document = self.document
        if self.complete_state is not None:
            self.menu_move(-1)
        elif document.cursor_position_row > 0:
            self.cursor_up()
        elif not self.text or self._browsing() or document.cursor_position_col == 0:
            before = self.working_index
            self.history_backward()
            if self.working_index != before:
                self.cursor_position = 0  # so that the next Up goes on back, as in pi
        else:
            self.cursor_position += document.get_start_of_line_position()

    def history_down(self) -> None:
        document = self.document
        if self.complete_state is not None:
            self.menu_move(1)
        elif document.cursor_position_row < document.line_count - 1:
            self.cursor_down()
        elif self._browsing():
            self.history_forward()
            self.cursor_position = len(self.text)
        else:
            self.cursor_position += document.get_end_of_line_position()


def create_editor_buffer(completer: Completer, history: Sequence[str]) -> EditorBuffer:
    """A multi-line buffer; Enter is the app's to bind (submit), so ``multiline`` stays on."""
    past = InMemoryHistory()
    for text in history[-MAX_HISTORY:]:
        past.append_string(text)
    return EditorBuffer(
        multiline=True,
        completer=completer,
        complete_while_typing=True,
        history=past,
        enable_history_search=False,
    )
