"""Package source strings (``npm:``, ``git:``, a git URL, ``pip:``, a path), parsed as pi parses them.

Identity decides when two declarations are the same package: an npm package by name, a git package
by its repository without the ref, a pip package by its project name (or a path's absolute form),
a local one by its absolute path.
"""

from __future__ import annotations

import os
import re
from typing import Literal, TypeAlias
from urllib.parse import urlsplit

from msgspec import Struct

from tau._contained import PathEscapeError, contained_path, file_name_problem, shown
from tau.errors import TauError

__all__ = ["PackageSource", "SourceError", "parse_source"]

SourceKind: TypeAlias = Literal["npm", "git", "pip", "local"]

_URL_SCHEMES = ("https://", "http://", "ssh://", "git://", "file://")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
_PIP_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_NPM_SPEC = re.compile(r"^((?:@[^/@\s]+/)?[^/@\s]+)(?:@(.+))?$")


class SourceError(TauError, ValueError):
    """A source string tau cannot use; the message is one line for the user."""


class PackageSource(Struct, frozen=True):
    kind: SourceKind
    raw: str
    spec: str
    """npm: ``name[@version]``; git: the repository URL (no ref); pip: the requirement; local: the path."""
    name: str
    ref: str | None = None
    host: str = ""
    repo_path: str = ""

    @property
    def version(self) -> str | None:
        """An npm source's version or tag (``None``: latest)."""
        if self.kind != "npm":
            return None
        return self.ref

    def identity(self, base_dir: str) -> str:
        if self.kind == "local":
            return f"local:{os.path.normpath(os.path.join(base_dir, os.path.expanduser(self.spec)))}"
        if self.kind == "git":
            return f"git:{_normal_repo(self.spec)}"
        return f"{self.kind}:{_pip_folder(self.name) if self.kind == 'pip' else self.name}"

    def install_dir(self, base_dir: str) -> str:
        """Where the package's files are: the managed folder, or the local path itself.

        A managed folder is always strictly inside its kind's folder (``<base>/git/<host>``,
        ``<base>/npm/node_modules``, ``<base>/pip``), also once symlinks are followed; a source
        that would lead elsewhere raises ``SourceError``, so nothing outside is ever replaced or
        deleted."""
        if self.kind == "local":
            return os.path.normpath(os.path.join(base_dir, os.path.expanduser(self.spec)))
        try:
            # the kind's folder itself must not be a link out of the base either
            if self.kind == "git":
                host = contained_path(contained_path(base_dir, "git"), self.host)
                return contained_path(host, self.repo_path)
            if self.kind == "npm":
                return contained_path(contained_path(base_dir, "npm", "node_modules"), self.name)
            return contained_path(contained_path(base_dir, "pip"), _pip_folder(self.name))
        except PathEscapeError as exc:
            raise SourceError(
                f"package source {shown(self.raw)} cannot be installed: {_one_line(exc)}"
            ) from None


def parse_source(raw: str, *, cwd: str | None = None) -> PackageSource:
    """The package ``raw`` names. ``cwd`` resolves a ``pip:`` path; unknown schemes raise ``SourceError``."""
    text = raw.strip()
    if not text:
        raise SourceError("empty package source")
    if any(ord(c) < 32 or ord(c) == 127 for c in text):
        raise SourceError(
            f"package source {shown(text)} holds a control character (such as NUL or a line break)"
        )
    if text.startswith("npm:"):
        return _npm(text)
    if text.startswith("pip:"):
        return _pip(text, cwd)
    if text.startswith("git:") or text.startswith(_URL_SCHEMES) or text.startswith("git@"):
        return _git(text)
    if _is_local(text):
        return PackageSource("local", text, text, os.path.basename(os.path.normpath(text)))
    if match := _SCHEME.match(text):
        raise SourceError(
            f"unknown package source scheme {match.group(1)!r} in {text!r}: use npm:, git:, pip:, a git URL or a path"
        )
    return PackageSource("local", text, text, os.path.basename(os.path.normpath(text)))


def _is_local(text: str) -> bool:
    return text.startswith((".", "/", "~")) or os.path.exists(os.path.expanduser(text))


def _npm(text: str) -> PackageSource:
    spec = text[len("npm:") :].strip()
    match = _NPM_SPEC.match(spec)
    if match is None:
        raise SourceError(f"not an npm package name: {text!r}")
    name = match.group(1)
    for part in name.split("/"):
        if (problem := file_name_problem(part.removeprefix("@"))) is not None:
            raise SourceError(f"not an npm package name: {shown(text)} (a part of the name {problem})")
    return PackageSource("npm", text, spec, name, ref=match.group(2))


def _pip(text: str, cwd: str | None) -> PackageSource:
    spec = text[len("pip:") :].strip()
    if not spec:
        raise SourceError("pip: needs a requirement, e.g. pip:my-tau-tools or pip:./folder")
    if _is_local(spec) or spec.endswith((".whl", ".tar.gz", ".zip")):
        path = os.path.abspath(os.path.join(cwd or os.getcwd(), os.path.expanduser(spec)))
        stem = os.path.basename(path.rstrip("/"))
        name = stem.split("-")[0] if stem.endswith(".whl") else re.split(r"-\d", stem)[0]
        return PackageSource("pip", f"pip:{path}", path, name.replace("_", "-") or "package")
    match = _PIP_NAME.match(spec)
    if match is None:
        raise SourceError(f"not a pip requirement: {text!r}")
    return PackageSource("pip", text, spec, match.group(1))


def _git(text: str) -> PackageSource:
    url = text[len("git:") :].strip() if text.startswith("git:") else text
    ref: str | None = None
    at = url.rfind("@")
    if at > max(url.rfind("/"), url.rfind(":")):
        url, ref = url[:at], url[at + 1 :] or None
    if not url.startswith(_URL_SCHEMES) and not url.startswith("git@"):
        url = f"https://{url}"
    host, path = _host_and_path(url)
    if not path:
        raise SourceError(f"not a git repository URL: {text!r}")
    if (problem := file_name_problem(host)) is not None:
        raise SourceError(f"not a git repository URL: {shown(text)} (its host {problem})")
    for part in path.split("/"):
        if part in (".", ".."):
            raise SourceError(
                f"git source {shown(text)} has {part!r} in its path: write the path without '.' or '..'"
            )
        if (problem := file_name_problem(part)) is not None and part:
            raise SourceError(f"not a git repository URL: {shown(text)} (a part of its path {problem})")
    return PackageSource("git", text, url, path.rsplit("/", 1)[-1], ref=ref, host=host, repo_path=path)


def _host_and_path(url: str) -> tuple[str, str]:
    if url.startswith("git@"):  # scp form: git@host:owner/repo
        host, _, path = url[len("git@") :].partition(":")
    else:
        parts = urlsplit(url)
        host, path = parts.hostname or "local", parts.path
    path = path.strip("/")
    path = path[: -len(".git")] if path.endswith(".git") else path
    return host, path


def _one_line(exc: Exception) -> str:
    return " ".join(str(exc).split())


def _normal_repo(url: str) -> str:
    url = url.rstrip("/")
    return url[: -len(".git")] if url.endswith(".git") else url


def _pip_folder(name: str) -> str:
    """A project name in pip's normal form (``My_Tools`` and ``my-tools`` are one project)."""
    return re.sub(r"[-_.]+", "-", name.lower())
