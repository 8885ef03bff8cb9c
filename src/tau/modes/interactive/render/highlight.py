"""Syntax highlighting with pygments into rich ``Text`` lines, without the theme's background.

Token colours come from the pygments style, but never its background: code sits on whatever block it
is part of (a tool box, the plain chat). Lexers and styles are looked up once and cached.
"""

from __future__ import annotations

import os
from functools import lru_cache
from typing import Any

from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name, get_lexer_for_filename
from pygments.styles import get_style_by_name
from pygments.util import ClassNotFound
from rich.style import Style
from rich.text import Text

# stripnl=False keeps leading/trailing blank lines, so line i of the input is line i of the output.
_LEXER_OPTIONS: dict[str, Any] = {"stripnl": False, "ensurenl": True}


@lru_cache(maxsize=64)
def lexer_by_name(name: str) -> Lexer | None:
    """The lexer for a code-fence language (``python``, ``ts``…); ``None`` for plain text or unknown."""
    if not name or name.lower() in ("text", "plain", "txt"):
        return None
    try:
        return get_lexer_by_name(name.lower(), **_LEXER_OPTIONS)
    except ClassNotFound:
        return None


def lexer_for_path(path: str) -> Lexer | None:
    """The lexer for a file name (by extension, or whole name such as ``Makefile``); ``None`` if unknown."""
    base = os.path.basename(path)
    _, ext = os.path.splitext(base)
    return _lexer_for_filename(f"file{ext.lower()}" if ext else base)


@lru_cache(maxsize=128)
def _lexer_for_filename(name: str) -> Lexer | None:
    try:
        lexer = get_lexer_for_filename(name, **_LEXER_OPTIONS)
    except ClassNotFound:
        return None
    return None if lexer.name == "Text only" else lexer


@lru_cache(maxsize=1024)
def _token_style(code_theme: str, token_type: Any) -> Style:
    if code_theme in ("ansi_dark", "ansi_light"):  # the terminal's 16 colours (the system theme)
        from rich.syntax import ANSI_DARK, ANSI_LIGHT, ANSISyntaxTheme

        return ANSISyntaxTheme(ANSI_DARK if code_theme == "ansi_dark" else ANSI_LIGHT).get_style_for_token(
            token_type
        )
    try:
        pygments_style = get_style_by_name(code_theme)
    except ClassNotFound:
        pygments_style = get_style_by_name("default")
    spec = pygments_style.style_for_token(token_type)
    return Style(
        color=f"#{spec['color']}" if spec["color"] else None,
        bold=spec["bold"] or None,
        italic=spec["italic"] or None,
        underline=spec["underline"] or None,
    )


def highlight_lines(code: str, lexer: Lexer | None, code_theme: str) -> list[Text]:
    """``code`` split at newlines into highlighted lines (``len(code.split("\\n"))`` of them).

    Runs of one style are merged whatever tokens they came from, so the same colours always give the
    same ANSI text (a lexer may cut a prefix of the code into tokens differently from the whole).
    """
    plain = code.split("\n")
    if lexer is None:
        return [Text(line) for line in plain]
    lines: list[Text] = []
    line = Text()
    run: list[str] = []
    run_style = Style()

    def flush() -> None:
        if run:
            line.append("".join(run), run_style)
            run.clear()

    for token_type, value in lexer.get_tokens(code):
        style = _token_style(code_theme, token_type)
        if style != run_style:
            flush()
            run_style = style
        first, *rest = value.split("\n")
        run.append(first)
        for piece in rest:
            flush()
            lines.append(line)
            line = Text()
            run.append(piece)
    flush()
    lines.append(line)
    # The lexer adds a final newline when the code lacks one: drop the empty line it makes.
    del lines[len(plain) :]
    return lines
