"""Tests of funcdiff.numpy's linear algebra basics and cumulative/sorting functions.

One table row per (function, shapes, settings). Every row is compared with
numpy (values and result dtype) for each of its dtype combinations, staged with
make_jaxpr and re-evaluated, vmapped against a Python loop, and (float64 rows)
gradient-checked: order 2 for the bilinear products, order 1 for the rest. A
second table holds einsum subscripts.
"""

from __future__ import annotations

import doctest
import warnings
from typing import Callable, NamedTuple

import numpy as np
import pytest

import funcdiff as fd
from funcdiff.errors import (ConcretizationError, DTypeError, FunctionalDiffError,
                             UnsupportedNumpyError)
from funcdiff.numpy import _einsum as einsum
from funcdiff.numpy import _linalg_basic as la
from funcdiff.numpy import _sorting as so
from funcdiff.test_util import check_grads


class Row(NamedTuple):
    name: str
    fn: Callable            # funcdiff version, called with the arrays
    ref: Callable           # numpy version
    shapes: tuple           # one shape per array argument
    dtypes: tuple = (("f8",), ("f4",), ("i8",))  # dtype combinations to compare
    order: int = 1          # gradient order checked (0: no derivative)
    distinct: bool = False  # values must not tie (sort orders, running extrema)


def _quiet(f):
    """numpy 2 deprecates 2-vectors in cross; the reference must still run."""
    def wrapped(*args):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            return f(*args)
    return wrapped


def _pair(f, **kw):
    return lambda a, b: f(a, b, **kw)


def _one(f, **kw):
    return lambda a: f(a, **kw)


MIXED = (("f8",), ("f4",), ("i8",), ("i4", "f4"), ("f4", "f8"), ("i4", "i8"))
SORTED_A = np.array([-2., -1., 0.5, 0.5, 3.])

