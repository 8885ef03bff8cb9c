"""pi 1.6's session events in a running session: ``session_compact_failed``, ``ui_prompt_start`` /
``ui_prompt_end``."""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tau.compaction import CompactionCancelledError, SummarizationError
from tau.extensions.testing import ScriptedUI
from tau.runtime.agent_session import AgentSession
from tau.runtime.sdk import create_agent_session
from tau.runtime.services import ExtensionOptions, create_agent_session_services
from tau.session.manager import SessionManager
from tau.testing.faux import FauxProvider, faux_message

from .conftest import ExtensionSessionFactory, faux_model, register_faux_models


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


PROMPT_WATCHER = """
import asyncio

seen = []
ended = asyncio.Event()

def setup(tau):
    @tau.on("ui_prompt_start")
    def start(event, ctx):
        seen.append(("start", event.kind, event.title, event.reason))

    @tau.on("ui_prompt_end")
    async def end(event, ctx):
        seen.append(("end", event.kind, event.title, event.reason))
        ended.set()

    @tau.register_command("ask")
    async def ask(args, ctx):
        if args == "both":
            seen.append(await asyncio.gather(ctx.ui.select("Pick one", ["a", "b"]), ctx.ui.input("Name")))
        else:
            seen.append(await ctx.ui.confirm("Proceed?", "really"))
"""


async def with_ui(tmp_path: Path, project: str, agent_dir: str, faux: FauxProvider, ui: Any) -> AgentSession:
    path = tmp_path / "ext" / "watcher.py"
    path.parent.mkdir(exist_ok=True)
    path.write_text(textwrap.dedent(PROMPT_WATCHER), encoding="utf-8")
    services = create_agent_session_services(
        cwd=project, agent_dir=agent_dir, extension_options=ExtensionOptions(paths=[str(path)])
    )
    register_faux_models(services, faux)
    session = create_agent_session(
        services=services, model=faux_model(services), session_manager=SessionManager.in_memory(project)
    ).session
    await session.bind_extensions(ui)
    return session


async def test_a_dialog_is_one_waiting_span(
    tmp_path: Path, project: str, agent_dir: str, faux: FauxProvider
) -> None:
    ui = ScriptedUI(confirms=[True])
    session = await with_ui(tmp_path, project, agent_dir, faux, ui)
    module = session.extension_runner.extensions[0].module  # type: ignore[union-attr]
    await session.prompt("/ask")
    await asyncio.wait_for(module.ended.wait(), 5)
    await session.dispose()
    # The events are not awaited before the dialog answers: the answer may come first.
    assert [s for s in module.seen if isinstance(s, tuple)] == [
        ("start", "confirm", "Proceed?", "ui_prompt"),
        ("end", "confirm", "Proceed?", "ui_prompt"),
    ]
    assert True in module.seen
    assert ui.dialogs == ["Proceed?"]


class OverlappingUI(ScriptedUI):
    """Its select stays open until an input dialog has been asked."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self.input_asked = asyncio.Event()

    async def select(self, title: str, options: Any, **kwargs: Any) -> str | None:
        await self.input_asked.wait()
        return await super().select(title, options, **kwargs)

    async def input(self, title: str, placeholder: str | None = None, **kwargs: Any) -> str | None:
        self.input_asked.set()
        return await super().input(title, placeholder, **kwargs)


async def test_overlapping_dialogs_make_one_span_named_after_the_first(
    tmp_path: Path, project: str, agent_dir: str, faux: FauxProvider
) -> None:
    session = await with_ui(tmp_path, project, agent_dir, faux, OverlappingUI(selects=["b"], inputs=["Ann"]))
    module = session.extension_runner.extensions[0].module  # type: ignore[union-attr]
    await session.prompt("/ask both")
    await asyncio.wait_for(module.ended.wait(), 5)
    await session.dispose()
    spans = [s for s in module.seen if isinstance(s, tuple)]
    assert spans == [("start", "select", "Pick one", "ui_prompt"), ("end", "select", "Pick one", "ui_prompt")]
    assert ["b", "Ann"] in module.seen


async def test_without_a_ui_dialogs_fire_no_prompt_events(
    tmp_path: Path, project: str, agent_dir: str, faux: FauxProvider
) -> None:
    session = await with_ui(tmp_path, project, agent_dir, faux, None)
    module = session.extension_runner.extensions[0].module  # type: ignore[union-attr]
    await session.prompt("/ask")
    await asyncio.sleep(0)
    await session.dispose()
    assert module.seen == [False]


SETTLE = """
seen = []

def setup(tau):
    @tau.on("agent_before_settle")
    def remind(event, ctx):
        seen.append((event.outcome, event.entries, event.continue_, event.messages[-1].role))
        if len(seen) > 1:
            return None
        return {
            "entries": [
                {"type": "custom", "customType": "note", "data": {"n": 1}},
                {"type": "custom_message", "customType": "review-reminder", "content": "Review the diff.",
                 "display": False},
            ],
            "continue": True,
        }
