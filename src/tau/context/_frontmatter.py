"""YAML frontmatter: the ``---`` fenced header of skill and prompt-template files."""

from __future__ import annotations

from typing import Any

from tau.errors import TauError


class FrontmatterError(TauError, ValueError):
    """The frontmatter is not valid YAML, or not a mapping. ``line`` and ``column`` (1-based, in the
    whole file) say where YAML found the problem, when it says."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None) -> None:
        super().__init__(message)
        self.line = line
        self.column = column


def normalize_newlines(text: str) -> str:
    """``\\r\\n`` and lone ``\\r`` become ``\\n`` so parsing does not depend on the file's origin."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def split_frontmatter(text: str) -> tuple[str | None, str]:
    """The raw YAML between the opening and closing ``---`` lines (None if there is none) and the body.

    A file without a closing fence has no frontmatter: all of it is body.
    """
    text = normalize_newlines(text)
    if not text.startswith("---\n"):
        return None, text
    end = text.find("\n---", 3)
    while end != -1:
        after = end + len("\n---")
        if after == len(text) or text[after] == "\n":
            return text[4 : end + 1], text[after + 1 :]
        end = text.find("\n---", after)
    return None, text


def parse_frontmatter(text: str) -> tuple[dict[str, Any], str]:
    """The frontmatter as a mapping (empty if absent) and the body; raises ``FrontmatterError``."""
    raw, body = split_frontmatter(text)
    if raw is None or not raw.strip():
        return {}, body
    import yaml  # only when a file has frontmatter: PyYAML costs ~15 ms to import

    try:
        data = yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        raise _yaml_error(exc) from exc
    if data is None:
        return {}, body
    if not isinstance(data, dict):
        raise FrontmatterError("frontmatter is not a mapping of keys to values")
    return {str(k): v for k, v in data.items()}, body


def strip_frontmatter(text: str) -> str:
    """The body of a file, without its frontmatter (which is not parsed)."""
    return split_frontmatter(text)[1]


def _yaml_error(exc: Any) -> FrontmatterError:
    """PyYAML's error as one line, placed in the file: the YAML starts on the line after ``---``."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem, context = getattr(exc, "problem", None), getattr(exc, "context", None)
    context_mark = getattr(exc, "context_mark", None)
    if problem:
        detail = str(problem)
        if context:
            detail += f" {context}"
            if context_mark is not None and context_mark is not mark:
                detail += f" (from line {context_mark.line + 2}, column {context_mark.column + 1})"
    else:
        lines = str(exc).strip().splitlines()
        detail = lines[0] if lines else "parse error"
    if mark is None:
        return FrontmatterError(f"invalid frontmatter: {detail}")
    line, column = mark.line + 2, mark.column + 1
    return FrontmatterError(f"invalid frontmatter at line {line}, column {column}: {detail}", line, column)
