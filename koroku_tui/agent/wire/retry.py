"""When and how long to wait before sending a failed request again.

The SDK's own retries are off (see ``client.py``): it ignores ``Retry-After``
and cannot tell the user it is waiting. Here a request is retried on the
transient failures Google documents (408, 429, 500, 502, 503, 504), on
timeouts and on connection errors, with exponential backoff and jitter. A
delay the server asks for (``Retry-After`` header, ``RetryInfo.retryDelay`` in
the error details) wins over the backoff, within a cap.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

import httpx2
from google.genai import errors

__all__ = ["RETRYABLE_CODES", "RetryPolicy", "is_retryable", "server_retry_delay"]

RETRYABLE_CODES = frozenset({408, 429, 500, 502, 503, 504})
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s*$")


@dataclass(frozen=True)
class RetryPolicy:
    """How many attempts a request gets and how long to wait between them."""

    attempts: int = 4
    """Total attempts, the first one included (1 = never retry)."""
    initial_delay: float = 1.0
    """Seconds before the second attempt; doubles (``multiplier``) after each failure."""
    multiplier: float = 2.0
    max_delay: float = 30.0
    """Cap on the computed backoff, in seconds."""
    jitter: float = 0.25
    """Each delay is scaled by a random factor in ``[1 - jitter, 1 + jitter]``."""
    max_server_delay: float = 60.0
    """Cap on a delay the server asks for; a longer wait is not worth holding the turn."""

    def delay(self, failed_attempts: int, server_delay: float | None = None) -> float:
        """Seconds to wait after ``failed_attempts`` failures (1 for the first retry)."""
        if server_delay is not None:
            return max(0.0, min(server_delay, self.max_server_delay))
        base = self.initial_delay * self.multiplier ** max(0, failed_attempts - 1)
        base = min(base, self.max_delay)
        # Jitter spreads out clients that failed together (e.g. on one 503 burst).
        factor = 1.0 + random.uniform(-self.jitter, self.jitter) if self.jitter else 1.0
        return max(0.0, base * factor)


def is_retryable(exc: BaseException) -> bool:
    """True for failures worth another attempt: transient codes, timeouts, lost connections."""
    if isinstance(exc, errors.APIError):
        return exc.code in RETRYABLE_CODES
    # A transport error means no HTTP answer at all (refused, reset, timed out).
    return isinstance(exc, httpx2.TransportError | TimeoutError | ConnectionError)


def _parse_duration(value: object) -> float | None:
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        match = _DURATION.match(value)
        if match:
            return float(match.group(1))
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _retry_info_delay(exc: errors.APIError) -> float | None:
    body = exc.details.get("error", exc.details) if isinstance(exc.details, dict) else None
    if not isinstance(body, dict):
        return None
    for detail in body.get("details") or ():
        if isinstance(detail, dict) and str(detail.get("@type", "")).endswith("RetryInfo"):
            return _parse_duration(detail.get("retryDelay") or detail.get("retry_delay"))
    return None


def _retry_after_header(exc: errors.APIError) -> float | None:
    headers = getattr(getattr(exc, "response", None), "headers", None)
    if headers is None:
        return None
    try:
        value = headers.get("retry-after")
    except Exception:  # a response type without a mapping of headers
        return None
    # Only the seconds form: an HTTP date is rare from Google and not worth parsing.
    return _parse_duration(value.strip() + "s") if isinstance(value, str) else None


def server_retry_delay(exc: BaseException) -> float | None:
    """The wait the server asked for, in seconds (``RetryInfo`` first, then ``Retry-After``)."""
    if not isinstance(exc, errors.APIError):
        return None
    delay = _retry_info_delay(exc)
    return delay if delay is not None else _retry_after_header(exc)
