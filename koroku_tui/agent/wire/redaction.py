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

A secret may be cut across parts: a reply's last chunk carries a signature
and is never merged with the text before it (``streaming.py``). Neighbouring
text parts of the same kind (answer or thought) are matched as one text,
and each match is cut out of every part it covers, signatures staying on
their parts.

What this cannot catch: the key transformed (base64, split across lines,
reversed) and keys shorter than ``MIN_SECRET_LENGTH`` (too short to replace
without mangling ordinary text; real keys are ~39 characters).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from google import genai
from google.genai import types

from koroku_tui.agent.wire.credentials import WITHDRAWN_VARIABLES, secret_values
from koroku_tui.privacy import live_secrets
from koroku_tui.privacy.live_secrets import MIN_SECRET_LENGTH, REDACTED

__all__ = ["KEY_VARIABLES", "MIN_SECRET_LENGTH", "REDACTED", "Redactor"]

KEY_VARIABLES = WITHDRAWN_VARIABLES
"""Variables whose *values* are live credentials (the others in child_env name files)."""

TokenSource = Callable[[], str | None]
"""Reads a credential that changes while Koroku runs (a Vertex AI access token)."""


class Redactor:
    """Replaces every live secret value by ``[redacted]`` in text, Contents and JSON values.

    Methods return their argument itself when nothing in it matched, so a
    Content without a secret keeps its identity (and cache entries) intact.
    """

    def __init__(self, secrets: Iterable[str], tokens: Sequence[TokenSource] = ()) -> None:
        kept = {s.strip() for s in secrets if len(s.strip()) >= MIN_SECRET_LENGTH}
        # Longest first: a key that contains another is replaced whole.
        self._secrets = sorted(kept, key=len, reverse=True)
        self._tokens = tuple(tokens)

    @classmethod
    def for_client(
        cls,
        client: genai.Client | None,
        environ: Mapping[str, str] | None = None,
        *,
        more: Iterable[str] = (),
    ) -> Redactor:
        """The key ``client`` authenticates with, every credential value in the environment,
        and ``more`` (the MCP servers' bearer tokens).

        Also remembered process-wide, so that the log leaves them out too.
        """
        values = [*secret_values(environ), *more]
        tokens: list[TokenSource] = []
        if client is not None:
            # The SDK keeps the key it sends (from the environment or api_key=)
            # and, on Vertex AI, the google-auth credentials whose access
            # token it fetches on the first request; there is no public accessor.
            api = client._api_client
            values.append(getattr(api, "api_key", None) or "")
            tokens.append(lambda: getattr(getattr(api, "_credentials", None), "token", None))
        live_secrets.remember(values)
        return cls(values, tokens)

    def _current(self) -> list[str]:
        """The secrets now: the fixed ones and the tokens as they are at this moment."""
        if not self._tokens:
            return self._secrets
        extra = [t for source in self._tokens if len(t := (source() or "")) >= MIN_SECRET_LENGTH]
        return sorted({*self._secrets, *extra}, key=len, reverse=True) if extra else self._secrets

    def __bool__(self) -> bool:
        return bool(self._secrets or self._tokens)

    def text(self, text: str) -> str:
        """``text`` with every secret replaced."""
        return live_secrets.redact(text, self._current())

    def value(self, value: Any) -> Any:
        """A JSON-like value (call arguments, a function response), secrets replaced, keys too."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            changed = {self._key(key): self.value(item) for key, item in value.items()}
            if len(changed) < len(value):  # two keys redacted to the same text
                changed = {
                    f"{self._key(key)} ({index})": self.value(item)
                    for index, (key, item) in enumerate(value.items(), 1)
                }
            same = all(k in value and changed[k] is value[k] for k in changed)
            return value if same else changed
        if isinstance(value, list):
            items = [self.value(item) for item in value]
            return value if all(a is b for a, b in zip(items, value, strict=True)) else items
        return value

    def _key(self, key: Any) -> Any:
        return self.text(key) if isinstance(key, str) else key

    def content(self, content: types.Content) -> types.Content:
        """``content`` with secrets replaced in every part; the same object if none matched."""
        secrets = self._current()
        if not secrets or not content.parts:
            return content
        parts = [self._payload(part) for part in content.parts]
        for run in _text_runs(parts):
            texts = _redact_run([parts[i].text or "" for i in run], secrets)
            for index, text in zip(run, texts, strict=True):
                if text != parts[index].text:
                    # thought and thought_signature stay as they are (see the module doc).
                    parts[index] = parts[index].model_copy(update={"text": text})
        if all(new is old for new, old in zip(parts, content.parts, strict=True)):
            return content
        return content.model_copy(update={"parts": parts})

    def _payload(self, part: types.Part) -> types.Part:
        """``part`` with its call arguments and function response redacted (text: see runs)."""
        update: dict[str, Any] = {}
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


def _text_runs(parts: Sequence[types.Part]) -> list[list[int]]:
    """Indexes of neighbouring text parts of the same kind (answer or thought)."""
    runs: list[list[int]] = []
    for index, part in enumerate(parts):
        if part.text is None:
            continue
        follows = bool(runs) and runs[-1][-1] == index - 1
        if follows and bool(parts[index - 1].thought) == bool(part.thought):
            runs[-1].append(index)
        else:
            runs.append([index])
    return runs


def _redact_run(texts: list[str], secrets: Sequence[str]) -> list[str]:
    """``texts`` with each secret found in their concatenation cut out of every text it covers.

    ``[redacted]`` goes where the secret began; the texts still join to the
    concatenation with each secret replaced.
    """
    joined = "".join(texts)
    cut = live_secrets.spans(joined, secrets)
    if not cut:
        return texts
    result: list[str] = []
    start = 0
    for text in texts:
        end = start + len(text)
        pieces: list[str] = []
        position = start
        for span_start, span_end in cut:
            if span_end <= start or span_start >= end:
                continue
            if span_start >= start:
                pieces += [joined[position:span_start], REDACTED]
            position = max(position, min(span_end, end))
        pieces.append(joined[position:end])
        result.append("".join(pieces))
        start = end
    return result
