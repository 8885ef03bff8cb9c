"""Fixtures for the session tests: an isolated agent dir and project, a faux provider known to the
model registry, and a helper that builds sessions on it."""

from __future__ import annotations

import asyncio
import json
import os
import textwrap
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tau.ai.types import AssistantMessage, Context, Model
from tau.runtime.agent_session import AgentSession
from tau.runtime.sdk import create_agent_session
from tau.runtime.services import AgentSessionServices, ExtensionOptions, create_agent_session_services
from tau.session.entries import MessageEntry
from tau.session.manager import SessionManager
from tau.testing.faux import FauxProvider, faux_message, register_faux_provider

FAUX_MODELS: list[dict[str, Any]] = [
    {"id": "faux-1", "name": "Faux"},
    {"id": "faux-think", "name": "Faux Thinking", "reasoning": True},
    {"id": "faux-think-map", "reasoning": True, "thinkingLevelMap": {"minimal": None, "xhigh": "max"}},
]


@pytest.fixture(autouse=True)
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing leaks in from the user's home, agent dir or session dir."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TAU_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.delenv("TAU_SESSION_DIR", raising=False)


@pytest.fixture
def agent_dir(tmp_path: Path) -> str:
    path = tmp_path / "agent"
    path.mkdir(exist_ok=True)
    return str(path)


@pytest.fixture
def project(tmp_path: Path) -> str:
    path = tmp_path / "project"
    path.mkdir()
    return str(path)


@pytest.fixture
def faux() -> Iterator[FauxProvider]:
    provider = register_faux_provider(chunk_chars=4)
    yield provider
    provider.unregister()


def register_faux_models(services: AgentSessionServices, faux: FauxProvider, **extra: Any) -> None:
    """Make the faux API's models known to the registry as provider ``faux`` with a key."""
    config = {"baseUrl": "http://localhost:0", "api": faux.api, "apiKey": "faux-key", "models": FAUX_MODELS}
    services.model_registry.register_provider("faux", {**config, **extra})


@pytest.fixture
def services(project: str, agent_dir: str, faux: FauxProvider) -> AgentSessionServices:
    built = create_agent_session_services(cwd=project, agent_dir=agent_dir)
    register_faux_models(built, faux)
    return built


def faux_model(services: AgentSessionServices, model_id: str = "faux-1") -> Model:
    model = services.model_registry.find("faux", model_id)
    assert model is not None
    return model


SessionFactory = Callable[..., AgentSession]


@pytest.fixture
def make_session(services: AgentSessionServices, project: str, agent_dir: str) -> Iterator[SessionFactory]:
    """``make_session(**create_agent_session options)``: a persisted session on the faux model."""
    created: list[AgentSession] = []

    def build(**options: Any) -> AgentSession:
        options.setdefault("model", faux_model(services))
        options.setdefault("session_manager", SessionManager.create(project, agent_dir=agent_dir))
        session = create_agent_session(services=services, **options).session
        created.append(session)
        return session

    yield build
    for session in created:
        session._spill.close()


def file_lines(path: str | None) -> list[dict[str, Any]]:
    assert path is not None and os.path.exists(path), path
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


class Gate:
    """A faux response that waits until released, so a test can act while the agent streams."""

    def __init__(self, reply: str = "gated reply") -> None:
        self.entered = asyncio.Event()
        self.release = asyncio.Event()
        self.reply = reply

    async def __call__(self, context: Context, options: Any, state: Any, model: Model) -> AssistantMessage:
        self.entered.set()
        await self.release.wait()
        return faux_message(self.reply)


def user_texts(context: Context) -> list[str]:
    """The text of every user message in a request."""
    texts = []
    for message in context.messages:
        if message.role == "user":
            content = message.content
            texts.append(
                content if isinstance(content, str) else "".join(getattr(b, "text", "") for b in content)
            )
    return texts


def user_entries(manager: SessionManager) -> list[MessageEntry]:
    """The entries holding user messages, in file order."""
    return [e for e in manager.get_entries() if isinstance(e, MessageEntry) and e.message.role == "user"]


ExtensionSessionFactory = Callable[..., Awaitable[AgentSession]]


@pytest.fixture
async def extension_session(
    tmp_path: Path, project: str, agent_dir: str, faux: FauxProvider
) -> AsyncIterator[ExtensionSessionFactory]:
    """``await extension_session(name=source, ..., **create_agent_session options)``: extension
    files written to ``<tmp>/ext/<name>.py`` (dedented), loaded with ``-e`` semantics, and a
    persisted faux-model session with its extensions bound (no UI)."""
    created: list[AgentSession] = []

    async def build(**options: Any) -> AgentSession:
        sources = {name: options.pop(name) for name in list(options) if isinstance(options[name], str)}
        paths = []
        for name, source in sources.items():
            path = tmp_path / "ext" / f"{name}.py"
            path.parent.mkdir(exist_ok=True)
            path.write_text(textwrap.dedent(source).lstrip(), encoding="utf-8")
            paths.append(str(path))
        services = create_agent_session_services(
            cwd=project, agent_dir=agent_dir, extension_options=ExtensionOptions(paths=paths)
        )
        register_faux_models(services, faux)
        assert [d for d in services.diagnostics if d.type == "error"] == []
        options.setdefault("model", faux_model(services))
        options.setdefault("session_manager", SessionManager.create(project, agent_dir=agent_dir))
        session = create_agent_session(services=services, **options).session
        created.append(session)
        await session.bind_extensions()
        return session

    yield build
    for session in created:
        await session.dispose()
