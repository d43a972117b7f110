"""The bridge from the agent's hooks to the main screen's messages: one table, every hook."""

from __future__ import annotations

from koroku_tui.agent.hooks import HOOK_NAMES
from koroku_tui.ui.main.bridge import HOOK_MESSAGES, NOT_SHOWN
from koroku_tui.ui.main.messages import AgentMessage
from koroku_tui.ui.main.screen import MainScreen


def test_every_hook_is_bridged_or_deliberately_not() -> None:
    assert set(HOOK_MESSAGES) | set(NOT_SHOWN) == HOOK_NAMES
    assert not set(HOOK_MESSAGES) & set(NOT_SHOWN)
    assert all(reason.strip() for reason in NOT_SHOWN.values())


def test_every_bridged_message_is_handled_by_the_main_screen() -> None:
    for hook, message in HOOK_MESSAGES.items():
        assert isinstance(message, type) and issubclass(message, AgentMessage), hook
        assert callable(getattr(MainScreen, message.handler_name, None)), hook
    assert len(set(HOOK_MESSAGES.values())) == len(HOOK_MESSAGES)  # one message per hook
