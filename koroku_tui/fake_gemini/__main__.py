"""``python -m koroku_tui.fake_gemini``: serve a fake Gemini API until killed.

Prints the base URL as the first line of stdout, then serves. Without
``--script`` (or with ``--echo``) it answers every request by echoing the
user's last message, once the scripted items are used up. With
``--arrivals`` it prints, on exit, when each generation request arrived.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

from koroku_tui.fake_gemini.script import ScriptItem, echo_responder
from koroku_tui.fake_gemini.script_file import ScriptFileError, load_script
from koroku_tui.fake_gemini.server import FakeGemini


def build_parser() -> argparse.ArgumentParser:
    """The command line parser."""
    parser = argparse.ArgumentParser(
        prog="python -m koroku_tui.fake_gemini",
        description="Serve a local fake Gemini API (never contacts Google).",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port (default)")
    parser.add_argument("--api-key", default="test-key", help="key clients must send")
    parser.add_argument("--any-key", action="store_true", help="accept any API key")
    parser.add_argument("--script", type=Path, help="JSON script file (see script_file.py)")
    parser.add_argument("--echo", action="store_true", help="echo once the script is used up")
    parser.add_argument("--no-strict", action="store_true", help="skip signature checks")
    parser.add_argument(
        "--arrivals",
        action="store_true",
        help="on exit, print 'arrivals' and each generation request's time.monotonic()",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the server until SIGINT/SIGTERM."""
    args = build_parser().parse_args(argv)
    script: list[ScriptItem] = []
    if args.script is not None:
        try:
            script = load_script(args.script)
        except (OSError, ValueError, ScriptFileError) as exc:
            print(f"fake_gemini: cannot load script: {exc}", file=sys.stderr)
            return 2
    on_empty = echo_responder if args.echo or args.script is None else None
    server = FakeGemini(
        script,
        api_key=None if args.any_key else args.api_key,
        host=args.host,
        port=args.port,
        strict=not args.no_strict,
        on_empty=on_empty,
    )
    done = threading.Event()

    def _on_signal(signum: int, frame: FrameType | None) -> None:
        done.set()

    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    with server:
        print(server.base_url, flush=True)
        while not done.wait(0.5):
            pass
    if args.arrivals:
        times = (f"{r.arrived_at:.6f}" for r in server.generate_requests)
        print("arrivals", *times, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