ROWS = [
    # dot
    *[Row("dot", la.dot, np.dot, s, MIXED, 2) for s in
      [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 2)), ((2, 3), (3, 4)), ((2, 3, 4), (5, 4, 2)),
       ((), (3,)), ((2, 3), ())]],
    *[Row("vdot", la.vdot, np.vdot, s, MIXED, 2) for s in [((4,), (4,)), ((2, 3), (3, 2))]],
    *[Row("inner", la.inner, np.inner, s, MIXED, 2) for s in
      [((3,), (3,)), ((2, 3), (4, 3)), ((2, 2, 3), (3,)), ((), (2,))]],
    *[Row("outer", la.outer, np.outer, s, MIXED, 2) for s in [((3,), (4,)), ((2, 2), (3,))]],
    # matmul, including 1-D promotion and batch broadcasting
    *[Row("matmul", la.matmul, np.matmul, s, MIXED, 2) for s in
      [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)),
       ((2, 3), (5, 3, 4)), ((5, 1, 2, 3), (4, 3, 2)), ((1, 2, 3), (5, 3, 4)),
       ((5, 2, 3), (5, 3, 4)), ((3,), (5, 3, 4)), ((5, 2, 3), (3,)), ((1, 1, 2, 3), (1, 3, 2)),
       ((2, 1, 2, 3), (1, 4, 3, 2))]],
    # tensordot, int and pair axes
    *[Row("tensordot", _pair(la.tensordot, axes=ax), _pair(np.tensordot, axes=ax), s, MIXED, 2)
      for s, ax in [(((2, 3, 4), (3, 4, 5)), 2), (((2, 3, 4), (4, 3, 5)), ([1, 2], [1, 0])),
                    (((2, 3), (4, 5)), 0), (((3, 4), (4, 5)), 1),
                    (((2, 3), (3, 2)), ([0, 1], [1, 0])),
                    (((2, 3), (3, 4)), ([-1], [0])), (((2, 3), (4, 3)), (1, 1))]],
    *[Row("kron", la.kron, np.kron, s, MIXED) for s in
      [((2,), (3,)), ((2, 2), (3, 3)), ((2, 3), (2,)), ((), (3,)), ((2, 1, 3), (2, 2))]],
    # trace: offsets, axes, accumulator dtypes
    *[Row("trace", _one(la.trace, **kw), _one(np.trace, **kw), s,
          (("f8",), ("f4",), ("i8",), ("i4",), ("u1",), ("b",)))
      for s, kw in [(((3, 3),), {}), (((3, 4),), dict(offset=1)), (((4, 3),), dict(offset=-2)),
                    (((2, 3, 3),), dict(axis1=1, axis2=2)),
                    (((3, 2, 3),), dict(axis1=0, axis2=2, offset=-1)),
                    (((3, 3),), dict(offset=5)), (((2, 4, 3),), dict(axis1=-1, axis2=-2))]],
    *[Row("cross", _pair(la.cross, **kw), _quiet(_pair(np.cross, **kw)), s, MIXED)
      for s, kw in [(((3,), (3,)), {}), (((4, 3), (3,)), {}), (((3, 4), (4, 3)), dict(axisa=0)),
                    (((2,), (3,)), {}), (((3,), (2,)), {}), (((2,), (2,)), {}),
                    (((5, 2), (5, 2)), {}), (((3, 2), (2, 3)), dict(axisa=0, axisc=0)),
                    (((3, 4), (3, 4)), dict(axis=0)), (((2, 3, 4), (3, 4)), dict(axisa=1, axisb=0,
                                                                              axisc=-2))]],
    # convolve / correlate: all modes, swapped lengths, even kernels
    *[Row(name, _pair(f, mode=mode), _pair(g, mode=mode), s, MIXED)
      for name, f, g in [("convolve", la.convolve, np.convolve),
                         ("correlate", la.correlate, np.correlate)]
      for mode in ("full", "same", "valid")
      for s in [((6,), (3,)), ((3,), (6,)), ((5,), (4,)), ((4,), (4,)), ((1,), (5,)),
                ((7,), (2,))]],
    # cumulative
    *[Row(name, _one(f, **kw), _one(g, **kw), s,
          (("f8",), ("f4",), ("i8",), ("i4",), ("b",)))
      for name, f, g in [("cumsum", so.cumsum, np.cumsum), ("cumprod", so.cumprod, np.cumprod)]
      for s, kw in [(((5,),), {}), (((3, 4),), dict(axis=0)), (((3, 4),), dict(axis=-1)),
                    (((3, 4),), {}), (((2, 3),), dict(dtype=np.float32)), (((),), {}),
                    (((2, 0, 3),), dict(axis=1))]],
    *[Row(name, _one(f, **kw), _one(g.accumulate, **kw), s,
          (("f8",), ("f4",), ("i8",), ("b",)), distinct=True)
      for name, f, g in [("maximum_accumulate", so.maximum_accumulate, np.maximum),
                         ("minimum_accumulate", so.minimum_accumulate, np.minimum)]
      for s, kw in [(((6,),), {}), (((3, 4),), {}), (((3, 4),), dict(axis=1)),
                    (((3, 4),), dict(axis=-1, dtype=np.float64))]],
    # differences
    *[Row("diff", _one(so.diff, **kw), _one(np.diff, **kw), s,
          (("f8",), ("f4",), ("i8",), ("u1",), ("b",)))
      for s, kw in [(((6,),), {}), (((6,),), dict(n=2)), (((3, 4),), dict(axis=0)),
                    (((3, 4),), dict(n=3, axis=-1)), (((4,),), dict(n=0)), (((3,),), dict(n=5)),
                    (((2, 3),), dict(prepend=0, append=np.ones((2, 1), np.int32))),
                    (((2, 3),), dict(axis=0, prepend=np.zeros((1, 3), np.float32)))]],
    *[Row("ediff1d", _one(so.ediff1d, **kw), _one(np.ediff1d, **kw), s,
          (("f8",), ("f4",), ("i8",)))
      for s, kw in [(((5,),), {}), (((2, 3),), {}), (((4,),), dict(to_begin=-1, to_end=[7, 8])),
                    (((1,),), dict(to_end=2)), (((0,),), dict(to_begin=[1]))]],
    # sorting
    *[Row("sort", _one(so.sort, **kw), _one(np.sort, **kw), s,
          (("f8",), ("f4",), ("i8",), ("b",)), distinct=True)
      for s, kw in [(((6,),), {}), (((3, 4),), dict(axis=0)), (((3, 4),), dict(axis=None)),
                    (((2, 3, 4),), dict(axis=1, kind="quicksort"))]],
    *[Row("argsort", _one(so.argsort, **kw), _one(np.argsort, kind="stable", **kw), s,
          (("f8",), ("f4",), ("i8",), ("b",)), order=0)
      for s, kw in [(((6,),), {}), (((3, 4),), dict(axis=0)), (((3, 4),), dict(axis=None)),
                    (((),), {})]],
    *[Row("searchsorted", lambda v, side=side: so.searchsorted(SORTED_A, v, side=side),
          lambda v, side=side: np.searchsorted(SORTED_A, v, side=side), s,
          (("f8",), ("i8",)), order=0)
      for side in ("left", "right") for s in [((7,),), ((2, 3),), ((),)]],
]


