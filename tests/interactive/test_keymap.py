"""Key names from keybindings.json become prompt_toolkit key sequences; the user's file wins."""

from __future__ import annotations

import json
from pathlib import Path

from tau.modes.interactive.keymap import load_keymap, to_prompt_toolkit_keys


def test_plain_ctrl_alt_and_shift_keys_translate() -> None:
    assert to_prompt_toolkit_keys("ctrl+o") == ("c-o",)
    assert to_prompt_toolkit_keys("alt+enter") == ("escape", "enter")
    assert to_prompt_toolkit_keys("alt+up") == ("escape", "up")
    assert to_prompt_toolkit_keys("shift+tab") == ("s-tab",)
    assert to_prompt_toolkit_keys("escape") == ("escape",)
    assert to_prompt_toolkit_keys("ctrl+-") == ("c-_",)


def test_keys_a_terminal_cannot_send_are_refused() -> None:
    assert to_prompt_toolkit_keys("ctrl+shift+p") is None
    assert to_prompt_toolkit_keys("hyper+x") is None
    assert to_prompt_toolkit_keys("") is None


def test_the_defaults_bind_the_documented_keys(tmp_path: Path) -> None:
    keymap = load_keymap(str(tmp_path))
    assert keymap.keys("expandTools") == [("c-o",)]
    assert keymap.keys("followUp") == [("escape", "enter")]
    assert keymap.warnings == []


def test_keybindings_json_overrides_an_action(tmp_path: Path) -> None:
    (tmp_path / "keybindings.json").write_text(
        json.dumps({"expandTools": ["ctrl+x", "alt+o"], "cursorUp": "up"})
    )
    keymap = load_keymap(str(tmp_path))
    assert keymap.keys("expandTools") == [("c-x",), ("escape", "o")]
    assert keymap.describe("expandTools") == "ctrl+x, alt+o"


def test_a_broken_keybindings_file_is_reported_and_the_defaults_stay(tmp_path: Path) -> None:
    (tmp_path / "keybindings.json").write_text("{not json")
    keymap = load_keymap(str(tmp_path))
    assert keymap.keys("toggleThinking") == [("c-t",)]
    assert len(keymap.warnings) == 1 and "keybindings.json" in keymap.warnings[0]


def test_a_key_the_terminal_cannot_send_is_a_warning(tmp_path: Path) -> None:
    (tmp_path / "keybindings.json").write_text(json.dumps({"toggleThinking": "ctrl+shift+t"}))
    keymap = load_keymap(str(tmp_path))
    assert keymap.keys("toggleThinking") == []
    assert "ctrl+shift+t" in keymap.warnings[0]
