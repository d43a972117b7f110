"""Approval rules in the app: the real app, SDK, fake model and store (issue 24, section 4).

A call the rules deny never opens the dialog and its row reads "denied by
your rules", live and after a restart; a command a rule could have allowed
but for its shell syntax opens the dialog, which says which rule did not
apply and why.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from google import genai
from helpers.ui_kit import asking_to_run, build, plain, send, settle, wait_until
from textual.widgets import Static

from koroku_tui.config.settings import ApprovalSettings
from koroku_tui.fake_gemini import FakeGemini, call_reply, text_reply
from koroku_tui.ui.main.approval import ApprovalScreen
from koroku_tui.ui.main.sidebar import ToolSidebar
from koroku_tui.ui.main.tool_row import DENIED, ToolRow

RULES = ApprovalSettings(allow_commands=["git status", "rm"], deny_commands=["rm -f"])


async def test_a_call_the_rules_deny_reads_denied_by_your_rules_live_and_replayed(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    (tmp_path / "notes").write_text("keep me")
    fake.add(call_reply(("run_command", {"command": "rm -f notes"})), text_reply("Ok."))
    app = build(tmp_path, client, approval=RULES)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await send(pilot, app, "clean up")

        def answered() -> bool:
            asked = isinstance(app.screen, ApprovalScreen)
            return asked or any(row.done for row in app.query(ToolRow))

        await wait_until(pilot, answered, "the call being answered or asked about")
        assert not isinstance(app.screen, ApprovalScreen)
        await settle(pilot, app)
        [row] = app.query(ToolRow)
        line = plain(row)
        assert line.startswith(f"{DENIED} run_command") and line.endswith("— denied by your rules")
        assert row.has_class("-denied") and not row.has_class("-failed")
        [(mark, _name, _args)] = app.query_one(ToolSidebar).rows()
        assert mark == DENIED
    assert (tmp_path / "notes").read_text() == "keep me"

    again = build(tmp_path, client, approval=RULES)
    async with again.run_test(size=(120, 40)) as pilot:
        await settle(pilot, again)
        [row] = again.query(ToolRow)
        assert plain(row) == line


@pytest.mark.parametrize(
    ("command", "said"),
    [
        (
            "git status; touch PWNED",
            "Your rule allowing `git status` does not apply: the command holds `;`.",
        ),
        ("echo hi; touch PWNED", None),  # no rule speaks of it: no such line
    ],
    ids=["a rule that could have allowed it", "no rule"],
)
async def test_the_dialog_says_which_rule_did_not_apply_and_why(
    fake: FakeGemini, client: genai.Client, tmp_path: Path, command: str, said: str | None
) -> None:
    async with asking_to_run(fake, client, tmp_path, command, request="check", approval=RULES) as (
        pilot,
        app,
        dialog,
    ):
        lines = [str(line.render()) for line in dialog.query("#approval-rules").results(Static)]
        assert lines == ([said] if said else [])
        await pilot.press("n")
        await settle(pilot, app)
    assert not (tmp_path / "PWNED").exists()
