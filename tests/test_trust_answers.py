"""The trust prompt's answers in the user's config.toml (issue 24, section 3).

The file is the user's: a new one is private, an existing one keeps its
settings, comments and mode, a link stays a link, and a file that cannot be
kept is one sentence with nothing written.
"""

from __future__ import annotations

import os
import stat
import threading
import tomllib
from pathlib import Path

import pytest
from helpers.project_kit import write

from koroku_tui.config.settings import Settings, default_config_file, user_config_dir
from koroku_tui.config.trust import is_trusted
from koroku_tui.privacy import trust_answers
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


def test_a_folder_whose_name_is_not_utf8_is_one_sentence_and_nothing_is_written(
    tmp_path: Path,
) -> None:
    # The app crashed on a UnicodeEncodeError when such a folder was trusted.
    config = write(tmp_path / "config.toml", "# mine\n")
    folder = tmp_path / os.fsdecode(b"caf\xe9")
    with pytest.raises(TrustFileError) as caught:
        remember_folder(config, "trusted_folders", folder)
    assert str(caught.value) == (
        f"{tmp_path}/caf\\xe9 has a name that is not UTF-8, and {config} can only hold UTF-8 "
        "text; rename the folder to keep an answer about it."
    )
    assert config.read_text() == "# mine\n"


def test_two_windows_answering_at_once_both_keep_their_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = write(tmp_path / "config.toml", "# mine\n")
    first_writing, first_may_write, second_read = (threading.Event() for _ in range(3))
    replace, read = trust_answers._replace, trust_answers._read

    def paused_replace(target: Path, data: bytes, named: Path) -> None:
        if threading.current_thread().name == "first":
            first_writing.set()
            first_may_write.wait(10)
        replace(target, data, named)

    def noted_read(target: Path, named: Path) -> str:
        if threading.current_thread().name == "second":
            second_read.set()
        return read(target, named)

    monkeypatch.setattr(trust_answers, "_replace", paused_replace)
    monkeypatch.setattr(trust_answers, "_read", noted_read)
    windows = [
        threading.Thread(target=remember_folder, args=(config, key, tmp_path / name), name=name)
        for name, key in (("first", "trusted_folders"), ("second", "ignored_folders"))
    ]
    windows[0].start()
    assert first_writing.wait(10)
    windows[1].start()
    # Unlocked, the second window reads the file the first is about to replace; locked, it
    # waits for the lock, and this wait runs out.
    second_read.wait(1)
    first_may_write.set()
    for window in windows:
        window.join(10)
    assert tomllib.loads(config.read_text()) == {
        "trusted_folders": [str(tmp_path / "first")],
        "ignored_folders": [str(tmp_path / "second")],
    }


def test_a_read_only_file_is_left_as_it_was(tmp_path: Path) -> None:
    # Made read-only by its owner (or a dotfiles manager): the rename would replace it anyway.
    config = write(tmp_path / "config.toml", "# generated, do not edit\n")
    config.chmod(0o444)
    with pytest.raises(TrustFileError) as caught:
        remember_folder(config, "trusted_folders", tmp_path / "repo")
    assert str(caught.value) == (
        f"{config} is read-only, so Koroku leaves it as it is; make it writable to keep the answer."
    )
    assert config.read_text() == "# generated, do not edit\n"
    assert mode(config) == 0o444
