"""File tools against a hostile workspace: odd byte names, hard links, races, growing files.

Real files under ``tmp_path``, real threads racing the tools, the real agent
on the fake Gemini for what reaches the model and the database.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from google.genai import types
from helpers.agent_kit import open_agent, stored_events
from helpers.tool_kit import SECRET
from hostile.paths import (
    BYTE_NAMES,
    ESCAPING_PATHS,
    SPELLED_PATHS,
    UNPLAIN_NEW_NAMES,
    UNUSABLE_PATHS,
)
from hostile.unicode import LONE_SURROGATES

from koroku_tui.agent.tools import ToolError, ToolRegistry, ToolSettings, default_registry
from koroku_tui.agent.tools.builtin.files import (
    MAX_READ_BYTES,
    list_directory,
    read_file,
    write_file,
)
from koroku_tui.fake_gemini import FakeGemini, call_reply, text_reply

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def make_file(folder: Path, name: bytes, data: bytes) -> None:
    fd = os.open(os.fsencode(folder) + b"/" + name, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def names_in(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def file_bytes(folder: Path, name: bytes) -> bytes:
    with open(os.fsencode(folder) + b"/" + name, "rb") as handle:
        return handle.read()


async def run_tool(ctx: ToolSettings, name: str, **args: Any) -> tuple[str | None, str | None]:
    result = await default_registry().execute(types.FunctionCall(name=name, args=args), ctx)
    return result.output, result.error


# --- names that are not plain text -------------------------------------------


@pytest.mark.parametrize("name", BYTE_NAMES)
async def test_any_byte_name_is_listed_as_text_and_usable_as_shown(
    ctx: ToolSettings, workspace: Path, name: bytes
) -> None:
    make_file(workspace, name, b"contents")
    listing, error = await run_tool(ctx, "list_directory")
    assert error is None
    assert listing is not None
    listing.encode("utf-8")  # valid UTF-8: what Gemini and the database can hold
    (shown,) = listing.splitlines()  # one entry, one line
    assert shown.isprintable()

    assert await run_tool(ctx, "read_file", path=shown) == ("contents", None)
    output, error = await run_tool(ctx, "write_file", path=shown, content="new")
    assert error is None and output is not None and output.startswith("Replaced ")
    assert file_bytes(workspace, name) == b"new"
    assert sorted(os.listdir(os.fsencode(workspace))) == [name]


async def test_a_turn_over_a_non_utf8_name_reaches_gemini_and_the_database(
    fake: FakeGemini, tmp_path: Path, workspace: Path
) -> None:
    make_file(workspace, b"caf\xff.txt", b"bonjour")
    fake.add(
        call_reply(("list_directory", {})),
        call_reply(("read_file", {"path": "caf\\xff.txt"})),
        text_reply("It says bonjour."),
    )
    context = ToolSettings(workspace=workspace)
    async with open_agent(fake, tmp_path, tool_settings=context) as agent:
        assert await agent.run_turn("what is there?") == "It says bonjour."
    answers = [
        part["functionResponse"]["response"]
        for request in fake.generate_requests[1:]
        for part in request.contents[-1]["parts"]
    ]
    assert answers == [{"output": "caf\\xff.txt"}, {"output": "bonjour"}]
    events = await stored_events(tmp_path / "koroku.db")
    assert len(events) == 6  # question, 2 calls, 2 answers, the reply: every row readable


@pytest.mark.parametrize("path", ESCAPING_PATHS)
@pytest.mark.parametrize("tool", ["read_file", "list_directory", "write_file"])
async def test_escaping_paths_are_refused(
    ctx: ToolSettings, outside: Path, workspace: Path, tool: str, path: str
) -> None:
    args = {"path": path.format(outside=outside)}
    if tool == "write_file":
        args["content"] = "pwned"
    output, error = await run_tool(ctx, tool, **args)
    assert output is None and "outside the workspace" in (error or "")
    assert (outside / "secret.txt").read_text() == SECRET
    assert names_in(outside) == ["secret.txt"]
    assert names_in(workspace) == []  # nothing made on the way


@pytest.mark.parametrize("path", UNUSABLE_PATHS)
@pytest.mark.parametrize("tool", ["read_file", "list_directory", "write_file"])
async def test_unusable_paths_get_one_sentence(
    ctx: ToolSettings, workspace: Path, tool: str, path: str
) -> None:
    args = {"path": path, "content": "x"} if tool == "write_file" else {"path": path}
    output, error = await run_tool(ctx, tool, **args)
    assert output is None
    assert error is not None and error.startswith("Cannot use the path ")
    assert "Error" not in error  # no exception type names
    assert names_in(workspace) == []


@pytest.mark.parametrize("path", SPELLED_PATHS)
@pytest.mark.parametrize("tool", ["read_file", "list_directory", "write_file"])
async def test_escapes_of_printable_characters_are_refused(
    ctx: ToolSettings, workspace: Path, outside: Path, tool: str, path: str
) -> None:
    """``\\x2f`` is not ``/``: the path the user approves is the path that is used."""
    (workspace / ".git").mkdir()
    (workspace / ".git" / "config").write_text("[core]\n")
    args = {"path": path, "content": "pwned"} if tool == "write_file" else {"path": path}
    output, error = await run_tool(ctx, tool, **args)
    assert output is None
    assert error is not None and error.startswith(f"Cannot use the path {path!r}: \\x")
    assert "which is written as itself" in error
    assert (workspace / ".git" / "config").read_text() == "[core]\n"
    assert names_in(workspace) == [".git"] and names_in(workspace / ".git") == ["config"]
    assert (outside / "secret.txt").read_text() == SECRET


async def test_an_approved_odd_name_never_writes_git_config(
    fake: FakeGemini, tmp_path: Path, workspace: Path
) -> None:
    """The reviewer's case, through a real turn: one odd name in the dialog, .git/config on disk."""
    (workspace / ".git").mkdir()
    (workspace / ".git" / "config").write_text("[core]\n")
    hook = "[core]\n\tfsmonitor = touch PWNED\n"
    odd_name = "notes.git\\x2f..\\x2f.git\\x2fconfig"
    fake.add(
        call_reply(("write_file", {"path": odd_name, "content": hook})),
        text_reply("Saved."),
    )
    context = ToolSettings(workspace=workspace, auto_approve=True)
    async with open_agent(fake, tmp_path, tool_settings=context) as agent:
        assert await agent.run_turn("save my notes") == "Saved."
    assert (workspace / ".git" / "config").read_text() == "[core]\n"
    (part,) = fake.generate_requests[-1].contents[-1]["parts"]
    assert "\\x2f stands for '/'" in part["functionResponse"]["response"]["error"]


