"""The eager tape (interpreters/tape.py): the fast path of grad and vjp.

Every check_grads call in the suite already compares the tape with
linearize + transpose (check_vjp does it whenever the tape ran); these tests
cover what is particular to the tape: when it is used, which rules it takes,
pullbacks that are themselves transformed, constants and escaped tracers.
"""
import inspect

import numpy as np
import pytest

import funcdiff as fd
import funcdiff.numpy as fnp
from funcdiff.errors import FunctionalDiffError
from funcdiff.interpreters import tape, tape_function
from funcdiff.interpreters.tape_nodes import (FactorNode, LinearNode, MultiOutputNode,
                                          ProductNode, PullbackNode, SumNode)
from funcdiff.interpreters.tape_batched import pull_back_batched
from funcdiff.primitives import elementwise as E


def both_routes(fun, *args, ct=None):
    """vjp of ``fun`` on the tape and by linearize: (cotangents, cotangents)."""
    out, pullback = fd.vjp(fun, *args)
    ct = np.ones_like(np.asarray(out)) if ct is None else ct
    with tape.disabled():
        _, staged = fd.vjp(fun, *args)
    return pullback(ct), staged(ct)


def assert_trees_close(a, b):
    for x, y in zip(fd.tree_util.tree_leaves(a), fd.tree_util.tree_leaves(b)):
        np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-12)


def test_tape_runs_only_with_no_transform_active():
    seen = []

    def f(x):
        seen.append(tape.usable())
        return fnp.sin(x)
    assert tape.usable()
    fd.grad(f)(1.0)
    fd.jit(fd.grad(f))(1.0)
    fd.jvp(fd.grad(f), (1.0,), (1.0,))
    with tape.disabled():
        assert not tape.usable()
    assert seen == [False, False, False]  # inside a transform, usable() is always False
    calls = []
    real = fd.api.tape_vjp_flat

    def spy(*a, **k):
        calls.append(1)
        return real(*a, **k)
    fd.api.tape_vjp_flat = spy
    try:
        fd.grad(f)(1.0)
        fd.jit(fd.grad(f))(2.0)
        with tape.disabled():
            fd.grad(f)(1.0)
    finally:
        fd.api.tape_vjp_flat = real
    assert calls == [1]


def test_each_kind_of_rule_agrees_with_linearize():
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))

    def f(x, w):
        h = fnp.tanh(x @ w + 0.5)                 # card rules: dot_general, add, tanh
        h = fnp.concatenate([h, h[:, :1]], 1)     # linear rules: transposes
        s = fnp.sort(h, axis=1)                   # linearized: no tape rule
        return fnp.sum(fnp.cumsum(s * s, axis=0)) + fnp.linalg.det(w.T @ w)
    tape_cts, staged_cts = both_routes(f, x, w)
    assert_trees_close(tape_cts, staged_cts)


def _residual_alive_in_the_backward_pass(differentiate) -> bool:
    """Whether the residual of a late node is still alive when the backward pass
    reaches the first node (a custom_vjp rule that looks)."""
    import weakref
    refs, alive = [], []

    @fd.custom_vjp
    def first(x):
        return x * 1.0

    def backward(res, g):
        alive.append(refs[0]() is not None)
        return (g,)
    first.defvjp(lambda x: (x * 1.0, None), backward)

    def f(x):
        c = np.full(3, 2.0)  # kept by the product's node as its factor, and only there
        refs.append(weakref.ref(c))
        return fnp.sum(first(x) * c)
    differentiate(f, np.ones(3))
    return alive[0]


def test_grad_frees_each_nodes_residuals_as_the_backward_pass_visits_it():
    assert not _residual_alive_in_the_backward_pass(lambda f, x: fd.grad(f)(x))
    assert not _residual_alive_in_the_backward_pass(lambda f, x: fd.value_and_grad(f)(x))
    # vjp's pullback can be called again: it keeps its tape
    pullback = []
    assert _residual_alive_in_the_backward_pass(
        lambda f, x: pullback.append(fd.vjp(f, x)[1]) or pullback[0](1.0))
    np.testing.assert_array_equal(pullback[0](1.0)[0], [2.0, 2.0, 2.0])


