"""The models a session may switch to (the palette's "Change model…"), with their windows.

Asked of the API (``models.list``: every page, the models whose
``supportedGenerationMethods`` hold ``generateContent``, each with its
``inputTokenLimit``), and kept in the home as ``models.json`` (0600, with
when it was fetched) for a day: opening the list again costs no request.
When the API cannot be reached (offline, a bad key, a proxy in the way),
the cached list is used whatever its age; without one, the configured
models (``model`` in the config file, the default, the session's own),
whose windows are not known.

Imported when the list is first opened, after the agent (and the SDK) loaded.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from koroku_tui.config.settings import model_id_problem
from koroku_tui.privacy.home_files import HomeFileError, read_home_file, write_home_file

if TYPE_CHECKING:
    from google import genai

__all__ = [
    "CACHE_FILENAME",
    "FRESH_FOR",
    "ModelChoice",
    "ModelChoices",
    "model_choices",
    "offered_models",
]

logger = logging.getLogger(__name__)

CACHE_FILENAME = "models.json"
"""The list as last fetched, in the Koroku home."""
FRESH_FOR = 24 * 3600.0
"""Seconds the cached list is used without asking the API again (a day)."""
_CACHE_LIMIT = 1_000_000
_PAGE_SIZE = 100
_LIST_TIMEOUT = 10.0
"""Seconds the whole list may take (every page) before the cached one is used."""

Source = Literal["api", "cache", "configured"]


@dataclass(frozen=True)
class ModelChoice:
    """One model a session may use."""

    name: str
    """Its id, as ``--model`` and ``model =`` take it (``gemini-3-pro-preview``)."""
    window: int | None = None
    """Input tokens it takes (``inputTokenLimit``); ``None`` when not known."""
    display_name: str | None = None


@dataclass(frozen=True)
class ModelChoices:
    """The list to choose from, and where it came from."""

    models: tuple[ModelChoice, ...]
    source: Source
    fetched_at: float | None = None
    """When the API's list was fetched (``None`` for the configured models)."""
    problem: str | None = None
    """Why the API was not asked or did not answer (one line), when it was not used."""


async def offered_models(client: genai.Client, *, page_size: int = _PAGE_SIZE) -> list[ModelChoice]:
    """The models the API offers for ``generateContent``, every page, in its order."""
    found: list[ModelChoice] = []
    pager = await client.aio.models.list(config={"page_size": page_size})
    async for model in pager:
        if "generateContent" not in (model.supported_actions or []) or not model.name:
            continue
        name = model.name.removeprefix("models/")
        if model_id_problem(name) is None:  # a name no request could carry is not offered
            found.append(ModelChoice(name, model.input_token_limit, model.display_name))
    return found


async def model_choices(
    client: genai.Client | None,
    home: Path,
    configured: Iterable[str],
    *,
    now: float | None = None,
) -> ModelChoices:
    """The list to show: the cache while fresh, else the API's (cached), else the cache,
    else the ``configured`` names. Never raises: what went wrong is ``problem``."""
    now = time.time() if now is None else now
    cached = _read_cache(home)
    # A list "fetched" in the future (a clock set ahead, then put right) is not fresh for years.
    if (
        cached is not None
        and cached.fetched_at is not None
        and 0 <= now - cached.fetched_at < FRESH_FOR
    ):
        return cached
    problem = "no client"
    if client is not None:
        try:
            async with asyncio.timeout(_LIST_TIMEOUT):
                fetched = await offered_models(client)
        except Exception as exc:  # offline, refused, a proxy's page: the list is a convenience
            logger.info("models.list failed: %r", exc)
            problem = _first_line(exc)
        else:
            if fetched:
                _write_cache(home, fetched, now)
                return ModelChoices(tuple(fetched), "api", now)
            problem = "the API listed no model for generateContent"
    if cached is not None:
        return ModelChoices(cached.models, "cache", cached.fetched_at, problem)
    names = dict.fromkeys(name for name in configured if name)
    return ModelChoices(tuple(ModelChoice(name) for name in names), "configured", None, problem)


def _read_cache(home: Path) -> ModelChoices | None:
    try:
        text = read_home_file(home, CACHE_FILENAME, limit=_CACHE_LIMIT).text
        data = json.loads(text)
        models = tuple(
            ModelChoice(
                str(entry["name"]), _window(entry.get("window")), _text(entry.get("display_name"))
            )
            for entry in data["models"]
            if model_id_problem(str(entry["name"])) is None
        )
        fetched_at = float(data["fetched_at"])
        time.localtime(fetched_at)  # "1e400" or "1e20": no date the list could tell
    except FileNotFoundError:
        return None
    except (HomeFileError, ValueError, KeyError, TypeError, AttributeError, OverflowError) as exc:
        logger.warning("the cached model list %s was not used: %s", home / CACHE_FILENAME, exc)
        return None
    return ModelChoices(models, "cache", fetched_at) if models else None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _window(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _write_cache(home: Path, models: list[ModelChoice], now: float) -> None:
    entries = [{"name": m.name, "window": m.window, "display_name": m.display_name} for m in models]
    data = json.dumps({"fetched_at": now, "models": entries}, indent=1) + "\n"
    try:
        write_home_file(home, CACHE_FILENAME, data.encode("utf-8"))
    except OSError as exc:  # the list still shows; next time it is asked for again
        logger.warning("the model list could not be cached: %s", exc)


def _first_line(exc: BaseException) -> str:
    said = str(exc).strip().splitlines()
    return (said[0] if said else type(exc).__name__)[:200]
