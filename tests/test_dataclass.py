"""tau._dataclass makes classes that behave as the standard library's dataclasses do."""

from __future__ import annotations

import copy
import dataclasses
import math
import pickle
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tau._dataclass import dataclass as tau_dataclass

Maker = Callable[..., Any]
BOTH = pytest.mark.parametrize("make", [dataclasses.dataclass, tau_dataclass], ids=["stdlib", "tau"])


def _point(make: Maker, **options: Any) -> type[Any]:
    @make(**options)
    class Point:
        x: Any
        y: Any = 0
        note: str = dataclasses.field(default="", repr=False, compare=False)
        tags: Any = ()

    return Point


# Module level, so that pickle finds them.
@tau_dataclass(frozen=True, slots=True)
class FrozenSlots:
    a: int
    b: tuple[int, ...] = ()


@tau_dataclass(frozen=True)
class Frozen:
    a: int


@tau_dataclass(slots=True, kw_only=True)
class KeywordsOnly:
    a: int
    b: str = "b"


values = st.one_of(st.integers(), st.floats(), st.text(max_size=5), st.none(), st.lists(st.integers(), max_size=3))


@given(x=values, y=values, x2=values, note=st.text(max_size=3))
def test_repr_eq_and_hash_are_the_standard_librarys(x: Any, y: Any, x2: Any, note: str) -> None:
    for options in ({"slots": True}, {}, {"frozen": True, "slots": True}, {"frozen": True}):
        std, ours = _point(dataclasses.dataclass, **options), _point(tau_dataclass, **options)
        a, b = std(x, y, note), std(x2, y)
        a2, b2 = ours(x, y, note), ours(x2, y)
        assert repr(a2) == repr(a)
        assert (a2 == b2) == (a == b)
        assert (a2 != b2) == (a != b)
        if options.get("frozen"):
            assert _hash_or_error(a2) == _hash_or_error(a)


def _hash_or_error(value: Any) -> int | str:
    try:
        return hash(value)
    except TypeError as error:
        return str(error)


def test_a_field_that_is_nan_equals_itself_as_in_a_tuple() -> None:
    std, ours = _point(dataclasses.dataclass), _point(tau_dataclass)
    nan = math.nan
    assert (ours(nan) == ours(nan)) == (std(nan) == std(nan)) is True


@BOTH
def test_other_classes_are_not_equal_and_get_not_implemented(make: Maker) -> None:
    point = _point(make)
    other = _point(make)
    assert point(1) != other(1)
    assert point(1).__eq__((1, 0, [])) is NotImplemented
    assert point(1) != (1, 0, [])


@BOTH
def test_a_mutable_compared_class_is_unhashable(make: Maker) -> None:
    with pytest.raises(TypeError):
        hash(_point(make, slots=True)(1))


@BOTH
def test_without_eq_objects_compare_and_hash_by_identity(make: Maker) -> None:
    point = _point(make, eq=False)
    a = point(1)
    assert a != point(1)
    assert hash(a) == object.__hash__(a)


@BOTH
def test_the_class_own_methods_are_kept(make: Maker) -> None:
    @make(frozen=True)
    class Own:
        a: int

        def __repr__(self) -> str:
            return "own"

        def __eq__(self, other: object) -> bool:
            return True

        def __hash__(self) -> int:
            return 7

    assert repr(Own(1)) == "own"
    assert Own(1) == 3
    assert hash(Own(1)) == 7


@BOTH
def test_a_class_with_its_own_eq_only_is_unhashable(make: Maker) -> None:
    @make
    class OwnEq:
        a: int

        def __eq__(self, other: object) -> bool:
            return True

    assert OwnEq.__hash__ is None


@BOTH
def test_a_recursive_repr_shows_dots(make: Maker) -> None:
    @make
    class Node:
        child: Any = None

    node = Node()
    node.child = node
    assert repr(node) == "test_a_recursive_repr_shows_dots.<locals>.Node(child=...)"


def test_frozen_fields_cannot_be_set_or_deleted() -> None:
    for value in (FrozenSlots(1), Frozen(1)):
        with pytest.raises(dataclasses.FrozenInstanceError):
            value.a = 2  # type: ignore[misc]
        with pytest.raises(dataclasses.FrozenInstanceError):
            del value.a  # type: ignore[misc]


def test_frozen_slotted_objects_pickle_copy_and_replace() -> None:
    value = FrozenSlots(1, (2, 3))
    assert pickle.loads(pickle.dumps(value)) == value
    assert copy.deepcopy(value) == value and copy.copy(value) == value
    assert dataclasses.replace(value, a=5) == FrozenSlots(5, (2, 3))
    assert not hasattr(value, "__dict__")


def test_keyword_only_fields_and_the_dataclass_helpers_work() -> None:
    with pytest.raises(TypeError):
        KeywordsOnly(1)  # type: ignore[misc]
    value = KeywordsOnly(a=1)
    assert dataclasses.is_dataclass(value)
    assert [f.name for f in dataclasses.fields(value)] == ["a", "b"]
    assert dataclasses.asdict(value) == {"a": 1, "b": "b"}
    assert KeywordsOnly.__match_args__ == ()
    assert repr(value) == "KeywordsOnly(a=1, b='b')"


def test_a_class_without_a_docstring_gets_one_naming_its_fields() -> None:
    @tau_dataclass(slots=True)
    class Bare:
        a: int
        b: str = ""

    assert Bare.__doc__ == "Bare(a, b)"
    assert FrozenSlots.__doc__ == "FrozenSlots(a, b)"
