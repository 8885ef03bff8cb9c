"""Project trust: whether a working folder's own code and configuration may load.

A folder's ``.tau/extensions`` (and pi's ``.pi/extensions``) run Python inside tau, and its settings, skills, prompt templates and
system-prompt files steer what tau does, so none of them load until the user trusts the folder.
Context files (AGENTS.md, CLAUDE.md) are plain text for the model and load regardless.

Decisions are remembered per folder in ``<agent dir>/trust.json``, pi's format: an object mapping
canonical folder paths to ``true`` (trusted) or ``false`` (not trusted); the closest saved folder at
or above the cwd applies. The order of precedence: ``--approve`` / ``--no-approve``; a folder with
nothing to protect is trusted unless a decision says otherwise; a saved decision; the global
``defaultProjectTrust`` setting (``"ask"``, ``"always"``, ``"never"``). Only the terminal UI can
ask, and only at start-up; everywhere else "ask" means "not trusted".

A damaged trust.json is never read as trust: its decisions are ignored (so tau asks again), it is
reported, and it is not overwritten (the user may want to repair it).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal, TypeAlias

from msgspec import Struct

from tau.config.config_errors import ConfigError
from tau.config.paths import CONFIG_DIR_NAME, forget_old_lock_file, update_json_file
from tau.context.project_dirs import project_dirs
from tau.context.skill_dirs import default_skill_dirs

__all__ = [
    "TRUST_FILE",
    "DefaultProjectTrust",
    "ProjectTrust",
    "SavedDecision",
    "TrustOption",
    "TrustStore",
    "TrustUpdate",
    "canonical_folder",
    "has_trust_requiring_resources",
    "trust_options",
    "trust_question",
]

TRUST_FILE = "trust.json"
DefaultProjectTrust: TypeAlias = Literal["ask", "always", "never"]

# What in <cwd>/.tau or <cwd>/.pi makes tau load something. A bare folder (sessions, say) asks
# nothing. mcp.json starts programs (or reaches servers), so it is project code.
_PROTECTED_ENTRIES = (
    "settings.json",
    "extensions",
    "skills",
    "prompts",
    "themes",
    "SYSTEM.md",
    "APPEND_SYSTEM.md",
    "mcp.json",
)


def canonical_folder(path: str | os.PathLike[str]) -> str:
    """The key a folder is saved under: absolute, symlinks resolved."""
    return os.path.realpath(os.path.abspath(os.fspath(path)))


def has_trust_requiring_resources(cwd: str, *, home: str | None = None) -> bool:
    """Whether ``cwd`` has something trust would let load: an entry of ``.tau`` or pi's ``.pi`` that
    tau reads, or a project ``.agents/skills`` folder the skill loader would read (cwd up to the git root). The
    user's own ``~/.agents/skills`` is a user resource, even when tau runs in the home folder."""
    folder = canonical_folder(cwd)
    for config in project_dirs(folder):
        if any(os.path.exists(os.path.join(config, entry)) for entry in _PROTECTED_ENTRIES):
            return True
    user_skills = canonical_folder(os.path.join(home or str(Path.home()), ".agents", "skills"))
    return any(
        source == "project" and os.path.isdir(path) and canonical_folder(path) != user_skills
        for path, source, _ in default_skill_dirs(folder, os.path.join(folder, CONFIG_DIR_NAME), home=home)
    )


class SavedDecision(Struct, frozen=True):
    """A decision found in trust.json: the folder it was saved for, and whether that is trust."""

    path: str
    trusted: bool


class TrustUpdate(Struct, frozen=True):
    """One change to trust.json; ``trusted=None`` removes the folder's entry."""

    path: str
    trusted: bool | None


class TrustStore:
    """``<agent dir>/trust.json``, read and written under its lock like the other shared files."""

    def __init__(self, agent_dir: str | os.PathLike[str]) -> None:
        self.path = Path(os.path.abspath(os.fspath(agent_dir))) / TRUST_FILE

    def entry(self, cwd: str) -> SavedDecision | None:
        """The decision saved for ``cwd`` or its closest saved parent; ``ConfigError`` if the file is damaged."""
        forget_old_lock_file(self.path)
        data = self._read()
        folder = canonical_folder(cwd)
        while True:
            value = data.get(folder)
            if isinstance(value, bool):
                return SavedDecision(folder, value)
            parent = os.path.dirname(folder)
            if parent == folder:
                return None
            folder = parent

    def update(self, updates: Iterable[TrustUpdate]) -> None:
        """Apply ``updates`` and write the file (keys sorted, as pi writes it); ``ConfigError`` if the
        file is damaged (it is left as it is) or cannot be written. The file is read again under its lock and only these folders' entries
        change, so decisions another process saved meanwhile are kept."""

        def apply(data: dict[str, Any]) -> None:
            for change in updates:
                key = canonical_folder(change.path)
                data.pop(key, None)
                if change.trusted is not None:
                    data[key] = change.trusted

        def dump(data: dict[str, Any]) -> str:
            return json.dumps({key: data[key] for key in sorted(data)}, indent=2) + "\n"

        try:
            update_json_file(
                self.path, apply, read=lambda _: dict(self._read()), dump=dump, follow_links=False
            )
        except OSError as error:
            raise ConfigError(self.path, f"cannot write file: {error}") from error

    def _read(self) -> dict[str, bool | None]:
        try:
            text = self.path.read_text(encoding="utf-8-sig")
        except FileNotFoundError:
            return {}
        except (OSError, UnicodeDecodeError) as error:
            raise ConfigError(self.path, f"cannot read file: {error}") from error
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError as error:
            raise ConfigError(
                self.path, f"invalid JSON: {error.msg}", line=error.lineno, column=error.colno
            ) from error
        if not isinstance(parsed, dict):
            raise ConfigError(self.path, "expected an object mapping folders to true or false")
        for key, value in parsed.items():
            if value is not None and not isinstance(value, bool):
                raise ConfigError(self.path, f"the value for {json.dumps(key)} must be true, false or null")
        return parsed


