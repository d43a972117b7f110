"""ruff and mypy are part of the test command, so CI and a newcomer run the same checks."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)


def _tool(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent))
    if found is None:
        pytest.fail(f"{name} is not installed in the test environment; run `uv sync`")
    return found


def test_ruff_check_is_clean() -> None:
    result = _run(_tool("ruff"), "check", "koroku_tui", "tests", "bench")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_is_clean() -> None:
    result = _run(_tool("ruff"), "format", "--check", "koroku_tui", "tests", "bench")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_is_clean() -> None:
    result = _run(_tool("mypy"))
    assert result.returncode == 0, result.stdout + result.stderr


def test_import_layers_hold() -> None:
    """The import-linter contracts in pyproject.toml: cli -> ui -> agent -> store -> events."""
    result = _run(_tool("lint-imports"))
    assert result.returncode == 0, result.stdout + result.stderr
