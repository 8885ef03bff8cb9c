"""Markdown and source code as HTML, made at export time with markdown-it-py and Pygments.

Safety: markdown-it runs with ``html=False``, so raw HTML in a message is shown as text; a link is
kept only when it points to http, https, mailto or a relative/anchor target (``[x](javascript:…)``
stays plain text); a markdown image becomes a link, since the page loads nothing from anywhere.

Cost: Pygments lexes about half a megabyte a second and its own HTML is 4–6 times the size of the
code. So tokens are mapped to a few short classes with adjacent runs merged (about 1.5 times the
code), and a ``CodeHighlighter`` highlights only until its budget of characters is spent: a block
that does not fit is plain escaped text. That keeps a 2.4 MB session's export under a second
(``bench/bench_export.py``).
"""

from __future__ import annotations

import functools
import html
import os
import re
from collections.abc import Sequence

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name, get_lexer_for_filename
from pygments.token import (
    Comment,
    Generic,
    Keyword,
    Name,
    Number,
    Operator,
    String,
    _TokenType,
    is_token_subtype,
)
from pygments.util import ClassNotFound

# About 0.1 s of pygments lexing each; an export has two highlighters (conversation, tool
# content), so a session of a few megabytes still exports in well under a second.
DEFAULT_BUDGET_CHARS = 60_000

SAFE_SCHEMES = frozenset({"http", "https", "mailto"})
_SCHEME = re.compile(r"([a-z][a-z0-9+.\-]*):")
# Browsers drop these anywhere in a URL before reading its scheme ("java\tscript:").
_URL_IGNORED = re.compile(r"[\x00-\x20\x7f]")

# Pygments' own file-name lookup matches every lexer's patterns (~0.1 s on first use): the usual
# extensions are mapped directly.
_COMMON_EXTENSIONS = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "jsx",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".json": "json",
    ".jsonl": "json",
    ".md": "markdown",
    ".sh": "bash",
    ".bash": "bash",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".toml": "toml",
    ".rs": "rust",
    ".go": "go",
    ".java": "java",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".hpp": "cpp",
    ".cs": "csharp",
    ".rb": "ruby",
    ".php": "php",
    ".html": "html",
    ".css": "css",
    ".scss": "scss",
    ".sql": "sql",
    ".swift": "swift",
    ".kt": "kotlin",
    ".lua": "lua",
}

# Most specific first: a token takes the class of the first type that contains it.
_TOKEN_CLASSES: tuple[tuple[_TokenType, str], ...] = (
    (String.Doc, "c"),
    (Comment, "c"),
    (Keyword.Type, "t"),
    (Keyword, "k"),
    (Operator.Word, "k"),
    (Name.Tag, "k"),
    (String, "s"),
    (Number, "n"),
    (Name.Function, "f"),
    (Name.Class, "t"),
    (Name.Builtin, "b"),
    (Name.Constant, "b"),
    (Name.Decorator, "d"),
    (Name.Attribute, "a"),
    (Generic.Inserted, "gi"),
    (Generic.Deleted, "gd"),
    (Generic.Heading, "gh"),
    (Generic.Subheading, "gh"),
)


def escape(text: str) -> str:
    """Text for an HTML text node or a double-quoted attribute."""
    return html.escape(text, quote=True)


def is_safe_url(url: str) -> bool:
    """http, https, mailto, or no scheme at all (relative paths and ``#anchors``)."""
    match = _SCHEME.match(_URL_IGNORED.sub("", url).lower())
    return match is None or match.group(1) in SAFE_SCHEMES


def escape_text(text: str) -> str:
    """Text for an HTML text node only (quotes kept: code is full of them)."""
    return html.escape(text, quote=False)


def plain_code(code: str) -> str:
    return f'<pre class="code"><code>{escape_text(_without_final_newline(code))}</code></pre>'


def _without_final_newline(code: str) -> str:
    # A final newline would show as an empty last line in the box.
    return code[:-1] if code.endswith("\n") else code


