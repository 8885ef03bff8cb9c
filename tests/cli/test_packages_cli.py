"""`tau install / remove / list / update` with real git, pip and an npm registry on 127.0.0.1 (issue #16)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tarfile
import threading
import zipfile
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import unquote

import pytest
from tau_command import MODEL, TauCommand

from tau.testing.fake_llm import Turn

SKILL = "---\nname: {name}\ndescription: {name} things\n---\nSteps\n"
MARK = "TAU_PACKAGE_MARK"


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A git package: a skill, a prompt, a Python extension and a TypeScript one; tagged v1."""
    root = tmp_path_factory.mktemp("git") / "pi-tools"
    (root / "skills" / "deploy").mkdir(parents=True)
    (root / "skills" / "deploy" / "SKILL.md").write_text(SKILL.format(name="deploy"))
    (root / "prompts").mkdir()
    (root / "prompts" / "review.md").write_text("Review version one")
    (root / "extensions").mkdir()
    (root / "extensions" / "legacy.ts").write_text("export default function () {}\n")
    (root / "extensions" / "hello.py").write_text(
        "import os\n\ndef setup(tau):\n    open(os.environ['TAU_PACKAGE_MARK'], 'a').write('git\\n')\n"
    )
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "one")
    _git(root, "tag", "v1")
    return root


def _url(repo: Path) -> str:
    return f"git:{repo.as_uri()}"


def _settings(tau: TauCommand) -> dict[str, Any]:
    path = tau.agent_dir / "settings.json"
    return json.loads(path.read_text()) if path.exists() else {}


def _last_user_text(tau: TauCommand) -> str:
    return str(tau.server.last_request.body["messages"][-1]["content"][0]["text"])


def _system_prompt(tau: TauCommand) -> str:
    return str(tau.server.last_request.body["messages"][0]["content"])


def test_a_git_package_is_recorded_and_its_skill_prompt_and_extension_load_on_the_next_start(
    tau: TauCommand, repo: Path
) -> None:
    installed = tau.run("install", f"{_url(repo)}@v1")
    assert installed.returncode == 0, installed.stderr
    assert f"Installed {_url(repo)}@v1" in installed.stdout
    assert _settings(tau) == {"packages": [f"{_url(repo)}@v1"]}
    clone = tau.agent_dir / "git" / "local" / Path(*repo.parts[1:])
    assert (clone / "prompts" / "review.md").is_file()
    mark = tau.work / "mark.txt"
    tau.env[MARK] = str(mark)
    tau.server.add(Turn(text="ok"))
    run = tau.run(*MODEL, "-p", "/review")
    assert run.returncode == 0, run.stderr
    assert _last_user_text(tau) == "Review version one"
    assert "deploy" in _system_prompt(tau)
    assert mark.read_text() == "git\n"


def test_list_shows_what_tau_takes_and_why_a_typescript_extension_does_not_load(
    tau: TauCommand, repo: Path
) -> None:
    assert tau.run("install", _url(repo)).returncode == 0
    listed = tau.run("list")
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert lines[:2] == ["User packages:", f"  {_url(repo)}"]
    assert "    skills: skills/deploy" in lines
    assert "    prompts: prompts/review.md" in lines
    assert "    extensions: extensions/hello.py" in lines
    assert "    extensions/legacy.ts: not loadable (TypeScript)" in lines
    tau.server.add(Turn(text="ok"))
    run = tau.run(*MODEL, "-p", "hi")
    assert run.returncode == 0, run.stderr
    [warning] = [line for line in run.stderr.splitlines() if "legacy.ts" in line]
    assert warning.startswith("tau: warning: ") and "legacy.ts: not loadable (TypeScript)" in warning
    assert "tau runs Python extensions only" in warning and "docs/extensions.md" in warning


