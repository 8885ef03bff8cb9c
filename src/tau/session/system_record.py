"""Writing the prompt and tools a branch uses as pi 1.x does: system messages in the transcript.

Before a run the runtime states its current prompt sections and tool declarations; what differs
from the branch's replayed system messages becomes one new system message (all of it on a new
branch, a patch later), so any tool that resumes the branch knows what it had. Nothing is written
when nothing changed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import msgspec

from tau.ai.types import ConstrainedSampling, JsonObject, constrained_sampling_from_json
from tau.session.messages import SystemMessage

TAU_PROMPT_SECTION = "prompt"
"""tau states its whole prompt as one section: replaying a branch tau last wrote gives tau's prompt
exactly, and a pi prompt's sections are patched away (pi patches them back when it resumes)."""


def system_update(
    current: SystemMessage | None, sections: Mapping[str, str], tools: Sequence[JsonObject], timestamp: int
) -> SystemMessage | None:
    """The system message that takes ``current`` (the branch's replayed prompt, if any) to
    ``sections`` and ``tools``, or ``None`` when they already match. A section that is gone is
    patched to ``None``; a tool whose declaration changed is removed and added again."""
    previous_sections = dict(current.sections or {}) if current is not None else {}
    patch: dict[str, str | None] = {
        name: text for name, text in sections.items() if previous_sections.get(name) != text
    }
    patch.update({name: None for name in previous_sections if name not in sections})
    before = {t["name"]: t for t in (current.tools_added or [])} if current is not None else {}
    now = {t["name"]: t for t in tools}
    added = [t for name, t in now.items() if name not in before or not _same(before[name], t)]
    removed = [{"name": name} for name, t in before.items() if name not in now or not _same(t, now[name])]
    if not patch and not added and not removed:
        return None
    return SystemMessage(
        content="",
        sections=patch or None,
        tools_added=added or None,
        tools_removed=removed or None,
        timestamp=timestamp,
    )


def tool_declaration(
    name: str,
    description: str,
    parameters: JsonObject,
    *,
    constrained_sampling: ConstrainedSampling | None = None,
) -> JsonObject:
    """A tool as a system message declares it (what the model is told, nothing executable)."""
    out: JsonObject = {
        "name": name,
        "description": description,
        "parameters": json.loads(json.dumps(parameters)),
    }
    if constrained_sampling is not None:
        out["constrainedSampling"] = msgspec.to_builtins(constrained_sampling)
    return out


def declared_sampling(declaration: JsonObject) -> ConstrainedSampling | None:
    """The constrained sampling a declared tool (pi's shape) asks for, if any."""
    return constrained_sampling_from_json(declaration.get("constrainedSampling"))


def _same(a: JsonObject, b: JsonObject) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
