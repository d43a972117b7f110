"""The pages the server sends: the app's page, and the sentences that refuse one.

The app's page is textual-serve's terminal (xterm.js in ``textual.js``, its
CSS and fonts, served from the installed package) in a page of our own: no
font from the network (textual-serve's template loads Google Fonts), the
websocket's address taken from the page's own, and a line under the terminal
for the keys the browser keeps for itself.

The app's page carries the token in every address it names (its files'
``?token=``, the websocket's ``/ws/TOKEN``: textual.js appends its own query
to that one), so no cookie is needed, and none is set: cookies are shared by
every port of a host, so any other server on 127.0.0.1 the browser visits
would receive one. Only this origin can read the page; a refusal page never
holds the token.
"""

from __future__ import annotations

import html
from importlib.resources import files
from pathlib import Path
from urllib.parse import quote

__all__ = ["KEYS_LINE", "app_page", "refusal_page", "static_folder"]

KEYS_LINE = (
    "The browser keeps ctrl+l, ctrl+t, ctrl+n, ctrl+w: use alt+l (new), alt+t (tools, trash), "
    "alt+n (unqueue, add memory), alt+backspace (delete a word)."
)
"""The browser keeps ctrl+w, ctrl+t, ctrl+n (and ctrl+l in some) for itself."""


def static_folder() -> Path:
    """textual-serve's static files (``js/textual.js``, ``css/xterm.css``, ``fonts/``)."""
    return Path(str(files("textual_serve") / "static"))


_APP_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Koroku</title>
<link rel="stylesheet" href="/static/css/xterm.css?token=TOKEN">
<script src="/static/js/textual.js?token=TOKEN"></script>
<style>
@font-face {
  font-family: "Roboto Mono";
  src: url("/static/fonts/RobotoMono-VariableFont_wght.ttf?token=TOKEN") format("truetype");
}
html, body { margin: 0; height: 100%; background: #0c181f; }
body { display: flex; flex-direction: column; }
#terminal { flex: 1; min-height: 0; overflow: hidden; }  /* the ended line stays clickable */
#keys, .ended { font: 13px "Roboto Mono", monospace; color: #9fb3bf; padding: 2px 8px; }
.ended { display: none; color: #fff; padding: 8px; }
body.-closed .ended { display: block; }
.ended a { color: #ac5af4; }
</style>
</head>
<body>
<div id="terminal" class="textual-terminal" data-font-size="FONT_SIZE"></div>
<div class="ended">This Koroku has ended. <a href="/?token=TOKEN">Start another</a>.</div>
<div id="keys">KEYS_LINE</div>
<script>
// Same host, port and scheme as this page: a proxy or a tunnel keeps working.
document.getElementById("terminal").dataset.sessionWebsocketUrl =
  (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws/TOKEN";
</script>
</body>
</html>
"""


def app_page(token: str, font_size: int = 16) -> str:
    """The page that runs one Koroku in the browser, its addresses carrying ``token``."""
    return (
        _APP_PAGE.replace("FONT_SIZE", str(font_size))
        .replace("KEYS_LINE", html.escape(KEYS_LINE))
        .replace("TOKEN", html.escape(quote(token, safe="")))
    )


def refusal_page(title: str, sentence: str) -> str:
    """A small page saying why nothing runs (no token, too many tabs); never the token."""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>Koroku: {html.escape(title)}</title></head>"
        '<body style="font: 16px sans-serif; margin: 3em; max-width: 40em">'
        f"<h1>{html.escape(title)}</h1><p>{html.escape(sentence)}</p></body></html>\n"
    )
