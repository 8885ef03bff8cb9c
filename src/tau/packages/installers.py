"""Putting a package's files in place: git clones, npm tarballs, pip ``--target`` folders.

Each install goes to a fresh folder next to the final one and is moved there only when it worked,
so a failure leaves the previous copy (or nothing) behind. Failures raise ``InstallError`` with
one line for the user.

``target`` comes from ``PackageSource.install_dir`` (always inside tau's package folders); on top
of that, a folder is replaced or deleted only when it is one tau installed: not a symbolic link,
and empty or holding what an install of its kind leaves (a git clone's ``.git``, npm's
``package.json``, pip's ``*.dist-info``).
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import tarfile
import tempfile
from urllib.parse import quote

from tau import _process_groups as process_groups
from tau._import_path import python_module_command
from tau.errors import TauError
from tau.packages.sources import PackageSource

__all__ = [
    "NPM_REGISTRY_ENV",
    "InstallError",
    "check_owned",
    "install",
    "npm_available_version",
    "uninstall",
    "update",
    "version_of",
]

NPM_REGISTRY_ENV = "npm_config_registry"
"""npm's own variable for the registry URL; tau reads it too (default https://registry.npmjs.org)."""
_DEFAULT_REGISTRY = "https://registry.npmjs.org"
_FOLDER_LOCK_WAIT_S = 60.0
"""A removal of a large package folder holds its lock while the files are deleted."""


class InstallError(TauError):
    """An install or update that failed; the message is one line."""


