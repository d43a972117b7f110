"""Does ``search_history`` find a past fact when asked in other words, and how fast? Prints figures.

Run: ``uv run python bench/recall_bench.py`` (a few minutes: it writes 101,000
messages), or ``--quick`` for a small smoke run (seconds; the numbers mean
little). No assertions beyond "the run completed".

Recall by meaning (``recall_hybrid.py``): both question sets, the paraphrased
one and ``recall_meaning_facts.py`` (questions sharing no content word with
their fact), are planted in each history; the local model embeds it all, and
recall@5 is read with words alone and with words and meaning fused, beside
the fused search's latency, the indexing rate, the memory the vectors add and
the first frame with recall by meaning on against off.

1. A synthetic history written through the real ``SessionManager``
   (``add_messages``, one transaction per session): 1,000 sessions of 100
   messages, with user questions, model answers, tool calls and their
   results, and a compaction summary in each session, over two years of
   timestamps. Filler text shares the facts' everyday words (backup,
   certificate, deploy, test...), so a fact must win on relevance.
2. 50 facts (``recall_facts.py``) planted in 50 different sessions, in
   user text, model text, a call's arguments, a tool result or a summary,
   each with a question in other words. recall@5: the share of questions
   whose fact is among the first 5 hits. Goal >= 0.9.
3. Latency of ``search_history`` over those 50 questions (several rounds)
   at 100,000 messages, next to the same questions over 1,000 messages
   (10 sessions, the same facts planted). Goal p95 <= 50 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recall_facts import FACTS
from recall_hybrid import Meaning, first_frame_ratio, fusions, measure_meaning
from recall_meaning_facts import MEANING_FACTS

from koroku_tui.events import (
    CompactionEvent,
    Event,
    FCMetadata,
    FunctionCallData,
    FunctionCallPart,
    FunctionResponseData,
    FunctionResponsePart,
    SessionEvent,
    TextPart,
)
from koroku_tui.store import SessionManager

DAY = 86_400.0
SPAN_DAYS = 730
ROUNDS = 5


@dataclass(frozen=True)
class Shape:
    """A history to build: ``sessions`` of ``per_session`` messages each."""

    sessions: int
    per_session: int

    @property
    def messages(self) -> int:
        return self.sessions * self.per_session


FULL = (Shape(1_000, 100), Shape(10, 100))
QUICK = (Shape(50, 20), Shape(10, 20))

# Everyday words of a developer's and a household's conversations: the
# facts' vocabulary appears in filler too, as it would in a real history.
_WORD_TEXT = """
the a to of and in is it for that on with this we you be as are at can will not
backup server test deploy script config file error log build run update check
database query index cache memory disk network certificate key password user
session message model tool result summary function call output input command
python rust docker kubernetes git branch commit merge release version package
install upgrade migrate schema table column row field value type string number
date time week month year morning night today tomorrow plan meeting office
home garden kitchen car trip flight hotel recipe doctor appointment invoice
price cost budget report review issue bug fix patch feature request retry
timeout latency throughput performance profile benchmark compaction context
window token prompt answer question idea note list task todo project wiki docs
"""
_WORDS = _WORD_TEXT.split()
_TOOLS = ("read_file", "run_command", "write_file", "list_dir", "search_files")


def filler(rng: random.Random, words: int) -> str:
    # Zipf-like: the first words of the list are the commonest.
    picks = [_WORDS[min(int(rng.paretovariate(1.1)) - 1, len(_WORDS) - 1)] for _ in range(words)]
    rng.shuffle(picks)
    return " ".join(picks).capitalize() + "."


def text_event(role: str, text: str) -> SessionEvent:
    return SessionEvent(role=role, parts=[TextPart(text=text)])


def call_event(name: str, args: dict[str, object]) -> SessionEvent:
    part = FunctionCallPart(function_call=FunctionCallData(name=name, args=args))
    return SessionEvent(role="model", parts=[part])


def result_event(name: str, output: str) -> SessionEvent:
    part = FunctionResponsePart(
        function_response=FunctionResponseData(name=name, response={"output": output}),
        fc_metadata=FCMetadata(name=name, args={}),
    )
    return SessionEvent(role="user", parts=[part])


def session_events(rng: random.Random, count: int) -> list[Event]:
    """A session: question, (call, result)?, answer... and a summary two thirds in."""
    events: list[Event] = []
    while len(events) < count:
        if len(events) == (count * 2) // 3:
            events.append(CompactionEvent.from_summary(filler(rng, 60)))
            continue
        events.append(text_event("user", filler(rng, rng.randint(8, 40))))
        if rng.random() < 0.4:
            tool = rng.choice(_TOOLS)
            events.append(call_event(tool, {"command": filler(rng, 6)}))
            events.append(result_event(tool, filler(rng, rng.randint(20, 300))))
        events.append(text_event("model", filler(rng, rng.randint(20, 120))))
    return events[:count]


def fact_event(where: str, text: str) -> Event:
    if where == "summary":
        return CompactionEvent.from_summary(text)
    if where == "call":
        return call_event("run_command", {"command": text})
    if where == "result":
        return result_event("run_command", text)
    return text_event(where, text)


PLANTED = FACTS + MEANING_FACTS
"""Both sets are planted in every history: fact ``i`` of ``MEANING_FACTS`` is ``len(FACTS) + i``."""


async def build(path: Path, shape: Shape, seed: int) -> dict[int, int]:
    """Write the history; return fact index (in ``PLANTED``) -> the message id holding it."""
    rng = random.Random(seed)
    planted: dict[int, int] = {}
    # Facts go to sessions spread over the whole history (one each when
    # there are enough sessions), at a random place in the session.
    homes = {int(i * shape.sessions / len(PLANTED)) for i in range(len(PLANTED))}
    by_session: dict[int, list[int]] = {}
    for index in range(len(PLANTED)):
        by_session.setdefault(int(index * shape.sessions / len(PLANTED)), []).append(index)
    assert len(homes) == min(shape.sessions, len(PLANTED))
    start = time.time() - SPAN_DAYS * DAY
    step = SPAN_DAYS * DAY / shape.messages
    async with SessionManager(path) as store:
        for number in range(shape.sessions):
            if number:
                await store.new_session()
            events = session_events(rng, shape.per_session)
            slots: dict[int, int] = {}
            for fact in by_session.get(number, []):
                where, text, _ = PLANTED[fact]
                slot = rng.randrange(1, len(events))
                while slot in slots.values() or isinstance(events[slot], CompactionEvent):
                    slot = rng.randrange(1, len(events))
                events[slot] = fact_event(where, text)
                slots[fact] = slot
            first = number * shape.per_session
            times = [start + (first + i) * step for i in range(len(events))]
            ids = await store.add_messages(events, created_at=times)
            for fact, slot in slots.items():
                planted[fact] = ids[slot]
        await store.new_session()  # the current session: nothing of the past in context
    return planted


async def measure(path: Path, planted: dict[int, int]) -> tuple[float, list[float], list[str]]:
    """recall@5, every search's seconds, and the questions that missed."""
    found = 0
    missed: list[str] = []
    latencies: list[float] = []
    async with SessionManager(path) as store:
        for _, _, question in FACTS[:5]:  # warm the page cache
            await store.search_history(question)
        for fact, (_, _, question) in enumerate(FACTS):
            page = await store.search_history(question, limit=5)
            if planted[fact] in [hit.message_id for hit in page.hits]:
                found += 1
            else:
                missed.append(question)
        for _ in range(ROUNDS):
            for _, _, question in FACTS:
                started = time.perf_counter()
                await store.search_history(question)
                latencies.append(time.perf_counter() - started)
    return found / len(FACTS), latencies, missed


