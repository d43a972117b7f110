"""The title line takes a title change while it is being taken down (ctrl+q as the app starts)."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets._header import HeaderTitle

from koroku_tui.ui.title_bar import TitleBar


class TitledApp(App[None]):
    def compose(self) -> ComposeResult:
        yield TitleBar()


async def test_the_title_follows_the_app_and_a_missing_title_is_no_crash() -> None:
    app = TitledApp()
    async with app.run_test() as pilot:
        app.title, app.sub_title = "Koroku", "gemini"
        await pilot.pause()
        title = app.query_one(HeaderTitle)
        assert "Koroku" in str(title.render()) and "gemini" in str(title.render())
        await title.remove()  # as when quitting while the screen mounts
        app.title = "Renamed"
        await pilot.pause()
    assert app.return_code in (None, 0)  # Header raised NoMatches here and exited with 1