def install(source: PackageSource, target: str) -> None:
    """Put ``source``'s files at ``target`` (replacing what is there)."""
    if source.kind == "local":
        if not os.path.exists(target):
            raise InstallError(f"path does not exist: {target}")
        return
    check_owned(source, target)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    staging = tempfile.mkdtemp(prefix=".installing-", dir=os.path.dirname(target))
    try:
        if source.kind == "git":
            _clone(source, staging)
        elif source.kind == "npm":
            _unpack_npm(source, staging)
        else:
            _pip_install(source, staging)
        _replace(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def update(source: PackageSource, target: str) -> tuple[str | None, str | None]:
    """Bring an installed package up to date; returns its version (or commit) before and after."""
    before = version_of(source, target)
    if source.kind == "local":
        return before, before
    if source.kind == "git" and os.path.isdir(os.path.join(target, ".git")):
        _git(["fetch", "--quiet", "--tags", "origin"], target, source)
        if source.ref:
            _git(["checkout", "--quiet", "--force", source.ref], target, source)
        else:
            _git(["reset", "--quiet", "--hard", "@{upstream}"], target, source)
    else:
        install(source, target)
    return before, version_of(source, target)


def uninstall(source: PackageSource, target: str) -> None:
    """Delete a managed package folder; a local package's folder is the user's and stays."""
    if source.kind == "local":
        return
    check_owned(source, target)
    if not os.path.isdir(target):
        return
    with _folder_lock(target):
        check_owned(source, target)
        if os.path.isdir(target):
            shutil.rmtree(target)


def check_owned(source: PackageSource, target: str) -> None:
    """Raise ``InstallError`` unless ``target`` is missing, or a folder tau may replace or delete
    for ``source`` (see the module's docstring)."""
    if source.kind == "local":
        return
    if os.path.islink(target):
        raise InstallError(f"{target} is a symbolic link, not a package tau installed: nothing was changed")
    if not os.path.exists(target):
        return
    if not os.path.isdir(target):
        raise InstallError(f"{target} is a file, not a package tau installed: move it away, then try again")
    try:
        names = os.listdir(target)
    except OSError as exc:
        raise InstallError(f"cannot read {target}: {exc.strerror or exc}") from None
    if not names:
        return
    if source.kind == "git":
        owned = ".git" in names
    elif source.kind == "npm":
        owned = "package.json" in names
    else:
        owned = any(name.endswith(".dist-info") for name in names)
    if not owned:
        marker = {"git": "no .git", "npm": "no package.json", "pip": "no *.dist-info"}[source.kind]
        raise InstallError(
            f"{target} is not a package tau installed ({marker}): move it away, then try again"
        )


def version_of(source: PackageSource, target: str) -> str | None:
    """The installed version: a git commit (short), an npm or pip package's version."""
    if not os.path.exists(target):
        return None
    if source.kind == "git":
        done = process_groups.run(
            ["git", "rev-parse", "--short=7", "HEAD"], cwd=target, capture_output=True, text=True
        )
        return done.stdout.strip() or None if done.returncode == 0 else None
    if source.kind == "npm":
        import json

        try:
            with open(os.path.join(target, "package.json"), encoding="utf-8") as f:
                version = json.load(f).get("version")
        except (OSError, ValueError, AttributeError):
            return None
        return version if isinstance(version, str) else None
    if source.kind == "pip":
        from importlib.metadata import distributions

        for dist in distributions(path=[target]):
            if _normal(dist.metadata["Name"] or "") == _normal(source.name):
                return dist.version
    return None


def _normal(name: str) -> str:
    import re

    return re.sub(r"[-_.]+", "-", name.lower())


def _replace(staging: str, target: str) -> None:
    """Move ``staging`` to ``target`` under the folder's lock, so two installs of one package at once
    each move a whole copy in turn instead of tripping over each other's renames."""
    old = None
    with _folder_lock(target):
        if os.path.exists(target):
            old = tempfile.mkdtemp(prefix=".replaced-", dir=os.path.dirname(target))
            os.rename(target, os.path.join(old, "old"))
        os.rename(staging, target)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _folder_lock(target: str) -> contextlib.AbstractContextManager[None]:
    """The lock of a managed package folder, ``<folder>.lock`` (the format of the config files' locks)."""
    from pathlib import Path

    from tau.config.paths import file_lock

    return file_lock(Path(target), timeout_s=_FOLDER_LOCK_WAIT_S, follow_links=False)


# -- git -----------------------------------------------------------------------------------------


def _clone(source: PackageSource, folder: str) -> None:
    if shutil.which("git") is None:
        raise InstallError(f"cannot install {source.raw}: git is not installed")
    _git(["clone", "--quiet", source.spec, folder], None, source)
    if source.ref:
        found = process_groups.run(
            ["git", "rev-parse", "--verify", "--quiet", f"{source.ref}^{{commit}}"],
            cwd=folder,
            capture_output=True,
            text=True,
        )
        if found.returncode != 0:
            raise InstallError(f"git ref {source.ref!r} does not exist in {source.spec}")
        _git(["checkout", "--quiet", source.ref], folder, source)


def _git(args: list[str], cwd: str | None, source: PackageSource) -> None:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}  # never wait for a password nobody types
    done = process_groups.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["failed"])[-1]
        raise InstallError(f"git {args[0]} of {source.spec} failed: {last}")


# -- npm -----------------------------------------------------------------------------------------


def _unpack_npm(source: PackageSource, folder: str) -> None:
    """Fetch the package's tarball from the registry (no npm needed) and unpack it; its npm
    dependencies are not installed: tau uses a package's skills, prompts and themes only."""
    import httpx

    registry, document = _npm_document(source)
    try:
        version = _npm_version(source, document)
        tarball = document["versions"][version]["dist"]["tarball"]  # type: ignore[index]
        data = httpx.get(tarball, timeout=60, follow_redirects=True)
        data.raise_for_status()
    except httpx.HTTPError as exc:
        raise InstallError(f"cannot fetch {source.raw} from {registry}: {exc}") from None
    except (ValueError, KeyError, TypeError):
        raise InstallError(
            f"the registry's answer for {source.name!r} is not an npm package document"
        ) from None
    try:
        with tarfile.open(fileobj=io.BytesIO(data.content), mode="r:gz") as archive:
            archive.extractall(folder, filter="data")
    except (tarfile.TarError, OSError) as exc:
        raise InstallError(f"cannot unpack {source.raw}: {exc}") from None
    inner = os.path.join(folder, "package")  # npm tarballs hold one top folder, usually "package"
    tops = os.listdir(folder)
    if len(tops) == 1 and os.path.isdir(os.path.join(folder, tops[0])):
        inner = os.path.join(folder, tops[0])
        for name in os.listdir(inner):
            os.rename(os.path.join(inner, name), os.path.join(folder, name))
        os.rmdir(inner)