def test_a_released_tape_cannot_be_pulled_back_again():
    _, fn = tape_function.tape_vjp_flat(lambda x: [fnp.sin(x)], [np.ones(2)])
    fn.pull_back([np.ones(2)], release=True)
    with pytest.raises(RuntimeError, match="released"):
        fn.pull_back([np.ones(2)])


def test_products_recorded_inline_agree_with_linearize():
    """A product makes its pullback inline: either operand on the tape and the
    other a constant, a tape constant (slot 0), or on the tape too."""
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    x = rng.standard_normal(4)
    for f in [lambda v: a @ v, lambda v: v @ b, lambda v: a.T @ fnp.tanh(a @ v),
              lambda v: fnp.outer(v, v) @ b, lambda v: (v @ fnp.floor(b * 3.0)) @ (b.T * 2.0),
              lambda v: fnp.floor(a * 3.0) @ v + fnp.tensordot(v, b, axes=([0], [0])).sum(),
              # matrix times matrix (the backward pass's ct @ W.T and x.T @ ct), float32 too
              lambda v: (a @ fnp.outer(v, v)) @ b, lambda v: fnp.outer(v, v) @ fnp.outer(v, v),
              lambda v: (a.astype(np.float32) @ fnp.outer(v, v).astype(np.float32)).sum()]:
        tape_cts, staged_cts = both_routes(f, x)
        assert_trees_close(tape_cts, staged_cts)
    # a product whose operand on the tape is a constant (slot 0): no node, zero gradient
    g = fd.grad(lambda v, w: fnp.sum((a @ w) * v[0]), argnums=0)(x, x)
    np.testing.assert_allclose(g, [np.sum(a @ x), 0.0, 0.0, 0.0])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_basic_indexing_agrees_with_linearize_and_numpy(dtype):
    """Ints, slices (strided, reversed, empty), None and ... are planned once per
    shape and index; a slice's cotangent is written into zeros directly."""
    x = np.arange(1.0, 25.0, dtype=dtype).reshape(4, 6) / 7
    for idx in [0, -1, (1, 2), (slice(1, None),), (slice(None, None, 2), slice(1, 5, 3)),
                (slice(None, None, -1), 3), (None, Ellipsis, slice(4, 1, -2)), (2, slice(3, 3)),
                (Ellipsis, None, 0), ()]:
        def f(v):
            return fnp.sum(fnp.sin(v[idx]) * v[idx])
        for _ in range(2):  # the second call runs the cached plan
            tape_cts, staged_cts = both_routes(f, x)
            assert_trees_close(tape_cts, staged_cts)
            assert tape_cts[0].dtype == dtype
        np.testing.assert_array_equal(fd.jit(lambda v: v[idx])(x), x[idx])
    for _ in range(2):  # an index out of range is refused each time, never planned
        with pytest.raises(IndexError, match="out of bounds"):
            fd.grad(lambda v: fnp.sum(v[4]))(x)


_M = np.array([[2.0, 0.5], [0.25, 3.0]])


@pytest.mark.parametrize("fn, kind", [
    (fnp.sin, FactorNode), (lambda x: x * 3.0, FactorNode),
    (lambda x: _M @ x, ProductNode), (lambda x: x @ x, ProductNode),
    (lambda x: fnp.sum(x), LinearNode), (lambda x: fnp.take(x, np.array([1, 0, 1])), LinearNode),
    (lambda x: fnp.pad(x, 1, constant_values=2.0), LinearNode),
    (lambda x: x * x[::-1], PullbackNode),
    (lambda x: fnp.linalg.inv(fnp.outer(x, x) + _M), MultiOutputNode),
], ids=["sin", "scale", "matvec", "dot-self", "sum", "gather", "pad", "product-of-two", "inv"])
def test_each_operation_records_its_kind_of_node(fn, kind):
    x = np.array([0.3, -0.7])
    (y,), pullback_fn = tape_function.tape_vjp_flat(lambda x: [fn(x)], [x])
    assert type(pullback_fn.nodes[-1]) is kind
    assert all(not hasattr(node, "__dict__") for node in pullback_fn.nodes)  # __slots__
    with tape.disabled():
        _, pullback = fd.vjp(fn, x)
    ct = np.ones_like(y)
    np.testing.assert_allclose(pullback_fn.pull_back([ct])[0], pullback(ct)[0], rtol=1e-13)


