"""The history screen's search finds a Japanese word inside a sentence written without spaces.

The real screen under Pilot on a real SQLite file: the query arrives as an
input method commits it (the whole word at once), and the hit's line shows
the sentence as written with the word highlighted.
"""

from __future__ import annotations

from pathlib import Path

from helpers.events import model, user
from helpers.ui_kit import settle
from rich.text import Text
from test_ui_history import HostApp, history_screen, lines

from koroku_tui.store import SessionManager
from koroku_tui.ui.history.lists import SearchResults

FACT = "東京都の天気は晴れ"


async def test_a_word_inside_a_japanese_sentence_is_found_and_highlighted(
    tmp_path: Path,
) -> None:
    async with SessionManager(tmp_path / "koroku.db") as manager:
        fact = await manager.add_message(user(FACT))
        await manager.add_message(model("傘はいりません"))
        await manager.new_session()
        await manager.add_message(user("京都の紅葉"))
        app = HostApp(manager, manager.session_id)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            screen = history_screen(app)
            screen.search_box.focus()
            screen.search_box.value = "天気"  # committed by the input method
            await settle(pilot)
            results = screen.query_one(SearchResults)
            assert [hit.message_id for hit in results.hits] == [fact]
            assert lines(screen.query_one("#history-status"))[0] == "1 match"
            prompt = results.get_option_at_index(0).prompt
            assert isinstance(prompt, Text) and FACT in prompt.plain
            assert any(
                prompt.plain[span.start : span.end] == "天気" and "reverse" in str(span.style)
                for span in prompt.spans
            )
