"""The web server: the page, its static files and one websocket per tab, behind the token.

Every request needs the home's token in its address: ``?token=`` for the
page and its files, ``/ws/TOKEN`` for the websocket (``page.py`` writes them
into the page). No cookie carries it: cookies are not kept apart by port, so
every other server on 127.0.0.1 the browser visits would get the token and
could drive Koroku. Without it: 403 and no app process. The websocket also
refuses an ``Origin`` that is not the page's own, so no other site open in
the same browser can drive Koroku, and a ``Host`` that is not the server's
(a DNS-rebinding page) is refused unless the server is public. At most
``max_sessions`` tabs run an app at once; one more gets a page that says why.

aiohttp's access log is off: its request line would carry the token. What
the server logs (to ``koroku.log``) names paths, never query strings, and
the websocket's route by its pattern (``/ws/{token}``).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from aiohttp import WSMsgType, web
from aiohttp.typedefs import Middleware

from koroku_tui.modes.web.access import is_loopback
from koroku_tui.modes.web.app_process import AppProcess
from koroku_tui.modes.web.page import app_page, refusal_page, static_folder

__all__ = ["ServedApp", "make_application"]

logger = logging.getLogger(__name__)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

NO_TOKEN = (
    "This page needs the link koroku-tui --serve printed, with its token; "
    "open that link (or run koroku-tui --serve again to see it)."
)
FOREIGN_ORIGIN = "Only Koroku's own page may connect to it."
_HEADERS = {
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",  # the URL's token never leaves in a Referer
    "X-Frame-Options": "DENY",  # no other site can frame the page and click in it
    "Content-Security-Policy": "frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
}


@dataclass
class ServedApp:
    """What the server runs for each tab, and how many at once."""

    argv: Sequence[str]
    """The app's command line (``python -m koroku_tui --home ...``)."""
    environment: Mapping[str, str]
    token: str
    port: int
    max_sessions: int
    public: bool = False
    running: set[AppProcess] = field(default_factory=set)

    def too_many(self) -> str | None:
        """Why one more tab cannot run an app now, or None."""
        if len(self.running) < self.max_sessions:
            return None
        return (
            f"Koroku already runs in {len(self.running)} browser tabs, the most this server "
            f"allows ([web] max_sessions = {self.max_sessions} in config.toml). Close one "
            "of them, then reload this page."
        )


def make_application(served: ServedApp) -> web.Application:
    """The aiohttp application: ``/``, ``/ws/{token}`` and ``/static``, all behind the token."""
    app = web.Application(middlewares=[_guard(served)])
    app.add_routes(
        [
            web.get("/", _index(served)),
            web.get("/ws/{token}", _websocket(served)),
            web.static("/static", static_folder()),
        ]
    )
    app.on_shutdown.append(_stop_all(served))
    return app


def _guard(served: ServedApp) -> Middleware:
    @web.middleware
    async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
        if not served.public and not _own_host(request.host, served.port):
            logger.warning("web: refused %s: Host is not this server", _logged_path(request))
            return _refusal(403, "Not this server", FOREIGN_ORIGIN)
        given = request.match_info.get("token") or request.query.get("token", "")
        if not hmac.compare_digest(given.encode(), served.token.encode()):
            logger.warning(
                "web: refused %s from %s: no token", _logged_path(request), request.remote
            )
            return _refusal(403, "The link's token is missing", NO_TOKEN)
        response = await handler(request)
        if not response.prepared:
            response.headers.update(_HEADERS)
        return response

    return guard


def _logged_path(request: web.Request) -> str:
    """The request's path for the log: the websocket's by its route, never with the token."""
    resource = request.match_info.route.resource
    return resource.canonical if resource and "token" in request.match_info else request.path


def _own_host(host: str, port: int) -> bool:
    """True for a ``Host`` naming this machine's loopback at this port."""
    name, _, given_port = host.rpartition(":")
    return given_port == str(port) and is_loopback(name)


def _refusal(status: int, title: str, sentence: str) -> web.Response:
    return web.Response(
        status=status,
        text=refusal_page(title, sentence),
        content_type="text/html",
        headers=_HEADERS,
    )


