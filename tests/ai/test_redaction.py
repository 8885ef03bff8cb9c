"""``tau.ai.redaction``: the keys a call uses never appear in its ``errorMessage``, whatever produced it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tau.ai import Context, Model, UserMessage, complete
from tau.ai.redaction import REDACTED, clear_secrets, redact, register_secret
from tau.ai.transport.http import close_clients
from tau.testing.fake_llm import FakeLLMServer, Fault, Turn

SECRET = "sk-live-0123456789abcdef"
CONTEXT = Context(messages=[UserMessage("hi")])


@pytest.fixture(autouse=True)
def _fresh_secrets() -> Iterator[None]:
    clear_secrets()
    yield
    clear_secrets()


@pytest.fixture(autouse=True)
async def _close_http_clients() -> AsyncIterator[None]:
    yield
    await close_clients()


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


def model_at(server: FakeLLMServer) -> Model:
    return Model(id="m", api="openai-completions", provider="fake", base_url=server.url("/v1"))


def test_a_registered_secret_is_replaced_wherever_it_appears() -> None:
    register_secret(SECRET + "\r\n")
    assert (
        redact(f"Bearer {SECRET} failed; retry with {SECRET}")
        == f"Bearer {REDACTED} failed; retry with {REDACTED}"
    )


def test_a_secret_is_also_found_as_python_prints_its_control_characters() -> None:
    broken = SECRET[:8] + "\n" + SECRET[8:]
    register_secret(broken)
    assert (
        redact(f"Illegal header value b'Bearer {SECRET[:8]}\\n{SECRET[8:]}'")
        == f"Illegal header value b'Bearer {REDACTED}'"
    )


def test_short_placeholder_keys_are_not_treated_as_secrets() -> None:
    register_secret("ollama")
    assert redact("ollama is not running") == "ollama is not running"


def test_provider_keys_in_the_environment_are_redacted_without_registration(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    assert (
        redact(f"401 Incorrect API key provided: {SECRET}") == f"401 Incorrect API key provided: {REDACTED}"
    )


async def test_a_server_error_that_quotes_the_key_is_redacted(server: FakeLLMServer) -> None:
    server.add(Turn(fault=Fault("status", status=401, body={"error": {"message": f"bad key {SECRET}"}})))
    reply = await complete(model_at(server), CONTEXT, api_key=SECRET)
    assert reply.stop_reason == "error"
    assert reply.error_message == f"401 bad key {REDACTED}"


async def test_a_key_ending_in_a_carriage_return_fails_once_and_is_not_quoted(server: FakeLLMServer) -> None:
    server.add(Turn(text="never"))
    reply = await complete(model_at(server), CONTEXT, api_key=SECRET + "\r", max_retries=3)
    assert reply.stop_reason == "error"
    assert reply.error_message is not None and SECRET not in reply.error_message
    assert reply.error_message.startswith('Invalid request header "authorization"')
    assert server.requests == []


@given(st.text(min_size=8, max_size=40))
def test_a_secret_is_hidden_as_is_and_as_python_escapes_it(secret: str) -> None:
    clear_secrets()
    register_secret(secret)
    stripped = secret.strip()
    escaped = stripped.encode("unicode_escape").decode("ascii")
    for form in {stripped, escaped}:
        if len(stripped) >= 8:
            assert form not in redact(f"failed: {form}!")
