"""tau._dataclass makes classes that behave as the standard library's dataclasses do."""

from __future__ import annotations

import copy
import dataclasses
import math
import pickle
import types
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


def _fields_class(make: Maker, **options: Any) -> type[Any]:
    @make(**options)
    class Fields:
        a: Any
        b: Any = 1
        c: list[Any] = dataclasses.field(default_factory=list)
        d: str = dataclasses.field(default="d", init=False)
        e: list[Any] = dataclasses.field(default_factory=lambda: [0], init=False)
        f: Any = dataclasses.field(default=None, kw_only=True)

    return Fields


OPTIONS = [{}, {"slots": True}, {"frozen": True}, {"frozen": True, "slots": True}, {"kw_only": True}]


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: "-".join(o) or "plain")
def test_init_takes_and_sets_what_the_standard_one_does(options: dict[str, Any]) -> None:
    std, ours = _fields_class(dataclasses.dataclass, **options), _fields_class(tau_dataclass, **options)
    calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
        ((), {"a": 1}),
        ((), {"a": 1, "b": 2, "c": [3], "f": 4}),
        ((1, 2), {}),
        ((1, 2, [3]), {}),
        ((1, 2, [3], 4), {}),
        ((), {}),
        ((), {"a": 1, "d": "x"}),
        ((), {"a": 1, "zz": 2}),
    ]
    for args, kwargs in calls:
        expected, got = _made_or_error(std, args, kwargs), _made_or_error(ours, args, kwargs)
        assert got == expected, (args, kwargs)
    first, second = ours(a=1), ours(a=1)
    assert first.c is not second.c and first.e is not second.e  # a fresh default each time


def _made_or_error(cls: type[Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    try:
        made = cls(*args, **kwargs)
    except TypeError as error:
        return "TypeError", str(error).replace(cls.__qualname__, "")
    return {name: getattr(made, name) for name in "abcdef"}


def test_init_is_compiled_by_the_first_object_and_kept() -> None:
    @tau_dataclass
    class Late:
        a: int

    stand_in = Late.__init__
    assert Late(1).a == 1
    assert Late.__init__ is not stand_in
    assert Late.__init__.__qualname__.endswith("Late.__init__")
    held = Late.__new__(Late)
    stand_in(held, 2)  # a caller that kept the stand-in gets the compiled one
    assert held.a == 2


def test_post_init_runs_and_a_field_may_be_called_self() -> None:
    @tau_dataclass
    class Odd:
        self: int
        seen: list[int] = dataclasses.field(default_factory=list)

        def __post_init__(self) -> None:
            self.seen.append(self.self)

    assert Odd(3).seen == [3] and Odd(self=4).seen == [4]


def test_init_var_and_class_var_fields_are_handled_as_the_standard_library_does() -> None:
    @tau_dataclass
    class WithVars:
        a: int
        scale: dataclasses.InitVar[int] = 2
        unit: Any = "m"

        def __post_init__(self, scale: int) -> None:
            self.a *= scale

    assert WithVars(3).a == 6 and WithVars(3, 10, "s").a == 30
    assert [f.name for f in dataclasses.fields(WithVars)] == ["a", "unit"]


def test_subclasses_get_their_fields_in_order_and_frozen_ones_stay_frozen() -> None:
    @tau_dataclass(frozen=True)
    class Base:
        a: int
        b: int = 2

    @tau_dataclass(frozen=True)
    class Child(Base):
        c: int = 3

    class Plain(Child):
        def __init__(self) -> None:
            super().__init__(7)

    assert (Child(1).a, Child(1).b, Child(1).c) == (1, 2, 3)
    assert Child(1, 5, 6) == Child(1, 5, 6) != Child(1)
    assert (Plain().a, Plain().c) == (7, 3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        Child(1).c = 4  # type: ignore[misc]
    with pytest.raises(TypeError, match="non-frozen"):

        @tau_dataclass
        class Thawed(Base):
            d: int = 0


_KINDS = st.sampled_from(["int", "str | None", "list[str]", "dict[str, Any]", "Any"])
_DEFAULTS = st.sampled_from(["none", "value", "factory", "field", "field-value", "no-init"])


@st.composite
def _class_specs(draw: st.DrawFn) -> tuple[list[tuple[str, str, str, bool]], dict[str, bool]]:
    count = draw(st.integers(0, 5))
    fields = [(f"f{i}", draw(_KINDS), draw(_DEFAULTS), draw(st.booleans())) for i in range(count)]
    options = {name: draw(st.booleans()) for name in ("frozen", "slots", "kw_only", "repr", "eq")}
    return fields, options


def _build(make: Maker, spec: tuple[list[tuple[str, str, str, bool]], dict[str, bool]]) -> type[Any] | str:
    fields, options = spec
    namespace: dict[str, Any] = {"__annotations__": {}, "__module__": __name__, "__qualname__": "Built"}
    for name, kind, default, keyword in fields:
        namespace["__annotations__"][name] = kind
        option = {"kw_only": True} if keyword else {}
        if default == "value":
            namespace[name] = 3
        elif default == "factory":
            namespace[name] = dataclasses.field(default_factory=list, **option)  # type: ignore[call-overload]
        elif default == "field":
            namespace[name] = dataclasses.field(repr=False, compare=False, **option)  # type: ignore[call-overload]
        elif default == "field-value":
            namespace[name] = dataclasses.field(default="x", hash=False, **option)  # type: ignore[call-overload]
        elif default == "no-init":
            namespace[name] = dataclasses.field(default=None, init=False)
    try:
        made: type[Any] = make(**options)(type("Built", (), namespace))
    except (TypeError, ValueError) as error:
        return f"{type(error).__name__}: {error}"
    return made


def _shape(made: type[Any] | str) -> Any:
    if isinstance(made, str):
        return made
    attributes = ("name", "type", "default", "default_factory", "init", "repr", "compare", "hash", "kw_only")
    params = made.__dataclass_params__
    return (
        [tuple(getattr(f, a) for a in attributes) for f in dataclasses.fields(made)],
        made.__match_args__,
        {f.name: _attribute(made.__dict__.get(f.name, "<absent>")) for f in dataclasses.fields(made)},
        made.__dict__.get("__slots__"),
        hasattr(made, "__weakref__"),
        (params.init, params.repr, params.eq, params.frozen),
        made.__qualname__,
    )


def _attribute(value: Any) -> Any:
    return "<slot>" if isinstance(value, types.MemberDescriptorType) else value


@given(spec=_class_specs())
def test_classes_get_the_fields_defaults_and_flags_the_standard_decorator_gives(
    spec: tuple[list[tuple[str, str, str, bool]], dict[str, bool]],
) -> None:
    ours, standard = _shape(_build(tau_dataclass, spec)), _shape(_build(dataclasses.dataclass, spec))
    if isinstance(standard, str):  # Python 3.13 names the default argument too
        assert isinstance(ours, str) and standard.startswith(ours)
    else:
        assert ours == standard


def test_a_mutable_default_and_a_field_without_annotation_are_refused_as_by_the_standard_decorator() -> None:
    for body in ({"__annotations__": {"a": "list[int]"}, "a": []}, {"__annotations__": {}, "b": dataclasses.field()}):
        errors = []
        for make in (dataclasses.dataclass, tau_dataclass):
            with pytest.raises((TypeError, ValueError)) as caught:
                make(type("Bad", (), {**body, "__module__": __name__}))
            errors.append((caught.type, str(caught.value)))
        assert errors[0] == errors[1]
