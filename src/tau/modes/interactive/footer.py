"""The footer under the editor (spec 70 §2.5): where you are, what it costs, which model.

Line 1: cwd (``~`` for home), git branch, session name, the sandbox mode when commands are fenced. Line 2: token totals over all recorded usage in
the session file (all branches, before compactions too), cost, the prompt-cache hit rate (tau's
addition: the share of prompt tokens read from cache, the number that says whether caching works),
context use; on the right the model and thinking level. Line 3: extension statuses, when any.
Lines are lists of ``(style, text)`` pairs, prompt_toolkit's formatted text.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from msgspec import Struct, field

from tau.ai.types import Usage
from tau.modes.interactive.render.format import format_tokens, terminal_safe, truncate_to_width, visible_width
from tau.runtime.context_usage import ContextUsage
from tau.session.entries import SessionEntry
from tau.session.usage import usages

__all__ = ["FooterInfo", "UsageTotals", "build_footer", "git_branch", "usage_totals"]

Line = list[tuple[str, str]]


class UsageTotals(Struct):
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cost: float = 0.0

    def add(self, usage: Usage) -> None:
        self.input += usage.input
        self.output += usage.output
        self.cache_read += usage.cache_read
        self.cache_write += usage.cache_write
        self.cost += usage.cost.total

    @property
    def cache_hit_rate(self) -> float | None:
        """Cache reads over all prompt tokens (input + cache read + cache write); ``None`` when
        the provider reported no cache activity at all."""
        prompt = self.input + self.cache_read + self.cache_write
        if prompt == 0 or (self.cache_read == 0 and self.cache_write == 0):
            return None
        return self.cache_read / prompt


def usage_totals(entries: Iterable[SessionEntry]) -> UsageTotals:
    totals = UsageTotals()
    for usage in usages(entries):
        totals.add(usage)
    return totals


class FooterInfo(Struct):
    cwd: str
    totals: UsageTotals
    context: ContextUsage | None
    model_id: str | None
    provider: str | None = None
    show_provider: bool = False
    reasoning: bool = False
    thinking_level: str = "off"
    git_branch: str | None = None
    session_name: str | None = None
    auto_compaction: bool = True
    subscription: bool = False
    statuses: Mapping[str, str] = field(default_factory=dict)
    sandbox: str | None = None
    """The sandbox mode when commands are fenced (``None`` when off)."""
    routed: tuple[str, str | None] | None = None
    """Under a virtual model: the id and thinking level of the model the latest response came from."""


def build_footer(info: FooterInfo, width: int) -> list[Line]:
    """The footer's lines for a terminal ``width`` cells wide."""
    lines = [_location_line(info, width), _usage_line(info, width)]
    if info.statuses:
        text = "  ".join(" ".join(terminal_safe(info.statuses[key]).split()) for key in sorted(info.statuses))
        lines.append([("class:footer", truncate_to_width(text, width))])
    return lines


def _location_line(info: FooterInfo, width: int) -> Line:
    home = os.path.expanduser("~")
    cwd = info.cwd
    if home and home != "/" and (cwd == home or cwd.startswith(home + os.sep)):
        cwd = "~" + cwd[len(home) :]
    text = cwd
    if info.git_branch:
        text += f" ({info.git_branch})"
    if info.session_name:
        text += f" • {' '.join(terminal_safe(info.session_name).split())}"
    if info.sandbox:
        text += f" • sandbox: {info.sandbox}"
    return [("class:footer.dim", truncate_to_width(text, width))]


# Which usage fields go first when the line is too narrow: the write and read cache counts, the
# hit rate, the cost, then the token totals; the context use stays longest.
_DROP_ORDER = ("W", "R", "cache", "$", "↑", "↓")


def _usage_line(info: FooterInfo, width: int) -> Line:
    totals = info.totals
    fields: list[tuple[str, str, str]] = []  # (kind, style, text)
    for prefix, value in (
        ("↑", totals.input),
        ("↓", totals.output),
        ("R", totals.cache_read),
        ("W", totals.cache_write),
    ):
        if value:
            fields.append((prefix, "class:footer", f"{prefix}{format_tokens(value)}"))
    if totals.cost or info.subscription:
        fields.append(("$", "class:footer", f"${totals.cost:.3f}" + (" (sub)" if info.subscription else "")))
    hit_rate = totals.cache_hit_rate
    if hit_rate is not None:
        fields.append(("cache", "class:footer", f"cache {hit_rate * 100:.0f}%"))
    if info.context is not None:
        window = format_tokens(info.context.context_window)
        percent = info.context.percent
        text = f"?/{window}" if percent is None else f"{percent:.1f}%/{window}"
        if info.auto_compaction:
            text += " (auto)"
        style = "class:footer"
        if percent is not None and percent > 90:
            style = "class:footer.error"
        elif percent is not None and percent > 70:
            style = "class:footer.warning"
        fields.append(("context", style, text))
    # A field that does not fit is left out whole, never cut in the middle of a number.
    for kind in (*_DROP_ORDER, "context"):
        if _fields_width(fields) <= width:
            break
        fields = [field for field in fields if field[0] != kind]
    parts: Line = []
    for _, style, text in fields:
        if parts:
            parts.append(("class:footer", " "))
        parts.append((style, text))
    left_width = _fields_width(fields)
    right = _model_text(info, width - left_width - 2)
    if not right:
        return parts
    gap = max(2, width - left_width - visible_width(right))
    if left_width + gap + visible_width(right) > width:
        return parts
    return [*parts, ("class:footer", " " * gap), ("class:footer.dim", right)]


def _fields_width(fields: list[tuple[str, str, str]]) -> int:
    return sum(visible_width(text) for _, _, text in fields) + max(0, len(fields) - 1)


def _model_text(info: FooterInfo, room: int) -> str:
    if info.model_id is None:
        return "no model" if room >= 8 else ""
    text = info.model_id
    if info.reasoning:
        text += " • " + (f"{info.thinking_level}" if info.thinking_level != "off" else "thinking off")
    if info.routed is not None:
        routed_id, routed_level = info.routed
        text += f" → {routed_id}" + (f" • {routed_level}" if routed_level else "")
    if info.show_provider and info.provider and visible_width(f"({info.provider}) {text}") <= room:
        text = f"({info.provider}) {text}"
    return text if visible_width(text) <= room else truncate_to_width(text, room) if room > 3 else ""


def git_branch(cwd: str) -> str | None:
    """The branch checked out in the repository holding ``cwd`` (read from ``.git/HEAD``; a short
    commit id when detached), or ``None`` outside a repository."""
    directory = os.path.abspath(cwd)
    while True:
        dot_git = os.path.join(directory, ".git")
        if os.path.isdir(dot_git):
            return _head_of(dot_git)
        if os.path.isfile(dot_git):  # a worktree or submodule: "gitdir: <path>"
            try:
                with open(dot_git, encoding="utf-8") as handle:
                    pointer = handle.read().strip()
            except OSError:
                return None
            if pointer.startswith("gitdir:"):
                return _head_of(os.path.join(directory, pointer[len("gitdir:") :].strip()))
            return None
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def _head_of(git_dir: str) -> str | None:
    try:
        with open(os.path.join(git_dir, "HEAD"), encoding="utf-8") as handle:
            head = handle.read().strip()
    except OSError:
        return None
    if head.startswith("ref:"):
        ref = head[4:].strip()
        return ref.removeprefix("refs/heads/")
    return head[:7] or None
