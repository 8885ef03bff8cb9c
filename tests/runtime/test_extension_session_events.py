"""pi 1.6's session events in a running session: ``session_compact_failed``."""

from __future__ import annotations

from typing import Any

import pytest

from tau.compaction import CompactionCancelledError, SummarizationError
from tau.runtime.agent_session import AgentSession
from tau.testing.faux import FauxProvider, faux_message

from .conftest import ExtensionSessionFactory


def recorded(session: AgentSession, index: int = 0) -> list[Any]:
    runner = session.extension_runner
    assert runner is not None
    seen: list[Any] = runner.extensions[index].module.seen  # type: ignore[union-attr]
    return seen


COMPACT_WATCHER = """
seen = []

def setup(tau):
    @tau.on("session_compact_failed")
    def failed(event, ctx):
        seen.append((event.reason, event.aborted, event.error_message, event.will_retry, event.from_extension))

    @tau.on("session_compact")
    def done(event, ctx):
        seen.append("compacted")
"""


async def primed(
    extension_session: ExtensionSessionFactory, faux: FauxProvider, **extensions: str
) -> AgentSession:
    faux.set_responses([faux_message("a" * 400), faux_message("b" * 400)])
    session = await extension_session(**extensions)
    session.services.settings_manager.apply_overrides({"compaction": {"keepRecentTokens": 100}})
    await session.prompt("x" * 400)
    await session.prompt("y" * 400)
    return session


async def test_a_cancelled_compaction_fires_session_compact_failed_as_aborted(
    extension_session: ExtensionSessionFactory, faux: FauxProvider
) -> None:
    session = await primed(
        extension_session,
        faux,
        watcher=COMPACT_WATCHER,
        veto="""
        def setup(tau):
            @tau.on("session_before_compact")
            def veto(event, ctx):
                return {"cancel": True}
        """,
    )
    with pytest.raises(CompactionCancelledError):
        await session.compact()
    assert recorded(session) == [("manual", True, None, False, False)]


async def test_a_failing_summary_fires_session_compact_failed_with_the_error(
    extension_session: ExtensionSessionFactory, faux: FauxProvider
) -> None:
    session = await primed(extension_session, faux, watcher=COMPACT_WATCHER)
    boom = faux_message("", stop_reason="error", error_message="summariser exploded")
    faux.set_responses([boom, boom])
    with pytest.raises(SummarizationError):
        await session.compact()
    [(reason, aborted, error, will_retry, from_extension)] = recorded(session)
    assert (reason, aborted, will_retry, from_extension) == ("manual", False, False, False)
    assert error == "Compaction failed: Summarization failed: summariser exploded"


async def test_a_successful_compaction_does_not_fire_session_compact_failed(
    extension_session: ExtensionSessionFactory, faux: FauxProvider
) -> None:
    session = await primed(extension_session, faux, watcher=COMPACT_WATCHER)
    faux.set_responses([faux_message("## Goal\nsummary")])
    await session.compact()
    assert recorded(session) == ["compacted"]
