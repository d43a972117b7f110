"""Links, FIFOs and huge files planted in the Koroku home reach nothing outside it.

``memory/02-01-2026.md -> /etc/passwd`` once went to the model through
``read_memory``; a compaction appended to a linked outside file and made it
0600; a ``memory/`` that was a link had its target chmod'ed. Every file
Koroku reads or writes in its home goes through ``privacy.home_files``: these
tests plant each of those in a real folder and use the real code paths.
"""

from __future__ import annotations

import logging
import os
import stat
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from google.genai import types
from helpers.agent_kit import HookRecorder, open_agent

from koroku_tui.agent.context.budget import BudgetPolicy
from koroku_tui.agent.tools import ToolResult, ToolSettings, default_registry
from koroku_tui.fake_gemini import FakeGemini, text_reply
from koroku_tui.privacy.home_files import (
    HomeFileError,
    append_home_file,
    home_file_names,
    read_home_file,
    write_home_file,
)
from koroku_tui.store.memory_files import MEMORY_FILE_LIMIT, append_summary, list_days

DAY = datetime(2026, 1, 2, 3, 4)
DAY_NAME = "02-01-2026.md"


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A file outside the home, readable by others, that must stay exactly as it is."""
    path = tmp_path / "outside.txt"
    path.write_text("someone else's file\n")
    path.chmod(0o644)
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir(mode=0o700)
    return path


async def read_memory(memory_dir: Path, date: str | None = "02-01-2026") -> ToolResult:
    args: dict[str, Any] = {} if date is None else {"date": date}
    call = types.FunctionCall(id="c1", name="read_memory", args=args)
    context = ToolSettings(workspace=memory_dir.parent, memory_dir=memory_dir)
    return await default_registry().execute(call, context)


# -- read_memory --------------------------------------------------------------


async def test_read_memory_refuses_a_day_file_that_links_to_etc_passwd(home: Path) -> None:
    memory = home / "memory"
    memory.mkdir()
    (memory / DAY_NAME).symlink_to("/etc/passwd")
    result = await read_memory(memory)
    assert result.output is None and "root:" not in (result.error or "")
    assert result.error == (
        f"memory/{DAY_NAME} in the Koroku home is a link, and Koroku follows no link in its "
        "home: remove the link."
    )
    listed = await read_memory(memory, "list")
    assert listed.output == "There are no memory files yet."  # a link is no day


async def test_read_memory_refuses_a_memory_folder_that_is_a_link(
    home: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / DAY_NAME).write_text("[09:00]: not Koroku's\n")
    (home / "memory").symlink_to(elsewhere)
    for date in ("02-01-2026", "list", None):
        result = await read_memory(home / "memory", date)
        assert result.error == (
            "memory in the Koroku home is a link, and Koroku follows no link in its home: "
            "remove the link."
        ), date


@pytest.mark.parametrize("kind", ["fifo", "folder", "too large"])
async def test_read_memory_refuses_what_is_not_a_small_regular_file(home: Path, kind: str) -> None:
    memory = home / "memory"
    memory.mkdir()
    day = memory / DAY_NAME
    if kind == "fifo":
        os.mkfifo(day)  # reading it whole would wait for ever
    elif kind == "folder":
        day.mkdir()
    else:
        with day.open("wb") as file:
            file.truncate(MEMORY_FILE_LIMIT + 1)  # sparse: no disk used
    result = await read_memory(memory)
    told = {
        "fifo": "is a named pipe (FIFO), not a regular file",
        "folder": "is a folder, not a regular file",
        "too large": "more than the 2.0 MB Koroku takes",
    }[kind]
    assert told in (result.error or ""), result.error


async def test_read_memory_says_when_bytes_are_not_utf8(home: Path) -> None:
    memory = home / "memory"
    memory.mkdir()
    (memory / DAY_NAME).write_bytes(b"[09:00]: caf\xe9 latin-1\n")
    result = await read_memory(memory)
    assert result.output == (
        "[09:00]: caf\ufffd latin-1\n\n"
        "(Some bytes of this file are not UTF-8; they show as \ufffd.)"
    )


# -- the memory file a compaction appends to ------------------------------------


def test_a_summary_is_never_appended_through_a_link(home: Path, outside: Path) -> None:
    memory = home / "memory"
    memory.mkdir()
    (memory / DAY_NAME).symlink_to(outside)
    with pytest.raises(HomeFileError, match="is a link"):
        append_summary(memory, "the summary", DAY)
    assert outside.read_text() == "someone else's file\n" and mode(outside) == 0o644


def test_a_memory_folder_that_is_a_link_is_neither_written_nor_chmoded(
    home: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    elsewhere.chmod(0o755)
    (home / "memory").symlink_to(elsewhere)
    with pytest.raises(HomeFileError, match="memory in the Koroku home is a link"):
        append_summary(home / "memory", "the summary", DAY)
    assert list(elsewhere.iterdir()) == [] and mode(elsewhere) == 0o755
    with pytest.raises(HomeFileError):
        list_days(home / "memory")


def test_a_fifo_day_file_is_refused_without_blocking(home: Path) -> None:
    memory = home / "memory"
    memory.mkdir()
    os.mkfifo(memory / DAY_NAME)  # opening it for writing would wait for a reader
    with pytest.raises(HomeFileError, match=r"named pipe \(FIFO\), not a regular file"):
        append_summary(memory, "the summary", DAY)


def test_a_full_day_file_is_not_grown_past_its_cap(home: Path) -> None:
    memory = home / "memory"
    memory.mkdir()
    with (memory / DAY_NAME).open("wb") as file:
        file.truncate(MEMORY_FILE_LIMIT - 10)
    with pytest.raises(HomeFileError, match=r"more than the 2\.0 MB Koroku takes"):
        append_summary(memory, "a summary longer than ten bytes", DAY)
    assert (memory / DAY_NAME).stat().st_size == MEMORY_FILE_LIMIT - 10


async def test_a_compaction_into_a_linked_memory_folder_warns_and_touches_nothing(
    fake: FakeGemini, tmp_path: Path
) -> None:
    """The real compaction: the summary is stored, the warning says why the file was not."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    elsewhere.chmod(0o755)
    (tmp_path / "memory").symlink_to(elsewhere)
    fake.add(
        text_reply("I will remember forty-two for you."),
        text_reply("User wants 42 kept."),  # the summariser's answer
        text_reply("It was forty-two."),
    )
    tiny = BudgetPolicy(event_limit=3)
    async with open_agent(fake, tmp_path, auto_compact=True, budget=tiny) as agent:
        hooks = HookRecorder().attach(agent)
        await agent.run_turn("Please remember the number forty-two for me, it matters.")
        assert await agent.run_turn("Which number was it?") == "It was forty-two."
    [finished] = hooks.payloads("on_compaction_finished")
    assert finished.warning == (
        "The summary is saved, but the memory file could not be written: memory in the "
        "Koroku home is a link, and Koroku follows no link in its home: remove the link."
    )
    assert list(elsewhere.iterdir()) == [] and mode(elsewhere) == 0o755