#: Queries the 50 questions do not cover: a bare common word, only stop words
#: (searched anyway), and what ctrl+r runs after two typed letters.
HARD_CASES = (
    ("one common word", "history_search", "files"),
    ("only stop words", "history_search", "what did we do"),
    ("ctrl+r after two letters", "screen_search", "co"),
)


async def hard_cases(path: Path) -> list[tuple[str, float]]:
    """Median seconds of each of ``HARD_CASES`` (5 runs each)."""
    medians: list[tuple[str, float]] = []
    async with SessionManager(path) as store:
        for name, kind, query in HARD_CASES:
            runs: list[float] = []
            for _ in range(5):
                started = time.perf_counter()
                if kind == "screen_search":
                    await store.search(query, 100)
                else:
                    await store.search_history(query)
                runs.append(time.perf_counter() - started)
            medians.append((name, statistics.median(runs)))
    return medians


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:7.2f} ms"


async def main(quick: bool) -> None:
    began = time.perf_counter()
    big, small = QUICK if quick else FULL
    print(f"Python {sys.version.split()[0]}, SQLite {sqlite3.sqlite_version}")
    print(
        f"{len(FACTS)} facts, {ROUNDS} rounds of their questions" + (" (--quick)" if quick else "")
    )
    sets = {"paraphrased": FACTS, "no shared word": MEANING_FACTS}
    first = {"paraphrased": 0, "no shared word": len(FACTS)}
    with tempfile.TemporaryDirectory(prefix="koroku-recall-") as folder:
        rows: list[tuple[Shape, float, list[float], list[str], float]] = []
        meaning: list[Meaning] = []
        for number, shape in enumerate((big, small)):
            path = Path(folder) / f"history-{shape.messages}.db"
            built = time.perf_counter()
            planted = await build(path, shape, seed=number + 1)
            build_s = time.perf_counter() - built
            recall, latencies, missed = await measure(path, planted)
            rows.append((shape, recall, latencies, missed, build_s))
            if number == 0:
                hard = await hard_cases(path)
            meaning.append(await measure_meaning(path, sets, first, planted, ROUNDS))
            if number == 0:
                tried = await fusions(path, sets, first, planted)
    print(f"\n{'messages':>9} | {'sessions':>8} | {'build':>7} | {'recall@5':>8} |", end="")
    print(f" {'p50':>10} | {'p95':>10}")
    for shape, recall, latencies, _, build_s in rows:
        print(
            f"{shape.messages:>9,} | {shape.sessions:>8,} | {build_s:6.1f}s | {recall:>8.2f} |"
            f" {ms(statistics.median(latencies)):>10} | {ms(percentile(latencies, 0.95)):>10}"
        )
    (_, recall, big_lat, missed, _), (_, _, small_lat, _, _) = rows
    print(f"\nrecall@5 at {big.messages:,} messages: {recall:.2f}  (goal >= 0.9)")
    for question in missed:
        print(f"  missed: {question}")
    print(f"p95 at {big.messages:,}: {ms(percentile(big_lat, 0.95)).strip()}  (goal <= 50 ms)")
    p50_ratio = statistics.median(big_lat) / statistics.median(small_lat)
    p95_ratio = percentile(big_lat, 0.95) / percentile(small_lat, 0.95)
    print(
        f"ratio {big.messages:,} vs {small.messages:,} messages: "
        f"p50 {p50_ratio:.1f}x, p95 {p95_ratio:.1f}x"
    )
    print(f"\nOther queries at {big.messages:,} messages (median of 5; not in the goal):")
    for name, seconds in hard:
        print(f"  {name:<26} {ms(seconds)}")
    report_meaning(big, small, meaning, tried)
    launches = 3 if quick else 10
    ratio = first_frame_ratio(launches)
    print(f"\nfirst frame, recall by meaning local / off: {ratio:.3f}x  (median of {launches};")
    print("  goal within 1.05x)")
    print(f"\nTotal bench time {time.perf_counter() - began:.1f} s")


