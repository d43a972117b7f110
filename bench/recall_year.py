"""How long ``koroku-tui --print`` takes to answer by recall from a history it never indexed.

Run: ``uv run python bench/recall_year.py`` (5,000 and 15,000 messages, a
year of history and three; a few minutes), or give the sizes
(``recall_year.py 5000``); ``--asks N``: questions asked after the first.

For each size, ``recall_bench``'s history (its filler, both question sets
planted) is built in a fresh home with no vectors, as the first start after
the upgrade finds it. The installed command then answers
``koroku-tui --new --print QUESTION`` against the local fake Gemini, whose
model asks ``search_history`` (5 hits) for a question sharing no word with its
fact, then answers. The first run's wall time is WordLlama's pass, MiniLM's
meaning pass in ``--print``'s two threads (``PRINT_WAIT`` at most), the
search and the answer; the next ``--asks`` runs, on the indexed history, are
what a later question costs. Printed: the times, whether each fact reached
the model among the hits, and what the runs said on stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from recall_bench import PLANTED, Shape, build
from recall_facts import FACTS
from terminal_launch import COMMAND

from koroku_tui.fake_gemini import FakeGemini, call_reply, text_reply

KEY = "AIzaSy" + "k" * 33
"""A key shaped like a real one (a short one is refused before any request)."""
ANSWER = "Found it."


def environment(fake: FakeGemini, home: Path, config: Path) -> dict[str, str]:
    """This process's variables, aimed at ``fake`` (none of the user's Gemini or Koroku ones)."""
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("GOOGLE_", "GEMINI_", "KOROKU_"))
    }
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # a person's Python reads its cached bytecode
    return env | {
        "GOOGLE_GEMINI_BASE_URL": fake.base_url,
        "GEMINI_API_KEY": KEY,
        "KOROKU_HOME": str(home),
        "XDG_CONFIG_HOME": str(config),
    }


def ask(fake: FakeGemini, env: dict[str, str], question: str) -> tuple[float, str, str]:
    """One ``--print`` run whose model searches for ``question``: seconds, what the search
    answered the model, stderr."""
    fake.add(call_reply(("search_history", {"query": question, "limit": 5})), text_reply(ANSWER))
    began = time.perf_counter()
    done = subprocess.run(
        [COMMAND, "--new", "--print", question], env=env, capture_output=True, text=True
    )
    seconds = time.perf_counter() - began
    if done.returncode != 0 or done.stdout.strip() != ANSWER:
        raise RuntimeError(f"--print failed ({done.returncode}): {done.stderr}")
    contents = fake.generate_requests[-1].contents
    outputs = [
        str(part["functionResponse"]["response"])
        for content in contents
        for part in content.get("parts", [])
        if "functionResponse" in part
    ]
    return seconds, outputs[-1], done.stderr.strip()


def one_size(messages: int, asks: int, fresh: bool = False) -> None:
    """Build a fresh home of ``messages`` and time ``1 + asks`` questions in it."""
    with tempfile.TemporaryDirectory(prefix="koroku-recall-year-") as folder:
        home, config = Path(folder) / "home", Path(folder) / "config"
        home.mkdir()
        config.mkdir()
        never_indexed = Path(folder) / "never-indexed.db"
        planted = asyncio.run(build(never_indexed, Shape(messages // 100, 100), seed=7))
        shutil.copy(never_indexed, home / "koroku.db")
        questions = [(fact, PLANTED[fact][2]) for fact in range(len(FACTS), len(PLANTED))]
        with FakeGemini(api_key=KEY) as fake:
            env = environment(fake, home, config)
            times: list[float] = []
            found = 0
            for number, (fact, question) in enumerate(questions[: 1 + asks]):
                if fresh and number:
                    for old in home.glob("koroku.db*"):
                        old.unlink()
                    shutil.copy(never_indexed, home / "koroku.db")
                seconds, output, said = ask(fake, env, question)
                hit = f"message {planted[fact]} " in output
                found += hit
                if number == 0:
                    print(f"{messages:,} messages, first run (nothing indexed): {seconds:.1f} s,")
                    print(f"  fact among the 5 hits: {'yes' if hit else 'no'}; stderr: {said!r}")
                else:
                    times.append(seconds)
        if times:
            where = "each on a never-indexed copy" if fresh else "on the indexed history"
            print(
                f"  then {len(times)} more questions {where}: median "
                f"{statistics.median(times):.1f} s, longest {max(times):.1f} s; "
                f"{found} of {len(times) + 1} facts among the 5 hits"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", type=int, nargs="*", default=[5_000, 15_000])
    parser.add_argument("--asks", type=int, default=5, help="questions after the first")
    parser.add_argument("--fresh", action="store_true", help="every question a first run")
    args = parser.parse_args()
    print(f"Python {sys.version.split()[0]}, {COMMAND}")
    for messages in args.sizes:
        one_size(messages, args.asks, args.fresh)


if __name__ == "__main__":
    main()
