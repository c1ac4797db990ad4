"""The transforms against known results, against each other and against finite differences."""

import numpy as np
import pytest

import funcdiff as fd
import funcdiff.numpy as fnp
from funcdiff.errors import (BatchingError, DifferentiationError, FunctionalDiffError,
                             InvalidArgumentError, ShapeError, TreeStructureError)
from funcdiff.test_util import GradientCheckError, check_grads

rng = np.random.default_rng(42)

# ---------------------------------------------------------------------------
# The derivative laboratory: hand-computed results


def test_lab_chain_rule():
    def L(x, w):
        u = w * x
        return u ** 2 + u + x
    dx, dw = fd.grad(L, argnums=(0, 1))(2.0, 3.0)
    assert (dx, dw) == (40.0, 26.0)


def test_lab_tanh_graph():
    g = fd.grad(lambda a, b, c: fnp.tanh(a * b + a) * c, argnums=(0, 1, 2))(1.0, -0.5, 2.0)
    np.testing.assert_allclose(g, (0.7864, 1.5729, 0.4621), atol=5e-5)


def test_lab_repeated_index_gradient():
    g = fd.grad(lambda e: fnp.sum(e[np.array([2, 0, 2])]))(np.arange(4.0))
    np.testing.assert_array_equal(g, [1.0, 0.0, 2.0, 0.0])


def two_outputs(x1, x2):
    return x1 * x2, x1 ** 2 + fnp.sin(x2)


def test_lab_jvp_vjp_jacobians():
    out, t = fd.jvp(two_outputs, (2.0, 3.0), (1.0, -1.0))
    np.testing.assert_allclose(t, (1.0, 4 - np.cos(3.0)))
    _, pull = fd.vjp(two_outputs, 2.0, 3.0)
    np.testing.assert_allclose(pull((2.0, -1.0)), (2.0, 4 - np.cos(3.0)))
    f = lambda x: fnp.stack(two_outputs(x[0], x[1]))
    expected = [[3.0, 2.0], [4.0, np.cos(3.0)]]
    np.testing.assert_allclose(fd.jacrev(f)(np.array([2.0, 3.0])), expected)
    np.testing.assert_allclose(fd.jacfwd(f)(np.array([2.0, 3.0])), expected)


def test_lab_hvp_of_quadratic_is_Av():
    A = rng.standard_normal((4, 4))
    A = A + A.T
    v = rng.standard_normal(4)
    hv = fd.hvp(lambda z: 0.5 * z @ A @ z, (rng.standard_normal(4),), (v,))
    np.testing.assert_allclose(hv, A @ v, rtol=1e-12)


# ---------------------------------------------------------------------------
# Conventions at kinks (JAX's) and NaN safety


def test_kinks_follow_jax():
    assert fd.grad(fnp.abs)(0.0) == 0.0
    assert fd.grad(lambda x: fnp.maximum(x, 0.0))(0.0) == 0.5
    assert fd.grad(lambda x: fnp.max(fnp.stack([x, x])))(1.0) == 1.0
    assert fd.grad(fnp.sqrt)(0.0) == np.inf
    assert fd.grad(fnp.log)(0.0) == np.inf


def test_where_does_not_leak_nan_from_unselected_branch():
    f = lambda x: fnp.where(x > 0, fnp.sqrt(x), 0.0)
    assert fd.grad(f)(0.0) == 0.0
    assert fd.grad(f)(4.0) == 0.25
    assert fd.jvp(f, (0.0,), (1.0,))[1] == 0.0


# ---------------------------------------------------------------------------
# Composition matrix against finite differences, to third order


def smooth(x):
    return fnp.sum(fnp.sin(x) * fnp.exp(0.3 * x) + fnp.tanh(x) ** 2)


def smooth_vec(x):
    return fnp.stack([fnp.sum(fnp.cos(x) * x), fnp.prod(1.5 + fnp.tanh(x))])


X = rng.standard_normal(4)


def test_check_grads_third_order():
    check_grads(smooth, (X,), order=3)
    check_grads(smooth_vec, (X,), order=2)


