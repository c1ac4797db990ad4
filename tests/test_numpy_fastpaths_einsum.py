"""Tests of the cached plans behind einsum and the labelled contractions.

einsum plans each call signature (subscripts, operand shapes and dtypes,
dtype=/casting=) once into a cached program, and the contraction helpers cache
their pair plans. These tests hold the ways a cache could go wrong: a program
reused for another shape or dtype, an error that is raised only once, a plan
that differs under a transform, and the numpy-array shortcut of the argument
prologue diverging from the general conversion.
"""

from __future__ import annotations

import numpy as np
import pytest

import funcdiff as fd
import funcdiff.numpy as fnp
from funcdiff.errors import DTypeError, ShapeError
from funcdiff.numpy import _einsum
from funcdiff.numpy._einsum import EinsumSubscriptError
from funcdiff.test_util import check_grads

RNG = np.random.default_rng(11)


def _rand(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


def _names(f, *args):
    return [e.primitive.name for e in fd.make_jaxpr(f)(*args).eqns]


def _same(got, want):
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-5 if got.dtype == np.float32 else 1e-12,
                               atol=1e-6 if got.dtype == np.float32 else 1e-12)


# ---------------------------------------------------------------------------
# The program cache


def test_a_repeated_call_reuses_its_program():
    a, b = _rand(3, 4), _rand(4, 5)
    fnp.einsum("ij,jk->ik", a, b)
    hits = _einsum.einsum_program.cache_info().hits
    _same(fnp.einsum("ij,jk->ik", a, b), np.einsum("ij,jk->ik", a, b))
    assert _einsum.einsum_program.cache_info().hits == hits + 1


@pytest.mark.parametrize("subscripts,shapes", [
    ("ij,jk->ik", [[(2, 3), (3, 4)], [(5, 3), (3, 2)], [(1, 3), (3, 1)]]),
    ("ii", [[(3, 3)], [(5, 5)], [(1, 1)], [(0, 0)]]),
    ("...ij,...jk", [[(2, 3, 4), (4, 2)], [(3, 4), (5, 4, 2)], [(2, 1, 3, 4), (5, 4, 2)]]),
    ("ij,jk,kl->il", [[(2, 3), (3, 4), (4, 2)], [(5, 1), (1, 6), (6, 2)]]),
])
def test_programs_are_keyed_on_shapes(subscripts, shapes):
    for group in shapes:
        arrays = [_rand(*s) for s in group]
        _same(fnp.einsum(subscripts, *arrays), np.einsum(subscripts, *arrays))


@pytest.mark.parametrize("dtypes,want", [
    ((np.float64, np.float64), np.float64), ((np.float32, np.float32), np.float32),
    ((np.float32, np.float64), np.float64), ((np.int64, np.int64), np.int64),
    ((np.int32, np.float32), np.float64), ((np.bool_, np.bool_), np.bool_),
])
def test_programs_are_keyed_on_dtypes(dtypes, want):
    # one shape for every row: only the dtypes tell the programs apart
    a, b = [(_rand(3, 3) * 3).astype(d) for d in dtypes]
    got = fnp.einsum("ij,jk->ik", a, b)
    assert got.dtype == want
    _same(got, np.einsum("ij,jk->ik", a, b))


def test_dtype_and_casting_settings_are_part_of_the_key():
    a, b = _rand(2, 3), _rand(3, 2)
    assert fnp.einsum("ij,jk", a, b).dtype == np.float64
    got = fnp.einsum("ij,jk", a, b, dtype=np.float32, casting="same_kind")
    _same(got, np.einsum("ij,jk", a, b, dtype=np.float32, casting="same_kind"))
    for _ in range(2):  # errors are never cached away
        with pytest.raises(DTypeError, match="casting='safe'"):
            fnp.einsum("ij,jk", a, b, dtype=np.float32)
    # casting= without dtype= changes nothing, and shares the plain program
    _same(fnp.einsum("ij,jk", a, b, casting="no"), np.einsum("ij,jk", a, b, casting="no"))


def test_errors_are_raised_on_every_call():
    a, b = _rand(2, 3), _rand(4, 5)
    for _ in range(2):
        with pytest.raises(ShapeError, match="disagree on the size"):
            fnp.einsum("ij,jk->ik", a, b)
        with pytest.raises(ShapeError, match="a diagonal needs equal sizes"):
            fnp.einsum("ii", _rand(1, 3))
        with pytest.raises(EinsumSubscriptError, match="describe 2 operands but 1"):
            fnp.einsum("ij,jk", a)


def test_an_unhashable_casting_raises_numpys_error():
    with pytest.raises(TypeError, match="casting must be str"):
        fnp.einsum("ij", _rand(2, 2), dtype=np.float32, casting=["unsafe"])


# ---------------------------------------------------------------------------
# The argument prologue: numpy arrays pass as they are, everything else converts


