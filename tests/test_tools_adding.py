"""Adding a tool is a function and one registration line; the UI reads the spec (issue 23, item 2).

Each test runs the real app (and its real Agent) against the fake Gemini,
with a registry given to the assembly (``assemble(..., tools=...)``), which the
app draws with and hands to its agent: what the model is offered
and told, whether the user is asked, what the dialog says and how the
transcript draws the call all come from the spec, never from a tool's name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from google import genai
from google.genai import types
from helpers.agent_kit import stored_events
from helpers.ui_kit import build, plain, send, settle, texts, wait_for_approval
from test_tools_spec import GLOSSARY_SCHEMA, glossary
from test_ui_recall import seed_search_turn
from textual.widgets import Static

from koroku_tui.agent.tools import (
    ToolKind,
    ToolRegistry,
    ToolSettings,
    ToolSource,
    ToolSpec,
    default_registry,
)
from koroku_tui.config.settings import Settings
from koroku_tui.events import FunctionResponsePart
from koroku_tui.fake_gemini import FakeGemini, call_reply, text_reply
from koroku_tui.modes.wiring import RunParts
from koroku_tui.ui.main.approval import ApprovalScreen
from koroku_tui.ui.main.recall_row import SearchRow
from koroku_tui.ui.main.sidebar import ToolSidebar
from koroku_tui.ui.main.tool_row import ToolRow
from koroku_tui.ui.main.transcript import Transcript


def check_weather(city: str) -> str:
    """Tell today's weather in a city.

    Args:
        city: The city's name, as people write it.
    """
    return f"Sunny in {city}."


def run_script(script: str, context: ToolSettings) -> str:
    """Run a script of the user's own scripting tool."""
    return f"ran {len(script.splitlines())} lines in {context.workspace.name}"


def weather_registry() -> ToolRegistry:
    registry = default_registry()
    # The one line that adds the tool (as in builtin/__init__.py's register_builtins):
    registry.register(check_weather, kind=ToolKind.OTHER, needs_approval=True)
    return registry


def shown(dialog: ApprovalScreen, widget_id: str) -> str:
    return str(dialog.query_one(f"#{widget_id}", Static).render())


def offered(fake: FakeGemini) -> dict[str, dict[str, Any]]:
    """The declarations of the first request, by name."""
    body = fake.generate_requests[0].body
    return {d["name"]: d for d in body["tools"][0]["functionDeclarations"]}


def instruction(fake: FakeGemini) -> str:
    text = fake.generate_requests[0].body["systemInstruction"]["parts"][0]["text"]
    assert isinstance(text, str)
    return text


async def test_a_tool_added_by_one_line_is_offered_told_asked_about_and_shown(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    fake.add(call_reply(("check_weather", {"city": "Kyoto"})), text_reply("Sunny."))
    app = build(tmp_path, client, tools=weather_registry())
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "weather in Kyoto?")
        dialog = await wait_for_approval(pilot, app)
        assert shown(dialog, "approval-title") == "Allow check_weather to run?"
        await pilot.press("y")
        await settle(pilot, app)
        [*_, row] = app.query(ToolRow)
        assert plain(row) == '✓ check_weather {"city": "Kyoto"}'
        row.focus()
        await pilot.press("enter")
        assert plain(row).endswith("\nSunny in Kyoto.")
        assert app.query_one(ToolSidebar).rows()[-1] == ("✓", "check_weather", '{"city": "Kyoto"}')

    declaration = offered(fake)["check_weather"]
    assert declaration["description"] == "Tell today's weather in a city."
    assert declaration["parameters_json_schema"]["properties"]["city"] == {
        "type": "string",
        "description": "The city's name, as people write it.",
    }
    assert "- check_weather (asks the user first): Tell today's weather in a city." in (
        instruction(fake).splitlines()
    )
    # Without anyone to ask (--print without --yes) it is refused, with the hint.
    headless = ToolSettings(workspace=tmp_path, opt_in_hint="Use --yes.")
    call = types.FunctionCall(name="check_weather", args={"city": "Oslo"})
    result = await weather_registry().execute(call, headless)
    assert result.error is not None and result.error.endswith("nothing was done. Use --yes.")


