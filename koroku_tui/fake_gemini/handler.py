"""The HTTP side: routing, auth, validation, and writing JSON or SSE answers."""

from __future__ import annotations

import contextlib
import logging
import re
import select
import socket
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from koroku_tui.fake_gemini import deep_json
from koroku_tui.fake_gemini.embeddings import embed_answer
from koroku_tui.fake_gemini.recording import RecordedRequest
from koroku_tui.fake_gemini.render import render_step, stream_events, unary_response
from koroku_tui.fake_gemini.script import ErrorReply, Hang, Reply, ScriptItem
from koroku_tui.fake_gemini.validation import size_problem, validate_generate_body
from koroku_tui.fake_gemini.wire import (
    JsonObject,
    error_body,
    estimate_contents_tokens,
    estimate_request_tokens,
    get_field,
)

if TYPE_CHECKING:
    from koroku_tui.fake_gemini.state import ServerState

logger = logging.getLogger(__name__)

_PATH = re.compile(r"/(v1|v1beta|v1alpha)/models(?:/([^/:]+)(?::([A-Za-z]+))?)?")
_POLL = 0.02  # seconds between checks for stop/release/disconnect while waiting
_MAX_RESPONDER_DEPTH = 8

API_KEY_INVALID_DETAILS: list[JsonObject] = [
    {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": "API_KEY_INVALID",
        "domain": "googleapis.com",
        "metadata": {"service": "generativelanguage.googleapis.com"},
    },
    {
        "@type": "type.googleapis.com/google.rpc.LocalizedMessage",
        "locale": "en-US",
        "message": "API key not valid. Please pass a valid API key.",
    },
]


class ClientGone(Exception):
    """The client closed the connection (timeout, cancel) or the server is stopping."""


