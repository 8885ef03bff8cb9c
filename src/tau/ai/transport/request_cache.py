"""Converting and encoding each history message once, so a tool loop's request cost is flat in N.

Every request of a loop resends the whole history, and the history only grows at the end. Three
pieces keep that cheap without changing a byte on the wire:

``Continuation`` keeps the state a history's conversion reached at the end of a request. The next
request's history, when it starts with the same messages (the same objects, unchanged by their
fingerprints), goes on from that state: only the new messages are converted.

``MessageMemo`` remembers what a message became (a transformed message, a wire fragment) under a
conversion key (target model, API options), for a history that does not extend a kept one (another
model's turn in between, a branch, a compaction). It holds the messages of the last two full
conversions only, and an entry is used only for the same message object with the same fingerprint,
so an edited, compacted or replaced history is converted afresh.

``FragmentList`` is a body's message list whose items carry their encoded JSON, made once per
fragment; ``encode_body`` splices those bytes into the body. The lists a ``Continuation`` state
hands to successive requests also share the encoding of their common first items, so a request
encodes only what was added. Encodings are kept for the first ``ENCODED_BYTES_LIMIT`` bytes of a
body's message list only: a history larger than any context window (a session never compacted)
would otherwise keep a second copy of itself; the rest is encoded on each request. The result is
byte-identical to ``json.dumps(body, ensure_ascii=False, separators=(",", ":"))`` (and to the
ASCII fallback when a lone surrogate makes UTF-8 impossible).

A payload hook may edit a body in place. ``expose_body`` is called before a hook sees one: every
cached fragment of the body is then checked against a private copy when it is encoded or recalled
(one the hook edited is encoded afresh and never served again), and every kept conversion state is
dropped.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable, Iterable, Sequence
from operator import is_
from typing import Any, Generic, TypeVar, cast

from tau.ai.types import AssistantMessage, JsonObject, Message, ToolResultMessage

_SEPARATORS = (",", ":")


def _compact_encoder() -> Callable[[Any], str]:
    """``json.dumps(value, ensure_ascii=False, separators=(",", ":"))`` with what it builds on every
    call (an encoder, and the C encoder inside it) made once: a resumed history is encoded one
    message at a time, 138k calls for a 200 MB session. (No check for circular references: a value
    that holds itself raises ``RecursionError`` instead of ``ValueError``.)"""
    encoder = json.JSONEncoder(ensure_ascii=False, separators=_SEPARATORS)
    make = getattr(json.encoder, "c_make_encoder", None)  # not in typeshed: an implementation detail
    if make is None:  # an interpreter without the _json accelerator
        return encoder.encode
    encode = make(None, encoder.default, json.encoder.encode_basestring, None, ":", ",", False, False, True)
    join = "".join
    return lambda value: join(encode(value, 0))


compact_json = _compact_encoder()
# Encoded message bytes kept per body (a 1M-token context is about 4 MB of JSON).
ENCODED_BYTES_LIMIT = 16 * 1024 * 1024
_T = TypeVar("_T")
_M = TypeVar("_M", bound=Message)
_S = TypeVar("_S")


def fingerprint(message: Message) -> tuple[Any, ...]:
    """What a finished message's conversion depends on that can change in place, cheap to read.

    Blocks are replaced rather than edited in place once a message is finished (streaming builds
    a message, then it is only copied), so the content list (the same object, or an equal list
    that replaced it) and its length stand for it. The list is held, so that its id cannot be reused
    by a later list while the fingerprint lives.
    """
    content = message.content
    kind = type(message)
    if kind is AssistantMessage:
        return (content, len(content), message.stop_reason)  # type: ignore[union-attr]
    if kind is ToolResultMessage:
        return (content, len(content), message.tool_call_id, message.is_error)  # type: ignore[union-attr]
    return (content, len(content))


_continuations: list[Continuation[Any]] = []


def forget_continuations() -> None:
    """Drop every kept conversion state: a payload hook saw (and may have edited) their fragments."""
    for continuation in _continuations:
        continuation.forget()


class Continuation(Generic[_S]):
    """Conversion states kept at the end of recent requests, to go on from for a history extending one.

    ``resume(key, messages)`` returns a state made under ``key`` from messages that ``messages``
    starts with (the very objects, with unchanged fingerprints), and how many those were; the caller
    converts the rest into it and ``keep``s it for the next request. A state is handed out once
    (``resume`` removes it), so one that a failed request left half-extended is never used. A few
    are kept: the last requests of a few keys (two models in turn, a one-message conversion beside
    the history's).
    """

    SLOTS = 3

    def __init__(self) -> None:
        # (key, messages, their fingerprints, state), the most recent first
        self._slots: list[tuple[object, list[Message], list[tuple[Any, ...]], _S]] = []
        self._last: tuple[list[Message], list[tuple[Any, ...]]] = ([], [])
        _continuations.append(self)

    def resume(self, key: object, messages: Sequence[Message]) -> tuple[_S | None, int]:
        current = list(messages)
        stamps = list(map(fingerprint, current))
        self._last = (current, stamps)
        for index, (kept_key, kept_messages, kept_stamps, state) in enumerate(self._slots):
            kept = len(kept_messages)
            if (
                kept <= len(current)
                and (kept_key is key or kept_key == key)
                and all(map(is_, kept_messages, current))
                and stamps[:kept] == kept_stamps
            ):
                del self._slots[index]
                return state, kept
        return None, 0

    def keep(self, key: object, state: _S) -> None:
        """File ``state``, made from the messages of the last ``resume`` call, for the next request."""
        current, stamps = self._last
        if current:
            self._slots.insert(0, (key, current, stamps, state))
            del self._slots[self.SLOTS :]
        self._last = ([], [])

    def forget(self) -> None:
        self._slots.clear()


class MessageMemo:
    """Values derived from messages under a conversion key, kept while requests keep using them.

    Call ``next_request(key)`` once per request (``key``: what else the values depend on, e.g.
    the target model), then ``recall`` (or ``get`` / ``put``). Entries are found by
    ``id(message)`` and hold the message, so an id cannot be reused while its entry lives; those
    the last two full requests did not use are dropped.
    """

    def __init__(self) -> None:
        self._key: object = None
        self._request = 0
        self._used = 0  # entries used by the request before this one
        # id(message) -> [message, stamp, key, value, fragments in value, last request that used it]
        self._entries: dict[int, list[Any]] = {}

    def next_request(self, key: object, *, resumed: bool = False) -> None:
        """Start a request; now and then drop what the last two requests did not use.

        ``resumed``: the request goes on from a ``Continuation`` state and uses none of the entries
        of the messages before it, so it counts as part of the request that made the state."""
        if key != self._key:
            self._key = key  # else the old object stays, so entries compare by identity
        if resumed:
            return
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
            if not fragment.unchanged():  # a payload hook edited it in place
                return None
        if entry[5] != self._request:
            entry[5] = self._request
            self._used += 1
        return entry[3]

    def put(self, message: Any, stamp: Any, value: Any) -> None:
        kind = type(value)
        if kind is CachedFragment:
            fragments: Sequence[CachedFragment] = (value,)
        elif kind is list or kind is tuple:
            fragments = [item for item in value if type(item) is CachedFragment]
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
        self._pristine: JsonObject | None = None  # a private copy, taken when a hook may see value
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

    def protect(self) -> None:
        """Take the private copy ``unchanged`` compares with, before someone else sees ``value``."""
        if self._pristine is None and not self.spoiled:
            self._pristine = _copy_containers(self.value)

    def unchanged(self) -> bool:
        """Whether nobody edited ``value`` in place; a fragment that was edited stays spoiled."""
        if not self.spoiled and self._pristine is not None and self.value != self._pristine:
            self.spoiled = True
        return not self.spoiled


class _SharedEncoding:
    """The encoding of a conversion state's first fragments (``[`` and the items, comma-separated),
    grown request by request, and the fragment values it encodes."""

    __slots__ = ("data", "values")

    def __init__(self) -> None:
        self.data = bytearray(b"[")
        self.values: list[JsonObject] = []

    def reset(self) -> None:
        self.data = bytearray(b"[")
        self.values = []

    def extend(
        self, items: list[JsonObject], pieces: list[bytes], start: int, stable: int, limit: int
    ) -> None:
        """Add ``items[start:stable]`` (encoded as ``pieces``), up to ``limit`` bytes in all."""
        data = self.data
        for offset in range(stable - start):
            piece = pieces[offset]
            if len(data) + len(piece) + 1 > limit:
                break
            if self.values:
                data += b","
            data += piece
            self.values.append(items[start + offset])


class FragmentList(list[JsonObject]):
    """A list of wire fragments, some of them cached; behaves as a plain list for everyone else."""

    def __init__(self, items: Iterable[CachedFragment | JsonObject] = ()) -> None:
        super().__init__()
        self._cached: list[CachedFragment | None] = []
        self._shared: _SharedEncoding | None = None
        self._stable = 0  # leading items that are a conversion state's own, shared with later requests
        self._exposed = False
        for item in items:
            self.add(item)

    def add(self, item: CachedFragment | JsonObject) -> None:
        if isinstance(item, CachedFragment):
            self.append(item.value)
            self._cached.append(item)
        else:
            self.append(item)
            self._cached.append(None)

    def entries(self) -> list[CachedFragment | JsonObject]:
        """Each item as it was added (its cached fragment where it has one), to build another
        list from (``FragmentList(...)``) that keeps the fragments' encodings."""
        return [item if cached is None else cached for item, cached in zip(self, self._cached, strict=True)]

    def for_request(self) -> FragmentList:
        """A copy to finish and send (what is added to it or replaced in it stays out of this list);
        the copies of one list share the encoding of the items they have in common."""
        if self._shared is None:
            self._shared = _SharedEncoding()
        twin = FragmentList()
        twin.extend(self)
        twin._cached = list(self._cached)
        twin._shared = self._shared
        twin._stable = len(self)
        return twin

    def __setitem__(self, index: Any, value: Any) -> None:
        if isinstance(index, int):
            self._stable = min(self._stable, index if index >= 0 else len(self) + index)
        else:
            self._stable = 0
        super().__setitem__(index, value)

    def expose(self) -> None:
        """Someone else (a payload hook) is about to see the fragments and may edit them in place."""
        self._exposed = True
        for cached in self._cached:
            if cached is not None:
                cached.protect()

    def encode_into(
        self, out: list[bytes | bytearray], check_edits: bool, limit: int = ENCODED_BYTES_LIMIT
    ) -> bool:
        """Append the encoded list to ``out`` from cached fragments, keeping encodings for the first
        ``limit`` bytes; ``False`` (nothing appended) when it was changed as a list."""
        if len(self) != len(self._cached):
            return False
        check = check_edits or self._exposed
        shared = None if check else self._shared
        start = 0
        if shared is not None:
            count = len(shared.values)
            if count and count <= len(self) and all(map(is_, shared.values, self)):
                start = count
            else:
                shared.reset()
        pieces: list[bytes] = []
        kept = 0 if shared is None else len(shared.data)
        for value, cached in zip(self[start:], self._cached[start:], strict=True):
            if cached is None or cached.value is not value or (check and not cached.unchanged()):
                pieces.append(_dumps(value))
            else:
                data = cached.utf8(keep=kept < limit)
                kept += len(data)
                pieces.append(data)
        if shared is None:
            out += (b"[", b",".join(pieces), b"]")
            return True
        shared.extend(self, pieces, start, self._stable, limit)
        covered = len(shared.values)
        out.append(shared.data)
        rest = pieces[covered - start :]
        if rest:
            if covered:
                out.append(b",")
            out.append(b",".join(rest))
        out.append(b"]")
        return True


def encode_body(body: JsonObject, *, check_edits: bool = False, limit: int = ENCODED_BYTES_LIMIT) -> bytes:
    """``body`` as compact JSON bytes, reusing the encodings cached in its ``FragmentList`` values.

    ``check_edits``: someone may have edited cached fragments in place (lists a payload hook was
    shown are checked anyway, see ``expose_body``). ``limit``: how many encoded bytes of each
    message list to keep for the next request.
    """
    try:
        out: list[bytes | bytearray] = []
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


def expose_body(body: JsonObject) -> None:
    """A payload hook is about to see ``body``: its cached fragments are checked for edits when it is
    encoded, and no kept conversion state is used again (they hold the same fragments)."""
    for value in body.values():
        if isinstance(value, FragmentList):
            value.expose()
    forget_continuations()


def _copy_containers(value: Any) -> Any:
    """A deep copy of JSON's dicts and lists; strings and numbers are immutable, so shared."""
    if type(value) is dict:
        return {key: _copy_containers(item) for key, item in value.items()}
    if type(value) is list:
        return [_copy_containers(item) for item in value]
    return value


def _dumps(value: Any) -> bytes:
    return compact_json(value).encode()
