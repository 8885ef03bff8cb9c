"""Finding extensions and loading them into a runner.

An extension is a Python module exposing ``setup(tau)`` (plain or ``async``):

- a ``.py`` file;
- a package folder (``__init__.py``; relative imports work);
- a folder whose ``pyproject.toml`` lists entry files: ``[tool.tau] extensions = ["pkg/entry.py"]``
  (the folder is put at the end of ``sys.path`` so the entries can import their siblings);
- an installed distribution's entry point in the group ``tau.extensions`` (``name = module:setup``),
  found in the installed environment only, never in the working folder (see ``tau._import_path``).

Discovery order (first wins on duplicates): CLI ``-e`` paths, project settings entries,
``<cwd>/.tau/extensions/``, ``<cwd>/.pi/extensions/``, user settings entries, ``<agent dir>/extensions/``, entry points.
A folder is scanned one level deep. Files and folders are imported under a new module name on
every load, so a reload gives fresh module state; entry-point modules are ordinary imports.

Nothing here raises for a bad extension: an import error, a missing ``setup`` or a ``setup``
that raises becomes one ``ExtensionDiagnostic`` naming the extension, file and line, and the
other extensions load.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import importlib.util
import inspect
import itertools
import os
import re
import sys
import threading
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, Literal, TypeAlias

from msgspec import Struct, field

from tau._import_path import add_extension_folder, installed_import_path
from tau.context.project_dirs import project_dirs
from tau.context.resources import default_agent_dir
from tau.context.settings_entries import SettingsEntries
from tau.extensions.api import ExtensionAPI
from tau.extensions.errors import (
    ExtensionDiagnostic,
    SourceLocation,
    describe_exception,
    exception_location,
)
from tau.extensions.foreign import not_loadable_reason, script_language
from tau.extensions.registry import Extension
from tau.extensions.runner import ExtensionRunner
from tau.extensions.types import FlagValue

__all__ = [
    "ENTRY_POINT_GROUP",
    "ExtensionDiscovery",
    "ExtensionSource",
    "SetupFunction",
    "discover_extensions",
    "load_extensions",
    "load_extensions_sync",
]

ENTRY_POINT_GROUP = "tau.extensions"
EXTENSIONS_DIR = "extensions"

SetupFunction: TypeAlias = Callable[[ExtensionAPI], "Awaitable[None] | None"]
SourceKind: TypeAlias = Literal["file", "package", "entry_point", "inline"]

_loads = itertools.count(1)


class ExtensionSource(Struct, frozen=True):
    """Where one extension comes from. ``target`` is an entry point's ``module:attr``; ``search_path``
    a folder to put on ``sys.path`` (``pyproject.toml`` entries); ``setup`` an inline function."""

    kind: SourceKind
    name: str
    path: str
    target: str | None = None
    search_path: str | None = None
    setup: SetupFunction | None = None

    @classmethod
    def inline(cls, name: str, setup: SetupFunction) -> ExtensionSource:
        """An extension defined in code (SDK users, tests)."""
        return cls("inline", name, f"<inline:{name}>", setup=setup)


class ExtensionDiscovery(Struct):
    sources: list[ExtensionSource] = field(default_factory=list)
    diagnostics: list[ExtensionDiagnostic] = field(default_factory=list)


# -- discovery ---------------------------------------------------------------------------------


def discover_extensions(
    cwd: str,
    agent_dir: str | None = None,
    *,
    cli_paths: Sequence[str] = (),
    project_settings_paths: Sequence[str] = (),
    user_settings_paths: Sequence[str] = (),
    include_defaults: bool = True,
    include_entry_points: bool = True,
    include_project: bool = True,
) -> ExtensionDiscovery:
    """Every extension to load, in precedence order, without importing any.

    CLI paths are relative to ``cwd``; project settings entries to ``<cwd>/.tau``, user settings
    entries to the agent dir (``~`` is expanded; globs are allowed in settings entries, and
    ``!glob`` / ``+path`` / ``-path`` entries switch off and on what that scope lists or
    discovers, see ``tau.context.settings_entries``). ``include_defaults=False``
    (``--no-extensions``) keeps only the CLI paths; ``include_project=False`` (a folder not
    trusted) leaves out ``<cwd>/.tau/extensions``, ``<cwd>/.pi/extensions`` (its Python ones; pi's
    own TypeScript ones are not read here) and the project settings entries.
    """
    cwd = os.path.abspath(cwd)
    agent = os.path.abspath(agent_dir) if agent_dir is not None else default_agent_dir()
    found = ExtensionDiscovery()
    seen: set[str] = set()

    def add(sources: Iterable[ExtensionSource], entries: SettingsEntries | None = None) -> None:
        for source in sources:
            key = os.path.realpath(source.path) if source.kind in ("file", "package") else source.path
            if key in seen:
                continue
            seen.add(key)  # switched off here means off wherever else it is found
            if entries is None or entries.enables(source.path, folder=source.search_path):
                found.sources.append(source)

    for entry in cli_paths:
        add(_explicit(os.path.normpath(os.path.join(cwd, os.path.expanduser(entry))), found.diagnostics))
    if include_defaults:
        project = project_dirs(cwd)
        scopes = [(project_settings_paths, project)] if include_project else []
        for raw, bases in (*scopes, (user_settings_paths, [agent])):
            entries = SettingsEntries.parse(raw, bases[0])
            for path in entries.paths:
                add(_explicit(path, found.diagnostics), entries)
            for base in bases:
                add(_scan_dir(os.path.join(base, EXTENSIONS_DIR), found.diagnostics), entries)
        if include_entry_points:
            add(_entry_points(cwd, found.diagnostics))
    return found


def _explicit(path: str, diagnostics: list[ExtensionDiagnostic]) -> list[ExtensionSource]:
    """A path named by the user: a file, a package, a pyproject folder, or a folder to scan."""
    language = script_language(path)
    if language is not None:
        diagnostics.append(ExtensionDiagnostic("warning", not_loadable_reason(language), path=path))
        return []
    if os.path.isfile(path):
        if not path.endswith(".py"):
            diagnostics.append(ExtensionDiagnostic("error", "not a Python file (expected .py)", path=path))
            return []
        return [ExtensionSource("file", Path(path).stem, path)]
    if os.path.isdir(path):
        folder = _folder(path, diagnostics)
        return folder if folder is not None else _scan_dir(path, diagnostics)
    diagnostics.append(ExtensionDiagnostic("error", "extension path not found", path=path))
    return []


def _folder(path: str, diagnostics: list[ExtensionDiagnostic]) -> list[ExtensionSource] | None:
    """The extensions a folder stands for, or ``None`` when it is neither a package nor a project."""
    manifest = os.path.join(path, "pyproject.toml")
    if os.path.isfile(manifest):
        entries = _manifest_entries(manifest, diagnostics)
        if entries is not None:
            sources: list[ExtensionSource] = []
            for entry in entries:
                target = os.path.normpath(os.path.join(path, entry))
                if os.path.isfile(target):
                    sources.append(ExtensionSource("file", Path(target).stem, target, search_path=path))
                elif os.path.isfile(os.path.join(target, "__init__.py")):
                    sources.append(ExtensionSource("package", Path(target).name, target, search_path=path))
                else:
                    diagnostics.append(
                        ExtensionDiagnostic("warning", f"extension entry {entry!r} not found", path=manifest)
                    )
            return sources
    if os.path.isfile(os.path.join(path, "__init__.py")):
        return [ExtensionSource("package", Path(path).name, path)]
    return None


def _manifest_entries(manifest: str, diagnostics: list[ExtensionDiagnostic]) -> list[str] | None:
    import tomllib

    try:
        with open(manifest, "rb") as f:
            data = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        diagnostics.append(ExtensionDiagnostic("error", f"cannot read pyproject.toml: {exc}", path=manifest))
        return []
    entries = data.get("tool", {}).get("tau", {}).get("extensions")
    if entries is None:
        return None
    if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
        diagnostics.append(
            ExtensionDiagnostic("error", "[tool.tau] extensions must be a list of paths", path=manifest)
        )
        return []
    return entries


def _scan_dir(path: str, diagnostics: list[ExtensionDiagnostic]) -> list[ExtensionSource]:
    """One level of a folder: ``*.py`` files, packages and pyproject folders, by name."""
    try:
        names = sorted(os.listdir(path))
    except OSError:
        return []
    sources: list[ExtensionSource] = []
    for name in names:
        if name.startswith((".", "_")):
            continue
        full = os.path.join(path, name)
        if os.path.isfile(full) and name.endswith(".py"):
            sources.append(ExtensionSource("file", name[:-3], full))
        elif (language := script_language(full)) is not None:
            diagnostics.append(ExtensionDiagnostic("warning", not_loadable_reason(language), path=full))
        elif os.path.isdir(full):
            sources.extend(_folder(full, diagnostics) or [])
    return sources


def _entry_points(cwd: str, diagnostics: list[ExtensionDiagnostic]) -> list[ExtensionSource]:
    """The ``tau.extensions`` entry points of the installed distributions: those of the installed
    environment only (``installed_import_path``), never a ``*.dist-info`` in the working folder or
    an extension's folder. The first distribution of a name wins, as ``entry_points()`` has it."""
    from importlib.metadata import EntryPoint, distributions

    found: list[EntryPoint] = []
    names: set[str] = set()
    try:
        for distribution in distributions(path=installed_import_path(cwd)):
            name = _normal_name(distribution.metadata["Name"] or "")
            if name in names:
                continue
            names.add(name)
            found.extend(point for point in distribution.entry_points if point.group == ENTRY_POINT_GROUP)
    except Exception as exc:  # a broken installed distribution must not stop startup
        diagnostics.append(ExtensionDiagnostic("error", f"cannot list installed extensions: {exc}"))
        return []
    sources: list[ExtensionSource] = []
    for point in sorted(found, key=lambda p: p.name):
        dist = getattr(point, "dist", None)
        origin = f"{dist.name} " if dist is not None else ""
        sources.append(
            ExtensionSource(
                "entry_point", point.name, f"<{origin}entry point {point.name} = {point.value}>", point.value
            )
        )
    return sources