def _index(served: ServedApp) -> Handler:
    async def index(request: web.Request) -> web.StreamResponse:
        if (why := served.too_many()) is not None:
            logger.warning("web: refused a tab: %d app processes run", len(served.running))
            return _refusal(503, "Too many Koroku tabs", why)
        try:
            font_size = max(8, min(40, int(request.query.get("fontsize", "16"))))
        except ValueError:
            font_size = 16
        return web.Response(text=app_page(served.token, font_size), content_type="text/html")

    return index


def _same_origin(request: web.Request) -> bool:
    """True when the ``Origin`` header is this page's own (scheme aside: a TLS proxy)."""
    origin = request.headers.get("Origin")
    if not origin:
        return False
    parts = urlsplit(origin)
    return parts.scheme in ("http", "https") and parts.netloc == request.host


def _websocket(served: ServedApp) -> Handler:
    async def websocket(request: web.Request) -> web.StreamResponse:
        if not _same_origin(request):
            logger.warning("web: refused a websocket: Origin is not this page's")
            return _refusal(403, "Not Koroku's page", FOREIGN_ORIGIN)
        # A page that does not answer the closing handshake holds its close (and
        # the server's stop) for at most 2 s, not aiohttp's 10.
        socket = web.WebSocketResponse(heartbeat=15, timeout=2.0)
        await socket.prepare(request)
        if (why := served.too_many()) is not None:
            await socket.send_bytes(f"\r\n{why}\r\n".encode())
            await socket.close()
            return socket
        await _run_tab(served, request, socket)
        return socket

    return websocket


async def _run_tab(served: ServedApp, request: web.Request, socket: web.WebSocketResponse) -> None:
    """One tab's app, from the websocket's opening to its close."""

    async def on_meta(meta: dict[str, object]) -> None:
        # A link in an answer opens in a new tab; only web addresses: a
        # ``javascript:`` one would run in the page's origin and could drive Koroku.
        url = meta.get("url")
        if meta.get("type") == "open_url" and isinstance(url, str) and _web_address(url):
            await socket.send_str(json.dumps(["open_url", {"url": url, "new_tab": True}]))

    process = AppProcess(
        served.argv,
        served.environment,
        on_screen=socket.send_bytes,
        on_meta=on_meta,
    )
    served.running.add(process)
    try:
        await process.start(_size(request, "width", 80), _size(request, "height", 24))
        closed = asyncio.create_task(_relay(socket, process))
        ended = asyncio.create_task(process.ended())
        await asyncio.wait([closed, ended], return_when=asyncio.FIRST_COMPLETED)
        for task in (closed, ended):
            task.cancel()
    finally:
        await process.stop()  # also when the server stops: no app outlives it
        served.running.discard(process)
        with contextlib.suppress(ConnectionError):
            await socket.close()


async def _relay(socket: web.WebSocketResponse, process: AppProcess) -> None:
    """The page's keys and size to the app, until the tab closes."""
    async for message in socket:
        if message.type != WSMsgType.TEXT:
            continue
        try:
            kind, data = json.loads(message.data)[:2]
        except (ValueError, TypeError):
            continue
        if kind == "stdin" and isinstance(data, str):
            await process.send_keys(data)
        elif kind == "resize" and isinstance(data, dict):
            width, height = data.get("width"), data.get("height")
            if isinstance(width, int) and isinstance(height, int):  # the app unpacks them as is
                size = {"width": max(10, min(1000, width)), "height": max(5, min(1000, height))}
                await process.send_meta({"type": "resize", **size})
        elif kind in ("focus", "blur"):
            await process.send_meta({"type": kind})
        elif kind == "ping":
            await socket.send_json(["pong", data])


def _web_address(url: str) -> bool:
    return urlsplit(url).scheme in ("http", "https")


def _size(request: web.Request, name: str, default: int) -> int:
    try:
        return max(10, min(1000, int(request.query.get(name, default))))
    except ValueError:
        return default


def _stop_all(served: ServedApp) -> Callable[[web.Application], Awaitable[None]]:
    async def stop_all(_app: web.Application) -> None:
        await asyncio.gather(*(process.stop() for process in list(served.running)))

    return stop_all
