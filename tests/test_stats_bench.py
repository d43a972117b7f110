"""``bench/stats_bench.py --quick`` runs to the end, so the benchmark cannot rot.

The figures of a quick run mean little; the test checks the report is printed.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_stats_bench_runs_quick() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "stats_bench.py"), "--quick"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "1,200 messages in 4 sessions" in done.stdout, done.stdout
    assert "found 596 requests, 300 tool calls" in done.stdout, done.stdout
