"""How the TUI's launch and streaming costs behave. Prints figures and ratios.

Run: ``uv run python bench/tui_bench.py`` (a few minutes; no assertions);
``--launch`` runs section 1b alone, ``--quick`` one round of 1b on 400 events
without warm-up (the smoke test's; its figures mean little). Sections 1 and 2
run headless (``run_test(size=(120, 40))``), real store, real SDK against
FakeGemini.

1. Launch: from creating the app until the first frame that shows the
   session's last stored message (the last AnswerBlock's last piece holds
   its final line, and that line lies inside the transcript); for the empty
   session, the first frame with the transcript laid out. Frames are caught
   where Textual hands them to the driver (``first_frame``). Sessions: empty,
   2 events, 40 events (one page: the same screen as the big one, so only
   the history's length differs) and 10,000 events (user text, model call +
   tool response with FCMetadata, Markdown answer). The agent reads the
   model's context after that first frame (``app.ready`` comes later; a
   message sent meanwhile waits for it). Runs alternate; ratios are medians
   of per-round ratios. Goal: 10,000 vs empty within 1.3x.
1b. The same, as a person launches it: the installed ``koroku-tui`` in a
   pseudo-terminal, from starting the command until its output holds the
   last message (``terminal_launch.py``); empty versus 10,000 events, and
   the floor any Textual app pays: a minimal app showing one Static
   (``floor_app.py``), started the same way. Python's start and the imports
   are in these figures. Goal: 10,000 events <= 1.5x the floor.
2. Streaming: a 2,000-chunk Markdown answer at one chunk per 5 ms. From
   pressing Enter until the first frame showing the answer's last line, against
   the fake's own wall time from first to last chunk. Goal: within 1.2x.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import platform
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from subprocess import PIPE
from typing import Any

import textual
from floor_app import TEXT as FLOOR_TEXT
from google import genai
from rich.console import RenderableType
from terminal_launch import (
    COLUMNS,
    FLOOR,
    FOOTER,
    ROWS,
    Launch,
    koroku,
    launch_in_terminal,
    widgets_floor,
)
from textual.screen import Screen
from textual.widget import Widget

from koroku_tui.agent import AgentConfig
from koroku_tui.agent.wire.client import close_client, make_client
from koroku_tui.cli import freeze_heap
from koroku_tui.config.settings import Settings
from koroku_tui.events import (
    FCMetadata,
    FunctionCallData,
    FunctionCallPart,
    FunctionResponseData,
    FunctionResponsePart,
    SessionEvent,
    TextPart,
    encode_signature,
)
from koroku_tui.fake_gemini import FakeGemini, RecordedRequest, Reply, text_reply
from koroku_tui.fake_gemini.handler import GeminiHandler
from koroku_tui.modes.wiring import assemble
from koroku_tui.store.schema import migrate
from koroku_tui.store.search import searchable_text
from koroku_tui.ui.app import KorokuApp
from koroku_tui.ui.main.answer import AnswerBlock, AnswerPiece
from koroku_tui.ui.main.prompt import Prompt
from koroku_tui.ui.main.transcript import Transcript

BIG = 10_000
QUICK_EVENTS = 400
LAUNCH_ROUNDS = 5
STREAM_RUNS = 3
CHUNKS = 2_000
CHUNK_DELAY = 0.005
SIZE = (120, 40)
_SIGNATURE = encode_signature(bytes(range(64)) * 4)
_ANSWER = (
    "Here is what I found:\n\n- the `{i}` module reads the config\n"
    "- it **fails** on empty input\n\nSo the fix is a guard in `load()`."
)


def make_event(i: int, count: int) -> SessionEvent:
    """Cycle of four: question, tool call, tool response with FCMetadata, Markdown answer."""
    if i == count - 1:  # the last event is an answer whose text marks "on screen"
        return SessionEvent(role="model", parts=[TextPart(text=f"Final answer {i}.")])
    args = {"path": f"src/module_{i // 4}.py"}
    if i % 4 == 0:
        return SessionEvent(role="user", parts=[TextPart(text=f"Question {i}: why does it fail?")])
    if i % 4 == 1:
        call = FunctionCallData(name="read_file", args=args, id=f"c{i}")
        return SessionEvent(
            role="model",
            parts=[
                TextPart(text="Reading the module.", thought=True),
                FunctionCallPart(function_call=call, thought_signature_b64=_SIGNATURE),
            ],
        )
    if i % 4 == 2:
        data = FunctionResponseData(
            name="read_file", response={"output": "x = 1\n" * 30}, id=f"c{i - 1}"
        )
        meta = FCMetadata(name="read_file", args=args)
        return SessionEvent(
            role="user", parts=[FunctionResponsePart(function_response=data, fc_metadata=meta)]
        )
    return SessionEvent(
        role="model", parts=[TextPart(text=_ANSWER.format(i=i), thought_signature_b64=_SIGNATURE)]
    )


def build_home(home: Path, count: int) -> None:
    """A home whose database holds one session of ``count`` events (one transaction)."""
    home.mkdir(parents=True)
    with closing(sqlite3.connect(Settings(home=home).database_path, isolation_level=None)) as conn:
        conn.execute("PRAGMA journal_mode = WAL")
        migrate(conn)
        conn.execute("BEGIN")
        now = time.time() - 100_000
        sid = conn.execute(
            "INSERT INTO sessions(title, created_at, updated_at) VALUES ('bench', ?, ?) "
            "RETURNING id",
            (now, now),
        ).fetchone()[0]
        events = [(n + 1, make_event(n, count)) for n in range(count)]
        conn.executemany(
            "INSERT INTO messages(id, session_id, kind, event_json, created_at) "
            "VALUES (?, ?, ?, ?, ?)",
            [(n, sid, e.event_type, e.model_dump_json(), now + n) for n, e in events],
        )
        conn.executemany(
            "INSERT INTO messages_fts(rowid, text, role) VALUES (?, ?, ?)",
            [(n, searchable_text(e), e.role) for n, e in events],
        )
        conn.execute(
            "UPDATE sessions SET message_count = ?, updated_at = ? WHERE id = ?",
            (count, now + count, sid),
        )
        conn.execute("COMMIT")


def build_app(home: Path, client: genai.Client) -> KorokuApp:
    settings = Settings(home=home)
    config = AgentConfig(memory_dir=settings.memory_dir, context_window=1_000_000)
    return KorokuApp(assemble(settings, workspace=home, client=client, agent_config=config))


def plain(widget: Widget) -> str:
    rendered = widget.render()
    text = getattr(rendered, "plain", None)
    return text if isinstance(text, str) else ""


def shows_last_line(app: KorokuApp, final_line: str) -> bool:
    """The last AnswerBlock's last Markdown block holds ``final_line`` and is on screen."""
    transcript = app.query_one(Transcript)
    if not transcript.children or not isinstance(transcript.children[-1], AnswerBlock):
        return False
    answer = transcript.children[-1]
    if not answer.children:
        return False
    last = answer.children[-1]  # a finished piece, or the live Markdown still streaming
    if isinstance(last, AnswerPiece):
        shown = final_line in last.source
    else:
        shown = bool(last.children) and final_line in plain(last.children[-1])
    region = last.region  # its bottom line (the final line) must lie inside the transcript
    bottom = (region.x, region.bottom - 1)
    return shown and region.height > 0 and transcript.region.contains(*bottom)


