"""Finding and loading the extensions of a working directory, for ``AgentSessionServices``.

Importing the extension machinery costs more than a whole ``tau --version``, so it is imported
only when there is something to load. ``might_have_extensions`` answers that from the file
system alone: ``-e`` paths, ``extensions`` entries in the settings, a ``.py`` file or a folder in
``<cwd>/.tau/extensions/``, ``<cwd>/.pi/extensions/`` or ``<agent dir>/extensions/``, or an installed distribution
declaring the ``tau.extensions`` entry-point group. It may say yes when the loader then finds
nothing usable (a folder that is not a package, say); it never says no when the loader would
find something. A folder not trusted (``include_project=False``) contributes nothing.

The built-in MCP support (``tau.mcp``) is one more extension, loaded only when an ``mcp.json``
exists (``<agent dir>/mcp.json``, or a trusted project's ``.tau/mcp.json`` or ``.pi/mcp.json``) and
neither ``--no-mcp``, ``--no-extensions`` nor a ``-builtin:mcp`` settings entry switches it off;
without one, nothing of it is imported.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tau._import_path import installed_import_path
from tau.config.settings import SettingsManager, SettingsScope
from tau.config.tool_selection import is_tool_modifier, tool_name_matcher
from tau.context.project_dirs import project_dirs
from tau.packages.resource_settings import settings_entries_source
from tau.runtime.builtin_extensions import (
    TAU_BUILTINS,
    builtin_enabled,
    builtin_entry_problems,
    builtin_name,
    missing_builtin,
    without_builtin_entries,
)

if TYPE_CHECKING:
    from tau.extensions.errors import ExtensionDiagnostic
    from tau.extensions.loader import ExtensionDiscovery
    from tau.extensions.runner import ExtensionRunner
    from tau.extensions.types import ToolDefinition
    from tau.mcp.codemode_loadout import CodemodePresentation

__all__ = ["ExtensionOptions", "load_extension_runner", "might_have_extensions"]

EXTENSIONS_DIR = "extensions"
ENTRY_POINT_SECTION = b"[tau.extensions]"


class ExtensionOptions:
    """CLI choices about extensions. ``paths`` (``-e``) should be absolute; they load even with
    ``no_extensions`` (``-ne``), which turns discovery off (and pi's built-ins, but those named by
    a ``builtin:<name>`` path). ``flag_values`` are the command line's
    unknown ``--name[=value]`` flags, for the flags extensions register. (A plain class: a
    dataclass would cost every start-up most of a millisecond.)"""

    __slots__ = (
        "builtins",
        "flag_values",
        "interactive",
        "mcp_servers",
        "no_extensions",
        "no_mcp",
        "paths",
        "tools",
    )

    def __init__(
        self,
        *,
        paths: Sequence[str] = (),
        no_extensions: bool = False,
        flag_values: Mapping[str, str | bool] | None = None,
        no_mcp: bool = False,
        mcp_servers: Mapping[str, Mapping[str, Any]] | None = None,
        tools: Sequence[str] = (),
        interactive: bool = False,
    ) -> None:
        # ``builtin:<name>`` paths turn on one of pi's built-in extensions (``builtin_extensions``).
        self.paths: tuple[str, ...] = tuple(p for p in paths if builtin_name(p) is None)
        self.builtins: tuple[str, ...] = tuple(n for p in paths if (n := builtin_name(p)) is not None)
        self.no_extensions = no_extensions
        self.no_mcp = no_mcp
        # More MCP servers for the session, as mcp.json entries by name (an editor's, over ACP).
        self.mcp_servers: dict[str, Mapping[str, Any]] = dict(mcp_servers or {})
        self.flag_values: dict[str, str | bool] = dict(flag_values or {})
        # ``--tools`` entries: naming ``codemode`` (``+codemode``) loads the built-in codemode extension.
        self.tools: tuple[str, ...] = tuple(tools)
        # The terminal UI: the llama.cpp built-in loads for its /llama even when no router is configured.
        self.interactive = interactive


def _settings_entries(settings: SettingsManager) -> tuple[Sequence[str], Sequence[str]]:
    """The ``extensions`` entries of the project and the user settings."""
    entries = settings_entries_source(settings)
    return (
        without_builtin_entries(entries("extensions", "project")),
        without_builtin_entries(entries("extensions", "user")),
    )


def _raw_extension_entries(settings: SettingsManager, include_project: bool) -> tuple[list[str], list[str]]:
    """The ``extensions`` arrays as written (built-in entries included), project's and user's."""

    def strings(scope: SettingsScope) -> list[str]:
        value = settings.get_scope(scope).get("extensions")
        return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []

    return (strings("project") if include_project else []), strings("global")


def builtin_switches(
    settings: SettingsManager, options: ExtensionOptions, *, include_project: bool
) -> dict[str, bool]:
    """Whether each of tau's built-ins (``mcp``, ``codemode``, ``tool-search``) is on."""
    project, user = _raw_extension_entries(settings, include_project)
    return {
        name: builtin_enabled(
            name, project, user, explicit=options.builtins, no_extensions=options.no_extensions
        )
        for name in TAU_BUILTINS
    }


