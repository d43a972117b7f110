"""``bench/recall_bench.py --quick`` runs to the end, so the benchmark cannot rot.

The figures of a quick run mean little (500 messages); the test checks the
report is printed and that recall is not broken outright, by words alone and
as shipped, once MiniLM's meaning pass is done.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


# pytest's 120 s default killed it on a loaded machine (MiniLM's pass is CPU-bound);
# the subprocess's own limit below is the hang guard.
@pytest.mark.timeout(660)
def test_the_recall_bench_runs_quick() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "recall_bench.py"), "--quick"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,  # a hang guard: MiniLM embeds 700 rows, 4 launches
    )
    assert done.returncode == 0, done.stderr
    recall = re.search(r"recall@5 at 500 messages: (\d\.\d\d)", done.stdout)
    assert recall is not None, done.stdout
    assert float(recall.group(1)) >= 0.8, done.stdout
    assert re.search(r"p95 at 500: [\d.]+ ms", done.stdout), done.stdout
    assert "ratio 500 vs 200 messages: p50" in done.stdout
    shipped = re.search(
        r"at 500, meaning pass done: recall@5 no shared word (\d\.\d\d)", done.stdout
    )
    assert shipped is not None, done.stdout
    assert float(shipped.group(1)) >= 0.8, done.stdout
    assert "words + MiniLM x2 (100%)" in done.stdout, done.stdout
