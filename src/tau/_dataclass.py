"""``dataclass`` as the standard library's, at a third of the cost of making each class.

The standard decorator compiles source text for every method of every class: ``__init__``,
``__repr__``, ``__eq__`` and, for a frozen class, ``__hash__``, ``__setattr__`` and
``__delattr__``. tau defines a few hundred dataclasses, and compiling their methods was a third of
the CPU time of a ``tau -p`` start. Here the standard decorator makes the class without
``__repr__`` and ``__eq__`` (it still compiles ``__init__`` and a frozen class's guards), and the
class gets ``__repr__``, ``__eq__`` and ``__hash__`` that read its field list instead: the same
results (the same text, the same tuple comparison, the same hash), with nothing compiled. A class
without a docstring gets its field names as one (the standard one is its ``__init__`` signature).

Kept free of any tau import: every layer uses it, ``tau.ai`` included.
"""

from __future__ import annotations

import dataclasses
import operator
import reprlib
from collections.abc import Callable
from typing import Any, TypeVar, dataclass_transform, overload

__all__ = ["dataclass"]

_T = TypeVar("_T")


@overload
def dataclass(cls: type[_T], /) -> type[_T]: ...


@overload
def dataclass(
    *,
    init: bool = True,
    repr: bool = True,
    eq: bool = True,
    frozen: bool = False,
    kw_only: bool = False,
    slots: bool = False,
) -> Callable[[type[_T]], type[_T]]: ...


@dataclass_transform(field_specifiers=(dataclasses.field, dataclasses.Field))
def dataclass(
    cls: type[Any] | None = None,
    /,
    *,
    init: bool = True,
    repr: bool = True,
    eq: bool = True,
    frozen: bool = False,
    kw_only: bool = False,
    slots: bool = False,
) -> Any:
    """``dataclasses.dataclass`` with these options; see the module's text for what differs in the making."""

    def wrap(cls: type[Any]) -> type[Any]:
        return _make(cls, init=init, repr=repr, eq=eq, frozen=frozen, kw_only=kw_only, slots=slots)

    return wrap if cls is None else wrap(cls)


def _make(
    cls: type[Any], *, init: bool, repr: bool, eq: bool, frozen: bool, kw_only: bool, slots: bool
) -> type[Any]:
    body = cls.__dict__
    # What the class itself defines wins, as with the standard decorator; a body that defines
    # __eq__ alone has __hash__ = None put there by Python, which is not a hash of its own.
    own_hash = "__hash__" in body and not (body["__hash__"] is None and "__eq__" in body)
    add_repr, add_eq = repr and "__repr__" not in body, eq and "__eq__" not in body
    if not body.get("__doc__"):
        # The standard decorator writes a missing docstring from inspect.signature(cls), its
        # slowest step; the field names say as much.
        cls.__doc__ = f"{cls.__name__}({', '.join(body.get('__annotations__', ()))})"
    made: type[Any] = dataclasses.dataclass(
        cls, init=init, repr=False, eq=False, frozen=frozen, kw_only=kw_only, slots=slots
    )
    fields = dataclasses.fields(made)
    if add_repr:
        _set_method(made, _repr_method(tuple(f.name for f in fields if f.repr)))
    if add_eq:
        _set_method(made, _eq_method(_values([f.name for f in fields if f.compare])))
    if eq and not own_hash:
        if frozen:
            hashed = [f.name for f in fields if (f.compare if f.hash is None else f.hash)]
            _set_method(made, _hash_method(_values(hashed)))
        else:
            made.__hash__ = None  # type: ignore[assignment]  # mutable and compared: unhashable
    return made


def _set_method(cls: type[Any], method: Callable[..., Any]) -> None:
    method.__qualname__ = f"{cls.__qualname__}.{method.__name__}"
    setattr(cls, method.__name__, method)


def _values(names: list[str]) -> Callable[[Any], tuple[Any, ...]]:
    """The tuple of these attributes of an object (a tuple also for one name or none, so that
    comparing two of them is the tuple comparison the standard ``__eq__`` makes)."""
    if len(names) > 1:
        return operator.attrgetter(*names)
    if names:
        name = names[0]
        return lambda obj: (getattr(obj, name),)
    return lambda obj: ()


def _repr_method(names: tuple[str, ...]) -> Callable[[Any], str]:
    @reprlib.recursive_repr()
    def __repr__(self: Any) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{self.__class__.__qualname__}({shown})"

    return __repr__


def _eq_method(values: Callable[[Any], tuple[Any, ...]]) -> Callable[[Any, object], Any]:
    def __eq__(self: Any, other: object) -> Any:
        if other.__class__ is self.__class__:
            return values(self) == values(other)
        return NotImplemented

    return __eq__


def _hash_method(values: Callable[[Any], tuple[Any, ...]]) -> Callable[[Any], int]:
    def __hash__(self: Any) -> int:
        return hash(values(self))

    return __hash__
