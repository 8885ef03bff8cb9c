"""The session manager: an append-only tree of entries, a leaf pointer, and its JSONL file.

Appending makes a child of the leaf and moves the leaf to it; branching moves the leaf back to an
earlier entry. Nothing is edited or deleted. The file is written lazily: only once the session
holds an assistant message does it appear on disk (header and every entry so far, once), after
which each new entry is one appended, flushed line.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TypedDict

from tau._contained import contained_path
from tau.ai.transport.gc_pause import collector_paused
from tau.ai.types import ImageContent, JsonObject, TextContent, Usage
from tau.session.context import SessionContext, branch_system_message, build_session_context, path_to
from tau.session.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    ContextEditEntry,
    CustomEntry,
    CustomMessageEntry,
    LabelEntry,
    MessageEntry,
    ModelChangeEntry,
    SessionEntry,
    SessionHeader,
    SessionInfoEntry,
    ThinkingLevelChangeEntry,
    UsageEntry,
    entry_from_json,
    is_assistant_entry,
)
from tau.session.errors import EntryNotFoundError, SessionWriteError
from tau.session.ids import IdSource, ms_from_iso
from tau.session.jsonl import (
    RawSessionFile,
    append_lines,
    back_up,
    check_writable,
    dump_line,
    read_session_file,
    record_line,
    rewrite_file,
)
from tau.session.messages import (
    BranchSummaryMessage,
    CompactionSummaryMessage,
    SessionMessage,
    SystemMessage,
)
from tau.session.migrations import migrate_objects
from tau.session.paths import resolve_session_dir, session_file_name
from tau.session.system_record import system_update
from tau.session.tree import Label, SessionTreeNode, apply_label, build_tree


class _EntryFields(TypedDict):
    id: str
    parent_id: str | None
    timestamp: str


_FREEZE_BYTES = 16_000_000


class SessionManager:
    """One session: header, entries, leaf, labels; persisted to a file or kept in memory."""

    def __init__(
        self,
        cwd: str,
        session_dir: str,
        *,
        persist: bool = True,
        ids: IdSource | None = None,
    ) -> None:
        """An empty session; prefer the ``create`` / ``open`` / ``continue_recent`` / ``in_memory``
        constructors."""
        self._cwd = cwd
        self._session_dir = session_dir
        self._persist = persist
        self._ids = ids or IdSource()
        self.warnings: list[str] = []
        """Problems met while reading files (skipped lines, unreadable entries); never fatal."""
        self._session_file: str | None = None
        self._reset(SessionHeader(id="", timestamp=""))
        if persist and session_dir:
            _make_folder(session_dir)

    # ------------------------------------------------------------------ constructors

    @classmethod
    def create(
        cls,
        cwd: str,
        session_dir: str | None = None,
        *,
        agent_dir: str | None = None,
        ids: IdSource | None = None,
    ) -> SessionManager:
        """A new session for ``cwd`` in ``session_dir`` (default: ``$TAU_SESSION_DIR`` or the
        project's folder under the agent dir)."""
        manager = cls(cwd, session_dir or resolve_session_dir(cwd, agent_dir=agent_dir), ids=ids)
        manager.new_session()
        return manager

    @classmethod
    def open(
        cls,
        path: str,
        session_dir: str | None = None,
        cwd_override: str | None = None,
        *,
        ids: IdSource | None = None,
    ) -> SessionManager:
        """The session in ``path`` (migrated if old). A missing file starts a new session that will
        be written to exactly that path; an empty or invalid one is replaced by a fresh header
        (its old content kept beside it as ``<path>.invalid``)."""
        path = os.path.abspath(path)
        with collector_paused(freeze=_is_big(path)):
            raw = read_session_file(path) if os.path.exists(path) else None
            header = _first_header(raw) if raw is not None else None
            cwd = cwd_override or (header.cwd if header is not None else "") or os.getcwd()
            manager = cls(cwd, session_dir or os.path.dirname(path), ids=ids)
            manager._adopt_file(path, raw)
        return manager

    @classmethod
    def continue_recent(
        cls,
        cwd: str,
        session_dir: str | None = None,
        *,
        agent_dir: str | None = None,
        ids: IdSource | None = None,
    ) -> SessionManager:
        """The session file of ``session_dir`` modified last, or a new session when there is none.

        Newer files that are unreadable or not sessions are named in ``warnings``."""
        from tau.session.listing import find_most_recent_session  # the listing only for -c

        directory = session_dir or resolve_session_dir(cwd, agent_dir=agent_dir)
        skipped: list[str] = []
        recent = find_most_recent_session(directory, skipped)
        if recent is None:
            manager = cls.create(cwd, directory, ids=ids)
        else:
            manager = cls(cwd, directory, ids=ids)
            manager.set_session_file(recent)
        manager.warnings[:0] = [f"-c skipped {problem}" for problem in skipped]
        if skipped and recent is None:
            manager.warnings.append(f"no session to continue in {directory}: starting a new one")
        return manager

    @classmethod
    def in_memory(cls, cwd: str | None = None, *, ids: IdSource | None = None) -> SessionManager:
        """A session that never touches the disk (``--no-session``)."""
        manager = cls(cwd or os.getcwd(), "", persist=False, ids=ids)
        manager.new_session()
        return manager

    @classmethod
    def fork_from(
        cls,
        source_path: str,
        target_cwd: str,
        session_dir: str | None = None,
        *,
        agent_dir: str | None = None,
        ids: IdSource | None = None,
    ) -> SessionManager:
        """Copy every entry of another session (all branches, same ids) into a new file for
        ``target_cwd``, written at once, with ``parentSession`` pointing at the source."""
        from tau.session.forking import write_fork

        directory = session_dir or resolve_session_dir(target_cwd, agent_dir=agent_dir)
        path = write_fork(source_path, target_cwd, directory, ids or IdSource())
        return cls.open(path, directory, ids=ids)

    # ------------------------------------------------------------------ switching sessions

    def new_session(self, id: str | None = None, parent_session: str | None = None) -> str | None:
        """Start a fresh session (new header, no entries); returns its future file path."""
        header = SessionHeader(
            id=id if id is not None else self._ids.session_id(),
            timestamp=self._ids.now_iso(),
            cwd=self._cwd,
            parent_session=parent_session,
        )
        self._reset(header)
        if self._persist:
            self._session_file = contained_path(
                self._session_dir, session_file_name(header.timestamp, header.id), follow_links=False
            )
        return self._session_file

    def set_session_file(self, path: str) -> None:
        """Switch to the session in ``path`` (see ``open`` for missing and invalid files)."""
        path = os.path.abspath(path)
        with collector_paused(freeze=_is_big(path)):
            self._adopt_file(path, read_session_file(path) if os.path.exists(path) else None)

    def _adopt_file(self, path: str, raw: RawSessionFile | None) -> None:
        if raw is None:
            self.new_session()
            self._session_file = path
            return
        self.warnings.extend(raw.warnings)
        header = _first_header(raw)
        if header is None:
            self._recover_invalid(path, raw)
            return
        objects = raw.objects()
        if migrate_objects(objects, self._ids.entry_id):
            header = SessionHeader.from_json(objects[0]) or header
            rewrite_file(path, (record_line(r) for r in raw.records))
            raw.ends_with_newline = True
        self._reset(header)
        self._session_file = path
        for obj in objects[1:]:
            if obj.get("type") == "session":
                continue  # a stray second header (older pi could write one): not an entry
            try:
                entry = entry_from_json(obj)
            except ValueError as exc:
                self.warnings.append(f"{path}: skipped an entry ({exc})")
                continue
            if entry.id in self._by_id:
                self.warnings.append(
                    f"{path}: entry {entry.id} appears twice; the first copy is used (both stay in the file)"
                )
                continue
            self._index(entry)
        self.warnings.extend(f"{path}: {problem}" for problem in _broken_links(self._entries, self._by_id))
        self._written = 1 + len(self._entries)
        self._newline_owed = not raw.ends_with_newline

    def _recover_invalid(self, path: str, raw: RawSessionFile) -> None:
        if raw.has_content:
            backup = back_up(path)
            self.warnings.append(
                f"{path}: not a session file; started a new session (old content in {backup})"
            )
        self.new_session()
        self._session_file = path
        rewrite_file(path, [dump_line(self._header.to_json())])
        self._written = 1

    def _reset(self, header: SessionHeader) -> None:
        self._header = header
        self._entries: list[SessionEntry] = []
        self._by_id: dict[str, SessionEntry] = {}
        self._labels: dict[str, Label] = {}
        self._leaf_id: str | None = None
        # The branch to one entry (root first), kept because a turn reads the current branch several
        # times and it can hold a hundred thousand entries; an entry appended below it extends it.
        self._branch_end: str | None = None
        self._branch: list[SessionEntry] = []
        self._has_assistant = False
        self._written = 0  # lines of [header, *entries] already in the file
        self._newline_owed = False  # the file ends in a partial line: start the next write on a new line

    def _index(self, entry: SessionEntry) -> None:
        if self._branch_end is not None:
            if entry.parent_id == self._branch_end and entry.id not in self._by_id:
                self._branch.append(entry)
                self._branch_end = entry.id
            elif entry.id in self._by_id or (self._branch and self._branch[0].parent_id == entry.id):
                # An id taken again, or the parent the kept branch stopped at for want of it.
                self._branch_end = None
        self._entries.append(entry)
        self._by_id[entry.id] = entry
        self._leaf_id = entry.id
        if isinstance(entry, LabelEntry):
            apply_label(self._labels, entry)
        elif not self._has_assistant and is_assistant_entry(entry):
            self._has_assistant = True

    # ------------------------------------------------------------------ writing

    def _append(self, entry: SessionEntry) -> str:
        self._index(entry)
        self._flush()
        return entry.id

    def _flush(self) -> None:
        """Write what is not yet on disk, once the session holds an assistant message."""
        if not self._persist or self._session_file is None or not self._has_assistant:
            return
        if self._written == 0:
            _make_folder(os.path.dirname(self._session_file))
            pending: list[SessionHeader | SessionEntry] = [self._header, *self._entries]
        else:
            pending = list(self._entries[self._written - 1 :])
        if not pending:
            return
        append_lines(
            self._session_file, [dump_line(e.to_json()) for e in pending], newline_first=self._newline_owed
        )
        self._written = 1 + len(self._entries)
        self._newline_owed = False

    def _base(self) -> _EntryFields:
        return {
            "id": self._ids.entry_id(self._by_id),
            "parent_id": self._leaf_id,
            "timestamp": self._ids.now_iso(),
        }

    def append_message(self, message: SessionMessage | SystemMessage) -> str:
        """Store a user, assistant, toolResult, bashExecution or custom message; returns the entry id.

        Summaries are not messages on disk: use ``append_compaction`` / ``branch_with_summary``."""
        if isinstance(message, BranchSummaryMessage | CompactionSummaryMessage):
            raise TypeError(f"{message.role} messages are stored as their own entry types, not as messages")
        return self._append(MessageEntry(message=message, **self._base()))

    def append_thinking_level_change(self, thinking_level: str) -> str:
        return self._append(ThinkingLevelChangeEntry(thinking_level=thinking_level, **self._base()))

    def append_model_change(self, provider: str, model_id: str) -> str:
        return self._append(ModelChangeEntry(provider=provider, model_id=model_id, **self._base()))

    def append_compaction(
        self,
        summary: str,
        first_kept_entry_id: str | None,
        tokens_before: int,
        details: object = None,
        from_hook: bool | None = None,
        usage: Usage | None = None,
    ) -> str:
        """Summarise the branch before ``first_kept_entry_id``. If the branch declares a prompt
        (pi 1.x system messages), the compaction records it as its checkpoint, as pi does.
        ``first_kept_entry_id`` ``None``: nothing before it is kept (pi's self-retaining
        compaction, whose ``firstKeptEntryId`` is its own id)."""
        base = self._base()
        if first_kept_entry_id is None:
            first_kept_entry_id = base["id"]
        checkpoint = self.branch_system_message()
        if checkpoint is not None:
            checkpoint.timestamp = ms_from_iso(base["timestamp"]) or checkpoint.timestamp
        entry = CompactionEntry(
            summary=summary,
            first_kept_entry_id=first_kept_entry_id,
            tokens_before=tokens_before,
            details=details,
            from_hook=from_hook,
            usage=usage,
            system_message=checkpoint,
            **base,
        )
        return self._append(entry)

    def record_system_prompt(self, sections: Mapping[str, str], tools: Sequence[JsonObject]) -> str | None:
        """State the prompt sections and tool declarations the next request uses: if they differ
        from what the branch's system messages replay to, append a system message with the
        difference (pi 1.x's record) and return its id; else ``None``."""
        update = system_update(self.branch_system_message(), sections, tools, 0)
        if update is None:
            return None  # no id or clock reading used: a session that never changes reads as before
        base = self._base()
        update.timestamp = ms_from_iso(base["timestamp"]) or 0
        return self._append(MessageEntry(message=update, **base))

    def append_usage(self, kind: str, provider: str, model: str, usage: Usage) -> str:
        """Model usage outside any reply (counted in totals, never in the context)."""
        entry = UsageEntry(kind=kind, provider=provider, model=model, usage=usage, **self._base())
        return self._append(entry)

    def append_context_edit(self, target_id: str, replacement: JsonObject | None) -> str:
        """From here on the branch's context shows ``target_id`` with ``replacement["content"]``,
        or without it (``None``). The target must be on the current branch."""
        if target_id not in {e.id for e in self.get_branch()}:
            raise EntryNotFoundError(target_id)
        entry = ContextEditEntry(target_id=target_id, replacement=replacement, **self._base())
        return self._append(entry)

    def append_custom_entry(self, custom_type: str, data: object = None) -> str:
        """Extension state (never sent to the model)."""
        return self._append(CustomEntry(custom_type=custom_type, data=data, **self._base()))

    def append_custom_message_entry(
        self,
        custom_type: str,
        content: str | list[TextContent | ImageContent],
        display: bool,
        details: object = None,
    ) -> str:
        """An extension's message that the model sees (as a user message)."""
        entry = CustomMessageEntry(
            custom_type=custom_type, content=content, display=display, details=details, **self._base()
        )
        return self._append(entry)

    def append_label_change(self, target_id: str, label: str | None = None) -> str:
        """Set (or with no label, clear) the label of an entry; the label entry becomes the leaf."""
        if target_id not in self._by_id:
            raise EntryNotFoundError(target_id)
        return self._append(LabelEntry(target_id=target_id, label=label, **self._base()))

    def append_session_info(self, name: str) -> str:
        """Set the display name (trimmed; an empty name clears it)."""
        return self._append(SessionInfoEntry(name=name.strip(), **self._base()))

    # ------------------------------------------------------------------ reading

    def is_persisted(self) -> bool:
        return self._persist

    def check_writable(self) -> None:
        """Raise ``SessionWriteError`` now if the session file (or its folder) cannot be written,
        rather than after the first paid-for reply."""
        if self._persist and self._session_file is not None:
            check_writable(self._session_file)

    def get_cwd(self) -> str:
        return self._cwd

    def get_session_dir(self) -> str:
        return self._session_dir

    def get_session_id(self) -> str:
        return self._header.id

    def get_session_file(self) -> str | None:
        return self._session_file

    def get_header(self) -> SessionHeader:
        return self._header

    def get_entries(self) -> list[SessionEntry]:
        """Every entry (all branches) in file order."""
        return list(self._entries)

    def get_entry(self, entry_id: str) -> SessionEntry | None:
        return self._by_id.get(entry_id)

    def get_leaf_id(self) -> str | None:
        return self._leaf_id

    def get_leaf_entry(self) -> SessionEntry | None:
        return self._by_id.get(self._leaf_id) if self._leaf_id is not None else None

    def get_children(self, parent_id: str) -> list[SessionEntry]:
        return [e for e in self._by_id.values() if e.parent_id == parent_id]

    def get_label(self, entry_id: str) -> str | None:
        label = self._labels.get(entry_id)
        return label.text if label else None

    def get_branch(self, from_id: str | None = None) -> list[SessionEntry]:
        """The entries from the root down to ``from_id`` (default: the leaf), all types."""
        return list(self._branch_to(from_id if from_id is not None else self._leaf_id))

    def _branch_to(self, entry_id: str | None) -> list[SessionEntry]:
        """The branch to ``entry_id``, kept for the next call (do not change the list)."""
        if entry_id is None:
            return []
        if entry_id != self._branch_end:
            self._branch = path_to(self._by_id.get(entry_id), self._by_id)
            self._branch_end = entry_id if self._branch else None
        return self._branch

    def get_tree(self) -> list[SessionTreeNode]:
        return build_tree(self._entries, self._labels)

    def get_session_name(self) -> str | None:
        """The name in the latest ``session_info`` entry; ``None`` if unset or cleared."""
        for entry in reversed(self._entries):
            if isinstance(entry, SessionInfoEntry):
                return (entry.name or "").strip() or None
        return None

    def build_session_context(self, *, system_messages: bool = False) -> SessionContext:
        """What the model sees: the messages of the current branch, compaction applied (with
        ``system_messages``, the branch's prompt records among them, as the agent holds them)."""
        with collector_paused():
            path = self._branch_to(self._leaf_id) if self._leaf_id in self._by_id else None
            return build_session_context(
                self._entries, self._leaf_id, self._by_id, path=path, system_messages=system_messages
            )

    def build_context_entries(self) -> list[SessionEntry]:
        """The current branch's entries that make the model's context, compaction applied (pi's
        ``buildContextEntries()``): after a compaction, it first, then the entries it kept."""
        from tau.session.context import context_entries

        return context_entries(self._branch_to(self._leaf_id) if self._leaf_id in self._by_id else [])

    def branch_system_message(self) -> SystemMessage | None:
        """``build_session_context().system_message`` without building the branch's messages."""
        if self._leaf_id is None or not self._entries:
            return None
        if self._leaf_id in self._by_id:
            return branch_system_message(self._branch_to(self._leaf_id))
        return branch_system_message(path_to(self._entries[-1], self._by_id))

    # ------------------------------------------------------------------ branching

    def branch(self, entry_id: str) -> None:
        """Move the leaf to an existing entry; the next append starts a new branch there."""
        if entry_id not in self._by_id:
            raise EntryNotFoundError(entry_id)
        self._leaf_id = entry_id

    def reset_leaf(self) -> None:
        """Leaf before the first entry: the next append becomes a new root."""
        self._leaf_id = None

    def branch_with_summary(
        self,
        entry_id: str | None,
        summary: str,
        details: object = None,
        from_hook: bool | None = None,
        usage: Usage | None = None,
    ) -> str:
        """Move the leaf to ``entry_id`` (``None``: before the root) and append a ``branch_summary``
        of the abandoned branch there; its ``fromId`` is the leaf left (``"root"`` when there was
        none), as pi 1.6 writes it."""
        if entry_id is not None and entry_id not in self._by_id:
            raise EntryNotFoundError(entry_id)
        from_id = self._leaf_id if self._leaf_id is not None else "root"
        self._leaf_id = entry_id
        entry = BranchSummaryEntry(
            from_id=from_id,
            summary=summary,
            details=details,
            from_hook=from_hook,
            usage=usage,
            **self._base(),
        )
        return self._append(entry)

    def create_branched_session(self, leaf_id: str) -> str | None:
        """Become a new session holding only the root → ``leaf_id`` path (labels re-added after it).

        Returns the new file path (written now if the path holds an assistant message, else lazily);
        ``None`` in memory."""
        path = self.get_branch(leaf_id)
        if not path:
            raise EntryNotFoundError(leaf_id)
        kept = [e for e in path if not isinstance(e, LabelEntry)]
        previous_file = self._session_file
        header = SessionHeader(
            id=self._ids.session_id(),
            timestamp=self._ids.now_iso(),
            cwd=self._cwd,
            parent_session=previous_file if self._persist else None,
        )
        on_path = {e.id for e in kept}
        taken = set(on_path)
        parent: str | None = kept[-1].id if kept else None
        labels: list[SessionEntry] = []
        for target_id, label in self._labels.items():
            if target_id not in on_path:
                continue
            relabel = LabelEntry(
                id=self._ids.entry_id(taken),
                parent_id=parent,
                timestamp=label.timestamp,
                target_id=target_id,
                label=label.text,
            )
            taken.add(relabel.id)
            labels.append(relabel)
            parent = relabel.id
        self._reset(header)
        for entry in (*kept, *labels):
            self._index(entry)
        if not self._persist:
            return None
        self._session_file = contained_path(
            self._session_dir, session_file_name(header.timestamp, header.id), follow_links=False
        )
        if self._has_assistant:
            rewrite_file(self._session_file, [dump_line(e.to_json()) for e in (header, *self._entries)])
            self._written = 1 + len(self._entries)
        return self._session_file

    def export_branch(self, output_path: str) -> str:
        """Write the current branch to ``output_path`` as a standalone session file: a fresh header
        (same session id) and the branch's entries with their parents re-chained in a line."""
        lines = [
            dump_line(
                SessionHeader(id=self._header.id, timestamp=self._ids.now_iso(), cwd=self._cwd).to_json()
            )
        ]
        previous: str | None = None
        for entry in self.get_branch():
            data: JsonObject = entry.to_json()
            data["parentId"] = previous
            lines.append(dump_line(data))
            previous = entry.id
        output_path = os.path.abspath(output_path)
        os.makedirs(os.path.dirname(output_path), exist_ok=True)
        rewrite_file(output_path, lines)
        return output_path


def _is_big(path: str) -> bool:
    """A session file big enough that later collector passes over its objects would cost seconds."""
    try:
        return os.path.getsize(path) >= _FREEZE_BYTES
    except OSError:
        return False


def _make_folder(path: str) -> None:
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:
        raise SessionWriteError.for_folder(path, exc) from None


def _broken_links(entries: list[SessionEntry], by_id: dict[str, SessionEntry]) -> list[str]:
    """The entries whose parent is themselves or missing: the path from the leaf stops at them, so
    what came before is out of the conversation (and the user should know); and context edits of
    entries the file does not hold, which change nothing."""
    problems: list[str] = []
    for entry in entries:
        if entry.parent_id == entry.id:
            problems.append(f"entry {entry.id} names itself as its parent; the conversation starts there")
        elif entry.parent_id is not None and entry.parent_id not in by_id:
            problems.append(
                f"entry {entry.id} points to a parent {entry.parent_id} that is not in the file; "
                "the conversation starts there"
            )
        if isinstance(entry, ContextEditEntry) and entry.target_id not in by_id:
            problems.append(
                f"context edit {entry.id} targets entry {entry.target_id}, which is not in the file; ignored"
            )
    return problems


def _first_header(raw: RawSessionFile) -> SessionHeader | None:
    """The header, if the first parsed object of the file is one."""
    for record in raw.records:
        if isinstance(record, dict):
            return SessionHeader.from_json(record)
    return None