@pytest.mark.parametrize("fn, derivative", [
    (fnp.tanh, lambda y: 1 - y * y), (fd.nn.sigmoid, lambda y: y * (1 - y)),
    (fnp.tan, lambda y: 1 + y * y), (fnp.expm1, lambda y: y + 1),
    (fnp.exp2, lambda y: y * np.log(2))], ids=["tanh", "sigmoid", "tan", "expm1", "exp2"])
def test_a_derivative_of_the_output_keeps_the_output_not_a_new_array(fn, derivative):
    x = np.array([0.3, -0.7, 1.1])
    (y,), pullback_fn = tape_function.tape_vjp_flat(lambda x: [fn(x)], [x])
    (factor,) = [factor for _, _, factor in pullback_fn.nodes]  # one FactorNode
    assert factor.y is y  # the output itself, computed into a factor only when needed
    np.testing.assert_allclose(pullback_fn.pull_back([np.ones(3)])[0], derivative(y),
                               rtol=1e-15)
    # the pullback, also traced (jit, vmap) and batched (jacrev), computes it on demand
    _, pullback = fd.vjp(fn, x)
    np.testing.assert_allclose(fd.jit(pullback)(np.ones(3))[0], derivative(y), rtol=1e-15)
    np.testing.assert_allclose(fd.vmap(pullback)(np.eye(3))[0], np.diag(derivative(y)),
                               rtol=1e-15)
    np.testing.assert_allclose(fd.jacrev(fn)(x), np.diag(derivative(y)), rtol=1e-15)


@pytest.mark.parametrize("prim", sorted(
    (p for p in fd.core.all_primitives().values() if p.vjp_factor is not None),
    key=lambda p: p.name), ids=str)
def test_factor_nodes_agree_with_linearize(prim):
    """An elementwise primitive with one operand on the tape records a factor, not
    a pullback; broadcast operands fall back to the pullback."""
    rng = np.random.default_rng(2)
    if len(inspect.signature(prim.vjp_factor).parameters) == 3:  # (i, out, x): unary
        x = rng.uniform(0.2, 0.8, (2, 3))
        tape_cts, staged_cts = both_routes(lambda x: prim.bind(x), x)
        assert_trees_close(tape_cts, staged_cts)
        return
    for live_shape, const_shape in [((2, 3), (2, 3)), ((2, 3), (3,)), ((3,), (2, 3)),
                                    ((), (2, 3))]:
        live = rng.uniform(0.2, 0.8, live_shape)
        const = rng.uniform(1.2, 1.8, const_shape)
        for i in (0, 1):
            def f(v):
                return prim.bind(v, const) if i == 0 else prim.bind(const, v)
            tape_cts, staged_cts = both_routes(f, live)
            assert np.all(np.isfinite(tape_cts[0]))
            assert_trees_close(tape_cts, staged_cts)
    # the same value as both operands (x * x): the sum of both partials
    x = rng.uniform(0.2, 0.8, (2, 3))
    assert_trees_close(*both_routes(lambda v: prim.bind(v, v), x))
    # the other operand on the tape as a constant (slot 0), not a plain array
    assert_trees_close(*both_routes(lambda v: prim.bind(v, fnp.floor(v * 4.0) + 1.0), x))
    assert_trees_close(*both_routes(lambda v: prim.bind(fnp.floor(v * 4.0) + 1.0, v), x))


