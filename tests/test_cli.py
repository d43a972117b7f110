"""The command line: --version, --help and ``python -m`` work, the home folder is resolved."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from koroku_tui import __version__
from koroku_tui.cli import main
from koroku_tui.config.settings import Settings, default_home


def test_version_flag(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"koroku-tui {__version__}"


def test_help_lists_the_home_flag(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "--home DIR" in capsys.readouterr().out


def test_python_dash_m_runs_the_same_entry_point(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "koroku_tui", "--version"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert result.returncode == 0
    assert result.stdout.strip() == f"koroku-tui {__version__}"


def test_home_comes_from_env_else_platform_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KOROKU_HOME", raising=False)
    assert Settings().home == default_home()
    assert default_home().name == "koroku"
    monkeypatch.setenv("KOROKU_HOME", str(tmp_path))
    settings = Settings()
    assert settings.home == tmp_path
    assert settings.database_path == tmp_path / "koroku.db"
    assert settings.memory_dir == tmp_path / "memory"


def test_an_empty_home_variable_is_refused_not_taken_for_the_default() -> None:
    """A script's ``KOROKU_HOME="$UNSET"`` meant to keep Koroku apart, not in the user's data."""
    command = str(Path(sys.executable).parent / "koroku-tui")
    env = os.environ | {"KOROKU_HOME": " "}
    done = subprocess.run([command, "--print", "hello"], env=env, capture_output=True, text=True)
    assert (done.returncode, done.stderr) == (
        1,
        "koroku-tui: KOROKU_HOME is not usable (it is empty, so it names no folder); "
        "fix or unset it.\n",
    )


@pytest.mark.parametrize("home", ["", " "], ids=["empty", "blank"])
def test_an_empty_home_flag_is_refused_not_taken_for_the_current_folder(
    tmp_path: Path, home: str
) -> None:
    command = str(Path(sys.executable).parent / "koroku-tui")
    done = subprocess.run(
        [command, "--home", home, "--print", "hi"], cwd=tmp_path, capture_output=True, text=True
    )
    assert done.returncode == 2
    assert done.stderr.endswith(
        "koroku-tui: error: argument --home: it is empty, so it names no folder\n"
    )
    assert list(tmp_path.iterdir()) == []  # nothing written where the command ran


@pytest.mark.parametrize("empty_first", [True, False], ids=["empty first", "empty last"])
def test_an_empty_spelling_of_the_home_variable_does_not_veto_a_set_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, empty_first: bool
) -> None:
    # Names match in any case; which one the environment lists first must not matter.
    monkeypatch.delenv("KOROKU_HOME", raising=False)
    spellings = [("koroku_home", ""), ("KOROKU_HOME", str(tmp_path))]
    for name, value in spellings if empty_first else reversed(spellings):
        monkeypatch.setenv(name, value)
    assert Settings().home == tmp_path


# -- settings the system or the client cannot take: one sentence naming them ----

UNUSABLE_HOMES: list[tuple[str, str]] = [
    ("a" * 300, "a folder name in it is 300 bytes long, and a name may have at most 255"),
    ("a/" * 3_000, "and a path may have at most 4,095"),  # 3,000 levels
    ("caf\udcff", "it holds bytes that are not UTF-8"),  # the byte 0xff, as Python reads it
]


@pytest.mark.parametrize(
    ("name", "told"), UNUSABLE_HOMES, ids=["300 characters", "3,000 levels", "not UTF-8"]
)
def test_a_home_the_system_cannot_take_is_one_sentence_naming_the_variable(
    tmp_path: Path, name: str, told: str
) -> None:
    command = str(Path(sys.executable).parent / "koroku-tui")
    home = f"{tmp_path}/{name}"
    env = os.environ | {"KOROKU_HOME": home, "GEMINI_API_KEY": "test-key"}
    done = subprocess.run([command, "--print", "hi"], env=env, capture_output=True, timeout=60)
    stderr = done.stderr.decode("utf-8", errors="replace")
    assert done.returncode == 1
    assert stderr.startswith("koroku-tui: KOROKU_HOME is not usable (") and told in stderr
    assert stderr.count("\n") == 1 and stderr.endswith("; fix or unset it.\n")  # one line
    assert list(tmp_path.iterdir()) == []  # nothing made
    flagged = subprocess.run(
        [command, "--home", home, "--print", "hi"], env=env, capture_output=True, timeout=60
    )
    said = flagged.stderr.decode("utf-8", errors="replace").splitlines()[-1]
    assert flagged.returncode == 2 and said.startswith("koroku-tui: error: argument --home: ")
    assert told in said


@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "1e300", "86401"])
def test_a_stall_timeout_the_client_cannot_take_names_the_variable_not_the_key(
    tmp_path: Path, value: str
) -> None:
    command = str(Path(sys.executable).parent / "koroku-tui")
    env = os.environ | {
        "KOROKU_HOME": str(tmp_path),
        "KOROKU_STALL_TIMEOUT": value,
        "GEMINI_API_KEY": "test-key",
    }
    done = subprocess.run(
        [command, "--print", "hi"], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1
    assert done.stderr.startswith("koroku-tui: KOROKU_STALL_TIMEOUT is not usable (")
    assert done.stderr.count("\n") == 1 and "API_KEY" not in done.stderr


def test_the_longest_stall_timeout_is_a_day() -> None:
    assert Settings(stall_timeout=86_400).stall_timeout == 86_400
