"""The vectors of one embedder in memory (``store.vector_index``): the rows another side skips."""

from __future__ import annotations

import numpy as np
import pytest

from koroku_tui.store.vector_index import VectorIndex, to_blob


def test_a_side_filling_in_passes_over_the_rows_the_other_side_has() -> None:
    """More rows skipped than a first look takes: the next nearest, in order."""
    vectors = np.random.default_rng(1).standard_normal((2_000, 16)).astype(np.float32)
    index = VectorIndex(16)
    index.add_blobs([(n, to_blob(v)) for n, v in enumerate(vectors, start=1)])
    order = [i for i, _ in index.nearest(vectors[0], 2_000)]
    other_side = VectorIndex(16)
    other_side.add_blobs([(n, to_blob(vectors[n - 1])) for n in order[:300]])
    assert [i for i, _ in index.nearest(vectors[0], 5, skip=other_side)] == order[300:305]
    other_side.add_blobs([(n, to_blob(vectors[n - 1])) for n in order[300:1_998]])
    assert [i for i, _ in index.nearest(vectors[0], 5, skip=other_side)] == order[1_998:]
    assert [
        i for i, _ in index.nearest(vectors[0], 5, frozenset(order[1_998:1_999]), skip=other_side)
    ] == order[1_999:]


@pytest.mark.parametrize("far", [2**40, -7], ids=["huge", "negative"])
def test_a_sparse_message_id_does_not_size_the_mask_by_it(far: int) -> None:
    """The mask of held ids had a byte an id up to the largest: one row whose id is 2**40
    (an imported or hand-edited file: SQLite's rowids need not be dense) asked for a
    terabyte; a negative one marked a row at the mask's end."""
    index = VectorIndex(4)
    index.add_blobs([(far, to_blob([1, 0, 0, 0])), (3, to_blob([0, 1, 0, 0]))])
    assert far in index and 2 not in index
    [(found, score)] = index.nearest([1, 0, 0, 0], 1)
    assert found == far and score == pytest.approx(1.0)
    other_side = VectorIndex(4)
    other_side.add_blobs([(n, to_blob([1, 0.1 * n, 0, 0])) for n in (far, 3, 5)])
    assert [i for i, _ in other_side.nearest([1, 0, 0, 0], 3, skip=index)] == [5]


@pytest.mark.parametrize("minilm_first", [True, False], ids=["minilm-scans-first", "after"])
def test_a_row_added_during_a_search_is_ranked_by_exactly_one_side(minilm_first: bool) -> None:
    """The two sides scan at once (threads) while MiniLM's pass adds a row WordLlama has:
    each scan took its rows at its own moment, so the row was ranked by neither side (or
    by both, counted twice). Both indexes' rows are counted before either scans."""
    minilm, wordllama = VectorIndex(4), VectorIndex(4)
    wordllama.add_blobs([(1, to_blob([1, 0, 0, 0]))])
    query = [1.0, 0.0, 0.0, 0.0]
    upto, skip_upto = len(wordllama), len(minilm)  # the search counts both, then scans
    if minilm_first:
        by_minilm = minilm.nearest(query, 5, upto=skip_upto)
        minilm.add_blobs([(1, to_blob([1, 0, 0, 0]))])  # the pass's batch lands
        by_wordllama = wordllama.nearest(query, 5, skip=minilm, upto=upto, skip_upto=skip_upto)
    else:
        by_wordllama = wordllama.nearest(query, 5, skip=minilm, upto=upto, skip_upto=skip_upto)
        minilm.add_blobs([(1, to_blob([1, 0, 0, 0]))])
        by_minilm = minilm.nearest(query, 5, upto=skip_upto)
    assert [i for i, _ in by_minilm + by_wordllama] == [1]


def test_far_ids_added_after_a_search_counted_are_not_held_for_it() -> None:
    """Ids the mask does not reach (negative, past 2**20) keep their positions apart; a
    count taken before they came must not hold them, nor an id given twice in one page."""
    index = VectorIndex(4)
    blob = to_blob([1.0, 0.0, 0.0, 0.0])
    index.add_blobs([(5, blob), (-3, blob), (2**40, blob)])
    counted = len(index)
    index.add_blobs(
        [(2**41, blob), (-7, blob), (6, blob), (2**40 + 1, blob), (-1, blob), (6, blob)]
    )
    assert len(index) == 8
    ids = np.array([5, -3, 2**40, 2**41, -7, 6, 2**40 + 1, -1, 7, -4, 2**40 - 1])
    assert index.held(ids, counted).tolist() == [True] * 3 + [False] * 8
    assert index.held(ids).tolist() == [True] * 8 + [False] * 3
    other = VectorIndex(4)
    other.add_blobs([(i, blob) for i in ids.tolist()])
    found = other.nearest([1.0, 0.0, 0.0, 0.0], 20, skip=index, skip_upto=counted)
    assert sorted(i for i, _ in found) == sorted(ids.tolist()[3:])


def test_rows_taken_out_are_neither_held_nor_ranked_until_added_again() -> None:
    """Rows that left the search index (the trash emptied, near and far ids alike) no longer
    count as held (``live``) and no scan returns them; joining again, they are added anew."""
    index = VectorIndex(4)
    index.add_blobs([(n, to_blob([1.0, 0.1 * n, 0, 0])) for n in (1, 2, 3, -5, 2**40)])
    index.remove([2, -5, 2**40, 2, 9])  # an id given twice, one never held
    assert (index.live, len(index)) == (2, 5)
    assert [n in index for n in (1, 2, 3, -5, 2**40)] == [True, False, True, False, False]
    assert sorted(i for i, _ in index.nearest([1.0, 0, 0, 0], 5)) == [1, 3]
    other = VectorIndex(4)
    other.add_blobs([(n, to_blob([1.0, 0, 0.1 * n, 0])) for n in (1, 2, -5)])
    assert sorted(i for i, _ in other.nearest([1.0, 0, 0, 0], 5, skip=index)) == [-5, 2]
    index.add_blobs([(2, to_blob([0, 1.0, 0, 0])), (2**40, to_blob([0, 0, 1.0, 0]))])
    assert (index.live, len(index)) == (4, 7)
    assert index.nearest([0, 1.0, 0, 0], 1)[0][0] == 2
    assert index.nearest([0, 0, 1.0, 0], 1)[0][0] == 2**40
