"""``dataclass`` as the standard library's, at a fraction of the cost of making each class.

The standard decorator compiles source text for every method of every class: ``__init__``,
``__repr__``, ``__eq__`` and, for a frozen class, ``__hash__``, ``__setattr__`` and
``__delattr__``. tau defines a few hundred dataclasses, and compiling their methods was a third of
the CPU time of a ``tau -p`` start, most of it for classes the run never makes an object of. Here
nothing is compiled while a class is made:

- ``__repr__``, ``__eq__`` and ``__hash__`` read the class's field list (the same text, the same
  tuple comparison, the same hash as the standard ones);
- a frozen class's guards are two shared functions raising ``FrozenInstanceError`` as the standard
  ones do (a frozen class with dataclass bases keeps the standard guards);
- a plain class (no base, text annotations) gets its fields, params, match args and slots here,
  as the standard decorator gives them; any other goes through the standard decorator;
- ``__init__`` is the standard one, written when the class makes its first object: until then the
  class holds a stand-in that writes it, puts it in its own place and calls it. Its code comes
  from ``tau._code_cache``, compiled once and then kept between runs as bytecode is.

A class without a docstring gets its field names as one (the standard one is its ``__init__``
signature, and reading a signature is the standard decorator's slowest step).

It imports nothing of tau but ``tau._code_cache`` (which imports nothing of tau): every layer
uses it, ``tau.ai`` included.
"""

from __future__ import annotations

import abc
import dataclasses
import operator
import reprlib
import sys
from collections.abc import Callable
from typing import Any, TypeVar, dataclass_transform, overload

from tau._code_cache import compiled

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
    lazy_init = init and "__init__" not in body
    # The shared guards need a class with no dataclass base (the standard decorator checks that a
    # frozen class's dataclass bases are frozen too, from the flags this one sets afterwards).
    own_guards = frozen and not any(hasattr(base, "__dataclass_fields__") for base in cls.__mro__[1:])
    if not body.get("__doc__"):
        cls.__doc__ = f"{cls.__name__}({', '.join(body.get('__annotations__', ()))})"
    # No __init__ from the standard decorator either way: the stand-in writes it, and one the
    # class defines stays (the standard decorator would compile its own and then not set it).
    made = _made_plainly(cls, options=(init, repr, eq, frozen, kw_only, slots)) or dataclasses.dataclass(
        cls, init=False, repr=False, eq=False, frozen=frozen and not own_guards, kw_only=kw_only, slots=slots
    )
    fields = dataclasses.fields(made)
    params = made.__dataclass_params__
    params.init, params.repr, params.eq, params.frozen = init, repr, eq, frozen
    if lazy_init:
        _check_defaults_come_last(fields)
        _set_method(made, _lazy_init(made, frozen, slots))
    if own_guards:
        names = tuple(f.name for f in fields)
        _set_method(made, _frozen_setattr(made, frozenset(names)))
        _set_method(made, _frozen_delattr(made, frozenset(names)))
        if slots:  # what the standard decorator gives a frozen class with slots, for pickle
            _set_method(made, _getstate(names))
            _set_method(made, _setstate(names))
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


# What the standard decorator's own processing amounts to for a plain class, done directly: the
# common case costs a fifth (it checks each annotation text three times for ClassVar, InitVar and
# KW_ONLY). It relies on dataclasses' field kind marker (``Field._field_type``, set to
# ``dataclasses._FIELD``), unchanged since Python 3.7; without it every class takes the standard way.
_FIELD_KIND = getattr(dataclasses, "_FIELD", None)
_PSEUDO_FIELDS = ("ClassVar", "InitVar", "KW_ONLY")
_params_made: dict[tuple[bool, ...], Any] = {}


