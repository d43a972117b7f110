"""``bench/fork_bench.py --quick`` runs to the end, so the benchmark cannot rot.

The figures of a quick run mean little (2,000 events); the test checks the
report is printed and that a fork of them is not slow outright.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_fork_bench_runs_quick() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "fork_bench.py"), "--quick"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    # Figures are printed, never asserted (a timed test on a shared machine is noise).
    assert re.search(r"fork of all 2,000 events: \d+ ms", done.stdout), done.stdout
    assert "ratio 2,000 vs 200 events:" in done.stdout
    assert re.search(r"indexing the 2,000 copies for search would add: \d+ ms", done.stdout)
