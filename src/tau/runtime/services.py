"""``AgentSessionServices``: everything a session borrows from its working directory.

A session is bound to its cwd: the cwd decides project settings, context files, skills, prompt
templates, SYSTEM.md and extensions. Switching to a session of another folder therefore rebuilds these
services rather than only swapping messages. A folder not trusted (``project_trusted=False``, see
``tau.config.project_trust``) keeps its ``.tau`` settings, skills, templates, system prompt files
and extensions out; its AGENTS.md still loads. Building them never prints and never exits: problems
are collected in ``diagnostics`` for the caller to show. An extension that fails to load is a
warning (tau goes on without it); a command-line flag no extension registers is an error.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeAlias

from msgspec import Struct, field

from tau.accounts.auth_storage import AuthStorage
from tau.accounts.model_registry import ModelRegistry
from tau.config.paths import agent_dir as default_agent_dir
from tau.config.paths import models_path
from tau.config.settings import SettingsManager
from tau.context.resources import ResourceLoader
from tau.packages.resource_settings import settings_entries_source
from tau.runtime.extension_loading import ExtensionOptions, load_extension_runner
from tau.tools.sandbox import Sandbox

if TYPE_CHECKING:
    from tau.extensions.runner import ExtensionRunner

__all__ = [
    "AgentSessionServices",
    "DiagnosticType",
    "ExtensionOptions",
    "ResourceOptions",
    "ServiceDiagnostic",
    "create_agent_session_services",
]

DiagnosticType: TypeAlias = Literal["info", "warning", "error"]


class ServiceDiagnostic(Struct, frozen=True):
    type: DiagnosticType
    message: str


class ResourceOptions(Struct, frozen=True, kw_only=True):
    """CLI choices for the resource loader. Paths should be absolute: the cwd may change later."""

    system_prompt: str | None = None
    append_system_prompts: Sequence[str] = ()
    skill_paths: Sequence[str] = ()
    prompt_template_paths: Sequence[str] = ()
    no_context_files: bool = False
    no_skills: bool = False
    no_prompt_templates: bool = False


class AgentSessionServices(Struct):
    cwd: str
    agent_dir: str
    auth_storage: AuthStorage
    settings_manager: SettingsManager
    model_registry: ModelRegistry
    resource_loader: ResourceLoader
    diagnostics: list[ServiceDiagnostic] = field(default_factory=list)
    resource_options: ResourceOptions = field(default_factory=ResourceOptions)
    extension_options: ExtensionOptions = field(default_factory=ExtensionOptions)
    extension_runner: ExtensionRunner | None = None
    """The loaded extensions (``None`` when there are none); replaced by ``AgentSession.reload()``."""
    project_trusted: bool = True
    """Whether the cwd's own configuration and extensions were allowed to load."""
    sandbox: Sandbox = field(default_factory=Sandbox)
    """The fence of the session's commands and file writes (``sandbox`` setting, ``--sandbox``)."""


