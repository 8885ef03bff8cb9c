"""What a pi 1.6 user sees in the real `tau` in a pseudo-terminal: fullscreen and the system theme by
default, OSC 8 links, 24-bit colour or 256, inline images (kitty, iTerm2, or the text line), Mermaid
diagrams, and the /settings rows that go with them."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from tau_command import TauCommand
from terminal import ENTER, ESCAPE, Terminal

from tau.testing.fake_llm import Turn

Start = Callable[..., Terminal]

PNG_1X1 = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cfc0f01f0005000201e5273cd20000000049454e44ae426082"
)
_RGB = re.compile(rb"\x1b\[[0-9;]*[34]8;2;")


def _ask(terminal: Terminal, text: str) -> None:
    terminal.type(text)
    terminal.send(ENTER)


def _settings(tau: TauCommand, values: dict[str, Any]) -> None:
    (tau.agent_dir / "settings.json").write_text(json.dumps(values))


def _saved(tau: TauCommand) -> dict[str, Any]:
    path = tau.agent_dir / "settings.json"
    return json.loads(path.read_text()) if path.exists() else {}


def _terminal_env(tau: TauCommand, **values: str) -> None:
    """A terminal tau knows nothing of (no program markers), then ``values``."""
    for name in ("TERM_PROGRAM", "KITTY_WINDOW_ID", "ITERM_SESSION_ID", "TMUX", "WT_SESSION", "COLORTERM"):
        tau.env.pop(name, None)
    for name in ("HYPERLINKS", "TRUE_COLOR", "IMAGE_PROTOCOL"):
        tau.env.pop(f"TAU_{name}", None)
        tau.env.pop(f"PI_{name}", None)
    tau.env["TERM"] = "xterm-256color"
    tau.env.update(values)


# -- defaults ----------------------------------------------------------------------------------------


def test_tau_starts_fullscreen_with_the_system_theme_by_default(tau: TauCommand, start_tui: Start) -> None:
    terminal = start_tui(tui_mode=None)
    assert terminal.on_alternate_screen
    terminal.wait_for(lambda: b"\x1b]11;?" in terminal.raw)  # the system theme asks for the background


def test_tui_mode_regular_keeps_the_inline_ui(tau: TauCommand, start_tui: Start) -> None:
    terminal = start_tui(tui_mode="regular")
    assert not terminal.on_alternate_screen
    assert b"\x1b[?1049h" not in terminal.raw


def test_the_tui_mode_setting_regular_keeps_the_inline_ui(tau: TauCommand, start_tui: Start) -> None:
    _settings(tau, {"tuiMode": "regular"})
    terminal = start_tui(tui_mode=None)
    assert not terminal.on_alternate_screen


# -- links and colours -------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["regular", "fullscreen"])
def test_links_are_osc_8_hyperlinks_where_the_terminal_has_them(
    tau: TauCommand, start_tui: Start, mode: str
) -> None:
    _terminal_env(tau, TAU_HYPERLINKS="1")
    tau.server.add(Turn(text="See [the docs](https://example.com/docs) now."))
    terminal = start_tui(tui_mode=mode)
    _ask(terminal, "where")
    terminal.wait_for("the docs now.")
    assert b"\x1b]8;;https://example.com/docs\x1b\\" in terminal.raw
    assert "(https://example.com/docs)" not in terminal.text()


def test_links_are_text_and_address_on_an_unknown_terminal(tau: TauCommand, start_tui: Start) -> None:
    _terminal_env(tau)
    tau.server.add(Turn(text="See [the docs](https://example.com/docs) now."))
    terminal = start_tui()
    _ask(terminal, "where")
    terminal.wait_for("the docs (https://example.com/docs) now.")
    assert b"\x1b]8;;https" not in terminal.raw


def test_the_hyperlinks_setting_overrides_the_detection(tau: TauCommand, start_tui: Start) -> None:
    _terminal_env(tau, TERM_PROGRAM="kitty")  # a terminal that has them
    _settings(tau, {"terminal": {"hyperlinks": False}})
    tau.server.add(Turn(text="See [the docs](https://example.com/docs) now."))
    terminal = start_tui()
    _ask(terminal, "where")
    terminal.wait_for("the docs (https://example.com/docs) now.")


def test_true_colour_where_detected_and_256_colours_when_the_setting_says_so(
    tau: TauCommand, start_tui: Start
) -> None:
    _terminal_env(tau, COLORTERM="truecolor")
    tau.server.add(Turn(text="Some **bold** and `code`."))
    terminal = start_tui("--theme", "dark")
    _ask(terminal, "colour")
    terminal.wait_for("Some bold and code.")
    assert _RGB.search(bytes(terminal.raw))
    terminal.close()

    _settings(tau, {"terminal": {"trueColor": False}})
    tau.server.add(Turn(text="Some **bold** and `code`."))
    terminal = start_tui("--theme", "dark")
    _ask(terminal, "colour")
    terminal.wait_for("Some bold and code.")
    assert not _RGB.search(bytes(terminal.raw))
    assert b"38;5;" in terminal.raw


# -- images ------------------------------------------------------------------------------------------


def _image_run(tau: TauCommand, start_tui: Start, mode: str = "regular") -> Terminal:
    models = json.loads((tau.agent_dir / "models.json").read_text())
    models["providers"]["local"]["models"][0]["input"] = ["text", "image"]
    (tau.agent_dir / "models.json").write_text(json.dumps(models))
    (tau.work / "pic.png").write_bytes(PNG_1X1)
    tau.server.add(Turn(text="A dot."))
    terminal = start_tui("@pic.png", "what is it", tui_mode=mode)
    terminal.wait_for("A dot.")
    return terminal


def test_an_attached_image_is_drawn_by_kittys_protocol(tau: TauCommand, start_tui: Start) -> None:
    _terminal_env(tau, TERM_PROGRAM="kitty")
    terminal = _image_run(tau, start_tui)
    assert b"\x1b_Ga=T,f=100,q=2,C=1,c=" in terminal.raw
    assert b"[image: image/png" not in terminal.raw


def test_an_attached_image_is_drawn_by_iterm2s_protocol(tau: TauCommand, start_tui: Start) -> None:
    _terminal_env(tau, TAU_IMAGE_PROTOCOL="iterm2")
    terminal = _image_run(tau, start_tui)
    assert b"\x1b]1337;File=inline=1;size=" in terminal.raw


def test_an_image_is_a_text_line_where_the_terminal_draws_none(tau: TauCommand, start_tui: Start) -> None:
    _terminal_env(tau)
    terminal = _image_run(tau, start_tui)
    assert "[image: image/png" in terminal.text()
    assert b"\x1b_G" not in terminal.raw and b"1337;File" not in terminal.raw


def test_the_images_setting_false_keeps_the_text_line(tau: TauCommand, start_tui: Start) -> None:
    _terminal_env(tau, TERM_PROGRAM="kitty")
    _settings(tau, {"terminal": {"images": False}})
    terminal = _image_run(tau, start_tui)
    assert "[image: image/png" in terminal.text()
    assert b"\x1b_G" not in terminal.raw


def test_fullscreen_places_kitty_images_over_their_rows(tau: TauCommand, start_tui: Start) -> None:
    _terminal_env(tau, TERM_PROGRAM="kitty")
    terminal = _image_run(tau, start_tui, mode="fullscreen")
    terminal.wait_for(lambda: b"\x1b_Ga=p,i=" in terminal.raw)
    transmitted = re.search(rb"\x1b_Ga=t,f=100,q=2,i=(\d+)[,;]", bytes(terminal.raw))
    assert transmitted is not None
    assert b"\x1b_Ga=p,i=" + transmitted.group(1) + b",p=1,q=2,C=1,c=" in terminal.raw
    assert "[image: image/png" not in terminal.display()


def test_a_kitty_image_scrolled_partly_out_of_the_fullscreen_pane_is_cropped(
    tau: TauCommand, start_tui: Start
) -> None:
    _terminal_env(tau, TERM_PROGRAM="kitty")
    terminal = _image_run(tau, start_tui, mode="fullscreen")
    terminal.wait_for(lambda: b"\x1b_Ga=p,i=" in terminal.raw)
    tau.server.add(Turn(text="\n\n".join(f"paragraph {n}" for n in range(40))))
    _ask(terminal, "more")
    terminal.wait_for("paragraph 39", where="display")
    assert "Ga=" not in terminal.display()  # the terminal takes image commands in whole
    start = len(terminal.raw)
    terminal.send("\x1b[1;5H")  # Ctrl+Home: the top, where the image's last rows are below the pane
    terminal.wait_for(
        lambda: re.search(rb"a=p,i=\d+,p=1,q=2,C=1,c=\d+,r=\d+,y=\d+,h=\d+", terminal.raw[start:])
    )


def test_fullscreen_shows_the_text_line_for_an_iterm2_image(tau: TauCommand, start_tui: Start) -> None:
    _terminal_env(tau, TAU_IMAGE_PROTOCOL="iterm2")
    terminal = _image_run(tau, start_tui, mode="fullscreen")
    assert "[image: image/png" in terminal.display()
    assert b"1337;File" not in terminal.raw


# -- Mermaid -----------------------------------------------------------------------------------------

MERMAID = "Here:\n\n```mermaid\ngraph LR\n  A[Start] --> B[Finish]\n```\n\nDone."


@pytest.mark.parametrize("mode", ["regular", "fullscreen"])
def test_a_mermaid_block_is_drawn_as_a_diagram(tau: TauCommand, start_tui: Start, mode: str) -> None:
    tau.server.add(Turn(text=MERMAID))
    terminal = start_tui(tui_mode=mode)
    _ask(terminal, "draw")
    terminal.wait_for("Done.")
    terminal.wait_for("│ Start ├──▶│ Finish │", where="display" if mode == "fullscreen" else "text")
    assert "graph LR" not in terminal.text()


def test_mermaid_off_shows_the_code(tau: TauCommand, start_tui: Start) -> None:
    _settings(tau, {"markdown": {"mermaid": "off"}})
    tau.server.add(Turn(text=MERMAID))
    terminal = start_tui()
    _ask(terminal, "draw")
    terminal.wait_for("Done.")
    assert "A[Start] --> B[Finish]" in terminal.text()
    assert "│ Start │" not in terminal.text()


def test_mermaid_final_draws_the_diagram_once_the_reply_is_complete(
    tau: TauCommand, start_tui: Start
) -> None:
    _settings(tau, {"markdown": {"mermaid": "final"}})
    tau.server.add(Turn(text=MERMAID, chunk_size=4))
    terminal = start_tui()
    _ask(terminal, "draw")
    terminal.wait_for("Done.")
    terminal.wait_for("│ Start ├──▶│ Finish │")


# -- /settings ---------------------------------------------------------------------------------------


def _open_settings(terminal: Terminal) -> None:
    _ask(terminal, "/settings")
    terminal.wait_for("Settings", where="display")


def _setting_row(terminal: Terminal, label: str, value: str) -> Callable[[], bool]:
    """Whether /settings highlights ``label`` with ``value`` in the values' column."""

    def check() -> bool:
        return any(
            line.startswith(f"› {label}  ") and line[2:].rstrip().removeprefix(label).strip() == value
            for line in terminal.display().splitlines()
        )

    return check