def _ids(rows):
    return [f"{r.name}-{'x'.join(map(str, r.shapes))}-{i}" for i, r in enumerate(rows)]


def _make(shape, dtype: str, rng, distinct: bool = False):
    dtype = np.dtype(dtype)
    size = int(np.prod(shape, dtype=np.int64))
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        low = 0 if dtype.kind == "u" else -4
        if distinct and size <= 9:
            return rng.permutation(np.arange(low, low + 9))[:size].reshape(shape).astype(dtype)
        return rng.integers(low, 5, shape).astype(dtype)
    return np.asarray(rng.standard_normal(shape) + 0.1, dtype)


def _args(row: Row, dtypes: tuple, rng) -> list:
    return [_make(s, dtypes[min(i, len(dtypes) - 1)], rng, row.distinct)
            for i, s in enumerate(row.shapes)]


def _close(got, want, what: str):
    got_a, want_a = np.asarray(got), np.asarray(want)
    assert isinstance(got, (np.ndarray, np.generic)), f"{what}: returned {type(got)}"
    assert got_a.shape == want_a.shape, f"{what}: shape {got_a.shape} != numpy's {want_a.shape}"
    assert got_a.dtype == want_a.dtype, f"{what}: dtype {got_a.dtype} != numpy's {want_a.dtype}"
    tol = 1e-4 if got_a.dtype == np.float32 else 1e-10
    np.testing.assert_allclose(got_a.astype(np.float64), want_a.astype(np.float64),
                               rtol=tol, atol=tol, err_msg=what)


# ---------------------------------------------------------------------------
# The table


@pytest.mark.parametrize("row", ROWS, ids=_ids(ROWS))
def test_matches_numpy(row):
    rng = np.random.default_rng(0)
    for dtypes in row.dtypes:
        args = _args(row, dtypes, rng)
        _close(row.fn(*args), row.ref(*args), f"{row.name}{row.shapes} {dtypes}")


@pytest.mark.parametrize("row", ROWS, ids=_ids(ROWS))
def test_staged_and_jitted_equal_eager(row):
    args = _args(row, row.dtypes[0], np.random.default_rng(1))
    closed = fd.make_jaxpr(row.fn)(*args)
    fd.check_jaxpr(closed.jaxpr)
    (staged,) = closed(*args)
    eager = row.fn(*args)
    _close(staged, eager, f"make_jaxpr {row.name}{row.shapes}")
    jitted = fd.jit(row.fn)
    for _ in range(2):  # the trace, then the cached program
        _close(np.asarray(jitted(*args)), np.asarray(eager), f"jit {row.name}{row.shapes}")


