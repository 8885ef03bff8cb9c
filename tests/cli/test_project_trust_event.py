"""The ``project_trust`` extension event and ``ctx.is_project_trusted()`` (pi 1.6), over the real
`tau` process: a user's or ``-e`` extension may decide whether a folder is trusted before tau's own
rules; the folder's extensions never take part (they load only once it is trusted)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tau_command import MODEL, TauCommand

from tau.modes.rpc_client import RpcClient
from tau.testing.fake_llm import Turn

MARKER_EXTENSION = """\
from pathlib import Path


def setup(tau):
    Path(__file__).resolve().parents[2].joinpath("marker.txt").write_text("ran")
"""

# A user extension answering with the JSON in its folder's ``answer.json`` (or raising), writing
# what its handler saw to ``seen.json``.
DECIDER = """\
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def setup(tau):
    @tau.on("project_trust")
    def decide(event, ctx):
        HERE.joinpath("seen.json").write_text(json.dumps(
            {"cwd": event.cwd, "ctx_cwd": ctx.cwd, "mode": ctx.mode, "has_ui": ctx.has_ui}
        ))
        answer = json.loads(HERE.joinpath("answer.json").read_text())
        if answer == "raise":
            raise RuntimeError("no idea")
        return answer

    @tau.on("session_start")
    def started(event, ctx):
        HERE.joinpath("trusted.json").write_text(json.dumps(ctx.is_project_trusted()))
"""


def project_extension(tau: TauCommand) -> Path:
    """A project extension that leaves ``marker.txt`` in the folder when it runs; the marker's path."""
    folder = tau.work / ".tau" / "extensions"
    folder.mkdir(parents=True)
    (folder / "mark.py").write_text(MARKER_EXTENSION)
    return tau.work / "marker.txt"


def save_trust(tau: TauCommand, data: object) -> None:
    (tau.agent_dir / "trust.json").write_text(json.dumps(data))


def decider(tau: TauCommand, answer: object) -> Path:
    """The deciding user extension, answering ``answer``; its folder."""
    folder = tau.agent_dir / "extensions"
    folder.mkdir(exist_ok=True)
    (folder / "decider.py").write_text(DECIDER)
    (folder / "answer.json").write_text(json.dumps(answer))
    return folder


def seen(folder: Path) -> dict[str, object] | None:
    path = folder / "seen.json"
    return json.loads(path.read_text()) if path.exists() else None


def test_a_user_extension_that_says_yes_trusts_the_folder_for_this_run(tau: TauCommand) -> None:
    marker = project_extension(tau)
    folder = decider(tau, {"trusted": "yes"})
    tau.server.add(Turn(text="hello"))
    result = tau.run(*MODEL, "-p", "hi")
    assert result.returncode == 0, result.stderr
    assert marker.read_text() == "ran"
    cwd = str(tau.work.resolve())
    assert seen(folder) == {"cwd": cwd, "ctx_cwd": cwd, "mode": "print", "has_ui": False}
    assert json.loads((folder / "trusted.json").read_text()) is True  # ctx.is_project_trusted()
    assert not (tau.agent_dir / "trust.json").exists()  # not remembered


def test_a_no_from_an_extension_wins_over_a_saved_trust(tau: TauCommand) -> None:
    marker = project_extension(tau)
    folder = decider(tau, {"trusted": "no"})
    save_trust(tau, {str(tau.work.resolve()): True})
    tau.server.add(Turn(text="hello"))
    assert tau.run(*MODEL, "--mode", "json", "-p", "hi").returncode == 0
    assert not marker.exists()
    assert seen(folder) is not None and seen(folder)["mode"] == "json"  # type: ignore[index]
    assert json.loads((folder / "trusted.json").read_text()) is False


def test_remember_saves_the_extensions_decision_in_trust_json(tau: TauCommand) -> None:
    project_extension(tau)
    decider(tau, {"trusted": "yes", "remember": True})
    tau.server.add(Turn(text="hello"))
    assert tau.run(*MODEL, "-p", "hi").returncode == 0
    assert json.loads((tau.agent_dir / "trust.json").read_text()) == {str(tau.work.resolve()): True}


