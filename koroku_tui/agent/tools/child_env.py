"""The environment a ``run_command`` child gets: Koroku's, minus credentials.

Two rules, checked against the google-genai SDK and google-auth it installs
(their ``os.environ`` reads):

* the variables the SDK and google-auth read *credentials* from never reach
  a child; settings that are not secret (``GOOGLE_CLOUD_PROJECT``,
  ``GOOGLE_GENAI_USE_VERTEXAI``, the base URL) do;
* any other variable whose name looks like a credential (ends in ``_KEY``,
  ``_TOKEN``, ``_SECRET``, ``PASSWORD``, ``_PASSPHRASE``, ``_PWD``,
  ``_AUTH`` or ``_CREDENTIALS``, or holds ``APIKEY``) is dropped too, unless
  the user names it in the ``tool_env_allow`` setting
  (``KOROKU_TOOL_ENV_ALLOW``);
* a variable whose *value* holds a live credential of Koroku's
  (``GEMINI_APIKEY=$GEMINI_API_KEY``) is dropped whatever its name, allowed
  or not.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Mapping

from koroku_tui.privacy import live_secrets

__all__ = [
    "SDK_CREDENTIAL_VARIABLES",
    "SECRET_NAME_SUFFIXES",
    "child_environment",
    "is_secret_name",
    "tool_environment",
]

SDK_CREDENTIAL_VARIABLES = frozenset(
    {
        # google-genai: the API key (both spellings) and the agent-platform ones.
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "GOOGLE_GENAI_API_KEY",
        "GOOGLE_GENAI_ACCESS_TOKEN",
        # May carry an Authorization header.
        "GOOGLE_GENAI_DEFAULT_HEADERS",
        # google-auth (Vertex AI): the service-account key file and the
        # certificate config (paths, but paths to credentials).
        "GOOGLE_APPLICATION_CREDENTIALS",
        "GOOGLE_API_CERTIFICATE_CONFIG",
    }
)
"""Never handed to a child, whatever the allow setting says: Koroku's own credentials."""

SECRET_NAME_SUFFIXES = (
    "_KEY",
    "_TOKEN",
    "_SECRET",
    "PASSWORD",  # DB_PASSWORD, PGPASSWORD
    "_PASSPHRASE",
    "_PWD",  # MYSQL_PWD; PWD and OLDPWD (folders) have no underscore
    "_AUTH",  # NPM_CONFIG__AUTH
    "_CREDENTIALS",
)
"""Name endings that look like credentials; dropped unless allowed by name."""
SECRET_NAME_PARTS = ("APIKEY",)
"""Name parts that look like credentials anywhere (OPENAI_APIKEY_PROD)."""

_SECRET_NAMES = frozenset(
    {
        # google-auth reads these for AWS workload identity federation; the id
        # escapes the suffix rule, so it is named (allowable like the others).
        "AWS_ACCESS_KEY_ID",
    }
)


def is_secret_name(name: str) -> bool:
    """True for a name that looks like it holds a credential (case-insensitive)."""
    upper = name.upper()
    return (
        upper in _SECRET_NAMES
        or upper.endswith(SECRET_NAME_SUFFIXES)
        or any(part in upper for part in SECRET_NAME_PARTS)
    )


def child_environment(
    environ: Mapping[str, str],
    allow: Collection[str] = (),
    live: Iterable[str] | None = None,
) -> dict[str, str]:
    """``environ`` without Koroku's credentials and without secret-looking names not in ``allow``.

    ``allow`` matches names exactly; it cannot let Koroku's own credentials
    (``SDK_CREDENTIAL_VARIABLES``, or any variable holding one of the
    ``live`` values, default: ``live_secrets.known()``) through: the model
    would then read the key with ``env``.
    """
    allowed = set(allow)
    values = live_secrets.known() if live is None else list(live)
    return {
        name: value
        for name, value in environ.items()
        if name.upper() not in SDK_CREDENTIAL_VARIABLES
        and (name in allowed or not is_secret_name(name))
        and not any(secret in value for secret in values)
    }


def tool_environment(allow: Collection[str] = ()) -> dict[str, str]:
    """What a child Koroku starts inherits (a command, a stdio MCP server): Koroku's own
    environment, passed on through :func:`child_environment`, not read as configuration."""
    return child_environment(os.environ, allow)
