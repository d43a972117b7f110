"""The history screen: every session, searchable, with its summaries and raw history.

Push ``HistoryScreen(session_manager, current_session_id)``; it is dismissed
with ``OpenSession(session_id)`` when the user opens a session (``None`` when
closed) and posts ``SessionRenamed`` / ``SessionDeleted``, which bubble to the
App, while it is open.
"""

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
