"""The main view pages through the whole session with a bounded number of mounted blocks.

Scrolling up mounts the page above and unmounts pages far below; scrolling
back down mounts them again, up to the live end. Small pages and bound (module
constants, patched) keep these tests quick; the paging is the same at any size.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from google import genai
from helpers.paging_kit import BOUND, PAGE, mounted, turn, use_small_pages
from helpers.ui_kit import build, plain, send, settle, wait_until
from test_store_recall import call
from textual.pilot import Pilot

from koroku_tui.config.settings import Settings
from koroku_tui.events import CompactionEvent, RewindEvent, SessionEvent, TextPart
from koroku_tui.fake_gemini import FakeGemini, Hang, text_reply
from koroku_tui.store import SessionManager
from koroku_tui.ui.app import KorokuApp
from koroku_tui.ui.main.tool_row import INTERRUPTED
from koroku_tui.ui.main.transcript import Transcript, rewind_marker


@pytest.fixture(autouse=True)
def small_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    use_small_pages(monkeypatch)


def said(n: int) -> list[str]:
    return [f"question {n}", f"answer {n}"]


async def seed(tmp_path: Path, turns: range) -> SessionManager:
    """A store holding ``turns`` in one transaction; the caller closes it."""
    store = SessionManager(Settings(home=tmp_path).database_path)
    await store.initialize()
    await store.add_messages([event for n in turns for event in turn(n)])
    return store


async def scroll_through(
    pilot: Pilot[Any], app: KorokuApp, whole: list[str], *, up: bool
) -> list[list[str]]:
    """Scroll to the top (or bottom) of the mounted blocks until no page comes; each window seen.

    Checks on the way: every window is a run of ``whole`` (in order, nothing
    twice, nothing skipped) and never more than the bound.
    """
    transcript = app.query_one(Transcript)
    windows = [mounted(app)]
    for _ in range(4 * len(whole) // PAGE + 4):
        if up:
            transcript.scroll_home(animate=False, immediate=True)  # as a wheel or drag would
        else:
            transcript.scroll_end(animate=False, immediate=True)
        await settle(pilot, app)
        window = mounted(app)
        assert len(app.query_one(Transcript).children) <= BOUND
        start = whole.index(window[0])
        assert window == whole[start : start + len(window)], "a window is not a run of the session"
        if window == windows[-1]:
            return windows
        windows.append(window)
    raise AssertionError("scrolling never reached the end")


def covered(windows: list[list[str]], whole: list[str], *, up: bool) -> None:
    """Each window overlaps the one before (no gap), and together they saw ``whole``."""
    seen = windows[0]
    for window in windows[1:]:
        if up:
            assert seen[0] in window, "a gap between two windows"
            seen = window[: window.index(seen[0])] + seen
        else:
            assert seen[-1] in window, "a gap between two windows"
            seen = seen + window[window.index(seen[-1]) + 1 :]
    assert seen == whole


async def test_scrolling_up_reaches_the_first_message_and_down_comes_back_to_the_last(
    client: genai.Client, tmp_path: Path
) -> None:
    store = await seed(tmp_path, range(150))  # 300 messages: 12 pages
    await store.close()
    whole = [text for n in range(150) for text in said(n)]
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        transcript = app.query_one(Transcript)
        assert mounted(app)[-1] == "answer 149"
        up = await scroll_through(pilot, app, whole, up=True)
        assert up[-1][0] == "question 0"  # the very first message
        covered(up, whole, up=True)  # every message once, in order, on the way up
        down = await scroll_through(pilot, app, whole, up=False)
        assert down[-1][-1] == "answer 149"  # the live end again
        covered(down, whole, up=False)
        assert not transcript.edges.away


async def test_what_is_read_stays_in_place_while_pages_come_and_go(
    client: genai.Client, tmp_path: Path
) -> None:
    store = await seed(tmp_path, range(100))
    await store.close()
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        transcript = app.query_one(Transcript)
        for _ in range(5):  # far enough up that pages below were unmounted
            transcript.scroll_home(animate=False, immediate=True)
            await settle(pilot, app)
        assert "answer 99" not in mounted(app)
        for up in (False, True, False):
            if up:
                transcript.scroll_home(animate=False, immediate=True)
            else:
                transcript.scroll_end(animate=False, immediate=True)
            read = transcript.children[0 if up else -1]  # at the top (bottom) of the view
            text, where = plain(read), read.virtual_region.y - transcript.scroll_y
            await settle(pilot, app)  # a page came above (below), pages far away went
            assert read.is_attached and plain(read) == text
            assert read.virtual_region.y - transcript.scroll_y == where  # did not move


async def test_a_rewound_session_with_a_compaction_pages_along_its_line_both_ways(
    client: genai.Client, tmp_path: Path
) -> None:
    store = await seed(tmp_path, range(30))
    await store.add_message(CompactionEvent.from_summary("what came before"))
    ids = await store.add_messages([event for n in range(30, 60) for event in turn(n)])
    await store.rewind(ids[2 * 15])  # before "question 45": 45..59 abandoned
    await store.add_messages([event for n in range(200, 230) for event in turn(n)])
    await store.close()
    whole = [text for n in range(30) for text in said(n)]
    whole += ["▶ Earlier turns summarised"]
    whole += [text for n in range(30, 45) for text in said(n)]
    whole += [rewind_marker(RewindEvent(before_message_id=ids[30]))]
    whole += [text for n in range(200, 230) for text in said(n)]
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        up = await scroll_through(pilot, app, whole, up=True)
        assert up[-1][0] == "question 0"
        covered(up, whole, up=True)
        down = await scroll_through(pilot, app, whole, up=False)
        assert down[-1][-1] == "answer 229"
        covered(down, whole, up=False)


def killed_in_every_call(n: int) -> list[SessionEvent]:
    """Turn ``n`` of a session whose every call Koroku was killed in: no response stored."""
    step = call("read_file", path=f"f{n}.txt")
    return [
        SessionEvent(role="user", parts=[TextPart(text=f"question {n}")]),
        SessionEvent(role="model", parts=[TextPart(text=f"looking {n}"), *step.parts]),
    ]


CUT = 'read_file {{"path": "f{n}.txt"}} — interrupted: Koroku stopped before it answered'
KILLED_WHOLE = [
    text
    for n in range(100)
    for text in (f"question {n}", f"looking {n}", f"{INTERRUPTED} {CUT.format(n=n)}")
]


@pytest.mark.parametrize("height", [40, 42])  # the first frame ends after a call in one
async def test_a_call_cut_off_where_the_first_frame_ends_is_shown_interrupted(
    client: genai.Client, tmp_path: Path, height: int
) -> None:
    store = await seed(tmp_path, range(0))
    await store.add_messages([e for n in range(100) for e in killed_in_every_call(n)])
    await store.close()
    app = build(tmp_path, client)
    async with app.run_test(size=(120, height)) as pilot:
        await settle(pilot, app)
        shown = mounted(app)  # the page's rows up to the last, every call marked
        assert shown == KILLED_WHOLE[KILLED_WHOLE.index(shown[0]) :]


async def test_a_call_cut_off_at_a_page_boundary_is_shown_interrupted_both_ways(
    client: genai.Client, tmp_path: Path
) -> None:
    """Pages end after a call as often as after a question: each call shows, marked."""
    store = await seed(tmp_path, range(0))
    await store.add_messages([e for n in range(100) for e in killed_in_every_call(n)])
    await store.close()
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        up = await scroll_through(pilot, app, KILLED_WHOLE, up=True)
        assert up[-1][0] == "question 0"
        covered(up, KILLED_WHOLE, up=True)
        down = await scroll_through(pilot, app, KILLED_WHOLE, up=False)
        assert down[-1][-1] == KILLED_WHOLE[-1]
        covered(down, KILLED_WHOLE, up=False)


async def far_back(pilot: Pilot[None], app: KorokuApp) -> Transcript:
    """Scroll to the top six times: pages above load and the newest ones unmount."""
    transcript = app.query_one(Transcript)
    for _ in range(6):
        transcript.scroll_home(animate=False, immediate=True)
        await settle(pilot, app)
    return transcript


async def test_sending_while_far_back_shows_the_answer_at_the_live_end(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    store = await seed(tmp_path, range(80))  # under the 400 events that start a compaction
    await store.close()
    fake.add(text_reply("the fresh answer"))
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        transcript = await far_back(pilot, app)
        assert "answer 79" not in mounted(app)
        await send(pilot, app, "a new question")
        await settle(pilot, app)
        shown = mounted(app)
        assert shown[-4:] == ["question 79", "answer 79", "a new question", "the fresh answer"]
        assert len(shown) <= BOUND and "question 0" not in shown
        answer = transcript.children[-1]
        assert transcript.region.contains_region(answer.region)  # on screen, at the bottom


async def test_a_running_turn_keeps_the_live_end_and_its_turn_pages_like_the_rest(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    store = await seed(tmp_path, range(60))
    await store.close()
    fake.add(Hang(then=text_reply("the late answer")))
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot, app)
        transcript = app.query_one(Transcript)
        await send(pilot, app, "a new question")
        await wait_until(pilot, lambda: bool(fake.requests), "the request reaching Gemini")
        for _ in range(4):  # up while the turn waits: the bound stops it, its blocks stay
            transcript.scroll_home(animate=False, immediate=True)
            await pilot.pause()  # the turn runs on: wait for the page loads only
            pages = [w for w in app.workers if w.group == "pages"]
            if pages:  # (none: ``wait_for_complete`` would wait for the turn too)
                await app.workers.wait_for_complete(pages)
            await pilot.pause()
        assert len(transcript.children) <= BOUND
        assert mounted(app)[-1] == "a new question"
        assert "Older messages load once this turn ends." in [n.message for n in app._notifications]
        fake.release()
        await settle(pilot, app)  # the turn ends; the page that waited loads, pages below go
        whole = [text for n in range(60) for text in said(n)]
        whole += ["a new question", "the late answer"]
        up = await scroll_through(pilot, app, whole, up=True)  # the turn's blocks went...
        assert up[-1][0] == "question 0"
        down = await scroll_through(pilot, app, whole, up=False)  # ...and come back, once
        covered(down, whole, up=False)
        assert down[-1][-3:] == ["answer 59", "a new question", "the late answer"]


async def test_compacting_while_far_back_shows_the_marker_once_at_the_live_end(
    fake: FakeGemini, client: genai.Client, tmp_path: Path
) -> None:
    store = await seed(tmp_path, range(80))
    await store.close()
    fake.add(text_reply("What was said."))
    app = build(tmp_path, client)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await far_back(pilot, app)
        assert "answer 79" not in mounted(app)
        await pilot.press("ctrl+o")
        await settle(pilot, app)
        shown = mounted(app)
        assert shown[-2:] == ["answer 79", "▶ Earlier turns summarised"]
        assert shown.count("▶ Earlier turns summarised") == 1 and fake.pending == 0
