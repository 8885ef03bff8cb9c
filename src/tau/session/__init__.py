"""Sessions: the JSONL tree store, migrations, context projection, listing.

    from tau.session import SessionManager

    manager = SessionManager.create("/path/to/project")
    manager.append_message(UserMessage("hi"))
    context = manager.build_session_context()   # messages, thinking_level, model

Files follow pi's session format (version 3) exactly, so pi and tau can open each other's sessions.
"""

from __future__ import annotations

from tau._lazy import lazy_exports

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: see tau/__init__.py
if TYPE_CHECKING:
    from tau.session.context import LAST_ENTRY, ModelRef, SessionContext, build_session_context
    from tau.session.entries import (
        CURRENT_SESSION_VERSION,
        BranchSummaryEntry,
        CompactionEntry,
        CustomEntry,
        CustomMessageEntry,
        LabelEntry,
        MessageEntry,
        ModelChangeEntry,
        SessionEntry,
        SessionHeader,
        SessionInfoEntry,
        ThinkingLevelChangeEntry,
        UnknownEntry,
        entry_from_json,
    )
    from tau.session.errors import EntryNotFoundError, SessionError, SessionFileError, SessionNotFoundError
    from tau.session.ids import IdSource
    from tau.session.listing import (
        FoundSession,
        SessionInfo,
        build_session_info,
        find_most_recent_session,
        find_session,
        list_all_sessions,
        list_sessions,
    )
    from tau.session.manager import SessionManager
    from tau.session.messages import (
        BashExecutionMessage,
        BranchSummaryMessage,
        CompactionSummaryMessage,
        CustomMessage,
        SessionMessage,
        session_message_from_json,
    )
    from tau.session.migrations import migrate_objects
    from tau.session.paths import (
        default_agent_dir,
        default_session_dir,
        encode_cwd,
        resolve_session_dir,
        session_file_name,
        sessions_root,
    )
    from tau.session.tree import SessionTreeNode

__all__ = [
    "CURRENT_SESSION_VERSION",
    "LAST_ENTRY",
    "BashExecutionMessage",
    "BranchSummaryEntry",
    "BranchSummaryMessage",
    "CompactionEntry",
    "CompactionSummaryMessage",
    "CustomEntry",
    "CustomMessage",
    "CustomMessageEntry",
    "EntryNotFoundError",
    "FoundSession",
    "IdSource",
    "LabelEntry",
    "MessageEntry",
    "ModelChangeEntry",
    "ModelRef",
    "SessionContext",
    "SessionEntry",
    "SessionError",
    "SessionFileError",
    "SessionHeader",
    "SessionInfo",
    "SessionInfoEntry",
    "SessionManager",
    "SessionMessage",
    "SessionNotFoundError",
    "SessionTreeNode",
    "ThinkingLevelChangeEntry",
    "UnknownEntry",
    "build_session_context",
    "build_session_info",
    "default_agent_dir",
    "default_session_dir",
    "encode_cwd",
    "entry_from_json",
    "find_most_recent_session",
    "find_session",
    "list_all_sessions",
    "list_sessions",
    "migrate_objects",
    "resolve_session_dir",
    "session_file_name",
    "session_message_from_json",
    "sessions_root",
]

# Each name is imported from its module on first access: importing the package (as every module
# under it does) loads only what a run uses (a run without a session file lists no sessions).
__getattr__, __dir__ = lazy_exports(
    globals(),
    {
        "LAST_ENTRY": "context",
        "ModelRef": "context",
        "SessionContext": "context",
        "build_session_context": "context",
        "BranchSummaryEntry": "entries",
        "CURRENT_SESSION_VERSION": "entries",
        "CompactionEntry": "entries",
        "CustomEntry": "entries",
        "CustomMessageEntry": "entries",
        "LabelEntry": "entries",
        "MessageEntry": "entries",
        "ModelChangeEntry": "entries",
        "SessionEntry": "entries",
        "SessionHeader": "entries",
        "SessionInfoEntry": "entries",
        "ThinkingLevelChangeEntry": "entries",
        "UnknownEntry": "entries",
        "entry_from_json": "entries",
        "EntryNotFoundError": "errors",
        "SessionError": "errors",
        "SessionFileError": "errors",
        "SessionNotFoundError": "errors",
        "IdSource": "ids",
        "FoundSession": "listing",
        "SessionInfo": "listing",
        "build_session_info": "listing",
        "find_most_recent_session": "listing",
        "find_session": "listing",
        "list_all_sessions": "listing",
        "list_sessions": "listing",
        "SessionManager": "manager",
        "BashExecutionMessage": "messages",
        "BranchSummaryMessage": "messages",
        "CompactionSummaryMessage": "messages",
        "CustomMessage": "messages",
        "SessionMessage": "messages",
        "session_message_from_json": "messages",
        "migrate_objects": "migrations",
        "default_agent_dir": "paths",
        "default_session_dir": "paths",
        "encode_cwd": "paths",
        "resolve_session_dir": "paths",
        "session_file_name": "paths",
        "sessions_root": "paths",
        "SessionTreeNode": "tree",
    },
)