def test_update_moves_an_unpinned_git_package_and_keeps_a_pinned_ref(
    tau: TauCommand, repo: Path, tmp_path: Path
) -> None:
    moving = tmp_path / "moving"
    subprocess.run(["git", "clone", "-q", str(repo), str(moving)], check=True)
    assert tau.run("install", _url(moving)).returncode == 0
    assert tau.run("install", f"{_url(repo)}@v1").returncode == 0
    (moving / "prompts" / "review.md").write_text("Review version two")
    _git(moving, "commit", "-qam", "two")
    updated = tau.run("update")
    assert updated.returncode == 0, updated.stderr
    assert "Updated 1 package:" in updated.stdout
    assert f"  {_url(moving)} " in updated.stdout
    tau.server.add(Turn(text="ok"))
    assert tau.run(*MODEL, "-p", "/review").returncode == 0
    assert _last_user_text(tau) == "Review version two"  # the first package wins the name
    assert "Packages are already up to date" in tau.run("update").stdout
    one = tau.run("update", _url(repo))  # the ref does not matter to name the package
    assert f"{_url(repo)} is already up to date" in one.stdout, one.stderr


def test_remove_deletes_the_managed_clone_and_the_settings_entry(tau: TauCommand, repo: Path) -> None:
    assert tau.run("install", _url(repo)).returncode == 0
    clone = tau.agent_dir / "git" / "local" / Path(*repo.parts[1:])
    assert clone.is_dir()
    removed = tau.run("remove", _url(repo))
    assert removed.returncode == 0, removed.stderr
    assert removed.stdout.strip() == f"Removed {_url(repo)}"
    assert not clone.exists()
    assert "packages" not in _settings(tau)
    assert tau.run("list").stdout.strip() == "No packages installed."


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["install", "ftp:example.com/tools"], "unknown package source scheme 'ftp'"),
        (["install", "GIT@v9"], "git ref 'v9' does not exist in"),
        (["install", "pip:PIP_BROKEN"], "pip install"),
        (["remove", "npm:not-installed"], "no matching package found for npm:not-installed"),
    ],
)
def test_bad_input_is_one_line_exit_1_and_settings_unchanged(
    tau: TauCommand, repo: Path, tmp_path: Path, args: list[str], message: str
) -> None:
    broken = tmp_path / "not-a-project"
    broken.mkdir()
    args = [a.replace("GIT", _url(repo)).replace("PIP_BROKEN", str(broken)) for a in args]
    before = json.dumps({"packages": ["./kept"], "theme": "dark"}, indent=2)
    (tau.agent_dir / "settings.json").write_text(before)
    result = tau.run(*args)
    assert result.returncode == 1
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("tau: ") and message in line, line
    assert (tau.agent_dir / "settings.json").read_text() == before
    assert not (tau.agent_dir / "git").exists() or not any((tau.agent_dir / "git").rglob("SKILL.md"))


def _wheel(folder: Path) -> Path:
    """A wheel with an entry-point extension and a skill inside its import package."""
    path = folder / "tau_hello-1.0-py3-none-any.whl"
    files = {
        "tau_hello/__init__.py": "import os\n\ndef setup(tau):\n    open(os.environ['TAU_PACKAGE_MARK'], 'a').write('pip\\n')\n",
        "tau_hello/skills/greet/SKILL.md": SKILL.format(name="greet"),
        "tau_hello-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: tau-hello\nVersion: 1.0\n",
        "tau_hello-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        "tau_hello-1.0.dist-info/entry_points.txt": "[tau.extensions]\nhello = tau_hello:setup\n",
    }
    record = "".join(f"{name},,\n" for name in [*files, "tau_hello-1.0.dist-info/RECORD"])
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
        archive.writestr("tau_hello-1.0.dist-info/RECORD", record)
    return path