def _made_plainly(cls: type[Any], *, options: tuple[bool, ...]) -> type[Any] | None:
    """``cls`` made a dataclass without ``__init__``, ``__repr__``, ``__eq__`` or guards, as the
    standard decorator makes it; ``None`` (nothing changed) for a class this does not cover: one
    with a base class, an annotation that is not text or may name a pseudo-field, or on a Python
    whose fields carry no kind marker."""
    *_, kw_only, slots = options
    annotations = cls.__dict__.get("__annotations__", {})  # noqa: RUF063 - the class's own, as dataclasses reads them
    if _FIELD_KIND is None or cls.__bases__ != (object,) or "__slots__" in cls.__dict__:
        return None
    for kind in annotations.values():
        if not isinstance(kind, str) or any(word in kind for word in _PSEUDO_FIELDS):
            return None
    missing = dataclasses.MISSING
    fields: dict[str, dataclasses.Field[Any]] = {}
    for name, kind in annotations.items():
        default = cls.__dict__.get(name, missing)
        if isinstance(default, dataclasses.Field):
            field = default
            if field.default is missing:
                delattr(cls, name)
            else:
                setattr(cls, name, field.default)
        else:
            field = dataclasses.field(default=default)
        field.name, field.type = name, kind
        field._field_type = _FIELD_KIND  # type: ignore[attr-defined]
        if field.kw_only is missing:
            field.kw_only = kw_only
        if field.default is not missing and field.default.__class__.__hash__ is None:
            raise ValueError(
                f"mutable default {type(field.default)} for field {name} is not allowed: use default_factory"
            )
        fields[name] = field
    for name, value in cls.__dict__.items():
        if isinstance(value, dataclasses.Field) and name not in annotations:
            raise TypeError(f"{name!r} is a field but has no type annotation")
    made: Any = cls  # the class gets the attributes dataclasses reads
    made.__dataclass_params__ = _params(options)
    made.__dataclass_fields__ = fields
    if "__match_args__" not in cls.__dict__:
        made.__match_args__ = tuple(f.name for f in fields.values() if f.init and not f.kw_only)  # type: ignore[misc]
    replace = getattr(dataclasses, "_replace", None)  # Python 3.13's copy.replace support
    if replace is not None and "__replace__" not in cls.__dict__:
        made.__replace__ = replace
    if slots:
        body = dict(cls.__dict__)
        body["__slots__"] = tuple(fields)
        for name in (*fields, "__dict__", "__weakref__"):
            body.pop(name, None)
        metaclass: Any = type(cls)
        made = metaclass(cls.__name__, cls.__bases__, body)
        made.__qualname__ = cls.__qualname__
    abc.update_abstractmethods(made)
    return made  # type: ignore[no-any-return]


def _params(options: tuple[bool, ...]) -> Any:
    """The ``__dataclass_params__`` the standard decorator gives a class made with these options
    (``init, repr, eq, frozen, kw_only, slots``): one object per set of options, made by the
    standard decorator itself (the class of these objects and its arguments differ between Python
    versions); ``_make`` records the first four on it."""
    params = _params_made.get(options)
    if params is None:
        *_, kw_only, slots = options
        # Nothing to compile, the flags are set afterwards; and a docstring, else the decorator
        # writes one from the signature of object.__init__, which tokenizes its text (5 ms of
        # every start, compiling tokenize's patterns).
        body = {"__doc__": "Template()"}
        template: Any = dataclasses.dataclass(
            type("Template", (), body), init=False, repr=False, eq=False, kw_only=kw_only, slots=slots
        )
        params = _params_made[options] = template.__dataclass_params__
    return params


def _check_defaults_come_last(fields: tuple[dataclasses.Field[Any], ...]) -> None:
    """The standard decorator's check on the ``__init__`` it writes at once, made when the class is."""
    missing = dataclasses.MISSING
    seen_default = False
    for f in fields:
        if f.init and not f.kw_only:
            if f.default is not missing or f.default_factory is not missing:
                seen_default = True
            elif seen_default:
                raise TypeError(f"non-default argument {f.name!r} follows default argument")


def _lazy_init(cls: type[Any], frozen: bool, slots: bool) -> Callable[..., None]:
    """A stand-in ``__init__`` that compiles the class's real one on its first call."""

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        real = cls.__dict__["__init__"]
        if real is __init__:  # the first object; a caller may hold the stand-in, hence the check
            real = _compiled_init(cls, frozen, slots)
            real.__qualname__ = f"{cls.__qualname__}.__init__"
            type.__setattr__(cls, "__init__", real)
        real(self, *args, **kwargs)

    return __init__


