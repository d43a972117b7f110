"""Custom command files read as someone else's text: names, descriptions, links, FIFOs.

``load_commands`` on real files in ``tmp_path`` (the app's side is in
``test_slash_commands``).
"""

from __future__ import annotations

import os
from pathlib import Path

from helpers.project_kit import files_for, write

from koroku_tui.agent.context.custom_commands import (
    LONGEST_NAME,
    CommandFolders,
    expand,
    load_commands,
)
from koroku_tui.config.settings import user_config_dir
from koroku_tui.ui.main.commands import BUILTIN_COMMANDS
from koroku_tui.ui.main.slash import SlashCommands

BUILTINS = [command.name for command in BUILTIN_COMMANDS]


def loaded(workspace: Path, *, trusted: bool = True) -> tuple[dict[str, str], list[str]]:
    """``{name: description}`` of the commands found, and the notices."""
    found = load_commands(
        CommandFolders.of(files_for(workspace, trusted=trusted)), builtins=BUILTINS
    )
    return {n: c.description for n, c in found.commands.items()}, list(found.notices)


def test_the_description_rule(tmp_path: Path) -> None:
    commands = tmp_path / "repo" / ".koroku" / "commands"
    write(commands / "a.md", "Description:  Said on the first line\nsent\n")
    write(commands / "b.md", "\n## A heading\nbody\n")
    write(commands / "c.md", "")
    (tmp_path / "repo" / ".git").mkdir()
    found, said = loaded(tmp_path / "repo")
    assert found == {"a": "Said on the first line", "b": "A heading", "c": ""}
    assert said == []


def test_arguments_are_put_in_once_and_never_expanded_again() -> None:
    text = "run $ARGUMENTS now; again: $ARGUMENTS"
    assert expand(text, "$ARGUMENTS $(id) `id` ${HOME}") == (
        "run $ARGUMENTS $(id) `id` ${HOME} now; again: $ARGUMENTS $(id) `id` ${HOME}"
    )


def test_odd_names_links_out_and_fifos_are_said_never_followed(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    commands = repo / ".koroku" / "commands"
    secret = write(tmp_path / "secret.txt", "the user's secret\n")
    commands.mkdir(parents=True)
    (commands / "leak.md").symlink_to(secret)
    os.mkfifo(commands / "pipe.md")
    write(commands / "bad name\x1b[2J.md", "x\n")
    write(commands / "inside.md", "fine\n")
    (commands / "alias.md").symlink_to(commands / "inside.md")  # a link inside the project
    found, said = loaded(repo)
    assert sorted(found) == ["alias", "inside"]
    assert any(
        "leak.md is not used: it is a link to" in s and "outside the project" in s for s in said
    )
    assert any("pipe.md is not used: it is a named pipe (FIFO)" in s for s in said)
    (odd,) = [s for s in said if "bad name" in s]
    assert "\x1b" not in odd and "\\u001b[2J" in odd and "letters, digits" in odd


def test_an_untrusted_projects_files_are_not_even_read(tmp_path: Path) -> None:
    write(tmp_path / ".koroku" / "commands" / "x.md", b"\xff not utf-8")
    write(user_config_dir() / "commands" / "mine.md", "mine\n")
    found, said = loaded(tmp_path, trusted=False)
    assert found == {"mine": "mine"} and said == []


def test_a_command_folder_linked_out_of_the_project_is_not_read(tmp_path: Path) -> None:
    """``.koroku/commands`` (or ``.koroku``) a link to a folder elsewhere: its files are
    outside the project as surely as a file linked out, and are refused the same way."""
    outside = tmp_path / "elsewhere"
    write(outside / "notes.md", "description: the user's private notes\nsecret\n")
    for linked in (Path(".koroku") / "commands", Path(".koroku")):
        repo = tmp_path / f"repo-{linked.name}"
        (repo / ".git").mkdir(parents=True)
        (repo / linked).parent.mkdir(parents=True, exist_ok=True)
        (repo / linked).symlink_to(outside if linked.name == "commands" else tmp_path / "dot")
        write(tmp_path / "dot" / "commands" / "notes.md", "secret\n")
        found, said = loaded(repo)
        assert found == {}, linked
        assert any("is a link to" in s and "outside the project" in s for s in said), said


def test_a_pasted_blob_starting_with_a_slash_is_not_looked_through_at_each_key() -> None:
    """A JPEG's base64 starts ``/9j/``: megabytes of one word. No command name is longer
    than ``LONGEST_NAME``, so the list gives up at once (it scanned every character, half a
    second a key for 10 MB), and a name that long is still offered."""
    assert SlashCommands._typed_word("/9j/" + "A" * 10_000_000) is None
    assert SlashCommands._typed_word("/" + "a" * LONGEST_NAME) == "a" * LONGEST_NAME


def test_a_file_saved_with_a_byte_order_mark_and_crlf_reads_as_any_other(tmp_path: Path) -> None:
    """Windows editors start UTF-8 with U+FEFF: its description line is still one (the mark
    was shown escaped and the line sent to the model)."""
    commands = tmp_path / ".koroku" / "commands"
    write(commands / "review.md", b"\xef\xbb\xbfdescription: Review it\r\nbody\r\n")
    write(commands / "plan.md", b"\xef\xbb\xbf# Plan\r\nsteps\r\n")
    found = load_commands(CommandFolders.of(files_for(tmp_path, trusted=True)), builtins=BUILTINS)
    assert {n: (c.description, c.text) for n, c in found.commands.items()} == {
        "plan": ("Plan", "# Plan\r\nsteps\r\n"),
        "review": ("Review it", "body\r\n"),
    }
