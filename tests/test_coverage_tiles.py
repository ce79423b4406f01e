"""A stroke's coverage tiles kept on the host are recycled (:class:`~spectropaint.brushes.tiles.
RecycledZeros`): given back as the stroke ends, taken zeroed by the next, never more kept than the
bound; a stroke painted with recycled tiles equals it painted with fresh ones."""

import numpy as np
import torch
from brush_fixtures import painted_values, small_document

from spectropaint.brushes import dab
from spectropaint.brushes.tiles import RecycledZeros


def test_a_given_array_is_taken_again_zeroed_and_the_bound_holds():
    zeros = RecycledZeros(most_bytes=3 * 64 * 64 * 4)
    first = zeros.take((64, 64))
    assert first.dtype == np.float32 and not first.any()
    first[:] = 0.5
    zeros.give([first])
    again = zeros.take((64, 64))
    assert again is first and not again.any()
    assert zeros.take((64, 64)) is not first  # none kept now: a new one
    zeros.give([np.ones((64, 64), np.float32) for _ in range(5)] + [np.ones((2, 2), np.float32)])
    assert zeros.bytes == 3 * 64 * 64 * 4 and len(zeros.kept[(64, 64)]) == 3
    assert (2, 2) not in zeros.kept  # past the bound: dropped
    assert zeros.take((2, 2)).shape == (2, 2)


def test_a_stroke_on_recycled_tiles_equals_it_on_fresh_ones(monkeypatch):
    monkeypatch.setattr(dab, "COVERAGE_ZEROS", RecycledZeros(32 << 20))
    fresh = painted_values(small_document(), "gain", {"gain_db": -12.0})
    given = dab.COVERAGE_ZEROS.bytes
    assert given > 0  # the stroke gave its host tiles back as it ended
    for arrays in dab.COVERAGE_ZEROS.kept.values():
        for array in arrays:
            array[:] = 1.0  # as a stroke leaves them
    recycled = painted_values(small_document(), "gain", {"gain_db": -12.0})
    assert dab.COVERAGE_ZEROS.bytes == given  # taken again, and given back again
    assert torch.equal(fresh, recycled)