def test_a_pip_wheel_goes_to_the_managed_folder_and_its_entry_point_and_skill_load(
    tau: TauCommand, tmp_path: Path
) -> None:
    wheel = _wheel(tmp_path)
    installed = tau.run("install", f"pip:{wheel}", timeout=120)
    assert installed.returncode == 0, installed.stderr
    target = tau.agent_dir / "pip" / "tau-hello"
    assert (target / "tau_hello" / "__init__.py").is_file()
    site = subprocess.run(
        [sys.executable, "-c", "import importlib.util; print(importlib.util.find_spec('tau_hello'))"],
        capture_output=True,
        text=True,
    )
    assert site.stdout.strip() == "None"  # not in tau's own environment
    assert "extensions (entry points): hello" in tau.run("list").stdout
    mark = tau.work / "mark.txt"
    tau.env[MARK] = str(mark)
    tau.server.add(Turn(text="ok"))
    run = tau.run(*MODEL, "-p", "hi")
    assert run.returncode == 0, run.stderr
    assert mark.read_text() == "pip\n"
    assert "greet" in _system_prompt(tau)
    assert tau.run("remove", f"pip:{wheel}").returncode == 0
    assert not target.exists()


class _Registry(BaseHTTPRequestHandler):
    documents: ClassVar[dict[str, bytes]] = {}

    def do_GET(self) -> None:
        body = self.documents.get(unquote(self.path))
        self.send_response(200 if body is not None else 404)
        self.end_headers()
        self.wfile.write(body or b"{}")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def registry() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Registry)
    url = f"http://127.0.0.1:{server.server_address[1]}"
    files = {
        "package/package.json": json.dumps(
            {
                "name": "@demo/pi-tools",
                "version": "1.2.0",
                "pi": {
                    "extensions": ["./src/index.ts"],
                    "skills": ["./skills"],
                    "prompts": ["./prompts/*.md"],
                },
            }
        ),
        "package/src/index.ts": "export default function () {}\n",
        "package/skills/lint/SKILL.md": SKILL.format(name="lint"),
        "package/prompts/fix.md": "Fix it from npm",
    }
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    tarball = f"{url}/@demo/pi-tools/-/pi-tools-1.2.0.tgz"
    document = {
        "name": "@demo/pi-tools",
        "dist-tags": {"latest": "1.2.0"},
        "versions": {"1.2.0": {"dist": {"tarball": tarball}}},
    }
    _Registry.documents = {
        "/@demo/pi-tools": json.dumps(document).encode(),
        "/@demo/pi-tools/-/pi-tools-1.2.0.tgz": buffer.getvalue(),
    }
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield url
    server.shutdown()
    server.server_close()


def test_an_npm_pi_package_is_fetched_from_the_registry_and_its_prompt_and_skill_load(
    tau: TauCommand, registry: str
) -> None:
    tau.env["npm_config_registry"] = registry
    installed = tau.run("install", "npm:@demo/pi-tools")
    assert installed.returncode == 0, installed.stderr
    assert "src/index.ts: not loadable (TypeScript)" in installed.stdout
    assert (tau.agent_dir / "npm" / "node_modules" / "@demo" / "pi-tools" / "package.json").is_file()
    assert _settings(tau) == {"packages": ["npm:@demo/pi-tools"]}
    tau.server.add(Turn(text="ok"))
    run = tau.run(*MODEL, "-p", "/fix")
    assert run.returncode == 0, run.stderr
    assert _last_user_text(tau) == "Fix it from npm"
    assert "lint" in _system_prompt(tau)
    missing = tau.run("install", "npm:@demo/pi-tools@9.9.9")
    assert missing.returncode == 1
    assert "has no version or tag '9.9.9'" in missing.stderr