def first_frame(app: KorokuApp, check: Callable[[], bool]) -> asyncio.Future[float]:
    """Resolves with the time of the first frame drawn while ``check()`` holds.

    Textual hands every finished frame to ``App._display`` (headless, it then
    drops it); checking there times the frame itself, where polling would
    time whenever the busy loop next let the poller run.
    """
    shown: asyncio.Future[float] = asyncio.get_running_loop().create_future()
    display = app._display

    def display_and_check(screen: Screen[Any], renderable: RenderableType | None) -> None:
        display(screen, renderable)
        if renderable is not None and not shown.done() and check():
            shown.set_result(time.monotonic())

    app._display = display_and_check  # type: ignore[method-assign]
    return shown


async def launch_once(home: Path, client: genai.Client, final_line: str | None) -> float:
    """Seconds from creating the app until its last message (or empty transcript) is shown."""
    gc.unfreeze()  # drop earlier runs' apps (frozen by their agent load), untimed
    gc.collect()
    freeze_heap()  # as the CLI does before it starts the app
    started = time.monotonic()
    app = build_app(home, client)

    def done() -> bool:
        if final_line is None:
            return app.query_one(Transcript).region.height > 0
        return shows_last_line(app, final_line)

    shown = first_frame(app, done)
    async with app.run_test(size=SIZE):
        return await shown - started


