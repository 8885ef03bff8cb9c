"""What the app draws around the editor, each a function of the mode's state: the live area
(streaming reply, running tools), the status line (spinner, retry countdown), queued messages,
extension widgets and the footer."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Protocol

from prompt_toolkit.formatted_text import ANSI, StyleAndTextTuples, to_formatted_text

from tau.modes.interactive.footer import FooterInfo, build_footer
from tau.modes.interactive.render.format import truncate_to_width, visible_width

if TYPE_CHECKING:
    from prompt_toolkit.buffer import Buffer

    from tau.modes.interactive.chat import Chat
    from tau.modes.interactive.dialogs import Dialog
    from tau.modes.interactive.footer import UsageTotals
    from tau.modes.interactive.fullscreen import Transcript
    from tau.modes.interactive.screen import Scrollback
    from tau.modes.interactive.state import Activity, InputState
    from tau.runtime.agent_session import AgentSession

__all__ = [
    "PanelHost",
    "footer_fragments",
    "live_fragments",
    "queue_fragments",
    "status_fragments",
    "widget_fragments",
]

_SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


class PanelHost(Protocol):
    """What the panels draw from: the session, what runs, what waits to be sent, the chat's live
    part, the extensions' statuses and widgets, and the terminal's size."""

    @property
    def session(self) -> AgentSession: ...

    @property
    def activity(self) -> Activity: ...

    @property
    def input(self) -> InputState: ...

    @property
    def chat(self) -> Chat: ...

    @property
    def scrollback(self) -> Scrollback | Transcript: ...

    @property
    def editor(self) -> Buffer: ...

    @property
    def dialog(self) -> Dialog | None: ...

    @property
    def statuses(self) -> dict[str, str]: ...

    @property
    def widgets(self) -> dict[str, tuple[list[str], str]]: ...

    @property
    def totals(self) -> UsageTotals: ...

    @property
    def branch(self) -> str | None: ...

    @property
    def width(self) -> int: ...

    @property
    def height(self) -> int: ...

    footer_cache: tuple[Any, float, StyleAndTextTuples] | None
    """The footer as last worked out: its key, when, and the fragments."""


def _reserved_rows(mode: PanelHost) -> int:
    editor_rows = min(12, mode.editor.document.line_count) + 2 if mode.dialog is None else 16
    widget_rows = sum(len(lines) for lines, _ in mode.widgets.values())
    return editor_rows + widget_rows + 3 + len(mode.statuses and [1]) + 1


def live_fragments(mode: PanelHost) -> StyleAndTextTuples:
    room = max(3, mode.height - _reserved_rows(mode))
    text = mode.chat.live_text(room)
    # Text already committed but not yet written above stays in view until it is: it then moves
    # from here to the scrollback in one repaint, never vanishing for a frame in between.
    waiting = mode.scrollback.waiting_text()
    if waiting:
        text = f"{waiting}\n{text}" if text else waiting
    if not text:
        return []
    lines = text.split("\n")
    if len(lines) > room:
        lines = lines[-room:]
    from tau.modes.interactive.render.escapes import for_prompt_toolkit

    return to_formatted_text(ANSI(for_prompt_toolkit("\n".join(lines))))


def status_fragments(mode: PanelHost, working_in_rule: bool = False) -> StyleAndTextTuples:
    """The line above the editor: a flash, a retry's countdown, a compaction, a ``!`` command, or
    the agent at work (unless ``working_in_rule``: the editor's top rule shows that, as pi's)."""
    spin = _SPINNER[int(time.monotonic() * 10) % len(_SPINNER)]
    if mode.activity.flash_text:
        return [("class:status", mode.activity.flash_text)]
    if mode.activity.retry_text is not None:
        left = max(0, int(mode.activity.retry_deadline - time.monotonic() + 0.999))
        return [
            ("class:status.error", f"{spin} {mode.activity.retry_text} — retrying in {left}s (esc to cancel)")
        ]
    if mode.activity.summary_retry_text is not None:
        left = max(0, int(mode.activity.retry_deadline - time.monotonic() + 0.999))
        text = f"{spin} {mode.activity.summary_retry_text} — retrying the summary in {left}s (esc to cancel)"
        return [("class:status.error", text)]
    if mode.activity.compacting:
        return [("class:status", f"{spin} Compacting the conversation… (esc to cancel)")]
    if mode.activity.bash_block is not None:
        return [("class:status", f"{spin} Running… (esc to cancel)")]
    if mode.activity.working and not working_in_rule:
        return _working_fragments(mode.activity)
    return []


def working_rule_fragments(mode: PanelHost, width: int, style: str) -> StyleAndTextTuples:
    """The editor's top rule, with the agent at work written into it when nothing louder has the
    line above the editor (pi 1.6's ``── ⠹ Working ───``: an extension's frames and words, or none)."""
    activity = mode.activity
    if not activity.working or not activity.working_visible or status_fragments(mode, working_in_rule=True):
        return [(style, "─" * width)]
    frames = activity.working_frames
    spinner: StyleAndTextTuples
    if frames is None:
        spinner = [("class:status", _SPINNER[int(time.monotonic() * 10) % len(_SPINNER)] + " ")]
    elif not frames:
        spinner = []
    else:
        from tau.modes.interactive.render.escapes import for_prompt_toolkit

        frame = frames[int(time.monotonic() * 1000 / activity.working_interval_ms) % len(frames)]
        spinner = [*to_formatted_text(ANSI(for_prompt_toolkit(frame))), ("", " ")]
    words = truncate_to_width(activity.working_message or "Working", max(1, width - 12))
    label: StyleAndTextTuples = [(style, "── "), *spinner, ("class:status", words), ("", " ")]
    used = sum(visible_width(text) for _, text, *_ in label)
    return [*label, (style, "─" * max(0, width - used))]


def _working_fragments(activity: Activity) -> StyleAndTextTuples:
    """The line while the agent works: the spinner (an extension's frames, colours and all, or
    none) and its words, unless an extension hid it."""
    if not activity.working_visible:
        return []
    text = f"{activity.working_message or 'Working…'} (esc to interrupt)"
    frames = activity.working_frames
    if frames is None:
        return [("class:status", f"{_SPINNER[int(time.monotonic() * 10) % len(_SPINNER)]} {text}")]
    if not frames:
        return [("class:status", text)]
    from tau.modes.interactive.render.escapes import for_prompt_toolkit

    frame = frames[int(time.monotonic() * 1000 / activity.working_interval_ms) % len(frames)]
    return [*to_formatted_text(ANSI(for_prompt_toolkit(frame))), ("class:status", f" {text}")]


def queue_fragments(mode: PanelHost) -> StyleAndTextTuples:
    steering, follow_up = mode.input.queued
    out: StyleAndTextTuples = []
    for label, texts in (("steer", steering), ("follow-up", follow_up)):
        for text in texts:
            line = " ".join(text.split())
            if out:
                out.append(("", "\n"))
            out.append(("class:queue", truncate_to_width(f"  ⏵ {label}: {line}", mode.width - 1)))
    for text in mode.input.held_for_compaction:
        if out:
            out.append(("", "\n"))
        line = " ".join(text.split())
        out.append(("class:queue", truncate_to_width(f"  ⏵ after compaction: {line}", mode.width - 1)))
    if out:
        out.append(("class:queue", "\n  (alt+up: back to the editor)"))
    return out


def widget_fragments(mode: PanelHost, placement: str) -> StyleAndTextTuples:
    out: StyleAndTextTuples = []
    for key in sorted(mode.widgets):
        lines, where = mode.widgets[key]
        if where != placement:
            continue
        for line in lines:
            if out:
                out.append(("", "\n"))
            out.extend(to_formatted_text(ANSI(line)))
    return out


def footer_fragments(mode: PanelHost) -> StyleAndTextTuples:
    # Drawn every frame; what it shows changes a few times per reply, and working it out walks
    # the context and the model list, so it is kept for a quarter of a second.
    now = time.monotonic()
    session = mode.session
    key = (
        mode.width,
        mode.activity.working,
        session,
        session.model,
        session.thinking_level,
        session.auto_compaction_enabled,
        tuple(mode.statuses.items()),
    )
    if mode.footer_cache is not None and mode.footer_cache[0] == key and now - mode.footer_cache[1] < 0.25:
        return mode.footer_cache[2]
    fragments = _build_footer(mode)
    mode.footer_cache = (key, now, fragments)
    return fragments


def _build_footer(mode: PanelHost) -> StyleAndTextTuples:
    session = mode.session
    model = session.model
    registry = session.services.model_registry
    info = FooterInfo(
        cwd=session.cwd,
        totals=mode.totals,
        context=session.get_context_usage(),
        model_id=model.id if model else None,
        provider=model.provider if model else None,
        show_provider=len({m.provider for m in registry.get_available()}) > 1,
        reasoning=bool(model and model.reasoning),
        thinking_level=session.thinking_level,
        git_branch=mode.branch,
        session_name=session.session_name,
        auto_compaction=session.auto_compaction_enabled,
        subscription=bool(model and registry.is_using_oauth(model)),
        statuses=mode.statuses,
        sandbox=session.sandbox.policy.mode if session.sandbox.fenced else None,
        routed=(routed[0].id, routed[1]) if (routed := session.routed_model) is not None else None,
    )
    out: StyleAndTextTuples = []
    for line in build_footer(info, mode.width):
        if out:
            out.append(("", "\n"))
        out.extend(line)
    return out
