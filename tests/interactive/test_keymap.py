"""Key names from keybindings.json become prompt_toolkit key sequences; the user's file wins."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tau.modes.interactive.components import key_name
from tau.modes.interactive.keymap import (
    CTRL_BACKSPACE,
    DEFAULT_BINDINGS,
    LEGACY_NAMES,
    UNSUPPORTED,
    load_keymap,
    to_prompt_toolkit_keys,
)


def test_plain_ctrl_alt_and_shift_keys_translate() -> None:
    assert to_prompt_toolkit_keys("ctrl+o") == ("c-o",)
    assert to_prompt_toolkit_keys("alt+enter") == ("escape", "enter")
    assert to_prompt_toolkit_keys("alt+up") == ("escape", "up")
    assert to_prompt_toolkit_keys("shift+tab") == ("s-tab",)
    assert to_prompt_toolkit_keys("escape") == ("escape",)
    assert to_prompt_toolkit_keys("ctrl+-") == ("c-_",)
    assert to_prompt_toolkit_keys("pageUp") == ("pageup",)
    assert to_prompt_toolkit_keys("ctrl+shift+f") == ("f23",)  # as keyboard.CTRL_SHIFT_KEYS reads it
    assert to_prompt_toolkit_keys("ctrl+backspace") == ("f21",)  # as keyboard.decode_key reads it
    assert to_prompt_toolkit_keys("backspace") == ("backspace",)


def test_keys_a_terminal_cannot_send_are_refused() -> None:
    assert to_prompt_toolkit_keys("ctrl+shift+p") is None
    assert to_prompt_toolkit_keys("hyper+x") is None
    assert to_prompt_toolkit_keys("") is None


def test_the_defaults_bind_the_documented_keys(tmp_path: Path) -> None:
    keymap = load_keymap(str(tmp_path))
    assert keymap.keys("app.tools.expand") == [("c-o",)]
    assert keymap.keys("app.message.followUp") == [("escape", "enter")]
    assert keymap.warnings == []


def test_a_pi_0x_name_still_overrides_the_action_it_became(tmp_path: Path) -> None:
    (tmp_path / "keybindings.json").write_text(
        json.dumps({"expandTools": ["ctrl+x", "alt+o"], "cursorUp": "up"})
    )
    keymap = load_keymap(str(tmp_path))
    assert keymap.keys("app.tools.expand") == [("c-x",), ("escape", "o")]
    assert keymap.describe("app.tools.expand") == "ctrl+x, alt+o"
    assert keymap.warnings == []


def test_a_pi_16_id_overrides_its_action(tmp_path: Path) -> None:
    (tmp_path / "keybindings.json").write_text(
        json.dumps(
            {
                "$schema": "https://pi.dev/schemas/keybindings.schema.json",
                "app.session.new": "alt+n",
                "tui.select.up": ["up", "ctrl+k"],
                "tui.editor.cursorLeft": "alt+h",
                "app.interrupt": [],
            }
        )
    )
    keymap = load_keymap(str(tmp_path))
    assert keymap.keys("app.session.new") == [("escape", "n")]
    assert keymap.keys("tui.select.up") == [("up",), ("c-k",)]
    assert keymap.keys("tui.editor.cursorLeft") == [("escape", "h")]
    assert keymap.keys("app.interrupt") == []
    assert keymap.warnings == []


def test_the_pi_16_id_wins_over_its_pi_0x_name_in_one_file(tmp_path: Path) -> None:
    (tmp_path / "keybindings.json").write_text(
        json.dumps({"expandTools": "ctrl+x", "app.tools.expand": "alt+o"})
    )
    keymap = load_keymap(str(tmp_path))
    assert keymap.keys("app.tools.expand") == [("escape", "o")]


def test_every_pi_16_id_is_an_action_of_taus_or_reported(tmp_path: Path) -> None:
    ids = set(LEGACY_NAMES.values()) | UNSUPPORTED | set(DEFAULT_BINDINGS)
    (tmp_path / "keybindings.json").write_text(json.dumps(dict.fromkeys(sorted(ids), "alt+z")))
    keymap = load_keymap(str(tmp_path))
    assert not UNSUPPORTED & set(DEFAULT_BINDINGS)
    assert sorted(w.split(": ")[1] for w in keymap.warnings) == sorted(UNSUPPORTED)
    assert all(keymap.keys(action) == [("escape", "z")] for action in DEFAULT_BINDINGS)


def test_an_id_tau_has_no_action_for_is_one_warning_naming_it(tmp_path: Path) -> None:
    (tmp_path / "keybindings.json").write_text(
        json.dumps({"app.thinking.save": "ctrl+n", "copy": "alt+c", "my.own.thing": "f5"})
    )
    warnings = load_keymap(str(tmp_path)).warnings
    assert warnings == [
        "keybindings.json: app.thinking.save: tau has no such action; ignored",
        "keybindings.json: copy: tau has no such action; ignored",
        "keybindings.json: my.own.thing: not a keybinding id tau knows; ignored",
    ]


def test_released_editor_keys_are_the_old_defaults_no_action_has(tmp_path: Path) -> None:
    (tmp_path / "keybindings.json").write_text(
        json.dumps({"tui.editor.cursorLineStart": "alt+a", "tui.editor.cursorLineEnd": ["end", "ctrl+a"]})
    )
    keymap = load_keymap(str(tmp_path))
    assert keymap.released_editor_keys() == [("c-e",), ("home",)]


def test_a_broken_keybindings_file_is_reported_and_the_defaults_stay(tmp_path: Path) -> None:
    (tmp_path / "keybindings.json").write_text("{not json")
    keymap = load_keymap(str(tmp_path))
    assert keymap.keys("app.thinking.toggle") == [("c-t",)]
    assert len(keymap.warnings) == 1 and "keybindings.json" in keymap.warnings[0]


def test_a_key_the_terminal_cannot_send_is_a_warning(tmp_path: Path) -> None:
    (tmp_path / "keybindings.json").write_text(json.dumps({"toggleThinking": "ctrl+shift+t"}))
    keymap = load_keymap(str(tmp_path))
    assert keymap.keys("app.thinking.toggle") == []
    assert "ctrl+shift+t" in keymap.warnings[0]


def test_an_id_misspelt_in_taus_code_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(KeyError):
        load_keymap(str(tmp_path)).keys("expandTools")


def test_taus_ids_are_exactly_pi_16s_documented_ones() -> None:
    """Every id pi 1.6's keybindings reference lists is tau's action or reported as not one."""
    import re

    from pi16 import pi16_command

    _node, cli = pi16_command()
    reference = (Path(cli).parents[2] / "docs" / "keybindings.md").read_text()
    documented = set(re.findall(r"^\| `((?:app|tui)\.[A-Za-z.]+)` \|", reference, re.MULTILINE))
    assert len(documented) > 80
    assert documented == set(DEFAULT_BINDINGS) | UNSUPPORTED


_ids = st.sampled_from(sorted(set(DEFAULT_BINDINGS) | UNSUPPORTED | set(LEGACY_NAMES))) | st.text(max_size=20)
_keys = st.text(max_size=12) | st.lists(st.text(max_size=12), max_size=3) | st.integers() | st.none()


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(_ids, _keys, max_size=8))
def test_any_keybindings_object_gives_a_keymap_and_one_line_warnings(bindings: dict[str, object]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "keybindings.json").write_text(json.dumps(bindings))
        keymap = load_keymap(folder)
    assert all("\n" not in warning for warning in keymap.warnings)
    assert set(keymap.bindings) <= set(DEFAULT_BINDINGS)


def test_the_tree_branch_keys_are_pis_and_rebind(tmp_path: Path) -> None:
    keymap = load_keymap(str(tmp_path))
    assert keymap.keys("app.tree.foldOrUp") == [("c-left",), ("escape", "left")]
    assert keymap.keys("app.tree.unfoldOrDown") == [("c-right",), ("escape", "right")]
    assert keymap.keys("app.tree.toggleLabelTimestamp") == [("T",)]
    (tmp_path / "keybindings.json").write_text(
        json.dumps(
            {"treeFoldOrUp": "alt+h", "app.tree.unfoldOrDown": [], "tui.editor.cursorWordLeft": "alt+b"}
        )
    )
    keymap = load_keymap(str(tmp_path))
    assert keymap.warnings == []
    assert keymap.keys("app.tree.foldOrUp") == [("escape", "h")]
    assert keymap.keys("app.tree.unfoldOrDown") == []
    # The editor's old word-left keys are released although the tree picker has them too.
    assert keymap.released_editor_keys() == [("escape", "left"), ("c-left",)]


def test_ctrl_backspace_reaches_an_extensions_component_under_its_keybindings_name() -> None:
    assert key_name(CTRL_BACKSPACE, "") == "ctrl+backspace"
    assert key_name("c-h", "\x08") == "backspace"


def test_hotkeys_puts_the_extensions_shortcuts_in_a_table_of_their_own() -> None:
    from tau.modes.interactive.hotkeys import hotkeys_markdown

    keymap = load_keymap(None)
    assert "**Extensions**" not in hotkeys_markdown(keymap)
    text = hotkeys_markdown(keymap, [("ctrl+shift+k", "Say hello"), ("alt+|", "/tmp/ext.py")])
    assert text.endswith(
        "**Extensions**\n| Key | Action |\n|-----|--------|\n"
        "| `ctrl+shift+k` | Say hello |\n| `alt+\\|` | /tmp/ext.py |"
    )
