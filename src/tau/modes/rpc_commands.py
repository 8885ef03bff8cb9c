"""The RPC commands (spec 70 §5.2): one handler per command type, each returning the response data.

A handler raises ``RpcCommandError`` (or any exception) to answer with ``success: false``; it
returns ``NO_DATA`` for a response without ``data``. Handlers use only the public ``AgentSession``
and ``AgentSessionRuntime`` surface, reached through the ``CommandContext`` the RPC mode provides.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from tau.accounts.model_resolver import is_valid_thinking_level
from tau.agent.messages import message_to_json
from tau.agent.queues import QueueMode
from tau.ai.thinking import THINKING_LEVELS
from tau.ai.types import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from tau.context.project_dirs import project_dirs
from tau.errors import TauError
from tau.runtime.agent_session import AgentSession
from tau.runtime.runtime import AgentSessionRuntime
from tau.session.context import interleave_system_messages
from tau.session.entries import MessageEntry
from tau.session.tree import SessionTreeNode
from tau.session.usage import usages

__all__ = ["ANSWERED", "COMMANDS", "NO_DATA", "CommandContext", "RpcCommandError"]

JsonDict = dict[str, Any]


class RpcCommandError(TauError):
    """A command that cannot be carried out; its message becomes the response's ``error``."""


class _NoData:
    def __repr__(self) -> str:
        return "NO_DATA"


NO_DATA: Any = _NoData()


class _Answered:
    def __repr__(self) -> str:
        return "ANSWERED"


ANSWERED: Any = _Answered()
"""Returned by a handler that has written its response itself (``prompt``, before the run's events)."""


class CommandContext(Protocol):
    """What the handlers need from the running RPC mode."""

    @property
    def session(self) -> AgentSession: ...

    @property
    def runtime(self) -> AgentSessionRuntime | None: ...

    async def start_prompt(
        self, command_id: object, text: str, images: list[ImageContent] | None, behavior: str | None
    ) -> None:
        """Start (or queue) a prompt, answer it once it is accepted and return; raise if it is refused."""
        ...

    async def replace_session(self, change: Callable[[AgentSessionRuntime], Awaitable[Any]]) -> Any:
        """Run a session replacement on the runtime and follow the new session's events."""
        ...

    def write_event(self, data: JsonDict) -> None:
        """Write one protocol object that is not a session event (``bash_execution_update``)."""
        ...


Handler = Callable[[CommandContext, JsonDict], Awaitable[Any]]


# -- field readers ---------------------------------------------------------------------------------


def _str(command: JsonDict, key: str) -> str:
    value = command.get(key)
    if not isinstance(value, str):
        raise RpcCommandError(f"{command.get('type')} needs a string field '{key}'")
    return value


def _optional_str(command: JsonDict, key: str) -> str | None:
    value = command.get(key)
    if value is not None and not isinstance(value, str):
        raise RpcCommandError(f"{command.get('type')}: field '{key}' must be a string")
    return value


def _bool(command: JsonDict, key: str) -> bool:
    value = command.get(key)
    if not isinstance(value, bool):
        raise RpcCommandError(f"{command.get('type')} needs a boolean field '{key}'")
    return value


def _images(command: JsonDict) -> list[ImageContent] | None:
    raw = command.get("images")
    if raw is None:
        return None
    if not isinstance(raw, list):
        raise RpcCommandError("'images' must be a list of {type:'image', data, mimeType}")
    images: list[ImageContent] = []
    for item in raw:
        if not (
            isinstance(item, dict)
            and isinstance(item.get("data"), str)
            and isinstance(item.get("mimeType"), str)
        ):
            raise RpcCommandError("'images' must be a list of {type:'image', data, mimeType}")
        images.append(ImageContent(item["data"], item["mimeType"]))
    return images


def _runtime(ctx: CommandContext, command: JsonDict) -> AgentSessionRuntime:
    if ctx.runtime is None:
        raise RpcCommandError(
            f"{command.get('type')} needs the session runtime, which this RPC host did not provide"
        )
    return ctx.runtime


# -- prompting -------------------------------------------------------------------------------------