def test_check_grads_detects_wrong_derivative():
    bad = fd.custom_jvp(fnp.sin) if hasattr(fd, "custom_jvp") else None
    # a function whose reverse mode is wrong: stop_gradient removes part of the derivative
    with pytest.raises(GradientCheckError):
        check_grads(lambda x: fnp.sum(x * fd.stop_gradient(x)), (X,), order=1)
    del bad


def test_grad_of_grad_vs_jvp_of_grad_vs_hessian():
    v = rng.standard_normal(4)
    H = fd.hessian(smooth)(X)
    np.testing.assert_allclose(fd.hvp(smooth, (X,), (v,)), H @ v, rtol=1e-10)
    np.testing.assert_allclose(fd.jacfwd(fd.jacrev(smooth))(X), H, rtol=1e-10)
    np.testing.assert_allclose(fd.jacrev(fd.jacfwd(smooth))(X), H, rtol=1e-10)
    np.testing.assert_allclose(fd.jacrev(fd.grad(smooth))(X), H, rtol=1e-10)
    gvp = fd.grad(lambda x: fd.jvp(smooth, (x,), (v,))[1])(X)  # reverse-over-forward
    np.testing.assert_allclose(gvp, H @ v, rtol=1e-10)
    eps = 1e-5
    fd_H = np.stack([(fd.grad(smooth)(X + eps * e) - fd.grad(smooth)(X - eps * e)) / (2 * eps)
                     for e in np.eye(4)])
    np.testing.assert_allclose(H, fd_H, rtol=1e-6, atol=1e-8)


def test_third_order_grad_scalar():
    f = lambda x: fnp.sin(x) * x
    d3 = fd.grad(fd.grad(fd.grad(f)))(0.7)
    expected = -3 * np.sin(0.7) - 0.7 * np.cos(0.7)
    np.testing.assert_allclose(d3, expected, rtol=1e-12)


# ---------------------------------------------------------------------------
# Closures, ignored arguments, pytrees and dtypes


def test_closure_over_outer_tracer():
    def outer(a):
        inner = lambda x: fnp.sum(a * x ** 2)
        return fd.grad(inner)(np.ones(3)).sum()  # = sum(2a)
    assert fd.grad(outer)(1.5) == 6.0


def test_ignored_argument_gets_zeros_of_right_shape_and_dtype():
    g = fd.grad(lambda x, y: fnp.sum(x), argnums=(0, 1))(np.ones(2), np.ones(3, np.float32))
    np.testing.assert_array_equal(g[1], np.zeros(3, np.float32))
    assert g[1].dtype == np.float32


def test_pytree_inputs_keep_leaf_dtypes():
    params = {"w": np.ones(3, np.float32), "b": np.array(0.5)}
    g = fd.grad(lambda p: fnp.sum(p["w"] * 2.0) + p["b"] ** 2)(params)
    assert g["w"].dtype == np.float32 and g["b"].dtype == np.float64
    np.testing.assert_allclose(g["w"], 2.0)
    np.testing.assert_allclose(g["b"], 1.0)


def test_value_and_grad_and_has_aux():
    (v, aux), g = fd.value_and_grad(lambda x: (x ** 2, {"x": x}), has_aux=True)(3.0)
    assert (v, aux["x"], g) == (9.0, 3.0, 6.0)
    g, aux = fd.grad(lambda x: (x ** 2, x + 1), has_aux=True)(2.0)
    assert (g, aux) == (4.0, 3.0)
    out, t, aux = fd.jvp(lambda x: (x * 2, "tag"), (1.0,), (1.0,), has_aux=True)
    assert (out, t, aux) == (2.0, 2.0, "tag") or aux == "tag"


def test_linearize_matches_jvp():
    y, f_jvp = fd.linearize(smooth_vec, X)
    v = rng.standard_normal(4)
    np.testing.assert_allclose(f_jvp(v), fd.jvp(smooth_vec, (X,), (v,))[1], rtol=1e-12)
    np.testing.assert_allclose(y, smooth_vec(X))