"""


async def test_agent_before_settle_appends_entries_and_continues_once(
    extension_session: ExtensionSessionFactory, faux: FauxProvider
) -> None:
    contexts: list[Any] = []

    def reply(text: str) -> Any:
        def respond(context: Any, *rest: Any) -> Any:
            contexts.append(context)
            return faux_message(text)

        return respond

    faux.set_responses([reply("first"), reply("reviewed")])
    session = await extension_session(settle=SETTLE)
    await session.prompt("change it")
    seen = recorded(session)
    assert [s[0] for s in seen] == ["completed", "completed"]
    assert seen[0][1:] == ([], False, "assistant")
    assert seen[1][3] == "assistant"
    assert faux.state.call_count == 2
    last_user = contexts[1].messages[-1]
    assert "Review the diff." in str(last_user.content)
    assert session.get_last_assistant_text() == "reviewed"
    entries = session.session_manager.get_entries()
    assert [e.type for e in entries if e.type in ("custom", "custom_message")] == ["custom", "custom_message"]


async def test_agent_before_settle_refuses_other_drafts_and_an_empty_continuation(
    extension_session: ExtensionSessionFactory, faux: FauxProvider
) -> None:
    faux.set_responses([faux_message("done")])
    session = await extension_session(
        bad="""
        def setup(tau):
            @tau.on("agent_before_settle")
            def bad(event, ctx):
                return {"entries": [{"type": "label", "targetId": "x", "label": "no"}], "continue": True}
        """
    )
    reports: list[Any] = []
    session.extension_runner.on_error(reports.append)  # type: ignore[union-attr]
    await session.prompt("go")
    assert faux.state.call_count == 1
    assert [r.event for r in reports] == ["agent_before_settle", "agent_before_settle"]
    assert "'label' is not supported" in reports[0].error and "nothing new" in reports[1].error


RETRY = """
def setup(tau):
    done = []

    @tau.on("agent_before_settle")
    def replace_answer(event, ctx):
        if done or event.outcome != "completed":
            return None
        done.append(True)
        answer = [e for e in ctx.session_manager.get_branch() if e.type == "message"][-1]
        return {
            "entries": [
                *event.entries,
                {"type": "context_edit", "targetId": answer.id, "replacement": None},
                {"type": "custom_message", "customType": "again", "content": "Answer again, shorter.",
                 "display": False},
            ],
            "continue": True,
        }
"""


async def test_agent_before_settle_context_edit_takes_an_answer_out_of_the_context_and_asks_again(
    extension_session: ExtensionSessionFactory, faux: FauxProvider
) -> None:
    contexts: list[Any] = []

    def reply(text: str) -> Any:
        def respond(context: Any, *rest: Any) -> Any:
            contexts.append(context)
            return faux_message(text)

        return respond

    faux.set_responses([reply("a very long first answer"), reply("short")])
    session = await extension_session(retry=RETRY)
    await session.prompt("explain")
    assert faux.state.call_count == 2
    second = contexts[1].messages
    assert "a very long first answer" not in str(second)
    assert [m.role for m in second][-2:] == ["user", "user"]  # the prompt, then the extension's request
    assert "Answer again, shorter." in str(second[-1].content)
    edits = [e for e in session.session_manager.get_entries() if e.type == "context_edit"]
    assert len(edits) == 1 and edits[0].replacement is None
    # The session still holds the first answer; only the context leaves it out.
    assert "a very long first answer" in str(session.session_manager.get_entries())


SUMMARISE = """
def setup(tau):
    @tau.on("agent_before_settle")
    def summarise(event, ctx):
        if any(e.type == "compaction" for e in ctx.session_manager.get_branch()):
            return None
        return {
            "entries": [
                {"type": "compaction", "summary": "The user asked for a plan; it was given.",
                 "firstKeptEntryId": None, "details": {"by": "extension"}},
                {"type": "custom_message", "customType": "next", "content": "Continue with step two.",
                 "display": False},
            ],
            "continue": True,
        }
"""


async def test_agent_before_settle_compaction_draft_replaces_the_history_with_its_summary(
    extension_session: ExtensionSessionFactory, faux: FauxProvider
) -> None:
    contexts: list[Any] = []

    def reply(text: str) -> Any:
        def respond(context: Any, *rest: Any) -> Any:
            contexts.append(context)
            return faux_message(text)

        return respond

    faux.set_responses([reply("the plan in detail"), reply("step two done")])
    session = await extension_session(summarise=SUMMARISE)
    await session.prompt("make a plan")
    assert faux.state.call_count == 2
    second = str(contexts[1].messages)
    assert "the plan in detail" not in second and "make a plan" not in second
    assert "The user asked for a plan; it was given." in second and "Continue with step two." in second
    (compaction,) = [e for e in session.session_manager.get_entries() if e.type == "compaction"]
    assert compaction.first_kept_entry_id == compaction.id  # pi's self-retaining compaction
    assert compaction.details == {"by": "extension"} and compaction.from_hook is True


async def test_agent_before_settle_appends_nothing_when_one_draft_names_an_entry_off_the_branch(
    extension_session: ExtensionSessionFactory, faux: FauxProvider
) -> None:
    faux.set_responses([faux_message("done")])
    session = await extension_session(
        partial="""
        def setup(tau):
            @tau.on("agent_before_settle")
            def propose(event, ctx):
                return {"entries": [{"type": "custom", "customType": "note"},
                                    {"type": "context_edit", "targetId": "nope", "replacement": None}]}
        """
    )
    reports: list[Any] = []
    session.extension_runner.on_error(reports.append)  # type: ignore[union-attr]
    await session.prompt("go")
    assert [r.error for r in reports] == [
        "the proposed entries were not appended: context_edit: no entry 'nope' on the current branch"
    ]
    assert not [e for e in session.session_manager.get_entries() if e.type in ("custom", "context_edit")]
