"""A models.json ``apiKey`` or header that is a bare name of a set environment variable is sent as
written (pi 1.6); tau says so on start-up, naming what to write instead."""

from __future__ import annotations

import json

from tau_command import MODEL, TauCommand

from tau.testing.fake_llm.script import text_turn


def _provider(tau: TauCommand, **values: object) -> None:
    config = json.loads((tau.agent_dir / "models.json").read_text())
    config["providers"]["local"].update(values)
    (tau.agent_dir / "models.json").write_text(json.dumps(config))


def test_a_bare_variable_name_is_sent_as_written_with_a_warning(tau: TauCommand) -> None:
    tau.env.update(MY_LOCAL_KEY="from-env")
    _provider(tau, apiKey="MY_LOCAL_KEY", headers={"X-Team": "MY_LOCAL_KEY"})
    tau.server.add(text_turn("ok"))
    done = tau.run(*MODEL, "-p", "hi")
    assert done.returncode == 0, done.stderr
    assert tau.server.requests[-1].headers["authorization"] == "Bearer MY_LOCAL_KEY"
    lines = [line for line in done.stderr.splitlines() if "MY_LOCAL_KEY" in line]
    assert lines == [
        'tau: warning: provider "local": apiKey "MY_LOCAL_KEY" is sent as written, not as the variable '
        'MY_LOCAL_KEY; write "$MY_LOCAL_KEY" to use the variable',
        'tau: warning: provider "local": header "X-Team" "MY_LOCAL_KEY" is sent as written, not as the '
        'variable MY_LOCAL_KEY; write "$MY_LOCAL_KEY" to use the variable',
    ]


def test_no_warning_for_a_dollar_name_or_an_unset_bare_name(tau: TauCommand) -> None:
    tau.env.update(MY_LOCAL_KEY="from-env")
    for value in ("$MY_LOCAL_KEY", "NOT_SET_ANYWHERE_KEY"):
        _provider(tau, apiKey=value)
        tau.server.add(text_turn("ok"))
        done = tau.run(*MODEL, "-p", "hi")
        assert done.returncode == 0, done.stderr
        assert "is sent as written" not in done.stderr
