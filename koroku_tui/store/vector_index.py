"""The vectors of one embedder in memory, searched by cosine similarity.

A plain float32 matrix scanned with one matrix-vector product: 100,000
messages of 256 dimensions take ~100 MB and ~15 ms a search here (wider
vectors are narrowed to 256 past ``NARROW_AT`` rows: ``VectorIndex``). The
sqlite-vec extension was the other candidate; Python's ``sqlite3`` on this
machine (a pyenv build, like many users') cannot load extensions at all,
and a scan of the same matrix in memory is as fast as its brute-force KNN.
Vectors are kept as float16 in the file (half the disk) and widened once,
when loaded. numpy is imported here only, and this module only after the
app's first frame (the store imports it when vectors are first used).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

__all__ = ["NARROW_AT", "NARROW_DIMS", "Matrix", "Vector", "VectorIndex", "from_blob", "to_blob"]

Matrix = npt.NDArray[np.float32]
"""Vectors as rows (unit length, float32)."""
Vector = Sequence[float] | npt.NDArray[np.float32]
"""One vector, as a list of floats or a numpy row."""

_FILE_DTYPE = np.dtype("<f2")
NARROW_DIMS = 256
"""Dimensions a wide embedder's rows keep in memory once there are ``NARROW_AT`` of them."""
NARROW_AT = 50_000
"""Rows of a wide embedder kept whole (77 MB of MiniLM's): past them, narrowed."""
_FIT_ROWS = 20_000
"""Rows the principal directions are fitted on at most (a stride through all of them)."""


def to_blob(vector: Vector) -> bytes:
    """A vector as the file keeps it: float16, little-endian, scaled to unit length."""
    array = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(array))
    if norm > 0:
        array = array / norm
    return array.astype(_FILE_DTYPE).tobytes()


def from_blob(blob: bytes) -> Matrix:
    """The vector of a ``to_blob`` blob, float32."""
    return np.frombuffer(blob, dtype=_FILE_DTYPE).astype(np.float32)


def normalized(vector: Vector) -> Matrix:
    """``vector`` as float32 of unit length (a zero vector stays zero)."""
    array = np.asarray(vector, dtype=np.float32).reshape(-1)
    norm = float(np.linalg.norm(array))
    return array / norm if norm > 0 else array


