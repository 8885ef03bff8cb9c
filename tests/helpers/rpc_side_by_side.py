"""``tau --mode rpc`` and pi 1.6's ``--mode rpc`` run side by side: each its own fake server, agent
dir and working folder (the same files in both), driven by the same ``RpcClient``, so a test sends
both the same commands and compares what came back. Also ``--mode json`` runs of both, and the
shape of a protocol object with the values that differ by nature (ids, times, paths) left out."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi16 import pi16_command
from tau_command import MODEL

from tau.modes.rpc_client import RpcClient
from tau.testing.fake_llm import FakeLLMServer, Turn

JsonDict = dict[str, Any]


@dataclass
class Side:
    """One program's run: ``name`` is ``"tau"`` or ``"pi"``."""

    name: str
    root: Path
    agent_dir: Path
    work: Path
    server: FakeLLMServer
    env: dict[str, str]
    command: list[str]
    client: RpcClient | None = None
    extra: list[str] = field(default_factory=list)

    @property
    def rpc(self) -> RpcClient:
        assert self.client is not None, "not started in rpc mode"
        return self.client

    def session_files(self) -> list[Path]:
        return sorted((self.agent_dir / "sessions").rglob("*.jsonl"))

    def run(self, *args: str, stdin: str = "", timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """The program with the fake model and ``args``, as it ran (stdout not a terminal)."""
        return subprocess.run(
            [*self.command, *MODEL, *self.extra, *args],
            cwd=self.work,
            env=self.env,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def run_json(self, *args: str, timeout: float = 60) -> list[JsonDict]:
        """``--mode json -p …``: the lines it printed (it must succeed)."""
        ran = subprocess.run(
            [*self.command, "--mode", "json", *MODEL, *self.extra, *args],
            cwd=self.work,
            env=self.env,
            input="",
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        assert ran.returncode == 0, f"{self.name}: {ran.stderr}"
        return [json.loads(line) for line in ran.stdout.splitlines() if line.strip()]


def _models(server: FakeLLMServer, patch: Callable[[JsonDict], None] | None) -> JsonDict:
    models: JsonDict = {
        "providers": {
            "local": {
                "baseUrl": server.url("/v1"),
                "api": "openai-completions",
                "apiKey": "local-key",
                "models": [{"id": "fake-model", "contextWindow": 100000, "maxTokens": 4096}],
            }
        }
    }
    if patch is not None:
        patch(models)
    return models


@asynccontextmanager
async def two_sides(
    tmp_path: Path,
    *,
    files: dict[str, str] | None = None,
    settings: JsonDict | None = None,
    models: Callable[[JsonDict], None] | None = None,
    agent_files: Callable[[Side], None] | None = None,
    extra: Callable[[Side], list[str]] | None = None,
    rpc: bool = True,
) -> AsyncIterator[tuple[Side, Side]]:
    """``(tau, pi)``, each with a fresh fake server and, ``rpc``, a started ``--mode rpc`` client.
    ``files``: the working folder's files; ``settings``: both agent dirs' settings.json;
    ``models``: changes to the fake model's models.json; ``agent_files``: writes more into a side's
    agent dir; ``extra``: more command line arguments for a side."""
    base = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    for key in ("TAU_SESSION_DIR", "TAU_AGENT_DIR", "PI_CODING_AGENT_DIR"):
        base.pop(key, None)
    async with AsyncExitStack() as stack:
        sides = []
        for name in ("tau", "pi"):
            server = stack.enter_context(FakeLLMServer())
            root = tmp_path / name
            agent_dir, work = root / "agent", root / "work"
            agent_dir.mkdir(parents=True)
            work.mkdir()
            (agent_dir / "models.json").write_text(json.dumps(_models(server, models)))
            if settings is not None:
                (agent_dir / "settings.json").write_text(json.dumps(settings))
            for path, text in (files or {}).items():
                (work / path).parent.mkdir(parents=True, exist_ok=True)
                (work / path).write_text(text)
            if name == "tau":
                env = base | {"TAU_AGENT_DIR": str(agent_dir)}
                command = [sys.executable, "-m", "tau"]
            else:
                env = base | {"PI_OFFLINE": "1", "PI_CODING_AGENT_DIR": str(agent_dir), "HOME": str(root)}
                command = pi16_command()
            side = Side(name, root, agent_dir, work, server, env, command)
            if agent_files is not None:
                agent_files(side)
            side.extra = extra(side) if extra is not None else []
            sides.append(side)
        if rpc:
            for side in sides:
                argv = [*side.command, "--mode", "rpc", *MODEL, *side.extra]
                side.client = await stack.enter_async_context(
                    RpcClient(argv, cwd=str(side.work), env=side.env)
                )
        yield sides[0], sides[1]


def add_turns(tau: Side, pi: Side, *turns: Turn) -> None:
    """Script the same replies on both fake servers."""
    tau.server.add(*turns)
    pi.server.add(*turns)


async def on_both(
    tau: Side, pi: Side, script: Callable[[Side], Any], *, together: bool = True
) -> tuple[Any, Any]:
    """Run ``script(side)`` for each side (at the same time unless not ``together``)."""
    if together:
        ours, theirs = await asyncio.gather(script(tau), script(pi))
        return ours, theirs
    return await script(tau), await script(pi)


_BY_NATURE = {
    "id",
    "timestamp",
    "parentId",
    "toolCallId",
    "sessionId",
    "durationMs",
    "leafId",
    "firstKeptEntryId",
}


def skeleton(value: Any, *, keep: frozenset[str] = frozenset({"type", "role", "command", "success"})) -> Any:
    """``value`` with every leaf replaced by its JSON type, except the values under ``keep`` keys
    (the kinds of things) kept as they are; dict keys sorted, so two skeletons compare keys and types."""
    if isinstance(value, dict):
        return {
            key: (item if key in keep and not isinstance(item, (dict, list)) else skeleton(item, keep=keep))
            for key, item in sorted(value.items())
        }
    if isinstance(value, list):
        return [skeleton(item, keep=keep) for item in value]
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return "string"


def response_shape(response: JsonDict) -> JsonDict:
    """A response without its id: success, command, error text, and the skeleton of its data."""
    shaped = {key: value for key, value in response.items() if key not in ("id", "data")}
    if "data" in response:
        shaped["data"] = skeleton(response["data"])
    return shaped


def kinds(lines: list[JsonDict]) -> list[str]:
    """Each line's kind: its type, with a message's role or a response's command."""
    out = []
    for line in lines:
        kind = line["type"]
        if kind in ("message_start", "message_end"):
            kind += ":" + line["message"]["role"]
        elif kind == "response":
            kind += ":" + str(line.get("command"))
        out.append(kind)
    return out


def normalised(line: JsonDict) -> Any:
    """A line with the values that differ by nature (ids, times, durations) replaced by a mark."""

    def walk(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: ("<by nature>" if k in _BY_NATURE else walk(v)) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v) for v in value]
        return value

    return walk(line)


def differences(ours: Any, theirs: Any, path: str = "$") -> list[str]:
    """Where two skeletons differ, one line per place (``$.data.model.sandbox: only tau``)."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        found = []
        for key in sorted(set(ours) | set(theirs)):
            if key not in theirs:
                found.append(f"{path}.{key}: only tau")
            elif key not in ours:
                found.append(f"{path}.{key}: only pi")
            else:
                found += differences(ours[key], theirs[key], f"{path}.{key}")
        return found
    if isinstance(ours, list) and isinstance(theirs, list):
        if len(ours) != len(theirs):
            return [f"{path}: {len(ours)} items in tau, {len(theirs)} in pi"]
        return [
            line
            for i, (a, b) in enumerate(zip(ours, theirs, strict=True))
            for line in differences(a, b, f"{path}[{i}]")
        ]
    return [] if ours == theirs else [f"{path}: tau {ours!r}, pi {theirs!r}"]


def streamed(lines: list[JsonDict]) -> list[JsonDict]:
    """The lines without pi's empty first tool-argument delta (its Chat Completions parser streams
    one; the provider's business, not the protocol's) and without the session header (``json``)."""
    return [
        line
        for line in lines
        if line.get("assistantMessageEvent", {}).get("delta", None) != "" and line["type"] != "session"
    ]


def line_shape(line: JsonDict) -> Any:
    """A protocol line's skeleton for comparing two programs' streams: a response's error words and
    kinds kept, the tools a system message adds counted rather than described (the built-in tools'
    schemas are compared by the request parity tests), get_state's ``sandbox`` (tau's own) left out,
    and a ``message_update``'s usage so far reduced to being there (whether the provider's usage
    came in the same read as the delta is the network's doing)."""

    def tools_counted(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: (len(v) if k == "toolsAdded" else tools_counted(v)) for k, v in value.items()}
        if isinstance(value, list):
            return [tools_counted(v) for v in value]
        return value

    if line["type"] == "message_update":
        line = {**line, "usage": {}}
    if line["type"] == "response":
        shaped = response_shape(line)
        data = shaped.get("data")
        if isinstance(data, dict):
            data.pop("sandbox", None)
        return tools_counted(shaped)
    return skeleton(
        tools_counted(line), keep=frozenset({"type", "role", "command", "success", "stopReason", "isError"})
    )
