"""What a tool's ``constrained_sampling`` asks of a request, as pi 1.6 resolves it.

``json_schema_parameters`` decides a JSON-schema tool's ``strict`` (its schema made strict where the
model can; ``strict: "require"`` fails the request where it cannot). ``resolve_grammar`` decides
whether a grammar tool goes out as an OpenAI custom tool (``compat.supportsOpenAIGrammarTools``)
and checks that it can: a grammar variant, and a schema of exactly one required string property,
the property the model's raw text is handed to the tool under. ``GrammarInput`` turns that text,
streamed in pieces, into the JSON argument text of the call (``{"<property>": "<text>"}``).

A tool that cannot be sent as it asks is a ``ProviderError`` with pi's message: the request fails
as a value (an error message), never with a traceback.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Literal, NamedTuple

from tau.ai.stream_writer import ProviderError
from tau.ai.strict_schema import KeywordCheck, UnsupportedStrictSchema, strict_schema
from tau.ai.types import Context, GrammarSampling, JsonObject, JsonSchemaSampling, Tool

GrammarSyntax = Literal["lark", "regex"]


class GrammarTool(NamedTuple):
    """A grammar tool as a custom tool sends it."""

    syntax: GrammarSyntax
    definition: str
    input_property: str


def json_schema_parameters(
    tool: Tool, supports_strict: bool, unsupported: KeywordCheck | None = None
) -> JsonObject | None:
    """The strict schema a JSON-schema tool goes out with, or ``None`` when it goes non-strict
    (no JSON-schema sampling asked, the model has no strict mode, or a ``prefer`` tool whose
    schema cannot be strict). ``ProviderError`` for a ``require`` tool that cannot be strict."""
    config = tool.constrained_sampling
    if not isinstance(config, JsonSchemaSampling):
        return None
    if not supports_strict:
        if config.strict == "require":
            raise ProviderError(
                f'Tool "{tool.name}" requires JSON-schema constrained sampling, but strict tools are unsupported.'
            )
        return None
    try:
        return strict_schema(tool.parameters, unsupported)
    except UnsupportedStrictSchema as exc:
        if config.strict == "require":
            raise ProviderError(
                f'Tool "{tool.name}" requires JSON-schema constrained sampling, but {exc}.'
            ) from None
        return None


def resolve_grammar(tool: Tool, supports_grammar_tools: bool) -> GrammarTool | None:
    """How a grammar tool goes out as a custom tool; ``None`` for any other tool, or where the
    model has no grammar tools (it then goes as a function tool)."""
    config = tool.constrained_sampling
    if not isinstance(config, GrammarSampling) or not supports_grammar_tools:
        return None
    lark = config.variants.get("openai_lark")
    regex = config.variants.get("openai_regex")
    has_lark = isinstance(lark, str) and bool(lark.strip())
    has_regex = isinstance(regex, str) and bool(regex.strip())
    if not has_lark and not has_regex:
        raise ProviderError(
            f'Tool "{tool.name}" cannot use grammar constrained sampling: '
            "no supported grammar variant was provided."
        )
    try:
        input_property = _input_property(tool.parameters)
    except ValueError as exc:
        raise ProviderError(f'Tool "{tool.name}" cannot use grammar constrained sampling: {exc}.') from None
    if has_lark:
        assert lark is not None
        return GrammarTool("lark", lark, input_property)
    assert regex is not None
    return GrammarTool("regex", regex, input_property)


def _input_property(schema: JsonObject) -> str:
    if schema.get("type") != "object":
        raise ValueError("grammar constrained sampling requires an object parameter schema")
    required = schema.get("required")
    if not isinstance(required, list) or len(required) != 1 or not isinstance(required[0], str):
        raise ValueError("grammar constrained sampling requires exactly one required string property")
    name = required[0]
    properties = schema.get("properties")
    prop = properties.get(name) if isinstance(properties, dict) else None
    if not prop:
        raise ValueError(f"grammar constrained sampling requires a properties entry for {name}")
    if not isinstance(prop, dict) or prop.get("type") != "string":
        raise ValueError(f"grammar constrained sampling property {name} must have type string")
    return name


def declared_tools(context: Context) -> list[Tool]:
    """Every tool the conversation declared, the last definition of each name (pi's
    ``getDeclaredTools``): the anchor's, those added by updates, and the current ones."""
    by_name: dict[str, Tool] = {}
    if context.anchor is not None:
        by_name.update((tool.name, tool) for tool in context.anchor.tools)
    for update in context.updates or ():
        by_name.update((tool.name, tool) for tool in update.tools_added)
    by_name.update((tool.name, tool) for tool in context.tools or ())
    return list(by_name.values())


