"""Builders for compaction tests: messages, entry chains, and sessions on a faux provider with a
small context window."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tau.ai.types import (
    AssistantContent,
    AssistantMessage,
    Context,
    ImageContent,
    Model,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from tau.runtime.agent_session import AgentSession
from tau.runtime.sdk import create_agent_session
from tau.runtime.services import AgentSessionServices, create_agent_session_services
from tau.session.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    ContextEditEntry,
    CustomEntry,
    CustomMessageEntry,
    LabelEntry,
    MessageEntry,
    ModelChangeEntry,
    SessionEntry,
    ThinkingLevelChangeEntry,
)
from tau.session.manager import SessionManager
from tau.session.messages import BashExecutionMessage, SessionMessage
from tau.testing.faux import FauxProvider, faux_message, register_faux_provider

WINDOW = 8_000
"""The faux model's context window in these tests (small, so a few KB of text fill it)."""

_calls = itertools.count(1)
_clock = itertools.count(1_767_225_600_000)


# -- messages ----------------------------------------------------------------------------------


def user(text: str = "u", *, timestamp: int | None = None) -> UserMessage:
    return UserMessage(text, timestamp=timestamp if timestamp is not None else next(_clock))


def usage(total: int = 0, **counts: int) -> Usage:
    return Usage(total_tokens=total, **counts)


def assistant(
    text: str = "a",
    *,
    calls: Sequence[tuple[str, dict[str, Any]]] = (),
    thinking: str | None = None,
    reported: Usage | None = None,
    stop_reason: StopReason = "stop",
    error: str | None = None,
    provider: str = "faux",
    model: str = "faux-1",
    timestamp: int | None = None,
) -> AssistantMessage:
    content: list[AssistantContent] = []
    if thinking is not None:
        content.append(ThinkingContent(thinking))
    if text:
        content.append(TextContent(text))
    content.extend(ToolCall(id=f"call_{next(_calls)}", name=name, arguments=args) for name, args in calls)
    return AssistantMessage(
        content=content,
        api="faux",
        provider=provider,
        model=model,
        usage=reported or Usage(),
        stop_reason="toolUse" if calls and stop_reason == "stop" else stop_reason,
        error_message=error,
        timestamp=timestamp if timestamp is not None else next(_clock),
    )


def tool_result(text: str = "r", *, images: int = 0, name: str = "read") -> ToolResultMessage:
    content: list[TextContent | ImageContent] = [TextContent(text)] if text else []
    content.extend(ImageContent("aGk=", "image/png") for _ in range(images))
    return ToolResultMessage(tool_call_id="call", tool_name=name, content=content, timestamp=next(_clock))


def bash(command: str, output: str) -> BashExecutionMessage:
    return BashExecutionMessage(command=command, output=output, exit_code=0, timestamp=next(_clock))


# -- entry chains ------------------------------------------------------------------------------

EntryItem = SessionMessage | str | SessionEntry


def chain(*items: EntryItem) -> list[SessionEntry]:
    """Entries ``e0``, ``e1``… each the child of the previous one. A message becomes a ``message``
    entry; a string names another kind (``model_change``, ``thinking``, ``label``, ``custom``,
    ``custom_message``, ``branch_summary``); a ready entry is re-parented."""
    entries: list[SessionEntry] = []
    for index, item in enumerate(items):
        base: dict[str, Any] = {
            "id": f"e{index}",
            "parent_id": f"e{index - 1}" if index else None,
            "timestamp": f"2026-01-01T00:00:{index % 60:02d}.000Z",
        }
        if isinstance(item, str):
            entries.append(_named_entry(item, base))
        elif isinstance(
            item, (MessageEntry, CompactionEntry, BranchSummaryEntry, CustomMessageEntry, ContextEditEntry)
        ):
            item.id, item.parent_id, item.timestamp = (
                base["id"],
                base["parent_id"],
                item.timestamp or base["timestamp"],
            )
            entries.append(item)
        else:
            entries.append(MessageEntry(message=item, **base))  # type: ignore[arg-type]
    return entries


def _named_entry(kind: str, base: dict[str, Any]) -> SessionEntry:
    if kind == "model_change":
        return ModelChangeEntry(provider="faux", model_id="faux-1", **base)
    if kind == "thinking":
        return ThinkingLevelChangeEntry(thinking_level="off", **base)
    if kind == "label":
        return LabelEntry(target_id="e0", label="here", **base)
    if kind == "custom":
        return CustomEntry(custom_type="state", data={"x": 1}, **base)
    if kind == "custom_message":
        return CustomMessageEntry(custom_type="note", content="x" * 400, display=True, **base)
    if kind == "branch_summary":
        return BranchSummaryEntry(from_id="e0", summary="s" * 400, **base)
    raise ValueError(kind)


def compaction(
    first_kept: str, summary: str = "old summary", *, details: Any = None, from_hook: bool | None = None
) -> CompactionEntry:
    return CompactionEntry(
        id="",
        parent_id=None,
        timestamp="2026-01-01T00:10:00.000Z",
        summary=summary,
        first_kept_entry_id=first_kept,
        tokens_before=1234,
        details=details,
        from_hook=from_hook,
    )


