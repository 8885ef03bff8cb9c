"""The exported page as a whole, on a realistic session: every entry rendered once and escaped, the
branch shown first, summaries and notices marked, the sidebar tree, the header's totals, the
embedded session data and the Content-Security-Policy."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from importlib import resources
from typing import Any

import pytest
from export_session import PAYLOAD, BuiltSession, audit_html, decode_embedded, is_harmless_href

from tau.ai.types import Tool
from tau.export.page import build_page
from tau.export.source import ExportSource, source_from_manager

ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;"


@pytest.fixture
def source(built: BuiltSession) -> ExportSource:
    return source_from_manager(built.manager)


@pytest.fixture
def page(source: ExportSource) -> str:
    return build_page(
        source, system_prompt=f"You are tau. {PAYLOAD}", tools=[Tool("read", f"Read {PAYLOAD}")]
    )


def article(page: str, entry_id: str) -> str:
    match = re.search(
        rf'<article class="([^"]*)" id="e-{re.escape(entry_id)}"(?: hidden)?>(.*?)</article>', page, re.S
    )
    assert match is not None, entry_id
    return match.group(0)


def embedded_data(page: str) -> dict[str, Any]:
    return decode_embedded(page)


def test_every_entry_is_rendered_once_with_its_id(page: str, source: ExportSource) -> None:
    for entry in source.entries:
        assert page.count(f'id="e-{entry.id}"') == 1


def test_nothing_from_the_session_can_run_script_or_load_anything(page: str) -> None:
    audit = audit_html(page)
    assert audit.scripts == 2  # the session data (never executed) and the viewer
    assert audit.event_handlers == []
    assert all(is_harmless_href(href) for href in audit.hrefs), audit.hrefs
    assert all(src.startswith("data:image/png;base64,") for src in audit.image_sources)
    assert PAYLOAD not in page and "javascript:alert" not in page.replace("](javascript:alert", "")


def test_the_payload_is_shown_as_text_everywhere(page: str, built: BuiltSession) -> None:
    for where, entry_id in built.payload_places.items():
        assert ESCAPED in article(page, entry_id), where
    assert f'<span class="label-badge">start {ESCAPED}</span>' in article(page, built.first_user_id)
    assert f"<h1>Greeting fix {ESCAPED}</h1>" in page
    assert f"<title>Greeting fix {ESCAPED} · tau</title>" in page
    assert f"You are tau. {ESCAPED}" in page and f"Read {ESCAPED}" in page


def test_the_branch_of_the_leaf_is_shown_and_the_others_hidden(page: str, built: BuiltSession) -> None:
    branch = {e.id for e in built.manager.get_branch()}
    for entry in built.manager.get_entries():
        hidden = re.search(rf'id="e-{entry.id}"( hidden)?>', page)
        assert hidden is not None
        assert bool(hidden.group(1)) == (entry.id not in branch), entry.type
    assert f'data-leaf="{built.summary_leaf_id}"' in page


def article_class(page: str, entry_id: str) -> str:
    match = re.search(rf'<article class="([^"]*)" id="e-{re.escape(entry_id)}"', page)
    assert match is not None
    return match.group(1)


def test_summaries_are_marked_and_settings_are_notices(page: str, built: BuiltSession) -> None:
    compaction = article(page, built.compaction_id)
    assert article_class(page, built.compaction_id) == "entry compaction marked"
    assert "48k tokens before compaction" in compaction and "<h2>Goal</h2>" in compaction
    assert "Files modified (1)" in compaction
    assert article_class(page, built.branch_summary_id) == "entry branch-summary marked"
    notices = [
        article(page, e.id)
        for e in built.manager.get_entries()
        if article_class(page, e.id) == "entry notice"
    ]
    assert any("Model: anthropic/claude-sonnet-4-5" in n for n in notices)
    assert any("Thinking level: medium" in n for n in notices)
    assert any("Session name: Greeting fix" in n for n in notices)
    assert any("Extension state" in n for n in notices)


def test_assistant_messages_show_model_tokens_cost_and_thinking_collapsed(
    page: str, built: BuiltSession
) -> None:
    html = article(page, built.main_reply_id)
    assert '<span class="model">anthropic/claude-sonnet-4-5</span>' in html
    assert "<span>in 1.5k</span><span>out 120</span><span>cache read 1.0k</span>" in html
    assert "<span>$0.0123</span>" in html
    assert '<details class="thinking"><summary>Thinking</summary>' in page  # closed: no "open"
    assert "overloaded" in article(page, built.side_leaf_id)


def test_the_header_sums_every_branch(page: str) -> None:
    assert "4 user, 6 assistant, 8 tool results" in page
    assert "$0.0738" in page  # 6 replies × $0.0123
    assert "3 branches" in page


def test_the_sidebar_lists_the_tree_with_branches(page: str, built: BuiltSession) -> None:
    lines = re.findall(
        r'<li class="([^"]*)" data-id="([^"]*)" data-p="([^"]*)" data-l="([^"]*)" style="--depth:(\d+)">',
        page,
    )
    assert len(lines) == len(built.manager.get_entries())
    by_id = {
        entry_id: (classes, parent, leaf, int(depth)) for classes, entry_id, parent, leaf, depth in lines
    }
    assert by_id[built.first_user_id][2] == built.summary_leaf_id  # the newest branch below it
    assert by_id[built.branch_summary_id][3] == by_id[built.first_user_id][3] + 1
    assert "leaf" in by_id[built.side_leaf_id][0] and "on-path" not in by_id[built.side_leaf_id][0]
    assert "on-path" in by_id[built.summary_leaf_id][0]
    assert page.count('<span class="fork">') == 4  # two branch points with two children each


def test_the_session_data_is_embedded_gzipped(page: str, built: BuiltSession) -> None:
    data = embedded_data(page)
    lines = [json.loads(line) for line in built.path.read_text().splitlines()]
    assert data["header"] == lines[0]
    assert len(data["entries"]) == len(built.manager.get_entries()) == len(lines) - 1
    assert data["entries"] == lines[1:]
    assert data["leafId"] == built.summary_leaf_id
    assert data["systemPrompt"].startswith("You are tau.")
    assert data["tools"] == [
        {"name": "read", "description": f"Read {PAYLOAD}", "parameters": Tool("x", "").parameters}
    ]


def test_the_content_security_policy_allows_only_the_viewer_script(page: str) -> None:
    script = (resources.files("tau.export") / "viewer.js").read_text(encoding="utf-8")
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    policy = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">', page)
    assert policy is not None
    assert policy.group(1).startswith(f"default-src 'none'; script-src 'sha256-{digest}';")
    assert "img-src data:" in policy.group(1)
    assert f"<script>{script}</script>" in page
    assert page.index("Content-Security-Policy") < page.index("<style>")


def test_the_assets_ship_with_the_package() -> None:
    files = resources.files("tau.export")
    for name in ("template.html", "viewer.css", "viewer.js"):
        assert (files / name).is_file()
