"""The history screen: every session, searchable, with its summaries, raw history and trash.

Push ``HistoryScreen(session_manager, current_session_id)``; it is dismissed
with ``OpenSession(session_id)`` when the user opens a session (``None`` when
closed) and posts ``SessionRenamed`` / ``SessionDeleted``, which bubble to the
App, while it is open.

The names below are imported on first use: the main screen names
``OpenSession`` before the first frame, which must not wait for the history
screen's modules (ctrl+r imports them when it is first pressed).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from koroku_tui.agent.lazy_exports import lazy_getattr

if TYPE_CHECKING:  # for type checkers; at run time __getattr__ imports them
    from koroku_tui.ui.history.dialogs import ConfirmDialog, RenameDialog, TextReader
    from koroku_tui.ui.history.messages import OpenSession, SessionDeleted, SessionRenamed
    from koroku_tui.ui.history.screen import HistoryScreen

__all__ = [
    "ConfirmDialog",
    "HistoryScreen",
    "OpenSession",
    "RenameDialog",
    "SessionDeleted",
    "SessionRenamed",
    "TextReader",
]

__getattr__ = lazy_getattr(
    __name__,
    {
        "ConfirmDialog": "dialogs",
        "RenameDialog": "dialogs",
        "TextReader": "dialogs",
        "OpenSession": "messages",
        "SessionDeleted": "messages",
        "SessionRenamed": "messages",
        "HistoryScreen": "screen",
    },
    globals(),
)
