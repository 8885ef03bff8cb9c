"""``/login`` with an account in the real TUI: the flow against the fake OAuth server, the browser
played by a script ``webbrowser`` runs, then a prompt sent with the new login; ``/logout``."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator

import httpx
import pytest
from tau_command import TauCommand
from terminal import ENTER, ESCAPE, Terminal

from tau.ai.catalogue import get_models
from tau.testing.fake_llm import Turn
from tau.testing.fake_oauth import FakeOAuthServer

Start = Callable[..., Terminal]


@pytest.fixture
def oauth(tau: TauCommand) -> Iterator[FakeOAuthServer]:
    with FakeOAuthServer(device_interval_s=0.05) as server:
        tau.env.update(
            TAU_OAUTH_TEST_HOSTS=server.hosts_env(),
            TAU_OAUTH_TEST_CALLBACK_PORT="0",
            TAU_OAUTH_TEST_POLL_S="0.05",
            BROWSER=str(server.write_browser(tau.agent_dir / "browser")),
        )
        yield server


def _login_anthropic(terminal: Terminal) -> None:
    terminal.type("/login")
    terminal.send(ENTER)
    terminal.wait_for("Select authentication method:", where="display")
    terminal.send(ENTER)  # Sign in with an account
    terminal.wait_for("Select provider to configure:", where="display")
    terminal.type("Anthropic")
    terminal.wait_for("› Anthropic", where="display")
    terminal.send(ENTER)
    terminal.wait_for("Select Anthropic login method:", where="display")
    terminal.send(ENTER)  # Browser login


def test_login_with_an_account_saves_the_login_and_the_next_prompt_uses_it(
    tau: TauCommand, oauth: FakeOAuthServer, start_tui: Start
) -> None:
    models = json.loads((tau.agent_dir / "models.json").read_text())
    models["providers"]["anthropic"] = {"baseUrl": tau.server.url()}
    (tau.agent_dir / "models.json").write_text(json.dumps(models))
    terminal = start_tui()

    _login_anthropic(terminal)
    terminal.wait_for("Logged in to Anthropic")

    credential = json.loads((tau.agent_dir / "auth.json").read_text())["anthropic"]
    assert credential["type"] == "oauth" and str(credential["access"]).startswith("sk-ant-oat01-")
    model = next(m.id for m in get_models("anthropic") if m.api == "anthropic-messages")
    terminal.type(f"/model {model}")
    terminal.wait_for("→ ", where="display")  # the matching models as suggestions, as in pi
    terminal.send(ESCAPE)  # closed: Enter runs /model with the words typed
    terminal.wait_for(lambda: "→ " not in terminal.display(), where="display")
    terminal.send(ENTER)
    terminal.wait_for(f"›   {model} [anthropic]", where="display")
    terminal.send(ENTER)
    terminal.wait_for(f"Model: {model}")
    tau.server.add(Turn(text="subscribed answer"))
    terminal.type("hello")
    terminal.send(ENTER)
    terminal.wait_for("subscribed answer")
    assert tau.server.last_request.headers["authorization"] == f"Bearer {credential['access']}"

    terminal.type("/logout")
    terminal.send(ENTER)
    terminal.wait_for("› Anthropic", where="display")
    terminal.send(ENTER)
    terminal.wait_for("Logged out of Anthropic")
    assert "anthropic" not in json.loads((tau.agent_dir / "auth.json").read_text())


def test_over_ssh_the_redirect_url_is_pasted_into_the_dialog(
    tau: TauCommand, oauth: FakeOAuthServer, start_tui: Start
) -> None:
    url_file = tau.agent_dir / "url"
    tau.env["BROWSER"] = str(oauth.write_browser(tau.agent_dir / "remote", elsewhere=url_file))
    terminal = start_tui()

    _login_anthropic(terminal)
    terminal.wait_for("or finish in the browser", where="display")
    # The user signs in on another machine and copies the address the browser ends on.
    location = httpx.get(url_file.read_text()).headers["location"]
    terminal.send(location)  # a paste arrives at once
    terminal.send(ENTER)

    terminal.wait_for("Logged in to Anthropic")
    assert json.loads((tau.agent_dir / "auth.json").read_text())["anthropic"]["type"] == "oauth"


def test_esc_cancels_a_login_waiting_for_the_browser_or_for_a_device_code_and_the_tui_goes_on(
    tau: TauCommand, oauth: FakeOAuthServer, start_tui: Start
) -> None:
    tau.env["BROWSER"] = "true"  # the browser never comes back
    oauth.device_pending_polls = 10**6  # the device code is never entered
    terminal = start_tui()

    _login_anthropic(terminal)
    terminal.wait_for("or finish in the browser", where="display")
    terminal.send(ESCAPE)
    terminal.wait_for("Login cancelled.")

    terminal.type("/login github-copilot")
    terminal.send(ENTER)
    # as pi 1.6: a provider with both kinds of sign-in asks which
    terminal.wait_for("Select authentication method for GitHub Copilot:", where="display")
    terminal.send(ENTER)
    terminal.wait_for("GitHub Enterprise URL/domain", where="display")
    terminal.send(ENTER)  # github.com
    terminal.wait_for("Enter code WDJB-MJHT at https://github.com/login/device", where="display")
    terminal.send(ESCAPE)
    terminal.wait_for(lambda: terminal.text().count("Login cancelled.") == 2)

    assert not (tau.agent_dir / "auth.json").exists()
    tau.server.add(Turn(text="still here"))
    terminal.type("hi")
    terminal.send(ENTER)
    terminal.wait_for("still here")


def test_a_radius_api_key_gets_the_gateways_model_list_at_tui_start_and_when_login_saves_it(
    tau: TauCommand, oauth: FakeOAuthServer, start_tui: Start
) -> None:
    oauth.radius_api_key = "rk-1"
    tau.env["RADIUS_API_KEY"] = oauth.radius_api_key
    terminal = start_tui()
    store = tau.agent_dir / "models-store.json"
    deadline = time.monotonic() + 20
    while not store.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    listed = json.loads(store.read_text())["radius"]["models"]
    assert [model["id"] for model in listed] == ["balanced", "team-only"]

    # A key saved with /login brings the list the gateway has for it, as pi refreshes it then.
    oauth.radius_models = [{**oauth.radius_models[0], "id": "keyed-only", "name": "Keyed Only"}]
    terminal.type("/login")
    terminal.send(ENTER)
    terminal.wait_for("Select authentication method:", where="display")
    terminal.type("API key")
    terminal.wait_for("› Sign in with an API key", where="display")
    terminal.send(ENTER)
    terminal.wait_for("Select provider to configure:", where="display")
    terminal.type("radius")
    terminal.wait_for("› Radius", where="display")
    terminal.send(ENTER)
    terminal.wait_for("Login to Radius", where="display")
    terminal.wait_for("Enter API key", where="display")
    terminal.type(oauth.radius_api_key)
    terminal.send(ENTER)
    terminal.wait_for("Saved the API key for Radius")
    deadline = time.monotonic() + 20
    while "keyed-only" not in store.read_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [m["id"] for m in json.loads(store.read_text())["radius"]["models"]] == ["keyed-only"]


def test_a_workers_ai_key_is_saved_with_the_account_id_login_asks_for(
    tau: TauCommand, start_tui: Start
) -> None:
    terminal = start_tui()
    terminal.type("/login")
    terminal.send(ENTER)
    terminal.wait_for("Select authentication method:", where="display")
    terminal.type("API key")
    terminal.wait_for("› Sign in with an API key", where="display")
    terminal.send(ENTER)
    terminal.wait_for("Select provider to configure:", where="display")
    terminal.type("cloudflare-workers-ai")
    terminal.wait_for("› Cloudflare Workers AI", where="display")
    terminal.send(ENTER)
    terminal.wait_for("Login to Cloudflare Workers AI", where="display")
    terminal.wait_for("Enter Cloudflare API key", where="display")
    terminal.type("cf-key")
    terminal.send(ENTER)
    terminal.wait_for("Enter Cloudflare account ID", where="display")
    terminal.type("acct-7")
    terminal.send(ENTER)
    terminal.wait_for("Saved the API key for Cloudflare Workers AI")
    stored = json.loads((tau.agent_dir / "auth.json").read_text())
    assert stored["cloudflare-workers-ai"] == {
        "type": "api_key",
        "key": "cf-key",
        "env": {"CLOUDFLARE_ACCOUNT_ID": "acct-7"},
    }


def test_an_ai_gateway_key_is_saved_with_the_account_and_gateway_ids_login_asks_for(
    tau: TauCommand, start_tui: Start
) -> None:
    terminal = start_tui()
    terminal.type("/login")
    terminal.send(ENTER)
    terminal.wait_for("Select authentication method:", where="display")
    terminal.type("API key")
    terminal.wait_for("› Sign in with an API key", where="display")
    terminal.send(ENTER)
    terminal.wait_for("Select provider to configure:", where="display")
    terminal.type("cloudflare-ai-gateway")
    terminal.wait_for("› Cloudflare AI Gateway", where="display")
    terminal.send(ENTER)
    terminal.wait_for("Login to Cloudflare AI Gateway", where="display")
    terminal.wait_for("Enter Cloudflare API key", where="display")
    terminal.type("cf-key")
    terminal.send(ENTER)
    terminal.wait_for("Enter Cloudflare account ID", where="display")
    terminal.type("acct-7")
    terminal.send(ENTER)
    terminal.wait_for("Enter Cloudflare AI Gateway ID", where="display")
    terminal.type("gw-7")
    terminal.send(ENTER)
    terminal.wait_for("Saved the API key for Cloudflare AI Gateway")
    stored = json.loads((tau.agent_dir / "auth.json").read_text())
    assert stored["cloudflare-ai-gateway"] == {
        "type": "api_key",
        "key": "cf-key",
        "env": {"CLOUDFLARE_ACCOUNT_ID": "acct-7", "CLOUDFLARE_GATEWAY_ID": "gw-7"},
    }
