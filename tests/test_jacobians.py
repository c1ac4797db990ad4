"""Jacobians over a symbolic standard basis, the matmul orientation pass, and
jacobian's mode choice.

jacfwd and jacrev vmap over the identity (``StdBasis`` in
interpreters/batching.py), kept symbolic through scaling, negation, reshapes
and contractions. Each row of the table below drives one shortcut (or one
fallback to the materialised identity) through jacfwd, jacrev, chunked
Jacobians and jit, against the Jacobian written out by hand; further tests
check that the shortcut really fired (no identity-sized product in the traced
program) and that it composes with the other transforms.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import funcdiff as fd
import funcdiff.numpy as fnp
from funcdiff.core import bind
from funcdiff.errors import ShapeError
from funcdiff.interpreters import batching
from funcdiff.interpreters.batching import StdBasis, vmap_flat
from funcdiff.passes.matmul_layout import orient_matmuls
from funcdiff.ir import check_jaxpr, eval_jaxpr
from funcdiff.primitives import dot, structural

rng = np.random.default_rng(7)
W = rng.standard_normal((5, 4))
T = rng.standard_normal((3, 4, 2))
V = rng.standard_normal((4, 6))


def _dtanh(z):
    return 1 - np.tanh(z) ** 2


# name, f, x, Jacobian by hand (x -> array)
CASES = [
    ("w@e", lambda x: W @ x, rng.standard_normal(4), lambda x: W),
    ("e@w", lambda x: x @ V, rng.standard_normal(4), lambda x: V.T),
    ("scaled", lambda x: W @ fnp.sin(x), rng.standard_normal(4), lambda x: W * np.cos(x)),
    ("scaled-twice", lambda x: W @ (2.0 * fnp.sin(x)), rng.standard_normal(4),
     lambda x: W * 2.0 * np.cos(x)),
    ("neg", lambda x: W @ -x, rng.standard_normal(4), lambda x: -W),
    ("neg-scaled", lambda x: W @ -fnp.sin(x), rng.standard_normal(4), lambda x: -W * np.cos(x)),
    ("safe-mul", lambda x: W @ fnp.sqrt(x), rng.uniform(0.5, 2.0, 4),
     lambda x: W * 0.5 / np.sqrt(x)),
    ("mixed-scales", lambda x: W @ fnp.sqrt(fnp.sin(x)), rng.uniform(0.2, 1.2, 4),
     lambda x: W * np.cos(x) * 0.5 / np.sqrt(np.sin(x))),
    ("reshape", lambda x: W @ fnp.reshape(fnp.sin(x), (4,)), rng.standard_normal((2, 2)),
     lambda x: (W * np.cos(x).reshape(4)).reshape(5, 2, 2)),
    ("3d-operand", lambda x: fnp.einsum("ijk,j->ik", T, fnp.sin(x)), rng.standard_normal(4),
     lambda x: np.einsum("ijk,j->ikj", T, np.cos(x))),
    ("mlp", lambda x: fnp.tanh(V.T @ fnp.tanh(W.T @ x)), rng.standard_normal(5),
     lambda x: (_dtanh(V.T @ np.tanh(W.T @ x))[:, None] * V.T)
     @ (_dtanh(W.T @ x)[:, None] * W.T)),
    ("elementwise", lambda x: x ** 3, rng.standard_normal(4), lambda x: np.diag(3 * x ** 2)),
    ("identity", lambda x: x, rng.standard_normal(4), lambda x: np.eye(4)),
    ("gather", lambda x: x[0] * x, rng.standard_normal(3),
     lambda x: np.diag(np.full(3, x[0])) + np.outer(x, [1.0, 0.0, 0.0])),
]


@pytest.mark.parametrize("name,f,x,jac", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("transform", ["jacfwd", "jacrev"])
@pytest.mark.parametrize("chunk_size", [None, 3])
def test_jacobian_matches_hand_written(name, f, x, jac, transform, chunk_size):
    J = getattr(fd, transform)(f, chunk_size=chunk_size)
    expected = jac(x)
    np.testing.assert_allclose(J(x), expected, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(fd.jit(J)(x), expected, rtol=1e-12, atol=1e-14)


def test_several_input_leaves_slice_and_pad_the_contracted_operand():
    # each leaf sees only its columns of the basis: the product with it is the
    # operand itself, zero-padded to the full basis (and sliced when chunked)
    A, B = rng.standard_normal((3, 2)), rng.standard_normal((3, 4))
    f = lambda p: fnp.tanh(A @ fnp.sin(p["a"]) + B @ p["b"])
    p = {"a": rng.standard_normal(2), "b": rng.standard_normal(4)}
    d = _dtanh(A @ np.sin(p["a"]) + B @ p["b"])
    expected = {"a": d[:, None] * A * np.cos(p["a"]), "b": d[:, None] * B}
    for transform in (fd.jacfwd, fd.jacrev):
        for chunk_size in (None, 1, 4, 5):
            got = transform(f, chunk_size=chunk_size)(p)
            for k in expected:
                np.testing.assert_allclose(got[k], expected[k], rtol=1e-12, atol=1e-14)


def test_std_basis_materialises_rows_of_the_identity():
    eye = np.eye(7)
    for start, stop in [(0, 7), (2, 5), (5, 7)]:
        for offset, shape in [(0, (7,)), (3, (2, 2)), (6, (1,))]:
            basis = StdBasis(7, 0, offset, shape, np.dtype(float)).rows(start, stop)
            size = math.prod(shape)
            np.testing.assert_array_equal(
                basis.materialize(),
                eye[start:stop, offset:offset + size].reshape((stop - start,) + shape))


def test_basis_values_read_directly_are_materialised():
    out = vmap_flat(lambda e: [e], 3, [0], [StdBasis(3, 0, 0, (3,), np.dtype(float))], 0)
    np.testing.assert_array_equal(out[0], np.eye(3))


def _dot_shapes(closed):
    return [tuple(e.outvars[0].aval.shape) for e in closed.jaxpr.eqns
            if e.primitive.name == "dot_general"]


def test_contraction_with_the_basis_leaves_no_product():
    # jacfwd of w @ x is w: only the primal product remains, no product with an identity
    x = rng.standard_normal(4)
    closed = fd.make_jaxpr(fd.jacfwd(lambda x: W @ fnp.sin(x)))(x)
    assert _dot_shapes(closed) == [(5,)] and len(closed.consts) == 1   # the const is W
    # jacrev of tanh(w @ x): the output basis scales w's rows, one product remains
    closed = fd.make_jaxpr(fd.jacrev(lambda x: fnp.tanh(W @ x)))(x)
    assert _dot_shapes(closed) == [(5,)] and len(closed.consts) == 1


def test_basis_shortcuts_compose_with_other_transforms():
    A = rng.standard_normal((4, 4))
    f = lambda x: fnp.sum(fnp.tanh(A @ x)) + fnp.sum(fnp.cos(x))
    x = rng.standard_normal(4)
    t = np.tanh(A @ x)
    H = (A.T * (-2 * t * (1 - t * t))) @ A - np.diag(np.cos(x))
    for h in (fd.hessian(f), fd.jacrev(fd.jacfwd(f)), fd.jacfwd(fd.jacfwd(f)),
              fd.jit(fd.hessian(f))):
        np.testing.assert_allclose(h(x), H, rtol=1e-12, atol=1e-14)
    # vmap of a Jacobian: the contracted operand is itself batched (no shortcut)
    xs = rng.standard_normal((3, 4))
    g = lambda x, w: w @ fnp.sin(x)
    ws = rng.standard_normal((3, 2, 4))
    got = fd.vmap(fd.jacfwd(g))(xs, ws)
    np.testing.assert_allclose(got, ws * np.cos(xs)[:, None, :], rtol=1e-12)
    # a Jacobian inside a function differentiated again, no perturbation confusion
    k = lambda y: fnp.sum(fd.jacfwd(lambda x: W @ (x * y))(y))
    np.testing.assert_allclose(fd.grad(k)(x), W.sum(axis=0), rtol=1e-12)


def test_bad_reshape_of_the_basis_still_raises():
    with pytest.raises(ShapeError):
        fd.jacfwd(lambda x: fnp.reshape(x, (5,)))(np.ones(4))


# ---------------------------------------------------------------------------
# orient_matmuls


def _names(closed):
    return [e.primitive.name for e in closed.jaxpr.eqns]


def _assert_same_values(before, after, *args):
    check_jaxpr(after.jaxpr)
    for a, b in zip(eval_jaxpr(before.jaxpr, before.consts, *args),
                    eval_jaxpr(after.jaxpr, after.consts, *args), strict=True):
        assert np.shape(a) == np.shape(b)
        np.testing.assert_allclose(b, a, rtol=1e-13)


def _dot(a, b, contract):
    return bind(dot.dot_general_p, a, b, dimension_numbers=(contract, ((), ())))


def _transpose(a):
    return bind(structural.transpose_p, a, permutation=(1, 0))


def test_orient_matmuls_swaps_a_transposed_product_into_the_long_last_orientation():
    a, b = rng.standard_normal((4, 3)), rng.standard_normal((3, 2))
    before = fd.make_jaxpr(lambda a, b: _transpose(_dot(a, b, ((1,), (0,)))))(a, b)  # (2, 4)
    assert _names(before) == ["dot_general", "transpose"]
    after = orient_matmuls(before)
    assert _names(after) == ["dot_general"]
    _assert_same_values(before, after, a, b)


def _used_twice(product):
    return _transpose(product), product * 2.0


def test_orient_matmuls_leaves_other_programs_alone():
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((3, 4))
    cases = [
        lambda a, b: _transpose(_dot(a, b, ((1,), (0,)))),              # (4, 2): long first
        lambda a, b: _used_twice(_dot(b.T, a.T, ((1,), (0,)))),
        lambda a, b: _transpose(_dot(b.T, a.T, ((1,), (0,))) + 1.0),    # not a product
    ]
    for f in cases:
        closed = fd.make_jaxpr(f)(a, b)
        assert orient_matmuls(closed) is closed


def test_reverse_mode_jacobian_builds_its_products_in_place():
    """The batch rule of dot_general orders a batch of cotangents against a matrix
    so the product comes out in the fast layout: no transpose is left to fix."""
    x = rng.standard_normal(6)
    ws = [rng.standard_normal((5, 6)), rng.standard_normal((2, 5))]

    def mlp(x):
        for w in ws:
            x = fnp.tanh(w @ x)
        return x
    program = fd.jit(fd.jacrev(mlp)).lower(x).optimized_jaxpr
    assert "transpose" not in _names(program)
    assert orient_matmuls(program) is program
    np.testing.assert_allclose(fd.jit(fd.jacrev(mlp))(x), fd.jacfwd(mlp)(x), rtol=1e-12)


# ---------------------------------------------------------------------------
# jacobian(mode="auto")


def test_auto_mode_stages_f_once_per_signature():
    calls = []

    def f(x):
        calls.append(1)
        return fnp.tanh(W @ x)
    J = fd.jacobian(f)
    x = rng.standard_normal(4)
    for expected_calls in (2, 1, 1):   # staged to find the output size once, then cached
        calls.clear()
        np.testing.assert_allclose(J(x), _dtanh(W @ x)[:, None] * W, rtol=1e-12)
        assert len(calls) == expected_calls and J.last_mode == "fwd"
    calls.clear()
    J(rng.standard_normal(4))  # same signature, new values
    assert len(calls) == 1


def test_auto_mode_caches_per_input_shape():
    J = fd.jacobian(lambda x: fnp.concatenate([x, x[:2]]))
    assert J(np.ones(2)).shape == (4, 2) and J.last_mode == "fwd"
    assert J(np.ones(6)).shape == (8, 6) and J.last_mode == "fwd"
    J = fd.jacobian(lambda x: x[:2])
    assert J(np.ones(2)).shape == (2, 2) and J.last_mode == "fwd"
    assert J(np.ones(5)).shape == (2, 5) and J.last_mode == "rev"


def test_batching_module_keeps_its_shortcut_table_to_known_primitives():
    table = batching.basis_rules()
    assert sorted(p.name for p in table) == ["dot_general", "mul", "neg", "reshape", "safe_mul"]


@pytest.mark.parametrize("make", [
    lambda f: fd.jacfwd(f, has_aux=True), lambda f: fd.jacrev(f, has_aux=True),
    lambda f: fd.jacfwd(f, has_aux=True, chunk_size=2),
    lambda f: fd.jacrev(f, has_aux=True, chunk_size=2),
    lambda f: fd.jacobian(f, has_aux=True), lambda f: fd.jacobian(f, mode="fwd", has_aux=True),
    lambda f: fd.jacobian(f, mode="rev", has_aux=True),
    lambda f: fd.jit(fd.jacrev(f, has_aux=True)), lambda f: fd.jit(fd.jacfwd(f, has_aux=True))],
    ids=["jacfwd", "jacrev", "jacfwd-chunked", "jacrev-chunked", "jacobian", "jacobian-fwd",
         "jacobian-rev", "jit-jacrev", "jit-jacfwd"])
def test_jacobians_return_aux_unbatched(make):
    x = rng.standard_normal(4)

    def f(x):
        y = W @ fnp.sin(x)
        return y, {"norm": fnp.sum(y * y), "x2": x * 2.0}
    jac, aux = make(f)(x)
    np.testing.assert_allclose(jac, W * np.cos(x), rtol=1e-12)
    y = W @ np.sin(x)
    assert sorted(aux) == ["norm", "x2"]
    np.testing.assert_allclose(aux["norm"], y @ y, rtol=1e-12)
    np.testing.assert_allclose(aux["x2"], 2 * x, rtol=1e-12)   # not one copy per basis vector


def test_hessian_has_aux():
    x = rng.standard_normal(4)
    f = lambda x: (fnp.sum(fnp.sin(x) * x), {"x": x, "s": fnp.sum(x)})  # noqa: E731
    want = np.diag(2 * np.cos(x) - x * np.sin(x))
    for h in (fd.hessian(f, has_aux=True), fd.jit(fd.hessian(f, has_aux=True))):
        hess, aux = h(x)
        np.testing.assert_allclose(hess, want, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(aux["x"], x)
        np.testing.assert_allclose(aux["s"], x.sum())
    # eagerly, a non-array aux comes back as it is
    assert fd.hessian(lambda x: (fnp.sum(x * x), "tag"), has_aux=True)(x)[1] == "tag"
    # as in JAX, a vector value gives one Hessian per output; the aux is not part of it
    hess, aux = fd.hessian(lambda x: (x ** 3, x), has_aux=True)(x)
    assert hess.shape == (4, 4, 4)
    np.testing.assert_allclose(np.einsum("iii->i", hess), 6 * x, rtol=1e-12)
    np.testing.assert_allclose(aux, x)


@pytest.mark.parametrize("transform", [fd.jacfwd, fd.jacrev, fd.jacobian, fd.hessian])
def test_integer_outputs_are_named_with_the_fix(transform):
    f = lambda x: (fnp.sin(x), fnp.argmax(x))  # noqa: E731
    with pytest.raises(fd.errors.DifferentiationError,
                       match=r"output leaf 1 has dtype int64.*has_aux=True"):
        transform(f)(np.ones(3))
    # as an aux value it comes back unchanged
    jac, aux = fd.jacfwd(lambda x: (fnp.sin(x), fnp.argmax(x)), has_aux=True)(np.arange(3.0))
    assert aux == 2 and jac.shape == (3, 3)
