"""Check a tool call's arguments against the tool's JSON Schema, after a forgiving type coercion.

Measured reason for the plain checker: jsonschema's import and first check take ~52 ms of CPU, it ~5 ms.
``tests/agent/test_validation_plain.py`` holds it to jsonschema's valid and invalid (Dec 2026).

Models often send ``"3"`` for an integer or ``"true"`` for a boolean. Before validating, a copy of
the arguments is coerced towards the schema's types (the rules of AJV's ``coerceTypes``, which pi
uses). Validation is JSON Schema Draft 2020-12 (or the draft a schema names in ``$schema``).

``jsonschema`` costs tens of milliseconds to import and to compile a validator, so the plain schemas
of most tools (``type``, ``properties``, ``required``, ``items``, ``enum`` and simple bounds) are
checked by a small exact checker first; ``jsonschema`` is imported only for any other schema, or to
report what is wrong with arguments that fail.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping
from typing import Any, Protocol

from tau.ai.types import JsonObject
from tau.errors import TauError


class SchemaTool(Protocol):
    """Anything with a tool name and a JSON Schema for its arguments."""

    @property
    def name(self) -> str: ...

    @property
    def parameters(self) -> JsonObject: ...


class Validator(Protocol):
    """The part of a ``jsonschema`` validator used here (the package ships no type stubs)."""

    def iter_errors(self, instance: Any) -> Iterator[Any]: ...

    def is_valid(self, instance: Any) -> bool: ...

    def evolve(self, **changes: Any) -> Validator: ...


class ToolArgumentsError(TauError, ValueError):
    """The arguments do not match the schema. ``str()`` is the report the model sees."""

    def __init__(self, tool_name: str, failures: list[tuple[str, str]], arguments: Any) -> None:
        self.tool_name = tool_name
        self.failures = failures
        self.arguments = arguments
        bullets = "\n".join(f"  - {path}: {message}" for path, message in failures)
        received = json.dumps(arguments, indent=2, ensure_ascii=False, default=str)
        super().__init__(
            f'Invalid arguments for tool "{tool_name}":\n{bullets}\n\nReceived arguments:\n{received}'
        )


def validate_tool_arguments(tool: SchemaTool, args: Mapping[str, Any]) -> JsonObject:
    """Return a coerced copy of ``args`` that satisfies ``tool.parameters``, or raise ``ToolArgumentsError``.

    The original ``args`` are never modified.
    """
    schema = tool.parameters
    if _is_plain(schema):
        # Plain schemas have no anyOf/oneOf, the only place coercion needs a validator.
        coerced = coerce_to_schema(_copy_json(dict(args)), schema)
        if _plain_valid(coerced, schema):
            plain: JsonObject = coerced
            return plain
    validator = _validator_for(schema)
    coerced = coerce_to_schema(_copy_json(dict(args)), schema, validator)
    errors = list(validator.iter_errors(coerced))
    if errors:
        raise ToolArgumentsError(tool.name, [_describe(error) for error in errors], args)
    result: JsonObject = coerced
    return result


# -- the checker for plain schemas --------------------------------------------------------------

# Keywords the plain checker understands; a schema using any other (or naming a draft) goes to jsonschema.
_ANNOTATIONS = frozenset({"description", "title", "default", "examples", "$comment", "format", "deprecated"})
_PLAIN_KEYWORDS = _ANNOTATIONS | {
    "type", "properties", "required", "additionalProperties", "items", "enum",
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
    "minLength", "maxLength", "minItems", "maxItems",
}  # fmt: skip
_JSON_TYPES = frozenset({"null", "boolean", "integer", "number", "string", "array", "object"})
_plain_schemas: dict[int, tuple[JsonObject, bool]] = {}


def _is_plain(schema: JsonObject) -> bool:
    hit = _plain_schemas.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    plain = _plain_node(schema)
    if len(_plain_schemas) >= _CACHE_LIMIT:
        _plain_schemas.clear()
    _plain_schemas[id(schema)] = (schema, plain)
    return plain


def _plain_node(schema: Any) -> bool:
    if not isinstance(schema, dict) or not schema.keys() <= _PLAIN_KEYWORDS:
        return False
    types = schema.get("type", "object")
    names = [types] if isinstance(types, str) else types
    if (
        not isinstance(names, list)
        or not names
        or not all(isinstance(n, str) and n in _JSON_TYPES for n in names)
    ):
        return False
    properties = schema.get("properties", {})
    if not isinstance(properties, dict) or not all(_plain_node(p) for p in properties.values()):
        return False
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(name, str) for name in required):
        return False
    additional = schema.get("additionalProperties", True)
    if not isinstance(additional, bool) and not _plain_node(additional):
        return False
    if "items" in schema and not _plain_node(schema["items"]):
        return False
    enum = schema.get("enum", [])
    if not isinstance(enum, list) or not all(
        isinstance(m, str | int | float | bool) or m is None for m in enum
    ):
        return False
    bounds = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
    counts = ("minLength", "maxLength", "minItems", "maxItems")
    return all(_is_number(schema[k]) for k in bounds if k in schema) and all(
        type(schema[k]) is int and schema[k] >= 0 for k in counts if k in schema
    )


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _plain_valid(value: Any, schema: JsonObject) -> bool:
    """Whether ``value`` satisfies a plain ``schema``, exactly as JSON Schema 2020-12 says."""
    types = schema.get("type")
    if types is not None and not any(
        _is_type(value, t) for t in ([types] if isinstance(types, str) else types)
    ):
        return False
    if "enum" in schema and not any(type(m) is type(value) and m == value for m in schema["enum"]):
        return False  # (equal values of different types, 1 and 1.0, are left to jsonschema)
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        if any(name not in value for name in schema.get("required", ())):
            return False
        additional = schema.get("additionalProperties", True)
        for key, item in value.items():
            sub = properties.get(key, additional)
            if sub is False or (sub is not True and not _plain_valid(item, sub)):
                return False
    elif isinstance(value, list):
        items = schema.get("items")
        if items is not None and not all(_plain_valid(item, items) for item in value):
            return False
        if not schema.get("minItems", 0) <= len(value) <= schema.get("maxItems", len(value)):
            return False
    elif isinstance(value, str):
        if not schema.get("minLength", 0) <= len(value) <= schema.get("maxLength", len(value)):
            return False
    elif _is_number(value):
        if value < schema.get("minimum", value) or value > schema.get("maximum", value):
            return False
        if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
            return False
        if "exclusiveMaximum" in schema and value >= schema["exclusiveMaximum"]:
            return False
    elif isinstance(value, float):  # inf or nan against a bound: let jsonschema decide
        return not any(k in schema for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"))
    return True


# -- validators ----------------------------------------------------------------------------------

# Keyed by the schema object (tools keep their schema for life) with a fallback on its JSON text,
# so equal schemas built afresh on each call still share one compiled validator.
_by_identity: dict[int, tuple[JsonObject, Validator]] = {}
_by_text: dict[str, Validator] = {}
_CACHE_LIMIT = 512


def _validator_for(schema: JsonObject) -> Validator:
    hit = _by_identity.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    text = json.dumps(schema, sort_keys=True, default=str)
    validator = _by_text.get(text)
    if validator is None:
        from jsonschema import Draft202012Validator, validators  # type: ignore[import-untyped]

        cls = validators.validator_for(schema, default=Draft202012Validator)
        validator = cls(schema)
        if len(_by_text) >= _CACHE_LIMIT:
            _by_text.clear()
        _by_text[text] = validator
    if len(_by_identity) >= _CACHE_LIMIT:
        _by_identity.clear()
    _by_identity[id(schema)] = (schema, validator)
    return validator


def _describe(error: Any) -> tuple[str, str]:
    """``(dotted path, message)``; a missing property is named in the path."""
    path = ".".join(str(part) for part in error.absolute_path)
    if error.validator == "required" and isinstance(error.instance, dict):
        for name in error.validator_value:
            if name not in error.instance and repr(name) in error.message:
                return (f"{path}.{name}" if path else str(name)), "required property is missing"
    return path or "root", str(error.message)


# -- coercion ------------------------------------------------------------------------------------

_NUMERIC = re.compile(r"\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*")
_MAX_REF_HOPS = 16


def coerce_to_schema(value: Any, schema: Any, validator: Validator | None = None) -> Any:
    """Coerce ``value`` (modified in place where it is a container) towards ``schema``'s types.

    Scalars whose JSON type the schema does not allow are converted when a rule applies:
    to number/integer from numeric strings, booleans (1/0) and null (0); to boolean from
    ``"true"``/``"false"``, 1/0 and null (false); to string from numbers, booleans and null (``""``);
    to null from ``""``, 0 and false. The pass follows ``properties``, ``additionalProperties``,
    ``items``/``prefixItems``, ``allOf`` and local ``$ref``s; for ``anyOf``/``oneOf`` the first
    member that the coerced value satisfies wins. ``validator`` (for the root schema) is needed only
    to test those members; without one they are left alone.
    """
    return _Coercer(schema, validator).coerce(value, schema, 0)


class _Coercer:
    def __init__(self, root: Any, validator: Validator | None) -> None:
        self.root = root
        self.validator = validator

    def coerce(self, value: Any, schema: Any, hops: int) -> Any:
        if not isinstance(schema, dict):
            return value
        ref = schema.get("$ref")
        if isinstance(ref, str) and hops < _MAX_REF_HOPS:
            target = self._resolve(ref)
            if target is not None:
                value = self.coerce(value, target, hops + 1)
        types = schema.get("type")
        if isinstance(types, str):
            value = _coerce_scalar(value, [types])
        elif isinstance(types, list):
            value = _coerce_scalar(value, [t for t in types if isinstance(t, str)])
        if isinstance(value, dict):
            self._coerce_object(value, schema)
        elif isinstance(value, list):
            self._coerce_array(value, schema)
        for member in _schema_list(schema.get("allOf")):
            value = self.coerce(value, member, hops)
        for keyword in ("anyOf", "oneOf"):
            members = _schema_list(schema.get(keyword))
            if members:
                value = self._first_satisfied(value, members, hops)
        return value

    def _coerce_object(self, value: dict[str, Any], schema: JsonObject) -> None:
        properties = schema.get("properties")
        properties = properties if isinstance(properties, dict) else {}
        additional = schema.get("additionalProperties")
        for key in list(value):
            if key in properties:
                value[key] = self.coerce(value[key], properties[key], 0)
            elif isinstance(additional, dict):
                value[key] = self.coerce(value[key], additional, 0)

    def _coerce_array(self, value: list[Any], schema: JsonObject) -> None:
        prefix = schema.get("prefixItems")
        items = schema.get("items")
        if isinstance(items, list):  # the tuple form of older drafts
            prefix, items = items, schema.get("additionalItems")
        positional = _schema_list(prefix)
        for index, item in enumerate(value):
            if index < len(positional):
                value[index] = self.coerce(item, positional[index], 0)
            elif isinstance(items, dict):
                value[index] = self.coerce(item, items, 0)

    def _first_satisfied(self, value: Any, members: list[JsonObject], hops: int) -> Any:
        if self.validator is None:
            return value
        for member in members:
            candidate = self.coerce(_copy_json(value), member, hops)
            if self.validator.evolve(schema=member).is_valid(candidate):
                return candidate
        return value

    def _resolve(self, ref: str) -> Any:
        if ref == "#":
            return self.root
        if not ref.startswith("#/"):
            return None
        node: Any = self.root
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                return None
        return node


def _schema_list(value: Any) -> list[JsonObject]:
    if not isinstance(value, list):
        return []
    return [member for member in value if isinstance(member, dict)]


def _is_type(value: Any, type_name: str) -> bool:
    if type_name == "null":
        return value is None
    if type_name == "boolean":
        return isinstance(value, bool)
    if type_name == "integer":
        if isinstance(value, bool):
            return False
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if type_name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if type_name == "string":
        return isinstance(value, str)
    if type_name == "array":
        return isinstance(value, list)
    if type_name == "object":
        return isinstance(value, dict)
    return False


_NO_RULE = object()


def _coerce_scalar(value: Any, types: list[str]) -> Any:
    """Convert ``value`` to the first listed type a rule allows, unless it already has one of them."""
    if not types or any(_is_type(value, t) for t in types):
        return value
    for type_name in types:
        converted = _convert(value, type_name)
        if converted is not _NO_RULE:
            return converted
    return value


def _convert(value: Any, type_name: str) -> Any:
    is_number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if type_name in ("number", "integer"):
        if value is None:
            return 0
        if isinstance(value, bool):
            return int(value)
        if isinstance(value, str) and _NUMERIC.fullmatch(value):
            number = _parse_number(value)
            if isinstance(number, float) and not math.isfinite(number):
                return _NO_RULE
            if type_name == "number":
                return number
            if isinstance(number, int) or number.is_integer():
                return int(number)
        return _NO_RULE
    if type_name == "boolean":
        if value is None:
            return False
        if value in ("true", "false"):
            return value == "true"
        if is_number and value in (0, 1):
            return value == 1
        return _NO_RULE
    if type_name == "string":
        if value is None:
            return ""
        if isinstance(value, bool):
            return "true" if value else "false"
        if is_number:
            return _format_number(value)
        return _NO_RULE
    if type_name == "null":
        if value == "" or value is False or (is_number and value == 0):
            return None
        return _NO_RULE
    return _NO_RULE


def _parse_number(text: str) -> int | float:
    text = text.strip()
    try:
        return int(text)
    except ValueError:
        number = float(text)
    if math.isfinite(number) and number.is_integer() and abs(number) < 2**53:
        return int(number)
    return number


def _format_number(value: float) -> str:
    """A number as JavaScript's ``String()`` writes it for the common cases (``3.0`` is ``"3"``)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    return repr(value) if isinstance(value, float) else str(value)


def _copy_json(value: Any) -> Any:
    """A deep copy of JSON-shaped data (dicts and lists are copied; leaves are immutable)."""
    if isinstance(value, dict):
        return {key: _copy_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copy_json(item) for item in value]
    return value
