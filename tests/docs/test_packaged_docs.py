"""The README and the topic pages ship inside the package (``tau/README.md``, ``tau/docs/``), so the
system prompt names files that exist in a checkout, in a wheel built from it and in a wheel built
from the sdist (the way ``python -m build`` makes one)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from tau.context import tau_docs_path, tau_readme_path
from tau.context.system_prompt import DOCS_PAGES, SystemPromptOptions, build_system_prompt_sections
from tau.testing.fake_llm import FakeLLMServer, Turn

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
    assert f"- README: {tau_readme_path()} " in docs
    assert f": {tau_docs_path()} (" in docs
    named = re.findall(r"[a-z-]+\.md", docs.split(tau_docs_path(), 1)[1])
    assert named == list(DOCS_PAGES)
    assert set(named) <= set(PAGES)


def test_the_readme_links_only_to_pages_that_exist() -> None:
    links = re.findall(r"\]\(docs/([^)#]*)", (ROOT / "README.md").read_text())
    assert links
    for link in links:
        assert link == "" or link in PAGES, link


@pytest.mark.timeout(300)
def test_an_installed_wheel_ships_the_docs_and_its_prompt_names_them(tmp_path: Path) -> None:
    wheel = wheel_of(ROOT, tmp_path)
    assert_ships_the_docs(wheel)
    site = tmp_path / "site"
    build("-m", "pip", "install", "--no-deps", "-q", "--target", str(site), str(wheel), cwd=tmp_path)
    home = tmp_path / "home"
    (home / ".tau" / "agent").mkdir(parents=True)
    with FakeLLMServer([Turn(text="Done.")]) as server:
        models = {"providers": {"anthropic": {"baseUrl": server.url()}}}
        (home / ".tau" / "agent" / "models.json").write_text(json.dumps(models))
        # The installed copy first on the path (the test run's own tau is an editable install).
        env = {
            "HOME": str(home),
            "PATH": os.defpath,
            "PYTHONPATH": str(site),
            "ANTHROPIC_API_KEY": "sk-ant-test",
        }
        result = subprocess.run(
            [sys.executable, "-P", "-m", "tau", "-p", "where are your docs?"],
            cwd=home,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 0, result.stderr
        system = " ".join(block["text"] for block in server.last_request.body["system"])
    readme = re.search(r"- README: (\S+)", system)
    docs = re.search(r"- Topic pages, [^:]*: (\S+)", system)
    assert readme and docs
    assert Path(readme.group(1)) == site / "tau" / "README.md"
    assert Path(readme.group(1)).read_text() == (ROOT / "README.md").read_text()
    assert Path(docs.group(1)) == site / "tau" / "docs"
    for page in DOCS_PAGES:
        assert f"{page}," in system
        assert (Path(docs.group(1)) / page).is_file(), page


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
