"""``tau install / remove / list / update``: the packages of the ``packages`` setting, as pi's commands.

``install`` puts a package in tau's managed folders and records it in settings.json (``-l``: the
project's ``.tau/settings.json``, which needs the folder's trust); ``remove`` undoes both; ``list``
shows what is declared and what tau takes from each package; ``update`` fetches newer versions
(pinned git refs and npm versions stay). A package's resources load on the next start. Any
failure is one line on stderr, exit code 1, and settings.json stays as it was.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

from tau.errors import TauError

__all__ = ["PACKAGE_COMMANDS", "run_package_command"]

PACKAGE_COMMANDS = ("install", "remove", "uninstall", "list", "update", "config")

HELP = """\
Usage:
  tau install <source> [-l]     Install a package and add it to settings.json
  tau remove <source> [-l]      Remove a package and its settings entry (alias: uninstall)
  tau list                      List the packages of the user's and the project's settings
  tau update [<source>]         Update all packages, or one (--extensions, --extension <source>)
  tau update --self [--force]   Update tau itself (also: tau update self); --force reinstalls it
  tau update --all [--force]    Update tau and all packages
  tau update --models           Refresh the model lists gateways keep per account (Radius)
  tau config [-l]               Switch package resources and built-in extensions on or off (in a
                                terminal; elsewhere it prints which load ([x]) and which do not)
  tau config enable|disable <source> <path> [-l]
                                Switch one resource (a path inside the package) on or off

Sources:
  pip:<requirement>             A Python package, pip-installed into <agent dir>/pip/<name>
                                (a requirement, a wheel, or a folder: pip:./my-tools)
  git:<url>[@ref], <git URL>    A git repository, cloned into <agent dir>/git/<host>/<path>
  npm:<name>[@version]          A pi package from the npm registry ($npm_config_registry), unpacked
                                into <agent dir>/npm/node_modules/<name>: its skills and prompts
                                load; TypeScript extensions do not
  <path>                        A local folder (or one extension file), used where it is

Options:
  -l, --local                   Use the project's .tau/settings.json and .tau/ folders
  -a, --approve                 Trust this folder's project files for this command
