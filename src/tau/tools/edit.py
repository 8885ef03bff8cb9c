"""The ``edit`` tool: exact-text replacements, several disjoint ones per call, with a diff.

Every ``oldText`` is matched against the original file (not one after another) and must be unique.
A UTF-8 byte-order mark and CRLF line endings survive the edit. Beyond pi: a file that is not valid
UTF-8 is refused rather than rewritten with replacement characters.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from msgspec import Struct

from tau.agent.tool import AgentTool, AgentToolResult, ToolUpdate, text_result
from tau.ai.abort import AbortSignal
from tau.ai.types import JsonObject, JsonSchemaSampling
from tau.tools.errors import ToolError, describe_os_error, raise_if_aborted
from tau.tools.mutation_queue import file_mutation
from tau.tools.operations import EditOperations, LocalEditOperations
from tau.tools.paths import resolve_to_cwd

if TYPE_CHECKING:
    from tau.tools.edit_diff import EditDiff
    from tau.tools.edit_match import Replacement
    from tau.tools.sandbox import Sandbox

_BOM = "\ufeff"

EDIT_PARAMETERS: JsonObject = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "Path to the file to edit (relative or absolute)"},
        "edits": {
            "type": "array",
            "description": (
                "One or more replacements, each matched against the original file. Every oldText must "
                "be unique in the file and must not overlap another edit's oldText."
            ),
            "items": {
                "type": "object",
                "properties": {
                    "oldText": {"type": "string", "description": "Exact text to replace (must be unique)"},
                    "newText": {"type": "string", "description": "Text to put in its place"},
                },
                "required": ["oldText", "newText"],
            },
        },
    },
    "required": ["path", "edits"],
}

EDIT_DESCRIPTION = (
    "Edit a file by replacing exact text. Give one or more edits, each {oldText, newText}; every "
    "oldText must match the file exactly (including whitespace) and be unique in it. All edits are "
    "matched against the original file, so they must not overlap. Use this for precise, surgical "
    "changes."
)

EDIT_GUIDELINES = [
    "Use edit for precise changes: oldText must match the file exactly, including whitespace.",
    "When changing several places in one file, make one edit call with several entries in edits.",
    "Edits are matched against the original file and must not overlap or nest; merge nearby changes "
    "into one edit.",
    "Keep each oldText as short as possible while still unique in the file.",
]


def prepare_edit_arguments(raw: JsonObject) -> JsonObject:
    """Fold the shapes models still send into ``{path, edits}``: ``edits`` as a JSON string, and
    the legacy top-level ``oldText``/``newText`` pair (appended as one more edit)."""
    args: dict[str, Any] = dict(raw)
    edits = args.get("edits")
    if isinstance(edits, str):
        try:
            parsed = json.loads(edits)
        except ValueError:
            parsed = None
        if isinstance(parsed, list):
            edits = parsed
    if isinstance(args.get("oldText"), str) and isinstance(args.get("newText"), str):
        edits = [
            *(edits if isinstance(edits, list) else []),
            {"oldText": args["oldText"], "newText": args["newText"]},
        ]
        del args["oldText"], args["newText"]
    args["edits"] = [] if edits is None else edits
    return args


class PlannedEdit(Struct, frozen=True):
    """An edit worked out but not yet written."""

    absolute_path: str
    original: str
    """The file's full text as read (BOM and line endings included)."""
    new_text: str
    """The full text to write."""
    diff: EditDiff
    blocks: int


def _replacements(args: JsonObject) -> list[Replacement]:
    from tau.tools.edit_match import Replacement, to_lf

    edits = args.get("edits") or []
    return [Replacement(to_lf(str(e["oldText"])), to_lf(str(e["newText"]))) for e in edits]


async def plan_edit(path: str, edits: list[Replacement], cwd: str, ops: EditOperations) -> PlannedEdit:
    """Read the file and apply ``edits`` in memory; raise a :class:`ToolError` explaining any failure.

    Also serves the UI's preview of an edit before it runs.
    """
    # The matching and the diff load on the first edit, not with the tool.
    from tau.tools.edit_diff import generate_diff
    from tau.tools.edit_match import apply_replacements, detect_line_ending, to_lf

    if not edits:
        raise ToolError("edits must contain at least one replacement")
    absolute = resolve_to_cwd(path, cwd)
    try:
        await ops.access(absolute)
        data = await ops.read_file(absolute)
    except OSError as error:
        raise ToolError(
            f"Could not edit {path}: {describe_os_error(error, absolute)} ({absolute})"
        ) from error
    try:
        original = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ToolError(f"Could not edit {path}: it is not valid UTF-8 text") from error
    bom = _BOM if original.startswith(_BOM) else ""
    text = original[len(bom) :]
    ending = detect_line_ending(text)
    applied = apply_replacements(to_lf(text), edits, path)
    result = applied.result.replace("\n", "\r\n") if ending == "\r\n" else applied.result
    return PlannedEdit(
        absolute_path=absolute,
        original=original,
        new_text=bom + result,
        diff=generate_diff(applied.base, applied.result, path=path),
        blocks=len(edits),
    )


def create_edit_tool(
    cwd: str, operations: EditOperations | None = None, *, sandbox: Sandbox | None = None
) -> AgentTool:
    """The edit tool for ``cwd``; ``sandbox`` refuses the paths its fence keeps from being written."""
    ops: EditOperations = operations or LocalEditOperations()

    async def execute(
        tool_call_id: str, args: JsonObject, signal: AbortSignal | None, on_update: ToolUpdate | None
    ) -> AgentToolResult:
        raise_if_aborted(signal)
        path = str(args["path"])
        edits = _replacements(args)
        absolute = resolve_to_cwd(path, cwd)
        if sandbox is not None and (refusal := sandbox.write_refusal(absolute)) is not None:
            raise ToolError(refusal)
        async with file_mutation(absolute):
            raise_if_aborted(signal)
            plan = await plan_edit(path, edits, cwd, ops)
            try:
                await ops.write_file(plan.absolute_path, plan.new_text)
            except OSError as error:
                raise ToolError(f"Could not write {path}: {describe_os_error(error)}") from error
        noun = "block" if plan.blocks == 1 else "blocks"
        return text_result(
            f"Successfully replaced {plan.blocks} {noun} in {path}.",
            {
                "diff": plan.diff.diff,
                "patch": plan.diff.patch,
                "firstChangedLine": plan.diff.first_changed_line,
            },
        )

    return AgentTool(
        name="edit",
        label="edit",
        description=EDIT_DESCRIPTION,
        parameters=EDIT_PARAMETERS,
        execute=execute,
        prepare_arguments=prepare_edit_arguments,
        constrained_sampling=JsonSchemaSampling("prefer"),
        prompt_snippet="Make precise file edits with exact text replacement, several disjoint edits per call",
        prompt_guidelines=EDIT_GUIDELINES,
    )
