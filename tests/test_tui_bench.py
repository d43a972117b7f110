"""``bench/tui_bench.py --quick`` runs to the end, so the launch benchmark cannot rot.

The figures of a quick run mean little (one launch each, 400 events, no
warm-up, a shared machine); the test checks that the side-by-side report,
Koroku in a pseudo-terminal against the floor of a minimal Textual app, is
printed. Timings are never asserted.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.timeout(300)
def test_the_launch_bench_prints_koroku_against_the_floor() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "tui_bench.py"), "--quick"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=280,
    )
    assert done.returncode == 0, done.stderr
    figures = r"\|\s+[\d.]+ ms *" * 4  # wall median, min, max, CPU median
    for name in ("floor", "widgets floor", "koroku empty", "koroku 400 events"):
        assert re.search(rf"^ *{name} {figures}$", done.stdout, re.MULTILINE), done.stdout
    ratios = r"wall [\d.]+x \(median of per-round ratios [\d.]+x\), CPU [\d.]+x"
    assert re.search(rf"koroku 400 events vs floor: {ratios}", done.stdout), done.stdout
    assert re.search(rf"koroku 400 events vs empty: {ratios}", done.stdout), done.stdout
    assert re.search(rf"koroku 400 events vs widgets floor: {ratios}", done.stdout), done.stdout
    assert re.search(r"the widgets floor vs the floor: CPU [\d.]+x", done.stdout), done.stdout
