"""Links between the README and the topic pages lead somewhere: each names a page that exists and,
after `#`, a heading of that page (as GitHub makes anchors: lower case, punctuation dropped, spaces
to hyphens)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tau.context import tau_docs_path

ROOT = Path(__file__).resolve().parents[2]
DOCS = Path(tau_docs_path())
PAGES = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^```.*?^```", re.M | re.S)


def anchors(page: Path) -> set[str]:
    text = _FENCE.sub("", page.read_text())
    found = set()
    for heading in re.findall(r"^#+ (.+)$", text, re.M):
        anchor = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        found.add(anchor)
    return found


def local_links(page: Path) -> list[str]:
    text = _FENCE.sub("", page.read_text())
    return [link for link in _LINK.findall(text) if not re.match(r"[a-z]+:", link)]


def test_an_anchor_is_made_as_github_makes_it() -> None:
    assert "models-thinking-tools-and-output" in anchors(DOCS / "cli.md")
    assert "azure-openai-chatgpt-codex-and-mistral" in anchors(DOCS / "providers.md")


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_local_link_names_a_page_and_heading_that_exist(page: Path) -> None:
    for link in local_links(page):
        path, _, anchor = link.partition("#")
        target = (page.parent / path).resolve() if path else page
        if page.name == "README.md" and path.startswith("docs/"):
            target = DOCS / path.removeprefix("docs/")  # the top-level docs/ links to src/tau/docs
        assert target.exists(), f"{page.name}: {link}"
        if anchor:
            assert anchor in anchors(target), f"{page.name}: {link}"
