"""Append messages to a Koroku database forever, printing each id once it is committed.

Run by ``tests/test_store_crash.py``, which SIGKILLs it mid-write:
``python store_writer.py DB_PATH LABEL``. Each line is ``<row id> <label>-<n>``,
printed and flushed only after ``add_message`` has returned.
"""

from __future__ import annotations

import asyncio
import sys

from koroku_tui.events import SessionEvent, TextPart, encode_signature
from koroku_tui.store import SessionManager


def event_for(label: str, n: int) -> SessionEvent:
    """The event written as message ``n``; the test rebuilds it to compare."""
    role = "user" if n % 2 == 0 else "model"
    signature = encode_signature(bytes((n * 7 + i) % 256 for i in range(48)))
    return SessionEvent(
        role=role,
        parts=[TextPart(text=f"{label}-{n} " + "x" * (n % 300), thought_signature_b64=signature)],
    )


async def main(path: str, label: str) -> None:
    async with SessionManager(path) as store:
        n = 0
        while True:
            message_id = await store.add_message(event_for(label, n))
            sys.stdout.write(f"{message_id} {label}-{n}\n")
            sys.stdout.flush()
            n += 1


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
