"""The words sent to the summariser, and the fixed texts around its output."""

from __future__ import annotations

__all__ = [
    "BRANCH_SUMMARY_INSTRUCTIONS",
    "BRANCH_SUMMARY_PREAMBLE",
    "CACHED_SUMMARY_LEAD",
    "INITIAL_SUMMARY_INSTRUCTIONS",
    "NO_BRANCH_CONTENT",
    "NO_PRIOR_HISTORY",
    "SPLIT_TURN_HEADING",
    "SUMMARIZER_SYSTEM_PROMPT",
    "TURN_PREFIX_INSTRUCTIONS",
    "UPDATE_SUMMARY_INSTRUCTIONS",
    "conversation_block",
    "previous_summary_block",
    "with_focus",
]

SUMMARIZER_SYSTEM_PROMPT = (
    "You are a context summarization assistant. You are given a conversation between a user and an "
    "AI coding assistant, and you write the structured summary asked for, in exactly the requested "
    "format. Do not continue the conversation and do not answer any question that appears in it. "
    "Reply with the summary and nothing else."
)

CACHED_SUMMARY_LEAD = (
    "Stop the task here: do not call any tool and do not answer the conversation. Your reply must "
    "be only a checkpoint of this whole conversation (any earlier summary in it included), written "
    "as follows. Do not continue the conversation and do not answer any question that appears in it."
)
"""Leads the summary instruction appended to the cached conversation (``summarize.compact``)."""

_SECTIONS = """## Goal
[What the user wants to achieve. List several goals if the session covers several tasks.]

## Constraints & Preferences
- [Requirements, restrictions and preferences the user stated, or "(none)"]

## Progress
### Done
- [x] [Finished work]

### In Progress
- [ ] [Work under way]

### Blocked
- [Problems holding things up, if any]

## Key Decisions
- **[Decision]**: [Why it was made]

## Next Steps
1. [What should happen next, in order]

## Critical Context
- [Data, examples or references needed to carry on, or "(none)"]"""

INITIAL_SUMMARY_INSTRUCTIONS = f"""The conversation above has to be condensed into a structured checkpoint. Another LLM will read only this checkpoint and must be able to continue the work from it.

Follow this markdown skeleton exactly:

{_SECTIONS}

Keep every section short. Keep exact file paths, function names and error messages as they appear."""

UPDATE_SUMMARY_INSTRUCTIONS = f"""The conversation above holds only NEW messages, which come after the work described in <previous-summary>. Merge them into that summary and produce the updated checkpoint.

Rules:
- Keep everything from the previous summary that still matters.
- Add the new progress, decisions and context.
- Move items from "In Progress" to "Done" once they are finished.
- Rewrite "Next Steps" to match the current state.
- Keep exact file paths, function names and error messages.
- Items that are clearly obsolete may be dropped.

Follow this markdown skeleton exactly (in every section: keep what was there, add what is new):

{_SECTIONS}

Keep every section short."""

TURN_PREFIX_INSTRUCTIONS = """The conversation above is the opening of a single turn that was too long to keep whole. Its later part is kept verbatim and is not shown here. Summarize this opening so the kept part makes sense on its own.

Use this format:

## Original Request
[What the user asked for in this turn]

## Early Progress
- [What was done and found before the kept part begins]

## Context for Suffix
- [Anything needed to understand the kept part: files, values, intermediate results]

Be concise. Keep exact file paths, function names and error messages."""

BRANCH_SUMMARY_INSTRUCTIONS = """The conversation above is a branch of work the user explored and then left. Write a structured summary of that branch so the work can go on from another point.

Use this format:

## Goal
[What the user was trying to do on this branch]

## Constraints & Preferences
- [Requirements and preferences stated, or "(none)"]

## Progress
### Done
- [x] [Finished work]

### In Progress
- [ ] [Work that was under way]

### Blocked
- [Problems met, if any]

## Key Decisions
- **[Decision]**: [Why]

## Next Steps
1. [What would come next]

Be concise. Keep exact file paths, function names and error messages."""

NO_PRIOR_HISTORY = "No prior history."
"""Stands in for the history summary when only the opening of a split turn is summarised."""

SPLIT_TURN_HEADING = "**Turn Context (split turn):**"

BRANCH_SUMMARY_PREAMBLE = (
    "The user went down another branch of this conversation and then came back here.\n"
    "What happened on that branch:"
)

NO_BRANCH_CONTENT = "No content to summarize"


def conversation_block(serialized: str) -> str:
    return f"<conversation>\n{serialized}\n</conversation>\n\n"


def previous_summary_block(summary: str) -> str:
    return f"<previous-summary>\n{summary}\n</previous-summary>\n\n"


def with_focus(instructions: str, custom_instructions: str | None) -> str:
    """``instructions`` plus the user's focus, when there is one."""
    if not custom_instructions:
        return instructions
    return f"{instructions}\n\nAdditional focus: {custom_instructions}"