@pytest.mark.parametrize("row", ROWS, ids=_ids(ROWS))
def test_vmap_matches_loop(row):
    rng = np.random.default_rng(2)
    batched = [np.stack([_make(s, row.dtypes[0][0], rng, row.distinct) for _ in range(3)])
               for s in row.shapes]
    loop = np.stack([np.asarray(row.fn(*[b[i] for b in batched])) for i in range(3)])
    _close(fd.vmap(row.fn)(*batched), loop, f"vmap {row.name}{row.shapes}")
    if len(batched) == 2:  # the second argument shared by the batch
        shared = batched[1][0]
        loop = np.stack([np.asarray(row.fn(batched[0][i], shared)) for i in range(3)])
        _close(fd.vmap(row.fn, in_axes=(0, None))(batched[0], shared), loop,
               f"vmap (0, None) {row.name}{row.shapes}")


GRAD_ROWS = [r for r in ROWS if r.order > 0 and ("f8",) in r.dtypes]


@pytest.mark.parametrize("row", GRAD_ROWS, ids=_ids(GRAD_ROWS))
def test_gradients(row):
    args = _args(row, ("f8",), np.random.default_rng(3))
    if np.asarray(row.fn(*args)).dtype != np.float64:
        pytest.skip("float32 output (dtype=): finite differences are too coarse")
    check_grads(row.fn, args, order=row.order)


# ---------------------------------------------------------------------------
# einsum

EINSUM_CASES = [
    # one operand: transposes, sums, diagonals, traces
    ("ij->ji", [(2, 3)]), ("ij", [(2, 3)]), ("ji", [(2, 3)]), ("ij->", [(2, 3)]),
    ("ij->i", [(2, 3)]), ("ii->i", [(3, 3)]), ("ii", [(3, 3)]), ("iij->j", [(3, 3, 2)]),
    ("iji->ij", [(3, 2, 3)]), ("iii->i", [(2, 2, 2)]), ("ijij->ij", [(2, 3, 2, 3)]),
    ("i->", [(4,)]), ("->", [()]), ("", [()]), ("...", [(2, 3)]), ("...ii->...i", [(4, 3, 3)]),
    ("i...i", [(3, 2, 3)]), ("...->...", [(2, 3)]), ("ba", [(2, 3)]), ("Ab", [(2, 3)]),
    # two operands
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]), ("ij,kj->ik", [(2, 3), (4, 3)]),
    ("i,i->", [(3,), (3,)]), ("i,i", [(3,), (3,)]), ("i,j->ij", [(3,), (4,)]),
    ("i,j", [(3,), (4,)]), ("ij,ij->ij", [(2, 3), (2, 3)]), ("ij,ij->", [(2, 3), (2, 3)]),
    ("bij,bjk->bik", [(4, 2, 3), (4, 3, 5)]), ("bij,bjk->kib", [(4, 2, 3), (4, 3, 5)]),
    ("ij,j->i", [(2, 3), (3,)]), ("i,ij->j", [(2,), (2, 3)]), (",ij->ij", [(), (2, 3)]),
    ("ij,->ji", [(2, 3), ()]), (",", [(), ()]), ("ii,i->i", [(3, 3), (3,)]),
    ("ijk,ik->j", [(2, 3, 4), (2, 4)]), ("ijk,l->il", [(2, 3, 4), (5,)]),
    ("...ij,...jk->...ik", [(5, 2, 3), (5, 3, 4)]), ("...ij,...jk", [(1, 2, 3), (5, 3, 4)]),
    ("...ij,jk->...ik", [(2, 5, 2, 3), (3, 4)]), ("i...,i...->...", [(3, 2), (3, 1)]),
    ("ij,ij->ij", [(1, 3), (2, 3)]), ("ij,jk->ik", [(2, 1), (3, 4)]),
    ("abc,cba->", [(2, 3, 4), (4, 3, 2)]), ("ij,jI->iI", [(2, 3), (3, 2)]),
    # three and more operands
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]), ("ij,jk,kl", [(2, 3), (3, 4), (4, 5)]),
    ("i,i,i->", [(3,), (3,), (3,)]), ("i,j,k->ijk", [(2,), (3,), (4,)]),
    ("ij,ik,il->jkl", [(2, 3), (2, 4), (2, 5)]), ("bi,bj,bk->b", [(3, 2), (3, 4), (3, 5)]),
    ("ij,jk,ki->", [(2, 3), (3, 4), (4, 2)]), ("ii,ij,jj->", [(3, 3), (3, 3), (3, 3)]),
    ("...i,...i,i->...", [(2, 3), (2, 3), (3,)]), ("i,,j->ij", [(2,), (), (3,)]),
    ("ab,bc,cd,de->ae", [(2, 3), (3, 4), (4, 2), (2, 3)]),
]