@functools.cache
def _token_class(token_type: _TokenType) -> str:
    for parent, css_class in _TOKEN_CLASSES:
        if is_token_subtype(token_type, parent):
            return css_class
    return ""


@functools.cache
def _lexer_by_name(name: str) -> Lexer | None:
    try:
        return get_lexer_by_name(name, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None


@functools.cache
def _lexer_for_file(key: str) -> Lexer | None:
    try:
        return get_lexer_for_filename(key, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None


def lexer_for_path(path: str) -> Lexer | None:
    """The lexer for a file name; cached by extension (by whole name for ``Makefile`` and the like)."""
    base = os.path.basename(path)
    ext = os.path.splitext(base)[1]
    alias = _COMMON_EXTENSIONS.get(ext.lower())
    if alias is not None:
        return _lexer_by_name(alias)
    return _lexer_for_file(f"x{ext}" if ext else base)


def _highlight(code: str, lexer: Lexer) -> str:
    parts: list[str] = []
    run: list[str] = []
    run_class = ""
    for token_type, value in lexer.get_tokens(code):
        css_class = _token_class(token_type)
        if css_class != run_class and run:
            text = escape_text("".join(run))
            parts.append(f"<span class={run_class}>{text}</span>" if run_class else text)
            run.clear()
        run_class = css_class
        run.append(value)
    if run:
        text = escape_text("".join(run))
        parts.append(f"<span class={run_class}>{text}</span>" if run_class else text)
    return "".join(parts)


class CodeHighlighter:
    """Highlights code blocks until ``budget`` characters have been highlighted."""

    def __init__(self, budget: int = DEFAULT_BUDGET_CHARS) -> None:
        self.budget = budget

    def block(self, code: str, language: str | None) -> str:
        """A ``<pre class="code">`` block, highlighted for ``language`` when known and affordable."""
        lexer = _lexer_by_name(language.lower()) if language else None
        return self._render(code, lexer)

    def file(self, code: str, path: str) -> str:
        """A block of a file's content, highlighted by the file's extension."""
        return self._render(code, lexer_for_path(path) if path else None)

    def _render(self, code: str, lexer: Lexer | None) -> str:
        if lexer is None or len(code) > self.budget:
            return plain_code(code)
        self.budget -= len(code)
        return f'<pre class="code"><code>{_highlight(_without_final_newline(code), lexer)}</code></pre>'


class _SafeRenderer(RendererHTML):
    """CommonMark's HTML, with links opening in a new tab and images shown as links."""

    def link_open(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        token = tokens[idx]
        if _SCHEME.match(str(token.attrGet("href") or "").lower()):
            token.attrSet("target", "_blank")
            token.attrSet("rel", "noopener noreferrer")
        return self.renderToken(tokens, idx, options, env)

    def image(self, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        token = tokens[idx]
        alt = escape(self.renderInlineAsText(token.children or [], options, env) or "image")
        src = str(token.attrGet("src") or "")
        if not src:
            return f'<span class="md-image">[{alt}]</span>'
        return (
            f'<a class="md-image" href="{escape(src)}" target="_blank" rel="noopener noreferrer">[{alt}]</a>'
        )


class _SafeMarkdownIt(MarkdownIt):
    def validateLink(self, url: str) -> bool:
        return is_safe_url(url)


class MarkdownRenderer:
    """CommonMark (plus tables and strikethrough) to HTML; fenced code goes through ``highlighter``."""

    def __init__(self, highlighter: CodeHighlighter) -> None:
        self._highlighter = highlighter
        self._md = _SafeMarkdownIt(
            "commonmark",
            {"html": False, "breaks": True, "highlight": self._highlight_fence},
            renderer_cls=_SafeRenderer,
        ).enable(["table", "strikethrough"])

    def render(self, text: str) -> str:
        return f'<div class="md">{self._md.render(text)}</div>'

    def _highlight_fence(self, code: str, language: str, _attrs: str) -> str:
        return self._highlighter.block(code, language or None)