async def _prompt(ctx: CommandContext, command: JsonDict) -> Any:
    behavior = _optional_str(command, "streamingBehavior")
    if behavior not in (None, "steer", "followUp"):
        raise RpcCommandError(f"Unknown streamingBehavior: {behavior} (use 'steer' or 'followUp')")
    await ctx.start_prompt(command.get("id"), _str(command, "message"), _images(command), behavior)
    return ANSWERED


async def _steer(ctx: CommandContext, command: JsonDict) -> Any:
    return {"disposition": await ctx.session.steer(_str(command, "message"), _images(command), source="rpc")}


async def _follow_up(ctx: CommandContext, command: JsonDict) -> Any:
    return {
        "disposition": await ctx.session.follow_up(_str(command, "message"), _images(command), source="rpc")
    }


async def _clear_queue(ctx: CommandContext, command: JsonDict) -> Any:
    steering, follow_up = ctx.session.clear_queue()
    return {"steering": steering, "followUp": follow_up}


async def _abort(ctx: CommandContext, command: JsonDict) -> Any:
    await ctx.session.abort()
    return NO_DATA


# -- state -----------------------------------------------------------------------------------------


async def _get_state(ctx: CommandContext, command: JsonDict) -> Any:
    session = ctx.session
    state: JsonDict = {}
    if session.model is not None:
        state["model"] = session.model.to_json()
    state.update(
        thinkingLevel=session.thinking_level,
        isStreaming=session.is_streaming,
        isCompacting=session.is_compacting,
        steeringMode=session.agent.steering_mode,
        followUpMode=session.agent.follow_up_mode,
    )
    if session.session_file is not None:
        state["sessionFile"] = session.session_file
    state["sessionId"] = session.session_id
    if session.session_name is not None:
        state["sessionName"] = session.session_name
    state.update(
        autoCompactionEnabled=session.auto_compaction_enabled,
        messageCount=len(_transcript(ctx)),
        pendingMessageCount=session.pending_message_count,
        sandbox=session.sandbox.to_json(),
    )
    return state


async def _get_messages(ctx: CommandContext, command: JsonDict) -> Any:
    return {"messages": [message_to_json(m) for m in _transcript(ctx)]}


def _transcript(ctx: CommandContext) -> list[Any]:
    """The branch's transcript as pi 1.6 lists it (``get_messages``, and ``get_state``'s
    ``messageCount`` counts it): the recorded system messages where they stand (the first one
    leads), then the conversation the model is sent."""
    context = ctx.session.session_manager.build_session_context()
    return interleave_system_messages(ctx.session.messages, context)


async def _get_session_stats(ctx: CommandContext, command: JsonDict) -> Any:
    session = ctx.session
    # As pi 1.6 counts them: the message entries of the whole file (every branch, the recorded
    # system messages too), not the context the model is sent now.
    entries = session.session_manager.get_entries()
    messages = [entry.message for entry in entries if isinstance(entry, MessageEntry)]
    assistants = [m for m in messages if isinstance(m, AssistantMessage)]
    tokens = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}
    cost = 0.0
    # Every usage the file records (all branches, summaries, usage entries), as pi counts it.
    for recorded in usages(entries):
        tokens["input"] += recorded.input
        tokens["output"] += recorded.output
        tokens["cacheRead"] += recorded.cache_read
        tokens["cacheWrite"] += recorded.cache_write
        cost += recorded.cost.total
    stats: JsonDict = {
        "sessionFile": session.session_file,
        "sessionId": session.session_id,
        "userMessages": sum(1 for m in messages if isinstance(m, UserMessage)),
        "assistantMessages": len(assistants),
        "toolCalls": sum(1 for m in assistants for b in m.content if isinstance(b, ToolCall)),
        "toolResults": sum(1 for m in messages if isinstance(m, ToolResultMessage)),
        "totalMessages": len(messages),
        "tokens": {**tokens, "total": sum(tokens.values())},
        "cost": cost,
    }
    if stats["sessionFile"] is None:  # --no-session: pi leaves the key out
        del stats["sessionFile"]
    usage = session.get_context_usage()
    if usage is not None:
        stats["contextUsage"] = {
            "tokens": usage.tokens,
            "contextWindow": usage.context_window,
            "percent": usage.percent,
        }
    return stats