EINSUM_IDS = [c[0] or "empty" for c in EINSUM_CASES]


def _einsum_args(shapes, dtype="f8", seed=0):
    rng = np.random.default_rng(seed)
    return [_make(s, dtype, rng) for s in shapes]


@pytest.mark.parametrize("subscripts,shapes", EINSUM_CASES, ids=EINSUM_IDS)
def test_einsum_matches_numpy(subscripts, shapes):
    for dtype in ("f8", "f4", "i8", "i4"):
        args = _einsum_args(shapes, dtype)
        _close(einsum.einsum(subscripts, *args), np.einsum(subscripts, *args), f"{subscripts} {dtype}")
    closed = fd.make_jaxpr(lambda *a: einsum.einsum(subscripts, *a))(*args)
    _close(closed(*args)[0], np.einsum(subscripts, *args), f"make_jaxpr {subscripts}")


@pytest.mark.parametrize("subscripts,shapes", EINSUM_CASES, ids=EINSUM_IDS)
def test_einsum_gradients_and_vmap(subscripts, shapes):
    args = _einsum_args(shapes, seed=1)
    f = lambda *a: einsum.einsum(subscripts, *a)
    check_grads(f, args, order=2)
    rng = np.random.default_rng(2)
    batched = [np.stack([_make(s, "f8", rng) for _ in range(3)]) for s in shapes]
    loop = np.stack([np.einsum(subscripts, *[b[i] for b in batched]) for i in range(3)])
    _close(fd.vmap(f)(*batched), loop, f"vmap {subscripts}")
    # batch only the first operand, at its last axis
    first = np.moveaxis(batched[0], 0, -1)
    loop = np.stack([np.einsum(subscripts, first[..., i], *[b[0] for b in batched[1:]])
                     for i in range(3)])
    in_axes = (-1,) + (None,) * (len(shapes) - 1)
    _close(fd.vmap(f, in_axes=in_axes)(first, *[b[0] for b in batched[1:]]), loop,
           f"vmap first {subscripts}")


def _random_einsum(rng):
    """Valid random subscripts: 1-3 operands, repeated labels, size-1 broadcasting,
    ellipses of different ranks, implicit or shuffled explicit output."""
    letters = "abcdE"
    sizes = {c: int(rng.integers(1, 4)) for c in letters}
    ellipsis = tuple(int(rng.integers(1, 3)) for _ in range(int(rng.integers(0, 3))))
    use_ellipsis = rng.random() < 0.3
    terms, arrays = [], []
    for _ in range(int(rng.integers(1, 4))):
        labels = [letters[int(rng.integers(0, 5))] for _ in range(int(rng.integers(0, 4)))]
        shape = [sizes[c] if rng.random() > 0.15 else 1 for c in labels]
        shape = [shape[labels.index(c)] for c in labels]  # repeated labels: equal sizes
        term = "".join(labels)
        if use_ellipsis and rng.random() < 0.7:
            dims = list(ellipsis[int(rng.integers(0, len(ellipsis) + 1)):])
            pos = int(rng.integers(0, len(labels) + 1))
            term, shape = term[:pos] + "..." + term[pos:], shape[:pos] + dims + shape[pos:]
        terms.append(term)
        arrays.append(rng.standard_normal(shape))
    if rng.random() < 0.5:
        return ",".join(terms), arrays
    out = [c for c in sorted(set("".join(terms).replace(".", ""))) if rng.random() < 0.5]
    rng.shuffle(out)
    out = "".join(out)
    if any("..." in t for t in terms):
        pos = int(rng.integers(0, len(out) + 1))
        out = out[:pos] + "..." + out[pos:]
    return ",".join(terms) + "->" + out, arrays


