"""``tau update --self`` / ``self`` / ``--all`` / ``--force``, as pi 1.6's ``update`` targets, run by
the real command with a recording update command (``TAU_SELF_UPDATE_COMMAND``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from tau_command import TauCommand, tau_command


@pytest.fixture
def tau(tmp_path: Path) -> Iterator[TauCommand]:
    yield from tau_command(tmp_path)


def _recorder(tau: TauCommand, *, exit_code: int = 0) -> Path:
    log = tau.work.parent / "update.log"
    script = tau.work.parent / "updater"
    script.write_text(f'#!/bin/sh\necho "$@" >> {log}\nexit {exit_code}\n')
    script.chmod(0o755)
    tau.env["TAU_SELF_UPDATE_COMMAND"] = f"{script} install {{installSpec}} {{packageName}} {{version}}"
    return log


@pytest.mark.parametrize("target", [["--self"], ["self"], ["tau"]])
def test_update_self_runs_the_update_command_with_pis_placeholders(
    tau: TauCommand, target: list[str]
) -> None:
    log = _recorder(tau)
    result = tau.run("update", *target)
    assert result.returncode == 0, result.stderr
    assert log.read_text() == "install tau-agent tau-agent latest\n"
    assert "Packages are already up to date" not in result.stdout  # the packages are left alone


def test_update_all_updates_tau_then_the_packages(tau: TauCommand) -> None:
    log = _recorder(tau)
    result = tau.run("update", "--all")
    assert result.returncode == 0, result.stderr
    assert log.read_text() == "install tau-agent tau-agent latest\n"
    assert result.stdout.splitlines()[-1] == "Packages are already up to date"


def test_update_without_a_target_or_with_extensions_leaves_tau_alone(tau: TauCommand) -> None:
    log = _recorder(tau)
    assert tau.run("update").stdout == "Packages are already up to date\n"
    assert tau.run("update", "--extensions").stdout == "Packages are already up to date\n"
    assert not log.exists()


def test_a_failing_update_command_is_one_line_and_exit_1(tau: TauCommand) -> None:
    _recorder(tau, exit_code=3)
    result = tau.run("update", "--self")
    assert result.returncode == 1
    assert result.stderr.startswith("tau: the update command failed (exit 3): ")
    assert len(result.stderr.splitlines()) == 1


def test_the_setting_gives_the_command_as_an_argv_list(tau: TauCommand) -> None:
    log = tau.work.parent / "update.log"
    script = tau.work.parent / "upgrade it"
    script.write_text(f'#!/bin/sh\necho "$@" >> "{log}"\n')
    script.chmod(0o755)
    (tau.agent_dir / "settings.json").write_text(json.dumps({"selfUpdateCommand": [str(script), "a b"]}))
    assert tau.run("update", "self").returncode == 0
    assert log.read_text() == "a b\n"


def test_an_editable_install_is_not_replaced_and_force_needs_self(tau: TauCommand) -> None:
    # The test run's tau is an editable install of this checkout (README, Set up): pip must not
    # replace it. (Were it not, pip is kept off the network here.)
    tau.env["PIP_NO_INDEX"] = "1"
    result = tau.run("update", "--self", "--force")
    assert result.returncode == 1
    assert (
        "(an editable install): update it there (git pull), or set TAU_SELF_UPDATE_COMMAND" in result.stderr
    )
    forced = tau.run("update", "--force")
    assert (forced.returncode, forced.stderr) == (
        1,
        "tau: --force reinstalls tau itself: use it with --self or --all\n",
    )


def test_update_extension_names_one_package(tau: TauCommand) -> None:
    result = tau.run("update", "--extension", "git:example.com/none")
    assert result.returncode == 1
    assert result.stderr == "tau: no matching package found for git:example.com/none (see: tau list)\n"
