"""Building the google-genai client the agent talks through.

Credentials and the endpoint come from the SDK's standard environment
(``GEMINI_API_KEY`` / ``GOOGLE_API_KEY``, ``GOOGLE_GEMINI_BASE_URL``, the
Vertex variables); the command line takes the key out of the environment at
start-up (``credentials.py``) and it is handed to the SDK explicitly. Koroku
pins what the SDK would otherwise pick silently:

* the API version (the SDK's default moved from v1beta to v1 in 3.0);
* the async transport: Koroku hands the SDK its own ``httpx2.AsyncClient``,
  because the SDK switches to aiohttp whenever aiohttp happens to be
  importable, and the two raise different errors;
* retries: the SDK's are turned off (one attempt) because the agent retries
  itself, so it can tell the user it is waiting and honour ``Retry-After``.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping

import httpx2
from google import genai
from google.genai import types

from koroku_tui.agent.wire.credentials import credential_environment, implicit_api_key, uses_vertex
from koroku_tui.agent.wire.deep_lines import cap_stream_depth
from koroku_tui.config.settings import COMMAND

DEFAULT_API_VERSION = "v1beta"
DEFAULT_TIMEOUT_SECONDS = 120.0

_KEY_VARIABLES = ("GEMINI_API_KEY", "GOOGLE_API_KEY")


def missing_key_help(command: str = COMMAND) -> str:
    """What to do without a key; ``command`` is how the user starts Koroku (``uv run ...``)."""
    return (
        "No Gemini API key found. Get one at https://aistudio.google.com/apikey and set it "
        f"with `export GEMINI_API_KEY=...`, or try Koroku offline with `{command} --demo`."
    )


MISSING_KEY_HELP = missing_key_help()
"""The advice with the command as installed (``koroku-tui``)."""


def has_credentials(environ: Mapping[str, str] | None = None) -> bool:
    """True when the environment (or what was withdrawn) has an API key or picks Vertex AI."""
    env = credential_environment(environ)  # None: os.environ, read in credentials.py alone
    if uses_vertex(env):
        return True
    return any(env.get(name) for name in _KEY_VARIABLES)


def make_client(
    *,
    api_version: str = DEFAULT_API_VERSION,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
    base_url: str | None = None,
    api_key: str | None = None,
) -> genai.Client:
    """A client on the pinned transport and API version, with SDK retries off.

    ``base_url`` and ``api_key`` override the environment (tests and the demo
    point the real SDK at the local fake server this way). Without
    ``api_key``, a key withdrawn from the environment is passed explicitly.
    """
    http = cap_stream_depth(httpx2.AsyncClient())  # a reply of any depth parses
    options = types.HttpOptions(
        api_version=api_version,
        base_url=base_url,
        timeout=int(timeout_seconds * 1000),  # the SDK takes milliseconds
        retry_options=types.HttpRetryOptions(attempts=1),
        httpx_async_client=http,
    )
    client = genai.Client(api_key=api_key or implicit_api_key(), http_options=options)
    _TRANSPORTS[client] = http
    return client


# The SDK's aclose() leaves a caller-supplied httpx client open on purpose, so
# Koroku remembers the transport it handed over and closes it itself.
_TRANSPORTS: weakref.WeakKeyDictionary[genai.Client, httpx2.AsyncClient] = (
    weakref.WeakKeyDictionary()
)


async def close_client(client: genai.Client) -> None:
    """Close a client from ``make_client``: the SDK's side and Koroku's transport."""
    await client.aio.aclose()
    http = _TRANSPORTS.pop(client, None)
    if http is not None:
        await http.aclose()
