"""A config file Koroku cannot use: one sentence, exit 2, and nothing opened or made."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from helpers.config_kit import Desk, show_config
from helpers.processes import KOROKU

from koroku_tui.cli import main

USER = "~/.config/koroku/config.toml"


def refused(desk: Desk, capsys: pytest.CaptureFixture[str]) -> str:
    """The one line ``koroku-tui --print hi`` says, after checking it made nothing."""
    code = main(["--print", "hi"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert not desk.koroku_home.exists()  # no home, no database, no log
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    return err.removeprefix("koroku-tui: ").rstrip("\n")


@pytest.mark.parametrize(
    ("text", "sentence"),
    [
        (
            'model = "x"\nstall_timeout = = 3\n',
            f"{USER} is not valid TOML at line 2, column 17: invalid value.",
        ),
        (
            "[compaction]\nat = 0.7\n[compaction]\n",
            f"{USER} is not valid TOML at line 3, column 12: cannot declare ('compaction',) twice.",
        ),
        ('model = "unfinished\n', f"{USER} is not valid TOML at line 1, column 20: "),
    ],
    ids=["value", "table twice", "string"],
)
def test_invalid_toml_names_the_file_line_and_column(
    desk: Desk, capsys: pytest.CaptureFixture[str], text: str, sentence: str
) -> None:
    desk.user(text)
    assert refused(desk, capsys).startswith(sentence)


@pytest.mark.parametrize(
    ("text", "sentence"),
    [
        (
            'model = "m"\nstall_timeout = "120"\n',
            f"stall_timeout on line 2 of {USER} is not usable (input should be a valid number, "
            'not "120"); fix the file.',
        ),
        (
            "# compaction\n\n[compaction]\nat = 7\n",
            f"compaction.at on line 4 of {USER} is not usable (input should be less than or "
            "equal to 1, not 7); fix the file.",
        ),
        (
            '[approval]\ndeny_commands = [\n  "rm",\n  3,\n]\n',
            f"approval.deny_commands[1] on line 2 of {USER} is not usable (input should be a "
            "valid string, not 3); fix the file.",
        ),
        (
            '[approval]\ntools = { write_file = "sometimes" }\n',
            f"approval.tools.write_file on line 2 of {USER} is not usable (input should be "
            "'allow', 'ask' or 'deny', not \"sometimes\"); fix the file.",
        ),
        (
            'home = ""\n',
            f'home on line 1 of {USER} is not usable (it is empty, so it names no folder, not ""); '
            "fix the file.",
        ),
        (
            "compaction = 0.5\n",
            f"`compaction` on line 1 of {USER} must be a table (a [compaction] section); "
            "fix the file.",
        ),
        (
            'trusted_folders = ["~/src", " "]\n',
            f"trusted_folders[1] on line 1 of {USER} is not usable (it is empty, so it names no "
            'folder, not " "); fix the file.',
        ),
        (
            '# a comment \u2028 with a line separator\nstall_timeout = "120"\n',
            f"stall_timeout on line 2 of {USER} is not usable (input should be a valid number, "
            'not "120"); fix the file.',
        ),
        (
            '[instructions]\nfiles = ["AGENTS.md", "../../.ssh/id_rsa"]\n',
            f"instructions.files on line 2 of {USER} is not usable (an instruction file is a "
            "name, not a path: `../../.ssh/id_rsa`); fix the file.",
        ),
        (
            '[instructions]\nfiles = ["/etc/passwd"]\n',
            f"instructions.files on line 2 of {USER} is not usable (an instruction file is a "
            "name, not a path: `/etc/passwd`); fix the file.",
        ),
        (
            'model = "gemini-3-pro-preview#x"\n',
            f"model on line 1 of {USER} is not usable (a model id holds only letters, digits, "
            '`.`, `-` and `_`, not "gemini-3-pro-preview#x"); fix the file.',
        ),
    ],
    ids=[
        "string for number",
        "out of range",
        "list entry",
        "tool rule",
        "empty home",
        "table",
        "blank folder",
        "line separator in a comment",
        "instruction file up",
        "instruction file absolute",
        "model id",
    ],
)
def test_a_wrong_value_names_the_key_the_file_and_the_line(
    desk: Desk, capsys: pytest.CaptureFixture[str], text: str, sentence: str
) -> None:
    desk.user(text)
    assert refused(desk, capsys) == sentence


def test_a_trusted_projects_bad_value_names_that_file(
    desk: Desk, capsys: pytest.CaptureFixture[str]
) -> None:
    desk.trust()
    desk.project("\n[compaction]\nafter_events = 2\n")
    assert refused(desk, capsys) == (
        "compaction.after_events on line 3 of ~/src/proj/.koroku/config.toml is not usable "
        "(input should be greater than or equal to 4, not 2); fix the file."
    )
    desk.project('[approval]\ndeny_commands = ["git push"]\nmodel = = "x"\n')
    assert refused(desk, capsys).startswith(
        "~/src/proj/.koroku/config.toml is not valid TOML at line 3, column 9: "
    )


@pytest.mark.parametrize(
    ("text", "why"),
    [
        (
            '[approval]\ndeny_commands = ["git push"]\nmodel = = "x"\n',
            "~/src/proj/.koroku/config.toml is not valid TOML at line 3, column 9: invalid value",
        ),
        (
            '[approval]\ndeny_commands = ["git push"]\n\n[compaction]\nat = 7\n',
            "compaction.at on line 5 of ~/src/proj/.koroku/config.toml is not usable (input "
            "should be less than or equal to 1, not 7)",
        ),
    ],
    ids=["not toml", "wrong value"],
)
def test_an_untrusted_projects_broken_file_is_one_warning_and_none_of_it_applies(
    desk: Desk, capsys: pytest.CaptureFixture[str], text: str, why: str
) -> None:
    # A cloned repository must not be able to stop Koroku from starting in it.
    desk.user('[approval]\ndeny_commands = ["rm"]\n')
    desk.project(text)
    said = show_config(capsys)
    assert said.code == 0, said.err
    assert said.line("deny_commands = ").startswith('deny_commands = ["rm"]  #')  # not its deny
    assert said.err == (
        "koroku-tui: ~/src/proj/.koroku/config.toml: this folder is not trusted, so none of "
        f"it applies, not even its deny rules: {why}.\n"
    )


def _fifo(path: Path) -> None:
    os.mkfifo(path)


@pytest.mark.parametrize(
    ("make", "sentence"),
    [
        (lambda p: p.write_bytes(b'model = "caf\xe9"\n'), f"{USER} is not UTF-8 text (byte 12 is"),
        (lambda p: p.mkdir(), f"{USER} is a folder, not a regular file."),
        (_fifo, f"{USER} is a named pipe (FIFO), not a regular file."),
        (
            lambda p: p.write_text("# " + "x" * 1_000_000 + "\n"),
            f"{USER} is 1,000,003 bytes, more than the 1.0 MB Koroku reads.",
        ),
    ],
    ids=["not utf-8", "folder", "fifo", "over 1 MB"],
)
def test_a_file_that_cannot_be_read_is_one_sentence(
    desk: Desk, capsys: pytest.CaptureFixture[str], make: object, sentence: str
) -> None:
    desk.user_file.parent.mkdir(parents=True)
    make(desk.user_file)  # type: ignore[operator]
    assert refused(desk, capsys).startswith(sentence)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file of mode 000")
def test_an_unreadable_file_is_one_sentence(desk: Desk, capsys: pytest.CaptureFixture[str]) -> None:
    desk.user('model = "m"\n').chmod(0)
    assert refused(desk, capsys) == f"{USER} cannot be read (permission denied)."


def test_the_users_file_may_be_a_link_a_projects_may_not(
    desk: Desk, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    dotfiles = tmp_path / "dotfiles.toml"
    dotfiles.write_text(f'model = "from-dotfiles"\ntrusted_folders = ["{desk.workspace}"]\n')
    desk.user_file.parent.mkdir(parents=True)
    desk.user_file.symlink_to(dotfiles)
    said = show_config(capsys)
    assert said.line("model = ") == f'model = "from-dotfiles"  # {USER}:1'

    desk.project_file.parent.mkdir()
    desk.project_file.symlink_to(dotfiles)
    assert refused(desk, capsys) == (
        f"~/src/proj/.koroku/config.toml is reached through a link ({desk.project_file}), and "
        "Koroku follows no link in a project's files; put the file itself there."
    )


def test_the_installed_command_shows_the_config_and_refuses_a_bad_one(desk: Desk) -> None:
    assert KOROKU is not None
    desk.user('model = "m"\n\n[compaction]\nat = 0.75\n')
    shown = subprocess.run(
        [KOROKU, "--show-config"], capture_output=True, text=True, timeout=60, check=False
    )
    assert shown.returncode == 0, shown.stderr
    assert f"at = 0.75  # {USER}:4\n" in shown.stdout
    desk.user('model = "m"\n\n[compaction]\nat = "most"\n')
    bad = subprocess.run(
        [KOROKU, "--print", "hi"], capture_output=True, text=True, timeout=60, check=False
    )
    assert (bad.returncode, bad.stdout) == (2, "")
    assert bad.stderr == (
        f"koroku-tui: compaction.at on line 4 of {USER} is not usable (input should be a "
        'valid number, not "most"); fix the file.\n'
    )
    assert not desk.koroku_home.exists()


def test_escapes_in_a_files_keys_and_values_reach_the_terminal_as_escapes(desk: Desk) -> None:
    # A key or a value quoted back must not clear the screen, retitle the window or reorder
    # the line; nor may a line break in a key start a line that looks like Koroku's.
    assert KOROKU is not None
    desk.user(
        '"\\u001b[2J\\u202e\\nkoroku-tui: all fine" = 1\n'
        '[instructions]\nfiles = ["a\\u009b31m\\u202e.md"]\n'
    )
    shown = subprocess.run(
        [KOROKU, "--show-config"], capture_output=True, text=True, timeout=60, check=False
    )
    assert shown.returncode == 0, shown.stderr
    assert shown.stderr == (
        f"koroku-tui: {USER}:1: `\\u001b[2J\\u202e\\nkoroku-tui: all fine` is not a known key; "
        "it was ignored.\n"
    )
    assert 'files = ["a\\u009b31m\\u202e.md"]  # ' in shown.stdout
    desk.user('[approval]\ntools = { "\\u001b]0;pwned\\u0007" = "sometimes" }\n')
    bad = subprocess.run(
        [KOROKU, "--print", "hi"], capture_output=True, text=True, timeout=60, check=False
    )
    assert bad.returncode == 2
    assert bad.stderr.startswith("koroku-tui: approval.tools.\\u001b]0;pwned\\u0007 on line 2 ")
