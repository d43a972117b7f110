"""What the fake server and its request handler share: the script, signatures, the log.

Its own module so the handler (below) and :class:`FakeGemini` (above) both
depend on it and neither on the other's private members: the handler used to
reach into the server for seven of them, and the two imported each other.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import socket
import threading
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from koroku_tui.fake_gemini.recording import RequestLog
from koroku_tui.fake_gemini.script import ScriptItem
from koroku_tui.fake_gemini.wire import PLACEHOLDER_SIGNATURE, JsonObject

# Every generated signature starts with these bytes, whose standard base64 is
# "+/+/": a client that mixes up the base64 alphabets corrupts every signature.
SIGNATURE_PREFIX = b"\xfb\xff\xbf"
_NONCE_LEN = 13
_TAG_LEN = 16


@dataclass(frozen=True)
class ModelInfo:
    """What ``GET /{ver}/models/{model}`` (and the list) reports of one model."""

    input_token_limit: int = 1_048_576
    output_token_limit: int = 65_536
    display_name: str | None = None
    thinking: bool = True
    methods: tuple[str, ...] = ("generateContent", "countTokens")
    """``supportedGenerationMethods``: an embedding model has ``embedContent`` only."""


CATALOGUE: Mapping[str, ModelInfo] = {
    "gemini-3-flash-preview": ModelInfo(display_name="Gemini 3 Flash Preview"),
    "gemini-3-pro-preview": ModelInfo(display_name="Gemini 3 Pro Preview"),
    "gemini-2.5-flash": ModelInfo(display_name="Gemini 2.5 Flash"),
    "gemini-2.5-flash-lite": ModelInfo(display_name="Gemini 2.5 Flash-Lite"),
    "gemini-embedding-001": ModelInfo(
        input_token_limit=2048, output_token_limit=1, thinking=False, methods=("embedContent",)
    ),
}
"""What ``GET /{ver}/models`` lists when the server was given no ``models`` (it then
serves any id): some of the real list's models, one that cannot generate among them."""
DEFAULT_PAGE_SIZE = 50
"""The real API's page when ``pageSize`` is not given (it allows up to 1,000)."""


