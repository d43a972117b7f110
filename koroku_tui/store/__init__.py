"""Koroku's store: sessions and their events in one crash-safe SQLite file.

``SessionManager`` is the only way in; nothing outside this package runs SQL.
It hands out events (``koroku_tui.events``) and the plain records below. The
schema and its migrations are documented in ``koroku_tui.store.schema``.
Never imports Textual or Rich.
"""

# The errors, the records and the replay types are re-exported whole (their
# modules' ``__all__``); of the other modules, only the names listed below.
from koroku_tui.store import errors, file_records, records, replay
from koroku_tui.store.check import check_database
from koroku_tui.store.errors import *  # noqa: F403
from koroku_tui.store.file_records import *  # noqa: F403
from koroku_tui.store.manager.core import QueryVectors
from koroku_tui.store.opening import upgrade_pending
from koroku_tui.store.records import *  # noqa: F403
from koroku_tui.store.replay import *  # noqa: F403
from koroku_tui.store.schema import SCHEMA_VERSION, MigrationProgress
from koroku_tui.store.session_manager import DEFAULT_BUSY_TIMEOUT_MS, SessionManager
from koroku_tui.store.usage_stats import ModelUsage, ToolUsage, UsageReport, UsageStats

__all__ = [
    "DEFAULT_BUSY_TIMEOUT_MS",
    "SCHEMA_VERSION",
    "MigrationProgress",
    "ModelUsage",
    "QueryVectors",
    "SessionManager",
    "ToolUsage",
    "UsageReport",
    "UsageStats",
    "check_database",
    "upgrade_pending",
]
__all__ += errors.__all__ + file_records.__all__ + records.__all__ + replay.__all__
