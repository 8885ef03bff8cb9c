"""``export_session_html`` and ``AgentSession.export_to_html``: where the page goes, what cannot be
exported (spec 70 cases 32–34), old pi files, and that the input file is never touched."""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from export_session import V1_SESSION, V2_SESSION, BuiltSession, decode_embedded, reply

from tau.ai.types import ImageContent, TextContent, UserMessage
from tau.export import ExportError, default_output_path, export_session_html
from tau.runtime.agent_session import AgentSession
from tau.session import SessionManager
from tau.testing.faux import FauxProvider, faux_message

SessionFactory = Callable[..., AgentSession]


def embedded(html_path: str | Path) -> dict[str, Any]:
    return decode_embedded(Path(html_path).read_text(encoding="utf-8"))


def test_the_default_file_is_named_after_the_session_file_in_the_current_directory(
    built: BuiltSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    path = export_session_html(built.manager)
    assert path == str(tmp_path / f"tau-session-{built.path.stem}.html")
    assert len(embedded(path)["entries"]) == len(built.manager.get_entries())
    assert default_output_path("/x/2026-01-01_abc.jsonl") == "tau-session-2026-01-01_abc.html"


def test_an_explicit_output_path_is_used_and_returned_absolute(built: BuiltSession, tmp_path: Path) -> None:
    path = export_session_html(built.path, tmp_path / "out.html")
    assert path == str(tmp_path / "out.html")
    assert embedded(path)["entries"] == [json.loads(line) for line in built.path.read_text().splitlines()[1:]]


def test_an_in_memory_session_cannot_be_exported(tmp_path: Path) -> None:
    manager = SessionManager.in_memory(str(tmp_path))
    manager.append_message(UserMessage("hi"))
    with pytest.raises(ExportError, match="in-memory"):
        export_session_html(manager, tmp_path / "out.html")


def test_a_session_without_a_reply_has_nothing_to_export_yet(tmp_path: Path) -> None:
    manager = SessionManager.create(str(tmp_path), str(tmp_path / "sessions"))
    manager.append_message(UserMessage("hi"))
    with pytest.raises(ExportError, match="Nothing to export yet"):
        export_session_html(manager, tmp_path / "out.html")
    assert not (tmp_path / "out.html").exists()


def test_a_missing_file_is_a_file_not_found_error(tmp_path: Path) -> None:
    with pytest.raises(ExportError, match=r"File not found: .*missing\.jsonl"):
        export_session_html(tmp_path / "missing.jsonl", tmp_path / "out.html")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "Not a session file"),
        ('{"type":"message"}\n', "Not a session file"),
        ('{"type":"session","id":"x"}\n', "no entries"),
    ],
)
def test_files_that_are_not_sessions_or_are_empty_are_refused(
    tmp_path: Path, content: str, message: str
) -> None:
    source = tmp_path / "s.jsonl"
    source.write_text(content)
    with pytest.raises(ExportError, match=message):
        export_session_html(source, tmp_path / "out.html")
    assert source.read_text() == content


def test_an_unwritable_output_path_is_an_export_error(built: BuiltSession, tmp_path: Path) -> None:
    with pytest.raises(ExportError, match="Cannot write"):
        export_session_html(built.path, tmp_path / "no-such-dir" / "out.html")


@pytest.mark.parametrize(
    ("lines", "expected"),
    [(V1_SESSION, "An <strong>unguarded</strong> index."), (V2_SESSION, "Remember the docs.")],
)
def test_old_pi_files_export_migrated_in_memory_and_stay_untouched(
    tmp_path: Path, lines: list[dict[str, Any]], expected: str
) -> None:
    source = tmp_path / "old.jsonl"
    source.write_text("".join(json.dumps(line) + "\n" for line in lines))
    before = (source.read_bytes(), os.stat(source).st_mtime_ns)
    path = export_session_html(source, tmp_path / "out.html")
    assert (source.read_bytes(), os.stat(source).st_mtime_ns) == before
    html = Path(path).read_text()
    assert expected in html
    data = embedded(path)
    assert data["header"]["version"] == 3 and len(data["entries"]) == len(lines) - 1
    assert all(isinstance(e["id"], str) for e in data["entries"])
    if lines is V1_SESSION:
        assert data["entries"][2]["firstKeptEntryId"] == data["entries"][1]["id"]
        assert 'class="entry compaction marked"' in html