@pytest.mark.parametrize("op", [fnp.multiply, fnp.add, fnp.subtract, fnp.divide, fnp.power,
                                fnp.arctan2], ids=lambda f: f.__name__)
def test_binary_factor_nodes_with_scalars_broadcasts_and_promotion_agree_with_linearize(op):
    """The tape takes the operand's aval when the output has its type, dtype and
    shape; every other combination looks the output's aval up and checks it."""
    cases = [(np.float64(0.6), np.array([[1.3, 1.5, 1.7]])),  # a scalar meets an array
             (np.array([0.4, 0.6, 0.7]), np.full((2, 3), 1.4)),  # broadcast along an axis
             (np.float32(0.6), np.float32(1.3)),  # scalars of one type: the quick case
             (np.array([0.4, 0.6], np.float32), np.float64(1.3)),  # promoted to float64
             (np.float32(0.6), np.array([1.3, 1.4]))]
    for live, const in cases:
        for i in (0, 1):
            def f(v):
                return op(v, const) if i == 0 else op(const, v)
            tape_cts, staged_cts = both_routes(f, live)
            assert np.asarray(tape_cts[0]).dtype == np.asarray(live).dtype
            assert np.shape(tape_cts[0]) == np.shape(live)
            assert_trees_close(tape_cts, staged_cts)


def test_factor_nodes_under_transformed_pullbacks():
    w = np.array([0.5, -1.5, 2.0])
    f = lambda x: fnp.exp(fnp.sin(x) * 3.0 - 1.0) + (2.0 - x) / 4.0  # noqa: E731
    x = np.array([0.1, 0.2, 0.3])
    _, pullback = fd.vjp(f, x)
    with tape.disabled():
        _, staged = fd.vjp(f, x)
    np.testing.assert_allclose(fd.vmap(pullback)(np.eye(3))[0], fd.jacfwd(f)(x), rtol=1e-12)
    np.testing.assert_allclose(fd.jit(pullback)(w)[0], staged(w)[0], rtol=1e-12)
    _, t = fd.jvp(pullback, (w,), (w,))
    np.testing.assert_allclose(t[0], staged(w)[0], rtol=1e-12)
    # float32 cotangents stay float32 through the factors
    g = fd.grad(lambda x: fnp.sum(f(x)))(x.astype(np.float32))
    assert g.dtype == np.float32


def test_multiple_result_primitives_on_the_tape():
    a = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, 0.2], [0.1, 0.2, 3.0]])

    def f(a):
        w, v = fnp.linalg.eigh(a)
        return fnp.sum(w ** 2) + fnp.sum(v[:, 0] ** 4)
    tape_cts, staged_cts = both_routes(f, a)
    assert_trees_close(tape_cts, staged_cts)


def test_pullback_can_be_called_again_and_transformed():
    rng = np.random.default_rng(1)
    x = rng.standard_normal(4)
    w = rng.standard_normal((3, 4))
    y, pullback = fd.vjp(lambda x: fnp.tanh(w @ x) * x[:3], x)
    with tape.disabled():
        _, staged = fd.vjp(lambda x: fnp.tanh(w @ x) * x[:3], x)
    basis = np.eye(3)
    rows = fd.vmap(pullback)(basis)[0]
    np.testing.assert_allclose(rows, fd.jacrev(lambda x: fnp.tanh(w @ x) * x[:3])(x), rtol=1e-12)
    u = rng.standard_normal(3)
    np.testing.assert_allclose(pullback(u)[0], staged(u)[0], rtol=1e-12)
    np.testing.assert_allclose(pullback(u)[0], staged(u)[0], rtol=1e-12)   # twice
    np.testing.assert_allclose(fd.jit(pullback)(u)[0], staged(u)[0], rtol=1e-12)
    # the pullback is linear: its jvp is itself
    _, t = fd.jvp(pullback, (u,), (u,))
    np.testing.assert_allclose(t[0], staged(u)[0], rtol=1e-12)


