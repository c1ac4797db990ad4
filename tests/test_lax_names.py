"""fd.lax's operations under JAX's names: values against numpy, JAX's strictness
(no broadcasting or promotion), derivatives, jit and vmap."""

import numpy as np
import pytest

import funcdiff as fd
from funcdiff.errors import DTypeError, InvalidArgumentError, ShapeError
from funcdiff.test_util import check_grads

lax = fd.lax
rng = np.random.default_rng(0)
A, B = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
V = np.array([0.5, -1.5, 2.0, 0.25, -0.75])

def _padded(v, low, high, interior):
    """lax.pad's meaning, spelled out for a vector."""
    out = np.zeros(len(v) + (len(v) - 1) * interior)
    out[::interior + 1] = v
    out = np.concatenate([np.zeros(max(low, 0)), out, np.zeros(max(high, 0))])
    return out[-low if low < 0 else 0:len(out) + high if high < 0 else len(out)]


ROWS = [
    ("add", lambda a, b: lax.add(a, b), np.add, (A, B)),
    ("sub", lambda a, b: lax.sub(a, b), np.subtract, (A, B)),
    ("mul", lambda a, b: lax.mul(a, b), np.multiply, (A, B)),
    ("div", lambda a, b: lax.div(a, b + 3.0), lambda a, b: a / (b + 3.0), (A, B)),
    ("max", lambda a, b: lax.max(a, b), np.maximum, (A, B)),
    ("neg", lax.neg, np.negative, (A,)),
    ("sin", lax.sin, np.sin, (A,)), ("cos", lax.cos, np.cos, (A,)),
    ("exp", lax.exp, np.exp, (A,)), ("tanh", lax.tanh, np.tanh, (A,)),
    ("log", lambda a: lax.log(lax.add(lax.mul(a, a), 1.0)), lambda a: np.log(a * a + 1), (A,)),
    ("dot_general", lambda a, b: lax.dot_general(a, b, (((1,), (1,)), ((), ()))),
     lambda a, b: a @ b.T, (A, B)),
    ("dot", lambda a, b: lax.dot(a, b.T), lambda a, b: a @ b.T, (A, B)),
    ("broadcast_in_dim", lambda v: lax.broadcast_in_dim(v, (2, 5), (1,)),
     lambda v: np.broadcast_to(v, (2, 5)), (V,)),
    ("reshape", lambda a: lax.reshape(a, (4, 3)), lambda a: a.reshape(4, 3), (A,)),
    ("reshape-dimensions", lambda a: lax.reshape(a, (12,), dimensions=(1, 0)),
     lambda a: a.T.reshape(12), (A,)),
    ("transpose", lambda a: lax.transpose(a, (1, 0)), np.transpose, (A,)),
    ("slice", lambda a: lax.slice(a, (0, 1), (3, 4), (2, 2)), lambda a: a[0:3:2, 1:4:2], (A,)),
    ("pad", lambda v: lax.pad(v, 0.0, [(1, -1, 2)]), lambda v: _padded(v, 1, -1, 2), (V,)),
    ("concatenate", lambda a, b: lax.concatenate([a, b], 1), lambda a, b: np.concatenate([a, b], 1),
     (A, B)),
    ("reduce_sum", lambda a: lax.reduce_sum(a, (0,)), lambda a: a.sum(0), (A,)),
    ("reduce_max", lambda a: lax.reduce_max(a, (1,)), lambda a: a.max(1), (A,)),
    ("cumsum", lambda v: lax.cumsum(v), np.cumsum, (V,)),
    ("cumsum-reverse", lambda a: lax.cumsum(a, axis=1, reverse=True),
     lambda a: np.cumsum(a[:, ::-1], 1)[:, ::-1], (A,)),
    ("sort", lambda v: lax.sort(v), np.sort, (V,)),
    ("top_k", lambda v: lax.top_k(v, 3)[0], lambda v: -np.sort(-v)[:3], (V,)),
    ("associative_scan", lambda v: lax.associative_scan(lax.add, v), np.cumsum, (V,)),
    ("associative_scan-reverse", lambda a: lax.associative_scan(lax.mul, a, reverse=True, axis=1),
     lambda a: np.cumprod(a[:, ::-1], 1)[:, ::-1], (A,)),
]