def _has_candidates(folder: str) -> bool:
    try:
        with os.scandir(folder) as found:
            entries = [(e.name, e.is_dir()) for e in found if not e.name.startswith((".", "_"))]
    except OSError:
        return False
    if not entries:
        return False
    # A folder with entries: only then is anything of tau.extensions imported.
    from tau.extensions.foreign import SCRIPT_SUFFIXES

    # A Python extension to load, or a script to report as not loadable.
    return any(is_dir or name.endswith((".py", *SCRIPT_SUFFIXES)) for name, is_dir in entries)


def _has_installed_extensions(cwd: str) -> bool:
    """Whether an installed distribution (``installed_import_path``: never one in the working folder)
    declares ``tau.extensions`` entry points. Reading the ``entry_points.txt`` files directly takes
    under a millisecond; ``importlib.metadata`` takes ten."""
    for entry in installed_import_path(cwd):
        try:
            listing = os.scandir(entry)
        except OSError:
            continue
        with listing:
            for item in listing:
                if not item.name.endswith((".dist-info", ".egg-info")):
                    continue
                try:
                    with open(os.path.join(item.path, "entry_points.txt"), "rb") as f:
                        if ENTRY_POINT_SECTION in f.read():
                            return True
                except OSError:
                    continue
    return False


MCP_BUILTIN_PATH = "<builtin:mcp>"
"""The path the built-in MCP extension is loaded under."""


def _has_mcp_config(
    cwd: str, agent_dir: str, options: ExtensionOptions, include_project: bool, settings: SettingsManager
) -> bool:
    """Whether the built-in MCP extension should load (three ``stat`` calls; see the module docstring).
    ``"extensions": ["-builtin:mcp"]`` in the settings switches it off, as in pi (a project's entry
    over the user's), and so does ``--no-extensions`` unless ``-e builtin:mcp`` is given."""
    if options.no_mcp:
        return False
    if options.no_extensions and "mcp" not in options.builtins:
        return False
    found = (
        bool(options.mcp_servers)
        or os.path.exists(os.path.join(agent_dir, "mcp.json"))
        or (
            include_project
            and any(os.path.exists(os.path.join(folder, "mcp.json")) for folder in project_dirs(cwd))
        )
    )
    return found and builtin_switches(settings, options, include_project=include_project)["mcp"]


def _builtin_problems(
    settings: SettingsManager, options: ExtensionOptions, include_project: bool
) -> list[str]:
    """A line per built-in the settings or ``-e builtin:<name>`` turn on that tau lacks."""
    project, user = _raw_extension_entries(settings, include_project)
    problems = builtin_entry_problems([*project, *user])
    return problems + [
        f"-e builtin:{name}: {why}" for name in options.builtins if (why := missing_builtin(name)) is not None
    ]


def _wants_codemode(settings: SettingsManager, options: ExtensionOptions, include_project: bool) -> bool:
    """Whether the built-in codemode extension loads without MCP: ``codemode`` is named by
    ``--tools``, ``defaultTools`` or ``-e builtin:codemode``, and the built-in is not switched off."""
    return _wants_builtin("codemode", "codemode", settings, options, include_project)