def create_agent_session_services(
    *,
    cwd: str,
    agent_dir: str | os.PathLike[str] | None = None,
    auth_storage: AuthStorage | None = None,
    settings_manager: SettingsManager | None = None,
    model_registry: ModelRegistry | None = None,
    resource_options: ResourceOptions | None = None,
    extension_options: ExtensionOptions | None = None,
    project_trusted: bool = True,
    preloaded_extensions: ExtensionRunner | None = None,
    sandbox_mode: str | None = None,
    await_sandbox: bool = True,
) -> AgentSessionServices:
    """The services for ``cwd``: given pieces are kept, missing ones are loaded from the agent dir
    (default ``$TAU_AGENT_DIR`` or ``~/.tau/agent``) and the project's ``.tau`` folder. Extensions
    are loaded, their providers added to the model registry and the CLI flag values applied.
    ``project_trusted=False`` leaves the project's own configuration and code unread.
    ``preloaded_extensions``: the user's and ``-e`` extensions, loaded already to decide trust.
    ``sandbox_mode``: ``--sandbox``, over the ``sandbox`` setting; a sandbox that cannot be set up
    is an error diagnostic (its commands are refused, never run unfenced). ``await_sandbox=False``
    does not wait here for the start of the fence's command server (bubblewrap putting the fence
    up): a problem known already is still a diagnostic, and the caller reads ``sandbox.problem``
    itself before the first request (print mode does, so the start overlaps building the session)."""
    cwd = os.path.abspath(cwd)
    base = Path(agent_dir).expanduser().absolute() if agent_dir is not None else default_agent_dir()
    options = resource_options or ResourceOptions()
    auth = auth_storage or (model_registry.auth_storage if model_registry else AuthStorage.create(base))
    settings = settings_manager or SettingsManager.create(cwd, base, project=project_trusted)
    from tau.config.sandbox_config import build_sandbox

    # Started first: bubblewrap puts the fence up while the rest loads.
    sandbox = build_sandbox(settings.get("sandbox"), cwd, str(base), mode=sandbox_mode)
    registry = model_registry or ModelRegistry(auth, models_path(base))
    resources = ResourceLoader(
        cwd,
        str(base),
        system_prompt=options.system_prompt,
        append_system_prompts=options.append_system_prompts,
        skill_paths=options.skill_paths,
        prompt_template_paths=options.prompt_template_paths,
        no_context_files=options.no_context_files,
        no_skills=options.no_skills,
        no_prompt_templates=options.no_prompt_templates,
        settings_entries=settings_entries_source(settings),
        include_project=project_trusted,
    )
    # A broken settings.json or models.json is a warning, as in pi: tau goes on with the defaults
    # (and the built-in models); a broken settings file is never written over.
    diagnostics = [ServiceDiagnostic("warning", e.error.message) for e in settings.drain_errors()]
    diagnostics += [ServiceDiagnostic("error", e.message) for e in auth.drain_errors()]
    diagnostics += [ServiceDiagnostic("warning", warning) for warning in auth.drain_warnings()]
    if (models_error := registry.get_error()) is not None:
        diagnostics.append(ServiceDiagnostic("warning", models_error.message))
    for found in resources.diagnostics:
        where = f"{found.path}: " if found.path else ""
        level: DiagnosticType = "error" if found.type == "error" else "warning"
        diagnostics.append(ServiceDiagnostic(level, where + found.message))
    if (
        settings.packages or settings.pi_project_packages()
    ):  # only a configuration declaring packages reads them
        from tau.packages.configured import package_problems

        diagnostics += [ServiceDiagnostic("warning", problem) for problem in package_problems(settings)]
    extensions = extension_options or ExtensionOptions()
    runner, problems = load_extension_runner(
        cwd, str(base), settings, extensions, include_project=project_trusted, preloaded=preloaded_extensions
    )
    registered = runner.flags if runner is not None else {}
    unknown = [f"--{name}" for name in extensions.flag_values if name not in registered]
    flag_errors = (
        [f"Unknown option{'s' if len(unknown) > 1 else ''}: {', '.join(unknown)}"] if unknown else []
    )
    if runner is not None:
        problems += runner.register_providers(registry)
        known = {name: value for name, value in extensions.flag_values.items() if name in registered}
        flag_errors += [str(p) for p in runner.apply_flag_values(known)]
    diagnostics += [ServiceDiagnostic("warning", str(p)) for p in problems]
    diagnostics += [ServiceDiagnostic("error", message) for message in flag_errors]
    # The fence's start, begun above, seen through (or left to the caller).
    if (problem := sandbox.problem if await_sandbox else sandbox.known_problem) is not None:
        diagnostics.append(ServiceDiagnostic("error", problem))
    return AgentSessionServices(
        cwd=cwd,
        agent_dir=str(base),
        auth_storage=auth,
        settings_manager=settings,
        model_registry=registry,
        resource_loader=resources,
        diagnostics=diagnostics,
        resource_options=options,
        extension_options=extensions,
        extension_runner=runner,
        project_trusted=project_trusted,
        sandbox=sandbox,
    )