def serve() -> None:
    """``--serve``: FakeGemini in its own process (in-process, the GIL slows its chunk clock).

    Every generate request gets the long answer; after each streamed reply one
    line ``<chunks> <first> <last>`` (``time.monotonic``, system-wide) is printed.
    """
    text, _ = long_answer(CHUNKS)
    times: list[float] = []
    write, serve_reply = GeminiHandler._write_chunk, GeminiHandler._serve_reply

    # Named as the methods they replace name theirs (self), so the types match.
    def timed_write(self: GeminiHandler, data: bytes) -> None:
        write(self, data)
        if data.startswith(b"data: "):
            times.append(time.monotonic())

    def reported_reply(self: GeminiHandler, record: RecordedRequest, reply: Reply) -> None:
        times.clear()
        serve_reply(self, record, reply)
        print(len(times), times[0], times[-1], flush=True)

    GeminiHandler._write_chunk = timed_write  # type: ignore[method-assign]
    GeminiHandler._serve_reply = reported_reply  # type: ignore[method-assign]
    reply = text_reply(text, pieces=CHUNKS, chunk_delay=CHUNK_DELAY)
    with FakeGemini(on_empty=reply) as fake:
        print(fake.base_url, flush=True)
        sys.stdin.read()  # until the bench closes our stdin


def long_answer(chunks: int) -> tuple[str, str]:
    """A Markdown answer of ~14 characters per chunk, and its unique last line."""
    sections: list[str] = []
    n = 0
    while sum(map(len, sections)) < chunks * 14:
        sections.append(
            f"## Step {n}\n\nThe build of part {n} reads `config_{n}.toml` and **fails** when it "
            f"is empty.\n\n- check the input\n- add a guard\n\n```python\nif not data_{n}:\n"
            f"    return None\n```\n\n"
        )
        n += 1
    final = "END OF ANSWER marker."
    return "".join(sections) + final, final


async def stream_once(
    home: Path, client: genai.Client, reports: asyncio.StreamReader
) -> tuple[float, float, float, float]:
    """(total, stream duration, enter->first chunk, last chunk->shown) in seconds."""
    _, final = long_answer(CHUNKS)
    app = build_app(home, client)
    freeze_heap()
    async with app.run_test(size=SIZE) as pilot:
        await app.ready.wait()
        await pilot.pause()
        app.query_one(Prompt).text = "Explain the build, step by step."
        app.query_one(Prompt).focus()
        shown = first_frame(app, lambda: shows_last_line(app, final))
        started = time.monotonic()
        await pilot.press("enter")
        finished = await shown
        count, first, last = (await reports.readline()).split()
        assert int(count) == CHUNKS, count
        await app.workers.wait_for_complete()
    first_at, last_at = float(first), float(last)
    return finished - started, last_at - first_at, first_at - started, finished - last_at


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:8.1f} ms"


def build_homes(root: Path, big: int) -> dict[str, tuple[Path, str | None]]:
    """The sessions launched: name -> (home, its last message's text, or None when empty)."""
    homes = {"empty": (root / "empty", None), "2 events": (root / "two", "Final answer 1.")}
    homes["40 events"] = (root / "forty", "Final answer 39.")  # one full page: same DOM as big
    homes[f"{big:,} events"] = (root / "big", f"Final answer {big - 1}.")
    for (home, _), count in zip(homes.values(), (0, 2, 40, big), strict=True):
        build_home(home, count)
    return homes