def report_meaning(big: Shape, small: Shape, meaning: list[Meaning], tried: list[Any]) -> None:
    """The recall-by-meaning half of the report (local model, words and vectors fused)."""
    print("\nRecall by meaning (local model), recall@5 words alone -> words and meaning fused:")
    print(f"{'messages':>9} | {'paraphrased':>14} | {'no shared word':>14} | {'p50':>10} |", end="")
    print(f" {'p95':>10} | {'indexing':>12}")
    for shape, m in zip((big, small), meaning, strict=True):
        para, other = m.recall["paraphrased"], m.recall["no shared word"]
        print(
            f"{shape.messages:>9,} | {para[0]:.2f} -> {para[1]:.2f}   | {other[0]:.2f} -> "
            f"{other[1]:.2f}   | {ms(statistics.median(m.latencies)):>10} |"
            f" {ms(percentile(m.latencies, 0.95)):>10} | {m.rows / m.index_seconds:>7,.0f} msg/s"
        )
    top = meaning[0]
    fused_para, fused_other = top.recall["paraphrased"][1], top.recall["no shared word"][1]
    print(
        f"\nhybrid recall@5 at {big.messages:,}: no shared word {fused_other:.2f} (goal >= 0.85),"
    )
    print(f"  paraphrased {fused_para:.2f} (goal >= 0.95)")
    for question in top.missed:
        print(f"  missed: {question}")
    p95 = ms(percentile(top.latencies, 0.95)).strip()
    print(f"hybrid p95 at {big.messages:,}: {p95}  (goal <= 50 ms)")
    print(f"indexing: {top.rows / top.index_seconds:,.0f} messages a second (goal >= 2,000)")
    print(f"memory added by the vectors at {big.messages:,}: {top.added_mb:.0f} MB (goal <= 150)")
    print(f"\nFusions tried at {big.messages:,} messages (recall@5 paraphrased, no shared word):")
    for name, shares in tried:
        print(f"  {name:<36} {shares['paraphrased']:.2f}  {shares['no shared word']:.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small smoke run (seconds)")
    asyncio.run(main(parser.parse_args().quick))