def _codemode_presentation(settings: SettingsManager) -> CodemodePresentation:
    """The ``codemode`` setting (``mode``, ``inlineBudget``) the ``codemode`` tool follows."""
    from tau.mcp.codemode_loadout import CodemodePresentation

    return CodemodePresentation.from_setting(settings.get("codemode"))


def _wants_tool_search(settings: SettingsManager, options: ExtensionOptions, include_project: bool) -> bool:
    """Whether the built-in tool-search extension loads (without MCP, whose own ``tool_search``
    serves otherwise): ``tool_search`` is named by ``--tools``, ``defaultTools`` or
    ``-e builtin:tool-search``, and the built-in is not switched off."""
    return _wants_builtin("tool-search", "tool_search", settings, options, include_project)


def _selects(entries: Sequence[object], tool: str) -> bool:
    """Whether a tool list names ``tool``: as ``+tool``, or by a plain name or ``*`` pattern
    (``--tools '*'`` turns codemode and tool_search on, as in pi, whose built-ins always register them)."""
    strings = [entry for entry in entries if isinstance(entry, str)]
    if any(entry == f"+{tool}" for entry in strings):
        return True
    return tool_name_matcher(entry for entry in strings if not is_tool_modifier(entry))(tool)


def _wants_builtin(
    builtin: str, tool: str, settings: SettingsManager, options: ExtensionOptions, include_project: bool
) -> bool:
    named = builtin in options.builtins or _selects(options.tools, tool)
    if not named:
        scopes: tuple[SettingsScope, ...] = ("project", "global") if include_project else ("global",)
        for scope in scopes:
            value = settings.get_scope(scope).get("defaultTools")
            # ``defaultTools`` holds names: ``["*"]`` selects no tool in pi 1.6.
            if isinstance(value, list) and any(isinstance(t, str) and t.lstrip("+") == tool for t in value):
                named = True
    return named and builtin_switches(settings, options, include_project=include_project)[builtin]


def llama_connection(agent_dir: str) -> tuple[str | None, str | None]:
    """The llama.cpp router's URL and key, as pi finds them: an ``auth.json`` ``llama.cpp``
    credential (``/login llama.cpp``: its ``env.LLAMA_BASE_URL`` and key) over ``LLAMA_BASE_URL`` /
    ``LLAMA_API_KEY``. The URL is ``None`` when neither names one."""
    credential: dict[str, Any] = {}
    path = os.path.join(agent_dir, "auth.json")
    if os.path.exists(path):
        from tau.accounts.auth_storage import AuthStorage

        stored = AuthStorage(Path(path)).get("llama.cpp")
        if isinstance(stored, dict) and stored.get("type") == "api_key":
            credential = stored
    found = credential.get("env")
    env: dict[str, Any] = found if isinstance(found, dict) else {}
    url = str(env.get("LLAMA_BASE_URL") or os.environ.get("LLAMA_BASE_URL") or "").strip() or None
    key = credential.get("key") if isinstance(credential.get("key"), str) else None
    return url, (key or os.environ.get("LLAMA_API_KEY") or None)


def _llama_wanted(
    agent_dir: str, settings: SettingsManager, options: ExtensionOptions, include_project: bool
) -> bool:
    """Whether the llama.cpp built-in loads: it is on, and a router is configured or the terminal
    UI runs (for ``/llama``). Without either, nothing of it is imported."""
    if options.no_extensions and "llama.cpp" not in options.builtins:
        return False
    wanted = (
        "llama.cpp" in options.builtins
        or options.interactive
        or bool(os.environ.get("LLAMA_BASE_URL"))
        or _auth_names_llama(agent_dir)
    )
    return wanted and builtin_switches(settings, options, include_project=include_project)["llama.cpp"]


def _auth_names_llama(agent_dir: str) -> bool:
    """A cheap look for a ``llama.cpp`` credential (the file is parsed only when it names one)."""
    try:
        with open(os.path.join(agent_dir, "auth.json"), "rb") as f:
            return b'"llama.cpp"' in f.read()  # bytes: a file that is not UTF-8 is reported later
    except OSError:
        return False


