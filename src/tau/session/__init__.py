"""Sessions: the JSONL tree store, migrations, context projection, listing.

    from tau.session import SessionManager

    manager = SessionManager.create("/path/to/project")
    manager.append_message(UserMessage("hi"))
    context = manager.build_session_context()   # messages, thinking_level, model

Files follow pi's session format (version 3) exactly, so pi and tau can open each other's sessions.
"""

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
