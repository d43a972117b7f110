"""Smoke test: the agent bench runs and prints its side-by-side figures (no timing asserted)."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench" / "agent_bench.py"

pytestmark = pytest.mark.timeout(120)


def test_the_bench_prints_client_time_json_dumps_and_the_ratio(
    capsys: pytest.CaptureFixture[str],
) -> None:
    spec = importlib.util.spec_from_file_location("agent_bench", BENCH)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    sys.modules["agent_bench"] = bench
    spec.loader.exec_module(bench)
    assert asyncio.run(bench.main((8, 40), 1, 3)) == 0
    out = capsys.readouterr().out
    for size in (8, 40):
        line = next(line for line in out.splitlines() if line.strip().startswith(f"{size} events"))
        assert "client median" in line and "ms/step" in line
        assert "json.dumps of its wire dicts" in line
        assert "fake server's own handling, excluded" in line
    assert "goal: 40-event step <= 3 x json.dumps of its wire dicts + 8-event step" in out
    for label in ("wall", "CPU"):
        line = next(line for line in out.splitlines() if line.strip().startswith(label + ":"))
        assert "vs goal 3 x" in line and "ratio" in line