@pytest.mark.parametrize("path", UNPLAIN_NEW_NAMES)
async def test_write_file_does_not_create_names_with_hidden_bytes(
    ctx: ToolSettings, workspace: Path, path: str
) -> None:
    output, error = await run_tool(ctx, "write_file", path=path, content="x")
    assert output is None
    assert error == (
        f"Cannot use the path {path!r}: new files and folders are not given names with "
        "control characters or bytes that are not UTF-8; choose a plain name."
    )
    assert os.listdir(workspace) == []  # not even a folder on the way


# --- hard links --------------------------------------------------------------


async def test_a_hard_link_to_a_file_outside_is_neither_read_nor_written(
    ctx: ToolSettings, workspace: Path, outside: Path
) -> None:
    os.link(outside / "secret.txt", workspace / "innocent.txt")
    output, error = await run_tool(ctx, "read_file", path="innocent.txt")
    assert output is None and "hard links" in (error or "")
    output, error = await run_tool(ctx, "write_file", path="innocent.txt", content="pwned")
    assert output is None and "hard links" in (error or "")
    assert (outside / "secret.txt").read_text() == SECRET


# --- races ---------------------------------------------------------------------


def test_a_hard_link_swapped_in_after_the_check_and_unlinked_after_the_open_escapes_nothing(
    ctx: ToolSettings, workspace: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race, played step by step by "another process" hooked into the tool's system calls.

    Right after the tool looks at ``f`` (a plain file), ``f`` becomes a hard
    link to the outside file; right after the tool opens ``f``, the link is
    removed, so the opened file counts one link. Neither tool may then read
    or change the outside file.
    """
    victim = outside / "secret.txt"
    attacker = _LinkFlipper(workspace / "f", victim)
    monkeypatch.setattr(os, "stat", attacker.after(os.stat, attacker.link_in))
    monkeypatch.setattr(os, "open", attacker.after(os.open, attacker.unlink))

    results: list[str] = []
    for tool in (read_file, lambda path, context: write_file(path, "pwned", context)):
        attacker.reset()
        (workspace / "f").write_text("inside")
        try:
            results.append(tool("f", ctx))
        except ToolError as exc:
            results.append(str(exc))
        assert attacker.linked, "the race did not run"
    assert SECRET not in results[0]
    assert victim.read_text() == SECRET


class _LinkFlipper:
    """Links ``victim`` in as ``name`` after the first look at it; unlinks it after an open."""

    def __init__(self, name: Path, victim: Path) -> None:
        self.name = os.fsencode(name.name)
        self.path = name
        self.victim = victim
        self.linked = False

    def reset(self) -> None:
        self.linked = False
        self.path.unlink(missing_ok=True)

    def link_in(self) -> None:
        if not self.linked:
            self.linked = True
            self.path.unlink()
            os.link(self.victim, self.path)

    def unlink(self) -> None:
        if self.linked:
            self.path.unlink(missing_ok=True)

    def after(self, real: Callable[..., Any], step: Callable[[], None]) -> Callable[..., Any]:
        def patched(name: Any, *args: Any, **kwargs: Any) -> Any:
            result = real(name, *args, **kwargs)
            if name == self.name and "dir_fd" in kwargs:  # the tool's own call, by name
                step()
            return result

        return patched


@pytest.mark.parametrize("tool", ["read_file", "write_file"])
def test_a_hard_link_flipped_by_another_thread_never_leaks_or_is_overwritten(
    ctx: ToolSettings, workspace: Path, outside: Path, tool: str
) -> None:
    """Another process links the outside file in and out as fast as it can: 2,000 calls.

    (Before the fix, about one call in 500 read the secret or overwrote it. A
    look at the name after the read was not enough either: Linux drops the link
    count a moment before an unlinked name disappears, and 3 to 23 reads in
    2,000 got through that window.)
    """
    victim = outside / "secret.txt"
    name = workspace / "f"
    stop = threading.Event()
    flips = 0

    def flip() -> None:
        nonlocal flips
        while not stop.is_set():
            with contextlib.suppress(OSError):
                os.link(victim, name)
                flips += 1
            with contextlib.suppress(OSError):
                os.unlink(name)

    flipper = threading.Thread(target=flip)
    flipper.start()
    escapes = 0
    try:
        for _ in range(2_000):
            try:
                if tool == "read_file":
                    escapes += SECRET in read_file("f", ctx)
                else:
                    write_file("f", "pwned", ctx)
            except ToolError:
                pass
            if victim.read_text() != SECRET:
                escapes += 1
                victim.write_text(SECRET)
    finally:
        stop.set()
        flipper.join()
    assert escapes == 0
    assert flips > 0


def test_write_file_keeps_the_mode_and_leaves_no_temporary_file(
    ctx: ToolSettings, workspace: Path
) -> None:
    """The new contents go in by rename: the file keeps its permission bits, nothing is left."""
    script = workspace / "run.sh"
    script.write_text("echo old\n")
    script.chmod(0o750)
    assert write_file("run.sh", "echo new\n", ctx) == "Replaced run.sh (9 characters)."
    assert script.read_text() == "echo new\n"
    assert script.stat().st_mode & 0o777 == 0o750
    assert names_in(workspace) == ["run.sh"]


@pytest.mark.parametrize("tool", ["read_file", "write_file"])
def test_a_folder_swapped_for_a_link_never_leads_outside(
    ctx: ToolSettings, workspace: Path, outside: Path, tool: str
) -> None:
    """Another process flips ``d`` between a real folder and a link to outside.

    2,000 calls through ``d`` while it flips: some may fail, none may reach
    outside. (Before the fix, about one read in twenty saw the secret.)
    """
    (workspace / "d").mkdir()
    (workspace / "d" / "secret.txt").write_text("inside")
    (workspace / "link").symlink_to(outside)
    swap = _exchanger(workspace / "d", workspace / "link")
    stop = threading.Event()
    flips = 0

    def flip() -> None:
        nonlocal flips
        while not stop.is_set():
            swap()
            flips += 1

    flipper = threading.Thread(target=flip)
    flipper.start()
    escapes = 0
    try:
        for _ in range(2_000):
            try:
                if tool == "read_file":
                    escapes += read_file("d/secret.txt", ctx) == SECRET
                else:
                    write_file("d/secret.txt", "overwritten", ctx)
                    escapes += (outside / "secret.txt").read_text() != SECRET
            except ToolError:
                continue
    finally:
        stop.set()
        flipper.join()
    assert escapes == 0
    assert names_in(outside) == ["secret.txt"]
    assert flips > 0  # the race really ran
    # And the tool still works through ``d`` once the flips stop. (Not counted
    # during the race: under load every one of the 2,000 calls met a flip once.)
    if (workspace / "d").is_symlink():
        swap()
    if tool == "read_file":
        assert read_file("d/secret.txt", ctx) == "inside"
    else:
        write_file("d/secret.txt", "overwritten", ctx)
        assert (workspace / "d" / "secret.txt").read_text() == "overwritten"


def _exchanger(first: Path, second: Path) -> Callable[[], None]:
    """A swap of two names: atomic (``renameat2(RENAME_EXCHANGE)``) where Linux has it.

    Atomic, ``first`` always exists (a folder or a link), which keeps the race
    tight; elsewhere a rename-symlink-unlink-rename cycle stands in.
    """
    libc = ctypes.CDLL(None, use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)

    def exchange() -> None:
        assert renameat2 is not None
        if renameat2(_AT_FDCWD, bytes(first), _AT_FDCWD, bytes(second), _RENAME_EXCHANGE):
            raise OSError(ctypes.get_errno(), "renameat2")

    def cycle() -> None:
        parked = first.with_name("parked")
        os.rename(first, parked)
        os.symlink(os.readlink(second), first)
        os.unlink(first)
        os.rename(parked, first)

    try:
        exchange()
        exchange()
    except (AssertionError, OSError):
        return cycle
    return exchange


def test_a_file_that_grows_after_the_size_check_is_not_read_past_the_limit(
    ctx: ToolSettings, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another writer appends right after read_file looked at the file's size."""
    target = workspace / "log.txt"
    target.write_bytes(b"x" * MAX_READ_BYTES)  # exactly the limit: allowed
    inode = target.stat().st_ino

    def grow() -> None:
        with target.open("ab") as handle:
            handle.write(b"y" * 1_000)

    for name in ("stat", "lstat", "fstat"):
        monkeypatch.setattr(os, name, _growing_after_size(getattr(os, name), inode, grow))
    try:
        text = read_file("log.txt", ctx)
    except ToolError as exc:
        assert "grew past" in str(exc)
    else:
        assert len(text) <= MAX_READ_BYTES


def _growing_after_size(
    real: Callable[..., os.stat_result], inode: int, grow: Callable[[], None]
) -> Callable[..., Any]:
    """``real`` whose result, once its ``st_size`` of ``inode`` is read, makes the file grow."""
    grown = False

    class Status:
        def __init__(self, status: os.stat_result) -> None:
            self._status = status

        def __getattr__(self, name: str) -> Any:
            nonlocal grown
            value = getattr(self._status, name)
            if name == "st_size" and self._status.st_ino == inode and not grown:
                grown = True
                grow()
            return value

    def patched(*args: Any, **kwargs: Any) -> Any:
        return Status(real(*args, **kwargs))

    return patched


# --- what stays as it was -----------------------------------------------------


async def test_links_inside_the_workspace_still_work(ctx: ToolSettings, workspace: Path) -> None:
    (workspace / "real").mkdir()
    (workspace / "real" / "a.txt").write_text("A")
    (workspace / "rel").symlink_to("real")
    (workspace / "abs").symlink_to(workspace / "real")
    (workspace / "chain.txt").symlink_to("rel/a.txt")
    (workspace / "dangling.txt").symlink_to("real/new.txt")
    for path in ["rel/a.txt", "abs/a.txt", "chain.txt", "rel/../real/a.txt"]:
        assert read_file(path, ctx) == "A", path
    assert list_directory(ctx, "abs") == "a.txt"
    assert write_file("dangling.txt", "made", ctx) == "Created real/new.txt (4 characters)."
    assert (workspace / "real" / "new.txt").read_text() == "made"


async def test_a_link_loop_is_one_sentence(ctx: ToolSettings, workspace: Path) -> None:
    (workspace / "a").symlink_to("b")
    (workspace / "b").symlink_to("a")
    output, error = await run_tool(ctx, "read_file", path="a/x.txt")
    assert output is None and "too many symbolic links" in (error or "")
    assert await run_tool(ctx, "list_directory") == ("a\nb", None)


# --- text a tool hands back ----------------------------------------------------


@pytest.mark.parametrize(("returned", "sent"), LONE_SURROGATES)
async def test_tool_text_with_lone_surrogates_reaches_gemini_and_the_database(
    fake: FakeGemini, tmp_path: Path, returned: str, sent: str
) -> None:
    registry = ToolRegistry()

    @registry.register
    def odd_output() -> str:
        """Return text as a system call might hand it over."""
        return returned

    @registry.register
    def odd_error() -> str:
        """Fail with such text."""
        raise ToolError(returned)

    fake.add(call_reply(("odd_output", {}), ("odd_error", {})), text_reply("Seen."))
    async with open_agent(fake, tmp_path, tools=registry) as agent:
        assert await agent.run_turn("go") == "Seen."
    answers = [
        part["functionResponse"]["response"]
        for part in fake.generate_requests[-1].contents[-1]["parts"]
    ]
    assert answers == [{"output": sent}, {"error": sent}]
    assert len(await stored_events(tmp_path / "koroku.db")) == 4
