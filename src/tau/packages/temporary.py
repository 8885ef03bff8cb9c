"""Packages named by ``-e`` for one run (``tau -e npm:@example/tools``), as pi's temporary packages.
A local folder laid out as a package (``tau -e ./my-package``) is read where it is.

They are installed into a cache, ``<agent dir>/tmp/extensions/`` (the same layout as the managed
folders below it), and never recorded in settings. Each start brings a cached copy up to date
unless offline: a git package is fetched and moved to its ref (a commit already checked out is not
fetched), an npm package is installed again when the registry has another version for its tag (an
exact version is not checked). A failed refresh keeps the cached copy; a package that cannot be
installed is a warning and loads nothing. What the package offers (extensions, skills, prompt
templates, themes) loads like the command line's own ``-e``, ``--skill``, ``--prompt-template``
and ``--theme`` paths.
"""

from __future__ import annotations

import os
import re
import sys

from msgspec import Struct, field

from tau import _process_groups as process_groups
from tau.extensions.foreign import not_loadable_reason
from tau.packages.contents import package_contents
from tau.packages.installers import InstallError, install, npm_available_version, update, version_of
from tau.packages.sources import PackageSource, SourceError, parse_source

__all__ = ["TemporaryResources", "is_package_source", "load_temporary_packages", "temporary_dir"]

_PACKAGE_PREFIXES = ("npm:", "git:", "pip:", "https://", "http://", "ssh://", "git://", "git@")
_EXACT_VERSION = re.compile(r"^\d+\.\d+\.\d+(?:[-+].*)?$")
_COMMIT = re.compile(r"^[0-9a-f]{7,64}$", re.IGNORECASE)
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+://")  # any other scheme: parse_source names it as unknown


def is_package_source(value: str) -> bool:
    """Whether a ``-e`` value names a package (to fetch, or a local pi package folder) rather than
    an extension file or folder."""
    text = value.strip()
    return text.startswith(_PACKAGE_PREFIXES) or bool(_URL.match(text)) or is_local_package(value)


def is_local_package(path: str) -> bool:
    """A folder laid out as a package (``package.json``, or ``skills/``, ``prompts/``, ``themes/``,
    ``extensions/``) that is not itself a Python extension package, as pi reads ``-e ./folder``."""
    folder = os.path.expanduser(path)
    if not os.path.isdir(folder) or any(
        os.path.isfile(os.path.join(folder, n)) for n in ("__init__.py", "pyproject.toml")
    ):
        return False
    return os.path.isfile(os.path.join(folder, "package.json")) or any(
        os.path.isdir(os.path.join(folder, kind)) for kind in ("skills", "prompts", "themes", "extensions")
    )


def temporary_dir(agent_dir: str) -> str:
    return os.path.join(agent_dir, "tmp", "extensions")


class TemporaryResources(Struct):
    extensions: list[str] = field(default_factory=list)
    skills: list[str] = field(default_factory=list)
    prompts: list[str] = field(default_factory=list)
    themes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def load_temporary_packages(sources: list[str], agent_dir: str, *, offline: bool) -> TemporaryResources:
    """Install (or refresh) each of ``sources`` in the cache and collect what they offer."""
    found = TemporaryResources()
    base = temporary_dir(agent_dir)
    for raw in sources:
        try:
            source = parse_source(raw, cwd=os.getcwd())
            if source.kind == "local":  # used where it is
                target = os.path.abspath(os.path.expanduser(raw))
            else:
                target = source.install_dir(base)
                _bring_up_to_date(source, target, offline=offline)
        except (SourceError, InstallError, OSError) as exc:
            found.warnings.append(f"-e {raw}: {exc}; its resources are not loaded")
            continue
        if source.kind == "pip" and target not in sys.path:
            sys.path.append(target)  # its modules and entry points import after tau's own
        contents = package_contents(target, None, python_package=source.kind == "pip")
        found.extensions += contents.found["extensions"]
        found.skills += contents.found["skills"]
        found.prompts += contents.found["prompts"]
        found.themes += contents.found["themes"]
        found.warnings += [
            f"-e {raw}: {os.path.relpath(p, target)}: {not_loadable_reason(language)}"
            for p, language in contents.not_loadable
        ]
        found.warnings += [f"-e {raw}: {problem}" for problem in contents.problems]
    return found


def _bring_up_to_date(source: PackageSource, target: str, *, offline: bool) -> None:
    if not os.path.exists(target):
        if offline:
            raise InstallError("not in the cache, and tau is offline")
        print(f"Installing {source.raw} for this run...", file=sys.stderr, flush=True)
        install(source, target)
        return
    exact = source.kind == "npm" and bool(source.version and _EXACT_VERSION.match(source.version))
    if exact and version_of(source, target) != source.version:
        install(source, target)  # another version of the package was cached
        return
    if offline or exact or not _may_have_moved(source, target):
        return
    try:
        if source.kind == "npm":
            if npm_available_version(source) != version_of(source, target):
                install(source, target)
        else:
            update(source, target)
    except InstallError:
        pass  # the cached copy stays in use


def _may_have_moved(source: PackageSource, target: str) -> bool:
    """Whether a cached copy can be behind its source (a pip copy is kept as installed)."""
    if source.kind == "git" and source.ref and _COMMIT.match(source.ref):
        head = process_groups.run(["git", "rev-parse", "HEAD"], cwd=target, capture_output=True, text=True)
        return not head.stdout.strip().lower().startswith(source.ref.lower())
    return source.kind in ("git", "npm")
