"""``koroku-tui --serve`` is private: the token, the Origin, loopback unless --public.

The real command serves; a plain HTTP client (aiohttp's) plays the browser,
or another site open in it. The app processes the server starts are read
from /proc: a refused request must start none.
"""

from __future__ import annotations

import asyncio
import signal
import socket
import stat
import subprocess
import sys
from pathlib import Path

import aiohttp
import pytest
from helpers.agent_kit import stored_events
from helpers.processes import KOROKU, kill_leftovers, koroku_env, wait_until_gone
from helpers.web_kit import serving

from koroku_tui.cli import build_parser
from koroku_tui.fake_gemini import FakeGemini, text_reply
from koroku_tui.modes.web import ServeRequest, serve_problem
from koroku_tui.modes.web.access import TOKEN_FILENAME, default_port, web_token

pytestmark = pytest.mark.timeout(90)


async def test_without_the_token_nothing_is_served_and_no_app_starts(
    fake: FakeGemini, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    with serving(fake, home, cwd=tmp_path) as served:
        async with aiohttp.ClientSession() as http:
            for path in ("/", "/?token=not-the-token", "/static/js/textual.js", "/ws", "/ws/x"):
                async with http.get(served.base + path) as response:
                    assert response.status == 403, path
                    page = await response.text()
                    assert "needs the link" in page and served.token not in page
            for path in ("/ws", "/ws/not-the-token"):
                with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                    await http.ws_connect(served.base + path, origin=served.base)
                assert refused.value.status == 403, path
            assert served.app_processes() == []

            async with http.get(served.url) as response:  # the printed URL opens the page
                assert response.status == 200
                assert "textual-terminal" in await response.text()
            async with http.get(f"{served.base}/static/js/textual.js?token={served.token}") as js:
                assert js.status == 200  # the page names its files with the token
        assert served.app_processes() == []
    token_file = home / TOKEN_FILENAME
    assert token_file.read_text().strip() == served.token
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    log = (home / "koroku.log").read_text()
    assert "refused /ws" in log and served.token not in log


async def test_no_cookie_carries_the_token(fake: FakeGemini, tmp_path: Path) -> None:
    """Cookies are not kept apart by port: one would reach every server on 127.0.0.1."""
    with serving(fake, tmp_path / "home", cwd=tmp_path) as served:
        as_cookie = {"Cookie": f"koroku_token={served.token}"}
        async with aiohttp.ClientSession() as http:
            async with http.get(served.url) as response:
                assert response.status == 200
                assert "Set-Cookie" not in response.headers
            async with http.get(served.base + "/", headers=as_cookie) as response:
                assert response.status == 403  # the address holds the token, never a cookie


async def test_a_foreign_origin_cannot_drive_koroku_and_a_closed_tab_ends_its_app(
    fake: FakeGemini, tmp_path: Path
) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[web]\nmax_sessions = 1\n")
    with serving(fake, tmp_path / "home", "--config", str(config), cwd=tmp_path) as served:
        async with aiohttp.ClientSession() as http:
            for origin in ("http://evil.example", "null", served.base.replace("127.0.0.1", "x")):
                with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                    await http.ws_connect(served.websocket, origin=origin)
                assert refused.value.status == 403, origin
            assert served.app_processes() == []

            tab = await http.ws_connect(
                served.websocket + "?width=100&height=30", origin=served.base
            )
            first = await tab.receive_bytes(timeout=60)  # the app draws its first frame
            assert b"\x1b[" in first  # screen output, not a failure sentence
            [app] = served.app_processes()
            async with http.get(served.url) as second:  # one tab more than [web] max_sessions
                assert second.status == 503
                assert "max_sessions = 1" in await second.text()
            await tab.close()
            assert wait_until_gone([app], within=20) == [], "the app outlived its tab"


async def test_a_dns_rebinding_page_and_a_page_without_origin_are_refused(
    fake: FakeGemini, tmp_path: Path
) -> None:
    """evil.example resolved to 127.0.0.1: the browser sends Host and Origin as evil's."""
    with serving(fake, tmp_path / "home", cwd=tmp_path) as served:
        port = served.base.rsplit(":", 1)[1]
        rebound = {"Host": f"evil.example:{port}"}
        async with aiohttp.ClientSession() as http:
            async with http.get(served.url, headers=rebound) as response:
                assert response.status == 403
                assert served.token not in await response.text()
            for headers, origin in ((rebound, f"http://evil.example:{port}"), ({}, None)):
                with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                    await http.ws_connect(served.websocket, headers=headers, origin=origin)
                assert refused.value.status == 403, headers
        assert served.app_processes() == []


def test_a_host_beyond_loopback_needs_public(fake: FakeGemini, tmp_path: Path) -> None:
    assert KOROKU is not None
    env = koroku_env(fake, tmp_path / "home")
    for flags in (["--serve", "--host", "0.0.0.0"], ["--port", "8123"]):
        done = subprocess.run([KOROKU, *flags], env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 2, flags
        assert done.stdout == "" and len(done.stderr.splitlines()) == 1, done.stderr
    assert "--public" in done.stderr or "--serve" in done.stderr
    assert not (tmp_path / "home" / TOKEN_FILENAME).exists()


def test_the_token_is_made_once_and_new_token_replaces_it(fake: FakeGemini, tmp_path: Path) -> None:
    home = tmp_path / "home"
    first = web_token(home).value
    assert web_token(home) == (first, None) and len(first) >= 43
    assert stat.S_IMODE((home / TOKEN_FILENAME).stat().st_mode) == 0o600
    with serving(fake, home, "--new-token", cwd=tmp_path) as served:
        assert served.token != first
    assert (home / TOKEN_FILENAME).read_text().strip() == served.token
    assert stat.S_IMODE((home / TOKEN_FILENAME).stat().st_mode) == 0o600


def test_a_token_other_users_could_read_is_replaced(tmp_path: Path) -> None:
    home = tmp_path / "home"
    first = web_token(home).value
    (home / TOKEN_FILENAME).chmod(0o644)  # copied in by hand, or a umask's doing
    token = web_token(home)
    assert token.value != first, "a token others could read was kept"
    assert "could be read by other users" in (token.renewed_because or "")
    assert stat.S_IMODE((home / TOKEN_FILENAME).stat().st_mode) == 0o600
    assert web_token(home) == (token.value, None)


async def test_an_ipv6_loopback_host_serves_as_the_url_writes_it(
    fake: FakeGemini, tmp_path: Path
) -> None:
    with serving(fake, tmp_path / "home", "--host", "[::1]", cwd=tmp_path) as served:
        assert served.base.startswith("http://[::1]:")
        async with aiohttp.ClientSession() as http, http.get(served.url) as response:
            assert response.status == 200


async def test_stopping_the_server_ends_every_tab_s_app(fake: FakeGemini, tmp_path: Path) -> None:
    with serving(fake, tmp_path / "home", cwd=tmp_path) as served:
        async with aiohttp.ClientSession() as http:
            tab = await http.ws_connect(served.websocket, origin=served.base)
            assert b"\x1b[" in await tab.receive_bytes(timeout=60)
            [app] = served.app_processes()
            served.process.send_signal(signal.SIGINT)  # ctrl+c in the server's terminal
            assert await asyncio.to_thread(served.process.wait, 30) == 0
            assert wait_until_gone([app], within=5) == [], "an app outlived the server"


def test_the_port_is_the_same_for_a_home_and_the_next_free_one_when_taken(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    port = default_port(home, "127.0.0.1")
    assert default_port(home, "127.0.0.1") == port  # a bookmark keeps working
    assert default_port(tmp_path / "other", "127.0.0.1") != port
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", port))
        taken.listen()
        assert default_port(home, "127.0.0.1") != port


def test_each_tab_gets_the_app_flags_that_apply(tmp_path: Path) -> None:
    flags = ["--serve", "--model", "gemini-x", "--session", "3", "--config", "my.toml"]
    args = build_parser().parse_args(flags)
    request = ServeRequest.from_args(args, tmp_path / "home", max_sessions=2)
    assert request.app_flags == (
        "--home",
        str(tmp_path / "home"),
        "--model",
        "gemini-x",
        "--session",
        "3",
        "--config",
        str(Path("my.toml").absolute()),
    )
    assert serve_problem(args) is None
    with_print = build_parser().parse_args(["--serve", "--print", "hi"])
    assert serve_problem(with_print) == ("--serve runs the app in browser tabs: leave out --print.")


def test_the_web_server_s_aiohttp_costs_print_nothing(fake: FakeGemini, tmp_path: Path) -> None:
    """google-genai imports aiohttp when installed; only --serve needs it."""
    fake.add(text_reply("Fine."))
    script = (
        "import sys\nfrom koroku_tui.cli import main\ncode = main(['--print', 'hi'])\n"
        "from google.genai import _api_client\n"
        "print(code, _api_client.has_aiohttp, sys.modules.get('aiohttp'))"
    )
    env = koroku_env(fake, tmp_path / "home")
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.stdout.splitlines()[-1] == "0 False None", done.stderr


async def test_a_killed_server_s_apps_end_too(fake: FakeGemini, tmp_path: Path) -> None:
    """kill -9 runs no handler: each app sees its pipe from the server close, and quits."""
    with serving(fake, tmp_path / "home", cwd=tmp_path) as served:
        async with aiohttp.ClientSession() as http:
            tab = await http.ws_connect(served.websocket, origin=served.base)
            assert b"\x1b[" in await tab.receive_bytes(timeout=60)
            [app] = served.app_processes()
            served.process.kill()
            try:
                assert wait_until_gone([app], within=20) == [], "an app outlived its server"
            finally:
                kill_leftovers([app])


async def test_a_paste_in_the_browser_arrives_whole(fake: FakeGemini, tmp_path: Path) -> None:
    """Coloured text pasted in the page: its ESCs do not break the paste up, nor its CR send."""
    fake.add(text_reply("Got the paste."))
    home = tmp_path / "home"
    with serving(fake, home, cwd=tmp_path) as served:
        async with aiohttp.ClientSession() as http:
            tab = await http.ws_connect(served.websocket, origin=served.base)
            assert b"\x1b[" in await tab.receive_bytes(timeout=60)
            pasted = "one \x1b[31mred\x1b[0m\rtwo"  # as xterm.js sends a paste
            await tab.send_json(["stdin", f"\x1b[200~{pasted}\x1b[201~"])
            await tab.send_json(["stdin", "\r"])  # Enter: sent now, once
            drawn = b""
            while b"Got the paste." not in drawn:
                drawn += await tab.receive_bytes(timeout=60)
    [message, _answer] = await stored_events(home / "koroku.db")
    assert "red" in message.model_dump_json() and "two" in message.model_dump_json()