async def _get_last_assistant_text(ctx: CommandContext, command: JsonDict) -> Any:
    text = ctx.session.get_last_assistant_text()
    return {} if text is None else {"text": text}  # pi leaves text out before any reply


async def _get_commands(ctx: CommandContext, command: JsonDict) -> Any:
    """Extension commands (by invocation name), then prompt templates, then skills, as pi lists them."""
    session = ctx.session
    loader = session.services.resource_loader
    locate = _SourceLocator(session.cwd, session.services.agent_dir)
    commands: list[JsonDict] = []
    builtins: dict[str, JsonDict] = {}
    runner = session.extension_runner
    registered_commands = runner.commands if runner is not None else {}
    for name, registered in registered_commands.items():
        if registered.path.startswith("<builtin:"):
            builtins[name] = _builtin_command(name, registered.description, registered.path[1:-1])
        else:
            commands.append(
                {
                    "name": name,
                    "description": registered.description,
                    "source": "extension",
                    "sourceInfo": locate(registered.path),
                }
            )
    from tau.llama_cpp.fallback import LLAMA_COMMAND, LLAMA_DESCRIPTION, LLAMA_SOURCE_PATH
    from tau.mcp.fallback import MCP_COMMAND, MCP_DESCRIPTION, MCP_SOURCE_PATH

    # pi 1.6's built-in extensions' commands come after the others, llama before mcp, and are
    # always there (the mode answers one whose extension is not loaded).
    for name, description, path in (
        (LLAMA_COMMAND, LLAMA_DESCRIPTION, LLAMA_SOURCE_PATH),
        (MCP_COMMAND, MCP_DESCRIPTION, MCP_SOURCE_PATH),
    ):
        in_runner = name in builtins
        commands.append(builtins.pop(name) if in_runner else _builtin_command(name, description, path))
    commands.extend(builtins.values())
    for template in loader.prompt_templates:
        commands.append(
            _command(
                template.name, template.description, "prompt", locate(template.file_path, template.source)
            )
        )
    for skill in loader.skills:
        commands.append(
            _command(f"skill:{skill.name}", skill.description, "skill", locate(skill.file_path, skill.source))
        )
    return {"commands": commands}


_BUILTIN_SOURCE: JsonDict = {"source": "builtin", "scope": "temporary", "origin": "top-level"}
"""pi's ``sourceInfo`` of a built-in extension's command (its ``path`` is ``builtin:<name>``)."""


def _command(name: str, description: str | None, source: str, info: JsonDict) -> JsonDict:
    """A command as pi lists it: ``name``, ``description`` (when there is one), ``source``, ``sourceInfo``."""
    entry: JsonDict = {"name": name}
    if description:
        entry["description"] = description
    return {**entry, "source": source, "sourceInfo": info}


def _builtin_command(name: str, description: str | None, path: str) -> JsonDict:
    return {
        "name": name,
        "description": description,
        "source": "extension",
        "sourceInfo": {"path": path, **_BUILTIN_SOURCE},
    }


class _SourceLocator:
    """pi's ``sourceInfo`` of a resource file. ``scope``: ``project``, ``user``, or ``temporary``
    (named for this run); ``source``: ``auto`` (discovered in a resource folder), ``local`` (a
    settings entry), ``cli`` (named for this run); ``origin``: ``package`` for an installed
    distribution's entry point, else ``top-level``."""

    def __init__(self, cwd: str, agent_dir: str) -> None:
        self._scopes = {"project": project_dirs(cwd), "user": [os.path.abspath(agent_dir)]}

    def __call__(self, path: str, scope: str | None = None) -> JsonDict:
        if path.startswith("<inline:"):
            return {"path": path, "source": "inline", "scope": "temporary", "origin": "top-level"}
        if path.startswith("<"):  # "<dist entry point name = module:attr>"
            dist = path[1:].split("entry point", 1)[0].strip()
            return {"path": path, "source": dist or "entry point", "scope": "user", "origin": "package"}
        if scope is None:  # an extension: its scope is where its file lives
            scope = next(
                (name for name, bases in self._scopes.items() if any(_is_within(path, b) for b in bases)),
                "temporary",
            )
        if scope not in self._scopes:
            return {"path": path, "source": "cli", "scope": "temporary", "origin": "top-level"}
        bases = self._scopes[scope]
        base = next((b for b in bases if _is_within(path, b)), None)
        discovered = base is None or any(
            _is_within(path, os.path.join(base, folder)) for folder in _DISCOVERED_DIRS
        )
        info: JsonDict = {
            "path": path,
            "source": "auto" if discovered else "local",
            "scope": scope,
            "origin": "top-level",
        }
        if discovered and base is not None:
            info["baseDir"] = base  # pi 1.6: the scope's folder a discovered resource was found in
        return info