class _Factory:
    """The default a parameter with a ``default_factory`` gets: "call the factory"."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()


def _compiled_init(cls: type[Any], frozen: bool, slots: bool) -> Callable[..., None]:
    """The ``__init__`` the standard decorator writes for this class: the same parameters, in the
    same order, with the same defaults; each field set (through ``object.__setattr__`` for a frozen
    class; also a field ``init=False`` gives a default when slots leave no class attribute to read
    it from); then ``__post_init__``. A class with ``InitVar`` or ``ClassVar`` pseudo-fields gets
    the standard decorator's own."""
    every = cls.__dataclass_fields__
    fields = dataclasses.fields(cls)
    if len(every) != len(fields):  # ClassVar or InitVar pseudo-fields: the standard decorator's
        return _standard_init(cls, frozen, slots)
    self_name = "__dataclass_self__" if "self" in every else "self"
    bound: dict[str, Any] = {"__dataclass_builtins_object__": object, "_FACTORY": _FACTORY}
    positional: list[str] = []
    keyword: list[str] = []
    lines: list[str] = []
    for f in fields:
        default = f"_dflt_{f.name}"
        has_factory = f.default_factory is not dataclasses.MISSING
        has_default = f.default is not dataclasses.MISSING
        if f.init:
            if has_factory:
                bound[default] = f.default_factory
                (keyword if f.kw_only else positional).append(f"{f.name}=_FACTORY")
                value = f"{default}() if {f.name} is _FACTORY else {f.name}"
            else:
                if has_default:
                    bound[default] = f.default
                (keyword if f.kw_only else positional).append(f"{f.name}={default}" if has_default else f.name)
                value = f.name
        elif has_factory:
            bound[default] = f.default_factory
            value = f"{default}()"
        elif slots and has_default:
            bound[default] = f.default
            value = default
        else:
            continue
        if frozen:
            lines.append(f"__dataclass_builtins_object__.__setattr__({self_name},{f.name!r},{value})")
        else:
            lines.append(f"{self_name}.{f.name}={value}")
    if hasattr(cls, "__post_init__"):
        lines.append(f"{self_name}.__post_init__()")
    parameters = ",".join([self_name, *positional, *(["*", *keyword] if keyword else [])])
    statements = "\n  ".join(lines or ["pass"])
    source = f"def __create_fn__({','.join(bound)}):\n def __init__({parameters}):\n  {statements}\n return __init__"
    namespace: dict[str, Any] = {}
    exec(compiled(source), sys.modules[cls.__module__].__dict__, namespace)
    made: Callable[..., None] = namespace["__create_fn__"](**bound)
    return made


def _standard_init(cls: type[Any], frozen: bool, slots: bool) -> Callable[..., None]:
    """The standard decorator's own ``__init__``, made on a throwaway subclass (same fields)."""
    namespace = {"__module__": cls.__module__, "__qualname__": cls.__qualname__}
    shadow: type[Any] = dataclasses.dataclass(
        type(cls.__name__, (cls,), namespace), repr=False, eq=False, frozen=frozen, match_args=False, slots=slots
    )
    real: Callable[..., None] = shadow.__dict__["__init__"]
    return real


def _frozen_setattr(cls: type[Any], names: frozenset[str]) -> Callable[[Any, str, Any], None]:
    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    return __setattr__


def _frozen_delattr(cls: type[Any], names: frozenset[str]) -> Callable[[Any, str], None]:
    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    return __delattr__


def _getstate(names: tuple[str, ...]) -> Callable[[Any], list[Any]]:
    def __getstate__(self: Any) -> list[Any]:
        return [getattr(self, name) for name in names]

    return __getstate__


def _setstate(names: tuple[str, ...]) -> Callable[[Any, list[Any]], None]:
    def __setstate__(self: Any, state: list[Any]) -> None:
        for name, value in zip(names, state, strict=False):
            object.__setattr__(self, name, value)

    return __setstate__


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
