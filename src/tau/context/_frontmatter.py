"""YAML frontmatter: the ``---`` fenced header of skill and prompt-template files."""

from __future__ import annotations

from typing import Any


class FrontmatterError(ValueError):
    """The frontmatter is not valid YAML, or not a mapping."""


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
        raise FrontmatterError(f"invalid frontmatter: {_first_line(str(exc))}") from exc
    if data is None:
        return {}, body
    if not isinstance(data, dict):
        raise FrontmatterError("frontmatter is not a mapping of keys to values")
    return {str(k): v for k, v in data.items()}, body


def strip_frontmatter(text: str) -> str:
    """The body of a file, without its frontmatter (which is not parsed)."""
    return split_frontmatter(text)[1]


def _first_line(message: str) -> str:
    return message.strip().splitlines()[0] if message.strip() else "parse error"
