"""What the fake server saw: one :class:`RecordedRequest` per HTTP request."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

from koroku_tui.fake_gemini.wire import JsonObject, get_field


@dataclass
class RecordedRequest:
    """One request as received, plus how the server answered it.

    The record is stored when the request arrives (so a test can see a request
    that is still hanging); ``status``, ``error`` and ``client_disconnected``
    are filled in by the server thread as the exchange goes on.
    """

    index: int
    """0-based arrival order."""
    method: str
    path: str
    """URL path without the query string."""
    query: dict[str, list[str]]
    api_version: str | None
    """``v1``, ``v1beta`` or ``v1alpha``; None for unknown paths."""
    model: str | None
    """Model id from the path, without the ``models/`` prefix."""
    action: str | None
    """``generateContent``, ``streamGenerateContent``, ``countTokens``, ``get`` or ``list``."""
    headers: dict[str, str]
    """Header names lower-cased."""
    body: Any
    """Parsed JSON body, or None (no body, or not JSON)."""
    raw_body: bytes = b""
    status: int | None = None
    """HTTP status sent, once sent."""
    error: JsonObject | None = None
    """The ``error`` object answered (HTTP error or mid-stream error event)."""
    client_disconnected: bool = False
    """The client went away before the server finished (timeout, cancel)."""
    item: object = None
    """The script item that answered, if one was consumed."""
    arrived_at: float = field(default_factory=time.monotonic)
    """``time.monotonic()`` once the body was read: one clock for every process on
    the machine, so a bench can time a reply from its first request."""

    @property
    def stream(self) -> bool:
        """True for ``streamGenerateContent``."""
        return self.action == "streamGenerateContent"

    @property
    def api_key(self) -> str | None:
        """The key from ``x-goog-api-key`` (or ``?key=``)."""
        key = self.headers.get("x-goog-api-key")
        if key is None and self.query.get("key"):
            key = self.query["key"][0]
        return key

    @property
    def contents(self) -> list[JsonObject]:
        """``contents`` of the body (either spelling), or an empty list."""
        if not isinstance(self.body, dict):
            return []
        value = get_field(self.body, "contents")
        return [c for c in value if isinstance(c, dict)] if isinstance(value, list) else []

    @property
    def error_message(self) -> str | None:
        """The error message answered, if any."""
        return None if self.error is None else str(self.error.get("message"))


@dataclass
class RequestLog:
    """Thread-safe, append-only list of requests, with a way to wait for arrivals."""

    _items: list[RecordedRequest] = field(default_factory=list)
    _cond: threading.Condition = field(default_factory=threading.Condition)

    def append(self, record: RecordedRequest) -> None:
        """Store ``record`` and wake :meth:`wait_for` callers."""
        with self._cond:
            record.index = len(self._items)
            self._items.append(record)
            self._cond.notify_all()

    def snapshot(self) -> list[RecordedRequest]:
        """A copy of the list (records are shared, the list is not)."""
        with self._cond:
            return list(self._items)

    def wait_for(self, count: int, timeout: float) -> bool:
        """Block until at least ``count`` requests arrived; False on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: len(self._items) >= count, timeout)
