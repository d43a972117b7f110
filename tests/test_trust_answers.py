"""The trust prompt's answers in the user's config.toml (issue 24, section 3).

The file is the user's: a new one is private, an existing one keeps its
settings, comments and mode, a link stays a link, and a file that cannot be
kept is one sentence with nothing written.
"""

from __future__ import annotations

import stat
import tomllib
from pathlib import Path

import pytest
from helpers.project_kit import write

from koroku_tui.config.settings import Settings, default_config_file, user_config_dir
from koroku_tui.config.trust import is_trusted
from koroku_tui.privacy.trust_answers import TrustFileError, remember_folder


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_config_folder_follows_the_platform(tmp_path: Path) -> None:
    # conftest points XDG_CONFIG_HOME into a temporary folder for every test.
    assert default_config_file() == user_config_dir() / "config.toml"
    assert user_config_dir().name == "koroku"
    assert user_config_dir().parent != Path.home() / ".config"


def test_a_new_file_is_private_in_a_private_folder(tmp_path: Path) -> None:
    config = tmp_path / "cfg" / "koroku" / "config.toml"
    assert remember_folder(config, "trusted_folders", tmp_path / "repo" / ".." / "repo")
    assert tomllib.loads(config.read_text()) == {"trusted_folders": [str(tmp_path / "repo")]}
    assert mode(config) == 0o600
    assert mode(config.parent) == 0o700
    assert not list(config.parent.glob(".*.new"))  # the temporary file was renamed


def test_the_users_settings_and_comments_are_kept(tmp_path: Path) -> None:
    config = write(
        tmp_path / "config.toml",
        '# my settings\nmodel = "gemini-3-pro-preview"  # the good one\n\n'
        '[approval]\nallow_commands = ["git status"]\n',
    )
    config.chmod(0o640)
    remember_folder(config, "trusted_folders", tmp_path / "a")
    remember_folder(config, "ignored_folders", tmp_path / "b")
    text = config.read_text()
    assert text.startswith('# my settings\nmodel = "gemini-3-pro-preview"  # the good one\n')
    assert "[approval]" in text
    values = tomllib.loads(text)
    assert values["approval"] == {"allow_commands": ["git status"]}
    assert values["trusted_folders"] == [str(tmp_path / "a")]
    assert values["ignored_folders"] == [str(tmp_path / "b")]
    assert mode(config) == 0o640
    # Settings take the folders as the config loading will hand them over.
    settings = Settings(home=tmp_path, **{k: values[k] for k in ("trusted_folders",)})
    assert is_trusted(tmp_path / "a" / "sub", settings.trusted_folders)


def test_a_folder_already_listed_is_not_written_twice(tmp_path: Path) -> None:
    config = write(tmp_path / "config.toml", f'trusted_folders = [\n  "{tmp_path}",  # mine\n]\n')
    before = config.read_text()
    assert not remember_folder(config, "trusted_folders", tmp_path)
    assert config.read_text() == before
    remember_folder(config, "trusted_folders", tmp_path / "other")
    assert "# mine" in config.read_text()
    assert tomllib.loads(config.read_text())["trusted_folders"] == [
        str(tmp_path),
        str(tmp_path / "other"),
    ]


def test_a_linked_config_file_stays_a_link(tmp_path: Path) -> None:
    dotfiles = write(tmp_path / "dotfiles" / "koroku.toml", 'model = "m"\n')
    config = tmp_path / "cfg" / "config.toml"
    config.parent.mkdir()
    config.symlink_to(dotfiles)
    remember_folder(config, "trusted_folders", tmp_path / "repo")
    assert config.is_symlink()
    assert tomllib.loads(dotfiles.read_text())["trusted_folders"] == [str(tmp_path / "repo")]


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ('model = "unterminated\n', "is not valid TOML (line 1, column"),
        ('trusted_folders = "/home/me"\n', "trusted_folders in"),
        (b"model = '\xff'\n", "is not UTF-8 text"),
    ],
)
def test_a_file_that_cannot_be_kept_is_one_sentence_and_left_as_it_was(
    tmp_path: Path, content: str | bytes, said: str
) -> None:
    config = write(tmp_path / "config.toml", content)
    before = config.read_bytes()
    with pytest.raises(TrustFileError) as caught:
        remember_folder(config, "trusted_folders", tmp_path / "repo")
    assert said in str(caught.value) and str(config) in str(caught.value)
    assert "\n" not in str(caught.value)
    assert config.read_bytes() == before


def test_a_folder_in_the_way_is_one_sentence(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.mkdir()
    with pytest.raises(TrustFileError, match="is a folder, not a regular file"):
        remember_folder(config, "trusted_folders", tmp_path / "repo")