def test_higher_order_through_the_tape():
    f = lambda x: fnp.sin(x) * fnp.exp(x)  # noqa: E731
    x = 0.7
    d1 = lambda x: np.cos(x) * np.exp(x) + np.sin(x) * np.exp(x)  # noqa: E731
    d3 = 2 * np.exp(x) * (np.cos(x) - np.sin(x))
    np.testing.assert_allclose(fd.grad(f)(x), d1(x), rtol=1e-12)
    np.testing.assert_allclose(fd.grad(fd.grad(fd.grad(f)))(x), d3, rtol=1e-10)
    # the classic perturbation-confusion check, with the outer grad on the tape
    assert fd.grad(lambda x: x * fd.grad(lambda y: x + y)(1.0))(1.0) == 1.0


def test_constants_and_integers_stay_tracers_without_nodes():
    seen = {}

    def f(x):
        i = fnp.argmax(x)             # integer: a tracer, but a constant
        c = fnp.ones(3) * 2.0         # built from constants only: a plain array
        seen["i"], seen["c"] = type(i), type(c)
        return x[i] * fnp.sum(c)
    g = fd.grad(f)(np.array([0.5, 3.0, 1.0]))
    np.testing.assert_array_equal(g, [0.0, 6.0, 0.0])
    assert seen["i"] is tape.TapeTracer
    assert seen["c"] is np.ndarray



@pytest.mark.parametrize("op", [fnp.sin, fnp.abs, lambda c: c * 3.0, lambda c: c * c])
def test_an_elementwise_function_of_a_float_constant_on_the_tape_is_a_constant(op):
    # c is on the tape at slot 0 (an input not differentiated): what is computed
    # from it alone carries no derivative, so it converts to a number, as
    # autograd-style fixed-point loops do with their distance
    def f(x, c):
        d = op(c)
        assert not d.carries_derivative()
        return x * float(d)
    outs, pullback = tape_function.tape_vjp_flat(lambda x, c: [f(x, c)], [np.float64(2.0),
                                                                        np.float64(0.5)],
                                                  in_mask=[True, False])
    assert len(pullback.nodes) == 1  # the product with x only
    np.testing.assert_allclose(pullback.pull_back([np.float64(1.0)])[0], float(op(0.5)))

def test_unused_and_integer_arguments():
    g = fd.grad(lambda x, y: fnp.sum(x * 2.0), argnums=(0, 1))(np.ones(2), np.ones(3))
    np.testing.assert_array_equal(g[0], [2.0, 2.0])
    np.testing.assert_array_equal(g[1], np.zeros(3))
    assert g[1].dtype == np.float64
    out, pullback = fd.vjp(lambda x, n: x * n, np.ones(2), np.arange(2))
    ct = pullback(np.ones(2))
    np.testing.assert_array_equal(ct[0], [0.0, 1.0])


def test_float32_stays_float32_on_the_tape():
    x = np.array([0.5, 1.5], np.float32)
    g = fd.grad(lambda x: fnp.sum(fnp.tanh(x) * 3.0 + x ** 2))(x)
    assert g.dtype == np.float32


def test_escaped_tape_tracer_is_reported():
    leaked = []

    def f(x):
        leaked.append(x)
        return x * 2.0
    fd.grad(f)(1.0)
    with pytest.raises(FunctionalDiffError, match="escaped"):
        fd.grad(lambda y: y * leaked[0])(2.0)


def test_nondifferentiable_primitive_gives_zero_not_an_error():
    g = fd.grad(lambda x: fnp.sum(fnp.floor(x) * x))(np.array([1.5, -0.5]))
    np.testing.assert_array_equal(g, [1.0, -1.0])
    assert E.floor_p.nondifferentiable


# ---------------------------------------------------------------------------
# The batched pass of jacrev (interpreters/tape_batched.py)


@fd.custom_vjp
def _constant_vjp(x):
    return fnp.sin(x)


