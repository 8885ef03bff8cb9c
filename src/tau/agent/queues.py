"""Messages typed while the agent works: steering (next turn) and follow-up (when it would stop)."""

from __future__ import annotations

from collections import deque
from typing import Literal, TypeAlias

from tau.agent.messages import AgentMessage

QueueMode: TypeAlias = Literal["one-at-a-time", "all"]


class MessageQueue:
    """A FIFO queue polled by the loop: ``one-at-a-time`` hands out the oldest message per poll,
    ``all`` hands out everything queued."""

    def __init__(self, mode: QueueMode = "one-at-a-time") -> None:
        self.mode: QueueMode = mode
        self._messages: deque[AgentMessage] = deque()

    def push(self, message: AgentMessage) -> None:
        self._messages.append(message)

    def drain(self) -> list[AgentMessage]:
        """Take what one poll yields under the current mode (possibly nothing)."""
        if not self._messages:
            return []
        if self.mode == "one-at-a-time":
            return [self._messages.popleft()]
        taken = list(self._messages)
        self._messages.clear()
        return taken

    def clear(self) -> list[AgentMessage]:
        """Drop every queued message and return them (hosts put the text back in the editor)."""
        dropped = list(self._messages)
        self._messages.clear()
        return dropped

    @property
    def messages(self) -> list[AgentMessage]:
        """A copy of what is queued, oldest first."""
        return list(self._messages)

    def __len__(self) -> int:
        return len(self._messages)
