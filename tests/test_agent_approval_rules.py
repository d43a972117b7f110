"""Approval rules in a real turn: the agent, the real SDK, the strict fake Gemini, SQLite.

An allowed ``git status`` runs without the approval callback; a denied call
reaches Gemini answered "denied by your rules" (and which rule), with or
without auto-approve; the system instruction says what the rules decide;
and ``--print`` (in-process, on a ``Settings`` holding the rules) runs an
allowed call without ``--yes`` while a deny rule wins over ``--yes``.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers.agent_kit import open_agent
from helpers.tool_kit import ScriptedApprover, ruled

from koroku_tui.agent.tools.approval import ApprovalDecision
from koroku_tui.config.settings import ApprovalSettings, Settings
from koroku_tui.fake_gemini import FakeGemini, call_reply, text_reply
from koroku_tui.modes.headless import HeadlessRequest, run_headless


def answers(fake: FakeGemini) -> list[dict[str, Any]]:
    """Every function response Gemini received, in order."""
    return [
        part["functionResponse"]["response"]
        for request in fake.generate_requests
        for part in (request.contents[-1]["parts"] if request.contents else [])
        if "functionResponse" in part
    ]


def system_text(fake: FakeGemini) -> str:
    body = fake.generate_requests[0].body
    return str(body["systemInstruction"]["parts"][0]["text"])


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    """``tmp_path`` as a git repository holding one new file, ``a.txt``."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "a.txt").write_text("new")
    return tmp_path


async def test_an_allowed_command_runs_without_the_approval_callback(
    fake: FakeGemini, repository: Path
) -> None:
    fake.add(call_reply(("run_command", {"command": "git status --short"})), text_reply("Clean."))
    approver = ScriptedApprover()
    context = ruled(repository, approver, allow_commands=("git status",))
    async with open_agent(fake, repository, tool_settings=context) as agent:
        assert await agent.run_turn("is the tree clean?") == "Clean."
    assert approver.requests == []
    [answer] = answers(fake)
    assert answer["output"].startswith("Exit code: 0\n")
    assert "?? a.txt" in answer["output"]
    assert "run_command (asks the user first, unless the user's rules allow the command)" in (
        system_text(fake)
    )


@pytest.mark.parametrize("auto_approve", [False, True])
async def test_a_denied_command_is_answered_denied_by_your_rules(
    fake: FakeGemini, tmp_path: Path, auto_approve: bool
) -> None:
    (tmp_path / "notes").write_text("keep me")
    fake.add(call_reply(("run_command", {"command": "rm -f notes"})), text_reply("Not allowed."))
    approver = ScriptedApprover()
    context = ruled(tmp_path, approver, allow_commands=("rm",), deny_commands=("rm -f",))
    context.auto_approve = auto_approve
    async with open_agent(fake, tmp_path, tool_settings=context) as agent:
        assert await agent.run_turn("clean up") == "Not allowed."
    assert approver.requests == []
    assert (tmp_path / "notes").read_text() == "keep me"
    [answer] = answers(fake)
    assert answer["error"].startswith(
        "run_command was denied by your rules (deny_commands `rm -f`); nothing was done."
    )


async def test_tools_rules_change_who_is_asked_and_what_the_model_is_told(
    fake: FakeGemini, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("alpha")
    fake.add(
        call_reply(("read_file", {"path": "a.txt"})),
        call_reply(("write_file", {"path": "b.txt", "content": "b"})),
        text_reply("Done."),
    )
    approver = ScriptedApprover(ApprovalDecision.ALLOW_ONCE)
    context = ruled(tmp_path, approver, tools={"read_file": "ask", "write_file": "allow"})
    async with open_agent(fake, tmp_path, tool_settings=context) as agent:
        assert await agent.run_turn("copy it") == "Done."
    assert [r.tool_name for r in approver.requests] == ["read_file"]
    assert (tmp_path / "b.txt").read_text() == "b"
    words = system_text(fake)
    assert "- read_file (asks the user first): " in words
    assert "- write_file: " in words


# --- --print ---------------------------------------------------------------


def headless(
    fake: FakeGemini, tmp_path: Path, approval: ApprovalSettings, *, yes: bool = False
) -> int:
    """One ``--print`` turn in this process, in ``tmp_path/work``; the home holds ``approval``."""
    workspace = tmp_path / "work"
    workspace.mkdir(exist_ok=True)
    request = HeadlessRequest(text="go", workspace=workspace, auto_approve=yes, new_session=True)
    settings = Settings(home=tmp_path / "home", model="gemini-test", approval=approval)
    return run_headless(request, settings)


def test_print_runs_an_allowed_call_without_yes_and_a_deny_rule_wins_over_yes(
    fake: FakeGemini, fake_in_env: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rules = ApprovalSettings(allow_commands=["touch allowed"], deny_commands=["touch denied"])
    fake.add(call_reply(("run_command", {"command": "touch allowed"})), text_reply("Made."))
    assert headless(fake, tmp_path, rules) == 0
    assert (tmp_path / "work" / "allowed").exists()

    fake.add(call_reply(("run_command", {"command": "touch asked"})), text_reply("Refused."))
    assert headless(fake, tmp_path, rules) == 0
    assert "--yes" in answers(fake)[-1]["error"]  # "ask" is refused without --yes, as before

    fake.add(call_reply(("run_command", {"command": "touch denied"})), text_reply("Refused."))
    assert headless(fake, tmp_path, rules, yes=True) == 0
    assert "denied by your rules" in answers(fake)[-1]["error"]
    assert sorted(p.name for p in (tmp_path / "work").iterdir()) == ["allowed"]
    assert capsys.readouterr().out == "Made.\nRefused.\nRefused.\n"