_DISCOVERED_DIRS = ("extensions", "prompts", "skills")


def _is_within(path: str, folder: str) -> bool:
    return os.path.abspath(path).startswith(folder.rstrip(os.sep) + os.sep)


# -- model and thinking ----------------------------------------------------------------------------


async def _set_model(ctx: CommandContext, command: JsonDict) -> Any:
    provider, model_id = _str(command, "provider"), _str(command, "modelId")
    model = ctx.session.services.model_registry.find(provider, model_id)
    if model is None:
        raise RpcCommandError(f"Model not found: {provider}/{model_id}")
    await ctx.session.set_model(model, persist=False)  # as pi's RPC: the session's, not the default
    return model.to_json()


async def _cycle_model(ctx: CommandContext, command: JsonDict) -> Any:
    cycle = await ctx.session.cycle_model(persist=False)
    if cycle is None:
        return None
    return {
        "model": cycle.model.to_json(),
        "thinkingLevel": cycle.thinking_level,
        "isScoped": cycle.is_scoped,
    }


async def _get_available_models(ctx: CommandContext, command: JsonDict) -> Any:
    return {"models": [m.to_json() for m in ctx.session.services.model_registry.get_available()]}


async def _set_thinking_level(ctx: CommandContext, command: JsonDict) -> Any:
    level = _str(command, "level")
    if not is_valid_thinking_level(level):
        raise RpcCommandError(f"Unknown thinking level: {level}. Valid values: {', '.join(THINKING_LEVELS)}")
    ctx.session.set_thinking_level(level, persist=False)
    return NO_DATA


async def _cycle_thinking_level(ctx: CommandContext, command: JsonDict) -> Any:
    level = ctx.session.cycle_thinking_level(persist=False)
    return None if level is None else {"level": level}


async def _get_available_thinking_levels(ctx: CommandContext, command: JsonDict) -> Any:
    return {"levels": list(ctx.session.get_available_thinking_levels())}


async def _set_sandbox(ctx: CommandContext, command: JsonDict) -> Any:
    from tau.config.sandbox_config import SandboxConfigError

    try:
        ctx.session.set_sandbox(_str(command, "mode"))
    except SandboxConfigError as error:
        raise RpcCommandError(str(error)) from None
    return {"sandbox": ctx.session.sandbox.to_json()}


async def _set_steering_mode(ctx: CommandContext, command: JsonDict) -> Any:
    ctx.session.set_steering_mode(_queue_mode(command))
    return NO_DATA


async def _set_follow_up_mode(ctx: CommandContext, command: JsonDict) -> Any:
    ctx.session.set_follow_up_mode(_queue_mode(command))
    return NO_DATA


def _queue_mode(command: JsonDict) -> QueueMode:
    mode = _str(command, "mode")
    if mode == "all":
        return "all"
    if mode == "one-at-a-time":
        return "one-at-a-time"
    raise RpcCommandError(f"Unknown mode: {mode} (use 'all' or 'one-at-a-time')")


# -- compaction, retry, bash -----------------------------------------------------------------------


async def _compact(ctx: CommandContext, command: JsonDict) -> Any:
    result = await ctx.session.compact(_optional_str(command, "customInstructions"))
    return result.to_json()  # without details (an extension's summary) the key is absent, as in pi


async def _set_auto_compaction(ctx: CommandContext, command: JsonDict) -> Any:
    ctx.session.set_auto_compaction_enabled(_bool(command, "enabled"))
    return NO_DATA


