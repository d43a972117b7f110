"""Does ``search_history`` find a past fact when asked in other words, and how fast? Prints figures.

Run: ``uv run python bench/recall_bench.py --work DIR`` (the first run writes
101,000 messages and embeds them with both local models: ~30 minutes of one
core for MiniLM; a later run finds them in ``DIR`` and takes a minute or two),
or ``--quick`` for a small smoke run (the numbers mean little). ``--prepare
--work DIR`` only builds and embeds (run it niced, apart from timed work).
No assertions beyond "the run completed".

Recall by meaning as shipped (``recall_hybrid.py``): both question sets, the
paraphrased one and ``recall_meaning_facts.py`` (questions sharing no content
word with their fact), are planted in each history; the real indexers embed
it all (WordLlama, then MiniLM's meaning pass, a copy kept half-way), and
recall@5 is read with words alone, while the meaning pass is half done and
once it is done, through ``search_history`` with the sides the app has then
(int8 rows), beside the latency, the indexing rates (of this run's indexing),
the memory the vectors and the models add and the first frame with recall by
meaning on against off. numpy's BLAS runs one thread, as in the app.

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
import json
import os
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from recall_facts import FACTS
from recall_hybrid import (
    Indexing,
    Stage,
    first_frame_ratios,
    measure_stage,
    models_mb,
    prepare,
    words_alone,
)
from recall_meaning_facts import MEANING_FACTS

from koroku_tui.agent.recall.meaning import MeaningEmbedder
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
QUICK_ROUNDS = 1
"""``--quick``'s: each question is embedded by MiniLM per round (~12 ms here), which
took ~25 s of the smoke test's 50; one round still checks every figure is printed."""


@dataclass(frozen=True)
class Shape:
    """A history to build: ``sessions`` of ``per_session`` messages each."""

    sessions: int
    per_session: int

    @property
    def messages(self) -> int:
        return self.sessions * self.per_session


FULL = (Shape(1_000, 100), Shape(10, 100))
QUICK = (Shape(25, 20), Shape(10, 20))
"""Each session must have room for the facts planted in it (``build`` checks)."""

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
    # A slot for each fact, apart from the first message and the summary: with fewer,
    # the slot search below never ends (Shape(10, 8) hung the quick run).
    most = max(map(len, by_session.values()))
    assert most <= shape.per_session - 2, f"{most} facts in sessions of {shape.per_session}"
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


async def measure(
    path: Path, planted: dict[int, int], rounds: int
) -> tuple[float, list[float], list[str]]:
    """recall@5, every search's seconds over ``rounds``, and the questions that missed."""
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
        for _ in range(rounds):
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


async def history(folder: Path, shape: Shape, seed: int) -> tuple[Path, dict[int, int], float]:
    """The history of ``shape`` in ``folder`` (kept from an earlier run if there), the message
    id of each planted fact, and the seconds its build took (0: kept)."""
    path = folder / f"history-{shape.messages}.db"
    facts = folder / f"planted-{shape.messages}.json"
    if facts.exists():  # written once the build is done
        return path, {int(k): v for k, v in json.loads(facts.read_text()).items()}, 0.0
    for stale in (path, path.with_name(f"{path.stem}-during.db")):
        stale.unlink(missing_ok=True)
    began = time.perf_counter()
    planted = await build(path, shape, seed)
    seconds = time.perf_counter() - began
    facts.write_text(json.dumps(planted))
    return path, planted, seconds


Meaning = tuple[dict[str, float], Indexing, list[Stage]]
"""One history's recall by meaning: words alone, this run's indexing, the stages."""


async def main(quick: bool, work: Path | None) -> None:
    began = time.perf_counter()
    big, small = QUICK if quick else FULL
    rounds = QUICK_ROUNDS if quick else ROUNDS
    print(f"Python {sys.version.split()[0]}, SQLite {sqlite3.sqlite_version}")
    print(
        f"{len(FACTS)} facts, {rounds} rounds of their questions" + (" (--quick)" if quick else "")
    )
    sets = {"paraphrased": FACTS, "no shared word": MEANING_FACTS}
    first = {"paraphrased": 0, "no shared word": len(FACTS)}
    models = models_mb()
    with tempfile.TemporaryDirectory(prefix="koroku-recall-") as folder:
        rows: list[tuple[Shape, float, list[float], list[str], float]] = []
        meaning: list[Meaning] = []
        for number, shape in enumerate((big, small)):
            keep = work if work is not None and number == 0 else Path(folder)
            path, planted, build_s = await history(keep, shape, seed=number + 1)
            recall, latencies, missed = await measure(path, planted, rounds)
            rows.append((shape, recall, latencies, missed, build_s))
            if number == 0:
                hard = await hard_cases(path)
            during = path.with_name(f"{path.stem}-during.db")
            indexing = await prepare(path, during)
            words = await words_alone(path, sets, first, planted)
            stages = [await measure_stage(p, sets, first, planted, rounds) for p in (during, path)]
            meaning.append((words, indexing, stages))
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
    report_meaning(big, small, meaning)
    print(f"the two models add {models:.0f} MB (read once a process, before any search)")
    launches = 1 if quick else 10
    ratios = first_frame_ratios(launches)
    for what, column in (("wall", 0), ("CPU", 1)):
        each = sorted(ratio[column] for ratio in ratios)
        print(
            f"\nfirst frame, recall by meaning local / off ({what}): "
            f"{statistics.median(each):.3f}x median of {launches}, {each[0]:.3f}-{each[-1]:.3f}",
            end="",
        )
    print("\n  (goal within 1.05x)")
    print(f"\nTotal bench time {time.perf_counter() - began:.1f} s")


