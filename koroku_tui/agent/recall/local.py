"""The local embedder: WordLlama's 256-dimension static model, from the files its wheel ships.

Measured against the alternatives (README, "Recall by meaning"), WordLlama
is the one whose weights ship in its wheel with a runtime that costs
nothing: a token embedding table (32,000 x 256, 16 MB) averaged over a
text's tokens. all-MiniLM-L6-v2 as int8 ONNX found more of the bench's
questions asked in other words, but needs ONNX Runtime (~75 MB), a
tokenizer from yet another package, and embedded 10 to 375 texts a second
here against WordLlama's thousands.

WordLlama's own loader looks for the tokenizer under ``tokenizer/`` (the
wheel has ``tokenizers/``), then downloads from a model hub; its package
``__init__`` also configures the root logger. So neither is used: the
files are found with ``importlib`` (the package is never imported), the
tokenizer is read with ``tokenizers.Tokenizer.from_file`` and the table
with ``safetensors``, and the pooling (a mean of the token rows, scaled to
unit length) is the few lines below. Nothing here can reach a network.
"""

from __future__ import annotations

import importlib.util
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from koroku_tui.agent.recall.embedder import EmbedsInThread

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    from tokenizers import Tokenizer

__all__ = ["MAX_CHARS", "LocalEmbedder", "LocalModelMissing", "model_files"]

_CONFIG = "l2_supercat"
_DIMS = 256
MAX_CHARS = 2_000
"""Characters of a text embedded: the start of a long tool result says what it is,
and a mean over thousands of tokens means nothing in particular."""


class LocalModelMissing(Exception):
    """The wheel's model files are not where they should be (a broken install)."""


def model_files() -> tuple[Path, Path]:
    """The tokenizer and the weights WordLlama's wheel ships (found, never imported)."""
    spec = importlib.util.find_spec("wordllama")
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in map(Path, folders):
        tokenizer = folder / "tokenizers" / f"{_CONFIG}_tokenizer_config.json"
        weights = folder / "weights" / f"{_CONFIG}_{_DIMS}.safetensors"
        if tokenizer.is_file() and weights.is_file():
            return tokenizer, weights
    raise LocalModelMissing(
        "the local embedding model (the wordllama package's files) is not installed"
    )


_loading = threading.Lock()
_loaded: dict[Path, LocalEmbedder] = {}


class LocalEmbedder(EmbedsInThread):
    """Static embeddings on this machine: ~3,000 messages a second here, nothing sent anywhere."""

    name = f"wordllama-{_CONFIG}-{_DIMS}"
    dims = _DIMS
    batch = 256

    def __init__(self, tokenizer: Tokenizer, table: npt.NDArray[np.float32]) -> None:
        self._tokenizer = tokenizer
        self._table = table

    @classmethod
    def load(cls) -> LocalEmbedder:
        """The model, read once a process (~0.15 s): call it in a thread, after the app's
        first frame. Kept by its files' place: they never change under a running Koroku,
        and each read had held on to its 33 MB table (the suite's apps grew a test worker
        by gigabytes)."""
        tokenizer_file, weights_file = model_files()
        with _loading:
            if (loaded := _loaded.get(weights_file)) is None:
                loaded = _loaded[weights_file] = cls.read(tokenizer_file, weights_file)
        return loaded

    @classmethod
    def read(cls, tokenizer_file: Path, weights_file: Path) -> LocalEmbedder:
        """Read the model from its files (no hub, no network)."""
        import numpy as np
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(tokenizer_file))
        tokenizer.no_padding()
        tokenizer.no_truncation()
        table = load_file(str(weights_file))["embedding.weight"].astype(np.float32)
        return cls(tokenizer, table)

    def embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        """Unit-length vectors of ``texts``, one row each (a text with no token: zeros)."""
        import numpy as np

        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        encoded = self._tokenizer.encode_batch(
            [text[:MAX_CHARS] for text in texts], add_special_tokens=False
        )
        # A text without a token counts one (id 0) and is zeroed after: reduceat
        # cannot sum an empty run.
        lengths = np.array([max(len(e.ids), 1) for e in encoded], dtype=np.int64)
        ids = np.fromiter((i for e in encoded for i in (e.ids or [0])), dtype=np.int64)
        np.clip(ids, 0, self._table.shape[0] - 1, out=ids)
        starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
        sums = np.add.reduceat(self._table[ids], starts, axis=0)
        sums[[not e.ids for e in encoded]] = 0.0
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        vectors: npt.NDArray[np.float32] = (sums / norms).astype(np.float32)
        return vectors
