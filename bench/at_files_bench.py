"""The ``@`` picker's index on a 100,000-file workspace: listing, first results, queries.

Run: ``uv run python bench/at_files_bench.py [--files 100000]``. Builds a tree
of empty files (a ``.gitignore`` at the top and in some folders, an ignored
``node_modules`` with as many files again) in a temporary folder, then
prints: the whole listing's time, the time until the first batch can be
searched and the first search over it answers (what the user waits for
after typing ``@``), and the p50/p95 of searches over the whole index.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import threading
import time
from pathlib import Path

from koroku_tui.agent.tools.file_index import FileIndex

QUERIES = ["", "p", "pr", "prompt", "mainpy", "ui/m", "src/mod12", "zzz", "readme", "x9y"]


def make_tree(root: Path, files: int) -> None:
    """``files`` listed files in 10 x 10 x N folders, and ignored ones beside them."""
    (root / ".gitignore").write_text("node_modules/\n*.log\n!keep.log\n")
    per = max(1, files // 100)
    for a in range(10):
        for b in range(10):
            folder = root / f"src{a}" / f"mod{b}"
            folder.mkdir(parents=True)
            if b == 0:
                (folder / ".gitignore").write_text("*.tmp\n")
            for n in range(per):
                (folder / f"file_{n}_prompt{n % 7}.py").touch()
    ignored = root / "node_modules"
    for a in range(10):
        (ignored / f"pkg{a}").mkdir(parents=True)
        for n in range(per * 10):
            (ignored / f"pkg{a}" / f"x{n}.js").touch()


def first_results(root: Path) -> float:
    """Seconds from starting the walk to the first answered search."""
    index = FileIndex(root)
    first = threading.Event()
    start = time.perf_counter()
    thread = threading.Thread(target=index.build, kwargs={"on_batch": first.set})
    thread.start()
    first.wait()
    index.search("prompt")
    took = time.perf_counter() - start
    thread.join()
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        make_tree(root, args.files)
        os.sync()
        index = FileIndex(root)
        start = time.perf_counter()
        index.build()
        listing = time.perf_counter() - start
        print(
            f"listed {len(index.paths):,} files in {listing * 1000:.0f} ms (ignored ones skipped)"
        )
        firsts = [first_results(root) for _ in range(5)]
        print(f"first results after '@': median {statistics.median(firsts) * 1000:.0f} ms")
        index.search("warm")
        times = []
        for _ in range(5):
            for query in QUERIES:
                for end in range(len(query) + 1):  # typed one key at a time
                    start = time.perf_counter()
                    index.search(query[:end])
                    times.append(time.perf_counter() - start)
        times.sort()
        p50, p95 = times[len(times) // 2], times[int(len(times) * 0.95)]
        print(f"search over {len(index.paths):,}: p50 {p50 * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms")


if __name__ == "__main__":
    main()
