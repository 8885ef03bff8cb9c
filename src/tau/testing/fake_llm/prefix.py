"""How much of each recorded request a provider's prompt cache could have served (issue #31).

A provider caches the longest prefix a request shares with an earlier one; every byte after the
first difference is paid in full. The request is read in the provider's own cache order: tool
definitions, the system prompt, the settings that key the cache (thinking, effort, tool choice),
then the messages one by one. Cache markers (``cache_control``, ``cachePoint``) are dropped: they
mark where a prefix ends, they are not part of it.

- ``uncached`` of a request: its bytes after the longest common prefix with any earlier request
  of the same model (the first request of a model is uncached whole);
- ``ideal`` of a request: what a harness that never rewrites would pay: the first request of a
  model whole, then only its messages after the longest run of leading messages it shares with an
  earlier request of that model (whatever else changed). A leading system message (OpenAI-style
  APIs carry the prompt in the message list) counts with the system prompt, not as a message.

A request of another shape (a head no earlier request of the model had, e.g. a summary request
with a system prompt of its own) that re-sends what earlier requests carried, written out again
(a serialised transcript), is not paid for that in ``ideal``: texts of 256 characters or more that
an earlier request sent (a tool output, a reply) count as known. Such a request could have been
the cached conversation plus its instruction.

``uncached / ideal`` is 1.00 for a harness that only ever appends.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tau.testing.fake_llm.script import RecordedRequest

_CACHE_MARKERS = frozenset({"cache_control", "cachePoint"})
_TOOL_KEYS = ("tools", "toolConfig")
_SYSTEM_KEYS = ("system", "instructions", "systemInstruction")
_MESSAGE_KEYS = ("messages", "input", "contents")
# Settings that are part of the cached prefix: Anthropic's thinking and effort (a change drops the
# cached messages), Bedrock's model fields (Claude's thinking), and the tool choice. OpenAI's
# reasoning effort is a setting of the reply, not of the prompt, and is left out.
_SETTING_KEYS = ("thinking", "output_config", "tool_choice", "additionalModelRequestFields")


def strip_cache_markers(value: Any) -> Any:
    """``value`` without cache markers, at any depth (a Bedrock ``cachePoint`` block is dropped whole)."""
    if isinstance(value, dict):
        return {k: strip_cache_markers(v) for k, v in value.items() if k not in _CACHE_MARKERS}
    if isinstance(value, list):
        return [
            strip_cache_markers(v) for v in value if not (isinstance(v, dict) and set(v) <= _CACHE_MARKERS)
        ]
    return value


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True, slots=True)
class CanonicalRequest:
    """A request in cache order: ``head`` (tools, system, settings) then each message's JSON."""

    model: str
    head: str
    messages: tuple[str, ...]

    @property
    def text(self) -> str:
        return self.head + "".join(self.messages)


def canonical(request: RecordedRequest) -> CanonicalRequest:
    """``request`` in cache order, cache markers dropped."""
    body = strip_cache_markers(request.body if isinstance(request.body, dict) else {})
    parts = [_dump(body.get(key)) for key in (*_TOOL_KEYS, *_SYSTEM_KEYS, *_SETTING_KEYS) if key in body]
    raw: list[Any] = next((body[key] for key in _MESSAGE_KEYS if isinstance(body.get(key), list)), [])
    while raw and isinstance(raw[0], dict) and raw[0].get("role") in ("system", "developer"):
        parts.append(_dump(raw[0]))  # the prompt, where the API carries it as a message
        raw = raw[1:]
    model = body.get("model") if isinstance(body.get("model"), str) else request.path
    return CanonicalRequest(str(model), "".join(parts), tuple(_dump(m) for m in raw))


def _common_prefix(a: str, b: str) -> int:
    limit = min(len(a), len(b))
    low, high = 0, limit  # binary search on equal slices: linear time in C, not a Python loop
    while low < high:
        mid = (low + high + 1) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid - 1
    return low


@dataclass(slots=True)
class PrefixStats:
    """``uncached`` and ``ideal`` bytes over a run of requests, and each request's own figures."""

    uncached: int = 0
    ideal: int = 0
    per_request: list[tuple[int, int]] = field(default_factory=list)

    @property
    def ratio(self) -> float:
        return self.uncached / self.ideal if self.ideal else 1.0


def prefix_stats(requests: Sequence[RecordedRequest]) -> PrefixStats:
    """``uncached`` and ``ideal`` (module docstring) summed over ``requests``, in order."""
    stats = PrefixStats()
    earlier: dict[str, list[CanonicalRequest]] = {}
    known: dict[str, set[str]] = {}
    for request in requests:
        form = canonical(request)
        text = form.text
        before = earlier.setdefault(form.model, [])
        texts = known.setdefault(form.model, set())
        if before:
            shared = max(_common_prefix(text, other.text) for other in before)
            kept = max(_shared_messages(form.messages, other.messages) for other in before)
            new = form.messages[kept:]
            ideal = sum(len(m) for m in new)
            if all(form.head != other.head for other in before):
                ideal -= sum(_known_chars(json.loads(m), texts) for m in new)
        else:
            shared, ideal = 0, len(text)
        for message in form.messages:
            texts.update(t for t in _strings(json.loads(message)) if len(t) >= _KNOWN_TEXT)
        uncached = len(text) - shared
        stats.uncached += uncached
        stats.ideal += ideal
        stats.per_request.append((uncached, ideal))
        before.append(form)
    return stats


_KNOWN_TEXT = 256


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _known_chars(message: Any, known: set[str]) -> int:
    """How many characters of ``message``'s texts repeat texts an earlier request sent."""
    blob = "\n".join(_strings(message))
    return sum(len(t) for t in known if t in blob)


def _shared_messages(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    count = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        count += 1
    return count


def first_difference(before: RecordedRequest, after: RecordedRequest) -> str | None:
    """``None`` when ``after`` extends ``before`` byte for byte (cache order, markers dropped);
    otherwise a short account of where they first differ."""
    a, b = canonical(before).text, canonical(after).text
    if b.startswith(a):
        return None
    at = _common_prefix(a, b)
    return f"differ at byte {at} of {len(a)}: before …{a[max(0, at - 60) : at + 80]!r} after …{b[max(0, at - 60) : at + 80]!r}"
