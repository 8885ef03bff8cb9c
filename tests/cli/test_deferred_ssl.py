"""The command imports asyncio with ``ssl`` left for the first TLS use (tau.cli.deferred_ssl,
issue #17): a plain-http run never loads it, an https provider works and is verified as before,
and once loaded asyncio's modules hold exactly what a normal import gives them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from certificates import self_signed_certificate, server_context
from tau_command import MODEL, TauCommand

from tau.testing.fake_llm import FakeLLMServer, Turn

# The command's entry point, given its arguments, returns instead of ending the process.
_RUN_AND_REPORT_SSL = """
import sys
from tau.cli import main
code = main(sys.argv[1:])
sys.stdout.flush()
sys.stderr.write(f"\\nexit {code}, ssl loaded: {'ssl' in sys.modules}")
"""

# asyncio's modules' global names (and whether their ``ssl`` is the real module), after a normal
# import (argv "plain") or after the deferred one and a first use of ssl through asyncio ("deferred").
_ASYNCIO_STATE = """
import json, sys
if sys.argv[1] == "deferred":
    from tau.cli.deferred_ssl import import_asyncio
    import_asyncio()
    assert "ssl" not in sys.modules
    import asyncio.sslproto
    asyncio.sslproto.ssl.MemoryBIO  # what asyncio reads first when it opens a TLS connection
import asyncio, ssl
print(json.dumps({
    name: [sorted(vars(module)), vars(module).get("ssl", ssl) is ssl]
    for name, module in sys.modules.items() if name == "asyncio" or name.startswith("asyncio.")
}))
"""


def _models(agent_dir: Path, base_url: str) -> None:
    provider = {"baseUrl": base_url, "api": "openai-completions", "apiKey": "local-key", "models": [{"id": "fake-model"}]}
    agent_dir.mkdir(exist_ok=True)
    (agent_dir / "models.json").write_text(json.dumps({"providers": {"local": provider}}))


def test_a_plain_http_run_gets_its_reply_without_loading_ssl(tau: TauCommand) -> None:
    tau.server.add(Turn(text="hello over http"))
    run = subprocess.run(
        [sys.executable, "-c", _RUN_AND_REPORT_SSL, *MODEL, "--no-session", "-p", "hi"],
        cwd=tau.work, env=tau.env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert run.stdout.strip() == "hello over http"
    assert run.stderr.splitlines()[-1] == "exit 0, ssl loaded: False"


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return self_signed_certificate(tmp_path_factory.mktemp("tls"))


def _https_run(tmp_path: Path, certificate: tuple[Path, Path], trust: bool) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("SSL_CERT_")}
    env["TAU_AGENT_DIR"] = str(tmp_path / "agent")
    if trust:
        env["SSL_CERT_FILE"] = str(certificate[0])
    with FakeLLMServer(tls=server_context(certificate)) as server:  # type: ignore[arg-type]
        server.add(Turn(text="hello over https"))
        _models(tmp_path / "agent", server.url("/v1"))
        return subprocess.run(
            [sys.executable, "-m", "tau", *MODEL, "--no-session", "-p", "hi"],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip


def test_an_https_provider_is_reached_through_the_deferred_ssl(tmp_path: Path, certificate: tuple[Path, Path]) -> None:
    run = _https_run(tmp_path, certificate, trust=True)
    assert (run.returncode, run.stdout.strip()) == (0, "hello over https"), run.stderr


def test_an_https_provider_with_an_untrusted_certificate_is_refused(
    tmp_path: Path, certificate: tuple[Path, Path]
) -> None:
    run = _https_run(tmp_path, certificate, trust=False)
    assert run.returncode != 0
    assert "certificate verify failed" in run.stderr


def test_once_ssl_is_used_asyncio_holds_what_a_normal_import_gives_it() -> None:
    states = [
        json.loads(subprocess.run(
            [sys.executable, "-c", _ASYNCIO_STATE, how], capture_output=True, text=True, check=True, timeout=60
        ).stdout)
        for how in ("plain", "deferred")
    ]  # fmt: skip
    assert states[1] == states[0]
    assert all(holds_real_ssl for _, holds_real_ssl in states[1].values())
