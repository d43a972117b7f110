"""Tools declare what they are: specs from a function or from a JSON schema (issue 23, item 2).

The core half: what the built-in specs say, the schema form's validation
and execution under the executor's rules, the neutral spec of a tool that
is gone, the instruction and ``--yes``'s help read from the registry.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from google.genai import types

from koroku_tui.agent.instructions import system_instruction
from koroku_tui.agent.tools import (
    MAX_OUTPUT_CHARS,
    RowStyle,
    ToolKind,
    ToolRegistry,
    ToolSettings,
    ToolSource,
    ToolSpec,
    default_registry,
)
from koroku_tui.agent.tools.change_preview import preview_file_write
from koroku_tui.agent.tools.spec import BUILT_IN, UNREGISTERED
from koroku_tui.cli import build_parser
from koroku_tui.store.search import ECHO_TOOLS

GLOSSARY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "word": {"type": "string", "description": "The word to look up."},
        "limit": {"type": "integer", "description": "At most this many senses."},
    },
    "required": ["word"],
    "additionalProperties": False,
}
"""A tool an MCP server would offer: a schema, no Python signature."""


def look_up(word: str, limit: int = 3) -> str:
    """Look a word up in the glossary.

    Args:
        word: The word to look up.
        limit: At most this many senses.
    """
    return f"{word}: {limit} senses"


async def glossary(arguments: dict[str, Any]) -> str:
    return f"{arguments['word']}: {arguments.get('limit', 3)} senses"


def schema_registry(
    call: Any = glossary, schema: dict[str, Any] | None = None, **traits: Any
) -> ToolRegistry:
    registry = ToolRegistry()
    registry.add(
        ToolSpec.from_schema(
            "look_up",
            "Look a word up in the glossary.",
            schema or GLOSSARY_SCHEMA,
            call,
            source=ToolSource.mcp("glossary"),
            **{"needs_approval": False, **traits},
        )
    )
    return registry


def fcall(name: str, args: dict[str, Any]) -> types.FunctionCall:
    return types.FunctionCall(id="c1", name=name, args=args)


# --- what the built-in tools are -----------------------------------------------


def test_built_in_specs_say_what_each_tool_is() -> None:
    said = {
        spec.name: (spec.kind, spec.needs_approval, spec.row, spec.command_argument)
        for spec in default_registry()
    }
    assert said == {
        "read_file": (ToolKind.READS_FILES, False, RowStyle.PLAIN, None),
        "list_directory": (ToolKind.READS_FILES, False, RowStyle.PLAIN, None),
        "write_file": (ToolKind.CHANGES_FILES, True, RowStyle.PLAIN, None),
        "run_command": (ToolKind.RUNS_COMMANDS, True, RowStyle.PLAIN, "command"),
        "read_memory": (ToolKind.READS_MEMORY, False, RowStyle.PLAIN, None),
        "search_history": (ToolKind.READS_HISTORY, False, RowStyle.SEARCH_HITS, None),
        "read_session": (ToolKind.READS_HISTORY, False, RowStyle.PLAIN, None),
        "remember": (ToolKind.KEEPS_MEMORIES, False, RowStyle.PLAIN, None),
        "forget": (ToolKind.KEEPS_MEMORIES, False, RowStyle.PLAIN, None),
    }
    registry = default_registry()
    assert {spec.source for spec in registry} == {BUILT_IN}
    write, run = registry.get("write_file"), registry.get("run_command")
    assert write is not None and write.preview is preview_file_write
    assert run is not None and run.timeout == 60 and "killed" in run.timeout_note


def test_the_search_index_leaves_out_exactly_the_built_ins_that_echo_history() -> None:
    """The store keeps the names (it cannot import agent/): they must be the specs'."""
    assert default_registry().echo_tools() == ECHO_TOOLS
    assert {"search_history", "read_session", "read_memory"} == ECHO_TOOLS


