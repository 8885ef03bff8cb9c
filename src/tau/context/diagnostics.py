"""What loading resources reports instead of printing: warnings, errors and name collisions."""

from __future__ import annotations

from typing import Literal, TypeAlias

from msgspec import Struct

DiagnosticType: TypeAlias = Literal["warning", "error", "collision"]
ResourceType: TypeAlias = Literal["skill", "prompt", "context"]


class ResourceCollision(Struct, frozen=True):
    """Two resources of one kind share a name; the first loaded (``winner_path``) is kept."""

    resource_type: ResourceType
    name: str
    winner_path: str
    loser_path: str


class ResourceDiagnostic(Struct, frozen=True):
    """One problem found while loading; ``path`` is the file or folder it is about."""

    type: DiagnosticType
    message: str
    path: str | None = None
    collision: ResourceCollision | None = None