_constant_vjp.defvjp(lambda x: (fnp.sin(x), None), lambda res, g: (np.full(3, 0.5),))

_W = np.random.default_rng(3).standard_normal((3, 3))
_BIG = np.random.default_rng(4).standard_normal((200, 200)) / 15.0

BATCHED_CASES = {
    # factor nodes and products, a small basis made dense at the first product
    "layers": (lambda x: fnp.tanh(_W @ fnp.tanh(_W.T @ x * 2.0)), np.linspace(-1, 1, 3)),
    # a basis too large to make dense: the product keeps it symbolic
    # (a vector times a matrix comes back with its batch axis last)
    "wide layers": (lambda x: fnp.tanh(_BIG @ fnp.exp(x / 4.0) @ _BIG),
                    np.linspace(-1, 1, 200)),
    # pullbacks run under the batched pass's BatchTrace: linear rules, a linearized
    # node (sort), broadcasting products, x * x, a multiple-result primitive
    "general nodes": (lambda x: fnp.cumsum(fnp.sort(fnp.concatenate([x, x[:2] * x[:2]]))
                                           * fnp.linalg.eigh(fnp.outer(x, x) + _W @ _W.T)[0][0]),
                      np.array([0.3, -1.2, 0.8])),
    # a pullback whose result does not depend on the cotangent (unbatched)
    "constant pullback": (lambda x: _constant_vjp(x) * 2.0, np.array([0.1, 0.2, 0.3])),
    # the output is the input: the basis itself comes back
    "identity": (lambda x: x, np.array([1.0, 2.0])),
    "matrix output": (lambda x: fnp.outer(fnp.sin(x), x) @ _W, np.array([0.5, 1.0, -2.0])),
    # jacrev's basis meets a matrix-vector product as a diagonal (DiagonalBatch): the
    # matrix's rows, scaled by the factors met on the way (none, an array, a 0-d array)
    "diagonal, matrix @ vector": (lambda x: _W @ fnp.tanh(x), np.array([0.5, 1.0, -2.0])),
    "diagonal, vector @ matrix": (lambda x: fnp.sin(fnp.tanh(x) @ _W[:, :2]),
                                  np.array([0.5, 1.0, -2.0])),
    "diagonal, contracted axis 0": (
        lambda x: fnp.tensordot(_W[:2], x, axes=([0], [0])) * np.array(3.0),
        np.array([0.5, 1.0])),
    # two outputs: each leaf's basis is a slice of the identity, not a diagonal
    "diagonal, not whole": (lambda x: fnp.concatenate([_W @ x, _W[:1] @ x]),
                            np.array([0.5, 1.0, -2.0])),
}


@pytest.mark.parametrize("name", sorted(BATCHED_CASES))
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_batched_pullback_equals_vmap_of_the_pullback(name, dtype):
    from funcdiff.interpreters.batching import StdBasis
    f, x = BATCHED_CASES[name]
    x = x.astype(dtype)
    (y,), pullback_fn = tape_function.tape_vjp_flat(lambda x: [f(x)], [x])
    _, pullback = fd.vjp(f, x)
    rng = np.random.default_rng(5)
    cts = rng.standard_normal((4,) + y.shape).astype(dtype)
    expected = fd.vmap(pullback)(cts)[0]
    (got,) = pull_back_batched(pullback_fn, [cts], 4)
    assert got.dtype == dtype and got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-5 if dtype == np.float32 else 1e-12)
    # the symbolic basis of jacrev gives the rows of the identity's pullback
    m = y.size
    eye = np.eye(m, dtype=dtype).reshape((m,) + y.shape)
    (rows,) = pull_back_batched(pullback_fn, [StdBasis(m, 0, 0, y.shape, np.dtype(dtype))],
                                m)
    assert rows.dtype == dtype
    np.testing.assert_allclose(rows, fd.vmap(pullback)(eye)[0],
                               rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-12)


