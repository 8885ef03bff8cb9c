"""A virtual model in the real `tau` in a pseudo-terminal (issue #32 §5): ``/model`` lists and
selects it, and the footer shows the selection and where the latest response was routed
(``auto • medium → fake-small • off``, as pi 1.6 draws it); ``/session`` gives the cost per
model that answered."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tau_command import TauCommand
from terminal import ENTER, ESCAPE, Terminal

from tau.testing.fake_llm import Turn

Start = Callable[..., Terminal]
ROUTER = Path(__file__).resolve().parents[2] / "examples" / "extensions" / "length_router.py"


def _usage_line(terminal: Terminal) -> str:
    return [line for line in terminal.display().splitlines() if line.strip()][-1]


def test_model_picks_the_virtual_model_and_the_footer_shows_the_routed_one(
    tau: TauCommand, start_tui: Start
) -> None:
    path = tau.agent_dir / "models.json"
    models = json.loads(path.read_text())
    models["providers"]["local"]["models"].append(
        {"id": "fake-small", "contextWindow": 100000, "maxTokens": 4096}
    )
    path.write_text(json.dumps(models))
    # The switch takes the saved default level (without one it keeps the current, off, as pi 1.6).
    (tau.agent_dir / "settings.json").write_text(json.dumps({"defaultThinkingLevel": "medium"}))
    tau.server.add(Turn(text="Routed reply."))
    terminal = start_tui("-e", str(ROUTER), "--router-small", "local/fake-small")
    terminal.type("/model router auto")
    terminal.wait_for("→ ", where="display")  # the matching models as suggestions, as in pi
    terminal.send(ESCAPE)  # closed: Enter runs /model with the words typed
    terminal.wait_for(lambda: "→ " not in terminal.display(), where="display")
    terminal.send(ENTER)
    terminal.wait_for("Auto (by prompt length)", where="display")
    terminal.send(ENTER)
    terminal.wait_for("Model: auto", where="display")
    terminal.wait_for(lambda: _usage_line(terminal).endswith("auto • medium"))
    terminal.type("hi")
    terminal.send(ENTER)
    terminal.wait_for("Routed reply.", where="display")
    terminal.wait_for(lambda: _usage_line(terminal).endswith("auto • medium → fake-small • off"))
    assert [r.body["model"] for r in tau.server.requests] == ["fake-small"]
    # /session lists the cost of each model that answered, here not the selected one.
    terminal.type("/session")
    terminal.send(ENTER)
    terminal.wait_for("local/fake-small: $0.000 (15 tokens)", where="display")