@pytest.mark.parametrize("row", ROWS, ids=[r[0] for r in ROWS])
def test_values_jit_vmap_and_derivatives(row):
    _, f, ref, args = row
    np.testing.assert_allclose(f(*args), ref(*args), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(fd.jit(f)(*args), ref(*args), rtol=1e-12, atol=1e-14)
    batch = [np.stack([a, 2 * a]) for a in args]
    np.testing.assert_allclose(fd.vmap(f)(*batch)[1], f(*[2 * a for a in args]), rtol=1e-12)
    check_grads(f, args, order=2)


def test_pad_with_interior_and_negative_padding():
    np.testing.assert_array_equal(lax.pad(np.array([1.0, 2.0, 3.0]), -1.0, [(1, -1, 1)]),
                                  [-1.0, 1.0, -1.0, 2.0, -1.0])


def test_integer_div_and_rem_round_toward_zero():
    x, y = np.array([7, -7, 7, -7]), np.array([2, 2, -2, -2])
    np.testing.assert_array_equal(lax.div(x, y), [3, -3, -3, 3])
    np.testing.assert_array_equal(lax.rem(x, y), [1, -1, 1, -1])


def test_sorting_together_and_top_k_ties():
    keys, vals = lax.sort_key_val(np.array([3.0, 1.0, 2.0]), np.array([30, 10, 20]))
    np.testing.assert_array_equal(vals, [10, 20, 30])
    k0, k1, v = lax.sort([np.array([1, 0, 1, 0]), np.array([2, 3, 1, 0]), np.arange(4)],
                         num_keys=2)
    np.testing.assert_array_equal(v, [3, 1, 2, 0])
    values, indices = lax.top_k(np.array([[1.0, 4.0, 2.0, 4.0]]), 2)
    assert indices.dtype == np.int32 and indices.tolist() == [[1, 3]]
    g = fd.grad(lambda x: lax.top_k(x, 2)[0].sum())(np.array([1.0, 4.0, 2.0, 3.0]))
    np.testing.assert_array_equal(g, [0.0, 1.0, 0.0, 1.0])


STRICT = [
    (lambda: lax.add(np.ones(3), np.ones((2, 3))), ShapeError, "does not broadcast"),
    (lambda: lax.mul(np.ones(3), np.ones(3, np.float32)), DTypeError, "does not promote"),
    (lambda: lax.top_k(np.ones(3), 4), InvalidArgumentError, "k <= the size"),
]


@pytest.mark.parametrize("case", STRICT, ids=["broadcast", "promote", "top_k"])
def test_jax_strictness(case):
    thunk, error, match = case
    with pytest.raises(error, match=match):
        thunk()


def test_python_scalars_take_the_arrays_dtype():
    out = lax.add(np.ones(2, np.float32), 1.0)
    assert out.dtype == np.float32 and out.tolist() == [2.0, 2.0]


def _central(f, x, eps=1e-6):
    flat = x.ravel()
    out = np.array([(f((flat + eps * e).reshape(x.shape)) - f((flat - eps * e).reshape(x.shape)))
                    / (2 * eps) for e in np.eye(flat.size)])
    return out.reshape(x.shape)


def _newton(f, x):
    for _ in range(20):
        x = x - fd.numpy.linalg.solve(fd.jacfwd(f)(x), f(x))
    return x


def _linear_solve(g, y):  # g is linear: its matrix is its Jacobian
    return fd.numpy.linalg.solve(fd.jacfwd(g)(fd.numpy.zeros_like(y)), y)


def test_custom_root_differentiates_implicitly_to_second_order():
    W = np.array([[0.2, -0.1, 0.3], [0.05, 0.1, -0.2], [0.3, 0.2, 0.1]])
    b = np.array([0.3, -0.2, 0.5])

    def root(b, W):  # tanh(W x) + x = b, closing over b and W
        return lax.custom_root(lambda x: fd.numpy.tanh(W @ x) + x - b, fd.numpy.zeros_like(b),
                               _newton, _linear_solve)
    loss = lambda b, W: fd.numpy.sum(root(b, W) ** 3)  # noqa: E731
    x = root(b, W)
    np.testing.assert_allclose(np.tanh(W @ x) + x, b, atol=1e-12)
    np.testing.assert_allclose(fd.grad(loss)(b, W), _central(lambda v: float(loss(v, W)), b),
                               rtol=1e-6)
    np.testing.assert_allclose(fd.grad(loss, argnums=1)(b, W),
                               _central(lambda w: float(loss(b, w)), W), rtol=1e-5, atol=1e-9)
    np.testing.assert_allclose(fd.jit(fd.grad(loss))(b, W), fd.grad(loss)(b, W), rtol=1e-12)
    H = fd.hessian(loss)(b, W)
    np.testing.assert_allclose(H, np.array([_central(lambda v: fd.grad(loss)(v, W)[i], b)
                                            for i in range(3)]), rtol=1e-5, atol=1e-8)


def test_custom_linear_solve_by_the_tangent_rule_or_the_adjoint_system():
    rng = np.random.default_rng(1)
    A = rng.standard_normal((4, 4))
    A = A @ A.T + 4 * np.eye(4)
    b = rng.standard_normal(4)

    def cg(matvec, r):  # conjugate gradients: neither linear as a program nor transposable
        x, p, res = fd.numpy.zeros_like(r), r, r
        for _ in range(12):
            Ap = matvec(p)
            alpha = fd.numpy.dot(res, res) / fd.numpy.dot(p, Ap)
            x, new = x + alpha * p, res - alpha * Ap
            p, res = new + fd.numpy.dot(new, new) / fd.numpy.dot(res, res) * p, new
        return x
    exact = lambda A, b: lax.custom_linear_solve(  # noqa: E731
        lambda v: A @ v, b, _linear_solve)  # solve with the matvec it is given
    iterative = lambda A, b: lax.custom_linear_solve(lambda v: A @ v, b, cg,  # noqa: E731
                                                     symmetric=True)
    np.testing.assert_allclose(fd.jacfwd(exact, argnums=1)(A, b), np.linalg.inv(A), rtol=1e-10)
    for solver in (exact, iterative):
        loss = lambda A, b: fd.numpy.sum(solver(A, b) ** 2)  # noqa: E731
        np.testing.assert_allclose(fd.grad(loss, argnums=1)(A, b),
                                   _central(lambda v: float(loss(A, v)), b), rtol=1e-6)
        np.testing.assert_allclose(fd.grad(loss)(A, b),
                                   _central(lambda a: float(loss(a, b)), A), rtol=1e-5, atol=1e-9)