# -- the helper itself ----------------------------------------------------------


def test_files_koroku_makes_are_0600_and_loose_ones_are_tightened(home: Path) -> None:
    previous = os.umask(0o022)
    try:
        made = append_home_file(home, "new.txt", b"one\n")
        assert mode(made) == 0o600
        (home / "loose.txt").write_text("older\n")
        (home / "loose.txt").chmod(0o644)
        append_home_file(home, "loose.txt", b"two\n", on_new_line=True)
        assert mode(home / "loose.txt") == 0o600
        written = write_home_file(home, "config.toml", b"a = 1\n")
        assert mode(written) == 0o600 and written.read_bytes() == b"a = 1\n"
        own = append_home_file(home / "memory", DAY_NAME, b"x\n", own_folder=True)
        assert mode(own.parent) == 0o700 and mode(own) == 0o600
    finally:
        os.umask(previous)


def test_an_appended_line_starts_a_line_of_its_own(home: Path) -> None:
    (home / "notes.txt").write_bytes(b"unterminated")
    append_home_file(home, "notes.txt", b"next\n", on_new_line=True)
    assert (home / "notes.txt").read_bytes() == b"unterminated\nnext\n"


@pytest.mark.parametrize("what", ["link", "dangling link", "fifo", "folder"])
def test_every_way_in_refuses_what_is_not_a_regular_file(
    home: Path, outside: Path, what: str, caplog: pytest.LogCaptureFixture
) -> None:
    target = home / "file.txt"
    if what == "link":
        target.symlink_to(outside)
    elif what == "dangling link":
        target.symlink_to(home / "gone")
    elif what == "fifo":
        os.mkfifo(target)
    else:
        target.mkdir()
    with caplog.at_level(logging.WARNING, logger="koroku_tui.privacy.home_files"):
        with pytest.raises(HomeFileError) as read:
            read_home_file(home, "file.txt", limit=100)
        with pytest.raises(HomeFileError) as appended:
            append_home_file(home, "file.txt", b"x")
        with pytest.raises(HomeFileError) as written:
            write_home_file(home, "file.txt", b"x")
    assert str(read.value) == str(appended.value) == str(written.value)
    assert str(read.value).startswith("file.txt in the Koroku home is ")
    assert str(read.value).count(". ") == 0 and str(read.value).endswith(".")  # one sentence
    assert [r.getMessage() for r in caplog.records] == [f"{read.value} ({target})"] * 3
    assert outside.read_text() == "someone else's file\n" and mode(outside) == 0o644
    assert not (home / "gone").exists()
    assert home_file_names(home) == []
    assert sorted(p.name for p in home.iterdir()) == ["file.txt"]  # no temporary left


def test_a_file_over_the_cap_is_refused_before_it_is_read(home: Path) -> None:
    with (home / "big.txt").open("wb") as file:
        file.truncate(300_000_000)  # sparse: 300 MB that take no disk
    with pytest.raises(HomeFileError) as refused:
        read_home_file(home, "big.txt", limit=1_000_000)
    assert str(refused.value) == (
        "big.txt in the Koroku home is 300 MB, more than the 1.0 MB Koroku takes; "
        "it was left as it is."
    )


def test_a_missing_file_or_folder_is_file_not_found(home: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_home_file(home, "none.txt", limit=10)
    with pytest.raises(FileNotFoundError):
        read_home_file(home / "memory", DAY_NAME, limit=10, own_folder=True)
    with pytest.raises(FileNotFoundError):
        read_home_file(home / "no-home", "none.txt", limit=10)
    assert home_file_names(home / "memory", own_folder=True) == []