def test_jacrev_basis_meets_a_matrix_vector_product_without_a_product(monkeypatch):
    # the scaled rows of W are the Jacobian's rows: no dot_general runs backwards
    from funcdiff.interpreters.batching import StdBasis
    from funcdiff.primitives import dot
    x = np.array([0.5, 1.0, -2.0])
    (y,), pullback_fn = tape_function.tape_vjp_flat(lambda x: [fnp.tanh(_W @ x)], [x])
    calls = []
    monkeypatch.setattr(dot, "dot_general_impl", lambda *a, **k: calls.append(a))
    (rows,) = pull_back_batched(pullback_fn, [StdBasis(3, 0, 0, (3,), np.dtype("float64"))], 3)
    assert calls == []
    np.testing.assert_allclose(rows, (1 - np.tanh(_W @ x) ** 2)[:, None] * _W, rtol=1e-14)


def test_batched_pullback_sums_an_output_returned_twice_and_skips_unused_inputs():
    x, z = np.array([0.5, 1.5]), np.ones(3)
    outs, pullback_fn = tape_function.tape_vjp_flat(lambda x, z: [fnp.sin(x)] * 2, [x, z])
    cts = np.arange(6.0).reshape(3, 2)
    got = pull_back_batched(pullback_fn, [cts, 2.0 * cts], 3)
    np.testing.assert_allclose(got[0], 3.0 * cts * np.cos(x), rtol=1e-14)
    assert got[1] is None
    jac = fd.jacrev(lambda x, z: (fnp.sin(x), fnp.sin(x)), argnums=(0, 1))(x, z)
    np.testing.assert_allclose(jac[1][0], np.diag(np.cos(x)), rtol=1e-14)
    np.testing.assert_array_equal(jac[0][1], np.zeros((2, 3)))


@pytest.mark.parametrize("x_shape, y_shape, dims", [
    ((3, 4), (4, 5), (((1,), (0,)), ((), ()))),
    ((4, 3), (4, 5), (((0,), (0,)), ((), ()))),
    ((3, 4), (5, 4), (((1,), (1,)), ((), ()))),
    ((4,), (4, 5), (((0,), (0,)), ((), ()))),
    ((3, 4), (4,), (((1,), (0,)), ((), ()))),
    ((3, 4, 2), (2, 4, 5), (((1, 2), (1, 0)), ((), ()))),
    ((2, 3, 4), (2, 4, 5), (((2,), (1,)), ((0,), (0,)))),
    ((3, 2, 4), (4, 5, 2), (((2,), (0,)), ((1,), (2,)))),
])
def test_dot_general_batched_transpose_equals_vmap_of_the_transpose(x_shape, y_shape, dims):
    from funcdiff.interpreters.transpose import UndefinedPrimal
    from funcdiff.primitives.dot import dot_general_p
    rng = np.random.default_rng(6)
    x, y = rng.standard_normal(x_shape), rng.standard_normal(y_shape)
    out_shape = dot_general_p.abstract_eval(fd.core.get_aval(x), fd.core.get_aval(y),
                                            dimension_numbers=dims).shape
    cts = rng.standard_normal((3,) + out_shape)
    for which, args in ((0, (UndefinedPrimal(fd.core.get_aval(x)), y)),
                        (1, (x, UndefinedPrimal(fd.core.get_aval(y))))):
        expected = fd.vmap(lambda c: dot_general_p.transpose(
            c, *args, dimension_numbers=dims)[which])(cts)
        got = dot_general_p.batched_transpose(cts, *args, dimension_numbers=dims)[which]
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_module_doctests():
    import doctest
    from funcdiff.interpreters import tape_batched
    for module in (tape, tape_batched):
        result = doctest.testmod(module)
        assert result.attempted and not result.failed, module.__name__


def _recorded_kinds(fun, *args):
    """The node classes the tape records for ``fun(*args)``."""
    _, fn = tape_function.tape_vjp_flat(lambda *a: [fun(*a)], list(args))
    return [type(n) for n in fn.nodes]


