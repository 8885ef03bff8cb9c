"""Markdown and code rendering of the HTML export: escaping, link sanitising, highlighting, budget."""

from __future__ import annotations

import pytest
from export_session import audit_html, is_harmless_href
from hypothesis import given, settings
from hypothesis import strategies as st

from tau.export.markup import CodeHighlighter, MarkdownRenderer, is_safe_url, lexer_for_path


def render(text: str) -> str:
    return MarkdownRenderer(CodeHighlighter()).render(text)


def test_raw_html_in_markdown_is_shown_as_text() -> None:
    html = render("Hi <script>alert(1)</script> <img src=x onerror=alert(2)>\n\n<div onclick=x>block</div>")
    audit = audit_html(html)
    assert audit.scripts == 0 and audit.event_handlers == [] and "img" not in audit.tags
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;div onclick=x&gt;block&lt;/div&gt;" in html


@pytest.mark.parametrize(
    "link",
    [
        "[x](javascript:alert(1))",
        "[x](JavaScript:alert(1))",
        "[x](jav&#x61;script:alert(1))",
        "[x](<java\tscript:alert(1)>)",
        "[x](data:text/html;base64,PHNjcmlwdD4=)",
        "[x](vbscript:msgbox)",
        "[x](file:///etc/passwd)",
        "<javascript:alert(1)>",
        "[x][ref]\n\n[ref]: javascript:alert(1)",
    ],
)
def test_dangerous_links_are_not_clickable(link: str) -> None:
    audit = audit_html(render(link))
    assert all(is_harmless_href(href) for href in audit.hrefs), audit.hrefs


@pytest.mark.parametrize(
    ("link", "href"),
    [
        ("[x](https://example.com/a?b=1)", "https://example.com/a?b=1"),
        ("[x](http://example.com)", "http://example.com"),
        ("[x](mailto:dev@example.com)", "mailto:dev@example.com"),
        ("[x](docs/readme.md)", "docs/readme.md"),
        ("[x](#section)", "#section"),
        ("<https://example.com>", "https://example.com"),
    ],
)
def test_safe_links_stay_links(link: str, href: str) -> None:
    assert audit_html(render(link)).hrefs == [href]


def test_markdown_images_become_links_since_the_page_loads_nothing() -> None:
    html = render("![diagram](https://example.com/a.png) ![bad](javascript:alert(1))")
    audit = audit_html(html)
    assert "img" not in audit.tags
    assert audit.hrefs == ["https://example.com/a.png"]
    assert "[diagram]" in html and "[bad]" in html


def test_is_safe_url_allows_only_web_mail_and_relative_targets() -> None:
    assert (
        is_safe_url("https://a") and is_safe_url("mailto:a@b") and is_safe_url("./x:y") and is_safe_url("#x")
    )
    assert (
        not is_safe_url(" javascript:x") and not is_safe_url("java\nscript:x") and not is_safe_url("data:x")
    )


def test_fenced_code_is_highlighted_with_short_classes() -> None:
    html = render("```python\ndef f(x):\n    return 'a'  # note\n```")
    assert '<pre class="code"><code><span class=k>def</span> <span class=f>f</span>' in html
    assert "<span class=s>'a'</span>" in html and "<span class=c># note</span>" in html


def test_unknown_languages_and_exhausted_budgets_give_plain_escaped_code() -> None:
    assert render("```nosuchlanguage\n<b>x</b>\n```").count("<span") == 0
    highlighter = CodeHighlighter(budget=30)
    assert "<span" in highlighter.block("x = 1\n", "python")
    assert highlighter.block("y = '" + "a" * 40 + "'\n", "python") == (
        '<pre class="code"><code>y = \'' + "a" * 40 + "'</code></pre>"
    )
    assert "<span" in highlighter.block("z = 2\n", "python")  # smaller blocks still fit


def test_files_are_highlighted_by_extension() -> None:
    assert lexer_for_path("src/app.py") is not None and lexer_for_path("web/App.TSX") is not None
    assert lexer_for_path("Makefile") is not None
    assert lexer_for_path("notes.unknown-extension") is None
    assert "<span class=k>const</span>" in CodeHighlighter().file("const a = 1;\n", "x.ts")


DANGEROUS = st.sampled_from(
    [
        "<script>",
        "</script>",
        "<img src=x onerror=alert(1)>",
        "javascript:",
        "[a](",
        ")",
        "<",
        ">",
        '"',
        "'",
        "`",
        "```",
        "\n",
        "![i](",
        "&#x6a;",
        "<javascript:x>",
        " onload=",
        "[r]: ",
        "\t",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(DANGEROUS, st.text(max_size=8)), max_size=30).map("".join))
def test_no_markdown_input_yields_script_handlers_or_script_links(text: str) -> None:
    html = render(text)
    assert "<script" not in html.lower()
    audit = audit_html(html)
    assert audit.scripts == 0
    assert audit.event_handlers == []
    assert "img" not in audit.tags and "iframe" not in audit.tags
    assert all(is_harmless_href(href) for href in audit.hrefs), audit.hrefs
