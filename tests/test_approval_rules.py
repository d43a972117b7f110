"""Approval rules (issue 24, section 4): what they match, what wins, and what the executor does.

The matcher on its own, then the real registry's executor with a recording
approver: an allowed call runs unasked, a denied one is answered "denied by
your rules" (even with auto-approve), and no command of the hostile list
runs without the dialog.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers.tool_kit import ScriptedApprover, fcall, ruled
from hostile.rule_commands import ALLOWED, MATCHING, SNEAKING

from koroku_tui.agent import instructions
from koroku_tui.agent.tools import ToolRegistry
from koroku_tui.agent.tools.answer_words import for_user
from koroku_tui.agent.tools.approval import ApprovalDecision
from koroku_tui.agent.tools.approval_rules import ApprovalRules, Verdict, command_problem
from koroku_tui.agent.tools.builtin import default_registry
from koroku_tui.agent.tools.denials import BY_RULES, BY_YOU, denial, denied_by, rule_denial

GIT_AND_LS = ApprovalRules(allow_commands=ALLOWED)


@pytest.fixture
def registry() -> ToolRegistry:
    return default_registry()


def run(command: str) -> Any:
    return fcall("run_command", {"command": command})


# --- the matcher -------------------------------------------------------------


@pytest.mark.parametrize("command", MATCHING)
def test_an_allow_rule_matches_its_words_then_any_arguments(command: str) -> None:
    ruling = GIT_AND_LS.rule_for("run_command", command)
    assert ruling.verdict is Verdict.ALLOW
    assert ruling.rule in {"allow_commands `git status`", "allow_commands `ls`"}


@pytest.mark.parametrize("command", SNEAKING)
def test_no_hostile_command_is_allowed_by_the_rules(command: str) -> None:
    assert GIT_AND_LS.rule_for("run_command", command).verdict is not Verdict.ALLOW
    # Nor by a rule allowing every call of the tool.
    everything = ApprovalRules(tools={"run_command": "allow"})
    if command_problem(command) is not None:
        assert everything.rule_for("run_command", command).verdict is Verdict.ASK


def test_deny_wins_over_allow_and_ask_over_allow() -> None:
    rules = ApprovalRules(allow_commands=("git",), deny_commands=("git push",))
    assert rules.rule_for("run_command", "git push --force").verdict is Verdict.DENY
    assert rules.rule_for("run_command", "git push --force").rule == "deny_commands `git push`"
    assert rules.rule_for("run_command", "git pull").verdict is Verdict.ALLOW
    asked = ApprovalRules(allow_commands=("git",), tools={"run_command": "ask"})
    assert asked.rule_for("run_command", "git pull").verdict is Verdict.ASK
    denied_tool = ApprovalRules(allow_commands=("git",), tools={"run_command": "deny"})
    assert denied_tool.rule_for("run_command", "git pull").verdict is Verdict.DENY
    # A tool denied whole is denied whatever its command holds: nothing is read of it.
    assert denied_tool.rule_for("run_command", "git pull; ls").verdict is Verdict.DENY


def test_a_rule_does_not_apply_to_a_command_with_shell_syntax_and_says_why() -> None:
    rules = ApprovalRules(allow_commands=("git status",), deny_commands=("rm",))
    ruling = rules.rule_for("run_command", "git status; rm -rf x")
    assert ruling.verdict is Verdict.ASK
    assert [u.sentence for u in ruling.unapplied] == [
        "Your rule allowing `git status` does not apply: the command holds `;`."
    ]
    # A deny rule does not apply either: the command asks, and the dialog says so.
    ruling = rules.rule_for("run_command", "rm -rf x\nls")
    assert ruling.verdict is Verdict.ASK
    assert [u.sentence for u in ruling.unapplied] == [
        "Your rule denying `rm` does not apply: the command holds a line break."
    ]
    hidden = rules.rule_for("run_command", "git status\u202e").unapplied
    assert [u.problem for u in hidden] == ["hidden characters (U+202E)"]
    # Only rules whose words start the command are named.
    assert rules.rule_for("run_command", "echo x; rm y").unapplied == ()
    everything = ApprovalRules(tools={"run_command": "allow"})
    assert [u.sentence for u in everything.rule_for("run_command", "ls | sh").unapplied] == [
        "Your rule allowing every run_command call does not apply: the command holds `|`."
    ]


def test_tools_rules_apply_to_any_tool_and_unknown_values_are_ignored() -> None:
    rules = ApprovalRules(tools={"read_file": "ask", "write_file": "allow", "x": "maybe"})
    assert rules.rule_for("read_file").verdict is Verdict.ASK
    assert rules.rule_for("write_file").verdict is Verdict.ALLOW
    assert rules.rule_for("x").verdict is None
    assert rules.rule_for("list_directory").verdict is None


def test_without_rules_a_command_with_syntax_is_left_to_the_spec() -> None:
    assert ApprovalRules().rule_for("run_command", "ls; echo").verdict is None


def test_rules_that_cannot_match_never_do() -> None:
    rules = ApprovalRules(allow_commands=("", "  ", "ls;", "'unclosed", "git\u200bstatus"))
    for command in ["ls", "ls;", "git status", "'unclosed"]:
        assert rules.rule_for("run_command", command).verdict is not Verdict.ALLOW, command


def test_each_rule_is_split_once_not_at_every_call(monkeypatch: pytest.MonkeyPatch) -> None:
    # A cloned repository's file may hold 40,000 deny rules (an untrusted one's apply):
    # split again at every call, each run_command call stalled a second on them.
    import shlex

    splits: list[str] = []
    split = shlex.split

    def counted(text: str) -> list[str]:
        splits.append(text)
        return split(text)

    monkeypatch.setattr(shlex, "split", counted)
    rules = ApprovalRules(
        deny_commands=(*(f'tool{n} "an argument"' for n in range(300)), "rm", "git  push")
    )
    assert rules.rule_for("run_command", "git push --force").verdict is Verdict.DENY
    first_call = len(splits)
    assert rules.rule_for("run_command", "rm -rf x").verdict is Verdict.DENY
    assert rules.rule_for("run_command", 'tool7 "an argument" -v').verdict is Verdict.DENY
    assert rules.rule_for("run_command", "ls").verdict is None
    assert len(splits) - first_call <= 2 * 3  # the commands only, not the 300 rules again


def test_a_denial_by_the_rules_is_told_apart_and_worded_for_the_user() -> None:
    answer = rule_denial("run_command", "deny_commands `rm`")
    assert BY_RULES in answer and denied_by(answer) == BY_RULES
    assert denied_by(denial("write_file")) == BY_YOU
    assert denied_by("run_command failed: denied by your rules") is None
    assert denied_by(None) is None
    assert for_user(answer) == (
        "run_command was denied by your rules (deny_commands `rm`); nothing was done."
    )


def test_the_instruction_says_which_tools_ask_as_the_rules_decide(tmp_path: Path) -> None:
    rules = ApprovalRules(
        allow_commands=("git status",),
        tools={"write_file": "allow", "read_file": "ask", "list_directory": "deny"},
    )
    words = instructions.system_instruction(tmp_path, default_registry(), rules)
    assert "- write_file: " in words
    assert "- read_file (asks the user first): " in words
    assert "- list_directory (the user's rules deny it: do not call it): " in words
    assert "- run_command (asks the user first, unless the user's rules allow the command)" in words
    assert "git status" not in words  # the rules' own words stay out


# --- through the executor ----------------------------------------------------


@pytest.mark.parametrize("command", SNEAKING)
async def test_no_hostile_command_runs_without_asking(
    registry: ToolRegistry, workspace: Path, command: str
) -> None:
    approver = ScriptedApprover(ApprovalDecision.DENY)
    ctx = ruled(workspace, approver, allow_commands=ALLOWED)
    result = await registry.execute(run(command), ctx)
    assert [r.args for r in approver.requests] == [{"command": command}]
    assert result.is_error and denied_by(result.error) == BY_YOU
    assert not (workspace / "PWNED").exists()


async def test_an_allowed_command_runs_without_asking(
    registry: ToolRegistry, workspace: Path
) -> None:
    approver = ScriptedApprover()
    ctx = ruled(workspace, approver, allow_commands=("touch",))
    result = await registry.execute(run("touch made.txt"), ctx)
    assert not result.is_error and (workspace / "made.txt").exists()
    assert approver.requests == []


async def test_a_denied_command_is_not_run_even_with_auto_approve(
    registry: ToolRegistry, workspace: Path
) -> None:
    approver = ScriptedApprover()
    ctx = ruled(workspace, approver, allow_commands=("touch",), deny_commands=("touch x",))
    ctx.auto_approve = True
    result = await registry.execute(run("touch x y"), ctx)
    assert result.error == rule_denial("run_command", "deny_commands `touch x`")
    assert approver.requests == [] and not (workspace / "x").exists()


async def test_allowing_a_tool_for_the_session_never_passes_a_deny_rule(
    registry: ToolRegistry, workspace: Path
) -> None:
    approver = ScriptedApprover(ApprovalDecision.ALLOW_SESSION)
    ctx = ruled(workspace, approver, deny_commands=("touch x",))
    assert not (await registry.execute(run("touch a"), ctx)).is_error
    denied = await registry.execute(run("touch x"), ctx)
    assert denied_by(denied.error) == BY_RULES
    assert len(approver.requests) == 1 and names(workspace) == ["a"]


async def test_tools_rules_make_a_reading_tool_ask_and_a_writing_tool_run(
    registry: ToolRegistry, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("alpha")
    approver = ScriptedApprover(ApprovalDecision.DENY)
    ctx = ruled(workspace, approver, tools={"read_file": "ask", "write_file": "allow"})
    read = await registry.execute(fcall("read_file", {"path": "a.txt"}), ctx)
    assert denied_by(read.error) == BY_YOU
    assert [r.tool_name for r in approver.requests] == ["read_file"]
    wrote = await registry.execute(fcall("write_file", {"path": "b.txt", "content": "b"}), ctx)
    assert not wrote.is_error and (workspace / "b.txt").read_text() == "b"
    assert len(approver.requests) == 1


async def test_the_dialog_is_told_which_rule_did_not_apply(
    registry: ToolRegistry, workspace: Path
) -> None:
    approver = ScriptedApprover(ApprovalDecision.DENY)
    ctx = ruled(workspace, approver, allow_commands=("git status",))
    await registry.execute(run("git status && touch PWNED"), ctx)
    [request] = approver.requests
    assert [u.sentence for u in request.unapplied] == [
        "Your rule allowing `git status` does not apply: the command holds `&`."
    ]


async def test_headless_refuses_what_asks_and_runs_what_the_rules_allow(
    registry: ToolRegistry, workspace: Path
) -> None:
    ctx = ruled(workspace, None, allow_commands=("touch a",))
    assert not (await registry.execute(run("touch a"), ctx)).is_error
    refused = await registry.execute(run("touch b"), ctx)
    assert "needs the user's approval" in (refused.error or "")
    assert names(workspace) == ["a"]


def names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())
