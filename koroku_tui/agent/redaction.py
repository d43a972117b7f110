"""The second line of defence for the API key: ``[redacted]`` wherever it would be kept or sent.

Children never get the key in their environment (``tools/child_env.py``),
but a command can still print it (``cat ~/.bashrc``) and a model that saw it
could repeat it. Everything the agent stores or sends goes through a
:class:`Redactor` holding the live key values: user messages, model replies
(text, thoughts and call arguments), tool results, and the compaction
transcript. A stored row from before this existed is redacted when it is
converted for a request.

Thought signatures are left byte for byte as they came. A signature is the
model's encrypted reasoning state, not a checksum of the visible text: the
API requires it back (on the first call of each step in the current turn)
and rejects a missing or malformed one, but documents no check of the part's
text against it, so a part whose text lost the key is still accepted.
Dropping the signature instead would turn a call step into a 400 and throw
away the model's reasoning; sending the key back would defeat the point.

What this cannot catch: the key transformed (base64, split across lines,
reversed) and keys shorter than ``MIN_SECRET_LENGTH`` (too short to replace
without mangling ordinary text; real keys are ~39 characters).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

from google import genai
from google.genai import types

__all__ = ["KEY_VARIABLES", "MIN_SECRET_LENGTH", "REDACTED", "Redactor"]

REDACTED = "[redacted]"
MIN_SECRET_LENGTH = 8
"""Shorter values are not replaced: every "x" in the history would become ``[redacted]``."""

KEY_VARIABLES = (
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_GENAI_API_KEY",
    "GOOGLE_GENAI_ACCESS_TOKEN",
)
"""Variables whose *values* are live credentials (the others in child_env name files)."""


class Redactor:
    """Replaces every live secret value by ``[redacted]`` in text, Contents and JSON values.

    Methods return their argument itself when nothing in it matched, so a
    Content without a secret keeps its identity (and cache entries) intact.
    """

    def __init__(self, secrets: Iterable[str]) -> None:
        kept = {s for s in secrets if len(s) >= MIN_SECRET_LENGTH}
        # Longest first: a key that contains another is replaced whole.
        self._secrets = sorted(kept, key=len, reverse=True)

    @classmethod
    def for_client(
        cls, client: genai.Client | None, environ: Mapping[str, str] | None = None
    ) -> Redactor:
        """The key ``client`` authenticates with, and every key value in the environment."""
        env = os.environ if environ is None else environ
        values = [env.get(name, "").strip() for name in KEY_VARIABLES]
        if client is not None:
            # The SDK keeps the key it sends (from the environment or api_key=)
            # here; there is no public accessor.
            values.append(getattr(client._api_client, "api_key", None) or "")
        return cls(values)

    def __bool__(self) -> bool:
        return bool(self._secrets)

    def text(self, text: str) -> str:
        """``text`` with every secret replaced."""
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        return text

    def value(self, value: Any) -> Any:
        """A JSON-like value (call arguments, a function response) with secrets replaced."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            changed = {key: self.value(item) for key, item in value.items()}
            same = all(changed[key] is value[key] for key in value)
            return value if same else changed
        if isinstance(value, list):
            items = [self.value(item) for item in value]
            return value if all(a is b for a, b in zip(items, value, strict=True)) else items
        return value

    def content(self, content: types.Content) -> types.Content:
        """``content`` with secrets replaced in every part; the same object if none matched."""
        if not self._secrets or not content.parts:
            return content
        parts = [self._part(part) for part in content.parts]
        if all(new is old for new, old in zip(parts, content.parts, strict=True)):
            return content
        return content.model_copy(update={"parts": parts})

    def _part(self, part: types.Part) -> types.Part:
        update: dict[str, Any] = {}
        if part.text is not None and (text := self.text(part.text)) is not part.text:
            # thought and thought_signature stay as they are (see the module doc).
            update["text"] = text
        call = part.function_call
        if call is not None and call.args and (args := self.value(call.args)) is not call.args:
            update["function_call"] = call.model_copy(update={"args": args})
        response = part.function_response
        if (
            response is not None
            and response.response
            and (payload := self.value(response.response)) is not response.response
        ):
            update["function_response"] = response.model_copy(update={"response": payload})
        return part.model_copy(update=update) if update else part