def test_undecided_and_a_failing_handler_leave_tau_s_own_rules(tau: TauCommand) -> None:
    marker = project_extension(tau)
    folder = decider(tau, "raise")
    tau.server.add(Turn(text="hello"), Turn(text="hello"))
    result = tau.run(*MODEL, "-p", "hi")
    assert result.returncode == 0
    assert not marker.exists()  # print mode does not trust an undecided folder
    assert f'Extension "{folder / "decider.py"}" project_trust error: no idea' in result.stderr
    (folder / "answer.json").write_text(json.dumps({"trusted": "undecided"}))
    save_trust(tau, {str(tau.work.resolve()): True})
    assert tau.run(*MODEL, "-p", "hi").returncode == 0
    assert marker.exists()  # the saved decision applies


def test_approve_decides_before_any_extension_is_asked(tau: TauCommand) -> None:
    marker = project_extension(tau)
    folder = decider(tau, {"trusted": "no"})
    tau.server.add(Turn(text="hello"))
    assert tau.run(*MODEL, "-a", "-p", "hi").returncode == 0
    assert marker.exists()
    assert seen(folder) is None


def test_a_folder_with_nothing_to_protect_fires_no_event(tau: TauCommand) -> None:
    folder = decider(tau, {"trusted": "no"})
    tau.server.add(Turn(text="hello"))
    assert tau.run(*MODEL, "-p", "hi").returncode == 0
    assert seen(folder) is None
    assert json.loads((folder / "trusted.json").read_text()) is True


def test_the_folders_own_extension_cannot_decide(tau: TauCommand) -> None:
    marker = project_extension(tau)
    (tau.work / ".tau" / "extensions" / "yes.py").write_text(
        "def setup(tau):\n    tau.on('project_trust')(lambda event, ctx: {'trusted': 'yes'})\n"
    )
    tau.server.add(Turn(text="hello"))
    assert tau.run(*MODEL, "-p", "hi").returncode == 0
    assert not marker.exists()


def test_an_extension_given_with_e_takes_part_and_loads_once(tau: TauCommand) -> None:
    marker = project_extension(tau)
    outside = tau.work.parent / "cli-ext"
    outside.mkdir()
    (outside / "decider.py").write_text(
        DECIDER.replace(
            "def setup(tau):", "def setup(tau):\n    HERE.joinpath('loads.txt').open('a').write('x')"
        )
    )
    (outside / "answer.json").write_text(json.dumps({"trusted": "yes"}))
    tau.server.add(Turn(text="hello"))
    assert tau.run(*MODEL, "-e", str(outside / "decider.py"), "-p", "hi").returncode == 0
    assert marker.exists()
    assert (outside / "loads.txt").read_text() == "x"  # kept for the session, not loaded again


async def test_switching_to_a_session_of_a_new_folder_lets_the_extensions_decide_there(
    tau: TauCommand,
) -> None:
    folder = decider(tau, {"trusted": "yes"})
    other = tau.work.parent / "other-project"
    (other / ".tau" / "extensions").mkdir(parents=True)
    (other / ".tau" / "extensions" / "mark.py").write_text(MARKER_EXTENSION)
    session = other / "s.jsonl"
    header = {"type": "session", "version": 3, "id": "s-other", "timestamp": "2026-01-01T00:00:00.000Z",
              "cwd": str(other)}  # fmt: skip
    session.write_text(json.dumps(header) + "\n")
    command = [sys.executable, "-m", "tau", "--mode", "rpc", *MODEL]
    async with RpcClient(command, cwd=str(tau.work), env=tau.env) as rpc:
        assert seen(folder) is None  # the start folder has nothing to protect
        assert await rpc.call("switch_session", sessionPath=str(session)) == {"cancelled": False}
    cwd = str(other.resolve())
    assert seen(folder) == {"cwd": cwd, "ctx_cwd": cwd, "mode": "rpc", "has_ui": False}
    assert (other / "marker.txt").read_text() == "ran"
