"""Every funcdiff.numpy function against numpy on small vectors and matrices of
each dtype: where numpy gives a result, funcdiff gives the same values (and the
same dtype, except where funcdiff keeps float32 on purpose, as JAX does), or
raises a funcdiff error saying what it does not support. Never a different
number."""

import warnings

import numpy as np
import pytest

import funcdiff.numpy as fnp
from funcdiff.errors import FunctionalDiffError

INPUTS = {
    "float64": (np.array([0.5, -1.25, 2.0, 0.75]), np.array([[0.5, -1.25], [2.0, 0.75]])),
    "float32": (np.array([0.5, -1.25, 2.0, 0.75], np.float32),
                np.array([[0.5, -1.25], [2.0, 0.75]], np.float32)),
    "int64": (np.array([5, -1, 2, 7]), np.array([[5, -1], [2, 7]])),
    "bool": (np.array([True, False, True, True]), np.array([[True, False], [False, True]])),
    "complex128": (np.array([1 + 2j, 3 - 1j, -0.5 + 0.25j, 0j]),
                   np.array([[1 + 2j, 3 - 1j], [-0.5 + 0.25j, 2 + 0j]])),
}
# numpy's results here are not functions of the inputs
_ARBITRARY = {"empty", "empty_like", "result_type"}
# numpy leaves the order unspecified (numpy 2.4 returns hash order): compared sorted
_UNORDERED = {"unique_values"}
# numpy strips the inputs' leading zeros first; funcdiff keeps them (a static length,
# as in JAX): compared without leading zeros
_LEADING_ZEROS = {"polymul"}
# funcdiff's result dtype differs from numpy's on purpose (documented where defined):
# float32 kept where numpy computes in float64, and a Python scalar weak in all four
# set routines (numpy 2.4 makes it strong in intersect1d and setxor1d only)
_DTYPE_CHOICES = {("float32", n) for n in ("corrcoef", "cov", "geomspace", "polyder",
                                          "polyint", "vander", "intersect1d", "setxor1d")} | {
    ("bool", "angle")}


def _pairs():
    for name in sorted(fnp.__all__):
        ours, theirs = getattr(fnp, name, None), getattr(np, name, None)
        if callable(ours) and callable(theirs) and not isinstance(theirs, type) \
                and name not in _ARBITRARY:
            yield name, ours, theirs


def _results(value):
    if isinstance(value, (tuple, list)) and not isinstance(value, np.ndarray):
        return [np.asarray(v) for v in value]
    return [np.asarray(value)]


@pytest.mark.parametrize("dtype", sorted(INPUTS))
def test_no_function_gives_a_different_number(dtype):
    vector, matrix = INPUTS[dtype]
    checked = 0
    for name, ours, theirs in _pairs():
        for args in ((vector,), (matrix,), (vector, vector[::-1]), (matrix, vector[:2]),
                     (matrix, vector[0].item()), (matrix[:1, :1],), (vector[0],),
                     (np.asarray(vector[1]),), (np.stack([matrix, matrix[::-1]]),),
                     (vector[:0],)):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:  # copies: numpy's in-place functions (copyto, put, ...) write to them
                    want = theirs(*[np.copy(a) if np.ndim(a) else a for a in args])
                except Exception:
                    continue
                try:
                    got = ours(*[np.copy(a) if np.ndim(a) else a for a in args])
                except FunctionalDiffError:
                    break  # unsupported: a clear error, not a number
            want, got = _results(want), _results(got)
            if name in _UNORDERED:
                want, got = [np.sort(w) for w in want], [np.sort(g) for g in got]
            if name in _LEADING_ZEROS:
                want, got = [np.trim_zeros(w, "f") for w in want], [np.trim_zeros(g, "f")
                                                                   for g in got]
            where = f"{name}{tuple(np.shape(a) for a in args)}"
            assert len(want) == len(got), where
            for w, g in zip(want, got):
                assert w.shape == g.shape, (where, w.shape, g.shape)
                if (dtype, name) not in _DTYPE_CHOICES:
                    assert w.dtype == g.dtype, (where, w.dtype, g.dtype)
                tol = 1e-5 if np.float32 in (w.dtype, g.dtype) else 1e-12
                np.testing.assert_allclose(g, w, rtol=tol, atol=tol, err_msg=where)
            checked += 1
    assert checked > 100
