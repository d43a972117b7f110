"""``bench/index_forms_bench.py --quick`` runs to the end, so the benchmark cannot rot.

The figures of a quick run mean little (2,000 messages); the test checks the
report is printed and that every planted fact is found.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from koroku_tui.store.schema import SCHEMA_VERSION

ROOT = Path(__file__).resolve().parent.parent


def test_the_index_forms_bench_runs_quick() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "index_forms_bench.py"), "--quick"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    # The file is taken to the newest version: later migrations run after the one measured.
    heading = f"Migration 10 at 2,000 messages (version 7 -> {SCHEMA_VERSION}):"
    assert heading in done.stdout, done.stdout
    for size, facts in (("1", 4), ("2", 6), ("3+", 5)):
        line = f"a {size:>2}-character word finds its fact in the top 5: {facts}/{facts}"
        assert line in done.stdout, done.stdout
    assert "trigram index: built in" in done.stdout, done.stdout
