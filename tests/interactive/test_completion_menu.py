"""The completion menu under the editor as pi 1.6's list: what Tab, a click and Enter take, and
the rows ``menu_lines`` draws for any names, descriptions and sizes."""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import given, settings
from hypothesis import strategies as st
from prompt_toolkit.completion import Completion
from prompt_toolkit.utils import get_cwidth
from terminal import ENTER, Terminal

from tau.modes.interactive.completion_menu import menu_lines

Start = Callable[..., Terminal]
DOWN = "\x1b[B"
TAB = "\t"


def _editor_line(terminal: Terminal) -> str:
    """The editor's text: the line between its two rules."""
    lines = [line.strip() for line in terminal.display().splitlines()]
    rules = [i for i, line in enumerate(lines) if line and set(line) == {"─"}]
    return lines[rules[-1] - 1]


def test_tab_takes_the_highlighted_command_with_a_space_and_closes_the_menu(start_tui: Start) -> None:
    terminal = start_tui(cols=120)
    terminal.type("/")
    terminal.wait_for("→ settings", where="display")
    terminal.send(DOWN)
    terminal.send(DOWN)
    terminal.wait_for("→ tree", where="display")
    assert _editor_line(terminal) == "/"  # moving the mark leaves the text as typed
    terminal.send(TAB)
    terminal.wait_for(lambda: "→ " not in terminal.display(), where="display")
    terminal.type("x")  # after the space the completion ends with
    terminal.wait_for(lambda: _editor_line(terminal) == "/tree x", where="display")


def test_a_click_on_a_row_takes_it_and_enter_runs_the_highlighted_command(start_tui: Start) -> None:
    terminal = start_tui(cols=120, tui_mode=None)  # fullscreen: the mouse is the app's
    terminal.type("/")
    terminal.wait_for("→ settings", where="display")
    row = next(n for n, line in enumerate(terminal.display().splitlines(), 1) if line.startswith("  model "))
    terminal.send(f"\x1b[<0;5;{row}M\x1b[<0;5;{row}m")
    terminal.wait_for(lambda: _editor_line(terminal) == "/model", where="display")
    terminal.send("\x15")  # Ctrl+U: an empty editor
    terminal.type("/sess")
    terminal.wait_for("→ session", where="display")
    terminal.send(ENTER)
    terminal.wait_for("Session Info", where="display")


CHOICES = st.lists(
    st.tuples(st.text(min_size=1, max_size=40), st.text(max_size=80)), min_size=1, max_size=40
).map(lambda pairs: [Completion(name, display=name, display_meta=meta) for name, meta in pairs])


@settings(max_examples=200, deadline=None, derandomize=True)
@given(CHOICES, st.data(), st.integers(20, 160), st.integers(1, 20), st.booleans())
def test_the_rows_fit_the_width_keep_the_highlighted_one_and_count_when_not_all_fit(
    choices: list[Completion], data: st.DataObject, width: int, visible: int, commands: bool
) -> None:
    selected = data.draw(st.integers(0, len(choices) - 1))
    text = "".join(
        fragment[1] for fragment in menu_lines(choices, selected, width, visible, commands=commands)
    )
    lines = text.split("\n")
    shown = min(len(choices), visible)
    counter = len(choices) > visible
    assert len(lines) == shown + counter
    assert sum(line.startswith("→ ") for line in lines) == 1
    assert all(get_cwidth(line) <= width for line in lines)
    if counter:
        assert lines[-1] == f"  ({selected + 1}/{len(choices)})"[: max(1, width - 2)]
