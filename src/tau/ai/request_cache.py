"""Converting and encoding each history message once, so a tool loop's request cost is flat in N.

Every request of a loop resends the whole history, and the history only grows at the end. Two
pieces keep that cheap without changing a byte on the wire:

``MessageMemo`` remembers what a message became (a transformed message, a wire fragment) under a
conversion key (target model, API options). It holds the messages of the last two requests
only, and an entry is used only for the same message object with the same fingerprint, so an
edited, compacted or replaced history is converted afresh.

``FragmentList`` is a body's message list whose items carry their encoded JSON, made once per
fragment; ``encode_body`` splices those bytes into the body. Encodings are kept for the first
``ENCODED_BYTES_LIMIT`` bytes of a body's message list only: a history larger than any context
window (a session never compacted) would otherwise keep a second copy of itself; the rest is
encoded on each request. The result is byte-identical to
``json.dumps(body, ensure_ascii=False, separators=(",", ":"))`` (and to the ASCII fallback when a
lone surrogate makes UTF-8 impossible). When a payload hook ran, every cached fragment is checked
against a private copy first: one the hook edited in place is encoded afresh and never served again.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any, TypeVar, cast

from tau.ai.types import AssistantMessage, JsonObject, Message, ToolResultMessage

_SEPARATORS = (",", ":")
# What ``json.dumps(value, ensure_ascii=False, separators=_SEPARATORS)`` builds on every call, made
# once: a resumed history is encoded one message at a time, 138k calls for a 200 MB session.
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=_SEPARATORS)
# Encoded message bytes kept per body (a 1M-token context is about 4 MB of JSON).
ENCODED_BYTES_LIMIT = 16 * 1024 * 1024
_T = TypeVar("_T")
_M = TypeVar("_M", bound=Message)


def fingerprint(message: Message) -> tuple[Any, ...]:
    """What a finished message's conversion depends on that is cheap to read.

    Blocks are replaced rather than edited in place once a message is finished (streaming builds
    a message, then it is only copied), so the content list's identity and length stand for it.
    """
    content = message.content
    kind = type(message)
    if kind is AssistantMessage:
        return (id(content), len(content), message.stop_reason)  # type: ignore[union-attr]
    if kind is ToolResultMessage:
        return (id(content), len(content), message.tool_call_id, message.is_error)  # type: ignore[union-attr]
    return (id(content), len(content))


class MessageMemo:
    """Values derived from messages under a conversion key, kept while requests keep using them.

    Call ``next_request(key)`` once per request (``key``: what else the values depend on, e.g.
    the target model), then ``recall`` (or ``get`` / ``put``). Entries are found by
    ``id(message)`` and hold the message, so an id cannot be reused while its entry lives; those
    the last two requests did not use are dropped.
    """

    def __init__(self) -> None:
        self._key: object = None
        self._request = 0
        self._used = 0  # entries used by the request before this one
        # id(message) -> [message, stamp, key, value, fragments in value, last request that used it]
        self._entries: dict[int, list[Any]] = {}

    def next_request(self, key: object) -> None:
        """Start a request; now and then drop what the last two requests did not use."""
        if key != self._key:
            self._key = key  # else the old object stays, so entries compare by identity
        self._request += 1
        if len(self._entries) > 2 * self._used + 64:
            oldest = self._request - 2
            self._entries = {k: e for k, e in self._entries.items() if e[5] >= oldest}
        self._used = 0

    def get(self, message: Any, stamp: Any) -> Any | None:
        """The value stored for this very ``message`` under the key, if its stamp is unchanged."""
        entry = self._entries.get(id(message))
        if entry is None or entry[0] is not message or entry[1] != stamp:
            return None
        if entry[2] is not self._key and entry[2] != self._key:
            return None
        for fragment in entry[4]:
            if fragment.spoiled:
                return None
        if entry[5] != self._request:
            entry[5] = self._request
            self._used += 1
        return entry[3]

    def put(self, message: Any, stamp: Any, value: Any) -> None:
        if isinstance(value, CachedFragment):
            fragments: tuple[CachedFragment, ...] = (value,)
        elif isinstance(value, (list, tuple)):
            fragments = tuple(item for item in value if isinstance(item, CachedFragment))
        else:
            fragments = ()
        self._entries[id(message)] = [message, stamp, self._key, value, fragments, self._request]
        self._used += 1

    def recall(self, message: _M, make: Callable[[_M], _T], also: Hashable = None) -> _T:
        """The remembered value for ``message``, else ``make(message)`` (then remembered).

        ``also``: anything else about this message's place that the value depends on.
        """
        stamp = (fingerprint(message), also)
        value = self.get(message, stamp)
        if value is None:
            value = make(message)
            self.put(message, stamp, value)
        return cast(_T, value)

    def recall_run(self, messages: Sequence[_M], make: Callable[[Sequence[_M]], _T]) -> _T:
        """``recall`` for a value made from several adjacent messages (filed under the first)."""
        stamp = tuple((m, fingerprint(m)) for m in messages)
        value = self.get(messages[0], stamp)
        if value is None:
            value = make(messages)
            self.put(messages[0], stamp, value)
        return cast(_T, value)


def cached_fragment(value: JsonObject | None) -> CachedFragment | None:
    return None if value is None else CachedFragment(value)


class CachedFragment:
    """One wire fragment (a message's JSON) shared by successive requests, with its encoding."""

    __slots__ = ("_pristine", "_utf8", "spoiled", "value")

    def __init__(self, value: JsonObject) -> None:
        self.value = value
        self._pristine = _copy_containers(value)
        self._utf8: bytes | None = None
        self.spoiled = False

    def utf8(self, keep: bool = True) -> bytes:
        """The compact UTF-8 encoding, kept for the next request unless ``keep`` is false; raises
        ``UnicodeEncodeError`` on a lone surrogate."""
        data = self._utf8
        if data is None:
            data = _dumps(self.value)
        self._utf8 = data if keep else None
        return data

    @property
    def kept_bytes(self) -> int:
        """The size of the encoding kept for the next request (0: none)."""
        return 0 if self._utf8 is None else len(self._utf8)

    def unchanged(self) -> bool:
        """Whether nobody edited ``value`` in place; a fragment that was edited stays spoiled."""
        if not self.spoiled and self.value != self._pristine:
            self.spoiled = True
        return not self.spoiled


class FragmentList(list[JsonObject]):
    """A list of wire fragments, some of them cached; behaves as a plain list for everyone else."""

    def __init__(self, items: Iterable[CachedFragment | JsonObject] = ()) -> None:
        super().__init__()
        self._cached: list[CachedFragment | None] = []
        for item in items:
            self.add(item)

    def add(self, item: CachedFragment | JsonObject) -> None:
        if isinstance(item, CachedFragment):
            self.append(item.value)
            self._cached.append(item)
        else:
            self.append(item)
            self._cached.append(None)

    def encode_into(self, out: list[bytes], check_edits: bool, limit: int = ENCODED_BYTES_LIMIT) -> bool:
        """Append the encoded list to ``out`` from cached fragments, keeping encodings for the first
        ``limit`` bytes; ``False`` (nothing appended) when it was changed as a list."""
        if len(self) != len(self._cached):
            return False
        separator = b"["
        kept = 0
        for value, cached in zip(self, self._cached, strict=True):
            out.append(separator)
            separator = b","
            if cached is None or cached.value is not value or (check_edits and not cached.unchanged()):
                out.append(_dumps(value))
            else:
                data = cached.utf8(keep=kept < limit)
                kept += len(data)
                out.append(data)
        out.append(b"]" if self else b"[]")
        return True


def encode_body(body: JsonObject, *, check_edits: bool, limit: int = ENCODED_BYTES_LIMIT) -> bytes:
    """``body`` as compact JSON bytes, reusing the encodings cached in its ``FragmentList`` values.

    ``check_edits``: a payload hook saw the body and may have edited cached fragments in place.
    ``limit``: how many encoded bytes of each message list to keep for the next request.
    """
    try:
        out: list[bytes] = []
        separator = b"{"
        for key, value in body.items():
            if not isinstance(key, str):
                return _dumps(body)
            out.append(separator)
            separator = b","
            out.append(_dumps(key))
            out.append(b":")
            if not (isinstance(value, FragmentList) and value.encode_into(out, check_edits, limit)):
                out.append(_dumps(value))
        out.append(b"}" if body else b"{}")
        return b"".join(out)
    except UnicodeEncodeError:
        # Lone surrogates (kept on purpose in signed thinking) survive only as \u escapes.
        return json.dumps(body, separators=_SEPARATORS).encode()


def _copy_containers(value: Any) -> Any:
    """A deep copy of JSON's dicts and lists; strings and numbers are immutable, so shared."""
    if type(value) is dict:
        return {key: _copy_containers(item) for key, item in value.items()}
    if type(value) is list:
        return [_copy_containers(item) for item in value]
    return value


def _dumps(value: Any) -> bytes:
    return _ENCODER.encode(value).encode()