def test_einsum_random_subscripts_match_numpy():
    rng = np.random.default_rng(5)
    for trial in range(400):
        subscripts, arrays = _random_einsum(rng)
        _close(einsum.einsum(subscripts, *arrays), np.einsum(subscripts, *arrays),
               f"{subscripts} {[a.shape for a in arrays]}")
        if trial % 20 == 0:
            check_grads(lambda *a: einsum.einsum(subscripts, *a), arrays, order=1)


def test_einsum_interleaved_form_and_settings():
    x, y = _einsum_args([(2, 3), (3, 4)])
    _close(einsum.einsum(x, [0, 1], y, [1, 2]), np.einsum(x, [0, 1], y, [1, 2]), "interleaved")
    _close(einsum.einsum(x, [0, 1], y, [1, 2], [2, 0]), np.einsum(x, [0, 1], y, [1, 2], [2, 0]),
           "interleaved with output")
    _close(einsum.einsum(x, [Ellipsis, 27]), np.einsum(x, [Ellipsis, 27]), "interleaved ellipsis")
    _close(einsum.einsum("ij,jk", x, y, optimize="greedy"), np.einsum("ij,jk", x, y), "optimize")
    _close(einsum.einsum("ij,jk", x, y, dtype=np.float32, casting="same_kind"),
           np.einsum("ij,jk", x, y, dtype=np.float32, casting="same_kind"), "dtype=")
    with pytest.raises(DTypeError, match="casting"):
        einsum.einsum("ij,jk", x, y, dtype=np.float32)  # numpy's default casting="safe" refuses
    b = np.array([[True, False], [True, True]])
    _close(einsum.einsum("ij,jk", b, b), np.einsum("ij,jk", b, b), "bool")


@pytest.mark.parametrize("subscripts,shapes,match", [
    ("ij,jk", [(2, 3)], "2 operands but 1"),
    ("ij,jk->ik", [(2, 3), (4, 5)], r"\(2, 3\) and \(4, 5\)"),
    ("ij->k", [(2, 3)], "'k' does not appear"),
    ("i$", [(2, 3)], "contains '\\$'"),
    ("...i->i", [(2, 3)], "no '...'"),
    ("ijk", [(2, 3)], "3 subscripts but the operand has 2"),
    ("ij->ii", [(2, 3)], "repeat"),
    ("ii", [(2, 3)], "2 vs 3"),
    ("...->", [(2, 3)], "no '...'"),
    ("i..j..", [(2, 3)], "malformed"),
])
def test_einsum_errors(subscripts, shapes, match):
    with pytest.raises(FunctionalDiffError, match=match) as info:
        einsum.einsum(subscripts, *_einsum_args(shapes))
    assert isinstance(info.value, ValueError)  # numpy raises ValueError here too


# ---------------------------------------------------------------------------
# One dot_general, and it reaches BLAS


def _primitive_names(f, *args):
    return [e.primitive.name for e in fd.make_jaxpr(f)(*args).eqns]


@pytest.mark.parametrize("shapes", [((2, 3), (3, 4)), ((5, 2, 3), (3, 4)), ((2, 3), (5, 3, 4)),
                                    ((5, 1, 2, 3), (4, 3, 2)), ((3,), (5, 3, 4)), ((3,), (3,))])
