"""The first frame with instruction files and a config file, against none (issue 24).

Run: ``uv run python bench/instructions_launch.py [--rounds 6]``. The
installed ``koroku-tui`` starts in a pseudo-terminal (``terminal_launch.py``)
on a 40-event home, once in an empty folder with an empty config folder, once
in a trusted git repository holding ``AGENTS.md``, ``KOROKU.md`` and
``.koroku/config.toml``, with a personal ``AGENTS.md`` and the user's
``config.toml`` (approval rules, key remaps, the repository in
``trusted_folders``) in its config folder: three instruction files and two
config files. Launches
alternate (A, B, then B, A); the ratio printed is the median of per-round
ratios, wall and CPU. Goal: within 1.05x (the files are read after the first
frame: the trust check and the agent's reading wait for it).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from terminal_launch import FOOTER, Launch, koroku, launch_in_terminal
from tui_bench import build_home

EVENTS = 40


USER_CONFIG = """\
# A user's config.toml, as the README's example writes one.
model = "gemini-3-flash-preview"
trusted_folders = ["{repo}"]

[compaction]
at = 0.7
after_events = 400

[approval]
allow_commands = ["git status", "git diff", "uv run pytest"]
deny_commands = ["rm", "git push"]
tools = {{ write_file = "ask" }}

[instructions]
files = ["AGENTS.md", "KOROKU.md"]

[tools]
env_allow = ["GITHUB_TOKEN"]

[keys]
"main.compact" = "ctrl+k"
"""

PROJECT_CONFIG = """\
[compaction]
at = 0.6

[approval]
deny_commands = ["git push --force"]
"""


def with_files(root: Path) -> tuple[Path, dict[str, str]]:
    """A trusted repository with its instruction files and ``.koroku/config.toml``, and a
    config folder with the user's ``config.toml`` (rules, keys) and personal ``AGENTS.md``."""
    repo, config = root / "repo", root / "config-with"
    (repo / ".git").mkdir(parents=True)
    (repo / ".koroku").mkdir()
    (repo / "AGENTS.md").write_text("Project rules.\n" * 200)
    (repo / "KOROKU.md").write_text("Koroku rules.\n" * 50)
    (repo / ".koroku" / "config.toml").write_text(PROJECT_CONFIG)
    (config / "koroku").mkdir(parents=True)
    (config / "koroku" / "AGENTS.md").write_text("Personal rules.\n" * 20)
    (config / "koroku" / "config.toml").write_text(USER_CONFIG.format(repo=repo))
    return repo, {"XDG_CONFIG_HOME": str(config)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=6)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="koroku-instructions-") as folder:
        root = Path(folder)
        home = root / "home"
        build_home(home, EVENTS)
        (root / "plain").mkdir()
        (root / "config-none").mkdir()
        cases = {
            "none": (root / "plain", {"XDG_CONFIG_HOME": str(root / "config-none")}),
            "files": with_files(root),
        }
        last = f"Final answer {EVENTS - 1}."

        def launch(name: str) -> Launch:
            cwd, env = cases[name]
            return launch_in_terminal(koroku(home), last, FOOTER, cwd=cwd, env_extra=env)

        for name in cases:  # untimed: caches, .pyc files
            launch(name)
        runs: dict[str, list[Launch]] = {name: [] for name in cases}
        for round_ in range(args.rounds):
            order = list(cases) if round_ % 2 == 0 else list(reversed(cases))
            for name in order:
                runs[name].append(launch(name))
    for name, series in runs.items():
        wall = statistics.median(run.wall for run in series) * 1e3
        cpu = statistics.median(run.cpu for run in series) * 1e3
        print(f"{name:>5}: wall {wall:7.1f} ms, CPU {cpu:7.1f} ms")
    pairs = list(zip(runs["files"], runs["none"], strict=True))
    wall = statistics.median(a.wall / b.wall for a, b in pairs)
    cpu = statistics.median(a.cpu / b.cpu for a, b in pairs)
    print(f"files / none: {wall:.2f}x wall, {cpu:.2f}x CPU ({args.rounds} alternating rounds)")


if __name__ == "__main__":
    main()
