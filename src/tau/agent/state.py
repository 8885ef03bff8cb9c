"""What an ``Agent`` knows: its configuration for the next run and what the current run has done."""

from __future__ import annotations

from collections.abc import Iterable

from tau.agent.events import (
    AgentEnd,
    AgentEvent,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    ToolExecutionEnd,
    ToolExecutionStart,
    TurnEnd,
)
from tau.agent.messages import AgentMessage
from tau.agent.tool import AgentTool
from tau.ai.types import Model, ThinkingLevelOrOff

PLACEHOLDER_MODEL = Model(id="unknown", api="unknown", provider="unknown", base_url="")
"""The model of an agent nobody configured; calling it fails with an unknown-api error."""


class AgentState:
    """``system_prompt``, ``model``, ``thinking_level``, ``tools`` and ``messages`` are yours to
    change; a change reaches the model from the next run on. Assigning ``tools`` or ``messages``
    stores a copy of the list.

    The run fields are read-only: ``is_streaming`` (a run is active), ``streaming_message`` (the
    message being streamed), ``pending_tool_calls`` (ids of the tools running now) and
    ``error_message`` (of the most recent failed or aborted turn).
    """

    def __init__(
        self,
        *,
        system_prompt: str = "",
        model: Model | None = None,
        thinking_level: ThinkingLevelOrOff = "off",
        tools: Iterable[AgentTool] = (),
        messages: Iterable[AgentMessage] = (),
    ) -> None:
        self.system_prompt = system_prompt
        self.model = model or PLACEHOLDER_MODEL
        self.thinking_level: ThinkingLevelOrOff = thinking_level
        self._tools = list(tools)
        self.callable_tools: list[AgentTool] = []
        """Tools not declared to the model that a running tool may call (``codemode.mode: only``
        hides the declared tools behind codemode scripts)."""
        self._messages = list(messages)
        self._is_streaming = False
        self._streaming_message: AgentMessage | None = None
        self._pending_tool_calls: frozenset[str] = frozenset()
        self._error_message: str | None = None

    @property
    def tools(self) -> list[AgentTool]:
        return self._tools

    @tools.setter
    def tools(self, tools: Iterable[AgentTool]) -> None:
        self._tools = list(tools)

    @property
    def messages(self) -> list[AgentMessage]:
        return self._messages

    @messages.setter
    def messages(self, messages: Iterable[AgentMessage]) -> None:
        self._messages = list(messages)

    @property
    def is_streaming(self) -> bool:
        return self._is_streaming

    @property
    def streaming_message(self) -> AgentMessage | None:
        return self._streaming_message

    @property
    def pending_tool_calls(self) -> frozenset[str]:
        return self._pending_tool_calls

    @property
    def error_message(self) -> str | None:
        return self._error_message

    # -- driven by the Agent -------------------------------------------------------------------

    def begin_run(self) -> None:
        self._is_streaming = True
        self._streaming_message = None
        self._error_message = None

    def end_run(self) -> None:
        self._is_streaming = False
        self._streaming_message = None
        self._pending_tool_calls = frozenset()

    def record_failure(self, message: AgentMessage, error: str) -> None:
        """A run that raised: its synthetic message goes straight into the history."""
        self._messages.append(message)
        self._error_message = error

    def clear(self) -> None:
        """Forget the conversation and everything about the last run."""
        self._messages = []
        self._streaming_message = None
        self._pending_tool_calls = frozenset()
        self._error_message = None

    def apply(self, event: AgentEvent) -> None:
        """Update the state for one event; the messages list grows only on ``message_end``."""
        if isinstance(event, (MessageStart, MessageUpdate)):
            self._streaming_message = event.message
        elif isinstance(event, MessageEnd):
            self._streaming_message = None
            self._messages.append(event.message)
        elif isinstance(event, ToolExecutionStart):
            self._pending_tool_calls = self._pending_tool_calls | {event.tool_call_id}
        elif isinstance(event, ToolExecutionEnd):
            self._pending_tool_calls = self._pending_tool_calls - {event.tool_call_id}
        elif isinstance(event, TurnEnd):
            if event.message.error_message:
                self._error_message = event.message.error_message
        elif isinstance(event, AgentEnd):
            self._streaming_message = None