"""


class _PackageUsageError(TauError):
    pass


def run_package_command(argv: list[str]) -> int:
    """Run ``tau <command> ...``; returns the exit code."""
    command, rest = argv[0], argv[1:]
    if any(a in ("-h", "--help") for a in rest):
        print(HELP, end="")
        return 0
    from tau.packages.installers import InstallError
    from tau.packages.sources import SourceError

    if command == "update" and rest == ["--models"]:
        return _update_models()
    try:
        if command == "update":
            return _update_command(rest)
        words, local, approve = _parse(rest)
        if command == "install":
            return _install(_one(words, command), local, approve)
        if command in ("remove", "uninstall"):
            return _remove(_one(words, command), local, approve)
        if command == "list":
            if words:
                raise _PackageUsageError("usage: tau list")
            return _list(approve)
        if command == "config":
            return _config(words, local, approve)
        raise AssertionError(command)
    except (_PackageUsageError, SourceError, InstallError) as exc:
        print(f"tau: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"tau: {exc}", file=sys.stderr)
        return 1


def _parse(argv: list[str]) -> tuple[list[str], bool, bool | None]:
    words: list[str] = []
    local = False
    approve: bool | None = None
    for arg in argv:
        if arg in ("-l", "--local"):
            local = True
        elif arg in ("-a", "--approve"):
            approve = True
        elif arg in ("-na", "--no-approve"):
            approve = False
        elif arg.startswith("-") and len(arg) > 1:
            raise _PackageUsageError(f"unknown option {arg} (see: tau install --help)")
        else:
            words.append(arg)
    return words, local, approve


def _one(words: list[str], command: str) -> str:
    if len(words) != 1:
        raise _PackageUsageError(f"usage: tau {command} <source> [-l]")
    return words[0]


class _Context:
    """The folders and settings one command works on."""

    def __init__(self, approve: bool | None, *, need_project: bool) -> None:
        from tau.config.paths import agent_dir
        from tau.config.project_trust import ProjectTrust
        from tau.config.settings import SettingsManager

        self.cwd = os.getcwd()
        self.agent_dir = str(agent_dir())
        default = SettingsManager.create(self.cwd, self.agent_dir, project=False).default_project_trust
        self.trusted = ProjectTrust(self.agent_dir, override=approve, default=default).is_trusted(self.cwd)
        if need_project and not self.trusted:
            raise _PackageUsageError(
                "this folder is not trusted, so its project packages are not changed: "
                "start tau here and trust it, or pass --approve"
            )
        self.settings = SettingsManager.create(self.cwd, self.agent_dir, project=self.trusted)
        self.errors: dict[str, list[str]] = {"global": [], "project": []}
        for error in self.settings.drain_errors():
            self.errors[error.scope].append(error.error.message)

    def check_writable(self, local: bool) -> None:
        """A settings file tau cannot read is never written over: stop before changing anything."""
        for message in self.errors["project" if local else "global"]:
            raise _PackageUsageError(f"{message} (fix it first; nothing was changed)")

    def warn(self) -> None:
        for message in self.errors["global"] + self.errors["project"]:
            print(f"tau: warning: {message}", file=sys.stderr)

    def base(self, local: bool) -> str:
        return os.path.join(self.cwd, ".tau") if local else self.agent_dir

    def record(self, local: bool, change: Callable[[list[Any]], None]) -> None:
        """Edit the scope's ``packages`` list as its settings file holds it now: under the file's
        lock, so packages another tau or pi records meanwhile are kept. ``change`` may raise
        ``_PackageUsageError``; then nothing is written."""
        from tau.config.settings import SettingsScope

        scope: SettingsScope = "project" if local else "global"

        def apply(current: dict[str, Any]) -> None:
            value = current.get("packages")
            entries = list(value) if isinstance(value, list) else []
            change(entries)
            if entries:
                current["packages"] = entries
            else:
                current.pop("packages", None)

        self.settings.update(apply, scope=scope)
        for error in self.settings.drain_errors():
            raise _PackageUsageError(f"{error.error.message} (the change was not recorded)")


def _install(raw: str, local: bool, approve: bool | None) -> int:
    from tau.packages.configured import ConfiguredPackage, entry_source
    from tau.packages.installers import install
    from tau.packages.sources import parse_source

    context = _Context(approve, need_project=local)
    context.check_writable(local)
    base = context.base(local)
    source = parse_source(raw, cwd=context.cwd)
    recorded = source.raw
    if source.kind == "local":
        path = os.path.abspath(os.path.join(context.cwd, os.path.expanduser(source.spec)))
        if not os.path.exists(path):
            raise _PackageUsageError(f"path does not exist: {path}")
        recorded = os.path.relpath(path, base) if not source.spec.startswith("~") else source.spec
        source = parse_source(recorded if os.path.isabs(recorded) else os.path.join(base, recorded))
    identity = source.identity(base)
    target = source.install_dir(base)
    print(f"Installing {raw}...", flush=True)
    install(source, target)

    def add(entries: list[Any]) -> None:
        replaced = False
        for index, entry in enumerate(entries):
            existing = entry_source(entry)
            if existing is not None and _identity(existing, base) == identity:
                entries[index] = {**entry, "source": recorded} if isinstance(entry, dict) else recorded
                replaced = True
        if not replaced:
            entries.append(recorded)

    context.record(local, add)
    print(f"Installed {raw}")
    package = ConfiguredPackage("project" if local else "user", recorded, source, base, target)
    for line in _describe(package):
        print(f"  {line}")
    return 0


def _identity(raw: str, base: str) -> str | None:
    from tau.packages.sources import SourceError, parse_source

    try:
        return parse_source(raw, cwd=base).identity(base)
    except SourceError:
        return None


def _remove(raw: str, local: bool, approve: bool | None) -> int:
    from tau.packages.configured import entry_source
    from tau.packages.installers import check_owned, uninstall
    from tau.packages.sources import parse_source

    context = _Context(approve, need_project=local)
    context.check_writable(local)
    base = context.base(local)
    source = parse_source(raw, cwd=context.cwd)
    if source.kind == "local":
        source = parse_source(os.path.abspath(os.path.join(context.cwd, os.path.expanduser(source.spec))))
    identity = source.identity(base)
    target = source.install_dir(base)
    check_owned(source, target)  # before the settings change: a refusal changes nothing

    def drop(entries: list[Any]) -> None:
        kept = [e for e in entries if (s := entry_source(e)) is None or _identity(s, base) != identity]
        if len(kept) == len(entries):
            where = "the project's" if local else "the user's"
            raise _PackageUsageError(
                f"no matching package found for {raw} in {where} settings (see: tau list)"
            )
        entries[:] = kept

    context.record(local, drop)
    uninstall(source, target)
    print(f"Removed {raw}")
    return 0


def _list(approve: bool | None) -> int:
    from tau.packages.configured import configured_packages, declared_scopes

    context = _Context(approve, need_project=False)
    context.warn()
    packages, problems = configured_packages(declared_scopes(context.settings))
    if not packages and not problems:
        print("No packages installed.")
    for scope, title in (("user", "User packages:"), ("project", "Project packages:")):
        mine = [p for p in packages if p.scope == scope]
        if not mine:
            continue
        print(title)
        for package in mine:
            filtered = " (filtered)" if package.filters is not None else ""
            pi = " (.pi/settings.json)" if package.from_pi else ""
            print(f"  {package.source.raw}{filtered}{pi}")
            print(f"    {package.install_dir}")
            for line in _describe(package):
                print(f"    {line}")
    for problem in problems:
        print(f"tau: warning: {problem}", file=sys.stderr)
    if not context.trusted and any(
        os.path.isfile(os.path.join(context.cwd, name, "settings.json")) for name in (".tau", ".pi")
    ):
        print("(the project's packages are not read: this folder is not trusted)")
    return 0


def _describe(package: Any) -> list[str]:
    """What tau takes from an installed package, one line per kind, and what it cannot load."""
    if not package.installed:
        return [
            "not installed (pi installs it: pi update)"
            if package.from_pi
            else "not installed (run: tau update)"
        ]
    contents = package.contents()
    lines = []
    for kind, paths in contents.found.items():
        if not paths:
            continue
        names = ", ".join(_short(p, package.install_dir) for p in paths)
        lines.append(f"{kind}: {names}")
    for path, language in contents.not_loadable:
        lines.append(f"{_short(path, package.install_dir)}: not loadable ({language})")
    lines += contents.problems
    if package.source.kind == "pip":
        lines += _entry_point_lines(package.install_dir)
    return lines or ["nothing tau can load"]


def _entry_point_lines(folder: str) -> list[str]:
    from importlib.metadata import distributions

    names = [
        point.name
        for dist in distributions(path=[folder])
        for point in dist.entry_points
        if point.group == "tau.extensions"
    ]
    return [f"extensions (entry points): {', '.join(sorted(names))}"] if names else []


def _short(path: str, root: str) -> str:
    relative = os.path.relpath(path, root)
    return os.path.basename(path) if relative == "." else relative


def _update_command(rest: list[str]) -> int:
    """``tau update [<source>|self|tau] [--self|--extensions|--all] [--extension <source>] [--force]``:
    pi's targets. Without one, the packages are updated (pi updates itself then)."""
    from tau.cli.self_update import SelfUpdateError, self_update

    targets: set[str] = set()
    force = False
    kept: list[str] = []
    index = 0
    while index < len(rest):
        arg = rest[index]
        if arg in ("--self", "self", "tau"):
            targets.add("self")
        elif arg == "--all":
            targets |= {"self", "packages"}
        elif arg == "--extensions":
            targets.add("packages")
        elif arg == "--force":
            force = True
        elif arg == "--extension":
            if index + 1 >= len(rest) or rest[index + 1].startswith("-"):
                raise _PackageUsageError("--extension needs a package source (see: tau list)")
            kept.append(rest[index + 1])
            index += 1
        else:
            kept.append(arg)
        index += 1
    words, _, approve = _parse(kept)
    if len(words) > 1 or (words and targets):
        raise _PackageUsageError(
            "usage: tau update [<source> | self | --self | --extensions | --all] [--force]"
        )
    if force and "self" not in targets:
        raise _PackageUsageError("--force reinstalls tau itself: use it with --self or --all")
    if "self" in targets:
        from tau.config.paths import agent_dir
        from tau.config.settings import SettingsManager

        setting = SettingsManager.create(os.getcwd(), str(agent_dir()), project=False).get(
            "selfUpdateCommand"
        )
        try:
            self_update(setting, force=force)
        except SelfUpdateError as exc:
            print(f"tau: {exc}", file=sys.stderr)
            return 1
        if "packages" not in targets:
            return 0
    return _update(words[0] if words else None, approve)