# -- sessions on the faux provider -------------------------------------------------------------

FAUX_MODELS: list[dict[str, Any]] = [
    {"id": "faux-1", "name": "Faux", "contextWindow": WINDOW, "maxTokens": 2000},
    {"id": "faux-2", "name": "Other faux", "contextWindow": WINDOW, "maxTokens": 2000},
    {
        "id": "faux-think",
        "name": "Faux thinking",
        "reasoning": True,
        "contextWindow": WINDOW,
        "maxTokens": 2000,
    },
]


@pytest.fixture
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TAU_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.delenv("TAU_SESSION_DIR", raising=False)


@pytest.fixture
def faux() -> Iterator[FauxProvider]:
    provider = register_faux_provider(chunk_chars=64)
    yield provider
    provider.unregister()


@pytest.fixture
def services(tmp_path: Path, isolated_env: None, faux: FauxProvider) -> AgentSessionServices:
    project = tmp_path / "project"
    project.mkdir()
    (tmp_path / "agent").mkdir(exist_ok=True)
    built = create_agent_session_services(cwd=str(project), agent_dir=str(tmp_path / "agent"))
    config = {"baseUrl": "http://localhost:0", "api": faux.api, "apiKey": "faux-key", "models": FAUX_MODELS}
    built.model_registry.register_provider("faux", config)
    built.settings_manager.apply_overrides({"compaction": {"reserveTokens": 2000, "keepRecentTokens": 300}})
    return built


def faux_model(services: AgentSessionServices, model_id: str = "faux-1") -> Model:
    model = services.model_registry.find("faux", model_id)
    assert model is not None
    return model


SessionFactory = Callable[..., AgentSession]


@pytest.fixture
def make_session(services: AgentSessionServices, tmp_path: Path) -> Iterator[SessionFactory]:
    """``make_session(in_memory=False, **create_agent_session options)``: a session on faux-1 whose
    automatic continues start after 10 ms."""
    created: list[AgentSession] = []

    def build(*, in_memory: bool = False, **options: Any) -> AgentSession:
        options.setdefault("model", faux_model(services))
        if in_memory:
            manager = SessionManager.in_memory(services.cwd)
        else:
            manager = SessionManager.create(services.cwd, agent_dir=str(tmp_path / "agent"))
        options.setdefault("session_manager", manager)
        session = create_agent_session(services=services, **options).session
        session._compaction.continue_delay_s = 0.01
        created.append(session)
        return session

    yield build
    for session in created:
        session._spill.close()


def request_text(context: Context) -> str:
    """All the text of a request's user messages."""
    parts = []
    for message in context.messages:
        if isinstance(message, UserMessage):
            content = message.content
            parts.append(
                content if isinstance(content, str) else "".join(getattr(b, "text", "") for b in content)
            )
    return "\n".join(parts)


# -- the worked example of spec 50 §10 ----------------------------------------------------------


def _call_of_size(name: str, key: str, total_chars: int, **fixed: str) -> tuple[str, dict[str, Any]]:
    """A tool call whose ``len(name) + len(compact JSON)`` is exactly ``total_chars``."""
    from tau.compaction.tokens import js_json

    base = len(name) + len(js_json({**fixed, key: ""}))
    return name, {**fixed, key: "x" * (total_chars - base)}


def worked_example() -> list[SessionEntry]:
    """Spec 50 §10: fourteen entries whose estimates are given there, index by index."""
    a5_usage = Usage(input=2000, output=1500, cache_read=180_000, cache_write=1000, total_tokens=184_500)
    return chain(
        "model_change",
        "thinking",
        user("u" * 4000),
        assistant("a" * 2000),
        user("u" * 2000),
        assistant("a" * 400, calls=[("read", {"path": "src/a.ts"})]),
        tool_result("r" * 40_000),
        assistant("a" * 800),
        user("u" * 1200),
        assistant("", calls=[_call_of_size("edit", "newText", 1200, path="src/b.ts")]),
        tool_result("r" * 4000, name="edit"),
        assistant("", calls=[_call_of_size("bash", "command", 400)]),
        tool_result("r" * 60_000, name="bash"),
        assistant("a" * 3000, reported=a5_usage),
    )


@dataclass
class Summarizer:
    """A faux response that plays the summariser: ``H`` for a history summary, ``P`` for the
    opening of a split turn; records each request."""

    requests: list[Context] = field(default_factory=list)

    def __call__(self, context: Context, options: Any, state: Any, model: Model) -> AssistantMessage:
        self.requests.append(context)
        from tau.compaction.prompts import TURN_PREFIX_INSTRUCTIONS

        return faux_message("P" if request_text(context).endswith(TURN_PREFIX_INSTRUCTIONS) else "H")


def reply_or_summarize(reply: str) -> Callable[..., AssistantMessage]:
    """A faux response that answers the agent (a request with tools) with ``reply`` and plays the
    summariser otherwise: for tests where the number of summariser calls does not matter."""
    summarizer = Summarizer()

    def respond(context: Context, options: Any, state: Any, model: Model) -> AssistantMessage:
        if context.tools:
            return faux_message(reply)
        return summarizer(context, options, state, model)

    return respond
