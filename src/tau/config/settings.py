"""Settings: ``<agent dir>/settings.json`` (global) under ``<cwd>/.tau/settings.json`` (project).

pi's ``<cwd>/.pi/settings.json`` is read too, as the project's lowest file: ``.tau/``'s keys lie over
its keys as the project's lie over the global ones. It is never written.

The effective view is the global file with the project file laid over it: a top-level value from the
project wins, and an object present in both is merged one level deep (``{**global[k], **project[k]}``),
exactly as pi does. Keys and defaults are pi's, so a pi user's settings.json works unchanged; keys
tau does not know are kept and written back untouched.

Setters change one scope (global unless told otherwise) and persist at once through ``update``:
under the file's lock the current file is re-read, only the changed key (or nested key, or the list
entry ``update``'s function edits) is replaced, and the result is written atomically, so edits made
meanwhile by another process or by hand survive; nothing read earlier is written back whole. A file that
fails to parse is reported (``drain_errors()``), treated as empty, and never written; a value of the
wrong type is reported too (``settings_schema``) and the default used instead.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias, TypeVar, cast

from msgspec import Struct

from tau._shared_file import dump_json
from tau.ai.thinking import THINKING_LEVELS
from tau.compaction.settings import CompactionSettings
from tau.config.config_errors import ConfigError, read_json_file
from tau.config.paths import (
    LockTimeoutError,
    agent_dir,
    forget_old_lock_file,
    pi_project_settings_path,
    project_settings_path,
    settings_path,
    update_json_file,
)
from tau.config.settings_schema import parse_timeout_ms, settings_problems
from tau.config.tool_selection import merge_default_tools, resolve_default_tools

if TYPE_CHECKING:  # not at run time: ``tau --help`` reads the settings without the model types
    from tau.ai.types import JsonObject, ThinkingLevelOrOff

__all__ = [
    "CompactionSettings",
    "QueueMode",
    "RetrySettings",
    "SettingsError",
    "SettingsManager",
    "SettingsScope",
    "deep_merge_settings",
    "migrate_settings",
]

_R = TypeVar("_R")
SettingsScope: TypeAlias = Literal["global", "project"]
QueueMode: TypeAlias = Literal["all", "one-at-a-time"]
Transport: TypeAlias = Literal["sse", "websocket", "websocket-cached", "auto"]
ToolExecutionMode: TypeAlias = Literal["parallel", "sequential"]
DoubleEscapeAction: TypeAlias = Literal["tree", "fork", "none"]
TreeFilterMode: TypeAlias = Literal["default", "no-tools", "user-only", "labeled-only", "all"]

_QUEUE_MODES: Final = ("all", "one-at-a-time")
_TRANSPORTS: Final = ("sse", "websocket", "websocket-cached", "auto")
_TOOL_EXECUTION_MODES: Final = ("parallel", "sequential")
_DOUBLE_ESCAPE_ACTIONS: Final = ("tree", "fork", "none")
_TREE_FILTER_MODES: Final = ("default", "no-tools", "user-only", "labeled-only", "all")


class SettingsError(Struct, frozen=True):
    """A settings file that could not be read or written, and which scope it belongs to."""

    scope: SettingsScope
    error: ConfigError


class RetrySettings(Struct, frozen=True):
    """Agent-level retries (``retry.*``) and the provider client's own limits (``retry.provider.*``).

    ``provider_timeout_ms`` / ``provider_max_retries`` / ``provider_idle_timeout_ms`` are ``None``
    when unset (the session's defaults apply); ``provider_max_retry_delay_ms`` caps a server's
    requested wait (0 = no cap); ``max_agent_delay_ms`` caps the agent's own backoff. ``provider_idle_timeout_ms`` (``retry.provider.idleTimeoutMs``, a tau
    addition) ends a stream that sends nothing for that long as a retryable error (0 = never). pi's
    ``httpIdleTimeoutMs`` (milliseconds, or ``"disabled"`` = 0) stands in for both when they are unset:
    it bounds the wait for a response's first byte and the silence within a stream.
    """

    enabled: bool = True
    max_retries: int = 3
    base_delay_ms: int = 2000
    max_agent_delay_ms: int = 60000
    provider_timeout_ms: int | None = None
    provider_max_retries: int | None = None
    provider_max_retry_delay_ms: int = 60000
    provider_idle_timeout_ms: int | None = None


def deep_merge_settings(base: Mapping[str, Any], overrides: Mapping[str, Any]) -> JsonObject:
    """``overrides`` over ``base``: values win, objects present in both merge one level deep, and a
    ``defaultTools`` list of only ``+name``/``-name`` entries edits the inherited one."""
    result: JsonObject = dict(base)
    for key, value in overrides.items():
        if value is None:
            continue
        current = result.get(key)
        if key == "defaultTools":
            result[key] = merge_default_tools(current, value)
        elif isinstance(value, dict) and isinstance(current, dict):
            result[key] = {**current, **value}
        else:
            result[key] = value
    return result


# Resource arrays whose relative entries are relative to the settings file's folder.
_RESOURCE_KEYS = ("extensions", "skills", "prompts", "themes")
# Keys of pi's project settings that are not merged into tau's: its packages are installed into
# .pi/ (by pi) and resolve against that folder, so they are read apart (``pi_project_packages``).
_PI_ONLY_KEYS = ("packages",)


def pi_project_layer(settings: JsonObject, folder: Path) -> JsonObject:
    """pi's ``.pi/settings.json`` as a layer under tau's project settings: without the keys that are
    pi's alone, and with the resource arrays' relative entries (paths, ``!glob`` with a ``/``,
    ``+path``, ``-path``) made absolute against ``folder``, where pi resolves them."""
    layer = {key: value for key, value in settings.items() if key not in _PI_ONLY_KEYS}
    for key in _RESOURCE_KEYS:
        value = layer.get(key)
        if isinstance(value, list):
            layer[key] = [
                _rebase_entry(entry, folder) if isinstance(entry, str) else entry for entry in value
            ]
    return layer


def _rebase_entry(entry: str, folder: Path) -> str:
    text = entry.strip()
    sign = text[:1] if text[:1] in ("!", "+", "-") else ""
    path = text[len(sign) :].strip()
    # ~ and absolute paths stay; so do builtin:mcp and the globs that match anywhere (a name, **/x).
    if not path or path.startswith("~") or os.path.isabs(path) or ":" in path:
        return entry
    if sign == "!" and ("/" not in path or path.startswith("**")):
        return entry
    return sign + os.path.join(os.fspath(folder), path)


def migrate_settings(settings: JsonObject) -> JsonObject:
    """Rewrite keys of older pi versions in place (and return the dict).

    ``queueMode`` → ``steeringMode``; boolean ``websockets`` → ``transport``; the object form of
    ``skills`` → ``enableSkillCommands`` plus the directory list; ``retry.maxDelayMs`` →
    ``retry.provider.maxRetryDelayMs``.
    """
    if "queueMode" in settings and "steeringMode" not in settings:
        settings["steeringMode"] = settings.pop("queueMode")
    if "transport" not in settings and isinstance(settings.get("websockets"), bool):
        settings["transport"] = "websocket" if settings.pop("websockets") else "sse"
    skills = settings.get("skills")
    if isinstance(skills, dict):
        enable = skills.get("enableSkillCommands")
        if enable is not None and "enableSkillCommands" not in settings:
            settings["enableSkillCommands"] = enable
        directories = skills.get("customDirectories")
        if isinstance(directories, list) and directories:
            settings["skills"] = directories
        else:
            del settings["skills"]
    retry = settings.get("retry")
    if isinstance(retry, dict) and "maxDelayMs" in retry:
        max_delay = retry.pop("maxDelayMs")
        provider = retry.get("provider")
        if not isinstance(provider, dict):
            provider = retry["provider"] = {}
        provider.setdefault("maxRetryDelayMs", max_delay)
    return settings


class SettingsManager:
    """The merged settings of one working directory, with typed getters and persisting setters."""

    def __init__(
        self, global_path: Path | None, project_path: Path | None, pi_project_path: Path | None = None
    ) -> None:
        """Load both scopes from the given files; a ``None`` path keeps that scope in memory only.
        ``pi_project_path`` (pi's ``.pi/settings.json``) lies under the project file: read, never written."""
        self._paths: dict[SettingsScope, Path | None] = {"global": global_path, "project": project_path}
        self._pi_project_path = pi_project_path
        self._pi_layer: JsonObject = {}
        self._pi_packages: list[Any] = []
        self._layers: dict[SettingsScope, JsonObject] = {"global": {}, "project": {}}
        self._load_failed: dict[SettingsScope, bool] = {"global": False, "project": False}
        self._overrides: JsonObject = {}
        self._errors: list[SettingsError] = []
        self._merged: JsonObject = {}
        self.reload()

    @classmethod
    def create(
        cls,
        cwd: str | os.PathLike[str] | None = None,
        agent_dir_path: str | os.PathLike[str] | None = None,
        *,
        project: bool = True,
    ) -> SettingsManager:
        """The settings of ``cwd`` (default: the process cwd) and the agent dir (default: ``agent_dir()``).
        The project scope is ``.tau/settings.json`` over pi's ``.pi/settings.json``. ``project=False``
        (a folder not trusted) leaves both project files unread, the scope empty."""
        base = Path(agent_dir_path) if agent_dir_path is not None else agent_dir()
        folder = cwd if cwd is not None else Path.cwd()
        if not project:
            return cls(settings_path(base), None)
        return cls(settings_path(base), project_settings_path(folder), pi_project_settings_path(folder))

    @classmethod
    def in_memory(cls, settings: Mapping[str, Any] | None = None) -> SettingsManager:
        """A manager that never touches the disk, its global scope preset to ``settings``."""
        manager = cls(None, None)
        manager._layers["global"] = migrate_settings(copy.deepcopy(dict(settings or {})))
        manager._remerge()
        return manager

    # ---- loading, errors, raw access -------------------------------------------------------------

    def path(self, scope: SettingsScope) -> Path | None:
        """The file behind ``scope`` (``None`` for an in-memory manager)."""
        return self._paths[scope]

    def reload(self) -> None:
        """Re-read the files. A file that fails keeps its previous in-memory values and is reported."""
        if self._pi_project_path is not None:
            self._reload_pi_project(self._pi_project_path)
        for scope in ("global", "project"):
            path = self._paths[scope]
            if path is None:
                continue
            forget_old_lock_file(path)
            try:
                self._layers[scope] = self._read_scope(path)
                self._load_failed[scope] = False
            except ConfigError as error:
                self._load_failed[scope] = True
                self._errors.append(SettingsError(scope, error))
                continue
            for problem in settings_problems(self._layers[scope]):
                self._errors.append(SettingsError(scope, ConfigError(path, problem)))
        self._remerge()

    def _reload_pi_project(self, path: Path) -> None:
        """pi's project settings: only the keys tau shares with pi's ``.pi/`` folder (see
        ``pi_project_layer``), their resource paths made absolute so they keep pointing into ``.pi/``."""
        try:
            raw = self._read_scope(path)
            layer = pi_project_layer(raw, path.parent)
        except ConfigError as error:
            self._errors.append(SettingsError("project", error))
            return
        self._pi_layer = layer
        packages = raw.get("packages")
        self._pi_packages = list(packages) if isinstance(packages, list) else []
        for problem in settings_problems(layer):
            self._errors.append(SettingsError("project", ConfigError(path, problem)))

    def pi_project_packages(self) -> tuple[list[Any], Path] | None:
        """pi's ``.pi/settings.json`` ``packages`` and the ``.pi`` folder they resolve against (and
        are installed into, by pi); ``None`` without such a file or in a folder not trusted."""
        if self._pi_project_path is None or not self._pi_packages:
            return None
        return copy.deepcopy(self._pi_packages), self._pi_project_path.parent

    def drain_errors(self) -> list[SettingsError]:
        """Errors collected since the last call (load and write failures), oldest first."""
        drained, self._errors = self._errors, []
        return drained

    def apply_overrides(self, overrides: Mapping[str, Any]) -> None:
        """Lay runtime values (CLI flags) over the effective settings; never persisted, kept across reloads."""
        self._overrides = deep_merge_settings(self._overrides, overrides)
        self._remerge()

    def as_dict(self) -> JsonObject:
        """A copy of the effective settings (global, then project, then runtime overrides)."""
        return copy.deepcopy(self._merged)

    def get_scope(self, scope: SettingsScope) -> JsonObject:
        """A copy of one scope's settings as loaded (after migrations); the project's are
        ``.tau/settings.json`` laid over ``.pi/settings.json``."""
        if scope == "project" and self._pi_layer:
            return copy.deepcopy(deep_merge_settings(self._pi_layer, self._layers["project"]))
        return copy.deepcopy(self._layers[scope])

    def get(self, key: str, default: Any = None) -> Any:
        """A copy of one effective top-level value, ``default`` when unset."""
        value = self._merged.get(key)
        return default if value is None else copy.deepcopy(value)

    def set(self, key: str, value: Any, *, scope: SettingsScope = "global") -> None:
        """Set a top-level key in ``scope`` and persist it; ``None`` removes the key."""
        self.update(lambda current: _assign(current, key, value), scope=scope)

    def set_nested(self, key: str, nested_key: str, value: Any, *, scope: SettingsScope = "global") -> None:
        """Set ``key.nested_key`` in ``scope`` and persist only that nested key; ``None`` removes it."""

        def change(current: JsonObject) -> None:
            section = current.get(key)
            if not isinstance(section, dict):
                section = current[key] = {}
            _assign(section, nested_key, value)

        self.update(change, scope=scope)

    def update(self, change: Callable[[JsonObject], _R], *, scope: SettingsScope = "global") -> _R | None:
        """Apply ``change`` to ``scope``'s settings as its file holds them now and persist the result.

        Under the file's lock the file is read again, ``change`` edits that fresh copy (so a list
        such as ``packages`` is extended from what another process wrote meanwhile, not from what
        this manager read at start) and the result replaces the file atomically; this manager then
        adopts it. ``change``'s own exceptions propagate and nothing is written. A scope without a
        file, or whose file failed to load, is changed in memory only (``change``'s value returned).
        A file that cannot be read or written now is reported (``drain_errors()``): the change is
        made in memory only and ``None`` returned.
        """
        path = self._paths[scope]
        if path is None or self._load_failed[scope]:
            result = change(self._layers[scope])
            self._remerge()
            return result
        written: JsonObject = {}

        def apply(current: JsonObject) -> _R:
            nonlocal written
            outcome = change(current)
            written = current
            return outcome

        try:
            result = update_json_file(path, apply, read=self._read_scope, dump=_dump, follow_links=False)
        except (ConfigError, OSError, LockTimeoutError) as error:
            if not isinstance(error, ConfigError):
                error = ConfigError(path, f"cannot write settings: {error}")
            self._errors.append(SettingsError(scope, error))
            change(self._layers[scope])  # the change still holds for this process
            self._remerge()
            return None
        # The file now holds our change plus whatever others wrote; adopt it as this scope's state.
        self._layers[scope] = written
        self._remerge()
        return result

    # ---- model and thinking ----------------------------------------------------------------------

    @property
    def default_provider(self) -> str | None:
        return self._str("defaultProvider")

    @property
    def default_model(self) -> str | None:
        return self._str("defaultModel")

    @property
    def default_thinking_level(self) -> ThinkingLevelOrOff | None:
        value = self._merged.get("defaultThinkingLevel")
        return cast("ThinkingLevelOrOff", value) if value in THINKING_LEVELS else None

    def set_default_provider(self, provider: str) -> None:
        self.set("defaultProvider", provider)

    def set_default_model(self, model_id: str) -> None:
        self.set("defaultModel", model_id)

    def set_default_model_and_provider(self, provider: str, model_id: str) -> None:
        self.set("defaultProvider", provider)
        self.set("defaultModel", model_id)

    def set_default_thinking_level(self, level: ThinkingLevelOrOff) -> None:
        self.set("defaultThinkingLevel", level)

    def model_thinking_level(self, provider: str, model_id: str) -> ThinkingLevelOrOff | None:
        """The ``modelThinkingLevels`` entry of exactly ``provider/model_id``, if it is a level."""
        levels = self._merged.get("modelThinkingLevels")
        value = levels.get(f"{provider}/{model_id}") if isinstance(levels, dict) else None
        return cast("ThinkingLevelOrOff", value) if value in THINKING_LEVELS else None

    @property
    def enabled_models(self) -> list[str] | None:
        """Model patterns for cycling (the ``--models`` format), or ``None`` when unset."""
        value = self._merged.get("enabledModels")
        return [item for item in value if isinstance(item, str)] if isinstance(value, list) else None

    def set_enabled_models(self, patterns: list[str] | None) -> None:
        self.set("enabledModels", patterns)

    @property
    def default_tools(self) -> list[str] | None:
        """The tools active at start-up by the ``defaultTools`` setting, or ``None`` when unset."""
        value = self._merged.get("defaultTools")
        if value is None:
            return None
        return resolve_default_tools(value if isinstance(value, list) else [])

    @property
    def thinking_budgets(self) -> dict[str, int] | None:
        value = self._merged.get("thinkingBudgets")
        if not isinstance(value, dict):
            return None
        return {level: int(tokens) for level, tokens in value.items() if _is_number(tokens) and tokens >= 0}

    @property
    def transport(self) -> Transport:
        return cast(Transport, self._choice("transport", _TRANSPORTS, "auto"))

    @property
    def websocket_connect_timeout_ms(self) -> int | None:
        """``websocketConnectTimeoutMs``: how long a WebSocket may take to open (0 or ``"disabled"``:
        no limit); ``None`` when unset (the provider's default, 15 s, applies)."""
        return parse_timeout_ms(self._merged.get("websocketConnectTimeoutMs"))

    def set_transport(self, transport: Transport) -> None:
        self.set("transport", transport)

    # ---- agent loop ------------------------------------------------------------------------------

    @property
    def steering_mode(self) -> QueueMode:
        return cast(QueueMode, self._choice("steeringMode", _QUEUE_MODES, "one-at-a-time"))

    def set_steering_mode(self, mode: QueueMode) -> None:
        self.set("steeringMode", mode)

    @property
    def follow_up_mode(self) -> QueueMode:
        return cast(QueueMode, self._choice("followUpMode", _QUEUE_MODES, "one-at-a-time"))

    def set_follow_up_mode(self, mode: QueueMode) -> None:
        self.set("followUpMode", mode)

    @property
    def tool_execution(self) -> ToolExecutionMode:
        """``parallel`` (default) or ``sequential`` tool calls: tau's addition, not a pi key."""
        return cast(ToolExecutionMode, self._choice("toolExecution", _TOOL_EXECUTION_MODES, "parallel"))

    def set_tool_execution(self, mode: ToolExecutionMode) -> None:
        self.set("toolExecution", mode)

    @property
    def compaction(self) -> CompactionSettings:
        return CompactionSettings(
            enabled=self._bool("compaction", "enabled", True),
            reserve_tokens=self._int("compaction", "reserveTokens", 16384),
            keep_recent_tokens=self._int("compaction", "keepRecentTokens", 20000),
        )

    @property
    def compaction_model_overrides(self) -> JsonObject:
        """``compaction.modelOverrides`` as written (``tau.compaction.for_model`` applies it)."""
        value = self._section("compaction").get("modelOverrides")
        return value if isinstance(value, dict) else {}

    def set_compaction_enabled(self, enabled: bool) -> None:
        self.set_nested("compaction", "enabled", enabled)

    @property
    def branch_summary_reserve_tokens(self) -> int:
        return self._int("branchSummary", "reserveTokens", 16384)

    @property
    def branch_summary_skip_prompt(self) -> bool:
        return self._bool("branchSummary", "skipPrompt", False)

    @property
    def retry(self) -> RetrySettings:
        provider = self._section("retry").get("provider")
        provider = provider if isinstance(provider, dict) else {}
        max_retry_delay_ms = _optional_int(provider.get("maxRetryDelayMs"))
        http_idle_timeout_ms = parse_timeout_ms(self._merged.get("httpIdleTimeoutMs"))
        timeout_ms = _optional_int(provider.get("timeoutMs"))
        idle_timeout_ms = _optional_int(provider.get("idleTimeoutMs"))
        return RetrySettings(
            enabled=self._bool("retry", "enabled", True),
            max_retries=self._int("retry", "maxRetries", 3),
            base_delay_ms=self._int("retry", "baseDelayMs", 2000),
            max_agent_delay_ms=self._int("retry", "maxAgentDelayMs", 60000),
            provider_timeout_ms=http_idle_timeout_ms if timeout_ms is None else timeout_ms,
            provider_max_retries=_optional_int(provider.get("maxRetries")),
            provider_max_retry_delay_ms=60000 if max_retry_delay_ms is None else max_retry_delay_ms,
            provider_idle_timeout_ms=http_idle_timeout_ms if idle_timeout_ms is None else idle_timeout_ms,
        )

    def set_retry_enabled(self, enabled: bool) -> None:
        self.set_nested("retry", "enabled", enabled)

    # ---- shell and images ------------------------------------------------------------------------

    @property
    def shell_path(self) -> str | None:
        return self._str("shellPath")

    def set_shell_path(self, path: str | None) -> None:
        self.set("shellPath", path)

    @property
    def shell_command_prefix(self) -> str | None:
        return self._str("shellCommandPrefix")

    def set_shell_command_prefix(self, prefix: str | None) -> None:
        self.set("shellCommandPrefix", prefix)

    @property
    def npm_command(self) -> list[str] | None:
        value = self._merged.get("npmCommand")
        return [str(part) for part in value] if isinstance(value, list) else None

    @property
    def block_images(self) -> bool:
        return self._bool("images", "blockImages", False)

    def set_block_images(self, blocked: bool) -> None:
        self.set_nested("images", "blockImages", blocked)

    @property
    def auto_resize_images(self) -> bool:
        return self._bool("images", "autoResize", True)

    def set_auto_resize_images(self, enabled: bool) -> None:
        self.set_nested("images", "autoResize", enabled)

    # ---- sessions and resources ------------------------------------------------------------------

    @property
    def session_dir(self) -> str | None:
        """The ``sessionDir`` setting as written (the flag and ``$TAU_SESSION_DIR`` take precedence)."""
        return self._str("sessionDir")

    @property
    def packages(self) -> list[str | JsonObject]:
        value = self._merged.get("packages")
        if not isinstance(value, list):
            return []
        return [copy.deepcopy(item) for item in value if isinstance(item, str | dict)]

    @property
    def extensions(self) -> list[str]:
        return self._str_list("extensions")

    @property
    def skills(self) -> list[str]:
        return self._str_list("skills")

    @property
    def prompts(self) -> list[str]:
        return self._str_list("prompts")

    @property
    def themes(self) -> list[str]:
        return self._str_list("themes")

    @property
    def default_project_trust(self) -> Literal["ask", "always", "never"]:
        """What a folder nothing has decided about gets; read from the global file only, so a project
        cannot trust itself."""
        value = self._layers["global"].get("defaultProjectTrust")
        return value if value in ("always", "never") else "ask"

    @property
    def enable_skill_commands(self) -> bool:
        return self._bool(None, "enableSkillCommands", True)

    # ---- interface -------------------------------------------------------------------------------

    @property
    def theme(self) -> str:
        return self._str("theme") or "system"

    def set_theme(self, theme: str) -> None:
        self.set("theme", theme)

    @property
    def quiet_startup(self) -> bool | Literal["header"]:
        """``quietStartup``: ``True`` hides the startup header and what was loaded; ``"header"``
        keeps the header (version and keys) and hides the rest, as in pi 1.6."""
        value = self._lookup(None, "quietStartup")
        return value if value is True or value == "header" else False

    def set_quiet_startup(self, quiet: bool | Literal["header"]) -> None:
        self.set("quietStartup", quiet)

    @property
    def cache_warming(self) -> str:
        """``cacheWarming``: ``"off"``, ``"streaming"`` or ``"idle"`` (the default). A user setting
        only, as in pi 1.6: it spends money, so a project's settings do not decide it."""
        value = self._overrides.get("cacheWarming", self._layers["global"].get("cacheWarming"))
        return value if value in ("off", "streaming", "idle") else "idle"

    def set_cache_warming(self, mode: str) -> None:
        self.set("cacheWarming", mode)

    @property
    def hide_thinking_block(self) -> bool:
        return self._bool(None, "hideThinkingBlock", False)

    def set_hide_thinking_block(self, hide: bool) -> None:
        self.set("hideThinkingBlock", hide)

    @property
    def show_cache_miss_notices(self) -> bool:
        return self._bool(None, "showCacheMissNotices", False)

    @property
    def collapse_changelog(self) -> bool:
        return self._bool(None, "collapseChangelog", False)

    @property
    def last_changelog_version(self) -> str | None:
        return self._str("lastChangelogVersion")

    def set_last_changelog_version(self, version: str) -> None:
        self.set("lastChangelogVersion", version)

    @property
    def enable_install_telemetry(self) -> bool:
        return self._bool(None, "enableInstallTelemetry", True)

    @property
    def double_escape_action(self) -> DoubleEscapeAction:
        return cast(DoubleEscapeAction, self._choice("doubleEscapeAction", _DOUBLE_ESCAPE_ACTIONS, "tree"))

    def set_double_escape_action(self, action: DoubleEscapeAction) -> None:
        self.set("doubleEscapeAction", action)

    @property
    def tree_filter_mode(self) -> TreeFilterMode:
        return cast(TreeFilterMode, self._choice("treeFilterMode", _TREE_FILTER_MODES, "default"))

    def set_tree_filter_mode(self, mode: TreeFilterMode) -> None:
        self.set("treeFilterMode", mode)

    @property
    def show_images(self) -> bool:
        return self._bool("terminal", "showImages", True)

    @property
    def image_width_cells(self) -> int:
        return self._int("terminal", "imageWidthCells", 60)

    @property
    def clear_on_shrink(self) -> bool:
        """``terminal.clearOnShrink``; unset, ``TAU_CLEAR_ON_SHRINK=1`` (or pi's ``PI_CLEAR_ON_SHRINK``)."""
        value = self._lookup("terminal", "clearOnShrink")
        return value if isinstance(value, bool) else _env_flag("CLEAR_ON_SHRINK")

    @property
    def terminal_hyperlinks(self) -> bool | None:
        """``terminal.hyperlinks``: ``True``/``False`` decide; ``None`` (``"auto"``, the default):
        as the terminal is detected."""
        value = self._lookup("terminal", "hyperlinks")
        return value if isinstance(value, bool) else None

    @property
    def terminal_true_color(self) -> bool | None:
        """``terminal.trueColor``: ``True``/``False`` decide; ``None`` (``"auto"``): as detected."""
        value = self._lookup("terminal", "trueColor")
        return value if isinstance(value, bool) else None

    @property
    def terminal_images(self) -> Literal["kitty", "iterm2", "auto"] | None:
        """``terminal.images``: a protocol, ``"auto"`` (the default: as detected) or ``None`` (false:
        no inline images, the text line instead)."""
        value = self._lookup("terminal", "images")
        if value is False:
            return None
        return value if value in ("kitty", "iterm2") else "auto"

    @property
    def mermaid_mode(self) -> Literal["off", "final", "streaming"]:
        """``markdown.mermaid``: draw Mermaid code blocks as diagrams never, once a reply is complete,
        or also while it streams (the default)."""
        value = self._section("markdown").get("mermaid")
        return value if value in ("off", "final") else "streaming"

    @property
    def show_terminal_progress(self) -> bool:
        return self._bool("terminal", "showTerminalProgress", False)

    @property
    def fullscreen_wheel_scroll_lines(self) -> int | Literal["auto"]:
        """``fullscreenWheelScrollLines``: lines a wheel event scrolls, 1 to 100 (a number outside is
        taken to the nearer end, as pi), or ``"auto"`` (the default: by the wheel's speed)."""
        value = self._lookup(None, "fullscreenWheelScrollLines")
        if _is_number(value) and value == value and abs(value) != float("inf"):
            return max(1, min(100, int(value // 1)))
        return "auto"

    @property
    def editor_padding_x(self) -> int:
        """Blank cells each side of the editor's text (the editor narrows it to fit the width)."""
        return self._int(None, "editorPaddingX", 0)

    @property
    def autocomplete_max_visible(self) -> int:
        """Rows of the completion menu, 3 to 20 (a value outside is taken to the nearer end, as pi)."""
        return max(3, min(20, self._int(None, "autocompleteMaxVisible", 5)))

    @property
    def show_hardware_cursor(self) -> bool:
        """``showHardwareCursor``; unset, ``TAU_HARDWARE_CURSOR=1`` (or pi's ``PI_HARDWARE_CURSOR``)."""
        value = self._lookup(None, "showHardwareCursor")
        return value if isinstance(value, bool) else _env_flag("HARDWARE_CURSOR")

    @property
    def code_block_indent(self) -> str:
        """``markdown.codeBlockIndent``: what each code line of a reply starts with; its control
        characters are left out (they would move the cursor, not indent)."""
        value = self._section("markdown").get("codeBlockIndent")
        return "".join(ch for ch in value if ch.isprintable()) if isinstance(value, str) else "  "

    @property
    def warn_anthropic_extra_usage(self) -> bool:
        return self._bool("warnings", "anthropicExtraUsage", True)

    # ---- internals -------------------------------------------------------------------------------

    def _remerge(self) -> None:
        merged = deep_merge_settings(self._layers["global"], self._pi_layer)
        merged = deep_merge_settings(merged, self._layers["project"])
        self._merged = deep_merge_settings(merged, self._overrides)

    @staticmethod
    def _read_scope(path: Path) -> JsonObject:
        data = read_json_file(path)
        if data is None:
            return {}
        if not isinstance(data, dict):
            raise ConfigError(path, f"expected a JSON object at the top level, found {_json_type(data)}")
        return migrate_settings(data)

    def _section(self, key: str) -> JsonObject:
        value = self._merged.get(key)
        return value if isinstance(value, dict) else {}

    def _lookup(self, section: str | None, key: str) -> Any:
        return (self._merged if section is None else self._section(section)).get(key)

    def _bool(self, section: str | None, key: str, default: bool) -> bool:
        value = self._lookup(section, key)
        return value if isinstance(value, bool) else default

    def _int(self, section: str | None, key: str, default: int) -> int:
        """A count or duration: a negative one is as unusable as a string (``settings_problems`` says so)."""
        value = _optional_int(self._lookup(section, key))
        return default if value is None else value

    def _str(self, key: str) -> str | None:
        value = self._merged.get(key)
        return value if isinstance(value, str) and value else None

    def _str_list(self, key: str) -> list[str]:
        value = self._merged.get(key)
        return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []

    def _choice(self, key: str, allowed: tuple[str, ...], default: str) -> str:
        value = self._merged.get(key)
        return value if isinstance(value, str) and value in allowed else default


def _assign(target: JsonObject, key: str, value: Any) -> None:
    if value is None:
        target.pop(key, None)
    else:
        target[key] = copy.deepcopy(value)


def _dump(settings: JsonObject) -> str:
    return dump_json(settings)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _env_flag(name: str) -> bool:
    """``TAU_<name>=1``, else pi's ``PI_<name>=1``."""
    from tau._env_twins import env_twin

    return env_twin(name) == "1"


def _optional_int(value: Any) -> int | None:
    return int(value) if _is_number(value) and value >= 0 else None


def _json_type(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "null"
    return "a number"
