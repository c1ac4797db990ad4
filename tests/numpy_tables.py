"""Shared checks of the table-driven funcdiff.numpy test files: each row holds a
funcdiff.numpy function and its arguments, compared with numpy, with itself
under jit, and with a Python loop under vmap."""

from typing import Callable, NamedTuple

import numpy as np

import funcdiff as fd
import funcdiff.numpy as fnp


class Row(NamedTuple):
    """One case of a table-driven test file."""
    name: str
    fn: Callable          # funcdiff version, called with the arrays
    ref: Callable         # numpy version
    args: tuple           # the arrays
    grad: bool = True     # check derivatives (float64 rows)
    dtype: str | None = None  # the expected result dtype where it differs from numpy's
    vmap: bool = True     # check vmap against a loop
    traced: bool = True   # the function traces (jit and vmap rows)
    eps: float | None = None  # the finite-difference step, where the default's error is too big


def both(f, **kw):
    """The named function of funcdiff.numpy and of numpy, with settings ``kw``."""
    return (lambda *a: getattr(fnp, f)(*a, **kw)), (lambda *a: getattr(np, f)(*a, **kw))


def leaves(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def assert_matches(got, want, dtype=None, exact=False, where=""):
    """Same number of results, shapes and dtypes (``dtype`` where funcdiff's result
    dtype differs from numpy's on purpose), and values equal (``exact``) or within
    the rounding of their dtype; ``where`` names the case in failures."""
    got, want = leaves(got), leaves(want)
    assert len(got) == len(want), where
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape, (where, g.shape, w.shape)
        assert g.dtype == np.dtype(dtype or w.dtype), (where, g.dtype, dtype or w.dtype)
        if exact:
            np.testing.assert_array_equal(g, w, err_msg=where)
        else:
            tol = 1e-5 if g.dtype == np.float32 else 1e-12
            np.testing.assert_allclose(g, w.astype(g.dtype), rtol=tol, atol=tol)


def assert_vmap_equals_a_loop(fn, args, scales=((1, 0), (1.5, 0.25), (0.5, -1.0))):
    """vmap of ``fn`` over three members (copies of the arguments whose float ones
    are scaled and shifted by ``scales``) equals calling ``fn`` on each member."""
    batch = [tuple(a if a.dtype.kind != "f" else (a * s + t).astype(a.dtype) for a in args)
             for s, t in scales]
    stacked = [np.stack(column) for column in zip(*batch)]
    batched = leaves(fd.vmap(fn)(*stacked))
    for k, member in enumerate(batch):
        want = leaves(fn(*member))
        assert len(batched) == len(want)
        for got, w in zip(batched, want):
            np.testing.assert_allclose(got[k], w, rtol=1e-5, atol=1e-12)


def transform_tests(rows, vmap_scales=((1, 0), (1.5, 0.25), (0.5, -1.0))):
    """The three tests a table of rows (with ``name``, ``fn``, ``args`` and
    ``grad``) shares: jit equals eager, vmap equals a loop, and, for the rows
    marked ``grad`` (float64 arguments), check_grads to order 2 in both modes.
    A test file binds them to module-level ``test_`` names, where pytest finds
    them."""
    import pytest
    from funcdiff.test_util import check_grads

    ids = [r.name for r in rows]
    grad_rows = [r for r in rows if r.grad]

    @pytest.mark.parametrize("row", rows, ids=ids)
    def test_jit_equals_eager(row):
        assert_matches(fd.jit(row.fn)(*row.args), row.fn(*row.args), where=row.name)

    @pytest.mark.parametrize("row", rows, ids=ids)
    def test_vmap_equals_a_loop(row):
        assert_vmap_equals_a_loop(row.fn, row.args, scales=vmap_scales)

    @pytest.mark.parametrize("row", grad_rows, ids=[r.name for r in grad_rows])
    def test_derivatives_to_order_two(row):
        assert all(a.dtype == np.float64 for a in row.args)
        check_grads(row.fn, row.args, order=2, modes=("fwd", "rev"))

    return test_jit_equals_eager, test_vmap_equals_a_loop, test_derivatives_to_order_two
