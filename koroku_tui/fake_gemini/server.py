"""The :class:`FakeGemini` server: lifecycle, script queue, signatures, recording."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterable, Mapping
from types import TracebackType

from koroku_tui.fake_gemini.handler import FakeHTTPServer
from koroku_tui.fake_gemini.recording import RecordedRequest
from koroku_tui.fake_gemini.script import ScriptItem
from koroku_tui.fake_gemini.state import SIGNATURE_PREFIX, ModelInfo, ServerState

__all__ = ["SIGNATURE_PREFIX", "FakeGemini", "ModelInfo"]

_JOIN_TIMEOUT = 5.0


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
        self.state = ServerState(
            script,
            api_key=api_key,
            strict=strict,
            models=models,
            on_empty=on_empty,
            signature_secret=signature_secret,
        )
        self._address = (host, port)
        self._httpd: FakeHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def api_key(self) -> str | None:
        """The key clients must send (None accepts any); may change between requests."""
        return self.state.api_key

    @api_key.setter
    def api_key(self, value: str | None) -> None:
        self.state.api_key = value

    @property
    def strict(self) -> bool:
        """Whether Gemini 3 thought-signature rules are enforced."""
        return self.state.strict

    @strict.setter
    def strict(self, value: bool) -> None:
        self.state.strict = value

    @property
    def on_empty(self) -> ScriptItem | None:
        """Served (not consumed) when the script queue is empty."""
        return self.state.on_empty

    @on_empty.setter
    def on_empty(self, value: ScriptItem | None) -> None:
        self.state.on_empty = value

    # -- lifecycle -------------------------------------------------------

    def start(self) -> FakeGemini:
        """Bind and serve in a daemon thread; returns self."""
        if self._httpd is not None:
            raise RuntimeError("FakeGemini already started")
        self.state.stopping.clear()
        self._httpd = FakeHTTPServer(self._address, self.state)
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
        self.state.stopping.set()
        httpd.shutdown()
        thread.join(_JOIN_TIMEOUT)
        conns = self.state.connections()
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
        self.state.add(items)

    @property
    def pending(self) -> int:
        """Script items not consumed yet."""
        return self.state.pending()

    def release(self) -> int:
        """Let every request hanging right now go on; returns how many."""
        return self.state.release()

    # -- recording -------------------------------------------------------

    @property
    def handling_seconds(self) -> tuple[float, float]:
        """The fake's own cost so far, for benches to subtract: (CPU, wall) seconds.

        Wall counts each request from its request line until the reply
        began, plus the CPU time after (not the waits on the client or on a
        script's delay).
        """
        return self.state.handling

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, in arrival order (a copy)."""
        return self.state.log.snapshot()

    def requests_for(self, action: str) -> list[RecordedRequest]:
        """Requests for one action: ``generateContent``, ``streamGenerateContent``,
        ``countTokens`` or ``get``."""
        return [r for r in self.state.log.snapshot() if r.action == action]

    @property
    def generate_requests(self) -> list[RecordedRequest]:
        """Streaming and non-streaming generate requests together."""
        kinds = ("generateContent", "streamGenerateContent")
        return [r for r in self.state.log.snapshot() if r.action in kinds]

    @property
    def last_request(self) -> RecordedRequest | None:
        """The most recent request, or None."""
        items = self.state.log.snapshot()
        return items[-1] if items else None

    def wait_for_requests(self, count: int, timeout: float = 5.0) -> bool:
        """Block until ``count`` requests arrived (use ``asyncio.to_thread`` from async)."""
        return self.state.log.wait_for(count, timeout)

    # -- signatures ------------------------------------------------------

    @property
    def issued_signatures(self) -> frozenset[bytes]:
        """Every signature this server has put in a response."""
        return self.state.issued_signatures()

    def is_known_signature(self, signature: bytes) -> bool:
        """Issued here, verifiable with this server's secret, or the placeholder."""
        return self.state.is_known_signature(signature)

    def issue_signature(self) -> bytes:
        """A fresh signature as the server puts on a step (for hand-built histories)."""
        return self.state.issue_signature()
