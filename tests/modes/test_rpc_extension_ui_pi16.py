"""The RPC extension UI sub-protocol (pi 1.6's docs/rpc-extension-ui.md) side by side: a Python
extension for tau and its TypeScript twin for pi 1.6 ask the same dialogs and show the same
things; the client answers both the same way; the requests (ids aside) and what the extensions
received must be the same."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from rpc_side_by_side import Side, two_sides

JsonDict = dict[str, Any]

PYTHON = """
def setup(tau):
    @tau.register_command("ask", description="Ask the user things")
    async def ask(args, ctx):
        ui = ctx.ui
        picked = await ui.select("Pick one", ["alpha", "beta"])
        timed = await ui.select("Quick", ["x", "y"], timeout=30)
        sure = await ui.confirm("Sure?", "This does nothing")
        refused = await ui.confirm("Really?", "Still nothing")
        name = await ui.input("Your name", "type it here")
        bare = await ui.input("No placeholder")
        edited = await ui.editor("Edit this", "line one\\nline two")
        dropped = await ui.editor("Cancelled")
        ui.set_status("ask", "asking")
        ui.set_status("ask", None)
        ui.set_widget("ask", ["one", "two"])
        ui.set_widget("below", ["three"], placement="belowEditor")
        ui.set_widget("ask", None)
        ui.set_title("asked")
        ui.set_editor_text("prefilled")
        ui.notify("a warning", "warning")
        ui.notify(f"{picked}|{timed}|{sure}|{refused}|{name}|{bare}|{edited}|{dropped}")
"""

TYPESCRIPT = """
export default function (pi) {
  pi.registerCommand("ask", {
    description: "Ask the user things",
    handler: async (_args, ctx) => {
      const ui = ctx.ui;
      const picked = await ui.select("Pick one", ["alpha", "beta"]);
      const timed = await ui.select("Quick", ["x", "y"], { timeout: 30000 });
      const sure = await ui.confirm("Sure?", "This does nothing");
      const refused = await ui.confirm("Really?", "Still nothing");
      const name = await ui.input("Your name", "type it here");
      const bare = await ui.input("No placeholder");
      const edited = await ui.editor("Edit this", "line one\\nline two");
      const dropped = await ui.editor("Cancelled");
      ui.setStatus("ask", "asking");
      ui.setStatus("ask", undefined);
      ui.setWidget("ask", ["one", "two"]);
      ui.setWidget("below", ["three"], { placement: "belowEditor" });
      ui.setWidget("ask", undefined);
      ui.setTitle("asked");
      ui.setEditorText("prefilled");
      ui.notify("a warning", "warning");
      const show = (value) => (value === undefined ? "None" : value === true ? "True" : value === false ? "False" : value);
      ui.notify([picked, timed, sure, refused, name, bare, edited, dropped].map(show).join("|"));
    },
  });
}
"""

ANSWERS: dict[str, JsonDict] = {
    "Pick one": {"value": "beta"},
    "Quick": {"value": "y"},
    "Sure?": {"confirmed": True},
    "Really?": {"cancelled": True},
    "Your name": {"value": "Ada"},
    "No placeholder": {"value": ""},
    "Edit this": {"value": "edited text"},
    "Cancelled": {"cancelled": True},
}


def extension(side: Side) -> list[str]:
    path = side.root / ("ask.py" if side.name == "tau" else "ask.ts")
    path.write_text(PYTHON if side.name == "tau" else TYPESCRIPT)
    return ["-e", str(path)]


async def converse(side: Side) -> tuple[JsonDict, list[JsonDict]]:
    """Prompt ``/ask``, answer each dialog from ``ANSWERS``; the prompt's response and the requests."""
    answered = asyncio.ensure_future(side.rpc.send({"type": "prompt", "message": "/ask"}))
    requests: list[JsonDict] = []
    while not (requests and requests[-1]["method"] == "notify" and "|" in requests[-1]["message"]):
        event = await side.rpc.next_event(timeout=30)
        assert event is not None, f"{side.name} ended early"
        if event["type"] != "extension_ui_request":
            continue
        requests.append(event)
        if event["method"] in ("select", "confirm", "input", "editor"):
            await side.rpc.respond_ui(event["id"], **ANSWERS[event["title"]])
    return await answered, requests