def test_matmul_is_one_dot_general(shapes):
    args = _einsum_args(shapes)
    names = _primitive_names(la.matmul, *args)
    assert names.count("dot_general") == 1, names
    assert set(names) <= {"dot_general", "transpose", "reshape"}, names


@pytest.mark.parametrize("f,shapes", [
    (la.dot, ((2, 3, 4), (5, 4, 2))), (la.inner, ((2, 3), (4, 3))), (la.vdot, ((2, 3), (6,))),
    (lambda a, b: la.tensordot(a, b, axes=([1, 2], [1, 0])), ((2, 3, 4), (4, 3, 5))),
    (lambda a, b: einsum.einsum("bij,bjk->bik", a, b), ((4, 2, 3), (4, 3, 5))),
    (lambda a, b: einsum.einsum("ij,kj", a, b), ((2, 3), (4, 3))),
])
def test_products_are_one_dot_general(f, shapes):
    names = _primitive_names(f, *_einsum_args(shapes))
    assert names.count("dot_general") == 1, names
    assert "mul" not in names and "reduce_sum" not in names, names


def test_eager_matmul_hands_the_arrays_to_dot_general(monkeypatch):
    """Eager matmul is exactly one dot_general impl call on the caller's arrays
    (no copies, no Python loops), so large products run at BLAS speed."""
    from funcdiff.primitives.dot import dot_general_p
    calls = []
    impl = dot_general_p.impl

    def counting(*args, **params):
        calls.append(args)
        return impl(*args, **params)
    monkeypatch.setattr(dot_general_p, "impl", counting)
    for shapes in [((300, 200), (200, 100)), ((4, 30, 20), (20, 10)), ((4, 30, 20), (4, 20, 10))]:
        a, b = _einsum_args(shapes)
        calls.clear()
        _close(la.matmul(a, b), np.matmul(a, b), f"matmul {shapes}")
        assert len(calls) == 1 and calls[0][0] is a and calls[0][1] is b, shapes


def test_large_convolution_is_chunked():
    a, v = _einsum_args([(3000,), (2000,)])
    _close(la.convolve(a, v, mode="same"), np.convolve(a, v, mode="same"), "large convolve")
    names = _primitive_names(lambda a, v: la.correlate(a, v, mode="full"), a, v)
    assert names.count("dot_general") == 3, names  # 4999 x 2000 windows, 2097 rows a chunk


# ---------------------------------------------------------------------------
# Errors and non-array behaviour


@pytest.mark.parametrize("f,args,match", [
    (la.matmul, [np.ones((2, 3)), np.ones((4, 5))], r"\(2, 3\) and \(4, 5\)"),
    (la.matmul, [np.ones((2, 2, 3)), np.ones((3, 3, 4))], r"batch dimensions"),
    (la.matmul, [np.ones(()), np.ones((3,))], "at least one dimension"),
    (la.dot, [np.ones((2, 3)), np.ones((4, 5))], r"\(2, 3\) and \(4, 5\)"),
    (la.inner, [np.ones(3), np.ones(4)], r"\(3,\) and \(4,\)"),
    (la.vdot, [np.ones(3), np.ones(4)], "same number of elements"),
    (lambda a, b: la.tensordot(a, b, 1), [np.ones((2, 3)), np.ones((4, 5))], "shape-mismatch"),
    (la.cross, [np.ones(4), np.ones(3)], "dimension must be 2 or 3"),
    (la.convolve, [np.ones(0), np.ones(3)], "cannot be empty"),
    (la.correlate, [np.ones((2, 2)), np.ones(3)], "1-D"),
    (lambda a: la.trace(a), [np.ones(3)], "at least 2 dimensions"),
    (lambda a: so.diff(a), [np.ones(())], "at least one dimensional"),
    (lambda a: so.diff(a, n=-1), [np.ones(3)], "non-negative"),
    (lambda a: so.maximum_accumulate(a), [np.ones(())], "scalar"),
    (lambda a: so.maximum_accumulate(a, axis=None), [np.ones(3)], "multiple axes"),
    (lambda a: so.ediff1d(a, to_begin=0.5), [np.arange(3)], "same_kind"),
    (lambda a: so.sort(a, axis=2), [np.ones((2, 2))], "out of range"),
])
def test_bad_input_raises_funcdiff_errors(f, args, match):
    with pytest.raises(FunctionalDiffError, match=match):
        f(*args)