def test_exporting_a_current_file_leaves_it_byte_for_byte(built: BuiltSession, tmp_path: Path) -> None:
    before = (built.path.read_bytes(), os.stat(built.path).st_mtime_ns)
    export_session_html(built.path, tmp_path / "out.html")
    export_session_html(built.manager, tmp_path / "out2.html")
    assert (built.path.read_bytes(), os.stat(built.path).st_mtime_ns) == before


async def test_an_agent_session_exports_with_its_system_prompt_and_active_tools(
    make_session: SessionFactory, faux: FauxProvider, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = make_session()
    with pytest.raises(ExportError, match="Nothing to export yet"):
        session.export_to_html(str(tmp_path / "early.html"))
    faux.set_responses([faux_message("hi there")])
    await session.prompt("hello")
    monkeypatch.chdir(tmp_path)
    path = session.export_to_html()
    assert os.path.basename(path) == f"tau-session-{Path(session.session_file or '').stem}.html"
    data = embedded(path)
    assert data["systemPrompt"] == session.system_prompt
    assert [t["name"] for t in data["tools"]] == session.get_active_tool_names()
    assert all(t["description"] and t["parameters"] for t in data["tools"])
    assert "hi there" in Path(path).read_text()


def test_lone_surrogates_in_a_session_do_not_break_the_export(tmp_path: Path) -> None:
    manager = SessionManager.create(str(tmp_path), str(tmp_path / "sessions"))
    manager.append_message(UserMessage([TextContent("broken \ud800 text")]))
    manager.append_message(reply(TextContent("ok")))
    path = export_session_html(manager, tmp_path / "out.html")
    assert "broken ? text" in Path(path).read_text(encoding="utf-8")
    assert embedded(path)["entries"][0]["message"]["content"][0]["text"] == "broken \ud800 text"


def test_a_tangled_tree_of_duplicate_and_self_parented_ids_still_exports(tmp_path: Path) -> None:
    def user(entry_id: str, parent: str | None, text: str) -> dict[str, Any]:
        message = {"role": "user", "content": text, "timestamp": 1}
        return {
            "type": "message",
            "id": entry_id,
            "parentId": parent,
            "timestamp": "2026-01-01T00:00:00.000Z",
            "message": message,
        }

    header = {"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/"}
    lines = [
        header,
        user("a", None, "one"),
        user("b", "a", "two"),
        user("a", "b", "three"),
        user("c", "c", "self"),
    ]
    source = tmp_path / "tangled.jsonl"
    source.write_text("".join(json.dumps(line) + "\n" for line in lines))
    html = Path(export_session_html(source, tmp_path / "out.html")).read_text()
    assert "three" in html and "self" in html


def test_an_image_is_stored_once_so_an_image_heavy_page_stays_under_twice_the_session(tmp_path: Path) -> None:
    manager = SessionManager.create(str(tmp_path), str(tmp_path / "sessions"))
    noise = base64.b64encode(os.urandom(300_000)).decode("ascii")  # incompressible, like a screenshot
    manager.append_message(
        UserMessage([TextContent("what is on this screenshot?"), ImageContent(noise, "image/png")])
    )
    manager.append_message(reply(TextContent("A screenshot.")))
    path = export_session_html(manager, tmp_path / "out.html")
    page = Path(path).read_text(encoding="utf-8")
    assert page.count(noise) == 1
    session_file = manager.get_session_file()
    assert session_file is not None
    assert Path(path).stat().st_size <= 2 * Path(session_file).stat().st_size
    assert decode_embedded(page)["entries"][0]["message"]["content"][1]["data"] == noise
