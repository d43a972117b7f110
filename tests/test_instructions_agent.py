"""What reaches Gemini: the instruction files' text, only when trusted, re-read between turns.

The real agent, assembled from ``Settings`` as a run is (``modes.wiring``),
against the strict fake Gemini, which records each request's system instruction.
"""

from __future__ import annotations

import os
from pathlib import Path

from google import genai
from helpers.agent_kit import fast_config, sent_instructions
from helpers.project_kit import nested_project

from koroku_tui.config.settings import InstructionSettings, Settings
from koroku_tui.fake_gemini import FakeGemini, text_reply
from koroku_tui.modes.wiring import RunParts, assemble


def run_in(workspace: Path, client: genai.Client, tmp_path: Path, **settings: object) -> RunParts:
    home = tmp_path / "home"
    return assemble(
        Settings(home=home, **settings),
        workspace=workspace,
        client=client,
        agent_config=fast_config(tmp_path, context_window=1_000_000),
    )


async def turns(run: RunParts, *messages: str) -> None:
    store = run.open_store()
    async with run.build_agent(store) as agent:
        for message in messages:
            await agent.run_turn(message)


async def test_a_trusted_projects_files_reach_gemini_after_the_personal_ones(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    project = nested_project(tmp_path)
    fake.add(text_reply("ok"))
    await turns(run_in(project.workspace, client, tmp_path, trusted_folders=[project.outer]), "hi")
    [said] = sent_instructions(fake)
    order = ["PERSONAL standing orders", "LIB-ROOT agents", "LIB-ROOT koroku", "APP agents"]
    assert [said.index(text) for text in order] == sorted(said.index(text) for text in order)
    assert "OUTER-ROOT" not in said


async def test_an_untrusted_projects_files_never_reach_gemini(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    project = nested_project(tmp_path)
    fake.add(text_reply("ok"))
    await turns(run_in(project.workspace, client, tmp_path, trusted_folders=[tmp_path / "x"]), "hi")
    [said] = sent_instructions(fake)
    assert "PERSONAL standing orders" in said
    assert "APP agents" not in said and "LIB-ROOT" not in said


async def test_an_edit_between_two_turns_is_what_the_second_turn_sends(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    project = nested_project(tmp_path)
    agents = project.workspace / "AGENTS.md"
    fake.add(text_reply("one"), text_reply("two"), text_reply("three"))
    run = run_in(project.workspace, client, tmp_path, trusted_folders=[project.root])
    store = run.open_store()
    async with run.build_agent(store) as agent:
        await agent.run_turn("first")
        agents.write_text("APP agents, now with tabs\n")
        os.utime(agents, ns=(1, 1))  # a new mtime even on a coarse clock
        await agent.run_turn("second")
        await agent.run_turn("third")  # nothing changed: nothing re-read, the same text
    first, second, third = sent_instructions(fake)
    assert "APP agents\n" in first and "now with tabs" not in first
    assert "APP agents, now with tabs" in second
    assert third == second


async def test_trusting_during_a_session_counts_from_the_next_turn(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    project = nested_project(tmp_path)
    fake.add(text_reply("one"), text_reply("two"))
    run = run_in(project.workspace, client, tmp_path)
    store = run.open_store()
    async with run.build_agent(store) as agent:
        await agent.run_turn("first")
        run.instruction_files.trust()  # what the trust prompt's "Trust" does
        await agent.run_turn("second")
    first, second = sent_instructions(fake)
    assert "APP agents" not in first and "APP agents" in second


async def test_the_configured_names_are_the_ones_read(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    project = nested_project(tmp_path)
    (project.workspace / "CLAUDE.md").write_text("CLAUDE rules\n")
    fake.add(text_reply("ok"))
    names = InstructionSettings(files=["CLAUDE.md"])
    run = run_in(
        project.workspace, client, tmp_path, trusted_folders=[project.root], instructions=names
    )
    await turns(run, "hi")
    [said] = sent_instructions(fake)
    assert "CLAUDE rules" in said and "APP agents" not in said and "PERSONAL" not in said
