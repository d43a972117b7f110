"""A/B of the launch: this checkout's ``koroku-tui`` against another checkout's, alternating.

Run: ``uv run python bench/ab_launch.py /path/to/other/checkout [--rounds 12]``.
The other checkout needs its own environment (``uv sync`` there). Each
command opens a 10,000-event home its own checkout built (the same rows, in
its own schema version), in a pseudo-terminal, until the
frame that shows the newest message; the floor app runs in each round too.
Launches alternate (A, B, floor, then floor, B, A) so a busy machine and the
order slow all three alike;
the ratios printed are medians of per-round ratios, in wall and CPU time.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from floor_app import TEXT as FLOOR_TEXT
from terminal_launch import COMMAND, FLOOR, FOOTER, Launch, launch_in_terminal
from tui_bench import BIG, build_home


def per_round(a: list[Launch], b: list[Launch], cpu: bool) -> float:
    """The median over rounds of a's time divided by b's."""
    field = 1 if cpu else 0  # Launch is (wall, cpu)
    return statistics.median(x[field] / y[field] for x, y in zip(a, b, strict=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("other", type=Path, help="the other checkout (with its .venv)")
    parser.add_argument("--rounds", type=int, default=12)
    args = parser.parse_args()
    other = args.other.resolve() / ".venv" / "bin" / "koroku-tui"
    if not other.exists():
        sys.exit(f"{other} does not exist: run `uv sync` in {args.other}")
    with tempfile.TemporaryDirectory(prefix="koroku-ab-") as folder:
        home, other_home = Path(folder) / "big", Path(folder) / "other"
        build_home(home, BIG)
        # The other checkout writes its own copy, in its own schema version.
        builder = (
            "import sys, tui_bench; from pathlib import Path; "
            "tui_bench.build_home(Path(sys.argv[1]), int(sys.argv[2]))"
        )
        subprocess.run(
            [str(other.parent / "python"), "-c", builder, str(other_home), str(BIG)],
            cwd=args.other.resolve() / "bench",
            check=True,
        )
        last = f"Final answer {BIG - 1}."
        commands = {
            "this": ([COMMAND, "--home", str(home)], (last, FOOTER)),
            "other": ([str(other), "--home", str(other_home)], (last, FOOTER)),
            "floor": (FLOOR, (FLOOR_TEXT,)),
        }
        for argv, texts in commands.values():  # untimed: caches, .pyc files
            launch_in_terminal(argv, *texts)
        runs: dict[str, list[Launch]] = {name: [] for name in commands}
        for round_ in range(args.rounds):
            # Every other round in reverse: the launch right after another
            # pays for its leftovers (caches, a process still exiting).
            order = list(commands.items())
            for name, (argv, texts) in order if round_ % 2 == 0 else reversed(order):
                runs[name].append(launch_in_terminal(argv, *texts))
    print(f"{args.rounds} alternating rounds, {BIG:,} events, medians of per-round ratios")
    for name, series in runs.items():
        wall = statistics.median(run.wall for run in series) * 1e3
        cpu = statistics.median(run.cpu for run in series) * 1e3
        print(f"{name:>6}: wall {wall:7.1f} ms, CPU {cpu:7.1f} ms")
    for a, b in (("this", "floor"), ("other", "floor"), ("this", "other")):
        wall, cpu = per_round(runs[a], runs[b], False), per_round(runs[a], runs[b], True)
        print(f"{a} / {b}: {wall:.2f}x wall, {cpu:.2f}x CPU")


if __name__ == "__main__":
    main()