@pytest.mark.parametrize("f", [la.dot, la.matmul, la.outer])
def test_out_is_rejected(f):
    with pytest.raises(UnsupportedNumpyError, match="out="):
        f(np.ones(2), np.ones(2), out=np.ones(2))


def test_convolve_mode_errors():
    with pytest.raises(FunctionalDiffError, match="mode"):
        la.convolve(np.ones(3), np.ones(2), mode="f")


def test_python_scalars_are_converted_like_numpy():
    x = np.ones(3, np.float32)
    for f, g in [(la.dot, np.dot), (la.inner, np.inner), (la.outer, np.outer), (la.kron, np.kron)]:
        _close(f(x, 2.0), g(x, 2.0), f.__name__)
    _close(la.matmul([[1, 2]], [[3], [4]]), np.matmul([[1, 2]], [[3], [4]]), "lists")


def test_searchsorted_sorter_and_nan_order():
    a = np.array([3., np.nan, 1., 2.])
    sorter = np.argsort(a)
    v = np.array([0., 1., 2.5, np.nan, 9.])
    for side in ("left", "right"):
        want = np.searchsorted(a, v, side=side, sorter=sorter)
        _close(so.searchsorted(a, v, side=side, sorter=sorter), want, f"concrete {side}")
        closed = fd.make_jaxpr(lambda a, v: so.searchsorted(a, v, side=side, sorter=sorter))(a, v)
        _close(closed(a, v)[0], want, f"traced {side}")
    rows = np.sort(np.random.default_rng(0).standard_normal((3, 6)), axis=1)
    for side in ("left", "right"):  # a batched: the counting path, row by row
        loop = np.stack([np.searchsorted(r, v, side=side) for r in rows])
        _close(fd.vmap(lambda r: so.searchsorted(r, v, side=side))(rows), loop, f"vmap a {side}")


def test_unique_concrete_and_under_grad():
    x = np.array([3., 1., 3., 2., 1.])
    for flags in [{}, dict(return_index=True, return_inverse=True, return_counts=True)]:
        got, want = so.unique(x, **flags), np.unique(x, **flags)
        for g, w in zip(got if flags else [got], want if flags else [want]):
            _close(g, w, f"unique {flags}")
    weights = np.array([1., 10., 100.])
    grad = fd.grad(lambda x: la.dot(so.unique(x), weights))(x)
    np.testing.assert_array_equal(grad, [100., 1., 0., 10., 0.])  # first occurrences
    with pytest.raises(ConcretizationError, match="unique"):
        fd.make_jaxpr(so.unique)(x)
    m = np.array([[1., 2.], [1., 2.], [0., 5.]])
    _close(so.unique(m, axis=0), np.unique(m, axis=0), "unique axis")


def test_ediff1d_bool_is_rejected_like_numpy():
    with pytest.raises(DTypeError):
        so.ediff1d(np.array([True, False]))


def test_cumulative_of_float32_stays_float32_under_grad():
    x = np.linspace(0.5, 2, 6, dtype=np.float32)
    g = fd.grad(lambda x: la.dot(so.cumprod(x), np.ones(6, np.float32)))(x)
    assert g.dtype == np.float32


def test_docstring_examples():
    for module in (la, so):
        failures, _ = doctest.testmod(module)
        assert failures == 0, module.__name__
