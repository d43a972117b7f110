"""The guard that makes a stdio server die with Koroku, run as Koroku runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from koroku_tui.agent.tools.mcp import guard


def run_guard(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-I", "-S", guard.__file__, *argv],
        capture_output=True,
        text=True,
        timeout=30,
    )


def test_a_guard_whose_koroku_is_already_gone_starts_no_server(tmp_path: Path) -> None:
    # Koroku killed between starting the guard and the guard's request to die
    # with it: getppid() then names whoever adopted the guard, so the guard is
    # told Koroku's pid and compares with that.
    marker = tmp_path / "server ran"
    gone = run_guard("--parent", "1", "--", "/bin/sh", "-c", f"touch '{marker}'")
    assert gone.returncode == 143
    assert not marker.exists()


def test_a_guard_runs_its_server_and_returns_its_status(tmp_path: Path) -> None:
    marker = tmp_path / "server ran"
    done = run_guard(
        "--parent", str(os.getpid()), "--", "/bin/sh", "-c", f"touch '{marker}'; exit 3"
    )
    assert done.returncode == 3
    assert marker.exists()