@pytest.mark.parametrize("operand", [
    [[1.0, 2.0], [3.0, 4.0]], np.float64(2.5), 3, np.arange(4.0).reshape(2, 2)[:, ::-1],
    np.ma.MaskedArray(np.ones((2, 2))),
])
def test_operands_other_than_plain_arrays(operand):
    subscripts = "ij->ji" if np.ndim(operand) == 2 else "->"
    got = fnp.einsum(subscripts, operand)
    want = np.einsum(subscripts, np.asarray(operand))
    assert type(got) is np.ndarray or np.isscalar(got) or type(got) is np.float64
    _same(np.asarray(got), np.asarray(want))


def test_complex_operands_pass_and_other_kinds_are_refused():
    z = np.array([1 + 2j, 3 - 1j])
    np.testing.assert_allclose(fnp.einsum("i,i", z, z), np.einsum("i,i", z, z))
    np.testing.assert_allclose(fnp.einsum("i,i", [1 + 2j, 3j], [1j, 1j]),
                               np.einsum("i,i", [1 + 2j, 3j], [1j, 1j]))
    with pytest.raises(DTypeError):
        fnp.einsum("i", np.array(["a", "b"]))


# ---------------------------------------------------------------------------
# What the programs bind


@pytest.mark.parametrize("subscripts,shapes,names", [
    ("ij,jk->ik", [(3, 4), (4, 5)], ["dot_general"]),
    ("i,i", [(4,), (4,)], ["dot_general"]),
    ("ij->ji", [(3, 4)], ["transpose"]),
    ("ii", [(3, 3)], ["reshape", "slice", "reduce_sum"]),
    ("ij,jk,kl->il", [(4, 4), (4, 4), (4, 4)], ["dot_general", "dot_general", "transpose"]),
    ("i,j->ij", [(3,), (4,)], ["reshape", "reshape", "mul"]),
])
def test_programs_bind_the_expected_primitives(subscripts, shapes, names):
    arrays = [_rand(*s) for s in shapes]
    assert _names(lambda *a: fnp.einsum(subscripts, *a), *arrays) == names
    fnp.einsum(subscripts, *arrays)  # cached now; staging again binds the same
    assert _names(lambda *a: fnp.einsum(subscripts, *a), *arrays) == names


def test_an_empty_diagonal_slices_with_unit_strides():
    x = np.ones((0, 0))
    closed = fd.make_jaxpr(lambda a: fnp.einsum("ii->i", a))(x)
    (eqn,) = [e for e in closed.eqns if e.primitive.name == "slice"]
    assert eqn.params["strides"] is None  # as slicing.slice normalises unit strides
    assert fnp.einsum("ii->i", x).shape == (0,)
    assert fnp.trace(np.ones((3, 0))) == 0.0


# ---------------------------------------------------------------------------
# Cached programs under transforms (each call below follows an eager one of the
# same signature, so the transform runs the cached program on tracers)


def test_grad_and_hessian_after_an_eager_call():
    x, m = _rand(4), _rand(4, 4)
    f = lambda x: fnp.einsum("i,ij,j", x, m, x)  # noqa: E731
    f(x)
    np.testing.assert_allclose(fd.grad(f)(x), (m + m.T) @ x, rtol=1e-12)
    np.testing.assert_allclose(fd.hessian(f)(x), m + m.T, rtol=1e-12)
    check_grads(lambda a, b: fnp.einsum("ij,jk,kl->il", a, b, a), [m, m], order=2)


def test_jvp_keeps_float32():
    a, b = _rand(3, 3, dtype=np.float32), _rand(3, 3, dtype=np.float32)
    f = lambda a: fnp.einsum("ij,jk->ik", a, b)  # noqa: E731
    f(a)
    out, tangent = fd.jvp(f, (a,), (np.ones_like(a),))
    assert out.dtype == tangent.dtype == np.float32
    _same(tangent, np.ones_like(a) @ b)


@pytest.mark.parametrize("subscripts,shapes", [
    ("ij,jk->ik", [(3, 4), (4, 2)]), ("ii", [(3, 3)]), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("i,j->ij", [(3,), (2,)]),
])
def test_vmap_and_jit_after_an_eager_call(subscripts, shapes):
    batch = [_rand(5, *s) for s in shapes]
    f = lambda *a: fnp.einsum(subscripts, *a)  # noqa: E731
    f(*[b[0] for b in batch])
    loop = np.stack([np.einsum(subscripts, *[b[i] for b in batch]) for i in range(5)])
    _same(fd.vmap(f)(*batch), loop)
    _same(fd.jit(f)(*[b[0] for b in batch]), loop[0])
    _same(fd.jit(fd.vmap(f))(*batch), loop)


# ---------------------------------------------------------------------------
# The cached pair plans of the other products


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.bool_])
def test_cached_pair_plans_of_tensordot_and_matmul(dtype):
    a, b, v = [(_rand(*s) * 3).astype(dtype) for s in [(3, 1, 2, 4), (5, 4, 3), (3,)]]
    for _ in range(2):
        _same(fnp.matmul(a, b), np.matmul(a, b))
        _same(fnp.tensordot(v, v, axes=0), np.tensordot(v, v, axes=0))
        _same(fnp.outer(v, v), np.outer(v, v))
        _same(fnp.trace(b, axis1=1, axis2=2), np.trace(b, axis1=1, axis2=2))