def launch_in_a_terminal(
    homes: dict[str, tuple[Path, str | None]], rounds: int, warm_up: bool = True
) -> dict[str, list[Launch]]:
    """Section 1b: the floor app, then Koroku on the empty and the biggest session, alternating.

    Returns each launch by name (``"floor"``, ``"empty"``, the biggest
    session's name); prints the medians, minima and maxima of their wall
    time, and the median of their CPU time.
    """
    big = list(homes)[-1]
    commands = {
        "floor": (FLOOR, (FLOOR_TEXT,)),
        "widgets floor": (widgets_floor(homes[big][0]), (homes[big][1] or "", FOOTER)),
        "empty": (koroku(homes["empty"][0]), ("Koroku", FOOTER)),
        big: (koroku(homes[big][0]), (homes[big][1] or "", FOOTER)),
    }
    print(
        f"\n1b. Launched in a {COLUMNS}x{ROWS} pseudo-terminal, from the command to the frame "
        f"that shows the newest message; floor = a minimal Textual app showing one Static; "
        f"widgets floor = the widgets of Koroku's first frame on the big session's newest "
        f"page, with none of Koroku's code (widgets_floor_app.py); "
        f"{rounds} alternating rounds" + (" after one untimed" if warm_up else "")
    )
    for argv, texts in commands.values() if warm_up else ():  # fills caches, writes .pyc
        launch_in_terminal(argv, *texts)
    launches: dict[str, list[Launch]] = {name: [] for name in commands}
    for _ in range(rounds):
        for name, (argv, texts) in commands.items():
            launches[name].append(launch_in_terminal(argv, *texts))
    header = ("wall median", "min", "max", "CPU median")
    print(f"{'command':>20} | " + " | ".join(f"{h:>11}" for h in header))
    for name, runs in launches.items():
        wall = [run.wall for run in runs]
        figures = (statistics.median(wall), min(wall), max(wall), median_cpu(runs))
        label = name if "floor" in name else f"koroku {name}"
        print(f"{label:>20} | " + " | ".join(f"{ms(f):>11}" for f in figures))
    return launches


def median_cpu(runs: list[Launch]) -> float:
    return statistics.median(run.cpu for run in runs)


def print_terminal_ratios(launches: dict[str, list[Launch]], big: str) -> None:
    """Koroku's launch against the floor and against its own empty session."""
    for over, goal in (("floor", "1.5x"), ("widgets floor", ""), ("empty", "1.3x")):
        pairs = zip(launches[big], launches[over], strict=True)
        per_round = statistics.median(b.wall / o.wall for b, o in pairs)
        wall = statistics.median(r.wall for r in launches[big]) / statistics.median(
            r.wall for r in launches[over]
        )
        cpu = median_cpu(launches[big]) / median_cpu(launches[over])
        print(
            f"  the command in a terminal, koroku {big} vs {over}: wall {wall:.2f}x "
            f"(median of per-round ratios {per_round:.2f}x), CPU {cpu:.2f}x; "
            + (f"goal <= {goal}" if goal else "no goal (for reference)")
        )
    widgets, floor = median_cpu(launches["widgets floor"]), median_cpu(launches["floor"])
    print(
        f"  the widgets floor vs the floor: CPU {widgets / floor:.2f}x (what Koroku's widget "
        f"kinds cost with no Koroku code)"
    )


