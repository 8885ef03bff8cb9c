"""Radius gateways beyond pi's own, through the real ``tau`` process against the fake gateway: a
models.json provider with ``"oauth": "radius"`` signs in at its own gateway and uses the models that
gateway lists; a ``RADIUS_API_KEY`` user gets the gateway's list too."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tau.testing.fake_llm import FakeLLMServer, Turn
from tau.testing.fake_oauth import ACME_GATEWAY, FakeOAuthServer

ACME = {
    "providers": {
        "acme": {"name": "Acme Gateway", "oauth": "radius", "baseUrl": f"https://{ACME_GATEWAY}/v1"}
    }
}


@pytest.fixture(scope="module")
def llm() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as server:
        yield server


@pytest.fixture(scope="module")
def gateway(llm: FakeLLMServer) -> Iterator[FakeOAuthServer]:
    with FakeOAuthServer(refresh_delay_s=0, radius_base_url=llm.url("/pi/v1")) as server:
        yield server


@pytest.fixture
def env(tmp_path: Path, gateway: FakeOAuthServer) -> dict[str, str]:
    (tmp_path / "agent").mkdir()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.endswith(("_API_KEY", "_TOKEN")) and not k.startswith("TAU_")
    }
    env.update(
        TAU_AGENT_DIR=str(tmp_path / "agent"),
        TAU_OAUTH_TEST_HOSTS=gateway.hosts_env(),
        TAU_OAUTH_TEST_CALLBACK_PORT="0",
        BROWSER="true",
    )
    return env


def _tau(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tau", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=env["TAU_AGENT_DIR"],
    )


def _browser_login(env: dict[str, str], provider: str) -> tuple[subprocess.CompletedProcess[str], str]:
    """``tau auth login <provider>``; the test is the browser (GETs the printed URL, follows the redirect)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "tau", "auth", "login", provider],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout
    seen, url = [], ""
    for line in process.stdout:
        seen.append(line)
        if line.startswith("  http"):
            url = line.strip()
            httpx.get(url, follow_redirects=True, timeout=10)
            break
    out, err = process.communicate(timeout=30)
    return subprocess.CompletedProcess(process.args, process.returncode, "".join(seen) + out, err), url


def _stored(env: dict[str, str], name: str) -> dict[str, dict[str, object]]:
    data: dict[str, dict[str, object]] = json.loads((Path(env["TAU_AGENT_DIR"]) / name).read_text())
    return data


def test_a_models_json_gateway_signs_in_there_lists_its_models_and_refreshes_its_own_login(
    env: dict[str, str], gateway: FakeOAuthServer, llm: FakeLLMServer
) -> None:
    agent = Path(env["TAU_AGENT_DIR"])
    (agent / "models.json").write_text(json.dumps(ACME))

    result, url = _browser_login(env, "acme")
    assert result.returncode == 0, result.stderr
    assert "Logged in to Acme Gateway." in result.stdout
    assert f"/{ACME_GATEWAY}/oauth/authorize?" in url and "client_id=pi-gateway" in url
    logins = _stored(env, "auth.json")
    assert list(logins) == ["acme"] and str(logins["acme"]["access"]).startswith("radius-acme-at-")
    listed = _stored(env, "models-store.json")["acme"]["models"]
    assert isinstance(listed, list)
    assert [(m["id"], m["provider"], m["api"], m["baseUrl"]) for m in listed] == [
        ("acme-coder", "acme", "pi-messages", llm.url("/pi/v1"))
    ]

    llm.add(Turn(text="via acme"))
    answer = _tau(env, "-p", "hi", "--provider", "acme", "--model", "acme-coder")
    assert (answer.returncode, answer.stdout) == (0, "via acme\n"), answer.stderr
    assert llm.last_request.api == "pi-messages"
    assert llm.last_request.headers["authorization"] == f"Bearer {logins['acme']['access']}"

    stale = _stored(env, "auth.json")
    stale["acme"]["expires"] = int(time.time() * 1000) - 1000
    (agent / "auth.json").write_text(json.dumps(stale))
    refreshes = gateway.refresh_counts["radius-acme"], gateway.refresh_counts["radius"]
    llm.add(Turn(text="refreshed"))
    answer = _tau(env, "-p", "hi", "--provider", "acme", "--model", "acme-coder")
    assert (answer.returncode, answer.stdout) == (0, "refreshed\n"), answer.stderr
    assert (gateway.refresh_counts["radius-acme"], gateway.refresh_counts["radius"]) == (
        refreshes[0] + 1,
        refreshes[1],
    )
    fresh = _stored(env, "auth.json")["acme"]["access"]
    assert fresh != logins["acme"]["access"]
    assert llm.last_request.headers["authorization"] == f"Bearer {fresh}"


def test_a_gateway_without_a_base_url_is_refused_naming_the_field(env: dict[str, str]) -> None:
    config = {"providers": {"acme": {"oauth": "radius", "models": [{"id": "x"}]}}}
    (Path(env["TAU_AGENT_DIR"]) / "models.json").write_text(json.dumps(config))
    result = _tau(env, "auth", "login", "acme")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert '"baseUrl" is required when "oauth" is set' in result.stderr


def test_a_radius_api_key_user_gets_the_gateways_list_on_tau_update_models(
    env: dict[str, str], gateway: FakeOAuthServer
) -> None:
    from tau.ai.catalogue import get_models

    assert "team-only" not in {model.id for model in get_models("radius")}  # only the gateway lists it
    env["RADIUS_API_KEY"] = gateway.radius_api_key
    (Path(env["TAU_AGENT_DIR"]) / "models.json").write_text(json.dumps(ACME))  # pi's key serves it too
    updated = _tau(env, "update", "--models")
    assert (updated.returncode, updated.stdout) == (0, "Model catalogs refreshed\n"), updated.stderr
    listed = _stored(env, "models-store.json")["radius"]["models"]
    assert isinstance(listed, list) and [m["id"] for m in listed] == ["balanced", "team-only"]
    acme = _stored(env, "models-store.json")["acme"]["models"]
    assert isinstance(acme, list) and [(m["id"], m["provider"]) for m in acme] == [("acme-coder", "acme")]

    env["RADIUS_API_KEY"] = "revoked-key"
    refused = _tau(env, "update", "--models")
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert refused.stderr.startswith(
        "tau: Could not refresh model catalogs: radius: Loading the Radius models failed (HTTP 401"
    )
    assert _stored(env, "models-store.json")["radius"]["models"] == listed  # the last list stays


def test_saving_a_radius_api_key_stores_the_gateways_list_for_it(
    env: dict[str, str], gateway: FakeOAuthServer
) -> None:
    saved = subprocess.run(
        [sys.executable, "-m", "tau", "auth", "login", "radius", "--api-key"],
        env=env,
        input=gateway.radius_api_key + "\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert saved.returncode == 0, saved.stderr
    assert _stored(env, "auth.json")["radius"] == {"type": "api_key", "key": gateway.radius_api_key}
    listed = _stored(env, "models-store.json")["radius"]["models"]
    assert isinstance(listed, list) and [m["id"] for m in listed] == ["balanced", "team-only"]
