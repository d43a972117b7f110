"""Koroku's store: sessions and their events in one crash-safe SQLite file.

``SessionManager`` is the only way in; nothing outside this package runs SQL.
It hands out events (``koroku_tui.events``) and the plain records below. The
schema and its migrations are documented in ``koroku_tui.store.schema``.
Never imports Textual or Rich.
"""

from koroku_tui.store.check import check_database
from koroku_tui.store.errors import (
    SchemaTooNewError,
    SessionBusyError,
    SessionInTrashError,
    SessionNotFoundError,
    StoreError,
    StoreNotInitializedError,
    StoreOpenError,
    StoreReadError,
    StoreWriteError,
)
from koroku_tui.store.opening import upgrade_pending
from koroku_tui.store.records import (
    MATCH_END,
    MATCH_START,
    SearchHit,
    SearchPage,
    SessionExcerpt,
    SessionInfo,
    StoredMessage,
    SummaryRecord,
    split_snippet,
)
from koroku_tui.store.replay import ReplayedPage, ReplayHandler
from koroku_tui.store.schema import SCHEMA_VERSION, MigrationProgress
from koroku_tui.store.session_manager import DEFAULT_BUSY_TIMEOUT_MS, SessionManager

__all__ = [
    "DEFAULT_BUSY_TIMEOUT_MS",
    "MATCH_END",
    "MATCH_START",
    "SCHEMA_VERSION",
    "MigrationProgress",
    "ReplayHandler",
    "ReplayedPage",
    "SchemaTooNewError",
    "SearchHit",
    "SearchPage",
    "SessionBusyError",
    "SessionExcerpt",
    "SessionInTrashError",
    "SessionInfo",
    "SessionManager",
    "SessionNotFoundError",
    "StoreError",
    "StoreNotInitializedError",
    "StoreOpenError",
    "StoreReadError",
    "StoreWriteError",
    "StoredMessage",
    "SummaryRecord",
    "check_database",
    "split_snippet",
    "upgrade_pending",
]
