"""The :class:`FakeGemini` server: lifecycle, script queue, signatures, recording."""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import socket
import threading
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from koroku_tui.fake_gemini.handler import FakeHTTPServer
from koroku_tui.fake_gemini.recording import RecordedRequest, RequestLog
from koroku_tui.fake_gemini.script import ScriptItem
from koroku_tui.fake_gemini.wire import PLACEHOLDER_SIGNATURE, JsonObject

# Every generated signature starts with these bytes, whose standard base64 is
# "+/+/": a client that mixes up the base64 alphabets corrupts every signature.
SIGNATURE_PREFIX = b"\xfb\xff\xbf"
_NONCE_LEN = 13
_TAG_LEN = 16
_JOIN_TIMEOUT = 5.0


@dataclass(frozen=True)
class ModelInfo:
    """What ``GET /{ver}/models/{model}`` reports."""

    input_token_limit: int = 1_048_576
    output_token_limit: int = 65_536
    display_name: str | None = None
    thinking: bool = True


class FakeGemini:
    """A local stand-in for the Gemini REST API, for tests and the demo mode.

    Serves on ``127.0.0.1`` (an ephemeral port by default) from a background
    thread, so it works from sync code, asyncio tests and other processes.
    Use it as a context manager or call :meth:`start` / :meth:`stop`.

    Args:
        script: items consumed one per generate/stream request.
        api_key: the key clients must send in ``x-goog-api-key``; None accepts any.
        strict: enforce Gemini 3 thought-signature rules.
        models: known models and their limits; None serves any model id with
            the defaults of :class:`ModelInfo`.
        on_empty: served (not consumed) when the queue is empty; without it an
            empty queue answers a 500 "script ran out" error.
        signature_secret: key that makes generated signatures verifiable, so
            another server with the same secret accepts them (the demo resumes
            old sessions this way). Random by default.
    """

    def __init__(
        self,
        script: Iterable[ScriptItem] = (),
        *,
        api_key: str | None = "test-key",
        host: str = "127.0.0.1",
        port: int = 0,
        strict: bool = True,
        models: Mapping[str, ModelInfo] | None = None,
        on_empty: ScriptItem | None = None,
        signature_secret: bytes | None = None,
    ) -> None:
        self.api_key = api_key
        self.strict = strict
        self.on_empty = on_empty
        self._address = (host, port)
        self._models = dict(models) if models is not None else None
        self._secret = signature_secret or os.urandom(32)
        self._lock = threading.Lock()
        self._queue: deque[ScriptItem] = deque(script)
        self._issued: set[bytes] = set()
        self._log = RequestLog()
        self._hangs: set[threading.Event] = set()
        self._conns: dict[threading.Thread, socket.socket] = {}
        self._stopping = threading.Event()
        self._httpd: FakeHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------

    def start(self) -> FakeGemini:
        """Bind and serve in a daemon thread; returns self."""
        if self._httpd is not None:
            raise RuntimeError("FakeGemini already started")
        self._stopping.clear()
        self._httpd = FakeHTTPServer(self._address, self)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"fake-gemini:{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving: wake hanging requests, close connections, join threads."""
        httpd, thread = self._httpd, self._thread
        if httpd is None or thread is None:
            return
        self._stopping.set()
        httpd.shutdown()
        thread.join(_JOIN_TIMEOUT)
        with self._lock:
            conns = dict(self._conns)
        for sock in conns.values():
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)  # wakes handlers idling on keep-alive
        for worker in conns:
            worker.join(_JOIN_TIMEOUT)
        httpd.server_close()
        self._httpd = self._thread = None

    def __enter__(self) -> FakeGemini:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The bound port (only while started)."""
        if self._httpd is None:
            raise RuntimeError("FakeGemini is not started")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT``, for ``HttpOptions(base_url=...)``."""
        return f"http://{self._address[0]}:{self.port}"

    # -- script ----------------------------------------------------------

    def add(self, *items: ScriptItem) -> None:
        """Append items to the script queue."""
        with self._lock:
            self._queue.extend(items)

    @property
    def pending(self) -> int:
        """Script items not consumed yet."""
        with self._lock:
            return len(self._queue)

    def release(self) -> int:
        """Let every request hanging right now go on; returns how many."""
        with self._lock:
            hangs = list(self._hangs)
        for event in hangs:
            event.set()
        return len(hangs)

    # -- recording -------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, in arrival order (a copy)."""
        return self._log.snapshot()

    def requests_for(self, action: str) -> list[RecordedRequest]:
        """Requests for one action: ``generateContent``, ``streamGenerateContent``,
        ``countTokens`` or ``get``."""
        return [r for r in self._log.snapshot() if r.action == action]

    @property
    def generate_requests(self) -> list[RecordedRequest]:
        """Streaming and non-streaming generate requests together."""
        kinds = ("generateContent", "streamGenerateContent")
        return [r for r in self._log.snapshot() if r.action in kinds]

    @property
    def last_request(self) -> RecordedRequest | None:
        """The most recent request, or None."""
        items = self._log.snapshot()
        return items[-1] if items else None

    def wait_for_requests(self, count: int, timeout: float = 5.0) -> bool:
        """Block until ``count`` requests arrived (use ``asyncio.to_thread`` from async)."""
        return self._log.wait_for(count, timeout)

    # -- signatures ------------------------------------------------------

    @property
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
        """A fresh signature as the server puts on a step (for hand-built histories)."""
        body = SIGNATURE_PREFIX + os.urandom(_NONCE_LEN)
        signature = body + self._tag(body)
        self._remember(signature)
        return signature

    def _remember(self, signature: bytes) -> None:
        with self._lock:
            self._issued.add(signature)

    # -- used by the handler ---------------------------------------------

    def model_json(self, model: str) -> JsonObject | None:
        """The ``models.get`` body for ``model``, or None if it is unknown."""
        if self._models is None:
            info = ModelInfo()
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
            "supportedGenerationMethods": ["generateContent", "countTokens"],
            "thinking": info.thinking,
        }

    def _next_item(self) -> ScriptItem | None:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        return self.on_empty

    def _hang_begin(self) -> threading.Event:
        event = threading.Event()
        with self._lock:
            self._hangs.add(event)
        return event

    def _hang_end(self, event: threading.Event) -> None:
        with self._lock:
            self._hangs.discard(event)

    def _track_connection(
        self,
        sock: socket.socket,
        process: Callable[[Any, Any], None],
        client_address: Any,
    ) -> None:
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