async def test_dialogs_and_display_calls_travel_as_pi16s_do(tmp_path: Path) -> None:
    async with two_sides(tmp_path, extra=extension) as (tau, pi):
        (ours, our_requests), (theirs, their_requests) = await asyncio.gather(converse(tau), converse(pi))
    assert {k: v for k, v in ours.items() if k != "id"} == {k: v for k, v in theirs.items() if k != "id"}
    assert ours["data"] == {"disposition": "handled"}
    assert all(isinstance(r["id"], str) and r["id"] for r in our_requests)
    without_ids = [
        [{k: v for k, v in r.items() if k != "id"} for r in rs] for rs in (our_requests, their_requests)
    ]
    for ours_request, theirs_request in zip(*without_ids, strict=False):
        assert ours_request == theirs_request
    assert len(without_ids[0]) == len(without_ids[1])
    assert our_requests[-1]["message"] == "beta|y|True|False|Ada||edited text|None"


PROBE_PYTHON = """
def setup(tau):
    @tau.register_command("probe", description="What RPC gives")
    async def probe(args, ctx):
        ui = ctx.ui
        unanswered = await ui.select("Nobody answers", ["a", "b"], timeout=0.3)
        theme = ui.set_theme("dark")
        custom = await ui.custom(lambda *a: None)
        yes = lambda flag: "yes" if flag else "no"
        ui.notify("|".join([
            ctx.mode, yes(ctx.has_ui), ui.get_editor_text() or "empty", yes(ui.get_tools_expanded()),
            str(len(ui.get_all_themes())), yes(theme["success"]), theme.get("error", ""),
            str(unanswered), str(custom),
        ]))
"""
PROBE_TYPESCRIPT = """
export default function (pi) {
  pi.registerCommand("probe", {
    description: "What RPC gives",
    handler: async (_args, ctx) => {
      const ui = ctx.ui;
      const unanswered = await ui.select("Nobody answers", ["a", "b"], { timeout: 300 });
      const theme = ui.setTheme("dark");
      const custom = await ui.custom(() => undefined);
      const yes = (flag) => (flag ? "yes" : "no");
      const none = (value) => (value === undefined ? "None" : String(value));
      ui.notify([
        ctx.mode, yes(ctx.hasUI), ui.getEditorText() || "empty", yes(ui.getToolsExpanded()),
        String(ui.getAllThemes().length), yes(theme.success), theme.error ?? "",
        none(unanswered), none(custom),
      ].join("|"));
    },
  });
}
"""


async def test_what_rpc_cannot_show_answers_as_in_pi16(tmp_path: Path) -> None:
    """A dialog nobody answers gives up after its timeout; the editor text, tool expansion, themes
    and custom components answer as pi's RPC mode does; ``ctx.mode`` is ``"rpc"``."""

    def probe(side: Side) -> list[str]:
        path = side.root / ("probe.py" if side.name == "tau" else "probe.ts")
        path.write_text(PROBE_PYTHON if side.name == "tau" else PROBE_TYPESCRIPT)
        return ["-e", str(path)]

    async def run(side: Side) -> list[JsonDict]:
        await side.rpc.call("prompt", message="/probe")
        requests = []
        while not requests or requests[-1]["method"] != "notify":
            event = await side.rpc.next_event(timeout=30)
            assert event is not None
            if event["type"] == "extension_ui_request":
                requests.append({k: v for k, v in event.items() if k != "id"})
        return requests

    async with two_sides(tmp_path, extra=probe) as (tau, pi):
        ours, theirs = await asyncio.gather(run(tau), run(pi))
    assert ours == theirs
    assert ours[0] == {
        "type": "extension_ui_request",
        "method": "select",
        "title": "Nobody answers",
        "options": ["a", "b"],
        "timeout": 300,
    }
    assert ours[-1]["message"] == "rpc|yes|empty|no|0|no|Theme switching not supported in RPC mode|None|None"