def _normal_name(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


# -- loading -----------------------------------------------------------------------------------


class _PreparedExtension(Struct):
    extension: Extension
    setup: SetupFunction


def _module_name(source: ExtensionSource) -> str:
    digest = hashlib.sha1(os.path.realpath(source.path).encode()).hexdigest()[:10]
    return f"tau_ext_{digest}_{next(_loads)}"


def _import_file(source: ExtensionSource, runner: ExtensionRunner) -> ModuleType:
    name = _module_name(source)
    if source.kind == "package":
        spec = importlib.util.spec_from_file_location(
            name, os.path.join(source.path, "__init__.py"), submodule_search_locations=[source.path]
        )
    else:
        spec = importlib.util.spec_from_file_location(name, source.path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {source.path}")
    if source.search_path is not None:
        add_extension_folder(source.search_path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        for loaded in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
            del sys.modules[loaded]
        raise
    runner.module_names.append(name)
    return module


def _import_entry_point(source: ExtensionSource, extension: Extension) -> Any:
    assert source.target is not None
    module_name, _, attribute = source.target.partition(":")
    module = importlib.import_module(module_name.strip())
    extension.module = module
    origin = getattr(module, "__file__", None)
    if origin:
        is_package = os.path.basename(origin) == "__init__.py"
        extension.root = os.path.dirname(origin) if is_package else origin
        extension.path = origin
    target: Any = module
    for part in (attribute.strip() or "setup").split("."):
        target = getattr(target, part, None)
    return target


def _prepare(source: ExtensionSource, runner: ExtensionRunner) -> _PreparedExtension | None:
    """Import the source and find its ``setup``; a problem becomes a diagnostic (``None``)."""
    root: str | None = None
    if source.kind in ("file", "package"):
        root = source.search_path or source.path
    elif source.kind == "inline" and source.setup is not None:
        root = _defining_file(source.setup)
    extension = Extension(source.name, source.path, root)
    registry = runner.registry
    try:
        if source.kind == "inline":
            setup: Any = source.setup
        elif source.kind == "entry_point":
            setup = _import_entry_point(source, extension)
        else:
            extension.module = _import_file(source, runner)
            setup = getattr(extension.module, "setup", None)
    except (Exception, SystemExit) as exc:
        registry.diagnose(
            "error", f"failed to load: {describe_exception(exc)}", extension, exception_location(exc, root)
        )
        return None
    if not callable(setup):
        problem = "has no setup(tau) function" if setup is None else "its setup is not callable"
        registry.diagnose("error", problem, extension, SourceLocation(extension.path) if root else None)
        return None
    return _PreparedExtension(extension, setup)


def _defining_file(fn: Any) -> str | None:
    try:
        return inspect.getsourcefile(fn)
    except TypeError:
        return None


def _setup_failed(runner: ExtensionRunner, extension: Extension, exc: BaseException) -> None:
    runner.registry.diagnose(
        "error",
        f"setup(tau) failed: {describe_exception(exc)}",
        extension,
        exception_location(exc, extension.root),
    )


def _new_runner(
    cwd: str, flag_values: Mapping[str, FlagValue] | None, diagnostics: Iterable[ExtensionDiagnostic]
) -> ExtensionRunner:
    runner = ExtensionRunner(os.path.abspath(cwd), flag_values=flag_values)
    runner.registry.diagnostics.extend(diagnostics)
    return runner


def _sources(
    sources: Sequence[ExtensionSource] | ExtensionDiscovery,
) -> tuple[list[ExtensionSource], list[ExtensionDiagnostic]]:
    if isinstance(sources, ExtensionDiscovery):
        return list(sources.sources), list(sources.diagnostics)
    return list(sources), []


async def load_extensions(
    sources: Sequence[ExtensionSource] | ExtensionDiscovery,
    *,
    cwd: str,
    flag_values: Mapping[str, FlagValue] | None = None,
) -> ExtensionRunner:
    """Import each source and run its ``setup`` (awaited when async), in order; a runner with
    the extensions that loaded and a diagnostic for each that did not. ``flag_values`` carries
    the previous runner's values across a reload."""
    listed, found = _sources(sources)
    runner = _new_runner(cwd, flag_values, found)
    for source in listed:
        prepared = _prepare(source, runner)
        if prepared is None:
            continue
        try:
            outcome = prepared.setup(ExtensionAPI(runner, prepared.extension))
            if inspect.isawaitable(outcome):
                await outcome
        except (Exception, SystemExit) as exc:
            _setup_failed(runner, prepared.extension, exc)
            continue
        runner.registry.commit(prepared.extension)
    return runner


def load_extensions_sync(
    sources: Sequence[ExtensionSource] | ExtensionDiscovery,
    *,
    cwd: str,
    flag_values: Mapping[str, FlagValue] | None = None,
    into: ExtensionRunner | None = None,
) -> ExtensionRunner:
    """``load_extensions`` for synchronous callers. An ``async def setup`` runs on a private event
    loop (in a helper thread when the caller's loop is running), so it should only register.
    ``into`` adds the extensions to a runner that already has some (a folder's own extensions,
    loaded once it is trusted, join the user's that took part in the decision)."""
    listed, found = _sources(sources)
    if into is None:
        runner = _new_runner(cwd, flag_values, found)
    else:
        runner = into
        runner.registry.diagnostics.extend(found)
    for source in listed:
        prepared = _prepare(source, runner)
        if prepared is None:
            continue
        try:
            outcome = prepared.setup(ExtensionAPI(runner, prepared.extension))
            if inspect.isawaitable(outcome):
                _run_to_completion(outcome)
        except (Exception, SystemExit) as exc:
            _setup_failed(runner, prepared.extension, exc)
            continue
        runner.registry.commit(prepared.extension)
    return runner


def _run_to_completion(awaitable: Awaitable[Any]) -> None:
    async def wrapper() -> None:
        await awaitable

    coroutine: Coroutine[Any, Any, None] = wrapper()
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(coroutine)
        return
    failure: list[BaseException] = []

    def run() -> None:
        try:
            asyncio.run(coroutine)
        except BaseException as exc:
            failure.append(exc)

    thread = threading.Thread(target=run, name="tau-extension-setup")
    thread.start()
    thread.join()
    if failure:
        raise failure[0]