def test_specs_registries_and_built_ins_load_without_the_sdk() -> None:
    """The app builds its registry before its first frame, which must not wait for the SDK."""
    code = (
        "import sys\n"
        "from koroku_tui.agent.tools.builtin import default_registry\n"
        "registry = default_registry()\n"
        "assert registry.spec_for('search_history').row == 'search hits'\n"
        "print('google.genai' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_registering_the_built_ins_builds_no_pydantic_model_until_one_is_used() -> None:
    """The app registers its tools before its first frame, which checks and declares none:
    their seven pydantic models took ~4 ms of that frame. Each is built when first used."""
    code = (
        "from pydantic import BaseModel\n"
        "from koroku_tui.agent.tools.builtin import default_registry\n"
        "def models():\n"
        "    return {m.__name__ for m in BaseModel.__subclasses__()} & {\n"
        "        f'{spec.name}_arguments' for spec in default_registry()}\n"
        "registry = default_registry()\n"
        "assert models() == set(), models()\n"
        "assert registry.spec_for('read_file').arguments.validate({'path': 'a'}) == {'path': 'a'}\n"
        "assert models() == {'read_file_arguments'}, models()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_a_tool_no_registry_offers_gets_a_neutral_spec() -> None:
    spec = default_registry().spec_for("weather_from_last_month")
    assert spec.name == "weather_from_last_month" and spec.source == UNREGISTERED
    assert spec.row is RowStyle.PLAIN and spec.kind is ToolKind.OTHER
    assert spec.command_argument is None and spec.preview is None
    assert not spec.echoes_history


# --- the instruction and --yes read the registry --------------------------------


def test_the_instruction_lists_the_registry_s_tools(tmp_path: Path) -> None:
    registry = default_registry()
    words = system_instruction(tmp_path / "memory", registry)
    listed = [line for line in words.splitlines() if line.startswith("- ")]
    assert [line[2:].split(":")[0] for line in listed] == [
        "read_file",
        "list_directory",
        "write_file (asks the user first)",
        "run_command (asks the user first)",
        "read_memory",
        "search_history",
        "read_session",
        "remember",
        "forget",
    ]
    read = registry.get("read_file")
    assert read is not None and f"- read_file: {read.description}" in listed
    # The rest is worded as before.
    assert words.startswith("You are Koroku, a helpful personal assistant running in the user's")
    assert f"Your memory folder is {tmp_path / 'memory'}." in words
    assert words.endswith("When a request is ambiguous or a step is risky, ask rather than guess.")


def test_the_instruction_advises_only_on_the_kinds_of_tools_offered(tmp_path: Path) -> None:
    full = system_instruction(tmp_path / "memory", default_registry())
    assert "call search_history" in full and "read_memory reads" in full
    assert "call remember" in full and "call forget" in full
    none = system_instruction(tmp_path / "memory", ToolRegistry())
    assert "You have no tools." in none
    # Not told to call tools it does not have; still told where its memory is.
    assert "search_history" not in none and "read_memory" not in none
    assert "remember" not in none and "forget" not in none
    assert f"Your memory folder is {tmp_path / 'memory'}." in none


def test_yes_help_names_the_tools_that_ask_first() -> None:
    (yes,) = [a for a in build_parser()._actions if "--yes" in a.option_strings]
    assert yes.help == "with --print: allow write_file and run_command without asking"


# --- the schema form ---------------------------------------------------------------


def test_a_schema_tool_is_declared_with_its_own_schema() -> None:
    (declaration,) = schema_registry().declarations()
    assert declaration.name == "look_up"
    assert declaration.description == "Look a word up in the glossary."
    assert declaration.parameters_json_schema == GLOSSARY_SCHEMA
    spec = schema_registry().spec_for("look_up")
    assert spec.source == ToolSource.mcp("glossary") and str(spec.source) == "mcp:glossary"


@pytest.mark.parametrize(
    "args",
    [
        {},
        {"word": 5},
        {"word": "tide", "sense": "nautical"},
        {"word": ["x" * 500]},
        {"word": "a", "limit": True},
        {"extra": 1, "word": None},
    ],
)
async def test_a_schema_tool_answers_bad_arguments_as_a_function_tool_does(
    ctx: ToolSettings, args: dict[str, Any]
) -> None:
    function_form = ToolRegistry()
    function_form.register(look_up)
    from_function = await function_form.execute(fcall("look_up", args), ctx)
    from_schema = await schema_registry().execute(fcall("look_up", args), ctx)
    assert from_function.error is not None
    assert from_function.error.startswith("Invalid arguments for look_up: ")
    assert from_schema.error == from_function.error


async def test_a_schema_tool_says_which_value_is_not_a_whole_number(ctx: ToolSettings) -> None:
    """Pydantic adds its reason ("unable to parse string"); the schema form says the rest alike."""
    for limit in ("many", 2.5, True):
        result = await schema_registry().execute(
            fcall("look_up", {"word": "a", "limit": limit}), ctx
        )
        assert result.error == (
            "Invalid arguments for look_up: "
            f"'limit': Input should be a valid integer (got {limit!r})."
        )


async def test_a_schema_tool_gets_its_arguments_checked_and_as_one_dict(
    ctx: ToolSettings,
) -> None:
    received: list[dict[str, Any]] = []

    async def record(arguments: dict[str, Any]) -> dict[str, Any]:
        received.append(arguments)
        return {"ok": True}

    schema = {
        "type": "object",
        "properties": {
            "count": {"type": "integer"},
            "mode": {"type": "string", "enum": ["fast", "slow"]},
            "either": {"type": ["string", "null"]},
            "nested": {"type": "object"},
        },
    }
    registry = schema_registry(record, schema)
    sent = {"count": 3.0, "mode": "slow", "either": None, "nested": {"deep": [1]}, "other": 1}
    result = await registry.execute(fcall("look_up", sent), ctx)
    assert result.output == '{"ok": true}'
    # A whole float became an int; unknown keys pass when the schema allows them.
    assert received == [{**sent, "count": 3}] and isinstance(received[0]["count"], int)
    bad = await registry.execute(fcall("look_up", {"mode": "medium", "either": 1}), ctx)
    assert bad.error == (
        "Invalid arguments for look_up: 'mode': Input should be 'fast' or 'slow' (got 'medium'); "
        "'either': Input should be a valid string (got 1)."
    )
    assert len(received) == 1  # a refused call never runs


async def test_a_schema_tool_runs_under_the_executor_s_rules(ctx: ToolSettings) -> None:
    async def explode(arguments: dict[str, Any]) -> str:
        raise RuntimeError("boom")

    async def dawdle(arguments: dict[str, Any]) -> str:
        await asyncio.sleep(120)
        return "late"

    async def flood(arguments: dict[str, Any]) -> str:
        return "x" * (MAX_OUTPUT_CHARS + 5_000)

    word = {"word": "tide"}
    failed = await schema_registry(explode).execute(fcall("look_up", word), ctx)
    assert failed.error == "RuntimeError: boom"
    late = await schema_registry(dawdle, timeout=0.05).execute(fcall("look_up", word), ctx)
    assert late.error == "look_up timed out after 0.05 s and was stopped."
    capped = await schema_registry(flood).execute(fcall("look_up", word), ctx)
    assert "5,000 characters cut" in (capped.output or "")


async def test_a_schema_tool_asks_first_unless_told_otherwise(workspace: Path) -> None:
    """Its code is not Koroku's: by default it needs approval, like write_file."""
    registry = ToolRegistry()
    registry.add(ToolSpec.from_schema("look_up", "Look up.", GLOSSARY_SCHEMA, glossary))
    headless = ToolSettings(workspace=workspace, opt_in_hint="Say --yes.")
    refused = await registry.execute(fcall("look_up", {"word": "tide"}), headless)
    assert refused.error == (
        "look_up needs the user's approval and there is no one to ask, so nothing was done. "
        "Say --yes."
    )
    allowed = ToolSettings(workspace=workspace, auto_approve=True)
    ran = await registry.execute(fcall("look_up", {"word": "tide"}), allowed)
    assert ran.output == "tide: 3 senses"


async def test_a_schema_tool_whose_answer_is_no_json_answers_with_an_error(
    ctx: ToolSettings,
) -> None:
    """A value ``json.dumps`` refuses (non-text keys, a cycle) is the tool's failure, one
    result the model reads: it never escapes the executor and ends the turn."""
    looped: dict[str, Any] = {}
    looped["self"] = looped
    for value in ({(1, 2): "pair"}, looped):

        async def answer(arguments: dict[str, Any], value: Any = value) -> Any:
            return value

        result = await schema_registry(answer).execute(fcall("look_up", {"word": "a"}), ctx)
        assert result.error is not None
        assert result.error.startswith("look_up answered with a value that is not text or JSON")


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": ["word"]},
        {"type": "object", "properties": {"word": {"type": 5}}},
        {"type": "object", "required": 5},
    ],
)
async def test_a_malformed_schema_never_ends_the_turn(
    ctx: ToolSettings, schema: dict[str, Any]
) -> None:
    """An MCP server's schema may be malformed where nothing checks it: what the check cannot
    read is left to the tool, and the call is answered, never raised out of ``execute``."""
    result = await schema_registry(glossary, schema).execute(fcall("look_up", {"word": "a"}), ctx)
    assert result.output == "a: 3 senses"


@pytest.mark.parametrize("name", ["", "two words", "line\nbreak", "9lives", "a" * 65, "naïve"])
def test_a_name_gemini_would_refuse_is_refused_when_the_tool_is_added(name: str) -> None:
    async def call(arguments: dict[str, Any]) -> str:
        return "never"

    spec = ToolSpec.from_schema(name, "A tool.", {"type": "object"}, call)
    with pytest.raises(ValueError, match="cannot be a tool's name"):
        ToolRegistry().add(spec)