async def _set_auto_retry(ctx: CommandContext, command: JsonDict) -> Any:
    ctx.session.set_auto_retry_enabled(_bool(command, "enabled"))
    return NO_DATA


async def _abort_retry(ctx: CommandContext, command: JsonDict) -> Any:
    ctx.session.abort_retry()
    return NO_DATA


async def _bash(ctx: CommandContext, command: JsonDict) -> Any:
    """Run the command, streaming its output as ``bash_execution_update`` events (with the command's
    ``id``, when it has one); ``excludeFromContext`` keeps the record away from the model."""
    command_id = command.get("id")
    exclude = command.get("excludeFromContext")
    if exclude is not None and not isinstance(exclude, bool):
        raise RpcCommandError("bash needs a boolean field 'excludeFromContext' (or none)")

    def on_chunk(text: str) -> None:
        update: JsonDict = {"type": "bash_execution_update"}
        if command_id is not None:
            update["id"] = command_id
        update["delta"] = text
        ctx.write_event(update)

    result = await ctx.session.execute_bash(
        _str(command, "command"),
        on_chunk=on_chunk,
        exclude_from_context=None if exclude is None else bool(exclude),
    )
    data: JsonDict = {"output": result.output}
    if result.exit_code is not None:  # a cancelled command has none; pi leaves the key out
        data["exitCode"] = result.exit_code
    data.update(cancelled=result.cancelled, truncated=result.truncated)
    if result.full_output_path is not None:
        data["fullOutputPath"] = result.full_output_path
    return data


async def _abort_bash(ctx: CommandContext, command: JsonDict) -> Any:
    ctx.session.abort_bash()
    return NO_DATA


# -- sessions --------------------------------------------------------------------------------------


async def _replace_session(
    ctx: CommandContext, change: Callable[[AgentSessionRuntime], Awaitable[Any]], answer: JsonDict
) -> JsonDict:
    """Replace the session (``change``) and answer with ``answer``, plus what the old session still
    had queued, when anything: as in pi, steering and follow-up messages queued for the old session
    do not move to the new one, and the client is told which texts were dropped (``dropped``, the
    shape ``clear_queue`` answers with) rather than losing them silently."""
    before = ctx.session
    result = await ctx.replace_session(change)
    data = {key: value(result) if callable(value) else value for key, value in answer.items()}
    data = {key: value for key, value in data.items() if value is not None}  # pi leaves undefined out
    if ctx.session is not before:
        steering, follow_up = before.steering_messages, before.follow_up_messages
        if steering or follow_up:
            data["dropped"] = {"steering": steering, "followUp": follow_up}
    return data


async def _new_session(ctx: CommandContext, command: JsonDict) -> Any:
    runtime = _runtime(ctx, command)
    parent = _optional_str(command, "parentSession")
    return await _replace_session(
        ctx,
        lambda _: runtime.new_session(parent_session=parent),
        {"cancelled": lambda change: change.cancelled},
    )


async def _switch_session(ctx: CommandContext, command: JsonDict) -> Any:
    runtime = _runtime(ctx, command)
    path = _str(command, "sessionPath")
    return await _replace_session(
        ctx, lambda _: runtime.switch_session(path), {"cancelled": lambda change: change.cancelled}
    )


async def _fork(ctx: CommandContext, command: JsonDict) -> Any:
    runtime = _runtime(ctx, command)
    entry_id = command.get("entryId")
    if not isinstance(entry_id, str):
        raise RpcCommandError("Invalid entry ID for forking")  # pi 1.6's words for any entry it cannot use
    return await _replace_session(
        ctx,
        lambda _: runtime.fork(entry_id, "before"),
        {"text": lambda result: result.selected_text, "cancelled": lambda result: result.cancelled},
    )


async def _clone(ctx: CommandContext, command: JsonDict) -> Any:
    runtime = _runtime(ctx, command)
    leaf = ctx.session.session_manager.get_leaf_id()
    if leaf is None:
        raise RpcCommandError("Cannot clone session: no current entry selected")
    return await _replace_session(
        ctx, lambda _: runtime.fork(leaf, "at"), {"cancelled": lambda result: result.cancelled}
    )


