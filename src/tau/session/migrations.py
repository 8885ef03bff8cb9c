"""Bringing old session files to version 3, in place on the parsed objects.

* v1 → v2: entries get 8-hex ids chained linearly (the first is a root); a compaction's
  ``firstKeptEntryIndex`` (index into the parsed lines, header = 0) becomes ``firstKeptEntryId``.
* v2 → v3: the ``hookMessage`` message role is renamed ``custom``.

New keys are added at the end of each object and existing keys keep their place, as pi's
in-place mutation of JavaScript objects does, so a migrated file matches pi's byte for byte.
"""

from __future__ import annotations

from collections.abc import Callable, Container

from tau.ai.types import JsonObject
from tau.session.entries import CURRENT_SESSION_VERSION

NewId = Callable[[Container[str]], str]


def file_version(objects: list[JsonObject]) -> int:
    """The version in the first header among ``objects`` (no version key ⇒ 1)."""
    for obj in objects:
        if obj.get("type") == "session":
            version = obj.get("version")
            if version is None:
                return 1
            if isinstance(version, int | float) and not isinstance(version, bool):
                return int(version)
            # A version tau cannot read is not treated as "old": re-chaining ids would destroy the tree.
            return CURRENT_SESSION_VERSION
    return 1


def migrate_objects(objects: list[JsonObject], new_id: NewId) -> bool:
    """Migrate the parsed lines of a file to the current version; ``True`` if anything ran."""
    version = file_version(objects)
    if version >= CURRENT_SESSION_VERSION:
        return False
    if version < 2:
        _v1_to_v2(objects, new_id)
    if version < 3:
        _v2_to_v3(objects)
    return True


def _v1_to_v2(objects: list[JsonObject], new_id: NewId) -> None:
    taken: set[str] = set()
    previous: str | None = None
    for obj in objects:
        if obj.get("type") == "session":
            obj["version"] = 2
            continue
        entry_id = new_id(taken)
        taken.add(entry_id)
        obj["id"] = entry_id
        obj["parentId"] = previous
        previous = entry_id
        index = obj.get("firstKeptEntryIndex")
        if obj.get("type") == "compaction" and isinstance(index, int | float) and not isinstance(index, bool):
            del obj["firstKeptEntryIndex"]
            target = objects[index] if isinstance(index, int) and 0 <= index < len(objects) else None
            # A target after the compaction has no id yet at this point (in pi too): left unresolved.
            if target is not None and target.get("type") != "session" and "id" in target:
                obj["firstKeptEntryId"] = target["id"]


def _v2_to_v3(objects: list[JsonObject]) -> None:
    for obj in objects:
        if obj.get("type") == "session":
            obj["version"] = 3
            continue
        message = obj.get("message")
        if (
            obj.get("type") == "message"
            and isinstance(message, dict)
            and message.get("role") == "hookMessage"
        ):
            message["role"] = "custom"
