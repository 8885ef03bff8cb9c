"""A history's wire form, extended request by request: what the providers' converters share.

Each converter (Anthropic messages, Gemini contents, Chat Completions messages, Responses items)
keeps a ``WireHistory`` subclass that says how one message becomes wire items (``add_message``)
and, for an API that sends a run of tool results together, how such a run does
(``add_tool_results``). The base class walks the replay-safe history (``ReplayHistory``), holds a
run of tool results back until the run ends, and makes a request's copy with the answers for the
calls still open; ``continue_history`` is the per-request step every converter takes: go on from
the state the last request left when this history extends it, else start afresh.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

from tau.ai.transform import ReplayHistory
from tau.ai.transport.request_cache import Continuation, FragmentList, MessageMemo
from tau.ai.types import Message, Model, ToolResultMessage

__all__ = ["WireHistory", "continue_history"]


class WireHistory:
    """The wire items of a history so far (``out``), for one target model.

    ``group_tool_results``: a run of consecutive tool results is converted as one, when it ends (or
    into a request's copy while it goes on); otherwise each goes through ``add_message`` at once."""

    group_tool_results = True

    def __init__(self, replay: ReplayHistory, out: FragmentList) -> None:
        self.replay = replay
        self.model = replay.model
        self.out = out
        self.results: list[ToolResultMessage] = []  # a run of tool results not in ``out`` yet

    def add_message(self, out: FragmentList, position: int, message: Message) -> None:
        """Append the wire items of ``message`` (the ``position``-th of the replayed history)."""
        raise NotImplementedError

    def add_tool_results(self, out: FragmentList, results: list[ToolResultMessage]) -> None:
        """Append the wire items of a whole run of tool results."""
        raise NotImplementedError

    def extend(self, messages: Sequence[Message], *, resumed: bool) -> None:
        """Convert the history's next messages into ``out``."""
        replay, out = self.replay, self.out
        done = len(replay.messages)
        replay.extend(messages, resumed=resumed)
        group = self.group_tool_results
        for position, message in enumerate(replay.messages[done:], done):
            if group and isinstance(message, ToolResultMessage):
                self.results.append(message)
                continue
            if self.results:
                self.add_tool_results(out, self.results)
                self.results = []
            self.add_message(out, position, message)

    def request_items(self) -> FragmentList:
        """The items of a request that ends here: the history's (left as it is), the run of tool
        results going on, and answers for the calls still open."""
        out = self.out.for_request()
        answers = self.replay.open_call_answers()
        if self.group_tool_results:
            if self.results or answers:
                self.add_tool_results(out, [*self.results, *answers])
        else:
            for position, answer in enumerate(answers, len(self.replay.messages)):
                self.add_message(out, position, answer)
        return out


_H = TypeVar("_H", bound=WireHistory)


def continue_history(
    histories: Continuation[_H],
    fragments: MessageMemo,
    kept_as: Hashable,
    memo_key: Hashable,
    model: Model,
    messages: Sequence[Message],
    start_afresh: Callable[[], _H],
) -> _H:
    """This request's history for ``model``, converted to its end: the state kept under
    ``kept_as`` by the last request, when ``messages`` extends that request's history, with only
    the new messages converted; else a new one (``start_afresh``) converting them all. The caller
    makes its request from it (``request_items``) and keeps it again (``histories.keep``)."""
    history, start = histories.resume(kept_as, messages)
    if history is None:
        history = start_afresh()
    history.model = history.replay.model = model
    fragments.next_request(memo_key, resumed=start > 0)
    history.extend(messages[start:], resumed=start > 0)
    return history