def might_have_extensions(
    cwd: str,
    agent_dir: str,
    settings: SettingsManager,
    options: ExtensionOptions,
    *,
    include_project: bool = True,
) -> bool:
    """Whether loading could find an extension (see the module docstring)."""
    if options.paths or _has_mcp_config(cwd, agent_dir, options, include_project, settings):
        return True
    if _wants_codemode(settings, options, include_project) or _wants_tool_search(
        settings, options, include_project
    ):
        return True
    if _llama_wanted(agent_dir, settings, options, include_project):
        return True
    if _builtin_problems(settings, options, include_project):
        return True  # nothing to load, but lines to report
    if options.no_extensions:
        return False
    project, user = _settings_entries(settings)
    return bool(
        (include_project and project)
        or user
        or (
            include_project
            and any(_has_candidates(os.path.join(folder, EXTENSIONS_DIR)) for folder in project_dirs(cwd))
        )
        or _has_candidates(os.path.join(agent_dir, EXTENSIONS_DIR))
        or _has_installed_extensions(cwd)
    )


def load_extension_runner(
    cwd: str,
    agent_dir: str,
    settings: SettingsManager,
    options: ExtensionOptions,
    *,
    flag_values: Mapping[str, Any] | None = None,
    include_project: bool = True,
    preloaded: ExtensionRunner | None = None,
) -> tuple[ExtensionRunner | None, list[ExtensionDiagnostic]]:
    """A runner with the extensions of ``cwd`` (``None`` when there are none) and the problems
    found while loading them. ``flag_values`` carries a previous runner's values over a reload;
    ``include_project=False`` leaves the project's own extensions out (a folder not trusted).
    ``preloaded`` holds the user's and ``-e`` extensions, loaded already to decide trust
    (``project_trust``); only what it lacks is loaded, into it."""
    if preloaded is not None:
        return _complete(preloaded, cwd, agent_dir, settings, options, include_project=include_project)
    if not might_have_extensions(cwd, agent_dir, settings, options, include_project=include_project):
        return None, []
    from tau.extensions.errors import ExtensionDiagnostic
    from tau.extensions.loader import discover_extensions, load_extensions_sync

    project, user = _settings_entries(settings)
    discovery = discover_extensions(
        cwd,
        agent_dir,
        cli_paths=options.paths,
        project_settings_paths=project,
        user_settings_paths=user,
        include_defaults=not options.no_extensions,
        include_entry_points=not options.no_extensions and _has_installed_extensions(cwd),
        include_project=include_project,
    )
    discovery.diagnostics += [
        ExtensionDiagnostic("warning", problem)
        for problem in _builtin_problems(settings, options, include_project)
    ]
    slot: list[ToolDefinition] = []
    has_mcp = _has_mcp_config(cwd, agent_dir, options, include_project, settings)
    if has_mcp:
        from tau.mcp.extension import mcp_extension_source

        switches = builtin_switches(settings, options, include_project=include_project)
        discovery.sources.append(
            mcp_extension_source(
                cwd,
                agent_dir,
                include_project=include_project,
                extra=options.mcp_servers,
                codemode=switches["codemode"],
                tool_search=switches["tool-search"],
                codemode_slot=slot,
                codemode_presentation=_codemode_presentation(settings),
            )
        )
    if (has_mcp and switches["codemode"]) or _wants_codemode(settings, options, include_project):
        from tau.mcp.codemode_builtin import codemode_extension_source

        discovery.sources.append(codemode_extension_source(slot, _codemode_presentation(settings)))
    if not has_mcp and _wants_tool_search(settings, options, include_project):
        from tau.mcp.tool_search import tool_search_extension_source

        discovery.sources.append(tool_search_extension_source())
    if _llama_wanted(agent_dir, settings, options, include_project):
        from tau.llama_cpp.extension import llama_extension_source

        server_url, api_key = llama_connection(agent_dir)
        discovery.sources.append(
            llama_extension_source(
                server_url,
                api_key,
                interactive=options.interactive,
                offline=bool(os.environ.get("TAU_OFFLINE") or os.environ.get("PI_OFFLINE")),
            )
        )
    if not discovery.sources:
        return None, list(discovery.diagnostics)
    runner = load_extensions_sync(discovery, cwd=cwd, flag_values=flag_values)
    _connect_registered_mcp(runner, cwd, agent_dir, settings, options, include_project=include_project)
    return runner, runner.diagnostics


