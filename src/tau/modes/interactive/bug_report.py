"""``/bug [description]``: a bug report as a zip to review and attach to an issue yourself.

pi 1.6 uploads its report to its developers' server (or exports the same zip); tau has no such
server, so it writes the zip only. Its files are pi's: ``report.json`` (environment, model and
provider description, settings, with anything that looks like a credential redacted),
``diagnostics.json`` (failed or aborted replies, no conversation text) and, when chosen,
``session.jsonl`` (the branch's entries).
"""

from __future__ import annotations

import json
import os
import platform
import re
import sys
import time
import uuid
import zipfile
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from tau.modes.interactive.crash_log import clear_crash_log, read_crash_log
from tau.modes.interactive.dialogs import ListDialog, ListItem

if TYPE_CHECKING:
    from tau.modes.interactive.host import DialogHost
    from tau.runtime.agent_session import AgentSession

__all__ = ["redact_json", "redact_url", "report_files", "write_bug_report"]

REDACTED = "<redacted>"
_SENSITIVE = re.compile(
    r"(?:^|[-_])(api[-_]?key|secret|token|password|passwd|credential|authorization|cookie)(?:$|[-_])", re.I
)
_CAMEL = re.compile(r"([a-z0-9])([A-Z])")


def _is_sensitive(key: str) -> bool:
    return _SENSITIVE.search(_CAMEL.sub(r"\1_\2", key)) is not None


def redact_url(value: str) -> str:
    """``value`` without a URL's user name, password and secret-looking query values."""
    if "://" not in value:
        return value
    try:
        parts = urlsplit(value)
    except ValueError:
        return value
    if not parts.scheme or not parts.netloc:
        return value
    netloc = parts.netloc.rsplit("@", 1)[-1]
    query = parse_qsl(parts.query, keep_blank_values=True)
    redacted = [(k, REDACTED if _is_sensitive(k) else v) for k, v in query]
    if netloc == parts.netloc and redacted == query:
        return value
    return urlunsplit((parts.scheme, netloc, parts.path, urlencode(redacted, safe="<>"), parts.fragment))


def redact_json(value: Any) -> Any:
    """A copy of a JSON value with credential-looking keys' values and URLs' secrets removed."""
    if isinstance(value, Mapping):
        return {
            str(k): REDACTED if _is_sensitive(str(k)) and v is not None else redact_json(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [redact_json(v) for v in value]
    if isinstance(value, str):
        return redact_url(value)
    return value


def _environment() -> dict[str, Any]:
    from tau import __version__

    env = os.environ.get
    return {
        "version": __version__,
        "runtime": f"python/{platform.python_version()}",
        "platform": sys.platform,
        "arch": platform.machine(),
        "osRelease": platform.release(),
        "shell": os.path.basename(env("SHELL", "")) or None,
        "terminal": {
            "term": env("TERM"),
            "program": env("TERM_PROGRAM"),
            "colorterm": env("COLORTERM"),
            "tmux": bool(env("TMUX")),
            "ssh": bool(env("SSH_CONNECTION") or env("SSH_CLIENT") or env("SSH_TTY")),
            "ci": bool(env("CI")),
        },
        # The names help with configuration questions; the values stay on this machine.
        "environmentVariables": sorted(n for n in os.environ if n.startswith(("TAU_", "PI_"))),
    }


def report_files(session: AgentSession, hint: str | None, *, include_session: bool) -> dict[str, str]:
    """The report's files by name (what ``write_bug_report`` zips)."""
    from tau.ai.types import AssistantMessage
    from tau.session.entries import MessageEntry

    manager = session.session_manager
    model = session.model
    settings = session.services.settings_manager
    entries = manager.get_entries()
    failed: list[dict[str, Any]] = []
    assistants = 0
    for entry in entries:
        if not (isinstance(entry, MessageEntry) and isinstance(entry.message, AssistantMessage)):
            continue
        assistants += 1
        message = entry.message
        if message.stop_reason in ("error", "aborted") or message.error_message:
            failed.append(
                {
                    "entryId": entry.id,
                    "timestamp": entry.timestamp,
                    "provider": message.provider,
                    "model": message.model,
                    "api": message.api,
                    "stopReason": message.stop_reason,
                    **({"errorMessage": message.error_message} if message.error_message else {}),
                }
            )
    report: dict[str, Any] = {
        "schemaVersion": 1,
        "id": str(uuid.uuid4()),
        "createdAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "hint": hint or None,
        "environment": _environment(),
        "session": {
            "id": manager.get_session_id(),
            "included": include_session,
            "messageCount": len(session.messages),
            **({"cwd": session.cwd} if include_session else {}),
        },
        "model": None
        if model is None
        else {
            "provider": model.provider,
            "id": model.id,
            "name": model.name,
            "api": model.api,
            "baseUrl": redact_url(model.base_url),
            "reasoning": model.reasoning,
            "contextWindow": model.context_window,
            "maxTokens": model.max_tokens,
            "headerNames": sorted(model.headers or {}),
        },
        "thinkingLevel": session.thinking_level,
        "settings": {
            "global": redact_json(settings.get_scope("global")),
            "project": redact_json(settings.get_scope("project")),
        },
    }
    diagnostics = {
        "schemaVersion": 1,
        "sessionId": manager.get_session_id(),
        "entryCount": len(entries),
        "assistantMessageCount": assistants,
        "assistant": failed,
        "crashes": [
            {k: v for k, v in record.items() if k != "notified"}
            for record in read_crash_log(session.services.agent_dir)
        ],
    }
    files = {
        "report.json": json.dumps(report, indent=2) + "\n",
        "diagnostics.json": json.dumps(diagnostics, indent=2) + "\n",
    }
    if include_session:
        import tempfile

        with tempfile.TemporaryDirectory(prefix="tau-bug-") as folder:
            exported = manager.export_branch(os.path.join(folder, "session.jsonl"))
            with open(exported, encoding="utf-8") as file:
                files["session.jsonl"] = file.read()
    return files


def write_bug_report(session: AgentSession, folder: str, hint: str | None, *, include_session: bool) -> str:
    """Write the report's zip into ``folder``; its path."""
    files = report_files(session, hint, include_session=include_session)
    report_id = json.loads(files["report.json"])["id"]
    path = os.path.join(folder, f"tau-bug-report-{report_id}.zip")
    with zipfile.ZipFile(path, "x", zipfile.ZIP_DEFLATED) as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    clear_crash_log(session.services.agent_dir)  # reported: the next report starts afresh, as pi's
    return path


async def report_bug(mode: DialogHost, hint: str) -> None:
    choice = await mode.show_dialog(
        ListDialog(
            "Bug report: include this session's transcript? (it can hold prompts, file contents, secrets)",
            [ListItem("Leave the transcript out", "no"), ListItem("Include the transcript", "yes")],
        )
    )
    if choice is None:
        return
    try:
        path = write_bug_report(
            mode.session, mode.session.cwd, hint or None, include_session=choice.value == "yes"
        )
    except OSError as exc:
        mode.chat.add_notice(f"Could not write the bug report: {exc}", "error")
        return
    mode.chat.add_notice(
        f"Bug report written to {path}: review it, then attach it to an issue for tau's developers"
    )
