"""Daily memory files: one ``[HH:MM]: summary`` line per compaction."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from koroku_tui.store.memory_files import append_summary, list_days


def test_summaries_append_one_line_each_to_the_days_file(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    first = append_summary(memory, "Fixed the build.", datetime(2026, 12, 2, 9, 5))
    append_summary(memory, "Para one.\n\nPara two.", datetime(2026, 12, 2, 17, 30))
    assert first == memory / "02-12-2026.md"
    assert first.read_text(encoding="utf-8").splitlines() == [
        "[09:05]: Fixed the build.",
        "[17:30]: Para one. Para two.",
    ]


def test_days_are_listed_newest_first_and_stray_files_ignored(tmp_path: Path) -> None:
    append_summary(tmp_path, "a", datetime(2026, 1, 31, 8, 0))
    append_summary(tmp_path, "b", datetime(2026, 12, 1, 8, 0))
    (tmp_path / "README.md").write_text("notes")
    (tmp_path / "31-02-2026.md").write_text("impossible day")
    assert list_days(tmp_path) == [datetime(2026, 12, 1), datetime(2026, 1, 31)]
    assert list_days(tmp_path / "missing") == []
