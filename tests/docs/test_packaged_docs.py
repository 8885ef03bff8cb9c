"""The README and the topic pages ship inside the package (``tau/README.md``, ``tau/docs/``), so the
system prompt names files that exist in a checkout, in a wheel built from it and in a wheel built
from the sdist (the way ``python -m build`` makes one)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from tau.context import tau_docs_path, tau_readme_path
from tau.context.system_prompt import DOCS_BY_SUBJECT, SystemPromptOptions, build_system_prompt_sections

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted(path.name for path in (ROOT / "docs").glob("*.md"))


def build(*args: str, cwd: Path) -> None:
    subprocess.run([sys.executable, *args], cwd=cwd, check=True, capture_output=True, timeout=300)


def wheel_of(source: Path, out: Path) -> Path:
    build(
        "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(source), cwd=out
    )
    (wheel,) = out.glob("*.whl")
    return wheel


def sdist_of(out: Path) -> Path:
    build("-m", "hatchling", "build", "-t", "sdist", "-d", str(out), cwd=ROOT)
    (sdist,) = out.glob("*.tar.gz")
    return sdist


def assert_ships_the_docs(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        assert archive.read("tau/README.md") == (ROOT / "README.md").read_bytes()
        for page in PAGES:
            assert archive.read(f"tau/docs/{page}") == (ROOT / "docs" / page).read_bytes()
    assert not any(name.startswith("docs/") for name in names)


def test_the_checkout_has_a_docs_folder_and_readme_inside_the_package() -> None:
    assert Path(tau_readme_path()).read_text() == (ROOT / "README.md").read_text()
    assert sorted(p.name for p in Path(tau_docs_path()).glob("*.md")) == PAGES
    assert len(PAGES) >= 30


def test_every_page_the_system_prompt_names_exists() -> None:
    docs = build_system_prompt_sections(SystemPromptOptions(cwd="/w"))["docs"]
    assert f"- README: {tau_readme_path()}\n" in docs
    assert f"- Topic pages: {tau_docs_path()} " in docs
    named = re.findall(r"docs/([a-z-]+\.md)", docs)
    assert named == [page for _, page in DOCS_BY_SUBJECT]
    assert set(named) <= set(PAGES)


def test_the_readme_links_only_to_pages_that_exist() -> None:
    links = re.findall(r"\]\(docs/([^)#]*)", (ROOT / "README.md").read_text())
    assert links
    for link in links:
        assert link == "" or link in PAGES, link


@pytest.mark.timeout(300)
def test_a_wheel_built_from_the_checkout_ships_the_docs_and_names_them_once_installed(tmp_path: Path) -> None:
    wheel = wheel_of(ROOT, tmp_path)
    assert_ships_the_docs(wheel)
    site = tmp_path / "site"
    build("-m", "pip", "install", "--no-deps", "-q", "--target", str(site), str(wheel), cwd=tmp_path)
    script = (
        "from tau.context import tau_docs_path, tau_readme_path\n"
        "print(tau_readme_path()); print(tau_docs_path())\n"
    )
    env = {**os.environ, "PYTHONPATH": str(site)}
    result = subprocess.run(
        [sys.executable, "-P", "-c", script],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    readme, docs = result.stdout.split()
    assert Path(readme) == site / "tau" / "README.md" and Path(readme).is_file()
    assert Path(docs) == site / "tau" / "docs"
    assert sorted(p.name for p in Path(docs).glob("*.md")) == PAGES


@pytest.mark.timeout(300)
def test_a_wheel_built_from_the_sdist_ships_the_docs(tmp_path: Path) -> None:
    sdist = sdist_of(tmp_path)
    with tarfile.open(sdist) as archive:
        archive.extractall(tmp_path / "unpacked", filter="data")
    (source,) = (tmp_path / "unpacked").iterdir()
    assert not (source / "docs").exists()  # the top-level docs/ is a link to src/tau/docs
    out = tmp_path / "wheel"
    out.mkdir()
    assert_ships_the_docs(wheel_of(source, out))
