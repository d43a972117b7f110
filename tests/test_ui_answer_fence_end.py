"""A long code block's end shows at once; it is highlighted whole afterwards, in a thread.

While it grows, a long code block is highlighted a stretch at a time
(``ui.main.answer_fence``). Once finished it was highlighted whole before
anything more showed: 475 KB of code took seconds, the answer's last words
(and an Escape's "Interrupted" line) waiting for it. It is now shown from
its stretches at once, then drawn whole in a thread and swapped in, with
the same lines.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from google import genai
from helpers.ui_kit import build, settle
from rich.markdown import Markdown
from test_ui_answer_burst import grow_code_block, rich_lines, transcript_text

from koroku_tui.agent.wire import body
from koroku_tui.ui import agent_loading
from koroku_tui.ui.main import answer, answer_cuts
from koroku_tui.ui.main.answer import AnswerBlock, AnswerPiece
from koroku_tui.ui.main.answer_cuts import markdown
from koroku_tui.ui.main.transcript import Transcript


async def test_the_end_of_a_long_code_block_shows_before_it_is_highlighted_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(answer, "REDRAW_EVERY", 0.0)  # a redraw for each part written
    started, release = threading.Event(), threading.Event()

    def held(text: str, *args: Any) -> Markdown:
        started.set()
        release.wait(30)
        return markdown(text, *args)

    app = build(tmp_path, None)
    async with app.run_test(size=(120, 40)) as pilot:
        code = await grow_code_block(pilot, app)
        transcript = app.query_one(Transcript)
        monkeypatch.setattr(answer, "markdown", held)
        await transcript.add_text("```\n\nLast words of the answer.")
        await transcript.end_step()
        try:
            assert await asyncio.to_thread(started.wait, 10)  # drawn whole in a thread
            await pilot.pause()
            assert "Last words of the answer." in "\n".join(transcript_text(app))
            block = app.query(AnswerBlock).last()
            (fence,) = [piece for piece in block.query_children(AnswerPiece) if piece.provisional]
            assert code[:500] in fence.source
            rows = fence.size.height
        finally:
            release.set()
        await settle(pilot, app)
        assert not fence.provisional
        # Swapped in with the same lines: nothing moved.
        assert fence.size.height == rows
        drawn = [fence.render_line(y).text.rstrip() for y in range(rows)]
        assert drawn == rich_lines(fence.source, fence.size.width)


async def test_the_first_answer_s_first_uses_are_made_while_the_agent_loads(
    client: genai.Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first code block's lexer and the SDK's first validators are built off the loop.

    Built at the first answer, they held its first frames and the first
    request on the event loop (~0.1-0.3 s each here), keys waiting.
    """
    threads: list[tuple[str, bool]] = []

    def recorded(name: str, first_use: Callable[[], None]) -> Callable[[], None]:
        def warm() -> None:
            threads.append((name, threading.current_thread() is threading.main_thread()))
            first_use()

        return warm

    monkeypatch.setattr(agent_loading, "warm_up", recorded("answer", answer_cuts.warm_up))
    monkeypatch.setattr(body, "warm_up", recorded("wire", body.warm_up))
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        assert app.agent is not None
    assert sorted(threads) == [("answer", False), ("wire", False)]