def _connect_registered_mcp(
    runner: ExtensionRunner,
    cwd: str,
    agent_dir: str,
    settings: SettingsManager,
    options: ExtensionOptions,
    *,
    include_project: bool,
) -> None:
    """Give extensions' MCP servers (``tau.register_mcp_server``) a connector when no ``mcp.json``
    brought in the built-in MCP support: the support itself when some were registered in ``setup``,
    else a way to load it once one is registered later (``runner.mcp_connector``), so that a
    session without MCP servers never imports it. With the support
    switched off, each server registered in ``setup`` is reported (later ones when registered)."""
    if any(e.path == MCP_BUILTIN_PATH for e in runner.extensions):
        return
    switches = builtin_switches(settings, options, include_project=include_project)
    switched_on = not options.no_mcp and switches["mcp"]

    def connect() -> None:
        from tau.extensions.loader import load_extensions_sync
        from tau.mcp.extension import mcp_extension_source

        source = mcp_extension_source(
            cwd,
            agent_dir,
            include_project=include_project,
            extra=options.mcp_servers,
            codemode=switches["codemode"],
            tool_search=switches["tool-search"],
            codemode_presentation=_codemode_presentation(settings),
        )
        load_extensions_sync([source], cwd=cwd, into=runner)

    if switched_on and not runner.registry.mcp_servers:
        runner.mcp_connector = connect  # loaded when an extension first registers a server
        return
    if not switched_on:
        from tau.extensions.errors import ExtensionDiagnostic

        runner.registry.diagnostics += [
            ExtensionDiagnostic(
                "error",
                f"MCP server {server.name!r} is registered but nothing connects it "
                "(the built-in MCP support is off: -builtin:mcp or --no-mcp)",
                path=server.extension_path,
            )
            for server in runner.registry.mcp_servers.values()
        ]
        return
    connect()


def _complete(
    runner: ExtensionRunner,
    cwd: str,
    agent_dir: str,
    settings: SettingsManager,
    options: ExtensionOptions,
    *,
    include_project: bool,
) -> tuple[ExtensionRunner, list[ExtensionDiagnostic]]:
    """``runner`` with the project's extensions added when the folder turned out trusted: what a
    discovery with the project finds beyond the one without it."""
    if include_project and might_have_extensions(cwd, agent_dir, settings, options, include_project=True):
        before = _discover(cwd, agent_dir, settings, options, include_project=False)
        after = _discover(cwd, agent_dir, settings, options, include_project=True)
        seen = {source.path for source in before.sources}
        reported = {str(d) for d in before.diagnostics}
        after.sources = [source for source in after.sources if source.path not in seen]
        after.diagnostics = [d for d in after.diagnostics if str(d) not in reported]
        if after.sources or after.diagnostics:
            from tau.extensions.loader import load_extensions_sync

            load_extensions_sync(after, cwd=cwd, into=runner)
    _connect_registered_mcp(runner, cwd, agent_dir, settings, options, include_project=include_project)
    return runner, runner.diagnostics


def _discover(
    cwd: str, agent_dir: str, settings: SettingsManager, options: ExtensionOptions, *, include_project: bool
) -> ExtensionDiscovery:
    from tau.extensions.loader import discover_extensions

    project, user = _settings_entries(settings)
    return discover_extensions(
        cwd,
        agent_dir,
        cli_paths=options.paths,
        project_settings_paths=project,
        user_settings_paths=user,
        include_defaults=not options.no_extensions,
        include_entry_points=not options.no_extensions and _has_installed_extensions(cwd),
        include_project=include_project,
    )
