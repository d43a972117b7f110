"""Secrets that must not reach a command, the database or the model.

``STRIPPED`` names never reach a ``run_command`` child (unless a suffix
rule name is allowed); ``KEPT`` ones do. ``KEY_IN_TEXT`` holds places a tool
or the model can put the live key; ``{key}`` stands for it.
"""

from __future__ import annotations

STRIPPED = [
    "GEMINI_API_KEY",  # the SDK's key, first spelling
    "GOOGLE_API_KEY",  # the SDK's key, second spelling (wins when both are set)
    "GOOGLE_GENAI_API_KEY",  # the SDK's agent-platform key
    "GOOGLE_GENAI_ACCESS_TOKEN",  # the SDK's agent-platform bearer token
    "GOOGLE_GENAI_DEFAULT_HEADERS",  # may carry an Authorization header
    "GOOGLE_APPLICATION_CREDENTIALS",  # google-auth: service-account key file
    "GOOGLE_API_CERTIFICATE_CONFIG",  # google-auth: client certificate config
    "AWS_ACCESS_KEY_ID",  # google-auth federation; no secret suffix, named
    "AWS_SECRET_ACCESS_KEY",  # _KEY
    "FOO_TOKEN",  # _TOKEN
    "GITHUB_TOKEN",  # _TOKEN, the classic one a model would love to read
    "DB_PASSWORD",  # _PASSWORD
    "CLIENT_SECRET",  # _SECRET
    "stripe_api_key",  # lower case: matched case-insensitively
    "PGPASSWORD",  # PASSWORD without an underscore (psql)
    "MYSQL_PWD",  # _PWD (mysql)
    "OPENAI_APIKEY",  # APIKEY without an underscore
    "APIKEY_PROD",  # APIKEY anywhere in the name
    "NPM_CONFIG__AUTH",  # _AUTH (npm)
    "AWS_CREDENTIALS",  # _CREDENTIALS
    "GPG_PASSPHRASE",  # _PASSPHRASE
]

KEY_ALIASES = [
    "GEMINI_APIKEY",  # the key under a misspelt name (also caught by the name rule)
    "MY_ALIAS",  # a name no rule would flag
    "KOROKU_PROBE_URL",  # the key inside a longer value: https://x/?key=...
]
"""Names that hold Koroku's live key as (part of) their value: never passed, even if allowed."""

SDK_CREDENTIALS_NOT_ALLOWABLE = [
    "GEMINI_API_KEY",  # allowing it by name must not hand the model the key
    "GOOGLE_API_KEY",
    "GOOGLE_APPLICATION_CREDENTIALS",
]

KEPT = [
    "PATH",  # commands must still run
    "HOME",
    "GOOGLE_CLOUD_PROJECT",  # read by the SDK, but not a secret
    "GOOGLE_GENAI_USE_VERTEXAI",  # a switch, not a secret
    "MONKEY",  # ends in KEY, not _KEY
    "TOKENIZERS_PARALLELISM",  # starts with TOKEN, does not end in it
    "KEY_PATH",  # _KEY in the middle
    "PWD",  # the current folder: PWD with no underscore before it
    "OLDPWD",  # the previous folder
    "SSH_AUTH_SOCK",  # _AUTH in the middle: git over ssh needs it
]

KEY_IN_TEXT = [
    "{key}",  # the whole output
    "export GEMINI_API_KEY={key}\n",  # a shell profile
    '{{"api_key": "{key}"}}',  # JSON
    "{key}{key} and again {key}",  # repeated, back to back
    "prefix-{key}-suffix",  # glued to other text
]

KEY_CUTS = [
    1,  # one character in the first part
    20,  # half and half
    38,  # one character left for the signed part
]
"""Where the key is cut between a reply's text and its signed last part."""

KEY_IN_ARGUMENTS = [
    {"{key}": "value"},  # the key as an argument name
    {"env": {"GEMINI_API_KEY={key}": True}},  # inside a nested name
    {"list": [{"{key}": 1}]},  # a name in a list
]
"""Call arguments whose *names* hold the key; ``{key}`` stands for it."""