def _update(raw: str | None, approve: bool | None) -> int:
    from tau.packages.configured import configured_packages, declared_scopes
    from tau.packages.installers import update

    context = _Context(approve, need_project=False)
    context.warn()
    packages, problems = configured_packages(declared_scopes(context.settings))
    for problem in problems:  # an entry tau cannot use (or would install outside its folder) is skipped
        print(f"tau: warning: {problem}", file=sys.stderr)
    if raw is not None:
        wanted = _identity_anywhere(raw, context)
        packages = [p for p in packages if p.source.identity(p.base_dir) in wanted]
        if not packages:
            raise _PackageUsageError(f"no matching package found for {raw} (see: tau list)")
    changed: list[str] = []
    done: set[str] = set()  # a project "autoload": false entry shares the user's copy
    for package in packages:
        if package.source.kind == "local" or package.install_dir in done or package.from_pi:
            continue  # .pi/settings.json packages are pi's to install and update (into .pi/)
        done.add(package.install_dir)
        print(f"Updating {package.source.raw}...", flush=True)
        before, after = update(package.source, package.install_dir)
        if before != after:
            changed.append(f"{package.source.raw} {before or '(none)'} -> {after or '(none)'}")
    if not changed:
        print(f"{raw} is already up to date" if raw else "Packages are already up to date")
    else:
        print(f"Updated {len(changed)} package{'s' if len(changed) != 1 else ''}:")
        for line in changed:
            print(f"  {line}")
    return 0