class FakeHTTPServer(ThreadingHTTPServer):
    """ThreadingHTTPServer carrying the :class:`ServerState` its handlers serve from."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], state: ServerState) -> None:
        self.state = state
        super().__init__(address, GeminiHandler)

    def process_request(self, request: Any, client_address: Any) -> None:
        # Tracked so stop() can close idle keep-alive sockets and join threads:
        # ThreadingMixIn alone would wait forever on a client's pooled connection.
        self.state.track_connection(request, self.process_request_thread, client_address)


class GeminiHandler(BaseHTTPRequestHandler):
    """One connection; each request is dispatched to the Gemini endpoints."""

    protocol_version = "HTTP/1.1"  # keep-alive, and chunked bodies for SSE
    server_version = "FakeGemini/1.0"
    server: FakeHTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        logger.debug("%s " + format, self.address_string(), *args)

    # What a request costs the fake itself, for benches to subtract: its CPU
    # time, and its wall time until the reply begins (reading and checking
    # the body, however long this busy machine makes it) plus the CPU time
    # after. Waiting for the next request or on a script's delay is not counted.
    _cpu_started: float | None = None
    _wall_started = 0.0
    _before_reply: tuple[float, float] | None = None
    """(wall, CPU) seconds from the request line to the reply's status line."""

    def parse_request(self) -> bool:
        self._cpu_started = time.thread_time()
        self._wall_started = time.perf_counter()
        self._before_reply = None
        return super().parse_request()

    def send_response(self, code: int, message: str | None = None) -> None:
        if self._before_reply is None and self._cpu_started is not None:
            self._before_reply = (
                time.perf_counter() - self._wall_started,
                time.thread_time() - self._cpu_started,
            )
        super().send_response(code, message)

    def handle_one_request(self) -> None:
        self._cpu_started = None
        try:
            super().handle_one_request()
        finally:
            if self._cpu_started is not None:
                cpu = time.thread_time() - self._cpu_started
                wall_before, cpu_before = self._before_reply or (0.0, 0.0)
                self.server.state.add_handling(cpu, wall_before + cpu - cpu_before)

    def do_GET(self) -> None:
        self._dispatch()

    def do_POST(self) -> None:
        self._dispatch()

    do_PUT = do_PATCH = do_DELETE = do_POST

    # -- request ---------------------------------------------------------

    def _dispatch(self) -> None:
        state = self.server.state
        url = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        body: Any = None
        bad_json = False
        if raw:
            try:
                body = deep_json.loads(raw)
            except ValueError:
                bad_json = True
        match = _PATH.fullmatch(url.path)
        action = None
        if match:
            if match.group(2) is None:
                action = "list" if self.command == "GET" else None
            else:
                action = match.group(3) or ("get" if self.command == "GET" else None)
        record = RecordedRequest(
            index=-1,
            method=self.command,
            path=url.path,
            query=parse_qs(url.query),
            api_version=match.group(1) if match else None,
            model=match.group(2) if match else None,
            action=action,
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
            raw_body=raw,
        )
        state.log.append(record)
        try:
            self._route(record, match is not None, bad_json)
        except ClientGone:
            record.client_disconnected = not state.stopping.is_set()
            self.close_connection = True
        except (BrokenPipeError, ConnectionResetError):
            record.client_disconnected = True
            self.close_connection = True

    def _route(self, record: RecordedRequest, matched: bool, bad_json: bool) -> None:
        state = self.server.state
        method_ok = {"get": "GET", "list": "GET"}.get(record.action or "", "POST") == self.command
        known = record.action in (
            "get",
            "list",
            "generateContent",
            "streamGenerateContent",
            "countTokens",
            "batchEmbedContents",
            "embedContent",
        )
        if not matched or not known or not method_ok:
            self._send_error(record, 404, f"Method not found: {self.command} {record.path}")
            return
        too_large = size_problem(len(record.raw_body))
        if too_large is not None:  # the front end refuses it before reading it
            self._send_error(record, too_large.code, too_large.message, too_large.status)
            return
        if state.api_key is not None and record.api_key != state.api_key:
            message = "API key not valid. Please pass a valid API key."
            self._send_error(record, 400, message, details=API_KEY_INVALID_DETAILS)
            return
        if bad_json:
            self._send_error(record, 400, "Invalid JSON payload received.")
            return
        if record.action == "list":
            self._list_models(record)
            return
        model = record.model or ""
        info = state.model_json(model)
        if info is None:
            message = (
                f"models/{model} is not found for API version {record.api_version}, and is "
                f"not supported for {record.action}. Call ListModels to see the list of "
                "available models and their supported methods."
            )
            self._send_error(record, 404, message)
        elif record.action == "get":
            self._send_json(record, 200, info)
        elif record.action in ("batchEmbedContents", "embedContent"):
            self._send_json(record, 200, embed_answer(record.action, record.body))
        elif record.action == "countTokens":
            contents = get_field(record.body, "contents") if isinstance(record.body, dict) else None
            self._send_json(record, 200, {"totalTokens": estimate_contents_tokens(contents)})
        else:
            self._generate(record)

    def _list_models(self, record: RecordedRequest) -> None:
        """``models.list``: a page of models, ``nextPageToken`` while there are more."""
        size_given = record.query.get("pageSize", [""])[0]
        token = record.query.get("pageToken", [""])[0] or None
        if size_given and not size_given.isdigit():
            self._send_error(record, 400, f"Invalid value at 'page_size' ({size_given})")
            return
        page = self.server.state.models_page(int(size_given) if size_given else None, token)
        if page is None:
            self._send_error(record, 400, "Invalid page token.", "INVALID_ARGUMENT")
            return
        self._send_json(record, 200, page)

    def _generate(self, record: RecordedRequest) -> None:
        state = self.server.state
        rejection = validate_generate_body(
            record.body, strict=state.strict, is_known_signature=state.is_known_signature
        )
        if rejection is not None:
            self._send_error(record, rejection.code, rejection.message, rejection.status)
            return
        item = state.next_item()
        if item is None:
            message = (
                f"fake Gemini script ran out: request #{record.index} "
                f"({record.action}) has no scripted reply left"
            )
            self._send_error(record, 500, message, "INTERNAL")
            return
        self._serve(record, item, depth=0)

    # -- serving script items --------------------------------------------

    def _serve(self, record: RecordedRequest, item: ScriptItem, depth: int) -> None:
        record.item = item
        if isinstance(item, Reply):
            self._serve_reply(record, item)
        elif isinstance(item, ErrorReply):
            self._wait(item.delay)
            self._send_error(record, item.code, item.message, item.status)
        elif isinstance(item, Hang):
            self._hang(record, item, depth)
        elif depth >= _MAX_RESPONDER_DEPTH:
            self._send_error(record, 500, "fake Gemini responders nested too deep", "INTERNAL")
        else:
            try:
                produced = item(record)
            except Exception as exc:  # a broken responder must fail the test, not hang it
                logger.exception("fake Gemini responder failed")
                self._send_error(record, 500, f"fake Gemini responder raised: {exc!r}", "INTERNAL")
                return
            self._serve(record, produced, depth + 1)

    def _hang(self, record: RecordedRequest, hang: Hang, depth: int) -> None:
        state = self.server.state
        released = state.hang_begin()
        try:
            while not released.is_set():
                self._check_alive()
                self._poll_client(_POLL)
        finally:
            state.hang_end(released)
        if hang.then is None:
            self.close_connection = True
            return
        self._serve(record, hang.then, depth + 1)

    def _serve_reply(self, record: RecordedRequest, reply: Reply) -> None:
        state = self.server.state
        step = render_step(
            reply,
            model=record.model or "",
            prompt_tokens=estimate_request_tokens(record.body),
            new_signature=state.issue_signature,
            remember=state.remember,
        )
        self._wait(reply.delay)
        if not record.stream:
            if reply.cut_after is not None:
                self._abort()
            elif reply.error is not None:
                err = reply.error
                self._send_error(record, err.code, err.message, err.status)
            else:
                self._send_json(record, 200, unary_response(step))
            return
        events = stream_events(step)
        if "sse" not in record.query.get("alt", []):
            # Without alt=sse the real API streams one JSON array.
            self._send_json(record, 200, events)
            return
        record.status = 200
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for index in range(len(events) + 1):
            if reply.error is not None and reply.error_after == index:
                err = reply.error
                self._wait(err.delay)
                body = error_body(err.code, err.message, err.status)
                record.error = body["error"]
                self._write_chunk(b"data: " + deep_json.dumps(body).encode() + b"\r\n\r\n")
                break
            if reply.cut_after == index:
                if not reply.clean_cut:
                    self._abort()
                    return
                break
            if index == len(events):
                break
            if index:
                self._wait(reply.chunk_delay)
            self._write_chunk(b"data: " + deep_json.dumps(events[index]).encode() + b"\r\n\r\n")
        self._write_chunk(b"")  # the zero-length chunk ends the body

    # -- low-level I/O ---------------------------------------------------

    def _send_json(self, record: RecordedRequest, status: int, payload: object) -> None:
        data = deep_json.dumps(payload).encode()
        # Recorded before the client can see the answer: a test that asserts
        # on the record right after its await must never race the handler.
        record.status = status
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=UTF-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _send_error(
        self,
        record: RecordedRequest,
        code: int,
        message: str | None = None,
        status: str | None = None,
        details: list[JsonObject] | None = None,
    ) -> None:
        body = error_body(code, message, status, details)
        record.error = body["error"]
        self._send_json(record, code, body)

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")

    def _abort(self) -> None:
        """Drop the connection mid-answer: the client sees an incomplete body."""
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    def _check_alive(self) -> None:
        if self.server.state.stopping.is_set():
            raise ClientGone

    def _poll_client(self, timeout: float) -> None:
        """Sleep up to ``timeout``, raising ClientGone if the client hung up."""
        readable, _, _ = select.select([self.connection], [], [], timeout)
        if not readable:
            return
        try:
            peek = self.connection.recv(1, socket.MSG_PEEK)
        except OSError:
            raise ClientGone from None
        if not peek:
            raise ClientGone
        time.sleep(timeout)  # pipelined bytes: keep waiting without spinning

    def _wait(self, seconds: float) -> None:
        """A delay that ends early (ClientGone) on server stop or client hang-up."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            self._check_alive()
            self._poll_client(min(left, _POLL))
        self._check_alive()
