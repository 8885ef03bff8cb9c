"""``NoUI``: what dialogs answer when nobody can see them."""

from __future__ import annotations

from tau.extensions import ExtensionUI, NoUI
from tau.extensions.testing import ScriptedUI


async def test_no_ui_answers_every_dialog_with_no_answer() -> None:
    ui = NoUI()
    assert isinstance(ui, ExtensionUI)
    assert await ui.select("Pick", ["a", "b"]) is None
    assert await ui.confirm("Sure?", "really", timeout=1) is False
    assert await ui.input("Name") is None
    assert await ui.editor("Edit", "text") is None
    ui.notify("ignored", "error")
    ui.set_status("key", "text")
    ui.set_widget("key", ["line"], placement="belowEditor")
    assert ui.get_editor_text() == "" and ui.get_tools_expanded() is False


async def test_scripted_ui_answers_in_order_then_gives_no_answer() -> None:
    ui = ScriptedUI(confirms=[True], selects=["b"])
    assert isinstance(ui, ExtensionUI)
    assert await ui.confirm("one", "") is True
    assert await ui.confirm("two", "") is False
    assert await ui.select("pick", ["a", "b"]) == "b"
    assert ui.dialogs == ["one", "two", "pick"]