class VectorIndex:
    """Message ids and their vectors (one embedder's), grown in place as vectors come.

    Vectors wider than ``NARROW_DIMS`` are kept whole until ``NARROW_AT``
    rows; from there on their first ``NARROW_DIMS`` principal directions
    (fitted once on the rows held then), as unit float32 rows: 100,000 MiniLM
    rows take 102 MB instead of 154, and scan in two thirds of the time.
    ``bench/recall_rerank.py`` measured no loss of recall@5 (0.96 / 0.93 both
    ways); float16 or int8 rows would save more but scan 4-15 times slower
    (numpy has no half-precision or integer matrix product).
    """

    def __init__(self, dims: int) -> None:
        self.dims = dims
        self._ids = np.zeros(0, dtype=np.int64)
        self._space: tuple[Matrix, Matrix | None] = (np.zeros((0, dims), dtype=np.float32), None)
        """The rows and the basis they are projected on (``None``: whole), set together: a
        scan in a thread reads both at once."""
        self._count = 0
        self._wanted = 0
        self._known: set[int] = set()

    def __len__(self) -> int:
        return self._count

    def __contains__(self, message_id: object) -> bool:
        return message_id in self._known

    @property
    def width(self) -> int:
        """Floats a row takes in memory (``dims``, or ``NARROW_DIMS`` once narrowed)."""
        return int(self._space[0].shape[1])

    @property
    def _narrows(self) -> bool:
        return self.dims > NARROW_DIMS and self._space[1] is None

    def reserve(self, count: int) -> None:
        """Make room for ``count`` vectors in all (loading a known number: no growth copies)."""
        self._wanted = max(self._wanted, count)
        if self._narrows:
            count = min(count, NARROW_AT)  # narrower from there: no room for whole rows
        if count > len(self._ids):
            self._grow(count)

    def add_blobs(self, rows: Iterable[tuple[int, bytes]]) -> None:
        """Add ``(message id, to_blob bytes)`` pairs; ids already held are skipped.

        Not on the event loop: the one that narrows the rows takes ~0.2 s.
        """
        fresh = [(i, b) for i, b in rows if i not in self._known and len(b) == self.dims * 2]
        if not fresh:
            return
        block = np.frombuffer(b"".join(b for _, b in fresh), dtype=_FILE_DTYPE)
        self._append([i for i, _ in fresh], block.reshape(len(fresh), self.dims))

    def _append(self, ids: list[int], block: npt.NDArray[np.generic]) -> None:
        needed = self._count + len(ids)
        if self._narrows and needed >= NARROW_AT:
            self._narrow(block)
        rows, basis = self._space
        if basis is not None:
            block = _projected(block, basis)
        if needed > len(self._ids):
            self._grow(max(needed, len(self._ids) * 5 // 4, 1024))
            rows = self._space[0]
        rows[self._count : needed] = block
        self._ids[self._count : needed] = ids
        self._count = needed
        self._known.update(ids)

    def _narrow(self, block: npt.NDArray[np.generic]) -> None:
        """Fit the principal directions on the rows held and ``block``; project the rows."""
        whole = np.concatenate([self._space[0][: self._count], block.astype(np.float32)])
        sample = whole[:: max(1, len(whole) // _FIT_ROWS)]
        # Uncentred, as cosine compares: the directions that keep most of the dot products.
        _, directions = np.linalg.eigh(sample.T @ sample)
        basis = np.ascontiguousarray(directions[:, ::-1][:, :NARROW_DIMS], dtype=np.float32)
        capacity = max(self._wanted, len(self._ids), len(whole)) + 1024
        rows = np.zeros((capacity, NARROW_DIMS), dtype=np.float32)
        rows[: self._count] = _projected(self._space[0][: self._count], basis)
        self._space = (rows, basis)
        self._grow_ids(capacity)

    def _grow(self, capacity: int) -> None:
        old, basis = self._space
        rows = np.zeros((capacity, old.shape[1]), dtype=np.float32)
        rows[: self._count] = old[: self._count]
        self._grow_ids(capacity)
        self._space = (rows, basis)

    def _grow_ids(self, capacity: int) -> None:
        grown = np.zeros(capacity, dtype=np.int64)
        grown[: self._count] = self._ids[: self._count]
        self._ids = grown

    def nearest(
        self, query: Vector, k: int, exclude: frozenset[int] = frozenset()
    ) -> list[tuple[int, float]]:
        """The ``k`` most similar messages not in ``exclude``: ``(id, cosine)``, best first."""
        # Taken once: vectors added meanwhile (in another thread) may grow the arrays.
        (rows, basis), ids, count = self._space, self._ids, self._count
        count = min(count, len(ids), len(rows))
        if count == 0 or k <= 0:
            return []
        vector = normalized(query)
        if vector.shape[0] != self.dims:
            return []  # a vector of another embedder: nothing here compares
        if basis is not None:
            vector = normalized(vector @ basis)
        scores = rows[:count] @ vector
        wanted = min(count, k + len(exclude))
        top = np.argpartition(-scores, wanted - 1)[:wanted]
        top = top[np.argsort(-scores[top], kind="stable")]
        found: list[tuple[int, float]] = []
        for position in top.tolist():
            message_id = int(ids[position])
            if message_id not in exclude:
                found.append((message_id, float(scores[position])))
                if len(found) == k:
                    break
        return found


def _projected(block: npt.NDArray[np.generic], basis: Matrix) -> Matrix:
    """``block``'s rows on ``basis``, scaled to unit length again."""
    projected: Matrix = np.asarray(block, dtype=np.float32) @ basis
    norms = np.linalg.norm(projected, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    projected /= norms
    return projected