def grammar_input_properties(tools: Iterable[Tool], supports_grammar_tools: bool) -> dict[str, str]:
    """Tool name -> input property of every tool that goes out as a custom grammar tool (checking
    each as ``resolve_grammar`` does)."""
    if not supports_grammar_tools:
        return {}
    out: dict[str, str] = {}
    for tool in tools:
        grammar = resolve_grammar(tool, True)
        if grammar is not None:
            out[tool.name] = grammar.input_property
    return out


def grammar_tool_input(name: str, arguments: JsonObject, input_property: str) -> str:
    """The raw input a custom tool call is replayed with: its one string argument."""
    value = arguments.get(input_property)
    if not isinstance(value, str):
        raise ProviderError(
            f'Grammar tool call "{name}" requires argument "{input_property}" to be a string.'
        )
    return value


def custom_tools_key(properties: dict[str, str]) -> tuple[tuple[str, str], ...]:
    """The grammar tools as a hashable key (conversions depend on them)."""
    return tuple(sorted(properties.items()))


# Up to this size the call's arguments follow every piece; beyond it, each update waits until the
# input has doubled, so the updates of an input of n characters cost O(n) in all.
_EAGER_CHARS = 4096


class GrammarInput:
    """A custom tool call's input as it streams, and the JSON argument text it makes.

    ``append`` and ``close`` return the next piece of ``{"<property>":"<input>"}`` (each piece
    costs time linear in itself, not in the input so far); ``arguments_due`` says when the call's
    ``arguments`` are worth rebuilding from ``text()``.
    """

    __slots__ = ("_length", "_pieces", "_shown_at", "closed", "input_property", "started")

    def __init__(self, input_property: str) -> None:
        self.input_property = input_property
        self._pieces: list[str] = []
        self._length = 0
        self._shown_at = 0
        self.started = False
        self.closed = False

    def text(self) -> str:
        if len(self._pieces) > 1:
            self._pieces = ["".join(self._pieces)]
        self._shown_at = self._length
        return self._pieces[0] if self._pieces else ""

    def arguments(self) -> JsonObject:
        return {self.input_property: self.text()}

    def arguments_due(self) -> bool:
        return self._length <= _EAGER_CHARS or self._length >= 2 * self._shown_at

    def append(self, delta: str) -> str | None:
        """Add a piece of input; the matching JSON text, ``None`` for an empty piece."""
        if self.closed:
            raise ProviderError(
                f'grammar tool input for property "{self.input_property}" changed after it was closed'
            )
        if not delta:
            return None
        self._pieces.append(delta)
        self._length += len(delta)
        return self._opening() + _json_string_body(delta)

    def close(self, final_input: str | None = None) -> str | None:
        """End the input; the rest of the JSON text. ``final_input``, when the server sends the
        complete input, must continue what streamed so far. Closing again with the same input
        returns ``None``."""
        if self.closed:
            if final_input is None or final_input == self.text():
                return None
            raise ProviderError(
                f'grammar tool input for property "{self.input_property}" changed after it was closed'
            )
        rest = ""
        if final_input is not None:
            so_far = self.text()
            if not final_input.startswith(so_far):
                raise ProviderError(
                    f'grammar tool input for property "{self.input_property}" changed non-monotonically'
                )
            rest = final_input[len(so_far) :]
            if rest:
                self._pieces.append(rest)
                self._length += len(rest)
        self.closed = True
        return f'{self._opening()}{_json_string_body(rest)}"}}'

    def _opening(self) -> str:
        if self.started:
            return ""
        self.started = True
        return "{" + json.dumps(self.input_property, ensure_ascii=False) + ':"'


def _json_string_body(text: str) -> str:
    """``text`` as the inside of a JSON string (as JavaScript's ``JSON.stringify`` escapes it)."""
    return json.dumps(text, ensure_ascii=False)[1:-1]