class TrustOption(Struct, frozen=True):
    """One answer to the trust question: its label, what it decides for this run, what it saves."""

    label: str
    trusted: bool
    updates: tuple[TrustUpdate, ...] = ()
    saved_path: str | None = None


def trust_options(cwd: str, *, session_only: bool = True) -> list[TrustOption]:
    """The answers, in pi's order and words; ``session_only`` adds the answers that save nothing."""
    folder = canonical_folder(cwd)
    parent = os.path.dirname(folder)
    options = [TrustOption("Trust", True, (TrustUpdate(folder, True),), folder)]
    if parent != folder:
        # The parent's entry covers this folder only once this folder's own entry is gone.
        updates = (TrustUpdate(parent, True), TrustUpdate(folder, None))
        options.append(TrustOption(f"Trust parent folder ({parent})", True, updates, parent))
    if session_only:
        options.append(TrustOption("Trust (this session only)", True))
    options.append(TrustOption("Do not trust", False, (TrustUpdate(folder, False),), folder))
    if session_only:
        options.append(TrustOption("Do not trust (this session only)", False))
    return options


def trust_question(cwd: str) -> tuple[str, str]:
    """The start-up question's title and message."""
    return (
        "Trust project folder?",
        f"{canonical_folder(cwd)}\n\nThis lets tau load the folder's {CONFIG_DIR_NAME} and .pi settings, skills, "
        "prompt templates and system prompt files, and run its extensions.",
    )


class ProjectTrust:
    """The trust decisions of one tau process, made once per folder and kept for its life.

    ``override`` is ``--approve`` (True) / ``--no-approve`` (False); ``default`` the
    ``defaultProjectTrust`` setting. ``warnings`` collects one-line problems (a damaged trust.json)
    for the caller to show. (A plain class: start-up pays for every dataclass.)"""

    def __init__(
        self,
        agent_dir: str,
        *,
        override: bool | None = None,
        default: DefaultProjectTrust = "ask",
        home: str | None = None,
    ) -> None:
        self.agent_dir = agent_dir
        self.override = override
        self.default = default
        self.home = home
        self.warnings: list[str] = []
        self._decided: dict[str, bool] = {}
        self._reported: set[str] = set()

    @property
    def store(self) -> TrustStore:
        return TrustStore(self.agent_dir)

    def saved(self, cwd: str) -> SavedDecision | None:
        """The saved decision for ``cwd``; a damaged file counts as none and is reported once."""
        try:
            return self.store.entry(cwd)
        except ConfigError as error:
            self._warn(f"{error.message}; saved trust decisions are ignored until it is fixed or removed")
            return None

    def asks_extensions(self, cwd: str) -> bool:
        """Whether the ``project_trust`` event should decide first for ``cwd``: no ``-a`` / ``-na``,
        no decision made in this run yet, and something to protect (saved decisions and
        ``defaultProjectTrust`` come after the extensions' answer, as in pi 1.6)."""
        folder = canonical_folder(cwd)
        return (
            self.override is None
            and folder not in self._decided
            and has_trust_requiring_resources(folder, home=self.home)
        )

    def decide(self, cwd: str, trusted: bool, *, remember: bool = False) -> None:
        """An extension's decision for ``cwd``; ``remember`` saves it for the folder itself."""
        folder = canonical_folder(cwd)
        self._decided[folder] = trusted
        if remember:
            self.save([TrustUpdate(folder, trusted)])

    def needs_question(self, cwd: str) -> bool:
        """Whether nothing decides for ``cwd`` yet, so a UI that can ask should."""
        folder = canonical_folder(cwd)
        if self.override is not None or folder in self._decided or self.default != "ask":
            return False
        return has_trust_requiring_resources(folder, home=self.home) and self.saved(folder) is None

    def is_trusted(self, cwd: str, *, saved_under: str | None = None) -> bool:
        """The decision for ``cwd`` without asking (unanswered "ask" is not trust); kept for later calls.
        ``saved_under`` names the folder whose saved decision applies when ``cwd`` is a copy of it."""
        folder = canonical_folder(cwd)
        if folder not in self._decided:
            self._decided[folder] = self._decide(folder, saved_under or folder)
        return self._decided[folder]

    def answer(self, cwd: str, option: TrustOption | None) -> bool:
        """Record the user's answer to the question for ``cwd`` (``None``: dismissed, not trusted) and
        save what it saves. A save that fails is reported; the answer still holds for this run."""
        trusted = option.trusted if option is not None else False
        self._decided[canonical_folder(cwd)] = trusted
        if option is not None and option.updates:
            self.save(option.updates)
        return trusted

    def save(self, updates: Sequence[TrustUpdate]) -> bool:
        """Write ``updates`` to trust.json; False (and a warning) when that fails."""
        try:
            self.store.update(updates)
        except (ConfigError, OSError) as error:
            problem = error.message if isinstance(error, ConfigError) else str(error)
            self._warn(f"{problem}; the trust decision was not saved")
            return False
        return True

    def _decide(self, folder: str, saved_under: str) -> bool:
        if self.override is not None:
            return self.override
        found = self.saved(saved_under)
        if not has_trust_requiring_resources(folder, home=self.home):
            return found.trusted if found is not None else True
        if found is not None:
            return found.trusted
        return self.default == "always"

    def _warn(self, message: str) -> None:
        if message not in self._reported:
            self._reported.add(message)
            self.warnings.append(message)