async def _get_fork_messages(ctx: CommandContext, command: JsonDict) -> Any:
    found: list[JsonDict] = []
    for entry in ctx.session.session_manager.get_entries():
        if isinstance(entry, MessageEntry) and isinstance(entry.message, UserMessage):
            text = _user_text(entry.message)
            if text:
                found.append({"entryId": entry.id, "text": text})
    return {"messages": found}


async def _get_entries(ctx: CommandContext, command: JsonDict) -> Any:
    """Every entry in file order (all branches, before compactions too); ``since`` an entry id gives
    only the ones after it, so a client can page on from where it was."""
    manager = ctx.session.session_manager
    entries = manager.get_entries()
    since = command.get("since")
    if since is not None:
        at = next((i for i, entry in enumerate(entries) if entry.id == since), None)
        if at is None:  # an id that is not a string matches nothing either, as in pi 1.6
            raise RpcCommandError(f"Entry not found: {since}")
        entries = entries[at + 1 :]
    return {"entries": [entry.to_json() for entry in entries], "leafId": manager.get_leaf_id()}


async def _get_tree(ctx: CommandContext, command: JsonDict) -> Any:
    manager = ctx.session.session_manager
    return {"tree": [_tree_node_json(root) for root in manager.get_tree()], "leafId": manager.get_leaf_id()}


def _tree_node_json(root: SessionTreeNode) -> JsonDict:
    """``{entry, children, label?, labelTimestamp?}``, built without recursion (a session can be
    thousands of entries deep)."""

    def node_json(node: SessionTreeNode) -> JsonDict:
        out: JsonDict = {"entry": node.entry.to_json(), "children": []}
        if node.label is not None:
            out["label"] = node.label
            if node.label_timestamp is not None:
                out["labelTimestamp"] = node.label_timestamp
        return out

    top = node_json(root)
    pending = [(root, top)]
    while pending:
        node, out = pending.pop()
        for child in node.children:
            child_out = node_json(child)
            out["children"].append(child_out)
            pending.append((child, child_out))
    return top


async def _set_session_name(ctx: CommandContext, command: JsonDict) -> Any:
    name = _str(command, "name").strip()
    if not name:
        raise RpcCommandError("Session name cannot be empty")
    ctx.session.set_session_name(name)
    return NO_DATA


async def _export_html(ctx: CommandContext, command: JsonDict) -> Any:
    output_path = command.get("outputPath")
    return {"path": ctx.session.export_to_html(output_path if isinstance(output_path, str) else None)}


def _user_text(message: UserMessage) -> str:
    if isinstance(message.content, str):
        return message.content
    return "".join(b.text for b in message.content if isinstance(b, TextContent))


COMMANDS: dict[str, Handler] = {
    "prompt": _prompt,
    "steer": _steer,
    "follow_up": _follow_up,
    "abort": _abort,
    "clear_queue": _clear_queue,
    "new_session": _new_session,
    "get_state": _get_state,
    "get_messages": _get_messages,
    "set_model": _set_model,
    "cycle_model": _cycle_model,
    "get_available_models": _get_available_models,
    "set_thinking_level": _set_thinking_level,
    "cycle_thinking_level": _cycle_thinking_level,
    "get_available_thinking_levels": _get_available_thinking_levels,
    "set_sandbox": _set_sandbox,
    "set_steering_mode": _set_steering_mode,
    "set_follow_up_mode": _set_follow_up_mode,
    "compact": _compact,
    "set_auto_compaction": _set_auto_compaction,
    "set_auto_retry": _set_auto_retry,
    "abort_retry": _abort_retry,
    "bash": _bash,
    "abort_bash": _abort_bash,
    "get_session_stats": _get_session_stats,
    "export_html": _export_html,
    "switch_session": _switch_session,
    "fork": _fork,
    "clone": _clone,
    "get_fork_messages": _get_fork_messages,
    "get_entries": _get_entries,
    "get_tree": _get_tree,
    "get_last_assistant_text": _get_last_assistant_text,
    "set_session_name": _set_session_name,
    "get_commands": _get_commands,
}