def _update_models() -> int:
    """pi's ``update --models``: a stale login skips its provider with a warning, other failures fail."""
    from tau.accounts.account_models import refresh_account_models
    from tau.accounts.model_registry import ModelRegistry

    registry = ModelRegistry.create()
    failures = []
    for provider, reason in refresh_account_models(registry).items():
        if registry.is_using_oauth_provider(provider):
            print(f"tau: skipped the model list of {provider}: {reason}", file=sys.stderr)
        else:
            failures.append(f"{provider}: {reason}")
    if failures:
        print(f"tau: Could not refresh model catalogs: {'; '.join(failures)}", file=sys.stderr)
        return 1
    print("Model catalogs refreshed")
    return 0


def _identity_anywhere(raw: str, context: _Context) -> set[str]:
    from tau.packages.sources import parse_source

    source = parse_source(raw, cwd=context.cwd)
    if source.kind == "local":
        source = parse_source(os.path.abspath(os.path.join(context.cwd, os.path.expanduser(source.spec))))
    return {source.identity(context.base(local)) for local in (False, True)}


def _config(words: list[str], local: bool, approve: bool | None) -> int:
    """Without words: each package's resources, on or off. ``enable|disable <source> <path>``
    writes pi's ``+path`` / ``-path`` filter into that package's entry (its object form)."""
    from tau.packages.configured import configured_packages, declared_scopes, entry_source

    context = _Context(approve, need_project=local and bool(words))
    if not words and sys.stdin.isatty() and sys.stdout.isatty():
        if local and not context.trusted:
            raise _PackageUsageError(
                "Project is not trusted. Use --approve to change the project's resource config."
            )
        import asyncio

        from tau.cli.config_tui import run_config_tui

        context.warn()
        return asyncio.run(run_config_tui(context.settings, local=local, project_available=context.trusted))
    packages, _ = configured_packages(declared_scopes(context.settings))
    if not words:
        scope = "project" if local else "user"
        mine = [p for p in packages if p.scope == scope and p.installed]
        if not mine:
            print("No packages installed.")
        for package in mine:
            print(package.source.raw)
            _print_switches(package)
        return 0
    if len(words) != 3 or words[0] not in ("enable", "disable"):
        raise _PackageUsageError("usage: tau config enable|disable <source> <path> [-l]")
    context.check_writable(local)
    action, raw, path = words
    base = context.base(local)
    wanted = _identity_anywhere(raw, context)
    chosen = next((p for p in packages if p.source.identity(p.base_dir) in wanted), None)
    if chosen is None or not chosen.installed:
        raise _PackageUsageError(
            f"no installed package {raw} in the {'project' if local else 'user'} settings"
        )
    from tau.packages.switches import switch_pattern, switched_entry

    try:
        kind, pattern = switch_pattern(chosen, path)
    except ValueError as exc:
        raise _PackageUsageError(str(exc)) from None

    def switch(entries: list[Any]) -> None:
        index = next(
            (
                i
                for i, e in enumerate(entries)
                if (s := entry_source(e)) is not None and _identity(s, base) in wanted
            ),
            None,
        )
        if index is None:
            raise _PackageUsageError(
                f"no installed package {raw} in the {'project' if local else 'user'} settings"
            )
        entries[index] = switched_entry(entries[index], kind, pattern, on=action == "enable")

    context.record(local, switch)
    print(
        f"{'Enabled' if action == 'enable' else 'Disabled'} {kind[:-1]} {pattern} of {raw} (from the next start)"
    )
    return 0


def _print_switches(package: Any) -> None:
    from tau.packages.switches import resource_switches

    for switch in resource_switches(package):
        mark = "x" if switch.on else " "
        print(f"  [{mark}] {switch.kind[:-1]:<9} {switch.pattern}")
