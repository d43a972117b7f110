"""A user with a home folder, a config file and a project repository, all in tmp_path."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from koroku_tui.cli import main

__all__ = ["Desk", "Said", "desk", "show_config"]


@dataclass(frozen=True)
class Desk:
    """Where things are for one test; nothing exists but the repository's folder."""

    me: Path
    """``$HOME``: the user config file is ``~/.config/koroku/config.toml``."""
    user_file: Path
    workspace: Path
    """The current folder: ``~/src/proj``, a repository (it holds ``.git``)."""
    project_file: Path
    """``.koroku/config.toml`` in the workspace."""
    koroku_home: Path
    """``KOROKU_HOME`` (not created: a start that fails must leave it so)."""

    def user(self, text: str) -> Path:
        """Write the user's config file."""
        return _write(self.user_file, text)

    def project(self, text: str) -> Path:
        """Write the project's config file."""
        return _write(self.project_file, text)

    def trust(self, *extra: str) -> Path:
        """A user file trusting the workspace, with ``extra`` lines after it."""
        return self.user("\n".join([f'trusted_folders = ["{self.workspace}"]', *extra]) + "\n")


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def desk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Desk]:
    """A user's home in tmp_path, the current folder in a repository there."""
    me = tmp_path / "me"
    workspace = me / "src" / "proj"
    (workspace / ".git").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(me))
    monkeypatch.delenv("XDG_CONFIG_HOME")  # the default: ~/.config
    monkeypatch.setenv("KOROKU_HOME", str(me / "koroku-data"))
    monkeypatch.chdir(workspace)
    yield Desk(
        me=me,
        user_file=me / ".config" / "koroku" / "config.toml",
        workspace=workspace,
        project_file=workspace / ".koroku" / "config.toml",
        koroku_home=me / "koroku-data",
    )


@dataclass(frozen=True)
class Said:
    """What ``koroku-tui`` printed, and its exit code."""

    code: int
    out: str
    err: str

    def line(self, start: str) -> str:
        """The output line that starts with ``start`` (``"at = "``)."""
        found = [line for line in self.out.splitlines() if line.startswith(start)]
        assert len(found) == 1, f"{start!r} in:\n{self.out}"
        return found[0]


def show_config(capsys: pytest.CaptureFixture[str], *args: str) -> Said:
    """``koroku-tui --show-config ARGS`` run by ``cli.main`` in this process."""
    code = main(["--show-config", *args])
    captured = capsys.readouterr()
    return Said(code, captured.out, captured.err)
