"""``tau batch`` tests: the real command against a fake server whose replies follow a
script written into each task's prompt, so tasks running at once in any order get their own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tau.testing.fake_llm import FakeLLMServer, RecordedRequest, ScriptedToolCall, ScriptedUsage, Turn

STEPS_MARK = "STEPS:"
TASK_MARK = "TASK:"
MAX_TOKENS = 4096
"""The fake models' output limit."""


def steps_prompt(*steps: list[Any]) -> str:
    """A prompt the fake model follows: ``["bash", cmd]``, ``["escalate", cmd, request]``,
    ``["write", path, text]``, ``["text", t]``,
    ``["cut", t]`` (text stopped at the output-token limit), one step per reply (after the last step it answers "done")."""
    return f"do the task {STEPS_MARK}{json.dumps(list(steps))}"


def tagged_prompt(task_id: str, *steps: list[Any]) -> str:
    """``steps_prompt`` that also tells the responder which task asks (``requests_by_task``)."""
    return f"{TASK_MARK}{task_id} {steps_prompt(*steps)}"


@dataclass
class Responder:
    """Answers each request from the steps in its first user message; counts requests at once."""

    delay: float = 0.0
    in_flight: int = 0
    most_in_flight: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    requests_by_task: dict[str, int] = field(default_factory=dict)

    def __call__(self, request: RecordedRequest) -> Turn:
        with self.lock:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            if self.delay:
                time.sleep(self.delay)
            return self._turn(request.body["messages"])
        finally:
            with self.lock:
                self.in_flight -= 1

    def _turn(self, messages: list[dict[str, Any]]) -> Turn:
        prompt = next(_text(m) for m in messages if m["role"] == "user")
        if TASK_MARK in prompt:
            task = prompt.split(TASK_MARK, 1)[1].split()[0]
            with self.lock:
                self.requests_by_task[task] = self.requests_by_task.get(task, 0) + 1
        steps = json.loads(prompt.split(STEPS_MARK, 1)[1]) if STEPS_MARK in prompt else []
        index = sum(1 for m in messages if m["role"] == "assistant")
        step = steps[index] if index < len(steps) else ["text", "done"]
        if step[0] == "bash":
            return Turn(tool_calls=[ScriptedToolCall("bash", {"command": step[1]})])
        if step[0] == "escalate":  # a bash call asking for more rights: ["escalate", cmd, {...}]
            return Turn(tool_calls=[ScriptedToolCall("bash", {"command": step[1], "escalate": step[2]})])
        if step[0] == "write":
            return Turn(tool_calls=[ScriptedToolCall("write", {"path": step[1], "content": step[2]})])
        if step[0] == "tasks":  # sub-agents (the task tool), one per prompt, in one reply
            calls = [ScriptedToolCall("task", {"prompt": prompt}) for prompt in step[1]]
            return Turn(tool_calls=calls)
        if step[0] == "cut":  # a reply that used the whole output-token limit (not retried, as pi 1.6)
            return Turn(text=step[1], stop_reason="length", usage=ScriptedUsage(output=MAX_TOKENS))
        return Turn(text=step[1])


def _text(message: dict[str, Any]) -> str:
    content = message["content"]
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if isinstance(part, dict))


@dataclass
class BatchRun:
    root: Path
    env: dict[str, str]
    server: FakeLLMServer
    responder: Responder

    def write_tasks(self, tasks: list[dict[str, Any] | str], name: str = "tasks.jsonl") -> Path:
        path = self.root / name
        path.write_text("".join((t if isinstance(t, str) else json.dumps(t)) + "\n" for t in tasks))
        return path

    def command(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "tau", "batch", *args]

    def run(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.command(*args),
            cwd=self.root,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )

    def popen(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            self.command(*args),
            cwd=self.root,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )

    def results(self, out: str = "out") -> list[dict[str, Any]]:
        path = self.root / out / "results.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]

    def settings(self, settings: dict[str, Any]) -> None:
        (self.root / "agent" / "settings.json").write_text(json.dumps(settings))


def batch_run(tmp_path: Path) -> Iterator[BatchRun]:
    agent_dir = tmp_path / "agent"
    agent_dir.mkdir()
    responder = Responder()
    with FakeLLMServer() as server:
        server.add(*[responder] * 2000)
        models = {
            "providers": {
                "local": {
                    "baseUrl": server.url("/v1"),
                    "api": "openai-completions",
                    "apiKey": "local-key",
                    "models": [
                        {"id": "fake-model", "contextWindow": 100000, "maxTokens": MAX_TOKENS},
                        # 10 tokens in and 5 out per reply: $0.015 a reply.
                        {
                            "id": "pricey",
                            "contextWindow": 100000,
                            "maxTokens": MAX_TOKENS,
                            "cost": {"input": 1000, "output": 1000, "cacheRead": 0, "cacheWrite": 0},
                        },
                    ],
                }
            }
        }
        (agent_dir / "models.json").write_text(json.dumps(models))
        (agent_dir / "settings.json").write_text(json.dumps({"retry": {"enabled": False}}))
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "TAU_SESSION_DIR"}
        env["TAU_AGENT_DIR"] = str(agent_dir)
        yield BatchRun(root=tmp_path, env=env, server=server, responder=responder)