async def run_benches(
    root: Path, client: genai.Client, reports: asyncio.StreamReader, rounds: int
) -> None:
    homes = build_homes(root, BIG)
    big = f"{BIG:,} events"
    print(f"\n1. Launch until the last message is on screen, {rounds} alternating rounds")
    for home, final in homes.values():  # untimed warm-up (imports, CSS, page cache)
        await launch_once(home, client, final)
    times: dict[str, list[float]] = {name: [] for name in homes}
    for _ in range(rounds):
        for name, (home, final) in homes.items():
            times[name].append(await launch_once(home, client, final))
    print(f"{'session':>14} | {'median':>11} | {'min':>11} | {'max':>11}")
    for name, values in times.items():
        low, mid, high = ms(min(values)), ms(statistics.median(values)), ms(max(values))
        print(f"{name:>14} | {mid:>11} | {low:>11} | {high:>11}")

    command = launch_in_a_terminal(homes, rounds)

    print(f"\n2. Streaming {CHUNKS:,} chunks, one per {CHUNK_DELAY * 1e3:.0f} ms, empty session")
    header = ("enter->shown", "stream", "enter->1st", "last->shown")
    print(f"{'run':>4} | " + " | ".join(f"{h:>12}" for h in header) + " | ratio")
    ratios: list[float] = []
    for run in range(1, STREAM_RUNS + 1):
        home = root / f"stream-{run}"  # a fresh empty session each run
        home.mkdir()
        figures = await stream_once(home, client, reports)
        ratios.append(figures[0] / figures[1])
        print(
            f"{run:>4} | " + " | ".join(f"{ms(f):>12}" for f in figures) + f" | {ratios[-1]:.3f}x"
        )

    def launch_ratio(over: str) -> float:
        return statistics.median(b / o for b, o in zip(times[big], times[over], strict=True))

    print("\nRatios (medians of per-round ratios)")
    print(f"  launch, {big} vs empty:    {launch_ratio('empty'):.2f}x  (goal <= 1.3x)")
    print(f"  launch, {big} vs 2 events: {launch_ratio('2 events'):.2f}x")
    print(f"  launch, {big} vs 40 events (same mounted tail): {launch_ratio('40 events'):.2f}x")
    print_terminal_ratios(command, big)
    runs = ", ".join(f"{r:.3f}x" for r in ratios)
    print(f"  streaming, enter->shown / stream: median {statistics.median(ratios):.3f}x ({runs})")
    print(f"    goal <= 1.2x; nominal stream {CHUNKS} x {CHUNK_DELAY * 1e3:.0f} ms")


def load() -> str:
    """The machine's load averages (1, 5, 15 min): the figures mean little on a busy one."""
    return ", ".join(f"{value:.1f}" for value in os.getloadavg())


async def main(rounds: int) -> None:
    print(f"Load average {load()} on {os.cpu_count()} cores")
    server = await asyncio.create_subprocess_exec(
        sys.executable, __file__, "--serve", stdin=PIPE, stdout=PIPE
    )
    assert server.stdin is not None and server.stdout is not None
    base_url = (await server.stdout.readline()).decode().strip()
    client = make_client(base_url=base_url, api_key="test-key")
    try:
        with tempfile.TemporaryDirectory(prefix="koroku-tui-bench-") as folder:
            await run_benches(Path(folder), client, server.stdout, rounds)
    finally:
        await close_client(client)
        server.stdin.close()
        await server.wait()


def launch_only(events: int, rounds: int, warm_up: bool = True) -> None:
    """Section 1b alone: the floor, and Koroku on an empty and an ``events`` session."""
    with tempfile.TemporaryDirectory(prefix="koroku-tui-bench-") as folder:
        homes = build_homes(Path(folder), events)
        seconds = launch_in_a_terminal(homes, rounds, warm_up)
    print_terminal_ratios(seconds, list(homes)[-1])


if __name__ == "__main__":
    if sys.argv[1:] == ["--serve"]:
        serve()
        sys.exit()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--launch", action="store_true", help="section 1b only")
    which.add_argument("--quick", action="store_true", help=f"1b, one round, {QUICK_EVENTS} events")
    parser.add_argument("--rounds", type=int, default=LAUNCH_ROUNDS, help="launch rounds")
    args = parser.parse_args()
    began = time.monotonic()
    print(
        f"Python {sys.version.split()[0]}, Textual {textual.__version__}, "
        f"{os.cpu_count()} cores, {platform.platform()}"
    )
    if args.quick:
        launch_only(QUICK_EVENTS, 1, warm_up=False)
    elif args.launch:
        launch_only(BIG, args.rounds)
    else:
        asyncio.run(main(args.rounds))
    print(f"\nLoad average at the end {load()}; total bench time {time.monotonic() - began:.1f} s")