def npm_available_version(source: PackageSource) -> str:
    """The version the registry gives ``source``'s version or tag today."""
    _, document = _npm_document(source)
    try:
        return _npm_version(source, document)
    except (KeyError, TypeError):
        raise InstallError(
            f"the registry's answer for {source.name!r} is not an npm package document"
        ) from None


def _npm_document(source: PackageSource) -> tuple[str, dict[str, object]]:
    """The registry's URL and its package document for ``source``."""
    import httpx

    registry = (os.environ.get(NPM_REGISTRY_ENV) or _DEFAULT_REGISTRY).rstrip("/")
    url = f"{registry}/{quote(source.name, safe='@')}"
    try:
        response = httpx.get(url, headers={"Accept": "application/json"}, timeout=30, follow_redirects=True)
        if response.status_code == 404:
            raise InstallError(f"npm package {source.name!r} not found in {registry}")
        response.raise_for_status()
        document = response.json()
    except httpx.HTTPError as exc:
        raise InstallError(f"cannot fetch {source.raw} from {registry}: {exc}") from None
    except ValueError:
        raise InstallError(
            f"the registry's answer for {source.name!r} is not an npm package document"
        ) from None
    if not isinstance(document, dict):
        raise InstallError(f"the registry's answer for {source.name!r} is not an npm package document")
    return registry, document


def _npm_version(source: PackageSource, document: dict[str, object]) -> str:
    versions = document.get("versions")
    tags = document.get("dist-tags")
    if not isinstance(versions, dict) or not isinstance(tags, dict):
        raise KeyError("versions")
    wanted = source.version or "latest"
    if wanted in versions:
        return wanted
    if isinstance(tags.get(wanted), str):
        return str(tags[wanted])
    raise InstallError(
        f"npm package {source.name!r} has no version or tag {wanted!r} (tau takes exact versions and tags)"
    )


# -- pip -----------------------------------------------------------------------------------------


def _pip_install(source: PackageSource, folder: str) -> None:
    command = python_module_command("pip")  # nothing of the working folder is imported
    probe = process_groups.run([*command, "--version"], capture_output=True, text=True)
    if probe.returncode != 0:
        uv = shutil.which("uv")
        if uv is None:
            raise InstallError(
                f"cannot install {source.raw}: tau's Python has no pip (and uv is not installed)"
            )
        command = [uv, "pip"]
    args = [
        "install",
        "--target",
        folder,
        "--quiet",
        "--disable-pip-version-check",
        "--no-input",
        source.spec,
    ]
    done = process_groups.run(
        [*command, *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PIP_NO_INPUT": "1"},
    )
    if done.returncode != 0:
        reason = pip_error_line(done.stderr)
        raise InstallError(f"pip install {source.spec} failed: {reason or f'exit code {done.returncode}'}")


_PIP_NOISE = ("[notice]", "WARNING:", "hint:", "note:", "╰─>", "See above for output")


def pip_error_line(stderr: str) -> str:
    """The line of pip's (or uv's) stderr that says what went wrong: pip's last ``ERROR:`` line
    that is not the bare "ERROR: Exception:" before a traceback; else the exception a traceback
    ends with; else the last line that is not a notice, hint or note."""
    lines = [line.rstrip() for line in stderr.splitlines() if line.strip()]
    for line in reversed(lines):
        text = line.strip()
        if text.startswith("ERROR:") and text.rstrip(":") not in ("ERROR: Exception", "ERROR"):
            return text.removeprefix("ERROR:").strip()
    if any(line.startswith("Traceback (most recent call last)") for line in lines):
        for line in reversed(lines):
            if not line[:1].isspace() and not line.startswith(("Traceback", "During handling", "The above")):
                return line.strip()
    for line in reversed(lines):
        text = line.strip()
        if text.startswith(("×", "error:")) or not text.startswith(_PIP_NOISE):
            return text.removeprefix("×").strip()
    return ""