def _rows(terminal: Terminal, name: str) -> bool:
    terminal.type(name)
    terminal.settle()
    shown = name.capitalize() in terminal.display()
    terminal.send("\x15")
    return shown


def test_the_image_rows_show_only_where_the_terminal_draws_images(tau: TauCommand, start_tui: Start) -> None:
    _terminal_env(tau)
    terminal = start_tui()
    _open_settings(terminal)
    assert not _rows(terminal, "show images")
    assert _rows(terminal, "auto-resize images")
    terminal.close()

    _terminal_env(tau, TERM_PROGRAM="kitty")
    terminal = start_tui()
    _open_settings(terminal)
    assert _rows(terminal, "show images")
    terminal.type("image width")
    terminal.wait_for(_setting_row(terminal, "Image width", "60"))
    terminal.send(ENTER)
    terminal.type("120")
    terminal.wait_for("› 120", where="display")
    terminal.send(ENTER)
    terminal.wait_for(_setting_row(terminal, "Image width", "120"))
    assert _saved(tau)["terminal"]["imageWidthCells"] == 120


def test_settings_sets_and_clears_a_models_default_thinking_level(tau: TauCommand, start_tui: Start) -> None:
    models = json.loads((tau.agent_dir / "models.json").read_text())
    models["providers"]["local"]["models"][0]["reasoning"] = True
    (tau.agent_dir / "models.json").write_text(json.dumps(models))
    terminal = start_tui()
    _open_settings(terminal)
    terminal.type("per model")
    terminal.wait_for(_setting_row(terminal, "Default thinking level per model", "none"))
    terminal.send(ENTER)
    terminal.wait_for("› local/fake-model", where="display")
    terminal.send(ENTER)
    terminal.wait_for("Thinking level for local/fake-model", where="display")
    terminal.type("high")
    terminal.wait_for("› high", where="display")
    terminal.send(ENTER)
    terminal.wait_for("› local/fake-model (high)", where="display")
    assert _saved(tau)["modelThinkingLevels"] == {"local/fake-model": "high"}
    terminal.send(ENTER)
    terminal.type("clear")
    terminal.wait_for("› (clear override)", where="display")
    terminal.send(ENTER)
    terminal.wait_for(lambda: _saved(tau)["modelThinkingLevels"] == {})
    terminal.send(ESCAPE)
    terminal.wait_for(_setting_row(terminal, "Default thinking level per model", "none"))


def test_a_models_thinking_level_from_settings_is_where_it_starts(tau: TauCommand, start_tui: Start) -> None:
    models = json.loads((tau.agent_dir / "models.json").read_text())
    models["providers"]["local"]["models"][0]["reasoning"] = True
    (tau.agent_dir / "models.json").write_text(json.dumps(models))
    _settings(tau, {"modelThinkingLevels": {"local/fake-model": "high"}})
    terminal = start_tui()
    terminal.wait_for("fake-model • high", where="display")


def test_clear_on_shrink_leaves_no_rows_of_a_closed_menu(tau: TauCommand, start_tui: Start) -> None:
    _settings(tau, {"terminal": {"clearOnShrink": True}})
    terminal = start_tui()
    terminal.type("/")
    terminal.wait_for("→ settings", where="display")
    terminal.send("\x7f")  # Backspace: the menu closes, the live area shrinks
    terminal.wait_for(lambda: "→ settings" not in terminal.display())
