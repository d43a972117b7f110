"""The agent's tools: schemas, the executor's guarantees, confinement, approval, built-ins.

Real files under ``tmp_path`` and real subprocesses; no mocks of the code under test.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import pytest
from google.genai import types
from helpers.tool_kit import ScriptedApprover, fcall

from koroku_tui.agent.tools import (
    MAX_OUTPUT_CHARS,
    ApprovalDecision,
    ApprovalRequest,
    ToolError,
    ToolRegistry,
    ToolResult,
    ToolSettings,
    default_registry,
    tool_responses,
)
from koroku_tui.agent.tools.builtin.files import MAX_LIST_ENTRIES, MAX_READ_BYTES
from koroku_tui.agent.tools.schema import parse_docstring
from koroku_tui.events import FCMetadata, SessionEvent

BUILTIN_NAMES = [
    "read_file",
    "list_directory",
    "write_file",
    "run_command",
    "read_memory",
    "search_history",
    "read_session",
    "remember",
    "forget",
]


# --- helpers ---------------------------------------------------------------


def process_gone(pid: int) -> bool:
    """True once ``pid`` no longer runs (a zombie awaiting its reaper counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


async def wait_until_gone(pid: int, within: float = 3.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if process_gone(pid):
            return True
        await asyncio.sleep(0.02)
    return process_gone(pid)


def pid_in(pid_file: Path) -> int | None:
    """The pid written to ``pid_file``, once the whole line is there."""
    if pid_file.exists() and (text := pid_file.read_text()).endswith("\n"):
        return int(text)
    return None


def names_in(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


async def read_pid(pid_file: Path, within: float = 5.0) -> int:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if (pid := pid_in(pid_file)) is not None:
            return pid
        await asyncio.sleep(0.01)
    raise AssertionError(f"{pid_file} was never written")


def schema_of(decl: types.FunctionDeclaration) -> dict[str, Any]:
    schema = decl.parameters_json_schema
    assert isinstance(schema, dict)
    return schema


@pytest.fixture
def registry() -> ToolRegistry:
    return default_registry()


# --- import hygiene ----------------------------------------------------------


def test_tools_never_import_textual_or_rich() -> None:
    code = (
        "import sys, koroku_tui.agent.tools; "
        "leaked = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich')); "
        "print(leaked)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


# --- schemas ---------------------------------------------------------------


def test_builtin_declarations_have_names_descriptions_and_required_params(
    registry: ToolRegistry,
) -> None:
    decls = {d.name or "": d for d in registry.declarations()}
    assert list(decls) == BUILTIN_NAMES
    required = {
        "read_file": ["path"],
        "list_directory": [],
        "write_file": ["path", "content"],
        "run_command": ["command"],
        "read_memory": [],
        "search_history": ["query"],
        "read_session": ["session_id"],
        "remember": ["text"],
        "forget": ["memory_id"],
    }
    properties = {
        "read_file": ["path"],
        "list_directory": ["path"],
        "write_file": ["path", "content"],
        "run_command": ["command"],
        "read_memory": ["date"],
        "search_history": ["query", "limit"],
        "read_session": ["session_id", "around_message_id", "limit"],
        "remember": ["text"],
        "forget": ["memory_id"],
    }
    numbers = {"limit", "session_id", "around_message_id", "memory_id"}
    for name, decl in decls.items():
        schema = schema_of(decl)
        assert decl.description, name
        assert decl.parameters is None  # mutually exclusive with the JSON schema
        assert schema["type"] == "object"
        assert schema.get("required", []) == required[name]
        # The injected ToolSettings parameter is invisible to the model.
        assert list(schema["properties"]) == properties[name]
        assert schema["propertyOrdering"] == properties[name]
        for prop_name, prop in schema["properties"].items():
            kind = "integer" if prop_name in numbers else "string"
            assert kind in (prop.get("type"), *[t.get("type") for t in prop.get("anyOf", [])])
            assert prop["description"], (name, prop_name)
            assert "title" not in prop
    assert schema_of(decls["list_directory"])["properties"]["path"]["default"] == "."
    assert "dd-mm-yyyy" in schema_of(decls["read_memory"])["properties"]["date"]["description"]


def test_tool_wraps_all_declarations(registry: ToolRegistry) -> None:
    tool = registry.tool()
    assert isinstance(tool, types.Tool)
    assert [d.name for d in tool.function_declarations or []] == BUILTIN_NAMES


def sample_tool(
    query: str,
    limit: int,
    ratio: float = 0.5,
    verbose: bool = False,
    tags: list[str] | None = None,
    options: dict[str, Any] | None = None,
    mode: Literal["fast", "slow"] = "fast",
    note: str | None = None,
) -> str:
    """Search the notes for a query.

    This second paragraph is not part of the description.

    Args:
        query: What to look for.
        limit (int): At most this many hits,
            counted after filtering.
        ratio: Similarity threshold.
        verbose: Include context lines.
        tags: Only notes with these tags.
        options: Extra engine options.
        mode: How hard to search.

    Returns:
        The hits, one per line.
    """
    return f"{query}|{limit}|{ratio}|{verbose}|{tags}|{options}|{mode}|{note}"


def test_schema_from_type_hints_and_docstring() -> None:
    registry = ToolRegistry()
    registry.register(sample_tool)
    (decl,) = registry.declarations()
    assert decl.name == "sample_tool"
    assert decl.description == "Search the notes for a query."
    schema = schema_of(decl)
    props = schema["properties"]
    assert schema["required"] == ["query", "limit"]
    assert schema["additionalProperties"] is False
    assert props["query"] == {"type": "string", "description": "What to look for."}
    assert props["limit"] == {
        "type": "integer",
        "description": "At most this many hits, counted after filtering.",
    }
    assert props["ratio"]["type"] == "number" and props["ratio"]["default"] == 0.5
    assert props["verbose"]["type"] == "boolean"
    # Optional parameters defaulting to None are offered as their plain type.
    assert props["tags"] == {
        "type": "array",
        "items": {"type": "string"},
        "description": "Only notes with these tags.",
    }
    assert props["options"]["type"] == "object"
    assert props["mode"]["enum"] == ["fast", "slow"]
    assert props["note"] == {"type": "string"}  # no docstring entry, no description
    assert "Returns" not in str(schema)


def test_parse_docstring_stops_at_next_section() -> None:
    doc = parse_docstring(
        """Summary line one
        continues here.

        Args:
            a: First.
            *rest: Ignored name prefix.

        Raises:
            b: Not a parameter.
        """
    )
    assert doc.summary == "Summary line one continues here."
    assert doc.params == {"a": "First.", "rest": "Ignored name prefix."}
    assert parse_docstring(None).summary == ""


def test_register_rejects_signatures_a_model_cannot_fill() -> None:
    registry = ToolRegistry()

    def untyped(x):  # type: ignore[no-untyped-def]
        return x

    def star(*args: str) -> str:
        return ""

    with pytest.raises(TypeError, match="no type hint"):
        registry.register(untyped)
    with pytest.raises(TypeError, match="keyword"):
        registry.register(star)
    registry.register(sample_tool)
    with pytest.raises(ValueError, match="already registered"):
        registry.register(sample_tool)


# --- results ---------------------------------------------------------------


def test_tool_result_to_genai_message_echoes_id_and_shape() -> None:
    call = fcall("read_file", {"path": "a.txt"}, call_id="abc-123")
    ok = ToolResult.success(call, "hello")
    part = ok.to_genai_message()
    assert part.function_response is not None
    assert part.function_response.id == "abc-123"
    assert part.function_response.name == "read_file"
    assert part.function_response.response == {"output": "hello"}
    assert not ok.is_error

    bad = ToolResult.failure(call, "no such file")
    response = bad.to_genai_message().function_response
    assert response is not None and response.id == "abc-123"
    assert response.response == {"error": "no such file"}
    assert bad.is_error

    with pytest.raises(ValueError):
        ToolResult(name="x", call_id=None)
    with pytest.raises(ValueError):
        ToolResult(name="x", call_id=None, output="a", error="b")


def test_tool_responses_make_one_user_content_in_call_order() -> None:
    first = ToolResult.success(fcall("read_file", {"path": "a"}, "id-1"), "A")
    second = ToolResult.failure(fcall("run_command", {"command": "x"}, "id-2"), "denied")
    content, metadata = tool_responses([first, second])
    assert content.role == "user"
    parts = content.parts or []
    assert [p.function_response.id for p in parts if p.function_response] == ["id-1", "id-2"]
    assert metadata == [
        FCMetadata(name="read_file", args={"path": "a"}),
        FCMetadata(name="run_command", args={"command": "x"}),
    ]
    # It is exactly what the event model stores for a step's responses.
    event = SessionEvent.from_content(content, metadata)
    assert [r.is_error for r in event.function_responses] == [False, True]
    assert not event.is_real_user_turn
    with pytest.raises(ValueError):
        tool_responses([])


# --- executor guarantees -----------------------------------------------------


async def test_unknown_tool_is_an_error_result(registry: ToolRegistry, ctx: ToolSettings) -> None:
    result = await registry.execute(fcall("delete_everything", {}, "id-9"), ctx)
    assert result.is_error and result.call_id == "id-9" and result.name == "delete_everything"
    assert "Unknown tool 'delete_everything'" in (result.error or "")
    assert "read_file" in (result.error or "")


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({}, "missing required argument 'path'"),
        ({"path": 123}, "'path': Input should be a valid string"),
        ({"path": "a.txt", "mode": "r"}, "unexpected argument 'mode'"),
        ({"path": ["x" * 500]}, "(got ['xxxxxxx"),
    ],
)
async def test_bad_arguments_are_error_results(
    registry: ToolRegistry, ctx: ToolSettings, args: dict[str, Any], expected: str
) -> None:
    (ctx.workspace / "a.txt").write_text("x")
    result = await registry.execute(fcall("read_file", args), ctx)
    assert result.is_error
    assert result.error is not None and result.error.startswith("Invalid arguments for read_file")
    assert expected in result.error
    assert len(result.error) < 200  # a huge bad value is not echoed in full


async def test_arguments_are_validated_and_coerced(ctx: ToolSettings) -> None:
    registry = ToolRegistry()
    registry.register(sample_tool)
    # Gemini sends JSON numbers; 3.0 is a valid int.
    result = await registry.execute(fcall("sample_tool", {"query": "q", "limit": 3.0}), ctx)
    assert result.output == "q|3|0.5|False|None|None|fast|None"
    bad = await registry.execute(fcall("sample_tool", {"query": "q", "limit": 1, "mode": "x"}), ctx)
    assert bad.is_error and "'mode'" in (bad.error or "")


def pick_rows(rows: list[int] | None = None) -> str:
    """Pick rows by number.

    Args:
        rows: The rows' numbers.
    """
    return repr(rows)


@pytest.mark.parametrize(
    ("tool", "args", "expected"),
    [
        (sample_tool, {"query": "q", "limit": True}, "'limit': Input should be a valid integer"),
        (
            sample_tool,
            {"query": "q", "limit": 1, "ratio": False},
            "'ratio': Input should be a valid number",
        ),
        (pick_rows, {"rows": [2, True]}, "'rows.1': Input should be a valid integer"),
    ],
)
async def test_a_boolean_is_never_a_number(
    ctx: ToolSettings, tool: Callable[..., str], args: dict[str, Any], expected: str
) -> None:
    """Pydantic's lax mode reads true as 1: forget(memory_id=true) deleted memory 1."""
    registry = ToolRegistry()
    registry.register(tool)
    result = await registry.execute(fcall(tool.__name__, args), ctx)
    assert result.output is None
    assert result.error is not None
    assert result.error.startswith(f"Invalid arguments for {tool.__name__}: {expected} (got ")


async def test_raising_tools_become_error_results(ctx: ToolSettings) -> None:
    registry = ToolRegistry()

    @registry.register
    async def explode() -> str:
        """Always fails."""
        raise RuntimeError("boom")

    @registry.register
    def refuse() -> str:
        """Fails the expected way."""
        raise ToolError("Nothing to do here.")

    # No parameters: no schema at all, as the SDK does it.
    assert [d.parameters_json_schema for d in registry.declarations()] == [None, None]
    result = await registry.execute(fcall("explode"), ctx)
    assert result.error == "RuntimeError: boom"
    assert "Traceback" not in result.error
    assert (await registry.execute(fcall("refuse"), ctx)).error == "Nothing to do here."


async def test_sync_and_async_tools_and_non_text_output(ctx: ToolSettings) -> None:
    registry = ToolRegistry()

    @registry.register
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @registry.register(name="greet", description="Say hello.")
    async def greet_impl(who: str) -> dict[str, str]:
        return {"greeting": f"hello {who}"}

    assert (await registry.execute(fcall("add", {"a": 2, "b": 3}), ctx)).output == "5"
    greeting = await registry.execute(fcall("greet", {"who": "Ada"}), ctx)
    assert greeting.output == '{"greeting": "hello Ada"}'
    decl = registry.get("greet")
    assert decl is not None and decl.description == "Say hello."


async def test_output_is_capped_with_a_note(ctx: ToolSettings) -> None:
    registry = ToolRegistry()

    @registry.register
    def flood() -> str:
        """Too much output."""
        return "H" * 15_000 + "M" * 10_000 + "T" * 5_000

    result = await registry.execute(fcall("flood"), ctx)
    text = result.output or ""
    assert not result.is_error
    assert "10,000 characters cut" in text
    kept = text.replace("\n", "")
    note_free = kept[: kept.index("[")] + kept[kept.index("]") + 1 :]
    assert len(note_free) == MAX_OUTPUT_CHARS
    assert text.startswith("H" * 15_000) and text.endswith("T" * 5_000)
    # Output under the cap is left alone.
    ctx_big = ToolSettings(workspace=ctx.workspace, max_output_chars=40_000)
    assert len((await registry.execute(fcall("flood"), ctx_big)).output or "") == 30_000


async def test_slow_tool_times_out(ctx: ToolSettings) -> None:
    registry = ToolRegistry()

    @registry.register(timeout=0.1)
    async def dawdle() -> str:
        """Takes too long."""
        await asyncio.sleep(120)  # far past any bound below, even on a loaded machine
        return "late"

    @registry.register(timeout=0.05)
    def snooze() -> str:
        """Blocks too long."""
        time.sleep(0.2)
        return "late"

    @registry.register
    async def own_timeout() -> str:
        """Raises its own TimeoutError."""
        raise TimeoutError("socket read timed out")

    start = time.monotonic()
    result = await registry.execute(fcall("dawdle"), ctx)
    assert time.monotonic() - start < 60  # stopped, not waited for
    assert result.error == "dawdle timed out after 0.1 s and was stopped."
    # A sync tool runs in a thread, which cannot be stopped: say so.
    slow_sync = await registry.execute(fcall("snooze"), ctx)
    assert slow_sync.error == "snooze timed out after 0.05 s and its result will be ignored."
    # A TimeoutError the tool raises itself is reported as such, not as our limit.
    own = await registry.execute(fcall("own_timeout"), ctx)
    assert own.error == "TimeoutError: socket read timed out"


async def test_context_timeouts_override_tool_defaults(ctx: ToolSettings) -> None:
    registry = ToolRegistry()

    @registry.register(timeout=10)
    async def nap() -> str:
        """Sleeps a little."""
        await asyncio.sleep(0.3)
        return "rested"

    assert (await registry.execute(fcall("nap"), ctx)).output == "rested"
    short = ToolSettings(workspace=ctx.workspace, timeouts={"nap": 0.05})
    assert "timed out after 0.05 s" in ((await registry.execute(fcall("nap"), short)).error or "")


async def test_cancellation_propagates_from_a_tool(ctx: ToolSettings) -> None:
    registry = ToolRegistry()
    started = asyncio.Event()

    @registry.register
    async def wait_forever() -> str:
        """Never finishes."""
        started.set()
        await asyncio.sleep(60)
        return "never"

    task = asyncio.create_task(registry.execute(fcall("wait_forever"), ctx))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


# --- confinement -----------------------------------------------------------


def escape_args(tool: str, path: str) -> dict[str, Any]:
    return {"path": path, "content": "pwned"} if tool == "write_file" else {"path": path}


@pytest.mark.parametrize("tool", ["read_file", "list_directory", "write_file"])
@pytest.mark.parametrize(
    "path",
    ["../outside/secret.txt", "sub/../../outside", "{outside}/secret.txt", "/etc/passwd"],
)
async def test_paths_outside_the_workspace_are_refused(
    registry: ToolRegistry, ctx: ToolSettings, outside: Path, tool: str, path: str
) -> None:
    path = path.format(outside=outside)
    result = await registry.execute(fcall(tool, escape_args(tool, path)), ctx)
    assert result.is_error
    assert "outside the workspace" in (result.error or "")
    assert (outside / "secret.txt").read_text() == "top secret"
    assert names_in(outside) == ["secret.txt"]


@pytest.mark.parametrize("tool", ["read_file", "list_directory", "write_file"])
async def test_symlinks_leading_outside_are_refused(
    registry: ToolRegistry, ctx: ToolSettings, outside: Path, tool: str
) -> None:
    (ctx.workspace / "link.txt").symlink_to(outside / "secret.txt")
    (ctx.workspace / "linkdir").symlink_to(outside, target_is_directory=True)
    for path in ["link.txt", "linkdir", "linkdir/secret.txt", "linkdir/new.txt"]:
        result = await registry.execute(fcall(tool, escape_args(tool, path)), ctx)
        assert result.is_error, (tool, path)
        assert "outside the workspace" in (result.error or ""), (tool, path)
    assert (outside / "secret.txt").read_text() == "top secret"
    assert not (outside / "new.txt").exists()


async def test_paths_inside_the_workspace_are_fine(
    registry: ToolRegistry, ctx: ToolSettings
) -> None:
    (ctx.workspace / "real.txt").write_text("inside")
    (ctx.workspace / "alias.txt").symlink_to(ctx.workspace / "real.txt")
    for path in ["alias.txt", str(ctx.workspace / "real.txt"), "sub/../real.txt"]:
        assert (await registry.execute(fcall("read_file", {"path": path}), ctx)).output == "inside"


# --- built-ins -------------------------------------------------------------


async def test_read_file(registry: ToolRegistry, ctx: ToolSettings) -> None:
    ws = ctx.workspace
    (ws / "notes.md").write_text("# Notes\nhéllo\n", encoding="utf-8")
    (ws / "latin1.txt").write_bytes(b"caf\xe9")
    (ws / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    (ws / "huge.log").write_bytes(b"x" * (MAX_READ_BYTES + 1))
    (ws / "folder").mkdir()

    async def read(path: str) -> ToolResult:
        return await registry.execute(fcall("read_file", {"path": path}), ctx)

    assert (await read("notes.md")).output == "# Notes\nhéllo\n"
    assert (await read("latin1.txt")).output == "caf\ufffd"
    assert "binary file" in ((await read("image.png")).error or "")
    huge = (await read("huge.log")).error or ""
    assert f"{MAX_READ_BYTES + 1:,} bytes" in huge and "head, tail or grep" in huge
    assert "There is no file 'missing.txt'" in ((await read("missing.txt")).error or "")
    assert "is a folder" in ((await read("folder")).error or "")


async def test_list_directory(registry: ToolRegistry, ctx: ToolSettings) -> None:
    ws = ctx.workspace
    (ws / "b.txt").write_text("b")
    (ws / ".hidden").write_text("h")
    (ws / "a_dir").mkdir()
    (ws / "a_dir" / "inner.txt").write_text("i")
    (ws / "c_dir").mkdir()

    default = await registry.execute(fcall("list_directory", {}), ctx)
    assert default.output == ".hidden\na_dir/\nb.txt\nc_dir/"
    sub = await registry.execute(fcall("list_directory", {"path": "a_dir"}), ctx)
    assert sub.output == "inner.txt"
    empty = await registry.execute(fcall("list_directory", {"path": "c_dir"}), ctx)
    assert empty.output == "c_dir is empty."
    as_file = await registry.execute(fcall("list_directory", {"path": "b.txt"}), ctx)
    assert "is a file" in (as_file.error or "")
    missing = await registry.execute(fcall("list_directory", {"path": "nope"}), ctx)
    assert "There is no folder 'nope'" in (missing.error or "")


async def test_list_directory_is_capped(registry: ToolRegistry, ctx: ToolSettings) -> None:
    many = ctx.workspace / "many"
    many.mkdir()
    for i in range(MAX_LIST_ENTRIES + 5):
        (many / f"f{i:05d}").touch()
    lines = (
        (await registry.execute(fcall("list_directory", {"path": "many"}), ctx)).output or ""
    ).splitlines()
    assert len(lines) == MAX_LIST_ENTRIES + 1
    assert lines[0] == "f00000"
    assert lines[-1] == "[... 5 more entries not shown]"


async def test_write_file(registry: ToolRegistry, ctx: ToolSettings) -> None:
    ws = ctx.workspace
    created = await registry.execute(
        fcall("write_file", {"path": "deep/er/new.txt", "content": "one"}), ctx
    )
    assert created.output == "Created deep/er/new.txt (3 characters)."
    assert (ws / "deep/er/new.txt").read_text() == "one"
    replaced = await registry.execute(
        fcall("write_file", {"path": "deep/er/new.txt", "content": "twö"}), ctx
    )
    assert replaced.output == "Replaced deep/er/new.txt (3 characters)."
    assert (ws / "deep/er/new.txt").read_text(encoding="utf-8") == "twö"
    onto_dir = await registry.execute(fcall("write_file", {"path": "deep", "content": "x"}), ctx)
    assert "is a folder" in (onto_dir.error or "")


async def test_run_command_reports_exit_code_stdout_and_stderr(
    registry: ToolRegistry, ctx: ToolSettings
) -> None:
    (ctx.workspace / "here.txt").touch()
    result = await registry.execute(
        fcall("run_command", {"command": "pwd; ls; echo oops >&2; exit 3"}), ctx
    )
    assert not result.is_error  # the command ran; its failure is in the text
    assert result.output == (
        f"Exit code: 3\n--- stdout ---\n{ctx.workspace}\nhere.txt\n--- stderr ---\noops"
    )
    quiet = await registry.execute(fcall("run_command", {"command": "true"}), ctx)
    assert quiet.output == "Exit code: 0\n--- stdout --- (empty)\n--- stderr --- (empty)"


async def test_run_command_bounds_what_it_keeps(registry: ToolRegistry, ctx: ToolSettings) -> None:
    command = "head -c 1500000 /dev/zero | tr '\\0' a; printf 'bad \\377 byte' >&2"
    result = await registry.execute(fcall("run_command", {"command": command}), ctx)
    text = result.output or ""
    assert text.startswith("Exit code: 0\n--- stdout ---\naaaa")
    # The stream keeps 1,000,000 bytes; the executor then caps the text.
    assert "[... 500,000 more bytes of stdout not kept]" in text
    assert "characters cut" in text
    assert text.endswith("--- stderr ---\nbad \ufffd byte")


async def test_run_command_stops_background_children(
    registry: ToolRegistry, ctx: ToolSettings
) -> None:
    pid_file = ctx.workspace / "bg.pid"
    result = await registry.execute(
        fcall("run_command", {"command": f"sleep 30 >/dev/null 2>&1 & echo $! > {pid_file}"}),
        ctx,
    )
    assert result.output is not None and result.output.startswith("Exit code: 0")
    assert await wait_until_gone(await read_pid(pid_file))


async def test_run_command_returns_when_the_shell_exits_despite_a_child_holding_output(
    registry: ToolRegistry, ctx: ToolSettings
) -> None:
    # The background sleep inherits stdout, so the output never reaches EOF
    # by itself; the tool must not wait for it until the time limit.
    start = time.monotonic()
    result = await registry.execute(
        fcall("run_command", {"command": "sleep 30 & echo $! > bg.pid; echo started"}), ctx
    )
    assert time.monotonic() - start < 20  # not the background sleep's 30 s
    assert result.output == "Exit code: 0\n--- stdout ---\nstarted\n--- stderr --- (empty)"
    assert await wait_until_gone(await read_pid(ctx.workspace / "bg.pid"))


async def test_run_command_timeout_kills_the_process_group(
    registry: ToolRegistry, workspace: Path
) -> None:
    ctx = ToolSettings(workspace=workspace, auto_approve=True, timeouts={"run_command": 0.3})
    # The shell backgrounds a sleep (a grandchild) and then sleeps itself.
    command = "sleep 5 & echo $! > child.pid; echo $$ > shell.pid; sleep 5"
    start = time.monotonic()
    result = await registry.execute(fcall("run_command", {"command": command}), ctx)
    assert time.monotonic() - start < 20  # not the background sleep's 30 s
    assert result.error == (
        "run_command timed out after 0.3 s and was stopped. "
        "The command and every process it started were killed."
    )
    shell_pid = await read_pid(workspace / "shell.pid")
    with pytest.raises(ProcessLookupError):
        os.kill(shell_pid, 0)  # killed and reaped
    assert await wait_until_gone(await read_pid(workspace / "child.pid"))


async def test_cancelling_run_command_kills_its_processes(
    registry: ToolRegistry, ctx: ToolSettings
) -> None:
    ws = ctx.workspace
    command = "sleep 30 & echo $! > child.pid; echo $$ > shell.pid; wait"
    task = asyncio.create_task(registry.execute(fcall("run_command", {"command": command}), ctx))
    shell_pid = await read_pid(ws / "shell.pid")
    child_pid = await read_pid(ws / "child.pid")
    assert not process_gone(child_pid)
    task.cancel()
    start = time.monotonic()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - start < 60  # stopped, not waited for
    with pytest.raises(ProcessLookupError):
        os.kill(shell_pid, 0)
    assert await wait_until_gone(child_pid)


async def test_cancel_returns_even_if_an_escaped_child_holds_the_output(
    registry: ToolRegistry, ctx: ToolSettings
) -> None:
    # setsid leaves our process group, so the group kill cannot reach it; the
    # cancel must still finish instead of waiting for its pipes to close.
    command = "setsid sleep 30 & echo $! > escaped.pid; echo $$ > shell.pid; wait"
    task = asyncio.create_task(registry.execute(fcall("run_command", {"command": command}), ctx))
    escaped_pid = await read_pid(ctx.workspace / "escaped.pid")
    try:
        shell_pid = await read_pid(ctx.workspace / "shell.pid")
        task.cancel()
        start = time.monotonic()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert time.monotonic() - start < 3
        with pytest.raises(ProcessLookupError):
            os.kill(shell_pid, 0)
    finally:
        os.kill(escaped_pid, signal.SIGKILL)
        assert await wait_until_gone(escaped_pid)
        await asyncio.sleep(0.1)  # let the loop see the pipes close


async def test_read_memory(registry: ToolRegistry, ctx: ToolSettings) -> None:
    async def memory(args: dict[str, Any]) -> ToolResult:
        return await registry.execute(fcall("read_memory", args), ctx)

    today = datetime.now().strftime("%d-%m-%Y")
    assert (await memory({})).output == (
        f"There is no memory yet, for today ({today}) or any other day."
    )
    assert (await memory({"date": "list"})).output == "There are no memory files yet."
    none_yet = await memory({"date": "01-02-2025"})
    assert none_yet.error == "There is no memory for 01-02-2025. There are none yet."

    assert ctx.memory_dir is not None
    ctx.memory_dir.mkdir()
    (ctx.memory_dir / "15-01-2025.md").write_text("[10:00]: planned the trip\n")
    (ctx.memory_dir / "03-12-2024.md").write_text("[09:30]: set up the repo\n")
    (ctx.memory_dir / "01-02-2025.md").write_text("[18:45]: booked hotels\n")
    (ctx.memory_dir / "README.md").write_text("not a day")
    (ctx.memory_dir / "2025-01-01.md").write_text("wrong format")

    listing = await memory({"date": "list"})
    assert listing.output == ("Days with memory, newest first:\n01-02-2025\n15-01-2025\n03-12-2024")
    assert (await memory({})).output == (
        f"There is no memory for today ({today}) yet. "
        "Days with memory: 01-02-2025, 15-01-2025, 03-12-2024."
    )
    (ctx.memory_dir / f"{today}.md").write_text("[08:00]: fixed the backup script\n")
    assert (await memory({})).output == "[08:00]: fixed the backup script\n"
    listed = (await memory({"date": " LIST "})).output
    assert listed is not None and listed.startswith(f"Days with memory, newest first:\n{today}")
    assert (await memory({"date": "15-01-2025"})).output == "[10:00]: planned the trip\n"
    missing = await memory({"date": "16-01-2025"})
    assert missing.error == (
        "There is no memory for 16-01-2025. "
        f"Days with memory (newest first): {today}, 01-02-2025, 15-01-2025, 03-12-2024."
    )
    for bad in ["2025-01-15", "15/01/2025", "../15-01-2025", "31-02-2025", "", "x" * 100_000]:
        result = await memory({"date": bad})
        assert "is not a date in dd-mm-yyyy form" in (result.error or ""), bad
        assert len(result.error or "") < 200

    no_memory = ToolSettings(workspace=ctx.workspace)
    result = await registry.execute(fcall("read_memory", {}), no_memory)
    assert result.error == "Memory is not available in this session."


# --- approval --------------------------------------------------------------


def approval_ctx(
    workspace: Path, approver: ScriptedApprover | None = None, **kw: Any
) -> ToolSettings:
    return ToolSettings(workspace=workspace, approval_callback=approver, **kw)


def write(path: str, content: str = "x", call_id: str = "call-1") -> types.FunctionCall:
    return fcall("write_file", {"path": path, "content": content}, call_id)


async def test_allow_once_asks_every_time(registry: ToolRegistry, workspace: Path) -> None:
    approver = ScriptedApprover(ApprovalDecision.ALLOW_ONCE, ApprovalDecision.ALLOW_ONCE)
    ctx = approval_ctx(workspace, approver)
    assert not (await registry.execute(write("a.txt", call_id="w1"), ctx)).is_error
    assert not (await registry.execute(write("b.txt", call_id="w2"), ctx)).is_error
    assert [(r.tool_name, r.args, r.call_id) for r in approver.requests] == [
        ("write_file", {"path": "a.txt", "content": "x"}, "w1"),
        ("write_file", {"path": "b.txt", "content": "x"}, "w2"),
    ]
    # Each request says where the tool runs and what it would write.
    assert {r.workspace for r in approver.requests} == {workspace}
    assert [r.change.lines if r.change else None for r in approver.requests] == [["+x"], ["+x"]]
    assert (workspace / "a.txt").exists() and (workspace / "b.txt").exists()
    assert ctx.session_allowed == set()


async def test_allow_session_stops_asking_for_that_tool(
    registry: ToolRegistry, workspace: Path
) -> None:
    approver = ScriptedApprover(ApprovalDecision.ALLOW_SESSION, ApprovalDecision.DENY)
    ctx = approval_ctx(workspace, approver)
    for name in ["a.txt", "b.txt", "c.txt"]:
        assert not (await registry.execute(write(name), ctx)).is_error
    assert len(approver.requests) == 1
    assert ctx.session_allowed == {"write_file"}
    # Other tools that need approval are still asked about.
    denied = await registry.execute(fcall("run_command", {"command": "touch ran"}), ctx)
    assert denied.is_error and len(approver.requests) == 2
    assert not (workspace / "ran").exists()


async def test_deny_is_an_error_result_and_nothing_happens(
    registry: ToolRegistry, workspace: Path
) -> None:
    approver = ScriptedApprover(ApprovalDecision.DENY)
    result = await registry.execute(write("a.txt"), approval_ctx(workspace, approver))
    assert result.is_error and (result.error or "").startswith("The user denied write_file")
    assert not (workspace / "a.txt").exists()


async def test_headless_denies_with_an_opt_in_hint(registry: ToolRegistry, workspace: Path) -> None:
    result = await registry.execute(write("a.txt"), approval_ctx(workspace))
    assert result.is_error
    assert "needs the user's approval" in (result.error or "")
    assert "auto-approve" in (result.error or "")
    assert not (workspace / "a.txt").exists()
    hinted = approval_ctx(workspace, opt_in_hint="Run koroku-tui --yes to allow it.")
    command = await registry.execute(fcall("run_command", {"command": "touch ran"}), hinted)
    assert (command.error or "").endswith("Run koroku-tui --yes to allow it.")
    assert not (workspace / "ran").exists()


async def test_auto_approve_never_asks(registry: ToolRegistry, workspace: Path) -> None:
    approver = ScriptedApprover()
    ctx = approval_ctx(workspace, approver, auto_approve=True)
    assert not (await registry.execute(write("a.txt"), ctx)).is_error
    assert not (await registry.execute(fcall("run_command", {"command": "true"}), ctx)).is_error
    assert approver.requests == []


async def test_read_only_tools_and_bad_calls_are_not_asked_about(
    registry: ToolRegistry, workspace: Path
) -> None:
    approver = ScriptedApprover()
    ctx = approval_ctx(workspace, approver)
    (workspace / "a.txt").write_text("a")
    assert (await registry.execute(fcall("read_file", {"path": "a.txt"}), ctx)).output == "a"
    assert not (await registry.execute(fcall("list_directory"), ctx)).is_error
    # Invalid arguments fail before the user is bothered.
    assert (await registry.execute(fcall("write_file", {"path": "a.txt"}), ctx)).is_error
    assert approver.requests == []


async def test_failing_approval_callback_denies(registry: ToolRegistry, workspace: Path) -> None:
    async def broken(request: ApprovalRequest) -> ApprovalDecision:
        raise RuntimeError("prompt crashed")

    ctx = ToolSettings(workspace=workspace, approval_callback=broken)
    result = await registry.execute(write("a.txt"), ctx)
    assert (
        result.error
        == "Could not ask the user to approve write_file (prompt crashed), so nothing was done."
    )
    assert not (workspace / "a.txt").exists()


async def test_cancel_while_asking_propagates(registry: ToolRegistry, workspace: Path) -> None:
    asked = asyncio.Event()

    async def never_answers(request: ApprovalRequest) -> ApprovalDecision:
        asked.set()
        await asyncio.sleep(60)
        return ApprovalDecision.ALLOW_ONCE

    ctx = ToolSettings(workspace=workspace, approval_callback=never_answers)
    task = asyncio.create_task(registry.execute(write("a.txt"), ctx))
    await asked.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not (workspace / "a.txt").exists()


@pytest.mark.parametrize("tool", ["read_file", "write_file"])
async def test_a_fifo_is_refused_instead_of_blocking_forever(tmp_path: Path, tool: str) -> None:
    os.mkfifo(tmp_path / "pipe")
    args = {"path": "pipe"} if tool == "read_file" else {"path": "pipe", "content": "x"}
    context = ToolSettings(workspace=tmp_path, auto_approve=True)
    result = await asyncio.wait_for(
        default_registry(timeout=5).execute(types.FunctionCall(name=tool, args=args), context),
        timeout=3,
    )
    assert result.is_error
    assert "not a regular file" in (result.error or "")


async def test_a_timed_out_command_still_shows_what_it_printed(tmp_path: Path) -> None:
    context = ToolSettings(workspace=tmp_path, auto_approve=True, timeouts={"run_command": 1.0})
    call = types.FunctionCall(
        name="run_command", args={"command": "echo important-progress-line; sleep 5"}
    )
    result = await default_registry().execute(call, context)
    assert result.is_error
    error = result.error or ""
    assert "timed out after 1 s" in error
    assert "important-progress-line" in error