def test_linear_transpose():
    A = rng.standard_normal((3, 4))
    f_t = fd.linear_transpose(lambda x: A @ x, np.zeros(4))
    u = rng.standard_normal(3)
    np.testing.assert_allclose(f_t(u)[0], A.T @ u)
    with pytest.raises(DifferentiationError):
        fd.linear_transpose(lambda x: x * x, np.zeros(2))(np.ones(2))


def test_float32_stays_float32():
    x = np.ones(3, np.float32)
    g = fd.grad(lambda x: fnp.sum(fnp.sin(x) * 2.0))(x)
    assert g.dtype == np.float32
    out, t = fd.jvp(lambda x: fnp.exp(x), (x,), (x,))
    assert out.dtype == np.float32 and t.dtype == np.float32


# ---------------------------------------------------------------------------
# Jacobians: tall, square, wide, pytrees; forward and reverse agree


@pytest.mark.parametrize("n,m", [(10, 1000), (30, 30), (1000, 10)], ids=["tall", "square", "wide"])
def test_jacobians_agree(n, m):
    A = rng.standard_normal((m, n)) / np.sqrt(n)
    f = lambda x: fnp.tanh(A @ x) * 2.0
    x = rng.standard_normal(n)
    J = (1 - np.tanh(A @ x) ** 2)[:, None] * A * 2.0
    np.testing.assert_allclose(fd.jacfwd(f)(x), J, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(fd.jacrev(f)(x), J, rtol=1e-10, atol=1e-12)
    jac = fd.jacobian(f)
    np.testing.assert_allclose(jac(x), J, rtol=1e-10, atol=1e-12)
    assert jac.last_mode == ("fwd" if n <= m else "rev")


def test_jacobian_pytree_shapes():
    def f(p):
        return {"y": p["a"][:, None] * p["b"][None, :], "s": fnp.sum(p["a"])}
    p = {"a": rng.standard_normal(2), "b": rng.standard_normal(3)}
    for jac in (fd.jacfwd(f), fd.jacrev(f)):
        J = jac(p)
        assert J["y"]["a"].shape == (2, 3, 2) and J["y"]["b"].shape == (2, 3, 3)
        assert J["s"]["a"].shape == (2,) and J["s"]["b"].shape == (3,)
    Jf, Jr = fd.jacfwd(f)(p), fd.jacrev(f)(p)
    for a, b in zip(fd.tree_util.tree_leaves(Jf), fd.tree_util.tree_leaves(Jr)):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_jacobian_chunking_matches():
    f = lambda x: fnp.sin(x)[:, None] * x[None, :]
    x = rng.standard_normal(7)
    for jac in (fd.jacfwd, fd.jacrev):
        np.testing.assert_allclose(jac(f, chunk_size=3)(x), jac(f)(x), rtol=1e-12)


def test_jacobian_argnums_tuple():
    f = lambda x, y: x * y
    Jx, Jy = fd.jacrev(f, argnums=(0, 1))(np.ones(2), np.arange(2.0))
    np.testing.assert_allclose(Jx, np.diag([0.0, 1.0]))
    np.testing.assert_allclose(Jy, np.eye(2))


# ---------------------------------------------------------------------------
# vmap


def test_vmap_per_example_gradients_equal_loop():
    W = rng.standard_normal((4, 3))
    xs, ys = rng.standard_normal((6, 4)), rng.standard_normal((6, 3))
    loss = lambda W, x, y: fnp.sum((fnp.tanh(x @ W) - y) ** 2)
    per_ex = fd.vmap(fd.grad(loss), in_axes=(None, 0, 0))(W, xs, ys)
    loop = np.stack([fd.grad(loss)(W, x, y) for x, y in zip(xs, ys)])
    np.testing.assert_allclose(per_ex, loop, rtol=1e-12)


def test_vmap_axes_and_nesting():
    x = rng.standard_normal((3, 4, 5))
    f = lambda a: fnp.sum(a * a)
    np.testing.assert_allclose(fd.vmap(f, in_axes=1)(x), [f(x[:, i]) for i in range(4)])
    np.testing.assert_allclose(fd.vmap(f, in_axes=-1)(x), [f(x[..., i]) for i in range(5)])
    nested = fd.vmap(fd.vmap(f))(x)
    np.testing.assert_allclose(nested, [[f(x[i, j]) for j in range(4)] for i in range(3)])
    out = fd.vmap(lambda a: a * 2, out_axes=1)(x)
    np.testing.assert_allclose(out, np.moveaxis(x * 2, 0, 1))
    np.testing.assert_allclose(fd.vmap(lambda: np.ones(2), axis_size=3)(), np.ones((3, 2)))


def test_vmap_composes_with_grad_and_jvp_both_orders():
    x = rng.standard_normal((5, 3))
    f = lambda a: fnp.sum(fnp.sin(a) * a)
    g1 = fd.vmap(fd.grad(f))(x)
    g2 = fd.grad(lambda b: fnp.sum(fd.vmap(f)(b)))(x)
    np.testing.assert_allclose(g1, g2, rtol=1e-12)
    v = rng.standard_normal((5, 3))
    t1 = fd.vmap(lambda a, b: fd.jvp(f, (a,), (b,))[1])(x, v)
    t2 = fd.jvp(fd.vmap(f), (x,), (v,))[1]
    np.testing.assert_allclose(t1, t2, rtol=1e-12)


def test_vmap_batches_keyword_arguments_along_axis_0():
    xs, scales = rng.standard_normal((4, 3)), rng.standard_normal(4)
    b = rng.standard_normal(3)
    f = lambda x, b, scale=1.0, shift=None: fnp.sum(x * b) * scale + shift["c"]  # noqa: E731
    shift = {"c": rng.standard_normal(4)}
    got = fd.vmap(f, in_axes=(0, None))(xs, b, scale=scales, shift=shift)
    want = [f(xs[i], b, scale=scales[i], shift={"c": shift["c"][i]}) for i in range(4)]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    # with an int in_axes too, and under grad (per-example gradients with a keyword label)
    loss = lambda w, x=None, y=None: (fnp.sum(w * x) - y) ** 2  # noqa: E731
    w = rng.standard_normal(3)
    g = fd.vmap(fd.grad(loss), in_axes=None, axis_size=4)(w, x=xs, y=scales)
    np.testing.assert_allclose(g, [fd.grad(loss)(w, x=xs[i], y=scales[i]) for i in range(4)],
                               rtol=1e-12)
    with pytest.raises(BatchingError, match="inconsistent batch sizes"):
        fd.vmap(f, in_axes=(0, None))(xs, b, scale=np.ones(5), shift=shift)
    with pytest.raises(BatchingError, match=r"keyword argument .scale. has shape \(\).*in_axes"):
        fd.vmap(lambda x, scale: x * scale)(xs, scale=2.0)


def test_jacobians_pass_keyword_arguments_through():
    x = rng.standard_normal(3)
    f = lambda x, scale=1.0, power=2: scale * x ** power  # noqa: E731
    want = np.diag(2.5 * 3 * x ** 2)
    for jac in (fd.jacfwd(f), fd.jacrev(f), fd.jacobian(f), fd.jacrev(f, chunk_size=2)):
        np.testing.assert_allclose(jac(x, scale=2.5, power=3), want, rtol=1e-12)
    auto = fd.jacobian(lambda x, n=1: fnp.concatenate([x] * n))
    assert auto(x, n=1).shape == (3, 3) and auto.last_mode == "fwd"
    assert auto(x, n=2).shape == (6, 3)   # the keyword changes the output size: not cached
    np.testing.assert_allclose(fd.hessian(lambda x, p=2: fnp.sum(x ** p))(x, p=3),
                               np.diag(6 * x), rtol=1e-12)
    # positional arguments that are not differentiated may be any Python value
    np.testing.assert_allclose(fd.jacobian(lambda x, s: x * len(s))(x, "abc"), 3 * np.eye(3))


def test_vmap_errors():
    with pytest.raises(BatchingError, match="inconsistent batch sizes"):
        fd.vmap(lambda a, b: a + b)(np.ones(3), np.ones(4))
    with pytest.raises(BatchingError, match="out of range"):
        fd.vmap(lambda a: a, in_axes=2)(np.ones(3))
    # the leaves are named by argument and path
    with pytest.raises(BatchingError, match=r"size 3 for argument 0, argument 1\['x'\]\[0\]; "
                                            r"size 4 for argument 1\['x'\]\[1\], keyword "
                                            r"argument 'k'\."):
        fd.vmap(lambda a, d, k: a)(np.ones(3), {"x": (np.ones(3), np.ones(4))}, k=np.ones(4))
    with pytest.raises(BatchingError, match=r"in_axes=1 is out of range for argument 0\['w'\] "
                                            r"of shape \(4,\)"):
        fd.vmap(lambda d: d, in_axes=1)({"w": np.ones(4), "v": np.ones((2, 2))})
    with pytest.raises(BatchingError, match="out_axes=None"):
        fd.vmap(lambda a: a, out_axes=None)(np.ones(3))
    # out_axes out of range is an error (it used to wrap around silently), naming the output
    for out_axes in (2, -3):
        with pytest.raises(BatchingError, match=rf"output has out_axes={out_axes}, out of range "
                                                r"for its batched shape of rank 2"):
            fd.vmap(lambda a: a, out_axes=out_axes)(np.ones((3, 4)))
    with pytest.raises(BatchingError, match=r"output \[1\] has out_axes=2, out of range"):
        fd.vmap(lambda a: (a, np.ones(2)), out_axes=(0, 2))(np.ones(3))
    with pytest.raises(BatchingError, match=r"output \['b'\] has out_axes=None, but it depends"):
        fd.vmap(lambda a: {"a": a, "b": a * 2}, out_axes={"a": 0, "b": None})(np.ones(3))
    # every axis in range is accepted, negative ones counted from the end
    for out_axes, shape in [(0, (3, 4)), (1, (4, 3)), (-1, (4, 3)), (-2, (3, 4))]:
        assert fd.vmap(lambda a: a * 2, out_axes=out_axes)(np.ones((3, 4))).shape == shape
    with pytest.raises(BatchingError):
        fd.vmap(lambda a, b: a, in_axes=(0,))(np.ones(3), np.ones(3))


# ---------------------------------------------------------------------------
# Bad input


def test_grad_of_non_scalar_names_shape_and_suggests_fixes():
    with pytest.raises(DifferentiationError, match=r"f64\[3\].*jacrev.*vjp.*sum"):
        fd.grad(lambda x: x * 2)(np.ones(3))


@pytest.mark.parametrize("transform", [fd.grad, fd.value_and_grad, fd.jacfwd, fd.jacrev,
                                       fd.jacobian, fd.hessian])
def test_repeated_argnums_are_an_error_not_a_zero_gradient(transform):
    # the second copy used to overwrite the first, whose gradient then came out 0
    f = lambda x, y: fnp.sum(x * y)  # noqa: E731
    for argnums in [(0, 0), (1, -1)]:
        with pytest.raises(InvalidArgumentError, match="more than once"):
            transform(f, argnums=argnums)(np.ones(2), np.arange(2.0))


def test_hvp_errors_name_hvp():
    f = lambda z: fnp.sum(z ** 3)  # noqa: E731
    with pytest.raises(ShapeError, match=r"^hvp: tangent leaf 0 is f64\[4\]"):
        fd.hvp(f, (np.ones(3),), (np.ones(4),))
    with pytest.raises(InvalidArgumentError, match=r"^hvp expects primals and tangents as tuples"):
        fd.hvp(f, np.ones(3), np.ones(3))
    for g in (fnp.sin, lambda z: (fnp.sum(z), z)):  # not one scalar: eager and under jit
        with pytest.raises(DifferentiationError, match=r"^hvp needs f to return one scalar"):
            fd.hvp(g, (np.ones(3),), (np.ones(3),))
        with pytest.raises(DifferentiationError, match=r"^hvp needs f to return one scalar"):
            fd.jit(lambda x: fd.hvp(g, (x,), (x,)))(np.ones(3))


def test_grad_of_an_integer_scalar_says_it_has_no_derivative():
    with pytest.raises(DifferentiationError, match=r"floating-point scalar output.*i64\[\].*"
                                                   r"has_aux=True"):
        fd.grad(lambda x: fnp.argmax(x))(np.arange(3.0))


def test_linear_transpose_of_a_nonlinear_function_blames_the_function():
    x = np.arange(3.0)
    for f, reason in [(lambda a: a * a, "product of two tangents"),
                      (fnp.sin, "primitive sin"), (lambda a: 1.0 / a, "denominator")]:
        with pytest.raises(DifferentiationError, match=rf"^linear_transpose: f is not linear "
                                                       rf"in its inputs.*{reason}") as info:
            fd.linear_transpose(f, x)(x)
        assert "bug" not in str(info.value)


def test_grad_wrt_integer_argument_names_it():
    with pytest.raises(DifferentiationError, match="argument 1.*int64"):
        fd.grad(lambda x, n: x * n, argnums=1)(1.0, 3)


def test_jvp_tangent_mismatch_says_which_leaf():
    with pytest.raises(ShapeError, match="tangent leaf 1"):
        fd.jvp(lambda a, b: a + b, (np.ones(2), np.ones(2)), (np.ones(2), np.ones(3)))
    with pytest.raises(TreeStructureError):
        fd.jvp(lambda a: a, (np.ones(2),), (np.ones(2), np.ones(2)))


def test_vjp_cotangent_of_wrong_shape():
    _, pull = fd.vjp(lambda x: x * 2, np.ones(3))
    with pytest.raises(ShapeError, match="shape"):
        pull(np.ones(4))


def test_has_aux_requires_pair():
    with pytest.raises(InvalidArgumentError, match="pair"):
        fd.grad(lambda x: x, has_aux=True)(1.0)


def test_argnums_out_of_range():
    with pytest.raises(InvalidArgumentError, match="argnums"):
        fd.grad(lambda x: x, argnums=2)(1.0)


def test_transforms_of_a_jitted_function_have_their_own_cache():
    # functools.wraps used to copy a Jitted's __dict__ (its cache) into the wrapper,
    # so jit(jacfwd(jit(g))) replayed g's program instead of the Jacobian's.
    A = rng.standard_normal((5, 4))
    f = lambda x: fnp.sum(fnp.tanh(A @ x)) + fnp.sum(fnp.cos(x))
    x = rng.standard_normal(4)
    H = fd.hessian(f)(x)
    g = fd.jit(fd.grad(f))
    np.testing.assert_allclose(fd.jit(fd.jacfwd(g))(x), H, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(fd.jit(fd.jacrev(g))(x), H, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(fd.jit(fd.hessian(fd.jit(f)))(x), H, rtol=1e-12, atol=1e-14)


def test_tracer_kept_from_a_finished_transform_is_reported():
    """A tracer stored by an inner transform and used after it returned names the
    mistake, under every transform, instead of leaking a tracer out."""
    def inner_leak(transform):
        kept = []

        def g(y):
            kept.append(y)
            return y * 2.0
        transform(g)
        return kept[0]

    transforms = {
        "vmap": lambda g: fd.vmap(g)(np.ones((2, 3))),
        "jvp": lambda g: fd.jvp(g, (np.ones(3),), (np.ones(3),)),
        "grad": lambda g: fd.grad(lambda y: fnp.sum(g(y)))(np.ones(3)),
    }  # the inner transforms, run inside the outer one
    for transform in transforms.values():
        def outer(x):
            return x + inner_leak(transform)
        for outer_transform in (fd.vmap(outer), lambda x: fd.jvp(outer, (x,), (x,))):
            with pytest.raises(FunctionalDiffError, match="escaped|after that transform"):
                outer_transform(np.ones((3, 3)))