@pytest.mark.parametrize("fun", [
    lambda h, b: h + b,                       # a bias: b broadcast over the rows
    lambda h, b: h - b,
    lambda h, b: b - h,
    lambda h, b: h[:, :1] + b,                # both operands broadcast
    lambda h, b: (h + b) - (h + b),           # one value on both sides
    lambda h, b: fnp.sum(h * 2.0 + b[None, :]) + h,
    lambda h, b: fnp.sin(fnp.tanh(h + b) - b) @ np.ones(3),  # jacrev's batch meets them dense
], ids=["bias", "minus bias", "bias minus", "both broadcast", "same value", "chain",
        "before a product"])
def test_sums_and_differences_record_sum_nodes_that_match_linearize(fun):
    rng = np.random.default_rng(3)
    h, b = rng.standard_normal((4, 3)), rng.standard_normal(3)
    assert SumNode in _recorded_kinds(fun, h, b)
    out = fun(h, b)
    ct = rng.standard_normal(np.shape(out))
    assert_trees_close(*both_routes(fun, h, b, ct=ct))
    # jacrev pulls a batch of cotangents back through the same nodes
    for rev, fwd in zip(fd.jacrev(fun, argnums=(0, 1))(h, b), fd.jacfwd(fun, argnums=(0, 1))(h, b)):
        np.testing.assert_allclose(rev, fwd, rtol=1e-12, atol=1e-12)


def test_singular_factors_are_plain_only_where_finite():
    """sqrt, log and division record a factor node where their derivative is finite;
    where it is infinite the general rule keeps a zero cotangent exactly zero."""
    x = np.array([1.0, 4.0])
    assert _recorded_kinds(fnp.sqrt, x) == [FactorNode]
    assert _recorded_kinds(lambda x: x / 4.0, x) == [FactorNode]
    with np.errstate(divide="ignore", invalid="ignore"):
        at_zero = np.array([0.0, 4.0])
        assert _recorded_kinds(fnp.sqrt, at_zero) == [PullbackNode]
        guarded = lambda x: fnp.sum(fnp.where(x > 0, fnp.sqrt(x), 0.0))  # noqa: E731
        np.testing.assert_array_equal(fd.grad(guarded)(at_zero), [0.0, 0.25])
        ratio = lambda y: fnp.sum(fnp.where(y != 0, 2.0 / y, 0.0))  # noqa: E731
        np.testing.assert_array_equal(fd.grad(ratio)(at_zero), [0.0, -0.125])
    np.testing.assert_allclose(fd.grad(lambda x: fnp.sum(fnp.log(x) / 3.0))(x), 1 / (3 * x))


def test_eager_hvp_runs_on_the_tape_and_agrees_with_forward_over_reverse(monkeypatch):
    def f(w):
        return fnp.sum(fnp.tanh(w[:2] * w[1:]) ** 2) + fnp.max(w) * fnp.sum(fnp.exp(w))

    calls = []
    real = fd.api.tape_vjp_flat
    monkeypatch.setattr(fd.api, "tape_vjp_flat", lambda *a, **k: calls.append(1) or real(*a, **k))
    w, v = np.array([0.3, -1.2, 0.7]), np.array([1.0, 0.5, -2.0])
    eager = fd.hvp(f, (w,), (v,))
    assert calls == [1]  # one pass on the tape
    with tape.disabled():
        staged = fd.hvp(f, (w,), (v,))
    assert calls == [1]
    forward_over_reverse = fd.jvp(fd.grad(f), (w,), (v,))[1]
    np.testing.assert_allclose(eager, forward_over_reverse, rtol=1e-12)
    np.testing.assert_allclose(staged, forward_over_reverse, rtol=1e-12)
    np.testing.assert_allclose(fd.jit(lambda w, v: fd.hvp(f, (w,), (v,)))(w, v), eager,
                               rtol=1e-12)
    np.testing.assert_allclose(eager, fd.hessian(f)(w) @ v, rtol=1e-12)