def test_a_project_package_needs_the_folders_trust_and_is_recorded_relative_to_dot_tau(
    tau: TauCommand, repo: Path
) -> None:
    (tau.work / ".tau").mkdir()
    (tau.work / ".tau" / "settings.json").write_text("{}")
    refused = tau.run("install", "-l", str(repo))
    assert refused.returncode == 1
    assert "not trusted" in refused.stderr
    assert json.loads((tau.work / ".tau" / "settings.json").read_text()) == {}
    accepted = tau.run("install", "-l", "-a", str(repo))
    assert accepted.returncode == 0, accepted.stderr
    [entry] = json.loads((tau.work / ".tau" / "settings.json").read_text())["packages"]
    assert (tau.work / ".tau" / entry).resolve() == repo.resolve()
    tau.env[MARK] = str(tau.work / "mark.txt")
    tau.server.add(Turn(text="ok"), Turn(text="ok"))
    assert tau.run(*MODEL, "-p", "/review").returncode == 0
    assert _last_user_text(tau) == "/review"  # not trusted: the project's packages stay out
    assert tau.run(*MODEL, "-a", "-p", "/review").returncode == 0
    assert _last_user_text(tau) == "Review version one"


def test_a_project_git_package_is_cloned_under_dot_tau_and_removed_from_there(
    tau: TauCommand, repo: Path
) -> None:
    installed = tau.run("install", "-l", "-a", f"{_url(repo)}@v1")
    assert installed.returncode == 0, installed.stderr
    clone = tau.work / ".tau" / "git" / "local" / Path(*repo.parts[1:])
    assert (clone / "prompts" / "review.md").is_file()
    project = tau.work / ".tau" / "settings.json"
    assert json.loads(project.read_text()) == {"packages": [f"{_url(repo)}@v1"]}
    assert not (tau.agent_dir / "git").exists() and "packages" not in _settings(tau)
    tau.env[MARK] = str(tau.work / "mark.txt")
    tau.server.add(Turn(text="ok"))
    assert tau.run(*MODEL, "-a", "-p", "/review").returncode == 0
    assert _last_user_text(tau) == "Review version one"
    removed = tau.run("remove", "-l", "-a", _url(repo))
    assert removed.returncode == 0, removed.stderr
    assert not clone.exists()
    assert "packages" not in json.loads(project.read_text())


def test_a_broken_package_is_reported_in_one_line_and_the_others_still_load(
    tau: TauCommand, repo: Path, tmp_path: Path
) -> None:
    broken = tmp_path / "broken"
    (broken / "extensions").mkdir(parents=True)
    (broken / "extensions" / "boom.py").write_text("raise RuntimeError('boom at import')\n")
    assert tau.run("install", str(broken)).returncode == 0
    assert tau.run("install", str(repo)).returncode == 0
    tau.env[MARK] = str(tau.work / "mark.txt")
    tau.server.add(Turn(text="ok"))
    run = tau.run(*MODEL, "-p", "/review")
    assert run.returncode == 0, run.stderr
    assert "boom.py" in run.stderr and "boom at import" in run.stderr
    assert _last_user_text(tau) == "Review version one"