class ServerState:
    """The thread-safe state behind one fake server, as its handler threads see it.

    ``api_key``, ``strict`` and ``on_empty`` are read on every request, so a
    test may change them between requests.
    """

    def __init__(
        self,
        script: Iterable[ScriptItem],
        *,
        api_key: str | None,
        strict: bool,
        models: Mapping[str, ModelInfo] | None,
        on_empty: ScriptItem | None,
        signature_secret: bytes | None,
    ) -> None:
        self.api_key = api_key
        self.strict = strict
        self.on_empty = on_empty
        self.log = RequestLog()
        self.stopping = threading.Event()
        self._models = dict(models) if models is not None else None
        self._secret = signature_secret or os.urandom(32)
        self._lock = threading.Lock()
        self._queue: deque[ScriptItem] = deque(script)
        self._issued: set[bytes] = set()
        self._hangs: set[threading.Event] = set()
        self._conns: dict[threading.Thread, socket.socket] = {}
        self._handling = (0.0, 0.0)

    # -- cost --------------------------------------------------------------

    def add_handling(self, cpu: float, wall: float) -> None:
        """Count what one request cost the fake: CPU time, and wall time (see the handler)."""
        with self._lock:
            self._handling = (self._handling[0] + cpu, self._handling[1] + wall)

    @property
    def handling(self) -> tuple[float, float]:
        """(CPU, wall) seconds the server's threads spent handling requests, in total."""
        with self._lock:
            return self._handling

    # -- script ----------------------------------------------------------

    def add(self, items: Iterable[ScriptItem]) -> None:
        """Append items to the script queue."""
        with self._lock:
            self._queue.extend(items)

    def pending(self) -> int:
        """Script items not consumed yet."""
        with self._lock:
            return len(self._queue)

    def next_item(self) -> ScriptItem | None:
        """The next script item (consumed), else ``on_empty`` (not consumed)."""
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        return self.on_empty

    # -- hanging requests ------------------------------------------------

    def hang_begin(self) -> threading.Event:
        """Register a hanging request; :meth:`release` sets the returned event."""
        event = threading.Event()
        with self._lock:
            self._hangs.add(event)
        return event

    def hang_end(self, event: threading.Event) -> None:
        """The hanging request behind ``event`` went on (or its client left)."""
        with self._lock:
            self._hangs.discard(event)

    def release(self) -> int:
        """Let every request hanging right now go on; returns how many."""
        with self._lock:
            hangs = list(self._hangs)
        for event in hangs:
            event.set()
        return len(hangs)

    # -- connections -----------------------------------------------------

    def track_connection(
        self,
        sock: socket.socket,
        process: Callable[[Any, Any], None],
        client_address: Any,
    ) -> None:
        """Serve ``sock`` on a thread that :meth:`connections` lists until it ends."""

        def run() -> None:
            try:
                process(sock, client_address)
            finally:
                with self._lock:
                    self._conns.pop(threading.current_thread(), None)

        worker = threading.Thread(target=run, name="fake-gemini-conn", daemon=True)
        with self._lock:
            self._conns[worker] = sock
        worker.start()

    def connections(self) -> dict[threading.Thread, socket.socket]:
        """The open connections and the threads serving them (a copy)."""
        with self._lock:
            return dict(self._conns)

    # -- signatures ------------------------------------------------------

    def issued_signatures(self) -> frozenset[bytes]:
        """Every signature this server has put in a response."""
        with self._lock:
            return frozenset(self._issued)

    def is_known_signature(self, signature: bytes) -> bool:
        """Issued here, verifiable with this server's secret, or the placeholder."""
        if signature == PLACEHOLDER_SIGNATURE:
            return True
        with self._lock:
            if signature in self._issued:
                return True
        body, tag = signature[:-_TAG_LEN], signature[-_TAG_LEN:]
        return len(body) == len(SIGNATURE_PREFIX) + _NONCE_LEN and hmac.compare_digest(
            tag, self._tag(body)
        )

    def _tag(self, body: bytes) -> bytes:
        return hmac.new(self._secret, body, hashlib.sha256).digest()[:_TAG_LEN]

    def issue_signature(self) -> bytes:
        """A fresh signature as the server puts on a step."""
        body = SIGNATURE_PREFIX + os.urandom(_NONCE_LEN)
        signature = body + self._tag(body)
        self.remember(signature)
        return signature

    def remember(self, signature: bytes) -> None:
        """Count ``signature`` as issued here (a scripted step carried it)."""
        with self._lock:
            self._issued.add(signature)

    # -- models ----------------------------------------------------------

    def models_page(self, size: int | None, token: str | None) -> JsonObject | None:
        """One page of the ``models.list`` body (``None`` for a token it never gave)."""
        names = list(self._models if self._models is not None else CATALOGUE)
        start = 0
        if token:
            if not token.startswith("page-") or not token[5:].isdigit():
                return None
            start = int(token[5:])
        size = min(size or DEFAULT_PAGE_SIZE, 1000)
        page: JsonObject = {"models": [self.model_json(name) for name in names[start:][:size]]}
        if start + size < len(names):
            page["nextPageToken"] = f"page-{start + size}"
        return page

    def model_json(self, model: str) -> JsonObject | None:
        """The ``models.get`` body for ``model``, or None if it is unknown."""
        if self._models is None:
            info = CATALOGUE.get(model, ModelInfo())
        elif model in self._models:
            info = self._models[model]
        else:
            return None
        return {
            "name": f"models/{model}",
            "version": "001",
            "displayName": info.display_name or model,
            "description": "Fake Gemini model served by koroku_tui.fake_gemini.",
            "inputTokenLimit": info.input_token_limit,
            "outputTokenLimit": info.output_token_limit,
            "supportedGenerationMethods": list(info.methods),
            "thinking": info.thinking,
        }