async def test_a_schema_tool_is_called_through_the_real_agent_stored_and_shown(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    registry = default_registry()
    registry.add(
        ToolSpec.from_schema(
            "look_up",
            "Look a word up in the glossary.",
            GLOSSARY_SCHEMA,
            glossary,
            needs_approval=False,
            source=ToolSource.mcp("glossary"),
        )
    )
    fake.add(call_reply(("look_up", {"word": "tide", "limit": 2})), text_reply("Two senses."))
    app = build(tmp_path, client, tools=registry)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "what does tide mean?")
        await settle(pilot, app)
        live = texts(app, ToolRow)
        # A tool from an MCP server's source: its row names the server.
        assert live == ['✓ glossary › look_up {"word": "tide", "limit": 2}']
        row = app.query_one(ToolRow)
        row.focus()
        await pilot.press("enter")
        assert plain(row).endswith("\ntide: 2 senses")

    assert offered(fake)["look_up"]["parameters_json_schema"] == GLOSSARY_SCHEMA
    responses = [
        part.function_response
        for event in await stored_events(Settings(home=tmp_path).database_path)
        for part in event.parts
        if isinstance(part, FunctionResponsePart)
    ]
    assert [(r.name, r.response) for r in responses] == [("look_up", {"output": "tide: 2 senses"})]
    # After a restart the stored call is drawn the same way.
    again = build(tmp_path, client, tools=registry)
    async with again.run_test(size=(120, 40)) as pilot:
        await settle(pilot, again)
        assert texts(again, ToolRow) == live


async def test_the_dialog_speaks_of_a_command_as_the_spec_names_it(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    """Not run_command, yet a command: the spec's ``command_argument`` decides the words."""
    registry = default_registry()
    registry.register(
        run_script, kind=ToolKind.RUNS_COMMANDS, needs_approval=True, command_argument="script"
    )
    script = "echo one\necho \u202etwo"
    fake.add(call_reply(("run_script", {"script": script})), text_reply("Done."))
    app = build(tmp_path, client, tools=registry)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "run my script")
        dialog = await wait_for_approval(pilot, app)
        assert shown(dialog, "approval-lines") == "This command has 2 lines; each one runs."
        assert shown(dialog, "approval-warning").startswith(
            "⚠ This command contains hidden control characters (U+202E)"
        )
        await pilot.press("n")
        await settle(pilot, app)


async def test_replayed_rows_are_drawn_as_the_registry_s_spec_says(
    client: genai.Client, tmp_path: Path
) -> None:
    """A stored search: a hits row while the registry offers search_history; a plain row
    (the neutral spec) in an app whose registry does not, as for an MCP tool that is gone."""
    await seed_search_turn(tmp_path)
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        assert texts(app, ToolRow) == ['✓ search_history "backup script" · 12 matches']
        assert len(app.query(SearchRow)) == 1
    without = build(tmp_path, client, tools=ToolRegistry())
    async with without.run_test(size=(120, 40)) as pilot:
        await settle(pilot, without)
        assert texts(without, ToolRow) == ['✓ search_history {"query": "backup script"}']
        assert not without.query(SearchRow)


async def test_the_assembly_s_registry_is_the_one_the_app_draws_with_and_the_agent_offers(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    """One registry per run, from the assembly point: the transcript's lookup, the agent's
    tools and the system instruction the assembly describes are all made from it."""
    registry = weather_registry()
    fake.add(text_reply("Hello."))
    app = build(tmp_path, client, tools=registry)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        assert app.parts.tools is registry
        assert app.agent is not None and app.agent.tools is registry
        assert app.main.query_one(Transcript).tools == registry.spec_for
        await send(pilot, app, "hi")
        await settle(pilot, app)

    assert isinstance(app.parts, RunParts)
    described = app.parts.agent_parts().system_instruction
    assert instruction(fake) == described
    assert "- check_weather (asks the user first): Tell today's weather in a city." in (
        described.splitlines()
    )