def test_a_start_without_packages_imports_no_package_module(tau: TauCommand) -> None:
    probe = (
        "import sys\nfrom tau.cli.main import run\ncode = run(sys.argv[1:])\n"
        "print(code, sorted(m for m in sys.modules if m.startswith('tau.packages.')"
        " and m != 'tau.packages.resource_settings'))"
    )  # the resource settings (which entries switch what) are read at every start; the manager is not
    tau.server.add(Turn(text="ok"))
    run = subprocess.run(
        [sys.executable, "-c", probe, *MODEL, "-p", "hi"],
        cwd=tau.work,
        env=tau.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.stdout.strip().splitlines()[-1] == "0 []", run.stderr


def test_config_switches_a_package_skill_off_and_on_in_pis_filter_shape(tau: TauCommand, repo: Path) -> None:
    assert tau.run("install", str(repo)).returncode == 0
    off = tau.run("config", "disable", str(repo), "skills/deploy")
    assert off.returncode == 0, off.stderr
    [entry] = _settings(tau)["packages"]
    assert entry["skills"] == ["-skills/deploy/SKILL.md"]
    assert "  [ ] skill     skills/deploy/SKILL.md" in tau.run("config").stdout.splitlines()
    tau.env[MARK] = str(tau.work / "mark.txt")
    tau.server.add(Turn(text="ok"), Turn(text="ok"))
    assert tau.run(*MODEL, "-p", "hi").returncode == 0
    assert "deploy" not in _system_prompt(tau)
    assert tau.run("config", "enable", str(repo), "skills/deploy/SKILL.md").returncode == 0
    [entry] = _settings(tau)["packages"]
    assert entry["skills"] == ["+skills/deploy/SKILL.md"]
    assert tau.run(*MODEL, "-p", "hi").returncode == 0
    assert "deploy" in _system_prompt(tau)
    wrong = tau.run("config", "disable", str(repo), "skills/missing")
    assert (wrong.returncode, wrong.stderr.count("\n")) == (1, 1)


def test_a_declared_package_not_installed_is_a_warning_at_start_and_update_installs_it(
    tau: TauCommand, repo: Path
) -> None:
    (tau.agent_dir / "settings.json").write_text(json.dumps({"packages": [f"{_url(repo)}@v1"]}))
    tau.server.add(Turn(text="ok"), Turn(text="ok"))
    first = tau.run(*MODEL, "-p", "/review")
    assert first.returncode == 0, first.stderr
    assert f"package {_url(repo)}@v1 (user) is not installed; install it with: tau update" in first.stderr
    assert _last_user_text(tau) == "/review"
    updated = tau.run("update")
    assert updated.returncode == 0, updated.stderr
    assert "Updated 1 package:" in updated.stdout
    tau.env[MARK] = str(tau.work / "mark.txt")
    second = tau.run(*MODEL, "-p", "/review")
    assert "not installed" not in second.stderr
    assert _last_user_text(tau) == "Review version one"


def test_an_unreadable_settings_file_is_not_written_over_by_install(tau: TauCommand, repo: Path) -> None:
    (tau.agent_dir / "settings.json").write_text("{ not json")
    result = tau.run("install", str(repo))
    assert result.returncode == 1
    [line] = result.stderr.strip().splitlines()
    assert "settings.json" in line and "nothing was changed" in line
    assert (tau.agent_dir / "settings.json").read_text() == "{ not json"


def test_a_project_entry_with_autoload_false_overrides_only_what_it_names_in_the_users_package(
    tau: TauCommand, repo: Path
) -> None:
    user = {"source": str(repo), "prompts": []}
    (tau.agent_dir / "settings.json").write_text(json.dumps({"packages": [user]}))
    (tau.work / ".tau").mkdir()
    delta = {"source": str(repo), "autoload": False, "skills": ["-skills/deploy/SKILL.md"]}
    (tau.work / ".tau" / "settings.json").write_text(json.dumps({"packages": [delta]}))
    mark = tau.work / "mark.txt"
    tau.env[MARK] = str(mark)
    tau.server.add(Turn(text="ok"))
    run = tau.run(*MODEL, "-a", "-p", "/review")
    assert run.returncode == 0, run.stderr
    assert "deploy" not in _system_prompt(tau)  # the project's delta switched it off
    assert _last_user_text(tau) == "/review"  # the user's entry still decides the rest
    assert mark.read_text() == "git\n"  # loaded once, not once per entry


def test_a_user_entry_with_autoload_false_loads_only_what_its_patterns_switch_on(
    tau: TauCommand, repo: Path
) -> None:
    entry = {"source": str(repo), "autoload": False, "prompts": ["prompts/*.md"], "skills": ["!*"]}
    (tau.agent_dir / "settings.json").write_text(json.dumps({"packages": [entry]}))
    mark = tau.work / "mark.txt"
    tau.env[MARK] = str(mark)
    tau.server.add(Turn(text="ok"))
    run = tau.run(*MODEL, "-p", "/review")
    assert run.returncode == 0, run.stderr
    assert _last_user_text(tau) == "Review version one"
    assert "deploy" not in _system_prompt(tau)
    assert not mark.exists()  # extensions: no pattern, so none


def test_dash_e_with_a_git_source_loads_the_package_for_one_run_from_a_cache_refreshed_each_start(
    tau: TauCommand, repo: Path, tmp_path: Path
) -> None:
    moving = tmp_path / "moving"
    subprocess.run(["git", "clone", "-q", str(repo), str(moving)], check=True)
    mark = tau.work / "mark.txt"
    tau.env[MARK] = str(mark)
    tau.server.add(Turn(text="ok"), Turn(text="ok"), Turn(text="ok"))
    first = tau.run(*MODEL, "-e", _url(moving), "-p", "/review")
    assert first.returncode == 0, first.stderr
    assert _last_user_text(tau) == "Review version one"
    assert "deploy" in _system_prompt(tau)
    assert mark.read_text() == "git\n"
    assert (
        f"-e {_url(moving)}: extensions/legacy.ts: not loadable (TypeScript): tau runs Python" in first.stderr
    )
    assert not (tau.agent_dir / "settings.json").exists()  # nothing recorded
    cached = tau.agent_dir / "tmp" / "extensions" / "git" / "local" / Path(*moving.parts[1:])
    assert (cached / "prompts" / "review.md").is_file()
    (moving / "prompts" / "review.md").write_text("Review version two")
    _git(moving, "commit", "-qam", "two")
    assert tau.run(*MODEL, "-e", _url(moving), "-p", "/review").returncode == 0
    assert _last_user_text(tau) == "Review version two"
    tau.env["TAU_OFFLINE"] = "1"  # offline: the cached copy, no fetch
    (moving / "prompts" / "review.md").write_text("Review version three")
    _git(moving, "commit", "-qam", "three")
    assert tau.run(*MODEL, "-e", _url(moving), "-p", "/review").returncode == 0
    assert _last_user_text(tau) == "Review version two"
    del tau.env["TAU_OFFLINE"]
    tau.env["PI_OFFLINE"] = "1"  # pi's switch says it as well
    tau.server.add(Turn(text="ok"))
    assert tau.run(*MODEL, "-e", _url(moving), "-p", "/review").returncode == 0
    assert _last_user_text(tau) == "Review version two"


def test_dash_e_with_an_npm_source_loads_its_prompt_and_a_failing_source_is_one_warning(
    tau: TauCommand, registry: str
) -> None:
    tau.env["npm_config_registry"] = registry
    tau.server.add(Turn(text="ok"))
    run = tau.run(*MODEL, "-e", "npm:@demo/pi-tools", "-e", "npm:@demo/missing", "-p", "/fix")
    assert run.returncode == 0, run.stderr
    assert _last_user_text(tau) == "Fix it from npm"
    assert "lint" in _system_prompt(tau)
    assert (tau.agent_dir / "tmp" / "extensions" / "npm" / "node_modules" / "@demo" / "pi-tools").is_dir()
    [warning] = [
        line for line in run.stderr.splitlines() if line.startswith("tau: warning: -e npm:@demo/missing")
    ]
    assert "npm package '@demo/missing' not found" in warning and warning.endswith(
        "its resources are not loaded"
    )


def test_dash_e_with_a_local_package_folder_loads_its_skills_and_prompts_where_it_is(
    tau: TauCommand, repo: Path
) -> None:
    tau.env[MARK] = str(tau.work / "mark.txt")
    tau.server.add(Turn(text="ok"))
    run = tau.run(*MODEL, "-e", str(repo), "-p", "/review")
    assert run.returncode == 0, run.stderr
    assert _last_user_text(tau) == "Review version one"
    assert "deploy" in _system_prompt(tau)
    assert (tau.work / "mark.txt").read_text() == "git\n"
    assert not (tau.agent_dir / "tmp").exists()  # nothing copied
