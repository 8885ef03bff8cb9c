"""Discovery and loading: where extensions are found, in which order, and what a broken one does."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from tau.extensions import (
    ExtensionNotReadyError,
    ExtensionSource,
    discover_extensions,
    load_extensions,
    load_extensions_sync,
)
from tau.extensions.testing import RecordingHost


def write(path: Path, source: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source).lstrip(), encoding="utf-8")
    return path


SETUP = "def setup(tau):\n    pass\n"


def names(discovery: object) -> list[str]:
    return [s.name for s in discovery.sources]  # type: ignore[attr-defined]


def test_discovery_order_is_cli_then_project_then_user(tmp_path: Path, project: Path) -> None:
    agent = tmp_path / "agent"
    write(project / "cli_ext.py", SETUP)
    write(project / ".tau" / "from_project_settings.py", SETUP)
    write(project / ".tau" / "extensions" / "a.py", SETUP)
    write(project / ".tau" / "extensions" / "b" / "__init__.py", SETUP)
    write(
        project / ".tau" / "extensions" / "c" / "pyproject.toml",
        '[tool.tau]\nextensions = ["src/c_entry.py"]\n',
    )
    write(project / ".tau" / "extensions" / "c" / "src" / "c_entry.py", SETUP)
    write(project / ".tau" / "extensions" / "_private.py", SETUP)
    write(project / ".tau" / "extensions" / "notes.txt", "not an extension")
    write(agent / "from_user_settings.py", SETUP)
    write(agent / "extensions" / "user_ext.py", SETUP)

    found = discover_extensions(
        str(project),
        str(agent),
        cli_paths=["cli_ext.py"],
        project_settings_paths=["from_project_settings.py"],
        user_settings_paths=["from_user_settings.py"],
        include_entry_points=False,
    )

    assert found.diagnostics == []
    assert names(found) == [
        "cli_ext",
        "from_project_settings",
        "a",
        "b",
        "c_entry",
        "from_user_settings",
        "user_ext",
    ]
    kinds = {s.name: s.kind for s in found.sources}
    assert kinds["b"] == "package"


def test_the_same_file_reached_twice_is_loaded_once(tmp_path: Path, project: Path) -> None:
    ext = write(project / ".tau" / "extensions" / "a.py", SETUP)
    found = discover_extensions(
        str(project), str(tmp_path / "agent"), cli_paths=[str(ext)], include_entry_points=False
    )
    assert names(found) == ["a"]


def test_no_extensions_keeps_only_cli_paths(tmp_path: Path, project: Path) -> None:
    write(project / ".tau" / "extensions" / "a.py", SETUP)
    write(project / "mine.py", SETUP)
    found = discover_extensions(
        str(project), str(tmp_path / "agent"), cli_paths=["mine.py"], include_defaults=False
    )
    assert names(found) == ["mine"]


def test_a_missing_cli_path_is_a_diagnostic(tmp_path: Path, project: Path) -> None:
    found = discover_extensions(
        str(project), str(tmp_path / "agent"), cli_paths=["nope.py"], include_entry_points=False
    )
    assert found.sources == []
    assert [d.message for d in found.diagnostics] == ["extension path not found"]
    assert found.diagnostics[0].path == str(project / "nope.py")


def test_settings_entries_may_be_globs(tmp_path: Path, project: Path) -> None:
    write(project / ".tau" / "more" / "one.py", SETUP)
    write(project / ".tau" / "more" / "two.py", SETUP)
    found = discover_extensions(
        str(project),
        str(tmp_path / "agent"),
        project_settings_paths=["more/*.py"],
        include_entry_points=False,
    )
    assert names(found) == ["one", "two"]


def test_a_minus_path_switches_off_a_discovered_pyproject_folder_and_its_entries(
    tmp_path: Path, project: Path
) -> None:
    write(
        project / ".tau" / "extensions" / "tools" / "pyproject.toml",
        '[tool.tau]\nextensions = ["a.py", "b.py"]\n',
    )
    write(project / ".tau" / "extensions" / "tools" / "a.py", SETUP)
    write(project / ".tau" / "extensions" / "tools" / "b.py", SETUP)
    write(project / ".tau" / "extensions" / "kept.py", SETUP)
    found = discover_extensions(
        str(project),
        str(tmp_path / "agent"),
        project_settings_paths=["-extensions/tools"],
        include_entry_points=False,
    )
    assert names(found) == ["kept"]
    assert found.diagnostics == []


def test_the_projects_switches_leave_the_users_extensions_alone(tmp_path: Path, project: Path) -> None:
    write(project / ".tau" / "extensions" / "mine.py", SETUP)
    write(tmp_path / "agent" / "extensions" / "theirs.py", SETUP)
    found = discover_extensions(
        str(project), str(tmp_path / "agent"), project_settings_paths=["!*.py"], include_entry_points=False
    )
    assert names(found) == ["theirs"]


async def test_extensions_load_in_discovery_order_with_packages_and_relative_imports(
    tmp_path: Path, project: Path
) -> None:
    write(
        project / ".tau" / "extensions" / "a.py",
        'def setup(tau):\n    tau.register_command("a", lambda args, ctx: None)\n',
    )
    write(project / ".tau" / "extensions" / "b" / "helper.py", 'NAME = "b-from-helper"\n')
    write(
        project / ".tau" / "extensions" / "b" / "__init__.py",
        """
        from .helper import NAME

        def setup(tau):
            tau.register_command(NAME, lambda args, ctx: None)
        """,
    )
    write(project / ".tau" / "extensions" / "c" / "pyproject.toml", '[tool.tau]\nextensions = ["entry.py"]\n')
    write(project / ".tau" / "extensions" / "c" / "c_helper_mod.py", 'NAME = "c-from-sibling"\n')
    write(
        project / ".tau" / "extensions" / "c" / "entry.py",
        """
        from c_helper_mod import NAME

        def setup(tau):
            tau.register_command(NAME, lambda args, ctx: None)
        """,
    )
    found = discover_extensions(str(project), str(tmp_path / "agent"), include_entry_points=False)
    runner = await load_extensions(found, cwd=str(project))
    try:
        assert runner.diagnostics == []
        assert [e.name for e in runner.extensions] == ["a", "b", "entry"]
        assert list(runner.commands) == ["a", "b-from-helper", "c-from-sibling"]
    finally:
        runner.dispose()
        sys.modules.pop("c_helper_mod", None)


async def test_import_failure_is_one_diagnostic_with_file_and_line_and_loading_goes_on(
    write_extension, project: Path
) -> None:
    broken = write_extension("broken.py", "x = 1\ny = 1 / 0\n\ndef setup(tau):\n    pass\n")
    bad_syntax = write_extension("bad_syntax.py", "def setup(tau:\n    pass\n")
    good = write_extension("good.py", 'def setup(tau):\n    tau.register_command("ok", lambda a, c: None)\n')
    sources = [ExtensionSource("file", p.stem, str(p)) for p in (broken, bad_syntax, good)]

    runner = await load_extensions(sources, cwd=str(project))

    assert [e.name for e in runner.extensions] == ["good"]
    first, second = runner.diagnostics
    assert (first.extension, first.path, first.line) == ("broken", str(broken), 2)
    assert "ZeroDivisionError" in first.message and first.type == "error"
    assert (second.extension, second.path, second.line) == ("bad_syntax", str(bad_syntax), 1)
    assert "SyntaxError" in second.message
    assert str(first).startswith(f"{broken}:2: extension 'broken': failed to load")
    runner.dispose()


async def test_a_module_without_setup_is_reported(write_extension, project: Path) -> None:
    path = write_extension("nosetup.py", "VALUE = 1\n")
    runner = await load_extensions([ExtensionSource("file", "nosetup", str(path))], cwd=str(project))
    assert runner.extensions == []
    assert runner.diagnostics[0].message == "has no setup(tau) function"
    assert runner.diagnostics[0].path == str(path)


async def test_setup_raising_names_the_line_and_drops_the_extension(write_extension, project: Path) -> None:
    path = write_extension(
        "explodes.py",
        """
        def setup(tau):
            tau.register_command("half", lambda a, c: None)
            raise RuntimeError("no config file")
        """,
    )
    runner = await load_extensions([ExtensionSource("file", "explodes", str(path))], cwd=str(project))
    assert runner.extensions == [] and runner.commands == {}
    (diagnostic,) = runner.diagnostics
    assert diagnostic.line == 3
    assert diagnostic.message == "setup(tau) failed: RuntimeError: no config file"


async def test_async_setup_is_awaited(write_extension, project: Path) -> None:
    path = write_extension(
        "later.py",
        """
        import asyncio

        async def setup(tau):
            await asyncio.sleep(0)
            tau.register_command("later", lambda a, c: None)
        """,
    )
    runner = await load_extensions([ExtensionSource("file", "later", str(path))], cwd=str(project))
    assert list(runner.commands) == ["later"]
    runner.dispose()


def test_sync_loading_runs_async_setup_without_a_running_loop(write_extension, project: Path) -> None:
    path = write_extension(
        "later.py",
        "async def setup(tau):\n    tau.register_command('later', lambda a, c: None)\n",
    )
    runner = load_extensions_sync([ExtensionSource("file", "later", str(path))], cwd=str(project))
    assert list(runner.commands) == ["later"]
    runner.dispose()


async def test_sync_loading_runs_async_setup_inside_a_running_loop(write_extension, project: Path) -> None:
    path = write_extension(
        "later.py",
        "async def setup(tau):\n    tau.register_command('later', lambda a, c: None)\n",
    )
    runner = load_extensions_sync([ExtensionSource("file", "later", str(path))], cwd=str(project))
    assert list(runner.commands) == ["later"]
    runner.dispose()


async def test_session_actions_in_setup_raise_not_ready_while_registration_works(project: Path) -> None:
    seen: list[str] = []

    def setup(tau):  # type: ignore[no-untyped-def]
        tau.register_command("fine", lambda a, c: None)
        try:
            tau.send_message({"customType": "x", "content": "hi"})
        except ExtensionNotReadyError as exc:
            seen.append(str(exc))

    runner = await load_extensions([ExtensionSource.inline("early", setup)], cwd=str(project))
    assert list(runner.commands) == ["fine"]
    assert seen and "not initialised" in seen[0] and "tau.send_message()" in seen[0]
    runner.bind(RecordingHost(str(project)))
    runner.extensions  # noqa: B018 - still loaded
    runner.dispose()


async def test_reload_gives_fresh_module_state(write_extension, project: Path) -> None:
    path = write_extension(
        "counter.py",
        """
        COUNT = 0

        def setup(tau):
            global COUNT
            COUNT += 1
            tau.register_command(f"count{COUNT}", lambda a, c: None)
        """,
    )
    source = ExtensionSource("file", "counter", str(path))
    first = await load_extensions([source], cwd=str(project))
    first_module = first.extensions[0].module
    first.dispose()
    second = await load_extensions([source], cwd=str(project), flag_values=first.flag_values)

    assert list(first.commands) == ["count1"]
    assert list(second.commands) == ["count1"]
    assert second.extensions[0].module is not first_module
    assert first_module is not None and first_module.__name__ not in sys.modules
    second.dispose()


async def test_reload_keeps_flag_values(write_extension, project: Path) -> None:
    path = write_extension(
        "flags.py", 'def setup(tau):\n    tau.register_flag("plan", type=bool, default=False)\n'
    )
    source = ExtensionSource("file", "flags", str(path))
    first = await load_extensions([source], cwd=str(project))
    assert first.apply_flag_values({"plan": True}) == []
    first.dispose()
    second = await load_extensions([source], cwd=str(project), flag_values=first.flag_values)
    assert second.flag_values["plan"] is True
    second.dispose()


async def test_entry_points_of_installed_distributions_are_discovered(
    tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    write(
        site / "fake_tau_plugin.py",
        'def setup(tau):\n    tau.register_command("from-dist", lambda a, c: None)\n',
    )
    dist_info = site / "fake_tau_plugin-1.0.dist-info"
    write(dist_info / "METADATA", "Metadata-Version: 2.1\nName: fake-tau-plugin\nVersion: 1.0\n")
    write(dist_info / "entry_points.txt", "[tau.extensions]\nfake = fake_tau_plugin:setup\n")
    monkeypatch.syspath_prepend(str(site))

    found = discover_extensions(str(project), str(tmp_path / "agent"))
    fake = [s for s in found.sources if s.kind == "entry_point" and s.name == "fake"]
    assert len(fake) == 1 and "fake-tau-plugin" in fake[0].path

    runner = await load_extensions(fake, cwd=str(project))
    try:
        assert list(runner.commands) == ["from-dist"]
        assert runner.extensions[0].path == str(site / "fake_tau_plugin.py")
    finally:
        runner.dispose()
        sys.modules.pop("fake_tau_plugin", None)


async def test_a_broken_entry_point_is_a_diagnostic(
    tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    dist_info = site / "broken_plugin-1.0.dist-info"
    write(dist_info / "METADATA", "Metadata-Version: 2.1\nName: broken-plugin\nVersion: 1.0\n")
    write(dist_info / "entry_points.txt", "[tau.extensions]\nbroken = no_such_module_for_tau:setup\n")
    monkeypatch.syspath_prepend(str(site))
    found = discover_extensions(str(project), str(tmp_path / "agent"))
    runner = await load_extensions([s for s in found.sources if s.name == "broken"], cwd=str(project))
    assert runner.extensions == []
    assert "ModuleNotFoundError" in runner.diagnostics[0].message
    assert runner.diagnostics[0].extension == "broken"
