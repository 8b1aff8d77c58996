"""From the values a sparse module returns to a scipy.sparse array (symdiff.sparse.assemble):
every format, with repeated entries and the lower triangle, against SciPy's own COO sum of the
same values; the runs of evenly spaced places; the helper that makes a pattern's blocks."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sps
from hypothesis import given, settings
from hypothesis import strategies as st

from symdiff.runtime import _affine_grid
from symdiff.sparse.assemble import data, layout, matrix


@st.composite
def _patterns(draw):
    rows = draw(st.integers(1, 7))
    cols = draw(st.integers(1, 7))
    count = draw(st.integers(0, 30))
    r = draw(st.lists(st.integers(0, rows - 1), min_size=count, max_size=count))
    c = draw(st.lists(st.integers(0, cols - 1), min_size=count, max_size=count))
    return np.array(r, dtype=np.int64), np.array(c, dtype=np.int64), (rows, cols)


@settings(max_examples=150)
@given(_patterns(), st.sampled_from(["csr", "csc", "coo"]), st.booleans(), st.integers(0, 99))
def test_matrix_is_the_sum_of_the_values_at_their_entries(pattern, format, lower, seed):
    rows, cols, shape = pattern
    values = np.random.default_rng(seed).normal(size=len(rows))
    made = matrix(layout(rows, cols, shape, format, lower), values)
    kept = rows >= cols if lower else np.ones(len(rows), dtype=bool)
    want = sps.coo_array((values[kept], (rows[kept], cols[kept])), shape=shape).toarray()
    assert made.format == format and made.shape == shape
    np.testing.assert_allclose(made.toarray(), want, rtol=1e-14, atol=1e-14)
    entries = set(zip(rows[kept].tolist(), cols[kept].tolist(), strict=True))
    assert made.nnz == len(entries)  # each entry once, even where the values cancel


def test_a_band_is_placed_by_slices_not_gathered():
    n = 1000
    i = np.arange(n)
    rows = np.concatenate([i[:-1], i, i[1:]])
    cols = np.concatenate([i[1:], i, i[:-1]])
    found = layout(rows, cols, (n, n), "csr")
    assert found.runs is not None and len(found.runs) == 3  # three diagonals: three slices
    values = np.arange(len(rows), dtype=float)
    want = sps.coo_array((values, (rows, cols)), shape=(n, n)).tocsr()
    np.testing.assert_array_equal(data(found, values), want.data)


def test_affine_grid_is_an_affine_function_of_a_grid():
    np.testing.assert_array_equal(_affine_grid(5, (10, 1), (2, 3)), [5, 6, 7, 15, 16, 17])
    np.testing.assert_array_equal(_affine_grid(7, (-2,), (3,)), [7, 5, 3])
    assert _affine_grid(0, (1,), (-2,)).size == 0  # a count below 0: no entries