async def prepare_only(quick: bool, work: Path) -> None:
    """Build the big history in ``work`` and index it with both passes; measure nothing."""
    big, _ = QUICK if quick else FULL
    path, _, build_s = await history(work, big, seed=1)
    indexing = await prepare(path, path.with_name(f"{path.stem}-during.db"))
    print(f"{path}: built in {build_s:.0f} s (0: kept), {indexing}")


STAGES = ("meaning pass under way", "meaning pass done")


def report_meaning(big: Shape, small: Shape, meaning: list[Meaning]) -> None:
    """The recall-by-meaning half of the report (``"local"`` as shipped)."""
    print('\nRecall by meaning as shipped ([recall] embeddings = "local", int8 vectors):')
    print(f"{'messages':>9} | {'searched with':<40} | {'para.':>5} | {'no w.':>5} |", end="")
    print(f" {'p50':>10} | {'p95':>10} | {'vectors':>7}")
    for shape, (words, _, stages) in zip((big, small), meaning, strict=True):
        alone = f"{words['paraphrased']:>5.2f} | {words['no shared word']:>5.2f}"
        print(f"{shape.messages:>9,} | {'words alone':<40} | {alone} |")
        for stage in stages:
            share = f"{stage.meaning_share:.0%}"
            what = (
                f"words + MiniLM ({share}) + WordLlama (rest)"
                if len(stage.sides) > 1
                else f"words + MiniLM x{stage.sides[MeaningEmbedder.name]:g} ({share})"
            )
            shares = f"{stage.recall['paraphrased']:>5.2f} | {stage.recall['no shared word']:>5.2f}"
            lat = stage.latencies
            times = f"{ms(statistics.median(lat))} | {ms(percentile(lat, 0.95))}"
            memory = f"{stage.vectors_mb:>4.0f} MB" if shape is big else ""
            print(f"{shape.messages:>9,} | {what:<40} | {shares} | {times} | {memory}")
    print("  (%: rows with MiniLM's vector; vectors: RSS the first search added, reading them in)")
    for shape, (_, indexing, _) in zip((big, small), meaning, strict=True):
        passes = (("WordLlama", indexing.first), ("MiniLM", indexing.meaning))
        rates = [
            f"{name} {rows / seconds:,.0f} msg/s ({rows:,} rows)" if rows else f"{name} kept"
            for name, (rows, seconds) in passes
        ]
        print(f"indexing at {shape.messages:,}: " + ", ".join(rates))
    _, _, stages = meaning[0]
    for name, stage in zip(STAGES, stages, strict=True):
        para, other = stage.recall["paraphrased"], stage.recall["no shared word"]
        print(f"\nat {big.messages:,}, {name}: recall@5 no shared word {other:.2f} (goal >= 0.85),")
        print(f"  paraphrased {para:.2f} (goal >= 0.95), ", end="")
        print(f"p95 {ms(percentile(stage.latencies, 0.95)).strip()} (goal <= 50 ms),")
        print(f"  memory added by the vectors {stage.vectors_mb:.0f} MB (goal <= 150)")
        for question in stage.missed:
            print(f"  missed: {question}")


if __name__ == "__main__":
    # numpy's BLAS on one thread, as ``cli.main`` sets it for the app (numpy is not loaded yet).
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small smoke run (seconds)")
    parser.add_argument(
        "--work",
        type=Path,
        default=None,
        help="keep the big history and its vectors here; a later run measures them again",
    )
    parser.add_argument(
        "--prepare",
        action="store_true",
        help="with --work: only build and index that history (its long untimed part)",
    )
    args = parser.parse_args()
    if args.work is not None:
        args.work.mkdir(parents=True, exist_ok=True)
    elif args.prepare:
        parser.error("--prepare needs --work")
    run = prepare_only(args.quick, args.work) if args.prepare else main(args.quick, args.work)
    asyncio.run(run)
