"""The exported page in headless Chromium: it opens without errors, runs no script but its own,
shows the leaf's branch, switches branches from the sidebar, expands output, decodes its embedded
session, and looks right in light and dark (screenshots)."""

from __future__ import annotations

import json
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from chromium import CHROMIUM, Chromium
from export_session import PAYLOAD, V1_SESSION, BuiltSession, build_session

from tau.export import export_session_html


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("browser")


@pytest.fixture(scope="module")
def session(work: Path) -> BuiltSession:
    return build_session(work)


@pytest.fixture(scope="module")
def page_url(session: BuiltSession, work: Path) -> str:
    return Path(export_session_html(session.manager, work / "session.html")).as_uri()


@pytest.fixture(scope="module")
def browser(work: Path) -> Iterator[Chromium]:
    assert Path(CHROMIUM).exists(), "these tests need Debian's chromium package (see the README's set-up)"
    with Chromium(work) as chromium:
        yield chromium


@pytest.fixture
def page(browser: Chromium, page_url: str) -> Chromium:
    browser.prefer_dark(False)
    browser.open(page_url)
    browser.problems.clear()
    return browser


def visible_entries(page: Chromium) -> list[str]:
    ids: list[str] = page.evaluate(
        "[...document.querySelectorAll('article.entry:not([hidden])')].map(e => e.id.slice(2))"
    )
    return ids


def branch_ids(session: BuiltSession, leaf_id: str) -> list[str]:
    return [e.id for e in session.manager.get_branch(leaf_id)]


def test_the_page_runs_only_its_own_script_and_reports_no_errors(browser: Chromium, page_url: str) -> None:
    browser.problems.clear()
    browser.open(page_url)
    assert browser.problems == []
    assert browser.evaluate("document.scripts.length") == 2
    assert browser.evaluate("document.documentElement.classList.contains('no-js')") is False  # the viewer ran
    handlers = "[...document.querySelectorAll('*')].filter(e => [...e.attributes].some(a => a.name.startsWith('on'))).length"
    assert browser.evaluate(handlers) == 0
    images = browser.evaluate("[...document.images].map(i => i.getAttribute('src').slice(0, 22))")
    assert images and all(src == "data:image/png;base64," for src in images)
    shown = "[...document.querySelectorAll('article:not([hidden]) img')]"
    assert browser.evaluate(f"{shown}.length > 0 && {shown}.every(i => i.complete && i.naturalWidth === 120)")


def test_script_payloads_are_text_on_the_page(page: Chromium, session: BuiltSession) -> None:
    page.evaluate(f"tauSession.select({json.dumps(session.first_user_id)}, true)")
    text = page.evaluate(f"document.getElementById('e-{session.first_user_id}').innerText")
    assert "<script>alert(1)</script><img src=x onerror=alert(2)>" in text
    assert PAYLOAD in page.evaluate("document.querySelector('h1').textContent")


def test_the_branch_of_the_session_leaf_is_shown_first(page: Chromium, session: BuiltSession) -> None:
    assert visible_entries(page) == branch_ids(session, session.summary_leaf_id)


def test_clicking_an_entry_of_another_branch_shows_that_branch(page: Chromium, session: BuiltSession) -> None:
    page.click(f"#tree li[data-id='{session.main_reply_id}'] > a")
    assert visible_entries(page) == branch_ids(session, session.main_leaf_id)  # through to its newest leaf
    assert page.evaluate("location.hash") == f"#e-{session.main_reply_id}"
    assert page.evaluate(
        f"document.getElementById('e-{session.main_reply_id}').classList.contains('selected')"
    )
    on_path = page.evaluate("[...document.querySelectorAll('#tree li.on-path')].map(l => l.dataset.id)")
    assert on_path == branch_ids(session, session.main_leaf_id)

    page.click(f"#tree li[data-id='{session.first_user_id}'] > a")  # on the branch shown: it stays
    assert visible_entries(page) == branch_ids(session, session.main_leaf_id)

    page.click(f"#tree li[data-id='{session.side_leaf_id}'] > a")
    assert visible_entries(page) == branch_ids(session, session.side_leaf_id)
    assert page.problems == []


def test_a_link_to_an_entry_opens_its_branch(browser: Chromium, page_url: str, session: BuiltSession) -> None:
    browser.open("about:blank")  # else only the fragment changes: no new load
    browser.open(f"{page_url}#e-{session.compaction_id}")
    assert session.compaction_id in visible_entries(browser)


def test_long_output_expands_and_everything_collapses(page: Chromium, session: BuiltSession) -> None:
    page.evaluate(f"tauSession.select({json.dumps(session.main_reply_id)}, false)")
    page.click("article:not([hidden]) button.expand")
    assert page.evaluate(
        "document.querySelector('article:not([hidden]) .output.long').classList.contains('expanded')"
    )
    assert (
        page.evaluate("document.querySelector('article:not([hidden]) button.expand').textContent")
        == "Show less"
    )
    page.click("#collapse-all")
    assert page.evaluate("[...document.querySelectorAll('#entries details')].some(d => d.open)") is False
    page.click("#expand-all")
    assert page.evaluate("[...document.querySelectorAll('#entries details')].every(d => d.open)") is True


def test_the_sidebar_filter_and_all_entries_toggle(page: Chromium) -> None:
    shown = "[...document.querySelectorAll('#tree li')].filter(l => l.offsetParent !== null).length"
    everything = page.evaluate("document.querySelectorAll('#tree li').length")
    assert page.evaluate(shown) < everything  # settings and labels are left out by default
    page.click("#tree-all")
    assert page.evaluate(shown) == everything
    page.evaluate(
        "(() => { const f = document.getElementById('tree-filter'); f.value = 'BRANCH';"
        " f.dispatchEvent(new Event('input')); })()"
    )
    assert page.evaluate(shown) == 4  # the three replies saying "branch" and the branch summary


def test_the_embedded_session_decodes_to_the_session_file(page: Chromium, session: BuiltSession) -> None:
    jsonl = page.evaluate("tauSession.jsonl()", await_promise=True)
    assert [json.loads(line) for line in jsonl.splitlines()] == [
        json.loads(line) for line in session.path.read_text().splitlines()
    ]
    data: dict[str, Any] = page.evaluate("tauSession.data()", await_promise=True)
    assert len(data["entries"]) == len(session.manager.get_entries())


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


@pytest.mark.parametrize(("dark", "background"), [(False, "rgb(246, 247, 249)"), (True, "rgb(13, 17, 23)")])
def test_screenshots_in_light_and_dark(
    page: Chromium, session: BuiltSession, work: Path, dark: bool, background: str
) -> None:
    page.prefer_dark(dark)
    page.evaluate(f"tauSession.select({json.dumps(session.main_reply_id)}, false)")
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == background
    shot = page.screenshot(work / f"session-{'dark' if dark else 'light'}.png")
    assert png_size(shot) == (1280, 900)
    assert len(shot) > 20_000  # a page of text and colour, not a blank frame


def test_an_exported_pi_v1_file_opens_too(browser: Chromium, work: Path) -> None:
    source = work / "pi-v1.jsonl"
    source.write_text("".join(json.dumps(line) + "\n" for line in V1_SESSION))
    browser.problems.clear()
    browser.open(Path(export_session_html(source, work / "pi-v1.html")).as_uri())
    assert browser.problems == []
    assert "unguarded" in browser.evaluate("document.getElementById('entries').innerText")
    assert len(visible_entries(browser)) == len(V1_SESSION) - 1
