"""Koroku's own credentials: where they are read, and where their values are.

At start-up the command line takes the variables holding credential *values*
(``WITHDRAWN_VARIABLES``) out of ``os.environ`` and keeps them here
(:func:`withdraw_credentials`), so nothing Koroku later starts or reads
through the environment sees them; ``make_client`` hands the key to the SDK
explicitly. (The copy the kernel shows in ``/proc/<pid>/environ`` is handled
by ``koroku_tui.privacy.process_privacy``.)

:func:`secret_values` lists every value redaction must know: those
variables, the values in ``GOOGLE_GENAI_DEFAULT_HEADERS``, and for Vertex AI
the secrets of the service-account or user credentials file google-auth
reads.

The one module of Koroku that reads credentials from the environment (the
SDK reads ``GOOGLE_GEMINI_BASE_URL`` and the Vertex AI variables itself).
They are not settings: ``Settings`` never holds a key (see ``koroku_tui.modes.wiring``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, MutableMapping
from pathlib import Path

__all__ = [
    "KEY_VARIABLES",
    "WITHDRAWN_VARIABLES",
    "credential_environment",
    "implicit_api_key",
    "secret_values",
    "uses_vertex",
    "withdraw_credentials",
]

KEY_VARIABLES = ("GOOGLE_API_KEY", "GEMINI_API_KEY")
"""Where the SDK reads the API key, in its order of precedence."""

WITHDRAWN_VARIABLES = (
    *KEY_VARIABLES,
    # The SDK's agent-platform credentials (Koroku does not use that API).
    "GOOGLE_GENAI_API_KEY",
    "GOOGLE_GENAI_ACCESS_TOKEN",
    "GOOGLE_GENAI_DEFAULT_HEADERS",
)
"""Variables whose values are credentials. ``GOOGLE_APPLICATION_CREDENTIALS``
is a path google-auth reads when the first request is made, so it stays (a
command never gets it: ``tools/child_env.py``)."""

_CREDENTIAL_FIELDS = ("private_key", "private_key_id", "client_secret", "refresh_token")
"""Secret fields of a service-account key or ``gcloud auth application-default`` file."""
_MAX_CREDENTIALS_FILE = 1_000_000
_MIN_KEY_LINE = 16
"""PEM body lines shorter than this (the last one) are not worth a replacement."""

_withdrawn: dict[str, str] = {}


def withdraw_credentials(environ: MutableMapping[str, str] | None = None) -> list[str]:
    """Move the credential values out of ``environ`` (default ``os.environ``); returns the names."""
    env = os.environ if environ is None else environ
    names = [name for name in WITHDRAWN_VARIABLES if name in env]
    for name in names:
        _withdrawn[name] = env.pop(name)
    return names


def credential_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """``environ`` (default ``os.environ``) with the withdrawn credentials back in."""
    env = os.environ if environ is None else environ
    return {**_withdrawn, **env}


def uses_vertex(env: Mapping[str, str]) -> bool:
    """The SDK's switch: ``GOOGLE_GENAI_USE_ENTERPRISE``, else ``GOOGLE_GENAI_USE_VERTEXAI``."""
    flag = env.get("GOOGLE_GENAI_USE_ENTERPRISE", env.get("GOOGLE_GENAI_USE_VERTEXAI", ""))
    return flag.lower() in ("1", "true")


def implicit_api_key(environ: Mapping[str, str] | None = None) -> str | None:
    """The key the SDK would have read from the environment, had it not been withdrawn.

    None while the SDK can still read it itself (nothing was withdrawn), and
    in the one case where the SDK ignores a key from the environment: Vertex
    AI with a project or location from the environment.
    """
    env = os.environ if environ is None else environ
    if any(name in env for name in KEY_VARIABLES):
        return None  # the SDK reads it, with its own precedence rules
    merged = credential_environment(env)
    key = next((merged[name] for name in KEY_VARIABLES if merged.get(name)), None)
    place = merged.get("GOOGLE_CLOUD_PROJECT") or merged.get("GOOGLE_CLOUD_LOCATION")
    if key and uses_vertex(merged) and place:
        return None
    return key


def secret_values(environ: Mapping[str, str] | None = None) -> list[str]:
    """Every credential value known from the environment (withdrawn ones included)."""
    env = credential_environment(environ)
    values = [env.get(name, "") for name in WITHDRAWN_VARIABLES]
    values += _header_values(env.get("GOOGLE_GENAI_DEFAULT_HEADERS", ""))
    files = [env.get("GOOGLE_APPLICATION_CREDENTIALS", "")]
    if uses_vertex(env):
        config = env.get("CLOUDSDK_CONFIG") or str(Path.home() / ".config" / "gcloud")
        files.append(str(Path(config) / "application_default_credentials.json"))
    for file in filter(None, files):
        values += _file_secrets(Path(file))
    return [value.strip() for value in values if value.strip()]


def _header_values(raw: str) -> list[str]:
    """Header values from ``{"Authorization": "Bearer ..."}``, with the token alone too."""
    try:
        headers = json.loads(raw) if raw.strip() else {}
    except ValueError:
        return []
    if not isinstance(headers, dict):
        return []
    values = [value for value in headers.values() if isinstance(value, str)]
    return values + [value.split()[-1] for value in values if value.split()]


def _file_secrets(path: Path) -> list[str]:
    """The secret fields of a credentials JSON file; nothing if it cannot be read."""
    try:
        with path.open("rb") as file:
            data = json.loads(file.read(_MAX_CREDENTIALS_FILE))
    except (OSError, ValueError):
        return []
    if not isinstance(data, dict):
        return []
    values: list[str] = []
    for name in _CREDENTIAL_FIELDS:
        value = data.get(name)
        if not isinstance(value, str):
            continue
        values.append(value)
        if name == "private_key":
            # A command shows the key with real newlines (a PEM file) or with
            # "\n" escapes (cat of the JSON file): each body line matches both.
            values += [
                line
                for line in value.splitlines()
                if len(line) >= _MIN_KEY_LINE and not line.startswith("-----")
            ]
    return values
